/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast path between the verbs facade (lib/verbs) and a droce driver
 * (drivers/rdma/roce): exactly what posting and polling touch, in the manner
 * of DPDK's rte_dmadev_core.h. Work requests go to the driver as WQEs in
 * rte_rings; completions come back as struct droce_cqe in the CQ's ring.
 * Everything else (creating, modifying, destroying) goes through the ops
 * table of droce_rdev_pmd.h.
 *
 * The driver allocates and owns every object here; the facade reads the
 * fields marked so, and writes only WQEs and ring entries.
 */
#ifndef DROCE_RDEV_CORE_H
#define DROCE_RDEV_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ip.h>
#include <rte_ring.h>

#include "droce_config.h"

struct droce_rdev_alloc;

#define DROCE_QPN_MASK	0xffffffU	/* QPNs are 24 bits on the wire */
#define DROCE_GSI_QPN	1		/* QP1: management datagrams (the CM's) */
#define DROCE_GSI_QKEY	0x80010000U	/* QP1's well-known Q_Key (IBA 13.4.6.2) */
#define DROCE_MCAST_QPN	0xffffffU	/* the DestQP of every multicast packet */

/*
 * A UD receive buffer begins with the 40-byte GRH; RoCEv2 over IPv4 leaves
 * its first 20 bytes zero and puts the packet's IPv4 header in the rest.
 */
#define DROCE_GRH_IPV4_OFF	20

static inline const struct rte_ipv4_hdr *
droce_grh_ipv4(const void *grh)
{
	return (const struct rte_ipv4_hdr *)((const uint8_t *)grh + DROCE_GRH_IPV4_OFF);
}

/* A resolved destination: what a UD WR's AH or an RC/UC QP's path holds. */
struct droce_av {
	rte_be32_t dip;
	uint8_t tos;		/* traffic_class */
	uint8_t ttl;		/* hop_limit */
};

/*
 * A send WQE. The facade fills the WR's fields (the opcode's own, in @wr,
 * only for the opcodes that have them) and zeroes npkts; first_psn,
 * last_psn, npkts and tm are the driver's.
 */
struct droce_send_wqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	uint32_t send_flags;
	union {
		rte_be32_t imm_data;
		uint32_t invalidate_rkey;	/* LOCAL_INV, SEND_WITH_INV */
	};
	uint32_t num_sge;
	uint32_t length;		/* total bytes */
	uint32_t signaled;		/* completes into the CQ on success */
	uint32_t first_psn;		/* the driver's */
	uint32_t last_psn;		/* the driver's */
	uint32_t npkts;			/* the driver's */
	uint8_t tm;			/* the driver's own WQE (rendezvous) */
	uint8_t inl;			/* data is in inline_data */
	/*
	 * At byte 48 of a line-aligned slot (roce_wq_init): a SEND of one SGE
	 * is one cache line for the post and the engine alike.
	 */
	union {
		struct ibv_sge sge[DROCE_MAX_SGE];
		uint8_t inline_data[DROCE_MAX_INLINE];
	};
	/* what the other WRs add, after the SGEs (droce_send_wqe_clear) */
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
			struct droce_av av;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		/*
		 * BIND_MW: the window (the driver's handle, ibv_mw.handle), its
		 * new R_Key, and what it is bound to (mr_lkey 0, length 0:
		 * unbound, type 1 only)
		 */
		struct {
			uint64_t addr;
			uint64_t length;
			uint32_t mw_handle;
			uint32_t rkey;
			uint32_t mr_lkey;
			uint32_t access;
		} bind;
	} wr;
	uint32_t xrc_srqn;		/* XRC_SEND: the remote XRC SRQ (XRCETH) */
	uint32_t tm_handle;
};

_Static_assert(offsetof(struct droce_send_wqe, sge) == 48,
	       "a one-SGE SEND's WQE is one cache line");

/* Every field of @w but its SGEs and inline data, zeroed. */
static inline void
droce_send_wqe_clear(struct droce_send_wqe *w)
{
	memset(w, 0, offsetof(struct droce_send_wqe, sge));
	memset((uint8_t *)w + offsetof(struct droce_send_wqe, wr), 0,
	       sizeof(*w) - offsetof(struct droce_send_wqe, wr));
}

struct droce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;
	struct ibv_sge sge[DROCE_MAX_SGE];
};

