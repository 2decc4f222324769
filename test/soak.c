/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak test (issue 15). droce0 and droce1 are joined through net_impair in
 * both directions (by default 5% drop, 1% duplication, 5% reordering, 1%
 * corruption, seeded), and for --duration seconds, all at once:
 *  - --qps RC QP pairs with their own RQs (half of them requesting from
 *    droce1, half receiving into two SGEs), each a stream of every RC
 *    opcode: SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 *    RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, 0 B to --max-len,
 *    DEPTH WRs in flight, posted in lists of one to three, some inline,
 *    some gathered from several SGEs, some unsignaled;
 *  - --srq-qps RC QP pairs with the same stream whose receives come from
 *    one shared SRQ (sized to run dry now and then: RNR NAKs);
 *  - --tm-qps client QPs sending eager and rendezvous messages to a
 *    tag-matching SRQ, each matched to a tag posted for it.
 *
 * Every message carries its flow, its sequence number and its length in a
 * 16-byte header with a CRC32C of the message (a message shorter than that
 * is exactly the bytes its flow and number generate); WITH_IMM messages name
 * flow and number in the immediate too, tag-matched ones in the tag and
 * app_ctx. Receivers identify each message by what it carries and check it
 * once: a number seen before is a duplicate, a checksum that differs is a
 * corruption, a number that overtakes one not seen yet is out of order, and
 * a number never seen by the end is lost. The bytes of a plain RDMA WRITE
 * are checked when the next message that consumes a receive WQE arrives (by
 * RC ordering they are in place by then); READ data is checked against what
 * the remote buffer holds; each atomic against the value it must have
 * found, and each flow's counter, at the end, against the value all of them
 * applied exactly once give. Every completion must succeed with the right
 * length and opcode; no completion for --stall seconds is a stall. Any of
 * these fails the run (exit 1) after the summary.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/tm_types.h>

#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_ring.h>

#include "droce.h"
#include "harness.h"

#define DEPTH		8	/* WRs in flight per RC flow; receive WQEs per own RQ */
#define TM_DEPTH	8	/* messages in flight per TM flow */
#define HDR_LEN		16	/* struct msg_hdr */
#define GAP		64	/* bytes between the SGEs of one WR */
#define RSGE0		1000	/* first receive SGE of a two-SGE receive WQE */
#define INL_MAX		256	/* max_inline_data */
#define IMM_SEQ_BITS	20
#define TAG_SEQ_BITS	40
#define ADD_BIT		(1ULL << 63)	/* wr_id of a tag ADD */
#define TM_FLOW0	0x800	/* flow ids of the TM flows */
#define PATH_MTU	1024	/* h_connect's path MTU */
#define MAX_ERR_LINES	30

static struct {
	unsigned int duration, qps, srq_qps, tm_qps, report, stall, timeout, max_len;
	uint64_t seed;
	bool lcore;
	const char *impair;
} opt = {
	.duration = 25, .qps = 8, .srq_qps = 3, .tm_qps = 2, .report = 5, .stall = 30,
	/*
	 * Local ACK timeout exponent 14: 67 ms. Shorter ones make the RTT of
	 * the queues this load builds in the software link and the ARP retry
	 * schedule count as losses (see doc/guides/developer.rst).
	 */
	.timeout = 14, .max_len = 256 * 1024, .seed = 1,
};

struct msg_hdr {
	uint32_t flow;
	uint32_t seq;		/* low 32 bits */
	uint32_t len;
	uint32_t crc;		/* CRC32C of the message with this field left out */
};

enum cls { C_SEND, C_WRITE, C_READ, C_ATOMIC, C_SRQ, C_TM_EAGER, C_TM_RNDV, C_MAX };
static const char *const cls_name[C_MAX] = {
	"SEND", "WRITE", "READ", "atomic", "SRQ", "TM eager", "TM rndv",
};

static struct {
	uint64_t sent, sent_bytes, rcvd, rcvd_bytes;
} cnt[C_MAX];

static struct {
	uint64_t lost, dup, corrupt, order, failed, unexpected, unfinished;
	unsigned int lines;
	bool fatal;		/* a failed completion: the QP is in ERR, stop */
} err;

static uint64_t completions;	/* progress: every completion handled */
static uint32_t slot;		/* bytes a slot holds: a message and its gaps */
static uint8_t *stage;		/* a message gathered or built in one piece */

/* One posted RC WR, as its requester posted it. */
struct wr_rec {
	enum ibv_wr_opcode op;
	uint32_t len;
	uint8_t signaled;
	uint8_t rx;		/* seen (checked) by the receiver */
	int nsge;
	struct ibv_sge sge[3];	/* local pieces */
	uint64_t atomic_old;	/* the value the atomic must find */
};

/*
 * An RC flow: @req posts, @rsp receives. Responder buffer: receive slots
 * [DEPTH], WRITE slots [DEPTH], READ slots [DEPTH], the atomic counter.
 */
struct flow {
	uint32_t id;
	struct h_side req, rsp;
	bool srq;		/* receives from the shared SRQ */
	bool rsge2;		/* own receive WQEs of two SGEs */
	uint64_t posted;	/* next sequence number */
	uint64_t sdone;		/* requester: all before it completed */
	uint64_t rnext;		/* receiver: all before it resolved */
	uint64_t last_sig;	/* last signaled WR posted */
	uint32_t write_run;	/* plain WRITEs just posted in a row */
	uint64_t amodel;	/* the remote counter as the posted atomics leave it */
	uint64_t rng;
	struct wr_rec led[DEPTH];	/* by sequence number % DEPTH */
};

enum { TS_ADDED = 1, TS_SDONE = 2, TS_MATCH = 4, TS_VALID = 8, TS_FIN = 16 };

struct tm_rec {
	uint32_t len;
	uint8_t rndv;
	uint8_t st;		/* TS_* */
};

/*
 * A TM flow: @cli (droce0) sends to @srv (droce1), a QP of the TM SRQ.
 * Client buffer: data slots [TM_DEPTH], TMH slots [TM_DEPTH], FIN slots
 * [TM_DEPTH]; its tagged buffers are in tm.buf.
 */
struct tm_flow {
	uint32_t t;
	struct h_side cli, srv;
	uint64_t added;		/* next tag to add */
	uint64_t posted;	/* next message to send */
	uint64_t sdone;		/* client send completions */
	uint64_t tail;		/* all before it resolved */
	uint64_t rng;
	struct tm_rec led[TM_DEPTH];
};

static struct flow *flows;
static unsigned int nflows;
static struct tm_flow *tmf;
static struct ibv_context *ctx[2];

static struct {
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t nwqe;
} srq;				/* the shared SRQ, on droce1 */

static struct {
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* tagged buffers [tm_qps * TM_DEPTH], SRQ WQEs [TM_SRQ_WR] */
} tm;				/* the TM SRQ, on droce1 */
#define TM_SRQ_WR	4

/* Count an error; print the first MAX_ERR_LINES, with @why after them if not NULL. */
static void
vreport(uint64_t *counter, const char *why, const char *fmt, va_list ap)
{
	(*counter)++;
	if (err.lines++ >= MAX_ERR_LINES)
		return;
	fprintf(stderr, "soak: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s%s\n", why ? ": " : "", why ? why : "");
}

static void __rte_format_printf(2, 3)
report_err(uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(counter, NULL, fmt, ap);
	va_end(ap);
}

/*
 * A verb that failed (@ret, an errno) or a completion that did not succeed
 * (@st) stops the run: its QP is in ERR, or the test cannot go on. True if
 * all is well.
 */
