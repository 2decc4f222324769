/* SPDX-License-Identifier: BSD-3-Clause */
/* net_impair's data path: random decisions, the FIFO, corruption, bursts. */
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "impair_loc.h"

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

void
impair_queue_seed(struct impair_queue *q, uint64_t seed)
{
	for (unsigned int s = 0; s < IMPAIR_RNG_MAX; s++) {
		uint64_t tag = ((uint64_t)q->qid << 16) | ((uint64_t)q->is_tx << 8) | s;

		q->rng[s] = impair_mix64(seed ^ impair_mix64(tag + UINT64_C(0x5eed)));
	}
}

uint64_t
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

uint16_t
impair_tx_pass(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;

	if (impair_link_is_down(q))
		return impair_tx_down(q, pkts, n);
	return rte_eth_tx_burst(q->port, q->qid, pkts, n);
}

uint16_t
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

uint16_t
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

uint16_t
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

/* Frees every packet the queue holds. The data path must be quiescent. */
void
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
