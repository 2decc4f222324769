/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager through the rdma_* API (issue 11), in one process
 * over the drop-in librdmacm and libibverbs: one droce device (DROCE_EAL,
 * on a net_ring port that loops back to itself) on which a listener and
 * the clients that connect to it talk through QP1 like two hosts would.
 * Every case checks what arrived: events and their status, private data
 * both ways, conn_param fields, errno values, and bytes sent through the
 * connected QPs with the rdma_verbs.h calls (rdma_post_recv's seed
 * semantics among them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "cm_mad.h"
#include "droce_test.h"

#define DEV_IP		"10.0.0.1"
#define WAIT_MS		5000

static struct sockaddr_in
sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* The next event of @ch within @ms, which must be @want; kept in *out (to ack) or acked. */
static int
wait_ev(struct rdma_event_channel *ch, enum rdma_cm_event_type want, struct rdma_cm_event **out,
	int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1) {
		fprintf(stderr, "  no event within %d ms (waiting for %s)\n", ms, rdma_event_str(want));
		return -1;
	}
	if (rdma_get_cm_event(ch, &ev) != 0) {
		fprintf(stderr, "  rdma_get_cm_event: %s\n", strerror(errno));
		return -1;
	}
	if (ev->event != want) {
		fprintf(stderr, "  event %s (status %d), expected %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

struct pair {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listen, *srv, *cli;
	struct ibv_qp_init_attr qa;
};

static void
pair_free(struct pair *p)
{
	if (p->cli) {
		if (p->cli->qp)
			rdma_destroy_qp(p->cli);
		rdma_destroy_id(p->cli);
	}
	if (p->srv) {
		if (p->srv->qp)
			rdma_destroy_qp(p->srv);
		rdma_destroy_id(p->srv);
	}
	if (p->listen)
		rdma_destroy_id(p->listen);
	if (p->sch)
		rdma_destroy_event_channel(p->sch);
	if (p->cch)
		rdma_destroy_event_channel(p->cch);
	memset(p, 0, sizeof(*p));
}

/* In *id, a listener of @ch on the device's IP and @port, with context @ctx. */
static int
listener_new(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx, uint16_t port,
	     int backlog)
{
	struct sockaddr_in l = sin_of(DEV_IP, port);

	TEST_ASSERT_EQ(rdma_create_id(ch, id, ctx, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_bind_addr(*id, (struct sockaddr *)&l), 0);
	TEST_ASSERT_EQ(rdma_listen(*id, backlog), 0);
	return 0;
}

/* In *id, a client of @ch with its address and route resolved to the device's IP and @port. */
static int
client_new(struct rdma_event_channel *ch, struct rdma_cm_id **id, uint16_t port)
{
	struct sockaddr_in d = sin_of(DEV_IP, port);

	TEST_ASSERT_EQ(rdma_create_id(ch, id, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_resolve_addr(*id, NULL, (struct sockaddr *)&d, 2000), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, WAIT_MS));
	TEST_ASSERT_EQ(rdma_resolve_route(*id, 2000), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, WAIT_MS));
	return 0;
}

/* A listener on @port and a client id resolved to it, with its QP. */
static int
pair_setup(struct pair *p, uint16_t port, int backlog)
{
	memset(p, 0, sizeof(*p));
	p->qa = (struct ibv_qp_init_attr){
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	p->sch = rdma_create_event_channel();
	p->cch = rdma_create_event_channel();
	TEST_ASSERT(p->sch && p->cch, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(listener_new(p->sch, &p->listen, p, port, backlog));
	TEST_ASSERT(p->listen->verbs != NULL, "a listener bound to the device's IP has its device");
	CHECK(client_new(p->cch, &p->cli, port));
	TEST_ASSERT(p->cli->verbs == p->listen->verbs, "the client is on the device");
	TEST_ASSERT_EQ(p->cli->route.num_paths, 1);
	TEST_ASSERT(ntohs(rdma_get_src_port(p->cli)) != 0, "the client got a source port");
	TEST_ASSERT_EQ(ntohs(rdma_get_dst_port(p->cli)), port);
	return 0;
}

/* @id's QP, of the pair's attributes. */
static int
pair_qp(const struct pair *p, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = p->qa;

	return rdma_create_qp(id, NULL, &qa);
}

/*
 * The client's QP, and its connect with @cp: the request the listener gets
 * is p->srv, its event kept in *ev (to ack), or acked when @ev is NULL.
 */
static int
pair_request(struct pair *p, struct rdma_conn_param *cp, struct rdma_cm_event **ev)
{
	struct rdma_cm_event *e;

	TEST_ASSERT_EQ(pair_qp(p, p->cli), 0);
	TEST_ASSERT_EQ(rdma_connect(p->cli, cp), 0);
	CHECK(wait_ev(p->sch, RDMA_CM_EVENT_CONNECT_REQUEST, &e, WAIT_MS));
	p->srv = e->id;
	if (ev)
		*ev = e;
	else
		rdma_ack_cm_event(e);
	return 0;
}

/* Connect with @cpd, the server accepts with @spd: both ESTABLISHED, data checked. */
static int
pair_connect(struct pair *p, const char *cpd, const char *spd)
{
	struct rdma_conn_param cp = { .private_data = cpd, .private_data_len = (uint8_t)strlen(cpd) + 1,
				      .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_conn_param sp = { .private_data = spd, .private_data_len = (uint8_t)strlen(spd) + 1,
				      .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;

	CHECK(pair_request(p, &cp, &ev));
	TEST_ASSERT(p->cli->send_cq && p->cli->recv_cq && p->cli->send_cq_channel,
		    "rdma_create_qp without CQs makes them, with channels");
	TEST_ASSERT_PTR_EQ(ev->listen_id, p->listen);
	TEST_ASSERT_PTR_EQ(ev->id->context, p);	/* the listener's context */
	TEST_ASSERT_EQ(ev->param.conn.qp_num, p->cli->qp->qp_num);
	TEST_ASSERT(ev->param.conn.private_data_len >= strlen(cpd) + 1 &&
		    strcmp(ev->param.conn.private_data, cpd) == 0, "request private data");
	TEST_ASSERT_EQ(ev->param.conn.responder_resources, 1);
	TEST_ASSERT_EQ(ev->param.conn.initiator_depth, 1);
	TEST_ASSERT_EQ(ntohs(rdma_get_src_port(ev->id)), ntohs(rdma_get_src_port(p->listen)));
	TEST_ASSERT_EQ(rdma_get_dst_port(ev->id), rdma_get_src_port(p->cli));
	rdma_ack_cm_event(ev);
	TEST_ASSERT_EQ(pair_qp(p, p->srv), 0);
	TEST_ASSERT_EQ(rdma_accept(p->srv, &sp), 0);
	CHECK(wait_ev(p->cch, RDMA_CM_EVENT_ESTABLISHED, &ev, WAIT_MS));
	TEST_ASSERT(strcmp(ev->param.conn.private_data, spd) == 0, "reply private data");
	TEST_ASSERT_EQ(ev->param.conn.qp_num, p->srv->qp->qp_num);
	rdma_ack_cm_event(ev);
	CHECK(wait_ev(p->sch, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS));
	return 0;
}

/* @len bytes from @from to @to through rdma_post_send / rdma_post_recv. */
static int
transfer(struct rdma_cm_id *from, struct rdma_cm_id *to, size_t len)
{
	char *sb = malloc(len), *rb = calloc(1, len);
	struct ibv_mr *smr = NULL, *rmr = NULL;
	struct ibv_wc wc;
	int ret = -1;

	if (sb == NULL || rb == NULL)
		goto out;
	for (size_t i = 0; i < len; i++)
		sb[i] = (char)(i * 7 + 1);
	smr = rdma_reg_msgs(from, sb, len);
	rmr = rdma_reg_msgs(to, rb, len);
	if (smr == NULL || rmr == NULL) {
		fprintf(stderr, "  rdma_reg_msgs: %s\n", strerror(errno));
		goto out;
	}
	if (rdma_post_recv(to, (void *)0x77, rb, len, rmr) != 0 ||
	    rdma_post_send(from, (void *)0x55, sb, len, smr, IBV_SEND_SIGNALED) != 0) {
		fprintf(stderr, "  post: %s\n", strerror(errno));
		goto out;
	}
	if (rdma_get_send_comp(from, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 0x55) {
		fprintf(stderr, "  send completion: status %d wr_id %#lx\n", wc.status, wc.wr_id);
		goto out;
	}
	if (rdma_get_recv_comp(to, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 0x77 || wc.byte_len != len || memcmp(sb, rb, len) != 0) {
		fprintf(stderr, "  receive: status %d wr_id %#lx len %u, bytes %s\n", wc.status,
			wc.wr_id, wc.byte_len, memcmp(sb, rb, len) ? "differ" : "same");
		goto out;
	}
	ret = 0;
out:
	if (smr)
		rdma_dereg_mr(smr);
	if (rmr)
		rdma_dereg_mr(rmr);
	free(sb);
	free(rb);
	return ret;
}

static int
test_connect_send_disconnect(void)
{
	struct pair p;

	CHECK(pair_setup(&p, 7001, 4));
	CHECK(pair_connect(&p, "hello from the client", "welcome"));
	CHECK(transfer(p.cli, p.srv, 4000));	/* several MTUs */
	CHECK(transfer(p.srv, p.cli, 64));
	TEST_ASSERT_EQ(rdma_disconnect(p.cli), 0);
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	/* the server's own disconnect after the peer's: accepted, no second event */
	TEST_ASSERT_EQ(rdma_disconnect(p.srv), 0);
	pair_free(&p);
	return TEST_SUCCESS;
}

/*
 * A peer that vanishes without a DREQ (issue 11): its QP is destroyed
 * behind its CM's back (rdma_destroy_qp sends nothing). While the client
 * sends nothing it learns nothing; its SEND then finds no QP and ends in
 * RETRY_EXC_ERR. The engine's move of the
 * client's QP to ERR reaches the client's CM, which disconnects as
 * rdma_disconnect would, the QP aside: a DREQ (the peer's CM, alive here,
 * answers it; a killed process's would not: run_dropin_rdmacm.sh's
 * killed_peer), and DISCONNECTED on both ends within the DREQ's retries,
 * without rdma_disconnect. rdma_disconnect afterwards returns 0 and reports
 * nothing more.
 */
#define DREQ_BOUND_MS	(6 * 2 * 268 + 500)	/* 1 + 5 retries, 2 x the response time-out */

static double
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int
test_vanished_peer_is_disconnected(void)
{
	struct pollfd pf;
	struct timespec t0, t1;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char buf[64] = "anyone there?";
	double to_wc, to_ev;
	struct pair p;

	CHECK(pair_setup(&p, 7011, 4));
	CHECK(pair_connect(&p, "hello", "world"));
	CHECK(transfer(p.cli, p.srv, 100));
	rdma_destroy_qp(p.srv);
	/* idle, the client hears nothing: no keep-alive, in RC as in the IB CM */
	pf = (struct pollfd){ .fd = p.cch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, 500), 0);
	mr = rdma_reg_msgs(p.cli, buf, sizeof(buf));
	TEST_ASSERT(mr != NULL, "rdma_reg_msgs: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TEST_ASSERT_EQ(rdma_post_send(p.cli, (void *)0x66, buf, sizeof(buf), mr, IBV_SEND_SIGNALED), 0);
	TEST_ASSERT_EQ(rdma_get_send_comp(p.cli, &wc), 1);
	to_wc = ms_since(&t0);
	TEST_ASSERT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	TEST_ASSERT_EQ(wc.wr_id, 0x66);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_DISCONNECTED, NULL, DREQ_BOUND_MS));
	to_ev = ms_since(&t1);
	printf("# RETRY_EXC_ERR %.0f ms after the SEND; DISCONNECTED %.0f ms after it (bound %d ms)\n",
	       to_wc, to_ev, DREQ_BOUND_MS);
	/* the peer's CM got the DREQ */
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	TEST_ASSERT_EQ(rdma_disconnect(p.cli), 0);
	TEST_ASSERT_EQ(rdma_disconnect(p.srv), 0);
	/* no second DISCONNECTED: the end of TimeWait, then nothing */
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL, WAIT_MS));
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL, WAIT_MS));
	pf = (struct pollfd){ .fd = p.cch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, 300), 0);
	pf.fd = p.sch->fd;
	TEST_ASSERT_EQ(poll(&pf, 1, 0), 0);
	rdma_dereg_mr(mr);
	pair_free(&p);
	return TEST_SUCCESS;
}

/*
 * A QP the application moves to ERR (ibv_modify_qp) is the application's
 * business: no CM event, no DREQ; the connection still closes normally with
 * rdma_disconnect. Nor does a QP no connected id owns (a plain RC QP whose
 * SEND fails its local key check, LOC_PROT_ERR) disturb any connection.
 */
static int
test_application_qp_error_is_no_disconnect(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr ra = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_sge sge = { .length = 8, .lkey = 0xbad };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct pollfd pf[2];
	struct ibv_qp *own;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	char buf[8] = "x";
	int n = 0;
	struct pair p;

	CHECK(pair_setup(&p, 7012, 4));
	CHECK(pair_connect(&p, "a", "b"));
	/* a plain RC QP of the application's, in error by the engine */
	cq = ibv_create_cq(p.cli->verbs, 4, NULL, NULL, 0);
	TEST_ASSERT(cq != NULL, "cq");
	ia.send_cq = ia.recv_cq = cq;
	own = ibv_create_qp(p.cli->pd, &ia);
	TEST_ASSERT(own != NULL, "qp: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_modify_qp(own, &ra, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS), 0);
	ra = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				   .dest_qp_num = p.srv->qp->qp_num, .max_dest_rd_atomic = 1,
				   .min_rnr_timer = 12,
				   .ah_attr = { .is_global = 1, .port_num = 1,
						.grh = { .hop_limit = 64 } } };
	ra.ah_attr.grh.dgid.raw[10] = ra.ah_attr.grh.dgid.raw[11] = 0xff;
	inet_pton(AF_INET, DEV_IP, &ra.ah_attr.grh.dgid.raw[12]);
	TEST_ASSERT_EQ(ibv_modify_qp(own, &ra, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	ra = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				   .rnr_retry = 7, .max_rd_atomic = 1 };
	TEST_ASSERT_EQ(ibv_modify_qp(own, &ra, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					     IBV_QP_MAX_QP_RD_ATOMIC), 0);
	sge.addr = (uintptr_t)buf;
	TEST_ASSERT_EQ(ibv_post_send(own, &wr, &bad), 0);
	for (int i = 0; i < 1000000 && n == 0; i++)
		n = ibv_poll_cq(cq, 1, &wc);
	TEST_ASSERT(n == 1 && wc.status == IBV_WC_LOC_PROT_ERR, "a bad lkey: LOC_PROT_ERR (%d)",
		    n == 1 ? (int)wc.status : -1);
	/* the connected client's QP moved to ERR by the application */
	TEST_ASSERT_EQ(ibv_modify_qp(p.cli->qp, &a, IBV_QP_STATE), 0);
	pf[0] = (struct pollfd){ .fd = p.cch->fd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = p.sch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(pf, 2, 500), 0);	/* neither end hears of it */
	/* and the connection closes as usual */
	TEST_ASSERT_EQ(rdma_disconnect(p.cli), 0);
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	TEST_ASSERT_EQ(rdma_disconnect(p.srv), 0);
	ibv_destroy_qp(own);
	ibv_destroy_cq(cq);
	pair_free(&p);
	return TEST_SUCCESS;
}

static int
test_reject_with_private_data(void)
{
	struct pair p;
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_event *ev;
	static const char why[] = "go away";

	CHECK(pair_setup(&p, 7002, 4));
	CHECK(pair_request(&p, &cp, NULL));
	TEST_ASSERT_EQ(rdma_reject(p.srv, why, sizeof(why)), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_REJECTED, &ev, WAIT_MS));
	TEST_ASSERT_EQ(ev->status, 28);		/* IBA: consumer defined */
	TEST_ASSERT(memcmp(ev->param.conn.private_data, why, sizeof(why)) == 0,
		    "the reject's private data arrives");
	rdma_ack_cm_event(ev);
	/* accepting what was rejected is refused */
	TEST_ASSERT(rdma_accept(p.srv, NULL) == -1 && errno == EINVAL, "accept after reject");
	pair_free(&p);
	return TEST_SUCCESS;
}

static int
test_no_listener_is_rejected_promptly(void)
{
	struct pair p;
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_event *ev;

	CHECK(pair_setup(&p, 7003, 4));
	/* a second client to a port nobody listens on */
	rdma_destroy_id(p.cli);
	CHECK(client_new(p.cch, &p.cli, 7099));
	TEST_ASSERT_EQ(pair_qp(&p, p.cli), 0);
	TEST_ASSERT_EQ(rdma_connect(p.cli, &cp), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_REJECTED, &ev, 2000));
	TEST_ASSERT_EQ(ev->status, 8);		/* IBA: invalid service ID, as Linux answers */
	rdma_ack_cm_event(ev);
	pair_free(&p);
	return TEST_SUCCESS;
}

static int
test_backlog_full_rejects(void)
{
	struct pair p;
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_id *second;

	CHECK(pair_setup(&p, 7004, 1));
	CHECK(pair_request(&p, &cp, NULL));
	/* not accepted yet: a second request overflows the backlog of 1 */
	CHECK(client_new(p.cch, &second, 7004));
	TEST_ASSERT_EQ(pair_qp(&p, second), 0);
	TEST_ASSERT_EQ(rdma_connect(second, &cp), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_REJECTED, NULL, WAIT_MS));
	rdma_destroy_qp(second);
	rdma_destroy_id(second);
	/* the first one is still there to accept */
	TEST_ASSERT_EQ(pair_qp(&p, p.srv), 0);
	TEST_ASSERT_EQ(rdma_accept(p.srv, NULL), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS));
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS));
	pair_free(&p);
	return TEST_SUCCESS;
}

