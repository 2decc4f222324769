/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting and polling, the man-page semantics: a WR list is walked in order
 * and stops at the first WR that fails a post-time check; that WR is returned
 * through *bad_wr with its errno, the ones before it stay posted. With inline
 * progress every call also moves the device.
 */
#include <string.h>

#include "verbs_loc.h"

#define SEND_FLAGS_OK (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/*
 * Opcode allowed for the QP type (table in man ibv_post_send): 0, or an
 * errno: EINVAL for one the QP type does not allow (or no verb defines),
 * EOPNOTSUPP for one it allows and droce does not have yet (SEND_WITH_INV
 * on UC, which IBA gives no opcode on the wire and the kernel's rxe fails
 * with a local QP operation error; ATOMIC_WRITE on XRC, TSO on UD).
 * BIND_MW and LOCAL_INV on XRC_SEND too: a type 2 window bound there is
 * that QP's (drivers/rdma/roce/roce_mw.c).
 */
static int
check_opcode(const struct droce_rdev_qp *qp, enum ibv_wr_opcode op)
{
	bool rc = qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND;

	if (qp->type == IBV_QPT_XRC_RECV)
		return EINVAL;		/* an XRC target has no send queue */
	switch (op) {
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return qp->type == IBV_QPT_UD ? EINVAL : 0;
	case IBV_WR_SEND_WITH_INV:
		return qp->type == IBV_QPT_UD ? EINVAL : rc ? 0 : EOPNOTSUPP;
	case IBV_WR_ATOMIC_WRITE:
		return qp->type == IBV_QPT_RC ? 0 : rc ? EOPNOTSUPP : EINVAL;
	case IBV_WR_TSO:
		return qp->type == IBV_QPT_UD ? EOPNOTSUPP : EINVAL;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return qp->type == IBV_QPT_UD ? EINVAL : 0;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return rc ? 0 : EINVAL;
	default:
		/* driver opcodes and values no verb defines */
		return EINVAL;
	}
}

