/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion semantics through the verbs API (man ibv_poll_cq, ibv_post_send,
 * ibv_post_recv, ibv_modify_srq; IBA 10.7.3.1, 11.4.1.1): flushing in ERR,
 * SRQs shared by several QPs, the SRQ limit event, the UD GRH, local key and
 * length errors, and the work completion fields of successful operations.
 *
 * Run with --inline (progress made by post/poll) or --lcore (engine lcore).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

#define WC_MS		5000	/* wait for one expected completion */
#define QUIET_MS	50	/* window in which no completion may appear */
#define GUARD		64
#define GUARD_BYTE	0xa5
#define DIM(a)		(sizeof(a) / sizeof((a)[0]))

/*
 * A case makes or records its objects through h_res_* (harness.h);
 * h_res_release, the suite's teardown, destroys them whatever happened.
 */

/* ------------------------------------------------------------------------- */
/* Helpers */

static int
to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int
post_recv1(struct ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge g = { addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static int
post_srq1(struct ibv_srq *srq, uint64_t addr, uint32_t len, uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge g = { addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1 }, *bad = NULL;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* One WR; UD WRs go through @ah to @qpn with @qkey. */
static int
post_send1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t addr, uint32_t len,
	   uint32_t lkey, uint64_t wr_id, unsigned int flags, uint32_t imm_host,
	   struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_sge g = { addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1, .opcode = op,
				  .send_flags = flags, .imm_data = htonl(imm_host) }, *bad = NULL;

	if (qp->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qpn;
		wr.wr.ud.remote_qkey = qkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int
post_write1(struct ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey, uint64_t wr_id,
	    unsigned int flags, bool imm, uint32_t imm_host, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge g = { addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1,
				  .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
				  .send_flags = flags, .imm_data = htonl(imm_host) }, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

#define BUF(s, off)	((uintptr_t)(s)->buf + (off))

/* ------------------------------------------------------------------------- */
/* Flush on ERR */

#define FL_N	10

static bool
fl_signaled(int i)
{
	return i % 3 == 0;	/* 0, 3, 6, 9 signaled; the rest not */
}

/* After the move to ERR: @n send and @n receive flushes, in posting order. */
static int
expect_flushes(struct h_side *a, uint64_t sbase, uint64_t rbase, int n)
{
	struct ibv_wc wc[FL_N];

	TEST_ASSERT_EQ(h_poll(a->scq, wc, n, WC_MS), n);
	for (int i = 0; i < n; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_WR_FLUSH_ERR);
		TEST_ASSERT_EQ(wc[i].wr_id, sbase + i);
		TEST_ASSERT_EQ(wc[i].qp_num, a->qp->qp_num);
	}
	TEST_ASSERT_EQ(h_poll(a->rcq, wc, n, WC_MS), n);
	for (int i = 0; i < n; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_WR_FLUSH_ERR);
		TEST_ASSERT_EQ(wc[i].wr_id, rbase + i);
		TEST_ASSERT_EQ(wc[i].qp_num, a->qp->qp_num);
	}
	ASSERT_QUIET(a->scq, QUIET_MS);
	ASSERT_QUIET(a->rcq, 1);
	return TEST_SUCCESS;
}

/* Connect @s as a UC QP to an address nobody answers ARP for. */
static int
connect_nowhere(struct h_side *s, const struct h_qp_opts *o)
{
	struct h_side ghost = *s;

	ghost.gid.raw[15] = 99;		/* 10.0.0.99 */
	return h_connect(s, &ghost, o);
}

static int
flush_on_err(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 0 };
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	uint32_t dqpn = 0;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	if (type == IBV_QPT_UC) {
		/* sends stay outstanding: the destination never resolves */
		TEST_ASSERT_EQ(ibv_modify_qp(a->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
					     IBV_QP_STATE), 0);
		TEST_ASSERT_EQ(connect_nowhere(a, &o), 0);
	} else if (type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

		aa.grh.dgid = b->gid;
		aa.grh.dgid.raw[15] = 99;
		aa.grh.hop_limit = 64;
		ah = h_res_add_ah(ibv_create_ah(a->pd, &aa));
		TEST_ASSERT(ah != NULL, "create_ah");
		dqpn = b->qp->qp_num;
	}
	/*
	 * RC: b has no receive WQE, so every send is RNR NAKed (rnr_retry 7)
	 * and stays outstanding; UC/UD: no ARP answer. a's receives have nobody
	 * sending to them.
	 */
	for (int i = 0; i < FL_N; i++) {
		TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, i * 2000), 1500, a->mr->lkey,
					  100 + i, fl_signaled(i) ? IBV_SEND_SIGNALED : 0, 0, ah,
					  dqpn, H_QKEY), 0);
		TEST_ASSERT_EQ(h_post_recv(a, 100000 + i * 2000, 2000, 200 + i), 0);
	}
	ASSERT_QUIET(a->scq, QUIET_MS);
	ASSERT_QUIET(a->rcq, 1);
	TEST_ASSERT_EQ(to_err(a->qp), 0);
	rc = expect_flushes(a, 100, 200, FL_N);
	if (rc)
		return rc;
	/* WRs posted in ERR are accepted and flush too, unsignaled or not */
	for (int i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 0), 10, a->mr->lkey, 300 + i,
					  i == 1 ? IBV_SEND_SIGNALED : 0, 0, ah, dqpn, H_QKEY), 0);
		TEST_ASSERT_EQ(h_post_recv(a, 0, 100, 400 + i), 0);
	}
	rc = expect_flushes(a, 300, 400, 3);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
	/* the peer saw nothing */
	ASSERT_QUIET(b->rcq, 1);
	return TEST_SUCCESS;
}

