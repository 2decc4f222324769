/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile frames below the transport (hostile.h has the rig): truncated
 * frames, Ethernet that is not IPv4 or not for droce0, malformed IPv4 and
 * UDP, bad ICRCs, the BTH's opcode, version and P_Key, ARP and the
 * neighbour table, chained mbufs, multicast frames (addressing, the
 * multicast QPN, groups not joined) and a seeded burst of random frames
 * ("--seed=N --frames=N" change it, for fuzzing by hand).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ether.h>

#include "droce_config.h"
#include "droce_rdev_core.h"
#include "harness.h"
#include "hostile.h"

/* The frame builder's ICRC agrees with scapy's (shared/vectors/roce_icrc.json). */
static int
test_builder_icrc_matches_reference_vector(void)
{
	static const char hex[] =
		"02000000000202000000000108004500003c00014000401126ae0a0000010a000002c00012b7"
		"002868a90400ffff0000001180000000000102030405060708090a0b0c0d0e0f1270e178";
	int n = frame_unhex(hex, F.b, sizeof(F.b));

	TEST_ASSERT(n > 0, "the reference vector is not hex");
	F.len = (uint32_t)n;
	TEST_ASSERT_EQ(roce_icrc_ipv4(F.b + FRAME_OFF_IP, n - FRAME_OFF_IP - 4), 2028040210u);
	memset(F.b + n - 4, 0, 4);
	frame_seal(&F);
	TEST_ASSERT(memcmp(F.b + n - 4, "\x12\x70\xe1\x78", 4) == 0, "frame_seal() ICRC");
	/* our own frames pass droce0's checks: a SEND arrives */
	{
		uint8_t d[16];

		hp_fill(d, 16, 5);
		CHECK(hp_inject_send_only(W.rc, W.rc->epsn, d, 16));
		CHECK(hp_settle());
		CHECK(hp_expect_recv(W.rc, d, 16));
		CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	}
	return hp_finish();
}

/* Every length from 0 to one byte short of a whole SEND frame: truncated. */
static int
test_truncated_frames_every_length(void)
{
	uint8_t d[16];
	struct hp_snap s;
	uint32_t k = 0;

	hp_fill(d, sizeof(d), 9);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	hp_snap(&s);
	for (uint32_t len = 0; len < F.len; len++, k++)
		CHECK(hp_inject_len(&F, len));
	/* consistent lengths, but too short for BTH + ICRC, or for the opcode's headers */
	for (uint32_t l4 = 0; l4 < 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN; l4++, k++) {
		G = F;
		frame_ip(&G)->total_length = rte_cpu_to_be_16(20 + l4);
		frame_udp(&G)->dgram_len = rte_cpu_to_be_16(l4);
		frame_seal(&G);
		CHECK(hp_inject(&G));
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

			hp_build(&G, ops[i], ops[i] == IBV_OPCODE_UD_SEND_ONLY ? W.ud->qpn : W.rc->qpn,
			      W.rc->epsn, &x, NULL, 0);
			/* keep the pad field at 0 so it is the headers that do not fit */
			CHECK(hp_inject(&G));
		}
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", k));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_no_completion(W.ud));
	/* the whole frame still arrives: nothing moved the expected PSN */
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(W.rc, d, sizeof(d)));
	CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	return hp_finish();
}

static int
test_ethernet_not_ip_or_not_ours(void)
{
	static const uint16_t types[] = { 0x86dd, 0x8100, 0x8915, 0x0000, 0x88b5, 0xffff, 0x0800 ^ 1 };
	uint8_t d[8] = { 1 };
	struct hp_snap s;

	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	hp_snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(types); i++) {
		G = F;
		frame_eth(&G)->ether_type = rte_cpu_to_be_16(types[i]);
		CHECK(hp_inject(&G));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_not_ip", RTE_DIM(types)));

	hp_snap(&s);
	G = F;					/* another unicast MAC */
	frame_eth(&G)->dst_addr.addr_bytes[5] = 0x09;
	CHECK(hp_inject(&G));
	G = F;					/* broadcast */
	memset(&frame_eth(&G)->dst_addr, 0xff, 6);
	CHECK(hp_inject(&G));
	G = F;					/* another IP */
	frame_ip(&G)->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 3));
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_not_mine", 3));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	return hp_finish();
}

