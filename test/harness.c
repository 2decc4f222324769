/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce.h"
#include "droce_test.h"
#include "eal_dir.h"
#include "harness.h"

static bool inl;
static struct ibv_device **devs;

bool
h_inline(void)
{
	return inl;
}

int
h_eal_init(const char *argv0, const char *tag, const char *lcores, const char *const *extra)
{
	static char prefix[64];
	char *eal[32];
	int n = 0;

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s%d", tag, getpid());
	eal[n++] = (char *)(uintptr_t)argv0;
	eal[n++] = "--no-huge";
	eal[n++] = "-m";
	eal[n++] = "512";
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = prefix;
	eal[n++] = "--log-level=lib.eal:error";
	/* a list with CPU sets (lcore@cpu) is --lcores' */
	eal[n++] = strchr(lcores, '@') != NULL ? "--lcores" : "-l";
	eal[n++] = (char *)(uintptr_t)lcores;
	for (int i = 0; extra != NULL && extra[i] != NULL && n < (int)RTE_DIM(eal) - 1; i++)
		eal[n++] = (char *)(uintptr_t)extra[i];
	eal[n] = NULL;
	/* EAL keeps pointers into argv: static storage or string literals only */
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return -1;
	}
	eal_dir_remove_at_exit();
	return 0;
}

struct rte_mbuf *
h_mbuf_chain(struct rte_mempool *pool, const uint8_t *data, const uint32_t *cut, int nseg, bool skew)
{
	struct rte_mbuf *head = NULL;

	for (int s = 0; s < nseg; s++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint32_t len = cut[s + 1] - cut[s];
		char *d;

		if (m == NULL)
			goto err;
		if (skew) {
			rte_pktmbuf_prepend(m, (uint16_t)(s * 2 + 1));
			rte_pktmbuf_trim(m, m->data_len);
		}
		d = rte_pktmbuf_append(m, (uint16_t)len);
		if (d == NULL) {
			rte_pktmbuf_free(m);
			goto err;
		}
		memcpy(d, data + cut[s], len);
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto err;
		}
	}
	return head;
err:
	rte_pktmbuf_free(head);
	return NULL;
}

int
h_init_eal(int argc, char **argv, const char *tag, const char *const *extra)
{
	inl = true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--lcore") == 0)
			inl = false;
	return h_eal_init(argv[0], tag, inl ? "0" : "0-1", extra);
}

int
h_init(int argc, char **argv)
{
	int ndev;
	const char *impair = NULL;
	char args[256];

	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--impair=", 9) == 0)
			impair = argv[i] + 9;
	if (h_init_eal(argc, argv, "dt", NULL))
		return -1;
	if (droce_ring_pair_create("net_ring_a", "net_ring_b"))
		return -1;
	if (impair != NULL) {
		/* both directions pass through a fault injector */
		snprintf(args, sizeof(args), "ethdev=net_ring_a,%s", impair);
		if (droce_dev_create("net_impair0", args))
			return -1;
		snprintf(args, sizeof(args), "ethdev=net_ring_b,%s", impair);
		if (droce_dev_create("net_impair1", args))
			return -1;
		printf("# impaired: %s\n", impair);
	}
	if (droce_dev_create("droce0", impair ? "ethdev=net_impair0,ip=10.0.0.1,mtu=4200" :
			     "ethdev=net_ring_a,ip=10.0.0.1,mtu=4200") ||
	    droce_dev_create("droce1", impair ? "ethdev=net_impair1,ip=10.0.0.2,mtu=4200" :
			     "ethdev=net_ring_b,ip=10.0.0.2,mtu=4200"))
		return -1;
	devs = ibv_get_device_list(&ndev);
	if (devs == NULL || ndev != 2)
		return -1;
	printf("# %s progress\n", inl ? "inline" : "engine lcore");
	return 0;
}

struct ibv_context *
h_open(int idx)
{
	return ibv_open_device(devs[idx]);
}

int
h_main(int argc, char **argv, const char *suite, const struct droce_test_case *cases, int n,
       int (*setup)(void), void (*teardown)(void))
{
	if (h_init(argc, argv) != 0) {
		fprintf(stderr, "h_init failed\n");
		return 1;
	}
	return droce_test_run(suite, cases, n, setup, teardown);
}

