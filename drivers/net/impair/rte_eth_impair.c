/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_impair: a fault-injection ethdev that wraps an existing port and
 * drops, duplicates, reorders, corrupts and delays the packets that pass
 * through it, in the transmit direction, the receive direction or both.
 *
 * Data path model, per queue and per impaired direction:
 *
 *   packet -> drop? -> duplicate? -> corrupt? -> reorder slot -> FIFO -> out
 *
 * Every surviving packet (and every duplicate) enters a FIFO stamped with
 * its release time (now + delay). A burst call first feeds new packets in,
 * then hands out the FIFO head entries whose time has come. On transmit the
 * FIFO also absorbs what the underlying port did not take, so the return
 * value of tx_burst only ever counts packets this driver took ownership of;
 * when the FIFO is close to full, tx_burst accepts fewer packets and the
 * caller keeps the rest. Held packets are only released by later burst calls
 * on the same queue and direction (a tx_burst of zero packets is enough);
 * nothing here blocks, sleeps, locks or makes a system call.
 *
 * Random decisions come from one splitmix64 stream per impairment, per
 * queue and per direction, seeded from the seed devarg, the queue id and the
 * direction, and re-seeded when the port starts: the k-th packet through a
 * queue gets the same drop decision for a given seed whatever the burst
 * sizes, the timing, or the other impairments configured.
 *
 * The link can be taken down and brought back at run time (devarg link=,
 * droce_impair_link_set() in rte_pmd_impair.h, rte_eth_dev_set_link_down/up):
 * while it is down the port reports its link down, and every burst call
 * drops what its queue holds and every frame offered to it or read from the
 * underlying port, in both directions, whatever dir= says. Each change of
 * the reported status raises RTE_ETH_EVENT_INTR_LSC, as do changes of the
 * underlying port's link when that port interrupts on them; one whose link
 * never interrupts is taken as it was when the port started.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_spinlock.h>
#include <rte_string_fns.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>

#include "rte_pmd_impair.h"

#include "impair_loc.h"

#ifndef RTE_LOG_DEFAULT_LOGTYPE
#define RTE_LOG_DEFAULT_LOGTYPE pmd.net.impair
#endif
RTE_LOG_REGISTER_DEFAULT(impair_logtype, NOTICE);

static const char *const impair_xstat_names[IMPAIR_CNT_MAX] = {
	[IMPAIR_CNT_PASSED] = "impair_passed",
	[IMPAIR_CNT_DROPPED] = "impair_dropped",
	[IMPAIR_CNT_DUPLICATED] = "impair_duplicated",
	[IMPAIR_CNT_REORDERED] = "impair_reordered",
	[IMPAIR_CNT_CORRUPTED] = "impair_corrupted",
	[IMPAIR_CNT_DELAYED] = "impair_delayed",
	[IMPAIR_CNT_IN] = "impair_in",
	[IMPAIR_CNT_FLUSHED] = "impair_flushed",
	[IMPAIR_CNT_NOMEM] = "impair_nomem",
	[IMPAIR_CNT_LINK_DROPPED] = "impair_link_dropped",
};

/* ---------------------------------------------------------------------
 * Queue management (control path).
 */


