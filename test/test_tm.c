/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tag matching (man ibv_post_srq_ops, rdma-core Documentation/
 * tag_matching.md): a client RC QP on droce0 sends TMH-framed SENDs to a
 * server RC QP on droce1 attached to a TM SRQ. Checked: expected eager
 * messages land in the tagged buffer without the TMH (one and several
 * packets), unexpected and NO_TAG ones whole in an SRQ WQE, phase sync,
 * first-posted-wins and masks, DEL (failing, it completes only if
 * signaled), rendezvous (the engine READs the data and sends the FIN; too
 * big for the buffer: left to software), handles given back on poll (never
 * to a later SRQ in a destroyed one's place), unexpected messages that fail
 * or are cut short left uncounted, and the errno and *bad_op of bad
 * operations. Every completion's opcode, flags, byte_len, immediate and tag
 * are asserted: the tag and app_ctx only with IBV_WC_TM_MATCH, as
 * tag_matching.md and mlx5 give them (rdma-core's test_tm_rndv reads 0 from
 * a DATA_VALID alone); a FIN at the TM SRQ is a NO_TAG completion.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <infiniband/tm_types.h>

#include "droce_test.h"
#include "harness.h"

#define TAGS	8
#define SRQ_WR	32
#define SLOT	8192			/* SRQ WQE i: srv.buf + i * SLOT */
#define TAGBUF	(SRQ_WR * SLOT)		/* tagged buffers: srv.buf + TAGBUF + k * SLOT */

static struct h_side cli, srv;
static struct ibv_cq_ex *tcq;		/* the TM SRQ's CQ */
static struct ibv_srq *srq;
static struct ibv_pd *spd;
static uint32_t unexp;			/* unexpected messages software handled */

static const struct h_qp_opts copts = { .type = IBV_QPT_RC, .buf_len = 1 << 20 };

static int
setup(void)
{
	struct ibv_context *cc = h_open(0), *sc = h_open(1);
	struct h_qp_opts sopts = { .type = IBV_QPT_RC, .buf_len = TAGBUF + TAGS * SLOT };

	if (cc == NULL || sc == NULL)
		return -1;
	spd = ibv_alloc_pd(sc);
	tcq = h_tm_cq(sc, 256);
	if (spd == NULL || tcq == NULL)
		return -1;
	srq = h_tm_srq(spd, ibv_cq_ex_to_cq(tcq), SRQ_WR, TAGS, 16);
	if (srq == NULL)
		return -1;
	sopts.pd = spd;
	sopts.srq = srq;
	unexp = 0;
	if (h_side_create(&cli, cc, &copts) || h_side_create(&srv, sc, &sopts) ||
	    h_connect(&cli, &srv, &copts) || h_connect(&srv, &cli, &sopts))
		return -1;
	for (uint32_t i = 0; i < SRQ_WR; i++) {
		struct ibv_sge sge = { (uintptr_t)srv.buf + i * SLOT, SLOT, srv.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			return -1;
	}
	return 0;
}

static void
teardown(void)
{
	struct ibv_context *cc = cli.ctx, *sc = srv.ctx;

	h_side_destroy(&cli);
	h_side_destroy(&srv);
	if (srq)
		ibv_destroy_srq(srq);
	if (tcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(tcq));
	if (spd)
		ibv_dealloc_pd(spd);
	ibv_close_device(cc);
	ibv_close_device(sc);
	srq = NULL;
	tcq = NULL;
	spd = NULL;
}

struct tmwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	unsigned int flags;
	uint32_t imm;			/* host order */
	struct ibv_wc_tm_info tm;
};

/* One completion of the TM CQ, within 5 s; 0 or -1. */
static int
tm_poll(struct tmwc *w)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = h_now_ms() + 5000;
	int ret;

	while ((ret = ibv_start_poll(tcq, &pa)) == ENOENT && h_now_ms() < end)
		;
	if (ret != 0)
		return -1;
	w->wr_id = tcq->wr_id;
	w->status = tcq->status;
	w->opcode = ibv_wc_read_opcode(tcq);
	w->byte_len = ibv_wc_read_byte_len(tcq);
	w->flags = ibv_wc_read_wc_flags(tcq);
	w->imm = be32toh(ibv_wc_read_imm_data(tcq));
	ibv_wc_read_tm_info(tcq, &w->tm);
	ibv_end_poll(tcq);
	return 0;
}

static int
tm_none(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = h_now_ms() + 50;

	while (h_now_ms() < end) {
		if (ibv_start_poll(tcq, &pa) == 0) {
			ibv_end_poll(tcq);
			return -1;
		}
	}
	return 0;
}

static int
post_op(struct ibv_ops_wr *op)
{
	struct ibv_ops_wr *bad = NULL;

	return ibv_post_srq_ops(srq, op, &bad);
}

#define TRY(x) do { if ((x) != TEST_SUCCESS) return TEST_FAILED; } while (0)

/* Tag information comes only with IBV_WC_TM_MATCH (tag_matching.md, as mlx5). */
static int
no_tm_info(const struct tmwc *w)
{
	TEST_ASSERT(!(w->flags & IBV_WC_TM_MATCH), "flags %#x", w->flags);
	TEST_ASSERT_EQ(w->tm.tag, 0);
	TEST_ASSERT_EQ(w->tm.priv, 0);
	return TEST_SUCCESS;
}

