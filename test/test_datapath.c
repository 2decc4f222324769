/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path through the verbs API: RC, UC and UD SEND / SEND_WITH_IMM across
 * message sizes, gather and scatter lists, inline sends, RDMA WRITE (with and
 * without immediate), a long streaming run, loopback on one device, PSN wrap
 * and RNR. Every payload is compared byte for byte at the receiver, and the
 * bytes around each receive buffer are checked for overruns.
 *
 * Run with --inline (progress made by post/poll) or --lcore (engine lcore).
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

#define MIB		(1u << 20)
#define WC_MS		5000	/* wait for one expected completion */
#define QUIET_MS	100	/* window in which no completion may appear */
#define GUARD		64	/* bytes checked after each receive buffer */
#define GUARD_BYTE	0xa5
#define DIM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A case makes its objects through h_res_* (harness.h); h_res_release, the
 * suite's teardown, destroys them whatever happened.
 */

/* A second MR over @s's whole buffer, addressed from @iova. */
static struct ibv_mr *
mk_iova_mr(struct h_side *s, uint64_t iova)
{
	return h_res_add_mr(ibv_reg_mr_iova(s->pd, s->buf, s->buf_len, iova,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
}

/* ------------------------------------------------------------------------- */
/* Helpers */

static struct ibv_sge
sge_of(const struct h_side *s, size_t off, uint32_t len)
{
	struct ibv_sge g = { (uintptr_t)s->buf + off, len, s->mr->lkey };

	return g;
}

static int
post_recv_sges(struct h_side *s, struct ibv_sge *sg, int n, uint64_t wr_id)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n }, *bad = NULL;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* A SEND (or SEND_WITH_IMM when @imm) of @sg; UD sends go to @peer through @ah. */
static int
post_send_sges(struct h_side *s, struct ibv_sge *sg, int n, uint64_t wr_id, bool imm,
	       uint32_t imm_host, unsigned int flags, struct ibv_ah *ah, const struct h_side *peer)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = n,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = flags | IBV_SEND_SIGNALED,
		.imm_data = htonl(imm_host),
	}, *bad = NULL;

	if (s->qp->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = peer->qp->qp_num;
		wr.wr.ud.remote_qkey = H_QKEY;
	}
	return ibv_post_send(s->qp, &wr, &bad);
}

static int
post_write(struct h_side *s, size_t off, uint32_t len, const struct h_side *peer, size_t roff,
	   uint64_t wr_id, bool imm, uint32_t imm_host)
{
	struct ibv_sge sg = sge_of(s, off, len);
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sg, .num_sge = 1,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm_host),
	}, *bad = NULL;

	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + roff;
	wr.wr.rdma.rkey = peer->mr->rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/* Checks of the two completions of a successful SEND of @len bytes. */
