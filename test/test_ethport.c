/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A droce device's own ethdev port (drivers/rdma/roce/roce_ethdev.c).
 *
 * droce0 and droce1 sit on the harness's net_ring pair; droce2 (10.0.0.3)
 * sits on net_ring_c, whose peer net_ring_d the test drives raw, as the
 * wire. droce2's port "droce2" is started with no verbs context open, so
 * only the port itself moves the device:
 *  - frames droce does not consume (UDP to another port, an unknown
 *    Ethertype, ARP about another IP, broadcast) arrive on the port byte for
 *    byte; RoCE and ARP about droce's IP do not; frames to another unicast
 *    MAC only in promiscuous mode, other multicast only in all-multicast;
 *  - frames transmitted on the port arrive on the wire, in order;
 *  - the port's stats count them; its xstats are droce_dev_xstats's names
 *    and values, moving while RC traffic runs between droce0 and droce1
 *    (droce0's port started meanwhile); xstats reset is -ENOTSUP;
 *  - stopped, the port takes nothing and the frames count as drops again;
 *    its ring full, the frames past it are drops too, and its imissed;
 *  - devarg ethport=0 registers no port, removing a device removes its
 *    port, and a droce port cannot carry another droce device.
 *
 * Run with --inline or --lcore.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"

/*
 * The wire's frames cross net_ring, which ThreadSanitizer does not see into:
 * the engine marks the hand-off of the frames it sends and takes (the
 * PMD's roce_mbuf_handoff/takeover), the test does the same on its side.
 */
#ifdef __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define MBUF_TAKE(m)	__tsan_acquire(m)
#define MBUF_GIVE(m)	__tsan_release(m)
#else
#define MBUF_TAKE(m)	RTE_SET_USED(m)
#define MBUF_GIVE(m)	RTE_SET_USED(m)
#endif

#define WAIT_MS		3000	/* for a frame that is due */
#define QUIET_MS	100	/* in which a frame that is not due must not come */

static struct rte_mempool *pool;
static uint16_t wire;		/* net_ring_d: droce2's link partner, driven raw */
static uint16_t port2;		/* droce2's own port */
static struct rte_ether_addr mac2;	/* droce2's MAC, as its port reports it */
static const struct rte_ether_addr wire_mac = {{ 0x02, 0x00, 0x00, 0x00, 0x0d, 0x01 }};

static int
port_start(uint16_t port)
{
	struct rte_eth_conf conf = { 0 };

	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		return -1;
	return 0;
}

/* A frame of @len bytes from @data, into an mbuf of the test's pool. */
static struct rte_mbuf *
mk(const uint8_t *data, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (m != NULL)
		memcpy(rte_pktmbuf_append(m, len), data, len);
	return m;
}

static int
send_on(uint16_t port, const uint8_t *data, uint16_t len)
{
	struct rte_mbuf *m = mk(data, len);

	if (m == NULL)
		return -1;
	MBUF_GIVE(m);
	for (uint64_t t0 = h_now_ms(); rte_eth_tx_burst(port, 0, &m, 1) != 1;)
		if (h_now_ms() - t0 > WAIT_MS) {
			rte_pktmbuf_free(m);
			return -1;
		}
	return 0;
}

/*
 * The next frame on @port within @ms (its bytes into @buf, up to @cap):
 * its length, or -1 if none came. Frames that fail @keep are skipped.
 */
static int
recv_on(uint16_t port, uint8_t *buf, uint16_t cap, int ms, bool (*keep)(const uint8_t *, int))
{
	uint64_t t0 = h_now_ms();

	do {
		struct rte_mbuf *m;

		if (rte_eth_rx_burst(port, 0, &m, 1) == 1) {
			int len;

			MBUF_TAKE(m);
			len = (int)m->pkt_len;

			const void *d = rte_pktmbuf_read(m, 0, RTE_MIN(m->pkt_len, cap), buf);

			if (d != buf)	/* contiguous: not copied */
				memcpy(buf, d, RTE_MIN(m->pkt_len, cap));
			rte_pktmbuf_free(m);
			if (keep == NULL || keep(buf, len))
				return len;
		}
	} while (h_now_ms() - t0 < (uint64_t)ms);
	return -1;
}

/* droce2's own ARP traffic on the wire (its gratuitous announcement) is not what tests wait for. */
static bool
not_arp(const uint8_t *f, int len)
{
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)f;

	return len < RTE_ETHER_HDR_LEN || eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
}

