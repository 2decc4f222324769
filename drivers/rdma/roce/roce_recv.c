/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive checks and demultiplexing. Every frame is validated before any of
 * its fields are trusted: Ethernet, IPv4, UDP/4791, lengths, ICRC, BTH, QP.
 * Whatever fails is counted by cause and freed.
 */
#include <rte_ethdev.h>

#include "roce_loc.h"
#include "../../net/shm/shm_dp.h"

/* Headers must be contiguous: copy a chained frame into one segment. */
static struct rte_mbuf *
linearize(struct roce_q *q, struct rte_mbuf *m)
{
	struct rte_mbuf *n;
	const void *src;
	void *dst;

	if (likely(m->nb_segs == 1))
		return m;
	n = roce_mbuf_alloc(q->dev->mp);
	if (n == NULL || rte_pktmbuf_tailroom(n) < m->pkt_len) {
		roce_mbuf_free(n);
		roce_mbuf_free(m);
		q->stats.rx_drop_truncated++;
		return NULL;
	}
	dst = rte_pktmbuf_append(n, m->pkt_len);
	/* a chain whose data all sits in the first segment is not copied to dst */
	src = rte_pktmbuf_read(m, 0, m->pkt_len, dst);
	if (src != dst)
		memcpy(dst, src, m->pkt_len);
	roce_mbuf_free(m);
	return n;
}

static bool
qp_type_matches(const struct roce_qp *qp, uint8_t opcode)
{
	switch (roce_op_transport(opcode)) {
	case IBV_OPCODE_RC: return qp->fp.type == IBV_QPT_RC;
	case IBV_OPCODE_UC: return qp->fp.type == IBV_QPT_UC;
	case IBV_OPCODE_UD: return qp->fp.type == IBV_QPT_UD;
	/* XRC requests go to the target, responses to the initiator */
	case ROCE_OPCODE_XRC:
		return qp->fp.type == (roce_opcode_tbl[opcode].flags & ROCE_OPF_RESP ?
				       IBV_QPT_XRC_SEND : IBV_QPT_XRC_RECV);
	default: return false;
	}
}

/*
 * A frame that passed the Ethertype check is droce's: to its MAC or a
 * multicast one, IPv4 without options or fragments, UDP to the RoCEv2 port,
 * to its IP or a multicast group. Every other frame belongs to the device's
 * ethdev port (roce_ethdev.c), as a bifurcated NIC steers only RoCE to its
 * RDMA function; what the port does not take is dropped and counted by the
 * checks below as before. droce's frames that fail a later check stay drops.
 */
static bool
is_roce(const struct roce_dev *dev, struct rte_mbuf *m, struct rte_ether_hdr *eth)
{
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;

	if (m->pkt_len < ROCE_L2L4_LEN)
		return false;
	if (!rte_is_multicast_ether_addr(&eth->dst_addr) &&
	    !rte_is_same_ether_addr(&eth->dst_addr, &dev->mac))
		return false;
	ip = eth_ipv4(eth);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return false;
	udp = ipv4_udp(eth_ipv4(eth));
	return udp->dst_port == rte_cpu_to_be_16(DROCE_UDP_PORT) &&
	       (ip->dst_addr == dev->ip || roce_ip_is_mcast(ip->dst_addr));
}

/*
 * The words a unicast RoCEv2 frame to @dev begins with, under their mask:
 * its MAC, IPv4 (version 4, no options), no fragment, UDP, its IP, the
 * RoCEv2 port. What varies from frame to frame (the source, TOS, length,
 * ID, DF, TTL, checksum, UDP source port and length) is masked out.
 */
void
roce_rx_plain_init(struct roce_dev *dev)
{
	uint8_t val[ROCE_L2L4_LEN] = { 0 }, mask[ROCE_L2L4_LEN] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)val, *em = (struct rte_ether_hdr *)mask;
	struct rte_ipv4_hdr *ip = eth_ipv4(eth), *im = eth_ipv4(em);

	eth->dst_addr = dev->mac;
	memset(&em->dst_addr, 0xff, sizeof(em->dst_addr));
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	em->ether_type = UINT16_MAX;
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	im->version_ihl = UINT8_MAX;
	im->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK);
	ip->next_proto_id = IPPROTO_UDP;
	im->next_proto_id = UINT8_MAX;
	ip->dst_addr = dev->ip;
	im->dst_addr = UINT32_MAX;
	ipv4_udp(ip)->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
	ipv4_udp(im)->dst_port = UINT16_MAX;
	RTE_BUILD_BUG_ON(sizeof(dev->rx_plain_val) != ROCE_RX_PLAIN_LEN ||
			 ROCE_RX_PLAIN_LEN > sizeof(val));
	memcpy(dev->rx_plain_val, val, sizeof(dev->rx_plain_val));
	memcpy(dev->rx_plain_mask, mask, sizeof(dev->rx_plain_mask));
}

