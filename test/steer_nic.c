/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_stnic: an ethdev that steers received frames as a NIC does, from the
 * configuration its user made (steer_nic.h). The sender's tx burst does the
 * receiving NIC's work: it picks the rx queue of the linked port and puts
 * the frame on that queue's ring, which the port's rx burst reads.
 */
#include <errno.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_flow_driver.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_thash.h>
#include <rte_udp.h>

#include "steer_nic.h"

#define STNIC_RING	4096
#define STNIC_KEY	40
#define ROCE_PORT	4791

struct stnic;

struct stnic_rxq {
	struct rte_ring *ring;
};

struct stnic_txq {
	struct stnic *nic;
	uint16_t id;
};

struct stnic_rule {
	uint32_t used;			/* atomic: the peer's tx reads the rule while set */
	uint16_t sport, sport_mask, dport, dport_mask;	/* host order */
	uint16_t queue;
};

struct stnic {
	uint16_t port;
	struct stnic *peer;
	uint32_t caps_next;		/* offered from the next configure on */
	uint32_t caps;
	uint16_t nb_rxq;
	uint16_t owner_nb_q;
	struct stnic_rxq rxq[STNIC_MAX_Q];
	struct stnic_txq txq[STNIC_MAX_Q];
	bool rss;
	uint8_t key[STNIC_KEY] __rte_aligned(4);	/* rte_softrss reads words */
	uint16_t reta[STNIC_RETA];
	struct stnic_rule rule[STNIC_RULES];
	struct stnic_counts cnt;	/* atomic adds: any sender's lcore */
};

static struct stnic *
nic_of(uint16_t port)
{
	return rte_eth_devices[port].data->dev_private;
}

#define CNT_INC(c)	__atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)

/* --- what the receiving NIC does --- */
static uint16_t
owner(const struct stnic *rx, uint32_t dqpn)
{
	uint16_t n = rx->owner_nb_q ? rx->owner_nb_q : 1;

	return dqpn == 1 ? 0 : (dqpn % 8) % n;
}

/* The rx queue of @rx for @m, sent on the peer's tx queue @from. */
static uint16_t
pick(struct stnic *rx, struct rte_mbuf *m, uint16_t from)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_udp_hdr *udp = NULL;
	bool roce = false, ruled = false;
	uint16_t q = 0, sport = 0, dport = 0;
	uint32_t dqpn = 0;

	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) && ip->next_proto_id == IPPROTO_UDP) {
		udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + rte_ipv4_hdr_len(ip));
		sport = rte_be_to_cpu_16(udp->src_port);
		dport = rte_be_to_cpu_16(udp->dst_port);
		if (dport == ROCE_PORT) {
			const uint8_t *bth = (const uint8_t *)(udp + 1);

			roce = true;
			dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
			CNT_INC(rx->cnt.roce);
		}
	}
	for (unsigned int i = 0; udp != NULL && i < STNIC_RULES; i++) {
		const struct stnic_rule *r = &rx->rule[i];

		if (__atomic_load_n(&r->used, __ATOMIC_ACQUIRE) &&
		    (sport & r->sport_mask) == r->sport && (dport & r->dport_mask) == r->dport) {
			q = r->queue;
			ruled = true;
			if (roce)
				CNT_INC(rx->cnt.by_rule);
			break;
		}
	}
	if (roce) {
		uint32_t k = dqpn == 1 ? 0 : dqpn % 8;
		uint32_t t[RTE_THASH_V4_L4_LEN] = {
			rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_32(ip->dst_addr),
			(uint32_t)sport << 16 | dport,
		};

		if (sport % 8 != k)
			CNT_INC(rx->cnt.bad_mark);
		if (rx->rss && rte_softrss(t, RTE_DIM(t), rx->key) % 8 != k)
			CNT_INC(rx->cnt.bad_hash_mark);
	}
	if (!ruled && rx->rss) {
		if (udp != NULL) {
			uint32_t t[RTE_THASH_V4_L4_LEN] = {
				rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_32(ip->dst_addr),
				(uint32_t)sport << 16 | dport,
			};

			q = rx->reta[rte_softrss(t, RTE_DIM(t), rx->key) % STNIC_RETA];
			if (roce)
				CNT_INC(rx->cnt.by_rss);
		}
	} else if (!ruled) {
		q = from;	/* no steering: as a net_ring pair */
	}
	if (q >= rx->nb_rxq)
		q = 0;
	if (roce && q != owner(rx, dqpn))
		CNT_INC(rx->cnt.misplaced);
	return q;
}

