/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer, shared by the test_hostile_* programs. droce0 sits on one
 * end of a net_ring pair; the test owns the other end as a raw ethdev port,
 * so it can put any frame on the wire towards droce0 and read everything
 * droce0 sends back. droce0's QPs (RC, UC and UD, connected to a fake peer
 * QPN at 10.0.0.2) are real verbs objects. The frames are built byte by
 * byte (frame.h), with a correct ICRC where a case wants them to reach deep
 * validation.
 *
 * The rule under test: a malformed or hostile packet is counted (by cause)
 * and dropped, and never crashes droce0 or writes outside what a valid
 * request may write; an RC protocol violation NAKs and takes the QP to ERR,
 * where every WR flushes; a dead peer turns into error completions. Every
 * case checks the guard bytes around the MRs and ends with hp_finish(): a
 * legitimate RC and UD exchange on fresh QPs.
 *
 * Progress is inline (-l 0, the default, or "--inline") or on an engine
 * lcore ("--lcore").
 */
#ifndef DROCE_TEST_HOSTILE_H
#define DROCE_TEST_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_test.h"
#include "frame.h"

#define DEV_NAME	"droce0"
#define PEER_QPN	0x000077u
#define QKEY		0x11111111u
#define RQ_PSN		0x000100u	/* droce0's responder starts here */
#define SQ_PSN		0x000500u	/* droce0's requester starts here */
#define PMTU		1024u		/* path MTU of the RC/UC QPs */
#define UD_MTU		4096u		/* droce0's IB MTU at mtu=4200 */

#define MR_LEN		(2u << 20)
#define RX_SLOT		8192u		/* bytes per receive WQE */
#define RX_PER_QP	8u
#define QP_AREA		(RX_SLOT * RX_PER_QP)
#define NB_TQP		16		/* receive areas: [0, 1 MiB) */
#define TGT_OFF		(1024u << 10)	/* remote WRITE/READ/atomic target: 512 KiB */
#define LOC_OFF		(1536u << 10)	/* local send / READ / atomic buffers */
#define SMALL_LEN	(64u << 10)	/* the other-PD MR and the no-remote-access MR */
#define RECV_LEN	(UD_MTU + ROCE_GRH_LEN)

extern const struct rte_ether_addr dev_mac, raw_mac;
extern rte_be32_t dev_ip, peer_ip;

/* Inline: one iteration of droce0 (every verbs poll runs one). */
void hp_progress(void);

/* droce0's counters (droce_dev_xstats) at one moment. */
#define HP_NSTAT 64
struct hp_snap {
	int n;
	const char *name[HP_NSTAT];
	uint64_t v[HP_NSTAT];
};

void hp_snap(struct hp_snap *s);
uint64_t hp_stat(const char *name);			/* now */
uint64_t hp_sdelta(const struct hp_snap *a, const char *name);	/* since @a */
/*
 * Since @a: drop counter @name moved by exactly @n and no other rx_drop_*
 * counter moved (@name NULL: none moved).
 */
int hp_drops_only(const struct hp_snap *a, const char *name, uint64_t n);

/* A frame from the peer (the raw port) to droce0: frame_build from 10.0.0.2. */
void hp_build(struct frame *f, uint8_t op, uint32_t dqpn, uint32_t psn, const struct ext *x,
	      const void *pay, uint32_t paylen);
/* A byte pattern of @seed. */
void hp_fill(uint8_t *p, uint32_t n, uint32_t seed);

/* Put the first @len bytes of @f on droce0's wire. */
int hp_inject_len(const struct frame *f, uint32_t len);
int hp_inject(const struct frame *f);
/* @f as a chain: segment i holds [cut[i-1], cut[i]); empty segments allowed. */
int hp_inject_chain(const struct frame *f, const uint32_t *cut, int ncut);
/* Wait until droce0 has taken in every injected frame and finished with them. */
int hp_settle(void);

/* Where hp_collect and the expectations below leave the frames droce0 sent. */
#define OUT_MAX 64
extern struct frame outf[OUT_MAX];
/*
 * Frames droce0 sent: at least @want (waiting up to 5 s for them), then until
 * it has been quiet a while (or has sent 100000, or 10 s passed: a stream
 * that does not end); copies up to @max into @out (NULL: none).
 */
