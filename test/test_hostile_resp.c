/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile requests to droce0's responder (hostile.h has the rig): pad and
 * payload lengths, QPNs that are unknown or of another type, UD Q_Keys,
 * PSNs ahead and behind, opcode sequences, messages longer than the path
 * MTU or the receive buffer, RDMA WRITE, READ and atomic requests outside
 * what their R_Key allows, and an MR deregistered in the middle of a
 * message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "droce_config.h"
#include "harness.h"
#include "hostile.h"

/* Pad count larger than the bytes after the headers; payload on a payload-less opcode. */
static int
test_pad_and_payload_lengths(void)
{
	uint8_t d[8] = { 0 };
	struct hp_snap s;

	hp_snap(&s);
	for (uint32_t n = 0; n < 3; n++) {
		hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, n);
		/* n payload bytes, pad zero bytes stripped: the pad field claims 3 */
		F.len -= (-n & 3);
		frame_ip(&F)->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(frame_ip(&F)->total_length) - (-n & 3));
		frame_udp(&F)->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(frame_udp(&F)->dgram_len) - (-n & 3));
		frame_bth(&F)->flags = (frame_bth(&F)->flags & ~BTH_PAD_MASK) | (3 << 4);
		frame_seal(&F);
		CHECK(hp_inject(&F));
	}
	/* UD: pad 3 over a DETH with nothing after it */
	{
		struct ext x = ext_deth(QKEY, PEER_QPN);

		hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, NULL, 0);
		frame_bth(&F)->flags |= 3 << 4;
		frame_seal(&F);
		CHECK(hp_inject(&F));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_truncated", 4));

	hp_snap(&s);
	{
		struct ext a = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
		struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, 8);

		/* an ACK, a READ request and an ATOMIC_ACK with 4 payload bytes */
		hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, W.rc->qpn, psn_add(W.rc->spsn, -1), &a, d, 4);
		CHECK(hp_inject(&F));
		hp_build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, W.rc->qpn, W.rc->epsn, &r, d, 4);
		CHECK(hp_inject(&F));
		a = ext_cat(a, ext_imm(0));
		a = ext_cat(a, ext_imm(0));
		hp_build(&F, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE, W.rc->qpn, psn_add(W.rc->spsn, -1), &a, d, 4);
		CHECK(hp_inject(&F));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 3));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_no_completion(W.ud));
	TEST_ASSERT_EQ(hp_qp_state(W.rc), IBV_QPS_RTS);
	return hp_finish();
}

static int
test_unknown_or_wrong_type_qpn(void)
{
	uint8_t d[16] = { 0 };
	struct ext deth = ext_deth(QKEY, PEER_QPN);
	struct ext aeth = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 0);
	struct ext reth = ext_reth(hp_va(TGT_OFF), W.mr->rkey, 16);
	struct hp_snap s;
	uint32_t gone, qpns[6];
	struct hp_qp *t = hp_qp_new(IBV_QPT_RC, NULL);

	TEST_ASSERT(t != NULL, "QP");
	gone = t->qpn;
	hp_qp_destroy(t);
	qpns[0] = 0;
	qpns[1] = 1;
	qpns[2] = DROCE_QPN_BASE - 1;
	qpns[3] = DROCE_QPN_BASE + DROCE_MAX_QP - 1;
	qpns[4] = 0xffffff;
	qpns[5] = gone;
	hp_snap(&s);
	for (unsigned int i = 0; i < RTE_DIM(qpns); i++) {
		hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, qpns[i], RQ_PSN, NULL, d, sizeof(d));
		CHECK(hp_inject(&F));
		hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, qpns[i], 0, &deth, d, sizeof(d));
		CHECK(hp_inject(&F));
	}
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_qp", 2 * RTE_DIM(qpns)));

	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.rc->qpn, 0, &deth, d, sizeof(d));
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.uc->qpn, 0, &deth, d, sizeof(d));
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.ud->qpn, 0, NULL, d, sizeof(d));
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_SEND_ONLY, W.uc->qpn, W.uc->epsn, NULL, d, sizeof(d));
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UC_SEND_ONLY, W.rc->qpn, W.rc->epsn, NULL, d, sizeof(d));
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_ACKNOWLEDGE, W.uc->qpn, psn_add(W.uc->spsn, -1), &aeth, NULL, 0);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, W.ud->qpn, 0, &reth, NULL, 0);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, W.uc->qpn, W.uc->epsn, &reth, d, sizeof(d));
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_qp", 8));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_no_completion(W.uc));
	CHECK(hp_no_completion(W.ud));
	return hp_finish();
}

