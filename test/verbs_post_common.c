/* SPDX-License-Identifier: BSD-3-Clause */
/* What the test_verbs_post* programs share (verbs_post_common.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_post_common.h"

struct h_side a, b;
struct h_side x, y, u, v;
struct ibv_srq *srq;
struct ibv_ah *ah;
struct ibv_mr *xmr;
struct h_side m, n;
struct ibv_device **mlist;
bool made_droce2, made_droce3;

static const struct h_qp_opts rc_opts = { .type = IBV_QPT_RC, .max_inline = 128 };
static size_t rnext;		/* next free receive buffer offset */
static uint32_t seq;		/* message counter: patterns and wr_ids */

void
vp_fill(uint8_t *p, size_t len, uint32_t s)
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

void
vp_mk_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, const struct h_side *r, uint32_t len)
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

int
vp_recv1(struct h_side *r, struct ibv_srq *q, uint32_t len, uint64_t *id)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	vp_mk_recv(&wr, &sge, r, len);
	ret = q ? ibv_post_srq_recv(q, &wr, &bad) : ibv_post_recv(r->qp, &wr, &bad);
	TEST_ASSERT_EQ(ret, 0);
	if (id)
		*id = wr.wr_id;
	return 0;
}

void
vp_mk_send(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct h_side *s,
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

int
vp_send1(struct h_side *s, const struct h_side *r, struct ibv_ah *uah, size_t off,
      uint32_t len, uint64_t id, unsigned int flags)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;

	vp_mk_send(&wr, &sge, s, r, uah, off, len);
	wr.wr_id = id;
	wr.send_flags = flags;
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	return 0;
}

int
vp_expect_send(struct h_side *s, uint64_t id, enum ibv_wc_opcode op)
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

int
vp_expect_recv(struct h_side *r, const uint8_t *src, uint32_t len, uint32_t grh, uint64_t id)
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

int
vp_expect_none(struct ibv_cq *c1, struct ibv_cq *c2, int ms)
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

int
vp_send_list_check(struct h_side *s, struct h_side *r, struct ibv_ah *uah,
		struct ibv_send_wr *wr, int err)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_sge sg0, sg2;
	uint32_t grh = uah ? GRH : 0;
	uint32_t k = seq++;
	size_t soff = (k % 16) * SLOT, soff2 = ((k + 8) % 16) * SLOT;

	vp_fill(s->buf + soff, MSG, k);
	for (int i = 0; i < 3; i++)
		CHECK(vp_recv1(r, NULL, SLOT, NULL));
	vp_mk_send(&wr[0], &sg0, s, r, uah, soff, MSG);
	vp_mk_send(&wr[2], &sg2, s, r, uah, soff, MSG);
	wr[0].wr_id = 0x1000 + k;
	wr[1].wr_id = 0x2000 + k;
	wr[2].wr_id = 0x3000 + k;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2].next = NULL;
	TEST_ASSERT_EQ(ibv_post_send(s->qp, wr, &bad), err);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	CHECK(vp_expect_send(s, wr[0].wr_id, IBV_WC_SEND));
	CHECK(vp_expect_recv(r, s->buf + soff, MSG, grh, ANY_ID));
	/*
	 * Nothing after wr[0]: a signaled SEND of other bytes, posted alone,
	 * must be the next completion on both sides. A send queue completes in
	 * order and the pair's link delivers in order, so wr[1] or wr[2], had
	 * either gone out, would have completed or landed before it: its
	 * completion ends the wait (where a fixed quiet window, waited out in
	 * full, saw only what came within it).
	 */
	vp_fill(s->buf + soff2, MSG, k + 128);	/* other bytes: seeds differ mod 256 */
	CHECK(vp_send1(s, r, uah, soff2, MSG, 0x4000 + k, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(s, 0x4000 + k, IBV_WC_SEND));
	CHECK(vp_expect_recv(r, s->buf + soff2, MSG, grh, ANY_ID));
	CHECK(vp_expect_none(s->scq, r->rcq, 0));
	return 0;
}

int
vp_recv_list_check(struct h_side *s, struct h_side *r, struct ibv_srq *q,
		struct ibv_recv_wr *wr, int err)
{
	struct ibv_recv_wr *bad = NULL;
	struct ibv_sge sg0, sg2;
	uint32_t k = seq++;
	int ret;

