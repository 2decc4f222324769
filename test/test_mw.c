/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows over RC, between droce0 and droce1 (harness.h): type 1
 * (ibv_bind_mw) and type 2B (BIND_MW WRs, ibv_wr_bind_mw) windows on b's
 * memory, RDMA WRITE, READ and atomics from a through their R_Keys, every
 * check IBA makes on a bind and on an access through a window, LOCAL_INV
 * and SEND_WITH_INV, zero-based type 2 windows, and the objects' lifetimes
 * (ibv_dealloc_mw, ibv_dereg_mr of a bound MR, ibv_dealloc_pd of a PD with
 * windows, deregistrations and deallocations racing the engine's binds).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

static struct h_side a, b;
static const struct h_qp_opts rc = { .type = IBV_QPT_RC, .max_send_wr = 64, .cqe = 256,
				     .mr_access = IBV_ACCESS_MW_BIND };

#define WIN_OFF		4096		/* the windows span b.buf[WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN		8192
#define RW_ALL		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static int
setup(void)
{
	return h_pair(&a, &b, &rc);
}

static void
teardown(void)
{
	h_pair_destroy(&a, &b);
}

static uint64_t
win_addr(size_t off)
{
	return (uintptr_t)b.buf + WIN_OFF + off;
}

/* Type 1: ibv_bind_mw on @s's QP, and its completion's status. */
static int
bind1(struct h_side *s, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr, uint64_t len,
      unsigned int access, enum ibv_wc_status want)
{
	struct ibv_mw_bind mb = { .wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
				  .bind_info = { .mr = mr, .addr = addr, .length = len,
						 .mw_access_flags = access } };
	uint32_t old = mw->rkey;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(ibv_bind_mw(s->qp, mw, &mb), 0);
	/* man ibv_bind_mw: the next key, at once; the index bits stay */
	TEST_ASSERT_EQ(mw->rkey, ibv_inc_rkey(old));
	TEST_ASSERT(mw->rkey != old, "rkey unchanged");
	CHECK(one_wc(s->scq, &wc, 0xb1, want, IBV_WC_BIND_MW));
	return TEST_SUCCESS;
}

/* A BIND_MW WR (type 2) giving the window @rkey, and its completion's status. */
static int
bind2(struct h_side *s, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *mr, uint64_t addr,
      uint64_t len, unsigned int access, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr, .length = len,
							   .mw_access_flags = access };
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	CHECK(one_wc(s->scq, &wc, 0xb2, want, IBV_WC_BIND_MW));
	return TEST_SUCCESS;
}

static int
local_inv(struct h_side *s, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = 0x11, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.invalidate_rkey = rkey;
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	CHECK(one_wc(s->scq, &wc, 0x11, want, IBV_WC_LOCAL_INV));
	return TEST_SUCCESS;
}

/* An RDMA WRITE/READ or atomic from @s (its buffer at @off), and its completion's status. */
static int
rdma(struct h_side *s, enum ibv_wr_opcode op, size_t off, uint32_t len, uint64_t raddr,
     uint32_t rkey, uint64_t cmp_add, enum ibv_wc_status want)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	enum ibv_wc_opcode wop = op == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE :
		op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
		op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD : IBV_WC_COMP_SWAP;
	struct ibv_wc wc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = 0x5151;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	CHECK(one_wc(s->scq, &wc, 0x77, want, wop));
	return TEST_SUCCESS;
}

/*
 * WRITE, READ and FETCH_ADD from a through @rkey, a window on
 * b.buf[WIN_OFF, WIN_OFF + WIN_LEN): the bytes land, come back, and the
 * atomic applies once (the harness MR has no REMOTE_ATOMIC: the window's
 * rights are its own). @base: the address a names the window's start by.
 */
static int
use_window_at(uint32_t rkey, uint8_t seed, uint64_t base)
{
	uint64_t v;

	for (int i = 0; i < WIN_LEN; i++)
		a.buf[i] = (uint8_t)(i * 13 + seed);
	memset(b.buf, 0, WIN_OFF + WIN_LEN + 64);
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, WIN_LEN, base, rkey, 0, IBV_WC_SUCCESS));
	TEST_ASSERT(memcmp(b.buf + WIN_OFF, a.buf, WIN_LEN) == 0, "WRITE: bytes differ");
	TEST_ASSERT(b.buf[WIN_OFF - 1] == 0 && b.buf[WIN_OFF + WIN_LEN] == 0, "WRITE spilled");
	memset(a.buf + 65536, 0xee, WIN_LEN);
	CHECK(rdma(&a, IBV_WR_RDMA_READ, 65536, WIN_LEN - 100, base + 100, rkey, 0,
		   IBV_WC_SUCCESS));
	TEST_ASSERT(memcmp(a.buf + 65536, b.buf + WIN_OFF + 100, WIN_LEN - 100) == 0,
		    "READ: bytes differ");
	v = 40;
	memcpy(b.buf + WIN_OFF + WIN_LEN - 8, &v, 8);
	CHECK(rdma(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, 131072, 8, base + WIN_LEN - 8, rkey, 2,
		   IBV_WC_SUCCESS));
	memcpy(&v, a.buf + 131072, 8);
	TEST_ASSERT_EQ(v, 40);
	memcpy(&v, b.buf + WIN_OFF + WIN_LEN - 8, 8);
	TEST_ASSERT_EQ(v, 42);
	return TEST_SUCCESS;
}

/* use_window_at for a window addressed as b's memory (not zero based) */
static int
use_window(uint32_t rkey, uint8_t seed)
{
	return use_window_at(rkey, seed, win_addr(0));
}

/*
 * A remote access a makes that the responder refuses: REM_ACCESS_ERR on a,
 * both QPs in ERR, b's memory untouched.
 */
