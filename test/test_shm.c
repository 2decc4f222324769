/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_shm, the ethdev that joins two ports through a shared-memory segment
 * (drivers/net/shm), within one process: both sides of a link may be held by
 * two ports of the same process, since both are alive (the same pid). Every
 * case creates its vdevs at run time on a link name of its own
 * ("ts<pid>-<case>") and removes them at its end (teardown), so the cases do
 * not depend on each other; a segment left in /dev/shm is unlinked.
 *
 *  - frames pass both ways byte-identical, up to SHM_MAX_FRAME (4288 bytes),
 *    from mbuf chains and into chains; a bigger frame is taken, freed and
 *    counted in oerrors, and never arrives; the counters agree;
 *  - a port alone has its link up; frames it sends wait in the ring, and
 *    the port that then claims the other side drops them (rx_stale_dropped);
 *  - a full ring (1024 slots) takes no more, loses nothing and keeps order;
 *  - a third port on a held link fails to start (-EBUSY) until a side frees;
 *    a side whose holder has exited but is not yet reaped (a zombie, as a
 *    SIGKILLed process whose parent has not waited) is free;
 *  - a receiver short of mbufs leaves the frames it cannot take in the ring;
 *  - droce on a net_shm port whose peer reads nothing holds its frames back
 *    (tx_busy) instead of dropping them (tx_drop_full): every PSN arrives
 *    once the peer reads; those it held were sent without a copy and copied
 *    at their flush (zcopy=), each with its ICRC right and its payload;
 *  - zero-copy transmit between two droce devices: WRITE, SEND and READ
 *    byte for byte with zcopy=auto, 1 and 0, the counters exact; READs of
 *    memory another thread keeps changing lose no response to its ICRC.
 *
 * Progress is inline (EAL -l 0, lcore=inline).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <infiniband/verbs.h>

#include "droce.h"
#include "frame.h"
#include "droce_config.h"
#include "droce_test.h"
#include "eal_dir.h"
#include "frame.h"
#include "harness.h"
#include "roce_hdr.h"

#define NB_SLOTS	1024u		/* net_shm: slots per direction */
#define MAX_FRAME	4288u		/* net_shm: SHM_MAX_FRAME */
#define FRAME_BUF	8192u
#define ETYPE_TEST	0x88b5		/* IEEE local experimental */
#define OFF_SEQ		RTE_ETHER_HDR_LEN

static struct rte_mempool *big_pool;	/* one segment holds any frame */
static struct rte_mempool *small_pool;	/* 2 KiB segments: big frames arrive as chains */
static int case_no;

/* ------------------------------------------------------------------ */
/* what a case created, removed by teardown() whatever happened */

#define MAX_PORTS 4
static struct {
	bool used;
	char name[32];
	uint16_t id;
} ports[MAX_PORTS];
static char link_name[64];
static struct rte_mempool *case_pool;

#define NB_DQP 8
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[NB_DQP];
	uint8_t *buf;
	bool dev;
} D;

static void
shm_path(char *buf, size_t n)
{
	snprintf(buf, n, "/dev/shm/droce-shm.%s", link_name);
}

static bool
segment_exists(void)
{
	char p[128];

	shm_path(p, sizeof(p));
	return access(p, F_OK) == 0;
}

/* A port on this case's link: configured (one rx queue on @mp), not started. */
static int
port_new(const char *tag, struct rte_mempool *mp, uint16_t *id)
{
	struct rte_eth_conf conf = { 0 };
	char args[96];
	int slot = -1, ret;

	for (int i = 0; i < MAX_PORTS && slot < 0; i++)
		if (!ports[i].used)
			slot = i;
	if (slot < 0)
		return -1;
	snprintf(ports[slot].name, sizeof(ports[slot].name), "net_shm_c%d%s", case_no, tag);
	snprintf(args, sizeof(args), "link=%s", link_name);
	ret = rte_vdev_init(ports[slot].name, args);
	if (ret != 0) {
		fprintf(stderr, "  rte_vdev_init(%s, %s): %d\n", ports[slot].name, args, ret);
		return -1;
	}
	ports[slot].used = true;
	if (rte_eth_dev_get_port_by_name(ports[slot].name, &ports[slot].id) != 0)
		return -1;
	*id = ports[slot].id;
	if (mp == NULL)		/* droce configures it */
		return 0;
	ret = rte_eth_dev_configure(*id, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(*id, 0, NB_SLOTS, rte_socket_id(), NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(*id, 0, NB_SLOTS, rte_socket_id(), NULL);
	if (ret != 0)
		fprintf(stderr, "  cannot set up %s: %d\n", ports[slot].name, ret);
	return ret;
}

static void
droce_cleanup(void)
{
	for (int i = 0; i < NB_DQP; i++)
		if (D.qp[i] != NULL)
			ibv_destroy_qp(D.qp[i]);
	if (D.mr != NULL)
		ibv_dereg_mr(D.mr);
	if (D.cq != NULL)
		ibv_destroy_cq(D.cq);
	if (D.pd != NULL)
		ibv_dealloc_pd(D.pd);
	if (D.ctx != NULL)
		ibv_close_device(D.ctx);
	if (D.dev)
		droce_dev_destroy("droce0");
	free(D.buf);
	memset(&D, 0, sizeof(D));
}

static void zc_cleanup(void);

static void
teardown(void)
{
	char p[128];

	droce_cleanup();
	zc_cleanup();
	for (int i = 0; i < MAX_PORTS; i++) {
		if (!ports[i].used)
			continue;
		rte_eth_dev_stop(ports[i].id);
		rte_eth_dev_close(ports[i].id);
		rte_vdev_uninit(ports[i].name);
		ports[i].used = false;
	}
	if (case_pool != NULL) {
		rte_mempool_free(case_pool);
		case_pool = NULL;
	}
	if (link_name[0] != '\0' && segment_exists()) {
		shm_path(p, sizeof(p));
		fprintf(stderr, "  %s left behind: unlinked\n", p);
		snprintf(p, sizeof(p), "/droce-shm.%s", link_name);
		shm_unlink(p);
	}
	link_name[0] = '\0';
}

static int
setup(void)
{
	case_no++;
	snprintf(link_name, sizeof(link_name), "ts%d-%d", (int)getpid(), case_no);
	return segment_exists() ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* counters */

static uint64_t
xstat(uint16_t port, const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1) {
		fprintf(stderr, "  port %u: no xstat %s\n", port, name);
		return UINT64_MAX - 1;
	}
	return v;
}

static struct rte_eth_stats
stats(uint16_t port)
{
	struct rte_eth_stats s;

	if (rte_eth_stats_get(port, &s) != 0)
		memset(&s, 0xff, sizeof(s));
	return s;
}

static int
link_up(uint16_t port)
{
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(port, &l) != 0)
		return -1;
	return l.link_status == RTE_ETH_LINK_UP;
}

static uint64_t
dev_xstat(const char *dev, const char *name)
{
	const char *names[128];
	uint64_t v[128];
	int n = droce_dev_xstats(dev, names, v, 128);

	for (int i = 0; i < n && i < 128; i++)
		if (strcmp(names[i], name) == 0)
			return v[i];
	fprintf(stderr, "  %s: no counter %s\n", dev, name);
	return UINT64_MAX - 1;
}

static uint64_t
droce_xstat(const char *name)
{
	return dev_xstat("droce0", name);
}

/* ------------------------------------------------------------------ */
/* frames: Ethernet, a sequence number, then bytes that depend on both */

static uint8_t
pat(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + (i >> 8) * 3u + 1u);
}

static void
frame_fill(uint8_t *b, uint32_t len, uint32_t seq)
{
	static const struct rte_ether_addr src = {{ 0x02, 0, 0, 0, 0x5a, 0x01 }};
	static const struct rte_ether_addr dst = {{ 0x02, 0, 0, 0, 0x5a, 0x02 }};
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)b;

	eth->dst_addr = dst;
	eth->src_addr = src;
	eth->ether_type = rte_cpu_to_be_16(ETYPE_TEST);
	memcpy(b + OFF_SEQ, &seq, 4);
	for (uint32_t i = OFF_SEQ + 4; i < len; i++)
		b[i] = pat(seq, i);
}

/* One mbuf of @len bytes from big_pool. */
static struct rte_mbuf *
frame_new(uint32_t len, uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(big_pool);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	frame_fill(p, len, seq);
	return m;
}

/* The same frame as a chain of 3 segments, cut at @c1 and @c2. */
static struct rte_mbuf *
frame_chain(uint32_t len, uint32_t seq, uint32_t c1, uint32_t c2)
{
	static uint8_t b[FRAME_BUF];
	const uint32_t cut[4] = { 0, c1, c2, len };

	frame_fill(b, len, seq);
	return h_mbuf_chain(small_pool, b, cut, 3, false);
}

/* @m is a sane mbuf holding exactly the frame (@len, @seq); 0 or -1. */
static int
frame_check(struct rte_mbuf *m, uint32_t len, uint32_t seq)
{
	static uint8_t want[FRAME_BUF], got[FRAME_BUF];
	const char *why = NULL;
	const uint8_t *d;

	if (rte_mbuf_check(m, 1, &why) != 0) {
		fprintf(stderr, "  received a broken mbuf: %s\n", why);
		return -1;
	}
	if (rte_pktmbuf_pkt_len(m) != len) {
		uint32_t s = UINT32_MAX;

		if (rte_pktmbuf_pkt_len(m) >= OFF_SEQ + 4)
			rte_pktmbuf_read(m, OFF_SEQ, 4, &s);
		fprintf(stderr, "  frame %u: %u bytes, expected %u (it carries seq %u)\n", seq,
			rte_pktmbuf_pkt_len(m), len, s);
		return -1;
	}
	frame_fill(want, len, seq);
	d = rte_pktmbuf_read(m, 0, len, got);
	if (d == NULL || memcmp(d, want, len) != 0) {
		uint32_t i = 0;

		while (d != NULL && i < len && d[i] == want[i])
			i++;
		fprintf(stderr, "  frame %u (%u bytes) differs from byte %u\n", seq, len, i);
		return -1;
	}
	return 0;
}

/* Receive up to @want frames on @port, waiting up to @ms for them. */
static int
rx_n(uint16_t port, struct rte_mbuf **out, int want, int ms)
{
	uint64_t t0 = h_now_ms();
	int n = 0;

	while (n < want) {
		n += rte_eth_rx_burst(port, 0, out + n, (uint16_t)RTE_MIN(want - n, 64));
		if (n < want && h_now_ms() - t0 > (uint64_t)ms)
			break;
	}
	return n;
}

/* Nothing arrives on @port for @ms. */
static int
rx_none(uint16_t port, int ms)
{
	struct rte_mbuf *m[8];
	uint64_t t0 = h_now_ms();

	do {
		uint16_t k = rte_eth_rx_burst(port, 0, m, RTE_DIM(m));

		if (k != 0) {
			uint32_t s = UINT32_MAX;

			rte_pktmbuf_read(m[0], OFF_SEQ, 4, &s);
			fprintf(stderr, "  port %u received %u unexpected frames (first: %u bytes, seq %u)\n",
				port, k, rte_pktmbuf_pkt_len(m[0]), s);
			rte_pktmbuf_free_bulk(m, k);
			return -1;
		}
	} while (h_now_ms() - t0 < (uint64_t)ms);
	return 0;
}

