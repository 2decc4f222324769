/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering: how a frame reaches the queue (struct roce_q) that owns its
 * destination QP without the software hand-off between queues.
 *
 * A QP's number says its queue: with N queues, the owner of QPN n is queue
 * (n % DROCE_MAX_QUEUES) % N (roce_qpn_queue; roce_qp_create picks the
 * table slot so). A sender knows the destination QPN of every frame (a
 * request's, and the requester's for the responder's ACKs and READ
 * responses), so it can mark the frame for the receiver's queue in the
 * one field RoCEv2 leaves to it, the UDP source port (IBA annex A17 gives it
 * to the sender, as flow entropy). Every droce sender chooses a port
 * that carries k = destination QPN % DROCE_MAX_QUEUES twice:
 *  - in its low bits, for a receiver whose port has rte_flow rules (UDP
 *    destination 4791, source port & 7 == k: queue k % N);
 *  - in the low bits of its Toeplitz hash under droce's RSS key, over
 *    (source IP, destination IP, source port, 4791), for a receiver whose
 *    port hashes IPv4/UDP with that key into a RETA whose entry i is queue
 *    (i % DROCE_MAX_QUEUES) % N.
 * So a sender need not know which of the two (if any) the receiver has, nor
 * how many queues. The port's upper bits still spread QPs (ECMP entropy).
 *
 * The Toeplitz hash is linear over GF(2): flipping a set of bits of the
 * input flips the hash by the hash of that set alone. So one hash of the
 * port with k in its low bits says which of the low three hash bits are
 * wrong, and a fixed set of upper port bits (steer_fix, found once) flips
 * exactly those: one software hash a QP modify, nothing per packet.
 * A port that can do neither keeps every frame correct through the hand-off.
 */
#include <pthread.h>
#include <stdlib.h>

#include <rte_flow.h>
#include <rte_thash.h>

#include "roce_loc.h"

/*
 * droce's RSS key, the one every droce end assumes: the first 40 bytes are
 * the key of Microsoft's RSS verification suite (the default of many NICs
 * and of DPDK's testpmd), the rest pads it for ports with longer keys.
 * An IPv4/UDP hash reads its first 16 bytes only; rte_softrss reads them a
 * 32-bit word at a time.
 */
static const uint8_t steer_key[ROCE_STEER_KEY_MAX] __rte_aligned(4) = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d,
};

#define STEER_MASK	(DROCE_MAX_QUEUES - 1)
_Static_assert((DROCE_MAX_QUEUES & STEER_MASK) == 0, "DROCE_MAX_QUEUES must be a power of 2");
/* the port bits a sender may flip: above the steering bits, inside RoCEv2's 0xc000 range */
#define STEER_FREE	(0x3fffu & ~(uint32_t)STEER_MASK)

/* steer_fix[d]: port bits (in STEER_FREE) whose flip changes the hash's low bits by d */
static uint16_t steer_fix[DROCE_MAX_QUEUES];
static bool steer_fix_ok;
static pthread_once_t steer_once = PTHREAD_ONCE_INIT;

const uint8_t *
roce_steer_key(void)
{
	return steer_key;
}

uint32_t
roce_steer_hash(rte_be32_t sip, rte_be32_t dip, uint16_t sport, uint16_t dport)
{
	uint32_t t[RTE_THASH_V4_L4_LEN] = {
		rte_be_to_cpu_32(sip), rte_be_to_cpu_32(dip), (uint32_t)sport << 16 | dport,
	};

	return rte_softrss(t, RTE_DIM(t), steer_key);
}

static void
steer_fix_init(void)
{
	bool found[DROCE_MAX_QUEUES] = { true };
	unsigned int n = 1;

	/* the hash of the flipped bits alone (linearity): the first set for each change */
	for (uint32_t m = STEER_MASK + 1; m <= STEER_FREE && n < DROCE_MAX_QUEUES;
	     m += STEER_MASK + 1) {
		uint32_t d = roce_steer_hash(0, 0, (uint16_t)m, 0) & STEER_MASK;

		if (!found[d]) {
			found[d] = true;
			steer_fix[d] = (uint16_t)m;
			n++;
		}
	}
	steer_fix_ok = n == DROCE_MAX_QUEUES;
}

