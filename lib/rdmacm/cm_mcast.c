/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast joins on UD ids, as Linux's rdma_cm does them on RoCEv2: the
 * group's GID is its IPv4 address mapped (::ffff:a.b.c.d), the join is
 * local (no SA on Ethernet; the device filters the group's MAC, 01:00:5e
 * and the address's low 23 bits), and RDMA_CM_EVENT_MULTICAST_JOIN follows
 * at once with the address vector to send to the group: QPN 0xffffff, the
 * UDP port space's Q_Key, the join's context in private_data. As with
 * rdma-core, the id's QP is attached to the group when the application
 * takes that event (unless it joined as a send-only member), and detached
 * by rdma_leave_multicast.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_loc.h"

#define CM_MC_QPN	0xffffff

static struct cm_mc *
mc_find(struct cm_id *c, const struct sockaddr_in *a)
{
	struct cm_mc *mc;

	TAILQ_FOREACH(mc, &c->mcs, link)
		if (mc->addr.sin_addr.s_addr == a->sin_addr.s_addr)
			return mc;
	return NULL;
}

/* Under cm.lock: no queued event of @c names @mc any more (it is being left). */
static void
mc_forget(struct cm_id *c, struct cm_mc *mc)
{
	struct cm_event *e;

	TAILQ_FOREACH(e, &c->chan->events, link)
		if (e->mc == mc) {
			e->mc = NULL;
			e->action = CM_ACT_NONE;
		}
}

static int
join(struct rdma_cm_id *id, const struct sockaddr *addr, uint32_t flags, void *context)
{
	const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
	struct cm_id *c = to_cm_id(id);
	struct cm_event *e;
	struct cm_mc *mc;
	int ret = 0;

	if (id == NULL || addr == NULL)
		return CM_ERR(EINVAL);
	if (addr->sa_family != AF_INET)
		return CM_ERR(addr->sa_family == AF_INET6 ? EAFNOSUPPORT : EINVAL);
	if (!IN_MULTICAST(ntohl(a->sin_addr.s_addr)) || flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return CM_ERR(EINVAL);
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return CM_ERR(ENOMEM);
	pthread_mutex_lock(&cm.lock);
	/* the kernel's rule: bound to a device, by rdma_bind_addr or rdma_resolve_addr */
	if (c->dev == NULL || (c->state != CM_ADDR_BOUND && c->state != CM_ROUTE_RESOLVED &&
			       c->state != CM_UD_READY)) {
		ret = c->dev == NULL ? ENODEV : EINVAL;
		goto out;
	}
	e = cm_event_new(c, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (e == NULL) {
		ret = ENOMEM;
		goto out;
	}
	mc->addr = *a;
	mc->context = context;
	mc->join_flags = flags;
	mc->mgid.raw[10] = mc->mgid.raw[11] = 0xff;
	memcpy(&mc->mgid.raw[12], &a->sin_addr.s_addr, 4);
	TAILQ_INSERT_TAIL(&c->mcs, mc, link);
	e->ev.param.ud.private_data = context;
	e->ev.param.ud.qp_num = CM_MC_QPN;
	e->ev.param.ud.qkey = RDMA_UDP_QKEY;
	e->ev.param.ud.ah_attr = (struct ibv_ah_attr){
		.is_global = 1, .port_num = c->id.port_num,
		.grh = { .dgid = mc->mgid, .sgid_index = 0, .hop_limit = 64,
			 .traffic_class = c->tos },
	};
	e->action = CM_ACT_MC_JOIN;
	e->mc = mc;
	cm_event_post(c->chan, e);
	mc = NULL;
out:
	pthread_mutex_unlock(&cm.lock);
	free(mc);
	return ret ? CM_ERR(ret) : 0;
}

/* Under cm.lock, in rdma_get_cm_event: the join is taken; attach the QP. */
void
cm_mc_joined(struct cm_id *c, struct cm_event *e)
{
	struct cm_mc *mc = e->mc;

	if (mc == NULL || c->id.qp == NULL || mc->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return;
	if (ibv_attach_mcast(c->id.qp, &mc->mgid, 0) == 0) {
		mc->attached = true;
		return;
	}
	e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
	e->ev.status = -errno;
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return join(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	if (attr == NULL || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    (attr->comp_mask & ~(uint32_t)(RDMA_CM_JOIN_MC_ATTR_ADDRESS |
					   RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)))
		return CM_ERR(EINVAL);
	return join(id, attr->addr, attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS ?
				    attr->join_flags : RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *c = to_cm_id(id);
	struct cm_mc *mc;

	if (id == NULL || addr == NULL || addr->sa_family != AF_INET)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	mc = mc_find(c, (const struct sockaddr_in *)addr);
	if (mc != NULL) {
		TAILQ_REMOVE(&c->mcs, mc, link);
		mc_forget(c, mc);
		if (mc->attached && c->id.qp != NULL)
			ibv_detach_mcast(c->id.qp, &mc->mgid, 0);
	}
	pthread_mutex_unlock(&cm.lock);
	if (mc == NULL)
		return CM_ERR(EADDRNOTAVAIL);
	free(mc);
	return 0;
}

/* Under cm.lock: rdma_destroy_id. The QP is gone already (rdma_cma.h's order). */
void
cm_mc_leave_all(struct cm_id *c)
{
	struct cm_mc *mc;

	while ((mc = TAILQ_FIRST(&c->mcs)) != NULL) {
		TAILQ_REMOVE(&c->mcs, mc, link);
		mc_forget(c, mc);
		free(mc);
	}
}
