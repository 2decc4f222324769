/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP: answer requests for our IP, learn peers from requests and replies,
 * and resolve next hops for the requester. The table belongs to the engine;
 * static entries come from devargs before the engine starts.
 *
 * A peer may come back with another MAC (a process restarted on a link of
 * random MACs, a VM moved): an ARP frame from an IP in the table updates its
 * entry whoever it is addressed to (RFC 826's merge rule, as Linux does), a
 * device announces itself with a gratuitous ARP when its link comes up, and
 * the requester asks again, keeping the entry meanwhile, when an RC peer
 * stops answering (roce_neigh_confirm).
 */
#include <rte_arp.h>
#include <rte_cycles.h>

#include "roce_loc.h"

static struct roce_neigh *
neigh_find(struct roce_dev *dev, rte_be32_t ip)
{
	for (unsigned int i = 0; i < DROCE_NEIGH_MAX; i++)
		if (dev->neigh[i].ip == ip)
			return &dev->neigh[i];
	return NULL;
}

/*
 * An entry changed by its one writer (queue 0, or the probe before the
 * engine runs): seq odd while the fields change, even again after, so
 * readers on other threads see all of the change or none of it. Fields are
 * relaxed atomics so that a reader's racing load is defined.
 */
static void
neigh_store(struct roce_dev *dev, struct roce_neigh *n, rte_be32_t ip,
	    const struct rte_ether_addr *mac, uint8_t valid, uint8_t is_static)
{
	/* odd, even if a process sharing the device died in the middle of a store */
	uint32_t seq = n->seq | 1;
	uint16_t w[3] = { 0, 0, 0 };
	bool changed;

	if (mac != NULL)
		memcpy(w, mac->addr_bytes, sizeof(w));
	/* (its one writer reads it: no race) */
	changed = n->ip != ip || n->valid != valid || memcmp(n->mac_w, w, sizeof(w)) != 0;
	__atomic_store_n(&n->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&n->ip, ip, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < 3; i++)
		__atomic_store_n(&n->mac_w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&n->valid, valid, __ATOMIC_RELAXED);
	__atomic_store_n(&n->is_static, is_static, __ATOMIC_RELAXED);
	__atomic_store_n(&n->seq, seq + 1, __ATOMIC_RELEASE);
	if (changed)	/* an ARP that says what the table knows changes nothing */
		roce_txh_stale(dev);	/* the QPs' headers built from the table */
}

/*
 * A consistent copy of @n's ip, mac, valid and is_static into @out, from
 * any thread; false if a write kept racing it (a few tries).
 */
bool
roce_neigh_load(const struct roce_neigh *n, struct roce_neigh *out)
{
	for (unsigned int tries = 0; tries < 4; tries++) {
		uint32_t seq = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE);

		if (seq & 1) {
			rte_pause();
			continue;
		}
		out->ip = __atomic_load_n(&n->ip, __ATOMIC_RELAXED);
		for (unsigned int i = 0; i < 3; i++)
			out->mac_w[i] = __atomic_load_n(&n->mac_w[i], __ATOMIC_RELAXED);
		out->valid = __atomic_load_n(&n->valid, __ATOMIC_RELAXED);
		out->is_static = __atomic_load_n(&n->is_static, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&n->seq, __ATOMIC_RELAXED) == seq)
			return true;
	}
	return false;
}

int
roce_neigh_add(struct roce_dev *dev, rte_be32_t ip, const struct rte_ether_addr *mac, bool is_static)
{
	struct roce_neigh *n = neigh_find(dev, ip);
	uint8_t was_static = n != NULL && n->is_static;

	if (n == NULL) {
		/* a free slot, else evict the first dynamic entry */
		for (unsigned int i = 0; i < DROCE_NEIGH_MAX && n == NULL; i++)
			if (dev->neigh[i].ip == 0)
				n = &dev->neigh[i];
		for (unsigned int i = 0; i < DROCE_NEIGH_MAX && n == NULL; i++)
			if (!dev->neigh[i].is_static)
				n = &dev->neigh[i];
		if (n == NULL)
			return -ENOSPC;
	} else if (was_static && !is_static) {
		return 0;
	}
	if (n->ip != 0 && !n->valid)	/* resolved now, or evicted */
		dev->neigh_pending--;
	neigh_store(dev, n, ip, mac, 1, was_static | is_static);
	return 0;
}

