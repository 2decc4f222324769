/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast (IBA 10.5; RoCEv2 over IPv4, annex A17): the groups a
 * device's UD QPs are attached to (ibv_attach_mcast), the port's multicast
 * filter, and the delivery of a packet sent to a group: a copy, behind its
 * GRH, in the receive queue of every QP attached to it here.
 *
 * The engine reads a group through roce_mcg_find() without a lock; the
 * control path changes it by read-copy-update (struct roce_mcg).
 */
#include <rte_ethdev.h>

#include "roce_loc.h"

/* The group an IPv4-mapped multicast GID (::ffff:224.0.0.0/100) names, or 0. */
static rte_be32_t
gid_group(const union ibv_gid *gid)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	rte_be32_t ip;

	if (memcmp(gid->raw, v4mapped, sizeof(v4mapped)) != 0)
		return 0;
	memcpy(&ip, &gid->raw[12], sizeof(ip));
	return roce_ip_is_mcast(ip) ? ip : 0;
}

/*
 * The port's multicast filter: the MACs of the groups attached, or, on a
 * port without a filter list (-ENOTSUP: net_ring, net_memif, af_packet...)
 * or whose list is too short, every multicast frame while any group is
 * attached. A port that has neither delivers what its link carries (and
 * droce runs its ports promiscuous): the receive path checks every frame.
 */
static void
port_filter_set(struct roce_dev *dev)
{
	struct rte_ether_addr mac[DROCE_MAX_MCAST_GRP];
	uint32_t n = 0;
	int ret;

	for (uint32_t i = 0; i < dev->mcg_hi; i++) {
		const struct roce_mcg *g = dev->mcg_tbl[i];
		uint32_t j;

		if (g == NULL)
			continue;
		/* groups 32 apart in their fifth bit share a MAC */
		for (j = 0; j < n && !rte_is_same_ether_addr(&mac[j], &g->mac); j++)
			;
		if (j == n)
			mac[n++] = g->mac;
	}
	ret = rte_eth_dev_set_mc_addr_list(dev->port_id, mac, n);
	if (ret == 0) {
		if (dev->mc_allmulti && rte_eth_allmulticast_disable(dev->port_id) == 0)
			dev->mc_allmulti = false;
		return;
	}
	if (n > 0 && !dev->mc_allmulti && rte_eth_allmulticast_get(dev->port_id) != 1) {
		int ret2 = rte_eth_allmulticast_enable(dev->port_id);

		if (ret2 == 0)
			dev->mc_allmulti = true;
		else
			ROCE_LOG(DEBUG, "%s: %s has no multicast filter (%s) nor allmulticast (%s)",
				 dev->name, dev->ethdev_name, rte_strerror(-ret),
				 rte_strerror(-ret2));
	} else if (n == 0 && dev->mc_allmulti) {
		if (rte_eth_allmulticast_disable(dev->port_id) == 0)
			dev->mc_allmulti = false;
	}
}

/* The slot of group @ip, else DROCE_MAX_MCAST_GRP and a free slot in *@free. */
static uint32_t
group_slot(struct roce_dev *dev, rte_be32_t ip, uint32_t *free)
{
	*free = DROCE_MAX_MCAST_GRP;
	for (uint32_t i = 0; i < DROCE_MAX_MCAST_GRP; i++) {
		const struct roce_mcg *g = dev->mcg_tbl[i];

		if (g != NULL && g->ip == ip)
			return i;
		if (g == NULL && *free == DROCE_MAX_MCAST_GRP)
			*free = i;
	}
	return DROCE_MAX_MCAST_GRP;
}

/*
 * The copy of slot @i the engine cannot be reading (every change waited
 * for the engine before the lock was released).
 */
static struct roce_mcg *
group_spare(struct roce_dev *dev, uint32_t i)
{
	return dev->mcg_tbl[i] == &dev->mcg_buf[i][0] ? &dev->mcg_buf[i][1] : &dev->mcg_buf[i][0];
}

static void
group_publish(struct roce_dev *dev, uint32_t i, struct roce_mcg *g)
{
	__atomic_store_n(&dev->mcg_tbl[i], g, __ATOMIC_RELEASE);
	if (g != NULL && i + 1 > dev->mcg_hi)
		__atomic_store_n(&dev->mcg_hi, i + 1, __ATOMIC_RELEASE);
}

/* Group slot @i without @qp (an empty group frees its slot). */
static void
group_remove(struct roce_dev *dev, uint32_t i, const struct roce_qp *qp)
{
	const struct roce_mcg *old = dev->mcg_tbl[i];
	struct roce_mcg *g;

	if (old->nqp == 1) {
		group_publish(dev, i, NULL);
	} else {
		g = group_spare(dev, i);
		g->ip = old->ip;
		g->mac = old->mac;
		g->nqp = 0;
		for (uint32_t k = 0; k < old->nqp; k++)
			if (old->qp[k] != qp)
				g->qp[g->nqp++] = old->qp[k];
		group_publish(dev, i, g);
	}
	dev->nb_mcast_attach--;
}

static bool
group_has(const struct roce_mcg *g, const struct roce_qp *qp)
{
	for (uint32_t k = 0; k < g->nqp; k++)
		if (g->qp[k] == qp)
			return true;
	return false;
}

