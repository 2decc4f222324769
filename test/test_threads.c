/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs called from many threads at once. libibverbs promises it
 * (ibv_alloc_td(3): "By default all verbs objects are safe for multi-threaded
 * access"), so droce must hand every completion to exactly one poller however
 * many threads poll one CQ, and keep every WR of every posting thread.
 *
 *  - 4 RC QPs on droce0 share one send CQ; their peers on droce1 share one
 *    SRQ and one receive CQ. 4 sender threads post SENDs (1..256 bytes) on
 *    their own QP and all 4 poll the shared send CQ (a thread may reap another
 *    thread's completion); 4 receiver threads poll the shared receive CQ and
 *    repost the SRQ WQEs.
 *  - 8 threads (more than the CPUs) post to one QP, a single poller reaps;
 *    the post cost uncontended (1 thread) and contended (8) is printed.
 *  - as the first, the send CQ an extended one (ibv_create_cq_ex) polled by
 *    4 threads with ibv_start_poll / ibv_next_poll / ibv_end_poll.
 *
 * Checked: every send wr_id (thread << 32 | seq) completes exactly once,
 * successfully, on its QP; every receive wr_id (generation << 32 | SRQ slot)
 * completes once per post; every message arrives exactly once with its bytes
 * (length and content follow from thread and seq); the completions of one QP
 * (one posting thread) that one thread polls come in increasing seq order;
 * nothing completes after the last expected completion. Every wait is bounded.
 *
 * Run with --inline (every verbs call of any thread moves the devices) or
 * --lcore (engine lcore).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_test.h"
#include "harness.h"

#define DIM(a)		(sizeof(a) / sizeof((a)[0]))
#define MAXT		8	/* sender threads at most */
#define NQP		4	/* QPs and threads of the shared-CQ cases */
#define NMSG		getenv_u("TT_NMSG", 20000)	/* SENDs per sender thread, shared-CQ cases */
#define DEPTH		32	/* SENDs outstanding per sender thread, shared-CQ cases */
#define MSG_MAX		256	/* message sizes are 1..MSG_MAX */
#define HDR		8	/* seq (LE32), thread, HDR_MAGIC, length (LE16) */
#define HDR_MAGIC	0xd5
#define RSLOTS		512	/* receive buffers (SRQ or RQ WQEs) */
#define CQE		4096
#define POLL_BATCH	16
#define SPIN		getenv_u("TT_SPIN", 1000)
#define WAIT_MS		30000
#define ONE_QP_MSGS	32000	/* SENDs in each run of the one-QP case, over all threads */
#define ONE_QP_INFLIGHT	128	/* SENDs outstanding over all threads of the one-QP case */
#define ONE_QP_WAIT_MS	60000	/* bound of its contended run */

static uint32_t
getenv_u(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);

	return v ? (uint32_t)strtoul(v, NULL, 0) : dflt;
}

/* ------------------------------------------------------------------------- */
/* Failures: any thread records one and every thread stops. */

static struct {
	int stop;		/* __atomic */
	int nerr;		/* __atomic */
	char msg[6][384];
} F;

static void __attribute__((format(printf, 2, 3)))
fail_at(int line, const char *fmt, ...)
{
	int k = __atomic_fetch_add(&F.nerr, 1, __ATOMIC_ACQ_REL);
	va_list ap;

	if (k < (int)DIM(F.msg)) {
		int off = snprintf(F.msg[k], sizeof(F.msg[k]), "%s:%d: ", __FILE__, line);

		va_start(ap, fmt);
		vsnprintf(F.msg[k] + off, sizeof(F.msg[k]) - (size_t)off, fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&F.stop, 1, __ATOMIC_RELEASE);
}

#define FAIL(...) fail_at(__LINE__, __VA_ARGS__)

static bool
stopped(void)
{
	return __atomic_load_n(&F.stop, __ATOMIC_ACQUIRE) != 0;
}

/* ------------------------------------------------------------------------- */
/* Messages: length and bytes follow from (thread, seq). */

static uint32_t
mix(uint32_t t, uint32_t seq)
{
	uint32_t x = (t + 1) * 0x9e3779b1u ^ seq * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	x *= 0x297a2d39u;
	x ^= x >> 15;
	return x;
}

static uint32_t
msg_len(uint32_t t, uint32_t seq)
{
	return 1 + mix(t, seq) % MSG_MAX;
}

/* Messages shorter than HDR are SEND_WITH_IMM, the immediate naming them. */
static uint32_t
msg_imm(uint32_t t, uint32_t seq)
{
	return t << 24 | seq;
}

static void
msg_fill(uint8_t *p, uint32_t t, uint32_t seq)
{
	uint32_t len = msg_len(t, seq), x = mix(t, seq);

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(x >> (i & 3) * 8) ^ (uint8_t)(i * 7);
	if (len >= HDR) {
		p[0] = (uint8_t)seq;
		p[1] = (uint8_t)(seq >> 8);
		p[2] = (uint8_t)(seq >> 16);
		p[3] = (uint8_t)(seq >> 24);
		p[4] = (uint8_t)t;
		p[5] = HDR_MAGIC;
		p[6] = (uint8_t)len;
		p[7] = (uint8_t)(len >> 8);
	}
}

/* The (thread, seq) a received message names and its check: 0, or -1 with @why. */
static int
msg_check(const struct ibv_wc *wc, const uint8_t *p, uint32_t *t, uint32_t *seq,
	  char *why, size_t whylen)
{
	uint8_t exp[MSG_MAX];
	uint32_t len;

	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		uint32_t v = ntohl(wc->imm_data);

		*t = v >> 24;
		*seq = v & 0xffffff;
	} else if (wc->byte_len >= HDR && wc->byte_len <= MSG_MAX && p[5] == HDR_MAGIC) {
		*seq = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		       (uint32_t)p[3] << 24;
		*t = p[4];
	} else {
		snprintf(why, whylen, "neither an immediate nor a header (byte_len %u, bytes "
			 "%02x %02x %02x %02x %02x %02x)", wc->byte_len, p[0], p[1], p[2], p[3],
			 p[4], p[5]);
		return -1;
	}
	if (*t >= MAXT) {
		snprintf(why, whylen, "names thread %u", *t);
		return -1;
	}
	len = msg_len(*t, *seq);
	if (wc->byte_len != len) {
		snprintf(why, whylen, "(thread %u, seq %u): byte_len %u, sent %u", *t, *seq,
			 wc->byte_len, len);
		return -1;
	}
	if ((len < HDR) != !!(wc->wc_flags & IBV_WC_WITH_IMM)) {
		snprintf(why, whylen, "(thread %u, seq %u, %u bytes): %s an immediate", *t, *seq,
			 len, len < HDR ? "without" : "with");
		return -1;
	}
	msg_fill(exp, *t, *seq);
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != exp[i]) {
			snprintf(why, whylen, "(thread %u, seq %u, %u bytes): byte %u is 0x%02x, "
				 "sent 0x%02x", *t, *seq, len, i, p[i], exp[i]);
			return -1;
		}
	return 0;
}

