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

#include "impair_args.h"
#include "rte_pmd_impair.h"

#ifndef RTE_LOG_DEFAULT_LOGTYPE
#define RTE_LOG_DEFAULT_LOGTYPE pmd.net.impair
#endif
RTE_LOG_REGISTER_DEFAULT(impair_logtype, NOTICE);

#define IMPAIR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, impair_logtype, "net_impair: " fmt "\n", ##__VA_ARGS__)

#define IMPAIR_ARG_ETHDEV	"ethdev"
#define IMPAIR_ARG_DROP		"drop"
#define IMPAIR_ARG_DUP		"dup"
#define IMPAIR_ARG_REORDER	"reorder"
#define IMPAIR_ARG_CORRUPT	"corrupt"
#define IMPAIR_ARG_DELAY_US	"delay_us"
#define IMPAIR_ARG_SEED		"seed"
#define IMPAIR_ARG_DIR		"dir"
#define IMPAIR_ARG_LINK		"link"

/* Largest delay accepted, in microseconds (10 s). */
#define IMPAIR_DELAY_US_MAX	10000000ULL
/* A packet held for reordering is released after this long at most. */
#define IMPAIR_REORDER_US	100
/* Least number of FIFO entries per queue (a power of two). */
#define IMPAIR_FIFO_MIN		8192u
/* Packets read from the underlying port per rx_burst call, at most. */
#define IMPAIR_RX_BURST		64u
/* FIFO entries one input packet may need: itself, its copy, a released one. */
#define IMPAIR_SLOTS_PER_PKT	3u
/* FIFO entries examined for release per call, at most. */
#define IMPAIR_SCAN_MAX		1024u
/* Bytes at the front of a packet that corruption never touches. */
#define IMPAIR_CORRUPT_SKIP	14u

/* A probability is kept as a threshold on 53 random bits. */
#define IMPAIR_P_ONE		(UINT64_C(1) << 53)

enum impair_counter {
	IMPAIR_CNT_PASSED,
	IMPAIR_CNT_DROPPED,
	IMPAIR_CNT_DUPLICATED,
	IMPAIR_CNT_REORDERED,
	IMPAIR_CNT_CORRUPTED,
	IMPAIR_CNT_DELAYED,
	IMPAIR_CNT_IN,
	IMPAIR_CNT_FLUSHED,
	IMPAIR_CNT_NOMEM,
	IMPAIR_CNT_LINK_DROPPED,
	IMPAIR_CNT_MAX,
};

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

/* One queue of one direction. Lives in shared memory (rte_malloc). */
struct impair_queue {
	uint16_t port;			/* underlying port */
	uint16_t qid;
	uint16_t own_port;		/* this port, stamped on received mbufs */
	uint8_t is_tx;
	uint8_t active;			/* impairments apply to this direction */
	const uint32_t *link_down;	/* the port's impair_priv.link_down */

	uint64_t thr[IMPAIR_RNG_MAX];	/* 0: never, IMPAIR_P_ONE: always */
	uint64_t delay_tsc;
	uint64_t reorder_tsc;
	uint64_t rng[IMPAIR_RNG_MAX];

	/* reorder slot */
	struct rte_mbuf *held;
	uint64_t held_deadline;
	uint8_t held_left;		/* packets still to overtake it */
	uint8_t held_overtaken;

	/* FIFO of packets waiting for release; head/tail run freely */
	uint32_t head;
	uint32_t tail;
	uint32_t mask;
	struct rte_mbuf **fifo_m;
	uint64_t *fifo_t;

	uint64_t cnt[IMPAIR_CNT_MAX];
} __rte_cache_aligned;

struct impair_priv {
	struct impair_cfg cfg;
	uint16_t under;			/* underlying port id */
	uint64_t owner_id;
	uint64_t delay_tsc;
	uint64_t reorder_tsc;
	uint64_t retired[IMPAIR_CNT_MAX];	/* from released queues */
	uint64_t base[IMPAIR_CNT_MAX];		/* totals at last reset */
	bool closed;
	bool under_lsc;			/* the underlying port interrupts link changes */
	uint32_t link_down;		/* set down (link=down, droce_impair_link_set) */
	rte_spinlock_t link_lock;	/* one recomputation of the link at a time */
};

