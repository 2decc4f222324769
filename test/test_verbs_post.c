/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs facade's post-time and control-path semantics, checked through
 * the public API against the man pages (ibv_post_send, ibv_post_recv,
 * ibv_post_srq_recv, ibv_modify_qp, ibv_create_*, ibv_query_*):
 *  - every post-time error: exact return value and *bad_wr; the WRs before
 *    the bad one were posted (they complete, their bytes arrive), the bad one
 *    and all after it were not (they never complete, never arrive);
 *  - IBV_SEND_INLINE copies at post time and ignores the lkey;
 *  - ibv_modify_qp: a rejected modify changes nothing, RESET discards WRs;
 *  - create-time limits and the device/port/GID/P_Key queries.
 *
 * Conventions: every receive WR's wr_id is the offset of its buffer in the
 * receiver's registered buffer (so a completion says where its bytes are);
 * sends are taken from below RBASE.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
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

/* A connected RC pair made by setup() for every case (max_inline 128). */
static struct h_side a, b;
static const struct h_qp_opts rc_opts = { .type = IBV_QPT_RC, .max_inline = 128 };
/* Extras a case may create; teardown() destroys whatever is set. */
static struct h_side x, y, u, v;
static struct ibv_srq *srq;
static struct ibv_ah *ah;
static struct ibv_mr *xmr;		/* an extra MR on b's buffer */
/* Two extra devices with a 1500-byte ethdev MTU (one case). */
static struct h_side m, n;
static struct ibv_device **mlist;
static bool made_droce2, made_droce3;

static size_t rnext;		/* next free receive buffer offset */
static uint32_t seq;		/* message counter: patterns and wr_ids */

/* --- helpers --- */

static void
fill(uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(s * 131u + i * 7u + (i >> 8) + 1u);
}

static size_t
ralloc(uint32_t len)
{
	size_t off = rnext;

	rnext += (len + SLOT - 1) & ~(size_t)(SLOT - 1);
	return off;
}

/* A receive WR over a fresh buffer of @len bytes; wr_id = its offset. */
static void
mk_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, const struct h_side *r, uint32_t len)
{
	size_t off = ralloc(len);

	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)r->buf + off;
	sge->length = len;
	sge->lkey = r->mr->lkey;
	wr->wr_id = off;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* Post one receive of @len bytes to r's QP, or to @q. */
static int
recv1(struct h_side *r, struct ibv_srq *q, uint32_t len, uint64_t *id)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	mk_recv(&wr, &sge, r, len);
	ret = q ? ibv_post_srq_recv(q, &wr, &bad) : ibv_post_recv(r->qp, &wr, &bad);
	TEST_ASSERT_EQ(ret, 0);
	if (id)
		*id = wr.wr_id;
	return 0;
}

/*
 * A valid signaled SEND of @len bytes at s->buf + @off to r; with @uah the UD
 * fields, otherwise rdma fields aimed at r's WRITE_OFF (for RDMA_WRITE).
 */
static void
mk_send(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct h_side *s,
	const struct h_side *r, struct ibv_ah *uah, size_t off, uint32_t len)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)s->buf + off;
	sge->length = len;
	sge->lkey = s->mr->lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (uah) {
		wr->wr.ud.ah = uah;
		wr->wr.ud.remote_qpn = r->qp->qp_num;
		wr->wr.ud.remote_qkey = H_QKEY;
	} else {
		wr->wr.rdma.remote_addr = (uintptr_t)r->buf + WRITE_OFF;
		wr->wr.rdma.rkey = r->mr->rkey;
	}
}

static int
send1(struct h_side *s, const struct h_side *r, struct ibv_ah *uah, size_t off,
      uint32_t len, uint64_t id, unsigned int flags)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;

	mk_send(&wr, &sge, s, r, uah, off, len);
	wr.wr_id = id;
	wr.send_flags = flags;
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	return 0;
}

/* The next send completion: success, @id, @op. */
static int
expect_send(struct h_side *s, uint64_t id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(s->scq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "wr_id %#" PRIx64 ": %s", wc.wr_id,
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.wr_id, id);
	TEST_ASSERT_EQ(wc.opcode, op);
	TEST_ASSERT_EQ(wc.qp_num, s->qp->qp_num);
	return 0;
}

/*
 * The next receive completion on r: success, into WR @id (ANY_ID: any), with
 * @len payload bytes (+ @grh) equal to @src in the buffer its wr_id names.
 */
static int
expect_recv(struct h_side *r, const uint8_t *src, uint32_t len, uint32_t grh, uint64_t id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(r->rcq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "wr_id %#" PRIx64 ": %s", wc.wr_id,
		    ibv_wc_status_str(wc.status));
	if (id != ANY_ID)
		TEST_ASSERT_EQ(wc.wr_id, id);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, len + grh);
	TEST_ASSERT_EQ(wc.qp_num, r->qp->qp_num);
	TEST_ASSERT(wc.wr_id >= RBASE && wc.wr_id + grh + len <= WRITE_OFF,
		    "wr_id %#" PRIx64 " is no receive buffer of this test", wc.wr_id);
	TEST_ASSERT(memcmp(r->buf + wc.wr_id + grh, src, len) == 0,
		    "payload of wr_id %#" PRIx64 " differs", wc.wr_id);
	return 0;
}

/* Nothing completes on @c1 (nor then on @c2) within @ms. */
static int
expect_none(struct ibv_cq *c1, struct ibv_cq *c2, int ms)
{
	struct ibv_wc wc[4];
	int k;

	k = h_poll(c1, wc, 4, ms);
	TEST_ASSERT(k == 0, "%d unexpected completion(s), first wr_id %#" PRIx64 " %s", k,
		    k > 0 ? wc[0].wr_id : 0, k > 0 ? ibv_wc_status_str(wc[0].status) : "");
	if (c2) {
		k = h_poll(c2, wc, 4, 1);
		TEST_ASSERT(k == 0, "%d unexpected completion(s), first wr_id %#" PRIx64 " %s", k,
			    k > 0 ? wc[0].wr_id : 0, k > 0 ? ibv_wc_status_str(wc[0].status) : "");
	}
	return 0;
}

/*
 * The caller set wr[1] (the bad one). wr[0] and wr[2] become valid signaled
 * 64-byte SENDs; r gets three receives. Posting the list must return @err
 * with *bad_wr == &wr[1]; then wr[0] completes on both sides with its bytes
 * and nothing else ever completes (wr[1] and wr[2] were not posted).
 */
static int
send_list_check(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
		struct ibv_send_wr *wr, int err)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_sge sg0, sg2;
	uint32_t grh = uah ? GRH : 0;
	uint32_t k = seq++;
	size_t soff = (k % 16) * SLOT;

	fill(s->buf + soff, MSG, k);
	for (int i = 0; i < 3; i++)
		CHECK(recv1(r, NULL, SLOT, NULL));
	mk_send(&wr[0], &sg0, s, r, uah, soff, MSG);
	mk_send(&wr[2], &sg2, s, r, uah, soff, MSG);
	wr[0].wr_id = 0x1000 + k;
	wr[1].wr_id = 0x2000 + k;
	wr[2].wr_id = 0x3000 + k;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2].next = NULL;
	TEST_ASSERT_EQ(ibv_post_send(s->qp, wr, &bad), err);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	CHECK(expect_send(s, wr[0].wr_id, IBV_WC_SEND));
	CHECK(expect_recv(r, s->buf + soff, MSG, grh, ANY_ID));
	CHECK(expect_none(s->scq, r->rcq, QUIET_MS));
	return 0;
}

/*
 * r's queue (or @q) holds no receive yet. The caller set wr[1] (the bad one,
 * wr_id = a buffer offset); wr[0] and wr[2] become valid receives. Posting
 * must return @err with *bad_wr == &wr[1]. Then s sends two messages: the
 * first lands in wr[0], the second finds no receive (wr[1], wr[2] were not
 * posted) and never completes.
 */
static int
recv_list_check(struct h_side *s, struct h_side *r, struct ibv_srq *q,
		struct ibv_recv_wr *wr, int err)
{
	struct ibv_recv_wr *bad = NULL;
	struct ibv_sge sg0, sg2;
	uint32_t k = seq++;
	int ret;

	fill(s->buf, MSG, k);
	fill(s->buf + SLOT, MSG, k + 1000);
	mk_recv(&wr[0], &sg0, r, SLOT);
	mk_recv(&wr[2], &sg2, r, SLOT);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2].next = NULL;
	ret = q ? ibv_post_srq_recv(q, wr, &bad) : ibv_post_recv(r->qp, wr, &bad);
	TEST_ASSERT_EQ(ret, err);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	CHECK(send1(s, r, NULL, 0, MSG, 0xa000 + k, IBV_SEND_SIGNALED));
	CHECK(expect_send(s, 0xa000 + k, IBV_WC_SEND));
	CHECK(expect_recv(r, s->buf, MSG, 0, wr[0].wr_id));
	CHECK(send1(s, r, NULL, SLOT, MSG, 0xb000 + k, IBV_SEND_SIGNALED));
	CHECK(expect_none(r->rcq, s->scq, QUIET_MS));
	return 0;
}

