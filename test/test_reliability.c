/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC reliability: a peer that vanishes, RNR (rnr_retry 0 and 7, empty SRQ),
 * and solicited-only completion events.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"

/* droce1 disappears mid-stream: RETRY_EXC_ERR within timeout x retries, the rest flush. */
static int
test_vanished_peer_gives_retry_exc_err_then_flush(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .timeout = 8, .retry_cnt_p1 = 3 + 1 };
	struct h_side a, b;
	struct ibv_context *cb;
	struct ibv_wc wc[8];
	double t0, dt;
	int got = 0;

	TEST_ASSERT_EQ(h_pair(&a, &b, &o), 0);
	TEST_ASSERT_EQ(h_post_recv(&b, 0, 4096, 1), 0);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 4096, 1, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
	/* the peer's device goes away */
	cb = b.ctx;
	h_side_destroy(&b);
	ibv_close_device(cb);
	TEST_ASSERT_EQ(droce_dev_destroy("droce1"), 0);
	t0 = (double)h_now_ms();
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 2048, 10 + i, IBV_SEND_SIGNALED), 0);
	while (got < 4 && (double)h_now_ms() - t0 < 5000)
		got += h_poll(a.scq, wc + got, 4 - got, 100);
	dt = (double)h_now_ms() - t0;
	TEST_ASSERT_EQ(got, 4);
	TEST_ASSERT_EQ(wc[0].wr_id, 10);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	for (int i = 1; i < 4; i++) {
		TEST_ASSERT_EQ(wc[i].wr_id, 10 + i);
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
	}
	/* 4 tries of ~1 ms each; generous bound for a loaded 2-core machine */
	TEST_ASSERT(dt < 1000, "took %.1f ms", dt);
	printf("# retry exhausted after %.2f ms (timeout 8 = 1.05 ms, retry_cnt 3)\n", dt);
	cb = a.ctx;
	h_side_destroy(&a);
	ibv_close_device(cb);
	/* bring droce1 back for the next cases */
	TEST_ASSERT_EQ(droce_dev_create("droce1", "ethdev=net_ring_b,ip=10.0.0.2,mtu=4200"), 0);
	return TEST_SUCCESS;
}

static int
test_rnr_retry_0_fails_fast(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry_p1 = 0 + 1 };
	struct h_side a, b;
	struct ibv_wc wc;
	int ret = TEST_SUCCESS;

	TEST_ASSERT_EQ(h_pair(&a, &b, &o), 0);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 100, 5, IBV_SEND_SIGNALED), 0);
	if (h_poll(a.scq, &wc, 1, 3000) != 1 || wc.status != IBV_WC_RNR_RETRY_EXC_ERR) {
		fprintf(stderr, "  expected RNR_RETRY_EXC_ERR, got %s\n", ibv_wc_status_str(wc.status));
		ret = TEST_FAILED;
	}
	h_pair_destroy(&a, &b);
	return ret;
}

static int
test_rnr_retry_7_succeeds_when_receive_posted_later(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct h_side a, b;
	struct ibv_wc wc;
	double t0;

	TEST_ASSERT_EQ(h_pair(&a, &b, &o), 0);
	memset(a.buf, 'r', 3000);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 3000, 5, IBV_SEND_SIGNALED), 0);
	t0 = (double)h_now_ms();
	while ((double)h_now_ms() - t0 < 50)
		ibv_poll_cq(a.scq, 0, &wc);	/* let RNR NAKs happen */
	TEST_ASSERT(h_xstat("droce1", "rnr_naks_sent") > 0, "no RNR NAK was sent");
	TEST_ASSERT_EQ(h_post_recv(&b, 0, 4096, 9), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 3000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, 3000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.byte_len, 3000);
	TEST_ASSERT(b.buf[0] == 'r' && b.buf[2999] == 'r', "payload");
	h_pair_destroy(&a, &b);
	return TEST_SUCCESS;
}

