/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs: ibv_create_cq_ex with ibv_start_poll/next_poll/
 * end_poll and the ibv_wc_read_* accessors, ibv_create_qp_ex with the
 * ibv_wr_* builder (all-or-nothing ibv_wr_complete, data copied at set
 * time), ibv_create_srq_ex, and what droce refuses (timestamps, flow
 * tags, VLANs, parent domains) with EOPNOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"

#define OPS_RC	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE | \
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct h_side a, b;
static const struct h_qp_opts rc = {
	.type = IBV_QPT_RC, .max_send_wr = 8, .max_inline = 64, .cqe = 64,
	.send_ops_flags = OPS_RC, .wc_flags_ex = IBV_WC_STANDARD_FLAGS,
	.mr_access = IBV_ACCESS_REMOTE_ATOMIC,
};

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

/* Up to @n completions within @ms, read through the extended CQ. */
static int
ex_poll(struct ibv_cq *ibcq, struct ibv_wc *wc, int n, int ms)
{
	struct ibv_cq_ex *cq = (struct ibv_cq_ex *)ibcq;
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t end = h_now_ms() + ms;
	int got = 0;

	while (got < n && h_now_ms() < end) {
		int ret = ibv_start_poll(cq, &attr);

		if (ret == ENOENT)
			continue;
		if (ret != 0)
			return -ret;
		do {
			struct ibv_wc *w = &wc[got++];

			memset(w, 0, sizeof(*w));
			w->wr_id = cq->wr_id;
			w->status = cq->status;
			w->opcode = ibv_wc_read_opcode(cq);
			w->byte_len = ibv_wc_read_byte_len(cq);
			w->wc_flags = ibv_wc_read_wc_flags(cq);
			w->qp_num = ibv_wc_read_qp_num(cq);
			w->src_qp = ibv_wc_read_src_qp(cq);
			if (w->wc_flags & IBV_WC_WITH_IMM)
				w->imm_data = ibv_wc_read_imm_data(cq);
		} while (got < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got;
}

static struct ibv_qp_ex *
qpx(struct h_side *s)
{
	return ibv_qp_to_qp_ex(s->qp);
}

static int
test_send_imm_through_wr_api_read_through_cq_ex(void)
{
	struct ibv_qp_ex *x = qpx(&a);
	struct ibv_wc wc;

	TEST_ASSERT(x != NULL, "ibv_qp_to_qp_ex: %s", strerror(errno));
	h_pattern(a.buf, 3000, 1);
	TEST_ASSERT_EQ(h_post_recv(&b, 0, 4096, 77), 0);
	ibv_wr_start(x);
	x->wr_id = 5;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(0xabcd1234));
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 3000);
	TEST_ASSERT_EQ(ibv_wr_complete(x), 0);

	TEST_ASSERT_EQ(ex_poll(b.rcq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.wr_id, 77);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, 3000);
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "flags %#x", wc.wc_flags);
	TEST_ASSERT_EQ(be32toh(wc.imm_data), 0xabcd1234);
	TEST_ASSERT_EQ(wc.qp_num, b.qp->qp_num);
	TEST_ASSERT(memcmp(a.buf, b.buf, 3000) == 0, "payload differs");
	TEST_ASSERT_EQ(ex_poll(a.scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 5);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_SEND);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/* WRITE, READ, FETCH_ADD, CMP_SWP and an inline SEND in one batch, in order. */
