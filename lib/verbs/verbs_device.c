/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices and contexts: the device list (EAL brought up from DROCE_EAL for
 * programs that are not DPDK programs), open/close, device/port/GID/P_Key
 * queries (events: verbs_event.c).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "droce.h"
#include "verbs_loc.h"

RTE_LOG_REGISTER(droce_verbs_logtype, lib.verbs, NOTICE);

static struct droce_device ddevs[DROCE_MAX_DEVS];
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static bool eal_tried;
static bool dev_opened;		/* a device was opened: exit_linger() has a reason */

#define DROCE_EXIT_LINGER_MS 100

/*
 * At the exit of a program whose EAL droce brought up. The frames a device
 * handed to its port last (a ping-pong's final reply, the ACK of the last
 * message) reach the peer only if it reads them before the link goes: a
 * memif peer discards what it has not read when the connection closes,
 * which happens as this process exits. So stay, and keep the devices still
 * open moving, DROCE_EXIT_LINGER_MS (default 100) milliseconds first.
 */
static void
exit_linger(void)
{
	const char *env = getenv("DROCE_EXIT_LINGER_MS");
	long ms = env && *env ? strtol(env, NULL, 10) : DROCE_EXIT_LINGER_MS;
	uint64_t end;

	if (!__atomic_load_n(&dev_opened, __ATOMIC_RELAXED) || ms <= 0)
		return;
	end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * ms;
	while (rte_get_timer_cycles() < end) {
		for (unsigned int i = 0; i < droce_rdev_count(); i++) {
			struct droce_rdev *dev = droce_rdev_get(i);

			if (dev != NULL)
				droce_rdev_progress(dev);
		}
		usleep(100);
	}
}

/*
 * DROCE_EXIT_STATS=1: at exit, each device's non-zero counters on stderr,
 * one line a device (what droce_dev_xstats returns), for a program that
 * cannot be asked through telemetry (the drop-in's unmodified programs).
 */
static void
exit_stats(void)
{
	const char *env = getenv("DROCE_EXIT_STATS");
	const char *names[128];
	uint64_t values[128];

	if (env == NULL || *env == '\0' || *env == '0')
		return;
	for (unsigned int i = 0; i < droce_rdev_count(); i++) {
		struct droce_rdev *dev = droce_rdev_get(i);
		int n;

		if (dev == NULL)
			continue;
		n = dev->ops->xstats_get(dev, names, values, (int)RTE_DIM(names));
		fprintf(stderr, "droce: %s:", dev->name);
		for (int k = 0; k < n && k < (int)RTE_DIM(names); k++)
			if (values[k] != 0)
				fprintf(stderr, " %s=%" PRIu64, names[k], values[k]);
		fputc('\n', stderr);
	}
}

/* at exit: the devices' last frames out, then their counters if asked */
static void
exit_hook(void)
{
	exit_linger();
	exit_stats();
}

/*
 * @env split at whitespace into argv[1..], after argv[0] "droce", at most
 * @max entries with the terminating NULL, in *@copy, which the caller frees
 * (or, once EAL has the argv, keeps). Returns argc or -ENOMEM.
 */