/*
 * A work queue: a fixed array of WQE slots, in one of two ways.
 * - A QP's own send or receive queue (@posted NULL): the slots are a ring.
 *   Posts fill them in turn (@post_idx next) and count them in @posts,
 *   with a release store the driver's acquire pairs with; the driver takes
 *   them in the same turn (@taken, @take_idx) and gives them back in it
 *   (@retired, @retire_idx: IBA has a queue complete in order, flushes
 *   too). The queue is full when @posts - @retired reaches @size -
 *   @reserved. Two counters and a slot a WR, no ring between.
 * - An SRQ (@posted and @free rings of slot pointers): its QPs take and
 *   finish its WQEs in any order (tag matching, QPs on several lcores).
 * Posting threads take @post_lock for a whole WR list, so only one of them
 * at a time works on the application's side: a mutex, not a spin lock, so
 * that with more threads than CPUs a waiter sleeps instead of spinning
 * behind a preempted poster (as a multi-producer ring's tail update would).
 */
struct droce_wq {
	/* what a post reads and writes: one line */
	void *slots;
	uint32_t size;		/* slots */
	uint32_t max_sge;
	uint32_t slot_size;
	uint32_t reserved;	/* the last slots, the driver's own (not taken by posts) */
	uint32_t posts;		/* WRs ever posted (a QP's queue): the poster's */
	uint32_t post_idx;	/* the next slot to fill */
	/*
	 * @retired as the poster last read it: the slots it counts free are
	 * read again only once they are used up, so that a post does not read
	 * the driver's line (written by an engine lcore) every time
	 */
	uint32_t retired_seen;
	bool no_lock;		/* a thread domain's QP: one thread posts, no post_lock */
	struct rte_ring *free;	/* an SRQ's free slots */
	struct rte_ring *posted;	/* an SRQ's posted slots */
	pthread_mutex_t post_lock __rte_cache_aligned;
	/* the slots came from this application allocator (a parent domain's) */
	const struct droce_rdev_alloc *alloc;
	uint64_t alloc_type;
	/* a QP's queue: the driver's side, on a line of its own */
	uint32_t taken __rte_cache_aligned;	/* WRs ever taken by the driver */
	uint32_t take_idx;	/* the next slot to take */
	uint32_t retired;	/* slots ever given back (release store) */
	uint32_t retire_idx;	/* the slot the next one given back must be */
};

/*
 * rte_ring_empty() and rte_ring_count() with atomic loads of the two tails:
 * DPDK's read them plainly, which ThreadSanitizer reports against the other
 * side's tail stores (test_steer's lcores, a stop's CI). The producer's tail
 * with acquire, so that a consumer that sees an entry sees what was
 * published before it; the numbers are a snapshot from any other thread.
 */
static inline bool
droce_ring_empty(const struct rte_ring *r)
{
	return __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
}

static inline uint32_t
droce_ring_count(const struct rte_ring *r)
{
	uint32_t n = (__atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) -
		      __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED)) & r->mask;

	return n > r->capacity ? r->capacity : n;
}

/* The WRs posts may fill: the slots less the driver's own. */
static inline uint32_t
droce_wq_cap(const struct droce_wq *wq)
{
	return wq->size - wq->reserved;
}

/* Slot @i of @wq. */
static inline void *
droce_wq_slot(const struct droce_wq *wq, uint32_t i)
{
	return (uint8_t *)wq->slots + (size_t)i * wq->slot_size;
}

/* The slot after @i, in the turn posts take them (a QP's own queue). */
static inline uint32_t
droce_wq_next(const struct droce_wq *wq, uint32_t i)
{
	return i + 1 == droce_wq_cap(wq) ? 0 : i + 1;
}

/* The number of WRs @wq takes now (exact under its post_lock, else a snapshot). */
static inline uint32_t
droce_wq_room(const struct droce_wq *wq)
{
	uint32_t cap = droce_wq_cap(wq), retired, out;

	if (wq->free != NULL)
		return droce_ring_count(wq->free);
	/*
	 * retired first: posts, read after, is no less (from another thread
	 * than the poster's, both may have moved on meanwhile: clamped)
	 */
	retired = __atomic_load_n(&wq->retired, __ATOMIC_ACQUIRE);
	out = __atomic_load_n(&wq->posts, __ATOMIC_ACQUIRE) - retired;
	return out < cap ? cap - out : 0;
}

/* WRs posted to @wq that the driver has not taken yet (exact on the driver's side). */
static inline uint32_t
droce_wq_pending(const struct droce_wq *wq)
{
	if (wq->posted != NULL)
		return droce_ring_count(wq->posted);
	return __atomic_load_n(&wq->posts, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&wq->taken, __ATOMIC_RELAXED);
}