static int
test_ud_qkey_length_and_no_wqe(void)
{
	uint8_t d[UD_MTU + 4];
	struct hp_snap s;
	struct ext x;
	struct hp_qp *small = hp_qp_new(IBV_QPT_UD, &(struct hp_qopt){ .nrecv = 2, .recv_len = 100 });
	struct hp_qp *none = hp_qp_new(IBV_QPT_UD, &(struct hp_qopt){ .nrecv = -1 });

	TEST_ASSERT(small != NULL && none != NULL, "QPs");
	hp_fill(d, sizeof(d), 8);
	hp_snap(&s);
	x = ext_deth(0x22222222, PEER_QPN);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(hp_inject(&F));
	x = ext_deth(0, PEER_QPN);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(hp_inject(&F));
	x = ext_deth(QKEY ^ 0x80000000u, PEER_QPN);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, 32);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_qkey", 3));
	CHECK(hp_no_completion(W.ud));

	/* longer than the IB MTU */
	hp_snap(&s);
	x = ext_deth(QKEY, PEER_QPN);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, UD_MTU + 1);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, W.ud->qpn, 0, &x, d, UD_MTU + 4);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 2));
	CHECK(hp_no_completion(W.ud));

	/* no receive WQE */
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, none->qpn, 0, &x, d, 32);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_wqe", 1));
	CHECK(hp_no_completion(none));

	/* longer than the receive buffer: a local length error, the next WQE is fine */
	hp_mr_save();
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY, small->qpn, 0, &x, d, 100);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	{
		struct ibv_wc wc;

		TEST_ASSERT_EQ(h_poll(small->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	}
	CHECK(hp_mr_same());
	CHECK(hp_inject_send_only(small, 0, d, 100 - ROCE_GRH_LEN));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(small, d, 100 - ROCE_GRH_LEN));
	TEST_ASSERT_EQ(hp_qp_state(small), IBV_QPS_RTS);

	/* the right Q_Key, with immediate data */
	x = ext_cat(ext_deth(QKEY, 0x123456), ext_imm(0xdeadbeef));
	hp_build(&F, IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, W.ud->qpn, 0, &x, d, 32);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	{
		struct ibv_wc wc;

		TEST_ASSERT_EQ(h_poll(W.ud->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.src_qp, 0x123456);
		TEST_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM, "imm");
		TEST_ASSERT_EQ(wc.imm_data, 0xdeadbeef);
		TEST_ASSERT_EQ(wc.byte_len, 32 + ROCE_GRH_LEN);
	}
	CHECK(hp_expect_silence());
	return hp_finish();
}

/* PSN ahead: one NAK (sequence error) for the gap, not one per packet. */
static int
test_rc_psn_ahead_naks_once(void)
{
	struct hp_qp *q = W.rc;
	uint8_t d[32];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 10);
	hp_snap(&s);
	for (uint32_t i = 0; i < 5; i++)
		CHECK(hp_inject_send_only(q, psn_add(q->epsn, 10 + i), d, sizeof(d)));
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, 0x7fffff), d, sizeof(d)));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", 6));
	TEST_ASSERT_EQ(hp_sdelta(&s, "naks_sent"), 1);
	CHECK(hp_expect_aeth(q->epsn, AETH_NAK_PSN_SEQ));
	CHECK(hp_no_completion(q));
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);

	/* the expected PSN is taken; a new gap NAKs again */
	CHECK(hp_inject_send_only(q, q->epsn, d, sizeof(d)));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, sizeof(d)));
	CHECK(hp_expect_aeth(q->epsn, AETH_ACK));
	q->epsn = psn_add(q->epsn, 1);
	hp_snap(&s);
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, 3), d, sizeof(d)));
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, 4), d, sizeof(d)));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_seq", 2));
	CHECK(hp_expect_aeth(q->epsn, AETH_NAK_PSN_SEQ));
	CHECK(hp_no_completion(q));
	return hp_finish();
}

/* PSN behind: acknowledged again, never applied again. */
static int
test_rc_duplicates_reacked_not_reapplied(void)
{
	struct hp_qp *q = W.rc;
	uint8_t d[32], e[32];
	struct ext r;
	struct hp_snap s;
	uint32_t p0 = q->epsn;

	hp_fill(d, sizeof(d), 11);
	hp_fill(e, sizeof(e), 12);
	CHECK(hp_inject_send_only(q, p0, d, sizeof(d)));
	r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, sizeof(d));
	hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, q->qpn, psn_add(p0, 1), &r, d, sizeof(d));
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, sizeof(d)));
	TEST_ASSERT(memcmp(W.buf + TGT_OFF, d, sizeof(d)) == 0, "WRITE applied");
	{
		/* one coalesced ACK, or two (--lcore may split the burst) */
		int n = hp_collect_n(outf, OUT_MAX, 1);
		struct frame_info o;

		TEST_ASSERT(n == 1 || n == 2, "%d ACKs", n);
		CHECK(hp_parse_out(&outf[n - 1], &o));
		TEST_ASSERT_EQ(o.psn, psn_add(p0, 1));
	}
	q->epsn = psn_add(p0, 2);

	hp_mr_save();
	hp_snap(&s);
	CHECK(hp_inject_send_only(q, p0, e, sizeof(e)));
	CHECK(hp_settle());
	CHECK(hp_expect_aeth(psn_add(q->epsn, -1), AETH_ACK));
	hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, q->qpn, psn_add(p0, 1), &r, e, sizeof(e));
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_expect_aeth(psn_add(q->epsn, -1), AETH_ACK));
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, -1000), e, sizeof(e)));
	CHECK(hp_settle());
	CHECK(hp_expect_aeth(psn_add(q->epsn, -1), AETH_ACK));
	CHECK(hp_drops_only(&s, NULL, 0));
	TEST_ASSERT_EQ(hp_sdelta(&s, "rx_dup"), 3);
	CHECK(hp_mr_same());
	CHECK(hp_no_completion(q));
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);
	return hp_finish();
}

