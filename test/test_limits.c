/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exhaustion and limits (issue 15).
 *
 * Object limits: for PDs, CQs, QPs, SRQs, MRs and AHs (ibv_query_device),
 * tags and tag-matching SRQs (tm_caps), creation succeeds exactly up to the
 * advertised limit, minus what the case already holds (checked against the
 * device's own counters), then fails with ENOMEM (mlx5's errno for a
 * resource limit; rxe says EINVAL; verbs-semantics.md leaves it open),
 * while a connected pair created before the flood passes traffic; freeing
 * one lets exactly one more be created, and destroying everything brings
 * the counters back. MRs longer than max_mr_size, or whose range wraps the
 * address space, fail with EINVAL and leave no MR behind.
 *
 * mbuf exhaustion: every free mbuf of a droce device's pool is taken (the
 * engine lcore's cache first flushed while the engine is stopped), RC
 * SENDs, WRITEs and READs are posted, nothing moves and the allocation
 * failures are counted (tx_drop_no_mbuf); once the mbufs return every
 * message completes once with its bytes (resends meanwhile complete no
 * receive twice), and no mbuf stays in use. ACKs the responder could not
 * send stay owed: a requester without an ACK timer completes too. Past the
 * retry budget the WR ends in IBV_WC_RETRY_EXC_ERR and a new pair works.
 *
 * A CQ overrun under load: one receive CQ shared by two QPs overflows while
 * other pairs stream; the CQ gets IBV_EVENT_CQ_ERR, exactly the two QPs
 * that lost a completion go to ERR, and the other pairs' traffic completes
 * with every byte.
 *
 * Run with --inline or --lcore.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"
#include "roce_loc.h"
#include "verbs_loc.h"	/* white box: the driver objects behind verbs objects */
#include "verbs_assert.h"

#define WC_MS		5000	/* wait for one expected completion */
#define RUN_MS		10000	/* bound on a whole round of traffic */
#define QUIET_MS	50
#define EXHAUST_MS	50	/* mbufs held while RC traffic waits */
#define SLOT		(64 * 1024)
#define NSLOT		16	/* buffers of 1 MiB: one slot per message */
#define NFLOW		4
#define MAX3(a, b, c)	((a) > (b) ? ((a) > (c) ? (a) : (c)) : ((b) > (c) ? (b) : (c)))
#define MAX_OBJS	(MAX3(DROCE_MAX_AH, DROCE_MAX_MR, DROCE_MAX_QP) + 64)

/* ------------------------------------------------------------------------- */
/* RC traffic with every completion and byte checked */

/*
 * a (droce0) sends to b (droce1). Message i uses slot i of both buffers:
 * i % 3 == 0 a SEND, 1 a WRITE, 2 a READ of b's slot into a's; with
 * no_read, SENDs and WRITEs only, alternately.
 */
struct flow {
	struct h_side a, b;
	bool no_read;
	int nmsg;
	uint32_t len;
	uint32_t seed;
	uint64_t s_done, r_done;	/* completions seen, by message */
	int s_need, r_need;
	int nerr;
	char err[200];
};

static enum ibv_wr_opcode
msg_op(const struct flow *f, int i)
{
	int k = i % (f->no_read ? 2 : 3);

	return k == 0 ? IBV_WR_SEND : k == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
}

static enum ibv_wc_opcode
msg_wc_op(const struct flow *f, int i)
{
	enum ibv_wr_opcode op = msg_op(f, i);

	return op == IBV_WR_SEND ? IBV_WC_SEND : op == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE :
	       IBV_WC_RDMA_READ;
}

static void
flow_fail(struct flow *f, const char *side, const struct ibv_wc *wc, const char *why)
{
	if (f->nerr++ == 0)
		snprintf(f->err, sizeof(f->err), "%s wr_id %" PRIu64 " status %s opcode %d "
			 "byte_len %u: %s", side, (uint64_t)wc->wr_id,
			 ibv_wc_status_str(wc->status), wc->opcode, wc->byte_len, why);
}

static int
flow_create(struct flow *f, struct ibv_context *ca, struct ibv_context *cb,
	    const struct h_qp_opts *o)
{
	memset(f, 0, sizeof(*f));
	if (h_side_create(&f->a, ca, o) || h_side_create(&f->b, cb, o) ||
	    h_connect(&f->a, &f->b, o) || h_connect(&f->b, &f->a, o))
		return -1;
	return 0;
}

/*
 * Prepares @nmsg messages of @len bytes: the data, the destination cleared,
 * the receives posted; 0 or the post error.
 */
static int
flow_prep(struct flow *f, int nmsg, uint32_t len, uint32_t seed)
{
	if (nmsg > NSLOT || len > SLOT || (size_t)NSLOT * SLOT > f->a.buf_len)
		return EINVAL;
	f->nmsg = nmsg;
	f->len = len;
	f->seed = seed;
	f->s_done = f->r_done = 0;
	f->s_need = nmsg;
	f->r_need = f->no_read ? (nmsg + 1) / 2 : (nmsg + 2) / 3;
	f->nerr = 0;
	for (int i = 0; i < nmsg; i++) {
		uint8_t *pa = f->a.buf + (size_t)i * SLOT, *pb = f->b.buf + (size_t)i * SLOT;
		int ret;

		h_pattern(msg_op(f, i) == IBV_WR_RDMA_READ ? pb : pa, len, seed * 64 + i);
		memset(msg_op(f, i) == IBV_WR_RDMA_READ ? pa : pb, 0, SLOT);
		if (msg_op(f, i) == IBV_WR_SEND &&
		    (ret = h_post_recv(&f->b, (size_t)i * SLOT, SLOT, i)) != 0)
			return ret;
	}
	return 0;
}