/*
 * Whether @m is a unicast RoCEv2 frame to @dev, long enough for a BTH and
 * an ICRC: everything rx_one()'s checks of Ethernet, IPv4 (but its checksum
 * and lengths) and UDP's destination ask, in five masked compares of words
 * instead of a branch each. A frame that fails goes through those checks,
 * which count why.
 */
static inline bool
roce_rx_plain(const struct roce_dev *dev, const struct rte_mbuf *m)
{
	const uint64_t *v = dev->rx_plain_val, *k = dev->rx_plain_mask;
	uint64_t w[ROCE_RX_PLAIN_LEN / 8];

	RTE_BUILD_BUG_ON(RTE_DIM(w) != 5);
	if (unlikely(m->data_len < ROCE_RX_PLAIN_LEN ||
		     m->pkt_len < ROCE_L2L4_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN))
		return false;
	memcpy(w, rte_pktmbuf_mtod(m, const uint8_t *), sizeof(w));
	/* written out: a loop of five was not unrolled */
	return (((w[0] ^ v[0]) & k[0]) | ((w[1] ^ v[1]) & k[1]) | ((w[2] ^ v[2]) & k[2]) |
		((w[3] ^ v[3]) & k[3]) | ((w[4] ^ v[4]) & k[4])) == 0;
}

/*
 * @m, which @q received, to the queue @to that owns what it is for: true if
 * that queue took it; else it is freed and counted.
 */
static bool
q_handoff(struct roce_q *q, struct roce_q *to, struct rte_mbuf *m)
{
	roce_mbuf_handoff(m);
	if (likely(rte_ring_enqueue(to->in, m) == 0)) {
		q->stats.q_handoff++;
		return true;
	}
	roce_mbuf_takeover(m);
	q->stats.q_handoff_drop++;
	roce_mbuf_free(m);
	return false;
}

/* The ICRC of a frame read in place (rx_in_place), at @ipf in its slot, its headers at @ip in the copy. */
static bool
slot_icrc_ok(const struct rte_ipv4_hdr *ip, const uint8_t *ipf)
{
	uint32_t iplen = rte_be_to_cpu_16(ip->total_length);

	return roce_icrc_ipv4_at(ip, ipf, iplen - ROCE_ICRC_LEN) ==
	       icrc_get(ipf + iplen - ROCE_ICRC_LEN);
}

/*
 * Whether the ICRC of the packet at @ip (@iplen bytes of IPv4 on) is the one
 * it carries. A frame roce_rx_shm() reads in place (@ipf not NULL: its IPv4
 * header in the slot) has only its first bytes in @m (the queue's copy, which
 * holds every header); the slot has the whole frame, its ICRC past the copy.
 */
static inline bool
icrc_ok(struct rte_ipv4_hdr *ip, uint32_t iplen, const uint8_t *ipf)
{
	if (likely(ipf == NULL))
		return roce_icrc_ipv4(ip, iplen - ROCE_ICRC_LEN) == icrc_get(ipv4_icrc(ip));
	return slot_icrc_ok(ip, ipf);
}

bool
roce_pkt_icrc_check(struct roce_qp *qp, struct roce_pkt *pkt)
{
	bool ok = slot_icrc_ok(pkt->ip, pkt->icrc_at);

	pkt->icrc_at = NULL;
	if (!ok)
		qp->q->stats.rx_drop_bad_icrc++;
	return ok;
}

