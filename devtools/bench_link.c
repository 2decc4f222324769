/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_link: the floor of a DPDK port between two processes, with no
 * transport on it. Two processes join one port (net_memif, net_shm, any
 * ethdev) as droce-perf's --server and --client do; the client times
 * frames of the size droce would send for each message (the message plus
 * RoCEv2's 58 bytes: Ethernet, IPv4, UDP, BTH, ICRC), the server answers,
 * and nothing else runs: no headers built or checked, no ICRC, no ACKs,
 * no queues of work requests. What droce-perf measures over the same
 * port, less this, is droce's own cost. Built by meson as
 * build/devtools/bench_link (not installed, not a test);
 * devtools/bench-compare runs it:
 *
 *   bench_link <EAL args> -- --server
 *   bench_link <EAL args> -- lat SIZE[,SIZE...] ITERS
 *   bench_link <EAL args> -- rate SIZE COUNT [DEPTH]
 *
 * lat: a ping-pong of one frame, the server sending each back (timed as
 * droce-perf's send_lat: half a round trip, p50, p99, p99.9, after an
 * untimed tenth). rate: COUNT frames sent as fast as the port takes them,
 * at most DEPTH (128, at least 32) not yet taken by the server, which
 * counts them and returns its count every 32 frames (a window, as
 * droce-perf's send_bw -d keeps); the time from the first send to the
 * server's answer to the last frame. Before either, the client greets the
 * server until it answers, then sends 2048 frames of 1518 bytes back and
 * forth, untimed, so that every buffer of the port has been touched (memif
 * in DPDK 22.11 takes no larger frame; a lat SIZE over 1460 goes over
 * memif as a chain). The client prints one JSON object
 * ({"results": [{"test", "size", "frame", "iters", ...}]}) and tells the
 * server to exit. Both use the port's queue 0 on the lcore EAL gives them.
 * A client that dies instead may take a memif server with it: memif in
 * DPDK 22.11 unmaps the rings from its interrupt thread while a burst reads
 * them (droce's ports guard against that, roce_port.c; this tool does not).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "bench_util.h"

#define RCE_OVERHEAD	58	/* Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4 */
#define ETH_TYPE	0x88b5	/* IEEE local experimental */
#define BURST		32
#define MAX_SIZES	16
#define LINK_WAIT_S	20
#define WARM_FRAMES	1024	/* the rings' size (port_up) */
#define ANSWER_NS	5000000000u	/* the longest wait for an answer */
#define WARM_LEN	1518	/* the largest frame memif takes in DPDK 22.11 */

enum kind { K_HELLO = 'H', K_LAT = 'L', K_RATE = 'R', K_END = 'E', K_QUIT = 'Q', K_CREDIT = 'C' };

/* What follows the Ethernet header of every frame. */
struct msg {
	uint8_t kind;
	uint8_t pad[3];
	uint32_t seq;
	uint64_t count;		/* K_END: frames sent; the answer: frames received */
} __rte_packed;

static uint16_t port;
static struct rte_mempool *mp;

static void __rte_noreturn
die(const char *what)
{
	fprintf(stderr, "bench_link: %s\n", what);
	exit(1);
}

static void
port_up(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_link link;
	uint64_t until;

	if (rte_eth_dev_count_avail() < 1)
		die("no port: give one in the EAL arguments (--vdev=net_memif0,... or net_shm0,...)");
	port = 0;
	mp = rte_pktmbuf_pool_create("bench_link", 8191, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE + 8192, rte_socket_id());
	if (mp == NULL)
		die("no mbuf pool (-m?)");
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, WARM_FRAMES, rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, WARM_FRAMES, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		die("cannot configure and start the port");
	until = bench_now_ns() + (uint64_t)LINK_WAIT_S * 1000000000u;
	do {
		if (bench_now_ns() > until)
			die("the link did not come up: is the other side running?");
		rte_delay_ms(1);
		rte_eth_link_get_nowait(port, &link);
	} while (link.link_status != RTE_ETH_LINK_UP);
}

/* A frame of @len bytes (at least the headers) carrying @kind. */
static struct rte_mbuf *
frame(uint32_t len, uint8_t kind, uint32_t seq, uint64_t count)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eth;
	struct msg *g;

	if (m == NULL)
		die("the mbuf pool ran dry");
	len = RTE_MAX(len, (uint32_t)(sizeof(*eth) + sizeof(*g)));
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)len);
	if (eth == NULL)
		die("frame too long for an mbuf");
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	memset(&eth->src_addr, 0x02, sizeof(eth->src_addr));
	eth->ether_type = rte_cpu_to_be_16(ETH_TYPE);
	g = (struct msg *)(eth + 1);
	g->kind = kind;
	g->seq = seq;
	g->count = count;
	return m;
}

