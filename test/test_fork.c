/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One device shared by processes forked from the one that opened it
 * (drivers/rdma/roce/roce_share.c), over the drop-in libibverbs and
 * librdmacm: one droce device (DROCE_EAL, a net_ring port that loops back
 * to itself), opened by this process, which then forks.
 *  - two children connect RC QPs on the device's one IP and move bytes with
 *    SEND, WRITE and READ, each into its own private memory; twice, so the
 *    second pair takes the indexes (and QP1s) the first one left;
 *  - two children connect through rdma_cm (a listener and a client on the
 *    same IP), and a third child's rdma_listen on the same port fails with
 *    EADDRINUSE;
 *  - the parent's own QPs and CM id (the connection manager runs in the
 *    parent before the forks), made before the forks, still work after them,
 *    and its id listens on the port the ended server held;
 *  - with --lcore (the device on an engine lcore of the parent), a child
 *    cannot open the device: ENODEV, and the parent's QPs work after it;
 *  - a child that only runs a program (system(3)) costs the parent nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "droce_test.h"

#define DEV_IP		"10.0.0.1"
#define WAIT_MS		10000
#define MSG		4096
#define BUF		(64 * 1024)
#define OFF_WRITE	8192
#define OFF_READ	16384

static struct ibv_device **devs;
static struct ibv_context *pctx;	/* the parent's */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One completion of @cq within WAIT_MS, which must be @op and successful. */
static int
wait_wc(struct ibv_cq *cq, enum ibv_wc_opcode op, uint32_t len)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && now_ms() < end)
		;
	if (n != 1) {
		fprintf(stderr, "  [%d] no completion (%d)\n", getpid(), n);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op ||
	    (op == IBV_WC_RECV && wc.byte_len != len)) {
		fprintf(stderr, "  [%d] completion %s, opcode %d, %u bytes (wanted opcode %d, %u)\n",
			getpid(), ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, op, len);
		return -1;
	}
	return 0;
}

struct peer {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
};

struct rc_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static int
rc_make(struct rc_side *s, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->buf = calloc(1, BUF);
	s->pd = ibv_alloc_pd(ctx);
	s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (s->buf == NULL || s->pd == NULL || s->cq == NULL)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	if (s->mr == NULL || s->qp == NULL)
		return -1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

static int
rc_connect(struct rc_side *s, const struct peer *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = p->qpn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } },
	};

	if (ibv_query_gid(s->ctx, 1, 0, &a.ah_attr.grh.dgid) != 0 ||
	    ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int
post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int
post_recv(struct rc_side *s, void *addr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static int
check(const uint8_t *p, size_t n, uint8_t seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7)) {
			fprintf(stderr, "  [%d] %s: byte %zu is 0x%02x, not 0x%02x\n", getpid(), what,
				i, p[i], (uint8_t)(seed + i * 7));
			return -1;
		}
	return 0;
}

/*
 * A child's side of the RC exchange: the server receives a SEND, lets the
 * client WRITE into and READ from its memory, and checks what arrived; the
 * client checks what it read. Exit status 0 if all is well.
 */
static int
rc_child(bool server, int wfd, int rfd)
{
	struct ibv_context *ctx = ibv_open_device(devs[0]);
	struct rc_side s;
	struct peer me, p;

	if (ctx == NULL || rc_make(&s, ctx) != 0) {
		fprintf(stderr, "  [%d] set-up: %s\n", getpid(), strerror(errno));
		return 1;
	}
	if (server) {
		fill(s.buf + OFF_READ, MSG, 0x5a);
		if (post_recv(&s, s.buf, MSG) || post_recv(&s, s.buf + MSG, 16))
			return 1;
	}
	me = (struct peer){ s.qp->qp_num, s.mr->rkey, (uintptr_t)s.buf };
	if (write(wfd, &me, sizeof(me)) != sizeof(me) || read(rfd, &p, sizeof(p)) != sizeof(p))
		return 1;
	if (rc_connect(&s, &p) != 0) {
		fprintf(stderr, "  [%d] connect: %s\n", getpid(), strerror(errno));
		return 1;
	}
	/* both in RTS before the first send */
	if (write(wfd, &me, 1) != 1 || read(rfd, &p, 1) != 1)
		return 1;
	if (server) {
		if (wait_wc(s.cq, IBV_WC_RECV, MSG) || check(s.buf, MSG, 0x11, "SEND") ||
		    wait_wc(s.cq, IBV_WC_RECV, 16) ||
		    check(s.buf + OFF_WRITE, MSG, 0x33, "WRITE"))
			return 1;
		return 0;
	}
	fill(s.buf, MSG, 0x11);
	fill(s.buf + OFF_WRITE, MSG, 0x33);
	if (post(s.qp, IBV_WR_SEND, s.buf, MSG, s.mr->lkey, 0, 0) ||
	    wait_wc(s.cq, IBV_WC_SEND, 0) ||
	    post(s.qp, IBV_WR_RDMA_WRITE, s.buf + OFF_WRITE, MSG, s.mr->lkey,
		 p.addr + OFF_WRITE, p.rkey) || wait_wc(s.cq, IBV_WC_RDMA_WRITE, 0) ||
	    post(s.qp, IBV_WR_RDMA_READ, s.buf + OFF_READ, MSG, s.mr->lkey,
		 p.addr + OFF_READ, p.rkey) || wait_wc(s.cq, IBV_WC_RDMA_READ, 0) ||
	    check(s.buf + OFF_READ, MSG, 0x5a, "READ") ||
	    post(s.qp, IBV_WR_SEND, s.buf, 16, s.mr->lkey, 0, 0) || wait_wc(s.cq, IBV_WC_SEND, 0))
		return 1;
	return 0;
}

