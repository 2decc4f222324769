/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The droce vdev: "--vdev=droce0,ethdev=<port>,ip=<IPv4>[,mac=][,mtu=]
 * [,lcore=<id>[:<id>...]|auto|inline|thread][,neigh=<ip>@<mac>]...[,link_wait=<ms>]
 * [,pcapng=<file>][,own=0|1][,ethport=0|1][,queues=<n>]". Probing takes over the
 * ethdev port: n rx and tx queues (1 unless given; the engine's struct roce_q
 * each), a mempool sized for the MTU, started, owned (unless own=0); with
 * link_wait, probing then waits (bounded) for link up. Unless ethport=0, the
 * device registers an ethdev port of its own, named as the device, for the
 * frames that are not droce's (roce_ethdev.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bus_vdev_driver.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "roce_loc.h"
#include "../../net/shm/shm_dp.h"

RTE_LOG_REGISTER(roce_logtype, pmd.rdma.roce, NOTICE);

#define ARG_ETHDEV	"ethdev"
#define ARG_IP		"ip"
#define ARG_MAC		"mac"
#define ARG_MTU		"mtu"
#define ARG_LCORE	"lcore"
#define ARG_NEIGH	"neigh"
#define ARG_LINK_WAIT	"link_wait"
#define ARG_PCAPNG	"pcapng"
#define ARG_OWN		"own"
#define ARG_ETHPORT	"ethport"
#define ARG_QUEUES	"queues"
#define ARG_RTO_MIN	"rto_min_us"
#define ARG_STEERING	"steering"
#define ARG_ZCOPY	"zcopy"
#define ARG_DIRECT	"direct"
#define ZCOPY_MAX	65536
#define LINK_WAIT_MAX_MS	60000

static const char *const valid_args[] = {
	ARG_ETHDEV, ARG_IP, ARG_MAC, ARG_MTU, ARG_LCORE, ARG_NEIGH, ARG_LINK_WAIT, ARG_PCAPNG,
	ARG_OWN, ARG_ETHPORT, ARG_QUEUES, ARG_RTO_MIN, ARG_STEERING, ARG_ZCOPY, ARG_DIRECT, NULL
};

static struct roce_dev *devs[DROCE_MAX_DEVS];
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned int
roce_dev_count(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		n += devs[i] != NULL;
	return n;
}

/* The idx-th probed device, in probe order. */
struct roce_dev *
roce_dev_get(unsigned int idx)
{
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		if (devs[i] != NULL && idx-- == 0)
			return devs[i];
	return NULL;
}

struct roce_dev *
roce_dev_by_name(const char *name)
{
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		if (devs[i] != NULL && strcmp(devs[i]->name, name) == 0)
			return devs[i];
	return NULL;
}

static int
arg_ethdev(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	if (val == NULL || *val == '\0' || strlen(val) >= sizeof(a->ethdev))
		return -EINVAL;
	strcpy(a->ethdev, val);
	return 0;
}

static int
arg_ip(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	struct in_addr in;

	if (val == NULL || inet_pton(AF_INET, val, &in) != 1 || in.s_addr == 0)
		return -EINVAL;
	a->ip = in.s_addr;
	return 0;
}

static int
arg_mac(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	if (val == NULL || rte_ether_unformat_addr(val, &a->mac) != 0 ||
	    !rte_is_valid_assigned_ether_addr(&a->mac))
		return -EINVAL;
	a->has_mac = true;
	return 0;
}

static int
arg_mtu(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	char *end;
	unsigned long v;

	if (val == NULL)
		return -EINVAL;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end != '\0' || v < 576 || v > 9600)
		return -EINVAL;
	a->mtu = v;
	return 0;
}

