/* SPDX-License-Identifier: BSD-3-Clause */
/* droce.h: topology helpers and counters. */
#include <stddef.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "droce.h"
#include "verbs_loc.h"

int
droce_ring_pair_create(const char *name_a, const char *name_b)
{
	static const char pfx[] = "net_ring_";
	char n[RTE_RING_NAMESIZE];
	struct rte_ring *ab, *ba;

	/* the ring PMD names its ports "net_ring_<name>" */
	if (strncmp(name_a, pfx, sizeof(pfx) - 1) || strncmp(name_b, pfx, sizeof(pfx) - 1) ||
	    strcmp(name_a, name_b) == 0)
		return -EINVAL;

	snprintf(n, sizeof(n), "drp_%.24s", name_a);
	ab = rte_ring_create(n, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(n, sizeof(n), "drp_%.24s", name_b);
	ba = rte_ring_create(n, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ab == NULL || ba == NULL)
		goto err;
	if (rte_eth_from_rings(name_a + sizeof(pfx) - 1, &ba, 1, &ab, 1, rte_socket_id()) < 0 ||
	    rte_eth_from_rings(name_b + sizeof(pfx) - 1, &ab, 1, &ba, 1, rte_socket_id()) < 0)
		goto err;
	return 0;
err:
	rte_ring_free(ab);
	rte_ring_free(ba);
	return rte_errno == EEXIST ? -EEXIST : -ENOMEM;
}

int
droce_dev_create(const char *name, const char *args)
{
	return rte_vdev_init(name, args);
}

int
droce_dev_destroy(const char *name)
{
	return rte_vdev_uninit(name);
}

int
droce_dev_stats_get(const char *name, struct droce_dev_stats *st)
{
	struct roce_dev *dev = roce_dev_by_name(name);
	const struct roce_stats *s;

	if (dev == NULL)
		return -ENODEV;
	s = &dev->stats;
	st->rx_pkts = s->rx_pkts;
	st->tx_pkts = s->tx_pkts;
	st->rx_bytes = s->rx_bytes;
	st->tx_bytes = s->tx_bytes;
	st->rx_drops = s->rx_drop_not_ip + s->rx_drop_not_mine + s->rx_drop_bad_ip +
		s->rx_drop_not_roce + s->rx_drop_truncated + s->rx_drop_bad_icrc +
		s->rx_drop_bad_bth + s->rx_drop_no_qp + s->rx_drop_bad_qkey +
		s->rx_drop_qp_state + s->rx_drop_no_wqe + s->rx_drop_seq + s->rx_drop_bad_len;
	st->rx_drop_bad_icrc = s->rx_drop_bad_icrc;
	st->rx_drop_truncated = s->rx_drop_truncated;
	st->rx_drop_no_qp = s->rx_drop_no_qp;
	st->retransmits = s->retransmits;
	st->rnr_naks_sent = s->rnr_naks_sent;
	return 0;
}

#define XS(f) { #f, offsetof(struct roce_stats, f) }
static const struct {
	const char *name;
	size_t off;
} xstats[] = {
	XS(rx_pkts), XS(tx_pkts), XS(rx_bytes), XS(tx_bytes), XS(rx_drop_not_ip),
	XS(rx_drop_not_mine), XS(rx_drop_bad_ip), XS(rx_drop_not_roce), XS(rx_drop_truncated),
	XS(rx_drop_bad_icrc), XS(rx_drop_bad_bth), XS(rx_drop_no_qp), XS(rx_drop_bad_qkey),
	XS(rx_drop_qp_state), XS(rx_drop_no_wqe), XS(rx_drop_seq), XS(rx_drop_bad_len),
	XS(rx_dup), XS(rx_arp), XS(rx_drop_bad_arp), XS(tx_arp), XS(tx_drop_no_mbuf), XS(tx_drop_full), XS(tx_busy),
	XS(tx_no_neigh), XS(cq_overflow), XS(retransmits), XS(rnr_naks_sent), XS(naks_sent),
	XS(naks_rcvd),
};

int
droce_dev_xstats(const char *name, const char **names, uint64_t *values, int n)
{
	struct roce_dev *dev = roce_dev_by_name(name);

	if (dev == NULL)
		return -ENODEV;
	for (int i = 0; i < n && i < (int)RTE_DIM(xstats); i++) {
		names[i] = xstats[i].name;
		values[i] = *(const uint64_t *)((const uint8_t *)&dev->stats + xstats[i].off);
	}
	return RTE_DIM(xstats);
}

int
droce_dev_objects_get(const char *name, struct droce_dev_objects *o)
{
	struct roce_dev *dev = roce_dev_by_name(name);

	if (dev == NULL)
		return -ENODEV;
	pthread_mutex_lock(&dev->lock);
	o->contexts = dev->ctx_refs;
	o->pds = dev->nb_pd;
	o->mrs = dev->nb_mr;
	o->cqs = dev->nb_cq;
	o->srqs = dev->nb_srq;
	o->qps = dev->nb_qp;
	o->ahs = dev->nb_ah;
	pthread_mutex_unlock(&dev->lock);
	/* inline progress: no iteration (nor the waker's) holds frames while we look */
	if (dev->lcore < 0)
		rte_spinlock_lock(&dev->inline_lock);
	o->mbufs_in_use = rte_mempool_in_use_count(dev->mp);
	o->mbufs_staged = __atomic_load_n(&dev->nb_tx, __ATOMIC_RELAXED);
	if (dev->lcore < 0)
		rte_spinlock_unlock(&dev->inline_lock);
	return 0;
}
