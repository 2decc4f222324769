/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc.c's engines (table, clmul, avx2, avx512): every one this CPU has
 * gives the table engine's ICRC, over contiguous frames at every length to
 * 600 and a spread to 9000 at every start alignment 0..63, and over chained
 * mbufs split at odd places; the table engine matches a bit-at-a-time CRC,
 * and all of them known answers computed by Python's zlib.crc32 (test_wire.c
 * checks scapy's frames), small frames (the masked-in-registers path) among
 * them; and the sender's pieces (roce_icrc_start, _copy, _more) add up to
 * the whole.
 * No EAL: the mbufs are built by hand, which is all roce_icrc_mbuf() reads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "droce_test.h"
#include "roce_hdr.h"
#include "roce_loc.h"

#define LEN_DENSE	600	/* every length 0..LEN_DENSE */
#define LEN_MAX		9000
#define ALIGN_MAX	64
#define SEGS_MAX	24

static const char *const engines[] = { "table", "clmul", "avx2", "avx512" };
static const char *best;	/* the engine chosen at start-up, put back after each case */

/* a spread of longer lengths: around the engines' step sizes and the MTUs */
static const uint32_t long_lens[] = {
	601, 639, 640, 641, 700, 767, 768, 769, 1000, 1023, 1024, 1025, 1071,
	1100, 1500, 1535, 1536, 1537, 2000, 2047, 2048, 2049, 2100, 3000,
	4095, 4096, 4097, 4136, 4200, 5000, 6001, 7777, 8191, 8192, 8193,
	8960, 8999, 9000,
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(void)
{
	/* xorshift64*: reproducible, no libc state */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dULL) >> 32);
}