int hp_collect_n(struct frame *out, int max, int want);
int hp_collect(struct frame *out, int max);
void hp_drain(void);
/* A frame droce0 sent: well-formed (frame_decode), from droce0 to the peer. */
int hp_parse_out(const struct frame *f, struct frame_info *o);
/* Exactly one frame out: an ACKNOWLEDGE of @psn, syndrome @syn (AETH_ACK: any credit). */
int hp_expect_aeth(uint32_t psn, uint8_t syn);
/* One NAK of @psn with syndrome @syn, last; before it only ACKs of earlier PSNs. */
int hp_expect_nak(uint32_t psn, uint8_t syn);
int hp_expect_silence(void);

/* How hp_qp_new makes a QP. */
struct hp_qopt {
	uint8_t timeout;		/* 0: 18 (~1 s) */
	uint8_t retry_cnt_p1;		/* 0: 7 */
	uint8_t rnr_retry_p1;		/* 0: 7 */
	uint8_t max_dest_rd;		/* 0: 4 */
	uint32_t rq_psn, sq_psn;	/* 0: RQ_PSN / SQ_PSN */
	int nrecv;			/* 0: RX_PER_QP, -1: none */
	uint32_t recv_len;		/* 0: RECV_LEN */
	rte_be32_t peer_ip;		/* 0: 10.0.0.2 */
};

/* One of droce0's QPs, connected to PEER_QPN. */
struct hp_qp {
	bool used;
	int area;		/* its receive buffers: [area * QP_AREA, + QP_AREA) */
	enum ibv_qp_type type;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	uint32_t qpn;
	uint32_t epsn;		/* next PSN droce0's responder expects */
	uint32_t spsn;		/* next PSN droce0's requester sends */
	uint32_t recv_len;
	int posted;
};

/* The world of a case, made by hp_setup. */
struct hp_world {
	struct ibv_pd *pd, *pd2;
	uint8_t *raw, *buf;		/* raw: guard, MR, guard */
	uint8_t *raw2, *buf2;		/* MR in pd2 */
	uint8_t *raw3, *buf3;		/* MR in pd without remote access */
	uint8_t *shadow;
	struct ibv_mr *mr, *mr2, *mr3;
	struct hp_qp *rc, *uc, *ud;
	struct ibv_ah *ah;
};

extern struct hp_world W;
extern struct frame F, G;	/* scratch frames of the cases */

/* The MR's bytes are as saved, except [lo, hi). */
void hp_mr_save(void);
int hp_mr_same_except(uint32_t lo, uint32_t hi);
int hp_mr_same(void);
/* Guard bytes around every MR intact, the other-PD and local-only MRs unwritten. */
int hp_memory_intact(void);
/* The address of byte @off of W.mr. */
uint64_t hp_va(uint32_t off);

struct hp_qp *hp_qp_new(enum ibv_qp_type type, const struct hp_qopt *o);
void hp_qp_destroy(struct hp_qp *q);
enum ibv_qp_state hp_qp_state(const struct hp_qp *q);
int hp_post_recvs(struct hp_qp *q, int n);
int hp_post_send_wr(struct hp_qp *q, struct ibv_send_wr *wr);
/* A signaled WR of W.mr's bytes at @off; atomics add 5 (or compare 5, swap 6). */
int hp_post_send(struct hp_qp *q, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		 uint64_t wr_id, uint64_t raddr, uint32_t rkey);
int hp_no_completion(const struct hp_qp *q);
/*
 * The QP was killed by a protocol error: it reports ERR, its @posted
 * receives flush, and a send and a receive posted now flush too.
 */
int hp_expect_err_and_flush(struct hp_qp *q, int posted);
/* A SEND_ONLY of the QP's transport from the peer (UD: with a DETH). */
int hp_inject_send_only(struct hp_qp *q, uint32_t psn, const void *pay, uint32_t len);
/* A receive on @q completed with @len bytes equal to @data (UD: after the GRH). */
int hp_expect_recv(struct hp_qp *q, const uint8_t *data, uint32_t len);

/* Memory intact, droce0 still exchanges data. Every case ends with this. */
int hp_finish(void);

/*
 * main() of a test_hostile_* program: EAL (harness), droce0 and the raw
 * port, then @cases with hp_setup/hp_teardown around each.
 */
int hp_main(int argc, char **argv, const char *suite, const struct droce_test_case *cases,
	    int n);
#define HP_TEST_MAIN(argc, argv, suite, cases) \
	hp_main((argc), (argv), (suite), (cases), (int)(sizeof(cases) / sizeof((cases)[0])))

#endif /* DROCE_TEST_HOSTILE_H */
