/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events and event fds (man ibv_get_async_event,
 * ibv_get_cq_event; IBA 11.6.3): QP errors the responder detects
 * (QP_ACCESS_ERR, QP_REQ_ERR) and a completion lost to a CQ overrun (CQ_ERR
 * and QP_FATAL), each naming its object, with the QP in ERR afterwards and no
 * event for what an error completion reports; port events when the link
 * goes down and up, to every context open on the device; and completion
 * channel fds and async_fd that poll()/epoll_wait() see readable, or a
 * blocking ibv_get_cq_event/ibv_get_async_event that returns, while the
 * application makes no other verbs call (with --inline, the waker thread
 * moves the devices).
 *
 * Run with --inline or --lcore.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"
#include "verbs_assert.h"

#define WC_MS		5000	/* wait for one expected completion */
#define EV_MS		5000	/* wait for one expected event or readable fd */
#define QUIET_MS	50	/* window in which no event may appear */
#define WATCHDOG_S	60	/* a blocking call that never returns fails the case */
#define BIG		(256 * 1024)	/* a message that needs many progress rounds */

/*
 * A case makes its objects through h_res_* (harness.h); teardown brings back
 * a link the case took down, then releases them whatever happened.
 */
static struct {
	struct h_side *a, *b;		/* a on droce0, b on droce1 */
	struct ibv_comp_channel *chan;	/* b's receive CQ's */
	int down_port;			/* a port whose link a case took down, + 1 */
} R;

static void
teardown(void)
{
	alarm(0);
	if (R.down_port)
		rte_eth_dev_set_link_up(R.down_port - 1);
	h_res_release();
	memset(&R, 0, sizeof(R));
}

/* h_res_open, its async_fd non-blocking. */
static struct ibv_context *
open_ctx(int idx)
{
	struct ibv_context *c = h_res_open(idx);

	if (c != NULL)
		fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) | O_NONBLOCK);
	return c;
}

/* A connected RC pair; with @chan, b's receive CQ has a completion channel. */
static int
pair(struct h_qp_opts *oa, struct h_qp_opts *ob, bool chan)
{
	struct ibv_context *ca = open_ctx(0), *cb = open_ctx(1);

	if (ca == NULL || cb == NULL)
		return -1;
	if (chan) {
		R.chan = h_res_add_chan(ibv_create_comp_channel(cb));
		if (R.chan == NULL)
			return -1;
		ob->rchan = R.chan;
	}
	if ((R.a = h_res_side(ca, oa)) == NULL || (R.b = h_res_side(cb, ob)) == NULL)
		return -1;
	return h_connect(R.a, R.b, oa) || h_connect(R.b, R.a, ob) ? -1 : 0;
}

/* An RDMA WRITE or READ of @len bytes at a's @off, to/from @raddr/@rkey. */
static int
post_rdma(enum ibv_wr_opcode op, size_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
	  uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)R.a->buf + off, len, R.a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(R.a->qp, &wr, &bad);
}

/* An R_Key no MR of b's device has (the MR index of b's key, plus 7). */
static uint32_t
bad_rkey(void)
{
	return R.b->mr->rkey + (7u << 20);
}

static enum ibv_port_state
port_state(struct ibv_context *c)
{
	struct ibv_port_attr a;

	return ibv_query_port(c, 1, &a) == 0 ? a.state : IBV_PORT_NOP;
}

/* poll() until @fd is readable or @ms pass, with no verbs call: true if readable. */
static bool
fd_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	return n == 1 && (p.revents & POLLIN);
}

#define EXPECT_EVENT(c, type, field, obj) do { \
	struct ibv_async_event _ev; \
	TEST_ASSERT(h_async_event((c), &_ev, EV_MS) == 0, "no %s within %d ms", \
		    ibv_event_type_str(type), EV_MS); \
	TEST_ASSERT(_ev.event_type == (type), "%s, expected %s", \
		    ibv_event_type_str(_ev.event_type), ibv_event_type_str(type)); \
	TEST_ASSERT_PTR_EQ(_ev.element.field, (obj)); \
	ibv_ack_async_event(&_ev); \
} while (0)

#define EXPECT_PORT_EVENT(c, type) do { \
	struct ibv_async_event _ev; \
	TEST_ASSERT(h_async_event((c), &_ev, EV_MS) == 0, "no %s within %d ms", \
		    ibv_event_type_str(type), EV_MS); \
	TEST_ASSERT(_ev.event_type == (type), "%s, expected %s", \
		    ibv_event_type_str(_ev.event_type), ibv_event_type_str(type)); \
	TEST_ASSERT_EQ(_ev.element.port_num, 1); \
	ibv_ack_async_event(&_ev); \
} while (0)

