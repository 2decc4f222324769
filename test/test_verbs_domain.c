/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread domains and parent domains (ibv_alloc_td, ibv_alloc_parent_domain):
 * argument checks and their errno; QPs, MRs and CQs on a parent domain
 * carrying traffic; the application's allocator called for each queue with
 * droce's resource types, every block it gave freed once, the default taken
 * on IBV_ALLOCATOR_USE_DEFAULT and ENOMEM when it fails; a CQ resized on
 * one; EBUSY for a PD, parent domain or TD in use; a thread domain's QP
 * posting without its lock. Both progress modes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"

#define WC_MS 5000
#define MSG 512

/* What the test allocator did: each block it handed out, and when it was freed. */
#define NBLK 64
static struct {
	void *p[NBLK];
	uint64_t type[NBLK];
	bool freed[NBLK];
	int n;
	int frees, bad_frees;
	int by_type[4];
	int mode;		/* 0 give memory, 1 IBV_ALLOCATOR_USE_DEFAULT, 2 fail */
	void *ctx_seen;
	struct ibv_pd *pd_seen;
} al;

static int pd_ctx_cookie;

static void *
t_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t type)
{
	void *p;

	al.ctx_seen = pd_context;
	al.pd_seen = pd;
	if (al.mode == 1)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (al.mode == 2 || al.n == NBLK)
		return NULL;
	if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size))
		return NULL;
	memset(p, 0xa5, size);	/* droce must zero what it takes */
	al.p[al.n] = p;
	al.type[al.n] = type;
	al.freed[al.n] = false;
	al.n++;
	if (type < 4)
		al.by_type[type]++;
	return p;
}

static void
t_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	(void)pd;
	(void)pd_context;
	for (int i = 0; i < al.n; i++)
		if (al.p[i] == ptr && !al.freed[i] && al.type[i] == type) {
			al.freed[i] = true;
			al.frees++;
			free(ptr);
			return;
		}
	al.bad_frees++;
}

static void
al_reset(int mode)
{
	memset(&al, 0, sizeof(al));
	al.mode = mode;
}

/* A parent domain over @pd, with the test allocator unless !@allocators, and @td. */
static struct ibv_pd *
pdom_new(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_td *td, bool allocators)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = pd, .td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT |
			     (allocators ? IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS : 0),
		.alloc = t_alloc, .free = t_free, .pd_context = &pd_ctx_cookie,
	};

	return ibv_alloc_parent_domain(ctx, &a);
}

