/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire format: header accessors, PSN arithmetic, the opcode table and the
 * ICRC, the latter against frames computed by scapy's RoCE implementation
 * and against a bit-at-a-time reference kept here.
 */
#include <stdint.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_test.h"
#include "frame.h"
#include "harness.h"
#include "roce_hdr.h"

#define ETH_LEN		RTE_ETHER_HDR_LEN
#define WIRE_FRAME_MAX	(ETH_LEN + 60 + 8 + ROCE_BTH_LEN + ROCE_RETH_LEN + 4096 + ROCE_ICRC_LEN)

static struct rte_mempool *pool;

/* scapy.contrib.roce frames from /work/shared/vectors/roce_icrc.json. */
static const struct {
	const char *what;
	const char *hex;
	uint32_t icrc_le_u32;
} vectors[] = {
	{
		"RC SEND_ONLY, dqpn 0x11, psn 0, ackreq, 16-byte payload",
		"02000000000202000000000108004500003c00014000401126ae0a0000010a00"
		"0002c00012b7002868a90400ffff000000118000000000010203040506070809"
		"0a0b0c0d0e0f1270e178",
		2028040210U,
	},
	{
		"RC RDMA_WRITE_FIRST with RETH, 256-byte payload, TOS 0x02, TTL 0x11",
		"02000000000202000000000108004502013c00014000111154ac0a0000010a00"
		"0002c00012b7012843c40600ffff0000002200fffffe00007f00000010000000"
		"123400001000abababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababababababababababababababababababababababababababababab"
		"abababababab2a701a85",
		2233102378U,
	},
	{
		"RC ACKNOWLEDGE, AETH syndrome 0 msn 5",
		"02000000000202000000000108004500003000014000401126ba0a0000020a00"
		"0001c00012b7001cc0bc1100ffff000000330000000500000005847cc285",
		2244115588U,
	},
	{
		"UD SEND_ONLY_WITH_IMMEDIATE, DETH, ImmDt, 8-byte payload",
		"02000000000202000000000108004500004000014000401126aa0a0000010a00"
		"0002c00012b7002c3cb86580ffff00000055000000071111111100000044dead"
		"beef64726f63652d7564dcae2b2d",
		757837532U,
	},
};
#define NB_VECTORS	((int)RTE_DIM(vectors))

/*
 * The ICRC computed the slow, obvious way: build the masked pseudo-packet and
 * run CRC-32 one bit at a time. Independent of roce_icrc.c's tables and
 * folding, so it checks both engines on inputs scapy did not cover.
 */
static uint32_t
ref_icrc(const uint8_t *ip, uint32_t len)
{
	static uint8_t buf[8 + WIRE_FRAME_MAX];
	uint32_t ihl = (ip[0] & 0x0f) * 4U, crc = 0xffffffffU;

	memset(buf, 0xff, 8);
	memcpy(buf + 8, ip, len);
	buf[8 + 1] = 0xff;			/* TOS */
	buf[8 + 8] = 0xff;			/* TTL */
	buf[8 + 10] = buf[8 + 11] = 0xff;	/* IP checksum */
	buf[8 + ihl + 6] = buf[8 + ihl + 7] = 0xff;	/* UDP checksum */
	buf[8 + ihl + 8 + 4] = 0xff;		/* BTH reserved/FECN/BECN */
	for (uint32_t i = 0; i < 8 + len; i++) {
		crc ^= buf[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320U & (0U - (crc & 1)));
	}
	return ~crc;
}

/*
 * A RoCEv2 RDMA_WRITE_ONLY frame with @plen bytes of pseudo-random payload and
 * @optlen bytes of IPv4 options; returns the frame length (ICRC slot zeroed).
 */