/* The length of frame @seq in test_tag_wraps_every_frame_in_order: 60 to 123 bytes. */
static uint32_t
wrap_len(uint32_t seq)
{
	return 60 + seq % 64;
}

/*
 * Up to @max (<= 64) frames on @port, waiting up to 1 s: each intact, of
 * sequence number @seq0 + i and @len bytes (@vary: wrap_len of it), and
 * freed. How many, or -1 at the first bad one.
 */
static int
rx_checked(uint16_t port, int max, uint32_t seq0, uint32_t len, bool vary)
{
	struct rte_mbuf *m[64];
	int got = rx_n(port, m, max, 1000);

	for (int i = 0; i < got; i++) {
		uint32_t seq = seq0 + (uint32_t)i;

		if (frame_check(m[i], vary ? wrap_len(seq) : len, seq) != 0) {
			rte_pktmbuf_free_bulk(m, (unsigned int)got);
			return -1;
		}
	}
	rte_pktmbuf_free_bulk(m, (unsigned int)got);
	return got;
}

/* Send @n frames of @len bytes, seq @seq0.., from @tx; @rx receives them intact, in order. */
static int
pass(uint16_t tx, uint16_t rx, int n, uint32_t len, uint32_t seq0)
{
	struct rte_mbuf *m[64];
	int got;

	if (n > 64)
		return -1;
	for (int i = 0; i < n; i++)
		if ((m[i] = frame_new(len, seq0 + (uint32_t)i)) == NULL)
			return -1;
	if (rte_eth_tx_burst(tx, 0, m, (uint16_t)n) != n) {
		fprintf(stderr, "  port %u did not take %d frames\n", tx, n);
		return -1;
	}
	got = rx_checked(rx, n, seq0, len, false);
	if (got < 0)
		return -1;
	if (got != n) {
		fprintf(stderr, "  port %u received %d of %d frames\n", rx, got, n);
		return -1;
	}
	return rx_none(rx, 2);
}

/* ------------------------------------------------------------------ */
/* cases */

/*
 * Frames of every size up to the largest pass both ways byte-identical, from
 * a 3-segment chain too, and into chains (port B's receive buffers are 2 KiB);
 * a frame one byte too big is taken, freed and counted in oerrors, and does
 * not arrive (the one after it does). The counters of the two ports agree.
 */
static int
test_frames_both_ways_identical(void)
{
	static const uint32_t sizes[] = { 60, 1000, 1518, MAX_FRAME + 1, 4096, MAX_FRAME, 3000 };
	const int chain_at = (int)RTE_DIM(sizes) - 1, over_at = 3;
	uint16_t a, b;
	uint64_t bytes = 0;

	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", small_pool, &b));
	CHECK(rte_eth_dev_start(a));
	CHECK(rte_eth_dev_start(b));
	TEST_ASSERT(segment_exists(), "the link's segment is in /dev/shm");
	for (int dir = 0; dir < 2; dir++) {
		uint16_t tx = dir ? b : a, rx = dir ? a : b;
		struct rte_mbuf *m[RTE_DIM(sizes)];
		unsigned int free0, n = 0;
		uint32_t seq = 1000u * (uint32_t)dir;
		int got;

		for (unsigned int i = 0; i < RTE_DIM(sizes); i++) {
			m[i] = (int)i == chain_at ? frame_chain(sizes[i], seq + i, 100, 2000) :
						    frame_new(sizes[i], seq + i);
			TEST_ASSERT(m[i] != NULL, "frame %u", i);
		}
		TEST_ASSERT_EQ(m[chain_at]->nb_segs, 3);
		free0 = rte_mempool_avail_count(big_pool);
		/* all of them, the oversize one included, are the port's now */
		TEST_ASSERT_EQ(rte_eth_tx_burst(tx, 0, m, RTE_DIM(sizes)), RTE_DIM(sizes));
		/* the oversize one went back to its pool (the others too, copied) */
		TEST_ASSERT_EQ(rte_mempool_avail_count(big_pool), free0 + RTE_DIM(sizes) - 1);
		got = rx_n(rx, m, (int)RTE_DIM(sizes), 500);	/* one more than should come */
		TEST_ASSERT_EQ(got, RTE_DIM(sizes) - 1);
		for (unsigned int i = 0; i < RTE_DIM(sizes); i++) {
			if ((int)i == over_at)
				continue;
			if (frame_check(m[n], sizes[i], seq + i) != 0) {
				rte_pktmbuf_free_bulk(m, (unsigned int)got);
				return TEST_FAILED;
			}
			if (rx == b && sizes[i] > 2048)
				TEST_ASSERT(m[n]->nb_segs > 1, "a %u-byte frame in 2 KiB buffers", sizes[i]);
			if (dir == 0)
				bytes += sizes[i];
			n++;
		}
		rte_pktmbuf_free_bulk(m, (unsigned int)got);
		CHECK(rx_none(rx, 5));
		{
			struct rte_eth_stats st = stats(tx), sr = stats(rx);

			TEST_ASSERT_EQ(st.opackets, RTE_DIM(sizes) - 1);
			TEST_ASSERT_EQ(st.obytes, bytes);
			TEST_ASSERT_EQ(st.oerrors, 1);
			TEST_ASSERT_EQ(sr.ipackets, st.opackets);
			TEST_ASSERT_EQ(sr.ibytes, st.obytes);
			TEST_ASSERT_EQ(sr.ierrors, 0);
			TEST_ASSERT_EQ(sr.rx_nombuf, 0);
		}
	}
	/* many frames in one burst, both ways at once */
	CHECK(pass(a, b, 64, 1500, 5000));
	CHECK(pass(b, a, 64, 60, 6000));
	{
		struct rte_eth_stats sa = stats(a), sb = stats(b);

		TEST_ASSERT_EQ(sa.opackets, sb.ipackets);
		TEST_ASSERT_EQ(sb.opackets, sa.ipackets);
		TEST_ASSERT_EQ(sa.obytes, sb.ibytes);
		TEST_ASSERT_EQ(sb.obytes, sa.ibytes);
		TEST_ASSERT_EQ(sa.opackets, RTE_DIM(sizes) - 1 + 64);
		TEST_ASSERT_EQ(sb.opackets, RTE_DIM(sizes) - 1 + 64);
	}
	/* stopped: link down; the last port to stop removes the segment's name */
	CHECK(rte_eth_dev_stop(a));
	TEST_ASSERT_EQ(link_up(a), 0);
	TEST_ASSERT(segment_exists(), "still held by port b");
	CHECK(rte_eth_dev_stop(b));
	TEST_ASSERT_EQ(link_up(b), 0);
	TEST_ASSERT(!segment_exists(), "the name of an unused segment is removed");
	return TEST_SUCCESS;
}

/*
 * A port started alone is up and sends into the ring; the port that then
 * claims the other side drops those frames (rx_stale_dropped) and receives
 * only what is sent after it came.
 */
static int
test_alone_up_stale_dropped(void)
{
	struct rte_mbuf *m[10];
	uint16_t a, b;

	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", big_pool, &b));
	TEST_ASSERT_EQ(link_up(a), 0);
	CHECK(rte_eth_dev_start(a));
	TEST_ASSERT_EQ(link_up(a), 1);
	TEST_ASSERT_EQ(link_up(b), 0);
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 0);
	TEST_ASSERT_EQ(xstat(a, "side"), 0);
	TEST_ASSERT_EQ(xstat(b, "side"), UINT64_MAX);	/* holds none */
	for (int i = 0; i < 10; i++)
		TEST_ASSERT((m[i] = frame_new(200, (uint32_t)i)) != NULL, "mbuf");
	TEST_ASSERT_EQ(rte_eth_tx_burst(a, 0, m, 10), 10);
	TEST_ASSERT_EQ(stats(a).opackets, 10);
	rte_delay_us_sleep(10000);
	/* nobody reads a's frames yet; a receives nothing */
	CHECK(rx_none(a, 2));
	CHECK(rte_eth_dev_start(b));
	TEST_ASSERT_EQ(xstat(b, "side"), 1);
	TEST_ASSERT_EQ(xstat(b, "rx_stale_dropped"), 10);
	TEST_ASSERT_EQ(xstat(a, "rx_stale_dropped"), 0);
	CHECK(rx_none(b, 5));
	TEST_ASSERT_EQ(stats(b).ipackets, 0);
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 1);
	TEST_ASSERT_EQ(xstat(b, "peer_attached"), 1);
	TEST_ASSERT_EQ(link_up(b), 1);
	CHECK(pass(a, b, 10, 200, 100));
	CHECK(pass(b, a, 10, 300, 200));
	TEST_ASSERT_EQ(stats(b).ipackets, 10);
	TEST_ASSERT_EQ(stats(a).ipackets, 10);
	/* the peer leaves: a's link stays up, peer_attached drops to 0 */
	CHECK(rte_eth_dev_stop(b));
	TEST_ASSERT_EQ(link_up(a), 1);
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 0);
	/* xstats_reset clears rx_stale_dropped */
	CHECK(rte_eth_xstats_reset(b));
	TEST_ASSERT_EQ(xstat(b, "rx_stale_dropped"), 0);
	return TEST_SUCCESS;
}

/*
 * A ring nobody reads takes exactly 1024 frames, over many bursts; the rest
 * stay the caller's. The reader then gets all 1024 in order, and the ring
 * takes frames again.
 */
static int
test_ring_full_exact_in_order(void)
{
	const uint32_t total = 2000, burst = 48, len = 128;
	uint32_t sent = 0, offered = 0;
	struct rte_mbuf *m[64];
	uint16_t a, b;
	int calls_after_full = 0;

	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", small_pool, &b));
	CHECK(rte_eth_dev_start(a));
	CHECK(rte_eth_dev_start(b));
	while (offered < total) {
		uint32_t n = RTE_MIN(burst, total - offered);
		uint16_t k;

		for (uint32_t i = 0; i < n; i++)
			TEST_ASSERT((m[i] = frame_new(len, sent + i)) != NULL, "mbuf");
		k = rte_eth_tx_burst(a, 0, m, (uint16_t)n);
		/* not taken: still ours, intact */
		for (uint32_t i = k; i < n; i++) {
			TEST_ASSERT_EQ(rte_mbuf_refcnt_read(m[i]), 1);
			if (frame_check(m[i], len, sent + i) != 0) {
				rte_pktmbuf_free_bulk(m + k, n - k);
				return TEST_FAILED;
			}
		}
		rte_pktmbuf_free_bulk(m + k, n - k);
		if (sent == NB_SLOTS)
			calls_after_full++;
		TEST_ASSERT(sent + k <= NB_SLOTS, "the ring took %u frames", sent + k);
		sent += k;
		offered += n;
	}
	TEST_ASSERT_EQ(sent, NB_SLOTS);
	TEST_ASSERT(calls_after_full > 10, "calls on a full ring: %d", calls_after_full);
	TEST_ASSERT_EQ(stats(a).opackets, NB_SLOTS);
	TEST_ASSERT_EQ(stats(a).oerrors, 0);
	/* the reader: 1024 frames, in order */
	for (uint32_t got = 0; got < NB_SLOTS; ) {
		int k = rx_checked(b, (int)RTE_MIN(64u, NB_SLOTS - got), got, len, false);

		TEST_ASSERT(k > 0, "received %u of %u", got, NB_SLOTS);
		got += (uint32_t)k;
	}
	CHECK(rx_none(b, 5));
	TEST_ASSERT_EQ(stats(b).ipackets, NB_SLOTS);
	/* room again: a full ring's worth more, in bursts */
	for (uint32_t s = NB_SLOTS; s < 2 * NB_SLOTS; s += 64)
		CHECK(pass(a, b, 64, len, s));
	TEST_ASSERT_EQ(stats(a).opackets, 2 * NB_SLOTS);
	TEST_ASSERT_EQ(stats(b).ipackets, 2 * NB_SLOTS);
	return TEST_SUCCESS;
}

