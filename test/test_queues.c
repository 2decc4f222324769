/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A device's queues (devarg queues=, struct roce_q): droce0 and droce1 with
 * two queues each on a net_ring pair of two queue pairs (queue i of one port
 * is queue i of the other, as RSS or a flow rule would steer). A QP made on
 * lcore i is on queue i. Checked: traffic of QPs on both queues at once,
 * each lcore moving its own (no frame handed between queues); QPs whose
 * ends are on different queues (every frame handed to the owner, none
 * lost); one CQ taking the completions of QPs on both queues; and the
 * devarg's errors. Every frame droce0 sends carries its destination's
 * queue in its UDP source port (steering, roce_steer.c: test_steer).
 * Modes: --inline (any call moves every queue), --thread (lcore=thread: a
 * call moves the caller's queue only) and --lcore (an engine lcore a
 * queue, lcore=1:2; QPs take the queues in turn).
 */
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_udp.h>

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
#endif

#include "droce.h"
#include "droce_test.h"
#include "harness.h"

#define NMSG	32
#define MSG_MAX	4096
#define RD_OFF	(256 * 1024)
#define RD_LEN	(64 * 1024)

static bool thread_mode, engine_mode;
static struct ibv_device **devs, *dev_a, *dev_b;	/* the list stays for the devices */
static const struct h_qp_opts rc = { .type = IBV_QPT_RC, .max_send_wr = 128, .max_recv_wr = 128 };

/* --- running things on lcore 1 --- */
struct on_lcore {
	int (*fn)(void *);
	void *arg;
	int rc;
};

static int
on_lcore_main(void *p)
{
	struct on_lcore *o = p;

	o->rc = o->fn(o->arg);
	return 0;
}

/* @fn(@arg) on lcore 1, waited for: its return */
static int
on_lcore1(int (*fn)(void *), void *arg)
{
	struct on_lcore o = { fn, arg, -1 };

	if (rte_eal_remote_launch(on_lcore_main, &o, 1) != 0)
		return -1;
	rte_eal_wait_lcore(1);
	return o.rc;
}

struct side_job {
	struct h_side *s;
	struct ibv_device *d;
	struct ibv_cq *cq;	/* non-NULL: a second QP of s's PD completing here (shared) */
	struct ibv_qp *qp;
};

static int
side_create(void *p)
{
	struct side_job *j = p;

	return h_side_open(j->s, j->d, &rc);
}

/* A side of @d made on lcore @lc (0: the caller's, 1: lcore 1): its QP on queue @lc */
static int
side_on(struct h_side *s, struct ibv_device *d, unsigned int lc)
{
	struct side_job j = { .s = s, .d = d };

	/* engine lcores: the queues in turn, whoever makes the QP (and lcore 1 is an engine) */
	return lc == 0 || engine_mode ? side_create(&j) : on_lcore1(side_create, &j);
}

static int
connect_pair(struct h_side *a, struct h_side *b)
{
	return h_connect(a, b, &rc) || h_connect(b, a, &rc) ? -1 : 0;
}

/*
 * Poll @a's send CQ and @b's receive CQ (which moves both devices, in either
 * mode) until @na and @nb completions; all must be successes.
 */
static int
poll_pair(struct h_side *a, struct h_side *b, int na, int nb, struct ibv_wc *wb)
{
	uint64_t t0 = h_now_ms();
	struct ibv_wc wa[NMSG];
	int ga = 0, gb = 0;

	while ((ga < na || gb < nb) && h_now_ms() - t0 < 10000) {
		int k = ibv_poll_cq(a->scq, RTE_MIN(na - ga, NMSG), wa);

		for (int i = 0; i < k; i++)
			if (wa[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "  send completion %s\n", ibv_wc_status_str(wa[i].status));
				return -1;
			}
		ga += k > 0 ? k : 0;
		k = ibv_poll_cq(b->rcq, nb - gb, wb + gb);
		gb += k > 0 ? k : 0;
	}
	if (ga != na || gb != nb) {
		fprintf(stderr, "  %d of %d send and %d of %d receive completions\n", ga, na, gb, nb);
		return -1;
	}
	for (int i = 0; i < nb; i++)
		if (wb[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "  receive completion %s\n", ibv_wc_status_str(wb[i].status));
			return -1;
		}
	return 0;
}