static uint32_t
make_frame(uint8_t *f, uint32_t plen, uint32_t optlen, uint32_t seed)
{
	uint32_t ihl = 20 + optlen, ip_len;
	uint8_t *ip = f + ETH_LEN, *udp = ip + ihl, *bth = udp + 8, *pl;

	memset(f, 0, ETH_LEN);
	f[12] = 0x08;
	ip_len = ihl + 8 + ROCE_BTH_LEN + ROCE_RETH_LEN + plen + ROCE_ICRC_LEN;
	memset(ip, 0, ihl);
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	ip[1] = 0x0a;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	ip[10] = 0x12;
	ip[11] = 0x34;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	for (uint32_t i = 0; i < optlen; i++)
		ip[20 + i] = (uint8_t)(0x01 + i);	/* arbitrary, unmasked */
	memcpy(udp, "\xc0\x00\x12\xb7", 4);
	udp[4] = (uint8_t)((ip_len - ihl) >> 8);
	udp[5] = (uint8_t)(ip_len - ihl);
	udp[6] = 0x56;
	udp[7] = 0x78;
	bth_init((struct roce_bth *)bth, IBV_OPCODE_RC_RDMA_WRITE_ONLY, 0, 0,
		 0xffff, 0x123456, 1, 0x654321);
	bth[4] = 0x40;
	reth_init((struct roce_reth *)(bth + ROCE_BTH_LEN), 0x7f0000001000ULL,
		  0xabcd, plen);
	pl = bth + ROCE_BTH_LEN + ROCE_RETH_LEN;
	for (uint32_t i = 0; i < plen; i++) {
		seed = seed * 1103515245U + 12345U;
		pl[i] = (uint8_t)(seed >> 16);
	}
	memset(pl + plen, 0, ROCE_ICRC_LEN);
	return ETH_LEN + ip_len;
}

static int
test_bth_build_parse_roundtrip(void)
{
	uint8_t raw[ROCE_BTH_LEN];
	struct roce_bth *b = (struct roce_bth *)raw;

	TEST_ASSERT_EQ(sizeof(struct roce_bth), ROCE_BTH_LEN);
	memset(raw, 0xee, sizeof(raw));
	bth_init(b, IBV_OPCODE_UC_RDMA_WRITE_LAST, 1, 3, 0xabcd, 0xfe123456, 1, 0x89abcdef);
	TEST_ASSERT_EQ(bth_opcode(b), IBV_OPCODE_UC_RDMA_WRITE_LAST);
	TEST_ASSERT_EQ(bth_se(b), 1);
	TEST_ASSERT_EQ(bth_pad(b), 3);
	TEST_ASSERT_EQ(bth_tver(b), 0);
	TEST_ASSERT_EQ(bth_pkey(b), 0xabcd);
	TEST_ASSERT_EQ(bth_qpn(b), 0x123456);
	TEST_ASSERT_EQ(bth_ackreq(b), 1);
	TEST_ASSERT_EQ(bth_psn(b), 0xabcdef);
	/* Wire layout: big-endian fields, reserved bits zero. */
	TEST_ASSERT_EQ(raw[0], 0x28);
	TEST_ASSERT_EQ(raw[1] & (BTH_SE | BTH_PAD_MASK | BTH_TVER_MASK), 0xb0);
	TEST_ASSERT_EQ(raw[2], 0xab);
	TEST_ASSERT_EQ(raw[3], 0xcd);
	TEST_ASSERT_EQ(raw[4], 0x00);
	TEST_ASSERT_EQ(raw[5], 0x12);
	TEST_ASSERT_EQ(raw[6], 0x34);
	TEST_ASSERT_EQ(raw[7], 0x56);
	TEST_ASSERT_EQ(raw[8], 0x80);
	TEST_ASSERT_EQ(raw[9], 0xab);
	TEST_ASSERT_EQ(raw[10], 0xcd);
	TEST_ASSERT_EQ(raw[11], 0xef);

	/* Flags off; an oversized pad is masked to 2 bits and spills nowhere. */
	bth_init(b, IBV_OPCODE_RC_SEND_ONLY, 0, 5, 0xffff, 0x000001, 0, 0xffffff);
	TEST_ASSERT_EQ(bth_se(b), 0);
	TEST_ASSERT_EQ(bth_pad(b), 1);
	TEST_ASSERT_EQ(bth_tver(b), 0);
	TEST_ASSERT_EQ(bth_ackreq(b), 0);
	TEST_ASSERT_EQ(bth_qpn(b), 1);
	TEST_ASSERT_EQ(bth_psn(b), 0xffffff);
	TEST_ASSERT_EQ(raw[8], 0x00);

	/* Accessors ignore the reserved byte before the QPN and PSN. */
	raw[4] = 0xff;
	raw[8] = 0x7f;
	TEST_ASSERT_EQ(bth_qpn(b), 1);
	TEST_ASSERT_EQ(bth_psn(b), 0xffffff);
	TEST_ASSERT_EQ(bth_ackreq(b), 0);
	bth_set_opcode(b, IBV_OPCODE_UD_SEND_ONLY);
	TEST_ASSERT_EQ(raw[0], IBV_OPCODE_UD_SEND_ONLY);
	return TEST_SUCCESS;
}

