/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mp_stress: one side of a two-process RC stress test that uses nothing but
 * <infiniband/verbs.h> (the droce device comes from $DROCE_EAL, read by
 * ibv_get_device_list). Progress is inline: each side busy-polls its CQs.
 *
 *   mp_stress server|client <tcp port> [--ops N] [--seed S] [--timeout sec]
 *             [--depth D] [--peer addr] [--sessions N] [--peer-may-die K,...]
 *             [--leak-check | --leak-check-droce]
 *
 * Both sides exchange QPN, PSN, GID, MTU, rkey and the address of the
 * server's target area over TCP, connect one RC QP each (GID index 0,
 * RoCEv2), and derive the same list of N operations from the seed (op i
 * depends only on the seed, i and the path MTU). The client posts them,
 * keeping up to D signaled WRs in flight:
 *
 *   SEND [WITH_IMM]  0 .. 64 KiB gathered from two SGEs (split at a random
 *                    point, a random gap between them); imm = op index
 *   WRITE + READ     1 .. 64 KiB at a random offset of the server's area,
 *                    then a READ of the same range into another buffer,
 *                    chained in one post; the READ must return what the
 *                    WRITE wrote. A WRITE that overlaps a READ still in
 *                    flight is FENCEd (IBA lets a later WRITE overtake an
 *                    earlier READ's data fetch; the fence forbids it).
 *   FETCH_AND_ADD /  on 4 counters of the server's area; the client keeps
 *   CMP_AND_SWP      their exact values, so the original value each atomic
 *                    returns is known and checked.
 *
 * The server keeps 64 receives of 64 KiB posted and checks every receive
 * against the plan: status, opcode, byte_len, the immediate flag and value,
 * every byte, nothing written past byte_len, and the receive queue's order.
 * At the end the client sends its count of SENDs, the counters and its
 * shadow of the written area; the server compares them with its memory and
 * answers. A failure on the server is sent to the client at once.
 *
 * The plan has the larger of the two sides' --ops (the server's only when
 * given), and the client's seed.
 *
 * Sessions: the process opens the device once, then runs --sessions N
 * sessions one after another, each with its own TCP connection (the server
 * listens once and accepts one client per session; the client connects per
 * session, retrying), its own QP, CQs and MR, torn down at the session's end
 * (QP to ERR, outstanding WRs flushed, then destroyed). Session k of the
 * client uses seed S + k - 1. Each session ends with one line:
 *
 *   session K: PASS
 *   session K: peer gone (<how>)   only in a session listed in --peer-may-die
 *   session K: FAIL (exit C)       and the process exits C at once
 *
 * --peer-may-die K,...: in those sessions the peer process may be killed
 * mid-transfer. Its death (the TCP connection closing, then, on the side
 * that sends, an error completion such as IBV_WC_RETRY_EXC_ERR, or no
 * completion for a few seconds) ends the session without a failure; what
 * was checked before it stays checked, and anything else that goes wrong
 * (wrong data, an error completion while the TCP peer is alive, a failure
 * the peer reported) is still a failure.
 *
 * In such a session the first error completion is reported with its time
 * (CLOCK_REALTIME, for the script that killed the peer) and the RC retry
 * budget, timeout x (retry_cnt + 1):
 *
 *   session K: first error completion on WR W at realtime T, D s after the
 *   last successful completion; RC budget B ms; status <ibv_wc_status_str>
 *
 * and at the end of every session the WRs still outstanding are flushed
 * (the QP moved to ERR, if the engine had not) and counted by status.
 *
 * --leak-check: the process records what it holds after opening the device
 * and before the first session (droce's object counts and mbuf pool level,
 * every mempool, memzone and rte_malloc object: mp_levels_get()), and after
 * every session's teardown checks that it is back there:
 *
 *   leak check after session K: PASS (<levels>)
 *   leak check after session K: FAIL (<what differs>)   and exit 1
 *
 * --leak-check-droce: the same for droce's objects and the mempools only; a
 * memif port allocates and frees DPDK memory as its peers come and go.
 *
 * Exit: 0 every session passed (or, if listed, its peer went away); 1 a
 * failed WR, wrong data or a protocol error; 2 a stall (no completion for
 * --timeout seconds); 3 the watchdog fired.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mp_common.h"

#define MS_MAGIC	0x6d537472u	/* "mStr" */
#define MS_MAX_MSG	65536u		/* largest SEND / WRITE / READ */
#define MS_SLOT		(MS_MAX_MSG + 8192u) /* a buffer slot: message, gap, canary */
#define MS_CANARY	0xa5
#define MS_CANARY_LEN	64u
#define MS_NCTR		4		/* atomic counters */
#define MS_CTR_PAGE	4096u		/* counters at the start of the area */
#define MS_AREA		(1u << 20)	/* WRITE / READ target after the counters */
#define MS_RECV_SLOTS	64u
/* the MR's and the QP's access */
#define MS_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

enum { OP_SEND, OP_WRITE_READ, OP_FAA, OP_CAS };

static const char *const op_names[] = { "SEND", "WRITE+READ", "FETCH_ADD", "CMP_SWAP" };

static struct {
	int role;
	const char *port;
	const char *peer;
	uint32_t ops;
	uint64_t seed;
	unsigned int timeout;
	uint32_t depth;
	bool ops_set;		/* --ops given */
	bool leak_check;	/* --leak-check */
	bool leak_droce_only;	/* --leak-check-droce */
	uint32_t sessions;
	uint8_t *may_die;	/* [1..sessions]: --peer-may-die */
} opt = {
	.peer = "127.0.0.1",
	.ops = 3000,
	.seed = 1,
	.timeout = 60,
	.depth = 16,
	.sessions = 1,
};

#define MS_MAX_SESSIONS	100000u
/* a peer whose TCP connection closed: how long to wait for the QP to say so */
#define MS_GONE_GRACE	5.0
/* RC local ACK timeout (4.096 us x 2^10 = 4.2 ms) and retries */
#define MS_RC_TIMEOUT	10
#define MS_RC_RETRY	7

static uint32_t cur_session;	/* 1-based, 0 outside a session */
static bool may_die_now;	/* cur_session is listed in --peer-may-die */
static jmp_buf session_jb;	/* peer_gone() returns here */
static char gone_how[300];

/* --- TCP messages (network byte order) --- */
struct msg_hello {
	uint32_t magic;
	uint32_t qpn;
	uint32_t psn;
	uint32_t mtu;		/* enum ibv_mtu */
	uint32_t rkey;
	uint32_t addr_hi, addr_lo;	/* server: its area (counters, then MS_AREA) */
	uint32_t ops;		/* client: the plan */
	uint32_t seed_hi, seed_lo;
	uint8_t gid[16];
};

struct msg_ready {
	uint32_t magic;
	uint32_t ok;
};

/* client -> server, followed by MS_AREA bytes: the client's shadow of the area */
struct msg_done {
	uint32_t magic;
	uint32_t ops;
	uint32_t sends;
	uint32_t ctr_hi[MS_NCTR], ctr_lo[MS_NCTR];
};