static int
query(struct ibv_qp *qp, struct ibv_qp_attr *at)
{
	struct ibv_qp_init_attr ia;

	memset(at, 0, sizeof(*at));
	TEST_ASSERT_EQ(ibv_query_qp(qp, at, ALL_ATTRS, &ia), 0);
	return 0;
}

static enum ibv_qp_state
qstate(struct ibv_qp *qp)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &at, IBV_QP_STATE, &ia) != 0)
		return IBV_QPS_UNKNOWN;
	return at.qp_state;
}

static int
same_attrs(const struct ibv_qp_attr *p, const struct ibv_qp_attr *q)
{
#define SAME(f) TEST_ASSERT_EQ(q->f, p->f)
	SAME(qp_state);
	SAME(path_mtu);
	SAME(qkey);
	SAME(rq_psn);
	SAME(sq_psn);
	SAME(dest_qp_num);
	SAME(qp_access_flags);
	SAME(cap.max_send_wr);
	SAME(cap.max_recv_wr);
	SAME(cap.max_send_sge);
	SAME(cap.max_recv_sge);
	SAME(cap.max_inline_data);
	SAME(ah_attr.is_global);
	SAME(ah_attr.port_num);
	SAME(ah_attr.grh.hop_limit);
	SAME(pkey_index);
	SAME(max_rd_atomic);
	SAME(max_dest_rd_atomic);
	SAME(min_rnr_timer);
	SAME(port_num);
	SAME(timeout);
	SAME(retry_cnt);
	SAME(rnr_retry);
#undef SAME
	TEST_ASSERT(memcmp(p->ah_attr.grh.dgid.raw, q->ah_attr.grh.dgid.raw, 16) == 0,
		    "ah_attr.grh.dgid changed");
	return 0;
}

/* The transitions of h_connect, one at a time, with a chosen path MTU. */
static int
to_init(struct ibv_qp *qp, enum ibv_qp_type t)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (t == IBV_QPT_UD) {
		at.qkey = H_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &at, mask);
}

static void
fill_av(struct ibv_ah_attr *av, const struct h_side *peer)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->grh.dgid = peer->gid;
	av->grh.hop_limit = 64;
	av->port_num = 1;
}

#define RTR_RC_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

static void
rtr_attr(struct ibv_qp_attr *at, const struct h_side *peer, enum ibv_mtu mtu)
{
	memset(at, 0, sizeof(*at));
	at->qp_state = IBV_QPS_RTR;
	at->path_mtu = mtu;
	at->dest_qp_num = peer->qp->qp_num;
	at->rq_psn = 0;
	at->max_dest_rd_atomic = 1;
	at->min_rnr_timer = 1;
	fill_av(&at->ah_attr, peer);
}

static void
rts_attr(struct ibv_qp_attr *at)
{
	memset(at, 0, sizeof(*at));
	at->qp_state = IBV_QPS_RTS;
	at->sq_psn = 0;
	at->timeout = 14;
	at->retry_cnt = 7;
	at->rnr_retry = 7;
	at->max_rd_atomic = 1;
}

static int
to_rtr(struct ibv_qp *qp, enum ibv_qp_type t, const struct h_side *peer, enum ibv_mtu mtu)
{
	struct ibv_qp_attr at;

	rtr_attr(&at, peer, mtu);
	if (t == IBV_QPT_UD)
		return ibv_modify_qp(qp, &at, IBV_QP_STATE);
	if (t == IBV_QPT_UC)
		return ibv_modify_qp(qp, &at, RTR_RC_MASK &
				     ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	return ibv_modify_qp(qp, &at, RTR_RC_MASK);
}

static int
to_rts(struct ibv_qp *qp, enum ibv_qp_type t)
{
	struct ibv_qp_attr at;

	rts_attr(&at);
	return ibv_modify_qp(qp, &at, t == IBV_QPT_RC ? RTS_RC_MASK :
			     IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int
to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &at, IBV_QP_STATE);
}

/* RESET -> INIT -> RTR -> RTS against @peer, PSNs 0. */
static int
reconnect(struct h_side *s, const struct h_side *peer, enum ibv_qp_type t, enum ibv_mtu mtu)
{
	TEST_ASSERT_EQ(to_reset(s->qp), 0);
	TEST_ASSERT_EQ(to_init(s->qp, t), 0);
	TEST_ASSERT_EQ(to_rtr(s->qp, t, peer, mtu), 0);
	TEST_ASSERT_EQ(to_rts(s->qp, t), 0);
	return 0;
}

/* x on droce0, y on droce1, connected, of @o's type. */
static int
extra_pair(struct h_side *s, struct h_side *r, const struct h_qp_opts *o)
{
	TEST_ASSERT_EQ(h_pair(s, r, o), 0);
	return 0;
}

/* x (RC, droce0) sends to y (RC, droce1) whose QP takes receives from srq. */
static int
srq_pair(uint32_t srq_wr, uint32_t srq_sge)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = srq_wr, .max_sge = srq_sge } };
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_context *c0 = h_open(0), *c1 = h_open(1);

	x.ctx = c0;
	y.ctx = c1;
	TEST_ASSERT(c0 != NULL && c1 != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, c0, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&y, c1, &o), 0);
	srq = ibv_create_srq(y.pd, &sa);
	TEST_ASSERT(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_qp(y.qp), 0);
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = y.scq;
	qa.recv_cq = y.rcq;
	qa.srq = srq;
	qa.cap.max_send_wr = 64;
	qa.cap.max_send_sge = 4;
	y.qp = ibv_create_qp(y.pd, &qa);
	TEST_ASSERT(y.qp != NULL, "ibv_create_qp with srq: %s", strerror(errno));
	TEST_ASSERT_EQ(h_connect(&x, &y, &o), 0);
	TEST_ASSERT_EQ(h_connect(&y, &x, &o), 0);
	return 0;
}

/* --- setup / teardown --- */

static int
setup(void)
{
	rnext = RBASE;
	return h_pair(&a, &b, &rc_opts);
}

static void
destroy_qp(struct h_side *s)
{
	if (s->qp) {
		ibv_destroy_qp(s->qp);
		s->qp = NULL;
	}
}

static void
teardown(void)
{
	if (ah)
		ibv_destroy_ah(ah);
	ah = NULL;
	if (xmr)
		ibv_dereg_mr(xmr);
	xmr = NULL;
	destroy_qp(&x);
	destroy_qp(&y);
	if (srq)
		ibv_destroy_srq(srq);
	srq = NULL;
	h_pair_destroy(&x, &y);
	h_pair_destroy(&u, &v);
	h_pair_destroy(&m, &n);
	if (mlist)
		ibv_free_device_list(mlist);
	mlist = NULL;
	if (made_droce2)
		droce_dev_destroy("droce2");
	if (made_droce3)
		droce_dev_destroy("droce3");
	made_droce2 = made_droce3 = false;
	h_pair_destroy(&a, &b);
}

/* --- devices and queries --- */

static int
test_device_list_is_exactly_droce0_droce1(void)
{
	char n0[64] = "", n1[64] = "";
	bool term = false;
	int num = -1;
	struct ibv_device **l = ibv_get_device_list(&num);

	TEST_ASSERT(l != NULL, "ibv_get_device_list: %s", strerror(errno));
	if (num == 2) {
		snprintf(n0, sizeof(n0), "%s", ibv_get_device_name(l[0]));
		snprintf(n1, sizeof(n1), "%s", ibv_get_device_name(l[1]));
		term = l[2] == NULL;
	}
	ibv_free_device_list(l);
	TEST_ASSERT_EQ(num, 2);
	TEST_ASSERT(strcmp(n0, "droce0") == 0, "device 0 is \"%s\"", n0);
	TEST_ASSERT(strcmp(n1, "droce1") == 0, "device 1 is \"%s\"", n1);
	TEST_ASSERT(term, "the list is not NULL-terminated");
	return 0;
}

static int
test_query_device_limits_equal_config(void)
{
	struct ibv_device_attr d;

	memset(&d, 0xa5, sizeof(d));
	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	TEST_ASSERT_EQ(d.max_qp, DROCE_MAX_QP);
	TEST_ASSERT_EQ(d.max_qp_wr, DROCE_MAX_QP_WR);
	TEST_ASSERT_EQ(d.max_sge, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_sge_rd, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_cq, DROCE_MAX_CQ);
	TEST_ASSERT_EQ(d.max_cqe, DROCE_MAX_CQE);
	/* MR index 0 is never used (keys are index << 8), so one fewer */
	TEST_ASSERT_EQ(d.max_mr, DROCE_MAX_MR - 1);
	TEST_ASSERT_EQ(d.max_mr_size, DROCE_MAX_MR_SIZE);
	TEST_ASSERT_EQ(d.max_pd, DROCE_MAX_PD);
	TEST_ASSERT_EQ(d.max_ah, DROCE_MAX_AH);
	TEST_ASSERT_EQ(d.max_srq, DROCE_MAX_SRQ);
	TEST_ASSERT_EQ(d.max_srq_wr, DROCE_MAX_SRQ_WR);
	TEST_ASSERT_EQ(d.max_srq_sge, DROCE_MAX_SGE);
	TEST_ASSERT_EQ(d.max_qp_rd_atom, DROCE_MAX_RD_ATOMIC);
	TEST_ASSERT_EQ(d.max_qp_init_rd_atom, DROCE_MAX_RD_ATOMIC);
	TEST_ASSERT_EQ(d.max_pkeys, DROCE_PKEY_TBL_LEN);
	TEST_ASSERT_EQ(d.vendor_id, DROCE_VENDOR_ID);
	TEST_ASSERT_EQ(d.vendor_part_id, DROCE_VENDOR_PART_ID);
	TEST_ASSERT_EQ(d.phys_port_cnt, 1);
	/* NONE while atomics are not implemented; droce's CPU atomics are HCA-wide */
	TEST_ASSERT(d.atomic_cap == IBV_ATOMIC_NONE || d.atomic_cap == IBV_ATOMIC_HCA,
		    "atomic_cap %d", d.atomic_cap);
	return 0;
}

