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
 *  - as the first, while 2 more threads create and destroy objects on both
 *    devices as long as the traffic runs (at least CHURN_MIN rounds each):
 *    a PD, an SRQ, an MR over a fresh buffer, a send CQ and a receive CQ
 *    (with a completion channel every other round), an RC or UD QP and an
 *    AH on each device; most rounds connect the two QPs and pass one SEND
 *    (to the SRQ or the QP's RQ), its completions and bytes checked, the
 *    receive awaited on the channel when there is one. Every create
 *    succeeds, every destroy returns 0, and the devices hold as many
 *    objects of each kind afterwards (droce_dev_objects_get) as before.
 *  - as the first, the send CQ has a completion channel and 2 threads wait
 *    on it (ibv_get_cq_event, ibv_ack_cq_events, ibv_req_notify_cq, then
 *    ibv_poll_cq until empty before waiting again); the senders do not poll.
 *    Run twice, as O_NONBLOCK belongs to the channel's one fd: blocking,
 *    both waiters asleep in ibv_get_cq_event; then O_NONBLOCK, one waiter in
 *    poll(2) on the fd, the other calling ibv_get_cq_event until EAGAIN. A
 *    waiter that leaves posts a zero-length RDMA WRITE (a sentinel) whose
 *    completion event wakes the next. No completion consumed for STALL_MS
 *    while some are outstanding, or a waiter still asleep STALL_MS after the
 *    last completion, is a lost wake-up and fails with the counters.
 *
 * Checked: every send wr_id (thread << 32 | seq) completes exactly once,
 * successfully, on its QP; every receive wr_id (generation << 32 | SRQ slot)
 * completes once per post; every message arrives exactly once with its bytes
 * (length and content follow from thread and seq); the completions of one QP
 * (one posting thread) that one thread polls come in increasing seq order;
 * nothing completes after the last expected completion. Every wait is bounded.
 *
 * Run with --inline (every verbs call of any thread moves the devices) or
 * --lcore (engine lcore). TT_NMSG sets the SENDs per sender of the shared-CQ
 * cases (devtools/tsan --quick: 3000); TT_SPIN the idle rounds before a
 * worker yields (4294967295: never).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
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

#include "droce.h"
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
#define WAIT_MS		120000	/* bound of a run (TT_SPIN=4294967295 on 2 CPUs: up to ~30 s) */
#define ONE_QP_MSGS	32000	/* SENDs in each run of the one-QP case, over all threads */
#define ONE_QP_INFLIGHT	128	/* SENDs outstanding over all threads of the one-QP case */
#define ONE_QP_WAIT_MS	60000	/* bound of its contended run */
#define NCHURN		2	/* threads creating and destroying objects */
#define CHURN_MIN	16	/* rounds of each at least: every variant of churn_round */
#define CHURN_WC_MS	10000	/* bound on one churned SEND's completions */
#define NWAIT		2	/* threads waiting on the send CQ's completion channel */
#define STALL_MS	10000	/* nothing consumed for this long: a lost wake-up */
#define SENTINEL	UINT64_MAX	/* wr_id of the WRITEs that wake waiters at the end */
#define GRH		40	/* UD receive buffers begin with it */

static uint32_t
getenv_u(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);

	return v ? (uint32_t)strtoul(v, NULL, 0) : dflt;
}

/* @fd made O_NONBLOCK: 0 or -1. */
static int
nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
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
	enum {
		WAIT_NONE,	/* send-CQ pollers poll */
		WAIT_BLOCK,	/* they sleep in ibv_get_cq_event on its channel */
		WAIT_FD,	/* the channel's fd O_NONBLOCK: poll(2), or EAGAIN */
	} wait;
	int nchurn;		/* threads creating and destroying objects meanwhile */
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
	struct ibv_comp_channel *sch;	/* of scq (cfg.wait) */
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
	uint64_t events;	/* completion events taken by the waiters */
	uint32_t waiters;	/* waiters not yet gone */
	uint32_t sentinels[2];	/* posted, reaped */
	uint32_t churn[MAXT][3];	/* per churner: rounds, with a SEND, begun during traffic */
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
	if (M.sch)
		ibv_destroy_comp_channel(M.sch);
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
		if (c->wait) {
			M.sch = ibv_create_comp_channel(M.c0);
			TEST_ASSERT(M.sch != NULL, "ibv_create_comp_channel: %s", strerror(errno));
			if (c->wait == WAIT_FD)
				TEST_ASSERT_EQ(nonblock(M.sch->fd), 0);
		}
		M.scq = ibv_create_cq(M.c0, CQE, NULL, M.sch, 0);
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