static void
fill(uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/*
 * The annex A17.3.3 ICRC one bit at a time over the masked pseudo-packet
 * (test_wire.c has the same reference; this one also takes frames shorter
 * than their headers, masking only the bytes present).
 */
static uint32_t
ref_icrc(const uint8_t *ip, uint32_t len)
{
	static uint8_t buf[8 + LEN_MAX];
	uint32_t ihl = len > 0 ? (ip[0] & 0x0f) * 4U : 0, crc = 0xffffffffU;

	if (ihl < 20)
		ihl = 20;	/* a bogus IHL: the headers are taken as option-less */
	const uint32_t mask[] = {
		1, 8, 10, 11,		/* IPv4: TOS, TTL, checksum */
		ihl + 6, ihl + 7,	/* UDP checksum */
		ihl + 8 + 4,		/* BTH: FECN, BECN, reserved */
	};

	memset(buf, 0xff, 8);
	memcpy(buf + 8, ip, len);
	for (unsigned int i = 0; i < RTE_DIM(mask); i++)
		if (mask[i] < len)
			buf[8 + mask[i]] = 0xff;
	for (uint32_t i = 0; i < 8 + len; i++) {
		crc ^= buf[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320U & (0U - (crc & 1)));
	}
	return ~crc;
}

/* Sets @name if this CPU has it: 1 if set, 0 if not available. */
static int
use_engine(const char *name)
{
	int rc = roce_icrc_engine_set(name);

	if (rc == -ENOTSUP)
		return 0;
	if (rc != 0) {
		fprintf(stderr, "  roce_icrc_engine_set(%s): %d\n", name, rc);
		abort();
	}
	return 1;
}

static int
setup(void)
{
	return roce_icrc_engine_set(best);
}

/* The IPv4 header of a RoCEv2 frame (RC SEND_ONLY to QP 0x11), 40 bytes with UDP and BTH. */
static const uint8_t ip_udp_bth[] = {
	0x45, 0x00, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0xae,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
	0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x68, 0x00,
	0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x00,
};

static int
test_icrc_engine_names(void)
{
	TEST_ASSERT_EQ(roce_icrc_engine_set("crc64"), -EINVAL);
	TEST_ASSERT_EQ(roce_icrc_engine_set(""), -EINVAL);
	TEST_ASSERT_EQ(roce_icrc_engine_set("table"), 0);
	TEST_ASSERT(strcmp(roce_icrc_engine_name(), "table") == 0, "%s", roce_icrc_engine_name());
#if defined(RTE_ARCH_X86_64) || defined(__x86_64__)
	__builtin_cpu_init();
	TEST_ASSERT_EQ(roce_icrc_engine_set("clmul"),
		       __builtin_cpu_supports("pclmul") ? 0 : -ENOTSUP);
	TEST_ASSERT_EQ(roce_icrc_engine_set("avx2"),
		       __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx2") ?
		       0 : -ENOTSUP);
	TEST_ASSERT_EQ(roce_icrc_engine_set("avx512"),
		       __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") ? 0 : -ENOTSUP);
#endif
	for (unsigned int e = 0; e < RTE_DIM(engines); e++)
		if (use_engine(engines[e])) {
			printf("  engine %s: available\n", engines[e]);
			TEST_ASSERT(strcmp(roce_icrc_engine_name(), engines[e]) == 0, "%s",
				    roce_icrc_engine_name());
		}
	return TEST_SUCCESS;
}

/*
 * The engine at start-up: the one DROCE_ICRC names if the CPU has it, else
 * the best the CPU has (meson runs this program with and without it).
 */
static int
test_icrc_start_engine_follows_droce_icrc(void)
{
	const char *env = getenv("DROCE_ICRC");
	const char *want = NULL;

	for (unsigned int e = 0; e < RTE_DIM(engines); e++)
		if (use_engine(engines[e]))
			want = engines[e];
	if (env != NULL) {
		printf("  DROCE_ICRC=%s, start-up engine %s\n", env, best);
		for (unsigned int e = 0; e < RTE_DIM(engines); e++)
			if (strcmp(env, engines[e]) == 0 && use_engine(engines[e]))
				want = env;
	}
	TEST_ASSERT(want != NULL && strcmp(best, want) == 0, "start-up engine %s, want %s",
		    best, want);
	return TEST_SUCCESS;
}

/* Frames of 4000 and 8960 bytes of payload after ip_udp_bth; ICRCs by zlib.crc32. */
static int
test_icrc_known_answers_every_engine(void)
{
	static const struct {
		uint32_t plen, icrc;
	} kat[] = {
		{ 4000, 0x3ef1b9d2 },
		{ 8960, 0x89cc9d51 },
	};
	static uint8_t f[sizeof(ip_udp_bth) + 8960];

	for (unsigned int e = 0; e < RTE_DIM(engines); e++) {
		if (!use_engine(engines[e]))
			continue;
		for (unsigned int k = 0; k < RTE_DIM(kat); k++) {
			uint32_t len = sizeof(ip_udp_bth) + kat[k].plen;

			memcpy(f, ip_udp_bth, sizeof(ip_udp_bth));
			for (uint32_t i = 0; i < kat[k].plen; i++)
				f[sizeof(ip_udp_bth) + i] = (uint8_t)(i * 131 + 7);
			TEST_ASSERT(roce_icrc_ipv4(f, len) == kat[k].icrc, "%s, %u bytes: 0x%08x",
				    engines[e], len, roce_icrc_ipv4(f, len));
			TEST_ASSERT_EQ(ref_icrc(f, len), kat[k].icrc);
		}
	}
	return TEST_SUCCESS;
}

/*
 * Small frames (roce_icrc.c's crc_clmul_small(): IPv4 without options, under
 * 256 bytes after the BTH, masked in registers, tail by an overlapping load)
 * with the variant fields set (TOS, TTL, FECN/BECN) and payloads around the
 * 16-byte steps; ICRCs by zlib.crc32. Each frame also at every alignment
 * 0..15 and alone in a heap block of its exact length, so that ASan sees a
 * load past its end.
 */
static int
test_icrc_small_frames_known_answers_every_engine(void)
{
	static const struct {
		uint32_t plen, icrc;
	} kat[] = {
		{ 0, 0x812e530b },
		{ 1, 0xdb358df5 },
		{ 3, 0x04c62fd3 },
		{ 4, 0x3dd33988 },	/* an ACK: the AETH */
		{ 12, 0xb9676a47 },
		{ 15, 0x93120d64 },
		{ 16, 0x54422f54 },
		{ 17, 0x06ed9d40 },
		{ 24, 0xf7ae7898 },
		{ 64, 0xefea3478 },	/* a 64-byte SEND */
		{ 72, 0x306a3da3 },
		{ 136, 0x91eda664 },
		{ 200, 0x9f8953c1 },
		{ 255, 0x2b404ebd },	/* the small path's largest */
	};
	static uint8_t area[sizeof(ip_udp_bth) + 255 + 16];

	for (unsigned int e = 0; e < RTE_DIM(engines); e++) {
		if (!use_engine(engines[e]))
			continue;
		for (unsigned int k = 0; k < RTE_DIM(kat); k++) {
			uint32_t len = sizeof(ip_udp_bth) + kat[k].plen;
			uint8_t *heap = malloc(len);

			TEST_ASSERT(heap != NULL, "malloc(%u)", len);
			for (uint32_t a = 0; a < 16; a++) {
				uint8_t *f = area + a;

				memcpy(f, ip_udp_bth, sizeof(ip_udp_bth));
				f[1] = 0x02;	/* TOS: ECT(0) */
				f[8] = 0x3f;	/* TTL */
				f[32] = 0xc0;	/* BTH: FECN, BECN */
				for (uint32_t i = 0; i < kat[k].plen; i++)
					f[sizeof(ip_udp_bth) + i] = (uint8_t)(i * 131 + 7);
				TEST_ASSERT(roce_icrc_ipv4(f, len) == kat[k].icrc,
					    "%s, %u bytes at %u: 0x%08x, want 0x%08x", engines[e], len,
					    a, roce_icrc_ipv4(f, len), kat[k].icrc);
				if (a == 0) {
					TEST_ASSERT_EQ(ref_icrc(f, len), kat[k].icrc);
					memcpy(heap, f, len);
				}
			}
			TEST_ASSERT(roce_icrc_ipv4(heap, len) == kat[k].icrc,
				    "%s, %u bytes on the heap: 0x%08x", engines[e], len,
				    roce_icrc_ipv4(heap, len));
			free(heap);
		}
	}
	return TEST_SUCCESS;
}

/*
 * One length, every alignment: the table engine's value (checked against the
 * bitwise reference at alignment 0), then every other engine's. The first
 * byte alternates between an option-less IPv4 header (the usual masked
 * prefix, clmul's two-run path) and a random one (any IHL).
 */
static int
check_len(uint8_t *area, uint32_t len, int *have)
{
	for (uint32_t a = 0; a < ALIGN_MAX; a++) {
		uint8_t *p = area + a;
		uint32_t want;

		fill(p, len);
		if (len > 0 && (a & 1) == 0)
			p[0] = 0x45;
		roce_icrc_engine_set("table");
		want = roce_icrc_ipv4(p, len);
		if (a == 0 || a == 1)
			TEST_ASSERT(want == ref_icrc(p, len), "table, len %u align %u: 0x%08x, 0x%08x",
				    len, a, want, ref_icrc(p, len));
		for (unsigned int e = 1; e < RTE_DIM(engines); e++) {
			uint32_t got;

			if (!have[e])
				continue;
			roce_icrc_engine_set(engines[e]);
			got = roce_icrc_ipv4(p, len);
			TEST_ASSERT(got == want, "%s, len %u align %u: 0x%08x, table 0x%08x",
				    engines[e], len, a, got, want);
		}
	}
	return TEST_SUCCESS;
}

static int
test_icrc_ipv4_engines_agree_every_length_and_alignment(void)
{
	static uint8_t area[LEN_MAX + ALIGN_MAX];
	int have[RTE_DIM(engines)], rc = TEST_SUCCESS;

	for (unsigned int e = 0; e < RTE_DIM(engines); e++)
		have[e] = use_engine(engines[e]);
	for (uint32_t len = 0; len <= LEN_DENSE && rc == TEST_SUCCESS; len++)
		rc = check_len(area, len, have);
	for (unsigned int i = 0; i < RTE_DIM(long_lens) && rc == TEST_SUCCESS; i++)
		rc = check_len(area, long_lens[i], have);
	return rc;
}

/*
 * roce_icrc_start/_more/_copy (the sender's fused copy): a frame whose
 * payload is copied in, summed in pieces at random cuts (headers of 40 to
 * 72 bytes, the payload copied in one to three runs, the rest), or with
 * roce_icrc_start_copy (headers, then the payload in one run), gives
 * roce_icrc_ipv4()'s value of the whole, and the copy is exact, with every
 * engine, at every length to 600 and the long ones, source and destination
 * at their own alignments.
 */
static int
check_pieces(uint32_t len, const int *have)
{
	static uint8_t src[LEN_MAX + ALIGN_MAX], frame[LEN_MAX + 2 * ALIGN_MAX];

	for (uint32_t a = 0; a < ALIGN_MAX; a += 7) {
		uint32_t hl = 40 + (rnd() % 9) * 4;	/* BTH and 0..32 bytes of extension headers */
		uint8_t *s = src + (rnd() % ALIGN_MAX), *f = frame + a;
		uint32_t pay, off, want;

		if (len < hl)
			continue;
		pay = len - hl - (rnd() % 4 == 0 ? rnd() % RTE_MIN(len - hl + 1, 4u) : 0);
		fill(f, len);
		f[0] = 0x45;
		fill(s, pay);
		memcpy(f + hl, s, pay);
		want = roce_icrc_ipv4(f, len);
		memset(f + hl, 0xa5, pay);	/* what the copy must overwrite */
		for (unsigned int e = 0; e < RTE_DIM(engines); e++) {
			uint32_t crc;

			if (!have[e])
				continue;
			roce_icrc_engine_set(engines[e]);
			crc = roce_icrc_start(f, hl);
			off = 0;
			while (off < pay) {
				uint32_t run = rnd() % 3 == 0 ? rnd() % (pay - off) + 1 : pay - off;

				crc = roce_icrc_copy(crc, f + hl + off, s + off, run);
				off += run;
			}
			crc = roce_icrc_more(crc, f + hl + pay, len - hl - pay);
			TEST_ASSERT(~crc == want, "%s, len %u, headers %u, payload %u: 0x%08x, 0x%08x",
				    engines[e], len, hl, pay, ~crc, want);
			TEST_ASSERT(memcmp(f + hl, s, pay) == 0, "%s, len %u: the copy differs",
				    engines[e], len);
			memset(f + hl, 0xa5, pay);
			/* the headers and the whole payload in one call */
			crc = roce_icrc_start_copy(f, hl, f + hl, s, pay);
			crc = roce_icrc_more(crc, f + hl + pay, len - hl - pay);
			TEST_ASSERT(~crc == want, "%s, start_copy, len %u, headers %u, payload %u: "
				    "0x%08x, 0x%08x", engines[e], len, hl, pay, ~crc, want);
			TEST_ASSERT(memcmp(f + hl, s, pay) == 0, "%s, start_copy, len %u: the copy "
				    "differs", engines[e], len);
			memset(f + hl, 0xa5, pay);
		}
	}
	return TEST_SUCCESS;
}

static int
test_icrc_fused_copy_pieces_match_whole(void)
{
	int have[RTE_DIM(engines)], rc = TEST_SUCCESS;

	for (unsigned int e = 0; e < RTE_DIM(engines); e++)
		have[e] = use_engine(engines[e]);
	for (uint32_t len = 40; len <= LEN_DENSE && rc == TEST_SUCCESS; len++)
		rc = check_pieces(len, have);
	for (unsigned int i = 0; i < RTE_DIM(long_lens) && rc == TEST_SUCCESS; i++)
		rc = check_pieces(long_lens[i], have);
	return rc;
}

/*
 * @len bytes of @data (from IPv4 offset @off within it) as a chain of @nseg
 * segments, each at its own alignment in @bufs; the split points are random,
 * so segments of 1 to a few bytes, cutting the headers, come up often.
 */
static struct rte_mbuf *
chain(struct rte_mbuf *mb, uint8_t *bufs, uint32_t seg_room, const uint8_t *data,
      uint32_t total, unsigned int nseg)
{
	uint32_t cut[SEGS_MAX + 1], done = 0;

	cut[0] = 0;
	cut[nseg] = total;
	for (unsigned int s = 1; s < nseg; s++) {
		/* mostly small pieces, sometimes long ones */
		uint32_t step = (rnd() & 3) == 0 ? rnd() % (total + 1) : rnd() % 70;

		cut[s] = RTE_MIN(cut[s - 1] + step, total);
	}
	for (unsigned int s = 0; s < nseg; s++) {
		struct rte_mbuf *m = &mb[s];
		uint16_t headroom = (uint16_t)(rnd() % ALIGN_MAX);
		uint32_t n = cut[s + 1] - cut[s];

		memset(m, 0, sizeof(*m));
		m->buf_addr = bufs + (size_t)s * seg_room;
		m->buf_len = (uint16_t)seg_room;
		m->data_off = headroom;
		m->data_len = (uint16_t)n;
		memcpy((uint8_t *)m->buf_addr + headroom, data + done, n);
		done += n;
		m->next = s + 1 < nseg ? &mb[s + 1] : NULL;
	}
	mb[0].nb_segs = (uint16_t)nseg;
	mb[0].pkt_len = total;
	return &mb[0];
}

static int
test_icrc_mbuf_chains_match_contiguous(void)
{
	static const uint32_t lens[] = {
		0, 1, 12, 20, 39, 40, 41, 47, 48, 63, 64, 65, 100, 127, 128, 129,
		200, 255, 256, 257, 300, 383, 384, 511, 512, 513, 600, 1024, 1100,
		2048, 4096, 4136, 6000, 9000,
	};
	/* each segment may hold the whole frame, behind up to 63 bytes of headroom */
	enum { SEG_ROOM = 14 + LEN_MAX + ALIGN_MAX };
	static struct rte_mbuf mb[SEGS_MAX];
	static uint8_t bufs[SEGS_MAX * SEG_ROOM], data[14 + LEN_MAX];
	int have[RTE_DIM(engines)];

	for (unsigned int e = 0; e < RTE_DIM(engines); e++)
		have[e] = use_engine(engines[e]);
	for (unsigned int i = 0; i < RTE_DIM(lens); i++) {
		for (unsigned int round = 0; round < 40; round++) {
			/* an Ethernet header before the IPv4 one, or none */
			uint32_t off = (round & 1) ? 14 : 0, len = lens[i], want;
			unsigned int nseg = 1 + rnd() % SEGS_MAX;
			struct rte_mbuf *m;

			fill(data, off + len);
			if (len > 0 && (round & 2) == 0)
				data[off] = 0x45;
			roce_icrc_engine_set("table");
			want = roce_icrc_ipv4(data + off, len);
			m = chain(mb, bufs, SEG_ROOM, data, off + len, nseg);
			for (unsigned int e = 0; e < RTE_DIM(engines); e++) {
				uint32_t got;

				if (!have[e])
					continue;
				roce_icrc_engine_set(engines[e]);
				got = roce_icrc_mbuf(m, off, len);
				TEST_ASSERT(got == want, "%s, len %u off %u, %u segs: 0x%08x, want 0x%08x",
					    engines[e], len, off, nseg, got, want);
				/* a length past the chain's end is clamped to it */
				got = roce_icrc_mbuf(m, off, len + 100);
				TEST_ASSERT(got == want, "%s, len %u + 100 off %u: 0x%08x, want 0x%08x",
					    engines[e], len, off, got, want);
			}
		}
	}
	return TEST_SUCCESS;
}

/*
 * roce_ipv4_sum20 (the IPv4 header checksum of transmit and receive) against
 * DPDK's rte_raw_cksum and rte_ipv4_cksum: random headers at both
 * alignments, the all-ones and carry-heavy ones too; a header with the
 * checksum it gives sums to 0xffff, and one flipped bit does not.
 */
static int
test_ipv4_sum20_matches_dpdk(void)
{
	uint8_t buf[64];
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (unsigned int round = 0; round < 200000; round++) {
		unsigned int off = round & 1 ? 2 : 0;
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
		uint16_t want;

		for (unsigned int i = 0; i < sizeof(buf); i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			buf[i] = round < 16 ? (round & 2 ? 0xff : 0xfe) : (uint8_t)(seed >> 56);
		}
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		TEST_ASSERT_EQ(roce_ipv4_sum20(ip), rte_raw_cksum(ip, 20));
		ip->hdr_checksum = 0;
		want = rte_ipv4_cksum(ip);
		ip->hdr_checksum = (uint16_t)~roce_ipv4_sum20(ip);
		TEST_ASSERT(ip->hdr_checksum == want, "round %u: 0x%04x, want 0x%04x", round,
			    ip->hdr_checksum, want);
		TEST_ASSERT_EQ(roce_ipv4_sum20(ip), 0xffff);
		buf[off + 8 + round % 12] ^= (uint8_t)(1u << (round % 8));
		TEST_ASSERT(roce_ipv4_sum20(ip) != 0xffff, "round %u: a flipped bit not seen", round);
	}
	/* the transmit path's checksum from the values, against the header they fill */
	for (unsigned int round = 0; round < 200000; round++) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + 14);
		rte_be32_t sip, dip;
		uint8_t tos, ttl;
		uint32_t l4;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		sip = (rte_be32_t)(seed >> 32);
		dip = (rte_be32_t)seed;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		tos = (uint8_t)(seed >> 56);
		ttl = round % 7 == 0 ? 0 : (uint8_t)(seed >> 48);	/* 0: 64 */
		l4 = round < 4 ? (round & 1 ? 0 : 65535 - 28) : (uint32_t)(seed % (9600 - 28));
		roce_ipv4_udp_fill(ip, sip, dip, (uint16_t)seed, tos, ttl, l4);
		TEST_ASSERT(roce_ipv4_udp_cksum(sip, dip, tos, ttl, l4) == rte_ipv4_cksum(ip),
			    "round %u: 0x%04x, want 0x%04x", round,
			    roce_ipv4_udp_cksum(sip, dip, tos, ttl, l4), rte_ipv4_cksum(ip));
	}
	return TEST_SUCCESS;
}

int
main(void)
{
	static const struct droce_test_case cases[] = {
		TEST_CASE(test_ipv4_sum20_matches_dpdk),
		TEST_CASE(test_icrc_engine_names),
		TEST_CASE(test_icrc_start_engine_follows_droce_icrc),
		TEST_CASE(test_icrc_known_answers_every_engine),
		TEST_CASE(test_icrc_small_frames_known_answers_every_engine),
		TEST_CASE(test_icrc_ipv4_engines_agree_every_length_and_alignment),
		TEST_CASE(test_icrc_fused_copy_pieces_match_whole),
		TEST_CASE(test_icrc_mbuf_chains_match_contiguous),
	};

	best = roce_icrc_engine_name();
	return DROCE_TEST_MAIN("icrc", cases, setup, NULL);
}
