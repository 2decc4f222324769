/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two-process test programs (mp_peer, mp_stress) share: logging
 * with a program tag, the watchdog, a monotonic clock, the payload pattern,
 * bounded TCP I/O and the TCP rendezvous, and the verbs set-up (device and
 * PD, CQs, a registered buffer, the RC QP's INIT -> RTR -> RTS with GID
 * index 0, teardown), and a leak check. Only <infiniband/verbs.h> in the
 * interface (the leak check reads droce and DPDK inside); every wait is
 * bounded.
 *
 * Every failure here goes through die(): the message, then mp_fail_exit(1).
 */
#ifndef DROCE_TEST_MP_COMMON_H
#define DROCE_TEST_MP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* --- command line, logging, exit --- */
enum { ROLE_SERVER, ROLE_CLIENT };

/*
 * argv[1] "server" or "client" (argv[2], the TCP port, must be there):
 * ROLE_SERVER or ROLE_CLIENT, and mp_tag becomes "<prog> server|client";
 * -1 if not so.
 */
int mp_parse_role(int argc, char **argv, const char *prog);

/* Printed before every say() line (e.g. "mp_peer server"). */
extern const char *mp_tag;

/* Called by mp_fail_exit() before it exits (mp_stress names the session). */
extern void (*mp_fail_hook)(int code);

/* "<mp_tag>: <message>" on stderr */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mp_fail_hook, then exit(@code) */
void mp_fail_exit(int code) __attribute__((noreturn));

#define die(...) do { say(__VA_ARGS__); mp_fail_exit(1); } while (0)

/*
 * SIGALRM: write @msg (a string literal, "<program>: ...\n") to stderr and
 * _exit(3); SIGPIPE ignored. Arming the alarm is the caller's.
 */
void mp_signals_init(const char *watchdog_msg);

/* --- time, numbers --- */
double now_s(void);		/* CLOCK_MONOTONIC, in seconds */
uint64_t splitmix64(uint64_t x);
uint32_t rand_psn(void);	/* a 24-bit PSN from the time and the pid */
uint32_t mtu_bytes(enum ibv_mtu m);	/* 0 if @m is no MTU */

/* @len bytes of a pattern that depends only on @seed and @idx */
void mp_fill_pattern(uint8_t *p, size_t len, uint64_t seed, uint32_t idx);

/* --- TCP --- */

/* Set by read_all(): its last failure met EOF (cleared by read_all() and write_all()). */
extern bool mp_tcp_eof;

int write_all(int fd, const void *buf, size_t len);
/* Read exactly @len bytes before the monotonic @deadline; -1 on EOF/error/timeout. */
int read_all(int fd, void *buf, size_t len, double deadline);
bool readable(int fd);

/* Listen on all addresses, TCP @port; says "listening on TCP port <port>". */
int mp_tcp_listen(const char *port, int backlog);
/* Accept one client within @timeout s; the connection has TCP_NODELAY. */
int mp_tcp_accept(int lfd, unsigned int timeout);
/*
 * Connect to @addr:@port, retrying (the server may not listen yet) until
 * @deadline, which @timeout (s) names in the message; TCP_NODELAY.
 */
int mp_tcp_connect(const char *addr, const char *port, double deadline, unsigned int timeout);

/* --- verbs --- */
struct mp_res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	size_t buf_len;
	union ibv_gid gid;
	enum ibv_mtu mtu;		/* port 1's active MTU */
	struct ibv_qp_cap cap;
};

/* The first device of the list: ctx, port 1's GID 0 and active MTU, a PD. */
void mp_open_dev(struct mp_res *r);
/* the send and the receive CQ */
void mp_create_cqs(struct mp_res *r, int send_cqe, int recv_cqe);
/* @len bytes, page-aligned, filled with @canary, registered with @access */
void mp_reg_buf(struct mp_res *r, size_t len, uint8_t canary, unsigned int access);
/*
 * Until port 1 is ACTIVE, at most until @deadline; the failure names
 * @timeout ("within N s"), or with 0 says "within the timeout".
 */
void mp_wait_port_active(struct mp_res *r, double deadline, unsigned int timeout);
/* AH, QP, SRQ, CQs, MR and buffer (each pointer left NULL) */
void mp_destroy_qp_res(struct mp_res *r);
/* PD and device */
void mp_close_dev(struct mp_res *r);

/*
 * --- leak check: what this process holds, from droce and DPDK ---
 * The device's objects (contexts, PDs, MRs, CQs, SRQs, QPs, AHs) and mbuf
 * pool level (droce.h), and every mempool, memzone and rte_malloc object of
 * the process. Mbufs staged for a port that takes nothing (a peer that died
 * with its receive ring full) are in use but not lost: two levels are the
 * same when everything matches, mbufs in use counted without those.
 */
struct mp_levels {
	uint32_t contexts, pds, mrs, cqs, srqs, qps, ahs;
	uint32_t mbufs_in_use, mbufs_staged;	/* the device's pool */
	uint32_t pools;				/* mempools of the process */
	uint64_t pool_objs_in_use;		/* ... their objects in use, summed */
	uint32_t memzones;
	uint64_t heap_objs, heap_bytes;		/* rte_malloc, every socket */
};

/* The levels now, for the device of @ctx. */
void mp_levels_get(struct ibv_context *ctx, struct mp_levels *l);
/* @l in words */
void mp_levels_str(const struct mp_levels *l, char *buf, size_t len);
/*
 * true if @now is back at @base; else false and the differences in @why.
 * @droce_only: droce's objects and the mempools only, not DPDK's memzones and
 * heap, which a PMD such as memif changes as its peers come and go.
 */
bool mp_levels_same(const struct mp_levels *base, const struct mp_levels *now, bool droce_only,
		    char *why, size_t len);

/* the path MTU: the smaller of ours and the peer's (enum ibv_mtu values) */
enum ibv_mtu mp_path_mtu(enum ibv_mtu mine, uint32_t peer);

/* What differs between the programs' RC QPs. */
struct mp_rc_attr {
	unsigned int access;		/* INIT: qp_access_flags */
	uint8_t rd_atomic;		/* RTR max_dest_rd_atomic, RTS max_rd_atomic */
	uint8_t min_rnr_timer;		/* RTR */
	uint8_t timeout;		/* RTS: local ACK timeout */
	uint8_t retry_cnt, rnr_retry;	/* RTS */
};

/* The peer, from its hello (host byte order). */
struct mp_rc_peer {
	uint32_t qpn, psn;
	enum ibv_mtu path_mtu;
	const uint8_t *gid;		/* 16 bytes */
};

/* An RC QP in RESET to INIT, RTR (port 1, GID index 0, hop limit 64) and RTS. */
void mp_rc_connect(struct ibv_qp *qp, const struct mp_rc_peer *peer, uint32_t my_psn,
		   const struct mp_rc_attr *a);

#endif /* DROCE_TEST_MP_COMMON_H */