/* ---------------------------------------------------------------------
 * Random numbers: splitmix64.
 */

static inline uint64_t
impair_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
impair_rand(uint64_t *state)
{
	*state += UINT64_C(0x9e3779b97f4a7c15);
	return impair_mix64(*state);
}

/* True with the probability whose threshold is thr; consumes one draw. */
static inline bool
impair_chance(struct impair_queue *q, enum impair_stream s)
{
	return (impair_rand(&q->rng[s]) >> 11) < q->thr[s];
}

static void
impair_queue_seed(struct impair_queue *q, uint64_t seed)
{
	for (unsigned int s = 0; s < IMPAIR_RNG_MAX; s++) {
		uint64_t tag = ((uint64_t)q->qid << 16) | ((uint64_t)q->is_tx << 8) | s;

		q->rng[s] = impair_mix64(seed ^ impair_mix64(tag + UINT64_C(0x5eed)));
	}
}

static uint64_t
impair_threshold(double p)
{
	if (p <= 0.0)
		return 0;
	if (p >= 1.0)
		return IMPAIR_P_ONE;
	return (uint64_t)(p * (double)IMPAIR_P_ONE);
}

/* ---------------------------------------------------------------------
 * Fast path helpers.
 */

static inline uint32_t
impair_fifo_free(const struct impair_queue *q)
{
	return q->mask + 1 - (q->tail - q->head);
}

static inline void
impair_fifo_push(struct impair_queue *q, struct rte_mbuf *m, uint64_t now)
{
	uint32_t i = q->tail & q->mask;

	q->fifo_m[i] = m;
	q->fifo_t[i] = now + q->delay_tsc;
	q->tail++;
	if (q->delay_tsc != 0)
		q->cnt[IMPAIR_CNT_DELAYED]++;
}

/* Number of FIFO head entries due at time now, at most max. */
static inline uint32_t
impair_fifo_ready(const struct impair_queue *q, uint64_t now, uint32_t max)
{
	uint32_t n = q->tail - q->head;

	if (n > max)
		n = max;
	if (q->delay_tsc == 0)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		if ((int64_t)(q->fifo_t[(q->head + i) & q->mask] - now) > 0)
			return i;
	}
	return n;
}

/* Releases the packet in the reorder slot into the FIFO. */
static inline void
impair_release_held(struct impair_queue *q, uint64_t now)
{
	if (q->held_overtaken)
		q->cnt[IMPAIR_CNT_REORDERED]++;
	impair_fifo_push(q, q->held, now);
	q->held = NULL;
}

static inline void
impair_reorder_timeout(struct impair_queue *q, uint64_t now)
{
	if (q->held != NULL && (int64_t)(now - q->held_deadline) >= 0 &&
	    impair_fifo_free(q) > 0)
		impair_release_held(q, now);
}

/* The reorder stage: hold the packet, or let it through (overtaking). */
static inline void
impair_stage(struct impair_queue *q, struct rte_mbuf *m, uint64_t now)
{
	if (q->thr[IMPAIR_RNG_REORDER] != 0) {
		uint64_t r = impair_rand(&q->rng[IMPAIR_RNG_REORDER]);

		if (q->held != NULL) {
			impair_fifo_push(q, m, now);
			q->held_overtaken = 1;
			if (--q->held_left == 0)
				impair_release_held(q, now);
			return;
		}
		if ((r >> 11) < q->thr[IMPAIR_RNG_REORDER]) {
			q->held = m;
			q->held_left = 1 + (uint8_t)(r & 1);
			q->held_overtaken = 0;
			q->held_deadline = now + q->reorder_tsc;
			return;
		}
	}
	impair_fifo_push(q, m, now);
}

static inline uint8_t *
impair_byte_at(struct rte_mbuf *m, uint32_t off)
{
	struct rte_mbuf *s = m;

	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	if (s == NULL)
		return NULL;
	return rte_pktmbuf_mtod_offset(s, uint8_t *, off);
}