static int
arg_lcore(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	char *end;
	unsigned long v;

	if (val == NULL)
		return -EINVAL;
	if (strcmp(val, "auto") == 0) {
		a->lcore = -2;
		return 0;
	}
	if (strcmp(val, "inline") == 0) {
		a->lcore = -1;
		return 0;
	}
	if (strcmp(val, "thread") == 0) {	/* inline, moved only by calls about it */
		a->lcore = -1;
		a->progress_own = true;
		return 0;
	}
	/* an lcore id, or a list a:b:... of them for the queues (queues=), in turn */
	a->nb_lcores = 0;
	do {
		errno = 0;
		v = strtoul(val, &end, 10);
		if (errno || end == val || (*end != '\0' && *end != ':') || v >= RTE_MAX_LCORE ||
		    a->nb_lcores == DROCE_MAX_QUEUES)
			return -EINVAL;
		a->q_lcore[a->nb_lcores++] = (int16_t)v;
		val = end + 1;
	} while (*end == ':');
	a->lcore = a->q_lcore[0];
	return 0;
}

/* A decimal integer from @min to @max: 0, or -EINVAL. */
static int
arg_uint(const char *val, unsigned long min, unsigned long max, uint32_t *v)
{
	char *end;
	unsigned long n;

	if (val == NULL || *val == '\0' || *val == '-')
		return -EINVAL;
	errno = 0;
	n = strtoul(val, &end, 10);
	if (errno || *end != '\0' || n < min || n > max)
		return -EINVAL;
	*v = (uint32_t)n;
	return 0;
}

static int
arg_link_wait(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	RTE_SET_USED(key);
	return arg_uint(val, 0, LINK_WAIT_MAX_MS, &a->link_wait_ms);
}

/* rto_min_us=: the shortest early resend delay (roce_req.c); 0: none */
static int
arg_rto_min(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	RTE_SET_USED(key);
	return arg_uint(val, 0, DROCE_RTO_MAX_US, &a->rto_min_us);
}

static int
arg_pcapng(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	if (val == NULL || *val == '\0' || strlen(val) >= sizeof(a->pcapng))
		return -EINVAL;
	snprintf(a->pcapng, sizeof(a->pcapng), "%s", val);
	return 0;
}

static int
arg_01(const char *val, bool *v)
{
	if (val == NULL || (strcmp(val, "0") != 0 && strcmp(val, "1") != 0))
		return -EINVAL;
	*v = val[0] == '1';
	return 0;
}

/* A 0/1 devarg whose 0 turns something off: *@off */
static int
arg_01_off(const char *val, bool *off)
{
	bool on = true;
	int ret = arg_01(val, &on);

	*off = !on;
	return ret;
}

static int
arg_own(const char *key, const char *val, void *opaque)
{
	RTE_SET_USED(key);
	return arg_01_off(val, &((struct roce_dev_args *)opaque)->unowned);
}

static int
arg_ethport(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	RTE_SET_USED(key);
	return arg_01(val, &a->ethport);
}

/* direct=0: frames go through mbufs and the port's tx burst even where it has slots to build them in */
static int
arg_direct(const char *key, const char *val, void *opaque)
{
	RTE_SET_USED(key);
	return arg_01_off(val, &((struct roce_dev_args *)opaque)->direct_off);
}

static int
arg_queues(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	uint32_t v;

	RTE_SET_USED(key);
	if (arg_uint(val, 1, DROCE_MAX_QUEUES, &v) != 0)
		return -EINVAL;
	a->nb_q = v;
	return 0;
}

static int
arg_steering(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;

	RTE_SET_USED(key);
	return roce_steer_parse(val, &a->steer);
}

/* zcopy=auto (the default) or the least message, in bytes, sent without a copy; 0: never */
static int
arg_zcopy(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	uint32_t v;

	RTE_SET_USED(key);
	a->zcopy_set = false;
	if (val != NULL && strcmp(val, "auto") == 0)
		return 0;
	if (arg_uint(val, 0, ZCOPY_MAX, &v) != 0)
		return -EINVAL;
	a->zcopy_set = true;
	a->zcopy = v;
	return 0;
}

static int
arg_neigh(const char *key, const char *val, void *opaque)
{
	struct roce_dev_args *a = opaque;
	char buf[64], *at;
	struct in_addr in;

	if (val == NULL || strlen(val) >= sizeof(buf) || a->nb_neigh == DROCE_NEIGH_MAX)
		return -EINVAL;
	strcpy(buf, val);
	at = strchr(buf, '@');
	if (at == NULL)
		return -EINVAL;
	*at = '\0';
	if (inet_pton(AF_INET, buf, &in) != 1 ||
	    rte_ether_unformat_addr(at + 1, &a->neigh[a->nb_neigh].mac) != 0)
		return -EINVAL;
	a->neigh[a->nb_neigh++].ip = in.s_addr;
	return 0;
}

