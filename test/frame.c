/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_arp.h>

#include "droce_config.h"
#include "frame.h"

struct ext
ext_reth(uint64_t va, uint32_t rkey, uint32_t len)
{
	struct ext x = { .n = ROCE_RETH_LEN };

	reth_init((struct roce_reth *)x.b, va, rkey, len);
	return x;
}

struct ext
ext_deth(uint32_t qkey, uint32_t sqp)
{
	struct ext x = { .n = ROCE_DETH_LEN };

	deth_init((struct roce_deth *)x.b, qkey, sqp);
	return x;
}

struct ext
ext_aeth(uint8_t syn, uint32_t msn)
{
	struct ext x = { .n = ROCE_AETH_LEN };

	aeth_init((struct roce_aeth *)x.b, syn, msn);
	return x;
}

struct ext
ext_atm(uint64_t va, uint32_t rkey, uint64_t swap_add, uint64_t comp)
{
	struct ext x = { .n = ROCE_ATMETH_LEN };

	atmeth_init((struct roce_atmeth *)x.b, va, rkey, swap_add, comp);
	return x;
}

struct ext
ext_imm(uint32_t imm)
{
	struct ext x = { .n = ROCE_IMMDT_LEN };

	memcpy(x.b, &imm, 4);
	return x;
}

struct ext
ext_cat(struct ext a, struct ext b)
{
	memcpy(a.b + a.n, b.b, b.n);
	a.n += b.n;
	return a;
}

uint32_t
frame_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void
frame_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint16_t
frame_ip_csum(const void *ip, uint32_t hlen)
{
	return (uint16_t)~rte_raw_cksum(ip, hlen);
}

void
frame_l2l4(uint8_t *f, const struct frame_ends *e, uint32_t l4)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + FRAME_OFF_IP);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + FRAME_OFF_UDP);

	memset(f, 0, FRAME_OFF_BTH);
	eth->dst_addr = e->dst_mac;
	eth->src_addr = e->src_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(20 + l4);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = e->src_ip;
	ip->dst_addr = e->dst_ip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(e->sport);
	udp->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4);
}

void
frame_put_icrc(uint8_t *ip)
{
	uint32_t iplen = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)ip)->total_length);

	frame_put_le32(ip + iplen - ROCE_ICRC_LEN, roce_icrc_ipv4(ip, iplen - ROCE_ICRC_LEN));
}

void
frame_seal(struct frame *f)
{
	uint8_t *ip = f->b + FRAME_OFF_IP;
	uint32_t ihl = (ip[0] & 0xf) * 4u, iplen;
	uint16_t c;

	if (f->len < FRAME_OFF_IP + ihl)
		return;
	ip[10] = ip[11] = 0;
	c = frame_ip_csum(ip, ihl);
	memcpy(ip + 10, &c, 2);
	iplen = rte_be_to_cpu_16(((struct rte_ipv4_hdr *)ip)->total_length);
	if (iplen >= ihl + 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN && FRAME_OFF_IP + iplen <= f->len)
		frame_put_icrc(ip);
}

void
frame_build(struct frame *f, const struct frame_ends *e, uint8_t op, uint32_t dqpn, uint32_t psn,
	    const struct ext *x, const void *pay, uint32_t paylen)
{
	uint32_t xn = x ? x->n : 0, pad = -paylen & 3;
	uint32_t l4 = 8 + ROCE_BTH_LEN + xn + paylen + pad + ROCE_ICRC_LEN;
	uint8_t *p = f->b + FRAME_OFF_BTH;
	bool ackreq = roce_op_transport(op) == IBV_OPCODE_RC && op != IBV_OPCODE_RC_ACKNOWLEDGE &&
		      op != IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE &&
		      (op < IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST ||
		       op > IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);

	frame_l2l4(f->b, e, l4);
	bth_init((struct roce_bth *)p, op, 0, pad, DROCE_DEFAULT_PKEY, dqpn, ackreq, psn);
	p += ROCE_BTH_LEN;
	if (xn)
		memcpy(p, x->b, xn);
	p += xn;
	if (paylen)
		memcpy(p, pay, paylen);
	p += paylen;
	memset(p, 0, pad + ROCE_ICRC_LEN);
	f->len = FRAME_OFF_IP + 20 + l4;
	frame_seal(f);
}

