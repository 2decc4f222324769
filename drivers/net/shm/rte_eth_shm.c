/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_shm: an Ethernet link between two processes on one host, through a
 * shared-memory segment that either process creates. Two processes that
 * give the same link= name are joined; neither is a server, either may start
 * first, and either may exit and be started again while the other runs.
 *
 *   --vdev=net_shm0,link=ab     (in both processes)
 *
 * The segment (/dev/shm/droce-shm.<link>) holds a header with two sides and
 * two single-producer single-consumer rings of frame slots, one towards each
 * side. A port claims a free side when it starts and gives it back when it
 * stops; a side whose process died (its pid is gone, or now names another
 * process) is free. The claimer empties the ring towards its side: frames
 * left there were sent before it existed. Claims and releases happen under
 * flock() on the segment; the data path takes no lock and makes no system
 * call: it copies frames into and out of slots and publishes the indexes
 * with release stores.
 *
 * The link is up while the port is started: like a NIC on a switch, it can
 * send whether or not the other host is up. Frames towards an absent peer
 * wait in the ring (at most its size; then tx_burst takes no more) and are
 * dropped by the next process to claim that side. A peer that dies leaves
 * the survivor's mapping untouched: nothing the peer does unmaps memory this
 * process uses.
 *
 * What DPDK's memif (the closest existing PMD) lacks for this use: a client
 * fails to start if its server does not exist yet and does not reconnect
 * after its server restarts, and a server's link is down until its client
 * connects. See doc/guides/user.rst, "Two processes on one host".
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_string_fns.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>

#include "droce_memcpy.h"
#include "shm_args.h"
#include "shm_dp.h"

#ifndef RTE_LOG_DEFAULT_LOGTYPE
#define RTE_LOG_DEFAULT_LOGTYPE pmd.net.shm
#endif
RTE_LOG_REGISTER_DEFAULT(shm_logtype, NOTICE);

#define SHM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, shm_logtype, "net_shm: " fmt "\n", ##__VA_ARGS__)

#define SHM_ARG_LINK		"link"
#define SHM_NAME_FMT		"/droce-shm.%s"

#define SHM_MAGIC		0x64736831u	/* "dsh1" */
#define SHM_VERSION		4u		/* 4: a big frame's payload on a line (shm_frame_off) */
#define SHM_MAX_MTU		(SHM_MAX_FRAME - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN)
/* big enough for RoCE's 4096-byte IB MTU with every header */
#define SHM_DEFAULT_MTU		4200u
#define SHM_BURST_MAX		64u
#define SHM_MIN_RX_BUF		64u		/* data room a receive mbuf needs at least */

/* One side of the link: the process that holds it. */
struct shm_side {
	int32_t pid;			/* 0: free */
	uint32_t gen;			/* claims so far */
	uint64_t start;			/* the holder's start time (/proc/<pid>/stat), 0 unknown */
};

struct shm_hdr {
	uint32_t magic;			/* written last by the creator */
	uint32_t version;
	uint32_t nb_slots;
	uint32_t slot_size;
	struct shm_side side[2] __rte_cache_aligned;
	struct shm_ring ring[2];	/* ring[i]: towards side i */
};

#define SHM_SLOTS_OFF		RTE_ALIGN_CEIL(sizeof(struct shm_hdr), 4096)
#define SHM_SEG_SIZE		(SHM_SLOTS_OFF + 2ull * SHM_NB_SLOTS * SHM_SLOT_SIZE)

struct shm_priv {
	char link[SHM_LINK_MAX + 1];
	char shm_name[SHM_LINK_MAX + 16];
	int fd;				/* -1 while stopped */
	struct shm_hdr *hdr;
	int side;			/* claimed side, -1 none */
	uint64_t stale;			/* frames dropped at claims */
	struct shm_queue rxq;
	struct shm_queue txq;
	struct rte_eth_stats base;	/* stats_reset */
	uint64_t stale_base;
};

static const char *const shm_valid_args[] = { SHM_ARG_LINK, NULL };

/*
 * Started ports of this process. Most programs exit without stopping their
 * ports: at exit, their sides are given back and an unused segment's name is
 * removed, but nothing is unmapped (an lcore may still be polling).
 */