static int
test_ipv4_malformed(void)
{
	uint8_t d[20];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 3);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));

	hp_snap(&s);
	/* options: IHL 6, a NOP option word, checksum and ICRC right */
	G = F;
	memmove(G.b + FRAME_OFF_UDP + 4, G.b + FRAME_OFF_UDP, F.len - FRAME_OFF_UDP);
	memset(G.b + FRAME_OFF_UDP, 1, 4);
	G.len = F.len + 4;
	frame_ip(&G)->version_ihl = 0x46;
	frame_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(frame_ip(&F)->total_length) + 4);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* IP version 6 in an IPv4 ethertype */
	frame_ip(&G)->version_ihl = 0x65;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* IHL below 5 */
	frame_ip(&G)->version_ihl = 0x44;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* bad header checksum */
	frame_ip(&G)->hdr_checksum ^= rte_cpu_to_be_16(0x0100);
	CHECK(hp_inject(&G));
	G = F;					/* a first fragment (MF) */
	frame_ip(&G)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* a later fragment */
	frame_ip(&G)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG | 3);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_ip", 6));

	hp_snap(&s);
	G = F;					/* total_length 4 short (UDP length disagrees) */
	frame_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(frame_ip(&F)->total_length) - 4);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* total_length beyond the frame */
	frame_ip(&G)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(frame_ip(&F)->total_length) + 8);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* total_length 0 */
	frame_ip(&G)->total_length = 0;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* total_length 12, shorter than the IPv4 header */
	frame_ip(&G)->total_length = rte_cpu_to_be_16(12);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;					/* total_length 0xffff */
	frame_ip(&G)->total_length = 0xffff;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", 5));

	hp_snap(&s);
	G = F;					/* TCP */
	frame_ip(&G)->next_proto_id = IPPROTO_TCP;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_not_roce", 1));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));

	/* Ethernet padding after the IPv4 packet is fine */
	hp_snap(&s);
	G = F;
	memset(G.b + G.len, 0xee, 40);
	G.len += 40;
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, NULL, 0));
	CHECK(hp_expect_recv(W.rc, d, sizeof(d)));
	CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	return hp_finish();
}

static int
test_udp_port_and_length(void)
{
	static const uint16_t ports[] = { 4790, 4792, 0, 0xffff, 0x12b7 ^ 0x0100 };
	uint8_t d[20];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 4);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	hp_snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(ports); i++) {
		G = F;
		frame_udp(&G)->dst_port = rte_cpu_to_be_16(ports[i]);
		frame_seal(&G);
		CHECK(hp_inject(&G));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_not_roce", RTE_DIM(ports)));

	hp_snap(&s);
	{
		static const int adj[] = { 4, -4, 1, -1, 0x7fff };

		for (unsigned int i = 0; i < RTE_DIM(adj); i++) {
			G = F;
			frame_udp(&G)->dgram_len = rte_cpu_to_be_16(
				(uint16_t)(rte_be_to_cpu_16(frame_udp(&F)->dgram_len) + adj[i]));
			frame_seal(&G);
			CHECK(hp_inject(&G));
		}
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, "rx_drop_truncated", RTE_DIM(adj)));
	}
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	return hp_finish();
}

static int
test_bad_icrc(void)
{
	uint8_t d[64];
	struct hp_snap s;
	uint32_t k = 0;

	hp_fill(d, sizeof(d), 6);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	hp_snap(&s);
	/* one flipped bit anywhere after the IPv4 header (UDP checksum excepted) */
	for (uint32_t off = FRAME_OFF_UDP; off < F.len; off++) {
		if (off == FRAME_OFF_UDP + 6 || off == FRAME_OFF_UDP + 7 || off == FRAME_OFF_BTH + 4)
			continue;	/* variant fields the ICRC masks */
		if (off == FRAME_OFF_UDP + 2 || off == FRAME_OFF_UDP + 3 || off == FRAME_OFF_UDP + 4 || off == FRAME_OFF_UDP + 5)
			continue;	/* would fail the port or length check first */
		G = F;
		G.b[off] ^= (uint8_t)(1u << (off % 8));
		CHECK(hp_inject(&G));
		k++;
	}
	G = F;				/* ICRC zeroed */
	memset(G.b + G.len - 4, 0, 4);
	CHECK(hp_inject(&G));
	k++;
	G = F;				/* source IP changed, IP checksum fixed, ICRC stale */
	frame_ip(&G)->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 9));
	frame_ip(&G)->hdr_checksum = 0;
	frame_ip(&G)->hdr_checksum = frame_ip_csum(frame_ip(&G), 20);
	CHECK(hp_inject(&G));
	k++;
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_icrc", k));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));

	/* the variant fields (TOS, TTL, UDP checksum, BTH byte 4) are not covered */
	hp_snap(&s);
	G = F;
	frame_ip(&G)->type_of_service = 0xff;
	frame_ip(&G)->time_to_live = 1;
	frame_ip(&G)->hdr_checksum = 0;
	frame_ip(&G)->hdr_checksum = frame_ip_csum(frame_ip(&G), 20);
	frame_udp(&G)->dgram_cksum = 0x1234;
	G.b[FRAME_OFF_BTH + 4] = 0xc0;
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, NULL, 0));
	CHECK(hp_expect_recv(W.rc, d, sizeof(d)));
	CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	return hp_finish();
}