static bool __rte_format_printf(3, 4)
ok_or_stop(int ret, enum ibv_wc_status st, const char *fmt, ...)
{
	va_list ap;

	if (ret == 0 && st == IBV_WC_SUCCESS)
		return true;
	err.fatal = true;
	va_start(ap, fmt);
	vreport(&err.failed, ret ? strerror(ret) : ibv_wc_status_str(st), fmt, ap);
	va_end(ap);
	return false;
}

static uint64_t
rnd(uint64_t *state)
{
	*state = h_mix64(*state);
	return *state;
}

/* ---- messages ---- */

static uint32_t
msg_crc(const uint8_t *p, uint32_t len)
{
	return rte_hash_crc(p + HDR_LEN, len - HDR_LEN,
			    rte_hash_crc(p, offsetof(struct msg_hdr, crc), 0xffffffff));
}

/* Message (@flow, @seq) of @len bytes, in one piece. */
static void
msg_make(uint8_t *p, uint32_t len, uint32_t flow, uint64_t seq)
{
	uint64_t x = h_mix64(opt.seed ^ ((uint64_t)flow << 44) ^ seq);
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		x = h_mix64(x);
		memcpy(p + i, &x, 8);
	}
	if (i < len) {
		x = h_mix64(x);
		memcpy(p + i, &x, len - i);
	}
	if (len >= HDR_LEN) {
		struct msg_hdr h = { flow, (uint32_t)seq, len, 0 };

		memcpy(p, &h, sizeof(h));
		h.crc = msg_crc(p, len);
		memcpy(p + offsetof(struct msg_hdr, crc), &h.crc, sizeof(h.crc));
	}
}

/* 0 if @p holds message (@flow, @seq) of @len bytes, by its header and CRC. */
static int
msg_check(const uint8_t *p, uint32_t len, uint32_t flow, uint64_t seq)
{
	struct msg_hdr h;
	uint8_t exp[HDR_LEN];

	if (len < HDR_LEN) {
		msg_make(exp, len, flow, seq);
		return memcmp(p, exp, len) == 0 ? 0 : -1;
	}
	memcpy(&h, p, sizeof(h));
	return h.flow == flow && h.seq == (uint32_t)seq && h.len == len &&
	       h.crc == msg_crc(p, len) ? 0 : -1;
}

/* Copy between @flat and the pieces @sge[0..n) (to the pieces with @scatter). */
static void
pieces_copy(const struct ibv_sge *sge, int n, uint8_t *flat, bool scatter)
{
	uint32_t off = 0;

	for (int i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)sge[i].addr;

		if (scatter)
			memcpy(p, flat + off, sge[i].length);
		else
			memcpy(flat + off, p, sge[i].length);
		off += sge[i].length;
	}
}

/* @len bytes at @base as one to three SGEs with GAP bytes between them. */
static int
split(uint8_t *base, uint32_t len, uint32_t lkey, uint64_t r, struct ibv_sge *sge)
{
	int n = len >= 3 && (r & 3) == 0 ? 2 + (int)((r >> 2) & 1) : 1;
	uint32_t off = 0, left = len;

	r >>= 3;
	for (int i = 0; i < n; i++) {
		uint32_t l = left;

		if (i < n - 1) {
			l = 1 + (uint32_t)(r % (left - (uint32_t)(n - 1 - i)));
			r = h_mix64(r);
		}
		sge[i] = (struct ibv_sge){ (uintptr_t)base + off + (uint32_t)i * GAP, l, lkey };
		off += l;
		left -= l;
	}
	return n;
}

/* Mostly small, every power of two equally likely, some 0, some --max-len. */
static uint32_t
pick_len(uint64_t r, uint32_t min)
{
	unsigned int top = 32 - __builtin_clz(opt.max_len), b = r % (top + 1);
	uint32_t len = 0;

	if (b > 0) {
		uint32_t lo = 1u << (b - 1);

		len = RTE_MIN(lo + (uint32_t)((r >> 8) % lo), opt.max_len);
	}
	return RTE_MAX(len, min);
}

/*
 * The sequence number whose low @bits bits are @lo, among [@base, @end): 0,
 * -EALREADY for one before @base (a duplicate), -EINVAL for none.
 */
static int
resolve(uint64_t base, uint64_t end, uint64_t lo, unsigned int bits, uint64_t *s)
{
	uint64_t mask = (1ULL << bits) - 1, d = (lo - base) & mask;

	if (base + d < end) {
		*s = base + d;
		return 0;
	}
	return ((base - lo) & mask) <= mask / 2 ? -EALREADY : -EINVAL;
}

/* ---- RC flows ---- */

static uint8_t *
rsp_slot(struct flow *f, unsigned int region, uint64_t i)
{
	return f->rsp.buf + ((size_t)region * DEPTH + i % DEPTH) * slot;
}
#define R_RECV	0
#define R_WRITE	1
#define R_READ	2
#define R_ATOMIC 3

static bool
rx_visible(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static enum cls
cls_of(const struct flow *f, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return f->srq ? C_SRQ : C_SEND;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return C_WRITE;
	case IBV_WR_RDMA_READ:
		return C_READ;
	default:
		return C_ATOMIC;
	}
}

static int
post_own_recv(struct flow *f, uint64_t i)
{
	uint8_t *p = rsp_slot(f, R_RECV, i);
	struct ibv_sge sge[2] = {
		{ (uintptr_t)p, f->rsge2 ? RSGE0 : slot, f->rsp.mr->lkey },
		{ (uintptr_t)p + RSGE0 + GAP, slot - RSGE0 - GAP, f->rsp.mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge, .num_sge = f->rsge2 ? 2 : 1 }, *bad;

	return ibv_post_recv(f->rsp.qp, &wr, &bad);
}

static int
post_srq_recv(uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)srq.buf + i * slot, slot, srq.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq.srq, &wr, &bad);
}

/* The receiver resolves what it has seen and what it never will (READs, atomics). */
static void
rc_advance(struct flow *f)
{
	while (f->rnext < f->posted) {
		struct wr_rec *w = &f->led[f->rnext % DEPTH];

		if (rx_visible(w->op) && !w->rx)
			break;
		f->rnext++;
	}
}

/*
 * The next WR of @f into @wr/@sge, or false when there is none to post now:
 * after a plain WRITE come more (three at most) or a WRITE_WITH_IMM that
 * has the receiver check them; while draining, only what completes the
 * stream (a pending WRITE_WITH_IMM, a signaled WR after unsignaled ones).
 */