static struct shm_priv *attached[RTE_MAX_ETHPORTS];
static pthread_mutex_t attached_lock = PTHREAD_MUTEX_INITIALIZER;
static bool atexit_set;

/* ---------------------------------------------------------------------
 * Data path.
 */

static uint16_t
shm_tx(void *queue, struct rte_mbuf **bufs, uint16_t nb)
{
	struct shm_queue *q = queue;
	uint16_t i;

	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = bufs[i], *seg;
		uint8_t *d;

		if (unlikely(m->pkt_len > SHM_MAX_FRAME || m->pkt_len == 0)) {
			q->errs++;
			rte_pktmbuf_free(m);
			continue;
		}
		d = shm_direct_slot(q, m->pkt_len);
		if (d == NULL)
			break;
		for (seg = m; seg != NULL; seg = seg->next) {
			droce_memcpy(d, rte_pktmbuf_mtod(seg, void *), seg->data_len);
			d += seg->data_len;
		}
		shm_direct_commit(q, m->pkt_len);
		rte_pktmbuf_free(m);
	}
	return i;
}

/* A frame into one mbuf, or a chain when the pool's buffers are smaller. */
static struct rte_mbuf *
frame_to_mbuf(struct rte_mempool *mp, uint16_t port, const uint8_t *src, uint32_t len)
{
	struct rte_mbuf *head = NULL, *tail = NULL;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n;

		if (unlikely(m == NULL)) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		n = RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m));
		droce_memcpy(rte_pktmbuf_mtod(m, void *), src, n);
		m->data_len = n;
		if (head == NULL) {
			head = m;
			m->port = port;
		} else {
			tail->next = m;
			head->nb_segs++;
		}
		head->pkt_len += n;
		tail = m;
		src += n;
		len -= n;
	} while (len != 0);
	return head;
}

static uint16_t
shm_rx(void *queue, struct rte_mbuf **bufs, uint16_t nb)
{
	struct shm_queue *q = queue;
	uint16_t n = 0;

	while (n < nb) {
		uint32_t len;
		const uint8_t *f = shm_direct_rx_peek(q, &len);
		struct rte_mbuf *m;

		if (f == NULL)
			break;
		m = frame_to_mbuf(q->mp, q->port, f, len);
		if (unlikely(m == NULL)) {
			q->errs++;	/* the frame stays for the next call */
			break;
		}
		shm_direct_rx_next(q, len);
		bufs[n++] = m;
	}
	shm_direct_rx_done(q);
	return n;
}

/* ---------------------------------------------------------------------
 * The segment and its sides (control path).
 */

/*
 * A process's start time in clock ticks since boot (0 if unknown) and
 * whether it has exited: a zombie, or one being torn down, holds no side
 * even though its pid still answers kill(pid, 0) until it is reaped.
 */
