/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce internal objects. Shared by the PMD (drivers/rdma/roce) and the verbs
 * facade (lib/verbs); never installed, never included by app/.
 *
 * Ownership: the application side (the facade) fills a WQE and enqueues it on
 * an rte_ring; the engine lcore dequeues it, runs the protocol and enqueues a
 * struct ibv_wc on the CQ ring. Fields the engine writes sit on their own cache
 * lines, after the control fields.
 */
#ifndef ROCE_H
#define ROCE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <infiniband/verbs.h>
#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ether.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "droce_config.h"
#include "droce_rdev_pmd.h"
#include "roce_hdr.h"

extern int roce_logtype;
#define ROCE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, roce_logtype, "droce: %s(): " fmt "\n", __func__, ##__VA_ARGS__)

/*
 * The engine's logs: compiled out above DROCE_LOG_DP_LEVEL (a debug build's
 * is DEBUG, any other's INFO: config/meson.build), so that a release build's
 * lcore loop carries no DEBUG log at all, not even its level test; at or
 * below it, shown as --log-level=pmd.rdma.roce:<level> says.
 */
#ifndef DROCE_LOG_DP_LEVEL
#define DROCE_LOG_DP_LEVEL	RTE_LOG_INFO
#endif
#define ROCE_DP_LOG(level, fmt, ...) do {					\
	if (RTE_LOG_ ## level <= DROCE_LOG_DP_LEVEL)				\
		ROCE_LOG(level, fmt, ##__VA_ARGS__);				\
} while (0)

struct roce_dev;
struct roce_cq;
struct roce_cq_store;
struct roce_qp;
struct roce_srq;

/*
 * Owed READ responses / atomic replies: up to max_dest_rd_atomic new requests,
 * plus as many re-executions of duplicates, which never crowd out new ones.
 */
#define ROCE_RD_JOBS	(2 * DROCE_MAX_RD_ATOMIC)

/*
 * Counters are written by the engine alone and read by control threads
 * (telemetry, droce_dev_xstats) while it runs: a single writer's relaxed
 * store, which costs what a plain increment does, and a relaxed load on
 * the reader's side, a value at most an iteration old.
 */
#define ROCE_CNT_ADD(c, n)	__atomic_store_n(&(c), (c) + (n), __ATOMIC_RELAXED)
#define ROCE_CNT_INC(c)		ROCE_CNT_ADD(c, 1)
#define ROCE_CNT_READ(c)	__atomic_load_n(&(c), __ATOMIC_RELAXED)

/* NAK kinds (IBA 9.7.5.2.4, AETH syndrome 0x60 + kind): the index of counter arrays */
#define ROCE_NAK_KINDS	4

/* Drop and error counters, by cause; written by the engine only. */
struct roce_stats {
	uint64_t rx_pkts;
	uint64_t tx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_drop_not_ip;	/* neither ARP nor IPv4 */
	uint64_t rx_drop_not_mine;	/* MAC or IP not ours */
	uint64_t rx_drop_bad_ip;	/* IPv4 header malformed */
	uint64_t rx_drop_not_roce;	/* not UDP/4791 */
	uint64_t rx_drop_truncated;	/* shorter than its headers say */
	uint64_t rx_drop_bad_icrc;
	uint64_t rx_drop_bad_bth;	/* opcode, version, pkey */
	uint64_t rx_drop_no_qp;		/* unknown QPN or wrong QP type */
	uint64_t rx_drop_bad_qkey;
	uint64_t rx_drop_qp_state;	/* QP not in a state that receives */
	uint64_t rx_drop_no_wqe;	/* UD/UC: no receive WQE */
	uint64_t rx_drop_seq;		/* UC/RC PSN out of sequence */
	uint64_t rx_drop_bad_len;	/* payload length wrong for the opcode */
	uint64_t rx_drop_mcast;		/* multicast to a group no QP here is attached to */
	uint64_t rx_mcast;		/* multicast packets delivered to a group's QPs */
	uint64_t rx_dup;		/* RC duplicate requests */
	uint64_t rx_arp;
	uint64_t rx_drop_bad_arp;	/* ARP droce cannot use: malformed, not IPv4 */
	uint64_t tx_arp;
	uint64_t tx_drop_no_mbuf;
	uint64_t tx_drop_full;		/* the port took nothing and the staging area was full */
	uint64_t tx_busy;		/* a sender found the port full and waited (per check) */
	uint64_t tx_no_neigh;		/* waiting for ARP */
	uint64_t cq_overflow;
	uint64_t retransmits;
	uint64_t rnr_naks_sent;
	uint64_t naks_sent;
	uint64_t naks_rcvd;
	uint64_t timeouts;		/* local ACK timeouts that fired */
	uint64_t rnr_naks_rcvd;
	/* by kind: PSN sequence error, invalid request, remote access, remote operational */
	uint64_t naks_sent_kind[ROCE_NAK_KINDS];
	uint64_t naks_rcvd_kind[ROCE_NAK_KINDS];
	uint64_t rx_ethdev;		/* frames not droce's, handed to its ethdev port */
	uint64_t tx_ethdev;		/* frames its ethdev port transmitted on the owned port */
	uint64_t share_fwd;		/* frames handed to another process sharing the device */
	uint64_t share_drop;		/* frames for such a process that found no room or no process */
	uint64_t q_handoff;		/* frames handed to the queue that owns their QP (struct roce_q) */
	uint64_t q_handoff_drop;	/* ... that found its ring full */
	uint64_t fast_retransmits;	/* early resends on the measured round trip (roce_req.c) */
	uint64_t tx_zcopy;		/* frames whose payload the port read from registered memory */
	uint64_t tx_zcopy_copied;	/* ... copied after all: the port had no room (roce_tx_flush) */
	uint64_t tx_direct;		/* frames built straight in the port's slots (roce_txf_begin) */
	uint64_t rx_direct;		/* frames taken from its slots without an mbuf (roce_rx_shm) */
};

/*
 * One QP's counters (what the device counts, for this QP alone), after the
 * engine's state on the lines the engine owns; a QP reset keeps them.
 * Packets and bytes are whole frames, as the device counts them.
 */
struct roce_qp_stats {
	uint64_t retransmits;		/* go-back-N restarts: a timeout, a READ response gap */
	uint64_t timeouts;		/* local ACK timeouts that fired */
	uint64_t fast_retransmits;	/* early resends on the measured round trip */
	uint64_t naks_sent_kind[ROCE_NAK_KINDS];
	uint64_t naks_rcvd_kind[ROCE_NAK_KINDS];
	uint64_t rnr_naks_sent;
	uint64_t rnr_naks_rcvd;
	uint64_t rx_dup;		/* RC duplicate requests */
	uint64_t rx_drop_seq;		/* out of sequence: PSN, or a response to nothing sent */
	uint64_t rx_drop_qp_state;
	uint64_t rx_drop_no_wqe;
	uint64_t rx_drop_bad_len;
	uint64_t rx_drop_bad_qkey;
};

/* a counter both the device and the QP have (struct roce_stats, struct roce_qp_stats) */
#define ROCE_QP_CNT(dev, qp, f) do {		\
	ROCE_CNT_INC((qp)->q->stats.f);		\
	ROCE_CNT_INC((qp)->stats.f);		\
} while (0)

