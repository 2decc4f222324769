/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Objects changed in place through the verbs API: ibv_resize_cq (man
 * ibv_resize_cq; rxe: fewer entries than completions held is EINVAL) and
 * ibv_rereg_mr (man ibv_rereg_mr: IBV_REREG_MR_ERR_* codes; the keys stay,
 * as rxe keeps them; the engine checks the new range, PD and access).
 *
 * Run with --inline (progress made by post/poll) or --lcore (an engine lcore
 * completing into the CQ while it is resized).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

#define WC_MS		5000	/* wait for one expected completion */
#define QUIET_MS	50	/* window in which no completion may appear */
#define MR_LEN		65536
#define OLD_BYTE	0x3c	/* what the old range of a re-registered MR holds */

/* ------------------------------------------------------------------------- */
/* Helpers */

/* A SEND, or an RDMA WRITE or READ of [raddr, raddr + len) under @rkey. */
static int
post1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len, uint32_t lkey,
      uint64_t wr_id, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge g = { laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

#define BUF(s, off)	((uintptr_t)(s)->buf + (off))

/* The length of message @i of a stream: 1 to 700 bytes, one packet or two. */
static uint32_t
msg_len(uint32_t i)
{
	return 1 + (i * 131u) % 700u;
}

/*
 * Up to @n completions of @cq into @wc within @ms, through ibv_poll_cq or,
 * with @ex, ibv_start_poll/ibv_next_poll (wr_id, status, opcode, byte_len).
 */
static int
poll_n(struct ibv_cq *cq, bool ex, struct ibv_wc *wc, int n, int ms)
{
	struct ibv_cq_ex *x = (struct ibv_cq_ex *)cq;
	uint64_t t0 = h_now_ms();
	int got = 0;

	if (!ex)
		return h_poll(cq, wc, n, ms);
	while (got < n) {
		struct ibv_poll_cq_attr pa = { 0 };
		int ret = ibv_start_poll(x, &pa);

		if (ret == 0) {
			do {
				wc[got] = (struct ibv_wc){
					.wr_id = x->wr_id,
					.status = x->status,
					.opcode = ibv_wc_read_opcode(x),
					.byte_len = ibv_wc_read_byte_len(x),
					.qp_num = ibv_wc_read_qp_num(x),
				};
				got++;
			} while (got < n && ibv_next_poll(x) == 0);
			ibv_end_poll(x);
		} else if (ret != ENOENT) {
			return -1;
		}
		if (got < n && h_now_ms() - t0 >= (uint64_t)ms)
			break;
	}
	return got;
}

/* @n receive completions in order: wr_ids @first.., lengths msg_len(@seq..). */
static int
expect_recvs(struct ibv_cq *cq, bool ex, uint64_t first, uint32_t seq, int n, uint32_t qpn)
{
	struct ibv_wc wc[64];

	while (n > 0) {
		int k = n < 64 ? n : 64;

		TEST_ASSERT_EQ(poll_n(cq, ex, wc, k, WC_MS), k);
		for (int i = 0; i < k; i++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, first + i);
			TEST_ASSERT_EQ(wc[i].opcode, IBV_WC_RECV);
			TEST_ASSERT_EQ(wc[i].byte_len, msg_len(seq + i));
			TEST_ASSERT_EQ(wc[i].qp_num, qpn);
		}
		first += k;
		seq += k;
		n -= k;
	}
	return TEST_SUCCESS;
}

/*
 * @n SENDs from @a to @b, into receives @b posted as wr_ids @first..; once
 * @a has all its (successful) completions, @b's receive CQ holds all of
 * them: its responder completed each before it sent the ACK.
 */