/*
 * An RDMA WRITE's payload read in place (pkt->icrc_at), copied from the slot
 * to @dst in the same pass that sums it for the ICRC (roce_icrc_start_copy), where
 * checking it first, then copying, read it twice: the receiver's bound at
 * large sizes. The headers are summed from the queue's copy, which they were
 * parsed in. A packet whose ICRC is wrong is dropped (counted; no ACK, no
 * completion, the responder does not move on), but its bytes are in the
 * memory its RETH named, which its checks allowed: a NIC that places data as
 * it arrives does as much, and RC's resend stores the right ones there. The
 * bytes of a WRITE are the application's only when it completes; the last
 * byte of a message, which an application may poll to see that it arrived,
 * is stored only after the check. With an ODP MR, whose copies are guarded,
 * the ICRC is checked first. 0, -EFAULT or -EBADMSG (roce_pkt_place).
 */
int
roce_pkt_place_checked(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t *dst, bool last)
{
	const uint8_t *pay = pkt->payload;
	uint32_t n = pkt->paylen, pad = bth_pad(pkt->bth), crc;
	uint8_t b = 0;

	if (__atomic_load_n(&roce_odp_mrs, __ATOMIC_RELAXED) != 0 || n == 0) {
		if (!roce_pkt_icrc_check(qp, pkt))
			return -EBADMSG;
		return roce_pkt_place(qp, pkt, dst, last);
	}
	crc = roce_icrc_start_copy(pkt->ip, (uint32_t)(pay - pkt->icrc_at), dst, pay, n - last);
	if (last) {
		b = pay[n - 1];	/* read once: the byte summed is the byte stored */
		crc = roce_icrc_more(crc, &b, 1);
	}
	crc = roce_icrc_more(crc, pay + n, pad);
	pkt->icrc_at = NULL;
	if (~crc != icrc_get(pay + n + pad)) {
		qp->q->stats.rx_drop_bad_icrc++;
		return -EBADMSG;
	}
	if (last) {
		/* release: the bytes before are visible before the last one */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		dst[n - 1] = b;
	}
	return 0;
}

/*
 * @src: the port, the device's loopback ring (frames it sent itself),
 * another process, or another queue of the device (struct roce_q): a frame
 * from the port that queue received, checked up to its QP when that QP is
 * @q's; queue 0 also takes what is not for a QP, unchecked.
 */
static void
rx_one(struct roce_q *q, struct rte_mbuf *m, enum roce_rx_src src)
{
	struct roce_dev *dev = q->dev;
	bool loop = src == ROCE_RX_LOOP || src == ROCE_RX_SHARE;
	bool q0 = q->id == 0;
	struct roce_stats *st = &q->stats;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	const struct roce_opcode_info *oi;
	struct roce_pkt pkt;
	struct roce_qp *qp;
	uint32_t iplen, udplen, qpn, blen, pad;
	const uint8_t *ipf = NULL;
	bool mc, plain;

	if (src != ROCE_RX_QUEUE) {	/* counted where it arrived */
		st->rx_pkts++;
		st->rx_bytes += m->pkt_len;
	}
	if (m->pkt_len < RTE_ETHER_HDR_LEN) {
		st->rx_drop_truncated++;
		goto drop;
	}
	m = linearize(q, m);
	if (m == NULL)
		return;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	plain = src == ROCE_RX_SLOT || roce_rx_plain(dev, m);	/* roce_rx_shm took only those */
	if (likely(plain)) {
		/* the checks below that such a frame passes are left out, the others kept in their order */
		mc = false;
		ip = eth_ipv4(eth);
		goto ip_sum;
	}
	/* what is not a RoCEv2 frame to a QP is queue 0's: ARP, the ethdev port, multicast */
	if (unlikely(!q0) && (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
			      (roce_eth_running(dev) && !is_roce(dev, m, eth)) ||
			      rte_is_multicast_ether_addr(&eth->dst_addr))) {
		q_handoff(q, dev->q[0], m);
		return;
	}
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		enum roce_arp_verdict v = roce_arp_input(q, m);

		if (v == ROCE_ARP_MINE || (!loop && roce_eth_rx(dev, m)))
			return;
		if (v == ROCE_ARP_BAD)
			st->rx_drop_bad_arp++;
		goto drop;
	}
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		if (!loop && roce_eth_rx(dev, m))
			return;
		st->rx_drop_not_ip++;
		goto drop;
	}
	/* the classification only while the port is there to take what is not droce's */
	if (!loop && roce_eth_running(dev) && !is_roce(dev, m, eth) && roce_eth_rx(dev, m))
		return;
	/* a multicast frame: its IPv4 destination must be the group of its MAC (below) */
	mc = rte_is_multicast_ether_addr(&eth->dst_addr);
	if (!mc && !rte_is_same_ether_addr(&eth->dst_addr, &dev->mac)) {
		st->rx_drop_not_mine++;
		goto drop;
	}
	if (m->pkt_len < ROCE_L2L4_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		st->rx_drop_truncated++;
		goto drop;
	}
	ip = eth_ipv4(eth);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF ||
	    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))) {
		st->rx_drop_bad_ip++;
		goto drop;
	}
