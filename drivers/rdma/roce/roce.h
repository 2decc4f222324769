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
#include "roce_hdr.h"

extern int roce_logtype;
#define ROCE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, roce_logtype, "droce: %s(): " fmt "\n", __func__, ##__VA_ARGS__)

struct roce_dev;
struct roce_cq;
struct roce_qp;
struct roce_srq;

/*
 * Owed READ responses / atomic replies: up to max_dest_rd_atomic new requests,
 * plus as many re-executions of duplicates, which never crowd out new ones.
 */
#define ROCE_RD_JOBS	(2 * DROCE_MAX_RD_ATOMIC)
struct roce_pd;

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
};

/* A resolved destination: what a UD WR's AH or an RC/UC QP's path holds. */
struct roce_av {
	rte_be32_t dip;
	uint8_t tos;		/* traffic_class */
	uint8_t ttl;		/* hop_limit */
};

struct roce_neigh {
	rte_be32_t ip;
	struct rte_ether_addr mac;
	uint8_t valid;
	uint8_t is_static;
	uint16_t retry_ms;	/* while unresolved: wait before asking again, doubling */
	uint64_t req_tsc;	/* last ARP request sent */
};

/* --- Memory --- */
struct roce_pd {
	struct ibv_pd ibpd;
	struct roce_dev *dev;
	uint32_t pdn;
};

/* A key's low bits count re-registrations of its slot, so a stale key fails. */
#define ROCE_MR_GEN_BITS 20
#define ROCE_MR_GEN_MASK ((1U << ROCE_MR_GEN_BITS) - 1)
_Static_assert(DROCE_MAX_MR <= 1U << (32 - ROCE_MR_GEN_BITS), "MR index must fit in a key");

struct roce_mr {
	struct ibv_mr ibmr;
	struct roce_pd *pd;
	uint64_t iova;
	uint64_t length;
	uint8_t *host;		/* host address of iova */
	int access;
	uint32_t key;		/* lkey == rkey; index << ROCE_MR_GEN_BITS | generation */
};

/* --- Work queue entries --- */
struct roce_send_wqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	uint32_t send_flags;
	rte_be32_t imm_data;
	uint32_t num_sge;
	uint32_t length;		/* total bytes */
	uint32_t signaled;		/* completes into the CQ on success */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct roce_av av;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	/* engine state */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t npkts;
	uint8_t inl;			/* data is in inline_data */
	uint8_t tm;			/* enum roce_tm_wqe: the engine's own, for rendezvous */
	uint32_t tm_handle;		/* its tag */
	union {
		struct ibv_sge sge[DROCE_MAX_SGE];
		uint8_t inline_data[DROCE_MAX_INLINE];
	};
};

struct roce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;
	struct ibv_sge sge[DROCE_MAX_SGE];
};

/*
 * A work queue: a fixed array of WQE slots, a ring of free slot pointers
 * (empty means the queue is full) and the posted ring the engine consumes.
 * Both rings are created with exact sizes. Posting threads take @post_lock
 * for a whole WR list, so only one of them at a time works on the rings'
 * application ends: a mutex, not a spin lock, so that with more threads than
 * CPUs a waiter sleeps instead of spinning behind a preempted poster (as a
 * multi-producer ring's tail update would).
 */
struct roce_wq {
	void *slots;
	uint32_t size;		/* max WRs */
	uint32_t max_sge;
	struct rte_ring *free;
	struct rte_ring *posted;
	pthread_mutex_t post_lock;
};

/* --- CQ --- */
struct roce_comp_channel;