static int test_rc_flush_on_err(void) { return flush_on_err(IBV_QPT_RC); }
static int test_uc_flush_on_err(void) { return flush_on_err(IBV_QPT_UC); }
static int test_ud_flush_on_err(void) { return flush_on_err(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* SRQ shared by two QPs of droce1, fed by two senders on droce0 */

#define SRQ_SLOT	8192u
#define SRQ_BUF		(128u * SRQ_SLOT)

struct srq_env {
	struct ibv_context *c1;
	struct h_side *snd[2];
	struct h_side rcv[2];		/* views: QP, gid and the shared PD/MR/buffer */
	struct ibv_srq *srq;
	struct ibv_cq *rcq;		/* shared by both receiving QPs */
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_ah *ah[2];		/* UD: snd[i] -> rcv[i] */
};

static int
srq_env_create(struct srq_env *e, enum ibv_qp_type type, int nqp, uint32_t srq_wr)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1 };
	struct ibv_context *c0 = h_res_open(0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = srq_wr, .max_sge = 2 } };
	struct ibv_cq *scq;

	memset(e, 0, sizeof(*e));
	e->c1 = h_res_open(1);
	if (c0 == NULL || e->c1 == NULL)
		return -1;
	e->pd = h_res_add_pd(ibv_alloc_pd(e->c1));
	if (e->pd == NULL)
		return -1;
	e->buf = h_res_add_mem(aligned_alloc(4096, SRQ_BUF));
	if (e->buf == NULL)
		return -1;
	memset(e->buf, 0, SRQ_BUF);
	e->mr = h_res_add_mr(ibv_reg_mr(e->pd, e->buf, SRQ_BUF, IBV_ACCESS_LOCAL_WRITE));
	if (e->mr == NULL)
		return -1;
	e->srq = h_res_add_srq(ibv_create_srq(e->pd, &sa));
	if (e->srq == NULL)
		return -1;
	e->rcq = h_res_add_cq(ibv_create_cq(e->c1, 256, NULL, NULL, 0));
	scq = h_res_add_cq(ibv_create_cq(e->c1, 64, NULL, NULL, 0));
	if (e->rcq == NULL || scq == NULL)
		return -1;
	for (int i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = scq, .recv_cq = e->rcq, .srq = e->srq, .qp_type = type,
			.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		};
		struct h_side *r = &e->rcv[i];

		r->ctx = e->c1;
		r->pd = e->pd;
		r->mr = e->mr;
		r->buf = e->buf;
		r->buf_len = SRQ_BUF;
		r->scq = scq;
		r->rcq = e->rcq;
		r->qp = h_res_add_qp(ibv_create_qp(e->pd, &qa));
		if (r->qp == NULL)
			return -1;
		if (ibv_query_gid(e->c1, 1, 0, &r->gid))
			return -1;
		e->snd[i] = h_res_side(c0, &o);
		if (e->snd[i] == NULL)
			return -1;
		if (h_connect(r, e->snd[i], &o) || h_connect(e->snd[i], r, &o))
			return -1;
		if (type == IBV_QPT_UD && (e->ah[i] = h_res_ah(e->snd[i], r)) == NULL)
			return -1;
	}
	return 0;
}

/* Message @seq of sender @who: an 8-byte header {who, seq}, then a pattern. */
static uint32_t
srq_len(int who, uint32_t seq)
{
	return 8 + (seq * 613u + (uint32_t)who * 211u) % 2900u;	/* up to 3 packets */
}

static void
srq_fill(uint8_t *p, int who, uint32_t seq)
{
	uint32_t h[2] = { (uint32_t)who, seq };

	memcpy(p, h, 8);
	h_pattern(p + 8, srq_len(who, seq) - 8, (uint32_t)who * 100000u + seq);
}

static int
srq_send(struct srq_env *e, int who, uint32_t seq)
{
	struct h_side *s = e->snd[who];
	size_t off = (seq % 16) * 4096;

	srq_fill(s->buf + off, who, seq);
	return post_send1(s->qp, IBV_WR_SEND, BUF(s, off), srq_len(who, seq), s->mr->lkey,
			  seq, 0, 0, e->ah[who], e->rcv[who].qp->qp_num, H_QKEY);
}