/*
 * A free slot of @wq to fill, or NULL when it is full; droce_wq_post()
 * hands it to the driver. Under post_lock (or a thread domain's one thread).
 */
static inline void *
droce_wq_take(struct droce_wq *wq)
{
	void *w;

	if (wq->free != NULL)
		return rte_ring_sc_dequeue(wq->free, &w) == 0 ? w : NULL;
	if (wq->posts - wq->retired_seen >= droce_wq_cap(wq)) {
		/* acquire: the driver is done with the slots before they are filled again */
		wq->retired_seen = __atomic_load_n(&wq->retired, __ATOMIC_ACQUIRE);
		if (wq->posts - wq->retired_seen >= droce_wq_cap(wq))
			return NULL;
	}
	return droce_wq_slot(wq, wq->post_idx);
}

/* Post @w, which droce_wq_take() gave: the driver sees it from now on. */
static inline void
droce_wq_post(struct droce_wq *wq, void *w)
{
	if (wq->posted != NULL) {
		rte_ring_sp_enqueue(wq->posted, w);	/* sized for every slot */
		return;
	}
	wq->post_idx = droce_wq_next(wq, wq->post_idx);
	/* release: the WQE is written before the driver sees it counted */
	__atomic_store_n(&wq->posts, wq->posts + 1, __ATOMIC_RELEASE);
}

/* @wq's post_lock, unless a thread domain makes it needless */
static inline void
droce_wq_lock(struct droce_wq *wq)
{
	if (!wq->no_lock)
		pthread_mutex_lock(&wq->post_lock);
}

static inline void
droce_wq_unlock(struct droce_wq *wq)
{
	if (!wq->no_lock)
		pthread_mutex_unlock(&wq->post_lock);
}

/* A tag list operation, handed from ibv_post_srq_ops() to the driver. */
struct droce_tm_op {
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

/*
 * A completion, as the CQ ring holds it: the work completion and, for a
 * tag-matching one, its tag and app_ctx (struct ibv_wc_tm_info; non-zero
 * only with IBV_WC_TM_MATCH, as rdma-core's tag_matching.md has it) and the
 * tag handle that polling it gives back to the driver (0: none).
 */
struct droce_cqe_tm {
	uint64_t tag;
	uint32_t app_ctx;
	uint32_t release;
};

struct droce_cqe {
	struct ibv_wc wc;
	struct droce_cqe_tm tm;
};

struct droce_rdev;

/*
 * A CQ. The facade reads all of it; one poller at a time takes completions.
 * The completions held are slots[i & mask] for i from @consumed to
 * @produced: no ring structure between, so a completion moves one line
 * (its slot) and the two counts between the engine and the poller. The
 * cq_resize op replaces @slots, @mask and @cap while no poller runs.
 */
struct droce_rdev_cq {
	struct droce_cqe *slots;	/* mask + 1 of them */
	uint32_t mask;
	uint32_t cap;			/* completions held at most (the ring's size) */
	struct droce_rdev *dev;
	uint32_t cqe;
	uint32_t tm_users;		/* tag-matching and XRC SRQs completing here (atomic) */
	void *user;			/* the facade's, given back in events */
	/*
	 * Completions ever put in @slots (the driver's: a release store after
	 * writing each) and ever taken or purged from them (the facade's, under
	 * its poll lock: a release store after reading them, which the driver's
	 * acquire pairs with before it writes those slots again; a purge, which
	 * runs while the facade holds the pollers off, adds what it dropped).
	 * Equal: nothing to take, which ibv_poll_cq sees without its lock. Each
	 * on a line of its own: two writers.
	 */
	uint64_t produced __rte_cache_aligned;
	uint64_t consumed __rte_cache_aligned;
};

/* Nothing in @cq to take: a hint, exact for a poller that holds the poll lock. */
static inline bool
droce_rdev_cq_empty(const struct droce_rdev_cq *cq)
{
	return __atomic_load_n(&cq->produced, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&cq->consumed, __ATOMIC_RELAXED);
}

/* An SRQ, and a tag-matching SRQ's queues (tm_ops == NULL otherwise). */
struct droce_rdev_srq {
	struct droce_wq rq;		/* struct droce_recv_wqe slots */
	struct droce_rdev *dev;
	struct rte_ring *tm_ops;	/* struct droce_tm_op */
	struct rte_ring *tm_free;	/* free tag handles (uintptr_t) */
	uint32_t tm_max_tags;
	uint32_t srqn;			/* an XRC SRQ's number (ibv_get_srq_num), else 0 */
	void *user;
};

/*
 * A QP. @state is the driver's to write (under the modify op); the facade
 * reads it to refuse posts in the wrong state.
 */
struct droce_rdev_qp {
	struct droce_wq sq;		/* struct droce_send_wqe slots */
	struct droce_wq rq;		/* struct droce_recv_wqe slots; unused with an SRQ or XRC */
	/* one line, which every post and every visit of the driver reads */
	struct droce_rdev *dev;
	struct droce_rdev_srq *srq;
	enum ibv_qp_type type;
	uint32_t qpn;
	uint32_t max_inline;
	uint32_t max_ud_len;		/* UD: one packet's payload */
	bool sq_sig_all;
	uint32_t state;			/* enum ibv_qp_state (atomic) */
	void *user;
	/*
	 * The doorbell (droce_rdev_qp_doorbell): @db_armed is set while the
	 * driver has the QP among those with work, or on its way there as
	 * @db_token in the device's ring @db; the driver clears it when the QP
	 * runs out of work. The flag is on the line above, which a post reads
	 * anyway (with thousands of QPs, a line of its own was one more miss a
	 * message); what only ringing reads is on the next.
	 */
	uint32_t db_armed;
	struct rte_ring *db __rte_cache_aligned;
	pthread_mutex_t *db_lock;	/* the ring's producers', the device's */
	uint64_t db_token;
};
_Static_assert(offsetof(struct droce_rdev_qp, db_armed) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct droce_rdev_qp, state) / RTE_CACHE_LINE_SIZE &&
	       offsetof(struct droce_rdev_qp, dev) / RTE_CACHE_LINE_SIZE ==
	       offsetof(struct droce_rdev_qp, state) / RTE_CACHE_LINE_SIZE,
	       "a post reads one line of the QP besides its queue's");