/*
 * NMSG SENDs of different lengths from @a to @b, then an RDMA WRITE and a
 * READ of RD_LEN: every byte checked, every completion a success.
 */
static int
traffic(struct h_side *a, struct h_side *b, uint32_t seed)
{
	struct ibv_wc wb[NMSG];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;

	for (int i = 0; i < NMSG; i++)
		if (h_post_recv(b, (size_t)i * MSG_MAX, MSG_MAX, i))
			return -1;
	for (int i = 0; i < NMSG; i++) {
		uint32_t len = 1 + (seed * 131 + (uint32_t)i * 977) % MSG_MAX;

		h_pattern(a->buf + (size_t)i * MSG_MAX, len, seed + i);
		if (h_post_send(a, IBV_WR_SEND, (size_t)i * MSG_MAX, len, i, IBV_SEND_SIGNALED))
			return -1;
	}
	if (poll_pair(a, b, NMSG, NMSG, wb))
		return -1;
	for (int i = 0; i < NMSG; i++) {
		uint32_t id = (uint32_t)wb[i].wr_id;
		uint32_t len = 1 + (seed * 131 + id * 977) % MSG_MAX;

		if (wb[i].wr_id != (uint64_t)i || wb[i].byte_len != len ||
		    memcmp(b->buf + (size_t)id * MSG_MAX, a->buf + (size_t)id * MSG_MAX, len) != 0) {
			fprintf(stderr, "  message %d: wr_id %" PRIu64 ", %u bytes, want %u in order\n",
				i, wb[i].wr_id, wb[i].byte_len, len);
			return -1;
		}
	}
	/* WRITE a's pattern into b, then READ it back into another part of a */
	h_pattern(a->buf + RD_OFF, RD_LEN, seed ^ 0x5a5a);
	sge = (struct ibv_sge){ (uintptr_t)a->buf + RD_OFF, RD_LEN, a->mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + RD_OFF;
	wr.wr.rdma.rkey = b->mr->rkey;
	if (ibv_post_send(a->qp, &wr, &bad) || poll_pair(a, b, 1, 0, wb))
		return -1;
	if (memcmp(b->buf + RD_OFF, a->buf + RD_OFF, RD_LEN) != 0) {
		fprintf(stderr, "  RDMA WRITE: the bytes differ\n");
		return -1;
	}
	sge.addr = (uintptr_t)a->buf + 2 * RD_OFF;
	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(a->qp, &wr, &bad) || poll_pair(a, b, 1, 0, wb))
		return -1;
	if (memcmp(a->buf + 2 * RD_OFF, b->buf + RD_OFF, RD_LEN) != 0) {
		fprintf(stderr, "  RDMA READ: the bytes differ\n");
		return -1;
	}
	return 0;
}

struct traffic_job {
	struct h_side *a, *b;
	uint32_t seed;
	int rounds;
};

static int
traffic_rounds(void *p)
{
	struct traffic_job *j = p;

	for (int r = 0; r < j->rounds; r++)
		if (traffic(j->a, j->b, j->seed + (uint32_t)r))
			return -1;
	return 0;
}

/*
 * What droce0 sends, looked at on its port's tx queues: RoCEv2 frames, and
 * those whose UDP source port does not carry their destination QPN % 8 (0
 * for QP1) in its low bits, the mark a steering port reads (roce_steer.c)
 */
static uint64_t tx_roce, tx_unmarked;