/* Wait for @pid: 0 if it exited with 0 within WAIT_MS + 5 s, else kill it. */
static int
reap(pid_t pid, const char *who)
{
	uint64_t end = now_ms() + WAIT_MS + 5000;
	int st = 0;

	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() > end) {
			fprintf(stderr, "  %s (%d) hangs: killed\n", who, pid);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(1000);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "  %s (%d) failed: status %#x\n", who, pid, st);
		return -1;
	}
	return 0;
}

static int
test_rc_between_children(void)
{
	int a2b[2], b2a[2];
	pid_t a, b;
	int ra, rb;

	if (pipe(a2b) || pipe(b2a))
		return TEST_FAILED;
	a = fork();
	if (a == 0)
		_exit(rc_child(true, a2b[1], b2a[0]));
	b = fork();
	if (b == 0)
		_exit(rc_child(false, b2a[1], a2b[0]));
	ra = reap(a, "server");
	rb = reap(b, "client");
	close(a2b[0]), close(a2b[1]), close(b2a[0]), close(b2a[1]);
	TEST_ASSERT(ra == 0 && rb == 0, "the children's RC exchange");
	return TEST_SUCCESS;
}

/* the second pair takes the ended processes' indexes and QP1 slots */
static int
test_rc_again(void)
{
	return test_rc_between_children();
}

static struct rdma_addrinfo *
addrinfo(bool passive, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res = NULL;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(DEV_IP, port, &hints, &res) != 0)
		return NULL;
	return res;
}

/*
 * The server disconnects once the client has its SEND's completion: a
 * peer that leaves as soon as the message is in may take the ACK with it
 * (an ACK lost, then a QP gone: RETRY_EXC), with hardware too.
 */
static int
cm_server(int wfd, int rfd)
{
	struct rdma_addrinfo *ai = addrinfo(true, "7471");
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .sq_sig_all = 1 };
	struct rdma_cm_id *l, *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint8_t buf[MSG];

	if (ai == NULL || rdma_create_ep(&l, ai, NULL, &qa) || rdma_listen(l, 4))
		return 1;
	if (write(wfd, "L", 1) != 1 || rdma_get_request(l, &id))
		return 1;
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (mr == NULL || rdma_post_recv(id, NULL, buf, sizeof(buf), mr) || rdma_accept(id, NULL))
		return 1;
	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.byte_len != MSG)
		return 1;
	if (check(buf, MSG, 0x77, "rdma_post_send") || read(rfd, &wc, 1) != 1)
		return 1;
	rdma_disconnect(id);
	return 0;
}

static int
cm_client(int wfd)
{
	struct rdma_addrinfo *ai = addrinfo(false, "7471");
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .sq_sig_all = 1 };
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint8_t buf[MSG];

	fill(buf, MSG, 0x77);
	if (ai == NULL || rdma_create_ep(&id, ai, NULL, &qa) || rdma_connect(id, NULL)) {
		fprintf(stderr, "  [%d] connect: %s\n", getpid(), strerror(errno));
		return 1;
	}
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (mr == NULL || rdma_post_send(id, NULL, buf, sizeof(buf), mr, 0) ||
	    rdma_get_send_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "  [%d] send: %s (completion %s)\n", getpid(), strerror(errno),
			ibv_wc_status_str(wc.status));
		return 1;
	}
	return write(wfd, "D", 1) == 1 ? 0 : 1;
}

/* another process's listener holds the port */
static int
cm_second_listener(void)
{
	struct rdma_addrinfo *ai = addrinfo(true, "7471");
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_cm_id *l;

	if (ai == NULL || rdma_create_ep(&l, ai, NULL, &qa))
		return 1;
	if (rdma_listen(l, 4) != -1 || errno != EADDRINUSE) {
		fprintf(stderr, "  [%d] a second listener on the port: %s\n", getpid(),
			strerror(errno));
		return 1;
	}
	return 0;
}

