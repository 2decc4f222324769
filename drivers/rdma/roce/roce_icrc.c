/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 invariant CRC (IBA annex A17.3.3): CRC-32 (the Ethernet polynomial,
 * bit-reflected) over a stand-in LRH of eight 0xff bytes, then the IPv4, UDP
 * and BTH headers with their variant fields set to all ones, then everything
 * after the BTH up to the ICRC.
 *
 * The CRC register is updated incrementally so an mbuf chain is walked segment
 * by segment without copying the payload. Only the masked headers (at most 88
 * bytes) are copied, to a stack buffer; except on the small-frame path below.
 *
 * Four engines produce identical registers:
 *  - table: a portable slice-by-16 table walk, for any CPU and for runs
 *    shorter than the others' minimum;
 *  - clmul: on x86 CPUs with PCLMULQDQ, a carry-less-multiply fold of four
 *    128-bit lanes (64 bytes a step), for runs of 32 bytes or more; a
 *    frame with IPv4 options and under 256 bytes after its headers goes
 *    through one lane in one pass (without options: the small-frame path);
 *  - avx2: on CPUs with VPCLMULQDQ and AVX2, the same fold in four 256-bit
 *    registers (8 lanes, 128 bytes a step), for runs of WIDE_MIN_LEN (80)
 *    bytes or more, shorter runs going to the clmul code;
 *  - avx512: on CPUs with VPCLMULQDQ and AVX-512 F and VL whose OS saves the
 *    zmm state, four 512-bit registers (16 lanes, 256 bytes a step), from
 *    WIDE_MIN_LEN bytes too.
 * Small frames, under all three carry-less engines: a contiguous frame
 * (roce_icrc_ipv4()) with an option-less IPv4 header and fewer than
 * SMALL_MAX (256) bytes after the BTH (ACKs, small SENDs and WRITEs) goes
 * to crc_clmul_small(): no header copy (the mask is applied in registers),
 * every 16-byte block folded straight to the end with its own constant
 * (kb[], one per byte distance), so that the multiplies are independent,
 * the tail as one more masked, overlapping block, and a shortened
 * reduction. Folding one lane block by block, as the path before it did,
 * chained every multiply: bench_icrc found a 64-byte SEND's ICRC (104 bytes
 * from IPv4 on) at 37 ns a call before and 11 to 20 after, an ACK's at 33
 * and 8 to 13 (doc/guides/tuning.rst has the figures).
 * The constructor picks the last of these the CPU has, unless DROCE_ICRC
 * names another (doc/guides/tuning.rst), for comparisons; tests switch with
 * roce_icrc_engine_set(), devtools/bench_icrc.c times them. The wide engines
 * are built with target attributes, so the file compiles for the baseline
 * -march. Tables and folding constants are computed once, by that
 * constructor, and are read-only afterwards.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "roce.h"

#if defined(RTE_ARCH_X86_64) || defined(__x86_64__)
#include <immintrin.h>
#define ICRC_HAVE_CLMUL 1
#endif

#define CRC32_POLY_REFL	0xedb88320U	/* 0x04c11db7 bit-reversed */
#define CRC32_POLY_NORM	0x04c11db7U
#define SLICES		16

/* Largest masked prefix: LRH stand-in, IPv4 with 40 bytes of options, UDP, BTH. */
#define ICRC_LRH_LEN	ROCE_ICRC_LRH_LEN
#define ICRC_HDR_MAX	(ICRC_LRH_LEN + 60 + sizeof(struct rte_udp_hdr) + ROCE_BTH_LEN)

static uint32_t crc_tbl[SLICES][256];

#ifdef ICRC_HAVE_CLMUL
/*
 * Runs shorter than this go to the table engine: from 32 bytes on, folding
 * lanes and reducing the last one by table beats the table alone (an ICRC of
 * a small message is two runs of 40 to 100 bytes: the masked headers, then
 * the rest).
 */
#define CLMUL_MIN_LEN	32
/*
 * Runs shorter than this stay with the 128-bit code under the avx2 and
 * avx512 engines: below it, their setup and final fold down to 128 bits cost
 * more than their wider steps save. devtools/bench_icrc.c (through
 * roce_icrc_ipv4(), whose headers' lane the wide engines continue) found
 * them level with the 128-bit code at 64 bytes of payload and ahead from 80
 * (by about 8%; by a third at 128), on a Zen-class EPYC.
 */
#define WIDE_MIN_LEN	80
/*
 * Fold constants {lo qword's, hi qword's} for distances of 512, 384, 256 and
 * 128 bits, and of d * 512 (kz[d]) and d * 256 bits (ky[d]), d = 1..6.
 */
static uint64_t k512[2], k384[2], k256[2], k128[2];
static uint64_t kz[7][2], ky[7][2];
/* x^64 mod P, and Barrett's {P, mu = floor(x^64 / P)}: the 33-bit reflected forms */
static uint64_t k64, barrett[2];
/*
 * Small frames (crc_clmul_small()): IPv4 without options and fewer than
 * SMALL_MAX bytes after the 40 bytes of IPv4, UDP and BTH. kb[b] folds a
 * lane across 8 * b - 64 bits into rem96_reduce()'s form, i.e. to the end
 * of a block b - 8 bytes before the message's end (b >= 8), for every
 * distance a block of such a frame has to its end.
 */
#define SMALL_MAX	256
/* IPv4 without options, UDP, BTH: where crc_clmul_small()'s masks are */
#define SMALL_HDR	(ROCE_IPV4_LEN + sizeof(struct rte_udp_hdr) + ROCE_BTH_LEN)
static uint64_t kb[8 + 32 + SMALL_MAX][2];	/* b up to 8 + the first block's distance */
/*
 * crc_avx512_small(): the frame from its TTL on (SMALL_RUN_MAX bytes at
 * most) in ymm of two blocks; kv[i] folds the two blocks of a ymm that ends
 * 32 * i bytes before the message's end, each straight to that end (kb[]'s
 * constants for their two distances, in memory order). It takes frames of
 * SMALL_WIDE_MIN bytes or more: below, crc_clmul_small() was as fast or
 * faster (devtools/bench_icrc: at 44 bytes, an ACK, 8.2 ns a call against
 * 9.0; level at 88; at 104, a 64-byte SEND, 11.4 against 10.1; at 200,
 * 18.2 against 13.5).
 */
