/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: perftest's tests over droce (perf_tests.c: send_lat,
 * write_lat, read_lat, atomic_lat, ud_lat, tag_lat, send_bw, write_bw,
 * read_bw, atomic_bw, srq_bw, ud_bw, tag_bw), or (-m post) what posting a
 * WR costs, or (-m reg) what registering memory costs (run_reg). With no
 * arguments it runs on the embedded default (two droce devices joined by a
 * net_ring pair in this process, no hugepages, the engine on a worker lcore
 * when there is one) a short sweep of the main tests.
 *
 *   droce-perf [EAL args --] [test ...] [-s size[,size...]] [-S] [-n iters]
 *              [-w warmup] [-D seconds] [-c rc|uc|ud] [-q qps] [-l post list] [-I inline]
 *              [-Q cq moderation] [-d depth] [-b buffers] [-p inline|lcore] [-L loss]
 *              [-t timeout] [-j] [--td] [--odp] [--pcapng file] [--eager-limit bytes]
 *   droce-perf EAL args -- --server [--port port]
 *   droce-perf EAL args -- --client host [--port port] [test ...] [options]
 *   droce-perf [EAL args --] -m reg [-s bytes]
 *   droce-perf [EAL args --] -m post [-s size] [-d depth] [-p inline|lcore]
 *              [-T threads,...] [-D seconds] [-B batch] [-a]
 *
 * Tests are named as arguments ("main", the default: send_lat write_lat
 * read_lat atomic_lat send_bw write_bw read_bw). -s: sizes (K and M
 * suffixes), -S: every power of two from 2 to the largest -s; -n: iterations
 * (latency 2000, bandwidth 20000) or -D seconds a figure; -w: the untimed
 * iterations a latency test runs first (a tenth of -n, at least 10; 1000
 * with -D; tag_lat has none); -b/--slots N: the bandwidth tests' WRs cycle
 * over N message buffers (the depth; perftest's and ucx_perftest's 1 keeps
 * large payloads in the caches); --td: QPs on a thread domain and
 * single-threaded CQs (no locks: one thread posts and polls); -j: JSON instead
 * of the table (devtools/plot draws it); --odp: the buffers are ODP MRs
 * (IBV_ACCESS_ON_DEMAND: every access of the engine to them is guarded);
 * --pcapng FILE: droce0 of the embedded default writes its frames there
 * (its devarg pcapng=); --eager-limit: tag_lat and tag_bw send messages
 * up to that many bytes eager, larger ones by rendezvous (8192);
 * --xstats: the devices' non-zero counters (droce0 and droce1 of the
 * embedded default, droce0 with --server/--client), after the tests, on
 * standard error (retransmits, fast_retransmits, NAKs... under -L).
 *
 * --server and --client run the tests between two processes, each with the
 * one droce device its EAL arguments give (memif, net_shm, af_packet on a
 * NIC or a veth...): a TCP connection to the server's --port (18515)
 * carries the client's options, each test's QP numbers and rkeys, and the
 * figures, which the client measures and both print (perf_tests_remote).
 * The client retries its connection for CONNECT_S, so either starts first.
 *
 * -L wraps both ports of the embedded default in net_impair with drop=<loss>
 * (a probability, e.g. 0.001), to measure goodput and latency under loss.
 *
 * -m post (issue 15: queues must stay fast with more threads than cores)
 * times single calls of ibv_post_send (an RC RDMA WRITE of -s bytes, 64 by
 * default, inline up to 64, signaled), ibv_post_recv and ibv_post_srq_recv
 * (one SGE of -s bytes), each a list of one WR, into queues of -d WRs (4096
 * by default), for -D seconds a figure (2):
 *  - uncontended ("alone"): one thread posts to its own queue; between its
 *    batches it polls the completions and feeds its receive queue itself;
 *  - contended: for each count of -T (2,4,8; 0: none), that many threads post
 *    to ONE send queue, then to ONE SRQ, while one more thread (the service
 *    thread) polls the completions and feeds the SRQ (-T 1: the same with
 *    one poster, nobody to contend with).
 * Queues never fill: a thread has at most depth/threads WRs outstanding
 * (wr_id names the thread; each completion gives one back to its thread),
 * and one without room for a batch waits, asleep and outside any timed call,
 * until half of them are back; so ENOMEM cannot happen. Receive WQEs are
 * consumed by 0-byte SENDs from a QP on droce0, one per WQE already posted
 * (no RNR NAK). With an engine lcore (the default) the device work runs on
 * the engine's CPU and the threads stay on the main lcore's CPUs (-a: on
 * every CPU, the engine's too), so a call costs what the facade does: the
 * checks, the queue's mutex, the ring operations, and the cache lines the
 * engine moved. With inline progress (-p inline; no worker lcore, so the
 * threads run on every CPU) a call also moves the devices when it wins
 * their trylock, and its cost includes that engine work.
 *
 * Timing: calls are made in batches of -B (32), with the TSC (rte_rdtsc)
 * read around each batch. Batches alternate: one is timed as a whole (two
 * TSC reads for 32 calls), for the mean; in the next the TSC is also read
 * between consecutive calls, one read per call, and each difference (a call
 * plus one TSC read, printed as "timer") goes into a histogram (exact below
 * 128 cycles, then within 1.6%) for p50, p99 and the max. Where the TSC
 * advances in steps (10 ns on this project's AMD EPYC machine: the "timer"),
 * single calls are measured to that step; the mean is not. A call's time
 * includes any time its thread was off the CPU or asleep on the queue's
 * mutex. Per row: posts/s, all the threads' calls over the wall time of the
 * run (waits for room included: with "in calls" well below 100% it is the
 * rate at which the engine completes WRs, not a post cost); "in calls", the
 * share of the threads' time spent inside calls; the mean and, in
 * parentheses, the lowest and highest per-thread mean; p50, p99 and max of
 * single calls, over every thread's sampled batches.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>

#include "droce.h"
#include "perf_tests.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned int sends_done;	/* send completions seen but not yet waited for */
	unsigned int recvs_done;
	struct ibv_wc last_recv;
};

static size_t size = 64;
static unsigned int depth = 128, qp_timeout = 14;
static const char *loss;
static const char *pcapng;	/* --pcapng FILE: droce0 of the embedded default captures */

#define die(...) do { fprintf(stderr, "droce-perf: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

#define DROCE_PERF_MAX_THREADS	4

/*
 * --threads N: N net_ring pairs, each joining droce<2i> (10.0.<i>.1) and
 * droce<2i+1> (10.0.<i>.2), with lcore=thread: a device is moved only by the
 * calls about it, so each lcore moves its own pair and no other.
 */
static void
threads_topology(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		char a[32], b[32], name[16], args[128];

		snprintf(a, sizeof(a), "net_ring_a%u", i);
		snprintf(b, sizeof(b), "net_ring_b%u", i);
		if (droce_ring_pair_create(a, b))
			die("cannot create net_ring pair %u", i);
		for (unsigned int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "droce%u", 2 * i + k);
			snprintf(args, sizeof(args), "ethdev=%s,ip=10.0.%u.%u,mtu=4200,lcore=thread",
				 k ? b : a, i, k + 1);
			if (droce_dev_create(name, args))
				die("cannot create %s", name);
		}
	}
	printf("embedded default, --threads %u: droce<2i> (10.0.<i>.1) <-> net_ring pair <-> "
	       "droce<2i+1> (10.0.<i>.2) for i < %u, lcore=thread, pair i on lcore i\n", n, n);
}

