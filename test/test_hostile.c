/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer. droce0 sits on one end of a net_ring pair; the test owns
 * the other end as a raw ethdev port, so it can put any frame on the wire
 * towards droce0 and read everything droce0 sends back. droce0's QPs (RC, UC
 * and UD, connected to a fake peer QPN at 10.0.0.2) are real verbs objects.
 * The frames are built here, byte by byte, with a correct ICRC where the case
 * wants them to reach deep validation.
 *
 * The rule under test: a malformed or hostile packet is counted (by cause)
 * and dropped, and never crashes droce0 or writes outside what a valid
 * request may write; an RC protocol violation NAKs and takes the QP to ERR,
 * where every WR flushes; a dead peer turns into error completions. Every
 * case checks the guard bytes around the MRs and ends with a legitimate RC
 * and UD exchange on fresh QPs.
 *
 * Progress is inline (-l 0, the default, or "--inline") or on an engine
 * lcore ("--lcore"). "--seed=N --frames=N" change the random burst (fuzzing
 * by hand).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"
#include "roce_hdr.h"

#define DEV_NAME	"droce0"
#define PEER_QPN	0x000077u
#define QKEY		0x11111111u
#define RQ_PSN		0x000100u	/* droce0's responder starts here */
#define SQ_PSN		0x000500u	/* droce0's requester starts here */
#define PMTU		1024u		/* path MTU of the RC/UC QPs */
#define UD_MTU		4096u		/* droce0's IB MTU at mtu=4200 */
#define UDP_SPORT	0xc123u

#define GUARD		4096u
#define MR_LEN		(2u << 20)
#define RX_SLOT		8192u		/* bytes per receive WQE */
#define RX_PER_QP	8u
#define QP_AREA		(RX_SLOT * RX_PER_QP)
#define NB_TQP		16		/* receive areas: [0, 1 MiB) */
#define TGT_OFF		(1024u << 10)	/* remote WRITE/READ/atomic target: 512 KiB */
#define LOC_OFF		(1536u << 10)	/* local send / READ / atomic buffers */
#define SMALL_LEN	(64u << 10)	/* the other-PD MR and the no-remote-access MR */
#define RECV_LEN	(UD_MTU + ROCE_GRH_LEN)

#define FRAME_MAX	10000u
#define OFF_IP		RTE_ETHER_HDR_LEN
#define OFF_UDP		(OFF_IP + 20)
#define OFF_BTH		(OFF_UDP + 8)

#define CHECK(x) TEST_ASSERT((x) == 0, "(see above)")

static bool inl = true;
static uint16_t raw_port;
static struct rte_mempool *pool;
static struct ibv_context *ctx;
static struct ibv_cq *pump_cq;
static uint64_t expect_rx;		/* frames droce0 should have taken in */
static rte_be32_t dev_ip, peer_ip;
static const struct rte_ether_addr dev_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }};
static const struct rte_ether_addr raw_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }};
static union ibv_gid peer_gid;

/* ------------------------------------------------------------------ */
/* time, progress, counters */

/* Inline: one iteration of droce0 (every verbs poll runs one). */
static void
progress(void)
{
	struct ibv_wc wc;

	if (inl)
		ibv_poll_cq(pump_cq, 0, &wc);
	else
		rte_pause();
}

#define NSTAT 64
struct snap {
	int n;
	const char *name[NSTAT];
	uint64_t v[NSTAT];
};

static void
snap(struct snap *s)
{
	s->n = droce_dev_xstats(DEV_NAME, s->name, s->v, NSTAT);
	if (s->n > NSTAT)
		s->n = NSTAT;
}

static uint64_t
sget(const struct snap *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return s->v[i];
	fprintf(stderr, "  no counter %s\n", name);
	return UINT64_MAX;
}

static uint64_t
stat_now(const char *name)
{
	struct snap s;

	snap(&s);
	return sget(&s, name);
}

static uint64_t
sdelta(const struct snap *a, const char *name)
{
	return stat_now(name) - sget(a, name);
}

/*
 * Since @a: drop counter @name moved by exactly @n and no other rx_drop_*
 * counter moved (@name NULL: none moved).
 */
static int
drops_only(const struct snap *a, const char *name, uint64_t n)
{
	struct snap b;
	int bad = 0;

	snap(&b);
	for (int i = 0; i < b.n; i++) {
		uint64_t d, want;

		if (strncmp(b.name[i], "rx_drop_", 8) != 0)
			continue;
		d = b.v[i] - sget(a, b.name[i]);
		want = name != NULL && strcmp(b.name[i], name) == 0 ? n : 0;
		if (d != want) {
			fprintf(stderr, "  counter %s moved by %" PRIu64 ", expected %" PRIu64 "\n",
				b.name[i], d, want);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* frames */

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

struct ext {
	uint8_t b[64];
	uint32_t n;
};

static struct ext
x_reth(uint64_t va, uint32_t rkey, uint32_t len)
{
	struct ext x = { .n = ROCE_RETH_LEN };

	reth_init((struct roce_reth *)x.b, va, rkey, len);
	return x;
}

static struct ext
x_deth(uint32_t qkey, uint32_t sqp)
{
	struct ext x = { .n = ROCE_DETH_LEN };

	deth_init((struct roce_deth *)x.b, qkey, sqp);
	return x;
}

static struct ext
x_aeth(uint8_t syn, uint32_t msn)
{
	struct ext x = { .n = ROCE_AETH_LEN };

	aeth_init((struct roce_aeth *)x.b, syn, msn);
	return x;
}

static struct ext
x_atm(uint64_t va, uint32_t rkey, uint64_t swap_add, uint64_t comp)
{
	struct ext x = { .n = ROCE_ATMETH_LEN };

	atmeth_init((struct roce_atmeth *)x.b, va, rkey, swap_add, comp);
	return x;
}

static struct ext
x_imm(uint32_t imm)
{
	struct ext x = { .n = ROCE_IMMDT_LEN };

	memcpy(x.b, &imm, 4);
	return x;
}

static struct ext
x_cat(struct ext a, struct ext b)
{
	memcpy(a.b + a.n, b.b, b.n);
	a.n += b.n;
	return a;
}

static inline struct rte_ether_hdr *f_eth(struct frame *f) { return (struct rte_ether_hdr *)f->b; }
static inline struct rte_ipv4_hdr *f_ip(struct frame *f) { return (struct rte_ipv4_hdr *)(f->b + OFF_IP); }
static inline struct rte_udp_hdr *f_udp(struct frame *f) { return (struct rte_udp_hdr *)(f->b + OFF_UDP); }
static inline struct roce_bth *f_bth(struct frame *f) { return (struct roce_bth *)(f->b + OFF_BTH); }

static uint16_t
ip_csum(const void *ip, uint32_t hlen)
{
	return (uint16_t)~rte_raw_cksum(ip, hlen);
}

/*
 * IPv4 header checksum and ICRC from what the headers now say. The ICRC goes
 * in the last 4 bytes of the IPv4 total length when those lie in the frame.
 */
static void
seal(struct frame *f)
{
	uint8_t *ip = f->b + OFF_IP;
	uint32_t ihl = (ip[0] & 0xf) * 4u, iplen;

	if (f->len < OFF_IP + ihl)
		return;
	ip[10] = ip[11] = 0;
	{
		uint16_t c = ip_csum(ip, ihl);

		memcpy(ip + 10, &c, 2);
	}
	iplen = rte_be_to_cpu_16(((struct rte_ipv4_hdr *)ip)->total_length);
	if (iplen >= ihl + 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN && OFF_IP + iplen <= f->len) {
		uint32_t c = roce_icrc_ipv4(ip, iplen - ROCE_ICRC_LEN);
		uint8_t *p = ip + iplen - ROCE_ICRC_LEN;

		p[0] = c;
		p[1] = c >> 8;
		p[2] = c >> 16;
		p[3] = c >> 24;
	}
}

/*
 * Ethernet (raw port -> droce0), IPv4 10.0.0.2 -> 10.0.0.1, UDP -> 4791,
 * BTH (AckReq on RC requests), @x, @paylen bytes of @pay, pad, ICRC.
 */
static void
build(struct frame *f, uint8_t op, uint32_t dqpn, uint32_t psn, const struct ext *x,
      const void *pay, uint32_t paylen)
{
	struct rte_ether_hdr *eth = f_eth(f);
	struct rte_ipv4_hdr *ip = f_ip(f);
	struct rte_udp_hdr *udp = f_udp(f);
	uint32_t xn = x ? x->n : 0, pad = -paylen & 3;
	uint32_t l4 = 8 + ROCE_BTH_LEN + xn + paylen + pad + ROCE_ICRC_LEN;
	uint8_t *p = f->b + OFF_BTH;
	bool ackreq = roce_op_transport(op) == IBV_OPCODE_RC && op != IBV_OPCODE_RC_ACKNOWLEDGE &&
		      op != IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE &&
		      (op < IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST || op > IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);

	memset(f->b, 0, OFF_BTH);
	eth->dst_addr = dev_mac;
	eth->src_addr = raw_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(20 + l4);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = peer_ip;
	ip->dst_addr = dev_ip;
	udp->src_port = rte_cpu_to_be_16(UDP_SPORT);
	udp->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4);
	bth_init((struct roce_bth *)p, op, 0, pad, DROCE_DEFAULT_PKEY, dqpn, ackreq, psn);
	p += ROCE_BTH_LEN;
	if (xn)
		memcpy(p, x->b, xn);
	p += xn;
	if (paylen)
		memcpy(p, pay, paylen);
	p += paylen;
	memset(p, 0, pad + ROCE_ICRC_LEN);
	f->len = OFF_IP + 20 + l4;
	seal(f);
}

static void
fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 3u + 1u);
}

/* ------------------------------------------------------------------ */
/* the raw port */

static int
inject_len(const struct frame *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	if (m == NULL)
		return -1;
	p = rte_pktmbuf_append(m, len);
	if (p == NULL && len) {
		rte_pktmbuf_free(m);
		return -1;
	}
	if (len)
		memcpy(p, f->b, len);
	for (uint64_t t0 = h_now_ms(); rte_eth_tx_burst(raw_port, 0, &m, 1) != 1; progress())
		if (h_now_ms() - t0 > 5000) {
			rte_pktmbuf_free(m);
			fprintf(stderr, "  raw port tx stuck\n");
			return -1;
		}
	expect_rx++;
	return 0;
}

static int
inj(const struct frame *f)
{
	return inject_len(f, f->len);
}

/* @f as a chain: segment i holds [cut[i-1], cut[i]); empty segments allowed. */
static int
inject_chain(const struct frame *f, const uint32_t *cut, int ncut)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;

	for (int i = 0; i <= ncut; i++) {
		uint32_t to = i < ncut ? cut[i] : f->len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		char *p;

		if (m == NULL)
			goto err;
		p = rte_pktmbuf_append(m, to - from);
		if (to > from)
			memcpy(p, f->b + from, to - from);
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			goto err;
		from = to;
	}
	if (rte_eth_tx_burst(raw_port, 0, &head, 1) != 1)
		goto err;
	expect_rx++;
	return 0;
err:
	rte_pktmbuf_free(head);
	return -1;
}

/* Wait until droce0 has taken in every injected frame and finished with them. */
static int
settle(void)
{
	uint64_t t0 = h_now_ms();

	while (stat_now("rx_pkts") < expect_rx) {
		progress();
		if (h_now_ms() - t0 > 20000) {
			fprintf(stderr, "  droce0 took %" PRIu64 " of %" PRIu64 " frames\n",
				stat_now("rx_pkts"), expect_rx);
			return -1;
		}
	}
	if (inl) {
		for (int i = 0; i < 4; i++)
			progress();
		return 0;
	}
	/* the engine lcore may still be working on the last frames: wait for the counters to rest */
	for (struct snap a, b; h_now_ms() - t0 < 20000; ) {
		snap(&a);
		rte_delay_us_sleep(5000);
		snap(&b);
		if (a.n == b.n && memcmp(a.v, b.v, sizeof(a.v[0]) * a.n) == 0)
			return 0;
	}
	fprintf(stderr, "  droce0's counters do not settle\n");
	return -1;
}

#define OUT_MAX 64
static struct frame outf[OUT_MAX];

/*
 * Frames droce0 sent: at least @want (waiting up to 5 s for them), then until
 * it has been quiet a while (or has sent 100000, or 10 s passed: a stream
 * that does not end); copies up to @max.
 */
static int
collect_n(struct frame *out, int max, int want)
{
	struct rte_mbuf *pk[32];
	uint64_t t0 = h_now_ms(), last = t0;
	int n = 0, idle = 0;

	while (n < 100000 && h_now_ms() - t0 < 10000) {
		uint16_t k;

		progress();
		k = rte_eth_rx_burst(raw_port, 0, pk, RTE_DIM(pk));
		for (uint16_t i = 0; i < k; i++) {
			if (out != NULL && n < max) {
				uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(pk[i]), FRAME_MAX);
				const void *d = rte_pktmbuf_read(pk[i], 0, len, out[n].b);

				if (d != out[n].b)
					memcpy(out[n].b, d, len);
				out[n].len = len;
			}
			n++;
			rte_pktmbuf_free(pk[i]);
		}
		if (k) {
			idle = 0;
			last = h_now_ms();
			continue;
		}
		if (n < want && h_now_ms() - t0 < 5000)
			continue;
		if (inl ? ++idle >= 4 && h_now_ms() - last >= 2 : h_now_ms() - last >= 30)
			break;
	}
	return n;
}

static int
collect(struct frame *out, int max)
{
	return collect_n(out, max, 0);
}

static void
drain(void)
{
	collect(NULL, 0);
}

/* A frame droce0 sent, checked and decoded. */
struct po {
	bool arp;
	uint8_t op;
	uint32_t dqpn, psn;
	bool ackreq;
	uint8_t syn;		/* AETH, if any */
	uint32_t msn;
	const uint8_t *ip, *ext, *pay;
	uint32_t paylen;
};

