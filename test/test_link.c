/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A link that goes down and comes back: both devices sit on net_impair
 * ports, whose links droce_impair_link_set() takes down and up together, as
 * a cable pulled and plugged back in would.
 *
 *  - Within the RC retry budget, in the middle of a stream of multi-packet
 *    SENDs, WRITEs and READs with WRs outstanding: PORT_ERR then PORT_ACTIVE
 *    on both devices' async queues, retransmissions, and once the link is
 *    back every WR succeeds and every byte arrives exactly once, in order;
 *    the same across eight flaps in a row.
 *  - Past the budget: the oldest outstanding WR ends IBV_WC_RETRY_EXC_ERR
 *    within timeout x (retry_cnt + 1), the rest IBV_WC_WR_FLUSH_ERR, the QP
 *    is in ERR; once the link is back the old pair, reset and reconnected,
 *    and a new pair carry the same stream.
 *  - UD across a flap: datagrams sent while the link is down complete, are
 *    lost and counted by the port; those sent after it is back arrive.
 *  - A peer that stops draining its link, which stays up: droce2 and droce3
 *    on a wire of their own (below) that the test stops; droce2's port then
 *    takes nothing, its staging area fills, and an RC WR ends in
 *    IBV_WC_RETRY_EXC_ERR after its retry budget, each retry at least
 *    100 ms (the hang fixed by 1d184d8: a timeout that rewound to the first
 *    packet of the oldest WQE left the timer off while the port was full).
 *  - The port under a device: droce's own (hidden from RTE_ETH_FOREACH_DEV)
 *    unless the devarg own=0 leaves it listed, as DPDK 22.11's dpdk-dumpcap
 *    needs; a bad own= value refused.
 *
 * Run with --inline or --lcore. The ports are "--impair=link=up" (no
 * impairment) unless the command line gives other --impair= devargs (then
 * the UD case, which counts every datagram, is skipped).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_test.h"
#include "harness.h"
#include "rte_pmd_impair.h"
#include "verbs_assert.h"

#define WC_MS		5000	/* wait for one expected completion */
#define EV_MS		5000	/* wait for one expected event */
#define QUIET_MS	50	/* window in which no event may appear */

/* the stream: A posts, B receives SENDs and is the target of WRITEs and READs */
#define DEPTH		16		/* A's WRs outstanding at most */
#define SLOT		8192u		/* A: one op's buffer (SEND/WRITE source, READ sink) */
#define MAX_LEN		SLOT		/* bytes of one op at most */
#define NRECV		64u		/* B's receives posted */
#define RSLOT		8192u		/* B: one receive buffer */
#define WR_OFF		(NRECV * RSLOT)	/* B: the area WRITEs go to */
#define WR_LEN		(128u * 1024)
#define RD_OFF		(WR_OFF + WR_LEN)	/* B: the area READs come from */
#define RD_LEN		(128u * 1024)
#define BUF_LEN		(RD_OFF + RD_LEN)
#define READ_FILL	0xee		/* A's READ sink before the READ */

enum { OP_SEND, OP_WRITE, OP_READ };

static uint16_t impair_port[2];		/* under droce0, droce1 */
static bool clean_link;			/* no --impair= on the command line: no loss */

/*
 * droce2 -> droce3: a wire the test holds. droce2's port transmits into
 * a_out, a ring of WIRE_FRAMES, which wire_move() empties into droce3's
 * receive ring b_in while the wire runs; droce3's port transmits straight
 * into droce2's receive ring, b_out. Stopped, the wire is a peer that no
 * longer drains its link: both links stay up, droce3 stays idle, and
 * droce2's port takes nothing once a_out is full.
 */
#define WIRE_FRAMES	64

static struct {
	struct rte_ring *a_out, *b_in, *b_out;
	struct ibv_device **list;
	struct ibv_device *dev[2];	/* droce2, droce3 */
	bool running;
} W;

/* Resources of the running case, released by teardown whatever happened. */
static struct {
	struct h_side a, b, c, d;	/* a, c on droce0; b, d on droce1 */
	struct ibv_ah *ah;
	bool link_down;
	struct ibv_context *wctx[2];	/* droce2, droce3 */
	struct h_side wa, wb, wc, wd;	/* wa, wc on droce2; wb, wd on droce3 */
} R;

static void
teardown(void)
{
	struct ibv_context *ca = R.a.ctx, *cb = R.b.ctx;

	if (R.link_down)
		for (int i = 0; i < 2; i++)
			droce_impair_link_set(impair_port[i], 1);
	if (R.ah)
		ibv_destroy_ah(R.ah);
	W.running = true;
	h_side_destroy(&R.wa);
	h_side_destroy(&R.wb);
	h_side_destroy(&R.wc);
	h_side_destroy(&R.wd);
	for (int i = 0; i < 2; i++)
		if (R.wctx[i])
			ibv_close_device(R.wctx[i]);
	h_side_destroy(&R.c);
	h_side_destroy(&R.d);
	h_side_destroy(&R.a);
	h_side_destroy(&R.b);
	if (ca)
		ibv_close_device(ca);
	if (cb)
		ibv_close_device(cb);
	memset(&R, 0, sizeof(R));
}

/* Both ends of the cable at once. */
static int
link_set(bool up)
{
	for (int i = 0; i < 2; i++)
		if (droce_impair_link_set(impair_port[i], up) != 0)
			return -1;
	R.link_down = !up;
	return 0;
}

/* droce2 and droce3 on the wire (W), running: 0 or -1. */
static int
wire_setup(void)
{
	const unsigned int flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
	int n = 0;

	W.a_out = rte_ring_create("wire_a_out", WIRE_FRAMES, rte_socket_id(),
				  flags | RING_F_EXACT_SZ);
	W.b_in = rte_ring_create("wire_b_in", 4096, rte_socket_id(), flags);
	W.b_out = rte_ring_create("wire_b_out", 4096, rte_socket_id(), flags);
	if (W.a_out == NULL || W.b_in == NULL || W.b_out == NULL)
		return -1;
	/* the ring PMD names its ports "net_ring_<name>" */
	if (rte_eth_from_rings("wire_a", &W.b_out, 1, &W.a_out, 1, rte_socket_id()) < 0 ||
	    rte_eth_from_rings("wire_b", &W.b_in, 1, &W.b_out, 1, rte_socket_id()) < 0)
		return -1;
	if (droce_dev_create("droce2", "ethdev=net_ring_wire_a,ip=10.0.2.1") != 0 ||
	    droce_dev_create("droce3", "ethdev=net_ring_wire_b,ip=10.0.2.2") != 0)
		return -1;
	W.list = ibv_get_device_list(&n);
	for (int i = 0; W.list != NULL && i < n; i++)
		for (int d = 0; d < 2; d++)
			if (strcmp(ibv_get_device_name(W.list[i]), d ? "droce3" : "droce2") == 0)
				W.dev[d] = W.list[i];
	W.running = true;
	return W.dev[0] != NULL && W.dev[1] != NULL ? 0 : -1;
}

static uint64_t
impair_xstat(int side, const char *name)
{
	return h_eth_xstat(impair_port[side], name);
}

static uint64_t
retransmits(void)
{
	return h_xstat("droce0", "retransmits") + h_xstat("droce1", "retransmits");
}

