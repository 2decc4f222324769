/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering (drivers/rdma/roce/roce_steer.c): how a frame reaches the queue
 * that owns its QP on a port with RSS or rte_flow, without the hand-off.
 *
 * No NIC here, and no software port with RSS or flow rules in this VM
 * (net_tap's rules need the kernel's multiq, flower and skbedit), so
 * droce0 and droce1 (queues=2 each) run on net_stnic (steer_nic.c), a test
 * ethdev that picks each received frame's rx queue from what droce set on
 * it, as a NIC does: its rte_flow rules, else RSS with the key droce gave
 * at configure and the RETA it wrote, else the queue of the sender's tx
 * queue index (as a net_ring pair). The QPs are paired across queues
 * (droce0's QP on queue 0 with droce1's on queue 1, and the other way
 * round), the case an unsteered port hands every frame off in. Checked:
 * what droce sets on the port per steering= and port capabilities (the
 * rules, the key, the RETA; the rules gone with the device); every byte
 * arrives, no frame is handed off, both queues of both devices receive and
 * each RoCEv2 frame lands on its QP's queue; on an unsteered port the same
 * pairs need the hand-off.
 *
 * Unit cases: the software Toeplitz hash against Microsoft's verification
 * vectors; the source port droce picks carries the destination's queue in
 * its low bits and in its hash, for many addresses and QPNs; the steering
 * devarg on net_ring (no RSS, no rules).
 *
 * Modes: --inline, --lcore (engine lcores 1 and 2, one a queue).
 */
#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "roce_loc.h"
#include "steer_nic.h"
#include "verbs_loc.h"	/* white box: the QP behind an ibv_qp */

#define NQ		2
#define NMSG		32
#define MSG_MAX		2048
#define SEND_OFF	(128 * 1024)
#define RD_OFF		(256 * 1024)
#define RD_LEN		(32 * 1024)

static bool engine_mode;
static struct ibv_device **devs, *dev_a, *dev_b;
static const struct h_qp_opts rc = { .type = IBV_QPT_RC, .max_send_wr = 128, .max_recv_wr = 128 };
static const struct h_qp_opts ud = { .type = IBV_QPT_UD, .max_send_wr = 64, .max_recv_wr = 64 };

/* --- the two devices on a net_stnic link --- */
static uint16_t nic_port[2];

/*
 * droce0 and droce1 (NQ queues, steering=@steering) on net_stnic ports
 * offering @caps (STNIC_CAP_*), and their verbs devices; 0 or -1.
 */
static int
devs_up(uint32_t caps, const char *steering)
{
	char args[200];
	int n;

	for (int k = 0; k < 2; k++) {
		stnic_caps(nic_port[k], caps);
		stnic_owner_queues(nic_port[k], NQ);
		snprintf(args, sizeof(args),
			 "ethdev=net_stnic%d,ip=10.0.0.%d,mtu=4200,queues=%d,lcore=%s,steering=%s",
			 k, k + 1, NQ, engine_mode ? "1:2" : "inline", steering);
		if (droce_dev_create(k ? "droce1" : "droce0", args)) {
			fprintf(stderr, "  cannot create droce%d (%s)\n", k, args);
			return -1;
		}
		stnic_counts_reset(nic_port[k]);
	}
	devs = ibv_get_device_list(&n);
	dev_a = dev_b = NULL;
	for (int i = 0; devs != NULL && i < n; i++) {
		if (strcmp(ibv_get_device_name(devs[i]), "droce0") == 0)
			dev_a = devs[i];
		if (strcmp(ibv_get_device_name(devs[i]), "droce1") == 0)
			dev_b = devs[i];
	}
	return dev_a != NULL && dev_b != NULL ? 0 : -1;
}

static int
devs_down(void)
{
	int ret;

	ibv_free_device_list(devs);
	devs = NULL;
	ret = droce_dev_destroy("droce0");
	return droce_dev_destroy("droce1") || ret ? -1 : 0;
}

/* @body between devs_up(@caps, auto) and devs_down(), which runs whatever @body says */
static int
with_devs(uint32_t caps, int (*body)(void))
{
	int ret;

	if (devs_up(caps, "auto") != 0) {
		devs_down();
		return TEST_FAILED;
	}
	ret = body();
	if (devs_down() != 0)
		ret = TEST_FAILED;
	return ret;
}