static bool
rc_build(struct flow *f, bool draining, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	uint64_t s = f->posted, r = rnd(&f->rng), r2 = rnd(&f->rng);
	struct wr_rec *w = &f->led[s % DEPTH];
	uint8_t *lbuf = f->req.buf + (s % DEPTH) * (size_t)slot;
	bool tail_unsignaled = s > 0 && !f->led[(s - 1) % DEPTH].signaled;
	unsigned int pick = r % 100;
	enum ibv_wr_opcode op;

	if (s - RTE_MIN(f->sdone, f->rnext) >= DEPTH)
		return false;
	if (f->write_run > 0)
		op = f->write_run < 3 && pick < 50 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
	else if (draining)
		op = IBV_WR_SEND_WITH_IMM;
	else
		op = pick < 18 ? IBV_WR_SEND : pick < 32 ? IBV_WR_SEND_WITH_IMM :
		     pick < 44 ? IBV_WR_RDMA_WRITE : pick < 56 ? IBV_WR_RDMA_WRITE_WITH_IMM :
		     pick < 72 ? IBV_WR_RDMA_READ : pick < 86 ? IBV_WR_ATOMIC_CMP_AND_SWP :
		     IBV_WR_ATOMIC_FETCH_AND_ADD;
	if (draining && f->write_run == 0 && !tail_unsignaled)
		return false;
	memset(w, 0, sizeof(*w));
	memset(wr, 0, sizeof(*wr));
	w->op = op;
	w->len = op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 :
		 draining ? 0 : pick_len(r >> 8, op == IBV_WR_SEND ? HDR_LEN : 0);
	w->signaled = draining || !rx_visible(op) || (r2 & 3) != 0 || s - f->last_sig >= 3;
	wr->wr_id = s;
	wr->opcode = op;
	wr->send_flags = w->signaled ? IBV_SEND_SIGNALED : 0;
	wr->imm_data = htonl((f->id << IMM_SEQ_BITS) | (uint32_t)(s & ((1u << IMM_SEQ_BITS) - 1)));
	wr->sg_list = sge;
	f->write_run = op == IBV_WR_RDMA_WRITE ? f->write_run + 1 : 0;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->atomic_old = f->amodel;
		wr->wr.atomic.remote_addr = (uintptr_t)rsp_slot(f, R_ATOMIC, 0);
		wr->wr.atomic.rkey = f->rsp.mr->rkey;
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr->wr.atomic.compare_add = 1 + (r2 >> 8) % 100000;
			f->amodel += wr->wr.atomic.compare_add;
		} else {
			/* one in four compares with a wrong value: nothing changes */
			wr->wr.atomic.compare_add = f->amodel + ((r2 & 0x30) == 0);
			wr->wr.atomic.swap = h_mix64(r2);
			if (wr->wr.atomic.compare_add == f->amodel)
				f->amodel = wr->wr.atomic.swap;
		}
		memset(lbuf, 0xa5, 8);
		w->nsge = 1;
		w->sge[0] = (struct ibv_sge){ (uintptr_t)lbuf, 8, f->req.mr->lkey };
	} else {
		w->nsge = split(lbuf, w->len, f->req.mr->lkey, r2 >> 8, w->sge);
		if (op == IBV_WR_RDMA_READ) {
			msg_make(rsp_slot(f, R_READ, s), w->len, f->id, s);
			for (int i = 0; i < w->nsge; i++)
				memset((void *)(uintptr_t)w->sge[i].addr, 0x5a, w->sge[i].length);
			wr->wr.rdma.remote_addr = (uintptr_t)rsp_slot(f, R_READ, s);
		} else {
			msg_make(stage, w->len, f->id, s);
			pieces_copy(w->sge, w->nsge, stage, true);
			wr->wr.rdma.remote_addr = (uintptr_t)rsp_slot(f, R_WRITE, s);
			if (w->len <= INL_MAX && (r2 & 0xc0) == 0)
				wr->send_flags |= IBV_SEND_INLINE;
		}
		wr->wr.rdma.rkey = f->rsp.mr->rkey;
	}
	memcpy(sge, w->sge, sizeof(w->sge));
	wr->num_sge = w->nsge;
	if (w->signaled)
		f->last_sig = s;
	f->posted++;
	return true;
}

/* Post up to three WRs of @f in one list. */
static void
rc_post(struct flow *f, bool draining)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3][3];
	int n = 0, want = 1 + (int)(f->rng % 3), ret;

	rc_advance(f);
	while (n < want && rc_build(f, draining, &wr[n], sge[n])) {
		if (n > 0)
			wr[n - 1].next = &wr[n];
		n++;
	}
	if (n == 0)
		return;
	ret = ibv_post_send(f->req.qp, wr, &bad);
	ok_or_stop(ret, IBV_WC_SUCCESS, "flow %u: ibv_post_send of WR %" PRIu64, f->id,
		   bad ? bad->wr_id : 0);
}

static void
count_rcvd(struct flow *f, const struct wr_rec *w)
{
	enum cls c = cls_of(f, w->op);

	cnt[c].rcvd++;
	cnt[c].rcvd_bytes += w->len;
}

/* A WR its requester completed; a READ or an atomic is received with @ok data. */
static void
count_sent(struct flow *f, const struct wr_rec *w, bool ok)
{
	enum cls c = cls_of(f, w->op);

	cnt[c].sent++;
	cnt[c].sent_bytes += w->len;
	if (!rx_visible(w->op) && ok)
		count_rcvd(f, w);
}

