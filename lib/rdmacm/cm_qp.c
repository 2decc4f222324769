/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs objects of an id, and the endpoints of the synchronous API:
 * rdma_create_qp(_ex) (with the CQs and channels rdma-core creates when the
 * application gives none), rdma_create_srq(_ex), rdma_init_qp_attr and the
 * QP transitions the CM drives, rdma_create_ep / rdma_destroy_ep /
 * rdma_get_request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_loc.h"

int cm_create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		  enum rdma_port_space ps, enum ibv_qp_type qpt);

/* rdma_verbs.h and rdma_cma.h declare these as part of the public API */
int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr);
void rdma_destroy_srq(struct rdma_cm_id *id);

/*
 * The attributes that move @c's QP to a->qp_state, as the kernel's
 * rdma_init_qp_attr gives them: 0 or an errno.
 */
int
cm_qp_attr(struct cm_id *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state s = a->qp_state;

	if (c->dev == NULL)
		return EINVAL;
	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = c->id.port_num;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (c->id.qp_type == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			/* before a connection, none; then what the agreement allows */
			a->qp_access_flags = c->remote_qpn == 0 && c->state != CM_REQ_RCVD ? 0 :
				IBV_ACCESS_REMOTE_WRITE |
				(c->resp_res ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (c->id.qp_type == IBV_QPT_UD) {
			*mask = IBV_QP_STATE;
			return 0;
		}
		if (c->state != CM_REQ_RCVD && c->state != CM_REQ_SENT && c->state != CM_REP_RCVD &&
		    c->state != CM_ESTABLISHED && c->state != CM_REP_SENT)
			return EINVAL;
		a->path_mtu = c->mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->remote_psn;
		a->ah_attr = (struct ibv_ah_attr){
			.is_global = 1, .port_num = c->id.port_num,
			.grh = { .sgid_index = 0, .hop_limit = 64, .traffic_class = c->tos },
		};
		a->ah_attr.grh.dgid = c->path.dgid;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		/* the responder's half: RC and the XRC target (an XRC initiator has none) */
		if (c->id.qp_type == IBV_QPT_RC || c->id.qp_type == IBV_QPT_XRC_RECV) {
			a->max_dest_rd_atomic = c->resp_res;
			a->min_rnr_timer = CM_MIN_RNR_TIMER;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = c->id.qp_type == IBV_QPT_UD ? 0 : c->local_psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		/* the requester's half: RC and the XRC initiator (kernel: cm_init_qp_rts_attr) */
		if (c->id.qp_type == IBV_QPT_RC || c->id.qp_type == IBV_QPT_XRC_SEND) {
			a->retry_cnt = c->retry_count;
			a->rnr_retry = c->rnr_retry;
			a->max_rd_atomic = c->init_depth;
			*mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		if (c->id.qp_type == IBV_QPT_RC || c->id.qp_type == IBV_QPT_XRC_SEND ||
		    c->id.qp_type == IBV_QPT_XRC_RECV) {
			a->timeout = c->ack_timeout;
			*mask |= IBV_QP_TIMEOUT;
		}
		return 0;
	default:
		return EINVAL;
	}
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	int ret;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	ret = cm_qp_attr(to_cm_id(id), qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

static int
qp_step(struct cm_id *c, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };
	int mask, ret = cm_qp_attr(c, &a, &mask);

	if (ret == 0)
		ret = ibv_modify_qp(c->id.qp, &a, mask);
	return ret;
}

/* Under cm.lock: @c's QP (if any) through INIT again, RTR and RTS. 0, or -1 with errno. */
int
cm_qp_to_rtr_rts(struct cm_id *c)
{
	int ret;

	if (c->id.qp == NULL)
		return 0;
	ret = qp_step(c, IBV_QPS_INIT);
	if (ret == 0)
		ret = qp_step(c, IBV_QPS_RTR);
	if (ret == 0)
		ret = qp_step(c, IBV_QPS_RTS);
	return ret ? CM_ERR(ret) : 0;
}

int
cm_qp_to_err(struct cm_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (c->id.qp == NULL || c->id.qp_type == IBV_QPT_UD)
		return 0;
	return ibv_modify_qp(c->id.qp, &a, IBV_QP_STATE);
}

/* Either may be missing: an XRC initiator has a send CQ only, an XRC SRQ's id a receive CQ. */
static void
cqs_destroy(struct rdma_cm_id *id)
{
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	id->send_cq = id->recv_cq = NULL;
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

/* The CQs (each with its completion channel) the application did not give. */
static int
cqs_create(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->recv_cq_channel == NULL)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id, id->recv_cq_channel, 0);
		if (id->recv_cq == NULL)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->send_cq_channel == NULL)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id, id->send_cq_channel, 0);
		if (id->send_cq == NULL)
			goto err;
	}
	return 0;
err:
	cqs_destroy(id);
	return -1;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *c = to_cm_id(id);
	struct ibv_qp *qp;
	int ret;

	if (id == NULL || attr == NULL || id->qp != NULL || id->verbs == NULL)
		return CM_ERR(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	} else if (attr->pd->context != id->verbs) {
		return CM_ERR(EINVAL);
	}
	if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
		return CM_ERR(EINVAL);
	if (id->qp_type == IBV_QPT_XRC_RECV) {
		/* in the device's domain, where rdma_create_srq puts the XRC SRQs */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || attr->xrcd == NULL) {
			attr->xrcd = cm_dev_xrcd(c->dev);
			if (attr->xrcd == NULL)
				return -1;
			attr->comp_mask |= IBV_QP_INIT_ATTR_XRCD;
		}
	} else if (cqs_create(id, attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
			      attr->recv_cq || id->recv_cq ? 0 : attr->cap.max_recv_wr) != 0) {
		/*
		 * An XRC target QP has no CQ (its SRQs complete into theirs):
		 * unlike rdma-core, which makes one that nothing uses, none.
		 */
		return -1;
	}
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	if (id->srq && attr->srq == NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL) {
		if (id->qp_type != IBV_QPT_XRC_RECV)
			cqs_destroy(id);
		return -1;
	}
	pthread_mutex_lock(&cm.lock);
	id->qp = qp;
	if (id->qp_type == IBV_QPT_UD) {
		ret = qp_step(c, IBV_QPS_INIT);
		if (ret == 0)
			ret = qp_step(c, IBV_QPS_RTR);
		if (ret == 0)
			ret = qp_step(c, IBV_QPS_RTS);
	} else {
		ret = qp_step(c, IBV_QPS_INIT);
	}
	if (ret)
		id->qp = NULL;
	pthread_mutex_unlock(&cm.lock);
	if (ret) {
		ibv_destroy_qp(qp);
		if (id->qp_type != IBV_QPT_XRC_RECV)
			cqs_destroy(id);
		return CM_ERR(ret);
	}
	if (qp->pd != NULL)	/* an XRC target QP has none: the id keeps its own */
		id->pd = qp->pd;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ax;
	int ret;

	if (id == NULL || qp_init_attr == NULL)
		return CM_ERR(EINVAL);
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, qp_init_attr, sizeof(*qp_init_attr));
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &ax);
	memcpy(qp_init_attr, &ax, sizeof(*qp_init_attr));
	return ret;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	/* an XRC target's CQs are its SRQ's: they go with the SRQ */
	if (id->qp_type != IBV_QPT_XRC_RECV)
		cqs_destroy(id);
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	bool made_cq = false;
	struct ibv_srq *srq;

	if (id == NULL || attr == NULL || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return CM_ERR(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (attr->srq_type == IBV_SRQT_XRC) {
		/* the device's domain, and a CQ with its channel, as rdma-core gives them */
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || attr->xrcd == NULL) {
			attr->xrcd = cm_dev_xrcd(to_cm_id(id)->dev);
			if (attr->xrcd == NULL)
				return -1;
		}
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || attr->cq == NULL) {
			if (id->recv_cq == NULL) {
				if (cqs_create(id, 0, attr->attr.max_wr) != 0)
					return -1;
				made_cq = true;
			}
			attr->cq = id->recv_cq;
		}
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL) {
		if (made_cq)
			cqs_destroy(id);
		return -1;
	}
	if (id->pd == NULL)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;
	int ret;

	if (id == NULL || attr == NULL)
		return CM_ERR(EINVAL);
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, attr, sizeof(*attr));
	ax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	/* an XRC target's id receives through XRC SRQs (rdma_xserver's way) */
	ax.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	ax.pd = pd;
	ret = rdma_create_srq_ex(id, &ax);
	memcpy(attr, &ax, sizeof(*attr));
	return ret;
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	cqs_destroy(id);
}