static uint64_t
proc_start(pid_t pid, bool *exited)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;

	if (exited != NULL)
		*exited = false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields follow the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return 0;
	/* field 3, the state: Z zombie, X dead */
	if (exited != NULL)
		*exited = p[2] == 'Z' || p[2] == 'X' || p[2] == 'x';
	/* field 22 is the start time; after ')' comes field 3 */
	for (int field = 3; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

static bool
side_alive(const struct shm_side *s)
{
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
	uint64_t start;
	bool exited;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return false;
	start = proc_start(pid, &exited);
	if (exited && (s->start == 0 || start == s->start))
		return false;
	/* the pid now names another process: the holder is gone */
	return s->start == 0 || start == 0 || start == s->start;
}

static int
lock_fd(int fd, int op)
{
	while (flock(fd, op) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static void
hdr_init(struct shm_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->version = SHM_VERSION;
	h->nb_slots = SHM_NB_SLOTS;
	h->slot_size = SHM_SLOT_SIZE;
	__atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
}

static bool
hdr_ok(const struct shm_hdr *h)
{
	return h->magic == SHM_MAGIC && h->version == SHM_VERSION &&
	       h->nb_slots == SHM_NB_SLOTS && h->slot_size == SHM_SLOT_SIZE;
}

/*
 * A segment of another size: held by a live process of another net_shm
 * build? It must not be resized under that process.
 */
static bool
seg_foreign_busy(int fd, off_t size)
{
	const struct shm_hdr *h;
	bool busy;

	if ((size_t)size < sizeof(*h))
		return false;
	h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return true;
	busy = h->magic == SHM_MAGIC && (side_alive(&h->side[0]) || side_alive(&h->side[1]));
	munmap((void *)(uintptr_t)h, sizeof(*h));
	return busy;
}

/*
 * Open (or create) the segment, locked. A segment that was unlinked while we
 * opened it (its last user left) is opened again; one of another layout is
 * taken over if no live process holds it. Returns the locked fd or -errno.
 */
static int
seg_open(struct shm_priv *p, const char *name, struct shm_hdr **hdrp)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat st;
		struct shm_hdr *h;
		int fd, ret;

		fd = shm_open(p->shm_name, O_RDWR | O_CREAT, 0600);
		if (fd < 0) {
			ret = -errno;
			SHM_LOG(ERR, "%s: cannot open shared memory %s: %s", name, p->shm_name,
				strerror(errno));
			return ret;
		}
		ret = lock_fd(fd, LOCK_EX);
		if (ret == 0 && fstat(fd, &st) != 0)
			ret = -errno;
		if (ret != 0) {
			close(fd);
			return ret;
		}
		if (st.st_nlink == 0) {		/* unlinked by its last user meanwhile */
			close(fd);
			continue;
		}
		if (st.st_size != 0 && (uint64_t)st.st_size != SHM_SEG_SIZE && seg_foreign_busy(fd, st.st_size)) {
			SHM_LOG(ERR, "%s: link %s is in use by a process with another net_shm layout",
				name, p->link);
			close(fd);
			return -EBUSY;
		}
		if ((uint64_t)st.st_size != SHM_SEG_SIZE && ftruncate(fd, SHM_SEG_SIZE) != 0) {
			ret = -errno;
			SHM_LOG(ERR, "%s: cannot size shared memory %s: %s", name, p->shm_name,
				strerror(errno));
			close(fd);
			return ret;
		}
		h = mmap(NULL, SHM_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (h == MAP_FAILED) {
			ret = -errno;
			SHM_LOG(ERR, "%s: cannot map shared memory %s: %s", name, p->shm_name,
				strerror(errno));
			close(fd);
			return ret;
		}
		if (!hdr_ok(h)) {
			if ((uint64_t)st.st_size == SHM_SEG_SIZE && h->magic == SHM_MAGIC &&
			    (side_alive(&h->side[0]) || side_alive(&h->side[1]))) {
				SHM_LOG(ERR, "%s: link %s is in use by a process with another "
					"net_shm layout", name, p->link);
				munmap(h, SHM_SEG_SIZE);
				close(fd);
				return -EBUSY;
			}
			hdr_init(h);
		}
		*hdrp = h;
		return fd;
	}
	return -EAGAIN;
}

/* Under the lock: free the segment's name if no live process holds a side. */
static void
seg_unlink_if_unused(struct shm_priv *p)
{
	if (!side_alive(&p->hdr->side[0]) && !side_alive(&p->hdr->side[1]))
		shm_unlink(p->shm_name);
}

/* Under the lock: give our side back; remove the name if nobody holds the link. */
static void
side_release(struct shm_priv *p)
{
	struct shm_side *me = &p->hdr->side[p->side];

	if (me->pid == (int32_t)getpid())
		__atomic_store_n(&me->pid, 0, __ATOMIC_RELEASE);
	seg_unlink_if_unused(p);
}

static void
release_at_exit(void)
{
	pthread_mutex_lock(&attached_lock);
	for (unsigned int i = 0; i < RTE_DIM(attached); i++) {
		struct shm_priv *p = attached[i];

		if (p != NULL && lock_fd(p->fd, LOCK_EX) == 0) {
			side_release(p);
			lock_fd(p->fd, LOCK_UN);
		}
		attached[i] = NULL;
	}
	pthread_mutex_unlock(&attached_lock);
}

static void
track(struct rte_eth_dev *dev, struct shm_priv *p)
{
	pthread_mutex_lock(&attached_lock);
	attached[dev->data->port_id] = p;
	if (p != NULL && !atexit_set)
		atexit_set = atexit(release_at_exit) == 0;
	pthread_mutex_unlock(&attached_lock);
}

/*
 * Map every page of the segment now (@h, mapped by this process), off the
 * traffic: the first pass through the rings would otherwise take a page
 * fault per slot page on each side, and a VM with shadow paging (a PVM
 * guest: ~15-30 us a fault) made the first lap of a ping-pong ~50 us a
 * round trip instead of ~2 us. The same as droce does for memif
 * (drivers/rdma/roce/roce_port.c). A kernel without MADV_POPULATE_WRITE
 * (before Linux 5.14) refuses it, and the pages fault in as before.
 */
static void
seg_populate(struct shm_hdr *h)
{
#ifdef MADV_POPULATE_WRITE
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	volatile const uint8_t *b = (const uint8_t *)h;

	if (madvise(h, SHM_SEG_SIZE, MADV_POPULATE_WRITE) != 0)
		return;
	for (size_t off = 0; off < SHM_SEG_SIZE; off += page)
		(void)b[off];	/* a shadow-paging hypervisor maps it on this first touch */
#else
	RTE_SET_USED(h);
#endif
}

/*
 * The index after the frames written from @i on in a ring whose slots start
 * at @slots: a producer publishes its head after each frame's tag, so one that
 * died between the two leaves a frame past it, whose sequence number says so.
 */
static uint32_t
written_end(const uint8_t *slots, uint32_t i)
{
	for (uint32_t n = 0; n < SHM_NB_SLOTS; n++, i++) {
		const struct shm_slot *s = (const struct shm_slot *)(const void *)
			(slots + (uint64_t)(i & (SHM_NB_SLOTS - 1)) * SHM_SLOT_SIZE);

		if (!slot_tag_is(__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE), i))
			break;
	}
	return i;
}

static int
shm_attach(struct rte_eth_dev *dev)
{
	struct shm_priv *p = dev->data->dev_private;
	struct shm_hdr *h = NULL;
	struct shm_side *me;
	uint32_t head, tail;
	int fd, side = -1, peer;

	fd = seg_open(p, dev->data->name, &h);
	if (fd < 0)
		return fd;
	/* prefer a side never or no longer held; both free: side 0 */
	for (int i = 0; i < 2 && side < 0; i++)
		if (!side_alive(&h->side[i]))
			side = i;
	if (side < 0) {
		SHM_LOG(ERR, "%s: link %s already joins two running processes (pids %d and %d)",
			dev->data->name, p->link, h->side[0].pid, h->side[1].pid);
		lock_fd(fd, LOCK_UN);
		munmap(h, SHM_SEG_SIZE);
		close(fd);
		return -EBUSY;
	}
	peer = 1 - side;
	me = &h->side[side];
	me->start = proc_start(getpid(), NULL);
	me->gen++;
	__atomic_store_n(&me->pid, (int32_t)getpid(), __ATOMIC_RELEASE);

	p->rxq.slots = (uint8_t *)h + SHM_SLOTS_OFF + (uint64_t)side * SHM_NB_SLOTS * SHM_SLOT_SIZE;
	p->txq.slots = (uint8_t *)h + SHM_SLOTS_OFF + (uint64_t)peer * SHM_NB_SLOTS * SHM_SLOT_SIZE;
	/* frames towards this side were sent to an earlier holder, or to nobody */
	head = written_end(p->rxq.slots, __atomic_load_n(&h->ring[side].head, __ATOMIC_ACQUIRE));
	tail = h->ring[side].tail;
	if ((int32_t)(head - tail) > 0)
		p->stale += head - tail;
	__atomic_store_n(&h->ring[side].tail, head, __ATOMIC_RELEASE);
	p->rxq.idx = head;
	p->rxq.room_tail = head;
	/* this side's earlier holder may have died in a burst: go on after what it wrote */
	p->txq.idx = written_end(p->txq.slots, __atomic_load_n(&h->ring[peer].head,
								__ATOMIC_ACQUIRE));
	__atomic_store_n(&h->ring[peer].head, p->txq.idx, __ATOMIC_RELEASE);
	p->txq.room_tail = __atomic_load_n(&h->ring[peer].tail, __ATOMIC_ACQUIRE);
	p->hdr = h;
	p->fd = fd;
	p->side = side;
	__atomic_store_n(&p->rxq.ring, &h->ring[side], __ATOMIC_RELEASE);
	__atomic_store_n(&p->txq.ring, &h->ring[peer], __ATOMIC_RELEASE);
	if (side_alive(&h->side[peer]))
		SHM_LOG(INFO, "%s: link %s side %d, peer pid %d", dev->data->name, p->link,
			side, h->side[peer].pid);
	else
		SHM_LOG(INFO, "%s: link %s side %d, no peer yet", dev->data->name, p->link, side);
	lock_fd(fd, LOCK_UN);
	seg_populate(h);
	track(dev, p);
	return 0;
}

static void
shm_detach(struct rte_eth_dev *dev)
{
	struct shm_priv *p = dev->data->dev_private;

	if (p->hdr == NULL)
		return;
	track(dev, NULL);
	__atomic_store_n(&p->rxq.ring, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&p->txq.ring, NULL, __ATOMIC_RELEASE);
	lock_fd(p->fd, LOCK_EX);
	side_release(p);
	lock_fd(p->fd, LOCK_UN);
	munmap(p->hdr, SHM_SEG_SIZE);
	close(p->fd);
	p->hdr = NULL;
	p->fd = -1;
	p->side = -1;
}

/* ---------------------------------------------------------------------
 * Device operations.
 */

static int
shm_dev_configure(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
shm_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	struct rte_eth_link link = {
		.link_speed = RTE_ETH_SPEED_NUM_10G,
		.link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_autoneg = RTE_ETH_LINK_FIXED,
	};

	RTE_SET_USED(wait_to_complete);
	/* up while this side is held: see the top of this file */
	link.link_status = ((struct shm_priv *)dev->data->dev_private)->hdr != NULL ?
			   RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
	return rte_eth_linkstatus_set(dev, &link);
}

static int
shm_dev_start(struct rte_eth_dev *dev)
{
	int ret = shm_attach(dev);

	if (ret != 0)
		return ret;
	dev->data->rx_queue_state[0] = RTE_ETH_QUEUE_STATE_STARTED;
	dev->data->tx_queue_state[0] = RTE_ETH_QUEUE_STATE_STARTED;
	shm_link_update(dev, 0);
	return 0;
}

static int
shm_dev_stop(struct rte_eth_dev *dev)
{
	struct rte_eth_link link = { .link_status = RTE_ETH_LINK_DOWN };

	shm_detach(dev);
	dev->data->rx_queue_state[0] = RTE_ETH_QUEUE_STATE_STOPPED;
	dev->data->tx_queue_state[0] = RTE_ETH_QUEUE_STATE_STOPPED;
	rte_eth_linkstatus_set(dev, &link);
	return 0;
}

static int
shm_dev_close(struct rte_eth_dev *dev)
{
	if (rte_eal_process_type() == RTE_PROC_PRIMARY)
		shm_detach(dev);
	return 0;
}

static int
shm_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	RTE_SET_USED(dev);
	info->max_mac_addrs = 1;
	info->max_rx_pktlen = SHM_MAX_FRAME;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = SHM_MAX_MTU;
	info->max_rx_queues = 1;
	info->max_tx_queues = 1;
	info->min_rx_bufsize = SHM_MIN_RX_BUF;
	info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	info->rx_desc_lim.nb_max = SHM_NB_SLOTS;
	info->tx_desc_lim.nb_max = SHM_NB_SLOTS;
	info->default_rxportconf.ring_size = SHM_NB_SLOTS;
	info->default_txportconf.ring_size = SHM_NB_SLOTS;
	info->default_rxportconf.burst_size = 32;
	info->default_txportconf.burst_size = 32;
	info->speed_capa = RTE_ETH_LINK_SPEED_10G;
	return 0;
}