/* The send completion opcode of each WR opcode the soak posts (man ibv_poll_cq). */
static const enum ibv_wc_opcode wc_opcode_of[] = {
	[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
	[IBV_WR_SEND] = IBV_WC_SEND,
	[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
	[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
};

/* The data a READ or an atomic brought back: true if right. */
static bool
check_returned(struct flow *f, uint64_t s, const struct wr_rec *w, const struct ibv_wc *wc)
{
	if (w->op == IBV_WR_RDMA_READ) {
		if (wc->byte_len != w->len) {
			report_err(&err.corrupt, "flow %u READ %" PRIu64 ": byte_len %u, posted %u",
				   f->id, s, wc->byte_len, w->len);
			return false;
		}
		pieces_copy(w->sge, w->nsge, stage, false);
		if (memcmp(stage, rsp_slot(f, R_READ, s), w->len) != 0 ||
		    msg_check(stage, w->len, f->id, s) != 0) {
			report_err(&err.corrupt, "flow %u READ %" PRIu64 " (%u bytes, %d SGEs): data differs",
				   f->id, s, w->len, w->nsge);
			return false;
		}
	} else if (w->op == IBV_WR_ATOMIC_CMP_AND_SWP || w->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		uint64_t old;

		memcpy(&old, (void *)(uintptr_t)w->sge[0].addr, sizeof(old));
		if (wc->byte_len != 8 || old != w->atomic_old) {
			report_err(&err.corrupt, "flow %u %s %" PRIu64 ": found %#" PRIx64 ", expected %#"
				   PRIx64 " (byte_len %u)", f->id,
				   w->op == IBV_WR_ATOMIC_FETCH_AND_ADD ? "FETCH_ADD" : "CMP_SWAP", s,
				   old, w->atomic_old, wc->byte_len);
			return false;
		}
	}
	return true;
}

static void
rc_send_done(struct flow *f, const struct ibv_wc *wc)
{
	uint64_t s = wc->wr_id;
	struct wr_rec *w = &f->led[s % DEPTH];

	if (!ok_or_stop(0, wc->status, "flow %u WR %" PRIu64, f->id, s))
		return;
	if (s < f->sdone || s >= f->posted || !w->signaled) {
		report_err(&err.dup, "flow %u: send completion for WR %" PRIu64
			   " (completed up to %" PRIu64 ", posted %" PRIu64 ")", f->id, s, f->sdone,
			   f->posted);
		return;
	}
	for (uint64_t k = f->sdone; k < s; k++) {
		if (f->led[k % DEPTH].signaled)
			report_err(&err.order, "flow %u: WR %" PRIu64 " completed before WR %" PRIu64,
				   f->id, s, k);
		count_sent(f, &f->led[k % DEPTH], true);
	}
	if (wc->opcode != wc_opcode_of[w->op])
		report_err(&err.corrupt, "flow %u WR %" PRIu64 ": opcode %d", f->id, s, wc->opcode);
	count_sent(f, w, check_returned(f, s, w, wc));
	f->sdone = s + 1;
}

/* The bytes of a receive WQE, in one piece. */
static const uint8_t *
recv_bytes(struct flow *f, uint64_t wr_id, uint32_t len)
{
	const uint8_t *p = f->srq ? srq.buf + wr_id * slot : rsp_slot(f, R_RECV, wr_id);

	if (!f->srq && f->rsge2 && len > RSGE0) {
		memcpy(stage, p, RSGE0);
		memcpy(stage + RSGE0, p + RSGE0 + GAP, len - RSGE0);
		return stage;
	}
	return p;
}

/* Check the plain WRITEs before @s, and note messages @s overtakes. */
static void
rc_before(struct flow *f, uint64_t s)
{
	for (uint64_t k = f->rnext; k < s; k++) {
		struct wr_rec *w = &f->led[k % DEPTH];

		if (w->rx || !rx_visible(w->op))
			continue;
		if (w->op != IBV_WR_RDMA_WRITE) {
			report_err(&err.order, "flow %u: message %" PRIu64 " arrived before %" PRIu64,
				   f->id, s, k);
			continue;
		}
		w->rx = 1;
		if (msg_check(rsp_slot(f, R_WRITE, k), w->len, f->id, k) != 0)
			report_err(&err.corrupt, "flow %u WRITE %" PRIu64 " (%u bytes): data differs",
				   f->id, k, w->len);
		else
			count_rcvd(f, w);
	}
}

static void
rc_recv(struct flow *f, const struct ibv_wc *wc)
{
	enum ibv_wr_opcode op = IBV_WR_SEND;
	const uint8_t *p = NULL;
	uint32_t len = wc->byte_len;
	uint64_t lo, s;
	struct wr_rec *w;
	int ret;

	if (!ok_or_stop(0, wc->status, "flow %u receive", f->id))
		return;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		op = IBV_WR_RDMA_WRITE_WITH_IMM;
	else if (wc->opcode == IBV_WC_RECV && (wc->wc_flags & IBV_WC_WITH_IMM))
		op = IBV_WR_SEND_WITH_IMM;
	else if (wc->opcode != IBV_WC_RECV)
		report_err(&err.corrupt, "flow %u: receive opcode %d", f->id, wc->opcode);
	if (op != IBV_WR_RDMA_WRITE_WITH_IMM)
		p = recv_bytes(f, wc->wr_id, RTE_MIN(len, slot));
	if (op == IBV_WR_SEND) {
		struct msg_hdr h = { 0 };

		if (len >= HDR_LEN)
			memcpy(&h, p, sizeof(h));
		if (len < HDR_LEN || h.flow != f->id) {
			report_err(&err.corrupt, "flow %u: SEND of %u bytes from flow %u", f->id, len,
				   h.flow);
			goto repost;
		}
		lo = h.seq;
		ret = resolve(f->rnext, f->posted, lo, 32, &s);
	} else {
		uint32_t imm = ntohl(wc->imm_data);

		if (imm >> IMM_SEQ_BITS != f->id) {
			report_err(&err.corrupt, "flow %u: immediate %#x", f->id, imm);
			goto repost;
		}
		lo = imm & ((1u << IMM_SEQ_BITS) - 1);
		ret = resolve(f->rnext, f->posted, lo, IMM_SEQ_BITS, &s);
	}
	if (wc->qp_num != f->rsp.qp->qp_num)
		report_err(&err.corrupt, "flow %u: receive on QP %#x", f->id, wc->qp_num);
	if (ret == -EALREADY || (ret == 0 && f->led[s % DEPTH].rx)) {
		report_err(&err.dup, "flow %u: message %#" PRIx64 " again (resolved up to %" PRIu64 ")",
			   f->id, lo, f->rnext);
		goto repost;
	}
	if (ret != 0) {
		report_err(&err.corrupt, "flow %u: message %#" PRIx64 " never posted", f->id, lo);
		goto repost;
	}
	w = &f->led[s % DEPTH];
	rc_before(f, s);
	w->rx = 1;
	if (w->op != op || w->len != len)
		report_err(&err.corrupt, "flow %u message %" PRIu64 ": op %d of %u bytes, posted op %d of %u",
			   f->id, s, op, len, w->op, w->len);
	else if (msg_check(op == IBV_WR_RDMA_WRITE_WITH_IMM ? rsp_slot(f, R_WRITE, s) : p, len,
			   f->id, s) != 0)
		report_err(&err.corrupt, "flow %u message %" PRIu64 " (op %d, %u bytes): data differs",
			   f->id, s, op, len);
	else
		count_rcvd(f, w);
	rc_advance(f);
repost:
	ok_or_stop(f->srq ? post_srq_recv(wc->wr_id) : post_own_recv(f, wc->wr_id), IBV_WC_SUCCESS,
		   "flow %u: repost of receive %" PRIu64, f->id, wc->wr_id);
}

static void
rc_poll(struct flow *f)
{
	struct ibv_wc wc[16];
	int n;

	n = ibv_poll_cq(f->req.scq, 16, wc);
	for (int i = 0; i < n; i++)
		rc_send_done(f, &wc[i]);
	completions += n > 0 ? n : 0;
	n = ibv_poll_cq(f->rsp.rcq, 16, wc);
	for (int i = 0; i < n; i++)
		rc_recv(f, &wc[i]);
	completions += n > 0 ? n : 0;
}

static bool
rc_done(const struct flow *f)
{
	return f->sdone == f->posted && f->rnext == f->posted;
}

/* ---- tag matching ---- */

static uint64_t
tm_tag(const struct tm_flow *f, uint64_t s)
{
	return (uint64_t)(f->t + 1) << TAG_SEQ_BITS | (s & ((1ULL << TAG_SEQ_BITS) - 1));
}

static uint8_t *
tm_tagbuf(const struct tm_flow *f, uint64_t s)
{
	return tm.buf + ((size_t)f->t * TM_DEPTH + s % TM_DEPTH) * slot;
}

enum { CLI_DATA, CLI_TMH, CLI_FIN };

/* Client buffer: the data, TMH (and RVH) or FIN slot @s % TM_DEPTH. */
static uint8_t *
tm_cli(const struct tm_flow *f, unsigned int region, uint64_t s)
{
	size_t i = s % TM_DEPTH;

	if (region == CLI_DATA)
		return f->cli.buf + i * slot;
	return f->cli.buf + (size_t)TM_DEPTH * slot + ((region == CLI_FIN ? TM_DEPTH : 0) + i) * 64;
}

static int
tm_post_fin_recv(struct tm_flow *f, uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)tm_cli(f, CLI_FIN, i), 64, f->cli.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(f->cli.qp, &wr, &bad);
}

static int
tm_post_srq_wqe(uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)tm.buf + ((size_t)opt.tm_qps * TM_DEPTH + i) * slot, slot,
			       tm.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(tm.srq, &wr, &bad);
}

/* Post the tags of the next messages (the server side of the protocol). */
static void
tm_add(struct tm_flow *f, bool draining)
{
	while (!draining && f->added - f->tail < TM_DEPTH) {
		uint64_t s = f->added, r = rnd(&f->rng), tag = tm_tag(f, s);
		struct tm_rec *m = &f->led[s % TM_DEPTH];
		struct ibv_sge sge = { (uintptr_t)tm_tagbuf(f, s), slot, tm.mr->lkey };
		struct ibv_ops_wr op = {
			.wr_id = tag | ADD_BIT, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
			.tm = { .add = { .recv_wr_id = tag, .sg_list = &sge, .num_sge = 1, .tag = tag,
					 .mask = ~0ULL } },
		}, *bad;
		int ret;

		m->rndv = r & 1;
		m->len = pick_len(r >> 1, 0);
		m->st = 0;
		ret = ibv_post_srq_ops(tm.srq, &op, &bad);
		if (ret == ENOMEM)
			return;		/* a handle comes back with the poll of its last completion */
		if (!ok_or_stop(ret, IBV_WC_SUCCESS, "TM flow %u: ibv_post_srq_ops", f->t))
			return;
		f->added++;
	}
}

/* Send the messages whose tags are posted (the client side). */
static void
tm_send(struct tm_flow *f)
{
	while (f->posted < f->added && (f->led[f->posted % TM_DEPTH].st & TS_ADDED)) {
		uint64_t s = f->posted, r = rnd(&f->rng);
		struct tm_rec *m = &f->led[s % TM_DEPTH];
		uint8_t *hdr = tm_cli(f, CLI_TMH, s), *data = tm_cli(f, CLI_DATA, s);
		struct ibv_tmh tmh = { .opcode = m->rndv ? IBV_TMH_RNDV : IBV_TMH_EAGER,
				       .app_ctx = htobe32((uint32_t)s), .tag = htobe64(tm_tag(f, s)) };
		struct ibv_sge sge[4] = { { (uintptr_t)hdr, sizeof(tmh), f->cli.mr->lkey } };
		struct ibv_send_wr wr = { .wr_id = s, .sg_list = sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
		int ret;

		memcpy(hdr, &tmh, sizeof(tmh));
		msg_make(stage, m->len, TM_FLOW0 + f->t, s);
		if (m->rndv) {
			struct ibv_rvh rvh = { .va = htobe64((uintptr_t)data),
					       .rkey = htobe32(f->cli.mr->rkey), .len = htobe32(m->len) };

			memcpy(data, stage, m->len);
			memcpy(hdr + sizeof(tmh), &rvh, sizeof(rvh));
			sge[0].length += sizeof(rvh);
		} else if (m->len > 0) {
			wr.num_sge += split(data, m->len, f->cli.mr->lkey, r, &sge[1]);
			pieces_copy(&sge[1], wr.num_sge - 1, stage, true);
		}
		if ((m->rndv ? sge[0].length : sizeof(tmh) + m->len) <= INL_MAX && (r & 0x300) == 0)
			wr.send_flags |= IBV_SEND_INLINE;
		ret = ibv_post_send(f->cli.qp, &wr, &bad);
		if (!ok_or_stop(ret, IBV_WC_SUCCESS, "TM flow %u: ibv_post_send", f->t))
			return;
		f->posted++;
	}
}

static struct tm_flow *
tm_flow_of(uint64_t tag, uint64_t *s)
{
	uint64_t t = (tag & ~ADD_BIT) >> TAG_SEQ_BITS;
	struct tm_flow *f;

	if (t == 0 || t > opt.tm_qps)
		return NULL;
	f = &tmf[t - 1];
	return resolve(f->tail, f->added, tag & ((1ULL << TAG_SEQ_BITS) - 1), TAG_SEQ_BITS, s) == 0 ?
	       f : NULL;
}

static void
tm_advance(struct tm_flow *f)
{
	while (f->tail < f->posted) {
		struct tm_rec *m = &f->led[f->tail % TM_DEPTH];
		uint8_t need = TS_ADDED | TS_SDONE | TS_MATCH | TS_VALID | (m->rndv ? TS_FIN : 0);

		if ((m->st & need) != need)
			break;
		f->tail++;
	}
}

/* A tagged message's completion: MATCH, then DATA_VALID (one, both at once). */
static void
tm_recv(uint64_t wr_id, uint32_t len, unsigned int flags, const struct ibv_wc_tm_info *ti,
	uint32_t qp_num)
{
	uint64_t s;
	struct tm_flow *f = tm_flow_of(wr_id, &s);
	struct tm_rec *m;
	bool single;

	/* tag information only with MATCH, zero on a DATA_VALID alone */
	if (f == NULL || ti->tag != (flags & IBV_WC_TM_MATCH ? wr_id : 0)) {
		report_err(&err.corrupt, "TM: completion for tag %#" PRIx64 " (wr_id %#" PRIx64 ")",
			   ti->tag, wr_id);
		return;
	}
	m = &f->led[s % TM_DEPTH];
	single = !m->rndv && sizeof(struct ibv_tmh) + m->len <= PATH_MTU;
	if (ti->priv != (flags & IBV_WC_TM_MATCH ? (uint32_t)s : 0) ||
	    qp_num != f->srv.qp->qp_num || !(m->st & TS_ADDED))
		report_err(&err.corrupt, "TM flow %u message %" PRIu64 ": app_ctx %#x, QP %#x",
			   f->t, s, ti->priv, qp_num);
	if (!(flags & IBV_WC_TM_DATA_VALID)) {
		if (single || (m->st & TS_MATCH))
			report_err(m->st & TS_MATCH ? &err.dup : &err.order,
				   "TM flow %u message %" PRIu64 ": MATCH without data", f->t, s);
		m->st |= TS_MATCH;
		return;
	}
	if ((m->st & TS_VALID) || (!!(flags & IBV_WC_TM_MATCH) != single) ||
	    (!single && !(m->st & TS_MATCH))) {
		report_err(m->st & TS_VALID ? &err.dup : &err.order,
			   "TM flow %u message %" PRIu64 " (%s, %u bytes): DATA_VALID with flags %#x after %#x",
			   f->t, s, m->rndv ? "rndv" : "eager", m->len, flags, m->st);
		if (m->st & TS_VALID)
			return;
	}
	m->st |= TS_MATCH | TS_VALID;
	if (len != m->len || msg_check(tm_tagbuf(f, s), len, TM_FLOW0 + f->t, s) != 0) {
		report_err(&err.corrupt, "TM flow %u message %" PRIu64 " (%s): %u bytes of %u, data %s",
			   f->t, s, m->rndv ? "rndv" : "eager", len, m->len,
			   len == m->len ? "differs" : "not checked");
	} else {
		cnt[m->rndv ? C_TM_RNDV : C_TM_EAGER].rcvd++;
		cnt[m->rndv ? C_TM_RNDV : C_TM_EAGER].rcvd_bytes += len;
	}
	tm_advance(f);
}

static void
tm_wc(void)
{
	struct ibv_cq_ex *cq = tm.cq;
	enum ibv_wc_opcode opc = ibv_wc_read_opcode(cq);
	unsigned int flags = ibv_wc_read_wc_flags(cq);
	struct ibv_wc_tm_info ti = { 0 };
	uint64_t s;
	struct tm_flow *f;

	completions++;
	if (!ok_or_stop(0, cq->status, "TM CQ: opcode %d wr_id %#" PRIx64, opc, cq->wr_id))
		return;
	if (opc == IBV_WC_TM_ADD) {
		f = tm_flow_of(cq->wr_id, &s);
		if (f == NULL || !(cq->wr_id & ADD_BIT) || (f->led[s % TM_DEPTH].st & TS_ADDED))
			report_err(&err.dup, "TM: ADD completion %#" PRIx64, cq->wr_id);
		else
			f->led[s % TM_DEPTH].st |= TS_ADDED;
		if (flags & IBV_WC_TM_SYNC_REQ)
			report_err(&err.unexpected, "TM: the SRQ asks for a sync (unexpected messages)");
		return;
	}
	ibv_wc_read_tm_info(cq, &ti);
	if (opc == IBV_WC_TM_RECV && (flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID))) {
		tm_recv(cq->wr_id, ibv_wc_read_byte_len(cq), flags, &ti, ibv_wc_read_qp_num(cq));
		return;
	}
	/* every message has its tag posted before it is sent: nothing lands in the SRQ */
	report_err(&err.unexpected, "TM: opcode %d flags %#x in SRQ WQE %" PRIu64 " (tag %#" PRIx64 ")",
		   opc, flags, cq->wr_id, ti.tag);
	ok_or_stop(tm_post_srq_wqe(cq->wr_id % TM_SRQ_WR), IBV_WC_SUCCESS, "TM: SRQ repost");
}

static void
tm_cli_send_done(struct tm_flow *f, const struct ibv_wc *wc)
{
	uint64_t s = wc->wr_id;
	struct tm_rec *m = &f->led[s % TM_DEPTH];

	if (!ok_or_stop(0, wc->status, "TM flow %u send %" PRIu64, f->t, s))
		return;
	if (s != f->sdone || s >= f->posted) {
		report_err(s < f->sdone ? &err.dup : &err.order,
			   "TM flow %u: send completion %" PRIu64 ", expected %" PRIu64, f->t, s, f->sdone);
		return;
	}
	m->st |= TS_SDONE;
	cnt[m->rndv ? C_TM_RNDV : C_TM_EAGER].sent++;
	cnt[m->rndv ? C_TM_RNDV : C_TM_EAGER].sent_bytes += m->len;
	f->sdone++;
	tm_advance(f);
}

/* The FIN of a rendezvous: the client's data buffer is free again. */
static void
tm_fin(struct tm_flow *f, const struct ibv_wc *wc)
{
	struct ibv_tmh fin;
	uint64_t s;

	if (!ok_or_stop(0, wc->status, "TM flow %u FIN", f->t))
		return;
	memcpy(&fin, tm_cli(f, CLI_FIN, wc->wr_id), sizeof(fin));
	if (wc->byte_len != sizeof(fin) || fin.opcode != IBV_TMH_FIN ||
	    tm_flow_of(be64toh(fin.tag), &s) != f || !f->led[s % TM_DEPTH].rndv ||
	    be32toh(fin.app_ctx) != (uint32_t)s) {
		report_err(&err.corrupt, "TM flow %u: FIN of %u bytes, opcode %u tag %#" PRIx64,
			   f->t, wc->byte_len, fin.opcode, be64toh(fin.tag));
	} else if (f->led[s % TM_DEPTH].st & TS_FIN) {
		report_err(&err.dup, "TM flow %u message %" PRIu64 ": FIN again", f->t, s);
	} else {
		f->led[s % TM_DEPTH].st |= TS_FIN;
		tm_advance(f);
	}
	ok_or_stop(tm_post_fin_recv(f, wc->wr_id), IBV_WC_SUCCESS, "TM flow %u: FIN repost", f->t);
}

static void
tm_poll(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc[16];
	int n = 0, ret;

	for (unsigned int t = 0; t < opt.tm_qps; t++) {
		struct tm_flow *f = &tmf[t];
		int k = ibv_poll_cq(f->cli.scq, 16, wc);

		for (int i = 0; i < k; i++)
			tm_cli_send_done(f, &wc[i]);
		completions += k > 0 ? k : 0;
		k = ibv_poll_cq(f->cli.rcq, 16, wc);
		for (int i = 0; i < k; i++)
			tm_fin(f, &wc[i]);
		completions += k > 0 ? k : 0;
	}
	ret = ibv_start_poll(tm.cq, &pa);
	if (ret == ENOENT)
		return;
	if (!ok_or_stop(ret, IBV_WC_SUCCESS, "TM CQ: ibv_start_poll"))
		return;
	do
		tm_wc();
	while (++n < 32 && ibv_next_poll(tm.cq) == 0);
	ibv_end_poll(tm.cq);
}

static bool
tm_done(const struct tm_flow *f)
{
	return f->tail == f->added && f->posted == f->added;
}

/* ---- set-up ---- */

static int
flow_create(struct flow *f, uint32_t id, bool srq_flow)
{
	int dir = srq_flow ? 0 : (int)(id & 1);	/* the requester's device */
	struct h_qp_opts o = {
		.type = IBV_QPT_RC, .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
		.max_inline = INL_MAX, .cqe = 4 * DEPTH, .mr_access = IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = (uint8_t)opt.timeout,
		.max_rd_atomic = 4, .max_dest_rd_atomic = 4,
		/* start near the end of the 24-bit PSN space: it wraps within the run */
		.psn = 0xffffff - (uint32_t)(h_mix64(opt.seed + id) % 100000),
	};
	struct h_qp_opts ro = o;

	memset(f, 0, sizeof(*f));
	f->id = id;
	f->srq = srq_flow;
	f->rsge2 = !srq_flow && (id & 2);
	f->rng = h_mix64(opt.seed * 1000003 + id);
	o.buf_len = (size_t)DEPTH * slot;
	ro.buf_len = (size_t)(R_ATOMIC * DEPTH + 1) * slot;
	if (srq_flow) {
		ro.srq = srq.srq;
		ro.pd = srq.pd;
	}
	if (h_side_create(&f->req, ctx[dir], &o) || h_side_create(&f->rsp, ctx[!dir], &ro) ||
	    h_connect(&f->req, &f->rsp, &o) || h_connect(&f->rsp, &f->req, &ro))
		return -1;
	for (uint64_t i = 0; !srq_flow && i < DEPTH; i++)
		if (post_own_recv(f, i) != 0)
			return -1;
	return 0;
}

static int
srq_create(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_sge = 1 } };

	/* far fewer WQEs than the SRQ's QPs may have in flight: it runs dry (RNR NAKs) */
	srq.nwqe = RTE_MAX(opt.srq_qps, 2u);
	sa.attr.max_wr = srq.nwqe;
	srq.pd = ibv_alloc_pd(ctx[1]);
	srq.buf = aligned_alloc(4096, (size_t)srq.nwqe * slot);
	if (srq.pd == NULL || srq.buf == NULL)
		return -1;
	srq.mr = ibv_reg_mr(srq.pd, srq.buf, (size_t)srq.nwqe * slot, IBV_ACCESS_LOCAL_WRITE);
	srq.srq = ibv_create_srq(srq.pd, &sa);
	if (srq.mr == NULL || srq.srq == NULL)
		return -1;
	for (uint32_t i = 0; i < srq.nwqe; i++)
		if (post_srq_recv(i) != 0)
			return -1;
	return 0;
}

