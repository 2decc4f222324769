/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf's tests, perftest's set over two droce devices of this process:
 *
 *   send_lat, write_lat     ping-pong, half the round trip (RC, UC; send_lat UD too)
 *   read_lat, atomic_lat    one READ / FETCH_AND_ADD at a time, the whole round trip (RC)
 *   ud_lat                  send_lat over UD
 *   send_bw, write_bw       streaming from droce0 to droce1 (RC, UC; send_bw UD too)
 *   read_bw, atomic_bw      streaming READs / FETCH_AND_ADDs (RC)
 *   srq_bw                  send_bw with every receiving QP on one SRQ
 *   ud_bw                   send_bw over UD
 *
 * A latency figure: min, median, p99, p99.9 and max of single iterations
 * (CLOCK_MONOTONIC around each). A bandwidth figure: the messages completed
 * (received, for SENDs), their rate and bandwidth between the first post and
 * the last completion, with up to --depth WRs outstanding per QP over --qps
 * QPs, --post-list WRs a call, one signaled WR in --cq-mod. Every byte of a
 * latency test's messages is checked where it lands (its first and last
 * byte carry the iteration); a bandwidth test checks completion statuses and
 * lengths. Any error completion ends the run (exit 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "perf_tests.h"

#define GRH		40
#define QKEY		0x11111111u
#define STALL_S		10
#define ATOMIC_SIZE	8

const char perf_test_names[] =
	"send_lat write_lat read_lat atomic_lat ud_lat send_bw write_bw read_bw atomic_bw "
	"srq_bw ud_bw, or main";

#define die(...) do { fprintf(stderr, "droce-perf: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

enum kind { K_SEND, K_WRITE, K_READ, K_ATOMIC };

struct test {
	const char *name;
	enum kind kind;
	bool lat;
	bool srq;
	bool ud;		/* always UD */
};

static const struct test tests[] = {
	{ "send_lat", K_SEND, true, false, false },
	{ "write_lat", K_WRITE, true, false, false },
	{ "read_lat", K_READ, true, false, false },
	{ "atomic_lat", K_ATOMIC, true, false, false },
	{ "ud_lat", K_SEND, true, false, true },
	{ "send_bw", K_SEND, false, false, false },
	{ "write_bw", K_WRITE, false, false, false },
	{ "read_bw", K_READ, false, false, false },
	{ "atomic_bw", K_ATOMIC, false, false, false },
	{ "srq_bw", K_SEND, false, true, false },
	{ "ud_bw", K_SEND, false, false, true },
};

/* One end: a device's objects, QPs of the test's transport. */
struct pside {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[MAX_QPS];
	struct ibv_ah *ah;		/* UD: to the other end */
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t bufsz;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned int nqp;
	size_t qp_mem;			/* DPDK heap bytes its QPs took */
};

static const struct perf_opts *O;
static bool first_result = true;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *
tname(enum ibv_qp_type t)
{
	return t == IBV_QPT_UD ? "UD" : t == IBV_QPT_UC ? "UC" : "RC";
}

/* --- set-up --- */

/* Bytes allocated from DPDK's heaps, every socket (where droce's objects live). */
static size_t
heap_used(void)
{
	size_t sum = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			sum += st.heap_allocsz_bytes;
	}
	return sum;
}

