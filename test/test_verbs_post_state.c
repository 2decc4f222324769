/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs facade's states and control path, through the public API
 * against the man pages (ibv_modify_qp, ibv_create_*, ibv_query_*): what a
 * post does in each QP state; a rejected ibv_modify_qp changes nothing,
 * RESET discards WRs; create-time limits; the device, port, GID and P_Key
 * queries. verbs_post_common.h has the rig.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_post_common.h"

/* --- devices and queries --- */

static int
test_device_list_is_exactly_droce0_droce1(void)
{
	char n0[64] = "", n1[64] = "";
	bool term = false;
	int num = -1;
	struct ibv_device **l = ibv_get_device_list(&num);

	TEST_ASSERT(l != NULL, "ibv_get_device_list: %s", strerror(errno));
	if (num == 2) {
		snprintf(n0, sizeof(n0), "%s", ibv_get_device_name(l[0]));
		snprintf(n1, sizeof(n1), "%s", ibv_get_device_name(l[1]));
		term = l[2] == NULL;
	}
	ibv_free_device_list(l);
	TEST_ASSERT_EQ(num, 2);
	TEST_ASSERT(strcmp(n0, "droce0") == 0, "device 0 is \"%s\"", n0);
	TEST_ASSERT(strcmp(n1, "droce1") == 0, "device 1 is \"%s\"", n1);
	TEST_ASSERT(term, "the list is not NULL-terminated");
	return 0;
}

static int
test_query_device_limits_equal_config(void)
{
	struct ibv_device_attr d;

	memset(&d, 0xa5, sizeof(d));
	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	TEST_ASSERT_EQ(d.max_qp, DROCE_MAX_QP);
	TEST_ASSERT_EQ(d.max_qp_wr, DROCE_MAX_QP_WR);
	TEST_ASSERT_EQ(d.max_sge, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_sge_rd, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_cq, DROCE_MAX_CQ);
	TEST_ASSERT_EQ(d.max_cqe, DROCE_MAX_CQE);
	/* MR index 0 is never used (keys are index << 8), so one fewer */
	TEST_ASSERT_EQ(d.max_mr, DROCE_MAX_MR - 1);
	TEST_ASSERT_EQ(d.max_mr_size, DROCE_MAX_MR_SIZE);
	TEST_ASSERT_EQ(d.max_pd, DROCE_MAX_PD);
	TEST_ASSERT_EQ(d.max_ah, DROCE_MAX_AH);
	TEST_ASSERT_EQ(d.max_srq, DROCE_MAX_SRQ);
	TEST_ASSERT_EQ(d.max_srq_wr, DROCE_MAX_SRQ_WR);
	TEST_ASSERT_EQ(d.max_srq_sge, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_qp_rd_atom, DROCE_MAX_RD_ATOMIC);
	TEST_ASSERT_EQ(d.max_qp_init_rd_atom, DROCE_MAX_RD_ATOMIC);
	TEST_ASSERT_EQ(d.max_pkeys, DROCE_PKEY_TBL_LEN);
	TEST_ASSERT_EQ(d.vendor_id, DROCE_VENDOR_ID);
	TEST_ASSERT_EQ(d.vendor_part_id, DROCE_VENDOR_PART_ID);
	TEST_ASSERT_EQ(d.phys_port_cnt, 1);
	/* NONE while atomics are not implemented; droce's CPU atomics are HCA-wide */
	TEST_ASSERT(d.atomic_cap == IBV_ATOMIC_NONE || d.atomic_cap == IBV_ATOMIC_HCA,
		    "atomic_cap %d", d.atomic_cap);
	return 0;
}

static int
test_query_port_ethernet_active_mtu4096_gid_table(void)
{
	struct ibv_context *ctx[2] = { a.ctx, b.ctx };
	struct ibv_port_attr p;

	for (int i = 0; i < 2; i++) {
		memset(&p, 0xa5, sizeof(p));
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 1, &p), 0);
		TEST_ASSERT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
		TEST_ASSERT_EQ(p.state, IBV_PORT_ACTIVE);
		TEST_ASSERT_EQ(p.active_mtu, IBV_MTU_4096);
		TEST_ASSERT_EQ(p.max_mtu, IBV_MTU_4096);
		TEST_ASSERT_EQ(p.gid_tbl_len, DROCE_GID_TBL_LEN);
		TEST_ASSERT_EQ(p.pkey_tbl_len, DROCE_PKEY_TBL_LEN);
		TEST_ASSERT_EQ(p.max_msg_sz, DROCE_MAX_MSG);
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 2, &p), EINVAL);
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 0, &p), EINVAL);
	}
	return 0;
}

