/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queue: the engine side. */
#include "roce_loc.h"

void
roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t armed;

	if (unlikely(rte_ring_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0)) {
		/* man ibv_poll_cq: an overrun CQ is in error; report it once */
		cq->dev->stats.cq_overflow++;
		if (__atomic_fetch_add(&cq->overflow, 1, __ATOMIC_RELAXED) == 0 && cq->dev->async_cb != NULL) {
			struct ibv_async_event ev = {
				.element.cq = &cq->ibcq,
				.event_type = IBV_EVENT_CQ_ERR,
			};

			cq->dev->async_cb(cq->dev, &ev);
		}
		return;
	}
	armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	if (armed && (armed == 1 || solicited || wc->status != IBV_WC_SUCCESS) &&
	    __atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) != 0 && cq->dev->comp_cb)
		cq->dev->comp_cb(cq);
}