static int
violation(enum ibv_wr_opcode op, uint64_t raddr, uint32_t len, uint32_t rkey)
{
	memset(b.buf, 0x3c, WIN_OFF * 2 + WIN_LEN);
	memset(a.buf, 0xa5, 65536);
	CHECK(rdma(&a, op, 0, len, raddr, rkey, 1, IBV_WC_REM_ACCESS_ERR));
	for (int i = 0; i < WIN_OFF * 2 + WIN_LEN; i++)
		TEST_ASSERT(b.buf[i] == 0x3c, "b.buf[%d] written", i);
	TEST_ASSERT_EQ(h_qp_state_wait(a.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	return TEST_SUCCESS;
}

static struct ibv_mw *
mw_alloc(struct ibv_pd *pd, enum ibv_mw_type t)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, t);

	if (mw == NULL)
		fprintf(stderr, "ibv_alloc_mw(%d): %s\n", t, strerror(errno));
	return mw;
}

/* A type 2 R_Key: the window's index bits and the consumer's @key. */
static uint32_t
key2(const struct ibv_mw *mw, uint8_t key)
{
	return (mw->rkey & ~0xffU) | key;
}

/* --- binds and accesses that work --- */

static int
test_type1_bind_then_write_read_atomic(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);
	uint32_t first;

	TEST_ASSERT(mw != NULL, "alloc");
	TEST_ASSERT_EQ(mw->type, IBV_MW_TYPE_1);
	TEST_ASSERT_PTR_EQ(mw->pd, b.pd);
	first = mw->rkey;
	TEST_ASSERT(first != b.mr->rkey, "a window's R_Key is no MR's");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(use_window(mw->rkey, 1));
	/* bound again, elsewhere: a new key, which works there */
	CHECK(bind1(&b, mw, b.mr, (uintptr_t)b.buf, WIN_OFF + WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	TEST_ASSERT((mw->rkey & ~0xffU) == (first & ~0xffU), "index bits changed");
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf, mw->rkey, 0, IBV_WC_SUCCESS));
	/* the MR's own key is untouched by the windows on it */
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf, b.mr->rkey, 0, IBV_WC_SUCCESS));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_type1_old_rkey_after_rebind_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);
	uint32_t old;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	old = mw->rkey;
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(0), 64, old));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_type2_bind_then_write_read_atomic(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	TEST_ASSERT_EQ(mw->type, IBV_MW_TYPE_2);
	CHECK(bind2(&b, mw, key2(mw, 0x5a), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(use_window(key2(mw, 0x5a), 2));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* The consumer's key is the R_Key: the window's key at allocation no longer names it. */
static int
test_type2_other_key_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	uint32_t k;

	TEST_ASSERT(mw != NULL, "alloc");
	k = key2(mw, (uint8_t)(mw->rkey + 7));
	CHECK(bind2(&b, mw, k, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(0), 64, ibv_inc_rkey(k)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* An unbound type 2 window, just allocated: its R_Key names nothing yet. */
static int
test_type2_unbound_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(violation(IBV_WR_RDMA_READ, win_addr(0), 64, mw->rkey));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* --- accesses through a window it does not allow: REM_ACCESS_ERR --- */

static int
test_write_past_window_end_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 1), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	/* the MR goes on past the window: only the window's bounds refuse it */
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(WIN_LEN - 8), 16, key2(mw, 1)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_read_before_window_start_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_READ, win_addr(0) - 1, 16, mw->rkey));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_write_through_read_only_window_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 2), b.mr, win_addr(0), WIN_LEN, IBV_ACCESS_REMOTE_READ,
		    IBV_WC_SUCCESS));
	/* what it grants works */
	CHECK(rdma(&a, IBV_WR_RDMA_READ, 0, 64, win_addr(0), key2(mw, 2), 0, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(0), 64, key2(mw, 2)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_atomic_through_window_without_atomic_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN,
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_ATOMIC_FETCH_AND_ADD, win_addr(0), 8, mw->rkey));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/*
 * c (droce0) and d (droce1) on b's PD: a second QP pair. A type 2 window
 * bound to b's QP refuses d's; a type 1 window serves any QP of its PD,
 * and none of another PD.
 */
static int
other_pair(struct h_side *c, struct h_side *d, struct ibv_pd *dpd)
{
	struct h_qp_opts o = rc;

	o.pd = dpd;
	TEST_ASSERT_EQ(h_side_create(d, b.ctx, &o), 0);
	o.pd = a.pd;
	TEST_ASSERT_EQ(h_side_create(c, a.ctx, &o), 0);
	TEST_ASSERT_EQ(h_connect(c, d, &o), 0);
	TEST_ASSERT_EQ(h_connect(d, c, &o), 0);
	return TEST_SUCCESS;
}

static int
test_type2_window_from_another_qp_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct h_side c, d;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(other_pair(&c, &d, b.pd));
	CHECK(bind2(&b, mw, key2(mw, 3), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	/* through the QP it is bound to: fine */
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), key2(mw, 3), 0, IBV_WC_SUCCESS));
	memset(b.buf + WIN_OFF, 0x3c, 64);
	CHECK(rdma(&c, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), key2(mw, 3), 0,
		   IBV_WC_REM_ACCESS_ERR));
	for (int i = 0; i < 64; i++)
		TEST_ASSERT(b.buf[WIN_OFF + i] == 0x3c, "written through another QP");
	TEST_ASSERT_EQ(h_qp_state_wait(d.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	/* b's QP is not concerned */
	CHECK(rdma(&a, IBV_WR_RDMA_READ, 0, 64, win_addr(0), key2(mw, 3), 0, IBV_WC_SUCCESS));
	h_side_destroy(&c);
	h_side_destroy(&d);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* A QP made later under the QPN of the window's QP (destroyed) is not that QP. */
static int
test_type2_window_of_destroyed_qp_not_for_its_qpn_successor(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct h_side c, d, e, f;
	uint32_t qpn;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(other_pair(&c, &d, b.pd));
	CHECK(bind2(&d, mw, key2(mw, 18), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(rdma(&c, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), key2(mw, 18), 0, IBV_WC_SUCCESS));
	qpn = d.qp->qp_num;
	h_side_destroy(&c);
	h_side_destroy(&d);
	CHECK(other_pair(&e, &f, b.pd));
	TEST_ASSERT_EQ(f.qp->qp_num, qpn);
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), key2(mw, 18), 0,
		   IBV_WC_REM_ACCESS_ERR));
	h_side_destroy(&e);
	h_side_destroy(&f);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_type1_window_any_qp_of_its_pd_none_of_another(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);
	struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	struct h_side c, d, e, f;

	TEST_ASSERT(mw != NULL && pd2 != NULL, "alloc");
	CHECK(other_pair(&c, &d, b.pd));
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(rdma(&c, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), mw->rkey, 0, IBV_WC_SUCCESS));
	CHECK(other_pair(&e, &f, pd2));
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), mw->rkey, 0, IBV_WC_REM_ACCESS_ERR));
	h_side_destroy(&c);
	h_side_destroy(&d);
	h_side_destroy(&e);
	h_side_destroy(&f);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);
	return TEST_SUCCESS;
}