/* rdma_post_recv(3): 0, or -1 with errno and nothing posted; to the SRQ when the id has one. */
static int
test_post_recv_seed_semantics(void)
{
	struct pair p;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	char buf[256];
	struct ibv_mr *mr;
	int n = 0;

	CHECK(pair_setup(&p, 7005, 4));
	TEST_ASSERT_EQ(rdma_create_srq(p.cli, NULL, &sa), 0);
	TEST_ASSERT(p.cli->srq != NULL, "rdma_create_srq sets id->srq");
	CHECK(pair_connect(&p, "srq", "ok"));
	TEST_ASSERT(p.cli->qp->srq == p.cli->srq, "the QP takes its receives from the id's SRQ");
	mr = rdma_reg_msgs(p.cli, buf, sizeof(buf));
	TEST_ASSERT(mr != NULL, "rdma_reg_msgs: %s", strerror(errno));
	/* fill the SRQ: each post succeeds until it is full, then -1 and ENOMEM */
	while (n < 64 && rdma_post_recv(p.cli, (void *)(uintptr_t)n, buf, 64, mr) == 0)
		n++;
	TEST_ASSERT(n >= (int)sa.attr.max_wr && n < 64, "posted %d into an SRQ of %u", n,
		    sa.attr.max_wr);
	TEST_ASSERT(rdma_post_recv(p.cli, NULL, buf, 64, mr) == -1 && errno == ENOMEM,
		    "a full SRQ: -1, errno %d", errno);
	rdma_dereg_mr(mr);
	rdma_disconnect(p.cli);
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	rdma_destroy_qp(p.cli);
	rdma_destroy_srq(p.cli);
	pair_free(&p);
	return TEST_SUCCESS;
}