/*
 * Not an ibv_event_type: an event the driver raises through async_cb
 * (element.qp) when the engine moved an RC QP to ERR on its own (a fatal
 * completion error or an affiliated QP error), never when a modify did. The
 * facade hands it to the connection manager of the process (droce_private.h:
 * a peer that vanished without a DREQ), never to ibv_get_async_event.
 */
#define DROCE_RDEV_EVENT_QP_ERR	((enum ibv_event_type)0x10000)

/*
 * A device. @progress is the doorbell of inline progress: the facade calls
 * it from every post, poll and wait; NULL while engine lcores progress the
 * device.
 */
struct droce_rdev {
	char name[RTE_DEV_NAME_MAX_LEN];	/* "droce0" */
	const struct droce_rdev_ops *ops;
	uint64_t guid;			/* big endian, as ibv_get_device_guid() */
	rte_be32_t ip;			/* GID index 0 is ::ffff:<ip> */
	uint16_t ib_mtu;		/* largest IB MTU the port carries, bytes */
	void (*progress)(struct droce_rdev *dev);
	/*
	 * set by the facade while a context is open (droce_rdev_pmd.h);
	 * async_cb also gets DROCE_RDEV_EVENT_QP_ERR
	 */
	void (*async_cb)(struct droce_rdev *dev, struct ibv_async_event *ev);
	void (*comp_cb)(struct droce_rdev_cq *cq);
};

static inline uint32_t
droce_rdev_qp_state(const struct droce_rdev_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

/*
 * After posting to @qp (or changing its state): make sure the driver visits
 * it. Its engine looks only at QPs with work, never at every QP. The
 * exchange is a full barrier: the WQEs just posted are visible before the
 * flag is read, which pairs with the driver's clearing it and then looking
 * at the queues once more, so a post is never missed.
 */
static inline void
droce_rdev_qp_doorbell(struct droce_rdev_qp *qp)
{
	if (__atomic_exchange_n(&qp->db_armed, 1, __ATOMIC_SEQ_CST) == 0) {
		/*
		 * Only when the QP had no work: a single-producer ring under a
		 * mutex, not a multi-producer one, whose producers spin behind
		 * a preempted one (more threads than CPUs stalled for seconds).
		 * The ring holds a token for every QP: this cannot fail.
		 */
		pthread_mutex_lock(qp->db_lock);
		rte_ring_enqueue_elem(qp->db, &qp->db_token, sizeof(qp->db_token));
		pthread_mutex_unlock(qp->db_lock);
	}
}

/* Inline progress from a call about @dev (its CQ, its QP, a wait on it). */
static inline void
droce_rdev_progress(struct droce_rdev *dev)
{
	void (*p)(struct droce_rdev *) = __atomic_load_n(&dev->progress, __ATOMIC_RELAXED);

	if (p != NULL)
		p(dev);
}

#endif /* DROCE_RDEV_CORE_H */