/*
 * An ARP table entry. Queue 0 writes it (and the probe, before the engine
 * runs); other queues, the control path and telemetry read it. ip, mac,
 * valid and is_static change under seq, odd while a write is under way, so a
 * reader takes a consistent copy or none (roce_neigh_load).
 */
struct roce_neigh {
	uint32_t seq;
	rte_be32_t ip;
	union {
		struct rte_ether_addr mac;
		uint16_t mac_w[3];	/* the words loaded and stored atomically */
	};
	uint8_t valid;
	uint8_t is_static;
	uint16_t retry_ms;	/* while unresolved: wait before asking again, doubling */
	uint64_t req_tsc;	/* last ARP request sent */
};

/* --- Memory (the interface's opaque PD and MR) --- */
struct droce_rdev_pd {
	struct roce_dev *dev;
	uint32_t pdn;
};

/* An XRC domain: SRQs and XRC_RECV QPs of one domain serve each other only. */
struct droce_rdev_xrcd {
	struct roce_dev *dev;
};

/* A key's low bits count re-registrations of its slot, so a stale key fails. */
#define ROCE_MR_GEN_BITS 20
#define ROCE_MR_GEN_MASK ((1U << ROCE_MR_GEN_BITS) - 1)
_Static_assert(DROCE_MAX_MR <= 1U << (32 - ROCE_MR_GEN_BITS), "MR index must fit in a key");

struct droce_rdev_mr {
	struct droce_rdev_pd *pd;
	uint64_t iova;
	uint64_t length;
	uint8_t *host;		/* host address of iova */
	int access;
	uint32_t key;		/* lkey == rkey; index << ROCE_MR_GEN_BITS | generation */
};

/*
 * A memory window (roce_mw.c). Its R_Key is index << 8 | key (IBA:
 * the consumer owns the low 8 bits), below 1 << ROCE_MR_GEN_BITS, where no
 * MR key lies (MR index 0 is never used): the responder tells the two apart
 * by the key alone. Everything after @type is the engine's: binds and
 * invalidations are WQEs it executes, and it checks every remote access
 * through the window against them; the control path reads them only once
 * the window is out of mw_tbl and quiesced.
 */
#define ROCE_MW_KEY_BITS	8
#define ROCE_MW_KEY_MASK	((1U << ROCE_MW_KEY_BITS) - 1)
_Static_assert(DROCE_MAX_MW <= 1U << (ROCE_MR_GEN_BITS - ROCE_MW_KEY_BITS),
	       "MW R_Keys must stay below every MR key");
/* in roce_dev.mr_nmw[]: ibv_dereg_mr has taken the MR, no bind may (roce_mr_dereg) */
#define ROCE_MR_NMW_DYING	(1U << 31)

enum roce_mw_state {
	ROCE_MW_FREE,		/* type 2, not bound */
	ROCE_MW_VALID,		/* type 1 always (length 0: unbound), type 2 bound */
};

struct droce_rdev_mw {
	struct droce_rdev_pd *pd;
	uint32_t idx;		/* in dev->mw_tbl */
	uint8_t type;		/* IBV_MW_TYPE_1 or _2 */
	/* the engine's */
	uint8_t state;
	uint32_t rkey;
	int access;		/* IBV_ACCESS_REMOTE_* it grants, ZERO_BASED */
	uint64_t va;		/* its start, an address of the MR (also when zero based) */
	uint64_t length;
	uint32_t mr_key;	/* the MR it is bound to, 0 none */
	uint64_t qp_serial;	/* type 2: the QP it is bound to (struct roce_qp serial) */
};