static int
test_query_gid_index0_is_v4mapped_ip_others_empty(void)
{
	static const uint8_t g0[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 };
	static const uint8_t g1[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 };
	union ibv_gid g;

	memset(&g, 0xa5, sizeof(g));
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, 0, &g), 0);
	TEST_ASSERT(memcmp(g.raw, g0, 16) == 0, "droce0 GID 0 is not ::ffff:10.0.0.1");
	memset(&g, 0xa5, sizeof(g));
	TEST_ASSERT_EQ(ibv_query_gid(b.ctx, 1, 0, &g), 0);
	TEST_ASSERT(memcmp(g.raw, g1, 16) == 0, "droce1 GID 0 is not ::ffff:10.0.0.2");
	/* an empty entry of the table reads as zeros, as from the kernel */
	for (int i = 1; i < DROCE_GID_TBL_LEN; i++) {
		static const uint8_t zero[16];

		memset(&g, 0xa5, sizeof(g));
		TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, i, &g), 0);
		TEST_ASSERT(memcmp(g.raw, zero, 16) == 0, "GID %d is not zero", i);
	}
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, DROCE_GID_TBL_LEN, &g), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, -1, &g), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 2, 0, &g), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	return 0;
}

static int
test_query_pkey_index0_is_ffff_index1_fails(void)
{
	__be16 pk = 0;

	TEST_ASSERT_EQ(ibv_query_pkey(a.ctx, 1, 0, &pk), 0);
	TEST_ASSERT_EQ(pk, htons(0xffff));
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_pkey(a.ctx, 1, 1, &pk), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	return 0;
}

static int
test_query_gid_ex_reports_roce_v2(void)
{
	struct ibv_gid_entry e;
	union ibv_gid g;

	TEST_ASSERT_EQ(ibv_query_gid(b.ctx, 1, 0, &g), 0);
	memset(&e, 0xa5, sizeof(e));
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 0, &e, 0), 0);
	TEST_ASSERT_EQ(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	TEST_ASSERT(memcmp(e.gid.raw, g.raw, 16) == 0, "GID differs from ibv_query_gid's");
	TEST_ASSERT_EQ(e.gid_index, 0);
	TEST_ASSERT_EQ(e.port_num, 1);
	/* an empty entry is ENODATA (the kernel's rdma_get_gid_attr), beyond the table EINVAL */
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 1, &e, 0), ENODATA);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, DROCE_GID_TBL_LEN - 1, &e, 0), ENODATA);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, DROCE_GID_TBL_LEN, &e, 0), EINVAL);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 2, 0, &e, 0), EINVAL);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 0, &e, 1), EINVAL);
	return 0;
}

/* ibv_query_gid_table lists the populated entries only: one, index 0 */
static int
test_query_gid_table_lists_populated_entries(void)
{
	struct ibv_gid_entry t[DROCE_GID_TBL_LEN + 1], e;

	memset(t, 0xa5, sizeof(t));
	TEST_ASSERT_EQ(ibv_query_gid_table(a.ctx, t, sizeof(t) / sizeof(t[0]), 0), 1);
	TEST_ASSERT_EQ(ibv_query_gid_ex(a.ctx, 1, 0, &e, 0), 0);
	TEST_ASSERT(memcmp(&t[0], &e, sizeof(e)) == 0, "the table's entry is GID 0's");
	TEST_ASSERT_EQ(t[1].gid_index, 0xa5a5a5a5);	/* nothing written after it */
	TEST_ASSERT_EQ(ibv_query_gid_table(a.ctx, t, 1, 0), 1);
	TEST_ASSERT_EQ(ibv_query_gid_table(a.ctx, t, 0, 0), -EINVAL);
	TEST_ASSERT_EQ(ibv_query_gid_table(a.ctx, t, 1, 1), -EINVAL);
	return 0;
}

/* --- create-time limits --- */

static struct ibv_qp_init_attr
small_qp(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	return qa;
}

#define EXPECT_QP_FAILS(qa, err) do { \
	struct ibv_qp *_q; \
	errno = 0; \
	_q = ibv_create_qp(a.pd, &(qa)); \
	if (_q) \
		ibv_destroy_qp(_q); \
	TEST_ASSERT(_q == NULL, "ibv_create_qp succeeded"); \
	TEST_ASSERT_EQ(errno, err); \
} while (0)

static int
test_create_qp_over_device_limits_einval(void)
{
	struct ibv_device_attr d;
	struct ibv_qp_init_attr qa;
	struct ibv_qp *q;

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	qa = small_qp();
	qa.cap.max_send_wr = d.max_qp_wr + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_recv_wr = d.max_qp_wr + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_send_sge = d.max_sge + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_recv_sge = d.max_sge + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_inline_data = DROCE_MAX_INLINE + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.send_cq = NULL;
	EXPECT_QP_FAILS(qa, EINVAL);

	/* exactly at every limit: created, and the caps reported back */
	qa = small_qp();
	qa.cap.max_send_wr = d.max_qp_wr;
	qa.cap.max_recv_wr = d.max_qp_wr;
	qa.cap.max_send_sge = d.max_sge;
	qa.cap.max_recv_sge = d.max_sge;
	qa.cap.max_inline_data = DROCE_MAX_INLINE;
	q = ibv_create_qp(a.pd, &qa);
	TEST_ASSERT(q != NULL, "ibv_create_qp at the limits: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_qp(q), 0);
	TEST_ASSERT(qa.cap.max_send_wr >= (uint32_t)d.max_qp_wr, "max_send_wr %u", qa.cap.max_send_wr);
	TEST_ASSERT(qa.cap.max_inline_data >= DROCE_MAX_INLINE, "max_inline %u",
		    qa.cap.max_inline_data);
	return 0;
}

static int
test_create_qp_unsupported_type_eopnotsupp(void)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER,	/* XRC: test_xrc */
	};
	struct ibv_qp_init_attr qa;

	for (size_t i = 0; i < DIM(types); i++) {
		qa = small_qp();
		qa.qp_type = types[i];
		EXPECT_QP_FAILS(qa, EOPNOTSUPP);
	}
	return 0;
}