/* Posts the prepared messages [@from, @to); 0 or the post error. */
static int
flow_send(struct flow *f, int from, int to)
{
	for (int i = from; i < to; i++) {
		struct ibv_sge sge = { (uintptr_t)f->a.buf + (size_t)i * SLOT, f->len,
				       f->a.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = msg_op(f, i), .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad = NULL;
		int ret;

		wr.wr.rdma.remote_addr = (uintptr_t)f->b.buf + (size_t)i * SLOT;
		wr.wr.rdma.rkey = f->b.mr->rkey;
		ret = ibv_post_send(f->a.qp, &wr, &bad);
		if (ret)
			return ret;
	}
	return 0;
}

static int
flow_post(struct flow *f, int nmsg, uint32_t len, uint32_t seed)
{
	int ret = flow_prep(f, nmsg, len, seed);

	return ret ? ret : flow_send(f, 0, nmsg);
}

/* Polls both CQs once; every completion is checked as it comes. Returns how many. */
static int
flow_poll(struct flow *f)
{
	struct ibv_wc wc[16];
	int n, seen = 0;

	n = ibv_poll_cq(f->a.scq, 16, wc);
	for (int k = 0; k < n; k++) {
		uint64_t i = wc[k].wr_id;

		if (i >= (uint64_t)f->nmsg || (f->s_done >> i) & 1)
			flow_fail(f, "send", &wc[k], "unknown or duplicate");
		else if (wc[k].status != IBV_WC_SUCCESS)
			flow_fail(f, "send", &wc[k], "failed");
		else if (wc[k].opcode != msg_wc_op(f, i) ||
			 (msg_op(f, i) == IBV_WR_RDMA_READ && wc[k].byte_len != f->len))
			flow_fail(f, "send", &wc[k], "wrong opcode or length");
		if (i < 64)
			f->s_done |= 1ULL << i;
	}
	seen += n > 0 ? n : 0;
	n = ibv_poll_cq(f->b.rcq, 16, wc);
	for (int k = 0; k < n; k++) {
		uint64_t i = wc[k].wr_id;

		if (i >= (uint64_t)f->nmsg || msg_op(f, i) != IBV_WR_SEND || (f->r_done >> i) & 1)
			flow_fail(f, "recv", &wc[k], "unknown or duplicate");
		else if (wc[k].status != IBV_WC_SUCCESS)
			flow_fail(f, "recv", &wc[k], "failed");
		else if (wc[k].opcode != IBV_WC_RECV || wc[k].byte_len != f->len)
			flow_fail(f, "recv", &wc[k], "wrong opcode or length");
		if (i < 64)
			f->r_done |= 1ULL << i;
	}
	return seen + (n > 0 ? n : 0);
}

static bool
flow_done(const struct flow *f)
{
	return __builtin_popcountll(f->s_done) == f->s_need &&
	       __builtin_popcountll(f->r_done) == f->r_need;
}

/* Every message's bytes where they should be; 0, or -1 with f->err set. */
static int
flow_verify(struct flow *f)
{
	uint8_t *exp = malloc(f->len);

	if (exp == NULL)
		return -1;
	for (int i = 0; i < f->nmsg; i++) {
		const uint8_t *dst = msg_op(f, i) == IBV_WR_RDMA_READ ? f->a.buf : f->b.buf;
		long d;

		dst += (size_t)i * SLOT;
		h_pattern(exp, f->len, f->seed * 64 + i);
		d = first_diff(dst, exp, f->len);
		if (d >= 0) {
			snprintf(f->err, sizeof(f->err), "message %d (%s): byte %ld of %u differs",
				 i, msg_op(f, i) == IBV_WR_SEND ? "SEND" :
				 msg_op(f, i) == IBV_WR_RDMA_WRITE ? "WRITE" : "READ", d, f->len);
			free(exp);
			return -1;
		}
	}
	free(exp);
	return 0;
}

/* Polls @n flows until all are done, one fails, or @ms pass; 0 when all are done. */
static int
flows_run(struct flow *f, int n, int ms)
{
	uint64_t end = h_now_ms() + ms;

	for (;;) {
		bool all = true;

		for (int i = 0; i < n; i++) {
			flow_poll(&f[i]);
			if (f[i].nerr)
				return -1;
			all &= flow_done(&f[i]);
		}
		if (all)
			return 0;
		if (h_now_ms() > end)
			return -1;
	}
}

#define ASSERT_FLOWS_OK(f, n) do { \
	for (int _i = 0; _i < (n); _i++) { \
		TEST_ASSERT((f)[_i].nerr == 0, "flow %d: %s", _i, (f)[_i].err); \
		TEST_ASSERT(flow_done(&(f)[_i]), "flow %d: %d/%d sends, %d/%d receives completed", \
			    _i, __builtin_popcountll((f)[_i].s_done), (f)[_i].s_need, \
			    __builtin_popcountll((f)[_i].r_done), (f)[_i].r_need); \
		TEST_ASSERT(flow_verify(&(f)[_i]) == 0, "flow %d: %s", _i, (f)[_i].err); \
	} \
} while (0)

/* One round on @n flows, to completion, every byte checked; nothing more comes. */
#define ROUND(f, n, nmsg, len, seed) do { \
	for (int _j = 0; _j < (n); _j++) \
		TEST_ASSERT_EQ(flow_post(&(f)[_j], (nmsg), (len), (seed) + _j), 0); \
	(void)flows_run((f), (n), RUN_MS); \
	ASSERT_FLOWS_OK(f, n); \
	for (int _j = 0; _j < (n); _j++) { \
		ASSERT_QUIET((f)[_j].a.scq, 0); \
		ASSERT_QUIET((f)[_j].b.rcq, 0); \
	} \
} while (0)

/* ------------------------------------------------------------------------- */
/* Resources of the running case, released by teardown whatever happened. */

enum kind { K_PD, K_CQ, K_QP, K_SRQ, K_MR, K_AH, K_NUM };
static const char *const kind_name[K_NUM] = { "PD", "CQ", "QP", "SRQ", "MR", "AH" };

static struct {
	struct ibv_context *ctx[2];
	struct flow fl[NFLOW + 1];
	int nfl;
	enum kind kind;
	void *obj[MAX_OBJS];
	int nobj;
	struct ibv_cq *cq;		/* the flooded QPs' CQ */
	void *mrbuf;
	/* tag matching */
	struct ibv_cq_ex *tcq;
	struct ibv_srq *tsrq[DROCE_MAX_TM_SRQ + 2];
	int ntsrq;
	struct ibv_pd *tpd;
	/* CQ overrun */
	struct ibv_cq *vcq;
	struct h_side v[4];		/* victims: v[0], v[1] on droce0; v[2], v[3] on droce1 */
	/* mbufs taken from each device's pool */
	struct rte_mbuf **held[2];
	unsigned int nheld[2];
} R;

static void
obj_destroy(enum kind k, void *o)
{
	switch (k) {
	case K_PD: ibv_dealloc_pd(o); break;
	case K_CQ: ibv_destroy_cq(o); break;
	case K_QP: ibv_destroy_qp(o); break;
	case K_SRQ: ibv_destroy_srq(o); break;
	case K_MR: ibv_dereg_mr(o); break;
	case K_AH: ibv_destroy_ah(o); break;
	default: break;
	}
}

/* Gives back the mbufs taken from the pools in @mask (bit d: droce<d>). */
static void
release_mbufs(unsigned int mask)
{
	for (int d = 0; d < 2; d++) {
		if (!(mask & (1u << d)))
			continue;
		for (unsigned int i = 0; i < R.nheld[d]; i++)
			rte_pktmbuf_free(R.held[d][i]);
		free(R.held[d]);
		R.held[d] = NULL;
		R.nheld[d] = 0;
	}
}

static void
teardown(void)
{
	release_mbufs(3);
	for (int i = 0; i < R.nobj; i++)
		obj_destroy(R.kind, R.obj[i]);
	for (int i = 0; i < 4; i++) {
		if (i >= 2 && R.v[i].rcq == R.vcq)
			R.v[i].rcq = NULL;	/* shared: destroyed below */
		h_side_destroy(&R.v[i]);
	}
	if (R.vcq)
		ibv_destroy_cq(R.vcq);
	for (int i = R.ntsrq - 1; i >= 0; i--)
		ibv_destroy_srq(R.tsrq[i]);
	for (int i = 0; i < R.nfl; i++) {
		h_side_destroy(&R.fl[i].a);
		h_side_destroy(&R.fl[i].b);
	}
	if (R.tcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(R.tcq));
	if (R.tpd)
		ibv_dealloc_pd(R.tpd);
	if (R.cq)
		ibv_destroy_cq(R.cq);
	free(R.mrbuf);
	for (int i = 0; i < 2; i++)
		if (R.ctx[i])
			ibv_close_device(R.ctx[i]);
	memset(&R, 0, sizeof(R));
}

static int
open_ctx(void)
{
	for (int i = 0; i < 2; i++) {
		R.ctx[i] = h_open(i);
		if (R.ctx[i] == NULL)
			return -1;
		fcntl(R.ctx[i]->async_fd, F_SETFL, fcntl(R.ctx[i]->async_fd, F_GETFL) | O_NONBLOCK);
	}
	return 0;
}

static void
close_ctx(void)
{
	for (int i = 0; i < 2; i++) {
		if (R.ctx[i])
			ibv_close_device(R.ctx[i]);
		R.ctx[i] = NULL;
	}
}