static int
shm_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		   unsigned int socket, const struct rte_eth_rxconf *conf,
		   struct rte_mempool *mp)
{
	struct shm_priv *p = dev->data->dev_private;

	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	if (rte_pktmbuf_data_room_size(mp) < RTE_PKTMBUF_HEADROOM + SHM_MIN_RX_BUF) {
		SHM_LOG(ERR, "%s: mbufs of pool %s hold less than %u bytes of data",
			dev->data->name, mp->name, SHM_MIN_RX_BUF);
		return -EINVAL;
	}
	p->rxq.magic = SHM_QUEUE_MAGIC;
	p->rxq.mp = mp;
	p->rxq.port = dev->data->port_id;
	dev->data->rx_queues[qid] = &p->rxq;
	return 0;
}

static int
shm_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		   unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct shm_priv *p = dev->data->dev_private;

	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	p->txq.magic = SHM_QUEUE_MAGIC;
	dev->data->tx_queues[qid] = &p->txq;
	return 0;
}

static void
shm_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(qid);
}

static int
shm_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	RTE_SET_USED(dev);
	return mtu <= SHM_MAX_MTU ? 0 : -EINVAL;
}

static int
shm_stats_raw(struct rte_eth_dev *dev, struct rte_eth_stats *s)
{
	struct shm_priv *p = dev->data->dev_private;

	memset(s, 0, sizeof(*s));
	s->ipackets = p->rxq.pkts;
	s->ibytes = p->rxq.bytes;
	s->rx_nombuf = p->rxq.errs;
	s->ierrors = p->rxq.bad;
	s->opackets = p->txq.pkts;
	s->obytes = p->txq.bytes;
	s->oerrors = p->txq.errs;
	s->q_ipackets[0] = s->ipackets;
	s->q_ibytes[0] = s->ibytes;
	s->q_opackets[0] = s->opackets;
	s->q_obytes[0] = s->obytes;
	return 0;
}