static int
tm_create(void)
{
	size_t len = ((size_t)opt.tm_qps * TM_DEPTH + TM_SRQ_WR) * slot;
	struct h_qp_opts co = {
		.type = IBV_QPT_RC, .max_send_wr = TM_DEPTH, .max_recv_wr = TM_DEPTH,
		.max_inline = INL_MAX, .cqe = 4 * TM_DEPTH, .timeout = (uint8_t)opt.timeout,
		.max_rd_atomic = 4, .max_dest_rd_atomic = 4,
		/* h_side_create's aligned_alloc takes whole pages */
		.buf_len = RTE_ALIGN_CEIL((size_t)TM_DEPTH * slot + 2 * TM_DEPTH * 64, 4096),
	};
	struct h_qp_opts so = co;

	tm.pd = ibv_alloc_pd(ctx[1]);
	tm.cq = h_tm_cq(ctx[1], 1024);
	tm.buf = aligned_alloc(4096, len);
	if (tm.pd == NULL || tm.cq == NULL || tm.buf == NULL)
		return -1;
	tm.mr = ibv_reg_mr(tm.pd, tm.buf, len, IBV_ACCESS_LOCAL_WRITE);
	tm.srq = h_tm_srq(tm.pd, ibv_cq_ex_to_cq(tm.cq), TM_SRQ_WR, opt.tm_qps * TM_DEPTH, 64);
	if (tm.mr == NULL || tm.srq == NULL)
		return -1;
	for (uint32_t i = 0; i < TM_SRQ_WR; i++)
		if (tm_post_srq_wqe(i) != 0)
			return -1;
	so.srq = tm.srq;
	so.pd = tm.pd;
	so.buf_len = 4096;
	for (uint32_t t = 0; t < opt.tm_qps; t++) {
		struct tm_flow *f = &tmf[t];

		f->t = t;
		f->rng = h_mix64(opt.seed * 7919 + t);
		co.psn = so.psn = 0xffffff - (uint32_t)(h_mix64(opt.seed + TM_FLOW0 + t) % 100000);
		if (h_side_create(&f->cli, ctx[0], &co) || h_side_create(&f->srv, ctx[1], &so) ||
		    h_connect(&f->cli, &f->srv, &co) || h_connect(&f->srv, &f->cli, &so))
			return -1;
		for (uint64_t i = 0; i < TM_DEPTH; i++)
			if (tm_post_fin_recv(f, i) != 0)
				return -1;
	}
	return 0;
}

