/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run-to-completion loop: rx burst -> validate -> responder/completer ->
 * requester -> tx burst. One iteration is roce_dev_poll(); it runs either on
 * an engine lcore that owns the device, or inline from the application's own
 * post and poll calls. No locks, allocations or syscalls on the engine lcore.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "roce_loc.h"

struct roce_engine {
	unsigned int lcore;
	uint32_t stop;
	uint32_t nb_devs;
	struct roce_dev *devs[DROCE_MAX_DEVS];
};

static struct roce_engine *engines[RTE_MAX_LCORE];
static struct roce_dev *inline_devs[DROCE_MAX_DEVS];
static uint32_t nb_inline;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The waker: inline progress while the application sleeps, in
 * ibv_get_cq_event / ibv_get_async_event or in its own poll/epoll on a
 * channel fd or async_fd. A control thread, not an lcore: it sleeps and makes
 * syscalls. It moves an inline device that needs it:
 *  - fast: a CQ with a channel is armed, or a thread is in a blocking wait;
 *  - slow: the device has QPs, whose async events a poll() on async_fd may
 *    wait for;
 * one iteration at a time, under the inline lock taken with trylock (the
 * application's own calls keep priority), and only if the application has
 * not moved the device itself since the waker last looked. It sleeps
 * DROCE_WAKE_MIN_US after a round that moved packets, doubling while idle up
 * to DROCE_WAKE_FAST_US or DROCE_WAKE_SLOW_US, and parks on a condition
 * variable while no inline device needs it. It lives while an inline device
 * is attached.
 */
enum { WAKE_NONE, WAKE_SLOW, WAKE_FAST };

static struct {
	pthread_t tid;
	bool running;		/* under engine_lock */
	uint32_t stop;
	uint32_t kickable;	/* sleeping long or parked: roce_wake_kick signals */
	uint64_t round;		/* odd while a round looks at inline_devs */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC */
} waker = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct rte_mbuf *
roce_pkt_alloc(struct roce_dev *dev)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dev->mp);

	if (unlikely(m == NULL))
		dev->stats.tx_drop_no_mbuf++;
	else
		roce_mbuf_takeover(m);
	return m;
}

/*
 * Hand the staged frames to the port. What it does not take stays staged, in
 * order, for the next call: a full transmit queue holds the senders back
 * (roce_tx_room) instead of dropping frames that RC would have to resend
 * after a timeout, each resend overflowing the queue again.
 */
static void
tx_flush(struct roce_dev *dev)
{
	uint16_t n = dev->nb_tx, sent;

	for (uint16_t i = 0; i < n; i++)
		roce_mbuf_handoff(dev->tx[i]);
	sent = rte_eth_tx_burst(dev->port_id, 0, dev->tx, n);

	if (unlikely(sent < n))
		memmove(dev->tx, dev->tx + sent, (n - sent) * sizeof(dev->tx[0]));
	/* atomic: droce_dev_objects_get reads it from another thread */
	__atomic_store_n(&dev->nb_tx, n - sent, __ATOMIC_RELAXED);
}

/* Room for @n more frames in the staging area, after a flush if needed. */
bool
roce_tx_room(struct roce_dev *dev, uint16_t n)
{
	if (likely(RTE_DIM(dev->tx) - dev->nb_tx >= n))
		return true;
	tx_flush(dev);
	if (likely(RTE_DIM(dev->tx) - dev->nb_tx >= n))
		return true;
	dev->stats.tx_busy++;
	return false;
}

/*
 * Queue a finished Ethernet frame for transmission. Senders that can wait
 * (requester, READ responses, coalesced ACKs) check roce_tx_room first; a
 * frame that finds the port taking nothing and the staging area full (an
 * ARP answer, a NAK) is dropped and counted.
 */
void
roce_xmit(struct roce_dev *dev, struct rte_mbuf *m)
{
	if (unlikely(!roce_tx_room(dev, 1))) {
		dev->stats.tx_drop_full++;
		roce_mbuf_free(m);
		return;
	}
	dev->stats.tx_pkts++;
	dev->stats.tx_bytes += m->pkt_len;
	dev->tx[dev->nb_tx] = m;
	__atomic_store_n(&dev->nb_tx, dev->nb_tx + 1, __ATOMIC_RELAXED);
}