#define SMALL_RUN_MAX	(SMALL_HDR - 8 + SMALL_MAX - 1)
#define SMALL_WIDE_MIN	96
static uint64_t kv[(SMALL_RUN_MAX + 31) / 32][4];
static bool small_avx512;	/* the CPU has AVX-512 BW too (byte masks) */
#endif

enum icrc_engine {
	ICRC_TABLE,
	ICRC_CLMUL,
	ICRC_AVX2,
	ICRC_AVX512,
};

static const char *const icrc_engine_names[] = {
	[ICRC_TABLE] = "table",
	[ICRC_CLMUL] = "clmul",
	[ICRC_AVX2] = "avx2",
	[ICRC_AVX512] = "avx512",
};

/* The engine in use, and the best this CPU and OS support. */
static enum icrc_engine engine, engine_best;

static inline uint32_t
load_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_32(v);
}

/* Update the reflected CRC register @crc with @n bytes at @p (tables only). */
static uint32_t
crc_update_tbl(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n >= SLICES) {
		uint32_t w0 = load_le32(p) ^ crc;
		uint32_t w1 = load_le32(p + 4);
		uint32_t w2 = load_le32(p + 8);
		uint32_t w3 = load_le32(p + 12);

		crc = crc_tbl[15][w0 & 0xff] ^ crc_tbl[14][(w0 >> 8) & 0xff] ^
		      crc_tbl[13][(w0 >> 16) & 0xff] ^ crc_tbl[12][w0 >> 24] ^
		      crc_tbl[11][w1 & 0xff] ^ crc_tbl[10][(w1 >> 8) & 0xff] ^
		      crc_tbl[9][(w1 >> 16) & 0xff] ^ crc_tbl[8][w1 >> 24] ^
		      crc_tbl[7][w2 & 0xff] ^ crc_tbl[6][(w2 >> 8) & 0xff] ^
		      crc_tbl[5][(w2 >> 16) & 0xff] ^ crc_tbl[4][w2 >> 24] ^
		      crc_tbl[3][w3 & 0xff] ^ crc_tbl[2][(w3 >> 8) & 0xff] ^
		      crc_tbl[1][(w3 >> 16) & 0xff] ^ crc_tbl[0][w3 >> 24];
		p += SLICES;
		n -= SLICES;
	}
	while (n--)
		crc = crc_tbl[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#ifdef ICRC_HAVE_CLMUL
/*
 * A 128-bit lane loaded little-endian holds the message bits reflected: bit i
 * is the coefficient of x^(127 - i). Folding a lane X across D further bits
 * keeps X * x^D mod P in two multiplies, its first-in-memory qword by
 * x^(D+32) mod P and its second by x^(D-32) mod P (constants in the 33-bit
 * reflected form that makes the clmul product land lane-aligned).
 */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
fold(__m128i x, __m128i k)
{
	__m128i a = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i b = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(a, b);
}

/*
 * The CRC register for a 96-bit remainder @x one lane's length further on:
 * bit i the coefficient of x^(63 - i) (what the 128 -> 64 fold in
 * lane_reduce() leaves, and what crc_clmul_small()'s folds give directly).
 * Folded to 64 bits (the low dword across 64 bits), then reduced by
 * Barrett's method: q = floor(r / P) from the precomputed x^64 / P (mu),
 * then r - q * P.
 */
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t
rem96_reduce(__m128i x)
{
	const __m128i c64 = _mm_set_epi64x(0, (long long)k64);
	const __m128i bar = _mm_set_epi64x((long long)barrett[1], (long long)barrett[0]);
	const __m128i lo32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i t;

	/* 64 -> 32 (plus 32 bits to reduce): the low dword times x^64 mod P */
	x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, lo32), c64, 0x00),
			  _mm_srli_si128(x, 4));
	/* Barrett: the quotient's low 32 bits, times P, taken away */
	t = _mm_clmulepi64_si128(_mm_and_si128(x, lo32), bar, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, lo32), bar, 0x00);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(t, x), 1);
}

/*
 * The CRC register a lane stands for: what the table engine gives for its 16
 * bytes from a zero register, in five multiplies instead of 16 lookups.
 * The 128 bits are folded to 64 (the low half across 96 bits onto the high
 * one), then rem96_reduce() finishes.
 */
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t
lane_reduce(__m128i x)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);

	/* 128 -> 64: the low qword times x^96 mod P, onto the high qword */
	return rem96_reduce(_mm_xor_si128(_mm_clmulepi64_si128(x, c128, 0x10),
					  _mm_srli_si128(x, 8)));
}

/*
 * Fold one lane over the rest of a run, 16 bytes a step, then reduce it: the
 * lane carries a 128-bit residue congruent to everything folded so far mod P,
 * which the table engine reduces (from a zero register) before the tail goes
 * in.
 */
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t
lane_finish(__m128i x0, const uint8_t *p, size_t n)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);
	uint32_t crc;

	while (n >= 16) {
		x0 = _mm_xor_si128(fold(x0, c128),
				   _mm_loadu_si128((const __m128i *)(const void *)p));
		p += 16;
		n -= 16;
	}
	crc = lane_reduce(x0);
	return crc_update_tbl(crc, p, n);
}