static int
test_nonblocking_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in d = sin_of(DEV_IP, 7006);
	struct pollfd pf;

	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	TEST_ASSERT(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN, "empty: EAGAIN");
	TEST_ASSERT_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 2000), 0);
	pf = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, WAIT_MS), 1);
	TEST_ASSERT_EQ(rdma_get_cm_event(ch, &ev), 0);
	TEST_ASSERT_EQ(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	TEST_ASSERT_EQ(ev->status, 0);
	TEST_ASSERT_PTR_EQ(ev->id, id);
	rdma_ack_cm_event(ev);
	pf.revents = 0;
	TEST_ASSERT_EQ(poll(&pf, 1, 0), 0);
	TEST_ASSERT(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN, "drained: EAGAIN");
	TEST_ASSERT_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
	return TEST_SUCCESS;
}

/* Nobody answers ARP for the address: ADDR_ERROR (-ETIMEDOUT) after the time-out, not a hang. */
static int
test_unreachable_address_is_addr_error(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in d = sin_of("10.0.0.77", 7011);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct timespec t0, t1;
	double ms;

	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TEST_ASSERT_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 300), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ADDR_ERROR, &ev, WAIT_MS));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	TEST_ASSERT_EQ(ev->status, -ETIMEDOUT);
	TEST_ASSERT(ms >= 250 && ms < 2000, "ADDR_ERROR after %.0f ms for a 300 ms time-out", ms);
	rdma_ack_cm_event(ev);
	TEST_ASSERT(rdma_resolve_route(id, 100) == -1 && errno == EINVAL, "no route without an address");
	TEST_ASSERT_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
	return TEST_SUCCESS;
}

