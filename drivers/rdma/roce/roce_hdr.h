/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 wire headers (IBA vol. 1 ch. 9, annex A17), the Ethernet, IPv4 and
 * UDP headers in front of them and the tag-matching headers in a payload,
 * with accessors. Logic code finds headers and reads and writes wire fields
 * only through these; all fields are big-endian on the wire (the ICRC is
 * stored little-endian).
 */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

#include <stdint.h>
#include <string.h>
#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <infiniband/opcode.h>
#include <infiniband/tm_types.h>

#include "droce_rdev_core.h"

#define ROCE_BTH_LEN	12
#define ROCE_RETH_LEN	16
#define ROCE_AETH_LEN	4
#define ROCE_DETH_LEN	8
#define ROCE_IMMDT_LEN	4
#define ROCE_IETH_LEN	4
#define ROCE_ATMETH_LEN	28
#define ROCE_ATMACK_LEN	8
#define ROCE_XRCETH_LEN	4
#define ROCE_ICRC_LEN	4
#define ROCE_GRH_LEN	40
#define ROCE_TMH_LEN	16
#define ROCE_RVH_LEN	16
#define ROCE_IPV4_LEN	20	/* no options: the receive path drops any other */
#define ROCE_UDP_LEN	8
/* Ethernet + IPv4 + UDP */
#define ROCE_L2L4_LEN	(RTE_ETHER_HDR_LEN + ROCE_IPV4_LEN + ROCE_UDP_LEN)
/* Ethernet, IPv4 and UDP's ports and length: what roce_rx_plain() compares */
#define ROCE_RX_PLAIN_LEN	(RTE_ETHER_HDR_LEN + ROCE_IPV4_LEN + 6)

#define ROCE_PSN_MASK	0xffffffU
#define ROCE_QPN_MASK	0xffffffU

/*
 * IBA 9.2.1: the XRC transport's opcodes (0b101xxxxx), which rdma-core's
 * opcode.h lacks. Requests carry an XRCETH (the target SRQ) right after the
 * BTH; responses are shaped as RC's, with the XRC prefix.
 */
#define ROCE_OPCODE_XRC	0xa0

/* BTH flags byte (byte 1) */
#define BTH_SE		0x80
#define BTH_MIG		0x40
#define BTH_PAD_MASK	0x30
#define BTH_TVER_MASK	0x0f

/* AETH syndrome (IBA 9.7.5.1.1): top 3 bits say ACK, RNR NAK or NAK */
#define AETH_TYPE_MASK	0xe0
#define AETH_ACK	0x00
#define AETH_RNR_NAK	0x20
#define AETH_NAK	0x60
#define AETH_NAK_PSN_SEQ	0x60
#define AETH_NAK_INV_REQ	0x61
#define AETH_NAK_REM_ACC	0x62
#define AETH_NAK_REM_OP		0x63
#define AETH_CREDIT_INVALID	0x1f

struct roce_bth {
	uint8_t opcode;
	uint8_t flags;
	rte_be16_t pkey;
	rte_be32_t qpn;		/* byte 4 reserved (FECN/BECN), 24-bit dest QP */
	rte_be32_t apsn;	/* AckReq bit, 7 reserved, 24-bit PSN */
} __rte_packed;

/* IBA 9.3.5: XRC extended transport header, the XRC SRQ to receive into */
struct roce_xrceth {
	rte_be32_t srqn;	/* 8 reserved bits, 24-bit XRC SRQ number */
} __rte_packed;

struct roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

struct roce_aeth {
	rte_be32_t smsn;	/* syndrome << 24 | MSN */
} __rte_packed;

struct roce_deth {
	rte_be32_t qkey;
	rte_be32_t sqp;		/* 8 reserved, 24-bit source QP */
} __rte_packed;

struct roce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t comp;
} __rte_packed;

struct roce_atmack {
	rte_be64_t orig;
} __rte_packed;

/*
 * Tag matching (rdma-core's tm_types.h): the TMH opens the payload of a
 * tag-matching SEND; a rendezvous request's RVH follows it.
 */
struct roce_tmh {
	uint8_t opcode;		/* enum ibv_tmh_op */
	uint8_t reserved[3];
	rte_be32_t app_ctx;
	rte_be64_t tag;
} __rte_packed;