ip_sum:
	if (roce_ipv4_sum20(ip) != 0xffff) {
		st->rx_drop_bad_ip++;
		goto drop;
	}
	iplen = rte_be_to_cpu_16(ip->total_length);
	if (iplen + RTE_ETHER_HDR_LEN > m->pkt_len) {
		st->rx_drop_truncated++;
		goto drop;
	}
	udp = ipv4_udp(ip);
	if (plain)
		goto udp_len;
	if (unlikely(mc)) {
		struct rte_ether_addr gmac;

		roce_mcast_mac(ip->dst_addr, &gmac);
		if (!roce_ip_is_mcast(ip->dst_addr) ||
		    !rte_is_same_ether_addr(&eth->dst_addr, &gmac)) {
			st->rx_drop_not_mine++;
			goto drop;
		}
		/* RFC 1112: a group is never a source */
		if (roce_ip_is_mcast(ip->src_addr) || ip->src_addr == RTE_BE32(UINT32_MAX)) {
			st->rx_drop_bad_ip++;
			goto drop;
		}
		/*
		 * Our own datagram back from the port (a port looping to itself,
		 * a hub): the loopback ring already gave the device's members
		 * their copy (roce_tx.c).
		 */
		if (!loop && rte_is_same_ether_addr(&eth->src_addr, &dev->mac)) {
			st->rx_drop_not_mine++;
			goto drop;
		}
	} else if (ip->dst_addr != dev->ip) {
		st->rx_drop_not_mine++;
		goto drop;
	}
	if (ip->next_proto_id != IPPROTO_UDP || udp->dst_port != rte_cpu_to_be_16(DROCE_UDP_PORT)) {
		st->rx_drop_not_roce++;
		goto drop;
	}