/* Multicast on a UD id: the join event, the QP attached, leave, and the errors. */
static int
test_multicast_join_and_leave(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in src = sin_of(DEV_IP, 0), grp = sin_of("239.9.9.9", 0);
	struct sockaddr_in uni = sin_of("10.0.0.5", 0), other = sin_of("239.9.9.10", 0);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id, *unbound;
	int ctx;

	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQ(rdma_create_id(ch, &unbound, NULL, RDMA_PS_UDP), 0);
	TEST_ASSERT(rdma_join_multicast(unbound, (struct sockaddr *)&grp, NULL) == -1 &&
		    errno == ENODEV, "join before the id has a device: errno %d", errno);
	rdma_destroy_id(unbound);
	TEST_ASSERT_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	TEST_ASSERT_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&grp, 500), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, WAIT_MS));	/* no ARP for a group */
	TEST_ASSERT_EQ(rdma_create_qp(id, NULL, &qa), 0);
	TEST_ASSERT(rdma_join_multicast(id, (struct sockaddr *)&uni, NULL) == -1 && errno == EINVAL,
		    "a unicast address: errno %d", errno);
	TEST_ASSERT_EQ(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_MULTICAST_JOIN, &ev, WAIT_MS));
	TEST_ASSERT_EQ(ev->status, 0);
	TEST_ASSERT_PTR_EQ(ev->param.ud.private_data, &ctx);
	TEST_ASSERT_EQ(ev->param.ud.qp_num, 0xffffff);
	TEST_ASSERT_EQ(ev->param.ud.qkey, RDMA_UDP_QKEY);
	TEST_ASSERT(ev->param.ud.ah_attr.is_global && ev->param.ud.ah_attr.grh.dgid.raw[10] == 0xff &&
		    ev->param.ud.ah_attr.grh.dgid.raw[12] == 239 &&
		    ev->param.ud.ah_attr.grh.dgid.raw[15] == 9, "the group's IPv4-mapped GID");
	rdma_ack_cm_event(ev);
	/* attached when the event was taken: detaching succeeds once, in the leave */
	TEST_ASSERT(rdma_leave_multicast(id, (struct sockaddr *)&other) == -1 && errno == EADDRNOTAVAIL,
		    "leaving a group not joined: errno %d", errno);
	TEST_ASSERT_EQ(rdma_leave_multicast(id, (struct sockaddr *)&grp), 0);
	TEST_ASSERT(ibv_detach_mcast(id->qp, &(union ibv_gid){ .raw = { [10] = 0xff, [11] = 0xff,
		    [12] = 239, [13] = 9, [14] = 9, [15] = 9 } }, 0) != 0, "the leave detached the QP");
	TEST_ASSERT(rdma_leave_multicast(id, (struct sockaddr *)&grp) == -1 && errno == EADDRNOTAVAIL,
		    "leaving twice");
	/* a join left before its event is taken attaches nothing */
	TEST_ASSERT_EQ(rdma_join_multicast(id, (struct sockaddr *)&other, NULL), 0);
	rdma_destroy_qp(id);
	TEST_ASSERT_EQ(rdma_destroy_id(id), 0);	/* leaves, drops the untaken event */
	rdma_destroy_event_channel(ch);
	return TEST_SUCCESS;
}

static int
test_bind_errors(void)
{
	struct rdma_cm_id *a, *b;
	struct sockaddr_in s = sin_of(DEV_IP, 7007), other = sin_of("192.0.2.9", 7007);
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(7007) };

	TEST_ASSERT_EQ(rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	TEST_ASSERT(rdma_bind_addr(b, (struct sockaddr *)&s) == -1 && errno == EADDRINUSE,
		    "a port in use: errno %d", errno);
	TEST_ASSERT(rdma_bind_addr(b, (struct sockaddr *)&other) == -1 && errno == EADDRNOTAVAIL,
		    "an address no device has: errno %d", errno);
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	TEST_ASSERT(rdma_bind_addr(b, (struct sockaddr *)&s6) == -1 && errno == EADDRNOTAVAIL,
		    "IPv6: errno %d", errno);
	TEST_ASSERT(rdma_create_id(NULL, &b, NULL, (enum rdma_port_space)0x777) == -1 &&
		    errno == EINVAL, "an unknown port space");
	TEST_ASSERT(rdma_connect(a, NULL) == -1 && errno == EINVAL, "connect before resolving");
	rdma_destroy_id(a);
	rdma_destroy_id(b);
	return TEST_SUCCESS;
}

/* The synchronous API: rdma_create_ep, rdma_listen, rdma_get_request, rdma_connect, rdma_accept. */
struct sync_srv {
	struct rdma_cm_id *listen, *id;
	int ret;
};

static void *
sync_server(void *arg)
{
	struct sync_srv *s = arg;

	s->ret = rdma_get_request(s->listen, &s->id);
	if (s->ret == 0)
		s->ret = rdma_accept(s->id, NULL);
	return NULL;
}

static int
test_sync_endpoints(void)
{
	struct sockaddr_in l = sin_of(DEV_IP, 7008), d = sin_of(DEV_IP, 7008);
	struct rdma_addrinfo pa = { .ai_flags = RAI_PASSIVE, .ai_family = AF_INET,
				    .ai_qp_type = IBV_QPT_RC, .ai_port_space = RDMA_PS_TCP,
				    .ai_src_len = sizeof(l), .ai_src_addr = (struct sockaddr *)&l };
	struct rdma_addrinfo ca = { .ai_family = AF_INET, .ai_qp_type = IBV_QPT_RC,
				    .ai_port_space = RDMA_PS_TCP, .ai_dst_len = sizeof(d),
				    .ai_dst_addr = (struct sockaddr *)&d };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct sync_srv s = { 0 };
	struct rdma_cm_id *cli;
	pthread_t t;

	TEST_ASSERT_EQ(rdma_create_ep(&s.listen, &pa, NULL, &qa), 0);
	TEST_ASSERT_EQ(rdma_listen(s.listen, 2), 0);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, sync_server, &s), 0);
	qa.qp_type = IBV_QPT_RC;
	TEST_ASSERT_EQ(rdma_create_ep(&cli, &ca, NULL, &qa), 0);
	TEST_ASSERT(cli->qp != NULL && cli->verbs != NULL, "an active endpoint has its QP");
	TEST_ASSERT_EQ(rdma_connect(cli, NULL), 0);	/* returns once established */
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(s.ret, 0);
	TEST_ASSERT(s.id->qp != NULL, "rdma_get_request made the QP rdma_create_ep was given");
	CHECK(transfer(cli, s.id, 100));
	TEST_ASSERT_EQ(rdma_disconnect(cli), 0);
	rdma_destroy_ep(cli);
	rdma_destroy_ep(s.id);
	rdma_destroy_ep(s.listen);
	return TEST_SUCCESS;
}

/*
 * XRC through the CM, as rdma_xserver / rdma_xclient use it: RDMA_PS_IB, the
 * passive endpoint an XRC_RECV QP (in the device's XRC domain), its XRC SRQ
 * made by rdma_create_srq (with a CQ and channel), the SRQ number sent in
 * the REP's private data; the active endpoint an XRC_SEND QP that SENDs to
 * that SRQ. The server thread gets the request, makes the SRQ, posts a
 * receive and accepts.
 */
struct xrc_srv {
	struct rdma_cm_id *listen, *id;
	struct ibv_mr *mr;
	uint8_t buf[64];
	__be32 srqn;
	enum ibv_qp_type req_qpt;	/* the request's id's QP type */
	int ret, line;
};

#define XRC_FAIL(s) do { (s)->line = __LINE__; goto out; } while (0)

