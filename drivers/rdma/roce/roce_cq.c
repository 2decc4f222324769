/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queue: the engine side, and arming for completion events. */
#include <rte_errno.h>
#include <rte_pause.h>

#include "droce.h"
#include "roce_loc.h"

/*
 * man ibv_poll_cq: an overrun CQ is in error. The CQ's context gets
 * IBV_EVENT_CQ_ERR once; the QP whose completion is lost goes to ERR with
 * IBV_EVENT_QP_FATAL (IBA 11.6.3.1: a CQ error is catastrophic for the work
 * queues that complete into it).
 */
static void
cq_overrun(struct roce_cq *cq, const struct ibv_wc *wc)
{
	struct roce_dev *dev = cq->dev;
	struct roce_qp *qp;

	/* any queue whose QP completes into the CQ */
	__atomic_fetch_add(&dev->q0.stats.cq_overflow, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&cq->overflow, 1, __ATOMIC_RELAXED) == 0) {
		struct ibv_async_event ev = {
			.element.cq = cq->fp.user,
			.event_type = IBV_EVENT_CQ_ERR,
		};

		roce_async_raise(dev, &ev);
	}
	qp = roce_qp_by_qpn(dev, wc->qp_num);
	if (qp != NULL)
		roce_qp_error(dev, qp, IBV_EVENT_QP_FATAL);
}

