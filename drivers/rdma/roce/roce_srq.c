/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queue: the engine side, and the srq_* ops. */
#include "roce_loc.h"

/* Take the next receive WQE; raises the armed limit event (man ibv_modify_srq). */
struct droce_recv_wqe *
roce_srq_get(struct roce_dev *dev, struct roce_srq *srq)
{
	struct droce_recv_wqe *wqe;
	uint32_t limit;

	if (unlikely(!droce_ring_empty(srq->returned)) &&
	    rte_ring_dequeue(srq->returned, (void **)&wqe) == 0)
		return wqe;
	if (rte_ring_dequeue(srq->fp.rq.posted, (void **)&wqe) != 0)
		return NULL;
	limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	if (unlikely(limit) &&
	    droce_ring_count(srq->fp.rq.posted) + droce_ring_count(srq->returned) < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		struct ibv_async_event ev = {
			.element.srq = srq->fp.user,
			.event_type = IBV_EVENT_SRQ_LIMIT_REACHED,
		};

		roce_async_raise(dev, &ev);
	}
	return wqe;
}

/*
 * @w, which roce_srq_get gave, back unused: the next message to the SRQ
 * takes it, as if the one that took it never came. Its ring has room for
 * every WQE of the SRQ.
 */
void
roce_srq_unget(struct roce_srq *srq, struct droce_recv_wqe *w)
{
	if (rte_ring_enqueue(srq->returned, w) != 0)
		roce_wq_retire(&srq->fp.rq, w);	/* cannot be: its slot goes back to the free ones */
}

/* --- SRQ objects --- */
int
roce_srq_create(struct droce_rdev_pd *pd, uint32_t max_wr, uint32_t max_sge, void *user,
		struct droce_rdev_srq **out)
{
	struct roce_dev *dev = pd->dev;
	char name[RTE_RING_NAMESIZE];
	struct roce_srq *srq;
	int ret;

	if (roce_dev_obj_take(dev, &dev->nb_srq, DROCE_MAX_SRQ) != 0)
		return -ENOMEM;
	srq = roce_zmalloc("droce_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (srq == NULL) {
		ret = -ENOMEM;
		goto err_count;
	}
	snprintf(name, sizeof(name), "dsrq%p", (void *)srq);
	ret = roce_wq_init(&srq->fp.rq, name, max_wr, RTE_MAX(max_sge, 1U),
			   sizeof(struct droce_recv_wqe), SOCKET_ID_ANY, NULL, 0, false, true);
	if (ret)
		goto err_free_srq;
	snprintf(name, sizeof(name), "dsrr%p", (void *)srq);
	srq->returned = roce_ring_alloc(name, sizeof(void *), max_wr, SOCKET_ID_ANY,
					RING_F_EXACT_SZ);
	if (srq->returned == NULL) {
		ret = -rte_errno;
		roce_wq_fini(&srq->fp.rq);
		goto err_free_srq;
	}
	srq->fp.dev = &dev->rdev;
	srq->fp.user = user;
	srq->dev = dev;
	srq->owner = roce_share_owner();
	srq->pd = pd;
	/* man ibv_create_srq: the limit given at creation is not armed */
	*out = &srq->fp;
	return 0;

err_free_srq:
	roce_free(srq);
err_count:
	roce_dev_obj_drop(dev, &dev->nb_srq);
	return ret;
}

/* --- XRC domains and XRC SRQs --- */
int
roce_xrcd_alloc(struct droce_rdev *rdev, struct droce_rdev_xrcd **out)
{
	struct droce_rdev_xrcd *xrcd = roce_zmalloc("droce_xrcd", sizeof(*xrcd), 0, SOCKET_ID_ANY);

	if (xrcd == NULL)
		return -ENOMEM;
	xrcd->dev = to_roce_dev(rdev);
	*out = xrcd;
	return 0;
}

void
roce_xrcd_free(struct droce_rdev_xrcd *xrcd)
{
	roce_free(xrcd);
}

/* Publish the SRQ under a number; the receive path finds it from then on. */
int
roce_srq_xrc_enable(struct droce_rdev_srq *fp, struct droce_rdev_xrcd *xrcd,
		    struct droce_rdev_cq *cqfp)
{
	struct roce_srq *srq = to_roce_srq(fp);
	struct roce_dev *dev = srq->dev;
	uint32_t idx, gen;
	bool shared_cq;

	if (xrcd->dev != dev || to_roce_cq(cqfp)->dev != dev || srq->tm != NULL)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	for (idx = 0; idx < DROCE_MAX_SRQ && dev->srq_tbl[idx] != NULL; idx++)
		;
	if (idx == DROCE_MAX_SRQ) {
		pthread_mutex_unlock(&dev->lock);
		return -ENOMEM;
	}
	/* never 0, and never the number the slot's last SRQ had */
	gen = dev->srq_gen[idx] = (dev->srq_gen[idx] + 1) &
				  (ROCE_QPN_MASK >> ROCE_SRQN_IDX_BITS);
	if (gen == 0)
		gen = dev->srq_gen[idx] = 1;
	srq->xrcd = xrcd;
	srq->cq = to_roce_cq(cqfp);
	shared_cq = roce_cq_bind(srq->cq, dev->q[0]);	/* XRC is queue 0's */
	srq->fp.srqn = gen << ROCE_SRQN_IDX_BITS | idx;
	__atomic_fetch_add(&cqfp->tm_users, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&dev->srq_tbl[idx], srq, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	if (shared_cq)
		roce_dev_quiesce(dev);
	return 0;
}

int
roce_srq_limit_set(struct droce_rdev_srq *fp, uint32_t limit)
{
	struct roce_srq *srq = to_roce_srq(fp);

	if (limit > srq->fp.rq.size)
		return -EINVAL;
	__atomic_store_n(&srq->limit, limit, __ATOMIC_RELEASE);
	return 0;
}

uint32_t
roce_srq_limit_get(struct droce_rdev_srq *fp)
{
	return __atomic_load_n(&to_roce_srq(fp)->limit, __ATOMIC_ACQUIRE);
}

int
roce_srq_destroy(struct droce_rdev_srq *fp)
{
	struct roce_srq *srq = to_roce_srq(fp);
	struct roce_dev *dev = srq->dev;

	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < DROCE_MAX_QP; i++) {
		if (dev->qp_tbl[i] && dev->qp_tbl[i]->srq == srq) {
			pthread_mutex_unlock(&dev->lock);
			return -EBUSY;
		}
	}
	dev->nb_srq--;
	if (srq->xrcd != NULL) {
		/*
		 * XRC QPs do not hold it: unpublished, the receive path cannot
		 * reach it, and after the quiesce no engine iteration holds it;
		 * a message in progress into it is found orphaned by its number.
		 */
		__atomic_store_n(&dev->srq_tbl[srq->fp.srqn & ((1U << ROCE_SRQN_IDX_BITS) - 1)],
				 NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&dev->lock);
	if (srq->xrcd != NULL) {
		roce_dev_quiesce(dev);
		__atomic_fetch_sub(&srq->cq->fp.tm_users, 1, __ATOMIC_RELAXED);
	}
	if (srq->tm != NULL)
		roce_tm_fini(srq);
	roce_wq_fini(&srq->fp.rq);
	roce_ring_release(srq->returned);
	roce_free(srq);
	return 0;
}