/*
 * Fill in Ethernet, IPv4 and UDP in front of the RoCE packet already in @m
 * (BTH at the start of the data) and queue it. Frames to our own IP go to the
 * loopback ring. Returns -EAGAIN (mbuf freed) when the peer's MAC is unknown
 * yet; an ARP request is then on its way.
 */
int
roce_ip_xmit(struct roce_dev *dev, struct rte_mbuf *m, rte_be32_t dip,
	     uint16_t sport, uint8_t tos, uint8_t ttl)
{
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t l4 = m->pkt_len;
	struct rte_ether_addr dmac;
	bool local = dip == dev->ip;

	if (!local && roce_neigh_resolve(dev, dip, &dmac) != 0) {
		roce_mbuf_free(m);
		dev->stats.tx_no_neigh++;
		return -EAGAIN;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, ROCE_L2L4_LEN);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	eth->src_addr = dev->mac;
	eth->dst_addr = local ? dev->mac : dmac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16(l4 + sizeof(*ip) + sizeof(*udp));
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = ttl ? ttl : 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = dev->ip;
	ip->dst_addr = dip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4 + sizeof(*udp));
	udp->dgram_cksum = 0;
	/* ICRC over IP..payload; the 4 bytes were reserved by the builder */
	{
		uint32_t icrc = roce_icrc_ipv4(ip, m->pkt_len - RTE_ETHER_HDR_LEN - ROCE_ICRC_LEN);
		uint8_t *p = rte_pktmbuf_mtod_offset(m, uint8_t *, m->pkt_len - ROCE_ICRC_LEN);

		p[0] = icrc;
		p[1] = icrc >> 8;
		p[2] = icrc >> 16;
		p[3] = icrc >> 24;
	}
	if (local) {
		dev->stats.tx_pkts++;
		dev->stats.tx_bytes += m->pkt_len;
		if (rte_ring_enqueue(dev->loop, m) != 0) {
			dev->stats.tx_drop_full++;
			roce_mbuf_free(m);
		}
		return 0;
	}
	roce_xmit(dev, m);
	return 0;
}

#define RX_BURSTS	8	/* receive bursts in one device iteration, at most */

void
roce_dev_poll(struct roce_dev *dev)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	uint32_t hi;
	uint16_t n;

	__atomic_fetch_add(&dev->epoch, 1, __ATOMIC_SEQ_CST);
	/*
	 * Up to RX_BURSTS bursts while the port has more: the requesters below
	 * may send a burst per QP each round, and a receiver that took one
	 * burst per round fell behind its senders (frames piled up in the
	 * link, the mbuf pool ran dry, RC timed out).
	 */
	for (unsigned int b = 0; b < RX_BURSTS; b++) {
		n = rte_eth_rx_burst(dev->port_id, 0, pkts, DROCE_BURST);
		for (uint16_t i = 0; i < n; i++)
			roce_mbuf_takeover(pkts[i]);
		if (n)
			roce_rx(dev, pkts, n);
		if (n < DROCE_BURST)
			break;
	}
	n = rte_ring_dequeue_burst(dev->loop, (void **)pkts, DROCE_BURST, NULL);
	if (n)
		roce_rx(dev, pkts, n);
	for (uint16_t i = 0; i < dev->nb_ack; i++)
		roce_resp_send_ack(dev, dev->ack_qp[i]);
	dev->nb_ack = 0;
	if (unlikely(__atomic_load_n(&dev->announce, __ATOMIC_RELAXED)) &&
	    __atomic_exchange_n(&dev->announce, 0, __ATOMIC_ACQUIRE))
		roce_arp_announce(dev);

	hi = __atomic_load_n(&dev->tm_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++) {
		struct roce_srq *srq = __atomic_load_n(&dev->tm_tbl[i], __ATOMIC_ACQUIRE);

		if (srq != NULL)
			roce_tm_ops_run(srq);
	}
	hi = __atomic_load_n(&dev->qp_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++) {
		struct roce_qp *qp = __atomic_load_n(&dev->qp_tbl[i], __ATOMIC_ACQUIRE);

		/*
		 * IBA 10.3.1: a QP in Reset does nothing; and once ibv_modify_qp
		 * has quiesced the device it zeroes qp->e (roce_qp_reset_engine)
		 */
		if (qp == NULL || roce_qp_state(qp) == IBV_QPS_RESET)
			continue;
		if (qp->e.rd_head != qp->e.rd_tail || qp->e.ack_pending)
			roce_resp_run(dev, qp);
		roce_req_run(dev, qp);
	}
	if (dev->nb_tx)
		tx_flush(dev);
	else	/* lets a wrapping port (net_impair) release frames it holds */
		rte_eth_tx_burst(dev->port_id, 0, dev->tx, 0);
	__atomic_fetch_add(&dev->epoch, 1, __ATOMIC_SEQ_CST);
}