uint16_t
roce_steer_sport(uint16_t base, rte_be32_t sip, rte_be32_t dip, uint32_t k)
{
	uint16_t p = (uint16_t)((base & ~STEER_MASK) | (k & STEER_MASK));
	uint32_t d;

	pthread_once(&steer_once, steer_fix_init);
	if (!steer_fix_ok)	/* a key without full rank there: the flow mark alone */
		return p;
	d = (roce_steer_hash(sip, dip, p, DROCE_UDP_PORT) ^ k) & STEER_MASK;
	return p ^ steer_fix[d];
}

/* --- the receiving port --- */
static const char *const steer_names[] = {
	[ROCE_STEER_AUTO] = "auto",
	[ROCE_STEER_NONE] = "none",
	[ROCE_STEER_RSS] = "rss",
	[ROCE_STEER_FLOW] = "flow",
};

const char *
roce_steer_name(enum roce_steer s)
{
	return (unsigned int)s < RTE_DIM(steer_names) ? steer_names[s] : "?";
}

int
roce_steer_parse(const char *val, enum roce_steer *s)
{
	for (unsigned int i = 0; i < RTE_DIM(steer_names); i++)
		if (val != NULL && strcmp(val, steer_names[i]) == 0) {
			*s = i;
			return 0;
		}
	return -EINVAL;
}

/*
 * Whether the port can hash IPv4/UDP with droce's key into a RETA droce
 * fills: the hash covers the UDP ports, the key can be set, the RETA has a
 * multiple of DROCE_MAX_QUEUES entries (a power of two: the NIC indexes it
 * with the hash's low bits).
 */
static bool
rss_capable(const struct rte_eth_dev_info *info)
{
	return (info->flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_UDP) != 0 &&
	       info->hash_key_size >= 16 && info->hash_key_size <= ROCE_STEER_KEY_MAX &&
	       info->reta_size >= DROCE_MAX_QUEUES && rte_is_power_of_2(info->reta_size) &&
	       info->reta_size <= RTE_ETH_RSS_RETA_SIZE_512 * 4;
}

/*
 * Before rte_eth_dev_configure: RSS on IPv4/UDP with droce's key in @conf,
 * when the device has several queues, asks for RSS (auto, rss, or flow:
 * the frames no rule takes) and the port can. -ENOTSUP when steering=rss
 * was asked for and the port cannot.
 */
int
roce_steer_conf(struct roce_dev *dev, const struct rte_eth_dev_info *info,
		struct rte_eth_conf *conf)
{
	if (dev->nb_q == 1 || dev->steer_arg == ROCE_STEER_NONE)
		return 0;
	if (!rss_capable(info)) {
		if (dev->steer_arg != ROCE_STEER_RSS)
			return 0;
		ROCE_LOG(ERR, "%s: steering=rss: %s cannot hash IPv4/UDP ports with a key and RETA droce sets",
			 dev->name, dev->ethdev_name);
		return -ENOTSUP;
	}
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)steer_key;
	conf->rx_adv_conf.rss_conf.rss_key_len = info->hash_key_size;
	conf->rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
	dev->steer_rss = true;
	return 0;
}

/* RETA entry i: queue (i % DROCE_MAX_QUEUES) % nb_q, the owner of QPNs with those low bits */
static int
reta_set(struct roce_dev *dev, uint16_t reta_size)
{
	uint16_t groups = reta_size / RTE_ETH_RETA_GROUP_SIZE + 1;
	struct rte_eth_rss_reta_entry64 *r = calloc(groups, sizeof(*r));
	int ret;

	if (r == NULL)
		return -ENOMEM;
	for (uint16_t i = 0; i < reta_size; i++) {
		struct rte_eth_rss_reta_entry64 *g = &r[i / RTE_ETH_RETA_GROUP_SIZE];

		g->mask |= 1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
		g->reta[i % RTE_ETH_RETA_GROUP_SIZE] = (i & STEER_MASK) % dev->nb_q;
	}
	ret = rte_eth_dev_rss_reta_update(dev->port_id, r, reta_size);
	free(r);
	return ret;
}

