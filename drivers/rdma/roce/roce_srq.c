/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queue: the engine side. */
#include "roce_loc.h"

/* Take the next receive WQE; raises the armed limit event (man ibv_modify_srq). */
struct roce_recv_wqe *
roce_srq_get(struct roce_dev *dev, struct roce_srq *srq)
{
	struct roce_recv_wqe *wqe;
	uint32_t limit;

	if (rte_ring_dequeue(srq->rq.posted, (void **)&wqe) != 0)
		return NULL;
	limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	if (unlikely(limit) && rte_ring_count(srq->rq.posted) < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		struct ibv_async_event ev = {
			.element.srq = &srq->ibsrq,
			.event_type = IBV_EVENT_SRQ_LIMIT_REACHED,
		};

		roce_async_raise(dev, &ev);
	}
	return wqe;
}