/* server -> client: at the end, or at once when the server fails */
struct msg_result {
	uint32_t magic;
	uint32_t ok;
	uint32_t received;
	char detail[244];
};

/* --- helpers --- */
/* A failure: name the session (mp_fail_exit() then exits). */
static void
session_failed(int code)
{
	if (cur_session)
		say("session %u: FAIL (exit %d)", cur_session, code);
}

/*
 * The peer went away in a session listed in --peer-may-die: record how and
 * end the session (back to run_sessions(), which tears it down). Only call
 * it when may_die_now.
 */
static void __attribute__((noreturn, format(printf, 1, 2)))
peer_gone(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(gone_how, sizeof(gone_how), fmt, ap);
	va_end(ap);
	longjmp(session_jb, 1);
}

/* "TCP EOF" or the error of the last failed read_all() / write_all() */
static const char *
tcp_how(int err)
{
	static char b[80];

	if (mp_tcp_eof)
		return "TCP EOF";
	snprintf(b, sizeof(b), "TCP %s", strerror(err));
	return b;
}

/* Re-arm the watchdog, at most once a second: it only catches a hang inside a call. */
static void
pet_watchdog(void)
{
	static double last;
	double t = now_s();

	if (t - last > 1) {
		alarm(opt.timeout + 30);
		last = t;
	}
}

struct rng {
	uint64_t s;
};

static uint64_t
rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return splitmix64(r->s);
}

/* uniform in [lo, hi] */
static uint32_t
rnd_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd(r) % ((uint64_t)hi - lo + 1));
}

#define SALT_SEND	0x53454e4400000000ULL
#define SALT_WRITE	0x5752495400000000ULL

/* The payload of op @idx: a pattern from (seed, salt, idx); its first 4 bytes are idx (LE). */
static void
fill_payload(uint8_t *p, size_t len, uint64_t seed, uint64_t salt, uint32_t idx)
{
	mp_fill_pattern(p, len, seed ^ salt, idx);
	if (len >= 4)
		for (int b = 0; b < 4; b++)
			p[b] = (uint8_t)(idx >> (8 * b));
}

/* --- the plan: op i from (seed, i, mtu) only --- */
struct op {
	uint8_t kind;
	bool imm;		/* SEND: with immediate (imm = op index) */
	uint32_t size;		/* SEND / WRITE / READ bytes */
	uint32_t split;		/* SEND: bytes in the first SGE (size < 2: one SGE or none) */
	uint32_t gap;		/* SEND: bytes between the two SGEs in the buffer */
	uint32_t off;		/* WRITE / READ: offset in the area */
	uint32_t ctr;		/* atomics: counter index */
	bool hit;		/* CAS: compare with the current value */
	uint64_t v1;		/* FAA: add; CAS: swap */
	uint64_t v2;		/* CAS miss: xor making the compare value wrong (non-zero) */
};

/* Many small, some around MTU multiples, some medium, some large, a few at the maximum. */
static uint32_t
pick_size(struct rng *r, uint32_t mtu, uint32_t min)
{
	static const uint32_t mult[] = { 1, 2, 3, 4, 8, 16, 63, 64 };
	uint32_t c = rnd_range(r, 0, 99), s;
	int64_t v;

	if (c < 35) {
		s = rnd_range(r, 0, 64);
	} else if (c < 60) {
		v = (int64_t)mult[rnd_range(r, 0, 7)] * mtu + (int64_t)rnd_range(r, 0, 4) - 2;
		s = v < 0 ? 0 : v > MS_MAX_MSG ? MS_MAX_MSG : (uint32_t)v;
	} else if (c < 85) {
		s = rnd_range(r, 65, 8192);
	} else if (c < 95) {
		s = rnd_range(r, 8193, MS_MAX_MSG);
	} else {
		s = MS_MAX_MSG;
	}
	return s < min ? min : s;
}

static void
gen_op(uint64_t seed, uint32_t i, uint32_t mtu, struct op *o)
{
	struct rng r = { splitmix64(seed ^ splitmix64(0x6f70000000000000ULL + i)) };
	uint32_t c = rnd_range(&r, 0, 99);

	memset(o, 0, sizeof(*o));
	if (c < 45) {
		o->kind = OP_SEND;
		o->size = pick_size(&r, mtu, 0);
		o->imm = rnd_range(&r, 0, 2) == 0;
		o->split = o->size >= 2 ? rnd_range(&r, 1, o->size - 1) : o->size;
		o->gap = rnd_range(&r, 0, 4095);
	} else if (c < 75) {
		o->kind = OP_WRITE_READ;
		o->size = pick_size(&r, mtu, 1);
		o->off = rnd_range(&r, 0, MS_AREA - o->size);
	} else if (c < 88) {
		o->kind = OP_FAA;
		o->ctr = rnd_range(&r, 0, MS_NCTR - 1);
		o->v1 = rnd_range(&r, 0, 1) ? rnd(&r) : rnd_range(&r, 0, 1000);
	} else {
		o->kind = OP_CAS;
		o->ctr = rnd_range(&r, 0, MS_NCTR - 1);
		o->hit = rnd_range(&r, 0, 1);
		o->v1 = rnd(&r);
		o->v2 = rnd(&r) | 1;
	}
}

static struct op *
make_plan(uint64_t seed, uint32_t n, uint32_t mtu, uint32_t *sends)
{
	struct op *plan = calloc(n ? n : 1, sizeof(*plan));

	if (plan == NULL)
		die("out of memory");
	*sends = 0;
	for (uint32_t i = 0; i < n; i++) {
		gen_op(seed, i, mtu, &plan[i]);
		*sends += plan[i].kind == OP_SEND;
	}
	return plan;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: mp_stress server|client <tcp port> [--ops N] [--seed S] [--timeout sec]\n"
		"       [--depth D] [--peer addr] [--sessions N] [--peer-may-die K,...]\n"
		"       [--leak-check | --leak-check-droce]\n"
		"EAL arguments (and the droce vdev) come from $DROCE_EAL. The plan has the\n"
		"larger of both sides' --ops (the server's only if given) and the client's\n"
		"seed (+ session - 1). --peer-may-die: sessions (1-based) in which the peer\n"
		"process may be killed; its death there ends the session, not as a failure.\n"
		"--leak-check: after every session, droce's objects and DPDK's memory must be\n"
		"back where they were before the first; --leak-check-droce: droce's objects and\n"
		"the mempools only (a memif port allocates DPDK memory as peers come and go).\n");
	exit(1);
}

