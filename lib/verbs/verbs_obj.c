/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs objects: PD, MR, CQ, SRQ, QP and AH. Control
 * path: validates fully, takes the device lock, and publishes objects to the
 * engine with release stores; teardown waits for the engine to quiesce.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "verbs_loc.h"
#include "verbs_qp_state.h"

#define DEV_OF(ctx) (to_dctx(ctx)->rdev)

/* --- PD --- */
struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct roce_dev *dev = DEV_OF(context);
	struct roce_pd *pd;

	pthread_mutex_lock(&dev->lock);
	if (dev->nb_pd >= DROCE_MAX_PD) {
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	dev->nb_pd++;
	pd->pdn = ++dev->pdn_next;
	pthread_mutex_unlock(&dev->lock);
	pd->dev = dev;
	pd->ibpd.context = context;
	pd->ibpd.handle = pd->pdn;
	return &pd->ibpd;
}

int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct roce_pd *pd = to_roce_pd(ibpd);

	pthread_mutex_lock(&pd->dev->lock);
	pd->dev->nb_pd--;
	pthread_mutex_unlock(&pd->dev->lock);
	free(pd);
	return 0;
}

/* --- MR --- */
#define MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		      IBV_ACCESS_RELAXED_ORDERING)

static struct ibv_mr *
reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct roce_pd *pd = to_roce_pd(ibpd);
	struct roce_dev *dev = pd->dev;
	struct roce_mr *mr;
	uint32_t idx;

	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	if ((access & ~MR_ACCESS_OK) ||
	    /* IBA 10.6.3.1: remote write or atomic needs local write */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)) ||
	    (addr == NULL && length) || length > DROCE_MAX_MR_SIZE ||
	    /* a range past the end of the address space (the engine would wrap) */
	    (uintptr_t)addr + length < (uintptr_t)addr || iova + length < iova) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	for (idx = 1; idx < DROCE_MAX_MR && dev->mr_tbl[idx]; idx++)
		;
	if (idx == DROCE_MAX_MR) {
		pthread_mutex_unlock(&dev->lock);
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	mr->pd = pd;
	mr->iova = iova;
	mr->length = length;
	mr->host = addr;
	mr->access = access;
	dev->mr_gen[idx] = (dev->mr_gen[idx] + 1) & ROCE_MR_GEN_MASK;
	mr->key = idx << ROCE_MR_GEN_BITS | dev->mr_gen[idx];
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = mr->key;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	__atomic_store_n(&dev->mr_tbl[idx], mr, __ATOMIC_RELEASE);
	dev->nb_mr++;
	pthread_mutex_unlock(&dev->lock);
	return &mr->ibmr;
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

int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct roce_mr *mr = to_roce_mr(ibmr);
	struct roce_dev *dev = mr->pd->dev;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mr_tbl[mr->key >> ROCE_MR_GEN_BITS], NULL, __ATOMIC_RELEASE);
	dev->nb_mr--;
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	free(mr);
	return 0;
}

/* --- CQ (completion channels: verbs_event.c) --- */
/* ibv_create_cq and the create_cq_ex op: NULL with errno set on failure. */
struct roce_cq *
droce_cq_create(struct ibv_context *context, int cqe, void *cq_context,
		struct ibv_comp_channel *channel, int comp_vector)
{
	struct roce_dev *dev = DEV_OF(context);
	char name[RTE_RING_NAMESIZE];
	struct roce_cq *cq;

