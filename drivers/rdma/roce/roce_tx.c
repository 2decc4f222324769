/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit: mbufs for outgoing packets, the Ethernet, IPv4 and UDP headers
 * and ICRC in front of a built RoCE packet, and the device's staging area,
 * flushed to the queue's own tx queue of the port at the end of each iteration of
 * roce_q_poll() or when a sender needs room.
 */
#include <rte_ethdev.h>

#include "roce_loc.h"
#include "../../net/shm/shm_dp.h"

static void zc_copy_staged(struct roce_q *q);

struct rte_mbuf *
roce_pkt_alloc(struct roce_q *q)
{
	struct rte_mbuf *m = roce_mbuf_alloc(q->dev->mp);

	if (unlikely(m == NULL))
		q->stats.tx_drop_no_mbuf++;
	return m;
}

/*
 * Hand the staged frames to the port. What it does not take stays staged, in
 * order, for the next call: a full transmit queue holds the senders back
 * (roce_tx_room) instead of dropping frames that RC would have to resend
 * after a timeout, each resend overflowing the queue again.
 */
void
roce_tx_flush(struct roce_q *q)
{
	uint16_t n = q->nb_tx, sent;

	for (uint16_t i = 0; i < n; i++)
		roce_mbuf_handoff(q->tx[i]);
	sent = roce_port_tx(q, q->tx, n);

	if (unlikely(sent < n))
		memmove(q->tx, q->tx + sent, (n - sent) * sizeof(q->tx[0]));
	/* atomic: droce_dev_objects_get reads it from another thread */
	__atomic_store_n(&q->nb_tx, n - sent, __ATOMIC_RELAXED);
	if (unlikely(q->zc_staged)) {
		if (sent < n)
			zc_copy_staged(q);
		q->zc_staged = false;
	}
}

/*
 * Staged frames must not keep pointing into registered memory once the
 * flush that staged them returns (the WQE may complete, the MR go): the
 * zero-copy frames the port did not take become copies, in order. One
 * without an mbuf for its copy is dropped (counted; RC sends it again).
 */
static void
zc_copy_staged(struct roce_q *q)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < q->nb_tx; i++) {
		struct rte_mbuf *m = q->tx[i], *c;

		roce_mbuf_takeover(m);
		/* droce's (roce_tx_zc), not an application's frame from the device's ethdev port */
		if (m->next == NULL || !RTE_MBUF_HAS_EXTBUF(m->next) ||
		    m->next->shinfo != &q->zc_shinfo) {
			q->tx[k++] = m;
			continue;
		}
		c = rte_pktmbuf_copy(m, q->dev->mp, 0, UINT32_MAX);
		if (c != NULL) {
			roce_mbuf_takeover(c);
			q->stats.tx_zcopy_copied++;
			q->tx[k++] = c;
		} else {
			q->stats.tx_drop_no_mbuf++;
		}
		roce_mbuf_free(m);
	}
	__atomic_store_n(&q->nb_tx, k, __ATOMIC_RELAXED);
}

/* Room for @n more frames in the staging area, after a flush if needed. */
bool
roce_tx_room(struct roce_q *q, uint16_t n)
{
	if (likely(RTE_DIM(q->tx) - q->nb_tx >= n))
		return true;
	roce_tx_flush(q);
	if (likely(RTE_DIM(q->tx) - q->nb_tx >= n))
		return true;
	q->stats.tx_busy++;
	q->tx_full = true;	/* for active_run (roce_poll.c) */
	return false;
}

/*
 * Queue a finished Ethernet frame for transmission. Senders that can wait
 * (requester, READ responses, coalesced ACKs) check roce_tx_room first; a
 * frame that finds the port taking nothing and the staging area full (an
 * ARP answer, a NAK) is dropped and counted.
 */