static int
test_create_cq_cqe_out_of_range_einval(void)
{
	static const int bad[] = { 0, -1, DROCE_MAX_CQE + 1 };
	struct ibv_cq *cq;

	for (size_t i = 0; i < DIM(bad); i++) {
		errno = 0;
		cq = ibv_create_cq(a.ctx, bad[i], NULL, NULL, 0);
		if (cq)
			ibv_destroy_cq(cq);
		TEST_ASSERT(cq == NULL, "ibv_create_cq(cqe %d) succeeded", bad[i]);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	errno = 0;
	cq = ibv_create_cq(a.ctx, 1, NULL, NULL, 1);	/* comp_vector >= num_comp_vectors */
	if (cq)
		ibv_destroy_cq(cq);
	TEST_ASSERT(cq == NULL, "ibv_create_cq(comp_vector 1) succeeded");
	TEST_ASSERT_EQ(errno, EINVAL);
	/* the bounds themselves are fine */
	cq = ibv_create_cq(a.ctx, 1, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq(1): %s", strerror(errno));
	TEST_ASSERT(cq->cqe >= 1, "cqe %d", cq->cqe);
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	cq = ibv_create_cq(a.ctx, DROCE_MAX_CQE, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq(max_cqe): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	return 0;
}

static int
test_reg_mr_remote_write_needs_local_write_einval(void)
{
	static const int bad[] = {
		IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_mr *mr;

	for (size_t i = 0; i < DIM(bad); i++) {
		errno = 0;
		mr = ibv_reg_mr(a.pd, a.buf, 4096, bad[i]);
		if (mr)
			ibv_dereg_mr(mr);
		TEST_ASSERT(mr == NULL, "ibv_reg_mr(access %#x) succeeded", bad[i]);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	mr = ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT(mr != NULL, "REMOTE_READ alone: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	TEST_ASSERT(mr != NULL, "LOCAL_WRITE|REMOTE_WRITE: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return 0;
}

static int
test_create_srq_over_limits_einval(void)
{
	struct ibv_device_attr d;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *s;
	struct {
		uint32_t wr, sge;
	} bad[3];

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	bad[0].wr = d.max_srq_wr + 1;
	bad[0].sge = 1;
	bad[1].wr = 0;
	bad[1].sge = 1;
	bad[2].wr = 16;
	bad[2].sge = d.max_srq_sge + 1;
	for (size_t i = 0; i < DIM(bad); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.attr.max_wr = bad[i].wr;
		sa.attr.max_sge = bad[i].sge;
		errno = 0;
		s = ibv_create_srq(a.pd, &sa);
		if (s)
			ibv_destroy_srq(s);
		TEST_ASSERT(s == NULL, "ibv_create_srq(max_wr %u max_sge %u) succeeded",
			    bad[i].wr, bad[i].sge);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = d.max_srq_wr;
	sa.attr.max_sge = d.max_srq_sge;
	s = ibv_create_srq(a.pd, &sa);
	TEST_ASSERT(s != NULL, "ibv_create_srq at the limits: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_srq(s), 0);
	return 0;
}

static int
test_modify_srq_limit_above_max_wr_einval(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr at;

	srq = ibv_create_srq(a.pd, &sa);
	TEST_ASSERT(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.max_wr, 16);
	TEST_ASSERT_EQ(at.srq_limit, 0);
	at.srq_limit = at.max_wr + 1;
	TEST_ASSERT_EQ(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), EINVAL);
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.srq_limit, 0);		/* unchanged */
	at.srq_limit = 8;
	TEST_ASSERT_EQ(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), 0);
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.srq_limit, 8);
	return 0;
}

/* --- post: the QP state and the SRQ --- */

static int
test_post_recv_on_srq_qp_einval_bad_is_1st(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	uint64_t rid;

	CHECK(vp_srq_pair(16, 1));
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(y.qp, wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	/* none of them went anywhere: a message finds no receive ... */
	vp_fill(x.buf, MSG, 81);
	CHECK(vp_send1(&x, &y, NULL, 0, MSG, 0x60, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(y.rcq, x.scq, QUIET_MS));
	/* ... until one is posted to the SRQ */
	CHECK(vp_recv1(&y, srq, SLOT, &rid));
	CHECK(vp_expect_recv(&y, x.buf, MSG, 0, rid));
	CHECK(vp_expect_send(&x, 0x60, IBV_WC_SEND));
	return 0;
}

static int
test_post_recv_in_reset_einval_bad_is_1st(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	uint64_t rid;

	TEST_ASSERT_EQ(vp_to_reset(b.qp), 0);
	TEST_ASSERT_EQ(h_qp_state(b.qp), IBV_QPS_RESET);
	for (int i = 0; i < 3; i++)
		vp_mk_recv(&wr[i], &sg[i], &b, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	CHECK(vp_reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_1024));
	/* nothing was posted: a message waits (RNR) until a receive is posted */
	vp_fill(a.buf, MSG, 82);
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x61, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(b.rcq, a.scq, QUIET_MS));
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, rid));
	CHECK(vp_expect_send(&a, 0x61, IBV_WC_SEND));
	return 0;
}

static int
test_post_send_before_rts_einval_bad_is_1st(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sg[3];
	uint64_t rid;

	x.ctx = h_open(0);
	y.ctx = h_open(1);
	TEST_ASSERT(x.ctx != NULL && y.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&y, y.ctx, &o), 0);
	vp_fill(x.buf, MSG, 83);
	for (int i = 0; i < 3; i++) {
		vp_mk_send(&wr[i], &sg[i], &x, &y, NULL, 0, MSG);
		wr[i].wr_id = 0x70 + i;
	}
	LINK3(wr);
	for (int step = 0; step < 3; step++) {
		/* step 0: RESET, 1: INIT, 2: RTR */
		if (step == 1)
			TEST_ASSERT_EQ(h_to_init(x.qp, IBV_QPT_RC), 0);
		if (step == 2)
			TEST_ASSERT_EQ(vp_to_rtr(x.qp, IBV_QPT_RC, &y, IBV_MTU_1024), 0);
		bad = NULL;
		TEST_ASSERT_EQ(ibv_post_send(x.qp, wr, &bad), EINVAL);
		TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	}
	/* receives may be posted from INIT on */
	TEST_ASSERT_EQ(h_to_init(y.qp, IBV_QPT_RC), 0);
	CHECK(vp_recv1(&y, NULL, SLOT, &rid));
	TEST_ASSERT_EQ(vp_to_rtr(y.qp, IBV_QPT_RC, &x, IBV_MTU_1024), 0);
	TEST_ASSERT_EQ(vp_to_rts(y.qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(vp_to_rts(x.qp, IBV_QPT_RC), 0);
	/* none of the refused WRs runs once the QP can send */
	CHECK(vp_expect_none(x.scq, y.rcq, QUIET_MS));
	/* and the receive posted in INIT takes the first real message */
	vp_fill(x.buf + SLOT, MSG, 84);
	CHECK(vp_send1(&x, &y, NULL, SLOT, MSG, 0x7f, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&x, 0x7f, IBV_WC_SEND));
	CHECK(vp_expect_recv(&y, x.buf + SLOT, MSG, 0, rid));
	CHECK(vp_expect_none(x.scq, y.rcq, QUIET_MS));
	return 0;
}

/* IBA 10.3.1 (SQ Drain): the SQ takes new WRs but does not start them until RTS. */
static int
test_post_send_in_sqd_queued_until_rts(void)
{
	struct ibv_qp_attr at;
	uint64_t rid;

	vp_fill(a.buf, MSG, 98);
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_SQD;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	/* the drain is immediate with nothing outstanding */
	TEST_ASSERT_EQ(h_qp_state(a.qp), IBV_QPS_SQD);
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x110, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	CHECK(vp_expect_send(&a, 0x110, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, rid));
	return 0;
}

/* Posting in ERR is accepted; everything completes with WR_FLUSH_ERR, signaled or not. */
static int
test_post_in_err_accepted_and_flushed(void)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[4];
	uint64_t rid;

	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x120, IBV_SEND_SIGNALED));
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x121, 0));
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	memset(wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 2, WAIT_MS), 2);
	TEST_ASSERT_EQ(wc[0].wr_id, 0x120);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc[1].wr_id, 0x121);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc[0].wr_id, rid);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