/*
 * A slot's tag holds its ring index modulo 2^19 (net_shm's struct
 * shm_slot): 2^19 + 4096 frames of sizes 60 to 123 bytes (a 64-byte SEND
 * and its tag in two cache lines) pass in order and intact across that wrap,
 * the ring full in between, and nothing more arrives.
 */
static int
test_tag_wraps_every_frame_in_order(void)
{
	const uint32_t total = (1u << 19) + 4096;
	struct rte_mbuf *m[64];
	uint32_t sent = 0, got = 0;
	uint16_t a, b;
	int k;

	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", small_pool, &b));
	CHECK(rte_eth_dev_start(a));
	CHECK(rte_eth_dev_start(b));
	while (got < total) {
		/* the producer runs ahead until the ring is full */
		while (sent < total && sent - got < NB_SLOTS) {
			uint32_t n = RTE_MIN(64u, total - sent), took;

			n = RTE_MIN(n, NB_SLOTS - (sent - got));
			for (uint32_t i = 0; i < n; i++)
				TEST_ASSERT((m[i] = frame_new(wrap_len(sent + i), sent + i)) != NULL,
					    "mbuf");
			took = rte_eth_tx_burst(a, 0, m, (uint16_t)n);
			TEST_ASSERT_EQ(took, n);
			sent += took;
		}
		k = rx_checked(b, (int)RTE_MIN(64u, sent - got), got, 0, true);
		TEST_ASSERT(k > 0, "received %u of %u", got, total);
		got += (uint32_t)k;
	}
	CHECK(rx_none(b, 5));
	TEST_ASSERT_EQ(stats(a).opackets, total);
	TEST_ASSERT_EQ(stats(b).ipackets, total);
	TEST_ASSERT_EQ(stats(b).ierrors, 0);
	return TEST_SUCCESS;
}

/*
 * Both sides held: a third port fails to start with -EBUSY. Once one of the
 * two stops, the third starts on the side it left, drops what was sent to
 * that side before, and exchanges frames with the one that stayed.
 */
static int
test_third_port_busy_then_takes_side(void)
{
	struct rte_mbuf *m[3];
	uint16_t a, b, c;

	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", big_pool, &b));
	CHECK(port_new("c", big_pool, &c));
	CHECK(rte_eth_dev_start(a));
	CHECK(rte_eth_dev_start(b));
	TEST_ASSERT_EQ(xstat(a, "side"), 0);
	TEST_ASSERT_EQ(xstat(b, "side"), 1);
	TEST_ASSERT_EQ(rte_eth_dev_start(c), -EBUSY);
	TEST_ASSERT_EQ(link_up(c), 0);
	TEST_ASSERT_EQ(xstat(c, "side"), UINT64_MAX);
	/* the failed start changed nothing for the two */
	CHECK(pass(a, b, 5, 500, 0));
	CHECK(pass(b, a, 5, 500, 10));
	TEST_ASSERT_EQ(rte_eth_dev_start(c), -EBUSY);	/* still */
	/* three frames towards b that b never reads */
	for (int i = 0; i < 3; i++)
		TEST_ASSERT((m[i] = frame_new(90, 20u + (uint32_t)i)) != NULL, "mbuf");
	TEST_ASSERT_EQ(rte_eth_tx_burst(a, 0, m, 3), 3);
	/* b leaves side 1; c takes it (side 0 is a's, alive) */
	CHECK(rte_eth_dev_stop(b));
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 0);
	CHECK(rte_eth_dev_start(c));
	TEST_ASSERT_EQ(xstat(c, "side"), 1);
	TEST_ASSERT_EQ(xstat(c, "rx_stale_dropped"), 3);
	TEST_ASSERT_EQ(xstat(c, "peer_attached"), 1);
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 1);
	TEST_ASSERT_EQ(link_up(c), 1);
	CHECK(rx_none(c, 5));
	CHECK(pass(a, c, 20, 1200, 30));
	CHECK(pass(c, a, 20, 700, 60));
	/* b cannot come back while a and c hold the link */
	TEST_ASSERT_EQ(rte_eth_dev_start(b), -EBUSY);
	TEST_ASSERT_EQ(stats(c).ipackets, 20);
	TEST_ASSERT_EQ(stats(c).opackets, 20);
	return TEST_SUCCESS;
}

/*
 * A holder that exited without giving its side back and was not reaped yet:
 * a process of its own (this program run as "--hold-side <link>") takes
 * side 1 and leaves with _exit(), which runs no release; until this process
 * waits for it, it is a zombie whose pid still answers kill(pid, 0), like a
 * SIGKILLed process whose parent has not waited yet. Port c takes side 1
 * all the same, and exchanges frames with a.
 */
static int
test_zombie_holder_side_taken(void)
{
	char self[4096];
	uint16_t a, c;
	int status = -1, i;
	ssize_t n;
	pid_t child;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	TEST_ASSERT(n > 0, "/proc/self/exe");
	self[n] = '\0';
	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("c", big_pool, &c));
	CHECK(rte_eth_dev_start(a));
	TEST_ASSERT_EQ(xstat(a, "side"), 0);
	child = fork();
	TEST_ASSERT(child >= 0, "fork");
	if (child == 0) {
		execl(self, self, "--hold-side", link_name, (char *)NULL);
		_exit(127);
	}
	/* it has exited once it is a zombie (state Z); it is not reaped */
	for (i = 0; i < 1000; i++) {
		char path[64], buf[256], *p;
		FILE *fp;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
		fp = fopen(path, "r");
		TEST_ASSERT(fp != NULL, "child's /proc entry");
		len = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (p != NULL && p[1] == ' ' && p[2] == 'Z')
			break;
		usleep(10000);
	}
	TEST_ASSERT(i < 1000, "the holder exited within 10 s");
	TEST_ASSERT_EQ(kill(child, 0), 0);	/* its pid still answers */
	TEST_ASSERT_EQ(xstat(a, "peer_attached"), 0);	/* a zombie holds nothing */
	CHECK(rte_eth_dev_start(c));
	TEST_ASSERT_EQ(xstat(c, "side"), 1);
	TEST_ASSERT_EQ(link_up(c), 1);
	CHECK(pass(a, c, 10, 600, 0));
	CHECK(pass(c, a, 10, 600, 10));
	TEST_ASSERT_EQ(waitpid(child, &status, 0), child);
	/* its EAL directory, next to ours */
	snprintf(self, sizeof(self), "%s", rte_eal_get_runtime_dir());
	if (strrchr(self, '/') != NULL) {
		snprintf(strrchr(self, '/') + 1, 32, "tsh%d", (int)child);
		eal_dir_remove(self);
	}
	/* 0: the holder did take side 1 before it left */
	TEST_ASSERT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	return TEST_SUCCESS;
}

/*
 * The holder of test_zombie_holder_side_taken, in a process of its own:
 * takes side 1 of @link (side 0 is the test's) and leaves without giving
 * it back. Exit status 0 if it held side 1.
 */
static int
hold_side(const char *self, const char *link)
{
	char prefix[64], vdev[160];
	char *eal[] = { (char *)(uintptr_t)self, "-l", "0", "--no-huge", "-m", "64", "--no-pci",
			"--no-telemetry", "--no-shconf", prefix, vdev,
			"--log-level=pmd.net.shm:error", NULL };
	struct rte_eth_conf conf = { 0 };
	struct rte_mempool *mp;
	uint16_t port;

	snprintf(prefix, sizeof(prefix), "--file-prefix=tsh%d", (int)getpid());
	snprintf(vdev, sizeof(vdev), "--vdev=net_shm0,link=%s", link);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		_exit(2);
	mp = rte_pktmbuf_pool_create("hold", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (mp == NULL || rte_eth_dev_get_port_by_name("net_shm0", &port) != 0 ||
	    rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, 256, 0, NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, 256, 0, NULL) != 0 || rte_eth_dev_start(port) != 0)
		_exit(3);
	_exit(xstat(port, "side") == 1 ? 0 : 4);
}

/*
 * A receiver whose pool is nearly empty: rx_burst returns what it could
 * allocate for, counts rx_nombuf, and leaves the other frames in the ring,
 * to be received later, in order; a frame that needs a chain the pool cannot
 * complete gives back the segments it took.
 */