/* Devargs into @a (zeroed by the caller, .dev and .lcore set); 0 or -EINVAL. */
int
roce_dev_args_parse(struct roce_dev_args *a, const char *params)
{
	static const struct {
		const char *key;
		arg_handler_t fn;
	} handlers[] = {
		{ ARG_ETHDEV, arg_ethdev }, { ARG_IP, arg_ip }, { ARG_MAC, arg_mac },
		{ ARG_MTU, arg_mtu }, { ARG_LCORE, arg_lcore }, { ARG_NEIGH, arg_neigh },
		{ ARG_LINK_WAIT, arg_link_wait }, { ARG_PCAPNG, arg_pcapng },
		{ ARG_OWN, arg_own }, { ARG_ETHPORT, arg_ethport }, { ARG_QUEUES, arg_queues },
		{ ARG_RTO_MIN, arg_rto_min },
		{ ARG_STEERING, arg_steering }, { ARG_ZCOPY, arg_zcopy },
		{ ARG_DIRECT, arg_direct },
	};
	struct rte_kvargs *kv;
	int ret = 0;

	kv = rte_kvargs_parse(params ? params : "", valid_args);
	if (kv == NULL) {
		ROCE_LOG(ERR, "%s: unknown or malformed argument in \"%s\" (valid: ethdev, ip, mac, mtu, lcore, neigh, link_wait, pcapng, own, ethport, queues, rto_min_us, steering, zcopy, direct)",
			 a->dev, params ? params : "");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < RTE_DIM(handlers); i++) {
		if (rte_kvargs_process(kv, handlers[i].key, handlers[i].fn, a) < 0) {
			ROCE_LOG(ERR, "%s: invalid value for argument '%s'", a->dev, handlers[i].key);
			ret = -EINVAL;
			goto out;
		}
	}
	if (a->ethdev[0] == '\0') {
		ROCE_LOG(ERR, "%s: missing required argument 'ethdev'", a->dev);
		ret = -EINVAL;
	} else if (a->ip == 0) {
		ROCE_LOG(ERR, "%s: missing required argument 'ip'", a->dev);
		ret = -EINVAL;
	}
out:
	rte_kvargs_free(kv);
	return ret;
}

/*
 * The device's queues (struct roce_q): queue 0 inside the device, the others
 * allocated; each with its doorbell ring and, when there are several, the
 * ring through which the others hand it frames.
 */