static uint16_t
eth_fill(uint8_t *f, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	 uint16_t type)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;

	eth->dst_addr = *dst;
	eth->src_addr = *src;
	eth->ether_type = rte_cpu_to_be_16(type);
	return RTE_ETHER_HDR_LEN;
}

/* An IPv4/UDP frame of @plen payload bytes (a pattern of @seed). */
static uint16_t
udp_frame(uint8_t *f, const struct rte_ether_addr *dst, uint32_t dip, uint16_t dport,
	  uint16_t plen, uint32_t seed)
{
	uint16_t off = eth_fill(f, dst, &wire_mac, RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + off);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + plen);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 200));
	ip->dst_addr = rte_cpu_to_be_32(dip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(40000);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + plen);
	udp->dgram_cksum = 0;
	h_pattern((uint8_t *)(udp + 1), plen, seed);
	return off + sizeof(*ip) + sizeof(*udp) + plen;
}

static uint16_t
arp_frame(uint8_t *f, uint16_t op, uint32_t tip)
{
	static const struct rte_ether_addr bcast = {{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }};
	uint16_t off = eth_fill(f, &bcast, &wire_mac, RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(f + off);

	memset(arp, 0, sizeof(*arp));
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = wire_mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 200));
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return off + sizeof(*arp);
}

/* @f sent on the wire arrives on droce2's port, byte for byte. */
static int
expect_through(const uint8_t *f, uint16_t len)
{
	uint8_t got[2048];
	int n;

	TEST_ASSERT(send_on(wire, f, len) == 0, "the wire took no frame");
	n = recv_on(port2, got, sizeof(got), WAIT_MS, NULL);
	TEST_ASSERT(n == len, "droce2's port: %d bytes, %u sent", n, len);
	TEST_ASSERT(memcmp(got, f, len) == 0, "droce2's port: the frame differs");
	return 0;
}

/* @f sent on the wire does not reach droce2's port. */
static int
expect_held(const uint8_t *f, uint16_t len)
{
	uint8_t got[2048];
	int n;

	TEST_ASSERT(send_on(wire, f, len) == 0, "the wire took no frame");
	n = recv_on(port2, got, sizeof(got), QUIET_MS, NULL);
	TEST_ASSERT(n < 0, "droce2's port received a %d-byte frame that is droce's or filtered", n);
	return 0;
}