static enum roce_steer
steer_of(const char *name)
{
	return roce_dev_by_name(name)->steer;
}

/* --- sides on a chosen queue --- */
struct side_job {
	struct h_side *s;
	struct ibv_device *d;
	const struct h_qp_opts *o;
	int rc;
};

static int
side_create_main(void *p)
{
	struct side_job *j = p;

	j->rc = h_side_open(j->s, j->d, j->o);
	return 0;
}

/* A side of @d whose QP is made on lcore @lc (inline: its queue; engine lcores: in turn) */
static int
side_on(struct h_side *s, struct ibv_device *d, unsigned int lc, const struct h_qp_opts *o)
{
	struct side_job j = { s, d, o, -1 };

	if (lc == 0 || engine_mode) {
		side_create_main(&j);
	} else {
		if (rte_eal_remote_launch(side_create_main, &j, lc) != 0)
			return -1;
		rte_eal_wait_lcore(lc);
	}
	return j.rc;
}

static struct roce_qp *
rqp(const struct h_side *s)
{
	return to_roce_qp(to_dqp(s->qp)->fp);
}

/*
 * Poll until @n[i] completions of each CQ in @cq (4 at most), all
 * successes; receive completions into @rw when non-NULL.
 */
static int
poll_all(struct ibv_cq **cq, const int *n, int ncq, struct ibv_wc rw[][NMSG])
{
	uint64_t t0 = h_now_ms();
	int got[4] = { 0 };
	bool more = true;

	while (more && h_now_ms() - t0 < 10000) {
		more = false;
		for (int i = 0; i < ncq; i++) {
			struct ibv_wc w[NMSG], *into = rw != NULL ? rw[i] + got[i] : w;
			int k;

			if (got[i] >= n[i])
				continue;
			k = ibv_poll_cq(cq[i], RTE_MIN(n[i] - got[i], NMSG), into);
			for (int c = 0; c < k; c++)
				if (into[c].status != IBV_WC_SUCCESS) {
					fprintf(stderr, "  completion %s\n", ibv_wc_status_str(into[c].status));
					return -1;
				}
			got[i] += k > 0 ? k : 0;
			more |= got[i] < n[i];
		}
	}
	for (int i = 0; i < ncq; i++)
		if (got[i] != n[i]) {
			fprintf(stderr, "  CQ %d: %d of %d completions\n", i, got[i], n[i]);
			return -1;
		}
	return 0;
}

static uint32_t
msg_len(uint32_t seed, uint32_t i)
{
	return 1 + (seed * 131 + i * 977) % MSG_MAX;
}

/*
 * NMSG SENDs each way between @x and @y (both pairs at once), every byte
 * checked; then an RDMA WRITE from each x and a READ of it back.
 */