static void
side_open(struct pside *s, struct ibv_device *dev, enum ibv_qp_type t, unsigned int nqp,
	  bool srq, size_t bufsz)
{
	unsigned int depth = O->depth, cqe = RTE_MIN(2 * depth * nqp + 64, 65536u);
	struct ibv_port_attr pa;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = RTE_MIN(depth * nqp, 4096u),
						  .max_sge = 1 } };

	memset(s, 0, sizeof(*s));
	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL)
		die("cannot open %s: %s", ibv_get_device_name(dev), strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->bufsz = RTE_ALIGN_CEIL(bufsz, 4096);
	s->buf = aligned_alloc(4096, s->bufsz);
	if (s->pd == NULL || s->buf == NULL)
		die("out of memory");
	memset(s->buf, 0, s->bufsz);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->bufsz, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | (O->odp ? IBV_ACCESS_ON_DEMAND : 0));
	s->scq = ibv_create_cq(s->ctx, (int)cqe, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, (int)cqe, NULL, NULL, 0);
	if (s->mr == NULL || s->scq == NULL || s->rcq == NULL)
		die("resource creation failed: %s", strerror(errno));
	if (srq) {
		s->srq = ibv_create_srq(s->pd, &sa);
		if (s->srq == NULL)
			die("ibv_create_srq: %s", strerror(errno));
	}
	s->qp_mem = heap_used();
	for (unsigned int i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = s->scq, .recv_cq = s->rcq, .srq = s->srq, .qp_type = t,
			.cap = { .max_send_wr = depth, .max_recv_wr = s->srq ? 0 : depth,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = O->inline_size },
		};

		s->qp[i] = ibv_create_qp(s->pd, &qa);
		if (s->qp[i] == NULL)
			die("ibv_create_qp (%s, %u WRs, inline %u): %s", tname(t), depth,
			    O->inline_size, strerror(errno));
	}
	s->nqp = nqp;
	s->qp_mem = heap_used() - s->qp_mem;
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid) || ibv_query_port(s->ctx, 1, &pa))
		die("query gid/port failed");
	s->mtu = pa.active_mtu;
}

static void
qp_connect(struct pside *s, unsigned int i, const struct pside *peer, enum ibv_qp_type t)
{
	struct ibv_qp *qp = s->qp[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (t == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (t == IBV_QPT_RC ?
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(qp, &a, mask))
		die("modify INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.path_mtu = s->mtu;
		a.dest_qp_num = peer->qp[i]->qp_num;
		a.rq_psn = 0x100;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(qp, &a, mask))
		die("modify RTR failed: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		a.timeout = (uint8_t)O->qp_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(qp, &a, mask))
		die("modify RTS failed: %s", strerror(errno));
	if (t == IBV_QPT_UD && s->ah == NULL) {
		struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = peer->gid, .hop_limit = 64 } };

		s->ah = ibv_create_ah(s->pd, &ah);
		if (s->ah == NULL)
			die("ibv_create_ah: %s", strerror(errno));
	}
}

static void
side_close(struct pside *s)
{
	for (unsigned int i = 0; i < s->nqp; i++)
		ibv_destroy_qp(s->qp[i]);
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_dereg_mr(s->mr);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

/* --- posting --- */

static void
recv_post(struct pside *s, unsigned int q, size_t off, size_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, (uint32_t)len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = s->srq ? ibv_post_srq_recv(s->srq, &wr, &bad) : ibv_post_recv(s->qp[q], &wr, &bad);

	if (ret)
		die("ibv_post_recv: %s", strerror(ret));
}

/* One WR of @k on QP @q of @s towards @peer: @len bytes at @off, the remote at @roff. */
static void
wr_fill(struct ibv_send_wr *w, struct ibv_sge *sge, struct pside *s, const struct pside *peer,
	unsigned int q, enum kind k, size_t off, size_t roff, size_t len, uint64_t id,
	bool signaled)
{
	memset(w, 0, sizeof(*w));
	sge->addr = (uintptr_t)s->buf + off;
	sge->length = (uint32_t)len;
	sge->lkey = s->mr->lkey;
	w->wr_id = id;
	w->sg_list = len ? sge : NULL;
	w->num_sge = len ? 1 : 0;
	w->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if ((k == K_SEND || k == K_WRITE) && len <= O->inline_size)
		w->send_flags |= IBV_SEND_INLINE;
	switch (k) {
	case K_SEND:
		w->opcode = IBV_WR_SEND;
		if (s->ah != NULL) {
			w->wr.ud.ah = s->ah;
			w->wr.ud.remote_qpn = peer->qp[q]->qp_num;
			w->wr.ud.remote_qkey = QKEY;
		}
		break;
	case K_WRITE:
	case K_READ:
		w->opcode = k == K_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		w->wr.rdma.remote_addr = (uintptr_t)peer->buf + roff;
		w->wr.rdma.rkey = peer->mr->rkey;
		break;
	case K_ATOMIC:
		w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w->wr.atomic.remote_addr = (uintptr_t)peer->buf + RTE_ALIGN_FLOOR(roff, 8);
		w->wr.atomic.rkey = peer->mr->rkey;
		w->wr.atomic.compare_add = 1;
		break;
	}
}

static void
send_post(struct pside *s, unsigned int q, struct ibv_send_wr *w)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(s->qp[q], w, &bad);

	if (ret)
		die("ibv_post_send: %s", strerror(ret));
}

/* Poll @cq for one completion (progressing @other's device too), dying on an error. */
static void
wc_wait(struct ibv_cq *cq, struct ibv_cq *other, struct ibv_wc *wc)
{
	double deadline = 0;

	for (unsigned int spin = 0;; spin++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				die("completion error: %s (wr_id %" PRIu64 ")",
				    ibv_wc_status_str(wc->status), wc->wr_id);
			return;
		}
		if (other != NULL)
			ibv_poll_cq(other, 0, wc);
		if ((spin & 1023) == 1023) {
			if (deadline == 0)
				deadline = now_s() + STALL_S;
			else if (now_s() > deadline)
				die("no completion within %d s", STALL_S);
		}
	}
}

