/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry (rte_telemetry) for droce devices, read with dpdk-telemetry.py
 * on the process's socket:
 *   /droce/devs                   the devices' names
 *   /droce/dev_info,<dev>         a device: port, addresses, MTU, progress, objects, capture
 *   /droce/stats,<dev>            its counters (as droce_dev_xstats)
 *   /droce/qps,<dev>              its QPNs
 *   /droce/qp_info,<dev>,<qpn>    a QP: type, state, PSNs, queue depths, attributes,
 *                                 its counters (as droce_qp_xstats)
 *   /droce/neigh,<dev>            its ARP table
 * <dev> is a name ("droce0") or an index in /droce/devs. The callbacks run
 * on the telemetry thread, a control thread: they read the engine's
 * counters and PSNs as they are at that moment, and walk the QP table under
 * the device's lock, which keeps a QP from being freed meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "droce.h"
#include "roce_loc.h"

static const char *const qp_state_name[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

static const char *
qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	default: return "other";
	}
}

/* The device @s names (a name or an index); the rest of @s in *@rest. */
static struct roce_dev *
dev_of(const char *s, const char **rest)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	size_t n;
	char *end;
	unsigned long i;

	if (s == NULL || *s == '\0')
		return NULL;
	n = strcspn(s, ",");
	*rest = s[n] == ',' ? s + n + 1 : NULL;
	if (n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	i = strtoul(name, &end, 0);
	if (*end == '\0' && end != name) {
		struct droce_rdev *r = i < droce_rdev_count() ? droce_rdev_get(i) : NULL;

		return r ? to_roce_dev(r) : NULL;
	}
	{
		struct droce_rdev *r = droce_rdev_by_name(name);

		return r ? to_roce_dev(r) : NULL;
	}
}

static void
ip_str(rte_be32_t ip, char *buf, size_t len)
{
	const uint8_t *b = (const uint8_t *)&ip;

	snprintf(buf, len, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

static int
tel_devs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned int i = 0; i < droce_rdev_count(); i++) {
		struct droce_rdev *r = droce_rdev_get(i);

		if (r != NULL)
			rte_tel_data_add_array_string(d, r->name);
	}
	return 0;
}