static void *
xrc_server(void *arg)
{
	struct xrc_srv *s = arg;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct rdma_conn_param cp = { 0 };
	uint32_t n;

	s->ret = -1;
	if (rdma_get_request(s->listen, &s->id) != 0)
		XRC_FAIL(s);
	s->req_qpt = s->id->qp_type;
	if (s->id->qp == NULL || s->id->qp->qp_type != IBV_QPT_XRC_RECV || s->id->pd == NULL)
		XRC_FAIL(s);
	if (rdma_create_srq(s->id, NULL, &sa) != 0 || s->id->srq == NULL || s->id->recv_cq == NULL ||
	    s->id->recv_cq_channel == NULL)
		XRC_FAIL(s);
	if (ibv_get_srq_num(s->id->srq, &n) != 0)
		XRC_FAIL(s);
	s->srqn = htobe32(n);
	s->mr = rdma_reg_msgs(s->id, s->buf, sizeof(s->buf));
	if (s->mr == NULL || rdma_post_recv(s->id, (void *)0x66, s->buf, sizeof(s->buf), s->mr) != 0)
		XRC_FAIL(s);
	cp.private_data = &s->srqn;
	cp.private_data_len = sizeof(s->srqn);
	if (rdma_accept(s->id, &cp) != 0)
		XRC_FAIL(s);
	s->ret = 0;
out:
	return NULL;
}

static int
xrc_addrinfo(struct rdma_addrinfo *ai, struct sockaddr_in *sa, bool passive, enum ibv_qp_type t)
{
	memset(ai, 0, sizeof(*ai));
	ai->ai_family = AF_INET;
	ai->ai_qp_type = t;
	ai->ai_port_space = RDMA_PS_IB;
	if (passive) {
		ai->ai_flags = RAI_PASSIVE;
		ai->ai_src_len = sizeof(*sa);
		ai->ai_src_addr = (struct sockaddr *)sa;
	} else {
		ai->ai_dst_len = sizeof(*sa);
		ai->ai_dst_addr = (struct sockaddr *)sa;
	}
	return 0;
}

static int
test_xrc_endpoints_send_into_srq(void)
{
	struct sockaddr_in l = sin_of(DEV_IP, 7011), d = sin_of(DEV_IP, 7011);
	struct ibv_qp_init_attr sqa = { .cap = { .max_recv_wr = 1, .max_recv_sge = 1 } };
	struct ibv_qp_init_attr cqa = { .cap = { .max_send_wr = 1, .max_send_sge = 1 },
					.sq_sig_all = 1 };
	struct ibv_send_wr wr = { .wr_id = 0x55, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE }, *bad;
	const char msg[16] = "xrc over the cm";
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
	struct rdma_addrinfo pa, ca;
	struct xrc_srv s = { 0 };
	struct rdma_cm_id *cli;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc;
	pthread_t t;

	xrc_addrinfo(&pa, &l, true, IBV_QPT_XRC_RECV);
	xrc_addrinfo(&ca, &d, false, IBV_QPT_XRC_SEND);
	TEST_ASSERT_EQ(rdma_create_ep(&s.listen, &pa, NULL, &sqa), 0);
	TEST_ASSERT_EQ(rdma_listen(s.listen, 2), 0);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, xrc_server, &s), 0);
	TEST_ASSERT_EQ(rdma_create_ep(&cli, &ca, NULL, &cqa), 0);
	TEST_ASSERT(cli->qp != NULL && cli->qp->qp_type == IBV_QPT_XRC_SEND, "an XRC_SEND QP");
	TEST_ASSERT(cli->send_cq != NULL && cli->recv_cq == NULL, "a send CQ only");
	TEST_ASSERT_EQ(rdma_connect(cli, NULL), 0);	/* returns once established */
	pthread_join(t, NULL);
	TEST_ASSERT(s.ret == 0, "server failed at test_cm.c:%d: %s", s.line, strerror(errno));
	TEST_ASSERT_EQ(s.req_qpt, IBV_QPT_XRC_RECV);
	TEST_ASSERT(cli->event != NULL && cli->event->event == RDMA_CM_EVENT_ESTABLISHED,
		    "the synchronous connect keeps its event");
	/* the REP named the target QP (in its EE context field) and carried the SRQ number */
	TEST_ASSERT_EQ(cli->event->param.conn.qp_num, s.id->qp->qp_num);
	TEST_ASSERT(cli->event->param.conn.private_data_len >= sizeof(s.srqn) &&
		    memcmp(cli->event->param.conn.private_data, &s.srqn, sizeof(s.srqn)) == 0,
		    "the SRQ number in the REP's private data");
	TEST_ASSERT_EQ(cli->event->param.conn.srq, 1);
	/* both QPs in RTS, the initiator sending to the target's QPN */
	TEST_ASSERT_EQ(ibv_query_qp(cli->qp, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_RTS);
	TEST_ASSERT_EQ(qa.dest_qp_num, s.id->qp->qp_num);
	TEST_ASSERT_EQ(ibv_query_qp(s.id->qp, &qa, IBV_QP_STATE, &qia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_RTS);

	wr.sg_list = &sge;
	wr.qp_type.xrc.remote_srqn = be32toh(s.srqn);
	TEST_ASSERT_EQ(ibv_post_send(cli->qp, &wr, &bad), 0);
	TEST_ASSERT_EQ(rdma_get_send_comp(cli, &wc), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 0x55);
	TEST_ASSERT_EQ(rdma_get_recv_comp(s.id, &wc), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.wr_id, 0x66);
	TEST_ASSERT_EQ(wc.byte_len, sizeof(msg));
	TEST_ASSERT_EQ(wc.qp_num, s.id->qp->qp_num);
	TEST_ASSERT(memcmp(s.buf, msg, sizeof(msg)) == 0,
		    "the bytes that arrived in the SRQ's buffer");

	TEST_ASSERT_EQ(rdma_disconnect(cli), 0);
	rdma_dereg_mr(s.mr);
	rdma_destroy_ep(cli);
	rdma_destroy_ep(s.id);	/* the QP, then the SRQ with its CQ */
	rdma_destroy_ep(s.listen);
	return TEST_SUCCESS;
}

/*
 * XRC meets XRC only (the kernel's rdma_cm matches a REQ's QP type to its
 * listener's): an XRC_SEND connect to an RC listener of RDMA_PS_IB, and an
 * RC connect to an XRC listener, are refused (REJ "invalid transport type").
 */
static int
test_xrc_and_rc_do_not_connect(void)
{
	struct sockaddr_in l = sin_of(DEV_IP, 7012), d = sin_of(DEV_IP, 7012);
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_addrinfo pa, ca;
	struct rdma_cm_id *lid, *cli;

	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr a = qa;

		xrc_addrinfo(&pa, &l, true, i == 0 ? IBV_QPT_RC : IBV_QPT_XRC_RECV);
		xrc_addrinfo(&ca, &d, false, i == 0 ? IBV_QPT_XRC_SEND : IBV_QPT_RC);
		TEST_ASSERT_EQ(rdma_create_ep(&lid, &pa, NULL, &a), 0);
		TEST_ASSERT_EQ(rdma_listen(lid, 2), 0);
		a = qa;
		TEST_ASSERT_EQ(rdma_create_ep(&cli, &ca, NULL, &a), 0);
		TEST_ASSERT(rdma_connect(cli, NULL) == -1 && errno == ECONNREFUSED,
			    "case %d: connect refused (%s)", i, strerror(errno));
		TEST_ASSERT(cli->event != NULL && cli->event->event == RDMA_CM_EVENT_REJECTED,
			    "case %d: REJECTED", i);
		TEST_ASSERT_EQ(cli->event->status, DROCE_CM_REJ_INVALID_TRANSPORT_TYPE);
		rdma_destroy_ep(cli);
		rdma_destroy_ep(lid);
	}
	return TEST_SUCCESS;
}