static void
parse_args(int argc, char **argv)
{
	const char *may_die_arg = NULL;

	opt.role = mp_parse_role(argc, argv, "mp_stress");
	if (opt.role < 0)
		usage();
	opt.port = argv[2];
	for (int i = 3; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--leak-check") == 0 || strcmp(a, "--leak-check-droce") == 0) {
			opt.leak_check = true;
			opt.leak_droce_only = strcmp(a, "--leak-check-droce") == 0;
			i--;		/* a flag: no value */
			continue;
		}
		if (v == NULL)
			usage();
		if (strcmp(a, "--ops") == 0) {
			opt.ops = strtoul(v, NULL, 0);
			opt.ops_set = true;
		} else if (strcmp(a, "--sessions") == 0)
			opt.sessions = strtoul(v, NULL, 0);
		else if (strcmp(a, "--peer-may-die") == 0)
			may_die_arg = v;
		else if (strcmp(a, "--seed") == 0)
			opt.seed = strtoull(v, NULL, 0);
		else if (strcmp(a, "--timeout") == 0)
			opt.timeout = strtoul(v, NULL, 0);
		else if (strcmp(a, "--depth") == 0)
			opt.depth = strtoul(v, NULL, 0);
		else if (strcmp(a, "--peer") == 0)
			opt.peer = v;
		else
			usage();
	}
	if (opt.ops == 0 || opt.ops > 10000000 || opt.timeout == 0 || opt.timeout > 3600 ||
	    opt.depth < 2 || opt.depth > 1024 || opt.sessions == 0 || opt.sessions > MS_MAX_SESSIONS)
		usage();
	opt.may_die = calloc(opt.sessions + 1, 1);
	if (opt.may_die == NULL)
		die("out of memory");
	for (const char *q = may_die_arg; q != NULL && *q != '\0';) {
		char *end;
		unsigned long k = strtoul(q, &end, 10);

		if (end == q || k == 0 || k > opt.sessions || (*end != ',' && *end != '\0')) {
			fprintf(stderr, "--peer-may-die %s: a comma list of sessions 1..%u\n",
				may_die_arg, opt.sessions);
			exit(1);
		}
		opt.may_die[k] = 1;
		q = *end == ',' ? end + 1 : end;
	}
}

/* --- verbs set-up --- */
static void
create_qp(struct mp_res *r, uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr qa = { 0 };

	mp_create_cqs(r, send_wr + 16, recv_wr + 16);
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = r->scq;
	qa.recv_cq = r->rcq;
	qa.cap.max_send_wr = send_wr;
	qa.cap.max_recv_wr = recv_wr;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 0;
	r->qp = ibv_create_qp(r->pd, &qa);
	if (r->qp == NULL)
		die("ibv_create_qp(send %u, recv %u): %s", send_wr, recv_wr, strerror(errno));
}

/* path MTU: the smaller of the two active MTUs */
static enum ibv_mtu
path_mtu(const struct mp_res *r, const struct msg_hello *peer)
{
	return mp_path_mtu(r->mtu, ntohl(peer->mtu));
}

static void
connect_qp(struct mp_res *r, const struct msg_hello *peer, uint32_t my_psn)
{
	static const struct mp_rc_attr rc = {
		.access = MS_ACCESS, .rd_atomic = 16, .min_rnr_timer = 12,
		.timeout = MS_RC_TIMEOUT, .retry_cnt = MS_RC_RETRY, .rnr_retry = 7,
	};
	struct mp_rc_peer p = { ntohl(peer->qpn), ntohl(peer->psn), path_mtu(r, peer), peer->gid };

	mp_rc_connect(r->qp, &p, my_psn, &rc);
}

/*
 * End a session's QP: to ERR (unless it is there already), then poll until
 * @sq_out send and @rq_out receive WRs have been flushed (at most 2 s).
 */
static void
flush_qp(struct mp_res *r, uint32_t sq_out, uint32_t rq_out)
{
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp_init_attr ia;
	uint32_t sn = 0, rn = 0, other = 0;
	enum ibv_wc_status first_other = IBV_WC_SUCCESS;
	double until = now_s() + 2;
	int ret;

	if (r->qp == NULL)
		return;
	if (ibv_query_qp(r->qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_RESET)
		return;		/* never connected: nothing posted (and RESET -> ERR is no transition) */
	if (a.qp_state != IBV_QPS_ERR) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_ERR;
		ret = ibv_modify_qp(r->qp, &a, IBV_QP_STATE);
		if (ret) {
			say("session %u: modify_qp ERR: %s", cur_session, strerror(ret));
			return;
		}
	}
	while ((sn < sq_out || rn < rq_out) && now_s() < until) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(r->scq, 16, wc);

		sn += n > 0 ? n : 0;
		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_WR_FLUSH_ERR && other++ == 0)
				first_other = wc[k].status;
		n = ibv_poll_cq(r->rcq, 16, wc);
		rn += n > 0 ? n : 0;
		/* receives that completed before the QP went to ERR may come first */
		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_WR_FLUSH_ERR && other++ == 0)
				first_other = wc[k].status;
	}
	if (sq_out || rq_out) {
		char more[80] = "";

		if (other)
			snprintf(more, sizeof(more), ", %u otherwise (the first %s)", other,
				 ibv_wc_status_str(first_other));
		say("session %u: of the %u send and %u receive WRs outstanding at its end, %u and "
		    "%u completed, %u with IBV_WC_WR_FLUSH_ERR%s", cur_session, sq_out, rq_out, sn,
		    rn, sn + rn - other, more);
	}
	if (sn < sq_out || rn < rq_out)
		say("session %u: note: after the QP went to ERR only %u/%u send and %u/%u receive WRs "
		    "were flushed within 2 s", cur_session, sn, sq_out, rn, rq_out);
}

static void
make_hello(struct msg_hello *h, const struct mp_res *r, uint32_t psn, uint64_t addr, uint32_t ops,
	   uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	h->magic = htonl(MS_MAGIC);
	h->qpn = htonl(r->qp->qp_num);
	h->psn = htonl(psn);
	h->mtu = htonl(r->mtu);
	h->rkey = htonl(r->mr->rkey);
	h->addr_hi = htonl(addr >> 32);
	h->addr_lo = htonl((uint32_t)addr);
	h->ops = htonl(ops);
	h->seed_hi = htonl(seed >> 32);
	h->seed_lo = htonl((uint32_t)seed);
	memcpy(h->gid, r->gid.raw, 16);
}

static void
check_hello(const struct msg_hello *h)
{
	char g[INET6_ADDRSTRLEN];

	if (ntohl(h->magic) != MS_MAGIC)
		die("bad hello from the peer");
	inet_ntop(AF_INET6, h->gid, g, sizeof(g));
	say("peer QPN 0x%06x PSN 0x%06x GID %s MTU %u", ntohl(h->qpn), ntohl(h->psn), g,
	    mtu_bytes((enum ibv_mtu)ntohl(h->mtu)));
}

/* Describe the first difference between @got and @want (@len bytes). */
static void
describe_diff(char *why, size_t wlen, const char *what, const uint8_t *got,
	      const uint8_t *want, uint32_t len)
{
	uint32_t j = 0, n = 0;

	while (j < len && got[j] == want[j])
		j++;
	for (uint32_t k = j; k < len; k++)
		n += got[k] != want[k];
	snprintf(why, wlen, "%s differs at byte %u of %u (0x%02x, expected 0x%02x; %u bytes differ)%s",
		 what, j, len, got[j], want[j], n,
		 j < 4 && len >= 4 ? " [op index in the first 4 bytes is wrong]" : "");
}

/* ================================ server ================================ */

static struct mp_res dev;		/* the device and PD, open for all sessions */