static int
test_query_port_ethernet_active_mtu4096_one_gid(void)
{
	struct ibv_context *ctx[2] = { a.ctx, b.ctx };
	struct ibv_port_attr p;

	for (int i = 0; i < 2; i++) {
		memset(&p, 0xa5, sizeof(p));
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 1, &p), 0);
		TEST_ASSERT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
		TEST_ASSERT_EQ(p.state, IBV_PORT_ACTIVE);
		TEST_ASSERT_EQ(p.active_mtu, IBV_MTU_4096);
		TEST_ASSERT_EQ(p.max_mtu, IBV_MTU_4096);
		TEST_ASSERT_EQ(p.gid_tbl_len, 1);
		TEST_ASSERT_EQ(p.pkey_tbl_len, DROCE_PKEY_TBL_LEN);
		TEST_ASSERT_EQ(p.max_msg_sz, DROCE_MAX_MSG);
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 2, &p), EINVAL);
		TEST_ASSERT_EQ(ibv_query_port(ctx[i], 0, &p), EINVAL);
	}
	return 0;
}

static int
test_query_gid_index0_is_v4mapped_ip_index1_fails(void)
{
	static const uint8_t g0[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 };
	static const uint8_t g1[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 };
	union ibv_gid g;

	memset(&g, 0xa5, sizeof(g));
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, 0, &g), 0);
	TEST_ASSERT(memcmp(g.raw, g0, 16) == 0, "droce0 GID 0 is not ::ffff:10.0.0.1");
	memset(&g, 0xa5, sizeof(g));
	TEST_ASSERT_EQ(ibv_query_gid(b.ctx, 1, 0, &g), 0);
	TEST_ASSERT(memcmp(g.raw, g1, 16) == 0, "droce1 GID 0 is not ::ffff:10.0.0.2");
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 1, 1, &g), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_gid(a.ctx, 2, 0, &g), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	return 0;
}

static int
test_query_pkey_index0_is_ffff_index1_fails(void)
{
	__be16 pk = 0;

	TEST_ASSERT_EQ(ibv_query_pkey(a.ctx, 1, 0, &pk), 0);
	TEST_ASSERT_EQ(pk, htons(0xffff));
	errno = 0;
	TEST_ASSERT_EQ(ibv_query_pkey(a.ctx, 1, 1, &pk), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	return 0;
}

static int
test_query_gid_ex_reports_roce_v2(void)
{
	struct ibv_gid_entry e;
	union ibv_gid g;

	TEST_ASSERT_EQ(ibv_query_gid(b.ctx, 1, 0, &g), 0);
	memset(&e, 0xa5, sizeof(e));
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 0, &e, 0), 0);
	TEST_ASSERT_EQ(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	TEST_ASSERT(memcmp(e.gid.raw, g.raw, 16) == 0, "GID differs from ibv_query_gid's");
	TEST_ASSERT_EQ(e.gid_index, 0);
	TEST_ASSERT_EQ(e.port_num, 1);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 1, &e, 0), EINVAL);
	TEST_ASSERT_EQ(ibv_query_gid_ex(b.ctx, 1, 0, &e, 1), EINVAL);
	return 0;
}

/* --- create-time limits --- */

static struct ibv_qp_init_attr
small_qp(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	return qa;
}

#define EXPECT_QP_FAILS(qa, err) do { \
	struct ibv_qp *_q; \
	errno = 0; \
	_q = ibv_create_qp(a.pd, &(qa)); \
	if (_q) \
		ibv_destroy_qp(_q); \
	TEST_ASSERT(_q == NULL, "ibv_create_qp succeeded"); \
	TEST_ASSERT_EQ(errno, err); \
} while (0)

static int
test_create_qp_over_device_limits_einval(void)
{
	struct ibv_device_attr d;
	struct ibv_qp_init_attr qa;
	struct ibv_qp *q;

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	qa = small_qp();
	qa.cap.max_send_wr = d.max_qp_wr + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_recv_wr = d.max_qp_wr + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_send_sge = d.max_sge + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_recv_sge = d.max_sge + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.cap.max_inline_data = DROCE_MAX_INLINE + 1;
	EXPECT_QP_FAILS(qa, EINVAL);
	qa = small_qp();
	qa.send_cq = NULL;
	EXPECT_QP_FAILS(qa, EINVAL);

	/* exactly at every limit: created, and the caps reported back */
	qa = small_qp();
	qa.cap.max_send_wr = d.max_qp_wr;
	qa.cap.max_recv_wr = d.max_qp_wr;
	qa.cap.max_send_sge = d.max_sge;
	qa.cap.max_recv_sge = d.max_sge;
	qa.cap.max_inline_data = DROCE_MAX_INLINE;
	q = ibv_create_qp(a.pd, &qa);
	TEST_ASSERT(q != NULL, "ibv_create_qp at the limits: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_qp(q), 0);
	TEST_ASSERT(qa.cap.max_send_wr >= (uint32_t)d.max_qp_wr, "max_send_wr %u", qa.cap.max_send_wr);
	TEST_ASSERT(qa.cap.max_inline_data >= DROCE_MAX_INLINE, "max_inline %u",
		    qa.cap.max_inline_data);
	return 0;
}

static int
test_create_qp_unsupported_type_eopnotsupp(void)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER,
	};
	struct ibv_qp_init_attr qa;

	for (size_t i = 0; i < DIM(types); i++) {
		qa = small_qp();
		qa.qp_type = types[i];
		EXPECT_QP_FAILS(qa, EOPNOTSUPP);
	}
	return 0;
}