static int
test_rx_frames_droce_does_not_take(void)
{
	static const struct rte_ether_addr other = {{ 0x02, 0x00, 0x00, 0x00, 0x0e, 0x07 }};
	static const struct rte_ether_addr bcast = {{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }};
	static const struct rte_ether_addr mcast = {{ 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }};
	uint64_t not_ip = h_xstat("droce2", "rx_drop_not_ip");
	uint64_t to_eth = h_xstat("droce2", "rx_ethdev");
	struct rte_eth_stats st0, st1;
	uint8_t f[1600], got[2048];
	uint16_t len;
	int n;

	rte_eth_stats_get(port2, &st0);
	/* UDP to droce2's IP, another port; then a full-size one */
	len = udp_frame(f, &mac2, RTE_IPV4(10, 0, 0, 3), 53, 40, 1);
	CHECK(expect_through(f, len));
	len = udp_frame(f, &mac2, RTE_IPV4(10, 0, 0, 3), 9000, 1400, 2);
	CHECK(expect_through(f, len));
	/* a short one: shorter than any RoCE frame */
	len = udp_frame(f, &mac2, RTE_IPV4(10, 0, 0, 3), 7, 1, 3);
	CHECK(expect_through(f, len));
	/* UDP to droce's port 4791, but to another IP on droce2's MAC: the application's */
	len = udp_frame(f, &mac2, RTE_IPV4(10, 0, 0, 77), DROCE_UDP_PORT, 40, 4);
	CHECK(expect_through(f, len));
	/* an Ethertype droce knows nothing of (IEEE local experimental) */
	len = eth_fill(f, &mac2, &wire_mac, 0x88b5);
	h_pattern(f + len, 100, 5);
	len += 100;
	CHECK(expect_through(f, len));
	/* broadcast UDP */
	len = udp_frame(f, &bcast, UINT32_C(0xffffffff), 67, 60, 6);
	CHECK(expect_through(f, len));
	/* ARP about another IP: the application's (droce learns from it what it can) */
	len = arp_frame(f, RTE_ARP_OP_REQUEST, RTE_IPV4(10, 0, 0, 99));
	CHECK(expect_through(f, len));
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_ethdev"), to_eth + 7);
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_drop_not_ip"), not_ip);
	rte_eth_stats_get(port2, &st1);
	TEST_ASSERT_EQ(st1.ipackets - st0.ipackets, 7);

	/* ARP about droce2's IP is droce's: it answers on the wire, the port sees nothing */
	len = arp_frame(f, RTE_ARP_OP_REQUEST, RTE_IPV4(10, 0, 0, 3));
	CHECK(expect_held(f, len));
	{
		const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(got + RTE_ETHER_HDR_LEN);
		uint64_t t0 = h_now_ms();

		/* droce2's progress is the port's: poll it while waiting for the reply */
		do {
			n = recv_on(wire, got, sizeof(got), 1, NULL);
			if (n < 0)
				recv_on(port2, f, sizeof(f), 1, NULL);
		} while ((n < (int)(RTE_ETHER_HDR_LEN + sizeof(*arp)) ||
			  arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REPLY)) &&
			 h_now_ms() - t0 < WAIT_MS);
		TEST_ASSERT(n >= (int)(RTE_ETHER_HDR_LEN + sizeof(*arp)) &&
			    arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY), "no ARP reply from droce2");
		TEST_ASSERT(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &mac2), "ARP reply: wrong MAC");
	}

	/* to another unicast MAC: only in promiscuous mode */
	len = udp_frame(f, &other, RTE_IPV4(10, 0, 0, 50), 53, 40, 7);
	CHECK(expect_held(f, len));
	TEST_ASSERT_EQ(rte_eth_promiscuous_enable(port2), 0);
	CHECK(expect_through(f, len));
	TEST_ASSERT_EQ(rte_eth_promiscuous_disable(port2), 0);
	CHECK(expect_held(f, len));
	/* multicast other than broadcast: only in all-multicast mode */
	/* 239.1.2.3 (RTE_IPV4 shifts an int: past 127.x it overflows) */
	len = udp_frame(f, &mcast, UINT32_C(0xef010203), 5000, 40, 8);
	CHECK(expect_held(f, len));
	TEST_ASSERT_EQ(rte_eth_allmulticast_enable(port2), 0);
	CHECK(expect_through(f, len));
	TEST_ASSERT_EQ(rte_eth_allmulticast_disable(port2), 0);
	return TEST_SUCCESS;
}