static int
rc_traffic(struct h_side *x0, struct h_side *y0, struct h_side *x1, struct h_side *y1,
	   uint32_t seed)
{
	struct h_side *from[4] = { x0, y0, x1, y1 }, *to[4] = { y0, x0, y1, x1 };
	static struct ibv_wc rw[4][NMSG];
	struct ibv_cq *cq[4];
	int n[4] = { NMSG, NMSG, NMSG, NMSG };

	for (int s = 0; s < 4; s++)
		for (int i = 0; i < NMSG; i++)
			if (h_post_recv(to[s], (size_t)i * MSG_MAX, MSG_MAX, i))
				return -1;
	for (int s = 0; s < 4; s++)
		for (uint32_t i = 0; i < NMSG; i++) {
			uint32_t len = msg_len(seed + (uint32_t)s, i);

			h_pattern(from[s]->buf + SEND_OFF + (size_t)i * MSG_MAX, len,
				  seed + (uint32_t)s * 1000 + i);
			if (h_post_send(from[s], IBV_WR_SEND, SEND_OFF + (size_t)i * MSG_MAX, len, i, 0))
				return -1;
		}
	for (int s = 0; s < 4; s++)
		cq[s] = to[s]->rcq;
	if (poll_all(cq, n, 4, rw))
		return -1;
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < NMSG; i++) {
			uint32_t id = (uint32_t)rw[s][i].wr_id, len = msg_len(seed + (uint32_t)s, id);

			if (rw[s][i].wr_id != (uint64_t)i || rw[s][i].byte_len != len ||
			    memcmp(to[s]->buf + (size_t)id * MSG_MAX,
				   from[s]->buf + SEND_OFF + (size_t)id * MSG_MAX, len) != 0) {
				fprintf(stderr, "  side %d message %d: wr_id %" PRIu64 ", %u bytes, want %u\n",
					s, i, rw[s][i].wr_id, rw[s][i].byte_len, len);
				return -1;
			}
		}
	/* the SENDs' completions were unsignaled: a WRITE, then a READ, signaled, from x0 and x1 */
	for (int op = 0; op < 2; op++) {
		struct h_side *x[2] = { x0, x1 }, *y[2] = { y0, y1 };
		int one[2] = { 1, 1 };

		for (int s = 0; s < 2; s++) {
			struct ibv_sge sge = { (uintptr_t)x[s]->buf + RD_OFF * (1 + op), RD_LEN, x[s]->mr->lkey };
			struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
						  .opcode = op ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;

			if (op == 0)
				h_pattern(x[s]->buf + RD_OFF, RD_LEN, seed ^ (0x5a5a + s));
			wr.wr.rdma.remote_addr = (uintptr_t)y[s]->buf + RD_OFF;
			wr.wr.rdma.rkey = y[s]->mr->rkey;
			if (ibv_post_send(x[s]->qp, &wr, &bad))
				return -1;
			cq[s] = x[s]->scq;
		}
		if (poll_all(cq, one, 2, NULL))
			return -1;
		for (int s = 0; s < 2; s++)
			if (memcmp(y[s]->buf + RD_OFF, x[s]->buf + RD_OFF * (1 + op), RD_LEN) != 0) {
				fprintf(stderr, "  pair %d: RDMA %s: the bytes differ\n", s,
					op ? "READ" : "WRITE");
				return -1;
			}
	}
	return 0;
}

/* 8 datagrams each way between two UD QPs (queue 0's on both devices). */
static int
ud_traffic(struct h_side *u, struct h_side *v)
{
	struct h_side *from[2] = { u, v }, *to[2] = { v, u };
	struct ibv_cq *cq[2] = { v->rcq, u->rcq };
	struct ibv_ah *ah[2] = { NULL, NULL };
	int n[2] = { 8, 8 }, ret = -1;

	for (int s = 0; s < 2; s++) {
		ah[s] = h_ah(from[s], to[s]);
		if (ah[s] == NULL)
			goto out;
		for (int i = 0; i < 8; i++) {
			struct ibv_sge sge = { (uintptr_t)from[s]->buf, 100 + i, from[s]->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND }, *bad;

			if (h_post_recv(to[s], SEND_OFF + (size_t)i * 256, 256, i))
				goto out;
			wr.wr.ud.ah = ah[s];
			wr.wr.ud.remote_qpn = to[s]->qp->qp_num;
			wr.wr.ud.remote_qkey = H_QKEY;
			if (ibv_post_send(from[s]->qp, &wr, &bad))
				goto out;
		}
	}
	ret = poll_all(cq, n, 2, NULL);
out:
	for (int s = 0; s < 2; s++)
		if (ah[s] != NULL)
			ibv_destroy_ah(ah[s]);
	return ret;
}

struct wire_run {
	uint64_t handoff[2];		/* q_handoff of droce0, droce1 during the traffic */
	uint64_t handoff_drop[2];
};

/*
 * Two RC pairs across queues (droce0's queue-0 QP with droce1's queue-1
 * QP, and the other way round) and a UD pair, with the wire in @mode.
 */