/* Adds a connected flow between the open contexts; NULL on failure. */
static struct flow *
add_flow(const struct h_qp_opts *o)
{
	struct flow *f = &R.fl[R.nfl++];

	return flow_create(f, R.ctx[0], R.ctx[1], o) == 0 ? f : NULL;
}

static void
del_flows(void)
{
	for (int i = 0; i < R.nfl; i++) {
		h_side_destroy(&R.fl[i].a);
		h_side_destroy(&R.fl[i].b);
	}
	R.nfl = 0;
}

/* ------------------------------------------------------------------------- */
/* The devices' own object counters (struct roce_dev, under its lock) */

static uint32_t
dev_count(const char *name, int k)
{
	struct roce_dev *d = roce_dev_by_name(name);
	uint32_t v = 0;

	if (d == NULL)
		return UINT32_MAX;
	pthread_mutex_lock(&d->lock);
	switch (k) {
	case K_PD: v = d->nb_pd; break;
	case K_CQ: v = d->nb_cq; break;
	case K_QP: v = d->nb_qp; break;
	case K_SRQ: v = d->nb_srq; break;
	case K_MR: v = d->nb_mr; break;
	case K_AH: v = d->nb_ah; break;
	default:	/* tag-matching SRQs */
		for (int i = 0; i < DROCE_MAX_TM_SRQ; i++)
			v += d->tm_tbl[i] != NULL;
	}
	pthread_mutex_unlock(&d->lock);
	return v;
}

/* Before every case: nothing is left on either device by an earlier one. */
static int
setup(void)
{
	static const char *const devs[] = { "droce0", "droce1" };

	for (int d = 0; d < 2; d++)
		for (int k = 0; k <= K_NUM; k++)
			if (dev_count(devs[d], k) != 0) {
				fprintf(stderr, "  %s holds %u %s at the start of the case\n", devs[d],
					dev_count(devs[d], k), k < K_NUM ? kind_name[k] : "TM SRQ");
				return -1;
			}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Object limits */

static void *
obj_create(enum kind k)
{
	struct h_side *a = &R.fl[0].a;

	switch (k) {
	case K_PD:
		return ibv_alloc_pd(R.ctx[0]);
	case K_CQ:
		return ibv_create_cq(R.ctx[0], 1, NULL, NULL, 0);
	case K_QP: {
		struct ibv_qp_init_attr qa = {
			.send_cq = R.cq, .recv_cq = R.cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		return ibv_create_qp(a->pd, &qa);
	}
	case K_SRQ: {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };

		return ibv_create_srq(a->pd, &sa);
	}
	case K_MR:
		return ibv_reg_mr(a->pd, R.mrbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	case K_AH:
		return h_ah(a, &R.fl[0].b);
	default:
		return NULL;
	}
}

static uint32_t
attr_limit(const struct ibv_device_attr *da, enum kind k)
{
	switch (k) {
	case K_PD: return da->max_pd;
	case K_CQ: return da->max_cq;
	case K_QP: return da->max_qp;
	case K_SRQ: return da->max_srq;
	case K_MR: return da->max_mr;
	case K_AH: return da->max_ah;
	default: return 0;
	}
}

/*
 * Creates @k on droce0 until creation fails, with a connected pair (one PD,
 * MR, QP and two CQs on droce0, and as many on droce1) made first.
 */
static int
flood(enum kind k)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };
	/* what the case holds on droce0 before the flood */
	static const uint32_t held[K_NUM] = { 1, 3, 1, 0, 1, 0 };
	struct ibv_device_attr da;
	uint32_t limit, n, mid;
	uint64_t t0, t_create, t_destroy;
	void *o1, *o2;
	int err;

	TEST_ASSERT_EQ(open_ctx(), 0);
	TEST_ASSERT_EQ(ibv_query_device(R.ctx[0], &da), 0);
	limit = attr_limit(&da, k);
	TEST_ASSERT(add_flow(&o) != NULL, "pair: %s", strerror(errno));
	R.cq = ibv_create_cq(R.ctx[0], 16, NULL, NULL, 0);
	R.mrbuf = aligned_alloc(4096, 4096);
	TEST_ASSERT(R.cq != NULL && R.mrbuf != NULL, "helpers");
	TEST_ASSERT_EQ(dev_count("droce0", k), held[k]);
	R.kind = k;

	t0 = h_now_ms();
	for (;;) {
		void *obj;

		TEST_ASSERT(R.nobj < MAX_OBJS, "%d %ss created, the limit is %u", R.nobj,
			    kind_name[k], limit);
		errno = 0;
		obj = obj_create(k);
		if (obj == NULL)
			break;
		R.obj[R.nobj++] = obj;
	}
	err = errno;
	t_create = h_now_ms() - t0;
	n = R.nobj;
	printf("# %s: max %u, %u held, %u created in %" PRIu64 " ms, then %s\n", kind_name[k],
	       limit, held[k], n, t_create, strerror(err));
	TEST_ASSERT_EQ(err, ENOMEM);
	TEST_ASSERT_EQ(n, limit - held[k]);
	TEST_ASSERT_EQ(dev_count("droce0", k), limit);
	/* the other device's limit is its own */
	TEST_ASSERT_EQ(dev_count("droce1", k), held[k] - (k == K_CQ));

	/* the pair made before the flood still works, at the limit */
	ROUND(R.fl, 1, 6, 40000, 1);

	/* one destroyed: exactly one more */
	mid = n / 2;
	obj_destroy(k, R.obj[mid]);
	TEST_ASSERT_EQ(dev_count("droce0", k), limit - 1);
	o1 = obj_create(k);
	TEST_ASSERT(o1 != NULL, "re-create after destroy: %s", strerror(errno));
	R.obj[mid] = o1;
	errno = 0;
	o2 = obj_create(k);
	TEST_ASSERT(o2 == NULL, "a %s beyond the limit", kind_name[k]);
	TEST_ASSERT_EQ(errno, ENOMEM);
	TEST_ASSERT_EQ(dev_count("droce0", k), limit);

	t0 = h_now_ms();
	for (int i = R.nobj - 1; i >= 0; i--) {
		obj_destroy(k, R.obj[i]);
		R.nobj = i;
	}
	t_destroy = h_now_ms() - t0;
	printf("# %s: %u destroyed in %" PRIu64 " ms\n", kind_name[k], n, t_destroy);
	TEST_ASSERT_EQ(dev_count("droce0", k), held[k]);
	ROUND(R.fl, 1, 6, 40000, 2);
	return TEST_SUCCESS;
}

static int test_pd_flood_stops_at_max_pd_with_enomem(void) { return flood(K_PD); }
static int test_cq_flood_stops_at_max_cq_with_enomem(void) { return flood(K_CQ); }
static int test_qp_flood_stops_at_max_qp_with_enomem(void) { return flood(K_QP); }
static int test_srq_flood_stops_at_max_srq_with_enomem(void) { return flood(K_SRQ); }
static int test_mr_flood_stops_at_max_mr_with_enomem(void) { return flood(K_MR); }
static int test_ah_flood_stops_at_max_ah_with_enomem(void) { return flood(K_AH); }

/* @reg (an ibv_reg_mr call) fails with @err; an MR it makes anyway is freed. */
#define REG_FAILS(reg, err) do { \
	struct ibv_mr *_mr; \
	errno = 0; \
	_mr = (reg); \
	if (_mr != NULL) \
		ibv_dereg_mr(_mr); \
	TEST_ASSERT(_mr == NULL, "%s succeeded", #reg); \
	TEST_ASSERT_EQ(errno, (err)); \
} while (0)

