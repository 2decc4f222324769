/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device's own ethdev port, as a bifurcated NIC has a network function
 * beside its RDMA one: a droce device "droce0" registers an ethdev port of
 * the same name (devarg ethport=0 leaves it out). It is a working port with
 * one rx and one tx queue, the MAC and MTU of the owned port:
 *  - rx: frames that arrive on the owned port and are not droce's (not
 *    RoCEv2 to its IP, ARP about other IPs; roce_recv.c decides) go to the
 *    port's rx ring; the engine enqueues, rx_burst dequeues;
 *  - tx: tx_burst enqueues on the tx ring, the engine sends those frames on
 *    the owned port with its own (the owned port's queue is the engine's);
 *  - xstats: the device's counters, the names and values droce_dev_xstats
 *    gives.
 * A started port holds the device's progress (an engine lcore, or inline):
 * with inline progress, rx_burst and tx_burst run an engine iteration when
 * no one else does (the inline lock, taken with trylock), so frames move
 * whether or not the application also uses verbs.
 *
 * The frames rx_burst returns come from the device's mbuf pool whatever
 * pool the queue was set up with: the owned port fills them.
 */
#include <errno.h>
#include <string.h>

#include <ethdev_driver.h>
#include <rte_malloc.h>

#include "roce_loc.h"

#define ETH_RING_SIZE	1024	/* frames each way between the engine and the port */
#define ETH_XSTATS_MAX	128	/* room for the device's counters (roce_rdev.c) */

static const struct eth_dev_ops roce_eth_ops;

static struct roce_dev *
eth_roce(const struct rte_eth_dev *ethdev)
{
	return *(struct roce_dev **)ethdev->data->dev_private;
}

/* --- Fast path: the engine's side --- */

/*
 * A frame from the owned port that droce does not consume: to the port's rx
 * ring if the port is started and its filters take it (a frame to another
 * unicast MAC needs promiscuous mode, a multicast one other than broadcast
 * all-multicast or promiscuous). True if taken; else the caller drops and
 * counts it.
 */
bool
roce_eth_rx(struct roce_dev *dev, struct rte_mbuf *m)
{
	struct roce_eth *e = &dev->eth;
	const struct rte_ether_hdr *eth;

	if (!roce_eth_running(dev))
		return false;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (rte_is_multicast_ether_addr(&eth->dst_addr)) {
		if (!rte_is_broadcast_ether_addr(&eth->dst_addr) &&
		    !__atomic_load_n(&e->allmulti, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&e->promisc, __ATOMIC_RELAXED))
			return false;
	} else if (!rte_is_same_ether_addr(&eth->dst_addr, &dev->mac) &&
		   !__atomic_load_n(&e->promisc, __ATOMIC_RELAXED)) {
		return false;
	}
	roce_mbuf_handoff(m);
	if (rte_ring_sp_enqueue(e->rx, m) != 0) {
		roce_mbuf_takeover(m);
		ROCE_CNT_INC(e->imissed);
		return false;
	}
	ROCE_CNT_INC(dev->q0.stats.rx_ethdev);	/* queue 0's: the others hand it these frames */
	return true;
}

/*
 * The application's frames, into the staging area with droce's own (flushed
 * at the end of the iteration). Like droce's data they leave the slots ACKs
 * and NAKs may need (ROCE_TX_CTRL_RESERVE), and take what room remains after
 * a flush; the rest wait in the ring: frames are never dropped here.
 */