static struct impair_queue *
impair_queue_create(struct rte_eth_dev *dev, uint16_t qid, bool is_tx,
		    uint16_t nb_desc, unsigned int socket_id)
{
	struct impair_priv *priv = dev->data->dev_private;
	bool active = (priv->cfg.dir & (is_tx ? IMPAIR_DIR_TX : IMPAIR_DIR_RX)) != 0;
	uint32_t slots = 0;
	size_t size = sizeof(struct impair_queue);
	struct impair_queue *q;

	if (active) {
		slots = rte_align32pow2(RTE_MAX((uint32_t)nb_desc * 2, IMPAIR_FIFO_MIN));
		size += (size_t)slots * (sizeof(struct rte_mbuf *) + sizeof(uint64_t));
	}
	q = rte_zmalloc_socket("impair_queue", size, RTE_CACHE_LINE_SIZE, (int)socket_id);
	if (q == NULL)
		return NULL;
	q->port = priv->under;
	q->qid = qid;
	q->own_port = dev->data->port_id;
	q->is_tx = is_tx;
	q->active = active;
	q->link_down = &priv->link_down;
	if (active) {
		q->fifo_t = (uint64_t *)(q + 1);
		q->fifo_m = (struct rte_mbuf **)(q->fifo_t + slots);
		q->mask = slots - 1;
		for (unsigned int s = 0; s < IMPAIR_RNG_MAX; s++)
			q->thr[s] = impair_threshold(priv->cfg.p[s]);
		q->delay_tsc = priv->delay_tsc;
		q->reorder_tsc = priv->reorder_tsc;
	}
	impair_queue_seed(q, priv->cfg.seed);
	return q;
}

static void
impair_queue_destroy(struct rte_eth_dev *dev, struct impair_queue *q)
{
	struct impair_priv *priv = dev->data->dev_private;

	if (q == NULL)
		return;
	impair_queue_flush(q);
	for (unsigned int c = 0; c < IMPAIR_CNT_MAX; c++)
		priv->retired[c] += q->cnt[c];
	rte_free(q);
}

static void
impair_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	impair_queue_destroy(dev, dev->data->rx_queues[qid]);
	dev->data->rx_queues[qid] = NULL;
}

static void
impair_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	impair_queue_destroy(dev, dev->data->tx_queues[qid]);
	dev->data->tx_queues[qid] = NULL;
}

static int
impair_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		      unsigned int socket_id, const struct rte_eth_rxconf *conf,
		      struct rte_mempool *mp)
{
	struct impair_priv *priv = dev->data->dev_private;
	struct impair_queue *q;
	int ret;

	ret = rte_eth_rx_queue_setup(priv->under, qid, nb_desc, socket_id, conf, mp);
	if (ret != 0) {
		IMPAIR_LOG(ERR, "%s: rx queue %u setup on %s failed: %d",
			   dev->data->name, qid, priv->cfg.ethdev, ret);
		return ret;
	}
	q = impair_queue_create(dev, qid, false, nb_desc, socket_id);
	if (q == NULL)
		return -ENOMEM;
	dev->data->rx_queues[qid] = q;
	return 0;
}

static int
impair_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		      unsigned int socket_id, const struct rte_eth_txconf *conf)
{
	struct impair_priv *priv = dev->data->dev_private;
	struct impair_queue *q;
	int ret;

	ret = rte_eth_tx_queue_setup(priv->under, qid, nb_desc, socket_id, conf);
	if (ret != 0) {
		IMPAIR_LOG(ERR, "%s: tx queue %u setup on %s failed: %d",
			   dev->data->name, qid, priv->cfg.ethdev, ret);
		return ret;
	}
	q = impair_queue_create(dev, qid, true, nb_desc, socket_id);
	if (q == NULL)
		return -ENOMEM;
	dev->data->tx_queues[qid] = q;
	return 0;
}

/* ---------------------------------------------------------------------
 * Device operations: mostly forwarded to the underlying port.
 */

static int
impair_dev_configure(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;
	struct rte_eth_conf conf = dev->data->dev_conf;
	int ret;

	/* our link interrupt is our own; the underlying port's only if it has one */
	if (!priv->under_lsc)
		conf.intr_conf.lsc = 0;
	ret = rte_eth_dev_configure(priv->under, dev->data->nb_rx_queues,
				    dev->data->nb_tx_queues, &conf);
	if (ret != 0)
		IMPAIR_LOG(ERR, "%s: configuring %s failed: %d",
			   dev->data->name, priv->cfg.ethdev, ret);
	return ret;
}

