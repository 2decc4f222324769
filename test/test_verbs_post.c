/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs facade's post-time checks, through the public API against the
 * man pages (ibv_post_send, ibv_post_recv, ibv_post_srq_recv): every
 * post-time error, with the exact return value and *bad_wr; the WRs before
 * the bad one were posted (they complete, their bytes arrive), the bad one
 * and all after it were not (they never complete, never arrive). And
 * IBV_SEND_INLINE copies at post time and ignores the lkey.
 * verbs_post_common.h has the rig.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_post_common.h"

/* --- post: queue full --- */

static int
test_post_send_sq_full_enomem_bad_is_2nd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 4 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;
	uint64_t rid[5];

	CHECK(vp_extra_pair(&x, &y, &o));
	CHECK(vp_query(x.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_send_wr, 4);
	vp_fill(x.buf, 4 * SLOT, 77);
	/* y has no receive: every SEND is RNR-NAKed and keeps its SQ slot */
	for (int i = 0; i < 3; i++)
		CHECK(vp_send1(&x, &y, NULL, i * SLOT, MSG, 0x10 + i, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(x.scq, NULL, 50));
	for (int i = 0; i < 3; i++) {
		vp_mk_send(&wr[i], &sg[i], &x, &y, NULL, 3 * SLOT, MSG);
		wr[i].wr_id = 0x20 + i;
	}
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_send(x.qp, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	/* now receives: the 3 + wr[0] go through, in order; wr[1], wr[2] never */
	for (int i = 0; i < 5; i++)
		CHECK(vp_recv1(&y, NULL, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		CHECK(vp_expect_send(&x, 0x10 + i, IBV_WC_SEND));
	CHECK(vp_expect_send(&x, 0x20, IBV_WC_SEND));
	for (int i = 0; i < 4; i++)
		CHECK(vp_expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(vp_expect_none(x.scq, y.rcq, QUIET_MS));
	return 0;
}

static int
test_post_recv_rq_full_enomem_bad_is_2nd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_recv_wr = 4 };
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;
	uint64_t rid[3];

	CHECK(vp_extra_pair(&x, &y, &o));
	CHECK(vp_query(y.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_recv_wr, 4);
	for (int i = 0; i < 3; i++)
		CHECK(vp_recv1(&y, NULL, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(y.qp, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	vp_fill(x.buf, 5 * SLOT, 78);
	for (int i = 0; i < 5; i++)
		CHECK(vp_send1(&x, &y, NULL, i * SLOT, MSG, 0x30 + i, IBV_SEND_SIGNALED));
	for (int i = 0; i < 3; i++)
		CHECK(vp_expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(vp_expect_recv(&y, x.buf + 3 * SLOT, MSG, 0, wr[0].wr_id));
	for (int i = 0; i < 4; i++)
		CHECK(vp_expect_send(&x, 0x30 + i, IBV_WC_SEND));
	/* the 5th message has no receive: RNR forever, no completion anywhere */
	CHECK(vp_expect_none(y.rcq, x.scq, QUIET_MS));
	return 0;
}

static int
test_post_srq_recv_full_enomem_bad_is_2nd(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_srq_attr sat;
	uint64_t rid[3];

	CHECK(vp_srq_pair(4, 1));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &sat), 0);
	TEST_ASSERT_EQ(sat.max_wr, 4);
	for (int i = 0; i < 3; i++)
		CHECK(vp_recv1(&y, srq, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_srq_recv(srq, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	vp_fill(x.buf, 5 * SLOT, 79);
	for (int i = 0; i < 5; i++)
		CHECK(vp_send1(&x, &y, NULL, i * SLOT, MSG, 0x40 + i, IBV_SEND_SIGNALED));
	for (int i = 0; i < 3; i++)
		CHECK(vp_expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(vp_expect_recv(&y, x.buf + 3 * SLOT, MSG, 0, wr[0].wr_id));
	for (int i = 0; i < 4; i++)
		CHECK(vp_expect_send(&x, 0x40 + i, IBV_WC_SEND));
	CHECK(vp_expect_none(y.rcq, x.scq, QUIET_MS));
	return 0;
}

/*
 * A QP's own queues take their slots in turn and get them back in turn
 * (struct droce_wq): sizes that are not powers of two, filled exactly and
 * emptied over several wraps, then across a flush (ERR) and a RESET that
 * discards what was posted. Each time exactly max_send_wr and max_recv_wr
 * WRs fit, the next is ENOMEM with *bad_wr on it, and every message lands in
 * the receive its wr_id names, in order, with its bytes.
 */
static int
sq_fill_exact(uint64_t id0)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sg;

	for (int i = 0; i < 5; i++)
		CHECK(vp_send1(&x, &y, NULL, (size_t)i * SLOT, MSG, id0 + i, IBV_SEND_SIGNALED));
	vp_mk_send(&wr, &sg, &x, &y, NULL, 0, MSG);
	TEST_ASSERT_EQ(ibv_post_send(x.qp, &wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	return 0;
}

static int
rq_fill_exact(uint64_t rid[3])
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sg;

	for (int i = 0; i < 3; i++)
		CHECK(vp_recv1(&y, NULL, SLOT, &rid[i]));
	vp_mk_recv(&wr, &sg, &y, SLOT);
	TEST_ASSERT_EQ(ibv_post_recv(y.qp, &wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	return 0;
}

static int
test_post_queues_full_exact_over_wraps_flush_and_reset(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 5, .max_recv_wr = 3 };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	uint64_t rid[5];
	struct ibv_wc wc;

	CHECK(vp_extra_pair(&x, &y, &o));
	CHECK(vp_query(x.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_send_wr, 5);
	CHECK(vp_query(y.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_recv_wr, 3);
	vp_fill(x.buf, 8 * SLOT, 91);
	/* 7 rounds of 3: 21 WRs through 5 send and 3 receive slots */
	for (int r = 0; r < 7; r++) {
		CHECK(rq_fill_exact(rid));
		for (int i = 0; i < 3; i++)
			CHECK(vp_send1(&x, &y, NULL, (size_t)((r + i) % 8) * SLOT, MSG,
				       (uint64_t)r << 8 | i, IBV_SEND_SIGNALED));
		for (int i = 0; i < 3; i++)
			CHECK(vp_expect_send(&x, (uint64_t)r << 8 | i, IBV_WC_SEND));
		for (int i = 0; i < 3; i++)
			CHECK(vp_expect_recv(&y, x.buf + ((r + i) % 8) * SLOT, MSG, 0, rid[i]));
	}
	/* y has no receive: the sends are RNR-NAKed and keep their slots; ERR flushes them in order */
	CHECK(sq_fill_exact(0x100));
	at.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE), 0);
	for (int i = 0; i < 5; i++) {
		memset(&wc, 0, sizeof(wc));
		TEST_ASSERT_EQ(h_poll(x.scq, &wc, 1, WAIT_MS), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
		TEST_ASSERT_EQ(wc.wr_id, 0x100 + (uint64_t)i);
	}
	CHECK(vp_reconnect(&x, &y, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(vp_reconnect(&y, &x, IBV_QPT_RC, IBV_MTU_1024));
	/* RESET discards what was posted: 5 sends, then 2 receives, never complete */
	CHECK(sq_fill_exact(0x200));
	TEST_ASSERT_EQ(vp_to_reset(x.qp), 0);
	CHECK(vp_recv1(&y, NULL, SLOT, &rid[0]));
	CHECK(vp_recv1(&y, NULL, SLOT, &rid[1]));
	TEST_ASSERT_EQ(vp_to_reset(y.qp), 0);
	CHECK(vp_expect_none(x.scq, y.rcq, QUIET_MS));
	CHECK(vp_reconnect(&x, &y, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(vp_reconnect(&y, &x, IBV_QPT_RC, IBV_MTU_1024));
	/* whole again: 3 receives and 5 sends fit; 3 land, then 2 more receives take the rest */
	CHECK(rq_fill_exact(rid));
	CHECK(sq_fill_exact(0x300));
	for (int i = 0; i < 3; i++) {
		CHECK(vp_expect_send(&x, 0x300 + (uint64_t)i, IBV_WC_SEND));
		CHECK(vp_expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	}
	CHECK(vp_recv1(&y, NULL, SLOT, &rid[3]));
	CHECK(vp_recv1(&y, NULL, SLOT, &rid[4]));
	for (int i = 3; i < 5; i++) {
		CHECK(vp_expect_send(&x, 0x300 + (uint64_t)i, IBV_WC_SEND));
		CHECK(vp_expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	}
	CHECK(vp_expect_none(x.scq, y.rcq, QUIET_MS));
	return 0;
}

/* --- post: num_sge --- */

static int
test_post_send_num_sge_over_max_einval(void)
{
	static const int bad_n[] = { 5, DROCE_MAX_SGE + 1, -1 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[DROCE_MAX_SGE + 1];
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(vp_query(a.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_send_sge, 4);	/* as created: bad_n[0] is one more */
	for (int i = 0; i < DROCE_MAX_SGE + 1; i++) {
		sg[i].addr = (uintptr_t)a.buf + 0x8000 + i * 16;
		sg[i].length = 16;
		sg[i].lkey = a.mr->lkey;
	}
	for (size_t i = 0; i < DIM(bad_n); i++) {
		memset(&wr[1], 0, sizeof(wr[1]));
		wr[1].opcode = IBV_WR_SEND;
		wr[1].send_flags = IBV_SEND_SIGNALED;
		wr[1].sg_list = sg;
		wr[1].num_sge = bad_n[i];
		CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	}
	/* max_send_sge SGEs are fine, and gathered in order */
	vp_fill(a.buf + 0x8000, 64, 80);
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].wr_id = 0x50;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].sg_list = sg;
	wr[0].num_sge = 4;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr[0], &bad), 0);
	CHECK(vp_expect_send(&a, 0x50, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf + 0x8000, 64, 0, ANY_ID));	/* earlier rows left receives */
	return 0;
}

static int
test_post_recv_num_sge_over_max_einval(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_recv_sge = 2 };
	struct ibv_recv_wr wr[3];
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;

	CHECK(vp_extra_pair(&x, &y, &o));
	CHECK(vp_query(y.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_recv_sge, 2);
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[1], &sg[i], &y, SLOT);	/* three SGEs: sg[0..2] */
	wr[1].wr_id = sg[0].addr - (uintptr_t)y.buf;
	wr[1].sg_list = sg;
	wr[1].num_sge = 3;
	CHECK(vp_recv_list_check(&x, &y, NULL, wr, EINVAL));
	return 0;
}

static int
test_post_srq_recv_num_sge_over_max_einval(void)
{
	struct ibv_recv_wr wr[3];
	struct ibv_sge sg[3];
	struct ibv_srq_attr sat;

	CHECK(vp_srq_pair(16, 2));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &sat), 0);
	TEST_ASSERT_EQ(sat.max_sge, 2);
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[1], &sg[i], &y, SLOT);
	wr[1].wr_id = sg[0].addr - (uintptr_t)y.buf;
	wr[1].sg_list = sg;
	wr[1].num_sge = 3;
	CHECK(vp_recv_list_check(&x, &y, srq, wr, EINVAL));
	return 0;
}

/* --- post: an empty list --- */

static int
test_post_null_list_einval(void)
{
	struct ibv_send_wr *sbad = (void *)&sbad;
	struct ibv_recv_wr *rbad = (void *)&rbad;

	/* droce's choice (rxe: EINVAL, mlx5: 0) */
	TEST_ASSERT_EQ(ibv_post_send(a.qp, NULL, &sbad), EINVAL);
	TEST_ASSERT_PTR_EQ(sbad, NULL);
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, NULL, &rbad), EINVAL);
	TEST_ASSERT_PTR_EQ(rbad, NULL);
	return 0;
}

/* --- post: opcodes and flags --- */

static int
opcode_rows(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
	    const enum ibv_wr_opcode *ops, size_t nops, int err)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	vp_fill(s->buf + 0x8000, MSG, 85);
	for (size_t i = 0; i < nops; i++) {
		vp_mk_send(&wr[1], &sg, s, r, uah, 0x8000, MSG);
		wr[1].opcode = ops[i];
		if (ops[i] == IBV_WR_ATOMIC_CMP_AND_SWP || ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			sg.length = 8;
			if (!uah) {
				wr[1].wr.atomic.remote_addr = (uintptr_t)r->buf + WRITE_OFF;
				wr[1].wr.atomic.rkey = r->mr->rkey;
			}
		}
		if (vp_send_list_check(s, r, uah, wr, err) != 0) {
			fprintf(stderr, "  ... with wr[1].opcode %d\n", ops[i]);
			return TEST_FAILED;
		}
	}
	return 0;
}

static int
test_post_send_opcode_not_for_ud_einval(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE,
	};
	/* UD allows TSO (man ibv_post_send), which droce does not have */
	static const enum ibv_wr_opcode notsup[] = { IBV_WR_TSO };
	const struct h_qp_opts o = { .type = IBV_QPT_UD };

	CHECK(vp_extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	CHECK(opcode_rows(&x, &y, ah, ops, DIM(ops), EINVAL));
	CHECK(opcode_rows(&x, &y, ah, notsup, DIM(notsup), EOPNOTSUPP));
	return 0;
}

static int
test_post_send_opcode_not_for_uc_einval(void)
{
	/* and a BIND_MW WR with an SGE and no window (test_mw has the valid ones) */
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_TSO, IBV_WR_ATOMIC_WRITE, IBV_WR_BIND_MW,
	};
	/* UC allows SEND_WITH_INV, which IBA gives no UC opcode for (rxe: LOC_QP_OP_ERR) */
	static const enum ibv_wr_opcode notsup[] = { IBV_WR_SEND_WITH_INV };
	const struct h_qp_opts o = { .type = IBV_QPT_UC };

	CHECK(vp_extra_pair(&x, &y, &o));
	CHECK(opcode_rows(&x, &y, NULL, ops, DIM(ops), EINVAL));
	CHECK(opcode_rows(&x, &y, NULL, notsup, DIM(notsup), EOPNOTSUPP));
	return 0;
}

/*
 * RC: TSO is not for RC, driver opcodes and values no verb defines are
 * invalid, and so is a BIND_MW WR with an SGE and no window (EINVAL; memory
 * windows, LOCAL_INV and SEND_WITH_INV themselves: test_mw; ATOMIC_WRITE:
 * test_rdma_ops).
 */
static int
test_post_send_opcode_unsupported_on_rc(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_TSO, IBV_WR_DRIVER1, (enum ibv_wr_opcode)0x7f, IBV_WR_BIND_MW,
	};

	CHECK(opcode_rows(&a, &b, NULL, ops, DIM(ops), EINVAL));
	return 0;
}

/*
 * RDMA READ and atomics on RC: EOPNOTSUPP while droce does not implement them
 * (ibv_query_device says atomic_cap NONE). Once it does, they are accepted,
 * and an atomic that is not exactly 8 bytes at an 8-aligned remote address
 * is EINVAL at post time.
 */
static int
test_post_send_read_atomic_on_rc(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_device_attr d;
	struct ibv_sge sg[3];
	uint64_t val;

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	if (d.atomic_cap == IBV_ATOMIC_NONE) {
		CHECK(opcode_rows(&a, &b, NULL, ops, DIM(ops), EOPNOTSUPP));
		return 0;
	}
	for (int row = 0; row < 4; row++) {
		vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 8);
		wr[1].opcode = row & 1 ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + WRITE_OFF;
		wr[1].wr.atomic.rkey = b.mr->rkey;
		if (row == 0)
			sg[0].length = 4;
		if (row == 1)
			sg[0].length = 16;
		if (row == 2)
			wr[1].wr.atomic.remote_addr += 4;
		if (row == 3)
			wr[1].wr.atomic.remote_addr += 1;
		if (vp_send_list_check(&a, &b, NULL, wr, EINVAL) != 0) {
			fprintf(stderr, "  ... atomic row %d\n", row);
			return TEST_FAILED;
		}
	}
	/* well-formed READ and FETCH_ADD are posted and complete (the harness MR
	 * has no REMOTE_ATOMIC: a second MR over the target) */
	xmr = ibv_reg_mr(b.pd, b.buf + WRITE_OFF, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	TEST_ASSERT(xmr != NULL, "ibv_reg_mr: %s", strerror(errno));
	vp_fill(b.buf + WRITE_OFF, MSG, 99);
	val = 40;
	memcpy(b.buf + WRITE_OFF + MSG, &val, 8);
	vp_mk_send(&wr[0], &sg[0], &a, &b, NULL, 0x9000, MSG);
	wr[0].wr_id = 0x140;
	wr[0].opcode = IBV_WR_RDMA_READ;
	vp_mk_send(&wr[1], &sg[1], &a, &b, NULL, 0x9100, 8);
	wr[1].wr_id = 0x141;
	wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + WRITE_OFF + MSG;
	wr[1].wr.atomic.rkey = xmr->rkey;
	wr[1].wr.atomic.compare_add = 2;
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
	CHECK(vp_expect_send(&a, 0x140, IBV_WC_RDMA_READ));
	CHECK(vp_expect_send(&a, 0x141, IBV_WC_FETCH_ADD));
	TEST_ASSERT(memcmp(a.buf + 0x9000, b.buf + WRITE_OFF, MSG) == 0, "READ data differs");
	memcpy(&val, a.buf + 0x9100, 8);
	TEST_ASSERT_EQ(val, 40);
	memcpy(&val, b.buf + WRITE_OFF + MSG, 8);
	TEST_ASSERT_EQ(val, 42);
	return 0;
}

static int
test_post_send_inline_over_max_einval(void)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[2];
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(vp_query(a.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_inline_data, 128);
	/* one SGE of max + 1 bytes */
	vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 129);
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	/* the sum over SGEs counts */
	vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 64);
	sg[1] = sg[0];
	sg[1].length = 65;
	wr[1].num_sge = 2;
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	/* RDMA WRITE too */
	vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 129);
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	/* exactly max_inline_data is fine */
	vp_fill(a.buf + 0x8000, 128, 86);
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	vp_mk_send(&wr[0], &sg[0], &a, &b, NULL, 0x8000, 128);
	wr[0].wr_id = 0x80;
	wr[0].send_flags |= IBV_SEND_INLINE;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr[0], &bad), 0);
	CHECK(vp_expect_send(&a, 0x80, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf + 0x8000, 128, 0, ANY_ID));	/* earlier rows left receives */
	/*
	 * and a QP created with max_inline_data 0 takes what its SGEs would
	 * occupy (4 x 16 bytes), as rxe rounds it up: 65 bytes are too many
	 */
	{
		const struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_sge = 4 };

		CHECK(vp_extra_pair(&x, &y, &o));
		CHECK(vp_query(x.qp, &at));
		TEST_ASSERT_EQ(at.cap.max_inline_data, 4 * sizeof(struct ibv_sge));
		vp_mk_send(&wr[1], &sg[0], &x, &y, NULL, 0x8000, 65);
		wr[1].send_flags |= IBV_SEND_INLINE;
		CHECK(vp_send_list_check(&x, &y, NULL, wr, EINVAL));
	}
	return 0;
}

static int
bad_flag(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
	 enum ibv_wr_opcode op, unsigned int flags)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	vp_mk_send(&wr[1], &sg, s, r, uah, 0x8000, MSG);
	wr[1].opcode = op;
	wr[1].send_flags = flags;
	if (vp_send_list_check(s, r, uah, wr, EINVAL) != 0) {
		fprintf(stderr, "  ... with opcode %d send_flags %#x\n", op, flags);
		return TEST_FAILED;
	}
	return 0;
}

