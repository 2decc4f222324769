/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port 1's state follows the ethdev's link. A change is announced to every
 * open context as IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR. It is seen on
 * the control path only: the ethdev's link-state interrupt where the PMD has
 * one (RTE_ETH_DEV_INTR_LSC), else an EAL alarm polling the link every
 * DROCE_LINK_POLL_MS, and any ibv_query_port, which announces a change it
 * sees before it answers, so that the state it reports and the events agree.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>		/* syscall(), which rte_eth_memif.h uses */

#include <rte_alarm.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_pause.h>
#ifdef DROCE_MEMIF_GUARD
#include <net_memif/rte_eth_memif.h>
#endif

#include "roce_loc.h"

static void memif_populate(struct roce_dev *dev);

/* Under port_lock: the link is @up; a memif port's pages are mapped once per connection. */
static void
port_warm(struct roce_dev *dev, bool up)
{
	if (dev->port_guard == NULL)
		return;		/* not memif */
	if (up && !dev->port_warm)
		memif_populate(dev);
	dev->port_warm = up;
}

/*
 * A QP goes to RTR, its traffic about to start: the port's pages are
 * mapped now if the link checks (the alarm's every DROCE_LINK_POLL_MS) have
 * not yet seen it up.
 */
void
roce_port_warm(struct roce_dev *dev)
{
	if (dev->port_guard == NULL)
		return;
	pthread_mutex_lock(&dev->port_lock);
	port_warm(dev, roce_dev_link_up(dev));
	pthread_mutex_unlock(&dev->port_lock);
}

/*
 * Read the link; announce a change. Returns the state now announced (true:
 * ACTIVE). Called from the EAL interrupt thread and from query_port.
 */
bool
roce_port_check(struct roce_dev *dev)
{
	struct rte_eth_link link;
	bool up;

	pthread_mutex_lock(&dev->port_lock);
	up = rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
	     link.link_status == RTE_ETH_LINK_UP;
	port_warm(dev, up);
	if (up != dev->port_up) {
		struct ibv_async_event ev = {
			.element.port_num = 1,
			.event_type = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
		};

		dev->port_up = up;
		if (up)
			__atomic_store_n(&dev->announce, 1, __ATOMIC_RELEASE);
		ROCE_LOG(INFO, "%s: port 1 %s (link of %s)", dev->name, up ? "ACTIVE" : "DOWN",
			 dev->ethdev_name);
		roce_async_raise(dev, &ev);
	}
	pthread_mutex_unlock(&dev->port_lock);
	return up;
}

static void
port_alarm(void *arg)
{
	struct roce_dev *dev = arg;

	roce_port_check(dev);
	if (rte_eal_alarm_set(DROCE_LINK_POLL_MS * 1000, port_alarm, dev) != 0)
		ROCE_LOG(ERR, "%s: cannot re-arm the link poll: port events stop", dev->name);
}

static int
port_lsc(uint16_t port_id, enum rte_eth_event_type type, void *arg, void *ret_param)
{
	RTE_SET_USED(port_id);
	RTE_SET_USED(type);
	RTE_SET_USED(ret_param);
	roce_port_check(arg);
	return 0;
}

/* First context opened: the current link is the state, unannounced. */
void
roce_port_monitor_start(struct roce_dev *dev)
{
	struct rte_eth_link link;
	int ret;

	pthread_mutex_lock(&dev->port_lock);
	dev->port_up = rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
		       link.link_status == RTE_ETH_LINK_UP;
	pthread_mutex_unlock(&dev->port_lock);
	if (dev->port_lsc)
		ret = rte_eth_dev_callback_register(dev->port_id, RTE_ETH_EVENT_INTR_LSC,
						    port_lsc, dev);
	else
		ret = rte_eal_alarm_set(DROCE_LINK_POLL_MS * 1000, port_alarm, dev);
	if (ret != 0)
		ROCE_LOG(ERR, "%s: cannot watch the link of %s (%d): no port events",
			 dev->name, dev->ethdev_name, ret);
}

/* Last context closed: no callback runs on @dev once this returns. */
void
roce_port_monitor_stop(struct roce_dev *dev)
{
	if (!dev->port_lsc) {
		/* waits for a running callback, and removes what it re-armed */
		rte_eal_alarm_cancel(port_alarm, dev);
		return;
	}
	while (rte_eth_dev_callback_unregister(dev->port_id, RTE_ETH_EVENT_INTR_LSC,
					       port_lsc, dev) == -EAGAIN)
		rte_pause();
}