static int
test_create_cq_cqe_out_of_range_einval(void)
{
	static const int bad[] = { 0, -1, DROCE_MAX_CQE + 1 };
	struct ibv_cq *cq;

	for (size_t i = 0; i < DIM(bad); i++) {
		errno = 0;
		cq = ibv_create_cq(a.ctx, bad[i], NULL, NULL, 0);
		if (cq)
			ibv_destroy_cq(cq);
		TEST_ASSERT(cq == NULL, "ibv_create_cq(cqe %d) succeeded", bad[i]);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	errno = 0;
	cq = ibv_create_cq(a.ctx, 1, NULL, NULL, 1);	/* comp_vector >= num_comp_vectors */
	if (cq)
		ibv_destroy_cq(cq);
	TEST_ASSERT(cq == NULL, "ibv_create_cq(comp_vector 1) succeeded");
	TEST_ASSERT_EQ(errno, EINVAL);
	/* the bounds themselves are fine */
	cq = ibv_create_cq(a.ctx, 1, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq(1): %s", strerror(errno));
	TEST_ASSERT(cq->cqe >= 1, "cqe %d", cq->cqe);
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	cq = ibv_create_cq(a.ctx, DROCE_MAX_CQE, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "ibv_create_cq(max_cqe): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_cq(cq), 0);
	return 0;
}

static int
test_reg_mr_remote_write_needs_local_write_einval(void)
{
	static const int bad[] = {
		IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_mr *mr;

	for (size_t i = 0; i < DIM(bad); i++) {
		errno = 0;
		mr = ibv_reg_mr(a.pd, a.buf, 4096, bad[i]);
		if (mr)
			ibv_dereg_mr(mr);
		TEST_ASSERT(mr == NULL, "ibv_reg_mr(access %#x) succeeded", bad[i]);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	mr = ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT(mr != NULL, "REMOTE_READ alone: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(a.pd, a.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	TEST_ASSERT(mr != NULL, "LOCAL_WRITE|REMOTE_WRITE: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return 0;
}

static int
test_create_srq_over_limits_einval(void)
{
	struct ibv_device_attr d;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *s;
	struct {
		uint32_t wr, sge;
	} bad[3];

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	bad[0].wr = d.max_srq_wr + 1;
	bad[0].sge = 1;
	bad[1].wr = 0;
	bad[1].sge = 1;
	bad[2].wr = 16;
	bad[2].sge = d.max_srq_sge + 1;
	for (size_t i = 0; i < DIM(bad); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.attr.max_wr = bad[i].wr;
		sa.attr.max_sge = bad[i].sge;
		errno = 0;
		s = ibv_create_srq(a.pd, &sa);
		if (s)
			ibv_destroy_srq(s);
		TEST_ASSERT(s == NULL, "ibv_create_srq(max_wr %u max_sge %u) succeeded",
			    bad[i].wr, bad[i].sge);
		TEST_ASSERT_EQ(errno, EINVAL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = d.max_srq_wr;
	sa.attr.max_sge = d.max_srq_sge;
	s = ibv_create_srq(a.pd, &sa);
	TEST_ASSERT(s != NULL, "ibv_create_srq at the limits: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_destroy_srq(s), 0);
	return 0;
}

static int
test_modify_srq_limit_above_max_wr_einval(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr at;

	srq = ibv_create_srq(a.pd, &sa);
	TEST_ASSERT(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.max_wr, 16);
	TEST_ASSERT_EQ(at.srq_limit, 0);
	at.srq_limit = at.max_wr + 1;
	TEST_ASSERT_EQ(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), EINVAL);
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.srq_limit, 0);		/* unchanged */
	at.srq_limit = 8;
	TEST_ASSERT_EQ(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), 0);
	memset(&at, 0, sizeof(at));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &at), 0);
	TEST_ASSERT_EQ(at.srq_limit, 8);
	return 0;
}

/* --- post: queue full --- */

static int
test_post_send_sq_full_enomem_bad_is_2nd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = 4 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;
	uint64_t rid[5];

	CHECK(extra_pair(&x, &y, &o));
	CHECK(query(x.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_send_wr, 4);
	fill(x.buf, 4 * SLOT, 77);
	/* y has no receive: every SEND is RNR-NAKed and keeps its SQ slot */
	for (int i = 0; i < 3; i++)
		CHECK(send1(&x, &y, NULL, i * SLOT, MSG, 0x10 + i, IBV_SEND_SIGNALED));
	CHECK(expect_none(x.scq, NULL, 50));
	for (int i = 0; i < 3; i++) {
		mk_send(&wr[i], &sg[i], &x, &y, NULL, 3 * SLOT, MSG);
		wr[i].wr_id = 0x20 + i;
	}
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_send(x.qp, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	/* now receives: the 3 + wr[0] go through, in order; wr[1], wr[2] never */
	for (int i = 0; i < 5; i++)
		CHECK(recv1(&y, NULL, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		CHECK(expect_send(&x, 0x10 + i, IBV_WC_SEND));
	CHECK(expect_send(&x, 0x20, IBV_WC_SEND));
	for (int i = 0; i < 4; i++)
		CHECK(expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(expect_none(x.scq, y.rcq, QUIET_MS));
	return 0;
}

static int
test_post_recv_rq_full_enomem_bad_is_2nd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_recv_wr = 4 };
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;
	uint64_t rid[3];

	CHECK(extra_pair(&x, &y, &o));
	CHECK(query(y.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_recv_wr, 4);
	for (int i = 0; i < 3; i++)
		CHECK(recv1(&y, NULL, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(y.qp, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	fill(x.buf, 5 * SLOT, 78);
	for (int i = 0; i < 5; i++)
		CHECK(send1(&x, &y, NULL, i * SLOT, MSG, 0x30 + i, IBV_SEND_SIGNALED));
	for (int i = 0; i < 3; i++)
		CHECK(expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(expect_recv(&y, x.buf + 3 * SLOT, MSG, 0, wr[0].wr_id));
	for (int i = 0; i < 4; i++)
		CHECK(expect_send(&x, 0x30 + i, IBV_WC_SEND));
	/* the 5th message has no receive: RNR forever, no completion anywhere */
	CHECK(expect_none(y.rcq, x.scq, QUIET_MS));
	return 0;
}

static int
test_post_srq_recv_full_enomem_bad_is_2nd(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_srq_attr sat;
	uint64_t rid[3];

	CHECK(srq_pair(4, 1));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &sat), 0);
	TEST_ASSERT_EQ(sat.max_wr, 4);
	for (int i = 0; i < 3; i++)
		CHECK(recv1(&y, srq, SLOT, &rid[i]));
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_srq_recv(srq, wr, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	fill(x.buf, 5 * SLOT, 79);
	for (int i = 0; i < 5; i++)
		CHECK(send1(&x, &y, NULL, i * SLOT, MSG, 0x40 + i, IBV_SEND_SIGNALED));
	for (int i = 0; i < 3; i++)
		CHECK(expect_recv(&y, x.buf + i * SLOT, MSG, 0, rid[i]));
	CHECK(expect_recv(&y, x.buf + 3 * SLOT, MSG, 0, wr[0].wr_id));
	for (int i = 0; i < 4; i++)
		CHECK(expect_send(&x, 0x40 + i, IBV_WC_SEND));
	CHECK(expect_none(y.rcq, x.scq, QUIET_MS));
	return 0;
}

/* --- post: num_sge --- */

static int
test_post_send_num_sge_over_max_einval(void)
{
	static const int bad_n[] = { 5, DROCE_MAX_SGE + 1, -1 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[DROCE_MAX_SGE + 1];
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(query(a.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_send_sge, 4);	/* as created: bad_n[0] is one more */
	for (int i = 0; i < DROCE_MAX_SGE + 1; i++) {
		sg[i].addr = (uintptr_t)a.buf + 0x8000 + i * 16;
		sg[i].length = 16;
		sg[i].lkey = a.mr->lkey;
	}
	for (size_t i = 0; i < DIM(bad_n); i++) {
		memset(&wr[1], 0, sizeof(wr[1]));
		wr[1].opcode = IBV_WR_SEND;
		wr[1].send_flags = IBV_SEND_SIGNALED;
		wr[1].sg_list = sg;
		wr[1].num_sge = bad_n[i];
		CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	}
	/* max_send_sge SGEs are fine, and gathered in order */
	fill(a.buf + 0x8000, 64, 80);
	CHECK(recv1(&b, NULL, SLOT, &rid));
	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].wr_id = 0x50;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].sg_list = sg;
	wr[0].num_sge = 4;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr[0], &bad), 0);
	CHECK(expect_send(&a, 0x50, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf + 0x8000, 64, 0, ANY_ID));	/* earlier rows left receives */
	return 0;
}

static int
test_post_recv_num_sge_over_max_einval(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_recv_sge = 2 };
	struct ibv_recv_wr wr[3];
	struct ibv_sge sg[3];
	struct ibv_qp_attr at;

	CHECK(extra_pair(&x, &y, &o));
	CHECK(query(y.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_recv_sge, 2);
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[1], &sg[i], &y, SLOT);	/* three SGEs: sg[0..2] */
	wr[1].wr_id = sg[0].addr - (uintptr_t)y.buf;
	wr[1].sg_list = sg;
	wr[1].num_sge = 3;
	CHECK(recv_list_check(&x, &y, NULL, wr, EINVAL));
	return 0;
}

static int
test_post_srq_recv_num_sge_over_max_einval(void)
{
	struct ibv_recv_wr wr[3];
	struct ibv_sge sg[3];
	struct ibv_srq_attr sat;

	CHECK(srq_pair(16, 2));
	TEST_ASSERT_EQ(ibv_query_srq(srq, &sat), 0);
	TEST_ASSERT_EQ(sat.max_sge, 2);
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[1], &sg[i], &y, SLOT);
	wr[1].wr_id = sg[0].addr - (uintptr_t)y.buf;
	wr[1].sg_list = sg;
	wr[1].num_sge = 3;
	CHECK(recv_list_check(&x, &y, srq, wr, EINVAL));
	return 0;
}

/* --- post: receive queue state and SRQ --- */

static int
test_post_recv_on_srq_qp_einval_bad_is_1st(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	uint64_t rid;

	CHECK(srq_pair(16, 1));
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[i], &sg[i], &y, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(y.qp, wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	/* none of them went anywhere: a message finds no receive ... */
	fill(x.buf, MSG, 81);
	CHECK(send1(&x, &y, NULL, 0, MSG, 0x60, IBV_SEND_SIGNALED));
	CHECK(expect_none(y.rcq, x.scq, QUIET_MS));
	/* ... until one is posted to the SRQ */
	CHECK(recv1(&y, srq, SLOT, &rid));
	CHECK(expect_recv(&y, x.buf, MSG, 0, rid));
	CHECK(expect_send(&x, 0x60, IBV_WC_SEND));
	return 0;
}

static int
test_post_recv_in_reset_einval_bad_is_1st(void)
{
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3];
	uint64_t rid;

	TEST_ASSERT_EQ(to_reset(b.qp), 0);
	TEST_ASSERT_EQ(qstate(b.qp), IBV_QPS_RESET);
	for (int i = 0; i < 3; i++)
		mk_recv(&wr[i], &sg[i], &b, SLOT);
	LINK3(wr);
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	CHECK(reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_1024));
	/* nothing was posted: a message waits (RNR) until a receive is posted */
	fill(a.buf, MSG, 82);
	CHECK(send1(&a, &b, NULL, 0, MSG, 0x61, IBV_SEND_SIGNALED));
	CHECK(expect_none(b.rcq, a.scq, QUIET_MS));
	CHECK(recv1(&b, NULL, SLOT, &rid));
	CHECK(expect_recv(&b, a.buf, MSG, 0, rid));
	CHECK(expect_send(&a, 0x61, IBV_WC_SEND));
	return 0;
}

static int
test_post_send_before_rts_einval_bad_is_1st(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sg[3];
	uint64_t rid;

	x.ctx = h_open(0);
	y.ctx = h_open(1);
	TEST_ASSERT(x.ctx != NULL && y.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&y, y.ctx, &o), 0);
	fill(x.buf, MSG, 83);
	for (int i = 0; i < 3; i++) {
		mk_send(&wr[i], &sg[i], &x, &y, NULL, 0, MSG);
		wr[i].wr_id = 0x70 + i;
	}
	LINK3(wr);
	for (int step = 0; step < 3; step++) {
		/* step 0: RESET, 1: INIT, 2: RTR */
		if (step == 1)
			TEST_ASSERT_EQ(to_init(x.qp, IBV_QPT_RC), 0);
		if (step == 2)
			TEST_ASSERT_EQ(to_rtr(x.qp, IBV_QPT_RC, &y, IBV_MTU_1024), 0);
		bad = NULL;
		TEST_ASSERT_EQ(ibv_post_send(x.qp, wr, &bad), EINVAL);
		TEST_ASSERT_PTR_EQ(bad, &wr[0]);
	}
	/* receives may be posted from INIT on */
	TEST_ASSERT_EQ(to_init(y.qp, IBV_QPT_RC), 0);
	CHECK(recv1(&y, NULL, SLOT, &rid));
	TEST_ASSERT_EQ(to_rtr(y.qp, IBV_QPT_RC, &x, IBV_MTU_1024), 0);
	TEST_ASSERT_EQ(to_rts(y.qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(to_rts(x.qp, IBV_QPT_RC), 0);
	/* none of the refused WRs runs once the QP can send */
	CHECK(expect_none(x.scq, y.rcq, QUIET_MS));
	/* and the receive posted in INIT takes the first real message */
	fill(x.buf + SLOT, MSG, 84);
	CHECK(send1(&x, &y, NULL, SLOT, MSG, 0x7f, IBV_SEND_SIGNALED));
	CHECK(expect_send(&x, 0x7f, IBV_WC_SEND));
	CHECK(expect_recv(&y, x.buf + SLOT, MSG, 0, rid));
	CHECK(expect_none(x.scq, y.rcq, QUIET_MS));
	return 0;
}

static int
test_post_null_list_einval(void)
{
	struct ibv_send_wr *sbad = (void *)&sbad;
	struct ibv_recv_wr *rbad = (void *)&rbad;

	/* droce's choice (rxe: EINVAL, mlx5: 0) */
	TEST_ASSERT_EQ(ibv_post_send(a.qp, NULL, &sbad), EINVAL);
	TEST_ASSERT_PTR_EQ(sbad, NULL);
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, NULL, &rbad), EINVAL);
	TEST_ASSERT_PTR_EQ(rbad, NULL);
	return 0;
}

/* --- post: opcodes and flags --- */

static int
opcode_rows(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
	    const enum ibv_wr_opcode *ops, size_t nops, int err)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	fill(s->buf + 0x8000, MSG, 85);
	for (size_t i = 0; i < nops; i++) {
		mk_send(&wr[1], &sg, s, r, uah, 0x8000, MSG);
		wr[1].opcode = ops[i];
		if (ops[i] == IBV_WR_ATOMIC_CMP_AND_SWP || ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			sg.length = 8;
			if (!uah) {
				wr[1].wr.atomic.remote_addr = (uintptr_t)r->buf + WRITE_OFF;
				wr[1].wr.atomic.rkey = r->mr->rkey;
			}
		}
		if (send_list_check(s, r, uah, wr, err) != 0) {
			fprintf(stderr, "  ... with wr[1].opcode %d\n", ops[i]);
			return TEST_FAILED;
		}
	}
	return 0;
}

static int
test_post_send_opcode_not_for_ud_einval(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1,
		IBV_WR_ATOMIC_WRITE,
	};
	const struct h_qp_opts o = { .type = IBV_QPT_UD };

	CHECK(extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	CHECK(opcode_rows(&x, &y, ah, ops, DIM(ops), EINVAL));
	return 0;
}

static int
test_post_send_opcode_not_for_uc_einval(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO,
	};
	const struct h_qp_opts o = { .type = IBV_QPT_UC };

	CHECK(extra_pair(&x, &y, &o));
	CHECK(opcode_rows(&x, &y, NULL, ops, DIM(ops), EINVAL));
	return 0;
}

static int
test_post_send_opcode_unsupported_on_rc_einval(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO,
		IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE, (enum ibv_wr_opcode)0x7f,
	};

	CHECK(opcode_rows(&a, &b, NULL, ops, DIM(ops), EINVAL));
	return 0;
}

/*
 * RDMA READ and atomics on RC: EOPNOTSUPP while droce does not implement them
 * (ibv_query_device says atomic_cap NONE). Once it does, they are accepted,
 * and an atomic that is not exactly 8 bytes at an 8-aligned remote address
 * is EINVAL at post time.
 */
static int
test_post_send_read_atomic_on_rc(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_device_attr d;
	struct ibv_sge sg[3];
	uint64_t val;

	TEST_ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	if (d.atomic_cap == IBV_ATOMIC_NONE) {
		CHECK(opcode_rows(&a, &b, NULL, ops, DIM(ops), EOPNOTSUPP));
		return 0;
	}
	for (int row = 0; row < 4; row++) {
		mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 8);
		wr[1].opcode = row & 1 ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + WRITE_OFF;
		wr[1].wr.atomic.rkey = b.mr->rkey;
		if (row == 0)
			sg[0].length = 4;
		if (row == 1)
			sg[0].length = 16;
		if (row == 2)
			wr[1].wr.atomic.remote_addr += 4;
		if (row == 3)
			wr[1].wr.atomic.remote_addr += 1;
		if (send_list_check(&a, &b, NULL, wr, EINVAL) != 0) {
			fprintf(stderr, "  ... atomic row %d\n", row);
			return TEST_FAILED;
		}
	}
	/* well-formed READ and FETCH_ADD are posted and complete (the harness MR
	 * has no REMOTE_ATOMIC: a second MR over the target) */
	xmr = ibv_reg_mr(b.pd, b.buf + WRITE_OFF, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	TEST_ASSERT(xmr != NULL, "ibv_reg_mr: %s", strerror(errno));
	fill(b.buf + WRITE_OFF, MSG, 99);
	val = 40;
	memcpy(b.buf + WRITE_OFF + MSG, &val, 8);
	mk_send(&wr[0], &sg[0], &a, &b, NULL, 0x9000, MSG);
	wr[0].wr_id = 0x140;
	wr[0].opcode = IBV_WR_RDMA_READ;
	mk_send(&wr[1], &sg[1], &a, &b, NULL, 0x9100, 8);
	wr[1].wr_id = 0x141;
	wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + WRITE_OFF + MSG;
	wr[1].wr.atomic.rkey = xmr->rkey;
	wr[1].wr.atomic.compare_add = 2;
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
	CHECK(expect_send(&a, 0x140, IBV_WC_RDMA_READ));
	CHECK(expect_send(&a, 0x141, IBV_WC_FETCH_ADD));
	TEST_ASSERT(memcmp(a.buf + 0x9000, b.buf + WRITE_OFF, MSG) == 0, "READ data differs");
	memcpy(&val, a.buf + 0x9100, 8);
	TEST_ASSERT_EQ(val, 40);
	memcpy(&val, b.buf + WRITE_OFF + MSG, 8);
	TEST_ASSERT_EQ(val, 42);
	return 0;
}

static int
test_post_send_inline_over_max_einval(void)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[2];
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(query(a.qp, &at));
	TEST_ASSERT_EQ(at.cap.max_inline_data, 128);
	/* one SGE of max + 1 bytes */
	mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 129);
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	/* the sum over SGEs counts */
	mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 64);
	sg[1] = sg[0];
	sg[1].length = 65;
	wr[1].num_sge = 2;
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	/* RDMA WRITE too */
	mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 129);
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].send_flags |= IBV_SEND_INLINE;
	CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	/* exactly max_inline_data is fine */
	fill(a.buf + 0x8000, 128, 86);
	CHECK(recv1(&b, NULL, SLOT, &rid));
	mk_send(&wr[0], &sg[0], &a, &b, NULL, 0x8000, 128);
	wr[0].wr_id = 0x80;
	wr[0].send_flags |= IBV_SEND_INLINE;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr[0], &bad), 0);
	CHECK(expect_send(&a, 0x80, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf + 0x8000, 128, 0, ANY_ID));	/* earlier rows left receives */
	/* and a QP created with max_inline_data 0 takes no inline data at all */
	{
		const struct h_qp_opts o = { .type = IBV_QPT_RC };

		CHECK(extra_pair(&x, &y, &o));
		CHECK(query(x.qp, &at));
		TEST_ASSERT_EQ(at.cap.max_inline_data, 0);
		mk_send(&wr[1], &sg[0], &x, &y, NULL, 0x8000, 1);
		wr[1].send_flags |= IBV_SEND_INLINE;
		CHECK(send_list_check(&x, &y, NULL, wr, EINVAL));
	}
	return 0;
}