/*
 * Recompute the link the port shows: down while stopped or set down, else
 * the underlying port's. Returns 0 when its status changed, else -1 (what
 * the link_update op returns). The lock orders recomputations from several
 * threads (an application's query, droce_impair_link_set, the underlying
 * port's interrupt): the one that stores last read the latest setting.
 */
static int
impair_link_refresh(struct rte_eth_dev *dev, bool started, int wait_to_complete)
{
	struct impair_priv *priv = dev->data->dev_private;
	struct rte_eth_link link;
	int ret = -1;

	memset(&link, 0, sizeof(link));
	/* read outside the lock: waiting for the underlying link may take seconds */
	if (started)
		ret = wait_to_complete ? rte_eth_link_get(priv->under, &link) :
					 rte_eth_link_get_nowait(priv->under, &link);
	rte_spinlock_lock(&priv->link_lock);
	if (ret != 0 || __atomic_load_n(&priv->link_down, __ATOMIC_ACQUIRE)) {
		memset(&link, 0, sizeof(link));
		link.link_status = RTE_ETH_LINK_DOWN;
	}
	ret = rte_eth_linkstatus_set(dev, &link);
	rte_spinlock_unlock(&priv->link_lock);
	return ret;
}

static int
impair_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	return impair_link_refresh(dev, dev->data->dev_started, wait_to_complete);
}

/* Recompute the link; a change of its status goes to the LSC callbacks. */
static void
impair_link_changed(struct rte_eth_dev *dev)
{
	if (impair_link_refresh(dev, dev->data->dev_started, 0) == 0)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

/* Set the link down or up (the data path sees it at its next burst call). */
static void
impair_link_admin(struct rte_eth_dev *dev, bool up)
{
	struct impair_priv *priv = dev->data->dev_private;

	if (__atomic_exchange_n(&priv->link_down, up ? 0 : 1, __ATOMIC_ACQ_REL) == !up)
		return;
	IMPAIR_LOG(INFO, "%s: link set %s", dev->data->name, up ? "up" : "down");
	impair_link_changed(dev);
}

static int
impair_dev_set_link_up(struct rte_eth_dev *dev)
{
	impair_link_admin(dev, true);
	return 0;
}

static int
impair_dev_set_link_down(struct rte_eth_dev *dev)
{
	impair_link_admin(dev, false);
	return 0;
}

/* The underlying port's link changed: ours follows (unless set down). */
static int
impair_under_lsc(uint16_t port_id, enum rte_eth_event_type type, void *arg, void *ret_param)
{
	RTE_SET_USED(port_id);
	RTE_SET_USED(type);
	RTE_SET_USED(ret_param);
	impair_link_changed(arg);
	return 0;
}

static int
impair_dev_start(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;
	int ret;

	ret = rte_eth_dev_start(priv->under);
	if (ret != 0) {
		IMPAIR_LOG(ERR, "%s: starting %s failed: %d",
			   dev->data->name, priv->cfg.ethdev, ret);
		return ret;
	}
	for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) {
		if (dev->data->rx_queues[i] != NULL)
			impair_queue_seed(dev->data->rx_queues[i], priv->cfg.seed);
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	}
	for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) {
		if (dev->data->tx_queues[i] != NULL)
			impair_queue_seed(dev->data->tx_queues[i], priv->cfg.seed);
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	}
	/* dev_started is only set once this returns: take the link as it is */
	impair_link_refresh(dev, true, 0);
	return 0;
}

static void
impair_flush_all(struct rte_eth_dev *dev)
{
	for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
		if (dev->data->rx_queues[i] != NULL)
			impair_queue_flush(dev->data->rx_queues[i]);
	for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
		if (dev->data->tx_queues[i] != NULL)
			impair_queue_flush(dev->data->tx_queues[i]);
}