/* One rule: RoCEv2 frames whose UDP source port's low bits are @k go to queue k % nb_q. */
static int
flow_rule(struct roce_dev *dev, uint32_t k, bool create, struct rte_flow **out,
	  struct rte_flow_error *err)
{
	const struct rte_flow_attr attr = { .ingress = 1 };
	const struct rte_flow_item_udp spec = {
		.hdr = { .src_port = rte_cpu_to_be_16(k), .dst_port = RTE_BE16(DROCE_UDP_PORT) },
	};
	const struct rte_flow_item_udp mask = {
		.hdr = { .src_port = RTE_BE16(STEER_MASK), .dst_port = RTE_BE16(0xffff) },
	};
	const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &spec, .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_action_queue queue = { .index = k % dev->nb_q };
	const struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};

	if (!create)
		return rte_flow_validate(dev->port_id, &attr, pattern, actions, err);
	*out = rte_flow_create(dev->port_id, &attr, pattern, actions, err);
	return *out == NULL ? -rte_errno : 0;
}

static int
flows_create(struct roce_dev *dev)
{
	struct rte_flow_error err = { 0 };
	int ret = 0;

	for (uint32_t k = 0; k < DROCE_MAX_QUEUES && ret == 0; k++)
		ret = flow_rule(dev, k, false, NULL, &err);
	for (uint32_t k = 0; k < DROCE_MAX_QUEUES && ret == 0; k++)
		ret = flow_rule(dev, k, true, &dev->steer_flow[k], &err);
	if (ret) {
		const char *why = err.message ? err.message : rte_strerror(-ret);

		if (dev->steer_arg == ROCE_STEER_FLOW)
			ROCE_LOG(ERR, "%s: steering=flow: %s takes no rule: %s", dev->name,
				 dev->ethdev_name, why);
		else
			ROCE_LOG(INFO, "%s: no rte_flow steering on %s: %s", dev->name,
				 dev->ethdev_name, why);
		roce_steer_stop(dev);
	}
	return ret;
}

/*
 * After the port started: the RETA (when RSS was configured) and the flow
 * rules (auto, flow), and dev->steer says what steers. -ENOTSUP when the
 * steering asked for (rss, flow) is not there.
 */
int
roce_steer_start(struct roce_dev *dev)
{
	struct rte_eth_dev_info info;
	int ret;

	dev->steer = ROCE_STEER_NONE;
	if (dev->nb_q == 1 || dev->steer_arg == ROCE_STEER_NONE)
		return 0;
	if (dev->steer_rss) {
		ret = rte_eth_dev_info_get(dev->port_id, &info);
		if (ret == 0)
			ret = reta_set(dev, info.reta_size);
		if (ret == 0) {
			dev->steer = ROCE_STEER_RSS;
		} else if (dev->steer_arg == ROCE_STEER_RSS) {
			ROCE_LOG(ERR, "%s: steering=rss: cannot set the RETA of %s: %s", dev->name,
				 dev->ethdev_name, rte_strerror(-ret));
			return -ENOTSUP;
		}
	}
	if (dev->steer_arg == ROCE_STEER_AUTO || dev->steer_arg == ROCE_STEER_FLOW) {
		if (flows_create(dev) == 0)
			dev->steer = ROCE_STEER_FLOW;
		else if (dev->steer_arg == ROCE_STEER_FLOW)
			return -ENOTSUP;
	}
	ROCE_LOG(INFO, "%s: %u queues on %s, steered by %s%s", dev->name, dev->nb_q,
		 dev->ethdev_name, roce_steer_name(dev->steer),
		 dev->steer == ROCE_STEER_NONE ? " (frames reach their QP's queue through a hand-off)" : "");
	return 0;
}

/* Before the port stops: the flow rules go. */
void
roce_steer_stop(struct roce_dev *dev)
{
	struct rte_flow_error err;

	for (uint32_t k = 0; k < DROCE_MAX_QUEUES; k++)
		if (dev->steer_flow[k] != NULL) {
			rte_flow_destroy(dev->port_id, dev->steer_flow[k], &err);
			dev->steer_flow[k] = NULL;
		}
}
