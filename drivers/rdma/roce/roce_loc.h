/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-file functions of the droce PMD, grouped by the file defining them. */
#ifndef ROCE_LOC_H
#define ROCE_LOC_H

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include "droce_memcpy.h"
#include "roce.h"

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
#endif

/*
 * Frames cross threads through code ThreadSanitizer does not see: the port's
 * PMD (a frame sent by one device's thread, received by another's) and the
 * mempool's driver (a buffer freed by one thread, allocated by another). In
 * a -Dtsan=true build these mark the hand-offs (each segment's address is the
 * sync object); in any other build they are nothing.
 */
#ifdef __SANITIZE_THREAD__
#define ROCE_TSAN_ACQUIRE(p)	__tsan_acquire((void *)(p))
#define ROCE_TSAN_RELEASE(p)	__tsan_release((void *)(p))
#else
#define ROCE_TSAN_ACQUIRE(p)	RTE_SET_USED(p)
#define ROCE_TSAN_RELEASE(p)	RTE_SET_USED(p)
#endif

/* nothing at all (not even a walk of the segment chain) outside a TSan build */
static inline void
roce_mbuf_handoff(struct rte_mbuf *m)
{
#ifdef __SANITIZE_THREAD__
	/* each segment's link read before its release: the next owner rewrites it */
	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		ROCE_TSAN_RELEASE(m);
		m = next;
	}
#else
	RTE_SET_USED(m);
#endif
}

static inline void
roce_mbuf_takeover(struct rte_mbuf *m)
{
#ifdef __SANITIZE_THREAD__
	for (; m != NULL; m = m->next)
		ROCE_TSAN_ACQUIRE(m);
#else
	RTE_SET_USED(m);
#endif
}

/*
 * rte_pktmbuf_alloc, taken over before the reset writes its header (the
 * thread that freed it may have read that header last).
 */
static inline struct rte_mbuf *
roce_mbuf_alloc(struct rte_mempool *mp)
{
	struct rte_mbuf *m = rte_mbuf_raw_alloc(mp);

	if (likely(m != NULL)) {
		ROCE_TSAN_ACQUIRE(m);
		rte_pktmbuf_reset(m);
	}
	return m;
}

/* this process's ID, for the inline lock's holder (roce_share.c keeps it) */
extern int32_t roce_self_pid;

/*
 * A device's inline progress lock. DPDK's x86 spin lock is inline assembly,
 * which ThreadSanitizer does not see as a lock: these tell it. Processes
 * forked from the one that probed the device share the lock, and one that
 * dies holding it must not stop the others (roce_share_lock_check).
 *
 * rte_spinlock_t operations for the locks every iteration takes: a plain
 * load before the exchange, so that a held lock costs no locked
 * instruction, and a release store to unlock (DPDK's x86 unlock is an
 * exchange, a full barrier that nothing here needs). They work on the same
 * word as rte_spinlock_*, which other holders of these locks may use.
 */
static inline bool
roce_spin_trylock(rte_spinlock_t *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) == 0 &&
	       __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void
roce_spin_lock(rte_spinlock_t *l)
{
	while (!roce_spin_trylock(l))
		rte_pause();
}

