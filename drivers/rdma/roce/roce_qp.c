/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP's engine side: work queues (struct droce_wq),
 * engine reset, and the move to ERR with its flush.
 */
#include <rte_debug.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "droce.h"
#include "roce_loc.h"

/*
 * DPDK's allocators hand memory from one thread to another under their own
 * locks (the heap's, the memzones'), which ThreadSanitizer does not see: to
 * it, an object one thread destroys and another creates in the same memory
 * race. In a -Dtsan=true build these mark the hand-off, on one sync object
 * as for one lock; in any other build roce_zmalloc and roce_free are
 * rte_zmalloc_socket and rte_free. Run-time objects (CQs, SRQs, QPs, event
 * queues and all their rings) use them, never rte_ring_create: its
 * rte_ring_init would write the memory before the creator could mark it.
 */
static int mem_sync;

static void
roce_mem_got(void)
{
	ROCE_TSAN_ACQUIRE(&mem_sync);
}

static void
roce_mem_put(void)
{
	ROCE_TSAN_RELEASE(&mem_sync);
}

void *
roce_zmalloc(const char *type, size_t size, unsigned int align, int socket)
{
	void *p = rte_zmalloc_socket(type, size, align, socket);

	if (p != NULL)
		roce_mem_got();
	return p;
}

void
roce_free(void *p)
{
	roce_mem_put();
	rte_free(p);
}

/*
 * Memory for a queue, zeroed: from the application's allocator @a (a parent
 * domain's) when it gives some, *@app then set; else roce_zmalloc. NULL when
 * the allocator failed or there is no memory. roce_queue_free gives it back
 * where it came from.
 */
void *
roce_queue_zalloc(const struct droce_rdev_alloc *a, uint64_t type, const char *name,
		  size_t size, int socket, bool *app)
{
	void *p = NULL;

	*app = false;
	if (a != NULL) {
		if (a->alloc(a->arg, size, RTE_CACHE_LINE_SIZE, type, &p) != 0)
			return NULL;
		if (p != NULL) {
			memset(p, 0, size);
			*app = true;
			return p;
		}
	}
	return roce_zmalloc(name, size, RTE_CACHE_LINE_SIZE, socket);
}

void
roce_queue_free(const struct droce_rdev_alloc *a, uint64_t type, void *p, bool app)
{
	if (p == NULL)
		return;
	if (app)
		a->free(a->arg, p, type);
	else
		roce_free(p);
}

/*
 * A ring in rte_malloc memory instead of a memzone of its own: a QP has
 * four rings, an SRQ two, a CQ one, and DPDK 22.11 allows RTE_MAX_MEMZONE
 * (2560 in Debian's build, fixed at build time) memzones in the whole
 * process, fewer than DROCE_MAX_QP QPs need. rte_ring_lookup() does not find
 * these rings (nothing looks them up). NULL with rte_errno set; free with
 * roce_ring_release().
 */
struct rte_ring *
roce_ring_alloc(const char *name, unsigned int esize, unsigned int count, int socket,
		unsigned int flags)
{
	bool app;

	return roce_ring_alloc_from(NULL, 0, name, esize, count, socket, flags, &app);
}

/* The same, its memory from @a as roce_queue_zalloc has it (*@app). */
struct rte_ring *
roce_ring_alloc_from(const struct droce_rdev_alloc *a, uint64_t type, const char *name,
		     unsigned int esize, unsigned int count, int socket, unsigned int flags,
		     bool *app)
{
	ssize_t sz = rte_ring_get_memsize_elem(esize, (flags & RING_F_EXACT_SZ) ?
					       rte_align32pow2(count + 1) : count);
	struct rte_ring *r;
	int ret;

	*app = false;
	if (sz < 0) {
		rte_errno = (int)-sz;
		return NULL;
	}
	r = roce_queue_zalloc(a, type, name, sz, socket, app);
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ret = rte_ring_init(r, name, count, flags);
	if (ret != 0) {
		roce_queue_free(a, type, r, *app);
		rte_errno = -ret;
		return NULL;
	}
	return r;
}

void
roce_ring_release(struct rte_ring *r)
{
	roce_free(r);
}

/*
 * @a: the WQE slots from this application allocator (resource @type), or
 * NULL. @no_lock: a thread domain's queue, posted to by one thread. @srq: an
 * SRQ's queue, whose slots come back in any order (a ring of free slots);
 * otherwise a QP's own, taken in turn (struct droce_wq).
 */
