/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the net_impair fault-injection ethdev. Every impair port wraps its
 * own net_ring port, whose tx queue loops back to its rx queue, so a packet
 * sent on an impair port comes back on the same port after going through the
 * impairments once (in the direction the port impairs).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_test.h"
#include "harness.h"
#include "rte_pmd_impair.h"

#define NB_MBUF		8191
#define PKT_LEN		128u
#define SEQ_OFF		14u
#define MAX_PKTS	10000u
#define RX_BURST	64
#define NB_DESC		512

static struct rte_mempool *pool;

/*
 * The driver's log type. Referring to it also makes the linker keep the
 * library that holds the driver (linked whole under meson, but not
 * necessarily by another build), whose constructor registers net_impair,
 * although the test calls nothing else in it.
 */
extern int impair_logtype;

/* Per test scratch: arrivals per sequence number, and the arrival order. */
static uint16_t arrivals[MAX_PKTS];
static uint32_t order[2 * MAX_PKTS];

struct traffic {
	uint32_t n;		/* packets to send, numbered 0..n-1 */
	uint16_t queue;		/* queue to send and receive on */
	uint16_t burst;		/* packets per tx_burst call */
	uint32_t quiet_ms;	/* drain until nothing arrived for this long */
	uint32_t received;	/* packets received */
	uint32_t ordered;	/* entries written to order[] */
	uint32_t mangled;	/* packets whose content matched no sequence number */
};

static uint64_t
ms_to_cycles(uint64_t ms)
{
	return ms * rte_get_timer_hz() / 1000;
}

static uint16_t
port_of(const char *name)
{
	uint16_t port;

	if (rte_eth_dev_get_port_by_name(name, &port) != 0)
		return RTE_MAX_ETHPORTS;
	return port;
}

static uint8_t
payload_byte(uint32_t seq, uint32_t off)
{
	return (uint8_t)(seq * 31u + off * 7u + 1u);
}

static struct rte_mbuf *
make_pkt(uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, PKT_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	for (uint32_t i = 0; i < PKT_LEN; i++)
		p[i] = payload_byte(seq, i);
	/* dst 02:00:00:00:00:01, src 02:00:00:00:00:02, ethertype 0x88b5 */
	memcpy(p, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x88\xb5", 14);
	memcpy(p + SEQ_OFF, &seq, sizeof(seq));
	return m;
}

static uint32_t
pkt_seq(const struct rte_mbuf *m)
{
	uint32_t seq;

	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *, SEQ_OFF), sizeof(seq));
	return seq;
}

/* Number of bits in which m differs from packet seq; first differing byte. */
static int
diff_bits(const struct rte_mbuf *m, uint32_t seq, uint32_t *first)
{
	struct rte_mbuf *ref = make_pkt(seq);
	int bits = 0;

	if (ref == NULL)
		return -1;
	if (rte_pktmbuf_pkt_len(m) != PKT_LEN || m->nb_segs != 1) {
		rte_pktmbuf_free(ref);
		return 1000;
	}
	for (uint32_t i = 0; i < PKT_LEN; i++) {
		uint8_t a = rte_pktmbuf_mtod(m, const uint8_t *)[i];
		uint8_t b = rte_pktmbuf_mtod(ref, const uint8_t *)[i];

		if (a != b && bits == 0 && first != NULL)
			*first = i;
		bits += __builtin_popcount((unsigned int)(a ^ b));
	}
	rte_pktmbuf_free(ref);
	return bits;
}

/* Configures nq queue pairs, starts the port and zeroes its counters. */
static int
port_setup(uint16_t port, uint16_t nq)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, nq, nq, &conf);
	if (ret == -EBUSY) {
		/* left started by a case that failed half way */
		rte_eth_dev_stop(port);
		ret = rte_eth_dev_configure(port, nq, nq, &conf);
	}
	for (uint16_t q = 0; q < nq && ret == 0; q++) {
		ret = rte_eth_rx_queue_setup(port, q, NB_DESC, rte_socket_id(), NULL, pool);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port, q, NB_DESC, rte_socket_id(), NULL);
	}
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0)
		ret = rte_eth_xstats_reset(port);
	if (ret != 0)
		fprintf(stderr, "  port %u setup failed: %d\n", port, ret);
	return ret;
}

static int
port_up(uint16_t port)
{
	return port_setup(port, 1);
}

/* An empty tx burst: lets the port release packets it holds. */
static uint16_t
tx_flush(uint16_t port, uint16_t queue)
{
	struct rte_mbuf *none[1];

	return rte_eth_tx_burst(port, queue, none, 0);
}

static void
record(struct traffic *t, struct rte_mbuf *m)
{
	uint32_t seq = pkt_seq(m);

	t->received++;
	if (seq >= t->n || diff_bits(m, seq, NULL) != 0) {
		t->mangled++;
		return;
	}
	arrivals[seq]++;
	if (t->ordered < RTE_DIM(order))
		order[t->ordered++] = seq;
}