int
h_side_create(struct h_side *s, struct ibv_context *ctx, const struct h_qp_opts *o)
{
	struct ibv_qp_init_attr qa = { 0 };
	uint32_t cqe = o->cqe ? o->cqe : 256;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->buf_len = o->buf_len ? o->buf_len : 1 << 20;
	s->buf = aligned_alloc(4096, s->buf_len);
	if (s->buf == NULL)
		return -1;
	memset(s->buf, 0, s->buf_len);
	s->own_pd = o->pd == NULL;
	s->pd = o->pd ? o->pd : ibv_alloc_pd(ctx);
	if (s->pd == NULL)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | o->mr_access);
	if (o->wc_flags_ex) {
		struct ibv_cq_init_attr_ex ca = { .cqe = cqe, .wc_flags = o->wc_flags_ex };
		struct ibv_cq_ex *sx = ibv_create_cq_ex(ctx, &ca), *rx;

		ca.channel = o->rchan;
		rx = ibv_create_cq_ex(ctx, &ca);
		s->scq = sx ? ibv_cq_ex_to_cq(sx) : NULL;
		s->rcq = rx ? ibv_cq_ex_to_cq(rx) : NULL;
	} else {
		s->scq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
		s->rcq = ibv_create_cq(ctx, cqe, NULL, o->rchan, 0);
	}
	if (s->mr == NULL || s->scq == NULL || s->rcq == NULL) {
		fprintf(stderr, "h_side_create: %s: %s\n", s->mr == NULL ? "ibv_reg_mr" :
			"ibv_create_cq", strerror(errno));
		return -1;
	}
	qa.qp_type = o->type;
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	qa.srq = o->srq;
	qa.sq_sig_all = o->sq_sig_all;
	qa.cap.max_send_wr = o->max_send_wr ? o->max_send_wr : 64;
	qa.cap.max_recv_wr = o->max_recv_wr ? o->max_recv_wr : 64;
	qa.cap.max_send_sge = o->max_send_sge ? o->max_send_sge : 4;
	qa.cap.max_recv_sge = o->max_recv_sge ? o->max_recv_sge : 4;
	qa.cap.max_inline_data = o->max_inline;
	if (o->send_ops_flags) {
		struct ibv_qp_init_attr_ex qx = { 0 };

		memcpy(&qx, &qa, sizeof(qa));	/* the ex attr begins with the same fields */
		qx.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qx.pd = s->pd;
		qx.send_ops_flags = o->send_ops_flags;
		s->qp = ibv_create_qp_ex(ctx, &qx);
	} else {
		s->qp = ibv_create_qp(s->pd, &qa);
	}
	if (s->qp == NULL) {
		fprintf(stderr, "h_side_create: create QP: %s\n", strerror(errno));
		return -1;
	}
	return ibv_query_gid(ctx, 1, 0, &s->gid);
}

void
h_side_destroy(struct h_side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd && s->own_pd)
		ibv_dealloc_pd(s->pd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int
h_side_open(struct h_side *s, struct ibv_device *d, const struct h_qp_opts *o)
{
	struct ibv_context *ctx = ibv_open_device(d);

	return ctx == NULL ? -1 : h_side_create(s, ctx, o);
}

void
h_side_close(struct h_side *s)
{
	struct ibv_context *ctx = s->ctx;

	h_side_destroy(s);
	if (ctx != NULL)
		ibv_close_device(ctx);
}

void
h_fill_ah(struct ibv_ah_attr *ah, const struct h_side *peer)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = peer->gid;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

int
h_to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD) {
		a.qkey = H_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

int
h_connect(struct h_side *s, const struct h_side *peer, const struct h_qp_opts *o)
{
	struct ibv_qp_attr a = { 0 };
	int mask;

	if (h_to_init(s->qp, o->type))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (o->type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer->qp->qp_num;
		a.rq_psn = o->psn;
		h_fill_ah(&a.ah_attr, peer);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (o->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = o->max_dest_rd_atomic ? o->max_dest_rd_atomic : 1;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(s->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (o->type == IBV_QPT_RC) {
		a.timeout = o->no_ack_timer ? 0 : o->timeout ? o->timeout : 14;
		a.retry_cnt = o->retry_cnt_p1 ? o->retry_cnt_p1 - 1 : 7;
		a.rnr_retry = o->rnr_retry_p1 ? o->rnr_retry_p1 - 1 : 7;
		a.max_rd_atomic = o->max_rd_atomic ? o->max_rd_atomic : 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(s->qp, &a, mask) ? -1 : 0;
}

int
h_pair(struct h_side *a, struct h_side *b, const struct h_qp_opts *o)
{
	struct ibv_context *ca = h_open(0), *cb = h_open(1);

	if (ca == NULL || cb == NULL || h_side_create(a, ca, o) || h_side_create(b, cb, o))
		return -1;
	return h_connect(a, b, o) || h_connect(b, a, o) ? -1 : 0;
}

void
h_pair_destroy(struct h_side *a, struct h_side *b)
{
	struct ibv_context *ca = a->ctx, *cb = b->ctx;

	h_side_destroy(a);
	h_side_destroy(b);
	if (ca)
		ibv_close_device(ca);
	if (cb)
		ibv_close_device(cb);
}

int
h_post_send(struct h_side *s, enum ibv_wr_opcode op, size_t off, uint32_t len,
	    uint64_t wr_id, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = flags }, *bad = NULL;

	return ibv_post_send(s->qp, &wr, &bad);
}

int
h_post_recv(struct h_side *s, size_t off, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(s->qp, &wr, &bad);
}

int
h_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, wc + got);

		if (k < 0)
			return k;
		got += k;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			break;
	}
	return got;
}

struct ibv_ah *
h_ah(struct h_side *s, const struct h_side *peer)
{
	struct ibv_ah_attr ah;

	h_fill_ah(&ah, peer);
	return ibv_create_ah(s->pd, &ah);
}

enum ibv_qp_state
h_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) == 0 ? a.qp_state : IBV_QPS_UNKNOWN;
}

