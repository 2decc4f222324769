/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1, the GSI QP a device gives its connection manager (issue 11): one per
 * device, QPN 1, UD with the well-known Q_Key; a CM MAD sent from droce0's
 * QP1 to droce1's arrives whole behind its GRH, naming QP1 as its source.
 */
#include <errno.h>
#include <string.h>

#include "cm_mad.h"
#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_loc.h"	/* droce_gsi_qp_create: the CM's, not an application's */

#define GRH_LEN	40

struct gsi {
	struct h_side *s;	/* PD, CQs and MR (its own UD QP stays in RESET) */
	struct ibv_qp *qp1;
};

static int
gsi_up(struct gsi *g, int dev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = DROCE_GSI_QKEY,
	};

	g->s = h_res_side(h_res_open(dev), &(struct h_qp_opts){ .type = IBV_QPT_UD });
	if (g->s == NULL)
		return -1;
	ia.send_cq = g->s->scq;
	ia.recv_cq = g->s->rcq;
	g->qp1 = h_res_add_qp(droce_gsi_qp_create(g->s->pd, &ia));
	if (g->qp1 == NULL)
		return -1;
	if (ibv_modify_qp(g->qp1, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(g->qp1, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(g->qp1, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int
test_gsi_qp_is_qpn_1_and_one_per_device(void)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .cap = { 1, 1, 1, 1, 0 } };
	struct gsi g;

	TEST_ASSERT_EQ(gsi_up(&g, 0), 0);
	TEST_ASSERT_EQ(g.qp1->qp_num, (uint32_t)DROCE_GSI_QPN);
	TEST_ASSERT_EQ(h_qp_state(g.qp1), IBV_QPS_RTS);
	/* an application's QPs never get QPN 1 */
	TEST_ASSERT(g.s->qp->qp_num != DROCE_GSI_QPN, "a UD QP took QPN 1");
	ia.send_cq = g.s->scq;
	ia.recv_cq = g.s->rcq;
	errno = 0;
	TEST_ASSERT(droce_gsi_qp_create(g.s->pd, &ia) == NULL && errno == EBUSY,
		    "a second QP1: errno %d", errno);
	ia.qp_type = IBV_QPT_RC;
	errno = 0;
	TEST_ASSERT(droce_gsi_qp_create(g.s->pd, &ia) == NULL && errno == EINVAL,
		    "an RC QP1: errno %d", errno);
	return TEST_SUCCESS;
}

static int
test_gsi_qp_gone_then_made_again(void)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .cap = { 1, 1, 1, 1, 0 } };
	struct h_side *s = h_res_side(h_res_open(0), &(struct h_qp_opts){ .type = IBV_QPT_UD });
	struct ibv_qp *qp;

	TEST_ASSERT(s != NULL, "side");
	ia.send_cq = s->scq;
	ia.recv_cq = s->rcq;
	qp = droce_gsi_qp_create(s->pd, &ia);
	TEST_ASSERT(qp != NULL, "QP1: errno %d", errno);
	TEST_ASSERT_EQ(ibv_destroy_qp(qp), 0);
	qp = h_res_add_qp(droce_gsi_qp_create(s->pd, &ia));
	TEST_ASSERT(qp != NULL && qp->qp_num == DROCE_GSI_QPN, "QP1 again: errno %d", errno);
	return TEST_SUCCESS;
}