static bool
spec_valid_opcode(unsigned int op)
{
	return op <= IBV_OPCODE_RC_FETCH_ADD ||
	       op == ROCE_OPCODE_SEND_LAST_INV || op == ROCE_OPCODE_SEND_ONLY_INV ||
	       op == ROCE_OPCODE_ATOMIC_WRITE ||
	       /* XRC: RC's requests and responses under its prefix, invalidation too */
	       (op >= ROCE_OPCODE_XRC && op <= (ROCE_OPCODE_XRC | IBV_OPCODE_RC_FETCH_ADD)) ||
	       op == (ROCE_OPCODE_XRC | ROCE_OPCODE_SEND_LAST_INV) ||
	       op == (ROCE_OPCODE_XRC | ROCE_OPCODE_SEND_ONLY_INV) ||
	       (op >= IBV_OPCODE_UC_SEND_FIRST && op <= IBV_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) ||
	       op == IBV_OPCODE_UD_SEND_ONLY || op == IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE;
}

/* All 256 opcodes; what droce0 does not implement (RD, CNP, reserved) is a bad BTH. */
static int
test_bth_opcode_version_pkey(void)
{
	struct ext x = { .n = 28 };	/* room for any header */
	uint8_t d[4] = { 0 };
	struct hp_snap s;
	uint32_t k = 0;

	hp_snap(&s);
	for (unsigned int op = 0; op < 256; op++) {
		TEST_ASSERT(!!(roce_opcode_tbl[op].flags & ROCE_OPF_VALID) == spec_valid_opcode(op),
			    "opcode 0x%02x valid in the table: %d", op,
			    !!(roce_opcode_tbl[op].flags & ROCE_OPF_VALID));
		if (spec_valid_opcode(op))
			continue;
		hp_build(&F, (uint8_t)op, W.rc->qpn, W.rc->epsn, &x, NULL, 0);
		CHECK(hp_inject(&F));
		k++;
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_bth", k));

	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	for (unsigned int tver = 1; tver < 16; tver += 7) {	/* 1, 8, 15 */
		G = F;
		frame_bth(&G)->flags = (frame_bth(&G)->flags & ~BTH_TVER_MASK) | tver;
		frame_seal(&G);
		CHECK(hp_inject(&G));
	}
	{
		static const uint16_t pkeys[] = { 0x0000, 0x8000, 0x1234, 0xfffe, 0x7ffe };

		for (unsigned int i = 0; i < RTE_DIM(pkeys); i++) {
			G = F;
			frame_bth(&G)->pkey = rte_cpu_to_be_16(pkeys[i]);
			frame_seal(&G);
			CHECK(hp_inject(&G));
		}
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, "rx_drop_bad_bth", 3 + RTE_DIM(pkeys)));
	}
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_no_completion(W.uc));
	CHECK(hp_no_completion(W.ud));
	TEST_ASSERT_EQ(hp_qp_state(W.rc), IBV_QPS_RTS);

	/* a limited-membership P_Key (0x7fff) may talk to the full default one */
	hp_snap(&s);
	G = F;
	frame_bth(&G)->pkey = rte_cpu_to_be_16(0x7fff);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, NULL, 0));
	CHECK(hp_expect_recv(W.rc, d, sizeof(d)));
	CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	return hp_finish();
}

/* ------------------------------------------------------------------ */
/* ARP and the neighbour table */

static void
arp_frame(struct frame *f, uint16_t op, rte_be32_t sip, const struct rte_ether_addr *sha, rte_be32_t tip)
{
	memset(f->b, 0, 60);
	frame_arp(f->b, NULL, sha, op, sha, sip, tip);
	f->len = 60;
}