/* An RC opcode-sequence or length violation: NAK (invalid request), ERR, flush. */
static int
rc_killed_by(const char *what, const struct frame *fs, int nf, int nok, uint8_t syn,
	     const char *counter)
{
	struct hp_qp *q = hp_qp_new(IBV_QPT_RC, NULL);
	struct frame *f = malloc(sizeof(*f));
	struct hp_snap s;
	uint32_t bad_psn;
	int ret = -1;

	if (q == NULL || f == NULL)
		goto out;
	hp_mr_save();
	hp_snap(&s);
	for (int i = 0; i < nf; i++) {
		*f = fs[i];
		/* retarget the template at this QP and its PSNs */
		frame_bth(f)->qpn = rte_cpu_to_be_32(q->qpn);
		frame_bth(f)->apsn = rte_cpu_to_be_32((rte_be_to_cpu_32(frame_bth(f)->apsn) & 0xff000000u) |
						  psn_add(q->epsn, i));
		frame_seal(f);
		if (hp_inject(f))
			goto out;
	}
	bad_psn = psn_add(q->epsn, nok);
	if (hp_settle())
		goto out;
	if (counter != NULL ? hp_drops_only(&s, counter, 1) : hp_drops_only(&s, NULL, 0))
		goto out;
	if (hp_sdelta(&s, "naks_sent") != 1) {
		fprintf(stderr, "  naks_sent moved by %" PRIu64 "\n", hp_sdelta(&s, "naks_sent"));
		goto out;
	}
	if (hp_expect_nak(bad_psn, syn))
		goto out;
	if (hp_expect_err_and_flush(q, RX_PER_QP))
		goto out;
	/* in ERR, requests are dropped as such */
	hp_snap(&s);
	if (hp_inject_send_only(q, psn_add(bad_psn, 1), f->b, 8) || hp_settle() ||
	    hp_drops_only(&s, "rx_drop_qp_state", 1) || hp_expect_silence())
		goto out;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "  case: %s\n", what);
	free(f);
	hp_qp_destroy(q);
	return ret;
}

static void
tmpl(struct frame *f, uint8_t op, const struct ext *x, const uint8_t *d, uint32_t len)
{
	hp_build(f, op, 0, 0, x, d, len);
}