static int
test_post_send_invalid_flags_einval(void)
{
	const struct h_qp_opts oud = { .type = IBV_QPT_UD }, ouc = { .type = IBV_QPT_UC };
	const unsigned int sig = IBV_SEND_SIGNALED;

	/* FENCE: RC only */
	CHECK(vp_extra_pair(&x, &y, &oud));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	CHECK(bad_flag(&x, &y, ah, IBV_WR_SEND, sig | IBV_SEND_FENCE));
	CHECK(vp_extra_pair(&u, &v, &ouc));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_SEND, sig | IBV_SEND_FENCE));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_FENCE));
	/* SOLICITED: SEND and RDMA_WRITE_WITH_IMM only */
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_SOLICITED));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_SOLICITED));
	/* flags droce does not know or support */
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | IBV_SEND_IP_CSUM));
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | (1u << 5)));
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | 0x80000000u));
	CHECK(bad_flag(&x, &y, ah, IBV_WR_SEND, sig | (1u << 12)));
	return 0;
}

static int
test_post_send_valid_flags_accepted(void)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t r1, r2, r3;

	vp_fill(a.buf, 3 * SLOT, 87);
	CHECK(vp_recv1(&b, NULL, SLOT, &r1));
	CHECK(vp_recv1(&b, NULL, SLOT, &r2));
	CHECK(vp_recv1(&b, NULL, SLOT, &r3));
	/* FENCE on RC; SOLICITED on SEND; unsignaled SEND (sq_sig_all = 0) */
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x90, IBV_SEND_SIGNALED | IBV_SEND_FENCE));
	CHECK(vp_send1(&a, &b, NULL, SLOT, MSG, 0x91, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
	CHECK(vp_send1(&a, &b, NULL, 2 * SLOT, MSG, 0x92, 0));
	/* SOLICITED on RDMA_WRITE_WITH_IMM */
	vp_mk_send(&wr, &sge, &a, &b, NULL, 0, MSG);
	wr.wr_id = 0x93;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x1234);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	CHECK(vp_recv1(&b, NULL, SLOT, NULL));
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	CHECK(vp_expect_send(&a, 0x90, IBV_WC_SEND));
	CHECK(vp_expect_send(&a, 0x91, IBV_WC_SEND));
	CHECK(vp_expect_send(&a, 0x93, IBV_WC_RDMA_WRITE));	/* 0x92 is unsignaled */
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, r1));
	CHECK(vp_expect_recv(&b, a.buf + SLOT, MSG, 0, r2));
	CHECK(vp_expect_recv(&b, a.buf + 2 * SLOT, MSG, 0, r3));
	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(wc.imm_data, htonl(0x1234));
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "wc_flags %#x", wc.wc_flags);
	TEST_ASSERT(memcmp(b.buf + WRITE_OFF, a.buf, MSG) == 0, "RDMA WRITE data differs");
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