static bool
xmit(struct roce_q *q, struct rte_mbuf *m)
{
	if (unlikely(!roce_tx_room(q, 1))) {
		q->stats.tx_drop_full++;
		roce_mbuf_free(m);
		return false;
	}
	q->stats.tx_pkts++;
	q->stats.tx_bytes += m->pkt_len;
	if (unlikely(__atomic_load_n(&q->dev->cap, __ATOMIC_RELAXED) != NULL))
		roce_capture_burst(q, &m, 1, true);
	/* droce's own frames are one segment but zero-copy ones (roce_tx_zc) */
	if (m->nb_segs > 1)
		q->zc_staged = true;
	q->tx[q->nb_tx] = m;
	__atomic_store_n(&q->nb_tx, q->nb_tx + 1, __ATOMIC_RELAXED);
	return true;
}

void
roce_xmit(struct roce_q *q, struct rte_mbuf *m)
{
	xmit(q, m);
}

/* A frame of @qp's queued for the port (roce_qp_cnt_tx): its counters too. */
static inline void
qp_sent(struct roce_qp *qp, uint32_t len)
{
	if (qp != NULL) {
		ROCE_CNT_INC(qp->e.traffic.tx_pkts);
		ROCE_CNT_ADD(qp->e.traffic.tx_bytes, len);
	}
}

/*
 * A frame to a group that QPs of this device are attached to reaches them
 * too, as a NIC loops multicast back to its own QPs: a copy through the
 * loopback ring (the port does not return our own frames).
 */
static void
mcast_loop(struct roce_q *q, struct rte_mbuf *m, rte_be32_t group)
{
	struct roce_dev *dev = q->dev;
	struct rte_mbuf *c;

	if (roce_mcg_find(dev, group) == NULL)
		return;
	c = rte_pktmbuf_copy(m, dev->mp, 0, UINT32_MAX);
	if (c == NULL) {
		q->stats.tx_drop_no_mbuf++;
		return;
	}
	roce_mbuf_takeover(c);
	roce_mbuf_handoff(c);	/* to queue 0, maybe another thread */
	if (rte_ring_enqueue(dev->loop, c) != 0) {
		roce_mbuf_takeover(c);
		q->stats.tx_drop_full++;
		roce_mbuf_free(c);
	}
}

/*
 * A frame @q sends to a QP of its own device, with several queues: straight
 * to the queue that owns that QP, as the port would have taken it there,
 * rather than through the loopback ring, which queue 0 empties (and which
 * nothing might move soon, with lcore=thread, if lcore 0 does not use the
 * device). 1 if taken, -1 if dropped (the ring full: freed, counted), 0
 * if the QP is not found; the caller then sends it through the ring, and
 * rx_one counts it as a frame for no QP.
 */
static int
loop_to_owner(struct roce_q *q, struct rte_mbuf *m, const struct roce_bth *bth)
{
	struct roce_qp *qp = roce_qp_by_qpn(q->dev, bth_qpn(bth));

	if (qp == NULL || qp->q->in == NULL)
		return 0;
	/* arrived at the device: counted here, as rx_one does for the port's frames */
	q->stats.rx_pkts++;
	q->stats.rx_bytes += m->pkt_len;
	roce_mbuf_handoff(m);
	if (rte_ring_enqueue(qp->q->in, m) != 0) {
		roce_mbuf_takeover(m);
		q->stats.q_handoff_drop++;
		roce_mbuf_free(m);
		return -1;	/* as the port would drop it */
	}
	return 1;
}

/* The ICRC of the frame at @eth (@l4 bytes from the BTH on), in its last 4 bytes. */
static inline void
frame_icrc(struct rte_ether_hdr *eth, uint32_t l4)
{
	struct rte_ipv4_hdr *ip = eth_ipv4(eth);

	icrc_set(ipv4_icrc(ip), roce_icrc_ipv4(ip, ROCE_IPV4_LEN + ROCE_UDP_LEN + l4 -
						    ROCE_ICRC_LEN));
}

