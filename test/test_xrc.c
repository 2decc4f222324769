/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC between droce0 (the initiator: an XRC_SEND QP) and droce1 (the
 * target: an XRC_RECV QP and XRC SRQs of its domain), harness.h: SENDs into
 * two SRQs through one target, RDMA WRITE/READ and atomics checked against
 * the SRQ's PD, requests naming another domain's SRQ or none, the domain's
 * lifetime (EBUSY, sharing by file), ibv_open_qp, the errnos of posting
 * where XRC QPs have no queue, the extended QP's ibv_wr_set_xrc_srqn, the
 * target's IBV_EVENT_QP_LAST_WQE_REACHED and its delivery to every handle
 * on the target (ibv_open_qp); memory windows over XRC: type 1 windows
 * bound on droce1's own XRC_SEND QP serve XRC requests, type 2 windows
 * never do (no window is associated with an XRC_RECV QP), LOCAL_INV on an
 * XRC_SEND QP, SEND with Invalidate over XRC.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

#define BUF_LEN		(256 * 1024)
#define SRQ_WR		16

/* Initiator side (droce0) and target side (droce1). */
static struct ibv_context *ca, *cb;
static struct ibv_pd *pa, *pb;
static struct ibv_mr *ma, *mb;
static uint8_t *bufa, *bufb;
static struct ibv_cq *scq, *rcq1, *rcq2, *rcq3;
static struct ibv_xrcd *xrcd, *xrcd2;
static struct ibv_srq *srq1, *srq2, *srq3;	/* srq3: xrcd2's */
static struct ibv_qp *ini, *tgt;
static uint32_t srqn1, srqn2, srqn3;
/*
 * droce1's windows (memory window cases): an XRC_SEND QP that binds them,
 * its CQ, an MR; an RC pair on droce0 (ra) and droce1 (rb, on pb)
 */
static struct ibv_cq *bcq;
static struct ibv_qp *bqp;
static struct ibv_mr *mbw;
static struct ibv_mw *mw1, *mw2;

static void
fill_ah(struct ibv_context *peer, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ibv_query_gid(peer, 1, 0, &ah->grh.dgid);
	ah->is_global = 1;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

static int
to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

/* The masks the kernel's qp_state_table asks of each XRC half, no more. */
static int
connect_ini_to(struct ibv_qp *qp, struct ibv_context *peer, uint32_t dqpn, uint8_t retry_cnt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = dqpn, .rq_psn = 0x123 };

	fill_ah(peer, &a.ah_attr);
	if (to_init(qp, 0) ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x456;
	a.timeout = 14;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int
connect_ini(struct ibv_qp *qp, uint32_t dqpn, uint8_t retry_cnt)
{
	return connect_ini_to(qp, cb, dqpn, retry_cnt);
}

static int
connect_tgt(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = dqpn, .rq_psn = 0x456, .max_dest_rd_atomic = 4,
				 .min_rnr_timer = 1 };

	fill_ah(ca, &a.ah_attr);
	if (to_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC) ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = 14;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT);
}

static struct ibv_xrcd *
open_xrcd(struct ibv_context *c, int fd, int oflags)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(c, &xa);
}

static struct ibv_srq *
xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pb, .xrcd = x, .cq = cq,
	};
	struct ibv_srq *s = ibv_create_srq_ex(cb, &sa);

	if (s != NULL && ibv_get_srq_num(s, srqn) != 0) {
		ibv_destroy_srq(s);
		return NULL;
	}
	return s;
}

static struct ibv_qp *
xrc_recv_qp(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x,
	};

	return ibv_create_qp_ex(cb, &qa);
}

static struct ibv_qp *
xrc_send_qp(uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
		.cap = { .max_send_wr = 64, .max_send_sge = 2, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pa,
	};

	if (send_ops) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = send_ops;
	}
	return ibv_create_qp_ex(ca, &qa);
}

static struct h_side ra, rb;

static void
teardown(void)
{
	if (mw1) ibv_dealloc_mw(mw1);
	if (mw2) ibv_dealloc_mw(mw2);
	h_side_destroy(&ra);
	h_side_destroy(&rb);
	if (bqp) ibv_destroy_qp(bqp);
	if (bcq) ibv_destroy_cq(bcq);
	if (mbw) ibv_dereg_mr(mbw);
	mw1 = mw2 = NULL;
	bqp = NULL;
	bcq = NULL;
	mbw = NULL;
	if (ini) ibv_destroy_qp(ini);
	if (tgt) ibv_destroy_qp(tgt);
	if (srq1) ibv_destroy_srq(srq1);
	if (srq2) ibv_destroy_srq(srq2);
	if (srq3) ibv_destroy_srq(srq3);
	if (xrcd) ibv_close_xrcd(xrcd);
	if (xrcd2) ibv_close_xrcd(xrcd2);
	if (scq) ibv_destroy_cq(scq);
	if (rcq1) ibv_destroy_cq(rcq1);
	if (rcq2) ibv_destroy_cq(rcq2);
	if (rcq3) ibv_destroy_cq(rcq3);
	if (ma) ibv_dereg_mr(ma);
	if (mb) ibv_dereg_mr(mb);
	if (pa) ibv_dealloc_pd(pa);
	if (pb) ibv_dealloc_pd(pb);
	if (ca) ibv_close_device(ca);
	if (cb) ibv_close_device(cb);
	free(bufa);
	free(bufb);
	ini = tgt = NULL;
	srq1 = srq2 = srq3 = NULL;
	xrcd = xrcd2 = NULL;
	scq = rcq1 = rcq2 = rcq3 = NULL;
	ma = mb = NULL;
	pa = pb = NULL;
	ca = cb = NULL;
	bufa = bufb = NULL;
}

static int
setup(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	ca = h_open(0);
	cb = h_open(1);
	if (ca == NULL || cb == NULL)
		return -1;
	pa = ibv_alloc_pd(ca);
	pb = ibv_alloc_pd(cb);
	bufa = aligned_alloc(4096, BUF_LEN);
	bufb = aligned_alloc(4096, BUF_LEN);
	if (pa == NULL || pb == NULL || bufa == NULL || bufb == NULL)
		return -1;
	memset(bufa, 0, BUF_LEN);
	memset(bufb, 0, BUF_LEN);
	ma = ibv_reg_mr(pa, bufa, BUF_LEN, acc);
	mb = ibv_reg_mr(pb, bufb, BUF_LEN, acc);
	scq = ibv_create_cq(ca, 256, NULL, NULL, 0);
	rcq1 = ibv_create_cq(cb, 256, NULL, NULL, 0);
	rcq2 = ibv_create_cq(cb, 256, NULL, NULL, 0);
	rcq3 = ibv_create_cq(cb, 256, NULL, NULL, 0);
	xrcd = open_xrcd(cb, -1, O_CREAT);
	xrcd2 = open_xrcd(cb, -1, O_CREAT);
	if (ma == NULL || mb == NULL || scq == NULL || rcq1 == NULL || rcq2 == NULL ||
	    rcq3 == NULL || xrcd == NULL || xrcd2 == NULL)
		return -1;
	srq1 = xrc_srq(xrcd, rcq1, &srqn1);
	srq2 = xrc_srq(xrcd, rcq2, &srqn2);
	srq3 = xrc_srq(xrcd2, rcq3, &srqn3);
	tgt = xrc_recv_qp(xrcd);
	ini = xrc_send_qp(0);
	if (srq1 == NULL || srq2 == NULL || srq3 == NULL || tgt == NULL || ini == NULL)
		return -1;
	return connect_tgt(tgt, ini->qp_num) || connect_ini(ini, tgt->qp_num, 7) ? -1 : 0;
}