uint32_t
frame_arp(uint8_t *f, const struct rte_ether_addr *eth_dst, const struct rte_ether_addr *eth_src,
	  uint16_t op, const struct rte_ether_addr *sha, rte_be32_t sip, rte_be32_t tip)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);

	memset(f, 0, RTE_ETHER_HDR_LEN + sizeof(*arp));
	if (eth_dst != NULL)
		eth->dst_addr = *eth_dst;
	else
		memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eth->src_addr = *eth_src;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = *sha;
	arp->arp_data.arp_sip = sip;
	arp->arp_data.arp_tip = tip;
	return RTE_ETHER_HDR_LEN + sizeof(*arp);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
frame_unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

const char *
frame_decode(const uint8_t *f, uint32_t len, struct frame_info *o)
{
	const struct roce_opcode_info *oi;
	uint32_t hdr;

	memset(o, 0, sizeof(*o));
	if (len < RTE_ETHER_HDR_LEN)
		return "a frame shorter than an Ethernet header";
	o->eth = (const struct rte_ether_hdr *)f;
	if (o->eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		o->arp = true;
		if (len < RTE_ETHER_HDR_LEN + sizeof(struct rte_arp_hdr))
			return "a short ARP packet";
		return NULL;
	}
	if (o->eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return "a frame neither ARP nor IPv4";
	if (len < FRAME_OFF_BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return "an IPv4 frame too short for RoCEv2";
	o->ip = (const struct rte_ipv4_hdr *)(f + FRAME_OFF_IP);
	o->udp = (const struct rte_udp_hdr *)(f + FRAME_OFF_UDP);
	o->bth = (const struct roce_bth *)(f + FRAME_OFF_BTH);
	o->iplen = rte_be_to_cpu_16(o->ip->total_length);
	if (o->ip->version_ihl != RTE_IPV4_VHL_DEF || rte_raw_cksum(o->ip, 20) != 0xffff ||
	    o->iplen < 20 + 8 + ROCE_BTH_LEN + ROCE_ICRC_LEN || FRAME_OFF_IP + o->iplen > len ||
	    o->ip->next_proto_id != IPPROTO_UDP)
		return "a bad IPv4 header";
	if (o->udp->dst_port != rte_cpu_to_be_16(DROCE_UDP_PORT) ||
	    rte_be_to_cpu_16(o->udp->dgram_len) != o->iplen - 20)
		return "a bad UDP header";
	if (roce_icrc_ipv4(o->ip, o->iplen - ROCE_ICRC_LEN) !=
	    frame_get_le32((const uint8_t *)o->ip + o->iplen - ROCE_ICRC_LEN))
		return "a bad ICRC";
	o->op = bth_opcode(o->bth);
	oi = &roce_opcode_tbl[o->op];
	hdr = oi->hdr_len;
	o->blen = o->iplen - 20 - 8 - ROCE_ICRC_LEN;
	if (!(oi->flags & ROCE_OPF_VALID) || o->blen < hdr + bth_pad(o->bth) ||
	    bth_tver(o->bth) != 0 || bth_pkey(o->bth) != DROCE_DEFAULT_PKEY)
		return "a bad BTH";
	o->dqpn = bth_qpn(o->bth);
	o->psn = bth_psn(o->bth);
	o->ackreq = bth_ackreq(o->bth);
	o->ext = (const uint8_t *)(o->bth + 1);
	o->pay = (const uint8_t *)o->bth + hdr;
	o->paylen = o->blen - hdr - bth_pad(o->bth);
	if (!(oi->flags & ROCE_OPF_PAYLOAD) && o->paylen != 0)
		return "a payload on an opcode that carries none";
	if (oi->flags & ROCE_OPF_AETH) {
		const struct roce_aeth *a = (const struct roce_aeth *)o->ext;

		o->syn = aeth_syn(a);
		o->msn = aeth_msn(a);
	}
	return NULL;
}