/*
 * Drive progress for @ms without taking a completion (ibv_poll_cq of 0
 * entries progresses inline), so that completions pile up in the CQs.
 */
static void
drive(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;
	uint64_t end = h_now_ms() + (uint64_t)ms;

	while (h_now_ms() < end) {
		ibv_poll_cq(cq, 0, &wc);
		usleep(200);
	}
}

/* A second RC QP on @s's PD and CQs. */
static struct ibv_qp *
qp_on_cqs_of(const struct h_side *s)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(s->pd, &qa);
}

/*
 * RESET takes the QP's completions still held in its CQs away (mlx5 does,
 * rdma-core's test_mr_rereg_* count on it: a QP brought back from ERR must
 * not meet the flushes of its past), and only those: another QP's
 * completions in the same CQs stay, in their order. ibv_destroy_qp does
 * the same. a2/b2 share a's and b's CQs.
 */
static int
test_reset_purges_the_qps_completions_only(void)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct h_side a2 = a, b2 = b;
	struct ibv_wc wc[8];
	uint64_t r1, r2, rf;
	int got;

	a2.qp = qp_on_cqs_of(&a);
	b2.qp = qp_on_cqs_of(&b);
	TEST_ASSERT(a2.qp != NULL && b2.qp != NULL, "ibv_create_qp: %s", strerror(errno));
	TEST_ASSERT_EQ(h_to_init(a2.qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(h_to_init(b2.qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(vp_to_rtr(a2.qp, IBV_QPT_RC, &b2, IBV_MTU_1024), 0);
	TEST_ASSERT_EQ(vp_to_rtr(b2.qp, IBV_QPT_RC, &a2, IBV_MTU_1024), 0);
	TEST_ASSERT_EQ(vp_to_rts(a2.qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(vp_to_rts(b2.qp, IBV_QPT_RC), 0);
	/* a2 -> b2 once; then a and b flush; then a2 -> b2 again: nothing polled */
	CHECK(vp_recv1(&b2, NULL, SLOT, &r1));
	CHECK(vp_send1(&a2, &b2, NULL, 0, MSG, 0x201, IBV_SEND_SIGNALED));
	drive(a.scq, 100);
	CHECK(vp_recv1(&b, NULL, SLOT, &rf));
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x1f1, IBV_SEND_SIGNALED));
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x1f2, 0));
	drive(a.scq, 100);
	CHECK(vp_recv1(&b2, NULL, SLOT, &r2));
	CHECK(vp_send1(&a2, &b2, NULL, 0, MSG, 0x202, IBV_SEND_SIGNALED));
	drive(a.scq, 100);
	/* a's two send flushes and b's receive flush go with RESET */
	TEST_ASSERT_EQ(vp_to_reset(a.qp), 0);
	TEST_ASSERT_EQ(vp_to_reset(b.qp), 0);
	memset(wc, 0, sizeof(wc));
	got = h_poll(a.scq, wc, 8, QUIET_MS);
	TEST_ASSERT_EQ(got, 2);
	TEST_ASSERT_EQ(wc[0].wr_id, 0x201);
	TEST_ASSERT_EQ(wc[1].wr_id, 0x202);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].qp_num, a2.qp->qp_num);
	}
	memset(wc, 0, sizeof(wc));
	got = h_poll(b.rcq, wc, 8, QUIET_MS);
	TEST_ASSERT_EQ(got, 2);
	TEST_ASSERT_EQ(wc[0].wr_id, r1);
	TEST_ASSERT_EQ(wc[1].wr_id, r2);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].qp_num, b2.qp->qp_num);
		TEST_ASSERT_EQ(wc[i].byte_len, MSG);
	}
	/* a and b, brought back, meet nothing of their past */
	CHECK(vp_reconnect(&a, &b, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(vp_reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(vp_recv1(&b, NULL, SLOT, &r1));
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0x301, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&a, 0x301, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, r1));
	/* destroy: a2's completion held in a.scq goes with it */
	CHECK(vp_recv1(&b2, NULL, SLOT, &r2));
	CHECK(vp_send1(&a2, &b2, NULL, 0, MSG, 0x203, IBV_SEND_SIGNALED));
	drive(a.scq, 100);
	TEST_ASSERT_EQ(ibv_destroy_qp(a2.qp), 0);
	TEST_ASSERT_EQ(ibv_destroy_qp(b2.qp), 0);
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

/*
 * ibv_dealloc_pd of a PD that an MR, a QP, an SRQ or an AH still uses is
 * EBUSY, as the kernel answers (uverbs_free_pd), and frees nothing: each
 * object still works; once the last is gone the PD goes.
 */
static int
test_dealloc_pd_in_use_ebusy(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .dgid = b.gid } };
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(a.ctx);
	static uint8_t buf[4096];
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_srq *s;
	struct ibv_ah *h;

	TEST_ASSERT(pd != NULL, "ibv_alloc_pd");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mr != NULL, "ibv_reg_mr");
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	qp = ibv_create_qp(pd, &qa);
	TEST_ASSERT(qp != NULL, "ibv_create_qp");
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(h_to_init(qp, IBV_QPT_RC), 0);	/* still usable */
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	s = ibv_create_srq(pd, &sa);
	TEST_ASSERT(s != NULL, "ibv_create_srq");
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_srq(s), 0);
	h = ibv_create_ah(pd, &aa);
	TEST_ASSERT(h != NULL, "ibv_create_ah");
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_ah(h), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), 0);
	return 0;
}