static uint16_t
stnic_tx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct stnic_txq *tq = queue;
	struct stnic *rx = tq->nic->peer;

	for (uint16_t i = 0; i < n; i++) {
		uint16_t q;

		if (rx == NULL || rx->nb_rxq == 0) {
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		q = pick(rx, pkts[i], tq->id);
		if (rte_ring_enqueue(rx->rxq[q].ring, pkts[i]) != 0) {
			rte_pktmbuf_free(pkts[i]);
			CNT_INC(rx->cnt.dropped);
			continue;
		}
		CNT_INC(rx->cnt.rx_q[q]);
	}
	return n;
}

static uint16_t
stnic_rx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct stnic_rxq *rq = queue;

	return (uint16_t)rte_ring_dequeue_burst(rq->ring, (void **)pkts, n, NULL);
}

/* --- flow rules: ETH / IPV4 / UDP (masked ports) -> QUEUE --- */
static int
rule_parse(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
	   const struct rte_flow_item items[], const struct rte_flow_action actions[],
	   struct stnic_rule *r, struct rte_flow_error *err)
{
	struct stnic *nic = dev->data->dev_private;
	static const enum rte_flow_item_type want[] = {
		RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_IPV4, RTE_FLOW_ITEM_TYPE_UDP,
	};
	unsigned int n = 0;

	if (!(nic->caps & STNIC_CAP_FLOW))
		return -rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_UNSPECIFIED, NULL,
					   "no flow rules on this port");
	if (!attr->ingress || attr->egress || attr->transfer || attr->group != 0)
		return -rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_ATTR, attr,
					   "ingress, group 0 only");
	memset(r, 0, sizeof(*r));
	for (; items->type != RTE_FLOW_ITEM_TYPE_END; items++) {
		if (items->type == RTE_FLOW_ITEM_TYPE_VOID)
			continue;
		if (n == RTE_DIM(want) || items->type != want[n] ||
		    (items->type != RTE_FLOW_ITEM_TYPE_UDP && items->spec != NULL) || items->last)
			return -rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM, items,
						   "ETH / IPV4 / UDP only, ports only");
		if (items->type == RTE_FLOW_ITEM_TYPE_UDP && items->spec != NULL) {
			const struct rte_flow_item_udp *s = items->spec;
			const struct rte_flow_item_udp *m = items->mask ? items->mask :
							     &rte_flow_item_udp_mask;

			r->sport_mask = rte_be_to_cpu_16(m->hdr.src_port);
			r->dport_mask = rte_be_to_cpu_16(m->hdr.dst_port);
			r->sport = rte_be_to_cpu_16(s->hdr.src_port) & r->sport_mask;
			r->dport = rte_be_to_cpu_16(s->hdr.dst_port) & r->dport_mask;
		}
		n++;
	}
	if (n != RTE_DIM(want))
		return -rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM, NULL,
					   "ETH / IPV4 / UDP only");
	if (actions[0].type != RTE_FLOW_ACTION_TYPE_QUEUE ||
	    actions[1].type != RTE_FLOW_ACTION_TYPE_END ||
	    ((const struct rte_flow_action_queue *)actions[0].conf)->index >= dev->data->nb_rx_queues)
		return -rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION, actions,
					   "one QUEUE action only");
	r->queue = ((const struct rte_flow_action_queue *)actions[0].conf)->index;
	return 0;
}

static int
flow_validate(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
	      const struct rte_flow_item items[], const struct rte_flow_action actions[],
	      struct rte_flow_error *err)
{
	struct stnic_rule r;