static int
server_fail(int fd, uint32_t received, int code, const char *fmt, ...)
{
	struct msg_result res = { htonl(MS_MAGIC), htonl(0), htonl(received), "" };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res.detail, sizeof(res.detail), fmt, ap);
	va_end(ap);
	say("%s", res.detail);
	if (fd >= 0 && write_all(fd, &res, sizeof(res)))
		say("could not tell the client: %s", strerror(errno));
	return code;
}

/* What a server session holds: torn down by end_session(), also after peer_gone(). */
static struct server {
	struct mp_res r;
	int fd;
	struct op *plan;
	uint32_t *sidx, *rq_fifo;
	uint8_t *expect, *shadow;
	uint32_t posted, received;	/* receives */
} sv;

static int
run_server_session(int lfd)
{
	struct msg_hello mine, peer;
	struct msg_ready ready = { htonl(MS_MAGIC), htonl(1) };
	struct msg_done done;
	struct msg_result res = { 0 };
	uint32_t psn = rand_psn(), nsends, mtu, ops;
	uint32_t rq_head = 0, rq_tail = 0;
	uint64_t seed, bytes = 0, area_addr;
	uint8_t *area;
	int fd, rc;
	bool got_done = false;
	double t0, last, deadline, done_at = 0, dt;

	fd = sv.fd = mp_tcp_accept(lfd, opt.timeout);
	/* the last session: stop listening, or a client's next connect lands here */
	if (cur_session == opt.sessions)
		close(lfd);

	deadline = now_s() + opt.timeout;
	if (read_all(fd, &peer, sizeof(peer), deadline)) {
		if (may_die_now)
			peer_gone("%s before its hello", tcp_how(errno));
		die("reading the client's hello: %s", strerror(errno));
	}
	check_hello(&peer);
	ops = ntohl(peer.ops);
	seed = (uint64_t)ntohl(peer.seed_hi) << 32 | ntohl(peer.seed_lo);
	if (ops == 0 || ops > 10000000)
		die("bad plan from the client (%u ops)", ops);
	if (opt.ops_set && opt.ops > ops)
		ops = opt.ops;

	/* receive slots, then the counters page and the area the client writes */
	create_qp(&sv.r, 4, MS_RECV_SLOTS);
	mp_reg_buf(&sv.r, (size_t)MS_RECV_SLOTS * MS_SLOT + MS_CTR_PAGE + MS_AREA, MS_CANARY,
		   MS_ACCESS);
	area = sv.r.buf + (size_t)MS_RECV_SLOTS * MS_SLOT;
	memset(area, 0, MS_CTR_PAGE + MS_AREA);
	area_addr = (uintptr_t)area;
	sv.expect = malloc(MS_MAX_MSG);
	sv.shadow = malloc(MS_AREA);
	sv.rq_fifo = calloc(MS_RECV_SLOTS, sizeof(*sv.rq_fifo));
	if (sv.expect == NULL || sv.shadow == NULL || sv.rq_fifo == NULL)
		die("out of memory");

	make_hello(&mine, &sv.r, psn, area_addr, opt.ops_set ? opt.ops : 0, 0);
	if (write_all(fd, &mine, sizeof(mine))) {
		if (may_die_now)
			peer_gone("%s sending our hello", tcp_how(errno));
		die("sending hello: %s", strerror(errno));
	}
	mtu = mtu_bytes(path_mtu(&sv.r, &peer));
	sv.plan = make_plan(seed, ops, mtu, &nsends);
	sv.sidx = calloc(nsends ? nsends : 1, sizeof(*sv.sidx));
	if (sv.sidx == NULL)
		die("out of memory");
	for (uint32_t i = 0, k = 0; i < ops; i++)
		if (sv.plan[i].kind == OP_SEND)
			sv.sidx[k++] = i;
	say("RC QPN 0x%06x, %u ops (%u SENDs), path MTU %u, %u receive slots of %u B, seed %" PRIu64,
	    sv.r.qp->qp_num, ops, nsends, mtu, MS_RECV_SLOTS, MS_MAX_MSG, seed);
	connect_qp(&sv.r, &peer, psn);
	for (; sv.posted < MS_RECV_SLOTS; sv.posted++) {
		struct ibv_sge sge = { (uintptr_t)sv.r.buf + (size_t)sv.posted * MS_SLOT, MS_MAX_MSG,
				       sv.r.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = sv.posted, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
		int ret = ibv_post_recv(sv.r.qp, &wr, &bad);

		if (ret)
			die("ibv_post_recv: %s", strerror(ret));
		sv.rq_fifo[rq_tail++ % MS_RECV_SLOTS] = sv.posted;
	}
	mp_wait_port_active(&sv.r, deadline, opt.timeout);
	if (write_all(fd, &ready, sizeof(ready))) {
		if (may_die_now)
			peer_gone("%s sending ready", tcp_how(errno));
		die("sending ready: %s", strerror(errno));
	}

	t0 = last = now_s();
	for (;;) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(sv.r.rcq, 16, wc);

		if (n < 0)
			return server_fail(fd, sv.received, 1, "ibv_poll_cq: %d", n);
		if (n > 0) {
			last = now_s();
			pet_watchdog();
		}
		for (int k = 0; k < n; k++) {
			struct ibv_wc *w = &wc[k];
			uint32_t s = sv.received, i, slot = sv.rq_fifo[rq_head % MS_RECV_SLOTS];
			const struct op *o;
			uint8_t *p;
			char why[200] = "";

			if (s >= nsends)
				return server_fail(fd, sv.received, 1, "receive completion %u, but the plan has "
						   "only %u SENDs (status %s, byte_len %u)", s + 1, nsends,
						   ibv_wc_status_str(w->status), w->byte_len);
			i = sv.sidx[s];
			o = &sv.plan[i];
			if (w->status != IBV_WC_SUCCESS)
				return server_fail(fd, sv.received, 1, "SEND %u/%u (op %u/%u, %u B): receive "
						   "completed with %s (vendor_err 0x%x)", s, nsends, i, ops,
						   o->size, ibv_wc_status_str(w->status), w->vendor_err);
			if (w->wr_id != slot)
				return server_fail(fd, sv.received, 1, "SEND %u/%u (op %u): receive wr_id %" PRIu64
						   ", expected %u: the receive queue completed out of order",
						   s, nsends, i, w->wr_id, slot);
			p = sv.r.buf + (size_t)slot * MS_SLOT;
			if (w->opcode != IBV_WC_RECV)
				snprintf(why, sizeof(why), "opcode %d, not IBV_WC_RECV", w->opcode);
			else if (w->qp_num != sv.r.qp->qp_num)
				snprintf(why, sizeof(why), "wc.qp_num 0x%x, our QP is 0x%x", w->qp_num,
					 sv.r.qp->qp_num);
			else if (w->byte_len != o->size)
				snprintf(why, sizeof(why), "byte_len %u, expected %u%s", w->byte_len, o->size,
					 w->byte_len >= 4 ? " (first 4 bytes: see below)" : "");
			else if (!!(w->wc_flags & IBV_WC_WITH_IMM) != o->imm ||
				 (o->imm && ntohl(w->imm_data) != i))
				snprintf(why, sizeof(why), "immediate: wc_flags 0x%x imm 0x%08x, expected %s %u",
					 w->wc_flags, ntohl(w->imm_data), o->imm ? "imm" : "no imm", i);
			if (why[0] == '\0') {
				fill_payload(sv.expect, o->size, seed, SALT_SEND, i);
				if (memcmp(p, sv.expect, o->size) != 0)
					describe_diff(why, sizeof(why), "payload", p, sv.expect, o->size);
			}
			if (why[0] == '\0')
				for (uint32_t j = o->size; j < o->size + MS_CANARY_LEN; j++)
					if (p[j] != MS_CANARY) {
						snprintf(why, sizeof(why), "written past byte_len (byte %u)", j);
						break;
					}
			if (why[0]) {
				uint32_t got_idx = w->byte_len >= 4 ? p[0] | p[1] << 8 | p[2] << 16 |
						   (uint32_t)p[3] << 24 : UINT32_MAX;

				return server_fail(fd, sv.received, 1, "SEND %u/%u (op %u/%u, %u B, %s): %s; "
						   "its first 4 bytes say op %d", s, nsends, i, ops, o->size,
						   o->imm ? "with imm" : "no imm", why,
						   got_idx == UINT32_MAX ? -1 : (int)got_idx);
			}
			sv.received++;
			rq_head++;
			bytes += o->size;
			/* re-arm the slot: canary where the message was, then post it again */
			memset(p, MS_CANARY, o->size + MS_CANARY_LEN);
			{
				struct ibv_sge sge = { (uintptr_t)p, MS_MAX_MSG, sv.r.mr->lkey };
				struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 },
					*bad = NULL;
				int ret = ibv_post_recv(sv.r.qp, &wr, &bad);

				if (ret)
					return server_fail(fd, sv.received, 1, "ibv_post_recv: %s", strerror(ret));
				sv.rq_fifo[rq_tail++ % MS_RECV_SLOTS] = slot;
				sv.posted++;
			}
		}
		if (!got_done && readable(fd)) {
			if (read_all(fd, &done, sizeof(done), now_s() + opt.timeout)) {
				if (may_die_now)
					peer_gone("%s after %u/%u SENDs arrived intact", tcp_how(errno),
						  sv.received, nsends);
				return server_fail(-1, sv.received, 1, "the client went away (it failed or "
						   "stalled; see its log) after %u/%u SENDs arrived: %s",
						   sv.received, nsends, strerror(errno));
			}
			if (ntohl(done.magic) != MS_MAGIC)
				return server_fail(-1, sv.received, 1, "bad final report from the client");
			if (read_all(fd, sv.shadow, MS_AREA, now_s() + opt.timeout)) {
				if (may_die_now)
					peer_gone("%s in the client's final report, after %u/%u SENDs "
						  "arrived intact", tcp_how(errno), sv.received, nsends);
				return server_fail(-1, sv.received, 1, "reading the client's shadow area: %s",
						   strerror(errno));
			}
			got_done = true;
			done_at = now_s();
			if (ntohl(done.ops) != ops || ntohl(done.sends) != nsends)
				return server_fail(fd, sv.received, 1, "client reports %u ops, %u SENDs; "
						   "the plan has %u, %u", ntohl(done.ops),
						   ntohl(done.sends), ops, nsends);
		}
		if (got_done && sv.received == nsends)
			break;
		/* every SEND acknowledged, yet not all received: stragglers get 2 s */
		if (got_done && now_s() - done_at > 2)
			return server_fail(fd, sv.received, 1, "all SENDs completed at the client, but "
					   "only %u/%u arrived here", sv.received, nsends);
		/* the client reports its own stall first; this catches a hung client */
		if (now_s() - last > opt.timeout + 15)
			return server_fail(fd, sv.received, 2, "stalled: no receive completion for %.0f s "
					   "after SEND %u/%u (op %u/%u) (posted %u receives, completed %u)",
					   now_s() - last, sv.received, nsends,
					   sv.received < nsends ? sv.sidx[sv.received] : ops, ops, sv.posted,
					   sv.received);
	}
	dt = now_s() - t0;

	/* the counters and the area against the client's bookkeeping */
	for (uint32_t c = 0; c < MS_NCTR; c++) {
		uint64_t want = (uint64_t)ntohl(done.ctr_hi[c]) << 32 | ntohl(done.ctr_lo[c]), got;

		memcpy(&got, area + 8 * c, 8);
		if (got != want)
			return server_fail(fd, sv.received, 1, "counter %u is 0x%016" PRIx64 ", the client "
					   "expects 0x%016" PRIx64, c, got, want);
	}
	for (uint32_t j = 8 * MS_NCTR; j < MS_CTR_PAGE; j++)
		if (area[j] != 0)
			return server_fail(fd, sv.received, 1, "counters page byte %u changed (0x%02x)",
					   j, area[j]);
	if (memcmp(area + MS_CTR_PAGE, sv.shadow, MS_AREA) != 0) {
		char why[200];

		describe_diff(why, sizeof(why), "written area", area + MS_CTR_PAGE, sv.shadow, MS_AREA);
		return server_fail(fd, sv.received, 1, "%s", why);
	}

	res.magic = htonl(MS_MAGIC);
	res.ok = htonl(1);
	res.received = htonl(sv.received);
	snprintf(res.detail, sizeof(res.detail), "%u/%u SENDs intact and in order, %u counters and "
		 "the %u KiB area as expected", sv.received, nsends, MS_NCTR, MS_AREA >> 10);
	say("%s; %" PRIu64 " SEND bytes in %.3f s", res.detail, bytes, dt);
	rc = write_all(fd, &res, sizeof(res)) ? 1 : 0;
	if (rc) {
		if (may_die_now)
			peer_gone("%s sending the result (everything checked out)", tcp_how(errno));
		say("sending the result failed: %s", strerror(errno));
	}
	/* let the client read the result before the QP goes away */
	{
		char c;

		read_all(fd, &c, 1, now_s() + 5);
	}
	return rc;
}