static int
parse_out(struct frame *f, struct po *o)
{
	const struct rte_ipv4_hdr *ip = f_ip(f);
	const struct rte_udp_hdr *udp = f_udp(f);
	struct roce_bth *bth = f_bth(f);
	const struct roce_opcode_info *oi;
	uint32_t iplen, blen, icrc;
	const uint8_t *ic;

	memset(o, 0, sizeof(*o));
	if (f->len < RTE_ETHER_HDR_LEN || !rte_is_same_ether_addr(&f_eth(f)->src_addr, &dev_mac)) {
		fprintf(stderr, "  droce0 sent a %u-byte frame not from its MAC\n", f->len);
		return -1;
	}
	if (f_eth(f)->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		o->arp = true;
		return f->len >= RTE_ETHER_HDR_LEN + sizeof(struct rte_arp_hdr) ? 0 : -1;
	}
	if (f_eth(f)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    !rte_is_same_ether_addr(&f_eth(f)->dst_addr, &raw_mac) ||
	    f->len < OFF_BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		fprintf(stderr, "  droce0 sent a frame that is not RoCEv2 to the peer's MAC\n");
		return -1;
	}
	iplen = rte_be_to_cpu_16(ip->total_length);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || rte_raw_cksum(ip, 20) != 0xffff ||
	    OFF_IP + iplen > f->len || ip->src_addr != dev_ip || ip->dst_addr != peer_ip ||
	    ip->next_proto_id != IPPROTO_UDP || udp->dst_port != rte_cpu_to_be_16(DROCE_UDP_PORT) ||
	    rte_be_to_cpu_16(udp->dgram_len) != iplen - 20) {
		fprintf(stderr, "  droce0 sent a frame with bad IPv4/UDP headers\n");
		return -1;
	}
	ic = (const uint8_t *)ip + iplen - ROCE_ICRC_LEN;
	icrc = ic[0] | ic[1] << 8 | ic[2] << 16 | (uint32_t)ic[3] << 24;
	if (roce_icrc_ipv4(ip, iplen - ROCE_ICRC_LEN) != icrc) {
		fprintf(stderr, "  droce0 sent a frame with a bad ICRC\n");
		return -1;
	}
	o->op = bth_opcode(bth);
	oi = &roce_opcode_tbl[o->op];
	blen = iplen - 20 - 8 - ROCE_ICRC_LEN;
	if (!(oi->flags & ROCE_OPF_VALID) || blen < oi->hdr_len + bth_pad(bth) ||
	    bth_tver(bth) != 0 || bth_pkey(bth) != DROCE_DEFAULT_PKEY) {
		fprintf(stderr, "  droce0 sent a bad BTH (opcode 0x%02x)\n", o->op);
		return -1;
	}
	o->dqpn = bth_qpn(bth);
	o->psn = bth_psn(bth);
	o->ackreq = bth_ackreq(bth);
	o->ip = (const uint8_t *)ip;
	o->ext = (const uint8_t *)(bth + 1);
	o->pay = (const uint8_t *)bth + oi->hdr_len;
	o->paylen = blen - oi->hdr_len - bth_pad(bth);
	if (oi->flags & ROCE_OPF_AETH) {
		const struct roce_aeth *a = (const struct roce_aeth *)o->ext;

		o->syn = aeth_syn(a);
		o->msn = aeth_msn(a);
	}
	return 0;
}

/* Exactly one frame out: an RC ACKNOWLEDGE to the peer for @psn with syndrome
 * @syn (AETH_ACK: any ACK credit value). */
static int
expect_one_aeth(uint32_t psn, uint8_t syn)
{
	int n = collect_n(outf, OUT_MAX, 1);
	struct po o;

	if (n != 1) {
		fprintf(stderr, "  expected one ACK/NAK from droce0, got %d frames\n", n);
		for (int i = 0; i < n && i < OUT_MAX; i++)
			if (parse_out(&outf[i], &o) == 0)
				fprintf(stderr, "    op 0x%02x psn 0x%06x syn 0x%02x\n", o.op, o.psn, o.syn);
		return -1;
	}
	if (parse_out(&outf[0], &o) != 0)
		return -1;
	if (o.op != IBV_OPCODE_RC_ACKNOWLEDGE || o.dqpn != PEER_QPN || o.psn != psn ||
	    (syn == AETH_ACK ? (o.syn & AETH_TYPE_MASK) != AETH_ACK : o.syn != syn)) {
		fprintf(stderr, "  expected ACK psn 0x%06x syn 0x%02x; got op 0x%02x dqpn 0x%x psn 0x%06x syn 0x%02x\n",
			psn, syn, o.op, o.dqpn, o.psn, o.syn);
		return -1;
	}
	return 0;
}

/*
 * One NAK for @psn with syndrome @syn, last; before it only ACKs of earlier
 * PSNs (an ACK owed for packets taken in an earlier burst).
 */
static int
expect_nak(uint32_t psn, uint8_t syn)
{
	int n = collect_n(outf, OUT_MAX, 1);
	struct po o;

	for (int i = 0; i < n && i < OUT_MAX; i++) {
		if (parse_out(&outf[i], &o))
			return -1;
		if (o.op != IBV_OPCODE_RC_ACKNOWLEDGE || o.dqpn != PEER_QPN ||
		    (i == n - 1 ? o.psn != psn || o.syn != syn :
		     (o.syn & AETH_TYPE_MASK) != AETH_ACK || psn_cmp(o.psn, psn) >= 0)) {
			fprintf(stderr, "  expected ACKs then a NAK psn 0x%06x syn 0x%02x; frame %d of %d: "
				"op 0x%02x psn 0x%06x syn 0x%02x\n", psn, syn, i, n, o.op, o.psn, o.syn);
			return -1;
		}
	}
	if (n == 0)
		fprintf(stderr, "  no NAK from droce0\n");
	return n == 0 ? -1 : 0;
}

static int
expect_silence(void)
{
	int n = collect(outf, OUT_MAX);
	struct po o;

	if (n != 0) {
		fprintf(stderr, "  droce0 sent %d frames, expected none\n", n);
		for (int i = 0; i < n && i < OUT_MAX; i++)
			if (parse_out(&outf[i], &o) == 0)
				fprintf(stderr, "    op 0x%02x psn 0x%06x syn 0x%02x\n", o.op, o.psn, o.syn);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* droce0's objects */

struct qopt {
	uint8_t timeout;		/* 0: 18 (~1 s) */
	uint8_t retry_cnt_p1;		/* 0: 7 */
	uint8_t rnr_retry_p1;		/* 0: 7 */
	uint8_t max_dest_rd;		/* 0: 4 */
	uint32_t rq_psn, sq_psn;	/* 0: RQ_PSN / SQ_PSN */
	int nrecv;			/* 0: RX_PER_QP, -1: none */
	uint32_t recv_len;		/* 0: RECV_LEN */
	rte_be32_t peer_ip;		/* 0: 10.0.0.2 (peer_gid) */
};

struct tqp {
	bool used;
	int area;
	enum ibv_qp_type type;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	uint32_t qpn;
	uint32_t epsn;		/* next PSN droce0's responder expects */
	uint32_t spsn;		/* next PSN droce0's requester sends */
	uint32_t recv_len;
	int posted;
};

static struct {
	struct ibv_pd *pd, *pd2;
	uint8_t *raw, *buf;		/* raw: guard, MR, guard */
	uint8_t *raw2, *buf2;		/* MR in pd2 */
	uint8_t *raw3, *buf3;		/* MR in pd without remote access */
	uint8_t *shadow;
	struct ibv_mr *mr, *mr2, *mr3;
	struct tqp *rc, *uc, *ud;
	struct ibv_ah *ah;
} W;

static struct tqp tqps[NB_TQP];

static uint8_t
guard_byte(uint32_t i)
{
	return (uint8_t)(0xa5 ^ (i * 29u));
}

static uint8_t *
guarded_alloc(uint32_t len, uint8_t **inner)
{
	uint8_t *raw = aligned_alloc(4096, GUARD + len + GUARD);

	if (raw == NULL)
		return NULL;
	for (uint32_t i = 0; i < GUARD; i++) {
		raw[i] = guard_byte(i);
		raw[GUARD + len + i] = guard_byte(i + 1);
	}
	*inner = raw + GUARD;
	return raw;
}

static int
guards_intact(const uint8_t *raw, uint32_t len, const char *what)
{
	for (uint32_t i = 0; i < GUARD; i++)
		if (raw[i] != guard_byte(i) || raw[GUARD + len + i] != guard_byte(i + 1)) {
			fprintf(stderr, "  guard bytes of %s overwritten (%s, offset %u)\n", what,
				raw[i] != guard_byte(i) ? "before" : "after", i);
			return -1;
		}
	return 0;
}

/* The MR's bytes are as saved, except [lo, hi). */
static void
mr_save(void)
{
	memcpy(W.shadow, W.buf, MR_LEN);
}

static int
mr_same_except(uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < MR_LEN; i++)
		if ((i < lo || i >= hi) && W.buf[i] != W.shadow[i]) {
			fprintf(stderr, "  MR byte at offset 0x%x changed (0x%02x -> 0x%02x)\n", i,
				W.shadow[i], W.buf[i]);
			return -1;
		}
	return 0;
}

static int
mr_same(void)
{
	return mr_same_except(0, 0);
}

static int
memory_intact(void)
{
	static uint8_t ref[SMALL_LEN];

	if (guards_intact(W.raw, MR_LEN, "the MR") || guards_intact(W.raw2, SMALL_LEN, "the pd2 MR") ||
	    guards_intact(W.raw3, SMALL_LEN, "the local-only MR"))
		return -1;
	fill(ref, SMALL_LEN, 2);
	if (memcmp(W.buf2, ref, SMALL_LEN) != 0) {
		fprintf(stderr, "  the MR of another PD was written\n");
		return -1;
	}
	fill(ref, SMALL_LEN, 3);
	if (memcmp(W.buf3, ref, SMALL_LEN) != 0) {
		fprintf(stderr, "  the MR without remote access was written\n");
		return -1;
	}
	return 0;
}

static uint64_t
va(uint32_t off)
{
	return (uint64_t)(uintptr_t)W.buf + off;
}

static int
post_recvs(struct tqp *q, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)(q->posted % (int)RX_PER_QP);
		struct ibv_sge sge = { va(q->area * QP_AREA + slot * RX_SLOT), q->recv_len, W.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)q->area << 16 | (uint64_t)q->posted,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(q->qp, &wr, &bad))
			return -1;
		q->posted++;
	}
	return 0;
}

static void
tqp_destroy(struct tqp *q)
{
	if (q == NULL || !q->used)
		return;
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->scq)
		ibv_destroy_cq(q->scq);
	if (q->rcq)
		ibv_destroy_cq(q->rcq);
	memset(q, 0, sizeof(*q));
}