/* ADD (signaled) of tagged buffer @k; returns its handle, checks the completion. */
static int
add_tag(uint64_t tag, uint64_t mask, int k, uint64_t recv_wr_id, uint32_t *handle,
	unsigned int *cflags)
{
	struct ibv_sge sge = { (uintptr_t)srv.buf + TAGBUF + k * SLOT, SLOT, srv.mr->lkey };
	struct ibv_ops_wr op = {
		.wr_id = 500 + k, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
		.tm = { .unexpected_cnt = unexp,
			.add = { .recv_wr_id = recv_wr_id, .sg_list = &sge, .num_sge = 1,
				 .tag = tag, .mask = mask } },
	};
	struct tmwc w;

	TEST_ASSERT_EQ(post_op(&op), 0);
	*handle = op.tm.handle;
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_ADD);
	TEST_ASSERT_EQ(w.wr_id, 500 + k);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "ADD: %s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.flags & ~IBV_WC_TM_SYNC_REQ, 0);
	TRY(no_tm_info(&w));
	if (cflags)
		*cflags = w.flags;
	return TEST_SUCCESS;
}

static int
sync_cnt(void)
{
	struct ibv_ops_wr op = { .wr_id = 27, .opcode = IBV_WR_TAG_SYNC,
				 .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
				 .tm = { .unexpected_cnt = unexp } };
	struct tmwc w;

	TEST_ASSERT_EQ(post_op(&op), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_SYNC);
	TEST_ASSERT_EQ(w.wr_id, 27);
	TEST_ASSERT(!(w.flags & IBV_WC_TM_SYNC_REQ), "still out of sync after SYNC");
	TEST_ASSERT_EQ(w.flags, 0);
	return no_tm_info(&w);
}

/* The client sends a TMH (op, tag, ctx) followed by @len bytes of pattern @seed. */
static int
send_tm(uint8_t op, uint64_t tag, uint32_t ctx, uint32_t len, uint32_t seed)
{
	struct ibv_tmh tmh = { .opcode = op, .app_ctx = htobe32(ctx), .tag = htobe64(tag) };
	struct ibv_wc wc;

	memcpy(cli.buf, &tmh, sizeof(tmh));
	h_pattern(cli.buf + sizeof(tmh), len, seed);
	TEST_ASSERT_EQ(h_post_send(&cli, IBV_WR_SEND, 0, sizeof(tmh) + len, seed,
				   IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(cli.scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

static int
test_caps_report_rc_tag_matching(void)
{
	struct ibv_device_attr_ex a;

	TEST_ASSERT_EQ(ibv_query_device_ex(srv.ctx, NULL, &a), 0);
	TEST_ASSERT(a.tm_caps.flags & IBV_TM_CAP_RC, "no IBV_TM_CAP_RC");
	TEST_ASSERT(a.tm_caps.max_num_tags >= TAGS, "max_num_tags %u", a.tm_caps.max_num_tags);
	TEST_ASSERT(a.tm_caps.max_ops >= 16, "max_ops %u", a.tm_caps.max_ops);
	TEST_ASSERT_EQ(a.tm_caps.max_sge, 1);
	TEST_ASSERT(a.tm_caps.max_rndv_hdr_size >= 32, "max_rndv_hdr_size %u",
		    a.tm_caps.max_rndv_hdr_size);
	return TEST_SUCCESS;
}

/* Expected eager messages: in the tagged buffer without the TMH. */
static int
eager_expected(uint32_t len)
{
	uint8_t exp[SLOT];
	uint32_t h;
	struct tmwc w;

	memset(srv.buf, 0xee, SLOT);
	TRY(add_tag(0x1234, ~0ull, 0, 77, &h, NULL));
	TRY(send_tm(IBV_TMH_EAGER, 0x1234, 0xc0ffee, len, len));
	if (len + sizeof(struct ibv_tmh) > 1024) {	/* several packets: MATCH first */
		TEST_ASSERT_EQ(tm_poll(&w), 0);
		TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
		TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH);
		TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
		TEST_ASSERT_EQ(w.byte_len, 0);
		TEST_ASSERT_EQ(w.wr_id, 77);
		TEST_ASSERT_EQ(w.tm.tag, 0x1234);
		TEST_ASSERT_EQ(w.tm.priv, 0xc0ffee);
	}
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.wr_id, 77);
	TEST_ASSERT_EQ(w.byte_len, len);
	TEST_ASSERT(w.flags & IBV_WC_TM_DATA_VALID, "flags %#x", w.flags);
	TEST_ASSERT_EQ(w.flags & ~(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), 0);
	if (len + sizeof(struct ibv_tmh) <= 1024) {	/* one packet: both at once */
		TEST_ASSERT(w.flags & IBV_WC_TM_MATCH, "flags %#x", w.flags);
		TEST_ASSERT_EQ(w.tm.tag, 0x1234);
		TEST_ASSERT_EQ(w.tm.priv, 0xc0ffee);
	} else {			/* DATA_VALID alone: no tag */
		TRY(no_tm_info(&w));
	}
	h_pattern(exp, len, len);
	TEST_ASSERT(memcmp(srv.buf + TAGBUF, exp, len) == 0, "tagged buffer differs");
	TEST_ASSERT(srv.buf[0] == 0xee, "an SRQ WQE was written");
	return tm_none();
}

static int
test_eager_one_packet_lands_in_tagged_buffer(void)
{
	TRY(eager_expected(100));
	return eager_expected(0);
}

static int
test_eager_several_packets_match_then_data_valid(void)
{
	return eager_expected(5000);
}

/* An unexpected message: whole, TMH included, in the first SRQ WQE. */
static int
expect_unexpected(uint64_t srq_wr_id, uint32_t len, uint32_t seed)
{
	uint8_t exp[SLOT];
	struct tmwc w;

	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.flags, 0);
	TRY(no_tm_info(&w));
	TEST_ASSERT_EQ(w.wr_id, srq_wr_id);
	TEST_ASSERT_EQ(w.byte_len, sizeof(struct ibv_tmh) + len);
	h_pattern(exp, len, seed);
	TEST_ASSERT(memcmp(srv.buf + (srq_wr_id - 1000) * SLOT + sizeof(struct ibv_tmh), exp,
			   len) == 0, "SRQ WQE payload differs");
	unexp++;
	return TEST_SUCCESS;
}

static int
test_unexpected_then_phase_sync(void)
{
	unsigned int cflags;
	struct tmwc w;
	uint32_t h;

	/* no tag posted: unexpected */
	TRY(send_tm(IBV_TMH_EAGER, 42, 1, 64, 1));
	TRY(expect_unexpected(1000, 64, 1));
	/* a tag posted before software reports it: out of phase */
	TRY(add_tag(42, ~0ull, 0, 88, &h, &cflags));
	TEST_ASSERT(cflags & IBV_WC_TM_SYNC_REQ, "ADD did not ask for a sync");
	TRY(send_tm(IBV_TMH_EAGER, 42, 2, 64, 2));
	TRY(expect_unexpected(1001, 64, 2));	/* not matched while out of phase */
	TRY(sync_cnt());
	TRY(send_tm(IBV_TMH_EAGER, 42, 3, 64, 3));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 88);
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	TEST_ASSERT_EQ(w.tm.tag, 42);
	TEST_ASSERT_EQ(w.tm.priv, 3);
	TEST_ASSERT_EQ(w.byte_len, 64);
	return tm_none();
}