static int
test_rx_pool_exhausted_frames_wait(void)
{
	struct rte_mbuf *m[32], *held;
	uint32_t next = 0;
	uint16_t a, b;
	int k;

	/* 8 mbufs of 2 KiB, no per-lcore cache: the count is exact */
	case_pool = rte_pktmbuf_pool_create("shm_tiny", 8, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					    rte_socket_id());
	TEST_ASSERT(case_pool != NULL, "pool");
	CHECK(port_new("a", big_pool, &a));
	CHECK(port_new("b", case_pool, &b));
	CHECK(rte_eth_dev_start(a));
	CHECK(rte_eth_dev_start(b));
	for (int i = 0; i < 20; i++)
		TEST_ASSERT((m[i] = frame_new(200, (uint32_t)i)) != NULL, "mbuf");
	TEST_ASSERT_EQ(rte_eth_tx_burst(a, 0, m, 20), 20);

	k = rte_eth_rx_burst(b, 0, m, 32);
	TEST_ASSERT_EQ(k, 8);
	TEST_ASSERT_EQ(stats(b).rx_nombuf, 1);
	TEST_ASSERT_EQ(stats(b).ipackets, 8);
	TEST_ASSERT_EQ(rte_mempool_avail_count(case_pool), 0);
	/* nothing more while the pool is empty, and nothing lost */
	TEST_ASSERT_EQ(rte_eth_rx_burst(b, 0, m + 8, 8), 0);
	TEST_ASSERT_EQ(stats(b).rx_nombuf, 2);
	for (int i = 0; i < k; i++)
		CHECK(frame_check(m[i], 200, next++));
	rte_pktmbuf_free_bulk(m, 8);
	while (next < 20) {
		k = rte_eth_rx_burst(b, 0, m, 32);
		TEST_ASSERT(k > 0, "frames %u.. stayed in the ring", next);
		TEST_ASSERT(k <= 8, "%d", k);
		for (int i = 0; i < k; i++)
			if (frame_check(m[i], 200, next++) != 0) {
				rte_pktmbuf_free_bulk(m, (unsigned int)k);
				return TEST_FAILED;
			}
		rte_pktmbuf_free_bulk(m, (unsigned int)k);
	}
	CHECK(rx_none(b, 5));
	TEST_ASSERT_EQ(stats(b).ipackets, 20);
	TEST_ASSERT_EQ(stats(b).ibytes, 20 * 200);
	TEST_ASSERT_EQ(rte_mempool_avail_count(case_pool), 8);

	/* 3000-byte frames take two mbufs each; with 7 free, the 4th cannot be completed */
	held = rte_pktmbuf_alloc(case_pool);
	TEST_ASSERT(held != NULL, "mbuf");
	for (int i = 0; i < 4; i++)
		TEST_ASSERT((m[i] = frame_new(3000, 100u + (uint32_t)i)) != NULL, "mbuf");
	TEST_ASSERT_EQ(rte_eth_tx_burst(a, 0, m, 4), 4);
	{
		uint64_t nombuf0 = stats(b).rx_nombuf;

		k = rte_eth_rx_burst(b, 0, m, 32);
		TEST_ASSERT_EQ(k, 3);
		TEST_ASSERT_EQ(stats(b).rx_nombuf, nombuf0 + 1);
	}
	/* the half-built 4th frame gave its segment back */
	TEST_ASSERT_EQ(rte_mempool_avail_count(case_pool), 1);
	for (int i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(m[i]->nb_segs, 2);
		CHECK(frame_check(m[i], 3000, 100u + (uint32_t)i));
	}
	rte_pktmbuf_free_bulk(m, 3);
	rte_pktmbuf_free(held);
	k = rte_eth_rx_burst(b, 0, m, 32);
	TEST_ASSERT_EQ(k, 1);
	CHECK(frame_check(m[0], 3000, 103));
	rte_pktmbuf_free(m[0]);
	CHECK(rx_none(b, 5));
	TEST_ASSERT_EQ(stats(b).ipackets, 24);
	TEST_ASSERT_EQ(rte_mempool_avail_count(case_pool), 8);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* droce on a net_shm port that nobody reads */

#define DQP_PEER_QPN	0x000300u
#define WRITE_LEN	(1u << 20)
#define PKTS_PER_QP	(WRITE_LEN / 4096u)	/* path MTU 4096 */
#define DROCE_OFF_BTH	(RTE_ETHER_HDR_LEN + 20 + 8)

static uint32_t
dqp_psn(int i)
{
	/* the last QP's PSNs wrap through 0 */
	return i == NB_DQP - 1 ? 0xffff80u : (0x001000u + (uint32_t)i * 0x10101u) & ROCE_PSN_MASK;
}

static struct ibv_qp *
dqp_new(int i, const union ibv_gid *gid)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = D.cq, .recv_cq = D.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at = { 0 };
	struct ibv_qp *qp = ibv_create_qp(D.pd, &ia);

	if (qp == NULL)
		return NULL;
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	at.pkey_index = 0;
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		goto err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_4096;
	at.dest_qp_num = DQP_PEER_QPN + (uint32_t)i;
	at.rq_psn = 0x000100u;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	at.ah_attr.is_global = 1;
	at.ah_attr.grh.dgid = *gid;
	at.ah_attr.grh.hop_limit = 64;
	at.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		goto err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = dqp_psn(i);
	at.timeout = 18;	/* about 1.07 s: no retransmission within this case */
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

struct dqp_seen {
	uint32_t next;		/* PSN expected next */
	uint32_t fresh;		/* frames with the expected PSN */
	uint32_t dups;		/* frames with a PSN already seen (a resend) */
	uint32_t gaps;		/* frames past the expected PSN: some were lost */
	uint32_t first_gap_at, first_gap_psn;
	uint8_t first_op, last_op;
};

/* frames droce_rx() found with a wrong ICRC, or a payload byte not 0x5a (D.buf's) */
static uint32_t bad_icrc, bad_payload;

/* One of droce0's WRITE frames, whole: its ICRC, and a payload of D.buf's bytes. */
static void
roce_frame_check(const struct rte_mbuf *m)
{
	static uint8_t f[MAX_FRAME];
	const uint8_t *d = m->pkt_len <= sizeof(f) ? rte_pktmbuf_read(m, 0, m->pkt_len, f) : NULL;
	const uint8_t *ip, *pay;
	const struct roce_bth *bth;
	uint32_t iplen, hlen, paylen;

	if (d == NULL) {
		bad_icrc++;
		return;
	}
	ip = d + RTE_ETHER_HDR_LEN;
	iplen = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)ip)->total_length);
	if (RTE_ETHER_HDR_LEN + iplen > m->pkt_len ||
	    roce_icrc_ipv4(ip, iplen - ROCE_ICRC_LEN) != frame_get_le32(ip + iplen - ROCE_ICRC_LEN)) {
		bad_icrc++;
		return;
	}
	bth = (const struct roce_bth *)(d + DROCE_OFF_BTH);
	hlen = roce_opcode_tbl[bth_opcode(bth)].hdr_len;
	pay = (const uint8_t *)bth + hlen;
	paylen = (uint32_t)(ip + iplen - ROCE_ICRC_LEN - pay) - bth_pad(bth);
	for (uint32_t i = 0; i < paylen; i++)
		if (pay[i] != 0x5a) {
			bad_payload++;
			return;
		}
}

/* Read every frame waiting on @port; 0, or -1 on a frame that is not droce0's. */
static int
droce_rx(uint16_t port, struct dqp_seen *seen, uint32_t *frames, uint32_t *arps, uint32_t *other)
{
	struct rte_mbuf *m[32];
	uint16_t k = rte_eth_rx_burst(port, 0, m, RTE_DIM(m));

	for (uint16_t j = 0; j < k; j++) {
		uint8_t h[DROCE_OFF_BTH + ROCE_BTH_LEN];
		const struct rte_ether_hdr *eth = rte_pktmbuf_read(m[j], 0, RTE_ETHER_HDR_LEN, h);
		const uint8_t *p;
		const struct roce_bth *bth;
		uint32_t qpn, psn, q;
		struct dqp_seen *s;

		if (eth != NULL && eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
			(*arps)++;
			continue;
		}
		p = rte_pktmbuf_read(m[j], 0, sizeof(h), h);
		if (eth == NULL || p == NULL) {
			(*other)++;
			continue;
		}
		eth = (const struct rte_ether_hdr *)p;
		bth = (const struct roce_bth *)(p + DROCE_OFF_BTH);
		qpn = bth_qpn(bth);
		q = qpn - DQP_PEER_QPN;
		if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || q >= NB_DQP) {
			(*other)++;
			continue;
		}
		(*frames)++;
		roce_frame_check(m[j]);
		s = &seen[q];
		psn = bth_psn(bth);
		if (s->fresh == 0 && s->dups == 0 && s->gaps == 0)
			s->first_op = bth_opcode(bth);
		if (psn == s->next) {
			s->fresh++;
			s->next = psn_add(psn, 1);
			s->last_op = bth_opcode(bth);
		} else if (psn_cmp(psn, s->next) < 0) {
			s->dups++;
		} else {
			if (s->gaps++ == 0) {
				s->first_gap_at = psn_diff(s->next, dqp_psn((int)q));
				s->first_gap_psn = psn_diff(psn, dqp_psn((int)q));
			}
			s->fresh++;
			s->next = psn_add(psn, 1);
		}
	}
	rte_pktmbuf_free_bulk(m, k);
	return 0;
}

/*
 * droce0 (10.0.0.1) on net_shm port *@a, and the raw port *@b (10.0.0.2,
 * started first: droce0's first frames, a gratuitous ARP, must not meet an
 * empty side) on the same link; D's context, PD, CQ, and an MR of
 * WRITE_LEN bytes of 0x5a with @access.
 */
static int
droce_on_raw_neigh(uint16_t *a, uint16_t *b, int access, const char *neigh)
{
	char args[256], aname[RTE_ETH_NAME_MAX_LEN];
	struct ibv_device **devs;
	int ndev;

	CHECK(port_new("a", NULL, a));
	CHECK(port_new("b", big_pool, b));
	CHECK(rte_eth_dev_start(*b));
	CHECK(rte_eth_dev_get_name_by_port(*a, aname));
	snprintf(args, sizeof(args), "ethdev=%s,ip=10.0.0.1,mtu=4200,mac=02:00:00:00:00:01,%s"
		 "lcore=inline", aname, neigh);
	TEST_ASSERT_EQ(droce_dev_create("droce0", args), 0);
	D.dev = true;
	devs = ibv_get_device_list(&ndev);
	for (int i = 0; devs != NULL && i < ndev && D.ctx == NULL; i++)
		if (strcmp(ibv_get_device_name(devs[i]), "droce0") == 0)
			D.ctx = ibv_open_device(devs[i]);
	ibv_free_device_list(devs);
	TEST_ASSERT(D.ctx != NULL, "open droce0");
	D.pd = ibv_alloc_pd(D.ctx);
	D.cq = ibv_create_cq(D.ctx, 64, NULL, NULL, 0);
	D.buf = aligned_alloc(4096, WRITE_LEN);
	TEST_ASSERT(D.pd != NULL && D.cq != NULL && D.buf != NULL, "PD, CQ, buffer");
	memset(D.buf, 0x5a, WRITE_LEN);
	D.mr = ibv_reg_mr(D.pd, D.buf, WRITE_LEN, access);
	TEST_ASSERT(D.mr != NULL, "MR");
	return TEST_SUCCESS;
}

/* droce0 on port a, the test holding b (not started), 10.0.0.2 at b's MAC, static */
static int
droce_on_raw(uint16_t *a, uint16_t *b, int access)
{
	return droce_on_raw_neigh(a, b, access, "neigh=10.0.0.2@02:00:00:00:00:02,");
}

/*
 * droce0 on net_shm port a; the test holds port b and does not read it at
 * first. 8 RC QPs each WRITE 1 MiB (256 packets of 4 KiB: as many as droce
 * sends unacknowledged), 2048 packets in all against 1024 slots. Once the
 * ring is full droce0 must hold its frames back (tx_busy) rather than drop
 * them (tx_drop_full); when b reads, every QP's 256 PSNs arrive, in order,
 * each once.
 */