/* --- CQ --- */
struct roce_cq {
	struct droce_rdev_cq fp;	/* what the facade sees */
	struct roce_dev *dev;
	bool has_channel;		/* completion events may be asked for */
	/*
	 * Which queues complete into it (struct roce_q), under dev->lock
	 * (roce_cq_bind): prod_q the first, and multi_q once a second one
	 * does, from when on its produced count is an atomic add
	 */
	int16_t prod_q;
	bool multi_q;
	/*
	 * A job the engine runs on the CQ between two iterations, under the
	 * device's cq_resize_lock (cq_job): ibv_resize_cq, or the purge of a
	 * QP's completions when it goes to RESET or is destroyed.
	 */
	struct roce_cq_store *resize_to;	/* resize: the slots the engine moves completions to */
	uint32_t purge_qpn;		/* purge (resize_to NULL): this QP's completions go, */
	bool purge_recv;		/* its receive completions too */
	int resize_ret;			/* the engine's answer: 0 or -EINVAL (too many held) */
	const struct droce_rdev_alloc *alloc;	/* a parent domain's, for the slots; or NULL */
	bool slots_app;			/* fp.slots' memory came from @alloc */
	/* written by the application, read by the engine */
	uint32_t armed __rte_cache_aligned;	/* 0, IBV_SOLICITED-only (2) or any (1) */
	/* written by the engine */
	uint32_t overflow __rte_cache_aligned;
	uint64_t events;			/* completion events raised */
	uint64_t cons_seen;		/* fp.consumed as last read (one queue producing) */
	uint64_t prod_head;		/* slots taken by producers (several: compare-and-swap) */
};

/* A CQ's slots (struct droce_rdev_cq): what a resize moves the completions to. */
struct roce_cq_store {
	struct droce_cqe *slots;
	uint32_t mask;
	uint32_t cap;
	bool app;			/* from the CQ's allocator */
};

/* --- Tag matching (rdma-core Documentation/tag_matching.md) --- */
enum roce_tm_tag_state {
	TMT_FREE,			/* the application's, or its ADD is in flight */
	TMT_POSTED,			/* in the matching list */
	TMT_BUSY,			/* matched, data still arriving */
};

/* A tagged buffer; the engine owns it from its ADD to its last completion. */
struct roce_tm_tag {
	struct droce_recv_wqe rw;	/* wr_id = recv_wr_id, one SGE */
	uint64_t tag;
	uint64_t mask;
	struct ibv_sge sge;		/* as posted (rw.sge[0] gets host addresses): the READ's */
	uint32_t prev, next;		/* list links (handles), UINT32_MAX = none */
	uint8_t state;
	uint8_t owed;			/* a completion in the CQ gives the handle back */
	uint8_t rndv;			/* matched a rendezvous request: enum roce_tm_rndv */
	uint64_t msg_tag;		/* the matched message's TMH tag and app_ctx */
	uint32_t msg_ctx;
	uint64_t rv_va;			/* ROCE_RNDV_HW: the RVH */
	uint32_t rv_rkey;
	uint32_t rv_len;
};

enum roce_tm_rndv {
	ROCE_RNDV_NONE,
	ROCE_RNDV_HW,			/* the engine reads the data and sends the FIN */
	ROCE_RNDV_SW,			/* left to software: IBV_WC_TM_RNDV_INCOMPLETE */
};

/* Send WQEs the engine posts on a QP of a TM SRQ. */
enum roce_tm_wqe {
	ROCE_TMW_NONE,
	ROCE_TMW_READ,			/* rendezvous: RDMA READ of the sender's data */
	ROCE_TMW_FIN,			/* rendezvous: the FIN that frees the sender's buffer */
};
#define ROCE_TM_QP_WQES	DROCE_MAX_RD_ATOMIC	/* rendezvous in flight per QP */

/* What the SEND in progress on a QP of a TM SRQ is. */
enum roce_tm_kind {
	ROCE_TM_PLAIN,			/* no TMH (shorter, or no TM opcode): IBV_WC_RECV */
	ROCE_TM_NO_TAG,			/* NO_TAG or FIN: an SRQ WQE, IBV_WC_TM_NO_TAG */
	ROCE_TM_UNEXPECTED,		/* an SRQ WQE, IBV_WC_TM_RECV without MATCH */
	ROCE_TM_EXPECTED,		/* a tagged buffer */
};

/* A completion's release (droce_cqe_tm): 1 + (dev->tm_tbl index << 12 | handle). */
#define ROCE_TM_HANDLE_BITS	12

/*
 * A tag-matching SRQ. The application posts list operations into @ops and
 * takes handles from @free; the engine applies the operations in order,
 * matches arriving messages against the list and completes on @cq. A handle
 * goes back to @free when the application polls its last completion.
 */
struct roce_tm {
	struct roce_cq *cq;
	struct rte_ring *ops;		/* struct droce_tm_op, size max_ops (also srq->fp.tm_ops) */
	struct rte_ring *free;		/* handles (uintptr_t) */
	uint32_t max_tags;
	uint32_t max_ops;
	uint32_t idx;			/* in dev->tm_tbl */
	/* engine */
	struct roce_tm_tag *tags;	/* [max_tags], by handle */
	uint32_t head, tail;		/* the matching list, first posted first */
	uint32_t hw_cnt;		/* unexpected messages delivered or arriving (atomic) */
	uint32_t sw_cnt;		/* unexpected messages software reported */
};

/* --- SRQ --- */
struct roce_srq {
	struct droce_rdev_srq fp;	/* what the facade sees: the queue */
	struct roce_dev *dev;
	struct roce_q *q;		/* the queue that moves it (struct roce_q) */
	uint32_t owner;			/* the process that made it (roce_share.c) */
	struct droce_rdev_pd *pd;
	uint32_t limit;			/* armed limit, 0 = not armed */
	struct roce_tm *tm;		/* a tag-matching SRQ, else NULL */
	struct droce_rdev_xrcd *xrcd;	/* an XRC SRQ (in dev->srq_tbl), else NULL */
	struct roce_cq *cq;		/* an XRC SRQ's receive completions */
	/*
	 * WQEs a QP took and gave back unused (a UC WRITE with immediate that
	 * failed after it took one: roce_srq_unget), taken again before the
	 * posted ones; its QPs may be on several lcores (multi-producer and
	 * multi-consumer)
	 */
	struct rte_ring *returned;
};

