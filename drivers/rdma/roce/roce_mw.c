/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (IBA vol. 1, chapter 10): the objects (the mw_* ops), the
 * bind and invalidate operations the engine executes in send-queue order,
 * and the check of a remote access through a window's R_Key.
 *
 * Type 1 windows are always valid: bound, or unbound with length 0; each
 * bind gives them a new key. Type 2 (2B: bound to one QP) are free until a
 * bind WQE binds them, and free again once invalidated (LOCAL_INV, or a
 * SEND_WITH_INV arriving on the QP they are bound to). A type 2 window
 * bound with IBV_ACCESS_ZERO_BASED is addressed by offsets from its start
 * (IBA's zero based virtual addresses), as the kernel's rxe does it.
 *
 * XRC: a bind or LOCAL_INV WQE may be posted on an XRC_SEND QP (man
 * ibv_post_send), and a type 2 window it binds is associated with that QP,
 * as mlx5 writes the posting QP's number into the window's key context. An
 * XRC_SEND QP receives no requests, and an XRC_RECV QP, which does, has no
 * send queue to bind with: no type 2 window is ever associated with the QP
 * an XRC request arrives on, so a request arriving on an XRC_RECV QP
 * through a type 2 window is an R_Key violation, and a SEND with Invalidate
 * naming one an invalid request (IBA's checks of a type 2 window's QP; the
 * XRC responder proposed for the kernel's rxe rejects type 2 windows on an
 * XRC target outright). Type 1 windows, which no QP owns, serve XRC
 * requests as MRs do, checked against the XRC SRQ's PD.
 */
#include <stdlib.h>

#include "roce_loc.h"

#define MW_ACCESS_OK	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

int
roce_mw_alloc(struct droce_rdev_pd *pd, enum ibv_mw_type type, struct droce_rdev_mw **out,
	      uint32_t *rkey, uint32_t *handle)
{
	struct roce_dev *dev = pd->dev;
	struct droce_rdev_mw *mw = calloc(1, sizeof(*mw));
	uint32_t idx;

	if (mw == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	for (idx = 1; idx < DROCE_MAX_MW && dev->mw_tbl[idx]; idx++)
		;
	if (idx == DROCE_MAX_MW) {
		pthread_mutex_unlock(&dev->lock);
		free(mw);
		return -ENOMEM;
	}
	mw->pd = pd;
	mw->idx = idx;
	mw->type = type;
	mw->state = type == IBV_MW_TYPE_1 ? ROCE_MW_VALID : ROCE_MW_FREE;
	/* a stale R_Key of the slot's last window does not name this one */
	dev->mw_key[idx]++;
	mw->rkey = idx << ROCE_MW_KEY_BITS | dev->mw_key[idx];
	__atomic_store_n(&dev->mw_tbl[idx], mw, __ATOMIC_RELEASE);
	dev->nb_mw++;
	pthread_mutex_unlock(&dev->lock);
	*rkey = mw->rkey;
	*handle = idx;
	*out = mw;
	return 0;
}

void
roce_mw_dealloc(struct droce_rdev_mw *mw)
{
	struct roce_dev *dev = mw->pd->dev;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mw_tbl[mw->idx], NULL, __ATOMIC_RELEASE);
	dev->nb_mw--;
	pthread_mutex_unlock(&dev->lock);
	/* no engine iteration binds, invalidates or reads it any more */
	roce_dev_quiesce(dev);
	if (mw->mr_key != 0)
		__atomic_fetch_sub(&dev->mr_nmw[mw->mr_key >> ROCE_MR_GEN_BITS], 1,
				   __ATOMIC_RELEASE);
	/*
	 * The slot's next window starts after the last key this one had (its
	 * binds moved it), unless a window took the slot meanwhile.
	 */
	pthread_mutex_lock(&dev->lock);
	if (dev->mw_tbl[mw->idx] == NULL)
		dev->mw_key[mw->idx] = mw->rkey & ROCE_MW_KEY_MASK;
	pthread_mutex_unlock(&dev->lock);
	free(mw);
}

static inline struct droce_rdev_mw *
mw_lookup(struct roce_dev *dev, uint32_t rkey)
{
	uint32_t idx = rkey >> ROCE_MW_KEY_BITS;

	if (unlikely(idx == 0 || idx >= DROCE_MAX_MW))
		return NULL;
	return __atomic_load_n(&dev->mw_tbl[idx], __ATOMIC_ACQUIRE);
}

/*
 * One window more on the MR in slot @idx (engine): false once
 * roce_mr_dereg has claimed the MR (lock-free; see roce_mr_dereg).
 */
static bool
mr_nmw_get(struct roce_dev *dev, uint32_t idx)
{
	uint32_t n = __atomic_load_n(&dev->mr_nmw[idx], __ATOMIC_RELAXED);

	do {
		if (n & ROCE_MR_NMW_DYING)
			return false;
	} while (!__atomic_compare_exchange_n(&dev->mr_nmw[idx], &n, n + 1, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/* The window's MR loses its binding (engine). */
static void
mw_unbind(struct roce_dev *dev, struct droce_rdev_mw *mw)
{
	if (mw->mr_key != 0)
		__atomic_fetch_sub(&dev->mr_nmw[mw->mr_key >> ROCE_MR_GEN_BITS], 1,
				   __ATOMIC_RELEASE);
	mw->mr_key = 0;
	mw->va = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qp_serial = 0;
}

/*
 * A remote access through the window @rkey names, arriving on @qp (engine,
 * per packet): 0 with *host set when [va, va+len) lies in the window, which
 * is valid, grants @access, is of @pd (the QP's, or an XRC request's
 * SRQ's) and, type 2, bound to this QP (by serial: a QP made later under
 * the same QPN is another; never an XRC_RECV QP, which cannot bind); and
 * in the MR it is bound to as that MR is now (re-registration).
 */
int
roce_mw_check(struct roce_dev *dev, const struct roce_qp *qp, const struct droce_rdev_pd *pd,
	      uint32_t rkey, uint64_t va, uint64_t len, int access, uint8_t **host)
{
	const struct droce_rdev_mw *mw = mw_lookup(dev, rkey);
	const struct droce_rdev_mr *mr;

	if (unlikely(mw == NULL || mw->rkey != rkey || mw->state != ROCE_MW_VALID ||
		     mw->length == 0 || mw->pd != pd ||
		     (mw->type == IBV_MW_TYPE_2 &&
		      (mw->qp_serial != qp->serial || qp->fp.type == IBV_QPT_XRC_RECV)) ||
		     (mw->access & access) != access))
		return -EACCES;
	if (mw->access & IBV_ACCESS_ZERO_BASED) {
		/* an offset into the window: [0, length) */
		if (unlikely(len > mw->length || va > mw->length - len))
			return -EACCES;
		va += mw->va;
	} else if (unlikely(va < mw->va || len > mw->length || va - mw->va > mw->length - len)) {
		return -EACCES;
	}
	mr = roce_mr_lookup(dev, mw->mr_key);
	if (unlikely(mr == NULL || mr->pd != mw->pd || va < mr->iova || len > mr->length ||
		     va - mr->iova > mr->length - len))
		return -EACCES;
	/* (the implicit ODP MR's host is NULL: integer arithmetic) */
	*host = (uint8_t *)((uintptr_t)mr->host + (va - mr->iova));
	return 0;
}

/*
 * A BIND_MW WQE at the head of @qp's send queue (engine). 0, or -EINVAL:
 * the WR completes with IBV_WC_MW_BIND_ERR and the QP goes to ERR. The
 * checks are IBA's (C10-72..75, o10-36.2.2, o10-37.2.30/40), as the
 * kernel's rxe makes them, and also that the MR is of the window's PD.
 * A zero-based bind still gives the window's start as an address of the
 * MR, and the whole window must lie in the MR as any other's.
 */
int
roce_mw_bind(struct roce_dev *dev, struct roce_qp *qp, const struct droce_send_wqe *wqe)
{
	struct droce_rdev_mw *mw = mw_lookup(dev, wqe->wr.bind.mw_handle << ROCE_MW_KEY_BITS);
	uint64_t addr = wqe->wr.bind.addr, length = wqe->wr.bind.length;
	uint32_t access = wqe->wr.bind.access;
	struct droce_rdev_mr *mr = NULL;

	if (mw == NULL || (access & ~MW_ACCESS_OK))
		return -EINVAL;
	/* o10-36.2.2: type 1 windows are never zero based */
	if (mw->type == IBV_MW_TYPE_1 && (access & IBV_ACCESS_ZERO_BASED))
		return -EINVAL;
	/* the consumer chooses the key, never the index */
	if ((wqe->wr.bind.rkey & ~ROCE_MW_KEY_MASK) != (mw->rkey & ~ROCE_MW_KEY_MASK))
		return -EINVAL;
	if (length != 0) {
		mr = roce_mr_lookup(dev, wqe->wr.bind.mr_lkey);
		if (mr == NULL)
			return -EINVAL;
	}
	if (mw->type == IBV_MW_TYPE_2) {
		/* o10-37.2.30: bound already; C10-72: the QP's PD; o10-37.2.40 */
		if (mw->state != ROCE_MW_FREE || qp->pd != mw->pd || mr == NULL)
			return -EINVAL;
	}
	if (mr != NULL) {
		/* C10-73: bind right; C10-74: a writable window on writable memory */
		if (mr->pd != mw->pd || !(mr->access & IBV_ACCESS_MW_BIND) ||
		    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
			return -EINVAL;
		/* C10-75: within the MR */
		if (addr < mr->iova || length > mr->length || addr - mr->iova > mr->length - length)
			return -EINVAL;
	}
	/* the MR being deregistered is gone for binds; the window stays as it was */
	if (mr != NULL && !mr_nmw_get(dev, mr->key >> ROCE_MR_GEN_BITS))
		return -EINVAL;
	mw_unbind(dev, mw);
	mw->rkey = wqe->wr.bind.rkey;
	mw->state = ROCE_MW_VALID;
	if (mr != NULL) {
		mw->mr_key = mr->key;
		mw->va = addr;
		mw->length = length;
		mw->access = access;
		if (mw->type == IBV_MW_TYPE_2)
			mw->qp_serial = qp->serial;
	}
	return 0;
}

/*
 * Invalidate the type 2 window @rkey names (engine): a LOCAL_INV WQE on
 * @qp, or a SEND_WITH_INV arriving on it (@remote: a 2B window only from
 * the QP it is bound to, so never through an XRC_RECV QP). 0, or -EINVAL:
 * not a bound type 2 window of @pd (the QP's, or an XRC request's SRQ's;
 * o10-37.2.26: type 1 windows are never invalidated), or an MR's key,
 * which droce never invalidates (it has no fast-registration MRs).
 */
int
roce_mw_invalidate(struct roce_dev *dev, const struct roce_qp *qp,
		   const struct droce_rdev_pd *pd, uint32_t rkey, bool remote)
{
	struct droce_rdev_mw *mw;

	if (rkey >> ROCE_MR_GEN_BITS)
		return -EINVAL;
	mw = mw_lookup(dev, rkey);
	if (mw == NULL || mw->rkey != rkey || mw->type != IBV_MW_TYPE_2 ||
	    mw->state != ROCE_MW_VALID || mw->pd != pd ||
	    (remote && (mw->qp_serial != qp->serial || qp->fp.type == IBV_QPT_XRC_RECV)))
		return -EINVAL;
	mw_unbind(dev, mw);
	mw->state = ROCE_MW_FREE;
	return 0;
}
