/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * On-demand paging: ODP MRs and the implicit MR (the whole address space),
 * and what droce does when the memory a peer or a local WR names is not
 * there: an unmapped page or a read-only one fails the operation with the
 * completion status an ODP NIC gives for a page fault it cannot resolve
 * (REM_ACCESS_ERR for a remote WRITE/READ/atomic, LOC_PROT_ERR locally,
 * REM_OP_ERR for a SEND into a receive buffer that is not there), and the
 * process goes on; a fault elsewhere in the program still kills it.
 * ibv_advise_mr's checks and errno; odp_caps. Both progress modes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_common.h>

#include "droce_test.h"
#include "harness.h"

#define WC_MS 5000
#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC)

static const struct h_qp_opts rc = { .type = IBV_QPT_RC, .max_send_wr = 32, .max_recv_wr = 32,
				     .timeout = 12, .retry_cnt_p1 = 3 };
static size_t pg;

/* One WR on @s: @op with local [laddr, +len) under @lkey, remote @raddr/@rkey; its completion. */
static int
rdma(struct h_side *s, enum ibv_wr_opcode op, void *laddr, uint32_t len, uint32_t lkey,
     uint64_t raddr, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 9;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(s->scq, wc, 1, WC_MS), 1);
	return 0;
}

/*
 * Three pages, the middle one not there: [p, p + pg) and [p + 2 pg, p + 3 pg)
 * are. "Not there" is PROT_NONE rather than unmapped, so that nothing else
 * (the harness's own buffers, ASan's allocator) is mapped into the hole
 * meanwhile; an access faults all the same.
 */
static uint8_t *
holed(void)
{
	uint8_t *p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + pg, pg, PROT_NONE);
	memset(p, 0, pg);
	memset(p + 2 * pg, 0, pg);
	return p;
}

static void
unholed(uint8_t *p)
{
	munmap(p, 3 * pg);
}