static int
shm_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *s)
{
	struct shm_priv *p = dev->data->dev_private;
	uint64_t *v = (uint64_t *)s;
	const uint64_t *b = (const uint64_t *)&p->base;

	shm_stats_raw(dev, s);
	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		v[i] -= b[i];
	return 0;
}

static int
shm_stats_reset(struct rte_eth_dev *dev)
{
	struct shm_priv *p = dev->data->dev_private;

	shm_stats_raw(dev, &p->base);
	p->stale_base = p->stale;
	return 0;
}

enum { SHM_XS_STALE, SHM_XS_PEER, SHM_XS_SIDE, SHM_XS_MAX };
static const char *const shm_xstat_names[SHM_XS_MAX] = {
	[SHM_XS_STALE] = "rx_stale_dropped",	/* frames left for an earlier holder */
	[SHM_XS_PEER] = "peer_attached",	/* 1 while a live process holds the other side */
	[SHM_XS_SIDE] = "side",
};

static int
shm_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int n)
{
	struct shm_priv *p = dev->data->dev_private;

	if (xs == NULL || n < SHM_XS_MAX)
		return SHM_XS_MAX;
	for (unsigned int i = 0; i < SHM_XS_MAX; i++)
		xs[i].id = i;
	xs[SHM_XS_STALE].value = p->stale - p->stale_base;
	xs[SHM_XS_PEER].value = p->hdr != NULL && side_alive(&p->hdr->side[1 - p->side]);
	xs[SHM_XS_SIDE].value = p->side < 0 ? UINT64_MAX : (uint64_t)p->side;
	return SHM_XS_MAX;
}

