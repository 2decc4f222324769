/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory keys: lookup, checks of PD, access and bounds, and SGE copies. */
#include <stdlib.h>

#include "roce_loc.h"

/*
 * Gather @len bytes starting @off bytes into the SGE list (checked, host
 * addrs); -EFAULT when an ODP page is not there. With @crc, the bytes are
 * summed into that ICRC register as they are copied (roce_icrc_copy(); no
 * ODP MR may exist then: the caller checks roce_odp_mrs).
 */
int
roce_copy_from_sge_sum(uint8_t *dst, const struct ibv_sge *sge, uint32_t off, uint32_t len,
		       uint32_t *crc)
{
	sge = roce_sge_seek(sge, &off, len);
	while (len) {
		uint32_t n = RTE_MIN(len, sge->length - off);
		const uint8_t *src = (const uint8_t *)(uintptr_t)sge->addr + off;

		if (crc != NULL)
			*crc = roce_icrc_copy(*crc, dst, src, n);
		else if (roce_mem_copy(dst, src, n) != 0)
			return -EFAULT;
		dst += n;
		len -= n;
		off = 0;
		sge++;
	}
	return 0;
}

/*
 * Scatter into an SGE list at @off; -EMSGSIZE if it does not fit, -EFAULT
 * when an ODP page is not there.
 */
int
roce_copy_to_sges(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		  const uint8_t *src, uint32_t len)
{
	uint32_t i = 0;

	while (i < nsge && off >= sge[i].length) {
		off -= sge[i].length;
		i++;
	}
	while (len) {
		uint32_t n;

		if (i == nsge)
			return -EMSGSIZE;
		n = RTE_MIN(len, sge[i].length - off);
		if (roce_mem_copy((uint8_t *)(uintptr_t)sge[i].addr + off, src, n) != 0)
			return -EFAULT;
		src += n;
		len -= n;
		off = 0;
		i++;
	}
	return 0;
}

/* --- PD and MR objects (the pd_* and mr_* ops) --- */
int
roce_pd_alloc(struct droce_rdev *rdev, struct droce_rdev_pd **out, uint32_t *pdn)
{
	struct roce_dev *dev = to_roce_dev(rdev);
	struct droce_rdev_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_pd >= DROCE_MAX_PD) {
		pthread_mutex_unlock(&dev->lock);
		free(pd);
		return -ENOMEM;
	}
	dev->nb_pd++;
	pd->pdn = ++dev->pdn_next;
	pthread_mutex_unlock(&dev->lock);
	pd->dev = dev;
	*pdn = pd->pdn;
	*out = pd;
	return 0;
}

void
roce_pd_free(struct droce_rdev_pd *pd)
{
	pthread_mutex_lock(&pd->dev->lock);
	pd->dev->nb_pd--;
	pthread_mutex_unlock(&pd->dev->lock);
	free(pd);
}

/* The facade checked access, length and wrap-around. */
int
roce_mr_reg(struct droce_rdev_pd *pd, void *addr, uint64_t length, uint64_t iova, int access,
	    struct droce_rdev_mr **out, uint32_t *key)
{
	struct roce_dev *dev = pd->dev;
	struct droce_rdev_mr *mr = calloc(1, sizeof(*mr));
	uint32_t idx;
	int ret;

