/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs objects: PD, MR, CQ, SRQ, QP and AH. The control path: checks a
 * verb's arguments against its man page, then has the driver make the
 * change through its ops (droce_rdev_pmd.h).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "verbs_loc.h"
#include "verbs_qp_state.h"

#define DEV_OF(ctx) (to_dctx(ctx)->rdev)

/* --- PD --- */
struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct droce_rdev *dev = DEV_OF(context);
	struct droce_pd *pd = calloc(1, sizeof(*pd));
	uint32_t pdn;
	int ret;

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = dev->ops->pd_alloc(dev, &pd->pd, &pdn);
	if (ret) {
		free(pd);
		errno = -ret;
		return NULL;
	}
	pd->dev = dev;
	pd->ibpd.context = context;
	pd->ibpd.handle = pdn;
	droce_import_pd_add(pd);
	return &pd->ibpd;
}

int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = to_dpd(ibpd);

	/*
	 * as the kernel (uverbs_free_pd): EBUSY while an MR, QP, SRQ, AH or
	 * parent domain uses it
	 */
	if (__atomic_load_n(&(pd->origin ? pd->origin : pd)->users, __ATOMIC_RELAXED) != 0)
		return EBUSY;
	if (pd->parent != NULL) {
		droce_parent_domain_free(pd);
		return 0;
	}
	/*
	 * an imported handle: it goes, the PD stays its creator's (no kernel
	 * here to keep a PD once its creator's handle is gone)
	 */
	if (pd->origin != NULL) {
		droce_import_pd_put(pd);
		return 0;
	}
	droce_import_pd_del(pd);
	pd->dev->ops->pd_free(pd->pd);
	free(pd);
	return 0;
}

/* --- MR --- */
/* HUGETLB only says how the range is backed: the engine does not care. */
#define MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		      IBV_ACCESS_MW_BIND | IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING | \
		      IBV_ACCESS_ON_DEMAND)
/* Known flags of what droce does not have yet: zero-based MRs. */
#define MR_ACCESS_NOTSUP IBV_ACCESS_ZERO_BASED

/*
 * 0, EINVAL, or EOPNOTSUPP for a valid request droce cannot serve (as the
 * kernel's ib_check_mr_access answers ON_DEMAND without ODP): checked before
 * the range, since an implicit ODP MR has no address.
 */
static int
mr_access_check(unsigned int access)
{
	if ((access & ~(MR_ACCESS_OK | MR_ACCESS_NOTSUP)) ||
	    /* IBA 10.6.3.1: remote write or atomic needs local write */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)))
		return EINVAL;
	return access & MR_ACCESS_NOTSUP ? EOPNOTSUPP : 0;
}

/* The implicit ODP MR: the whole address space (man ibv_reg_mr). */
static bool
mr_implicit(const void *addr, size_t length, unsigned int access)
{
	return addr == NULL && length == SIZE_MAX && (access & IBV_ACCESS_ON_DEMAND);
}

static bool
mr_range_ok(const void *addr, size_t length, uint64_t iova)
{
	return !(addr == NULL && length) && length <= DROCE_MAX_MR_SIZE &&
		/* a range past the end of the address space (the engine would wrap) */
		(uintptr_t)addr + length >= (uintptr_t)addr && iova + length >= iova;
}

static struct ibv_mr *
reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_mr *mr;
	uint32_t key;
	int ret;

	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	ret = mr_access_check(access);
	if (ret == 0 && !mr_implicit(addr, length, access) && !mr_range_ok(addr, length, iova))
		ret = EINVAL;
	if (ret) {
		errno = ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pd->dev->ops->mr_reg(pd->pd, addr, length, iova, access, &mr->mr, &key);
	if (ret) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	mr->dev = pd->dev;
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	droce_pd_use(ibpd, 1);
	droce_import_mr_add(mr);
	return &mr->ibmr;
}

/*
 * man ibv_advise_mr: prefetch a range of ODP MRs (the advise_mr op). ENOTSUP
 * for an advice droce does not know, EINVAL for flags, no SGE, or an MR that
 * is not ODP; EFAULT for a bad lkey or range, EPERM for PREFETCH_WRITE on
 * an MR without local write. Without IBV_ADVISE_MR_FLAG_FLUSH a range that
 * cannot be fetched is not reported.
 */