static uint16_t
rx_all(uint16_t port, struct traffic *t)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint16_t total = 0, nb;

	do {
		nb = rte_eth_rx_burst(port, t->queue, pkts, RX_BURST);
		for (uint16_t i = 0; i < nb; i++) {
			record(t, pkts[i]);
			rte_pktmbuf_free(pkts[i]);
		}
		total += nb;
	} while (nb > 0);
	return total;
}

/*
 * Sends t->n numbered packets in bursts, receiving in between (the loopback
 * ring holds 1023 packets), then keeps polling, with empty tx bursts to let
 * held packets out, until nothing arrived for t->quiet_ms.
 */
static int
traffic_run(uint16_t port, struct traffic *t)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint64_t quiet = ms_to_cycles(t->quiet_ms), last, deadline;
	uint32_t seq = 0;

	memset(arrivals, 0, sizeof(arrivals));
	t->received = t->ordered = t->mangled = 0;
	if (t->n > MAX_PKTS || t->burst == 0 || t->burst > RX_BURST)
		return -1;
	while (seq < t->n) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)t->burst, t->n - seq);
		uint16_t sent = 0;
		int tries = 0;

		for (uint16_t i = 0; i < k; i++) {
			pkts[i] = make_pkt(seq + i);
			if (pkts[i] == NULL) {
				rte_pktmbuf_free_bulk(pkts, i);
				fprintf(stderr, "  out of mbufs at packet %u\n", seq + i);
				return -1;
			}
		}
		while (sent < k) {
			sent += rte_eth_tx_burst(port, t->queue, pkts + sent, k - sent);
			rx_all(port, t);
			if (sent < k && ++tries > 100000) {
				rte_pktmbuf_free_bulk(pkts + sent, k - sent);
				fprintf(stderr, "  tx stuck at packet %u\n", seq + sent);
				return -1;
			}
		}
		seq += k;
	}
	last = rte_get_timer_cycles();
	deadline = last + ms_to_cycles(5000);
	for (;;) {
		uint64_t now;

		tx_flush(port, t->queue);
		now = rte_get_timer_cycles();
		if (rx_all(port, t) > 0)
			last = now;
		if (now - last > quiet)
			break;
		if (now > deadline) {
			fprintf(stderr, "  traffic never went quiet\n");
			return -1;
		}
	}
	return 0;
}

/* ----------------------------------------------------------------------- */

static int
test_impair_wraps_and_forwards_control(void)
{
	uint16_t port = port_of("net_impair0"), ring = port_of("net_ring0");
	struct rte_ether_addr a, b;
	struct rte_eth_dev_owner owner;
	struct rte_eth_link link;
	struct rte_eth_xstat_name names[64];
	const char *want[] = { "impair_dropped", "impair_duplicated", "impair_reordered",
			       "impair_corrupted", "impair_delayed", "impair_passed" };
	int n;

	TEST_ASSERT(port < RTE_MAX_ETHPORTS, "no net_impair0");
	TEST_ASSERT(ring < RTE_MAX_ETHPORTS, "no net_ring0");
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(ring, &owner), 0);
	TEST_ASSERT(strcmp(owner.name, "net_impair0") == 0, "owner %s", owner.name);
	TEST_ASSERT_EQ(rte_eth_macaddr_get(port, &a), 0);
	TEST_ASSERT_EQ(rte_eth_macaddr_get(ring, &b), 0);
	TEST_ASSERT(rte_is_same_ether_addr(&a, &b), "MAC not taken from the wrapped port");

	TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(rte_eth_link_get_nowait(port, &link), 0);
	TEST_ASSERT_EQ(link.link_status, RTE_ETH_LINK_UP);
	n = rte_eth_xstats_get_names(port, names, RTE_DIM(names));
	TEST_ASSERT(n > 0 && n <= (int)RTE_DIM(names), "xstats names: %d", n);
	for (unsigned int w = 0; w < RTE_DIM(want); w++) {
		bool found = false;

		for (int i = 0; i < n; i++)
			found |= strcmp(names[i].name, want[w]) == 0;
		TEST_ASSERT(found, "no xstat %s", want[w]);
	}
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	TEST_ASSERT_EQ(rte_eth_link_get_nowait(port, &link), 0);
	TEST_ASSERT_EQ(link.link_status, RTE_ETH_LINK_DOWN);
	return TEST_SUCCESS;
}

static int
test_impair_log_type_registered(void)
{
	/* registering an existing name returns its id */
	TEST_ASSERT(impair_logtype >= RTE_LOGTYPE_FIRST_EXT_ID, "log type %d", impair_logtype);
	TEST_ASSERT_EQ(rte_log_register("pmd.net.impair"), impair_logtype);
	return TEST_SUCCESS;
}