struct roce_cq {
	union {				/* ibv_cq_ex starts with the ibv_cq fields */
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;	/* created by ibv_create_cq_ex */
	};
	struct ibv_wc cur;		/* ibv_start_poll/next_poll: the current one */
	struct ibv_wc_tm_info cur_tm;	/* its tag and app_ctx */
	pthread_mutex_t poll_lock;	/* held from ibv_start_poll to ibv_end_poll */
	bool single_threaded;		/* IBV_CREATE_CQ_ATTR_SINGLE_THREADED: no lock */
	uint32_t tm_users;		/* TM SRQs completing here */
	uint64_t wc_flags;		/* ibv_create_cq_ex: the fields it may read */
	struct roce_dev *dev;
	struct rte_ring *ring;		/* struct ibv_wc elements */
	uint32_t cqe;
	struct roce_comp_channel *chan;
	/* written by the application, read by the engine */
	uint32_t armed __rte_cache_aligned;	/* 0, IBV_SOLICITED-only (2) or any (1) */
	/* written by the engine */
	uint32_t overflow __rte_cache_aligned;
	uint64_t events;			/* completion events raised */
};

/* --- Tag matching (rdma-core Documentation/tag_matching.md) --- */
/* A tag list operation, handed from ibv_post_srq_ops() to the engine. */
struct roce_tm_op {
	uint64_t wr_id;
	uint64_t recv_wr_id;
	uint64_t tag;
	uint64_t mask;
	struct ibv_sge sge;
	uint32_t num_sge;
	uint32_t handle;
	uint32_t unexpected_cnt;
	uint16_t opcode;		/* enum ibv_ops_wr_opcode */
	uint16_t flags;			/* enum ibv_ops_flags */
};

enum roce_tm_tag_state {
	TMT_FREE,			/* the application's, or its ADD is in flight */
	TMT_POSTED,			/* in the matching list */
	TMT_BUSY,			/* matched, data still arriving */
};

/* A tagged buffer; the engine owns it from its ADD to its last completion. */
struct roce_tm_tag {
	struct roce_recv_wqe rw;	/* wr_id = recv_wr_id, one SGE */
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
	ROCE_TM_PLAIN,			/* no TMH (shorter than one): an SRQ WQE, IBV_WC_RECV */
	ROCE_TM_NO_TAG,			/* an SRQ WQE, IBV_WC_TM_NO_TAG */
	ROCE_TM_UNEXPECTED,		/* an SRQ WQE, IBV_WC_TM_RECV without MATCH */
	ROCE_TM_EXPECTED,		/* a tagged buffer */
};

/*
 * A tag-matching completion carries its tag, app_ctx and the tag handle the
 * poll releases in ibv_wc fields that RC completions do not use; the facade
 * reads and clears them as the completion is polled. @release is
 * 1 + (dev->tm_tbl index << 12 | handle), 0 for none.
 */
#define ROCE_TM_HANDLE_BITS	12
static inline void
roce_wc_tm_set(struct ibv_wc *wc, uint64_t tag, uint32_t priv, uint32_t release)
{
	wc->src_qp = tag >> 32;
	wc->vendor_err = (uint32_t)tag;
	wc->slid = priv >> 16;
	wc->pkey_index = priv & 0xffff;
	wc->sl = release >> 8;
	wc->dlid_path_bits = release & 0xff;
}

static inline bool
roce_wc_is_tm(const struct ibv_wc *wc)
{
	return wc->opcode >= IBV_WC_TM_ADD && wc->opcode <= IBV_WC_TM_NO_TAG;
}

/*
 * A tag-matching SRQ. The application posts list operations into @ops and
 * takes handles from @free; the engine applies the operations in order,
 * matches arriving messages against the list and completes on @cq. A handle
 * goes back to @free when the application polls its last completion.
 */
struct roce_tm {
	struct roce_cq *cq;
	struct rte_ring *ops;		/* struct roce_tm_op, size max_ops */
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
	struct ibv_srq ibsrq;
	struct roce_dev *dev;
	struct roce_pd *pd;
	struct roce_wq rq;
	uint32_t limit;			/* armed limit, 0 = not armed */
	struct roce_tm *tm;		/* a tag-matching SRQ, else NULL */
};