static int
check_send_wcs(const struct h_side *a, const struct h_side *b, const struct ibv_wc *sw,
	       const struct ibv_wc *rw, uint64_t swr, uint64_t rwr, uint32_t len,
	       bool imm, uint32_t imm_host)
{
	bool ud = b->qp->qp_type == IBV_QPT_UD;

	ASSERT_STATUS(*sw, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(sw->wr_id, swr);
	TEST_ASSERT_EQ(sw->opcode, IBV_WC_SEND);
	TEST_ASSERT_EQ(sw->qp_num, a->qp->qp_num);
	ASSERT_STATUS(*rw, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(rw->wr_id, rwr);
	TEST_ASSERT_EQ(rw->opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(rw->qp_num, b->qp->qp_num);
	TEST_ASSERT_EQ(rw->byte_len, len + (ud ? 40 : 0));
	TEST_ASSERT_EQ(!!(rw->wc_flags & IBV_WC_WITH_IMM), imm);
	if (imm)
		TEST_ASSERT_EQ(ntohl(rw->imm_data), imm_host);
	if (ud) {
		TEST_ASSERT(rw->wc_flags & IBV_WC_GRH, "UD receive without IBV_WC_GRH (flags 0x%x)",
			    rw->wc_flags);
		TEST_ASSERT_EQ(rw->src_qp, a->qp->qp_num);
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* SEND and SEND_WITH_IMM of every size */

static const uint32_t send_sizes_tbl[] = {
	0, 1, 63, 1023, 1024, 1025, 4096, 65537, MIB,
};

static int
send_sizes(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .buf_len = MIB + 16384, .sq_sig_all = 0 };
	bool ud = type == IBV_QPT_UD;
	const size_t soff = 3, roff = 5;	/* odd offsets on purpose */
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	uint8_t *exp = malloc(MIB);
	int id = 0;

	TEST_ASSERT(exp != NULL, "malloc");
	if (h_res_pair(&a, &b, &o, false) != 0) {
		free(exp);
		TEST_ASSERT(0, "pair setup failed");
	}
	if (ud && (ah = h_res_ah(a, b)) == NULL) {
		free(exp);
		TEST_ASSERT(0, "create_ah failed");
	}
	for (size_t k = 0; k < DIM(send_sizes_tbl); k++) {
		uint32_t len = send_sizes_tbl[k];

		if (ud && len > 4096)
			continue;	/* UD: one packet, the port MTU */
		for (int imm = 0; imm <= 1; imm++) {
			uint32_t rlen = len + (ud ? 40 : 0);
			uint32_t seed = len * 31u + imm + 1;
			uint32_t immv = 0xc0de0000u | (uint32_t)id;
			struct ibv_sge ss = sge_of(a, soff, len), rs = sge_of(b, roff, rlen + GUARD);
			struct ibv_wc sw, rw;
			int rc;

			id++;
			h_pattern(exp, len, seed);
			memcpy(a->buf + soff, exp, len);
			memset(b->buf + roff, GUARD_BYTE, rlen + GUARD);
			TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 1000 + id), 0);
			TEST_ASSERT_EQ(post_send_sges(a, &ss, 1, id, imm, immv, 0, ah, b), 0);
			POLL1(b->rcq, rw);
			POLL1(a->scq, sw);
			rc = check_send_wcs(a, b, &sw, &rw, id, 1000 + id, len, imm, immv);
			if (rc) {
				fprintf(stderr, "  (size %u, imm %d)\n", len, imm);
				free(exp);
				return rc;
			}
			if (first_diff(b->buf + roff + (ud ? 40 : 0), exp, len) >= 0 ||
			    first_not(b->buf + roff + rlen, GUARD_BYTE, GUARD) >= 0) {
				fprintf(stderr, "  (size %u, imm %d)\n", len, imm);
				ASSERT_BYTES(b->buf + roff + (ud ? 40 : 0), exp, len);
				ASSERT_FILL(b->buf + roff + rlen, GUARD_BYTE, GUARD);
			}
		}
	}
	free(exp);
	ASSERT_QUIET(b->rcq, 10);
	ASSERT_QUIET(a->scq, 10);
	return TEST_SUCCESS;
}


static int test_rc_send_sizes(void) { return send_sizes(IBV_QPT_RC); }
static int test_uc_send_sizes(void) { return send_sizes(IBV_QPT_UC); }
static int test_ud_send_sizes(void) { return send_sizes(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* Gather (3 SGEs at odd offsets) on send, scatter (3 SGEs) on receive */

static int
sge_gather_scatter(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1 };
	bool ud = type == IBV_QPT_UD;
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	static const size_t soff[3] = { 1, 3001, 7777 };
	static const uint32_t slen[3] = { 1000, 1537, 333 };
	/* UD: the first SGE is shorter than the GRH, which so spans two SGEs */
	const size_t roff[3] = { 5, 20003, 90001 };
	const uint32_t rlen[3] = { ud ? 17 : 700, 1201, 2000 };
	uint8_t exp[40 + 2870], got[40 + 3901];
	uint32_t total = 0, cap = 0, pos = 0, hdr = ud ? 40 : 0;
	struct ibv_sge ss[3], rs[3];
	struct ibv_wc sw, rw;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	if (ud)
		TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	for (int i = 0; i < 3; i++) {
		h_pattern(a->buf + soff[i], slen[i], 77 + i);
		memcpy(exp + hdr + total, a->buf + soff[i], slen[i]);
		ss[i] = sge_of(a, soff[i], slen[i]);
		total += slen[i];
		memset(b->buf + roff[i], GUARD_BYTE, rlen[i] + GUARD);
		rs[i] = sge_of(b, roff[i], rlen[i]);
		cap += rlen[i];
	}
	TEST_ASSERT(total + hdr <= cap, "test layout");
	TEST_ASSERT_EQ(post_recv_sges(b, rs, 3, 42), 0);
	TEST_ASSERT_EQ(post_send_sges(a, ss, 3, 7, true, 0x5eed, 0, ah, b), 0);
	POLL1(b->rcq, rw);
	POLL1(a->scq, sw);
	rc = check_send_wcs(a, b, &sw, &rw, 7, 42, total, true, 0x5eed);
	if (rc)
		return rc;
	/* read the scatter list back as one stream */
	for (int i = 0; i < 3; i++) {
		memcpy(got + pos, b->buf + roff[i], rlen[i]);
		pos += rlen[i];
	}
	ASSERT_BYTES(got + hdr, exp + hdr, total);
	/* what the message did not reach stays untouched, and nothing beyond any SGE */
	ASSERT_FILL(got + hdr + total, GUARD_BYTE, cap - hdr - total);
	for (int i = 0; i < 3; i++)
		ASSERT_FILL(b->buf + roff[i] + rlen[i], GUARD_BYTE, GUARD);
	if (ud) {
		ASSERT_FILL(got, 0, 20);
		TEST_ASSERT_EQ(got[20], 0x45);
	}
	return TEST_SUCCESS;
}

static int test_rc_sge_gather_scatter(void) { return sge_gather_scatter(IBV_QPT_RC); }
static int test_uc_sge_gather_scatter(void) { return sge_gather_scatter(IBV_QPT_UC); }
static int test_ud_sge_gather_scatter(void) { return sge_gather_scatter(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* Inline sends: unregistered buffer, lkey ignored, reusable on return */

static int
inline_send(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1, .max_inline = 256 };
	bool ud = type == IBV_QPT_UD;
	uint32_t hdr = ud ? 40 : 0;
	struct h_side *a, *b;
	struct ibv_ah *ah = NULL;
	uint8_t m1[200], m2a[100], m2b[156], exp1[200], exp2[256];
	struct ibv_wc sw, rw;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	if (ud)
		TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");

	/* one SGE with a garbage lkey, from the stack */
	{
		struct ibv_sge sg = { (uintptr_t)m1, sizeof(m1), 0xdeadbeef };
		struct ibv_sge rs = sge_of(b, 0, hdr + 256 + GUARD);

		h_pattern(m1, sizeof(m1), 501);
		memcpy(exp1, m1, sizeof(m1));
		memset(b->buf, GUARD_BYTE, hdr + 256 + GUARD);
		TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 1), 0);
		TEST_ASSERT_EQ(post_send_sges(a, &sg, 1, 11, false, 0, IBV_SEND_INLINE, ah, b), 0);
		memset(m1, 0, sizeof(m1));	/* ours again: the send must not see this */
		POLL1(b->rcq, rw);
		POLL1(a->scq, sw);
		rc = check_send_wcs(a, b, &sw, &rw, 11, 1, sizeof(m1), false, 0);
		if (rc)
			return rc;
		ASSERT_BYTES(b->buf + hdr, exp1, sizeof(exp1));
		ASSERT_FILL(b->buf + hdr + sizeof(exp1), GUARD_BYTE, 256 - sizeof(exp1) + GUARD);
	}
	/* two SGEs, exactly max_inline bytes, with immediate data */
	{
		struct ibv_sge sg[2] = { { (uintptr_t)m2a, sizeof(m2a), 0 },
					 { (uintptr_t)m2b, sizeof(m2b), 0x12345678 } };
		struct ibv_sge rs = sge_of(b, 8192, hdr + 256 + GUARD);

		h_pattern(m2a, sizeof(m2a), 502);
		h_pattern(m2b, sizeof(m2b), 503);
		memcpy(exp2, m2a, sizeof(m2a));
		memcpy(exp2 + sizeof(m2a), m2b, sizeof(m2b));
		memset(b->buf + 8192, GUARD_BYTE, hdr + 256 + GUARD);
		TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 2), 0);
		TEST_ASSERT_EQ(post_send_sges(a, sg, 2, 12, true, 0xabcdef01, IBV_SEND_INLINE, ah, b), 0);
		memset(m2a, 0, sizeof(m2a));
		memset(m2b, 0, sizeof(m2b));
		POLL1(b->rcq, rw);
		POLL1(a->scq, sw);
		rc = check_send_wcs(a, b, &sw, &rw, 12, 2, 256, true, 0xabcdef01);
		if (rc)
			return rc;
		ASSERT_BYTES(b->buf + 8192 + hdr, exp2, 256);
		ASSERT_FILL(b->buf + 8192 + hdr + 256, GUARD_BYTE, GUARD);
	}
	return TEST_SUCCESS;
}