/* ================================ client ================================ */

/* one posted WR; the ring is indexed by WR sequence % depth (RC completes in order) */
struct wr_rec {
	uint32_t op;
	uint8_t kind;		/* OP_*; OP_WRITE_READ is the WRITE, kind_read the READ */
	bool read;
	uint32_t size, off;
	uint64_t expect;	/* atomics: the original value */
};

struct client {
	struct mp_res r;
	struct op *plan;
	struct wr_rec *ring;
	uint8_t *shadow;	/* what the server's area must hold */
	uint8_t *scratch;
	uint64_t ctr[MS_NCTR];
	uint64_t rkey, area;	/* server's */
	uint32_t depth, posted, completed, next_op, sends, fences, nsends;
	uint32_t ops;		/* this session's plan */
	uint64_t seed;
	uint64_t bytes;
	int fd;
	double last;
	double tcp_gone;	/* when the server's TCP connection closed (--peer-may-die), or 0 */
	char tcp_how[80];	/* how it closed */
};

/* the session being run: torn down by end_session(), also after peer_gone() */
static struct client cl;

static uint8_t *
slot_buf(struct client *c, uint32_t seq)
{
	return c->r.buf + (size_t)(seq % c->depth) * MS_SLOT;
}

static const char *
wc_opcode_name(enum ibv_wc_opcode o)
{
	switch (o) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	default: return "?";
	}
}