static int
impair_dev_stop(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;
	int ret;

	ret = rte_eth_dev_stop(priv->under);
	if (ret != 0)
		IMPAIR_LOG(WARNING, "%s: stopping %s failed: %d",
			   dev->data->name, priv->cfg.ethdev, ret);
	impair_flush_all(dev);
	for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	impair_link_refresh(dev, false, 0);
	return ret;
}

static int
impair_dev_close(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;
	char uname[RTE_ETH_NAME_MAX_LEN];
	int ret = 0;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY || priv->closed)
		return 0;
	priv->closed = true;

	for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
		impair_rx_queue_release(dev, i);
	for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
		impair_tx_queue_release(dev, i);
	/* waits for a forwarding callback that is running */
	while (priv->under_lsc &&
	       rte_eth_dev_callback_unregister(priv->under, RTE_ETH_EVENT_INTR_LSC,
					       impair_under_lsc, dev) == -EAGAIN)
		rte_pause();

	/* the port may already be gone if the application closed it itself */
	if (rte_eth_dev_is_valid_port(priv->under) &&
	    rte_eth_dev_get_name_by_port(priv->under, uname) == 0 &&
	    strcmp(uname, priv->cfg.ethdev) == 0) {
		rte_eth_dev_owner_unset(priv->under, priv->owner_id);
		if (rte_eth_devices[priv->under].data->dev_started)
			rte_eth_dev_stop(priv->under);
		ret = rte_eth_dev_close(priv->under);
		if (ret != 0)
			IMPAIR_LOG(WARNING, "%s: closing %s failed: %d",
				   dev->data->name, priv->cfg.ethdev, ret);
	}
	return ret;
}

static int
impair_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct impair_priv *priv = dev->data->dev_private;
	struct rte_eth_dev_info u;
	int ret;

	ret = rte_eth_dev_info_get(priv->under, &u);
	if (ret != 0)
		return ret;
	info->max_rx_pktlen = u.max_rx_pktlen;
	info->min_rx_bufsize = u.min_rx_bufsize;
	info->max_lro_pkt_size = u.max_lro_pkt_size;
	info->min_mtu = u.min_mtu;
	info->max_mtu = u.max_mtu;
	info->max_rx_queues = u.max_rx_queues;
	info->max_tx_queues = u.max_tx_queues;
	info->max_mac_addrs = 1;
	info->rx_offload_capa = u.rx_offload_capa;
	info->tx_offload_capa = u.tx_offload_capa;
	info->rx_queue_offload_capa = u.rx_queue_offload_capa;
	info->tx_queue_offload_capa = u.tx_queue_offload_capa;
	info->reta_size = u.reta_size;
	info->hash_key_size = u.hash_key_size;
	info->flow_type_rss_offloads = u.flow_type_rss_offloads;
	info->default_rxconf = u.default_rxconf;
	info->default_txconf = u.default_txconf;
	info->rx_desc_lim = u.rx_desc_lim;
	info->tx_desc_lim = u.tx_desc_lim;
	info->speed_capa = u.speed_capa;
	info->default_rxportconf = u.default_rxportconf;
	info->default_txportconf = u.default_txportconf;
	return 0;
}

static int
impair_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_stats_get(priv->under, stats);
}

static int
impair_stats_reset(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_stats_reset(priv->under);
}

static void
impair_totals(struct rte_eth_dev *dev, uint64_t *tot)
{
	struct impair_priv *priv = dev->data->dev_private;

	memcpy(tot, priv->retired, sizeof(priv->retired));
	for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct impair_queue *q = dev->data->rx_queues[i];

		for (unsigned int c = 0; q != NULL && c < IMPAIR_CNT_MAX; c++)
			tot[c] += q->cnt[c];
	}
	for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct impair_queue *q = dev->data->tx_queues[i];

		for (unsigned int c = 0; q != NULL && c < IMPAIR_CNT_MAX; c++)
			tot[c] += q->cnt[c];
	}
}