static int
wire_traffic(uint32_t seed, struct wire_run *r)
{
	struct h_side a[2], b[2], u, v, *x0, *y0, *x1, *y1;
	uint64_t h[2] = { h_xstat("droce0", "q_handoff"), h_xstat("droce1", "q_handoff") };
	int ret = -1;

	/* inline: the QP made on lcore k is on queue k; engine lcores: in turn */
	if (side_on(&a[0], dev_a, 0, &rc) || side_on(&a[1], dev_a, 1, &rc) ||
	    side_on(&b[0], dev_b, 0, &rc) || side_on(&b[1], dev_b, 1, &rc) ||
	    side_on(&u, dev_a, 0, &ud) || side_on(&v, dev_b, 0, &ud))
		return -1;
	/* the two sides of each device on different queues: cross them */
	if (rqp(&a[0])->q->id == rqp(&a[1])->q->id || rqp(&b[0])->q->id == rqp(&b[1])->q->id) {
		fprintf(stderr, "  droce0's QPs on queues %u and %u, droce1's on %u and %u\n",
			rqp(&a[0])->q->id, rqp(&a[1])->q->id, rqp(&b[0])->q->id, rqp(&b[1])->q->id);
		goto out;
	}
	x0 = &a[0];
	y0 = rqp(&b[0])->q->id != rqp(x0)->q->id ? &b[0] : &b[1];
	x1 = &a[1];
	y1 = y0 == &b[0] ? &b[1] : &b[0];
	/* every QP's number names its queue (what the peer steers by) */
	for (int s = 0; s < 2; s++) {
		struct roce_qp *qa = rqp(&a[s]), *qb = rqp(&b[s]);

		if (roce_qpn_queue(qa->dev, qa->fp.qpn) != qa->q->id ||
		    roce_qpn_queue(qb->dev, qb->fp.qpn) != qb->q->id ||
		    rqp(&u)->q->id != 0 || roce_qpn_queue(rqp(&u)->dev, rqp(&u)->fp.qpn) != 0)
			goto out;
	}
	if (h_connect(x0, y0, &rc) || h_connect(y0, x0, &rc) ||
	    h_connect(x1, y1, &rc) || h_connect(y1, x1, &rc) ||
	    h_connect(&u, &v, &ud) || h_connect(&v, &u, &ud))
		goto out;
	ret = rc_traffic(x0, y0, x1, y1, seed) || ud_traffic(&u, &v) ? -1 : 0;
	for (int d = 0; d < 2; d++) {
		const char *name = d ? "droce1" : "droce0";

		r->handoff[d] = h_xstat(name, "q_handoff") - h[d];
		r->handoff_drop[d] = h_xstat(name, "q_handoff_drop");
	}
out:
	h_side_close(&a[0]);
	h_side_close(&a[1]);
	h_side_close(&b[0]);
	h_side_close(&b[1]);
	h_side_close(&u);
	h_side_close(&v);
	return ret;
}

/*
 * Traffic across queues on a port that steers: every RoCEv2 frame on its
 * QP's queue (by a rule when @by_rule, else by RSS), nothing handed off,
 * both queues of both devices receiving.
 */
static int
traffic_steered(uint32_t seed, bool by_rule)
{
	struct wire_run r;
	struct stnic_counts c;

	TEST_ASSERT_EQ(wire_traffic(seed, &r), 0);
	for (int p = 0; p < 2; p++) {
		stnic_counts_get(nic_port[p], &c);
		/* 2 x 64 SENDs, WRITE and READ (ACKs, responses), 16 datagrams, at least */
		TEST_ASSERT(c.roce > 2 * NMSG, "port %d: %" PRIu64 " RoCEv2 frames", p, c.roce);
		TEST_ASSERT_EQ(c.misplaced, 0);
		TEST_ASSERT_EQ(c.dropped, 0);
		TEST_ASSERT_EQ(c.bad_mark, 0);
		TEST_ASSERT_EQ(c.bad_hash_mark, 0);
		TEST_ASSERT_EQ(by_rule ? c.by_rule : c.by_rss, c.roce);
		for (int k = 0; k < NQ; k++)
			TEST_ASSERT(c.rx_q[k] >= NMSG, "port %d queue %d: %" PRIu64 " frames",
				    p, k, c.rx_q[k]);
		TEST_ASSERT_EQ(r.handoff[p], 0);
		TEST_ASSERT_EQ(r.handoff_drop[p], 0);
	}
	return TEST_SUCCESS;
}

/*
 * A port with flow rules and RSS: steering=auto installs the 8 rules (and
 * RSS beneath them), which place every frame on its QP's queue; the rules
 * are gone once the device is.
 */
static int
flow_rules_body(void)
{
	for (int p = 0; p < 2; p++) {
		TEST_ASSERT_EQ(steer_of(p ? "droce1" : "droce0"), ROCE_STEER_FLOW);
		TEST_ASSERT_EQ(stnic_rules(nic_port[p]), DROCE_MAX_QUEUES);
		TEST_ASSERT(stnic_rss_on(nic_port[p]), "port %d: RSS", p);
	}
	return traffic_steered(7, true);
}