static int
test_tx_reaches_the_wire(void)
{
	enum { N = 3000 };
	struct rte_eth_stats st0, st1;
	uint64_t tx0 = h_xstat("droce2", "tx_ethdev");
	uint8_t f[1600], got[2048];
	uint16_t len;
	uint64_t bytes = 0;

	rte_eth_stats_get(port2, &st0);
	/* one frame of an unknown Ethertype, then a stream, in order */
	len = eth_fill(f, &wire_mac, &mac2, 0x88b5);
	h_pattern(f + len, 200, 11);
	len += 200;
	TEST_ASSERT(send_on(port2, f, len) == 0, "droce2's port took no frame");
	bytes += len;
	TEST_ASSERT_EQ(recv_on(wire, got, sizeof(got), WAIT_MS, not_arp), len);
	TEST_ASSERT(memcmp(got, f, len) == 0, "the wire: the frame differs");
	/* bursts of up to 64, more than the engine stages at once, the wire drained meanwhile */
	{
		struct rte_mbuf *b[64];
		uint32_t next = 0, seen = 0;
		uint64_t t0 = h_now_ms();

		while (seen < N && h_now_ms() - t0 < 10 * WAIT_MS) {
			uint16_t k = 0, sent;
			int n;

			while (next + k < N && k < RTE_DIM(b)) {
				len = udp_frame(f, &wire_mac, RTE_IPV4(10, 0, 0, 200), 6000, 64 + (next + k) % 1000,
						100 + next + k);
				memcpy(f + RTE_ETHER_ADDR_LEN, &mac2, RTE_ETHER_ADDR_LEN);
				b[k] = mk(f, len);
				TEST_ASSERT(b[k] != NULL, "no mbuf");
				bytes += len;
				k++;
			}
			for (uint16_t i = 0; i < k; i++)
				MBUF_GIVE(b[i]);
			sent = k ? rte_eth_tx_burst(port2, 0, b, k) : 0;
			for (uint16_t i = sent; i < k; i++) {	/* sent again in the next round */
				bytes -= b[i]->pkt_len;
				rte_pktmbuf_free(b[i]);
			}
			next += sent;
			while ((n = recv_on(wire, got, sizeof(got), 0, not_arp)) >= 0) {
				uint16_t want = udp_frame(f, &wire_mac, RTE_IPV4(10, 0, 0, 200), 6000,
							  64 + seen % 1000, 100 + seen);

				memcpy(f + RTE_ETHER_ADDR_LEN, &mac2, RTE_ETHER_ADDR_LEN);
				TEST_ASSERT_EQ(n, want);
				TEST_ASSERT(memcmp(got, f, want) == 0, "the wire: frame %u differs", seen);
				seen++;
			}
			if (k == 0 || sent < k)
				recv_on(port2, got, sizeof(got), 0, NULL);	/* inline progress */
		}
		TEST_ASSERT_EQ(seen, N);
	}
	rte_eth_stats_get(port2, &st1);
	TEST_ASSERT_EQ(st1.opackets - st0.opackets, N + 1);
	TEST_ASSERT_EQ(st1.obytes - st0.obytes, bytes);
	TEST_ASSERT_EQ(h_xstat("droce2", "tx_ethdev"), tx0 + N + 1);
	return TEST_SUCCESS;
}

static int
test_info_and_link(void)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_eth_link link;
	uint16_t owned, mtu;

	TEST_ASSERT_EQ(rte_eth_dev_info_get(port2, &info), 0);
	TEST_ASSERT_EQ(info.max_rx_queues, 1);
	TEST_ASSERT_EQ(info.max_tx_queues, 1);
	TEST_ASSERT_EQ(info.max_mtu, 1500);	/* droce2's mtu= */
	TEST_ASSERT_EQ(rte_eth_macaddr_get(port2, &mac), 0);
	/* droce2's MAC, the one it answers ARP with (test_rx_frames_droce_does_not_take) */
	TEST_ASSERT(rte_is_valid_assigned_ether_addr(&mac), "the port's MAC is not a unicast one");
	TEST_ASSERT_EQ(rte_eth_dev_get_mtu(port2, &mtu), 0);
	TEST_ASSERT(mtu <= 1500, "mtu %u", mtu);
	TEST_ASSERT_EQ(rte_eth_dev_set_mtu(port2, 9000), -EINVAL);
	TEST_ASSERT_EQ(rte_eth_link_get_nowait(port2, &link), 0);
	TEST_ASSERT_EQ(link.link_status, RTE_ETH_LINK_UP);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("net_ring_c", &owned), 0);
	TEST_ASSERT(owned != port2, "the owned port is not the droce port");
	/* a droce port carries no droce device; the owned one is taken */
	TEST_ASSERT_EQ(droce_dev_create("droce9", "ethdev=droce2,ip=10.0.0.9"), -EINVAL);
	TEST_ASSERT_EQ(droce_dev_create("droce9", "ethdev=net_ring_c,ip=10.0.0.9"), -EBUSY);
	return TEST_SUCCESS;
}

