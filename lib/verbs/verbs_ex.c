/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs behind the verbs.h inlines: ibv_create_cq_ex with
 * ibv_start_poll/next_poll/end_poll and the ibv_wc_read_* accessors,
 * ibv_create_qp_ex with send ops and the ibv_wr_* builder, ibv_create_srq_ex
 * with tag-matching SRQs and ibv_post_srq_ops (the engine side is
 * drivers/rdma/roce/roce_tm.c), and the XRC entry points (verbs_xrc.c).
 * What droce does not implement (completion timestamps, TSO, atomic write)
 * fails with EOPNOTSUPP at creation, never later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "verbs_loc.h"

/* --- Extended CQ --- */
#define CQ_EX_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO)

static int
cq_next(struct ibv_cq_ex *ibcq)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);

	if (droce_cq_take(cq, &cq->cur, &cq->cur_tm) == 0)
		return ENOENT;
	ibcq->status = cq->cur.status;
	ibcq->wr_id = cq->cur.wr_id;
	return 0;
}

/*
 * The current completion lives in the CQ: from ibv_start_poll to
 * ibv_end_poll, the CQ belongs to the thread that started (as in rdma-core's
 * providers), unless it was created single-threaded. A mutex, not a spin
 * lock: with more threads than CPUs a waiter sleeps instead of spinning on a
 * preempted holder.
 */
static int
cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	verbs_progress(cq->dev);
	if (droce_rdev_cq_empty(cq->fp))
		return ENOENT;
	if (!cq->single_threaded)
		pthread_mutex_lock(&cq->poll_lock);
	ret = cq_next(ibcq);
	/* ENOENT: the caller does not call ibv_end_poll */
	if (ret != 0 && !cq->single_threaded)
		pthread_mutex_unlock(&cq->poll_lock);
	return ret;
}

static void
cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);

	if (!cq->single_threaded)
		pthread_mutex_unlock(&cq->poll_lock);
}

#define CUR(ibcq) (&to_dcq_ex(ibcq)->cur)

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *c) { return CUR(c)->opcode; }
static uint32_t cq_read_vendor_err(struct ibv_cq_ex *c) { return CUR(c)->vendor_err; }
static uint32_t cq_read_byte_len(struct ibv_cq_ex *c) { return CUR(c)->byte_len; }
static __be32 cq_read_imm_data(struct ibv_cq_ex *c) { return CUR(c)->imm_data; }
static uint32_t cq_read_qp_num(struct ibv_cq_ex *c) { return CUR(c)->qp_num; }
static uint32_t cq_read_src_qp(struct ibv_cq_ex *c) { return CUR(c)->src_qp; }
static unsigned int cq_read_wc_flags(struct ibv_cq_ex *c) { return CUR(c)->wc_flags; }
static uint32_t cq_read_slid(struct ibv_cq_ex *c) { return CUR(c)->slid; }
static uint8_t cq_read_sl(struct ibv_cq_ex *c) { return CUR(c)->sl; }
static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *c) { return CUR(c)->dlid_path_bits; }

static void
cq_read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *info)
{
	*info = to_dcq_ex(c)->cur_tm;
}