/*
 * An MR longer than max_mr_size, or whose range wraps the address space,
 * is refused with EINVAL and counts nowhere; max_mr_size itself is accepted.
 */
static int
test_mr_beyond_max_mr_size_einval_nothing_leaked(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;

	TEST_ASSERT_EQ(open_ctx(), 0);
	TEST_ASSERT_EQ(ibv_query_device(R.ctx[0], &da), 0);
	TEST_ASSERT_EQ(da.max_mr_size, DROCE_MAX_MR_SIZE);
	TEST_ASSERT(add_flow(&o) != NULL, "pair");
	pd = R.fl[0].a.pd;
	buf = R.fl[0].a.buf;
	printf("# max_mr_size %" PRIu64 " (no limit on the total registered)\n", da.max_mr_size);

	REG_FAILS(ibv_reg_mr(pd, buf, da.max_mr_size + 1, IBV_ACCESS_LOCAL_WRITE), EINVAL);
	REG_FAILS(ibv_reg_mr(pd, buf, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE), EINVAL);
	/* [addr, addr + length) or [iova, iova + length) past the end of the address space */
	REG_FAILS(ibv_reg_mr_iova(pd, (void *)(UINTPTR_MAX - 4095), 8192, 0x1000,
				  IBV_ACCESS_LOCAL_WRITE), EINVAL);
	REG_FAILS(ibv_reg_mr_iova(pd, buf, 8192, UINT64_MAX - 4095, IBV_ACCESS_LOCAL_WRITE), EINVAL);
	TEST_ASSERT_EQ(dev_count("droce0", K_MR), 1);

	/* exactly max_mr_size: droce pins nothing, so the size alone is checked */
	mr = ibv_reg_mr(pd, buf, da.max_mr_size, IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mr != NULL, "an MR of max_mr_size bytes: %s", strerror(errno));
	R.kind = K_MR;
	R.obj[R.nobj++] = mr;
	TEST_ASSERT_EQ(mr->length, da.max_mr_size);
	TEST_ASSERT_EQ(dev_count("droce0", K_MR), 2);
	R.nobj--;
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	TEST_ASSERT_EQ(dev_count("droce0", K_MR), 1);
	ROUND(R.fl, 1, 6, 40000, 3);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Tag matching: tags per TM SRQ, TM SRQs per device, list operations in flight */

static struct ibv_srq *
tm_srq(struct ibv_context *c, uint32_t tags, uint32_t ops)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = R.tpd,
		.cq = ibv_cq_ex_to_cq(R.tcq),
		.tm_cap = { .max_num_tags = tags, .max_ops = ops },
	};

	return ibv_create_srq_ex(c, &sa);
}

static int
tm_add(struct ibv_srq *srq, uint64_t tag, unsigned int flags, uint32_t *handle)
{
	struct ibv_ops_wr op = { .wr_id = tag, .opcode = IBV_WR_TAG_ADD, .flags = flags }, *bad;
	int ret;

	op.tm.add.recv_wr_id = tag;
	op.tm.add.tag = tag;
	op.tm.add.mask = UINT64_MAX;
	ret = ibv_post_srq_ops(srq, &op, &bad);
	if (ret == 0 && handle)
		*handle = op.tm.handle;
	return ret;
}

/* The next completion of the TM CQ within WC_MS: its opcode, or -1. */
static int
tm_poll(enum ibv_wc_status *st, uint64_t *wr_id)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = h_now_ms() + WC_MS;
	int ret, op;

	while ((ret = ibv_start_poll(R.tcq, &pa)) == ENOENT && h_now_ms() < end)
		;
	if (ret != 0)
		return -1;
	*st = R.tcq->status;
	*wr_id = R.tcq->wr_id;
	op = ibv_wc_read_opcode(R.tcq);
	ibv_end_poll(R.tcq);
	return op;
}

/*
 * A TM SRQ takes max_num_tags tags, then ADD fails with ENOMEM and *bad_op
 * naming it; a DEL whose completion is polled gives back exactly one. Asking
 * for more tags or list operations than tm_caps says is EINVAL, and the 17th
 * TM SRQ of a device is ENOMEM (DROCE_MAX_TM_SRQ; verbs has no field for it).
 * In flight: with --inline and no QP on the device nothing consumes the list
 * operations while one ibv_post_srq_ops call runs, so one list of more than
 * max_ops ADDs stops at index max_ops with ENOMEM. A pair keeps passing
 * traffic while the tags are exhausted.
 */