/*
 * @n receive completions on the shared CQ; each must name the QP that its
 * sender is connected to, and per QP the sequence numbers from next[] on.
 * @wr_base: when not UINT64_MAX, the wr_ids expected in order.
 */
static int
srq_expect(struct srq_env *e, int n, uint32_t next[2], int count[2], uint64_t wr_base)
{
	bool ud = e->rcv[0].qp->qp_type == IBV_QPT_UD;
	uint32_t hdr = ud ? 40 : 0;
	uint8_t exp[3000];

	for (int k = 0; k < n; k++) {
		struct ibv_wc wc;
		uint32_t h[2];
		int who;

		POLL1(e->rcq, wc);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
		if (wr_base != UINT64_MAX)
			TEST_ASSERT_EQ(wc.wr_id, wr_base + k);
		TEST_ASSERT(wc.wr_id < 128, "wr_id %" PRIu64, (uint64_t)wc.wr_id);
		if (wc.qp_num == e->rcv[0].qp->qp_num)
			who = 0;
		else if (e->rcv[1].qp && wc.qp_num == e->rcv[1].qp->qp_num)
			who = 1;
		else
			TEST_ASSERT(0, "qp_num 0x%x names neither QP (0x%x, 0x%x)", wc.qp_num,
				    e->rcv[0].qp->qp_num, e->rcv[1].qp ? e->rcv[1].qp->qp_num : 0);
		memcpy(h, e->buf + wc.wr_id * SRQ_SLOT + hdr, 8);
		/* the message in the buffer came from the sender of that QP */
		TEST_ASSERT_EQ(h[0], who);
		TEST_ASSERT_EQ(h[1], next[who]);
		TEST_ASSERT_EQ(wc.byte_len, hdr + srq_len(who, h[1]));
		if (ud)
			TEST_ASSERT_EQ(wc.src_qp, e->snd[who]->qp->qp_num);
		srq_fill(exp, who, h[1]);
		ASSERT_BYTES(e->buf + wc.wr_id * SRQ_SLOT + hdr, exp, srq_len(who, h[1]));
		next[who]++;
		count[who]++;
	}
	return TEST_SUCCESS;
}

static int
srq_sharing(enum ibv_qp_type type)
{
	struct srq_env e;
	uint32_t next[2] = { 0, 0 };
	int count[2] = { 0, 0 };
	struct ibv_wc wc[16];
	const int K = 8;
	int rc;

	TEST_ASSERT_EQ(srq_env_create(&e, type, 2, 64), 0);
	for (int i = 0; i < 2 * K; i++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], i * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, i), 0);
	/* interleaved: 0/0, 1/0, 0/1, 1/1, ... */
	for (int i = 0; i < K; i++) {
		TEST_ASSERT_EQ(srq_send(&e, 0, i), 0);
		TEST_ASSERT_EQ(srq_send(&e, 1, i), 0);
	}
	rc = srq_expect(&e, 2 * K, next, count, UINT64_MAX);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(count[0], K);
	TEST_ASSERT_EQ(count[1], K);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(h_poll(e.snd[i]->scq, wc, K, WC_MS), K);
		for (int j = 0; j < K; j++)
			ASSERT_STATUS(wc[j], IBV_WC_SUCCESS);
	}
	ASSERT_QUIET(e.rcq, 1);

	/* QP 0 to ERR: the SRQ's WQEs are not flushed ... */
	for (int i = 0; i < K; i++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], (32 + i) * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, 32 + i), 0);
	TEST_ASSERT_EQ(to_err(e.rcv[0].qp), 0);
	ASSERT_QUIET(e.rcq, 100);
	/* ... and QP 1 still consumes every one of them, in order */
	for (int i = 0; i < K; i++)
		TEST_ASSERT_EQ(srq_send(&e, 1, K + i), 0);
	count[0] = count[1] = 0;
	rc = srq_expect(&e, K, next, count, 32);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(count[1], K);
	TEST_ASSERT_EQ(h_poll(e.snd[1]->scq, wc, K, WC_MS), K);
	for (int j = 0; j < K; j++)
		ASSERT_STATUS(wc[j], IBV_WC_SUCCESS);
	ASSERT_QUIET(e.rcq, QUIET_MS);
	return TEST_SUCCESS;
}