int
droce_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice, uint32_t flags,
		struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct droce_pd *pd = to_dpd(ibpd);

	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return ENOTSUP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || sg_list == NULL || num_sge == 0)
		return EINVAL;
	return -pd->dev->ops->mr_advise(pd->pd, sg_list, num_sge,
					advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
					flags & IBV_ADVISE_MR_FLAG_FLUSH);
}

#undef ibv_reg_mr
struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

/* EINVAL while memory windows are bound to it, as the kernel's rxe answers */
int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct droce_mr *mr = to_dmr(ibmr);
	int ret;

	if (mr->imported) {	/* the handle goes, the MR stays its creator's */
		free(mr);
		return 0;
	}
	ret = -mr->dev->ops->mr_dereg(mr->mr);
	if (ret)
		return ret;
	droce_import_mr_del(mr);
	droce_pd_use(ibmr->pd, -1);
	free(mr);
	return 0;
}

/*
 * man ibv_rereg_mr: an IBV_REREG_MR_ERR_* code, errno set. The checks
 * libibverbs makes give ERR_INPUT; those its provider and the kernel make
 * (rxe: ib_uverbs_rereg_mr, rxe_rereg_user_mr) give ERR_CMD, and so does a
 * failure of the driver, which then leaves the MR as it was: it stays usable
 * (the man page allows no more than "shouldn't be used"). The keys stay.
 * WRs posted before the call and still outstanding are the application's
 * to avoid, as with ibv_dereg_mr; those the engine had already started keep
 * the old translation of their local buffers, and every packet a peer sends
 * afterwards is checked against the new attributes (doc/guides/user.rst).
 */