static int
tel_dev_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	struct roce_dev *dev = dev_of(params, &rest);
	struct droce_dev_objects o;
	char buf[64];

	RTE_SET_USED(cmd);
	if (dev == NULL)
		return -EINVAL;
	dev->rdev.ops->objects_get(&dev->rdev, &o);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", dev->name);
	rte_tel_data_add_dict_string(d, "ethdev", dev->ethdev_name);
	rte_tel_data_add_dict_int(d, "port_id", dev->port_id);
	/* its own ethdev port (roce_ethdev.c); -1: none (ethport=0, or closed) */
	rte_tel_data_add_dict_int(d, "own_port_id", __atomic_load_n(&dev->eth.present, __ATOMIC_ACQUIRE) ?
				  dev->eth.port_id : -1);
	ip_str(dev->ip, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "ip", buf);
	snprintf(buf, sizeof(buf), RTE_ETHER_ADDR_PRT_FMT, RTE_ETHER_ADDR_BYTES(&dev->mac));
	rte_tel_data_add_dict_string(d, "mac", buf);
	snprintf(buf, sizeof(buf), "0x%016" PRIx64, rte_be_to_cpu_64(dev->guid));
	rte_tel_data_add_dict_string(d, "node_guid", buf);
	rte_tel_data_add_dict_int(d, "mtu", dev->mtu);
	rte_tel_data_add_dict_int(d, "ib_mtu", dev->ib_mtu);
	rte_tel_data_add_dict_int(d, "queues", dev->nb_q);
	rte_tel_data_add_dict_string(d, "steering", roce_steer_name(dev->steer));
	/* the least message sent without a copy (zcopy=), 0: none */
	rte_tel_data_add_dict_int(d, "zcopy", (int)dev->zc_min);
	rte_tel_data_add_dict_string(d, "port_state",
				     __atomic_load_n(&dev->port_up, __ATOMIC_RELAXED) ?
				     "ACTIVE" : "DOWN");
	if (roce_engine_lcore(dev) < 0)
		snprintf(buf, sizeof(buf), "inline");
	else
		snprintf(buf, sizeof(buf), "lcore %d", roce_engine_lcore(dev));
	rte_tel_data_add_dict_string(d, "progress", buf);
	rte_tel_data_add_dict_int(d, "contexts", o.contexts);
	rte_tel_data_add_dict_int(d, "pds", o.pds);
	rte_tel_data_add_dict_int(d, "mrs", o.mrs);
	rte_tel_data_add_dict_int(d, "cqs", o.cqs);
	rte_tel_data_add_dict_int(d, "srqs", o.srqs);
	rte_tel_data_add_dict_int(d, "qps", o.qps);
	rte_tel_data_add_dict_int(d, "ahs", o.ahs);
	rte_tel_data_add_dict_int(d, "mbufs_in_use", o.mbufs_in_use);
	{
		const char *path;
		uint64_t written, dropped;
		int err;

		if (roce_capture_info(dev, &path, &written, &dropped, &err)) {
			rte_tel_data_add_dict_string(d, "pcapng", path);
			rte_tel_data_add_dict_u64(d, "pcapng_written", written);
			rte_tel_data_add_dict_u64(d, "pcapng_dropped", dropped);
			rte_tel_data_add_dict_string(d, "pcapng_error", err ? strerror(err) : "");
		}
	}
	return 0;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest, *names[128];
	struct roce_dev *dev = dev_of(params, &rest);
	uint64_t values[128];
	int n;

	RTE_SET_USED(cmd);
	if (dev == NULL)
		return -EINVAL;
	n = dev->rdev.ops->xstats_get(&dev->rdev, names, values, (int)RTE_DIM(names));
	rte_tel_data_start_dict(d);
	for (int i = 0; i < n && i < (int)RTE_DIM(names); i++)
		rte_tel_data_add_dict_u64(d, names[i], values[i]);
	return 0;
}

static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	struct roce_dev *dev = dev_of(params, &rest);

	RTE_SET_USED(cmd);
	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < dev->qp_hi; i++)
		if (dev->qp_tbl[i] != NULL)
			rte_tel_data_add_array_int(d, (int)dev->qp_tbl[i]->fp.qpn);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static void
wq_info(struct rte_tel_data *d, const char *prefix, const struct droce_wq *wq)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_size", prefix);
	rte_tel_data_add_dict_int(d, key, (int)droce_wq_cap(wq));
	snprintf(key, sizeof(key), "%s_posted", prefix);
	rte_tel_data_add_dict_int(d, key, (int)(droce_wq_cap(wq) - droce_wq_room(wq)));
}