/* True when nobody else can see the data of the segment holding offset. */
static inline bool
impair_writable(const struct rte_mbuf *m, uint32_t off)
{
	const struct rte_mbuf *s = m;

	if (rte_mbuf_refcnt_read(m) != 1)
		return false;
	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	return s != NULL && RTE_MBUF_DIRECT(s) && rte_mbuf_refcnt_read(s) == 1;
}

/*
 * Flips one random bit of one random byte past the Ethernet header. Data
 * shared with someone else (clones, extra references, external buffers) is
 * copied first, so only this packet sees the damage.
 */
static inline struct rte_mbuf *
impair_corrupt(struct impair_queue *q, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t r = impair_rand(&q->rng[IMPAIR_RNG_CORRUPT]);
	uint32_t off;
	uint8_t *byte;

	if (len <= IMPAIR_CORRUPT_SKIP)
		return m;
	off = IMPAIR_CORRUPT_SKIP +
	      (uint32_t)(((r >> 32) * (uint64_t)(len - IMPAIR_CORRUPT_SKIP)) >> 32);
	if (!impair_writable(m, off)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		if (c == NULL) {
			q->cnt[IMPAIR_CNT_NOMEM]++;
			return m;
		}
		rte_pktmbuf_free(m);
		m = c;
	}
	byte = impair_byte_at(m, off);
	if (byte == NULL)
		return m;
	*byte ^= (uint8_t)(1u << (r & 7));
	q->cnt[IMPAIR_CNT_CORRUPTED]++;
	return m;
}

/* Runs one input packet through drop, duplicate, corrupt and reorder. */
static inline void
impair_one(struct impair_queue *q, struct rte_mbuf *m, uint64_t now)
{
	struct rte_mbuf *copy = NULL;

	if (q->thr[IMPAIR_RNG_DROP] != 0 && impair_chance(q, IMPAIR_RNG_DROP)) {
		rte_pktmbuf_free(m);
		q->cnt[IMPAIR_CNT_DROPPED]++;
		return;
	}
	if (q->thr[IMPAIR_RNG_DUP] != 0 && impair_chance(q, IMPAIR_RNG_DUP)) {
		copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (copy != NULL)
			q->cnt[IMPAIR_CNT_DUPLICATED]++;
		else
			q->cnt[IMPAIR_CNT_NOMEM]++;
	}
	if (q->thr[IMPAIR_RNG_CORRUPT] != 0 && impair_chance(q, IMPAIR_RNG_CORRUPT))
		m = impair_corrupt(q, m);
	impair_stage(q, m, now);
	if (copy != NULL)
		impair_stage(q, copy, now);
}

static inline uint64_t
impair_now(const struct impair_queue *q)
{
	return (q->delay_tsc != 0 || q->thr[IMPAIR_RNG_REORDER] != 0) ? rte_rdtsc() : 0;
}

/* ---------------------------------------------------------------------
 * Burst functions.
 */

static void impair_queue_flush(struct impair_queue *q);

static inline bool
impair_link_is_down(const struct impair_queue *q)
{
	return unlikely(__atomic_load_n(q->link_down, __ATOMIC_RELAXED) != 0);
}

/* Link down: what the queue holds and everything offered is lost; all taken. */
static uint16_t
impair_tx_down(struct impair_queue *q, struct rte_mbuf **pkts, uint16_t n)
{
	impair_queue_flush(q);
	rte_pktmbuf_free_bulk(pkts, n);
	q->cnt[IMPAIR_CNT_LINK_DROPPED] += n;
	return n;
}

/* Link down: what the queue holds and what arrives is lost, nothing delivered. */
static uint16_t
impair_rx_down(struct impair_queue *q)
{
	struct rte_mbuf *in[IMPAIR_RX_BURST];
	uint16_t got;

	impair_queue_flush(q);
	got = rte_eth_rx_burst(q->port, q->qid, in, IMPAIR_RX_BURST);
	rte_pktmbuf_free_bulk(in, got);
	q->cnt[IMPAIR_CNT_LINK_DROPPED] += got;
	return 0;
}

static uint16_t
impair_tx_pass(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;

	if (impair_link_is_down(q))
		return impair_tx_down(q, pkts, n);
	return rte_eth_tx_burst(q->port, q->qid, pkts, n);
}