/*
 * An XRC SRQ's number: its dev->srq_tbl index in the low bits, above them a
 * count of the slot's uses, so that a number of a destroyed SRQ names none.
 */
#define ROCE_SRQN_IDX_BITS	8
_Static_assert(DROCE_MAX_SRQ <= 1U << ROCE_SRQN_IDX_BITS, "SRQ index must fit in its number");

/* --- QP --- */
/*
 * A connected QP's (RC, UC, XRC) Ethernet, IPv4 and UDP headers, alike in
 * all its frames but for their lengths and the IPv4 checksum: built once
 * (roce_tx.c, txh_valid), then copied in front of each of its frames with
 * those patched (txh_fill), in place of a neighbour lookup and a header
 * written field by field for every packet. Valid while @gen is the device's
 * txh_gen: every change of the neighbour table and every modify of a QP's
 * address or peer QPN, or to RESET, moves that on (roce_txh_stale).
 */
struct roce_txh {
	uint8_t hdr[ROCE_L2L4_LEN];	/* the headers of a frame with l4 = 0 */
	uint32_t sum;			/* the IPv4 header's 16-bit words summed, but its length */
	uint32_t gen;			/* dev->txh_gen when built; 0: none */
};

/* Per-QP requester, completer and responder state, owned by the engine. */
struct roce_qp_eng {
	/* requester */
	/*
	 * Dequeued, not yet completed: at most sq.size of them, in an array
	 * of win_mask + 1 (sq.size rounded up to a power of two, so that a
	 * slot is found with a mask, not a division: roce_win_slot)
	 */
	struct droce_send_wqe **win;
	/* free-running counters */
	uint32_t win_head;		/* oldest not completed */
	uint32_t win_cur;		/* next to (re)send from */
	uint32_t win_tail;		/* next free */
	uint32_t cur_off;		/* bytes of win[win_cur] sent */
	uint32_t cur_pkt;		/* packets of win[win_cur] sent */
	uint32_t psn;			/* next PSN to send */
	uint32_t psn_hi;		/* next PSN never sent: responses are valid below it */
	uint32_t pkts_since_ackreq;
	uint32_t win_mask;
	uint64_t retry_tsc;		/* retransmit deadline (engine clock), 0 = none */
	uint64_t rnr_tsc;		/* do not send before (engine clock) */
	/*
	 * Adaptive retransmission (roce_req.c, "early resends"): a resend
	 * from the oldest unacknowledged PSN once the measured round trip
	 * says the answer is late, long before the local ACK timeout.
	 */
	uint64_t fast_tsc;		/* early resend deadline (engine clock), 0 = none */
	uint32_t rto_fast;		/* its delay in timer cycles, 0 = no estimate (yet) */
	uint32_t rtt_start;		/* low bits of the clock when rtt_psn left, 0 = none timed */
	uint32_t rtt_psn;		/* the request being timed */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint8_t tx_stalled;		/* RC: the next packet found no mbuf or neighbour */
	uint8_t last_wqe_raised;	/* IBV_EVENT_QP_LAST_WQE_REACHED sent */
	uint8_t fast_shift;		/* each doubles the next one's delay */
	uint8_t fast_resend;		/* resending after one: the ACK timer keeps its deadline */
	uint8_t arm_due;		/* sent with a stale clock: the next iteration arms the timers */
	/* responder */
	uint32_t epsn;			/* expected PSN */
	uint32_t msn;
	uint8_t in_msg;			/* a multi-packet message is in progress */
	uint32_t msg_op;		/* ROCE_OPF_SEND or ROCE_OPF_WRITE */
	uint8_t drop_msg;		/* UC: drop until the next FIRST/ONLY */
	uint8_t ack_pending;
	uint8_t nak_sent;		/* a sequence NAK is outstanding */
	uint8_t ack_syn;		/* syndrome of the pending ACK */
	uint32_t ack_psn;
	struct droce_recv_wqe *rwqe;	/* receive WQE being filled */
	uint32_t roff;			/* bytes written into it */
	/* tag matching: what the message in progress is, for a TM SRQ */
	uint8_t tm_kind;		/* enum roce_tm_kind */
	struct roce_tm_tag *tm_tag;	/* ROCE_TM_EXPECTED: the matched tag */
	/*
	 * The QP's packet and byte counters (struct roce_qp_stats has the
	 * rest): every frame it sends or receives adds to them, so they share
	 * the third line with what every visit reads, not a line of their own
	 * (one cache miss less a frame at either end with thousands of QPs).
	 * A QP reset keeps them (roce_qp_reset_engine).
	 */
	struct roce_qp_traffic {
		uint64_t rx_pkts;
		uint64_t rx_bytes;
		uint64_t tx_pkts;	/* requests, responses, ACKs and NAKs queued for the port */
		uint64_t tx_bytes;
	} traffic;
	uint32_t una;			/* oldest unacknowledged PSN */
	uint32_t rd_gap_psn;		/* 1 + the READ response PSN last asked for again */
	/*
	 * Every visit reads these: with the fields above, in the first three
	 * cache lines, before the job and replay arrays (2 KiB) that only
	 * READs and atomics touch.
	 */
	uint32_t rd_head, rd_tail;	/* free-running */
	uint32_t rd_ndup;		/* queued jobs that are re-executions */
	uint32_t atm_next;
	/*
	 * The round trip's smoothed value and mean deviation, in timer
	 * cycles: every ACK that ends a timed request updates them (the
	 * fourth line, which roce_qp_prefetch also fetches)
	 */
	uint32_t srtt, rttvar;
	uint32_t fast_round;		/* q->rx_rounds when the early resend fell due */
	uint8_t fast_due;		/* ... and it did */
	/* RDMA WRITE in progress (fourth line too) */
	uint8_t *w_host;		/* next byte */
	uint64_t w_va;			/* the RETH R_Key and VA, checked again per packet */
	uint32_t w_rkey;
	uint32_t w_left;		/* bytes of the RETH length still due */
	uint32_t w_len;			/* the RETH length */
	/* responder: READ responses and atomic replies owed, in PSN order */
	struct roce_rd_job {
		uint8_t *host;		/* READ: next byte to send */
		uint32_t left;		/* READ: bytes left */
		uint32_t psn;		/* next response PSN */
		uint32_t first_psn;
		uint32_t rkey;		/* READ: checked again per response */
		uint64_t va;		/* READ: next byte to send */
		uint32_t len;		/* READ: the request's length */
		const struct droce_rdev_pd *pd;	/* READ: the PD its R_Key is checked against */
		uint8_t atomic;
		uint8_t dup;		/* re-execution of a duplicate request */
		uint64_t orig;		/* atomic: value before the operation */
	} rd[ROCE_RD_JOBS];
	/* atomic replay cache (IBA 9.7.5.1.3: a duplicate atomic is not re-executed) */
	struct {
		uint32_t psn;
		uint8_t valid;
		uint64_t orig;
	} atm[DROCE_MAX_RD_ATOMIC];
	/*
	 * XRC_RECV: the XRC SRQ of the message in progress (its number; rwqe
	 * is its WQE), and that of the packet being handled (valid only while
	 * roce_resp_rcv runs)
	 */
	uint32_t xsrqn;
	struct roce_srq *xsrq;
	/* UD: the source port for the last destination (IP, QPN % DROCE_MAX_QUEUES) sent to */
	rte_be32_t ud_dip;
	uint16_t ud_k;			/* 1 + that QPN's steering bits, 0 = none yet */
	uint16_t ud_sport;
};