	if (cqe < 1 || cqe > DROCE_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_cq >= DROCE_MAX_CQ) {
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	dev->nb_cq++;
	pthread_mutex_unlock(&dev->lock);
	cq = roce_zmalloc("droce_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (cq == NULL) {
		errno = ENOMEM;
		goto err_count;
	}
	snprintf(name, sizeof(name), "droce_cq_%p", (void *)cq);
	/*
	 * Any number of threads may poll one CQ (ibv_alloc_td(3)); they take
	 * poll_lock (or the CQ was created single-threaded), so the ring has
	 * one consumer at a time.
	 */
	cq->ring = roce_ring_alloc(name, sizeof(struct ibv_wc), cqe, SOCKET_ID_ANY,
				   RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (cq->ring == NULL) {
		errno = rte_errno == EINVAL ? EINVAL : ENOMEM;
		goto err_free_cq;
	}
	pthread_mutex_init(&cq->poll_lock, NULL);
	cq->dev = dev;
	cq->cqe = cqe;
	cq->chan = channel ? container_of(channel, struct roce_comp_channel, ch) : NULL;
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.cqe = cqe;
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	if (channel)
		__atomic_fetch_add(&channel->refcnt, 1, __ATOMIC_RELAXED);
	return cq;

err_free_cq:
	roce_free(cq);
err_count:
	pthread_mutex_lock(&dev->lock);
	dev->nb_cq--;
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct roce_cq *cq = droce_cq_create(context, cqe, cq_context, channel, comp_vector);

	return cq ? &cq->ibcq : NULL;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct roce_cq *cq = to_roce_cq(ibcq);
	struct roce_dev *dev = cq->dev;

	/* a QP or a tag-matching SRQ still completes into it */
	if (__atomic_load_n(&cq->tm_users, __ATOMIC_RELAXED))
		return EBUSY;
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < DROCE_MAX_QP; i++) {
		struct roce_qp *qp = dev->qp_tbl[i];

		if (qp && (qp->scq == cq || qp->rcq == cq)) {
			pthread_mutex_unlock(&dev->lock);
			return EBUSY;
		}
	}
	dev->nb_cq--;
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	roce_cq_disarm(cq);
	if (ibcq->channel)
		__atomic_fetch_sub(&ibcq->channel->refcnt, 1, __ATOMIC_RELAXED);
	roce_ring_release(cq->ring);
	roce_free(cq);
	return 0;
}

/* --- SRQ --- */
struct ibv_srq *
ibv_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *attr)
{
	struct roce_pd *pd = to_roce_pd(ibpd);
	struct roce_dev *dev = pd->dev;
	char name[RTE_RING_NAMESIZE];
	struct roce_srq *srq;
	int ret;

	if (attr->attr.max_wr < 1 || attr->attr.max_wr > DROCE_MAX_SRQ_WR ||
	    attr->attr.max_sge > DROCE_MAX_SGE || attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_srq >= DROCE_MAX_SRQ) {
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	dev->nb_srq++;
	pthread_mutex_unlock(&dev->lock);
	srq = roce_zmalloc("droce_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (srq == NULL) {
		ret = -ENOMEM;
		goto err_count;
	}
	snprintf(name, sizeof(name), "dsrq%p", (void *)srq);
	ret = roce_wq_init(&srq->rq, name, attr->attr.max_wr, RTE_MAX(attr->attr.max_sge, 1U),
			   sizeof(struct roce_recv_wqe), SOCKET_ID_ANY);
	if (ret)
		goto err_free_srq;
	srq->dev = dev;
	srq->pd = pd;
	srq->ibsrq.context = ibpd->context;
	srq->ibsrq.pd = ibpd;
	srq->ibsrq.srq_context = attr->srq_context;
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	/* man ibv_create_srq: the limit given at creation is not armed */
	attr->attr.max_sge = srq->rq.max_sge;
	return &srq->ibsrq;

err_free_srq:
	roce_free(srq);
err_count:
	pthread_mutex_lock(&dev->lock);
	dev->nb_srq--;
	pthread_mutex_unlock(&dev->lock);
	errno = -ret;
	return NULL;
}

int
ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct roce_srq *srq = to_roce_srq(ibsrq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;	/* no resize */
	if (mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.size)
			return EINVAL;
		__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELEASE);
	}
	return 0;
}

int
ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct roce_srq *srq = to_roce_srq(ibsrq);

	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct roce_srq *srq = to_roce_srq(ibsrq);
	struct roce_dev *dev = srq->dev;

	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < DROCE_MAX_QP; i++) {
		if (dev->qp_tbl[i] && dev->qp_tbl[i]->srq == srq) {
			pthread_mutex_unlock(&dev->lock);
			return EBUSY;
		}
	}
	dev->nb_srq--;
	pthread_mutex_unlock(&dev->lock);
	if (srq->tm != NULL)
		droce_tm_srq_fini(srq);
	roce_wq_fini(&srq->rq);
	roce_free(srq);
	return 0;
}

