/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver interface (lib/rdev/droce_rdev_pmd.h): the ops table, and the
 * device-level ops (contexts, port state, counters). The object ops live in
 * each object's own file.
 */
#include <rte_mempool.h>

#include "droce.h"
#include "roce_loc.h"

static int
rdev_open(struct droce_rdev *rdev)
{
	return roce_dev_open(to_roce_dev(rdev));
}

static void
rdev_close(struct droce_rdev *rdev)
{
	struct roce_dev *dev = to_roce_dev(rdev);

	pthread_mutex_lock(&dev->lock);
	if (dev->ctx_refs == 1)	/* the last context: no more events for the facade */
		__atomic_store_n(&dev->rdev.async_cb, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	roce_dev_quiesce(dev);
	roce_dev_close(dev);
}

static void
rdev_port_query(struct droce_rdev *rdev, struct droce_rdev_port *port)
{
	struct roce_dev *dev = to_roce_dev(rdev);
	struct rte_eth_link link = { 0 };

	/* the state announced by IBV_EVENT_PORT_ACTIVE/ERR, a change announced first */
	port->up = roce_port_check(dev);
	rte_eth_link_get_nowait(dev->port_id, &link);
	port->speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
}

static int
rdev_objects_get(struct droce_rdev *rdev, struct droce_dev_objects *o)
{
	struct roce_dev *dev = to_roce_dev(rdev);

	pthread_mutex_lock(&dev->lock);
	o->contexts = dev->ctx_refs;
	o->pds = dev->nb_pd;
	o->mrs = dev->nb_mr;
	o->cqs = dev->nb_cq;
	o->srqs = dev->nb_srq;
	o->qps = dev->nb_qp;
	o->ahs = dev->nb_ah;
	pthread_mutex_unlock(&dev->lock);
	/* inline progress: no iteration (nor the waker's) holds frames while we look */
	if (dev->lcore < 0)
		roce_dev_lock_all(dev);
	o->mbufs_in_use = rte_mempool_in_use_count(dev->mp);
	o->mbufs_staged = 0;
	for (uint16_t k = 0; k < dev->nb_q; k++)
		o->mbufs_staged += __atomic_load_n(&dev->q[k]->nb_tx, __ATOMIC_RELAXED);
	if (dev->lcore < 0)
		roce_dev_unlock_all(dev);
	return 0;
}

/* A counter the engine is writing meanwhile: as it is now. */
static inline uint64_t
cnt_at(const void *base, size_t off)
{
	return __atomic_load_n((const uint64_t *)((const uint8_t *)base + off), __ATOMIC_RELAXED);
}

/* The device's counters: the sum of its queues'. */
void
roce_dev_stats_sum(const struct roce_dev *dev, struct roce_stats *sum)
{
	uint64_t *out = (uint64_t *)sum;

	RTE_BUILD_BUG_ON(sizeof(*sum) % sizeof(uint64_t) != 0);
	memset(sum, 0, sizeof(*sum));
	for (uint16_t k = 0; k < dev->nb_q; k++)
		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			out[i] += cnt_at(&dev->q[k]->stats, i * sizeof(uint64_t));
}

static int
rdev_stats_get(struct droce_rdev *rdev, struct droce_dev_stats *st)
{
	struct roce_stats sum;
	const struct roce_stats *s = &sum;

	roce_dev_stats_sum(to_roce_dev(rdev), &sum);

	st->rx_pkts = s->rx_pkts;
	st->tx_pkts = s->tx_pkts;
	st->rx_bytes = s->rx_bytes;
	st->tx_bytes = s->tx_bytes;
	st->rx_drops = s->rx_drop_not_ip + s->rx_drop_not_mine + s->rx_drop_bad_ip +
		s->rx_drop_not_roce + s->rx_drop_truncated + s->rx_drop_bad_icrc +
		s->rx_drop_bad_bth + s->rx_drop_no_qp + s->rx_drop_bad_qkey +
		s->rx_drop_qp_state + s->rx_drop_no_wqe + s->rx_drop_seq + s->rx_drop_bad_len +
		s->rx_drop_mcast;
	st->rx_drop_bad_icrc = s->rx_drop_bad_icrc;
	st->rx_drop_truncated = s->rx_drop_truncated;
	st->rx_drop_no_qp = s->rx_drop_no_qp;
	st->retransmits = s->retransmits;
	st->rnr_naks_sent = s->rnr_naks_sent;
	return 0;
}

#define XS(f) { #f, offsetof(struct roce_stats, f) }
static const struct {
	const char *name;
	size_t off;
} xstats[] = {
	XS(rx_pkts), XS(tx_pkts), XS(rx_bytes), XS(tx_bytes), XS(rx_drop_not_ip),
	XS(rx_drop_not_mine), XS(rx_drop_bad_ip), XS(rx_drop_not_roce), XS(rx_drop_truncated),
	XS(rx_drop_bad_icrc), XS(rx_drop_bad_bth), XS(rx_drop_no_qp), XS(rx_drop_bad_qkey),
	XS(rx_drop_qp_state), XS(rx_drop_no_wqe), XS(rx_drop_seq), XS(rx_drop_bad_len),
	XS(rx_dup), XS(rx_arp), XS(rx_drop_bad_arp), XS(tx_arp), XS(tx_drop_no_mbuf),
	XS(tx_drop_full), XS(tx_busy), XS(tx_no_neigh), XS(cq_overflow), XS(retransmits),
	XS(rnr_naks_sent), XS(naks_sent), XS(naks_rcvd), XS(rx_drop_mcast), XS(rx_mcast),
	XS(timeouts), XS(rnr_naks_rcvd), XS(rx_ethdev), XS(tx_ethdev), XS(share_fwd), XS(share_drop),
	XS(q_handoff), XS(q_handoff_drop), XS(fast_retransmits), XS(tx_zcopy), XS(tx_zcopy_copied),
	XS(tx_direct), XS(rx_direct),
	{ "naks_sent_seq_err", offsetof(struct roce_stats, naks_sent_kind[0]) },
	{ "naks_sent_inv_req", offsetof(struct roce_stats, naks_sent_kind[1]) },
	{ "naks_sent_rem_access", offsetof(struct roce_stats, naks_sent_kind[2]) },
	{ "naks_sent_rem_op", offsetof(struct roce_stats, naks_sent_kind[3]) },
	{ "naks_rcvd_seq_err", offsetof(struct roce_stats, naks_rcvd_kind[0]) },
	{ "naks_rcvd_inv_req", offsetof(struct roce_stats, naks_rcvd_kind[1]) },
	{ "naks_rcvd_rem_access", offsetof(struct roce_stats, naks_rcvd_kind[2]) },
	{ "naks_rcvd_rem_op", offsetof(struct roce_stats, naks_rcvd_kind[3]) },
};
#undef XS

/*
 * The device's counters: up to @n names and values (either array may be
 * NULL), and how many there are. droce_dev_xstats and the device's ethdev
 * port (roce_ethdev.c) both read them here.
 */
int
roce_dev_xstats_get(struct roce_dev *dev, const char **names, uint64_t *values, int n)
{
	struct roce_stats sum;
	const struct roce_stats *s = &sum;

	roce_dev_stats_sum(dev, &sum);
	for (int i = 0; i < n && i < (int)RTE_DIM(xstats); i++) {
		if (names != NULL)
			names[i] = xstats[i].name;
		if (values != NULL)
			values[i] = cnt_at(s, xstats[i].off);
	}
	return RTE_DIM(xstats);
}

static int
rdev_xstats_get(struct droce_rdev *rdev, const char **names, uint64_t *values, int n)
{
	return roce_dev_xstats_get(to_roce_dev(rdev), names, values, n);
}

/* a QP's packet and byte counters (e.traffic), then the others (stats) */
#define QT(f) { #f, offsetof(struct roce_qp_traffic, f) }
static const struct {
	const char *name;
	size_t off;
} qp_traffic[] = {
	QT(rx_pkts), QT(rx_bytes), QT(tx_pkts), QT(tx_bytes),
};
#undef QT

#define QS(f) { #f, offsetof(struct roce_qp_stats, f) }
static const struct {
	const char *name;
	size_t off;
} qp_xstats[] = {
	QS(retransmits), QS(timeouts), QS(fast_retransmits),
	{ "naks_sent_seq_err", offsetof(struct roce_qp_stats, naks_sent_kind[0]) },
	{ "naks_sent_inv_req", offsetof(struct roce_qp_stats, naks_sent_kind[1]) },
	{ "naks_sent_rem_access", offsetof(struct roce_qp_stats, naks_sent_kind[2]) },
	{ "naks_sent_rem_op", offsetof(struct roce_qp_stats, naks_sent_kind[3]) },
	{ "naks_rcvd_seq_err", offsetof(struct roce_qp_stats, naks_rcvd_kind[0]) },
	{ "naks_rcvd_inv_req", offsetof(struct roce_qp_stats, naks_rcvd_kind[1]) },
	{ "naks_rcvd_rem_access", offsetof(struct roce_qp_stats, naks_rcvd_kind[2]) },
	{ "naks_rcvd_rem_op", offsetof(struct roce_qp_stats, naks_rcvd_kind[3]) },
	QS(rnr_naks_sent), QS(rnr_naks_rcvd), QS(rx_dup), QS(rx_drop_seq), QS(rx_drop_qp_state),
	QS(rx_drop_no_wqe), QS(rx_drop_bad_len), QS(rx_drop_bad_qkey),
};
#undef QS

/* A QP's counters, as rdev_xstats_get: up to @n, and how many there are. */
int
roce_qp_xstats_get(const struct roce_qp *qp, const char **names, uint64_t *values, int n)
{
	const int nt = RTE_DIM(qp_traffic);

	for (int i = 0; i < n && i < nt + (int)RTE_DIM(qp_xstats); i++) {
		names[i] = i < nt ? qp_traffic[i].name : qp_xstats[i - nt].name;
		values[i] = i < nt ? cnt_at(&qp->e.traffic, qp_traffic[i].off) :
			    cnt_at(&qp->stats, qp_xstats[i - nt].off);
	}
	return nt + RTE_DIM(qp_xstats);
}

static int
rdev_qp_xstats_get(struct droce_rdev_qp *fp, const char **names, uint64_t *values, int n)
{
	return roce_qp_xstats_get(to_roce_qp(fp), names, values, n);
}

static void
rdev_quiesce(struct droce_rdev *rdev)
{
	roce_dev_quiesce(to_roce_dev(rdev));
}

static void
rdev_wait_begin(struct droce_rdev *rdev)
{
	roce_wait_begin(to_roce_dev(rdev));
}

static void
rdev_wait_end(struct droce_rdev *rdev)
{
	roce_wait_end(to_roce_dev(rdev));
}

static int
rdev_neigh_resolve(struct droce_rdev *rdev, uint32_t ip, uint8_t mac[6])
{
	struct rte_ether_addr m;
	int ret = roce_neigh_query(to_roce_dev(rdev), ip, &m);

	if (ret == 0)
		memcpy(mac, m.addr_bytes, RTE_ETHER_ADDR_LEN);
	return ret;
}

static uint32_t
rdev_share_owner(struct droce_rdev *rdev)
{
	RTE_SET_USED(rdev);
	return roce_share_owner();
}

static int
rdev_share_listen(struct droce_rdev *rdev, uint64_t sid, bool on)
{
	return roce_share_listen(to_roce_dev(rdev), sid, on);
}

/* The engine's table: each entry a consistent copy (roce_neigh_load), or left out. */
static int
rdev_neigh_get(struct droce_rdev *rdev, struct droce_neigh *tbl, int n)
{
	struct roce_dev *dev = to_roce_dev(rdev);
	int k = 0;

	for (unsigned int i = 0; i < DROCE_NEIGH_MAX; i++) {
		struct roce_neigh e;

		if (!roce_neigh_load(&dev->neigh[i], &e) || e.ip == 0)
			continue;
		if (k < n) {
			tbl[k].ip = e.ip;
			memcpy(tbl[k].mac, e.mac.addr_bytes, sizeof(tbl[k].mac));
			tbl[k].resolved = e.valid;
			tbl[k].is_static = e.is_static;
		}
		k++;
	}
	return k;
}

static int
rdev_capture_set(struct droce_rdev *rdev, const char *path)
{
	return roce_capture_set(to_roce_dev(rdev), path);
}

static const struct droce_rdev_ops roce_rdev_ops = {
	.dev_open = rdev_open,
	.dev_close = rdev_close,
	.port_query = rdev_port_query,
	.objects_get = rdev_objects_get,
	.stats_get = rdev_stats_get,
	.xstats_get = rdev_xstats_get,
	.qp_xstats_get = rdev_qp_xstats_get,
	.neigh_get = rdev_neigh_get,
	.capture_set = rdev_capture_set,
	.quiesce = rdev_quiesce,
	.wait_begin = rdev_wait_begin,
	.wait_end = rdev_wait_end,
	.qp_progress = roce_progress_qp,
	.neigh_resolve = rdev_neigh_resolve,
	.share_owner = rdev_share_owner,
	.share_listen = rdev_share_listen,
	.pd_alloc = roce_pd_alloc,
	.pd_free = roce_pd_free,
	.mr_reg = roce_mr_reg,
	.mr_dereg = roce_mr_dereg,
	.mr_rereg = roce_mr_rereg,
	.mr_advise = roce_mr_advise,
	.mw_alloc = roce_mw_alloc,
	.mw_dealloc = roce_mw_dealloc,
	.cq_create = roce_cq_create,
	.cq_destroy = roce_cq_destroy,
	.cq_resize = roce_cq_resize,
	.cq_arm = roce_cq_arm,
	.srq_create = roce_srq_create,
	.srq_tm_enable = roce_srq_tm_enable,
	.srq_limit_set = roce_srq_limit_set,
	.srq_limit_get = roce_srq_limit_get,
	.srq_destroy = roce_srq_destroy,
	.xrcd_alloc = roce_xrcd_alloc,
	.xrcd_free = roce_xrcd_free,
	.srq_xrc_enable = roce_srq_xrc_enable,
	.tm_release = roce_tm_release,
	.qp_create = roce_qp_create,
	.qp_modify = roce_qp_modify,
	.qp_query = roce_qp_query,
	.qp_destroy = roce_qp_destroy,
	.ah_create = roce_ah_create,
	.ah_destroy = roce_ah_destroy,
	.mcast_attach = roce_mcast_attach,
	.mcast_detach = roce_mcast_detach,
};

/* At probe, once the device's identity is known. */
void
roce_rdev_init(struct roce_dev *dev)
{
	snprintf(dev->rdev.name, sizeof(dev->rdev.name), "%s", dev->name);
	dev->rdev.ops = &roce_rdev_ops;
	dev->rdev.guid = dev->guid;
	dev->rdev.ip = dev->ip;
	dev->rdev.ib_mtu = dev->ib_mtu;
	dev->rdev.progress = roce_progress;
}