static int test_rc_srq_two_qps(void) { return srq_sharing(IBV_QPT_RC); }
static int test_ud_srq_two_qps(void) { return srq_sharing(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* SRQ limit event */

/* Non-blocking ibv_get_async_event until one arrives or @ms pass. */
static int
get_event(struct ibv_context *c, struct ibv_async_event *ev, int ms)
{
	uint64_t t0 = h_now_ms();

	do {
		if (ibv_get_async_event(c, ev) == 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
	} while (h_now_ms() - t0 < (uint64_t)ms);
	return -1;
}

#define ASSERT_NO_EVENT(c) do { \
	struct ibv_async_event _ev; \
	TEST_ASSERT(get_event((c), &_ev, 20) != 0, "unexpected async event %d", _ev.event_type); \
} while (0)

static uint32_t
srq_limit_now(struct ibv_srq *srq)
{
	struct ibv_srq_attr a = { 0 };

	return ibv_query_srq(srq, &a) == 0 ? a.srq_limit : 0xdead;
}

/* Send @n messages on QP 0 and reap their receives. */
static int
srq_consume(struct srq_env *e, uint32_t *seq, int n)
{
	uint32_t next[2] = { *seq, 0 };
	int count[2] = { 0, 0 };
	struct ibv_wc wc[16];
	int rc;

	for (int i = 0; i < n; i++)
		TEST_ASSERT_EQ(srq_send(e, 0, *seq + i), 0);
	rc = srq_expect(e, n, next, count, UINT64_MAX);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(h_poll(e->snd[0]->scq, wc, n, WC_MS), n);
	*seq += n;
	return TEST_SUCCESS;
}

static int
test_srq_limit_event(void)
{
	struct srq_env e;
	struct ibv_async_event ev;
	struct ibv_srq_attr sa;
	uint32_t seq = 0;
	int slot = 0, rc;

	TEST_ASSERT_EQ(srq_env_create(&e, IBV_QPT_RC, 1, 16), 0);
	TEST_ASSERT_EQ(fcntl(e.c1->async_fd, F_SETFL,
			     fcntl(e.c1->async_fd, F_GETFL) | O_NONBLOCK), 0);
	ASSERT_NO_EVENT(e.c1);
	for (int i = 0; i < 10; i++, slot++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], slot * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, slot), 0);
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 0);
	sa.srq_limit = 17;			/* above max_wr */
	TEST_ASSERT_EQ(ibv_modify_srq(e.srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	sa.srq_limit = 5;
	TEST_ASSERT_EQ(ibv_modify_srq(e.srq, &sa, IBV_SRQ_LIMIT), 0);
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 5);

	/* 10 -> 5 WQEs: not below the limit yet */
	rc = srq_consume(&e, &seq, 5);
	if (rc)
		return rc;
	ASSERT_NO_EVENT(e.c1);
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 5);
	/* 5 -> 4: the event, once, and the limit disarms */
	rc = srq_consume(&e, &seq, 1);
	if (rc)
		return rc;
	TEST_ASSERT(get_event(e.c1, &ev, WC_MS) == 0, "no SRQ limit event");
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	TEST_ASSERT_PTR_EQ(ev.element.srq, e.srq);
	ibv_ack_async_event(&ev);
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 0);
	/* 4 -> 2: not armed, nothing */
	rc = srq_consume(&e, &seq, 2);
	if (rc)
		return rc;
	ASSERT_NO_EVENT(e.c1);

	/* refill to 8, re-arm at 6 */
	for (int i = 0; i < 6; i++, slot++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], slot * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, slot), 0);
	sa.srq_limit = 6;
	TEST_ASSERT_EQ(ibv_modify_srq(e.srq, &sa, IBV_SRQ_LIMIT), 0);
	rc = srq_consume(&e, &seq, 2);		/* 8 -> 6 */
	if (rc)
		return rc;
	ASSERT_NO_EVENT(e.c1);
	rc = srq_consume(&e, &seq, 1);		/* 6 -> 5 */
	if (rc)
		return rc;
	TEST_ASSERT(get_event(e.c1, &ev, WC_MS) == 0, "no SRQ limit event after re-arming");
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	TEST_ASSERT_PTR_EQ(ev.element.srq, e.srq);
	ibv_ack_async_event(&ev);
	rc = srq_consume(&e, &seq, 2);		/* 5 -> 3 */
	if (rc)
		return rc;
	ASSERT_NO_EVENT(e.c1);
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 0);
	return TEST_SUCCESS;
}

/*
 * Async events belong to the context that owns the object (man
 * ibv_get_async_event: "the next async event of the RDMA device context"):
 * with a second context open on the same device, the SRQ's event must reach
 * the SRQ's context, not the one opened first.
 */