/* Device counters shown when a run fails. */
static const char *const xs_names[] = {
	"cq_overflow", "retransmits", "rnr_naks_sent", "naks_sent", "rx_drop_no_wqe",
	"rx_drop_qp_state", "rx_drop_seq", "rx_dup", "tx_drop_full",
};

/* ------------------------------------------------------------------------- */
/* One run: its objects, configuration and shared tallies. */

struct run_cfg {
	int nqp;		/* 1: every sender posts to one QP; else one QP per sender */
	int nsend;		/* sender threads */
	int npoll;		/* dedicated send-CQ pollers; 0: the senders poll */
	int nrecv;		/* receiver threads */
	uint32_t nmsg;		/* SENDs per sender */
	uint32_t depth;		/* outstanding per sender */
	bool srq;		/* the receive QPs share an SRQ (else one QP, its own RQ) */
	bool ex;		/* the send CQ is an extended one, polled start/next/end */
	uint32_t spin;		/* idle rounds before a worker yields its CPU */
	int wait_ms;
};

static struct {
	struct run_cfg c;
	/* objects, released by teardown */
	struct ibv_context *c0, *c1;
	struct ibv_pd *pd0, *pd1;
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	struct ibv_cq *scq, *s_rcq, *rcq, *r_scq;
	struct ibv_cq_ex *scq_ex;
	struct ibv_srq *srq;
	struct ibv_qp *sqp[MAXT], *rqp[MAXT];
	pthread_t th[3 * MAXT];
	int nth;
	/* tallies, all __atomic */
	uint16_t *sdone;	/* [nsend * nmsg]: completions of each send wr_id */
	uint16_t *rseen;	/* [nsend * nmsg]: arrivals of each message */
	uint32_t slot[RSLOTS];	/* receive slot: post generation << 1 | posted */
	uint32_t posted[MAXT];	/* SENDs posted by each sender */
	uint32_t out[MAXT];	/* and outstanding (decremented by whoever polls) */
	uint64_t post_ns[MAXT];	/* time in ibv_post_send */
	uint64_t scomp, rcomp;	/* completions reaped, send and receive */
	int go;
	uint64_t xs0[2][DIM(xs_names)];	/* device counters at the start */
} M;

static uint64_t
total_msgs(void)
{
	return (uint64_t)M.c.nsend * M.c.nmsg;
}

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int
setup(void)
{
	memset(&F, 0, sizeof(F));
	memset(&M, 0, sizeof(M));
	return 0;
}