static void
teardown(void)
{
	for (unsigned int i = 0; i < nflows; i++) {
		h_side_destroy(&flows[i].req);
		h_side_destroy(&flows[i].rsp);
	}
	for (unsigned int t = 0; t < opt.tm_qps; t++) {
		h_side_destroy(&tmf[t].cli);
		h_side_destroy(&tmf[t].srv);
	}
	if (srq.srq)
		ibv_destroy_srq(srq.srq);
	if (srq.mr)
		ibv_dereg_mr(srq.mr);
	if (srq.pd)
		ibv_dealloc_pd(srq.pd);
	if (tm.srq)
		ibv_destroy_srq(tm.srq);
	if (tm.cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(tm.cq));
	if (tm.mr)
		ibv_dereg_mr(tm.mr);
	if (tm.pd)
		ibv_dealloc_pd(tm.pd);
	free(srq.buf);
	free(tm.buf);
	free(flows);
	free(tmf);
	free(stage);
	for (int d = 0; d < 2; d++)
		if (ctx[d])
			ibv_close_device(ctx[d]);
}

/* ---- reporting ---- */

static const char *const impair_names[] = {
	"impair_dropped", "impair_duplicated", "impair_reordered", "impair_corrupted",
};
static const char *const droce_names[] = {
	"retransmits", "naks_sent", "naks_rcvd", "rnr_naks_sent", "rx_dup", "rx_drop_seq",
	"rx_drop_bad_icrc", "rx_drop_bad_ip", "tx_busy", "tx_drop_full", "tx_drop_no_mbuf", "tx_no_neigh",
	"cq_overflow",
};