static uint16_t
tx_mark_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(arg);
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(pkts[i], const struct rte_ether_hdr *);
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
		const struct rte_udp_hdr *udp;
		const uint8_t *bth;
		uint32_t dqpn;

		if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || ip->next_proto_id != IPPROTO_UDP)
			continue;
		udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + rte_ipv4_hdr_len(ip));
		if (udp->dst_port != RTE_BE16(4791))
			continue;
		bth = (const uint8_t *)(udp + 1);
		dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		__atomic_fetch_add(&tx_roce, 1, __ATOMIC_RELAXED);
		if (rte_be_to_cpu_16(udp->src_port) % 8 != (dqpn == 1 ? 0 : dqpn % 8))
			__atomic_fetch_add(&tx_unmarked, 1, __ATOMIC_RELAXED);
	}
#ifdef __SANITIZE_THREAD__
	/* droce marked the frames handed off before the burst that runs this: these reads go with them */
	for (uint16_t i = 0; i < n; i++)
		__tsan_release(pkts[i]);
#endif
	return n;
}

static uint64_t
xs(const char *dev, const char *name)
{
	return h_xstat(dev, name);
}

/*
 * Two pairs, one on each queue, moved at once by two lcores, each running
 * its own pair: every byte arrives, and no frame crosses between queues.
 * droce0 is captured meanwhile: both queues copy their frames to the one
 * capture, whose file then holds them.
 */
static int
test_queues_two_lcores_own_queues(void)
{
	struct h_side a0, b0, a1, b1;
	struct traffic_job j0 = { &a0, &b0, 11, 8 }, j1 = { &a1, &b1, 23, 8 };
	struct on_lcore o1 = { traffic_rounds, &j1, -1 };
	uint64_t h0 = xs("droce0", "q_handoff"), h1 = xs("droce1", "q_handoff");
	char cap[64];
	struct stat st;
	int rc0;

	CHECK(side_on(&a0, dev_a, 0));
	CHECK(side_on(&b0, dev_b, 0));
	CHECK(side_on(&a1, dev_a, 1));
	CHECK(side_on(&b1, dev_b, 1));
	CHECK(connect_pair(&a0, &b0));
	CHECK(connect_pair(&a1, &b1));
	snprintf(cap, sizeof(cap), "/tmp/droce_test_queues_%d.pcapng", (int)getpid());
	TEST_ASSERT_EQ(droce_dev_capture("droce0", cap), 0);
	if (engine_mode) {	/* the engines move both queues at once */
		rc0 = traffic_rounds(&j0);
		on_lcore_main(&o1);
	} else {
		TEST_ASSERT(rte_eal_remote_launch(on_lcore_main, &o1, 1) == 0, "launch");
		rc0 = traffic_rounds(&j0);
		rte_eal_wait_lcore(1);
	}
	TEST_ASSERT_EQ(droce_dev_capture("droce0", NULL), 0);
	TEST_ASSERT_EQ(stat(cap, &st), 0);
	unlink(cap);
	TEST_ASSERT_EQ(rc0, 0);
	TEST_ASSERT_EQ(o1.rc, 0);
	/* 2 x 8 rounds of 32 SENDs and a 64 KiB WRITE and READ, at least, both ways */
	TEST_ASSERT(st.st_size > 16 * NMSG * 100, "%lld bytes captured", (long long)st.st_size);
	/* each lcore's QPs on its own queue, steered by the port: nothing handed over */
	TEST_ASSERT_EQ(xs("droce0", "q_handoff"), h0);
	TEST_ASSERT_EQ(xs("droce1", "q_handoff"), h1);
	TEST_ASSERT_EQ(xs("droce0", "q_handoff_drop"), 0);
	TEST_ASSERT_EQ(xs("droce1", "q_handoff_drop"), 0);
	/* every frame droce0 sent marked for its destination's queue */
	TEST_ASSERT(__atomic_load_n(&tx_roce, __ATOMIC_RELAXED) > 16 * NMSG, "%" PRIu64 " frames",
		    tx_roce);
	TEST_ASSERT_EQ(__atomic_load_n(&tx_unmarked, __ATOMIC_RELAXED), 0);
	h_side_close(&a0);
	h_side_close(&b0);
	h_side_close(&a1);
	h_side_close(&b1);
	return TEST_SUCCESS;
}