static int
check_flags(const struct droce_rdev_qp *qp, const struct ibv_send_wr *wr)
{
	unsigned int f = wr->send_flags;
	bool send = wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM ||
		    wr->opcode == IBV_WR_SEND_WITH_INV;
	bool write = wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		     wr->opcode == IBV_WR_ATOMIC_WRITE;

	if (f & ~SEND_FLAGS_OK)
		return EINVAL;
	if ((f & IBV_SEND_FENCE) && qp->type != IBV_QPT_RC && qp->type != IBV_QPT_XRC_SEND)
		return EINVAL;
	if ((f & IBV_SEND_SOLICITED) && !send && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
		return EINVAL;
	if ((f & IBV_SEND_INLINE) && !send && !write)
		return EINVAL;
	return 0;
}

#define MW_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

/*
 * A BIND_MW WR (type 2 through ibv_post_send, type 1 from ibv_bind_mw): no
 * SGEs (as rdma-core's rxe provider checks), a window of this device, an
 * MR for a non-empty range, known access flags. What depends on the
 * window's state, the MR's rights and bounds and the PDs is checked when
 * the engine executes it (IBV_WC_MW_BIND_ERR).
 */
static int
check_bind(const struct droce_rdev_qp *qp, const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	const struct ibv_mw *mw = wr->bind_mw.mw;

	if (wr->num_sge != 0 || mw == NULL || to_dmw((struct ibv_mw *)mw)->dev != qp->dev ||
	    (bi->mr == NULL && (bi->addr || bi->length)) || (bi->mw_access_flags & ~MW_ACCESS_OK))
		return EINVAL;
	return 0;
}

/* A WR's @n SGEs into its WQE (a zero-length WR may have no sg_list). */
static inline void
sges_copy(struct ibv_sge *dst, const struct ibv_sge *src, int n)
{
	if (n == 1)	/* the usual WR: no call for 16 bytes */
		dst[0] = src[0];
	else if (n > 0)
		memcpy(dst, src, sizeof(*src) * n);
}

/* The post-time checks of one send WR: 0, or the errno ibv_post_send returns. */
int
droce_send_wr_check(const struct droce_rdev_qp *qp, const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int ret;

	ret = check_opcode(qp, wr->opcode);
	if (ret == 0)
		ret = check_flags(qp, wr);
	if (ret)
		return ret;
	if (wr->opcode == IBV_WR_BIND_MW)
		return check_bind(qp, wr);
	if (wr->opcode == IBV_WR_LOCAL_INV)	/* local: its SGEs, if any, are ignored */
		return 0;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	/* (an ATOMIC WRITE's 8 bytes always fit a WQE, whatever max_inline_data) */
	if ((wr->send_flags & IBV_SEND_INLINE) && len > qp->max_inline &&
	    wr->opcode != IBV_WR_ATOMIC_WRITE)
		return EINVAL;
	if (len > DROCE_MAX_MSG ||
	    (qp->type == IBV_QPT_UD && len > qp->max_ud_len))	/* UD: one packet */
		return EINVAL;
	if (qp->type == IBV_QPT_UD && wr->wr.ud.ah == NULL)
		return EINVAL;
	/* atomics: exactly 8 bytes, naturally aligned */
	if ((wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	    (len != 8 || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;
	/* ATOMIC WRITE: its 8 bytes (SGEs or inline), to an 8-aligned address (wr.rdma) */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE && (len != 8 || (wr->wr.rdma.remote_addr & 7)))
		return EINVAL;
	return 0;
}

/* What every send WQE holds of its WR (@len: its bytes), on the WQE's first line. */
static inline void
wqe_fill(const struct droce_rdev_qp *qp, struct droce_send_wqe *wqe, const struct ibv_send_wr *wr,
	 uint32_t len)
{
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	wqe->imm_data = wr->imm_data;
	wqe->length = len;
	wqe->signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	wqe->npkts = 0;
	wqe->inl = !!(wr->send_flags & IBV_SEND_INLINE);
}

/*
 * The usual WR checked and queued at once: an RC or UC SEND or RDMA WRITE
 * of one SGE, signaled or not, with no other flag (inline data, fence,
 * solicited event). Such a WR passes every check of droce_send_wr_check()
 * and is queued as droce_send_wr_enqueue() queues it: 0, or ENOMEM (the send
 * queue is full). -1: not such a WR; the caller takes their way.
 */
static inline int
post_send_usual(struct droce_rdev_qp *qp, const struct ibv_send_wr *wr)
{
	struct droce_send_wqe *wqe;

	if ((qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) ||
	    (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE) ||
	    (wr->send_flags & ~(unsigned int)IBV_SEND_SIGNALED) != 0 || wr->num_sge != 1 ||
	    qp->sq.max_sge < 1 || wr->sg_list[0].length > DROCE_MAX_MSG)
		return -1;
	wqe = droce_wq_take(&qp->sq);
	if (wqe == NULL)
		return ENOMEM;
	wqe_fill(qp, wqe, wr, wr->sg_list[0].length);
	if (wr->opcode == IBV_WR_RDMA_WRITE) {
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
	}
	wqe->num_sge = 1;
	wqe->sge[0] = wr->sg_list[0];
	droce_wq_post(&qp->sq, wqe);
	return 0;
}

/* Queue a checked WR: 0, or ENOMEM when the send queue is full. */
int
droce_send_wr_enqueue(struct droce_rdev_qp *qp, const struct ibv_send_wr *wr)
{
	struct droce_send_wqe *wqe;
	uint32_t len = 0;

	/* the application's posts, one at a time, are the only takers of slots */
	wqe = droce_wq_take(&qp->sq);
	if (wqe == NULL)
		return ENOMEM;
	if (wr->opcode != IBV_WR_BIND_MW && wr->opcode != IBV_WR_LOCAL_INV)
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
	wqe_fill(qp, wqe, wr, len);
	/* a SEND's WQE is its first line (struct droce_send_wqe): the others only as needed */
	if (qp->type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn & DROCE_QPN_MASK;
	if (qp->type == IBV_QPT_UD) {
		wqe->wr.ud.av = to_dah(wr->wr.ud.ah)->av;
		wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn & DROCE_QPN_MASK;
		wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
	} else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
	} else if (wr->opcode == IBV_WR_BIND_MW) {
		const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

		wqe->wr.bind.mw_handle = wr->bind_mw.mw->handle;
		wqe->wr.bind.rkey = wr->bind_mw.rkey;
		wqe->wr.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
		wqe->wr.bind.addr = bi->addr;
		wqe->wr.bind.length = bi->length;
		wqe->wr.bind.access = bi->mw_access_flags;
	} else if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM &&
		   wr->opcode != IBV_WR_SEND_WITH_INV && wr->opcode != IBV_WR_LOCAL_INV) {
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_SEND_WITH_INV)
		wqe->invalidate_rkey = wr->invalidate_rkey;
	if (wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV) {
		wqe->num_sge = 0;	/* nothing to send */
	} else if (wqe->inl) {
		uint32_t off = 0;

		/* IBV_SEND_INLINE: the buffer is the caller's again on return */
		for (int i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length == 0)	/* its address may be NULL */
				continue;
			memcpy(wqe->inline_data + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		wqe->num_sge = 0;
	} else {
		wqe->num_sge = wr->num_sge;
		sges_copy(wqe->sge, wr->sg_list, wr->num_sge);
	}
	droce_wq_post(&qp->sq, wqe);
	return 0;
}

/* IBA C10-29: sends are posted from RTS on (ERR: they flush). 0 or EINVAL. */
int
droce_sq_state_check(const struct droce_rdev_qp *qp)
{
	uint32_t st = droce_rdev_qp_state(qp);

	return st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR ? EINVAL : 0;
}

int
droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct droce_rdev_qp *qp = to_dqp(ibqp)->fp;
	int ret = 0;

	if (wr == NULL) {
		*bad = NULL;
		return EINVAL;
	}
	if (droce_sq_state_check(qp)) {
		*bad = wr;
		return EINVAL;
	}
	droce_wq_lock(&qp->sq);
	for (; wr != NULL; wr = wr->next) {
		ret = post_send_usual(qp, wr);
		if (ret < 0) {
			ret = droce_send_wr_check(qp, wr);
			if (ret == 0)
				ret = droce_send_wr_enqueue(qp, wr);
		}
		if (ret) {
			*bad = wr;
			break;
		}
	}
	droce_wq_unlock(&qp->sq);
	verbs_post_ring(qp);
	return ret;
}

static int
post_one_recv(struct droce_wq *wq, struct ibv_recv_wr *wr)
{
	struct droce_recv_wqe *wqe;
	uint64_t len = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > UINT32_MAX)
		return EINVAL;
	/*
	 * Posts, one at a time (post_lock or a thread domain), are the only
	 * takers of a receive queue's free WQEs and the only givers of posted
	 * ones: no compare-and-swap on those sides. The lcores that take posted
	 * WQEs and give them back (an SRQ's QPs may be on several) use the
	 * other sides, many at a time.
	 */
	wqe = droce_wq_take(wq);
	if (wqe == NULL)
		return ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->length = len;
	sges_copy(wqe->sge, wr->sg_list, wr->num_sge);
	droce_wq_post(wq, wqe);
	return 0;
}

/* @qp: the QP whose own receive queue @wq is, NULL for an SRQ's */
static int
post_recv_list(struct droce_rdev_qp *qp, struct droce_wq *wq, struct ibv_recv_wr *wr,
	       struct ibv_recv_wr **bad)
{
	int ret = 0;

	if (wr == NULL) {
		*bad = NULL;
		return EINVAL;
	}
	droce_wq_lock(wq);
	for (; wr != NULL; wr = wr->next) {
		ret = post_one_recv(wq, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	droce_wq_unlock(wq);
	/*
	 * A receive needs the engine only to flush it (IBA 10.7.3.1). The
	 * fence pairs with a modify to ERR, which rings after its store: either
	 * the state read here is ERR, or that doorbell's flush sees these WQEs.
	 */
	if (qp != NULL) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (droce_rdev_qp_state(qp) == IBV_QPS_ERR)
			droce_rdev_qp_doorbell(qp);
	}
	return ret;
}

int
droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct droce_rdev_qp *qp = to_dqp(ibqp)->fp;

	/*
	 * man ibv_post_recv: a QP on an SRQ takes receives only through it;
	 * XRC QPs have no receive queue (a target's receives are its SRQs')
	 */
	if (qp->srq != NULL || qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV ||
	    droce_rdev_qp_state(qp) == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	return post_recv_list(qp, &qp->rq, wr, bad);
}

int
droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct droce_rdev_srq *srq = to_dsrq(ibsrq)->fp;

	return post_recv_list(NULL, &srq->rq, wr, bad);
}

/*
 * Copy completions out of @cq, by the caller holding its poll lock:
 * the work completion into @wc and, for a tag-matching one, its tag into
 * @tm (if given), handing the tag's handle back to the driver. @n >= 0.
 */
static inline int
cq_take(struct droce_cq *cq, struct ibv_wc *wc, struct ibv_wc_tm_info *tm, int n)
{
	struct droce_rdev_cq *f = cq->fp;
	uint64_t c0 = f->consumed;
	/* acquire: the slots were written before they were counted */
	uint64_t held = __atomic_load_n(&f->produced, __ATOMIC_ACQUIRE) - c0;
	int got = held < (uint64_t)n ? (int)held : n;

	for (int i = 0; i < got; i++) {
		const struct droce_cqe *c = &f->slots[(c0 + (uint64_t)i) & f->mask];

		wc[i] = c->wc;
		if (tm != NULL)
			tm[i] = (struct ibv_wc_tm_info){
				.tag = c->tm.tag,
				.priv = c->tm.app_ctx,
			};
		if (unlikely(c->tm.release))
			cq->dev->ops->tm_release(cq->dev, c->tm.release);
	}
	/* release: the slots are read before the driver may write them again */
	__atomic_store_n(&f->consumed, c0 + (uint64_t)got, __ATOMIC_RELEASE);
	return got;
}

/* One completion for ibv_start_poll/ibv_next_poll: 1, or 0 when empty. */
int
droce_cq_take(struct droce_cq *cq, struct ibv_wc *wc, struct ibv_wc_tm_info *tm)
{
	return cq_take(cq, wc, tm, 1);
}

int
droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct droce_cq *cq = to_dcq(ibcq);

	if (n < 0)
		return -EINVAL;
	verbs_progress(cq->dev);
	if (droce_rdev_cq_empty(cq->fp))
		return 0;	/* no lock taken for nothing: pollers loop on an empty CQ */
	/* one poller at a time, sleeping (not spinning) behind a preempted one */
	if (!cq->single_threaded)
		pthread_mutex_lock(&cq->poll_lock);
	n = cq_take(cq, wc, NULL, n);
	if (!cq->single_threaded)
		pthread_mutex_unlock(&cq->poll_lock);
	return n;
}

int
droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct droce_cq *cq = to_dcq(ibcq);

	cq->dev->ops->cq_arm(cq->fp, solicited_only ? 2 : 1);
	return 0;
}

const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if ((unsigned int)status < RTE_DIM(s) && s[status])
		return s[status];
	return "unknown";
}
