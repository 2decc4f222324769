/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile responses to droce0's requester and completer (hostile.h has the
 * rig): ACKs and NAKs of PSNs droce0 never sent, READ responses nobody
 * asked for or of the wrong size, atomic ACKs short or long, and a peer
 * that stops answering, RNR NAKs for ever or refuses access, and RNR NAKs
 * of copies sent before the RNR wait.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hostile.h"

/* An ACK of @q's next PSN, its one SEND outstanding: @wr_id completes, successfully. */
static int
ack_next(struct hp_qp *q, uint64_t wr_id)
{
	struct ext a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);
	struct ibv_wc wc;

	hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(h_poll(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, wr_id);
	q->spsn = psn_add(q->spsn, 1);
	return TEST_SUCCESS;
}

/* Acknowledgements for PSNs droce0 never sent: counted, dropped, harmless. */
static int
test_ghost_acks_and_naks(void)
{
	struct hp_qp *q = W.rc;
	static const uint8_t syns[] = {
		AETH_ACK | AETH_CREDIT_INVALID, AETH_NAK_REM_ACC, AETH_NAK_INV_REQ, AETH_NAK_PSN_SEQ,
		AETH_RNR_NAK | 1, AETH_NAK_REM_OP,
	};
	static const int32_t offs[] = { 0, 1, 5, 0x1000, 0x7fffff, -2, -100, -0x7fffff };
	struct hp_snap s;
	uint32_t k = 0;

	/* nothing outstanding: every PSN but the one before sq_psn is out of the window */
	hp_snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(syns); i++)
		for (unsigned int j = 0; j < RTE_DIM(offs); j++) {
			struct ext a = ext_aeth(syns[i], 7);

			hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, offs[j]), &a, NULL, 0);
			CHECK(hp_inject(&F));
			k++;
		}
	/* the PSN before sq_psn: an ACK of it is a harmless duplicate; a NAK of it is a ghost */
	for (unsigned int i = 1; i < RTE_DIM(syns); i++) {
		struct ext a = ext_aeth(syns[i], 7);

		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
		CHECK(hp_inject(&F));
		k++;
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", k));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(q));
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);

	/* a reserved AETH type */
	hp_snap(&s);
	{
		struct ext a = ext_aeth(0x40, 0);

		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
		CHECK(hp_inject(&F));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_bth", 1));
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);

	/* with a SEND outstanding, an ACK beyond it is still a ghost */
	{
		struct ext a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);

		CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 32, 0x61, 0, 0));
		TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
		hp_snap(&s);
		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, 1), &a, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, "rx_drop_seq", 1));
		CHECK(hp_no_completion(q));
		CHECK(ack_next(q, 0x61));
	}
	CHECK(hp_expect_silence());
	return hp_finish();
}