static int test_rc_inline_send(void) { return inline_send(IBV_QPT_RC); }
static int test_uc_inline_send(void) { return inline_send(IBV_QPT_UC); }
static int test_ud_inline_send(void) { return inline_send(IBV_QPT_UD); }

/* ------------------------------------------------------------------------- */
/* RDMA WRITE and RDMA WRITE WITH IMM */

static const uint32_t write_sizes_tbl[] = {
	0, 1, 1023, 1024, 1025, 4096, 65537, MIB,
};

static int
rdma_write(enum ibv_qp_type type)
{
	/* receiver: RDMA target at 7, receive buffers after the target region */
	struct h_qp_opts o = { .type = type, .buf_len = 2 * MIB + 65536, .sq_sig_all = 1 };
	const size_t soff = 1, toff = 7, rbuf = 2 * MIB;
	struct h_side *a, *b;
	uint8_t *exp = malloc(MIB);
	int id = 0;

	TEST_ASSERT(exp != NULL, "malloc");
	if (h_res_pair(&a, &b, &o, false) != 0) {
		free(exp);
		TEST_ASSERT(0, "pair setup failed");
	}
	for (size_t k = 0; k < DIM(write_sizes_tbl); k++) {
		uint32_t len = write_sizes_tbl[k];

		for (int imm = 0; imm <= 1; imm++) {
			uint32_t immv = 0x77000000u | (uint32_t)id;
			struct ibv_sge rs = sge_of(b, rbuf, 64);
			struct ibv_wc sw, rw;

			id++;
			h_pattern(exp, len, 9000 + id);
			memcpy(a->buf + soff, exp, len);
			memset(b->buf, GUARD_BYTE, toff + len + GUARD);
			memset(b->buf + rbuf, 0x5a, 64);
			/* WITH_IMM consumes this WQE; plain WRITE leaves it to the marker SEND */
			TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 500 + id), 0);
			TEST_ASSERT_EQ(post_write(a, soff, len, b, toff, id, imm, immv), 0);
			if (!imm) {
				/* a zero-length SEND behind it: in order, so the WRITE has landed */
				struct ibv_sge ms = sge_of(a, 0, 0);

				TEST_ASSERT_EQ(post_send_sges(a, &ms, 1, 100000 + id, false, 0, 0, NULL, b), 0);
			}
			POLL1(b->rcq, rw);
			ASSERT_STATUS(rw, IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(rw.wr_id, 500 + id);
			TEST_ASSERT_EQ(rw.qp_num, b->qp->qp_num);
			if (imm) {
				TEST_ASSERT_EQ(rw.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
				TEST_ASSERT_EQ(rw.byte_len, len);
				TEST_ASSERT(rw.wc_flags & IBV_WC_WITH_IMM, "flags 0x%x", rw.wc_flags);
				TEST_ASSERT_EQ(ntohl(rw.imm_data), immv);
				/* the receive buffer itself is not written */
				ASSERT_FILL(b->buf + rbuf, 0x5a, 64);
			} else {
				TEST_ASSERT_EQ(rw.opcode, IBV_WC_RECV);
				TEST_ASSERT_EQ(rw.byte_len, 0);
			}
			POLL1(a->scq, sw);
			ASSERT_STATUS(sw, IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(sw.wr_id, id);
			TEST_ASSERT_EQ(sw.opcode, IBV_WC_RDMA_WRITE);
			TEST_ASSERT_EQ(sw.qp_num, a->qp->qp_num);
			if (!imm) {
				POLL1(a->scq, sw);
				ASSERT_STATUS(sw, IBV_WC_SUCCESS);
				TEST_ASSERT_EQ(sw.wr_id, 100000 + id);
				TEST_ASSERT_EQ(sw.opcode, IBV_WC_SEND);
			}
			if (first_diff(b->buf + toff, exp, len) >= 0 ||
			    first_not(b->buf, GUARD_BYTE, toff) >= 0 ||
			    first_not(b->buf + toff + len, GUARD_BYTE, GUARD) >= 0) {
				fprintf(stderr, "  (size %u, imm %d)\n", len, imm);
				free(exp);
				ASSERT_BYTES(b->buf + toff, a->buf + soff, len);
				ASSERT_FILL(b->buf, GUARD_BYTE, toff);
				ASSERT_FILL(b->buf + toff + len, GUARD_BYTE, GUARD);
			}
		}
	}
	free(exp);
	ASSERT_QUIET(b->rcq, 10);
	ASSERT_QUIET(a->scq, 10);
	return TEST_SUCCESS;
}

/*
 * A zero-length RDMA WRITE carries no address or R_Key the responder must
 * check (IBA C9-88; rxe check_rkey): rkey 0 and address 0 succeed.
 */
static int
write_zero_len_no_rkey(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .sq_sig_all = 1 };
	struct ibv_sge sg = { 0, 0, 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE }, *bad = NULL;
	struct h_side *a, *b;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT_EQ(h_post_recv(b, 0, 64, 10), 0);
	TEST_ASSERT_EQ(h_post_recv(b, 64, 64, 11), 0);
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0;
	TEST_ASSERT_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x0badf00d);
	wr.wr.rdma.rkey = 0x12345678;
	TEST_ASSERT_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 10);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(wc.byte_len, 0);
	TEST_ASSERT_EQ(ntohl(wc.imm_data), 0x0badf00d);
	for (int i = 1; i <= 2; i++) {
		POLL1(a->scq, wc);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, i);
		TEST_ASSERT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	}
	return TEST_SUCCESS;
}