/* rdma_create_srq_ex: an XRC SRQ given no domain nor CQ gets the device's and a new one. */
static int
test_xrc_srq_ex_defaults(void)
{
	struct sockaddr_in l = sin_of(DEV_IP, 7013);
	struct ibv_srq_init_attr_ex sx = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE, .srq_type = IBV_SRQT_XRC,
	};
	struct ibv_srq_init_attr_ex bad = sx;
	struct rdma_addrinfo pa;
	struct rdma_cm_id *id;
	uint32_t n;

	xrc_addrinfo(&pa, &l, true, IBV_QPT_XRC_RECV);
	TEST_ASSERT_EQ(rdma_create_ep(&id, &pa, NULL, NULL), 0);
	bad.comp_mask = 0;
	TEST_ASSERT(rdma_create_srq_ex(id, &bad) == -1 && errno == EINVAL, "no type: EINVAL");
	TEST_ASSERT_EQ(rdma_create_srq_ex(id, &sx), 0);
	TEST_ASSERT(sx.xrcd != NULL && sx.cq == id->recv_cq && sx.pd == id->pd &&
		    (sx.comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) ==
		    (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ),
		    "the device's domain, a CQ of the id's, its PD");
	TEST_ASSERT_EQ(ibv_get_srq_num(id->srq, &n), 0);
	TEST_ASSERT(id->srq->srq_context == NULL, "srq_context as given");
	rdma_destroy_srq(id);
	TEST_ASSERT(id->srq == NULL && id->recv_cq == NULL, "the SRQ and its CQ gone");
	rdma_destroy_ep(id);
	return TEST_SUCCESS;
}

/*
 * MADs made by hand, sent to the device's QP1 from a UD QP of the test: a
 * REQ sent twice (a retransmission: same communication ID and TID) is one
 * connection request; malformed MADs before it are dropped and leave the
 * CM working.
 */
struct mad_tx {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t buf[DROCE_CM_MAD_LEN];
};

static int
mad_tx_up(struct mad_tx *t, struct rdma_cm_id *on)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	/* a Q_Key with its top bit set in a WR means "the QP's own" (IBA 10.2.4): the QP has it */
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = DROCE_CM_QP1_QKEY };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	in_addr_t ip = inet_addr(DEV_IP);

	t->cq = ibv_create_cq(on->verbs, 8, NULL, NULL, 0);
	TEST_ASSERT(t->cq != NULL, "cq");
	ia.send_cq = ia.recv_cq = t->cq;
	t->qp = ibv_create_qp(on->pd, &ia);
	TEST_ASSERT(t->qp != NULL, "ud qp: %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_modify_qp(t->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQ(ibv_modify_qp(t->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQ(ibv_modify_qp(t->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	aa.grh.dgid.raw[10] = aa.grh.dgid.raw[11] = 0xff;
	memcpy(&aa.grh.dgid.raw[12], &ip, 4);
	t->ah = ibv_create_ah(on->pd, &aa);
	t->mr = ibv_reg_mr(on->pd, t->buf, sizeof(t->buf), 0);
	TEST_ASSERT(t->ah && t->mr, "ah, mr");
	return 0;
}

static int
mad_send(struct mad_tx *t, const void *mad, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)t->buf, .length = (uint32_t)len, .lkey = t->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = t->ah, .remote_qpn = 1,
					     .remote_qkey = DROCE_CM_QP1_QKEY } }, *bad;
	struct ibv_wc wc;
	int n = 0;

	memcpy(t->buf, mad, len);
	TEST_ASSERT_EQ(ibv_post_send(t->qp, &wr, &bad), 0);
	for (int i = 0; i < 100000 && n == 0; i++)
		n = ibv_poll_cq(t->cq, 1, &wc);
	TEST_ASSERT(n == 1 && wc.status == IBV_WC_SUCCESS, "send completion");
	return 0;
}

static void
mad_tx_down(struct mad_tx *t)
{
	if (t->ah)
		ibv_destroy_ah(t->ah);
	if (t->qp)
		ibv_destroy_qp(t->qp);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->cq)
		ibv_destroy_cq(t->cq);
}

/*
 * In @mad, a REQ from the device's own IP (port 5555, private data "x") for
 * @port, with communication ID @comm_id, TID @tid and the local ACK
 * time-out @ack_timeout (the path's packet lifetime plus one).
 */
static int
req_build(uint8_t *mad, uint32_t comm_id, uint64_t tid, uint16_t port, uint8_t ack_timeout)
{
	struct droce_cm_ip_hdr ih = { .version = DROCE_CM_IP_HDR_VERSION, .ip_version = 4,
				      .src_port = 5555 };
	struct droce_cm_msg m = { 0 };
	in_addr_t ip = inet_addr(DEV_IP);
	int len;

	m.hdr = (struct droce_cm_mad_hdr){ .base_version = 1, .mgmt_class = DROCE_CM_MGMT_CLASS,
		.class_version = DROCE_CM_CLASS_VERSION, .method = DROCE_CM_METHOD_SEND,
		.tid = tid, .attr_id = DROCE_CM_ATTR_REQ };
	m.req.local_comm_id = comm_id;
	m.req.service_id = droce_cm_service_id(DROCE_CM_PS_TCP, port);
	m.req.primary.local_ack_timeout = ack_timeout;
	m.req.local_qpn = 0x99;
	m.req.responder_resources = m.req.initiator_depth = 1;
	m.req.remote_cm_response_timeout = m.req.local_cm_response_timeout = 16;
	m.req.starting_psn = 0x123;
	m.req.retry_count = m.req.rnr_retry_count = 7;
	m.req.max_cm_retries = 15;
	m.req.pkey = 0xffff;
	m.req.path_mtu = IBV_MTU_1024;
	m.req.primary.local_lid = m.req.primary.remote_lid = 0xffff;
	m.req.primary.hop_limit = 64;
	memcpy(ih.src_addr + 12, &ip, 4);
	memcpy(ih.dst_addr + 12, &ip, 4);
	len = droce_cm_ip_hdr_encode(&ih, "x", 2, m.req.private_data, sizeof(m.req.private_data));
	TEST_ASSERT(len > 0, "ip header");
	m.req.private_data_len = (uint32_t)len;
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, DROCE_CM_MAD_LEN), DROCE_CM_MAD_LEN);
	return 0;
}

static int
test_repeated_req_is_one_request_and_bad_mads_drop(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lid, *req;
	struct mad_tx t = { 0 };
	uint8_t mad[DROCE_CM_MAD_LEN];

	TEST_ASSERT(ch != NULL, "channel");
	CHECK(listener_new(ch, &lid, NULL, 7010, 4));
	CHECK(mad_tx_up(&t, lid));
	CHECK(req_build(mad, 0xc0ffee, 0x7e57, 7010, 0));

	/* malformed first: garbage, a wrong class, a cut MAD */
	{
		uint8_t junk[DROCE_CM_MAD_LEN];

		memset(junk, 0xa5, sizeof(junk));
		CHECK(mad_send(&t, junk, sizeof(junk)));
		memcpy(junk, mad, sizeof(junk));
		junk[1] = 0x04;		/* the performance class */
		CHECK(mad_send(&t, junk, sizeof(junk)));
		CHECK(mad_send(&t, mad, 40));
	}
	/* the REQ, and the same REQ again as its sender's timer would send it */
	CHECK(mad_send(&t, mad, sizeof(mad)));
	CHECK(wait_ev(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, WAIT_MS));
	TEST_ASSERT_EQ(ev->param.conn.qp_num, 0x99);
	TEST_ASSERT(strcmp(ev->param.conn.private_data, "x") == 0, "private data after the header");
	TEST_ASSERT_EQ(ntohs(rdma_get_dst_port(ev->id)), 5555);
	CHECK(mad_send(&t, mad, sizeof(mad)));
	{
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };

		TEST_ASSERT_EQ(poll(&p, 1, 500), 0);	/* no second request */
	}
	TEST_ASSERT_EQ(rdma_reject(ev->id, NULL, 0), 0);
	req = ev->id;
	rdma_ack_cm_event(ev);
	rdma_destroy_id(req);
	mad_tx_down(&t);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return TEST_SUCCESS;
}