/* --- AH --- */
/* RoCEv2 over IPv4: the GID must be IPv4-mapped (::ffff:a.b.c.d). */
static int
av_from_ah_attr(const struct ibv_ah_attr *ah, struct roce_av *av)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!ah->is_global || ah->port_num != 1 || ah->grh.sgid_index != 0 ||
	    memcmp(ah->grh.dgid.raw, v4mapped, sizeof(v4mapped)) != 0)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(&av->dip, &ah->grh.dgid.raw[12], 4);
	if (av->dip == 0)
		return -EINVAL;
	av->tos = ah->grh.traffic_class;
	av->ttl = ah->grh.hop_limit ? ah->grh.hop_limit : 64;
	return 0;
}

struct ibv_ah *
ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct roce_dev *dev = to_roce_pd(ibpd)->dev;
	struct roce_ah *ah = calloc(1, sizeof(*ah));

	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (av_from_ah_attr(attr, &ah->av) != 0) {
		free(ah);
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_ah >= DROCE_MAX_AH) {
		pthread_mutex_unlock(&dev->lock);
		free(ah);
		errno = ENOMEM;
		return NULL;
	}
	dev->nb_ah++;
	pthread_mutex_unlock(&dev->lock);
	ah->ibah.context = ibpd->context;
	ah->ibah.pd = ibpd;
	return &ah->ibah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct roce_dev *dev = to_roce_pd(ah->pd)->dev;

	pthread_mutex_lock(&dev->lock);
	dev->nb_ah--;
	pthread_mutex_unlock(&dev->lock);
	free(container_of(ah, struct roce_ah, ibah));
	return 0;
}

const struct roce_av *
droce_ah_av(struct ibv_ah *ah)
{
	return &container_of(ah, struct roce_ah, ibah)->av;
}

/* --- QP --- */
/*
 * A QP of a tag-matching SRQ gets ROCE_TM_QP_WQES send slots more than it
 * asked for, kept apart for the engine's rendezvous READs and FINs.
 */