/* A message of TMH opcode @op and @len more bytes: whole in SRQ WQE @k, NO_TAG. */
static int
no_tag_whole_in_srq(uint8_t op, uint32_t len, int k)
{
	struct tmwc w;

	TRY(send_tm(op, 9, 3, len, 4 + k));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_NO_TAG);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.flags, 0);
	TRY(no_tm_info(&w));
	TEST_ASSERT_EQ(w.wr_id, 1000 + k);
	TEST_ASSERT_EQ(w.byte_len, sizeof(struct ibv_tmh) + len);
	TEST_ASSERT(memcmp(srv.buf + k * SLOT, cli.buf, sizeof(struct ibv_tmh) + len) == 0,
		    "SRQ WQE differs (TMH included)");
	return TEST_SUCCESS;
}

static int
test_no_tag_goes_whole_to_srq_and_is_not_counted(void)
{
	uint32_t h;
	struct tmwc w;

	TRY(no_tag_whole_in_srq(IBV_TMH_NO_TAG, 200, 0));
	/* a FIN is no tagged message either: NO_TAG, as mlx5 reports it */
	TRY(no_tag_whole_in_srq(IBV_TMH_FIN, 16, 1));
	/* still in phase: a tag matches without a sync */
	TRY(add_tag(9, ~0ull, 1, 99, &h, NULL));
	TRY(send_tm(IBV_TMH_EAGER, 9, 0, 10, 5));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 99);
	TEST_ASSERT(w.flags & IBV_WC_TM_MATCH, "not matched");
	return TEST_SUCCESS;
}

static int
test_first_posted_wins_and_mask_applies(void)
{
	uint32_t h0, h1, h2;
	struct tmwc w;

	TRY(add_tag(0x1200, 0xff00, 0, 10, &h0, NULL));	/* matches 0x12xx */
	TRY(add_tag(0x12ab, ~0ull, 1, 11, &h1, NULL));
	TRY(add_tag(0x5500, 0xff00, 2, 12, &h2, NULL));
	TRY(send_tm(IBV_TMH_EAGER, 0x12ab, 0, 8, 6));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 10);
	TEST_ASSERT_EQ(w.tm.tag, 0x12ab);
	TRY(send_tm(IBV_TMH_EAGER, 0x12ab, 0, 8, 7));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 11);
	TRY(send_tm(IBV_TMH_EAGER, 0x55cd, 0, 8, 8));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 12);
	TEST_ASSERT_EQ(w.tm.tag, 0x55cd);
	return tm_none();
}

static int
test_del_removes_tag_and_fails_once_consumed(void)
{
	struct ibv_ops_wr del = { .wr_id = 31, .opcode = IBV_WR_TAG_DEL, .flags = IBV_OPS_SIGNALED };
	uint32_t h, h2;
	struct tmwc w;

	TRY(add_tag(7, ~0ull, 0, 70, &h, NULL));
	del.tm.handle = h;
	TEST_ASSERT_EQ(post_op(&del), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_DEL);
	TEST_ASSERT_EQ(w.wr_id, 31);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.flags, 0);
	TRY(no_tm_info(&w));
	TRY(send_tm(IBV_TMH_EAGER, 7, 0, 16, 9));	/* deleted: unexpected */
	TRY(expect_unexpected(1000, 16, 9));
	TRY(sync_cnt());
	/* consumed, then deleted: IBV_WC_TM_ERR */
	TRY(add_tag(8, ~0ull, 1, 80, &h2, NULL));
	TRY(send_tm(IBV_TMH_EAGER, 8, 0, 16, 10));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 80);
	del.tm.handle = h2;
	TEST_ASSERT_EQ(post_op(&del), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_DEL);
	TEST_ASSERT_EQ(w.status, IBV_WC_TM_ERR);
	TEST_ASSERT_EQ(w.wr_id, 31);
	return no_tm_info(&w);
}

/*
 * man ibv_post_srq_ops: an operation completes when IBV_OPS_SIGNALED asks,
 * failed or not (mlx5 requests a CQE for signaled ones only). An unsignaled
 * DEL of a tag consumed meanwhile, or of a handle not posted, fails
 * silently; the consumed tag's completion returns its handle, once.
 */