static int
test_steer_flow_rules_reach_owner(void)
{
	CHECK(with_devs(STNIC_CAP_FLOW | STNIC_CAP_RSS, flow_rules_body));
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), 0);
	TEST_ASSERT_EQ(stnic_rules(nic_port[1]), 0);
	return TEST_SUCCESS;
}

/*
 * A port with RSS and no flow rules: steering=auto sets droce's key and a
 * RETA whose entry i is queue (i % 8) % 2, and RSS places every frame on
 * its QP's queue.
 */
static int
rss_body(void)
{
	uint8_t key[64];

	for (int p = 0; p < 2; p++) {
		TEST_ASSERT_EQ(steer_of(p ? "droce1" : "droce0"), ROCE_STEER_RSS);
		TEST_ASSERT_EQ(stnic_rules(nic_port[p]), 0);
		TEST_ASSERT(stnic_rss_on(nic_port[p]), "port %d: RSS", p);
		TEST_ASSERT_EQ(memcmp(key, roce_steer_key(), stnic_key(nic_port[p], key, sizeof(key))), 0);
		for (unsigned int i = 0; i < STNIC_RETA; i++)
			TEST_ASSERT_EQ(stnic_reta(nic_port[p], i), (i % DROCE_MAX_QUEUES) % NQ);
	}
	return traffic_steered(19, false);
}

static int
test_steer_rss_reaches_owner(void)
{
	return with_devs(STNIC_CAP_RSS, rss_body);
}

/* A port with flow rules and no RSS: the rules alone steer. */
static int
flow_only_body(void)
{
	for (int p = 0; p < 2; p++) {
		TEST_ASSERT_EQ(steer_of(p ? "droce1" : "droce0"), ROCE_STEER_FLOW);
		TEST_ASSERT(!stnic_rss_on(nic_port[p]), "port %d: RSS", p);
	}
	return traffic_steered(23, true);
}

static int
test_steer_flow_rules_without_rss(void)
{
	return with_devs(STNIC_CAP_FLOW, flow_only_body);
}

/*
 * A port that steers nothing (each frame on the rx queue of its tx
 * queue's index, as a net_ring pair): the same pairs need the hand-off,
 * which carries every frame; so the cases above do test steering.
 */
static int
unsteered_body(void)
{
	struct wire_run r;
	struct stnic_counts c;

	TEST_ASSERT_EQ(steer_of("droce0"), ROCE_STEER_NONE);
	TEST_ASSERT_EQ(wire_traffic(31, &r), 0);
	for (int p = 0; p < 2; p++) {
		stnic_counts_get(nic_port[p], &c);
		TEST_ASSERT(c.misplaced >= NMSG, "port %d: %" PRIu64 " misplaced", p, c.misplaced);
		TEST_ASSERT(r.handoff[p] >= NMSG, "droce%d handed %" PRIu64 " off", p, r.handoff[p]);
		TEST_ASSERT_EQ(r.handoff_drop[p], 0);
		TEST_ASSERT_EQ(c.bad_mark, 0);	/* the sender marks whatever the receiver does */
	}
	return TEST_SUCCESS;
}

static int
test_steer_unsteered_port_hands_off(void)
{
	return with_devs(0, unsteered_body);
}

/*
 * steering=rss and flow insist on what they name, and take only that;
 * none leaves a port that could steer alone.
 */