static uint16_t
impair_tx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;
	uint64_t now = impair_now(q);
	uint32_t ready;
	uint16_t i;

	if (impair_link_is_down(q))
		return impair_tx_down(q, pkts, n);
	impair_reorder_timeout(q, now);
	for (i = 0; i < n; i++) {
		if (impair_fifo_free(q) < IMPAIR_SLOTS_PER_PKT)
			break;
		impair_one(q, pkts[i], now);
	}
	q->cnt[IMPAIR_CNT_IN] += i;

	ready = impair_fifo_ready(q, now, IMPAIR_SCAN_MAX);
	while (ready > 0) {
		uint32_t idx = q->head & q->mask;
		uint32_t chunk = RTE_MIN(ready, q->mask + 1 - idx);
		uint16_t sent;

		chunk = RTE_MIN(chunk, (uint32_t)UINT16_MAX);
		sent = rte_eth_tx_burst(q->port, q->qid, &q->fifo_m[idx], (uint16_t)chunk);
		q->head += sent;
		q->cnt[IMPAIR_CNT_PASSED] += sent;
		ready -= sent;
		if (sent < chunk)
			break;
	}
	return i;
}

static uint16_t
impair_rx_pass(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;
	uint16_t nb;

	if (impair_link_is_down(q))
		return impair_rx_down(q);
	nb = rte_eth_rx_burst(q->port, q->qid, pkts, n);
	for (uint16_t i = 0; i < nb; i++)
		pkts[i]->port = q->own_port;
	return nb;
}

static uint16_t
impair_rx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;
	uint64_t now = impair_now(q);
	uint32_t room, want, ready;
	uint16_t i;

	if (impair_link_is_down(q))
		return impair_rx_down(q);
	impair_reorder_timeout(q, now);

	room = impair_fifo_free(q) / IMPAIR_SLOTS_PER_PKT;
	want = RTE_MIN((uint32_t)n, room);
	want = RTE_MIN(want, IMPAIR_RX_BURST);
	if (want > 0) {
		struct rte_mbuf *in[IMPAIR_RX_BURST];
		uint16_t got = rte_eth_rx_burst(q->port, q->qid, in, (uint16_t)want);

		q->cnt[IMPAIR_CNT_IN] += got;
		for (i = 0; i < got; i++) {
			in[i]->port = q->own_port;
			impair_one(q, in[i], now);
		}
	}

	ready = impair_fifo_ready(q, now, n);
	for (i = 0; i < ready; i++)
		pkts[i] = q->fifo_m[(q->head + i) & q->mask];
	q->head += ready;
	q->cnt[IMPAIR_CNT_PASSED] += ready;
	return (uint16_t)ready;
}

/* ---------------------------------------------------------------------
 * Queue management (control path).
 */

/* Frees every packet the queue holds. The data path must be quiescent. */
static void
impair_queue_flush(struct impair_queue *q)
{
	if (q->held != NULL) {
		rte_pktmbuf_free(q->held);
		q->held = NULL;
		q->cnt[IMPAIR_CNT_FLUSHED]++;
	}
	while (q->head != q->tail) {
		rte_pktmbuf_free(q->fifo_m[q->head & q->mask]);
		q->head++;
		q->cnt[IMPAIR_CNT_FLUSHED]++;
	}
}

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
 * Devargs.
 */

static const char *const impair_valid_args[] = {
	IMPAIR_ARG_ETHDEV, IMPAIR_ARG_DROP, IMPAIR_ARG_DUP, IMPAIR_ARG_REORDER,
	IMPAIR_ARG_CORRUPT, IMPAIR_ARG_DELAY_US, IMPAIR_ARG_SEED, IMPAIR_ARG_DIR,
	IMPAIR_ARG_LINK,
};

static int
impair_parse_prob(const char *name, const char *key, const char *val, double *out)
{
	char *end;
	double p;

	if (val[0] != '.' && !isdigit((unsigned char)val[0]))
		goto bad;
	errno = 0;
	p = strtod(val, &end);
	if (errno != 0 || *end != '\0' || !isfinite(p) || p < 0.0 || p > 1.0)
		goto bad;
	*out = p;
	return 0;
bad:
	IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected a probability from 0 to 1",
		   name, key, val);
	return -EINVAL;
}