int
roce_wq_init(struct droce_wq *wq, const char *name, uint32_t size,
	     uint32_t max_sge, size_t slot_size, int socket,
	     const struct droce_rdev_alloc *a, uint64_t type, bool no_lock, bool srq)
{
	char rname[RTE_RING_NAMESIZE];
	bool app;

	memset(wq, 0, sizeof(*wq));
	pthread_mutex_init(&wq->post_lock, NULL);
	wq->size = size;
	wq->max_sge = max_sge;
	/* line-aligned slots: a WQE's first line is one line (struct droce_send_wqe) */
	wq->slot_size = RTE_ALIGN_CEIL(slot_size, RTE_CACHE_LINE_SIZE);
	wq->no_lock = no_lock;
	wq->slots = roce_queue_zalloc(a, type, name, (size_t)wq->slot_size * size, socket, &app);
	if (wq->slots == NULL) {
		pthread_mutex_destroy(&wq->post_lock);
		return -ENOMEM;
	}
	if (app) {
		wq->alloc = a;
		wq->alloc_type = type;
	}
	if (!srq)
		return 0;	/* a QP's own queue: the slots in turn */
	/*
	 * An SRQ's rings: one poster at a time (post_lock) posts and takes
	 * free slots; its QPs, on any lcores, take posted ones and give them
	 * back. Not the relaxed-tail-sync modes: there a consumer's tail lags
	 * while others are still taking, the engine's return of a slot then
	 * finds the ring "full", and the slot is lost.
	 */
	snprintf(rname, sizeof(rname), "%s_p", name);
	wq->posted = roce_ring_alloc(rname, sizeof(void *), size, socket,
				     RING_F_EXACT_SZ | RING_F_SP_ENQ);
	snprintf(rname, sizeof(rname), "%s_f", name);
	wq->free = roce_ring_alloc(rname, sizeof(void *), size, socket,
				   RING_F_EXACT_SZ | RING_F_SC_DEQ);
	if (wq->posted == NULL || wq->free == NULL) {
		int err = rte_errno;

		roce_wq_fini(wq);
		return -err;
	}
	for (uint32_t i = 0; i < size; i++)
		rte_ring_enqueue(wq->free, droce_wq_slot(wq, i));
	return 0;
}

/*
 * A slot given back out of turn: a driver defect. The checked builds (ASan,
 * TSan, fuzzing: DROCE_CHECKED) stop there, so that the test suite and the
 * fuzzers find it; others say so the first times.
 */
void
roce_wq_retire_bad(struct droce_wq *wq, const void *w)
{
	static uint32_t told;

#ifdef DROCE_CHECKED
	rte_panic("work queue %p: slot %p given back out of turn (expected slot %u)\n",
		  (void *)wq, w, wq->retire_idx);
#endif
	if (__atomic_fetch_add(&told, 1, __ATOMIC_RELAXED) < 8)
		ROCE_LOG(ERR, "work queue %p: slot %p given back out of turn (expected slot %u)",
			 (void *)wq, w, wq->retire_idx);
}

void
roce_wq_fini(struct droce_wq *wq)
{
	roce_ring_release(wq->free);
	roce_ring_release(wq->posted);
	roce_queue_free(wq->alloc, wq->alloc_type, wq->slots, wq->alloc != NULL);
	pthread_mutex_destroy(&wq->post_lock);
	memset(wq, 0, sizeof(*wq));
}

/* Every posted WQE back to the application (RESET discards WRs). */
void
roce_wq_drain(struct droce_wq *wq)
{
	void *p;

	if (wq->slots == NULL)
		return;
	while (roce_wq_pull(wq, &p, 1) == 1)
		roce_wq_retire(wq, p);
}