/* @tm: a tag-matching completion's tag information, or NULL */
void
roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, const struct droce_cqe_tm *tm,
	     bool solicited)
{
	bool multi = __atomic_load_n(&cq->multi_q, __ATOMIC_RELAXED);
	struct droce_cqe *c;
	uint32_t armed;
	uint64_t p;

	/*
	 * One queue's QPs complete into it: that queue's iteration is its one
	 * producer, which reads the poller's count only when the slots it last
	 * saw free are used up. The queues of a device whose QPs complete into
	 * one CQ each take a slot with a compare-and-swap, and publish in the
	 * order they took them (roce_cq_bind quiesces the device before that).
	 * prod_head follows either way, for the switch.
	 */
	if (likely(!multi)) {
		p = cq->fp.produced;
		if (unlikely(p - cq->cons_seen >= cq->fp.cap)) {
			/* acquire: the poller read those slots before it counted them */
			cq->cons_seen = __atomic_load_n(&cq->fp.consumed, __ATOMIC_ACQUIRE);
			if (p - cq->cons_seen >= cq->fp.cap) {
				cq_overrun(cq, wc);
				return;
			}
		}
	} else {
		for (;;) {
			uint64_t cons;

			p = __atomic_load_n(&cq->prod_head, __ATOMIC_RELAXED);
			cons = __atomic_load_n(&cq->fp.consumed, __ATOMIC_ACQUIRE);
			if (unlikely((int64_t)(p - cons) < 0))
				continue;	/* others produced and the poller took past p: again */
			if (unlikely(p - cons >= cq->fp.cap)) {
				/* full, if no producer moved on while consumed was read */
				if (__atomic_load_n(&cq->prod_head, __ATOMIC_RELAXED) != p)
					continue;
				cq_overrun(cq, wc);
				return;
			}
			if (__atomic_compare_exchange_n(&cq->prod_head, &p, p + 1, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		}
	}
	c = &cq->fp.slots[p & cq->fp.mask];
	c->wc = *wc;
	c->tm = tm != NULL ? *tm : (struct droce_cqe_tm){ 0 };
	if (likely(!multi)) {
		__atomic_store_n(&cq->prod_head, p + 1, __ATOMIC_RELAXED);
	} else {
		/* the producers before this one publish first (acquire: their slots, for ours to carry) */
		while (__atomic_load_n(&cq->fp.produced, __ATOMIC_ACQUIRE) != p)
			rte_pause();
	}
	/* release: the slot is written before it is counted */
	__atomic_store_n(&cq->fp.produced, p + 1, __ATOMIC_RELEASE);
	if (!cq->has_channel)
		return;		/* no completion events to raise */
	/*
	 * The completion is visible before armed is read, as armed is set
	 * before ibv_req_notify_cq's caller polls: either the poll finds the
	 * completion or the event fires (pairs with roce_cq_arm).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	armed = __atomic_load_n(&cq->armed, __ATOMIC_RELAXED);
	if (armed && (armed == 1 || solicited || wc->status != IBV_WC_SUCCESS) &&
	    __atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) != 0) {
		__atomic_fetch_sub(&cq->dev->wake_armed, 1, __ATOMIC_RELEASE);
		if (cq->dev->rdev.comp_cb)
			cq->dev->rdev.comp_cb(&cq->fp);
	}
}

/*
 * Under dev->lock: queue @q's QPs (or SRQ) complete into @cq from now on.
 * True if that makes it a CQ of two queues, whose pushes are then atomic
 * adds: the caller quiesces the device (after dropping the lock, before the
 * object can complete anything), so that no push of the first queue still
 * runs the plain way.
 */
bool
roce_cq_bind(struct roce_cq *cq, const struct roce_q *q)
{
	if (cq == NULL || cq->multi_q)
		return false;
	if (cq->prod_q < 0) {
		cq->prod_q = (int16_t)q->id;
		return false;
	}
	if (cq->prod_q == q->id)
		return false;
	__atomic_store_n(&cq->multi_q, true, __ATOMIC_RELEASE);
	return true;
}

/*
 * ibv_req_notify_cq: @how is 1 (next completion) or 2 (next solicited or
 * error completion). An armed CQ with a channel is what a sleeping
 * application waits for: with inline progress the waker drives the device.
 */
void
roce_cq_arm(struct droce_rdev_cq *fp, uint32_t how)
{
	struct roce_cq *cq = to_roce_cq(fp);

	if (!cq->has_channel)
		return;		/* nothing to notify */
	/* counted before it can fire: the engine's decrement never underflows */
	__atomic_fetch_add(&cq->dev->wake_armed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&cq->armed, how, __ATOMIC_SEQ_CST) != 0)
		__atomic_fetch_sub(&cq->dev->wake_armed, 1, __ATOMIC_RELEASE);	/* was armed */
	else
		roce_wake_kick(cq->dev);
}

/*
 * ibv_resize_cq, on the side that produces completions (the engine, or the
 * holder of the inline lock): copy what the CQ holds to its new slots, at
 * the same counts (so in order), and complete into them from now on; the
 * old ones go back in resize_to for the caller to free. The engine is the
 * only producer and the poller is held off, so the count is exact and the
 * move is all or nothing; no lock, no allocation.
 */
/* @cq completes into @st's slots from now on. */
static inline void
cq_store_install(struct roce_cq *cq, const struct roce_cq_store *st)
{
	cq->fp.slots = st->slots;
	cq->fp.mask = st->mask;
	cq->fp.cap = st->cap;
	cq->slots_app = st->app;
}

static void
cq_resize_apply(struct roce_cq *cq)
{
	struct roce_cq_store *to = cq->resize_to;
	struct roce_cq_store old = {
		.slots = cq->fp.slots, .mask = cq->fp.mask, .cap = cq->fp.cap, .app = cq->slots_app,
	};
	uint64_t c = cq->fp.consumed, p = cq->fp.produced;

	/* rxe_cq_chk_attr: fewer entries than completions held is EINVAL */
	if (p - c > to->cap) {
		cq->resize_ret = -EINVAL;
		return;
	}
	for (uint64_t i = c; i != p; i++)
		to->slots[i & to->mask] = old.slots[i & old.mask];
	cq_store_install(cq, to);
	*to = old;
	cq->resize_ret = 0;
}

/*
 * The purge of one QP's completions, on the producing side like a resize:
 * the completions held are packed towards the newest, those of
 * @cq->purge_qpn dropped (its receive completions only if @cq->purge_recv),
 * the others kept in their order, and the poller's count moved past what was
 * dropped (the pollers are held off and nothing else is produced
 * meanwhile). A tag-matching completion that hands a tag's handle back when
 * polled stays.
 */
static void
cq_purge_apply(struct roce_cq *cq)
{
	struct droce_cqe *s = cq->fp.slots;
	uint64_t c = cq->fp.consumed, i = cq->fp.produced, w = i;

	while (i != c) {
		const struct droce_cqe *e = &s[--i & cq->fp.mask];

		if (e->wc.qp_num != cq->purge_qpn || e->tm.release != 0 ||
		    (!cq->purge_recv && (e->wc.opcode & IBV_WC_RECV))) {
			w--;
			if (w != i)
				s[w & cq->fp.mask] = *e;
		}
	}
	__atomic_store_n(&cq->fp.consumed, w, __ATOMIC_RELEASE);
	cq->resize_ret = 0;
}

/*
 * A resize that shrinks the CQ runs after the work posted before it: the
 * completions due then count against the smaller size (EINVAL if they do not
 * fit), as they would on a NIC that had already completed them. A resize that
 * grows it, and a purge, run first: a CQ grown because it was about to
 * overrun must not take more completions at its old size.
 */
static bool
cq_job_after_work(const struct roce_cq *cq)
{
	return cq->resize_to != NULL && cq->resize_to->cap < cq->fp.cap;
}

/* Whether the engine runs the CQ job set (dev->cq_resize) at the end of its iteration. */
bool
roce_cq_job_late(const struct roce_dev *dev)
{
	return cq_job_after_work(__atomic_load_n(&dev->cq_resize, __ATOMIC_ACQUIRE));
}

/* The engine, in an iteration that began with dev->cq_resize set (roce_cq_job_late: when). */
void
roce_cq_resize_run(struct roce_dev *dev)
{
	struct roce_cq *cq = __atomic_load_n(&dev->cq_resize, __ATOMIC_ACQUIRE);

	if (cq->resize_to != NULL)
		cq_resize_apply(cq);
	else
		cq_purge_apply(cq);
	__atomic_store_n(&dev->cq_resize, NULL, __ATOMIC_RELEASE);
}

/*
 * Run the job set in @cq (resize_to, or purge_qpn) where completions are
 * produced: inline, under the inline lock; with an engine lcore, by the
 * engine in its next iteration while this waits; a shrink after an
 * iteration that began after the call (cq_job_after_work). Under cq_resize_lock;
 * the caller holds the CQ's pollers off. Returns the job's answer.
 */
static int
cq_job(struct roce_cq *cq)
{
	struct roce_dev *dev = cq->dev;

	if (dev->engine == NULL) {
		roce_dev_lock_all(dev);	/* every queue whose QPs may complete into it */
		/* a shrink: what was posted before the call first, as on an engine */
		if (cq_job_after_work(cq))
			for (uint16_t k = 0; k < dev->nb_q; k++)
				roce_q_poll(dev->q[k]);
		if (cq->resize_to != NULL)
			cq_resize_apply(cq);
		else
			cq_purge_apply(cq);
		roce_dev_unlock_all(dev);
	} else {
		/* queue 0's engine runs it while the other queues are held */
		roce_dev_hold(dev, true);
		dev->cq_resize_owner = roce_share_owner();	/* its slots may be this process's memory */
		__atomic_store_n(&dev->cq_resize, cq, __ATOMIC_RELEASE);
		while (__atomic_load_n(&dev->cq_resize, __ATOMIC_ACQUIRE) != NULL)
			rte_pause();
		roce_dev_hold(dev, false);
	}
	return cq->resize_ret;
}

/*
 * A QP goes to RESET or is destroyed: its completions still held in @cq go
 * too (as mlx5 cleans its CQs, mlx5_cq_clean), so that a QP brought back
 * from ERR does not meet the flush completions of its past; its receive
 * completions only if @recv. The facade
 * holds the CQ's pollers off; the QP completes nothing more (quiesced).
 */
void
roce_cq_purge_qp(struct roce_cq *cq, uint32_t qpn, bool recv)
{
	struct roce_dev *dev = cq->dev;

	if (__atomic_load_n(&cq->fp.produced, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&cq->fp.consumed, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&dev->cq_resize_lock);
	cq->resize_to = NULL;
	cq->purge_qpn = qpn;
	cq->purge_recv = recv;
	cq_job(cq);
	pthread_mutex_unlock(&dev->cq_resize_lock);
}

/* --- CQ objects (the interface's cq_* ops) --- */

/* Slots for @cqe completions (a power of two of them), from the CQ's allocator if it has one. */
static int
cq_store_alloc(const struct roce_cq *cq, uint32_t cqe, struct roce_cq_store *st)
{
	char name[RTE_MEMZONE_NAMESIZE];
	uint32_t n = rte_align32pow2(cqe);

	if (cqe == 0 || n < cqe)
		return -EINVAL;
	snprintf(name, sizeof(name), "droce_cq_%p", (const void *)cq);
	st->slots = roce_queue_zalloc(cq->alloc, DROCE_RES_TYPE_CQ, name,
				      (size_t)n * sizeof(struct droce_cqe), SOCKET_ID_ANY, &st->app);
	if (st->slots == NULL)
		return -ENOMEM;
	st->mask = n - 1;
	st->cap = cqe;
	return 0;
}

static void
cq_store_free(const struct roce_cq *cq, const struct roce_cq_store *st)
{
	roce_queue_free(cq->alloc, DROCE_RES_TYPE_CQ, st->slots, st->app);
}

int
roce_cq_create(struct droce_rdev *rdev, uint32_t cqe, bool events, void *user,
	       const struct droce_rdev_alloc *alloc, struct droce_rdev_cq **out)
{
	struct roce_dev *dev = to_roce_dev(rdev);
	struct roce_cq_store st;
	struct roce_cq *cq;
	int ret;

	if (roce_dev_obj_take(dev, &dev->nb_cq, DROCE_MAX_CQ) != 0)
		return -ENOMEM;
	cq = roce_zmalloc("droce_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (cq == NULL) {
		ret = -ENOMEM;
		goto err_count;
	}
	/*
	 * Any number of threads may poll one CQ (ibv_alloc_td(3)); the facade
	 * lets one at a time take completions, so the slots have one consumer.
	 */
	cq->alloc = alloc;
	ret = cq_store_alloc(cq, cqe, &st);
	if (ret)
		goto err_free_cq;
	cq_store_install(cq, &st);
	cq->fp.dev = rdev;
	cq->fp.cqe = cqe;
	cq->fp.user = user;
	cq->dev = dev;
	cq->has_channel = events;
	cq->prod_q = -1;
	*out = &cq->fp;
	return 0;

err_free_cq:
	roce_free(cq);
err_count:
	roce_dev_obj_drop(dev, &dev->nb_cq);
	return ret;
}

/*
 * The facade holds the CQ's pollers off. The completions held move to new
 * slots where they are produced (cq_job), so none is lost or reordered while
 * the engine keeps completing.
 */
int
roce_cq_resize(struct droce_rdev_cq *fp, uint32_t cqe)
{
	struct roce_cq *cq = to_roce_cq(fp);
	struct roce_dev *dev = cq->dev;
	struct roce_cq_store st;
	int ret;

	ret = cq_store_alloc(cq, cqe, &st);
	if (ret)
		return ret;
	pthread_mutex_lock(&dev->cq_resize_lock);
	cq->resize_to = &st;
	ret = cq_job(cq);
	cq->resize_to = NULL;
	pthread_mutex_unlock(&dev->cq_resize_lock);
	/* done: st holds the old slots, the engine completes into the new ones only; else the new */
	cq_store_free(cq, &st);
	if (ret)
		return ret;
	fp->cqe = cqe;
	return 0;
}

int
roce_cq_destroy(struct droce_rdev_cq *fp)
{
	struct roce_cq *cq = to_roce_cq(fp);
	struct roce_dev *dev = cq->dev;

	/* a QP or a tag-matching SRQ still completes into it */
	if (__atomic_load_n(&cq->fp.tm_users, __ATOMIC_RELAXED))
		return -EBUSY;
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < DROCE_MAX_QP; i++) {
		struct roce_qp *qp = dev->qp_tbl[i];

		if (qp && (qp->scq == cq || qp->rcq == cq)) {
			pthread_mutex_unlock(&dev->lock);
			return -EBUSY;
		}
	}
	dev->nb_cq--;
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	/* the engine no longer completes into it */
	if (cq->has_channel && __atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_sub(&dev->wake_armed, 1, __ATOMIC_RELEASE);
	roce_queue_free(cq->alloc, DROCE_RES_TYPE_CQ, cq->fp.slots, cq->slots_app);
	roce_free(cq);
	return 0;
}