int
roce_mcast_attach(struct droce_rdev_qp *fp, const union ibv_gid *gid)
{
	struct roce_qp *qp = to_roce_qp(fp);
	struct roce_dev *dev = qp->dev;
	rte_be32_t ip = gid_group(gid);
	const struct roce_mcg *old;
	struct roce_mcg *g;
	uint32_t i, free;
	int ret = 0;

	/* QP1 is the GSI QP, a UD QP to the facade only */
	if (ip == 0 || qp->fp.type != IBV_QPT_UD || qp->fp.qpn == DROCE_GSI_QPN)
		return -EINVAL;
	pthread_mutex_lock(&dev->mcast_lock);
	i = group_slot(dev, ip, &free);
	old = i < DROCE_MAX_MCAST_GRP ? dev->mcg_tbl[i] : NULL;
	if (old != NULL && group_has(old, qp))
		goto out;		/* attached already: not an error (rdma-core's providers) */
	if ((old == NULL && free == DROCE_MAX_MCAST_GRP) ||
	    (old != NULL && old->nqp == DROCE_MAX_MCAST_QP_ATTACH) ||
	    dev->nb_mcast_attach == DROCE_MAX_MCAST_TOTAL) {
		ret = -ENOMEM;
		goto out;
	}
	if (old == NULL) {
		i = free;
		g = group_spare(dev, i);
		g->ip = ip;
		roce_mcast_mac(ip, &g->mac);
		g->nqp = 0;
	} else {
		g = group_spare(dev, i);
		*g = *old;
	}
	g->qp[g->nqp++] = qp;
	group_publish(dev, i, g);
	dev->nb_mcast_attach++;
	if (old == NULL)
		port_filter_set(dev);
	roce_dev_quiesce(dev);	/* the old copy is free for the next change */
out:
	pthread_mutex_unlock(&dev->mcast_lock);
	return ret;
}

int
roce_mcast_detach(struct droce_rdev_qp *fp, const union ibv_gid *gid)
{
	struct roce_qp *qp = to_roce_qp(fp);
	struct roce_dev *dev = qp->dev;
	rte_be32_t ip = gid_group(gid);
	uint32_t i, free;
	int ret = 0;

	if (ip == 0)
		return -EINVAL;
	pthread_mutex_lock(&dev->mcast_lock);
	i = group_slot(dev, ip, &free);
	if (i == DROCE_MAX_MCAST_GRP || !group_has(dev->mcg_tbl[i], qp)) {
		ret = -EINVAL;		/* not attached (the kernel's uverbs and rxe) */
		goto out;
	}
	group_remove(dev, i, qp);
	if (dev->mcg_tbl[i] == NULL)
		port_filter_set(dev);
	roce_dev_quiesce(dev);
out:
	pthread_mutex_unlock(&dev->mcast_lock);
	return ret;
}

/*
 * @qp is being destroyed: it leaves every group, and once this returns no
 * engine iteration can reach it through one.
 */
void
roce_mcast_qp_gone(struct roce_qp *qp)
{
	struct roce_dev *dev = qp->dev;
	bool changed = false, emptied = false;

	if (qp->fp.type != IBV_QPT_UD)
		return;
	pthread_mutex_lock(&dev->mcast_lock);
	for (uint32_t i = 0; i < dev->mcg_hi; i++) {
		if (dev->mcg_tbl[i] == NULL || !group_has(dev->mcg_tbl[i], qp))
			continue;
		group_remove(dev, i, qp);
		changed = true;
		emptied |= dev->mcg_tbl[i] == NULL;
	}
	if (emptied)
		port_filter_set(dev);
	if (changed)
		roce_dev_quiesce(dev);
	pthread_mutex_unlock(&dev->mcast_lock);
}

/*
 * A packet to a multicast group (roce_recv.c checked Ethernet, IPv4, UDP,
 * ICRC, the BTH and that the frame's MAC is the group's): to every QP
 * attached to the group on this device, each checking its own state and
 * Q_Key and taking its own receive WQE (roce_resp_rcv). On a device shared
 * by forked processes, the QPs of this process; with @fwd, a copy goes to
 * each other process with QPs in the group.
 */
void
roce_mcast_rcv(struct roce_q *q, struct roce_pkt *pkt, bool fwd)
{
	struct roce_dev *dev = q->dev;
	const struct roce_mcg *g;
	uint64_t others = 0;

	/*
	 * IBA 10.5: only unreliable datagrams are multicast, and a multicast
	 * packet names the multicast QPN, never a QP of ours.
	 */
	if (bth_qpn(pkt->bth) != DROCE_MCAST_QPN ||
	    roce_op_transport(pkt->opcode) != IBV_OPCODE_UD) {
		q->stats.rx_drop_no_qp++;
		return;
	}
	g = roce_mcg_find(dev, pkt->ip->dst_addr);
	if (g == NULL) {
		q->stats.rx_drop_mcast++;
		return;
	}
	q->stats.rx_mcast++;
	for (uint32_t k = 0; k < g->nqp; k++) {
		/* another process's QP (roce_share.c): that process delivers to it */
		if (unlikely(dev->share_on) && g->qp[k]->owner != roce_share_owner()) {
			others |= UINT64_C(1) << g->qp[k]->owner;
			continue;
		}
		roce_qp_cnt_rx(g->qp[k], pkt->m);
		roce_resp_rcv(dev, g->qp[k], pkt);
	}
	/* a copy for each of those processes, unless the frame came from one */
	for (uint32_t o = 0; fwd && others != 0; o++, others >>= 1) {
		struct rte_mbuf *c;

		if (!(others & 1))
			continue;
		c = rte_pktmbuf_copy(pkt->m, dev->mp, 0, UINT32_MAX);
		if (c == NULL) {
			q->stats.share_drop++;
			continue;
		}
		roce_mbuf_takeover(c);
		if (!roce_share_fwd(dev, o, c))
			roce_mbuf_free(c);
	}
}
