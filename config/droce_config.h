/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Limits droce enforces. ibv_query_device reports exactly these, and the
 * create and post calls reject anything beyond them.
 */
#ifndef DROCE_CONFIG_H
#define DROCE_CONFIG_H

#include "droce_build_config.h"

#define DROCE_MAX_DEVS		8	/* droce vdevs in one process */
#define DROCE_VENDOR_ID		0x02c9	/* reported, never matched */
#define DROCE_VENDOR_PART_ID	0xd70e

#define DROCE_MAX_QP		16384	/* QPs per device */
#define DROCE_QPN_BASE		0x11	/* QPN = base + table index; 0 and 1 are special */
#define DROCE_MAX_QP_WR		4096	/* WRs in one SQ or RQ */
#define DROCE_MAX_SGE		16	/* SGEs per WR */
#define DROCE_MAX_INLINE	256	/* bytes of inline send data */
#define DROCE_MAX_CQ		1024
#define DROCE_MAX_CQE		65536
#define DROCE_MAX_SRQ		256
#define DROCE_MAX_SRQ_WR	4096
#define DROCE_MAX_TM_SRQ	16	/* tag-matching SRQs per device */
#define DROCE_TM_MAX_TAGS	4095	/* tags in one TM SRQ's list */
#define DROCE_TM_MAX_OPS	1024	/* list operations in flight */
#define DROCE_TM_RNDV_HDR	64	/* bytes of TMH + RVH + metadata */
#define DROCE_MAX_PD		1024
#define DROCE_MAX_MR		4096
#define DROCE_MAX_MW		4096	/* memory windows per device (slot 0 unused) */
#define DROCE_MAX_MR_SIZE	(1ULL << 40)
#define DROCE_MAX_AH		4096
#define DROCE_MAX_MCAST_GRP	64	/* multicast groups one device's QPs are attached to */
#define DROCE_MAX_MCAST_QP_ATTACH 32	/* QPs attached to one group */
#define DROCE_MAX_MCAST_TOTAL	(DROCE_MAX_MCAST_GRP * DROCE_MAX_MCAST_QP_ATTACH)
#define DROCE_MAX_MSG		(1U << 31)	/* bytes in one RC/UC message */
#define DROCE_MAX_RD_ATOMIC	16
#define DROCE_PKEY_TBL_LEN	1
/*
 * GID table entries of the port. Only index 0 is populated (the RoCE v2
 * GID ::ffff:<ip>); the rest are empty, as on a RoCE port whose netdev has
 * fewer addresses than the table has room (ibv_query_gid_ex: ENODATA).
 */
#define DROCE_GID_TBL_LEN	16
#define DROCE_DEFAULT_PKEY	0xffff

#define DROCE_MAX_QUEUES	8	/* rx/tx queue pairs of a device (devarg queues=) */
#define DROCE_BURST		32	/* rx/tx burst and ring bulk size */
#define DROCE_NB_MBUF		8191	/* per device mbuf pool */
#define DROCE_MBUF_CACHE	256
#define DROCE_NB_RXD		1024
#define DROCE_NB_TXD		1024
#define DROCE_LOOP_RING		1024	/* frames a device sends to itself */
#define DROCE_NEIGH_MAX		64	/* ARP table entries */
#define DROCE_ARP_RETRY_MIN_MS	10	/* first ARP retry; doubles up to DROCE_ARP_RETRY_MS */
#define DROCE_ARP_RETRY_MS	200
#define DROCE_ACK_EVERY		64	/* AckReq at least every N packets */
#define DROCE_ASYNC_RING	256	/* pending async events per context */
#define DROCE_LINK_POLL_MS	100	/* link polling, for ports without a link interrupt */
#define DROCE_PORT_REVIVE_MS	200	/* a memif client without its server: restarted this often */
/* Inline progress while the application sleeps (the waker thread) */
#define DROCE_WAKE_MIN_US	10	/* sleep after a round that moved packets */
#define DROCE_WAKE_FAST_US	1000	/* longest sleep while a CQ is armed or a thread waits */
#define DROCE_WAKE_SLOW_US	20000	/* longest sleep while the device only has QPs */
#define DROCE_WAIT_SPIN_US	20	/* a blocking wait progresses itself this long first */
/*
 * RC timers (local ACK timeout, RNR delay) run on a device's engine clock,
 * which counts at most this much of the time between two iterations of the
 * device: more than the waker's longest sleep, less than a starved process's
 * time off the CPU (roce_poll.c).
 */
#define DROCE_CLOCK_GAP_US	25000
/*
 * Adaptive retransmission (roce_req.c): an RC requester whose peer is late
 * by its measured round trip (smoothed + 4 deviations, at least
 * DROCE_RTO_MIN_US) resends (a tail probe, then from the oldest
 * unacknowledged PSN), then again after twice that delay, and so on while
 * the delay stays within the cap: DROCE_RTO_MAX_US and an eighth of the
 * local ACK timeout (none with timeout 0). Early resends do not count
 * against retry_cnt.
 */
#define DROCE_RTO_MIN_US	50
/*
 * zcopy=auto: on a port that copies the frames it takes (roce_port.c), the
 * frames of an RC SEND or WRITE of at least this many bytes take their
 * payload to it as segments of registered memory instead of copies (READ
 * responses are always copied: roce_resp_run). Over net_shm, smaller messages (one or two 4 KiB
 * frames) were faster copied: the mbuf chain costs the sender more than the
 * copy it saves (doc/guides/tuning.rst, "Zero-copy transmit").
 */
#define DROCE_ZCOPY_MIN		16384
#define DROCE_RTO_MAX_US	10000

#define DROCE_MIN_MTU		256
#define DROCE_MAX_MTU		4096
#define DROCE_UDP_PORT		4791

#endif /* DROCE_CONFIG_H */