static int
tm_pool_init(struct roce_qp *qp)
{
	char name[RTE_RING_NAMESIZE];
	void *w;

	snprintf(name, sizeof(name), "dtmp%u_%.8s", qp->qpn, qp->dev->name);
	qp->tm_pool = roce_ring_alloc(name, sizeof(void *), ROCE_TM_QP_WQES, SOCKET_ID_ANY,
				      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (qp->tm_pool == NULL)
		return -rte_errno;
	for (int i = 0; i < ROCE_TM_QP_WQES && rte_ring_dequeue(qp->sq.free, &w) == 0; i++)
		rte_ring_enqueue(qp->tm_pool, w);
	return 0;
}

/* ibv_create_qp and the create_qp_ex op: NULL with errno set on failure. */
struct roce_qp *
droce_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct roce_pd *pd = to_roce_pd(ibpd);
	struct roce_dev *dev = pd->dev;
	struct ibv_qp_cap *cap = &attr->cap;
	char name[RTE_RING_NAMESIZE];
	bool tm = attr->srq && to_roce_srq(attr->srq)->tm;
	struct roce_qp *qp;
	uint32_t idx;
	int ret;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* tag matching is defined for RC */
	if (attr->send_cq == NULL || attr->recv_cq == NULL ||
	    (tm && attr->qp_type != IBV_QPT_RC) ||
	    cap->max_send_wr > DROCE_MAX_QP_WR || cap->max_send_sge > DROCE_MAX_SGE ||
	    cap->max_inline_data > DROCE_MAX_INLINE ||
	    (attr->srq == NULL && (cap->max_recv_wr > DROCE_MAX_QP_WR ||
				   cap->max_recv_sge > DROCE_MAX_SGE))) {
		errno = EINVAL;
		return NULL;
	}
	qp = roce_zmalloc("droce_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	for (idx = 0; idx < DROCE_MAX_QP && dev->qp_taken[idx]; idx++)
		;
	if (idx == DROCE_MAX_QP) {
		pthread_mutex_unlock(&dev->lock);
		ret = -ENOMEM;
		goto err_free_qp;
	}
	/*
	 * Reserve the slot; the engine and the receive path find the QP in
	 * qp_tbl only once it is complete (below): below qp_hi they look at
	 * every slot.
	 */
	dev->qp_taken[idx] = true;
	pthread_mutex_unlock(&dev->lock);

	qp->dev = dev;
	qp->pd = pd;
	qp->idx = idx;
	qp->qpn = DROCE_QPN_BASE + idx;
	qp->type = attr->qp_type;
	qp->scq = to_roce_cq(attr->send_cq);
	qp->rcq = to_roce_cq(attr->recv_cq);
	qp->srq = attr->srq ? to_roce_srq(attr->srq) : NULL;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->max_inline = cap->max_inline_data;
	qp->state = IBV_QPS_RESET;
	/* UDP source port from the QPN, in the range RoCEv2 suggests (0xc000+) */
	qp->sport = 0xc000 | ((qp->qpn * 0x9e37u) & 0x3fff);
	snprintf(name, sizeof(name), "dsq%u_%.8s", qp->qpn, dev->name);
	ret = roce_wq_init(&qp->sq, name, RTE_MAX(cap->max_send_wr, 1U) + (tm ? ROCE_TM_QP_WQES : 0),
			   RTE_MAX(cap->max_send_sge, 1U), sizeof(struct roce_send_wqe), SOCKET_ID_ANY);
	if (ret)
		goto err_release_slot;
	if (tm) {
		ret = tm_pool_init(qp);
		if (ret)
			goto err_fini_sq;
	}
	cap->max_send_sge = qp->sq.max_sge;
	qp->e.win = roce_zmalloc("droce_win", sizeof(void *) * qp->sq.size, 0, SOCKET_ID_ANY);
	if (qp->e.win == NULL) {
		ret = -ENOMEM;
		goto err_fini_sq;
	}
	if (qp->srq == NULL) {
		snprintf(name, sizeof(name), "drq%u_%.8s", qp->qpn, dev->name);
		ret = roce_wq_init(&qp->rq, name, RTE_MAX(cap->max_recv_wr, 1U),
				   RTE_MAX(cap->max_recv_sge, 1U), sizeof(struct roce_recv_wqe),
				   SOCKET_ID_ANY);
		if (ret)
			goto err_free_win;
		cap->max_recv_sge = qp->rq.max_sge;
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	qp->ibqp.context = ibpd->context;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.pd = ibpd;
	qp->ibqp.send_cq = attr->send_cq;
	qp->ibqp.recv_cq = attr->recv_cq;
	qp->ibqp.srq = attr->srq;
	qp->ibqp.handle = qp->qpn;
	qp->ibqp.qp_num = qp->qpn;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	qp->attr.cap = *cap;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->qp_tbl[idx], qp, __ATOMIC_RELEASE);
	__atomic_fetch_add(&dev->nb_qp, 1, __ATOMIC_RELAXED);	/* the waker reads it */
	if (idx + 1 > dev->qp_hi)
		__atomic_store_n(&dev->qp_hi, idx + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	roce_wake_kick(dev);	/* its async events may be waited for */
	return qp;

err_free_win:
	roce_free(qp->e.win);
err_fini_sq:
	roce_ring_release(qp->tm_pool);
	roce_wq_fini(&qp->sq);
err_release_slot:
	pthread_mutex_lock(&dev->lock);
	dev->qp_taken[idx] = false;
	pthread_mutex_unlock(&dev->lock);
err_free_qp:
	roce_free(qp);
	errno = -ret;
	return NULL;
}

static void
apply_attr(struct roce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX) q->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT) q->port_num = a->port_num;
	if (mask & IBV_QP_QKEY) q->qkey = a->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS) q->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV) q->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU) q->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN) q->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN) q->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER) q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN) q->sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT) q->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT) q->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY) q->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) q->en_sqd_async_notify = a->en_sqd_async_notify;
}

