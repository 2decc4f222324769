/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC (IBA 9.2.1, 10.2.9.2 and 11.2.x): domains (ibv_open_xrcd), XRC SRQs
 * (ibv_create_srq_ex, ibv_get_srq_num), XRC_RECV QPs (ibv_create_qp_ex with
 * an XRCD) and their sharing (ibv_open_qp). XRC_SEND QPs are made as any
 * other QP (verbs_obj.c); the engine side is drivers/rdma/roce.
 *
 * droce has no kernel: a domain opened with a file is shared by every
 * ibv_open_xrcd of that file (its inode) on the same device in this
 * process, never with another process. Each process's XRC SRQs and
 * XRC_RECV QPs are its own anyway; a peer process reaches them over the
 * wire by number, as a remote node does.
 *
 * An XRC_RECV QP's async events go to every handle on it, the creator's and
 * each ibv_open_qp's, each through its own context and naming its own
 * ibv_qp, as the kernel's __ib_shared_qp_event_handler hands a shared QP's
 * events to every ib_open_qp of it (uverbs then queues each on the file of
 * the process that opened it).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs_loc.h"

/* The process's domains; every handle count and QP list changes under it. */
static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, droce_xrcd_dom) xrc_doms = TAILQ_HEAD_INITIALIZER(xrc_doms);

static struct droce_xrcd_dom *
dom_find(struct droce_rdev *dev, const struct stat *st)
{
	struct droce_xrcd_dom *d;

	TAILQ_FOREACH(d, &xrc_doms, next)
		if (d->has_inode && d->dev == dev && d->st_dev == st->st_dev &&
		    d->st_ino == st->st_ino)
			return d;
	return NULL;
}

/*
 * man ibv_open_xrcd. fd -1: a domain of its own, which needs O_CREAT. A
 * file: the domain of its inode, made with O_CREAT if there is none
 * (EINVAL without), EINVAL with O_CREAT|O_EXCL if there is one (as the
 * kernel's ib_uverbs_open_xrcd); EBADF if fd is no open file.
 */
struct ibv_xrcd *
droce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	const uint32_t need = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct droce_rdev *dev = to_dctx(context)->rdev;
	struct droce_xrcd_dom *dom = NULL;
	struct droce_xrcd *x;
	struct stat st;
	int ret;

	if ((attr->comp_mask & need) != need ||
	    (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_RESERVED - 1)) ||
	    (attr->oflags & ~(O_CREAT | O_EXCL))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->fd != -1 && fstat(attr->fd, &st) != 0) {
		errno = EBADF;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&xrc_lock);
	if (attr->fd != -1)
		dom = dom_find(dev, &st);
	if (dom != NULL ? (attr->oflags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) :
	    !(attr->oflags & O_CREAT)) {
		ret = EINVAL;
		goto err_unlock;
	}
	if (dom == NULL) {
		dom = calloc(1, sizeof(*dom));
		if (dom == NULL) {
			ret = ENOMEM;
			goto err_unlock;
		}
		ret = -dev->ops->xrcd_alloc(dev, &dom->fp);
		if (ret) {
			free(dom);
			goto err_unlock;
		}
		dom->dev = dev;
		dom->has_inode = attr->fd != -1;
		if (dom->has_inode) {
			dom->st_dev = st.st_dev;
			dom->st_ino = st.st_ino;
		}
		TAILQ_INIT(&dom->qps);
		TAILQ_INSERT_TAIL(&xrc_doms, dom, next);
	}
	dom->opens++;
	pthread_mutex_unlock(&xrc_lock);
	x->dom = dom;
	x->ibxrcd.context = context;
	return &x->ibxrcd;

err_unlock:
	pthread_mutex_unlock(&xrc_lock);
	free(x);
	errno = ret;
	return NULL;
}

/* EBUSY while an SRQ or a QP made or opened with this handle exists. */
int
droce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct droce_xrcd *x = to_dxrcd(ibxrcd);
	struct droce_xrcd_dom *dom = x->dom;

	pthread_mutex_lock(&xrc_lock);
	if (__atomic_load_n(&x->users, __ATOMIC_RELAXED) != 0) {
		pthread_mutex_unlock(&xrc_lock);
		return EBUSY;
	}
	if (--dom->opens == 0) {
		TAILQ_REMOVE(&xrc_doms, dom, next);
		dom->dev->ops->xrcd_free(dom->fp);
		free(dom);
	}
	pthread_mutex_unlock(&xrc_lock);
	free(x);
	return 0;
}

static inline void
xrcd_use(struct droce_xrcd *x, int d)
{
	__atomic_fetch_add(&x->users, (uint32_t)d, __ATOMIC_RELAXED);
}

/*
 * ibv_create_srq_ex with IBV_SRQT_XRC: TYPE, PD, XRCD and CQ required. A
 * basic SRQ (its WQEs posted with ibv_post_srq_recv, checked against its
 * PD) that the driver numbers and completes into @attr->cq.
 */
