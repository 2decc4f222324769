/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP's engine side: work queues (slot array + free ring + posted ring),
 * engine reset, and the move to ERR with its flush.
 */
#include <rte_errno.h>
#include <rte_malloc.h>

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
	ssize_t sz = rte_ring_get_memsize_elem(esize, (flags & RING_F_EXACT_SZ) ?
					       rte_align32pow2(count + 1) : count);
	struct rte_ring *r;
	int ret;

	if (sz < 0) {
		rte_errno = (int)-sz;
		return NULL;
	}
	r = roce_zmalloc(name, sz, RTE_CACHE_LINE_SIZE, socket);
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ret = rte_ring_init(r, name, count, flags);
	if (ret != 0) {
		roce_free(r);
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

int
roce_wq_init(struct roce_wq *wq, const char *name, uint32_t size,
	     uint32_t max_sge, size_t slot_size, int socket)
{
	char rname[RTE_RING_NAMESIZE];

	memset(wq, 0, sizeof(*wq));
	pthread_mutex_init(&wq->post_lock, NULL);
	wq->size = size;
	wq->max_sge = max_sge;
	wq->slots = roce_zmalloc(name, slot_size * size, RTE_CACHE_LINE_SIZE, socket);
	if (wq->slots == NULL)
		return -ENOMEM;
	/*
	 * Any number of application threads take free slots and post (the
	 * default multi-thread modes). Not the relaxed-tail-sync modes: there
	 * a consumer's tail lags while others are still taking, the engine's
	 * return of a slot then finds the ring "full", and the slot is lost.
	 */
	snprintf(rname, sizeof(rname), "%s_f", name);
	wq->free = roce_ring_alloc(rname, sizeof(void *), size, socket, RING_F_EXACT_SZ);
	snprintf(rname, sizeof(rname), "%s_p", name);
	wq->posted = roce_ring_alloc(rname, sizeof(void *), size, socket, RING_F_EXACT_SZ);
	if (wq->free == NULL || wq->posted == NULL) {
		int err = rte_errno;

		roce_wq_fini(wq);
		return -err;
	}
	for (uint32_t i = 0; i < size; i++)
		rte_ring_enqueue(wq->free, (uint8_t *)wq->slots + i * slot_size);
	return 0;
}

void
roce_wq_fini(struct roce_wq *wq)
{
	roce_ring_release(wq->free);
	roce_ring_release(wq->posted);
	roce_free(wq->slots);
	pthread_mutex_destroy(&wq->post_lock);
	memset(wq, 0, sizeof(*wq));
}

/* Return every posted WQE to the free ring (RESET discards WRs). */
void
roce_wq_drain(struct roce_wq *wq)
{
	void *p;

	if (wq->posted == NULL)
		return;
	while (rte_ring_dequeue(wq->posted, &p) == 0)
		rte_ring_enqueue(wq->free, p);
}

/* Engine state back to zero; called with the engine quiesced and the QP in RESET. */
void
roce_qp_reset_engine(struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	struct roce_send_wqe **win = e->win;
	void *w;

	for (uint32_t i = e->win_head; i != e->win_tail; i++)
		roce_send_wqe_release(qp, win[i % qp->sq.size]);
	while (rte_ring_dequeue(qp->sq.posted, &w) == 0)
		roce_send_wqe_release(qp, w);
	if (e->tm_tag != NULL && e->rwqe == &e->tm_tag->rw) {
		roce_tm_drop(qp);
	} else if (e->rwqe != NULL) {
		if (e->tm_kind == ROCE_TM_UNEXPECTED)	/* cut short: software never sees it */
			roce_tm_uncount(qp->srq->tm);
		rte_ring_enqueue(qp->srq ? qp->srq->rq.free : qp->rq.free, e->rwqe);
	}
	memset(e, 0, sizeof(*e));
	e->win = win;
	roce_wq_drain(&qp->sq);
	roce_wq_drain(&qp->rq);
}

/*
 * Engine-initiated move to ERR; a concurrent modify to RESET wins. True when
 * this call moved the QP (it was neither in RESET nor already in ERR).
 */
bool
roce_qp_to_err(struct roce_dev *dev, struct roce_qp *qp)
{
	uint32_t st = roce_qp_state(qp);

	while (st != IBV_QPS_RESET && st != IBV_QPS_ERR) {
		if (__atomic_compare_exchange_n(&qp->state, &st, IBV_QPS_ERR, false,
						__ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
			return true;	/* ibv_query_qp updates ibv_qp.state */
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
		.element.qp = &qp->ibqp,
		.event_type = type,
	};

	if (roce_qp_to_err(dev, qp))
		roce_async_raise(dev, &ev);
}

static void
flush_recv(struct roce_qp *qp, struct roce_recv_wqe *r)
{
	struct ibv_wc wc = {
		.wr_id = r->wr_id,
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV,
		.qp_num = qp->qpn,
	};

	if (qp->srq && qp->srq->tm) {
		roce_tm_recv_done(qp, r, &wc, false);
		return;
	}
	rte_ring_enqueue(qp->srq ? qp->srq->rq.free : qp->rq.free, r);
	roce_cq_push(qp->rcq, &wc, false);
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
		roce_comp_send_wqe(qp, qp->e.win[e->win_head++ % qp->sq.size], IBV_WC_WR_FLUSH_ERR);
	e->win_cur = e->win_tail = e->win_head;
	e->cur_pkt = 0;
	e->cur_off = 0;
	while (rte_ring_dequeue(qp->sq.posted, &w) == 0)
		roce_comp_send_wqe(qp, w, IBV_WC_WR_FLUSH_ERR);
	if (e->rwqe != NULL) {
		flush_recv(qp, e->rwqe);
		e->rwqe = NULL;
	}
	if (qp->srq == NULL) {
		while (rte_ring_dequeue(qp->rq.posted, &w) == 0)
			flush_recv(qp, w);
	} else if (!e->last_wqe_raised) {
		/* IBA 11.6.3: a QP on an SRQ reports that it takes no more WQEs */
		struct ibv_async_event ev = {
			.element.qp = &qp->ibqp,
			.event_type = IBV_EVENT_QP_LAST_WQE_REACHED,
		};

		e->last_wqe_raised = 1;
		roce_async_raise(dev, &ev);
	}
}
