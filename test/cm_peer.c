/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A connection manager peer for test/run_dropin_rdmacm.sh, over the drop-in
 * librdmacm: what Debian's programs do not do.
 *   cm_peer server <ip> <port>: accepts one connection, then waits (10 s at
 *     most) for RDMA_CM_EVENT_DISCONNECTED; prints "disconnected" and exits 0.
 *   cm_peer client <ip> <port>: connects, prints "established", and exits
 *     without rdma_disconnect or rdma_destroy_id: the CM must tell the
 *     server all the same.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

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
		fprintf(stderr, "usage: cm_peer server|client <ip> <port>\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	ch = rdma_create_event_channel();
	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0) {
		perror("cm_peer: rdma_create_event_channel/id");
		return 1;
	}
	if (strcmp(argv[1], "server") == 0) {
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
		if (expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL, 10000))
			return 1;
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
	return 0;	/* no disconnect, no destroy */
}
