/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One device shared by the processes forked from the one that probed it
 * (doc/guides/architecture.rst, "A device shared by forked processes").
 *
 * DPDK's memory, with or without hugepages, is mapped shared (--no-huge
 * maps a memfd), so after fork() every process sees the same device: its
 * tables, rings, mempool and port. What stays private to each process is the
 * application's memory, which only the process that posted a buffer can
 * reach. So every process that uses the device after a fork is an owner,
 * with an index (0 for the process that probed it, 1.. for the others, from
 * a table mapped shared before the first fork), and:
 *  - a QP or SRQ belongs to the process that made it; an iteration of the
 *    engine, whichever process runs it (one at a time, under the inline
 *    lock in the shared memory), moves only its own process's QPs and hands
 *    frames for the others' QPs to their process's ring (share_in, mbuf
 *    pointers: the mempool is shared too), which that process's iterations
 *    empty;
 *  - each process has its own QP1; a CM MAD names its process by the
 *    fields the CM gives: a REQ or SIDR REQ by its service ID (the listener's
 *    process, from a table in the device), every other CM MAD by the
 *    receiver's communication ID (or SIDR request ID), whose top bits the
 *    connection manager sets to its owner index.
 * A forked process has none of its parent's threads: it progresses the
 * device inline (a waker of its own), and a device on an engine lcore (a
 * thread of the parent) is not usable in it.
 */
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "roce_loc.h"

#define SHARE_RING	1024	/* frames waiting for one process */

/* IBA 16.7 (CM) attribute IDs, and where the fields that name the receiver sit in a MAD */
#define MAD_CLASS_CM		0x07
#define CM_ATTR_REQ		0x0010
#define CM_ATTR_SIDR_REQ	0x0017
#define CM_ATTR_SIDR_REP	0x0018
#define MAD_OFF_CLASS		1
#define MAD_OFF_ATTR		16
#define MAD_OFF_LOCAL_ID	24	/* SIDR's Request ID */
#define MAD_OFF_REMOTE_ID	28	/* every other CM message but REQ: Remote Comm ID */
#define MAD_OFF_SID		32	/* REQ and SIDR REQ: Service ID */

/* The owners, for every device: which process holds each index (0: free). */
static struct {
	int32_t pid[ROCE_SHARE_OWNERS];
} *owners;
static uint32_t share_me;		/* this process's index */
int32_t roce_self_pid;		/* set at probe (roce_probe), and in a forked child */
static bool share_child;		/* this process was forked after a device was probed */
static bool share_started;		/* ... and has its index (roce_share_child_start) */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct roce_dev *unusable[DROCE_MAX_DEVS];	/* here, in this process */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

uint32_t
roce_share_owner(void)
{
	return share_me;
}

bool
roce_share_is_child(void)
{
	return share_child;
}

bool
roce_share_usable(const struct roce_dev *dev)
{
	for (unsigned int i = 0; i < RTE_DIM(unusable); i++)
		if (unusable[i] == dev)
			return false;
	return true;
}

static bool
owner_alive(uint32_t k)
{
	return k < ROCE_SHARE_OWNERS && __atomic_load_n(&owners->pid[k], __ATOMIC_ACQUIRE) != 0;
}

/* @pid ended: gone, or a zombie. */
static bool
pid_ended(int32_t pid)
{
	char path[64], st[256];
	const char *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) != 0)
		return errno == ESRCH;
	/* a zombie (not waited for yet) still answers kill(): its state says */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (n <= 0)
		return false;
	st[n] = '\0';
	p = strrchr(st, ')');	/* after the command's name, which may hold anything */
	return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void atfork_register(void);
static void leave(void);