/*
 * --threads N --queues: one net_ring pair of N queue pairs, joining droce0
 * (10.0.0.1) and droce1 (10.0.0.2), each with queues=N and lcore=thread.
 * Lcore i makes its QPs on both devices, which puts them on queue i; droce0's
 * tx queue i is droce1's rx queue i, so each lcore moves its own queue of
 * each device and nothing of another's, as RSS or a flow rule would steer
 * on a NIC.
 */
static void
queues_topology(unsigned int n)
{
	char args[128];

	if (droce_ring_pair_create_queues("net_ring_a", "net_ring_b", n))
		die("cannot create the net_ring pair of %u queues", n);
	for (unsigned int k = 0; k < 2; k++) {
		char name[16];

		snprintf(name, sizeof(name), "droce%u", k);
		snprintf(args, sizeof(args), "ethdev=net_ring_%c,ip=10.0.0.%u,mtu=4200,lcore=thread,"
			 "queues=%u", k ? 'b' : 'a', k + 1, n);
		if (droce_dev_create(name, args))
			die("cannot create %s", name);
	}
	printf("embedded default, --threads %u --queues: droce0 (10.0.0.1) <-> net_ring pair of "
	       "%u queues <-> droce1 (10.0.0.2), lcore=thread, queues=%u, lcore i on queue i\n",
	       n, n, n);
}

static void
connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS failed");
}

/* the first @ndev devices' (droce0, droce1) */
static void
dump_stats(unsigned int ndev)
{
	static const char *const devs[] = { "droce0", "droce1" };
	const char *names[64];
	uint64_t vals[64];

	for (unsigned int d = 0; d < ndev; d++) {
		int n = droce_dev_xstats(devs[d], names, vals, 64);

		fprintf(stderr, "%s:", devs[d]);
		for (int i = 0; i < n && i < 64; i++)
			if (vals[i])
				fprintf(stderr, " %s=%" PRIu64, names[i], vals[i]);
		fputc('\n', stderr);
	}
}

/*
 * -m post: the cost of posting (see the top of the file).
 */
enum post_verb { PV_SEND, PV_RECV, PV_SRQ };

static const char *const pv_name[] = {
	[PV_SEND] = "ibv_post_send",
	[PV_RECV] = "ibv_post_recv",
	[PV_SRQ] = "ibv_post_srq_recv",
};

#define POST_QD		4096		/* default queue depth of -m post */
#define POST_BATCH_MAX	1024
#define POST_MAX_THREADS 64
#define FEED_MAX	256		/* SENDs the feeder posts in one list */
#define FEED_TAG	(1ULL << 63)	/* wr_id of the feeder's SENDs */
#define STALL_S		10		/* no completion this long: give up */

static const char *post_threads = "2,4,8";
static unsigned int post_nt[16], post_nnt;	/* -T parsed */
static double post_secs = 2;
static unsigned int post_batch = 32;
static bool post_all_cpus, depth_set;
static double tsc_ns;			/* ns per TSC cycle */

/* Per-call times in TSC cycles: exact below HIST_LIN, then 64 buckets per power of two. */
#define HIST_LIN	128
#define HIST_N		(HIST_LIN + (64 - 7) * 64)

struct hist {
	uint64_t n, max;
	uint64_t c[HIST_N];
};

static inline unsigned int
hist_idx(uint64_t v)
{
	unsigned int msb;

	if (v < HIST_LIN)
		return v;
	msb = 63 - __builtin_clzll(v);
	return HIST_LIN + (msb - 7) * 64 + ((v >> (msb - 6)) & 63);
}

/* The middle of bucket @i, in cycles. */
static double
hist_val(unsigned int i)
{
	unsigned int msb, sub;

	if (i < HIST_LIN)
		return i;
	msb = (i - HIST_LIN) / 64 + 7;
	sub = (i - HIST_LIN) % 64;
	return (double)((64ULL + sub) << (msb - 6)) + (double)(1ULL << (msb - 6)) / 2;
}

/* The @q quantile (0 < q <= 1), in cycles, never above the max seen. */
static double
hist_pct(const struct hist *h, double q)
{
	uint64_t want = (uint64_t)(q * h->n), sum = 0;

	if (want < q * h->n || want == 0)
		want++;
	for (unsigned int i = 0; i < HIST_N; i++) {
		sum += h->c[i];
		if (sum >= want)
			return RTE_MIN(hist_val(i), (double)h->max);
	}
	return h->max;
}

/* A sampled batch: t[i + 1] - t[i] is call i and one TSC read. */
static void
hist_batch(struct hist *h, const uint64_t *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t d = t[i + 1] - t[i];

		if ((int64_t)d < 0)	/* a TSC that is not synchronised across CPUs */
			d = 0;
		h->c[hist_idx(d)]++;
		if (d > h->max)
			h->max = d;
	}
	h->n += n;
}