static const char *
rec_name(const struct wr_rec *w)
{
	return w->kind == OP_WRITE_READ ? (w->read ? "READ" : "WRITE") : op_names[w->kind];
}

/*
 * Did the server fail and say so? Then print it and exit 1. With @wait, give
 * it a moment first (we failed: did it see why?). In a --peer-may-die
 * session, a connection that closed without a word only sets c->tcp_gone.
 */
static void
check_server_abort(struct client *c, int wait_ms)
{
	struct msg_result res;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

	if (c->tcp_gone || poll(&pfd, 1, wait_ms) <= 0)
		return;
	if (read_all(c->fd, &res, sizeof(res), now_s() + 5) || ntohl(res.magic) != MS_MAGIC) {
		if (may_die_now) {
			c->tcp_gone = now_s();
			snprintf(c->tcp_how, sizeof(c->tcp_how), "%s", tcp_how(errno));
			return;
		}
		die("the server went away during op %u/%u (posted %u WRs, completed %u): see its log",
		    c->next_op, c->ops, c->posted, c->completed);
	}
	res.detail[sizeof(res.detail) - 1] = '\0';
	die("the server failed during op %u/%u (posted %u WRs, completed %u): %s", c->next_op,
	    c->ops, c->posted, c->completed, res.detail);
}

/* Post op i (1 WR, or 2 for WRITE+READ). */
static void
post_op(struct client *c, uint32_t i)
{
	const struct op *o = &c->plan[i];
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_sge sge[2][2];
	uint32_t seq = c->posted, nwr = 1;
	struct wr_rec *rec = &c->ring[seq % c->depth];
	uint8_t *p = slot_buf(c, seq);
	int ret;

	memset(wr, 0, sizeof(wr));
	memset(rec, 0, sizeof(*rec));
	rec->op = i;
	rec->kind = o->kind;
	rec->size = o->size;
	rec->off = o->off;
	wr[0].wr_id = seq;
	wr[0].sg_list = sge[0];
	wr[0].send_flags = IBV_SEND_SIGNALED;
	switch (o->kind) {
	case OP_SEND:
		/* two SGEs with a gap between them in the buffer (one for 1 B, none for 0 B) */
		fill_payload(c->scratch, o->size, c->seed, SALT_SEND, i);
		memcpy(p, c->scratch, o->split);
		memcpy(p + o->split + o->gap, c->scratch + o->split, o->size - o->split);
		sge[0][0] = (struct ibv_sge){ (uintptr_t)p, o->split, c->r.mr->lkey };
		sge[0][1] = (struct ibv_sge){ (uintptr_t)p + o->split + o->gap, o->size - o->split,
					      c->r.mr->lkey };
		wr[0].num_sge = o->size >= 2 ? 2 : o->size;
		wr[0].opcode = o->imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr[0].imm_data = htonl(i);
		c->sends++;
		c->bytes += o->size;
		break;
	case OP_WRITE_READ: {
		uint8_t *q = slot_buf(c, seq + 1);
		struct wr_rec *rrec = &c->ring[(seq + 1) % c->depth];

		fill_payload(p, o->size, c->seed, SALT_WRITE, i);
		/*
		 * A READ still in flight over this range may fetch its data after this
		 * WRITE executes (IBA ordering; a retried READ certainly would): fence.
		 */
		for (uint32_t s = c->completed; s != seq; s++) {
			const struct wr_rec *w = &c->ring[s % c->depth];

			if (w->kind == OP_WRITE_READ && w->read && w->off < o->off + o->size &&
			    o->off < w->off + w->size) {
				wr[0].send_flags |= IBV_SEND_FENCE;
				c->fences++;
				break;
			}
		}
		sge[0][0] = (struct ibv_sge){ (uintptr_t)p, o->size, c->r.mr->lkey };
		wr[0].num_sge = 1;
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = c->area + MS_CTR_PAGE + o->off;
		wr[0].wr.rdma.rkey = c->rkey;
		wr[0].next = &wr[1];
		memcpy(c->shadow + o->off, p, o->size);

		*rrec = *rec;
		rrec->read = true;
		memset(q, MS_CANARY, o->size + MS_CANARY_LEN);
		sge[1][0] = (struct ibv_sge){ (uintptr_t)q, o->size, c->r.mr->lkey };
		wr[1].wr_id = seq + 1;
		wr[1].sg_list = sge[1];
		wr[1].num_sge = 1;
		wr[1].opcode = IBV_WR_RDMA_READ;
		wr[1].send_flags = IBV_SEND_SIGNALED;
		wr[1].wr.rdma.remote_addr = c->area + MS_CTR_PAGE + o->off;
		wr[1].wr.rdma.rkey = c->rkey;
		nwr = 2;
		c->bytes += 2 * (uint64_t)o->size;
		break;
	}
	case OP_FAA:
	case OP_CAS: {
		uint64_t *v = &c->ctr[o->ctr];

		memset(p, MS_CANARY, 8 + MS_CANARY_LEN);
		sge[0][0] = (struct ibv_sge){ (uintptr_t)p, 8, c->r.mr->lkey };
		wr[0].num_sge = 1;
		wr[0].wr.atomic.remote_addr = c->area + 8 * o->ctr;
		wr[0].wr.atomic.rkey = c->rkey;
		rec->expect = *v;
		if (o->kind == OP_FAA) {
			wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr[0].wr.atomic.compare_add = o->v1;
			*v += o->v1;
		} else {
			wr[0].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr[0].wr.atomic.compare_add = o->hit ? *v : *v ^ o->v2;
			wr[0].wr.atomic.swap = o->v1;
			if (o->hit)
				*v = o->v1;
		}
		c->bytes += 8;
		break;
	}
	}
	ret = ibv_post_send(c->r.qp, wr, &bad);
	if (ret)
		die("ibv_post_send op %u/%u (%s, %u B): %s (posted %u WRs, completed %u)", i, c->ops,
		    op_names[o->kind], o->size, strerror(ret), c->posted, c->completed);
	c->posted += nwr;
}