/* One SEND of MSG bytes a -> b, its bytes and both completions checked. */
static int
send_one(struct h_side *a, struct h_side *b, uint8_t seed)
{
	struct ibv_wc wc;

	memset(b->buf, 0, MSG);
	memset(a->buf, seed, MSG);
	CHECK(h_post_recv(b, 0, MSG, 0x100 + seed));
	CHECK(h_post_send(a, IBV_WR_SEND, 0, MSG, 0x200 + seed, IBV_SEND_SIGNALED));
	TEST_ASSERT_EQ(h_poll(a->scq, &wc, 1, WC_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x200u + seed, "send: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(h_poll(b->rcq, &wc, 1, WC_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x100u + seed, "recv: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.byte_len, (uint32_t)MSG);
	for (int i = 0; i < MSG; i++)
		TEST_ASSERT(b->buf[i] == seed, "byte %d: 0x%02x, not 0x%02x", i, b->buf[i], seed);
	return 0;
}

static int
test_td_and_parent_domain_argument_errors(void)
{
	struct ibv_context *ctx = h_res_open(0), *ctx1 = h_res_open(1);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr a = { .pd = NULL };
	struct ibv_pd *pdom, *pdom2;
	struct ibv_td *td;

	TEST_ASSERT(ctx && ctx1 && pd, "set-up");
	/* a comp_mask droce does not know */
	TEST_ASSERT(ibv_alloc_td(ctx, &ta) == NULL && errno == EINVAL, "TD comp_mask: not EINVAL");
	ta.comp_mask = 0;
	td = ibv_alloc_td(ctx, &ta);
	TEST_ASSERT(td != NULL, "ibv_alloc_td: %s", strerror(errno));
	/* no PD; a PD of another context; an unknown comp_mask; ALLOCATORS without them */
	TEST_ASSERT(ibv_alloc_parent_domain(ctx, &a) == NULL && errno == EINVAL, "no PD");
	a.pd = pd;
	TEST_ASSERT(ibv_alloc_parent_domain(ctx1, &a) == NULL && errno == EINVAL, "other ctx");
	a.comp_mask = 1u << 7;
	TEST_ASSERT(ibv_alloc_parent_domain(ctx, &a) == NULL && errno == EINVAL, "comp_mask");
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	TEST_ASSERT(ibv_alloc_parent_domain(ctx, &a) == NULL && errno == EINVAL, "NULL alloc");
	/* a parent domain over a parent domain */
	pdom = pdom_new(ctx, pd, td, false);
	TEST_ASSERT(pdom != NULL, "ibv_alloc_parent_domain: %s", strerror(errno));
	a.comp_mask = 0;
	a.pd = pdom;
	TEST_ASSERT(ibv_alloc_parent_domain(ctx, &a) == NULL && errno == EINVAL, "nested");
	/* a CQ on a PD that is not a parent domain */
	{
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pd,
		};

		TEST_ASSERT(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EINVAL,
			    "CQ on a plain PD: not EINVAL");
	}
	/* in use: the PD by its parent domain, the TD by it too */
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(ibv_dealloc_td(td), EBUSY);
	pdom2 = pdom_new(ctx, pd, NULL, false);
	TEST_ASSERT(pdom2 != NULL, "a second parent domain: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), 0);
	TEST_ASSERT_EQ(ibv_dealloc_td(td), 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pd), EBUSY);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom2), 0);
	return TEST_SUCCESS;
}

/*
 * A side on droce0 whose QP and MR are on a parent domain with the test
 * allocator, talking to a plain side on droce1 both ways: the allocator
 * gave the send and the receive queue their memory (droce's resource
 * types, the parent domain and its context passed), and each block comes
 * back once when the QP goes. The parent domain is busy meanwhile.
 */
static int
test_qp_on_parent_domain_uses_its_allocator(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 16, .max_recv_wr = 16 };
	struct h_side a = { 0 }, b = { 0 };
	struct ibv_pd *pdom;

	TEST_ASSERT(ctx && pd, "set-up");
	al_reset(0);
	pdom = pdom_new(ctx, pd, NULL, true);
	TEST_ASSERT(pdom != NULL, "ibv_alloc_parent_domain: %s", strerror(errno));
	o.pd = pdom;
	CHECK(h_side_create(&a, ctx, &o));
	o.pd = NULL;
	CHECK(h_side_create(&b, h_res_open(1), &o));
	TEST_ASSERT_EQ(al.by_type[DROCE_RES_TYPE_SQ], 1);
	TEST_ASSERT_EQ(al.by_type[DROCE_RES_TYPE_RQ], 1);
	TEST_ASSERT(al.pd_seen == pdom && al.ctx_seen == &pd_ctx_cookie,
		    "the allocator got another PD or context");
	CHECK(h_connect(&a, &b, &o));
	CHECK(h_connect(&b, &a, &o));
	for (int i = 0; i < 20; i++) {
		CHECK(send_one(&a, &b, (uint8_t)(i + 1)));
		CHECK(send_one(&b, &a, (uint8_t)(i + 101)));
	}
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), EBUSY);
	TEST_ASSERT_EQ(al.frees, 0);
	h_side_destroy(&b);
	h_side_destroy(&a);
	TEST_ASSERT_EQ(al.frees, al.n);
	TEST_ASSERT_EQ(al.bad_frees, 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), 0);
	return TEST_SUCCESS;
}

/*
 * A CQ created on a parent domain takes its ring from the allocator, and
 * its new ring on ibv_resize_cq (the old one freed), completions held across
 * the resize kept in order; destroyed, its ring comes back. It counts as a
 * user of the parent domain.
 */