static int
test_arp_malformed(void)
{
	static const struct rte_ether_addr evil = {{ 0x02, 0xee, 0xee, 0xee, 0xee, 0xee }};
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(G.b + RTE_ETHER_HDR_LEN);
	struct hp_snap s;
	struct frame_info o;
	int k = 0;

	arp_frame(&F, RTE_ARP_OP_REQUEST, peer_ip, &raw_mac, dev_ip);
	hp_snap(&s);
	for (uint32_t len = RTE_ETHER_HDR_LEN; len < RTE_ETHER_HDR_LEN + sizeof(*arp); len += 3, k++)
		CHECK(hp_inject_len(&F, len));
	G = F; arp->arp_hlen = 8; CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_hlen = 0; CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_plen = 16; CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_plen = 0; CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_hardware = rte_cpu_to_be_16(6); CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6); CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_data.arp_tip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 7)); CHECK(hp_inject(&G)); k++;
	G = F; arp->arp_opcode = rte_cpu_to_be_16(0x1234); CHECK(hp_inject(&G)); k++;
	CHECK(hp_settle());
	TEST_ASSERT_EQ(hp_sdelta(&s, "rx_arp"), k);
	TEST_ASSERT_EQ(hp_sdelta(&s, "tx_arp"), 0);
	/* all but the well-formed one for another IP count as malformed */
	CHECK(hp_drops_only(&s, "rx_drop_bad_arp", k - 1));
	CHECK(hp_expect_silence());

	/* a well-formed request is answered */
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	CHECK(hp_parse_out(&outf[0], &o));
	TEST_ASSERT(o.arp, "an ARP reply");
	arp = (struct rte_arp_hdr *)(outf[0].b + RTE_ETHER_HDR_LEN);
	TEST_ASSERT_EQ(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY);
	TEST_ASSERT(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &dev_mac), "sha");
	TEST_ASSERT_EQ(arp->arp_data.arp_sip, dev_ip);
	TEST_ASSERT_EQ(arp->arp_data.arp_tip, peer_ip);
	TEST_ASSERT(rte_is_same_ether_addr(&frame_eth(&outf[0])->dst_addr, &raw_mac), "reply to the asker");

	/* a request and a reply claiming 10.0.0.2 from another MAC: the static entry stays */
	arp_frame(&G, RTE_ARP_OP_REQUEST, peer_ip, &evil, dev_ip);
	CHECK(hp_inject(&G));
	arp_frame(&G, RTE_ARP_OP_REPLY, peer_ip, &evil, dev_ip);
	CHECK(hp_inject(&G));
	arp_frame(&G, RTE_ARP_OP_REQUEST, peer_ip, &evil, peer_ip);	/* gratuitous */
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	hp_drain();
	/* hp_finish() checks droce0 still sends to 10.0.0.2 at the raw port's MAC */
	return hp_finish();
}

/*
 * The one frame droce0 sent (within the usual wait): an ARP request for @tip
 * (@mac NULL), or an RC ACKNOWLEDGE of @psn to @mac.
 */
static int
expect_frame_to(const struct rte_ether_addr *mac, rte_be32_t tip, uint32_t psn)
{
	struct frame *f = &outf[0];
	int n = hp_collect_n(outf, OUT_MAX, 1);

	if (n != 1) {
		fprintf(stderr, "  expected one frame from droce0, got %d\n", n);
		return -1;
	}
	if (mac == NULL) {
		const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(f->b + RTE_ETHER_HDR_LEN);

		if (frame_eth(f)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP) ||
		    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) || arp->arp_data.arp_tip != tip) {
			fprintf(stderr, "  expected an ARP request\n");
			return -1;
		}
		return 0;
	}
	if (frame_eth(f)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    !rte_is_same_ether_addr(&frame_eth(f)->dst_addr, mac) || frame_ip(f)->dst_addr != tip ||
	    bth_opcode(frame_bth(f)) != IBV_OPCODE_RC_ACKNOWLEDGE || bth_psn(frame_bth(f)) != psn) {
		char m[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(m, sizeof(m), &frame_eth(f)->dst_addr);
		fprintf(stderr, "  expected an ACK of psn 0x%06x; got type 0x%04x to %s, opcode 0x%02x psn 0x%06x\n",
			psn, rte_be_to_cpu_16(frame_eth(f)->ether_type), m, bth_opcode(frame_bth(f)),
			bth_psn(frame_bth(f)));
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
	struct hp_qp *q = hp_qp_new(IBV_QPT_RC, &(struct hp_qopt){ .peer_ip = ip3 });
	uint8_t d[32];

	TEST_ASSERT(q != NULL, "an RC QP towards 10.0.0.3");
	hp_fill(d, sizeof(d), 41);
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, q->qpn, q->epsn, NULL, d, sizeof(d));
	frame_eth(&F)->src_addr = mac_x;
	frame_ip(&F)->src_addr = ip3;
	frame_seal(&F);
	/* received; the ACK waits for ARP */
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, sizeof(d)));
	CHECK(expect_frame_to(NULL, ip3, 0));
	/* the peer's retry (a duplicate) is ACKed to the MAC it came from, no ARP reply needed */
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(expect_frame_to(&mac_x, ip3, q->epsn));
	q->epsn = psn_add(q->epsn, 1);

	/* the peer comes back with another MAC and announces itself */
	arp_frame(&G, RTE_ARP_OP_REQUEST, ip3, &mac_y, ip3);
	CHECK(hp_inject(&G));
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, q->qpn, q->epsn, NULL, d, sizeof(d));
	frame_eth(&F)->src_addr = mac_y;
	frame_ip(&F)->src_addr = ip3;
	frame_seal(&F);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, sizeof(d)));
	CHECK(expect_frame_to(&mac_y, ip3, q->epsn));
	q->epsn = psn_add(q->epsn, 1);
	hp_qp_destroy(q);
	return hp_finish();
}