enum ibv_qp_state
h_qp_state_wait(struct ibv_qp *qp, enum ibv_qp_state want, int ms)
{
	enum ibv_qp_state st = h_qp_state(qp);

	for (int i = 0; st != want && i < ms * 10; i++) {
		usleep(100);
		st = h_qp_state(qp);
	}
	return st;
}

struct ibv_cq_ex *
h_tm_cq(struct ibv_context *ctx, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};

	return ibv_create_cq_ex(ctx, &ca);
}

struct ibv_srq *
h_tm_srq(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr, uint32_t max_tags, uint32_t max_ops)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = max_wr, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = pd, .cq = cq,
		.tm_cap = { .max_num_tags = max_tags, .max_ops = max_ops },
	};

	return ibv_create_srq_ex(pd->context, &sa);
}

uint64_t
h_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Counter @name among the first @n (at most 64) of @names and @vals; UINT64_MAX if absent. */
static uint64_t
xstat_find(const char *const *names, const uint64_t *vals, int n, const char *name)
{
	for (int i = 0; i < n && i < 64; i++)
		if (strcmp(names[i], name) == 0)
			return vals[i];
	return UINT64_MAX;
}

uint64_t
h_xstat(const char *dev, const char *name)
{
	const char *names[64];
	uint64_t vals[64];

	return xstat_find(names, vals, droce_dev_xstats(dev, names, vals, 64), name);
}

uint64_t
h_qp_xstat(struct ibv_qp *qp, const char *name)
{
	const char *names[64];
	uint64_t vals[64];

	return xstat_find(names, vals, droce_qp_xstats(qp, names, vals, 64), name);
}

void
h_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 0x9e3779b9u;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

uint64_t
h_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t
h_eth_xstat(uint16_t port, const char *name)
{
	uint64_t id, value;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0)
		return UINT64_MAX;
	if (rte_eth_xstats_get_by_id(port, &id, &value, 1) != 1)
		return UINT64_MAX;
	return value;
}

int
h_async_event(struct ibv_context *c, struct ibv_async_event *ev, int ms)
{
	uint64_t end = h_now_ms() + (uint64_t)ms;

	for (;;) {
		struct pollfd p = { .fd = c->async_fd, .events = POLLIN };
		uint64_t now;

		if (ibv_get_async_event(c, ev) == 0)
			return 0;
		now = h_now_ms();
		if (errno != EAGAIN || now >= end)
			return -1;
		poll(&p, 1, (int)(end - now));
	}
}

/* ------------------------------------------------------------------------- */
/* the running case's resources */

#define RES_MAX 8