static int
test_mixed_batch_completes_in_order(void)
{
	static const enum ibv_wc_opcode want[] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP, IBV_WC_SEND };
	struct ibv_qp_ex *x = qpx(&a);
	uint64_t *counter = (uint64_t *)(b.buf + 8192);
	char msg[] = "inline hello";
	struct ibv_wc wc[5];

	*counter = 40;
	h_pattern(a.buf, 1000, 2);
	h_pattern(b.buf + 4096, 500, 3);
	TEST_ASSERT_EQ(h_post_recv(&b, 16384, 64, 9), 0);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 0;
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 2048);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 1000);
	x->wr_id = 1;
	ibv_wr_rdma_read(x, b.mr->rkey, (uintptr_t)b.buf + 4096);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 4096, 500);
	x->wr_id = 2;
	ibv_wr_atomic_fetch_add(x, b.mr->rkey, (uintptr_t)counter, 2);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 8192, 8);
	x->wr_id = 3;
	ibv_wr_atomic_cmp_swp(x, b.mr->rkey, (uintptr_t)counter, 42, 100);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 8200, 8);
	x->wr_id = 4;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, msg, sizeof(msg));
	memset(msg, 'X', sizeof(msg) - 1);	/* copied at set time: ours again */
	TEST_ASSERT_EQ(ibv_wr_complete(x), 0);

	TEST_ASSERT_EQ(ex_poll(a.scq, wc, 5, 5000), 5);
	for (int i = 0; i < 5; i++) {
		TEST_ASSERT(wc[i].status == IBV_WC_SUCCESS, "wr %d: %s", i,
			    ibv_wc_status_str(wc[i].status));
		TEST_ASSERT_EQ(wc[i].wr_id, (uint64_t)i);
		TEST_ASSERT_EQ(wc[i].opcode, want[i]);
	}
	TEST_ASSERT(memcmp(b.buf + 2048, a.buf, 1000) == 0, "WRITE payload differs");
	TEST_ASSERT(memcmp(a.buf + 4096, b.buf + 4096, 500) == 0, "READ payload differs");
	TEST_ASSERT_EQ(*(uint64_t *)(a.buf + 8192), 40);
	TEST_ASSERT_EQ(*(uint64_t *)(a.buf + 8200), 42);
	TEST_ASSERT_EQ(*counter, 100);
	TEST_ASSERT_EQ(ex_poll(b.rcq, wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc[0].byte_len, sizeof(msg));
	TEST_ASSERT(strcmp((char *)b.buf + 16384, "inline hello") == 0, "got \"%.16s\"",
		    (char *)b.buf + 16384);
	return TEST_SUCCESS;
}

/* Nothing reached either side: no completion, no byte written. */
static int
nothing_posted(void)
{
	struct ibv_wc wc;

	TEST_ASSERT_EQ(ex_poll(a.scq, &wc, 1, 100), 0);
	TEST_ASSERT_EQ(ex_poll(b.rcq, &wc, 1, 1), 0);
	TEST_ASSERT(b.buf[2048] == 0, "a WRITE landed");
	return TEST_SUCCESS;
}

/* A valid SEND still goes through after a refused batch. */
static int
send_works(void)
{
	struct ibv_qp_ex *x = qpx(&a);
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_post_recv(&b, 0, 64, 1), 0);
	ibv_wr_start(x);
	x->wr_id = 99;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 16);
	TEST_ASSERT_EQ(ibv_wr_complete(x), 0);
	TEST_ASSERT_EQ(ex_poll(a.scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 99);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(ex_poll(b.rcq, &wc, 1, 5000), 1);
	return TEST_SUCCESS;
}

static int
test_complete_is_all_or_nothing(void)
{
	struct ibv_qp_ex *x = qpx(&a);

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 2048);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 100);
	/* misaligned atomic: refused by the post-time checks */
	ibv_wr_atomic_fetch_add(x, b.mr->rkey, (uintptr_t)b.buf + 3, 1);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 64, 8);
	h_pattern(a.buf, 100, 4);
	TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
	TEST_ASSERT_EQ(nothing_posted(), TEST_SUCCESS);
	return send_works();
}

static int
test_abort_posts_nothing(void)
{
	struct ibv_qp_ex *x = qpx(&a);

	ibv_wr_start(x);
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 2048);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 100);
	h_pattern(a.buf, 100, 5);
	ibv_wr_abort(x);
	TEST_ASSERT_EQ(nothing_posted(), TEST_SUCCESS);
	return send_works();
}