static inline void
roce_spin_unlock(rte_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/*
 * The device's inline lock word holds its holder's process ID, set by the
 * one exchange that takes it: a process that ends holding it is known by
 * it (roce_share_lock_check).
 */
static inline bool
roce_inline_trylock(struct roce_dev *dev)
{
	int z = 0;

	/* every post and poll tries every inline device */
	if (__atomic_load_n(&dev->inline_lock.locked, __ATOMIC_RELAXED) != 0 ||
	    !__atomic_compare_exchange_n(&dev->inline_lock.locked, &z, roce_self_pid, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	ROCE_TSAN_ACQUIRE(&dev->inline_lock);
	return true;
}

void roce_share_inline_lock(struct roce_dev *dev);

static inline void
roce_inline_lock(struct roce_dev *dev)
{
	if (unlikely(dev->share_on)) {	/* its holder may be a process that ended */
		roce_share_inline_lock(dev);
		return;
	}
	while (!roce_inline_trylock(dev))
		rte_pause();
}

static inline void
roce_inline_unlock(struct roce_dev *dev)
{
	ROCE_TSAN_RELEASE(&dev->inline_lock);
	__atomic_store_n(&dev->inline_lock.locked, 0, __ATOMIC_RELEASE);
}

/*
 * A queue's inline lock: queue 0's is the device's inline lock (the one
 * processes sharing the device take, roce_share.c); another queue's is its
 * own, which only this process's threads take.
 */
static inline bool
roce_q_trylock(struct roce_q *q)
{
	if (q->id == 0)
		return roce_inline_trylock(q->dev);
	if (!roce_spin_trylock(q->lock))
		return false;
	ROCE_TSAN_ACQUIRE(q->lock);
	return true;
}

static inline void
roce_q_lock(struct roce_q *q)
{
	if (q->id == 0) {
		roce_inline_lock(q->dev);
		return;
	}
	roce_spin_lock(q->lock);
	ROCE_TSAN_ACQUIRE(q->lock);
}

static inline void
roce_q_unlock(struct roce_q *q)
{
	if (q->id == 0) {
		roce_inline_unlock(q->dev);
		return;
	}
	ROCE_TSAN_RELEASE(q->lock);
	roce_spin_unlock(q->lock);
}

/*
 * The queue of @dev that the calling thread owns: its lcore's, by the
 * lcore's index among the process's lcores, modulo the queues; NULL for a
 * thread that is no lcore while there are several queues.
 */
static inline struct roce_q *
roce_q_self(struct roce_dev *dev)
{
	unsigned int lc;
	int idx;

	if (likely(dev->nb_q == 1))
		return dev->q[0];
	lc = rte_lcore_id();
	idx = lc == LCORE_ID_ANY ? -1 : rte_lcore_index(lc);
	return idx < 0 ? NULL : dev->q[idx % dev->nb_q];
}

/* Every queue's inline lock, in order: no inline iteration of @dev runs meanwhile. */
static inline void
roce_dev_lock_all(struct roce_dev *dev)
{
	for (uint16_t k = 0; k < dev->nb_q; k++)
		roce_q_lock(dev->q[k]);
}

static inline void
roce_dev_unlock_all(struct roce_dev *dev)
{
	for (uint16_t k = dev->nb_q; k-- > 0;)
		roce_q_unlock(dev->q[k]);
}

/* rte_pktmbuf_free, the release marked after the free's own accesses. */
static inline void
roce_mbuf_free(struct rte_mbuf *m)
{
#ifdef __SANITIZE_THREAD__
	struct rte_mbuf *seg[RTE_MBUF_MAX_NB_SEGS > 64 ? 64 : RTE_MBUF_MAX_NB_SEGS];
	unsigned int n = 0;

	for (struct rte_mbuf *s = m; s != NULL && n < RTE_DIM(seg); s = s->next)
		seg[n++] = s;
	rte_pktmbuf_free(m);
	while (n > 0)
		__tsan_release(seg[--n]);
#else
	rte_pktmbuf_free(m);
#endif
}

/* A received RoCEv2 packet, parsed and validated by roce_recv.c. */
struct roce_pkt {
	struct rte_mbuf *m;
	const struct rte_ipv4_hdr *ip;
	struct roce_bth *bth;	/* extension headers: bth_reth() and others */
	uint8_t *payload;
	uint32_t paylen;	/* payload bytes, without pad and ICRC */
	uint32_t opf;		/* roce_opcode_tbl flags */
	uint32_t psn;
	uint8_t opcode;
	/*
	 * Not NULL: the frame's ICRC is still to be checked, over the frame
	 * at this IPv4 header in net_shm's slot (an RDMA WRITE read in place,
	 * rx_one): as its payload is placed (roce_pkt_place), or before
	 * anything else acts on it (roce_pkt_icrc_ok).
	 */
	const uint8_t *icrc_at;
};

bool roce_pkt_icrc_check(struct roce_qp *qp, struct roce_pkt *pkt);
int roce_pkt_place_checked(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t *dst, bool last);

/*
 * Whether @pkt's ICRC is right, checked now if it was left for later
 * (pkt->icrc_at); a wrong one is counted, and the caller drops the packet.
 */
static inline bool
roce_pkt_icrc_ok(struct roce_qp *qp, struct roce_pkt *pkt)
{
	return likely(pkt->icrc_at == NULL) || roce_pkt_icrc_check(qp, pkt);
}

/* A frame that reached @qp (recv demux). */
static inline void
roce_qp_cnt_rx(struct roce_qp *qp, const struct rte_mbuf *m)
{
	ROCE_CNT_INC(qp->e.traffic.rx_pkts);
	ROCE_CNT_ADD(qp->e.traffic.rx_bytes, m->pkt_len);
}

/*
 * The packet roce_ip_xmit is about to be handed is @qp's: once it is queued
 * for the port (its neighbour known, room in the staging area), it counts
 * in the QP's tx_pkts and tx_bytes too, as it does in the device's.
 */
static inline void
roce_qp_cnt_tx(struct roce_qp *qp)
{
	qp->q->tx_qp = qp;
}

/* A NAK (AETH syndrome @syn, 0x60..0x63) @qp sends, on the device and the QP. */
static inline void
roce_cnt_nak_sent(struct roce_dev *dev, struct roce_qp *qp, uint8_t syn)
{
	ROCE_CNT_INC(qp->q->stats.naks_sent);
	ROCE_CNT_INC(qp->q->stats.naks_sent_kind[syn & (ROCE_NAK_KINDS - 1)]);
	ROCE_CNT_INC(qp->stats.naks_sent_kind[syn & (ROCE_NAK_KINDS - 1)]);
	ROCE_DP_LOG(DEBUG, "%s: qp %#x sends NAK %#x", dev->name, qp->fp.qpn, syn);
}

/* A NAK @qp received. */
static inline void
roce_cnt_nak_rcvd(struct roce_dev *dev, struct roce_qp *qp, uint8_t syn)
{
	ROCE_CNT_INC(qp->q->stats.naks_rcvd);
	ROCE_CNT_INC(qp->q->stats.naks_rcvd_kind[syn & (ROCE_NAK_KINDS - 1)]);
	ROCE_CNT_INC(qp->stats.naks_rcvd_kind[syn & (ROCE_NAK_KINDS - 1)]);
	ROCE_DP_LOG(DEBUG, "%s: qp %#x receives NAK %#x", dev->name, qp->fp.qpn, syn);
}

/*
 * Hand an async event to the facade, if a context is open. Lock-free and
 * allocation-free: the engine raises QP, CQ and SRQ events through it.
 */
static inline void
roce_async_raise(struct roce_dev *dev, struct ibv_async_event *ev)
{
	void (*cb)(struct droce_rdev *, struct ibv_async_event *) =
		__atomic_load_n(&dev->rdev.async_cb, __ATOMIC_ACQUIRE);

	if (cb != NULL)
		cb(&dev->rdev, ev);
}

/* roce_share.c: a device shared by forked processes */
/* the connection manager's IDs carry their owner in these top bits */
#define ROCE_SHARE_ID_SHIFT	(32 - DROCE_RDEV_ID_OWNER_BITS)
_Static_assert(ROCE_SHARE_OWNERS <= 1U << (32 - ROCE_SHARE_ID_SHIFT), "an owner fits an ID's top bits");
int roce_share_init(struct roce_dev *dev);
void roce_share_fini(struct roce_dev *dev);
uint32_t roce_share_owner(void);
bool roce_share_is_child(void);
bool roce_share_usable(const struct roce_dev *dev);
void roce_share_child_start(void);
bool roce_share_fwd(struct roce_dev *dev, uint32_t k, struct rte_mbuf *m);
void roce_share_poll(struct roce_dev *dev);
uint32_t roce_share_gsi_owner(struct roce_dev *dev, const uint8_t *mad, uint32_t len);
int roce_share_listen(struct roce_dev *dev, uint64_t sid, bool on);
bool roce_share_lock_check(struct roce_dev *dev);
void roce_qp_reap(struct roce_dev *dev, uint32_t owner);

/*
 * A QP's token on the device's doorbell ring and active list: its table
 * index and its serial, which no other QP of the device ever had, so that a
 * token outliving its QP never names the QP that took the slot after it.
 */
#define ROCE_QP_TOKEN_IDX_BITS	16
_Static_assert(DROCE_MAX_QP <= 1U << ROCE_QP_TOKEN_IDX_BITS, "a QP index fits its token");

static inline uint64_t
roce_qp_token(const struct roce_qp *qp)
{
	return qp->serial << ROCE_QP_TOKEN_IDX_BITS | qp->idx;
}

/* The live QP a token names, or NULL: valid for this engine iteration. */
static inline struct roce_qp *
roce_qp_by_token(struct roce_dev *dev, uint64_t t)
{
	struct roce_qp *qp = __atomic_load_n(
		&dev->qp_tbl[t & ((1U << ROCE_QP_TOKEN_IDX_BITS) - 1)], __ATOMIC_ACQUIRE);

	return qp != NULL && qp->serial == t >> ROCE_QP_TOKEN_IDX_BITS ? qp : NULL;
}

/*
 * @qp takes its receive WQEs from SRQs: its own (a QP on an SRQ) or the one
 * each message names (XRC_RECV). It has no RQ to flush, and reports
 * IBV_EVENT_QP_LAST_WQE_REACHED in ERR instead (IBA 11.6.3).
 */
static inline bool
roce_qp_srq_fed(const struct roce_qp *qp)
{
	return qp->srq != NULL || qp->fp.type == IBV_QPT_XRC_RECV;
}

/*
 * The engine gives @qp work (a packet came for it, or it queued a WQE of its
 * own): the QP joins the list the iteration visits. Engine context only;
 * from elsewhere ring its doorbell (droce_rdev_qp_doorbell).
 */
static inline void
roce_qp_activate(struct roce_qp *qp)
{
	struct roce_q *q = qp->q;

	if (likely(qp->on_active))
		return;
	qp->on_active = true;
	/* posts need not ring while it is on the list */
	__atomic_store_n(&qp->fp.db_armed, 1, __ATOMIC_RELAXED);
	q->active[q->nb_active++] = roce_qp_token(qp);
}

/*
 * Into the cache ahead of a visit: the lines of @qp that every packet and
 * every visit reads (the queues' counters, type and state, the CQs, the
 * destination and its headers, the engine's first four lines). With
 * thousands of QPs each visit is otherwise a string of cache misses, one
 * after another.
 */
static inline void
roce_qp_prefetch(const struct roce_qp *qp)
{
	rte_prefetch0(&qp->fp.sq);
	rte_prefetch0(&qp->fp.sq.taken);
	rte_prefetch0(&qp->fp.rq);
	rte_prefetch0(&qp->fp.rq.taken);
	rte_prefetch0(&qp->fp.qpn);
	rte_prefetch0(&qp->dev);
	rte_prefetch0(&qp->av);
	rte_prefetch0(&qp->txh);
	rte_prefetch0(&qp->e);
	rte_prefetch0((const uint8_t *)&qp->e + RTE_CACHE_LINE_SIZE);
	rte_prefetch0((const uint8_t *)&qp->e + 2 * RTE_CACHE_LINE_SIZE);
	rte_prefetch0((const uint8_t *)&qp->e + 3 * RTE_CACHE_LINE_SIZE);
}

/* The QP a QPN names, or NULL: QP1 (GSI), this process's, wherever it sits in the table. */
static inline struct roce_qp *
roce_qp_by_qpn(struct roce_dev *dev, uint32_t qpn)
{
	uint32_t idx = qpn == DROCE_GSI_QPN ?
		       __atomic_load_n(&dev->gsi_idx[roce_share_owner()], __ATOMIC_ACQUIRE) - 1 :
		       qpn - DROCE_QPN_BASE;
	struct roce_qp *qp = idx < DROCE_MAX_QP ?
		__atomic_load_n(&dev->qp_tbl[idx], __ATOMIC_ACQUIRE) : NULL;

	return qp != NULL && qp->fp.qpn == qpn ? qp : NULL;
}

/* The XRC SRQ an XRCETH names, or NULL: O(1), valid for this engine iteration. */
static inline struct roce_srq *
roce_srq_by_num(struct roce_dev *dev, uint32_t srqn)
{
	uint32_t idx = srqn & ((1U << ROCE_SRQN_IDX_BITS) - 1);
	struct roce_srq *srq = idx < DROCE_MAX_SRQ ?
		__atomic_load_n(&dev->srq_tbl[idx], __ATOMIC_ACQUIRE) : NULL;

	return srq != NULL && srq->fp.srqn == srqn ? srq : NULL;
}

/* An IPv4 multicast address: 224.0.0.0/4 (RFC 5771). */
static inline bool
roce_ip_is_mcast(rte_be32_t ip)
{
	return (rte_be_to_cpu_32(ip) >> 28) == 0xe;
}

/* RFC 1112 6.4: a group's frames go to 01:00:5e and the group's low 23 bits. */
static inline void
roce_mcast_mac(rte_be32_t ip, struct rte_ether_addr *mac)
{
	uint32_t h = rte_be_to_cpu_32(ip);

	mac->addr_bytes[0] = 0x01;
	mac->addr_bytes[1] = 0x00;
	mac->addr_bytes[2] = 0x5e;
	mac->addr_bytes[3] = (h >> 16) & 0x7f;
	mac->addr_bytes[4] = (h >> 8) & 0xff;
	mac->addr_bytes[5] = h & 0xff;
}

/*
 * The engine's view of group @ip on @dev, or NULL: valid until the end of
 * the current iteration of roce_q_poll (struct roce_mcg).
 */
static inline const struct roce_mcg *
roce_mcg_find(struct roce_dev *dev, rte_be32_t ip)
{
	uint32_t hi = __atomic_load_n(&dev->mcg_hi, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < hi; i++) {
		const struct roce_mcg *g = __atomic_load_n(&dev->mcg_tbl[i], __ATOMIC_ACQUIRE);

		if (g != NULL && g->ip == ip)
			return g;
	}
	return NULL;
}

/* roce_dev.c */
/* The vdev's devargs, parsed. */
struct roce_dev_args {
	const char *dev;
	char ethdev[RTE_DEV_NAME_MAX_LEN];
	rte_be32_t ip;
	struct rte_ether_addr mac;
	bool has_mac;
	uint32_t mtu;
	int lcore;		/* -2 auto, -1 inline */
	bool progress_own;	/* lcore=thread */
	uint32_t link_wait_ms;	/* 0: do not wait for link up at probe */
	char pcapng[PATH_MAX];	/* capture to this file; "" none */
	bool unowned;		/* own=0: the port is not made the device's own */
	bool ethport;		/* register the device's own ethdev port (default) */
	uint16_t nb_q;		/* queues=: rx/tx queue pairs (struct roce_q) */
	uint32_t rto_min_us;	/* rto_min_us=: early resends' shortest delay, 0 none */
	enum roce_steer steer;	/* steering= (roce_steer.c) */
	bool direct_off;	/* direct=0: no frame built or read in net_shm's slots */
	bool zcopy_set;		/* zcopy= a number: */
	uint32_t zcopy;		/* the least message sent without a copy, 0 never (else auto) */
	uint16_t nb_lcores;	/* lcore=a:b:...: how many */
	int16_t q_lcore[DROCE_MAX_QUEUES];
	unsigned int nb_neigh;
	struct {
		rte_be32_t ip;
		struct rte_ether_addr mac;
	} neigh[DROCE_NEIGH_MAX];
};
int roce_dev_args_parse(struct roce_dev_args *a, const char *params);
unsigned int roce_dev_count(void);
struct roce_dev *roce_dev_get(unsigned int idx);
struct roce_dev *roce_dev_by_name(const char *name);
int roce_dev_obj_take(struct roce_dev *dev, uint32_t *count, uint32_t max);
void roce_dev_obj_drop(struct roce_dev *dev, uint32_t *count);
int roce_dev_open(struct roce_dev *dev);
void roce_dev_close(struct roce_dev *dev);
int roce_dev_progress_get(struct roce_dev *dev);
void roce_dev_progress_put(struct roce_dev *dev);
int roce_dev_link_up(struct roce_dev *dev);

/* roce_poll.c */
void roce_q_poll(struct roce_q *q);
int roce_engine_lcore(const struct roce_dev *dev);
int roce_engine_attach(struct roce_dev *dev);
/* in a forked child (roce_share.c): the parent's engine lcores are not there */
void roce_engine_forked(void);
int roce_engine_join(struct roce_dev *dev);
void roce_engine_detach(struct roce_dev *dev);
void roce_dev_quiesce(struct roce_dev *dev);
void roce_dev_hold(struct roce_dev *dev, bool on);

/*
 * The engine clock now, for RC deadlines: the time since the iteration
 * began counts up to dev->clock_gap_max, as the gap before it did.
 */
static inline uint64_t
roce_clock(const struct roce_q *q)
{
	return q->clock + RTE_MIN(rte_get_timer_cycles() - q->clock_tsc, q->dev->clock_gap_max);
}

/* roce_inline.c */
void roce_progress(struct droce_rdev *hint);
void roce_progress_qp(struct droce_rdev_qp *fp);
void roce_dev_send_qp(struct roce_qp *qp);
int roce_inline_attach(struct roce_dev *dev);
/* in a forked child: every opened device progresses inline, a new waker moves them */
void roce_inline_forked(void);
int roce_inline_join(struct roce_dev *dev);
void roce_inline_quit(void);
void roce_inline_detach(struct roce_dev *dev);
void roce_wake_kick(struct roce_dev *dev);
void roce_wait_begin(struct roce_dev *dev);
void roce_wait_end(struct roce_dev *dev);

/* roce_tx.c */
struct rte_mbuf *roce_pkt_alloc(struct roce_q *q);
void roce_tx_flush(struct roce_q *q);
bool roce_tx_room(struct roce_q *q, uint16_t n);
void roce_xmit(struct roce_q *q, struct rte_mbuf *m);
int roce_ip_xmit(struct roce_q *q, struct rte_mbuf *m, rte_be32_t dip,
		 uint16_t sport, uint8_t tos, uint8_t ttl);
/*
 * A packet being built (roce_txf_begin): straight in the port's next slot
 * (net_shm), or in an mbuf.
 */
struct roce_txf {
	uint8_t *frame;			/* where its Ethernet header goes (the slot, or aside), or NULL */
	uint8_t *slot;			/* with @frame: the slot it goes to */
	struct rte_mbuf *m;		/* else its mbuf */
	struct rte_ether_addr dmac;	/* with @frame: the peer's MAC, unless @txh */
	const struct roce_txh *txh;	/* its QP's headers, or NULL (written for it) */
};
struct roce_bth *roce_txf_begin(struct roce_q *q, struct roce_txf *t, struct roce_qp *qp,
				rte_be32_t dip, uint32_t l4, uint32_t append);
int roce_txf_send(struct roce_q *q, struct roce_txf *t, rte_be32_t dip, uint16_t sport,
		  uint8_t tos, uint8_t ttl, bool mc_noloop, uint32_t l4, bool summed);

/*
 * What the QPs' headers (struct roce_txh) were built from changed: a
 * neighbour, or a QP's destination (a modify). Released after the change:
 * headers built from what was before it carry the generation before.
 */
static inline void
roce_txh_stale(struct roce_dev *dev)
{
	__atomic_fetch_add(&dev->txh_gen, 2, __ATOMIC_RELEASE);
}

/* Give up the packet roce_txf_begin() made room for. */
static inline void
roce_txf_abort(struct roce_txf *t)
{
	if (t->m != NULL)
		roce_mbuf_free(t->m);
}
int roce_ip_xmit_mc(struct roce_q *q, struct rte_mbuf *m, rte_be32_t dip,
		    uint16_t sport, uint8_t tos, uint8_t ttl, bool mc_noloop, bool summed);
/*
 * A request payload of at least this many bytes is summed for the ICRC as it
 * is copied into its frame (roce_icrc_copy()); a smaller one is copied, then
 * the frame summed whole (the small-frame path keeps its headers in registers).
 */
#define ROCE_SUM_COPY_MIN	512
void roce_tx_sum_copy_big(struct roce_q *q, uint32_t l4, const struct roce_bth *bth,
			  uint32_t hlen, const struct ibv_sge *sge, uint32_t off, uint32_t pay,
			  rte_be32_t dip, uint16_t sport);
int roce_tx_zc(struct roce_q *q, struct rte_mbuf *m, const struct roce_bth *bth, uint32_t hlen,
	       const struct ibv_sge *sge, uint32_t off, uint32_t pay, rte_be32_t dip,
	       uint16_t sport);
void roce_tx_zc_init(struct roce_q *q);

/*
 * Before a send WQE completes: no staged frame of this queue may still point
 * into memory that the completion gives back to the application (a flush
 * leaves none; zc_staged implies frames are staged).
 */
static inline void
roce_tx_settle(struct roce_q *q)
{
	if (unlikely(q->zc_staged))
		roce_tx_flush(q);
}

/*
 * The IPv4 and UDP headers of a RoCEv2 datagram of @l4 bytes from the BTH on,
 * but the IPv4 checksum: what every frame droce sends carries.
 */
static inline void
roce_ipv4_udp_fill(struct rte_ipv4_hdr *ip, rte_be32_t sip, rte_be32_t dip, uint16_t sport,
		   uint8_t tos, uint8_t ttl, uint32_t l4)
{
	struct rte_udp_hdr *udp = ipv4_udp(ip);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16(l4 + ROCE_IPV4_LEN + ROCE_UDP_LEN);
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = ttl ? ttl : 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = sip;
	ip->dst_addr = dip;
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4 + ROCE_UDP_LEN);
	udp->dgram_cksum = 0;
}

/*
 * The IPv4 header checksum of what roce_ipv4_udp_fill() writes for the same
 * arguments, from the values rather than from the header just stored: a wide
 * load of those narrow stores waits for them (a store-forwarding stall, a
 * quarter of roce_ip_xmit_mc's samples), and DPDK's rte_ipv4_cksum adds
 * 16-bit words in a loop. The header's 16-bit words as they lie in memory
 * (each built as its two bytes in network order, read as the CPU loads
 * them: a one's complement sum is the same in either byte order, RFC 1071)
 * are summed; roce_ipv4_sum20() is the check.
 */
/* The sum of those words but the total length's (struct roce_txh's sum). */
static inline uint32_t
roce_ipv4_udp_sum(rte_be32_t sip, rte_be32_t dip, uint8_t tos, uint8_t ttl)
{
	return rte_cpu_to_be_16(RTE_IPV4_VHL_DEF << 8 | tos) + rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) +
	       rte_cpu_to_be_16((ttl ? ttl : 64) << 8 | IPPROTO_UDP) +
	       (sip & 0xffff) + (sip >> 16) + (dip & 0xffff) + (dip >> 16);
}

/* The checksum of a header whose other words sum to @sum, for @l4 bytes from the BTH on. */
static inline uint16_t
roce_ipv4_cksum_len(uint32_t sum, uint32_t l4)
{
	uint32_t s = sum + rte_cpu_to_be_16(l4 + ROCE_IPV4_LEN + ROCE_UDP_LEN);

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static inline uint16_t
roce_ipv4_udp_cksum(rte_be32_t sip, rte_be32_t dip, uint8_t tos, uint8_t ttl, uint32_t l4)
{
	return roce_ipv4_cksum_len(roce_ipv4_udp_sum(sip, dip, tos, ttl), l4);
}

/*
 * Staging slots that data (requests, READ responses) leaves free, so that
 * ACKs and NAKs still go out while a stream fills the port: a peer whose
 * ACKs wait behind our data would time out and resend.
 */
#define ROCE_TX_CTRL_RESERVE	(DROCE_BURST / 2)
#define roce_tx_room_data(q)	roce_tx_room(q, 1 + ROCE_TX_CTRL_RESERVE)

/* roce_steer.c */
const uint8_t *roce_steer_key(void);
uint32_t roce_steer_hash(rte_be32_t sip, rte_be32_t dip, uint16_t sport, uint16_t dport);
uint16_t roce_steer_sport(uint16_t base, rte_be32_t sip, rte_be32_t dip, uint32_t k);
const char *roce_steer_name(enum roce_steer s);
int roce_steer_parse(const char *val, enum roce_steer *s);
int roce_steer_conf(struct roce_dev *dev, const struct rte_eth_dev_info *info,
		    struct rte_eth_conf *conf);
int roce_steer_start(struct roce_dev *dev);
void roce_steer_stop(struct roce_dev *dev);

/* The queue that owns the QP numbered @qpn on @dev (roce_qp_create numbers them so). */
static inline uint16_t
roce_qpn_queue(const struct roce_dev *dev, uint32_t qpn)
{
	return (qpn % DROCE_MAX_QUEUES) % dev->nb_q;
}

/*
 * The steering bits of a frame to QP @dqpn at @dip, as the receiver's
 * roce_qpn_queue reads them: 0 (queue 0) for QP1 and multicast, which are
 * queue 0's whatever their number.
 */
static inline uint32_t
roce_steer_k(uint32_t dqpn, rte_be32_t dip)
{
	return dqpn == DROCE_GSI_QPN || roce_ip_is_mcast(dip) ? 0 : dqpn % DROCE_MAX_QUEUES;
}

/* A QP's source port before steering: spread by QPN, in RoCEv2's range (0xc000 up) */
static inline uint16_t
roce_qp_sport_base(uint32_t qpn)
{
	return (uint16_t)(0xc000 | ((qpn * 0x9e37u) & 0x3fff));
}

/*
 * A UD QP's source port to @dip, QP @dqpn: the last one computed while the
 * destination stays (a UD QP mostly sends to one peer's QP1 or UD QP), one
 * software hash when it changes.
 */
static inline uint16_t
roce_qp_ud_sport(struct roce_qp *qp, rte_be32_t dip, uint32_t dqpn)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t k = roce_steer_k(dqpn, dip);

	if (unlikely(e->ud_dip != dip || e->ud_k != k + 1)) {
		e->ud_sport = roce_steer_sport(qp->sport, qp->dev->ip, dip, k);
		e->ud_dip = dip;
		e->ud_k = (uint16_t)(k + 1);
	}
	return e->ud_sport;
}

/* roce_arp.c */
/* What an ARP frame is to droce (roce_arp_input) */
enum roce_arp_verdict {
	ROCE_ARP_MINE,		/* about droce's IP: consumed (freed) */
	ROCE_ARP_OTHER,		/* another IP's (droce learnt what it could): not freed */
	ROCE_ARP_BAD,		/* not Ethernet/IPv4 ARP droce can use: not freed */
};
enum roce_arp_verdict roce_arp_input(struct roce_q *q, struct rte_mbuf *m);
int roce_neigh_resolve(struct roce_q *q, rte_be32_t ip, struct rte_ether_addr *mac);
int roce_neigh_query(struct roce_dev *dev, rte_be32_t ip, struct rte_ether_addr *mac);
int roce_neigh_add(struct roce_dev *dev, rte_be32_t ip, const struct rte_ether_addr *mac, bool is_static);
void roce_neigh_confirm(struct roce_q *q, rte_be32_t ip);
bool roce_neigh_load(const struct roce_neigh *n, struct roce_neigh *out);
void roce_neigh_learn(struct roce_dev *dev, rte_be32_t ip, const struct rte_ether_addr *mac);
void roce_arp_announce(struct roce_q *q);

/* roce_recv.c */
/* where roce_rx's frames come from */
enum roce_rx_src {
	ROCE_RX_PORT,		/* the device's port */
	ROCE_RX_LOOP,		/* its loopback ring: frames it sent itself */
	ROCE_RX_SHARE,		/* another process sharing the device (roce_share.c) */
	ROCE_RX_QUEUE,		/* another queue of the device: its QP is this queue's */
	ROCE_RX_SLOT,		/* net_shm's slot, read through the queue's buffer (roce_rx_shm) */
};
void roce_rx(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, enum roce_rx_src src);
uint16_t roce_rx_shm(struct roce_q *q, bool *burst);
void roce_rx_shm_init(struct roce_q *q, struct shm_queue *rxq);
void roce_rx_plain_init(struct roce_dev *dev);

/* roce_req.c */
/*
 * @stale: a post's short iteration, which reads no timer (a read cost a
 * 64-byte SEND about 4% of its cycles) and takes q->clock as the last
 * whole iteration left it: no timer fires from it and it arms none; the
 * deadlines of what it sends are set by the next whole iteration (arm_due).
 * Otherwise the clock is read (roce_clock).
 */
void roce_req_run(struct roce_dev *dev, struct roce_qp *qp, bool stale);
void roce_req_rewind(struct roce_qp *qp, uint32_t psn);

/* roce_resp.c */
void roce_resp_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt);
void roce_resp_send_ack(struct roce_dev *dev, struct roce_qp *qp);
void roce_resp_run(struct roce_dev *dev, struct roce_qp *qp);