static int
impair_parse_u64(const char *name, const char *key, const char *val, int base,
		 uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)val[0]))
		goto bad;
	errno = 0;
	v = strtoull(val, &end, base);
	if (errno != 0 || *end != '\0' || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected an integer from 0 to %" PRIu64,
		   name, key, val, max);
	return -EINVAL;
}

/* The devargs into @cfg; 0 or -EINVAL (logged). */
int
impair_args_parse(const char *name, const char *params, struct impair_cfg *cfg)
{
	struct rte_kvargs *kv;
	bool seen[RTE_DIM(impair_valid_args)] = { false };
	int ret = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->dir = IMPAIR_DIR_TX;
	if (params == NULL || params[0] == '\0') {
		IMPAIR_LOG(ERR, "%s: missing required argument %s=<port name>",
			   name, IMPAIR_ARG_ETHDEV);
		return -EINVAL;
	}
	kv = rte_kvargs_parse(params, NULL);
	if (kv == NULL) {
		IMPAIR_LOG(ERR, "%s: cannot parse arguments \"%s\"", name, params);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;
		const char *val = kv->pairs[i].value;
		unsigned int k;

		for (k = 0; k < RTE_DIM(impair_valid_args); k++)
			if (strcmp(key, impair_valid_args[k]) == 0)
				break;
		if (k == RTE_DIM(impair_valid_args)) {
			IMPAIR_LOG(ERR, "%s: unknown argument %s", name, key);
			ret = -EINVAL;
			break;
		}
		if (seen[k]) {
			IMPAIR_LOG(ERR, "%s: argument %s given twice", name, key);
			ret = -EINVAL;
			break;
		}
		seen[k] = true;
		if (val == NULL || val[0] == '\0') {
			IMPAIR_LOG(ERR, "%s: argument %s needs a value", name, key);
			ret = -EINVAL;
			break;
		}
		if (strcmp(key, IMPAIR_ARG_ETHDEV) == 0) {
			if (strlcpy(cfg->ethdev, val, sizeof(cfg->ethdev)) >= sizeof(cfg->ethdev)) {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: name too long",
					   name, key, val);
				ret = -EINVAL;
			}
		} else if (strcmp(key, IMPAIR_ARG_DROP) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_DROP]);
		} else if (strcmp(key, IMPAIR_ARG_DUP) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_DUP]);
		} else if (strcmp(key, IMPAIR_ARG_REORDER) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_REORDER]);
		} else if (strcmp(key, IMPAIR_ARG_CORRUPT) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_CORRUPT]);
		} else if (strcmp(key, IMPAIR_ARG_DELAY_US) == 0) {
			ret = impair_parse_u64(name, key, val, 10, IMPAIR_DELAY_US_MAX,
					       &cfg->delay_us);
		} else if (strcmp(key, IMPAIR_ARG_SEED) == 0) {
			ret = impair_parse_u64(name, key, val, 0, UINT64_MAX, &cfg->seed);
		} else if (strcmp(key, IMPAIR_ARG_DIR) == 0) {
			if (strcmp(val, "tx") == 0) {
				cfg->dir = IMPAIR_DIR_TX;
			} else if (strcmp(val, "rx") == 0) {
				cfg->dir = IMPAIR_DIR_RX;
			} else if (strcmp(val, "both") == 0) {
				cfg->dir = IMPAIR_DIR_TX | IMPAIR_DIR_RX;
			} else {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected tx, rx or both",
					   name, key, val);
				ret = -EINVAL;
			}
		} else if (strcmp(key, IMPAIR_ARG_LINK) == 0) {
			if (strcmp(val, "up") == 0) {
				cfg->link_down = false;
			} else if (strcmp(val, "down") == 0) {
				cfg->link_down = true;
			} else {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected up or down",
					   name, key, val);
				ret = -EINVAL;
			}
		}
	}
	rte_kvargs_free(kv);
	if (ret == 0 && cfg->ethdev[0] == '\0') {
		IMPAIR_LOG(ERR, "%s: missing required argument %s=<port name>",
			   name, IMPAIR_ARG_ETHDEV);
		ret = -EINVAL;
	}
	return ret;
}

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