/*
 * net_memif (DPDK 22.11) unmaps a port's shared rings and frees its regions
 * from the EAL interrupt thread when the peer leaves (memif_disconnect), while
 * droce may be inside a burst on them: the survivor of a killed peer died of
 * SIGSEGV in the PMD's transmit. memif_disconnect clears the port's CONNECTED
 * flag, then takes the port's control-channel lock, and unmaps only after it
 * has released it; each burst of the PMD checks the flag first. With that
 * lock held around every burst of droce's, the unmapping waits for a burst in
 * flight, and a burst that starts later finds the flag cleared and touches
 * nothing. The lock is the PMD's own (its private header, which setup.sh
 * takes from Debian's DPDK source package with the driver SDK headers);
 * memif takes it only when it disconnects, so droce's bursts never wait on it
 * otherwise.
 *
 * memif never reconnects a client whose server left, nor starts one whose
 * server is not there yet: droce restarts such a port (stop, start, which
 * connects) every DROCE_PORT_REVIVE_MS while it has no control channel,
 * from the interrupt thread, where memif's own handlers run; the engine
 * skips the port meanwhile (port_paused).
 */
#ifdef DROCE_MEMIF_GUARD
static struct pmd_internals *
memif_of(struct roce_dev *dev)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(dev->port_id, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_memif") != 0)
		return NULL;
	return rte_eth_devices[dev->port_id].data->dev_private;
}

static void
port_revive(void *arg)
{
	struct roce_dev *dev = arg;
	struct pmd_internals *pmd = rte_eth_devices[dev->port_id].data->dev_private;

	/* no control channel: not connected, nor connecting (the alarm runs in
	 * the interrupt thread, as memif's handlers that change it) */
	if (pmd->cc == NULL) {
		int ret;

		int lt = rte_log_register("pmd.net.memif"), level = rte_log_get_level(lt);

		__atomic_store_n(&dev->port_paused, 1, __ATOMIC_RELEASE);
		roce_dev_quiesce(dev);
		/*
		 * a start that fails (no server yet) is tried again, quietly: memif's
		 * own error for it is kept out of the log (its control path runs in
		 * this thread, so nothing else of memif's is silenced meanwhile)
		 */
		if (lt >= 0)
			rte_log_set_level(lt, RTE_LOG_CRIT);
		if (rte_eth_devices[dev->port_id].data->dev_started)
			rte_eth_dev_stop(dev->port_id);
		ret = rte_eth_dev_start(dev->port_id);
		if (lt >= 0 && level >= 0)
			rte_log_set_level(lt, level);
		if (ret == 0) {
			__atomic_store_n(&dev->port_paused, 0, __ATOMIC_RELEASE);
			ROCE_LOG(INFO, "%s: %s restarted: connecting to its server", dev->name,
				 dev->ethdev_name);
		}
	}
	if (rte_eal_alarm_set(DROCE_PORT_REVIVE_MS * 1000, port_revive, dev) != 0)
		ROCE_LOG(ERR, "%s: cannot re-arm the restart of %s: it stays down once its peer leaves",
			 dev->name, dev->ethdev_name);
}
#endif

/*
 * net_memif maps its rings and packet buffers when it connects, and a page
 * costs its first touch a fault: the first pass of the traffic through a
 * ring took one per buffer page (two 2 KiB buffers) on each side. In a VM
 * with shadow paging (a PVM guest: ~15-30 us a fault, twice for a page the
 * guest has not mapped either) that made the first ~500 round trips of a
 * ping-pong (a 1024-slot ring, a SEND and an ACK each way) ~35 us each
 * instead of ~2 us: 2.5% of a 20000-iteration run, its 99th percentile.
 * Each page is mapped (MADV_POPULATE_WRITE, Linux 5.14) and read once here
 * instead, 20-30 ms there for the 4 MiB of a default port, off the traffic. A
 * kernel without MADV_POPULATE_WRITE refuses it and nothing is done: a read
 * alone maps a page read-only, and its first write would fault anyway.
 */