static int
test_unsignaled_del_that_fails_completes_nothing(void)
{
	struct ibv_ops_wr sync = { .wr_id = 28, .opcode = IBV_WR_TAG_SYNC,
				   .flags = IBV_OPS_SIGNALED };
	struct ibv_ops_wr del = { .wr_id = 32, .opcode = IBV_WR_TAG_DEL, .next = &sync };
	struct ibv_sge sge = { (uintptr_t)srv.buf + TAGBUF, SLOT, srv.mr->lkey };
	struct ibv_ops_wr add[TAGS + 1], *bad = NULL;
	uint32_t h;
	struct tmwc w;

	TRY(add_tag(9, ~0ull, 0, 90, &h, NULL));
	/* consumed (the sender has its ACK), its completion not yet polled: then DEL */
	TRY(send_tm(IBV_TMH_EAGER, 9, 0x99, 16, 11));
	del.tm.handle = h;
	sync.tm.unexpected_cnt = unexp;
	TEST_ASSERT_EQ(post_op(&del), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.wr_id, 90);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID),
		       IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	TEST_ASSERT_EQ(w.byte_len, 16);
	/* the SYNC posted after the DEL: no TM_DEL completion before it */
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.opcode == IBV_WC_TM_SYNC, "opcode %d wr_id %" PRIu64 " status %s: "
		    "an unsignaled DEL completed", w.opcode, w.wr_id, ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.wr_id, 28);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TRY(tm_none());
	/* the handle is free now: an unsignaled DEL of it fails silently too ... */
	TEST_ASSERT_EQ(post_op(&del), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_SYNC);
	TEST_ASSERT_EQ(w.wr_id, 28);
	/* ... and a signaled one reports the failure */
	del.flags = IBV_OPS_SIGNALED;
	del.next = NULL;
	TEST_ASSERT_EQ(post_op(&del), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_DEL);
	TEST_ASSERT_EQ(w.wr_id, 32);
	TEST_ASSERT_EQ(w.status, IBV_WC_TM_ERR);
	TRY(tm_none());
	/* every handle free exactly once: TAGS ADDs take them, the next is ENOMEM */
	for (int i = 0; i <= TAGS; i++)
		add[i] = (struct ibv_ops_wr){ .wr_id = 600 + i, .opcode = IBV_WR_TAG_ADD,
			.next = i < TAGS ? &add[i + 1] : NULL,
			.tm = { .add = { .recv_wr_id = 600 + i, .sg_list = &sge, .num_sge = 1,
					 .tag = 600 + i, .mask = ~0ull } } };
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, add, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &add[TAGS]);
	return tm_none();
}