/* Inline progress: every inline device of the process, one caller at a time each. */
void
roce_progress(void)
{
	uint32_t n = __atomic_load_n(&nb_inline, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		struct roce_dev *dev = __atomic_load_n(&inline_devs[i], __ATOMIC_ACQUIRE);

		if (dev && roce_inline_trylock(dev)) {
			roce_dev_poll(dev);
			roce_inline_unlock(dev);
		}
	}
}

static int
wake_need(const struct roce_dev *dev)
{
	if (__atomic_load_n(&dev->wake_armed, __ATOMIC_SEQ_CST) != 0 ||
	    __atomic_load_n(&dev->wake_waiters, __ATOMIC_SEQ_CST) != 0)
		return WAKE_FAST;
	return __atomic_load_n(&dev->nb_qp, __ATOMIC_SEQ_CST) != 0 ? WAKE_SLOW : WAKE_NONE;
}

/* One iteration of @dev if the application is not moving it: true if packets moved. */
static bool
waker_poll(struct roce_dev *dev)
{
	uint64_t epoch = __atomic_load_n(&dev->epoch, __ATOMIC_ACQUIRE), before;
	bool moved;

	if (epoch != dev->wake_epoch) {
		dev->wake_epoch = epoch;	/* the application moves it */
		return false;
	}
	if (!roce_inline_trylock(dev))
		return false;
	before = dev->stats.rx_pkts + dev->stats.tx_pkts;
	roce_dev_poll(dev);
	moved = dev->stats.rx_pkts + dev->stats.tx_pkts != before;
	dev->wake_epoch = __atomic_load_n(&dev->epoch, __ATOMIC_RELAXED);
	roce_inline_unlock(dev);
	return moved;
}

/*
 * One look at every inline device: what they need, most first. With @moved,
 * move those that need it and set *moved if packets moved.
 */
static int
waker_round(bool *moved)
{
	uint32_t n;
	int need = WAKE_NONE;

	__atomic_fetch_add(&waker.round, 1, __ATOMIC_SEQ_CST);
	n = __atomic_load_n(&nb_inline, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct roce_dev *dev = __atomic_load_n(&inline_devs[i], __ATOMIC_ACQUIRE);
		int d;

		if (dev == NULL || (d = wake_need(dev)) == WAKE_NONE)
			continue;
		need = RTE_MAX(need, d);
		if (moved != NULL && waker_poll(dev))
			*moved = true;
	}
	__atomic_fetch_add(&waker.round, 1, __ATOMIC_SEQ_CST);
	return need;
}

/* Sleep @us microseconds, or park (0), unless kicked or stopped. */
static void
waker_sleep(uint32_t us, int need)
{
	struct timespec ts;

	pthread_mutex_lock(&waker.lock);
	if (us == 0 || us > DROCE_WAKE_FAST_US) {
		/* publish, then look again: pairs with roce_wake_kick */
		__atomic_store_n(&waker.kickable, 1, __ATOMIC_SEQ_CST);
		if (waker_round(NULL) > need)
			goto out;
	}
	if (__atomic_load_n(&waker.stop, __ATOMIC_ACQUIRE))
		goto out;
	if (us == 0) {
		pthread_cond_wait(&waker.cond, &waker.lock);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)us * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&waker.cond, &waker.lock, &ts);
out:
	__atomic_store_n(&waker.kickable, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&waker.lock);
}