static int
test_cq_on_parent_domain_resize_and_traffic(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 16, .max_recv_wr = 16 };
	struct ibv_cq_init_attr_ex ca = { .cqe = 32, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
					  .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct h_side a = { 0 }, b = { 0 };
	struct ibv_cq *own_scq, *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_pd *pdom;
	struct ibv_wc wc[8];

	TEST_ASSERT(ctx && pd, "set-up");
	al_reset(0);
	pdom = pdom_new(ctx, pd, NULL, true);
	TEST_ASSERT(pdom != NULL, "ibv_alloc_parent_domain: %s", strerror(errno));
	ca.parent_domain = pdom;
	cqx = ibv_create_cq_ex(ctx, &ca);
	TEST_ASSERT(cqx != NULL, "ibv_create_cq_ex on a parent domain: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cqx);
	TEST_ASSERT_EQ(al.by_type[DROCE_RES_TYPE_CQ], 1);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), EBUSY);
	/* a's send completions go to it: a plain side, its send CQ swapped before the QP */
	CHECK(h_side_create(&a, ctx, &o));
	CHECK(h_side_create(&b, h_res_open(1), &o));
	TEST_ASSERT_EQ(ibv_destroy_qp(a.qp), 0);
	own_scq = a.scq;
	a.scq = cq;
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		a.qp = ibv_create_qp(a.pd, &qa);
		TEST_ASSERT(a.qp != NULL, "ibv_create_qp: %s", strerror(errno));
	}
	CHECK(h_connect(&a, &b, &o));
	CHECK(h_connect(&b, &a, &o));
	CHECK(send_one(&a, &b, 1));
	/* three completions held across a resize, in order */
	for (int i = 0; i < 3; i++) {
		CHECK(h_post_recv(&b, 0, MSG, 0x300 + i));
		CHECK(h_post_send(&a, IBV_WR_SEND, 0, 16, 0x400 + i, IBV_SEND_SIGNALED));
	}
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, 3, WC_MS), 3);
	TEST_ASSERT_EQ(ibv_resize_cq(cq, 64), 0);
	TEST_ASSERT_EQ(al.by_type[DROCE_RES_TYPE_CQ], 2);
	TEST_ASSERT_EQ(al.frees, 1);
	TEST_ASSERT_EQ(h_poll(cq, wc, 3, WC_MS), 3);
	for (int i = 0; i < 3; i++)
		TEST_ASSERT(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == 0x400u + i,
			    "completion %d: %s, wr_id 0x%llx", i, ibv_wc_status_str(wc[i].status),
			    (unsigned long long)wc[i].wr_id);
	CHECK(send_one(&a, &b, 2));
	h_side_destroy(&b);
	TEST_ASSERT_EQ(ibv_destroy_qp(a.qp), 0);
	a.qp = NULL;
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	a.scq = own_scq;
	h_side_destroy(&a);
	TEST_ASSERT_EQ(al.frees, al.n);
	TEST_ASSERT_EQ(al.bad_frees, 0);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), 0);
	return TEST_SUCCESS;
}

/*
 * An allocator that answers IBV_ALLOCATOR_USE_DEFAULT: droce's own memory,
 * nothing handed back; one that fails: ENOMEM, and nothing left behind.
 */