static int
tel_qp_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	struct roce_dev *dev = dev_of(params, &rest);
	struct roce_qp *qp = NULL;
	char buf[32];
	unsigned long qpn;
	char *end;

	RTE_SET_USED(cmd);
	if (dev == NULL || rest == NULL)
		return -EINVAL;
	qpn = strtoul(rest, &end, 0);
	if (*end != '\0' || end == rest)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < dev->qp_hi && qp == NULL; i++)
		if (dev->qp_tbl[i] != NULL && dev->qp_tbl[i]->fp.qpn == qpn)
			qp = dev->qp_tbl[i];
	if (qp == NULL) {
		pthread_mutex_unlock(&dev->lock);
		return -ENOENT;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "qpn", (int)qp->fp.qpn);
	rte_tel_data_add_dict_string(d, "type", qp_type_name(qp->fp.type));
	rte_tel_data_add_dict_string(d, "state", qp_state_name[roce_qp_state(qp) % 7]);
	rte_tel_data_add_dict_int(d, "dest_qpn", (int)qp->attr.dest_qp_num);
	ip_str(qp->av.dip, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "dest_ip", buf);
	rte_tel_data_add_dict_int(d, "path_mtu", (int)qp->mtu);
	rte_tel_data_add_dict_int(d, "udp_sport", qp->sport);
	rte_tel_data_add_dict_int(d, "queue", qp->q->id);
	rte_tel_data_add_dict_int(d, "timeout", qp->attr.timeout);
	rte_tel_data_add_dict_int(d, "retry_cnt", qp->attr.retry_cnt);
	rte_tel_data_add_dict_int(d, "rnr_retry", qp->attr.rnr_retry);
	rte_tel_data_add_dict_int(d, "max_rd_atomic", qp->attr.max_rd_atomic);
	rte_tel_data_add_dict_int(d, "max_dest_rd_atomic", qp->attr.max_dest_rd_atomic);
	/* the engine's, read as they are now */
	rte_tel_data_add_dict_int(d, "sq_psn", (int)qp->e.psn);
	rte_tel_data_add_dict_int(d, "sq_una", (int)qp->e.una);
	rte_tel_data_add_dict_int(d, "rq_epsn", (int)qp->e.epsn);
	rte_tel_data_add_dict_int(d, "msn", (int)qp->e.msn);
	rte_tel_data_add_dict_int(d, "sq_in_flight", (int)(qp->e.win_tail - qp->e.win_head));
	rte_tel_data_add_dict_int(d, "retry_left", qp->e.retry_left);
	rte_tel_data_add_dict_int(d, "rnr_left", qp->e.rnr_left);
	wq_info(d, "sq", &qp->fp.sq);
	if (qp->srq == NULL)
		wq_info(d, "rq", &qp->fp.rq);
	else
		rte_tel_data_add_dict_string(d, "rq", "SRQ");
	/* its counters (droce_qp_xstats), under their own names */
	{
		const char *names[64];
		uint64_t values[64];
		int n = roce_qp_xstats_get(qp, names, values, (int)RTE_DIM(names));

		for (int i = 0; i < n && i < (int)RTE_DIM(names); i++)
			rte_tel_data_add_dict_u64(d, names[i], values[i]);
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static int
tel_neigh(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	struct roce_dev *dev = dev_of(params, &rest);

	RTE_SET_USED(cmd);
	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	/* the engine's table: each entry a consistent copy, or left out */
	for (unsigned int i = 0; i < DROCE_NEIGH_MAX; i++) {
		struct roce_neigh n;
		char ipb[32], macb[32];

		if (!roce_neigh_load(&dev->neigh[i], &n) || n.ip == 0)
			continue;
		ip_str(n.ip, ipb, sizeof(ipb));
		if (n.valid)
			snprintf(macb, sizeof(macb), RTE_ETHER_ADDR_PRT_FMT "%s",
				 RTE_ETHER_ADDR_BYTES(&n.mac), n.is_static ? " static" : "");
		else
			snprintf(macb, sizeof(macb), "incomplete");
		rte_tel_data_add_dict_string(d, ipb, macb);
	}
	return 0;
}

RTE_INIT(roce_telemetry_init)
{
	rte_telemetry_register_cmd("/droce/devs", tel_devs, "The droce devices. No parameters");
	rte_telemetry_register_cmd("/droce/dev_info", tel_dev_info,
				   "A droce device. Parameters: device name or index");
	rte_telemetry_register_cmd("/droce/stats", tel_stats,
				   "A droce device's counters. Parameters: device name or index");
	rte_telemetry_register_cmd("/droce/qps", tel_qps,
				   "A droce device's QPNs. Parameters: device name or index");
	rte_telemetry_register_cmd("/droce/qp_info", tel_qp_info,
				   "A QP. Parameters: device name or index, QPN");
	rte_telemetry_register_cmd("/droce/neigh", tel_neigh,
				   "A droce device's ARP table. Parameters: device name or index");
}