static int
test_impair_drop_rate_within_bounds(void)
{
	uint16_t port = port_of("net_impair0");
	struct traffic t = { .n = 10000, .burst = 32, .quiet_ms = 5 };
	struct rte_eth_stats st;
	uint32_t dropped;

	TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(t.mangled, 0);
	dropped = t.n - t.received;
	/* binomial(10000, 0.1): mean 1000, sd 30 */
	TEST_ASSERT(dropped >= 850 && dropped <= 1150, "dropped %u of %u", dropped, t.n);
	for (uint32_t i = 0; i < t.n; i++)
		TEST_ASSERT(arrivals[i] <= 1, "packet %u arrived %u times", i, arrivals[i]);
	for (uint32_t i = 1; i < t.ordered; i++)
		TEST_ASSERT(order[i] > order[i - 1], "out of order at %u", i);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_in"), t.n);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_dropped"), dropped);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_passed"), t.received);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_duplicated"), 0);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_reordered"), 0);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_corrupted"), 0);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_delayed"), 0);
	/* stats come from the wrapped port, which only saw what survived */
	TEST_ASSERT_EQ(rte_eth_stats_get(port, &st), 0);
	TEST_ASSERT_EQ(st.opackets, t.received);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	return TEST_SUCCESS;
}

static uint8_t pattern_a[2000], pattern_b[2000];

/* Drop pattern of 2000 packets after a full setup, or after a plain restart. */
static int
drop_pattern(const char *name, uint16_t burst, bool restart_only, uint8_t *pattern)
{
	uint16_t port = port_of(name);
	struct traffic t = { .n = 2000, .burst = burst, .quiet_ms = 5 };

	TEST_ASSERT(port < RTE_MAX_ETHPORTS, "no %s", name);
	if (restart_only)
		TEST_ASSERT_EQ(rte_eth_dev_start(port), 0);
	else
		TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	TEST_ASSERT(t.received < t.n && t.received > t.n / 2, "%s received %u", name, t.received);
	for (uint32_t i = 0; i < t.n; i++)
		pattern[i] = (uint8_t)arrivals[i];
	return TEST_SUCCESS;
}

static int
test_impair_same_seed_same_pattern(void)
{
	TEST_ASSERT_EQ(drop_pattern("net_impair1", 32, false, pattern_a), 0);
	TEST_ASSERT_EQ(drop_pattern("net_impair2", 32, false, pattern_b), 0);
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) == 0,
		    "same seed, different drops");
	/* the pattern depends on the packet count only, not on burst sizes */
	TEST_ASSERT_EQ(drop_pattern("net_impair2", 7, false, pattern_b), 0);
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) == 0,
		    "burst size changed the drops");
	/* and a restart, even without reconfiguring, starts the pattern over */
	TEST_ASSERT_EQ(drop_pattern("net_impair1", 1, true, pattern_b), 0);
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) == 0,
		    "restart did not reseed");
	/* a different seed gives a different pattern */
	TEST_ASSERT_EQ(drop_pattern("net_impair0", 32, false, pattern_b), 0);
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) != 0,
		    "different seeds, same drops");
	return TEST_SUCCESS;
}

/* Each queue has its own random streams; queue 0 matches a one-queue port. */
static int
test_impair_queues_have_own_streams(void)
{
	uint16_t port = port_of("net_impair1");
	struct traffic t = { .n = 2000, .burst = 32, .quiet_ms = 5 };

	TEST_ASSERT_EQ(drop_pattern("net_impair1", 32, false, pattern_a), 0);
	TEST_ASSERT_EQ(port_setup(port, 2), 0);
	t.queue = 1;
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT(t.received < t.n, "queue 1 dropped nothing");
	for (uint32_t i = 0; i < t.n; i++)
		pattern_b[i] = (uint8_t)arrivals[i];
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) != 0,
		    "queues 0 and 1 dropped the same packets");
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_in"), t.n);
	t.queue = 0;
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	for (uint32_t i = 0; i < t.n; i++)
		pattern_b[i] = (uint8_t)arrivals[i];
	TEST_ASSERT(memcmp(pattern_a, pattern_b, sizeof(pattern_a)) == 0,
		    "queue 0 of a two-queue port differs from a one-queue port");
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_in"), 2 * t.n);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	return TEST_SUCCESS;
}

static int
test_impair_dup_delivers_copies(void)
{
	uint16_t port = port_of("net_impair3");
	struct traffic t = { .n = 5000, .burst = 32, .quiet_ms = 5 };
	uint32_t twice = 0;

	TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	/* record() checked every byte of every copy against its original */
	TEST_ASSERT_EQ(t.mangled, 0);
	for (uint32_t i = 0; i < t.n; i++) {
		TEST_ASSERT(arrivals[i] == 1 || arrivals[i] == 2,
			    "packet %u arrived %u times", i, arrivals[i]);
		twice += arrivals[i] == 2;
	}
	/* binomial(5000, 0.2): mean 1000, sd 28 */
	TEST_ASSERT(twice >= 850 && twice <= 1150, "%u duplicated of %u", twice, t.n);
	TEST_ASSERT_EQ(t.received, t.n + twice);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_duplicated"), twice);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_passed"), t.received);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_dropped"), 0);
	/* a copy follows its original */
	for (uint32_t i = 1; i < t.ordered; i++)
		TEST_ASSERT(order[i] >= order[i - 1], "out of order at %u", i);
	return TEST_SUCCESS;
}