/* --- invalidation --- */

static int
post_recv_b(size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)b.buf + off, len, b.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0x5ec, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(b.qp, &wr, &bad);
}

static int
send_inv(uint32_t len, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_sge sge = { (uintptr_t)a.buf, len, a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x1e, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.invalidate_rkey = rkey;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	CHECK(one_wc(a.scq, &wc, 0x1e, want, IBV_WC_SEND));
	return TEST_SUCCESS;
}

/* One message of one packet and one of three (SEND_LAST_WITH_INVALIDATE). */
static int
test_send_with_inv_invalidates_then_access_fails(void)
{
	static const uint32_t lens[] = { 100, 2 * 1024 + 300 };
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;

	TEST_ASSERT(mw != NULL, "alloc");
	for (unsigned int i = 0; i < 2; i++) {
		uint32_t k = key2(mw, (uint8_t)(0x20 + i));

		CHECK(bind2(&b, mw, k, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
		CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), k, 0, IBV_WC_SUCCESS));
		for (uint32_t j = 0; j < lens[i]; j++)
			a.buf[j] = (uint8_t)(j + i);
		TEST_ASSERT_EQ(post_recv_b(65536, 8192), 0);
		CHECK(send_inv(lens[i], k, IBV_WC_SUCCESS));
		CHECK(one_wc(b.rcq, &wc, 0x5ec, IBV_WC_SUCCESS, IBV_WC_RECV));
		TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_INV, "wc_flags %#x", wc.wc_flags);
		TEST_ASSERT(!(wc.wc_flags & IBV_WC_WITH_IMM), "wc_flags %#x", wc.wc_flags);
		TEST_ASSERT_EQ(wc.invalidated_rkey, k);
		TEST_ASSERT_EQ(wc.byte_len, lens[i]);
		TEST_ASSERT(memcmp(b.buf + 65536, a.buf, lens[i]) == 0, "SEND bytes differ");
	}
	/* invalidated: free again, and its last R_Key names nothing */
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(0), 64, key2(mw, 0x21)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* An R_Key no window bound to the QP has: NAK, REM_INV_REQ_ERR on both sides. */
static int
test_send_with_inv_of_mr_key_rem_inv_req_err(void)
{
	struct ibv_wc wc;

	TEST_ASSERT_EQ(post_recv_b(65536, 8192), 0);
	CHECK(send_inv(64, b.mr->rkey, IBV_WC_REM_INV_REQ_ERR));
	CHECK(one_wc(b.rcq, &wc, 0x5ec, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV));
	TEST_ASSERT_EQ(h_qp_state_wait(a.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	return TEST_SUCCESS;
}

/* IBA 2B: a SEND_WITH_INV on another QP than the window's fails and leaves it bound. */
static int
test_send_with_inv_from_another_qp_fails_window_stays(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 0x1e, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 0x5ec, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct h_side c, d;
	struct ibv_wc wc;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(other_pair(&c, &d, b.pd));
	CHECK(bind2(&b, mw, key2(mw, 4), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	sge = (struct ibv_sge){ (uintptr_t)d.buf, 64, d.mr->lkey };
	TEST_ASSERT_EQ(ibv_post_recv(d.qp, &rwr, &rbad), 0);
	sge = (struct ibv_sge){ (uintptr_t)c.buf, 64, c.mr->lkey };
	wr.invalidate_rkey = key2(mw, 4);
	TEST_ASSERT_EQ(ibv_post_send(c.qp, &wr, &bad), 0);
	CHECK(one_wc(c.scq, &wc, 0x1e, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND));
	CHECK(one_wc(d.rcq, &wc, 0x5ec, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV));
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), key2(mw, 4), 0, IBV_WC_SUCCESS));
	h_side_destroy(&c);
	h_side_destroy(&d);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_local_inv_then_rebind_then_access_fails(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 5), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(local_inv(&b, key2(mw, 5), IBV_WC_SUCCESS));
	/* free again: it binds anew, under a new key */
	CHECK(bind2(&b, mw, key2(mw, 6), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(use_window(key2(mw, 6), 6));
	CHECK(local_inv(&b, key2(mw, 6), IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_READ, win_addr(0), 64, key2(mw, 6)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* o10-37.2.26: a type 1 window is never invalidated; as rxe, LOC_QP_OP_ERR and ERR */
static int
test_local_inv_of_type1_window_loc_qp_op_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(local_inv(&b, mw->rkey, IBV_WC_LOC_QP_OP_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_local_inv_of_unbound_or_mr_key_loc_qp_op_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(local_inv(&b, mw->rkey, IBV_WC_LOC_QP_OP_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	/* a's QP: an MR's key (droce has no fast-registration MRs to invalidate) */
	CHECK(local_inv(&a, a.mr->rkey, IBV_WC_LOC_QP_OP_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(a.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	/* what follows is flushed */
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 8, 9, IBV_SEND_SIGNALED), 0);
	CHECK(one_wc(a.scq, &wc, 9, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* --- binds IBA refuses: IBV_WC_MW_BIND_ERR, the QP in ERR --- */

static int
test_bind_past_mr_end_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 7), b.mr, (uintptr_t)b.buf + b.buf_len - 4096, 4097, RW_ALL,
		    IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	/* the WRs after it are flushed */
	TEST_ASSERT_EQ(h_post_send(&b, IBV_WR_SEND, 0, 8, 8, IBV_SEND_SIGNALED), 0);
	CHECK(one_wc(b.scq, &wc, 8, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static int
test_bind_before_mr_start_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, (uintptr_t)b.buf - 1, 64, RW_ALL, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* C10-73 */
static int
test_bind_on_mr_without_mw_bind_mw_bind_err(void)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, b.buf_len,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mr != NULL && mw != NULL, "alloc");
	CHECK(bind1(&b, mw, mr, win_addr(0), WIN_LEN, IBV_ACCESS_REMOTE_READ, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return TEST_SUCCESS;
}

/* C10-74: remote write or atomic through a window needs local write on the MR */
static int
writable_on_read_only_mr(unsigned int access)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, b.buf_len,
				       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mr != NULL && mw != NULL, "alloc");
	/* read-only is fine */
	CHECK(bind2(&b, mw, key2(mw, 8), mr, win_addr(0), WIN_LEN, IBV_ACCESS_REMOTE_READ,
		    IBV_WC_SUCCESS));
	CHECK(local_inv(&b, key2(mw, 8), IBV_WC_SUCCESS));
	CHECK(bind2(&b, mw, key2(mw, 9), mr, win_addr(0), WIN_LEN, access, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return TEST_SUCCESS;
}

static int
test_bind_remote_write_on_mr_without_local_write_mw_bind_err(void)
{
	return writable_on_read_only_mr(IBV_ACCESS_REMOTE_WRITE);
}

static int
test_bind_remote_atomic_on_mr_without_local_write_mw_bind_err(void)
{
	return writable_on_read_only_mr(IBV_ACCESS_REMOTE_ATOMIC);
}

/* Type 1: a zero-length bind unbinds (a new key, nothing reachable by either). */
static int
test_type1_zero_length_bind_unbinds(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);
	uint32_t bound;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	bound = mw->rkey;
	CHECK(rdma(&a, IBV_WR_RDMA_READ, 0, 64, win_addr(0), bound, 0, IBV_WC_SUCCESS));
	CHECK(bind1(&b, mw, NULL, 0, 0, 0, IBV_WC_SUCCESS));
	CHECK(rdma(&a, IBV_WR_RDMA_READ, 0, 64, win_addr(0), mw->rkey, 0, IBV_WC_REM_ACCESS_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* o10-37.2.40: a type 2 window cannot be "unbound" by binding: MW_BIND_ERR */
static int
test_type2_zero_length_bind_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 10), b.mr, win_addr(0), 0, RW_ALL, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* o10-37.2.30: a bound type 2 window binds again only once invalidated */
static int
test_type2_bind_while_bound_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 11), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(bind2(&b, mw, key2(mw, 12), b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* Only the low 8 bits of a type 2 R_Key are the consumer's */
static int
test_type2_bind_changing_index_bits_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 13) ^ 0x100, b.mr, win_addr(0), WIN_LEN, RW_ALL,
		    IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* C10-72: a type 2 window binds only on a QP of its PD */
static int
test_type2_bind_on_qp_of_another_pd_mw_bind_err(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	struct ibv_mr *mr2 = pd2 ? ibv_reg_mr(pd2, b.buf, b.buf_len,
					      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) : NULL;
	struct ibv_mw *mw = pd2 ? mw_alloc(pd2, IBV_MW_TYPE_2) : NULL;

	TEST_ASSERT(mw != NULL && mr2 != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 14), mr2, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr2), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);
	return TEST_SUCCESS;
}

/* --- zero-based type 2 windows: remote addresses are offsets from the start --- */

#define ZB	IBV_ACCESS_ZERO_BASED

static int
test_type2_zero_based_write_read_atomic_at_offsets(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	uint64_t v;

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x20), b.mr, win_addr(0), WIN_LEN, RW_ALL | ZB,
		    IBV_WC_SUCCESS));
	/* offset 0 is b.buf + WIN_OFF; the WRITE and READ take several packets */
	CHECK(use_window_at(key2(mw, 0x20), 3, 0));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	/* again at another place of the MR: offset 56 of a window at WIN_OFF + 512 */
	mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x21), b.mr, win_addr(512), 64, RW_ALL | ZB,
		    IBV_WC_SUCCESS));
	v = 7;
	memcpy(b.buf + WIN_OFF + 512 + 56, &v, 8);
	CHECK(rdma(&a, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, 56, key2(mw, 0x21), 7, IBV_WC_SUCCESS));
	memcpy(&v, b.buf + WIN_OFF + 512 + 56, 8);
	TEST_ASSERT_EQ(v, 0x5151);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* IBA's bounds on offsets: [0, length) of the window, wherever it lies in the MR */
static int
test_zero_based_write_past_window_end_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x22), b.mr, win_addr(0), WIN_LEN, RW_ALL | ZB,
		    IBV_WC_SUCCESS));
	/* the last 8 bytes are in, 16 are not (the MR goes on past the window) */
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 8, WIN_LEN - 8, key2(mw, 0x22), 0, IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_WRITE, WIN_LEN - 8, 16, key2(mw, 0x22)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* The window's own address in the MR is no offset into it. */
static int
test_zero_based_read_at_mr_address_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x23), b.mr, win_addr(0), WIN_LEN, RW_ALL | ZB,
		    IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_RDMA_READ, win_addr(0), 64, key2(mw, 0x23)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* An atomic at an offset wrapping past 2^64 with the window's start */
static int
test_zero_based_atomic_at_huge_offset_rem_access_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x24), b.mr, win_addr(0), WIN_LEN, RW_ALL | ZB,
		    IBV_WC_SUCCESS));
	CHECK(violation(IBV_WR_ATOMIC_FETCH_AND_ADD, UINT64_MAX - 7, 8, key2(mw, 0x24)));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* o10-36.2.2: a type 1 window is never zero based */
static int
test_type1_zero_based_bind_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL | ZB, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* C10-75 holds for a zero-based window: its range in the MR must lie in the MR */
static int
test_zero_based_bind_past_mr_end_mw_bind_err(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc");
	CHECK(bind2(&b, mw, key2(mw, 0x25), b.mr, (uintptr_t)b.buf + b.buf_len - 4096, 4097,
		    RW_ALL | ZB, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* --- the verbs' own checks --- */

static int
test_bind_verb_and_post_checks(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	struct ibv_mr *mr2 = ibv_reg_mr(pd2, b.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *m1 = mw_alloc(b.pd, IBV_MW_TYPE_1), *m2 = mw_alloc(b.pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind mb = { .bind_info = { .mr = b.mr, .addr = win_addr(0), .length = 64 } };
	struct ibv_sge sge = { (uintptr_t)b.buf, 8, b.mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad = NULL;
	struct h_side u;
	const struct h_qp_opts ud = { .type = IBV_QPT_UD };
	uint32_t k;

	TEST_ASSERT(m1 && m2 && mr2, "alloc");
	/* verbs.h's checks: a type 2 window, an empty MR with a range, another PD's MR */
	k = m2->rkey;
	TEST_ASSERT_EQ(ibv_bind_mw(b.qp, m2, &mb), EINVAL);
	TEST_ASSERT_EQ(m2->rkey, k);
	mb.bind_info.mr = NULL;
	TEST_ASSERT_EQ(ibv_bind_mw(b.qp, m1, &mb), EINVAL);
	mb.bind_info.mr = mr2;
	TEST_ASSERT_EQ(ibv_bind_mw(b.qp, m1, &mb), EPERM);
	/* a UD QP has no binds; the key stays as it was */
	TEST_ASSERT_EQ(h_side_create(&u, b.ctx, &(struct h_qp_opts){ .type = IBV_QPT_UD,
								   .pd = b.pd }), 0);
	TEST_ASSERT_EQ(h_connect(&u, &u, &ud), 0);
	mb.bind_info.mr = b.mr;
	k = m1->rkey;
	TEST_ASSERT_EQ(ibv_bind_mw(u.qp, m1, &mb), EINVAL);
	TEST_ASSERT_EQ(m1->rkey, k);
	h_side_destroy(&u);
	/* ibv_post_send: no window, SGEs, a range without an MR, unknown access */
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	wr.bind_mw.mw = m2;
	wr.bind_mw.rkey = key2(m2, 1);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = b.mr, .addr = win_addr(0),
							   .length = 64 };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), EINVAL);
	wr.num_sge = 0;
	wr.bind_mw.bind_info.mr = NULL;
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), EINVAL);
	wr.bind_mw.bind_info.mr = b.mr;
	wr.bind_mw.bind_info.mw_access_flags = 1 << 20;
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), EINVAL);
	/* INLINE and SOLICITED are not for a bind */
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	wr.send_flags = IBV_SEND_INLINE;
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), EINVAL);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	bad = NULL;
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), 0);
	{
		struct ibv_wc wc;

		CHECK(one_wc(b.scq, &wc, 0, IBV_WC_SUCCESS, IBV_WC_BIND_MW));
		TEST_ASSERT_EQ(wc.byte_len, 0);
	}
	/* alloc: a type no verb defines */
	errno = 0;
	TEST_ASSERT(ibv_alloc_mw(b.pd, (enum ibv_mw_type)0) == NULL && errno == EINVAL,
		    "type 0: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dealloc_mw(m1), 0);
	TEST_ASSERT_EQ(ibv_dealloc_mw(m2), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr2), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);
	return TEST_SUCCESS;
}