static void
teardown(void)
{
	for (int i = 0; i < MAXT; i++) {
		if (M.sqp[i])
			ibv_destroy_qp(M.sqp[i]);
		if (M.rqp[i])
			ibv_destroy_qp(M.rqp[i]);
	}
	if (M.srq)
		ibv_destroy_srq(M.srq);
	if (M.scq)
		ibv_destroy_cq(M.scq);
	if (M.s_rcq)
		ibv_destroy_cq(M.s_rcq);
	if (M.rcq)
		ibv_destroy_cq(M.rcq);
	if (M.r_scq)
		ibv_destroy_cq(M.r_scq);
	if (M.smr)
		ibv_dereg_mr(M.smr);
	if (M.rmr)
		ibv_dereg_mr(M.rmr);
	if (M.pd0)
		ibv_dealloc_pd(M.pd0);
	if (M.pd1)
		ibv_dealloc_pd(M.pd1);
	if (M.c0)
		ibv_close_device(M.c0);
	if (M.c1)
		ibv_close_device(M.c1);
	free(M.sbuf);
	free(M.rbuf);
	free(M.sdone);
	free(M.rseen);
	memset(&M, 0, sizeof(M));
}

/* Receive slot @s posted (again) as generation @gen: wr_id gen << 32 | s. */
static int
post_slot(uint32_t s, uint32_t gen)
{
	struct ibv_sge sge = { (uintptr_t)M.rbuf + (size_t)s * MSG_MAX, MSG_MAX, M.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)gen << 32 | s, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;
	int ret;

	memset(M.rbuf + (size_t)s * MSG_MAX, 0xee, MSG_MAX);
	/* before the post: another thread may reap the completion before it returns */
	__atomic_store_n(&M.slot[s], gen << 1 | 1, __ATOMIC_RELEASE);
	ret = M.srq ? ibv_post_srq_recv(M.srq, &wr, &bad) : ibv_post_recv(M.rqp[0], &wr, &bad);
	if (ret)
		FAIL("ibv_post_%srecv(slot %u, post #%u): %s", M.srq ? "srq_" : "", s, gen,
		     strerror(ret));
	return ret;
}

static uint32_t
nslots(void)
{
	return M.srq ? RSLOTS : RSLOTS / 2;
}

/* Objects of a run: QPs on droce0 sending, connected to QPs on droce1. */
static int
create_run(const struct run_cfg *c)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = RSLOTS, .max_sge = 1 } };
	size_t slen = (size_t)c->nsend * 2 * c->depth * MSG_MAX;
	union ibv_gid g0, g1;

	M.c = *c;
	M.sdone = calloc(total_msgs(), sizeof(*M.sdone));
	M.rseen = calloc(total_msgs(), sizeof(*M.rseen));
	M.c0 = h_open(0);
	M.c1 = h_open(1);
	TEST_ASSERT(M.sdone && M.rseen && M.c0 && M.c1, "calloc / h_open");
	TEST_ASSERT_EQ(ibv_query_gid(M.c0, 1, 0, &g0), 0);
	TEST_ASSERT_EQ(ibv_query_gid(M.c1, 1, 0, &g1), 0);
	M.pd0 = ibv_alloc_pd(M.c0);
	M.pd1 = ibv_alloc_pd(M.c1);
	TEST_ASSERT(M.pd0 && M.pd1, "ibv_alloc_pd: %s", strerror(errno));
	/* each sender's 2 * depth buffers, reused in turn (RC completes in order) */
	M.sbuf = aligned_alloc(4096, slen);
	M.rbuf = aligned_alloc(4096, (size_t)RSLOTS * MSG_MAX);
	TEST_ASSERT(M.sbuf && M.rbuf, "aligned_alloc");
	M.smr = ibv_reg_mr(M.pd0, M.sbuf, slen, IBV_ACCESS_LOCAL_WRITE);
	M.rmr = ibv_reg_mr(M.pd1, M.rbuf, (size_t)RSLOTS * MSG_MAX, IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(M.smr && M.rmr, "ibv_reg_mr: %s", strerror(errno));
	if (c->ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = CQE,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
		};

		M.scq_ex = ibv_create_cq_ex(M.c0, &ca);
		TEST_ASSERT(M.scq_ex != NULL, "ibv_create_cq_ex: %s", strerror(errno));
		M.scq = ibv_cq_ex_to_cq(M.scq_ex);
	} else {
		M.scq = ibv_create_cq(M.c0, CQE, NULL, NULL, 0);
	}
	M.s_rcq = ibv_create_cq(M.c0, 16, NULL, NULL, 0);	/* no receives on droce0 */
	M.rcq = ibv_create_cq(M.c1, CQE, NULL, NULL, 0);
	M.r_scq = ibv_create_cq(M.c1, 16, NULL, NULL, 0);	/* no sends from droce1 */
	TEST_ASSERT(M.scq && M.s_rcq && M.rcq && M.r_scq, "ibv_create_cq: %s", strerror(errno));
	if (c->srq) {
		M.srq = ibv_create_srq(M.pd1, &sa);
		TEST_ASSERT(M.srq != NULL, "ibv_create_srq: %s", strerror(errno));
	}
	for (int q = 0; q < c->nqp; q++) {
		struct ibv_qp_init_attr sq = {
			.send_cq = M.scq, .recv_cq = M.s_rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 256, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct ibv_qp_init_attr rq = {
			.send_cq = M.r_scq, .recv_cq = M.rcq, .srq = M.srq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = M.srq ? 0 : RSLOTS / 2,
				 .max_send_sge = 1, .max_recv_sge = M.srq ? 0 : 1 },
		};
		/*
		 * ACK timeout 20 (~4 s) x 7 retries: this checks threads, not the
		 * retry budget, and many busy threads on 2 CPUs can starve inline
		 * progress for longer than the default 67 ms x 8
		 */
		struct h_qp_opts o = { .type = IBV_QPT_RC, .psn = 1000u * (uint32_t)q + 17,
				       .timeout = 20 };
		struct h_side a = { .ctx = M.c0, .pd = M.pd0, .gid = g0 };
		struct h_side b = { .ctx = M.c1, .pd = M.pd1, .gid = g1 };

		M.sqp[q] = ibv_create_qp(M.pd0, &sq);
		M.rqp[q] = ibv_create_qp(M.pd1, &rq);
		TEST_ASSERT(M.sqp[q] && M.rqp[q], "ibv_create_qp %d: %s", q, strerror(errno));
		a.qp = M.sqp[q];
		b.qp = M.rqp[q];
		TEST_ASSERT(h_connect(&a, &b, &o) == 0 && h_connect(&b, &a, &o) == 0,
			    "connect QP pair %d", q);
	}
	for (uint32_t s = 0; s < nslots(); s++)
		TEST_ASSERT_EQ(post_slot(s, 0), 0);
	return TEST_SUCCESS;
}