static int
test_odp_caps_reported(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_device_attr_ex dx;

	TEST_ASSERT_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	TEST_ASSERT_EQ(dx.odp_caps.general_caps, IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	TEST_ASSERT_EQ(dx.odp_caps.per_transport_caps.rc_odp_caps,
		       IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		       IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	TEST_ASSERT(dx.odp_caps.per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND, "UD");
	return TEST_SUCCESS;
}

/*
 * The implicit MR of b's PD: a's WRITE, READ and atomics reach any of b's
 * memory by its address, with the implicit MR's rkey; b's memory was never
 * registered by range.
 */
static int
test_implicit_mr_reaches_any_address(void)
{
	struct h_side *a, *b;
	struct ibv_mr *imr;
	struct ibv_wc wc;
	uint64_t *word;
	uint8_t *buf;

	CHECK(h_res_pair(&a, &b, &rc, false));
	imr = h_res_add_mr(ibv_reg_mr(b->pd, NULL, SIZE_MAX, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(imr != NULL, "implicit MR: %s", strerror(errno));
	buf = h_res_add_mem(calloc(1, 3 * 4096 + 8));
	word = h_res_add_mem(aligned_alloc(8, 8));
	TEST_ASSERT(buf && word, "memory");
	*word = 100;
	for (int i = 0; i < 8192; i++)
		a->buf[i] = (uint8_t)(i * 7);
	CHECK(rdma(a, IBV_WR_RDMA_WRITE, a->buf, 8192, a->mr->lkey, (uintptr_t)buf + 5,
		   imr->rkey, &wc));
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "WRITE: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT(memcmp(buf + 5, a->buf, 8192) == 0, "WRITE: bytes differ");
	buf[100] = 0xee;
	CHECK(rdma(a, IBV_WR_RDMA_READ, a->buf + 65536, 4096, a->mr->lkey, (uintptr_t)buf + 100,
		   imr->rkey, &wc));
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "READ: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT(memcmp(a->buf + 65536, buf + 100, 4096) == 0, "READ: bytes differ");
	CHECK(rdma(a, IBV_WR_ATOMIC_FETCH_AND_ADD, a->buf + 131072, 8, a->mr->lkey,
		   (uintptr_t)word, imr->rkey, &wc));
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "FADD: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(*(uint64_t *)(a->buf + 131072), 100);
	TEST_ASSERT_EQ(*word, 105);
	/* b's own receives may use it as their lkey */
	CHECK(h_post_recv(b, 0, 64, 1));
	CHECK(h_post_send(a, IBV_WR_SEND, 0, 64, 2, IBV_SEND_SIGNALED));
	TEST_ASSERT_EQ(h_poll(a->scq, &wc, 1, WC_MS), 1);
	TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, WC_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "recv: %s", ibv_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/*
 * A remote WRITE, READ and atomic through the implicit MR to an address
 * that is not mapped, and a WRITE to a read-only page: REM_ACCESS_ERR at a,
 * b's process goes on, and a new pair then works.
 */
static int
test_remote_access_to_missing_or_readonly_memory_is_rem_access_err(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_RDMA_WRITE,
	};

	for (unsigned int k = 0; k < RTE_DIM(ops); k++) {
		struct h_side *a, *b;
		struct ibv_mr *imr;
		struct ibv_wc wc;
		uint8_t *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		TEST_ASSERT(p != MAP_FAILED, "mmap");
		p[0] = 0x42;
		/* the last case: a read-only page; the others: a page not there (PROT_NONE) */
		mprotect(p, pg, k == RTE_DIM(ops) - 1 ? PROT_READ : PROT_NONE);
		CHECK(h_res_pair(&a, &b, &rc, false));
		imr = h_res_add_mr(ibv_reg_mr(b->pd, NULL, SIZE_MAX, ACC_ALL | IBV_ACCESS_ON_DEMAND));
		TEST_ASSERT(imr != NULL, "implicit MR: %s", strerror(errno));
		CHECK(rdma(a, ops[k], a->buf, ops[k] == IBV_WR_ATOMIC_CMP_AND_SWP ? 8 : 256,
			   a->mr->lkey, (uintptr_t)p, imr->rkey, &wc));
		TEST_ASSERT(wc.status == IBV_WC_REM_ACCESS_ERR, "op %u: %s, not REM_ACCESS_ERR", k,
			    ibv_wc_status_str(wc.status));
		if (k == RTE_DIM(ops) - 1)
			TEST_ASSERT_EQ(p[0], 0x42);	/* untouched */
		munmap(p, pg);
		h_res_release();
	}
	/* still alive, and a new pair works */
	{
		struct h_side *a, *b;
		struct ibv_wc wc;

		CHECK(h_res_pair(&a, &b, &rc, false));
		CHECK(h_post_recv(b, 0, 64, 1));
		CHECK(h_post_send(a, IBV_WR_SEND, 0, 64, 2, IBV_SEND_SIGNALED));
		TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, WC_MS), 1);
		TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "recv: %s", ibv_wc_status_str(wc.status));
	}
	return TEST_SUCCESS;
}

/*
 * An explicit ODP MR over three pages whose middle one is unmapped: a WRITE
 * into the first page works, one that runs into the hole is REM_ACCESS_ERR.
 */
static int
test_explicit_odp_mr_with_a_hole(void)
{
	struct h_side *a, *b;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint8_t *p = holed();

	TEST_ASSERT(p != NULL, "mmap");
	CHECK(h_res_pair(&a, &b, &rc, false));
	mr = h_res_add_mr(ibv_reg_mr(b->pd, p, 3 * pg, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(mr != NULL, "ODP MR over a hole: %s", strerror(errno));
	memset(a->buf, 0x3c, 2 * pg);
	CHECK(rdma(a, IBV_WR_RDMA_WRITE, a->buf, 512, a->mr->lkey, (uintptr_t)p + 64, mr->rkey,
		   &wc));
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "WRITE: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT(p[64] == 0x3c && p[64 + 511] == 0x3c && p[64 + 512] == 0, "WRITE bytes");
	CHECK(rdma(a, IBV_WR_RDMA_WRITE, a->buf, (uint32_t)pg, a->mr->lkey,
		   (uintptr_t)p + pg / 2, mr->rkey, &wc));
	TEST_ASSERT(wc.status == IBV_WC_REM_ACCESS_ERR, "WRITE into the hole: %s",
		    ibv_wc_status_str(wc.status));
	h_res_release();
	unholed(p);
	return TEST_SUCCESS;
}

/*
 * UC: an RDMA WRITE with immediate into a page that is not there takes its
 * receive WQE, then fails; the message is dropped (UC) and its WQE must
 * serve the next message, with a QP's own receive queue as with an SRQ's.
 * One receive posted, the failed WRITE, then a SEND: the SEND's bytes land
 * in that receive, which completes with its wr_id; nothing else completes.
 */
static int
test_uc_write_imm_into_missing_page_keeps_the_receive(void)
{
	for (int use_srq = 0; use_srq < 2; use_srq++) {
		struct h_qp_opts uc = { .type = IBV_QPT_UC, .max_send_wr = 8, .max_recv_wr = 8 };
		struct ibv_context *cb = h_res_open(1);
		struct ibv_pd *pd = cb ? h_res_add_pd(ibv_alloc_pd(cb)) : NULL;
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
		struct ibv_srq *srq = NULL;
		struct h_side *a, *b;
		struct ibv_mr *imr;
		struct ibv_recv_wr rw = { .wr_id = 0x5151, .num_sge = 1 }, *bad;
		struct ibv_sge rs;
		struct ibv_wc wc;
		struct ibv_send_wr sw = { .wr_id = 0x77, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
					  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
					  .imm_data = htonl(0xabcd) }, *sbad;
		struct ibv_sge ss;
		uint8_t *p = holed();

		TEST_ASSERT(p != NULL && pd != NULL, "mmap / PD");
		if (use_srq) {
			srq = h_res_add_srq(ibv_create_srq(pd, &sa));
			TEST_ASSERT(srq != NULL, "SRQ: %s", strerror(errno));
			uc.srq = srq;
		}
		uc.pd = pd;
		b = h_res_side(cb, &uc);
		uc.srq = NULL;
		uc.pd = NULL;
		a = h_res_side(h_res_open(0), &uc);
		TEST_ASSERT(a != NULL && b != NULL, "sides");
		TEST_ASSERT_EQ(h_connect(b, a, &uc), 0);
		TEST_ASSERT_EQ(h_connect(a, b, &uc), 0);
		imr = h_res_add_mr(ibv_reg_mr(pd, NULL, SIZE_MAX, ACC_ALL | IBV_ACCESS_ON_DEMAND));
		TEST_ASSERT(imr != NULL, "implicit MR: %s", strerror(errno));

		rs = (struct ibv_sge){ (uintptr_t)b->buf, 256, b->mr->lkey };
		rw.sg_list = &rs;
		TEST_ASSERT_EQ(srq ? ibv_post_srq_recv(srq, &rw, &bad) : ibv_post_recv(b->qp, &rw, &bad), 0);
		memset(b->buf, 0, 256);

		/* the WRITE with immediate into the hole (the middle page) */
		memset(a->buf, 0x5a, 256);
		ss = (struct ibv_sge){ (uintptr_t)a->buf, 256, a->mr->lkey };
		sw.sg_list = &ss;
		sw.wr.rdma.remote_addr = (uintptr_t)p + pg + 8;
		sw.wr.rdma.rkey = imr->rkey;
		TEST_ASSERT_EQ(ibv_post_send(a->qp, &sw, &sbad), 0);
		TEST_ASSERT_EQ(h_poll(a->scq, &wc, 1, WC_MS), 1);
		TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "UC WRITE: %s", ibv_wc_status_str(wc.status));
		TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, 200), 0);	/* dropped: no completion */

		/* a SEND after it lands in the one receive */
		for (uint32_t i = 0; i < 200; i++)
			a->buf[i] = (uint8_t)(i * 7 + 3);
		CHECK(h_post_send(a, IBV_WR_SEND, 0, 200, 0x78, IBV_SEND_SIGNALED));
		TEST_ASSERT_EQ(h_poll(a->scq, &wc, 1, WC_MS), 1);
		TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "SEND: %s", ibv_wc_status_str(wc.status));
		TEST_ASSERT(h_poll(b->rcq, &wc, 1, WC_MS) == 1,
			    "%s: the SEND found no receive: the WRITE's WQE was lost",
			    use_srq ? "SRQ" : "own RQ");
		TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV, "receive: %s",
			    ibv_wc_status_str(wc.status));
		TEST_ASSERT_EQ(wc.wr_id, 0x5151);
		TEST_ASSERT_EQ(wc.byte_len, 200);
		TEST_ASSERT(memcmp(b->buf, a->buf, 200) == 0, "the SEND's bytes");
		TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, 100), 0);
		TEST_ASSERT_EQ(h_qp_state(b->qp), IBV_QPS_RTS);
		h_res_release();
		unholed(p);
	}
	return TEST_SUCCESS;
}

