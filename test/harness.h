/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared set-up for tests that drive droce through the verbs API: EAL with
 * two droce devices joined by a net_ring pair (10.0.0.1 <-> 10.0.0.2), and
 * connected QPs. Progress is inline (-l 0) or on an engine lcore (-l 0-1),
 * chosen by the test's command line: "--inline" or "--lcore". With
 * "--impair=<net_impair devargs>" both ports are wrapped by net_impair.
 */
#ifndef DROCE_TEST_HARNESS_H
#define DROCE_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct h_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	union ibv_gid gid;
	int own_pd;
};

struct h_qp_opts {
	enum ibv_qp_type type;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	struct ibv_srq *srq;		/* NULL: the QP has its own RQ */
	int sq_sig_all;
	uint32_t cqe;			/* 0: 256 */
	size_t buf_len;			/* 0: 1 MiB */
	uint32_t psn;			/* starting PSN both ways */
	uint8_t timeout;		/* RC local ACK timeout exponent; 0: 14 (67 ms) */
	bool no_ack_timer;		/* RC: timeout 0, no local ACK timer (IBA 9.7.6.1.3) */
	uint8_t retry_cnt_p1;		/* retry_cnt + 1; 0: 7 */
	uint8_t rnr_retry_p1;		/* rnr_retry + 1; 0: 7 (forever) */
	struct ibv_comp_channel *rchan;	/* completion channel of the receive CQ */
	struct ibv_pd *pd;		/* use this PD instead of a new one */
	int mr_access;			/* extra access flags for the side's MR */
	uint8_t max_rd_atomic;		/* RC: READs/atomics in flight as requester; 0: 1 */
	uint8_t max_dest_rd_atomic;	/* RC: READs/atomics accepted in flight as responder; 0: 1 */
	uint64_t send_ops_flags;	/* non-zero: ibv_create_qp_ex with these send ops */
	uint64_t wc_flags_ex;		/* non-zero: ibv_create_cq_ex with these wc_flags */
};

/* EAL + two devices; returns 0 or -1. @argv may hold --inline / --lcore. */
int h_init(int argc, char **argv);
/*
 * EAL alone, for a test that makes its own devices: the progress mode from
 * @argv ("--inline", the default, or "--lcore"), then h_eal_init with @tag,
 * the mode's lcores and @extra. 0 or -1.
 */
int h_init_eal(int argc, char **argv, const char *tag, const char *const *extra);
bool h_inline(void);
struct ibv_context *h_open(int idx);		/* droce0 / droce1 */

struct droce_test_case;
/* main() of a test on h_init's devices: its cases (droce_test_run), the exit code. */
int h_main(int argc, char **argv, const char *suite, const struct droce_test_case *cases, int n,
	   int (*setup)(void), void (*teardown)(void));
#define H_TEST_MAIN(argc, argv, suite, cases, setup, teardown) \
	h_main((argc), (argv), (suite), (cases), (int)(sizeof(cases) / sizeof((cases)[0])), \
	       (setup), (teardown))

/* PD, MR over a fresh buffer, CQs and a QP in RESET. */
int h_side_create(struct h_side *s, struct ibv_context *ctx, const struct h_qp_opts *o);
void h_side_destroy(struct h_side *s);
/* A side on a context of its own: @d opened, then h_side_create; 0 or -1. */
int h_side_open(struct h_side *s, struct ibv_device *d, const struct h_qp_opts *o);
/* h_side_destroy, then the side's context closed (an h_side_open side) */
void h_side_close(struct h_side *s);
/* RESET -> INIT (UD: Q_Key H_QKEY, else every remote access): ibv_modify_qp's return. */
int h_to_init(struct ibv_qp *qp, enum ibv_qp_type type);
/* RESET -> INIT -> RTR -> RTS against the peer (UD: its QKEY is 0x11111111). */
int h_connect(struct h_side *s, const struct h_side *peer, const struct h_qp_opts *o);
/* Both sides created on droce0/droce1 and connected. */
int h_pair(struct h_side *a, struct h_side *b, const struct h_qp_opts *o);
void h_pair_destroy(struct h_side *a, struct h_side *b);

int h_post_send(struct h_side *s, enum ibv_wr_opcode op, size_t off, uint32_t len,
		uint64_t wr_id, unsigned int flags);