struct ibv_srq *
droce_create_xrc_srq(struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			      IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct droce_xrcd *x;
	struct droce_srq *srq;
	struct ibv_srq *ibsrq;
	int ret;

	if ((attr->comp_mask & need) != need || (attr->comp_mask & IBV_SRQ_INIT_ATTR_TM) ||
	    attr->xrcd == NULL || attr->cq == NULL || attr->pd == NULL ||
	    to_dcq(attr->cq)->dev != to_dpd(attr->pd)->dev ||
	    to_dxrcd(attr->xrcd)->dom->dev != to_dpd(attr->pd)->dev) {
		errno = EINVAL;
		return NULL;
	}
	x = to_dxrcd(attr->xrcd);
	ibsrq = ibv_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
	if (ibsrq == NULL)
		return NULL;
	srq = to_dsrq(ibsrq);
	/* ENOMEM: the device's SRQ numbers are used up */
	ret = srq->fp->dev->ops->srq_xrc_enable(srq->fp, x->dom->fp, to_dcq(attr->cq)->fp);
	if (ret) {
		ibv_destroy_srq(ibsrq);
		errno = -ret;
		return NULL;
	}
	srq->xrcd = x;
	xrcd_use(x, 1);
	return ibsrq;
}

/* ibv_destroy_srq of an XRC SRQ: its domain handle has one user less. */
void
droce_xrc_srq_destroyed(struct droce_srq *srq)
{
	xrcd_use(srq->xrcd, -1);
}

/* Only XRC SRQs have a number (man ibv_get_srq_num): EOPNOTSUPP for the others. */
int
droce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	if (srq->xrcd == NULL)
		return EOPNOTSUPP;
	*srq_num = srq->fp->srqn;
	return 0;
}

/* A new handle on @xqp, made or opened with @x: registered under xrc_lock. */
static void
xqp_handle_add(struct droce_qp *qp, struct droce_xqp *xqp, struct droce_xrcd *x)
{
	qp->xqp = xqp;
	qp->xrcd = x;
	xqp->refs++;
	xrcd_use(x, 1);
}

/*
 * The handles events go to, with @add (non-NULL) or without @drop, under
 * xrc_lock: *@old is the array replaced, which the caller frees once the
 * device is quiesced, or NULL. -ENOMEM: no room for @add, nothing changed.
 * Dropping never fails: without memory for a copy, @drop's slot empties
 * in place (the engine skips it).
 */
static int
xqp_fan_set(struct droce_xqp *xqp, struct droce_qp *add, struct droce_qp *drop,
	    struct droce_xqp_fan **old)
{
	struct droce_xqp_fan *cur = xqp->fan, *nf;
	uint32_t n = cur->n, k = 0;

	*old = NULL;
	nf = malloc(sizeof(*nf) + (n + (add != NULL)) * sizeof(nf->qp[0]));
	if (nf == NULL) {
		if (add != NULL)
			return -ENOMEM;
		for (uint32_t i = 0; i < n; i++)
			if (cur->qp[i] == drop)
				__atomic_store_n(&cur->qp[i], NULL, __ATOMIC_RELEASE);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (cur->qp[i] != NULL && cur->qp[i] != drop)
			nf->qp[k++] = cur->qp[i];
	if (add != NULL)
		nf->qp[k++] = add;
	nf->n = k;
	/* the handles' fields before the pointer that shows them to the engine */
	__atomic_store_n(&xqp->fan, nf, __ATOMIC_RELEASE);
	*old = cur;
	return 0;
}

/*
 * An async event of an XRC_RECV QP (the engine's, lock-free; @ev names the
 * creator's handle, the driver's key): each handle's context gets it,
 * naming that handle, which ibv_ack_async_event then counts.
 */
void
droce_xrc_qp_event(const struct droce_xqp *xqp, const struct ibv_async_event *ev)
{
	const struct droce_xqp_fan *fan = __atomic_load_n(&xqp->fan, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < fan->n; i++) {
		struct droce_qp *h = __atomic_load_n(&fan->qp[i], __ATOMIC_ACQUIRE);
		struct ibv_async_event e = *ev;

		if (h == NULL)
			continue;
		e.element.qp = &h->ibqp;
		droce_evq_put(&to_dctx(h->ibqp.context)->async, &e);
	}
}

/*
 * ibv_create_qp_ex of an XRC_RECV QP: comp_mask XRCD (a PD is ignored: the
 * QP has none), no send ops. It receives into the XRC SRQ each request
 * names, completing into that SRQ's CQ.
 */
struct ibv_qp *
droce_create_xrc_recv_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct droce_xqp_fan *fan;
	struct droce_xqp *xqp;
	struct droce_xrcd *x;
	struct droce_qp *qp;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || attr->xrcd == NULL ||
	    attr->xrcd->context != context ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && attr->send_ops_flags)) {
		errno = EINVAL;
		return NULL;
	}
	x = to_dxrcd(attr->xrcd);
	xqp = calloc(1, sizeof(*xqp));
	fan = malloc(sizeof(*fan) + sizeof(fan->qp[0]));
	if (xqp == NULL || fan == NULL) {
		free(xqp);
		free(fan);
		errno = ENOMEM;
		return NULL;
	}
	/* ibv_qp_init_attr_ex begins with the fields of ibv_qp_init_attr */
	qp = droce_xrc_recv_qp_create(x, (struct ibv_qp_init_attr *)attr);
	if (qp == NULL) {
		free(xqp);
		free(fan);
		return NULL;
	}
	xqp->fp = qp->fp;
	xqp->dom = x->dom;
	xqp->creator = qp;
	/* in RESET the QP raises no event yet: no publication needed */
	fan->n = 1;
	fan->qp[0] = qp;
	xqp->fan = fan;
	pthread_mutex_lock(&xrc_lock);
	xqp_handle_add(qp, xqp, x);
	TAILQ_INSERT_TAIL(&x->dom->qps, xqp, next);
	pthread_mutex_unlock(&xrc_lock);
	return &qp->ibqp;
}