/* --- figures --- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
pct(const double *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n) - 1;

	return v[RTE_MIN(i, n - 1)];
}

static void
print_lat(const struct test *t, enum ibv_qp_type tr, size_t size, double *us, size_t n)
{
	qsort(us, n, sizeof(*us), cmp_double);
	if (O->json) {
		printf("%s    {\"test\": \"%s\", \"transport\": \"%s\", \"size\": %zu, \"iters\": %zu, "
		       "\"half_round_trip\": %s, \"lat_us\": {\"min\": %.3f, \"p50\": %.3f, "
		       "\"p99\": %.3f, \"p99.9\": %.3f, \"max\": %.3f}}",
		       first_result ? "" : ",\n", t->name, tname(tr), size, n,
		       t->kind == K_SEND || t->kind == K_WRITE ? "true" : "false", us[0],
		       pct(us, n, 0.5), pct(us, n, 0.99), pct(us, n, 0.999), us[n - 1]);
	} else {
		printf("%-11s %-3s %8zu %9zu %9.2f %9.2f %9.2f %9.2f %9.2f%s\n", t->name, tname(tr),
		       size, n, us[0], pct(us, n, 0.5), pct(us, n, 0.99), pct(us, n, 0.999),
		       us[n - 1], t->kind == K_SEND || t->kind == K_WRITE ? "" : "  (round trip)");
	}
	first_result = false;
	fflush(stdout);
}

static void
print_bw(const struct test *t, enum ibv_qp_type tr, size_t size, uint64_t msgs, double secs)
{
	double rate = (double)msgs / secs, gbit = rate * (double)size * 8 / 1e9;

	if (O->json)
		printf("%s    {\"test\": \"%s\", \"transport\": \"%s\", \"size\": %zu, \"qps\": %u, "
		       "\"post_list\": %u, \"cq_mod\": %u, \"depth\": %u, \"msgs\": %" PRIu64 ", "
		       "\"seconds\": %.6f, \"msg_rate_mps\": %.4f, \"gbit_s\": %.4f}",
		       first_result ? "" : ",\n", t->name, tname(tr), size, O->qps, O->post_list,
		       O->cq_mod, O->depth, msgs, secs, rate / 1e6, gbit);
	else
		printf("%-11s %-3s %8zu %4u %10" PRIu64 " %9.3f %10.3f %10.3f\n", t->name, tname(tr),
		       size, O->qps, msgs, secs, rate / 1e6, gbit);
	first_result = false;
	fflush(stdout);
}

/* stderr is a terminal: asked once, not a syscall per iteration of a test */
static bool
progress_tty(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

/* A progress line on stderr for figures longer than a second (a terminal only). */
static void
progress(const struct test *t, size_t size, uint64_t done, double t0, double *next)
{
	static unsigned int calls;
	double now;

	/* the clock every 256 calls: a clock read per iteration costs a message's worth */
	if (!progress_tty() || (++calls & 255) != 0)
		return;
	now = now_s();
	if (now < *next)
		return;
	*next = now + 1;
	if (now - t0 >= 1)
		fprintf(stderr, "\r%s %zu B: %" PRIu64 " in %.0f s ", t->name, size, done, now - t0);
}

static void
progress_end(double t0)
{
	if (progress_tty() && now_s() - t0 >= 1)
		fprintf(stderr, "\r%60s\r", "");
}

/* Done after @n iterations, or after --duration seconds. */
static bool
more(uint64_t i, uint64_t n, double t0)
{
	if (O->duration > 0)
		return (i & 63) != 0 || now_s() - t0 < O->duration;
	return i < n;
}

/* --- latency --- */

/* The message of iteration @i: its first and last byte carry it. */
static void
stamp(uint8_t *p, size_t len, uint64_t i)
{
	if (len == 0)
		return;
	p[0] = (uint8_t)(i + 1);
	p[len - 1] = (uint8_t)(i + 1);
}

static bool
stamped(const volatile uint8_t *p, size_t len, uint64_t i)
{
	return p[0] == (uint8_t)(i + 1) && p[len - 1] == (uint8_t)(i + 1);
}

/* Wait until @s's buffer at @off shows iteration @i (a WRITE landed), progressing both. */
static void
land_wait(struct pside *s, struct pside *o, size_t off, size_t len, uint64_t i)
{
	struct ibv_wc wc[8];
	double deadline = 0;

	for (unsigned int spin = 0; !stamped(s->buf + off, len, i); spin++) {
		/* reap the signaled WRITEs' completions; progress both devices */
		int n = ibv_poll_cq(s->scq, 8, wc);

		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_SUCCESS)
				die("completion error: %s", ibv_wc_status_str(wc[k].status));
		ibv_poll_cq(o->rcq, 0, wc);
		if ((spin & 1023) == 1023) {
			if (deadline == 0)
				deadline = now_s() + STALL_S;
			else if (now_s() > deadline)
				die("write_lat: iteration %" PRIu64 " did not land within %d s", i,
				    STALL_S);
		}
	}
}