/* --- ibv_modify_qp --- */

static int
test_modify_rejected_on_rts_changes_nothing(void)
{
	struct ibv_qp_attr q0, q1, at;
	uint64_t rid;
	static const struct {
		enum ibv_qp_state to;
		int mask;
		const char *what;
	} rows[] = {
		{ IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		  "RTS->INIT" },
		{ IBV_QPS_RTR, RTR_RC_MASK, "RTS->RTR" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER,
		  "min_rnr_timer 32 out of range" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_DEST_QPN,
		  "DEST_QPN not allowed RTS->RTS" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP, "IBV_QP_CAP" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CUR_STATE,
		  "cur_qp_state RTR" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
		  "alt_port_num 0" },
	};

	CHECK(vp_query(a.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_RTS);
	TEST_ASSERT_EQ(q0.path_mtu, IBV_MTU_1024);
	TEST_ASSERT_EQ(q0.dest_qp_num, b.qp->qp_num);
	TEST_ASSERT_EQ(q0.qp_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT_EQ(q0.timeout, 14);
	TEST_ASSERT_EQ(q0.min_rnr_timer, 1);
	TEST_ASSERT_EQ(q0.port_num, 1);
	for (size_t i = 0; i < DIM(rows); i++) {
		/* different values everywhere, so that any partial apply shows */
		vp_rtr_attr(&at, &a, IBV_MTU_256);
		at.qp_state = rows[i].to;
		at.cur_qp_state = IBV_QPS_RTR;
		at.qp_access_flags = 0;
		at.port_num = 1;
		at.min_rnr_timer = 32;
		at.dest_qp_num = 0x123;
		at.rq_psn = 0x456;
		at.max_dest_rd_atomic = 3;
		at.cap.max_send_wr = 1;
		at.alt_port_num = 0;
		if (i == 0 || i == 1)
			at.min_rnr_timer = 5;
		TEST_ASSERT(ibv_modify_qp(a.qp, &at, rows[i].mask) == EINVAL,
			    "%s: not EINVAL", rows[i].what);
		CHECK(vp_query(a.qp, &q1));
		if (vp_same_attrs(&q0, &q1) != 0) {
			fprintf(stderr, "  ... after %s\n", rows[i].what);
			return TEST_FAILED;
		}
		TEST_ASSERT_EQ(a.qp->state, IBV_QPS_RTS);
	}
	/* a good RTS->RTS does change what it names */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.min_rnr_timer = 2;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), 0);
	CHECK(vp_query(a.qp, &q1));
	TEST_ASSERT_EQ(q1.min_rnr_timer, 2);
	TEST_ASSERT_EQ(q1.qp_access_flags, q0.qp_access_flags);
	/* and the QP still works, RDMA WRITE (access flags) included */
	vp_fill(a.buf, MSG, 92);
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0xc0, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&a, 0xc0, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, rid));
	{
		struct ibv_send_wr wr, *bad = NULL;
		struct ibv_sge sge;

		/* b -> a: a's access flags are what matter */
		vp_fill(b.buf + 0x8000, MSG, 93);
		vp_mk_send(&wr, &sge, &b, &a, NULL, 0x8000, MSG);
		wr.wr_id = 0xc1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), 0);
		CHECK(vp_expect_send(&b, 0xc1, IBV_WC_RDMA_WRITE));
		TEST_ASSERT(memcmp(a.buf + WRITE_OFF, b.buf + 0x8000, MSG) == 0,
			    "RDMA WRITE data differs");
	}
	return 0;
}