static int
impair_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats, unsigned int n)
{
	struct impair_priv *priv = dev->data->dev_private;
	uint64_t tot[IMPAIR_CNT_MAX];

	if (xstats == NULL || n < IMPAIR_CNT_MAX)
		return IMPAIR_CNT_MAX;
	impair_totals(dev, tot);
	for (unsigned int c = 0; c < IMPAIR_CNT_MAX; c++) {
		xstats[c].id = c;
		xstats[c].value = tot[c] - priv->base[c];
	}
	return IMPAIR_CNT_MAX;
}

static int
impair_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			unsigned int size)
{
	if (names == NULL || size < IMPAIR_CNT_MAX)
		return IMPAIR_CNT_MAX;
	for (unsigned int c = 0; c < IMPAIR_CNT_MAX; c++)
		strlcpy(names[c].name, impair_xstat_names[c], sizeof(names[c].name));
	return IMPAIR_CNT_MAX;
}

/* Counters are never written here, so resetting is safe while traffic runs. */
static int
impair_xstats_reset(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	impair_totals(dev, priv->base);
	rte_eth_stats_reset(priv->under);
	return 0;
}

static int
impair_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_dev_set_mtu(priv->under, mtu);
}

static int
impair_promiscuous_enable(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_promiscuous_enable(priv->under);
}

static int
impair_promiscuous_disable(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_promiscuous_disable(priv->under);
}

static int
impair_allmulticast_enable(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_allmulticast_enable(priv->under);
}

static int
impair_allmulticast_disable(struct rte_eth_dev *dev)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_allmulticast_disable(priv->under);
}

static int
impair_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	struct impair_priv *priv = dev->data->dev_private;

	return rte_eth_dev_default_mac_addr_set(priv->under, addr);
}

static const struct eth_dev_ops impair_ops = {
	.dev_configure = impair_dev_configure,
	.dev_start = impair_dev_start,
	.dev_stop = impair_dev_stop,
	.dev_close = impair_dev_close,
	.dev_set_link_up = impair_dev_set_link_up,
	.dev_set_link_down = impair_dev_set_link_down,
	.link_update = impair_link_update,
	.promiscuous_enable = impair_promiscuous_enable,
	.promiscuous_disable = impair_promiscuous_disable,
	.allmulticast_enable = impair_allmulticast_enable,
	.allmulticast_disable = impair_allmulticast_disable,
	.mac_addr_set = impair_mac_addr_set,
	.mtu_set = impair_mtu_set,
	.stats_get = impair_stats_get,
	.stats_reset = impair_stats_reset,
	.xstats_get = impair_xstats_get,
	.xstats_reset = impair_xstats_reset,
	.xstats_get_names = impair_xstats_get_names,
	.dev_infos_get = impair_dev_infos_get,
	.rx_queue_setup = impair_rx_queue_setup,
	.rx_queue_release = impair_rx_queue_release,
	.tx_queue_setup = impair_tx_queue_setup,
	.tx_queue_release = impair_tx_queue_release,
};

/* ---------------------------------------------------------------------
 * Probe and remove.
 */

static void
impair_set_burst(struct rte_eth_dev *eth_dev, unsigned int dir)
{
	eth_dev->rx_pkt_burst = (dir & IMPAIR_DIR_RX) ? impair_rx : impair_rx_pass;
	eth_dev->tx_pkt_burst = (dir & IMPAIR_DIR_TX) ? impair_tx : impair_tx_pass;
}