/* ------------------------------------------------------------------ */
/* mbuf chains and random frames */

/* Chained mbufs are linearized; an empty last segment is still the frame itself. */
static int
test_chained_frames(void)
{
	static uint8_t a[3000], b[3000];
	struct ext x = ext_deth(QKEY, PEER_QPN);
	struct hp_snap s;
	uint32_t cut[3];

	hp_fill(a, sizeof(a), 21);
	hp_fill(b, sizeof(b), 22);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, a, 200);
	cut[0] = 100;
	CHECK(hp_inject_chain(&F, cut, 1));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(W.ud, a, 200));
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, b, 200);
	cut[0] = F.len;
	CHECK(hp_inject_chain(&F, cut, 1));		/* [whole frame][empty] */
	CHECK(hp_settle());
	CHECK(hp_expect_recv(W.ud, b, 200));
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, b, 3000);
	cut[0] = 0;
	cut[1] = 1000;
	cut[2] = 2000;
	CHECK(hp_inject_chain(&F, cut, 3));		/* [empty][1000][1000][rest] */
	CHECK(hp_settle());
	CHECK(hp_expect_recv(W.ud, b, 3000));
	/* longer than droce0's own mbufs: cannot be linearized */
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, a, 3000);
	memcpy(F.b + F.len, F.b, 3000);
	F.len += 3000;		/* Ethernet padding, as far as droce0 can tell */
	cut[0] = 2000;
	cut[1] = 4000;
	CHECK(hp_inject_chain(&F, cut, 2));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", 1));
	CHECK(hp_no_completion(W.ud));
	return hp_finish();
}

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

/* --- Multicast (IBA 10.5, RoCEv2 over IPv4) --- */
#define MC_GROUP	RTE_IPV4(239u, 1, 2, 3)

static union ibv_gid
mc_gid(uint32_t ip)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff } };
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memcpy(&g.raw[12], &be, 4);
	return g;
}

/* @f, from the peer, readdressed to group @ip at the group's MAC. */
static void
mc_readdress(struct frame *f, uint32_t ip)
{
	rte_be32_t be = rte_cpu_to_be_32(ip);
	struct rte_ether_addr *d = &frame_eth(f)->dst_addr;

	d->addr_bytes[0] = 0x01;
	d->addr_bytes[1] = 0x00;
	d->addr_bytes[2] = 0x5e;
	d->addr_bytes[3] = (ip >> 16) & 0x7f;
	d->addr_bytes[4] = (ip >> 8) & 0xff;
	d->addr_bytes[5] = ip & 0xff;
	frame_ip(f)->dst_addr = be;
	frame_seal(f);
}