static int
test_droce_holds_back_when_port_full(void)
{
	struct dqp_seen seen[NB_DQP] = { 0 };
	uint32_t frames = 0, arps = 0, other = 0, fresh = 0, dups = 0, gaps = 0;
	union ibv_gid gid = { 0 };
	struct ibv_wc wc;
	uint64_t t0, last, busy, drop_full, retrans0, fast0;
	uint16_t a, b;
	int nwc = 0;

	CHECK(droce_on_raw(&a, &b, IBV_ACCESS_LOCAL_WRITE));
	gid.raw[10] = gid.raw[11] = 0xff;
	gid.raw[12] = 10;
	gid.raw[15] = 2;
	for (int i = 0; i < NB_DQP; i++) {
		D.qp[i] = dqp_new(i, &gid);
		TEST_ASSERT(D.qp[i] != NULL, "QP %d", i);
		seen[i].next = dqp_psn(i);
	}
	retrans0 = droce_xstat("retransmits");
	fast0 = droce_xstat("fast_retransmits");
	TEST_ASSERT_EQ(droce_xstat("tx_drop_full"), 0);
	bad_icrc = bad_payload = 0;

	for (int i = 0; i < NB_DQP; i++) {
		struct ibv_sge sge = { (uintptr_t)D.buf, WRITE_LEN, D.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = 0x10000000ull, .rkey = 0x1234 },
		}, *bad = NULL;

		TEST_ASSERT_EQ(ibv_post_send(D.qp[i], &wr, &bad), 0);
	}
	/* ~50 ms of inline progress (longer on a loaded machine, until the ring is full); b is not read */
	t0 = h_now_ms();
	while (h_now_ms() - t0 < 50 ||
	       (h_now_ms() - t0 < 5000 && stats(a).opackets < NB_SLOTS))
		nwc += ibv_poll_cq(D.cq, 1, &wc);
	TEST_ASSERT_EQ(nwc, 0);		/* nothing is acknowledged */
	/* the ring is full: droce0 wrote exactly its 1024 slots */
	TEST_ASSERT_EQ(stats(a).opackets, NB_SLOTS);
	busy = droce_xstat("tx_busy");
	drop_full = droce_xstat("tx_drop_full");
	printf("# droce0 after 50 ms against a full ring: tx_busy %" PRIu64 ", tx_drop_full %" PRIu64
	       ", tx_pkts %" PRIu64 "\n", busy, drop_full, droce_xstat("tx_pkts"));

	/* now read b, driving droce0, until nothing more comes */
	last = t0 = h_now_ms();
	while (h_now_ms() - last < 30 && h_now_ms() - t0 < 5000) {
		uint32_t before = frames + arps + other;

		CHECK(droce_rx(b, seen, &frames, &arps, &other));
		nwc += ibv_poll_cq(D.cq, 1, &wc);
		if (frames + arps + other != before)
			last = h_now_ms();
	}
	for (int i = 0; i < NB_DQP; i++) {
		fresh += seen[i].fresh;
		dups += seen[i].dups;
		gaps += seen[i].gaps;
		if (seen[i].gaps)
			fprintf(stderr, "  QP %d: PSNs lost from start+%u (next seen: start+%u), "
				"%u gaps, %u distinct PSNs seen\n", i, seen[i].first_gap_at,
				seen[i].first_gap_psn, seen[i].gaps, seen[i].fresh);
		else if (seen[i].fresh != PKTS_PER_QP)
			fprintf(stderr, "  QP %d: PSNs start+0..%u seen, start+%u..%u never came\n",
				i, seen[i].fresh - 1, seen[i].fresh, PKTS_PER_QP - 1);
	}
	printf("# read %u RoCE frames (%u resent), %u ARP, %u other in %" PRIu64 " ms; tx_busy %"
	       PRIu64 ", tx_drop_full %" PRIu64 "\n", frames, dups, arps, other, h_now_ms() - t0,
	       droce_xstat("tx_busy"), droce_xstat("tx_drop_full"));
	TEST_ASSERT_EQ(other, 0);
	TEST_ASSERT_EQ(nwc, 0);
	/*
	 * Built straight in the ring's slots while it had room (roce_txf_begin),
	 * then sent without a copy (zcopy=auto on net_shm), the frames the full
	 * port did not take copied when their flush returned: every frame read
	 * whole, its ICRC right, its payload D.buf's.
	 */
	printf("# tx_direct %" PRIu64 ", tx_zcopy %" PRIu64 ", tx_zcopy_copied %" PRIu64 "\n",
	       droce_xstat("tx_direct"), droce_xstat("tx_zcopy"), droce_xstat("tx_zcopy_copied"));
	TEST_ASSERT(droce_xstat("tx_direct") > 0, "frames built in the ring's slots");
	TEST_ASSERT(droce_xstat("tx_direct") + droce_xstat("tx_zcopy") >= NB_DQP * PKTS_PER_QP,
		    "frames sent without a copy of their own");
	TEST_ASSERT(droce_xstat("tx_zcopy_copied") > 0, "held-back frames copied at their flush");
	TEST_ASSERT_EQ(bad_icrc, 0);
	TEST_ASSERT_EQ(bad_payload, 0);
	/*
	 * Every QP's 256 PSNs, contiguous from its start: frames were held, not
	 * dropped (a dropped frame is a gap, or a tail that never comes: the
	 * QP's window is spent and nothing is resent before the ACK timeout).
	 */
	TEST_ASSERT_EQ(gaps, 0);
	for (int i = 0; i < NB_DQP; i++) {
		TEST_ASSERT_EQ(seen[i].fresh, PKTS_PER_QP);
		TEST_ASSERT_EQ(seen[i].first_op, IBV_OPCODE_RC_RDMA_WRITE_FIRST);
		TEST_ASSERT_EQ(seen[i].last_op, IBV_OPCODE_RC_RDMA_WRITE_LAST);
	}
	TEST_ASSERT_EQ(fresh, NB_DQP * PKTS_PER_QP);
	TEST_ASSERT_EQ(drop_full, 0);
	TEST_ASSERT_EQ(droce_xstat("tx_drop_full"), 0);
	TEST_ASSERT(busy > 0, "droce0 never found the port full");
	/*
	 * Each of the 2048 packets once, unless something was resent: nothing
	 * here answers, so each QP may send an early resend (a tail probe,
	 * roce_req.c) once its round trip has passed, and on a very slow
	 * machine the ACK timeout (~1.07 s) may fire too. Resends are counted
	 * apart (dups, behind the expected PSN) and only the distinct PSNs
	 * above are required to be complete.
	 */
	if (droce_xstat("retransmits") == retrans0 && droce_xstat("fast_retransmits") == fast0)
		TEST_ASSERT_EQ(frames, NB_DQP * PKTS_PER_QP);
	else
		printf("# resends (early %" PRIu64 ", on timeout %" PRIu64 "): %u resent frames not "
		       "counted\n", droce_xstat("fast_retransmits") - fast0,
		       droce_xstat("retransmits") - retrans0, dups);
	TEST_ASSERT_EQ(stats(b).ipackets, frames + arps);
	TEST_ASSERT_EQ(stats(a).opackets, frames + arps);
	for (int i = 0; i < NB_DQP; i++) {
		TEST_ASSERT_EQ(ibv_destroy_qp(D.qp[i]), 0);
		D.qp[i] = NULL;
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ */
/*
 * Zero-copy transmit (zcopy=, roce_tx_zc): droce0 and droce1 on the two
 * ports of a link, RC, inline progress. droce0 WRITEs and SENDs from three
 * SGEs and READs into two; droce1 answers the READs from its MR, always with
 * copies. Every message arrives byte for byte, the bytes behind it
 * untouched, with no ICRC drop; the counters say which frames went without
 * a copy.
 */
#define ZC_BUF		(2u << 20)
#define ZC_MTU		1024u		/* h_connect's path MTU */

static struct h_side za, zb;
static bool zc_devs;

static void
zc_cleanup(void)
{
	if (za.ctx != NULL)
		h_side_close(&za);
	if (zb.ctx != NULL)
		h_side_close(&zb);
	memset(&za, 0, sizeof(za));
	memset(&zb, 0, sizeof(zb));
	if (zc_devs) {
		droce_dev_destroy("droce0");
		droce_dev_destroy("droce1");
	}
	zc_devs = false;
}

static struct ibv_device *
dev_named(struct ibv_device **l, int n, const char *name)
{
	for (int i = 0; l != NULL && i < n; i++)
		if (strcmp(ibv_get_device_name(l[i]), name) == 0)
			return l[i];
	return NULL;
}

/* droce0 (10.0.0.1) and droce1 (10.0.0.2) with devargs @extra, connected RC sides. */
static int
zc_setup(const char *extra)
{
	static const struct h_qp_opts o = {
		.type = IBV_QPT_RC, .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 3,
		.max_recv_sge = 2, .buf_len = ZC_BUF, .psn = 0xfffff0,
	};
	struct ibv_device **l;
	char args[256], name[2][RTE_ETH_NAME_MAX_LEN];
	uint16_t p[2];
	int n, ret = -1;

	if (port_new("a", NULL, &p[0]) != 0 || port_new("b", NULL, &p[1]) != 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (rte_eth_dev_get_name_by_port(p[i], name[i]) != 0)
			return -1;
		snprintf(args, sizeof(args),
			 "ethdev=%s,ip=10.0.0.%d,mtu=4200,mac=02:00:00:00:00:0%d,"
			 "neigh=10.0.0.%d@02:00:00:00:00:0%d,lcore=inline%s", name[i], i + 1, i + 1,
			 2 - i, 2 - i, extra);
		if (droce_dev_create(i == 0 ? "droce0" : "droce1", args) != 0)
			return -1;
		zc_devs = true;
	}
	l = ibv_get_device_list(&n);
	if (h_side_open(&za, dev_named(l, n, "droce0"), &o) == 0 &&
	    h_side_open(&zb, dev_named(l, n, "droce1"), &o) == 0 &&
	    h_connect(&za, &zb, &o) == 0 && h_connect(&zb, &za, &o) == 0)
		ret = 0;
	ibv_free_device_list(l);
	return ret;
}

/* Poll all four CQs (each poll moves its device) until @cq has a completion, 5 s at most. */
static int
zc_wait(struct ibv_cq *cq, struct ibv_wc *out)
{
	struct ibv_cq *all[] = { za.scq, za.rcq, zb.scq, zb.rcq };
	uint64_t t0 = h_now_ms();

	while (h_now_ms() - t0 < 5000) {
		for (unsigned int i = 0; i < RTE_DIM(all); i++) {
			struct ibv_wc wc;

			if (ibv_poll_cq(all[i], 1, &wc) != 1)
				continue;
			if (all[i] != cq) {
				fprintf(stderr, "  a completion on another CQ: wr_id %" PRIu64 " status %s\n",
					wc.wr_id, ibv_wc_status_str(wc.status));
				return -1;
			}
			*out = wc;
			return 0;
		}
	}
	fprintf(stderr, "  no completion in 5 s\n");
	return -1;
}

static void
zc_fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 29u + i * 13u + (i >> 9));
}

/* @len bytes of @b from @off as @n SGEs of about equal length, @mr's */
static void
zc_sges(struct ibv_sge *sge, int n, const uint8_t *b, uint32_t len, const struct ibv_mr *mr)
{
	for (int i = 0, off = 0; i < n; i++) {
		uint32_t k = i == n - 1 ? len - (uint32_t)off : len / (uint32_t)n;

		sge[i] = (struct ibv_sge){ (uintptr_t)b + (uint32_t)off, k, mr->lkey };
		off += (int)k;
	}
}

/*
 * @wr_id's completion on @cq, a success (of @byte_len bytes unless 0), and
 * @len bytes of @src at @dst with the byte behind them untouched (0xee).
 */