int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct roce_qp *qp = to_roce_qp(ibqp);
	struct roce_dev *dev = qp->dev;
	enum ibv_qp_state cur, next;
	struct roce_av av;
	int ret;

	pthread_mutex_lock(&dev->lock);
	cur = roce_qp_state(qp);
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = EINVAL;
		goto out;
	}
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	ret = -droce_qp_modify_check(qp->type, cur, next, mask);
	if (ret == 0)
		ret = -droce_qp_attr_values_check(qp->type, attr, mask, 1, DROCE_PKEY_TBL_LEN,
						  DROCE_MAX_RD_ATOMIC, DROCE_MAX_RD_ATOMIC);
	if (ret == 0 && (mask & IBV_QP_AV) && av_from_ah_attr(&attr->ah_attr, &av) != 0)
		ret = EINVAL;
	if (ret)
		goto out;

	if (next == IBV_QPS_RESET) {
		__atomic_store_n(&qp->state, IBV_QPS_RESET, __ATOMIC_SEQ_CST);
		roce_dev_quiesce(dev);
		roce_qp_reset_engine(qp);
		{
			struct ibv_qp_cap cap = qp->attr.cap;

			memset(&qp->attr, 0, sizeof(qp->attr));
			qp->attr.cap = cap;
			memset(&qp->av, 0, sizeof(qp->av));
			qp->mtu = 0;
			qp->tmo_tsc = 0;
		}
		qp->ibqp.state = IBV_QPS_RESET;
		goto out;
	}
	apply_attr(qp, attr, mask);
	if (mask & IBV_QP_AV)
		qp->av = av;
	if (mask & IBV_QP_PATH_MTU)
		qp->mtu = RTE_MIN(roce_mtu_bytes(attr->path_mtu), (uint32_t)dev->ib_mtu);
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 disables the timer */
	if (mask & IBV_QP_TIMEOUT)
		qp->tmo_tsc = attr->timeout == 0 ? 0 :
			(uint64_t)(4096e-9 * (double)(1ULL << attr->timeout) * (double)dev->tsc_hz);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		qp->e.epsn = qp->attr.rq_psn;
		qp->e.msn = 0;
	}
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		qp->e.psn = qp->attr.sq_psn;
		qp->e.una = qp->attr.sq_psn;
		qp->e.retry_left = qp->attr.retry_cnt;
		qp->e.rnr_left = qp->attr.rnr_retry;
	}
	if (qp->type == IBV_QPT_UD && qp->mtu == 0)
		qp->mtu = dev->ib_mtu;
	__atomic_store_n(&qp->state, next, __ATOMIC_SEQ_CST);
	qp->ibqp.state = next;
out:
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
	     struct ibv_qp_init_attr *init)
{
	struct roce_qp *qp = to_roce_qp(ibqp);

	pthread_mutex_lock(&qp->dev->lock);
	*attr = qp->attr;
	attr->qp_state = roce_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->sq_draining = 0;
	attr->cap.max_inline_data = qp->max_inline;
	ibqp->state = attr->qp_state;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = attr->cap;
		init->qp_type = qp->type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct roce_qp *qp = droce_qp_create(ibpd, attr);

	return qp ? &qp->ibqp : NULL;
}

int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct roce_qp *qp = to_roce_qp(ibqp);
	struct roce_dev *dev = qp->dev;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&qp->state, IBV_QPS_RESET, __ATOMIC_SEQ_CST);
	__atomic_store_n(&dev->qp_tbl[qp->idx], NULL, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&dev->nb_qp, 1, __ATOMIC_RELAXED);
	dev->qp_taken[qp->idx] = false;
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	roce_qp_reset_engine(qp);
	roce_ring_release(qp->tm_pool);
	roce_wq_fini(&qp->sq);
	if (qp->srq == NULL)
		roce_wq_fini(&qp->rq);
	roce_free(qp->e.win);
	droce_wr_batch_free(qp);
	roce_free(qp);
	return 0;
}