static int
send_and_hold(struct h_side *a, struct h_side *b, uint64_t first, uint32_t seq, int n)
{
	struct ibv_wc wc[64];

	for (int i = 0; i < n; i++) {
		TEST_ASSERT_EQ(h_post_recv(b, (first + i) * 1024, 1024, first + i), 0);
		TEST_ASSERT_EQ(post1(a->qp, IBV_WR_SEND, BUF(a, 0), msg_len(seq + i), a->mr->lkey,
				     seq + i, 0, 0), 0);
	}
	TEST_ASSERT_EQ(h_poll(a->scq, wc, n, WC_MS), n);
	for (int i = 0; i < n; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, seq + i);
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* ibv_resize_cq */

static int
resize_held(bool ex)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1, .cqe = 16,
			       .wc_flags_ex = ex ? IBV_WC_STANDARD_FLAGS : 0 };
	struct ibv_device_attr da;
	struct h_side *a, *b;
	struct ibv_cq *cq;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	cq = b->rcq;
	TEST_ASSERT_EQ(cq->cqe, 16);
	TEST_ASSERT_EQ(ibv_query_device(b->ctx, &da), 0);
	/* out of range: EINVAL, nothing changes */
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 0), EINVAL);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, -1), EINVAL);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, da.max_cqe + 1), EINVAL);
	TEST_ASSERT_EQ(cq->cqe, 16);

	/* 12 held of 16 */
	rc = send_and_hold(a, b, 100, 0, 12);
	if (rc)
		return rc;
	/* shrinking below what it holds fails and leaves the CQ as it was */
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 11), EINVAL);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 1), EINVAL);
	TEST_ASSERT_EQ(cq->cqe, 16);
	/* to exactly what it holds, then grown */
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 12), 0);
	TEST_ASSERT_EQ(cq->cqe, 12);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 64), 0);
	TEST_ASSERT_EQ(cq->cqe, 64);
	/* 8 more arrive into the grown CQ: 20 held, more than it ever had room for before */
	rc = send_and_hold(a, b, 112, 12, 8);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 19), EINVAL);
	TEST_ASSERT_EQ(cq->cqe, 64);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 20), 0);
	TEST_ASSERT_EQ(cq->cqe, 20);
	/* every completion once, in order */
	rc = expect_recvs(cq, ex, 100, 0, 20, b->qp->qp_num);
	if (rc)
		return rc;
	ASSERT_QUIET(cq, QUIET_MS);
	/* empty: down to one entry, which takes one completion */
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 1), 0);
	TEST_ASSERT_EQ(cq->cqe, 1);
	rc = send_and_hold(a, b, 120, 20, 1);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 1), 0);	/* the same size, one held */
	rc = expect_recvs(cq, ex, 120, 20, 1, b->qp->qp_num);
	if (rc)
		return rc;
	ASSERT_QUIET(cq, 1);
	return TEST_SUCCESS;
}

/*
 * What was posted before ibv_resize_cq counts: 7 signaled UD SENDs (which
 * complete once sent, no peer needed), then at once a resize of their CQ
 * (8 entries) to 1 must fail with EINVAL, as the 7 completions are due
 * (rdma-core's test_cq.test_resize_cq); the CQ keeps its size, and the 7
 * arrive once, in order. 50 rounds: with an engine lcore the resize used to
 * overtake the sends now and then (pyverbs' test failed under ASan).
 */
static int
test_resize_cq_counts_what_was_posted(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_UD, .sq_sig_all = 1, .cqe = 8 };
	struct h_side *a, *b;
	struct ibv_ah *ah;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	ah = h_res_ah(a, b);
	TEST_ASSERT(ah != NULL, "AH");
	for (int round = 0; round < 50; round++) {
		struct ibv_wc wc[8];
		int got = 0;

		for (int i = 0; i < 7; i++) {
			struct ibv_sge g = { BUF(a, 0), 64, a->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)round * 10 + (uint64_t)i,
						  .sg_list = &g, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = b->qp->qp_num;
			wr.wr.ud.remote_qkey = H_QKEY;
			TEST_ASSERT_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
		}
		TEST_ASSERT(ibv_resize_cq(a->scq, 1) == EINVAL,
			    "round %d: shrinking to 1 below the 7 sends posted", round);
		TEST_ASSERT_EQ(a->scq->cqe, 8);
		for (uint64_t t0 = h_now_ms(); got < 7 && h_now_ms() - t0 < WC_MS;) {
			int n = ibv_poll_cq(a->scq, 8 - got, wc + got);

			TEST_ASSERT(n >= 0, "poll");
			got += n;
		}
		TEST_ASSERT_EQ(got, 7);
		for (int i = 0; i < 7; i++) {
			TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, (uint64_t)round * 10 + (uint64_t)i);
		}
	}
	return TEST_SUCCESS;
}