static int
test_modify_missing_required_attr_changes_nothing(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_qp_attr q0, q1, at;

	x.ctx = h_open(0);
	TEST_ASSERT(x.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	/* RESET -> INIT without ACCESS_FLAGS */
	CHECK(vp_query(x.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_RESET);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
		       EINVAL);
	CHECK(vp_query(x.qp, &q1));
	CHECK(vp_same_attrs(&q0, &q1));
	TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RESET);
	TEST_ASSERT_EQ(h_to_init(x.qp, IBV_QPT_RC), 0);

	/* INIT -> RTR: without RQ_PSN; bad AV; max_dest_rd_atomic too big; path_mtu 0 / 4096+1 */
	CHECK(vp_query(x.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_INIT);
	for (int row = 0; row < 5; row++) {
		int mask = RTR_RC_MASK;

		vp_rtr_attr(&at, &b, IBV_MTU_2048);
		at.rq_psn = 0x777;
		at.max_dest_rd_atomic = 4;
		at.min_rnr_timer = 12;
		if (row == 0)
			mask &= ~IBV_QP_RQ_PSN;
		if (row == 1)
			at.ah_attr.grh.dgid.raw[10] = 0;	/* not ::ffff:a.b.c.d */
		if (row == 2)
			at.max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC + 1;
		if (row == 3)
			at.path_mtu = 0;
		if (row == 4)
			at.path_mtu = IBV_MTU_4096 + 1;
		TEST_ASSERT(ibv_modify_qp(x.qp, &at, mask) == EINVAL, "INIT->RTR row %d", row);
		CHECK(vp_query(x.qp, &q1));
		if (vp_same_attrs(&q0, &q1) != 0) {
			fprintf(stderr, "  ... after INIT->RTR row %d\n", row);
			return TEST_FAILED;
		}
		TEST_ASSERT_EQ(x.qp->state, IBV_QPS_INIT);
	}
	/* the complete one applies all of it */
	vp_rtr_attr(&at, &b, IBV_MTU_2048);
	at.rq_psn = 0x777;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 12;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, RTR_RC_MASK), 0);
	CHECK(vp_query(x.qp, &q1));
	TEST_ASSERT_EQ(q1.qp_state, IBV_QPS_RTR);
	TEST_ASSERT_EQ(q1.path_mtu, IBV_MTU_2048);
	TEST_ASSERT_EQ(q1.dest_qp_num, b.qp->qp_num);
	TEST_ASSERT_EQ(q1.rq_psn, 0x777);
	TEST_ASSERT_EQ(q1.max_dest_rd_atomic, 4);
	TEST_ASSERT_EQ(q1.min_rnr_timer, 12);
	TEST_ASSERT(memcmp(q1.ah_attr.grh.dgid.raw, b.gid.raw, 16) == 0, "dgid not applied");

	/* RTR -> RTS without TIMEOUT */
	q0 = q1;
	vp_rts_attr(&at);
	at.sq_psn = 0x888;
	at.retry_cnt = 3;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, RTS_RC_MASK & ~IBV_QP_TIMEOUT), EINVAL);
	CHECK(vp_query(x.qp, &q1));
	CHECK(vp_same_attrs(&q0, &q1));
	TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RTR);
	return 0;
}