/*
 * man ibv_open_qp: another handle on an XRC_RECV QP of the domain, by
 * number (comp_mask NUM, XRCD and TYPE; CONTEXT optional). EINVAL for
 * anything else, ENOENT if the domain has no such QP, ENOMEM. The handle
 * modifies, queries and destroys like the creator's; the QP lives until
 * its last handle is destroyed. Each handle gets the QP's async events
 * through its context, naming itself.
 */
struct ibv_qp *
droce_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct droce_xqp_fan *old;
	struct droce_rdev *dev;
	struct droce_xqp *xqp;
	struct droce_xrcd *x;
	struct droce_qp *qp;

	if ((attr->comp_mask & need) != need ||
	    (attr->comp_mask & ~(uint32_t)(IBV_QP_OPEN_ATTR_RESERVED - 1)) ||
	    attr->qp_type != IBV_QPT_XRC_RECV || attr->xrcd == NULL ||
	    attr->xrcd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	x = to_dxrcd(attr->xrcd);
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&qp->modify_lock, NULL);
	qp->ibqp.context = context;
	qp->ibqp.qp_context = (attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? attr->qp_context : NULL;
	qp->ibqp.qp_type = IBV_QPT_XRC_RECV;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	pthread_mutex_lock(&xrc_lock);
	TAILQ_FOREACH(xqp, &x->dom->qps, next)
		if (xqp->fp->qpn == attr->qp_num)
			break;
	if (xqp == NULL) {
		pthread_mutex_unlock(&xrc_lock);
		droce_qp_free(qp);
		errno = ENOENT;
		return NULL;
	}
	/* complete before the engine may name it in an event */
	qp->fp = xqp->fp;
	qp->ibqp.handle = qp->fp->qpn;
	qp->ibqp.qp_num = qp->fp->qpn;
	qp->ibqp.state = droce_rdev_qp_state(qp->fp);
	if (xqp_fan_set(xqp, qp, NULL, &old) != 0) {
		pthread_mutex_unlock(&xrc_lock);
		droce_qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	xqp_handle_add(qp, xqp, x);
	dev = xqp->fp->dev;
	pthread_mutex_unlock(&xrc_lock);
	/* no engine iteration reads the replaced array any more */
	dev->ops->quiesce(dev);
	free(old);
	return &qp->ibqp;
}

/*
 * ibv_destroy_qp of an XRC_RECV handle: it gets no event once this returns;
 * the QP goes with its last handle.
 */
void
droce_xrc_qp_destroy(struct droce_qp *qp)
{
	struct droce_xqp *xqp = qp->xqp;
	struct droce_qp *creator = xqp->creator;
	struct droce_rdev *dev = xqp->fp->dev;
	struct droce_xqp_fan *old;
	bool last;

	pthread_mutex_lock(&xrc_lock);
	last = --xqp->refs == 0;
	xqp_fan_set(xqp, NULL, qp, &old);
	if (last)
		TAILQ_REMOVE(&xqp->dom->qps, xqp, next);
	xrcd_use(qp->xrcd, -1);
	pthread_mutex_unlock(&xrc_lock);
	/* (another thread may free @xqp from here on, unless this was the last handle) */
	dev->ops->quiesce(dev);
	free(old);
	if (last) {
		dev->ops->qp_destroy(xqp->fp);
		if (creator != qp)
			droce_qp_free(creator);
		free(xqp->fan);
		free(xqp);
	}
	/* the driver's events name the creator's handle: it stays while the QP does */
	if (last || qp != creator)
		droce_qp_free(qp);
}