static int test_resize_cq_keeps_held_completions(void) { return resize_held(false); }
static int test_resize_cq_ex_keeps_held_completions(void) { return resize_held(true); }

/*
 * A stream of SENDs into @b, whose receive CQ is resized again and again
 * while completions arrive (from the engine lcore with --lcore): never
 * smaller than the receives outstanding, so it cannot overrun; every
 * completion arrives once, in order.
 */
#define ST_MSGS		3000
#define ST_WIN		24	/* receives (and sends) outstanding at most */

static int
resize_under_traffic(bool ex)
{
	static const int sizes[] = { ST_WIN, 64, ST_WIN + 1, 4096, 37, ST_WIN, 128, 25 };
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1, .cqe = ST_WIN,
			       .max_send_wr = ST_WIN, .max_recv_wr = ST_WIN,
			       .wc_flags_ex = ex ? IBV_WC_STANDARD_FLAGS : 0 };
	uint32_t posted = 0, sent = 0, got = 0, sdone = 0, resizes = 0;
	struct h_side *a, *b;
	struct ibv_wc wc[8];
	uint64_t t0 = h_now_ms();

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	while (got < ST_MSGS) {
		int n;

		TEST_ASSERT(h_now_ms() - t0 < 60000, "stalled at %u of %u completions", got, ST_MSGS);
		while (posted < ST_MSGS && posted - got < ST_WIN) {
			TEST_ASSERT_EQ(h_post_recv(b, (posted % ST_WIN) * 1024, 1024, posted), 0);
			posted++;
		}
		while (sent < posted && sent - sdone < ST_WIN) {
			TEST_ASSERT_EQ(post1(a->qp, IBV_WR_SEND, BUF(a, 0), msg_len(sent),
					     a->mr->lkey, sent, 0, 0), 0);
			sent++;
		}
		n = h_poll(a->scq, wc, 8, 0);
		for (int i = 0; i < n; i++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, sdone + i);
		}
		sdone += n;
		/* a size that holds every receive outstanding */
		TEST_ASSERT_EQ(ibv_resize_cq(b->rcq, sizes[resizes % 8]), 0);
		TEST_ASSERT_EQ(b->rcq->cqe, sizes[resizes % 8]);
		resizes++;
		n = poll_n(b->rcq, ex, wc, 1 + resizes % 8, 0);
		TEST_ASSERT(n >= 0, "poll");
		for (int i = 0; i < n; i++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, got + i);
			TEST_ASSERT_EQ(wc[i].byte_len, msg_len(got + i));
		}
		got += n;
	}
	TEST_ASSERT_EQ(h_poll(a->scq, wc, ST_MSGS - sdone, WC_MS), (int)(ST_MSGS - sdone));
	ASSERT_QUIET(b->rcq, QUIET_MS);
	printf("  %u completions across %u resizes\n", got, resizes);
	return TEST_SUCCESS;
}

static int test_resize_cq_under_traffic(void) { return resize_under_traffic(false); }
static int test_resize_cq_ex_under_traffic(void) { return resize_under_traffic(true); }

/* ------------------------------------------------------------------------- */
/* ibv_rereg_mr */