udp_len:
	udplen = rte_be_to_cpu_16(udp->dgram_len);
	if (udplen != iplen - ROCE_IPV4_LEN || udplen < ROCE_UDP_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		st->rx_drop_truncated++;
		goto drop;
	}
	/* trim Ethernet padding */
	rte_pktmbuf_trim(m, m->pkt_len - (iplen + RTE_ETHER_HDR_LEN));
	/* read in place (rx_in_place): its payload, and the ICRC, are in the slot */
	if (unlikely(src == ROCE_RX_SLOT) && m->data_len != m->pkt_len)
		ipf = q->shm_rx_frame + ((uint8_t *)ip - rte_pktmbuf_mtod(m, uint8_t *));
	/*
	 * A frame for one of its QPs was checked by the queue that received
	 * it; queue 0 takes others too. An RDMA WRITE read in place is checked
	 * as its payload is placed, or before anything else acts on it
	 * (pkt.icrc_at: roce_pkt_place, roce_pkt_icrc_ok).
	 */
	pkt.icrc_at = ipf != NULL && (roce_opcode_tbl[udp_bth(udp)->opcode].flags &
				      (ROCE_OPF_WRITE | ROCE_OPF_ATOMIC_WRITE)) == ROCE_OPF_WRITE ?
		      ipf : NULL;
	if ((src != ROCE_RX_QUEUE || q0) && pkt.icrc_at == NULL && !icrc_ok(ip, iplen, ipf)) {
		st->rx_drop_bad_icrc++;
		goto drop;
	}

	pkt.m = m;
	pkt.ip = ip;
	pkt.bth = udp_bth(udp);
	pkt.opcode = bth_opcode(pkt.bth);
	oi = &roce_opcode_tbl[pkt.opcode];
	blen = udplen - ROCE_UDP_LEN - ROCE_ICRC_LEN;	/* BTH .. end of pad */
	pad = bth_pad(pkt.bth);
	if (!(oi->flags & ROCE_OPF_VALID) || bth_tver(pkt.bth) != 0 ||
	    (bth_pkey(pkt.bth) & 0x7fff) != (DROCE_DEFAULT_PKEY & 0x7fff)) {
		st->rx_drop_bad_bth++;
		goto drop;
	}
	if (blen < oi->hdr_len + pad) {
		st->rx_drop_truncated++;
		goto drop;
	}
	pkt.opf = oi->flags;
	pkt.psn = bth_psn(pkt.bth);
	pkt.payload = bth_payload(pkt.bth);
	if (unlikely(ipf != NULL))	/* read in place: in the slot */
		pkt.payload = (uint8_t *)(uintptr_t)ipf + (pkt.payload - (uint8_t *)ip);
	pkt.paylen = blen - oi->hdr_len - pad;
	if (!(pkt.opf & ROCE_OPF_PAYLOAD) && pkt.paylen != 0) {
		st->rx_drop_bad_len++;
		goto drop;
	}

	if (unlikely(mc)) {
		roce_mcast_rcv(q, &pkt, src != ROCE_RX_SHARE);
		goto drop;
	}
	qpn = bth_qpn(pkt.bth);
	/*
	 * A device shared by forked processes (roce_share.c): a frame for a
	 * QP of another process goes to it. Each process has its own QP1.
	 */
	if (unlikely(dev->share_on) && qpn == DROCE_GSI_QPN) {
		uint32_t k = roce_share_gsi_owner(dev, pkt.payload, pkt.paylen);

		if (k != roce_share_owner()) {
			if (roce_share_fwd(dev, k, m))
				return;
			goto drop;
		}
	}
	qp = roce_qp_by_qpn(dev, qpn);
	if (qp == NULL || !qp_type_matches(qp, pkt.opcode)) {
		st->rx_drop_no_qp++;
		goto drop;
	}
	if (unlikely(dev->share_on) && qp->owner != roce_share_owner()) {
		if (roce_share_fwd(dev, qp->owner, m))
			return;
		goto drop;
	}
	if (unlikely(qp->q != q)) {	/* another queue's QP: the port did not steer it there */
		q_handoff(q, qp->q, m);
		return;
	}
	roce_qp_cnt_rx(qp, m);
	if (q0 && unlikely(dev->neigh_pending != 0)) {	/* queue 0 keeps the table */
		if (!roce_pkt_icrc_ok(qp, &pkt))
			goto drop;
		roce_neigh_learn(dev, ip->src_addr, &eth->src_addr);
	}
	/* what it may owe now (an ACK, READ responses, the next sends) runs this iteration */
	roce_qp_activate(qp);
	if (pkt.opf & ROCE_OPF_RESP)
		roce_comp_rcv(dev, qp, &pkt);
	else
		roce_resp_rcv(dev, qp, &pkt);
drop:
	if (src != ROCE_RX_SLOT)	/* the queue's own header (roce_rx_shm) */
		roce_mbuf_free(m);
}

/*
 * The QP a frame names, if it is a plain RoCEv2 frame, prefetched before its
 * turn. Nothing is checked: a hint (rx_one checks). The QPs in the table
 * stay while an iteration runs.
 */
static inline void
rx_prefetch_qp(struct roce_dev *dev, const struct rte_mbuf *m)
{
	const struct roce_bth *bth;
	const struct roce_qp *qp;
	uint32_t idx;

	if (m->data_len < ROCE_L2L4_LEN + ROCE_BTH_LEN)
		return;
	bth = rte_pktmbuf_mtod_offset(m, const struct roce_bth *, ROCE_L2L4_LEN);
	idx = bth_qpn(bth) - DROCE_QPN_BASE;
	if (idx >= DROCE_MAX_QP)
		return;
	qp = __atomic_load_n(&dev->qp_tbl[idx], __ATOMIC_RELAXED);
	if (qp != NULL)
		roce_qp_prefetch(qp);
}

void
roce_rx(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, enum roce_rx_src src)
{
	struct roce_dev *dev = q->dev;

	/* two frames ahead, their first line; one ahead, its QP (its line is there by then) */
	if (n > 0)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[0], void *));
	if (n > 1)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[1], void *));
	if (n > 0)
		rx_prefetch_qp(dev, pkts[0]);
	for (uint16_t i = 0; i < n; i++) {
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		if (i + 1 < n)
			rx_prefetch_qp(dev, pkts[i + 1]);
		rx_one(q, pkts[i], src);
	}
}