static int
test_empty_srq_triggers_rnr_then_delivers(void)
{
	struct h_side a, b;
	struct ibv_context *cb = h_open(1);
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_recv_wr wr = { .wr_id = 44, .num_sge = 1 }, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t rnr0 = h_xstat("droce1", "rnr_naks_sent");
	double t0;

	TEST_ASSERT(cb != NULL, "open");
	pd = ibv_alloc_pd(cb);
	srq = ibv_create_srq(pd, &sa);
	TEST_ASSERT(srq != NULL, "srq");
	o.srq = srq;
	TEST_ASSERT_EQ(h_side_create(&b, cb, &o), 0);
	o.srq = NULL;
	TEST_ASSERT_EQ(h_side_create(&a, h_open(0), &o), 0);
	o.srq = srq;
	TEST_ASSERT_EQ(h_connect(&b, &a, &o), 0);
	o.srq = NULL;
	TEST_ASSERT_EQ(h_connect(&a, &b, &o), 0);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 64, 1, IBV_SEND_SIGNALED), 0);
	t0 = (double)h_now_ms();
	while ((double)h_now_ms() - t0 < 30)
		ibv_poll_cq(a.scq, 0, &wc);
	TEST_ASSERT(h_xstat("droce1", "rnr_naks_sent") > rnr0, "empty SRQ sent no RNR NAK");
	/* SRQ buffers must be in the SRQ's PD: register b.buf there */
	{
		struct ibv_mr *mr = ibv_reg_mr(pd, b.buf, 4096, IBV_ACCESS_LOCAL_WRITE);

		sge.addr = (uintptr_t)b.buf;
		sge.length = 4096;
		sge.lkey = mr->lkey;
		wr.sg_list = &sge;
		TEST_ASSERT_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
		TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 3000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, 3000), 1);
		TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, 44);
		TEST_ASSERT_EQ(wc.qp_num, b.qp->qp_num);
		h_side_destroy(&b);
		ibv_dereg_mr(mr);
	}
	ibv_destroy_srq(srq);
	ibv_dealloc_pd(pd);
	ibv_close_device(cb);
	cb = a.ctx;
	h_side_destroy(&a);
	ibv_close_device(cb);
	return TEST_SUCCESS;
}

/* ibv_req_notify_cq(cq, 1): only a solicited (or error) completion raises an event. */
static int
test_solicited_only_event_ignores_unsolicited(void)
{
	struct ibv_context *cb = h_open(1);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(cb);
	struct h_qp_opts o = { .type = IBV_QPT_RC, .rchan = ch };
	struct h_side a, b;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	int flags;

	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQ(h_side_create(&b, cb, &o), 0);
	o.rchan = NULL;
	TEST_ASSERT_EQ(h_side_create(&a, h_open(0), &o), 0);
	TEST_ASSERT_EQ(h_connect(&a, &b, &o), 0);
	TEST_ASSERT_EQ(h_connect(&b, &a, &o), 0);
	TEST_ASSERT_EQ(h_post_recv(&b, 0, 256, 1), 0);
	TEST_ASSERT_EQ(h_post_recv(&b, 256, 256, 2), 0);
	TEST_ASSERT_EQ(ibv_req_notify_cq(b.rcq, 1), 0);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 10, 1, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	errno = 0;
	TEST_ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
	TEST_ASSERT_EQ(errno, EAGAIN);
	fcntl(ch->fd, F_SETFL, flags);
	TEST_ASSERT_EQ(h_post_send(&a, IBV_WR_SEND, 0, 10, 2, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED), 0);
	TEST_ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	TEST_ASSERT_PTR_EQ(ev_cq, b.rcq);
	ibv_ack_cq_events(ev_cq, 1);
	TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	TEST_ASSERT_EQ(h_poll(b.rcq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	h_side_destroy(&b);
	ibv_destroy_comp_channel(ch);
	ibv_close_device(cb);
	cb = a.ctx;
	h_side_destroy(&a);
	ibv_close_device(cb);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_rnr_retry_0_fails_fast),
	TEST_CASE(test_rnr_retry_7_succeeds_when_receive_posted_later),
	TEST_CASE(test_empty_srq_triggers_rnr_then_delivers),
	TEST_CASE(test_solicited_only_event_ignores_unsolicited),
	TEST_CASE(test_vanished_peer_gives_retry_exc_err_then_flush),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "reliability", cases, NULL, NULL);
}