/* roce_comp.c */
void roce_comp_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt);
void roce_req_rtt(struct roce_dev *dev, struct roce_qp *qp);
void roce_req_rto_init(const struct roce_dev *dev, struct roce_qp *qp);
void roce_comp_send_wqe(struct roce_qp *qp, struct droce_send_wqe *wqe, enum ibv_wc_status st);

/* roce_tm.c */
void roce_tm_ops_run(struct roce_srq *srq);
int roce_tm_rcv_first(struct roce_dev *dev, struct roce_qp *qp, const struct roce_pkt *pkt);
void roce_tm_recv_done(struct roce_qp *qp, struct droce_recv_wqe *w, struct ibv_wc *wc,
		       bool solicited);
void roce_tm_drop(struct roce_qp *qp);
void roce_tm_uncount(struct roce_tm *tm);
void roce_tm_wqe_done(struct roce_qp *qp, struct droce_send_wqe *w, enum ibv_wc_status st);
void roce_send_wqe_release(struct roce_qp *qp, struct droce_send_wqe *w);
int roce_srq_tm_enable(struct droce_rdev_srq *fp, struct droce_rdev_cq *cqfp, uint32_t max_tags,
		       uint32_t max_ops);
void roce_tm_fini(struct roce_srq *srq);
void roce_tm_release(struct droce_rdev *rdev, uint32_t release);