static int
shm_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names, unsigned int n)
{
	RTE_SET_USED(dev);
	if (names == NULL || n < SHM_XS_MAX)
		return SHM_XS_MAX;
	for (unsigned int i = 0; i < SHM_XS_MAX; i++)
		strlcpy(names[i].name, shm_xstat_names[i], sizeof(names[i].name));
	return SHM_XS_MAX;
}

static int
shm_xstats_reset(struct rte_eth_dev *dev)
{
	return shm_stats_reset(dev);
}

static int
shm_promisc(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;	/* every frame is delivered: the link has one peer */
}

static int
shm_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(addr);
	return 0;	/* ethdev stores it; nothing filters by it here */
}

static const struct eth_dev_ops shm_ops = {
	.dev_configure = shm_dev_configure,
	.dev_start = shm_dev_start,
	.dev_stop = shm_dev_stop,
	.dev_close = shm_dev_close,
	.dev_infos_get = shm_dev_infos_get,
	.link_update = shm_link_update,
	.promiscuous_enable = shm_promisc,
	.promiscuous_disable = shm_promisc,
	.allmulticast_enable = shm_promisc,
	.allmulticast_disable = shm_promisc,
	.mac_addr_set = shm_mac_addr_set,
	.mtu_set = shm_mtu_set,
	.stats_get = shm_stats_get,
	.stats_reset = shm_stats_reset,
	.xstats_get = shm_xstats_get,
	.xstats_get_names = shm_xstats_get_names,
	.xstats_reset = shm_xstats_reset,
	.rx_queue_setup = shm_rx_queue_setup,
	.rx_queue_release = shm_queue_release,
	.tx_queue_setup = shm_tx_queue_setup,
	.tx_queue_release = shm_queue_release,
};