static const struct msg *
msg_of(const struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, const struct msg *, sizeof(struct rte_ether_hdr));
}

static void
send_all(struct rte_mbuf **m, uint16_t n)
{
	uint16_t done = 0;

	while (done < n)
		done += rte_eth_tx_burst(port, 0, m + done, n - done);
}

/* The next frame from the port, waiting at most @ns for it: NULL if none came. */
static struct rte_mbuf *
recv_one(uint64_t ns)
{
	uint64_t t0 = bench_now_ns();
	struct rte_mbuf *m;

	while (rte_eth_rx_burst(port, 0, &m, 1) == 0)
		if (bench_now_ns() - t0 > ns)
			return NULL;
	return m;
}

/*
 * The client's first exchange: a frame sent again until the server sends it
 * back. A port is up at one end before the other's queues take frames
 * (net_shm's link is the segment), and what went before is lost.
 */
static void
hello(void)
{
	for (unsigned int i = 0; i < 10 * LINK_WAIT_S; i++) {
		struct rte_mbuf *m = frame(64, K_HELLO, i, 0);

		send_all(&m, 1);
		while ((m = recv_one(100000000u)) != NULL) {
			bool back = msg_of(m)->kind == K_HELLO && msg_of(m)->seq == i;

			rte_pktmbuf_free(m);
			if (back)
				goto warm;
		}
	}
	die("the server does not answer");
warm:
	/*
	 * Every buffer of the port's rings touched before anything is timed:
	 * memif's are mapped at connection, and the first touch of each page
	 * (a fault, more under a shadow-paging hypervisor) would land in the
	 * figures. Two rings' worth of large frames, one at a time.
	 */
	for (uint32_t i = 0; i < 2 * WARM_FRAMES; i++) {
		struct rte_mbuf *m = frame(WARM_LEN, K_LAT, i, 0);

		send_all(&m, 1);
		do {	/* a greeting answered twice (a slow start) is not the answer */
			rte_pktmbuf_free(m);
			m = recv_one(ANSWER_NS);
			if (m == NULL)
				die("no answer in 5 s (a frame lost?)");
		} while (msg_of(m)->kind != K_LAT || msg_of(m)->seq != i);
		rte_pktmbuf_free(m);
	}
}

static void
serve(void)
{
	struct rte_mbuf *in[BURST], *out[BURST];
	uint64_t got = 0;

	for (;;) {
		uint16_t n = rte_eth_rx_burst(port, 0, in, BURST), k = 0;

		for (uint16_t i = 0; i < n; i++) {
			const struct msg *g = msg_of(in[i]);

			switch (g->kind) {
			case K_HELLO:
			case K_LAT:	/* back as it came */
				out[k++] = in[i];
				continue;
			case K_RATE:
				if (++got % BURST == 0)
					out[k++] = frame(64, K_CREDIT, 0, got);
				break;
			case K_END:
				out[k++] = frame(64, K_END, 0, got);
				got = 0;
				break;
			case K_QUIT:
				send_all(out, k);
				rte_pktmbuf_free_bulk(in + i, n - i);
				return;
			}
			rte_pktmbuf_free(in[i]);
		}
		send_all(out, k);
	}
}

static void
lat(const uint32_t *sizes, unsigned int nsizes, unsigned long iters)
{
	unsigned long warm = iters / 10;
	double *us = malloc(iters * sizeof(*us));

	if (us == NULL)
		die("no memory");
	memset(us, 0xff, iters * sizeof(*us));	/* no page fault in the timed loop */
	printf("{\"results\": [");
	for (unsigned int s = 0; s < nsizes; s++) {
		uint32_t len = sizes[s] + RCE_OVERHEAD;

		for (unsigned long i = 0; i < warm + iters; i++) {
			struct rte_mbuf *m = frame(len, K_LAT, (uint32_t)i, 0);
			uint64_t t0 = bench_now_ns();

			send_all(&m, 1);
			m = recv_one(ANSWER_NS);
			if (m == NULL)
				die("no answer in 5 s (a frame lost?)");
			if (i >= warm)
				us[i - warm] = (double)(bench_now_ns() - t0) / 2e3;
			if (msg_of(m)->seq != (uint32_t)i)
				die("a frame came back out of turn");
			rte_pktmbuf_free(m);
		}
		printf("%s{\"test\": \"send_lat\", \"size\": %u, \"frame\": %u, \"iters\": %lu, ",
		       s ? ", " : "", sizes[s], len, iters);
		bench_print_lat(us, iters);
		printf("}");
	}
	printf("]}\n");
	free(us);
}