/* roce_cq.c */
void roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, const struct droce_cqe_tm *tm,
		  bool solicited);
int roce_cq_create(struct droce_rdev *rdev, uint32_t cqe, bool events, void *user,
		   const struct droce_rdev_alloc *alloc,
		   struct droce_rdev_cq **out);
int roce_cq_destroy(struct droce_rdev_cq *fp);
void roce_cq_arm(struct droce_rdev_cq *fp, uint32_t how);
int roce_cq_resize(struct droce_rdev_cq *fp, uint32_t cqe);
void roce_cq_resize_run(struct roce_dev *dev);
bool roce_cq_job_late(const struct roce_dev *dev);
bool roce_cq_bind(struct roce_cq *cq, const struct roce_q *q);
void roce_cq_purge_qp(struct roce_cq *cq, uint32_t qpn, bool recv);

/* roce_capture.c */
struct roce_capture;
int roce_capture_start(struct roce_dev *dev, const char *path);
void roce_capture_stop(struct roce_dev *dev);
int roce_capture_set(struct roce_dev *dev, const char *path);
void roce_capture_burst(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, bool out);
bool roce_capture_info(const struct roce_dev *dev, const char **path, uint64_t *written,
		       uint64_t *dropped, int *write_err);

/* roce_odp.c */
extern uint32_t roce_odp_mrs;
int roce_odp_mr_add(void);
void roce_odp_mr_del(void);
int roce_mr_advise(struct droce_rdev_pd *pd, const struct ibv_sge *sge, uint32_t n, bool write,
		   bool fault, bool sync);