static struct ibv_cq_ex *
create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	struct droce_pd *pdom = NULL;
	struct droce_cq *cq;
	struct ibv_cq_ex *x;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* a CQ on a parent domain: one that is a parent domain of this context */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		if (attr->parent_domain == NULL || attr->parent_domain->context != context ||
		    to_dpd(attr->parent_domain)->parent == NULL) {
			errno = EINVAL;
			return NULL;
		}
		pdom = to_dpd(attr->parent_domain);
	}
	/* overrun-ignoring CQs, timestamps, flow tags, VLANs */
	if (((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
	    (attr->wc_flags & ~(uint64_t)CQ_EX_WC_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = droce_cq_create(context, attr->cqe, attr->cq_context, attr->channel,
			     attr->comp_vector, pdom != NULL ? droce_pd_alloc(pdom) : NULL);
	if (cq == NULL)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	/* a thread domain's CQ is polled by one thread at a time too */
	cq->single_threaded = ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			       (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
			      (pdom != NULL && pdom->td != NULL);
	if (pdom != NULL) {
		cq->pdom = pdom;
		droce_pd_use(&pdom->ibpd, 1);
	}
	x = &cq->ibcq_ex;
	x->start_poll = cq_start_poll;
	x->next_poll = cq_next;
	x->end_poll = cq_end_poll;
	x->read_opcode = cq_read_opcode;
	x->read_vendor_err = cq_read_vendor_err;
	x->read_wc_flags = cq_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = cq_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = cq_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = cq_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = cq_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = cq_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = cq_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = cq_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_TM_INFO)
		x->read_tm_info = cq_read_tm_info;
	return x;
}

/* --- Extended QP: the ibv_wr_* builder --- */
#define SEND_OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define SEND_OPS_UC	(SEND_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
#define SEND_OPS_XRC	(SEND_OPS_UC | IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			 IBV_QP_EX_WITH_SEND_WITH_INV)
#define SEND_OPS_RC	(SEND_OPS_XRC | IBV_QP_EX_WITH_ATOMIC_WRITE)

/*
 * The WRs built between ibv_wr_start() and ibv_wr_complete(): at most a
 * send queue's worth, with their SGEs and inline data copied (the caller's
 * buffers and lists are its own again as each call returns). The first error
 * is kept and returned by ibv_wr_complete(), which then posts nothing.
 */
/* From ibv_wr_start to ibv_wr_complete/abort the thread holds the SQ's post_lock. */
struct droce_wr_batch {
	uint32_t cap;			/* WRs: the send queue size */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t inl_stride;		/* a WR's inline slot: max_inline, at least 8 (ATOMIC WRITE) */
	uint32_t n;			/* WRs built */
	int err;
	struct ibv_send_wr *cur;	/* the WR the wr_set_* calls apply to */
	struct ibv_send_wr *wr;		/* [cap] */
	struct ibv_sge *sge;		/* [cap * max_sge] */
	uint8_t *inl;			/* [cap * inl_stride] */
};


static void
batch_fail(struct droce_wr_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
	b->cur = NULL;
}

static const struct ibv_send_wr wr_zero;

static struct ibv_send_wr *
wr_new(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct droce_wr_batch *b = to_dqp_ex(qpx)->batch;
	struct ibv_send_wr *wr;

	if (b->n == b->cap) {
		batch_fail(b, ENOMEM);
		return NULL;
	}
	wr = &b->wr[b->n];
	/* a copy of zeros: GCC makes a 128-byte memset a slow-starting `rep stosq` */
	memcpy(wr, &wr_zero, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	wr->opcode = op;
	wr->sg_list = &b->sge[b->n * b->max_sge];
	b->n++;
	b->cur = wr;
	return wr;
}

static void
wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
	__be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void
wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void
wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void
wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void
wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
	  uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void
wr_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
wr_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/*
 * ibv_wr_atomic_write: @data's 8 bytes are copied now (the caller's buffer
 * is free on return, as for inline data), into the WR's inline slot, which
 * holds 8 bytes whatever max_inline_data.
 */
static void
wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *data)
{
	struct droce_wr_batch *b = to_dqp_ex(qpx)->batch;
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_ATOMIC_WRITE);
	uint8_t *dst;

	if (wr == NULL)
		return;
	dst = &b->inl[(size_t)(wr - b->wr) * b->inl_stride];
	memcpy(dst, data, 8);
	wr->wr.rdma.remote_addr = addr;
	wr->wr.rdma.rkey = rkey;
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = 8 };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

/* Type 2 windows (a type 1 one goes through ibv_bind_mw), as ibv_post_send's BIND_MW */
static void
wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_BIND_MW);

	if (wr == NULL)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *info;
}

static void
wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wr)
		wr->invalidate_rkey = invalidate_rkey;
}

static void
wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wr)
		wr->invalidate_rkey = invalidate_rkey;
}