static int
post_srq(struct ibv_srq *s, size_t off, uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)bufb + off, len, mb->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

	return ibv_post_srq_recv(s, &wr, &bad);
}

/* A signaled WR from bufa + @off to XRC SRQ @srqn, through @rkey. */
static int
post_xrc_key(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t srqn, size_t off, uint32_t len,
	     uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)bufa + off, len, ma->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		wr.imm_data = htobe32(0xabcd0000 | (uint32_t)id);
	}
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* The same through bufb's MR. */
static int
post_xrc(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t srqn, size_t off, uint32_t len,
	 uint64_t raddr, uint64_t cmp_add, uint64_t swap, uint64_t id)
{
	return post_xrc_key(qp, op, srqn, off, len, raddr, mb->rkey, cmp_add, swap, id);
}

static void
pattern(uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

static int
expect_send_ok(uint64_t id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_poll(scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "wr %lu: %s", (unsigned long)id,
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.wr_id, id);
	TEST_ASSERT_EQ(wc.opcode, op);
	TEST_ASSERT_EQ(wc.qp_num, ini->qp_num);
	return TEST_SUCCESS;
}

static int
test_send_into_two_srqs_through_one_target(void)
{
	struct ibv_wc wc;

	CHECK(post_srq(srq1, 0, 8192, 11));
	CHECK(post_srq(srq2, 65536, 8192, 22));
	pattern(bufa, 3000, 1);
	pattern(bufa + 4096, 100, 2);
	/* three packets (path MTU 1024) into srq1, one with immediate data into srq2 */
	CHECK(post_xrc(ini, IBV_WR_SEND, srqn1, 0, 3000, 0, 0, 0, 1));
	CHECK(post_xrc(ini, IBV_WR_SEND_WITH_IMM, srqn2, 4096, 100, 0, 0, 0, 2));
	CHECK(expect_send_ok(1, IBV_WC_SEND));
	CHECK(expect_send_ok(2, IBV_WC_SEND));
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 11);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 3000);
	TEST_ASSERT_EQ(wc.qp_num, tgt->qp_num);
	TEST_ASSERT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	TEST_ASSERT(memcmp(bufb, bufa, 3000) == 0, "srq1's bytes differ");
	TEST_ASSERT_EQ(h_poll(rcq2, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 22);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 100);
	TEST_ASSERT_EQ(wc.qp_num, tgt->qp_num);
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "no immediate");
	TEST_ASSERT_EQ(be32toh(wc.imm_data), 0xabcd0002);
	TEST_ASSERT(memcmp(bufb + 65536, bufa + 4096, 100) == 0, "srq2's bytes differ");
	/* nothing went to the wrong CQ */
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 50), 0);
	TEST_ASSERT_EQ(h_poll(rcq2, &wc, 1, 0), 0);
	TEST_ASSERT_EQ(h_poll(rcq3, &wc, 1, 0), 0);
	return TEST_SUCCESS;
}

static int
test_write_read_atomics_over_xrc(void)
{
	uint64_t *remote = (uint64_t *)(bufb + 131072), v;
	struct ibv_wc wc;

	/* WRITE of five packets, READ back of them */
	pattern(bufa, 5000, 3);
	CHECK(post_xrc(ini, IBV_WR_RDMA_WRITE, srqn1, 0, 5000, (uintptr_t)bufb + 4096, 0, 0, 1));
	CHECK(expect_send_ok(1, IBV_WC_RDMA_WRITE));
	TEST_ASSERT(memcmp(bufb + 4096, bufa, 5000) == 0, "WRITE's bytes differ");
	CHECK(post_xrc(ini, IBV_WR_RDMA_READ, srqn2, 16384, 5000, (uintptr_t)bufb + 4096, 0, 0, 2));
	CHECK(expect_send_ok(2, IBV_WC_RDMA_READ));
	TEST_ASSERT(memcmp(bufa + 16384, bufa, 5000) == 0, "READ's bytes differ");
	/* atomics */
	*remote = 40;
	CHECK(post_xrc(ini, IBV_WR_ATOMIC_FETCH_AND_ADD, srqn1, 32768, 8, (uintptr_t)remote,
		       2, 0, 3));
	CHECK(expect_send_ok(3, IBV_WC_FETCH_ADD));
	memcpy(&v, bufa + 32768, 8);
	TEST_ASSERT_EQ(v, 40);
	TEST_ASSERT_EQ(*remote, 42);
	CHECK(post_xrc(ini, IBV_WR_ATOMIC_CMP_AND_SWP, srqn1, 32776, 8, (uintptr_t)remote,
		       42, 7, 4));
	CHECK(expect_send_ok(4, IBV_WC_COMP_SWAP));
	memcpy(&v, bufa + 32776, 8);
	TEST_ASSERT_EQ(v, 42);
	TEST_ASSERT_EQ(*remote, 7);
	/* WRITE with immediate takes a WQE of the SRQ it names */
	CHECK(post_srq(srq2, 0, 64, 22));
	pattern(bufa, 2048, 4);
	CHECK(post_xrc(ini, IBV_WR_RDMA_WRITE_WITH_IMM, srqn2, 0, 2048, (uintptr_t)bufb + 8192,
		       0, 0, 5));
	CHECK(expect_send_ok(5, IBV_WC_RDMA_WRITE));
	TEST_ASSERT_EQ(h_poll(rcq2, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 22);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(wc.byte_len, 2048);
	TEST_ASSERT_EQ(wc.qp_num, tgt->qp_num);
	TEST_ASSERT_EQ(be32toh(wc.imm_data), 0xabcd0005);
	TEST_ASSERT(memcmp(bufb + 8192, bufa, 2048) == 0, "WRITE_WITH_IMM's bytes differ");
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 20), 0);
	return TEST_SUCCESS;
}