static void
run_lat(const struct test *t, enum ibv_qp_type tr, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 2000, cap = O->duration > 0 ? 1u << 24 : n, i;
	size_t grh = tr == IBV_QPT_UD ? GRH : 0;
	double *us = malloc(cap * sizeof(*us)), t0 = now_s(), next = t0 + 1;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	struct ibv_wc wc;

	if (us == NULL)
		die("out of memory");
	if (t->kind == K_SEND) {
		recv_post(a, 0, 0, size + grh, 1);
		recv_post(b, 0, 0, size + grh, 1);
	}
	for (i = 0; more(i, n, t0) && i < cap; i++) {
		double s0 = now_s();

		switch (t->kind) {
		case K_SEND:
			stamp(a->buf + 4096 + grh, size, i);
			wr_fill(&w, &sge, a, b, 0, K_SEND, 4096 + grh, 0, size, i, true);
			send_post(a, 0, &w);
			wc_wait(b->rcq, a->scq, &wc);
			if (wc.byte_len != size + grh || (size && !stamped(b->buf + grh, size, i)))
				die("%s %" PRIu64 ": %u bytes, or not the ones sent", t->name, i,
				    wc.byte_len);
			recv_post(b, 0, 0, size + grh, 1);
			stamp(b->buf + 4096 + grh, size, i);
			wr_fill(&w, &sge, b, a, 0, K_SEND, 4096 + grh, 0, size, i, true);
			send_post(b, 0, &w);
			wc_wait(a->rcq, b->scq, &wc);
			if (wc.byte_len != size + grh || (size && !stamped(a->buf + grh, size, i)))
				die("%s %" PRIu64 ": the reply is wrong", t->name, i);
			recv_post(a, 0, 0, size + grh, 1);
			wc_wait(a->scq, NULL, &wc);
			wc_wait(b->scq, NULL, &wc);
			break;
		case K_WRITE:
			/* a's 4 KiB-offset source lands at b's 0, and back */
			stamp(a->buf + 4096, size, i);
			wr_fill(&w, &sge, a, b, 0, K_WRITE, 4096, 0, size, i, true);
			send_post(a, 0, &w);
			land_wait(b, a, 0, size, i);
			stamp(b->buf + 4096, size, i);
			wr_fill(&w, &sge, b, a, 0, K_WRITE, 4096, 0, size, i, true);
			send_post(b, 0, &w);
			land_wait(a, b, 0, size, i);
			break;
		case K_READ:
			stamp(b->buf, size, i);
			wr_fill(&w, &sge, a, b, 0, K_READ, 4096, 0, size, i, true);
			send_post(a, 0, &w);
			wc_wait(a->scq, b->rcq, &wc);
			if (!stamped(a->buf + 4096, size, i))
				die("read_lat %" PRIu64 ": the bytes read are not the remote ones", i);
			break;
		case K_ATOMIC:
			wr_fill(&w, &sge, a, b, 0, K_ATOMIC, 4096, 0, ATOMIC_SIZE, i, true);
			send_post(a, 0, &w);
			wc_wait(a->scq, b->rcq, &wc);
			if (*(uint64_t *)(a->buf + 4096) != i)
				die("atomic_lat %" PRIu64 ": fetched %" PRIu64, i,
				    *(uint64_t *)(a->buf + 4096));
			break;
		}
		us[i] = (now_s() - s0) * 1e6;
		if (t->kind == K_SEND || t->kind == K_WRITE)
			us[i] /= 2;
		progress(t, size, i, t0, &next);
	}
	progress_end(t0);
	/* b's receive of the last round is still posted: consume it */
	if (t->kind == K_SEND) {
		wr_fill(&w, &sge, a, b, 0, K_SEND, 4096 + grh, 0, size, ~0ull, true);
		send_post(a, 0, &w);
		wc_wait(b->rcq, a->scq, &wc);
		wc_wait(a->scq, NULL, &wc);
		/* and a's own */
		wr_fill(&w, &sge, b, a, 0, K_SEND, 4096 + grh, 0, size, ~0ull, true);
		send_post(b, 0, &w);
		wc_wait(a->rcq, b->scq, &wc);
		wc_wait(b->scq, NULL, &wc);
	}
	print_lat(t, tr, t->kind == K_ATOMIC ? ATOMIC_SIZE : size, us, (size_t)i);
	free(us);
}