static double
budget_ms(uint8_t timeout, uint8_t retry_cnt)
{
	/* IBA 9.7.6.1.3: the local ACK timeout is 4.096 us x 2^timeout */
	return 4.096e-3 * (double)(1u << timeout) * (retry_cnt + 1);
}

/* ------------------------------------------------------------------------- */
/* Events */

static enum ibv_port_state
port_state(struct ibv_context *c)
{
	struct ibv_port_attr a;

	return ibv_query_port(c, 1, &a) == 0 ? a.state : IBV_PORT_NOP;
}

static int
nonblock(struct ibv_context *c)
{
	return fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) | O_NONBLOCK);
}

/* Both contexts get @type for port 1 next; ibv_query_port then says @state. */
static int
port_event_both(struct ibv_context *c0, struct ibv_context *c1, enum ibv_event_type type,
		enum ibv_port_state state)
{
	struct ibv_context *c[2] = { c0, c1 };

	for (int i = 0; i < 2; i++) {
		struct ibv_async_event ev;

		TEST_ASSERT(h_async_event(c[i], &ev, EV_MS) == 0, "droce%d: no %s within %d ms", i,
			    ibv_event_type_str(type), EV_MS);
		TEST_ASSERT(ev.event_type == type, "droce%d: %s, expected %s", i,
			    ibv_event_type_str(ev.event_type), ibv_event_type_str(type));
		TEST_ASSERT_EQ(ev.element.port_num, 1);
		ibv_ack_async_event(&ev);
		TEST_ASSERT_EQ(port_state(c[i]), state);
	}
	return TEST_SUCCESS;
}

/* R.a and R.b connected with @o, their async fds non-blocking. */
static int
pair(const struct h_qp_opts *o)
{
	TEST_ASSERT_EQ(h_pair(&R.a, &R.b, o), 0);
	TEST_ASSERT_EQ(nonblock(R.a.ctx), 0);
	TEST_ASSERT_EQ(nonblock(R.b.ctx), 0);
	return TEST_SUCCESS;
}

/* The link down (@up false) or up, then PORT_ERR or PORT_ACTIVE on both of R's devices. */
static int
link_move(bool up)
{
	TEST_ASSERT_EQ(link_set(up), 0);
	return port_event_both(R.a.ctx, R.b.ctx, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
			       up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN);
}