static int
test_impair_reorder_delivers_all_once(void)
{
	uint16_t port = port_of("net_impair4");
	struct traffic t = { .n = 5000, .burst = 32, .quiet_ms = 5 };
	uint32_t late = 0, max_seen = 0;

	TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	TEST_ASSERT_EQ(t.mangled, 0);
	TEST_ASSERT_EQ(t.received, t.n);
	for (uint32_t i = 0; i < t.n; i++)
		TEST_ASSERT_EQ(arrivals[i], 1);
	for (uint32_t i = 0; i < t.ordered; i++) {
		/* a held packet is overtaken by two packets at most */
		TEST_ASSERT(order[i] + 2 >= i && order[i] <= i + 2,
			    "packet %u arrived at position %u", order[i], i);
		if (i > 0 && order[i] < max_seen)
			late++;
		max_seen = RTE_MAX(max_seen, order[i]);
	}
	TEST_ASSERT(late > 200, "only %u packets arrived late", late);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_reordered"), late);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_passed"), t.n);
	return TEST_SUCCESS;
}

static int
test_impair_corrupt_changes_one_bit(void)
{
	uint16_t port = port_of("net_impair5");
	uint32_t corrupted = 0, lo = PKT_LEN, hi = 0;
	const uint32_t n = 2000;

	TEST_ASSERT_EQ(port_up(port), 0);
	for (uint32_t seq = 0; seq < n; seq++) {
		struct rte_mbuf *m = make_pkt(seq), *r = NULL;
		uint32_t first = 0;
		int bits;

		TEST_ASSERT(m != NULL, "alloc");
		TEST_ASSERT_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
		TEST_ASSERT_EQ(rte_eth_rx_burst(port, 0, &r, 1), 1);
		bits = diff_bits(r, seq, &first);
		rte_pktmbuf_free(r);
		TEST_ASSERT(bits == 0 || bits == 1, "packet %u: %d bits changed", seq, bits);
		if (bits == 1) {
			TEST_ASSERT(first >= 14, "packet %u: byte %u changed", seq, first);
			corrupted++;
			lo = RTE_MIN(lo, first);
			hi = RTE_MAX(hi, first);
		}
	}
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	/* binomial(2000, 0.5): mean 1000, sd 22 */
	TEST_ASSERT(corrupted >= 880 && corrupted <= 1120, "%u corrupted of %u", corrupted, n);
	TEST_ASSERT(lo <= 20 && hi >= PKT_LEN - 6, "corrupted bytes only in %u..%u", lo, hi);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_corrupted"), corrupted);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_passed"), n);
	return TEST_SUCCESS;
}

/* A packet the sender still references must not change under the sender. */
static int
test_impair_corrupt_leaves_shared_data_alone(void)
{
	uint16_t port = port_of("net_impair5");
	uint32_t corrupted = 0;

	TEST_ASSERT_EQ(port_up(port), 0);
	for (uint32_t seq = 0; seq < 200; seq++) {
		struct rte_mbuf *m = make_pkt(seq), *r = NULL;
		int bits;

		TEST_ASSERT(m != NULL, "alloc");
		rte_mbuf_refcnt_update(m, 1);	/* kept, as for a retransmission */
		TEST_ASSERT_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
		TEST_ASSERT_EQ(rte_eth_rx_burst(port, 0, &r, 1), 1);
		bits = diff_bits(r, seq, NULL);
		if (bits == 1) {
			corrupted++;
			TEST_ASSERT(r != m, "packet %u corrupted in place", seq);
		}
		rte_pktmbuf_free(r);
		TEST_ASSERT_EQ(diff_bits(m, seq, NULL), 0);
		TEST_ASSERT_EQ(rte_mbuf_refcnt_read(m), 1);
		rte_pktmbuf_free(m);
	}
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	TEST_ASSERT(corrupted > 50, "only %u corrupted", corrupted);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_corrupted"), corrupted);
	return TEST_SUCCESS;
}

/* Receive-side delay: held inside rx_burst until due, then delivered in order. */
static int
test_impair_delay_holds_then_releases(void)
{
	uint16_t port = port_of("net_impair6");	/* delay_us=20000, dir=rx */
	struct traffic t = { .n = 64 };
	struct rte_mbuf *pkts[64];
	uint64_t t0, first = 0, now, hold = ms_to_cycles(20);

	memset(arrivals, 0, sizeof(arrivals));
	TEST_ASSERT_EQ(port_up(port), 0);
	for (uint32_t i = 0; i < t.n; i++) {
		pkts[i] = make_pkt(i);
		TEST_ASSERT(pkts[i] != NULL, "alloc");
	}
	t0 = rte_get_timer_cycles();
	TEST_ASSERT_EQ(rte_eth_tx_burst(port, 0, pkts, 64), 64);
	while (t.received < t.n) {
		now = rte_get_timer_cycles();
		TEST_ASSERT(now - t0 < ms_to_cycles(2000), "only %u of %u released",
			    t.received, t.n);
		/* the time after the call that delivered is past the release time */
		if (rx_all(port, &t) > 0 && first == 0)
			first = rte_get_timer_cycles();
	}
	TEST_ASSERT(first - t0 >= hold, "released after %" PRIu64 " cycles, want %" PRIu64,
		    first - t0, hold);
	TEST_ASSERT_EQ(t.mangled, 0);
	for (uint32_t i = 0; i < t.n; i++)
		TEST_ASSERT_EQ(order[i], i);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_delayed"), t.n);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_passed"), t.n);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	return TEST_SUCCESS;
}