static int
test_srq_limit_event_owning_context(void)
{
	struct ibv_context *first = h_res_open(1);
	struct ibv_async_event ev;
	struct ibv_srq_attr sa = { .srq_limit = 3 };
	struct srq_env e;
	uint32_t seq = 0;
	int rc;

	TEST_ASSERT(first != NULL, "open");
	TEST_ASSERT_EQ(srq_env_create(&e, IBV_QPT_RC, 1, 16), 0);
	TEST_ASSERT(e.c1 != first, "two contexts");
	TEST_ASSERT_EQ(fcntl(e.c1->async_fd, F_SETFL,
			     fcntl(e.c1->async_fd, F_GETFL) | O_NONBLOCK), 0);
	TEST_ASSERT_EQ(fcntl(first->async_fd, F_SETFL,
			     fcntl(first->async_fd, F_GETFL) | O_NONBLOCK), 0);
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], i * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, i), 0);
	TEST_ASSERT_EQ(ibv_modify_srq(e.srq, &sa, IBV_SRQ_LIMIT), 0);
	rc = srq_consume(&e, &seq, 2);		/* 4 -> 2 < 3 */
	if (rc)
		return rc;
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 0);	/* it fired */
	if (get_event(first, &ev, 20) == 0)
		TEST_ASSERT(0, "event %d (srq %p, ours %p) went to the first context opened",
			    ev.event_type, (void *)ev.element.srq, (void *)e.srq);
	TEST_ASSERT(get_event(e.c1, &ev, WC_MS) == 0, "no event on the SRQ's context");
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	TEST_ASSERT_PTR_EQ(ev.element.srq, e.srq);
	ibv_ack_async_event(&ev);
	return TEST_SUCCESS;
}

/*
 * A QP on an SRQ that goes to ERR raises IBV_EVENT_QP_LAST_WQE_REACHED
 * (IBA 10.2.9.5 / 11.6.3.1; the reference digest, section C): the consumer
 * waits for it before destroying the QP.
 */
static int
test_srq_qp_err_last_wqe_reached(void)
{
	struct ibv_async_event ev;
	struct srq_env e;

	TEST_ASSERT_EQ(srq_env_create(&e, IBV_QPT_RC, 2, 16), 0);
	TEST_ASSERT_EQ(fcntl(e.c1->async_fd, F_SETFL,
			     fcntl(e.c1->async_fd, F_GETFL) | O_NONBLOCK), 0);
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], i * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, i), 0);
	ASSERT_NO_EVENT(e.c1);
	TEST_ASSERT_EQ(to_err(e.rcv[0].qp), 0);
	TEST_ASSERT(get_event(e.c1, &ev, 1000) == 0, "no IBV_EVENT_QP_LAST_WQE_REACHED");
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	TEST_ASSERT_PTR_EQ(ev.element.qp, e.rcv[0].qp);
	ibv_ack_async_event(&ev);
	ASSERT_NO_EVENT(e.c1);
	ASSERT_QUIET(e.rcq, 1);		/* and still no flush of the SRQ's WQEs */
	return TEST_SUCCESS;
}

/* Closing another context of the device must not silence the SRQ's context. */
static int
test_srq_limit_event_after_other_context_closed(void)
{
	struct ibv_context *first = h_open(1);
	struct ibv_async_event ev;
	struct ibv_srq_attr sa = { .srq_limit = 3 };
	struct srq_env e;
	uint32_t seq = 0;
	int rc;

	TEST_ASSERT(first != NULL, "open");
	rc = srq_env_create(&e, IBV_QPT_RC, 1, 16);
	ibv_close_device(first);
	TEST_ASSERT_EQ(rc, 0);
	TEST_ASSERT_EQ(fcntl(e.c1->async_fd, F_SETFL,
			     fcntl(e.c1->async_fd, F_GETFL) | O_NONBLOCK), 0);
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(post_srq1(e.srq, BUF(&e.rcv[0], i * SRQ_SLOT), SRQ_SLOT,
					 e.mr->lkey, i), 0);
	TEST_ASSERT_EQ(ibv_modify_srq(e.srq, &sa, IBV_SRQ_LIMIT), 0);
	rc = srq_consume(&e, &seq, 2);		/* 4 -> 2 < 3 */
	if (rc)
		return rc;
	TEST_ASSERT_EQ(srq_limit_now(e.srq), 0);	/* it fired */
	TEST_ASSERT(get_event(e.c1, &ev, 200) == 0, "the SRQ limit event was lost");
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	TEST_ASSERT_PTR_EQ(ev.element.srq, e.srq);
	ibv_ack_async_event(&ev);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* UD: GRH, immediate data, Q_Key, short buffers */

static uint16_t
csum20(const uint8_t *p)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static int
ud_grh(bool imm)
{
	struct h_qp_opts o = { .type = IBV_QPT_UD, .sq_sig_all = 1 };
	const uint32_t len = 100;
	struct h_side *a, *b;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint8_t exp[100];
	const uint8_t *g;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	memset(b->buf, 0xee, 40 + len + GUARD);
	h_pattern(exp, len, 99);
	memcpy(a->buf, exp, len);
	TEST_ASSERT_EQ(h_post_recv(b, 0, 40 + len + GUARD, 5), 0);
	TEST_ASSERT_EQ(post_send1(a->qp, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, BUF(a, 0), len,
				  a->mr->lkey, 6, 0, 0xa1b2c3d4, ah, b->qp->qp_num, H_QKEY), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 5);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 40 + len);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	TEST_ASSERT_EQ(wc.src_qp, a->qp->qp_num);
	TEST_ASSERT(wc.wc_flags & IBV_WC_GRH, "IBV_WC_GRH missing (flags 0x%x)", wc.wc_flags);
	TEST_ASSERT_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), imm);
	if (imm)
		TEST_ASSERT_EQ(ntohl(wc.imm_data), 0xa1b2c3d4);
	g = b->buf;
	ASSERT_FILL(g, 0, 20);
	g += 20;
	TEST_ASSERT_EQ(g[0], 0x45);
	TEST_ASSERT_EQ(g[9], 17);
	/* total length: IP 20 + UDP 8 + BTH 12 + DETH 8 [+ ImmDt 4] + payload + ICRC 4 */
	TEST_ASSERT_EQ(g[2] << 8 | g[3], 20 + 8 + 12 + 8 + (imm ? 4 : 0) + len + 4);
	TEST_ASSERT_EQ(csum20(g), 0xffff);
	TEST_ASSERT(memcmp(g + 12, &a->gid.raw[12], 4) == 0 && g[12] == 10 && g[15] == 1,
		    "source %u.%u.%u.%u", g[12], g[13], g[14], g[15]);
	TEST_ASSERT(memcmp(g + 16, &b->gid.raw[12], 4) == 0 && g[16] == 10 && g[19] == 2,
		    "destination %u.%u.%u.%u", g[16], g[17], g[18], g[19]);
	ASSERT_BYTES(b->buf + 40, exp, len);
	ASSERT_FILL(b->buf + 40 + len, 0xee, GUARD);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 6);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_SEND);
	return TEST_SUCCESS;
}