int
droce_eal_args_split(const char *env, char **copy, char **argv, int max)
{
	char *tok, *save = NULL;
	int argc = 0;

	*copy = strdup(env);
	if (*copy == NULL)
		return -ENOMEM;
	argv[argc++] = "droce";
	for (tok = strtok_r(*copy, " \t\n", &save); tok && argc < max - 1;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return argc;
}

/* DROCE_EAL's arguments as EAL was given them (a leak checker sees them kept) */
static char *eal_args_copy;

/* Bring EAL up from $DROCE_EAL (whitespace-separated arguments). */
static int
eal_from_env(void)
{
	const char *env = getenv("DROCE_EAL");
	char *copy;
	char *argv[128];
	int argc, ret, out;

	if (env == NULL || *env == '\0') {
		fprintf(stderr, "droce: no droce device: DROCE_EAL is not set "
			"(e.g. DROCE_EAL=\"--no-huge --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1\")\n");
		return -ENODEV;
	}
	argc = droce_eal_args_split(env, &copy, argv, RTE_DIM(argv));
	if (argc < 0)
		return argc;
	/*
	 * The program's stdout is its own (ibv_devices, ibv_devinfo, the
	 * pingpongs print results there): EAL and droce log to stderr, and
	 * what EAL prints during init (its usage on a bad argument) goes there
	 * too. Only when droce brings EAL up; a DPDK program keeps its own
	 * log stream.
	 */
	if (rte_lcore_count() == 0)
		rte_openlog_stream(stderr);
	fflush(stdout);
	out = dup(STDOUT_FILENO);
	if (out >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		close(out);
		out = -1;
	}
	ret = rte_eal_init(argc, argv);
	if (out >= 0) {
		fflush(stdout);
		dup2(out, STDOUT_FILENO);
		close(out);
	}
	/* EAL keeps pointers into argv: the copy stays allocated, and reachable */
	eal_args_copy = copy;
	if (ret < 0 && rte_errno != EALREADY) {
		/* some EAL failures leave rte_errno 0 ("Cannot init config") */
		fprintf(stderr, "droce: EAL initialisation from DROCE_EAL failed: %s\n",
			rte_errno ? rte_strerror(rte_errno) : "see the EAL messages above");
		return -(rte_errno ? rte_errno : EINVAL);
	}
	if (ret >= 0) {
		atexit(exit_hook);
		/* droce brought EAL up for the program: its files are droce's to remove */
		droce_eal_files_remove_at_exit();
	}
	return 0;
}

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	unsigned int n;

	pthread_mutex_lock(&list_lock);
	if (droce_rdev_count() == 0 && !eal_tried) {
		int ret;

		eal_tried = true;
		ret = eal_from_env();
		if (ret) {
			pthread_mutex_unlock(&list_lock);
			if (num_devices)
				*num_devices = 0;
			list = calloc(1, sizeof(*list));
			errno = list ? -ret : ENOMEM;
			return list;
		}
	}
	n = droce_rdev_count();
	if (n == 0) {
		fprintf(stderr, "droce: no droce device was probed (is there a --vdev=droce0,ethdev=...,ip=... "
			"and did its probe succeed? see the EAL log)\n");
	}
	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		pthread_mutex_unlock(&list_lock);
		errno = ENOMEM;
		return NULL;
	}
	if (n == 0)
		errno = ENODEV;
	for (unsigned int i = 0; i < n; i++) {
		struct droce_rdev *rdev = droce_rdev_get(i);
		struct droce_device *d = NULL;

		for (unsigned int j = 0; j < DROCE_MAX_DEVS && d == NULL; j++)
			if (ddevs[j].rdev == rdev)
				d = &ddevs[j];
		for (unsigned int j = 0; j < DROCE_MAX_DEVS && d == NULL; j++)
			if (ddevs[j].rdev == NULL || droce_rdev_by_name(ddevs[j].ibdev.name) == NULL)
				d = &ddevs[j];
		memset(d, 0, sizeof(*d));
		d->rdev = rdev;
		d->ibdev.node_type = IBV_NODE_CA;
		d->ibdev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%.32s", rdev->name);
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs-%.32s", rdev->name);
		snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path), "/dev/null");
		snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
			 "/sys/class/infiniband/%.32s", rdev->name);
		list[i] = &d->ibdev;
	}
	pthread_mutex_unlock(&list_lock);
	droce_sysfs_publish(list, n);
	if (num_devices)
		*num_devices = n;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	return container_of(device, struct droce_device, ibdev)->rdev->guid;
}

const char *
ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const s[] = { "unknown", "InfiniBand channel adapter",
		"InfiniBand switch", "InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP", "unspecified" };

	return node_type >= IBV_NODE_CA && node_type <= IBV_NODE_UNSPECIFIED ? s[node_type] : s[0];
}

const char *
ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const s[] = { "PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
		"PORT_ACTIVE", "PORT_ACTIVE_DEFER" };

	return port_state <= IBV_PORT_ACTIVE_DEFER ? s[port_state] : "invalid state";
}

int
ibv_fork_init(void)
{
	return 0;
}