/* A remotely writable and readable MR of @len bytes on @pd, 0-filled. */
static struct ibv_mr *
mr_new(struct ibv_pd *pd, uint8_t **buf, size_t len, int access)
{
	*buf = h_res_add_mem(aligned_alloc(4096, len));
	if (*buf == NULL)
		return NULL;
	memset(*buf, 0, len);
	return h_res_add_mr(ibv_reg_mr(pd, *buf, len, access));
}

#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* A WRITE of @len bytes from @a's buffer to @raddr/@rkey: its completion status. */
static int
write_status(struct h_side *a, uint64_t raddr, uint32_t rkey, uint32_t len, uint64_t wr_id,
	     enum ibv_wc_status *st)
{
	struct ibv_wc wc;

	if (post1(a->qp, IBV_WR_RDMA_WRITE, BUF(a, 0), len, a->mr->lkey, wr_id, raddr, rkey))
		return -1;
	if (h_poll(a->scq, &wc, 1, WC_MS) != 1 || wc.wr_id != wr_id)
		return -1;
	*st = wc.status;
	return 0;
}

static int
test_rereg_translation(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct h_side *a, *b;
	uint8_t *old, *new, exp[4000];
	struct ibv_sge rg;
	struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &rg, .num_sge = 1 }, *rbad = NULL;
	enum ibv_wc_status st;
	uint32_t lkey, rkey;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	mr = mr_new(b->pd, &old, MR_LEN, RW);
	new = h_res_add_mem(aligned_alloc(4096, 2 * MR_LEN));
	TEST_ASSERT(mr != NULL && new != NULL, "MR");
	memset(new, 0, 2 * MR_LEN);
	lkey = mr->lkey;
	rkey = mr->rkey;
	h_pattern(a->buf, sizeof(exp), 1);
	TEST_ASSERT_EQ(write_status(a, (uintptr_t)old + 100, rkey, 4000, 1, &st), 0);
	TEST_ASSERT_EQ(st, IBV_WC_SUCCESS);
	ASSERT_BYTES(old + 100, a->buf, 4000);

	/* moved to a region twice as long */
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, new, 2 * MR_LEN,
				    0), 0);
	TEST_ASSERT_PTR_EQ(mr->addr, new);
	TEST_ASSERT_EQ(mr->length, 2 * MR_LEN);
	TEST_ASSERT_PTR_EQ(mr->pd, b->pd);
	TEST_ASSERT_EQ(mr->lkey, lkey);
	TEST_ASSERT_EQ(mr->rkey, rkey);
	memset(old, OLD_BYTE, MR_LEN);
	/* a WRITE lands in the new region, past where the old one ended */
	h_pattern(a->buf, sizeof(exp), 2);
	memcpy(exp, a->buf, sizeof(exp));
	TEST_ASSERT_EQ(write_status(a, (uintptr_t)new + MR_LEN + 10, rkey, 4000, 2, &st), 0);
	TEST_ASSERT_EQ(st, IBV_WC_SUCCESS);
	ASSERT_BYTES(new + MR_LEN + 10, exp, 4000);
	/* a READ comes from it */
	memset(a->buf + 8192, 0, 4000);
	TEST_ASSERT_EQ(post1(a->qp, IBV_WR_RDMA_READ, BUF(a, 8192), 4000, a->mr->lkey, 3,
			     (uintptr_t)new + MR_LEN + 10, rkey), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 3);
	ASSERT_BYTES(a->buf + 8192, exp, 4000);
	/* the local key names the new region: a receive into it */
	rg = (struct ibv_sge){ (uintptr_t)new + 3, 1000, lkey };
	TEST_ASSERT_EQ(ibv_post_recv(b->qp, &rwr, &rbad), 0);
	TEST_ASSERT_EQ(post1(a->qp, IBV_WR_SEND, BUF(a, 0), 1000, a->mr->lkey, 5, 0, 0), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 4);
	ASSERT_BYTES(new + 3, exp, 1000);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	/* the old range under the same rkey: a remote access error, nothing written */
	TEST_ASSERT_EQ(write_status(a, (uintptr_t)old + 100, rkey, 100, 6, &st), 0);
	TEST_ASSERT_EQ(st, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
	ASSERT_FILL(old, OLD_BYTE, MR_LEN);
	return TEST_SUCCESS;
}