/* Engine state back to zero; called with the engine quiesced and the QP in RESET. */
void
roce_qp_reset_engine(struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	struct droce_send_wqe **win = e->win;
	uint32_t win_mask = e->win_mask;
	void *w;

	for (uint32_t i = e->win_head; i != e->win_tail; i++)
		roce_send_wqe_release(qp, *roce_win_slot(qp, i));
	while ((w = roce_sq_pull_one(qp)) != NULL)
		roce_send_wqe_release(qp, w);
	if (e->tm_tag != NULL && e->rwqe == &e->tm_tag->rw) {
		roce_tm_drop(qp);
	} else if (e->rwqe != NULL && qp->fp.type == IBV_QPT_XRC_RECV) {
		struct roce_srq *xsrq = roce_srq_by_num(qp->dev, e->xsrqn);

		/* an SRQ destroyed meanwhile took its WQEs with it */
		if (xsrq != NULL)
			roce_wq_retire(&xsrq->fp.rq, e->rwqe);
	} else if (e->rwqe != NULL) {
		if (e->tm_kind == ROCE_TM_UNEXPECTED)	/* cut short: software never sees it */
			roce_tm_uncount(qp->srq->tm);
		roce_wq_retire(qp->srq ? &qp->srq->fp.rq : &qp->fp.rq, e->rwqe);
	}
	/*
	 * All but the packet counters, which the engine may still add to meanwhile
	 * (a frame is counted before its QP's state is looked at): never stored here
	 */
	memset(e, 0, offsetof(struct roce_qp_eng, traffic));
	memset(&e->traffic + 1, 0, sizeof(*e) - offsetof(struct roce_qp_eng, traffic) -
	       sizeof(e->traffic));
	e->win = win;
	e->win_mask = win_mask;
	roce_wq_drain(&qp->fp.sq);
	roce_wq_drain(&qp->fp.rq);
}

/* --- QP objects (the interface's qp_* ops) --- */
/*
 * The queue that moves a new QP (struct roce_q). An RC or UC QP takes the
 * calling lcore's own queue (the application's lcores each own one, as
 * SPDK's reactors own their qpairs), or the queues in turn when the caller
 * is no lcore or engine lcores move the queues. Every other QP is queue
 * 0's: UD QPs take multicast, QP1 the CM's datagrams, and XRC and tag
 * matching keep state across QPs there.
 */
static struct roce_q *
qp_queue(struct roce_dev *dev, enum ibv_qp_type type, bool gsi, const struct roce_srq *srq)
{
	struct roce_q *q;

	if (dev->nb_q == 1 || gsi || (type != IBV_QPT_RC && type != IBV_QPT_UC) ||
	    (srq != NULL && srq->tm != NULL))
		return dev->q[0];
	/* with engine lcores the creator's lcore does not matter: in turn */
	q = dev->engine == NULL ? roce_q_self(dev) : NULL;
	if (q == NULL)
		q = dev->q[__atomic_fetch_add(&dev->q_next, 1, __ATOMIC_RELAXED) % dev->nb_q];
	return q;
}

/*
 * A free qp_tbl slot for a QP on @q, under dev->lock; DROCE_MAX_QP if none.
 * With several queues the slot's QPN names the queue (roce_qpn_queue), so
 * that a peer marks the frames it sends to the QP for that queue
 * (roce_steer.c); when those slots run out, any free one (the QP's frames
 * then reach it through the hand-off). With one queue, the first free slot,
 * as always. QP1's number is fixed: any slot.
 */
static uint32_t
qp_slot(const struct roce_dev *dev, const struct roce_q *q, bool gsi)
{
	uint32_t idx, any = DROCE_MAX_QP;

	for (idx = 0; idx < DROCE_MAX_QP; idx++) {
		if (dev->qp_taken[idx])
			continue;
		if (gsi || roce_qpn_queue(dev, DROCE_QPN_BASE + idx) == q->id)
			return idx;
		if (any == DROCE_MAX_QP)
			any = idx;
	}
	return any;
}

/*
 * A connected QP's source port, for its destination (AV and QPN): its
 * frames, requests and responses alike, all go to that one QP.
 */
static void
qp_sport_steer(struct roce_qp *qp)
{
	uint16_t base = roce_qp_sport_base(qp->fp.qpn);

	if (qp->fp.type == IBV_QPT_UD || qp->av.dip == 0) {
		qp->sport = base;
		return;
	}
	qp->sport = roce_steer_sport(base, qp->dev->ip, qp->av.dip,
				     roce_steer_k(qp->attr.dest_qp_num, qp->av.dip));
}

/*
 * A QP of a tag-matching SRQ gets ROCE_TM_QP_WQES send slots more than it
 * asked for, the last ones, kept apart for the engine's rendezvous READs
 * and FINs (posts never take them: the queue's @reserved).
 */