/* each array of one kind of object (void *: one res_add for all) */
static struct {
	void *ah[RES_MAX], *qp[RES_MAX], *srq[RES_MAX], *mr[RES_MAX], *cq[RES_MAX];
	void *pd[RES_MAX], *mem[RES_MAX], *chan[RES_MAX], *ctx[RES_MAX];
	struct h_side side[RES_MAX];
	int nah, nqp, nsrq, nmr, nside, ncq, npd, nmem, nchan, nctx;
} res;

/* Store @obj in @arr (@n in use): @obj, or NULL if @arr is full. */
static void *
res_add(void **arr, int *n, void *obj, const char *what)
{
	if (obj == NULL)
		return NULL;
	if (*n == RES_MAX) {
		fprintf(stderr, "  h_res: more than %d %s\n", RES_MAX, what);
		return NULL;
	}
	arr[(*n)++] = obj;
	return obj;
}

#define RES_ADD(kind, obj) res_add(res.kind, &res.n##kind, (obj), #kind)

/* one line each: they differ only in the kind */
struct ibv_ah *h_res_add_ah(struct ibv_ah *o) { return RES_ADD(ah, o); }
struct ibv_qp *h_res_add_qp(struct ibv_qp *o) { return RES_ADD(qp, o); }
struct ibv_srq *h_res_add_srq(struct ibv_srq *o) { return RES_ADD(srq, o); }
struct ibv_mr *h_res_add_mr(struct ibv_mr *o) { return RES_ADD(mr, o); }
struct ibv_cq *h_res_add_cq(struct ibv_cq *o) { return RES_ADD(cq, o); }
struct ibv_pd *h_res_add_pd(struct ibv_pd *o) { return RES_ADD(pd, o); }
void *h_res_add_mem(void *o) { return RES_ADD(mem, o); }
struct ibv_comp_channel *h_res_add_chan(struct ibv_comp_channel *o) { return RES_ADD(chan, o); }

struct ibv_context *
h_res_open(int idx)
{
	return RES_ADD(ctx, h_open(idx));
}

struct h_side *
h_res_side(struct ibv_context *ctx, const struct h_qp_opts *o)
{
	struct h_side *s;

	if (res.nside == RES_MAX) {
		fprintf(stderr, "  h_res: more than %d sides\n", RES_MAX);
		return NULL;
	}
	/* recorded before it is made: h_res_release undoes what creation got through */
	s = &res.side[res.nside++];
	if (ctx == NULL || h_side_create(s, ctx, o) != 0)
		return NULL;
	return s;
}

int
h_res_pair(struct h_side **a, struct h_side **b, const struct h_qp_opts *o, bool loop)
{
	struct ibv_context *ca = h_res_open(0);
	struct ibv_context *cb = loop ? ca : h_res_open(1);

	*a = h_res_side(ca, o);
	*b = h_res_side(cb, o);
	if (*a == NULL || *b == NULL)
		return -1;
	return h_connect(*a, *b, o) || h_connect(*b, *a, o) ? -1 : 0;
}

struct ibv_ah *
h_res_ah(struct h_side *s, const struct h_side *peer)
{
	return h_res_add_ah(h_ah(s, peer));
}

void
h_res_release(void)
{
	for (int i = 0; i < res.nah; i++)
		ibv_destroy_ah(res.ah[i]);
	for (int i = 0; i < res.nqp; i++)
		ibv_destroy_qp(res.qp[i]);
	/* a side's QP may take its receives from a recorded SRQ */
	for (int i = 0; i < res.nside; i++)
		if (res.side[i].qp != NULL) {
			ibv_destroy_qp(res.side[i].qp);
			res.side[i].qp = NULL;
		}
	for (int i = 0; i < res.nsrq; i++)
		ibv_destroy_srq(res.srq[i]);
	for (int i = 0; i < res.nmr; i++)
		ibv_dereg_mr(res.mr[i]);
	for (int i = 0; i < res.nside; i++)
		h_side_destroy(&res.side[i]);
	for (int i = 0; i < res.ncq; i++)
		ibv_destroy_cq(res.cq[i]);
	for (int i = 0; i < res.npd; i++)
		ibv_dealloc_pd(res.pd[i]);
	for (int i = 0; i < res.nmem; i++)
		free(res.mem[i]);
	for (int i = 0; i < res.nchan; i++)
		ibv_destroy_comp_channel(res.chan[i]);
	for (int i = 0; i < res.nctx; i++)
		ibv_close_device(res.ctx[i]);
	memset(&res, 0, sizeof(res));
}