/* Transmit-side delay: released by a later tx_burst once due, never early. */
static int
test_impair_tx_delay_released_by_later_tx(void)
{
	uint16_t port = port_of("net_impair7");	/* delay_us=20000, dir=tx */
	struct traffic t = { .n = 64 };
	struct rte_mbuf *pkts[64];
	uint64_t t0, now;

	memset(arrivals, 0, sizeof(arrivals));
	TEST_ASSERT_EQ(port_up(port), 0);
	for (uint32_t i = 0; i < t.n; i++) {
		pkts[i] = make_pkt(i);
		TEST_ASSERT(pkts[i] != NULL, "alloc");
	}
	t0 = rte_get_timer_cycles();
	TEST_ASSERT_EQ(rte_eth_tx_burst(port, 0, pkts, 64), 64);
	/* before the release time, empty tx bursts release nothing */
	while ((now = rte_get_timer_cycles()) - t0 < ms_to_cycles(10)) {
		tx_flush(port, 0);
		if (rx_all(port, &t) > 0)
			break;
	}
	if (t.received == 0) {
		/* after it, nothing moves until the next tx_burst call */
		rte_delay_us_sleep(20000);
		TEST_ASSERT_EQ(rx_all(port, &t), 0);
		now = rte_get_timer_cycles();
		tx_flush(port, 0);
		rx_all(port, &t);
	}
	/* now is a time before the tx_burst call that released them */
	TEST_ASSERT(now - t0 >= ms_to_cycles(20), "released %" PRIu64 " cycles after sending",
		    now - t0);
	TEST_ASSERT_EQ(t.received, t.n);
	TEST_ASSERT_EQ(t.mangled, 0);
	for (uint32_t i = 0; i < t.n; i++)
		TEST_ASSERT_EQ(order[i], i);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_delayed"), t.n);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	return TEST_SUCCESS;
}

static int
test_impair_bad_devargs_fail_probe(void)
{
	static const char *const bad[] = {
		"ethdev=nonexistent",
		"ethdev=net_ring9,drop=2",
		"ethdev=net_ring9,bogus=1",
		"drop=0.1",
		"",
		"ethdev=net_ring9,drop=abc",
		"ethdev=net_ring9,drop=-0.1",
		"ethdev=net_ring9,drop=nan",
		"ethdev=net_ring9,drop=",
		"ethdev=net_ring9,dup=1.5",
		"ethdev=net_ring9,corrupt=0.5x",
		"ethdev=net_ring9,reorder=inf",
		"ethdev=net_ring9,delay_us=-1",
		"ethdev=net_ring9,delay_us=1.5",
		"ethdev=net_ring9,seed=x",
		"ethdev=net_ring9,dir=sideways",
		"ethdev=net_ring9,link=sideways",
		"ethdev=net_ring9,link=",
		"ethdev=net_ring9,drop=0.1,drop=0.2",
		"ethdev=net_ring0",		/* already wrapped by net_impair0 */
	};
	struct rte_eth_dev_owner owner;
	uint16_t ring = port_of("net_ring9"), port;

	TEST_ASSERT(ring < RTE_MAX_ETHPORTS, "no net_ring9");
	printf("     (the errors logged next are expected)\n");
	fflush(stdout);
	for (unsigned int i = 0; i < RTE_DIM(bad); i++) {
		TEST_ASSERT(rte_vdev_init("net_impair9", bad[i]) != 0,
			    "probe accepted \"%s\"", bad[i]);
		TEST_ASSERT(port_of("net_impair9") == RTE_MAX_ETHPORTS, "port left behind");
	}
	/* the failed probes left the candidate port unowned */
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(ring, &owner), 0);
	TEST_ASSERT_EQ(owner.id, RTE_ETH_DEV_NO_OWNER);

	/* the same port with good arguments is accepted */
	TEST_ASSERT_EQ(rte_vdev_init("net_impair9",
		"ethdev=net_ring9,drop=0.5,dup=0,reorder=0.25,corrupt=1,delay_us=10,"
		"seed=0x10,dir=both,link=down"), 0);
	port = port_of("net_impair9");
	TEST_ASSERT(port < RTE_MAX_ETHPORTS, "no net_impair9");
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(ring, &owner), 0);
	TEST_ASSERT(strcmp(owner.name, "net_impair9") == 0, "owner %s", owner.name);
	/* removing the impair port closes the port it wrapped */
	TEST_ASSERT_EQ(rte_vdev_uninit("net_impair9"), 0);
	TEST_ASSERT(port_of("net_impair9") == RTE_MAX_ETHPORTS, "net_impair9 still there");
	TEST_ASSERT(port_of("net_ring9") == RTE_MAX_ETHPORTS, "net_ring9 not closed");
	return TEST_SUCCESS;
}