/*
 * Ethernet, IPv4 and UDP in front of the RoCE packet of @l4 bytes (BTH to
 * ICRC) that follows them at @eth, to @dmac and @dip from @sport; its ICRC
 * too, unless @summed (the builder wrote it).
 */
static inline void
l2l4_fill(const struct roce_dev *dev, struct rte_ether_hdr *eth, const struct rte_ether_addr *dmac,
	  rte_be32_t dip, uint16_t sport, uint8_t tos, uint8_t ttl, uint32_t l4, bool summed)
{
	struct rte_ipv4_hdr *ip = eth_ipv4(eth);

	eth->src_addr = dev->mac;
	eth->dst_addr = *dmac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	roce_ipv4_udp_fill(ip, dev->ip, dip, sport, tos, ttl, l4);
	ip->hdr_checksum = roce_ipv4_udp_cksum(dev->ip, dip, tos, ttl, l4);
	/* ICRC over IP..payload; the 4 bytes were reserved by the builder */
	if (!summed)
		frame_icrc(eth, l4);
}

/* txh_valid() building @qp's headers, for generation @gen */
static __rte_noinline bool
txh_build(struct roce_q *q, struct roce_qp *qp, uint32_t gen)
{
	struct roce_dev *dev = q->dev;
	struct roce_txh *h = &qp->txh;
	rte_be32_t dip = qp->av.dip;
	struct rte_ether_addr dmac;

	if (dip == dev->ip || roce_ip_is_mcast(dip) || roce_neigh_resolve(q, dip, &dmac) != 0)
		return false;
	memset(h->hdr, 0, sizeof(h->hdr));
	l2l4_fill(dev, (struct rte_ether_hdr *)h->hdr, &dmac, dip, qp->sport, qp->av.tos,
		  qp->av.ttl, 0, true);
	h->sum = roce_ipv4_udp_sum(dev->ip, dip, qp->av.tos, qp->av.ttl);
	h->gen = gen;
	return true;
}

/*
 * @qp's headers (struct roce_txh) for the device's neighbours as they are:
 * built now if they are not; false: not to be had (the destination is this
 * device or a group, or its MAC is not known yet), its packets are built
 * as any other's.
 */
static inline bool
txh_valid(struct roce_q *q, struct roce_qp *qp)
{
	/* read before the table: a change meanwhile leaves the headers old */
	uint32_t gen = __atomic_load_n(&q->dev->txh_gen, __ATOMIC_ACQUIRE);

	return likely(qp->txh.gen == gen) || txh_build(q, qp, gen);
}

/* @h's headers in front of a packet of @l4 bytes from the BTH on, at @eth. */
static inline void
txh_fill(struct rte_ether_hdr *eth, const struct roce_txh *h, uint32_t l4)
{
	struct rte_ipv4_hdr *ip = eth_ipv4(eth);

	/* the BTH behind is written already */
	memcpy(eth, h->hdr, ROCE_L2L4_LEN);
	ip->total_length = rte_cpu_to_be_16(l4 + ROCE_IPV4_LEN + ROCE_UDP_LEN);
	ip->hdr_checksum = roce_ipv4_cksum_len(h->sum, l4);
	ipv4_udp(ip)->dgram_len = rte_cpu_to_be_16(l4 + ROCE_UDP_LEN);
}

/*
 * The headers in front of a packet of @l4 bytes at @eth: its QP's copy
 * (@txh), else written for @dmac, @dip, @sport, @tos and @ttl; and its ICRC
 * unless @summed.
 */
static inline void
frame_headers(const struct roce_dev *dev, struct rte_ether_hdr *eth, const struct roce_txh *txh,
	      const struct rte_ether_addr *dmac, rte_be32_t dip, uint16_t sport, uint8_t tos,
	      uint8_t ttl, uint32_t l4, bool summed)
{
	if (txh == NULL) {
		l2l4_fill(dev, eth, dmac, dip, sport, tos, ttl, l4, summed);
		return;
	}
	txh_fill(eth, txh, l4);
	if (!summed)
		frame_icrc(eth, l4);
}