static void
hist_merge(struct hist *to, const struct hist *from)
{
	for (unsigned int i = 0; i < HIST_N; i++)
		to->c[i] += from->c[i];
	to->n += from->n;
	to->max = RTE_MAX(to->max, from->max);
}

/* The objects, made once for every figure. */
struct post_bench {
	struct side d0, d1;	/* each device: context, PD, MR, one CQ for its QPs */
	struct side a0, a1;	/* a0's SQ: WRITEs to a1, SENDs into the SRQ; a1 is on the SRQ */
	struct side b0, b1;	/* b1's RQ, fed by SENDs from b0 */
	struct ibv_srq *srq;
	unsigned int qd;
};

struct post_run;

/* A posting thread. Its counters are on lines of their own: one writer each. */
struct poster {
	uint64_t posted __rte_cache_aligned;	/* written by the thread, once a batch */
	uint64_t done __rte_cache_aligned;	/* written by whoever polls the CQs */
	struct post_run *run __rte_cache_aligned;
	unsigned int id;
	pthread_t th;
	struct hist *h;
	uint64_t call_cyc;			/* in calls, every batch */
	uint64_t mean_cyc, mean_calls;		/* the batches timed as a whole */
	uint64_t t_end;
};

struct post_run {
	enum post_verb verb;
	struct post_bench *pb;
	unsigned int nthreads, batch;
	unsigned int limit, resume;	/* a thread's WRs outstanding: at most; to resume at */
	bool serve_self;	/* one thread: it polls and feeds between its batches */
	bool unpin;
	uint64_t deadline;	/* TSC */
	uint32_t ready, go, running;
	uint64_t fed, feed_done;	/* the feeder's SENDs: posted, completed */
	struct ibv_send_wr feed_wr[FEED_MAX];
	struct poster p[POST_MAX_THREADS];
};

static void
stall(const struct post_run *r, uint64_t *since)
{
	if (*since == 0) {
		*since = rte_rdtsc();
	} else if ((rte_rdtsc() - *since) * tsc_ns > STALL_S * 1e9) {
		dump_stats(2);
		die("%s: no completion for %d s", pv_name[r->verb], STALL_S);
	}
}

/*
 * Poll both CQs, giving each completion back to the thread that posted its
 * WR, and feed the receive queue under test one SEND per WQE posted: true if
 * anything moved. One thread at a time (the service thread, or the only
 * poster).
 */
static bool
serve(struct post_run *r)
{
	struct post_bench *pb = r->pb;
	struct ibv_cq *cqs[] = { pb->d0.cq, pb->d1.cq };
	struct ibv_wc wc[64];
	bool moved = false;

	for (unsigned int c = 0; c < RTE_DIM(cqs); c++) {
		int n = ibv_poll_cq(cqs[c], RTE_DIM(wc), wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		for (int i = 0; i < n; i++) {
			uint64_t t = wc[i].wr_id >> 32;

			if (wc[i].status != IBV_WC_SUCCESS)
				die("%s: completion error: %s (wr_id %#" PRIx64 ")", pv_name[r->verb],
				    ibv_wc_status_str(wc[i].status), wc[i].wr_id);
			if (wc[i].wr_id & FEED_TAG)
				r->feed_done++;
			else if (t < r->nthreads)
				__atomic_store_n(&r->p[t].done, r->p[t].done + 1, __ATOMIC_RELEASE);
			else
				die("unexpected completion, wr_id %#" PRIx64, wc[i].wr_id);
		}
		moved |= n > 0;
	}
	if (r->verb != PV_SEND) {
		struct ibv_qp *qp = r->verb == PV_SRQ ? pb->a0.qp : pb->b0.qp;
		struct ibv_send_wr *bad;
		uint64_t posted = 0, k;
		int ret;

		for (unsigned int t = 0; t < r->nthreads; t++)
			posted += __atomic_load_n(&r->p[t].posted, __ATOMIC_ACQUIRE);
		k = RTE_MIN(posted - r->fed, pb->qd - (r->fed - r->feed_done));
		k = RTE_MIN(k, (uint64_t)FEED_MAX);
		if (k > 0) {
			r->feed_wr[k - 1].next = NULL;
			ret = ibv_post_send(qp, r->feed_wr, &bad);
			r->feed_wr[k - 1].next = k < FEED_MAX ? &r->feed_wr[k] : NULL;
			if (ret)
				die("feeding SENDs: ibv_post_send: %s", strerror(ret));
			r->fed += k;
			moved = true;
		}
	}
	return moved;
}

/* Serve until every WR posted has completed and every WQE was consumed. */
static void
drain(struct post_run *r)
{
	uint64_t since = 0;

	for (;;) {
		uint64_t posted = 0;
		bool busy = false;

		for (unsigned int t = 0; t < r->nthreads; t++) {
			uint64_t n = __atomic_load_n(&r->p[t].posted, __ATOMIC_ACQUIRE);

			busy |= r->p[t].done != n;
			posted += n;
		}
		if (r->verb != PV_SEND)
			busy |= r->fed != posted || r->feed_done != r->fed;
		if (!busy)
			return;
		if (serve(r))
			since = 0;
		else
			stall(r, &since);
	}
}

/* Threads may run on every CPU, not only on the main lcore's they inherit. */
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

static void
thread_start(struct post_run *r)
{
	if (r->unpin)
		unpin();
	__atomic_fetch_add(&r->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* What a thread posts: one WR, reused with a new wr_id each call. */
struct post_wr {
	enum post_verb verb;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_sge sge;
	struct ibv_send_wr swr;
	struct ibv_recv_wr rwr;
	uint8_t data[64];
};

static inline void
post_call(struct post_wr *w, uint64_t id)
{
	struct ibv_send_wr *sbad;
	struct ibv_recv_wr *rbad;
	int ret;

	switch (w->verb) {
	case PV_SEND:
		w->swr.wr_id = id;
		ret = ibv_post_send(w->qp, &w->swr, &sbad);
		break;
	case PV_RECV:
		w->rwr.wr_id = id;
		ret = ibv_post_recv(w->qp, &w->rwr, &rbad);
		break;
	default:
		w->rwr.wr_id = id;
		ret = ibv_post_srq_recv(w->srq, &w->rwr, &rbad);
		break;
	}
	if (unlikely(ret))
		die("%s: %s", pv_name[w->verb], strerror(ret));
}

static void
post_wr_init(struct post_wr *w, const struct post_run *r)
{
	const struct post_bench *pb = r->pb;

	memset(w, 0, sizeof(*w));
	w->verb = r->verb;
	w->srq = pb->srq;
	if (r->verb == PV_SEND) {
		w->qp = pb->a0.qp;
		if (size <= sizeof(w->data)) {
			w->sge = (struct ibv_sge){ (uintptr_t)w->data, size, 0 };
			w->swr.send_flags = IBV_SEND_INLINE;
		} else {
			w->sge = (struct ibv_sge){ (uintptr_t)pb->d0.buf, size, pb->d0.mr->lkey };
		}
		w->swr.sg_list = &w->sge;
		w->swr.num_sge = 1;
		w->swr.opcode = IBV_WR_RDMA_WRITE;
		w->swr.send_flags |= IBV_SEND_SIGNALED;
		w->swr.wr.rdma.remote_addr = (uintptr_t)pb->d1.buf;
		w->swr.wr.rdma.rkey = pb->d1.mr->rkey;
	} else {
		w->qp = pb->b1.qp;
		w->sge = (struct ibv_sge){ (uintptr_t)pb->d1.buf, size, pb->d1.mr->lkey };
		w->rwr.sg_list = &w->sge;
		w->rwr.num_sge = 1;
	}
}

static void *
poster_main(void *arg)
{
	struct poster *p = arg;
	struct post_run *r = p->run;
	unsigned int nb = r->batch;
	uint64_t t[POST_BATCH_MAX + 1], tag = (uint64_t)p->id << 32;
	uint32_t seq = 0;
	struct post_wr w;
	bool sampled = false;

	post_wr_init(&w, r);
	thread_start(r);
	while (rte_rdtsc() < r->deadline) {
		uint64_t since = 0, seen = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE), now;
		unsigned int tries = 0;

		/*
		 * Room for a batch: waiting for it is never inside a timed call.
		 * A thread out of room waits until half its credits are back
		 * (not one batch's worth: a wake-up for each batch would be all
		 * it does), asleep, so that the service thread, which gives them
		 * back, is not starved by threads yielding to each other.
		 */
		if (p->posted + nb - __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) > r->limit)
			while (p->posted - __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) > r->resume) {
				if (r->serve_self) {
					if (serve(r))
						since = 0;
					else
						stall(r, &since);
					continue;
				}
				now = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
				if (now != seen) {
					seen = now;
					since = 0;
				}
				stall(r, &since);
				if (tries++ < 4)
					sched_yield();
				else
					usleep(20);
			}
		sampled = !sampled;
		if (sampled) {
			t[0] = rte_rdtsc();
			for (unsigned int i = 0; i < nb; i++) {
				post_call(&w, tag | seq++);
				t[i + 1] = rte_rdtsc();
			}
			hist_batch(p->h, t, nb);
		} else {
			t[0] = rte_rdtsc();
			for (unsigned int i = 0; i < nb; i++)
				post_call(&w, tag | seq++);
			t[nb] = rte_rdtsc();
			p->mean_cyc += t[nb] - t[0];
			p->mean_calls += nb;
		}
		p->call_cyc += t[nb] - t[0];
		__atomic_store_n(&p->posted, p->posted + nb, __ATOMIC_RELEASE);
	}
	p->t_end = rte_rdtsc();
	__atomic_fetch_sub(&r->running, 1, __ATOMIC_RELEASE);
	if (r->serve_self)
		drain(r);
	return NULL;
}