/* A RoCE frame with plausible headers and random content, sealed. */
static void
random_roce(struct frame *f)
{
	static uint8_t pay[4200];
	struct hp_qp *targets[3] = { W.rc, W.uc, W.ud };
	struct hp_qp *t = targets[rndn(3)];
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
		uint64_t v = rkey == W.mr->rkey ? hp_va(TGT_OFF + rndn(TGT_OFF / 2)) :
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
	hp_build(f, op, dqpn, psn, &x, pay, paylen);
	/* now and then to the group W.ud joined, mostly naming the multicast QPN */
	if (rndn(16) == 0) {
		if (rndn(4) != 0)
			frame_bth(f)->qpn = rte_cpu_to_be_32(DROCE_MCAST_QPN);
		mc_readdress(f, rndn(4) != 0 ? MC_GROUP : RTE_IPV4(239u, 0, 0, rndn(4)));
	}
	if (rndn(20) == 0)
		frame_bth(f)->flags = (uint8_t)rnd();
	if (rndn(40) == 0)
		frame_bth(f)->pkey = (uint16_t)rnd();
	if (rndn(2) == 0)
		frame_bth(f)->apsn |= rte_cpu_to_be_32(1u << 31);
	frame_seal(f);
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
			frame_eth(f)->dst_addr = dev_mac;
			frame_eth(f)->ether_type = rte_cpu_to_be_16(rndn(4) ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_ARP);
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
		uint32_t off = FRAME_OFF_IP + rndn(28);

		if (off != FRAME_OFF_IP + 10 && off != FRAME_OFF_IP + 11)
			f->b[off] = (uint8_t)rnd();
		frame_ip(f)->hdr_checksum = 0;
		frame_ip(f)->hdr_checksum = frame_ip_csum(frame_ip(f), 20);
	}
}

/* Receive completions after random traffic: each from a WR we posted, sane. */
static int
check_random_completions(struct hp_qp *q)
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
			/* (REM_INV_REQ_ERR: a SEND with Invalidate naming no window of the QP) */
			if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR &&
			    wc[i].status != IBV_WC_LOC_LEN_ERR && wc[i].status != IBV_WC_LOC_PROT_ERR &&
			    wc[i].status != IBV_WC_REM_INV_REQ_ERR) {
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
	uint64_t rx0 = hp_stat("rx_pkts"), frames_out = 0;
	union ibv_gid mcg = mc_gid(MC_GROUP);
	struct hp_snap s0, s1;

	rng = rng_seed;
	hp_snap(&s0);
	/* W.ud, and each QP that replaces it, is in the group random_roce aims at */
	TEST_ASSERT_EQ(ibv_attach_mcast(W.ud->qp, &mcg, 0), 0);
	for (uint32_t done = 0; done < total; done += chunk) {
		for (uint32_t i = done; i < done + chunk; i++) {
			if (i % 2 == 0)
				random_roce(&F);
			else
				random_junk(&F);
			CHECK(hp_inject(&F));
			if (i % 64 == 63) {
				/* keep the ring to the test from filling */
				int n = hp_collect(outf, OUT_MAX);

				for (int j = 0; j < RTE_MIN(n, OUT_MAX); j++) {
					struct frame_info o;

					CHECK(hp_parse_out(&outf[j], &o));
				}
				frames_out += n;
			}
		}
		CHECK(hp_settle());
		frames_out += hp_collect(NULL, 0);
		CHECK(hp_memory_intact());
		/* fresh QPs every chunk, so the random traffic keeps reaching live ones */
		{
			struct hp_qp **qs[3] = { &W.rc, &W.uc, &W.ud };

			for (int j = 0; j < 3; j++) {
				enum ibv_qp_type t = (*qs[j])->type;
				enum ibv_qp_state st = hp_qp_state(*qs[j]);

				TEST_ASSERT(st == IBV_QPS_RTS || (st == IBV_QPS_ERR && t == IBV_QPT_RC),
					    "QP type %d in state %d", t, st);
				CHECK(check_random_completions(*qs[j]));
				hp_qp_destroy(*qs[j]);
				*qs[j] = hp_qp_new(t, NULL);
				TEST_ASSERT(*qs[j] != NULL, "QP");
				if (t == IBV_QPT_UD)
					TEST_ASSERT_EQ(ibv_attach_mcast(W.ud->qp, &mcg, 0), 0);
			}
		}
	}
	TEST_ASSERT_EQ(hp_stat("rx_pkts") - rx0, total);
	hp_snap(&s1);
	printf("# %u random frames (seed 0x%" PRIx64 "); droce0 sent %" PRIu64 ";", total, rng_seed, frames_out);
	for (int i = 0; i < s1.n; i++)
		if (s1.v[i] != s0.v[i] && strstr(s1.name[i], "bytes") == NULL)
			printf(" %s+%" PRIu64, s1.name[i], s1.v[i] - s0.v[i]);
	printf("\n");
	return hp_finish();
}

/*
 * Frames to a group droce0's UD QP is attached to: the well-formed one
 * arrives; every other (droce0's own, back from the port, too) is counted
 * by cause and dropped, and none draws a frame from droce0 or a completion.
 */