static int
bad_flag(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
	 enum ibv_wr_opcode op, unsigned int flags)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	mk_send(&wr[1], &sg, s, r, uah, 0x8000, MSG);
	wr[1].opcode = op;
	wr[1].send_flags = flags;
	if (send_list_check(s, r, uah, wr, EINVAL) != 0) {
		fprintf(stderr, "  ... with opcode %d send_flags %#x\n", op, flags);
		return TEST_FAILED;
	}
	return 0;
}

static int
test_post_send_invalid_flags_einval(void)
{
	const struct h_qp_opts oud = { .type = IBV_QPT_UD }, ouc = { .type = IBV_QPT_UC };
	const unsigned int sig = IBV_SEND_SIGNALED;

	/* FENCE: RC only */
	CHECK(extra_pair(&x, &y, &oud));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	CHECK(bad_flag(&x, &y, ah, IBV_WR_SEND, sig | IBV_SEND_FENCE));
	CHECK(extra_pair(&u, &v, &ouc));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_SEND, sig | IBV_SEND_FENCE));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_FENCE));
	/* SOLICITED: SEND and RDMA_WRITE_WITH_IMM only */
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_SOLICITED));
	CHECK(bad_flag(&u, &v, NULL, IBV_WR_RDMA_WRITE, sig | IBV_SEND_SOLICITED));
	/* flags droce does not know or support */
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | IBV_SEND_IP_CSUM));
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | (1u << 5)));
	CHECK(bad_flag(&a, &b, NULL, IBV_WR_SEND, sig | 0x80000000u));
	CHECK(bad_flag(&x, &y, ah, IBV_WR_SEND, sig | (1u << 12)));
	return 0;
}

