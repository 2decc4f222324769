/* SPDX-License-Identifier: BSD-3-Clause */
/* net_impair: what its files share (rte_eth_impair.c describes the driver). */
#ifndef IMPAIR_LOC_H
#define IMPAIR_LOC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "impair_args.h"

extern int impair_logtype;

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

/* impair_rxtx.c: the fault engine and the burst functions */
uint64_t impair_threshold(double p);
void impair_queue_seed(struct impair_queue *q, uint64_t seed);
void impair_queue_flush(struct impair_queue *q);
uint16_t impair_tx_pass(void *queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t impair_tx(void *queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t impair_rx_pass(void *queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t impair_rx(void *queue, struct rte_mbuf **pkts, uint16_t n);

#endif /* IMPAIR_LOC_H */
