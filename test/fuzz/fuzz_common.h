/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the libFuzzer harnesses of the receive path (fuzz_rx, fuzz_tm):
 * EAL in-process (no hugepages, no PCI, -l 0), droce0 on one end of a
 * net_ring pair and a raw port on the other, through which the harness puts
 * frames on droce0's wire and takes back everything it sends. Progress is
 * inline, driven only by the harness: it holds droce0's inline lock, so
 * droce's own waker thread never runs an iteration in between, and every
 * input runs the same way each time.
 *
 * Memory: every MR lives in its own mmap region with PROT_NONE pages on
 * both sides, every receive (and local send) buffer between PROT_NONE pages,
 * ending where one begins; MRs a QP must never write (read only, no remote
 * access, another PD) are mprotect()ed accordingly, so a byte written or
 * read outside what a key or a WQE allows faults at once. Injected frames
 * end where a PROT_NONE page begins (an external mbuf buffer; an odd-length
 * frame a byte short, Ethernet headers being 2-byte aligned), so the
 * receive path cannot read past a frame either.
 *
 * Oracles besides the sanitizers: every frame droce0 sends is well-formed
 * (checksums, ICRC, lengths, opcode) and READ responses and atomic ACKs come
 * only from QPs granting that access; every completion names a WR that was
 * outstanding, once; in a remotely writable MR only bytes some frame of the
 * input named with the MR's current key change (a shadow copy), and an
 * atomic only at 8-byte aligned memory; no mbuf leaks from either pool;
 * async events name the harness's QPs and SRQs; the harness's own checks
 * (FZ_CHECK).
 *
 * An input is a sequence of records, each: a type byte, a 16-bit
 * little-endian length, that many bytes (see fuzz_common.c). After the
 * records, the harness drains what droce0 sent, polls every CQ, brings
 * every QP whose engine state moved, or whose receives completed, back to
 * its canonical state (reset, reconnect, receives in their canonical
 * order), reposts the SRQs' receives (all alike) and empties droce0's ARP
 * table, so each input starts from the same state and a crash reproduces
 * from its input alone. RC ACK timers are off; the RNR timer runs on the
 * harness's clock (fz_poll).
 */
#ifndef DROCE_FUZZ_COMMON_H
#define DROCE_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "roce_loc.h"
#include "verbs_loc.h"

#define FZ_CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "FUZZ CHECK FAILED: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
		abort(); \
	} \
} while (0)

#define FZ_PMTU		IBV_MTU_1024	/* RC/UC path MTU */
#define FZ_PMTU_BYTES	1024u
#define FZ_UD_MTU	4096u		/* droce0's IB MTU at mtu=4200 */
#define FZ_QKEY		0x11111111u
#define FZ_RQ_PSN	0x000100u	/* droce0's responders start here */
#define FZ_SQ_PSN	0xfffff0u	/* its requesters here: they wrap within the canonical WRs */
#define FZ_PEER_QPN	0x000700u	/* + QP index: which QP a frame droce0 sent is from */
#define FZ_MAX_QP	16
#define FZ_MAX_MR	16
#define FZ_MAX_RX	8		/* receive buffers per RQ or SRQ */
#define FZ_FRAME_MAX	9200u

/* A registered region with its guard pages. */
struct fz_mr {
	const char *name;
	uint8_t *buf;
	size_t len;
	uint64_t iova;
	uint32_t key;
	uint32_t stale_key;		/* the key before the last re-registration */
	int access;
	int prot;			/* what the pages allow */
	uint8_t *shadow;		/* remotely writable: its bytes as the frames left them */
	struct ibv_pd *pd;
	struct ibv_mr *mr;
};

/* Receive buffers of an RQ or SRQ: each its own guarded region, in one MR. */
struct fz_rbuf {
	int n;
	uint32_t len[FZ_MAX_RX];
	uint8_t *buf[FZ_MAX_RX];
	bool posted[FZ_MAX_RX];
	uint8_t nsge[FZ_MAX_RX];	/* 1 or 2 (the second SGE: the last 64 bytes) */
	struct fz_mr *mr;
};

struct fz_srq {
	struct ibv_srq *srq;
	struct fz_rbuf rb;
	int id;
	bool tm;			/* a tag-matching SRQ */
};

struct fz_qp {
	const char *name;
	enum ibv_qp_type type;
	enum ibv_qp_state want;		/* its canonical state */
	int access;			/* RC/UC qp_access_flags */
	bool requester;			/* canonical send WRs outstanding (RC in RTS) */
	struct fz_srq *srq;
	int idx;			/* in fz.qps */
	uint32_t peer_qpn;
	struct ibv_qp *qp;
	struct roce_qp *rqp;
	struct ibv_cq *scq, *rcq;
	struct fz_rbuf rb;		/* own RQ */
	uint64_t send_out;		/* outstanding send WRs, by seq */
	uint32_t send_seq;
	struct roce_qp_eng snap;	/* engine state right after the canonical set-up */
	uint32_t snap_state;
	int snap_sq;			/* posted SQ WRs the engine has not taken */
	bool dirty;			/* restore it at the end of the input, moved or not */
};