#define MEMIF_WARM_CHUNK	(256u << 10)	/* the guard's longest hold: a chunk's faults */

#if defined(DROCE_MEMIF_GUARD) && defined(MADV_POPULATE_WRITE)
/*
 * One chunk of region @i from @off, under the guard with the port connected,
 * as a burst: the unmapping of a disconnection waits for it
 * (roce_port_burst_guarded). 1: more to do in the region, 0: its end, -1: stop.
 */
static int
memif_warm_chunk(struct roce_dev *dev, struct pmd_internals *pmd, unsigned int i, size_t off)
{
	const struct pmd_process_private *pp = rte_eth_devices[dev->port_id].process_private;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct memif_region *r;
	volatile const uint8_t *p;
	size_t len;
	int ret = -1;

	roce_spin_lock(&pmd->cc_lock);
	if (!(pmd->flags & ETH_MEMIF_FLAG_CONNECTED) || pp == NULL || i >= pp->regions_num)
		goto out;
	r = pp->regions[i];
	ret = 0;
	if (r == NULL || r->addr == NULL || off >= r->region_size)
		goto out;
	len = RTE_MIN((size_t)r->region_size - off, (size_t)MEMIF_WARM_CHUNK);
	p = (uint8_t *)r->addr + off;
	ret = -1;
	if (madvise((uint8_t *)r->addr + off, len, MADV_POPULATE_WRITE) != 0)
		goto out;
	for (size_t k = 0; k < len; k += page)
		(void)p[k];	/* a shadow-paging hypervisor maps it on this first touch */
	ret = off + len < r->region_size;
out:
	roce_spin_unlock(&pmd->cc_lock);
	return ret;
}
#endif

static void
memif_populate(struct roce_dev *dev)
{
#if defined(DROCE_MEMIF_GUARD) && defined(MADV_POPULATE_WRITE)
	struct pmd_internals *pmd = memif_of(dev);

	if (pmd == NULL)
		return;
	for (unsigned int i = 0;; i++) {
		int ret;

		for (size_t off = 0; (ret = memif_warm_chunk(dev, pmd, i, off)) == 1;
		     off += MEMIF_WARM_CHUNK)
			;
		if (ret < 0)
			return;
	}
#else
	RTE_SET_USED(dev);
#endif
}

/*
 * After the port is configured: a memif port gets the guard, a memif client
 * its restarts. Returns whether a failed start of the port may be left to
 * those restarts (a client started before its server).
 */
bool
roce_port_guard_init(struct roce_dev *dev)
{
	/* ports that hold no frame once a tx burst returns: no empty bursts for them */
	static const char *const sends_at_once[] = {
		"net_ring", "net_memif", "net_shm", "net_af_packet", "net_tap", "net_af_xdp",
	};
	struct rte_eth_dev_info info;

	dev->port_tx_kick = true;
	if (rte_eth_dev_info_get(dev->port_id, &info) == 0 && info.driver_name != NULL)
		for (unsigned int i = 0; i < RTE_DIM(sends_at_once); i++)
			if (strcmp(info.driver_name, sends_at_once[i]) == 0)
				dev->port_tx_kick = false;
#ifdef DROCE_MEMIF_GUARD
	struct pmd_internals *pmd = memif_of(dev);

	if (pmd == NULL)
		return false;
	dev->port_guard = &pmd->cc_lock;
	dev->port_revive = pmd->role == MEMIF_ROLE_CLIENT;
	return dev->port_revive;
#else
	RTE_SET_USED(dev);
	return false;
#endif
}

/* memif's devarg zero-copy, as memif reads it (a value with "yes" in it) */
static int
memif_zc_arg(const char *key, const char *val, void *opaque)
{
	RTE_SET_USED(key);
	if (val != NULL && strstr(val, "yes") != NULL)
		*(bool *)opaque = true;
	return 0;
}