static int test_ud_grh_send(void) { return ud_grh(false); }
static int test_ud_grh_send_with_imm(void) { return ud_grh(true); }

static int
test_ud_wrong_qkey_dropped(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_UD, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint8_t good[150];
	uint64_t drops0;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	drops0 = h_xstat("droce1", "rx_drop_bad_qkey");
	TEST_ASSERT(drops0 != UINT64_MAX, "no rx_drop_bad_qkey counter");
	memset(b->buf, 0, 4096);
	TEST_ASSERT_EQ(h_post_recv(b, 0, 40 + 200, 7), 0);
	h_pattern(a->buf, 100, 1);
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 0), 100, a->mr->lkey, 1, 0, 0, ah,
				  b->qp->qp_num, 0x22222222), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);	/* UD: the requester does not know */
	ASSERT_QUIET(b->rcq, QUIET_MS);
	TEST_ASSERT_EQ(h_xstat("droce1", "rx_drop_bad_qkey"), drops0 + 1);
	/* the next good message lands in the same WQE */
	h_pattern(good, sizeof(good), 2);
	memcpy(a->buf + 4096, good, sizeof(good));
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 4096), sizeof(good), a->mr->lkey, 2,
				  0, 0, ah, b->qp->qp_num, H_QKEY), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 7);
	TEST_ASSERT_EQ(wc.byte_len, 40 + sizeof(good));
	ASSERT_BYTES(b->buf + 40, good, sizeof(good));
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	ASSERT_QUIET(b->rcq, 1);
	return TEST_SUCCESS;
}