static int
zc_arrived(struct ibv_cq *cq, uint64_t wr_id, uint32_t byte_len, const char *what,
	   const uint8_t *dst, const uint8_t *src, uint32_t len)
{
	struct ibv_wc wc;

	CHECK(zc_wait(cq, &wc));
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id, "%s %u: %s, wr_id %" PRIu64,
		    what, len, ibv_wc_status_str(wc.status), wc.wr_id);
	if (byte_len != 0)
		TEST_ASSERT_EQ(wc.byte_len, byte_len);
	if (dst != NULL) {
		TEST_ASSERT(memcmp(dst, src, len) == 0, "%s of %u bytes arrived", what, len);
		TEST_ASSERT_EQ(dst[len], 0xee);
	}
	return TEST_SUCCESS;
}

/* frames of a @len-byte message sent without a copy: all if it has @min bytes (0: none) */
static uint64_t
zc_frames(uint32_t len, uint32_t min)
{
	return min != 0 && len >= min ? (len + ZC_MTU - 1) / ZC_MTU : 0;
}

/*
 * WRITEs, SENDs and READs of every size in turn, with devargs @extra: with
 * @direct, frames built in net_shm's slots (the default), each data frame
 * and ACK counted in tx_direct (the READ request is not) and none sent
 * without a copy; else (direct=0) through mbufs, the frames of messages of
 * @min bytes and more sent without a copy (0: none).
 */
static int
zc_run(const char *extra, uint32_t min, bool direct)
{
	/*
	 * 184, 196, 4096 + 200: a WRITE's, a READ response's, a WRITE's last
	 * frame of 258 bytes, just past the 256 roce_rx_shm copies, with the
	 * ICRC not wholly past them
	 */
	static const uint32_t sizes[] = { 1000, 1024, 4097, 3 * 1024 + 5, 16383, 16384, 65537,
					  (1u << 20) + 3, 184, 196, 4096 + 200 };
	uint64_t want0 = 0, want1 = 0, zc0, zc1;	/* want1: droce1 sends nothing without a copy */
	uint64_t dwant0 = 0, dwant1 = 0, d0, d1;
	char args[128];

	snprintf(args, sizeof(args), "%s%s", extra, direct ? "" : ",direct=0");
	CHECK(zc_setup(args));
	for (unsigned int k = 0; k < RTE_DIM(sizes); k++) {
		uint32_t len = sizes[k];
		struct ibv_sge sge[3];
		struct ibv_send_wr wr = { .sg_list = sge, .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_recv_wr rw = { .sg_list = sge, .num_sge = 2 }, *rbad;

		/* WRITE: three SGEs of droce0's to droce1's buffer */
		zc_fill(za.buf, len, k);
		memset(zb.buf, 0xee, ZC_BUF);
		zc_sges(sge, 3, za.buf, len, za.mr);
		wr.wr_id = 100 + k;
		wr.num_sge = 3;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)zb.buf;
		wr.wr.rdma.rkey = zb.mr->rkey;
		TEST_ASSERT_EQ(ibv_post_send(za.qp, &wr, &bad), 0);
		CHECK(zc_arrived(za.scq, 100 + k, 0, "WRITE", zb.buf, za.buf, len));

		/* SEND: three SGEs into a receive of two */
		zc_fill(za.buf, len, k + 50);
		memset(zb.buf, 0xee, ZC_BUF);
		zc_sges(sge, 2, zb.buf, ZC_BUF, zb.mr);
		rw.wr_id = 200 + k;
		TEST_ASSERT_EQ(ibv_post_recv(zb.qp, &rw, &rbad), 0);
		zc_sges(sge, 3, za.buf, len, za.mr);
		wr.wr_id = 300 + k;
		wr.opcode = IBV_WR_SEND;
		TEST_ASSERT_EQ(ibv_post_send(za.qp, &wr, &bad), 0);
		CHECK(zc_arrived(zb.rcq, 200 + k, len, "SEND", zb.buf, za.buf, len));
		CHECK(zc_arrived(za.scq, 300 + k, 0, "SEND", NULL, NULL, len));

		/* READ: droce1's responses into two SGEs of droce0's */
		zc_fill(zb.buf, len, k + 100);
		memset(za.buf, 0xee, ZC_BUF);
		zc_sges(sge, 2, za.buf, len, za.mr);
		wr.wr_id = 400 + k;
		wr.num_sge = 2;
		wr.opcode = IBV_WR_RDMA_READ;
		TEST_ASSERT_EQ(ibv_post_send(za.qp, &wr, &bad), 0);
		CHECK(zc_arrived(za.scq, 400 + k, len, "READ", za.buf, zb.buf, len));

		want0 += direct ? 0 : 2 * zc_frames(len, min);
		dwant0 += direct ? 2 * zc_frames(len, 1) : 0;	/* WRITE, SEND */
		dwant1 += direct ? zc_frames(len, 1) : 0;	/* READ responses */
	}
	zc0 = dev_xstat("droce0", "tx_zcopy");
	zc1 = dev_xstat("droce1", "tx_zcopy");
	d0 = dev_xstat("droce0", "tx_direct");
	d1 = dev_xstat("droce1", "tx_direct");
	printf("# tx_direct droce0 %" PRIu64 " (%" PRIu64 " wanted), droce1 %" PRIu64 " (%" PRIu64
	       ")\n", d0, dwant0, d1, dwant1);
	printf("# tx_zcopy droce0 %" PRIu64 " (%" PRIu64 " wanted), droce1 %" PRIu64 " (%" PRIu64
	       "); copied at a flush %" PRIu64 ", %" PRIu64 "\n", zc0, want0, zc1, want1,
	       dev_xstat("droce0", "tx_zcopy_copied"), dev_xstat("droce1", "tx_zcopy_copied"));
	printf("# droce0: tx_pkts %" PRIu64 ", resends %" PRIu64 " early %" PRIu64 "; droce1: "
	       "tx_pkts %" PRIu64 ", resends %" PRIu64 " early %" PRIu64 "\n",
	       dev_xstat("droce0", "tx_pkts"), dev_xstat("droce0", "retransmits"),
	       dev_xstat("droce0", "fast_retransmits"), dev_xstat("droce1", "tx_pkts"),
	       dev_xstat("droce1", "retransmits"), dev_xstat("droce1", "fast_retransmits"));
	TEST_ASSERT_EQ(dev_xstat("droce0", "rx_drop_bad_icrc"), 0);
	TEST_ASSERT_EQ(dev_xstat("droce1", "rx_drop_bad_icrc"), 0);
	/* exactly, unless something was resent (a loaded machine): at least */
	if (dev_xstat("droce0", "retransmits") + dev_xstat("droce0", "fast_retransmits") +
	    dev_xstat("droce1", "retransmits") + dev_xstat("droce1", "fast_retransmits") == 0) {
		TEST_ASSERT_EQ(zc0, want0);
		TEST_ASSERT_EQ(zc1, want1);
		/* and the ACKs: every frame but droce0's READ requests */
		if (direct) {
			TEST_ASSERT_EQ(d0, dev_xstat("droce0", "tx_pkts") - RTE_DIM(sizes) -
					   dev_xstat("droce0", "tx_arp"));
			TEST_ASSERT_EQ(d1, dev_xstat("droce1", "tx_pkts") -
					   dev_xstat("droce1", "tx_arp"));
		}
	}
	TEST_ASSERT(d0 >= dwant0 && d1 >= dwant1 + (direct ? RTE_DIM(sizes) * 2 : 0),
		    "data frames and ACKs built in the ring's slots");
	/*
	 * Frames taken from the slots without an mbuf: droce0 every READ
	 * response and at least the ACK of each WRITE and SEND; droce1 every
	 * WRITE frame and READ request (a big SEND's frames, and those the
	 * port's burst takes after one, go in mbufs)
	 */
	printf("# rx_direct droce0 %" PRIu64 ", droce1 %" PRIu64 "\n",
	       dev_xstat("droce0", "rx_direct"), dev_xstat("droce1", "rx_direct"));
	if (direct) {
		TEST_ASSERT(dev_xstat("droce0", "rx_direct") >= dwant1 + RTE_DIM(sizes) * 2,
			    "READ responses and ACKs taken in place");
		TEST_ASSERT(dev_xstat("droce1", "rx_direct") >= dwant0 / 2 + RTE_DIM(sizes),
			    "WRITE frames and READ requests taken in place");
	} else {
		TEST_ASSERT(d0 == 0 && d1 == 0, "direct=0: no frame built in a slot");
		TEST_ASSERT(dev_xstat("droce0", "rx_direct") == 0 &&
			    dev_xstat("droce1", "rx_direct") == 0, "direct=0: every frame in an mbuf");
	}
	TEST_ASSERT(zc0 >= want0, "droce0's WRITE and SEND frames went without a copy");
	TEST_ASSERT_EQ(zc1, 0);		/* READ responses: copied */
	if (min == 0)
		TEST_ASSERT_EQ(zc0, 0);
	return TEST_SUCCESS;
}

/*
 * READs of memory the responder's application keeps changing (as a peer
 * may READ memory its owner writes at any time): each response carries the
 * bytes its ICRC was summed over, so none is dropped and every READ
 * completes, zcopy=1 on both ends.
 */
static volatile bool scribble_stop;

static void *
scribble(void *arg)
{
	volatile uint8_t *b = arg;

	for (uint32_t i = 0; !scribble_stop; i++)
		b[(i * 4099u) % ZC_BUF]++;
	return NULL;
}