void
roce_eth_tx_run(struct roce_dev *dev)
{
	struct roce_q *q = &dev->q0;
	const unsigned int avail = RTE_DIM(q->tx) - ROCE_TX_CTRL_RESERVE;
	struct rte_mbuf *pkts[DROCE_BURST];
	unsigned int room, n;

	if (q->nb_tx + (unsigned int)DROCE_BURST > avail)
		roce_tx_flush(q);
	if (q->nb_tx >= avail)
		return;
	room = RTE_MIN(avail - q->nb_tx, (unsigned int)DROCE_BURST);
	n = rte_ring_sc_dequeue_burst(dev->eth.tx, (void **)pkts, room, NULL);
	if (n == 0)
		return;
	for (unsigned int i = 0; i < n; i++) {
		roce_mbuf_takeover(pkts[i]);
		q->tx[q->nb_tx + i] = pkts[i];
	}
	if (unlikely(__atomic_load_n(&dev->cap, __ATOMIC_RELAXED) != NULL))
		roce_capture_burst(q, pkts, n, true);
	ROCE_CNT_ADD(q->stats.tx_ethdev, n);
	/* atomic: droce_dev_objects_get reads it from another thread */
	__atomic_store_n(&q->nb_tx, q->nb_tx + n, __ATOMIC_RELAXED);
}

/* --- Fast path: the application's side --- */

/* Inline progress: one engine iteration, unless one runs already. */
static inline void
eth_progress(struct roce_dev *dev)
{
	if (roce_engine_lcore(dev) < 0 && roce_inline_trylock(dev)) {
		roce_q_poll(&dev->q0);	/* the application's frames are queue 0's */
		roce_inline_unlock(dev);
	}
}

static uint16_t
eth_rx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct roce_eth *e = q;
	uint64_t bytes = 0;
	unsigned int got;

	if (unlikely(!roce_eth_running(e->dev)))
		return 0;
	eth_progress(e->dev);
	got = rte_ring_sc_dequeue_burst(e->rx, (void **)pkts, n, NULL);
	for (unsigned int i = 0; i < got; i++) {
		roce_mbuf_takeover(pkts[i]);
		bytes += pkts[i]->pkt_len;
	}
	/* one reader thread per queue: single-writer counters (stats_get reads them) */
	ROCE_CNT_ADD(e->ipackets, got);
	ROCE_CNT_ADD(e->ibytes, bytes);
	return got;
}

static uint16_t
eth_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct roce_eth *e = q;
	uint64_t bytes = 0;
	unsigned int sent;

	if (unlikely(!roce_eth_running(e->dev)))
		return 0;
	/* the lengths before the engine may have sent and freed the frames */
	for (uint16_t i = 0; i < n; i++) {
		bytes += pkts[i]->pkt_len;
		roce_mbuf_handoff(pkts[i]);
	}
	sent = rte_ring_mp_enqueue_burst(e->tx, (void **)pkts, n, NULL);
	for (uint16_t i = sent; i < n; i++) {
		roce_mbuf_takeover(pkts[i]);
		bytes -= pkts[i]->pkt_len;
	}
	__atomic_fetch_add(&e->opackets, sent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&e->obytes, bytes, __ATOMIC_RELAXED);
	/* inline progress: out now, not at the application's next call */
	if (sent)
		eth_progress(e->dev);
	return sent;
}

/* --- Control path --- */

static int
eth_infos_get(struct rte_eth_dev *ethdev, struct rte_eth_dev_info *info)
{
	struct roce_dev *dev = eth_roce(ethdev);

	info->max_mac_addrs = 1;
	info->max_rx_queues = 1;
	info->max_tx_queues = 1;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = dev->mtu;
	info->max_rx_pktlen = (uint32_t)dev->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	info->min_rx_bufsize = 0;
	info->rx_desc_lim.nb_max = ETH_RING_SIZE;
	info->tx_desc_lim.nb_max = ETH_RING_SIZE;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	info->tx_queue_offload_capa = 0;
	info->speed_capa = RTE_ETH_LINK_SPEED_FIXED;
	return 0;
}

static int
eth_configure(struct rte_eth_dev *ethdev)
{
	RTE_SET_USED(ethdev);
	return 0;
}

static int
eth_rx_queue_setup(struct rte_eth_dev *ethdev, uint16_t qid, uint16_t nb_desc,
		   unsigned int socket, const struct rte_eth_rxconf *conf, struct rte_mempool *mp)
{
	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	RTE_SET_USED(mp);
	ethdev->data->rx_queues[qid] = &eth_roce(ethdev)->eth;
	return 0;
}

