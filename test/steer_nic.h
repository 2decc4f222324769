/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_stnic: a test ethdev that steers as a NIC would (steer_nic.c), for
 * test_steer. Two ports make a link: what one sends, the other receives on
 * the rx queue its own configuration picks, from what its user set on it:
 * its rte_flow rules (ETH / IPV4 / UDP with masked ports, action QUEUE),
 * else RSS on IPv4/UDP with the key given at rte_eth_dev_configure and the
 * RETA set with rte_eth_dev_rss_reta_update, else the queue of the same
 * index as the sender's tx queue (a net_ring pair). What it offers is set
 * per port before its user configures it (stnic_caps).
 */
#ifndef STEER_NIC_H
#define STEER_NIC_H

#include <stdbool.h>
#include <stdint.h>

#define STNIC_CAP_RSS	1u	/* RSS on IPv4/UDP, a 40-byte key, a 128-entry RETA */
#define STNIC_CAP_FLOW	2u	/* rte_flow rules as above */
#define STNIC_MAX_Q	8
#define STNIC_RETA	128
#define STNIC_RULES	16

/* What one port's NIC did with the frames it received. */
struct stnic_counts {
	uint64_t rx_q[STNIC_MAX_Q];	/* frames put on each rx queue */
	uint64_t roce;			/* RoCEv2 frames */
	uint64_t misplaced;		/* RoCEv2 frames on another queue than their QP's */
	uint64_t by_rule;		/* RoCEv2 frames a flow rule placed */
	uint64_t by_rss;		/* RoCEv2 frames RSS placed */
	uint64_t dropped;		/* an rx ring was full */
	/*
	 * RoCEv2 frames whose UDP source port does not carry the destination
	 * QPN % 8 (0 for QP1) in its low 3 bits, or (the port hashing with its
	 * RSS key) in its hash's low 3 bits: droce's marks, whatever this
	 * port steers by
	 */
	uint64_t bad_mark;
	uint64_t bad_hash_mark;
};

/* Creates net_stnic ports @a and @b (vdev names), linked; 0 or a negative errno. */
int stnic_link(const char *a, const char *b);
/* What port @port offers from its next configuration on (STNIC_CAP_*). */
void stnic_caps(uint16_t port, uint32_t caps);
/*
 * The owner of a QPN on the receiving device, for the misplaced count:
 * @nb_q queues, QPN n on queue (n % 8) % nb_q, QP1 on 0.
 */
void stnic_owner_queues(uint16_t port, uint16_t nb_q);
void stnic_counts_get(uint16_t port, struct stnic_counts *c);
void stnic_counts_reset(uint16_t port);
/* The port's state as its user left it. */
unsigned int stnic_rules(uint16_t port);	/* flow rules installed */
bool stnic_rss_on(uint16_t port);		/* RSS configured on IPv4/UDP */
int stnic_key(uint16_t port, uint8_t *key, unsigned int len);	/* the key's length */
uint16_t stnic_reta(uint16_t port, unsigned int i);
/* Rule slot @i: -1 if free, else its queue, and its UDP ports and masks (host order). */
int stnic_rule_get(uint16_t port, unsigned int i, uint16_t *sport, uint16_t *sport_mask,
		   uint16_t *dport, uint16_t *dport_mask);

#endif /* STEER_NIC_H */