/* The contended runs' service thread: polls and feeds while the posters post, then drains. */
static void *
service_main(void *arg)
{
	struct post_run *r = arg;

	thread_start(r);
	while (__atomic_load_n(&r->running, __ATOMIC_ACQUIRE) > 0)
		if (!serve(r))
			sched_yield();
	drain(r);
	return NULL;
}

/* The cost of one TSC read in a sampled batch's loop, in ns (the median). */
static double
timer_cost(unsigned int nb)
{
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t t[POST_BATCH_MAX + 1];
	double v;

	if (h == NULL)
		die("out of memory");
	for (unsigned int b = 0; b < (1u << 20) / nb; b++) {
		t[0] = rte_rdtsc();
		for (unsigned int i = 0; i < nb; i++)
			t[i + 1] = rte_rdtsc();
		hist_batch(h, t, nb);
	}
	v = hist_pct(h, 0.5) * tsc_ns;
	free(h);
	return v;
}

/* One figure: @nthreads posting @verb; contended (a service thread) unless @alone. */
static void
post_figure(struct post_bench *pb, enum post_verb verb, unsigned int nthreads, bool alone)
{
	struct post_run *r = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*r));
	struct hist *all = calloc(1, sizeof(*all));
	double lo = 0, hi = 0, elapsed, in_calls = 0;
	uint64_t t_start, t_end = 0, posts = 0, mean_cyc = 0, mean_calls = 0;
	unsigned int nready = nthreads + !alone;
	pthread_t service;

	if (r == NULL || all == NULL)
		die("out of memory");
	memset(r, 0, sizeof(*r));
	r->verb = verb;
	r->pb = pb;
	r->nthreads = nthreads;
	r->batch = post_batch;
	r->limit = pb->qd / nthreads;
	r->resume = RTE_MIN(r->limit / 2, r->limit - r->batch);
	r->serve_self = alone;
	r->unpin = post_all_cpus || rte_lcore_count() == 1;
	r->running = nthreads;
	for (unsigned int i = 0; i < FEED_MAX; i++)
		r->feed_wr[i] = (struct ibv_send_wr){ .wr_id = FEED_TAG, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < FEED_MAX ? &r->feed_wr[i + 1] : NULL };
	for (unsigned int t = 0; t < nthreads; t++) {
		struct poster *p = &r->p[t];

		p->run = r;
		p->id = t;
		p->h = calloc(1, sizeof(*p->h));
		if (p->h == NULL)
			die("out of memory");
		if (pthread_create(&p->th, NULL, poster_main, p))
			die("pthread_create failed");
	}
	if (!alone && pthread_create(&service, NULL, service_main, r))
		die("pthread_create failed");
	while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) < nready)
		sched_yield();
	t_start = rte_rdtsc();
	r->deadline = t_start + (uint64_t)(post_secs * 1e9 / tsc_ns);
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
	for (unsigned int t = 0; t < nthreads; t++)
		pthread_join(r->p[t].th, NULL);
	if (!alone)
		pthread_join(service, NULL);

	for (unsigned int t = 0; t < nthreads; t++) {
		struct poster *p = &r->p[t];
		double m = p->mean_calls ? p->mean_cyc * tsc_ns / p->mean_calls : 0;

		lo = t == 0 ? m : RTE_MIN(lo, m);
		hi = t == 0 ? m : RTE_MAX(hi, m);
		t_end = RTE_MAX(t_end, p->t_end);
		posts += p->posted;
		mean_cyc += p->mean_cyc;
		mean_calls += p->mean_calls;
		in_calls += p->call_cyc;
		hist_merge(all, p->h);
		free(p->h);
	}
	elapsed = (t_end - t_start) * tsc_ns;
	printf("%-17s %2u %-5s %7.3f M %7.1f%% %8.1f (%6.1f-%6.1f) %7.1f %8.1f %10.1f %9" PRIu64 "\n",
	       pv_name[verb], nthreads, alone ? "alone" : "", posts / elapsed * 1e3,
	       100 * in_calls * tsc_ns / (nthreads * elapsed),
	       mean_calls ? mean_cyc * tsc_ns / mean_calls : 0, lo, hi,
	       hist_pct(all, 0.5) * tsc_ns, hist_pct(all, 0.99) * tsc_ns, all->max * tsc_ns / 1e3, posts);
	fflush(stdout);
	free(all);
	free(r);
}