static uint64_t
droce_sum(const char *name)
{
	return h_xstat("droce0", name) + h_xstat("droce1", name);
}

/*
 * Frames on their way from droce@dir to the other device: in net_impair's
 * queue (taken in and duplicated, not yet dropped or passed on) and in the
 * net_ring; 0 if unknown.
 */
static uint64_t
link_queue(int dir)
{
	static const char *const impair[2] = { "net_impair0", "net_impair1" };
	static const char *const ring[2] = { "drp_net_ring_a", "drp_net_ring_b" };
	struct rte_ring *r = rte_ring_lookup(ring[dir]);
	uint16_t port;
	uint64_t q = r != NULL ? rte_ring_count(r) : 0;

	if (rte_eth_dev_get_port_by_name(impair[dir], &port) == 0)
		q += h_eth_xstat(port, "impair_in") + h_eth_xstat(port, "impair_duplicated") -
		     h_eth_xstat(port, "impair_dropped") - h_eth_xstat(port, "impair_passed") -
		     h_eth_xstat(port, "impair_flushed");
	return q;
}

static void
progress_line(uint64_t ms)
{
	uint64_t sent = 0, rcvd = 0, bytes = 0;

	for (int c = 0; c < C_MAX; c++) {
		sent += cnt[c].sent;
		rcvd += cnt[c].rcvd;
		bytes += cnt[c].rcvd_bytes;
	}
	printf("[%5.0f s] sent %" PRIu64 " received %" PRIu64 " (%.1f MB/s) retransmits %" PRIu64
	       " lost %" PRIu64 " dup %" PRIu64 " corrupt %" PRIu64 " order %" PRIu64
	       " | link queues %" PRIu64 "/%" PRIu64 " frames, no mbuf %" PRIu64 "\n",
	       ms / 1e3, sent, rcvd, ms ? bytes / 1e3 / ms : 0.0, droce_sum("retransmits"),
	       err.lost, err.dup, err.corrupt, err.order, link_queue(0), link_queue(1),
	       droce_sum("tx_drop_no_mbuf"));
	fflush(stdout);
}