/* What a harness plugs into the record interpreter. */
struct fz_hooks {
	/* a FZ_REC_CTRL record (its bytes after the type byte); then fz_run polls and drains */
	void (*ctrl)(const uint8_t *b, uint32_t n);
	/* rewrite the payload of a fixed-up frame (fuzz_tm: the TMH), @sel from the fix header */
	void (*payload)(uint8_t *pay, uint32_t len, uint8_t sel);
	/* extra checks on a frame droce0 sent, from QP @q (NULL: not a QP's) */
	void (*out_frame)(const struct fz_qp *q, uint8_t opcode, const uint8_t *bth, uint32_t blen);
	/* poll a harness-owned CQ (fuzz_tm: the TM SRQ's) */
	void (*poll_extra)(void);
	/* per input, after the QPs are back in shape */
	void (*restore_extra)(void);
};

struct fz_env {
	struct roce_dev *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_ah *ah;		/* to the peer, for UD sends */
	struct ibv_ah *ah_unknown;	/* to 10.0.0.3, which droce0 must resolve */
	uint16_t raw_port;
	struct rte_mempool *pool;	/* the raw port's */
	rte_be32_t dev_ip, peer_ip;
	struct rte_ether_addr dev_mac, peer_mac;
	union ibv_gid peer_gid;
	int nqp, nmr, nsrq;
	struct fz_qp *qps[FZ_MAX_QP];
	struct fz_mr *mrs[FZ_MAX_MR];
	struct fz_srq *srqs[4];
	struct fz_mr *send_mr;		/* local buffers of the canonical and fuzzed sends */
	struct fz_hooks hooks;
	unsigned int dev_pool_avail, raw_pool_avail;
	uint64_t inputs;
	bool verbose;
};

extern struct fz_env fz;

/* EAL, ports, droce0, a context, PDs, the send MR; inline lock held from here on. */
void fz_setup(const char *argv0);
/* A guarded region: PROT_NONE page, @len (rounded up to pages) with @prot, PROT_NONE page. */
uint8_t *fz_guarded(size_t len, int prot);
/* Register an MR over a fresh guarded region (@iova 0: its address). */
struct fz_mr *fz_mr_add(const char *name, size_t len, int access, int prot, struct ibv_pd *pd,
			uint64_t iova);
/* Make @m one the MR selector of a fixed-up frame can name. */
void fz_mr_target(struct fz_mr *m);
/* Deregister and register again at the same place: a new key, the old one stale. */
void fz_mr_rereg(struct fz_mr *m);
/* @n guarded buffers of @lens bytes, in one MR (local write) of fz.pd. */
extern const uint32_t fz_recv_lens[FZ_MAX_RX];
void fz_rbuf_init(struct fz_rbuf *rb, int n, const uint32_t *lens);
/* An SRQ (@tm_srq, else a new basic one) with @n receive buffers (fz_recv_lens), posted. */
struct fz_srq *fz_srq_add(int n, struct ibv_srq *tm_srq);
/* A QP, taken to its canonical state; QPNs follow creation order; CQs of @cqe entries. */
struct fz_qp *fz_qp_add(const char *name, enum ibv_qp_type type, enum ibv_qp_state want,
			int access, struct fz_srq *srq, bool requester, int cqe);
/* All objects made: snapshot the QPs and the mbuf pools. */
void fz_ready(void);

/* ibv_modify_qp, releasing the inline lock when the call needs it (RESET). */
int fz_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
/* Back to the canonical state (reset, reconnect, repost, canonical WRs, snapshot). */
void fz_qp_restore(struct fz_qp *q);
/* Post a send WR from the fuzzer's bytes (opcode, length, flags). */
void fz_post_send(struct fz_qp *q, const uint8_t *b, uint32_t n);
/*
 * The CTRL actions every harness has, on @q: 0 post a send WR (fz_post_send
 * of the record's bytes after the first two), 1 force the QP to ERR, 2 bring
 * it back now (fz_qp_restore). false: not one of those. fz_run polls and
 * drains after every CTRL record.
 */
bool fz_ctrl_qp(struct fz_qp *q, unsigned int action, const uint8_t *b, uint32_t n);

/* One engine iteration. */
void fz_poll(void);
/* Take everything droce0 sent, checking each frame. */
unsigned int fz_drain(void);
/* Poll every CQ, checking each completion (a receive's: fz_recv_done). */
void fz_poll_cqs(void);
void fz_recv_done(struct fz_qp *q, const struct ibv_wc *wc);
/* Run one input: its records, then drain, poll, restore. */
void fz_run(const uint8_t *data, size_t size);
/* libFuzzer's entry of fuzz_rx and fuzz_tm: fz_run. Each harness has its LLVMFuzzerInitialize. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Little helpers for the harnesses. */
static inline uint32_t
fz_le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint64_t
fz_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif /* DROCE_FUZZ_COMMON_H */