static int
no_event(struct ibv_context *c)
{
	struct ibv_async_event ev;

	TEST_ASSERT(h_async_event(c, &ev, QUIET_MS) != 0, "unexpected %s",
		    ibv_event_type_str(ev.event_type));
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* The RC stream: op i's kind, length and offset depend on i only */

struct op {
	uint8_t kind;
	uint32_t len;
	uint32_t off;		/* WRITE: in B's write area; READ: in its read area */
};

static void
gen_op(uint32_t i, struct op *o)
{
	uint64_t r = h_mix64(i);

	o->kind = i % 3;
	/* SENDs of two to eight packets at the 1024-byte path MTU */
	o->len = o->kind == OP_SEND ? 1025 + (uint32_t)(r % (MAX_LEN - 1024)) :
		 1 + (uint32_t)(r % MAX_LEN);
	o->off = (uint32_t)((r >> 32) % ((o->kind == OP_WRITE ? WR_LEN : RD_LEN) - o->len + 1));
}

struct stream {
	struct h_side *a, *b;
	uint32_t nops;
	uint32_t posted, completed;	/* A's WRs: one per op, wr_id = op index */
	uint32_t nsend;			/* SENDs posted: the k-th SEND fills receive k */
	uint32_t *send_op;		/* [k]: op index of the k-th SEND */
	uint32_t recvd;			/* B's receives completed */
	uint8_t *shadow;		/* what B's write area must hold */
	uint8_t *expect;
	bool post;			/* keep A's send queue DEPTH deep */
};

static void
stream_fini(struct stream *st)
{
	free(st->send_op);
	free(st->shadow);
	free(st->expect);
	memset(st, 0, sizeof(*st));
}

static int
post_recv_k(struct stream *st, uint32_t k)
{
	return h_post_recv(st->b, (size_t)(k % NRECV) * RSLOT, RSLOT, k);
}

/* @nops ops from A to B; B's receives posted, its read area filled. */
static int
stream_init(struct stream *st, struct h_side *a, struct h_side *b, uint32_t nops)
{
	memset(st, 0, sizeof(*st));
	st->a = a;
	st->b = b;
	st->nops = nops;
	st->post = true;
	st->send_op = calloc(nops / 3 + 1, sizeof(*st->send_op));
	st->shadow = malloc(WR_LEN);
	st->expect = malloc(MAX_LEN);
	TEST_ASSERT(st->send_op && st->shadow && st->expect, "malloc");
	memcpy(st->shadow, b->buf + WR_OFF, WR_LEN);
	h_pattern(b->buf + RD_OFF, RD_LEN, 4242);
	for (uint32_t k = 0; k < NRECV; k++)
		TEST_ASSERT_EQ(post_recv_k(st, k), 0);
	return TEST_SUCCESS;
}

static int
post_op(struct stream *st, uint32_t i)
{
	struct h_side *a = st->a, *b = st->b;
	uint8_t *p = a->buf + (size_t)(i % DEPTH) * SLOT;
	struct op o;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	gen_op(i, &o);
	sge = (struct ibv_sge){ (uintptr_t)p, o.len, a->mr->lkey };
	switch (o.kind) {
	case OP_SEND:
		h_pattern(p, o.len, i);
		wr.opcode = IBV_WR_SEND;
		st->send_op[st->nsend++] = i;
		break;
	case OP_WRITE:
		h_pattern(p, o.len, i);
		memcpy(st->shadow + o.off, p, o.len);
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + WR_OFF + o.off;
		wr.wr.rdma.rkey = b->mr->rkey;
		break;
	default:
		memset(p, READ_FILL, o.len);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + RD_OFF + o.off;
		wr.wr.rdma.rkey = b->mr->rkey;
		break;
	}
	return ibv_post_send(a->qp, &wr, &bad);
}

/* A successful completion of A's oldest WR. */
static int
check_send_wc(struct stream *st, const struct ibv_wc *w)
{
	static const enum ibv_wc_opcode want[] = { IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ };
	uint32_t i = st->completed;
	struct op o;

	gen_op(i, &o);
	ASSERT_STATUS(*w, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(w->wr_id, i);
	TEST_ASSERT_EQ(w->opcode, want[o.kind]);
	TEST_ASSERT_EQ(w->qp_num, st->a->qp->qp_num);
	if (o.kind == OP_READ) {
		TEST_ASSERT_EQ(w->byte_len, o.len);
		ASSERT_BYTES(st->a->buf + (size_t)(i % DEPTH) * SLOT, st->b->buf + RD_OFF + o.off,
			     o.len);
	}
	st->completed++;
	return TEST_SUCCESS;
}

/* B's next receive: the next SEND, whole, in order; then posted again. */
static int
check_recv_wc(struct stream *st, const struct ibv_wc *w)
{
	uint32_t k = st->recvd, i;
	struct op o;

	TEST_ASSERT(k < st->nsend, "receive %u completed, %u SENDs posted", k, st->nsend);
	i = st->send_op[k];
	gen_op(i, &o);
	ASSERT_STATUS(*w, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(w->wr_id, k);
	TEST_ASSERT_EQ(w->opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(w->byte_len, o.len);
	h_pattern(st->expect, o.len, i);
	ASSERT_BYTES(st->b->buf + (size_t)(k % NRECV) * RSLOT, st->expect, o.len);
	st->recvd++;
	TEST_ASSERT_EQ(post_recv_k(st, k + NRECV), 0);
	return TEST_SUCCESS;
}

/* One round: post up to DEPTH, take B's receives, then A's completions (all successful). */
static int
stream_step(struct stream *st)
{
	struct ibv_wc wc[16];
	int n;

	while (st->post && st->posted < st->nops && st->posted - st->completed < DEPTH) {
		TEST_ASSERT_EQ(post_op(st, st->posted), 0);
		st->posted++;
	}
	n = ibv_poll_cq(st->b->rcq, 16, wc);
	TEST_ASSERT(n >= 0, "poll_cq %d", n);
	for (int k = 0; k < n; k++)
		if (check_recv_wc(st, &wc[k]) != TEST_SUCCESS)
			return TEST_FAILED;
	n = ibv_poll_cq(st->a->scq, 16, wc);
	TEST_ASSERT(n >= 0, "poll_cq %d", n);
	for (int k = 0; k < n; k++)
		if (check_send_wc(st, &wc[k]) != TEST_SUCCESS)
			return TEST_FAILED;
	return TEST_SUCCESS;
}

/* Steps until @n ops completed, failing after @ms. */
static int
stream_until(struct stream *st, uint32_t n, uint64_t ms)
{
	uint64_t end = h_now_ms() + ms;

	while (st->completed < n) {
		if (stream_step(st) != TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT(h_now_ms() < end, "stalled: %u of %u ops completed within %" PRIu64
			    " ms (%u posted, %u received)", st->completed, n, ms, st->posted,
			    st->recvd);
	}
	return TEST_SUCCESS;
}

/*
 * Runs the stream to its end: every op completed, every SEND received (and
 * nothing more), B's write area as the WRITEs left it in posting order.
 */
static int
stream_finish(struct stream *st, uint64_t ms)
{
	uint64_t end = h_now_ms() + ms;

	if (stream_until(st, st->nops, ms) != TEST_SUCCESS)
		return TEST_FAILED;
	while (st->recvd < st->nsend) {
		if (stream_step(st) != TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT(h_now_ms() < end, "%u of %u SENDs received", st->recvd, st->nsend);
	}
	ASSERT_QUIET(st->b->rcq, 20);
	ASSERT_QUIET(st->a->scq, 20);
	ASSERT_BYTES(st->b->buf + WR_OFF, st->shadow, WR_LEN);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */

/*
 * Link down for 500 ms, a quarter of the retry budget (timeout 16 = 268 ms,
 * retry_cnt 7: 2.15 s), a third of the way into 600 ops with 16 WRs
 * outstanding: PORT_ERR then PORT_ACTIVE on both devices, retransmissions,
 * frames dropped by the ports, and once the link is back every op completes
 * successfully, every SEND arrives once and in order, every READ returns
 * its bytes, and the WRITE area holds what the WRITEs wrote in order.
 */
static int
test_link_flap_within_budget_loses_nothing(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .buf_len = BUF_LEN,
					    .timeout = 16, .retry_cnt_p1 = 7 + 1 };
	const uint64_t down_ms = 500;
	struct stream st;
	uint64_t rt0, drop0, t0, outstanding;
	int rc;

	TEST_ASSERT_EQ(pair(&o), TEST_SUCCESS);
	rc = stream_init(&st, &R.a, &R.b, 600);
	if (rc == TEST_SUCCESS)
		rc = stream_until(&st, st.nops / 3, 30000);
	if (rc != TEST_SUCCESS)
		goto out;

	rt0 = retransmits();
	drop0 = impair_xstat(0, "impair_link_dropped") + impair_xstat(1, "impair_link_dropped");
	t0 = h_now_ms();
	rc = link_move(false);
	while (rc == TEST_SUCCESS && h_now_ms() - t0 < down_ms)
		rc = stream_step(&st);
	if (rc != TEST_SUCCESS)
		goto out;
	outstanding = st.posted - st.completed;
	rc = link_move(true);
	if (rc == TEST_SUCCESS)
		rc = stream_finish(&st, 60000);
	if (rc != TEST_SUCCESS)
		goto out;
	printf("# link down %" PRIu64 " ms with %" PRIu64 " WRs outstanding; %" PRIu64
	       " retransmissions, %" PRIu64 " frames dropped by the ports; %u ops, %u SENDs\n",
	       down_ms, outstanding, retransmits() - rt0,
	       impair_xstat(0, "impair_link_dropped") + impair_xstat(1, "impair_link_dropped") -
	       drop0, st.nops, st.nsend);
	TEST_ASSERT(outstanding > 0, "no WR outstanding while the link was down");
	TEST_ASSERT(retransmits() > rt0, "no retransmission");
	TEST_ASSERT(impair_xstat(0, "impair_link_dropped") + impair_xstat(1, "impair_link_dropped") >
		    drop0, "the ports dropped nothing");
	TEST_ASSERT_EQ(no_event(R.a.ctx), TEST_SUCCESS);
	TEST_ASSERT_EQ(no_event(R.b.ctx), TEST_SUCCESS);
out:
	stream_fini(&st);
	return rc;
}

/*
 * A request lost with nothing after it, so that no later packet makes the
 * responder NAK (the tail of a burst), under a long local ACK timeout
 * (timeout 20: 4.3 s): once the link is back the requester resends it on
 * its measured round trip (an early resend, xstat fast_retransmits), well
 * before the ACK timer, which never fires; the message arrives once, with
 * its bytes. Nothing here is timed: the counters say which mechanism
 * brought it, and the wait for the completion is long enough for either.
 */
static int
test_tail_loss_resent_before_ack_timeout(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .timeout = 20,
					    .retry_cnt_p1 = 7 + 1 };
	const uint32_t len = 3000, warm = 32;
	uint64_t fast0, tmo0, rtx0, drop0, end;
	struct ibv_wc wc;

	if (!clean_link) {
		printf("# a frame lost on purpose: not on a link with impairments\n");
		return TEST_SKIPPED;
	}
	TEST_ASSERT_EQ(pair(&o), TEST_SUCCESS);
	/* answered requests: the requester's round-trip estimate */
	for (uint32_t i = 0; i < warm; i++) {
		TEST_ASSERT_EQ(h_post_recv(&R.b, 0, len, i), 0);
		TEST_ASSERT_EQ(h_post_send(&R.a, IBV_WR_SEND, 0, len, i, IBV_SEND_SIGNALED), 0);
		TEST_ASSERT_EQ(h_poll(R.a.scq, &wc, 1, WC_MS), 1);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(h_poll(R.b.rcq, &wc, 1, WC_MS), 1);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	}
	fast0 = h_xstat("droce0", "fast_retransmits");
	tmo0 = h_xstat("droce0", "timeouts");
	rtx0 = h_xstat("droce0", "retransmits");
	h_pattern(R.a.buf + len, len, 77);
	memset(R.b.buf + len, 0, len);
	TEST_ASSERT_EQ(h_post_recv(&R.b, len, len, 100), 0);

	TEST_ASSERT_EQ(link_move(false), TEST_SUCCESS);
	drop0 = impair_xstat(0, "impair_link_dropped");
	TEST_ASSERT_EQ(h_post_send(&R.a, IBV_WR_SEND, len, len, 100, IBV_SEND_SIGNALED), 0);
	end = h_now_ms() + WC_MS;
	while (impair_xstat(0, "impair_link_dropped") == drop0 && h_now_ms() < end)
		ibv_poll_cq(R.a.scq, 0, &wc);
	TEST_ASSERT(impair_xstat(0, "impair_link_dropped") > drop0, "the request was not dropped");
	/* back at once: the early resends double from the round trip, up to 10 ms */
	TEST_ASSERT_EQ(link_set(true), 0);
	TEST_ASSERT_EQ(h_poll(R.a.scq, &wc, 1, 3 * WC_MS), 1);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 100);
	TEST_ASSERT_EQ(h_poll(R.b.rcq, &wc, 1, WC_MS), 1);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 100);
	TEST_ASSERT_EQ(wc.byte_len, len);
	ASSERT_BYTES(R.b.buf + len, R.a.buf + len, len);
	printf("# fast_retransmits +%" PRIu64 ", timeouts +%" PRIu64 ", retransmits +%" PRIu64 "\n",
	       h_xstat("droce0", "fast_retransmits") - fast0, h_xstat("droce0", "timeouts") - tmo0,
	       h_xstat("droce0", "retransmits") - rtx0);
	TEST_ASSERT(h_xstat("droce0", "fast_retransmits") > fast0, "no early resend");
	TEST_ASSERT_EQ(h_xstat("droce0", "timeouts"), tmo0);
	TEST_ASSERT_EQ(h_xstat("droce0", "retransmits"), rtx0);
	TEST_ASSERT_EQ(port_event_both(R.a.ctx, R.b.ctx, IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE),
		       TEST_SUCCESS);
	ASSERT_QUIET(R.b.rcq, 20);
	return TEST_SUCCESS;
}

/*
 * Eight flaps of 100 ms (timeout 14 = 67 ms, retry_cnt 7: 537 ms) in a
 * stream of 1200 ops, the link back up each time until an op completes:
 * PORT_ERR, PORT_ACTIVE, PORT_ERR, ... in order on both devices, and the
 * stream as in the single flap (the retries start over once the link is
 * back and the peer answers, so eight outages sum past the budget safely).
 */
static int
test_link_repeated_flaps_lose_nothing(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .buf_len = BUF_LEN,
					    .timeout = 14, .retry_cnt_p1 = 7 + 1 };
	const int flaps = 8;
	const uint64_t down_ms = 100;
	struct stream st;
	uint64_t rt0 = retransmits(), t0;
	int rc;

	TEST_ASSERT_EQ(pair(&o), TEST_SUCCESS);
	rc = stream_init(&st, &R.a, &R.b, 1200);
	for (int f = 0; rc == TEST_SUCCESS && f < flaps; f++) {
		rc = stream_until(&st, st.completed + 60, 30000);
		if (rc != TEST_SUCCESS)
			break;
		t0 = h_now_ms();
		rc = link_move(false);
		while (rc == TEST_SUCCESS && h_now_ms() - t0 < down_ms)
			rc = stream_step(&st);
		if (rc != TEST_SUCCESS)
			break;
		TEST_ASSERT(st.posted > st.completed, "flap %d: no WR outstanding", f);
		rc = link_move(true);
		/* the peer answers again before the next outage */
		if (rc == TEST_SUCCESS)
			rc = stream_until(&st, st.completed + 1, 30000);
	}
	if (rc == TEST_SUCCESS)
		rc = stream_finish(&st, 60000);
	if (rc == TEST_SUCCESS) {
		printf("# %d flaps of %" PRIu64 " ms; %" PRIu64 " retransmissions; %u ops, %u SENDs\n",
		       flaps, down_ms, retransmits() - rt0, st.nops, st.nsend);
		if (retransmits() - rt0 < (uint64_t)flaps) {
			fprintf(stderr, "  FAIL: %" PRIu64 " retransmissions for %d flaps\n",
				retransmits() - rt0, flaps);
			rc = TEST_FAILED;
		}
	}
	if (rc == TEST_SUCCESS && (no_event(R.a.ctx) != TEST_SUCCESS ||
				   no_event(R.b.ctx) != TEST_SUCCESS))
		rc = TEST_FAILED;
	stream_fini(&st);
	return rc;
}

/* Reset both QPs of a pair and connect them again. */
static int
reconnect(struct h_side *a, struct h_side *b, const struct h_qp_opts *o)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };

	TEST_ASSERT_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(b->qp, &at, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(h_connect(a, b, o), 0);
	TEST_ASSERT_EQ(h_connect(b, a, o), 0);
	return TEST_SUCCESS;
}

static int
run_stream(struct h_side *a, struct h_side *b, uint32_t nops)
{
	struct stream st;
	int rc = stream_init(&st, a, b, nops);

	if (rc == TEST_SUCCESS)
		rc = stream_finish(&st, 30000);
	stream_fini(&st);
	return rc;
}

/*
 * The link goes down mid-stream and stays down past the retry budget
 * (timeout 15 = 134 ms, retry_cnt 7: 1.07 s): the oldest outstanding WR
 * ends IBV_WC_RETRY_EXC_ERR, no sooner than one timeout and within twice
 * the budget plus 2 s of the link going down, every later one
 * IBV_WC_WR_FLUSH_ERR in order, also one posted afterwards; the QP is in
 * ERR, no async event but the port's. With the link back, the old pair
 * reset and reconnected, then a new pair on the same devices, each run a
 * stream of 120 ops.
 */
static int
test_link_down_past_budget_fails_then_reconnects(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .buf_len = BUF_LEN,
					    .timeout = 15, .retry_cnt_p1 = 7 + 1 };
	const double budget = budget_ms(o.timeout, o.retry_cnt_p1 - 1);
	const double bound = 2 * budget + 2000;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc[DEPTH + 1];
	struct stream st;
	uint64_t t0, dt = 0;
	uint32_t first, rest;
	int rc, n;

	TEST_ASSERT_EQ(pair(&o), TEST_SUCCESS);
	rc = stream_init(&st, &R.a, &R.b, 100000);
	if (rc == TEST_SUCCESS)
		rc = stream_until(&st, 90, 30000);
	if (rc != TEST_SUCCESS)
		goto out;

	t0 = h_now_ms();
	rc = link_move(false);
	if (rc != TEST_SUCCESS)
		goto out;
	/* fill the queue, then wait: what completes first must be the error */
	while (st.posted - st.completed < DEPTH) {
		TEST_ASSERT_EQ(post_op(&st, st.posted), 0);
		st.posted++;
	}
	st.post = false;
	for (;;) {
		n = ibv_poll_cq(R.a.scq, 1, wc);
		TEST_ASSERT(n >= 0, "poll_cq %d", n);
		dt = h_now_ms() - t0;
		if (n == 1 && wc[0].status != IBV_WC_SUCCESS)
			break;
		/* acknowledged just before the link went down */
		if (n == 1 && check_send_wc(&st, &wc[0]) != TEST_SUCCESS) {
			rc = TEST_FAILED;
			goto out;
		}
		n = ibv_poll_cq(R.b.rcq, 1, wc);
		if (n == 1 && check_recv_wc(&st, &wc[0]) != TEST_SUCCESS) {
			rc = TEST_FAILED;
			goto out;
		}
		TEST_ASSERT(dt <= bound, "no error completion %" PRIu64 " ms after the link went "
			    "down (budget %.0f ms, %u WRs outstanding)", dt, budget,
			    st.posted - st.completed);
	}
	first = st.completed;
	rest = st.posted - first - 1;
	printf("# %s on WR %u %" PRIu64 " ms after the link went down; budget timeout x "
	       "(retry_cnt + 1) = %.0f ms, bound %.0f ms; %u more WRs to flush\n",
	       ibv_wc_status_str(wc[0].status), first, dt, budget, bound, rest);
	ASSERT_STATUS(wc[0], IBV_WC_RETRY_EXC_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, first);
	TEST_ASSERT_EQ(wc[0].qp_num, R.a.qp->qp_num);
	TEST_ASSERT(dt >= budget / (o.retry_cnt_p1), "error %" PRIu64 " ms after the link went "
		    "down, before one timeout (%.0f ms)", dt, budget / o.retry_cnt_p1);
	TEST_ASSERT(rest > 0, "no WR left to flush");
	/* then one posted in ERR */
	TEST_ASSERT_EQ(h_post_send(&R.a, IBV_WR_SEND, 0, 100, 999999, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(h_poll(R.a.scq, wc, rest + 1, WC_MS), rest + 1);
	for (uint32_t k = 0; k <= rest; k++) {
		ASSERT_STATUS(wc[k], IBV_WC_WR_FLUSH_ERR);
		TEST_ASSERT_EQ(wc[k].wr_id, k < rest ? first + 1 + k : 999999);
	}
	ASSERT_QUIET(R.a.scq, 20);
	TEST_ASSERT_EQ(ibv_query_qp(R.a.qp, &qa, IBV_QP_STATE, &qia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_ERR);
	TEST_ASSERT_EQ(no_event(R.a.ctx), TEST_SUCCESS);
	/* B received whatever arrived before the link went down, in order */
	while ((n = ibv_poll_cq(R.b.rcq, 1, wc)) == 1)
		if (check_recv_wc(&st, &wc[0]) != TEST_SUCCESS) {
			rc = TEST_FAILED;
			goto out;
		}
	stream_fini(&st);

	rc = link_move(true);
	if (rc != TEST_SUCCESS)
		return rc;
	TEST_ASSERT_EQ(reconnect(&R.a, &R.b, &o), TEST_SUCCESS);
	TEST_ASSERT_EQ(run_stream(&R.a, &R.b, 120), TEST_SUCCESS);
	TEST_ASSERT_EQ(h_side_create(&R.c, R.a.ctx, &o), 0);
	TEST_ASSERT_EQ(h_side_create(&R.d, R.b.ctx, &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.c, &R.d, &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.d, &R.c, &o), 0);
	TEST_ASSERT_EQ(run_stream(&R.c, &R.d, 120), TEST_SUCCESS);
	TEST_ASSERT_EQ(no_event(R.a.ctx), TEST_SUCCESS);
	TEST_ASSERT_EQ(no_event(R.b.ctx), TEST_SUCCESS);
	return TEST_SUCCESS;
out:
	stream_fini(&st);
	return rc;
}

/* ------------------------------------------------------------------------- */
/* A peer that stops draining its link */

/* while a packet cannot leave, each RC retry waits at least this long (roce_req.c: STALL_MIN_MS) */
#define STALL_MS	100
#define WIRE_NWR	48		/* WRs of WIRE_LEN: 4 packets each at the 1024-byte path MTU */
#define WIRE_LEN	4096u
#define WIRE_WR_OFF	(512u * 1024)	/* where WRITEs land in the responder's buffer */
/*
 * The stalled WRs fill the wire and the staging area's data slots (2 x
 * DROCE_BURST at most) before the QP reaches its bound on unacknowledged
 * PSNs (roce_req.c: REQ_MAX_UNACKED, 4 x DROCE_ACK_EVERY).
 */
_Static_assert(WIRE_NWR * (WIRE_LEN / 1024) > WIRE_FRAMES + 2 * DROCE_BURST &&
	       WIRE_NWR * (WIRE_LEN / 1024) < 4 * DROCE_ACK_EVERY, "WIRE_NWR fills the port");

/* While the wire runs: droce2's frames on to droce3, as many as its receive ring has room for. */
static void
wire_move(void)
{
	void *f[DROCE_BURST];
	unsigned int n;

	if (!W.running)
		return;
	/* the one producer of b_in: its room only grows meanwhile */
	while (rte_ring_free_count(W.b_in) >= RTE_DIM(f) &&
	       (n = rte_ring_dequeue_burst(W.a_out, f, RTE_DIM(f), NULL)) != 0)
		rte_ring_enqueue_bulk(W.b_in, f, n, NULL);
}

/* h_poll, moving the wire between polls: @n completions on @cq, or fewer after @ms. */
static int
wire_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	uint64_t end = h_now_ms() + (uint64_t)ms;
	int got = 0;

	while (got < n) {
		int k;

		wire_move();
		k = ibv_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			return k;
		got += k;
		if (h_now_ms() > end)
			break;
	}
	return got;
}

/* Frames of droce2 that droce3 has not taken yet: staged for the port, and on the wire. */
static unsigned int
wire_backlog(void)
{
	struct droce_dev_objects ob;

	if (droce_dev_objects_get("droce2", &ob) != 0)
		return UINT32_MAX;
	return ob.mbufs_staged + rte_ring_count(W.a_out) + rte_ring_count(W.b_in);
}

static uint64_t
wxs(int d, const char *name)
{
	return h_xstat(d == 0 ? "droce2" : "droce3", name);
}

/* Message @i from @a to @b: a SEND (even @i) or a WRITE (odd) of WIRE_LEN from @a's slot @i. */
static int
wire_post(struct h_side *a, const struct h_side *b, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)a->buf + (size_t)i * WIRE_LEN, WIRE_LEN, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + WIRE_WR_OFF + (size_t)i * WIRE_LEN;
	wr.wr.rdma.rkey = b->mr->rkey;
	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * @nmsg messages from @a to @b (wire_post) with the wire running: each
 * completes once, successfully and in order; each SEND fills the next
 * receive, whole; each WRITE's bytes are where it wrote them.
 */
static int
wire_messages(struct h_side *a, struct h_side *b, uint32_t nmsg, uint32_t seed)
{
	struct ibv_wc wc[WIRE_NWR];
	uint32_t nsend = (nmsg + 1) / 2;

	TEST_ASSERT(nmsg <= WIRE_NWR, "%u messages", nmsg);
	W.running = true;
	for (uint32_t k = 0; k < nsend; k++)
		TEST_ASSERT_EQ(h_post_recv(b, (size_t)k * WIRE_LEN, WIRE_LEN, k), 0);
	for (uint32_t i = 0; i < nmsg; i++) {
		h_pattern(a->buf + (size_t)i * WIRE_LEN, WIRE_LEN, seed + i);
		TEST_ASSERT_EQ(wire_post(a, b, i), 0);
	}
	TEST_ASSERT_EQ(wire_poll(a->scq, wc, (int)nmsg, WC_MS), nmsg);
	for (uint32_t i = 0; i < nmsg; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, i);
	}
	TEST_ASSERT_EQ(wire_poll(b->rcq, wc, (int)nsend, WC_MS), nsend);
	for (uint32_t k = 0; k < nsend; k++) {
		ASSERT_STATUS(wc[k], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[k].wr_id, k);
		TEST_ASSERT_EQ(wc[k].byte_len, WIRE_LEN);
		ASSERT_BYTES(b->buf + (size_t)k * WIRE_LEN, a->buf + (size_t)2 * k * WIRE_LEN,
			     WIRE_LEN);
	}
	for (uint32_t i = 1; i < nmsg; i += 2)
		ASSERT_BYTES(b->buf + WIRE_WR_OFF + (size_t)i * WIRE_LEN,
			     a->buf + (size_t)i * WIRE_LEN, WIRE_LEN);
	ASSERT_QUIET(a->scq, 0);
	ASSERT_QUIET(b->rcq, 0);
	return TEST_SUCCESS;
}

/*
 * The wire stops after a SEND and a WRITE have gone across (each device
 * knows the other's MAC): droce3 no longer drains droce2's link, which
 * stays up. An RC QP on droce2 (timeout 14 = 67 ms, retry_cnt 7) posts 48
 * SENDs and WRITEs of 4 KiB, 192 packets: more than the wire and droce2's
 * staging area hold, fewer than the QP may have unacknowledged. The first
 * WR ends in IBV_WC_RETRY_EXC_ERR no sooner than retry_cnt x 100 ms (each
 * retry waits at least that while the packet cannot leave) and within twice
 * (retry_cnt + 1) x max(timeout, 100 ms) plus 1 s of the posting, after
 * exactly retry_cnt resends; the other 47 end in IBV_WC_WR_FLUSH_ERR in
 * order, each WR exactly once; the QP is in ERR. Meanwhile the wire was
 * full, droce2 held frames in its staging area and counted the full port
 * (tx_busy) but no missing mbuf or neighbour, and droce3 received nothing.
 * Then the wire runs again: droce3 drains what droce2 held (the old QPs
 * destroyed: dropped, no QP), and a new pair carries 48 SENDs and WRITEs,
 * every byte.
 */
static int
test_peer_not_draining_port_full_retry_exc_err_then_new_pair_works(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .timeout = 14,
					    .retry_cnt_p1 = 7 + 1 };
	const unsigned int retry_cnt = o.retry_cnt_p1 - 1;
	const double tmo = budget_ms(o.timeout, 0);
	const double budget = (retry_cnt + 1) * RTE_MAX(tmo, (double)STALL_MS);
	const double bound = 2 * budget + 1000;
	const uint64_t least = retry_cnt * STALL_MS;
	uint64_t busy0, nomb0, nonb0, rtx0, rx0, noqp0, t0, dt, end;
	struct droce_dev_objects ob;
	struct ibv_wc wc[WIRE_NWR];
	unsigned int wire;
	int n;

	for (int d = 0; d < 2; d++) {
		R.wctx[d] = ibv_open_device(W.dev[d]);
		TEST_ASSERT(R.wctx[d] != NULL, "open droce%d: %s", 2 + d, strerror(errno));
	}
	TEST_ASSERT_EQ(h_side_create(&R.wa, R.wctx[0], &o), 0);
	TEST_ASSERT_EQ(h_side_create(&R.wb, R.wctx[1], &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.wa, &R.wb, &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.wb, &R.wa, &o), 0);
	TEST_ASSERT_EQ(wire_messages(&R.wa, &R.wb, 2, 8000), TEST_SUCCESS);
	for (uint32_t k = 0; k < WIRE_NWR / 2; k++)
		TEST_ASSERT_EQ(h_post_recv(&R.wb, (size_t)k * WIRE_LEN, WIRE_LEN, k), 0);

	busy0 = wxs(0, "tx_busy");
	nomb0 = wxs(0, "tx_drop_no_mbuf");
	nonb0 = wxs(0, "tx_no_neigh");
	rtx0 = wxs(0, "retransmits");
	rx0 = wxs(1, "rx_pkts");
	W.running = false;
	t0 = h_now_ms();
	for (uint32_t i = 0; i < WIRE_NWR; i++) {
		h_pattern(R.wa.buf + (size_t)i * WIRE_LEN, WIRE_LEN, 8100 + i);
		TEST_ASSERT_EQ(wire_post(&R.wa, &R.wb, i), 0);
	}
	/* nothing acknowledges: what completes first must be the error */
	for (;;) {
		n = ibv_poll_cq(R.wa.scq, 1, wc);
		TEST_ASSERT(n >= 0, "poll_cq %d", n);
		dt = h_now_ms() - t0;
		if (n == 1)
			break;
		TEST_ASSERT(dt <= bound, "no completion %" PRIu64 " ms after the posting (budget "
			    "%.0f ms): %u frames on the wire, tx_busy +%" PRIu64 ", retransmits +%"
			    PRIu64, dt, budget, rte_ring_count(W.a_out), wxs(0, "tx_busy") - busy0,
			    wxs(0, "retransmits") - rtx0);
	}
	wire = rte_ring_count(W.a_out);
	TEST_ASSERT_EQ(droce_dev_objects_get("droce2", &ob), 0);
	printf("# %s on WR %" PRIu64 " %" PRIu64 " ms after the posting; budget (retry_cnt + 1) x "
	       "max(timeout %.0f ms, %d ms) = %.0f ms, bound %.0f ms; %u frames on the wire, %u "
	       "staged; tx_busy +%" PRIu64 ", retransmits +%" PRIu64 "\n",
	       ibv_wc_status_str(wc[0].status), wc[0].wr_id, dt, tmo, STALL_MS, budget, bound, wire,
	       ob.mbufs_staged, wxs(0, "tx_busy") - busy0, wxs(0, "retransmits") - rtx0);
	ASSERT_STATUS(wc[0], IBV_WC_RETRY_EXC_ERR);
	TEST_ASSERT_EQ(wc[0].wr_id, 0);
	TEST_ASSERT_EQ(wc[0].qp_num, R.wa.qp->qp_num);
	TEST_ASSERT(dt >= least, "error %" PRIu64 " ms after the posting, before retry_cnt x %d ms",
		    dt, STALL_MS);
	/* the port took nothing: the wire full, frames waiting in droce2's staging area */
	TEST_ASSERT_EQ(wire, WIRE_FRAMES);
	TEST_ASSERT(ob.mbufs_staged > 0, "nothing staged");
	TEST_ASSERT(wxs(0, "tx_busy") > busy0, "the full port not counted");
	TEST_ASSERT_EQ(wxs(0, "tx_drop_no_mbuf"), nomb0);
	TEST_ASSERT_EQ(wxs(0, "tx_no_neigh"), nonb0);
	TEST_ASSERT_EQ(wxs(0, "retransmits") - rtx0, retry_cnt);
	TEST_ASSERT_EQ(wxs(1, "rx_pkts"), rx0);
	/* the others flushed, in order, then nothing more */
	TEST_ASSERT_EQ(h_poll(R.wa.scq, wc, WIRE_NWR - 1, WC_MS), WIRE_NWR - 1);
	for (uint32_t k = 0; k < WIRE_NWR - 1; k++) {
		ASSERT_STATUS(wc[k], IBV_WC_WR_FLUSH_ERR);
		TEST_ASSERT_EQ(wc[k].wr_id, k + 1);
		TEST_ASSERT_EQ(wc[k].qp_num, R.wa.qp->qp_num);
	}
	ASSERT_QUIET(R.wa.scq, QUIET_MS);
	TEST_ASSERT_EQ(h_qp_state(R.wa.qp), IBV_QPS_ERR);
	ASSERT_QUIET(R.wb.rcq, 0);

	/* droce3 drains again: what droce2 held reaches it, for QPs no longer there */
	TEST_ASSERT_EQ(ibv_destroy_qp(R.wa.qp), 0);
	R.wa.qp = NULL;
	TEST_ASSERT_EQ(ibv_destroy_qp(R.wb.qp), 0);
	R.wb.qp = NULL;
	noqp0 = wxs(1, "rx_drop_no_qp");
	W.running = true;
	end = h_now_ms() + WC_MS;
	while (wire_backlog() != 0) {
		TEST_ASSERT(h_now_ms() < end, "%u frames of droce2 still not at droce3",
			    wire_backlog());
		(void)wire_poll(R.wa.scq, wc, 1, 1);
	}
	/* the last burst droce3 took is handled before a new QP may take an old number */
	(void)wire_poll(R.wa.scq, wc, 1, QUIET_MS);
	printf("# the wire runs again: droce3 dropped %" PRIu64 " frames for the old QP\n",
	       wxs(1, "rx_drop_no_qp") - noqp0);
	TEST_ASSERT(wxs(1, "rx_drop_no_qp") - noqp0 >= WIRE_FRAMES, "droce3 dropped %" PRIu64
		    " frames for the old QP, %u were on the wire", wxs(1, "rx_drop_no_qp") - noqp0,
		    WIRE_FRAMES);
	TEST_ASSERT_EQ(h_side_create(&R.wc, R.wctx[0], &o), 0);
	TEST_ASSERT_EQ(h_side_create(&R.wd, R.wctx[1], &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.wc, &R.wd, &o), 0);
	TEST_ASSERT_EQ(h_connect(&R.wd, &R.wc, &o), 0);
	TEST_ASSERT_EQ(wire_messages(&R.wc, &R.wd, WIRE_NWR, 8200), TEST_SUCCESS);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* UD */

#define UD_LEN		512u
#define UD_RSLOT	1024u
#define UD_BATCH	8u

/* Datagrams tagged @tag0 .. @tag0 + UD_BATCH - 1 from a to b: all complete at a. */
static int
ud_send_batch(uint32_t tag0)
{
	struct ibv_wc wc[UD_BATCH];

	for (uint32_t k = 0; k < UD_BATCH; k++) {
		uint32_t tag = tag0 + k;
		uint8_t *p = R.a.buf + (size_t)k * UD_LEN;
		struct ibv_sge sge = { (uintptr_t)p, UD_LEN, R.a.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = tag, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad = NULL;

		h_pattern(p, UD_LEN, tag);
		memcpy(p, &tag, sizeof(tag));
		wr.wr.ud.ah = R.ah;
		wr.wr.ud.remote_qpn = R.b.qp->qp_num;
		wr.wr.ud.remote_qkey = H_QKEY;
		TEST_ASSERT_EQ(ibv_post_send(R.a.qp, &wr, &bad), 0);
	}
	TEST_ASSERT_EQ(h_poll(R.a.scq, wc, UD_BATCH, WC_MS), UD_BATCH);
	for (uint32_t k = 0; k < UD_BATCH; k++) {
		ASSERT_STATUS(wc[k], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[k].wr_id, tag0 + k);
	}
	return TEST_SUCCESS;
}

/* b receives the datagrams tagged @tag0 .. + UD_BATCH - 1, next, in order, whole. */
static int
ud_recv_batch(uint32_t *rk, uint32_t tag0)
{
	uint8_t expect[UD_LEN];

	for (uint32_t k = 0; k < UD_BATCH; k++, (*rk)++) {
		uint8_t *p = R.b.buf + (size_t)(*rk % 64) * UD_RSLOT;
		uint32_t tag = tag0 + k, got;
		struct ibv_wc wc;

		POLL1(R.b.rcq, wc);
		ASSERT_STATUS(wc, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc.wr_id, *rk);
		TEST_ASSERT_EQ(wc.byte_len, UD_LEN + 40);
		memcpy(&got, p + 40, sizeof(got));
		TEST_ASSERT(got == tag, "receive %u holds datagram %u, expected %u", *rk, got, tag);
		h_pattern(expect, UD_LEN, tag);
		memcpy(expect, &tag, sizeof(tag));
		ASSERT_BYTES(p + 40, expect, UD_LEN);
		TEST_ASSERT_EQ(h_post_recv(&R.b, (size_t)(*rk % 64) * UD_RSLOT, UD_RSLOT, *rk + 64),
			       0);
	}
	return TEST_SUCCESS;
}

/*
 * UD across a flap: 8 datagrams before (received), 8 while the link is down
 * (they complete at the sender, the port counts them dropped, none is ever
 * received), 8 after it is back (received next, in order).
 */
static int
test_ud_datagrams_while_down_are_lost_after_up_arrive(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_UD };
	uint64_t drop0, end;
	uint32_t rk = 0;
	struct ibv_wc wc;

	if (!clean_link) {
		printf("# UD counts every datagram: not on a link with impairments\n");
		return TEST_SKIPPED;
	}
	TEST_ASSERT_EQ(pair(&o), TEST_SUCCESS);
	R.ah = h_ah(&R.a, &R.b);
	TEST_ASSERT(R.ah != NULL, "create_ah");
	for (uint32_t k = 0; k < 64; k++)
		TEST_ASSERT_EQ(h_post_recv(&R.b, (size_t)k * UD_RSLOT, UD_RSLOT, k), 0);

	TEST_ASSERT_EQ(ud_send_batch(0), TEST_SUCCESS);
	TEST_ASSERT_EQ(ud_recv_batch(&rk, 0), TEST_SUCCESS);

	TEST_ASSERT_EQ(link_move(false), TEST_SUCCESS);
	drop0 = impair_xstat(0, "impair_link_dropped");
	TEST_ASSERT_EQ(ud_send_batch(UD_BATCH), TEST_SUCCESS);
	/* the engine hands the frames to the port after their completions */
	end = h_now_ms() + WC_MS;
	while (impair_xstat(0, "impair_link_dropped") < drop0 + UD_BATCH && h_now_ms() < end)
		ibv_poll_cq(R.a.scq, 0, &wc);
	TEST_ASSERT(impair_xstat(0, "impair_link_dropped") >= drop0 + UD_BATCH,
		    "%" PRIu64 " frames dropped while down, %u datagrams sent",
		    impair_xstat(0, "impair_link_dropped") - drop0, UD_BATCH);

	TEST_ASSERT_EQ(link_move(true), TEST_SUCCESS);
	TEST_ASSERT_EQ(ud_send_batch(2 * UD_BATCH), TEST_SUCCESS);
	/* the next datagram b receives is the first one sent after the link came back */
	TEST_ASSERT_EQ(ud_recv_batch(&rk, 2 * UD_BATCH), TEST_SUCCESS);
	ASSERT_QUIET(R.b.rcq, 20);
	TEST_ASSERT_EQ(no_event(R.a.ctx), TEST_SUCCESS);
	TEST_ASSERT_EQ(no_event(R.b.ctx), TEST_SUCCESS);
	return TEST_SUCCESS;
}

/*
 * Device @dev on @base ("ethdev=...,ip=...") with @key=each of @vals: taken
 * (created, then destroyed) if @take, else refused. 0 or TEST_FAILED.
 */
static int
devarg_values(const char *dev, const char *base, const char *key, const char *const *vals,
	      unsigned int n, bool take)
{
	char args[160];

	for (unsigned int i = 0; i < n; i++) {
		int ret;

		snprintf(args, sizeof(args), "%s,%s=%s", base, key, vals[i]);
		ret = droce_dev_create(dev, args);
		TEST_ASSERT(take ? ret == 0 : ret < 0, "%s=%s %s: %d", key, vals[i],
			    take ? "refused" : "taken", ret);
		if (ret == 0)
			TEST_ASSERT_EQ(droce_dev_destroy(dev), 0);
	}
	return TEST_SUCCESS;
}

/* rto_min_us=: 0 (no early resends) to 10000; anything else refused, the port left free */
static int
test_rto_min_us_devarg(void)
{
	static const char *const bad[] = { "-1", "10001", "x", "", "5us" };
	static const char *const good[] = { "0", "10000" };
	static const char *const base = "ethdev=net_ring_rto_a,ip=10.0.6.1";

	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_rto_a", "net_ring_rto_b"), 0);
	CHECK(devarg_values("droce6", base, "rto_min_us", bad, RTE_DIM(bad), false));
	CHECK(devarg_values("droce6", base, "rto_min_us", good, RTE_DIM(good), true));
	return TEST_SUCCESS;
}

/*
 * zcopy=: auto, or 0 to 65536; anything else refused. A number on a port
 * without multi-segment transmit is refused too (the frames would be
 * chains); on one with it, taken (with a warning: net_ring is not known to
 * copy frames). The port is left free each time.
 */
static int
test_zcopy_devarg(void)
{
	static const char *const bad[] = { "-1", "65537", "x", "", "16k", "autox" };
	static const char *const always[] = { "auto", "0" };
	static const char *const numbers[] = { "1024", "65536" };
	static const char *const base = "ethdev=net_ring_zc_a,ip=10.0.7.1";
	struct rte_eth_dev_info info;
	uint16_t port;
	bool segs;

	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_zc_a", "net_ring_zc_b"), 0);
	CHECK(devarg_values("droce7", base, "zcopy", bad, RTE_DIM(bad), false));
	CHECK(devarg_values("droce7", base, "zcopy", always, RTE_DIM(always), true));
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("net_ring_zc_a", &port), 0);
	TEST_ASSERT_EQ(rte_eth_dev_info_get(port, &info), 0);
	segs = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	printf("# net_ring %s multi-segment transmit: zcopy=1024 %s\n", segs ? "has" : "has no",
	       segs ? "taken" : "refused");
	CHECK(devarg_values("droce7", base, "zcopy", numbers, RTE_DIM(numbers), segs));
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* The port's ownership (devarg own=) */

static bool
port_listed(uint16_t port)
{
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p)
		if (p == port)
			return true;
	return false;
}