int roce_odp_copy(void *dst, const void *src, size_t n);
int roce_odp_atomic(uint64_t *p, bool cmp_swap, uint64_t cmp_add, uint64_t swap, uint64_t *orig);
int roce_odp_store64(uint64_t *p, uint64_t v);

/* roce_tx.c, after roce_odp_mrs */
/*
 * A payload of ROCE_SUM_COPY_MIN bytes or more (and no ODP MR) is copied and
 * summed in one pass (roce_tx_sum_copy_big: true); false, with nothing
 * done: the caller copies, and the frame is summed whole when it leaves.
 */
static inline bool
roce_tx_sum_copy(struct roce_q *q, uint32_t l4, const struct roce_bth *bth, uint32_t hlen,
		 const struct ibv_sge *sge, uint32_t off, uint32_t pay, rte_be32_t dip,
		 uint16_t sport)
{
	if (pay < ROCE_SUM_COPY_MIN || __atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) != 0)
		return false;
	roce_tx_sum_copy_big(q, l4, bth, hlen, sge, off, pay, dip, sport);
	return true;
}

/*
 * Zero-copy transmit: whether the frames of an RC request (SEND, WRITE) of
 * @len bytes to @dip go to the port without a copy of their payload
 * (roce_tx_zc). Only on ports that copy or drop a frame before their tx burst
 * returns (zcopy=, roce_port_zc_min), only to another host (frames to our own
 * IP wait in the loopback ring), not while an ODP MR exists (its pages may
 * go; the copy checks them), and not on a device shared by forked processes
 * (a frame staged by one that dies would point into memory the survivor
 * that sends it does not have). READ responses are always copied: the
 * responder's memory may change under them (roce_resp_run).
 */