	return rule_parse(dev, attr, items, actions, &r, err);
}

static struct rte_flow *
flow_create(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
	    const struct rte_flow_item items[], const struct rte_flow_action actions[],
	    struct rte_flow_error *err)
{
	struct stnic *nic = dev->data->dev_private;
	struct stnic_rule r;

	if (rule_parse(dev, attr, items, actions, &r, err) != 0)
		return NULL;
	for (unsigned int i = 0; i < STNIC_RULES; i++)
		if (!nic->rule[i].used) {
			nic->rule[i] = r;
			__atomic_store_n(&nic->rule[i].used, 1, __ATOMIC_RELEASE);
			return (struct rte_flow *)&nic->rule[i];
		}
	rte_flow_error_set(err, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, NULL, "rule table full");
	return NULL;
}

static int
flow_destroy(struct rte_eth_dev *dev, struct rte_flow *flow, struct rte_flow_error *err)
{
	struct stnic *nic = dev->data->dev_private;

	for (unsigned int i = 0; i < STNIC_RULES; i++)
		if ((struct rte_flow *)&nic->rule[i] == flow && nic->rule[i].used) {
			__atomic_store_n(&nic->rule[i].used, 0, __ATOMIC_RELEASE);
			return 0;
		}
	return -rte_flow_error_set(err, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "no such rule");
}

static int
flow_flush(struct rte_eth_dev *dev, struct rte_flow_error *err)
{
	struct stnic *nic = dev->data->dev_private;

	RTE_SET_USED(err);
	for (unsigned int i = 0; i < STNIC_RULES; i++)
		__atomic_store_n(&nic->rule[i].used, 0, __ATOMIC_RELEASE);
	return 0;
}

static const struct rte_flow_ops stnic_flow_ops = {
	.validate = flow_validate,
	.create = flow_create,
	.destroy = flow_destroy,
	.flush = flow_flush,
};

static int
stnic_flow_ops_get(struct rte_eth_dev *dev, const struct rte_flow_ops **ops)
{
	RTE_SET_USED(dev);
	*ops = &stnic_flow_ops;
	return 0;
}

/* --- device ops --- */
static int
stnic_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct stnic *nic = dev->data->dev_private;

	info->max_mac_addrs = 1;
	info->max_rx_pktlen = 9600 + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = 9600;
	info->max_rx_queues = STNIC_MAX_Q;
	info->max_tx_queues = STNIC_MAX_Q;
	if (nic->caps_next & STNIC_CAP_RSS) {
		info->flow_type_rss_offloads = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
		info->hash_key_size = STNIC_KEY;
		info->reta_size = STNIC_RETA;
	}
	return 0;
}

static int
stnic_configure(struct rte_eth_dev *dev)
{
	struct stnic *nic = dev->data->dev_private;
	const struct rte_eth_conf *c = &dev->data->dev_conf;
	const struct rte_eth_rss_conf *rss = &c->rx_adv_conf.rss_conf;

	nic->caps = nic->caps_next;
	nic->nb_rxq = dev->data->nb_rx_queues;
	nic->rss = (nic->caps & STNIC_CAP_RSS) && c->rxmode.mq_mode == RTE_ETH_MQ_RX_RSS &&
		   (rss->rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP);
	/* a NIC's own key and RETA until its user sets them */
	memset(nic->key, 0xa5, sizeof(nic->key));
	if (nic->rss && rss->rss_key != NULL) {
		if (rss->rss_key_len != STNIC_KEY)
			return -EINVAL;
		memcpy(nic->key, rss->rss_key, STNIC_KEY);
	}
	for (unsigned int i = 0; i < STNIC_RETA; i++)
		nic->reta[i] = (uint16_t)(i % nic->nb_rxq);
	return 0;
}