int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd, void *addr, size_t length,
	     int access)
{
	struct droce_mr *mr = to_dmr(ibmr);
	struct droce_pd *pd = NULL;
	int ret;

	/* libibverbs' own checks (verbs.c ibv_rereg_mr) */
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		/* a PD of this context (the kernel looks it up in the caller's file) */
		if (ibpd == NULL || ibpd->context != ibmr->context) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_CMD;
		}
		pd = to_dpd(ibpd);
	}
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	ret = flags & IBV_REREG_MR_CHANGE_ACCESS ? mr_access_check(access) : 0;
	if (ret == 0 && (flags == 0 || ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
					!mr_range_ok(addr, length, (uintptr_t)addr))))
		ret = EINVAL;
	/* the implicit MR stays on demand, or the whole address space would be unguarded */
	if (ret == 0 && mr_implicit(ibmr->addr, ibmr->length, IBV_ACCESS_ON_DEMAND) &&
	    (flags & IBV_REREG_MR_CHANGE_ACCESS) && !(access & IBV_ACCESS_ON_DEMAND) &&
	    !(flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		ret = EINVAL;
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	/* a new translation is at its own address (rdma-core passes addr as hca_va) */
	ret = mr->dev->ops->mr_rereg(&mr->mr, flags, pd ? pd->pd : NULL, addr, length,
				     (uintptr_t)addr, access);
	if (ret) {
		errno = -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		droce_pd_use(ibpd, 1);
		droce_pd_use(ibmr->pd, -1);
		ibmr->pd = ibpd;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	return 0;
}

/* --- MW: the context ops behind the ibv_*_mw inlines of verbs.h --- */
struct ibv_mw *
droce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_mw *mw;
	uint32_t rkey, handle;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pd->dev->ops->mw_alloc(pd->pd, type, &mw->mw, &rkey, &handle);
	if (ret) {
		free(mw);
		errno = -ret;
		return NULL;
	}
	mw->dev = pd->dev;
	mw->ibmw.context = ibpd->context;
	mw->ibmw.pd = ibpd;
	mw->ibmw.rkey = rkey;
	mw->ibmw.handle = handle;
	mw->ibmw.type = type;
	droce_pd_use(ibpd, 1);
	return &mw->ibmw;
}

/* A bound window too: its binding goes with it (as rxe). */
int
droce_dealloc_mw(struct ibv_mw *ibmw)
{
	struct droce_mw *mw = to_dmw(ibmw);

	mw->dev->ops->mw_dealloc(mw->mw);
	droce_pd_use(ibmw->pd, -1);
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw (type 1; the verbs.h inline checked the type, an unbind's
 * empty range and the MR's PD): a BIND_MW WR posted on @ibqp with the next
 * key (ibv_inc_rkey), which mw->rkey takes at once, as rdma-core's rxe
 * provider does. The bind happens in send-queue order; if its completion is
 * an error, the window kept its old R_Key and binding, which the
 * application puts back in mw->rkey (man ibv_bind_mw, NOTES).
 */
int
droce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad;
	int ret;

	wr.bind_mw.mw = ibmw;
	wr.bind_mw.rkey = ibv_inc_rkey(ibmw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = droce_post_send(ibqp, &wr, &bad);
	if (ret == 0)
		ibmw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* --- CQ (completion channels: verbs_event.c) --- */
/* ibv_create_cq and the create_cq_ex op: NULL with errno set on failure. */
struct droce_cq *
droce_cq_create(struct ibv_context *context, int cqe, void *cq_context,
		struct ibv_comp_channel *channel, int comp_vector,
		const struct droce_rdev_alloc *alloc)
{
	struct droce_rdev *dev = DEV_OF(context);
	struct droce_cq *cq;
	int ret;

	if (cqe < 1 || cqe > DROCE_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = dev->ops->cq_create(dev, cqe, channel != NULL, &cq->ibcq, alloc, &cq->fp);
	if (ret) {
		free(cq);
		errno = -ret;
		return NULL;
	}
	/*
	 * Any number of threads may poll one CQ (ibv_alloc_td(3)); they take
	 * poll_lock (or the CQ was created single-threaded), so its slots have
	 * one consumer at a time.
	 */
	pthread_mutex_init(&cq->poll_lock, NULL);
	cq->dev = dev;
	cq->chan = channel ? container_of(channel, struct droce_comp_channel, ch) : NULL;
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.cqe = cqe;
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	if (channel)
		__atomic_fetch_add(&channel->refcnt, 1, __ATOMIC_RELAXED);
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct droce_cq *cq = droce_cq_create(context, cqe, cq_context, channel, comp_vector, NULL);

	return cq ? &cq->ibcq : NULL;
}

/*
 * man ibv_resize_cq: 0 or an errno value. The CQ gets exactly @cqe entries,
 * shrinking too; EINVAL when it holds more completions than that (as rxe),
 * the CQ then unchanged. Pollers wait meanwhile; an engine keeps completing.
 * For a CQ from ibv_create_cq_ex too (ibv_cq_ex_to_cq).
 */
int
ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct droce_cq *cq = to_dcq(ibcq);
	int ret;

	if (cqe < 1 || cqe > DROCE_MAX_CQE)
		return EINVAL;
	/* the slots are replaced: no poller may be taking from them */
	if (!cq->single_threaded)
		pthread_mutex_lock(&cq->poll_lock);
	ret = -cq->dev->ops->cq_resize(cq->fp, cqe);
	if (ret == 0)
		ibcq->cqe = cqe;
	if (!cq->single_threaded)
		pthread_mutex_unlock(&cq->poll_lock);
	return ret;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct droce_cq *cq = to_dcq(ibcq);
	int ret;

	/* EBUSY while a QP or a tag-matching SRQ still completes into it */
	ret = cq->dev->ops->cq_destroy(cq->fp);
	if (ret)
		return -ret;
	if (ibcq->channel)
		__atomic_fetch_sub(&ibcq->channel->refcnt, 1, __ATOMIC_RELAXED);
	if (cq->pdom != NULL)
		droce_pd_use(&cq->pdom->ibpd, -1);
	pthread_mutex_destroy(&cq->poll_lock);
	free(cq);
	return 0;
}

/* --- SRQ --- */
struct ibv_srq *
ibv_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *attr)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_srq *srq;
	int ret;

	if (attr->attr.max_wr < 1 || attr->attr.max_wr > DROCE_MAX_SRQ_WR ||
	    attr->attr.max_sge > DROCE_MAX_SGE || attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pd->dev->ops->srq_create(pd->pd, attr->attr.max_wr, attr->attr.max_sge,
				       &srq->ibsrq, &srq->fp);
	if (ret) {
		free(srq);
		errno = -ret;
		return NULL;
	}
	srq->ibsrq.context = ibpd->context;
	srq->ibsrq.pd = ibpd;
	srq->ibsrq.srq_context = attr->srq_context;
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	/* man ibv_create_srq: the limit given at creation is not armed */
	attr->attr.max_sge = srq->fp->rq.max_sge;
	droce_pd_use(ibpd, 1);
	return &srq->ibsrq;
}

int
ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;	/* no resize */
	if (mask & IBV_SRQ_LIMIT)
		return -srq->fp->dev->ops->srq_limit_set(srq->fp, attr->srq_limit);
	return 0;
}

int
ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	attr->max_wr = srq->fp->rq.size;
	attr->max_sge = srq->fp->rq.max_sge;
	attr->srq_limit = srq->fp->dev->ops->srq_limit_get(srq->fp);
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct droce_srq *srq = to_dsrq(ibsrq);
	int ret;

	/* EBUSY while a QP uses it */
	ret = srq->fp->dev->ops->srq_destroy(srq->fp);
	if (ret)
		return -ret;
	if (srq->xrcd != NULL)
		droce_xrc_srq_destroyed(srq);
	droce_pd_use(ibsrq->pd, -1);
	free(srq);
	return 0;
}

/* --- AH --- */
struct ibv_ah *
ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_ah *ah = calloc(1, sizeof(*ah));
	int ret;

	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* EINVAL unless a RoCEv2 IPv4 GID, ENOMEM past the device's AHs */
	ret = pd->dev->ops->ah_create(pd->pd, attr, &ah->av);
	if (ret) {
		free(ah);
		errno = -ret;
		return NULL;
	}
	ah->ibah.context = ibpd->context;
	ah->ibah.pd = ibpd;
	droce_pd_use(ibpd, 1);
	return &ah->ibah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct droce_rdev *dev = to_dpd(ah->pd)->dev;

	dev->ops->ah_destroy(dev);
	droce_pd_use(ah->pd, -1);
	free(to_dah(ah));
	return 0;
}