static int test_rc_write_zero_len_no_rkey(void) { return write_zero_len_no_rkey(IBV_QPT_RC); }
static int test_uc_write_zero_len_no_rkey(void) { return write_zero_len_no_rkey(IBV_QPT_UC); }
static int test_rc_rdma_write(void) { return rdma_write(IBV_QPT_RC); }
static int test_uc_rdma_write(void) { return rdma_write(IBV_QPT_UC); }

/* ------------------------------------------------------------------------- */
/* Streaming: 20000 RC messages of mixed sizes, 64 outstanding each way */

#define S_NMSG	20000u
#define S_DEPTH	64u
#define S_SLOT	16384u

static uint32_t
stream_len(uint32_t i)
{
	static const uint32_t mix[] = {
		0, 1, 4, 17, 100, 513, 1023, 1024, 1025, 2048, 3000, 4096, 5000, 9000, 16384,
	};

	return mix[(i * 7u + i / 13u) % DIM(mix)];
}

static int
test_rc_stream_20000(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = S_DEPTH, .max_recv_wr = S_DEPTH,
			       .cqe = 256, .buf_len = S_DEPTH * S_SLOT, .sq_sig_all = 1 };
	uint32_t ps = 0, ds = 0, pr = 0, dr = 0;
	uint64_t t0, last, bytes = 0;
	static uint8_t exp[S_SLOT];
	struct h_side *a, *b;
	struct ibv_wc wc[32];

	uint64_t drops0 = h_xstat("droce0", "tx_drop_full"), rexmit0 = h_xstat("droce0", "retransmits");

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	t0 = last = h_now_ms();
	while (dr < S_NMSG || ds < S_NMSG) {
		bool moved = false;
		int n;

		while (pr < S_NMSG && pr - dr < S_DEPTH) {
			uint32_t slot = pr % S_DEPTH;

			memset(b->buf + slot * S_SLOT, 0xee, 64);
			TEST_ASSERT_EQ(h_post_recv(b, slot * S_SLOT, S_SLOT, pr), 0);
			pr++;
		}
		while (ps < S_NMSG && ps - ds < S_DEPTH && ps < pr) {
			uint32_t slot = ps % S_DEPTH;

			h_pattern(a->buf + slot * S_SLOT, stream_len(ps), ps);
			TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, slot * S_SLOT, stream_len(ps), ps,
						   IBV_SEND_SIGNALED), 0);
			ps++;
		}
		n = ibv_poll_cq(b->rcq, 32, wc);
		TEST_ASSERT(n >= 0, "poll_cq %d", n);
		for (int i = 0; i < n; i++, dr++) {
			uint32_t len = stream_len(dr);

			if (wc[i].status != IBV_WC_SUCCESS)
				fprintf(stderr, "  receive %u of %u\n", dr, S_NMSG);
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, dr);	/* every message once, in order */
			TEST_ASSERT_EQ(wc[i].opcode, IBV_WC_RECV);
			TEST_ASSERT_EQ(wc[i].byte_len, len);
			h_pattern(exp, len, dr);
			ASSERT_BYTES(b->buf + (dr % S_DEPTH) * S_SLOT, exp, len);
			bytes += len;
			moved = true;
		}
		n = ibv_poll_cq(a->scq, 32, wc);
		TEST_ASSERT(n >= 0, "poll_cq %d", n);
		for (int i = 0; i < n; i++, ds++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, ds);
			TEST_ASSERT_EQ(wc[i].opcode, IBV_WC_SEND);
			moved = true;
		}
		if (moved)
			last = h_now_ms();
		TEST_ASSERT(h_now_ms() - last < 10000,
			    "stalled 10 s: sends posted %u done %u, receives posted %u done %u",
			    ps, ds, pr, dr);
	}
	ASSERT_QUIET(b->rcq, 10);
	ASSERT_QUIET(a->scq, 10);
	printf("# stream: %u messages, %.1f MB in %.2f s, %" PRIu64 " retransmits\n", S_NMSG,
	       bytes / 1e6, (h_now_ms() - t0) / 1e3, h_xstat("droce0", "retransmits") - rexmit0);
	/* a full port holds the requester back: nothing of a clean stream is dropped */
	TEST_ASSERT_EQ(h_xstat("droce0", "tx_drop_full") - drops0, 0);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Loopback: two QPs of droce0 talking to each other */