struct roce_qp {
	struct droce_rdev_qp fp;	/* what the facade sees: type, queues, state */
	/*
	 * The engine's, in the order a message's visit reads them, so that
	 * it touches three lines here (with thousands of QPs each one is a
	 * miss): this one, the next (where it sits in the table and on the
	 * active list, where its packets go, and the attributes every packet
	 * reads, which open the struct: the Q_Key, the PSNs, the destination
	 * QPN), and the line of its headers (tmo_tsc, txh). The rest of the
	 * attributes, which only modify_qp and queries read, lie between.
	 */
	struct roce_dev *dev;
	struct roce_q *q;		/* the queue that moves it (struct roce_q) */
	uint32_t owner;			/* the process that made it (roce_share.c) */
	struct droce_rdev_pd *pd;
	struct roce_cq *scq;
	struct roce_cq *rcq;
	struct roce_srq *srq;
	/* on a TM SRQ: the WQEs the engine posted, sent before the SQ's (every visit looks) */
	struct rte_ring *tm_posted;
	uint32_t idx;			/* index in dev->qp_tbl */
	/* the engine's, kept across roce_qp_reset_engine: on its queue's active list */
	bool on_active;
	bool mc_noloop;			/* UD: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB */
	/*
	 * UDP source port of a connected QP's frames, chosen once its
	 * destination is known so that the peer's port steers them to the
	 * queue owning the destination QP (roce_steer.c); a UD QP chooses per
	 * destination (e.ud_*)
	 */
	uint16_t sport;
	uint64_t serial;		/* unique on the device, unlike the QPN (memory windows) */
	/* attributes, written by modify_qp before the state that uses them */
	struct droce_av av;		/* RC/UC destination */
	uint32_t mtu;			/* path MTU in bytes */
	struct ibv_qp_attr attr;
	struct droce_rdev_xrcd *xrcd;	/* XRC_RECV: its domain */
	struct rte_ring *tm_pool;	/* on a TM SRQ: slots kept for rendezvous (tm_posted's) */
	uint64_t tmo_tsc __rte_cache_aligned;	/* local ACK timeout in timer cycles, 0 = infinite */
	struct roce_txh txh;		/* the engine's */

	/* written by the engine */
	struct roce_qp_eng e __rte_cache_aligned;
	/* the counters of events (packets and bytes: e.traffic) */
	struct roce_qp_stats stats __rte_cache_aligned;
};

_Static_assert(offsetof(struct roce_qp, tm_posted) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct roce_qp, dev) / RTE_CACHE_LINE_SIZE &&
	       offsetof(struct roce_qp, attr.dest_qp_num) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct roce_qp, idx) / RTE_CACHE_LINE_SIZE &&
	       offsetof(struct roce_qp, mtu) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct roce_qp, idx) / RTE_CACHE_LINE_SIZE &&
	       offsetof(struct roce_qp, txh.gen) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct roce_qp, tmo_tsc) / RTE_CACHE_LINE_SIZE,
	       "a message's visit reads three lines of struct roce_qp before its engine state");

/* The window's slot of free-running counter @i (struct roce_qp_eng's win). */
static inline struct droce_send_wqe **
roce_win_slot(const struct roce_qp *qp, uint32_t i)
{
	return &qp->e.win[i & qp->e.win_mask];
}

/* --- Multicast groups (roce_mcast.c) --- */
/*
 * The QPs of this device attached to one group, as the engine reads them:
 * never changed while published. Each group slot has two copies; attach and
 * detach write the one not published, publish it (a release store in
 * dev->mcg_tbl) and wait with roce_dev_quiesce() until no engine iteration
 * can still read the other, which the next change then reuses: read-copy-
 * update with the engine iteration as the read-side section, and nothing
 * allocated. A QP leaves every group before it is freed (roce_qp_destroy).
 */