	vp_fill(s->buf, MSG, k);
	vp_fill(s->buf + SLOT, MSG, k + 1000);
	vp_mk_recv(&wr[0], &sg0, r, SLOT);
	vp_mk_recv(&wr[2], &sg2, r, SLOT);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2].next = NULL;
	ret = q ? ibv_post_srq_recv(q, wr, &bad) : ibv_post_recv(r->qp, wr, &bad);
	TEST_ASSERT_EQ(ret, err);
	TEST_ASSERT_PTR_EQ(bad, &wr[1]);
	CHECK(vp_send1(s, r, NULL, 0, MSG, 0xa000 + k, IBV_SEND_SIGNALED));
	CHECK(vp_expect_send(s, 0xa000 + k, IBV_WC_SEND));
	CHECK(vp_expect_recv(r, s->buf, MSG, 0, wr[0].wr_id));
	CHECK(vp_send1(s, r, NULL, SLOT, MSG, 0xb000 + k, IBV_SEND_SIGNALED));
	CHECK(vp_expect_none(r->rcq, s->scq, QUIET_MS));
	return 0;
}

int
vp_query(struct ibv_qp *qp, struct ibv_qp_attr *at)
{
	struct ibv_qp_init_attr ia;

	memset(at, 0, sizeof(*at));
	TEST_ASSERT_EQ(ibv_query_qp(qp, at, ALL_ATTRS, &ia), 0);
	return 0;
}

int
vp_same_attrs(const struct ibv_qp_attr *p, const struct ibv_qp_attr *q)
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

void
vp_rtr_attr(struct ibv_qp_attr *at, const struct h_side *peer, enum ibv_mtu mtu)
{
	memset(at, 0, sizeof(*at));
	at->qp_state = IBV_QPS_RTR;
	at->path_mtu = mtu;
	at->dest_qp_num = peer->qp->qp_num;
	at->rq_psn = 0;
	at->max_dest_rd_atomic = 1;
	at->min_rnr_timer = 1;
	h_fill_ah(&at->ah_attr, peer);
}

void
vp_rts_attr(struct ibv_qp_attr *at)
{
	memset(at, 0, sizeof(*at));
	at->qp_state = IBV_QPS_RTS;
	at->sq_psn = 0;
	at->timeout = 14;
	at->retry_cnt = 7;
	at->rnr_retry = 7;
	at->max_rd_atomic = 1;
}

int
vp_to_rtr(struct ibv_qp *qp, enum ibv_qp_type t, const struct h_side *peer, enum ibv_mtu mtu)
{
	struct ibv_qp_attr at;

	vp_rtr_attr(&at, peer, mtu);
	if (t == IBV_QPT_UD)
		return ibv_modify_qp(qp, &at, IBV_QP_STATE);
	if (t == IBV_QPT_UC)
		return ibv_modify_qp(qp, &at, RTR_RC_MASK &
				     ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	return ibv_modify_qp(qp, &at, RTR_RC_MASK);
}

int
vp_to_rts(struct ibv_qp *qp, enum ibv_qp_type t)
{
	struct ibv_qp_attr at;

	vp_rts_attr(&at);
	return ibv_modify_qp(qp, &at, t == IBV_QPT_RC ? RTS_RC_MASK :
			     IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int
vp_to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &at, IBV_QP_STATE);
}

int
vp_reconnect(struct h_side *s, const struct h_side *peer, enum ibv_qp_type t, enum ibv_mtu mtu)
{
	TEST_ASSERT_EQ(vp_to_reset(s->qp), 0);
	TEST_ASSERT_EQ(h_to_init(s->qp, t), 0);
	TEST_ASSERT_EQ(vp_to_rtr(s->qp, t, peer, mtu), 0);
	TEST_ASSERT_EQ(vp_to_rts(s->qp, t), 0);
	return 0;
}

int
vp_extra_pair(struct h_side *s, struct h_side *r, const struct h_qp_opts *o)
{
	TEST_ASSERT_EQ(h_pair(s, r, o), 0);
	return 0;
}

int
vp_srq_pair(uint32_t srq_wr, uint32_t srq_sge)
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

/* ------------------------------------------------------------------ */
/* set-up and teardown */

int
vp_setup(void)
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

void
vp_teardown(void)
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