static int
test_rc_loopback_one_device(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	static const uint32_t sizes[] = { 0, 1, 1025, 65537, 300000 };
	struct h_side *a, *b;
	uint8_t *exp = malloc(300000);
	struct ibv_wc sw, rw;
	int rc;

	TEST_ASSERT(exp != NULL, "malloc");
	if (h_res_pair(&a, &b, &o, true) != 0) {
		free(exp);
		TEST_ASSERT(0, "pair setup failed");
	}
	TEST_ASSERT_PTR_EQ(a->ctx, b->ctx);
	for (size_t k = 0; k < DIM(sizes); k++) {
		uint32_t len = sizes[k];

		/* a -> b, then b -> a with immediate data */
		for (int dir = 0; dir < 2; dir++) {
			struct h_side *s = dir ? b : a, *r = dir ? a : b;
			struct ibv_sge ss = sge_of(s, 11, len), rs = sge_of(r, 13, len + GUARD);

			h_pattern(exp, len, 4242 + len + dir);
			memcpy(s->buf + 11, exp, len);
			memset(r->buf + 13, GUARD_BYTE, len + GUARD);
			TEST_ASSERT_EQ(post_recv_sges(r, &rs, 1, 70 + k), 0);
			TEST_ASSERT_EQ(post_send_sges(s, &ss, 1, 80 + k, dir, 0xfeed, 0, NULL, r), 0);
			POLL1(r->rcq, rw);
			POLL1(s->scq, sw);
			rc = check_send_wcs(s, r, &sw, &rw, 80 + k, 70 + k, len, dir, 0xfeed);
			if (rc) {
				free(exp);
				return rc;
			}
			if (first_diff(r->buf + 13, exp, len) >= 0) {
				free(exp);
				ASSERT_BYTES(r->buf + 13, s->buf + 11, len);
			}
			ASSERT_FILL(r->buf + 13 + len, GUARD_BYTE, GUARD);
		}
	}
	free(exp);
	/* and an RDMA WRITE of several packets */
	h_pattern(a->buf + 1, 5000, 31337);
	memset(b->buf + 100003, 0, 5000 + GUARD);
	TEST_ASSERT_EQ(post_write(a, 1, 5000, b, 100003, 99, false, 0), 0);
	POLL1(a->scq, sw);
	ASSERT_STATUS(sw, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(sw.opcode, IBV_WC_RDMA_WRITE);
	ASSERT_BYTES(b->buf + 100003, a->buf + 1, 5000);
	ASSERT_FILL(b->buf + 100003 + 5000, 0, GUARD);
	return TEST_SUCCESS;
}

/*
 * A QP's packet and byte counters (kept on the engine's lines, not with the
 * others): 50 SENDs of 100 bytes arrive as 50 frames of 158 bytes (Ethernet,
 * IPv4, UDP, BTH, payload, ICRC), their sender counts as many out, its ACKs
 * in both counters; the counters outlive a reset of the QP.
 */
static int
test_rc_qp_traffic_counters_exact_and_kept_over_reset(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	const uint64_t frame = 14 + 20 + 8 + 12 + 100 + 4;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	struct h_side *a, *b;
	struct ibv_wc sw, rw;
	uint64_t acks, ack_bytes;

	TEST_ASSERT(h_res_pair(&a, &b, &o, false) == 0, "pair setup failed");
	for (int i = 0; i < 50; i++) {
		struct ibv_sge ss = sge_of(a, 0, 100), rs = sge_of(b, 4096, 100);

		TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, i), 0);
		TEST_ASSERT_EQ(post_send_sges(a, &ss, 1, i, false, 0, 0, NULL, b), 0);
		POLL1(b->rcq, rw);
		ASSERT_STATUS(rw, IBV_WC_SUCCESS);
		POLL1(a->scq, sw);
		ASSERT_STATUS(sw, IBV_WC_SUCCESS);
	}
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "tx_pkts"), 50);
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "tx_bytes"), 50 * frame);
	TEST_ASSERT_EQ(h_qp_xstat(b->qp, "rx_pkts"), 50);
	TEST_ASSERT_EQ(h_qp_xstat(b->qp, "rx_bytes"), 50 * frame);
	/* every SEND was answered before the next: an ACK each (58-byte frames + ICRC) */
	acks = h_qp_xstat(b->qp, "tx_pkts");
	ack_bytes = h_qp_xstat(b->qp, "tx_bytes");
	TEST_ASSERT_EQ(acks, 50);
	TEST_ASSERT_EQ(ack_bytes, 50 * (14 + 20 + 8 + 12 + 4 + 4));
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "rx_pkts"), acks);
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "rx_bytes"), ack_bytes);
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "retransmits"), 0);

	TEST_ASSERT_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(b->qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "tx_pkts"), 50);
	TEST_ASSERT_EQ(h_qp_xstat(a->qp, "rx_bytes"), ack_bytes);
	TEST_ASSERT_EQ(h_qp_xstat(b->qp, "rx_pkts"), 50);
	TEST_ASSERT_EQ(h_qp_xstat(b->qp, "tx_bytes"), ack_bytes);
	return TEST_SUCCESS;
}

static int
test_ud_loopback_one_device(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_UD, .sq_sig_all = 1 };
	struct h_side *a, *b;
	struct ibv_ah *ah;
	uint8_t exp[4096];
	struct ibv_wc sw, rw;
	struct ibv_sge ss, rs;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, true), 0);
	TEST_ASSERT((ah = h_res_ah(a, b)) != NULL, "create_ah");
	h_pattern(exp, sizeof(exp), 6060);
	memcpy(a->buf, exp, sizeof(exp));
	memset(b->buf, GUARD_BYTE, 40 + 4096 + GUARD);
	ss = sge_of(a, 0, 4096);
	rs = sge_of(b, 0, 40 + 4096);
	TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 1), 0);
	TEST_ASSERT_EQ(post_send_sges(a, &ss, 1, 2, false, 0, 0, ah, b), 0);
	POLL1(b->rcq, rw);
	POLL1(a->scq, sw);
	rc = check_send_wcs(a, b, &sw, &rw, 2, 1, 4096, false, 0);
	if (rc)
		return rc;
	ASSERT_BYTES(b->buf + 40, exp, 4096);
	/* GRH: source and destination are both droce0's address */
	TEST_ASSERT(memcmp(b->buf + 20 + 12, &a->gid.raw[12], 4) == 0, "GRH source IP");
	TEST_ASSERT(memcmp(b->buf + 20 + 16, &a->gid.raw[12], 4) == 0, "GRH destination IP");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* PSN wrap: start at 0xfffff0 and send 100 multi-packet messages */