static int
test_reth_aeth_deth_atmeth_roundtrip(void)
{
	uint8_t raw[ROCE_ATMETH_LEN];
	static const uint8_t reth_wire[ROCE_RETH_LEN] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xde, 0xad, 0xbe, 0xef, 0x80, 0x00, 0x00, 0x01,
	};
	static const uint8_t atm_wire[ROCE_ATMETH_LEN] = {
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x08,
		0x11, 0x22, 0x33, 0x44,
		0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};

	TEST_ASSERT_EQ(sizeof(struct roce_reth), ROCE_RETH_LEN);
	TEST_ASSERT_EQ(sizeof(struct roce_aeth), ROCE_AETH_LEN);
	TEST_ASSERT_EQ(sizeof(struct roce_deth), ROCE_DETH_LEN);
	TEST_ASSERT_EQ(sizeof(struct roce_atmeth), ROCE_ATMETH_LEN);
	TEST_ASSERT_EQ(sizeof(struct roce_atmack), ROCE_ATMACK_LEN);

	struct roce_reth *r = (struct roce_reth *)raw;
	reth_init(r, 0x0123456789abcdefULL, 0xdeadbeef, 0x80000001);
	TEST_ASSERT(memcmp(raw, reth_wire, sizeof(reth_wire)) == 0, "RETH wire bytes");
	TEST_ASSERT(reth_va(r) == 0x0123456789abcdefULL, "va %" PRIx64, reth_va(r));
	TEST_ASSERT_EQ(reth_rkey(r), 0xdeadbeef);
	TEST_ASSERT_EQ(reth_len(r), 0x80000001);

	struct roce_aeth *a = (struct roce_aeth *)raw;
	aeth_init(a, AETH_NAK_REM_ACC, 0x1abcdef);
	TEST_ASSERT_EQ(raw[0], 0x62);
	TEST_ASSERT_EQ(raw[1], 0xab);
	TEST_ASSERT_EQ(aeth_syn(a), AETH_NAK_REM_ACC);
	TEST_ASSERT_EQ(aeth_syn(a) & AETH_TYPE_MASK, AETH_NAK);
	TEST_ASSERT_EQ(aeth_msn(a), 0xabcdef);
	aeth_init(a, AETH_RNR_NAK | 0x0e, 7);
	TEST_ASSERT_EQ(aeth_syn(a) & AETH_TYPE_MASK, AETH_RNR_NAK);
	TEST_ASSERT_EQ(aeth_syn(a) & 0x1f, 0x0e);
	TEST_ASSERT_EQ(aeth_msn(a), 7);

	struct roce_deth *d = (struct roce_deth *)raw;
	memset(raw, 0xff, sizeof(raw));
	deth_init(d, 0x80010000, 0xff000044);
	TEST_ASSERT_EQ(raw[4], 0x00);	/* reserved byte cleared */
	TEST_ASSERT_EQ(raw[7], 0x44);
	TEST_ASSERT_EQ(deth_qkey(d), 0x80010000);
	TEST_ASSERT_EQ(deth_sqp(d), 0x44);
	raw[4] = 0xa5;
	TEST_ASSERT_EQ(deth_sqp(d), 0x44);

	struct roce_atmeth *t = (struct roce_atmeth *)raw;
	atmeth_init(t, 0x7f0000001008ULL, 0x11223344, 0xffeeddccbbaa9988ULL,
		    0x0102030405060708ULL);
	TEST_ASSERT(memcmp(raw, atm_wire, sizeof(atm_wire)) == 0, "AtomicETH wire bytes");
	TEST_ASSERT(atmeth_va(t) == 0x7f0000001008ULL, "va");
	TEST_ASSERT_EQ(atmeth_rkey(t), 0x11223344);
	TEST_ASSERT(atmeth_swap_add(t) == 0xffeeddccbbaa9988ULL, "swap_add");
	TEST_ASSERT(atmeth_comp(t) == 0x0102030405060708ULL, "comp");

	struct roce_atmack *k = (struct roce_atmack *)raw;
	atmack_init(k, 0x8000000000000001ULL);
	TEST_ASSERT_EQ(raw[0], 0x80);
	TEST_ASSERT_EQ(raw[7], 0x01);
	TEST_ASSERT(atmack_orig(k) == 0x8000000000000001ULL, "orig");
	return TEST_SUCCESS;
}