/* --- QP --- */
/*
 * @xrcd: an XRC_RECV QP's domain (@ibpd NULL): it has no PD, no CQs and no
 * queues. An XRC_SEND QP has a send queue only: no receive CQ, no SRQ.
 */
static struct droce_qp *
qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr, bool gsi, uint32_t create_flags,
	  struct droce_xrcd *xrcd)
{
	struct droce_pd *pd = ibpd ? to_dpd(ibpd) : NULL;
	struct droce_rdev *dev = xrcd ? xrcd->dom->dev : pd->dev;
	bool xrc_recv = attr->qp_type == IBV_QPT_XRC_RECV;
	bool xrc_send = attr->qp_type == IBV_QPT_XRC_SEND;
	struct ibv_qp_cap *cap = &attr->cap;
	struct droce_rdev_qp_init init;
	struct droce_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && !xrc_send && !xrc_recv) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (xrc_recv) {
		if (xrcd == NULL) {	/* ibv_create_qp_ex with IBV_QP_INIT_ATTR_XRCD only */
			errno = EINVAL;
			return NULL;
		}
		memset(cap, 0, sizeof(*cap));
	} else if (attr->send_cq == NULL || (attr->recv_cq == NULL && !xrc_send) ||
		   (xrc_send && attr->srq != NULL) ||
		   cap->max_send_wr > DROCE_MAX_QP_WR || cap->max_send_sge > DROCE_MAX_SGE ||
		   cap->max_inline_data > DROCE_MAX_INLINE ||
		   (attr->srq == NULL && !xrc_send && (cap->max_recv_wr > DROCE_MAX_QP_WR ||
						       cap->max_recv_sge > DROCE_MAX_SGE))) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	init = (struct droce_rdev_qp_init){
		.type = attr->qp_type,
		.send_cq = xrc_recv ? NULL : to_dcq(attr->send_cq)->fp,
		.recv_cq = xrc_recv || attr->recv_cq == NULL ? NULL : to_dcq(attr->recv_cq)->fp,
		.srq = xrc_recv || attr->srq == NULL ? NULL : to_dsrq(attr->srq)->fp,
		.xrcd = xrcd ? xrcd->dom->fp : NULL,
		.cap = *cap,
		.sq_sig_all = attr->sq_sig_all,
		.gsi = gsi,
		.mc_noloop = create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
		.alloc = pd ? droce_pd_alloc(pd) : NULL,
		.single_threaded = pd != NULL && pd->td != NULL,
		.user = &qp->ibqp,
	};
	/* EINVAL for a tag-matching SRQ under a QP that is not RC; EBUSY: a second QP1 */
	ret = dev->ops->qp_create(pd ? pd->pd : NULL, &init, &qp->fp);
	if (ret) {
		free(qp);
		errno = -ret;
		return NULL;
	}
	*cap = init.cap;
	pthread_mutex_init(&qp->modify_lock, NULL);
	qp->ibqp.context = xrcd ? xrcd->ibxrcd.context : ibpd->context;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.pd = ibpd;
	qp->ibqp.send_cq = xrc_recv ? NULL : attr->send_cq;
	qp->ibqp.recv_cq = xrc_recv || xrc_send ? NULL : attr->recv_cq;
	qp->ibqp.srq = xrc_recv ? NULL : attr->srq;
	qp->ibqp.handle = qp->fp->qpn;
	qp->ibqp.qp_num = qp->fp->qpn;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	if (ibpd != NULL)
		droce_pd_use(ibpd, 1);
	return qp;
}