/* Whether the port copies each frame it takes, chains too, and frees it before its burst returns. */
static bool
port_copies(struct roce_dev *dev, const struct rte_eth_dev_info *info)
{
	static const char *const copies[] = {
		"net_shm", "net_memif", "net_af_packet", "net_tap", "net_pcap",
	};
	const struct rte_devargs *da = rte_eth_devices[dev->port_id].device->devargs;
	bool zc = false;

	if (info->driver_name == NULL)
		return false;
	if (strcmp(info->driver_name, "net_memif") == 0 && da != NULL && da->args != NULL) {
		struct rte_kvargs *kv = rte_kvargs_parse(da->args, NULL);

		/* zero-copy=yes: memif hands the mbufs to its peer */
		if (kv == NULL || rte_kvargs_process(kv, "zero-copy", memif_zc_arg, &zc) != 0)
			zc = true;
		rte_kvargs_free(kv);
		if (zc)
			return false;
	}
	for (unsigned int i = 0; i < RTE_DIM(copies); i++)
		if (strcmp(info->driver_name, copies[i]) == 0)
			return true;
	return false;
}

/*
 * Zero-copy transmit (roce_tx_zc): its frames point into registered memory,
 * which is safe only where no frame outlives the tx burst that takes it, so
 * that none is left once the flush returns: ports that copy each frame (and
 * its chain) and free it before they return. net_ring and a NIC hold the
 * mbufs (and a NIC would need the memory mapped for DMA); a wrapper
 * (net_impair) may hold them; memif with zero-copy=yes hands them to its
 * peer. zcopy=auto picks the ports that copy; a number forces it on a port
 * that takes multi-segment frames (the user vouches that it copies; a
 * warning says so). *@min: the least message, 0 for none; the port's tx
 * offloads gain multi-segment frames. 0, or -EINVAL (a number given for a
 * port without multi-segment transmit).
 */
int
roce_port_zc_min(struct roce_dev *dev, const struct rte_eth_dev_info *info,
		 const struct roce_dev_args *a, uint64_t *tx_offloads, uint32_t *min)
{
	bool segs = (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	bool copies = port_copies(dev, info);

	*min = 0;
	if (a->zcopy_set && a->zcopy != 0) {
		if (!segs) {
			ROCE_LOG(ERR, "%s: zcopy=%u: %s does not send multi-segment frames",
				 dev->name, a->zcopy, dev->ethdev_name);
			return -EINVAL;
		}
		if (!copies)
			ROCE_LOG(WARNING, "%s: zcopy=%u on %s (%s), not known to copy the frames it "
				 "takes before its tx burst returns: one it holds longer still points "
				 "into application memory after its WR completed",
				 dev->name, a->zcopy, dev->ethdev_name,
				 info->driver_name ? info->driver_name : "?");
		*min = a->zcopy;
	} else if (!a->zcopy_set && segs && copies) {
		*min = DROCE_ZCOPY_MIN;
	}
	if (*min != 0)
		*tx_offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	return 0;
}

/* The port started (@started: false, its start failed): restarts begin. */
void
roce_port_revive_start(struct roce_dev *dev, bool started)
{
#ifdef DROCE_MEMIF_GUARD
	if (!dev->port_revive)
		return;
	if (!started)
		__atomic_store_n(&dev->port_paused, 1, __ATOMIC_RELEASE);
	if (rte_eal_alarm_set(DROCE_PORT_REVIVE_MS * 1000, port_revive, dev) != 0)
		ROCE_LOG(ERR, "%s: cannot arm the restart of %s: it stays down once its peer leaves",
			 dev->name, dev->ethdev_name);
#else
	RTE_SET_USED(dev);
	RTE_SET_USED(started);
#endif
}

/* Before the port stops for good: no restart runs once this returns. */
void
roce_port_revive_stop(struct roce_dev *dev)
{
#ifdef DROCE_MEMIF_GUARD
	if (dev->port_revive)
		rte_eal_alarm_cancel(port_revive, dev);
#else
	RTE_SET_USED(dev);
#endif
}

/* A burst on a guarded port (@tx: transmit, else receive); none while it restarts. */
uint16_t
roce_port_burst_guarded(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, bool tx)
{
	struct roce_dev *dev = q->dev;
	uint16_t done;

	if (__atomic_load_n(&dev->port_paused, __ATOMIC_ACQUIRE))
		return 0;
	roce_spin_lock(dev->port_guard);	/* memif's own lock: its control thread takes it too */
	done = tx ? rte_eth_tx_burst(dev->port_id, q->id, pkts, n) :
		    rte_eth_rx_burst(dev->port_id, q->id, pkts, n);
	roce_spin_unlock(dev->port_guard);
	return done;
}