/* --- lifetimes --- */

static int
test_dealloc_bound_window_then_access_fails(void)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, b.buf_len,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *m1 = mw_alloc(b.pd, IBV_MW_TYPE_1), *m2 = mw_alloc(b.pd, IBV_MW_TYPE_2);
	uint32_t k1;

	TEST_ASSERT(mr && m1 && m2, "alloc");
	CHECK(bind1(&b, m1, mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(bind2(&b, m2, key2(m2, 15), mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	k1 = m1->rkey;
	CHECK(rdma(&a, IBV_WR_RDMA_WRITE, 0, 64, win_addr(0), k1, 0, IBV_WC_SUCCESS));
	/* as rxe: an MR with windows bound to it stays (EINVAL) */
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), EINVAL);
	TEST_ASSERT_EQ(ibv_dealloc_mw(m1), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), EINVAL);
	TEST_ASSERT_EQ(ibv_dealloc_mw(m2), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	/* a window allocated in the freed slot does not answer to the old R_Key */
	m1 = mw_alloc(b.pd, IBV_MW_TYPE_1);
	TEST_ASSERT(m1 != NULL, "alloc");
	TEST_ASSERT(m1->rkey != k1, "same R_Key again");
	CHECK(violation(IBV_WR_RDMA_WRITE, win_addr(0), 64, k1));
	TEST_ASSERT_EQ(ibv_dealloc_mw(m1), 0);
	return TEST_SUCCESS;
}

static int
test_dealloc_pd_busy_while_windows_on_it(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	struct ibv_mw *m1 = pd2 ? mw_alloc(pd2, IBV_MW_TYPE_1) : NULL;
	struct ibv_mw *m2 = pd2 ? mw_alloc(pd2, IBV_MW_TYPE_2) : NULL;

	TEST_ASSERT(m1 && m2, "alloc");
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	TEST_ASSERT_EQ(ibv_dealloc_mw(m1), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	TEST_ASSERT_EQ(ibv_dealloc_mw(m2), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);
	return TEST_SUCCESS;
}

/* --- the engine's binds and invalidations against the application's deregistrations --- */

#define RACE_ROUNDS	600

/* The completion of the one WR b's QP has in flight: its status. */
static int
race_wc(uint64_t wr_id, enum ibv_wc_status *st)
{
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_poll(b.scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, wr_id);
	*st = wc.status;
	return TEST_SUCCESS;
}

/* A bind of @mw on b's QP: ibv_bind_mw for type 1, @wr (BIND_MW) for type 2. */
static int
race_bind(struct ibv_mw *mw, struct ibv_mw_bind *mb, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	if (mw->type == IBV_MW_TYPE_1)
		TEST_ASSERT_EQ(ibv_bind_mw(b.qp, mw, mb), 0);
	else
		TEST_ASSERT_EQ(ibv_post_send(b.qp, wr, &bad), 0);
	return TEST_SUCCESS;
}

/* b's QP after a failed bind or invalidation: back to RTS (a sends nothing meanwhile). */
static int
race_recover(void)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };

	TEST_ASSERT_EQ(h_qp_state_wait(b.qp, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_connect(&b, &a, &rc), 0);
	return TEST_SUCCESS;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * Spin a different part of @span_ns each round, so that the application's
 * call falls before, during and after the engine's execution of the WR
 * posted just before it (@span_ns: about that WR's time to completion).
 * Only where the call falls changes; no outcome depends on it.
 */
static void
race_delay(int round, uint64_t span_ns)
{
	uint64_t end = now_ns() + ((uint64_t)round * 7919) % (span_ns + 1);

	while (now_ns() < end)
		;
}

/* About the time a bind takes from its post to its completion on b's QP (ns). */
static int
race_span(uint64_t *span_ns)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_1);
	uint64_t best = UINT64_MAX;

	TEST_ASSERT(mw != NULL, "alloc");
	for (int i = 0; i < 16; i++) {
		uint64_t t0 = now_ns();

		CHECK(bind1(&b, mw, b.mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
		if (now_ns() - t0 < best)
			best = now_ns() - t0;
	}
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	*span_ns = best < 100000 ? best * 2 : 200000;
	return TEST_SUCCESS;
}

/*
 * ibv_dereg_mr on the application thread while the engine (its lcore, in
 * --lcore mode) executes a bind to that MR. Either the bind came first and
 * the MR stays (EINVAL), or the deregistration did and the bind fails
 * (MW_BIND_ERR): never both done, a window bound to a freed MR. Then the
 * MR's slot counts nothing stale: a new MR in it deregisters at once.
 * And ibv_dealloc_mw against a bind or a LOCAL_INV of that window: each
 * window counted once, so its MR deregisters afterwards.
 */
static int
test_dereg_and_dealloc_race_engine_binds_counts_stay_exact(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	int won[2] = { 0, 0 };		/* rounds the bind won, the dereg won */
	uint64_t span;

	CHECK(race_span(&span));
	for (int r = 0; r < RACE_ROUNDS; r++) {
		struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, b.buf_len, acc);
		struct ibv_mw *mw = mw_alloc(b.pd, (r & 1) ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		struct ibv_mw_bind mb = { .wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
					  .bind_info = { .mr = mr, .addr = win_addr(0),
							 .length = WIN_LEN,
							 .mw_access_flags = RW_ALL } };
		struct ibv_send_wr wr = { .wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
		enum ibv_wc_status st;
		uint64_t bind_id;
		int ret;

		TEST_ASSERT(mr != NULL && mw != NULL, "round %d: alloc", r);
		bind_id = mw->type == IBV_MW_TYPE_1 ? 0xb1 : 0xb2;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = key2(mw, (uint8_t)r);
		wr.bind_mw.bind_info = mb.bind_info;
		switch (r % 3) {
		case 0:		/* bind against dereg */
			CHECK(race_bind(mw, &mb, &wr));
			race_delay(r, span);
			ret = ibv_dereg_mr(mr);
			CHECK(race_wc(bind_id, &st));
			if (ret == 0) {
				TEST_ASSERT(st == IBV_WC_MW_BIND_ERR,
					    "round %d: MR deregistered, yet the bind: %s", r,
					    ibv_wc_status_str(st));
				won[1]++;
				CHECK(race_recover());
				mr = NULL;
			} else {
				TEST_ASSERT_EQ(ret, EINVAL);
				TEST_ASSERT(st == IBV_WC_SUCCESS, "round %d: dereg EINVAL, bind %s",
					    r, ibv_wc_status_str(st));
				won[0]++;
			}
			TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
			break;
		case 1:		/* bind against dealloc of the window */
			CHECK(race_bind(mw, &mb, &wr));
			race_delay(r, span);
			TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
			CHECK(race_wc(bind_id, &st));
			TEST_ASSERT(st == IBV_WC_SUCCESS || st == IBV_WC_MW_BIND_ERR,
				    "round %d: %s", r, ibv_wc_status_str(st));
			if (st != IBV_WC_SUCCESS)
				CHECK(race_recover());
			break;
		default:	/* LOCAL_INV against dealloc of the window */
			if (mw->type == IBV_MW_TYPE_1) {
				TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
				mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
				TEST_ASSERT(mw != NULL, "alloc");
				wr.bind_mw.mw = mw;
				wr.bind_mw.rkey = key2(mw, (uint8_t)r);
			}
			TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), 0);
			CHECK(race_wc(0xb2, &st));
			TEST_ASSERT(st == IBV_WC_SUCCESS, "round %d: bind %s", r,
				    ibv_wc_status_str(st));
			wr.opcode = IBV_WR_LOCAL_INV;
			wr.wr_id = 0x11;
			wr.invalidate_rkey = key2(mw, (uint8_t)r);
			TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), 0);
			race_delay(r, span);
			TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
			CHECK(race_wc(0x11, &st));
			TEST_ASSERT(st == IBV_WC_SUCCESS || st == IBV_WC_LOC_QP_OP_ERR,
				    "round %d: %s", r, ibv_wc_status_str(st));
			if (st != IBV_WC_SUCCESS)
				CHECK(race_recover());
			break;
		}
		/* no window left on the MR: it goes */
		if (mr != NULL)
			TEST_ASSERT(ibv_dereg_mr(mr) == 0, "round %d: dereg once the window went",
				    r);
		/* the slot holds no count of the last MR's windows */
		mr = ibv_reg_mr(b.pd, b.buf, 4096, acc);
		TEST_ASSERT(mr != NULL, "reg");
		TEST_ASSERT(ibv_dereg_mr(mr) == 0, "round %d: a fresh MR is busy", r);
	}
	printf("bind first %d, dereg first %d of %d rounds (delays up to %" PRIu64 " ns)\n",
	       won[0], won[1], (RACE_ROUNDS + 2) / 3, span);
	/* and the QP still binds and serves accesses */
	{
		struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

		TEST_ASSERT(mw != NULL, "alloc");
		CHECK(bind2(&b, mw, key2(mw, 0x99), b.mr, win_addr(0), WIN_LEN, RW_ALL,
			    IBV_WC_SUCCESS));
		CHECK(use_window(key2(mw, 0x99), 5));
		TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	}
	return TEST_SUCCESS;
}