static void *
waker_main(void *arg)
{
	uint32_t us = DROCE_WAKE_MIN_US;
	int prev = WAKE_NONE;

	RTE_SET_USED(arg);
	/* sleeps of tens of microseconds must not become the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	while (!__atomic_load_n(&waker.stop, __ATOMIC_ACQUIRE)) {
		bool moved = false;
		int need = waker_round(&moved);

		if (moved || (need == WAKE_FAST && prev != WAKE_FAST))
			us = DROCE_WAKE_MIN_US;
		else
			us = RTE_MIN(us * 2, need == WAKE_FAST ? (uint32_t)DROCE_WAKE_FAST_US :
					     (uint32_t)DROCE_WAKE_SLOW_US);
		prev = need;
		waker_sleep(need == WAKE_NONE ? 0 : us, need);
	}
	return NULL;
}

/*
 * Something a sleeping application waits for appeared on @dev (a CQ armed, a
 * blocking wait, a QP): wake the waker if it sleeps long or is parked.
 */
void
roce_wake_kick(struct roce_dev *dev)
{
	if (dev->engine != NULL)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&waker.kickable, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&waker.lock);
		pthread_cond_signal(&waker.cond);
		pthread_mutex_unlock(&waker.lock);
	}
}

/* A thread blocks in a verbs wait (ibv_get_cq_event, ibv_get_async_event). */
void
roce_wait_begin(struct roce_dev *dev)
{
	__atomic_fetch_add(&dev->wake_waiters, 1, __ATOMIC_SEQ_CST);
	roce_wake_kick(dev);
}

void
roce_wait_end(struct roce_dev *dev)
{
	__atomic_fetch_sub(&dev->wake_waiters, 1, __ATOMIC_RELEASE);
}

/* Under engine_lock: the first inline device starts the waker. */
static int
waker_start(void)
{
	pthread_condattr_t ca;
	int ret;

	if (waker.running)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&waker.cond, &ca);
	pthread_condattr_destroy(&ca);
	waker.stop = 0;
	ret = rte_ctrl_thread_create(&waker.tid, "droce-wake", NULL, waker_main, NULL);
	if (ret != 0) {
		pthread_cond_destroy(&waker.cond);
		return -ret;
	}
	waker.running = true;
	return 0;
}

/* Under engine_lock: the last inline device is gone. */
static void
waker_stop(void)
{
	if (!waker.running)
		return;
	pthread_mutex_lock(&waker.lock);
	__atomic_store_n(&waker.stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&waker.cond);
	pthread_mutex_unlock(&waker.lock);
	pthread_join(waker.tid, NULL);
	pthread_cond_destroy(&waker.cond);
	waker.running = false;
}

/* A device left inline_devs: wait until no waker round can still hold it. */
static void
waker_forget(void)
{
	uint64_t r = __atomic_load_n(&waker.round, __ATOMIC_SEQ_CST);

	if (r & 1)
		while (__atomic_load_n(&waker.round, __ATOMIC_ACQUIRE) == r)
			rte_pause();
}

static int
engine_main(void *arg)
{
	struct roce_engine *eng = arg;

	while (!__atomic_load_n(&eng->stop, __ATOMIC_ACQUIRE)) {
		uint32_t n = __atomic_load_n(&eng->nb_devs, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < n; i++)
			roce_dev_poll(eng->devs[i]);
	}
	return 0;
}

/*
 * Wait until the engine has finished any iteration that may have seen state
 * published before this call.
 */
void
roce_dev_quiesce(struct roce_dev *dev)
{
	uint64_t e0, e;

	if (dev->engine == NULL) {
		roce_inline_lock(dev);
		roce_inline_unlock(dev);
		return;
	}
	e0 = __atomic_load_n(&dev->epoch, __ATOMIC_ACQUIRE);
	/* an odd epoch is mid-iteration: wait for the next start, else one full pass */
	do {
		rte_pause();
		e = __atomic_load_n(&dev->epoch, __ATOMIC_ACQUIRE);
	} while (e - e0 < 2 + (e0 & 1) &&
		 !__atomic_load_n(&dev->engine->stop, __ATOMIC_ACQUIRE));
}