static int
test_rc_opcode_sequence_errors(void)
{
	static uint8_t d[2 * PMTU];
	struct frame *fs = calloc(3, sizeof(*fs));
	struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, 3 * PMTU);

	TEST_ASSERT(fs != NULL, "alloc");
	hp_fill(d, sizeof(d), 13);
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_MIDDLE first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_LAST, NULL, d, 16);
	CHECK(rc_killed_by("SEND_LAST first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("WRITE_MIDDLE first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, &(struct ext){ .n = 4 }, d, 16);
	CHECK(rc_killed_by("WRITE_LAST_IMM first", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_FIRST, SEND_FIRST", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_ONLY, NULL, d, 16);
	CHECK(rc_killed_by("SEND_FIRST, SEND_ONLY", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, PMTU);
	CHECK(rc_killed_by("SEND_FIRST, WRITE_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_READ_REQUEST, &r, NULL, 0);
	CHECK(rc_killed_by("SEND_FIRST, READ", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, &r, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_LAST, NULL, d, 16);
	CHECK(rc_killed_by("WRITE_FIRST, SEND_LAST", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	/* only the last packet may be shorter than the path MTU */
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU / 2);
	CHECK(rc_killed_by("short SEND_FIRST", fs, 1, 0, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_MIDDLE, NULL, d, PMTU - 4);
	CHECK(rc_killed_by("short SEND_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, &r, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_MIDDLE, NULL, d, 8);
	CHECK(rc_killed_by("short WRITE_MIDDLE", fs, 2, 1, AETH_NAK_INV_REQ, "rx_drop_bad_len"));
	/*
	 * a LAST after a FIRST carries 1 to PMTU bytes: the packet that ends a
	 * message is its LAST (a WRITE's last byte is stored last in it), so an
	 * empty LAST after packets that ended the length is an invalid request
	 */
	{
		struct ext r1 = ext_reth(hp_va(TGT_OFF), W.mr->rkey, PMTU);

		tmpl(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, &r1, d, PMTU);
		tmpl(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST, NULL, d, 0);
		CHECK(rc_killed_by("WRITE_FIRST, empty WRITE_LAST", fs, 2, 1, AETH_NAK_INV_REQ,
				   "rx_drop_bad_len"));
	}
	tmpl(&fs[0], IBV_OPCODE_RC_SEND_FIRST, NULL, d, PMTU);
	tmpl(&fs[1], IBV_OPCODE_RC_SEND_LAST, NULL, d, 0);
	CHECK(rc_killed_by("SEND_FIRST, empty SEND_LAST", fs, 2, 1, AETH_NAK_INV_REQ,
			   "rx_drop_bad_len"));
	free(fs);

	/* a message longer than the receive buffer (4136 bytes): LOC_LEN_ERR, NAK, ERR */
	{
		struct hp_qp *q = hp_qp_new(IBV_QPT_RC, NULL);
		struct ibv_wc wc;
		struct hp_snap s;

		TEST_ASSERT(q != NULL, "QP");
		hp_mr_save();
		hp_snap(&s);
		for (uint32_t i = 0; i < 5; i++) {
			hp_build(&F, i ? IBV_OPCODE_RC_SEND_MIDDLE : IBV_OPCODE_RC_SEND_FIRST, q->qpn,
			      psn_add(q->epsn, i), NULL, d, PMTU);
			CHECK(hp_inject(&F));
		}
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, NULL, 0));
		CHECK(hp_expect_nak(psn_add(q->epsn, 4), AETH_NAK_INV_REQ));
		TEST_ASSERT_EQ(h_poll(q->rcq, &wc, 1, 2000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
		/* the receive buffer may hold part of it; its neighbour may not */
		CHECK(hp_mr_same_except(q->area * QP_AREA, q->area * QP_AREA + RECV_LEN));
		CHECK(hp_expect_err_and_flush(q, RX_PER_QP - 1));
		hp_qp_destroy(q);
	}
	return hp_finish();
}

/* Longer than the path MTU: dropped (bad length), the QP keeps going. */
static int
test_payload_longer_than_path_mtu(void)
{
	static uint8_t d[PMTU + 4];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 14);
	hp_snap(&s);
	CHECK(hp_inject_send_only(W.rc, W.rc->epsn, d, PMTU + 1));
	CHECK(hp_inject_send_only(W.rc, W.rc->epsn, d, PMTU + 4));
	CHECK(hp_inject_send_only(W.uc, W.uc->epsn, d, PMTU + 1));
	hp_build(&F, IBV_OPCODE_RC_SEND_FIRST, W.rc->qpn, W.rc->epsn, NULL, d, PMTU + 4);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 4));
	CHECK(hp_no_completion(W.rc));
	CHECK(hp_no_completion(W.uc));
	TEST_ASSERT_EQ(hp_qp_state(W.rc), IBV_QPS_RTS);
	TEST_ASSERT_EQ(hp_qp_state(W.uc), IBV_QPS_RTS);
	hp_drain();
	/* exactly one MTU is fine on both */
	CHECK(hp_inject_send_only(W.rc, W.rc->epsn, d, PMTU));
	CHECK(hp_inject_send_only(W.uc, W.uc->epsn, d, PMTU));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(W.rc, d, PMTU));
	CHECK(hp_expect_recv(W.uc, d, PMTU));
	CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
	return hp_finish();
}

/*
 * A UC RDMA WRITE of a RETH length of PMTU + 16 from @psn: WRITE_FIRST of
 * PMTU bytes of @d, then WRITE_LAST_WITH_IMMEDIATE of @last bytes.
 */
static int
inject_uc_write_imm(struct hp_qp *q, uint32_t psn, const uint8_t *d, uint32_t last)
{
	struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, PMTU + 16);

	hp_build(&F, IBV_OPCODE_UC_RDMA_WRITE_FIRST, q->qpn, psn, &r, d, PMTU);
	if (hp_inject(&F))
		return -1;
	hp_build(&F, IBV_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, q->qpn, psn_add(psn, 1),
		 &(struct ext){ .n = 4 }, d, last);
	return hp_inject(&F);
}

/* UC: sequence errors drop the message silently, the next one arrives. */
static int
test_uc_sequence_errors_drop_message(void)
{
	struct hp_qp *q = W.uc;
	static uint8_t d[2 * PMTU];
	struct hp_snap s;

	hp_fill(d, sizeof(d), 15);
	hp_snap(&s);
	hp_build(&F, IBV_OPCODE_UC_SEND_MIDDLE, q->qpn, q->epsn, NULL, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UC_SEND_LAST, q->qpn, psn_add(q->epsn, 1), NULL, d, 16);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_bad_len", 1));
	CHECK(hp_expect_silence());
	CHECK(hp_no_completion(q));
	q->epsn = psn_add(q->epsn, 2);
	/* FIRST, then a FIRST: the second message is dropped with the first */
	hp_build(&F, IBV_OPCODE_UC_SEND_FIRST, q->qpn, q->epsn, NULL, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UC_SEND_FIRST, q->qpn, psn_add(q->epsn, 1), NULL, d, PMTU);
	CHECK(hp_inject(&F));
	hp_build(&F, IBV_OPCODE_UC_SEND_LAST, q->qpn, psn_add(q->epsn, 2), NULL, d, 16);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_no_completion(q));
	q->epsn = psn_add(q->epsn, 3);
	CHECK(hp_inject_send_only(q, q->epsn, d, 64));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, 64));
	CHECK(hp_expect_silence());
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);

	/* WRITE_LAST_IMM with no receive WQE: that message is dropped, not the next */
	q = hp_qp_new(IBV_QPT_UC, &(struct hp_qopt){ .nrecv = -1 });
	TEST_ASSERT(q != NULL, "QP");
	hp_snap(&s);
	CHECK(inject_uc_write_imm(q, q->epsn, d, 16));
	CHECK(hp_settle());
	CHECK(hp_drops_only(&s, "rx_drop_no_wqe", 1));
	CHECK(hp_post_recvs(q, 1));
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, 2), d, 64));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d, 64));
	CHECK(hp_expect_silence());

	/*
	 * WRITE_LAST_IMM short of its RETH length takes the one receive WQE,
	 * then fails: the message is dropped, the WQE stays for the next one
	 * (it was given up with no completion: the WR lost)
	 */
	CHECK(hp_post_recvs(q, 1));
	q->epsn = psn_add(q->epsn, 3);
	CHECK(inject_uc_write_imm(q, q->epsn, d, 8));
	CHECK(hp_settle());
	CHECK(hp_no_completion(q));
	CHECK(hp_inject_send_only(q, psn_add(q->epsn, 2), d + 1, 64));
	CHECK(hp_settle());
	CHECK(hp_expect_recv(q, d + 1, 64));
	CHECK(hp_expect_silence());
	TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);
	hp_qp_destroy(q);
	return hp_finish();
}