static struct tqp *
tqp_new(enum ibv_qp_type type, const struct qopt *o)
{
	static const struct qopt dflt;
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct tqp *q = NULL;
	int mask;

	if (o == NULL)
		o = &dflt;
	for (int i = 0; i < NB_TQP && q == NULL; i++)
		if (!tqps[i].used)
			q = &tqps[i];
	if (q == NULL)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->used = true;
	q->area = (int)(q - tqps);
	q->type = type;
	q->recv_len = o->recv_len ? o->recv_len : RECV_LEN;
	q->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	q->rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (q->scq == NULL || q->rcq == NULL)
		goto err;
	ia.qp_type = type;
	ia.send_cq = q->scq;
	ia.recv_cq = q->rcq;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	q->qp = ibv_create_qp(W.pd, &ia);
	if (q->qp == NULL)
		goto err;
	q->qpn = q->qp->qp_num;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	q->epsn = o->rq_psn ? o->rq_psn : RQ_PSN;
	q->spsn = o->sq_psn ? o->sq_psn : SQ_PSN;
	if (type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = PEER_QPN;
		a.rq_psn = q->epsn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer_gid;
		if (o->peer_ip != 0)
			memcpy(&a.ah_attr.grh.dgid.raw[12], &o->peer_ip, 4);
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = o->max_dest_rd ? o->max_dest_rd : 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->spsn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = o->timeout ? o->timeout : 18;
		a.retry_cnt = o->retry_cnt_p1 ? o->retry_cnt_p1 - 1 : 7;
		a.rnr_retry = o->rnr_retry_p1 ? o->rnr_retry_p1 - 1 : 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;
	if (o->nrecv >= 0 && post_recvs(q, o->nrecv ? o->nrecv : (int)RX_PER_QP))
		goto err;
	return q;
err:
	fprintf(stderr, "  cannot create a %s QP\n", type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" : "UD");
	tqp_destroy(q);
	return NULL;
}

static enum ibv_qp_state
qp_state(const struct tqp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* Poll @cq for up to @ms; returns how many completions arrived (up to @n). */
static int
poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	uint64_t t0 = h_now_ms();
	int got = 0;

	do {
		int k = ibv_poll_cq(cq, n - got, wc + got);

		if (k < 0)
			return k;
		got += k;
	} while (got < n && h_now_ms() - t0 < (uint64_t)ms);
	return got;
}

static int
no_completion(const struct tqp *q)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(q->scq, 1, &wc);

	if (n == 0)
		n = ibv_poll_cq(q->rcq, 1, &wc);
	if (n != 0) {
		fprintf(stderr, "  unexpected completion on QP 0x%x: status %s opcode %d byte_len %u\n",
			q->qpn, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		return -1;
	}
	return 0;
}

static int
post_send_wr(struct tqp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(q->qp, wr, &bad);
}

static int
post_send(struct tqp *q, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t wr_id,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { va(off), len, W.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 6;
	} else if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return post_send_wr(q, &wr);
}

/*
 * The QP was killed by a protocol error: it reports ERR, its @posted
 * receives flush, and a send and a receive posted now flush too.
 */
static int
expect_err_and_flush(struct tqp *q, int posted)
{
	struct ibv_wc wc[RX_PER_QP + 2];
	int n;

	if (qp_state(q) != IBV_QPS_ERR) {
		fprintf(stderr, "  QP 0x%x in state %d, expected ERR\n", q->qpn, qp_state(q));
		return -1;
	}
	n = poll_for(q->rcq, wc, posted, 2000);
	if (n != posted) {
		fprintf(stderr, "  %d of %d receives flushed\n", n, posted);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			fprintf(stderr, "  receive completed with %s, expected a flush\n",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
	if (post_send(q, IBV_WR_SEND, LOC_OFF, 16, 0xf1, 0, 0) || post_recvs(q, 1))
		return -1;
	if (poll_for(q->scq, wc, 1, 2000) != 1 || wc[0].status != IBV_WC_WR_FLUSH_ERR ||
	    wc[0].wr_id != 0xf1) {
		fprintf(stderr, "  a send posted in ERR did not flush\n");
		return -1;
	}
	if (poll_for(q->rcq, wc, 1, 2000) != 1 || wc[0].status != IBV_WC_WR_FLUSH_ERR) {
		fprintf(stderr, "  a receive posted in ERR did not flush\n");
		return -1;
	}
	return no_completion(q);
}

/* ------------------------------------------------------------------ */
/* legitimate traffic */

static int
inject_send_only(struct tqp *q, uint32_t psn, const void *pay, uint32_t len)
{
	struct frame *f = malloc(sizeof(*f));
	struct ext x = x_deth(QKEY, PEER_QPN);
	uint8_t op = q->type == IBV_QPT_RC ? IBV_OPCODE_RC_SEND_ONLY :
		     q->type == IBV_QPT_UC ? IBV_OPCODE_UC_SEND_ONLY : IBV_OPCODE_UD_SEND_ONLY;
	int ret;

	if (f == NULL)
		return -1;
	build(f, op, q->qpn, psn, q->type == IBV_QPT_UD ? &x : NULL, pay, len);
	ret = inj(f);
	free(f);
	return ret;
}

/* A receive on @q completed with @len bytes equal to @data (UD: after the GRH). */
static int
expect_recv(struct tqp *q, const uint8_t *data, uint32_t len)
{
	struct ibv_wc wc;
	uint32_t grh = q->type == IBV_QPT_UD ? ROCE_GRH_LEN : 0;
	const uint8_t *p;

	if (poll_for(q->rcq, &wc, 1, 2000) != 1) {
		fprintf(stderr, "  no receive completion on QP 0x%x\n", q->qpn);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != len + grh || wc.qp_num != q->qpn) {
		fprintf(stderr, "  receive: status %s byte_len %u (expected %u)\n",
			ibv_wc_status_str(wc.status), wc.byte_len, len + grh);
		return -1;
	}
	p = (const uint8_t *)(uintptr_t)va((uint32_t)(wc.wr_id >> 16) * QP_AREA +
					   (uint32_t)(wc.wr_id & 0xffff) % RX_PER_QP * RX_SLOT);
	if (memcmp(p + grh, data, len) != 0) {
		fprintf(stderr, "  received data differs\n");
		return -1;
	}
	return 0;
}

/*
 * A fresh RC QP whose PSNs wrap: a 3-packet SEND in (ACKed once), a 3-packet
 * SEND out (ACKed by the test), data checked both ways.
 */
static int
legit_rc(void)
{
	static uint8_t data[3000];
	struct qopt o = { .rq_psn = 0xfffffe, .sq_psn = 0xffffff, .nrecv = 1 };
	struct tqp *q = tqp_new(IBV_QPT_RC, &o);
	struct frame *f = malloc(sizeof(*f));
	struct ibv_wc wc;
	struct po po;
	int n, ret = -1;

	if (q == NULL || f == NULL)
		goto out;
	fill(data, sizeof(data), 77);
	build(f, IBV_OPCODE_RC_SEND_FIRST, q->qpn, 0xfffffe, NULL, data, PMTU);
	bth_init(f_bth(f), IBV_OPCODE_RC_SEND_FIRST, 0, 0, DROCE_DEFAULT_PKEY, q->qpn, 0, 0xfffffe);
	seal(f);
	inj(f);
	build(f, IBV_OPCODE_RC_SEND_MIDDLE, q->qpn, 0xffffff, NULL, data + PMTU, PMTU);
	bth_init(f_bth(f), IBV_OPCODE_RC_SEND_MIDDLE, 0, 0, DROCE_DEFAULT_PKEY, q->qpn, 0, 0xffffff);
	seal(f);
	inj(f);
	build(f, IBV_OPCODE_RC_SEND_LAST, q->qpn, 0, NULL, data + 2 * PMTU, sizeof(data) - 2 * PMTU);
	inj(f);
	if (settle() || expect_recv(q, data, sizeof(data)) || expect_one_aeth(0, AETH_ACK))
		goto out;

	fill(W.buf + LOC_OFF, 2500, 78);
	if (post_send(q, IBV_WR_SEND, LOC_OFF, 2500, 0x5e, 0, 0))
		goto out;
	n = collect_n(outf, OUT_MAX, 3);
	if (n != 3) {
		fprintf(stderr, "  legit RC: droce0 sent %d frames for a 3-packet SEND\n", n);
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { IBV_OPCODE_RC_SEND_FIRST, IBV_OPCODE_RC_SEND_MIDDLE,
						IBV_OPCODE_RC_SEND_LAST };
		uint32_t len = i < 2 ? PMTU : 2500 - 2 * PMTU;

		if (parse_out(&outf[i], &po))
			goto out;
		if (po.op != ops[i] || po.dqpn != PEER_QPN || po.psn != psn_add(0xffffff, i) ||
		    po.paylen != len || memcmp(po.pay, W.buf + LOC_OFF + i * PMTU, len) != 0) {
			fprintf(stderr, "  legit RC: packet %d: op 0x%02x psn 0x%06x len %u\n", i,
				po.op, po.psn, po.paylen);
			goto out;
		}
	}
	{
		struct ext x = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);

		build(f, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, 1, &x, NULL, 0);
		inj(f);
	}
	if (settle() || poll_for(q->scq, &wc, 1, 2000) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 0x5e) {
		fprintf(stderr, "  legit RC: the SEND did not complete\n");
		goto out;
	}
	ret = no_completion(q) || expect_silence() ? -1 : 0;
out:
	if (ret)
		fprintf(stderr, "  legitimate RC exchange failed\n");
	free(f);
	tqp_destroy(q);
	return ret;
}

/* A fresh UD QP: a datagram in, a datagram out through an AH. */
static int
legit_ud(void)
{
	struct tqp *q = tqp_new(IBV_QPT_UD, &(struct qopt){ .nrecv = 1 });
	uint8_t data[300];
	struct ibv_wc wc;
	struct po po;
	int ret = -1;

	if (q == NULL)
		goto out;
	fill(data, sizeof(data), 91);
	if (inject_send_only(q, 0, data, sizeof(data)) || settle() || expect_recv(q, data, sizeof(data)))
		goto out;
	fill(W.buf + LOC_OFF, 200, 92);
	{
		struct ibv_sge sge = { va(LOC_OFF), 200, W.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0x0d, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		wr.wr.ud.ah = W.ah;
		wr.wr.ud.remote_qpn = PEER_QPN;
		wr.wr.ud.remote_qkey = QKEY;
		if (post_send_wr(q, &wr))
			goto out;
	}
	if (collect_n(outf, OUT_MAX, 1) != 1 || parse_out(&outf[0], &po) ||
	    po.op != IBV_OPCODE_UD_SEND_ONLY || po.dqpn != PEER_QPN || po.paylen != 200 ||
	    deth_qkey((const struct roce_deth *)po.ext) != QKEY ||
	    deth_sqp((const struct roce_deth *)po.ext) != q->qpn ||
	    memcmp(po.pay, W.buf + LOC_OFF, 200) != 0) {
		fprintf(stderr, "  legit UD: droce0's datagram is wrong or missing\n");
		goto out;
	}
	if (poll_for(q->scq, &wc, 1, 2000) != 1 || wc.status != IBV_WC_SUCCESS)
		goto out;
	ret = no_completion(q);
out:
	if (ret)
		fprintf(stderr, "  legitimate UD exchange failed\n");
	tqp_destroy(q);
	return ret;
}

/* Memory intact, droce0 still exchanges data. Every case ends with this. */
static int
finish(void)
{
	if (memory_intact() || settle())
		return TEST_FAILED;
	drain();
	if (legit_rc() || legit_ud() || memory_intact())
		return TEST_FAILED;
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* per-case world */

static int
setup(void)
{
	memset(&W, 0, sizeof(W));
	W.pd = ibv_alloc_pd(ctx);
	W.pd2 = ibv_alloc_pd(ctx);
	W.raw = guarded_alloc(MR_LEN, &W.buf);
	W.raw2 = guarded_alloc(SMALL_LEN, &W.buf2);
	W.raw3 = guarded_alloc(SMALL_LEN, &W.buf3);
	W.shadow = malloc(MR_LEN);
	if (W.pd == NULL || W.pd2 == NULL || W.raw == NULL || W.raw2 == NULL || W.raw3 == NULL ||
	    W.shadow == NULL)
		return -1;
	fill(W.buf, MR_LEN, 1);
	fill(W.buf2, SMALL_LEN, 2);
	fill(W.buf3, SMALL_LEN, 3);
	W.mr = ibv_reg_mr(W.pd, W.buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	W.mr2 = ibv_reg_mr(W.pd2, W.buf2, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	W.mr3 = ibv_reg_mr(W.pd, W.buf3, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (W.mr == NULL || W.mr2 == NULL || W.mr3 == NULL)
		return -1;
	{
		struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

		ah.grh.dgid = peer_gid;
		ah.grh.hop_limit = 64;
		W.ah = ibv_create_ah(W.pd, &ah);
	}
	W.rc = tqp_new(IBV_QPT_RC, NULL);
	W.uc = tqp_new(IBV_QPT_UC, NULL);
	W.ud = tqp_new(IBV_QPT_UD, NULL);
	if (W.ah == NULL || W.rc == NULL || W.uc == NULL || W.ud == NULL)
		return -1;
	drain();
	expect_rx = stat_now("rx_pkts");
	return 0;
}

static void
teardown(void)
{
	drain();
	for (int i = 0; i < NB_TQP; i++)
		tqp_destroy(&tqps[i]);
	if (W.ah)
		ibv_destroy_ah(W.ah);
	if (W.mr)
		ibv_dereg_mr(W.mr);
	if (W.mr2)
		ibv_dereg_mr(W.mr2);
	if (W.mr3)
		ibv_dereg_mr(W.mr3);
	if (W.pd)
		ibv_dealloc_pd(W.pd);
	if (W.pd2)
		ibv_dealloc_pd(W.pd2);
	free(W.raw);
	free(W.raw2);
	free(W.raw3);
	free(W.shadow);
	memset(&W, 0, sizeof(W));
	expect_rx = stat_now("rx_pkts");
}

static struct frame F, G;	/* scratch frames */

/* ------------------------------------------------------------------ */
/* cases */

/* The frame builder's ICRC agrees with scapy's (shared/vectors/roce_icrc.json). */
static int
test_builder_icrc_matches_reference_vector(void)
{
	static const char hex[] =
		"02000000000202000000000108004500003c00014000401126ae0a0000010a000002c00012b7"
		"002868a90400ffff0000001180000000000102030405060708090a0b0c0d0e0f1270e178";
	uint32_t n = (sizeof(hex) - 1) / 2;

	for (uint32_t i = 0; i < n; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		F.b[i] = (uint8_t)v;
	}
	F.len = n;
	TEST_ASSERT_EQ(roce_icrc_ipv4(F.b + OFF_IP, n - OFF_IP - 4), 2028040210u);
	memset(F.b + n - 4, 0, 4);
	seal(&F);
	TEST_ASSERT(memcmp(F.b + n - 4, "\x12\x70\xe1\x78", 4) == 0, "seal() ICRC");
	/* our own frames pass droce0's checks: a SEND arrives */
	{
		uint8_t d[16];

		fill(d, 16, 5);
		CHECK(inject_send_only(W.rc, W.rc->epsn, d, 16));
		CHECK(settle());
		CHECK(expect_recv(W.rc, d, 16));
		CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	}
	return finish();
}

/* Every length from 0 to one byte short of a whole SEND frame: truncated. */
static int
test_truncated_frames_every_length(void)
{
	uint8_t d[16];
	struct snap s;
	uint32_t k = 0;

	fill(d, sizeof(d), 9);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	snap(&s);
	for (uint32_t len = 0; len < F.len; len++, k++)
		CHECK(inject_len(&F, len));
	/* consistent lengths, but too short for BTH + ICRC, or for the opcode's headers */
	for (uint32_t l4 = 0; l4 < 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN; l4++, k++) {
		G = F;
		f_ip(&G)->total_length = rte_cpu_to_be_16(20 + l4);
		f_udp(&G)->dgram_len = rte_cpu_to_be_16(l4);
		seal(&G);
		CHECK(inj(&G));
	}
	{
		static const uint8_t ops[] = {
			IBV_OPCODE_RC_RDMA_WRITE_ONLY, IBV_OPCODE_RC_RDMA_READ_REQUEST,
			IBV_OPCODE_RC_COMPARE_SWAP, IBV_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
			IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, IBV_OPCODE_RC_ACKNOWLEDGE,
			IBV_OPCODE_UD_SEND_ONLY,
		};

		for (unsigned int i = 0; i < RTE_DIM(ops); i++, k++) {
			/* two bytes short of the opcode's headers */
			uint32_t hl = roce_opcode_tbl[ops[i]].hdr_len - ROCE_BTH_LEN - 2;
			struct ext x = { .n = hl };

			build(&G, ops[i], ops[i] == IBV_OPCODE_UD_SEND_ONLY ? W.ud->qpn : W.rc->qpn,
			      W.rc->epsn, &x, NULL, 0);
			/* keep the pad field at 0 so it is the headers that do not fit */
			CHECK(inj(&G));
		}
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", k));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	CHECK(no_completion(W.ud));
	/* the whole frame still arrives: nothing moved the expected PSN */
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_recv(W.rc, d, sizeof(d)));
	CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	return finish();
}

static int
test_ethernet_not_ip_or_not_ours(void)
{
	static const uint16_t types[] = { 0x86dd, 0x8100, 0x8915, 0x0000, 0x88b5, 0xffff, 0x0800 ^ 1 };
	uint8_t d[8] = { 1 };
	struct snap s;

	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(types); i++) {
		G = F;
		f_eth(&G)->ether_type = rte_cpu_to_be_16(types[i]);
		CHECK(inj(&G));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_not_ip", RTE_DIM(types)));

	snap(&s);
	G = F;					/* another unicast MAC */
	f_eth(&G)->dst_addr.addr_bytes[5] = 0x09;
	CHECK(inj(&G));
	G = F;					/* broadcast */
	memset(&f_eth(&G)->dst_addr, 0xff, 6);
	CHECK(inj(&G));
	G = F;					/* another IP */
	f_ip(&G)->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 3));
	seal(&G);
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_not_mine", 3));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	return finish();
}

static int
test_ipv4_malformed(void)
{
	uint8_t d[20];
	struct snap s;

	fill(d, sizeof(d), 3);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));

	snap(&s);
	/* options: IHL 6, a NOP option word, checksum and ICRC right */
	G = F;
	memmove(G.b + OFF_UDP + 4, G.b + OFF_UDP, F.len - OFF_UDP);
	memset(G.b + OFF_UDP, 1, 4);
	G.len = F.len + 4;
	f_ip(&G)->version_ihl = 0x46;
	f_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(f_ip(&F)->total_length) + 4);
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* IP version 6 in an IPv4 ethertype */
	f_ip(&G)->version_ihl = 0x65;
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* IHL below 5 */
	f_ip(&G)->version_ihl = 0x44;
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* bad header checksum */
	f_ip(&G)->hdr_checksum ^= rte_cpu_to_be_16(0x0100);
	CHECK(inj(&G));
	G = F;					/* a first fragment (MF) */
	f_ip(&G)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* a later fragment */
	f_ip(&G)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG | 3);
	seal(&G);
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_ip", 6));

	snap(&s);
	G = F;					/* total_length 4 short (UDP length disagrees) */
	f_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(f_ip(&F)->total_length) - 4);
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* total_length beyond the frame */
	f_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(f_ip(&F)->total_length) + 8);
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* total_length 0 */
	f_ip(&G)->total_length = 0;
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* total_length 12, shorter than the IPv4 header */
	f_ip(&G)->total_length = rte_cpu_to_be_16(12);
	seal(&G);
	CHECK(inj(&G));
	G = F;					/* total_length 0xffff */
	f_ip(&G)->total_length = 0xffff;
	seal(&G);
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", 5));

	snap(&s);
	G = F;					/* TCP */
	f_ip(&G)->next_proto_id = IPPROTO_TCP;
	seal(&G);
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_not_roce", 1));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));

	/* Ethernet padding after the IPv4 packet is fine */
	snap(&s);
	G = F;
	memset(G.b + G.len, 0xee, 40);
	G.len += 40;
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, NULL, 0));
	CHECK(expect_recv(W.rc, d, sizeof(d)));
	CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	return finish();
}

