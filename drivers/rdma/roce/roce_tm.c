/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tag matching on a TM SRQ, the engine side (rdma-core's
 * Documentation/tag_matching.md, man ibv_post_srq_ops). The engine applies
 * the application's list operations in order, and matches each SEND that
 * arrives at an RC QP of the SRQ by the TMH in its first bytes:
 *   - EAGER whose tag matches: the payload after the TMH goes to the tagged
 *     buffer; IBV_WC_TM_RECV with MATCH and DATA_VALID (a multi-packet
 *     message: a MATCH completion first, DATA_VALID with the last packet);
 *   - RNDV whose tag matches: IBV_WC_TM_RECV with MATCH; the engine RDMA
 *     READs the RVH's data into the tagged buffer on the QP that received
 *     the request, sends the FIN (a SEND of the TMH with opcode FIN), and
 *     completes IBV_WC_TM_RECV with DATA_VALID. When the data does not fit
 *     the tagged buffer, or the request is longer than max_rndv_hdr_size,
 *     the TMH, RVH and metadata go to the buffer instead and complete as
 *     IBV_WC_TM_RNDV_INCOMPLETE with MATCH and DATA_VALID: software reads
 *     and sends the FIN;
 *   - EAGER or RNDV without a match, or while software has not reported
 *     every unexpected message (phase sync): the whole message goes to an
 *     SRQ WQE, IBV_WC_TM_RECV without flags, and counts as unexpected;
 *   - NO_TAG or FIN: the whole message to an SRQ WQE, IBV_WC_TM_NO_TAG;
 *   - anything shorter than a TMH, or of another TMH opcode: an SRQ WQE,
 *     IBV_WC_RECV.
 * Tag and app_ctx (ibv_wc_read_tm_info) are given only with MATCH, zero on
 * every other completion (DATA_VALID alone, unexpected, NO_TAG, ADD/DEL/SYNC).
 */
#include <stddef.h>
#include <infiniband/tm_types.h>

#include "roce_loc.h"

#define NONE UINT32_MAX

static inline uint32_t
handle_of(const struct roce_tm *tm, const struct roce_tm_tag *t)
{
	return t - tm->tags;
}

/*
 * The completion about to be pushed ends the tag: its handle goes back to the
 * free ring when that completion is polled, and only then (droce_tm_polled
 * takes @owed, so a completion left over from a destroyed SRQ frees nothing).
 */
static inline uint32_t
release_of(struct roce_tm *tm, uint32_t handle)
{
	__atomic_store_n(&tm->tags[handle].owed, 1, __ATOMIC_RELEASE);
	return 1 + (tm->idx << ROCE_TM_HANDLE_BITS | handle);
}

/* Unexpected messages counted: delivered, or arriving (see roce_tm_rcv_first). */
static inline bool
in_phase(struct roce_tm *tm)
{
	return tm->sw_cnt == __atomic_load_n(&tm->hw_cnt, __ATOMIC_RELAXED);
}

static void
list_append(struct roce_tm *tm, uint32_t h)
{
	struct roce_tm_tag *t = &tm->tags[h];

	t->next = NONE;
	t->prev = tm->tail;
	if (tm->tail == NONE)
		tm->head = h;
	else
		tm->tags[tm->tail].next = h;
	tm->tail = h;
}

static void
list_remove(struct roce_tm *tm, uint32_t h)
{
	struct roce_tm_tag *t = &tm->tags[h];

	if (t->prev == NONE)
		tm->head = t->next;
	else
		tm->tags[t->prev].next = t->next;
	if (t->next == NONE)
		tm->tail = t->prev;
	else
		tm->tags[t->next].prev = t->prev;
	t->prev = t->next = NONE;
}

/* The first posted tag that matches: (TMH.tag & mask) == tag. */
static struct roce_tm_tag *
match(struct roce_tm *tm, uint64_t tag)
{
	for (uint32_t h = tm->head; h != NONE; h = tm->tags[h].next)
		if ((tag & tm->tags[h].mask) == tm->tags[h].tag)
			return &tm->tags[h];
	return NULL;
}