static void
arp_send(struct roce_q *q, uint16_t op, rte_be32_t tip, const struct rte_ether_addr *tha);

/*
 * A valid RoCE packet from @ip, which we are still asking ARP about, came
 * from @mac: take it. A responder that could not ACK until its own ARP round
 * trip ended (its request or the reply lost) would otherwise let the peer's
 * retries run out on the very first message. Only entries we asked for are
 * filled, and only from packets that passed every check and name a QP.
 */
void
roce_neigh_learn(struct roce_dev *dev, rte_be32_t ip, const struct rte_ether_addr *mac)
{
	struct roce_neigh *n = neigh_find(dev, ip);

	if (n != NULL && !n->valid && rte_is_valid_assigned_ether_addr(mac))
		roce_neigh_add(dev, ip, mac, false);
}

/* A gratuitous ARP request: our IP and MAC, to everyone on the link. */
void
roce_arp_announce(struct roce_q *q)
{
	arp_send(q, RTE_ARP_OP_REQUEST, q->dev->ip, NULL);
}

/*
 * An RC peer stopped answering: ask for its MAC again (rate-limited), keeping
 * the entry; a reply with a new MAC replaces it. The table is queue 0's: a
 * QP of another queue leaves the IP for it.
 */
void
roce_neigh_confirm(struct roce_q *q, rte_be32_t ip)
{
	struct roce_dev *dev = q->dev;
	struct roce_neigh *n;
	uint64_t now;

	if (q->id != 0) {
		__atomic_store_n(&dev->neigh_recheck, ip, __ATOMIC_RELEASE);
		return;
	}
	n = neigh_find(dev, ip);
	if (n == NULL || !n->valid || n->is_static)
		return;
	/*
	 * Often enough to mend an entry within one RC retry budget (a wrong MAC
	 * learnt from a damaged ARP frame, which has no checksum of its own), at
	 * most 100 requests a second per peer.
	 */
	now = rte_get_timer_cycles();
	if (now - n->req_tsc > dev->tsc_hz * DROCE_ARP_RETRY_MIN_MS / 1000) {
		n->req_tsc = now;
		arp_send(q, RTE_ARP_OP_REQUEST, ip, NULL);
	}
}

static void
arp_send(struct roce_q *q, uint16_t op, rte_be32_t tip, const struct rte_ether_addr *tha)
{
	struct roce_dev *dev = q->dev;
	struct rte_mbuf *m = roce_pkt_alloc(q);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, RTE_ETHER_HDR_LEN + sizeof(*arp));
	arp = eth_arp(eth);
	eth->src_addr = dev->mac;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	else
		eth->dst_addr = *tha;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = dev->mac;
	arp->arp_data.arp_sip = dev->ip;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	else
		arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = tip;
	q->stats.tx_arp++;
	roce_xmit(q, m);
}

/*
 * An ARP frame: droce learns from it what it can. One about droce's IP is
 * droce's (a request is answered) and freed; any other, and one droce cannot
 * use, is left to the caller, for the device's ethdev port.
 */