static int
test_cm_mad_from_qp1_to_qp1(void)
{
	struct droce_cm_msg m = { .hdr = { .tid = 0x1122334455667788ULL,
					  .attr_id = DROCE_CM_ATTR_RTU } }, got;
	struct gsi a, b;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	const uint8_t *mad;

	TEST_ASSERT_EQ(gsi_up(&a, 0), 0);
	TEST_ASSERT_EQ(gsi_up(&b, 1), 0);
	m.rtu.local_comm_id = 0xa1a2a3a4;
	m.rtu.remote_comm_id = 0xb1b2b3b4;
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, a.s->buf, DROCE_CM_MAD_LEN), DROCE_CM_MAD_LEN);

	struct ibv_sge rsge = { (uintptr_t)b.s->buf, GRH_LEN + DROCE_CM_MAD_LEN, b.s->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 }, *rbad;

	TEST_ASSERT_EQ(ibv_post_recv(b.qp1, &rwr, &rbad), 0);
	ah = h_res_ah(a.s, b.s);
	TEST_ASSERT(ah != NULL, "AH");

	struct ibv_sge ssge = { (uintptr_t)a.s->buf, DROCE_CM_MAD_LEN, a.s->mr->lkey };
	struct ibv_send_wr swr = {
		.wr_id = 9, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = DROCE_GSI_QPN, .remote_qkey = DROCE_GSI_QKEY },
	}, *sbad;

	TEST_ASSERT_EQ(ibv_post_send(a.qp1, &swr, &sbad), 0);
	TEST_ASSERT_EQ(h_poll(a.s->scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == 9, "send: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(h_poll(b.s->rcq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7, "recv: %s",
		    ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.qp_num, (uint32_t)DROCE_GSI_QPN);
	TEST_ASSERT_EQ(wc.src_qp, (uint32_t)DROCE_GSI_QPN);
	TEST_ASSERT_EQ(wc.byte_len, (uint32_t)(GRH_LEN + DROCE_CM_MAD_LEN));
	TEST_ASSERT(wc.wc_flags & IBV_WC_GRH, "no GRH");
	mad = b.s->buf + GRH_LEN;
	TEST_ASSERT(memcmp(mad, a.s->buf, DROCE_CM_MAD_LEN) == 0, "the MAD changed on the way");
	TEST_ASSERT_EQ(droce_cm_mad_decode(mad, DROCE_CM_MAD_LEN, &got), 0);
	TEST_ASSERT_EQ(got.hdr.tid, m.hdr.tid);
	TEST_ASSERT_EQ(got.hdr.attr_id, (uint16_t)DROCE_CM_ATTR_RTU);
	TEST_ASSERT_EQ(got.rtu.local_comm_id, m.rtu.local_comm_id);
	TEST_ASSERT_EQ(got.rtu.remote_comm_id, m.rtu.remote_comm_id);
	return TEST_SUCCESS;
}

static int
test_wrong_qkey_to_qp1_dropped(void)
{
	uint64_t drops;

	struct gsi a, b;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(gsi_up(&a, 0), 0);
	TEST_ASSERT_EQ(gsi_up(&b, 1), 0);
	TEST_ASSERT_EQ(h_post_recv(&(struct h_side){ .qp = b.qp1, .buf = b.s->buf,
						      .mr = b.s->mr, .buf_len = b.s->buf_len },
				   0, GRH_LEN + DROCE_CM_MAD_LEN, 1), 0);
	ah = h_res_ah(a.s, b.s);
	TEST_ASSERT(ah != NULL, "AH");
	drops = h_xstat("droce1", "rx_drop_bad_qkey");
	TEST_ASSERT(drops != UINT64_MAX, "no rx_drop_bad_qkey counter");

	struct ibv_sge ssge = { (uintptr_t)a.s->buf, DROCE_CM_MAD_LEN, a.s->mr->lkey };
	struct ibv_send_wr swr = {
		.wr_id = 3, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = DROCE_GSI_QPN, .remote_qkey = 0x12345678 },
	}, *sbad;

	TEST_ASSERT_EQ(ibv_post_send(a.qp1, &swr, &sbad), 0);
	TEST_ASSERT_EQ(h_poll(a.s->scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(h_poll(b.s->rcq, &wc, 1, 300), 0);
	TEST_ASSERT_EQ(h_xstat("droce1", "rx_drop_bad_qkey"), drops + 1);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_gsi_qp_is_qpn_1_and_one_per_device),
	TEST_CASE(test_gsi_qp_gone_then_made_again),
	TEST_CASE(test_cm_mad_from_qp1_to_qp1),
	TEST_CASE(test_wrong_qkey_to_qp1_dropped),
};

static void
teardown(void)
{
	h_res_release();
}

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "gsi", cases, NULL, teardown);
}