/* @q reads frames in the slots of net_shm's receive queue @rxq (NULL: none). */
void
roce_rx_shm_init(struct roce_q *q, struct shm_queue *rxq)
{
	struct rte_mbuf *m = &q->shm_rx_m;

	memset(m, 0, sizeof(*m));
	m->buf_addr = q->shm_rx_buf;
	m->buf_len = sizeof(q->shm_rx_buf);
	m->nb_segs = 1;
	m->port = q->dev->port_id;
	rte_mbuf_refcnt_set(m, 1);
	q->shm_rxq = rxq;
}

/*
 * A RoCEv2 frame of @len bytes (is_roce) whose first @hl are copied, and
 * whose payload may be read where it lies: a WRITE's or READ response's,
 * whose payload is only copied out, whose IPv4 length is the frame's (no
 * Ethernet padding to trim), and whose ICRC lies wholly past the copy.
 */
static bool
rx_in_place(struct rte_ether_hdr *eth, uint32_t len, uint32_t hl)
{
	struct rte_ipv4_hdr *ip = eth_ipv4(eth);
	uint32_t fl = roce_opcode_tbl[udp_bth(ipv4_udp(ip))->opcode].flags;

	return len >= hl + ROCE_ICRC_LEN &&
	       rte_be_to_cpu_16(ip->total_length) + (uint32_t)RTE_ETHER_HDR_LEN == len &&
	       (fl & ROCE_OPF_PAYLOAD) && ((fl & ROCE_OPF_WRITE) ||
	       (fl & (ROCE_OPF_READ | ROCE_OPF_RESP)) == (ROCE_OPF_READ | ROCE_OPF_RESP));
}

/*
 * net_shm (q->shm_rxq): the RoCEv2 frames that have arrived, without an
 * mbuf of their own. Each is copied from its slot into the queue's buffer
 * (the peer shares the slot: nothing in it is read twice) and goes through
 * rx_one() in the queue's mbuf header, which nothing keeps: a unicast RoCEv2
 * frame to this device, on a device of one queue that no forked process
 * shares, is only read and dropped there. A frame bigger than the buffer is
 * taken so only if it is a WRITE or READ response whose IPv4 length is the
 * frame's and whose ICRC lies past the copy (rx_in_place): its headers are
 * copied, and its payload, which is only copied out, never looked into, is
 * summed and placed from the slot.
 * It stops at the first frame that needs an mbuf (another kind: ARP, the
 * ethdev port's, multicast, a big SEND), which the port's rx burst then
 * takes with those after it (*@burst true), or where the ring has no more
 * (*@burst false: no burst, so that a frame that lands after the look is
 * read here next time, not in an mbuf now). Returns the frames taken.
 */
uint16_t
roce_rx_shm(struct roce_q *q, bool *burst)
{
	struct roce_dev *dev = q->dev;
	struct rte_mbuf *m = &q->shm_rx_m;
	uint16_t n;

	*burst = true;
	if (unlikely(dev->share_on) || dev->nb_q != 1 ||
	    shm_direct_watched(dev->port_id, q->id, false))	/* dpdk-dumpcap's callbacks */
		return 0;
	for (n = 0; n < DROCE_BURST; n++) {
		uint32_t len, hl;
		const uint8_t *f = shm_direct_rx_peek(q->shm_rxq, &len);

		if (f == NULL) {
			*burst = false;
			break;
		}
		hl = RTE_MIN(len, (uint32_t)sizeof(q->shm_rx_buf));
		shm_copy_small(q->shm_rx_buf, f, hl);
		m->data_off = 0;
		m->data_len = (uint16_t)hl;
		m->pkt_len = len;
		if (!roce_rx_plain(dev, m) ||
		    (hl < len && !rx_in_place((struct rte_ether_hdr *)q->shm_rx_buf, len, hl)))
			break;
		q->shm_rx_frame = f;
		shm_direct_rx_next(q->shm_rxq, len);
		q->stats.rx_direct++;
		rx_one(q, m, ROCE_RX_SLOT);
	}
	shm_direct_rx_done(q->shm_rxq);
	return n;
}