/* RDMA WRITE outside what the R_Key allows: remote access NAK, ERR, nothing written. */
static int
test_rdma_write_bad_reth(void)
{
	static uint8_t d[64];
	struct frame *fs = calloc(2, sizeof(*fs));
	struct {
		const char *what;
		uint64_t va;
		uint32_t rkey, len, paylen;
		uint8_t syn;
	} c[] = {
		{ "length beyond the MR", hp_va(0), W.mr->rkey, MR_LEN + 1, 16, AETH_NAK_REM_ACC },
		{ "last bytes beyond the MR", hp_va(MR_LEN - 8), W.mr->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "before the MR", hp_va(0) - 8, W.mr->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "va+len wraps 2^64", UINT64_MAX - 15, W.mr->rkey, 64, 16, AETH_NAK_REM_ACC },
		{ "va+len wraps 2^64 (2)", UINT64_MAX - 0x7fff, W.mr->rkey, 0x10000, 16, AETH_NAK_REM_ACC },
		{ "4 GiB - 1", hp_va(TGT_OFF), W.mr->rkey, UINT32_MAX, 16, AETH_NAK_REM_ACC },
		{ "rkey 0", hp_va(TGT_OFF), 0, 16, 16, AETH_NAK_REM_ACC },
		{ "unknown rkey", hp_va(TGT_OFF), W.mr->rkey + (1u << 16), 16, 16, AETH_NAK_REM_ACC },
		{ "stale generation", hp_va(TGT_OFF), W.mr->rkey ^ 0x80, 16, 16, AETH_NAK_REM_ACC },
		{ "rkey of another PD", (uintptr_t)W.buf2, W.mr2->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "rkey without remote write", (uintptr_t)W.buf3, W.mr3->rkey, 16, 16, AETH_NAK_REM_ACC },
		{ "payload beyond the RETH length", hp_va(TGT_OFF), W.mr->rkey, 16, 32, AETH_NAK_INV_REQ },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	hp_fill(d, sizeof(d), 16);
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext r = ext_reth(c[i].va, c[i].rkey, c[i].len);

		hp_build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_ONLY, 0, 0, &r, d, c[i].paylen);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
		CHECK(hp_mr_same());
		CHECK(hp_memory_intact());
	}
	/* WRITE_ONLY_WITH_IMM too */
	{
		struct ext r = ext_cat(ext_reth(hp_va(MR_LEN - 8), W.mr->rkey, 16), ext_imm(1));

		hp_build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, 0, &r, d, 16);
		CHECK(rc_killed_by("WRITE_ONLY_IMM beyond the MR", fs, 1, 0, AETH_NAK_REM_ACC, NULL));
		CHECK(hp_mr_same());
	}
	/* FIRST within its RETH, LAST carrying more than the RETH has left */
	{
		static uint8_t big[PMTU];
		struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, PMTU + 16);

		hp_fill(big, sizeof(big), 17);
		hp_build(&fs[0], IBV_OPCODE_RC_RDMA_WRITE_FIRST, 0, 0, &r, big, PMTU);
		hp_build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST, 0, 0, NULL, d, 32);
		CHECK(rc_killed_by("LAST beyond the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(hp_mr_same_except(TGT_OFF, TGT_OFF + PMTU));
		/* LAST leaving part of the RETH length unwritten */
		hp_build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST, 0, 0, NULL, d, 8);
		CHECK(rc_killed_by("LAST short of the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(hp_mr_same_except(TGT_OFF, TGT_OFF + PMTU + 8));
		/* the same with immediate data: the receive WQE it took still flushes */
		hp_build(&fs[1], IBV_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0, 0,
		      &(struct ext){ .n = 4 }, d, 8);
		CHECK(rc_killed_by("LAST_IMM short of the RETH length", fs, 2, 1, AETH_NAK_INV_REQ, NULL));
		CHECK(hp_mr_same_except(TGT_OFF, TGT_OFF + PMTU + 8));
	}
	/* C9-88: a zero-length WRITE has no R_Key to check; it is acknowledged */
	{
		struct ext r = ext_reth(0, 0, 0);
		struct hp_snap s;

		hp_mr_save();
		hp_snap(&s);
		hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_ONLY, W.rc->qpn, W.rc->epsn, &r, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, NULL, 0));
		CHECK(hp_expect_aeth(W.rc->epsn, AETH_ACK));
		CHECK(hp_mr_same());
		CHECK(hp_no_completion(W.rc));
		TEST_ASSERT_EQ(hp_qp_state(W.rc), IBV_QPS_RTS);
	}
	free(fs);
	return hp_finish();
}