static int
test_icrc_matches_scapy_vectors(void)
{
	uint8_t f[WIRE_FRAME_MAX];

	for (int v = 0; v < NB_VECTORS; v++) {
		int n = frame_unhex(vectors[v].hex, f, sizeof(f));
		uint32_t len, got;

		TEST_ASSERT(n > ETH_LEN + 20 + 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN,
			    "vector %d (%s) malformed", v, vectors[v].what);
		len = (uint32_t)n - ETH_LEN - ROCE_ICRC_LEN;
		/* The embedded frame agrees with itself. */
		TEST_ASSERT_EQ(f[ETH_LEN + 2] << 8 | f[ETH_LEN + 3], n - ETH_LEN);
		TEST_ASSERT_EQ(frame_get_le32(f + n - ROCE_ICRC_LEN), vectors[v].icrc_le_u32);

		got = roce_icrc_ipv4(f + ETH_LEN, len);
		TEST_ASSERT(got == vectors[v].icrc_le_u32, "vector %d (%s): got 0x%08x want 0x%08x",
			    v, vectors[v].what, got, vectors[v].icrc_le_u32);
		TEST_ASSERT_EQ(ref_icrc(f + ETH_LEN, len), vectors[v].icrc_le_u32);
	}
	return TEST_SUCCESS;
}

static int
test_icrc_long_payload_matches_bitwise_reference(void)
{
	static uint8_t f[WIRE_FRAME_MAX];
	static const uint32_t plens[] = {
		0, 1, 3, 15, 16, 17, 31, 63, 64, 65, 79, 80, 81, 95, 127, 128,
		129, 191, 255, 256, 257, 1000, 1023, 1024, 2047, 4095, 4096,
	};

	for (uint32_t o = 0; o <= 40; o += 20) {
		for (unsigned int i = 0; i < RTE_DIM(plens); i++) {
			uint32_t n = make_frame(f, plens[i], o, i + 1);
			uint32_t len = n - ETH_LEN - ROCE_ICRC_LEN;
			uint32_t got = roce_icrc_ipv4(f + ETH_LEN, len);
			uint32_t want = ref_icrc(f + ETH_LEN, len);

			TEST_ASSERT(got == want, "payload %u options %u: 0x%08x != 0x%08x",
				    plens[i], o, got, want);
		}
	}
	return TEST_SUCCESS;
}

/* Byte offsets, relative to the IPv4 header, that the ICRC masks out. */
static int
is_masked(uint32_t i, uint32_t ihl)
{
	return i == 1 || i == 8 || i == 10 || i == 11 || i == ihl + 6 ||
	       i == ihl + 7 || i == ihl + 8 + 4;
}

static int
test_icrc_detects_single_bit_flips(void)
{
	uint8_t f[WIRE_FRAME_MAX];

	for (int v = 0; v < NB_VECTORS; v++) {
		int n = frame_unhex(vectors[v].hex, f, sizeof(f));
		uint8_t *ip = f + ETH_LEN;
		uint32_t len = (uint32_t)n - ETH_LEN - ROCE_ICRC_LEN, flips = 0;
		uint32_t good = roce_icrc_ipv4(ip, len);

		TEST_ASSERT_EQ(good, vectors[v].icrc_le_u32);
		for (uint32_t i = 0; i < len; i++) {
			if (is_masked(i, 20))
				continue;
			for (int b = 0; b < 8; b++) {
				ip[i] ^= (uint8_t)(1 << b);
				uint32_t bad = roce_icrc_ipv4(ip, len);
				ip[i] ^= (uint8_t)(1 << b);
				TEST_ASSERT(bad != good, "vector %d: flip of byte %u bit %d undetected",
					    v, i, b);
				flips++;
			}
		}
		TEST_ASSERT_EQ(flips, 8 * (len - 7));
		TEST_ASSERT_EQ(roce_icrc_ipv4(ip, len), good);
	}
	return TEST_SUCCESS;
}

static int
test_icrc_ignores_masked_fields(void)
{
	uint8_t f[WIRE_FRAME_MAX];
	/* IPv4-relative offsets: TOS, TTL, IP checksum, UDP checksum, BTH byte 4 */
	static const uint32_t masked[] = { 1, 8, 10, 11, 26, 27, 32 };

	for (int v = 0; v < NB_VECTORS; v++) {
		int n = frame_unhex(vectors[v].hex, f, sizeof(f));
		uint8_t *ip = f + ETH_LEN;
		uint32_t len = (uint32_t)n - ETH_LEN - ROCE_ICRC_LEN;

		for (unsigned int i = 0; i < RTE_DIM(masked); i++) {
			for (unsigned int val = 0; val < 256; val += 51) {
				ip[masked[i]] = (uint8_t)val;
				TEST_ASSERT(roce_icrc_ipv4(ip, len) == vectors[v].icrc_le_u32,
					    "vector %d: byte %u = 0x%02x changed the ICRC",
					    v, masked[i], val);
			}
		}
		/* All at once, too; then the unmasked neighbours do count. */
		for (unsigned int i = 0; i < RTE_DIM(masked); i++)
			ip[masked[i]] ^= 0x5a;
		TEST_ASSERT_EQ(roce_icrc_ipv4(ip, len), vectors[v].icrc_le_u32);
		static const uint32_t neighbours[] = { 0, 2, 7, 9, 12, 25, 28, 31, 33 };
		for (unsigned int i = 0; i < RTE_DIM(neighbours); i++) {
			ip[neighbours[i]] ^= 0x01;
			TEST_ASSERT(roce_icrc_ipv4(ip, len) != vectors[v].icrc_le_u32,
				    "vector %d: byte %u is covered", v, neighbours[i]);
			ip[neighbours[i]] ^= 0x01;
		}
	}
	return TEST_SUCCESS;
}