static int
stnic_reta_update(struct rte_eth_dev *dev, struct rte_eth_rss_reta_entry64 *conf,
		  uint16_t size)
{
	struct stnic *nic = dev->data->dev_private;

	if (!(nic->caps & STNIC_CAP_RSS) || size != STNIC_RETA)
		return -ENOTSUP;
	for (unsigned int i = 0; i < STNIC_RETA; i++) {
		const struct rte_eth_rss_reta_entry64 *g = &conf[i / RTE_ETH_RETA_GROUP_SIZE];

		if (g->mask & (1ULL << (i % RTE_ETH_RETA_GROUP_SIZE))) {
			if (g->reta[i % RTE_ETH_RETA_GROUP_SIZE] >= nic->nb_rxq)
				return -EINVAL;
			nic->reta[i] = g->reta[i % RTE_ETH_RETA_GROUP_SIZE];
		}
	}
	return 0;
}

static int
stnic_start(struct rte_eth_dev *dev)
{
	struct rte_eth_link link = {
		.link_speed = RTE_ETH_SPEED_NUM_100G, .link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_status = RTE_ETH_LINK_UP,
	};

	for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	rte_eth_linkstatus_set(dev, &link);
	return 0;
}

static int
stnic_stop(struct rte_eth_dev *dev)
{
	struct rte_eth_link link = { .link_status = RTE_ETH_LINK_DOWN };

	for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	rte_eth_linkstatus_set(dev, &link);
	return 0;
}

static int
stnic_close(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
stnic_rx_setup(struct rte_eth_dev *dev, uint16_t q, uint16_t nb_desc, unsigned int socket,
	       const struct rte_eth_rxconf *conf, struct rte_mempool *mp)
{
	struct stnic *nic = dev->data->dev_private;

	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	RTE_SET_USED(mp);
	dev->data->rx_queues[q] = &nic->rxq[q];
	return 0;
}

static int
stnic_tx_setup(struct rte_eth_dev *dev, uint16_t q, uint16_t nb_desc, unsigned int socket,
	       const struct rte_eth_txconf *conf)
{
	struct stnic *nic = dev->data->dev_private;

	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	nic->txq[q].nic = nic;
	nic->txq[q].id = q;
	dev->data->tx_queues[q] = &nic->txq[q];
	return 0;
}

static void
stnic_queue_release(struct rte_eth_dev *dev, uint16_t q)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(q);
}

static int
stnic_link_update(struct rte_eth_dev *dev, int wait)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wait);
	return 0;
}

static int
stnic_ok(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
stnic_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	RTE_SET_USED(dev);
	return mtu <= 9600 ? 0 : -EINVAL;
}

static int
stnic_mac_set(struct rte_eth_dev *dev, struct rte_ether_addr *mac)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(mac);
	return 0;
}

static int
stnic_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *s)
{
	RTE_SET_USED(dev);
	memset(s, 0, sizeof(*s));
	return 0;
}

static const struct eth_dev_ops stnic_ops = {
	.dev_configure = stnic_configure,
	.dev_start = stnic_start,
	.dev_stop = stnic_stop,
	.dev_close = stnic_close,
	.dev_infos_get = stnic_infos_get,
	.rx_queue_setup = stnic_rx_setup,
	.tx_queue_setup = stnic_tx_setup,
	.rx_queue_release = stnic_queue_release,
	.tx_queue_release = stnic_queue_release,
	.link_update = stnic_link_update,
	.promiscuous_enable = stnic_ok,
	.promiscuous_disable = stnic_ok,
	.allmulticast_enable = stnic_ok,
	.allmulticast_disable = stnic_ok,
	.mtu_set = stnic_mtu_set,
	.mac_addr_set = stnic_mac_set,
	.stats_get = stnic_stats_get,
	.reta_update = stnic_reta_update,
	.flow_ops_get = stnic_flow_ops_get,
};