#define ASSERT_NO_EVENT(c) do { \
	struct ibv_async_event _ev; \
	TEST_ASSERT(h_async_event((c), &_ev, QUIET_MS) != 0, "unexpected %s", \
		    ibv_event_type_str(_ev.event_type)); \
} while (0)

/* ------------------------------------------------------------------------- */
/* QP errors the responder detects */

/*
 * A WRITE with an R_Key b does not know: b NAKs it, goes to ERR and raises
 * IBV_EVENT_QP_ACCESS_ERR on its QP; a learns it from its completion
 * (IBV_WC_REM_ACCESS_ERR) and gets no event; no byte of b's buffer changes.
 */
static int
test_rc_write_bad_rkey_raises_qp_access_err(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_wc wc;

	TEST_ASSERT_EQ(pair(&o, &o, false), 0);
	h_pattern(R.a->buf, 4096, 1);
	TEST_ASSERT_EQ(post_rdma(IBV_WR_RDMA_WRITE, 0, 4096, (uintptr_t)R.b->buf, bad_rkey(), 11), 0);
	POLL1(R.a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 11);
	EXPECT_EVENT(R.b->ctx, IBV_EVENT_QP_ACCESS_ERR, qp, R.b->qp);
	TEST_ASSERT_EQ(h_qp_state(R.b->qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state(R.a->qp), IBV_QPS_ERR);
	ASSERT_NO_EVENT(R.b->ctx);	/* once */
	ASSERT_NO_EVENT(R.a->ctx);	/* the requester's error is its completion */
	ASSERT_FILL(R.b->buf, 0, 8192);
	return TEST_SUCCESS;
}

/* A READ running past the end of b's MR: IBV_EVENT_QP_ACCESS_ERR on b. */
static int
test_rc_read_past_mr_raises_qp_access_err(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct ibv_wc wc;

	TEST_ASSERT_EQ(pair(&o, &o, false), 0);
	TEST_ASSERT_EQ(post_rdma(IBV_WR_RDMA_READ, 0, 4096,
				 (uintptr_t)R.b->buf + R.b->buf_len - 100, R.b->mr->rkey, 12), 0);
	POLL1(R.a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 12);
	EXPECT_EVENT(R.b->ctx, IBV_EVENT_QP_ACCESS_ERR, qp, R.b->qp);
	TEST_ASSERT_EQ(h_qp_state(R.b->qp), IBV_QPS_ERR);
	ASSERT_NO_EVENT(R.a->ctx);
	return TEST_SUCCESS;
}

/*
 * a may have 4 READs in flight, b takes 1 (max_dest_rd_atomic), and a posts
 * 4 in one call: the second is an invalid request (IBA 9.7.5.2.2). b answers
 * the first, then NAKs the second, raises IBV_EVENT_QP_REQ_ERR and goes to
 * ERR; a's first READ succeeds, the second ends IBV_WC_REM_INV_REQ_ERR, the
 * others are flushed.
 */
static int
test_rc_reads_beyond_max_dest_rd_atomic_raise_qp_req_err(void)
{
	static const enum ibv_wc_status exp[4] = {
		IBV_WC_SUCCESS, IBV_WC_REM_INV_REQ_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR,
	};
	struct h_qp_opts oa = { .type = IBV_QPT_RC, .max_rd_atomic = 4 };
	struct h_qp_opts ob = { .type = IBV_QPT_RC };
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4];
	struct ibv_wc wc[4];

	TEST_ASSERT_EQ(pair(&oa, &ob, false), 0);
	h_pattern(R.b->buf, 65536, 9);
	for (int i = 0; i < 4; i++) {
		/* 64 responses each: more than one round of b's responder */
		sge[i] = (struct ibv_sge){ (uintptr_t)R.a->buf + i * 65536, 65536, R.a->mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_RDMA_READ,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i < 3 ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = (uintptr_t)R.b->buf + i * 65536;
		wr[i].wr.rdma.rkey = R.b->mr->rkey;
	}
	TEST_ASSERT_EQ(ibv_post_send(R.a->qp, wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(R.a->scq, wc, 4, WC_MS), 4);
	for (int i = 0; i < 4; i++) {
		TEST_ASSERT_EQ(wc[i].wr_id, i);
		ASSERT_STATUS(wc[i], exp[i]);
	}
	ASSERT_BYTES(R.a->buf, R.b->buf, 65536);
	EXPECT_EVENT(R.b->ctx, IBV_EVENT_QP_REQ_ERR, qp, R.b->qp);
	TEST_ASSERT_EQ(h_qp_state(R.b->qp), IBV_QPS_ERR);
	TEST_ASSERT_EQ(h_qp_state(R.a->qp), IBV_QPS_ERR);
	ASSERT_NO_EVENT(R.b->ctx);
	ASSERT_NO_EVENT(R.a->ctx);
	return TEST_SUCCESS;
}

/*
 * b's receive CQ holds 2 completions and nobody polls it: the third receive
 * overruns it. b's context gets IBV_EVENT_CQ_ERR on the CQ and
 * IBV_EVENT_QP_FATAL on the QP whose completion was lost, which is in ERR;
 * the two completions that fit are intact. a gets no event.
 */
static int
test_cq_overrun_raises_cq_err_and_qp_fatal(void)
{
	struct h_qp_opts oa = { .type = IBV_QPT_RC };
	struct h_qp_opts ob = { .type = IBV_QPT_RC, .cqe = 2 };
	uint64_t overflow0 = h_xstat("droce1", "cq_overflow");
	struct ibv_async_event ev[2];
	bool cq_err = false, fatal = false;
	struct ibv_wc wc[2];

	TEST_ASSERT_EQ(pair(&oa, &ob, false), 0);
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(h_post_recv(R.b, i * 1024, 1024, 100 + i), 0);
	for (int i = 0; i < 3; i++)	/* unsignaled: a's own CQ stays empty */
		TEST_ASSERT_EQ(h_post_send(R.a, IBV_WR_SEND, i * 1024, 64 + i, i, 0), 0);
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT(h_async_event(R.b->ctx, &ev[i], EV_MS) == 0, "event %d of 2 missing", i);
		if (ev[i].event_type == IBV_EVENT_CQ_ERR) {
			TEST_ASSERT_PTR_EQ(ev[i].element.cq, R.b->rcq);
			cq_err = true;
		} else {
			TEST_ASSERT(ev[i].event_type == IBV_EVENT_QP_FATAL, "%s",
				    ibv_event_type_str(ev[i].event_type));
			TEST_ASSERT_PTR_EQ(ev[i].element.qp, R.b->qp);
			fatal = true;
		}
		ibv_ack_async_event(&ev[i]);
	}
	TEST_ASSERT(cq_err && fatal, "CQ_ERR %d, QP_FATAL %d", cq_err, fatal);
	TEST_ASSERT_EQ(R.b->rcq->async_events_completed, 1);
	TEST_ASSERT_EQ(R.b->qp->events_completed, 1);
	TEST_ASSERT_EQ(h_qp_state(R.b->qp), IBV_QPS_ERR);
	TEST_ASSERT(h_xstat("droce1", "cq_overflow") > overflow0, "overflow not counted");
	TEST_ASSERT_EQ(ibv_poll_cq(R.b->rcq, 2, wc), 2);
	for (int i = 0; i < 2; i++) {
		ASSERT_STATUS(wc[i], IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, 100 + i);
		TEST_ASSERT_EQ(wc[i].byte_len, 64 + i);
	}
	ASSERT_NO_EVENT(R.b->ctx);
	ASSERT_NO_EVENT(R.a->ctx);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Port events */

static int
ring_port(const char *name, uint16_t *port)
{
	return rte_eth_dev_get_port_by_name(name, port);
}

/*
 * Each of @c's async_fd turns readable while the test only sleeps in poll(),
 * with one event, @type; ibv_query_port then says @state.
 */
static int
port_change_seen(struct ibv_context *c[2], enum ibv_event_type type, enum ibv_port_state state)
{
	for (int i = 0; i < 2; i++) {
		TEST_ASSERT(fd_readable(c[i]->async_fd, EV_MS), "async_fd of context %d not readable",
			    i + 1);
		EXPECT_PORT_EVENT(c[i], type);
		TEST_ASSERT_EQ(port_state(c[i]), state);
		TEST_ASSERT(!fd_readable(c[i]->async_fd, 0), "async_fd of context %d still readable",
			    i + 1);
	}
	return TEST_SUCCESS;
}

/*
 * droce0's link goes down, then up: both contexts open on droce0 see
 * IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE (port 1), their async_fd
 * readable while the test only sleeps in poll(); ibv_query_port agrees after
 * each; droce1's context hears nothing.
 */
static int
test_port_err_then_active_to_every_context(void)
{
	struct ibv_context *c[2] = { open_ctx(0), open_ctx(0) }, *other = open_ctx(1);
	uint16_t port;
	int rc;

	TEST_ASSERT(c[0] && c[1] && other, "open");
	TEST_ASSERT_EQ(ring_port("net_ring_a", &port), 0);
	TEST_ASSERT_EQ(port_state(c[0]), IBV_PORT_ACTIVE);
	ASSERT_NO_EVENT(c[0]);

	R.down_port = port + 1;
	TEST_ASSERT_EQ(rte_eth_dev_set_link_down(port), 0);
	rc = port_change_seen(c, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN);
	if (rc)
		return rc;
	TEST_ASSERT_EQ(rte_eth_dev_set_link_up(port), 0);
	R.down_port = 0;
	rc = port_change_seen(c, IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE);
	if (rc)
		return rc;
	ASSERT_NO_EVENT(c[0]);
	ASSERT_NO_EVENT(c[1]);
	ASSERT_NO_EVENT(other);
	return TEST_SUCCESS;
}

/* A change ibv_query_port sees first is announced before it answers. */
static int
test_query_port_announces_what_it_reports(void)
{
	struct ibv_context *c = open_ctx(0);
	uint16_t port;

	TEST_ASSERT(c != NULL, "open");
	TEST_ASSERT_EQ(ring_port("net_ring_a", &port), 0);
	R.down_port = port + 1;
	TEST_ASSERT_EQ(rte_eth_dev_set_link_down(port), 0);
	TEST_ASSERT_EQ(port_state(c), IBV_PORT_DOWN);
	TEST_ASSERT(fd_readable(c->async_fd, 0), "PORT_ERR not queued when query_port said DOWN");
	EXPECT_PORT_EVENT(c, IBV_EVENT_PORT_ERR);
	TEST_ASSERT_EQ(rte_eth_dev_set_link_up(port), 0);
	R.down_port = 0;
	TEST_ASSERT_EQ(port_state(c), IBV_PORT_ACTIVE);
	EXPECT_PORT_EVENT(c, IBV_EVENT_PORT_ACTIVE);
	ASSERT_NO_EVENT(c);
	return TEST_SUCCESS;
}

static void *
link_down_later(void *arg)
{
	usleep(100 * 1000);
	rte_eth_dev_set_link_down(*(uint16_t *)arg);
	return NULL;
}

/* A blocking ibv_get_async_event, asleep when the link goes down, returns PORT_ERR. */
static int
test_blocking_get_async_event_wakes_on_port_err(void)
{
	struct ibv_context *c = open_ctx(0);
	struct ibv_async_event ev;
	pthread_t t;
	uint16_t port;
	int ret;

	TEST_ASSERT(c != NULL, "open");
	TEST_ASSERT_EQ(ring_port("net_ring_a", &port), 0);
	TEST_ASSERT_EQ(fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) & ~O_NONBLOCK), 0);
	R.down_port = port + 1;
	TEST_ASSERT_EQ(pthread_create(&t, NULL, link_down_later, &port), 0);
	alarm(WATCHDOG_S);
	ret = ibv_get_async_event(c, &ev);
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(ret, 0);
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_PORT_ERR);
	TEST_ASSERT_EQ(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
	TEST_ASSERT_EQ(port_state(c), IBV_PORT_DOWN);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Event fds with no application progress */

static int
expect_big_recv(void)
{
	struct ibv_wc wc;

	POLL1(R.b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 7);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_RECV);
	TEST_ASSERT_EQ(wc.byte_len, BIG);
	TEST_ASSERT_EQ(wc.qp_num, R.b->qp->qp_num);
	ASSERT_BYTES(R.b->buf, R.a->buf, BIG);
	POLL1(R.a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	return TEST_SUCCESS;
}

/* b's receive CQ armed, a sends BIG; the channel event is b's receive CQ's. */
static int
arm_and_send(void)
{
	struct h_qp_opts oa = { .type = IBV_QPT_RC }, ob = { .type = IBV_QPT_RC };

	TEST_ASSERT_EQ(pair(&oa, &ob, true), 0);
	TEST_ASSERT_EQ(ibv_req_notify_cq(R.b->rcq, 0), 0);
	TEST_ASSERT_EQ(h_post_recv(R.b, 0, BIG, 7), 0);
	h_pattern(R.a->buf, BIG, 3);
	/* more packets than one progress round sends: the post cannot finish it */
	TEST_ASSERT_EQ(h_post_send(R.a, IBV_WR_SEND, 0, BIG, 1, IBV_SEND_SIGNALED), 0);
	return TEST_SUCCESS;
}

static int
take_cq_event(void)
{
	struct ibv_cq *cq = NULL;
	void *cq_ctx = (void *)1;

	TEST_ASSERT_EQ(ibv_get_cq_event(R.chan, &cq, &cq_ctx), 0);
	TEST_ASSERT_PTR_EQ(cq, R.b->rcq);
	TEST_ASSERT_PTR_EQ(cq_ctx, R.b->rcq->cq_context);
	ibv_ack_cq_events(cq, 1);
	TEST_ASSERT_EQ(cq->comp_events_completed, 1);
	TEST_ASSERT(!fd_readable(R.chan->fd, 0), "channel fd still readable, no event left");
	return expect_big_recv();
}

/*
 * With @poll_first, poll() on the channel fd and nothing else until the
 * receive completes; else a blocking ibv_get_cq_event (inline: it sleeps on
 * the fd).
 */
static int
cq_event_after_send(bool poll_first)
{
	int rc = arm_and_send();

	if (rc)
		return rc;
	if (poll_first)
		TEST_ASSERT(fd_readable(R.chan->fd, EV_MS), "channel fd not readable within %d ms",
			    EV_MS);
	else
		alarm(WATCHDOG_S);
	return take_cq_event();
}

static int
test_channel_fd_poll_readable_without_progress_calls(void)
{
	return cq_event_after_send(true);
}

static int
test_blocking_get_cq_event_returns(void)
{
	return cq_event_after_send(false);
}

/*
 * Nothing armed, no thread in a verbs call: epoll_wait() on b's async_fd
 * returns once a's BIG SEND and then a WRITE with a bad R_Key have reached b,
 * which raises IBV_EVENT_QP_ACCESS_ERR. The SEND before it completed.
 */
static int
test_async_fd_epoll_readable_without_progress_calls(void)
{
	struct h_qp_opts o = { .type = IBV_QPT_RC };
	struct epoll_event ee = { .events = EPOLLIN }, got;
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int ep, n;

	TEST_ASSERT_EQ(pair(&o, &o, false), 0);
	TEST_ASSERT_EQ(h_post_recv(R.b, 0, BIG, 7), 0);
	h_pattern(R.a->buf, BIG, 5);
	ep = epoll_create1(EPOLL_CLOEXEC);
	TEST_ASSERT(ep >= 0, "epoll_create1: %s", strerror(errno));
	TEST_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, R.b->ctx->async_fd, &ee), 0);
	TEST_ASSERT_EQ(h_post_send(R.a, IBV_WR_SEND, 0, BIG, 1, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(post_rdma(IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)R.b->buf + BIG,
				 bad_rkey(), 2), 0);
	do {
		n = epoll_wait(ep, &got, 1, EV_MS);
	} while (n < 0 && errno == EINTR);
	close(ep);
	TEST_ASSERT(n == 1, "async_fd not readable within %d ms (epoll_wait %d)", EV_MS, n);
	TEST_ASSERT_EQ(ibv_get_async_event(R.b->ctx, &ev), 0);
	TEST_ASSERT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	TEST_ASSERT_PTR_EQ(ev.element.qp, R.b->qp);
	ibv_ack_async_event(&ev);
	TEST_ASSERT_EQ(h_qp_state(R.b->qp), IBV_QPS_ERR);
	POLL1(R.b->rcq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.byte_len, BIG);
	ASSERT_BYTES(R.b->buf, R.a->buf, BIG);
	POLL1(R.a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 1);
	POLL1(R.a->scq, wc);
	ASSERT_STATUS(wc, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 2);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------- */

static const struct droce_test_case cases[] = {
	TEST_CASE(test_rc_write_bad_rkey_raises_qp_access_err),
	TEST_CASE(test_rc_read_past_mr_raises_qp_access_err),
	TEST_CASE(test_rc_reads_beyond_max_dest_rd_atomic_raise_qp_req_err),
	TEST_CASE(test_cq_overrun_raises_cq_err_and_qp_fatal),
	TEST_CASE(test_port_err_then_active_to_every_context),
	TEST_CASE(test_query_port_announces_what_it_reports),
	TEST_CASE(test_blocking_get_async_event_wakes_on_port_err),
	TEST_CASE(test_channel_fd_poll_readable_without_progress_calls),
	TEST_CASE(test_blocking_get_cq_event_returns),
	TEST_CASE(test_async_fd_epoll_readable_without_progress_calls),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "events", cases, NULL, teardown);
}