static int
test_tm_tags_and_tm_srqs_stop_at_their_limits(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_device_attr_ex dx;
	struct ibv_ops_wr ops[8], *bad = NULL;
	struct ibv_srq *srq;
	enum ibv_wc_status st;
	uint32_t tags, n, h = 0, h7 = UINT32_MAX;
	uint64_t wr_id, t0;
	int ret;

	TEST_ASSERT_EQ(open_ctx(), 0);
	TEST_ASSERT_EQ(ibv_query_device_ex(R.ctx[1], NULL, &dx), 0);
	tags = dx.tm_caps.max_num_tags;
	TEST_ASSERT_EQ(tags, DROCE_TM_MAX_TAGS);
	R.tpd = ibv_alloc_pd(R.ctx[1]);
	R.tcq = ibv_create_cq_ex(R.ctx[1], &ca);
	TEST_ASSERT(R.tpd != NULL && R.tcq != NULL, "PD or CQ");

	/* list operations in flight: max_ops 4, one list of 8 ADDs */
	srq = R.tsrq[R.ntsrq++] = tm_srq(R.ctx[1], 16, 4);
	TEST_ASSERT(srq != NULL, "TM SRQ: %s", strerror(errno));
	for (int i = 0; i < 8; i++) {
		memset(&ops[i], 0, sizeof(ops[i]));
		ops[i].wr_id = 500 + i;
		ops[i].opcode = IBV_WR_TAG_ADD;
		ops[i].tm.add.tag = 500 + i;
		ops[i].tm.add.mask = UINT64_MAX;
		ops[i].next = i + 1 < 8 ? &ops[i + 1] : NULL;
	}
	ret = ibv_post_srq_ops(srq, ops, &bad);
	printf("# TM: 8 ADDs in one list, max_ops 4: %s, stopped at %ld\n", strerror(ret),
	       ret ? (long)(bad - ops) : -1L);
	if (h_inline()) {
		TEST_ASSERT_EQ(ret, ENOMEM);
		TEST_ASSERT_PTR_EQ(bad, &ops[4]);
	} else {
		/* the engine lcore may consume them as they come */
		TEST_ASSERT(ret == 0 || (ret == ENOMEM && bad >= &ops[4]), "%s at %ld",
			    strerror(ret), (long)(bad - ops));
	}
	TEST_ASSERT_EQ(ibv_destroy_srq(srq), 0);
	R.ntsrq--;

	/* creation beyond tm_caps */
	errno = 0;
	TEST_ASSERT(tm_srq(R.ctx[1], tags + 1, 16) == NULL, "max_num_tags + 1 accepted");
	TEST_ASSERT_EQ(errno, EINVAL);
	errno = 0;
	TEST_ASSERT(tm_srq(R.ctx[1], 16, dx.tm_caps.max_ops + 1) == NULL, "max_ops + 1 accepted");
	TEST_ASSERT_EQ(errno, EINVAL);

	/* tags: a pair first, then max_num_tags ADDs */
	TEST_ASSERT(add_flow(&o) != NULL, "pair");
	srq = R.tsrq[R.ntsrq++] = tm_srq(R.ctx[1], tags, dx.tm_caps.max_ops);
	TEST_ASSERT(srq != NULL, "TM SRQ: %s", strerror(errno));
	t0 = h_now_ms();
	for (n = 0; n <= tags; n++) {
		ret = tm_add(srq, n, 0, n == 7 ? &h7 : NULL);
		if (ret == ENOMEM) {
			/*
			 * ENOMEM is also a full list-operation ring (max_ops):
			 * once the engine has taken every operation, only
			 * the tags can be missing (none comes back without a
			 * polled completion).
			 */
			struct rte_ring *pending = to_roce_srq(to_dsrq(srq)->fp)->tm->ops;
			uint64_t end = h_now_ms() + WC_MS;
			struct ibv_wc wc;

			while (!rte_ring_empty(pending) && h_now_ms() < end)
				ibv_poll_cq(ibv_cq_ex_to_cq(R.tcq), 0, &wc);
			ret = tm_add(srq, n, 0, n == 7 ? &h7 : NULL);
		}
		if (ret)
			break;
	}
	printf("# TM: %u tags posted in %" PRIu64 " ms, then %s\n", n, h_now_ms() - t0,
	       strerror(ret));
	TEST_ASSERT_EQ(ret, ENOMEM);
	TEST_ASSERT_EQ(n, tags);
	ROUND(R.fl, 1, 6, 40000, 4);

	/* a DEL polled: one tag back, one ADD more */
	{
		struct ibv_ops_wr del = { .wr_id = 9999, .opcode = IBV_WR_TAG_DEL,
					  .flags = IBV_OPS_SIGNALED };

		del.tm.handle = h7;	/* tag 7's */
		TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &del, &bad), 0);
		TEST_ASSERT_EQ(tm_poll(&st, &wr_id), IBV_WC_TM_DEL);
		TEST_ASSERT_EQ(st, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wr_id, 9999);
	}
	TEST_ASSERT_EQ(tm_add(srq, 100000, 0, &h), 0);
	TEST_ASSERT_EQ(h, h7);		/* the only free handle */
	TEST_ASSERT_EQ(tm_add(srq, 100001, 0, NULL), ENOMEM);

	/* TM SRQs per device */
	for (n = 1; n <= DROCE_MAX_TM_SRQ; n++) {
		errno = 0;
		srq = tm_srq(R.ctx[1], 16, 16);
		if (srq == NULL)
			break;
		R.tsrq[R.ntsrq++] = srq;
	}
	printf("# TM: %u TM SRQs per device, then %s\n", n, strerror(errno));
	TEST_ASSERT_EQ(n, DROCE_MAX_TM_SRQ);
	TEST_ASSERT_EQ(errno, ENOMEM);
	TEST_ASSERT_EQ(dev_count("droce1", K_NUM), DROCE_MAX_TM_SRQ);
	TEST_ASSERT_EQ(dev_count("droce1", K_SRQ), DROCE_MAX_TM_SRQ);	/* none left behind */
	TEST_ASSERT_EQ(ibv_destroy_srq(R.tsrq[--R.ntsrq]), 0);
	srq = tm_srq(R.ctx[1], 16, 16);
	TEST_ASSERT(srq != NULL, "a TM SRQ after one was destroyed: %s", strerror(errno));
	R.tsrq[R.ntsrq++] = srq;
	errno = 0;
	TEST_ASSERT(tm_srq(R.ctx[1], 16, 16) == NULL, "a 17th TM SRQ");
	TEST_ASSERT_EQ(errno, ENOMEM);
	while (R.ntsrq)
		TEST_ASSERT_EQ(ibv_destroy_srq(R.tsrq[--R.ntsrq]), 0);
	TEST_ASSERT_EQ(dev_count("droce1", K_NUM), 0);
	TEST_ASSERT_EQ(dev_count("droce1", K_SRQ), 0);
	ROUND(R.fl, 1, 6, 40000, 5);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* mbuf exhaustion */

static struct rte_mempool *
dev_pool(int d)
{
	return rte_mempool_lookup(d == 0 ? "droce_mp_droce0" : "droce_mp_droce1");
}

static uint64_t
xs(int d, const char *name)
{
	return h_xstat(d == 0 ? "droce0" : "droce1", name);
}

/* Frames sitting in the rings between and inside the devices. */
static unsigned int
frames_in_rings(void)
{
	static const char *const names[] = {
		"drp_net_ring_a", "drp_net_ring_b", "droce_lo_droce0", "droce_lo_droce1",
	};
	unsigned int n = 0;

	for (unsigned int i = 0; i < RTE_DIM(names); i++) {
		struct rte_ring *r = rte_ring_lookup(names[i]);

		n += r ? rte_ring_count(r) : 0;
	}
	return n;
}

/* Keeps the devices moving for @ms with no traffic posted. */
static void
settle(int ms)
{
	uint64_t end = h_now_ms() + ms;

	while (h_now_ms() < end)
		for (int i = 0; i < R.nfl; i++)
			flow_poll(&R.fl[i]);
}

/* One pair, one round: both devices know each other's MAC (ARP persists). */
static int
warm_up(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };

	TEST_ASSERT(dev_pool(0) != NULL && dev_pool(1) != NULL, "the devices' mbuf pools");
	TEST_ASSERT_EQ(open_ctx(), 0);
	TEST_ASSERT(add_flow(&o) != NULL, "pair");
	ROUND(R.fl, 1, 3, 4096, 9);
	settle(QUIET_MS);
	del_flows();
	close_ctx();
	return TEST_SUCCESS;
}

static void
print_pool(struct rte_mempool *mp, void *arg)
{
	RTE_SET_USED(arg);
	printf("# mempool %s: %u mbufs, cache %u, %u in use\n", mp->name, mp->size,
	       mp->cache_size, rte_mempool_in_use_count(mp));
}

/* Every mempool of the process: the two devices' pools are all there is (net_ring has none). */
static void
print_pools(void)
{
	rte_mempool_walk(print_pool, NULL);
	printf("# %u frames in the rings\n", frames_in_rings());
}

/*
 * Takes every free mbuf of the pools in @mask (bit d: droce<d>). Must run
 * with no context open, so that no engine lcore runs: an lcore's mempool
 * cache belongs to it, and only an idle one's can be flushed from here.
 */
static int
exhaust(unsigned int mask)
{
	unsigned int lc;

	RTE_LCORE_FOREACH_WORKER(lc)
		TEST_ASSERT(rte_eal_get_lcore_state(lc) == WAIT, "lcore %u still runs", lc);
	for (int d = 0; d < 2; d++) {
		struct rte_mempool *mp = dev_pool(d);
		struct rte_mbuf *m;

		if (!(mask & (1u << d)))
			continue;
		R.held[d] = calloc(mp->size, sizeof(*R.held[d]));
		TEST_ASSERT(R.held[d] != NULL, "calloc");
		RTE_LCORE_FOREACH_WORKER(lc)
			rte_mempool_cache_flush(rte_mempool_default_cache(mp, lc), mp);
		while (R.nheld[d] < mp->size && (m = rte_pktmbuf_alloc(mp)) != NULL)
			R.held[d][R.nheld[d]++] = m;
		TEST_ASSERT_EQ(rte_mempool_avail_count(mp), 0);
		printf("# holding all %u mbufs of %s\n", R.nheld[d], mp->name);
	}
	return TEST_SUCCESS;
}