/* A context on @device; with @cmd_fd >= 0 (an import) that fd is its command fd. */
static struct ibv_context *
open_device(struct ibv_device *device, int cmd_fd)
{
	struct droce_device *d = container_of(device, struct droce_device, ibdev);
	struct droce_context *dctx;
	struct ibv_context *ctx;
	char name[RTE_RING_NAMESIZE];
	int ret;

	if (d->rdev == NULL || droce_rdev_by_name(device->name) != d->rdev) {
		errno = ENODEV;
		return NULL;
	}
	dctx = calloc(1, sizeof(*dctx));
	if (dctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = &dctx->vctx.context;
	dctx->rdev = d->rdev;
	dctx->vctx.sz = sizeof(dctx->vctx);
	dctx->vctx.query_port = droce_query_port;
	dctx->vctx.query_device_ex = droce_query_device_ex;
	dctx->vctx.advise_mr = droce_advise_mr;
	droce_ex_ops_set(&dctx->vctx);
	ctx->abi_compat = (void *)UINTPTR_MAX;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->ops.post_send = droce_post_send;
	ctx->ops.post_recv = droce_post_recv;
	ctx->ops.post_srq_recv = droce_post_srq_recv;
	ctx->ops.poll_cq = droce_poll_cq;
	ctx->ops.req_notify_cq = droce_req_notify_cq;
	/* behind the ibv_alloc_mw, ibv_bind_mw and ibv_dealloc_mw inlines */
	ctx->ops.alloc_mw = droce_alloc_mw;
	ctx->ops.bind_mw = droce_bind_mw;
	ctx->ops.dealloc_mw = droce_dealloc_mw;
	snprintf(name, sizeof(name), "droce_as_%p", (void *)dctx);
	ret = droce_evq_init(&dctx->async, name, sizeof(struct ibv_async_event), DROCE_ASYNC_RING);
	if (ret) {
		errno = -ret;
		goto err_free_ctx;
	}
	ctx->async_fd = dctx->async.fd;
	/*
	 * No kernel command channel, but a file of the context's own that a
	 * program may dup and give ibv_import_device (verbs_import.c), as
	 * rdma-core's tests do; /dev/null (no import) without memfds, -1 if
	 * even that cannot be opened.
	 */
	if (cmd_fd >= 0) {
		ctx->cmd_fd = cmd_fd;
	} else {
		ctx->cmd_fd = memfd_create("droce-cmd", MFD_CLOEXEC);
		if (ctx->cmd_fd < 0)
			ctx->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	}
	droce_import_ctx_init(dctx);
	ret = d->rdev->ops->dev_open(d->rdev);
	if (ret) {
		errno = -ret;
		goto err_close_fd;
	}
	__atomic_store_n(&d->rdev->comp_cb, droce_comp_fire, __ATOMIC_RELEASE);
	__atomic_store_n(&d->rdev->async_cb, droce_async_raise, __ATOMIC_RELEASE);
	droce_ctx_add(dctx);
	__atomic_store_n(&dev_opened, true, __ATOMIC_RELAXED);
	return ctx;

err_close_fd:
	if (ctx->cmd_fd >= 0 && cmd_fd < 0)	/* an importer's fd stays its own */
		close(ctx->cmd_fd);
	droce_evq_fini(&dctx->async);
err_free_ctx:
	free(dctx);
	return NULL;
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	return open_device(device, -1);
}

struct ibv_context *
droce_open_device_fd(struct ibv_device *device, int cmd_fd)
{
	return open_device(device, cmd_fd);
}

int
ibv_close_device(struct ibv_context *context)
{
	struct droce_context *dctx = to_dctx(context);
	struct droce_rdev *rdev = dctx->rdev;

	droce_ctx_del(dctx);
	rdev->ops->dev_close(rdev);	/* the last one: no more events */
	droce_evq_fini(&dctx->async);
	if (context->cmd_fd >= 0)
		close(context->cmd_fd);
	free(dctx);
	return 0;
}

int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct droce_rdev *rdev = to_dctx(context)->rdev;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce %s", DROCE_VERSION);
	a->node_guid = rdev->guid;
	a->sys_image_guid = rdev->guid;
	a->max_mr_size = DROCE_MAX_MR_SIZE;
	a->page_size_cap = 4096;
	a->vendor_id = DROCE_VENDOR_ID;
	a->vendor_part_id = DROCE_VENDOR_PART_ID;
	a->max_qp = DROCE_MAX_QP;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	/*
	 * Only what droce has: memory windows of type 1 and 2B, as the kernel's
	 * rxe, and XRC; no SRQ resize, or N_NOTIFY_CQ (the kernel's
	 * ib_req_ncomp_notif, which no user verb reaches).
	 */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_XRC;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE;
	a->max_cq = DROCE_MAX_CQ;
	a->max_cqe = DROCE_MAX_CQE;
	a->max_mr = DROCE_MAX_MR - 1;
	a->max_mw = DROCE_MAX_MW - 1;
	a->max_pd = DROCE_MAX_PD;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = DROCE_MAX_RD_ATOMIC * DROCE_MAX_QP;
	/* atomics are CPU atomics on host memory: atomic across the whole device */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = DROCE_MAX_AH;
	a->max_mcast_grp = DROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = DROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = DROCE_MAX_MCAST_TOTAL;
	a->max_srq = DROCE_MAX_SRQ;
	a->max_srq_wr = DROCE_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	a->max_pkeys = DROCE_PKEY_TBL_LEN;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

/*
 * verbs_context op behind the ibv_query_device_ex() inline: the basic
 * attributes and tag matching (RC), and none of the other extended
 * capabilities (no ODP, timestamps, TSO, RSS, packet pacing, CQ moderation
 * or device memory).
 */
int
droce_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
		      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	ret = ibv_query_device(context, &a.orig_attr);
	if (ret)
		return ret;
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	a.tm_caps.max_rndv_hdr_size = DROCE_TM_RNDV_HDR;
	a.tm_caps.max_num_tags = DROCE_TM_MAX_TAGS;
	a.tm_caps.flags = IBV_TM_CAP_RC;
	a.tm_caps.max_ops = DROCE_TM_MAX_OPS;
	a.tm_caps.max_sge = 1;
	/*
	 * On-demand paging (drivers/rdma/roce/roce_odp.c): every transport,
	 * and the implicit MR
	 */
	a.odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a.odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a.odp_caps.per_transport_caps.uc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	a.odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_SRQ_RECV;
	/* XRC: RC's engine paths, receives only into SRQs */
	a.xrc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memset(attr, 0, attr_size);
	memcpy(attr, &a, RTE_MIN(attr_size, sizeof(a)));
	return 0;
}