static void
op_complete(struct roce_tm *tm, const struct droce_tm_op *op, enum ibv_wc_status st,
	    uint32_t release)
{
	struct ibv_wc wc = {
		.wr_id = op->wr_id,
		.status = st,
		.opcode = op->opcode == IBV_WR_TAG_ADD ? IBV_WC_TM_ADD :
			  op->opcode == IBV_WR_TAG_DEL ? IBV_WC_TM_DEL : IBV_WC_TM_SYNC,
	};

	/* software has not yet reported every unexpected message */
	if (!in_phase(tm))
		wc.wc_flags = IBV_WC_TM_SYNC_REQ;
	roce_cq_push(tm->cq, &wc, &(struct droce_cqe_tm){ .release = release }, false);
}

/* Apply the list operations posted so far, in order. */
void
roce_tm_ops_run(struct roce_srq *srq)
{
	struct roce_tm *tm = srq->tm;
	struct droce_tm_op op;

	while (rte_ring_dequeue_elem(tm->ops, &op, sizeof(op)) == 0) {
		struct roce_tm_tag *t = &tm->tags[op.handle % tm->max_tags];
		enum ibv_wc_status st = IBV_WC_SUCCESS;
		uint32_t release = 0;

		if ((op.flags & IBV_OPS_TM_SYNC) || op.opcode == IBV_WR_TAG_SYNC)
			tm->sw_cnt = op.unexpected_cnt;
		if (op.opcode == IBV_WR_TAG_ADD) {
			t->rw.wr_id = op.recv_wr_id;
			t->rw.num_sge = op.num_sge;
			t->rw.sge[0] = op.sge;
			t->sge = op.sge;
			t->rw.length = op.num_sge ? op.sge.length : 0;
			t->tag = op.tag;
			t->mask = op.mask;
			t->state = TMT_POSTED;
			list_append(tm, op.handle);
		} else if (op.opcode == IBV_WR_TAG_DEL) {
			if (t->state == TMT_POSTED) {
				list_remove(tm, op.handle);
				t->state = TMT_FREE;
				if (op.flags & IBV_OPS_SIGNALED)
					release = release_of(tm, op.handle);
				else	/* no completion to poll: the handle is free now */
					rte_ring_enqueue(tm->free, (void *)(uintptr_t)op.handle);
			} else {
				st = IBV_WC_TM_ERR;	/* consumed (or never added) */
			}
		}
		/*
		 * man ibv_post_srq_ops: a completion only when IBV_OPS_SIGNALED
		 * asks for one, failed or not (mlx5 requests a CQE for signaled
		 * operations only). An unsignaled DEL that fails has lost the race
		 * to its tag's consumption, whose own completion returns the handle.
		 */
		if (op.flags & IBV_OPS_SIGNALED)
			op_complete(tm, &op, st, release);
	}
}

/*
 * A matched rendezvous request: the engine fetches the data when the request
 * is one packet of at most max_rndv_hdr_size bytes, the data fits the
 * tagged buffer and the QP has a rendezvous slot; else software does.
 */
static uint8_t
rndv_mode(const struct roce_qp *qp, struct roce_tm_tag *t, const struct roce_pkt *pkt,
	  struct roce_tmh *tmh)
{
	const struct roce_rvh *rvh;

	if (!(pkt->opf & ROCE_OPF_LAST) || pkt->paylen < ROCE_TMH_LEN + ROCE_RVH_LEN ||
	    pkt->paylen > DROCE_TM_RNDV_HDR || qp->tm_pool == NULL ||
	    droce_ring_count(qp->tm_pool) == 0)
		return ROCE_RNDV_SW;
	rvh = tmh_rvh(tmh);
	t->rv_va = rvh_va(rvh);
	t->rv_rkey = rvh_rkey(rvh);
	t->rv_len = rvh_len(rvh);
	/* larger than the tagged buffer, or than any message may be */
	if (t->rv_len > (t->rw.num_sge ? t->rw.sge[0].length : 0) || t->rv_len > DROCE_MAX_MSG)
		return ROCE_RNDV_SW;
	return ROCE_RNDV_HW;
}

