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
 *   tag_lat, tag_bw         tagged messages over TM SRQs, eager or rendezvous (RC)
 *
 * A latency figure: min, median, p99, p99.9 and max of single iterations
 * (CLOCK_MONOTONIC around each). A bandwidth figure: the messages completed
 * (received, for SENDs), their rate and bandwidth between the first post and
 * the last completion, with up to --depth WRs outstanding per QP over --qps
 * QPs, --post-list WRs a call, one signaled WR in --cq-mod. Every byte of a
 * latency test's messages is checked where it lands (its first and last
 * byte carry the iteration); a bandwidth test checks completion statuses and
 * lengths. Any error completion ends the run (exit 1).
 *
 * Between two processes (--server/--client, perf_tests_remote) each runs
 * one side of each test, the client a's, the server b's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/tm_types.h>
#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "perf_tests.h"

#define GRH		40
#define QKEY		0x11111111u
#define STALL_S		10
#define ATOMIC_SIZE	8
#define TM_MAX_OPS	1024	/* TAG_ADDs in flight (droce's max_ops) */

const char perf_test_names[] =
	"send_lat write_lat read_lat atomic_lat ud_lat tag_lat send_bw write_bw read_bw atomic_bw "
	"srq_bw ud_bw tag_bw, or main";

#define die(...) do { fprintf(stderr, "droce-perf: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

enum kind { K_SEND, K_WRITE, K_READ, K_ATOMIC };

struct test {
	const char *name;
	enum kind kind;
	bool lat;
	bool srq;
	bool ud;		/* always UD */
	bool tm;		/* tagged SENDs over TM SRQs (RC) */
};

static const struct test tests[] = {
	{ "send_lat", K_SEND, true, false, false, false },
	{ "write_lat", K_WRITE, true, false, false, false },
	{ "read_lat", K_READ, true, false, false, false },
	{ "atomic_lat", K_ATOMIC, true, false, false, false },
	{ "ud_lat", K_SEND, true, false, true, false },
	{ "tag_lat", K_SEND, true, false, false, true },
	{ "send_bw", K_SEND, false, false, false, false },
	{ "write_bw", K_WRITE, false, false, false, false },
	{ "read_bw", K_READ, false, false, false, false },
	{ "atomic_bw", K_ATOMIC, false, false, false, false },
	{ "srq_bw", K_SEND, false, true, false, false },
	{ "ud_bw", K_SEND, false, false, true, false },
	{ "tag_bw", K_SEND, false, false, false, true },
};

/* What one end needs of the other: in this process, or sent over TCP (--server/--client). */
struct pinfo {
	union ibv_gid gid;
	uint64_t addr;			/* its buffer */
	uint32_t rkey;
	uint32_t qpn[MAX_QPS];
};

/* One end: a device's objects, QPs of the test's transport. */
struct pside {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_td *td;		/* --td: a thread domain, and */
	struct ibv_pd *pdom;		/* the parent domain of pd and td the QPs are on */
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;		/* srq_bw's, or the TM SRQ of a tag test */
	struct ibv_cq_ex *tcq;		/* the TM SRQ's CQ: its receives and operations */
	struct pinfo peer;
	struct ibv_qp *qp[MAX_QPS];
	struct ibv_ah *ah;		/* UD: to the other end */
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t bufsz;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned int nqp;
	size_t qp_mem;			/* DPDK heap bytes its QPs took */
	/* tag tests: slots of tslot bytes (TM_HDR, then the payload), then the SRQ WQEs */
	size_t tslot;
	unsigned int nslot, nwqe, ntags;
	uint64_t tlow;			/* tag_bw: every tag below it completed */
	uint8_t tdone[4096];		/* tag_bw: tags at or above tlow completed, by tag % ntags */
	uint64_t fins;			/* FINs received: rendezvous messages completed */
	uint64_t credit;		/* tags whose ADD is known applied: 0 .. credit - 1 */
	size_t credit_off;		/* tag_bw over TCP: where the receiver WRITEs its credit */
	uint64_t acked;			/* completions of its own tagged messages */
	uint64_t sw_rndv;		/* rendezvous done by software (the engine had no slot) */
	unsigned int credit_out;	/* credit WRITEs in flight */
	uint64_t stash[8];		/* tags completed while waiting for something else */
	unsigned int nstash;
};

static const struct perf_opts *O;
static bool first_result = true;
static int remote_sock = -1;		/* --server/--client: the TCP connection */
static bool remote_mode;		/* --server/--client */
static uint64_t sw_rndv_fig;		/* tag_bw's figure: rendezvous software did */
static bool tests_foreach_quiet;	/* tests_foreach without table headers */
static bool remote_server;

static void ctl_send(const char *fmt, ...) __rte_format_printf(1, 2);

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

/* --- the control connection of --server/--client --- */

#define CTL_LINE	1024
#define REMOTE_MAX_QPS	64	/* QP numbers in one CTL_LINE */
#define CTL_WAIT_S	60	/* a peer silent this long is gone */

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
ctl_send(const char *fmt, ...)
{
	char line[CTL_LINE + 16];
	va_list ap;
	size_t len, off = 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, CTL_LINE, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= CTL_LINE)
		die("a control message too long");
	len = (size_t)n;
	line[len++] = '\n';
	while (off < len) {
		ssize_t w = send(remote_sock, line + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("the control connection: %s", w < 0 ? strerror(errno) : "closed");
		off += (size_t)w;
	}
}

/* Something to read on the control connection (a line, or its end)? */
static bool
ctl_pending(void)
{
	struct pollfd pfd = { .fd = remote_sock, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* The next line, without its newline, into @line (CTL_LINE bytes). */
static void
ctl_recv(char *line)
{
	size_t n = 0;

	for (;;) {
		struct pollfd pfd = { .fd = remote_sock, .events = POLLIN };
		ssize_t r;
		char c;

		if (poll(&pfd, 1, CTL_WAIT_S * 1000) == 0)
			die("the peer said nothing for %d s", CTL_WAIT_S);
		/* byte by byte: lines are few and short, and nothing is read past one */
		r = recv(remote_sock, &c, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("the control connection: %s", r < 0 ? strerror(errno) : "the peer closed it");
		if (c == '\n')
			break;
		if (n + 1 >= CTL_LINE)
			die("a control line too long");
		line[n++] = c;
	}
	line[n] = '\0';
}

/* The next line, which must start with @word; what follows it. */
static const char *
ctl_expect(char *line, const char *word)
{
	size_t l = strlen(word);

	ctl_recv(line);
	if (strncmp(line, "ERR ", 4) == 0)
		die("the peer: %s", line + 4);
	if (strncmp(line, word, l) != 0 || (line[l] != ' ' && line[l] != '\0'))
		die("the peer sent \"%.60s\", not %s", line, word);
	return line + l + (line[l] == ' ');
}

/* --client: the run is over after @n (iterations, WRs); what the server counted. */
static uint64_t
remote_end(uint64_t n, uint64_t *more)
{
	char line[CTL_LINE], *end;
	const char *v;

	ctl_send("END %" PRIu64, n);
	v = ctl_expect(line, "ENDACK");
	n = strtoull(v, &end, 0);
	if (more != NULL)
		*more = strtoull(end, NULL, 0);
	return n;
}

/* --server: has the client ended the run? Then @n is its count. */
static bool
ctl_end(uint64_t *n)
{
	char line[CTL_LINE];

	if (!ctl_pending())
		return false;
	*n = strtoull(ctl_expect(line, "END"), NULL, 0);
	return true;
}

/* --- set-up --- */

/* A TM SRQ of @nwqe WQEs and @ntags tags, with its extended CQ (tag tests). */
static void
tm_srq_create(struct pside *s, unsigned int nwqe, unsigned int ntags)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 2 * (nwqe + ntags) + 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = nwqe, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = s->pd,
		.tm_cap = { .max_num_tags = ntags, .max_ops = TM_MAX_OPS },
	};

	s->tcq = ibv_create_cq_ex(s->ctx, &ca);
	if (s->tcq == NULL)
		die("ibv_create_cq_ex (TM info): %s", strerror(errno));
	sa.cq = ibv_cq_ex_to_cq(s->tcq);
	s->srq = ibv_create_srq_ex(s->ctx, &sa);
	if (s->srq == NULL)
		die("ibv_create_srq_ex (TM, %u tags): %s", ntags, strerror(errno));
	s->nwqe = nwqe;
	s->ntags = ntags;
}

/*
 * A CQ of @s: with --td, one the application says only one thread at a
 * time polls (IBV_CREATE_CQ_ATTR_SINGLE_THREADED), as its QPs are on a
 * thread domain: neither takes a lock.
 */
static struct ibv_cq *
cq_create(struct pside *s, unsigned int cqe)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = cqe, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
					  .flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED };
	struct ibv_cq_ex *x;

	if (!O->td)
		return ibv_create_cq(s->ctx, (int)cqe, NULL, NULL, 0);
	x = ibv_create_cq_ex(s->ctx, &ca);
	return x != NULL ? ibv_cq_ex_to_cq(x) : NULL;
}