struct roce_rvh {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

_Static_assert(sizeof(struct rte_ipv4_hdr) == ROCE_IPV4_LEN, "IPv4 header");
_Static_assert(sizeof(struct rte_udp_hdr) == ROCE_UDP_LEN, "UDP header");
_Static_assert(sizeof(struct roce_bth) == ROCE_BTH_LEN, "BTH");
_Static_assert(sizeof(struct roce_reth) == ROCE_RETH_LEN, "RETH");
_Static_assert(sizeof(struct roce_xrceth) == ROCE_XRCETH_LEN, "XRCETH");
_Static_assert(sizeof(struct roce_aeth) == ROCE_AETH_LEN, "AETH");
_Static_assert(sizeof(struct roce_deth) == ROCE_DETH_LEN, "DETH");
_Static_assert(sizeof(struct roce_atmeth) == ROCE_ATMETH_LEN, "AtomicETH");
_Static_assert(sizeof(struct roce_atmack) == ROCE_ATMACK_LEN, "AtomicAckETH");
_Static_assert(sizeof(struct roce_tmh) == ROCE_TMH_LEN, "TMH");
_Static_assert(sizeof(struct ibv_tmh) == ROCE_TMH_LEN, "rdma-core's TMH");
_Static_assert(sizeof(struct roce_rvh) == ROCE_RVH_LEN, "RVH");
_Static_assert(sizeof(struct ibv_rvh) == ROCE_RVH_LEN, "rdma-core's RVH");

/*
 * The one's-complement sum of a 20-byte IPv4 header (no options), folded to
 * 16 bits and not inverted, as rte_raw_cksum(ip, 20) gives it: five 32-bit
 * words summed at once and folded, where DPDK 22.11 adds 16-bit words in a
 * loop (half of the transmit path's header time in a profile). A header
 * whose checksum is right sums to 0xffff; ~ of the sum with the checksum
 * field 0 is the checksum.
 */
static inline uint16_t
roce_ipv4_sum20(const void *ip)
{
	uint32_t w[5];
	uint64_t s;

	memcpy(w, ip, sizeof(w));	/* 2-byte aligned behind Ethernet */
	s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* --- Ethernet, IPv4, UDP: where each header starts, from the one before --- */
static inline struct rte_ipv4_hdr *
eth_ipv4(struct rte_ether_hdr *eth)
{
	return (struct rte_ipv4_hdr *)((uint8_t *)eth + RTE_ETHER_HDR_LEN);
}

static inline struct rte_arp_hdr *
eth_arp(struct rte_ether_hdr *eth)
{
	return (struct rte_arp_hdr *)((uint8_t *)eth + RTE_ETHER_HDR_LEN);
}

static inline struct rte_udp_hdr *
ipv4_udp(struct rte_ipv4_hdr *ip)
{
	return (struct rte_udp_hdr *)((uint8_t *)ip + ROCE_IPV4_LEN);
}

static inline struct roce_bth *
udp_bth(struct rte_udp_hdr *udp)
{
	return (struct roce_bth *)((uint8_t *)udp + ROCE_UDP_LEN);
}

/* --- ICRC: the last 4 bytes of the IPv4 datagram, roce_icrc_ipv4()'s value little-endian --- */
static inline uint8_t *
ipv4_icrc(struct rte_ipv4_hdr *ip)
{
	return (uint8_t *)ip + rte_be_to_cpu_16(ip->total_length) - ROCE_ICRC_LEN;
}

static inline uint32_t
icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
icrc_set(uint8_t *p, uint32_t icrc)
{
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
}

/* --- GRH: RoCEv2 over IPv4 gives a UD receive 20 zero bytes, then the IPv4 header --- */
static inline void
grh_from_ipv4(uint8_t grh[ROCE_GRH_LEN], const struct rte_ipv4_hdr *ip)
{
	memset(grh, 0, ROCE_GRH_LEN - ROCE_IPV4_LEN);
	memcpy(grh + ROCE_GRH_LEN - ROCE_IPV4_LEN, ip, ROCE_IPV4_LEN);
}
_Static_assert(ROCE_GRH_LEN - ROCE_IPV4_LEN == DROCE_GRH_IPV4_OFF, "the facade reads it there");

/* --- BTH --- */
static inline uint8_t bth_opcode(const struct roce_bth *b) { return b->opcode; }
static inline void bth_set_opcode(struct roce_bth *b, uint8_t op) { b->opcode = op; }
static inline int bth_se(const struct roce_bth *b) { return !!(b->flags & BTH_SE); }
static inline unsigned int bth_pad(const struct roce_bth *b) { return (b->flags & BTH_PAD_MASK) >> 4; }
static inline unsigned int bth_tver(const struct roce_bth *b) { return b->flags & BTH_TVER_MASK; }
static inline uint16_t bth_pkey(const struct roce_bth *b) { return rte_be_to_cpu_16(b->pkey); }
static inline uint32_t bth_qpn(const struct roce_bth *b) { return rte_be_to_cpu_32(b->qpn) & ROCE_QPN_MASK; }
static inline int bth_ackreq(const struct roce_bth *b) { return !!(rte_be_to_cpu_32(b->apsn) >> 31); }
static inline uint32_t bth_psn(const struct roce_bth *b) { return rte_be_to_cpu_32(b->apsn) & ROCE_PSN_MASK; }

static inline void
bth_init(struct roce_bth *b, uint8_t opcode, int se, unsigned int pad,
	 uint16_t pkey, uint32_t dqpn, int ackreq, uint32_t psn)
{
	b->opcode = opcode;
	b->flags = (se ? BTH_SE : 0) | BTH_MIG | ((pad << 4) & BTH_PAD_MASK);
	b->pkey = rte_cpu_to_be_16(pkey);
	b->qpn = rte_cpu_to_be_32(dqpn & ROCE_QPN_MASK);
	b->apsn = rte_cpu_to_be_32((ackreq ? 1U << 31 : 0) | (psn & ROCE_PSN_MASK));
}

/* --- RETH --- */
static inline uint64_t reth_va(const struct roce_reth *r) { return rte_be_to_cpu_64(r->va); }
static inline uint32_t reth_rkey(const struct roce_reth *r) { return rte_be_to_cpu_32(r->rkey); }
static inline uint32_t reth_len(const struct roce_reth *r) { return rte_be_to_cpu_32(r->len); }
static inline void
reth_init(struct roce_reth *r, uint64_t va, uint32_t rkey, uint32_t len)
{
	r->va = rte_cpu_to_be_64(va);
	r->rkey = rte_cpu_to_be_32(rkey);
	r->len = rte_cpu_to_be_32(len);
}

/* --- AETH --- */
static inline uint8_t aeth_syn(const struct roce_aeth *a) { return rte_be_to_cpu_32(a->smsn) >> 24; }
static inline uint32_t aeth_msn(const struct roce_aeth *a) { return rte_be_to_cpu_32(a->smsn) & 0xffffff; }
static inline void
aeth_init(struct roce_aeth *a, uint8_t syn, uint32_t msn)
{
	a->smsn = rte_cpu_to_be_32((uint32_t)syn << 24 | (msn & 0xffffff));
}

/* --- DETH --- */
static inline uint32_t deth_qkey(const struct roce_deth *d) { return rte_be_to_cpu_32(d->qkey); }
static inline uint32_t deth_sqp(const struct roce_deth *d) { return rte_be_to_cpu_32(d->sqp) & ROCE_QPN_MASK; }
static inline void
deth_init(struct roce_deth *d, uint32_t qkey, uint32_t sqp)
{
	d->qkey = rte_cpu_to_be_32(qkey);
	d->sqp = rte_cpu_to_be_32(sqp & ROCE_QPN_MASK);
}

/* --- AtomicETH / AtomicAckETH --- */
static inline uint64_t atmeth_va(const struct roce_atmeth *a) { return rte_be_to_cpu_64(a->va); }
static inline uint32_t atmeth_rkey(const struct roce_atmeth *a) { return rte_be_to_cpu_32(a->rkey); }
static inline uint64_t atmeth_swap_add(const struct roce_atmeth *a) { return rte_be_to_cpu_64(a->swap_add); }
static inline uint64_t atmeth_comp(const struct roce_atmeth *a) { return rte_be_to_cpu_64(a->comp); }
static inline void
atmeth_init(struct roce_atmeth *a, uint64_t va, uint32_t rkey, uint64_t swap_add, uint64_t comp)
{
	a->va = rte_cpu_to_be_64(va);
	a->rkey = rte_cpu_to_be_32(rkey);
	a->swap_add = rte_cpu_to_be_64(swap_add);
	a->comp = rte_cpu_to_be_64(comp);
}
static inline uint64_t atmack_orig(const struct roce_atmack *a) { return rte_be_to_cpu_64(a->orig); }
static inline void atmack_init(struct roce_atmack *a, uint64_t v) { a->orig = rte_cpu_to_be_64(v); }

/* --- TMH / RVH --- */
static inline uint8_t tmh_opcode(const struct roce_tmh *t) { return t->opcode; }
static inline uint32_t tmh_app_ctx(const struct roce_tmh *t) { return rte_be_to_cpu_32(t->app_ctx); }
static inline uint64_t tmh_tag(const struct roce_tmh *t) { return rte_be_to_cpu_64(t->tag); }
static inline void
tmh_init(struct roce_tmh *t, uint8_t opcode, uint32_t app_ctx, uint64_t tag)
{
	memset(t, 0, sizeof(*t));
	t->opcode = opcode;
	t->app_ctx = rte_cpu_to_be_32(app_ctx);
	t->tag = rte_cpu_to_be_64(tag);
}
static inline struct roce_rvh *
tmh_rvh(struct roce_tmh *t)
{
	return (struct roce_rvh *)((uint8_t *)t + ROCE_TMH_LEN);
}
static inline uint64_t rvh_va(const struct roce_rvh *r) { return rte_be_to_cpu_64(r->va); }
static inline uint32_t rvh_rkey(const struct roce_rvh *r) { return rte_be_to_cpu_32(r->rkey); }
static inline uint32_t rvh_len(const struct roce_rvh *r) { return rte_be_to_cpu_32(r->len); }

/* --- PSN arithmetic on the 24-bit circle (IBA 9.7.1) --- */
static inline uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & ROCE_PSN_MASK; }
/* < 0 if a is before b, 0 if equal, > 0 if after; valid within half the space */
static inline int32_t psn_cmp(uint32_t a, uint32_t b) { return (int32_t)((a - b) << 8); }
static inline uint32_t psn_diff(uint32_t a, uint32_t b) { return (a - b) & ROCE_PSN_MASK; }

/* --- Opcode table (roce_opcode.c) --- */
enum {
	ROCE_OPF_RETH	= 1 << 0,
	ROCE_OPF_AETH	= 1 << 1,
	ROCE_OPF_DETH	= 1 << 2,
	ROCE_OPF_IMMDT	= 1 << 3,
	ROCE_OPF_ATMETH	= 1 << 4,
	ROCE_OPF_ATMACK	= 1 << 5,
	ROCE_OPF_PAYLOAD = 1 << 6,
	ROCE_OPF_FIRST	= 1 << 7,
	ROCE_OPF_MIDDLE	= 1 << 8,
	ROCE_OPF_LAST	= 1 << 9,
	ROCE_OPF_SEND	= 1 << 10,
	ROCE_OPF_WRITE	= 1 << 11,
	ROCE_OPF_READ	= 1 << 12,
	ROCE_OPF_ATOMIC	= 1 << 13,
	ROCE_OPF_REQ	= 1 << 14,	/* handled by the responder */
	ROCE_OPF_RESP	= 1 << 15,	/* handled by the completer */
	ROCE_OPF_VALID	= 1 << 16,
	ROCE_OPF_IETH	= 1 << 17,	/* SEND with Invalidate: the R_Key to invalidate */
	ROCE_OPF_XRCETH	= 1 << 18,	/* an XRC request: XRCETH after the BTH */
	ROCE_OPF_ATOMIC_WRITE = 1 << 19,	/* ATOMIC WRITE: 8 bytes, stored at once */
};

/* IBA table 38: SEND with Invalidate (no opcode.h name; RC, and XRC under its prefix) */
#define ROCE_OPCODE_SEND_LAST_INV	0x16
#define ROCE_OPCODE_SEND_ONLY_INV	0x17
/* IBA 1.5 (the kernel's IB_OPCODE_RC_ATOMIC_WRITE; no opcode.h name in rdma-core v44) */
#define ROCE_OPCODE_ATOMIC_WRITE	0x1d
#define ROCE_OPF_ONLY (ROCE_OPF_FIRST | ROCE_OPF_LAST)

struct roce_opcode_info {
	const char *name;
	uint32_t flags;
	uint8_t hdr_len;	/* BTH + extension headers, at most ROCE_REQ_HDR_MAX */
};

extern const struct roce_opcode_info roce_opcode_tbl[256];

static inline uint8_t roce_op_transport(uint8_t op) { return op & 0xe0; }
/* the operation, without the transport prefix (IBV_OPCODE_SEND_FIRST ...) */
static inline uint8_t roce_op_kind(uint8_t op) { return op & 0x1f; }

/* Where a RETH or AtomicETH begins: after the XRCETH of an XRC request. */
static inline uint32_t
bth_ext_off(const struct roce_bth *b)
{
	return ROCE_BTH_LEN + (roce_opcode_tbl[b->opcode].flags & ROCE_OPF_XRCETH ?
			       ROCE_XRCETH_LEN : 0);
}

static inline struct roce_xrceth *
bth_xrceth(struct roce_bth *b)
{
	return (struct roce_xrceth *)((uint8_t *)b + ROCE_BTH_LEN);
}
static inline uint32_t xrceth_srqn(const struct roce_xrceth *x) { return rte_be_to_cpu_32(x->srqn) & ROCE_QPN_MASK; }
static inline void xrceth_init(struct roce_xrceth *x, uint32_t srqn) { x->srqn = rte_cpu_to_be_32(srqn & ROCE_QPN_MASK); }

/*
 * --- Extension headers and payload, from the BTH ---
 * IBA 9.2: a RETH, AETH, DETH or AtomicETH (one at most) comes right after
 * the BTH (after the XRCETH in an XRC request), an AtomicAckETH after the AETH, ImmDt after all of them; the
 * payload after every header of the opcode (roce_opcode_tbl's hdr_len).
 * @opf: the opcode's flags.
 */
static inline struct roce_reth *
bth_reth(struct roce_bth *b)
{
	return (struct roce_reth *)((uint8_t *)b + bth_ext_off(b));
}

static inline struct roce_aeth *
bth_aeth(struct roce_bth *b)
{
	return (struct roce_aeth *)((uint8_t *)b + ROCE_BTH_LEN);
}

static inline struct roce_deth *
bth_deth(struct roce_bth *b)
{
	return (struct roce_deth *)((uint8_t *)b + ROCE_BTH_LEN);
}

static inline struct roce_atmeth *
bth_atmeth(struct roce_bth *b)
{
	return (struct roce_atmeth *)((uint8_t *)b + bth_ext_off(b));
}

static inline struct roce_atmack *
bth_atmack(struct roce_bth *b)
{
	return (struct roce_atmack *)((uint8_t *)b + ROCE_BTH_LEN + ROCE_AETH_LEN);
}

static inline uint32_t
immdt_off(uint32_t opf)
{
	return ROCE_BTH_LEN + ((opf & ROCE_OPF_XRCETH) ? ROCE_XRCETH_LEN : 0) +
	       ((opf & ROCE_OPF_RETH) ? ROCE_RETH_LEN : 0) +
	       ((opf & ROCE_OPF_DETH) ? ROCE_DETH_LEN : 0);
}

/* ImmDt as it travels (big-endian), as ibv_wc.imm_data and ibv_send_wr.imm_data hold it */
static inline rte_be32_t
bth_immdt(const struct roce_bth *b, uint32_t opf)
{
	rte_be32_t imm;

	memcpy(&imm, (const uint8_t *)b + immdt_off(opf), sizeof(imm));
	return imm;
}

static inline void
bth_set_immdt(struct roce_bth *b, uint32_t opf, rte_be32_t imm)
{
	memcpy((uint8_t *)b + immdt_off(opf), &imm, sizeof(imm));
}

/* IETH (IBA 9.3.4): right after the BTH, or after an XRC request's XRCETH */
static inline uint32_t
bth_ieth_rkey(const struct roce_bth *b)
{
	rte_be32_t k;

	memcpy(&k, (const uint8_t *)b + bth_ext_off(b), sizeof(k));
	return rte_be_to_cpu_32(k);
}

static inline void
bth_set_ieth(struct roce_bth *b, uint32_t rkey)
{
	rte_be32_t k = rte_cpu_to_be_32(rkey);

	memcpy((uint8_t *)b + bth_ext_off(b), &k, sizeof(k));
}

static inline uint8_t *
bth_payload(struct roce_bth *b)
{
	return (uint8_t *)b + roce_opcode_tbl[b->opcode].hdr_len;
}

/* more than any opcode's BTH and extension headers (XRC atomics' 44 bytes) */
#define ROCE_REQ_HDR_MAX	64

/* --- ICRC (roce_icrc.c), IBA annex A17.3.3 --- */
/*
 * ICRC of a RoCEv2 IPv4 frame. @ip points at the IPv4 header; @len is the
 * number of bytes from the IPv4 header up to, not including, the ICRC.
 * Returns the value as stored in the frame (little-endian u32).
 */
uint32_t roce_icrc_ipv4(const void *ip, uint32_t len);
/*
 * The same, its headers (at least IPv4, UDP and BTH) read in @hdr, a copy
 * of the frame's first bytes, and every byte after them at @ip.
 */
uint32_t roce_icrc_ipv4_at(const void *hdr, const void *ip, uint32_t len);
/* The same over a (possibly multi-segment) mbuf; @off is the IPv4 offset. */
struct rte_mbuf;
uint32_t roce_icrc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len);
/*
 * The ICRC in pieces, for a frame whose payload is copied in as it is
 * summed: roce_icrc_start() over the first @len bytes from the IPv4 header
 * on (masked as roce_icrc_ipv4() masks them; at least IPv4, UDP and BTH),
 * roce_icrc_more() over the bytes that follow, roce_icrc_copy() over @n
 * bytes it copies from @src to @dst in the same pass (where the CPU has the
 * avx512 engine; elsewhere a copy, then the sum), and ~crc at the end is
 * roce_icrc_ipv4()'s value for the whole.
 */