/*
 * The register is folded into the first four bytes. A run of 64 bytes or
 * more is folded in four lanes first (independent multiplies), which are then
 * folded into one; a shorter one goes lane by lane.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc_update_clmul(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m128i c512 = _mm_set_epi64x((long long)k512[1], (long long)k512[0]);
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);
	__m128i x0, x1, x2, x3;

	x0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
	if (n < 64)
		return lane_finish(x0, p + 16, n - 16);
	x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
	p += 64;
	n -= 64;

	while (n >= 64) {
		x0 = _mm_xor_si128(fold(x0, c512),
				   _mm_loadu_si128((const __m128i *)(const void *)p));
		x1 = _mm_xor_si128(fold(x1, c512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
		x2 = _mm_xor_si128(fold(x2, c512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
		x3 = _mm_xor_si128(fold(x3, c512),
				   _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
		p += 64;
		n -= 64;
	}

	x1 = _mm_xor_si128(x1, fold(x0, c128));
	x2 = _mm_xor_si128(x2, fold(x1, c128));
	x0 = _mm_xor_si128(x3, fold(x2, c128));
	return lane_finish(x0, p, n);
}

/*
 * The masked headers @h (a multiple of 16 bytes) folded into one lane, from
 * the initial register: what the rest goes on from.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
hdr_lane(const uint8_t *h, size_t nh)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);
	__m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)h);

	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)0xffffffffU));
	for (size_t i = 16; i < nh; i += 16)
		x0 = _mm_xor_si128(fold(x0, c128),
				   _mm_loadu_si128((const __m128i *)(const void *)(h + i)));
	return x0;
}

/*
 * A frame's ICRC in one pass over two runs, the masked headers @h (a
 * multiple of 16 bytes: 48 for IPv4 without options) and the rest @p: the
 * lane goes on from the first run into the second, reduced once at the end.
 * Only for the frames crc_clmul_small() does not take for their IPv4
 * options (the small path takes every option-less one this would).
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc_clmul_pair(const uint8_t *h, size_t nh, const uint8_t *p, size_t n)
{
	return lane_finish(hdr_lane(h, nh), p, n);
}

/* Byte i of the 16 at offset r: 0 for i < 16 - r, 0xff after (the last r kept). */
static const uint8_t tail_mask[32] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* A block ending @b bytes before the message's end, in rem96_reduce()'s form. */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
fold_to_end(__m128i x, uint32_t b)
{
	return fold(x, _mm_loadu_si128((const __m128i *)(const void *)kb[b + 8]));
}

/*
 * The message's last block in rem96_reduce()'s form: lane_reduce()'s first
 * fold, one multiply where fold_to_end(x, 0) takes two.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
last_to_end(__m128i x)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);

	return _mm_xor_si128(_mm_clmulepi64_si128(x, c128, 0x10), _mm_srli_si128(x, 8));
}

/*
 * A small frame's first block: the LRH stand-in XORed with the initial
 * register (bytes 00 00 00 00 ff ff ff ff), then the frame's first 8 bytes
 * with TOS (frame byte 1, the block's byte 9) ORed to ones.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
small_first_block(const uint8_t *ip)
{
	const __m128i lrh = _mm_set_epi64x(0, (long long)0xffffffff00000000ULL);
	const __m128i m0 = _mm_set_epi8(0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0);

	return _mm_or_si128(_mm_unpacklo_epi64(lrh, _mm_loadl_epi64((const __m128i *)(const void *)ip)),
			    m0);
}

/*
 * A small frame's ICRC, straight from the frame @ip of @len bytes (IPv4
 * without options, SMALL_HDR (40) <= len < SMALL_HDR + SMALL_MAX): every
 * 16-byte block is folded straight to the end of the message, past it into rem96_reduce()'s
 * form, with its own constant, so the multiplies are independent: the
 * latency is one fold, an XOR tree and three multiplies of reduction,
 * where a lane folded block by block, then reduced, chains them all. The
 * message is cut from its end:
 *  - the LRH stand-in and the 40 header bytes are three blocks, loaded from
 *    the frame and masked in registers (the variant fields ORed to ones, the
 *    initial register XORed into the stand-in's first four bytes: zeros);
 *  - the l = len - 40 bytes after them are r = l % 16 bytes then l / 16
 *    whole blocks; the r bytes are loaded as the 16 ending with them, the
 *    16 - r before them (header bytes, already counted) ANDed to zeros:
 *    the folds are linear and zero coefficients add nothing, so that block
 *    stands for the r bytes alone, at their distance from the end.
 * No byte-at-a-time tail and no copy of the headers.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc_clmul_small(const uint8_t *ip, uint32_t len)
{
	/* TTL, IPv4 checksum (frame bytes 8, 10, 11) */
	const __m128i m1 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, -1);
	/* UDP checksum, BTH FECN/BECN/reserved (frame bytes 26, 27, 32) */
	const __m128i m2 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, -1, 0, 0);
	const uint32_t l = len - SMALL_HDR, q = l / 16, r = l % 16;
	const uint8_t *p = ip + SMALL_HDR;
	__m128i h0, h1, h2, acc, acc2;

	h0 = small_first_block(ip);
	h1 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(ip + 8)), m1);
	h2 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(ip + 24)), m2);
	acc = _mm_xor_si128(fold_to_end(h0, l + 32), fold_to_end(h1, l + 16));
	if (l == 0)
		return rem96_reduce(_mm_xor_si128(acc, last_to_end(h2)));
	acc2 = fold_to_end(h2, l);
	if (r != 0) {
		__m128i t = _mm_loadu_si128((const __m128i *)(const void *)(p + r - 16));

		t = _mm_and_si128(t, _mm_loadu_si128((const __m128i *)(const void *)
						     (tail_mask + r)));
		if (q == 0)
			return rem96_reduce(_mm_xor_si128(_mm_xor_si128(acc, acc2),
							  last_to_end(t)));
		acc = _mm_xor_si128(acc, fold_to_end(t, 16 * q));
		p += r;
	}
	/* two XOR chains, so that an XOR does not wait for the one before */
	for (uint32_t j = 0; j + 1 < q; j++) {
		__m128i t = fold_to_end(_mm_loadu_si128((const __m128i *)(const void *)
							(p + 16 * j)), 16 * (q - 1 - j));

		if (j & 1)
			acc = _mm_xor_si128(acc, t);
		else
			acc2 = _mm_xor_si128(acc2, t);
	}
	acc = _mm_xor_si128(acc, last_to_end(_mm_loadu_si128((const __m128i *)(const void *)
							     (p + 16 * (q - 1)))));
	return rem96_reduce(_mm_xor_si128(acc, acc2));
}