/* ---------------------------------------------------------------------
 * Probe and remove.
 */

static int
set_link(const char *key, const char *val, void *opaque)
{
	char *link = opaque;
	size_t n = val ? strlen(val) : 0;

	RTE_SET_USED(key);
	if (n == 0 || n > SHM_LINK_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && val[i] != '-' && val[i] != '_' && val[i] != '.')
			return -EINVAL;
	memcpy(link, val, n + 1);
	return 0;
}

/* The devargs: one link=<name>, copied to @link; 0 or -EINVAL (logged). */
int
shm_args_parse(const char *name, const char *params, char link[SHM_LINK_MAX + 1])
{
	struct rte_kvargs *kv;
	int ret;

	kv = rte_kvargs_parse(params ? params : "", shm_valid_args);
	if (kv == NULL) {
		SHM_LOG(ERR, "%s: invalid arguments \"%s\" (known: %s=<name>)", name,
			params ? params : "", SHM_ARG_LINK);
		return -EINVAL;
	}
	ret = rte_kvargs_count(kv, SHM_ARG_LINK) == 1 ?
	      rte_kvargs_process(kv, SHM_ARG_LINK, set_link, link) : -EINVAL;
	rte_kvargs_free(kv);
	if (ret != 0) {
		SHM_LOG(ERR, "%s: needs one %s=<name> of 1 to %d letters, digits, '-', '_' or '.'",
			name, SHM_ARG_LINK, SHM_LINK_MAX);
		return -EINVAL;
	}
	return 0;
}

static int
shm_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	const char *params = rte_vdev_device_args(vdev);
	char link[SHM_LINK_MAX + 1] = "";
	struct rte_eth_dev *eth_dev;
	struct shm_priv *p;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		SHM_LOG(ERR, "%s: only a primary process can use a net_shm port", name);
		return -ENOTSUP;
	}
	if (shm_args_parse(name, params, link) != 0)
		return -EINVAL;

	eth_dev = rte_eth_vdev_allocate(vdev, sizeof(*p));
	if (eth_dev == NULL)
		return -ENOMEM;
	eth_dev->data->mac_addrs = rte_zmalloc_socket(name, sizeof(struct rte_ether_addr), 0,
						      vdev->device.numa_node);
	if (eth_dev->data->mac_addrs == NULL) {
		rte_eth_dev_release_port(eth_dev);
		return -ENOMEM;
	}
	rte_eth_random_addr(eth_dev->data->mac_addrs->addr_bytes);
	p = eth_dev->data->dev_private;
	strlcpy(p->link, link, sizeof(p->link));
	snprintf(p->shm_name, sizeof(p->shm_name), SHM_NAME_FMT, link);
	p->fd = -1;
	p->side = -1;
	eth_dev->data->mtu = SHM_DEFAULT_MTU;
	eth_dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	eth_dev->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	eth_dev->dev_ops = &shm_ops;
	eth_dev->rx_pkt_burst = shm_rx;
	eth_dev->tx_pkt_burst = shm_tx;
	rte_eth_dev_probing_finish(eth_dev);
	SHM_LOG(INFO, "%s: link %s (%s)", name, link, p->shm_name);
	return 0;
}

static int
shm_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	if (eth_dev == NULL)
		return 0;
	shm_dev_close(eth_dev);
	return rte_eth_dev_release_port(eth_dev);
}

static struct rte_vdev_driver shm_vdev_drv = {
	.probe = shm_probe,
	.remove = shm_remove,
};

RTE_PMD_REGISTER_VDEV(net_shm, shm_vdev_drv);
RTE_PMD_REGISTER_PARAM_STRING(net_shm, "link=<name>");