static int
test_udp_port_and_length(void)
{
	static const uint16_t ports[] = { 4790, 4792, 0, 0xffff, 0x12b7 ^ 0x0100 };
	uint8_t d[20];
	struct snap s;

	fill(d, sizeof(d), 4);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(ports); i++) {
		G = F;
		f_udp(&G)->dst_port = rte_cpu_to_be_16(ports[i]);
		seal(&G);
		CHECK(inj(&G));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_not_roce", RTE_DIM(ports)));

	snap(&s);
	{
		static const int adj[] = { 4, -4, 1, -1, 0x7fff };

		for (unsigned int i = 0; i < RTE_DIM(adj); i++) {
			G = F;
			f_udp(&G)->dgram_len = rte_cpu_to_be_16(
				(uint16_t)(rte_be_to_cpu_16(f_udp(&F)->dgram_len) + adj[i]));
			seal(&G);
			CHECK(inj(&G));
		}
		CHECK(settle());
		CHECK(drops_only(&s, "rx_drop_truncated", RTE_DIM(adj)));
	}
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	return finish();
}

static int
test_bad_icrc(void)
{
	uint8_t d[64];
	struct snap s;
	uint32_t k = 0;

	fill(d, sizeof(d), 6);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	snap(&s);
	/* one flipped bit anywhere after the IPv4 header (UDP checksum excepted) */
	for (uint32_t off = OFF_UDP; off < F.len; off++) {
		if (off == OFF_UDP + 6 || off == OFF_UDP + 7 || off == OFF_BTH + 4)
			continue;	/* variant fields the ICRC masks */
		if (off == OFF_UDP + 2 || off == OFF_UDP + 3 || off == OFF_UDP + 4 || off == OFF_UDP + 5)
			continue;	/* would fail the port or length check first */
		G = F;
		G.b[off] ^= (uint8_t)(1u << (off % 8));
		CHECK(inj(&G));
		k++;
	}
	G = F;				/* ICRC zeroed */
	memset(G.b + G.len - 4, 0, 4);
	CHECK(inj(&G));
	k++;
	G = F;				/* source IP changed, IP checksum fixed, ICRC stale */
	f_ip(&G)->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 9));
	f_ip(&G)->hdr_checksum = 0;
	f_ip(&G)->hdr_checksum = ip_csum(f_ip(&G), 20);
	CHECK(inj(&G));
	k++;
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_icrc", k));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));

	/* the variant fields (TOS, TTL, UDP checksum, BTH byte 4) are not covered */
	snap(&s);
	G = F;
	f_ip(&G)->type_of_service = 0xff;
	f_ip(&G)->time_to_live = 1;
	f_ip(&G)->hdr_checksum = 0;
	f_ip(&G)->hdr_checksum = ip_csum(f_ip(&G), 20);
	f_udp(&G)->dgram_cksum = 0x1234;
	G.b[OFF_BTH + 4] = 0xc0;
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, NULL, 0));
	CHECK(expect_recv(W.rc, d, sizeof(d)));
	CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	return finish();
}

static bool
spec_valid_opcode(unsigned int op)
{
	return op <= IBV_OPCODE_RC_FETCH_ADD ||
	       (op >= IBV_OPCODE_UC_SEND_FIRST && op <= IBV_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) ||
	       op == IBV_OPCODE_UD_SEND_ONLY || op == IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE;
}

/* All 256 opcodes; what droce0 does not implement (RD, CNP, reserved) is a bad BTH. */
static int
test_bth_opcode_version_pkey(void)
{
	struct ext x = { .n = 28 };	/* room for any header */
	uint8_t d[4] = { 0 };
	struct snap s;
	uint32_t k = 0;

	snap(&s);
	for (unsigned int op = 0; op < 256; op++) {
		TEST_ASSERT(!!(roce_opcode_tbl[op].flags & ROCE_OPF_VALID) == spec_valid_opcode(op),
			    "opcode 0x%02x valid in the table: %d", op,
			    !!(roce_opcode_tbl[op].flags & ROCE_OPF_VALID));
		if (spec_valid_opcode(op))
			continue;
		build(&F, (uint8_t)op, W.rc->qpn, W.rc->epsn, &x, NULL, 0);
		CHECK(inj(&F));
		k++;
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_bth", k));

	snap(&s);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	for (unsigned int tver = 1; tver < 16; tver += 7) {	/* 1, 8, 15 */
		G = F;
		f_bth(&G)->flags = (f_bth(&G)->flags & ~BTH_TVER_MASK) | tver;
		seal(&G);
		CHECK(inj(&G));
	}
	{
		static const uint16_t pkeys[] = { 0x0000, 0x8000, 0x1234, 0xfffe, 0x7ffe };

		for (unsigned int i = 0; i < RTE_DIM(pkeys); i++) {
			G = F;
			f_bth(&G)->pkey = rte_cpu_to_be_16(pkeys[i]);
			seal(&G);
			CHECK(inj(&G));
		}
		CHECK(settle());
		CHECK(drops_only(&s, "rx_drop_bad_bth", 3 + RTE_DIM(pkeys)));
	}
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	CHECK(no_completion(W.uc));
	CHECK(no_completion(W.ud));
	TEST_ASSERT_EQ(qp_state(W.rc), IBV_QPS_RTS);

	/* a limited-membership P_Key (0x7fff) may talk to the full default one */
	snap(&s);
	G = F;
	f_bth(&G)->pkey = rte_cpu_to_be_16(0x7fff);
	seal(&G);
	CHECK(inj(&G));
	CHECK(settle());
	CHECK(drops_only(&s, NULL, 0));
	CHECK(expect_recv(W.rc, d, sizeof(d)));
	CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	return finish();
}

/* Pad count larger than the bytes after the headers; payload on a payload-less opcode. */
static int
test_pad_and_payload_lengths(void)
{
	uint8_t d[8] = { 0 };
	struct snap s;

	snap(&s);
	for (uint32_t n = 0; n < 3; n++) {
		build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, n);
		/* n payload bytes, pad zero bytes stripped: the pad field claims 3 */
		F.len -= (-n & 3);
		f_ip(&F)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(f_ip(&F)->total_length) - (-n & 3));
		f_udp(&F)->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(f_udp(&F)->dgram_len) - (-n & 3));
		f_bth(&F)->flags = (f_bth(&F)->flags & ~BTH_PAD_MASK) | (3 << 4);
		seal(&F);
		CHECK(inj(&F));
	}
	/* UD: pad 3 over a DETH with nothing after it */
	{
		struct ext x = x_deth(QKEY, PEER_QPN);

		build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, NULL, 0);
		f_bth(&F)->flags |= 3 << 4;
		seal(&F);
		CHECK(inj(&F));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", 4));

	snap(&s);
	{
		struct ext a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
		struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, 8);

		/* an ACK, a READ request and an ATOMIC_ACK with 4 payload bytes */
		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, W.rc->qpn, psn_add(W.rc->spsn, -1), &a, d, 4);
		CHECK(inj(&F));
		build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, W.rc->qpn, W.rc->epsn, &r, d, 4);
		CHECK(inj(&F));
		a = x_cat(a, x_imm(0));
		a = x_cat(a, x_imm(0));
		build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, W.rc->qpn, psn_add(W.rc->spsn, -1), &a, d, 4);
		CHECK(inj(&F));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 3));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	CHECK(no_completion(W.ud));
	TEST_ASSERT_EQ(qp_state(W.rc), IBV_QPS_RTS);
	return finish();
}

static int
test_unknown_or_wrong_type_qpn(void)
{
	uint8_t d[16] = { 0 };
	struct ext deth = x_deth(QKEY, PEER_QPN);
	struct ext aeth = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ext reth = x_reth(va(TGT_OFF), W.mr->rkey, 16);
	struct snap s;
	uint32_t gone, qpns[6];
	struct tqp *t = tqp_new(IBV_QPT_RC, NULL);

	TEST_ASSERT(t != NULL, "QP");
	gone = t->qpn;
	tqp_destroy(t);
	qpns[0] = 0;
	qpns[1] = 1;
	qpns[2] = DROCE_QPN_BASE - 1;
	qpns[3] = DROCE_QPN_BASE + DROCE_MAX_QP - 1;
	qpns[4] = 0xffffff;
	qpns[5] = gone;
	snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(qpns); i++) {
		build(&F, IBV_OPCODE_RC_SEND_ONLY, qpns[i], RQ_PSN, NULL, d, sizeof(d));
		CHECK(inj(&F));
		build(&F, IBV_OPCODE_UD_SEND_ONLY, qpns[i], 0, &deth, d, sizeof(d));
		CHECK(inj(&F));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_no_qp", 2 * RTE_DIM(qpns)));

	snap(&s);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.rc->qpn, 0, &deth, d, sizeof(d));
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.uc->qpn, 0, &deth, d, sizeof(d));
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.ud->qpn, 0, NULL, d, sizeof(d));
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_SEND_ONLY, W.uc->qpn, W.uc->epsn, NULL, d, sizeof(d));
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, W.uc->qpn, psn_add(W.uc->spsn, -1), &aeth, NULL, 0);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, W.ud->qpn, 0, &reth, NULL, 0);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, W.uc->qpn, W.uc->epsn, &reth, d, sizeof(d));
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_no_qp", 8));
	CHECK(expect_silence());
	CHECK(no_completion(W.rc));
	CHECK(no_completion(W.uc));
	CHECK(no_completion(W.ud));
	return finish();
}

static int
test_ud_qkey_length_and_no_wqe(void)
{
	uint8_t d[UD_MTU + 4];
	struct snap s;
	struct ext x;
	struct tqp *small = tqp_new(IBV_QPT_UD, &(struct qopt){ .nrecv = 2, .recv_len = 100 });
	struct tqp *none = tqp_new(IBV_QPT_UD, &(struct qopt){ .nrecv = -1 });

	TEST_ASSERT(small != NULL && none != NULL, "QPs");
	fill(d, sizeof(d), 8);
	snap(&s);
	x = x_deth(0x22222222, PEER_QPN);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(inj(&F));
	x = x_deth(0, PEER_QPN);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(inj(&F));
	x = x_deth(QKEY ^ 0x80000000u, PEER_QPN);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_qkey", 3));
	CHECK(no_completion(W.ud));

	/* longer than the IB MTU */
	snap(&s);
	x = x_deth(QKEY, PEER_QPN);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, UD_MTU + 1);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, UD_MTU + 4);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 2));
	CHECK(no_completion(W.ud));

	/* no receive WQE */
	snap(&s);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, none->qpn, 0, &x, d, 32);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_no_wqe", 1));
	CHECK(no_completion(none));

	/* longer than the receive buffer: a local length error, the next WQE is fine */
	mr_save();
	build(&F, IBV_OPCODE_UD_SEND_ONLY, small->qpn, 0, &x, d, 100);
	CHECK(inj(&F));
	CHECK(settle());
	{
		struct ibv_wc wc;

		TEST_ASSERT_EQ(poll_for(small->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	}
	CHECK(mr_same());
	CHECK(inject_send_only(small, 0, d, 100 - ROCE_GRH_LEN));
	CHECK(settle());
	CHECK(expect_recv(small, d, 100 - ROCE_GRH_LEN));
	TEST_ASSERT_EQ(qp_state(small), IBV_QPS_RTS);

	/* the right Q_Key, with immediate data */
	x = x_cat(x_deth(QKEY, 0x123456), x_imm(0xdeadbeef));
	build(&F, IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, W.ud->qpn, 0, &x, d, 32);
	CHECK(inj(&F));
	CHECK(settle());
	{
		struct ibv_wc wc;

		TEST_ASSERT_EQ(poll_for(W.ud->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.src_qp, 0x123456);
		TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "imm");
		TEST_ASSERT_EQ(wc.imm_data, 0xdeadbeef);
		TEST_ASSERT_EQ(wc.byte_len, 32 + ROCE_GRH_LEN);
	}
	CHECK(expect_silence());
	return finish();
}

/* PSN ahead: one NAK (sequence error) for the gap, not one per packet. */
static int
test_rc_psn_ahead_naks_once(void)
{
	struct tqp *q = W.rc;
	uint8_t d[32];
	struct snap s;

	fill(d, sizeof(d), 10);
	snap(&s);
	for (uint32_t i = 0; i < 5; i++)
		CHECK(inject_send_only(q, psn_add(q->epsn, 10 + i), d, sizeof(d)));
	CHECK(inject_send_only(q, psn_add(q->epsn, 0x7fffff), d, sizeof(d)));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", 6));
	TEST_ASSERT_EQ(sdelta(&s, "naks_sent"), 1);
	CHECK(expect_one_aeth(q->epsn, AETH_NAK_PSN_SEQ));
	CHECK(no_completion(q));
	TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);

	/* the expected PSN is taken; a new gap NAKs again */
	CHECK(inject_send_only(q, q->epsn, d, sizeof(d)));
	CHECK(settle());
	CHECK(expect_recv(q, d, sizeof(d)));
	CHECK(expect_one_aeth(q->epsn, AETH_ACK));
	q->epsn = psn_add(q->epsn, 1);
	snap(&s);
	CHECK(inject_send_only(q, psn_add(q->epsn, 3), d, sizeof(d)));
	CHECK(inject_send_only(q, psn_add(q->epsn, 4), d, sizeof(d)));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", 2));
	CHECK(expect_one_aeth(q->epsn, AETH_NAK_PSN_SEQ));
	CHECK(no_completion(q));
	return finish();
}