static int
test_steer_devarg_on_steering_port(void)
{
	static const char base[] = "ethdev=net_stnic0,ip=10.0.7.1,queues=2,lcore=inline,steering=";
	char args[128];

	stnic_caps(nic_port[0], STNIC_CAP_FLOW);
	snprintf(args, sizeof(args), "%srss", base);
	TEST_ASSERT(droce_dev_create("droce7", args) < 0, "rss without RSS");
	stnic_caps(nic_port[0], STNIC_CAP_RSS);
	snprintf(args, sizeof(args), "%sflow", base);
	TEST_ASSERT(droce_dev_create("droce7", args) < 0, "flow without rules");
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), 0);
	stnic_caps(nic_port[0], STNIC_CAP_FLOW | STNIC_CAP_RSS);
	snprintf(args, sizeof(args), "%srss", base);
	TEST_ASSERT_EQ(droce_dev_create("droce7", args), 0);
	TEST_ASSERT_EQ(steer_of("droce7"), ROCE_STEER_RSS);
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	snprintf(args, sizeof(args), "%sflow", base);
	TEST_ASSERT_EQ(droce_dev_create("droce7", args), 0);
	TEST_ASSERT_EQ(steer_of("droce7"), ROCE_STEER_FLOW);
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), DROCE_MAX_QUEUES);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), 0);
	/* three queues: RETA entry i and rule k go to queue (i or k % 8) % 3 */
	stnic_caps(nic_port[0], STNIC_CAP_FLOW | STNIC_CAP_RSS);
	TEST_ASSERT_EQ(droce_dev_create("droce7",
		"ethdev=net_stnic0,ip=10.0.7.1,queues=3,lcore=inline,steering=auto"), 0);
	TEST_ASSERT_EQ(steer_of("droce7"), ROCE_STEER_FLOW);
	for (unsigned int i = 0; i < STNIC_RETA; i++)
		TEST_ASSERT_EQ(stnic_reta(nic_port[0], i), (i % DROCE_MAX_QUEUES) % 3);
	{
		bool seen[DROCE_MAX_QUEUES] = { false };

		for (unsigned int i = 0; i < STNIC_RULES; i++) {
			uint16_t sp, spm, dp, dpm;
			int q = stnic_rule_get(nic_port[0], i, &sp, &spm, &dp, &dpm);

			if (q < 0)
				continue;
			TEST_ASSERT_EQ(spm, DROCE_MAX_QUEUES - 1);
			TEST_ASSERT_EQ(dp, DROCE_UDP_PORT);
			TEST_ASSERT_EQ(dpm, 0xffff);
			TEST_ASSERT(sp < DROCE_MAX_QUEUES && !seen[sp], "rule for %u", sp);
			seen[sp] = true;
			TEST_ASSERT_EQ(q, sp % 3);
		}
		for (unsigned int k = 0; k < DROCE_MAX_QUEUES; k++)
			TEST_ASSERT(seen[k], "no rule for %u", k);
	}
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	snprintf(args, sizeof(args), "%snone", base);
	TEST_ASSERT_EQ(droce_dev_create("droce7", args), 0);
	TEST_ASSERT_EQ(steer_of("droce7"), ROCE_STEER_NONE);
	TEST_ASSERT_EQ(stnic_rules(nic_port[0]), 0);
	TEST_ASSERT(!stnic_rss_on(nic_port[0]), "RSS");
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	return TEST_SUCCESS;
}