/* Workers may run on every CPU, not only on the EAL main lcore they inherit. */
static void
unpin(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * A worker found nothing to do: yield after cfg.spin such rounds in a row.
 * Spinning keeps pollers on both CPUs at once (racing in the CQ) even when
 * the engine lcore shares one of them; yielding at once lets the engine run.
 */
static void
idle(bool moved, uint32_t *rounds)
{
	if (moved) {
		*rounds = 0;
	} else if (++*rounds > M.c.spin) {
		*rounds = 0;
		sched_yield();
	}
}

static void
wait_go(void)
{
	unpin();
	while (!__atomic_load_n(&M.go, __ATOMIC_ACQUIRE) && !stopped())
		sched_yield();
}

/* ------------------------------------------------------------------------- */
/* Send side */

static struct ibv_qp *
qp_of(uint32_t t)
{
	return M.sqp[M.c.nqp == 1 ? 0 : t];
}

static int
post_msg(uint32_t t, uint32_t seq)
{
	uint8_t *p = M.sbuf + ((size_t)t * 2 * M.c.depth + seq % (2 * M.c.depth)) * MSG_MAX;
	uint32_t len = msg_len(t, seq);
	struct ibv_sge sge = { (uintptr_t)p, len, M.smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)t << 32 | seq, .sg_list = &sge, .num_sge = 1,
		.opcode = len < HDR ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(msg_imm(t, seq)),
	}, *bad = NULL;
	uint64_t t0;
	int ret;

	msg_fill(p, t, seq);
	/* counted before the post: its completion may be reaped before it returns */
	__atomic_store_n(&M.posted[t], seq + 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&M.out[t], 1, __ATOMIC_ACQ_REL);
	t0 = now_ns();
	ret = ibv_post_send(qp_of(t), &wr, &bad);
	M.post_ns[t] += now_ns() - t0;
	if (ret)
		FAIL("ibv_post_send(thread %u, seq %u, %u outstanding): %s", t, seq,
		     __atomic_load_n(&M.out[t], __ATOMIC_RELAXED), strerror(ret));
	return ret;
}