static int
test_allocator_default_and_failure(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct ibv_cq *cq = h_res_add_cq(ibv_create_cq(ctx, 16, NULL, NULL, 0));
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct droce_dev_objects o0, o1;
	struct ibv_pd *pdom;
	struct ibv_qp *qp;

	TEST_ASSERT(ctx && pd && cq, "set-up");
	pdom = pdom_new(ctx, pd, NULL, true);
	TEST_ASSERT(pdom != NULL, "ibv_alloc_parent_domain: %s", strerror(errno));
	ca.parent_domain = pdom;
	al_reset(1);
	qp = ibv_create_qp(pdom, &qa);
	TEST_ASSERT(qp != NULL, "ibv_create_qp (default memory): %s", strerror(errno));
	TEST_ASSERT_EQ(al.n, 0);
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	TEST_ASSERT_EQ(al.frees + al.bad_frees, 0);
	al_reset(2);
	TEST_ASSERT_EQ(droce_dev_objects_get("droce0", &o0), 0);
	TEST_ASSERT(ibv_create_qp(pdom, &qa) == NULL && errno == ENOMEM,
		    "a failing allocator: not ENOMEM");
	TEST_ASSERT(ibv_create_cq_ex(ctx, &ca) == NULL && errno == ENOMEM,
		    "a failing allocator (CQ): not ENOMEM");
	TEST_ASSERT_EQ(droce_dev_objects_get("droce0", &o1), 0);
	TEST_ASSERT_EQ(o1.qps, o0.qps);
	TEST_ASSERT_EQ(o1.cqs, o0.cqs);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), 0);
	return TEST_SUCCESS;
}

/*
 * A QP and a CQ on a parent domain with a thread domain: one thread posts
 * and polls, without their locks, and everything arrives; ibv_wr_* too.
 */
static int
test_thread_domain_qp_posts_and_polls(void)
{
	struct ibv_context *ctx = h_res_open(0);
	struct ibv_pd *pd = h_res_add_pd(ibv_alloc_pd(ctx));
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_td *td = ibv_alloc_td(ctx, &ta);
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 32, .max_recv_wr = 32 };
	struct h_side a = { 0 }, b = { 0 };
	struct ibv_pd *pdom;
	struct ibv_wc wc[32];

	TEST_ASSERT(ctx && pd && td, "set-up");
	al_reset(0);
	pdom = pdom_new(ctx, pd, td, false);
	TEST_ASSERT(pdom != NULL, "ibv_alloc_parent_domain: %s", strerror(errno));
	o.pd = pdom;
	CHECK(h_side_create(&a, ctx, &o));
	o.pd = NULL;
	CHECK(h_side_create(&b, h_res_open(1), &o));
	CHECK(h_connect(&a, &b, &o));
	CHECK(h_connect(&b, &a, &o));
	/* lists of 32 receives and 32 sends each round */
	for (int r = 0; r < 50; r++) {
		for (int i = 0; i < 32; i++)
			CHECK(h_post_recv(&b, (size_t)i * 64, 64, (uint64_t)r << 8 | (uint64_t)i));
		for (int i = 0; i < 32; i++) {
			a.buf[(size_t)i * 64] = (uint8_t)(r + i);
			CHECK(h_post_send(&a, IBV_WR_SEND, (size_t)i * 64, 64, (uint64_t)i,
					  IBV_SEND_SIGNALED));
		}
		TEST_ASSERT_EQ(h_poll(a.scq, wc, 32, WC_MS), 32);
		TEST_ASSERT_EQ(h_poll(b.rcq, wc, 32, WC_MS), 32);
		for (int i = 0; i < 32; i++) {
			TEST_ASSERT(wc[i].status == IBV_WC_SUCCESS, "recv: %s",
				    ibv_wc_status_str(wc[i].status));
			TEST_ASSERT_EQ(wc[i].wr_id, (uint64_t)r << 8 | (uint64_t)i);
			TEST_ASSERT_EQ(b.buf[(size_t)i * 64], (uint8_t)(r + i));
		}
	}
	h_side_destroy(&b);
	h_side_destroy(&a);
	TEST_ASSERT_EQ(ibv_dealloc_pd(pdom), 0);
	TEST_ASSERT_EQ(ibv_dealloc_td(td), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_td_and_parent_domain_argument_errors),
	TEST_CASE(test_qp_on_parent_domain_uses_its_allocator),
	TEST_CASE(test_cq_on_parent_domain_resize_and_traffic),
	TEST_CASE(test_allocator_default_and_failure),
	TEST_CASE(test_thread_domain_qp_posts_and_polls),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "verbs_domain", cases, NULL, h_res_release);
}