static int
test_mcast_frames_checked(void)
{
	union ibv_gid g = mc_gid(MC_GROUP);
	struct ext deth = ext_deth(QKEY, PEER_QPN);
	uint8_t d[64];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 21);
	TEST_ASSERT_EQ(ibv_attach_mcast(W.ud->qp, &g, 0), 0);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, DROCE_MCAST_QPN, 0, &deth, d, sizeof(d));
	mc_readdress(&F, MC_GROUP);
	hp_snap(&s);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, NULL, 0));
	TEST_ASSERT_EQ(hp_sdelta(&s, "rx_mcast"), 1);
	CHECK(hp_expect_recv(W.ud, d, sizeof(d)));

	/* not the multicast QPN (the attached QP's own, another), or not UD */
	hp_snap(&s);
	G = F;
	frame_bth(&G)->qpn = rte_cpu_to_be_32(W.ud->qpn);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;
	frame_bth(&G)->qpn = rte_cpu_to_be_32(DROCE_MCAST_QPN - 1);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	{
		static const uint8_t ops[] = {
			IBV_OPCODE_RC_SEND_ONLY, IBV_OPCODE_UC_SEND_ONLY,
			IBV_OPCODE_RC_RDMA_WRITE_ONLY, IBV_OPCODE_RC_ACKNOWLEDGE,
		};

		for (unsigned int i = 0; i < RTE_DIM(ops); i++) {
			struct ext x = ops[i] == IBV_OPCODE_RC_RDMA_WRITE_ONLY ?
				ext_reth(hp_va(TGT_OFF), W.mr->rkey, 8) :
				ops[i] == IBV_OPCODE_RC_ACKNOWLEDGE ? ext_aeth(0, 0) : (struct ext){ 0 };

			hp_build(&G, ops[i], DROCE_MCAST_QPN, W.rc->epsn, &x, d,
				 ops[i] == IBV_OPCODE_RC_ACKNOWLEDGE ? 0 : 8);
			mc_readdress(&G, MC_GROUP);
			CHECK(hp_inject(&G));
		}
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_qp", 6));

	/* a unicast frame to the multicast QPN */
	hp_snap(&s);
	hp_build(&G, IBV_OPCODE_UD_SEND_ONLY, DROCE_MCAST_QPN, 0, &deth, d, sizeof(d));
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_qp", 1));

	/* MAC and IP disagree: another group's MAC, broadcast, the group at droce0's MAC */
	hp_snap(&s);
	G = F;
	frame_eth(&G)->dst_addr.addr_bytes[5] ^= 1;
	CHECK(hp_inject(&G));
	G = F;
	memset(&frame_eth(&G)->dst_addr, 0xff, 6);
	CHECK(hp_inject(&G));
	G = F;
	frame_eth(&G)->dst_addr = dev_mac;
	CHECK(hp_inject(&G));
	/* the group's MAC to droce0's own IP, and to 240.0.0.1 under 224.0.0.1's MAC */
	G = F;
	frame_ip(&G)->dst_addr = dev_ip;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	mc_readdress(&G, RTE_IPV4(224u, 0, 0, 1));
	frame_ip(&G)->dst_addr = rte_cpu_to_be_32(RTE_IPV4(240u, 0, 0, 1));
	frame_seal(&G);
	CHECK(hp_inject(&G));
	/* droce0's own datagram coming back from the port (its members had theirs) */
	G = F;
	frame_eth(&G)->src_addr = dev_mac;
	frame_ip(&G)->src_addr = dev_ip;
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_not_mine", 6));

	/* a group as the source, or the broadcast address */
	hp_snap(&s);
	G = F;
	frame_ip(&G)->src_addr = rte_cpu_to_be_32(MC_GROUP);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	G = F;
	frame_ip(&G)->src_addr = RTE_BE32(UINT32_MAX);
	frame_seal(&G);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_ip", 2));

	/* a group nobody here joined, one whose MAC is the joined group's (239.129.2.3) */
	hp_snap(&s);
	G = F;
	mc_readdress(&G, RTE_IPV4(239u, 9, 9, 9));
	CHECK(hp_inject(&G));
	G = F;
	mc_readdress(&G, RTE_IPV4(239u, 129, 2, 3));
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_mcast", 2));

	/* the wrong Q_Key; a corrupt ICRC */
	hp_snap(&s);
	deth = ext_deth(QKEY ^ 1, PEER_QPN);
	hp_build(&G, IBV_OPCODE_UD_SEND_ONLY, DROCE_MCAST_QPN, 0, &deth, d, sizeof(d));
	mc_readdress(&G, MC_GROUP);
	CHECK(hp_inject(&G));
	G = F;
	G.b[G.len - 1] ^= 0x40;
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	CHECK(hp_sdelta(&s, "rx_drop_bad_qkey") == 1 ? 0 : -1);
	CHECK(hp_sdelta(&s, "rx_drop_bad_icrc") == 1 ? 0 : -1);

	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.ud));
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_memory_intact());

	/* detached: the same frame is dropped */
	TEST_ASSERT_EQ(ibv_detach_mcast(W.ud->qp, &g, 0), 0);
	hp_snap(&s);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_mcast", 1));
	CHECK(hp_no_completion(W.ud));
	return hp_finish();
}