static void
post_dev_open(struct side *s, struct ibv_device *dev, unsigned int cqe)
{
	struct ibv_port_attr pa;
	size_t bufsz = RTE_ALIGN_CEIL(RTE_MAX(size, (size_t)4096), 4096);

	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL)
		die("cannot open %s: %s", ibv_get_device_name(dev), strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = aligned_alloc(4096, bufsz);
	if (s->buf == NULL)
		die("out of memory");
	memset(s->buf, 0, bufsz);
	s->mr = ibv_reg_mr(s->pd, s->buf, bufsz, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!s->pd || !s->mr || !s->cq)
		die("resource creation failed: %s", strerror(errno));
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid) || ibv_query_port(s->ctx, 1, &pa))
		die("query gid/port failed");
	s->mtu = pa.active_mtu;
}

/* An RC QP of device @d: its CQ for both queues, an RQ of @rq WRs unless on @srq. */
static void
post_qp_create(struct side *q, const struct side *d, struct ibv_srq *srq, unsigned int sq,
	       unsigned int rq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = d->cq, .recv_cq = d->cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = sq, .max_recv_wr = srq ? 0 : rq,
			 .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64 },
	};

	*q = *d;
	q->qp = ibv_create_qp(d->pd, &qa);
	if (q->qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
}

/* Comma-separated thread counts into @n (at most @max): how many. */
static unsigned int
parse_threads(const char *s, unsigned int *n, unsigned int max)
{
	unsigned int k = 0;

	while (*s) {
		char *end;
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || (*end && *end != ',') || v > POST_MAX_THREADS)
			die("-T: thread counts from 1 to %d, comma-separated (0: none): %s",
			    POST_MAX_THREADS, post_threads);
		if (v > 0) {
			if (k == max)
				die("-T: at most %u counts", max);
			n[k++] = v;
		}
		s = *end ? end + 1 : end;
	}
	return k;
}

/* -m post's options, checked before EAL starts. */
static void
post_args_check(void)
{
	post_nnt = parse_threads(post_threads, post_nt, RTE_DIM(post_nt));
	if (post_batch < 1 || post_batch > POST_BATCH_MAX)
		die("-B: from 1 to %d calls", POST_BATCH_MAX);
	if (!(post_secs > 0))
		die("-D: a positive number of seconds");
	if (depth < post_batch)
		die("-d: at least -B (%u) WRs", post_batch);
	for (unsigned int i = 0; i < post_nnt; i++)
		if (depth / post_nt[i] < post_batch)
			die("queue depth %u over %u threads leaves fewer than -B %u WRs a thread",
			    depth, post_nt[i], post_batch);
}

static void
run_post(struct ibv_device *dev0, struct ibv_device *dev1, const char *progress)
{
	static const enum post_verb contended[] = { PV_SEND, PV_SRQ };
	struct post_bench pb = { .qd = depth };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = depth, .max_sge = 1 } };
	char cpus[64] = "every CPU";
	cpu_set_t set;

	tsc_ns = 1e9 / rte_get_tsc_hz();
	post_dev_open(&pb.d0, dev0, 2 * depth + 2);
	post_dev_open(&pb.d1, dev1, 2 * depth + 2);
	pb.srq = ibv_create_srq(pb.d1.pd, &sa);
	if (pb.srq == NULL)
		die("ibv_create_srq: %s", strerror(errno));
	post_qp_create(&pb.a0, &pb.d0, NULL, depth, 1);
	post_qp_create(&pb.a1, &pb.d1, pb.srq, 1, 0);
	post_qp_create(&pb.b0, &pb.d0, NULL, depth, 1);
	post_qp_create(&pb.b1, &pb.d1, NULL, 1, depth);
	connect_qp(&pb.a0, &pb.a1);
	connect_qp(&pb.a1, &pb.a0);
	connect_qp(&pb.b0, &pb.b1);
	connect_qp(&pb.b1, &pb.b0);

	if (!post_all_cpus && rte_lcore_count() > 1 &&
	    pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0) {
		int n = snprintf(cpus, sizeof(cpus), "CPU");

		for (int c = 0; c < CPU_SETSIZE && n < (int)sizeof(cpus) - 8; c++)
			if (CPU_ISSET(c, &set))
				n += snprintf(cpus + n, sizeof(cpus) - n, "%s%d", n > 3 ? "," : " ", c);
	}
	printf("post cost: %s progress, threads on %s, queues of %u, %.1f s a figure, TSC %.0f MHz\n",
	       progress, cpus, depth, post_secs, 1e3 / tsc_ns);
	printf("  ibv_post_send: RC RDMA WRITE %zu B%s, signaled; ibv_post_recv, ibv_post_srq_recv: one %zu B SGE; one WR a call\n",
	       size, size <= 64 ? " inline" : "", size);
	printf("  batches of %u calls: mean from whole batches; p50/p99/max from single calls, each with one TSC read (timer %.1f ns)\n",
	       post_batch, timer_cost(post_batch));
	printf("verb              threads    posts/s  in calls  mean ns (threads' range)  p50 ns   p99 ns     max us     calls\n");
	post_figure(&pb, PV_SEND, 1, true);
	post_figure(&pb, PV_RECV, 1, true);
	post_figure(&pb, PV_SRQ, 1, true);
	for (unsigned int i = 0; i < post_nnt; i++)
		for (unsigned int v = 0; v < RTE_DIM(contended); v++)
			post_figure(&pb, contended[v], post_nt[i], false);
}