static int
tm_pool_init(struct roce_qp *qp)
{
	struct droce_wq *sq = &qp->fp.sq;
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "dtmp%u_%.8s", qp->fp.qpn, qp->dev->name);
	qp->tm_pool = roce_ring_alloc(name, sizeof(void *), ROCE_TM_QP_WQES, SOCKET_ID_ANY,
				      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (qp->tm_pool == NULL)
		return -rte_errno;
	snprintf(name, sizeof(name), "dtmq%u_%.8s", qp->fp.qpn, qp->dev->name);
	qp->tm_posted = roce_ring_alloc(name, sizeof(void *), ROCE_TM_QP_WQES, SOCKET_ID_ANY,
					RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (qp->tm_posted == NULL)
		return -rte_errno;
	sq->reserved = ROCE_TM_QP_WQES;
	for (uint32_t i = droce_wq_cap(sq); i < sq->size; i++)
		rte_ring_enqueue(qp->tm_pool, droce_wq_slot(sq, i));
	return 0;
}

/* Limits the facade checked; @init->cap is set to what was made. */
int
roce_qp_create(struct droce_rdev_pd *pd, struct droce_rdev_qp_init *init,
	       struct droce_rdev_qp **out)
{
	bool xrc_recv = init->type == IBV_QPT_XRC_RECV;
	struct roce_dev *dev = xrc_recv ? (init->xrcd ? init->xrcd->dev : NULL) : pd->dev;
	struct ibv_qp_cap *cap = &init->cap;
	struct roce_srq *srq = init->srq ? to_roce_srq(init->srq) : NULL;
	bool tm = srq != NULL && srq->tm != NULL;
	char name[RTE_RING_NAMESIZE];
	struct roce_qp *qp;
	struct roce_q *q;
	uint32_t idx;
	bool shared_cq;
	int ret;

	if ((tm && init->type != IBV_QPT_RC) ||	/* tag matching is defined for RC */
	    (init->gsi && (init->type != IBV_QPT_UD || srq != NULL)) ||
	    /* XRC: the target has a domain and no queue, the initiator no receive queue */
	    (xrc_recv && (dev == NULL || srq != NULL)) ||
	    (init->type == IBV_QPT_XRC_SEND && (srq != NULL || init->xrcd != NULL)))
		return -EINVAL;
	/* the unused half's queue: one slot, never posted to (the facade refuses) */
	if (xrc_recv) {
		cap->max_send_wr = 0;
		cap->max_send_sge = 0;
		cap->max_inline_data = 0;
	}
	if (xrc_recv || init->type == IBV_QPT_XRC_SEND) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	/*
	 * Inline data has a WQE's whole inline area (DROCE_MAX_INLINE): a QP
	 * takes at least what its SGE list would occupy, 16 bytes an SGE, as
	 * the kernel's rxe (rxe_init_sq) and mlx5 round it up. Programs such as
	 * rdma_xclient post 16 inline bytes with max_inline_data left 0.
	 */
	if (!xrc_recv) {
		uint32_t sge_room = cap->max_send_sge * (uint32_t)sizeof(struct ibv_sge);

		sge_room = RTE_MIN(sge_room, (uint32_t)DROCE_MAX_INLINE);
		cap->max_inline_data = RTE_MAX(cap->max_inline_data, sge_room);
	}
	qp = roce_zmalloc("droce_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (qp == NULL)
		return -ENOMEM;
	q = qp_queue(dev, init->type, init->gsi, srq);
	pthread_mutex_lock(&dev->lock);
	idx = qp_slot(dev, q, init->gsi);
	if (idx == DROCE_MAX_QP || (init->gsi && dev->gsi_idx[roce_share_owner()] != 0)) {
		pthread_mutex_unlock(&dev->lock);
		ret = idx == DROCE_MAX_QP ? -ENOMEM : -EBUSY;	/* one QP1 per device */
		goto err_free_qp;
	}
	if (init->gsi)
		dev->gsi_idx[roce_share_owner()] = idx + 1;	/* reserved; the receive path looks once it is published */
	/*
	 * Reserve the slot; the engine and the receive path find the QP in
	 * qp_tbl only once it is complete (below): below qp_hi they look at
	 * every slot.
	 */
	dev->qp_taken[idx] = true;
	qp->serial = ++dev->qp_serial;
	pthread_mutex_unlock(&dev->lock);

	qp->dev = dev;
	qp->q = q;
	qp->owner = roce_share_owner();
	qp->fp.db = qp->q->db;
	qp->fp.db_lock = &qp->q->db_lock;
	qp->pd = xrc_recv ? NULL : pd;
	qp->xrcd = xrc_recv ? init->xrcd : NULL;
	qp->idx = idx;
	qp->fp.db_token = roce_qp_token(qp);
	qp->scq = xrc_recv || init->send_cq == NULL ? NULL : to_roce_cq(init->send_cq);
	/* XRC receives complete into the CQ of the XRC SRQ each request names */
	qp->rcq = xrc_recv || init->recv_cq == NULL ? NULL : to_roce_cq(init->recv_cq);
	qp->srq = srq;
	qp->fp.dev = &dev->rdev;
	qp->fp.srq = init->srq;
	qp->fp.qpn = init->gsi ? DROCE_GSI_QPN : DROCE_QPN_BASE + idx;
	qp->fp.type = init->type;
	qp->fp.sq_sig_all = init->sq_sig_all;
	qp->mc_noloop = init->mc_noloop;
	qp->fp.max_inline = cap->max_inline_data;
	qp->fp.max_ud_len = dev->ib_mtu;
	qp->fp.state = IBV_QPS_RESET;
	qp->fp.user = init->user;
	qp->sport = roce_qp_sport_base(qp->fp.qpn);	/* steered once its destination is known */
	snprintf(name, sizeof(name), "dsq%u_%.8s", qp->fp.qpn, dev->name);
	ret = roce_wq_init(&qp->fp.sq, name,
			   RTE_MAX(cap->max_send_wr, 1U) + (tm ? ROCE_TM_QP_WQES : 0),
			   RTE_MAX(cap->max_send_sge, 1U), sizeof(struct droce_send_wqe),
			   SOCKET_ID_ANY, init->alloc, DROCE_RES_TYPE_SQ, init->single_threaded,
			   false);
	if (ret)
		goto err_release_slot;
	if (tm) {
		ret = tm_pool_init(qp);
		if (ret)
			goto err_fini_sq;
	}
	cap->max_send_sge = xrc_recv ? 0 : qp->fp.sq.max_sge;
	qp->e.win_mask = rte_align32pow2(qp->fp.sq.size) - 1;
	qp->e.win = roce_zmalloc("droce_win", sizeof(void *) * (qp->e.win_mask + 1), 0,
				 SOCKET_ID_ANY);
	if (qp->e.win == NULL) {
		ret = -ENOMEM;
		goto err_fini_sq;
	}
	if (srq == NULL) {
		snprintf(name, sizeof(name), "drq%u_%.8s", qp->fp.qpn, dev->name);
		ret = roce_wq_init(&qp->fp.rq, name, RTE_MAX(cap->max_recv_wr, 1U),
				   RTE_MAX(cap->max_recv_sge, 1U), sizeof(struct droce_recv_wqe),
				   SOCKET_ID_ANY, init->alloc, DROCE_RES_TYPE_RQ,
				   init->single_threaded, false);
		if (ret)
			goto err_free_win;
		cap->max_recv_sge = init->type == IBV_QPT_XRC_SEND || xrc_recv ?
				    0 : qp->fp.rq.max_sge;
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	qp->attr.cap = *cap;

	pthread_mutex_lock(&dev->lock);
	shared_cq = roce_cq_bind(qp->scq, qp->q);
	shared_cq |= roce_cq_bind(qp->rcq, qp->q);	/* both bound, whatever the first says */
	__atomic_store_n(&dev->qp_tbl[idx], qp, __ATOMIC_RELEASE);
	__atomic_fetch_add(&dev->nb_qp, 1, __ATOMIC_RELAXED);	/* the waker reads it */
	if (idx + 1 > dev->qp_hi)
		__atomic_store_n(&dev->qp_hi, idx + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	if (shared_cq)	/* its other queue's pushes are atomic adds from here on */
		roce_dev_quiesce(dev);
	roce_wake_kick(dev);	/* its async events may be waited for */
	*out = &qp->fp;
	return 0;

err_free_win:
	roce_free(qp->e.win);
err_fini_sq:
	roce_ring_release(qp->tm_pool);
	roce_ring_release(qp->tm_posted);
	roce_wq_fini(&qp->fp.sq);
err_release_slot:
	pthread_mutex_lock(&dev->lock);
	dev->qp_taken[idx] = false;
	if (init->gsi)
		dev->gsi_idx[roce_share_owner()] = 0;
	pthread_mutex_unlock(&dev->lock);
err_free_qp:
	roce_free(qp);
	return ret;
}

static void
apply_attr(struct roce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX) q->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT) q->port_num = a->port_num;
	if (mask & IBV_QP_QKEY) q->qkey = a->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS) q->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV) q->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU) q->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN) q->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN) q->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER) q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN) q->sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT) q->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT) q->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY) q->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) q->en_sqd_async_notify = a->en_sqd_async_notify;
}