static int
stnic_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *eth_dev;
	struct stnic *nic;
	char rn[RTE_RING_NAMESIZE];

	eth_dev = rte_eth_vdev_allocate(vdev, sizeof(*nic));
	if (eth_dev == NULL)
		return -ENOMEM;
	eth_dev->data->mac_addrs = rte_zmalloc(name, sizeof(struct rte_ether_addr), 0);
	if (eth_dev->data->mac_addrs == NULL) {
		rte_eth_dev_release_port(eth_dev);
		return -ENOMEM;
	}
	nic = eth_dev->data->dev_private;
	nic->port = eth_dev->data->port_id;
	for (unsigned int q = 0; q < STNIC_MAX_Q; q++) {
		snprintf(rn, sizeof(rn), "stnic%u_%u", nic->port, q);
		nic->rxq[q].ring = rte_ring_create(rn, STNIC_RING, rte_socket_id(), 0);
		if (nic->rxq[q].ring == NULL) {
			rte_eth_dev_release_port(eth_dev);
			return -ENOMEM;
		}
	}
	eth_dev->data->mtu = RTE_ETHER_MTU;
	eth_dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	eth_dev->dev_ops = &stnic_ops;
	eth_dev->rx_pkt_burst = stnic_rx;
	eth_dev->tx_pkt_burst = stnic_tx;
	rte_eth_dev_probing_finish(eth_dev);
	return 0;
}

static int
stnic_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	return eth_dev == NULL ? 0 : rte_eth_dev_release_port(eth_dev);
}

static struct rte_vdev_driver stnic_drv = {
	.probe = stnic_probe,
	.remove = stnic_remove,
};

RTE_PMD_REGISTER_VDEV(net_stnic, stnic_drv);

/* --- the test's side --- */
int
stnic_link(const char *a, const char *b)
{
	uint16_t pa, pb;
	int ret;

	ret = rte_vdev_init(a, NULL);
	if (ret == 0)
		ret = rte_vdev_init(b, NULL);
	if (ret == 0)
		ret = rte_eth_dev_get_port_by_name(a, &pa);
	if (ret == 0)
		ret = rte_eth_dev_get_port_by_name(b, &pb);
	if (ret != 0)
		return ret;
	nic_of(pa)->peer = nic_of(pb);
	nic_of(pb)->peer = nic_of(pa);
	return 0;
}

void
stnic_caps(uint16_t port, uint32_t caps)
{
	nic_of(port)->caps_next = caps;
}

void
stnic_owner_queues(uint16_t port, uint16_t nb_q)
{
	nic_of(port)->owner_nb_q = nb_q;
}

void
stnic_counts_get(uint16_t port, struct stnic_counts *c)
{
	const uint64_t *src = (const uint64_t *)&nic_of(port)->cnt;
	uint64_t *dst = (uint64_t *)c;

	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void
stnic_counts_reset(uint16_t port)
{
	uint64_t *dst = (uint64_t *)&nic_of(port)->cnt;

	for (size_t i = 0; i < sizeof(struct stnic_counts) / sizeof(uint64_t); i++)
		__atomic_store_n(&dst[i], 0, __ATOMIC_RELAXED);
}

unsigned int
stnic_rules(uint16_t port)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < STNIC_RULES; i++)
		n += __atomic_load_n(&nic_of(port)->rule[i].used, __ATOMIC_ACQUIRE) != 0;
	return n;
}

bool
stnic_rss_on(uint16_t port)
{
	return nic_of(port)->rss;
}

int
stnic_key(uint16_t port, uint8_t *key, unsigned int len)
{
	memcpy(key, nic_of(port)->key, RTE_MIN(len, (unsigned int)STNIC_KEY));
	return STNIC_KEY;
}

uint16_t
stnic_reta(uint16_t port, unsigned int i)
{
	return nic_of(port)->reta[i % STNIC_RETA];
}

int
stnic_rule_get(uint16_t port, unsigned int i, uint16_t *sport, uint16_t *sport_mask,
	       uint16_t *dport, uint16_t *dport_mask)
{
	const struct stnic_rule *r = &nic_of(port)->rule[i % STNIC_RULES];

	if (!__atomic_load_n(&r->used, __ATOMIC_ACQUIRE))
		return -1;
	*sport = r->sport;
	*sport_mask = r->sport_mask;
	*dport = r->dport;
	*dport_mask = r->dport_mask;
	return r->queue;
}