static int
queues_init(struct roce_dev *dev)
{
	char rname[RTE_RING_NAMESIZE];
	uint64_t now = rte_get_timer_cycles();

	for (uint16_t k = 0; k < dev->nb_q; k++) {
		struct roce_q *q = k == 0 ? &dev->q0 :
			rte_zmalloc_socket("droce_q", sizeof(*q), RTE_CACHE_LINE_SIZE, rte_socket_id());
		pthread_mutexattr_t ma;

		if (q == NULL)
			return -ENOMEM;
		dev->q[k] = q;
		q->dev = dev;
		q->id = k;
		rte_spinlock_init(&q->own_lock);
		q->lock = k == 0 ? &dev->inline_lock : &q->own_lock;
		q->clock_tsc = now;
		q->clock = now;
		roce_tx_zc_init(q);
		/* shared: processes forked later post to queue 0's (roce_share.c) */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&q->db_lock, &ma);
		pthread_mutexattr_destroy(&ma);
		/* a token per QP at most (roce_poll.c): enqueues never fail */
		snprintf(rname, sizeof(rname), "drdb%u_%.16s", k, dev->name);
		q->db = roce_ring_alloc(rname, sizeof(uint64_t), DROCE_MAX_QP, rte_socket_id(),
					RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (q->db == NULL)
			return -rte_errno;
		if (dev->nb_q == 1)
			continue;
		snprintf(rname, sizeof(rname), "drin%u_%.16s", k, dev->name);
		q->in = rte_ring_create(rname, DROCE_NB_RXD, rte_socket_id(),
					RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (q->in == NULL)
			return -rte_errno;
	}
	return 0;
}

/* After the engine and the port stopped: what the queues hold, and the queues. */
static void
queues_fini(struct roce_dev *dev)
{
	struct rte_mbuf *m;

	for (uint16_t k = 0; k < dev->nb_q; k++) {
		struct roce_q *q = dev->q[k];

		if (q == NULL)
			continue;
		rte_pktmbuf_free_bulk(q->tx, q->nb_tx);
		q->nb_tx = 0;
		if (q->in != NULL) {
			while (rte_ring_dequeue(q->in, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(q->in);
		}
		roce_ring_release(q->db);
		if (k != 0)
			rte_free(q);
		dev->q[k] = NULL;
	}
}

/* Largest IB MTU whose packets (with the longest request headers) fit. */
static uint16_t
ib_mtu_for(uint32_t eth_mtu)
{
	uint32_t room = eth_mtu - ROCE_IPV4_LEN - ROCE_UDP_LEN - ROCE_BTH_LEN - ROCE_ATMETH_LEN -
			ROCE_ICRC_LEN;
	uint32_t m = DROCE_MAX_MTU;

	while (m > DROCE_MIN_MTU && m > room)
		m >>= 1;
	return m;
}

static int
port_setup(struct roce_dev *dev, const struct roce_dev_args *a)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	char pname[RTE_MEMPOOL_NAMESIZE];
	uint16_t nb_rxd = DROCE_NB_RXD, nb_txd = DROCE_NB_TXD;
	uint32_t mtu;
	bool revive;
	int ret;

	ret = rte_eth_dev_info_get(dev->port_id, &info);
	if (ret)
		return ret;
	if (a->mtu) {
		mtu = a->mtu;
	} else {
		uint16_t cur;

		mtu = rte_eth_dev_get_mtu(dev->port_id, &cur) == 0 ? cur : RTE_ETHER_MTU;
	}
	if (mtu > info.max_mtu || mtu < info.min_mtu) {
		ROCE_LOG(ERR, "%s: mtu %u outside %s's range [%u, %u]", dev->name, mtu,
			 dev->ethdev_name, info.min_mtu, info.max_mtu);
		return -EINVAL;
	}
	dev->mtu = mtu;
	dev->ib_mtu = ib_mtu_for(mtu);

	snprintf(pname, sizeof(pname), "droce_mp_%.16s", dev->name);
	/* at least the usual 2 KiB: PMDs such as af_packet (framesz 2048) refuse smaller */
	dev->mp = rte_pktmbuf_pool_create(pname, DROCE_NB_MBUF, DROCE_MBUF_CACHE, 0,
		RTE_PKTMBUF_HEADROOM + RTE_MAX(RTE_ALIGN_CEIL(mtu + RTE_ETHER_HDR_LEN + 8, 64),
					       (uint32_t)RTE_MBUF_DEFAULT_DATAROOM),
		rte_socket_id());
	if (dev->mp == NULL) {
		ROCE_LOG(ERR, "%s: cannot create mbuf pool: %s", dev->name, rte_strerror(rte_errno));
		return -rte_errno;
	}

	conf.rxmode.mtu = mtu;
	ret = roce_port_zc_min(dev, &info, a, &conf.txmode.offloads, &dev->zc_min);
	if (ret)
		return ret;
	/* link changes become port events: by interrupt where the PMD has one */
	dev->port_lsc = (*info.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0;
	conf.intr_conf.lsc = dev->port_lsc;
	if (info.max_rx_queues < dev->nb_q || info.max_tx_queues < dev->nb_q) {
		ROCE_LOG(ERR, "%s: %s has at most %u rx and %u tx queues: 'queues' %u is too many",
			 dev->name, dev->ethdev_name, info.max_rx_queues, info.max_tx_queues,
			 dev->nb_q);
		return -EINVAL;
	}
	ret = roce_steer_conf(dev, &info, &conf);
	if (ret)
		return ret;
	ret = rte_eth_dev_configure(dev->port_id, dev->nb_q, dev->nb_q, &conf);
	if (ret) {
		ROCE_LOG(ERR, "%s: cannot configure %s: %s", dev->name, dev->ethdev_name, rte_strerror(-ret));
		return ret;
	}
	rte_eth_dev_adjust_nb_rx_tx_desc(dev->port_id, &nb_rxd, &nb_txd);
	for (uint16_t k = 0; k < dev->nb_q && ret == 0; k++) {
		ret = rte_eth_rx_queue_setup(dev->port_id, k, nb_rxd,
					     rte_eth_dev_socket_id(dev->port_id), NULL, dev->mp);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(dev->port_id, k, nb_txd,
						     rte_eth_dev_socket_id(dev->port_id), NULL);
	}
	if (ret) {
		ROCE_LOG(ERR, "%s: queue setup on %s failed: %s", dev->name, dev->ethdev_name, rte_strerror(-ret));
		return ret;
	}
	/*
	 * net_shm, unless direct=0: frames built straight in its slots
	 * (roce_txf_begin) and read there without mbufs (roce_rx_shm)
	 */
	for (uint16_t k = 0; k < dev->nb_q; k++) {
		dev->q[k]->shm_txq = a->direct_off ? NULL :
				     shm_direct_queue(dev->port_id, k, info.driver_name, true);
		roce_rx_shm_init(dev->q[k], a->direct_off ? NULL :
				 shm_direct_queue(dev->port_id, k, info.driver_name, false));
	}
	if (a->has_mac) {
		ret = rte_eth_dev_default_mac_addr_set(dev->port_id, (struct rte_ether_addr *)&a->mac);
		if (ret && ret != -ENOTSUP) {
			ROCE_LOG(ERR, "%s: cannot set mac on %s: %s", dev->name, dev->ethdev_name, rte_strerror(-ret));
			return ret;
		}
		dev->mac = a->mac;
	} else {
		rte_eth_macaddr_get(dev->port_id, &dev->mac);
		if (!rte_is_valid_assigned_ether_addr(&dev->mac)) {
			/* e.g. net_ring: derive a locally administered MAC from the IP */
			dev->mac.addr_bytes[0] = 0x02;
			dev->mac.addr_bytes[1] = 0xd0;
			memcpy(&dev->mac.addr_bytes[2], &dev->ip, 4);
			rte_eth_dev_default_mac_addr_set(dev->port_id, &dev->mac);
		}
	}
	roce_rx_plain_init(dev);
	rte_eth_promiscuous_enable(dev->port_id);
	revive = roce_port_guard_init(dev);
	ret = rte_eth_dev_start(dev->port_id);
	if (ret && !revive) {
		ROCE_LOG(ERR, "%s: cannot start %s: %s", dev->name, dev->ethdev_name, rte_strerror(-ret));
		return ret;
	}
	if (ret)
		ROCE_LOG(INFO, "%s: %s has no server yet: connecting every %u ms", dev->name,
			 dev->ethdev_name, DROCE_PORT_REVIVE_MS);
	else if (roce_steer_start(dev) != 0) {
		roce_steer_stop(dev);
		rte_eth_dev_stop(dev->port_id);
		return -ENOTSUP;
	}
	roce_port_revive_start(dev, ret == 0);
	return 0;
}

int
roce_dev_link_up(struct roce_dev *dev)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(dev->port_id, &link) != 0)
		return 0;
	return link.link_status == RTE_ETH_LINK_UP;
}

/*
 * link_wait: a port whose link comes up only once a peer attaches (memif)
 * gets that long for it, so that a program checking the port state right
 * after opening the device sees the link as it will be. The state reported
 * stays the link's: a link still down after the wait is reported down.
 */
static void
link_wait(struct roce_dev *dev, uint32_t ms)
{
	uint64_t end = rte_get_timer_cycles() + (uint64_t)ms * rte_get_timer_hz() / 1000;

	while (!roce_dev_link_up(dev)) {
		if (rte_get_timer_cycles() >= end) {
			ROCE_LOG(WARNING, "%s: link of %s still down after link_wait=%u ms",
				 dev->name, dev->ethdev_name, ms);
			return;
		}
		rte_delay_us_sleep(1000);
	}
}

static int
roce_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct roce_dev_args a = { .dev = name, .lcore = -2, .ethport = true, .nb_q = 1,
				   .rto_min_us = DROCE_RTO_MIN_US };
	struct roce_dev *dev;
	char rname[RTE_RING_NAMESIZE];
	int slot = -1, ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		ROCE_LOG(ERR, "%s: only primary processes can own a droce device", name);
		return -ENOTSUP;
	}
	ret = roce_dev_args_parse(&a, rte_vdev_device_args(vdev));
	if (ret)
		return ret;

	pthread_mutex_lock(&devs_lock);
	for (int i = 0; i < DROCE_MAX_DEVS; i++)
		if (devs[i] == NULL) {
			slot = i;
			break;
		}
	pthread_mutex_unlock(&devs_lock);
	if (slot < 0) {
		ROCE_LOG(ERR, "%s: more than %d droce devices", name, DROCE_MAX_DEVS);
		return -ENOSPC;
	}

	dev = rte_zmalloc_socket(name, sizeof(*dev), RTE_CACHE_LINE_SIZE, rte_socket_id());
	if (dev == NULL)
		return -ENOMEM;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(dev->ethdev_name, sizeof(dev->ethdev_name), "%s", a.ethdev);
	dev->ip = a.ip;
	dev->txh_gen = 1;	/* odd: a QP's header gen of 0 is none */
	dev->lcore = a.lcore;
	dev->progress_own = a.progress_own;
	dev->tsc_hz = rte_get_timer_hz();
	dev->clock_gap_max = dev->tsc_hz * DROCE_CLOCK_GAP_US / 1000000;
	dev->rto_min = dev->tsc_hz / 1000000 * a.rto_min_us;
	dev->nb_q = a.nb_q;
	dev->steer_arg = a.steer;
	dev->steer = ROCE_STEER_NONE;	/* until the started port says (roce_steer_start) */
	dev->nb_lcores = a.nb_lcores;
	memcpy(dev->q_lcore, a.q_lcore, sizeof(dev->q_lcore));
	rte_spinlock_init(&dev->inline_lock);
	if (roce_self_pid == 0)		/* the lock's holders write it there */
		roce_self_pid = getpid();
	/*
	 * DPDK's memory is mapped shared, so processes forked later use these
	 * too (roce_share.c): waiters of another process must be woken
	 */
	{
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&dev->lock, &ma);
		pthread_mutex_init(&dev->port_lock, &ma);
		pthread_mutex_init(&dev->mcast_lock, &ma);
		pthread_mutex_init(&dev->cq_resize_lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}

	ret = rte_eth_dev_get_port_by_name(a.ethdev, &dev->port_id);
	if (ret) {
		ROCE_LOG(ERR, "%s: argument 'ethdev': no ethdev port named \"%s\"", name, a.ethdev);
		ret = -ENODEV;
		goto err_free_dev;
	}
	if (roce_eth_is_droce(dev->port_id)) {
		ROCE_LOG(ERR, "%s: argument 'ethdev': %s is a droce device's own port", name, a.ethdev);
		ret = -EINVAL;
		goto err_free_dev;
	}
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++) {
		if (devs[i] && devs[i]->port_id == dev->port_id) {
			ROCE_LOG(ERR, "%s: argument 'ethdev': %s is already owned by %s",
				 name, a.ethdev, devs[i]->name);
			ret = -EBUSY;
			goto err_free_dev;
		}
	}
	snprintf(rname, sizeof(rname), "droce_lo_%.16s", name);
	dev->loop = rte_ring_create(rname, DROCE_LOOP_RING, rte_socket_id(),
				    RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (dev->loop == NULL) {
		ret = -rte_errno;
		goto err_free_dev;
	}
	ret = queues_init(dev);
	if (ret) {
		rte_ring_free(dev->loop);
		goto err_free_dev;
	}
	/*
	 * Before the port is owned: rte_pcapng_fdopen describes the ports
	 * RTE_ETH_FOREACH_DEV lists, which skips owned ones
	 */
	if (a.pcapng[0] != '\0') {
		ret = roce_capture_start(dev, a.pcapng);
		if (ret)
			goto err_free_pool;
	}
	/*
	 * own the port so that applications iterating ethdevs leave it alone;
	 * own=0 leaves it listed for the tools that only see ports nobody
	 * owns (DPDK 22.11's dpdk-dumpcap lists, counts and describes in its
	 * pcapng file only those)
	 */
	if (!a.unowned && rte_eth_dev_owner_new(&dev->owner.id) == 0) {
		snprintf(dev->owner.name, sizeof(dev->owner.name), "%s", "droce");
		rte_eth_dev_owner_set(dev->port_id, &dev->owner);
	}
	ret = port_setup(dev, &a);
	if (ret)
		goto err_unown;
	/* processes forked later share the device (roce_share.c) */
	ret = roce_share_init(dev);
	if (ret)
		ROCE_LOG(WARNING, "%s: cannot be shared with forked processes: %s",
			 name, rte_strerror(-ret));
	for (unsigned int i = 0; i < a.nb_neigh; i++)
		roce_neigh_add(dev, a.neigh[i].ip, &a.neigh[i].mac, true);
	if (a.link_wait_ms)
		link_wait(dev, a.link_wait_ms);
	/* GUID from the MAC, EUI-64 style */
	dev->guid = ((uint64_t)dev->mac.addr_bytes[0] ^ 2) << 56 |
		    (uint64_t)dev->mac.addr_bytes[1] << 48 | (uint64_t)dev->mac.addr_bytes[2] << 40 |
		    0xfffeULL << 24 | (uint64_t)dev->mac.addr_bytes[3] << 16 |
		    (uint64_t)dev->mac.addr_bytes[4] << 8 | dev->mac.addr_bytes[5];
	dev->guid = rte_cpu_to_be_64(dev->guid);
	/* peers that knew this IP under another MAC learn the new one */
	dev->announce = 1;
	roce_rdev_init(dev);
	if (a.ethport) {
		ret = roce_eth_create(dev, &vdev->device);
		if (ret)
			goto err_stop;
	}

	pthread_mutex_lock(&devs_lock);
	devs[slot] = dev;
	pthread_mutex_unlock(&devs_lock);
	droce_rdev_register(&dev->rdev);
	{
		char ipbuf[INET_ADDRSTRLEN], macbuf[RTE_ETHER_ADDR_FMT_SIZE];

		inet_ntop(AF_INET, &dev->ip, ipbuf, sizeof(ipbuf));
		rte_ether_format_addr(macbuf, sizeof(macbuf), &dev->mac);
		ROCE_LOG(INFO, "%s on %s (port %u): ip %s mac %s mtu %u ib_mtu %u",
			 name, a.ethdev, dev->port_id, ipbuf, macbuf, dev->mtu, dev->ib_mtu);
	}
	return 0;

err_stop:
	roce_share_fini(dev);
	roce_port_revive_stop(dev);
	roce_steer_stop(dev);
	rte_eth_dev_stop(dev->port_id);
err_unown:
	if (dev->owner.id != RTE_ETH_DEV_NO_OWNER)
		rte_eth_dev_owner_unset(dev->port_id, dev->owner.id);
	roce_capture_stop(dev);
err_free_pool:
	if (dev->mp)
		rte_mempool_free(dev->mp);
	rte_ring_free(dev->loop);
	queues_fini(dev);
err_free_dev:
	rte_free(dev);
	return ret;
}