/*
 * Traffic between droce0's QP on queue 1 (@a) and @db's on queue 0 (@b).
 * With engine lcores the QPs take the queues in turn, and the cases before
 * leave both devices' next one on queue 0: @pad takes droce0's first.
 */
static int
cross_queue_traffic(struct h_side *a, struct h_side *b, struct h_side *pad,
		    struct ibv_device *db, uint32_t seed)
{
	struct traffic_job j = { a, b, seed, 4 };

	if (engine_mode && side_on(pad, dev_a, 0))
		return -1;
	if (side_on(a, dev_a, 1) || side_on(b, db, 0) || connect_pair(a, b))
		return -1;
	return traffic_rounds(&j);
}

static void
cross_queue_close(struct h_side *a, struct h_side *b, struct h_side *pad)
{
	h_side_close(a);
	h_side_close(b);
	if (engine_mode)
		h_side_close(pad);
}

/*
 * The ends of a connection on different queues (droce0's QP on queue 1,
 * droce1's on queue 0): each frame reaches the other device on the queue
 * it was sent on, which hands it to the owner. Nothing is lost.
 */
static int
test_queues_handoff_to_owner(void)
{
	struct h_side a, b, pad = { 0 };
	uint64_t h0 = xs("droce0", "q_handoff"), h1 = xs("droce1", "q_handoff");

	if (thread_mode)	/* droce1's queue 1 would have no lcore moving it here */
		return TEST_SKIPPED;
	CHECK(cross_queue_traffic(&a, &b, &pad, dev_b, 37));
	/* requests a(q1) -> droce1 rx queue 1 -> queue 0; responses b(q0) -> droce0 rx 0 -> 1 */
	TEST_ASSERT(xs("droce1", "q_handoff") - h1 >= NMSG, "droce1 handed %" PRIu64,
		    xs("droce1", "q_handoff") - h1);
	TEST_ASSERT(xs("droce0", "q_handoff") - h0 >= 1, "droce0 handed %" PRIu64,
		    xs("droce0", "q_handoff") - h0);
	TEST_ASSERT_EQ(xs("droce0", "q_handoff_drop"), 0);
	TEST_ASSERT_EQ(xs("droce1", "q_handoff_drop"), 0);
	cross_queue_close(&a, &b, &pad);
	return TEST_SUCCESS;
}

/*
 * Both ends on droce0, one on each queue (its own IP): frames to itself go
 * straight to the owner's queue, in both directions. Nothing is lost.
 */
static int
test_queues_loopback_across_queues(void)
{
	struct h_side a, b, pad = { 0 };
	uint64_t h = xs("droce0", "q_handoff_drop"), h0 = xs("droce0", "q_handoff");

	if (thread_mode)	/* one thread polls both ends: it would move one queue */
		return TEST_SKIPPED;
	CHECK(cross_queue_traffic(&a, &b, &pad, dev_a, 53));
	TEST_ASSERT_EQ(xs("droce0", "q_handoff_drop"), h);
	/* straight to the owner: not through queue 0's loopback ring and a hand-off */
	TEST_ASSERT_EQ(xs("droce0", "q_handoff"), h0);
	cross_queue_close(&a, &b, &pad);
	return TEST_SUCCESS;
}

static int
qp_on_cq(void *p)
{
	struct side_job *j = p;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .send_cq = j->cq, .recv_cq = j->cq,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	j->qp = ibv_create_qp(j->s->pd, &qa);
	return j->qp == NULL ? -1 : 0;
}