/* max_mw windows per device, ENOMEM beyond, one more once one is freed */
static int
test_alloc_up_to_max_mw_then_enomem(void)
{
	struct ibv_device_attr da;
	struct ibv_mw **mw;
	int n = 0, ret = TEST_FAILED;

	TEST_ASSERT_EQ(ibv_query_device(b.ctx, &da), 0);
	TEST_ASSERT(da.max_mw > 0, "max_mw %d", da.max_mw);
	mw = calloc(da.max_mw, sizeof(*mw));
	TEST_ASSERT(mw != NULL, "calloc");
	for (; n < da.max_mw; n++) {
		mw[n] = ibv_alloc_mw(b.pd, n & 1 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		if (mw[n] == NULL) {
			fprintf(stderr, "window %d of %d: %s\n", n, da.max_mw, strerror(errno));
			goto out;
		}
	}
	errno = 0;
	if (ibv_alloc_mw(b.pd, IBV_MW_TYPE_1) != NULL || errno != ENOMEM) {
		fprintf(stderr, "window %d: errno %d, want ENOMEM\n", n, errno);
		goto out;
	}
	if (ibv_dealloc_mw(mw[--n]) != 0)
		goto out;
	mw[n] = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	if (mw[n] == NULL)
		goto out;
	n++;
	/* and they work: the last one binds */
	if (bind2(&b, mw[n - 1], key2(mw[n - 1], 1), b.mr, win_addr(0), 64, RW_ALL,
		  IBV_WC_SUCCESS) == 0 &&
	    rdma(&a, IBV_WR_RDMA_READ, 0, 64, win_addr(0), key2(mw[n - 1], 1), 0,
		 IBV_WC_SUCCESS) == 0)
		ret = TEST_SUCCESS;
out:
	while (n > 0)
		if (ibv_dealloc_mw(mw[--n]) != 0)
			ret = TEST_FAILED;
	free(mw);
	return ret;
}

/* MW_BIND through ibv_reg_mr and ibv_rereg_mr; the bind follows the MR's rights. */
static int
test_reg_and_rereg_mr_with_mw_bind(void)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, b.buf_len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);

	TEST_ASSERT(mr && mw, "alloc");
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND), 0);
	CHECK(bind2(&b, mw, key2(mw, 16), mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_SUCCESS));
	CHECK(use_window(key2(mw, 16), 16));
	CHECK(local_inv(&b, key2(mw, 16), IBV_WC_SUCCESS));
	TEST_ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE), 0);
	CHECK(bind2(&b, mw, key2(mw, 17), mr, win_addr(0), WIN_LEN, RW_ALL, IBV_WC_MW_BIND_ERR));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return TEST_SUCCESS;
}