/*
 * Fill in Ethernet, IPv4 and UDP in front of the RoCE packet already in @m
 * (BTH at the start of the data) and queue it: from @txh, its QP's copy of
 * them (a unicast frame to another host), else for @dip. Frames to our own
 * IP go to the loopback ring; frames to a multicast group to the group's
 * MAC, without ARP, and looped back to this device's members unless
 * @mc_noloop (a UD QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB). Returns -EAGAIN (mbuf
 * freed) when the peer's MAC is unknown yet; an ARP request is then on its
 * way. @summed: the builder wrote the ICRC already (icrc_headers(), then
 * the payload summed as it was copied).
 */
static int
ip_xmit(struct roce_q *q, struct rte_mbuf *m, const struct roce_txh *txh, rte_be32_t dip,
	uint16_t sport, uint8_t tos, uint8_t ttl, bool mc_noloop, bool summed)
{
	struct roce_dev *dev = q->dev;
	struct rte_ether_hdr *eth;
	uint32_t l4 = m->pkt_len;
	struct rte_ether_addr dmac;
	bool local = dip == dev->ip;
	bool mc = roce_ip_is_mcast(dip);
	struct roce_qp *qp = q->tx_qp;
	uint32_t len;

	q->tx_qp = NULL;
	/* (a QP's copy is of another host's unicast address: its MAC is in it) */
	if (txh == NULL && mc)
		roce_mcast_mac(dip, &dmac);
	else if (txh == NULL && !local && roce_neigh_resolve(q, dip, &dmac) != 0) {
		roce_mbuf_free(m);
		q->stats.tx_no_neigh++;
		return -EAGAIN;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, ROCE_L2L4_LEN);
	frame_headers(dev, eth, txh, local ? &dev->mac : &dmac, dip, sport, tos, ttl, l4, summed);
	len = m->pkt_len;
	if (local) {
		int to = dev->nb_q > 1 ? loop_to_owner(q, m, udp_bth(ipv4_udp(eth_ipv4(eth)))) : 0;

		q->stats.tx_pkts++;
		q->stats.tx_bytes += len;
		if (to == 0)
			roce_mbuf_handoff(m);	/* to queue 0, maybe another thread */
		if (to == 0 && rte_ring_enqueue(dev->loop, m) != 0) {
			roce_mbuf_takeover(m);
			q->stats.tx_drop_full++;
			roce_mbuf_free(m);
		} else if (to >= 0) {
			qp_sent(qp, len);
		}
		return 0;
	}
	if (unlikely(mc) && !mc_noloop)
		mcast_loop(q, m, dip);
	if (xmit(q, m))
		qp_sent(qp, len);
	return 0;
}

int
roce_ip_xmit_mc(struct roce_q *q, struct rte_mbuf *m, rte_be32_t dip, uint16_t sport,
		uint8_t tos, uint8_t ttl, bool mc_noloop, bool summed)
{
	return ip_xmit(q, m, NULL, dip, sport, tos, ttl, mc_noloop, summed);
}

int
roce_ip_xmit(struct roce_q *q, struct rte_mbuf *m, rte_be32_t dip,
	     uint16_t sport, uint8_t tos, uint8_t ttl)
{
	return roce_ip_xmit_mc(q, m, dip, sport, tos, ttl, false, false);
}

/*
 * A frame built straight into the port's next slot (net_shm: q->shm_txq),
 * with no mbuf to fill, stage, copy into the slot and free: one of @l4 bytes
 * from the BTH on, to @dip, when nothing is staged to go before it (frames
 * leave in order), no capture wants it (droce's, or callbacks on the port's
 * tx bursts: dpdk-dumpcap's), no forked process shares the device (it sends
 * what they hand it), it goes to another host's unicast address whose MAC
 * is known (t->dmac, unless the QP's headers are there: t->txh, set by the
 * caller), and the ring has room. Sets t->slot and t->frame,
 * where its Ethernet header goes (its BTH ROCE_L2L4_LEN bytes further):
 * true; false: the caller builds an mbuf for roce_ip_xmit_mc(). The frame
 * leaves with tx_direct_send(); given up before that, it needs no undo.
 */