/* One send completion, whoever reaped it; @last: the seq this poller last saw per thread. */
static void
send_done(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t qp_num,
	  int64_t *last)
{
	uint32_t t = (uint32_t)(wr_id >> 32), seq = (uint32_t)wr_id;
	uint16_t n;

	if (t >= (uint32_t)M.c.nsend || seq >= M.c.nmsg) {
		FAIL("send completion with a wr_id never posted: 0x%016" PRIx64 " (status %s, "
		     "qp_num 0x%x)", wr_id, ibv_wc_status_str(st), qp_num);
		return;
	}
	n = __atomic_add_fetch(&M.sdone[(size_t)t * M.c.nmsg + seq], 1, __ATOMIC_ACQ_REL);
	if (n != 1) {
		FAIL("send wr_id 0x%016" PRIx64 " (thread %u, seq %u) completed %u times "
		     "(status %s)", wr_id, t, seq, n, ibv_wc_status_str(st));
		return;
	}
	if (seq >= __atomic_load_n(&M.posted[t], __ATOMIC_ACQUIRE)) {
		FAIL("send wr_id 0x%016" PRIx64 " completed before it was posted", wr_id);
		return;
	}
	if (st != IBV_WC_SUCCESS || op != IBV_WC_SEND || qp_num != qp_of(t)->qp_num) {
		FAIL("send wr_id 0x%016" PRIx64 " (thread %u, seq %u): status %s (%d), opcode %d, "
		     "qp_num 0x%x (expected success, IBV_WC_SEND, 0x%x)", wr_id, t, seq,
		     ibv_wc_status_str(st), st, op, qp_num, qp_of(t)->qp_num);
		return;
	}
	if ((int64_t)seq <= last[t]) {
		FAIL("send completions of thread %u out of order: one poller reaped seq %u after "
		     "seq %" PRId64, t, seq, last[t]);
		return;
	}
	last[t] = seq;
	__atomic_fetch_sub(&M.out[t], 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&M.scomp, 1, __ATOMIC_ACQ_REL);
}

/* Up to @max completions of the extended send CQ: how many, -1 on error. */
static int
poll_ex(int max, int64_t *last)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int n = 0, ret = ibv_start_poll(M.scq_ex, &attr);

	if (ret == ENOENT)
		return 0;	/* man ibv_create_cq_ex: no ibv_end_poll then */
	if (ret) {
		FAIL("ibv_start_poll: %d", ret);
		return -1;
	}
	do {
		uint64_t wr_id = M.scq_ex->wr_id;
		enum ibv_wc_status st = M.scq_ex->status;
		uint32_t qpn = ibv_wc_read_qp_num(M.scq_ex);

		(void)ibv_wc_read_byte_len(M.scq_ex);
		send_done(wr_id, st, ibv_wc_read_opcode(M.scq_ex), qpn, last);
		n++;
	} while (n < max && (ret = ibv_next_poll(M.scq_ex)) == 0);
	ibv_end_poll(M.scq_ex);
	if (ret != 0 && ret != ENOENT) {
		FAIL("ibv_next_poll: %d", ret);
		return -1;
	}
	return n;
}

/* Reap send completions: how many, -1 on error. */
static int
reap_sends(int64_t *last)
{
	struct ibv_wc wc[POLL_BATCH];
	int n;

	if (M.c.ex)
		return poll_ex(POLL_BATCH, last);
	n = ibv_poll_cq(M.scq, POLL_BATCH, wc);
	if (n < 0) {
		FAIL("ibv_poll_cq(send CQ): %d", n);
		return -1;
	}
	for (int i = 0; i < n; i++)
		send_done(wc[i].wr_id, wc[i].status, wc[i].opcode, wc[i].qp_num, last);
	return n;
}

static bool
sends_done(void)
{
	return __atomic_load_n(&M.scomp, __ATOMIC_ACQUIRE) >= total_msgs();
}

/* A sender: posts its SENDs, at most depth outstanding, and (without pollers) reaps any. */
static void *
sender(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg, rounds = 0;
	int64_t last[MAXT];

	for (int i = 0; i < MAXT; i++)
		last[i] = -1;
	wait_go();
	while (!stopped() && !sends_done()) {
		bool moved = false;
		uint32_t seq = M.posted[t];

		while (seq < M.c.nmsg && __atomic_load_n(&M.out[t], __ATOMIC_ACQUIRE) < M.c.depth) {
			if (post_msg(t, seq++) != 0)
				return NULL;
			moved = true;
		}
		if (M.c.npoll == 0) {
			int n = reap_sends(last);

			if (n < 0)
				return NULL;
			moved |= n > 0;
		} else if (seq == M.c.nmsg) {
			break;		/* all posted, the pollers reap */
		}
		idle(moved, &rounds);
	}
	return NULL;
}

static void *
poller(void *arg)
{
	int64_t last[MAXT];
	uint32_t rounds = 0;

	(void)arg;
	for (int i = 0; i < MAXT; i++)
		last[i] = -1;
	wait_go();
	while (!stopped() && !sends_done()) {
		int n = reap_sends(last);

		if (n < 0)
			break;
		idle(n > 0, &rounds);
	}
	return NULL;
}

/* ------------------------------------------------------------------------- */
/* Receive side */

static int
qp_index(uint32_t qp_num)
{
	for (int q = 0; q < M.c.nqp; q++)
		if (M.rqp[q]->qp_num == qp_num)
			return q;
	return -1;
}