static int
test_ud_short_buffer_loc_len_err(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_UD, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint8_t m2[100];

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	memset(b->buf, GUARD_BYTE, 8192);
	/* WQE 1 holds 40 + 99 bytes: one short of a 100-byte message */
	TEST_ASSERT_EQ(h_post_recv(b, 0, 40 + 99, 1), 0);
	TEST_ASSERT_EQ(h_post_recv(b, 4096, 40 + 200, 2), 0);
	h_pattern(a->buf, 100, 11);
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 0), 100, a->mr->lkey, 11, 0, 0, ah,
				  b->qp->qp_num, H_QKEY), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_LOC_LEN_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	ASSERT_FILL(b->buf + 40 + 99, GUARD_BYTE, 4096 - 40 - 99);	/* nothing beyond */
	ASSERT_QUIET(b->rcq, 10);
	/* the next WQE receives the next message intact */
	h_pattern(m2, sizeof(m2), 12);
	memcpy(a->buf + 4096, m2, sizeof(m2));
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 4096), sizeof(m2), a->mr->lkey, 12, 0,
				  0, ah, b->qp->qp_num, H_QKEY), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(wc.byte_len, 40 + sizeof(m2));
	ASSERT_BYTES(b->buf + 4096 + 40, m2, sizeof(m2));
	ASSERT_FILL(b->buf + 4096 + 40 + sizeof(m2), GUARD_BYTE, 200 - sizeof(m2));
	for (int i = 0; i < 2; i++) {
		POLL1(a->scq, wc);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Local key errors */

enum lkey_fault { BAD_LKEY, OTHER_PD, BEFORE_MR, PAST_MR };

static int
send_lkey_err(enum ibv_qp_type type, enum lkey_fault f)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	struct ibv_sge sg[3];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_wc wc;
	uint8_t exp[100];

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	if (type == IBV_QPT_UD)
		TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	for (int i = 0; i < 3; i++)
		TEST_ASSERT_EQ(h_post_recv(b, i * 4096, 4096, 50 + i), 0);
	h_pattern(exp, sizeof(exp), 3);
	memcpy(a->buf, exp, sizeof(exp));
	for (int i = 0; i < 3; i++) {
		sg[i] = (struct ibv_sge){ BUF(a, 0), 100, a->mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = 1 + i, .sg_list = &sg[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND, .next = i < 2 ? &wr[i + 1] : NULL };
		if (ah) {
			wr[i].wr.ud.ah = ah;
			wr[i].wr.ud.remote_qpn = b->qp->qp_num;
			wr[i].wr.ud.remote_qkey = H_QKEY;
		}
	}
	/* the middle WR is the bad one */
	switch (f) {
	case BAD_LKEY:
		sg[1].lkey = a->mr->lkey ^ 0x80;	/* another generation of the same slot */
		break;
	case OTHER_PD: {
		struct ibv_pd *pd2 = h_res_add_pd(ibv_alloc_pd(a->ctx));
		uint8_t *buf2 = h_res_add_mem(malloc(4096));
		struct ibv_mr *mr2;

		TEST_ASSERT(pd2 != NULL && buf2 != NULL, "pd/buffer");
		mr2 = h_res_add_mr(ibv_reg_mr(pd2, buf2, 4096, IBV_ACCESS_LOCAL_WRITE));
		TEST_ASSERT(mr2 != NULL, "reg_mr");
		sg[1] = (struct ibv_sge){ (uintptr_t)buf2, 100, mr2->lkey };
		break;
	}
	case BEFORE_MR:
		sg[1].addr = BUF(a, 0) - 50;
		break;
	case PAST_MR:
		sg[1].addr = BUF(a, a->buf_len - 50);
		break;
	}
	TEST_ASSERT_EQ(ibv_post_send(a->qp, wr, &bad), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_LOC_PROT_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(wc.qp_num, a->qp->qp_num);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 50);
	ASSERT_BYTES(b->buf + (type == IBV_QPT_UD ? 40 : 0), exp, sizeof(exp));
	if (type != IBV_QPT_RC)
		return TEST_SUCCESS;
	/* RC: the QP is in ERR, the WR behind the bad one and later ones flush */
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 3);
	TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 10, 4, 0), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 4);
	ASSERT_QUIET(b->rcq, QUIET_MS);		/* nothing after the bad WR arrived */
	ASSERT_QUIET(a->scq, 1);
	return TEST_SUCCESS;
}

static int test_rc_send_bad_lkey(void) { return send_lkey_err(IBV_QPT_RC, BAD_LKEY); }
static int test_rc_send_lkey_other_pd(void) { return send_lkey_err(IBV_QPT_RC, OTHER_PD); }
static int test_rc_send_addr_before_mr(void) { return send_lkey_err(IBV_QPT_RC, BEFORE_MR); }
static int test_rc_send_addr_past_mr(void) { return send_lkey_err(IBV_QPT_RC, PAST_MR); }
static int test_ud_send_bad_lkey(void) { return send_lkey_err(IBV_QPT_UD, BAD_LKEY); }

static int
recv_bad_lkey(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	if (type == IBV_QPT_UD)
		TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	TEST_ASSERT_EQ(post_recv1(b->qp, BUF(b, 0), 4096, b->mr->lkey ^ 0x80, 9), 0);
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND, BUF(a, 0), 100, a->mr->lkey, 1, 0, 0, ah,
				  b->qp->qp_num, H_QKEY), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_LOC_PROT_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 9);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	POLL1(a->scq, wc);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	if (type == IBV_QPT_RC) {
		/* the requester learns of it from the NAK */
		TEST_ASSERT(wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR,
			    "sender status %s", ibv_wc_status_str(wc.status));
		TEST_ASSERT_EQ(h_qp_state(b->qp), IBV_QPS_ERR);
		TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
	} else {
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	}
	return TEST_SUCCESS;
}

static int test_rc_recv_bad_lkey(void) { return recv_bad_lkey(IBV_QPT_RC); }
static int test_ud_recv_bad_lkey(void) { return recv_bad_lkey(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* RC SEND longer than the receive buffer */

static int
rc_len_err(uint32_t rlen, uint32_t slen)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	memset(b->buf, GUARD_BYTE, 2 * 8192);
	TEST_ASSERT_EQ(h_post_recv(b, 0, rlen, 1), 0);
	TEST_ASSERT_EQ(h_post_recv(b, 8192, rlen, 2), 0);
	h_pattern(a->buf, slen, 5);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, slen, 10, 0), 0);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 1, 11, 0), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_LOC_LEN_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_REM_INV_REQ_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 10);
	TEST_ASSERT_EQ(wc.qp_num, a->qp->qp_num);
	/* both in ERR; what was behind flushes on both sides */
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 11);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state(b->qp), IBV_QPS_ERR);
	/* nothing was written past the receive buffer */
	ASSERT_FILL(b->buf + rlen, GUARD_BYTE, 8192 - rlen);
	ASSERT_QUIET(a->scq, QUIET_MS);
	ASSERT_QUIET(b->rcq, 1);
	return TEST_SUCCESS;
}