static inline bool
roce_tx_zc_ok(const struct roce_q *q, uint32_t len, rte_be32_t dip)
{
	const struct roce_dev *dev = q->dev;

	return dev->zc_min != 0 && len >= dev->zc_min && dip != dev->ip && !dev->share_on &&
	       __atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) == 0;
}

/*
 * A copy to or from application memory: guarded while an ODP MR exists in
 * the process (roce_odp.c), so that an unmapped page fails it. 0 or -EFAULT.
 */
static inline int
roce_mem_copy(void *dst, const void *src, size_t n)
{
	if (likely(__atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) == 0)) {
		droce_memcpy(dst, src, n);
		return 0;
	}
	return roce_odp_copy(dst, src, n);
}

int roce_copy_from_sge_sum(uint8_t *dst, const struct ibv_sge *sge, uint32_t off, uint32_t len,
			   uint32_t *crc);

/*
 * Gather @len bytes @off bytes into a checked SGE list (roce_copy_from_sge_sum
 * without a sum); the usual packet, within the first SGE, inline.
 */
static inline int
roce_copy_from_sge(uint8_t *dst, const struct ibv_sge *sge, uint32_t off, uint32_t len)
{
	if (likely(off < sge->length && len <= sge->length - off))
		return roce_mem_copy(dst, (const uint8_t *)(uintptr_t)sge->addr + off, len);
	return roce_copy_from_sge_sum(dst, sge, off, len, NULL);
}

/*
 * roce_mem_copy, with the last byte stored after all the others: the last
 * packet of an RDMA WRITE. An application that polls the last byte of a
 * WRITE to know it arrived (perftest's ib_write_lat, droce-perf's write_lat)
 * then finds every byte before it there too, as a NIC's in-order DMA has it;
 * a memcpy may store its tail first, and with an engine lcore the poller
 * runs while it copies.
 */
static inline int
roce_mem_copy_last_byte_last(void *dst, const void *src, size_t n)
{
	if (n > 1 && roce_mem_copy(dst, src, n - 1) != 0)
		return -EFAULT;
	/* release: the bytes before are visible before the last one */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return n != 0 ? roce_mem_copy((uint8_t *)dst + n - 1, (const uint8_t *)src + n - 1, 1) : 0;
}

/*
 * An RDMA WRITE's payload (@pkt->paylen bytes, @last: of the message's last
 * packet, whose last byte is stored last) placed at @dst: 0, -EFAULT when
 * an ODP page is not there, or -EBADMSG: its ICRC, checked as it was copied
 * (roce_pkt_place_checked), was wrong; the packet is counted and dropped.
 */
static inline int
roce_pkt_place(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t *dst, bool last)
{
	if (unlikely(pkt->icrc_at != NULL))
		return roce_pkt_place_checked(qp, pkt, dst, last);
	return last ? roce_mem_copy_last_byte_last(dst, pkt->payload, pkt->paylen) :
		      roce_mem_copy(dst, pkt->payload, pkt->paylen);
}

/*
 * The responder's 8-byte atomic at @p (8-aligned): compare-and-swap
 * (@cmp_add compared, @swap stored) or fetch-and-add of @cmp_add; the value
 * before. Atomic with respect to every other atomic of the process.
 */
static inline uint64_t
roce_atomic_apply(uint64_t *p, bool cmp_swap, uint64_t cmp_add, uint64_t swap)
{
	uint64_t o = cmp_add;

	if (!cmp_swap)
		return __atomic_fetch_add(p, cmp_add, __ATOMIC_SEQ_CST);
	__atomic_compare_exchange_n(p, &o, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return o;
}

/* roce_atomic_apply, guarded as roce_mem_copy: 0 with *@orig set, or -EFAULT. */
static inline int
roce_mem_atomic(uint64_t *p, bool cmp_swap, uint64_t cmp_add, uint64_t swap, uint64_t *orig)
{
	if (likely(__atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) == 0)) {
		*orig = roce_atomic_apply(p, cmp_swap, cmp_add, swap);
		return 0;
	}
	return roce_odp_atomic(p, cmp_swap, cmp_add, swap, orig);
}

/* ATOMIC WRITE: the 8 bytes at @src stored at once at @dst (8-aligned); guarded as above. */
static inline int
roce_mem_store64(uint64_t *dst, const uint8_t *src)
{
	uint64_t v;

	memcpy(&v, src, sizeof(v));
	if (likely(__atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) == 0)) {
		__atomic_store_n(dst, v, __ATOMIC_SEQ_CST);
		return 0;
	}
	return roce_odp_store64(dst, v);
}

/* roce_port.c */
bool roce_port_check(struct roce_dev *dev);
void roce_port_warm(struct roce_dev *dev);
void roce_port_monitor_start(struct roce_dev *dev);
void roce_port_monitor_stop(struct roce_dev *dev);
bool roce_port_guard_init(struct roce_dev *dev);
int roce_port_zc_min(struct roce_dev *dev, const struct rte_eth_dev_info *info,
		     const struct roce_dev_args *a, uint64_t *tx_offloads, uint32_t *min);
void roce_port_revive_start(struct roce_dev *dev, bool started);
void roce_port_revive_stop(struct roce_dev *dev);
uint16_t roce_port_burst_guarded(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, bool tx);