static int
test_modify_reset_to_err_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	static const enum ibv_qp_state bad[] = { IBV_QPS_ERR, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD };
	struct ibv_qp_attr at;

	x.ctx = h_open(0);
	TEST_ASSERT(x.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	for (size_t i = 0; i < DIM(bad); i++) {
		memset(&at, 0, sizeof(at));
		at.qp_state = bad[i];
		TEST_ASSERT(ibv_modify_qp(x.qp, &at, IBV_QP_STATE) == EINVAL, "RESET->%d", bad[i]);
		TEST_ASSERT_EQ(h_qp_state(x.qp), IBV_QPS_RESET);
		TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RESET);
	}
	/* RESET->RESET is valid, and so are INIT->ERR, ERR->RESET */
	TEST_ASSERT_EQ(vp_to_reset(x.qp), 0);
	TEST_ASSERT_EQ(h_to_init(x.qp, IBV_QPT_RC), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_qp_state(x.qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(vp_to_reset(x.qp), 0);
	TEST_ASSERT_EQ(h_qp_state(x.qp), IBV_QPS_RESET);
	return 0;
}

static int
test_modify_cur_state_mismatch_einval(void)
{
	static const enum ibv_qp_state wrong[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
	};
	struct ibv_qp_attr at;
	uint64_t rid;

	for (size_t i = 0; i < DIM(wrong); i++) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.cur_qp_state = wrong[i];
		TEST_ASSERT(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE) == EINVAL,
			    "cur_qp_state %d on an RTS QP", wrong[i]);
		TEST_ASSERT_EQ(h_qp_state(a.qp), IBV_QPS_RTS);
	}
	/* the true current state is accepted */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.cur_qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	TEST_ASSERT_EQ(h_qp_state(a.qp), IBV_QPS_RTS);
	/* RTS -> ERR claiming to be in RTR: refused, the QP keeps working */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	at.cur_qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	TEST_ASSERT_EQ(h_qp_state(a.qp), IBV_QPS_RTS);
	vp_fill(a.buf, MSG, 94);
	CHECK(vp_recv1(&b, NULL, SLOT, &rid));
	CHECK(vp_send1(&a, &b, NULL, 0, MSG, 0xd0, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&a, 0xd0, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf, MSG, 0, rid));
	return 0;
}