/* In use back to @base (bounded wait while the devices drain). */
static int
pools_back_to(const unsigned int base[2])
{
	uint64_t end = h_now_ms() + 2000;

	for (;;) {
		unsigned int u0 = rte_mempool_in_use_count(dev_pool(0));
		unsigned int u1 = rte_mempool_in_use_count(dev_pool(1));

		if (u0 == base[0] && u1 == base[1])
			return TEST_SUCCESS;
		TEST_ASSERT(h_now_ms() < end, "mbufs in use %u / %u, were %u / %u (%u in rings)",
			    u0, u1, base[0], base[1], frames_in_rings());
		settle(5);
	}
}

static void
print_port_stats(void)
{
	static const char *const ports[] = { "net_ring_a", "net_ring_b" };

	for (int i = 0; i < 2; i++) {
		struct rte_eth_stats s;
		uint16_t p;

		if (rte_eth_dev_get_port_by_name(ports[i], &p) || rte_eth_stats_get(p, &s))
			continue;
		printf("# %s: ipackets %" PRIu64 " opackets %" PRIu64 " rx_nombuf %" PRIu64
		       " imissed %" PRIu64 " oerrors %" PRIu64 "\n", ports[i], s.ipackets,
		       s.opackets, s.rx_nombuf, s.imissed, s.oerrors);
	}
}

/*
 * The flows' traffic waits @ms while the pools in @empty are: no send
 * completes (every one needs droce1 to send an ACK or a READ response, and
 * droce0 to send the request), no receive either while droce0's pool is
 * empty, and the failed allocations are counted by the device that tries:
 * droce0, or droce1 when droce0's requests reach it (since @nomb, taken
 * before the traffic was posted: with inline progress posting moves the
 * devices).
 */
static int
hold(unsigned int empty, const uint64_t nomb[2], int ms)
{
	uint64_t t0 = h_now_ms();
	int sends = 0, recvs = 0;

	while (h_now_ms() - t0 < (uint64_t)ms)
		for (int i = 0; i < R.nfl; i++)
			flow_poll(&R.fl[i]);
	for (int i = 0; i < R.nfl; i++) {
		TEST_ASSERT(R.fl[i].nerr == 0, "flow %d: %s", i, R.fl[i].err);
		sends += __builtin_popcountll(R.fl[i].s_done);
		recvs += __builtin_popcountll(R.fl[i].r_done);
	}
	printf("# %s empty for %d ms: %d sends, %d receives completed; tx_drop_no_mbuf +%"
	       PRIu64 " / +%" PRIu64 "\n", empty == 3 ? "both pools" : empty == 1 ?
	       "droce0's pool" : "droce1's pool", ms, sends, recvs,
	       xs(0, "tx_drop_no_mbuf") - nomb[0], xs(1, "tx_drop_no_mbuf") - nomb[1]);
	TEST_ASSERT_EQ(sends, 0);
	if (empty & 1) {
		TEST_ASSERT_EQ(recvs, 0);
		TEST_ASSERT(xs(0, "tx_drop_no_mbuf") > nomb[0], "droce0: failures not counted");
	} else {
		TEST_ASSERT(xs(1, "tx_drop_no_mbuf") > nomb[1], "droce1: failures not counted");
	}
	return TEST_SUCCESS;
}

/*
 * @mask: whose pool is emptied (bit 0: droce0, the requester; bit 1: droce1,
 * the responder). NFLOW pairs post SENDs, WRITEs and READs (@no_read: SENDs
 * and WRITEs) of 48 KiB (48 packets each), with local ACK timeout @timeout
 * and 7 retries, and wait @ms (hold()); with both pools empty, droce0's
 * comes back first and droce1's after another wait. Then every message
 * completes once with its bytes, nothing more completes, and every mbuf
 * comes back. With @resends, the wait spans several timeouts (within the
 * budget): the requester resent, and the responder saw duplicates.
 */
static int
mbuf_exhausted_then_recovered(unsigned int mask, bool no_read, uint8_t timeout, int ms,
			      bool resends)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC, .timeout = timeout, .retry_cnt_p1 = 8 };
	unsigned int base[2];
	uint64_t rtx0, dup1, t0, nomb[2];

	TEST_ASSERT_EQ(warm_up(), 0);
	base[0] = rte_mempool_in_use_count(dev_pool(0));
	base[1] = rte_mempool_in_use_count(dev_pool(1));
	print_pools();
	rtx0 = xs(0, "retransmits");
	dup1 = xs(1, "rx_dup");
	TEST_ASSERT_EQ(exhaust(mask), 0);

	TEST_ASSERT_EQ(open_ctx(), 0);
	for (int i = 0; i < NFLOW; i++) {
		TEST_ASSERT(add_flow(&o) != NULL, "pair %d", i);
		R.fl[i].no_read = no_read;
	}
	for (int d = 0; d < 2; d++)
		nomb[d] = xs(d, "tx_drop_no_mbuf");
	for (int i = 0; i < NFLOW; i++)
		TEST_ASSERT_EQ(flow_post(&R.fl[i], 12, 48 * 1024, 100 + i), 0);
	TEST_ASSERT_EQ(hold(mask, nomb, ms), 0);
	if (mask == 3) {
		for (int d = 0; d < 2; d++)
			nomb[d] = xs(d, "tx_drop_no_mbuf");
		release_mbufs(1);
		TEST_ASSERT_EQ(hold(2, nomb, ms), 0);
	}
	release_mbufs(3);
	t0 = h_now_ms();
	(void)flows_run(R.fl, NFLOW, RUN_MS);
	printf("# recovered in %" PRIu64 " ms; retransmits +%" PRIu64 ", rx_dup +%" PRIu64 "\n",
	       h_now_ms() - t0, xs(0, "retransmits") - rtx0, xs(1, "rx_dup") - dup1);
	ASSERT_FLOWS_OK(R.fl, NFLOW);
	if (resends) {
		TEST_ASSERT(xs(0, "retransmits") > rtx0, "no resend");
		TEST_ASSERT(xs(1, "rx_dup") > dup1, "no duplicate seen");
	}
	settle(QUIET_MS);
	for (int i = 0; i < NFLOW; i++)
		TEST_ASSERT(flow_poll(&R.fl[i]) == 0 && R.fl[i].nerr == 0,
			    "flow %d: a completion more: %s", i, R.fl[i].err);
	print_port_stats();
	TEST_ASSERT_EQ(pools_back_to(base), 0);
	/* and they carry traffic again */
	ROUND(R.fl, NFLOW, 6, 40000, 200);
	TEST_ASSERT_EQ(pools_back_to(base), 0);
	return TEST_SUCCESS;
}

/* The requester's pool: nothing leaves, then everything does. Budget 8 x 537 ms. */
static int
test_mbuf_exhausted_requester_backpressure_then_all_complete(void)
{
	return mbuf_exhausted_then_recovered(1, false, 17, EXHAUST_MS, false);
}

/* The responder's pool: receives complete, ACKs and READ responses wait. */
static int
test_mbuf_exhausted_responder_acks_wait_then_all_complete(void)
{
	return mbuf_exhausted_then_recovered(2, false, 17, EXHAUST_MS, false);
}

/*
 * The responder's pool for 300 ms, timeout 15 (134 ms; budget 8 x 134 ms):
 * the requester resends meanwhile, every receive still completes once.
 */
static int
test_mbuf_exhausted_responder_resends_meanwhile_received_once(void)
{
	return mbuf_exhausted_then_recovered(2, true, 15, 300, true);
}

/* Both pools; the requester's comes back first. */
static int
test_mbuf_exhausted_both_sides_then_all_complete(void)
{
	return mbuf_exhausted_then_recovered(3, false, 17, EXHAUST_MS, false);
}

/*
 * Pairs without a local ACK timer (timeout 0) stream SENDs and WRITEs while
 * droce1's pool is empty: droce1 cannot send its ACKs, and nothing will
 * ever resend. Once the mbufs are back the ACKs still owed go out: every
 * message completes, with no retransmission.
 */