struct roce_mcg {
	rte_be32_t ip;			/* the group, 224.0.0.0/4 */
	struct rte_ether_addr mac;	/* 01:00:5e + its low 23 bits (RFC 1112 6.4) */
	uint32_t nqp;
	struct roce_qp *qp[DROCE_MAX_MCAST_QP_ATTACH];
};

/* --- Device --- */
/* processes forked from the one that probed a device, sharing it (roce_share.c) */
#define ROCE_SHARE_OWNERS	16
#define ROCE_SHARE_LISTEN	64	/* CM listeners' service IDs, every process */

struct roce_engine;

/* How frames reach their QP's queue on the port (roce_steer.c; devarg steering=) */
enum roce_steer {
	ROCE_STEER_AUTO,		/* asked: flow rules, else RSS, else nothing */
	ROCE_STEER_NONE,		/* every frame on the wrong queue is handed off */
	ROCE_STEER_RSS,			/* droce's RSS key and RETA (roce_steer_sport) */
	ROCE_STEER_FLOW,		/* an rte_flow rule per UDP source port's low bits */
};
#define ROCE_STEER_KEY_MAX	52	/* the longest RSS key droce has for a port */

struct rte_flow;

/*
 * The device's own ethdev port (roce_ethdev.c), as a bifurcated NIC has one
 * beside its RDMA function: what arrives on the owned port and is not
 * droce's goes to its receive queue, what the application sends on it goes
 * out on the owned port with droce's own frames. The rings are the queues:
 * @rx is the engine's to fill (single producer: the engine, or the holder of
 * the inline lock) and rx_burst's to empty; @tx is tx_burst's to fill and
 * the engine's to empty.
 */
struct roce_eth {
	struct roce_dev *dev;
	uint16_t port_id;
	bool present;			/* allocated and not closed (control path) */
	uint32_t running;		/* started: the engine hands frames over and sends (atomic) */
	uint32_t promisc;		/* frames to other unicast MACs too (atomic) */
	uint32_t allmulti;		/* every multicast frame, not only broadcast (atomic) */
	struct rte_ring *rx;
	struct rte_ring *tx;
	/* rx_burst's */
	uint64_t ipackets __rte_cache_aligned;
	uint64_t ibytes;
	/* tx_burst's (atomic adds: the ring takes several producers) */
	uint64_t opackets __rte_cache_aligned;
	uint64_t obytes;
	/* the engine's: frames for a started port that found its ring full */
	uint64_t imissed __rte_cache_aligned;
	/* control path: the values at the last stats_reset */
	uint64_t base_ipackets, base_ibytes, base_opackets, base_obytes, base_imissed;
};

/*
 * One rx/tx queue pair of the device's port and what the engine keeps for
 * it: the lcore that moves it (an engine lcore, or the application's own
 * thread inline) touches nothing of another queue's. Each QP belongs to one
 * queue (roce_qp.q), which alone runs its requester, responder and
 * completer. Queue 0 is the device's default: it also answers ARP, takes
 * the frames that are not droce's, delivers multicast, runs UD QPs, QP1,
 * XRC and tag matching, and the control path's jobs. A frame that reaches
 * the wrong queue (no steering on the port, or a port with fewer queues)
 * is handed to its owner through the owner's @in ring (roce_q_demux).
 */
struct shm_queue;

struct roce_q {
	struct roce_dev *dev;
	uint16_t id;			/* index in dev->q, and its queue on the port */
	rte_spinlock_t *lock;		/* inline progress: one caller at a time (q0: dev->inline_lock) */
	rte_spinlock_t own_lock;	/* the lock of a queue other than 0 */
	struct rte_ring *in;		/* frames other queues received for its QPs (MP/SC) */
	struct roce_engine *engine;	/* the engine lcore that moves it, or NULL: inline */
	uint64_t epoch __rte_cache_aligned;	/* odd while an iteration runs */
	/*
	 * The QPs with work, which each iteration visits (roce_poll.c), as
	 * tokens (roce_qp_token); a QP joins when its doorbell rings (@db:
	 * its producers under a mutex, the engine consumes), when a packet comes for it, or
	 * when the engine gives it work, and leaves when it has none.
	 */
	struct rte_ring *db;
	pthread_mutex_t db_lock;	/* its producers' (droce_rdev_qp_doorbell) */
	uint16_t nb_tx;
	uint16_t nb_ack;
	bool tx_full;			/* the port took no more in this visit of the QPs */
	struct roce_qp *tx_qp;		/* whose packet roce_ip_xmit sends (roce_qp_cnt_tx), or NULL */
	struct roce_qp *ack_qp[DROCE_BURST];	/* QPs owing a coalesced ACK */
	struct rte_mbuf *tx[DROCE_BURST * 2];
	/*
	 * Zero-copy frames (roce_tx_zc): their payload segments point into
	 * registered memory and share this, whose count the queue holds at 1
	 * (the segments add theirs), so its free callback never runs. Such a
	 * frame is staged (@zc_staged) until the next flush, which leaves none
	 * behind: the port copies and frees it, or the flush copies it.
	 */
	struct rte_mbuf_ext_shared_info zc_shinfo;
	bool zc_staged;
	/*
	 * The port's tx queue when net_shm drives it: data frames and ACKs are
	 * built straight in its slots (roce_txf_begin), else NULL.
	 */
	struct shm_queue *shm_txq;
	uint8_t shm_build[256] __rte_cache_aligned;	/* where a small frame is built */
	/*
	 * The port's rx queue when net_shm drives it: frames are taken from
	 * its slots into @shm_rx_buf (a big WRITE's or READ response's headers
	 * only: its payload is read in the slot, @shm_rx_frame), read through
	 * the mbuf header @shm_rx_m that nothing keeps (roce_rx_shm), else NULL.
	 */
	struct shm_queue *shm_rxq;
	const uint8_t *shm_rx_frame;
	struct rte_mbuf shm_rx_m;
	uint8_t shm_rx_buf[256] __rte_cache_aligned;
	/*
	 * The engine clock (timer cycles) that RC deadlines use: it advances
	 * with the timer while the queue is polled, but by at most
	 * dev->clock_gap_max across the gap between two iterations (roce_clock).
	 */
	uint64_t clock;			/* at the start of the last iteration */
	uint64_t clock_tsc;		/* timer cycles then */
	/* whole iterations that read the port (roce_q_poll; atomic: the waker reads it) */
	uint32_t rx_rounds;
	struct roce_stats stats;	/* the device's are the sum of its queues' */
	uint32_t wake_rounds;		/* the waker's: rx_rounds after its last look (roce_inline.c) */
	uint32_t nb_active;
	uint64_t active[DROCE_MAX_QP];
};

