/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_shm's data path (rte_eth_shm.c): a direction's ring of frame slots,
 * a transmit that writes a frame straight into the next slot and a receive
 * that reads one where it lies, for droce's PMD (roce_tx.c, roce_recv.c),
 * which builds and reads its frames there rather than in mbufs that
 * shm_tx() and shm_rx() would copy. Everything is inline: droce's PMD and
 * net_shm are also built as separate DPDK plugins, and neither calls the
 * other; droce finds a queue through the ethdev (shm_direct_queue), which
 * checks that it is one of this layout (SHM_QUEUE_MAGIC).
 */
#ifndef SHM_DP_H
#define SHM_DP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <ethdev_driver.h>

#define SHM_DRIVER_NAME		"net_shm"
/* struct shm_queue's first word: the layout this header describes ("shq2") */
#define SHM_QUEUE_MAGIC		0x73687132u
#define SHM_NB_SLOTS		1024u		/* per direction, a power of two */
#define SHM_SLOT_SIZE		4352u		/* stride, whole cache lines; the frame: shm_frame_off() */
#define SHM_SLOT_HDR		4u		/* struct shm_slot */
#define SHM_BIG_OFF		10u		/* where a big frame starts (shm_frame_off) */
#define SHM_MAX_FRAME		4288u		/* < 2^SHM_LEN_BITS, <= SHM_SLOT_SIZE - SHM_BIG_OFF */
#define SHM_LEN_BITS		13u
#define SHM_LEN_MASK		((1u << SHM_LEN_BITS) - 1)
#define SHM_SMALL		256u		/* a small frame (shm_frame_off, shm_copy_small) */
_Static_assert(SHM_MAX_FRAME <= SHM_LEN_MASK && SHM_MAX_FRAME + SHM_BIG_OFF <= SHM_SLOT_SIZE &&
	       SHM_SLOT_SIZE % 64 == 0 && SHM_BIG_OFF >= SHM_SLOT_HDR,
	       "a frame's length fits its slot's tag, and the frame its slot");
_Static_assert((SHM_BIG_OFF + 54) % 64 == 0,
	       "a big frame's payload behind Ethernet, IPv4, UDP and BTH starts a cache line");
/*
 * One direction: frames towards side i. The data path reads neither index of
 * the other end at every burst: the consumer finds new frames by their slots'
 * sequence numbers (struct shm_slot), the producer reads the tail only when
 * the room it last saw is used up. Each burst then moves only the slots' own
 * cache lines between the two CPUs, not also the indexes' two lines. The head
 * is kept for a side's next holder (frames there before it are stale).
 */
struct shm_ring {
	uint32_t head __rte_cache_aligned;	/* written by the producer */
	uint32_t tail __rte_cache_aligned;	/* written by the consumer */
	uint8_t pad __rte_cache_aligned;
};

/*
 * A slot's header, one word stored last (release): the frame is there. Its
 * low SHM_LEN_BITS are the frame's length, the others 1 + the ring index it
 * was written at (modulo 2^19: 512 laps of the ring). A small frame follows
 * at once (shm_frame_off), so a 64-byte RoCE SEND (122 bytes) takes two
 * cache lines with its tag, not three: each line is one the other CPU has
 * to fetch.
 */
struct shm_slot {
	uint32_t tag;
};

static inline uint32_t
slot_tag(uint32_t idx, uint32_t len)
{
	return (idx + 1) << SHM_LEN_BITS | len;
}

/* @tag is of a frame written at ring index @idx (in this lap) */
static inline bool
slot_tag_is(uint32_t tag, uint32_t idx)
{
	return (tag ^ slot_tag(idx, 0)) >> SHM_LEN_BITS == 0;
}

struct shm_queue {
	uint32_t magic;			/* SHM_QUEUE_MAGIC */
	struct shm_ring *ring;		/* NULL while stopped */
	uint8_t *slots;
	uint32_t idx;			/* our index: tail (rx) or head (tx) */
	uint32_t room_tail;		/* tx: the consumer's tail when last read; rx: the tail published */
	struct rte_mempool *mp;		/* rx */
	uint16_t port;			/* rx: the mbufs' port */
	uint64_t pkts;
	uint64_t bytes;
	uint64_t errs;			/* tx: frames empty or too big; rx: no mbuf */
	uint64_t bad;			/* rx: slots no producer writes (skipped) */
};

/*
 * A small frame (at most SHM_SMALL bytes) copied between a slot and a buffer
 * of SHM_SMALL bytes in whole 32-byte blocks, rounded up: both have the room
 * (a slot's frame area is far larger), the bytes past the frame are
 * nobody's, and a loop of wide moves costs a third of a general copy's
 * branches on sizes.
 */
static inline void
shm_copy_small(void *dst, const void *src, uint32_t len)
{
	for (uint32_t o = 0; o < len; o += 32)
		memcpy((uint8_t *)dst + o, (const uint8_t *)src + o, 32);
}

/*
 * Where a frame of @len bytes starts in its slot (both ends know its length
 * from the tag). A small one at once behind the tag, on the tag's line. A
 * bigger one SHM_BIG_OFF bytes in, so that the payload behind 54 bytes of
 * headers (Ethernet, IPv4, UDP and a BTH: the middle packets of a RoCEv2
 * WRITE, SEND or READ response, nearly all of a large message's) starts on
 * a cache line: it is then copied in and out in whole-line moves, where a
 * payload across lines makes every 64-byte store and load touch two (on
 * this project's AMD EPYC test machine, 4 KiB through a ring between two
 * cores, devtools/bench_xcopy.c --copy z64@64 z64@58: 184-224 Gbit/s
 * against 80-127).
 */