static int
impair_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev_owner owner;
	struct rte_eth_dev *eth_dev;
	struct impair_priv *priv;
	struct impair_cfg cfg;
	struct rte_eth_dev_info uinfo;
	uint16_t under;
	uint64_t hz;
	int ret;

	if (rte_eal_process_type() == RTE_PROC_SECONDARY) {
		eth_dev = rte_eth_dev_attach_secondary(name);
		if (eth_dev == NULL) {
			IMPAIR_LOG(ERR, "%s: cannot attach to the primary's port", name);
			return -ENODEV;
		}
		priv = eth_dev->data->dev_private;
		eth_dev->dev_ops = &impair_ops;
		eth_dev->device = &vdev->device;
		impair_set_burst(eth_dev, priv->cfg.dir);
		rte_eth_dev_probing_finish(eth_dev);
		return 0;
	}

	ret = impair_args_parse(name, rte_vdev_device_args(vdev), &cfg);
	if (ret != 0)
		return ret;
	if (rte_eth_dev_get_port_by_name(cfg.ethdev, &under) != 0) {
		IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: no such port",
			   name, IMPAIR_ARG_ETHDEV, cfg.ethdev);
		return -ENODEV;
	}

	/* Owning the port hides it from applications and stops a second wrap. */
	memset(&owner, 0, sizeof(owner));
	if (rte_eth_dev_owner_new(&owner.id) != 0)
		return -EIO;
	strlcpy(owner.name, name, sizeof(owner.name));
	ret = rte_eth_dev_owner_set(under, &owner);
	if (ret != 0) {
		IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: port is already in use",
			   name, IMPAIR_ARG_ETHDEV, cfg.ethdev);
		return -EBUSY;
	}

	eth_dev = rte_eth_vdev_allocate(vdev, sizeof(*priv));
	if (eth_dev == NULL) {
		ret = -ENOMEM;
		goto fail_owner;
	}
	eth_dev->data->mac_addrs = rte_zmalloc_socket(name, sizeof(struct rte_ether_addr),
						      0, vdev->device.numa_node);
	if (eth_dev->data->mac_addrs == NULL) {
		ret = -ENOMEM;
		goto fail_port;
	}
	rte_eth_macaddr_get(under, eth_dev->data->mac_addrs);

	priv = eth_dev->data->dev_private;
	priv->cfg = cfg;
	priv->under = under;
	priv->owner_id = owner.id;
	hz = rte_get_tsc_hz();
	priv->delay_tsc = cfg.delay_us * hz / 1000000;
	if (cfg.delay_us != 0 && priv->delay_tsc == 0)
		priv->delay_tsc = 1;
	priv->reorder_tsc = RTE_MAX((uint64_t)IMPAIR_REORDER_US * hz / 1000000, (uint64_t)1);
	priv->link_down = cfg.link_down;
	rte_spinlock_init(&priv->link_lock);

	/*
	 * Our own link changes (link set down or up) interrupt; the underlying
	 * port's are passed on where it has an interrupt for them.
	 */
	priv->under_lsc = rte_eth_dev_info_get(under, &uinfo) == 0 &&
			  (*uinfo.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0;
	if (priv->under_lsc) {
		ret = rte_eth_dev_callback_register(under, RTE_ETH_EVENT_INTR_LSC,
						    impair_under_lsc, eth_dev);
		if (ret != 0) {
			IMPAIR_LOG(ERR, "%s: cannot watch the link of %s: %d", name,
				   cfg.ethdev, ret);
			goto fail_port;
		}
	}
	eth_dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC;
	eth_dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	eth_dev->data->dev_link.link_autoneg = RTE_ETH_LINK_AUTONEG;
	eth_dev->dev_ops = &impair_ops;
	impair_set_burst(eth_dev, cfg.dir);
	rte_eth_dev_probing_finish(eth_dev);

	IMPAIR_LOG(INFO, "%s: wraps %s (port %u) dir=%s drop=%g dup=%g reorder=%g "
		   "corrupt=%g delay_us=%" PRIu64 " seed=%" PRIu64 " link=%s",
		   name, cfg.ethdev, under,
		   cfg.dir == IMPAIR_DIR_TX ? "tx" : cfg.dir == IMPAIR_DIR_RX ? "rx" : "both",
		   cfg.p[IMPAIR_RNG_DROP], cfg.p[IMPAIR_RNG_DUP], cfg.p[IMPAIR_RNG_REORDER],
		   cfg.p[IMPAIR_RNG_CORRUPT], cfg.delay_us, cfg.seed,
		   cfg.link_down ? "down" : "up");
	return 0;

fail_port:
	rte_eth_dev_release_port(eth_dev);
fail_owner:
	rte_eth_dev_owner_unset(under, owner.id);
	return ret;
}