/*
 * RESET or destroy, once the QP completes nothing more: its completions
 * still held in its CQs go (mlx5 does the same). The receive completions of
 * a QP on an SRQ stay: each took an SRQ WQE, whose buffer the application
 * gets back only through that completion.
 */
static void
qp_purge_completions(struct roce_qp *qp)
{
	if (qp->scq != NULL)
		roce_cq_purge_qp(qp->scq, qp->fp.qpn, qp->rcq == qp->scq && qp->srq == NULL);
	if (qp->rcq != NULL && qp->rcq != qp->scq && qp->srq == NULL)
		roce_cq_purge_qp(qp->rcq, qp->fp.qpn, true);
}

/*
 * A modify the facade has checked (transition, mask and values, against the
 * state it read); the change itself. -EINVAL for an address that is not a
 * RoCEv2 IPv4 GID.
 */
int
roce_qp_modify(struct droce_rdev_qp *fp, const struct ibv_qp_attr *attr, int mask)
{
	struct roce_qp *qp = to_roce_qp(fp);
	struct roce_dev *dev = qp->dev;
	enum ibv_qp_state cur, next;
	struct droce_av av;

	/* IBA 10.5: a connection's destination is one port, never a multicast group */
	if ((mask & IBV_QP_AV) &&
	    (roce_av_from_ah_attr(&attr->ah_attr, &av) != 0 || roce_ip_is_mcast(av.dip)))
		return -EINVAL;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTR)
		roce_port_warm(dev);	/* its traffic is about to start */
	pthread_mutex_lock(&dev->lock);
	cur = roce_qp_state(qp);
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if (next == IBV_QPS_RESET) {
		struct ibv_qp_cap cap = qp->attr.cap;

		__atomic_store_n(&qp->fp.state, IBV_QPS_RESET, __ATOMIC_SEQ_CST);
		roce_dev_quiesce(dev);
		roce_qp_reset_engine(qp);
		qp_purge_completions(qp);
		memset(&qp->attr, 0, sizeof(qp->attr));
		qp->attr.cap = cap;
		memset(&qp->av, 0, sizeof(qp->av));
		qp_sport_steer(qp);
		roce_txh_stale(dev);
		qp->mtu = 0;
		qp->tmo_tsc = 0;
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	apply_attr(qp, attr, mask);
	if (mask & IBV_QP_AV)
		qp->av = av;
	if (mask & (IBV_QP_AV | IBV_QP_DEST_QPN))
		qp_sport_steer(qp);
	if (mask & IBV_QP_PATH_MTU)
		qp->mtu = RTE_MIN(roce_mtu_bytes(attr->path_mtu), (uint32_t)dev->ib_mtu);
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 disables the timer */
	if (mask & IBV_QP_TIMEOUT)
		qp->tmo_tsc = attr->timeout == 0 ? 0 :
			(uint64_t)(4096e-9 * (double)(1ULL << attr->timeout) * (double)dev->tsc_hz);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		qp->e.epsn = qp->attr.rq_psn;
		qp->e.msn = 0;
	}
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		qp->e.psn = qp->attr.sq_psn;
		qp->e.psn_hi = qp->attr.sq_psn;
		qp->e.una = qp->attr.sq_psn;
		qp->e.retry_left = qp->attr.retry_cnt;
		qp->e.rnr_left = qp->attr.rnr_retry;
		if (roce_qp_reliable(qp))
			roce_req_rto_init(dev, qp);
	}
	if (qp->fp.type == IBV_QPT_UD && qp->mtu == 0)
		qp->mtu = dev->ib_mtu;
	/* its destination, source port (steered by the peer's QPN), TOS or TTL */
	if (mask & (IBV_QP_AV | IBV_QP_DEST_QPN))
		roce_txh_stale(dev);
	__atomic_store_n(&qp->fp.state, next, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&dev->lock);
	/* the engine looks at the QP in its new state (ERR flushes, RTS sends what SQD held) */
	droce_rdev_qp_doorbell(&qp->fp);
	return 0;
}