/*
 * -m reg [-s bytes]: what registering memory costs (default 1 GiB of
 * anonymous memory, untouched). droce pins nothing: ibv_reg_mr records the
 * range, with or without IBV_ACCESS_ON_DEMAND, and the implicit MR covers
 * everything. For comparison, what a kernel RDMA driver (rxe, mlx5)
 * spends pinning the same memory at registration (pin_user_pages; here
 * mlock, which faults every page in and pins it), and what faulting it in
 * costs (touching each page). Medians of 3 runs, fresh memory each time.
 */
static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
run_reg(struct ibv_device *dev, size_t bytes)
{
	static const char *const what[] = {
		"ibv_reg_mr", "ibv_reg_mr ON_DEMAND", "implicit ODP MR", "ibv_dereg_mr",
		"pinning (mlock)", "faulting in (touch)",
	};
	enum { N = 3, K = RTE_DIM(what) };
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	long psz = sysconf(_SC_PAGESIZE);
	double t[K][N];

	if (pd == NULL)
		die("cannot open %s: %s", ibv_get_device_name(dev), strerror(errno));
	for (int r = 0; r < N; r++) {
		for (int k = 0; k < K; k++) {
			uint8_t *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			struct ibv_mr *mr = NULL;
			struct timespec t0;

			if (p == MAP_FAILED)
				die("mmap of %zu bytes: %s", bytes, strerror(errno));
			if (k == 3)
				mr = ibv_reg_mr(pd, p, bytes, acc);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			switch (k) {
			case 0: mr = ibv_reg_mr(pd, p, bytes, acc); break;
			case 1: mr = ibv_reg_mr(pd, p, bytes, acc | IBV_ACCESS_ON_DEMAND); break;
			case 2: mr = ibv_reg_mr(pd, NULL, SIZE_MAX, acc | IBV_ACCESS_ON_DEMAND); break;
			case 3: if (ibv_dereg_mr(mr) != 0) die("ibv_dereg_mr"); mr = NULL; break;
			case 4: if (mlock(p, bytes) != 0) die("mlock: %s", strerror(errno)); break;
			default:
				for (size_t o = 0; o < bytes; o += (size_t)psz)
					p[o] = 1;
			}
			t[k][r] = ms_since(&t0);
			if (k < 3 && mr == NULL)
				die("%s: %s", what[k], strerror(errno));
			if (mr != NULL)
				ibv_dereg_mr(mr);
			munmap(p, bytes);
		}
	}
	printf("registering %zu MiB (median of %d; droce pins nothing)\n", bytes >> 20, N);
	for (int k = 0; k < K; k++) {
		qsort(t[k], N, sizeof(double), cmp_dbl);
		printf("  %-22s %10.3f ms\n", what[k], t[k][N / 2]);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/*
 * --server/--client: the TCP connection that carries the options, the QP
 * numbers, addresses and rkeys, and the figures (perf_tests_remote). The
 * server waits for one client; the client tries for CONNECT_S, so that
 * either may start first.
 */
#define CONNECT_S	60

static int
tcp_accept(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET6, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;
	int one = 1, zero = 0, ls, s, ret;

	ret = getaddrinfo(NULL, port, &hints, &ai);
	if (ret != 0)
		die("--port %s: %s", port, gai_strerror(ret));
	ls = socket(ai->ai_family, ai->ai_socktype, 0);
	if (ls < 0 && errno == EAFNOSUPPORT) {
		/* a kernel without IPv6: IPv4 alone */
		freeaddrinfo(ai);
		hints.ai_family = AF_INET;
		ret = getaddrinfo(NULL, port, &hints, &ai);
		if (ret != 0)
			die("--port %s: %s", port, gai_strerror(ret));
		ls = socket(ai->ai_family, ai->ai_socktype, 0);
	}
	if (ls < 0)
		die("socket: %s", strerror(errno));
	/* IPv4 clients too */
	if (ai->ai_family == AF_INET6)
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 || listen(ls, 1) != 0)
		die("TCP port %s: %s", port, strerror(errno));
	freeaddrinfo(ai);
	fprintf(stderr, "droce-perf: server waiting for a client on TCP port %s\n", port);
	s = accept(ls, NULL, NULL);
	if (s < 0)
		die("accept: %s", strerror(errno));
	close(ls);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static int
tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *p;
	struct timespec t0;
	int one = 1, s = -1, ret;

	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret != 0)
		die("--client %s --port %s: %s", host, port, gai_strerror(ret));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (p = ai; p != NULL; p = p->ai_next) {
			s = socket(p->ai_family, p->ai_socktype, 0);
			if (s >= 0 && connect(s, p->ai_addr, p->ai_addrlen) == 0)
				break;
			if (s >= 0)
				close(s);
			s = -1;
		}
		if (s >= 0)
			break;
		if (ms_since(&t0) > CONNECT_S * 1e3)
			die("no server at %s port %s within %d s", host, port, CONNECT_S);
		usleep(100 * 1000);
	}
	freeaddrinfo(ai);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