/*
 * ibv_create_qp and the create_qp_ex op (@create_flags checked there): NULL
 * with errno set on failure.
 */
struct droce_qp *
droce_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr, uint32_t create_flags)
{
	return qp_create(ibpd, attr, false, create_flags, NULL);
}

/* An XRC_RECV QP of @xrcd's domain (verbs_xrc.c shares it): NULL with errno set. */
struct droce_qp *
droce_xrc_recv_qp_create(struct droce_xrcd *xrcd, struct ibv_qp_init_attr *attr)
{
	return qp_create(NULL, attr, false, 0, xrcd);
}

/*
 * The device's QP1 (the GSI QP, QPN 1), for the connection manager's MADs:
 * a UD QP in every other respect, one per device (EBUSY). NULL with errno
 * set on failure.
 */
struct ibv_qp *
droce_gsi_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct droce_qp *qp;

	if (attr->qp_type != IBV_QPT_UD || attr->srq != NULL) {
		errno = EINVAL;
		return NULL;
	}
	qp = qp_create(ibpd, attr, true, 0, NULL);
	return qp ? &qp->ibqp : NULL;
}

/* DROCE_PRIVATE_1 (droce_private.h) */
int
droce_qp_send_flush(struct ibv_qp *ibqp, unsigned int ms)
{
	struct droce_rdev_qp *fp;
	uint64_t end;

	if (ibqp == NULL)
		return EINVAL;
	fp = to_dqp(ibqp)->fp;
	end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * ms;
	for (unsigned int i = 0; droce_wq_pending(&fp->sq) != 0; i++) {
		droce_rdev_progress(fp->dev);
		if (i < 64)
			continue;
		/* an iteration another thread or process holds: let it run (fewer CPUs than threads) */
		if (rte_get_timer_cycles() > end)
			return ETIMEDOUT;
		sched_yield();
	}
	/* the iteration that took the last one has ended: its frames are with the port */
	fp->dev->ops->quiesce(fp->dev);
	return 0;
}

/*
 * A QP going to RESET or destroyed loses the completions its CQs still
 * hold (the driver purges them, as mlx5 does): their pollers wait meanwhile.
 * Both CQs' locks, in address order; none for a single-threaded CQ.
 */
static void
qp_cqs_hold(struct ibv_qp *ibqp, bool lock)
{
	struct droce_cq *c[2] = {
		ibqp->send_cq ? to_dcq(ibqp->send_cq) : NULL,
		ibqp->recv_cq ? to_dcq(ibqp->recv_cq) : NULL,
	};

	if (c[0] == c[1])
		c[1] = NULL;
	if (c[0] != NULL && c[1] != NULL && (uintptr_t)c[0] > (uintptr_t)c[1]) {
		struct droce_cq *t = c[0];

		c[0] = c[1];
		c[1] = t;
	}
	for (int i = 0; i < 2; i++) {
		struct droce_cq *cq = c[lock ? i : 1 - i];

		if (cq == NULL || cq->single_threaded)
			continue;
		if (lock)
			pthread_mutex_lock(&cq->poll_lock);
		else
			pthread_mutex_unlock(&cq->poll_lock);
	}
}