static void
rate(uint32_t size, uint64_t count, uint32_t depth)
{
	uint32_t len = size + RCE_OVERHEAD;
	uint64_t sent = 0, taken = 0, got = 0, t0, seen;
	struct rte_mbuf *out[BURST + 1], *in[BURST];
	bool end_sent = false, done = false;
	double s;

	t0 = seen = bench_now_ns();
	while (!done) {
		uint16_t n, k = 0;

		while (k < BURST && sent < count && sent - taken < depth)
			out[k++] = frame(len, K_RATE, (uint32_t)sent++, 0);
		if (sent == count && !end_sent) {
			out[k++] = frame(64, K_END, 0, count);
			end_sent = true;
		}
		send_all(out, k);
		n = rte_eth_rx_burst(port, 0, in, BURST);
		for (uint16_t i = 0; i < n; i++) {
			const struct msg *g = msg_of(in[i]);

			if (g->kind == K_CREDIT)
				taken = RTE_MAX(taken, g->count);
			else if (g->kind == K_END) {
				got = g->count;
				done = true;
			}
		}
		rte_pktmbuf_free_bulk(in, n);
		if (n)
			seen = bench_now_ns();
		else if (bench_now_ns() - seen > ANSWER_NS)
			die("the server stopped answering (a frame lost?)");
	}
	s = (double)(bench_now_ns() - t0) / 1e9;
	printf("{\"results\": [{\"test\": \"send_bw\", \"size\": %u, \"frame\": %u, \"iters\": %" PRIu64
	       ", \"received\": %" PRIu64 ", \"seconds\": %.6f, \"msg_rate_mps\": %.4f}]}\n",
	       size, len, count, got, s, (double)got / s / 1e6);
}

static void __rte_noreturn
usage(void)
{
	fprintf(stderr, "usage: bench_link <EAL args> -- --server\n"
			"       bench_link <EAL args> -- lat SIZE[,SIZE...] ITERS\n"
			"       bench_link <EAL args> -- rate SIZE COUNT [DEPTH]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	uint32_t sizes[MAX_SIZES];
	unsigned int nsizes = 0;
	int n = rte_eal_init(argc, argv);
	char *end;

	if (n < 0)
		die("EAL init failed");
	argc -= n;
	argv += n;
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "--server") == 0) {
		port_up();
		serve();
	} else if (strcmp(argv[1], "lat") == 0 && argc == 4) {
		unsigned long iters = strtoul(argv[3], &end, 0);

		if (*end || iters == 0)
			usage();
		for (char *p = argv[2]; nsizes < MAX_SIZES; p = end + 1) {
			sizes[nsizes++] = (uint32_t)bench_parse_size(p, &end);
			if (sizes[nsizes - 1] > 9000 || (*end && *end != ','))
				usage();
			if (*end == '\0')
				break;
		}
		port_up();
		hello();
		lat(sizes, nsizes, iters);
	} else if (strcmp(argv[1], "rate") == 0 && (argc == 4 || argc == 5)) {
		uint32_t size = (uint32_t)bench_parse_size(argv[2], &end);
		uint64_t count;
		unsigned long depth = 128;

		if (*end || size > 9000)
			usage();
		count = strtoull(argv[3], &end, 0);
		if (*end || count == 0)
			usage();
		if (argc == 5) {
			depth = strtoul(argv[4], &end, 0);
			if (*end || depth < BURST)
				usage();
		}
		port_up();
		hello();
		rate(size, count, (uint32_t)depth);
	} else {
		usage();
	}
	if (strcmp(argv[1], "--server") != 0) {
		struct rte_mbuf *q = frame(64, K_QUIT, 0, 0);

		send_all(&q, 1);
		rte_delay_ms(10);
	}
	rte_eth_dev_stop(port);
	rte_eal_cleanup();
	return 0;
}