int
main(int argc, char **argv)
{
	char prefix[64], *dflt[16];
	int nd = 0, opt, ret;
	bool embedded = true, inl = false;
	const char *prog = "lcore", *mode = "tests", *sizes = NULL;
	struct perf_opts po = { .tests = "main", .transport = IBV_QPT_RC, .qps = 1, .post_list = 1,
				.cq_mod = 1, .eager_limit = 8192, .warmup = -1 };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sweep", no_argument, NULL, 'S' },
		{ "transport", required_argument, NULL, 'c' },
		{ "qps", required_argument, NULL, 'q' },
		{ "post-list", required_argument, NULL, 'l' },
		{ "inline", required_argument, NULL, 'I' },
		{ "cq-mod", required_argument, NULL, 'Q' },
		{ "duration", required_argument, NULL, 'D' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "loss", required_argument, NULL, 'L' },
		{ "odp", no_argument, NULL, 'O' },
		{ "pcapng", required_argument, NULL, 'P' },
		{ "eager-limit", required_argument, NULL, 'E' },
		{ "server", no_argument, NULL, 'R' },
		{ "client", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 'H' },
		{ "queues", no_argument, NULL, 'U' },
		{ "xstats", no_argument, NULL, 'X' },
		{ "slots", required_argument, NULL, 'b' },
		{ "td", no_argument, NULL, 'Y' },
		{ NULL, 0, NULL, 0 },
	};
	bool sweep = false, dur_set = false, server = false;
	unsigned int nthreads = 0;	/* --threads: pairs of devices, one lcore each */
	bool queues = false;		/* --queues: one pair of devices, a queue per lcore */
	bool xstats = false;		/* --xstats: the devices' counters after the tests */
	char lcores[16];
	const char *peer_host = NULL, *port = "18515";
	char tests_buf[512] = "";
	struct ibv_device **list;
	int ndev;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			embedded = false;
	/* a first argument "--x" is EAL's, unless x is one of ours (--json, --server ...) */
	if (embedded && argc > 1 && argv[1][0] == '-' && argv[1][1] == '-' && argv[1][2]) {
		size_t len = strcspn(argv[1] + 2, "=");

		embedded = false;
		for (const struct option *o = longopts; o->name; o++)
			if (strlen(o->name) == len && strncmp(o->name, argv[1] + 2, len) == 0)
				embedded = true;
	}
	if (!embedded) {
		embedded = false;
		ret = rte_eal_init(argc, argv);
		if (ret < 0)
			die("EAL init failed");
		droce_eal_files_remove_at_exit();
		argc -= ret;
		argv += ret;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:n:w:d:p:L:t:m:T:D:B:ac:q:l:I:Q:SjOP:b:", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 's': sizes = optarg; break;
		case 'n': po.iters = strtoul(optarg, NULL, 0); break;
		case 'w': po.warmup = strtol(optarg, NULL, 0); break;
		case 'd': depth = strtoul(optarg, NULL, 0); depth_set = true; break;
		case 'p': prog = optarg; break;
		case 'L': loss = optarg; break;
		case 't': qp_timeout = strtoul(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'T': post_threads = optarg; break;
		case 'D': post_secs = po.duration = strtod(optarg, NULL); dur_set = true; break;
		case 'B': post_batch = strtoul(optarg, NULL, 0); break;
		case 'a': post_all_cpus = true; break;
		case 'c':
			po.transport_set = true;
			if (strcasecmp(optarg, "rc") == 0)
				po.transport = IBV_QPT_RC;
			else if (strcasecmp(optarg, "uc") == 0)
				po.transport = IBV_QPT_UC;
			else if (strcasecmp(optarg, "ud") == 0)
				po.transport = IBV_QPT_UD;
			else
				die("-c: rc, uc or ud");
			break;
		case 'q': po.qps = strtoul(optarg, NULL, 0); break;
		case 'l': po.post_list = strtoul(optarg, NULL, 0); break;
		case 'I': po.inline_size = strtoul(optarg, NULL, 0); break;
		case 'Q': po.cq_mod = strtoul(optarg, NULL, 0); break;
		case 'S': sweep = true; break;
		case 'j': po.json = true; break;
		case 'O': po.odp = true; break;
		case 'P': pcapng = optarg; break;
		case 'E': po.eager_limit = strtoull(optarg, NULL, 0); break;
		case 'R': server = true; break;
		case 'C': peer_host = optarg; break;
		case 'o': port = optarg; break;
		case 'H': nthreads = strtoul(optarg, NULL, 0); break;
		case 'U': queues = true; break;
		case 'X': xstats = true; break;
		case 'b': po.slots = strtoul(optarg, NULL, 0); break;
		case 'Y': po.td = true; break;
		default:
			die("usage: droce-perf [EAL args --] [test ...] [-s size[,size...]] [-S|--sweep] "
			    "[-n iters] [-w warmup] [-D seconds] [-c rc|uc|ud] [-q qps] [-l post list] [-I inline] "
			    "[-Q cq moderation] [-d depth] [-b|--slots buffers] [-p inline|lcore] [-L loss] "
			    "[-t timeout] [-j|--json] [--td] [--odp] [--pcapng file] [--eager-limit bytes] "
			    "[--xstats]\n"
			    "       droce-perf --threads N [--queues] [bandwidth test ...] [options]\n"
			    "       droce-perf EAL args -- --server [--port port]\n"
			    "       droce-perf EAL args -- --client host [--port port] [test ...] [options]\n"
			    "       droce-perf [EAL args --] -m reg [-s bytes]\n"
			    "       droce-perf [EAL args --] -m post [-s size] [-d depth] [-p inline|lcore] "
			    "[-T threads,...] [-D seconds] [-B batch] [-a]\ntests: %s", perf_test_names);
		}
	}
	if (strcmp(mode, "post") == 0) {
		if (!depth_set)
			depth = POST_QD;
		if (sizes)
			size = strtoul(sizes, NULL, 0);
		post_args_check();
	} else if (strcmp(mode, "tests") == 0 || strcmp(mode, "latbw") == 0) {
		for (int i = optind; i < argc; i++) {
			size_t l = strlen(tests_buf);

			snprintf(tests_buf + l, sizeof(tests_buf) - l, "%s%s", l ? "," : "", argv[i]);
		}
		if (tests_buf[0])
			po.tests = tests_buf;
		if ((sizes || sweep) && perf_sizes_parse(&po, sizes ? sizes : "65536", sweep) != 0)
			die("-s: sizes from 0 to 64M, comma-separated, K and M suffixes: %s", sizes);
		if (po.qps < 1 || po.qps > MAX_QPS || po.post_list < 1 || po.post_list > 64 ||
		    po.cq_mod < 1 || po.cq_mod > 1024 || depth < 1 || depth > 4096 ||
		    po.post_list > depth || po.inline_size > 1024 || (dur_set && !(po.duration > 0)) ||
		    po.slots > 4096)
			die("-q 1..16384, -l 1..64 and at most -d, -Q 1..1024, -d 1..4096, -I up to 1024, "
			    "-D > 0, -b up to 4096");
		po.depth = depth;
		po.qp_timeout = qp_timeout;
		po.loss = loss;
	} else if (strcmp(mode, "reg") != 0) {
		die("-m: tests (the default), post or reg");
	}
	if (nthreads != 0 && (nthreads > DROCE_PERF_MAX_THREADS || !embedded || loss || pcapng ||
			      strcmp(mode, "tests") != 0 || server || peer_host))
		die("--threads 1..%d: the embedded default's tests, without -m, -L, --pcapng",
		    DROCE_PERF_MAX_THREADS);
	if (queues && nthreads == 0)
		die("--queues goes with --threads N: one pair of devices with N queues");
	if (server || peer_host) {
		if (server && peer_host)
			die("--server or --client, not both");
		if (embedded || strcmp(mode, "tests") != 0 || loss || pcapng)
			die("--server/--client: EAL arguments give the device (droce-perf <EAL args> "
			    "-- --server), for the tests (no -m, -L, --pcapng)");
	}
	if (embedded) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=droce-perf-%d", getpid());
		dflt[nd++] = argv[0];
		dflt[nd++] = "--no-huge";
		dflt[nd++] = "-m";
		dflt[nd++] = "512";
		dflt[nd++] = "--no-pci";
		dflt[nd++] = prefix;
		dflt[nd++] = "--log-level=lib.eal:error";
		dflt[nd++] = "--log-level=lib.telemetry:error";
		dflt[nd++] = "-l";
		inl = strcmp(prog, "inline") == 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2;
		dflt[nd++] = inl ? "0" : "0-1";
		if (nthreads != 0) {	/* an lcore a pair, each moving its own two devices */
			snprintf(lcores, sizeof(lcores), "0-%u", nthreads - 1);
			dflt[nd - 1] = lcores;
			inl = true;
		}
		if (rte_eal_init(nd, dflt) < 0)
			die("EAL init failed");
		droce_eal_files_remove_at_exit();
		if (nthreads != 0) {
			if (queues)
				queues_topology(nthreads);
			else
				threads_topology(nthreads);
			goto devices;
		}
		if (droce_ring_pair_create("net_ring_a", "net_ring_b"))
			die("cannot create the net_ring pair");
		if (loss) {
			char args[128];

			snprintf(args, sizeof(args), "ethdev=net_ring_a,drop=%s,seed=1", loss);
			if (droce_dev_create("net_impair0", args))
				die("bad loss %s", loss);
			snprintf(args, sizeof(args), "ethdev=net_ring_b,drop=%s,seed=2", loss);
			if (droce_dev_create("net_impair1", args))
				die("bad loss %s", loss);
		}
		char args0[PATH_MAX + 96];

		snprintf(args0, sizeof(args0), "ethdev=%s,ip=10.0.0.1,mtu=4200%s%s",
			 loss ? "net_impair0" : "net_ring_a", pcapng ? ",pcapng=" : "",
			 pcapng ? pcapng : "");
		if (droce_dev_create("droce0", args0) ||
		    droce_dev_create("droce1", loss ? "ethdev=net_impair1,ip=10.0.0.2,mtu=4200" :
				     "ethdev=net_ring_b,ip=10.0.0.2,mtu=4200"))
			die("cannot create the embedded net_ring topology");
		fprintf(po.json ? stderr : stdout,
			"embedded default: droce0 (10.0.0.1) <-> net_ring pair <-> droce1 (10.0.0.2), %s progress, loss %s\n",
			inl ? "inline" : "engine lcore", loss ? loss : "0");
	}