static int
psn_wrap(enum ibv_qp_type type)
{
	struct h_qp_opts o = { .type = type, .psn = 0xfffff0, .max_send_wr = 128,
			       .max_recv_wr = 128, .cqe = 512, .buf_len = 100 * 4096, .sq_sig_all = 1 };
	const uint32_t n = 100, len = 3000;	/* 3 packets each at path MTU 1024 */
	struct h_side *a, *b;
	uint8_t exp[3000];
	struct ibv_wc wc[100];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT_EQ(ibv_query_qp(a->qp, &qa, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &qi), 0);
	TEST_ASSERT_EQ(qa.sq_psn, 0xfffff0);
	for (uint32_t i = 0; i < n; i++) {
		memset(b->buf + i * 4096, 0, 4096);
		TEST_ASSERT_EQ(h_post_recv(b, i * 4096, 4096, i), 0);
	}
	for (uint32_t i = 0; i < n; i++) {
		h_pattern(a->buf + i * 4096, len, 700 + i);
		TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, i * 4096, len, i, 0), 0);
	}
	TEST_ASSERT_EQ(h_poll(b->rcq, wc, n, 10000), n);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, i);
		TEST_ASSERT_EQ(wc[i].byte_len, len);
		h_pattern(exp, len, 700 + i);
		ASSERT_BYTES(b->buf + i * 4096, exp, len);
	}
	TEST_ASSERT_EQ(h_poll(a->scq, wc, n, 10000), n);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, i);
	}
	/* an RDMA WRITE after the wrap lands too */
	h_pattern(a->buf, 5000, 5151);
	TEST_ASSERT_EQ(post_write(a, 0, 5000, b, 200000, 1000, false, 0), 0);
	TEST_ASSERT_EQ(h_poll(a->scq, wc, 1, WC_MS), 1);
	ASSERT_STATUS(wc[0], IBV_WC_SUCCESS);
	if (type == IBV_QPT_UC) {
		/* UC completes on transmission: a SEND behind it proves arrival */
		TEST_ASSERT_EQ(h_post_recv(b, 0, 64, 2000), 0);
		TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 0, 2001, 0), 0);
		TEST_ASSERT_EQ(h_poll(b->rcq, wc, 1, WC_MS), 1);
		ASSERT_STATUS(wc[0], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(h_poll(a->scq, wc, 1, WC_MS), 1);
	}
	ASSERT_BYTES(b->buf + 200000, a->buf, 5000);
	return TEST_SUCCESS;
}

static int test_rc_psn_wrap(void) { return psn_wrap(IBV_QPT_RC); }
static int test_uc_psn_wrap(void) { return psn_wrap(IBV_QPT_UC); }

/* ------------------------------------------------------------------------- */
/* RNR: the receive is posted 50 ms after the send (rnr_retry 7: infinite) */

static uint64_t
rnr_naks(const char *dev)
{
	struct droce_dev_stats st;

	return droce_dev_stats_get(dev, &st) == 0 ? st.rnr_naks_sent : 0;
}

static int
rnr_once(uint32_t len)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct h_side *a, *b;
	uint64_t naks0, t;
	struct ibv_wc sw, rw;
	uint8_t exp[5000];
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	naks0 = rnr_naks("droce1");
	h_pattern(exp, len, 808 + len);
	memcpy(a->buf, exp, len);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, len, 5, 0), 0);
	/* 50 ms with no receive WQE: nothing may complete, RNR NAKs go out */
	t = h_now_ms();
	while (h_now_ms() - t < 50) {
		ASSERT_QUIET(a->scq, 1);
		ASSERT_QUIET(b->rcq, 1);
	}
	TEST_ASSERT(rnr_naks("droce1") > naks0, "no RNR NAK was sent in 50 ms (%" PRIu64 ")",
		    rnr_naks("droce1") - naks0);
	TEST_ASSERT_EQ(h_post_recv(b, 0, 8192, 6), 0);
	POLL1(b->rcq, rw);
	POLL1(a->scq, sw);
	rc = check_send_wcs(a, b, &sw, &rw, 5, 6, len, false, 0);
	if (rc)
		return rc;
	ASSERT_BYTES(b->buf, exp, len);
	return TEST_SUCCESS;
}

static int test_rc_rnr_single_packet(void) { return rnr_once(100); }
static int test_rc_rnr_multi_packet(void) { return rnr_once(5000); }

/* ------------------------------------------------------------------------- */
/*
 * UC: a message cut short (the sender was reset mid-message, so the next
 * packet the receiver sees is a FIRST with an unexpected PSN) is dropped, and
 * its receive WQE is reused by the next message (IBA 9.8.3; rdmavt's UC
 * responder: RVT_R_REUSE_SGE). The WQE is neither lost nor completed.
 */
static uint64_t
rx_pkts(const char *dev)
{
	struct droce_dev_stats st;

	return droce_dev_stats_get(dev, &st) == 0 ? st.rx_pkts : 0;
}

#define IOVA_BASE	0x5a0000000000ull

static int
uc_aborted_message(bool iova)
{
	struct h_qp_opts o = { .type = IBV_QPT_UC, .buf_len = 2 * MIB, .sq_sig_all = 1 };
	struct ibv_qp_attr ra = { .qp_state = IBV_QPS_RESET };
	struct h_side *a, *b;
	struct ibv_mr *mr;
	struct ibv_sge rs;
	struct ibv_wc wc;
	uint8_t m2[100], m3[200];
	uint64_t rx0, t, base;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	/* with @iova the receive WQEs address b's buffer through an IOVA-based MR */
	mr = iova ? mk_iova_mr(b, IOVA_BASE) : b->mr;
	TEST_ASSERT(mr != NULL, "reg_mr_iova");
	base = iova ? IOVA_BASE : (uintptr_t)b->buf;
	rs = (struct ibv_sge){ base, MIB, mr->lkey };
	TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 1), 0);
	rs = (struct ibv_sge){ base + MIB + 4096, 4096, mr->lkey };
	TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 2), 0);
	rx0 = rx_pkts("droce1");
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, MIB, 10, 0), 0);
	/* the FIRST packet (and more) reached the receiver */
	t = h_now_ms();
	while (rx_pkts("droce1") < rx0 + 2 && h_now_ms() - t < WC_MS)
		ibv_poll_cq(b->rcq, 0, &wc);
	TEST_ASSERT(rx_pkts("droce1") >= rx0 + 2, "the message never started");
	TEST_ASSERT_EQ(ibv_modify_qp(a->qp, &ra, IBV_QP_STATE), 0);
	/* what was already on the wire drains; the message cannot complete */
	if (h_poll(b->rcq, &wc, 1, 20) == 1) {
		TEST_ASSERT(!h_inline(), "completed although cut short: wr_id %" PRIu64 " %s len %u",
			    (uint64_t)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len);
		printf("# the engine sent the whole message before the reset; nothing to test\n");
		return TEST_SKIPPED;
	}
	while (h_poll(a->scq, &wc, 1, 0) == 1)
		;
	TEST_ASSERT_EQ(h_connect(a, b, &o), 0);
	h_pattern(m2, sizeof(m2), 2);
	h_pattern(m3, sizeof(m3), 3);
	memcpy(a->buf, m2, sizeof(m2));
	memcpy(a->buf + 4096, m3, sizeof(m3));
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, sizeof(m2), 20, 0), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 1);		/* the aborted message's WQE */
	TEST_ASSERT_EQ(wc.byte_len, sizeof(m2));
	ASSERT_BYTES(b->buf, m2, sizeof(m2));
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 4096, sizeof(m3), 21, 0), 0);
	POLL1(b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	TEST_ASSERT_EQ(wc.byte_len, sizeof(m3));
	ASSERT_BYTES(b->buf + MIB + 4096, m3, sizeof(m3));
	return TEST_SUCCESS;
}