static int
test_zcopy_read_of_changing_memory(void)
{
	uint64_t drops0;
	pthread_t th;
	int ok = 0;

	CHECK(zc_setup(",zcopy=1"));
	drops0 = dev_xstat("droce0", "rx_drop_bad_icrc");
	scribble_stop = false;
	TEST_ASSERT_EQ(pthread_create(&th, NULL, scribble, zb.buf), 0);
	for (int k = 0; k < 50; k++) {
		struct ibv_sge sge[2];
		struct ibv_send_wr wr = { .wr_id = 500 + (uint64_t)k, .sg_list = sge, .num_sge = 2,
					  .opcode = IBV_WR_RDMA_READ,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		zc_sges(sge, 2, za.buf, ZC_BUF / 2, za.mr);
		wr.wr.rdma.remote_addr = (uintptr_t)zb.buf;
		wr.wr.rdma.rkey = zb.mr->rkey;
		if (ibv_post_send(za.qp, &wr, &bad) != 0 ||
		    zc_arrived(za.scq, wr.wr_id, ZC_BUF / 2, "READ", NULL, NULL, 0) != TEST_SUCCESS) {
			fprintf(stderr, "  READ %d did not complete\n", k);
			break;
		}
		ok++;
	}
	scribble_stop = true;
	pthread_join(th, NULL);
	printf("# %d READs of 1 MiB of changing memory; ICRC drops %" PRIu64 ", resends %" PRIu64
	       "\n", ok, dev_xstat("droce0", "rx_drop_bad_icrc") - drops0,
	       dev_xstat("droce0", "retransmits"));
	TEST_ASSERT_EQ(ok, 50);
	TEST_ASSERT_EQ(dev_xstat("droce0", "rx_drop_bad_icrc"), drops0);
	TEST_ASSERT_EQ(dev_xstat("droce1", "tx_zcopy"), 0);
	return TEST_SUCCESS;
}

/* zcopy=auto, on net_shm through mbufs (direct=0): messages of DROCE_ZCOPY_MIN bytes and more */
static int
test_zcopy_auto_payloads_arrive(void)
{
	return zc_run("", DROCE_ZCOPY_MIN, false);
}

/* zcopy=1, direct=0: every message, the 1000-byte ones too */
static int
test_zcopy_every_payload_arrives(void)
{
	return zc_run(",zcopy=1", 1, false);
}

/* zcopy=0, direct=0: every payload copied into its frame */
static int
test_zcopy_off_payloads_copied(void)
{
	return zc_run(",zcopy=0", 0, false);
}

/*
 * net_shm's slots (the default): every data frame built in one, whatever
 * zcopy= says, its payload gathered from the SGEs and summed in one pass,
 * and every byte arrives
 */
static int
test_direct_payloads_arrive(void)
{
	return zc_run(",zcopy=1", 0, true);
}

static uint64_t cb_rx, cb_tx;

/* burst callbacks that count the frames into *@arg */
static uint16_t
count_rx(uint16_t port __rte_unused, uint16_t qid __rte_unused, struct rte_mbuf **pkts __rte_unused,
	 uint16_t n, uint16_t max __rte_unused, void *arg)
{
	*(uint64_t *)arg += n;
	return n;
}

static uint16_t
count_tx(uint16_t port __rte_unused, uint16_t qid __rte_unused, struct rte_mbuf **pkts __rte_unused,
	 uint16_t n, void *arg)
{
	*(uint64_t *)arg += n;
	return n;
}

/* An 8 KiB WRITE from droce0 to droce1 (zc_setup), its bytes checked. */
static int
zc_write(uint64_t wr_id)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	zc_fill(za.buf, 8192, (uint32_t)wr_id);
	memset(zb.buf, 0xee, ZC_BUF);
	zc_sges(&sge, 1, za.buf, 8192, za.mr);
	wr.wr.rdma.remote_addr = (uintptr_t)zb.buf;
	wr.wr.rdma.rkey = zb.mr->rkey;
	TEST_ASSERT_EQ(ibv_post_send(za.qp, &wr, &bad), 0);
	return zc_arrived(za.scq, wr_id, 0, "WRITE", zb.buf, za.buf, 8192);
}

/*
 * Callbacks on the port's bursts (dpdk-dumpcap's, latency statistics')
 * see every frame: while droce0's port has a tx callback and droce1's an
 * rx callback, neither builds nor reads a frame in the slots; once they
 * are gone, both do again
 */
static int
test_direct_yields_to_burst_callbacks(void)
{
	const struct rte_eth_rxtx_callback *rx, *tx;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint64_t d0, r1;
	uint16_t pa, pb;

	CHECK(zc_setup(""));
	snprintf(name, sizeof(name), "net_shm_c%da", case_no);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name(name, &pa), 0);
	snprintf(name, sizeof(name), "net_shm_c%db", case_no);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name(name, &pb), 0);
	/* (a burst the port takes after an ARP, ahead of the first frames, is in mbufs) */
	for (uint64_t k = 1; k <= 10 && (dev_xstat("droce0", "tx_direct") == 0 ||
					 dev_xstat("droce1", "rx_direct") == 0); k++)
		CHECK(zc_write(k));
	d0 = dev_xstat("droce0", "tx_direct");
	r1 = dev_xstat("droce1", "rx_direct");
	TEST_ASSERT(d0 > 0 && r1 > 0, "frames in the slots before the callbacks");

	cb_rx = cb_tx = 0;
	tx = rte_eth_add_tx_callback(pa, 0, count_tx, &cb_tx);
	rx = rte_eth_add_rx_callback(pb, 0, count_rx, &cb_rx);
	TEST_ASSERT(tx != NULL && rx != NULL, "burst callbacks");
	CHECK(zc_write(20));
	printf("# with callbacks: tx %" PRIu64 ", rx %" PRIu64 " frames seen\n", cb_tx, cb_rx);
	TEST_ASSERT(cb_tx >= 2 && cb_rx >= 2, "the WRITE's frames through the bursts");
	TEST_ASSERT_EQ(dev_xstat("droce0", "tx_direct"), d0);
	TEST_ASSERT_EQ(dev_xstat("droce1", "rx_direct"), r1);

	/* removed (one thread moves both devices: neither callback is running) */
	TEST_ASSERT_EQ(rte_eth_remove_tx_callback(pa, 0, tx), 0);
	TEST_ASSERT_EQ(rte_eth_remove_rx_callback(pb, 0, rx), 0);
	cb_rx = cb_tx = 0;
	CHECK(zc_write(30));
	TEST_ASSERT(dev_xstat("droce0", "tx_direct") > d0, "droce0 builds in the slots again");
	TEST_ASSERT(dev_xstat("droce1", "rx_direct") > r1, "droce1 reads in place again");
	TEST_ASSERT(cb_tx == 0 && cb_rx == 0, "callbacks gone");
	return TEST_SUCCESS;
}

/* @f into raw port @b, towards droce0 (one mbuf of big_pool). */
static int
raw_send(uint16_t b, const struct frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(big_pool);
	uint8_t *p = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, f->len) : NULL;

	TEST_ASSERT(p != NULL, "an mbuf of %u bytes", f->len);
	memcpy(p, f->b, f->len);
	TEST_ASSERT_EQ(rte_eth_tx_burst(b, 0, &m, 1), 1);
	return TEST_SUCCESS;
}

/* droce0's counter @name moves past @from within 2 s of inline progress (polls of D.cq). */
static bool
droce_counts(const char *name, uint64_t from)
{
	struct ibv_wc wc;

	for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < 2000;) {
		ibv_poll_cq(D.cq, 1, &wc);
		if (droce_xstat(name) > from)
			return true;
	}
	return false;
}

/*
 * No RoCE frame from droce0 on raw port @b, and no completion, for @ms
 * milliseconds (droce0 kept moving: its CQ polled). ARP is let by.
 */
static bool
raw_quiet(uint16_t b, uint64_t ms)
{
	for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < ms;) {
		struct rte_mbuf *m;

		if (ibv_poll_cq(D.cq, 1, &(struct ibv_wc){ 0 }) != 0)
			return false;
		if (rte_eth_rx_burst(b, 0, &m, 1) == 1) {
			struct frame_info fi;
			const char *err = frame_decode(rte_pktmbuf_mtod(m, uint8_t *),
						       rte_pktmbuf_pkt_len(m), &fi);
			bool arp = err == NULL && fi.arp;

			rte_pktmbuf_free(m);
			if (!arp)
				return false;
		}
	}
	return true;
}

/*
 * A 2000-byte RDMA WRITE from the raw port, taken from its slot in place
 * (roce_rx_shm: its headers copied, its payload summed as it is placed from
 * the slot, roce_pkt_place_checked):
 *  - with one payload byte changed after its ICRC was computed, it is
 *    dropped as a bad ICRC: no ACK, and nothing past the range its RETH
 *    names is written, nor the message's last byte, which an application
 *    may poll (the rest of the range may hold its bytes: a WRITE's bytes
 *    are the application's only when it completes);
 *  - the same with an R_Key droce0 does not know: still only a bad ICRC,
 *    not a remote access error (no NAK, the QP stays in RTS);
 *  - whole, its bytes land in the MR and droce0 acknowledges it.
 * All go through the in-place path (rx_direct). With @imm, an RDMA WRITE with
 * immediate: the dropped ones complete nothing; the whole one completes the
 * receive posted with its immediate.
 */
static int
write_in_place_case(bool imm)
{
	static struct frame f, g, h;
	const struct frame_ends ends = {
		.src_mac = { { 0x02, 0, 0, 0, 0, 0x02 } }, .dst_mac = { { 0x02, 0, 0, 0, 0, 0x01 } },
		.src_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 2)), .dst_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 1)),
		.sport = 0xc000,
	};
	union ibv_gid gid = { 0 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	uint8_t pay[2000];
	struct ext reth;
	const uint8_t op = imm ? IBV_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				 IBV_OPCODE_RC_RDMA_WRITE_ONLY;
	const uint32_t immv = RTE_BE32(0x1234abcd);
	uint64_t icrc0, direct0;
	uint16_t a, b;

	CHECK(droce_on_raw(&a, &b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	gid.raw[10] = gid.raw[11] = 0xff;
	gid.raw[12] = 10;
	gid.raw[15] = 2;
	D.qp[0] = dqp_new(0, &gid);
	TEST_ASSERT(D.qp[0] != NULL, "QP");
	if (imm) {
		struct ibv_sge sge = { (uintptr_t)D.buf + 8192, 64, D.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 }, *bad;

		TEST_ASSERT_EQ(ibv_post_recv(D.qp[0], &wr, &bad), 0);
	}
	for (uint32_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 7 + 3);
	TEST_ASSERT(pay[sizeof(pay) - 1] != 0x5a, "a last byte that shows");
	reth = ext_reth((uintptr_t)D.buf + 64, D.mr->rkey, sizeof(pay));
	if (imm)
		reth = ext_cat(reth, ext_imm(immv));
	frame_build(&f, &ends, op, D.qp[0]->qp_num, 0x000100u, &reth, pay, sizeof(pay));
	TEST_ASSERT(f.len > 256, "bigger than the queue's buffer: read in place");
	reth = ext_reth((uintptr_t)D.buf + 64, D.mr->rkey ^ 0x100, sizeof(pay));
	if (imm)
		reth = ext_cat(reth, ext_imm(immv));
	frame_build(&h, &ends, op, D.qp[0]->qp_num, 0x000100u, &reth, pay, sizeof(pay));

	g = f;
	g.b[f.len - 1000] ^= 0x10;	/* in the payload, past the headers copied */
	h.b[h.len - 1000] ^= 0x10;
	icrc0 = droce_xstat("rx_drop_bad_icrc");
	direct0 = droce_xstat("rx_direct");
	CHECK(raw_send(b, &g));
	TEST_ASSERT(droce_counts("rx_drop_bad_icrc", icrc0), "the changed WRITE dropped");
	TEST_ASSERT_EQ(droce_xstat("rx_drop_bad_icrc"), icrc0 + 1);
	TEST_ASSERT_EQ(droce_xstat("rx_direct"), direct0 + 1);
	CHECK(raw_send(b, &h));
	TEST_ASSERT(droce_counts("rx_drop_bad_icrc", icrc0 + 1), "the changed WRITE to no MR dropped");
	TEST_ASSERT_EQ(droce_xstat("rx_drop_bad_icrc"), icrc0 + 2);
	TEST_ASSERT_EQ(droce_xstat("rx_direct"), direct0 + 2);
	TEST_ASSERT(raw_quiet(b, 200), "no ACK, NAK or completion for either");
	TEST_ASSERT_EQ(ibv_query_qp(D.qp[0], &qa, IBV_QP_STATE, &ia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_RTS);
	for (uint32_t i = 0; i < 64; i++)
		TEST_ASSERT_EQ(D.buf[i], 0x5a);
	for (uint32_t i = 64 + sizeof(pay) - 1; i < sizeof(pay) + 256; i++)
		TEST_ASSERT_EQ(D.buf[i], 0x5a);

	CHECK(raw_send(b, &f));
	if (imm) {	/* droce_counts() would poll the completion away */
		struct ibv_wc wc = { 0 };
		int n = 0;

		for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < 2000 && n == 0;)
			n = ibv_poll_cq(D.cq, 1, &wc);
		TEST_ASSERT_EQ(n, 1);
		TEST_ASSERT_EQ(droce_xstat("rx_direct"), direct0 + 3);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, 77);
		TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		TEST_ASSERT_EQ(wc.byte_len, sizeof(pay));
		TEST_ASSERT_EQ(wc.imm_data, immv);
	} else {
		TEST_ASSERT(droce_counts("rx_direct", direct0 + 2), "the WRITE taken in place");
	}
	for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < 2000 &&
	     memcmp(D.buf + 64, pay, sizeof(pay)) != 0;)
		ibv_poll_cq(D.cq, 1, &(struct ibv_wc){ 0 });
	TEST_ASSERT(memcmp(D.buf + 64, pay, sizeof(pay)) == 0, "the WRITE's bytes in the MR");
	TEST_ASSERT_EQ(D.buf[63], 0x5a);
	TEST_ASSERT_EQ(D.buf[64 + sizeof(pay)], 0x5a);
	TEST_ASSERT_EQ(droce_xstat("rx_drop_bad_icrc"), icrc0 + 2);
	/* acknowledged: an ACK of PSN 0x100 on the raw port */
	for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < 2000;) {
		struct rte_mbuf *m;

		ibv_poll_cq(D.cq, 1, &(struct ibv_wc){ 0 });
		if (rte_eth_rx_burst(b, 0, &m, 1) == 1) {
			struct frame_info fi;
			const char *err = frame_decode(rte_pktmbuf_mtod(m, uint8_t *),
						       rte_pktmbuf_pkt_len(m), &fi);
			bool ack = err == NULL && !fi.arp && fi.op == IBV_OPCODE_RC_ACKNOWLEDGE;

			if (ack)
				TEST_ASSERT_EQ(fi.psn, 0x000100u);
			rte_pktmbuf_free(m);
			if (ack)
				return TEST_SUCCESS;
		}
	}
	TEST_ASSERT(false, "no ACK from droce0");
	return TEST_FAILED;
}