/* Check one send-queue completion (the oldest outstanding WR). */
static void
check_wc(struct client *c, const struct ibv_wc *w)
{
	uint32_t seq = c->completed;
	struct wr_rec *rec = &c->ring[seq % c->depth];
	const struct op *o = &c->plan[rec->op];
	uint8_t *p = slot_buf(c, seq);
	enum ibv_wc_opcode want;
	char why[200] = "";

	if (w->wr_id != seq)
		die("completion for WR %" PRIu64 " (status %s, opcode %s), expected WR %u (op %u/%u %s): "
		    "completions out of order or unknown wr_id (posted %u, completed %u)",
		    w->wr_id, ibv_wc_status_str(w->status), wc_opcode_name(w->opcode), seq, rec->op,
		    c->ops, rec_name(rec), c->posted, c->completed);
	if (w->status != IBV_WC_SUCCESS && may_die_now) {
		struct timespec rt;

		/* for the script that killed the peer: when, against the retry budget */
		clock_gettime(CLOCK_REALTIME, &rt);
		say("session %u: first error completion on WR %u at realtime %lld.%09ld, %.3f s "
		    "after the last successful completion; RC budget %.1f ms; status %s",
		    cur_session, seq, (long long)rt.tv_sec, rt.tv_nsec, now_s() - c->last,
		    4.096e-3 * (1u << MS_RC_TIMEOUT) * (MS_RC_RETRY + 1),
		    ibv_wc_status_str(w->status));
		/* the server's process was killed? Its TCP connection closes first */
		check_server_abort(c, 1000);
		if (c->tcp_gone) {
			c->completed++;	/* consumed: not to be flushed again */
			peer_gone("wc status %s on WR %u = op %u/%u %s, %.3f s after the last "
				  "completion, %.3f s after %s; %u WRs completed and checked before",
				  ibv_wc_status_str(w->status), seq, rec->op, c->ops, rec_name(rec),
				  now_s() - c->last, now_s() - c->tcp_gone, c->tcp_how, seq);
		}
	}
	if (w->status != IBV_WC_SUCCESS) {
		say("op %u/%u (%s, %u B%s) failed: status %s (%d), vendor_err 0x%x, wc opcode %s; "
		    "WR %u, posted %u, completed %u, %.3f s since the last completion",
		    rec->op, c->ops, rec_name(rec), o->kind <= OP_WRITE_READ ? o->size : 8,
		    (o->kind == OP_SEND && o->imm) ? ", with imm" : "", ibv_wc_status_str(w->status),
		    w->status, w->vendor_err, wc_opcode_name(w->opcode), seq, c->posted, c->completed,
		    now_s() - c->last);
		check_server_abort(c, 200);
		mp_fail_exit(1);
	}
	switch (rec->kind) {
	case OP_SEND: want = IBV_WC_SEND; break;
	case OP_WRITE_READ: want = rec->read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE; break;
	case OP_FAA: want = IBV_WC_FETCH_ADD; break;
	default: want = IBV_WC_COMP_SWAP; break;
	}
	if (w->opcode != want)
		snprintf(why, sizeof(why), "wc opcode %s (%d), expected %s", wc_opcode_name(w->opcode),
			 w->opcode, wc_opcode_name(want));
	else if (w->qp_num != c->r.qp->qp_num)
		snprintf(why, sizeof(why), "wc.qp_num 0x%x, our QP is 0x%x", w->qp_num, c->r.qp->qp_num);
	else if (rec->kind == OP_WRITE_READ && rec->read && w->byte_len != rec->size)
		snprintf(why, sizeof(why), "READ byte_len %u, expected %u", w->byte_len, rec->size);
	else if ((rec->kind == OP_FAA || rec->kind == OP_CAS) && w->byte_len != 8)
		snprintf(why, sizeof(why), "atomic byte_len %u, expected 8", w->byte_len);
	if (why[0] == '\0' && rec->kind == OP_WRITE_READ && rec->read) {
		fill_payload(c->scratch, rec->size, c->seed, SALT_WRITE, rec->op);
		if (memcmp(p, c->scratch, rec->size) != 0)
			describe_diff(why, sizeof(why), "READ data", p, c->scratch, rec->size);
		for (uint32_t j = rec->size; why[0] == '\0' && j < rec->size + MS_CANARY_LEN; j++)
			if (p[j] != MS_CANARY)
				snprintf(why, sizeof(why), "READ wrote past its SGE (byte %u)", j);
	}
	if (why[0] == '\0' && (rec->kind == OP_FAA || rec->kind == OP_CAS)) {
		uint64_t got;

		memcpy(&got, p, 8);
		if (got != rec->expect)
			snprintf(why, sizeof(why), "counter %u: original value 0x%016" PRIx64
				 ", expected 0x%016" PRIx64, o->ctr, got, rec->expect);
		for (uint32_t j = 8; why[0] == '\0' && j < 8 + MS_CANARY_LEN; j++)
			if (p[j] != MS_CANARY)
				snprintf(why, sizeof(why), "atomic wrote past its 8 bytes (byte %u)", j);
	}
	if (why[0])
		die("op %u/%u (%s, %u B at +%u): %s (WR %u, posted %u, completed %u)", rec->op, c->ops,
		    rec_name(rec), rec->size, rec->off, why, seq, c->posted, c->completed);
	c->completed++;
}

