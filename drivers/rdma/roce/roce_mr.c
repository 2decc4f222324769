/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory keys: lookup, checks of PD, access and bounds, and SGE copies. */
#include <rte_memcpy.h>

#include "roce_loc.h"

struct roce_mr *
roce_mr_lookup(struct roce_dev *dev, uint32_t key)
{
	uint32_t idx = key >> ROCE_MR_GEN_BITS;
	struct roce_mr *mr;

	if (unlikely(idx >= DROCE_MAX_MR))
		return NULL;
	mr = __atomic_load_n(&dev->mr_tbl[idx], __ATOMIC_ACQUIRE);
	if (unlikely(mr == NULL || mr->key != key))
		return NULL;
	return mr;
}

/*
 * 0 when [addr, addr+len) lies in the MR named by @key, of @pd, allowing
 * @access (IBV_ACCESS_* bits; 0 = local read). Sets *host to the address.
 */
int
roce_mr_check(struct roce_dev *dev, const struct roce_pd *pd, uint32_t key,
	      uint64_t addr, uint64_t len, int access, uint8_t **host)
{
	struct roce_mr *mr = roce_mr_lookup(dev, key);

	if (unlikely(mr == NULL || mr->pd != pd || (mr->access & access) != access))
		return -EACCES;
	if (unlikely(addr < mr->iova || len > mr->length || addr - mr->iova > mr->length - len))
		return -EACCES;
	*host = mr->host + (addr - mr->iova);
	return 0;
}

/* Checks every SGE; on success rewrites each addr to its host address. */
int
roce_sge_check(struct roce_dev *dev, const struct roce_pd *pd,
	       const struct ibv_sge *sge, uint32_t n, int access)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *host;

		if (sge[i].length == 0)
			continue;
		if (roce_mr_check(dev, pd, sge[i].lkey, sge[i].addr, sge[i].length, access, &host))
			return -EACCES;
		((struct ibv_sge *)sge)[i].addr = (uintptr_t)host;
	}
	return 0;
}

/* Gather @len bytes starting @off bytes into the SGE list (checked, host addrs). */
void
roce_copy_from_sge(uint8_t *dst, const struct ibv_sge *sge, uint32_t off, uint32_t len)
{
	while (off >= sge->length && len) {
		off -= sge->length;
		sge++;
	}
	while (len) {
		uint32_t n = RTE_MIN(len, sge->length - off);

		rte_memcpy(dst, (const uint8_t *)(uintptr_t)sge->addr + off, n);
		dst += n;
		len -= n;
		off = 0;
		sge++;
	}
}

/* Scatter into an SGE list at @off; -EMSGSIZE if it does not fit. */
int
roce_copy_to_sge(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
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
		rte_memcpy((uint8_t *)(uintptr_t)sge[i].addr + off, src, n);
		src += n;
		len -= n;
		off = 0;
		i++;
	}
	return 0;
}