/* Chains 3 mbufs holding @f split at @a and @b (0 < a < b < n). */
static struct rte_mbuf *
make_chain(const uint8_t *f, uint32_t n, uint32_t a, uint32_t b)
{
	const uint32_t cut[4] = { 0, a, b, n };

	return h_mbuf_chain(pool, f, cut, 3, true);
}

static int
check_split(const uint8_t *f, uint32_t n, uint32_t a, uint32_t b, uint32_t want)
{
	struct rte_mbuf *m = make_chain(f, n, a, b);
	uint32_t got;

	TEST_ASSERT(m != NULL, "building a chain split at %u/%u", a, b);
	TEST_ASSERT_EQ(m->nb_segs, 3);
	TEST_ASSERT_EQ(m->pkt_len, n);
	got = roce_icrc_mbuf(m, ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN);
	rte_pktmbuf_free(m);
	TEST_ASSERT(got == want, "split %u/%u of %u: 0x%08x != 0x%08x", a, b, n, got, want);
	return TEST_SUCCESS;
}

static int
test_icrc_mbuf_multiseg_equals_flat(void)
{
	static uint8_t f[WIRE_FRAME_MAX];
	uint32_t n, want;
	int len;

	TEST_ASSERT(pool != NULL, "no mbuf pool (EAL init failed?)");

	/* scapy vectors, split inside the IPv4, UDP and BTH headers and the payload. */
	for (int v = 0; v < NB_VECTORS; v++) {
		len = frame_unhex(vectors[v].hex, f, sizeof(f));
		n = (uint32_t)len;
		want = roce_icrc_ipv4(f + ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN);
		TEST_ASSERT_EQ(want, vectors[v].icrc_le_u32);
		for (uint32_t a = 1; a < ETH_LEN + 20 + 8 + ROCE_BTH_LEN + 3; a += 2) {
			uint32_t b = a + 7 + (a % 5) * 2;

			if (check_split(f, n, a, RTE_MIN(b, n - 1), want) != TEST_SUCCESS)
				return TEST_FAILED;
		}
		if (check_split(f, n, 17, n - 3, want) != TEST_SUCCESS)
			return TEST_FAILED;
	}

	/* A 4 KiB payload: long runs on either side of odd cuts. */
	n = make_frame(f, 4096, 0, 99);
	want = ref_icrc(f + ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN);
	TEST_ASSERT_EQ(roce_icrc_ipv4(f + ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN), want);
	if (check_split(f, n, 31, 1999, want) != TEST_SUCCESS ||
	    check_split(f, n, 1377, 2753, want) != TEST_SUCCESS ||
	    check_split(f, n, 61, 65, want) != TEST_SUCCESS)
		return TEST_FAILED;

	/* IPv4 options move the UDP/BTH masks; the mbuf walk must follow. */
	n = make_frame(f, 333, 12, 7);
	want = ref_icrc(f + ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN);
	TEST_ASSERT_EQ(roce_icrc_ipv4(f + ETH_LEN, n - ETH_LEN - ROCE_ICRC_LEN), want);
	if (check_split(f, n, 41, 55, want) != TEST_SUCCESS ||
	    check_split(f, n, 15, 201, want) != TEST_SUCCESS)
		return TEST_FAILED;
	return TEST_SUCCESS;
}

static int
test_psn_add_wraps_at_2_24(void)
{
	TEST_ASSERT_EQ(psn_add(0, 1), 1);
	TEST_ASSERT_EQ(psn_add(0xffffff, 1), 0);
	TEST_ASSERT_EQ(psn_add(0xfffffe, 5), 3);
	TEST_ASSERT_EQ(psn_add(0x123, 0x1000000), 0x123);
	TEST_ASSERT_EQ(psn_add(0x800000, 0x800000), 0);
	TEST_ASSERT_EQ(psn_diff(2, 0xfffffe), 4);
	TEST_ASSERT_EQ(psn_diff(0xfffffe, 2), 0xfffffc);
	return TEST_SUCCESS;
}