static bool
tx_direct(struct roce_q *q, struct roce_txf *t, rte_be32_t dip, uint32_t l4)
{
	struct roce_dev *dev = q->dev;

	if (q->nb_tx != 0 || l4 > SHM_MAX_FRAME - ROCE_L2L4_LEN || dev->share_on ||
	    __atomic_load_n(&dev->cap, __ATOMIC_RELAXED) != NULL ||
	    shm_direct_watched(dev->port_id, q->id, true))
		return false;
	if (t->txh == NULL &&
	    (dip == dev->ip || roce_ip_is_mcast(dip) || roce_neigh_resolve(q, dip, &t->dmac) != 0))
		return false;
	t->slot = shm_direct_slot(q->shm_txq, ROCE_L2L4_LEN + l4);
	if (t->slot == NULL)
		return false;
	/*
	 * A small frame is built aside and copied in at once: the peer polls the
	 * tag on the slot's first line, which each piecewise store while building
	 * would take back from it
	 */
	t->frame = ROCE_L2L4_LEN + l4 <= sizeof(q->shm_build) ? q->shm_build : t->slot;
	return true;
}

/*
 * Send the frame that tx_direct() placed (its arguments, and
 * roce_ip_xmit_mc()'s): its Ethernet, IPv4 and UDP headers, its ICRC
 * unless @summed, and the counters a staged frame gets.
 */
static void
tx_direct_send(struct roce_q *q, const struct roce_txf *t, rte_be32_t dip, uint16_t sport,
	       uint8_t tos, uint8_t ttl, uint32_t l4, bool summed)
{
	struct roce_qp *qp = q->tx_qp;
	uint32_t len = ROCE_L2L4_LEN + l4;

	q->tx_qp = NULL;
	frame_headers(q->dev, (struct rte_ether_hdr *)t->frame, t->txh, &t->dmac, dip, sport, tos,
		      ttl, l4, summed);
	if (t->frame != t->slot)
		shm_copy_small(t->slot, t->frame, len);	/* built aside: small */
	_Static_assert(sizeof(q->shm_build) == SHM_SMALL && sizeof(q->shm_rx_buf) == SHM_SMALL,
		       "the buffers shm_copy_small copies whole blocks of");
	shm_direct_commit(q->shm_txq, len);
	q->stats.tx_pkts++;
	q->stats.tx_bytes += len;
	q->stats.tx_direct++;
	qp_sent(qp, len);
}

/*
 * Room for a packet of @l4 bytes (BTH to ICRC) to @dip: in the port's next
 * slot where it can (tx_direct), else in a new mbuf with @append bytes
 * appended (@l4, or a zero-copy frame's headers). @qp: a connected QP whose
 * packet it is (to its destination, from its source port, TOS and TTL),
 * else NULL. Returns where its BTH goes, or NULL: no mbuf.
 */
struct roce_bth *
roce_txf_begin(struct roce_q *q, struct roce_txf *t, struct roce_qp *qp, rte_be32_t dip,
	       uint32_t l4, uint32_t append)
{
	struct roce_bth *bth;

	t->m = NULL;
	/* forked processes that share the device each send their own QPs' */
	t->txh = qp != NULL && !q->dev->share_on && txh_valid(q, qp) ? &qp->txh : NULL;
	if (q->shm_txq != NULL && tx_direct(q, t, dip, l4))
		return (struct roce_bth *)(t->frame + ROCE_L2L4_LEN);
	t->frame = NULL;
	t->m = roce_pkt_alloc(q);
	if (t->m == NULL)
		return NULL;
	bth = (struct roce_bth *)rte_pktmbuf_append(t->m, append);
	if (bth == NULL) {
		roce_mbuf_free(t->m);
		t->m = NULL;
	}
	return bth;
}