int h_post_recv(struct h_side *s, size_t off, uint32_t len, uint64_t wr_id);
/* Poll @cq until @n completions or @ms milliseconds; returns how many. */
int h_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/* An address handle to the peer's GID (for UD). */
struct ibv_ah *h_ah(struct h_side *s, const struct h_side *peer);
/* The address vector of h_ah and h_connect: the peer's GID, hop limit 64, port 1. */
void h_fill_ah(struct ibv_ah_attr *ah, const struct h_side *peer);
/* The QP's state (ibv_query_qp), IBV_QPS_UNKNOWN if the query fails. */
enum ibv_qp_state h_qp_state(struct ibv_qp *qp);
/*
 * The same, once it is @want or @ms milliseconds have passed: a responder
 * that reports an error in a receive completion moves its QP to ERR just
 * after, on the engine's side.
 */
enum ibv_qp_state h_qp_state_wait(struct ibv_qp *qp, enum ibv_qp_state want, int ms);
/* An extended CQ of @cqe entries whose completions carry tag-matching info. */
struct ibv_cq_ex *h_tm_cq(struct ibv_context *ctx, uint32_t cqe);
/*
 * A tag-matching SRQ on @pd completing on @cq: @max_wr receive WQEs of one
 * SGE (for unexpected messages), @max_tags tags, @max_ops list operations
 * in flight. NULL with errno set.
 */
struct ibv_srq *h_tm_srq(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr, uint32_t max_tags,
			 uint32_t max_ops);

/*
 * rte_eal_init for a test that sets up its own ports: no hugepages, 512 MB,
 * no PCI, no telemetry, a file prefix of @tag and the pid, EAL logging at
 * error, lcores @lcores ("0", "0-1"), then the NULL-terminated @extra.
 * 0 or -1.
 */
int h_eal_init(const char *argv0, const char *tag, const char *lcores, const char *const *extra);

struct rte_mempool;
struct rte_mbuf;
/*
 * @data as a chain of @nseg mbufs from @pool, segment i holding bytes
 * [cut[i], cut[i + 1]) (cut[0] = 0, cut[nseg] = the length); with @skew,
 * segment i gets 2i+1 more bytes of headroom (data not naturally aligned).
 * NULL if the pool runs out.
 */
struct rte_mbuf *h_mbuf_chain(struct rte_mempool *pool, const uint8_t *data, const uint32_t *cut,
			      int nseg, bool skew);

/*
 * The running case's resources: what a case makes or records through these,
 * h_res_release() (its teardown) destroys whatever happened, each object
 * before what it depends on: AHs, QPs (the sides' too), SRQs, MRs, the rest
 * of the sides, CQs, PDs, memory, channels, contexts. A full registry
 * refuses (NULL).
 */
struct ibv_context *h_res_open(int idx);	/* h_open */
/* A side (h_side_create) on @ctx; NULL if @ctx is NULL or creation failed. */
struct h_side *h_res_side(struct ibv_context *ctx, const struct h_qp_opts *o);
/* Two connected sides on droce0 and droce1 (with @loop, both on droce0): 0 or -1. */
int h_res_pair(struct h_side **a, struct h_side **b, const struct h_qp_opts *o, bool loop);
struct ibv_ah *h_res_ah(struct h_side *s, const struct h_side *peer);	/* h_ah */
/* Record an object made otherwise; each returns its argument (NULL: nothing recorded). */
struct ibv_ah *h_res_add_ah(struct ibv_ah *ah);
struct ibv_qp *h_res_add_qp(struct ibv_qp *qp);
struct ibv_mr *h_res_add_mr(struct ibv_mr *mr);
struct ibv_srq *h_res_add_srq(struct ibv_srq *srq);
struct ibv_cq *h_res_add_cq(struct ibv_cq *cq);
struct ibv_pd *h_res_add_pd(struct ibv_pd *pd);
void *h_res_add_mem(void *mem);			/* free()d */
struct ibv_comp_channel *h_res_add_chan(struct ibv_comp_channel *chan);
void h_res_release(void);

/* Small shared helpers */
uint64_t h_now_ms(void);
/* The next async event of @c (its async_fd non-blocking), sleeping on the fd up to @ms: 0 or -1. */
int h_async_event(struct ibv_context *c, struct ibv_async_event *ev, int ms);
/* A device counter by name (droce_dev_xstats), UINT64_MAX if unknown. */
uint64_t h_xstat(const char *dev, const char *name);
/* A QP's counter by name (droce_qp_xstats), UINT64_MAX if unknown. */
uint64_t h_qp_xstat(struct ibv_qp *qp, const char *name);
/* A byte stream that differs for every seed. */
void h_pattern(uint8_t *p, size_t len, uint32_t seed);
/* splitmix64's output function of x + the golden gamma: a well-mixed 64-bit value. */
uint64_t h_mix64(uint64_t x);
/* An ethdev extended counter by name (rte_eth_xstats), UINT64_MAX if unknown. */
uint64_t h_eth_xstat(uint16_t port, const char *name);

#define H_QKEY 0x11111111u

#endif