static int lsc_events;

static int
count_lsc(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret_param)
{
	(void)port;
	(void)arg;
	(void)ret_param;
	if (type == RTE_ETH_EVENT_INTR_LSC)
		__atomic_fetch_add(&lsc_events, 1, __ATOMIC_RELAXED);
	return 0;
}

static int
link_status(uint16_t port)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port, &link) != 0)
		return -1;
	return link.link_status;
}

/* Sends packets seq .. seq+n-1 (all taken), then one empty burst. */
static int
send_n(uint16_t port, uint32_t seq, uint16_t n)
{
	struct rte_mbuf *pkts[64];

	if (n > RTE_DIM(pkts))
		return -1;
	for (uint16_t i = 0; i < n; i++) {
		pkts[i] = make_pkt(seq + i);
		if (pkts[i] == NULL) {
			rte_pktmbuf_free_bulk(pkts, i);
			return -1;
		}
	}
	if (rte_eth_tx_burst(port, 0, pkts, n) != n)
		return -1;
	tx_flush(port, 0);
	return 0;
}

/*
 * net_impair10 starts with link=down and delays 1 ms both ways. Down: the
 * link reads down, everything offered to tx and everything arriving from the
 * wrapped port is dropped (impair_link_dropped), frames held for the delay
 * are flushed when it goes down; each change (droce_impair_link_set,
 * rte_eth_dev_set_link_*) raises one LSC event, setting the same state none;
 * up again, traffic passes intact.
 */
static int
test_impair_link_down_drops_both_ways_and_raises_lsc(void)
{
	uint16_t port = port_of("net_impair10"), ring = port_of("net_ring10");
	struct traffic t = { .n = 300, .burst = 16, .quiet_ms = 20 };
	struct rte_eth_dev_info info;
	struct rte_mbuf *pkts[64];
	uint64_t in, passed, flushed;

	TEST_ASSERT(port < RTE_MAX_ETHPORTS && ring < RTE_MAX_ETHPORTS, "no net_impair10");
	TEST_ASSERT_EQ(droce_impair_link_set(RTE_MAX_ETHPORTS, 1), -ENODEV);
	TEST_ASSERT_EQ(droce_impair_link_set(port_of("net_ring11"), 1), -EINVAL);
	TEST_ASSERT_EQ(rte_eth_dev_info_get(port, &info), 0);
	TEST_ASSERT(*info.dev_flags & RTE_ETH_DEV_INTR_LSC, "no RTE_ETH_DEV_INTR_LSC");
	TEST_ASSERT_EQ(rte_eth_dev_callback_register(port, RTE_ETH_EVENT_INTR_LSC, count_lsc,
						     NULL), 0);
	lsc_events = 0;
	TEST_ASSERT_EQ(port_up(port), 0);
	TEST_ASSERT_EQ(link_status(port), RTE_ETH_LINK_DOWN);

	/* down from the start: sent frames are taken and dropped */
	TEST_ASSERT_EQ(send_n(port, 0, 64), 0);
	TEST_ASSERT_EQ(rx_all(port, &t), 0);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_link_dropped"), 64);
	/* frames already on the wire are dropped on receipt */
	for (uint16_t i = 0; i < 32; i++) {
		pkts[i] = make_pkt(i);
		TEST_ASSERT(pkts[i] != NULL, "alloc");
	}
	TEST_ASSERT_EQ(rte_eth_tx_burst(ring, 0, pkts, 32), 32);
	TEST_ASSERT_EQ(rte_eth_rx_burst(port, 0, pkts, 64), 0);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_link_dropped"), 96);
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_in"), 0);
	TEST_ASSERT_EQ(lsc_events, 0);

	/* up: one event, and the frames dropped while down stay lost */
	TEST_ASSERT_EQ(droce_impair_link_set(port, 1), 0);
	TEST_ASSERT_EQ(lsc_events, 1);
	TEST_ASSERT_EQ(link_status(port), RTE_ETH_LINK_UP);
	TEST_ASSERT_EQ(droce_impair_link_set(port, 1), 0);
	TEST_ASSERT_EQ(lsc_events, 1);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(t.received, t.n);
	TEST_ASSERT_EQ(t.mangled, 0);
	for (uint32_t i = 0; i < t.n; i++)
		TEST_ASSERT(arrivals[i] == 1, "packet %u arrived %u times", i, arrivals[i]);

	/* frames held for the delay when the link goes down are flushed */
	TEST_ASSERT_EQ(send_n(port, 0, 64), 0);
	TEST_ASSERT_EQ(droce_impair_link_set(port, 0), 0);
	TEST_ASSERT_EQ(lsc_events, 2);
	TEST_ASSERT_EQ(link_status(port), RTE_ETH_LINK_DOWN);
	tx_flush(port, 0);
	rte_delay_ms(2);
	TEST_ASSERT_EQ(rte_eth_rx_burst(port, 0, pkts, 64), 0);
	/* flushed, unless the delay ran out first: then dropped on receipt */
	TEST_ASSERT_EQ(h_eth_xstat(port, "impair_flushed") +
		       h_eth_xstat(port, "impair_link_dropped"), 64 + 96);

	/* the ethdev calls do the same */
	TEST_ASSERT_EQ(rte_eth_dev_set_link_up(port), 0);
	TEST_ASSERT_EQ(lsc_events, 3);
	TEST_ASSERT_EQ(link_status(port), RTE_ETH_LINK_UP);
	TEST_ASSERT_EQ(traffic_run(port, &t), 0);
	TEST_ASSERT_EQ(t.received, t.n);
	TEST_ASSERT_EQ(rte_eth_dev_set_link_down(port), 0);
	TEST_ASSERT_EQ(lsc_events, 4);
	TEST_ASSERT_EQ(link_status(port), RTE_ETH_LINK_DOWN);

	/* each direction: what went in left once, passed or flushed (nothing impaired) */
	in = h_eth_xstat(port, "impair_in");
	passed = h_eth_xstat(port, "impair_passed");
	flushed = h_eth_xstat(port, "impair_flushed");
	TEST_ASSERT_EQ(in, 4 * t.n + 64);
	TEST_ASSERT_EQ(in, passed + flushed);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port), 0);
	TEST_ASSERT_EQ(rte_eth_dev_callback_unregister(port, RTE_ETH_EVENT_INTR_LSC, count_lsc,
						       NULL), 0);
	return TEST_SUCCESS;
}

