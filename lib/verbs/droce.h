/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce extensions to the verbs API, for DPDK programs that build their own
 * topology. Everything else is plain <infiniband/verbs.h>.
 */
#ifndef DROCE_H
#define DROCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create two ethdev ports, @name_a and @name_b, joined back to back by a
 * pair of rte_rings: what one transmits the other receives. EAL must be up.
 * Both names start with "net_ring_", the ring PMD's port prefix.
 *
 * @return 0, or a negative errno: -EINVAL for a name without the prefix or
 *   two equal names, -EEXIST if a name is taken, -ENOMEM when
 *   rings or ports cannot be created.
 */
int droce_ring_pair_create(const char *name_a, const char *name_b);

/**
 * droce_ring_pair_create() with @nb_queues rx/tx queue pairs on each port
 * (1 to 16): what @name_a's tx queue i transmits, @name_b's rx queue i
 * receives, and the other way round, as a NIC's RSS or flow rule would
 * steer a flow to the queue of the lcore that owns it. For devices with
 * queues= (a queue per lcore).
 *
 * @return as droce_ring_pair_create(); -EINVAL also for @nb_queues out of range.
 */
int droce_ring_pair_create_queues(const char *name_a, const char *name_b,
				  unsigned int nb_queues);

/**
 * Remove this process's EAL runtime files (its --file-prefix's directory
 * under /var/run/dpdk) when it exits. DPDK leaves them behind, about 3 MB
 * of tmpfs a run, and programs that run with a new prefix each time fill
 * memory with them. For a primary process (secondaries attached to it, such
 * as dpdk-dumpcap, keep what they have mapped); a child forked later leaves
 * them to its parent. droce calls it itself when it brought EAL up from
 * DROCE_EAL.
 *
 * @return 0, -EPERM in a secondary process, -ENOMEM if atexit() refused.
 */
int droce_eal_files_remove_at_exit(void);

/**
 * Probe a droce device at run time, as --vdev=@name,@args would have.
 *
 * @return 0, or a negative errno from the probe (-EINVAL for bad devargs,
 *   -ENODEV for an unknown ethdev, -EBUSY if the ethdev is already owned).
 */
int droce_dev_create(const char *name, const char *args);

/** Remove a device created with droce_dev_create(); 0 or a negative errno. */
int droce_dev_destroy(const char *name);

/**
 * The resource_type a parent domain's allocator is called with
 * (struct ibv_parent_domain_init_attr's alloc and free): the memory of a
 * QP's send queue WQEs, of its receive queue WQEs, and of a CQ's ring of
 * completions. An allocator may answer IBV_ALLOCATOR_USE_DEFAULT for any.
 */
enum {
	DROCE_RES_TYPE_SQ = 1,
	DROCE_RES_TYPE_RQ = 2,
	DROCE_RES_TYPE_CQ = 3,
};

/** Per-device counters, by cause; see doc/guides. */
struct droce_dev_stats {
	uint64_t rx_pkts, tx_pkts, rx_bytes, tx_bytes;
	uint64_t rx_drops;		/* all drop causes summed */
	uint64_t rx_drop_bad_icrc;
	uint64_t rx_drop_truncated;
	uint64_t rx_drop_no_qp;
	uint64_t retransmits;
	uint64_t rnr_naks_sent;
};

/** Snapshot a device's counters by ibv device name; 0 or -ENODEV. */
int droce_dev_stats_get(const char *name, struct droce_dev_stats *st);

/**
 * Every counter of a device by name (the struct roce_stats fields): fills up
 * to @n entries and returns how many exist, or -ENODEV.
 */
int droce_dev_xstats(const char *name, const char **names, uint64_t *values, int n);

/**
 * Every counter of one QP (packets and bytes each way, retransmits, local
 * ACK timeouts, NAKs sent and received by kind, RNR NAKs, duplicates,
 * out-of-sequence packets, drops by cause; doc/guides/user.rst, "Telemetry"):
 * fills up to @n entries and returns how many exist. The engine counts on
 * while this reads: each value is as it was at most an iteration ago.
 *
 * @return the number of counters, or -EINVAL if @qp is NULL.
 */
struct ibv_qp;
int droce_qp_xstats(struct ibv_qp *qp, const char **names, uint64_t *values, int n);

/** An entry of a device's neighbour (ARP) table. */
struct droce_neigh {
	uint32_t ip;			/* IPv4, network order */
	uint8_t mac[6];			/* valid when @resolved */
	uint8_t resolved;		/* 0: asked for, no answer yet */
	uint8_t is_static;		/* from the devarg neigh= */
};

/**
 * A device's neighbour table by ibv device name: fills up to @n entries
 * and returns how many there are, or -ENODEV.
 */
int droce_dev_neigh(const char *name, struct droce_neigh *tbl, int n);

/**
 * Start capturing a device's frames, both ways, to the pcapng file @path
 * (as the devarg pcapng= does from probe), or stop with @path NULL: the
 * frames captured so far are written and the file closed before this
 * returns.
 *
 * @return 0, or a negative errno: -ENODEV (no such device), -EBUSY (a
 *   capture runs already), -ENOENT (stop: none runs), or the file's error
 *   (-EACCES, -ENOENT...), -ENOMEM.
 */
int droce_dev_capture(const char *name, const char *path);

/** What a device holds at one moment: for leak checks. */
struct droce_dev_objects {
	uint32_t contexts;		/* open contexts */
	uint32_t pds, mrs, cqs, srqs, qps, ahs;	/* of every context */
	uint32_t mbufs_in_use;		/* of the device's mbuf pool (rx and tx frames) */
	uint32_t mbufs_staged;		/* of those, frames waiting for the port to take them */
};

/**
 * Snapshot a device's object counts and mbuf pool level by ibv device name.
 * With inline progress it is taken between two progress iterations; an
 * engine lcore may be moving frames meanwhile, so the mbuf counts are exact
 * only while the device is idle.
 *
 * @return 0, or -ENODEV if no device has that name.
 */
int droce_dev_objects_get(const char *name, struct droce_dev_objects *o);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