static void
state_dump(void)
{
	for (unsigned int i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int sq = ibv_query_qp(f->req.qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
		int rq = ibv_query_qp(f->rsp.qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;

		if (!rc_done(f))
			fprintf(stderr, "soak: flow %u%s: posted %" PRIu64 " completed %" PRIu64
				" received %" PRIu64 " (QP states %d/%d, WR %" PRIu64 " op %d len %u)\n",
				f->id, f->srq ? " (SRQ)" : "", f->posted, f->sdone, f->rnext, sq, rq,
				RTE_MIN(f->sdone, f->rnext), f->led[RTE_MIN(f->sdone, f->rnext) % DEPTH].op,
				f->led[RTE_MIN(f->sdone, f->rnext) % DEPTH].len);
	}
	for (unsigned int t = 0; t < opt.tm_qps; t++) {
		struct tm_flow *f = &tmf[t];

		if (!tm_done(f))
			fprintf(stderr, "soak: TM flow %u: added %" PRIu64 " sent %" PRIu64 " completed %"
				PRIu64 " resolved %" PRIu64 " (state %#x, %s)\n", t, f->added, f->posted,
				f->sdone, f->tail, f->led[f->tail % TM_DEPTH].st,
				f->led[f->tail % TM_DEPTH].rndv ? "rndv" : "eager");
	}
}

/*
 * What never arrived, once nothing will any more (after the drain, or a
 * stall); after a failed completion the QPs are in ERR and what was in
 * flight only counts as never completed.
 */
static void
count_lost(void)
{
	for (unsigned int i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		for (uint64_t k = f->rnext; k < f->posted && !err.fatal; k++)
			if (rx_visible(f->led[k % DEPTH].op) && !f->led[k % DEPTH].rx)
				report_err(&err.lost, "flow %u: message %" PRIu64 " never arrived", f->id, k);
		err.unfinished += f->posted - f->sdone;
	}
	for (unsigned int t = 0; t < opt.tm_qps; t++) {
		struct tm_flow *f = &tmf[t];

		for (uint64_t k = f->tail; k < f->posted && !err.fatal; k++)
			if (!(f->led[k % TM_DEPTH].st & TS_VALID))
				report_err(&err.lost, "TM flow %u: message %" PRIu64 " never arrived", t, k);
		err.unfinished += f->posted - f->sdone;
	}
}

/* Every atomic applied once: each counter holds what the posted ones leave. */
static void
check_counters(void)
{
	for (unsigned int i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];
		uint64_t v;

		memcpy(&v, rsp_slot(f, R_ATOMIC, 0), sizeof(v));
		if (f->sdone == f->posted && v != f->amodel)
			report_err(&err.corrupt, "flow %u: atomic counter %#" PRIx64 ", expected %#" PRIx64,
				   f->id, v, f->amodel);
	}
}

static void
summary(uint64_t ms, bool stalled)
{
	uint16_t port[2];

	printf("\n=== soak summary: %.1f s, %s progress, %u RC QPs + %u on a shared SRQ + %u on a TM SRQ,"
	       " seed %" PRIu64 ", max message %u B\n", ms / 1e3, opt.lcore ? "lcore" : "inline",
	       opt.qps, opt.srq_qps, opt.tm_qps, opt.seed, opt.max_len);
	printf("%-10s %12s %16s %12s %16s\n", "class", "sent", "sent bytes", "received",
	       "received bytes");
	for (int c = 0; c < C_MAX; c++)
		printf("%-10s %12" PRIu64 " %16" PRIu64 " %12" PRIu64 " %16" PRIu64 "\n", cls_name[c],
		       cnt[c].sent, cnt[c].sent_bytes, cnt[c].rcvd, cnt[c].rcvd_bytes);
	printf("lost %" PRIu64 ", duplicated %" PRIu64 ", corrupted %" PRIu64 ", out of order %" PRIu64
	       ", failed completions %" PRIu64 ", unexpected TM messages %" PRIu64
	       ", WRs never completed %" PRIu64 "%s\n", err.lost, err.dup, err.corrupt, err.order,
	       err.failed, err.unexpected, err.unfinished, stalled ? ", STALLED" : "");
	if (rte_eth_dev_get_port_by_name("net_impair0", &port[0]) == 0 &&
	    rte_eth_dev_get_port_by_name("net_impair1", &port[1]) == 0) {
		printf("faults injected (droce0->droce1 + droce1->droce0):");
		for (size_t i = 0; i < RTE_DIM(impair_names); i++)
			printf(" %s=%" PRIu64 "+%" PRIu64, impair_names[i] + 7,
			       h_eth_xstat(port[0], impair_names[i]), h_eth_xstat(port[1], impair_names[i]));
		printf("\n");
	}
	printf("droce counters (droce0+droce1):");
	for (size_t i = 0; i < RTE_DIM(droce_names); i++)
		printf(" %s=%" PRIu64 "+%" PRIu64, droce_names[i], h_xstat("droce0", droce_names[i]),
		       h_xstat("droce1", droce_names[i]));
	printf("\n");
	fflush(stdout);
}

/* ---- main ---- */

static int
parse(int argc, char **argv)
{
	static const struct {
		const char *name;
		unsigned int *val;
	} num[] = {
		{ "--duration=", &opt.duration }, { "--qps=", &opt.qps },
		{ "--srq-qps=", &opt.srq_qps }, { "--tm-qps=", &opt.tm_qps },
		{ "--max-len=", &opt.max_len }, { "--report=", &opt.report },
		{ "--stall=", &opt.stall }, { "--timeout=", &opt.timeout },
	};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		for (k = 0; k < RTE_DIM(num); k++)
			if (strncmp(a, num[k].name, strlen(num[k].name)) == 0)
				break;
		if (k < RTE_DIM(num))
			*num[k].val = strtoul(a + strlen(num[k].name), NULL, 0);
		else if (strncmp(a, "--seed=", 7) == 0)
			opt.seed = strtoull(a + 7, NULL, 0);
		else if (strncmp(a, "--impair=", 9) == 0)
			opt.impair = a + 9;
		else if (strcmp(a, "--lcore") == 0 || strcmp(a, "--inline") == 0)
			opt.lcore = a[2] == 'l';
		else
			return -1;
	}
	/* flow ids fit the immediate's high bits; a TM message header fits a slot */
	if (opt.qps + opt.srq_qps >= TM_FLOW0 || opt.tm_qps > 64 || opt.max_len < HDR_LEN ||
	    opt.max_len > (1u << 24) || opt.report == 0 || opt.stall == 0 ||
	    opt.timeout < 1 || opt.timeout > 31)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	static char impair_arg[512], *hargv[4];
	uint64_t t0, now, last_report, last_progress, seen = 0;
	bool draining = false, stalled = false;
	int ret = 0;

	if (parse(argc, argv) != 0) {
		fprintf(stderr, "usage: %s [--inline|--lcore] [--duration=S] [--qps=N] [--srq-qps=N]"
			" [--tm-qps=N] [--seed=N] [--max-len=BYTES] [--report=S] [--stall=S] [--timeout=EXP]"
			" [--impair=<net_impair devargs>]\n", argv[0]);
		return 2;
	}
	if (opt.impair != NULL)
		snprintf(impair_arg, sizeof(impair_arg), "--impair=%s", opt.impair);
	else
		snprintf(impair_arg, sizeof(impair_arg),
			 "--impair=drop=0.05,dup=0.01,reorder=0.05,corrupt=0.01,seed=%" PRIu64 ",dir=tx",
			 opt.seed);
	hargv[0] = argv[0];
	hargv[1] = (char *)(uintptr_t)(opt.lcore ? "--lcore" : "--inline");
	hargv[2] = impair_arg;
	if (h_init(3, hargv) != 0)
		return 1;
	slot = RTE_ALIGN_CEIL(opt.max_len + 3 * GAP, 4096);
	nflows = opt.qps + opt.srq_qps;
	flows = calloc(nflows, sizeof(*flows));
	tmf = calloc(opt.tm_qps, sizeof(*tmf));
	stage = malloc(slot);
	ctx[0] = h_open(0);
	ctx[1] = h_open(1);
	if (flows == NULL || (tmf == NULL && opt.tm_qps) || stage == NULL || !ctx[0] || !ctx[1] ||
	    (opt.srq_qps && srq_create() != 0) || (opt.tm_qps && tm_create() != 0)) {
		fprintf(stderr, "soak: set-up failed: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < nflows; i++) {
		if (flow_create(&flows[i], i, i >= opt.qps) != 0) {
			fprintf(stderr, "soak: set-up of flow %u failed: %s\n", i, strerror(errno));
			return 1;
		}
	}
	printf("# %u s, %u RC QPs (own RQ), %u RC QPs on a shared SRQ of %u WQEs, %u QPs on a TM SRQ,"
	       " %d WRs in flight per QP, messages up to %u B\n", opt.duration, opt.qps, opt.srq_qps,
	       srq.nwqe, opt.tm_qps, DEPTH, opt.max_len);
	t0 = last_report = last_progress = h_now_ms();
	for (;;) {
		bool busy = false;

		for (unsigned int i = 0; i < nflows; i++) {
			rc_post(&flows[i], draining);
			rc_poll(&flows[i]);
			busy |= !rc_done(&flows[i]);
		}
		for (unsigned int t = 0; t < opt.tm_qps; t++) {
			tm_add(&tmf[t], draining);
			tm_send(&tmf[t]);
			busy |= !tm_done(&tmf[t]);
		}
		if (opt.tm_qps)
			tm_poll();
		now = h_now_ms();
		if (err.fatal)
			break;
		if (completions != seen) {
			seen = completions;
			last_progress = now;
		} else if (now - last_progress > opt.stall * 1000ULL) {
			fprintf(stderr, "soak: no completion for %u s\n", opt.stall);
			state_dump();
			stalled = true;
			break;
		}
		if (now - last_report >= opt.report * 1000ULL) {
			last_report = now;
			progress_line(now - t0);
		}
		if (!draining && now - t0 >= opt.duration * 1000ULL)
			draining = true;
		if (draining && !busy)
			break;
	}
	now = h_now_ms();
	count_lost();
	check_counters();
	progress_line(now - t0);
	summary(now - t0, stalled);
	if (stalled || err.lost || err.dup || err.corrupt || err.order || err.failed ||
	    err.unexpected || err.unfinished)
		ret = 1;
	printf("soak: %s\n", ret ? "FAILED" : "passed");
	teardown();
	return ret;
}