/* --- bandwidth --- */

/*
 * Per QP: WRs posted, the sequence number after its last signaled WR, and
 * how many are outstanding. A signaled WR's wr_id is its QP and sequence
 * number; its completion retires every WR of the QP up to it. A QP's last
 * WR is always signaled (with --duration, one more signaled WR closes each
 * QP whose last was not), so every WR is accounted for.
 */
struct bw_qp {
	uint64_t posted, sigd, retired, quota;
	bool closed;
	bool ready;		/* on the ready FIFO */
};

/*
 * The QPs with room to post, in FIFO order: a round visits those there at
 * its start, so that with thousands of QPs a round costs what it posts, not
 * a scan of every QP.
 */
struct bw_ready {
	unsigned int *q, n, head, count;
};

static void
ready_push(struct bw_ready *r, struct bw_qp *Q, unsigned int q)
{
	if (Q[q].ready || Q[q].closed)
		return;
	Q[q].ready = true;
	r->q[(r->head + r->count++) % r->n] = q;
}

static unsigned int
ready_pop(struct bw_ready *r, struct bw_qp *Q)
{
	unsigned int q = r->q[r->head];

	r->head = (r->head + 1) % r->n;
	r->count--;
	Q[q].ready = false;
	return q;
}

#define WRID(q, seq)	((uint64_t)(q) << 48 | (seq))
#define WRID_Q(id)	((unsigned int)((id) >> 48))
#define WRID_SEQ(id)	((id) & ((1ull << 48) - 1))