/* PSN behind: acknowledged again, never applied again. */
static int
test_rc_duplicates_reacked_not_reapplied(void)
{
	struct tqp *q = W.rc;
	uint8_t d[32], e[32];
	struct ext r;
	struct snap s;
	uint32_t p0 = q->epsn;

	fill(d, sizeof(d), 11);
	fill(e, sizeof(e), 12);
	CHECK(inject_send_only(q, p0, d, sizeof(d)));
	r = x_reth(va(TGT_OFF), W.mr->rkey, sizeof(d));
	build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, q->qpn, psn_add(p0, 1), &r, d, sizeof(d));
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_recv(q, d, sizeof(d)));
	TEST_ASSERT(memcmp(W.buf + TGT_OFF, d, sizeof(d)) == 0, "WRITE applied");
	{
		/* one coalesced ACK, or two (--lcore may split the burst) */
		int n = collect_n(outf, OUT_MAX, 1);
		struct po o;

		TEST_ASSERT(n == 1 || n == 2, "%d ACKs", n);
		CHECK(parse_out(&outf[n - 1], &o));
		TEST_ASSERT_EQ(o.psn, psn_add(p0, 1));
	}
	q->epsn = psn_add(p0, 2);

	mr_save();
	snap(&s);
	CHECK(inject_send_only(q, p0, e, sizeof(e)));
	CHECK(settle());
	CHECK(expect_one_aeth(psn_add(q->epsn, -1), AETH_ACK));
	build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, q->qpn, psn_add(p0, 1), &r, e, sizeof(e));
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_one_aeth(psn_add(q->epsn, -1), AETH_ACK));
	CHECK(inject_send_only(q, psn_add(q->epsn, -1000), e, sizeof(e)));
	CHECK(settle());
	CHECK(expect_one_aeth(psn_add(q->epsn, -1), AETH_ACK));
	CHECK(drops_only(&s, NULL, 0));
	TEST_ASSERT_EQ(sdelta(&s, "rx_dup"), 3);
	CHECK(mr_same());
	CHECK(no_completion(q));
	TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);
	return finish();
}

/* An RC opcode-sequence or length violation: NAK (invalid request), ERR, flush. */
static int
rc_killed_by(const char *what, const struct frame *fs, int nf, int nok, uint8_t syn,
	     const char *counter)
{
	struct tqp *q = tqp_new(IBV_QPT_RC, NULL);
	struct frame *f = malloc(sizeof(*f));
	struct snap s;
	uint32_t bad_psn;
	int ret = -1;

	if (q == NULL || f == NULL)
		goto out;
	mr_save();
	snap(&s);
	for (int i = 0; i < nf; i++) {
		*f = fs[i];
		/* retarget the template at this QP and its PSNs */
		f_bth(f)->qpn = rte_cpu_to_be_32(q->qpn);
		f_bth(f)->apsn = rte_cpu_to_be_32((rte_be_to_cpu_32(f_bth(f)->apsn) & 0xff000000u) |
						  psn_add(q->epsn, i));
		seal(f);
		if (inj(f))
			goto out;
	}
	bad_psn = psn_add(q->epsn, nok);
	if (settle())
		goto out;
	if (counter != NULL ? drops_only(&s, counter, 1) : drops_only(&s, NULL, 0))
		goto out;
	if (sdelta(&s, "naks_sent") != 1) {
		fprintf(stderr, "  naks_sent moved by %" PRIu64 "\n", sdelta(&s, "naks_sent"));
		goto out;
	}
	if (expect_nak(bad_psn, syn))
		goto out;
	if (expect_err_and_flush(q, RX_PER_QP))
		goto out;
	/* in ERR, requests are dropped as such */
	snap(&s);
	if (inject_send_only(q, psn_add(bad_psn, 1), f->b, 8) || settle() ||
	    drops_only(&s, "rx_drop_qp_state", 1) || expect_silence())
		goto out;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "  case: %s\n", what);
	free(f);
	tqp_destroy(q);
	return ret;
}

static void
tmpl(struct frame *f, uint8_t op, const struct ext *x, const uint8_t *d, uint32_t len)
{
	build(f, op, 0, 0, x, d, len);
}