static enum ibv_mtu
mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/* Port 1 of @rdev, as ibv_query_port() and the sysfs view (verbs_sysfs.c) give it. */
/* DROCE_PRIVATE_1, for the drop-in librdmacm (droce_private.h) */
int
droce_neigh_resolve(struct ibv_context *ctx, uint32_t ip, uint8_t mac[6])
{
	struct droce_rdev *rdev;
	int ret;

	if (ctx == NULL || mac == NULL)
		return EINVAL;
	rdev = to_dctx(ctx)->rdev;
	ret = rdev->ops->neigh_resolve(rdev, ip, mac);
	if (ret == -EAGAIN && __atomic_load_n(&rdev->progress, __ATOMIC_RELAXED) != NULL)
		droce_rdev_progress(rdev);	/* inline: send the request now */
	return -ret;
}

_Static_assert(DROCE_CM_ID_OWNER_BITS == DROCE_RDEV_ID_OWNER_BITS, "the CM and the driver agree");

uint32_t
droce_cm_owner(struct ibv_context *ctx)
{
	struct droce_rdev *rdev = to_dctx(ctx)->rdev;

	return rdev->ops->share_owner(rdev);
}

int
droce_cm_listen(struct ibv_context *ctx, uint64_t sid, int on)
{
	struct droce_rdev *rdev = to_dctx(ctx)->rdev;

	return -rdev->ops->share_listen(rdev, sid, on != 0);
}

void
droce_port_attr_get(struct droce_rdev *rdev, struct ibv_port_attr *out)
{
	struct ibv_port_attr a = { 0 };
	struct droce_rdev_port port;

	rdev->ops->port_query(rdev, &port);
	a.state = port.up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.phys_state = port.up ? 5 : 3;	/* LinkUp / Disabled */
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = mtu_enum(rdev->ib_mtu);
	a.gid_tbl_len = DROCE_GID_TBL_LEN;
	a.port_cap_flags = IBV_PORT_CM_SUP;
	a.max_msg_sz = DROCE_MAX_MSG;
	a.pkey_tbl_len = DROCE_PKEY_TBL_LEN;
	a.max_vl_num = 1;
	a.active_width = 2;			/* 4x */
	a.active_speed = port.speed_mbps >= 25000 ? 32 : port.speed_mbps >= 10000 ? 8 : 1;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	*out = a;
}

int
droce_query_port(struct ibv_context *context, uint8_t port_num,
		 struct ibv_port_attr *out, size_t attr_len)
{
	struct ibv_port_attr a;

	if (port_num != 1) {
		errno = EINVAL;
		return EINVAL;
	}
	droce_port_attr_get(to_dctx(context)->rdev, &a);
	memcpy(out, &a, RTE_MIN(attr_len, sizeof(a)));
	return 0;
}

#undef ibv_query_port
int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	return droce_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
				offsetof(struct ibv_port_attr, flags));
}

/*
 * GID @index of port 1: 0 with the GID, EINVAL beyond the table, ENODATA
 * for an empty entry (all but index 0), as the kernel's rdma_get_gid_attr.
 */
static int
gid_get(struct ibv_context *context, uint32_t port_num, uint32_t index, union ibv_gid *gid)
{
	struct droce_rdev *rdev = to_dctx(context)->rdev;

	if (port_num != 1 || index >= DROCE_GID_TBL_LEN)
		return EINVAL;
	if (index != 0)
		return ENODATA;
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &rdev->ip, 4);
	return 0;
}

/* An empty entry reads as zeros (rdma-core keeps the kernel's old sysfs behaviour). */
int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	int ret = index < 0 ? EINVAL : gid_get(context, port_num, (uint32_t)index, gid);

	if (ret == ENODATA) {
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { 0 };
	int ret;

	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = gid_get(context, port_num, gid_index, &e.gid);
	if (ret)
		return ret;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	*entry = e;
	return 0;
}

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (port_num != 1 || index < 0 || index >= DROCE_PKEY_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons(DROCE_DEFAULT_PKEY);
	return 0;
}