static int
test_modify_path_mtu_4096_multi_packet(void)
{
	const uint32_t len = 3 * 4096 + 123;
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(vp_reconnect(&a, &b, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(vp_reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(vp_query(a.qp, &at));
	TEST_ASSERT_EQ(at.path_mtu, IBV_MTU_4096);
	vp_fill(a.buf, len, 95);
	CHECK(vp_recv1(&b, NULL, len, &rid));
	CHECK(vp_send1(&a, &b, NULL, 0, len, 0xe0, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&a, 0xe0, IBV_WC_SEND));
	CHECK(vp_expect_recv(&b, a.buf, len, 0, rid));
	return 0;
}

static int
test_modify_path_mtu_above_port_mtu_clamped(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	const uint32_t len = 10000;
	struct ibv_device *d2 = NULL, *d3 = NULL;
	struct ibv_port_attr pa;
	int num = 0;
	uint64_t rid;

	/* droce2 <-> droce3 over their own ring pair, ethdev MTU 1500: IB MTU 1024 */
	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_vpm0", "net_ring_vpm1"), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce2", "ethdev=net_ring_vpm0,ip=10.0.1.1,mtu=1500"), 0);
	made_droce2 = true;
	TEST_ASSERT_EQ(droce_dev_create("droce3", "ethdev=net_ring_vpm1,ip=10.0.1.2,mtu=1500"), 0);
	made_droce3 = true;
	mlist = ibv_get_device_list(&num);
	TEST_ASSERT(mlist != NULL, "ibv_get_device_list: %s", strerror(errno));
	TEST_ASSERT_EQ(num, 4);
	for (int i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(mlist[i]), "droce2") == 0)
			d2 = mlist[i];
		if (strcmp(ibv_get_device_name(mlist[i]), "droce3") == 0)
			d3 = mlist[i];
	}
	TEST_ASSERT(d2 != NULL && d3 != NULL, "droce2/droce3 not listed");
	m.ctx = ibv_open_device(d2);
	n.ctx = ibv_open_device(d3);
	TEST_ASSERT(m.ctx != NULL && n.ctx != NULL, "ibv_open_device: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_query_port(m.ctx, 1, &pa), 0);
	TEST_ASSERT_EQ(pa.active_mtu, IBV_MTU_1024);
	TEST_ASSERT_EQ(h_side_create(&m, m.ctx, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&n, n.ctx, &o), 0);
	/* path_mtu 4096 on a 1024 port: accepted, and 10000 bytes get through */
	CHECK(vp_reconnect(&m, &n, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(vp_reconnect(&n, &m, IBV_QPT_RC, IBV_MTU_4096));
	{
		struct ibv_qp_attr at;

		CHECK(vp_query(m.qp, &at));
		TEST_ASSERT(at.path_mtu == IBV_MTU_4096 || at.path_mtu == IBV_MTU_1024,
			    "path_mtu %d: neither as set nor clamped", at.path_mtu);
	}
	vp_fill(m.buf, len, 96);
	CHECK(vp_recv1(&n, NULL, len, &rid));
	CHECK(vp_send1(&m, &n, NULL, 0, len, 0xf0, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(&m, 0xf0, IBV_WC_SEND));
	CHECK(vp_expect_recv(&n, m.buf, len, 0, rid));
	return 0;
}

static int
test_modify_rts_to_reset_discards_wrs_then_reconnect_works(void)
{
	struct ibv_send_wr wr[64], *bad = NULL;
	struct ibv_recv_wr rwr[64], *rbad = NULL;
	struct ibv_sge sg[64], rsg[64];
	struct ibv_wc wc[64];

	/* a: four SENDs stuck on RNR (b has no receive); b: two receives */
	vp_fill(a.buf, 64 * SLOT, 97);
	for (int i = 0; i < 4; i++)
		CHECK(vp_send1(&a, &b, NULL, i * SLOT, MSG, 0x100 + i, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(a.scq, NULL, 50));
	TEST_ASSERT_EQ(vp_to_reset(a.qp), 0);
	TEST_ASSERT_EQ(h_qp_state(a.qp), IBV_QPS_RESET);
	TEST_ASSERT_EQ(a.qp->state, IBV_QPS_RESET);
	CHECK(vp_recv1(&b, NULL, SLOT, NULL));
	CHECK(vp_recv1(&b, NULL, SLOT, NULL));
	TEST_ASSERT_EQ(vp_to_reset(b.qp), 0);
	/* discarded: no completion, not even a flush */
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	CHECK(vp_expect_none(b.scq, a.rcq, 1));

	CHECK(vp_reconnect(&a, &b, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(vp_reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_1024));
	/* both queues are whole again: 64 receives and 64 sends in one post each */
	for (int i = 0; i < 64; i++) {
		vp_mk_recv(&rwr[i], &rsg[i], &b, SLOT);
		rwr[i].next = i < 63 ? &rwr[i + 1] : NULL;
		vp_mk_send(&wr[i], &sg[i], &a, &b, NULL, i * SLOT, MSG);
		wr[i].wr_id = 0x200 + i;
		wr[i].next = i < 63 ? &wr[i + 1] : NULL;
	}
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, rwr, &rbad), 0);
	TEST_ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 64, WAIT_MS), 64);
	for (int i = 0; i < 64; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, 0x200 + i);
	}
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, 64, WAIT_MS), 64);
	for (int i = 0; i < 64; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, rwr[i].wr_id);
		TEST_ASSERT_EQ(wc[i].byte_len, MSG);
		TEST_ASSERT(memcmp(b.buf + wc[i].wr_id, a.buf + i * SLOT, MSG) == 0,
			    "message %d differs", i);
	}
	CHECK(vp_expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_device_list_is_exactly_droce0_droce1),
	TEST_CASE(test_query_device_limits_equal_config),
	TEST_CASE(test_query_port_ethernet_active_mtu4096_gid_table),
	TEST_CASE(test_query_gid_index0_is_v4mapped_ip_others_empty),
	TEST_CASE(test_query_pkey_index0_is_ffff_index1_fails),
	TEST_CASE(test_query_gid_ex_reports_roce_v2),
	TEST_CASE(test_query_gid_table_lists_populated_entries),
	TEST_CASE(test_create_qp_over_device_limits_einval),
	TEST_CASE(test_create_qp_unsupported_type_eopnotsupp),
	TEST_CASE(test_create_cq_cqe_out_of_range_einval),
	TEST_CASE(test_reg_mr_remote_write_needs_local_write_einval),
	TEST_CASE(test_create_srq_over_limits_einval),
	TEST_CASE(test_modify_srq_limit_above_max_wr_einval),
	TEST_CASE(test_post_recv_on_srq_qp_einval_bad_is_1st),
	TEST_CASE(test_post_recv_in_reset_einval_bad_is_1st),
	TEST_CASE(test_post_send_before_rts_einval_bad_is_1st),
	TEST_CASE(test_post_send_in_sqd_queued_until_rts),
	TEST_CASE(test_post_in_err_accepted_and_flushed),
	TEST_CASE(test_reset_purges_the_qps_completions_only),
	TEST_CASE(test_dealloc_pd_in_use_ebusy),
	TEST_CASE(test_modify_rejected_on_rts_changes_nothing),
	TEST_CASE(test_modify_missing_required_attr_changes_nothing),
	TEST_CASE(test_modify_reset_to_err_einval),
	TEST_CASE(test_modify_cur_state_mismatch_einval),
	TEST_CASE(test_modify_path_mtu_4096_multi_packet),
	TEST_CASE(test_modify_path_mtu_above_port_mtu_clamped),
	TEST_CASE(test_modify_rts_to_reset_discards_wrs_then_reconnect_works),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_post_state", cases, vp_setup, vp_teardown);
}