static int
run_client_session(void)
{
	struct client *c = &cl;
	struct msg_hello mine, peer;
	struct msg_ready ready;
	struct msg_done done = { 0 };
	struct msg_result res;
	uint32_t psn = rand_psn(), mtu, kinds[4] = { 0 }, spins = 0;
	double t0, dt, deadline;

	c->depth = opt.depth;
	c->seed = opt.seed + cur_session - 1;
	create_qp(&c->r, c->depth, 1);
	mp_reg_buf(&c->r, (size_t)c->depth * MS_SLOT, MS_CANARY, MS_ACCESS);
	c->ring = calloc(c->depth, sizeof(*c->ring));
	c->shadow = calloc(1, MS_AREA);
	c->scratch = malloc(MS_MAX_MSG);
	if (c->ring == NULL || c->shadow == NULL || c->scratch == NULL)
		die("out of memory");

	/* the server may not listen yet: retry until the timeout */
	deadline = now_s() + opt.timeout;
	c->fd = mp_tcp_connect(opt.peer, opt.port, deadline, opt.timeout);

	make_hello(&mine, &c->r, psn, 0, opt.ops, c->seed);
	if (write_all(c->fd, &mine, sizeof(mine))) {
		if (may_die_now)
			peer_gone("%s sending our hello", tcp_how(errno));
		die("sending hello: %s", strerror(errno));
	}
	if (read_all(c->fd, &peer, sizeof(peer), deadline)) {
		if (may_die_now)
			peer_gone("%s before its hello", tcp_how(errno));
		die("reading the server's hello: %s", strerror(errno));
	}
	check_hello(&peer);
	c->rkey = ntohl(peer.rkey);
	c->area = (uint64_t)ntohl(peer.addr_hi) << 32 | ntohl(peer.addr_lo);
	c->ops = ntohl(peer.ops) > opt.ops ? ntohl(peer.ops) : opt.ops;
	if (c->ops > 10000000)
		die("bad plan from the server (%u ops)", c->ops);
	mtu = mtu_bytes(path_mtu(&c->r, &peer));
	c->plan = make_plan(c->seed, c->ops, mtu, &c->nsends);
	for (uint32_t i = 0; i < c->ops; i++)
		kinds[c->plan[i].kind]++;
	say("RC QPN 0x%06x, %u ops (%u SEND, %u WRITE+READ, %u FETCH_ADD, %u CMP_SWAP), depth %u, "
	    "path MTU %u, seed %" PRIu64, c->r.qp->qp_num, c->ops, kinds[OP_SEND],
	    kinds[OP_WRITE_READ], kinds[OP_FAA], kinds[OP_CAS], c->depth, mtu, c->seed);
	connect_qp(&c->r, &peer, psn);
	mp_wait_port_active(&c->r, deadline, opt.timeout);
	if (read_all(c->fd, &ready, sizeof(ready), deadline) || ntohl(ready.magic) != MS_MAGIC) {
		if (may_die_now)
			peer_gone("%s before it was ready", tcp_how(errno));
		die("the server did not get ready: %s", strerror(errno));
	}

	t0 = c->last = now_s();
	while (c->next_op < c->ops || c->completed < c->posted) {
		struct ibv_wc wc[16];
		int n;

		while (!c->tcp_gone && c->next_op < c->ops) {
			uint32_t need = c->plan[c->next_op].kind == OP_WRITE_READ ? 2 : 1;

			if (c->posted - c->completed + need > c->depth)
				break;
			post_op(c, c->next_op++);
		}
		n = ibv_poll_cq(c->r.scq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (int k = 0; k < n; k++)
			check_wc(c, &wc[k]);
		if (n > 0) {
			c->last = now_s();
			pet_watchdog();
		} else if ((++spins & 1023) == 0) {
			double idle = now_s() - c->last;

			check_server_abort(c, 0);
			if (idle > opt.timeout) {
				const struct wr_rec *w = &c->ring[c->completed % c->depth];

				say("stalled: no completion for %.0f s after op %u/%u (posted %u, completed %u); "
				    "waiting for WR %u = op %u %s (%u B)", idle, w->op, c->ops, c->posted,
				    c->completed, c->completed, w->op, rec_name(w),
				    w->kind <= OP_WRITE_READ ? w->size : 8);
				check_server_abort(c, 200);
				mp_fail_exit(2);
			}
		}
		/* --peer-may-die: the server's TCP connection closed; the QP should notice */
		if (c->tcp_gone && c->completed == c->posted)
			peer_gone("%s; all %u WRs posted before had completed and were checked "
				  "(%u/%u ops)", c->tcp_how, c->posted, c->next_op, c->ops);
		if (c->tcp_gone && now_s() - c->tcp_gone > MS_GONE_GRACE)
			peer_gone("%s, then no progress for %.0f s: no completion for %u outstanding WRs "
				  "(%u completed and checked)", c->tcp_how, MS_GONE_GRACE,
				  c->posted - c->completed, c->completed);
	}
	dt = now_s() - t0;

	done.magic = htonl(MS_MAGIC);
	done.ops = htonl(c->ops);
	done.sends = htonl(c->sends);
	for (uint32_t k = 0; k < MS_NCTR; k++) {
		done.ctr_hi[k] = htonl(c->ctr[k] >> 32);
		done.ctr_lo[k] = htonl((uint32_t)c->ctr[k]);
	}
	if (write_all(c->fd, &done, sizeof(done)) || write_all(c->fd, c->shadow, MS_AREA)) {
		if (may_die_now)
			peer_gone("%s sending the final report (all %u ops completed and checked here)",
				  tcp_how(errno), c->ops);
		die("sending the final report: %s", strerror(errno));
	}
	if (read_all(c->fd, &res, sizeof(res), now_s() + opt.timeout) || ntohl(res.magic) != MS_MAGIC) {
		if (may_die_now)
			peer_gone("%s waiting for the result (all %u ops completed and checked here)",
				  tcp_how(errno), c->ops);
		die("no result from the server: %s", strerror(errno));
	}
	res.detail[sizeof(res.detail) - 1] = '\0';
	if (!ntohl(res.ok))
		die("the server reports a failure: %s", res.detail);
	say("server: %s", res.detail);
	say("summary: %u ops (%u WRs, %u fenced WRITEs), %" PRIu64 " bytes, %.3f s, %.0f ops/s",
	    c->ops, c->posted, c->fences, c->bytes, dt, c->ops / (dt > 0 ? dt : 1e-9));
	return 0;
}

/* ================================ sessions ================================ */

/* A session's QP (flushed, see flush_qp()) and its resources, and its TCP connection. */
static void
end_qp_conn(struct mp_res *r, int fd, uint32_t sq_out, uint32_t rq_out)
{
	flush_qp(r, sq_out, rq_out);
	mp_destroy_qp_res(r);
	if (fd >= 0)
		close(fd);
}

/* Tear down the session that just ended (passed, or its peer went away). */
static void
end_session(void)
{
	if (opt.role == ROLE_SERVER) {
		end_qp_conn(&sv.r, sv.fd, 0, sv.posted - sv.received);
		free(sv.plan);
		free(sv.sidx);
		free(sv.rq_fifo);
		free(sv.expect);
		free(sv.shadow);
	} else {
		end_qp_conn(&cl.r, cl.fd, cl.posted - cl.completed, 0);
		free(cl.plan);
		free(cl.ring);
		free(cl.shadow);
		free(cl.scratch);
	}
}

/* --leak-check: after a session's teardown, what the process holds is back at @base. */
static void
leak_check(const struct mp_levels *base)
{
	struct mp_levels now;
	char why[600], lv[400];

	mp_levels_get(dev.ctx, &now);
	mp_levels_str(&now, lv, sizeof(lv));
	if (!mp_levels_same(base, &now, opt.leak_droce_only, why, sizeof(why))) {
		say("leak check after session %u: FAIL (%s; now %s)", cur_session, why, lv);
		mp_fail_exit(1);
	}
	say("leak check after session %u: PASS (%s)", cur_session, lv);
}

/* Open the device (and listen) once, then run the sessions; a failure exits at once. */
static int
run_sessions(void)
{
	static int lfd = -1;	/* static: setjmp() below */
	static struct mp_levels base;

	mp_open_dev(&dev);
	if (opt.role == ROLE_SERVER)
		lfd = mp_tcp_listen(opt.port, 4);
	if (opt.leak_check) {
		char lv[400];

		mp_levels_get(dev.ctx, &base);
		mp_levels_str(&base, lv, sizeof(lv));
		say("leak check: before session 1: %s", lv);
	}
	for (cur_session = 1; cur_session <= opt.sessions; cur_session++) {
		may_die_now = opt.may_die[cur_session];
		/* set-up phases: each bounded by --timeout; later re-armed on every progress */
		alarm(3 * opt.timeout + 30);
		memset(&sv, 0, sizeof(sv));
		memset(&cl, 0, sizeof(cl));
		sv.r = dev;
		cl.r = dev;
		sv.fd = cl.fd = -1;
		if (setjmp(session_jb) == 0) {
			int rc = opt.role == ROLE_SERVER ? run_server_session(lfd) : run_client_session();

			if (rc)
				mp_fail_exit(rc);
			say("session %u: PASS", cur_session);
		} else {
			say("session %u: peer gone (%s)", cur_session, gone_how);
		}
		end_session();
		if (opt.leak_check)
			leak_check(&base);
	}
	cur_session = 0;
	mp_close_dev(&dev);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	mp_fail_hook = session_failed;
	mp_signals_init("mp_stress: watchdog expired (hung inside a call?), giving up\n");
	rc = run_sessions();
	printf("%s: %s\n", mp_tag, rc == 0 ? "PASS" : "FAIL");
	return rc;
}