/*
 * man ibv_bind_mw: a send posted after the bind on the same QP is ordered
 * after it, so the new R_Key may travel in it. b binds and sends the key in
 * one list; a uses it as soon as it arrives.
 */
static int
test_bind_then_send_rkey_ordered(void)
{
	struct ibv_mw *mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	uint32_t k = key2(mw, 0x99);
	struct ibv_sge sge = { (uintptr_t)b.buf + 200000, 4, b.mr->lkey };
	struct ibv_send_wr send = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr bind = { .wr_id = 1, .opcode = IBV_WR_BIND_MW, .next = &send }, *bad;
	struct ibv_wc wc[2];
	uint32_t got;

	TEST_ASSERT(mw != NULL, "alloc");
	memcpy(b.buf + 200000, &k, 4);
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = k;
	bind.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = b.mr, .addr = win_addr(0),
							     .length = WIN_LEN,
							     .mw_access_flags = RW_ALL };
	TEST_ASSERT_EQ(h_post_recv(&a, 300000, 64, 3), 0);
	TEST_ASSERT_EQ(ibv_post_send(b.qp, &bind, &bad), 0);
	/* the bind was unsignaled: only the SEND completes */
	TEST_ASSERT_EQ(h_poll(b.scq, wc, 2, 500), 1);
	TEST_ASSERT_EQ(wc[0].wr_id, 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK(one_wc(a.rcq, wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV));
	memcpy(&got, a.buf + 300000, 4);
	TEST_ASSERT_EQ(got, k);
	CHECK(use_window(got, 0x99));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

/* ibv_wr_bind_mw, ibv_wr_local_inv and ibv_wr_send_inv on extended QPs. */
static int
test_wr_api_bind_send_inv_local_inv(void)
{
	struct h_qp_opts o = rc;
	struct ibv_qp_ex *bx, *ax;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t k;

	h_pair_destroy(&a, &b);
	o.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			   IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_BIND_MW |
			   IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV;
	CHECK(h_pair(&a, &b, &o));
	bx = ibv_qp_to_qp_ex(b.qp);
	ax = ibv_qp_to_qp_ex(a.qp);
	TEST_ASSERT(ax && bx, "qp_ex");
	mw = mw_alloc(b.pd, IBV_MW_TYPE_2);
	TEST_ASSERT(mw != NULL, "alloc");
	k = key2(mw, 0x31);
	ibv_wr_start(bx);
	bx->wr_id = 40;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw, k, &(struct ibv_mw_bind_info){ .mr = b.mr, .addr = win_addr(0),
			.length = WIN_LEN, .mw_access_flags = RW_ALL });
	TEST_ASSERT_EQ(ibv_wr_complete(bx), 0);
	CHECK(one_wc(b.scq, &wc, 40, IBV_WC_SUCCESS, IBV_WC_BIND_MW));
	CHECK(use_window(k, 0x31));
	/* invalidated by a's SEND_WITH_INV */
	TEST_ASSERT_EQ(post_recv_b(65536, 64), 0);
	ibv_wr_start(ax);
	ax->wr_id = 41;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(ax, k);
	ibv_wr_set_sge(ax, a.mr->lkey, (uintptr_t)a.buf, 16);
	TEST_ASSERT_EQ(ibv_wr_complete(ax), 0);
	CHECK(one_wc(a.scq, &wc, 41, IBV_WC_SUCCESS, IBV_WC_SEND));
	CHECK(one_wc(b.rcq, &wc, 0x5ec, IBV_WC_SUCCESS, IBV_WC_RECV));
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_INV, "wc_flags %#x", wc.wc_flags);
	TEST_ASSERT_EQ(wc.invalidated_rkey, k);
	/* bound again, then invalidated locally */
	k = key2(mw, 0x32);
	ibv_wr_start(bx);
	bx->wr_id = 42;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw, k, &(struct ibv_mw_bind_info){ .mr = b.mr, .addr = win_addr(0),
			.length = WIN_LEN, .mw_access_flags = IBV_ACCESS_REMOTE_READ });
	bx->wr_id = 43;
	ibv_wr_local_inv(bx, k);
	TEST_ASSERT_EQ(ibv_wr_complete(bx), 0);
	CHECK(one_wc(b.scq, &wc, 42, IBV_WC_SUCCESS, IBV_WC_BIND_MW));
	CHECK(one_wc(b.scq, &wc, 43, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV));
	CHECK(violation(IBV_WR_RDMA_READ, win_addr(0), 64, k));
	TEST_ASSERT_EQ(ibv_dealloc_mw(mw), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_type1_bind_then_write_read_atomic),
	TEST_CASE(test_type1_old_rkey_after_rebind_rem_access_err),
	TEST_CASE(test_type2_bind_then_write_read_atomic),
	TEST_CASE(test_type2_other_key_rem_access_err),
	TEST_CASE(test_type2_unbound_rem_access_err),
	TEST_CASE(test_write_past_window_end_rem_access_err),
	TEST_CASE(test_read_before_window_start_rem_access_err),
	TEST_CASE(test_write_through_read_only_window_rem_access_err),
	TEST_CASE(test_atomic_through_window_without_atomic_rem_access_err),
	TEST_CASE(test_type2_window_from_another_qp_rem_access_err),
	TEST_CASE(test_type2_window_of_destroyed_qp_not_for_its_qpn_successor),
	TEST_CASE(test_type1_window_any_qp_of_its_pd_none_of_another),
	TEST_CASE(test_send_with_inv_invalidates_then_access_fails),
	TEST_CASE(test_send_with_inv_of_mr_key_rem_inv_req_err),
	TEST_CASE(test_send_with_inv_from_another_qp_fails_window_stays),
	TEST_CASE(test_local_inv_then_rebind_then_access_fails),
	TEST_CASE(test_local_inv_of_type1_window_loc_qp_op_err),
	TEST_CASE(test_local_inv_of_unbound_or_mr_key_loc_qp_op_err),
	TEST_CASE(test_bind_past_mr_end_mw_bind_err),
	TEST_CASE(test_bind_before_mr_start_mw_bind_err),
	TEST_CASE(test_bind_on_mr_without_mw_bind_mw_bind_err),
	TEST_CASE(test_bind_remote_write_on_mr_without_local_write_mw_bind_err),
	TEST_CASE(test_bind_remote_atomic_on_mr_without_local_write_mw_bind_err),
	TEST_CASE(test_type1_zero_length_bind_unbinds),
	TEST_CASE(test_type2_zero_length_bind_mw_bind_err),
	TEST_CASE(test_type2_bind_while_bound_mw_bind_err),
	TEST_CASE(test_type2_bind_changing_index_bits_mw_bind_err),
	TEST_CASE(test_type2_bind_on_qp_of_another_pd_mw_bind_err),
	TEST_CASE(test_bind_verb_and_post_checks),
	TEST_CASE(test_dealloc_bound_window_then_access_fails),
	TEST_CASE(test_dealloc_pd_busy_while_windows_on_it),
	TEST_CASE(test_alloc_up_to_max_mw_then_enomem),
	TEST_CASE(test_reg_and_rereg_mr_with_mw_bind),
	TEST_CASE(test_bind_then_send_rkey_ordered),
	TEST_CASE(test_wr_api_bind_send_inv_local_inv),
	TEST_CASE(test_type2_zero_based_write_read_atomic_at_offsets),
	TEST_CASE(test_zero_based_write_past_window_end_rem_access_err),
	TEST_CASE(test_zero_based_read_at_mr_address_rem_access_err),
	TEST_CASE(test_zero_based_atomic_at_huge_offset_rem_access_err),
	TEST_CASE(test_type1_zero_based_bind_mw_bind_err),
	TEST_CASE(test_zero_based_bind_past_mr_end_mw_bind_err),
	TEST_CASE(test_dereg_and_dealloc_race_engine_binds_counts_stay_exact),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "mw", cases, setup, teardown);
}