static int
test_post_send_over_max_msg_einval(void)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg[2];

	/* 2^31 + 1 bytes (max_msg_sz is 2^31): refused before any byte is read */
	vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 0x80000000u);
	sg[1] = sg[0];
	sg[1].length = 1;
	wr[1].num_sge = 2;
	CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	vp_mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 0x80000000u);
	sg[1] = sg[0];
	sg[1].length = 1;
	wr[1].num_sge = 2;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	CHECK(vp_send_list_check(&a, &b, NULL, wr, EINVAL));
	return 0;
}

/* --- post: UD specifics --- */

static int
test_post_send_ud_over_port_mtu_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[2];
	uint64_t rid;

	CHECK(vp_extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	/* exactly the MTU goes through, after the 40 GRH bytes (before any
	 * small receive is queued) */
	vp_fill(x.buf + 0x8000, 4096, 88);
	CHECK(vp_recv1(&y, NULL, 4096 + GRH, &rid));
	vp_mk_send(&wr[0], &sg[0], &x, &y, ah, 0x8000, 4096);
	wr[0].wr_id = 0xa0;
	TEST_ASSERT_EQ(ibv_post_send(x.qp, &wr[0], &bad), 0);
	CHECK(vp_expect_send(&x, 0xa0, IBV_WC_SEND));
	CHECK(vp_expect_recv(&y, x.buf + 0x8000, 4096, GRH, rid));
	/* port MTU 4096: one byte more in one SGE, and spread over two */
	vp_mk_send(&wr[1], &sg[0], &x, &y, ah, 0x8000, 4097);
	CHECK(vp_send_list_check(&x, &y, ah, wr, EINVAL));
	vp_mk_send(&wr[1], &sg[0], &x, &y, ah, 0x8000, 4000);
	sg[1] = sg[0];
	sg[1].length = 97;
	wr[1].num_sge = 2;
	CHECK(vp_send_list_check(&x, &y, ah, wr, EINVAL));
	return 0;
}