static int test_uc_aborted_message_reuses_wqe(void) { return uc_aborted_message(false); }
static int test_uc_aborted_message_reuses_wqe_iova_mr(void) { return uc_aborted_message(true); }

/* ------------------------------------------------------------------------- */
/* An MR registered with an IOVA other than its address (ibv_reg_mr_iova) */

static int
test_rc_mr_iova(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	const uint64_t ia = IOVA_BASE, ib = IOVA_BASE + (1ull << 32);
	struct h_side *a, *b;
	struct ibv_mr *ma, *mb;
	struct ibv_sge ss, rs;
	struct ibv_wc sw, rw;
	int rc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	TEST_ASSERT((ma = mk_iova_mr(a, ia)) != NULL, "reg_mr_iova");
	TEST_ASSERT((mb = mk_iova_mr(b, ib)) != NULL, "reg_mr_iova");
	h_pattern(a->buf + 1001, 5000, 123);
	memset(b->buf, 0, 65536);
	ss = (struct ibv_sge){ ia + 1001, 5000, ma->lkey };
	rs = (struct ibv_sge){ ib + 3, 8000, mb->lkey };
	TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 1), 0);
	TEST_ASSERT_EQ(post_send_sges(a, &ss, 1, 2, false, 0, 0, NULL, b), 0);
	POLL1(b->rcq, rw);
	POLL1(a->scq, sw);
	rc = check_send_wcs(a, b, &sw, &rw, 2, 1, 5000, false, 0);
	if (rc)
		return rc;
	ASSERT_BYTES(b->buf + 3, a->buf + 1001, 5000);
	/* RDMA WRITE to the remote IOVA */
	{
		struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

		wr.wr.rdma.remote_addr = ib + 20001;
		wr.wr.rdma.rkey = mb->rkey;
		TEST_ASSERT_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
		POLL1(a->scq, sw);
		ASSERT_STATUS(sw, IBV_WC_SUCCESS);
		ASSERT_BYTES(b->buf + 20001, a->buf + 1001, 5000);
	}
	/* the IOVA is not a host address: the VA is outside that MR */
	rs = (struct ibv_sge){ (uintptr_t)b->buf, 64, mb->lkey };
	TEST_ASSERT_EQ(post_recv_sges(b, &rs, 1, 4), 0);
	TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, 0, 10, 5, 0), 0);
	POLL1(b->rcq, rw);
	ASSERT_STATUS(rw, IBV_WC_LOC_PROT_ERR);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/*
 * An RDMA WRITE's last byte is stored after every byte before it: an
 * application that polls it to know the WRITE arrived (perftest's
 * ib_write_lat does) then reads the whole message. 5000 WRITEs of 5000
 * bytes (5 packets), each of new bytes: once the last byte shows the round,
 * every byte does. With an engine lcore the poller runs while the engine
 * copies; a memcpy that stores its tail first fails this (droce-perf's
 * write_lat stalled that way, a stamp overwritten behind it).
 */
#define LBL_LEN		5000
#define LBL_ROUNDS	5000
#define LBL_LAST_PKT	4096	/* where the last packet begins (path MTU 1024) */

static int
test_rc_write_last_byte_lands_last(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1 };
	volatile uint8_t *dst;
	struct h_side *a, *b;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	dst = b->buf;
	memset(b->buf, 0, LBL_LEN);
	for (uint32_t r = 1; r <= LBL_ROUNDS; r++) {
		struct ibv_sge sg = sge_of(a, 0, LBL_LEN);
		struct ibv_send_wr wr = { .wr_id = r, .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE }, *bad = NULL;
		uint64_t t0 = h_now_ms();
		uint8_t v = (uint8_t)(r % 255 + 1);	/* never the round before's */

		memset(a->buf, v, LBL_LEN);
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr.wr.rdma.rkey = b->mr->rkey;
		TEST_ASSERT_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
		while (dst[LBL_LEN - 1] != v) {
			ibv_poll_cq(b->rcq, 0, &wc);	/* progress, inline */
			TEST_ASSERT(h_now_ms() - t0 < WC_MS, "round %u: the last byte never came", r);
		}
		/* first the last packet's first bytes, which a memcpy may store last */
		for (uint32_t i = LBL_LAST_PKT; i < LBL_LAST_PKT + 64; i++) {
			uint8_t got = dst[i];

			TEST_ASSERT(got == v, "round %u: byte %u was %u once the last byte was %u",
				    r, i, got, v);
		}
		for (uint32_t i = 0; i < LBL_LEN - 1; i++) {
			uint8_t got = dst[i];

			TEST_ASSERT(got == v, "round %u: byte %u was %u once the last byte was %u",
				    r, i, got, v);
		}
		POLL1(a->scq, wc);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, r);
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/*
 * SENDs posted in a row, then polled: every message arrives whole and in
 * order. With inline progress a post only sends its WRs, and the receiver
 * takes them when the application polls, in bursts: far fewer ACKs come
 * back than messages went (each post moving both devices acknowledged
 * every message alone). The waker may move a device in between, so only
 * "far fewer" is asserted.
 */
#define BURST_MSGS	32
#define BURST_LEN	64

/* BURST_MSGS successful completions on @cq, wr_ids from @first in order; @len: byte_len, or -1 */
static int
burst_polled_in_order(struct ibv_cq *cq, uint64_t first, int len)
{
	struct ibv_wc wc[BURST_MSGS];
	int got, n;

	for (got = 0; got < BURST_MSGS; got += n) {
		n = h_poll(cq, wc, BURST_MSGS - got, WC_MS);
		TEST_ASSERT(n > 0, "%d of %d completions", got, BURST_MSGS);
		for (int i = 0; i < n; i++) {
			ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[i].wr_id, first + got + i);
			if (len >= 0)
				TEST_ASSERT_EQ(wc[i].byte_len, (uint32_t)len);
		}
	}
	return TEST_SUCCESS;
}