static void
run_bw(const struct test *t, enum ibv_qp_type tr, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 20000, posted = 0, done = 0, recvd = 0;
	unsigned int nq = a->nqp, depth = O->depth, mod = O->cq_mod, pl = O->post_list, open;
	size_t grh = tr == IBV_QPT_UD ? GRH : 0, slot = RTE_ALIGN_CEIL(size + grh, 64);
	size_t len = t->kind == K_ATOMIC ? ATOMIC_SIZE : size;
	unsigned int rdepth = b->srq ? RTE_MIN(depth * nq, 4096u) : depth;
	struct bw_qp *Q = calloc(nq, sizeof(*Q));
	struct bw_ready R = { .q = calloc(nq, sizeof(unsigned int)), .n = nq };
	bool sends = t->kind == K_SEND, dur = O->duration > 0, expired = false;
	struct ibv_send_wr w[64];
	struct ibv_sge sge[64];
	struct ibv_wc wc[64];
	double t0, t_end, next;

	if (Q == NULL || R.q == NULL)
		die("out of memory");
	for (unsigned int q = 0; q < nq; q++)
		Q[q].quota = dur ? UINT64_MAX : n / nq + (q < n % nq);
	/* receives: each QP's queue (or the SRQ) full; slots cycle over b's buffer */
	if (sends)
		for (unsigned int q = 0; q < (b->srq ? 1u : nq); q++)
			for (unsigned int r = 0; r < rdepth; r++)
				recv_post(b, q, (size_t)r * slot, size + grh, WRID(q, r));
	open = nq;
	for (unsigned int q = 0; q < nq; q++) {
		if (Q[q].quota == 0)
			Q[q].closed = true, open--;
		ready_push(&R, Q, q);
	}
	t0 = now_s();
	next = t0 + 1;
	t_end = t0;
	while (open > 0 || done < posted || (sends && tr == IBV_QPT_RC && recvd < posted)) {
		if (dur && !expired && now_s() - t0 >= O->duration) {
			expired = true;
			for (unsigned int q = 0; q < nq; q++) {
				Q[q].quota = Q[q].posted + (Q[q].sigd < Q[q].posted);
				/* nothing more to post: closed now (the loop below closes a QP only as it posts) */
				if (!Q[q].closed && Q[q].posted == Q[q].quota)
					Q[q].closed = true, open--;
			}
		}
		for (unsigned int c = R.count; c > 0; c--) {
			unsigned int q = ready_pop(&R, Q);
			struct bw_qp *p = &Q[q];
			unsigned int k = 0;

			while (!p->closed && k < pl && p->posted + k - p->retired < depth &&
			       p->posted + k < p->quota) {
				uint64_t seq = p->posted + k;
				bool sig = seq % mod == mod - 1 || seq + 1 == p->quota;
				size_t off = (seq % depth) * slot;

				wr_fill(&w[k], &sge[k], a, b, q, t->kind, off, off, len, WRID(q, seq),
					sig);
				w[k].next = NULL;
				if (k > 0)
					w[k - 1].next = &w[k];
				if (sig)
					p->sigd = seq + 1;
				k++;
			}
			if (k == 0)
				continue;
			send_post(a, q, w);
			p->posted += k;
			posted += k;
			if (p->posted == p->quota)
				p->closed = true, open--;
			else if (p->posted - p->retired < depth)
				ready_push(&R, Q, q);
		}
		/* sender completions */
		int m = ibv_poll_cq(a->scq, 64, wc);

		for (int i = 0; i < m; i++) {
			struct bw_qp *p = &Q[WRID_Q(wc[i].wr_id)];
			uint64_t upto = WRID_SEQ(wc[i].wr_id) + 1;

			if (wc[i].status != IBV_WC_SUCCESS)
				die("%s: send completion error: %s", t->name,
				    ibv_wc_status_str(wc[i].status));
			done += upto - p->retired;
			p->retired = upto;
			ready_push(&R, Q, WRID_Q(wc[i].wr_id));
		}

		/* receiver: count and replenish; its poll also progresses its device */
		m = ibv_poll_cq(b->rcq, 64, wc);
		for (int i = 0; i < m; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != size + grh)
				die("%s: receive completion %s, %u bytes", t->name,
				    ibv_wc_status_str(wc[i].status), wc[i].byte_len);
			recvd++;
			recv_post(b, WRID_Q(wc[i].wr_id), WRID_SEQ(wc[i].wr_id) * slot, size + grh,
				  wc[i].wr_id);
		}
		/* UC and UD: the last arrival ends the run (RC ends with the loop, below) */
		if (m > 0 && sends && tr != IBV_QPT_RC)
			t_end = now_s();
		progress(t, size, done, t0, &next);
	}
	/* the loop ends in the iteration that takes the last completion it waits for */
	if (!(sends && tr != IBV_QPT_RC))
		t_end = now_s();
	progress_end(t0);
	/* UC and UD: what arrived is what counts; let late ones land */
	if (sends && tr != IBV_QPT_RC) {
		double until = now_s() + 0.05;

		while (now_s() < until) {
			int m = ibv_poll_cq(b->rcq, 64, wc);

			for (int i = 0; i < m; i++)
				if (wc[i].status == IBV_WC_SUCCESS)
					recvd++, t_end = now_s();
		}
	}
	print_bw(t, tr, len, sends ? recvd : done, t_end - t0);
	free(R.q);
	free(Q);
}