/*
 * One CQ of droce0 for two QPs, one on each queue (made on lcores 0 and 1),
 * both sending to droce1 and receiving from it: every completion, of both
 * queues, is in the CQ once, with its QP's number and length, across a
 * resize of the CQ midway.
 */
static int
test_queues_one_cq_two_queues(void)
{
	struct h_side a0, a1, b0, b1;
	struct side_job j = { .s = &a0 };
	struct ibv_wc wc[4 * NMSG];
	int got = 0, sends[2] = { 0 }, recvs[2] = { 0 };
	bool resized = false;
	uint64_t t0;

	if (thread_mode)	/* one poller of the shared CQ moves one queue only */
		return TEST_SKIPPED;
	CHECK(side_on(&a0, dev_a, 0));
	CHECK(side_on(&b0, dev_b, 0));
	CHECK(side_on(&b1, dev_b, 1));
	/* a1: a0's PD, MR and buffer, its QP on lcore 1, completing into a0's send CQ */
	j.cq = a0.scq;
	CHECK(engine_mode ? qp_on_cq(&j) : on_lcore1(qp_on_cq, &j));
	a1 = a0;
	a1.qp = j.qp;
	a1.rcq = a0.scq;
	CHECK(connect_pair(&a0, &b0));
	CHECK(connect_pair(&a1, &b1));
	for (int i = 0; i < NMSG; i++) {
		struct ibv_sge sge = { (uintptr_t)a0.buf + 512 * 1024 + (size_t)i * 64, 64, a0.mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		TEST_ASSERT_EQ(ibv_post_recv(a1.qp, &rw, &bad), 0);
		CHECK(h_post_recv(&b0, (size_t)i * 64, 64, i));
		CHECK(h_post_recv(&b1, (size_t)i * 64, 64, i));
	}
	for (int i = 0; i < NMSG; i++) {
		CHECK(h_post_send(&a0, IBV_WR_SEND, 0, 48, 100 + i, IBV_SEND_SIGNALED));
		CHECK(h_post_send(&a1, IBV_WR_SEND, 4096, 56, 200 + i, IBV_SEND_SIGNALED));
		CHECK(h_post_send(&b1, IBV_WR_SEND, 8192, 40, 300 + i, IBV_SEND_SIGNALED));
	}
	t0 = h_now_ms();
	while (got < 3 * NMSG && h_now_ms() - t0 < 10000) {
		/* midway, while both queues complete into it: a resize keeps every completion */
		if (!resized && got >= NMSG) {
			TEST_ASSERT_EQ(ibv_resize_cq(a0.scq, 1024), 0);
			resized = true;
		}
		int k = ibv_poll_cq(a0.scq, RTE_MIN(NMSG, 3 * NMSG - got), wc + got);
		struct ibv_wc w;

		got += k > 0 ? k : 0;
		/* b's sides' completions: drained, which moves droce1 */
		while (ibv_poll_cq(b0.rcq, 1, &w) > 0 || ibv_poll_cq(b1.rcq, 1, &w) > 0 ||
		       ibv_poll_cq(b1.scq, 1, &w) > 0)
			;
	}
	TEST_ASSERT_EQ(got, 3 * NMSG);
	TEST_ASSERT(resized, "no resize");
	for (int i = 0; i < got; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_SEND) {
			int k = wc[i].qp_num == a1.qp->qp_num;

			TEST_ASSERT(wc[i].qp_num == (k ? a1.qp : a0.qp)->qp_num, "qp %#x", wc[i].qp_num);
			TEST_ASSERT_EQ(wc[i].wr_id, (k ? 200 : 100) + sends[k]);
			sends[k]++;
		} else {
			TEST_ASSERT_EQ(wc[i].opcode, IBV_WC_RECV);
			TEST_ASSERT_EQ(wc[i].qp_num, a1.qp->qp_num);
			TEST_ASSERT_EQ(wc[i].byte_len, 40);
			TEST_ASSERT_EQ(wc[i].wr_id, 1000 + recvs[1]);
			recvs[1]++;
		}
	}
	TEST_ASSERT_EQ(sends[0], NMSG);
	TEST_ASSERT_EQ(sends[1], NMSG);
	TEST_ASSERT_EQ(recvs[1], NMSG);
	TEST_ASSERT_EQ(ibv_destroy_qp(a1.qp), 0);
	h_side_close(&a0);
	h_side_close(&b0);
	h_side_close(&b1);
	return TEST_SUCCESS;
}