	if (mr == NULL)
		return -ENOMEM;
	if (access & IBV_ACCESS_ON_DEMAND) {
		ret = roce_odp_mr_add();
		if (ret != 0) {
			free(mr);
			return ret;
		}
	}
	pthread_mutex_lock(&dev->lock);
	/* a slot roce_mr_dereg still holds (ROCE_MR_NMW_DYING) is not free yet */
	for (idx = 1; idx < DROCE_MAX_MR &&
	     (dev->mr_tbl[idx] || __atomic_load_n(&dev->mr_nmw[idx], __ATOMIC_ACQUIRE)); idx++)
		;
	if (idx == DROCE_MAX_MR) {
		pthread_mutex_unlock(&dev->lock);
		if (access & IBV_ACCESS_ON_DEMAND)
			roce_odp_mr_del();
		free(mr);
		return -ENOMEM;
	}
	mr->pd = pd;
	mr->iova = iova;
	mr->length = length;
	mr->host = addr;
	mr->access = access;
	dev->mr_gen[idx] = (dev->mr_gen[idx] + 1) & ROCE_MR_GEN_MASK;
	mr->key = idx << ROCE_MR_GEN_BITS | dev->mr_gen[idx];
	__atomic_store_n(&dev->mr_tbl[idx], mr, __ATOMIC_RELEASE);
	dev->nb_mr++;
	pthread_mutex_unlock(&dev->lock);
	*key = mr->key;
	*out = mr;
	return 0;
}

/*
 * -EINVAL while windows are bound to it, as the kernel's rxe answers: a
 * window's MR is looked up by key at each access, so one deregistered
 * under it would only fail them, but the binding would outlive its MR.
 *
 * The engine binds (roce_mw_bind) while this runs on another thread. A
 * load of the count, then the removal, let a bind that had looked the MR
 * up count itself in between: the MR went, a window stayed bound to it,
 * and its count stayed in the slot for the next MR (whose dereg then
 * failed). So the count and the right to bind are one word: this call
 * claims it from 0 to ROCE_MR_NMW_DYING in one compare-and-swap, and a
 * bind adds itself only to a count without that bit (mr_nmw_get). Either
 * the bind comes first (this call fails) or this call does (the bind
 * fails: the MR is gone for it). The slot stays claimed until the
 * quiesce: no iteration still holds the MR, and no new MR takes the slot
 * before its count is 0 again.
 */
int
roce_mr_dereg(struct droce_rdev_mr *mr)
{
	struct roce_dev *dev = mr->pd->dev;
	uint32_t idx = mr->key >> ROCE_MR_GEN_BITS;
	uint32_t none = 0;

	if (!__atomic_compare_exchange_n(&dev->mr_nmw[idx], &none, ROCE_MR_NMW_DYING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mr_tbl[idx], NULL, __ATOMIC_RELEASE);
	dev->nb_mr--;
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	__atomic_store_n(&dev->mr_nmw[idx], 0, __ATOMIC_RELEASE);
	if (mr->access & IBV_ACCESS_ON_DEMAND)
		roce_odp_mr_del();
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr (the facade checked the arguments): the MR's attributes are
 * replaced as a whole, read-copy-update with the engine iteration as the
 * read side, so the engine never sees half a change. The key stays, as the
 * kernel's rxe keeps it (rxe_rereg_user_mr) and mlx5 does when it can:
 * peers need no new rkey, and an access through the old range or the old
 * rights fails the engine's bounds and access checks.
 */
int
roce_mr_rereg(struct droce_rdev_mr **io, int flags, struct droce_rdev_pd *pd, void *addr,
	      uint64_t length, uint64_t iova, int access)
{
	struct droce_rdev_mr *old = *io, *mr = malloc(sizeof(*mr));
	struct roce_dev *dev = old->pd->dev;

	if (mr == NULL)
		return -ENOMEM;
	*mr = *old;
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->host = addr;
		mr->length = length;
		mr->iova = iova;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		mr->access = access;
		/* becoming ODP: guarded from before the engine can see it */
		if ((access & IBV_ACCESS_ON_DEMAND) && !(old->access & IBV_ACCESS_ON_DEMAND) &&
		    roce_odp_mr_add() != 0) {
			free(mr);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mr_tbl[mr->key >> ROCE_MR_GEN_BITS], mr, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	/* no iteration still reads the old attributes */
	roce_dev_quiesce(dev);
	if ((old->access & IBV_ACCESS_ON_DEMAND) && !(mr->access & IBV_ACCESS_ON_DEMAND))
		roce_odp_mr_del();
	free(old);
	*io = mr;
	return 0;
}