static int
test_rc_opcode_sequence_errors(void)
{
	static uint8_t d[2 * PMTU];
	struct frame *fs = calloc(3, sizeof(*fs));
	struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, 3 * PMTU);

	TEST_ASSERT(fs != NULL, "alloc");
	fill(d, sizeof(d), 13);
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_MIDDLE first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_LAST, NULL, d, 16);
	CHECK(rc_killed_by("SEND_LAST first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("WRITE_MIDDLE first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, &(struct ext){ .n = 4 }, d, 16);
	CHECK(rc_killed_by("WRITE_LAST_IMM first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_FIRST, SEND_FIRST", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_ONLY, NULL, d, 16);
	CHECK(rc_killed_by("SEND_FIRST, SEND_ONLY", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_FIRST, WRITE_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_READ_REQUEST, &r, NULL, 0);
	CHECK(rc_killed_by("SEND_FIRST, READ", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, &r, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_LAST, NULL, d, 16);
	CHECK(rc_killed_by("WRITE_FIRST, SEND_LAST", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	/* only the last packet may be shorter than the path MTU */
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU / 2);
	CHECK(rc_killed_by("short SEND_FIRST", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_MIDDLE, NULL, d, PMTU - 4);
	CHECK(rc_killed_by("short SEND_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, &r, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, 8);
	CHECK(rc_killed_by("short WRITE_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	free(fs);

	/* a message longer than the receive buffer (4136 bytes): LOC_LEN_ERR, NAK, ERR */
	{
		struct tqp *q = tqp_new(IBV_QPT_RC, NULL);
		struct ibv_wc wc;
		struct snap s;

		TEST_ASSERT(q != NULL, "QP");
		mr_save();
		snap(&s);
		for (uint32_t i = 0; i < 5; i++) {
			build(&F, i ? IBV_OPCODE_RC_SEND_MIDDLE : IBV_OPCODE_RC_SEND_FIRST, q->qpn,
			      psn_add(q->epsn, i), NULL, d, PMTU);
			CHECK(inj(&F));
		}
		CHECK(settle());
		CHECK(drops_only(&s, NULL, 0));
		CHECK(expect_nak(psn_add(q->epsn, 4), AETH_NAK_INV_REQ));
		TEST_ASSERT_EQ(poll_for(q->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
		/* the receive buffer may hold part of it; its neighbour may not */
		CHECK(mr_same_except(q->area * QP_AREA, q->area * QP_AREA + RECV_LEN));
		CHECK(expect_err_and_flush(q, RX_PER_QP - 1));
		tqp_destroy(q);
	}
	return finish();
}

/* Longer than the path MTU: dropped (bad length), the QP keeps going. */
static int
test_payload_longer_than_path_mtu(void)
{
	static uint8_t d[PMTU + 4];
	struct snap s;

	fill(d, sizeof(d), 14);
	snap(&s);
	CHECK(inject_send_only(W.rc, W.rc->epsn, d, PMTU + 1));
	CHECK(inject_send_only(W.rc, W.rc->epsn, d, PMTU + 4));
	CHECK(inject_send_only(W.uc, W.uc->epsn, d, PMTU + 1));
	build(&F, IBV_OPCODE_RC_SEND_FIRST, W.rc->qpn, W.rc->epsn, NULL, d, PMTU + 4);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 4));
	CHECK(no_completion(W.rc));
	CHECK(no_completion(W.uc));
	TEST_ASSERT_EQ(qp_state(W.rc), IBV_QPS_RTS);
	TEST_ASSERT_EQ(qp_state(W.uc), IBV_QPS_RTS);
	drain();
	/* exactly one MTU is fine on both */
	CHECK(inject_send_only(W.rc, W.rc->epsn, d, PMTU));
	CHECK(inject_send_only(W.uc, W.uc->epsn, d, PMTU));
	CHECK(settle());
	CHECK(expect_recv(W.rc, d, PMTU));
	CHECK(expect_recv(W.uc, d, PMTU));
	CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
	return finish();
}

/* UC: sequence errors drop the message silently, the next one arrives. */
static int
test_uc_sequence_errors_drop_message(void)
{
	struct tqp *q = W.uc;
	static uint8_t d[2 * PMTU];
	struct snap s;

	fill(d, sizeof(d), 15);
	snap(&s);
	build(&F, IBV_OPCODE_UC_SEND_MIDDLE, q->qpn, q->epsn, NULL, d, PMTU);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UC_SEND_LAST, q->qpn, psn_add(q->epsn, 1), NULL, d, 16);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 1));
	CHECK(expect_silence());
	CHECK(no_completion(q));
	q->epsn = psn_add(q->epsn, 2);
	/* FIRST, then a FIRST: the second message is dropped with the first */
	build(&F, IBV_OPCODE_UC_SEND_FIRST, q->qpn, q->epsn, NULL, d, PMTU);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UC_SEND_FIRST, q->qpn, psn_add(q->epsn, 1), NULL, d, PMTU);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_UC_SEND_LAST, q->qpn, psn_add(q->epsn, 2), NULL, d, 16);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(no_completion(q));
	q->epsn = psn_add(q->epsn, 3);
	CHECK(inject_send_only(q, q->epsn, d, 64));
	CHECK(settle());
	CHECK(expect_recv(q, d, 64));
	CHECK(expect_silence());
	TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);

	/* WRITE_LAST_IMM with no receive WQE: that message is dropped, not the next */
	q = tqp_new(IBV_QPT_UC, &(struct qopt){ .nrecv = -1 });
	TEST_ASSERT(q != NULL, "QP");
	snap(&s);
	{
		struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, PMTU + 16);

		build(&F, IBV_OPCODE_UC_RDMA_WRITE_FIRST, q->qpn, q->epsn, &r, d, PMTU);
		CHECK(inj(&F));
		build(&F, IBV_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, q->qpn, psn_add(q->epsn, 1),
		      &(struct ext){ .n = 4 }, d, 16);
		CHECK(inj(&F));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_no_wqe", 1));
	CHECK(post_recvs(q, 1));
	CHECK(inject_send_only(q, psn_add(q->epsn, 2), d, 64));
	CHECK(settle());
	CHECK(expect_recv(q, d, 64));
	CHECK(expect_silence());
	tqp_destroy(q);
	return finish();
}

/* RDMA WRITE outside what the R_Key allows: remote access NAK, ERR, nothing written. */
static int
test_rdma_write_bad_reth(void)
{
	static uint8_t d[64];
	struct frame *fs = calloc(2, sizeof(*fs));
	struct {
		const char *what;
		uint64_t va;
		uint32_t rkey, len, paylen;
		uint8_t syn;
	} c[] = {
		{ "length beyond the MR", va(0), W.mr->rkey, MR_LEN + 1, 16, AETH_NAK_REM_ACC },
		{ "last bytes beyond the MR", va(MR_LEN - 8), W.mr->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "before the MR", va(0) - 8, W.mr->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "va+len wraps 2^64", UINT64_MAX - 15, W.mr->rkey, 64, 16, AETH_NAK_REM_ACC },
		{ "va+len wraps 2^64 (2)", UINT64_MAX - 0x7fff, W.mr->rkey, 0x10000, 16, AETH_NAK_REM_ACC },
		{ "4 GiB - 1", va(TGT_OFF), W.mr->rkey, UINT32_MAX, 16, AETH_NAK_REM_ACC },
		{ "rkey 0", va(TGT_OFF), 0, 16, 16, AETH_NAK_REM_ACC },
		{ "unknown rkey", va(TGT_OFF), W.mr->rkey + (1u << 16), 16, 16, AETH_NAK_REM_ACC },
		{ "stale generation", va(TGT_OFF), W.mr->rkey ^ 0x80, 16, 16, AETH_NAK_REM_ACC },
		{ "rkey of another PD", (uintptr_t)W.buf2, W.mr2->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "rkey without remote write", (uintptr_t)W.buf3, W.mr3->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "payload beyond the RETH length", va(TGT_OFF), W.mr->rkey, 16, 32, AETH_NAK_INV_REQ },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	fill(d, sizeof(d), 16);
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext r = x_reth(c[i].va, c[i].rkey, c[i].len);

		build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_ONLY, 0, 0, &r, d, c[i].paylen);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
		CHECK(mr_same());
		CHECK(memory_intact());
	}
	/* WRITE_ONLY_WITH_IMM too */
	{
		struct ext r = x_cat(x_reth(va(MR_LEN - 8), W.mr->rkey, 16), x_imm(1));

		build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, 0, &r, d, 16);
		CHECK(rc_killed_by("WRITE_ONLY_IMM beyond the MR", fs, 1, 0, AETH_NAK_REM_ACC, NULL));
		CHECK(mr_same());
	}
	/* FIRST within its RETH, LAST carrying more than the RETH has left */
	{
		static uint8_t big[PMTU];
		struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, PMTU + 16);

		fill(big, sizeof(big), 17);
		build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, 0, 0, &r, big, PMTU);
		build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST, 0, 0, NULL, d, 32);
		CHECK(rc_killed_by("LAST beyond the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(mr_same_except(TGT_OFF, TGT_OFF + PMTU));
		/* LAST leaving part of the RETH length unwritten */
		build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST, 0, 0, NULL, d, 8);
		CHECK(rc_killed_by("LAST short of the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(mr_same_except(TGT_OFF, TGT_OFF + PMTU + 8));
		/* the same with immediate data: the receive WQE it took still flushes */
		build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0, 0,
		      &(struct ext){ .n = 4 }, d, 8);
		CHECK(rc_killed_by("LAST_IMM short of the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(mr_same_except(TGT_OFF, TGT_OFF + PMTU + 8));
	}
	/* C9-88: a zero-length WRITE has no R_Key to check; it is acknowledged */
	{
		struct ext r = x_reth(0, 0, 0);
		struct snap s;

		mr_save();
		snap(&s);
		build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, W.rc->qpn, W.rc->epsn, &r, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		CHECK(drops_only(&s, NULL, 0));
		CHECK(expect_one_aeth(W.rc->epsn, AETH_ACK));
		CHECK(mr_same());
		CHECK(no_completion(W.rc));
		TEST_ASSERT_EQ(qp_state(W.rc), IBV_QPS_RTS);
	}
	free(fs);
	return finish();
}

static int
test_rdma_read_bad_requests(void)
{
	struct frame *fs = calloc(8, sizeof(*fs));
	struct {
		const char *what;
		uint64_t va;
		uint32_t rkey, len;
		uint8_t syn;
	} c[] = {
		{ "2^31 bytes", va(0), W.mr->rkey, 1u << 31, AETH_NAK_REM_ACC },
		{ "4 GiB - 1 (longer than a message)", va(0), W.mr->rkey, UINT32_MAX, AETH_NAK_INV_REQ },
		{ "beyond the MR", va(MR_LEN - 64), W.mr->rkey, 65, AETH_NAK_REM_ACC },
		{ "before the MR", va(0) - 1, W.mr->rkey, 8, AETH_NAK_REM_ACC },
		{ "va+len wraps", UINT64_MAX - 3, W.mr->rkey, 8, AETH_NAK_REM_ACC },
		{ "rkey 0", va(0), 0, 8, AETH_NAK_REM_ACC },
		{ "rkey of another PD", (uintptr_t)W.buf2, W.mr2->rkey, 8, AETH_NAK_REM_ACC },
		{ "rkey without remote read", (uintptr_t)W.buf3, W.mr3->rkey, 8, AETH_NAK_REM_ACC },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext r = x_reth(c[i].va, c[i].rkey, c[i].len);

		build(&fs[0], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
	}
	/* longer than a message may be (2^31), inside a 4 GiB MR: invalid request */
	{
		size_t len = (4ull << 30) + SMALL_LEN;
		void *big = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct ibv_mr *mr;

		TEST_ASSERT(big != MAP_FAILED, "mmap 4 GiB");
		mr = ibv_reg_mr(W.pd, big, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (mr == NULL)
			munmap(big, len);
		TEST_ASSERT(mr != NULL, "4 GiB MR");
		for (int i = 0; i < 2; i++) {
			struct ext r = x_reth((uintptr_t)big, mr->rkey, i ? UINT32_MAX : (1u << 31) + 1);
			int ret;

			build(&fs[0], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
			ret = rc_killed_by(i ? "READ of 4 GiB - 1" : "READ of 2^31 + 1", fs, 1, 0,
					   AETH_NAK_INV_REQ, NULL);
			if (ret) {
				ibv_dereg_mr(mr);
				munmap(big, len);
			}
			CHECK(ret);
		}
		ibv_dereg_mr(mr);
		munmap(big, len);
	}
	/* more READs at once than max_dest_rd_atomic (4) */
	if (inl) {
		for (int i = 0; i < 5; i++) {
			struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, 8);

			build(&fs[i], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
		}
		/*
		 * The first four are answered before the NAK; rc_killed_by wants
		 * exactly one frame, so check this one by hand.
		 */
		{
			struct tqp *q = tqp_new(IBV_QPT_RC, NULL);
			int n, naks = 0, resps = 0;
			struct po o;

			TEST_ASSERT(q != NULL, "QP");
			for (int i = 0; i < 5; i++) {
				f_bth(&fs[i])->qpn = rte_cpu_to_be_32(q->qpn);
				f_bth(&fs[i])->apsn = rte_cpu_to_be_32(1u << 31 | psn_add(q->epsn, i));
				seal(&fs[i]);
				CHECK(inj(&fs[i]));
			}
			CHECK(settle());
			n = collect(outf, OUT_MAX);
			for (int i = 0; i < n; i++) {
				CHECK(parse_out(&outf[i], &o));
				if (o.op == IBV_OPCODE_RC_ACKNOWLEDGE && o.syn == AETH_NAK_INV_REQ &&
				    o.psn == psn_add(q->epsn, 4))
					naks++;
				else if (o.op == IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY)
					resps++;
			}
			TEST_ASSERT_EQ(naks, 1);
			TEST_ASSERT(resps <= 4, "%d READ responses", resps);
			CHECK(expect_err_and_flush(q, RX_PER_QP));
			tqp_destroy(q);
		}
	}
	free(fs);

	/* a valid 3-packet READ and a zero-length READ */
	{
		struct tqp *q = W.rc;
		struct ext r = x_reth(va(TGT_OFF + 100), W.mr->rkey, 3000);
		struct po o;
		int n;

		build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, q->qpn, q->epsn, &r, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		n = collect_n(outf, OUT_MAX, 3);
		TEST_ASSERT_EQ(n, 3);
		for (int i = 0; i < 3; i++) {
			static const uint8_t ops[3] = { IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
							IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
							IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST };
			uint32_t len = i < 2 ? PMTU : 3000 - 2 * PMTU;

			CHECK(parse_out(&outf[i], &o));
			TEST_ASSERT_EQ(o.op, ops[i]);
			TEST_ASSERT_EQ(o.psn, psn_add(q->epsn, i));
			TEST_ASSERT_EQ(o.paylen, len);
			TEST_ASSERT(memcmp(o.pay, W.buf + TGT_OFF + 100 + i * PMTU, len) == 0, "READ data");
		}
		q->epsn = psn_add(q->epsn, 3);
		r = x_reth(0, 0, 0);
		build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, q->qpn, q->epsn, &r, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
		CHECK(parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);
		TEST_ASSERT_EQ(o.paylen, 0);
		TEST_ASSERT_EQ(o.psn, q->epsn);
		q->epsn = psn_add(q->epsn, 1);
		TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);
		CHECK(no_completion(q));
	}
	/* a READ request on UC is not an opcode UC has */
	{
		struct ext r = x_reth(va(TGT_OFF), W.mr->rkey, 8);
		struct snap s;

		snap(&s);
		build(&F, IBV_OPCODE_UC + IBV_OPCODE_RDMA_READ_REQUEST, W.uc->qpn, W.uc->epsn, &r, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		CHECK(drops_only(&s, "rx_drop_bad_bth", 1));
		CHECK(expect_silence());
	}
	return finish();
}

static int
test_atomic_bad_requests(void)
{
	struct frame *fs = calloc(1, sizeof(*fs));
	struct {
		const char *what;
		uint8_t op;
		uint64_t va;
		uint32_t rkey;
		uint8_t syn;
	} c[] = {
		{ "unaligned FETCH_ADD", IBV_OPCODE_RC_FETCH_ADD, va(TGT_OFF + 4), W.mr->rkey, AETH_NAK_INV_REQ },
		{ "unaligned CMP_SWAP", IBV_OPCODE_RC_COMPARE_SWAP, va(TGT_OFF + 1), W.mr->rkey, AETH_NAK_INV_REQ },
		{ "atomic beyond the MR", IBV_OPCODE_RC_FETCH_ADD, va(MR_LEN - 4), W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic at the MR's end", IBV_OPCODE_RC_FETCH_ADD, va(MR_LEN), W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic wrapping 2^64", IBV_OPCODE_RC_COMPARE_SWAP, UINT64_MAX - 7, W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic with rkey 0", IBV_OPCODE_RC_FETCH_ADD, va(TGT_OFF), 0, AETH_NAK_REM_ACC },
		{ "atomic on another PD", IBV_OPCODE_RC_FETCH_ADD, (uintptr_t)W.buf2, W.mr2->rkey, AETH_NAK_REM_ACC },
		{ "atomic without remote atomic", IBV_OPCODE_RC_FETCH_ADD, (uintptr_t)W.buf3, W.mr3->rkey, AETH_NAK_REM_ACC },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext x = x_atm(c[i].va, c[i].rkey, 0x1111, 0);

		mr_save();
		build(&fs[0], c[i].op, 0, 0, &x, NULL, 0);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
		CHECK(mr_same());
		CHECK(memory_intact());
	}
	/*
	 * An MR whose iova is aligned differently from its address (found by
	 * fuzz_rx): an aligned VA is unaligned memory, where an 8-byte atomic
	 * is not atomic (or faults). Refused as unaligned, memory untouched.
	 */
	{
		struct ibv_mr *odd = ibv_reg_mr_iova(W.pd, W.buf + TGT_OFF, 4096, 0x1003,
						     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
		struct ext x;

		TEST_ASSERT(odd != NULL, "ibv_reg_mr_iova: %s", strerror(errno));
		x = x_atm(0x1008, odd->rkey, 0x1111, 0);
		mr_save();
		build(&fs[0], IBV_OPCODE_RC_FETCH_ADD, 0, 0, &x, NULL, 0);
		CHECK(rc_killed_by("atomic on unaligned memory", fs, 1, 0, AETH_NAK_INV_REQ, NULL));
		CHECK(mr_same());
		TEST_ASSERT_EQ(ibv_dereg_mr(odd), 0);
	}
	free(fs);
	/* a valid FETCH_ADD, then its duplicate: replayed, not applied twice */
	{
		struct tqp *q = W.rc;
		uint64_t v0, v1;
		struct ext x = x_atm(va(TGT_OFF + 8), W.mr->rkey, 3, 0);
		struct po o;

		memcpy(&v0, W.buf + TGT_OFF + 8, 8);
		build(&F, IBV_OPCODE_RC_FETCH_ADD, q->qpn, q->epsn, &x, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
		CHECK(parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE);
		TEST_ASSERT_EQ(atmack_orig((const struct roce_atmack *)(o.ext + ROCE_AETH_LEN)), v0);
		memcpy(&v1, W.buf + TGT_OFF + 8, 8);
		TEST_ASSERT_EQ(v1, v0 + 3);
		CHECK(inj(&F));
		CHECK(settle());
		TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
		CHECK(parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE);
		TEST_ASSERT_EQ(atmack_orig((const struct roce_atmack *)(o.ext + ROCE_AETH_LEN)), v0);
		memcpy(&v1, W.buf + TGT_OFF + 8, 8);
		TEST_ASSERT_EQ(v1, v0 + 3);
		q->epsn = psn_add(q->epsn, 1);
		TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);
	}
	return finish();
}

/* Acknowledgements for PSNs droce0 never sent: counted, dropped, harmless. */
static int
test_ghost_acks_and_naks(void)
{
	struct tqp *q = W.rc;
	static const uint8_t syns[] = {
		AETH_ACK | AETH_CREDIT_INVALID, AETH_NAK_REM_ACC, AETH_NAK_INV_REQ, AETH_NAK_PSN_SEQ,
		AETH_RNR_NAK | 1, AETH_NAK_REM_OP,
	};
	static const int32_t offs[] = { 0, 1, 5, 0x1000, 0x7fffff, -2, -100, -0x7fffff };
	struct snap s;
	uint32_t k = 0;

	/* nothing outstanding: every PSN but the one before sq_psn is out of the window */
	snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(syns); i++)
		for (unsigned int j = 0; j < RTE_DIM(offs); j++) {
			struct ext a = x_aeth(syns[i], 7);

			build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, offs[j]), &a, NULL, 0);
			CHECK(inj(&F));
			k++;
		}
	/* the PSN before sq_psn: an ACK of it is a harmless duplicate; a NAK of it is a ghost */
	for (unsigned int i = 1; i < RTE_DIM(syns); i++) {
		struct ext a = x_aeth(syns[i], 7);

		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
		CHECK(inj(&F));
		k++;
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", k));
	CHECK(expect_silence());
	CHECK(no_completion(q));
	TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);

	/* a reserved AETH type */
	snap(&s);
	{
		struct ext a = x_aeth(0x40, 0);

		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
		CHECK(inj(&F));
	}
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_bth", 1));
	TEST_ASSERT_EQ(qp_state(q), IBV_QPS_RTS);

	/* with a SEND outstanding, an ACK beyond it is still a ghost */
	{
		struct ibv_wc wc;
		struct ext a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);

		CHECK(post_send(q, IBV_WR_SEND, LOC_OFF, 32, 0x61, 0, 0));
		TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
		snap(&s);
		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, 1), &a, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		CHECK(drops_only(&s, "rx_drop_seq", 1));
		CHECK(no_completion(q));
		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
		TEST_ASSERT_EQ(poll_for(q->scq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, 0x61);
		q->spsn = psn_add(q->spsn, 1);
	}
	CHECK(expect_silence());
	return finish();
}

/* READ responses nobody asked for, or of the wrong size: dropped, nothing written. */
static int
test_read_responses_unexpected_or_wrong(void)
{
	struct tqp *q = W.rc;
	static uint8_t d[2 * PMTU];
	struct ext a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ibv_wc wc;
	struct snap s;
	struct po o;

	fill(d, sizeof(d), 18);
	/* nothing outstanding */
	mr_save();
	snap(&s);
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, psn_add(q->spsn, -1), &a, d, 64);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, q->spsn, NULL, d, PMTU);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, psn_add(q->spsn, 100), &a, d, PMTU);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", 3));
	CHECK(mr_same());
	CHECK(no_completion(q));

	/* a SEND outstanding: a READ response for its PSN is not data for it */
	CHECK(post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0x71, 0, 0));
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	mr_save();
	snap(&s);
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 64);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", 1));
	CHECK(mr_same());
	CHECK(no_completion(q));
	a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);
	build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(poll_for(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	q->spsn = psn_add(q->spsn, 1);

	/* a 100-byte READ outstanding: wrong sizes dropped, the right one lands exactly */
	CHECK(post_send(q, IBV_WR_RDMA_READ, LOC_OFF + 8, 100, 0x72, 0x1000, 0x77));
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	CHECK(parse_out(&outf[0], &o));
	TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_REQUEST);
	TEST_ASSERT_EQ(reth_len((const struct roce_reth *)o.ext), 100);
	mr_save();
	snap(&s);
	a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 2);
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 200);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 99);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, q->spsn, &a, d, PMTU);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 0);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 4));
	CHECK(mr_same());
	CHECK(no_completion(q));
	snap(&s);
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, psn_add(q->spsn, 1), &a, d, 100);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_seq", 1));
	CHECK(mr_same());
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 100);
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(poll_for(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.byte_len, 100);
	TEST_ASSERT(memcmp(W.buf + LOC_OFF + 8, d, 100) == 0, "READ data");
	CHECK(mr_same_except(LOC_OFF + 8, LOC_OFF + 108));
	q->spsn = psn_add(q->spsn, 1);

	/* a 3-packet READ: a response ahead asks again (once), a short MIDDLE is dropped */
	CHECK(post_send(q, IBV_WR_RDMA_READ, LOC_OFF + 4096, 2500, 0x73, 0x2000, 0x77));
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	mr_save();
	snap(&s);
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d, PMTU);
	CHECK(inj(&F));
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	CHECK(parse_out(&outf[0], &o));
	TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_REQUEST);
	TEST_ASSERT_EQ(o.psn, q->spsn);
	CHECK(mr_same());
	build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, q->spsn, &a, d, PMTU);
	CHECK(inj(&F));
	build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d, PMTU - 4);
	CHECK(inj(&G));
	build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d + PMTU, PMTU);
	CHECK(inj(&G));
	build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST, q->qpn, psn_add(q->spsn, 2), &a, d, 2500 - 2 * PMTU + 4);
	CHECK(inj(&G));
	build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST, q->qpn, psn_add(q->spsn, 2), &a, d, 2500 - 2 * PMTU);
	CHECK(inj(&G));
	CHECK(settle());
	TEST_ASSERT_EQ(sdelta(&s, "rx_drop_bad_len"), 2);
	TEST_ASSERT_EQ(poll_for(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 0x73);
	TEST_ASSERT(memcmp(W.buf + LOC_OFF + 4096, d, PMTU) == 0 &&
		    memcmp(W.buf + LOC_OFF + 4096 + PMTU, d + PMTU, PMTU) == 0 &&
		    memcmp(W.buf + LOC_OFF + 4096 + 2 * PMTU, d, 2500 - 2 * PMTU) == 0, "READ data");
	CHECK(mr_same_except(LOC_OFF + 4096, LOC_OFF + 4096 + 2500));
	q->spsn = psn_add(q->spsn, 3);
	CHECK(no_completion(q));
	CHECK(expect_silence());
	return finish();
}