/* Every burst on the device's port goes through these two, on @q's queue of it. */
static inline uint16_t
roce_port_rx(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n)
{
	if (likely(q->dev->port_guard == NULL))
		return rte_eth_rx_burst(q->dev->port_id, q->id, pkts, n);
	return roce_port_burst_guarded(q, pkts, n, false);
}

static inline uint16_t
roce_port_tx(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n)
{
	if (likely(q->dev->port_guard == NULL))
		return rte_eth_tx_burst(q->dev->port_id, q->id, pkts, n);
	return roce_port_burst_guarded(q, pkts, n, true);
}

/* roce_mr.c */
/* The SGE of a list that holds byte @*off of it (@len bytes from there), @*off made its own. */
static inline const struct ibv_sge *
roce_sge_seek(const struct ibv_sge *sge, uint32_t *off, uint32_t len)
{
	while (*off >= sge->length && len) {
		*off -= sge->length;
		sge++;
	}
	return sge;
}
/* roce_mr.c's lookups and checks, inline: every request and every WQE does them */
static inline struct droce_rdev_mr *
roce_mr_lookup(struct roce_dev *dev, uint32_t key)
{
	uint32_t idx = key >> ROCE_MR_GEN_BITS;
	struct droce_rdev_mr *mr;

	if (unlikely(idx >= DROCE_MAX_MR))
		return NULL;
	mr = __atomic_load_n(&dev->mr_tbl[idx], __ATOMIC_ACQUIRE);
	if (unlikely(mr == NULL || mr->key != key))
		return NULL;
	return mr;
}

/*
 * 0 when [addr, addr+len) lies in the MR named by @key, of @pd, allowing
 * @access (IBV_ACCESS_* bits; 0 = local read). Sets *host to the address.
 */
static inline int
roce_mr_check(struct roce_dev *dev, const struct droce_rdev_pd *pd, uint32_t key,
	      uint64_t addr, uint64_t len, int access, uint8_t **host)
{
	struct droce_rdev_mr *mr = roce_mr_lookup(dev, key);

	if (unlikely(mr == NULL || mr->pd != pd || (mr->access & access) != access))
		return -EACCES;
	if (unlikely(addr < mr->iova || len > mr->length || addr - mr->iova > mr->length - len))
		return -EACCES;
	/* (the implicit ODP MR's host is NULL: integer arithmetic) */
	*host = (uint8_t *)((uintptr_t)mr->host + (addr - mr->iova));
	return 0;
}

/* Checks every SGE; on success rewrites each addr to its host address. */
static inline int
roce_sge_check(struct roce_dev *dev, const struct droce_rdev_pd *pd,
	       const struct ibv_sge *sge, uint32_t n, int access)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *host;

		if (sge[i].length == 0)
			continue;
		if (roce_mr_check(dev, pd, sge[i].lkey, sge[i].addr, sge[i].length, access, &host))
			return -EACCES;
		((struct ibv_sge *)sge)[i].addr = (uintptr_t)host;
	}
	return 0;
}

int roce_copy_to_sges(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		      const uint8_t *src, uint32_t len);

/*
 * Scatter into an SGE list at @off (roce_copy_to_sges: -EMSGSIZE if it
 * does not fit, -EFAULT when an ODP page is not there); a packet within the
 * first SGE, the usual one, inline.
 */
static inline int
roce_copy_to_sge(const struct ibv_sge *sge, uint32_t nsge, uint32_t off, const uint8_t *src,
		 uint32_t len)
{
	if (likely(nsge != 0 && off < sge->length && len <= sge->length - off))
		return roce_mem_copy((uint8_t *)(uintptr_t)sge->addr + off, src, len);
	return roce_copy_to_sges(sge, nsge, off, src, len);
}
int roce_pd_alloc(struct droce_rdev *rdev, struct droce_rdev_pd **out, uint32_t *pdn);
void roce_pd_free(struct droce_rdev_pd *pd);
int roce_mr_reg(struct droce_rdev_pd *pd, void *addr, uint64_t length, uint64_t iova, int access,
		struct droce_rdev_mr **out, uint32_t *key);
int roce_mr_dereg(struct droce_rdev_mr *mr);
int roce_mr_rereg(struct droce_rdev_mr **io, int flags, struct droce_rdev_pd *pd, void *addr,
		  uint64_t length, uint64_t iova, int access);

/* roce_mw.c */
int roce_mw_alloc(struct droce_rdev_pd *pd, enum ibv_mw_type type, struct droce_rdev_mw **out,
		  uint32_t *rkey, uint32_t *handle);
void roce_mw_dealloc(struct droce_rdev_mw *mw);
int roce_mw_check(struct roce_dev *dev, const struct roce_qp *qp, const struct droce_rdev_pd *pd,
		  uint32_t rkey, uint64_t va, uint64_t len, int access, uint8_t **host);
int roce_mw_bind(struct roce_dev *dev, struct roce_qp *qp, const struct droce_send_wqe *wqe);
int roce_mw_invalidate(struct roce_dev *dev, const struct roce_qp *qp,
		       const struct droce_rdev_pd *pd, uint32_t rkey, bool remote);

/*
 * A remote access arriving on @qp through @rkey, an MR's key or a memory
 * window's (struct droce_rdev_mw: below 1 << ROCE_MR_GEN_BITS): 0 with
 * *host set, or -EACCES.
 */
static inline int
roce_rkey_check(struct roce_dev *dev, const struct roce_qp *qp, const struct droce_rdev_pd *pd,
		uint32_t rkey, uint64_t va, uint64_t len, int access, uint8_t **host)
{
	if (likely(rkey >> ROCE_MR_GEN_BITS))
		return roce_mr_check(dev, pd, rkey, va, len, access, host);
	return roce_mw_check(dev, qp, pd, rkey, va, len, access, host);
}

/* roce_srq.c */
struct droce_recv_wqe *roce_srq_get(struct roce_dev *dev, struct roce_srq *srq);
void roce_srq_unget(struct roce_srq *srq, struct droce_recv_wqe *w);
int roce_srq_create(struct droce_rdev_pd *pd, uint32_t max_wr, uint32_t max_sge, void *user,
		    struct droce_rdev_srq **out);
int roce_srq_limit_set(struct droce_rdev_srq *fp, uint32_t limit);
uint32_t roce_srq_limit_get(struct droce_rdev_srq *fp);
int roce_srq_destroy(struct droce_rdev_srq *fp);
int roce_xrcd_alloc(struct droce_rdev *rdev, struct droce_rdev_xrcd **out);
void roce_xrcd_free(struct droce_rdev_xrcd *xrcd);
int roce_srq_xrc_enable(struct droce_rdev_srq *fp, struct droce_rdev_xrcd *xrcd,
			struct droce_rdev_cq *cqfp);

/* roce_qp.c: work queues, QPs and address handles */
void *roce_zmalloc(const char *type, size_t size, unsigned int align, int socket);
void roce_free(void *p);
struct rte_ring *roce_ring_alloc(const char *name, unsigned int esize, unsigned int count,
				 int socket, unsigned int flags);
void roce_ring_release(struct rte_ring *r);
int roce_wq_init(struct droce_wq *wq, const char *name, uint32_t size,
		 uint32_t max_sge, size_t slot_size, int socket,
		 const struct droce_rdev_alloc *a, uint64_t type, bool no_lock, bool srq);