/*
 * From droce0, through a fresh RC pair whose responder QP is on @pd: a
 * READ of 2000 bytes of @mr at @at with status @rst, then, if it
 * succeeded, a WRITE there with status @wst (a failed one writes nothing).
 */
static int
access_from_pd(struct ibv_context *c0, struct ibv_pd *pd, struct ibv_mr *mr, uint8_t *at,
	       enum ibv_wc_status rst, enum ibv_wc_status wst)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct h_qp_opts ob = o;
	struct h_side *a, *b;
	struct ibv_wc wc;
	uint8_t exp[2000];

	ob.pd = pd;
	a = h_res_side(c0, &o);
	b = h_res_side(pd->context, &ob);
	TEST_ASSERT(a != NULL && b != NULL, "sides");
	TEST_ASSERT(h_connect(a, b, &o) == 0 && h_connect(b, a, &o) == 0, "connect");
	memcpy(exp, at, sizeof(exp));
	h_pattern(a->buf, sizeof(exp), 9);
	TEST_ASSERT_EQ(post1(a->qp, IBV_WR_RDMA_READ, BUF(a, 4096), 2000, a->mr->lkey, 1,
			     (uintptr_t)at, mr->rkey), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, rst);
	if (rst != IBV_WC_SUCCESS) {
		TEST_ASSERT_EQ(h_qp_state(a->qp), IBV_QPS_ERR);
		return TEST_SUCCESS;
	}
	ASSERT_BYTES(a->buf + 4096, exp, 2000);
	TEST_ASSERT_EQ(post1(a->qp, IBV_WR_RDMA_WRITE, BUF(a, 0), 2000, a->mr->lkey, 2,
			     (uintptr_t)at, mr->rkey), 0);
	POLL1(a->scq, wc);
	ASSERT_STATUS(wc, wst);
	ASSERT_BYTES(at, wst == IBV_WC_SUCCESS ? a->buf : exp, 2000);
	return TEST_SUCCESS;
}

static int
test_rereg_pd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct ibv_context *c0 = h_res_open(0), *c1 = h_res_open(1);
	struct h_qp_opts ob = o;
	struct ibv_pd *pd1, *pd2;
	struct h_side *a, *b;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint8_t *buf;
	uint32_t key;
	int rc;

	TEST_ASSERT(c0 != NULL && c1 != NULL, "open");
	pd1 = h_res_add_pd(ibv_alloc_pd(c1));
	pd2 = h_res_add_pd(ibv_alloc_pd(c1));
	TEST_ASSERT(pd1 != NULL && pd2 != NULL, "pd");
	mr = mr_new(pd1, &buf, MR_LEN, RW);
	TEST_ASSERT(mr != NULL, "MR");
	key = mr->rkey;
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	TEST_ASSERT_PTR_EQ(mr->pd, pd2);
	TEST_ASSERT_PTR_EQ(mr->addr, buf);
	TEST_ASSERT_EQ(mr->length, MR_LEN);
	TEST_ASSERT_EQ(mr->lkey, key);
	TEST_ASSERT_EQ(mr->rkey, key);
	h_pattern(buf, MR_LEN, 7);
	/* a QP of the old PD: its local key is refused (local protection error) ... */
	ob.pd = pd1;
	a = h_res_side(c0, &o);
	b = h_res_side(c1, &ob);
	TEST_ASSERT(a != NULL && b != NULL, "sides");
	TEST_ASSERT(h_connect(a, b, &o) == 0 && h_connect(b, a, &o) == 0, "connect");
	TEST_ASSERT_EQ(h_post_recv(a, 0, 4096, 1), 0);
	TEST_ASSERT_EQ(post1(b->qp, IBV_WR_SEND, (uintptr_t)buf, 100, mr->lkey, 2, 0, 0), 0);
	POLL1(b->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_LOC_PROT_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	/* ... and its peer's accesses through the rkey (remote access error) */
	rc = access_from_pd(c0, pd1, mr, buf, IBV_WC_REM_ACCESS_ERR, 0);
	if (rc)
		return rc;
	/* a QP of the new PD reads and writes it */
	rc = access_from_pd(c0, pd2, mr, buf + 512, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
	if (rc)
		return rc;
	/* and back to the first PD */
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd1, NULL, 0, 0), 0);
	TEST_ASSERT_PTR_EQ(mr->pd, pd1);
	return access_from_pd(c0, pd1, mr, buf + 8192, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
}