static int
test_rc_posts_answered_in_bursts(void)
{
	/*
	 * A starting PSN of its own: the previous case's last frame (a NAK
	 * to PSN 10) may still wait in the port for a poll, and the QPs are
	 * the same ones, connected again.
	 */
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1, .max_send_wr = 64,
			       .max_recv_wr = 64, .psn = 0x5000 };
	struct h_side *a, *b;
	uint64_t acks0, acks;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	for (int i = 0; i < BURST_MSGS; i++) {
		h_pattern(a->buf + i * BURST_LEN, BURST_LEN, 4000 + i);
		TEST_ASSERT_EQ(h_post_recv(b, (size_t)i * BURST_LEN, BURST_LEN, 100 + i), 0);
	}
	memset(b->buf, 0, BURST_MSGS * BURST_LEN);
	acks0 = rx_pkts("droce0");	/* a receives nothing but ACKs */
	for (int i = 0; i < BURST_MSGS; i++)
		TEST_ASSERT_EQ(h_post_send(a, IBV_WR_SEND, (size_t)i * BURST_LEN, BURST_LEN,
					   200 + i, 0), 0);
	TEST_ASSERT_EQ(burst_polled_in_order(b->rcq, 100, BURST_LEN), TEST_SUCCESS);
	TEST_ASSERT_EQ(burst_polled_in_order(a->scq, 200, -1), TEST_SUCCESS);
	ASSERT_BYTES(b->buf, a->buf, BURST_MSGS * BURST_LEN);
	acks = rx_pkts("droce0") - acks0;
	printf("# %d messages, %" PRIu64 " ACKs\n", BURST_MSGS, acks);
	TEST_ASSERT(acks >= 1, "no ACK arrived");
	if (h_inline())
		TEST_ASSERT(acks <= BURST_MSGS / 4, "%" PRIu64 " ACKs for %d messages posted in a row",
			    acks, BURST_MSGS);
	return TEST_SUCCESS;
}

/*
 * A thread that posts and never polls: its devices still move. With inline
 * progress a post only sends its own WRs, so the ACKs that free its send
 * queue's slots are read by the waker's iterations; a post must not count
 * as the application moving the device (before, a thread posting again and
 * again kept the waker away, and the queue full for good). 64 SENDs through
 * a queue of 8, each posted again at once while the queue is full, none
 * polled until the end.
 */
#define ALONE_MSGS	64

static int
test_rc_posts_alone_move_device(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .sq_sig_all = 1, .max_send_wr = 8,
			       .max_recv_wr = ALONE_MSGS, .psn = 0x7000 };
	struct h_side *a, *b;
	uint64_t t0 = h_now_ms();
	int full = 0;

	TEST_ASSERT_EQ(h_res_pair(&a, &b, &o, false), 0);
	for (int i = 0; i < ALONE_MSGS; i++) {
		h_pattern(a->buf + i * BURST_LEN, BURST_LEN, 6000 + i);
		TEST_ASSERT_EQ(h_post_recv(b, (size_t)i * BURST_LEN, BURST_LEN, 300 + i), 0);
	}
	memset(b->buf, 0, ALONE_MSGS * BURST_LEN);
	for (int i = 0; i < ALONE_MSGS; i++) {
		int ret;

		while ((ret = h_post_send(a, IBV_WR_SEND, (size_t)i * BURST_LEN, BURST_LEN,
					  400 + i, 0)) == ENOMEM && h_now_ms() - t0 < 10000)
			full++;		/* posted again at once, and no poll */
		TEST_ASSERT_EQ(ret, 0);
	}
	printf("# %d SENDs through 8 slots in %" PRIu64 " ms, %d posts found the queue full\n",
	       ALONE_MSGS, h_now_ms() - t0, full);
	for (int k = 0; k < ALONE_MSGS / BURST_MSGS; k++) {
		TEST_ASSERT_EQ(burst_polled_in_order(b->rcq, 300 + k * BURST_MSGS, BURST_LEN),
			       TEST_SUCCESS);
		TEST_ASSERT_EQ(burst_polled_in_order(a->scq, 400 + k * BURST_MSGS, -1), TEST_SUCCESS);
	}
	ASSERT_BYTES(b->buf, a->buf, ALONE_MSGS * BURST_LEN);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */

static const struct droce_test_case cases[] = {
	TEST_CASE(test_rc_send_sizes),
	TEST_CASE(test_rc_write_last_byte_lands_last),
	TEST_CASE(test_uc_send_sizes),
	TEST_CASE(test_ud_send_sizes),
	TEST_CASE(test_rc_sge_gather_scatter),
	TEST_CASE(test_uc_sge_gather_scatter),
	TEST_CASE(test_ud_sge_gather_scatter),
	TEST_CASE(test_rc_inline_send),
	TEST_CASE(test_uc_inline_send),
	TEST_CASE(test_ud_inline_send),
	TEST_CASE(test_rc_rdma_write),
	TEST_CASE(test_uc_rdma_write),
	TEST_CASE(test_rc_write_zero_len_no_rkey),
	TEST_CASE(test_uc_write_zero_len_no_rkey),
	TEST_CASE(test_rc_stream_20000),
	TEST_CASE(test_rc_loopback_one_device),
	TEST_CASE(test_rc_qp_traffic_counters_exact_and_kept_over_reset),
	TEST_CASE(test_ud_loopback_one_device),
	TEST_CASE(test_rc_psn_wrap),
	TEST_CASE(test_uc_psn_wrap),
	TEST_CASE(test_rc_rnr_single_packet),
	TEST_CASE(test_rc_rnr_multi_packet),
	TEST_CASE(test_uc_aborted_message_reuses_wqe),
	TEST_CASE(test_uc_aborted_message_reuses_wqe_iova_mr),
	TEST_CASE(test_rc_mr_iova),
	TEST_CASE(test_rc_posts_answered_in_bursts),
	TEST_CASE(test_rc_posts_alone_move_device),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "datapath", cases, NULL, h_res_release);
}