void
roce_qp_query(struct droce_rdev_qp *fp, struct ibv_qp_attr *attr)
{
	struct roce_qp *qp = to_roce_qp(fp);

	pthread_mutex_lock(&qp->dev->lock);
	*attr = qp->attr;
	attr->qp_state = roce_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->sq_draining = 0;
	attr->cap.max_inline_data = qp->fp.max_inline;
	pthread_mutex_unlock(&qp->dev->lock);
}

/* @qp leaves its groups and the device's tables: no packet or token finds it any more. */
static void
qp_unpublish(struct roce_dev *dev, struct roce_qp *qp)
{
	roce_mcast_qp_gone(qp);
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&qp->fp.state, IBV_QPS_RESET, __ATOMIC_SEQ_CST);
	__atomic_store_n(&dev->qp_tbl[qp->idx], NULL, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&dev->nb_qp, 1, __ATOMIC_RELAXED);
	dev->qp_taken[qp->idx] = false;
	if (qp->fp.qpn == DROCE_GSI_QPN)
		__atomic_store_n(&dev->gsi_idx[qp->owner], 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
}

void
roce_qp_destroy(struct droce_rdev_qp *fp)
{
	struct roce_qp *qp = to_roce_qp(fp);
	struct roce_dev *dev = qp->dev;

	qp_unpublish(dev, qp);
	roce_dev_quiesce(dev);
	roce_qp_reset_engine(qp);
	qp_purge_completions(qp);
	roce_ring_release(qp->tm_pool);
	roce_ring_release(qp->tm_posted);
	roce_wq_fini(&qp->fp.sq);
	if (qp->srq == NULL)
		roce_wq_fini(&qp->fp.rq);
	roce_free(qp->e.win);
	roce_free(qp);
}