static int
test_more_wrs_than_the_send_queue_is_enomem(void)
{
	struct ibv_qp_ex *x = qpx(&a);

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	for (int i = 0; i < 9; i++) {	/* max_send_wr 8 */
		ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 2048);
		ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 8);
	}
	h_pattern(a.buf, 8, 6);
	TEST_ASSERT_EQ(ibv_wr_complete(x), ENOMEM);
	TEST_ASSERT_EQ(nothing_posted(), TEST_SUCCESS);
	return send_works();
}

static int
test_bad_sge_count_and_oversized_inline_are_einval(void)
{
	struct ibv_qp_ex *x = qpx(&a);
	struct ibv_sge sg[5];
	char big[65];

	for (int i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)a.buf, 1, a.mr->lkey };
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 5, sg);		/* max_send_sge 4 */
	TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
	memset(big, 'b', sizeof(big));
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, big, sizeof(big));	/* max_inline 64 */
	TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
	/* a set_* with no WR started */
	ibv_wr_start(x);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 8);
	TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
	TEST_ASSERT_EQ(nothing_posted(), TEST_SUCCESS);
	return send_works();
}

static int
test_ud_send_through_wr_api(void)
{
	static const struct h_qp_opts ud = {
		.type = IBV_QPT_UD, .send_ops_flags = IBV_QP_EX_WITH_SEND,
		.wc_flags_ex = IBV_WC_STANDARD_FLAGS,
	};
	struct h_side c, d;
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_pair(&c, &d, &ud), 0);
	x = ibv_qp_to_qp_ex(c.qp);
	TEST_ASSERT(x != NULL, "no qp_ex");
	ah = h_ah(&c, &d);
	TEST_ASSERT(ah != NULL, "no AH");
	h_pattern(c.buf, 512, 7);
	TEST_ASSERT_EQ(h_post_recv(&d, 0, 40 + 512, 3), 0);
	ibv_wr_start(x);
	x->wr_id = 8;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, d.qp->qp_num, H_QKEY);
	ibv_wr_set_sge(x, c.mr->lkey, (uintptr_t)c.buf, 512);
	TEST_ASSERT_EQ(ibv_wr_complete(x), 0);
	TEST_ASSERT_EQ(ex_poll(d.rcq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.byte_len, 40 + 512);
	TEST_ASSERT_EQ(wc.src_qp, c.qp->qp_num);
	TEST_ASSERT(wc.wc_flags & IBV_WC_GRH, "no GRH flag");
	TEST_ASSERT(memcmp(d.buf + 40, c.buf, 512) == 0, "payload differs");
	TEST_ASSERT_EQ(ex_poll(c.scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 8);
	/* a UD WR without an address is refused at complete */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, c.mr->lkey, (uintptr_t)c.buf, 8);
	TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
	ibv_destroy_ah(ah);
	h_pair_destroy(&c, &d);
	return TEST_SUCCESS;
}

static struct ibv_qp *
qp_ex(uint32_t comp_mask, enum ibv_qp_type type, uint64_t ops, uint32_t create_flags)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = comp_mask, .pd = a.pd, .send_ops_flags = ops,
		.create_flags = create_flags,
	};

	return ibv_create_qp_ex(a.ctx, &qa);
}