static int
test_rereg_access(void)
{
	struct ibv_context *c0 = h_res_open(0), *c1 = h_res_open(1);
	struct ibv_pd *pd;
	uint8_t *buf;
	struct ibv_mr *mr;
	uint32_t key;
	int rc;

	TEST_ASSERT(c0 != NULL && c1 != NULL, "open");
	pd = h_res_add_pd(ibv_alloc_pd(c1));
	TEST_ASSERT(pd != NULL, "pd");
	mr = mr_new(pd, &buf, MR_LEN, RW);
	TEST_ASSERT(mr != NULL, "MR");
	key = mr->rkey;
	h_pattern(buf, MR_LEN, 4);
	rc = access_from_pd(c0, pd, mr, buf, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
	if (rc)
		return rc;
	/* remote write dropped: READs still served, a WRITE refused and nothing written */
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	TEST_ASSERT_EQ(mr->rkey, key);
	TEST_ASSERT_EQ(mr->lkey, key);
	rc = access_from_pd(c0, pd, mr, buf + 4096, IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR);
	if (rc)
		return rc;
	/* remote read dropped too: a READ refused */
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE), 0);
	rc = access_from_pd(c0, pd, mr, buf + 8192, IBV_WC_REM_ACCESS_ERR, 0);
	if (rc)
		return rc;
	/* both given back */
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW), 0);
	return access_from_pd(c0, pd, mr, buf + 12288, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
}

/* All three at once: a new region, on another PD, read-only from afar. */
static int
test_rereg_translation_pd_access(void)
{
	struct ibv_context *c0 = h_res_open(0), *c1 = h_res_open(1);
	struct ibv_pd *pd, *pd2;
	uint8_t *buf, *buf2;
	struct ibv_mr *mr;
	uint32_t key;
	int rc;

	TEST_ASSERT(c0 != NULL && c1 != NULL, "open");
	pd = h_res_add_pd(ibv_alloc_pd(c1));
	pd2 = h_res_add_pd(ibv_alloc_pd(c1));
	buf2 = h_res_add_mem(aligned_alloc(4096, MR_LEN));
	TEST_ASSERT(pd != NULL && pd2 != NULL && buf2 != NULL, "pd/buffer");
	mr = mr_new(pd, &buf, MR_LEN, RW);
	TEST_ASSERT(mr != NULL, "MR");
	key = mr->lkey;
	h_pattern(buf2, MR_LEN, 5);
	memset(buf, OLD_BYTE, MR_LEN);
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
				    IBV_REREG_MR_CHANGE_ACCESS, pd2, buf2, MR_LEN,
				    IBV_ACCESS_REMOTE_READ), 0);
	TEST_ASSERT_PTR_EQ(mr->pd, pd2);
	TEST_ASSERT_PTR_EQ(mr->addr, buf2);
	TEST_ASSERT_EQ(mr->lkey, key);
	TEST_ASSERT_EQ(mr->rkey, key);
	rc = access_from_pd(c0, pd2, mr, buf2 + 100, IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR);
	if (rc)
		return rc;
	/* the old PD: refused */
	rc = access_from_pd(c0, pd, mr, buf2 + 100, IBV_WC_REM_ACCESS_ERR, 0);
	if (rc)
		return rc;
	ASSERT_FILL(buf, OLD_BYTE, MR_LEN);
	return TEST_SUCCESS;
}