static int
test_post_send_ud_null_ah_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	CHECK(vp_extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	vp_mk_send(&wr[1], &sg, &x, &y, ah, 0x8000, MSG);
	wr[1].wr.ud.ah = NULL;
	CHECK(vp_send_list_check(&x, &y, ah, wr, EINVAL));
	return 0;
}

/* --- IBV_SEND_INLINE --- */

static int
test_inline_buffer_reusable_on_return_lkey_ignored(void)
{
	uint8_t want_send[100], want_write[50], stackbuf[50];
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sg[2];
	struct ibv_wc wc;
	uint8_t *heap;
	uint64_t rid;

	/* b has no receive yet: the SEND is RNR-NAKed and sent again later, from droce's copy */
	heap = malloc(100);		/* not registered at all */
	TEST_ASSERT(heap != NULL, "malloc");
	vp_fill(heap, 100, 89);
	memcpy(want_send, heap, 100);
	sg[0].addr = (uintptr_t)heap;
	sg[0].length = 60;
	sg[0].lkey = 0xdeadbeef;
	sg[1].addr = (uintptr_t)heap + 60;
	sg[1].length = 40;
	sg[1].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb0;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(heap, 0xee, 100);
	free(heap);			/* ASan: any later read by droce is a use after free */

	vp_fill(stackbuf, 50, 90);
	memcpy(want_write, stackbuf, 50);
	sg[0].addr = (uintptr_t)stackbuf;
	sg[0].length = 50;
	sg[0].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb1;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + WRITE_OFF;
	wr.wr.rdma.rkey = b.mr->rkey;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(stackbuf, 0xee, 50);

	CHECK(vp_expect_none(a.scq, b.rcq, 50));
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	CHECK(vp_expect_send(&a, 0xb0, IBV_WC_SEND));
	CHECK(vp_expect_send(&a, 0xb1, IBV_WC_RDMA_WRITE));
	CHECK(vp_expect_recv(&b, want_send, 100, 0, rid));
	TEST_ASSERT(memcmp(b.buf + WRITE_OFF, want_write, 50) == 0, "inline WRITE data differs");

	/* the same bad lkey without INLINE is checked: local protection error */
	vp_fill(a.buf, MSG, 91);
	CHECK(vp_recv1(&b, NULL, SLOT, NULL));
	sg[0].addr = (uintptr_t)a.buf;
	sg[0].length = MSG;
	sg[0].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb2;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc.wr_id, 0xb2);
	TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	return 0;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_post_send_sq_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_recv_rq_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_srq_recv_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_queues_full_exact_over_wraps_flush_and_reset),
	TEST_CASE(test_post_send_num_sge_over_max_einval),
	TEST_CASE(test_post_recv_num_sge_over_max_einval),
	TEST_CASE(test_post_srq_recv_num_sge_over_max_einval),
	TEST_CASE(test_post_null_list_einval),
	TEST_CASE(test_post_send_opcode_not_for_ud_einval),
	TEST_CASE(test_post_send_opcode_not_for_uc_einval),
	TEST_CASE(test_post_send_opcode_unsupported_on_rc),
	TEST_CASE(test_post_send_read_atomic_on_rc),
	TEST_CASE(test_post_send_inline_over_max_einval),
	TEST_CASE(test_post_send_invalid_flags_einval),
	TEST_CASE(test_post_send_valid_flags_accepted),
	TEST_CASE(test_post_send_over_max_msg_einval),
	TEST_CASE(test_post_send_ud_over_port_mtu_einval),
	TEST_CASE(test_post_send_ud_null_ah_einval),
	TEST_CASE(test_inline_buffer_reusable_on_return_lkey_ignored),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_post", cases, vp_setup, vp_teardown);
}