static int
find_name(const struct rte_eth_xstat_name *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * droce0's port: its xstats are droce_dev_xstats's, each read between two
 * reads of droce_dev_xstats (the engine counts on meanwhile).
 */
static int
xstats_agree(uint16_t port, const char *dev, uint64_t *tx_pkts)
{
	enum { MAXN = 256 };
	static struct rte_eth_xstat_name names[MAXN];
	static struct rte_eth_xstat xs[MAXN];
	const char *dn[MAXN];
	uint64_t before[MAXN], after[MAXN];
	int nd, n, k;

	nd = droce_dev_xstats(dev, dn, before, MAXN);
	TEST_ASSERT(nd > 0 && nd < MAXN, "droce_dev_xstats: %d", nd);
	n = rte_eth_xstats_get_names(port, names, MAXN);
	TEST_ASSERT(n >= nd && n < MAXN, "rte_eth_xstats_get_names: %d (%d droce counters)", n, nd);
	TEST_ASSERT_EQ(rte_eth_xstats_get(port, xs, MAXN), n);
	TEST_ASSERT_EQ(droce_dev_xstats(dev, dn, after, MAXN), nd);
	for (int i = 0; i < nd; i++) {
		k = find_name(names, n, dn[i]);
		TEST_ASSERT(k >= 0, "%s missing from the port's xstats", dn[i]);
		TEST_ASSERT(xs[k].value >= before[i] && xs[k].value <= after[i],
			    "%s: port %" PRIu64 ", droce %" PRIu64 "..%" PRIu64, dn[i], xs[k].value,
			    before[i], after[i]);
		if (strcmp(dn[i], "tx_pkts") == 0)
			*tx_pkts = xs[k].value;
	}
	/* the ethdev's own basic counters come first, then exactly droce's */
	TEST_ASSERT_EQ(find_name(names, n, dn[0]), n - nd);
	return 0;
}

static int
test_xstats_are_droce_counters(void)
{
	enum { MSGS = 64, LEN = 4096 };
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 64, .max_recv_wr = 64,
			       .max_send_sge = 1, .max_recv_sge = 1 };
	struct h_side a, b;
	struct ibv_wc wc[MSGS];
	uint64_t t0 = 0, t1 = 0, t2 = 0;
	uint16_t port0;

	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("droce0", &port0), 0);
	/* started alongside the verbs contexts: both keep the device moving */
	TEST_ASSERT_EQ(port_start(port0), 0);
	CHECK(xstats_agree(port0, "droce0", &t0));
	TEST_ASSERT_EQ(h_pair(&a, &b, &o), 0);
	for (int i = 0; i < MSGS; i++)
		TEST_ASSERT_EQ(h_post_recv(&b, (size_t)i * LEN, LEN, i), 0);
	for (int i = 0; i < MSGS; i++) {
		h_pattern(a.buf + (size_t)i * LEN, LEN, i);
		TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, (size_t)i * LEN, LEN, i, IBV_SEND_SIGNALED), 0);
		/* while the stream runs */
		if (i == MSGS / 2)
			CHECK(xstats_agree(port0, "droce0", &t1));
	}
	TEST_ASSERT_EQ(h_poll(a.scq, wc, MSGS, 10000), MSGS);
	for (int i = 0; i < MSGS; i++)
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, MSGS, 10000), MSGS);
	for (int i = 0; i < MSGS; i++)
		TEST_ASSERT(memcmp(b.buf + (size_t)wc[i].wr_id * LEN, a.buf + (size_t)wc[i].wr_id * LEN,
				   LEN) == 0, "message %d differs", i);
	CHECK(xstats_agree(port0, "droce0", &t2));
	/* 4 KiB SENDs of a 4200-byte MTU device: a packet each at least */
	TEST_ASSERT(t2 >= t0 + MSGS, "tx_pkts %" PRIu64 " -> %" PRIu64, t0, t2);
	TEST_ASSERT(t1 >= t0 && t2 >= t1, "tx_pkts went back");
	TEST_ASSERT_EQ(rte_eth_xstats_reset(port0), -ENOTSUP);
	h_pair_destroy(&a, &b);
	TEST_ASSERT_EQ(rte_eth_dev_stop(port0), 0);
	return TEST_SUCCESS;
}

