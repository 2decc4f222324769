/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager on DPDK's telemetry socket (dpdk-telemetry.py), as
 * the devices are (drivers/rdma/roce/roce_telemetry.c):
 *   /droce/cm            its devices' MAD counters, the ids and listen ports
 *   /droce/cm_ids        each id by local communication ID: state, addresses
 *   /droce/cm_id,<id>    one id: state, addresses, QP, peer, the connection
 * Registered by cm_init once the CM is up (EAL is then, the devices being
 * open); the callbacks run on the telemetry thread and read under cm.lock,
 * which the API and the CM thread hold only briefly.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "cm_loc.h"

static const char *const state_name[] = {
	[CM_IDLE] = "IDLE", [CM_ADDR_QUERY] = "ADDR_QUERY", [CM_ADDR_BOUND] = "ADDR_BOUND",
	[CM_ROUTE_QUERY] = "ROUTE_QUERY", [CM_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
	[CM_LISTEN] = "LISTEN", [CM_REQ_SENT] = "REQ_SENT", [CM_REQ_RCVD] = "REQ_RCVD",
	[CM_REP_RCVD] = "REP_RCVD", [CM_REP_SENT] = "REP_SENT",
	[CM_ESTABLISHED] = "ESTABLISHED", [CM_DREQ_SENT] = "DREQ_SENT",
	[CM_DISCONNECTED] = "DISCONNECTED", [CM_TIMEWAIT] = "TIMEWAIT",
	[CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD", [CM_UD_READY] = "UD_READY", [CM_ERROR] = "ERROR",
};

static const char *
state_str(enum cm_conn_state s)
{
	return (unsigned int)s < sizeof(state_name) / sizeof(state_name[0]) && state_name[s] ?
	       state_name[s] : "?";
}

static void
sa_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "0.0.0.0";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, cm_sa_port(sa));
}

static int
tel_cm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *ports;
	unsigned int nid = 0, nlisten = 0, nconn = 0;
	struct cm_id *c;

	(void)cmd;
	(void)params;
	ports = rte_tel_data_alloc();
	if (ports == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(ports, RTE_TEL_INT_VAL);
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&cm.lock);
	TAILQ_FOREACH(c, &cm.ids, link) {
		nid++;
		if (c->state == CM_LISTEN) {
			nlisten++;
			rte_tel_data_add_array_int(ports, cm_sa_port(&c->id.route.addr.src_addr));
		}
		if (c->state == CM_ESTABLISHED)
			nconn++;
	}
	rte_tel_data_add_dict_int(d, "devices", cm.nb_dev);
	rte_tel_data_add_dict_int(d, "ids", (int)nid);
	rte_tel_data_add_dict_int(d, "listening", (int)nlisten);
	rte_tel_data_add_dict_int(d, "established", (int)nconn);
	rte_tel_data_add_dict_container(d, "listen_ports", ports, 0);
	/* each device's MAD counters, under its name */
	for (int i = 0; i < cm.nb_dev; i++) {
		const struct cm_dev *v = &cm.dev[i];
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			break;
		rte_tel_data_start_dict(s);
		rte_tel_data_add_dict_u64(s, "rx_mads", v->rx_mads);
		rte_tel_data_add_dict_u64(s, "tx_mads", v->tx_mads);
		rte_tel_data_add_dict_u64(s, "retransmits", v->retransmits);
		rte_tel_data_add_dict_u64(s, "rx_malformed", v->rx_malformed);
		rte_tel_data_add_dict_u64(s, "rx_unsupported", v->rx_unsupported);
		rte_tel_data_add_dict_u64(s, "rx_drops", v->rx_drops);
		rte_tel_data_add_dict_u64(s, "tx_drops", v->tx_drops);
		rte_tel_data_add_dict_u64(s, "tx_backlog", v->bl_len);
		rte_tel_data_add_dict_container(d, ibv_get_device_name(v->verbs->device), s, 0);
	}
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

static int
tel_cm_ids(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cm_id *c;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&cm.lock);
	TAILQ_FOREACH(c, &cm.ids, link) {
		char key[16], val[128], src[32], dst[32];

		snprintf(key, sizeof(key), "%#x", c->local_id);
		sa_str(&c->id.route.addr.src_addr, src, sizeof(src));
		sa_str(&c->id.route.addr.dst_addr, dst, sizeof(dst));
		if (c->state == CM_LISTEN || c->state == CM_ADDR_BOUND || c->state == CM_IDLE)
			snprintf(val, sizeof(val), "%s %s", state_str(c->state), src);
		else
			snprintf(val, sizeof(val), "%s %s -> %s", state_str(c->state), src, dst);
		rte_tel_data_add_dict_string(d, key, val);
	}
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

static int
tel_cm_id(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char buf[64], *end;
	unsigned long id;
	struct cm_id *c;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 0);
	if (*end != '\0')
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	TAILQ_FOREACH(c, &cm.ids, link)
		if (c->local_id == id)
			break;
	if (c == NULL) {
		pthread_mutex_unlock(&cm.lock);
		return -ENOENT;
	}
	rte_tel_data_start_dict(d);
	snprintf(buf, sizeof(buf), "%#x", c->local_id);
	rte_tel_data_add_dict_string(d, "local_id", buf);
	snprintf(buf, sizeof(buf), "%#x", c->remote_id);
	rte_tel_data_add_dict_string(d, "remote_id", buf);
	rte_tel_data_add_dict_string(d, "state", state_str(c->state));
	rte_tel_data_add_dict_string(d, "port_space", c->id.ps == RDMA_PS_TCP ? "TCP" :
				     c->id.ps == RDMA_PS_UDP ? "UDP" : c->id.ps == RDMA_PS_IB ? "IB" :
				     "IPOIB");
	rte_tel_data_add_dict_string(d, "device", c->dev != NULL ?
				     ibv_get_device_name(c->dev->verbs->device) : "");
	sa_str(&c->id.route.addr.src_addr, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "src", buf);
	sa_str(&c->id.route.addr.dst_addr, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "dst", buf);
	rte_tel_data_add_dict_int(d, "qp_num", (int)c->qp_num);
	rte_tel_data_add_dict_int(d, "remote_qpn", (int)c->remote_qpn);
	rte_tel_data_add_dict_int(d, "backlog", c->backlog);
	rte_tel_data_add_dict_int(d, "pending", c->pending);
	rte_tel_data_add_dict_int(d, "retries_left", c->retries);
	rte_tel_data_add_dict_int(d, "events_unacked", (int)(c->events_reported - c->events_acked));
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

/* Once, from cm_init (under cm.lock; the callbacks take it on another thread). */
void
cm_telemetry_register(void)
{
	rte_telemetry_register_cmd("/droce/cm", tel_cm,
				   "The connection manager: MAD counters by device, ids, listen ports. "
				   "No parameters");
	rte_telemetry_register_cmd("/droce/cm_ids", tel_cm_ids,
				   "The connection manager's ids by local ID: state, addresses. "
				   "No parameters");
	rte_telemetry_register_cmd("/droce/cm_id", tel_cm_id,
				   "A connection manager id. Parameters: its local ID");
}