/*
 * WRITEs and READs stream into an MR while it is re-registered again and
 * again to what it already is (each kind of change and all three): the
 * engine reads a whole new copy each time (with --lcore, concurrently), and
 * every WR succeeds with its bytes where they belong.
 */
#define RT_WRS		2000
#define RT_WIN		16

static int
test_rereg_under_traffic(void)
{
	static const int kinds[] = {
		IBV_REREG_MR_CHANGE_ACCESS, IBV_REREG_MR_CHANGE_PD,
		IBV_REREG_MR_CHANGE_TRANSLATION,
		IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		IBV_REREG_MR_CHANGE_ACCESS,
	};
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1, .max_send_wr = RT_WIN,
			       .max_rd_atomic = 4, .max_dest_rd_atomic = 4 };
	uint32_t sent = 0, done = 0, rereg = 0, key;
	struct h_side *a, *b;
	struct ibv_mr *mr;
	struct ibv_wc wc[RT_WIN];
	uint8_t *buf;
	uint64_t t0 = h_now_ms();

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	mr = mr_new(b->pd, &buf, MR_LEN, RW);
	TEST_ASSERT(mr != NULL, "MR");
	key = mr->rkey;
	/* WR i: a WRITE of slot i % 16 (1 KiB each), or a READ of the slot written before */
	h_pattern(a->buf, 16 * 1024, 11);
	while (done < RT_WRS) {
		int n, k = kinds[rereg % 4];

		TEST_ASSERT(h_now_ms() - t0 < 60000, "stalled at %u of %u WRs", done, RT_WRS);
		while (sent < RT_WRS && sent - done < RT_WIN) {
			uint32_t slot = sent % 16;
			bool rd = sent % 3 == 2;

			TEST_ASSERT_EQ(post1(a->qp, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
					     BUF(a, rd ? 65536 + slot * 1024 : slot * 1024),
					     rd ? 1024 : msg_len(sent), a->mr->lkey, sent,
					     (uintptr_t)buf + slot * 1024, key), 0);
			sent++;
		}
		TEST_ASSERT_EQ(ibv_rereg_mr(mr, k, b->pd, buf, MR_LEN,
					    k & IBV_REREG_MR_CHANGE_ACCESS ? RW : 0), 0);
		rereg++;
		n = h_poll(a->scq, wc, RT_WIN, 0);
		TEST_ASSERT(n >= 0, "poll");
		for (int i = 0; i < n; i++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, done + i);
		}
		done += n;
	}
	TEST_ASSERT_EQ(mr->rkey, key);
	TEST_ASSERT_EQ(mr->lkey, key);
	/*
	 * Every WRITE of a slot copies a prefix of the same source bytes: the
	 * slot holds the last one's, and its last READ brought back at least
	 * what the WRITE before that READ had put there.
	 */
	for (uint32_t slot = 0; slot < 16; slot++) {
		uint32_t w = RT_WRS - 1 - (RT_WRS - 1 - slot) % 16, r = w;

		while (w % 3 == 2)
			w -= 16;
		ASSERT_BYTES(buf + slot * 1024, a->buf + slot * 1024, msg_len(w));
		while (r % 3 != 2)
			r -= 16;
		for (w = r - 16; w % 3 == 2; w -= 16)
			;
		ASSERT_BYTES(a->buf + 65536 + slot * 1024, a->buf + slot * 1024, msg_len(w));
	}
	ASSERT_QUIET(a->scq, 1);
	printf("  %u WRs across %u re-registrations\n", done, rereg);
	return TEST_SUCCESS;
}