/*
 * TimeWait (IBA 12.9.6) and RDMA_CM_EVENT_TIMEWAIT_EXIT, as the kernel's
 * rdma_cm reports it: after DISCONNECTED, on both ends, once the path's ACK
 * time-out has passed (4.096 us x 2^14 = 67 ms by default; with
 * RDMA_OPTION_ID_ACK_TIMEOUT 18 on the client, which its REQ carries to the
 * server, 1.07 s on both ends), whichever end disconnects first. After it,
 * rdma_disconnect still returns 0 and nothing more is reported.
 */
static int
disconnect_then_timewait(struct pair *p, struct rdma_cm_id *first, uint32_t tw_ms)
{
	struct rdma_event_channel *chs[2] = { p->cch, p->sch };
	struct rdma_cm_event *ev;
	struct timespec t0;
	struct pollfd pf;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	TEST_ASSERT_EQ(rdma_disconnect(first), 0);
	for (int i = 0; i < 2; i++) {
		CHECK(wait_ev(chs[i], RDMA_CM_EVENT_DISCONNECTED, &ev, WAIT_MS));
		TEST_ASSERT_EQ(ev->status, 0);
		rdma_ack_cm_event(ev);
	}
	for (int i = 0; i < 2; i++) {
		double ms;

		CHECK(wait_ev(chs[i], RDMA_CM_EVENT_TIMEWAIT_EXIT, &ev, WAIT_MS + (int)tw_ms));
		ms = ms_since(&t0);
		TEST_ASSERT_EQ(ev->status, 0);
		TEST_ASSERT_PTR_EQ(ev->id, i == 0 ? p->cli : p->srv);
		rdma_ack_cm_event(ev);
		/* never before the period: it starts after rdma_disconnect was called */
		TEST_ASSERT(ms >= tw_ms, "TIMEWAIT_EXIT %.0f ms after rdma_disconnect, before %u ms",
			    ms, tw_ms);
	}
	TEST_ASSERT_EQ(rdma_disconnect(p->cli), 0);
	TEST_ASSERT_EQ(rdma_disconnect(p->srv), 0);
	pf = (struct pollfd){ .fd = p->cch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, 200), 0);
	pf.fd = p->sch->fd;
	TEST_ASSERT_EQ(poll(&pf, 1, 0), 0);
	return 0;
}

static int
test_timewait_exit_follows_disconnected(void)
{
	uint8_t t18 = 18;
	struct pair p;

	/* the client disconnects */
	CHECK(pair_setup(&p, 7020, 4));
	CHECK(pair_connect(&p, "a", "b"));
	CHECK(disconnect_then_timewait(&p, p.cli, 67));
	pair_free(&p);
	/* the server disconnects */
	CHECK(pair_setup(&p, 7021, 4));
	CHECK(pair_connect(&p, "a", "b"));
	CHECK(disconnect_then_timewait(&p, p.srv, 67));
	pair_free(&p);
	/* a longer ACK time-out, a longer TimeWait on both ends */
	CHECK(pair_setup(&p, 7022, 4));
	TEST_ASSERT_EQ(rdma_set_option(p.cli, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t18,
				       sizeof(t18)), 0);
	CHECK(pair_connect(&p, "a", "b"));
	CHECK(disconnect_then_timewait(&p, p.cli, 1073));
	pair_free(&p);
	return TEST_SUCCESS;
}

/*
 * An id destroyed in TimeWait reports nothing, whether its TIMEWAIT_EXIT
 * was not due yet (the client, destroyed at once) or queued and not taken
 * (the server, destroyed 300 ms later); the peer's TimeWait is its own.
 */
static int
test_destroy_in_timewait_reports_nothing(void)
{
	struct pollfd pf;
	struct pair p;

	CHECK(pair_setup(&p, 7023, 4));
	CHECK(pair_connect(&p, "a", "b"));
	TEST_ASSERT_EQ(rdma_disconnect(p.cli), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	rdma_destroy_qp(p.cli);
	TEST_ASSERT_EQ(rdma_destroy_id(p.cli), 0);
	p.cli = NULL;
	CHECK(wait_ev(p.sch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	usleep(300 * 1000);	/* the server's TIMEWAIT_EXIT is queued by now */
	pf = (struct pollfd){ .fd = p.sch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, 0), 1);
	rdma_destroy_qp(p.srv);
	TEST_ASSERT_EQ(rdma_destroy_id(p.srv), 0);
	p.srv = NULL;
	pf.fd = p.cch->fd;
	TEST_ASSERT_EQ(poll(&pf, 1, 300), 0);	/* nothing for the destroyed client */
	/* the server's queued event went with its id: the listener's channel is empty */
	TEST_ASSERT_EQ(fcntl(p.sch->fd, F_SETFL, fcntl(p.sch->fd, F_GETFL) | O_NONBLOCK), 0);
	{
		struct rdma_cm_event *ev;

		errno = 0;
		TEST_ASSERT_EQ(rdma_get_cm_event(p.sch, &ev), -1);
		TEST_ASSERT_EQ(errno, EAGAIN);
	}
	pair_free(&p);
	return TEST_SUCCESS;
}

/*
 * A stale REQ (its communication ID that of a connection in TimeWait) is
 * no new connection: the CM answers it with a REJ "stale connection" and
 * the listener hears nothing; once TimeWait is over the same ID may
 * connect again. The connection is made by hand from a UD QP of the test:
 * its REQ asks for an ACK time-out of 18 (TimeWait 1.07 s); the server
 * accepts without a QP, rdma_notify establishes it, and its
 * rdma_disconnect's DREQ, sent to the device's own QP1, is answered with a
 * DREP (a DREQ for an unknown connection gets one) that closes it.
 */
static int
test_stale_req_in_timewait_is_no_connection(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .qp_num = 0x123, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lid, *srv;
	struct mad_tx t = { 0 };
	uint8_t mad[DROCE_CM_MAD_LEN];
	struct pollfd pf;

	TEST_ASSERT(ch != NULL, "channel");
	CHECK(listener_new(ch, &lid, NULL, 7024, 4));
	CHECK(mad_tx_up(&t, lid));
	CHECK(req_build(mad, 0x5a1e, 0x100, 7024, 18));
	CHECK(mad_send(&t, mad, sizeof(mad)));
	CHECK(wait_ev(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, WAIT_MS));
	srv = ev->id;
	rdma_ack_cm_event(ev);
	TEST_ASSERT_EQ(rdma_accept(srv, &cp), 0);
	TEST_ASSERT_EQ(rdma_notify(srv, IBV_EVENT_COMM_EST), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS));
	TEST_ASSERT_EQ(rdma_disconnect(srv), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_DISCONNECTED, NULL, WAIT_MS));
	/* in TimeWait: the same comm ID, a new TID */
	CHECK(req_build(mad, 0x5a1e, 0x101, 7024, 18));
	CHECK(mad_send(&t, mad, sizeof(mad)));
	pf = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	TEST_ASSERT_EQ(poll(&pf, 1, 300), 0);	/* no CONNECT_REQUEST */
	CHECK(wait_ev(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL, WAIT_MS));
	/* out of it: the ID is free again */
	CHECK(req_build(mad, 0x5a1e, 0x102, 7024, 18));
	CHECK(mad_send(&t, mad, sizeof(mad)));
	CHECK(wait_ev(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, WAIT_MS));
	TEST_ASSERT(ev->id != srv, "a new request id");
	TEST_ASSERT_EQ(rdma_reject(ev->id, NULL, 0), 0);
	{
		struct rdma_cm_id *again = ev->id;

		rdma_ack_cm_event(ev);
		rdma_destroy_id(again);
	}
	rdma_destroy_id(srv);
	mad_tx_down(&t);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return TEST_SUCCESS;
}