/* READ responses nobody asked for, or of the wrong size: dropped, nothing written. */
static int
test_read_responses_unexpected_or_wrong(void)
{
	struct hp_qp *q = W.rc;
	static uint8_t d[2 * PMTU];
	struct ext a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ibv_wc wc;
	struct hp_snap s;
	struct frame_info o;

	hp_fill(d, sizeof(d), 18);
	/* nothing outstanding */
	hp_mr_save();
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, psn_add(q->spsn, -1), &a, d, 64);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, q->spsn, NULL, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, psn_add(q->spsn, 100), &a, d, PMTU);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", 3));
	CHECK(hp_mr_same());
	CHECK(hp_no_completion(q));

	/* a SEND outstanding: a READ response for its PSN is not data for it */
	CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0x71, 0, 0));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	hp_mr_save();
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 64);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", 1));
	CHECK(hp_mr_same());
	CHECK(hp_no_completion(q));
	CHECK(ack_next(q, 0x71));

	/* a 100-byte READ outstanding: wrong sizes dropped, the right one lands exactly */
	CHECK(hp_post_send(q, IBV_WR_RDMA_READ, LOC_OFF + 8, 100, 0x72, 0x1000, 0x77));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	CHECK(hp_parse_out(&outf[0], &o));
	TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_REQUEST);
	TEST_ASSERT_EQ(reth_len((const struct roce_reth *)o.ext), 100);
	hp_mr_save();
	hp_snap(&s);
	a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 2);
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 200);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 99);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, q->spsn, &a, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 0);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 4));
	CHECK(hp_mr_same());
	CHECK(hp_no_completion(q));
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, psn_add(q->spsn, 1), &a, d, 100);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", 1));
	CHECK(hp_mr_same());
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, q->qpn, q->spsn, &a, d, 100);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(h_poll(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.byte_len, 100);
	TEST_ASSERT(memcmp(W.buf + LOC_OFF + 8, d, 100) == 0, "READ data");
	CHECK(hp_mr_same_except(LOC_OFF + 8, LOC_OFF + 108));
	q->spsn = psn_add(q->spsn, 1);

	/* a 3-packet READ: a response ahead asks again (once), a short MIDDLE is dropped */
	CHECK(hp_post_send(q, IBV_WR_RDMA_READ, LOC_OFF + 4096, 2500, 0x73, 0x2000, 0x77));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	hp_mr_save();
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d, PMTU);
	CHECK(hp_inject(&F));
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	CHECK(hp_parse_out(&outf[0], &o));
	TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_REQUEST);
	TEST_ASSERT_EQ(o.psn, q->spsn);
	CHECK(hp_mr_same());
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, q->qpn, q->spsn, &a, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d, PMTU - 4);
	CHECK(hp_inject(&G));
	hp_build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, q->qpn, psn_add(q->spsn, 1), NULL, d + PMTU, PMTU);
	CHECK(hp_inject(&G));
	hp_build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST, q->qpn, psn_add(q->spsn, 2), &a, d, 2500 - 2 * PMTU + 4);
	CHECK(hp_inject(&G));
	hp_build(&G, IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST, q->qpn, psn_add(q->spsn, 2), &a, d, 2500 - 2 * PMTU);
	CHECK(hp_inject(&G));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(hp_sdelta(&s, "rx_drop_bad_len"), 2);
	TEST_ASSERT_EQ(h_poll(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 0x73);
	TEST_ASSERT(memcmp(W.buf + LOC_OFF + 4096, d, PMTU) == 0 &&
		    memcmp(W.buf + LOC_OFF + 4096 + PMTU, d + PMTU, PMTU) == 0 &&
		    memcmp(W.buf + LOC_OFF + 4096 + 2 * PMTU, d, 2500 - 2 * PMTU) == 0, "READ data");
	CHECK(hp_mr_same_except(LOC_OFF + 4096, LOC_OFF + 4096 + 2500));
	q->spsn = psn_add(q->spsn, 3);
	CHECK(hp_no_completion(q));
	CHECK(hp_expect_silence());
	return hp_finish();
}

