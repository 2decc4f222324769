/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM protocol (IBA chapter 12) as Linux's ib_cm and rdma_cm speak it
 * over RoCE: connection set-up (REQ, MRA, REP, RTU, REJ), tear-down (DREQ,
 * DREP) and service ID resolution for UD (SIDR_REQ, SIDR_REP), with the
 * retransmission timers. Everything here runs under cm.lock, from the CM
 * thread (MADs, timers) or an API call (the messages it starts).
 *
 * Wire conventions followed (those of the kernel's cm.c and cma.c): the
 * REQ's service ID is the port space and port (cm_mad.h), its private data
 * begins with the 36-byte IP CM header; answers carry the TID of the REQ;
 * the passive side sends an MRA as soon as the request is reported; a DREQ
 * for an unknown connection is still answered with a DREP; a REQ for a
 * service nobody listens on gets a REJ "invalid service ID" (8).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "cm_loc.h"

/* IBA's 4.096 us x 2^t, in ms, at least 1 */
uint32_t
cm_timeout_ms(uint8_t t)
{
	uint64_t ns = 4096ull << (t > 31 ? 31 : t);

	return ns < 1000000 ? 1 : (uint32_t)(ns / 1000000);
}

void
cm_timer_set(struct cm_id *c, uint32_t ms, int retries)
{
	c->timeout_ms = ms;
	c->retries = retries;
	c->timer_ns = cm_now_ns() + (uint64_t)ms * 1000000;
	cm_wake();
}

void
cm_timer_stop(struct cm_id *c)
{
	c->timer_ns = 0;
}

/*
 * TimeWait's length, as the kernel's cm_enter_timewait computes it: the
 * path's ACK time-out, 4.096 us x 2^(packet lifetime + 1), the time a
 * packet of the old connection may still be on its way. The packet
 * lifetime of droce's path is the ACK time-out less one (cm_path_fill):
 * the id's own (RDMA_OPTION_ID_ACK_TIMEOUT) on the active side, the REQ's
 * on the passive side, 14 by default: 67 ms (a kernel RoCE path, lifetime
 * 16, waits 512 ms).
 */
uint32_t
cm_timewait_ms(const struct cm_id *c)
{
	return cm_timeout_ms(c->ack_timeout ? c->ack_timeout : CM_LOCAL_ACK_TIMEOUT);
}

/*
 * The connection is closed: IBA 12.9.6's TimeWait, where its communication
 * IDs stay taken so that its stray MADs find it (a DREQ gets a DREP, a
 * stale REQ with its comm ID a REJ "stale connection", anything else is
 * dropped) rather than a new connection. The kernel's rdma_cm reports the
 * end of it (RDMA_CM_EVENT_TIMEWAIT_EXIT: the QP may be used again) only to
 * an id it reported DISCONNECTED on (@report); a REJ after the REP stage
 * waits the same, silently. Destroying the id ends it without a word.
 */
static void
timewait_enter(struct cm_id *c, bool report)
{
	c->state = CM_TIMEWAIT;
	c->tw_report = report;
	cm_timer_set(c, cm_timewait_ms(c), 0);
}

static void
timewait_exit(struct cm_id *c)
{
	c->mad_valid = false;
	if (!c->tw_report) {
		c->state = CM_ERROR;
		return;
	}
	c->state = CM_DISCONNECTED;
	if (!c->destroying)
		cm_report(c, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}

static void
hdr_init(struct droce_cm_msg *m, uint16_t attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = DROCE_CM_BASE_VERSION;
	m->hdr.mgmt_class = DROCE_CM_MGMT_CLASS;
	m->hdr.class_version = DROCE_CM_CLASS_VERSION;
	m->hdr.method = DROCE_CM_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
}

/* Encode @m and send it to @dst from @d; with @c, keep it for retransmission. */
static int
send_msg(struct cm_dev *d, in_addr_t dst, const struct droce_cm_msg *m, struct cm_id *c)
{
	uint8_t buf[DROCE_CM_MAD_LEN];
	int ret = droce_cm_mad_encode(m, buf, sizeof(buf));

	if (ret < 0)
		return -ret;
	if (c != NULL) {
		memcpy(c->mad, buf, sizeof(buf));
		c->mad_valid = true;
	}
	cm_mad_send(d, dst, buf);	/* a loss is the timer's business */
	return 0;
}

static void
resend(struct cm_id *c)
{
	if (c->mad_valid && c->dev != NULL) {
		c->dev->retransmits++;
		cm_mad_send(c->dev, c->peer_ip, c->mad);
	}
}

static uint64_t
new_tid(void)
{
	return ((uint64_t)cm.next_local_id++ << 32) | (uint32_t)cm_now_ns();
}

/* Copy the application's private data after @off bytes already used. */
static int
pdata_put(uint8_t *dst, uint32_t *len, size_t max, size_t off, const void *src, size_t n)
{
	if (off + n > max)
		return EINVAL;
	if (n)
		memcpy(dst + off, src, n);
	*len = (uint32_t)(off + n);
	return 0;
}

static void
gid_of(uint8_t gid[16], in_addr_t ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

/* ---- messages we start ---- */

int
cm_send_req(struct cm_id *c, const struct rdma_conn_param *p)
{
	struct droce_cm_msg m;
	struct droce_cm_req *r = &m.req;
	struct droce_cm_ip_hdr ih = { .version = DROCE_CM_IP_HDR_VERSION, .ip_version = 4 };
	int ret;

	c->tid = new_tid();
	hdr_init(&m, DROCE_CM_ATTR_REQ, c->tid);
	r->local_comm_id = c->local_id;
	r->service_id = droce_cm_service_id(cm_ps_wire(c->id.ps),
					    cm_sa_port(&c->id.route.addr.dst_addr));
	r->local_ca_guid = be64toh(c->dev->guid);
	r->local_qpn = c->qp_num;
	r->initiator_depth = c->init_depth;
	r->remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->end_to_end_flow_control = c->flow_control;
	r->starting_psn = c->local_psn;
	r->local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->pkey = 0xffff;
	r->path_mtu = (uint8_t)c->mtu;
	r->max_cm_retries = CM_MAX_RETRIES;
	if (c->id.qp_type == IBV_QPT_XRC_SEND) {
		/*
		 * IBA 12.6.5 (XRC annex A14): an XRC initiator has no
		 * responder, retries of its own to ask for or receive queue:
		 * those fields stay 0, as the kernel's cm_format_req leaves them.
		 */
		r->transport_service_type = DROCE_CM_TRANSPORT_EXT;
		r->extended_transport_type = DROCE_CM_EXT_TRANSPORT_XRC;
	} else {
		r->transport_service_type = c->id.qp_type == IBV_QPT_UC ? DROCE_CM_TRANSPORT_UC :
									  DROCE_CM_TRANSPORT_RC;
		r->responder_resources = c->resp_res;
		r->retry_count = c->retry_count;
		r->rnr_retry_count = c->peer_rnr_retry;
		r->srq = c->srq;
	}
	r->primary.local_lid = r->primary.remote_lid = 0xffff;
	gid_of(r->primary.local_gid, c->dev->ip);
	gid_of(r->primary.remote_gid, c->peer_ip);
	r->primary.traffic_class = c->tos;
	r->primary.hop_limit = 64;
	r->primary.sl = 0;
	r->primary.subnet_local = 1;
	r->primary.packet_rate = 3;		/* 10 Gb/s, as the kernel's RoCE path */
	r->primary.local_ack_timeout = c->ack_timeout;
	memcpy(ih.src_addr + 12, &c->dev->ip, 4);
	memcpy(ih.dst_addr + 12, &c->peer_ip, 4);
	ih.src_port = cm_sa_port(&c->id.route.addr.src_addr);
	ret = droce_cm_ip_hdr_encode(&ih, p ? p->private_data : NULL, p ? p->private_data_len : 0,
				     r->private_data, sizeof(r->private_data));
	if (ret < 0)
		return -ret;
	r->private_data_len = (uint32_t)ret;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	if (ret)
		return ret;
	c->state = CM_REQ_SENT;
	/* IBA 12.7.20: the peer's response time plus a packet's round trip */
	cm_timer_set(c, 2 * cm_timeout_ms(CM_RESPONSE_TIMEOUT), CM_MAX_RETRIES);
	return 0;
}

int
cm_send_rep(struct cm_id *c, const struct rdma_conn_param *p)
{
	struct droce_cm_msg m;
	struct droce_cm_rep *r = &m.rep;
	int ret;

	hdr_init(&m, DROCE_CM_ATTR_REP, c->remote_tid);
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	r->starting_psn = c->local_psn;
	r->responder_resources = c->resp_res;
	r->target_ack_delay = 0;
	r->failover_accepted = 3;		/* "failover not supported" */
	r->rnr_retry_count = c->peer_rnr_retry;
	if (c->id.qp_type == IBV_QPT_XRC_RECV) {
		/*
		 * An XRC target names its QP in the Local EE Context Number
		 * and always receives into SRQs (IBA A14; the kernel's
		 * cm_format_rep): no initiator depth, no flow control.
		 */
		r->local_eecn = c->qp_num;
		r->srq = 1;
	} else {
		r->local_qpn = c->qp_num;
		r->initiator_depth = c->init_depth;
		r->end_to_end_flow_control = c->flow_control;
		r->srq = c->srq;
	}
	r->local_ca_guid = be64toh(c->dev->guid);
	ret = pdata_put(r->private_data, &r->private_data_len, sizeof(r->private_data), 0,
			p ? p->private_data : NULL, p ? p->private_data_len : 0);
	if (ret)
		return ret;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	if (ret)
		return ret;
	c->state = CM_REP_SENT;
	cm_timer_set(c, 2 * cm_timeout_ms(CM_RESPONSE_TIMEOUT), CM_MAX_RETRIES);
	return 0;
}

int
cm_send_rtu(struct cm_id *c)
{
	struct droce_cm_msg m;

	hdr_init(&m, DROCE_CM_ATTR_RTU, c->tid);
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	return send_msg(c->dev, c->peer_ip, &m, c);	/* kept: a repeated REP gets it again */
}

static int
send_mra(struct cm_id *c, uint8_t what)
{
	struct droce_cm_msg m;

	hdr_init(&m, DROCE_CM_ATTR_MRA, what == DROCE_CM_MSG_REQ ? c->remote_tid : c->tid);
	m.mra.local_comm_id = c->local_id;
	m.mra.remote_comm_id = c->remote_id;
	m.mra.message_mraed = what;
	m.mra.service_timeout = CM_MRA_TIMEOUT;
	return send_msg(c->dev, c->peer_ip, &m, c);	/* kept: a repeated REQ gets it again */
}

/* A REJ for connection @c (we are its REQ's receiver unless we sent the REQ). */
int
cm_send_rej(struct cm_id *c, uint16_t reason, const void *pdata, uint8_t len)
{
	struct droce_cm_msg m;
	bool active = c->state == CM_REQ_SENT || c->state == CM_REP_RCVD;
	bool after_rep = c->state == CM_REP_SENT || c->state == CM_REP_RCVD;
	int ret;

	hdr_init(&m, DROCE_CM_ATTR_REJ, active ? c->tid : c->remote_tid);
	m.rej.local_comm_id = c->local_id;
	m.rej.remote_comm_id = c->remote_id;
	m.rej.message_rejected = c->state == CM_REP_RCVD ? DROCE_CM_MSG_REP : DROCE_CM_MSG_REQ;
	m.rej.reason = reason;
	ret = pdata_put(m.rej.private_data, &m.rej.private_data_len,
			sizeof(m.rej.private_data), 0, pdata, len);
	if (ret)
		return ret;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	cm_timer_stop(c);
	c->state = CM_ERROR;
	if (after_rep)
		timewait_enter(c, false);	/* the kernel's ib_send_cm_rej from REP_SENT */
	return ret;
}

/* A REJ for a REQ that made no connection (no listener, backlog full, ...). */
static void
rej_req(struct cm_dev *d, in_addr_t src, const struct droce_cm_msg *req, uint16_t reason)
{
	struct droce_cm_msg m;

	hdr_init(&m, DROCE_CM_ATTR_REJ, req->hdr.tid);
	m.rej.remote_comm_id = req->req.local_comm_id;
	m.rej.message_rejected = DROCE_CM_MSG_REQ;
	m.rej.reason = reason;
	send_msg(d, src, &m, NULL);
}

int
cm_send_dreq(struct cm_id *c)
{
	struct droce_cm_msg m;
	int ret;

	c->tid = new_tid();
	hdr_init(&m, DROCE_CM_ATTR_DREQ, c->tid);
	m.dreq.local_comm_id = c->local_id;
	m.dreq.remote_comm_id = c->remote_id;
	m.dreq.remote_qpn_eecn = c->remote_qpn;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	if (ret)
		return ret;
	c->state = CM_DREQ_SENT;
	c->dreq_ns = cm_now_ns();
	cm_timer_set(c, 2 * cm_timeout_ms(CM_RESPONSE_TIMEOUT), CM_DREQ_RETRIES);
	return 0;
}

static void
send_drep(struct cm_dev *d, in_addr_t dst, uint64_t tid, uint32_t local, uint32_t remote,
	  struct cm_id *c)
{
	struct droce_cm_msg m;

	hdr_init(&m, DROCE_CM_ATTR_DREP, tid);
	m.drep.local_comm_id = local;
	m.drep.remote_comm_id = remote;
	send_msg(d, dst, &m, c);
}

int
cm_send_sidr_req(struct cm_id *c, const struct rdma_conn_param *p)
{
	struct droce_cm_msg m;
	struct droce_cm_ip_hdr ih = { .version = DROCE_CM_IP_HDR_VERSION, .ip_version = 4 };
	int ret;

	c->tid = new_tid();
	hdr_init(&m, DROCE_CM_ATTR_SIDR_REQ, c->tid);
	m.sidr_req.request_id = c->local_id;
	m.sidr_req.pkey = 0xffff;
	m.sidr_req.service_id = droce_cm_service_id(cm_ps_wire(c->id.ps),
						    cm_sa_port(&c->id.route.addr.dst_addr));
	memcpy(ih.src_addr + 12, &c->dev->ip, 4);
	memcpy(ih.dst_addr + 12, &c->peer_ip, 4);
	ih.src_port = cm_sa_port(&c->id.route.addr.src_addr);
	ret = droce_cm_ip_hdr_encode(&ih, p ? p->private_data : NULL, p ? p->private_data_len : 0,
				     m.sidr_req.private_data, sizeof(m.sidr_req.private_data));
	if (ret < 0)
		return -ret;
	m.sidr_req.private_data_len = (uint32_t)ret;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	if (ret)
		return ret;
	c->state = CM_SIDR_REQ_SENT;
	cm_timer_set(c, 2 * cm_timeout_ms(CM_RESPONSE_TIMEOUT), CM_MAX_RETRIES);
	return 0;
}

int
cm_send_sidr_rep(struct cm_id *c, uint8_t status, const void *pdata, uint8_t len)
{
	struct droce_cm_msg m;
	int ret;

	hdr_init(&m, DROCE_CM_ATTR_SIDR_REP, c->remote_tid);
	m.sidr_rep.request_id = c->remote_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = c->qp_num;
	m.sidr_rep.service_id = droce_cm_service_id(cm_ps_wire(c->id.ps),
						    cm_sa_port(&c->id.route.addr.src_addr));
	m.sidr_rep.qkey = c->remote_qkey;	/* the Q_Key of our QP */
	ret = pdata_put(m.sidr_rep.private_data, &m.sidr_rep.private_data_len,
			sizeof(m.sidr_rep.private_data), 0, pdata, len);
	if (ret)
		return ret;
	ret = send_msg(c->dev, c->peer_ip, &m, c);
	c->state = status == DROCE_CM_SIDR_SUCCESS ? CM_UD_READY : CM_ERROR;
	return ret;
}

/* ---- events ---- */

static struct cm_event *
event_pdata(struct cm_id *c, enum rdma_cm_event_type type, int status, const void *pdata,
	    size_t len)
{
	struct cm_event *e = cm_event_new(c, type, status);

	if (e != NULL && len) {
		memcpy(e->pdata, pdata, len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = (uint8_t)len;
	}
	return e;
}

static void
post(struct cm_id *c, struct cm_event *e)
{
	if (e != NULL)
		cm_event_post(c->chan, e);
}

/*
 * A DREQ was answered, or its retries ran out: DISCONNECTED (@status), then
 * TimeWait, whose end is reported too.
 */
static void
disconnected(struct cm_id *c, int status)
{
	cm_timer_stop(c);
	c->mad_valid = false;
	post(c, cm_event_new(c, RDMA_CM_EVENT_DISCONNECTED, status));
	timewait_enter(c, true);
}

/*
 * The connection failed (time-out): an event. The application's QP is the
 * application's: as with rdma-core, the CM changes it only in the
 * application's own calls (rdma_get_cm_event, rdma_accept, rdma_disconnect),
 * never from the CM thread, which could not know it was destroyed.
 */
static void
conn_fail(struct cm_id *c, enum rdma_cm_event_type type, int status, const void *pdata,
	  size_t len)
{
	if (c->state != CM_TIMEWAIT) {	/* the REJ that went before it may have started one */
		cm_timer_stop(c);
		c->state = CM_ERROR;
	}
	post(c, event_pdata(c, type, status, pdata, len));
}

/* ---- messages we receive ---- */

/* The connection a message names by our communication ID, from @src. */
static struct cm_id *
conn_find(uint32_t local_id, in_addr_t src)
{
	struct cm_id *c = cm_id_by_local(local_id);

	return c != NULL && c->peer_ip == src ? c : NULL;
}

/* A REQ's or SIDR_REQ's addresses: the peer's, and ours it asks for. */
struct req_addr {
	in_addr_t src, dst;	/* the peer; ours (the IP CM header's, else the MAD's) */
	uint16_t src_port;	/* the peer's (the IP CM header's, else 0) */
	uint16_t port;		/* ours: the service ID's */
};

/*
 * The listener a REQ or SIDR_REQ from @a->src to @a->dst is for, NULL if
 * nobody listens there or its service ID is not an IP one; its IP CM header
 * (in @pdata) completes @a.
 */
static struct cm_id *
req_listener(struct cm_dev *d, struct req_addr *a, uint64_t service_id, const uint8_t *pdata,
	     size_t len)
{
	struct droce_cm_ip_hdr ih;
	uint16_t ps;

	if (droce_cm_ip_hdr_decode(pdata, len, &ih) == 0 && ih.ip_version == 4) {
		memcpy(&a->dst, ih.dst_addr + 12, 4);
		a->src_port = ih.src_port;
	}
	if (!droce_cm_service_id_parse(service_id, &ps, &a->port))
		return NULL;
	return cm_listener_find(d, ps, a->port, a->dst);
}

/* @l's child id for a request @tid at @a from the peer's @remote_id, on @d. */
static struct cm_id *
child_new(struct cm_dev *d, struct cm_id *l, enum ibv_qp_type qpt, const struct req_addr *a,
	  uint32_t remote_id, uint64_t tid)
{
	struct cm_id *c = cm_id_new(l->chan, l->id.context, l->id.ps, qpt);

	if (c == NULL)
		return NULL;
	cm_id_set_dev(c, d);
	c->bound = c->port_set = c->child = true;
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.src_sin.sin_addr.s_addr = a->dst;
	c->id.route.addr.src_sin.sin_port = htons(a->port);
	c->id.route.addr.dst_sin.sin_family = AF_INET;
	c->id.route.addr.dst_sin.sin_addr.s_addr = a->src;
	c->id.route.addr.dst_sin.sin_port = htons(a->src_port);
	c->peer_ip = a->src;
	c->remote_id = remote_id;
	c->remote_tid = tid;
	return c;
}

/*
 * @c, a request to @l, waits in @state for the application: its path set,
 * its CONNECT_REQUEST (the private data after @pdata's IP CM header) made
 * for the caller to post; NULL without memory for it (the caller refuses).
 */
static struct cm_event *
request_report(struct cm_id *c, struct cm_id *l, enum cm_conn_state state, const uint8_t *pdata,
	       size_t len)
{
	struct cm_event *e;

	cm_path_fill(c);
	c->state = state;
	e = event_pdata(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, pdata + DROCE_CM_IP_HDR_LEN,
			len - DROCE_CM_IP_HDR_LEN);
	if (e == NULL)
		return NULL;
	c->listen = l;
	l->pending++;
	e->owner = l;			/* acknowledged on the listener, as rdma-core counts it */
	e->ev.listen_id = &l->id;
	return e;
}

/* The QP type that answers a REQ (the kernel's cm_req_get_qp_type): 0 for none we have. */
static enum ibv_qp_type
req_qp_type(const struct droce_cm_req *r)
{
	switch (r->transport_service_type) {
	case DROCE_CM_TRANSPORT_RC:
		return IBV_QPT_RC;
	case DROCE_CM_TRANSPORT_UC:
		return IBV_QPT_UC;
	case DROCE_CM_TRANSPORT_EXT:
		return r->extended_transport_type == DROCE_CM_EXT_TRANSPORT_XRC ?
		       IBV_QPT_XRC_RECV : (enum ibv_qp_type)0;
	default:
		return (enum ibv_qp_type)0;
	}
}

static void
req_input(struct cm_dev *d, in_addr_t src, in_addr_t dst, const struct droce_cm_msg *m)
{
	const struct droce_cm_req *r = &m->req;
	struct req_addr a = { .src = src, .dst = dst };
	enum ibv_qp_type qpt;
	struct cm_id *l, *c;
	struct cm_event *e;

	/* a REQ sent again: answer with what we sent, never a second connection */
	TAILQ_FOREACH(c, &cm.ids, link) {
		if (c->remote_id != r->local_comm_id || c->peer_ip != src || c->dev != d)
			continue;
		if (c->state == CM_TIMEWAIT) {
			/*
			 * Its comm ID belongs to a connection in TimeWait: stale
			 * (IBA 12.9.8.3.1; the kernel's cm_dup_req_handler)
			 */
			rej_req(d, src, m, DROCE_CM_REJ_STALE_CONN);
			return;
		}
		if (c->remote_tid == m->hdr.tid) {
			if (c->state == CM_REQ_RCVD || c->state == CM_REP_SENT)
				resend(c);
			return;
		}
	}
	l = req_listener(d, &a, r->service_id, r->private_data, sizeof(r->private_data));
	if (l == NULL) {
		rej_req(d, src, m, DROCE_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	qpt = req_qp_type(r);
	/* XRC meets XRC only: the kernel's rdma_cm matches a REQ's QP type to its listener's */
	if (qpt == 0 || (qpt == IBV_QPT_XRC_RECV) != (l->id.qp_type == IBV_QPT_XRC_RECV)) {
		rej_req(d, src, m, DROCE_CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	if (l->pending >= l->backlog) {
		rej_req(d, src, m, DROCE_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	c = child_new(d, l, qpt, &a, r->local_comm_id, m->hdr.tid);
	if (c == NULL) {
		rej_req(d, src, m, DROCE_CM_REJ_NO_RESOURCES);
		return;
	}
	c->peer_guid = htobe64(r->local_ca_guid);
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	c->mtu = r->path_mtu < d->mtu ? (enum ibv_mtu)r->path_mtu : d->mtu;
	/* what the peer reads from us is what we answer for, and the reverse */
	c->resp_res = r->initiator_depth;
	c->init_depth = r->responder_resources;
	c->retry_count = r->retry_count;
	c->rnr_retry = r->rnr_retry_count;
	c->flow_control = r->end_to_end_flow_control;
	c->tos = r->primary.traffic_class;
	if (!c->ack_timeout_set && r->primary.local_ack_timeout)
		c->ack_timeout = r->primary.local_ack_timeout;
	e = request_report(c, l, CM_REQ_RCVD, r->private_data, DROCE_CM_REQ_PDATA_LEN);
	if (e == NULL) {
		cm_send_rej(c, DROCE_CM_REJ_NO_RESOURCES, NULL, 0);
		return;
	}
	e->ev.param.conn.responder_resources = c->resp_res;
	e->ev.param.conn.initiator_depth = c->init_depth;
	e->ev.param.conn.flow_control = c->flow_control;
	e->ev.param.conn.retry_count = r->retry_count;
	e->ev.param.conn.rnr_retry_count = r->rnr_retry_count;
	e->ev.param.conn.srq = r->srq;
	e->ev.param.conn.qp_num = r->local_qpn;
	cm_event_post(l->chan, e);
	/* as the kernel's rdma_cm: tell the peer the application may take its time */
	send_mra(c, DROCE_CM_MSG_REQ);
}

/* The peer's QPN in a REP: an XRC target gives it as its EE context (cm_send_rep). */
static uint32_t
rep_qpn(const struct cm_id *c, const struct droce_cm_rep *r)
{
	return c->id.qp_type == IBV_QPT_XRC_SEND ? r->local_eecn : r->local_qpn;
}

static void
fill_conn_param(struct cm_event *e, const struct cm_id *c, const struct droce_cm_rep *r)
{
	e->ev.param.conn.responder_resources = r->initiator_depth;
	e->ev.param.conn.initiator_depth = r->responder_resources;
	e->ev.param.conn.flow_control = r->end_to_end_flow_control;
	e->ev.param.conn.rnr_retry_count = r->rnr_retry_count;
	e->ev.param.conn.srq = r->srq;
	e->ev.param.conn.qp_num = rep_qpn(c, r);
}

static void
rep_input(in_addr_t src, const struct droce_cm_msg *m)
{
	const struct droce_cm_rep *r = &m->rep;
	struct cm_id *c = conn_find(r->remote_comm_id, src);
	struct cm_event *e;

	if (c == NULL) {
		/* IBA 12.9.8.3: a REP for nothing we know is rejected */
		return;
	}
	if ((c->state == CM_ESTABLISHED || c->state == CM_REP_RCVD) &&
	    c->remote_id == r->local_comm_id) {
		resend(c);	/* our RTU (or MRA) was lost */
		return;
	}
	if (c->state != CM_REQ_SENT)
		return;
	cm_timer_stop(c);
	c->remote_id = r->local_comm_id;
	c->remote_qpn = rep_qpn(c, r);
	c->remote_psn = r->starting_psn;
	c->peer_guid = htobe64(r->local_ca_guid);
	/* the peer may answer for fewer reads than we asked */
	if (r->initiator_depth < c->resp_res)
		c->resp_res = r->initiator_depth;
	if (r->responder_resources < c->init_depth)
		c->init_depth = r->responder_resources;
	c->rnr_retry = r->rnr_retry_count;
	/*
	 * The application takes it from here, as with rdma-core: when it gets
	 * the event, its QP (if the id has one then) goes to RTR and RTS and
	 * the RTU leaves (cm_conn_response); without a QP it sees
	 * CONNECT_RESPONSE and calls rdma_establish. Meanwhile an MRA tells
	 * the peer to wait for that, as Linux's rdma_cm does.
	 */
	c->state = CM_REP_RCVD;
	e = event_pdata(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, r->private_data,
			DROCE_CM_REP_PDATA_LEN);
	if (e) {
		fill_conn_param(e, c, r);
		e->action = CM_ACT_CONN_RESP;
	}
	post(c, e);
	send_mra(c, DROCE_CM_MSG_REP);
}

/*
 * Under cm.lock, in rdma_get_cm_event: the connection response @e is being
 * taken by the application. With a QP on the id, move it to RTR and RTS and
 * send the RTU: ESTABLISHED, or CONNECT_ERROR (and a REJ) if the QP refuses.
 */
void
cm_conn_response(struct cm_id *c, struct cm_event *e)
{
	if (c->id.qp == NULL || c->state != CM_REP_RCVD)
		return;
	if (cm_qp_to_rtr_rts(c) != 0) {
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = -errno;
		cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		cm_qp_to_err(c);
		return;
	}
	c->state = CM_ESTABLISHED;
	cm_send_rtu(c);
	e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
}

static void
rtu_input(in_addr_t src, const struct droce_cm_msg *m)
{
	struct cm_id *c = conn_find(m->rtu.remote_comm_id, src);

	if (c == NULL || c->state != CM_REP_SENT || c->remote_id != m->rtu.local_comm_id)
		return;
	cm_timer_stop(c);
	c->state = CM_ESTABLISHED;
	c->mad_valid = false;
	post(c, event_pdata(c, RDMA_CM_EVENT_ESTABLISHED, 0, m->rtu.private_data,
			    DROCE_CM_RTU_PDATA_LEN));
}

static void
mra_input(in_addr_t src, const struct droce_cm_msg *m)
{
	struct cm_id *c = conn_find(m->mra.remote_comm_id, src);
	uint32_t ms;

	if (c == NULL)
		return;
	if (!((c->state == CM_REQ_SENT && m->mra.message_mraed == DROCE_CM_MSG_REQ) ||
	      (c->state == CM_REP_SENT && m->mra.message_mraed == DROCE_CM_MSG_REP)))
		return;
	/* IBA 12.6.6: wait the service time it names, then time out (no more retries) */
	ms = cm_timeout_ms(m->mra.service_timeout) + cm_timeout_ms(CM_RESPONSE_TIMEOUT);
	if (c->retries > 0 || c->timeout_ms < ms) {
		c->remote_id = m->mra.local_comm_id;
		cm_timer_set(c, ms, 0);
	}
}

static void
rej_input(in_addr_t src, const struct droce_cm_msg *m)
{
	const struct droce_cm_rej *r = &m->rej;
	struct cm_id *c = conn_find(r->remote_comm_id, src);
	bool established, after_rep;
	struct cm_event *e;

	if (c == NULL)
		return;
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_REQ_RCVD:
	case CM_ESTABLISHED:	/* the peer gave up waiting for our RTU */
		break;
	default:
		return;
	}
	if (c->state == CM_REQ_RCVD)
		cm_pending_drop(c);
	established = c->state == CM_ESTABLISHED;
	after_rep = established || c->state == CM_REP_SENT || c->state == CM_REP_RCVD;
	e = event_pdata(c, established ? RDMA_CM_EVENT_DISCONNECTED : RDMA_CM_EVENT_REJECTED,
			established ? 0 : r->reason, r->private_data, DROCE_CM_REJ_PDATA_LEN);
	cm_timer_stop(c);
	c->state = CM_ERROR;
	c->mad_valid = false;
	if (e)
		e->action = CM_ACT_QP_ERR;	/* rdma-core: the QP to error as the event is taken */
	post(c, e);
	/* the kernel's cm_rej_handler: a connection that had its REP waits in TimeWait */
	if (after_rep)
		timewait_enter(c, established);
}

static void
dreq_input(struct cm_dev *d, in_addr_t src, const struct droce_cm_msg *m)
{
	struct cm_id *c = conn_find(m->dreq.remote_comm_id, src);

	if (c == NULL || c->remote_id != m->dreq.local_comm_id) {
		/* IBA 12.9.8.6: a DREQ for a connection we no longer have still gets a DREP */
		send_drep(d, src, m->hdr.tid, m->dreq.remote_comm_id, m->dreq.local_comm_id, NULL);
		return;
	}
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:	/* the RTU was lost; the DREQ says it was sent */
	case CM_DREQ_SENT:	/* both ends at once */
		break;
	case CM_TIMEWAIT:
	case CM_DISCONNECTED:
		/* our DREP was lost, or the peer's DREQ crossed ours: a DREP for this one */
		send_drep(d, src, m->hdr.tid, c->local_id, c->remote_id, NULL);
		return;
	default:
		return;
	}
	cm_timer_stop(c);
	send_drep(d, src, m->hdr.tid, c->local_id, c->remote_id, c);
	/* the QP: rdma_disconnect's, as with rdma-core */
	post(c, cm_event_new(c, RDMA_CM_EVENT_DISCONNECTED, 0));
	timewait_enter(c, true);
}

static void
drep_input(in_addr_t src, const struct droce_cm_msg *m)
{
	struct cm_id *c = conn_find(m->drep.remote_comm_id, src);

	if (c == NULL || c->state != CM_DREQ_SENT)
		return;
	disconnected(c, 0);
}

/*
 * The engine moved RC QP @qpn of the device with node GUID @guid to ERR on
 * its own (retries exhausted, a remote error): its peer may be gone without
 * a DREQ, as a killed process is (the kernel would have sent one for it).
 * The connection on that QP is closed as rdma_disconnect closes it, the QP
 * aside (the application's, and in ERR already): a DREQ, then DISCONNECTED
 * when the DREP comes or the DREQ's retries run out. rdma_disconnect after
 * it succeeds and reports nothing more, as it does after the peer's DREQ.
 * A QPN no connected id owns (a QP the application keeps to itself, or one
 * destroyed and reused meanwhile but not yet connected) is ignored.
 */
void
cm_qp_err_input(__be64 guid, uint32_t qpn)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm.ids, link) {
		if (c->dev == NULL || c->dev->guid != guid || c->qp_num != qpn || c->destroying ||
		    c->id.qp_type != IBV_QPT_RC ||
		    (c->state != CM_ESTABLISHED && c->state != CM_REP_SENT))
			continue;
		if (cm_send_dreq(c) != 0)
			disconnected(c, 0);
	}
}

static void
sidr_req_input(struct cm_dev *d, in_addr_t src, in_addr_t dst, const struct droce_cm_msg *m)
{
	const struct droce_cm_sidr_req *r = &m->sidr_req;
	struct req_addr a = { .src = src, .dst = dst };
	struct droce_cm_msg rep;
	struct cm_id *l, *c;
	struct cm_event *e;

	TAILQ_FOREACH(c, &cm.ids, link) {
		if (c->remote_id == r->request_id && c->peer_ip == src && c->dev == d &&
		    c->remote_tid == m->hdr.tid && (c->state == CM_SIDR_REQ_RCVD ||
						    c->state == CM_UD_READY || c->state == CM_ERROR)) {
			if (c->state != CM_SIDR_REQ_RCVD)
				resend(c);
			return;
		}
	}
	l = req_listener(d, &a, r->service_id, r->private_data, sizeof(r->private_data));
	if (l == NULL || l->pending >= l->backlog ||
	    (c = child_new(d, l, IBV_QPT_UD, &a, r->request_id, m->hdr.tid)) == NULL) {
		hdr_init(&rep, DROCE_CM_ATTR_SIDR_REP, m->hdr.tid);
		rep.sidr_rep.request_id = r->request_id;
		rep.sidr_rep.status = l == NULL ? DROCE_CM_SIDR_UNSUPPORTED : DROCE_CM_SIDR_REJECT;
		rep.sidr_rep.service_id = r->service_id;
		send_msg(d, src, &rep, NULL);
		return;
	}
	e = request_report(c, l, CM_SIDR_REQ_RCVD, r->private_data, DROCE_CM_SIDR_REQ_PDATA_LEN);
	if (e == NULL) {
		cm_send_sidr_rep(c, DROCE_CM_SIDR_REJECT, NULL, 0);
		return;
	}
	cm_event_post(l->chan, e);
}

static void
sidr_rep_input(in_addr_t src, const struct droce_cm_msg *m)
{
	const struct droce_cm_sidr_rep *r = &m->sidr_rep;
	struct cm_id *c = conn_find(r->request_id, src);
	struct cm_event *e;

	if (c == NULL || c->state != CM_SIDR_REQ_SENT)
		return;
	cm_timer_stop(c);
	c->mad_valid = false;
	if (r->status != DROCE_CM_SIDR_SUCCESS) {
		c->state = CM_ERROR;
		post(c, event_pdata(c, RDMA_CM_EVENT_UNREACHABLE, -ECONNREFUSED, r->private_data,
				    DROCE_CM_SIDR_REP_PDATA_LEN));
		return;
	}
	c->state = CM_UD_READY;
	c->remote_qpn = r->qpn;
	c->remote_qkey = r->qkey;
	e = cm_event_new(c, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (e == NULL)
		return;
	memcpy(e->pdata, r->private_data, DROCE_CM_SIDR_REP_PDATA_LEN);
	e->ev.param.ud.private_data = e->pdata;
	e->ev.param.ud.private_data_len = DROCE_CM_SIDR_REP_PDATA_LEN;
	e->ev.param.ud.qp_num = r->qpn;
	e->ev.param.ud.qkey = r->qkey;
	e->ev.param.ud.ah_attr = (struct ibv_ah_attr){
		.is_global = 1, .port_num = c->id.port_num,
		.grh = { .sgid_index = 0, .hop_limit = 64, .traffic_class = c->tos },
	};
	gid_of(e->ev.param.ud.ah_attr.grh.dgid.raw, c->peer_ip);
	post(c, e);
}

/* One received MAD of @d, from @src to @dst; malformed ones are counted and dropped. */
void
cm_mad_input(struct cm_dev *d, in_addr_t src, in_addr_t dst, const uint8_t *mad, size_t len)
{
	struct droce_cm_msg m;

	if (droce_cm_mad_decode(mad, len, &m) != 0 || m.hdr.method != DROCE_CM_METHOD_SEND) {
		d->rx_malformed++;
		return;
	}
	switch (m.hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		req_input(d, src, dst, &m);
		break;
	case DROCE_CM_ATTR_MRA:
		mra_input(src, &m);
		break;
	case DROCE_CM_ATTR_REJ:
		rej_input(src, &m);
		break;
	case DROCE_CM_ATTR_REP:
		rep_input(src, &m);
		break;
	case DROCE_CM_ATTR_RTU:
		rtu_input(src, &m);
		break;
	case DROCE_CM_ATTR_DREQ:
		dreq_input(d, src, &m);
		break;
	case DROCE_CM_ATTR_DREP:
		drep_input(src, &m);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		sidr_req_input(d, src, dst, &m);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		sidr_rep_input(src, &m);
		break;
	default:
		d->rx_unsupported++;	/* LAP, APR, ClassPortInfo: not spoken */
		break;
	}
}

/* A timer of @c expired: send again, or give up. */
void
cm_timer_fire(struct cm_id *c)
{
	if (c->retries > 0) {
		c->retries--;
		resend(c);
		cm_timer_set(c, c->timeout_ms, c->retries);
		return;
	}
	switch (c->state) {
	case CM_ADDR_QUERY:
		cm_addr_poll(c);
		break;
	case CM_REQ_SENT:
		/* IBA 12.9.7: a REJ with "timeout" tells the peer, if it is there */
		cm_send_rej(c, DROCE_CM_REJ_TIMEOUT, NULL, 0);
		conn_fail(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		break;
	case CM_SIDR_REQ_SENT:
		c->state = CM_ERROR;
		post(c, cm_event_new(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT));
		break;
	case CM_REP_SENT:
		cm_send_rej(c, DROCE_CM_REJ_TIMEOUT, NULL, 0);
		conn_fail(c, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, NULL, 0);
		break;
	case CM_DREQ_SENT:
		/* no DREP: disconnected all the same (the kernel's DREQ_ERROR: -ETIMEDOUT) */
		disconnected(c, -ETIMEDOUT);
		break;
	case CM_TIMEWAIT:
		timewait_exit(c);
		break;
	default:
		break;
	}
}