enum roce_arp_verdict
roce_arp_input(struct roce_q *q, struct rte_mbuf *m)
{
	struct roce_dev *dev = q->dev;
	struct rte_arp_hdr *arp;

	q->stats.rx_arp++;
	if (m->data_len < RTE_ETHER_HDR_LEN + sizeof(*arp))
		return ROCE_ARP_BAD;
	arp = eth_arp(rte_pktmbuf_mtod(m, struct rte_ether_hdr *));
	/* not Ethernet/IPv4 ARP, or an opcode droce has no use for */
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	     arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REPLY)))
		return ROCE_ARP_BAD;
	if (arp->arp_data.arp_tip != dev->ip) {
		/* not for us (a gratuitous ARP among them): still news of a peer we know */
		if (arp->arp_data.arp_sip != dev->ip && neigh_find(dev, arp->arp_data.arp_sip) != NULL &&
		    rte_is_valid_assigned_ether_addr(&arp->arp_data.arp_sha))
			roce_neigh_add(dev, arp->arp_data.arp_sip, &arp->arp_data.arp_sha, false);
		return ROCE_ARP_OTHER;
	}
	if (arp->arp_data.arp_sip != 0 && rte_is_valid_assigned_ether_addr(&arp->arp_data.arp_sha))
		roce_neigh_add(dev, arp->arp_data.arp_sip, &arp->arp_data.arp_sha, false);
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
		arp_send(q, RTE_ARP_OP_REPLY, arp->arp_data.arp_sip, &arp->arp_data.arp_sha);
	roce_mbuf_free(m);
	return ROCE_ARP_MINE;
}

/*
 * The table read by a thread other than queue 0's, which writes it: an
 * entry is taken from a consistent copy (roce_neigh_load); otherwise the IP
 * is left for queue 0 to resolve (neigh_want).
 */
static int
neigh_read(struct roce_dev *dev, rte_be32_t ip, struct rte_ether_addr *mac)
{
	for (unsigned int i = 0; i < DROCE_NEIGH_MAX; i++) {
		struct roce_neigh e;

		if (__atomic_load_n(&dev->neigh[i].ip, __ATOMIC_RELAXED) != ip ||
		    !roce_neigh_load(&dev->neigh[i], &e) || e.ip != ip || !e.valid)
			continue;
		*mac = e.mac;
		return 0;
	}
	__atomic_store_n(&dev->neigh_want, ip, __ATOMIC_RELEASE);
	return -EAGAIN;
}

/* The control path's question (rdev op neigh_resolve). */
int
roce_neigh_query(struct roce_dev *dev, rte_be32_t ip, struct rte_ether_addr *mac)
{
	if (ip == dev->ip) {
		rte_eth_macaddr_get(dev->port_id, mac);
		return 0;
	}
	if (neigh_read(dev, ip, mac) == 0)
		return 0;
	roce_wake_kick(dev);	/* the control path's: queue 0 may sleep in the waker */
	return -EAGAIN;
}

/*
 * 0 with @mac filled, or -EAGAIN after (rate-limited) sending a request.
 * Another queue than 0 reads the table as the control path does and leaves
 * what it misses to queue 0's next iteration (no wake-up: no syscall from
 * an lcore).
 */
int
roce_neigh_resolve(struct roce_q *q, rte_be32_t ip, struct rte_ether_addr *mac)
{
	struct roce_dev *dev = q->dev;
	struct roce_neigh *n;
	uint64_t now;

	if (q->id != 0)
		return neigh_read(dev, ip, mac);
	n = neigh_find(dev, ip);
	if (likely(n != NULL && n->valid)) {
		*mac = n->mac;
		return 0;
	}
	now = rte_get_timer_cycles();
	if (n == NULL) {
		/* remember the pending lookup so the reply is accepted */
		for (unsigned int i = 0; i < DROCE_NEIGH_MAX && n == NULL; i++)
			if (dev->neigh[i].ip == 0)
				n = &dev->neigh[i];
		if (n == NULL)
			return -EAGAIN;
		neigh_store(dev, n, ip, NULL, 0, 0);
		n->req_tsc = 0;
		n->retry_ms = DROCE_ARP_RETRY_MIN_MS;
		dev->neigh_pending++;
	}
	/* a lost request or reply costs 10 ms first, not a whole RC retry budget */
	if (n->req_tsc == 0 || now - n->req_tsc > dev->tsc_hz * n->retry_ms / 1000) {
		if (n->req_tsc != 0)
			n->retry_ms = RTE_MIN(n->retry_ms * 2, DROCE_ARP_RETRY_MS);
		n->req_tsc = now;
		arp_send(q, RTE_ARP_OP_REQUEST, ip, NULL);
	}
	return -EAGAIN;
}