uint32_t roce_icrc_start(const void *hdr, uint32_t len);
uint32_t roce_icrc_more(uint32_t crc, const void *p, uint32_t n);
uint32_t roce_icrc_copy(uint32_t crc, void *dst, const void *src, uint32_t n);
/* roce_icrc_start() over @hl header bytes at @hdr, then roce_icrc_copy() of @n bytes. */
uint32_t roce_icrc_start_copy(const void *hdr, uint32_t hl, void *dst, const void *src,
			      uint32_t n);
/*
 * The same from headers already as the ICRC sums them (a sender that
 * builds them so need not mask a copy): @masked holds the LRH stand-in
 * (ROCE_ICRC_LRH_LEN bytes of ones), then the headers from IPv4 on with
 * their variant fields as ones (IPv4 TOS, TTL and checksum, UDP checksum,
 * the BTH's FECN/BECN/reserved byte), @nm bytes in all. _start: the
 * register after them.
 */
#define ROCE_ICRC_LRH_LEN	8
/*
 * Makes @buf so: writes the LRH stand-in, and sets to ones the variant
 * fields of the IPv4 (without options), UDP and BTH headers already written
 * behind it (at @buf + ROCE_ICRC_LRH_LEN). The sender's, and the receive
 * side's for the usual frame (roce_icrc.c's mask_headers): inline in both.
 */