/* @tm: a tag test's side (TM_* below): its QPs on a TM SRQ of @tm_wqe WQEs and @tm_tags tags. */
static void
side_open(struct pside *s, struct ibv_device *dev, enum ibv_qp_type t, unsigned int nqp,
	  bool srq, size_t bufsz, bool tm, unsigned int tm_wqe, unsigned int tm_tags)
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
	if (O->td) {
		struct ibv_td_init_attr ta = { 0 };

		s->td = ibv_alloc_td(s->ctx, &ta);
		if (s->td != NULL)
			s->pdom = ibv_alloc_parent_domain(s->ctx, &(struct ibv_parent_domain_init_attr){
								   .pd = s->pd, .td = s->td });
		if (s->pdom == NULL)
			die("--td: ibv_alloc_td/ibv_alloc_parent_domain: %s", strerror(errno));
	}
	s->scq = cq_create(s, cqe);
	s->rcq = cq_create(s, cqe);
	if (s->mr == NULL || s->scq == NULL || s->rcq == NULL)
		die("resource creation failed: %s", strerror(errno));
	if (tm) {
		tm_srq_create(s, tm_wqe, tm_tags);
	} else if (srq) {
		s->srq = ibv_create_srq(s->pd, &sa);
		if (s->srq == NULL)
			die("ibv_create_srq: %s", strerror(errno));
	}
	s->qp_mem = heap_used();
	for (unsigned int i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = s->scq, .qp_type = t, .srq = s->srq,
			/* a TM side also READs and sends FINs for the rendezvous left to it */
			/* on a TM SRQ, receives complete on the SRQ's CQ */
			.recv_cq = s->tcq ? ibv_cq_ex_to_cq(s->tcq) : s->rcq,
			.cap = { .max_send_wr = tm ? RTE_MIN(3 * depth, 4096u) : depth,
				 .max_recv_wr = s->srq ? 0 : depth,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = O->inline_size },
		};

		s->qp[i] = ibv_create_qp(s->pdom != NULL ? s->pdom : s->pd, &qa);
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
qp_connect(struct pside *s, unsigned int i, enum ibv_qp_type t)
{
	struct ibv_qp *qp = s->qp[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int ret;

	if (t == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (t == IBV_QPT_RC ?
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		die("modify INIT failed: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.path_mtu = s->mtu;
		a.dest_qp_num = s->peer.qpn[i];
		a.rq_psn = 0x100;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = s->peer.gid;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		die("modify RTR failed: %s", strerror(ret));
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
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		die("modify RTS failed: %s", strerror(ret));
	if (t == IBV_QPT_UD && s->ah == NULL) {
		struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = s->peer.gid, .hop_limit = 64 } };

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
	if (s->tcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(s->tcq));
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_dereg_mr(s->mr);
	if (s->pdom != NULL)
		ibv_dealloc_pd(s->pdom);
	if (s->td != NULL)
		ibv_dealloc_td(s->td);
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

/* One WR of @k on QP @q of @s towards its peer: @len bytes at @off, the remote at @roff. */
static void
wr_fill(struct ibv_send_wr *w, struct ibv_sge *sge, struct pside *s, unsigned int q, enum kind k, size_t off, size_t roff, size_t len, uint64_t id,
	bool signaled)
{
	/*
	 * A copy of zeros, not memset(): GCC's generic tuning makes a 128-byte
	 * memset a `rep stosq`, slow to start (perf put 18% of a 64 B send_bw
	 * sender's samples on it); the copy is eight vector stores.
	 */
	static const struct ibv_send_wr zero;

	memcpy(w, &zero, sizeof(*w));
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
			w->wr.ud.remote_qpn = s->peer.qpn[q];
			w->wr.ud.remote_qkey = QKEY;
		}
		break;
	case K_WRITE:
	case K_READ:
		w->opcode = k == K_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		w->wr.rdma.remote_addr = s->peer.addr + roff;
		w->wr.rdma.rkey = s->peer.rkey;
		break;
	case K_ATOMIC:
		w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w->wr.atomic.remote_addr = s->peer.addr + RTE_ALIGN_FLOOR(roff, 8);
		w->wr.atomic.rkey = s->peer.rkey;
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

/* A tag test's message: eager up to --eager-limit bytes, rendezvous above. */
static bool
tm_rndv(size_t size)
{
	return size > O->eager_limit;
}

/* A tag test's protocol at @size, for the figures; NULL for the others. */
static const char *
tm_proto(const struct test *t, size_t size)
{
	return !t->tm ? NULL : tm_rndv(size) ? "rndv" : "eager";
}

/* --threads: each lcore's figure, kept for the sum (NULL: one thread) */
struct bw_fig {
	uint64_t msgs;
	double secs;
};
static __thread struct bw_fig *bw_capture;
static pthread_mutex_t result_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A figure, as a JSON object or a table row: printed, and in --client mode
 * also sent to the server, which prints it too.
 */

static void
result_line(const char *line)
{
	pthread_mutex_lock(&result_lock);	/* --threads: lcores print at once */
	if (O->json)
		printf("%s%s", first_result ? "" : ",\n", line);
	else
		printf("%s\n", line);
	first_result = false;
	fflush(stdout);
	if (remote_sock >= 0 && !remote_server)
		ctl_send("RESULT %s", line);
	pthread_mutex_unlock(&result_lock);
}

static void
print_lat(const struct test *t, enum ibv_qp_type tr, size_t size, double *us, size_t n)
{
	const char *tm = tm_proto(t, size);
	bool half = t->kind == K_SEND || t->kind == K_WRITE;
	char line[512];

	qsort(us, n, sizeof(*us), cmp_double);
	if (O->json)
		snprintf(line, sizeof(line),
			 "    {\"test\": \"%s\", \"transport\": \"%s\", \"size\": %zu, \"iters\": %zu, "
			 "%s%s%s\"half_round_trip\": %s, \"lat_us\": {\"min\": %.3f, \"p50\": %.3f, "
			 "\"p99\": %.3f, \"p99.9\": %.3f, \"max\": %.3f}}",
			 t->name, tname(tr), size, n, tm ? "\"tm\": \"" : "", tm ? tm : "",
			 tm ? "\", " : "", half ? "true" : "false", us[0], pct(us, n, 0.5),
			 pct(us, n, 0.99), pct(us, n, 0.999), us[n - 1]);
	else
		snprintf(line, sizeof(line), "%-11s %-3s %8zu %9zu %9.2f %9.2f %9.2f %9.2f %9.2f%s%s%s",
			 t->name, tname(tr), size, n, us[0], pct(us, n, 0.5), pct(us, n, 0.99),
			 pct(us, n, 0.999), us[n - 1], half ? "" : "  (round trip)",
			 tm ? "  " : "", tm ? tm : "");
	result_line(line);
}

static void
print_bw(const struct test *t, enum ibv_qp_type tr, size_t size, uint64_t msgs, double secs)
{
	double rate = (double)msgs / secs, gbit = rate * (double)size * 8 / 1e9;
	const char *tm = tm_proto(t, size);
	bool tm_sw = tm != NULL && strcmp(tm, "rndv") == 0;
	char line[512];

	if (bw_capture != NULL) {
		bw_capture->msgs = msgs;
		bw_capture->secs = secs;
	}

	if (O->json)
		snprintf(line, sizeof(line),
			 "    {\"test\": \"%s\", \"transport\": \"%s\", \"size\": %zu, %s%s%s\"qps\": %u, "
			 "\"post_list\": %u, \"cq_mod\": %u, \"depth\": %u, \"msgs\": %" PRIu64 ", "
			 "\"seconds\": %.6f, \"msg_rate_mps\": %.6f, \"gbit_s\": %.4f%s",
			 t->name, tname(tr), size, tm ? "\"tm\": \"" : "", tm ? tm : "",
			 tm ? "\", " : "", O->qps, O->post_list, O->cq_mod, O->depth, msgs, secs,
			 rate / 1e6, gbit, tm_sw ? "" : "}");
	else
		snprintf(line, sizeof(line), "%-11s %-3s %8zu %4u %10" PRIu64 " %9.3f %10.3f %10.3f%s%s",
			 t->name, tname(tr), size, O->qps, msgs, secs, rate / 1e6, gbit,
			 tm ? "  " : "", tm ? tm : "");
	/* a tag_bw rendezvous: how many the engine left to software */
	if (tm_sw)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 O->json ? ", \"sw_rndv\": %" PRIu64 "}" : " (%" PRIu64 " by software)",
			 sw_rndv_fig);
	result_line(line);
}

/*
 * A progress line on stderr for figures longer than a second, when stderr
 * is a terminal (asked once: isatty is a system call, and this runs in the
 * measured loops); the line is erased when the figure is printed.
 */
static bool
progress_on(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

static void
progress(const struct test *t, size_t size, uint64_t done, double t0, double *next)
{
	static unsigned int calls;
	double now;

	/* the clock every 256 calls: a clock read per iteration costs a message's worth */
	if (!progress_on() || (++calls & 255) != 0)
		return;
	now = now_s();
	if (now < *next)
		return;
	*next = now + 1;
	if (now - t0 >= 1)
		fprintf(stderr, "\r%s %zu B%s%s: %" PRIu64 " %s in %.0f s ", t->name, size,
			t->tm ? " " : "", t->tm ? (tm_rndv(size) ? "rndv" : "eager") : "", done,
			t->lat ? "iterations" : "messages", now - t0);
}

static void
progress_end(double t0)
{
	if (progress_on() && now_s() - t0 >= 1)
		fprintf(stderr, "\r%70s\r", "");
}

/*
 * The untimed iterations a latency test runs first (--warmup; by default a
 * tenth of @n, at least 10, as bench-compare gives ucx_perftest's -w): the
 * first pass through rings, buffers and caches, whose page faults and
 * misses are no steady latency.
 */
static uint64_t
lat_warmup(uint64_t n)
{
	if (O->warmup >= 0)
		return (uint64_t)O->warmup;
	return O->duration > 0 ? 1000 : n / 10 > 10 ? n / 10 : 10;
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
		/*
		 * Reap the signaled WRITEs' completions, the writer's (@o) as
		 * well as this side's: a CQ left unreaped overruns, and its QP
		 * goes to ERR. Polling also progresses both devices.
		 */
		for (int side = 0; side < 2; side++) {
			struct pside *p = side ? o : s;
			int n = p != NULL ? ibv_poll_cq(p->scq, 8, wc) : 0;

			for (int k = 0; k < n; k++)
				if (wc[k].status != IBV_WC_SUCCESS)
					die("completion error: %s",
					    ibv_wc_status_str(wc[k].status));
		}
		if (o != NULL)
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

#define REMOTE_STAMP	0xa4	/* read_lat over TCP: the server's bytes, once */

/*
 * Room for @cap latency samples, every page touched before the clock runs:
 * a first touch inside the timed loop is a page fault, timed with the
 * sample it falls in, once every 512 samples (0.2% of them: between p99 and
 * p99.9).
 */
static double *
samples_alloc(uint64_t cap)
{
	double *us = malloc(cap * sizeof(*us));

	if (us == NULL)
		die("out of memory");
	/* not zeros: GCC turns malloc and a memset of zeros into calloc, which touches nothing */
	memset(us, 0xff, cap * sizeof(*us));
	return us;
}

/*
 * A latency test's ping-pong, measured at a. With b NULL (--client), b is
 * across the link: lat_server answers there, and the run ends with END.
 */
static void
run_lat(const struct test *t, enum ibv_qp_type tr, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 2000, cap = O->duration > 0 ? 1u << 24 : n, i, peer;
	uint64_t warm = lat_warmup(n);
	size_t grh = tr == IBV_QPT_UD ? GRH : 0;
	double *us = samples_alloc(cap), t0 = now_s(), next = t0 + 1;
	struct ibv_cq *b_scq = b ? b->scq : NULL, *b_rcq = b ? b->rcq : NULL;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	struct ibv_wc wc;

	if (t->kind == K_SEND) {
		recv_post(a, 0, 0, size + grh, 1);
		if (b)
			recv_post(b, 0, 0, size + grh, 1);
	}
	/* the first @warm iterations go untimed; the peer counts them all */
	for (i = 0; i < warm || (more(i - warm, n, t0) && i - warm < cap); i++) {
		double s0;

		if (i == warm)
			t0 = now_s();
		s0 = now_s();
		switch (t->kind) {
		case K_SEND:
			stamp(a->buf + 4096 + grh, size, i);
			wr_fill(&w, &sge, a, 0, K_SEND, 4096 + grh, 0, size, i, true);
			send_post(a, 0, &w);
			if (b) {
				wc_wait(b->rcq, a->scq, &wc);
				if (wc.byte_len != size + grh || (size && !stamped(b->buf + grh, size, i)))
					die("%s %" PRIu64 ": %u bytes, or not the ones sent", t->name, i,
					    wc.byte_len);
				recv_post(b, 0, 0, size + grh, 1);
				stamp(b->buf + 4096 + grh, size, i);
				wr_fill(&w, &sge, b, 0, K_SEND, 4096 + grh, 0, size, i, true);
				send_post(b, 0, &w);
			}
			wc_wait(a->rcq, b_scq, &wc);
			if (wc.byte_len != size + grh || (size && !stamped(a->buf + grh, size, i)))
				die("%s %" PRIu64 ": the reply is wrong", t->name, i);
			recv_post(a, 0, 0, size + grh, 1);
			wc_wait(a->scq, NULL, &wc);
			if (b)
				wc_wait(b->scq, NULL, &wc);
			break;
		case K_WRITE:
			/* a's 4 KiB-offset source lands at b's 0, and back */
			stamp(a->buf + 4096, size, i);
			wr_fill(&w, &sge, a, 0, K_WRITE, 4096, 0, size, i, true);
			send_post(a, 0, &w);
			if (b) {
				land_wait(b, a, 0, size, i);
				stamp(b->buf + 4096, size, i);
				wr_fill(&w, &sge, b, 0, K_WRITE, 4096, 0, size, i, true);
				send_post(b, 0, &w);
			}
			land_wait(a, b, 0, size, i);
			break;
		case K_READ:
			/* across the link, the server stamped its bytes once */
			if (b)
				stamp(b->buf, size, i);
			wr_fill(&w, &sge, a, 0, K_READ, 4096, 0, size, i, true);
			send_post(a, 0, &w);
			wc_wait(a->scq, b_rcq, &wc);
			if (size && !stamped(a->buf + 4096, size, b ? i : REMOTE_STAMP))
				die("read_lat %" PRIu64 ": the bytes read are not the remote ones", i);
			if (!b)
				memset(a->buf + 4096, 0, size);
			break;
		case K_ATOMIC:
			wr_fill(&w, &sge, a, 0, K_ATOMIC, 4096, 0, ATOMIC_SIZE, i, true);
			send_post(a, 0, &w);
			wc_wait(a->scq, b_rcq, &wc);
			if (*(uint64_t *)(a->buf + 4096) != i)
				die("atomic_lat %" PRIu64 ": fetched %" PRIu64, i,
				    *(uint64_t *)(a->buf + 4096));
			break;
		}
		if (i < warm)
			continue;
		us[i - warm] = (now_s() - s0) * 1e6;
		if (t->kind == K_SEND || t->kind == K_WRITE)
			us[i - warm] /= 2;
		progress(t, size, i - warm, t0, &next);
	}
	progress_end(t0);
	if (b == NULL) {
		peer = remote_end(i, NULL);
		if ((t->kind == K_SEND || t->kind == K_WRITE) && peer != i)
			die("%s: the server counted %" PRIu64 " iterations, not %" PRIu64, t->name,
			    peer, i);
	} else if (t->kind == K_SEND) {
		/* b's receive of the last round is still posted: consume it */
		wr_fill(&w, &sge, a, 0, K_SEND, 4096 + grh, 0, size, ~0ull, true);
		send_post(a, 0, &w);
		wc_wait(b->rcq, a->scq, &wc);
		wc_wait(a->scq, NULL, &wc);
		/* and a's own */
		wr_fill(&w, &sge, b, 0, K_SEND, 4096 + grh, 0, size, ~0ull, true);
		send_post(b, 0, &w);
		wc_wait(a->rcq, b->scq, &wc);
		wc_wait(b->scq, NULL, &wc);
	}
	print_lat(t, tr, t->kind == K_ATOMIC ? ATOMIC_SIZE : size, us, (size_t)(i - warm));
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
	/* posted modulo the CQ moderation and modulo the slots: no division per WR */
	unsigned int sig_at, slot_at;
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

/* Receives a bandwidth test keeps posted at @b: each QP's depth, or the SRQ's for all. */
static unsigned int
recv_depth(const struct pside *b)
{
	return b->srq ? RTE_MIN(O->depth * b->nqp, 4096u) : O->depth;
}

/*
 * The bandwidth tests' message buffers: WR (or receive) k uses buffer k % n
 * of its side's buffer, n = --slots; without it, n = @dflt, every WR or
 * receive in flight its own (the depth for sends, recv_depth() for
 * receives). perftest and ucx_perftest send every message from one buffer
 * (--slots 1): the payloads then stay in the CPU's caches.
 */
static inline unsigned int
nb_slots(unsigned int dflt)
{
	return O->slots ? O->slots : dflt;
}

static inline size_t
slot_off(uint64_t k, size_t slot, unsigned int dflt)
{
	unsigned int n = nb_slots(dflt);

	/* a receive's slot comes back with its WR's number, below n: no division */
	return (size_t)(k < n ? k : k % n) * slot;
}

static void
run_bw(const struct test *t, enum ibv_qp_type tr, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 20000, posted = 0, done = 0, recvd = 0;
	unsigned int nq = a->nqp, depth = O->depth, mod = O->cq_mod, pl = O->post_list, open;
	size_t grh = tr == IBV_QPT_UD ? GRH : 0, slot = RTE_ALIGN_CEIL(size + grh, 64);
	size_t len = t->kind == K_ATOMIC ? ATOMIC_SIZE : size;
	unsigned int rdepth = b != NULL ? recv_depth(b) : depth;
	struct bw_qp *Q = calloc(nq, sizeof(*Q));
	struct bw_ready R = { .q = calloc(nq, sizeof(unsigned int)), .n = nq };
	bool sends = t->kind == K_SEND, dur = O->duration > 0, expired = false;
	struct ibv_send_wr w[64];
	struct ibv_sge sge[64];
	struct ibv_wc wc[64];
	double t0, t_end, next;
	unsigned int loops = 0;

	if (Q == NULL || R.q == NULL)
		die("out of memory");
	for (unsigned int q = 0; q < nq; q++)
		Q[q].quota = dur ? UINT64_MAX : n / nq + (q < n % nq);
	/* receives: each QP's queue (or the SRQ) full; slots cycle over b's buffer */
	if (sends && b != NULL)
		for (unsigned int q = 0; q < (b->srq ? 1u : nq); q++)
			for (unsigned int r = 0; r < rdepth; r++)
				recv_post(b, q, slot_off(r, slot, rdepth), size + grh, WRID(q, r));
	open = nq;
	for (unsigned int q = 0; q < nq; q++) {
		if (Q[q].quota == 0)
			Q[q].closed = true, open--;
		ready_push(&R, Q, q);
	}
	t0 = now_s();
	next = t0 + 1;
	t_end = t0;
	while (open > 0 || done < posted ||
	       (sends && b != NULL && tr == IBV_QPT_RC && recvd < posted)) {
		/* -D: the clock every 64 loops (a read per loop cost 13% of the poster's time) */
		if (dur && !expired && (++loops & 63) == 0 && now_s() - t0 >= O->duration) {
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

			/* as perftest: post lists of -l WRs while the QP has room, then poll */
			for (;;) {
				unsigned int k = 0;

				while (!p->closed && k < pl && p->posted + k - p->retired < depth &&
				       p->posted + k < p->quota) {
					uint64_t seq = p->posted + k;
					bool sig = p->sig_at == mod - 1 || seq + 1 == p->quota;
					size_t off = (size_t)p->slot_at * slot;

					/* a division a WR cost the poster as much as a tenth of a message */
					p->sig_at = p->sig_at + 1 == mod ? 0 : p->sig_at + 1;
					p->slot_at = p->slot_at + 1 == nb_slots(depth) ? 0 : p->slot_at + 1;

					wr_fill(&w[k], &sge[k], a, q, t->kind, off, off, len,
						WRID(q, seq), sig);
					w[k].next = NULL;
					if (k > 0)
						w[k - 1].next = &w[k];
					if (sig)
						p->sigd = seq + 1;
					k++;
				}
				if (k == 0)
					break;
				send_post(a, q, w);
				p->posted += k;
				posted += k;
				if (p->posted == p->quota) {
					p->closed = true, open--;
					break;
				}
			}
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
		m = b != NULL ? ibv_poll_cq(b->rcq, 64, wc) : 0;
		for (int i = 0; i < m; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != size + grh)
				die("%s: receive completion %s, %u bytes", t->name,
				    ibv_wc_status_str(wc[i].status), wc[i].byte_len);
			recvd++;
			recv_post(b, WRID_Q(wc[i].wr_id),
				  slot_off(WRID_SEQ(wc[i].wr_id), slot, rdepth), size + grh,
				  wc[i].wr_id);
		}
		/* UC and UD: the last arrival ends the run (RC ends with the loop, below) */
		if (m > 0 && sends && tr != IBV_QPT_RC)
			t_end = now_s();
		progress(t, size, done, t0, &next);
	}
	/* the loop ends in the iteration that takes the last completion it waits for */
	if (b == NULL || !(sends && tr != IBV_QPT_RC))
		t_end = now_s();
	progress_end(t0);
	if (b == NULL) {
		/*
		 * --client: the server counts the SENDs (RC: every one, checked
		 * there; UC and UD: what arrived, over the time they were sent)
		 */
		recvd = remote_end(posted, NULL);
	} else if (sends && tr != IBV_QPT_RC) {
		/* UC and UD: what arrived is what counts; let late ones land */
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

/* --- tag matching --- */

/*
 * tag_lat and tag_bw (rdma-core's Documentation/tag_matching.md): every
 * side's RC QP is on a TM SRQ of its own, whose extended CQ reports its
 * receives and operations. A buffer holds slots of tslot bytes, each
 * TM_HDR bytes of header room and then a payload, followed by the SRQ's
 * WQEs (TM_WQE bytes each), which take the FINs (and would take an
 * unexpected message: an error here, as the tags are always posted first).
 * A message of at most --eager-limit bytes goes eager: one SEND of the TMH
 * followed by the payload, which lands without the TMH in the matched tag's
 * buffer (a tag's completion with DATA_VALID). A larger one goes by
 * rendezvous: a SEND of TMH and RVH naming the payload in the sender's
 * slot; the receiver's engine matches the tag, READs the payload into the
 * tag's buffer, sends the FIN and completes the tag (DATA_VALID); the FIN
 * completes the message at the sender (NO_TAG on its TM SRQ).
 */
#define TM_HDR		64
#define TM_WQE		256
#define TM_AHEAD	16		/* tag_lat: tags posted ahead of their messages */
#define TM_ADD_ID	(1ull << 62)	/* wr_id of a signaled ADD: the tag below it */
#define TM_SW_ID	(1ull << 61)	/* wr_id of a software rendezvous's READ and FIN */
#define TM_CREDIT_ID	(1ull << 60)	/* wr_id of a credit WRITE (--server) */

struct tmc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	unsigned int flags;
};

static uint8_t *
tm_slot(const struct pside *s, uint64_t k)
{
	return s->buf + (k % s->nslot) * s->tslot;
}

static void
tm_wqe_post(struct pside *s, unsigned int r)
{
	recv_post(s, 0, (size_t)s->nslot * s->tslot + (size_t)r * TM_WQE, TM_WQE, r);
}

/* Slots of @size-byte payloads, @nslot of them, then @nwqe WQEs: the buffer's size. */
static size_t
tm_bufsz(size_t size, unsigned int nslot, unsigned int nwqe)
{
	return (size_t)nslot * (TM_HDR + RTE_ALIGN_CEIL(RTE_MAX(size, (size_t)1), 64)) +
	       (size_t)nwqe * TM_WQE;
}

/* Before the QPs move to RTR: its slots, and every WQE posted. */
static void
tm_layout(struct pside *s, size_t size, unsigned int nslot)
{
	s->tslot = TM_HDR + RTE_ALIGN_CEIL(RTE_MAX(size, (size_t)1), 64);
	s->nslot = nslot;
	s->fins = 0;
	s->credit = 0;
	for (unsigned int r = 0; r < s->nwqe; r++)
		tm_wqe_post(s, r);
}

/*
 * ADD tags @from .. @to - 1, tag k's buffer the payload of slot k (tag_lat,
 * two slots: of slot 1, the other is what it sends from); only
 * the last is signaled: its completion (tm_reap) moves the credit, as
 * operations apply in order.
 */
static void
tm_add(struct pside *s, uint64_t from, uint64_t to, size_t size)
{
	struct ibv_ops_wr ops[64], *bad;
	struct ibv_sge sge[64];

	while (from < to) {
		unsigned int k = 0;

		for (; k < RTE_DIM(ops) && from + k < to; k++) {
			uint64_t tag = from + k;

			sge[k] = (struct ibv_sge){ (uintptr_t)tm_slot(s, s->nslot == 2 ? 1 : tag) + TM_HDR,
						   (uint32_t)RTE_MAX(size, (size_t)1), s->mr->lkey };
			ops[k] = (struct ibv_ops_wr){
				.wr_id = TM_ADD_ID | tag, .opcode = IBV_WR_TAG_ADD,
				.next = from + k + 1 < to && k + 1 < RTE_DIM(ops) ? &ops[k + 1] : NULL,
				.flags = from + k + 1 == to ? IBV_OPS_SIGNALED : 0,
				.tm = { .unexpected_cnt = 0,
					.add = { .recv_wr_id = tag, .sg_list = &sge[k], .num_sge = 1,
						 .tag = tag, .mask = ~0ull } },
			};
		}
		int ret = ibv_post_srq_ops(s->srq, ops, &bad);

		if (ret)
			die("ibv_post_srq_ops (TAG_ADD of tag %" PRIu64 "): %s",
			    bad->tm.add.tag, strerror(ret));
		from += k;
	}
}

/* A tagged message of @size bytes from slot @slot of @s, tag @tag, signaled. */
static void
tm_send(struct pside *s, uint64_t slot, uint64_t tag, size_t size)
{
	uint8_t *p = tm_slot(s, slot);
	struct ibv_tmh tmh = { .opcode = tm_rndv(size) ? IBV_TMH_RNDV : IBV_TMH_EAGER,
			       .app_ctx = htobe32((uint32_t)tag), .tag = htobe64(tag) };
	struct ibv_sge sge = { .lkey = s->mr->lkey };
	struct ibv_send_wr w = { .wr_id = tag, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

	if (tm_rndv(size)) {
		struct ibv_rvh rvh = { .va = htobe64((uintptr_t)p + TM_HDR),
				       .rkey = htobe32(s->mr->rkey), .len = htobe32((uint32_t)size) };

		memcpy(p, &tmh, sizeof(tmh));
		memcpy(p + sizeof(tmh), &rvh, sizeof(rvh));
		sge.addr = (uintptr_t)p;
		sge.length = sizeof(tmh) + sizeof(rvh);
	} else {
		/* the TMH right before the payload: one SGE */
		memcpy(p + TM_HDR - sizeof(tmh), &tmh, sizeof(tmh));
		sge.addr = (uintptr_t)p + TM_HDR - sizeof(tmh);
		sge.length = (uint32_t)(sizeof(tmh) + size);
	}
	if (sge.length <= O->inline_size)
		w.send_flags |= IBV_SEND_INLINE;
	send_post(s, 0, &w);
}

/* Tag @tag's buffer: slot 1 of tag_lat's two, else the tag's own slot. */
static uint8_t *
tm_tagbuf(const struct pside *s, uint64_t tag)
{
	return tm_slot(s, s->nslot == 2 ? 1 : tag) + TM_HDR;
}

/*
 * A rendezvous the engine left to software (IBV_WC_TM_RNDV_INCOMPLETE: it
 * had no rendezvous slot free on the QP): the TMH and RVH are in the tag's
 * buffer. READ the data there, then send the FIN, fenced so that it leaves
 * once the READ is done; the FIN's completion completes the tag (tm_reap).
 */
static void
tm_sw_rndv(struct pside *s, uint64_t tag)
{
	uint8_t *p = tm_tagbuf(s, tag);
	struct ibv_tmh tmh;
	struct ibv_rvh rvh;
	struct ibv_sge rs, fs;
	struct ibv_send_wr fin = { .wr_id = TM_SW_ID | tag, .sg_list = &fs, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };
	struct ibv_send_wr rd = { .wr_id = TM_SW_ID | tag, .next = &fin, .sg_list = &rs,
				  .num_sge = 1, .opcode = IBV_WR_RDMA_READ };

	memcpy(&tmh, p, sizeof(tmh));
	memcpy(&rvh, p + sizeof(tmh), sizeof(rvh));
	if (tmh.opcode != IBV_TMH_RNDV || be64toh(tmh.tag) != tag)
		die("tag %" PRIu64 ": a software rendezvous without its request", tag);
	rs = (struct ibv_sge){ (uintptr_t)p, be32toh(rvh.len), s->mr->lkey };
	rd.wr.rdma.remote_addr = be64toh(rvh.va);
	rd.wr.rdma.rkey = be32toh(rvh.rkey);
	/* the FIN from the header room before the tag's buffer */
	tmh.opcode = IBV_TMH_FIN;
	memcpy(p - TM_HDR, &tmh, sizeof(tmh));
	fs = (struct ibv_sge){ (uintptr_t)p - TM_HDR, sizeof(tmh), s->mr->lkey };
	send_post(s, 0, &rd);
	s->sw_rndv++;
}

/*
 * Poll @s's TM CQ and send CQ. FINs (NO_TAG) count in s->fins and give
 * their WQE back; a signaled ADD's completion moves s->credit; completions
 * of @s's own messages count in s->acked; the tags of DATA_VALID
 * completions (each checked: @size bytes), and of software rendezvous whose
 * FIN went, go to @tags (at most 2 * 64): how many. MATCH alone (a
 * rendezvous, or the first packet of a longer eager message) says nothing
 * more. Anything else ends the run.
 */
static int
tm_reap(struct pside *s, uint64_t *tags, size_t size)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc[64];
	struct tmc c[64];
	int n = 0, k = 0, m, ret = ibv_start_poll(s->tcq, &pa);

	if (ret != 0 && ret != ENOENT)
		die("ibv_start_poll: %s", strerror(ret));
	if (ret == 0) {
		do {
			c[n].wr_id = s->tcq->wr_id;
			c[n].status = s->tcq->status;
			c[n].opcode = ibv_wc_read_opcode(s->tcq);
			c[n].byte_len = ibv_wc_read_byte_len(s->tcq);
			c[n].flags = ibv_wc_read_wc_flags(s->tcq);
			n++;
		} while (n < (int)RTE_DIM(c) && ibv_next_poll(s->tcq) == 0);
		ibv_end_poll(s->tcq);
	}
	for (int i = 0; i < n; i++) {
		if (c[i].status == IBV_WC_TM_RNDV_INCOMPLETE) {
			tm_sw_rndv(s, c[i].wr_id);
			continue;
		}
		if (c[i].status != IBV_WC_SUCCESS)
			die("TM completion error: %s (opcode %d, wr_id %#" PRIx64 ")",
			    ibv_wc_status_str(c[i].status), c[i].opcode, c[i].wr_id);
		switch (c[i].opcode) {
		case IBV_WC_TM_NO_TAG: {
			const struct ibv_tmh *fin = (const void *)(s->buf + (size_t)s->nslot * s->tslot +
								   c[i].wr_id * TM_WQE);

			if (fin->opcode != IBV_TMH_FIN)
				die("a NO_TAG message that is no FIN (TMH opcode %u)", fin->opcode);
			s->fins++;
			tm_wqe_post(s, (unsigned int)c[i].wr_id);
			break;
		}
		case IBV_WC_TM_ADD:
			if (c[i].wr_id & TM_ADD_ID)
				s->credit = (c[i].wr_id & ~TM_ADD_ID) + 1;
			break;
		case IBV_WC_TM_RECV:
			if (!(c[i].flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID)))
				die("an unexpected tagged message (SRQ WQE %" PRIu64 "): its tag was "
				    "not posted", c[i].wr_id);
			if (!(c[i].flags & IBV_WC_TM_DATA_VALID))
				break;
			if (c[i].byte_len != size)
				die("tag %" PRIu64 ": %u bytes, not %zu", c[i].wr_id, c[i].byte_len,
				    size);
			tags[k++] = c[i].wr_id;
			break;
		default:
			die("TM CQ: unexpected opcode %d (flags %#x)", c[i].opcode, c[i].flags);
		}
	}
	m = ibv_poll_cq(s->scq, RTE_DIM(wc), wc);
	for (int i = 0; i < m; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			die("TM send completion error: %s (wr_id %#" PRIx64 ")",
			    ibv_wc_status_str(wc[i].status), wc[i].wr_id);
		if (wc[i].wr_id & TM_SW_ID)
			tags[k++] = wc[i].wr_id & ~TM_SW_ID;
		else if (wc[i].wr_id & TM_CREDIT_ID)
			s->credit_out--;
		else
			s->acked++;
	}
	return k;
}

/*
 * tag_bw's receiver: @m tags completed. Tags complete out of order (a
 * software rendezvous waits for its READ and FIN while later ones finish),
 * and tag t + ntags takes tag t's slot: a tag's slot is added again only
 * once it and every tag before it completed, so no ADD reuses a buffer a
 * rendezvous still reads into, and ADDs stay in tag order (the credit).
 */
static void
tm_refill(struct pside *s, const uint64_t *got, int m, size_t size)
{
	uint64_t low = s->tlow;

	for (int i = 0; i < m; i++)
		s->tdone[got[i] % s->ntags] = 1;
	while (s->tdone[low % s->ntags]) {
		s->tdone[low % s->ntags] = 0;
		low++;
	}
	if (low > s->tlow)
		tm_add(s, s->tlow + s->ntags, low + s->ntags, size);
	s->tlow = low;
}

/* tm_reap, but first the tags a TM_WAIT put aside: how many in @tags. */
static int
tm_next(struct pside *s, uint64_t *tags, size_t size)
{
	int n = (int)s->nstash;

	if (n == 0)
		return tm_reap(s, tags, size);
	memcpy(tags, s->stash, n * sizeof(*tags));
	s->nstash = 0;
	return n;
}

/* Poll @s until tag @tag's data is valid, progressing @o's device too. */
static void
tm_wait_tag(struct pside *s, struct pside *o, uint64_t tag, size_t size)
{
	double deadline = 0;
	uint64_t got[128];
	struct ibv_wc wc;

	for (unsigned int spin = 0;; spin++) {
		int n = tm_next(s, got, size);

		if (n > 1 || (n == 1 && got[0] != tag))
			die("tag_lat: tag %" PRIu64 " came while %" PRIu64 " was awaited", got[0], tag);
		if (n == 1)
			return;
		if (o != NULL)
			ibv_poll_cq(o->scq, 0, &wc);
		if ((spin & 1023) == 1023) {
			if (deadline == 0)
				deadline = now_s() + STALL_S;
			else if (now_s() > deadline)
				die("tag %" PRIu64 " did not complete within %d s", tag, STALL_S);
		}
	}
}

/* Progress @o's device (inline progress moves it only when polled), if there is one here. */
static void
poke(struct pside *o)
{
	struct ibv_wc wc;

	if (o != NULL)
		ibv_poll_cq(o->scq, 0, &wc);
}

/*
 * Poll @s until @cond holds (its credit, FINs, send completions),
 * progressing @o's device too. A tag that completes meanwhile (over TCP,
 * the peer's next message may come before this side's ACK) is put aside
 * for tm_next.
 */
#define TM_WAIT(s, o, size, cond, what) do {						\
	uint64_t got_[128];								\
	double dl_ = now_s() + STALL_S;							\
	while (!(cond)) {								\
		int n_ = tm_reap((s), got_, (size));					\
		if (n_ > 0 && (s)->nstash + n_ > RTE_DIM((s)->stash))			\
			die("%s: tagged messages nobody sent", what);			\
		for (int k_ = 0; k_ < n_; k_++)						\
			(s)->stash[(s)->nstash++] = got_[k_];				\
		poke(o);								\
		if (now_s() > dl_)							\
			die("%s: not within %d s", what, STALL_S);			\
	}										\
} while (0)

/* Ping-pong of tagged messages: a's tag i to b, b's tag i back; half the round trip. */
static void
run_tag_lat(const struct test *t, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 2000, cap = O->duration > 0 ? 1u << 24 : n, i;
	double *us = samples_alloc(cap), t0, next;
	bool rndv = tm_rndv(size);
	struct pside *sd[2] = { a, b };

	/* slot 0: what a side sends; slot 1: every tag's buffer (one message at a time) */
	for (int k = 0; k < 2; k++)
		tm_add(sd[k], 0, TM_AHEAD, size);
	for (int k = 0; k < 2; k++)
		TM_WAIT(sd[k], sd[1 - k], size, sd[k]->credit == TM_AHEAD, "tag_lat: first tags");
	t0 = now_s();
	next = t0 + 1;
	for (i = 0; more(i, n, t0) && i < cap; i++) {
		double s0 = now_s();

		for (int k = 0; k < 2; k++) {
			struct pside *from = sd[k], *to = sd[1 - k];

			stamp(from->buf + TM_HDR, size, i);
			tm_send(from, 0, i, size);
			tm_wait_tag(to, from, i, size);
			if (size && !stamped(to->buf + to->tslot + TM_HDR, size, i))
				die("tag_lat %" PRIu64 ": the tag's buffer does not hold the message", i);
			/* the tag AHEAD on: long applied when its message comes */
			tm_add(to, i + TM_AHEAD, i + TM_AHEAD + 1, size);
		}
		us[i] = (now_s() - s0) * 1e6 / 2;
		/* both messages complete at their sender: the ACK, and for a rendezvous the FIN */
		TM_WAIT(a, b, size, a->acked == i + 1, "tag_lat: the send completion");
		TM_WAIT(b, a, size, b->acked == i + 1, "tag_lat: the send completion");
		if (rndv) {
			TM_WAIT(a, b, size, a->fins == i + 1, "tag_lat: the FIN");
			TM_WAIT(b, a, size, b->fins == i + 1, "tag_lat: the FIN");
		}
		progress(t, size, i, t0, &next);
	}
	progress_end(t0);
	print_lat(t, IBV_QPT_RC, size, us, (size_t)i);
	free(us);
}

/*
 * a streams tagged messages to b, which keeps ntags tags posted: it ADDs
 * tag k + ntags when tag k completes, and a sends tag k only once b's
 * credit (its ADDs known applied) passes k, so that no message comes
 * unexpected. Up to --depth messages are outstanding at a; an eager one
 * completes with its ACK, a rendezvous with its FIN. The figure: the
 * messages b completed (DATA_VALID), between the first post and the last.
 */
static void
run_tag_bw(const struct test *t, struct pside *a, struct pside *b, size_t size)
{
	uint64_t n = O->iters ? O->iters : 20000, quota, sent = 0, recvd = 0, got[128];
	unsigned int depth = O->depth;
	bool rndv = tm_rndv(size), dur = O->duration > 0;
	double t0, t_end, next;

	tm_add(b, 0, b->ntags, size);
	TM_WAIT(b, a, size, b->credit == b->ntags, "tag_bw: first tags");
	quota = dur ? UINT64_MAX : n;
	t0 = now_s();
	next = t0 + 1;
	t_end = t0;
	for (;;) {
		uint64_t done = rndv ? a->fins : a->acked;
		int m;

		if (dur && quota == UINT64_MAX && now_s() - t0 >= O->duration)
			quota = sent;
		if (sent == quota && done == sent && a->acked == sent && recvd == sent)
			break;
		while (sent < quota && sent < b->credit && sent - done < depth) {
			tm_send(a, sent, sent, size);
			sent++;
		}
		if (tm_reap(a, got, size) != 0)
			die("tag_bw: a tagged message at the sender");
		m = tm_reap(b, got, size);
		if (m > 0) {
			/* tags completed, their slots posted again: b keeps ntags */
			tm_refill(b, got, m, size);
			recvd += m;
			t_end = now_s();
		}
		progress(t, size, recvd, t0, &next);
	}
	progress_end(t0);
	sw_rndv_fig = b->sw_rndv;
	print_bw(t, IBV_QPT_RC, size, recvd, t_end - t0);
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

static enum ibv_qp_type
test_transport(const struct test *t)
{
	return t->ud ? IBV_QPT_UD : t->tm ? IBV_QPT_RC : O->transport;
}

/* What a test refuses, before any object exists. */
static void
test_check(const struct test *t, size_t size)
{
	enum ibv_qp_type tr = test_transport(t);

	if ((t->kind == K_READ || t->kind == K_ATOMIC || t->tm) && O->transport != IBV_QPT_RC &&
	    O->transport_set)
		die("%s: RC only", t->name);
	if (t->kind == K_WRITE && tr == IBV_QPT_UD)
		die("%s: RC or UC", t->name);
	if (t->kind == K_WRITE && t->lat && size == 0)
		die("write_lat: at least 1 byte");
	if (t->tm && size > UINT32_MAX)
		die("%s: at most 4 GiB", t->name);
	/* the QP numbers go over TCP in one line */
	if (remote_mode && O->qps > REMOTE_MAX_QPS)
		die("with --server/--client, at most %u QPs", REMOTE_MAX_QPS);
}

/*
 * A test's side on @dev for messages of @size: its objects, and a tag
 * test's slots and WQEs. @receiver: b, the side that receives the
 * bandwidth tests' messages (srq_bw's SRQ).
 */
static void
side_setup(struct pside *s, const struct test *t, struct ibv_device *dev, size_t size,
	   bool receiver)
{
	enum ibv_qp_type tr = test_transport(t);
	unsigned int nq = t->lat || t->tm ? 1 : O->qps;
	size_t grh = tr == IBV_QPT_UD ? GRH : 0, slot = RTE_ALIGN_CEIL(size + grh, 64);
	size_t nbuf = O->slots ? O->slots : (size_t)O->depth * (t->srq ? nq : 1);
	size_t bufsz = RTE_MAX(nbuf * slot, 8192 + 2 * slot);

	if (t->tm) {
		/* tag_lat: a slot to send from, one for the tags; tag_bw: one a message in flight */
		unsigned int nslot = t->lat ? 2 : O->depth, nwqe = t->lat ? 16 : O->depth;
		unsigned int ntags = t->lat ? 2 * TM_AHEAD : O->depth;

		bufsz = tm_bufsz(size, nslot, nwqe);
		side_open(s, dev, tr, 1, false, bufsz + 64, true, nwqe, ntags);
		s->credit_off = bufsz;
		tm_layout(s, size, nslot);
	} else {
		side_open(s, dev, tr, nq, receiver && t->srq, bufsz, false, 0, 0);
	}
	/* the GRH is in the receive buffer only, not on the wire: the payload may be the MTU */
	if (tr == IBV_QPT_UD && size > (128u << s->mtu))
		die("%s: %zu B is more than the UD MTU (%u B)", t->name, size, 128u << s->mtu);
}

static void
side_info(const struct pside *s, struct pinfo *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->gid = s->gid;
	pi->addr = (uintptr_t)s->buf;
	pi->rkey = s->mr->rkey;
	for (unsigned int i = 0; i < s->nqp; i++)
		pi->qpn[i] = s->qp[i]->qp_num;
}

static void
run_one(const struct test *t, struct ibv_device *d0, struct ibv_device *d1, size_t size)
{
	enum ibv_qp_type tr = test_transport(t);
	/* MAX_QPS QPs each: not on the stack; a pair per thread (--threads) */
	static __thread struct pside *sides;
	struct pside *pa, *pb;

	if (sides == NULL && (sides = calloc(2, sizeof(*sides))) == NULL)
		die("out of memory");
	pa = &sides[0];
	pb = &sides[1];
	test_check(t, size);
	side_setup(pa, t, d0, size, false);
	side_setup(pb, t, d1, size, true);
	side_info(pb, &pa->peer);
	side_info(pa, &pb->peer);
	for (unsigned int i = 0; i < pa->nqp; i++) {
		qp_connect(pa, i, tr);
		qp_connect(pb, i, tr);
	}
	if (pa->nqp > 1)	/* what a QP costs, its queues included */
		fprintf(stderr, "%s: %u QPs a side, %zu bytes each (%u send and %u receive WRs)\n",
			t->name, pa->nqp, (pa->qp_mem + pb->qp_mem) / (2 * pa->nqp), O->depth,
			pb->srq ? 0 : O->depth);
	if (t->tm && t->lat)
		run_tag_lat(t, pa, pb, size);
	else if (t->tm)
		run_tag_bw(t, pa, pb, size);
	else if (t->lat)
		run_lat(t, tr, pa, pb, size);
	else
		run_bw(t, tr, pa, pb, size);
	side_close(pa);
	side_close(pb);
}

/* --- --server and --client: one side each, over TCP --- */

/*
 * The client runs a's half of each test (it posts, and measures), the
 * server b's (it receives, replies, or only keeps its device moving). Over
 * the TCP connection, lines of text:
 *   client: HELLO 1 <options>           server: OK (or ERR <why>)
 *   client: FIG <test> <size>           both: INFO <gid> <addr> <rkey> <qpns>
 *   both: READY (tag_bw's server: READY <credit>)
 *   ... the run ...
 *   client: END <count>                 server: ENDACK <its count>
 *   client: RESULT <the figure>         both: DONE
 *   client: BYE
 * The server takes every option from the client, and prints the figures
 * the client sends it.
 */
static void
info_send(const struct pside *s)
{
	char line[CTL_LINE];
	struct pinfo pi;
	int n = 0;

	side_info(s, &pi);
	for (int i = 0; i < 16; i++)
		n += snprintf(line + n, sizeof(line) - n, "%02x", pi.gid.raw[i]);
	n += snprintf(line + n, sizeof(line) - n, " %" PRIx64 " %x ", pi.addr, pi.rkey);
	for (unsigned int i = 0; i < s->nqp && n < (int)sizeof(line) - 16; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%x", i ? "," : "", pi.qpn[i]);
	ctl_send("INFO %s", line);
}

static void
info_recv(struct pside *s)
{
	char line[CTL_LINE], *p;
	const char *v = ctl_expect(line, "INFO");
	struct pinfo *pi = &s->peer;
	unsigned int i;

	memset(pi, 0, sizeof(*pi));
	for (i = 0; i < 16; i++) {
		unsigned int x;

		if (sscanf(v + 2 * i, "%2x", &x) != 1)
			die("INFO: a bad GID");
		pi->gid.raw[i] = (uint8_t)x;
	}
	pi->addr = strtoull(v + 32, &p, 16);
	pi->rkey = (uint32_t)strtoul(p, &p, 16);
	for (i = 0; i < s->nqp; i++) {
		pi->qpn[i] = (uint32_t)strtoul(p + 1, &p, 16);
		if (*p != ',' && !(*p == '\0' && i + 1 == s->nqp))
			die("INFO: %u QPs, not %u", i + 1, s->nqp);
	}
}

/* What the server has ready before the client may send: receives, read_lat's bytes. */
static void
server_prepare(const struct test *t, enum ibv_qp_type tr, struct pside *b, size_t size)
{
	size_t grh = tr == IBV_QPT_UD ? GRH : 0;
	unsigned int nq = b->nqp, rdepth = recv_depth(b);
	size_t slot = RTE_ALIGN_CEIL(size + grh, 64);

	if (t->tm)
		return;
	if (t->lat && t->kind == K_SEND)
		recv_post(b, 0, 0, size + grh, 1);
	if (t->lat && t->kind == K_READ)
		stamp(b->buf, size, REMOTE_STAMP);
	if (!t->lat && t->kind == K_SEND)
		for (unsigned int q = 0; q < (b->srq ? 1u : nq); q++)
			for (unsigned int r = 0; r < rdepth; r++)
				recv_post(b, q, slot_off(r, slot, rdepth), size + grh, WRID(q, r));
}

/* The server's half of a latency test: reply, or keep the device moving, until END. */
static void
lat_server(const struct test *t, enum ibv_qp_type tr, struct pside *b, size_t size)
{
	size_t grh = tr == IBV_QPT_UD ? GRH : 0;
	uint64_t i = 0, n;
	unsigned int idle = 0;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	struct ibv_wc wc[8];

	for (;; idle++) {
		/* idle: look at the connection now and then, never between a message and its reply */
		if ((idle & 4095) == 4095 && ctl_end(&n))
			break;
		if (t->kind == K_SEND) {
			int m = ibv_poll_cq(b->rcq, 1, wc);

			if (m == 0)
				continue;
			if (m < 0 || wc[0].status != IBV_WC_SUCCESS || wc[0].byte_len != size + grh ||
			    (size && !stamped(b->buf + grh, size, i)))
				die("%s %" PRIu64 ": a bad message", t->name, i);
			recv_post(b, 0, 0, size + grh, 1);
			stamp(b->buf + 4096 + grh, size, i);
			wr_fill(&w, &sge, b, 0, K_SEND, 4096 + grh, 0, size, i, true);
			send_post(b, 0, &w);
			wc_wait(b->scq, NULL, &wc[0]);
			i++;
			idle = 0;
		} else if (t->kind == K_WRITE) {
			int m = ibv_poll_cq(b->scq, 8, wc);

			for (int k = 0; k < m; k++)
				if (wc[k].status != IBV_WC_SUCCESS)
					die("completion error: %s", ibv_wc_status_str(wc[k].status));
			if (!stamped(b->buf, size, i))
				continue;
			stamp(b->buf + 4096, size, i);
			wr_fill(&w, &sge, b, 0, K_WRITE, 4096, 0, size, i, true);
			send_post(b, 0, &w);
			i++;
			idle = 0;
		} else {
			ibv_poll_cq(b->rcq, 0, wc);	/* READs and atomics: the engine answers */
		}
	}
	if ((t->kind == K_SEND || t->kind == K_WRITE) && n != i)
		die("%s: the client counted %" PRIu64 " iterations, not %" PRIu64, t->name, n, i);
	ctl_send("ENDACK %" PRIu64, i);
}

/*
 * The server's half of a bandwidth test: receive and replenish until END.
 * RC: until every SEND the client completed arrived. UC and UD: a SEND that
 * found no receive, or a UD datagram the link dropped, never arrives, so
 * what arrived by the time nothing more came for LATE_S is the count.
 */
#define LATE_S	0.05

static void
bw_server(const struct test *t, enum ibv_qp_type tr, struct pside *b, size_t size)
{
	size_t grh = tr == IBV_QPT_UD ? GRH : 0, slot = RTE_ALIGN_CEIL(size + grh, 64);
	unsigned int rdepth = recv_depth(b);
	uint64_t recvd = 0, n = UINT64_MAX;
	unsigned int idle = 0;
	bool sends = t->kind == K_SEND, reliable = tr == IBV_QPT_RC;
	double deadline = 0, last = 0;
	struct ibv_wc wc[64];

	for (;; idle++) {
		int m = ibv_poll_cq(b->rcq, 64, wc);

		for (int i = 0; i < m; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != size + grh)
				die("%s: receive completion %s, %u bytes", t->name,
				    ibv_wc_status_str(wc[i].status), wc[i].byte_len);
			recvd++;
			recv_post(b, WRID_Q(wc[i].wr_id),
				  slot_off(WRID_SEQ(wc[i].wr_id), slot, rdepth), size + grh,
				  wc[i].wr_id);
		}
		if (m > 0)
			idle = 0;
		if (n == UINT64_MAX && (idle & 4095) == 4095 && ctl_end(&n)) {
			deadline = now_s() + STALL_S;
			last = now_s();
		}
		if (n != UINT64_MAX && (!sends || recvd >= n))
			break;
		if (n != UINT64_MAX && !reliable) {
			double now = now_s();

			if (m > 0)
				last = now;
			else if (now - last > LATE_S)
				break;
		}
		if (deadline && now_s() > deadline)
			die("%s: %" PRIu64 " of %" PRIu64 " SENDs arrived", t->name, recvd, n);
	}
	if (sends && reliable && recvd != n)
		die("%s: %" PRIu64 " SENDs arrived, the client completed %" PRIu64, t->name, recvd, n);
	ctl_send("ENDACK %" PRIu64, recvd);
}

/* tag_lat's two halves: the client sends tag i first, the server answers with its tag i. */
static void
tag_lat_remote(const struct test *t, struct pside *s, size_t size, bool server)
{
	uint64_t n = O->iters ? O->iters : 2000, cap = O->duration > 0 ? 1u << 24 : n, i, peer;
	double *us = server ? NULL : samples_alloc(cap), t0 = now_s(), next = t0 + 1;
	unsigned int idle = 0;
	uint64_t got[128];

	for (i = 0; server || (more(i, n, t0) && i < cap); i++) {
		double s0 = now_s();

		if (!server) {
			stamp(s->buf + TM_HDR, size, i);
			tm_send(s, 0, i, size);
			tm_wait_tag(s, NULL, i, size);
		} else {
			int m;

			while ((m = tm_next(s, got, size)) == 0)
				if ((++idle & 4095) == 4095 && ctl_end(&peer))
					goto end;
			if (m > 1 || got[0] != i)
				die("tag_lat: tag %" PRIu64 " came while %" PRIu64 " was awaited", got[0], i);
			idle = 0;
		}
		if (size && !stamped(tm_tagbuf(s, i), size, i))
			die("tag_lat %" PRIu64 ": the tag's buffer does not hold the message", i);
		tm_add(s, i + TM_AHEAD, i + TM_AHEAD + 1, size);
		if (server) {
			stamp(s->buf + TM_HDR, size, i);
			tm_send(s, 0, i, size);
		} else {
			us[i] = (now_s() - s0) * 1e6 / 2;
		}
		TM_WAIT(s, (struct pside *)NULL, size, s->acked == i + 1, "tag_lat: the send completion");
		if (tm_rndv(size))
			TM_WAIT(s, (struct pside *)NULL, size, s->fins == i + 1, "tag_lat: the FIN");
		if (!server)
			progress(t, size, i, t0, &next);
	}
	progress_end(t0);
	peer = remote_end(i, NULL);
	if (peer != i)
		die("tag_lat: the server counted %" PRIu64 " iterations, not %" PRIu64, peer, i);
	print_lat(t, IBV_QPT_RC, size, us, (size_t)i);
	free(us);
	return;
end:
	if (peer != i)
		die("tag_lat: the client counted %" PRIu64 " iterations, not %" PRIu64, peer, i);
	ctl_send("ENDACK %" PRIu64, i);
}

/*
 * tag_bw's client: run_tag_bw's a, the credit (b's tags known posted)
 * WRITTEN by the server into a's buffer at credit_off.
 */
static void
tag_bw_client(const struct test *t, struct pside *a, size_t size, uint64_t credit0)
{
	uint64_t n = O->iters ? O->iters : 20000, quota, sent = 0, got[128], last = 0;
	const volatile uint64_t *credit = (const volatile uint64_t *)(a->buf + a->credit_off);
	bool rndv = tm_rndv(size), dur = O->duration > 0;
	double t0, t_end, next;

	quota = dur ? UINT64_MAX : n;
	t0 = now_s();
	next = t0 + 1;
	t_end = t0;
	for (;;) {
		uint64_t done = rndv ? a->fins : a->acked, c = RTE_MAX(*credit, credit0);

		if (done != last)
			t_end = now_s(), last = done;
		if (dur && quota == UINT64_MAX && now_s() - t0 >= O->duration)
			quota = sent;
		if (sent == quota && done == sent && a->acked == sent)
			break;
		while (sent < quota && sent < c && sent - done < O->depth) {
			tm_send(a, sent, sent, size);
			sent++;
		}
		if (tm_reap(a, got, size) != 0)
			die("tag_bw: a tagged message at the sender");
		progress(t, size, done, t0, &next);
	}
	progress_end(t0);
	if (remote_end(sent, &sw_rndv_fig) != sent)
		die("tag_bw: the server did not complete every tag");
	print_bw(t, IBV_QPT_RC, size, sent, t_end - t0);
}

/* tag_bw's server: complete tags, post new ones, WRITE the credit to the client. */
static void
tag_bw_server(struct pside *b, size_t size)
{
	uint64_t recvd = 0, n = UINT64_MAX, sent_credit = 0, got[128];
	uint64_t *cw = (uint64_t *)(b->buf + b->credit_off);
	unsigned int idle = 0;
	double deadline = 0;

	for (;; idle++) {
		int m = tm_reap(b, got, size);

		if (m > 0) {
			tm_refill(b, got, m, size);
			recvd += m;
			idle = 0;
		}
		if (b->credit > sent_credit && b->credit_out < 4) {
			struct ibv_sge sge = { (uintptr_t)cw, sizeof(*cw), b->mr->lkey };
			struct ibv_send_wr w = { .wr_id = TM_CREDIT_ID, .sg_list = &sge, .num_sge = 1,
						 .opcode = IBV_WR_RDMA_WRITE,
						 .send_flags = IBV_SEND_SIGNALED };

			/* any value the word ever holds is a credit already good */
			*cw = b->credit;
			w.wr.rdma.remote_addr = b->peer.addr + b->credit_off;
			w.wr.rdma.rkey = b->peer.rkey;
			send_post(b, 0, &w);
			b->credit_out++;
			sent_credit = b->credit;
		}
		if (n == UINT64_MAX && (idle & 4095) == 4095 && ctl_end(&n))
			deadline = now_s() + STALL_S;
		if (n != UINT64_MAX && recvd >= n)
			break;
		if (deadline && now_s() > deadline)
			die("tag_bw: %" PRIu64 " of %" PRIu64 " tags completed", recvd, n);
	}
	while (b->credit_out > 0)
		tm_reap(b, got, size);
	ctl_send("ENDACK %" PRIu64 " %" PRIu64, recvd, b->sw_rndv);
}

static void
run_one_remote(const struct test *t, struct ibv_device *dev, size_t size)
{
	enum ibv_qp_type tr = test_transport(t);
	bool server = remote_server;
	char line[CTL_LINE];
	uint64_t credit0 = 0;
	static struct pside s;	/* MAX_QPS QPs: not on the stack */

	test_check(t, size);
	side_setup(&s, t, dev, size, server);
	if (t->tm && t->lat) {
		tm_add(&s, 0, TM_AHEAD, size);
		TM_WAIT(&s, (struct pside *)NULL, size, s.credit == TM_AHEAD, "tag_lat: first tags");
	} else if (t->tm && server) {
		tm_add(&s, 0, s.ntags, size);
		TM_WAIT(&s, (struct pside *)NULL, size, s.credit == s.ntags, "tag_bw: first tags");
	}
	info_send(&s);
	info_recv(&s);
	for (unsigned int i = 0; i < s.nqp; i++)
		qp_connect(&s, i, tr);
	if (server)
		server_prepare(t, tr, &s, size);
	/* both in RTR (and their tags posted) before anything is sent */
	ctl_send("READY %" PRIu64, s.credit);
	credit0 = strtoull(ctl_expect(line, "READY"), NULL, 0);
	if (t->tm && t->lat)
		tag_lat_remote(t, &s, size, server);
	else if (t->tm && server)
		tag_bw_server(&s, size);
	else if (t->tm)
		tag_bw_client(t, &s, size, credit0);
	else if (t->lat && server)
		lat_server(t, tr, &s, size);
	else if (t->lat)
		run_lat(t, tr, &s, NULL, size);
	else if (server)
		bw_server(t, tr, &s, size);
	else
		run_bw(t, tr, &s, NULL, size);
	if (server)
		result_line(ctl_expect(line, "RESULT"));
	ctl_send("DONE");
	ctl_expect(line, "DONE");
	side_close(&s);
}

/* Each test's sizes when none were given: the main ones at two sizes. */
static void
default_sizes(const struct test *t, size_t *s, unsigned int *n)
{
	if (t->kind == K_ATOMIC) {
		s[0] = ATOMIC_SIZE;
		*n = 1;
	} else if (t->tm) {
		/* one eager, one rendezvous (the default --eager-limit is 8 KiB) */
		s[0] = t->lat ? 8 : 64;
		s[1] = 65536;
		*n = 2;
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

static void
print_header(const struct perf_opts *o, const char *role)
{
	if (o->json)
		printf("{\"droce_perf\": {\"progress\": \"%s\", \"loss\": \"%s\", \"depth\": %u, "
		       "\"qps\": %u, \"post_list\": %u, \"cq_mod\": %u, \"inline\": %u, "
		       "\"odp\": %s, \"eager_limit\": %zu, \"slots\": %u, \"td\": %s, \"mode\": \"%s\"},\n"
		       "  \"results\": [\n",
		       o->progress, o->loss ? o->loss : "0", o->depth, o->qps, o->post_list,
		       o->cq_mod, o->inline_size, o->odp ? "true" : "false", o->eager_limit,
		       o->slots ? o->slots : o->depth, o->td ? "true" : "false", role);
	else
		printf("droce-perf: %s progress, loss %s, depth %u, buffers %u, inline %u%s%s%s%s\n",
		       o->progress, o->loss ? o->loss : "0", o->depth, o->slots ? o->slots : o->depth,
		       o->inline_size, o->td ? ", thread domains" : "",
		       o->odp ? ", ODP MRs" : "", strcmp(role, "embedded") ? ", " : "",
		       strcmp(role, "embedded") ? role : "");
	fflush(stdout);
}

static void
print_footer(const struct perf_opts *o)
{
	if (o->json)
		printf("\n  ]\n}\n");
	fflush(stdout);
}

/* The table's column names, when a test's kind differs from the last one's. */
static void
table_header(const struct test *t, int *last)
{
	if (O->json || *last == t->lat || tests_foreach_quiet)
		return;
	if (t->lat)
		printf("%-11s %-3s %8s %9s %9s %9s %9s %9s %9s\n", "test", "", "bytes", "iters",
		       "min us", "p50 us", "p99 us", "p99.9 us", "max us");
	else
		printf("%-11s %-3s %8s %4s %10s %9s %10s %10s\n", "test", "", "bytes", "qps",
		       "msgs", "seconds", "M msg/s", "Gbit/s");
	*last = t->lat;
}

/* Every name of @list known? */
static void
tests_check(const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (test_by_name(p, len) == NULL)
			die("unknown test \"%.*s\" (%s)", (int)len, p, perf_test_names);
		p += len + (p[len] == ',');
	}
}

/* For each test of @list and each of its sizes: @fn. */
static void
tests_foreach(const char *list, void (*fn)(const struct test *t, size_t size, void *arg),
	      void *arg)
{
	int last = -1;

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ","), sz[PERF_MAX_SIZES];
		const struct test *t = test_by_name(p, len);
		unsigned int nsz;

		p += len + (p[len] == ',');
		if (O->nb_sizes) {
			memcpy(sz, O->sizes, sizeof(sz));
			nsz = O->nb_sizes;
		} else {
			default_sizes(t, sz, &nsz);
		}
		table_header(t, &last);
		for (unsigned int i = 0; i < nsz; i++) {
			if (t->kind == K_ATOMIC && i > 0)
				break;	/* an atomic is 8 bytes whatever the size */
			fn(t, sz[i], arg);
		}
	}
}

static const char *
tests_list(const struct perf_opts *o)
{
	return strcmp(o->tests, "main") == 0 ?
		"send_lat,write_lat,read_lat,atomic_lat,send_bw,write_bw,read_bw" : o->tests;
}

static void
local_one(const struct test *t, size_t size, void *arg)
{
	struct ibv_device **d = arg;

	run_one(t, d[0], d[1], size);
}

int
perf_tests_run(struct ibv_device *d0, struct ibv_device *d1, const struct perf_opts *o)
{
	struct ibv_device *d[2] = { d0, d1 };
	const char *list = tests_list(o);

	O = o;
	tests_check(list);
	print_header(o, "embedded");
	tests_foreach(list, local_one, d);
	print_footer(o);
	return 0;
}

/*
 * --threads: the same bandwidth test on every pair of devices at once, one
 * lcore a pair (the main lcore and the workers, in order), each pair moved
 * only by its own lcore (lcore=thread); a line per lcore, then their sum.
 */
struct thr_job {
	const struct test *t;
	size_t size;
	struct ibv_device *d0, *d1;
	struct bw_fig fig;
};

static int
thr_main(void *arg)
{
	struct thr_job *j = arg;

	bw_capture = &j->fig;
	run_one(j->t, j->d0, j->d1, j->size);
	bw_capture = NULL;
	return 0;
}

static void
threads_one(const struct test *t, size_t size, void *arg)
{
	struct thr_job *jobs = arg;
	unsigned int n = 0, lc, i = 1;
	double rate = 0, secs = 0;
	uint64_t msgs = 0;
	char line[256];

	for (n = 0; jobs[n].d0 != NULL; n++) {
		jobs[n].t = t;
		jobs[n].size = size;
		jobs[n].fig = (struct bw_fig){ 0 };
	}
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (i == n)
			break;
		if (rte_eal_remote_launch(thr_main, &jobs[i++], lc) != 0)
			die("cannot launch lcore %u", lc);
	}
	if (i != n)
		die("--threads %u needs %u lcores", n, n);
	thr_main(&jobs[0]);
	rte_eal_mp_wait_lcore();
	for (i = 0; i < n; i++) {
		msgs += jobs[i].fig.msgs;
		secs = RTE_MAX(secs, jobs[i].fig.secs);
		rate += (double)jobs[i].fig.msgs / jobs[i].fig.secs;
	}
	snprintf(line, sizeof(line), "%-11s %-3s %8zu %4u %10" PRIu64 " %9.3f %10.3f %10.3f  "
		 "all %u lcores", t->name, tname(test_transport(t)), size, O->qps * n, msgs, secs,
		 rate / 1e6, rate * (double)size * 8 / 1e9, n);
	result_line(line);
}

int
perf_tests_run_threads(struct ibv_device **devs, unsigned int n, const struct perf_opts *o)
{
	const char *list = tests_list(o);
	struct thr_job *jobs = calloc(n + 1, sizeof(*jobs));

	O = o;
	if (jobs == NULL)
		die("out of memory");
	if (o->json)
		die("--threads prints a table, not JSON");
	tests_check(list);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		const struct test *t = test_by_name(p, len);

		if (t->lat || t->tm)
			die("--threads: bandwidth tests only (send_bw, write_bw, read_bw, ...)");
		p += len + (p[len] == ',');
	}
	for (unsigned int i = 0; i < n; i++) {
		jobs[i].d0 = devs[2 * i];
		jobs[i].d1 = devs[2 * i + 1];
	}
	print_header(o, "embedded");
	tests_foreach(list, threads_one, jobs);
	print_footer(o);
	free(jobs);
	return 0;
}

static void
check_one(const struct test *t, size_t size, void *arg)
{
	test_check(t, size);
}

static void
client_one(const struct test *t, size_t size, void *arg)
{
	ctl_send("FIG %s %zu", t->name, size);
	run_one_remote(t, arg, size);
}

/* The options the server takes from the client: in HELLO, as key=value. */
static void
hello_send(const struct perf_opts *o, const char *list)
{
	char sizes[PERF_MAX_SIZES * 12 + 2] = "-";
	int n = 0;

	for (unsigned int i = 0; i < o->nb_sizes; i++)
		n += snprintf(sizes + n, sizeof(sizes) - n, "%s%zu", i ? "," : "", o->sizes[i]);
	ctl_send("HELLO 1 tests=%s sizes=%s iters=%u duration=%.6f depth=%u qps=%u post_list=%u "
		 "cq_mod=%u inline=%u timeout=%u odp=%d eager=%zu transport=%d json=%d slots=%u td=%d", list, sizes,
		 o->iters, o->duration, o->depth, o->qps, o->post_list, o->cq_mod, o->inline_size,
		 o->qp_timeout, o->odp, o->eager_limit, (int)o->transport, o->json, o->slots, o->td);
}

static void
hello_recv(struct perf_opts *o, char *list, size_t list_len)
{
	char line[CTL_LINE], *save = NULL, *kv;
	const char *v = ctl_expect(line, "HELLO");

	if (strncmp(v, "1 ", 2) != 0)
		die("the client speaks another version: %.20s", v);
	memmove(line, v + 2, strlen(v + 2) + 1);
	for (kv = strtok_r(line, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
		char *val = strchr(kv, '=');

		if (val == NULL)
			die("HELLO: %s", kv);
		*val++ = '\0';
		if (strcmp(kv, "tests") == 0)
			snprintf(list, list_len, "%s", val);
		else if (strcmp(kv, "sizes") == 0 && strcmp(val, "-") == 0)
			o->nb_sizes = 0;
		else if (strcmp(kv, "sizes") == 0 && perf_sizes_parse(o, val, false) != 0)
			die("HELLO: sizes %s", val);
		else if (strcmp(kv, "iters") == 0)
			o->iters = strtoul(val, NULL, 0);
		else if (strcmp(kv, "duration") == 0)
			o->duration = strtod(val, NULL);
		else if (strcmp(kv, "depth") == 0)
			o->depth = strtoul(val, NULL, 0);
		else if (strcmp(kv, "qps") == 0)
			o->qps = strtoul(val, NULL, 0);
		else if (strcmp(kv, "post_list") == 0)
			o->post_list = strtoul(val, NULL, 0);
		else if (strcmp(kv, "cq_mod") == 0)
			o->cq_mod = strtoul(val, NULL, 0);
		else if (strcmp(kv, "inline") == 0)
			o->inline_size = strtoul(val, NULL, 0);
		else if (strcmp(kv, "timeout") == 0)
			o->qp_timeout = strtoul(val, NULL, 0);
		else if (strcmp(kv, "odp") == 0)
			o->odp = atoi(val) != 0;
		else if (strcmp(kv, "eager") == 0)
			o->eager_limit = strtoull(val, NULL, 0);
		else if (strcmp(kv, "transport") == 0)
			o->transport = (enum ibv_qp_type)atoi(val), o->transport_set = true;
		else if (strcmp(kv, "json") == 0)
			o->json = atoi(val) != 0;
		else if (strcmp(kv, "slots") == 0)
			o->slots = strtoul(val, NULL, 0);
		else if (strcmp(kv, "td") == 0)
			o->td = atoi(val) != 0;
	}
	if (o->qps < 1 || o->qps > MAX_QPS || o->depth < 1 || o->depth > 4096 ||
	    o->post_list < 1 || o->post_list > 64 || o->cq_mod < 1 || o->slots > 4096)
		die("HELLO: options out of range");
}

void
perf_tests_check(const struct perf_opts *o, bool remote)
{
	const char *list = tests_list(o);

	O = o;
	remote_mode = remote;
	tests_check(list);
	tests_foreach_quiet = true;
	tests_foreach(list, check_one, NULL);
	tests_foreach_quiet = false;
}

int
perf_tests_remote(struct ibv_device *dev, const struct perf_opts *o, int sock, bool server)
{
	static struct perf_opts ro;
	static char list_buf[512];
	char line[CTL_LINE];

	remote_sock = sock;
	remote_server = server;
	remote_mode = true;
	ro = *o;
	O = &ro;
	if (!server) {
		const char *list = tests_list(o);

		tests_check(list);
		hello_send(o, list);
		ctl_expect(line, "OK");
		print_header(&ro, "client");
		tests_foreach(list, client_one, dev);
		ctl_send("BYE");
		print_footer(&ro);
		return 0;
	}
	hello_recv(&ro, list_buf, sizeof(list_buf));
	tests_check(list_buf);
	ctl_send("OK");
	print_header(&ro, "server");
	int last = -1;

	for (;;) {
		const struct test *t;
		char *sp;

		ctl_recv(line);
		if (strcmp(line, "BYE") == 0)
			break;
		if (strncmp(line, "FIG ", 4) != 0 || (sp = strchr(line + 4, ' ')) == NULL ||
		    (t = test_by_name(line + 4, (size_t)(sp - line - 4))) == NULL)
			die("the client sent \"%.60s\"", line);
		table_header(t, &last);
		run_one_remote(t, dev, strtoull(sp + 1, NULL, 0));
	}
	print_footer(&ro);
	return 0;
}
