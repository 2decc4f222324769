/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queue: the engine side, and arming for completion events. */
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
	uint32_t idx = wc->qp_num - DROCE_QPN_BASE;
	struct roce_qp *qp;

	dev->stats.cq_overflow++;
	if (__atomic_fetch_add(&cq->overflow, 1, __ATOMIC_RELAXED) == 0) {
		struct ibv_async_event ev = {
			.element.cq = &cq->ibcq,
			.event_type = IBV_EVENT_CQ_ERR,
		};

		roce_async_raise(dev, &ev);
	}
	qp = idx < DROCE_MAX_QP ? __atomic_load_n(&dev->qp_tbl[idx], __ATOMIC_ACQUIRE) : NULL;
	if (qp != NULL && qp->qpn == wc->qp_num)
		roce_qp_error(dev, qp, IBV_EVENT_QP_FATAL);
}

void
roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t armed;

	if (unlikely(rte_ring_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0)) {
		cq_overrun(cq, wc);
		return;
	}
	if (cq->chan == NULL)
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
		if (cq->dev->comp_cb)
			cq->dev->comp_cb(cq);
	}
}

/*
 * ibv_req_notify_cq: @how is 1 (next completion) or 2 (next solicited or
 * error completion). An armed CQ with a channel is what a sleeping
 * application waits for: with inline progress the waker drives the device.
 */
void
roce_cq_arm(struct roce_cq *cq, uint32_t how)
{
	if (cq->chan == NULL)
		return;		/* nothing to notify */
	/* counted before it can fire: the engine's decrement never underflows */
	__atomic_fetch_add(&cq->dev->wake_armed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&cq->armed, how, __ATOMIC_SEQ_CST) != 0)
		__atomic_fetch_sub(&cq->dev->wake_armed, 1, __ATOMIC_RELEASE);	/* was armed */
	else
		roce_wake_kick(cq->dev);
}

/* A CQ being destroyed (the engine no longer completes into it). */
void
roce_cq_disarm(struct roce_cq *cq)
{
	if (cq->chan != NULL && __atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_sub(&cq->dev->wake_armed, 1, __ATOMIC_RELEASE);
}