/* Rendezvous: READ the sender's data into the tagged buffer. */
static void
rndv_start(struct roce_qp *qp, struct roce_tm_tag *t)
{
	struct droce_send_wqe *w;

	/* rndv_mode saw a free slot, and only the engine takes them */
	if (rte_ring_dequeue(qp->tm_pool, (void **)&w) != 0)
		return;
	droce_send_wqe_clear(w);
	w->opcode = IBV_WR_RDMA_READ;
	w->length = t->rv_len;
	w->num_sge = 1;
	/* as posted: the requester checks and translates it again */
	w->sge[0] = t->sge;
	w->sge[0].length = t->rv_len;
	w->wr.rdma.remote_addr = t->rv_va;
	w->wr.rdma.rkey = t->rv_rkey;
	w->tm = ROCE_TMW_READ;
	w->tm_handle = handle_of(qp->srq->tm, t);
	rte_ring_enqueue(qp->tm_posted, w);	/* sized for every slot of the pool */
	roce_qp_activate(qp);
}

/*
 * The completion that ends a matched tag after its MATCH: DATA_VALID with
 * @len bytes, or @st (the rendezvous READ failed, or a QP error or reset cut
 * the message short: the SRQ's tag outlives the QP's WRs). Its handle goes
 * back when it is polled.
 */
static void
tag_end(struct roce_qp *qp, struct roce_tm_tag *t, enum ibv_wc_status st, uint32_t len)
{
	struct roce_tm *tm = qp->srq->tm;
	struct ibv_wc wc = {
		.wr_id = t->rw.wr_id,
		.status = st,
		.opcode = IBV_WC_TM_RECV,
		.qp_num = qp->fp.qpn,
		.byte_len = st == IBV_WC_SUCCESS ? len : 0,
		.wc_flags = st == IBV_WC_SUCCESS ? IBV_WC_TM_DATA_VALID : 0,
	};

	/* no MATCH here, so no tag information (tag_matching.md, as mlx5) */
	struct droce_cqe_tm ti = { .release = release_of(tm, handle_of(tm, t)) };

	t->state = TMT_FREE;
	roce_cq_push(tm->cq, &wc, &ti, false);
}

/*
 * A send WQE of the engine's own completed (or flushed): after the READ,
 * send the FIN from the same slot and complete the tag with DATA_VALID.
 */
void
roce_tm_wqe_done(struct roce_qp *qp, struct droce_send_wqe *w, enum ibv_wc_status st)
{
	struct roce_tm_tag *t;
	uint32_t len;

	if (w->tm != ROCE_TMW_READ) {
		rte_ring_enqueue(qp->tm_pool, w);
		return;
	}
	t = &qp->srq->tm->tags[w->tm_handle];
	len = w->length;
	if (st == IBV_WC_SUCCESS) {
		droce_send_wqe_clear(w);
		w->opcode = IBV_WR_SEND;
		w->length = ROCE_TMH_LEN;
		w->inl = 1;
		tmh_init((struct roce_tmh *)w->inline_data, IBV_TMH_FIN, t->msg_ctx, t->msg_tag);
		w->tm = ROCE_TMW_FIN;
		rte_ring_enqueue(qp->tm_posted, w);
		roce_qp_activate(qp);
	} else {
		rte_ring_enqueue(qp->tm_pool, w);
	}
	tag_end(qp, t, st, len);
}

/* QP reset: a send WQE goes back where it came from. */
void
roce_send_wqe_release(struct roce_qp *qp, struct droce_send_wqe *w)
{
	if (unlikely(w->tm)) {
		if (w->tm == ROCE_TMW_READ)
			tag_end(qp, &qp->srq->tm->tags[w->tm_handle], IBV_WC_WR_FLUSH_ERR, 0);
		rte_ring_enqueue(qp->tm_pool, w);
	} else {
		roce_wq_retire(&qp->fp.sq, w);
	}
}