/* --- driver --- */

static const struct test *
test_by_name(const char *s, size_t len)
{
	for (size_t i = 0; i < RTE_DIM(tests); i++)
		if (strlen(tests[i].name) == len && strncmp(tests[i].name, s, len) == 0)
			return &tests[i];
	return NULL;
}

int
perf_sizes_parse(struct perf_opts *o, const char *s, bool sweep)
{
	o->nb_sizes = 0;
	while (*s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 0);

		if (end == s)
			return -EINVAL;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if ((*end && *end != ',') || v > (64ull << 20) || o->nb_sizes == PERF_MAX_SIZES)
			return -EINVAL;
		o->sizes[o->nb_sizes++] = (size_t)v;
		s = *end ? end + 1 : end;
	}
	if (sweep) {
		size_t max = o->nb_sizes ? o->sizes[o->nb_sizes - 1] : 65536;

		o->nb_sizes = 0;
		for (size_t v = 2; v <= max && o->nb_sizes < PERF_MAX_SIZES; v *= 2)
			o->sizes[o->nb_sizes++] = v;
	}
	return o->nb_sizes ? 0 : -EINVAL;
}

static void
run_one(const struct test *t, struct ibv_device *d0, struct ibv_device *d1, size_t size)
{
	enum ibv_qp_type tr = t->ud ? IBV_QPT_UD : O->transport;
	unsigned int nq = t->lat ? 1 : O->qps;
	size_t grh = tr == IBV_QPT_UD ? GRH : 0, slot = RTE_ALIGN_CEIL(size + grh, 64);
	size_t bufsz = RTE_MAX((size_t)O->depth * (t->srq ? nq : 1) * slot, 8192 + 2 * slot);
	static struct pside a, b;	/* MAX_QPS QPs each: not on the stack */

	if ((t->kind == K_READ || t->kind == K_ATOMIC) && tr != IBV_QPT_RC)
		die("%s: RC only", t->name);
	if (t->kind == K_WRITE && tr == IBV_QPT_UD)
		die("%s: RC or UC", t->name);
	side_open(&a, d0, tr, nq, false, bufsz);
	side_open(&b, d1, tr, nq, t->srq, bufsz);
	/* the GRH is in the receive buffer only, not on the wire: the payload may be the MTU */
	if (tr == IBV_QPT_UD && size > (128u << a.mtu))
		die("%s: %zu B is more than the UD MTU (%u B)", t->name, size, 128u << a.mtu);
	if (t->kind == K_WRITE && t->lat && size == 0)
		die("write_lat: at least 1 byte");
	for (unsigned int i = 0; i < nq; i++) {
		qp_connect(&a, i, &b, tr);
		qp_connect(&b, i, &a, tr);
	}
	if (nq > 1)	/* what a QP costs, its queues included */
		fprintf(stderr, "%s: %u QPs a side, %zu bytes each (%u send and %u receive WRs)\n",
			t->name, nq, (a.qp_mem + b.qp_mem) / (2 * nq), O->depth,
			b.srq ? 0 : O->depth);
	if (t->lat)
		run_lat(t, tr, &a, &b, size);
	else
		run_bw(t, tr, &a, &b, size);
	side_close(&a);
	side_close(&b);
}