static inline uint32_t
shm_frame_off(uint32_t len)
{
	return len > SHM_SMALL ? SHM_BIG_OFF : SHM_SLOT_HDR;
}

static inline uint8_t *
slot_at(const struct shm_queue *q, uint32_t i)
{
	return q->slots + (uint64_t)(i & (SHM_NB_SLOTS - 1)) * SHM_SLOT_SIZE;
}

/*
 * The transmit (@tx) or receive queue @qid of port @port if net_shm drives it
 * (@driver_name from rte_eth_dev_info_get) with this header's layout, else
 * NULL. Its user must be the queue's only one: bursts on it and the direct
 * calls below are not both allowed from different threads at once, as for
 * any DPDK queue.
 */
static inline struct shm_queue *
shm_direct_queue(uint16_t port, uint16_t qid, const char *driver_name, bool tx)
{
	const struct rte_eth_dev_data *d = rte_eth_devices[port].data;
	struct shm_queue *q;

	if (driver_name == NULL || strcmp(driver_name, SHM_DRIVER_NAME) != 0 ||
	    qid >= (tx ? d->nb_tx_queues : d->nb_rx_queues))
		return NULL;
	q = tx ? d->tx_queues[qid] : d->rx_queues[qid];
	return q != NULL && q->magic == SHM_QUEUE_MAGIC ? q : NULL;
}

/*
 * Whether callbacks watch the tx (@tx) or rx bursts of queue @qid of @port
 * (dpdk-dumpcap's, latency statistics'): the frames must then go through
 * the bursts, where they see them, not past them.
 */
static inline bool
shm_direct_watched(uint16_t port, uint16_t qid, bool tx)
{
#ifdef RTE_ETHDEV_RXTX_CALLBACKS
	struct rte_eth_dev *d = &rte_eth_devices[port];

	return __atomic_load_n(tx ? &d->pre_tx_burst_cbs[qid] : &d->post_rx_burst_cbs[qid],
			       __ATOMIC_RELAXED) != NULL;
#else
	RTE_SET_USED(port);
	RTE_SET_USED(qid);
	RTE_SET_USED(tx);
	return false;
#endif
}

/*
 * Where the next frame, of @len bytes (1..SHM_MAX_FRAME), goes, or NULL: the
 * ring is full or the port is stopped. shm_direct_commit() sends it, with
 * the same length; until then nothing is visible to the peer, and a frame
 * given up needs no undo.
 */
static inline uint8_t *
shm_direct_slot(struct shm_queue *q, uint32_t len)
{
	if (unlikely(q->ring == NULL))
		return NULL;
	if (unlikely(q->idx - q->room_tail == SHM_NB_SLOTS)) {
		q->room_tail = __atomic_load_n(&q->ring->tail, __ATOMIC_ACQUIRE);
		if (q->idx - q->room_tail == SHM_NB_SLOTS)
			return NULL;
	}
	return slot_at(q, q->idx) + shm_frame_off(len);
}

/* The frame of @len bytes written at shm_direct_slot(q, @len) is sent. */
static inline void
shm_direct_commit(struct shm_queue *q, uint32_t len)
{
	uint32_t head = q->idx;

	__atomic_store_n(&((struct shm_slot *)slot_at(q, head))->tag, slot_tag(head, len),
			 __ATOMIC_RELEASE);
	q->bytes += len;
	q->pkts++;
	q->idx = ++head;
	/* the peer finds frames by their tags: the head is for a side's next holder */
	__atomic_store_n(&q->ring->head, head, __ATOMIC_RELEASE);
}

/*
 * The next frame that has arrived, in its slot, and its length (*@len), or
 * NULL: none yet, or the port is stopped. A slot whose length no producer
 * writes is skipped (counted in q->bad). The frame stays in its slot until
 * shm_direct_rx_next(); the peer shares the slot, so the bytes a reader
 * acts on (headers, lengths) are copied before they are trusted.
 * shm_direct_rx_done() gives the slots taken back.
 */
static inline const uint8_t *
shm_direct_rx_peek(struct shm_queue *q, uint32_t *len)
{
	for (;;) {
		const uint8_t *s;
		uint32_t tag;

		if (unlikely(q->ring == NULL))
			return NULL;
		s = slot_at(q, q->idx);
		/* written at this index in this lap: an older lap's number is not */
		tag = __atomic_load_n(&((const struct shm_slot *)s)->tag, __ATOMIC_ACQUIRE);
		if (!slot_tag_is(tag, q->idx))
			return NULL;
		*len = tag & SHM_LEN_MASK;
		if (likely(*len <= SHM_MAX_FRAME && *len != 0))
			return s + shm_frame_off(*len);
		/* a producer that never writes such a slot: skip it */
		q->bad++;
		q->idx++;
	}
}

/* The frame shm_direct_rx_peek() returned (@len bytes) is taken. */
static inline void
shm_direct_rx_next(struct shm_queue *q, uint32_t len)
{
	q->idx++;
	q->pkts++;
	q->bytes += len;
}

/* The slots taken since the last call go back to the producer. */
static inline void
shm_direct_rx_done(struct shm_queue *q)
{
	if (q->idx != q->room_tail && q->ring != NULL) {
		q->room_tail = q->idx;
		__atomic_store_n(&q->ring->tail, q->idx, __ATOMIC_RELEASE);
	}
}

#endif /* SHM_DP_H */