/* ---- the synchronous endpoints ---- */

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cm_id *c;
	int ret;

	if (id == NULL || res == NULL)
		return CM_ERR(EINVAL);
	ret = cm_create_id2(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space,
			    (enum ibv_qp_type)res->ai_qp_type);
	if (ret)
		return ret;
	c = to_cm_id(cid);
	if (res->ai_flags & RAI_PASSIVE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = rdma_bind_addr(cid, res->ai_src_addr ? res->ai_src_addr :
					  (struct sockaddr *)&any);
		if (ret)
			goto err;
		if (pd)
			cid->pd = pd;
		if (qp_init_attr) {
			c->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (c->ep_qp_attr == NULL) {
				ret = CM_ERR(ENOMEM);
				goto err;
			}
			*c->ep_qp_attr = *qp_init_attr;
			c->ep_qp_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		}
		*id = cid;
		return 0;
	}
	ret = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
	if (ret == 0)
		ret = res->ai_route_len ? CM_ERR(EINVAL) : rdma_resolve_route(cid, 2000);
	if (ret == 0 && qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		ret = rdma_create_qp(cid, pd, qp_init_attr);
	}
	if (ret)
		goto err;
	*id = cid;
	return 0;
err:
	rdma_destroy_ep(cid);
	return ret;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);	/* frees the saved QP attributes */
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cm_id *l = to_cm_id(listen);
	struct rdma_cm_event *ev;
	int ret;

	if (listen == NULL || id == NULL || !l->sync)
		return CM_ERR(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	ret = rdma_get_cm_event(listen->channel, &ev);
	if (ret)
		return ret;
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		ret = CM_ERR(ECONNREFUSED);
		goto err;
	}
	if (ev->status) {
		ret = CM_ERR(ev->status < 0 ? -ev->status : ev->status);
		goto err;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = CM_ERR(EINVAL);
		goto err;
	}
	/* the request is a synchronous id of its own, as its listener */
	ret = rdma_migrate_id(ev->id, NULL);
	if (ret)
		goto err;
	if (l->ep_qp_attr) {
		struct ibv_qp_init_attr attr = *l->ep_qp_attr;

		ret = rdma_create_qp(ev->id, listen->pd, &attr);
		if (ret)
			goto err;
	}
	*id = ev->id;
	(*id)->event = ev;
	return 0;
err:
	listen->event = ev;
	return ret;
}