static int
roce_remove(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct roce_dev *dev = NULL;
	struct rte_mbuf *m;

	pthread_mutex_lock(&devs_lock);
	for (int i = 0; i < DROCE_MAX_DEVS; i++)
		if (devs[i] && strcmp(devs[i]->name, name) == 0) {
			dev = devs[i];
			devs[i] = NULL;
		}
	pthread_mutex_unlock(&devs_lock);
	if (dev == NULL)
		return -ENODEV;
	droce_rdev_unregister(&dev->rdev);
	if (dev->ctx_refs)
		ROCE_LOG(WARNING, "%s: removed while %u contexts are open", name, dev->ctx_refs);
	/* its ethdev port first: a started one holds the progress stopped below */
	roce_eth_destroy(dev);
	roce_port_revive_stop(dev);
	roce_port_monitor_stop(dev);
	roce_engine_detach(dev);
	roce_capture_stop(dev);
	roce_steer_stop(dev);
	rte_eth_dev_stop(dev->port_id);
	if (dev->owner.id != RTE_ETH_DEV_NO_OWNER)
		rte_eth_dev_owner_unset(dev->port_id, dev->owner.id);
	while (rte_ring_dequeue(dev->loop, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(dev->loop);
	queues_fini(dev);
	roce_share_fini(dev);
	rte_mempool_free(dev->mp);
	rte_free(dev);
	return 0;
}

/* One more object of a kind (@count, a dev->nb_* field): -ENOMEM past @max. */
int
roce_dev_obj_take(struct roce_dev *dev, uint32_t *count, uint32_t max)
{
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (*count >= max)
		ret = -ENOMEM;
	else
		++*count;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void
roce_dev_obj_drop(struct roce_dev *dev, uint32_t *count)
{
	pthread_mutex_lock(&dev->lock);
	--*count;
	pthread_mutex_unlock(&dev->lock);
}

/*
 * Progress (an engine lcore or inline) and port events run while a context
 * is open or the device's ethdev port is started. Under dev->lock.
 */
static int
progress_get(struct roce_dev *dev)
{
	int ret;

	if (dev->prog_refs == 0) {
		ret = roce_engine_attach(dev);
		if (ret)
			return ret;
		roce_port_monitor_start(dev);
		/* the facade rings the doorbell only for inline progress */
		__atomic_store_n(&dev->rdev.progress, dev->engine ? NULL : roce_progress,
				 __ATOMIC_RELAXED);
	}
	dev->prog_refs++;
	return 0;
}

static void
progress_put(struct roce_dev *dev)
{
	if (dev->prog_refs && --dev->prog_refs == 0) {
		roce_port_monitor_stop(dev);
		roce_engine_detach(dev);
		__atomic_store_n(&dev->rdev.progress, roce_progress, __ATOMIC_RELAXED);
	}
}

/* The device's ethdev port starts (roce_ethdev.c): progress runs. */
int
roce_dev_progress_get(struct roce_dev *dev)
{
	int ret;

	pthread_mutex_lock(&dev->lock);
	ret = progress_get(dev);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void
roce_dev_progress_put(struct roce_dev *dev)
{
	pthread_mutex_lock(&dev->lock);
	progress_put(dev);
	pthread_mutex_unlock(&dev->lock);
}

/* A context opens. */
int
roce_dev_open(struct roce_dev *dev)
{
	int ret;

	roce_share_child_start();	/* a forked process's first open (roce_share.c) */
	if (!roce_share_usable(dev))
		return -ENODEV;
	pthread_mutex_lock(&dev->lock);
	ret = progress_get(dev);
	if (ret == 0)
		dev->ctx_refs++;
	pthread_mutex_unlock(&dev->lock);
	/* the count is every process's: a forked one may find it attached by another */
	if (ret == 0 && roce_share_is_child())
		ret = roce_engine_join(dev);
	return ret;
}

void
roce_dev_close(struct roce_dev *dev)
{
	pthread_mutex_lock(&dev->lock);
	if (dev->ctx_refs) {
		dev->ctx_refs--;
		progress_put(dev);
	}
	pthread_mutex_unlock(&dev->lock);
}

static struct rte_vdev_driver roce_vdev_drv = {
	.probe = roce_probe,
	.remove = roce_remove,
};

RTE_PMD_REGISTER_VDEV(droce, roce_vdev_drv);
RTE_PMD_REGISTER_PARAM_STRING(droce,
	ARG_ETHDEV "=<ethdev name> "
	ARG_IP "=<IPv4> "
	ARG_MAC "=<xx:xx:xx:xx:xx:xx> "
	ARG_MTU "=<576..9600> "
	ARG_LCORE "=<lcore id>|auto|inline|thread "
	ARG_NEIGH "=<IPv4>@<mac> "
	ARG_LINK_WAIT "=<ms, 0..60000> "
	ARG_PCAPNG "=<file> "
	ARG_OWN "=0|1 "
	ARG_ETHPORT "=0|1");