static int
test_write_in_place_icrc_checked(void)
{
	return write_in_place_case(false);
}

static int
test_write_imm_in_place_icrc_checked(void)
{
	return write_in_place_case(true);
}

/*
 * The next frame port b reads that is not ARP, checked whole (frame_decode:
 * IPv4 checksum, lengths, ICRC) and from droce0 to @dmac with opcode @op,
 * PSN @psn and @paylen bytes of payload, then acknowledged from @dmac. An
 * ARP request for 10.0.0.2 met on the way is answered from @dmac.
 */
static int
raw_expect(uint16_t b, const struct rte_ether_addr *dmac, uint8_t op, uint32_t psn,
	   uint32_t paylen)
{
	for (uint64_t t0 = h_now_ms(); h_now_ms() - t0 < 2000;) {
		struct rte_mbuf *m;
		struct frame_info fi;
		const char *err;

		ibv_poll_cq(D.cq, 1, &(struct ibv_wc){ 0 });
		if (rte_eth_rx_burst(b, 0, &m, 1) == 0)
			continue;
		err = frame_decode(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_pkt_len(m), &fi);
		if (err == NULL && fi.arp) {
			static struct frame r;

			r.len = frame_arp(r.b, NULL, dmac, RTE_ARP_OP_REPLY, dmac,
					  RTE_BE32(RTE_IPV4(10, 0, 0, 2)), RTE_BE32(RTE_IPV4(10, 0, 0, 1)));
			rte_pktmbuf_free(m);
			CHECK(raw_send(b, &r));
			continue;
		}
		TEST_ASSERT(err == NULL, "a frame as a receiver checks it: %s", err);
		TEST_ASSERT(rte_is_same_ether_addr(&fi.eth->dst_addr, dmac), "to the peer's MAC");
		TEST_ASSERT_EQ(fi.op, op);
		TEST_ASSERT_EQ(fi.psn, psn);
		TEST_ASSERT_EQ(fi.paylen, paylen);
		TEST_ASSERT_EQ(fi.dqpn, DQP_PEER_QPN);
		rte_pktmbuf_free(m);
		{
			static struct frame ack;
			const struct frame_ends ends = {
				.src_mac = *dmac, .dst_mac = { { 0x02, 0, 0, 0, 0, 0x01 } },
				.src_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 2)),
				.dst_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 1)), .sport = 0xc000,
			};
			struct ext aeth = ext_aeth(0, 0);

			frame_build(&ack, &ends, IBV_OPCODE_RC_ACKNOWLEDGE, D.qp[0]->qp_num, psn,
				    &aeth, NULL, 0);
			return raw_send(b, &ack);
		}
	}
	TEST_ASSERT(false, "no frame from droce0");
	return TEST_FAILED;
}

/*
 * A connected QP's frames take their Ethernet, IPv4 and UDP headers from
 * the QP's copy (struct roce_txh), on the direct path (@direct) and in
 * mbufs: built once the peer's MAC is known (droce0 asks ARP; port b
 * answers), whole and right for every length (a receiver's checks: IPv4
 * checksum, lengths, ICRC), and built again when the neighbour changes:
 * after a gratuitous ARP with another MAC, the next frames go there.
 * SENDs, SENDs with immediate and WRITEs of several sizes, each the only
 * packet of its message.
 */
static int
headers_follow_neighbour(bool direct)
{
	static const struct rte_ether_addr mac1 = { { 0x02, 0, 0, 0, 0, 0x02 } };
	static const struct rte_ether_addr mac2 = { { 0x02, 0, 0, 0, 0, 0x22 } };
	static const uint32_t lens[] = { 0, 1, 3, 64, 150, 1000 };
	union ibv_gid gid = { 0 };
	uint32_t psn = dqp_psn(0);
	uint64_t direct0;
	uint16_t a, b;

	CHECK(droce_on_raw_neigh(&a, &b, IBV_ACCESS_LOCAL_WRITE, direct ? "" : "direct=0,"));
	gid.raw[10] = gid.raw[11] = 0xff;
	gid.raw[12] = 10;
	gid.raw[15] = 2;
	D.qp[0] = dqp_new(0, &gid);
	TEST_ASSERT(D.qp[0] != NULL, "QP");
	direct0 = droce_xstat("tx_direct");
	for (int round = 0; round < 2; round++) {
		const struct rte_ether_addr *mac = round == 0 ? &mac1 : &mac2;

		if (round == 1) {	/* the peer is back with another MAC */
			static struct frame g;
			uint64_t arp0 = droce_xstat("rx_arp");

			g.len = frame_arp(g.b, NULL, &mac2, RTE_ARP_OP_REQUEST, &mac2,
					  RTE_BE32(RTE_IPV4(10, 0, 0, 2)),
					  RTE_BE32(RTE_IPV4(10, 0, 0, 2)));
			CHECK(raw_send(b, &g));
			/* read by a poll's progress (a post only sends) */
			TEST_ASSERT(droce_counts("rx_arp", arp0), "the gratuitous ARP read");
		}
		for (unsigned int i = 0; i < RTE_DIM(lens); i++) {
			for (int k = 0; k < 3; k++) {
				static const enum ibv_wr_opcode ops[] = {
					IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
				};
				static const uint8_t wire[] = {
					IBV_OPCODE_RC_SEND_ONLY,
					IBV_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
					IBV_OPCODE_RC_RDMA_WRITE_ONLY,
				};
				struct ibv_sge sge = { (uintptr_t)D.buf, lens[i], D.mr->lkey };
				struct ibv_send_wr wr = {
					.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = ops[k],
					.imm_data = htonl(0x1234),
					.wr.rdma = { .remote_addr = 0x10000000ull, .rkey = 0x1234 },
				}, *bad = NULL;

				TEST_ASSERT_EQ(ibv_post_send(D.qp[0], &wr, &bad), 0);
				CHECK(raw_expect(b, mac, wire[k], psn, lens[i]));
				psn = (psn + 1) & 0xffffff;
			}
		}
	}
	/* all but the frames that waited for ARP left on the direct path, if it is on */
	if (direct)
		TEST_ASSERT(droce_xstat("tx_direct") >= direct0 + 2 * 3 * RTE_DIM(lens) - 1,
			    "%" PRIu64 " direct frames", droce_xstat("tx_direct") - direct0);
	else
		TEST_ASSERT_EQ(droce_xstat("tx_direct"), direct0);
	return TEST_SUCCESS;
}

static int
test_direct_headers_follow_neighbour(void)
{
	return headers_follow_neighbour(true);
}

static int
test_mbuf_headers_follow_neighbour(void)
{
	return headers_follow_neighbour(false);
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_frames_both_ways_identical),
	TEST_CASE(test_alone_up_stale_dropped),
	TEST_CASE(test_ring_full_exact_in_order),
	TEST_CASE(test_tag_wraps_every_frame_in_order),
	TEST_CASE(test_third_port_busy_then_takes_side),
	TEST_CASE(test_zombie_holder_side_taken),
	TEST_CASE(test_rx_pool_exhausted_frames_wait),
	TEST_CASE(test_droce_holds_back_when_port_full),
	TEST_CASE(test_zcopy_auto_payloads_arrive),
	TEST_CASE(test_zcopy_every_payload_arrives),
	TEST_CASE(test_direct_payloads_arrive),
	TEST_CASE(test_write_in_place_icrc_checked),
	TEST_CASE(test_write_imm_in_place_icrc_checked),
	TEST_CASE(test_direct_yields_to_burst_callbacks),
	TEST_CASE(test_direct_headers_follow_neighbour),
	TEST_CASE(test_mbuf_headers_follow_neighbour),
	TEST_CASE(test_zcopy_off_payloads_copied),
	TEST_CASE(test_zcopy_read_of_changing_memory),
};

int
main(int argc, char **argv)
{
	int rc;

	if (argc == 3 && strcmp(argv[1], "--hold-side") == 0)
		return hold_side(argv[0], argv[2]);
	if (h_eal_init(argv[0], "ts", "0",
		       (const char *const[]){ "--log-level=pmd.rdma.roce:error",
					      "--log-level=lib.ethdev:warning",
					      "--log-level=pmd.net.shm:error", NULL }))
		return 1;
	big_pool = rte_pktmbuf_pool_create("shm_big", 4095, 256, 0,
					   RTE_PKTMBUF_HEADROOM + FRAME_BUF, rte_socket_id());
	small_pool = rte_pktmbuf_pool_create("shm_small", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					     rte_socket_id());
	if (big_pool == NULL || small_pool == NULL) {
		fprintf(stderr, "cannot create mbuf pools\n");
		return 1;
	}
	rc = DROCE_TEST_MAIN("shm", cases, setup, teardown);
	rte_eal_cleanup();
	return rc;
}