#define ICRC_AVX2_TARGET "avx2,vpclmulqdq,pclmul,sse4.1"

/* fold() on both 128-bit lanes of @y, then the XOR with @d. */
__attribute__((target(ICRC_AVX2_TARGET)))
static inline __m256i
fold_y(__m256i y, __m256i k, __m256i d)
{
	__m256i a = _mm256_clmulepi64_epi128(y, k, 0x00);
	__m256i b = _mm256_clmulepi64_epi128(y, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(a, b), d);
}

__attribute__((target(ICRC_AVX2_TARGET)))
static inline __m256i
bcast_k_y(const uint64_t k[2])
{
	return _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/*
 * lanes_avx512()'s scheme (below) in 256-bit registers, for CPUs with
 * VPCLMULQDQ but no AVX-512 (AMD Zen 3, Intel's client cores): four ymm of
 * two lanes, 128 bytes a step; the blocks left and the four ymm folded onto
 * the last block, then its two lanes into one. @init goes into the first 16
 * bytes; @n is at least 32.
 */
__attribute__((target(ICRC_AVX2_TARGET)))
static uint32_t
lanes_avx2(__m128i init, const uint8_t *p, size_t n)
{
	const bool four = n >= 128;
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);
	__m256i y0, y1 = _mm256_setzero_si256(), y2 = y1, y3;
	unsigned int j;
	__m128i x;

	y0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
	y0 = _mm256_xor_si256(y0, _mm256_inserti128_si256(_mm256_setzero_si256(), init, 0));
	if (four) {
		const __m256i c1024 = bcast_k_y(ky[4]);

		y1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
		y2 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 64));
		y3 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 96));
		p += 128;
		n -= 128;
		while (n >= 128) {
			y0 = fold_y(y0, c1024, _mm256_loadu_si256((const __m256i *)(const void *)p));
			y1 = fold_y(y1, c1024,
				    _mm256_loadu_si256((const __m256i *)(const void *)(p + 32)));
			y2 = fold_y(y2, c1024,
				    _mm256_loadu_si256((const __m256i *)(const void *)(p + 64)));
			y3 = fold_y(y3, c1024,
				    _mm256_loadu_si256((const __m256i *)(const void *)(p + 96)));
			p += 128;
			n -= 128;
		}
	} else {
		y3 = y0;
		p += 32;
		n -= 32;
	}

	/* as in lanes_avx512(): all folded straight onto the last block */
	j = n / 32;
	if (j > 0) {
		y3 = fold_y(y3, bcast_k_y(ky[j]),
			    _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * (j - 1))));
		for (unsigned int b = 1; b < j; b++)
			y3 = fold_y(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * (b - 1))),
				    bcast_k_y(ky[j - b]), y3);
	}
	if (four) {
		y3 = fold_y(y2, bcast_k_y(ky[1 + j]), y3);
		y3 = fold_y(y1, bcast_k_y(ky[2 + j]), y3);
		y3 = fold_y(y0, bcast_k_y(ky[3 + j]), y3);
	}
	p += 32 * j;
	n -= 32 * j;

	x = _mm_xor_si128(fold(_mm256_castsi256_si128(y3), c128),
			  _mm256_extracti128_si256(y3, 1));
	_mm256_zeroupper();	/* as in lanes_avx512() */
	return lane_finish(x, p, n);
}

#define ICRC_AVX512_TARGET "avx512f,avx512vl,vpclmulqdq,avx2,pclmul,sse4.1"

/* fold() on each of the four 128-bit lanes of @z, then the XOR with @d. */
__attribute__((target(ICRC_AVX512_TARGET)))
static inline __m512i
fold_z(__m512i z, __m512i k, __m512i d)
{
	__m512i a = _mm512_clmulepi64_epi128(z, k, 0x00);
	__m512i b = _mm512_clmulepi64_epi128(z, k, 0x11);

	return _mm512_ternarylogic_epi64(a, b, d, 0x96);	/* a ^ b ^ d */
}