/* TSO: refused at creation. */
static void
wr_unsupported(struct ibv_qp_ex *qpx)
{
	batch_fail(to_dqp_ex(qpx)->batch, EOPNOTSUPP);
}

static void
wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	RTE_SET_USED(hdr), RTE_SET_USED(hdr_sz), RTE_SET_USED(mss);
	wr_unsupported(qpx);
}


/* The current WR, or NULL (and the batch failed) when there is none. */
static struct ibv_send_wr *
wr_cur(struct droce_wr_batch *b)
{
	if (b->cur == NULL)
		batch_fail(b, b->err ? b->err : EINVAL);
	return b->cur;
}

static void
wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = wr_cur(to_dqp_ex(qpx)->batch);

	if (wr == NULL)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

/* The XRC SRQ the current WR goes to (ibv_post_send's qp_type.xrc.remote_srqn). */
static void
wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct ibv_send_wr *wr = wr_cur(to_dqp_ex(qpx)->batch);

	if (wr != NULL)
		wr->qp_type.xrc.remote_srqn = remote_srqn;
}

static void
wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct droce_wr_batch *b = to_dqp_ex(qpx)->batch;
	struct ibv_send_wr *wr = wr_cur(b);

	if (wr == NULL)
		return;
	if (num_sge > b->max_sge) {
		batch_fail(b, EINVAL);
		return;
	}
	if (num_sge > 0)	/* none: sg_list may be NULL */
		memcpy(wr->sg_list, sg_list, num_sge * sizeof(*sg_list));
	wr->num_sge = num_sge;
	wr->send_flags &= ~(unsigned int)IBV_SEND_INLINE;
}