static int
eth_tx_queue_setup(struct rte_eth_dev *ethdev, uint16_t qid, uint16_t nb_desc,
		   unsigned int socket, const struct rte_eth_txconf *conf)
{
	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	ethdev->data->tx_queues[qid] = &eth_roce(ethdev)->eth;
	return 0;
}

/* The queues are the device's rings, which live as long as the device. */
static void
eth_queue_release(struct rte_eth_dev *ethdev, uint16_t qid)
{
	RTE_SET_USED(ethdev);
	RTE_SET_USED(qid);
}

static void
eth_drain(struct rte_ring *r)
{
	struct rte_mbuf *m;

	while (rte_ring_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

/* The owned port's link while started, else down. */
static int
eth_link_update(struct rte_eth_dev *ethdev, int wait)
{
	struct roce_dev *dev = eth_roce(ethdev);
	struct rte_eth_link link = { .link_status = RTE_ETH_LINK_DOWN };

	RTE_SET_USED(wait);
	if (ethdev->data->dev_started && rte_eth_link_get_nowait(dev->port_id, &link) != 0)
		link.link_status = RTE_ETH_LINK_DOWN;
	if (!ethdev->data->dev_started) {
		link.link_speed = RTE_ETH_SPEED_NUM_NONE;
		link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
		link.link_autoneg = RTE_ETH_LINK_FIXED;
	}
	return rte_eth_linkstatus_set(ethdev, &link);
}

static int
eth_start(struct rte_eth_dev *ethdev)
{
	struct roce_dev *dev = eth_roce(ethdev);
	int ret = roce_dev_progress_get(dev);

	if (ret)
		return ret;
	__atomic_store_n(&dev->eth.running, 1, __ATOMIC_RELEASE);
	ethdev->data->rx_queue_state[0] = RTE_ETH_QUEUE_STATE_STARTED;
	ethdev->data->tx_queue_state[0] = RTE_ETH_QUEUE_STATE_STARTED;
	ethdev->data->dev_started = 1;
	eth_link_update(ethdev, 0);
	return 0;
}

/* No iteration hands frames over or takes them once the engine is quiesced. */
static int
eth_stop(struct rte_eth_dev *ethdev)
{
	struct roce_dev *dev = eth_roce(ethdev);

	if (!__atomic_load_n(&dev->eth.running, __ATOMIC_ACQUIRE))
		return 0;
	__atomic_store_n(&dev->eth.running, 0, __ATOMIC_RELEASE);
	roce_dev_quiesce(dev);
	eth_drain(dev->eth.rx);
	eth_drain(dev->eth.tx);
	roce_dev_progress_put(dev);
	ethdev->data->rx_queue_state[0] = RTE_ETH_QUEUE_STATE_STOPPED;
	ethdev->data->tx_queue_state[0] = RTE_ETH_QUEUE_STATE_STOPPED;
	ethdev->data->dev_started = 0;
	eth_link_update(ethdev, 0);
	return 0;
}

/* rte_eth_dev_close releases the port after this: the device forgets it. */
static int
eth_close(struct rte_eth_dev *ethdev)
{
	struct roce_dev *dev = eth_roce(ethdev);

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	eth_stop(ethdev);
	__atomic_store_n(&dev->eth.present, false, __ATOMIC_RELEASE);
	return 0;
}

static int
eth_promisc_on(struct rte_eth_dev *ethdev)
{
	__atomic_store_n(&eth_roce(ethdev)->eth.promisc, 1, __ATOMIC_RELAXED);
	return 0;
}

static int
eth_promisc_off(struct rte_eth_dev *ethdev)
{
	__atomic_store_n(&eth_roce(ethdev)->eth.promisc, 0, __ATOMIC_RELAXED);
	return 0;
}

static int
eth_allmulti_on(struct rte_eth_dev *ethdev)
{
	__atomic_store_n(&eth_roce(ethdev)->eth.allmulti, 1, __ATOMIC_RELAXED);
	return 0;
}

static int
eth_allmulti_off(struct rte_eth_dev *ethdev)
{
	__atomic_store_n(&eth_roce(ethdev)->eth.allmulti, 0, __ATOMIC_RELAXED);
	return 0;
}

/* Up to the owned port's MTU, which droce's own frames fill. */
static int
eth_mtu_set(struct rte_eth_dev *ethdev, uint16_t mtu)
{
	return mtu <= eth_roce(ethdev)->mtu ? 0 : -EINVAL;
}

/* Packets and bytes through this port, since the last reset. */
static int
eth_stats_get(struct rte_eth_dev *ethdev, struct rte_eth_stats *st)
{
	struct roce_eth *e = &eth_roce(ethdev)->eth;

	st->ipackets = ROCE_CNT_READ(e->ipackets) - e->base_ipackets;
	st->ibytes = ROCE_CNT_READ(e->ibytes) - e->base_ibytes;
	st->opackets = ROCE_CNT_READ(e->opackets) - e->base_opackets;
	st->obytes = ROCE_CNT_READ(e->obytes) - e->base_obytes;
	st->imissed = ROCE_CNT_READ(e->imissed) - e->base_imissed;
	st->q_ipackets[0] = st->ipackets;
	st->q_ibytes[0] = st->ibytes;
	st->q_opackets[0] = st->opackets;
	st->q_obytes[0] = st->obytes;
	return 0;
}

/* The counters have other writers (the bursts, the engine): a new base, not zeroes. */
static int
eth_stats_reset(struct rte_eth_dev *ethdev)
{
	struct roce_eth *e = &eth_roce(ethdev)->eth;

	e->base_ipackets = ROCE_CNT_READ(e->ipackets);
	e->base_ibytes = ROCE_CNT_READ(e->ibytes);
	e->base_opackets = ROCE_CNT_READ(e->opackets);
	e->base_obytes = ROCE_CNT_READ(e->obytes);
	e->base_imissed = ROCE_CNT_READ(e->imissed);
	return 0;
}

/* The device's counters, as droce_dev_xstats names them. */
static int
eth_xstats_get_names(struct rte_eth_dev *ethdev, struct rte_eth_xstat_name *names,
		     unsigned int size)
{
	struct roce_dev *dev = eth_roce(ethdev);
	int n = roce_dev_xstats_get(dev, NULL, NULL, 0);
	const char *nm[ETH_XSTATS_MAX];

	if (n > ETH_XSTATS_MAX)
		return -ENOSPC;
	if (names == NULL || size < (unsigned int)n)
		return n;
	roce_dev_xstats_get(dev, nm, NULL, n);
	for (int i = 0; i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s", nm[i]);
	return n;
}

static int
eth_xstats_get(struct rte_eth_dev *ethdev, struct rte_eth_xstat *xs, unsigned int size)
{
	struct roce_dev *dev = eth_roce(ethdev);
	int n = roce_dev_xstats_get(dev, NULL, NULL, 0);
	uint64_t v[ETH_XSTATS_MAX];

	if (n > ETH_XSTATS_MAX)
		return -ENOSPC;
	if (xs == NULL || size < (unsigned int)n)
		return n;
	roce_dev_xstats_get(dev, NULL, v, n);
	for (int i = 0; i < n; i++) {
		xs[i].id = i;
		xs[i].value = v[i];
	}
	return n;
}

/* The engine is the counters' only writer, and droce never resets them. */
static int
eth_xstats_reset(struct rte_eth_dev *ethdev)
{
	RTE_SET_USED(ethdev);
	return -ENOTSUP;
}

static const struct eth_dev_ops roce_eth_ops = {
	.dev_configure = eth_configure,
	.dev_start = eth_start,
	.dev_stop = eth_stop,
	.dev_close = eth_close,
	.dev_infos_get = eth_infos_get,
	.link_update = eth_link_update,
	.promiscuous_enable = eth_promisc_on,
	.promiscuous_disable = eth_promisc_off,
	.allmulticast_enable = eth_allmulti_on,
	.allmulticast_disable = eth_allmulti_off,
	.mtu_set = eth_mtu_set,
	.stats_get = eth_stats_get,
	.stats_reset = eth_stats_reset,
	.xstats_get = eth_xstats_get,
	.xstats_get_names = eth_xstats_get_names,
	.xstats_reset = eth_xstats_reset,
	.rx_queue_setup = eth_rx_queue_setup,
	.rx_queue_release = eth_queue_release,
	.tx_queue_setup = eth_tx_queue_setup,
	.tx_queue_release = eth_queue_release,
};

/* Is @port_id a droce device's own port? (No droce device is put on one.) */
bool
roce_eth_is_droce(uint16_t port_id)
{
	return rte_eth_dev_is_valid_port(port_id) && rte_eth_devices[port_id].dev_ops == &roce_eth_ops;
}

/* At probe, once the MAC and MTU are known: the port, named as the device. */
int
roce_eth_create(struct roce_dev *dev, struct rte_device *rdev)
{
	struct roce_eth *e = &dev->eth;
	struct rte_eth_dev *ethdev;
	char rname[RTE_RING_NAMESIZE];
	int ret = -ENOMEM;

	e->dev = dev;
	snprintf(rname, sizeof(rname), "droce_erx_%.16s", dev->name);
	e->rx = rte_ring_create(rname, ETH_RING_SIZE, rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(rname, sizeof(rname), "droce_etx_%.16s", dev->name);
	e->tx = rte_ring_create(rname, ETH_RING_SIZE, rte_socket_id(),
				RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (e->rx == NULL || e->tx == NULL) {
		ROCE_LOG(ERR, "%s: cannot create the rings of its ethdev port: %s", dev->name,
			 rte_strerror(rte_errno));
		goto err;
	}
	ethdev = rte_eth_dev_allocate(dev->name);
	if (ethdev == NULL) {
		ROCE_LOG(ERR, "%s: cannot allocate an ethdev port named %s (devarg ethport=0 goes without)",
			 dev->name, dev->name);
		ret = -ENOSPC;
		goto err;
	}
	ethdev->data->dev_private = rte_zmalloc_socket(dev->name, sizeof(dev), 0, rte_socket_id());
	ethdev->data->mac_addrs = rte_zmalloc_socket(dev->name, sizeof(struct rte_ether_addr), 0,
						     rte_socket_id());
	if (ethdev->data->dev_private == NULL || ethdev->data->mac_addrs == NULL) {
		rte_eth_dev_release_port(ethdev);	/* frees both */
		goto err;
	}
	*(struct roce_dev **)ethdev->data->dev_private = dev;
	ethdev->data->mac_addrs[0] = dev->mac;
	ethdev->data->mtu = RTE_MIN(dev->mtu, (uint16_t)RTE_ETHER_MTU);
	ethdev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	ethdev->data->dev_link.link_autoneg = RTE_ETH_LINK_FIXED;
	ethdev->device = rdev;
	ethdev->dev_ops = &roce_eth_ops;
	ethdev->rx_pkt_burst = eth_rx_burst;
	ethdev->tx_pkt_burst = eth_tx_burst;
	e->port_id = ethdev->data->port_id;
	__atomic_store_n(&e->present, true, __ATOMIC_RELEASE);
	rte_eth_dev_probing_finish(ethdev);
	return 0;
err:
	rte_ring_free(e->rx);
	rte_ring_free(e->tx);
	e->rx = e->tx = NULL;
	return ret;
}

/* At removal: the port stops and goes, unless the application closed it already. */
void
roce_eth_destroy(struct roce_dev *dev)
{
	struct roce_eth *e = &dev->eth;

	if (__atomic_load_n(&e->present, __ATOMIC_ACQUIRE)) {
		rte_eth_dev_stop(e->port_id);
		rte_eth_dev_close(e->port_id);
	}
	rte_ring_free(e->rx);
	rte_ring_free(e->tx);
	e->rx = e->tx = NULL;
}