/*
 * Local memory that is not there: a SEND gathering from it is LOC_PROT_ERR
 * at a; a READ whose response lands in it is LOC_PROT_ERR at a; a SEND into
 * a receive buffer that is not there is LOC_PROT_ERR at b and REM_OP_ERR at
 * a.
 */
static int
test_local_memory_missing(void)
{
	uint8_t *p = holed();
	struct h_side *a, *b;
	struct ibv_mr *ma, *mb;
	struct ibv_wc wc;

	TEST_ASSERT(p != NULL, "mmap");
	/* SEND from the hole */
	CHECK(h_res_pair(&a, &b, &rc, false));
	ma = h_res_add_mr(ibv_reg_mr(a->pd, p, 3 * pg, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(ma != NULL, "ODP MR: %s", strerror(errno));
	CHECK(h_post_recv(b, 0, 65536, 1));
	CHECK(rdma(a, IBV_WR_SEND, p + pg - 16, 64, ma->lkey, 0, 0, &wc));
	TEST_ASSERT(wc.status == IBV_WC_LOC_PROT_ERR, "SEND from the hole: %s",
		    ibv_wc_status_str(wc.status));
	h_res_release();
	/* READ into the hole */
	CHECK(h_res_pair(&a, &b, &rc, false));
	ma = h_res_add_mr(ibv_reg_mr(a->pd, p, 3 * pg, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(ma != NULL, "ODP MR: %s", strerror(errno));
	CHECK(rdma(a, IBV_WR_RDMA_READ, p + pg, 128, ma->lkey, (uintptr_t)b->buf, b->mr->rkey,
		   &wc));
	TEST_ASSERT(wc.status == IBV_WC_LOC_PROT_ERR, "READ into the hole: %s",
		    ibv_wc_status_str(wc.status));
	h_res_release();
	/* SEND into a receive buffer in the hole */
	CHECK(h_res_pair(&a, &b, &rc, false));
	mb = h_res_add_mr(ibv_reg_mr(b->pd, p, 3 * pg, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(mb != NULL, "ODP MR: %s", strerror(errno));
	{
		struct ibv_sge sge = { (uintptr_t)p + pg, 256, mb->lkey };
		struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;

		TEST_ASSERT_EQ(ibv_post_recv(b->qp, &wr, &bad), 0);
	}
	CHECK(h_post_send(a, IBV_WR_SEND, 0, 128, 3, IBV_SEND_SIGNALED));
	TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, WC_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 9, "recv into the hole: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(h_poll(a->scq, &wc, 1, WC_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_REM_OP_ERR, "its SEND: %s", ibv_wc_status_str(wc.status));
	h_res_release();
	unholed(p);
	return TEST_SUCCESS;
}

static int
test_advise_mr(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx)), *pd2 = h_res_add_pd(ibv_alloc_pd(ctx));
	uint8_t *buf = h_res_add_mem(aligned_alloc(4096, 4 * 4096)), *p = holed();
	struct ibv_mr *odp, *plain, *ro, *hole, *imr;
	struct ibv_sge sge;

	TEST_ASSERT(pd && pd2 && buf && p, "set-up");
	odp = h_res_add_mr(ibv_reg_mr(pd, buf, 4 * 4096, ACC_ALL | IBV_ACCESS_ON_DEMAND));
	plain = h_res_add_mr(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE));
	ro = h_res_add_mr(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_ON_DEMAND));
	hole = h_res_add_mr(ibv_reg_mr(pd, p, 3 * pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
	imr = h_res_add_mr(ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(odp && plain && ro && hole && imr, "MRs: %s", strerror(errno));
	sge = (struct ibv_sge){ (uintptr_t)buf, 4 * 4096, odp->lkey };
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), 0);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, &sge, 1), 0);
	/* flags, advice, no SGE */
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, &sge, 1), EINVAL);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)7, 0, &sge, 1), ENOTSUP);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 0), EINVAL);
	/* past the MR, another PD's key, no such key: EFAULT */
	sge.length = 4 * 4096 + 1;
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), EFAULT);
	sge.length = 64;
	TEST_ASSERT_EQ(ibv_advise_mr(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), EFAULT);
	sge.lkey = 0xffffff00;
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), EFAULT);
	/* not ODP: EINVAL; PREFETCH_WRITE without local write: EPERM */
	sge.lkey = plain->lkey;
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), EINVAL);
	sge.lkey = ro->lkey;
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sge, 1), EPERM);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1), 0);
	/* a range with a hole: EFAULT when synchronous, accepted otherwise */
	sge = (struct ibv_sge){ (uintptr_t)p, 3 * (uint32_t)pg, hole->lkey };
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), EFAULT);
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sge, 1), 0);
	/* the implicit MR: any mapped range */
	sge = (struct ibv_sge){ (uintptr_t)buf, 8192, imr->lkey };
	TEST_ASSERT_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	/* the implicit MR stays on demand */
	TEST_ASSERT_EQ(ibv_rereg_mr(imr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				    IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_CMD);
	TEST_ASSERT_EQ(errno, EINVAL);
	h_res_release();
	unholed(p);
	return TEST_SUCCESS;
}