static int
test_rdma_read_bad_requests(void)
{
	struct frame *fs = calloc(8, sizeof(*fs));
	struct {
		const char *what;
		uint64_t va;
		uint32_t rkey, len;
		uint8_t syn;
	} c[] = {
		{ "2^31 bytes", hp_va(0), W.mr->rkey, 1u << 31, AETH_NAK_REM_ACC },
		{ "4 GiB - 1 (longer than a message)", hp_va(0), W.mr->rkey, UINT32_MAX, AETH_NAK_INV_REQ },
		{ "beyond the MR", hp_va(MR_LEN - 64), W.mr->rkey, 65, AETH_NAK_REM_ACC },
		{ "before the MR", hp_va(0) - 1, W.mr->rkey, 8, AETH_NAK_REM_ACC },
		{ "va+len wraps", UINT64_MAX - 3, W.mr->rkey, 8, AETH_NAK_REM_ACC },
		{ "rkey 0", hp_va(0), 0, 8, AETH_NAK_REM_ACC },
		{ "rkey of another PD", (uintptr_t)W.buf2, W.mr2->rkey, 8, AETH_NAK_REM_ACC },
		{ "rkey without remote read", (uintptr_t)W.buf3, W.mr3->rkey, 8, AETH_NAK_REM_ACC },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext r = ext_reth(c[i].va, c[i].rkey, c[i].len);

		hp_build(&fs[0], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
	}
	/* longer than a message may be (2^31), inside a 4 GiB MR: invalid request */
	{
		size_t len = (4ull << 30) + SMALL_LEN;
		void *big = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct ibv_mr *mr;

		TEST_ASSERT(big != MAP_FAILED, "mmap 4 GiB");
		mr = ibv_reg_mr(W.pd, big, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (mr == NULL)
			munmap(big, len);
		TEST_ASSERT(mr != NULL, "4 GiB MR");
		for (int i = 0; i < 2; i++) {
			struct ext r = ext_reth((uintptr_t)big, mr->rkey, i ? UINT32_MAX : (1u << 31) + 1);
			int ret;

			hp_build(&fs[0], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
			ret = rc_killed_by(i ? "READ of 4 GiB - 1" : "READ of 2^31 + 1", fs, 1, 0,
					   AETH_NAK_INV_REQ, NULL);
			if (ret) {
				ibv_dereg_mr(mr);
				munmap(big, len);
			}
			CHECK(ret);
		}
		ibv_dereg_mr(mr);
		munmap(big, len);
	}
	/* more READs at once than max_dest_rd_atomic (4) */
	if (h_inline()) {
		for (int i = 0; i < 5; i++) {
			struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, 8);

			hp_build(&fs[i], IBV_OPCODE_RC_RDMA_READ_REQUEST, 0, 0, &r, NULL, 0);
		}
		/*
		 * The first four are answered before the NAK; rc_killed_by wants
		 * exactly one frame, so check this one by hand.
		 */
		{
			struct hp_qp *q = hp_qp_new(IBV_QPT_RC, NULL);
			int n, naks = 0, resps = 0;
			struct frame_info o;

			TEST_ASSERT(q != NULL, "QP");
			for (int i = 0; i < 5; i++) {
				frame_bth(&fs[i])->qpn = rte_cpu_to_be_32(q->qpn);
				frame_bth(&fs[i])->apsn = rte_cpu_to_be_32(1u << 31 | psn_add(q->epsn, i));
				frame_seal(&fs[i]);
				CHECK(hp_inject(&fs[i]));
			}
			CHECK(hp_settle());
			n = hp_collect(outf, OUT_MAX);
			for (int i = 0; i < n; i++) {
				CHECK(hp_parse_out(&outf[i], &o));
				if (o.op == IBV_OPCODE_RC_ACKNOWLEDGE && o.syn == AETH_NAK_INV_REQ &&
				    o.psn == psn_add(q->epsn, 4))
					naks++;
				else if (o.op == IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY)
					resps++;
			}
			TEST_ASSERT_EQ(naks, 1);
			TEST_ASSERT(resps <= 4, "%d READ responses", resps);
			CHECK(hp_expect_err_and_flush(q, RX_PER_QP));
			hp_qp_destroy(q);
		}
	}
	free(fs);

	/* a valid 3-packet READ and a zero-length READ */
	{
		struct hp_qp *q = W.rc;
		struct ext r = ext_reth(hp_va(TGT_OFF + 100), W.mr->rkey, 3000);
		struct frame_info o;
		int n;

		hp_build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, q->qpn, q->epsn, &r, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		n = hp_collect_n(outf, OUT_MAX, 3);
		TEST_ASSERT_EQ(n, 3);
		for (int i = 0; i < 3; i++) {
			static const uint8_t ops[3] = { IBV_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
							IBV_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
							IBV_OPCODE_RC_RDMA_READ_RESPONSE_LAST };
			uint32_t len = i < 2 ? PMTU : 3000 - 2 * PMTU;

			CHECK(hp_parse_out(&outf[i], &o));
			TEST_ASSERT_EQ(o.op, ops[i]);
			TEST_ASSERT_EQ(o.psn, psn_add(q->epsn, i));
			TEST_ASSERT_EQ(o.paylen, len);
			TEST_ASSERT(memcmp(o.pay, W.buf + TGT_OFF + 100 + i * PMTU, len) == 0, "READ data");
		}
		q->epsn = psn_add(q->epsn, 3);
		r = ext_reth(0, 0, 0);
		hp_build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, q->qpn, q->epsn, &r, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
		CHECK(hp_parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);
		TEST_ASSERT_EQ(o.paylen, 0);
		TEST_ASSERT_EQ(o.psn, q->epsn);
		q->epsn = psn_add(q->epsn, 1);
		TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);
		CHECK(hp_no_completion(q));
	}
	/* a READ request on UC is not an opcode UC has */
	{
		struct ext r = ext_reth(hp_va(TGT_OFF), W.mr->rkey, 8);
		struct hp_snap s;

		hp_snap(&s);
		hp_build(&F, IBV_OPCODE_UC + IBV_OPCODE_RDMA_READ_REQUEST, W.uc->qpn, W.uc->epsn, &r, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		CHECK(hp_drops_only(&s, "rx_drop_bad_bth", 1));
		CHECK(hp_expect_silence());
	}
	return hp_finish();
}

static int
test_atomic_bad_requests(void)
{
	struct frame *fs = calloc(1, sizeof(*fs));
	struct {
		const char *what;
		uint8_t op;
		uint64_t va;
		uint32_t rkey;
		uint8_t syn;
	} c[] = {
		{ "unaligned FETCH_ADD", IBV_OPCODE_RC_FETCH_ADD, hp_va(TGT_OFF + 4), W.mr->rkey, AETH_NAK_INV_REQ },
		{ "unaligned CMP_SWAP", IBV_OPCODE_RC_COMPARE_SWAP, hp_va(TGT_OFF + 1), W.mr->rkey, AETH_NAK_INV_REQ },
		{ "atomic beyond the MR", IBV_OPCODE_RC_FETCH_ADD, hp_va(MR_LEN - 4), W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic at the MR's end", IBV_OPCODE_RC_FETCH_ADD, hp_va(MR_LEN), W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic wrapping 2^64", IBV_OPCODE_RC_COMPARE_SWAP, UINT64_MAX - 7, W.mr->rkey, AETH_NAK_REM_ACC },
		{ "atomic with rkey 0", IBV_OPCODE_RC_FETCH_ADD, hp_va(TGT_OFF), 0, AETH_NAK_REM_ACC },
		{ "atomic on another PD", IBV_OPCODE_RC_FETCH_ADD, (uintptr_t)W.buf2, W.mr2->rkey, AETH_NAK_REM_ACC },
		{ "atomic without remote atomic", IBV_OPCODE_RC_FETCH_ADD, (uintptr_t)W.buf3, W.mr3->rkey, AETH_NAK_REM_ACC },
	};

	TEST_ASSERT(fs != NULL, "alloc");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ext x = ext_atm(c[i].va, c[i].rkey, 0x1111, 0);

		hp_mr_save();
		hp_build(&fs[0], c[i].op, 0, 0, &x, NULL, 0);
		CHECK(rc_killed_by(c[i].what, fs, 1, 0, c[i].syn, NULL));
		CHECK(hp_mr_same());
		CHECK(hp_memory_intact());
	}
	/*
	 * An MR whose iova is aligned differently from its address (found by
	 * fuzz_rx): an aligned VA is unaligned memory, where an 8-byte atomic
	 * is not atomic (or faults). Refused as unaligned, memory untouched.
	 */
	{
		struct ibv_mr *odd = ibv_reg_mr_iova(W.pd, W.buf + TGT_OFF, 4096, 0x1003,
						     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
		struct ext x;

		TEST_ASSERT(odd != NULL, "ibv_reg_mr_iova: %s", strerror(errno));
		x = ext_atm(0x1008, odd->rkey, 0x1111, 0);
		hp_mr_save();
		hp_build(&fs[0], IBV_OPCODE_RC_FETCH_ADD, 0, 0, &x, NULL, 0);
		CHECK(rc_killed_by("atomic on unaligned memory", fs, 1, 0, AETH_NAK_INV_REQ, NULL));
		CHECK(hp_mr_same());
		TEST_ASSERT_EQ(ibv_dereg_mr(odd), 0);
	}
	free(fs);
	/* a valid FETCH_ADD, then its duplicate: replayed, not applied twice */
	{
		struct hp_qp *q = W.rc;
		uint64_t v0, v1;
		struct ext x = ext_atm(hp_va(TGT_OFF + 8), W.mr->rkey, 3, 0);
		struct frame_info o;

		memcpy(&v0, W.buf + TGT_OFF + 8, 8);
		hp_build(&F, IBV_OPCODE_RC_FETCH_ADD, q->qpn, q->epsn, &x, NULL, 0);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
		CHECK(hp_parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE);
		TEST_ASSERT_EQ(atmack_orig((const struct roce_atmack *)(o.ext + ROCE_AETH_LEN)), v0);
		memcpy(&v1, W.buf + TGT_OFF + 8, 8);
		TEST_ASSERT_EQ(v1, v0 + 3);
		CHECK(hp_inject(&F));
		CHECK(hp_settle());
		TEST_ASSERT_EQ(hp_collect_n(outf, OUT_MAX, 1), 1);
		CHECK(hp_parse_out(&outf[0], &o));
		TEST_ASSERT_EQ(o.op, IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE);
		TEST_ASSERT_EQ(atmack_orig((const struct roce_atmack *)(o.ext + ROCE_AETH_LEN)), v0);
		memcpy(&v1, W.buf + TGT_OFF + 8, 8);
		TEST_ASSERT_EQ(v1, v0 + 3);
		q->epsn = psn_add(q->epsn, 1);
		TEST_ASSERT_EQ(hp_qp_state(q), IBV_QPS_RTS);
	}
	return hp_finish();
}

/*
 * The application deregisters an MR while the peer is in the middle of a
 * multi-packet RDMA WRITE into it, or while READ responses from it are still
 * owed: nothing more may land in, or be read from, memory that is no longer
 * registered: the responder checks the R_Key again on every packet.
 */
static int
test_mr_deregistered_mid_message(void)
{
	struct hp_qp *q = W.rc;
	static uint8_t d[PMTU];
	struct ibv_mr *mr;
	struct ext r;
	int n, leaked = 0;

	hp_fill(d, sizeof(d), 31);
	mr = ibv_reg_mr(W.pd, W.buf + TGT_OFF, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	TEST_ASSERT(mr != NULL, "MR");
	hp_mr_save();
	r = ext_reth(hp_va(TGT_OFF), mr->rkey, 2 * PMTU);
	hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_FIRST, q->qpn, q->epsn, &r, d, PMTU);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	ibv_dereg_mr(mr);
	hp_build(&F, IBV_OPCODE_RC_RDMA_WRITE_LAST, q->qpn, psn_add(q->epsn, 1), NULL, d, PMTU);
	CHECK(hp_inject(&F));
	CHECK(hp_settle());
	CHECK(hp_mr_same_except(TGT_OFF, TGT_OFF + PMTU));
	CHECK(hp_expect_nak(psn_add(q->epsn, 1), AETH_NAK_REM_ACC));
	CHECK(hp_expect_err_and_flush(q, RX_PER_QP));

	/* READ: 64 responses, 32 sent per iteration; the MR goes after the first batch */
	if (h_inline()) {
		struct hp_qp *t = hp_qp_new(IBV_QPT_RC, NULL);
		uint64_t rx;
		struct frame_info o;

		TEST_ASSERT(t != NULL, "QP");
		mr = ibv_reg_mr(W.pd, W.buf + TGT_OFF, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ);
		TEST_ASSERT(mr != NULL, "MR");
		memset(W.buf + TGT_OFF, 0x11, SMALL_LEN);
		r = ext_reth(hp_va(TGT_OFF), mr->rkey, SMALL_LEN);
		hp_build(&F, IBV_OPCODE_RC_RDMA_READ_REQUEST, t->qpn, t->epsn, &r, NULL, 0);
		rx = hp_stat("rx_pkts");
		CHECK(hp_inject(&F));
		while (hp_stat("rx_pkts") == rx)
			hp_progress();
		ibv_dereg_mr(mr);
		memset(W.buf + TGT_OFF, 0xee, SMALL_LEN);	/* the memory gets reused */
		n = hp_collect(outf, OUT_MAX);
		for (int i = 0; i < n && i < OUT_MAX; i++) {
			CHECK(hp_parse_out(&outf[i], &o));
			for (uint32_t j = 0; j < o.paylen; j++)
				leaked += o.pay[j] == 0xee;
		}
		TEST_ASSERT(leaked == 0, "%d bytes of deregistered memory sent in READ responses", leaked);
		hp_fill(W.buf + TGT_OFF, SMALL_LEN, 1);
		hp_qp_destroy(t);
	}
	return hp_finish();
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_pad_and_payload_lengths),
	TEST_CASE(test_unknown_or_wrong_type_qpn),
	TEST_CASE(test_ud_qkey_length_and_no_wqe),
	TEST_CASE(test_rc_psn_ahead_naks_once),
	TEST_CASE(test_rc_duplicates_reacked_not_reapplied),
	TEST_CASE(test_rc_opcode_sequence_errors),
	TEST_CASE(test_payload_longer_than_path_mtu),
	TEST_CASE(test_uc_sequence_errors_drop_message),
	TEST_CASE(test_rdma_write_bad_reth),
	TEST_CASE(test_rdma_read_bad_requests),
	TEST_CASE(test_atomic_bad_requests),
	TEST_CASE(test_mr_deregistered_mid_message),
};

int
main(int argc, char **argv)
{
	return HP_TEST_MAIN(argc, argv, "hostile_resp", cases);
}
