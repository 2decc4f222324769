/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frames written and read byte by byte, for the tests that play a
 * peer on droce's wire and for the fuzz harnesses: Ethernet, IPv4 (no
 * options, DF, TTL 64), UDP to port 4791, BTH, extension headers, payload,
 * pad and ICRC; ARP; and the decoder of a frame droce sent, which checks
 * everything a receiver would before it looks at the QP.
 */
#ifndef DROCE_TEST_FRAME_H
#define DROCE_TEST_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "roce_hdr.h"

#define FRAME_MAX	10000u
#define FRAME_OFF_IP	RTE_ETHER_HDR_LEN
#define FRAME_OFF_UDP	(FRAME_OFF_IP + 20)
#define FRAME_OFF_BTH	(FRAME_OFF_UDP + 8)

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

/* Extension headers after the BTH, as they go on the wire. */
struct ext {
	uint8_t b[64];
	uint32_t n;
};

/* Who a frame is from and to. */
struct frame_ends {
	struct rte_ether_addr src_mac, dst_mac;
	rte_be32_t src_ip, dst_ip;
	uint16_t sport;			/* UDP source port */
};

static inline struct rte_ether_hdr *
frame_eth(struct frame *f)
{
	return (struct rte_ether_hdr *)f->b;
}

static inline struct rte_ipv4_hdr *
frame_ip(struct frame *f)
{
	return (struct rte_ipv4_hdr *)(f->b + FRAME_OFF_IP);
}

static inline struct rte_udp_hdr *
frame_udp(struct frame *f)
{
	return (struct rte_udp_hdr *)(f->b + FRAME_OFF_UDP);
}

static inline struct roce_bth *
frame_bth(struct frame *f)
{
	return (struct roce_bth *)(f->b + FRAME_OFF_BTH);
}

struct ext ext_reth(uint64_t va, uint32_t rkey, uint32_t len);
struct ext ext_deth(uint32_t qkey, uint32_t sqp);
struct ext ext_aeth(uint8_t syn, uint32_t msn);
struct ext ext_atm(uint64_t va, uint32_t rkey, uint64_t swap_add, uint64_t comp);
struct ext ext_imm(uint32_t imm);
/* @a followed by @b. */
struct ext ext_cat(struct ext a, struct ext b);

/* The ICRC as it goes on the wire: little-endian. */
uint32_t frame_get_le32(const uint8_t *p);
void frame_put_le32(uint8_t *p, uint32_t v);
/* The IPv4 header checksum of @hlen bytes whose checksum field is zero. */
uint16_t frame_ip_csum(const void *ip, uint32_t hlen);

/*
 * Ethernet, IPv4 and UDP headers at @f for a UDP datagram of @l4 bytes (its
 * header included) from @e to port 4791, the IPv4 checksum computed.
 */
void frame_l2l4(uint8_t *f, const struct frame_ends *e, uint32_t l4);
/* The ICRC of the IPv4 packet at @ip into its last 4 bytes. */
void frame_put_icrc(uint8_t *ip);
/*
 * The IPv4 header checksum and the ICRC of @f from what its headers now say;
 * the ICRC only when the IPv4 total length holds a BTH and lies in the frame.
 */
void frame_seal(struct frame *f);
/*
 * @f := Ethernet, IPv4, UDP from @e, BTH (opcode @op to @dqpn at @psn,
 * AckReq on RC requests, the default P_Key), @x, @paylen bytes of @pay, pad,
 * ICRC.
 */
void frame_build(struct frame *f, const struct frame_ends *e, uint8_t op, uint32_t dqpn,
		 uint32_t psn, const struct ext *x, const void *pay, uint32_t paylen);
/*
 * An ARP packet with no padding: Ethernet from @eth_src to @eth_dst (NULL:
 * broadcast), operation @op, sender @sha/@sip, target IP @tip. Its length.
 */
uint32_t frame_arp(uint8_t *f, const struct rte_ether_addr *eth_dst,
		   const struct rte_ether_addr *eth_src, uint16_t op,
		   const struct rte_ether_addr *sha, rte_be32_t sip, rte_be32_t tip);
/* Hex digits into bytes: the byte count, or -1 on a malformed string or overflow. */
int frame_unhex(const char *s, uint8_t *out, size_t max);

/* A frame frame_decode() took apart. */
struct frame_info {
	bool arp;			/* an ARP packet; nothing below is set */
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	const struct roce_bth *bth;
	uint32_t iplen;			/* IPv4 total length */
	uint32_t blen;			/* from the BTH to the ICRC */
	uint8_t op;
	uint32_t dqpn, psn;
	bool ackreq;
	uint8_t syn;			/* AETH, if any */
	uint32_t msn;
	const uint8_t *ext, *pay;	/* after the BTH; after every header */
	uint32_t paylen;
};

/*
 * @f (@len bytes) as a receiver sees it: at least a whole ARP header, or a
 * RoCEv2 packet in IPv4 (no options, its checksum right, within the frame),
 * UDP to 4791 of the length IPv4 says, the right ICRC, a valid opcode,
 * TVer 0, the default P_Key, room for the opcode's headers and pad. NULL,
 * or what is wrong.
 */
const char *frame_decode(const uint8_t *f, uint32_t len, struct frame_info *o);

#endif /* DROCE_TEST_FRAME_H */