/*
 * Once droce guards its accesses (an ODP MR exists), a fault anywhere else
 * in the program still ends it: a child of this process (which has droce's
 * handler) that dereferences a bad pointer dies of it, not reaching its
 * _exit(0).
 */
static int
test_fault_outside_droce_still_kills(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct ibv_mr *imr;
	int status = 0;
	pid_t c;

	imr = h_res_add_mr(ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_ON_DEMAND));
	TEST_ASSERT(imr != NULL, "implicit MR: %s", strerror(errno));
	c = fork();
	TEST_ASSERT(c >= 0, "fork");
	if (c == 0) {
		volatile uintptr_t bad = 16;

		alarm(10);
		*(volatile int *)bad = 1;
		_exit(0);
	}
	TEST_ASSERT_EQ(waitpid(c, &status, 0), c);
	/* killed by the signal (or, in a sanitizer build, ended by its report) */
	TEST_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
		    !(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM),
		    "the child did not die of its fault (status 0x%x)", status);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_odp_caps_reported),
	TEST_CASE(test_implicit_mr_reaches_any_address),
	TEST_CASE(test_remote_access_to_missing_or_readonly_memory_is_rem_access_err),
	TEST_CASE(test_explicit_odp_mr_with_a_hole),
	TEST_CASE(test_uc_write_imm_into_missing_page_keeps_the_receive),
	TEST_CASE(test_local_memory_missing),
	TEST_CASE(test_advise_mr),
	TEST_CASE(test_fault_outside_droce_still_kills),
};

int
main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	return H_TEST_MAIN(argc, argv, "odp", cases, NULL, h_res_release);
}