static int
test_post_send_valid_flags_accepted(void)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t r1, r2, r3;

	fill(a.buf, 3 * SLOT, 87);
	CHECK(recv1(&b, NULL, SLOT, &r1));
	CHECK(recv1(&b, NULL, SLOT, &r2));
	CHECK(recv1(&b, NULL, SLOT, &r3));
	/* FENCE on RC; SOLICITED on SEND; unsignaled SEND (sq_sig_all = 0) */
	CHECK(send1(&a, &b, NULL, 0, MSG, 0x90, IBV_SEND_SIGNALED | IBV_SEND_FENCE));
	CHECK(send1(&a, &b, NULL, SLOT, MSG, 0x91, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
	CHECK(send1(&a, &b, NULL, 2 * SLOT, MSG, 0x92, 0));
	/* SOLICITED on RDMA_WRITE_WITH_IMM */
	mk_send(&wr, &sge, &a, &b, NULL, 0, MSG);
	wr.wr_id = 0x93;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x1234);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	CHECK(recv1(&b, NULL, SLOT, NULL));
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	CHECK(expect_send(&a, 0x90, IBV_WC_SEND));
	CHECK(expect_send(&a, 0x91, IBV_WC_SEND));
	CHECK(expect_send(&a, 0x93, IBV_WC_RDMA_WRITE));	/* 0x92 is unsignaled */
	CHECK(expect_recv(&b, a.buf, MSG, 0, r1));
	CHECK(expect_recv(&b, a.buf + SLOT, MSG, 0, r2));
	CHECK(expect_recv(&b, a.buf + 2 * SLOT, MSG, 0, r3));
	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(wc.imm_data, htonl(0x1234));
	TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "wc_flags %#x", wc.wc_flags);
	TEST_ASSERT(memcmp(b.buf + WRITE_OFF, a.buf, MSG) == 0, "RDMA WRITE data differs");
	CHECK(expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

static int
test_post_send_over_max_msg_einval(void)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sg[2];

	/* 2^31 + 1 bytes (max_msg_sz is 2^31): refused before any byte is read */
	mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 0x80000000u);
	sg[1] = sg[0];
	sg[1].length = 1;
	wr[1].num_sge = 2;
	CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	mk_send(&wr[1], &sg[0], &a, &b, NULL, 0x8000, 0x80000000u);
	sg[1] = sg[0];
	sg[1].length = 1;
	wr[1].num_sge = 2;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	CHECK(send_list_check(&a, &b, NULL, wr, EINVAL));
	return 0;
}

/* IBA 10.3.1 (SQ Drain): the SQ takes new WRs but does not start them until RTS. */
static int
test_post_send_in_sqd_queued_until_rts(void)
{
	struct ibv_qp_attr at;
	uint64_t rid;

	fill(a.buf, MSG, 98);
	CHECK(recv1(&b, NULL, SLOT, &rid));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_SQD;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	/* the drain is immediate with nothing outstanding */
	TEST_ASSERT_EQ(qstate(a.qp), IBV_QPS_SQD);
	CHECK(send1(&a, &b, NULL, 0, MSG, 0x110, IBV_SEND_SIGNALED));
	CHECK(expect_none(a.scq, b.rcq, QUIET_MS));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	CHECK(expect_send(&a, 0x110, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf, MSG, 0, rid));
	return 0;
}