static int test_rc_len_err_single_packet(void) { return rc_len_err(100, 200); }
static int test_rc_len_err_multi_packet(void) { return rc_len_err(2000, 5000); }

/* ------------------------------------------------------------------------- */
/* Work completion fields of successful operations */

static int
success_fields(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 0 };
	struct h_side *a, *b;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(h_post_recv(b, i * 8192, 8192, 21 + i), 0);
	h_pattern(a->buf, 8192, 17);

	/* unsignaled SEND: no send completion; the signaled one behind it has one */
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 300, 1, 0), 0);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 10, 2, IBV_SEND_SIGNALED), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_SEND);
	TEST_ASSERT_EQ(wc.qp_num, a->qp->qp_num);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 21);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 300);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	TEST_ASSERT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 22);
	TEST_ASSERT_EQ(wc.byte_len, 10);

	/* SEND_WITH_IMM */
	TEST_ASSERT_EQ(post_send1(a->qp, IBV_WR_SEND_WITH_IMM, BUF(a, 0), 2500, a->mr->lkey, 3,
				  IBV_SEND_SIGNALED, 0x01020304, NULL, 0, 0), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 3);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_SEND);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 23);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 2500);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "flags 0x%x", wc.wc_flags);
	TEST_ASSERT_EQ(ntohl(wc.imm_data), 0x01020304);
	ASSERT_BYTES(b->buf + 2 * 8192, a->buf, 2500);

	/* RDMA_WRITE: a send completion only */
	TEST_ASSERT_EQ(post_write1(a->qp, BUF(a, 0), 3000, a->mr->lkey, 4, IBV_SEND_SIGNALED,
				   false, 0, BUF(b, 65536), b->mr->rkey), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 4);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	TEST_ASSERT_EQ(wc.qp_num, a->qp->qp_num);

	/* RDMA_WRITE_WITH_IMM: consumes WQE 24, byte_len is the write length */
	TEST_ASSERT_EQ(post_write1(a->qp, BUF(a, 0), 2000, a->mr->lkey, 5, IBV_SEND_SIGNALED,
				   true, 0xcafe, BUF(b, 131072), b->mr->rkey), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 5);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 24);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(wc.byte_len, 2000);
	TEST_ASSERT_EQ(wc.qp_num, b->qp->qp_num);
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "flags 0x%x", wc.wc_flags);
	TEST_ASSERT_EQ(ntohl(wc.imm_data), 0xcafe);
	/* in order: the plain WRITE landed before */
	ASSERT_BYTES(b->buf + 65536, a->buf, 3000);
	ASSERT_BYTES(b->buf + 131072, a->buf, 2000);
	ASSERT_QUIET(a->scq, QUIET_MS);
	ASSERT_QUIET(b->rcq, 1);
	return TEST_SUCCESS;
}

static int test_rc_success_wc_fields(void) { return success_fields(IBV_QPT_RC); }
static int test_uc_success_wc_fields(void) { return success_fields(IBV_QPT_UC); }

/* ------------------------------------------------------------------------- */

static const struct droce_test_case cases[] = {
	TEST_CASE(test_rc_flush_on_err),
	TEST_CASE(test_uc_flush_on_err),
	TEST_CASE(test_ud_flush_on_err),
	TEST_CASE(test_rc_srq_two_qps),
	TEST_CASE(test_ud_srq_two_qps),
	TEST_CASE(test_srq_limit_event),
	TEST_CASE(test_srq_qp_err_last_wqe_reached),
	TEST_CASE(test_srq_limit_event_owning_context),
	TEST_CASE(test_srq_limit_event_after_other_context_closed),
	TEST_CASE(test_ud_grh_send),
	TEST_CASE(test_ud_grh_send_with_imm),
	TEST_CASE(test_ud_wrong_qkey_dropped),
	TEST_CASE(test_ud_short_buffer_loc_len_err),
	TEST_CASE(test_rc_send_bad_lkey),
	TEST_CASE(test_rc_send_lkey_other_pd),
	TEST_CASE(test_rc_send_addr_before_mr),
	TEST_CASE(test_rc_send_addr_past_mr),
	TEST_CASE(test_ud_send_bad_lkey),
	TEST_CASE(test_rc_recv_bad_lkey),
	TEST_CASE(test_ud_recv_bad_lkey),
	TEST_CASE(test_rc_len_err_single_packet),
	TEST_CASE(test_rc_len_err_multi_packet),
	TEST_CASE(test_rc_success_wc_fields),
	TEST_CASE(test_uc_success_wc_fields),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_comp", cases, NULL, h_res_release);
}