/* --- unit cases --- */
static rte_be32_t
ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return rte_cpu_to_be_32((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
}

/*
 * droce's key and hash are Microsoft's: its verification vectors (IPv4 with
 * TCP ports, source first, as the NIC reads the IPv4/UDP tuple too).
 */
static int
test_steer_hash_microsoft_vectors(void)
{
	TEST_ASSERT_EQ(roce_steer_hash(ip4(66, 9, 149, 187), ip4(161, 142, 100, 80), 2794, 1766),
		       0x51ccc178);
	TEST_ASSERT_EQ(roce_steer_hash(ip4(199, 92, 111, 2), ip4(65, 69, 140, 83), 14230, 4739),
		       0xc626b0ea);
	TEST_ASSERT_EQ(roce_steer_hash(ip4(24, 19, 198, 95), ip4(12, 22, 207, 184), 12898, 38024),
		       0x5c2b394a);
	return TEST_SUCCESS;
}

/*
 * For many sources, destinations and QPNs: the port keeps RoCEv2's range,
 * carries the destination's steering bits in its low bits and in the low
 * bits of its hash, and still spreads QPs (ECMP entropy).
 */
static int
test_steer_sport_carries_queue(void)
{
	static uint8_t seen[1 << 14];
	uint64_t x = 0x5eed;
	unsigned int distinct = 0;

	for (int i = 0; i < 200000; i++) {
		uint32_t qpn, k;
		rte_be32_t sip, dip;
		uint16_t base, p;

		x = h_mix64(x + (uint64_t)i);
		sip = (rte_be32_t)x;
		dip = (rte_be32_t)(x >> 32);
		qpn = DROCE_QPN_BASE + (uint32_t)(h_mix64(x) % DROCE_MAX_QP);
		k = roce_steer_k(qpn, dip);
		base = roce_qp_sport_base(qpn);
		p = roce_steer_sport(base, sip, dip, k);
		TEST_ASSERT((p & 0xc000) == 0xc000, "port %#x", p);
		TEST_ASSERT_EQ(p % DROCE_MAX_QUEUES, k);
		TEST_ASSERT_EQ(roce_steer_hash(sip, dip, p, DROCE_UDP_PORT) % DROCE_MAX_QUEUES, k);
	}
	/* QP1 and multicast are queue 0's whatever their number */
	TEST_ASSERT_EQ(roce_steer_k(DROCE_GSI_QPN, ip4(10, 0, 0, 2)), 0);
	TEST_ASSERT_EQ(roce_steer_k(0xffffff, ip4(239, 1, 2, 3)), 0);
	TEST_ASSERT_EQ(roce_steer_k(0x13, ip4(10, 0, 0, 2)), 3);
	/*
	 * one peer, 4096 QPs: their ports spread. Between two addresses 2048
	 * ports carry both marks (11 bits of the 14 left: 3 are the flow
	 * mark, and the hash mark takes 3 more of the rest), so half of those
	 * at least
	 */
	for (uint32_t q = 0; q < 4096; q++) {
		uint32_t qpn = DROCE_QPN_BASE + q;
		uint16_t p = roce_steer_sport(roce_qp_sport_base(qpn), ip4(10, 0, 0, 1),
					      ip4(10, 0, 0, 2), qpn % DROCE_MAX_QUEUES);

		distinct += !seen[p & 0x3fff];
		seen[p & 0x3fff] = 1;
	}
	TEST_ASSERT(distinct >= 1024, "%u distinct ports for 4096 QPs", distinct);
	return TEST_SUCCESS;
}

/*
 * steering=: a value it does not know, or flow rules or RSS on a port
 * that has neither (net_ring) with several queues, is refused; auto and
 * none take such a port (steered by nothing), and with one queue there is
 * nothing to steer.
 */
static int
test_steer_devarg(void)
{
	struct roce_dev *d;

	TEST_ASSERT_EQ(droce_ring_pair_create_queues("net_ring_e", "net_ring_f", 2), 0);
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=2,steering=x") < 0, "x");
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=2,steering=flow") < 0,
		    "flow");
	TEST_ASSERT(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=2,steering=rss") < 0,
		    "rss");
	/* the refusals left the port free and stopped */
	TEST_ASSERT_EQ(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=2,steering=auto"), 0);
	d = roce_dev_by_name("droce7");
	TEST_ASSERT(d != NULL, "droce7");
	TEST_ASSERT_EQ(d->steer, ROCE_STEER_NONE);
	TEST_ASSERT_EQ(strcmp(roce_steer_name(d->steer), "none"), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=2,steering=none"), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce7", "ethdev=net_ring_e,ip=10.0.7.1,queues=1,steering=flow"), 0);
	TEST_ASSERT_EQ(roce_dev_by_name("droce7")->steer, ROCE_STEER_NONE);
	TEST_ASSERT_EQ(droce_dev_destroy("droce7"), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_steer_hash_microsoft_vectors),
	TEST_CASE(test_steer_sport_carries_queue),
	TEST_CASE(test_steer_devarg),
	TEST_CASE(test_steer_devarg_on_steering_port),
	TEST_CASE(test_steer_flow_rules_reach_owner),
	TEST_CASE(test_steer_rss_reaches_owner),
	TEST_CASE(test_steer_flow_rules_without_rss),
	TEST_CASE(test_steer_unsteered_port_hands_off),
};

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		engine_mode |= strcmp(argv[i], "--lcore") == 0;
	/* engine lcores 1 and 2, one a queue: three lcores on two CPUs */
	if (h_eal_init(argv[0], "ts", engine_mode ? "0@0,1@1,2@(0-1)" : "0-1", NULL))
		return 1;
	if (stnic_link("net_stnic0", "net_stnic1") != 0 ||
	    rte_eth_dev_get_port_by_name("net_stnic0", &nic_port[0]) != 0 ||
	    rte_eth_dev_get_port_by_name("net_stnic1", &nic_port[1]) != 0)
		return 1;
	printf("# queues=%d on a net_stnic link, %s progress\n", NQ,
	       engine_mode ? "engine lcores 1 and 2" : "inline");
	return droce_test_run("steer", cases, RTE_DIM(cases), NULL, NULL);
}