/* Posting in ERR is accepted; everything completes with WR_FLUSH_ERR, signaled or not. */
static int
test_post_in_err_accepted_and_flushed(void)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[4];
	uint64_t rid;

	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
	CHECK(send1(&a, &b, NULL, 0, MSG, 0x120, IBV_SEND_SIGNALED));
	CHECK(send1(&a, &b, NULL, 0, MSG, 0x121, 0));
	CHECK(recv1(&b, NULL, SLOT, &rid));
	memset(wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 2, WAIT_MS), 2);
	TEST_ASSERT_EQ(wc[0].wr_id, 0x120);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc[1].wr_id, 0x121);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc[0].wr_id, rid);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	CHECK(expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

/* --- post: UD specifics --- */

static int
test_post_send_ud_over_port_mtu_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[2];
	uint64_t rid;

	CHECK(extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	/* exactly the MTU goes through, after the 40 GRH bytes (before any
	 * small receive is queued) */
	fill(x.buf + 0x8000, 4096, 88);
	CHECK(recv1(&y, NULL, 4096 + GRH, &rid));
	mk_send(&wr[0], &sg[0], &x, &y, ah, 0x8000, 4096);
	wr[0].wr_id = 0xa0;
	TEST_ASSERT_EQ(ibv_post_send(x.qp, &wr[0], &bad), 0);
	CHECK(expect_send(&x, 0xa0, IBV_WC_SEND));
	CHECK(expect_recv(&y, x.buf + 0x8000, 4096, GRH, rid));
	/* port MTU 4096: one byte more in one SGE, and spread over two */
	mk_send(&wr[1], &sg[0], &x, &y, ah, 0x8000, 4097);
	CHECK(send_list_check(&x, &y, ah, wr, EINVAL));
	mk_send(&wr[1], &sg[0], &x, &y, ah, 0x8000, 4000);
	sg[1] = sg[0];
	sg[1].length = 97;
	wr[1].num_sge = 2;
	CHECK(send_list_check(&x, &y, ah, wr, EINVAL));
	return 0;
}

static int
test_post_send_ud_null_ah_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_send_wr wr[3];
	struct ibv_sge sg;

	CHECK(extra_pair(&x, &y, &o));
	ah = h_ah(&x, &y);
	TEST_ASSERT(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	mk_send(&wr[1], &sg, &x, &y, ah, 0x8000, MSG);
	wr[1].wr.ud.ah = NULL;
	CHECK(send_list_check(&x, &y, ah, wr, EINVAL));
	return 0;
}

/* --- IBV_SEND_INLINE --- */

static int
test_inline_buffer_reusable_on_return_lkey_ignored(void)
{
	uint8_t want_send[100], want_write[50], stackbuf[50];
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sg[2];
	struct ibv_wc wc;
	uint8_t *heap;
	uint64_t rid;

	/* b has no receive yet: the SEND is RNR-NAKed and sent again later, from droce's copy */
	heap = malloc(100);		/* not registered at all */
	TEST_ASSERT(heap != NULL, "malloc");
	fill(heap, 100, 89);
	memcpy(want_send, heap, 100);
	sg[0].addr = (uintptr_t)heap;
	sg[0].length = 60;
	sg[0].lkey = 0xdeadbeef;
	sg[1].addr = (uintptr_t)heap + 60;
	sg[1].length = 40;
	sg[1].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb0;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(heap, 0xee, 100);
	free(heap);			/* ASan: any later read by droce is a use after free */

	fill(stackbuf, 50, 90);
	memcpy(want_write, stackbuf, 50);
	sg[0].addr = (uintptr_t)stackbuf;
	sg[0].length = 50;
	sg[0].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb1;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + WRITE_OFF;
	wr.wr.rdma.rkey = b.mr->rkey;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(stackbuf, 0xee, 50);

	CHECK(expect_none(a.scq, b.rcq, 50));
	CHECK(recv1(&b, NULL, SLOT, &rid));
	CHECK(expect_send(&a, 0xb0, IBV_WC_SEND));
	CHECK(expect_send(&a, 0xb1, IBV_WC_RDMA_WRITE));
	CHECK(expect_recv(&b, want_send, 100, 0, rid));
	TEST_ASSERT(memcmp(b.buf + WRITE_OFF, want_write, 50) == 0, "inline WRITE data differs");

	/* the same bad lkey without INLINE is checked: local protection error */
	fill(a.buf, MSG, 91);
	CHECK(recv1(&b, NULL, SLOT, NULL));
	sg[0].addr = (uintptr_t)a.buf;
	sg[0].length = MSG;
	sg[0].lkey = 0xdeadbeef;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb2;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(wc.wr_id, 0xb2);
	TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	return 0;
}

/* --- ibv_modify_qp --- */

static int
test_modify_rejected_on_rts_changes_nothing(void)
{
	struct ibv_qp_attr q0, q1, at;
	uint64_t rid;
	static const struct {
		enum ibv_qp_state to;
		int mask;
		const char *what;
	} rows[] = {
		{ IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		  "RTS->INIT" },
		{ IBV_QPS_RTR, RTR_RC_MASK, "RTS->RTR" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER,
		  "min_rnr_timer 32 out of range" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_DEST_QPN,
		  "DEST_QPN not allowed RTS->RTS" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP, "IBV_QP_CAP" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CUR_STATE,
		  "cur_qp_state RTR" },
		{ IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
		  "alt_port_num 0" },
	};

	CHECK(query(a.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_RTS);
	TEST_ASSERT_EQ(q0.path_mtu, IBV_MTU_1024);
	TEST_ASSERT_EQ(q0.dest_qp_num, b.qp->qp_num);
	TEST_ASSERT_EQ(q0.qp_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT_EQ(q0.timeout, 14);
	TEST_ASSERT_EQ(q0.min_rnr_timer, 1);
	TEST_ASSERT_EQ(q0.port_num, 1);
	for (size_t i = 0; i < DIM(rows); i++) {
		/* different values everywhere, so that any partial apply shows */
		rtr_attr(&at, &a, IBV_MTU_256);
		at.qp_state = rows[i].to;
		at.cur_qp_state = IBV_QPS_RTR;
		at.qp_access_flags = 0;
		at.port_num = 1;
		at.min_rnr_timer = 32;
		at.dest_qp_num = 0x123;
		at.rq_psn = 0x456;
		at.max_dest_rd_atomic = 3;
		at.cap.max_send_wr = 1;
		at.alt_port_num = 0;
		if (i == 0 || i == 1)
			at.min_rnr_timer = 5;
		TEST_ASSERT(ibv_modify_qp(a.qp, &at, rows[i].mask) == EINVAL,
			    "%s: not EINVAL", rows[i].what);
		CHECK(query(a.qp, &q1));
		if (same_attrs(&q0, &q1) != 0) {
			fprintf(stderr, "  ... after %s\n", rows[i].what);
			return TEST_FAILED;
		}
		TEST_ASSERT_EQ(a.qp->state, IBV_QPS_RTS);
	}
	/* a good RTS->RTS does change what it names */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.min_rnr_timer = 2;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), 0);
	CHECK(query(a.qp, &q1));
	TEST_ASSERT_EQ(q1.min_rnr_timer, 2);
	TEST_ASSERT_EQ(q1.qp_access_flags, q0.qp_access_flags);
	/* and the QP still works, RDMA WRITE (access flags) included */
	fill(a.buf, MSG, 92);
	CHECK(recv1(&b, NULL, SLOT, &rid));
	CHECK(send1(&a, &b, NULL, 0, MSG, 0xc0, IBV_SEND_SIGNALED));
	CHECK(expect_send(&a, 0xc0, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf, MSG, 0, rid));
	{
		struct ibv_send_wr wr, *bad = NULL;
		struct ibv_sge sge;

		/* b -> a: a's access flags are what matter */
		fill(b.buf + 0x8000, MSG, 93);
		mk_send(&wr, &sge, &b, &a, NULL, 0x8000, MSG);
		wr.wr_id = 0xc1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		TEST_ASSERT_EQ(ibv_post_send(b.qp, &wr, &bad), 0);
		CHECK(expect_send(&b, 0xc1, IBV_WC_RDMA_WRITE));
		TEST_ASSERT(memcmp(a.buf + WRITE_OFF, b.buf + 0x8000, MSG) == 0,
			    "RDMA WRITE data differs");
	}
	return 0;
}

static int
test_modify_missing_required_attr_changes_nothing(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_qp_attr q0, q1, at;

	x.ctx = h_open(0);
	TEST_ASSERT(x.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	/* RESET -> INIT without ACCESS_FLAGS */
	CHECK(query(x.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_RESET);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
		       EINVAL);
	CHECK(query(x.qp, &q1));
	CHECK(same_attrs(&q0, &q1));
	TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RESET);
	TEST_ASSERT_EQ(to_init(x.qp, IBV_QPT_RC), 0);

	/* INIT -> RTR: without RQ_PSN; bad AV; max_dest_rd_atomic too big; path_mtu 0 / 4096+1 */
	CHECK(query(x.qp, &q0));
	TEST_ASSERT_EQ(q0.qp_state, IBV_QPS_INIT);
	for (int row = 0; row < 5; row++) {
		int mask = RTR_RC_MASK;

		rtr_attr(&at, &b, IBV_MTU_2048);
		at.rq_psn = 0x777;
		at.max_dest_rd_atomic = 4;
		at.min_rnr_timer = 12;
		if (row == 0)
			mask &= ~IBV_QP_RQ_PSN;
		if (row == 1)
			at.ah_attr.grh.dgid.raw[10] = 0;	/* not ::ffff:a.b.c.d */
		if (row == 2)
			at.max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC + 1;
		if (row == 3)
			at.path_mtu = 0;
		if (row == 4)
			at.path_mtu = IBV_MTU_4096 + 1;
		TEST_ASSERT(ibv_modify_qp(x.qp, &at, mask) == EINVAL, "INIT->RTR row %d", row);
		CHECK(query(x.qp, &q1));
		if (same_attrs(&q0, &q1) != 0) {
			fprintf(stderr, "  ... after INIT->RTR row %d\n", row);
			return TEST_FAILED;
		}
		TEST_ASSERT_EQ(x.qp->state, IBV_QPS_INIT);
	}
	/* the complete one applies all of it */
	rtr_attr(&at, &b, IBV_MTU_2048);
	at.rq_psn = 0x777;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 12;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, RTR_RC_MASK), 0);
	CHECK(query(x.qp, &q1));
	TEST_ASSERT_EQ(q1.qp_state, IBV_QPS_RTR);
	TEST_ASSERT_EQ(q1.path_mtu, IBV_MTU_2048);
	TEST_ASSERT_EQ(q1.dest_qp_num, b.qp->qp_num);
	TEST_ASSERT_EQ(q1.rq_psn, 0x777);
	TEST_ASSERT_EQ(q1.max_dest_rd_atomic, 4);
	TEST_ASSERT_EQ(q1.min_rnr_timer, 12);
	TEST_ASSERT(memcmp(q1.ah_attr.grh.dgid.raw, b.gid.raw, 16) == 0, "dgid not applied");

	/* RTR -> RTS without TIMEOUT */
	q0 = q1;
	rts_attr(&at);
	at.sq_psn = 0x888;
	at.retry_cnt = 3;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, RTS_RC_MASK & ~IBV_QP_TIMEOUT), EINVAL);
	CHECK(query(x.qp, &q1));
	CHECK(same_attrs(&q0, &q1));
	TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RTR);
	return 0;
}