struct roce_dev {
	struct droce_rdev rdev;		/* the interface's: name, ops, callbacks */
	char name[RTE_DEV_NAME_MAX_LEN];	/* "droce0" */
	char ethdev_name[RTE_DEV_NAME_MAX_LEN];
	uint16_t port_id;
	struct rte_eth_dev_owner owner;	/* droce owns the port */
	uint16_t mtu;			/* ethdev MTU (IP packet) */
	uint16_t ib_mtu;		/* largest IB MTU that fits, bytes */
	int lcore;			/* engine lcore, -1 = inline progress */
	uint16_t nb_lcores;		/* lcore=a:b:...: the engine lcores of the queues, in turn */
	int16_t q_lcore[DROCE_MAX_QUEUES];
	/*
	 * lcore=thread: inline, and an application's call moves it only when
	 * the call is about it (its CQ, its QP): the devices of an application
	 * whose lcores each own theirs are moved by their owners alone
	 */
	bool progress_own;
	struct rte_ether_addr mac;
	rte_be32_t ip;
	/*
	 * A unicast RoCEv2 frame to this device, its first ROCE_RX_PLAIN_LEN
	 * bytes as words: what the bits of the mask must be (roce_rx_plain())
	 */
	uint64_t rx_plain_val[ROCE_RX_PLAIN_LEN / 8];
	uint64_t rx_plain_mask[ROCE_RX_PLAIN_LEN / 8];
	uint64_t guid;
	struct rte_mempool *mp;
	struct rte_ring *loop;		/* frames addressed to ourselves */
	struct roce_engine *engine;
	/*
	 * Inline progress: one caller at a time (queue 0's lock); the word
	 * holds the holder's process ID (roce_inline_trylock). Its own line: every iteration of queue 0 writes it, and the other queues'
	 * lcores read the fields around it for every packet.
	 */
	rte_spinlock_t inline_lock __rte_cache_aligned;
	struct roce_capture *cap __rte_cache_aligned;	/* devarg pcapng=: the capture, or NULL (roce_capture.c) */

	/* control path */
	pthread_mutex_t lock;
	uint32_t nb_pd, nb_cq, nb_srq, nb_ah, nb_qp, nb_mr;
	uint32_t pdn_next;
	uint32_t ctx_refs;
	uint32_t prog_refs;		/* contexts + a started ethdev port: progress runs while > 0 */
	struct droce_rdev_mr *mr_tbl[DROCE_MAX_MR];	/* by key >> ROCE_MR_GEN_BITS */
	uint32_t mr_gen[DROCE_MAX_MR];
	/*
	 * Windows bound to each MR, or ROCE_MR_NMW_DYING while ibv_dereg_mr
	 * takes it (atomic: the engine binds and unbinds, roce_mr_dereg
	 * claims; see there).
	 */
	uint32_t mr_nmw[DROCE_MAX_MR];
	uint32_t nb_mw;
	struct droce_rdev_mw *mw_tbl[DROCE_MAX_MW];	/* by R_Key >> ROCE_MW_KEY_BITS */
	uint8_t mw_key[DROCE_MAX_MW];	/* each slot's last key, so a new window's differs */

	/* port 1 (roce_port.c): the link state last announced, while a context is open */
	pthread_mutex_t port_lock;
	bool port_up;
	bool port_lsc;			/* the ethdev interrupts link changes; else polled */
	bool port_revive;		/* a memif client: restarted while its link is down */
	bool port_reviving;		/* the restart alarm is armed */
	bool port_warm;			/* memif: this connection's pages are mapped */
	/* inline progress while the application sleeps (the waker, roce_inline.c) */
	uint32_t wake_armed;		/* CQs with a channel, armed and not fired */
	uint32_t wake_waiters;		/* threads blocked in a verbs wait */