static void
recv_done(const struct ibv_wc *wc, int64_t *last)
{
	uint32_t s = (uint32_t)wc->wr_id, gen = (uint32_t)(wc->wr_id >> 32);
	uint32_t st = gen << 1 | 1, t, seq;
	char why[200];
	uint16_t n;
	int q;

	if (s >= nslots()) {
		FAIL("receive completion with a wr_id never posted: 0x%016" PRIx64 " (status %s)",
		     (uint64_t)wc->wr_id, ibv_wc_status_str(wc->status));
		return;
	}
	/* the slot's post #gen is taken by this completion and no other */
	if (!__atomic_compare_exchange_n(&M.slot[s], &st, gen << 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		FAIL("receive wr_id 0x%016" PRIx64 " (slot %u, post #%u) completed %s: the slot is "
		     "at post #%u, %s", (uint64_t)wc->wr_id, s, gen,
		     (st >> 1) < gen ? "before it was posted" : "twice or more", st >> 1,
		     st & 1 ? "posted" : "completed");
		return;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV) {
		FAIL("receive wr_id 0x%016" PRIx64 ": status %s (%d), opcode %d",
		     (uint64_t)wc->wr_id, ibv_wc_status_str(wc->status), wc->status, wc->opcode);
		return;
	}
	q = qp_index(wc->qp_num);
	if (q < 0) {
		FAIL("receive wr_id 0x%016" PRIx64 " on qp_num 0x%x, none of ours",
		     (uint64_t)wc->wr_id, wc->qp_num);
		return;
	}
	if (msg_check(wc, M.rbuf + (size_t)s * MSG_MAX, &t, &seq, why, sizeof(why)) != 0) {
		FAIL("message in slot %u on QP %d: %s", s, q, why);
		return;
	}
	if (t >= (uint32_t)M.c.nsend || seq >= M.c.nmsg || (M.c.nqp > 1 && t != (uint32_t)q)) {
		FAIL("message (thread %u, seq %u) on QP %d: never sent there", t, seq, q);
		return;
	}
	n = __atomic_add_fetch(&M.rseen[(size_t)t * M.c.nmsg + seq], 1, __ATOMIC_ACQ_REL);
	if (n != 1) {
		FAIL("message (thread %u, seq %u) received %u times (this time in slot %u)",
		     t, seq, n, s);
		return;
	}
	/* RC delivers in order: what one thread reaps of one sender increases */
	if ((int64_t)seq <= last[t]) {
		FAIL("messages of thread %u out of order: one receiver reaped seq %u after seq %"
		     PRId64, t, seq, last[t]);
		return;
	}
	last[t] = seq;
	if (post_slot(s, gen + 1) != 0)
		return;
	__atomic_fetch_add(&M.rcomp, 1, __ATOMIC_ACQ_REL);
}

static bool
recvs_done(void)
{
	return __atomic_load_n(&M.rcomp, __ATOMIC_ACQUIRE) >= total_msgs();
}

static void *
receiver(void *arg)
{
	struct ibv_wc wc[POLL_BATCH];
	int64_t last[MAXT];
	uint32_t rounds = 0;

	(void)arg;
	for (int i = 0; i < MAXT; i++)
		last[i] = -1;
	wait_go();
	while (!stopped() && !recvs_done()) {
		int n = ibv_poll_cq(M.rcq, POLL_BATCH, wc);

		if (n < 0) {
			FAIL("ibv_poll_cq(receive CQ): %d", n);
			break;
		}
		for (int i = 0; i < n; i++)
			recv_done(&wc[i], last);
		idle(n > 0, &rounds);
	}
	return NULL;
}

/* ------------------------------------------------------------------------- */
/* Running and judging */

static int
spawn(void *(*fn)(void *), uintptr_t arg)
{
	int ret = pthread_create(&M.th[M.nth], NULL, fn, (void *)arg);

	if (ret) {
		FAIL("pthread_create: %s", strerror(ret));
		return -1;
	}
	M.nth++;
	return 0;
}

/* After a failure: device counters, QP states, async events, what the CQs still hold. */
static void
print_diag(void)
{
	static const char *const qps[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	struct ibv_context *ctx[2] = { M.c0, M.c1 };
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int left;

	for (int d = 0; d < 2; d++) {
		char dev[8];

		snprintf(dev, sizeof(dev), "droce%d", d);
		fprintf(stderr, "  %s:", dev);
		for (size_t i = 0; i < DIM(xs_names); i++)
			fprintf(stderr, " %s +%" PRIu64, xs_names[i],
				h_xstat(dev, xs_names[i]) - M.xs0[d][i]);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  QP states (droce0/droce1):");
	for (int q = 0; q < M.c.nqp; q++) {
		struct ibv_qp_attr a[2];
		struct ibv_qp_init_attr ia;

		memset(a, 0, sizeof(a));
		ibv_query_qp(M.sqp[q], &a[0], IBV_QP_STATE, &ia);
		ibv_query_qp(M.rqp[q], &a[1], IBV_QP_STATE, &ia);
		fprintf(stderr, " %s/%s", a[0].qp_state < DIM(qps) ? qps[a[0].qp_state] : "?",
			a[1].qp_state < DIM(qps) ? qps[a[1].qp_state] : "?");
	}
	fprintf(stderr, "\n");
	for (int d = 0; d < 2; d++) {
		fcntl(ctx[d]->async_fd, F_SETFL, fcntl(ctx[d]->async_fd, F_GETFL) | O_NONBLOCK);
		while (ibv_get_async_event(ctx[d], &ev) == 0) {
			fprintf(stderr, "  droce%d async event: %s\n", d,
				ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	}
	/* one thread, the others stopped: what is left is there to poll (a ring
	 * corrupted by racing pollers may seem to hold anything: at most 2 * CQE) */
	left = 0;
	if (M.c.ex) {
		struct ibv_poll_cq_attr attr = { 0 };

		if (ibv_start_poll(M.scq_ex, &attr) == 0) {
			do
				left++;
			while (left < 2 * CQE && ibv_next_poll(M.scq_ex) == 0);
			ibv_end_poll(M.scq_ex);
		}
	} else {
		while (left < 2 * CQE && ibv_poll_cq(M.scq, 1, &wc) == 1)
			left++;
	}
	fprintf(stderr, "  left in the send CQ: %d;", left);
	left = 0;
	while (left < 2 * CQE && ibv_poll_cq(M.rcq, 1, &wc) == 1)
		left++;
	fprintf(stderr, " in the receive CQ: %d\n", left);
}

static void
print_counts(void)
{
	fprintf(stderr, "  counts: send completions %" PRIu64 ", receives %" PRIu64 " of %" PRIu64
		" each;", __atomic_load_n(&M.scomp, __ATOMIC_ACQUIRE),
		__atomic_load_n(&M.rcomp, __ATOMIC_ACQUIRE), total_msgs());
	for (int t = 0; t < M.c.nsend; t++)
		fprintf(stderr, " thread %d posted %u (%u outstanding)%s", t,
			__atomic_load_n(&M.posted[t], __ATOMIC_ACQUIRE),
			__atomic_load_n(&M.out[t], __ATOMIC_ACQUIRE), t + 1 < M.c.nsend ? "," : "\n");
}

static int
report(void)
{
	int n = __atomic_load_n(&F.nerr, __ATOMIC_ACQUIRE);

	if (n == 0)
		return TEST_SUCCESS;
	for (int i = 0; i < n && i < (int)DIM(F.msg); i++)
		fprintf(stderr, "  FAIL %s\n", F.msg[i]);
	if (n > (int)DIM(F.msg))
		fprintf(stderr, "  (%d failures in all)\n", n);
	print_counts();
	print_diag();
	return TEST_FAILED;
}

/* Nothing more on either CQ for @ms (progress is driven meanwhile). */
static void
expect_quiet(int ms)
{
	uint64_t end = h_now_ms() + (uint64_t)ms;
	struct ibv_wc wc;

	while (h_now_ms() < end && !stopped()) {
		int n;

		if (M.c.ex) {
			struct ibv_poll_cq_attr attr = { 0 };

			if (ibv_start_poll(M.scq_ex, &attr) == 0) {
				FAIL("send completion after all %" PRIu64 " expected: wr_id 0x%016"
				     PRIx64 ", status %s", total_msgs(), M.scq_ex->wr_id,
				     ibv_wc_status_str(M.scq_ex->status));
				ibv_end_poll(M.scq_ex);
			}
		} else if ((n = ibv_poll_cq(M.scq, 1, &wc)) != 0) {
			FAIL("send completion after all %" PRIu64 " expected (%d): wr_id 0x%016" PRIx64
			     ", status %s", total_msgs(), n, (uint64_t)wc.wr_id,
			     ibv_wc_status_str(wc.status));
		}
		if ((n = ibv_poll_cq(M.rcq, 1, &wc)) != 0)
			FAIL("receive completion after all %" PRIu64 " expected (%d): wr_id 0x%016"
			     PRIx64 ", status %s", total_msgs(), n, (uint64_t)wc.wr_id,
			     ibv_wc_status_str(wc.status));
		usleep(1000);
	}
}

/*
 * Runs @c's threads (objects created) until every SEND completed and arrived,
 * a failure or the deadline; then every wr_id and message exactly once and
 * nothing more. @ms: the run's wall time.
 */
static int
run(double *ms)
{
	uint64_t t0, deadline;
	bool timed_out = false;
	int rc;

	for (int t = 0; t < M.c.nsend; t++)
		spawn(sender, (uintptr_t)t);
	for (int i = 0; i < M.c.npoll; i++)
		spawn(poller, 0);
	for (int i = 0; i < M.c.nrecv; i++)
		spawn(receiver, 0);
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < DIM(xs_names); i++)
			M.xs0[d][i] = h_xstat(d ? "droce1" : "droce0", xs_names[i]);
	t0 = now_ns();
	deadline = h_now_ms() + (uint64_t)M.c.wait_ms;
	__atomic_store_n(&M.go, 1, __ATOMIC_RELEASE);
	while (!stopped() && !(sends_done() && recvs_done())) {
		if (h_now_ms() > deadline) {
			timed_out = true;
			FAIL("not done within %d ms", M.c.wait_ms);
			break;
		}
		usleep(2000);
	}
	for (int i = 0; i < M.nth; i++)
		pthread_join(M.th[i], NULL);
	*ms = (double)(now_ns() - t0) / 1e6;
	M.nth = 0;
	if (!timed_out && !stopped()) {
		/* all counted: so each exactly once; check it anyway, then that none is extra */
		for (uint64_t i = 0; i < total_msgs() && !stopped(); i++)
			if (M.sdone[i] != 1 || M.rseen[i] != 1)
				FAIL("thread %" PRIu64 " seq %" PRIu64 ": %u send completions, "
				     "received %u times", i / M.c.nmsg, i % M.c.nmsg, M.sdone[i],
				     M.rseen[i]);
		expect_quiet(50);
	}
	rc = report();
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Cases */

static int
shared_send_cq(bool ex)
{
	struct run_cfg c = { .nqp = NQP, .nsend = NQP, .npoll = 0, .nrecv = ex ? 1 : NQP,
			     .nmsg = NMSG, .depth = DEPTH, .srq = true, .ex = ex,
			     .spin = SPIN, .wait_ms = WAIT_MS };
	double ms;
	int rc;

	rc = create_run(&c);
	if (rc)
		return rc;
	rc = run(&ms);
	printf("# %d QPs, one %ssend CQ polled by %d threads, one SRQ and receive CQ polled by "
	       "%d: %" PRIu64 " SENDs in %.2f s (%" PRIu64 " send completions, %" PRIu64
	       " receives)\n", c.nqp, ex ? "extended " : "", c.nsend, c.nrecv, total_msgs(),
	       ms / 1000, M.scomp, M.rcomp);
	return rc;
}

static int
test_shared_send_cq_polled_by_many_threads(void)
{
	return shared_send_cq(false);
}

static int
test_extended_cq_polled_by_many_threads(void)
{
	return shared_send_cq(true);
}

/* One run of the one-QP case: @nsend posters share ONE_QP_MSGS SENDs. */
static int
one_qp_run(int nsend, int wait_ms, double *ms, double *post_ns)
{
	struct run_cfg c = { .nqp = 1, .nsend = nsend, .npoll = 1, .nrecv = 1,
			     .nmsg = ONE_QP_MSGS / (uint32_t)nsend,
			     .depth = ONE_QP_INFLIGHT / (uint32_t)nsend, .wait_ms = wait_ms };
	uint64_t ns = 0;
	int rc;

	rc = create_run(&c);
	if (rc == 0)
		rc = run(ms);
	for (int t = 0; t < nsend; t++)
		ns += M.post_ns[t];
	*post_ns = (double)ns / (double)total_msgs();
	teardown();
	return rc;
}

static int
test_many_threads_post_one_qp(void)
{
	double ms1, ms8, ns1, ns8;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	TEST_ASSERT_EQ(one_qp_run(1, WAIT_MS, &ms1, &ns1), TEST_SUCCESS);
	printf("# one QP, 1 posting thread: %u SENDs in %.2f s, ibv_post_send %.0f ns on "
	       "average\n", ONE_QP_MSGS, ms1 / 1000, ns1);
	setup();
	TEST_ASSERT_EQ(one_qp_run(MAXT, ONE_QP_WAIT_MS, &ms8, &ns8), TEST_SUCCESS);
	printf("# one QP, %d posting threads on %ld CPUs: %u SENDs in %.2f s, ibv_post_send "
	       "%.0f ns on average (%.1fx uncontended)\n", MAXT, ncpu, ONE_QP_MSGS, ms8 / 1000,
	       ns8, ns1 > 0 ? ns8 / ns1 : 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_shared_send_cq_polled_by_many_threads),
	TEST_CASE(test_many_threads_post_one_qp),
	TEST_CASE(test_extended_cq_polled_by_many_threads),
};

int
main(int argc, char **argv)
{
	if (h_init(argc, argv) != 0) {
		fprintf(stderr, "h_init failed\n");
		return 1;
	}
	return DROCE_TEST_MAIN("threads", cases, setup, teardown);
}