__attribute__((target(ICRC_AVX512_TARGET)))
static inline __m512i
bcast_k(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/* A 64-byte block at @p, stored at @d too unless @d is NULL (the fused copy). */
__attribute__((target(ICRC_AVX512_TARGET)))
static inline __m512i
ld_z(const uint8_t *p, uint8_t *d, size_t off)
{
	__m512i v = _mm512_loadu_si512(p + off);

	if (d != NULL)
		_mm512_storeu_si512(d + off, v);
	return v;
}

/*
 * The 128-bit code's scheme in 512-bit registers: each zmm holds four lanes
 * of 16 consecutive bytes. A run of 256 bytes or more is folded in four zmm
 * (16 independent lanes, 256 bytes a step); the up to three whole 64-byte
 * blocks after the last step, and the four zmm, are folded onto the last
 * block; its four lanes are folded into one 128-bit lane (across 384, 256
 * and 128 bits, in one multiply pair), which lane_finish() completes. @init
 * goes into the first 16 bytes (a register, or a lane carried over from
 * earlier data); @n is at least 64. With @d, every byte read is also
 * stored there, in the same pass (roce_icrc_copy()): the copy rides on the
 * loads the CRC makes anyway, where the multiplies set the pace.
 */
__attribute__((target(ICRC_AVX512_TARGET), always_inline))
static inline uint32_t
lanes_avx512_body(__m128i init, const uint8_t *p, size_t n, uint8_t *d)
{
	const bool four = n >= 256;
	const __m512i cred = _mm512_set_epi64(0, 0, (long long)k128[1], (long long)k128[0],
					      (long long)k256[1], (long long)k256[0],
					      (long long)k384[1], (long long)k384[0]);
	__m512i z0, z1 = _mm512_setzero_si512(), z2 = z1, z3;
	size_t o = 0;	/* bytes behind p: p and d advance together */
	unsigned int j;
	__m256i y;
	__m128i x;

	z0 = ld_z(p, d, 0);
	z0 = _mm512_xor_si512(z0, _mm512_inserti32x4(_mm512_setzero_si512(), init, 0));
	if (four) {
		const __m512i c2048 = bcast_k(kz[4]);

		z1 = ld_z(p, d, 64);
		z2 = ld_z(p, d, 128);
		z3 = ld_z(p, d, 192);
		o = 256;
		n -= 256;
		while (n >= 256) {
			z0 = fold_z(z0, c2048, ld_z(p, d, o));
			z1 = fold_z(z1, c2048, ld_z(p, d, o + 64));
			z2 = fold_z(z2, c2048, ld_z(p, d, o + 128));
			z3 = fold_z(z3, c2048, ld_z(p, d, o + 192));
			o += 256;
			n -= 256;
		}
	} else {
		z3 = z0;
		o = 64;
		n -= 64;
	}

	/*
	 * The last accumulator, the other three if any and the j whole blocks
	 * left, each folded straight to the end of the last block: independent
	 * multiplies, where folding one into the next would chain them.
	 */
	j = n / 64;
	if (j > 0) {
		z3 = fold_z(z3, bcast_k(kz[j]), ld_z(p, d, o + 64 * (j - 1)));
		for (unsigned int b = 1; b < j; b++)
			z3 = fold_z(ld_z(p, d, o + 64 * (b - 1)), bcast_k(kz[j - b]), z3);
	}
	if (four) {
		z3 = fold_z(z2, bcast_k(kz[1 + j]), z3);
		z3 = fold_z(z1, bcast_k(kz[2 + j]), z3);
		z3 = fold_z(z0, bcast_k(kz[3 + j]), z3);
	}
	o += 64 * j;
	n -= 64 * j;
	if (d != NULL && n > 0)
		memcpy(d + o, p + o, n);

	/* lanes 0..2 folded onto lane 3 (its constant is zero: taken as is) */
	z3 = fold_z(z3, cred, _mm512_maskz_mov_epi64(0xc0, z3));
	y = _mm256_xor_si256(_mm512_castsi512_si256(z3), _mm512_extracti64x4_epi64(z3, 1));
	x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
	/*
	 * Clean upper register state before leaving: GCC 12 puts no vzeroupper
	 * before the tail call into the table code, and the dirty zmm halves
	 * then slow every legacy-SSE instruction after it (the clmul engine ran
	 * at half speed: devtools/bench_icrc.c).
	 */
	_mm256_zeroupper();
	return lane_finish(x, p + o, n);
}

__attribute__((target(ICRC_AVX512_TARGET)))
static uint32_t
lanes_avx512(__m128i init, const uint8_t *p, size_t n)
{
	return lanes_avx512_body(init, p, n, NULL);
}

__attribute__((target(ICRC_AVX512_TARGET)))
static uint32_t
crc_copy_avx512(uint32_t crc, uint8_t *d, const uint8_t *p, size_t n)
{
	return lanes_avx512_body(_mm_cvtsi32_si128((int)crc), p, n, d);
}

/*
 * The wide engines' entry points: a register @crc for @p, or a frame's
 * masked headers @h then the rest @p, the headers' lane going on into the
 * first 16 bytes of the rest (as in crc_clmul_pair(); no reduction between).
 */
__attribute__((target(ICRC_AVX2_TARGET)))
static uint32_t
crc_update_avx2(uint32_t crc, const uint8_t *p, size_t n)
{
	return lanes_avx2(_mm_cvtsi32_si128((int)crc), p, n);
}

__attribute__((target(ICRC_AVX2_TARGET)))
static uint32_t
crc_avx2_pair(const uint8_t *h, size_t nh, const uint8_t *p, size_t n)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);

	return lanes_avx2(fold(hdr_lane(h, nh), c128), p, n);
}

__attribute__((target(ICRC_AVX512_TARGET)))
static uint32_t
crc_update_avx512(uint32_t crc, const uint8_t *p, size_t n)
{
	return lanes_avx512(_mm_cvtsi32_si128((int)crc), p, n);
}

__attribute__((target(ICRC_AVX512_TARGET)))
static uint32_t
crc_avx512_pair(const uint8_t *h, size_t nh, const uint8_t *p, size_t n)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);

	return lanes_avx512(fold(hdr_lane(h, nh), c128), p, n);
}

/* crc_avx512_pair(), the @n bytes at @p also stored at @d in the same pass. */
__attribute__((target(ICRC_AVX512_TARGET)))
static uint32_t
crc_copy_avx512_pair(const uint8_t *h, size_t nh, uint8_t *d, const uint8_t *p, size_t n)
{
	const __m128i c128 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);

	return lanes_avx512_body(fold(hdr_lane(h, nh), c128), p, n, d);
}

#define ICRC_AVX512BW_TARGET ICRC_AVX512_TARGET ",avx512bw"
/*
 * The variant bytes of the run crc_avx512_small() loads (the frame from its
 * IPv4 TTL on): TTL, the IPv4 checksum, the UDP checksum, BTH byte 4.
 */
#define SMALL_RUN_VARIANT	(1ULL << 0 | 3ULL << 2 | 3ULL << 18 | 1ULL << 24)

/* A ymm of kv[i]'s constants. */
__attribute__((target(ICRC_AVX512BW_TARGET)))
static inline __m256i
kv_y(uint32_t i)
{
	return _mm256_loadu_si256((const __m256i *)(const void *)kv[i]);
}