/*
 * Send the packet of @l4 bytes that roce_txf_begin() made room for, to
 * @dip (roce_ip_xmit_mc()'s arguments): 0, or -EAGAIN (its mbuf freed: the
 * peer's MAC is not known yet).
 */
int
roce_txf_send(struct roce_q *q, struct roce_txf *t, rte_be32_t dip, uint16_t sport,
	      uint8_t tos, uint8_t ttl, bool mc_noloop, uint32_t l4, bool summed)
{
	if (t->frame != NULL) {
		tx_direct_send(q, t, dip, sport, tos, ttl, l4, summed);
		return 0;
	}
	return ip_xmit(q, t->m, t->txh, dip, sport, tos, ttl, mc_noloop, summed);
}

/*
 * What a frame's ICRC begins with, written at @buf (roce_icrc_masked_*):
 * the LRH stand-in, then the IPv4 and UDP headers the frame will carry
 * (l2l4_fill's, or its QP's copy of them: the same bytes where the ICRC
 * looks) in front of a RoCE packet of @l4 bytes from the BTH on (to @dip
 * from @sport) and its BTH and extension headers (@bth, @hlen), the fields
 * the ICRC leaves out masked (roce_icrc_mask): written so at once, not
 * copied to be masked. Returns how many bytes.
 */
static uint32_t
icrc_headers(uint8_t *buf, const struct roce_q *q, uint32_t l4, const struct roce_bth *bth,
	     uint32_t hlen, rte_be32_t dip, uint16_t sport)
{
	uint8_t *ip = buf + ROCE_ICRC_LRH_LEN;

	RTE_ASSERT(hlen <= ROCE_REQ_HDR_MAX);
	/* TOS and TTL are masked: any value does */
	roce_ipv4_udp_fill((struct rte_ipv4_hdr *)ip, q->dev->ip, dip, sport, 0, 0, l4);
	memcpy(ip + ROCE_IPV4_LEN + ROCE_UDP_LEN, bth, hlen);
	roce_icrc_mask(buf);
	return ROCE_ICRC_LRH_LEN + ROCE_IPV4_LEN + ROCE_UDP_LEN + hlen;
}

#define ICRC_PRE_MAX	(ROCE_ICRC_LRH_LEN + ROCE_IPV4_LEN + ROCE_UDP_LEN + ROCE_REQ_HDR_MAX)

/* The ICRC register after those headers (icrc_headers). */
static uint32_t
sum_headers(const struct roce_q *q, uint32_t l4, const struct roce_bth *bth, uint32_t hlen,
	    rte_be32_t dip, uint16_t sport)
{
	uint8_t pre[ICRC_PRE_MAX];

	return roce_icrc_masked_start(pre, icrc_headers(pre, q, l4, bth, hlen, dip, sport));
}

/*
 * A large payload summed for the ICRC as it is copied, in one pass over it:
 * a packet of @l4 bytes holds the BTH and extension headers (@bth, @hlen
 * bytes) and room for the payload, its pad and the ICRC. Gathers @pay bytes from @sge at @off
 * behind the headers, pads them and writes the ICRC, summed with the IPv4
 * and UDP headers roce_ip_xmit_mc() or tx_direct_send() will put in front (to
 * @dip from @sport), which is then told the frame is summed. Only for a
 * payload of ROCE_SUM_COPY_MIN bytes or more while no ODP MR exists (whose
 * copies are guarded): roce_tx_sum_copy() says whether. The headers are
 * written as the ICRC sums them (icrc_headers), and a payload within one
 * SGE, the usual one, is summed on from them without a reduction between
 * (roce_icrc_masked_copy).
 */