/* The client asks for a rendezvous of @len bytes at cli.buf + 65536 (rkey @rkey). */
static int
send_rndv(uint64_t tag, uint32_t ctx, uint32_t len, uint32_t rkey)
{
	struct ibv_rvh rvh = { .va = htobe64((uintptr_t)cli.buf + 65536), .rkey = htobe32(rkey),
			       .len = htobe32(len) };
	struct ibv_tmh tmh = { .opcode = IBV_TMH_RNDV, .app_ctx = htobe32(ctx), .tag = htobe64(tag) };
	struct ibv_wc wc;

	memcpy(cli.buf, &tmh, sizeof(tmh));
	memcpy(cli.buf + sizeof(tmh), &rvh, sizeof(rvh));
	memset(cli.buf + 32, 0x5a, 16);		/* metadata */
	TEST_ASSERT_EQ(h_post_send(&cli, IBV_WR_SEND, 0, 48, 1, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(cli.scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/* Rendezvous: MATCH, the engine READs the data, sends the FIN, DATA_VALID. */
static int
test_rndv_engine_reads_data_and_sends_fin(void)
{
	const uint32_t len = 6000;
	struct ibv_tmh fin;
	struct ibv_wc wc;
	struct tmwc w;
	uint32_t h;

	h_pattern(cli.buf + 65536, len, 11);
	memset(srv.buf + TAGBUF, 0, SLOT);
	TEST_ASSERT_EQ(h_post_recv(&cli, 32768, 64, 555), 0);	/* for the FIN */
	TRY(add_tag(3, ~0ull, 0, 30, &h, NULL));
	TRY(send_rndv(3, 5, len, cli.mr->rkey));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.wr_id, 30);
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH);
	TEST_ASSERT_EQ(w.byte_len, 0);
	TEST_ASSERT_EQ(w.tm.tag, 3);
	TEST_ASSERT_EQ(w.tm.priv, 5);
	/* the sender's FIN */
	TEST_ASSERT_EQ(h_poll(cli.rcq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "FIN: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.wr_id, 555);
	TEST_ASSERT_EQ(wc.byte_len, sizeof(fin));
	memcpy(&fin, cli.buf + 32768, sizeof(fin));
	TEST_ASSERT_EQ(fin.opcode, IBV_TMH_FIN);
	TEST_ASSERT_EQ(be64toh(fin.tag), 3);
	TEST_ASSERT_EQ(be32toh(fin.app_ctx), 5);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.wr_id, 30);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	/* DATA_VALID alone: no tag information (rdma-core's test_tm_rndv) */
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_DATA_VALID);
	TRY(no_tm_info(&w));
	TEST_ASSERT_EQ(w.byte_len, len);
	TEST_ASSERT(memcmp(srv.buf + TAGBUF, cli.buf + 65536, len) == 0, "data differs");
	return tm_none();
}

/*
 * SEND_WITH_IMM carries a TM message too: the immediate comes with the
 * completion of the message that carried it (eager: MATCH + DATA_VALID; a
 * rendezvous request: MATCH), never with the engine's DATA_VALID.
 */
static int
test_tm_messages_with_imm(void)
{
	struct ibv_tmh tmh = { .opcode = IBV_TMH_EAGER, .app_ctx = htobe32(8), .tag = htobe64(5) };
	struct ibv_sge sge = { (uintptr_t)cli.buf, sizeof(tmh) + 40, cli.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0xabcd0001) }, *bad;
	struct ibv_rvh rvh = { .va = htobe64((uintptr_t)cli.buf + 65536),
			       .rkey = htobe32(cli.mr->rkey), .len = htobe32(500) };
	struct ibv_wc wc;
	struct tmwc w;
	uint32_t h;

	TRY(add_tag(5, ~0ull, 0, 50, &h, NULL));
	memcpy(cli.buf, &tmh, sizeof(tmh));
	TEST_ASSERT_EQ(ibv_post_send(cli.qp, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(cli.scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.wr_id, 50);
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID | IBV_WC_WITH_IMM);
	TEST_ASSERT_EQ(w.imm, 0xabcd0001);
	TEST_ASSERT_EQ(w.byte_len, 40);
	TEST_ASSERT_EQ(w.tm.tag, 5);
	TEST_ASSERT_EQ(w.tm.priv, 8);
	/* a rendezvous request with an immediate */
	TEST_ASSERT_EQ(h_post_recv(&cli, 32768, 64, 557), 0);	/* for the FIN */
	TRY(add_tag(6, ~0ull, 1, 60, &h, NULL));
	tmh.opcode = IBV_TMH_RNDV;
	tmh.tag = htobe64(6);
	memcpy(cli.buf, &tmh, sizeof(tmh));
	memcpy(cli.buf + sizeof(tmh), &rvh, sizeof(rvh));
	sge.length = sizeof(tmh) + sizeof(rvh);
	wr.imm_data = htobe32(0xabcd0002);
	TEST_ASSERT_EQ(ibv_post_send(cli.qp, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(cli.scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.wr_id, 60);
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH | IBV_WC_WITH_IMM);
	TEST_ASSERT_EQ(w.imm, 0xabcd0002);
	TEST_ASSERT_EQ(w.tm.tag, 6);
	TEST_ASSERT_EQ(h_poll(cli.rcq, &wc, 1, 5000), 1);	/* the FIN */
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "FIN: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.wr_id, 60);
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_DATA_VALID);
	TEST_ASSERT_EQ(w.byte_len, 500);
	TRY(no_tm_info(&w));
	return tm_none();
}

/* Data larger than the tagged buffer: software's job (TMH + RVH in the buffer). */
static int
test_rndv_too_big_is_handed_to_software(void)
{
	struct tmwc w;
	uint32_t h;

	TRY(add_tag(3, ~0ull, 0, 30, &h, NULL));
	TRY(send_rndv(3, 5, SLOT + 1, cli.mr->rkey));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.status, IBV_WC_TM_RNDV_INCOMPLETE);
	TEST_ASSERT_EQ(w.wr_id, 30);
	/* the whole request is in the buffer: a full completion */
	TEST_ASSERT_EQ(w.flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	TEST_ASSERT_EQ(w.byte_len, 48);
	TEST_ASSERT_EQ(w.tm.tag, 3);
	TEST_ASSERT_EQ(w.tm.priv, 5);
	TEST_ASSERT(memcmp(srv.buf + TAGBUF, cli.buf, 48) == 0, "TMH + RVH not in the buffer");
	return tm_none();
}

/* A rendezvous READ the sender refuses: the tag completes with the error. */
static int
test_rndv_bad_rkey_completes_tag_with_error(void)
{
	struct tmwc w;
	uint32_t h;

	TRY(add_tag(3, ~0ull, 0, 30, &h, NULL));
	TRY(send_rndv(3, 5, 100, cli.mr->rkey ^ 0x5a5a00));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.flags & IBV_WC_TM_MATCH, IBV_WC_TM_MATCH);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.wr_id, 30);
	TEST_ASSERT_EQ(w.status, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(w.flags, 0);
	return no_tm_info(&w);
}

/* Handles come back as their last completion is polled, also by ibv_poll_cq. */
static int
test_handles_recycle_through_poll(void)
{
	for (int i = 0; i < 4 * TAGS; i++) {
		struct ibv_sge sge = { (uintptr_t)srv.buf + TAGBUF, SLOT, srv.mr->lkey };
		struct ibv_ops_wr op = {
			.wr_id = i, .opcode = IBV_WR_TAG_ADD,
			.tm = { .add = { .recv_wr_id = i, .sg_list = &sge, .num_sge = 1,
					 .tag = 100 + i, .mask = ~0ull } },
		};
		struct ibv_wc wc;

		TEST_ASSERT(post_op(&op) == 0, "ADD %d: no handle", i);
		TRY(send_tm(IBV_TMH_EAGER, 100 + i, 0, 4, i));
		TEST_ASSERT_EQ(h_poll(ibv_cq_ex_to_cq(tcq), &wc, 1, 5000), 1);
		TEST_ASSERT_EQ(wc.opcode, IBV_WC_TM_RECV);
		TEST_ASSERT_EQ(wc.wr_id, (uint64_t)i);
		TEST_ASSERT_EQ(wc.src_qp, 0);	/* the carried fields are cleared */
		TEST_ASSERT_EQ(wc.vendor_err, 0);
	}
	return TEST_SUCCESS;
}

static int
test_bad_ops_errno_and_bad_op(void)
{
	struct ibv_sge sge[2] = { { (uintptr_t)srv.buf, 8, srv.mr->lkey },
				  { (uintptr_t)srv.buf, 8, srv.mr->lkey } };
	struct ibv_ops_wr ops[TAGS + 1], bad_opc = { .opcode = 77 }, *bad = NULL;
	struct ibv_ops_wr two = { .opcode = IBV_WR_TAG_ADD,
				  .tm = { .add = { .sg_list = sge, .num_sge = 2 } } };
	struct ibv_ops_wr del = { .opcode = IBV_WR_TAG_DEL, .tm = { .handle = TAGS } };
	struct ibv_ops_wr flags = { .opcode = IBV_WR_TAG_SYNC, .flags = 1 << 7 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *basic;

	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &bad_opc, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &bad_opc);
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &two, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &two);
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &del, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &del);
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, &flags, &bad), EINVAL);
	/* a list: TAGS ADDs take every handle, the next one is ENOMEM */
	for (int i = 0; i <= TAGS; i++) {
		ops[i] = (struct ibv_ops_wr){ .wr_id = i, .opcode = IBV_WR_TAG_ADD,
			.next = i < TAGS ? &ops[i + 1] : NULL,
			.tm = { .add = { .sg_list = sge, .num_sge = 1, .tag = 1000 + i,
					 .mask = ~0ull } } };
	}
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, ops, &bad), ENOMEM);
	TEST_ASSERT_PTR_EQ(bad, &ops[TAGS]);
	for (int i = 0; i < TAGS; i++)
		for (int j = 0; j < i; j++)
			TEST_ASSERT(ops[i].tm.handle != ops[j].tm.handle, "handle %u twice",
				    ops[i].tm.handle);
	/* the ADDs before the failure were posted: the last of them matches */
	TRY(send_tm(IBV_TMH_EAGER, 1000 + TAGS - 1, 0, 4, 1));
	{
		struct tmwc w;

		TEST_ASSERT_EQ(tm_poll(&w), 0);
		TEST_ASSERT_EQ(w.wr_id, 0);	/* recv_wr_id */
		TEST_ASSERT_EQ(w.tm.tag, 1000 + TAGS - 1);
	}
	/* a basic SRQ has no tag list */
	basic = ibv_create_srq(spd, &sa);
	TEST_ASSERT(basic != NULL, "create_srq");
	TEST_ASSERT_EQ(ibv_post_srq_ops(basic, &flags, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &flags);
	TEST_ASSERT_EQ(ibv_destroy_srq(basic), 0);
	return TEST_SUCCESS;
}