devices:
	list = ibv_get_device_list(&ndev);
	if (nthreads != 0) {
		struct ibv_device *d[2 * DROCE_PERF_MAX_THREADS];

		for (unsigned int i = 0; i < 2 * nthreads; i++) {
			char name[16];

			/* --queues: every lcore's pair is droce0 and droce1, on its own queues */
			snprintf(name, sizeof(name), "droce%u", queues ? i % 2 : i);
			d[i] = NULL;
			for (int k = 0; list != NULL && k < ndev; k++)
				if (strcmp(ibv_get_device_name(list[k]), name) == 0)
					d[i] = list[k];
			if (d[i] == NULL)
				die("--threads: no device %s", name);
		}
		po.progress = queues ? "inline (lcore=thread, queues=N: each lcore moves its own queue "
				       "of both devices)" :
				       "inline (lcore=thread: each pair moved by its own lcore)";
		perf_tests_run_threads(d, nthreads, &po);
		ibv_free_device_list(list);
		return 0;
	}
	if (server || peer_host) {
		int sock;

		if (list == NULL || ndev < 1)
			die("no droce device: give one in the EAL arguments");
		if (!server)
			perf_tests_check(&po, true);
		sock = server ? tcp_accept(port) : tcp_connect(peer_host, port);
		po.progress = "the devargs'";
		perf_tests_remote(list[0], &po, sock, server);
		if (xstats)
			dump_stats(1);
		close(sock);
		ibv_free_device_list(list);
		return 0;
	}
	if (list == NULL || ndev < 2)
		die("need two droce devices, found %d", list ? ndev : 0);
	if (strcmp(mode, "post") == 0) {
		run_post(list[0], list[1], !embedded ? "the devargs'" : inl ? "inline" : "engine lcore");
		ibv_free_device_list(list);
		return 0;
	}
	if (strcmp(mode, "reg") == 0) {
		run_reg(list[0], sizes ? strtoull(sizes, NULL, 0) : (size_t)1 << 30);
		ibv_free_device_list(list);
		return 0;
	}
	po.progress = !embedded ? "the devargs'" : inl ? "inline" : "engine lcore";
	perf_tests_run(list[0], list[1], &po);
	if (xstats)
		dump_stats(2);
	ibv_free_device_list(list);
	return 0;
}