static int
test_atomic_ack_short_or_long(void)
{
	struct tqp *q = W.rc;
	struct ext a = x_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ext full = a;
	uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_wc wc;
	struct snap s;
	uint64_t v;

	atmack_init((struct roce_atmack *)(full.b + full.n), 0x0102030405060708ull);
	full.n += ROCE_ATMACK_LEN;
	/* nothing outstanding: a short one is truncated */
	snap(&s);
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, d, 4);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", 2));

	/* a FETCH_ADD outstanding */
	memset(W.buf + LOC_OFF, 0x5a, 16);
	CHECK(post_send(q, IBV_WR_ATOMIC_FETCH_AND_ADD, LOC_OFF, 8, 0x81, 0x3000, 0x77));
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	mr_save();
	snap(&s);
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(inj(&F));
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &a, d, 4);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", 2));
	snap(&s);
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &full, d, 8);	/* 8 too many */
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_bad_len", 1));
	CHECK(mr_same());
	CHECK(no_completion(q));
	build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &full, NULL, 0);
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(poll_for(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	memcpy(&v, W.buf + LOC_OFF, 8);
	TEST_ASSERT_EQ(v, 0x0102030405060708ull);
	CHECK(mr_same_except(LOC_OFF, LOC_OFF + 8));
	q->spsn = psn_add(q->spsn, 1);
	CHECK(expect_silence());
	return finish();
}

static void
arp_frame(struct frame *f, uint16_t op, rte_be32_t sip, const struct rte_ether_addr *sha, rte_be32_t tip)
{
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(f->b + RTE_ETHER_HDR_LEN);

	memset(f->b, 0, 60);
	memset(&f_eth(f)->dst_addr, 0xff, 6);
	f_eth(f)->src_addr = *sha;
	f_eth(f)->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = *sha;
	arp->arp_data.arp_sip = sip;
	arp->arp_data.arp_tip = tip;
	f->len = 60;
}

static int
test_arp_malformed(void)
{
	static const struct rte_ether_addr evil = {{ 0x02, 0xee, 0xee, 0xee, 0xee, 0xee }};
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(G.b + RTE_ETHER_HDR_LEN);
	struct snap s;
	struct po o;
	int k = 0;

	arp_frame(&F, RTE_ARP_OP_REQUEST, peer_ip, &raw_mac, dev_ip);
	snap(&s);
	for (uint32_t len = RTE_ETHER_HDR_LEN; len < RTE_ETHER_HDR_LEN + sizeof(*arp); len += 3, k++)
		CHECK(inject_len(&F, len));
	G = F; arp->arp_hlen = 8; CHECK(inj(&G)); k++;
	G = F; arp->arp_hlen = 0; CHECK(inj(&G)); k++;
	G = F; arp->arp_plen = 16; CHECK(inj(&G)); k++;
	G = F; arp->arp_plen = 0; CHECK(inj(&G)); k++;
	G = F; arp->arp_hardware = rte_cpu_to_be_16(6); CHECK(inj(&G)); k++;
	G = F; arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6); CHECK(inj(&G)); k++;
	G = F; arp->arp_data.arp_tip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 7)); CHECK(inj(&G)); k++;
	G = F; arp->arp_opcode = rte_cpu_to_be_16(0x1234); CHECK(inj(&G)); k++;
	CHECK(settle());
	TEST_ASSERT_EQ(sdelta(&s, "rx_arp"), k);
	TEST_ASSERT_EQ(sdelta(&s, "tx_arp"), 0);
	/* all but the well-formed one for another IP count as malformed */
	CHECK(drops_only(&s, "rx_drop_bad_arp", k - 1));
	CHECK(expect_silence());

	/* a well-formed request is answered */
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
	CHECK(parse_out(&outf[0], &o));
	TEST_ASSERT(o.arp, "an ARP reply");
	arp = (struct rte_arp_hdr *)(outf[0].b + RTE_ETHER_HDR_LEN);
	TEST_ASSERT_EQ(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY);
	TEST_ASSERT(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &dev_mac), "sha");
	TEST_ASSERT_EQ(arp->arp_data.arp_sip, dev_ip);
	TEST_ASSERT_EQ(arp->arp_data.arp_tip, peer_ip);
	TEST_ASSERT(rte_is_same_ether_addr(&f_eth(&outf[0])->dst_addr, &raw_mac), "reply to the asker");

	/* a request and a reply claiming 10.0.0.2 from another MAC: the static entry stays */
	arp_frame(&G, RTE_ARP_OP_REQUEST, peer_ip, &evil, dev_ip);
	CHECK(inj(&G));
	arp_frame(&G, RTE_ARP_OP_REPLY, peer_ip, &evil, dev_ip);
	CHECK(inj(&G));
	arp_frame(&G, RTE_ARP_OP_REQUEST, peer_ip, &evil, peer_ip);	/* gratuitous */
	CHECK(inj(&G));
	CHECK(settle());
	drain();
	/* finish() checks droce0 still sends to 10.0.0.2 at the raw port's MAC */
	return finish();
}

/*
 * The one frame droce0 sent (within the usual wait): an ARP request for @tip
 * (@mac NULL), or an RC ACKNOWLEDGE of @psn to @mac.
 */
static int
expect_frame_to(const struct rte_ether_addr *mac, rte_be32_t tip, uint32_t psn)
{
	struct frame *f = &outf[0];
	int n = collect_n(outf, OUT_MAX, 1);

	if (n != 1) {
		fprintf(stderr, "  expected one frame from droce0, got %d\n", n);
		return -1;
	}
	if (mac == NULL) {
		const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(f->b + RTE_ETHER_HDR_LEN);

		if (f_eth(f)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP) ||
		    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) || arp->arp_data.arp_tip != tip) {
			fprintf(stderr, "  expected an ARP request\n");
			return -1;
		}
		return 0;
	}
	if (f_eth(f)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    !rte_is_same_ether_addr(&f_eth(f)->dst_addr, mac) || f_ip(f)->dst_addr != tip ||
	    bth_opcode(f_bth(f)) != IBV_OPCODE_RC_ACKNOWLEDGE || bth_psn(f_bth(f)) != psn) {
		char m[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(m, sizeof(m), &f_eth(f)->dst_addr);
		fprintf(stderr, "  expected an ACK of psn 0x%06x; got type 0x%04x to %s, opcode 0x%02x psn 0x%06x\n",
			psn, rte_be_to_cpu_16(f_eth(f)->ether_type), m, bth_opcode(f_bth(f)),
			bth_psn(f_bth(f)));
		return -1;
	}
	return 0;
}

/*
 * A peer droce0 has no ARP entry for: while droce0's own ARP request goes
 * unanswered, the peer's next valid request (its retry) tells droce0 where
 * to send the ACK, instead of the peer's retries running out; a gratuitous
 * ARP from that IP moves the entry to the new MAC (a restarted peer). A
 * static entry never moves (test_arp_malformed).
 */
static int
test_neigh_learned_from_requests_and_gratuitous_arp(void)
{
	static const struct rte_ether_addr mac_x = {{ 0x02, 0, 0, 0, 0x33, 0x01 }};
	static const struct rte_ether_addr mac_y = {{ 0x02, 0, 0, 0, 0x33, 0x02 }};
	const rte_be32_t ip3 = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 3));
	struct tqp *q = tqp_new(IBV_QPT_RC, &(struct qopt){ .peer_ip = ip3 });
	uint8_t d[32];

	TEST_ASSERT(q != NULL, "an RC QP towards 10.0.0.3");
	fill(d, sizeof(d), 41);
	build(&F, IBV_OPCODE_RC_SEND_ONLY, q->qpn, q->epsn, NULL, d, sizeof(d));
	f_eth(&F)->src_addr = mac_x;
	f_ip(&F)->src_addr = ip3;
	seal(&F);
	/* received; the ACK waits for ARP */
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_recv(q, d, sizeof(d)));
	CHECK(expect_frame_to(NULL, ip3, 0));
	/* the peer's retry (a duplicate) is ACKed to the MAC it came from, no ARP reply needed */
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_frame_to(&mac_x, ip3, q->epsn));
	q->epsn = psn_add(q->epsn, 1);

	/* the peer comes back with another MAC and announces itself */
	arp_frame(&G, RTE_ARP_OP_REQUEST, ip3, &mac_y, ip3);
	CHECK(inj(&G));
	build(&F, IBV_OPCODE_RC_SEND_ONLY, q->qpn, q->epsn, NULL, d, sizeof(d));
	f_eth(&F)->src_addr = mac_y;
	f_ip(&F)->src_addr = ip3;
	seal(&F);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(expect_recv(q, d, sizeof(d)));
	CHECK(expect_frame_to(&mac_y, ip3, q->epsn));
	q->epsn = psn_add(q->epsn, 1);
	tqp_destroy(q);
	return finish();
}

/* Chained mbufs are linearized; an empty last segment is still the frame itself. */
static int
test_chained_frames(void)
{
	static uint8_t a[3000], b[3000];
	struct ext x = x_deth(QKEY, PEER_QPN);
	struct snap s;
	uint32_t cut[3];

	fill(a, sizeof(a), 21);
	fill(b, sizeof(b), 22);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, a, 200);
	cut[0] = 100;
	CHECK(inject_chain(&F, cut, 1));
	CHECK(settle());
	CHECK(expect_recv(W.ud, a, 200));
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, b, 200);
	cut[0] = F.len;
	CHECK(inject_chain(&F, cut, 1));		/* [whole frame][empty] */
	CHECK(settle());
	CHECK(expect_recv(W.ud, b, 200));
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, b, 3000);
	cut[0] = 0;
	cut[1] = 1000;
	cut[2] = 2000;
	CHECK(inject_chain(&F, cut, 3));		/* [empty][1000][1000][rest] */
	CHECK(settle());
	CHECK(expect_recv(W.ud, b, 3000));
	/* longer than droce0's own mbufs: cannot be linearized */
	snap(&s);
	build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, a, 3000);
	memcpy(F.b + F.len, F.b, 3000);
	F.len += 3000;		/* Ethernet padding, as far as droce0 can tell */
	cut[0] = 2000;
	cut[1] = 4000;
	CHECK(inject_chain(&F, cut, 2));
	CHECK(settle());
	CHECK(drops_only(&s, "rx_drop_truncated", 1));
	CHECK(no_completion(W.ud));
	return finish();
}

/*
 * The application deregisters an MR while the peer is in the middle of a
 * multi-packet RDMA WRITE into it, or while READ responses from it are still
 * owed: nothing more may land in, or be read from, memory that is no longer
 * registered: the responder checks the R_Key again on every packet.
 */
static int
test_mr_deregistered_mid_message(void)
{
	struct tqp *q = W.rc;
	static uint8_t d[PMTU];
	struct ibv_mr *mr;
	struct ext r;
	int n, leaked = 0;

	fill(d, sizeof(d), 31);
	mr = ibv_reg_mr(W.pd, W.buf + TGT_OFF, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT(mr != NULL, "MR");
	mr_save();
	r = x_reth(va(TGT_OFF), mr->rkey, 2 * PMTU);
	build(&F, IBV_OPCODE_RC_RDMA_WRITE_FIRST, q->qpn, q->epsn, &r, d, PMTU);
	CHECK(inj(&F));
	CHECK(settle());
	ibv_dereg_mr(mr);
	build(&F, IBV_OPCODE_RC_RDMA_WRITE_LAST, q->qpn, psn_add(q->epsn, 1), NULL, d, PMTU);
	CHECK(inj(&F));
	CHECK(settle());
	CHECK(mr_same_except(TGT_OFF, TGT_OFF + PMTU));
	CHECK(expect_nak(psn_add(q->epsn, 1), AETH_NAK_REM_ACC));
	CHECK(expect_err_and_flush(q, RX_PER_QP));

	/* READ: 64 responses, 32 sent per iteration; the MR goes after the first batch */
	if (inl) {
		struct tqp *t = tqp_new(IBV_QPT_RC, NULL);
		uint64_t rx;
		struct po o;

		TEST_ASSERT(t != NULL, "QP");
		mr = ibv_reg_mr(W.pd, W.buf + TGT_OFF, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ);
		TEST_ASSERT(mr != NULL, "MR");
		memset(W.buf + TGT_OFF, 0x11, SMALL_LEN);
		r = x_reth(va(TGT_OFF), mr->rkey, SMALL_LEN);
		build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, t->qpn, t->epsn, &r, NULL, 0);
		rx = stat_now("rx_pkts");
		CHECK(inj(&F));
		while (stat_now("rx_pkts") == rx)
			progress();
		ibv_dereg_mr(mr);
		memset(W.buf + TGT_OFF, 0xee, SMALL_LEN);	/* the memory gets reused */
		n = collect(outf, OUT_MAX);
		for (int i = 0; i < n && i < OUT_MAX; i++) {
			CHECK(parse_out(&outf[i], &o));
			for (uint32_t j = 0; j < o.paylen; j++)
				leaked += o.pay[j] == 0xee;
		}
		TEST_ASSERT(leaked == 0, "%d bytes of deregistered memory sent in READ responses", leaked);
		fill(W.buf + TGT_OFF, SMALL_LEN, 1);
		tqp_destroy(t);
	}
	return finish();
}

/* A peer that stops answering, or refuses: error completions, ERR, flushes. */
static int
test_dead_or_refusing_peer(void)
{
	struct ibv_wc wc[4];
	struct tqp *q;
	struct ext a;

	/* silence: retry_cnt 2 at ~4 ms */
	q = tqp_new(IBV_QPT_RC, &(struct qopt){ .timeout = 10, .retry_cnt_p1 = 3 });
	TEST_ASSERT(q != NULL, "QP");
	CHECK(post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0x91, 0, 0));
	CHECK(post_send(q, IBV_WR_RDMA_WRITE, LOC_OFF, 64, 0x92, 0x1000, 0x77));
	TEST_ASSERT_EQ(poll_for(q->scq, wc, 2, 5000), 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, 0x91);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	CHECK(expect_err_and_flush(q, RX_PER_QP));
	tqp_destroy(q);
	drain();

	/* RNR NAKs beyond rnr_retry (1) */
	q = tqp_new(IBV_QPT_RC, &(struct qopt){ .rnr_retry_p1 = 2 });
	TEST_ASSERT(q != NULL, "QP");
	CHECK(post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0xa1, 0, 0));
	a = x_aeth(AETH_RNR_NAK | 1, 0);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 1), 1);
		build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
		CHECK(inj(&F));
		CHECK(settle());
	}
	TEST_ASSERT_EQ(poll_for(q->scq, wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK(expect_err_and_flush(q, RX_PER_QP));
	tqp_destroy(q);
	drain();

	/* a remote access NAK */
	q = tqp_new(IBV_QPT_RC, NULL);
	TEST_ASSERT(q != NULL, "QP");
	CHECK(post_send(q, IBV_WR_RDMA_WRITE, LOC_OFF, 64, 0xb1, 0x1000, 0x77));
	CHECK(post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0xb2, 0, 0));
	TEST_ASSERT_EQ(collect_n(outf, OUT_MAX, 2), 2);
	a = x_aeth(AETH_NAK_REM_ACC, 0);
	build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(inj(&F));
	CHECK(settle());
	TEST_ASSERT_EQ(poll_for(q->scq, wc, 2, 2000), 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, 0xb1);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc[1].wr_id, 0xb2);
	CHECK(expect_err_and_flush(q, RX_PER_QP));
	tqp_destroy(q);
	return finish();
}