static int
test_mbuf_exhausted_responder_acks_owed_without_ack_timer(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .no_ack_timer = true };
	unsigned int base[2];
	uint64_t nomb[2], rtx0, t0;

	TEST_ASSERT_EQ(warm_up(), 0);
	base[0] = rte_mempool_in_use_count(dev_pool(0));
	base[1] = rte_mempool_in_use_count(dev_pool(1));
	rtx0 = xs(0, "retransmits");
	TEST_ASSERT_EQ(exhaust(2), 0);
	TEST_ASSERT_EQ(open_ctx(), 0);
	for (int i = 0; i < NFLOW; i++) {
		struct flow *f = &R.fl[R.nfl++];

		memset(f, 0, sizeof(*f));
		TEST_ASSERT(h_side_create(&f->a, R.ctx[0], &o) == 0 &&
			    h_side_create(&f->b, R.ctx[1], &o) == 0 &&
			    h_connect(&f->a, &f->b, &o) == 0 && h_connect(&f->b, &f->a, &o) == 0,
			    "pair %d", i);
		f->no_read = true;
	}
	for (int d = 0; d < 2; d++)
		nomb[d] = xs(d, "tx_drop_no_mbuf");
	for (int i = 0; i < NFLOW; i++)
		TEST_ASSERT_EQ(flow_post(&R.fl[i], 12, 48 * 1024, 600 + i), 0);
	TEST_ASSERT_EQ(hold(2, nomb, EXHAUST_MS), 0);
	release_mbufs(3);
	t0 = h_now_ms();
	(void)flows_run(R.fl, NFLOW, RUN_MS);
	printf("# recovered in %" PRIu64 " ms; retransmits +%" PRIu64 "\n", h_now_ms() - t0,
	       xs(0, "retransmits") - rtx0);
	ASSERT_FLOWS_OK(R.fl, NFLOW);
	TEST_ASSERT_EQ(xs(0, "retransmits"), rtx0);
	settle(QUIET_MS);
	for (int i = 0; i < NFLOW; i++)
		TEST_ASSERT(flow_poll(&R.fl[i]) == 0 && R.fl[i].nerr == 0,
			    "flow %d: a completion more: %s", i, R.fl[i].err);
	TEST_ASSERT_EQ(pools_back_to(base), 0);
	return TEST_SUCCESS;
}

/*
 * The pool in @mask stays empty past the retry budget (timeout 12: 16.8 ms,
 * retry_cnt 2: three tries): the first WR ends in IBV_WC_RETRY_EXC_ERR, the
 * others are flushed, the requester QP is in ERR; nothing crashes or hangs.
 * Once the mbufs are back a new pair passes traffic and no mbuf is lost.
 */
static int
mbuf_exhausted_past_retry_budget(unsigned int mask)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC, .timeout = 12, .retry_cnt_p1 = 3 };
	const struct h_qp_opts o2 = { .type = IBV_QPT_RC };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	unsigned int base[2];
	struct ibv_wc wc;
	struct flow *f;
	uint64_t t0;

	TEST_ASSERT_EQ(warm_up(), 0);
	base[0] = rte_mempool_in_use_count(dev_pool(0));
	base[1] = rte_mempool_in_use_count(dev_pool(1));
	TEST_ASSERT_EQ(exhaust(mask), 0);
	TEST_ASSERT_EQ(open_ctx(), 0);
	f = add_flow(&o);
	TEST_ASSERT(f != NULL, "pair");
	TEST_ASSERT_EQ(flow_post(f, 6, 8192, 300), 0);
	t0 = h_now_ms();
	POLL1(f->a.scq, wc);
	printf("# first WR ended after %" PRIu64 " ms: %s\n", h_now_ms() - t0,
	       ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.wr_id, 0);
	ASSERT_STATUS(wc, IBV_WC_RETRY_EXC_ERR);
	for (int i = 1; i < 6; i++) {
		POLL1(f->a.scq, wc);
		TEST_ASSERT_EQ(wc.wr_id, i);
		ASSERT_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	}
	TEST_ASSERT_EQ(ibv_query_qp(f->a.qp, &qa, IBV_QP_STATE, &qi), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_ERR);
	/* the responder never saw a packet when the requester's pool was empty */
	if (mask & 1)
		ASSERT_QUIET(f->b.rcq, 0);

	release_mbufs(3);
	del_flows();
	TEST_ASSERT(add_flow(&o2) != NULL, "new pair");
	ROUND(R.fl, 1, 12, 48 * 1024, 301);
	settle(QUIET_MS);
	TEST_ASSERT_EQ(pools_back_to(base), 0);
	return TEST_SUCCESS;
}

static int
test_mbuf_exhausted_responder_past_retry_budget_retry_exc_err(void)
{
	return mbuf_exhausted_past_retry_budget(2);
}

static int
test_mbuf_exhausted_requester_past_retry_budget_retry_exc_err(void)
{
	return mbuf_exhausted_past_retry_budget(1);
}

/* ------------------------------------------------------------------------- */
/* CQ overrun under load */

static int
next_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	return ibv_get_async_event(c, ev);	/* async_fd is non-blocking */
}

/*
 * Until @s's send completion arrives (or WC_MS): 0 when it has. Only @s's
 * CQ is polled (with --inline, one progress round per poll), so the other
 * pairs' traffic is still on its way meanwhile.
 */
static int
wait_sent(struct h_side *s, uint64_t wr_id)
{
	uint64_t end = h_now_ms() + WC_MS;
	struct ibv_wc wc;

	while (h_now_ms() < end) {
		if (ibv_poll_cq(s->scq, 1, &wc) == 1)
			return wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS ? 0 : -1;
	}
	return -1;
}

/* Until droce1 counts a CQ overflow beyond @ovf (or WC_MS), polling @s: 0 when it has. */
static int
wait_overflow(struct h_side *s, uint64_t ovf)
{
	uint64_t end = h_now_ms() + WC_MS;
	struct ibv_wc wc;

	while (h_now_ms() < end) {
		if (ibv_poll_cq(s->scq, 1, &wc) < 0)
			return -1;
		if (xs(1, "cq_overflow") > ovf)
			return 0;
	}
	return -1;
}

/*
 * NFLOW pairs stream SENDs, WRITEs and READs (16 x 64 KiB each, four
 * rounds) while a receive CQ of 2 entries on droce1, shared by two QPs and
 * never polled, takes one receive from each QP before the second round's
 * stream is posted and one more from each right after: those two overrun
 * it, with that stream in flight. droce1's context gets one IBV_EVENT_CQ_ERR on that
 * CQ and IBV_EVENT_QP_FATAL on each of the two QPs, both in ERR, and no
 * other event; the CQ still holds the two completions that fit; the other
 * pairs complete every message with every byte and stay in RTS.
 */