#define EXPECT_NULL_ERRNO(call, err) do { \
	errno = 0; \
	void *p_ = (void *)(call); \
	TEST_ASSERT(p_ == NULL, #call " succeeded"); \
	TEST_ASSERT(errno == (err), #call ": errno %d (%s), want %d", errno, strerror(errno), err); \
} while (0)

static int
test_create_qp_ex_refuses_what_droce_lacks(void)
{
	const uint32_t pd_ops = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp *qp;

	EXPECT_NULL_ERRNO(qp_ex(IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0),
			  EINVAL);
	EXPECT_NULL_ERRNO(qp_ex(pd_ops | (1u << 20), IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0), EINVAL);
	/* SEND_WITH_INV has no UC opcode on the wire (memory windows: test_mw) */
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV, 0), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, 0), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_RC, IBV_QP_EX_WITH_TSO, 0), EOPNOTSUPP);
	/* ATOMIC WRITE on RC only (test_rdma_ops), not over XRC yet */
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_ATOMIC_WRITE, 0), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, 0), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(qp_ex(pd_ops, IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, 0), EOPNOTSUPP);
	/* an XRC target needs its domain (test_xrc has the rest of XRC) */
	EXPECT_NULL_ERRNO(qp_ex(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD, IBV_QPT_XRC_RECV, 0, 0),
			  EINVAL);
	EXPECT_NULL_ERRNO(qp_ex(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, IBV_QPT_RC, 0,
				IBV_QP_CREATE_SCATTER_FCS), EOPNOTSUPP);
	/* an XRC initiator has RC's send ops */
	qp = qp_ex(pd_ops, IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ, 0);
	TEST_ASSERT(qp != NULL, "create_qp_ex(XRC_SEND): %s", strerror(errno));
	TEST_ASSERT(ibv_qp_to_qp_ex(qp) != NULL, "XRC_SEND qp_ex");
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	/* without send ops: a plain QP, which has no ibv_qp_ex */
	qp = qp_ex(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, IBV_QPT_RC, 0, 0);
	TEST_ASSERT(qp != NULL, "create_qp_ex: %s", strerror(errno));
	EXPECT_NULL_ERRNO(ibv_qp_to_qp_ex(qp), EOPNOTSUPP);
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	/* with send ops, in RESET: wr_complete refuses like ibv_post_send */
	qp = qp_ex(pd_ops, IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0);
	TEST_ASSERT(qp != NULL, "create_qp_ex: %s", strerror(errno));
	{
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);

		TEST_ASSERT(x != NULL && &x->qp_base == qp, "qp_ex does not wrap the QP");
		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 8);
		TEST_ASSERT_EQ(ibv_wr_complete(x), EINVAL);
		/* an empty batch is fine */
		ibv_wr_start(x);
		TEST_ASSERT_EQ(ibv_wr_complete(x), 0);
	}
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	return TEST_SUCCESS;
}

static int
test_create_cq_ex_refuses_what_droce_lacks(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cq;

	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	/* a parent domain that is none (test_verbs_domain has the real ones) */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EINVAL);
	ca.parent_domain = a.pd;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EINVAL);
	ca.comp_mask = 1u << 7;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EINVAL);
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	ca.cqe = 0;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(a.ctx, &ca), EINVAL);
	ca.cqe = 16;
	cq = ibv_create_cq_ex(a.ctx, &ca);
	TEST_ASSERT(cq != NULL, "create_cq_ex: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_start_poll(cq, &pa), ENOENT);
	pa.comp_mask = 1;
	TEST_ASSERT_EQ(ibv_start_poll(cq, &pa), EINVAL);
	TEST_ASSERT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	return TEST_SUCCESS;
}