static int
test_create_tm_srq_checks(void)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = spd,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
	};
	struct ibv_qp_init_attr qa = {
		.send_cq = srv.scq, .recv_cq = srv.rcq, .srq = srq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	struct ibv_srq *s;

	errno = 0;
	TEST_ASSERT(ibv_create_srq_ex(srv.ctx, &sa) == NULL && errno == EINVAL, "no CQ: %d", errno);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = ibv_cq_ex_to_cq(tcq);
	sa.tm_cap.max_num_tags = 1u << 20;
	errno = 0;
	TEST_ASSERT(ibv_create_srq_ex(srv.ctx, &sa) == NULL && errno == EINVAL, "tags: %d", errno);
	sa.tm_cap.max_num_tags = 4;
	sa.cq = cli.rcq;			/* a CQ of another device */
	errno = 0;
	TEST_ASSERT(ibv_create_srq_ex(srv.ctx, &sa) == NULL && errno == EINVAL, "CQ: %d", errno);
	sa.cq = ibv_cq_ex_to_cq(tcq);
	s = ibv_create_srq_ex(srv.ctx, &sa);
	TEST_ASSERT(s != NULL, "create TM SRQ: %s", strerror(errno));
	/* a CQ stays while a TM SRQ completes into it */
	TEST_ASSERT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(tcq)), EBUSY);
	TEST_ASSERT_EQ(ibv_destroy_srq(s), 0);
	/* tag matching is RC only */
	errno = 0;
	TEST_ASSERT(ibv_create_qp(spd, &qa) == NULL && errno == EINVAL, "UD on a TM SRQ: %d", errno);
	return TEST_SUCCESS;
}

/*
 * The engine READs into a tagged buffer through the SGE as posted: a buffer
 * registered at an iova other than its address still takes the data.
 */
static int
test_rndv_into_buffer_registered_at_other_iova(void)
{
	const uint64_t iova = 0x40000000ull;
	const uint32_t len = 3000;
	struct ibv_mr *mr = ibv_reg_mr_iova(spd, srv.buf + TAGBUF, SLOT, iova,
					    IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { iova, SLOT, 0 };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_ADD,
		.tm = { .add = { .recv_wr_id = 40, .sg_list = &sge, .num_sge = 1, .tag = 4,
				 .mask = ~0ull } } };
	struct ibv_wc wc;
	struct tmwc w;

	TEST_ASSERT(mr != NULL, "reg_mr_iova: %s", strerror(errno));
	sge.lkey = mr->lkey;
	h_pattern(cli.buf + 65536, len, 12);
	memset(srv.buf + TAGBUF, 0, SLOT);
	TEST_ASSERT_EQ(h_post_recv(&cli, 32768, 64, 556), 0);	/* for the FIN */
	TEST_ASSERT_EQ(post_op(&op), 0);
	TRY(send_rndv(4, 6, len, cli.mr->rkey));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), IBV_WC_TM_MATCH);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "READ: %s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.wr_id, 40);
	TEST_ASSERT_EQ(w.byte_len, len);
	TEST_ASSERT(memcmp(srv.buf + TAGBUF, cli.buf + 65536, len) == 0, "data differs");
	TEST_ASSERT_EQ(h_poll(cli.rcq, &wc, 1, 5000), 1);	/* the FIN */
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "FIN: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(ibv_dereg_mr(mr), 0);
	return TEST_SUCCESS;
}

/*
 * An unexpected message that never reaches software (here: longer than the
 * SRQ WQE, an error completion) is not counted: software, which cannot count
 * it, is still in phase, and tags keep matching on the SRQ's other QPs.
 */