static void
wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data is copied now; the WR carries it as one SGE over the copy. */
static void
wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf, const struct ibv_data_buf *bufs)
{
	struct droce_wr_batch *b = to_dqp_ex(qpx)->batch;
	struct ibv_send_wr *wr = wr_cur(b);
	uint8_t *dst;
	size_t len = 0;

	if (wr == NULL)
		return;
	dst = &b->inl[(size_t)(wr - b->wr) * b->inl_stride];
	for (size_t i = 0; i < num_buf; i++) {
		if (bufs[i].length > b->max_inline - len) {
			batch_fail(b, EINVAL);
			return;
		}
		if (bufs[i].length != 0)	/* its address may be NULL */
			memcpy(dst + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = len };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void
wr_start(struct ibv_qp_ex *qpx)
{
	struct droce_qp *qp = to_dqp_ex(qpx);
	struct droce_wr_batch *b = qp->batch;

	droce_wq_lock(&qp->fp->sq);
	b->n = 0;
	b->err = 0;
	b->cur = NULL;
}

static void
wr_abort(struct ibv_qp_ex *qpx)
{
	struct droce_qp *qp = to_dqp_ex(qpx);

	qp->batch->n = 0;
	droce_wq_unlock(&qp->fp->sq);
}

/*
 * All or nothing: every WR passes ibv_post_send's checks and fits in the
 * send queue, or none is posted and the first error is returned.
 */
static int
wr_complete(struct ibv_qp_ex *qpx)
{
	struct droce_rdev_qp *qp = to_dqp_ex(qpx)->fp;
	struct droce_wr_batch *b = to_dqp_ex(qpx)->batch;
	int ret = b->err;

	if (ret == 0 && b->n)
		ret = droce_sq_state_check(qp);
	for (uint32_t i = 0; ret == 0 && i < b->n; i++)
		ret = droce_send_wr_check(qp, &b->wr[i]);
	if (ret == 0 && droce_wq_room(&qp->sq) < b->n)
		ret = ENOMEM;
	for (uint32_t i = 0; ret == 0 && i < b->n; i++)
		ret = droce_send_wr_enqueue(qp, &b->wr[i]);
	b->n = 0;
	droce_wq_unlock(&qp->sq);
	verbs_post_ring(qp);
	return ret;
}

static int
batch_alloc(struct droce_qp *qp)
{
	uint32_t cap = qp->fp->sq.size, max_sge = qp->fp->sq.max_sge;
	uint32_t max_inline = qp->fp->max_inline, stride = RTE_MAX(max_inline, 8u);
	size_t sz = sizeof(struct droce_wr_batch) + cap * sizeof(struct ibv_send_wr) +
		    (size_t)cap * max_sge * sizeof(struct ibv_sge) + (size_t)cap * stride;
	struct droce_wr_batch *b = calloc(1, sz);

	if (b == NULL)
		return -ENOMEM;
	b->cap = cap;
	b->max_sge = max_sge;
	b->max_inline = max_inline;
	b->inl_stride = stride;
	b->wr = (struct ibv_send_wr *)(b + 1);
	b->sge = (struct ibv_sge *)(b->wr + cap);
	b->inl = (uint8_t *)(b->sge + (size_t)cap * max_sge);
	qp->batch = b;
	return 0;
}

void
droce_wr_batch_free(struct droce_qp *qp)
{
	free(qp->batch);
	qp->batch = NULL;
}

static void
qp_ex_init(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = wr_cmp_swp;
	x->wr_atomic_fetch_add = wr_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = wr_atomic_write;
}

static uint64_t
send_ops_supported(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC: return SEND_OPS_RC;
	case IBV_QPT_XRC_SEND: return SEND_OPS_XRC;
	case IBV_QPT_UC: return SEND_OPS_UC;
	case IBV_QPT_UD: return SEND_OPS_UD;
	default: return 0;
	}
}

static struct ibv_qp *
create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;
	struct droce_qp *qp;

	if (mask & ~(uint32_t)(IBV_QP_INIT_ATTR_SEND_OPS_FLAGS * 2 - 1)) {
		errno = EINVAL;
		return NULL;
	}
	/* an XRC target has a domain and no PD */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return droce_create_xrc_recv_qp(context, attr);
	if (!(mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * TSO, RSS, creation flags, send ops droce lacks. A UD QP may ask for
	 * BLOCK_SELF_MCAST_LB: droce never loops a multicast send back to the
	 * device that sent it, so it holds already.
	 */
	if ((mask & (IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
		     IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)) ||
	    ((mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     (attr->create_flags & ~(attr->qp_type == IBV_QPT_UD ?
				     (uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB : 0u))) ||
	    ((mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~send_ops_supported(attr->qp_type)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* ibv_qp_init_attr_ex begins with the fields of ibv_qp_init_attr */
	qp = droce_qp_create(attr->pd, (struct ibv_qp_init_attr *)attr,
			     mask & IBV_QP_INIT_ATTR_CREATE_FLAGS ? attr->create_flags : 0);
	if (qp == NULL)
		return NULL;
	if (mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if (batch_alloc(qp) != 0) {
			ibv_destroy_qp(&qp->ibqp);
			errno = ENOMEM;
			return NULL;
		}
		qp->ibqp_ex.comp_mask = 0;
		qp_ex_init(&qp->ibqp_ex);
	}
	return &qp->ibqp;
}

/* rdma-core: NULL unless the QP was created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. */
struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct droce_qp *qp = to_dqp(ibqp);

	if (qp->batch == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &qp->ibqp_ex;
}

/* --- Extended SRQ, and the tag-matching SRQ --- */
/*
 * A TM SRQ: a basic SRQ (its WQEs take unexpected messages) plus the tag
 * list, which the driver applies list operations to even before a QP uses it.
 */
static struct ibv_srq *
create_tm_srq(struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	struct droce_srq *srq;
	struct ibv_srq *ibsrq;
	int ret;

	if ((attr->comp_mask & need) != need || attr->srq_type != IBV_SRQT_TM || attr->cq == NULL ||
	    attr->tm_cap.max_num_tags < 1 || attr->tm_cap.max_num_tags > DROCE_TM_MAX_TAGS ||
	    attr->tm_cap.max_ops < 1 || attr->tm_cap.max_ops > DROCE_TM_MAX_OPS ||
	    to_dcq(attr->cq)->dev != to_dpd(attr->pd)->dev) {
		errno = EINVAL;
		return NULL;
	}
	ibsrq = ibv_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
	if (ibsrq == NULL)
		return NULL;
	srq = to_dsrq(ibsrq);
	ret = srq->fp->dev->ops->srq_tm_enable(srq->fp, to_dcq(attr->cq)->fp,
					       attr->tm_cap.max_num_tags, attr->tm_cap.max_ops);
	if (ret) {
		ibv_destroy_srq(ibsrq);
		errno = -ret;
		return NULL;
	}
	return ibsrq;
}

static struct ibv_srq *
create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;

	RTE_SET_USED(context);
	if ((mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_RESERVED - 1)) ||
	    !(mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if ((mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_TM)
		return create_tm_srq(attr);
	if ((mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_XRC)
		return droce_create_xrc_srq(attr);
	if ((mask & IBV_SRQ_INIT_ATTR_TM) ||
	    ((mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EINVAL;
		return NULL;
	}
	/* ibv_srq_init_attr_ex begins with the fields of ibv_srq_init_attr */
	return ibv_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
}

/* One list operation: checked, given a handle (ADD) and queued to the engine. */
static int
post_one_op(struct droce_rdev_srq *srq, struct ibv_ops_wr *op)
{
	struct droce_tm_op o = {
		.wr_id = op->wr_id,
		.opcode = op->opcode,
		.flags = op->flags,
		.unexpected_cnt = op->tm.unexpected_cnt,
	};
	void *h = NULL;

	if ((unsigned int)op->flags & ~(unsigned int)(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC))
		return EINVAL;
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		if (op->tm.add.num_sge < 0 || op->tm.add.num_sge > 1 ||
		    (op->tm.add.num_sge && op->tm.add.sg_list == NULL))
			return EINVAL;
		if (rte_ring_dequeue(srq->tm_free, &h) != 0)
			return ENOMEM;		/* max_num_tags tags are posted */
		o.handle = (uintptr_t)h;
		o.recv_wr_id = op->tm.add.recv_wr_id;
		o.tag = op->tm.add.tag;
		o.mask = op->tm.add.mask;
		o.num_sge = op->tm.add.num_sge;
		if (o.num_sge)
			o.sge = op->tm.add.sg_list[0];
		op->tm.handle = o.handle;
		break;
	case IBV_WR_TAG_DEL:
		if (op->tm.handle >= srq->tm_max_tags)
			return EINVAL;
		o.handle = op->tm.handle;
		break;
	case IBV_WR_TAG_SYNC:
		break;
	default:
		return EINVAL;
	}
	if (rte_ring_enqueue_elem(srq->tm_ops, &o, sizeof(o)) != 0) {
		/* max_ops operations are in flight */
		if (op->opcode == IBV_WR_TAG_ADD)
			rte_ring_enqueue(srq->tm_free, h);
		return ENOMEM;
	}
	return 0;
}

/* The list stops at the first operation that fails; *bad_op names it. */
static int
post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)
{
	struct droce_rdev_srq *srq = to_dsrq(ibsrq)->fp;
	int ret = 0;

	if (srq->tm_ops == NULL || op == NULL) {
		*bad_op = op;
		return EINVAL;		/* not a tag-matching SRQ */
	}
	droce_wq_lock(&srq->rq);
	for (; op != NULL; op = op->next) {
		ret = post_one_op(srq, op);
		if (ret) {
			*bad_op = op;
			break;
		}
	}
	droce_wq_unlock(&srq->rq);
	verbs_progress(srq->dev);
	return ret;
}

void
droce_ex_ops_set(struct verbs_context *vctx)
{
	vctx->open_xrcd = droce_open_xrcd;
	vctx->close_xrcd = droce_close_xrcd;
	vctx->get_srq_num = droce_get_srq_num;
	vctx->open_qp = droce_open_qp;
	vctx->create_cq_ex = create_cq_ex;
	vctx->create_qp_ex = create_qp_ex;
	vctx->create_srq_ex = create_srq_ex;
	vctx->post_srq_ops = post_srq_ops;
	droce_domain_ops_set(vctx);
}