/* Each test's sizes when none were given: the main ones at two sizes. */
static void
default_sizes(const struct test *t, size_t *s, unsigned int *n)
{
	if (t->kind == K_ATOMIC) {
		s[0] = ATOMIC_SIZE;
		*n = 1;
	} else if (t->ud) {
		s[0] = 8;
		s[1] = 1024;
		*n = 2;
	} else if (t->lat) {
		s[0] = 8;
		s[1] = 4096;
		*n = 2;
	} else {
		s[0] = 64;
		s[1] = 65536;
		*n = 2;
	}
}

int
perf_tests_run(struct ibv_device *d0, struct ibv_device *d1, const struct perf_opts *o)
{
	const char *list = strcmp(o->tests, "main") == 0 ?
		"send_lat,write_lat,read_lat,atomic_lat,send_bw,write_bw,read_bw" : o->tests;
	bool lat_header = false, bw_header = false;

	O = o;
	/* check every name first */
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (test_by_name(p, len) == NULL)
			die("unknown test \"%.*s\" (%s)", (int)len, p, perf_test_names);
		p += len + (p[len] == ',');
	}
	if (o->json)
		printf("{\"droce_perf\": {\"progress\": \"%s\", \"loss\": \"%s\", \"depth\": %u, "
		       "\"qps\": %u, \"post_list\": %u, \"cq_mod\": %u, \"inline\": %u, "
		       "\"odp\": %s},\n  \"results\": [\n", o->progress, o->loss ? o->loss : "0",
		       o->depth, o->qps, o->post_list, o->cq_mod, o->inline_size,
		       o->odp ? "true" : "false");
	else
		printf("droce-perf: %s progress, loss %s, depth %u, inline %u%s\n", o->progress,
		       o->loss ? o->loss : "0", o->depth, o->inline_size,
		       o->odp ? ", ODP MRs" : "");
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ","), sz[PERF_MAX_SIZES];
		const struct test *t = test_by_name(p, len);
		unsigned int nsz;

		p += len + (p[len] == ',');
		if (o->nb_sizes) {
			memcpy(sz, o->sizes, sizeof(sz));
			nsz = o->nb_sizes;
		} else {
			default_sizes(t, sz, &nsz);
		}
		if (!o->json && t->lat && !lat_header) {
			printf("%-11s %-3s %8s %9s %9s %9s %9s %9s %9s\n", "test", "", "bytes", "iters",
			       "min us", "p50 us", "p99 us", "p99.9 us", "max us");
			lat_header = true;
			bw_header = false;
		}
		if (!o->json && !t->lat && !bw_header) {
			printf("%-11s %-3s %8s %4s %10s %9s %10s %10s\n", "test", "", "bytes", "qps",
			       "msgs", "seconds", "M msg/s", "Gbit/s");
			bw_header = true;
			lat_header = false;
		}
		for (unsigned int i = 0; i < nsz; i++) {
			if (t->kind == K_ATOMIC && i > 0)
				break;	/* an atomic is 8 bytes whatever the size */
			run_one(t, d0, d1, sz[i]);
		}
	}
	if (o->json)
		printf("\n  ]\n}\n");
	return 0;
}