/*
 * crc_clmul_small() two blocks at a time, for the avx512 engine on CPUs
 * with AVX-512 BW, for frames of SMALL_WIDE_MIN bytes or more: the first
 * block (the LRH stand-in and the frame's first 8 bytes) as there; the
 * n = len - 8 bytes after it cut from their end into ymm of 32 bytes, the
 * first ymm's pad = 32 * k - n leading bytes masked off its load (nothing
 * is read there; zeros add nothing), the variant fields set to ones by a
 * byte mask in the ymm they fall in; each ymm folded straight to the end
 * with its own constants (kv[]) into two XOR chains, its two lanes XORed
 * into one, then the reduction. A 64-byte SEND's 104 bytes are a block and
 * three ymm: 11 multiplies where crc_clmul_small() makes 17. In 512-bit
 * registers it was slower on the Zen 4 test machine, which splits their
 * multiplies in two (devtools/bench_icrc: 14.8 ns a call at 104 bytes
 * against 11.4 for crc_clmul_small() and 10.1 for this).
 */
__attribute__((target(ICRC_AVX512BW_TARGET)))
static uint32_t
crc_avx512_small(const uint8_t *ip, uint32_t len)
{
	const __m256i ones = _mm256_set1_epi8(-1);
	const uint32_t n = len - 8, k = (n + 31) / 32, pad = 32 * k - n;
	const uint8_t *run = ip + 8;
	const uint64_t var = SMALL_RUN_VARIANT << pad;	/* bits 0..55: the first two ymm */
	__m256i y, acc, acc2 = _mm256_setzero_si256();
	__m128i x;

	y = _mm256_maskz_loadu_epi8((__mmask32)(~0U << pad), (const void *)((uintptr_t)run - pad));
	y = _mm256_mask_mov_epi8(y, (__mmask32)var, ones);
	acc = fold_y(y, kv_y(k - 1), _mm256_setzero_si256());
	for (uint32_t j = 1; j < k; j++) {
		y = _mm256_loadu_si256((const __m256i *)(const void *)(run + 32 * j - pad));
		if (j == 1)
			y = _mm256_mask_mov_epi8(y, (__mmask32)(var >> 32), ones);
		if (j & 1)
			acc2 = fold_y(y, kv_y(k - 1 - j), acc2);
		else
			acc = fold_y(y, kv_y(k - 1 - j), acc);
	}
	acc = _mm256_xor_si256(acc, acc2);
	x = _mm_xor_si128(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
	_mm256_zeroupper();	/* as lanes_avx512_body() */
	return rem96_reduce(_mm_xor_si128(x, fold_to_end(small_first_block(ip), n)));
}
#endif

static inline uint32_t
crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
#ifdef ICRC_HAVE_CLMUL
	if (engine == ICRC_AVX512 && n >= WIDE_MIN_LEN)
		return crc_update_avx512(crc, p, n);
	if (engine == ICRC_AVX2 && n >= WIDE_MIN_LEN)
		return crc_update_avx2(crc, p, n);
	if (engine != ICRC_TABLE && n >= CLMUL_MIN_LEN)
		return crc_update_clmul(crc, p, n);
#endif
	return crc_update_tbl(crc, p, n);
}

#ifdef ICRC_HAVE_CLMUL
/* x^e mod P, in normal (unreflected) bit order. */
static uint32_t
xpow_mod(unsigned int e)
{
	uint32_t r = 1;

	while (e--)
		r = (r << 1) ^ ((r & 0x80000000U) ? CRC32_POLY_NORM : 0);
	return r;
}

/*
 * floor(x^64 / P), 33 bits, bit-reversed as the lanes hold their bits: long
 * division of x^64 by P (x^32 + the normal-order polynomial).
 */
static uint64_t
barrett_mu(void)
{
	uint64_t rem = 1ULL << 32, q = 0, r = 0;	/* x^64 = x^32 * x^32: divide step by step */

	/* the quotient's bits from x^32 down to x^0 */
	for (int i = 32; i >= 0; i--) {
		/* rem holds the running remainder's top 33 bits: x^(32+i) term at bit 32 */
		if (rem & (1ULL << 32)) {
			q |= 1ULL << i;
			rem ^= (1ULL << 32) | CRC32_POLY_NORM;
		}
		rem <<= 1;
	}
	for (int i = 0; i < 33; i++)
		if (q & (1ULL << i))
			r |= 1ULL << (32 - i);
	return r;
}

/* The 33-bit form fold() multiplies by: coefficient of x^m at bit 32 - m. */
static uint64_t
fold_const(unsigned int e)
{
	uint32_t v = xpow_mod(e), r = 0;

	for (int i = 0; i < 32; i++)
		if (v & (1U << i))
			r |= 1U << (31 - i);
	return (uint64_t)r << 1;
}

/*
 * GCC's __builtin_cpu_supports() reports AVX-512 features only when XGETBV
 * says the OS saves the opmask and zmm state, and VPCLMULQDQ only when it
 * saves the ymm state (libgcc's cpuinfo.h, since GCC 9); so these tests
 * cover the OS as well as the CPU.
 */
static bool
cpu_has_avx2_clmul(void)
{
	return __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx2");
}

static bool
cpu_has_avx512_clmul(void)
{
	return __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2");
}
#endif

int
roce_icrc_engine_set(const char *name)
{
	for (unsigned int e = 0; e < RTE_DIM(icrc_engine_names); e++) {
		if (strcmp(name, icrc_engine_names[e]) != 0)
			continue;
		if (e > engine_best)
			return -ENOTSUP;
		engine = e;
		return 0;
	}
	return -EINVAL;
}

const char *
roce_icrc_engine_name(void)
{
	return icrc_engine_names[engine];
}

RTE_INIT(roce_icrc_init)
{
	const char *env;

	for (unsigned int b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32_POLY_REFL : 0);
		crc_tbl[0][b] = c;
	}
	for (unsigned int b = 0; b < 256; b++)
		for (int s = 1; s < SLICES; s++)
			crc_tbl[s][b] = (crc_tbl[s - 1][b] >> 8) ^
					crc_tbl[0][crc_tbl[s - 1][b] & 0xff];