static int
pick_lcore(const struct roce_dev *dev)
{
	unsigned int lc;

	if (dev->lcore >= 0)
		return dev->lcore;
	if (dev->lcore == -1)
		return -1;
	/* auto: share an engine droce already runs, else the highest idle worker */
	RTE_LCORE_FOREACH_WORKER(lc)
		if (engines[lc])
			return lc;
	for (int l = RTE_MAX_LCORE - 1; l >= 0; l--)
		if ((unsigned int)l != rte_get_main_lcore() && rte_lcore_is_enabled(l) &&
		    rte_eal_get_lcore_state(l) == WAIT)
			return l;
	return -1;
}

int
roce_engine_attach(struct roce_dev *dev)
{
	struct roce_engine *eng;
	int lc, ret = 0;

	pthread_mutex_lock(&engine_lock);
	lc = pick_lcore(dev);
	if (lc < 0) {
		dev->engine = NULL;
		ret = waker_start();
		if (ret) {
			ROCE_LOG(ERR, "%s: cannot start the inline progress thread: %s",
				 dev->name, rte_strerror(-ret));
			goto out;
		}
		__atomic_store_n(&inline_devs[nb_inline], dev, __ATOMIC_RELAXED);
		__atomic_store_n(&nb_inline, nb_inline + 1, __ATOMIC_RELEASE);
		ROCE_LOG(INFO, "%s: inline progress", dev->name);
		goto out;
	}
	if (!rte_lcore_is_enabled(lc) || (unsigned int)lc == rte_get_main_lcore()) {
		ROCE_LOG(ERR, "%s: lcore %d is not an enabled worker lcore", dev->name, lc);
		ret = -EINVAL;
		goto out;
	}
	eng = engines[lc];
	if (eng == NULL) {
		if (rte_eal_get_lcore_state(lc) != WAIT) {
			ROCE_LOG(ERR, "%s: lcore %d is busy", dev->name, lc);
			ret = -EBUSY;
			goto out;
		}
		eng = rte_zmalloc("droce_engine", sizeof(*eng), RTE_CACHE_LINE_SIZE);
		if (eng == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		eng->lcore = lc;
		eng->devs[0] = dev;
		eng->nb_devs = 1;
		dev->engine = eng;
		ret = rte_eal_remote_launch(engine_main, eng, lc);
		if (ret) {
			dev->engine = NULL;
			rte_free(eng);
			goto out;
		}
		engines[lc] = eng;
	} else {
		dev->engine = eng;
		eng->devs[eng->nb_devs] = dev;
		__atomic_store_n(&eng->nb_devs, eng->nb_devs + 1, __ATOMIC_RELEASE);
	}
	ROCE_LOG(INFO, "%s: engine on lcore %d", dev->name, lc);
out:
	pthread_mutex_unlock(&engine_lock);
	return ret;
}

void
roce_engine_detach(struct roce_dev *dev)
{
	struct roce_engine *eng = dev->engine;
	uint32_t j = 0;

	pthread_mutex_lock(&engine_lock);
	if (eng == NULL) {
		for (uint32_t i = 0; i < nb_inline; i++)
			if (inline_devs[i] != dev)	/* the waker reads them */
				__atomic_store_n(&inline_devs[j++], inline_devs[i], __ATOMIC_RELAXED);
		if (j != nb_inline) {
			__atomic_store_n(&nb_inline, j, __ATOMIC_RELEASE);
			/* an inline poller may still hold the device */
			waker_forget();
			roce_inline_lock(dev);
			roce_inline_unlock(dev);
		}
		if (j == 0)
			waker_stop();
		goto out;
	}
	/* stop, edit the list, restart if other devices remain */
	__atomic_store_n(&eng->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(eng->lcore);
	for (uint32_t i = 0; i < eng->nb_devs; i++)
		if (eng->devs[i] != dev)
			eng->devs[j++] = eng->devs[i];
	eng->nb_devs = j;
	dev->engine = NULL;
	if (j == 0) {
		engines[eng->lcore] = NULL;
		rte_free(eng);
	} else {
		eng->stop = 0;
		rte_eal_remote_launch(engine_main, eng, eng->lcore);
	}
out:
	pthread_mutex_unlock(&engine_lock);
}