/*
 * The QPs process @owner left when it ended without destroying them (a
 * device shared by forked processes, roce_share.c): out of the tables
 * before a new process takes the index. Their memory stays: the engine may
 * hold mbufs of theirs, and another process's heap is not ours to free.
 */
void
roce_qp_reap(struct roce_dev *dev, uint32_t owner)
{
	uint32_t hi = __atomic_load_n(&dev->qp_hi, __ATOMIC_ACQUIRE), n = 0;

	for (uint32_t i = 0; i < hi; i++) {
		struct roce_qp *qp = __atomic_load_n(&dev->qp_tbl[i], __ATOMIC_ACQUIRE);

		if (qp == NULL || qp->owner != owner)
			continue;
		qp_unpublish(dev, qp);
		n++;
	}
	/* (and a QP1 it reserved but had not published yet) */
	__atomic_store_n(&dev->gsi_idx[owner], 0, __ATOMIC_RELEASE);
	if (n)
		ROCE_LOG(INFO, "%s: %u QPs of an ended process removed", dev->name, n);
}

/* --- Address handles --- */
/* RoCEv2 over IPv4: the GID must be IPv4-mapped (::ffff:a.b.c.d). */
int
roce_av_from_ah_attr(const struct ibv_ah_attr *ah, struct droce_av *av)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!ah->is_global || ah->port_num != 1 || ah->grh.sgid_index != 0 ||
	    memcmp(ah->grh.dgid.raw, v4mapped, sizeof(v4mapped)) != 0)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(&av->dip, &ah->grh.dgid.raw[12], 4);
	if (av->dip == 0)
		return -EINVAL;
	av->tos = ah->grh.traffic_class;
	av->ttl = ah->grh.hop_limit ? ah->grh.hop_limit : 64;
	return 0;
}

int
roce_ah_create(struct droce_rdev_pd *pd, const struct ibv_ah_attr *attr, struct droce_av *av)
{
	struct roce_dev *dev = pd->dev;

	if (roce_av_from_ah_attr(attr, av) != 0)
		return -EINVAL;
	if (roce_dev_obj_take(dev, &dev->nb_ah, DROCE_MAX_AH) != 0)
		return -ENOMEM;
	return 0;
}

void
roce_ah_destroy(struct droce_rdev *rdev)
{
	struct roce_dev *dev = to_roce_dev(rdev);

	roce_dev_obj_drop(dev, &dev->nb_ah);
}

/*
 * Engine-initiated move to ERR; a concurrent modify to RESET wins. True when
 * this call moved the QP (it was neither in RESET nor already in ERR). An RC or
 * XRC_SEND QP's move is told to the facade (DROCE_RDEV_EVENT_QP_ERR): the connection
 * manager disconnects the id that owns it, as the peer may be gone.
 */