static int
test_psn_cmp_across_wrap(void)
{
	TEST_ASSERT(psn_cmp(0x000001, 0xffffff) > 0, "1 after 0xffffff");
	TEST_ASSERT(psn_cmp(0xffffff, 0x000001) < 0, "0xffffff before 1");
	TEST_ASSERT(psn_cmp(0x000000, 0xffffff) > 0, "0 after 0xffffff");
	TEST_ASSERT(psn_cmp(0x123456, 0x123456) == 0, "equal");
	TEST_ASSERT(psn_cmp(5, 4) > 0, "5 after 4");
	TEST_ASSERT(psn_cmp(4, 5) < 0, "4 before 5");
	/* Half the space either way. */
	TEST_ASSERT(psn_cmp(0x7fffff, 0) > 0, "0x7fffff after 0");
	TEST_ASSERT(psn_cmp(0x800001, 0) < 0, "0x800001 before 0");
	TEST_ASSERT(psn_cmp(0x10, 0x800011) > 0, "0x10 after 0x800011");
	return TEST_SUCCESS;
}

static int
test_opcode_table_hdr_len_and_flags(void)
{
	const struct roce_opcode_info *t = roce_opcode_tbl;
	int valid = 0;

	TEST_ASSERT_EQ(t[IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE].hdr_len, 12 + 8 + 4);
	TEST_ASSERT_EQ(t[IBV_OPCODE_UD_SEND_ONLY].hdr_len, 12 + 8);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_SEND_MIDDLE].hdr_len, 12);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE].hdr_len, 12 + 16 + 4);
	TEST_ASSERT_EQ(t[IBV_OPCODE_UC_RDMA_WRITE_FIRST].hdr_len, 12 + 16);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_READ_REQUEST].hdr_len, 12 + 16);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE].hdr_len, 12);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST].hdr_len, 12 + 4);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE].hdr_len, 12 + 4 + 8);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_COMPARE_SWAP].hdr_len, 12 + 28);
	/* XRC: an XRCETH after the BTH of every request, none in responses */
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_SEND_ONLY].hdr_len, 12 + 4);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE].hdr_len,
		       12 + 4 + 16 + 4);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_RDMA_READ_REQUEST].hdr_len, 12 + 4 + 16);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_FETCH_ADD].hdr_len, 12 + 4 + 28);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_ACKNOWLEDGE].hdr_len, 12 + 4);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_ATOMIC_ACKNOWLEDGE].hdr_len, 12 + 4 + 8);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | IBV_OPCODE_RDMA_READ_RESPONSE_MIDDLE].hdr_len, 12);
	/* SEND with Invalidate: the IETH after the XRCETH */
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | ROCE_OPCODE_SEND_LAST_INV].hdr_len, 12 + 4 + 4);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | ROCE_OPCODE_SEND_ONLY_INV].flags &
		       (ROCE_OPF_IETH | ROCE_OPF_XRCETH | ROCE_OPF_ONLY | ROCE_OPF_SEND),
		       ROCE_OPF_IETH | ROCE_OPF_XRCETH | ROCE_OPF_ONLY | ROCE_OPF_SEND);
	TEST_ASSERT_EQ(t[ROCE_OPCODE_XRC | 0x15].flags, 0);	/* reserved */

	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE].flags & ROCE_OPF_AETH, 0);
	TEST_ASSERT(t[IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST].flags & ROCE_OPF_AETH, "AETH");
	TEST_ASSERT(t[IBV_OPCODE_RC_RDMA_WRITE_MIDDLE].flags & ROCE_OPF_MIDDLE, "MIDDLE");
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_WRITE_MIDDLE].flags & ROCE_OPF_RETH, 0);
	TEST_ASSERT_EQ(t[IBV_OPCODE_UC_SEND_ONLY].flags & ROCE_OPF_ONLY, ROCE_OPF_ONLY);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE].flags &
		       (ROCE_OPF_ONLY | ROCE_OPF_IMMDT | ROCE_OPF_PAYLOAD),
		       ROCE_OPF_LAST | ROCE_OPF_IMMDT | ROCE_OPF_PAYLOAD);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_FETCH_ADD].flags &
		       (ROCE_OPF_ATOMIC | ROCE_OPF_ATMETH | ROCE_OPF_REQ | ROCE_OPF_PAYLOAD),
		       ROCE_OPF_ATOMIC | ROCE_OPF_ATMETH | ROCE_OPF_REQ);
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_ACKNOWLEDGE].flags &
		       (ROCE_OPF_AETH | ROCE_OPF_RESP | ROCE_OPF_PAYLOAD | ROCE_OPF_ATMACK),
		       ROCE_OPF_AETH | ROCE_OPF_RESP);
	TEST_ASSERT(t[IBV_OPCODE_RC_RDMA_READ_REQUEST].flags & ROCE_OPF_REQ, "read req is REQ");
	TEST_ASSERT_EQ(t[IBV_OPCODE_RC_RDMA_READ_REQUEST].flags & ROCE_OPF_PAYLOAD, 0);
	TEST_ASSERT(t[IBV_OPCODE_UD_SEND_ONLY].flags & ROCE_OPF_DETH, "UD DETH");
	TEST_ASSERT(strcmp(t[IBV_OPCODE_RC_SEND_ONLY].name, "RC_SEND_ONLY") == 0, "name");
	TEST_ASSERT(strcmp(t[IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE].name,
			   "UD_SEND_ONLY_WITH_IMMEDIATE") == 0, "name");
	TEST_ASSERT_EQ(t[IBV_OPCODE_RD_SEND_ONLY].flags, 0);
	TEST_ASSERT_EQ(t[IBV_OPCODE_UC + IBV_OPCODE_RDMA_READ_REQUEST].flags, 0);
	TEST_ASSERT_EQ(t[0xff].flags, 0);

	for (int op = 0; op < 256; op++) {
		uint32_t fl = t[op].flags, len = ROCE_BTH_LEN;
		static const char *const tp[] = { "RC_", "UC_", "RD_", "UD_", "CNP", "XRC" };

		if (!(fl & ROCE_OPF_VALID)) {
			TEST_ASSERT(fl == 0 && t[op].name == NULL && t[op].hdr_len == 0,
				    "opcode 0x%02x: invalid entry not empty", op);
			continue;
		}
		valid++;
		TEST_ASSERT(t[op].name != NULL &&
			    strncmp(t[op].name, tp[roce_op_transport((uint8_t)op) >> 5], 3) == 0,
			    "opcode 0x%02x: name %s", op, t[op].name ? t[op].name : "(null)");
		TEST_ASSERT(!(fl & ROCE_OPF_REQ) != !(fl & ROCE_OPF_RESP),
			    "%s: exactly one of REQ/RESP", t[op].name);
		TEST_ASSERT(__builtin_popcount(fl & (ROCE_OPF_SEND | ROCE_OPF_WRITE |
						     ROCE_OPF_READ | ROCE_OPF_ATOMIC)) <= 1,
			    "%s: at most one class", t[op].name);
		TEST_ASSERT(fl & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE | ROCE_OPF_LAST),
			    "%s: has a position", t[op].name);
		TEST_ASSERT(!(fl & ROCE_OPF_MIDDLE) || !(fl & ROCE_OPF_ONLY),
			    "%s: MIDDLE excludes FIRST/LAST", t[op].name);
		TEST_ASSERT(!(fl & ROCE_OPF_DETH) == (roce_op_transport((uint8_t)op) != IBV_OPCODE_UD),
			    "%s: DETH iff UD", t[op].name);
		TEST_ASSERT(!(fl & ROCE_OPF_XRCETH) ==
			    (roce_op_transport((uint8_t)op) != ROCE_OPCODE_XRC || !(fl & ROCE_OPF_REQ)),
			    "%s: XRCETH iff an XRC request", t[op].name);
		TEST_ASSERT(!(fl & ROCE_OPF_IMMDT) == !strstr(t[op].name, "_WITH_IMMEDIATE"),
			    "%s: IMMDT iff WITH_IMMEDIATE", t[op].name);
		if (fl & ROCE_OPF_XRCETH)
			len += ROCE_XRCETH_LEN;
		if (fl & ROCE_OPF_RETH)
			len += ROCE_RETH_LEN;
		if (fl & ROCE_OPF_AETH)
			len += ROCE_AETH_LEN;
		if (fl & ROCE_OPF_DETH)
			len += ROCE_DETH_LEN;
		if (fl & ROCE_OPF_IMMDT)
			len += ROCE_IMMDT_LEN;
		if (fl & ROCE_OPF_ATMETH)
			len += ROCE_ATMETH_LEN;
		if (fl & ROCE_OPF_ATMACK)
			len += ROCE_ATMACK_LEN;
		if (fl & ROCE_OPF_IETH)
			len += ROCE_IETH_LEN;
		TEST_ASSERT(t[op].hdr_len == len, "%s: hdr_len %u, flags say %u",
			    t[op].name, t[op].hdr_len, len);
	}
	/* RC 21 + 2 with invalidate + ATOMIC WRITE + UC 12 + UD 2 + XRC 23 (RC's but ATOMIC WRITE) */
	TEST_ASSERT_EQ(valid, 61);
	return TEST_SUCCESS;
}