/* A poller's last seq seen per sending thread: none yet. */
static void
last_init(int64_t *last)
{
	for (int i = 0; i < MAXT; i++)
		last[i] = -1;
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

/* The signaled SEND of message (@t, @seq), written to @p (in the MR of @lkey). */
static void
msg_wr(struct ibv_send_wr *wr, struct ibv_sge *sge, uint8_t *p, uint32_t lkey, uint32_t t,
       uint32_t seq)
{
	uint32_t len = msg_len(t, seq);

	msg_fill(p, t, seq);
	*sge = (struct ibv_sge){ (uintptr_t)p, len, lkey };
	*wr = (struct ibv_send_wr){
		.wr_id = (uint64_t)t << 32 | seq, .sg_list = sge, .num_sge = 1,
		.opcode = len < HDR ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(msg_imm(t, seq)),
	};
}

static int
post_msg(uint32_t t, uint32_t seq)
{
	uint8_t *p = M.sbuf + ((size_t)t * 2 * M.c.depth + seq % (2 * M.c.depth)) * MSG_MAX;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	uint64_t t0;
	int ret;

	msg_wr(&wr, &sge, p, M.smr->lkey, t, seq);
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

	if (wr_id == SENTINEL && M.c.wait) {
		if (st != IBV_WC_SUCCESS || op != IBV_WC_RDMA_WRITE)
			FAIL("sentinel WRITE: status %s (%d), opcode %d", ibv_wc_status_str(st), st,
			     op);
		__atomic_fetch_add(&M.sentinels[1], 1, __ATOMIC_ACQ_REL);
		return;
	}
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

	last_init(last);
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
	last_init(last);
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
/* Completion events */

/* ibv_get_cq_event: 1 with *cq, 0 if the fd is O_NONBLOCK and none is queued, -1 failed. */
static int
get_event(struct ibv_comp_channel *ch, struct ibv_cq **cq)
{
	void *ctx;

	if (ibv_get_cq_event(ch, cq, &ctx) == 0)
		return 1;
	if (errno == EAGAIN)
		return 0;
	FAIL("ibv_get_cq_event: %s", strerror(errno));
	return -1;
}

/*
 * Up to @ms in poll(2) on the O_NONBLOCK fd of @ch, then get_event: 1 with
 * *cq, 0 if none came (or another thread took it first), -1 failed.
 */
static int
poll_event(struct ibv_comp_channel *ch, int ms, struct ibv_cq **cq)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	if (n < 0 && errno != EINTR) {
		FAIL("poll(completion channel fd): %s", strerror(errno));
		return -1;
	}
	return n > 0 ? get_event(ch, cq) : 0;
}

/* A zero-length RDMA WRITE on QP 0: its completion fires the armed send CQ's event. */
static void
post_sentinel(void)
{
	struct ibv_send_wr wr = { .wr_id = SENTINEL, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	int ret;

	/* counted before the post, as post_msg does */
	__atomic_fetch_add(&M.sentinels[0], 1, __ATOMIC_ACQ_REL);
	ret = ibv_post_send(M.sqp[0], &wr, &bad);
	if (ret) {
		__atomic_fetch_sub(&M.sentinels[0], 1, __ATOMIC_ACQ_REL);
		if (!stopped())
			FAIL("ibv_post_send(sentinel WRITE): %s", strerror(ret));
	}
}

/*
 * A send-CQ waiter (cfg.wait): reaps until the CQ is empty, then sleeps until
 * the channel's event, acks it, re-arms and reaps again. Arming comes before
 * that poll, so a completion the poll misses fires an event. Waiter 0 of
 * WAIT_FD sleeps in poll(2); the others call ibv_get_cq_event (at once back
 * with EAGAIN under WAIT_FD).
 */
static void *
waiter(void *arg)
{
	bool in_poll = M.c.wait == WAIT_FD && (uintptr_t)arg == 0;
	struct ibv_cq *cq = NULL;
	uint32_t rounds = 0;
	int64_t last[MAXT];
	int n;

	last_init(last);
	wait_go();
	if (ibv_req_notify_cq(M.scq, 0) != 0)
		FAIL("ibv_req_notify_cq(send CQ) failed");
	while (!stopped()) {
		while ((n = reap_sends(last)) > 0)
			;
		if (n < 0 || sends_done())
			break;
		n = in_poll ? poll_event(M.sch, 100, &cq) : get_event(M.sch, &cq);
		if (n < 0)
			break;
		if (n == 0) {
			idle(false, &rounds);
			continue;
		}
		if (cq != M.scq) {
			FAIL("completion event for CQ %p, the send CQ is %p", (void *)cq, (void *)M.scq);
			break;
		}
		__atomic_fetch_add(&M.events, 1, __ATOMIC_ACQ_REL);
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(M.scq, 0) != 0) {
			FAIL("ibv_req_notify_cq(send CQ) failed");
			break;
		}
	}
	/* another waiter may sleep on the armed CQ: wake it */
	post_sentinel();
	__atomic_fetch_sub(&M.waiters, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

/* cfg.wait: completions outstanding that nobody consumes for STALL_MS are a lost wake-up. */
static void
check_stall(uint64_t *seen, uint64_t *since)
{
	uint64_t n = __atomic_load_n(&M.scomp, __ATOMIC_ACQUIRE), now = h_now_ms();

	if (n != *seen || sends_done()) {
		*seen = n;
		*since = now;
	} else if (now - *since > STALL_MS) {
		FAIL("lost wake-up: no send completion consumed for %d ms (%" PRIu64 " of %" PRIu64
		     " consumed, %" PRIu64 " completion events taken, %u of %d waiters left)",
		     STALL_MS, n, total_msgs(), __atomic_load_n(&M.events, __ATOMIC_ACQUIRE),
		     __atomic_load_n(&M.waiters, __ATOMIC_ACQUIRE), M.c.npoll);
	}
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
	last_init(last);
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

static bool
traffic_done(void)
{
	return sends_done() && recvs_done();
}

/* ------------------------------------------------------------------------- */
/* Objects created and destroyed while the traffic runs */

/* One device's objects in a churn round, every one fresh. */
struct churn_side {
	struct h_side s;	/* MR over a fresh buffer, CQs and QP (h_side_create); s.pd is pd */
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct ibv_comp_channel *ch;	/* of s.rcq, or NULL */
	struct ibv_ah *ah;	/* to the other device */
};

static void
destroyed(int line, const char *what, int ret)
{
	if (ret != 0)
		fail_at(line, "%s: %d (%s)", what, ret, strerror(ret));
}

/* A destroy verb on @obj unless NULL: it must return 0. */
#define DESTROY(fn, obj) do { \
	if ((obj) != NULL) \
		destroyed(__LINE__, #fn, fn(obj)); \
} while (0)

static void
churn_side_destroy(struct churn_side *c)
{
	DESTROY(ibv_destroy_qp, c->s.qp);
	DESTROY(ibv_destroy_ah, c->ah);
	DESTROY(ibv_destroy_srq, c->srq);
	DESTROY(ibv_destroy_cq, c->s.scq);
	DESTROY(ibv_destroy_cq, c->s.rcq);
	DESTROY(ibv_destroy_comp_channel, c->ch);
	DESTROY(ibv_dereg_mr, c->s.mr);
	DESTROY(ibv_dealloc_pd, c->pd);
	free(c->s.buf);
}

/*
 * @c's objects on @ctx: a PD, an SRQ (the QP's receive queue when @use_srq),
 * with @chan a completion channel for the receive CQ, then h_side_create's.
 * 0, or -1 with the failure recorded (churn_side_destroy frees what exists).
 */
static int
churn_side_create(struct churn_side *c, struct ibv_context *ctx, struct h_qp_opts *o,
		  bool use_srq, bool chan)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	const char *dev = ibv_get_device_name(ctx->device);

	c->pd = ibv_alloc_pd(ctx);
	if (c->pd == NULL) {
		FAIL("%s: ibv_alloc_pd: %s", dev, strerror(errno));
		return -1;
	}
	c->srq = ibv_create_srq(c->pd, &sa);
	if (c->srq == NULL) {
		FAIL("%s: ibv_create_srq: %s", dev, strerror(errno));
		return -1;
	}
	if (chan) {
		c->ch = ibv_create_comp_channel(ctx);
		if (c->ch == NULL || nonblock(c->ch->fd) != 0) {
			FAIL("%s: ibv_create_comp_channel / fcntl: %s", dev, strerror(errno));
			return -1;
		}
	}
	o->pd = c->pd;
	o->srq = use_srq ? c->srq : NULL;
	o->rchan = c->ch;
	if (h_side_create(&c->s, ctx, o) != 0) {
		FAIL("%s: h_side_create (%s QP%s%s): %s", dev, o->type == IBV_QPT_UD ? "UD" : "RC",
		     use_srq ? " on an SRQ" : "", chan ? ", receive CQ with a channel" : "",
		     strerror(errno));
		return -1;
	}
	return 0;
}

/* The completion event of @c's receive CQ, within CHURN_WC_MS: 0 or -1 (recorded). */
static int
churn_event(struct churn_side *c)
{
	uint64_t end = h_now_ms() + CHURN_WC_MS;
	struct ibv_cq *cq = NULL;
	int n;

	while ((n = poll_event(c->ch, 100, &cq)) == 0 && h_now_ms() < end && !stopped())
		;
	if (n != 1 || cq != c->s.rcq) {
		if (n >= 0 && !stopped())
			FAIL("no completion event for the churned receive CQ within %d ms (%s)",
			     CHURN_WC_MS, n == 1 ? "an event for another CQ" : "none");
		return -1;
	}
	ibv_ack_cq_events(cq, 1);
	return 0;
}

/*
 * Message (@k, @r) from @c[0] to @c[1], their QPs connected first: the
 * send and receive completions and the bytes checked. 0 or -1 (recorded).
 */
static int
churn_send(uint32_t k, uint32_t r, struct churn_side *c, const struct h_qp_opts *o)
{
	struct h_side *a = &c[0].s, *b = &c[1].s;
	uint32_t grh = o->type == IBV_QPT_UD ? GRH : 0, t, seq;
	struct ibv_sge rsge = { (uintptr_t)b->buf, grh + MSG_MAX, b->mr->lkey }, ssge;
	struct ibv_recv_wr rwr = { .wr_id = r, .sg_list = &rsge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr swr, *sbad = NULL;
	struct ibv_wc sw, rw;
	char why[200];
	int ret;

	if (h_connect(a, b, o) != 0 || h_connect(b, a, o) != 0) {
		FAIL("churner %u round %u: connecting the %s QPs 0x%x and 0x%x failed", k, r,
		     grh ? "UD" : "RC", a->qp->qp_num, b->qp->qp_num);
		return -1;
	}
	memset(b->buf, 0xee, grh + MSG_MAX);
	ret = b->qp->srq ? ibv_post_srq_recv(b->qp->srq, &rwr, &rbad) :
			   ibv_post_recv(b->qp, &rwr, &rbad);
	if (ret == 0 && c[1].ch)
		ret = ibv_req_notify_cq(b->rcq, 0);
	if (ret == 0) {
		msg_wr(&swr, &ssge, a->buf, a->mr->lkey, k, r);
		if (grh) {
			swr.wr.ud.ah = c[0].ah;
			swr.wr.ud.remote_qpn = b->qp->qp_num;
			swr.wr.ud.remote_qkey = H_QKEY;
		}
		ret = ibv_post_send(a->qp, &swr, &sbad);
	}
	if (ret) {
		FAIL("churner %u round %u: posting or arming: %s", k, r, strerror(ret));
		return -1;
	}
	if (h_poll(a->scq, &sw, 1, CHURN_WC_MS) != 1 || (c[1].ch && churn_event(&c[1]) != 0) ||
	    h_poll(b->rcq, &rw, 1, CHURN_WC_MS) != 1) {
		if (!stopped())
			FAIL("churner %u round %u: a completion missing after %d ms", k, r,
			     CHURN_WC_MS);
		return -1;
	}
	if (sw.status != IBV_WC_SUCCESS || sw.opcode != IBV_WC_SEND || sw.wr_id != swr.wr_id ||
	    sw.qp_num != a->qp->qp_num) {
		FAIL("churner %u round %u: send completion: status %s, opcode %d, wr_id 0x%" PRIx64
		     ", qp_num 0x%x", k, r, ibv_wc_status_str(sw.status), sw.opcode,
		     (uint64_t)sw.wr_id, sw.qp_num);
		return -1;
	}
	if (rw.status != IBV_WC_SUCCESS || rw.opcode != IBV_WC_RECV || rw.wr_id != r ||
	    rw.qp_num != b->qp->qp_num || rw.byte_len < grh ||
	    (grh && (!(rw.wc_flags & IBV_WC_GRH) || rw.src_qp != a->qp->qp_num))) {
		FAIL("churner %u round %u: receive completion: status %s, opcode %d, wr_id 0x%"
		     PRIx64 ", qp_num 0x%x, byte_len %u, wc_flags 0x%x, src_qp 0x%x", k, r,
		     ibv_wc_status_str(rw.status), rw.opcode, (uint64_t)rw.wr_id, rw.qp_num,
		     rw.byte_len, rw.wc_flags, rw.src_qp);
		return -1;
	}
	rw.byte_len -= grh;
	if (msg_check(&rw, b->buf + grh, &t, &seq, why, sizeof(why)) != 0 || t != k || seq != r) {
		FAIL("churner %u round %u: the message %s", k, r, why);
		return -1;
	}
	return 0;
}

/*
 * Round @r of churner @k. Its variant v = r + k (the churners differ):
 * bit 0 UD, else RC; bit 1 droce1 sends, else droce0; bit 2 the receiving
 * QP on the SRQ; bit 3 its receive CQ with a channel; a SEND unless
 * v % 5 == 4 (the QPs destroyed in RESET). 1 if a SEND passed, 0 if none
 * was due, -1 failed.
 */
static int
churn_round(uint32_t k, uint32_t r)
{
	uint32_t v = r + k;
	bool flip = v & 2;
	struct h_qp_opts o = {
		.type = v & 1 ? IBV_QPT_UD : IBV_QPT_RC, .max_send_wr = 4, .max_recv_wr = 4,
		.max_send_sge = 1, .max_recv_sge = 1, .cqe = 16, .buf_len = 4096,
		.psn = (r * 7919 + k) & 0xffffff, .timeout = 20,
	};
	struct churn_side c[2];	/* sending, receiving */
	int rc = -1;

	memset(c, 0, sizeof(c));
	if (churn_side_create(&c[0], flip ? M.c1 : M.c0, &o, false, false) == 0 &&
	    churn_side_create(&c[1], flip ? M.c0 : M.c1, &o, v & 4, v & 8) == 0) {
		c[0].ah = h_ah(&c[0].s, &c[1].s);
		c[1].ah = h_ah(&c[1].s, &c[0].s);
		if (c[0].ah == NULL || c[1].ah == NULL)
			FAIL("ibv_create_ah: %s", strerror(errno));
		else if (v % 5 == 4)
			rc = 0;
		else
			rc = churn_send(k, r, c, &o) == 0 ? 1 : -1;
	}
	churn_side_destroy(&c[0]);
	churn_side_destroy(&c[1]);
	return stopped() ? -1 : rc;
}

/* Churner @arg: rounds as long as the traffic runs, CHURN_MIN at least. */
static void *
churner(void *arg)
{
	uint32_t k = (uint32_t)(uintptr_t)arg;

	wait_go();
	for (uint32_t r = 0; !stopped() && (r < CHURN_MIN || !traffic_done()); r++) {
		bool during = !traffic_done();
		int rc = churn_round(k, r);

		if (rc < 0)
			break;
		M.churn[k][0]++;
		M.churn[k][1] += (uint32_t)rc;
		M.churn[k][2] += during;
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
		nonblock(ctx[d]->async_fd);
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

/*
 * The run over: every waiter leaves within STALL_MS, each woken by the
 * sentinel of the one before (after a failure, by the main thread's too).
 * A waiter asleep for good cannot be joined: report and exit.
 */
static void
let_waiters_go(void)
{
	uint64_t start = h_now_ms(), next = start;

	while (__atomic_load_n(&M.waiters, __ATOMIC_ACQUIRE) > 0) {
		uint64_t now = h_now_ms();

		if (now - start > STALL_MS) {
			FAIL("lost wake-up: %u waiter(s) still asleep %d ms after the run ended (%u "
			     "sentinel WRITEs posted, %u reaped, %" PRIu64 " completion events taken)",
			     __atomic_load_n(&M.waiters, __ATOMIC_ACQUIRE), STALL_MS,
			     __atomic_load_n(&M.sentinels[0], __ATOMIC_ACQUIRE),
			     __atomic_load_n(&M.sentinels[1], __ATOMIC_ACQUIRE),
			     __atomic_load_n(&M.events, __ATOMIC_ACQUIRE));
			report();
			fprintf(stderr, "  threads asleep in ibv_get_cq_event cannot be joined: exit\n");
			fflush(stdout);
			_exit(1);
		}
		if (stopped() && now >= next) {
			post_sentinel();
			next = now + 100;
		}
		usleep(2000);
	}
}

/* After the waiters: the sentinels' completions and the events they left. */
static void
reap_leftovers(void)
{
	uint64_t end = h_now_ms() + STALL_MS;
	struct ibv_cq *cq;
	int64_t last[MAXT];

	last_init(last);
	while (!stopped() && __atomic_load_n(&M.sentinels[1], __ATOMIC_ACQUIRE) < M.sentinels[0]) {
		if (h_now_ms() > end) {
			FAIL("%u of %u sentinel WRITEs did not complete within %d ms",
			     M.sentinels[0] - M.sentinels[1], M.sentinels[0], STALL_MS);
			return;
		}
		if (reap_sends(last) < 0)
			return;
	}
	if (nonblock(M.sch->fd) != 0) {
		FAIL("fcntl(completion channel fd): %s", strerror(errno));
		return;
	}
	while (get_event(M.sch, &cq) == 1) {
		if (cq != M.scq) {
			FAIL("completion event for CQ %p, the send CQ is %p", (void *)cq,
			     (void *)M.scq);
			return;
		}
		ibv_ack_cq_events(cq, 1);
	}
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
	uint64_t t0, deadline, seen = 0, since = h_now_ms();
	bool timed_out = false;
	int rc;

	M.waiters = M.c.wait ? (uint32_t)M.c.npoll : 0;
	for (int t = 0; t < M.c.nsend; t++)
		spawn(sender, (uintptr_t)t);
	for (int i = 0; i < M.c.npoll; i++)
		if (spawn(M.c.wait ? waiter : poller, (uintptr_t)i) != 0 && M.c.wait)
			__atomic_fetch_sub(&M.waiters, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < M.c.nrecv; i++)
		spawn(receiver, 0);
	for (int i = 0; i < M.c.nchurn; i++)
		spawn(churner, (uintptr_t)i);
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < DIM(xs_names); i++)
			M.xs0[d][i] = h_xstat(d ? "droce1" : "droce0", xs_names[i]);
	t0 = now_ns();
	deadline = h_now_ms() + (uint64_t)M.c.wait_ms;
	__atomic_store_n(&M.go, 1, __ATOMIC_RELEASE);
	while (!stopped() && !traffic_done()) {
		if (h_now_ms() > deadline) {
			timed_out = true;
			FAIL("not done within %d ms", M.c.wait_ms);
			break;
		}
		if (M.c.wait)
			check_stall(&seen, &since);
		usleep(2000);
	}
	if (M.c.wait)
		let_waiters_go();
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
		if (M.c.wait)
			reap_leftovers();
		expect_quiet(50);
	}
	rc = report();
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Cases */

/* The first case's configuration: 4 QPs on one send CQ, their peers on one SRQ. */
static struct run_cfg
shared_cfg(void)
{
	return (struct run_cfg){ .nqp = NQP, .nsend = NQP, .nrecv = NQP, .nmsg = NMSG,
				 .depth = DEPTH, .srq = true, .spin = SPIN, .wait_ms = WAIT_MS };
}

/* Both devices' object counts into @o[2]. */
static int
objects_get(struct droce_dev_objects *o)
{
	for (int d = 0; d < 2; d++)
		TEST_ASSERT_EQ(droce_dev_objects_get(d ? "droce1" : "droce0", &o[d]), 0);
	return TEST_SUCCESS;
}

/* The devices hold as many objects of each kind as @o0 says they held before. */
static int
objects_back(const struct droce_dev_objects *o0)
{
	struct droce_dev_objects o[2];

	TEST_ASSERT_EQ(objects_get(o), TEST_SUCCESS);
	for (int d = 0; d < 2; d++)
		TEST_ASSERT(o[d].contexts == o0[d].contexts && o[d].pds == o0[d].pds &&
			    o[d].mrs == o0[d].mrs && o[d].cqs == o0[d].cqs &&
			    o[d].srqs == o0[d].srqs && o[d].qps == o0[d].qps && o[d].ahs == o0[d].ahs,
			    "droce%d holds %u contexts, %u PDs, %u MRs, %u CQs, %u SRQs, %u QPs, "
			    "%u AHs; before the run %u, %u, %u, %u, %u, %u, %u", d, o[d].contexts,
			    o[d].pds, o[d].mrs, o[d].cqs, o[d].srqs, o[d].qps, o[d].ahs,
			    o0[d].contexts, o0[d].pds, o0[d].mrs, o0[d].cqs, o0[d].srqs, o0[d].qps,
			    o0[d].ahs);
	return TEST_SUCCESS;
}

/* A run of @c (4 QPs on one send CQ, one SRQ), then its figures. */
static int
shared_run(const struct run_cfg *c)
{
	static const char *const how[] = {
		[WAIT_NONE] = "polled by",
		[WAIT_BLOCK] = "with a channel, waited for in ibv_get_cq_event by",
		[WAIT_FD] = "with an O_NONBLOCK channel, waited for in poll(2) / ibv_get_cq_event by",
	};
	struct droce_dev_objects o0[2];
	double ms;
	int rc;

	rc = create_run(c);
	if (rc == TEST_SUCCESS)
		rc = objects_get(o0);
	if (rc)
		return rc;
	rc = run(&ms);
	if (rc == TEST_SUCCESS)
		rc = objects_back(o0);
	printf("# %d QPs, one %ssend CQ %s %d threads, one SRQ and receive CQ polled by %d: %"
	       PRIu64 " SENDs in %.2f s (%" PRIu64 " send completions, %" PRIu64 " receives",
	       c->nqp, c->ex ? "extended " : "", how[c->wait], c->npoll ? c->npoll : c->nsend,
	       c->nrecv, total_msgs(), ms / 1000, M.scomp, M.rcomp);
	if (c->wait)
		printf(", %" PRIu64 " completion events", M.events);
	printf(")\n");
	for (int k = 0; k < c->nchurn; k++)
		printf("#   churner %d: %u rounds of objects created and destroyed, %u with a SEND, "
		       "%u begun during the traffic\n", k, M.churn[k][0], M.churn[k][1],
		       M.churn[k][2]);
	return rc;
}

static int
test_shared_send_cq_polled_by_many_threads(void)
{
	struct run_cfg c = shared_cfg();

	return shared_run(&c);
}

static int
test_extended_cq_polled_by_many_threads(void)
{
	struct run_cfg c = shared_cfg();

	c.ex = true;
	c.nrecv = 1;
	return shared_run(&c);
}

static int
test_objects_created_and_destroyed_during_traffic(void)
{
	struct run_cfg c = shared_cfg();

	c.nchurn = NCHURN;
	return shared_run(&c);
}

static int
test_completion_channel_waited_on_by_many_threads(void)
{
	struct run_cfg c = shared_cfg();

	c.npoll = NWAIT;
	c.wait = WAIT_BLOCK;
	TEST_ASSERT_EQ(shared_run(&c), TEST_SUCCESS);
	teardown();
	setup();
	c.wait = WAIT_FD;
	return shared_run(&c);
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
	TEST_CASE(test_objects_created_and_destroyed_during_traffic),
	TEST_CASE(test_completion_channel_waited_on_by_many_threads),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "threads", cases, setup, teardown);
}