/*
 * net_impair13 wraps net_impair12, a port that interrupts link changes: a
 * change of net_impair12's link reaches net_impair13's LSC callbacks, and
 * net_impair13's link follows it unless set down itself.
 */
static int
test_impair_passes_on_wrapped_port_lsc(void)
{
	uint16_t outer = port_of("net_impair13"), inner = port_of("net_impair12");

	TEST_ASSERT(outer < RTE_MAX_ETHPORTS && inner < RTE_MAX_ETHPORTS, "no net_impair12/13");
	TEST_ASSERT_EQ(rte_eth_dev_callback_register(outer, RTE_ETH_EVENT_INTR_LSC, count_lsc,
						     NULL), 0);
	lsc_events = 0;
	TEST_ASSERT_EQ(port_up(outer), 0);
	TEST_ASSERT_EQ(link_status(outer), RTE_ETH_LINK_UP);
	TEST_ASSERT_EQ(droce_impair_link_set(inner, 0), 0);
	TEST_ASSERT_EQ(lsc_events, 1);
	TEST_ASSERT_EQ(link_status(outer), RTE_ETH_LINK_DOWN);
	/* down twice over: one way back up is not enough */
	TEST_ASSERT_EQ(droce_impair_link_set(outer, 0), 0);
	TEST_ASSERT_EQ(droce_impair_link_set(inner, 1), 0);
	TEST_ASSERT_EQ(lsc_events, 1);
	TEST_ASSERT_EQ(link_status(outer), RTE_ETH_LINK_DOWN);
	TEST_ASSERT_EQ(droce_impair_link_set(outer, 1), 0);
	TEST_ASSERT_EQ(lsc_events, 2);
	TEST_ASSERT_EQ(link_status(outer), RTE_ETH_LINK_UP);
	TEST_ASSERT_EQ(rte_eth_dev_stop(outer), 0);
	TEST_ASSERT_EQ(rte_eth_dev_callback_unregister(outer, RTE_ETH_EVENT_INTR_LSC, count_lsc,
						       NULL), 0);
	return TEST_SUCCESS;
}

/*
 * Runs after every other case: all impairments in both directions, then
 * packets held when the port stops, in both directions; at the end every mbuf
 * is back in the pool.
 */