int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct droce_qp *qp = to_dqp(ibqp);
	struct droce_rdev_qp *fp = qp->fp;
	enum ibv_qp_state cur, next;
	int ret;

	pthread_mutex_lock(&qp->modify_lock);
	cur = droce_rdev_qp_state(fp);
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = EINVAL;
		goto out;
	}
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	ret = -droce_qp_modify_check(fp->type, cur, next, mask);
	if (ret == 0)
		ret = -droce_qp_attr_values_check(fp->type, attr, mask, 1, DROCE_PKEY_TBL_LEN,
						  DROCE_MAX_RD_ATOMIC, DROCE_MAX_RD_ATOMIC);
	/* EINVAL for an address that is not a RoCEv2 IPv4 GID */
	if (ret == 0) {
		if (next == IBV_QPS_RESET)
			qp_cqs_hold(ibqp, true);
		ret = -fp->dev->ops->qp_modify(fp, attr, mask);
		if (next == IBV_QPS_RESET)
			qp_cqs_hold(ibqp, false);
	}
	if (ret == 0)
		ibqp->state = next;
out:
	pthread_mutex_unlock(&qp->modify_lock);
	return ret;
}

int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
	     struct ibv_qp_init_attr *init)
{
	struct droce_qp *qp = to_dqp(ibqp);

	RTE_SET_USED(mask);	/* every attribute is returned */
	qp->fp->dev->ops->qp_query(qp->fp, attr);
	ibqp->state = attr->qp_state;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = attr->cap;
		init->qp_type = qp->fp->type;
		init->sq_sig_all = qp->fp->sq_sig_all;
	}
	return 0;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct droce_qp *qp = droce_qp_create(ibpd, attr, 0);

	return qp ? &qp->ibqp : NULL;
}

/* The facade's QP object goes (the driver's is gone, or another handle holds it). */
void
droce_qp_free(struct droce_qp *qp)
{
	droce_wr_batch_free(qp);
	pthread_mutex_destroy(&qp->modify_lock);
	free(qp);
}

int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct droce_qp *qp = to_dqp(ibqp);

	/* an XRC_RECV QP goes with its last handle (ibv_open_qp) */
	if (qp->xqp != NULL) {
		droce_xrc_qp_destroy(qp);
		return 0;
	}
	qp_cqs_hold(ibqp, true);
	qp->fp->dev->ops->qp_destroy(qp->fp);
	qp_cqs_hold(ibqp, false);
	droce_pd_use(ibqp->pd, -1);
	droce_qp_free(qp);
	return 0;
}

/*
 * man ibv_attach_mcast: 0 or the value of errno. The kernel's checks
 * (ib_attach_mcast): EINVAL for a QP that is not UD or a GID that is not
 * multicast (ff00::/8, or IPv4-mapped 224.0.0.0/4); the LID means nothing on
 * RoCE. The driver carries RoCEv2 over IPv4 only: an IPv6 group is EINVAL
 * too. Attaching twice is not an error; ENOMEM past max_mcast_grp or
 * max_mcast_qp_attach.
 */
static int
mcast_check(struct ibv_qp *ibqp, const union ibv_gid *gid)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (ibqp == NULL || gid == NULL || to_dqp(ibqp)->fp->type != IBV_QPT_UD)
		return EINVAL;
	if (gid->raw[0] == 0xff)
		return 0;
	if (memcmp(gid->raw, v4mapped, sizeof(v4mapped)) == 0 && (gid->raw[12] >> 4) == 0xe)
		return 0;
	return EINVAL;
}

int
ibv_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	int ret = mcast_check(ibqp, gid);

	RTE_SET_USED(lid);
	if (ret == 0) {
		struct droce_rdev_qp *fp = to_dqp(ibqp)->fp;

		ret = -fp->dev->ops->mcast_attach(fp, gid);
	}
	if (ret)
		errno = ret;
	return ret;
}

/* man ibv_detach_mcast: 0 or the value of errno; EINVAL if @ibqp is not attached to @gid. */
int
ibv_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	int ret = mcast_check(ibqp, gid);

	RTE_SET_USED(lid);
	if (ret == 0) {
		struct droce_rdev_qp *fp = to_dqp(ibqp)->fp;

		ret = -fp->dev->ops->mcast_detach(fp, gid);
	}
	if (ret)
		errno = ret;
	return ret;
}