/* At probe: a ring per process that may share @dev. 0 or -errno. */
int
roce_share_init(struct roce_dev *dev)
{
	char rn[RTE_RING_NAMESIZE];

	pthread_once(&atfork_once, atfork_register);
	if (owners == NULL) {
		void *o = mmap(NULL, sizeof(*owners), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (o == MAP_FAILED)
			return -errno;
		owners = o;
		owners->pid[share_me] = roce_self_pid;
	}
	rte_spinlock_init(&dev->listen_lock);
	for (unsigned int k = 0; k < ROCE_SHARE_OWNERS; k++) {
		snprintf(rn, sizeof(rn), "dsh%u_%.16s", k, dev->name);
		dev->share_in[k] = rte_ring_create(rn, SHARE_RING, rte_socket_id(),
						   RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (dev->share_in[k] == NULL) {
			roce_share_fini(dev);
			return -rte_errno;
		}
	}
	return 0;
}

static void
ring_drain(struct rte_ring *r)
{
	struct rte_mbuf *m;

	while (rte_ring_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

void
roce_share_fini(struct roce_dev *dev)
{
	for (unsigned int k = 0; k < ROCE_SHARE_OWNERS; k++) {
		if (dev->share_in[k] == NULL)
			continue;
		ring_drain(dev->share_in[k]);
		rte_ring_free(dev->share_in[k]);
		dev->share_in[k] = NULL;
	}
}

/* Hand @m to process @k: true if it took it, else the caller still has it. */
bool
roce_share_fwd(struct roce_dev *dev, uint32_t k, struct rte_mbuf *m)
{
	if (!owner_alive(k) || dev->share_in[k] == NULL ||
	    rte_ring_enqueue(dev->share_in[k], m) != 0) {
		dev->q0.stats.share_drop++;
		return false;
	}
	dev->q0.stats.share_fwd++;
	return true;
}

/* Each iteration while the device is shared: the frames for this process's QPs. */
void
roce_share_poll(struct roce_dev *dev)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	unsigned int n;

	if (unlikely(share_me >= ROCE_SHARE_OWNERS || dev->share_in[share_me] == NULL))
		return;
	n = rte_ring_dequeue_burst(dev->share_in[share_me], (void **)pkts, DROCE_BURST, NULL);
	if (n)
		roce_rx(dev->q[0], pkts, (uint16_t)n, ROCE_RX_SHARE);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The process a MAD for QP1 (@mad, @len bytes) is for: by its service ID (a
 * REQ, a SIDR REQ: the listener's process; else this one, which answers
 * that nobody listens), or by the receiver's ID's top bits. A MAD of another
 * class, or too short to say, stays here.
 */
uint32_t
roce_share_gsi_owner(struct roce_dev *dev, const uint8_t *mad, uint32_t len)
{
	uint32_t attr;
	uint64_t sid;

	if (len < MAD_OFF_SID + 8 || mad[MAD_OFF_CLASS] != MAD_CLASS_CM)
		return share_me;
	attr = (uint32_t)mad[MAD_OFF_ATTR] << 8 | mad[MAD_OFF_ATTR + 1];
	switch (attr) {
	case CM_ATTR_REQ:
	case CM_ATTR_SIDR_REQ:
		memcpy(&sid, mad + MAD_OFF_SID, sizeof(sid));
		sid = rte_be_to_cpu_64(sid);
		for (unsigned int i = 0; i < ROCE_SHARE_LISTEN; i++)
			if (__atomic_load_n(&dev->listen[i].used, __ATOMIC_ACQUIRE) &&
			    dev->listen[i].sid == sid)
				return dev->listen[i].owner;
		return share_me;
	case CM_ATTR_SIDR_REP:
		return rd32(mad + MAD_OFF_LOCAL_ID) >> ROCE_SHARE_ID_SHIFT;
	default:
		return rd32(mad + MAD_OFF_REMOTE_ID) >> ROCE_SHARE_ID_SHIFT;
	}
}

/* A listener's process is gone (its index free, or taken by another process since). */
static bool
listen_stale(const struct roce_listen *l)
{
	int32_t pid = __atomic_load_n(&owners->pid[l->owner], __ATOMIC_ACQUIRE);

	return pid == 0 || pid_ended(pid);
}

/*
 * The connection manager of this process listens on service ID @sid of @dev,
 * or stops (!@on): REQs for it reach this process. -EADDRINUSE if another
 * live process listens there; -ENOSPC when the table is full.
 */
int
roce_share_listen(struct roce_dev *dev, uint64_t sid, bool on)
{
	int ret = on ? -ENOSPC : 0, freeslot = -1;

	rte_spinlock_lock(&dev->listen_lock);
	for (int i = 0; i < ROCE_SHARE_LISTEN; i++) {
		struct roce_listen *l = &dev->listen[i];

		if (l->used && l->sid == sid && (l->owner == share_me || listen_stale(l)))
			__atomic_store_n(&l->used, 0, __ATOMIC_RELEASE);	/* ours, or a dead one's */
		if (!l->used) {
			if (freeslot < 0)
				freeslot = i;
			continue;
		}
		if (l->sid == sid && on) {
			ret = -EADDRINUSE;
			goto out;
		}
	}
	if (on && freeslot >= 0) {
		dev->listen[freeslot].sid = sid;
		dev->listen[freeslot].owner = share_me;
		__atomic_store_n(&dev->listen[freeslot].used, 1, __ATOMIC_RELEASE);
		ret = 0;
	}
out:
	rte_spinlock_unlock(&dev->listen_lock);
	return ret;
}

/*
 * A head @ht's ended holder moved and never published: back to its tail.
 * One that a live thread moves (the mempool's, which an application thread
 * outside the lock may use: mbufs of the device's ethdev port) reaches its
 * tail within a millisecond; the ended one's stays.
 */
static unsigned int
headtail_repair(struct rte_ring_headtail *ht)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000;
	uint32_t head = __atomic_load_n(&ht->head, __ATOMIC_ACQUIRE);

	if (ht->sync_type != RTE_RING_SYNC_MT && ht->sync_type != RTE_RING_SYNC_ST)
		return 0;	/* (RTS and HTS keep other counters: none here uses them) */
	while (__atomic_load_n(&ht->tail, __ATOMIC_ACQUIRE) != head)
		if (rte_get_timer_cycles() > end) {
			uint32_t tail = __atomic_load_n(&ht->tail, __ATOMIC_ACQUIRE);

			if (__atomic_compare_exchange_n(&ht->head, &head, tail, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return 1;
			end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000;	/* moved: look again */
		}
	return 0;
}

/* ...of the sides of @r that only iterations move (@prod, @cons) */
static unsigned int
ring_repair(struct rte_ring *r, bool prod, bool cons)
{
	if (r == NULL)
		return 0;
	return (prod ? headtail_repair(&r->prod) : 0) + (cons ? headtail_repair(&r->cons) : 0);
}

/*
 * The rings every process's iterations share, as an iteration that was
 * killed may have left them: an enqueue or dequeue that moved its head and
 * not its tail. Every later one would wait for that tail for ever (a ring
 * with several producers or consumers), or publish slots nobody wrote (a
 * single producer). Those sides only iterations move, under the inline lock
 * that the caller now holds, so a head apart from its tail is the ended
 * one's: back to the tail, as if that operation never began. Its objects
 * are lost (mbufs it freed, which leak) or stay (mbufs it took, still
 * free). The sides the application's threads move (doorbells, the ethdev
 * port's tx and rx) are left alone, and the port's own rings and
 * descriptors are its driver's, out of reach here.
 */
static void
share_repair(struct roce_dev *dev)
{
	unsigned int n = 0;

	if (dev->mp != NULL &&
	    strncmp(rte_mempool_get_ops(dev->mp->ops_index)->name, "ring_", 5) == 0)
		n += ring_repair(dev->mp->pool_data, true, true);
	n += ring_repair(dev->loop, true, true);
	for (unsigned int k = 0; k < ROCE_SHARE_OWNERS; k++)
		n += ring_repair(dev->share_in[k], true, true);
	n += ring_repair(dev->q0.db, false, true);
	n += ring_repair(dev->eth.rx, true, false);
	n += ring_repair(dev->eth.tx, false, true);
	if (n)
		ROCE_LOG(WARNING, "%s: %u ring operations the ended process left half done: undone",
			 dev->name, n);
}

/*
 * The inline lock of @dev is held: by a process that ended while it held it
 * (killed in an iteration, or ended by _exit while its waker ran one)? Then
 * the caller takes it over, as its holder, and true. The device may be as
 * that iteration left it: its frames in flight are lost, as on a link, and
 * RC resends.
 */
bool
roce_share_lock_check(struct roce_dev *dev)
{
	int pid = __atomic_load_n(&dev->inline_lock.locked, __ATOMIC_ACQUIRE);

	if (pid == 0 || pid == roce_self_pid || !pid_ended(pid))
		return false;
	/* one taker: the lock word moves from the dead process to this one */
	if (!__atomic_compare_exchange_n(&dev->inline_lock.locked, &pid, roce_self_pid, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	ROCE_LOG(WARNING, "%s: process %d ended in an iteration (killed, or _exit while its waker moved the device): taken over",
		 dev->name, pid);
	ROCE_TSAN_ACQUIRE(&dev->inline_lock);
	share_repair(dev);
	/* its iteration ends here: the epoch is even between iterations (roce_dev_quiesce) */
	if (__atomic_load_n(&dev->q0.epoch, __ATOMIC_RELAXED) & 1)
		__atomic_store_n(&dev->q0.epoch, dev->q0.epoch + 1, __ATOMIC_RELEASE);
	return true;
}

/* roce_inline_lock on a shared device: a holder that ended is taken over. */
void
roce_share_inline_lock(struct roce_dev *dev)
{
	for (unsigned int i = 1;; i++) {
		if (roce_inline_trylock(dev))
			return;
		/* now and then (a syscall or two): is the holder still there? */
		if ((i & 0xfffff) == 0 && roce_share_lock_check(dev))
			return;
		rte_pause();
	}
}

/* ---- fork ---- */

/* In the parent: from now on a frame may be another process's. */
static void
atfork_parent(void)
{
	static bool registered;

	if (!registered) {
		registered = true;
		atexit(leave);
	}
	for (unsigned int i = 0; i < roce_dev_count(); i++) {
		struct roce_dev *dev = roce_dev_get(i);

		/* (one on an engine lcore is not the children's: the lcore is a thread of this process) */
		if (dev != NULL && dev->share_in[0] != NULL && !dev->share_on &&
		    roce_engine_lcore(dev) < 0 && dev->nb_q == 1)
			__atomic_store_n(&dev->share_on, true, __ATOMIC_RELEASE);
	}
}

/* A free index for this new process, or -1: free, or its process gone. */
static int
owner_claim(void)
{
	int32_t me = getpid();

	for (int k = 1; k < ROCE_SHARE_OWNERS; k++) {
		int32_t pid = __atomic_load_n(&owners->pid[k], __ATOMIC_ACQUIRE);

		if (pid != 0 && !pid_ended(pid))
			continue;
		if (__atomic_compare_exchange_n(&owners->pid[k], &pid, me, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return k;
	}
	return -1;
}

/*
 * At exit of a process sharing a device: none of its threads (the waker)
 * is left in an iteration, or starts one, when the process goes; then its
 * index is free again.
 */
static void
leave(void)
{
	roce_inline_quit();
	for (unsigned int i = 0; i < roce_dev_count(); i++) {
		struct roce_dev *dev = roce_dev_get(i);

		if (dev != NULL && dev->share_on && roce_share_usable(dev)) {
			roce_inline_lock(dev);
			roce_inline_unlock(dev);
		}
	}
	if (owners != NULL && share_child && share_me < ROCE_SHARE_OWNERS)
		__atomic_store_n(&owners->pid[share_me], 0, __ATOMIC_RELEASE);
}

/*
 * In the child: little, and nothing that locks or starts a thread (a child
 * may only exec). The index and the devices it can use come with its first
 * ibv_open_device (roce_share_child_start). Nothing of the device is
 * touched: it is the parent's too.
 */
static void
atfork_child(void)
{
	roce_self_pid = getpid();
	share_child = true;
	share_me = UINT32_MAX;		/* none yet: moves nothing of its own */
	share_started = false;
	pthread_mutex_init(&start_lock, NULL);
	memset(unusable, 0, sizeof(unusable));
	roce_engine_forked();
}

/*
 * A forked process opens a device for the first time: it takes an index of
 * its own (the ended process's that had it leaves its QPs and frames), and
 * finds the devices it cannot use. Then its inline progress may start.
 */
void
roce_share_child_start(void)
{
	unsigned int nu = 0;
	int k;

	if (!share_child || __atomic_load_n(&share_started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&start_lock);
	if (share_started)
		goto out;
	k = owners != NULL ? owner_claim() : -1;
	if (k >= 0)
		share_me = (uint32_t)k;
	for (unsigned int i = 0; i < roce_dev_count(); i++) {
		struct roce_dev *dev = roce_dev_get(i);
		const char *why = NULL;

		if (dev == NULL)
			continue;
		if (k < 0)
			why = "too many processes share it";
		else if (dev->share_in[0] == NULL)
			why = "no rings to share it";
		else if (roce_engine_lcore(dev) >= 0)
			why = "it progresses on an engine lcore of the parent";
		else if (dev->nb_q > 1)
			why = "it has several queues, which the parent's lcores own";
		if (why == NULL) {
			/* (the parent sets it too, after fork() returns there) */
			__atomic_store_n(&dev->share_on, true, __ATOMIC_RELEASE);
			/* what an ended process with this index left */
			roce_inline_lock(dev);	/* the mbufs go back under it (roce_share_poll) */
			ring_drain(dev->share_in[k]);
			roce_inline_unlock(dev);
			roce_qp_reap(dev, (uint32_t)k);
			continue;
		}
		ROCE_LOG(ERR, "%s: not usable in this forked process: %s", dev->name, why);
		if (nu < RTE_DIM(unusable))
			unusable[nu++] = dev;
	}
	if (k >= 0)
		atexit(leave);
	__atomic_store_n(&share_started, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&start_lock);
}

static void
atfork_register(void)
{
	pthread_atfork(NULL, atfork_parent, atfork_child);
}