/* --- QP --- */
/* Per-QP requester, completer and responder state, owned by the engine. */
struct roce_qp_eng {
	/* requester */
	struct roce_send_wqe **win;	/* dequeued, not yet completed; size = sq.size */
	/* free-running counters; the slot is counter % sq.size */
	uint32_t win_head;		/* oldest not completed */
	uint32_t win_cur;		/* next to (re)send from */
	uint32_t win_tail;		/* next free */
	uint32_t cur_off;		/* bytes of win[win_cur] sent */
	uint32_t cur_pkt;		/* packets of win[win_cur] sent */
	uint32_t psn;			/* next PSN to send */
	uint32_t pkts_since_ackreq;
	uint64_t retry_tsc;		/* retransmit deadline, 0 = none */
	uint64_t rnr_tsc;		/* do not send before */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint8_t tx_stalled;		/* RC: the next packet found no mbuf or neighbour */
	uint8_t last_wqe_raised;	/* IBV_EVENT_QP_LAST_WQE_REACHED sent */
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
	struct roce_recv_wqe *rwqe;	/* receive WQE being filled */
	uint32_t roff;			/* bytes written into it */
	/* tag matching: what the message in progress is, for a TM SRQ */
	uint8_t tm_kind;		/* enum roce_tm_kind */
	struct roce_tm_tag *tm_tag;	/* ROCE_TM_EXPECTED: the matched tag */
	uint8_t *w_host;		/* RDMA WRITE in progress: next byte */
	uint32_t w_left;		/* bytes of the RETH length still due */
	uint32_t w_len;			/* the RETH length */
	uint32_t w_rkey;		/* the RETH R_Key and VA, checked again per packet */
	uint64_t w_va;
	uint32_t una;			/* oldest unacknowledged PSN */
	uint32_t rd_gap_psn;		/* 1 + the READ response PSN last asked for again */
	/* responder: READ responses and atomic replies owed, in PSN order */
	struct roce_rd_job {
		uint8_t *host;		/* READ: next byte to send */
		uint32_t left;		/* READ: bytes left */
		uint32_t psn;		/* next response PSN */
		uint32_t first_psn;
		uint32_t rkey;		/* READ: checked again per response */
		uint64_t va;		/* READ: next byte to send */
		uint8_t atomic;
		uint8_t dup;		/* re-execution of a duplicate request */
		uint64_t orig;		/* atomic: value before the operation */
	} rd[ROCE_RD_JOBS];
	uint32_t rd_head, rd_tail;	/* free-running */
	uint32_t rd_ndup;		/* queued jobs that are re-executions */
	/* atomic replay cache (IBA 9.7.5.1.3: a duplicate atomic is not re-executed) */
	struct {
		uint32_t psn;
		uint8_t valid;
		uint64_t orig;
	} atm[DROCE_MAX_RD_ATOMIC];
	uint32_t atm_next;
};

struct droce_wr_batch;

struct roce_qp {
	union {				/* ibv_qp_ex starts with an ibv_qp */
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex;	/* created with send ops flags */
	};
	struct droce_wr_batch *batch;	/* the ibv_wr_* WRs being built, or NULL */
	struct roce_dev *dev;
	struct roce_pd *pd;
	struct roce_cq *scq;
	struct roce_cq *rcq;
	struct roce_srq *srq;
	enum ibv_qp_type type;
	uint32_t qpn;
	uint32_t idx;			/* index in dev->qp_tbl */
	bool sq_sig_all;
	uint32_t max_inline;
	struct roce_wq sq;		/* struct roce_send_wqe slots */
	struct rte_ring *tm_pool;	/* on a TM SRQ: slots kept for rendezvous */
	struct roce_wq rq;		/* struct roce_recv_wqe slots; unused with an SRQ */

	/* attributes, written by modify_qp before the state that uses them */
	struct ibv_qp_attr attr;
	struct roce_av av;		/* RC/UC destination */
	uint32_t mtu;			/* path MTU in bytes */
	uint64_t tmo_tsc;		/* local ACK timeout in timer cycles, 0 = infinite */
	uint16_t sport;			/* UDP source port */

	/* written by the application (post, modify), read by the engine */
	uint32_t state __rte_cache_aligned;	/* enum ibv_qp_state */