void
roce_tx_sum_copy_big(struct roce_q *q, uint32_t l4, const struct roce_bth *bth, uint32_t hlen,
		     const struct ibv_sge *sge, uint32_t off, uint32_t pay, rte_be32_t dip,
		     uint16_t sport)
{
	uint8_t *p = (uint8_t *)(uintptr_t)bth + hlen;
	uint32_t pad = -pay & 3, crc;
	uint8_t pre[ICRC_PRE_MAX];
	uint32_t n = icrc_headers(pre, q, l4, bth, hlen, dip, sport);

	if (off < sge->length && pay <= sge->length - off) {
		crc = roce_icrc_masked_copy(pre, n, p, (const uint8_t *)(uintptr_t)sge->addr + off,
					    pay);
	} else {
		crc = roce_icrc_masked_start(pre, n);
		roce_copy_from_sge_sum(p, sge, off, pay, &crc);
	}
	memset(p + pay, 0, pad);
	icrc_set(p + pay + pad, ~roce_icrc_more(crc, p + pay, pad));
}

/*
 * Zero-copy transmit (roce_tx_zc_ok() said yes): @m holds the BTH and
 * extension headers (@bth, @hlen bytes) and nothing after them. Chains
 * behind it the @pay bytes of @sge from @off as external-buffer segments
 * that point into the registered memory (one per SGE piece), then a segment
 * of the pad and the ICRC, summed over the payload where it lies, with the
 * headers as roce_tx_sum_copy() does. roce_ip_xmit_mc() is then told the
 * frame is summed. The payload is read again when the port copies the frame
 * (at the latest the flush that ends this iteration, roce_tx_flush), so a
 * WQE completes only after that (roce_tx_settle; xmit() marks the queue when
 * it stages such a frame). 0, or -ENOBUFS (the caller frees @m and what was
 * chained to it).
 */
int
roce_tx_zc(struct roce_q *q, struct rte_mbuf *m, const struct roce_bth *bth, uint32_t hlen,
	   const struct ibv_sge *sge, uint32_t off, uint32_t pay, rte_be32_t dip, uint16_t sport)
{
	static const uint8_t zero[4];
	struct rte_mbuf *tail = m, *t;
	uint32_t pad = -pay & 3, crc;
	uint8_t *p;

	crc = sum_headers(q, hlen + pay + pad + ROCE_ICRC_LEN, bth, hlen, dip, sport);
	sge = roce_sge_seek(sge, &off, pay);
	for (uint32_t left = pay; left != 0; sge++, off = 0) {
		uint32_t n = RTE_MIN(left, sge->length - off);
		uint8_t *src = (uint8_t *)(uintptr_t)sge->addr + off;
		struct rte_mbuf *e;

		if (n == 0)
			continue;	/* an empty SGE */
		e = roce_pkt_alloc(q);
		if (e == NULL)
			return -ENOBUFS;
		/* the segment's reference; the queue's keeps the count above 0 */
		rte_mbuf_ext_refcnt_update(&q->zc_shinfo, 1);
		/* ports that copy take the address (roce_dev.c): no IOVA needed */
		rte_pktmbuf_attach_extbuf(e, src, RTE_BAD_IOVA, (uint16_t)n, &q->zc_shinfo);
		e->data_len = (uint16_t)n;
		crc = roce_icrc_more(crc, src, n);
		tail->next = e;
		tail = e;
		m->nb_segs++;
		m->pkt_len += n;	/* the chain stays whole for a free on failure */
		left -= n;
	}
	t = roce_pkt_alloc(q);
	if (t == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(t, pad + ROCE_ICRC_LEN);
	memset(p, 0, pad);
	icrc_set(p + pad, ~roce_icrc_more(crc, zero, pad));
	tail->next = t;
	m->nb_segs++;
	m->pkt_len += t->data_len;
	q->stats.tx_zcopy++;
	return 0;
}

/* The shared info's count never drops to 0 (the queue holds 1): never called. */
static void
zc_free_cb(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

void
roce_tx_zc_init(struct roce_q *q)
{
	q->zc_shinfo.free_cb = zc_free_cb;
	q->zc_shinfo.fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(&q->zc_shinfo, 1);
}
