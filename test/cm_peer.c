/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A connection manager peer for test/run_dropin_rdmacm.sh, over the drop-in
 * librdmacm: what Debian's programs do not do.
 *   cm_peer server <ip> <port>: accepts one connection, then waits (10 s at
 *     most) for RDMA_CM_EVENT_DISCONNECTED; prints "disconnected" and exits 0.
 *   cm_peer client <ip> <port>: connects, prints "established", and exits
 *     without rdma_disconnect or rdma_destroy_id: the CM must tell the
 *     server all the same.
 *   cm_peer client-kill <ip> <port>: connects, prints "established", posts
 *     no receive (the server's SEND meets RNR NAKs), and 1 s later SIGKILLs
 *     itself: no handler runs, no DREQ leaves.
 *   cm_peer server-send <ip> <port>: accepts one connection, posts a SEND
 *     (rnr_retry 7: it waits for a receive while the client lives), and
 *     without rdma_disconnect waits for its completion and for
 *     RDMA_CM_EVENT_DISCONNECTED, 20 s at most; prints both, with the time
 *     between them, then "rdma_disconnect: 0" if rdma_disconnect succeeds
 *     and reports nothing more within 500 ms; exits 0 if all of it held.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

static struct rdma_cm_event *
next(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(ch, &ev) != 0)
		return NULL;
	return ev;
}

static int
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t, struct rdma_cm_id **id, int ms)
{
	struct rdma_cm_event *ev = next(ch, ms);

	if (ev == NULL) {
		fprintf(stderr, "cm_peer: no %s within %d ms\n", rdma_event_str(t), ms);
		return -1;
	}
	if (ev->event != t) {
		fprintf(stderr, "cm_peer: %s (status %d), expected %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(t));
		rdma_ack_cm_event(ev);
		return -1;
	}
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return 0;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * server-send, once established on @conn: a SEND that the client never
 * receives, then its completion and DISCONNECTED with no rdma_disconnect.
 */
static int
send_until_disconnected(struct rdma_event_channel *ch, struct rdma_cm_id *conn)
{
	static char buf[16] = "anyone there?";
	struct ibv_mr *mr = rdma_reg_msgs(conn, buf, sizeof(buf));
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	double t0 = now_ms(), t_wc = 0, t_dis = 0;
	struct rdma_cm_event *ev;
	struct ibv_wc wc;

	if (mr == NULL || rdma_post_send(conn, NULL, buf, sizeof(buf), mr, IBV_SEND_SIGNALED)) {
		perror("cm_peer: rdma_reg_msgs/rdma_post_send");
		return 1;
	}
	while ((t_wc == 0 || t_dis == 0) && now_ms() - t0 < 20000) {
		if (t_wc == 0 && ibv_poll_cq(conn->send_cq, 1, &wc) == 1) {
			t_wc = now_ms();
			printf("send completion: %s\n", ibv_wc_status_str(wc.status));
		}
		if (t_dis == 0 && poll(&p, 1, 10) == 1) {
			if (rdma_get_cm_event(ch, &ev) != 0)
				return 1;
			printf("event: %s\n", rdma_event_str(ev->event));
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
				t_dis = now_ms();
			rdma_ack_cm_event(ev);
		}
	}
	fflush(stdout);
	if (t_wc == 0 || t_dis == 0) {
		fprintf(stderr, "cm_peer: no %s within 20 s\n", t_wc == 0 ? "completion" : "DISCONNECTED");
		return 1;
	}
	printf("disconnected %.0f ms after the send, %.0f ms after its completion\n",
	       t_dis - t0, t_dis - t_wc);
	if (rdma_disconnect(conn) != 0) {
		perror("cm_peer: rdma_disconnect");
		return 1;
	}
	printf("rdma_disconnect: 0\n");
	/* the end of TimeWait (67 ms by default), then nothing more */
	if (poll(&p, 1, 5000) != 1 || rdma_get_cm_event(ch, &ev) != 0) {
		fprintf(stderr, "cm_peer: no event within 5 s of rdma_disconnect\n");
		return 1;
	}
	printf("event: %s\n", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	if (poll(&p, 1, 300) != 0) {
		fprintf(stderr, "cm_peer: a second event after rdma_disconnect\n");
		return 1;
	}
	rdma_dereg_mr(mr);
	return 0;
}

int
main(int argc, char **argv)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *conn;

	if (argc != 4 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: cm_peer server|server-send|client|client-kill <ip> <port>\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	ch = rdma_create_event_channel();
	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0) {
		perror("cm_peer: rdma_create_event_channel/id");
		return 1;
	}
	if (strncmp(argv[1], "server", 6) == 0) {
		if (rdma_bind_addr(id, (struct sockaddr *)&sa) || rdma_listen(id, 1)) {
			perror("cm_peer: bind/listen");
			return 1;
		}
		printf("listening\n");
		fflush(stdout);
		if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &conn, 20000) ||
		    rdma_create_qp(conn, NULL, &qa) || rdma_accept(conn, &cp) ||
		    expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000))
			return 1;
		printf("established\n");
		fflush(stdout);
		if (strcmp(argv[1], "server-send") == 0) {
			if (send_until_disconnected(ch, conn))
				return 1;
		} else if (expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL, 10000)) {
			return 1;
		}
		printf("disconnected\n");
		rdma_destroy_qp(conn);
		rdma_destroy_id(conn);
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		return 0;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000) ||
	    expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 5000) ||
	    rdma_resolve_route(id, 2000) || expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 5000) ||
	    rdma_create_qp(id, NULL, &qa) || rdma_connect(id, &cp) ||
	    expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000))
		return 1;
	printf("established\n");
	fflush(stdout);
	if (strcmp(argv[1], "client-kill") == 0) {
		sleep(1);	/* the server's SEND meets RNR NAKs meanwhile */
		raise(SIGKILL);
	}
	return 0;	/* no disconnect, no destroy */
}