/* A verbs context on droce2: with a CQ polled, inline progress without the port's bursts. */
static struct ibv_context *
open_droce2(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int nd;

	list = ibv_get_device_list(&nd);
	for (int i = 0; list != NULL && i < nd; i++)
		if (strcmp(ibv_get_device_name(list[i]), "droce2") == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Stopped, the port takes nothing: the frame is a drop again, counted as before. */
static int
test_stopped_port_drops(void)
{
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	uint8_t f[256];
	uint64_t not_ip, to_eth, t0;
	uint16_t len;

	TEST_ASSERT_EQ(rte_eth_dev_stop(port2), 0);
	/* with the port stopped, a verbs context keeps droce2 moving */
	ctx = open_droce2();
	TEST_ASSERT(ctx != NULL, "cannot open droce2");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq");
	not_ip = h_xstat("droce2", "rx_drop_not_ip");
	to_eth = h_xstat("droce2", "rx_ethdev");
	len = eth_fill(f, &mac2, &wire_mac, 0x88b5);
	h_pattern(f + len, 60, 21);
	len += 60;
	TEST_ASSERT(send_on(wire, f, len) == 0, "the wire took no frame");
	t0 = h_now_ms();
	while (h_xstat("droce2", "rx_drop_not_ip") == not_ip && h_now_ms() - t0 < WAIT_MS)
		ibv_poll_cq(cq, 1, &wc);	/* inline progress */
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_drop_not_ip"), not_ip + 1);
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_ethdev"), to_eth);
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	TEST_ASSERT_EQ(ibv_close_device(ctx), 0);
	/* started again, it works again */
	TEST_ASSERT_EQ(rte_eth_dev_start(port2), 0);
	CHECK(expect_through(f, len));
	return TEST_SUCCESS;
}

/*
 * More frames than the port's rx ring holds, while the application does not
 * receive: the ring takes 1024, the rest are drops counted by cause and in
 * the port's imissed; then the 1024 come out in order.
 */
static int
test_rx_ring_full(void)
{
	enum { N = 1500, RING = 1024 };
	struct ibv_context *ctx = open_droce2();
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct rte_eth_stats st0, st1;
	uint64_t not_ip = h_xstat("droce2", "rx_drop_not_ip");
	uint64_t to_eth = h_xstat("droce2", "rx_ethdev");
	uint8_t f[256], got[2048];
	uint16_t len = 0;
	uint64_t t0;
	uint32_t seq;

	TEST_ASSERT(ctx != NULL, "cannot open droce2");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq");
	rte_eth_stats_get(port2, &st0);
	for (seq = 0; seq < N; seq++) {
		len = eth_fill(f, &mac2, &wire_mac, 0x88b5);
		memcpy(f + len, &seq, sizeof(seq));
		len += 60;
		TEST_ASSERT(send_on(wire, f, len) == 0, "the wire took no frame %u", seq);
	}
	t0 = h_now_ms();
	while (h_xstat("droce2", "rx_ethdev") - to_eth + h_xstat("droce2", "rx_drop_not_ip") - not_ip < N &&
	       h_now_ms() - t0 < 10 * WAIT_MS)
		ibv_poll_cq(cq, 1, &wc);	/* inline progress; the port is not polled */
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_ethdev") - to_eth, RING);
	TEST_ASSERT_EQ(h_xstat("droce2", "rx_drop_not_ip") - not_ip, N - RING);
	rte_eth_stats_get(port2, &st1);
	TEST_ASSERT_EQ(st1.imissed - st0.imissed, N - RING);
	for (seq = 0; seq < RING; seq++) {
		uint32_t s;

		TEST_ASSERT_EQ(recv_on(port2, got, sizeof(got), WAIT_MS, NULL), len);
		memcpy(&s, got + RTE_ETHER_HDR_LEN, sizeof(s));
		TEST_ASSERT_EQ(s, seq);
	}
	TEST_ASSERT(recv_on(port2, got, sizeof(got), QUIET_MS, NULL) < 0, "a frame past the ring's 1024");
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	TEST_ASSERT_EQ(ibv_close_device(ctx), 0);
	return TEST_SUCCESS;
}

static int
test_devarg_and_removal(void)
{
	uint16_t p;

	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_e", "net_ring_f"), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce3", "ethdev=net_ring_e,ip=10.0.0.4,ethport=0"), 0);
	TEST_ASSERT(rte_eth_dev_get_port_by_name("droce3", &p) != 0, "ethport=0 registered a port");
	TEST_ASSERT_EQ(droce_dev_create("droce4", "ethdev=net_ring_f,ip=10.0.0.5,ethport=2"), -EINVAL);
	TEST_ASSERT_EQ(droce_dev_create("droce4", "ethdev=net_ring_f,ip=10.0.0.5"), 0);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("droce4", &p), 0);
	/* removed started: the port stops and goes with the device */
	TEST_ASSERT_EQ(port_start(p), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce4"), 0);
	TEST_ASSERT(rte_eth_dev_get_port_by_name("droce4", &p) != 0, "droce4's port outlived it");
	/* closed by the application first: the device's removal still works */
	TEST_ASSERT_EQ(droce_dev_create("droce4", "ethdev=net_ring_f,ip=10.0.0.5"), 0);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("droce4", &p), 0);
	TEST_ASSERT_EQ(port_start(p), 0);
	TEST_ASSERT_EQ(rte_eth_dev_stop(p), 0);
	TEST_ASSERT_EQ(rte_eth_dev_close(p), 0);
	TEST_ASSERT(rte_eth_dev_get_port_by_name("droce4", &p) != 0, "closed, droce4's port stayed");
	TEST_ASSERT_EQ(droce_dev_destroy("droce4"), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce3"), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_info_and_link),
	TEST_CASE(test_rx_frames_droce_does_not_take),
	TEST_CASE(test_tx_reaches_the_wire),
	TEST_CASE(test_xstats_are_droce_counters),
	TEST_CASE(test_stopped_port_drops),
	TEST_CASE(test_rx_ring_full),
	TEST_CASE(test_devarg_and_removal),
};

int
main(int argc, char **argv)
{
	if (h_init(argc, argv) != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("ethport_test", 4095, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL || droce_ring_pair_create("net_ring_c", "net_ring_d") != 0 ||
	    droce_dev_create("droce2", "ethdev=net_ring_c,ip=10.0.0.3,mtu=1500") != 0 ||
	    rte_eth_dev_get_port_by_name("net_ring_d", &wire) != 0 ||
	    rte_eth_dev_get_port_by_name("droce2", &port2) != 0 ||
	    port_start(wire) != 0 || port_start(port2) != 0 ||
	    rte_eth_macaddr_get(port2, &mac2) != 0) {
		fprintf(stderr, "droce2 and its wire: setup failed\n");
		return 1;
	}
	return DROCE_TEST_MAIN("ethport", cases, NULL, NULL);
}