/* queues= out of range, or more than the port has: the probe refuses */
static int
test_queues_devarg_errors(void)
{
	TEST_ASSERT_EQ(droce_ring_pair_create_queues("net_ring_c", "net_ring_d", 0), -EINVAL);
	TEST_ASSERT_EQ(droce_ring_pair_create_queues("net_ring_c", "net_ring_d", 17), -EINVAL);
	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_c", "net_ring_d"), 0);
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_c,ip=10.0.7.1,queues=0") < 0, "0");
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_c,ip=10.0.7.1,queues=9") < 0, "9");
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_c,ip=10.0.7.1,queues=x") < 0, "x");
	/* net_ring_c has one queue pair */
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_c,ip=10.0.7.1,queues=2") < 0, "2");
	/* the refusals left the port free: a device with one queue takes it */
	TEST_ASSERT_EQ(droce_dev_create("droce7", "ethdev=net_ring_c,ip=10.0.7.1,queues=1"), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_queues_devarg_errors),
	TEST_CASE(test_queues_two_lcores_own_queues),
	TEST_CASE(test_queues_handoff_to_owner),
	TEST_CASE(test_queues_one_cq_two_queues),
	TEST_CASE(test_queues_loopback_across_queues),
};

int
main(int argc, char **argv)
{
	char args[128];
	int n;

	for (int i = 1; i < argc; i++) {
		thread_mode |= strcmp(argv[i], "--thread") == 0;
		engine_mode |= strcmp(argv[i], "--lcore") == 0;
	}
	/* engine lcores 1 and 2, one a queue: three lcores on two CPUs (slower, as correct) */
	if (h_eal_init(argv[0], "tq", engine_mode ? "0@0,1@1,2@(0-1)" : "0-1", NULL))
		return 1;
	if (droce_ring_pair_create_queues("net_ring_a", "net_ring_b", 2))
		return 1;
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof(args), "ethdev=net_ring_%c,ip=10.0.0.%d,mtu=4200,queues=2,lcore=%s",
			 k ? 'b' : 'a', k + 1, thread_mode ? "thread" : engine_mode ? "1:2" : "inline");
		if (droce_dev_create(k ? "droce1" : "droce0", args)) {
			fprintf(stderr, "cannot create droce%d (%s)\n", k, args);
			return 1;
		}
	}
	{
		uint16_t port;

		if (rte_eth_dev_get_port_by_name("net_ring_a", &port) != 0)
			return 1;
		for (uint16_t q = 0; q < 2; q++)
			if (rte_eth_add_tx_callback(port, q, tx_mark_cb, NULL) == NULL)
				return 1;
	}
	devs = ibv_get_device_list(&n);
	for (int i = 0; devs != NULL && i < n; i++) {
		if (strcmp(ibv_get_device_name(devs[i]), "droce0") == 0)
			dev_a = devs[i];
		if (strcmp(ibv_get_device_name(devs[i]), "droce1") == 0)
			dev_b = devs[i];
	}
	if (dev_a == NULL || dev_b == NULL)
		return 1;
	printf("# queues=2, %s progress\n", thread_mode ? "lcore=thread" :
	       engine_mode ? "engine lcores 1 and 2" : "inline");
	return droce_test_run("queues", cases, RTE_DIM(cases), NULL, NULL);
}
