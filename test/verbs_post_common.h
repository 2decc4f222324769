/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the test_verbs_post* programs share: an RC pair made for every case,
 * the extra objects a case may make (vp_teardown destroys whatever is set),
 * and helpers that post, expect completions and move QPs between states.
 *
 * Conventions: every receive WR's wr_id is the offset of its buffer in the
 * receiver's registered buffer (so a completion says where its bytes are);
 * sends are taken from below RBASE.
 */
#ifndef DROCE_TEST_VERBS_POST_COMMON_H
#define DROCE_TEST_VERBS_POST_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "harness.h"

#define WAIT_MS		2000	/* for something that must happen */
#define QUIET_MS	150	/* for something that must not */
#define MSG		64	/* bytes of the ordinary test message */
#define SLOT		0x100	/* a small receive buffer */
#define RBASE		0x10000	/* receive buffers from here up */
#define WRITE_OFF	0xf0000	/* RDMA WRITE target in the receiver's buffer */
#define GRH		40
#define ANY_ID		UINT64_MAX
#define ALL_ATTRS	0x1fffff
#define DIM(a)		(sizeof(a) / sizeof((a)[0]))
#define LINK3(w) do { (w)[0].next = &(w)[1]; (w)[1].next = &(w)[2]; (w)[2].next = NULL; } while (0)
#define RTR_RC_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

/* A connected RC pair made by vp_setup() for every case (max_inline 128). */
extern struct h_side a, b;
/* Extras a case may create; vp_teardown() destroys whatever is set. */
extern struct h_side x, y, u, v;
extern struct ibv_srq *srq;
extern struct ibv_ah *ah;
extern struct ibv_mr *xmr;		/* an extra MR on b's buffer */
/* Two extra devices with a 1500-byte ethdev MTU (one case). */
extern struct h_side m, n;
extern struct ibv_device **mlist;
extern bool made_droce2, made_droce3;

/* A byte pattern of seed @s. */
void vp_fill(uint8_t *p, size_t len, uint32_t s);
/* A receive WR over a fresh buffer of @len bytes; wr_id = its offset. */
void vp_mk_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, const struct h_side *r, uint32_t len);
/* Post one receive of @len bytes to r's QP, or to @q. */
int vp_recv1(struct h_side *r, struct ibv_srq *q, uint32_t len, uint64_t *id);
/*
 * A valid signaled SEND of @len bytes at s->buf + @off to r; with @uah the UD
 * fields, otherwise rdma fields aimed at r's WRITE_OFF (for RDMA_WRITE).
 */
void vp_mk_send(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct h_side *s,
		const struct h_side *r, struct ibv_ah *uah, size_t off, uint32_t len);
int vp_send1(struct h_side *s, const struct h_side *r, struct ibv_ah *uah, size_t off,
	     uint32_t len, uint64_t id, unsigned int flags);
/* The next send completion: success, @id, @op. */
int vp_expect_send(struct h_side *s, uint64_t id, enum ibv_wc_opcode op);
/*
 * The next receive completion on r: success, into WR @id (ANY_ID: any), with
 * @len payload bytes (+ @grh) equal to @src in the buffer its wr_id names.
 */
int vp_expect_recv(struct h_side *r, const uint8_t *src, uint32_t len, uint32_t grh, uint64_t id);
/* Nothing completes on @c1 (nor then on @c2) within @ms. */
int vp_expect_none(struct ibv_cq *c1, struct ibv_cq *c2, int ms);
/*
 * The caller set wr[1] (the bad one). wr[0] and wr[2] become valid signaled
 * 64-byte SENDs; r gets three receives. Posting the list must return @err
 * with *bad_wr == &wr[1]; then wr[0] completes on both sides with its bytes
 * and nothing else ever completes (wr[1] and wr[2] were not posted): a
 * SEND of other bytes posted next is the next completion on both sides.
 */
int vp_send_list_check(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
		       struct ibv_send_wr *wr, int err);
/*
 * r's queue (or @q) holds no receive yet. The caller set wr[1] (the bad one,
 * wr_id = a buffer offset); wr[0] and wr[2] become valid receives. Posting
 * must return @err with *bad_wr == &wr[1]. Then s sends two messages: the
 * first lands in wr[0], the second finds no receive (wr[1], wr[2] were not
 * posted) and never completes.
 */
int vp_recv_list_check(struct h_side *s, struct h_side *r, struct ibv_srq *q,
		       struct ibv_recv_wr *wr, int err);
/* Every attribute of @qp (ibv_query_qp of ALL_ATTRS). */
int vp_query(struct ibv_qp *qp, struct ibv_qp_attr *at);
/* Every attribute vp_query reports is the same in @p and @q. */
int vp_same_attrs(const struct ibv_qp_attr *p, const struct ibv_qp_attr *q);
/* RTR (RTR_RC_MASK) and RTS (RTS_RC_MASK) attributes as h_connect sets them, PSNs 0. */
void vp_rtr_attr(struct ibv_qp_attr *at, const struct h_side *peer, enum ibv_mtu mtu);
void vp_rts_attr(struct ibv_qp_attr *at);
/* The transitions of h_connect after h_to_init, one at a time, with a chosen path MTU. */
int vp_to_rtr(struct ibv_qp *qp, enum ibv_qp_type t, const struct h_side *peer, enum ibv_mtu mtu);
int vp_to_rts(struct ibv_qp *qp, enum ibv_qp_type t);
int vp_to_reset(struct ibv_qp *qp);
/* RESET -> INIT -> RTR -> RTS against @peer, PSNs 0. */
int vp_reconnect(struct h_side *s, const struct h_side *peer, enum ibv_qp_type t, enum ibv_mtu mtu);
/* @s on droce0, @r on droce1, connected, of @o's type. */
int vp_extra_pair(struct h_side *s, struct h_side *r, const struct h_qp_opts *o);
/* x (RC, droce0) sends to y (RC, droce1), whose QP takes its receives from srq. */
int vp_srq_pair(uint32_t srq_wr, uint32_t srq_sge);
/* Every case: a and b; vp_teardown destroys them and whatever extras are set. */
int vp_setup(void);
void vp_teardown(void);

#endif /* DROCE_TEST_VERBS_POST_COMMON_H */