#ifdef ICRC_HAVE_CLMUL
	RTE_BUILD_BUG_ON(WIDE_MIN_LEN < 64);	/* lanes_avx512() loads 64 bytes first */
	RTE_BUILD_BUG_ON(SMALL_HDR != 40);	/* crc_clmul_small()'s three header blocks */
	for (unsigned int d = 1; d < RTE_DIM(kz); d++) {
		kz[d][0] = fold_const(512 * d + 32);
		kz[d][1] = fold_const(512 * d - 32);
		ky[d][0] = fold_const(256 * d + 32);
		ky[d][1] = fold_const(256 * d - 32);
	}
	k512[0] = fold_const(512 + 32);
	k512[1] = fold_const(512 - 32);
	k384[0] = fold_const(384 + 32);
	k384[1] = fold_const(384 - 32);
	k256[0] = fold_const(256 + 32);
	k256[1] = fold_const(256 - 32);
	k128[0] = fold_const(128 + 32);
	k128[1] = fold_const(128 - 32);
	k64 = fold_const(64);
	for (unsigned int b = 8; b < RTE_DIM(kb); b++) {
		kb[b][0] = fold_const(8 * b + 32);
		kb[b][1] = fold_const(8 * b - 32);
	}
	/* kb[d + 8]'s constants for the distances d = 32 i + 16 and 32 i */
	for (unsigned int i = 0; i < RTE_DIM(kv); i++)
		for (unsigned int l = 0; l < 2; l++) {
			unsigned int d = 32 * i + 16 - 16 * l;

			kv[i][2 * l] = fold_const(8 * d + 96);
			kv[i][2 * l + 1] = fold_const(8 * d + 32);
		}
	barrett[0] = ((uint64_t)CRC32_POLY_REFL << 1) | 1;
	barrett[1] = barrett_mu();
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		engine_best = cpu_has_avx512_clmul() ? ICRC_AVX512 :
			      cpu_has_avx2_clmul() ? ICRC_AVX2 : ICRC_CLMUL;
	small_avx512 = engine_best == ICRC_AVX512 && __builtin_cpu_supports("avx512bw");
#endif
	engine = engine_best;

	env = getenv("DROCE_ICRC");
	if (env != NULL && *env != '\0') {
		int rc = roce_icrc_engine_set(env);

		if (rc != 0)
			ROCE_LOG(WARNING, "DROCE_ICRC=%s: %s, using %s", env,
				 rc == -ENOTSUP ? "not supported by this CPU" : "unknown engine",
				 roce_icrc_engine_name());
	}
}

/*
 * Copies the ICRC-covered headers into @buf behind the LRH stand-in and masks
 * their variant fields. @hdr holds the first @have bytes from the IPv4 header
 * on (@have <= ICRC_HDR_MAX - 8). Returns how many IPv4-relative bytes the
 * masked prefix covers; the caller continues the CRC from there.
 *
 * A frame shorter than its headers claim is still given a deterministic CRC
 * (of the bytes present, masked where they exist); rejecting it is the
 * receive path's job.
 */
static uint32_t
mask_headers(uint8_t *buf, const uint8_t *hdr, uint32_t have, uint32_t len)
{
	const uint32_t plain = ROCE_IPV4_LEN + sizeof(struct rte_udp_hdr) + ROCE_BTH_LEN;
	uint32_t ihl = ROCE_IPV4_LEN, n, udp, bth;

	/* the usual frame: IPv4 without options, whole headers; constant offsets */
	if (likely(have >= plain && len >= plain && (hdr[0] & 0x0f) * 4U == ROCE_IPV4_LEN)) {
		memcpy(buf + ICRC_LRH_LEN, hdr, plain);
		roce_icrc_mask(buf);
		return plain;
	}
	if (have > 0 && (hdr[0] & 0x0f) * 4U > ihl)
		ihl = (hdr[0] & 0x0f) * 4U;
	n = RTE_MIN(len, ihl + (uint32_t)sizeof(struct rte_udp_hdr) + ROCE_BTH_LEN);
	n = RTE_MIN(n, have);

	memset(buf, 0xff, ICRC_LRH_LEN);
	memcpy(buf + ICRC_LRH_LEN, hdr, n);
	buf += ICRC_LRH_LEN;
	udp = ihl;
	bth = udp + sizeof(struct rte_udp_hdr);

	/* IPv4: type of service, time to live, header checksum */
	if (n > offsetof(struct rte_ipv4_hdr, type_of_service))
		buf[offsetof(struct rte_ipv4_hdr, type_of_service)] = 0xff;
	if (n > offsetof(struct rte_ipv4_hdr, time_to_live))
		buf[offsetof(struct rte_ipv4_hdr, time_to_live)] = 0xff;
	for (uint32_t i = offsetof(struct rte_ipv4_hdr, hdr_checksum);
	     i < offsetof(struct rte_ipv4_hdr, hdr_checksum) + 2 && i < n; i++)
		buf[i] = 0xff;
	/* UDP checksum */
	for (uint32_t i = udp + offsetof(struct rte_udp_hdr, dgram_cksum);
	     i < udp + offsetof(struct rte_udp_hdr, dgram_cksum) + 2 && i < n; i++)
		buf[i] = 0xff;
	/* BTH byte 4 (the top byte of the QPN word): FECN, BECN and reserved bits */
	if (n > bth + offsetof(struct roce_bth, qpn))
		buf[bth + offsetof(struct roce_bth, qpn)] = 0xff;
	return n;
}

/*
 * The register over a frame's first @len bytes from the IPv4 header on (@p),
 * its first @n already masked into @buf behind the LRH stand-in
 * (mask_headers()), from the initial register.
 */
static uint32_t
sum_masked(const uint8_t *buf, uint32_t n, const uint8_t *p, uint32_t len)
{
	return crc_update(crc_update(0xffffffffU, buf, ICRC_LRH_LEN + n), p + n, len - n);
}

/*
 * The ICRC of the frame whose IPv4 header is at @ip (@len bytes up to the
 * ICRC), its headers read in @hdr: the frame's own, or a copy of its first
 * bytes (at least its IPv4, UDP and BTH headers) that the receive path
 * parsed.
 */