void roce_wq_retire_bad(struct droce_wq *wq, const void *w);

/*
 * A QP's own @wq (no ring: posted == NULL), taken from in three steps: how
 * many of its posted WQEs are there to take, at most @n (roce_wq_avail),
 * each in turn (roce_wq_next_posted), and how many were (roce_wq_took).
 */
static inline uint32_t
roce_wq_avail(const struct droce_wq *wq, uint32_t n)
{
	/* acquire: the WQEs' contents were written before they were counted */
	return RTE_MIN(n, __atomic_load_n(&wq->posts, __ATOMIC_ACQUIRE) - wq->taken);
}

static inline void *
roce_wq_next_posted(struct droce_wq *wq)
{
	void *w = droce_wq_slot(wq, wq->take_idx);

	wq->take_idx = droce_wq_next(wq, wq->take_idx);
	return w;
}

static inline void
roce_wq_took(struct droce_wq *wq, uint32_t k)
{
	/* atomic: read by droce_wq_pending() from other threads */
	__atomic_store_n(&wq->taken, wq->taken + k, __ATOMIC_RELAXED);
}

/*
 * Up to @n WQEs posted to @wq, in posting order, for the driver to work on.
 * One taker at a time: the thread progressing the QP (an SRQ's: any of its
 * QPs' lcores).
 */
static inline unsigned int
roce_wq_pull(struct droce_wq *wq, void **w, unsigned int n)
{
	uint32_t k;

	if (wq->posted != NULL)
		return rte_ring_dequeue_burst(wq->posted, w, n, NULL);
	k = roce_wq_avail(wq, n);
	for (uint32_t i = 0; i < k; i++)
		w[i] = roce_wq_next_posted(wq);
	roce_wq_took(wq, k);
	return k;
}

/*
 * @w, the WQE of a QP's own queue roce_wq_pull() gave last, back at the head
 * of the queue, as if never taken (a message dropped before it used it; an
 * SRQ's goes back with roce_srq_unget).
 */
static inline void
roce_wq_unpull(struct droce_wq *wq, void *w)
{
	wq->take_idx = (wq->take_idx == 0 ? droce_wq_cap(wq) : wq->take_idx) - 1;
	if (unlikely(w != droce_wq_slot(wq, wq->take_idx)))
		roce_wq_retire_bad(wq, w);
	__atomic_store_n(&wq->taken, wq->taken - 1, __ATOMIC_RELAXED);
}

/* Send WQEs posted and not taken yet: the application's, or the engine's own (TM). */
static inline bool
roce_sq_pending(const struct roce_qp *qp)
{
	return droce_wq_pending(&qp->fp.sq) != 0 ||
	       (unlikely(qp->tm_posted != NULL) && !droce_ring_empty(qp->tm_posted));
}

/*
 * The next send WQE posted, the engine's own first; NULL if none. (Reset and
 * flush: the QP's own thread, or the QP quiesced.)
 */
static inline struct droce_send_wqe *
roce_sq_pull_one(struct roce_qp *qp)
{
	void *w;

	if (unlikely(qp->tm_posted != NULL) && rte_ring_dequeue(qp->tm_posted, &w) == 0)
		return w;
	return roce_wq_pull(&qp->fp.sq, &w, 1) == 1 ? w : NULL;
}

/*
 * The driver is done with @w, a WQE of @wq: its slot is the application's
 * to take again. A QP's own queue gives its slots back in posting order,
 * from the one thread that progresses the QP (or with the QP quiesced).
 */
static inline void
roce_wq_retire(struct droce_wq *wq, void *w)
{
	if (wq->free != NULL) {
		rte_ring_enqueue(wq->free, w);	/* an SRQ's QPs, from any lcore */
		return;
	}
	if (unlikely(w != droce_wq_slot(wq, wq->retire_idx)))
		roce_wq_retire_bad(wq, w);
	wq->retire_idx = droce_wq_next(wq, wq->retire_idx);
	/* release: done with the slot before the application may take it */
	__atomic_store_n(&wq->retired, wq->retired + 1, __ATOMIC_RELEASE);
}

void *roce_queue_zalloc(const struct droce_rdev_alloc *a, uint64_t type, const char *name,
			size_t size, int socket, bool *app);
void roce_queue_free(const struct droce_rdev_alloc *a, uint64_t type, void *p, bool app);
struct rte_ring *roce_ring_alloc_from(const struct droce_rdev_alloc *a, uint64_t type,
				      const char *name, unsigned int esize, unsigned int count,
				      int socket, unsigned int flags, bool *app);
void roce_wq_fini(struct droce_wq *wq);
void roce_wq_drain(struct droce_wq *wq);
void roce_qp_reset_engine(struct roce_qp *qp);
bool roce_qp_to_err(struct roce_dev *dev, struct roce_qp *qp);
void roce_qp_error(struct roce_dev *dev, struct roce_qp *qp, enum ibv_event_type ev);
void roce_qp_flush(struct roce_dev *dev, struct roce_qp *qp);
int roce_qp_create(struct droce_rdev_pd *pd, struct droce_rdev_qp_init *init,
		   struct droce_rdev_qp **out);
int roce_qp_modify(struct droce_rdev_qp *fp, const struct ibv_qp_attr *attr, int mask);
void roce_qp_query(struct droce_rdev_qp *fp, struct ibv_qp_attr *attr);
void roce_qp_destroy(struct droce_rdev_qp *fp);
int roce_av_from_ah_attr(const struct ibv_ah_attr *ah, struct droce_av *av);
int roce_ah_create(struct droce_rdev_pd *pd, const struct ibv_ah_attr *attr, struct droce_av *av);
void roce_ah_destroy(struct droce_rdev *rdev);

/* roce_mcast.c */
void roce_mcast_rcv(struct roce_q *q, struct roce_pkt *pkt, bool fwd);
int roce_mcast_attach(struct droce_rdev_qp *fp, const union ibv_gid *gid);
int roce_mcast_detach(struct droce_rdev_qp *fp, const union ibv_gid *gid);
void roce_mcast_qp_gone(struct roce_qp *qp);

/* roce_ethdev.c */
int roce_eth_create(struct roce_dev *dev, struct rte_device *rdev);
void roce_eth_destroy(struct roce_dev *dev);
bool roce_eth_rx(struct roce_dev *dev, struct rte_mbuf *m);
void roce_eth_tx_run(struct roce_dev *dev);
bool roce_eth_is_droce(uint16_t port_id);

/* The engine: is the device's ethdev port started (frames go to and come from it)? */
static inline bool
roce_eth_running(const struct roce_dev *dev)
{
	return __atomic_load_n(&dev->eth.running, __ATOMIC_ACQUIRE) != 0;
}

/* roce_rdev.c */
void roce_rdev_init(struct roce_dev *dev);
void roce_dev_stats_sum(const struct roce_dev *dev, struct roce_stats *sum);
int roce_dev_xstats_get(struct roce_dev *dev, const char **names, uint64_t *values, int n);
int roce_qp_xstats_get(const struct roce_qp *qp, const char **names, uint64_t *values, int n);

#endif /* ROCE_LOC_H */