static inline void
roce_icrc_mask(void *p)
{
	uint8_t *buf = (uint8_t *)p + ROCE_ICRC_LRH_LEN;

	memset(p, 0xff, ROCE_ICRC_LRH_LEN);
	buf[offsetof(struct rte_ipv4_hdr, type_of_service)] = 0xff;
	buf[offsetof(struct rte_ipv4_hdr, time_to_live)] = 0xff;
	memset(buf + offsetof(struct rte_ipv4_hdr, hdr_checksum), 0xff, 2);
	memset(buf + ROCE_IPV4_LEN + offsetof(struct rte_udp_hdr, dgram_cksum), 0xff, 2);
	buf[ROCE_IPV4_LEN + sizeof(struct rte_udp_hdr) + offsetof(struct roce_bth, qpn)] = 0xff;
}
uint32_t roce_icrc_masked_start(const void *masked, uint32_t nm);
uint32_t roce_icrc_masked_copy(const void *masked, uint32_t nm, void *dst, const void *src,
			       uint32_t n);
/*
 * Selects the ICRC engine by name: "table", "clmul" or "avx512" (all give
 * the same values; the start-up choice is the best the CPU has, or the one
 * DROCE_ICRC names). For tests and comparisons: call it while no device
 * runs. Returns 0, -EINVAL for an unknown name, -ENOTSUP for an engine this
 * CPU (or OS) lacks.
 */
int roce_icrc_engine_set(const char *name);
/* The name of the engine in use. */
const char *roce_icrc_engine_name(void);

#endif /* ROCE_HDR_H */