static int
test_modify_reset_to_err_einval(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	static const enum ibv_qp_state bad[] = { IBV_QPS_ERR, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD };
	struct ibv_qp_attr at;

	x.ctx = h_open(0);
	TEST_ASSERT(x.ctx != NULL, "ibv_open_device failed");
	TEST_ASSERT_EQ(h_side_create(&x, x.ctx, &o), 0);
	for (size_t i = 0; i < DIM(bad); i++) {
		memset(&at, 0, sizeof(at));
		at.qp_state = bad[i];
		TEST_ASSERT(ibv_modify_qp(x.qp, &at, IBV_QP_STATE) == EINVAL, "RESET->%d", bad[i]);
		TEST_ASSERT_EQ(qstate(x.qp), IBV_QPS_RESET);
		TEST_ASSERT_EQ(x.qp->state, IBV_QPS_RESET);
	}
	/* RESET->RESET is valid, and so are INIT->ERR, ERR->RESET */
	TEST_ASSERT_EQ(to_reset(x.qp), 0);
	TEST_ASSERT_EQ(to_init(x.qp, IBV_QPT_RC), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(qstate(x.qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(to_reset(x.qp), 0);
	TEST_ASSERT_EQ(qstate(x.qp), IBV_QPS_RESET);
	return 0;
}

static int
test_modify_cur_state_mismatch_einval(void)
{
	static const enum ibv_qp_state wrong[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
	};
	struct ibv_qp_attr at;
	uint64_t rid;

	for (size_t i = 0; i < DIM(wrong); i++) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.cur_qp_state = wrong[i];
		TEST_ASSERT(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE) == EINVAL,
			    "cur_qp_state %d on an RTS QP", wrong[i]);
		TEST_ASSERT_EQ(qstate(a.qp), IBV_QPS_RTS);
	}
	/* the true current state is accepted */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.cur_qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	TEST_ASSERT_EQ(qstate(a.qp), IBV_QPS_RTS);
	/* RTS -> ERR claiming to be in RTR: refused, the QP keeps working */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	at.cur_qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	TEST_ASSERT_EQ(qstate(a.qp), IBV_QPS_RTS);
	fill(a.buf, MSG, 94);
	CHECK(recv1(&b, NULL, SLOT, &rid));
	CHECK(send1(&a, &b, NULL, 0, MSG, 0xd0, IBV_SEND_SIGNALED));
	CHECK(expect_send(&a, 0xd0, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf, MSG, 0, rid));
	return 0;
}

static int
test_modify_path_mtu_4096_multi_packet(void)
{
	const uint32_t len = 3 * 4096 + 123;
	struct ibv_qp_attr at;
	uint64_t rid;

	CHECK(reconnect(&a, &b, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(query(a.qp, &at));
	TEST_ASSERT_EQ(at.path_mtu, IBV_MTU_4096);
	fill(a.buf, len, 95);
	CHECK(recv1(&b, NULL, len, &rid));
	CHECK(send1(&a, &b, NULL, 0, len, 0xe0, IBV_SEND_SIGNALED));
	CHECK(expect_send(&a, 0xe0, IBV_WC_SEND));
	CHECK(expect_recv(&b, a.buf, len, 0, rid));
	return 0;
}

static int
test_modify_path_mtu_above_port_mtu_clamped(void)
{
	const struct h_qp_opts o = { .type = IBV_QPT_RC };
	const uint32_t len = 10000;
	struct ibv_device *d2 = NULL, *d3 = NULL;
	struct ibv_port_attr pa;
	int num = 0;
	uint64_t rid;

	/* droce2 <-> droce3 over their own ring pair, ethdev MTU 1500: IB MTU 1024 */
	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_vpm0", "net_ring_vpm1"), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce2", "ethdev=net_ring_vpm0,ip=10.0.1.1,mtu=1500"), 0);
	made_droce2 = true;
	TEST_ASSERT_EQ(droce_dev_create("droce3", "ethdev=net_ring_vpm1,ip=10.0.1.2,mtu=1500"), 0);
	made_droce3 = true;
	mlist = ibv_get_device_list(&num);
	TEST_ASSERT(mlist != NULL, "ibv_get_device_list: %s", strerror(errno));
	TEST_ASSERT_EQ(num, 4);
	for (int i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(mlist[i]), "droce2") == 0)
			d2 = mlist[i];
		if (strcmp(ibv_get_device_name(mlist[i]), "droce3") == 0)
			d3 = mlist[i];
	}
	TEST_ASSERT(d2 != NULL && d3 != NULL, "droce2/droce3 not listed");
	m.ctx = ibv_open_device(d2);
	n.ctx = ibv_open_device(d3);
	TEST_ASSERT(m.ctx != NULL && n.ctx != NULL, "ibv_open_device: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_query_port(m.ctx, 1, &pa), 0);
	TEST_ASSERT_EQ(pa.active_mtu, IBV_MTU_1024);
	TEST_ASSERT_EQ(h_side_create(&m, m.ctx, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&n, n.ctx, &o), 0);
	/* path_mtu 4096 on a 1024 port: accepted, and 10000 bytes get through */
	CHECK(reconnect(&m, &n, IBV_QPT_RC, IBV_MTU_4096));
	CHECK(reconnect(&n, &m, IBV_QPT_RC, IBV_MTU_4096));
	{
		struct ibv_qp_attr at;

		CHECK(query(m.qp, &at));
		TEST_ASSERT(at.path_mtu == IBV_MTU_4096 || at.path_mtu == IBV_MTU_1024,
			    "path_mtu %d: neither as set nor clamped", at.path_mtu);
	}
	fill(m.buf, len, 96);
	CHECK(recv1(&n, NULL, len, &rid));
	CHECK(send1(&m, &n, NULL, 0, len, 0xf0, IBV_SEND_SIGNALED));
	CHECK(expect_send(&m, 0xf0, IBV_WC_SEND));
	CHECK(expect_recv(&n, m.buf, len, 0, rid));
	return 0;
}

static int
test_modify_rts_to_reset_discards_wrs_then_reconnect_works(void)
{
	struct ibv_send_wr wr[64], *bad = NULL;
	struct ibv_recv_wr rwr[64], *rbad = NULL;
	struct ibv_sge sg[64], rsg[64];
	struct ibv_wc wc[64];

	/* a: four SENDs stuck on RNR (b has no receive); b: two receives */
	fill(a.buf, 64 * SLOT, 97);
	for (int i = 0; i < 4; i++)
		CHECK(send1(&a, &b, NULL, i * SLOT, MSG, 0x100 + i, IBV_SEND_SIGNALED));
	CHECK(expect_none(a.scq, NULL, 50));
	TEST_ASSERT_EQ(to_reset(a.qp), 0);
	TEST_ASSERT_EQ(qstate(a.qp), IBV_QPS_RESET);
	TEST_ASSERT_EQ(a.qp->state, IBV_QPS_RESET);
	CHECK(recv1(&b, NULL, SLOT, NULL));
	CHECK(recv1(&b, NULL, SLOT, NULL));
	TEST_ASSERT_EQ(to_reset(b.qp), 0);
	/* discarded: no completion, not even a flush */
	CHECK(expect_none(a.scq, b.rcq, QUIET_MS));
	CHECK(expect_none(b.scq, a.rcq, 1));

	CHECK(reconnect(&a, &b, IBV_QPT_RC, IBV_MTU_1024));
	CHECK(reconnect(&b, &a, IBV_QPT_RC, IBV_MTU_1024));
	/* both queues are whole again: 64 receives and 64 sends in one post each */
	for (int i = 0; i < 64; i++) {
		mk_recv(&rwr[i], &rsg[i], &b, SLOT);
		rwr[i].next = i < 63 ? &rwr[i + 1] : NULL;
		mk_send(&wr[i], &sg[i], &a, &b, NULL, i * SLOT, MSG);
		wr[i].wr_id = 0x200 + i;
		wr[i].next = i < 63 ? &wr[i + 1] : NULL;
	}
	TEST_ASSERT_EQ(ibv_post_recv(b.qp, rwr, &rbad), 0);
	TEST_ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 64, WAIT_MS), 64);
	for (int i = 0; i < 64; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, 0x200 + i);
	}
	TEST_ASSERT_EQ(h_poll(b.rcq, wc, 64, WAIT_MS), 64);
	for (int i = 0; i < 64; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, rwr[i].wr_id);
		TEST_ASSERT_EQ(wc[i].byte_len, MSG);
		TEST_ASSERT(memcmp(b.buf + wc[i].wr_id, a.buf + i * SLOT, MSG) == 0,
			    "message %d differs", i);
	}
	CHECK(expect_none(a.scq, b.rcq, QUIET_MS));
	return 0;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_device_list_is_exactly_droce0_droce1),
	TEST_CASE(test_query_device_limits_equal_config),
	TEST_CASE(test_query_port_ethernet_active_mtu4096_one_gid),
	TEST_CASE(test_query_gid_index0_is_v4mapped_ip_index1_fails),
	TEST_CASE(test_query_pkey_index0_is_ffff_index1_fails),
	TEST_CASE(test_query_gid_ex_reports_roce_v2),
	TEST_CASE(test_create_qp_over_device_limits_einval),
	TEST_CASE(test_create_qp_unsupported_type_eopnotsupp),
	TEST_CASE(test_create_cq_cqe_out_of_range_einval),
	TEST_CASE(test_reg_mr_remote_write_needs_local_write_einval),
	TEST_CASE(test_create_srq_over_limits_einval),
	TEST_CASE(test_modify_srq_limit_above_max_wr_einval),
	TEST_CASE(test_post_send_sq_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_recv_rq_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_srq_recv_full_enomem_bad_is_2nd),
	TEST_CASE(test_post_send_num_sge_over_max_einval),
	TEST_CASE(test_post_recv_num_sge_over_max_einval),
	TEST_CASE(test_post_srq_recv_num_sge_over_max_einval),
	TEST_CASE(test_post_recv_on_srq_qp_einval_bad_is_1st),
	TEST_CASE(test_post_recv_in_reset_einval_bad_is_1st),
	TEST_CASE(test_post_send_before_rts_einval_bad_is_1st),
	TEST_CASE(test_post_null_list_einval),
	TEST_CASE(test_post_send_opcode_not_for_ud_einval),
	TEST_CASE(test_post_send_opcode_not_for_uc_einval),
	TEST_CASE(test_post_send_opcode_unsupported_on_rc_einval),
	TEST_CASE(test_post_send_read_atomic_on_rc),
	TEST_CASE(test_post_send_inline_over_max_einval),
	TEST_CASE(test_post_send_invalid_flags_einval),
	TEST_CASE(test_post_send_valid_flags_accepted),
	TEST_CASE(test_post_send_over_max_msg_einval),
	TEST_CASE(test_post_send_in_sqd_queued_until_rts),
	TEST_CASE(test_post_in_err_accepted_and_flushed),
	TEST_CASE(test_post_send_ud_over_port_mtu_einval),
	TEST_CASE(test_post_send_ud_null_ah_einval),
	TEST_CASE(test_inline_buffer_reusable_on_return_lkey_ignored),
	TEST_CASE(test_modify_rejected_on_rts_changes_nothing),
	TEST_CASE(test_modify_missing_required_attr_changes_nothing),
	TEST_CASE(test_modify_reset_to_err_einval),
	TEST_CASE(test_modify_cur_state_mismatch_einval),
	TEST_CASE(test_modify_path_mtu_4096_multi_packet),
	TEST_CASE(test_modify_path_mtu_above_port_mtu_clamped),
	TEST_CASE(test_modify_rts_to_reset_discards_wrs_then_reconnect_works),
};

int
main(int argc, char **argv)
{
	if (h_init(argc, argv) != 0) {
		fprintf(stderr, "h_init failed\n");
		return 1;
	}
	return DROCE_TEST_MAIN("verbs_post", cases, setup, teardown);
}