static struct sockaddr_in6
sin6_of(const char *ip, uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	inet_pton(AF_INET6, ip, &s.sin6_addr);
	return s;
}

/*
 * IPv6 over droce, whose devices have IPv4 addresses only: binding to an
 * IPv6 address fails with EADDRNOTAVAIL (no device has it), resolving one
 * ends in ADDR_ERROR with -ENODEV (no device has a GID to reach it from),
 * as the kernel's rdma_cm answers on a host whose RDMA devices have no
 * IPv6 GID; the synchronous path (rdma_getaddrinfo, rdma_create_ep) fails
 * with ENODEV. IPv4-mapped addresses are their IPv4 address: a listener
 * bound to ::ffff:10.0.0.1 and a client resolving it connect; :: is the
 * wildcard, unless the id is AF_ONLY.
 */
static int
test_ipv6_addresses(void)
{
	struct sockaddr_in6 v6 = sin6_of("2001:db8::1", 7030), lo6 = sin6_of("::1", 7030);
	struct sockaddr_in6 any6 = sin6_of("::", 7031), mapped = sin6_of("::ffff:" DEV_IP, 7032);
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *rai = NULL;
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *a, *b, *ep = NULL;
	struct rdma_cm_event *ev;
	struct pair p;
	int one = 1;

	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQ(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	TEST_ASSERT(rdma_bind_addr(a, (struct sockaddr *)&v6) == -1 && errno == EADDRNOTAVAIL,
		    "bind 2001:db8::1: errno %d", errno);
	TEST_ASSERT(rdma_bind_addr(a, (struct sockaddr *)&lo6) == -1 && errno == EADDRNOTAVAIL,
		    "bind ::1: errno %d", errno);
	/* resolving an IPv6 destination: accepted, then ADDR_ERROR, never a hang */
	TEST_ASSERT_EQ(rdma_resolve_addr(a, NULL, (struct sockaddr *)&v6, 1000), 0);
	CHECK(wait_ev(ch, RDMA_CM_EVENT_ADDR_ERROR, &ev, WAIT_MS));
	TEST_ASSERT_EQ(ev->status, -ENODEV);
	rdma_ack_cm_event(ev);
	/* an IPv6 source: the bind's error, synchronously */
	TEST_ASSERT_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT(rdma_resolve_addr(b, (struct sockaddr *)&lo6, (struct sockaddr *)&v6,
				      1000) == -1 && errno == EADDRNOTAVAIL,
		    "resolve from ::1: errno %d", errno);
	rdma_destroy_id(b);
	/* ::, the wildcard; with AF_ONLY, IPv6 only: no device */
	TEST_ASSERT_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_bind_addr(b, (struct sockaddr *)&any6), 0);
	TEST_ASSERT_EQ(ntohs(rdma_get_src_port(b)), 7031);
	rdma_destroy_id(b);
	TEST_ASSERT_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one,
				       sizeof(one)), 0);
	TEST_ASSERT(rdma_bind_addr(b, (struct sockaddr *)&any6) == -1 && errno == EADDRNOTAVAIL,
		    "bind :: AF_ONLY: errno %d", errno);
	rdma_destroy_id(b);
	rdma_destroy_id(a);
	rdma_destroy_event_channel(ch);

	/* the synchronous path: rdma_getaddrinfo gives the IPv6 address, rdma_create_ep fails */
	TEST_ASSERT_EQ(rdma_getaddrinfo("2001:db8::1", "7033", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET6);
	errno = 0;
	TEST_ASSERT(rdma_create_ep(&ep, rai, NULL, &qa) == -1 && errno == ENODEV,
		    "rdma_create_ep to 2001:db8::1: errno %d", errno);
	rdma_freeaddrinfo(rai);

	/* IPv4-mapped addresses: a connection */
	memset(&p, 0, sizeof(p));
	p.qa = (struct ibv_qp_init_attr){
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	p.sch = rdma_create_event_channel();
	p.cch = rdma_create_event_channel();
	TEST_ASSERT(p.sch && p.cch, "channels");
	TEST_ASSERT_EQ(rdma_create_id(p.sch, &p.listen, &p, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_bind_addr(p.listen, (struct sockaddr *)&mapped), 0);
	TEST_ASSERT(p.listen->verbs != NULL, "bound to the device");
	TEST_ASSERT_EQ(rdma_get_local_addr(p.listen)->sa_family, AF_INET);
	TEST_ASSERT_EQ(((struct sockaddr_in *)rdma_get_local_addr(p.listen))->sin_addr.s_addr,
		       inet_addr(DEV_IP));
	TEST_ASSERT_EQ(rdma_listen(p.listen, 4), 0);
	TEST_ASSERT_EQ(rdma_create_id(p.cch, &p.cli, NULL, RDMA_PS_TCP), 0);
	TEST_ASSERT_EQ(rdma_resolve_addr(p.cli, NULL, (struct sockaddr *)&mapped, 2000), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, WAIT_MS));
	TEST_ASSERT_EQ(rdma_resolve_route(p.cli, 2000), 0);
	CHECK(wait_ev(p.cch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, WAIT_MS));
	CHECK(pair_connect(&p, "v4", "mapped"));
	CHECK(transfer(p.cli, p.srv, 100));
	pair_free(&p);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_repeated_req_is_one_request_and_bad_mads_drop),
	TEST_CASE(test_connect_send_disconnect),
	TEST_CASE(test_reject_with_private_data),
	TEST_CASE(test_no_listener_is_rejected_promptly),
	TEST_CASE(test_backlog_full_rejects),
	TEST_CASE(test_post_recv_seed_semantics),
	TEST_CASE(test_nonblocking_channel),
	TEST_CASE(test_unreachable_address_is_addr_error),
	TEST_CASE(test_multicast_join_and_leave),
	TEST_CASE(test_bind_errors),
	TEST_CASE(test_sync_endpoints),
	TEST_CASE(test_xrc_endpoints_send_into_srq),
	TEST_CASE(test_xrc_and_rc_do_not_connect),
	TEST_CASE(test_xrc_srq_ex_defaults),
	TEST_CASE(test_vanished_peer_is_disconnected),
	TEST_CASE(test_application_qp_error_is_no_disconnect),
	TEST_CASE(test_timewait_exit_follows_disconnected),
	TEST_CASE(test_destroy_in_timewait_reports_nothing),
	TEST_CASE(test_stale_req_in_timewait_is_no_connection),
	TEST_CASE(test_ipv6_addresses),
};

int
main(void)
{
	if (getenv("DROCE_EAL") == NULL) {
		fprintf(stderr, "DROCE_EAL is not set\n");
		return 1;
	}
	return DROCE_TEST_MAIN("cm", cases, NULL, NULL);
}