static int
test_cm_between_children(void)
{
	int p[2], done[2];
	pid_t s, c, d;
	char ch;
	int rs, rc, rd;

	if (pipe(p) || pipe(done))
		return TEST_FAILED;
	s = fork();
	if (s == 0)
		_exit(cm_server(p[1], done[0]));
	/* the listener is there before the others start */
	TEST_ASSERT(read(p[0], &ch, 1) == 1, "the server listens");
	/* ...and still there while the second one tries: the client comes after */
	d = fork();
	if (d == 0)
		_exit(cm_second_listener());
	rd = reap(d, "second listener");
	c = fork();
	if (c == 0)
		_exit(cm_client(done[1]));
	rc = reap(c, "client");
	rs = reap(s, "server");
	close(p[0]), close(p[1]), close(done[0]), close(done[1]);
	TEST_ASSERT(rs == 0 && rc == 0 && rd == 0, "the children's rdma_cm exchange");
	return TEST_SUCCESS;
}

/* The parent's QPs and CM id, made before the forks: still its own after all that. */
static struct rc_side pa, pb;
static struct rdma_event_channel *pch;
static struct rdma_cm_id *pid_cm;

static int
test_parent_after(void)
{
	struct peer x = { pb.qp->qp_num, 0, 0 }, y = { pa.qp->qp_num, 0, 0 };

	/* a child that only runs a program (system(3)) costs the parent nothing */
	TEST_ASSERT(system("true") == 0, "system(\"true\")");
	CHECK(rc_connect(&pa, &x));
	CHECK(rc_connect(&pb, &y));
	CHECK(post_recv(&pb, pb.buf, MSG));
	fill(pa.buf, MSG, 0x42);
	CHECK(post(pa.qp, IBV_WR_SEND, pa.buf, MSG, pa.mr->lkey, 0, 0));
	CHECK(wait_wc(pa.cq, IBV_WC_SEND, 0));
	CHECK(wait_wc(pb.cq, IBV_WC_RECV, MSG));
	CHECK(check(pb.buf, MSG, 0x42, "the parent's SEND"));
	if (pid_cm == NULL)
		return TEST_SUCCESS;	/* --lcore */
	/* its id, made before the forks, listens on the port the ended server held */
	TEST_ASSERT(rdma_listen(pid_cm, 4) == 0, "the parent's rdma_listen: %s", strerror(errno));
	TEST_ASSERT(rdma_destroy_id(pid_cm) == 0, "rdma_destroy_id");
	rdma_destroy_event_channel(pch);
	return TEST_SUCCESS;
}

/* On an engine lcore of the parent, the device is not the child's to use. */
static int
test_lcore_child_enodev(void)
{
	pid_t c = fork();

	if (c == 0) {
		struct ibv_context *ctx = ibv_open_device(devs[0]);

		_exit(ctx == NULL && errno == ENODEV ? 0 : 1);
	}
	TEST_ASSERT(reap(c, "child") == 0, "ibv_open_device in the child: NULL, ENODEV");
	return TEST_SUCCESS;
}

int
main(int argc, char **argv)
{
	static const struct droce_test_case inline_cases[] = {
		TEST_CASE(test_rc_between_children),
		TEST_CASE(test_rc_again),
		TEST_CASE(test_cm_between_children),
		TEST_CASE(test_parent_after),
	};
	static const struct droce_test_case lcore_cases[] = {
		TEST_CASE(test_lcore_child_enodev),
		TEST_CASE(test_parent_after),
	};
	bool lcore_mode = argc > 1 && strcmp(argv[1], "--lcore") == 0;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	devs = ibv_get_device_list(&n);
	if (devs == NULL || n < 1) {
		fprintf(stderr, "no droce device (DROCE_EAL)\n");
		return 1;
	}
	pctx = ibv_open_device(devs[0]);
	if (pctx == NULL || rc_make(&pa, pctx) || rc_make(&pb, pctx)) {
		fprintf(stderr, "the parent's set-up failed\n");
		return 1;
	}
	if (lcore_mode)
		return DROCE_TEST_MAIN("fork_lcore", lcore_cases, NULL, NULL);
	/* the connection manager runs in the parent before the forks: each child starts its own */
	{
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7471) };

		inet_pton(AF_INET, DEV_IP, &sin.sin_addr);
		pch = rdma_create_event_channel();
		if (pch == NULL || rdma_create_id(pch, &pid_cm, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(pid_cm, (struct sockaddr *)&sin)) {
			fprintf(stderr, "the parent's CM id: %s\n", strerror(errno));
			return 1;
		}
	}
	return DROCE_TEST_MAIN("fork", inline_cases, NULL, NULL);
}