/*
 * The first packet of a SEND to a QP of a TM SRQ: choose where the message
 * goes (qp->e.rwqe, qp->e.tm_kind). Returns how many payload bytes to skip
 * (the TMH of an expected eager message), or -EAGAIN when it needs an SRQ
 * WQE and there is none (RNR: nothing was consumed or counted).
 */
int
roce_tm_rcv_first(struct roce_dev *dev, struct roce_qp *qp, const struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	struct roce_tm *tm = qp->srq->tm;
	enum roce_tm_kind kind = ROCE_TM_PLAIN;
	struct roce_tm_tag *t = NULL;
	/* the payload opens with a TMH, if it is long enough to hold one */
	struct roce_tmh *tmh = (struct roce_tmh *)pkt->payload;

	roce_tm_ops_run(qp->srq);	/* the tags posted so far take part */
	if (pkt->paylen >= ROCE_TMH_LEN) {
		/*
		 * A FIN (rendezvous done) is no tagged message either: mlx5 reports
		 * it as a NO_TAG one (UCX's rc_mlx5 takes FINs from its NO_TAG
		 * completions).
		 */
		if (tmh_opcode(tmh) == IBV_TMH_NO_TAG || tmh_opcode(tmh) == IBV_TMH_FIN) {
			kind = ROCE_TM_NO_TAG;
		} else if (tmh_opcode(tmh) == IBV_TMH_EAGER || tmh_opcode(tmh) == IBV_TMH_RNDV) {
			kind = ROCE_TM_UNEXPECTED;
			/* phase sync: no match until software has seen every unexpected one */
			if (in_phase(tm))
				t = match(tm, tmh_tag(tmh));
		}
	}
	e->tm_tag = NULL;
	if (t != NULL) {
		list_remove(tm, handle_of(tm, t));
		t->state = TMT_BUSY;
		t->rndv = tmh_opcode(tmh) == IBV_TMH_RNDV ? rndv_mode(qp, t, pkt, tmh) :
			  ROCE_RNDV_NONE;
		t->msg_tag = tmh_tag(tmh);
		t->msg_ctx = tmh_app_ctx(tmh);
		e->tm_kind = ROCE_TM_EXPECTED;
		e->tm_tag = t;
		e->rwqe = &t->rw;
		if (t->rndv == ROCE_RNDV_HW)
			return pkt->paylen;	/* nothing of the request is placed */
		/* a multi-packet eager message: MATCH now, DATA_VALID at its end */
		if (t->rndv == ROCE_RNDV_NONE && !(pkt->opf & ROCE_OPF_LAST)) {
			struct ibv_wc wc = {
				.wr_id = t->rw.wr_id,
				.opcode = IBV_WC_TM_RECV,
				.qp_num = qp->fp.qpn,
				.wc_flags = IBV_WC_TM_MATCH,
			};

			struct droce_cqe_tm ti = { .tag = t->msg_tag, .app_ctx = t->msg_ctx };

			roce_cq_push(tm->cq, &wc, &ti, false);
		}
		return t->rndv == ROCE_RNDV_SW ? 0 : ROCE_TMH_LEN;
	}
	e->rwqe = roce_srq_get(dev, qp->srq);
	if (e->rwqe == NULL)
		return -EAGAIN;
	e->tm_kind = kind;
	if (kind == ROCE_TM_UNEXPECTED)	/* out of phase from its first packet on */
		__atomic_fetch_add(&tm->hw_cnt, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The receive completion of a message on a TM SRQ (@wc as for a plain
 * receive of @w): its TM opcode, flags and tag; the SRQ WQE goes
 * back to its free ring, a tagged buffer's handle to the application when
 * it polls this completion.
 */
void
roce_tm_recv_done(struct roce_qp *qp, struct droce_recv_wqe *w, struct ibv_wc *wc, bool solicited)
{
	struct roce_qp_eng *e = &qp->e;
	struct roce_tm *tm = qp->srq->tm;
	struct roce_tm_tag *t = e->tm_tag;
	struct droce_cqe_tm ti = { 0 };

	if (t != NULL && w == &t->rw) {
		wc->opcode = IBV_WC_TM_RECV;
		e->tm_tag = NULL;
		e->tm_kind = ROCE_TM_PLAIN;
		if (t->rndv == ROCE_RNDV_HW && wc->status == IBV_WC_SUCCESS) {
			/* MATCH now; DATA_VALID once the READ is done */
			wc->wc_flags |= IBV_WC_TM_MATCH;
			wc->byte_len = 0;
			ti.tag = t->msg_tag;
			ti.app_ctx = t->msg_ctx;
			roce_cq_push(tm->cq, wc, &ti, solicited);
			rndv_start(qp, t);
			return;
		}
		if (wc->status != IBV_WC_SUCCESS) {
			/* an error completion: wr_id, status, qp_num only (man ibv_poll_cq) */
			wc->wc_flags = 0;
		} else if (t->rndv == ROCE_RNDV_SW) {
			/*
			 * The whole request is in the tagged buffer, software reads the
			 * data and sends the FIN: a full completion, as mlx5's
			 * CONSUMED_MSG_SW_RDNV.
			 */
			wc->status = IBV_WC_TM_RNDV_INCOMPLETE;
			wc->wc_flags |= IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
		} else {
			wc->wc_flags |= IBV_WC_TM_DATA_VALID;
			if (e->roff + ROCE_TMH_LEN <= qp->mtu)	/* one packet */
				wc->wc_flags |= IBV_WC_TM_MATCH;
		}
		/* tag information only with MATCH (tag_matching.md, as mlx5) */
		if (wc->wc_flags & IBV_WC_TM_MATCH) {
			ti.tag = t->msg_tag;
			ti.app_ctx = t->msg_ctx;
		}
		ti.release = release_of(tm, handle_of(tm, t));
		t->state = TMT_FREE;
	} else {
		roce_wq_retire(&qp->srq->fp.rq, w);
		if (e->tm_kind == ROCE_TM_UNEXPECTED) {
			wc->opcode = IBV_WC_TM_RECV;
			/* software cannot count an error completion: neither does the SRQ */
			if (wc->status != IBV_WC_SUCCESS)
				roce_tm_uncount(tm);
		} else if (e->tm_kind == ROCE_TM_NO_TAG) {
			wc->opcode = IBV_WC_TM_NO_TAG;
		}
		e->tm_kind = ROCE_TM_PLAIN;
	}
	roce_cq_push(tm->cq, wc, &ti, solicited);
}

/* An unexpected message that never reaches software (error, QP reset). */
void
roce_tm_uncount(struct roce_tm *tm)
{
	__atomic_fetch_sub(&tm->hw_cnt, 1, __ATOMIC_RELAXED);
}

/* QP reset: a tagged buffer being filled completes flushed. */
void
roce_tm_drop(struct roce_qp *qp)
{
	tag_end(qp, qp->e.tm_tag, IBV_WC_WR_FLUSH_ERR, 0);
	qp->e.tm_tag = NULL;
}

/* --- Tag-matching SRQ objects (the srq_tm_enable and tm_release ops) --- */
static void
tm_free(struct roce_tm *tm)
{
	roce_ring_release(tm->ops);
	roce_ring_release(tm->free);
	roce_free(tm->tags);
	roce_free(tm);
}

static struct roce_tm *
tm_alloc(struct roce_cq *cq, uint32_t ntags, uint32_t max_ops)
{
	char name[RTE_RING_NAMESIZE];
	struct roce_tm *tm;

	tm = roce_zmalloc("droce_tm", sizeof(*tm), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (tm == NULL)
		return NULL;
	tm->cq = cq;
	tm->max_tags = ntags;
	tm->max_ops = max_ops;
	tm->head = tm->tail = UINT32_MAX;
	tm->tags = roce_zmalloc("droce_tm_tags", sizeof(*tm->tags) * ntags, RTE_CACHE_LINE_SIZE,
				SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "dtmo%p", (void *)tm);
	tm->ops = roce_ring_alloc(name, sizeof(struct droce_tm_op), max_ops, SOCKET_ID_ANY,
				  RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(name, sizeof(name), "dtmf%p", (void *)tm);
	tm->free = roce_ring_alloc(name, sizeof(void *), ntags, SOCKET_ID_ANY, RING_F_EXACT_SZ);
	if (tm->tags == NULL || tm->ops == NULL || tm->free == NULL) {
		tm_free(tm);
		return NULL;
	}
	for (uintptr_t h = 0; h < ntags; h++) {
		tm->tags[h].prev = tm->tags[h].next = UINT32_MAX;
		rte_ring_enqueue(tm->free, (void *)h);
	}
	return tm;
}

/*
 * Make a new SRQ a tag-matching one: its WQEs take unexpected messages, the
 * tag list is registered with the device so that the engine applies its list
 * operations even before a QP uses it.
 */
int
roce_srq_tm_enable(struct droce_rdev_srq *fp, struct droce_rdev_cq *cqfp, uint32_t max_tags,
		   uint32_t max_ops)
{
	struct roce_srq *srq = to_roce_srq(fp);
	struct roce_cq *cq = to_roce_cq(cqfp);
	struct roce_dev *dev = srq->dev;
	struct roce_tm *tm;
	uint32_t idx;
	bool shared_cq;

	if (cq->dev != dev)
		return -EINVAL;
	tm = tm_alloc(cq, max_tags, max_ops);
	if (tm == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	for (idx = 0; idx < DROCE_MAX_TM_SRQ && dev->tm_tbl[idx]; idx++)
		;
	if (idx == DROCE_MAX_TM_SRQ) {
		pthread_mutex_unlock(&dev->lock);
		tm_free(tm);
		return -ENOMEM;
	}
	tm->idx = idx;
	srq->tm = tm;
	srq->fp.tm_ops = tm->ops;
	srq->fp.tm_free = tm->free;
	srq->fp.tm_max_tags = max_tags;
	__atomic_fetch_add(&cq->fp.tm_users, 1, __ATOMIC_RELAXED);
	shared_cq = roce_cq_bind(cq, dev->q[0]);	/* tag matching is queue 0's */
	__atomic_store_n(&dev->tm_tbl[idx], srq, __ATOMIC_RELEASE);
	if (idx + 1 > dev->tm_hi)
		__atomic_store_n(&dev->tm_hi, idx + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	if (shared_cq)
		roce_dev_quiesce(dev);
	return 0;
}

/* A TM SRQ being destroyed, once no QP uses it: the engine lets go first. */
void
roce_tm_fini(struct roce_srq *srq)
{
	struct roce_tm *tm = srq->tm;
	struct roce_dev *dev = srq->dev;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->tm_tbl[tm->idx], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	__atomic_fetch_sub(&tm->cq->fp.tm_users, 1, __ATOMIC_RELAXED);
	srq->tm = NULL;
	srq->fp.tm_ops = NULL;
	srq->fp.tm_free = NULL;
	tm_free(tm);
}

/*
 * A tag-matching completion was polled: a tagged buffer's handle
 * (struct droce_cqe_tm.release, see release_of) goes back to its SRQ's free
 * ring, if the completion still owes it (not one of a destroyed SRQ's).
 */
void
roce_tm_release(struct droce_rdev *rdev, uint32_t release)
{
	struct roce_dev *dev = to_roce_dev(rdev);
	uint32_t idx = (release - 1) >> ROCE_TM_HANDLE_BITS;
	uintptr_t h = (release - 1) & ((1u << ROCE_TM_HANDLE_BITS) - 1);
	struct roce_srq *srq;

	if (release == 0 || idx >= DROCE_MAX_TM_SRQ)
		return;
	srq = __atomic_load_n(&dev->tm_tbl[idx], __ATOMIC_ACQUIRE);
	if (srq != NULL && h < srq->tm->max_tags &&
	    __atomic_exchange_n(&srq->tm->tags[h].owed, 0, __ATOMIC_ACQ_REL))
		rte_ring_enqueue(srq->tm->free, (void *)h);
}