/* A failed rereg: its code, errno EINVAL, and the MR as it was, still working. */
#define REREG_FAILS(mr, code, fl, p, ad, ln, acc) do { \
	errno = 0; \
	TEST_ASSERT_EQ(ibv_rereg_mr((mr), (fl), (p), (ad), (ln), (acc)), (code)); \
	TEST_ASSERT_EQ(errno, EINVAL); \
	TEST_ASSERT_PTR_EQ((mr)->addr, buf); \
	TEST_ASSERT_EQ((mr)->length, MR_LEN); \
	TEST_ASSERT_PTR_EQ((mr)->pd, pd1); \
	TEST_ASSERT_EQ((mr)->lkey, key); \
	TEST_ASSERT_EQ((mr)->rkey, key); \
} while (0)

static int
test_rereg_bad_args(void)
{
	struct ibv_context *c0 = h_res_open(0), *c1 = h_res_open(1), *c1b = h_res_open(1);
	struct ibv_device_attr da;
	struct ibv_pd *pd1, *other;
	uint8_t *buf, other_buf[64];
	struct ibv_mr *mr;
	uint32_t key;

	TEST_ASSERT(c0 != NULL && c1 != NULL && c1b != NULL, "open");
	TEST_ASSERT_EQ(ibv_query_device(c1, &da), 0);
	pd1 = h_res_add_pd(ibv_alloc_pd(c1));
	other = h_res_add_pd(ibv_alloc_pd(c1b));	/* another context's */
	TEST_ASSERT(pd1 != NULL && other != NULL, "pd");
	mr = mr_new(pd1, &buf, MR_LEN, RW);
	TEST_ASSERT(mr != NULL, "MR");
	key = mr->rkey;
	h_pattern(buf, MR_LEN, 6);

	/* libibverbs' own checks: IBV_REREG_MR_ERR_INPUT */
	REREG_FAILS(mr, IBV_REREG_MR_ERR_INPUT, IBV_REREG_MR_FLAGS_SUPPORTED << 1, pd1, NULL, 0, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_INPUT, IBV_REREG_MR_CHANGE_PD | 0x100, pd1, NULL, 0, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_INPUT, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 64, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_INPUT, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other_buf,
		    0, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_INPUT, IBV_REREG_MR_CHANGE_PD, pd1, NULL, 0,
		    IBV_ACCESS_LOCAL_WRITE);
	/* the provider's: IBV_REREG_MR_ERR_CMD, and the MR unchanged */
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, 0, NULL, NULL, 0, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0);
	/* IBA 10.6.3.1: remote write needs local write */
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
		    IBV_ACCESS_REMOTE_WRITE);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 1 << 14);
	/* what droce lacks (zero-based MRs): EOPNOTSUPP, as ibv_reg_mr (MW_BIND: test_mw) */
	errno = 0;
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED), IBV_REREG_MR_ERR_CMD);
	TEST_ASSERT_EQ(errno, EOPNOTSUPP);
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other_buf,
		    (size_t)da.max_mr_size + 1, 0);
	/* past the end of the address space */
	REREG_FAILS(mr, IBV_REREG_MR_ERR_CMD, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
		    (void *)(UINTPTR_MAX - 100), 4096, 0);
	/* none of them changed a thing: the MR works as registered */
	return access_from_pd(c0, pd1, mr, buf + 256, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
}

/* ------------------------------------------------------------------------- */

static const struct droce_test_case cases[] = {
	TEST_CASE(test_resize_cq_keeps_held_completions),
	TEST_CASE(test_resize_cq_counts_what_was_posted),
	TEST_CASE(test_resize_cq_ex_keeps_held_completions),
	TEST_CASE(test_resize_cq_under_traffic),
	TEST_CASE(test_resize_cq_ex_under_traffic),
	TEST_CASE(test_rereg_translation),
	TEST_CASE(test_rereg_pd),
	TEST_CASE(test_rereg_access),
	TEST_CASE(test_rereg_translation_pd_access),
	TEST_CASE(test_rereg_under_traffic),
	TEST_CASE(test_rereg_bad_args),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_resize", cases, NULL, h_res_release);
}