bool
roce_qp_to_err(struct roce_dev *dev, struct roce_qp *qp)
{
	uint32_t st = roce_qp_state(qp);

	while (st != IBV_QPS_RESET && st != IBV_QPS_ERR) {
		if (__atomic_compare_exchange_n(&qp->fp.state, &st, IBV_QPS_ERR, false,
						__ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)) {
			/* ibv_query_qp updates ibv_qp.state */
			if (qp->fp.type == IBV_QPT_RC || qp->fp.type == IBV_QPT_XRC_SEND) {
				struct ibv_async_event ev = {
					.element.qp = qp->fp.user,
					.event_type = DROCE_RDEV_EVENT_QP_ERR,
				};

				roce_async_raise(dev, &ev);
			}
			roce_qp_activate(qp);	/* flush it (engine context) */
			return true;
		}
	}
	return false;
}

/*
 * A QP error no completion reports (IBA 11.6.3.1, affiliated asynchronous
 * errors): the QP goes to ERR and its context gets @type, once.
 * IBV_EVENT_QP_REQ_ERR: the responder saw an invalid request;
 * IBV_EVENT_QP_ACCESS_ERR: the responder saw an access violation (R_Key,
 * bounds, access rights); IBV_EVENT_QP_FATAL: a local catastrophic error (a
 * completion was lost to a CQ overrun).
 */
void
roce_qp_error(struct roce_dev *dev, struct roce_qp *qp, enum ibv_event_type type)
{
	struct ibv_async_event ev = {
		.element.qp = qp->fp.user,
		.event_type = type,
	};

	if (roce_qp_to_err(dev, qp))
		roce_async_raise(dev, &ev);
}

static void
flush_recv(struct roce_qp *qp, struct droce_recv_wqe *r)
{
	struct ibv_wc wc = {
		.wr_id = r->wr_id,
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV,
		.qp_num = qp->fp.qpn,
	};

	if (qp->srq && qp->srq->tm) {
		roce_tm_recv_done(qp, r, &wc, false);
		return;
	}
	if (qp->fp.type == IBV_QPT_XRC_RECV) {
		struct roce_srq *xsrq = roce_srq_by_num(qp->dev, qp->e.xsrqn);

		/* an SRQ destroyed meanwhile took its WQEs with it */
		if (xsrq != NULL) {
			roce_wq_retire(&xsrq->fp.rq, r);
			roce_cq_push(xsrq->cq, &wc, NULL, false);
		}
		return;
	}
	roce_wq_retire(qp->srq ? &qp->srq->fp.rq : &qp->fp.rq, r);
	roce_cq_push(qp->rcq, &wc, NULL, false);
}

/*
 * IBA 10.7.3.1, 11.4.1.1: in ERR every outstanding and newly posted WR
 * completes with WR_FLUSH_ERR, signaled or not, in order. SRQ WQEs stay.
 */
void
roce_qp_flush(struct roce_dev *dev, struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	void *w;

	while (e->win_head != e->win_tail)
		roce_comp_send_wqe(qp, *roce_win_slot(qp, e->win_head++), IBV_WC_WR_FLUSH_ERR);
	e->win_cur = e->win_tail = e->win_head;
	e->cur_pkt = 0;
	e->cur_off = 0;
	while ((w = roce_sq_pull_one(qp)) != NULL)
		roce_comp_send_wqe(qp, w, IBV_WC_WR_FLUSH_ERR);
	if (e->rwqe != NULL) {
		flush_recv(qp, e->rwqe);
		e->rwqe = NULL;
	}
	if (!roce_qp_srq_fed(qp)) {
		while (roce_wq_pull(&qp->fp.rq, &w, 1) == 1)
			flush_recv(qp, w);
	} else if (!e->last_wqe_raised) {
		/*
		 * IBA 11.6.3: a QP on an SRQ reports that it takes no more WQEs.
		 * An XRC_RECV QP takes them from the XRC SRQ each message names
		 * (IBA 10.2.9.2), so it reports it as well (naming its creator's
		 * handle, which the facade hands on to every handle on the QP,
		 * as every event of the QP). Once until the QP is reset.
		 */
		struct ibv_async_event ev = {
			.element.qp = qp->fp.user,
			.event_type = IBV_EVENT_QP_LAST_WQE_REACHED,
		};

		e->last_wqe_raised = 1;
		roce_async_raise(dev, &ev);
	}
}