	/* published to the engine with release stores */
	struct roce_qp *qp_tbl[DROCE_MAX_QP];
	bool qp_taken[DROCE_MAX_QP];	/* control path, under lock: a QP is being made or is in qp_tbl */
	uint32_t qp_hi;			/* highest used index + 1 */
	uint64_t qp_serial;		/* the last QP's serial */
	/* 1 + qp_tbl index of QP1, 0 = none: each process sharing the device has its own */
	uint32_t gsi_idx[ROCE_SHARE_OWNERS];
	/* the service IDs CM listeners took, and their processes (roce_share.c) */
	rte_spinlock_t listen_lock;
	struct roce_listen {
		uint64_t sid;
		uint32_t owner;
		uint32_t used;
	} listen[ROCE_SHARE_LISTEN];
	struct roce_srq *tm_tbl[DROCE_MAX_TM_SRQ];	/* tag-matching SRQs */
	struct roce_srq *srq_tbl[DROCE_MAX_SRQ];	/* XRC SRQs, by number (roce_srq_by_num) */
	uint32_t srq_gen[DROCE_MAX_SRQ];	/* control path: each slot's uses */
	uint32_t tm_hi;
	struct roce_mcg *mcg_tbl[DROCE_MAX_MCAST_GRP];	/* multicast groups: NULL, or mcg_buf[i][0/1] */
	uint32_t mcg_hi;		/* highest slot ever used + 1 */
	/* multicast, control path (roce_mcast.c), under mcast_lock */
	pthread_mutex_t mcast_lock;
	struct roce_mcg mcg_buf[DROCE_MAX_MCAST_GRP][2];	/* each slot's two copies */
	uint32_t nb_mcast_attach;	/* QP attachments, all groups */
	bool mc_allmulti;		/* droce put the port in allmulticast (no filter list) */

	uint32_t announce;		/* set: the engine sends a gratuitous ARP */
	/* set: the engine runs this CQ's job (a resize or a purge), then clears it (cq_job) */
	struct roce_cq *cq_resize;
	uint32_t cq_resize_owner;	/* the process that set it (roce_share.c) */
	pthread_mutex_t cq_resize_lock;	/* one resize at a time */

	/* engine: the port's queues, each moved by one lcore (struct roce_q) */
	uint16_t nb_q;			/* devarg queues=: 1 unless given */
	struct roce_q *q[DROCE_MAX_QUEUES];	/* q[0] is &q0 */
	uint32_t q_next;		/* control path: the queue the next spread QP takes */
	uint32_t q_hold;		/* set: only queue 0 moves (roce_dev_hold) */
	enum roce_steer steer_arg;	/* devarg steering= */
	enum roce_steer steer;		/* what steers on the started port: NONE, RSS or FLOW */
	bool steer_rss;			/* the port was configured with droce's RSS */
	struct rte_flow *steer_flow[DROCE_MAX_QUEUES];	/* ROCE_STEER_FLOW's rules */
	/*
	 * A port whose PMD may unmap its rings from another thread (net_memif,
	 * when the peer leaves): its own lock, held around each burst
	 * (roce_port_rx/tx); NULL for every other port
	 */
	rte_spinlock_t *port_guard;
	/*
	 * The port may hold frames that only a later burst releases (a wrapper
	 * such as net_impair): an iteration that sent nothing still makes a
	 * zero-frame tx burst. False for ports known to send at once.
	 */
	bool port_tx_kick;
	/*
	 * zcopy=: the frames of an RC SEND or WRITE of at least this many
	 * bytes take their payload to the port as segments of registered
	 * memory, not copied (roce_tx_zc); 0: never
	 */
	uint32_t zc_min;
	uint32_t port_paused;		/* set while the control path restarts the port */
	/* a device shared by forked processes (roce_share.c) */
	bool share_on;			/* processes were forked: a frame may be another's */
	struct rte_ring *share_in[ROCE_SHARE_OWNERS];	/* frames for each process's QPs */
	struct roce_neigh neigh[DROCE_NEIGH_MAX];	/* queue 0's to write, every queue's to read */
	uint32_t neigh_pending;		/* entries asked for and not resolved yet */
	uint32_t txh_gen;		/* odd (struct roce_txh, roce_txh_stale) */
	uint32_t neigh_want;		/* an IP (be) for queue 0 to resolve; 0 none */
	uint32_t neigh_recheck;		/* an IP (be) for queue 0 to confirm (roce_neigh_confirm) */
	uint64_t tsc_hz;
	uint64_t clock_gap_max;		/* see roce_q's clock */
	uint64_t rto_min;		/* early resends' shortest delay, timer cycles; 0 none */
	struct roce_eth eth;		/* the device's own ethdev port (devarg ethport=) */
	struct roce_q q0;		/* queue 0: the device's default queue */
};

/* Downcasts from the interface's objects */
#define to_roce_dev(p)	container_of(p, struct roce_dev, rdev)
#define to_roce_cq(p)	container_of(p, struct roce_cq, fp)
#define to_roce_qp(p)	container_of(p, struct roce_qp, fp)
#define to_roce_srq(p)	container_of(p, struct roce_srq, fp)

/* RC's reliability: RC, and both halves of XRC */
static inline bool
roce_qp_reliable(const struct roce_qp *qp)
{
	/* one shift and test where three compares each took a branch */
	const uint32_t reliable = 1U << IBV_QPT_RC | 1U << IBV_QPT_XRC_SEND | 1U << IBV_QPT_XRC_RECV;
	uint32_t t = (uint32_t)qp->fp.type;

	return t < 32 && (reliable >> t & 1);
}

static inline uint32_t roce_qp_state(const struct roce_qp *qp)
{
	return droce_rdev_qp_state(&qp->fp);
}

/* READs and atomics complete with their responses, not with an ACK. */
static inline bool
roce_wqe_is_rd_atomic(const struct droce_send_wqe *w)
{
	RTE_BUILD_BUG_ON(IBV_WR_ATOMIC_CMP_AND_SWP != IBV_WR_RDMA_READ + 1 ||
			 IBV_WR_ATOMIC_FETCH_AND_ADD != IBV_WR_RDMA_READ + 2);
	return (uint32_t)w->opcode - IBV_WR_RDMA_READ <= 2;
}

static inline uint32_t roce_mtu_bytes(enum ibv_mtu m) { return 128U << m; }

#endif /* ROCE_H */