static int
test_srq_ex_basic_tm_and_xrc_need_their_attributes(void)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_BASIC, .pd = a.pd, .cq = a.rcq,
	};
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
		IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1, .oflags = O_CREAT };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_ADD }, *bad = NULL;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn;

	srq = ibv_create_srq_ex(a.ctx, &sa);
	TEST_ASSERT(srq != NULL, "create_srq_ex(BASIC): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_get_srq_num(srq, &srqn), EOPNOTSUPP);
	/* a basic SRQ has no tag list (test_tm covers the TM SRQ) */
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &op, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &op);
	TEST_ASSERT_EQ(ibv_destroy_srq(srq), 0);
	/* XRC SRQs need a domain (test_xrc makes them) */
	sa.srq_type = IBV_SRQT_XRC;
	EXPECT_NULL_ERRNO(ibv_create_srq_ex(a.ctx, &sa), EINVAL);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
	EXPECT_NULL_ERRNO(ibv_create_srq_ex(a.ctx, &sa), EINVAL);
	sa.comp_mask &= ~IBV_SRQ_INIT_ATTR_XRCD;
	/* TM SRQs need the TM attributes */
	sa.srq_type = IBV_SRQT_TM;
	EXPECT_NULL_ERRNO(ibv_create_srq_ex(a.ctx, &sa), EINVAL);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	sa.tm_cap.max_num_tags = 16;
	sa.tm_cap.max_ops = 16;
	srq = ibv_create_srq_ex(a.ctx, &sa);
	TEST_ASSERT(srq != NULL, "create_srq_ex(TM): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_srq(srq), 0);
	sa.srq_type = IBV_SRQT_BASIC;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ;	/* no PD */
	EXPECT_NULL_ERRNO(ibv_create_srq_ex(a.ctx, &sa), EINVAL);
	xrcd = ibv_open_xrcd(a.ctx, &xa);
	TEST_ASSERT(xrcd != NULL, "open_xrcd: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_close_xrcd(xrcd), 0);
	return TEST_SUCCESS;
}

/*
 * Every verb droce does not have yet fails with EOPNOTSUPP (so that test
 * suites and libraries skip), never EINVAL or ENOSYS, and the device claims
 * none of it. Memory windows it has (type 1 and 2B, as rxe: test_mw), not
 * type 2A windows nor the memory management extensions (fast registration).
 */
static int
test_unsupported_verbs_are_eopnotsupp(void)
{
	const unsigned int no_mw = IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		IBV_QP_OPEN_ATTR_TYPE, .qp_num = a.qp->qp_num, .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
				       .pd = a.pd, .cq = a.rcq };
	struct ibv_counters_init_attr ca = { 0 };
	struct ibv_alloc_dm_attr dma = { .length = 4096 };
	struct ibv_modify_cq_attr mca = { .attr_mask = IBV_CQ_ATTR_MODERATE,
					  .moderate = { .cq_count = 1, .cq_period = 1 } };
	struct ibv_values_ex rt = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr srqa = { .max_wr = 8 };
	struct ibv_device_attr_ex dx;
	struct ibv_srq *srq;
	struct ibv_mr *mr;

	/* a window type no verb defines; zero-based MRs */
	EXPECT_NULL_ERRNO(ibv_alloc_mw(a.pd, (enum ibv_mw_type)3), EINVAL);
	EXPECT_NULL_ERRNO(ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_ZERO_BASED), EOPNOTSUPP);
	/* (on-demand paging: test_odp) */
	/* still invalid: an unknown bit, remote write without local write */
	EXPECT_NULL_ERRNO(ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_LOCAL_WRITE | (1 << 12)), EINVAL);
	EXPECT_NULL_ERRNO(ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND),
			  EINVAL);
	/* HUGETLB only says how the memory is backed */
	mr = ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB);
	TEST_ASSERT(mr != NULL, "reg_mr(HUGETLB): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	/* WQs, counters, device memory, CQ moderation, clocks */
	/* XRC is there (test_xrc): opening a QP without a domain is invalid */
	EXPECT_NULL_ERRNO(ibv_open_qp(a.ctx, &oa), EINVAL);
	EXPECT_NULL_ERRNO(ibv_create_wq(a.ctx, &wa), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(ibv_create_counters(a.ctx, &ca), EOPNOTSUPP);
	EXPECT_NULL_ERRNO(ibv_alloc_dm(a.ctx, &dma), EOPNOTSUPP);
	TEST_ASSERT_EQ(ibv_modify_cq(a.scq, &mca), EOPNOTSUPP);
	TEST_ASSERT_EQ(ibv_query_rt_values_ex(a.ctx, &rt), EOPNOTSUPP);
	/* SRQ resize */
	srq = ibv_create_srq(a.pd, &sia);
	TEST_ASSERT(srq != NULL, "create_srq: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_modify_srq(srq, &srqa, IBV_SRQ_MAX_WR), EOPNOTSUPP);
	TEST_ASSERT_EQ(ibv_destroy_srq(srq), 0);
	/* and the device claims none of it */
	TEST_ASSERT_EQ(ibv_query_device_ex(a.ctx, NULL, &dx), 0);
	TEST_ASSERT_EQ(dx.orig_attr.device_cap_flags,
		       IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
		       IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC);
	TEST_ASSERT_EQ(dx.device_cap_flags_ex, dx.orig_attr.device_cap_flags);
	TEST_ASSERT_EQ(dx.orig_attr.device_cap_flags & (no_mw |
		       IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_RESIZE_MAX_WR | IBV_DEVICE_N_NOTIFY_CQ), 0);
	TEST_ASSERT_EQ(dx.orig_attr.max_mw, DROCE_MAX_MW - 1);
	/* XRC under ODP: RC's operations, receives into SRQs */
	TEST_ASSERT_EQ(dx.xrc_odp_caps, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
		       IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	TEST_ASSERT_EQ(dx.completion_timestamp_mask, 0);
	TEST_ASSERT_EQ(dx.hca_core_clock, 0);
	TEST_ASSERT_EQ(dx.tso_caps.max_tso, 0);
	TEST_ASSERT_EQ(dx.rss_caps.supported_qpts, 0);
	TEST_ASSERT_EQ(dx.max_wq_type_rq, 0);
	TEST_ASSERT_EQ(dx.raw_packet_caps, 0);
	TEST_ASSERT_EQ(dx.packet_pacing_caps.qp_rate_limit_max, 0);
	TEST_ASSERT_EQ(dx.cq_mod_caps.max_cq_count, 0);
	TEST_ASSERT_EQ(dx.max_dm_size, 0);
	TEST_ASSERT_EQ(dx.pci_atomic_caps.fetch_add | dx.pci_atomic_caps.swap |
		       dx.pci_atomic_caps.compare_swap, 0);
	/* a descriptor to dup (rdma-core's shared-PD test), no command channel */
	TEST_ASSERT(a.ctx->cmd_fd >= 0, "cmd_fd %d", a.ctx->cmd_fd);
	return TEST_SUCCESS;
}

/*
 * ibv_import_device within the process (man ibv_import_device, rdma-core's
 * test_shared_pd): a dup of a context's cmd_fd gives a context on the same
 * device, on which its PDs and MRs are imported by handle. Objects made on
 * an imported PD count as the PD's (its creator's dealloc is EBUSY); a fd
 * that is no context's is EINVAL (ENODEV for a character device).
 */
static int
test_import_device_shares_pd_and_mr(void)
{
	int fd = dup(a.ctx->cmd_fd), nul, mfd;
	struct ibv_context *ictx;
	struct ibv_pd *pd2, *ipd, *ipd2;
	struct ibv_mr *imr, *mr2;
	struct ibv_cq *cq;
	static uint8_t buf[4096];

	TEST_ASSERT(fd >= 0, "dup: %s", strerror(errno));
	ictx = ibv_import_device(fd);
	TEST_ASSERT(ictx != NULL, "ibv_import_device: %s", strerror(errno));
	TEST_ASSERT_PTR_EQ(ictx->device, a.ctx->device);
	TEST_ASSERT_EQ(ictx->cmd_fd, fd);
	TEST_ASSERT(ictx->async_fd >= 0 && ictx->async_fd != a.ctx->async_fd,
		    "an async fd of its own");
	/* a context that works: a CQ on it */
	cq = ibv_create_cq(ictx, 4, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "CQ on the imported context: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);

	/* the side's PD and MR, by handle */
	ipd = ibv_import_pd(ictx, a.pd->handle);
	TEST_ASSERT(ipd != NULL, "ibv_import_pd: %s", strerror(errno));
	TEST_ASSERT(ipd != a.pd && ipd->context == ictx && ipd->handle == a.pd->handle,
		    "a handle of its own");
	imr = ibv_import_mr(ipd, a.mr->handle);
	TEST_ASSERT(imr != NULL, "ibv_import_mr: %s", strerror(errno));
	TEST_ASSERT(imr != a.mr && imr->pd == ipd && imr->context == ictx, "on the imported PD");
	TEST_ASSERT_EQ(imr->lkey, a.mr->lkey);
	TEST_ASSERT_EQ(imr->rkey, a.mr->rkey);
	TEST_ASSERT_EQ(imr->length, a.mr->length);
	TEST_ASSERT_EQ(imr->handle, a.mr->handle);
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);

	/* an MR made on an imported PD is the PD's: its creator cannot free it meanwhile */
	pd2 = ibv_alloc_pd(a.ctx);
	TEST_ASSERT(pd2 != NULL, "pd");
	ipd2 = ibv_import_pd(ictx, pd2->handle);
	TEST_ASSERT(ipd2 != NULL, "ibv_import_pd: %s", strerror(errno));
	mr2 = ibv_reg_mr(ipd2, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mr2 != NULL, "MR on the imported PD: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	TEST_ASSERT_EQ(ibv_dealloc_pd(ipd2), EBUSY);
	/* imported back on the creator's context, through the creator's PD */
	imr = ibv_import_mr(pd2, mr2->handle);
	TEST_ASSERT(imr != NULL && imr->lkey == mr2->lkey, "the MR through its creator's PD");
	TEST_ASSERT_EQ(ibv_dereg_mr(imr), 0);	/* an imported handle: the MR stays */
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	/* objects outlive an unimported handle (pyverbs destroys them after) */
	ibv_unimport_pd(ipd2);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	TEST_ASSERT_EQ(ibv_dereg_mr(mr2), 0);
	ipd2 = ibv_import_pd(ictx, pd2->handle);
	TEST_ASSERT(ipd2 != NULL, "ibv_import_pd again: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dealloc_pd(ipd2), 0);	/* the handle; the PD stays */
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd2), 0);

	/* what cannot be imported */
	errno = 0;
	TEST_ASSERT(ibv_import_pd(ictx, 0xdead) == NULL && errno == EINVAL, "no such PD");
	ipd = ibv_import_pd(ictx, a.pd->handle);
	TEST_ASSERT(ipd != NULL, "pd again");
	errno = 0;
	TEST_ASSERT(ibv_import_mr(ipd, 0xdead) == NULL && errno == EINVAL, "no such MR");
	ibv_unimport_pd(ipd);
	errno = 0;
	TEST_ASSERT(ibv_import_device(-1) == NULL && errno == EINVAL, "no fd: EINVAL");
	nul = open("/dev/null", O_RDWR);
	errno = 0;
	TEST_ASSERT(ibv_import_device(nul) == NULL && errno == ENODEV, "a character device: ENODEV");
	close(nul);
	mfd = memfd_create("not-droce", 0);
	errno = 0;
	TEST_ASSERT(ibv_import_device(mfd) == NULL && errno == EINVAL, "another file: EINVAL");
	close(mfd);

	/* closing the imported context closes its fd, and leaves the creator's */
	TEST_ASSERT_EQ(ibv_close_device(ictx), 0);
	TEST_ASSERT(fcntl(fd, F_GETFD) == -1 && errno == EBADF, "the fd closed with it");
	TEST_ASSERT(fcntl(a.ctx->cmd_fd, F_GETFD) >= 0, "the creator's cmd_fd stays");
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_send_imm_through_wr_api_read_through_cq_ex),
	TEST_CASE(test_mixed_batch_completes_in_order),
	TEST_CASE(test_complete_is_all_or_nothing),
	TEST_CASE(test_abort_posts_nothing),
	TEST_CASE(test_more_wrs_than_the_send_queue_is_enomem),
	TEST_CASE(test_bad_sge_count_and_oversized_inline_are_einval),
	TEST_CASE(test_ud_send_through_wr_api),
	TEST_CASE(test_create_qp_ex_refuses_what_droce_lacks),
	TEST_CASE(test_create_cq_ex_refuses_what_droce_lacks),
	TEST_CASE(test_srq_ex_basic_tm_and_xrc_need_their_attributes),
	TEST_CASE(test_unsupported_verbs_are_eopnotsupp),
	TEST_CASE(test_import_device_shares_pd_and_mr),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_ex", cases, setup, teardown);
}