/*
 * A datagram droce0's UD QP sends to a group: to the group's MAC and IP, the
 * multicast QPN as the WR named it, no ARP for the group.
 */
static int
test_mcast_datagram_on_the_wire(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = mc_gid(MC_GROUP), .hop_limit = 1 },
	};
	struct ibv_ah *ah = ibv_create_ah(W.pd, &aa);
	struct ibv_sge sge = { hp_va(LOC_OFF), 100, W.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = DROCE_MCAST_QPN, .remote_qkey = QKEY },
	};
	struct rte_ether_addr gmac = {{ 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }};
	struct frame_info o;
	struct ibv_wc wc;
	const char *why;
	int n;

	TEST_ASSERT(ah != NULL, "AH to the group: errno %d", errno);
	hp_fill(W.buf + LOC_OFF, 100, 33);
	TEST_ASSERT_EQ(hp_post_send_wr(W.ud, &wr), 0);
	n = hp_collect_n(outf, OUT_MAX, 1);
	TEST_ASSERT_EQ(n, 1);	/* the datagram, and no ARP request */
	why = frame_decode(outf[0].b, outf[0].len, &o);
	TEST_ASSERT(why == NULL, "droce0 sent %s", why);
	TEST_ASSERT(!o.arp && o.op == IBV_OPCODE_UD_SEND_ONLY, "opcode 0x%02x", o.op);
	TEST_ASSERT(rte_is_same_ether_addr(&o.eth->dst_addr, &gmac), "not the group's MAC");
	TEST_ASSERT(rte_is_same_ether_addr(&o.eth->src_addr, &dev_mac), "not droce0's MAC");
	TEST_ASSERT_EQ(rte_be_to_cpu_32(o.ip->dst_addr), MC_GROUP);
	TEST_ASSERT(o.ip->src_addr == dev_ip, "not droce0's IP");
	TEST_ASSERT_EQ(o.dqpn, DROCE_MCAST_QPN);
	TEST_ASSERT_EQ(deth_qkey((const struct roce_deth *)o.ext), QKEY);
	TEST_ASSERT_EQ(deth_sqp((const struct roce_deth *)o.ext), W.ud->qpn);
	TEST_ASSERT(o.paylen == 100 && memcmp(o.pay, W.buf + LOC_OFF, 100) == 0, "payload");
	TEST_ASSERT_EQ(h_poll(W.ud->scq, &wc, 1, 2000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == 5, "send: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(ibv_destroy_ah(ah), 0);
	return hp_finish();
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_builder_icrc_matches_reference_vector),
	TEST_CASE(test_truncated_frames_every_length),
	TEST_CASE(test_ethernet_not_ip_or_not_ours),
	TEST_CASE(test_ipv4_malformed),
	TEST_CASE(test_udp_port_and_length),
	TEST_CASE(test_bad_icrc),
	TEST_CASE(test_bth_opcode_version_pkey),
	TEST_CASE(test_arp_malformed),
	TEST_CASE(test_neigh_learned_from_requests_and_gratuitous_arp),
	TEST_CASE(test_chained_frames),
	TEST_CASE(test_mcast_frames_checked),
	TEST_CASE(test_mcast_datagram_on_the_wire),
	TEST_CASE(test_random_burst_survived),
};

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--seed=", 7) == 0)
			rng_seed = strtoull(argv[i] + 7, NULL, 0) | 1;
		else if (strncmp(argv[i], "--frames=", 9) == 0)
			nb_random = (uint32_t)strtoul(argv[i] + 9, NULL, 0) / 100 * 100;
	}
	return HP_TEST_MAIN(argc, argv, "hostile_l2l4", cases);
}