static int
test_port_owned_by_device_unless_own_0(void)
{
	struct rte_eth_dev_owner owner;
	uint16_t wire_a, own_a, own_b;

	/* droce2's port (own= not given): droce's, hidden from RTE_ETH_FOREACH_DEV */
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("net_ring_wire_a", &wire_a), 0);
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(wire_a, &owner), 0);
	TEST_ASSERT(owner.id != RTE_ETH_DEV_NO_OWNER && strcmp(owner.name, "droce") == 0,
		    "net_ring_wire_a's owner: %s", owner.name);
	TEST_ASSERT(!port_listed(wire_a), "an owned port listed");

	TEST_ASSERT_EQ(droce_ring_pair_create("net_ring_own_a", "net_ring_own_b"), 0);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("net_ring_own_a", &own_a), 0);
	TEST_ASSERT_EQ(rte_eth_dev_get_port_by_name("net_ring_own_b", &own_b), 0);
	TEST_ASSERT_EQ(droce_dev_create("droce4", "ethdev=net_ring_own_b,ip=10.0.4.2,own=yes"),
		       -EINVAL);
	TEST_ASSERT_EQ(droce_dev_create("droce4", "ethdev=net_ring_own_a,ip=10.0.4.1,own=0"), 0);
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(own_a, &owner), 0);
	TEST_ASSERT_EQ(owner.id, RTE_ETH_DEV_NO_OWNER);
	TEST_ASSERT(port_listed(own_a), "the port of an own=0 device is not listed");
	TEST_ASSERT_EQ(droce_dev_create("droce5", "ethdev=net_ring_own_b,ip=10.0.4.2,own=1"), 0);
	TEST_ASSERT_EQ(rte_eth_dev_owner_get(own_b, &owner), 0);
	TEST_ASSERT(strcmp(owner.name, "droce") == 0, "own=1: owner %s", owner.name);
	TEST_ASSERT_EQ(droce_dev_destroy("droce4"), 0);
	TEST_ASSERT_EQ(droce_dev_destroy("droce5"), 0);
	/* removal lets go of an owned port, and leaves an unowned one as it was */
	TEST_ASSERT(port_listed(own_a) && port_listed(own_b), "ports not listed after removal");
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_link_flap_within_budget_loses_nothing),
	TEST_CASE(test_tail_loss_resent_before_ack_timeout),
	TEST_CASE(test_rto_min_us_devarg),
	TEST_CASE(test_zcopy_devarg),
	TEST_CASE(test_link_repeated_flaps_lose_nothing),
	TEST_CASE(test_link_down_past_budget_fails_then_reconnects),
	TEST_CASE(test_peer_not_draining_port_full_retry_exc_err_then_new_pair_works),
	TEST_CASE(test_ud_datagrams_while_down_are_lost_after_up_arrive),
	TEST_CASE(test_port_owned_by_device_unless_own_0),
};

int
main(int argc, char **argv)
{
	char *args[16];
	int n = 0;
	bool impaired = false;
	int rc;

	for (int i = 0; i < argc && n < (int)RTE_DIM(args) - 2; i++) {
		args[n++] = argv[i];
		impaired |= strncmp(argv[i], "--impair=", 9) == 0;
	}
	if (!impaired)
		args[n++] = "--impair=link=up";
	clean_link = !impaired;
	args[n] = NULL;
	if (h_init(n, args) != 0)
		return 1;
	if (rte_eth_dev_get_port_by_name("net_impair0", &impair_port[0]) != 0 ||
	    rte_eth_dev_get_port_by_name("net_impair1", &impair_port[1]) != 0) {
		fprintf(stderr, "no net_impair ports\n");
		return 1;
	}
	if (wire_setup() != 0) {
		fprintf(stderr, "droce2/droce3 on their wire: setup failed\n");
		return 1;
	}
	rc = DROCE_TEST_MAIN("link", cases, NULL, teardown);
	ibv_free_device_list(W.list);
	return rc;
}