static inline uint32_t
icrc_ipv4(const uint8_t *hdr, const uint8_t *p, uint32_t len)
{
	uint8_t buf[ICRC_HDR_MAX];
	uint32_t n;

#ifdef ICRC_HAVE_CLMUL
	/* the usual small frame: no header copy, no table (see the function) */
	if (hdr == p && engine != ICRC_TABLE && len >= SMALL_HDR && len - SMALL_HDR < SMALL_MAX &&
	    (p[0] & 0x0f) * 4U == ROCE_IPV4_LEN)
		return engine == ICRC_AVX512 && small_avx512 && len >= SMALL_WIDE_MIN ?
		       ~crc_avx512_small(p, len) : ~crc_clmul_small(p, len);
#endif
	n = mask_headers(buf, hdr, RTE_MIN(len, (uint32_t)ICRC_HDR_MAX - ICRC_LRH_LEN), len);
#ifdef ICRC_HAVE_CLMUL
	/*
	 * One pass through headers and payload: a small payload in the same
	 * lane, a large one in the wide engines' lanes, the headers' lane
	 * folded into their first.
	 */
	if (engine != ICRC_TABLE && ((ICRC_LRH_LEN + n) & 15) == 0) {
		if (len - n < (engine >= ICRC_AVX2 ? WIDE_MIN_LEN : 256))
			return ~crc_clmul_pair(buf, ICRC_LRH_LEN + n, p + n, len - n);
		if (engine == ICRC_AVX512)
			return ~crc_avx512_pair(buf, ICRC_LRH_LEN + n, p + n, len - n);
		if (engine == ICRC_AVX2)
			return ~crc_avx2_pair(buf, ICRC_LRH_LEN + n, p + n, len - n);
	}
#endif
	return ~sum_masked(buf, n, p, len);
}

uint32_t
roce_icrc_ipv4(const void *ip, uint32_t len)
{
	return icrc_ipv4(ip, ip, len);
}

uint32_t
roce_icrc_ipv4_at(const void *hdr, const void *ip, uint32_t len)
{
	return icrc_ipv4(hdr, ip, len);
}

uint32_t
roce_icrc_start(const void *hdr, uint32_t len)
{
	const uint8_t *p = hdr;
	uint8_t buf[ICRC_HDR_MAX];
	uint32_t n;

	n = mask_headers(buf, p, RTE_MIN(len, (uint32_t)ICRC_HDR_MAX - ICRC_LRH_LEN), len);
	return sum_masked(buf, n, p, len);
}

uint32_t
roce_icrc_more(uint32_t crc, const void *p, uint32_t n)
{
	return n > 0 ? crc_update(crc, p, n) : crc;
}

uint32_t
roce_icrc_copy(uint32_t crc, void *dst, const void *src, uint32_t n)
{
#ifdef ICRC_HAVE_CLMUL
	if (engine == ICRC_AVX512 && n >= WIDE_MIN_LEN)
		return crc_copy_avx512(crc, dst, src, n);
#endif
	memcpy(dst, src, n);
	return roce_icrc_more(crc, dst, n);
}

uint32_t
roce_icrc_masked_start(const void *masked, uint32_t nm)
{
	return crc_update(0xffffffffU, masked, nm);
}

uint32_t
roce_icrc_masked_copy(const void *masked, uint32_t nm, void *dst, const void *src, uint32_t n)
{
#ifdef ICRC_HAVE_CLMUL
	/*
	 * The headers' lane goes on into the payload's, unreduced (as in
	 * roce_icrc_ipv4()): no reduction and no second call between them
	 * where the masked headers fill whole lanes (IPv4, UDP and a BTH with
	 * or without a RETH: 48 or 64 bytes with the LRH stand-in)
	 */
	if (engine == ICRC_AVX512 && n >= WIDE_MIN_LEN && (nm & 15) == 0 && nm != 0)
		return crc_copy_avx512_pair(masked, nm, dst, src, n);
#endif
	return roce_icrc_copy(roce_icrc_masked_start(masked, nm), dst, src, n);
}

uint32_t
roce_icrc_start_copy(const void *hdr, uint32_t hl, void *dst, const void *src, uint32_t n)
{
	uint8_t buf[ICRC_HDR_MAX];
	uint32_t m;

	if (hl > ICRC_HDR_MAX - ICRC_LRH_LEN)
		return roce_icrc_copy(roce_icrc_start(hdr, hl), dst, src, n);
	m = mask_headers(buf, hdr, hl, hl);
	memcpy(buf + ICRC_LRH_LEN + m, (const uint8_t *)hdr + m, hl - m);
	return roce_icrc_masked_copy(buf, ICRC_LRH_LEN + hl, dst, src, n);
}

uint32_t
roce_icrc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint8_t hdr[ICRC_HDR_MAX - ICRC_LRH_LEN];
	uint8_t buf[ICRC_HDR_MAX];
	const uint8_t *p;
	uint32_t n, have, crc;

	if (off >= m->pkt_len)
		len = 0;
	else
		len = RTE_MIN(len, m->pkt_len - off);

	have = RTE_MIN(len, (uint32_t)sizeof(hdr));
	/*
	 * No read of 0 bytes: DPDK 22.11's __rte_pktmbuf_read() of 0 bytes at
	 * pkt_len walks off the end of a chain whose first segment is shorter.
	 */
	p = have > 0 ? rte_pktmbuf_read(m, off, have, hdr) : hdr;
	if (p == NULL)
		return 0;	/* unreachable: the range was clamped to pkt_len */
	n = mask_headers(buf, p, have, len);
	crc = crc_update(0xffffffffU, buf, ICRC_LRH_LEN + n);

	/* Skip to the segment holding IPv4-relative byte n, then walk. */
	off += n;
	len -= n;
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t chunk = RTE_MIN(len, (uint32_t)m->data_len - off);

		crc = crc_update(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), chunk);
		len -= chunk;
		off = 0;
		m = m->next;
	}
	return ~crc;
}