static int
test_impair_mbufs_not_leaked(void)
{
	uint16_t all = port_of("net_impair8"), rxd = port_of("net_impair6"),
		 txd = port_of("net_impair7");
	struct traffic t = { .n = 3000, .burst = 32, .quiet_ms = 5 };
	struct rte_mbuf *pkts[64];
	uint64_t in, dup, passed, dropped, flushed;

	TEST_ASSERT_EQ(port_up(all), 0);
	TEST_ASSERT_EQ(traffic_run(all, &t), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(all), 0);
	in = h_eth_xstat(all, "impair_in");
	dup = h_eth_xstat(all, "impair_duplicated");
	passed = h_eth_xstat(all, "impair_passed");
	dropped = h_eth_xstat(all, "impair_dropped");
	flushed = h_eth_xstat(all, "impair_flushed");
	TEST_ASSERT(t.received > t.n / 2, "received %u of %u", t.received, t.n);
	TEST_ASSERT(h_eth_xstat(all, "impair_reordered") > 0, "nothing reordered");
	TEST_ASSERT(h_eth_xstat(all, "impair_corrupted") > 0, "nothing corrupted");
	TEST_ASSERT(h_eth_xstat(all, "impair_delayed") > 0, "nothing delayed");
	TEST_ASSERT(dup > 0 && dropped > 0, "dup %" PRIu64 " dropped %" PRIu64, dup, dropped);
	/* each direction: every packet in, and every copy, left exactly once */
	TEST_ASSERT_EQ(in + dup, passed + dropped + flushed);
	/* the application saw what left the rx side */
	TEST_ASSERT_EQ(in, t.n + (passed - t.received));

	/* packets held on the tx side when the port stops */
	TEST_ASSERT_EQ(port_up(txd), 0);
	for (uint32_t i = 0; i < 64; i++) {
		pkts[i] = make_pkt(i);
		TEST_ASSERT(pkts[i] != NULL, "alloc");
	}
	TEST_ASSERT_EQ(rte_eth_tx_burst(txd, 0, pkts, 64), 64);
	TEST_ASSERT_EQ(rte_eth_dev_stop(txd), 0);
	TEST_ASSERT_EQ(h_eth_xstat(txd, "impair_flushed"), 64);

	/* packets held on the rx side when the port stops */
	TEST_ASSERT_EQ(port_up(rxd), 0);
	for (uint32_t i = 0; i < 64; i++) {
		pkts[i] = make_pkt(i);
		TEST_ASSERT(pkts[i] != NULL, "alloc");
	}
	TEST_ASSERT_EQ(rte_eth_tx_burst(rxd, 0, pkts, 64), 64);
	TEST_ASSERT_EQ(rte_eth_rx_burst(rxd, 0, pkts, 64), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(rxd), 0);
	TEST_ASSERT_EQ(h_eth_xstat(rxd, "impair_flushed"), 64);

	TEST_ASSERT_EQ(rte_mempool_avail_count(pool), pool->size);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_impair_wraps_and_forwards_control),
	TEST_CASE(test_impair_log_type_registered),
	TEST_CASE(test_impair_drop_rate_within_bounds),
	TEST_CASE(test_impair_same_seed_same_pattern),
	TEST_CASE(test_impair_queues_have_own_streams),
	TEST_CASE(test_impair_dup_delivers_copies),
	TEST_CASE(test_impair_reorder_delivers_all_once),
	TEST_CASE(test_impair_corrupt_changes_one_bit),
	TEST_CASE(test_impair_corrupt_leaves_shared_data_alone),
	TEST_CASE(test_impair_delay_holds_then_releases),
	TEST_CASE(test_impair_tx_delay_released_by_later_tx),
	TEST_CASE(test_impair_bad_devargs_fail_probe),
	TEST_CASE(test_impair_link_down_drops_both_ways_and_raises_lsc),
	TEST_CASE(test_impair_passes_on_wrapped_port_lsc),
	TEST_CASE(test_impair_mbufs_not_leaked),
};

int
main(int argc, char **argv)
{
	char *eal_args[] = {
		"test_impair", "--no-huge", "-m", "128", "--no-pci",
		"--file-prefix=test_impair", "--log-level=lib.eal:error",
		"--vdev=net_ring0", "--vdev=net_impair0,ethdev=net_ring0,drop=0.1,seed=1",
		"--vdev=net_ring1", "--vdev=net_impair1,ethdev=net_ring1,drop=0.1,seed=42",
		"--vdev=net_ring2", "--vdev=net_impair2,ethdev=net_ring2,drop=0.1,seed=42",
		"--vdev=net_ring3", "--vdev=net_impair3,ethdev=net_ring3,dup=0.2,seed=3",
		"--vdev=net_ring4", "--vdev=net_impair4,ethdev=net_ring4,reorder=0.2,seed=4",
		"--vdev=net_ring5", "--vdev=net_impair5,ethdev=net_ring5,corrupt=0.5,seed=5",
		"--vdev=net_ring6",
		"--vdev=net_impair6,ethdev=net_ring6,delay_us=20000,dir=rx,seed=6",
		"--vdev=net_ring7", "--vdev=net_impair7,ethdev=net_ring7,delay_us=20000,seed=7",
		"--vdev=net_ring8",
		"--vdev=net_impair8,ethdev=net_ring8,drop=0.1,dup=0.1,reorder=0.2,"
			"corrupt=0.1,delay_us=100,dir=both,seed=8",
		"--vdev=net_ring9",
		"--vdev=net_ring10",
		"--vdev=net_impair10,ethdev=net_ring10,delay_us=1000,dir=both,link=down",
		"--vdev=net_ring11",
		"--vdev=net_ring12", "--vdev=net_impair12,ethdev=net_ring12",
		"--vdev=net_impair13,ethdev=net_impair12",
	};
	int rc;

	(void)argc;
	(void)argv;
	if (rte_eal_init((int)RTE_DIM(eal_args), eal_args) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_impair_pool", NB_MBUF, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool creation failed\n");
		rte_eal_cleanup();
		return 1;
	}
	rc = DROCE_TEST_MAIN("impair", cases, NULL, NULL);
	rte_eal_cleanup();
	return rc;
}