static int
test_failed_unexpected_message_does_not_break_phase(void)
{
	unsigned int cflags;
	struct ibv_qp_attr ra = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;
	struct tmwc w;
	uint32_t h;

	/* TMH + 9000 bytes do not fit the 8 KiB SRQ WQE */
	memset(cli.buf, 0, sizeof(struct ibv_tmh));
	cli.buf[0] = IBV_TMH_EAGER;
	TEST_ASSERT_EQ(h_post_send(&cli, IBV_WR_SEND, 0, sizeof(struct ibv_tmh) + 9000, 1,
				   IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(cli.scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status != IBV_WC_SUCCESS, "oversized send succeeded");
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 1000);
	TEST_ASSERT_EQ(w.status, IBV_WC_LOC_LEN_ERR);
	/* both QPs are in ERR: connect them again, as a new pair on the same SRQ */
	TEST_ASSERT_EQ(ibv_modify_qp(cli.qp, &ra, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(srv.qp, &ra, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_connect(&cli, &srv, &copts), 0);
	TEST_ASSERT_EQ(h_connect(&srv, &cli, &copts), 0);
	TRY(add_tag(21, ~0ull, 0, 210, &h, &cflags));
	TEST_ASSERT(!(cflags & IBV_WC_TM_SYNC_REQ), "a failed message left the SRQ out of phase");
	TRY(send_tm(IBV_TMH_EAGER, 21, 0, 32, 13));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.wr_id, 210);
	TEST_ASSERT(w.flags & IBV_WC_TM_MATCH, "not matched (flags %#x)", w.flags);
	return TEST_SUCCESS;
}

/* One more TM SRQ (two tags, one SRQ WQE) completing into the same CQ. */
static struct ibv_srq *
extra_tm_srq(void)
{
	return h_tm_srq(spd, ibv_cq_ex_to_cq(tcq), 1, 2, 8);
}

/*
 * The same for an unexpected message cut short by a QP reset. A TM SRQ of
 * its own has one 2 MiB WQE; its limit event says the first packet of a
 * 1 MiB message took it; the sender then stops (ERR) and the receiver is
 * reset. Should the message have arrived whole first, software counts it,
 * so the check holds either way.
 */
static int
test_unexpected_message_cut_by_reset_does_not_break_phase(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .pd = spd, .buf_len = 2 << 20 };
	struct ibv_srq_attr la = { .srq_limit = 1 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct pollfd pfd = { .fd = srv.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev = { .event_type = IBV_EVENT_QP_FATAL };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_ops_wr sync = { .wr_id = 28, .opcode = IBV_WR_TAG_SYNC,
				   .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC }, *bad;
	struct ibv_recv_wr rw = { .num_sge = 1 }, *rbad;
	struct ibv_sge sge;
	struct h_side s2;
	struct ibv_srq *big;
	struct tmwc w;

	big = extra_tm_srq();
	TEST_ASSERT(big != NULL, "create TM SRQ: %s", strerror(errno));
	o.srq = big;
	TEST_ASSERT_EQ(h_side_create(&s2, srv.ctx, &o), 0);
	sge = (struct ibv_sge){ (uintptr_t)s2.buf, 2 << 20, s2.mr->lkey };
	rw.sg_list = &sge;
	TEST_ASSERT_EQ(ibv_post_srq_recv(big, &rw, &rbad), 0);
	TEST_ASSERT_EQ(ibv_modify_srq(big, &la, IBV_SRQ_LIMIT), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(cli.qp, &qa, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_connect(&cli, &s2, &copts), 0);
	TEST_ASSERT_EQ(h_connect(&s2, &cli, &copts), 0);
	memset(cli.buf, 0, sizeof(struct ibv_tmh));
	cli.buf[0] = IBV_TMH_EAGER;
	TEST_ASSERT_EQ(h_post_send(&cli, IBV_WR_SEND, 0, 1 << 20, 1, 0), 0);
	while (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED) {
		TEST_ASSERT(poll(&pfd, 1, 5000) == 1, "no SRQ limit event");
		TEST_ASSERT_EQ(ibv_get_async_event(srv.ctx, &ev), 0);
		ibv_ack_async_event(&ev);
	}
	qa.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(ibv_modify_qp(cli.qp, &qa, IBV_QP_STATE), 0);
	qa.qp_state = IBV_QPS_RESET;
	TEST_ASSERT_EQ(ibv_modify_qp(s2.qp, &qa, IBV_QP_STATE), 0);
	if (ibv_start_poll(tcq, &pa) == 0) {	/* it did arrive whole: software counts it */
		sync.tm.unexpected_cnt = tcq->status == IBV_WC_SUCCESS;
		ibv_end_poll(tcq);
	}
	TEST_ASSERT_EQ(ibv_post_srq_ops(big, &sync, &bad), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_SYNC);
	TEST_ASSERT(!(w.flags & IBV_WC_TM_SYNC_REQ), "a message cut short left the SRQ out of phase");
	h_side_destroy(&s2);
	TEST_ASSERT_EQ(ibv_destroy_srq(big), 0);
	return TEST_SUCCESS;
}

/*
 * A QP reset while its rendezvous READ waits (the QP is in SQD, which starts
 * no send WQE): the tag still ends, flushed, and its handle comes back.
 */
static int
test_reset_mid_rendezvous_flushes_the_tag(void)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD };
	struct ibv_sge sge = { (uintptr_t)srv.buf + TAGBUF, SLOT, srv.mr->lkey };
	struct ibv_ops_wr ops[TAGS], *bad;
	struct tmwc w;
	uint32_t h;

	TRY(add_tag(3, ~0ull, 0, 30, &h, NULL));
	TEST_ASSERT_EQ(ibv_modify_qp(srv.qp, &qa, IBV_QP_STATE), 0);
	TRY(send_rndv(3, 5, 1000, cli.mr->rkey));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), IBV_WC_TM_MATCH);
	TEST_ASSERT(tm_none() == 0, "the READ ran in SQD");
	qa.qp_state = IBV_QPS_RESET;
	TEST_ASSERT_EQ(ibv_modify_qp(srv.qp, &qa, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_RECV);
	TEST_ASSERT_EQ(w.status, IBV_WC_WR_FLUSH_ERR);
	TEST_ASSERT_EQ(w.wr_id, 30);
	TEST_ASSERT_EQ(w.flags, 0);
	TRY(no_tm_info(&w));
	/* every handle is free again */
	for (int i = 0; i < TAGS; i++)
		ops[i] = (struct ibv_ops_wr){ .opcode = IBV_WR_TAG_ADD, .next = i + 1 < TAGS ? &ops[i + 1] : NULL,
			.tm = { .add = { .sg_list = &sge, .num_sge = 1, .tag = 100 + i, .mask = ~0ull } } };
	TEST_ASSERT_EQ(ibv_post_srq_ops(srq, ops, &bad), 0);
	return TEST_SUCCESS;
}

/* A QP of another PD than its TM SRQ: the rendezvous READ lands in the SRQ's memory. */
static int
test_rndv_on_qp_of_another_pd(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC, .srq = srq };	/* a PD of its own */
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct h_side s2;
	struct tmwc w;
	struct ibv_wc wc;
	uint32_t h;

	TEST_ASSERT_EQ(h_side_create(&s2, srv.ctx, &o), 0);
	TEST_ASSERT(s2.pd != spd, "same PD");
	TEST_ASSERT_EQ(ibv_modify_qp(cli.qp, &qa, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_connect(&cli, &s2, &copts), 0);
	TEST_ASSERT_EQ(h_connect(&s2, &cli, &copts), 0);
	h_pattern(cli.buf + 65536, 2000, 12);
	TEST_ASSERT_EQ(h_post_recv(&cli, 32768, 64, 556), 0);	/* for the FIN */
	TRY(add_tag(4, ~0ull, 0, 40, &h, NULL));
	TRY(send_rndv(4, 6, 2000, cli.mr->rkey));
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT_EQ(w.flags & IBV_WC_TM_MATCH, IBV_WC_TM_MATCH);
	TEST_ASSERT_EQ(tm_poll(&w), 0);
	TEST_ASSERT(w.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(w.status));
	TEST_ASSERT_EQ(w.flags & IBV_WC_TM_DATA_VALID, IBV_WC_TM_DATA_VALID);
	TEST_ASSERT(memcmp(srv.buf + TAGBUF, cli.buf + 65536, 2000) == 0, "data differs");
	TEST_ASSERT_EQ(h_poll(cli.rcq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 556);
	h_side_destroy(&s2);
	return TEST_SUCCESS;
}

/*
 * A TM SRQ destroyed before its completions were polled: the handles those
 * completions give back belong to it, never to a TM SRQ created after it
 * (which takes its place in the device's table).
 */
static int
test_destroyed_srq_handles_stay_out_of_successor(void)
{
	struct ibv_sge sge = { (uintptr_t)srv.buf + TAGBUF, SLOT, srv.mr->lkey };
	struct ibv_ops_wr add = { .opcode = IBV_WR_TAG_ADD,
		.tm = { .add = { .sg_list = &sge, .num_sge = 1, .tag = 1, .mask = ~0ull } } };
	struct ibv_ops_wr del[2], *bad;
	struct ibv_srq *old, *c;
	uint32_t h[2];
	uint64_t end;
	struct tmwc w;
	int ret;

	old = extra_tm_srq();
	TEST_ASSERT(old != NULL, "create TM SRQ: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(ibv_post_srq_ops(old, &add, &bad), 0);
		h[i] = add.tm.handle;
	}
	/* h[1] comes back when its DEL completion is polled, h[0] at once */
	del[0] = (struct ibv_ops_wr){ .wr_id = 61, .opcode = IBV_WR_TAG_DEL,
				      .flags = IBV_OPS_SIGNALED, .next = &del[1],
				      .tm = { .handle = h[1] } };
	del[1] = (struct ibv_ops_wr){ .opcode = IBV_WR_TAG_DEL, .tm = { .handle = h[0] } };
	TEST_ASSERT_EQ(ibv_post_srq_ops(old, del, &bad), 0);
	end = h_now_ms() + 5000;	/* once h[0] is back, both DELs are done */
	while ((ret = ibv_post_srq_ops(old, &add, &bad)) == ENOMEM && h_now_ms() < end)
		;
	TEST_ASSERT_EQ(ret, 0);
	TEST_ASSERT_EQ(ibv_destroy_srq(old), 0);
	c = extra_tm_srq();
	TEST_ASSERT(c != NULL, "create TM SRQ: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		TEST_ASSERT_EQ(ibv_post_srq_ops(c, &add, &bad), 0);
	TEST_ASSERT_EQ(tm_poll(&w), 0);		/* the old SRQ's DEL */
	TEST_ASSERT_EQ(w.opcode, IBV_WC_TM_DEL);
	TEST_ASSERT_EQ(w.wr_id, 61);
	TEST_ASSERT_EQ(ibv_post_srq_ops(c, &add, &bad), ENOMEM);
	TEST_ASSERT_EQ(ibv_destroy_srq(c), 0);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_caps_report_rc_tag_matching),
	TEST_CASE(test_eager_one_packet_lands_in_tagged_buffer),
	TEST_CASE(test_eager_several_packets_match_then_data_valid),
	TEST_CASE(test_unexpected_then_phase_sync),
	TEST_CASE(test_no_tag_goes_whole_to_srq_and_is_not_counted),
	TEST_CASE(test_first_posted_wins_and_mask_applies),
	TEST_CASE(test_del_removes_tag_and_fails_once_consumed),
	TEST_CASE(test_unsignaled_del_that_fails_completes_nothing),
	TEST_CASE(test_rndv_engine_reads_data_and_sends_fin),
	TEST_CASE(test_rndv_too_big_is_handed_to_software),
	TEST_CASE(test_rndv_bad_rkey_completes_tag_with_error),
	TEST_CASE(test_handles_recycle_through_poll),
	TEST_CASE(test_bad_ops_errno_and_bad_op),
	TEST_CASE(test_create_tm_srq_checks),
	TEST_CASE(test_rndv_into_buffer_registered_at_other_iova),
	TEST_CASE(test_failed_unexpected_message_does_not_break_phase),
	TEST_CASE(test_unexpected_message_cut_by_reset_does_not_break_phase),
	TEST_CASE(test_destroyed_srq_handles_stay_out_of_successor),
	TEST_CASE(test_reset_mid_rendezvous_flushes_the_tag),
	TEST_CASE(test_tm_messages_with_imm),
	TEST_CASE(test_rndv_on_qp_of_another_pd),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "tm", cases, setup, teardown);
}