	/* written by the engine */
	struct roce_qp_eng e __rte_cache_aligned;
};

/* --- Device --- */
struct roce_engine;

struct roce_dev {
	char name[RTE_DEV_NAME_MAX_LEN];	/* "droce0" */
	char ethdev_name[RTE_DEV_NAME_MAX_LEN];
	uint16_t port_id;
	struct rte_eth_dev_owner owner;	/* droce owns the port */
	uint16_t mtu;			/* ethdev MTU (IP packet) */
	uint16_t ib_mtu;		/* largest IB MTU that fits, bytes */
	int lcore;			/* engine lcore, -1 = inline progress */
	struct rte_ether_addr mac;
	rte_be32_t ip;
	uint64_t guid;
	struct rte_mempool *mp;
	struct rte_ring *loop;		/* frames addressed to ourselves */
	struct roce_engine *engine;
	rte_spinlock_t inline_lock;	/* inline progress: one caller at a time */

	/* control path */
	pthread_mutex_t lock;
	uint32_t nb_pd, nb_cq, nb_srq, nb_ah, nb_qp, nb_mr;
	uint32_t pdn_next;
	uint32_t ctx_refs;
	struct roce_mr *mr_tbl[DROCE_MAX_MR];	/* by key >> ROCE_MR_GEN_BITS */
	uint32_t mr_gen[DROCE_MAX_MR];
	/* the facade's async event sink, set while a context is open */
	void (*async_cb)(struct roce_dev *dev, struct ibv_async_event *ev);
	void (*comp_cb)(struct roce_cq *cq);	/* an armed CQ got a completion */

	/* port 1 (roce_port.c): the link state last announced, while a context is open */
	pthread_mutex_t port_lock;
	bool port_up;
	bool port_lsc;			/* the ethdev interrupts link changes; else polled */
	/* inline progress while the application sleeps (the waker, roce_inline.c) */
	uint32_t wake_armed;		/* CQs with a channel, armed and not fired */
	uint32_t wake_waiters;		/* threads blocked in a verbs wait */
	uint64_t wake_epoch;		/* the waker's: epoch after its last look */

	/* published to the engine with release stores */
	struct roce_qp *qp_tbl[DROCE_MAX_QP];
	bool qp_taken[DROCE_MAX_QP];	/* control path, under lock: a QP is being made or is in qp_tbl */
	uint32_t qp_hi;			/* highest used index + 1 */
	struct roce_srq *tm_tbl[DROCE_MAX_TM_SRQ];	/* tag-matching SRQs */
	uint32_t tm_hi;

	uint32_t announce;		/* set: the engine sends a gratuitous ARP */

	/* engine */
	uint64_t epoch __rte_cache_aligned;	/* odd while an iteration runs */
	uint16_t nb_tx;
	uint16_t nb_ack;
	struct roce_qp *ack_qp[DROCE_BURST];	/* QPs owing a coalesced ACK */
	struct rte_mbuf *tx[DROCE_BURST * 2];
	struct roce_neigh neigh[DROCE_NEIGH_MAX];
	uint32_t neigh_pending;		/* entries asked for and not resolved yet */
	uint64_t tsc_hz;
	struct roce_stats stats;
};

/* Downcasts */
#define to_roce_pd(p)	container_of(p, struct roce_pd, ibpd)
#define to_roce_mr(p)	container_of(p, struct roce_mr, ibmr)
#define to_roce_cq(p)	container_of(p, struct roce_cq, ibcq)
#define to_roce_qp(p)	container_of(p, struct roce_qp, ibqp)
#define to_roce_srq(p)	container_of(p, struct roce_srq, ibsrq)

static inline uint32_t roce_qp_state(const struct roce_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

/* READs and atomics complete with their responses, not with an ACK. */
static inline bool
roce_wqe_is_rd_atomic(const struct roce_send_wqe *w)
{
	return w->opcode == IBV_WR_RDMA_READ || w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static inline uint32_t roce_mtu_bytes(enum ibv_mtu m) { return 128U << m; }

#endif /* ROCE_H */