static int
test_atomic_ack_short_or_long(void)
{
	struct hp_qp *q = W.rc;
	struct ext a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ext full = a;
	uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_wc wc;
	struct hp_snap s;
	uint64_t v;

	atmack_init((struct roce_atmack *)(full.b + full.n), 0x0102030405060708ull);
	full.n += ROCE_ATMACK_LEN;
	/* nothing outstanding: a short one is truncated */
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, NULL, 0);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, psn_add(q->spsn, -1), &a, d, 4);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", 2));

	/* a FETCH_ADD outstanding */
	memset(W.buf + LOC_OFF, 0x5a, 16);
	CHECK(hp_post_send(q, IBV_WR_ATOMIC_FETCH_AND_ADD, LOC_OFF, 8, 0x81, 0x3000, 0x77));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	hp_mr_save();
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &a, d, 4);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", 2));
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &full, d, 8);	/* 8 too many */
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 1));
	CHECK(hp_mr_same());
	CHECK(hp_no_completion(q));
	hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, q->qpn, q->spsn, &full, NULL, 0);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(h_poll(q->scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	memcpy(&v, W.buf + LOC_OFF, 8);
	TEST_ASSERT_EQ(v, 0x0102030405060708ull);
	CHECK(hp_mr_same_except(LOC_OFF, LOC_OFF + 8));
	q->spsn = psn_add(q->spsn, 1);
	CHECK(hp_expect_silence());
	return hp_finish();
}

/* A peer that stops answering, or refuses: error completions, ERR, flushes. */
static int
test_dead_or_refusing_peer(void)
{
	struct ibv_wc wc[4];
	struct hp_qp *q;
	struct ext a;

	/* silence: retry_cnt 2 at ~4 ms */
	q = hp_qp_new(IBV_QPT_RC, &(struct hp_qopt){ .timeout = 10, .retry_cnt_p1 = 3 });
	TEST_ASSERT(q != NULL, "QP");
	CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0x91, 0, 0));
	CHECK(hp_post_send(q, IBV_WR_RDMA_WRITE, LOC_OFF, 64, 0x92, 0x1000, 0x77));
	TEST_ASSERT_EQ(h_poll(q->scq, wc, 2, 5000), 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, 0x91);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	CHECK(hp_expect_err_and_flush(q, RX_PER_QP));
	hp_qp_destroy(q);
	hp_drain();

	/* RNR NAKs beyond rnr_retry (1) */
	q = hp_qp_new(IBV_QPT_RC, &(struct hp_qopt){ .rnr_retry_p1 = 2 });
	TEST_ASSERT(q != NULL, "QP");
	CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0xa1, 0, 0));
	a = ext_aeth(AETH_RNR_NAK | 1, 0);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
	}
	TEST_ASSERT_EQ(h_poll(q->scq, wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK(hp_expect_err_and_flush(q, RX_PER_QP));
	hp_qp_destroy(q);
	hp_drain();

	/* a remote access NAK */
	q = hp_qp_new(IBV_QPT_RC, NULL);
	TEST_ASSERT(q != NULL, "QP");
	CHECK(hp_post_send(q, IBV_WR_RDMA_WRITE, LOC_OFF, 64, 0xb1, 0x1000, 0x77));
	CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0xb2, 0, 0));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 2), 2);
	a = ext_aeth(AETH_NAK_REM_ACC, 0);
	hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	TEST_ASSERT_EQ(h_poll(q->scq, wc, 2, 2000), 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, 0xb1);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(wc[1].wr_id, 0xb2);
	CHECK(hp_expect_err_and_flush(q, RX_PER_QP));
	hp_qp_destroy(q);
	return hp_finish();
}

/*
 * RNR NAKs for copies sent before the RNR wait began (resends after local
 * ACK timeouts, answered at once by a responder that was off the CPU): one
 * wait, one count against rnr_retry; the resend after it goes through.
 */
static int
test_rnr_naks_of_earlier_copies_count_once(void)
{
	struct hp_qp *q;
	struct hp_snap s;
	struct ext a;

	/* rnr_retry 1: a second RNR counted would fail the SEND */
	q = hp_qp_new(IBV_QPT_RC, &(struct hp_qopt){ .rnr_retry_p1 = 2 });
	TEST_ASSERT(q != NULL, "QP");
	CHECK(hp_post_send(q, IBV_WR_SEND, LOC_OFF, 64, 0xc1, 0, 0));
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	hp_snap(&s);
	/* three at once, timer 18: a wait of 5.12 ms, which all three fall in */
	a = ext_aeth(AETH_RNR_NAK | 18, 0);
	for (int i = 0; i < 3; i++) {
		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, q->spsn, &a, NULL, 0);
		CHECK(hp_inject(&F));
	}
	CHECK(hp_settle());
	TEST_ASSERT_EQ(hp_sdelta(&s, "rnr_naks_rcvd"), 3);
	CHECK(hp_no_completion(q));
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);
	/* the resend after the wait, then its ACK */
	TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
	CHECK(ack_next(q, 0xc1));
	hp_qp_destroy(q);
	hp_drain();
	return hp_finish();
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_ghost_acks_and_naks),
	TEST_CASE(test_read_responses_unexpected_or_wrong),
	TEST_CASE(test_atomic_ack_short_or_long),
	TEST_CASE(test_dead_or_refusing_peer),
	TEST_CASE(test_rnr_naks_of_earlier_copies_count_once),
};

int
main(int argc, char **argv)
{
	return HP_TEST_MAIN(argc, argv, "hostile_comp", cases);
}