/* Remote accesses are checked against the PD of the SRQ a request names. */
static int
test_rkey_of_another_pd_than_the_srqs_gives_rem_access_err(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(cb);
	struct ibv_mr *mr2;
	struct ibv_sge sge = { (uintptr_t)bufa, 64, ma->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad = NULL;
	struct ibv_wc wc;

	TEST_ASSERT(pd2 != NULL, "pd");
	mr2 = ibv_reg_mr(pd2, bufb, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	TEST_ASSERT(mr2 != NULL, "mr");
	wr.qp_type.xrc.remote_srqn = srqn1;
	wr.wr.rdma.remote_addr = (uintptr_t)bufb;
	wr.wr.rdma.rkey = mr2->rkey;
	TEST_ASSERT_EQ(ibv_post_send(ini, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 9);
	TEST_ASSERT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(h_qp_state(ini), IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr2), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);
	return TEST_SUCCESS;
}

/*
 * An SRQ of another domain: a remote access error (the domain is the
 * protection boundary); no such SRQ: an invalid request. Both fail the WR
 * on the requester and take both QPs to ERR; no SRQ gives up a WQE.
 */
static int
nak_case(uint32_t srqn, enum ibv_wc_status want)
{
	struct ibv_wc wc;

	CHECK(post_srq(srq1, 0, 4096, 11));
	CHECK(post_srq(srq3, 0, 4096, 33));
	CHECK(post_xrc(ini, IBV_WR_SEND, srqn, 0, 64, 0, 0, 0, 1));
	CHECK(post_xrc(ini, IBV_WR_SEND, srqn1, 0, 64, 0, 0, 0, 2));
	TEST_ASSERT_EQ(h_poll(scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	TEST_ASSERT(wc.status == want, "got %s, want %s", ibv_wc_status_str(wc.status),
		    ibv_wc_status_str(want));
	TEST_ASSERT_EQ(h_poll(scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(h_qp_state(ini), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state(tgt), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 50), 0);
	TEST_ASSERT_EQ(h_poll(rcq3, &wc, 1, 0), 0);
	return TEST_SUCCESS;
}

static int
test_srq_of_another_domain_gives_rem_access_err(void)
{
	return nak_case(srqn3, IBV_WC_REM_ACCESS_ERR);
}

static int
test_unknown_srq_gives_rem_inv_req_err(void)
{
	return nak_case(srqn1 ^ 0x800000, IBV_WC_REM_INV_REQ_ERR);
}

/* A destroyed SRQ's number names nothing, even once its slot is reused. */
static int
test_destroyed_srq_number_names_nothing(void)
{
	uint32_t old = srqn2, n;
	struct ibv_srq *s;

	TEST_ASSERT_EQ(ibv_destroy_srq(srq2), 0);
	srq2 = NULL;
	s = xrc_srq(xrcd, rcq2, &n);
	TEST_ASSERT(s != NULL, "srq");
	srq2 = s;
	TEST_ASSERT(n != old, "number %x reused", n);
	return nak_case(old, IBV_WC_REM_INV_REQ_ERR);
}

static int
test_close_xrcd_in_use_is_ebusy(void)
{
	struct ibv_cq *cq;

	TEST_ASSERT_EQ(ibv_close_xrcd(xrcd), EBUSY);
	/* the SRQ's CQ is in use too */
	TEST_ASSERT_EQ(ibv_destroy_cq(rcq1), EBUSY);
	/* the target goes first, then the SRQs, then the domain */
	TEST_ASSERT_EQ(ibv_destroy_qp(ini), 0);
	ini = NULL;
	TEST_ASSERT_EQ(ibv_destroy_qp(tgt), 0);
	tgt = NULL;
	TEST_ASSERT_EQ(ibv_close_xrcd(xrcd), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_srq(srq1), 0);
	srq1 = NULL;
	TEST_ASSERT_EQ(ibv_close_xrcd(xrcd), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_srq(srq2), 0);
	srq2 = NULL;
	TEST_ASSERT_EQ(ibv_close_xrcd(xrcd), 0);
	xrcd = NULL;
	cq = rcq1;
	rcq1 = NULL;
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	/* the PD the SRQs were on is free again */
	return TEST_SUCCESS;
}

static int
test_open_xrcd_flags_and_sharing_by_file(void)
{
	char path[] = "/tmp/droce_xrc_XXXXXX";
	int fd = mkstemp(path), fd2;
	struct ibv_xrcd *x1, *x2;
	struct ibv_srq *s;
	struct ibv_qp *t;
	struct ibv_wc wc;
	uint32_t n;

	TEST_ASSERT(fd >= 0, "mkstemp");
	fd2 = open(path, O_RDONLY);
	unlink(path);
	TEST_ASSERT(fd2 >= 0, "open");
	/* fd -1 needs O_CREAT; a file without a domain too; O_EXCL refuses an existing one */
	TEST_ASSERT(open_xrcd(cb, -1, 0) == NULL && errno == EINVAL, "fd -1 without O_CREAT");
	TEST_ASSERT(open_xrcd(cb, fd, 0) == NULL && errno == EINVAL, "no domain, no O_CREAT");
	TEST_ASSERT(open_xrcd(cb, 12345, O_CREAT) == NULL && errno == EBADF, "bad fd");
	x1 = open_xrcd(cb, fd, O_CREAT | O_EXCL);
	TEST_ASSERT(x1 != NULL, "create by file");
	TEST_ASSERT(open_xrcd(cb, fd2, O_CREAT | O_EXCL) == NULL && errno == EINVAL, "O_EXCL");
	x2 = open_xrcd(cb, fd2, 0);	/* another fd of the same file: the same domain */
	TEST_ASSERT(x2 != NULL, "open by file");
	/* a target made with one handle, an SRQ with the other: one domain */
	s = xrc_srq(x2, rcq3, &n);
	t = xrc_recv_qp(x1);
	TEST_ASSERT(s != NULL && t != NULL, "srq, qp");
	TEST_ASSERT_EQ(ibv_destroy_qp(ini), 0);
	ini = xrc_send_qp(0);
	TEST_ASSERT(ini != NULL, "ini");
	CHECK(connect_tgt(t, ini->qp_num));
	CHECK(connect_ini(ini, t->qp_num, 7));
	CHECK(post_srq(s, 0, 4096, 77));
	CHECK(post_xrc(ini, IBV_WR_SEND, n, 0, 1500, 0, 0, 0, 1));
	CHECK(expect_send_ok(1, IBV_WC_SEND));
	TEST_ASSERT_EQ(h_poll(rcq3, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 77);
	TEST_ASSERT_EQ(wc.byte_len, 1500);
	TEST_ASSERT_EQ(wc.qp_num, t->qp_num);
	/* each handle is busy with what it made */
	TEST_ASSERT_EQ(ibv_close_xrcd(x1), EBUSY);
	TEST_ASSERT_EQ(ibv_close_xrcd(x2), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_qp(t), 0);
	TEST_ASSERT_EQ(ibv_close_xrcd(x1), 0);
	TEST_ASSERT_EQ(ibv_destroy_srq(s), 0);
	TEST_ASSERT_EQ(ibv_close_xrcd(x2), 0);
	close(fd);
	close(fd2);
	return TEST_SUCCESS;
}

/* XRC QPs have no receive queue, an XRC target no send queue. */
static int
test_posting_where_xrc_qps_have_no_queue_is_einval(void)
{
	struct ibv_sge sge = { (uintptr_t)bufb, 64, mb->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	TEST_ASSERT_EQ(ibv_post_recv(tgt, &rwr, &rbad), EINVAL);
	TEST_ASSERT_PTR_EQ(rbad, &rwr);
	rbad = NULL;
	TEST_ASSERT_EQ(ibv_post_recv(ini, &rwr, &rbad), EINVAL);
	TEST_ASSERT_PTR_EQ(rbad, &rwr);
	TEST_ASSERT_EQ(ibv_post_send(tgt, &swr, &sbad), EINVAL);
	TEST_ASSERT_PTR_EQ(sbad, &swr);
	/* no ATOMIC WRITE over XRC yet: refused, not lost */
	{
		struct ibv_send_wr aw = swr;

		aw.opcode = IBV_WR_ATOMIC_WRITE;
		aw.wr.rdma.remote_addr = (uintptr_t)bufb;
		aw.wr.rdma.rkey = mb->rkey;
		sge.length = 8;
		sbad = NULL;
		TEST_ASSERT_EQ(ibv_post_send(ini, &aw, &sbad), EOPNOTSUPP);
		TEST_ASSERT_PTR_EQ(sbad, &aw);
		sge.length = 64;
	}
	/* an XRC_SEND QP cannot have an SRQ; an XRC_RECV QP needs a domain */
	{
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
					       .srq = srq1, .cap = { .max_send_wr = 1 } };
		struct ibv_qp_init_attr_ex qx = { .qp_type = IBV_QPT_XRC_RECV,
						  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pb };

		TEST_ASSERT(ibv_create_qp(pa, &qa) == NULL && errno == EINVAL, "XRC_SEND + SRQ");
		TEST_ASSERT(ibv_create_qp_ex(cb, &qx) == NULL && errno == EINVAL, "no XRCD");
	}
	/* what the QPs report */
	TEST_ASSERT_EQ(ibv_query_qp(tgt, &attr, IBV_QP_STATE | IBV_QP_CAP, &init), 0);
	TEST_ASSERT_EQ(attr.qp_state, IBV_QPS_RTS);
	TEST_ASSERT_EQ(init.qp_type, IBV_QPT_XRC_RECV);
	TEST_ASSERT_EQ(attr.cap.max_send_wr + attr.cap.max_recv_wr, 0);
	TEST_ASSERT_EQ(ibv_query_qp(ini, &attr, IBV_QP_CAP, &init), 0);
	TEST_ASSERT_EQ(init.qp_type, IBV_QPT_XRC_SEND);
	TEST_ASSERT_EQ(attr.cap.max_recv_wr, 0);
	return TEST_SUCCESS;
}

/* XRC state transitions: what each half needs, and no more. */
static int
test_xrc_state_transitions_take_each_halfs_masks(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = 5, .max_dest_rd_atomic = 1, .min_rnr_timer = 1 };
	struct ibv_qp *t = xrc_recv_qp(xrcd), *i = xrc_send_qp(0);

	TEST_ASSERT(t != NULL && i != NULL, "qps");
	CHECK(to_init(t, 0));
	CHECK(to_init(i, 0));
	fill_ah(ca, &a.ah_attr);
	/* the initiator has no responder attributes */
	TEST_ASSERT_EQ(ibv_modify_qp(i, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER), EINVAL);
	/* the target needs them */
	TEST_ASSERT_EQ(ibv_modify_qp(t, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), EINVAL);
	TEST_ASSERT_EQ(ibv_modify_qp(t, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(i, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	/* the target has no requester attributes, the initiator needs them */
	TEST_ASSERT_EQ(ibv_modify_qp(t, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT), EINVAL);
	TEST_ASSERT_EQ(ibv_modify_qp(t, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(i, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT), EINVAL);
	TEST_ASSERT_EQ(ibv_modify_qp(i, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC), 0);
	/* and no SQE for either (RC's rule) */
	a.qp_state = IBV_QPS_SQE;
	TEST_ASSERT_EQ(ibv_modify_qp(t, &a, IBV_QP_STATE), EINVAL);
	TEST_ASSERT_EQ(ibv_destroy_qp(i), 0);
	TEST_ASSERT_EQ(ibv_destroy_qp(t), 0);
	return TEST_SUCCESS;
}

/* ibv_open_qp: another handle on the target; the QP lives until the last goes. */
static int
test_open_qp_shares_the_target(void)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt->qp_num, .xrcd = xrcd, .qp_type = IBV_QPT_XRC_RECV,
	};
	uint32_t qpn = tgt->qp_num;
	struct ibv_qp *o;
	struct ibv_wc wc;

	oa.qp_type = IBV_QPT_RC;
	TEST_ASSERT(ibv_open_qp(cb, &oa) == NULL && errno == EINVAL, "type RC");
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.xrcd = xrcd2;	/* not this domain's */
	TEST_ASSERT(ibv_open_qp(cb, &oa) == NULL && errno == ENOENT, "another domain");
	oa.xrcd = xrcd;
	o = ibv_open_qp(cb, &oa);
	TEST_ASSERT(o != NULL, "ibv_open_qp: %s", strerror(errno));
	TEST_ASSERT_EQ(o->qp_num, qpn);
	TEST_ASSERT_EQ(o->qp_type, IBV_QPT_XRC_RECV);
	TEST_ASSERT_EQ(h_qp_state(o), IBV_QPS_RTS);
	/* the creator's handle goes; the QP stays and receives */
	TEST_ASSERT_EQ(ibv_destroy_qp(tgt), 0);
	tgt = o;
	CHECK(post_srq(srq1, 0, 4096, 11));
	CHECK(post_xrc(ini, IBV_WR_SEND, srqn1, 0, 2000, 0, 0, 0, 1));
	CHECK(expect_send_ok(1, IBV_WC_SEND));
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.qp_num, qpn);
	TEST_ASSERT_EQ(wc.byte_len, 2000);
	/* the last handle takes the QP with it */
	TEST_ASSERT_EQ(ibv_destroy_qp(o), 0);
	tgt = NULL;
	TEST_ASSERT(ibv_open_qp(cb, &oa) == NULL && errno == ENOENT, "gone");
	return TEST_SUCCESS;
}

/* The extended QP: ibv_wr_set_xrc_srqn names the SRQ of the WR being built. */
static int
test_wr_set_xrc_srqn_on_extended_qp(void)
{
	struct ibv_qp *q = xrc_send_qp(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ);
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;

	TEST_ASSERT(q != NULL, "create_qp_ex: %s", strerror(errno));
	qx = ibv_qp_to_qp_ex(q);
	TEST_ASSERT(qx != NULL, "qp_ex");
	TEST_ASSERT_EQ(ibv_destroy_qp(ini), 0);
	ini = q;
	TEST_ASSERT_EQ(ibv_destroy_qp(tgt), 0);
	tgt = xrc_recv_qp(xrcd);
	TEST_ASSERT(tgt != NULL, "tgt");
	CHECK(connect_tgt(tgt, ini->qp_num));
	CHECK(connect_ini(ini, tgt->qp_num, 7));
	CHECK(post_srq(srq2, 0, 4096, 22));
	pattern(bufa, 1200, 9);
	ibv_wr_start(qx);
	qx->wr_id = 5;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_xrc_srqn(qx, srqn2);
	ibv_wr_set_sge(qx, ma->lkey, (uintptr_t)bufa, 1200);
	TEST_ASSERT_EQ(ibv_wr_complete(qx), 0);
	CHECK(expect_send_ok(5, IBV_WC_SEND));
	TEST_ASSERT_EQ(h_poll(rcq2, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 22);
	TEST_ASSERT_EQ(wc.byte_len, 1200);
	TEST_ASSERT(memcmp(bufb, bufa, 1200) == 0, "bytes differ");
	return TEST_SUCCESS;
}

/* The next async event of cb within @ms, or -1. */
static int
tgt_event(struct ibv_async_event *ev, int ms)
{
	if (fcntl(cb->async_fd, F_SETFL, fcntl(cb->async_fd, F_GETFL) | O_NONBLOCK) != 0)
		return -1;
	return h_async_event(cb, ev, ms);
}

/* IBV_EVENT_QP_LAST_WQE_REACHED for the target, acknowledged, and nothing after it. */
static int
expect_last_wqe(void)
{
	struct ibv_async_event ev;

	TEST_ASSERT(tgt_event(&ev, 2000) == 0, "no IBV_EVENT_QP_LAST_WQE_REACHED");
	TEST_ASSERT(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED, "event %s",
		    ibv_event_type_str(ev.event_type));
	TEST_ASSERT_PTR_EQ(ev.element.qp, tgt);
	ibv_ack_async_event(&ev);
	TEST_ASSERT(tgt_event(&ev, 100) != 0, "another event: %s",
		    ibv_event_type_str(ev.event_type));
	return TEST_SUCCESS;
}

/*
 * The target found a remote access error: it is in ERR, reports
 * IBV_EVENT_QP_ACCESS_ERR and then IBV_EVENT_QP_LAST_WQE_REACHED.
 */
static int
expect_access_err(void)
{
	struct ibv_async_event ev;

	TEST_ASSERT_EQ(h_qp_state_wait(tgt, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
	TEST_ASSERT(tgt_event(&ev, 2000) == 0, "no IBV_EVENT_QP_ACCESS_ERR");
	TEST_ASSERT(ev.event_type == IBV_EVENT_QP_ACCESS_ERR, "event %s",
		    ibv_event_type_str(ev.event_type));
	TEST_ASSERT_PTR_EQ(ev.element.qp, tgt);
	ibv_ack_async_event(&ev);
	return expect_last_wqe();
}

/*
 * IBA 11.6.3 (man ibv_get_async_event): an XRC_RECV QP takes its WQEs from
 * XRC SRQs, so in ERR it reports IBV_EVENT_QP_LAST_WQE_REACHED, as a QP on
 * an SRQ does; once each time it enters ERR. The SRQs keep their WQEs.
 */
static int
test_xrc_recv_qp_to_err_raises_last_wqe_reached(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_wc wc;

	CHECK(post_srq(srq1, 0, 4096, 11));
	CHECK(post_srq(srq1, 4096, 4096, 12));
	CHECK(post_srq(srq2, 8192, 4096, 21));
	/* one message in: the target worked */
	CHECK(post_xrc(ini, IBV_WR_SEND, srqn1, 0, 1000, 0, 0, 0, 1));
	CHECK(expect_send_ok(1, IBV_WC_SEND));
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 11);
	TEST_ASSERT(tgt_event(&ev, 50) != 0, "event %s before ERR",
		    ibv_event_type_str(ev.event_type));
	TEST_ASSERT_EQ(ibv_modify_qp(tgt, &a, IBV_QP_STATE), 0);
	CHECK(expect_last_wqe());
	/* no flush of the SRQs' WQEs: they belong to the SRQs, not to the QP */
	TEST_ASSERT_EQ(h_poll(rcq1, &wc, 1, 50), 0);
	TEST_ASSERT_EQ(h_poll(rcq2, &wc, 1, 20), 0);
	/* reset and back: the next entry to ERR reports again */
	a.qp_state = IBV_QPS_RESET;
	TEST_ASSERT_EQ(ibv_modify_qp(tgt, &a, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(connect_tgt(tgt, ini->qp_num), 0);
	a.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(tgt, &a, IBV_QP_STATE), 0);
	CHECK(expect_last_wqe());
	return TEST_SUCCESS;
}

/*
 * The engine moves the target to ERR (an access violation, IBA 9.7.5.2.4):
 * IBV_EVENT_QP_ACCESS_ERR, then IBV_EVENT_QP_LAST_WQE_REACHED.
 */
static int
test_xrc_recv_qp_access_err_then_last_wqe_reached(void)
{
	struct ibv_sge sge = { (uintptr_t)bufa, 64, ma->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad = NULL;
	struct ibv_wc wc;

	wr.qp_type.xrc.remote_srqn = srqn1;
	wr.wr.rdma.remote_addr = (uintptr_t)bufb + BUF_LEN;	/* past the MR */
	wr.wr.rdma.rkey = mb->rkey;
	TEST_ASSERT_EQ(ibv_post_send(ini, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	return expect_access_err();
}

/* --- Memory windows over XRC (drivers/rdma/roce/roce_mw.c) --- */

#define WIN_OFF		(192 * 1024)	/* the windows span bufb[WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN		8192
#define WIN_RW		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)


/*
 * droce1's side of the window cases: an MR of pb that windows may be bound
 * to, and an XRC_SEND QP of pb in RTS (towards droce0; it never sends)
 * whose send queue binds and invalidates them.
 */
static int
win_setup(void)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND, .cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pb,
	};

	mbw = ibv_reg_mr(pb, bufb, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	bcq = ibv_create_cq(cb, 64, NULL, NULL, 0);
	TEST_ASSERT(mbw != NULL && bcq != NULL, "mr, cq");
	qa.send_cq = bcq;
	bqp = ibv_create_qp_ex(cb, &qa);
	TEST_ASSERT(bqp != NULL, "XRC_SEND QP on droce1: %s", strerror(errno));
	CHECK(connect_ini_to(bqp, ca, ini->qp_num, 7));
	return TEST_SUCCESS;
}

/* A BIND_MW WR on @qp giving type 2 window @mw the key @key over @mr at @addr. */
static int
bind2(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw, struct ibv_mr *mr, uint32_t key,
      uint64_t addr, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr,
							   .length = WIN_LEN,
							   .mw_access_flags = WIN_RW };
	TEST_ASSERT_EQ(ibv_post_send(qp, &wr, &bad), 0);
	CHECK(one_wc(cq, &wc, 0xb2, want, IBV_WC_BIND_MW));
	TEST_ASSERT_EQ(wc.qp_num, qp->qp_num);
	if (want == IBV_WC_SUCCESS)
		mw->rkey = key;		/* a type 2 window's key is the consumer's to keep */
	return TEST_SUCCESS;
}

static int
local_inv(struct ibv_qp *qp, struct ibv_cq *cq, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = 0x11, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.invalidate_rkey = rkey;
	TEST_ASSERT_EQ(ibv_post_send(qp, &wr, &bad), 0);
	CHECK(one_wc(cq, &wc, 0x11, want, IBV_WC_LOCAL_INV));
	return TEST_SUCCESS;
}

/* Both XRC halves back to RTS after an error, PSNs from the start. */
static int
reconnect(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	TEST_ASSERT_EQ(ibv_modify_qp(ini, &a, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(tgt, &a, IBV_QP_STATE), 0);
	CHECK(connect_tgt(tgt, ini->qp_num));
	CHECK(connect_ini(ini, tgt->qp_num, 7));
	return TEST_SUCCESS;
}

/*
 * 256 bytes of WRITE or READ over XRC through @rkey at droce1's @dst: a
 * remote access error (NAK), no byte moved either way, the target in ERR
 * with IBV_EVENT_QP_ACCESS_ERR then IBV_EVENT_QP_LAST_WQE_REACHED.
 */
static int
xrc_violation(enum ibv_wr_opcode op, uint8_t *dst, uint32_t rkey)
{
	struct ibv_wc wc;

	memset(dst, 0xee, 256);
	pattern(bufa, 256, 7);
	memset(bufa + 8192, 0x11, 256);
	CHECK(post_xrc_key(ini, op, srqn1, op == IBV_WR_RDMA_READ ? 8192 : 0, 256,
			   (uintptr_t)dst, rkey, 0, 0, 7));
	CHECK(one_wc(scq, &wc, 7, IBV_WC_REM_ACCESS_ERR, 0));
	for (int i = 0; i < 256; i++) {
		TEST_ASSERT_EQ(dst[i], 0xee);
		TEST_ASSERT_EQ(bufa[8192 + i], 0x11);
	}
	TEST_ASSERT_EQ(h_qp_state(ini), IBV_QPS_ERR);
	return expect_access_err();
}

/*
 * A type 2 window bound through an XRC_SEND QP is that QP's (as mlx5 binds
 * it), and no request ever arrives on an XRC_SEND QP; the XRC_RECV QP the
 * requests arrive on cannot bind one. So neither WRITE nor READ through it
 * over XRC: IBV_WC_REM_ACCESS_ERR. The window stays bound meanwhile.
 */
static int
test_type2_window_bound_on_xrc_send_qp_serves_no_xrc_request(void)
{
	uint32_t key;

	CHECK(win_setup());
	mw2 = ibv_alloc_mw(pb, IBV_MW_TYPE_2);
	TEST_ASSERT(mw2 != NULL, "alloc_mw: %s", strerror(errno));
	key = ibv_inc_rkey(mw2->rkey);
	CHECK(bind2(bqp, bcq, mw2, mbw, key, (uintptr_t)bufb + WIN_OFF, IBV_WC_SUCCESS));
	CHECK(xrc_violation(IBV_WR_RDMA_WRITE, bufb + WIN_OFF, key));
	CHECK(reconnect());
	CHECK(xrc_violation(IBV_WR_RDMA_READ, bufb + WIN_OFF, key));
	/* bound still: it invalidates (a free window would not, LOC_QP_OP_ERR) */
	CHECK(local_inv(bqp, bcq, key, IBV_WC_SUCCESS));
	/* and, free again, binds anew */
	key = ibv_inc_rkey(key);
	CHECK(bind2(bqp, bcq, mw2, mbw, key, (uintptr_t)bufb + WIN_OFF, IBV_WC_SUCCESS));
	return TEST_SUCCESS;
}

/*
 * A type 1 window bound through the same XRC_SEND QP is no QP's: XRC
 * requests use it as they use an MR of the SRQ's PD, within its bounds.
 */
static int
test_type1_window_bound_on_xrc_send_qp_serves_xrc_write_and_read(void)
{
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .length = WIN_LEN, .mw_access_flags = WIN_RW },
	};
	struct ibv_wc wc;

	CHECK(win_setup());
	mw1 = ibv_alloc_mw(pb, IBV_MW_TYPE_1);
	TEST_ASSERT(mw1 != NULL, "alloc_mw: %s", strerror(errno));
	bind.bind_info.mr = mbw;
	bind.bind_info.addr = (uintptr_t)bufb + WIN_OFF;
	TEST_ASSERT_EQ(ibv_bind_mw(bqp, mw1, &bind), 0);
	CHECK(one_wc(bcq, &wc, 0xb1, IBV_WC_SUCCESS, IBV_WC_BIND_MW));
	TEST_ASSERT_EQ(wc.qp_num, bqp->qp_num);
	/* three packets each way */
	pattern(bufa, 3000, 21);
	CHECK(post_xrc_key(ini, IBV_WR_RDMA_WRITE, srqn1, 0, 3000, (uintptr_t)bufb + WIN_OFF + 100,
			   mw1->rkey, 0, 0, 1));
	CHECK(expect_send_ok(1, IBV_WC_RDMA_WRITE));
	TEST_ASSERT(memcmp(bufb + WIN_OFF + 100, bufa, 3000) == 0, "WRITE's bytes differ");
	CHECK(post_xrc_key(ini, IBV_WR_RDMA_READ, srqn2, 16384, 3000,
			   (uintptr_t)bufb + WIN_OFF + 100, mw1->rkey, 0, 0, 2));
	CHECK(expect_send_ok(2, IBV_WC_RDMA_READ));
	TEST_ASSERT(memcmp(bufa + 16384, bufa, 3000) == 0, "READ's bytes differ");
	/* across the window's end */
	return xrc_violation(IBV_WR_RDMA_WRITE, bufb + WIN_OFF + WIN_LEN - 128, mw1->rkey);
}

/* 256 bytes of RDMA WRITE from ra to @raddr through @rkey: the completion's status. */
static int
rc_write(uint64_t raddr, uint32_t rkey, uint8_t seed, enum ibv_wc_status want)
{
	struct ibv_sge sge = { (uintptr_t)ra.buf, 256, ra.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x3c, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad = NULL;
	struct ibv_wc wc;

	pattern(ra.buf, 256, seed);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	TEST_ASSERT_EQ(ibv_post_send(ra.qp, &wr, &bad), 0);
	CHECK(one_wc(ra.scq, &wc, 0x3c, want, IBV_WC_RDMA_WRITE));
	return TEST_SUCCESS;
}

/*
 * A type 2 window bound to an RC QP serves that QP's peer, not an XRC
 * request (another QP: IBV_WC_REM_ACCESS_ERR); LOCAL_INV posted on an
 * XRC_SEND QP of its PD invalidates it, and the RC peer's next WRITE fails.
 */
static int
test_local_inv_on_xrc_send_qp_invalidates_a_window_of_an_rc_qp(void)
{
	const struct h_qp_opts oa = { .type = IBV_QPT_RC, .max_send_wr = 16, .buf_len = 65536 };
	const struct h_qp_opts ob = { .type = IBV_QPT_RC, .max_send_wr = 16, .buf_len = 65536,
				      .pd = pb, .mr_access = IBV_ACCESS_MW_BIND };
	uint32_t key;

	CHECK(win_setup());
	TEST_ASSERT(h_side_create(&ra, ca, &oa) == 0 && h_side_create(&rb, cb, &ob) == 0,
		    "RC sides");
	CHECK(h_connect(&ra, &rb, &oa));
	CHECK(h_connect(&rb, &ra, &ob));
	mw2 = ibv_alloc_mw(pb, IBV_MW_TYPE_2);
	TEST_ASSERT(mw2 != NULL, "alloc_mw: %s", strerror(errno));
	key = ibv_inc_rkey(mw2->rkey);
	CHECK(bind2(rb.qp, rb.scq, mw2, rb.mr, key, (uintptr_t)rb.buf + 4096, IBV_WC_SUCCESS));
	CHECK(rc_write((uintptr_t)rb.buf + 4096, key, 5, IBV_WC_SUCCESS));
	TEST_ASSERT(memcmp(rb.buf + 4096, ra.buf, 256) == 0, "RC WRITE's bytes differ");
	/* the window is the RC QP's: not the XRC target's */
	CHECK(xrc_violation(IBV_WR_RDMA_WRITE, rb.buf + 4096, key));
	CHECK(local_inv(bqp, bcq, key, IBV_WC_SUCCESS));
	memset(rb.buf + 4096, 0, 256);
	CHECK(rc_write((uintptr_t)rb.buf + 4096, key, 6, IBV_WC_REM_ACCESS_ERR));
	for (int i = 0; i < 256; i++)
		TEST_ASSERT_EQ(rb.buf[4096 + i], 0);
	/* free now: a second invalidation is a local QP operation error */
	CHECK(local_inv(bqp, bcq, key, IBV_WC_LOC_QP_OP_ERR));
	TEST_ASSERT_EQ(h_qp_state(bqp), IBV_QPS_ERR);
	return TEST_SUCCESS;
}

/*
 * SEND with Invalidate over XRC (XRC_SEND_ONLY_WITH_INVALIDATE, and
 * SEND_FIRST .. XRC_SEND_LAST_WITH_INVALIDATE): the IETH names a type 2
 * window, which is never the target's, so an invalid request: the SRQ's
 * receive WQE and the requester's WR complete with IBV_WC_REM_INV_REQ_ERR
 * (a request droce could not parse would be dropped, and time out), the
 * window stays bound.
 */
static int
test_send_with_inv_over_xrc_of_type2_window_rem_inv_req_err(void)
{
	static const uint32_t lens[] = { 100, 2500 };
	struct ibv_qp *q;
	uint32_t key;

	/* an extended XRC QP has it among its send ops */
	q = xrc_send_qp(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV);
	TEST_ASSERT(q != NULL, "create_qp_ex: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_qp(q), 0);
	CHECK(win_setup());
	mw2 = ibv_alloc_mw(pb, IBV_MW_TYPE_2);
	TEST_ASSERT(mw2 != NULL, "alloc_mw: %s", strerror(errno));
	key = ibv_inc_rkey(mw2->rkey);
	CHECK(bind2(bqp, bcq, mw2, mbw, key, (uintptr_t)bufb + WIN_OFF, IBV_WC_SUCCESS));
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct ibv_wc wc;

		if (i > 0)
			CHECK(reconnect());
		CHECK(post_srq(srq1, 0, 4096, 11));
		pattern(bufa, lens[i], 9);
		CHECK(post_xrc_key(ini, IBV_WR_SEND_WITH_INV, srqn1, 0, lens[i], 0, key, 0, 0, 1));
		CHECK(one_wc(scq, &wc, 1, IBV_WC_REM_INV_REQ_ERR, 0));
		CHECK(one_wc(rcq1, &wc, 11, IBV_WC_REM_INV_REQ_ERR, 0));
		TEST_ASSERT_EQ(wc.qp_num, tgt->qp_num);
		TEST_ASSERT_EQ(h_qp_state_wait(tgt, IBV_QPS_ERR, 1000), IBV_QPS_ERR);
		CHECK(expect_last_wqe());
	}
	CHECK(local_inv(bqp, bcq, key, IBV_WC_SUCCESS));
	return TEST_SUCCESS;
}

/* --- The target's async events, to every handle on it --- */

/* The next async event of @c within @ms, or -1 (the fd made non-blocking). */
static int
ctx_event(struct ibv_context *c, struct ibv_async_event *ev, int ms)
{
	if (fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) | O_NONBLOCK) != 0)
		return -1;
	return h_async_event(c, ev, ms);
}

/*
 * @c gets IBV_EVENT_QP_LAST_WQE_REACHED once for each of the @n handles in
 * @want (any order), each acknowledged on its handle, and nothing more.
 */
static int
last_wqe_for(struct ibv_context *c, struct ibv_qp *const *want, unsigned int n)
{
	uint32_t before[4];
	bool seen[4] = { false };
	struct ibv_async_event ev;

	for (unsigned int i = 0; i < n; i++)
		before[i] = want[i]->events_completed;
	for (unsigned int k = 0; k < n; k++) {
		unsigned int i;

		TEST_ASSERT(ctx_event(c, &ev, 2000) == 0, "event %u of %u missing", k + 1, n);
		TEST_ASSERT(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED, "event %s",
			    ibv_event_type_str(ev.event_type));
		for (i = 0; i < n && ev.element.qp != want[i]; i++)
			;
		TEST_ASSERT(i < n, "an event names handle %p, none of this context's",
			    (void *)ev.element.qp);
		TEST_ASSERT(!seen[i], "handle %u named twice", i);
		seen[i] = true;
		TEST_ASSERT(ev.element.qp->context == c, "the handle of another context");
		ibv_ack_async_event(&ev);
		TEST_ASSERT_EQ(want[i]->events_completed, before[i] + 1);
	}
	TEST_ASSERT(ctx_event(c, &ev, 100) != 0, "another event: %s naming %p",
		    ibv_event_type_str(ev.event_type), (void *)ev.element.qp);
	return TEST_SUCCESS;
}

/* The shared target through @via: RESET, to RTS, then ERR. */
static int
cycle_to_err(struct ibv_qp *via)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	TEST_ASSERT_EQ(ibv_modify_qp(via, &a, IBV_QP_STATE), 0);
	CHECK(connect_tgt(via, ini->qp_num));
	a.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(via, &a, IBV_QP_STATE), 0);
	return TEST_SUCCESS;
}

/*
 * Every handle on an XRC_RECV QP (its creator's, and each ibv_open_qp's, in
 * this context or another) gets the QP's async events through its own
 * context, naming itself, as the kernel's shared QP event handler does; a
 * handle destroyed gets none any more, the creator's included.
 */
static int
test_open_qp_handles_each_get_the_targets_async_events(void)
{
	char path[] = "/tmp/droce_xrc_XXXXXX";
	int fd = mkstemp(path);
	struct ibv_context *cb2 = h_open(1);
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE |
			     IBV_QP_OPEN_ATTR_CONTEXT,
		.qp_type = IBV_QPT_XRC_RECV, .qp_context = &oa,
	};
	struct ibv_xrcd *x1, *x2;
	struct ibv_qp *t, *o1, *o2;

	TEST_ASSERT(fd >= 0 && cb2 != NULL, "file, second context");
	unlink(path);
	x1 = open_xrcd(cb, fd, O_CREAT);
	x2 = open_xrcd(cb2, fd, 0);
	TEST_ASSERT(x1 != NULL && x2 != NULL, "domain shared by file");
	t = xrc_recv_qp(x1);
	TEST_ASSERT(t != NULL, "target");
	oa.qp_num = t->qp_num;
	oa.xrcd = x1;
	o1 = ibv_open_qp(cb, &oa);
	oa.xrcd = x2;
	o2 = ibv_open_qp(cb2, &oa);
	TEST_ASSERT(o1 != NULL && o2 != NULL, "ibv_open_qp: %s", strerror(errno));
	TEST_ASSERT(o1->context == cb && o2->context == cb2, "contexts");
	TEST_ASSERT_PTR_EQ(o2->qp_context, &oa);
	/* to ERR through the other context's handle: all three hear of it */
	CHECK(cycle_to_err(o2));
	CHECK(last_wqe_for(cb, (struct ibv_qp *const[]){ t, o1 }, 2));
	CHECK(last_wqe_for(cb2, (struct ibv_qp *const[]){ o2 }, 1));
	/* o1 goes: the others still hear */
	TEST_ASSERT_EQ(ibv_destroy_qp(o1), 0);
	CHECK(cycle_to_err(t));
	CHECK(last_wqe_for(cb, (struct ibv_qp *const[]){ t }, 1));
	CHECK(last_wqe_for(cb2, (struct ibv_qp *const[]){ o2 }, 1));
	/* the creator's handle goes: the QP stays, and o2 alone hears */
	TEST_ASSERT_EQ(ibv_destroy_qp(t), 0);
	CHECK(cycle_to_err(o2));
	CHECK(last_wqe_for(cb, NULL, 0));
	CHECK(last_wqe_for(cb2, (struct ibv_qp *const[]){ o2 }, 1));
	TEST_ASSERT_EQ(ibv_destroy_qp(o2), 0);
	TEST_ASSERT_EQ(ibv_close_xrcd(x1), 0);
	TEST_ASSERT_EQ(ibv_close_xrcd(x2), 0);
	TEST_ASSERT_EQ(ibv_close_device(cb2), 0);
	close(fd);
	return TEST_SUCCESS;
}

static int
test_device_advertises_xrc(void)
{
	struct ibv_device_attr da;

	TEST_ASSERT_EQ(ibv_query_device(cb, &da), 0);
	TEST_ASSERT(da.device_cap_flags & IBV_DEVICE_XRC, "no IBV_DEVICE_XRC");
	TEST_ASSERT(srqn1 != 0 && srqn1 != srqn2 && srqn1 <= 0xffffff, "srqn %x %x", srqn1, srqn2);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_device_advertises_xrc),
	TEST_CASE(test_send_into_two_srqs_through_one_target),
	TEST_CASE(test_write_read_atomics_over_xrc),
	TEST_CASE(test_rkey_of_another_pd_than_the_srqs_gives_rem_access_err),
	TEST_CASE(test_srq_of_another_domain_gives_rem_access_err),
	TEST_CASE(test_unknown_srq_gives_rem_inv_req_err),
	TEST_CASE(test_destroyed_srq_number_names_nothing),
	TEST_CASE(test_close_xrcd_in_use_is_ebusy),
	TEST_CASE(test_open_xrcd_flags_and_sharing_by_file),
	TEST_CASE(test_posting_where_xrc_qps_have_no_queue_is_einval),
	TEST_CASE(test_xrc_state_transitions_take_each_halfs_masks),
	TEST_CASE(test_open_qp_shares_the_target),
	TEST_CASE(test_wr_set_xrc_srqn_on_extended_qp),
	TEST_CASE(test_xrc_recv_qp_to_err_raises_last_wqe_reached),
	TEST_CASE(test_xrc_recv_qp_access_err_then_last_wqe_reached),
	TEST_CASE(test_open_qp_handles_each_get_the_targets_async_events),
	TEST_CASE(test_type2_window_bound_on_xrc_send_qp_serves_no_xrc_request),
	TEST_CASE(test_type1_window_bound_on_xrc_send_qp_serves_xrc_write_and_read),
	TEST_CASE(test_local_inv_on_xrc_send_qp_invalidates_a_window_of_an_rc_qp),
	TEST_CASE(test_send_with_inv_over_xrc_of_type2_window_rem_inv_req_err),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "xrc", cases, setup, teardown);
}