/* ------------------------------------------------------------------ */
/* random frames */

static uint64_t rng, rng_seed = 0x9e3779b97f4a7c15ull;
static uint32_t nb_random = 10000;

static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static uint32_t
rndn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static const uint8_t valid_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
	0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
	0x27, 0x28, 0x29, 0x2a, 0x2b, 0x64, 0x65,
};

/* A RoCE frame with plausible headers and random content, sealed. */
static void
random_roce(struct frame *f)
{
	static uint8_t pay[4200];
	struct tqp *targets[3] = { W.rc, W.uc, W.ud };
	struct tqp *t = targets[rndn(3)];
	uint8_t tr = t->type == IBV_QPT_RC ? IBV_OPCODE_RC : t->type == IBV_QPT_UC ? IBV_OPCODE_UC : IBV_OPCODE_UD;
	uint32_t r = rndn(10);
	uint8_t op;
	const struct roce_opcode_info *oi;
	uint32_t dqpn, psn, paylen;
	struct ext x = { 0 };

	/* mostly an opcode of the target's transport, else any valid one, else anything */
	do
		op = valid_ops[rndn(RTE_DIM(valid_ops))];
	while (r < 7 && roce_op_transport(op) != tr);
	if (r == 9)
		op = (uint8_t)rnd();
	oi = &roce_opcode_tbl[op];
	r = rndn(10);

	dqpn = r < 8 ? t->qpn : r == 8 ? DROCE_QPN_BASE + rndn(64) : (uint32_t)rnd() & 0xffffff;
	r = rndn(10);
	psn = r < 4 ? t->epsn : r < 8 ? psn_add(t->epsn, rndn(16) - 8) :
	      r < 9 ? psn_add(t->spsn, rndn(8) - 4) : (uint32_t)rnd() & 0xffffff;
	x.n = oi->flags & ROCE_OPF_VALID ? (uint32_t)oi->hdr_len - ROCE_BTH_LEN : rndn(40);
	if (rndn(10) == 0) {
		int n = (int)x.n + (int)rndn(9) - 4;

		x.n = n < 0 ? 0 : n > 60 ? 60 : (uint32_t)n;
	}
	for (uint32_t i = 0; i < sizeof(x.b); i += 8) {
		uint64_t v = rnd();

		memcpy(x.b + i, &v, 8);
	}
	if (rndn(4) != 0) {
		/* aim the R_Key-bearing headers at real memory */
		static const uint32_t lens[] = { 0, 1, 8, 64, PMTU, PMTU + 1, 3000, 1u << 31, UINT32_MAX };
		uint32_t rkey = rndn(4) ? W.mr->rkey : rndn(2) ? W.mr2->rkey : W.mr3->rkey;
		uint64_t v = rkey == W.mr->rkey ? va(TGT_OFF + rndn(TGT_OFF / 2)) :
			     (uintptr_t)(rkey == W.mr2->rkey ? W.buf2 : W.buf3) + rndn(SMALL_LEN);

		if (rndn(2))
			v &= ~7ull;
		if (oi->flags & ROCE_OPF_RETH)
			reth_init((struct roce_reth *)x.b, v, rkey,
				  rndn(2) ? rndn(8192) : lens[rndn(RTE_DIM(lens))]);
		if (oi->flags & ROCE_OPF_ATMETH)
			atmeth_init((struct roce_atmeth *)x.b, v, rkey, rnd(), rnd());
		if (oi->flags & ROCE_OPF_DETH)
			deth_init((struct roce_deth *)x.b, rndn(4) ? QKEY : (uint32_t)rnd(), (uint32_t)rnd());
		if (oi->flags & ROCE_OPF_AETH) {
			static const uint8_t syns[] = { 0x1f, 0x00, 0x21, 0x3f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x40, 0xff };

			x.b[0] = syns[rndn(RTE_DIM(syns))];
		}
	}
	r = rndn(20);
	paylen = r < 14 ? rndn(PMTU + 2) : r < 17 ? PMTU : r < 19 ? rndn(4200 - 100) : 0;
	if (!(oi->flags & ROCE_OPF_PAYLOAD) && rndn(4) != 0)
		paylen = 0;
	for (uint32_t i = 0; i < paylen; i++)
		pay[i] = (uint8_t)rnd();
	build(f, op, dqpn, psn, &x, pay, paylen);
	if (rndn(20) == 0)
		f_bth(f)->flags = (uint8_t)rnd();
	if (rndn(40) == 0)
		f_bth(f)->pkey = (uint16_t)rnd();
	if (rndn(2) == 0)
		f_bth(f)->apsn |= rte_cpu_to_be_32(1u << 31);
	seal(f);
}

static void
random_junk(struct frame *f)
{
	uint32_t r = rndn(4);

	if (r == 0) {
		/* random bytes, often behind a plausible Ethernet/IPv4 prefix */
		f->len = rndn(160);
		for (uint32_t i = 0; i < f->len; i++)
			f->b[i] = (uint8_t)rnd();
		if (f->len >= RTE_ETHER_HDR_LEN && rndn(2)) {
			f_eth(f)->dst_addr = dev_mac;
			f_eth(f)->ether_type = rte_cpu_to_be_16(rndn(4) ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_ARP);
		}
		return;
	}
	random_roce(f);
	if (r == 1) {
		/* a few flipped bytes anywhere */
		for (uint32_t n = 1 + rndn(4); n; n--)
			f->b[rndn(f->len)] ^= (uint8_t)(1 + rndn(255));
	} else if (r == 2) {
		f->len = rndn(f->len);
	} else {
		/* a random IPv4/UDP header byte, checksums fixed, ICRC left as it was */
		uint32_t off = OFF_IP + rndn(28);

		if (off != OFF_IP + 10 && off != OFF_IP + 11)
			f->b[off] = (uint8_t)rnd();
		f_ip(f)->hdr_checksum = 0;
		f_ip(f)->hdr_checksum = ip_csum(f_ip(f), 20);
	}
}

/* Receive completions after random traffic: each from a WR we posted, sane. */
static int
check_random_completions(struct tqp *q)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(q->rcq, 32, wc)) > 0)
		for (int i = 0; i < n; i++) {
			if ((wc[i].wr_id >> 16) != (uint64_t)q->area || (wc[i].wr_id & 0xffff) >= (uint64_t)q->posted ||
			    wc[i].qp_num != q->qpn ||
			    (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len > q->recv_len &&
			     wc[i].opcode == IBV_WC_RECV)) {
				fprintf(stderr, "  odd completion: wr_id 0x%" PRIx64 " status %s byte_len %u\n",
					wc[i].wr_id, ibv_wc_status_str(wc[i].status), wc[i].byte_len);
				return -1;
			}
			if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR &&
			    wc[i].status != IBV_WC_LOC_LEN_ERR && wc[i].status != IBV_WC_LOC_PROT_ERR) {
				fprintf(stderr, "  receive status %s\n", ibv_wc_status_str(wc[i].status));
				return -1;
			}
		}
	if (ibv_poll_cq(q->scq, 32, wc) != 0) {
		fprintf(stderr, "  a send completion with no send posted\n");
		return -1;
	}
	return n < 0 ? -1 : 0;
}

/* 10000 random frames (seeded), half of them with a valid ICRC. */
/* (--seed=N and --frames=N change them, for fuzzing by hand.) */
static int
test_random_burst_survived(void)
{
	const uint32_t total = nb_random, chunk = 100;
	uint64_t rx0 = stat_now("rx_pkts"), frames_out = 0;
	struct snap s0, s1;

	rng = rng_seed;
	snap(&s0);
	for (uint32_t done = 0; done < total; done += chunk) {
		for (uint32_t i = done; i < done + chunk; i++) {
			if (i % 2 == 0)
				random_roce(&F);
			else
				random_junk(&F);
			CHECK(inj(&F));
			if (i % 64 == 63) {
				/* keep the ring to the test from filling */
				int n = collect(outf, OUT_MAX);

				for (int j = 0; j < RTE_MIN(n, OUT_MAX); j++) {
					struct po o;

					CHECK(parse_out(&outf[j], &o));
				}
				frames_out += n;
			}
		}
		CHECK(settle());
		frames_out += collect(NULL, 0);
		CHECK(memory_intact());
		/* fresh QPs every chunk, so the random traffic keeps reaching live ones */
		{
			struct tqp **qs[3] = { &W.rc, &W.uc, &W.ud };

			for (int j = 0; j < 3; j++) {
				enum ibv_qp_type t = (*qs[j])->type;
				enum ibv_qp_state st = qp_state(*qs[j]);

				TEST_ASSERT(st == IBV_QPS_RTS || (st == IBV_QPS_ERR && t == IBV_QPT_RC),
					    "QP type %d in state %d", t, st);
				CHECK(check_random_completions(*qs[j]));
				tqp_destroy(*qs[j]);
				*qs[j] = tqp_new(t, NULL);
				TEST_ASSERT(*qs[j] != NULL, "QP");
			}
		}
	}
	TEST_ASSERT_EQ(stat_now("rx_pkts") - rx0, total);
	snap(&s1);
	printf("# %u random frames (seed 0x%" PRIx64 "); droce0 sent %" PRIu64 ";", total, rng_seed, frames_out);
	for (int i = 0; i < s1.n; i++)
		if (s1.v[i] != s0.v[i] && strstr(s1.name[i], "bytes") == NULL)
			printf(" %s+%" PRIu64, s1.name[i], s1.v[i] - s0.v[i]);
	printf("\n");
	return finish();
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_builder_icrc_matches_reference_vector),
	TEST_CASE(test_truncated_frames_every_length),
	TEST_CASE(test_ethernet_not_ip_or_not_ours),
	TEST_CASE(test_ipv4_malformed),
	TEST_CASE(test_udp_port_and_length),
	TEST_CASE(test_bad_icrc),
	TEST_CASE(test_bth_opcode_version_pkey),
	TEST_CASE(test_pad_and_payload_lengths),
	TEST_CASE(test_unknown_or_wrong_type_qpn),
	TEST_CASE(test_ud_qkey_length_and_no_wqe),
	TEST_CASE(test_rc_psn_ahead_naks_once),
	TEST_CASE(test_rc_duplicates_reacked_not_reapplied),
	TEST_CASE(test_rc_opcode_sequence_errors),
	TEST_CASE(test_payload_longer_than_path_mtu),
	TEST_CASE(test_uc_sequence_errors_drop_message),
	TEST_CASE(test_rdma_write_bad_reth),
	TEST_CASE(test_rdma_read_bad_requests),
	TEST_CASE(test_atomic_bad_requests),
	TEST_CASE(test_ghost_acks_and_naks),
	TEST_CASE(test_read_responses_unexpected_or_wrong),
	TEST_CASE(test_atomic_ack_short_or_long),
	TEST_CASE(test_arp_malformed),
	TEST_CASE(test_neigh_learned_from_requests_and_gratuitous_arp),
	TEST_CASE(test_chained_frames),
	TEST_CASE(test_mr_deregistered_mid_message),
	TEST_CASE(test_dead_or_refusing_peer),
	TEST_CASE(test_random_burst_survived),
};

/* ------------------------------------------------------------------ */

static int
raw_port_setup(void)
{
	struct rte_eth_conf conf = { 0 };

	if (rte_eth_dev_get_port_by_name("net_ring_h1", &raw_port) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("hostile_pool", 8191, 256, 0,
				       RTE_PKTMBUF_HEADROOM + FRAME_MAX + 64, rte_socket_id());
	if (pool == NULL)
		return -1;
	if (rte_eth_dev_configure(raw_port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(raw_port, 0, 1024, rte_socket_id(), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(raw_port, 0, 1024, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(raw_port) != 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	char args[256];
	struct ibv_device **devs;
	int ndev, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--lcore") == 0)
			inl = false;
		else if (strncmp(argv[i], "--seed=", 7) == 0)
			rng_seed = strtoull(argv[i] + 7, NULL, 0) | 1;
		else if (strncmp(argv[i], "--frames=", 9) == 0)
			nb_random = (uint32_t)strtoul(argv[i] + 9, NULL, 0) / 100 * 100;
	}
	if (h_eal_init(argv[0], "dh", inl ? "0" : "0-1",
		       (const char *const[]){ "--log-level=pmd.rdma.roce:error", NULL }))
		return 1;
	dev_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	peer_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	memset(&peer_gid, 0, sizeof(peer_gid));
	peer_gid.raw[10] = peer_gid.raw[11] = 0xff;
	memcpy(&peer_gid.raw[12], &peer_ip, 4);
	if (droce_ring_pair_create("net_ring_h0", "net_ring_h1") != 0 || raw_port_setup() != 0) {
		fprintf(stderr, "topology set-up failed\n");
		return 1;
	}
	snprintf(args, sizeof(args),
		 "ethdev=net_ring_h0,ip=10.0.0.1,mtu=4200,mac=02:00:00:00:00:01,"
		 "neigh=10.0.0.2@02:00:00:00:00:02");
	if (droce_dev_create(DEV_NAME, args) != 0) {
		fprintf(stderr, "droce_dev_create failed\n");
		return 1;
	}
	devs = ibv_get_device_list(&ndev);
	for (int i = 0; devs != NULL && i < ndev && ctx == NULL; i++)
		if (strcmp(ibv_get_device_name(devs[i]), DEV_NAME) == 0)
			ctx = ibv_open_device(devs[i]);
	if (ctx == NULL || (pump_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0)) == NULL) {
		fprintf(stderr, "cannot open %s\n", DEV_NAME);
		return 1;
	}
	printf("# %s progress\n", inl ? "inline" : "engine lcore");
	rc = DROCE_TEST_MAIN("hostile", cases, setup, teardown);
	ibv_destroy_cq(pump_cq);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return rc;
}