/* XRC requests: the XRCETH after the BTH, the RETH, AtomicETH and ImmDt after it. */
static int
test_xrceth_places_the_headers_after_it(void)
{
	uint8_t raw[ROCE_BTH_LEN + ROCE_XRCETH_LEN + ROCE_RETH_LEN + ROCE_IMMDT_LEN + 8];
	struct roce_bth *b = (struct roce_bth *)raw;
	uint8_t op = ROCE_OPCODE_XRC | IBV_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	uint32_t opf = roce_opcode_tbl[op].flags;

	memset(raw, 0, sizeof(raw));
	bth_init(b, op, 0, 0, 0xffff, 0x12, 1, 7);
	xrceth_init(bth_xrceth(b), 0xab123456);	/* 24 bits on the wire */
	TEST_ASSERT_EQ(raw[12], 0x00);
	TEST_ASSERT_EQ(raw[13], 0x12);
	TEST_ASSERT_EQ(raw[15], 0x56);
	TEST_ASSERT_EQ(xrceth_srqn(bth_xrceth(b)), 0x123456);
	TEST_ASSERT_PTR_EQ((uint8_t *)bth_reth(b), raw + 16);
	reth_init(bth_reth(b), 0x1000, 0x55, 64);
	TEST_ASSERT_EQ(raw[16 + 15], 64);
	bth_set_immdt(b, opf, rte_cpu_to_be_32(0xcafe));
	TEST_ASSERT_EQ(raw[32 + 3], 0xfe);
	TEST_ASSERT_PTR_EQ(bth_payload(b), raw + 36);
	/* an atomic */
	b->opcode = ROCE_OPCODE_XRC | IBV_OPCODE_COMPARE_SWAP;
	TEST_ASSERT_PTR_EQ((uint8_t *)bth_atmeth(b), raw + 16);
	/* SEND with Invalidate: the IETH after the XRCETH, then the payload */
	b->opcode = ROCE_OPCODE_XRC | ROCE_OPCODE_SEND_ONLY_INV;
	bth_set_ieth(b, 0x01020304);
	TEST_ASSERT_EQ(raw[16], 0x01);
	TEST_ASSERT_EQ(raw[19], 0x04);
	TEST_ASSERT_EQ(xrceth_srqn(bth_xrceth(b)), 0x123456);
	TEST_ASSERT_EQ(bth_ieth_rkey(b), 0x01020304);
	TEST_ASSERT_PTR_EQ(bth_payload(b), raw + 20);
	/* RC's: right after the BTH */
	b->opcode = ROCE_OPCODE_SEND_ONLY_INV;
	TEST_ASSERT_EQ(bth_ieth_rkey(b), 0x00123456);
	/* a response carries none: its AETH follows the BTH */
	b->opcode = ROCE_OPCODE_XRC | IBV_OPCODE_ACKNOWLEDGE;
	TEST_ASSERT_PTR_EQ(bth_payload(b), raw + 16);
	TEST_ASSERT_PTR_EQ((uint8_t *)bth_aeth(b), raw + 12);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_bth_build_parse_roundtrip),
	TEST_CASE(test_reth_aeth_deth_atmeth_roundtrip),
	TEST_CASE(test_icrc_matches_scapy_vectors),
	TEST_CASE(test_icrc_long_payload_matches_bitwise_reference),
	TEST_CASE(test_icrc_detects_single_bit_flips),
	TEST_CASE(test_icrc_ignores_masked_fields),
	TEST_CASE(test_icrc_mbuf_multiseg_equals_flat),
	TEST_CASE(test_psn_add_wraps_at_2_24),
	TEST_CASE(test_psn_cmp_across_wrap),
	TEST_CASE(test_opcode_table_hdr_len_and_flags),
	TEST_CASE(test_xrceth_places_the_headers_after_it),
};

int
main(int argc, char **argv)
{
	int rc, eal;

	RTE_SET_USED(argc);
	eal = h_eal_init(argv[0], "tw", "0", NULL);
	if (eal == 0) {
		pool = rte_pktmbuf_pool_create("test_wire", 63, 0, 0,
					       RTE_PKTMBUF_HEADROOM + 4096 + 256,
					       SOCKET_ID_ANY);
		if (pool == NULL)
			fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
	}
	rc = DROCE_TEST_MAIN("wire", cases, NULL, NULL);
	rte_mempool_free(pool);
	if (eal >= 0)
		rte_eal_cleanup();
	return rc;
}
