/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of libibverbs' exported helpers that have a real meaning for a
 * droce device: rate and event strings, device index, P_Key index, the GID
 * table and GID type, ibdev "sysfs" attributes, AH from a received UD
 * completion, fork status and the kernel-ABI struct converters. Entry points
 * droce does not implement are stubs in dropin/ibverbs_stubs.c.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "verbs_loc.h"

/* rdma-core's driver.h declarations of the helpers defined here. */
enum droce_gid_type_sysfs {
	DROCE_GID_TYPE_SYSFS_IB_ROCE_V1,
	DROCE_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum droce_gid_type_sysfs *type);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

/* --- strings and rates (man ibv_event_type_str, ibv_rate_to_mult) --- */
const char *
ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const s[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if ((unsigned int)event >= RTE_DIM(s) || s[event] == NULL)
		return "unknown";
	return s[event];
}

static const struct {
	enum ibv_rate rate;
	int mult;		/* of 2.5 Gb/s; -1: not a multiple */
	int mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },
	{ IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },
	{ IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },
	{ IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	for (unsigned int i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (unsigned int i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].mult == mult && mult > 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (unsigned int i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (unsigned int i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* --- device, P_Key and GID helpers --- */
int
ibv_get_device_index(struct ibv_device *device)
{
	struct droce_rdev *rdev = container_of(device, struct droce_device, ibdev)->rdev;
	unsigned int n = droce_rdev_count();

	for (unsigned int i = 0; i < n; i++)
		if (droce_rdev_get(i) == rdev)
			return i;
	return -1;
}

/* man ibv_get_pkey_index: the index of @pkey, or -1 */
int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;

	for (int i = 0;; i++) {
		if (ibv_query_pkey(context, port_num, i, &p) != 0)
			return -1;
		if (p == pkey)
			return i;
	}
}

ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;

	size_t n = 0;

	if (flags || entry_size < sizeof(e))
		return -EINVAL;
	/* the populated entries only, as the kernel's ib_uverbs gid table */
	for (uint32_t i = 0; i < DROCE_GID_TBL_LEN; i++) {
		if (_ibv_query_gid_ex(context, 1, i, &e, 0, sizeof(e)) != 0)
			continue;
		if (n == max_entries)
			return -EINVAL;		/* they do not fit */
		memcpy((uint8_t *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

/* IBVERBS_PRIVATE: ibv_devinfo prints a RoCE v2 GID as an IPv6 address */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		   unsigned int index, enum droce_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int ret;

	ret = _ibv_query_gid_ex(context, port_num, index, &e, 0, sizeof(e));
	if (ret == ENODATA) {	/* an empty entry: rdma-core's answer for it */
		*type = DROCE_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? DROCE_GID_TYPE_SYSFS_ROCE_V2 :
		DROCE_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* --- "sysfs": a droce device has no kernel node, its attributes are made up --- */
const char *
ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");

	return env && *env ? env : "/sys";
}

/* The attribute @file of droce device @rdev: its length, or -1/ENOENT. */
int
droce_sysfs_attr(struct droce_rdev *rdev, const char *file, char *buf, size_t size)
{
	uint64_t guid = rte_be_to_cpu_64(rdev->guid);
	char v[128];

	if (strcmp(file, "board_id") == 0)
		snprintf(v, sizeof(v), "DROCE_SW");
	else if (strcmp(file, "fw_ver") == 0)
		snprintf(v, sizeof(v), "droce %s", DROCE_VERSION);
	else if (strcmp(file, "hca_type") == 0 || strcmp(file, "hw_rev") == 0)
		snprintf(v, sizeof(v), "droce");
	else if (strcmp(file, "node_type") == 0)
		snprintf(v, sizeof(v), "1: CA");
	else if (strcmp(file, "node_desc") == 0)
		snprintf(v, sizeof(v), "droce %s", rdev->name);
	else if (strcmp(file, "node_guid") == 0 || strcmp(file, "sys_image_guid") == 0)
		snprintf(v, sizeof(v), "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
			 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
			 (unsigned int)guid & 0xffff);
	else {
		errno = ENOENT;
		return -1;
	}
	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(buf, size, "%s", v);
	return strlen(buf);
}

/*
 * rdma-core reads <dir>/<file> with the trailing newline stripped. A droce
 * device's ibdev_path (/sys/class/infiniband/<name>) has no sysfs node: its
 * attributes are answered here; any other path is read from the file system.
 */
int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	static const char pfx[] = "/sys/class/infiniband/";
	char path[512];
	ssize_t len;
	int fd;

	if (strncmp(dir, pfx, sizeof(pfx) - 1) == 0) {
		struct droce_rdev *rdev = droce_rdev_by_name(dir + sizeof(pfx) - 1);

		if (rdev != NULL)
			return droce_sysfs_attr(rdev, file, buf, size);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			return -1;	/* no room for the terminator */
	}
	return len;
}

/* --- AH from a received UD completion (man ibv_init_ah_from_wc) --- */
int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	union ibv_gid sgid;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	/* RoCE: every packet carries a GRH, an AH without one is useless */
	if (!(wc->wc_flags & IBV_WC_GRH) || grh == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (ibv_query_gid(context, port_num, 0, &sgid) != 0)
		return -1;
	ah_attr->is_global = 1;
	ah_attr->grh.sgid_index = 0;
	ah_attr->grh.hop_limit = 0xff;
	{
		/* RoCEv2 over IPv4: the IPv4 header fills the GRH's last 20 bytes */
		const struct rte_ipv4_hdr *ip = droce_grh_ipv4(grh);

		if ((ip->version_ihl >> 4) == 4) {
			memset(&ah_attr->grh.dgid, 0, sizeof(ah_attr->grh.dgid));
			ah_attr->grh.dgid.raw[10] = 0xff;
			ah_attr->grh.dgid.raw[11] = 0xff;
			memcpy(&ah_attr->grh.dgid.raw[12], &ip->src_addr, 4);
			ah_attr->grh.traffic_class = ip->type_of_service;
			if (memcmp(&ip->dst_addr, &sgid.raw[12], 4) != 0) {	/* ours? */
				errno = EINVAL;
				return -1;
			}
			return 0;
		}
	}
	/* an IB GRH (RoCEv2 over IPv6 or RoCEv1): not what droce sends */
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
	ah_attr->grh.traffic_class = (ntohl(grh->version_tclass_flow) >> 20) & 0xff;
	if (memcmp(&grh->dgid, &sgid, sizeof(sgid)) != 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
		      uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}

/*
 * Fork: droce registers memory with no kernel pinning, so a child's
 * copy-on-write pages never confuse the device: nothing to prepare.
 */
enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int
ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	return 0;
}

/* --- kernel-ABI struct converters (pure copies, used by librdmacm) --- */
void
ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

void
ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}


/* The path record fields both layouts share, by name. */
#define PATH_REC_COPY(dst, src) do { \
	(dst)->dlid = (src)->dlid; (dst)->slid = (src)->slid; \
	(dst)->raw_traffic = (src)->raw_traffic; (dst)->flow_label = (src)->flow_label; \
	(dst)->hop_limit = (src)->hop_limit; (dst)->traffic_class = (src)->traffic_class; \
	(dst)->reversible = (src)->reversible; (dst)->numb_path = (src)->numb_path; \
	(dst)->pkey = (src)->pkey; (dst)->sl = (src)->sl; \
	(dst)->mtu_selector = (src)->mtu_selector; (dst)->mtu = (src)->mtu; \
	(dst)->rate_selector = (src)->rate_selector; (dst)->rate = (src)->rate; \
	(dst)->packet_life_time = (src)->packet_life_time; \
	(dst)->preference = (src)->preference; \
	(dst)->packet_life_time_selector = (src)->packet_life_time_selector; \
} while (0)

void
ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	PATH_REC_COPY(dst, src);
}

void
ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
	PATH_REC_COPY(dst, src);
}