static int
impair_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth_dev;

	eth_dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	if (eth_dev == NULL)
		return 0;	/* already closed */
	if (rte_eal_process_type() == RTE_PROC_PRIMARY) {
		if (eth_dev->data->dev_started) {
			impair_dev_stop(eth_dev);
			eth_dev->data->dev_started = 0;
		}
		impair_dev_close(eth_dev);
	}
	return rte_eth_dev_release_port(eth_dev);
}

/* ---------------------------------------------------------------------
 * Private API (rte_pmd_impair.h).
 */

int
droce_impair_link_set(uint16_t port_id, int up)
{
	struct rte_eth_dev *dev;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	dev = &rte_eth_devices[port_id];
	if (dev->dev_ops != &impair_ops)
		return -EINVAL;
	impair_link_admin(dev, up != 0);
	return 0;
}

int
droce_impair_fault_set(uint16_t port_id, const char *params)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct impair_priv *priv;
	struct rte_eth_dev *dev;
	struct impair_cfg cfg;
	uint64_t delay_tsc;
	int ret;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	dev = &rte_eth_devices[port_id];
	if (dev->dev_ops != &impair_ops)
		return -EINVAL;
	priv = dev->data->dev_private;
	pthread_mutex_lock(&lock);
	cfg = priv->cfg;
	ret = impair_args_update(dev->data->name, params, &cfg);
	if (ret != 0)
		goto out;
	delay_tsc = cfg.delay_us * rte_get_tsc_hz() / 1000000;
	if (cfg.delay_us != 0 && delay_tsc == 0)
		delay_tsc = 1;
	priv->cfg = cfg;
	priv->delay_tsc = delay_tsc;
	/*
	 * The queues' copies, which the bursts read: each a 64-bit store the
	 * data path reads whole, at its next packet. A direction dir= left
	 * alone at probe has no queue able to delay or reorder: unchanged.
	 */
	for (int tx = 0; tx < 2; tx++) {
		uint16_t nq = tx ? dev->data->nb_tx_queues : dev->data->nb_rx_queues;

		for (uint16_t i = 0; i < nq; i++) {
			struct impair_queue *q = tx ? dev->data->tx_queues[i] : dev->data->rx_queues[i];

			if (q == NULL || !q->active)
				continue;
			for (unsigned int k = 0; k < IMPAIR_RNG_MAX; k++)
				__atomic_store_n(&q->thr[k], impair_threshold(cfg.p[k]), __ATOMIC_RELAXED);
			__atomic_store_n(&q->delay_tsc, delay_tsc, __ATOMIC_RELAXED);
		}
	}
	IMPAIR_LOG(INFO, "%s: drop=%g dup=%g reorder=%g corrupt=%g delay_us=%" PRIu64,
		   dev->data->name, cfg.p[IMPAIR_RNG_DROP], cfg.p[IMPAIR_RNG_DUP],
		   cfg.p[IMPAIR_RNG_REORDER], cfg.p[IMPAIR_RNG_CORRUPT], cfg.delay_us);
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

static struct rte_vdev_driver impair_vdev_drv = {
	.probe = impair_probe,
	.remove = impair_remove,
};

RTE_PMD_REGISTER_VDEV(net_impair, impair_vdev_drv);
RTE_PMD_REGISTER_PARAM_STRING(net_impair,
	"ethdev=<name> "
	"drop=<0..1> "
	"dup=<0..1> "
	"reorder=<0..1> "
	"corrupt=<0..1> "
	"delay_us=<int> "
	"seed=<u64> "
	"dir=tx|rx|both "
	"link=up|down");