static int
test_cq_overrun_under_load_other_cqs_unharmed(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };
	uint64_t ovf0 = xs(1, "cq_overflow");
	struct ibv_async_event ev;
	bool cq_err = false, fatal[2] = { false, false };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc[8];
	int n, left = 0;

	TEST_ASSERT_EQ(open_ctx(), 0);
	for (int i = 0; i < NFLOW; i++)
		TEST_ASSERT(add_flow(&o) != NULL, "pair %d", i);
	/* victims: v[0] -> v[2] and v[1] -> v[3]; v[2] and v[3] complete receives into vcq */
	R.vcq = ibv_create_cq(R.ctx[1], 2, NULL, NULL, 0);
	TEST_ASSERT(R.vcq != NULL, "victim CQ");
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(h_side_create(&R.v[i], R.ctx[i / 2], &o), 0);
	for (int i = 2; i < 4; i++) {
		struct ibv_qp_init_attr qia = {
			.send_cq = R.v[i].scq, .recv_cq = R.vcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		TEST_ASSERT_EQ(ibv_destroy_qp(R.v[i].qp), 0);
		R.v[i].qp = ibv_create_qp(R.v[i].pd, &qia);
		TEST_ASSERT(R.v[i].qp != NULL, "victim QP");
	}
	for (int i = 0; i < 2; i++)
		TEST_ASSERT(h_connect(&R.v[i], &R.v[i + 2], &o) == 0 &&
			    h_connect(&R.v[i + 2], &R.v[i], &o) == 0, "victim pair %d", i);
	for (int i = 2; i < 4; i++)
		for (int k = 0; k < 4; k++)
			TEST_ASSERT_EQ(h_post_recv(&R.v[i], k * 4096, 4096, 10 * i + k), 0);

	for (int round = 0; round < 4; round++) {
		uint64_t ovf = xs(1, "cq_overflow");

		/* round 1: the victim CQ filled, one receive each, before the stream */
		for (int k = 0; round == 1 && k < 2; k++) {
			h_pattern(R.v[k].buf + k * 4096, 100 + k, 77 + k);
			TEST_ASSERT_EQ(h_post_send(&R.v[k], IBV_WR_SEND, k * 4096, 100 + k, k,
						   IBV_SEND_SIGNALED), 0);
			TEST_ASSERT(wait_sent(&R.v[k], k) == 0, "victim send %d not acknowledged", k);
		}
		for (int i = 0; i < R.nfl; i++) {
			TEST_ASSERT_EQ(flow_prep(&R.fl[i], 16, SLOT, 400 + 10 * round + i), 0);
			TEST_ASSERT_EQ(flow_send(&R.fl[i], 0, 8), 0);
		}
		/* round 1, mid-stream: one more receive each overruns it */
		for (int k = 2; round == 1 && k < 4; k++) {
			h_pattern(R.v[k % 2].buf + k * 4096, 100 + k, 77 + k);
			TEST_ASSERT_EQ(h_post_send(&R.v[k % 2], IBV_WR_SEND, k * 4096, 100 + k, k,
						   IBV_SEND_SIGNALED), 0);
		}
		for (int i = 0; i < R.nfl; i++)
			TEST_ASSERT_EQ(flow_send(&R.fl[i], 8, 16), 0);
		if (round == 1) {
			TEST_ASSERT(wait_overflow(&R.v[0], ovf + 1) == 0, "the victim CQ not overrun");
			/* messages the engine had not completed yet when it was (for the log) */
			for (int i = 0; i < R.nfl; i++)
				left += 16 - __builtin_popcountll(R.fl[i].s_done) -
					(int)(to_dcq(R.fl[i].a.scq)->fp->produced - to_dcq(R.fl[i].a.scq)->fp->consumed);
			printf("# CQ overrun with %d of %d messages of the other pairs in flight\n",
			       left, 16 * R.nfl);
		}
		(void)flows_run(R.fl, R.nfl, RUN_MS);
		ASSERT_FLOWS_OK(R.fl, R.nfl);
	}

	/* events: droce1's context, the victims only */
	for (uint64_t end = h_now_ms() + WC_MS; !(cq_err && fatal[0] && fatal[1]) &&
	     h_now_ms() < end;) {
		if (next_event(R.ctx[1], &ev) != 0)
			continue;
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == R.vcq && !cq_err) {
			cq_err = true;
		} else if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == R.v[2].qp &&
			   !fatal[0]) {
			fatal[0] = true;
		} else if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == R.v[3].qp &&
			   !fatal[1]) {
			fatal[1] = true;
		} else {
			TEST_ASSERT(0, "unexpected %s", ibv_event_type_str(ev.event_type));
		}
		ibv_ack_async_event(&ev);
	}
	TEST_ASSERT(cq_err && fatal[0] && fatal[1], "CQ_ERR %d, QP_FATAL %d %d", cq_err,
		    fatal[0], fatal[1]);
	settle(QUIET_MS);
	TEST_ASSERT(next_event(R.ctx[1], &ev) != 0, "then %s", ibv_event_type_str(ev.event_type));
	TEST_ASSERT(next_event(R.ctx[0], &ev) != 0, "droce0: %s", ibv_event_type_str(ev.event_type));
	TEST_ASSERT(xs(1, "cq_overflow") >= ovf0 + 2, "overflow counted %" PRIu64,
		    xs(1, "cq_overflow") - ovf0);
	for (int i = 2; i < 4; i++) {
		TEST_ASSERT_EQ(ibv_query_qp(R.v[i].qp, &qa, IBV_QP_STATE, &qi), 0);
		TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_ERR);
	}
	for (int i = 0; i < R.nfl; i++) {
		TEST_ASSERT_EQ(ibv_query_qp(R.fl[i].a.qp, &qa, IBV_QP_STATE, &qi), 0);
		TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_RTS);
		TEST_ASSERT_EQ(ibv_query_qp(R.fl[i].b.qp, &qa, IBV_QP_STATE, &qi), 0);
		TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_RTS);
	}
	/* the two that fit, intact; anything after them is a flush */
	n = ibv_poll_cq(R.vcq, 8, wc);
	TEST_ASSERT(n >= 2, "victim CQ holds %d", n);
	for (int k = 0; k < 2; k++) {
		ASSERT_STATUS(wc[k], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[k].wr_id, 10 * (2 + k));
		TEST_ASSERT_EQ(wc[k].byte_len, 100 + k);
		ASSERT_BYTES(R.v[2 + k].buf, R.v[k].buf + k * 4096, 100 + k);
	}
	for (int k = 2; k < n; k++)
		ASSERT_STATUS(wc[k], IBV_WC_WR_FLUSH_ERR);
	/* the others go on */
	ROUND(R.fl, R.nfl, 16, 48 * 1024, 500);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */

static const struct droce_test_case cases[] = {
	TEST_CASE(test_pd_flood_stops_at_max_pd_with_enomem),
	TEST_CASE(test_cq_flood_stops_at_max_cq_with_enomem),
	TEST_CASE(test_qp_flood_stops_at_max_qp_with_enomem),
	TEST_CASE(test_srq_flood_stops_at_max_srq_with_enomem),
	TEST_CASE(test_mr_flood_stops_at_max_mr_with_enomem),
	TEST_CASE(test_ah_flood_stops_at_max_ah_with_enomem),
	TEST_CASE(test_mr_beyond_max_mr_size_einval_nothing_leaked),
	TEST_CASE(test_tm_tags_and_tm_srqs_stop_at_their_limits),
	TEST_CASE(test_mbuf_exhausted_requester_backpressure_then_all_complete),
	TEST_CASE(test_mbuf_exhausted_responder_acks_wait_then_all_complete),
	TEST_CASE(test_mbuf_exhausted_responder_resends_meanwhile_received_once),
	TEST_CASE(test_mbuf_exhausted_responder_acks_owed_without_ack_timer),
	TEST_CASE(test_mbuf_exhausted_both_sides_then_all_complete),
	TEST_CASE(test_mbuf_exhausted_responder_past_retry_budget_retry_exc_err),
	TEST_CASE(test_mbuf_exhausted_requester_past_retry_budget_retry_exc_err),
	TEST_CASE(test_cq_overrun_under_load_other_cqs_unharmed),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "limits", cases, setup, teardown);
}
