/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in libibverbs.so.1's entry points that droce does not implement,
 * so that every symbol@version of rdma-core v44's libibverbs resolves
 * (programs and providers are linked BIND_NOW). Each one fails the way its
 * man page says a failure looks, with errno EOPNOTSUPP (so that programs
 * and test suites take it for "not supported" and skip, as they do with
 * rdma-core's own libibverbs); none crashes or pretends to succeed.
 *
 * - IBVERBS_1.1+ verbs droce has no support for yet: dmabuf MRs, object
 *   device memory import, ECE, QP-ex.
 * - IBVERBS_1.0 duplicates: the pre-2006 ABI (struct ibv_*_1_0 wrappers).
 *   Bound with the symver attribute; the IBVERBS_1.1 definitions are the
 *   defaults every program built since links to.
 * - IBVERBS_PRIVATE_34: rdma-core's provider interface. It is inert: a
 *   provider (Debian's libmlx5.so.1, libefa.so.1, pulled in by DPDK's mlx5
 *   PMDs or by perftest) loads and registers, and is ignored; nothing can
 *   reach a kernel command.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#define DROPIN_FAIL_INT(err) do { errno = (err); return (err); } while (0)
#define DROPIN_FAIL_NEG(err) do { errno = (err); return -1; } while (0)
#define DROPIN_FAIL_PTR(err) do { errno = (err); return NULL; } while (0)

/* --- IBVERBS_1.1 .. 1.14 verbs droce does not support --- */

struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
		  int fd, int access)
{
	DROPIN_FAIL_PTR(EOPNOTSUPP);
}

/* RoCE L2 from a GID: droce resolves peers by ARP itself */
int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	DROPIN_FAIL_NEG(EOPNOTSUPP);
}

/* device memory droce does not have: nothing to import or release */
struct ibv_dm *
ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	DROPIN_FAIL_PTR(EOPNOTSUPP);
}

void
ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* man ibv_query_ece / ibv_set_ece: EOPNOTSUPP when ECE is not supported */
int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	DROPIN_FAIL_INT(EOPNOTSUPP);
}

int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	DROPIN_FAIL_INT(EOPNOTSUPP);
}

/* 0: in-order placement is not guaranteed (the conservative answer) */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	return 0;
}

/* ibv_register_driver@IBVERBS_1.1 (no default version): pre-v13 providers */
void droce_compat_ibv_register_driver(const char *name, void *init_func);
__attribute__((symver("ibv_register_driver@IBVERBS_1.1"))) void
droce_compat_ibv_register_driver(const char *name, void *init_func)
{
}

/* --- IBVERBS_1.0: the pre-2006 ABI --- */
static void
compat_1_0(const char *name)
{
	static bool warned;

	if (!warned) {
		warned = true;
		fprintf(stderr, "droce: %s@IBVERBS_1.0 (the libibverbs 1.0 ABI) is not supported\n",
			name);
	}
}

#define COMPAT_1_0(ret, name, fail)						\
	ret droce_compat_##name##_1_0(void);					\
	__attribute__((symver(#name "@IBVERBS_1.0"))) ret			\
	droce_compat_##name##_1_0(void)						\
	{									\
		compat_1_0(#name);						\
		fail;								\
	}
#define COMPAT_1_0_VOID(name)							\
	void droce_compat_##name##_1_0(void);					\
	__attribute__((symver(#name "@IBVERBS_1.0"))) void			\
	droce_compat_##name##_1_0(void)						\
	{									\
		compat_1_0(#name);						\
	}

/* pointer returns: NULL */
COMPAT_1_0(void *, ibv_get_device_list, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(const char *, ibv_get_device_name, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_open_device, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_alloc_pd, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_reg_mr, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_create_cq, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_create_srq, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_create_qp, DROPIN_FAIL_PTR(EOPNOTSUPP))
COMPAT_1_0(void *, ibv_create_ah, DROPIN_FAIL_PTR(EOPNOTSUPP))
/* a GUID: 0, no device */
COMPAT_1_0(__be64, ibv_get_device_guid, errno = EOPNOTSUPP; return 0)
/* "0 on success, -1 on error" */
COMPAT_1_0(int, ibv_get_async_event, DROPIN_FAIL_NEG(EOPNOTSUPP))
COMPAT_1_0(int, ibv_get_cq_event, DROPIN_FAIL_NEG(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_gid, DROPIN_FAIL_NEG(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_pkey, DROPIN_FAIL_NEG(EOPNOTSUPP))
/* "0 on success, the value of errno on failure" */
COMPAT_1_0(int, ibv_close_device, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_device, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_port, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_dealloc_pd, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_dereg_mr, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_resize_cq, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_destroy_cq, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_modify_srq, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_srq, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_destroy_srq, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_query_qp, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_modify_qp, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_destroy_qp, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_destroy_ah, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_attach_mcast, DROPIN_FAIL_INT(EOPNOTSUPP))
COMPAT_1_0(int, ibv_detach_mcast, DROPIN_FAIL_INT(EOPNOTSUPP))
/* void: nothing was handed out, nothing to release */
COMPAT_1_0_VOID(ibv_free_device_list)
COMPAT_1_0_VOID(ibv_ack_async_event)
COMPAT_1_0_VOID(ibv_ack_cq_events)

/* --- IBVERBS_PRIVATE_34: the provider interface, inert --- */

/* Providers register from a constructor: accepted and ignored. */
void verbs_register_driver_34(const void *ops);
void
verbs_register_driver_34(const void *ops)
{
}

bool verbs_allow_disassociate_destroy;

/* Commands to a kernel uverbs device: there is none. 0 or an errno value. */
#define CMD_STUB(name)								\
	int name(void);								\
	int name(void)								\
	{									\
		DROPIN_FAIL_INT(EOPNOTSUPP);					\
	}

CMD_STUB(execute_ioctl)
CMD_STUB(ibv_cmd_advise_mr)
CMD_STUB(ibv_cmd_alloc_dm)
CMD_STUB(ibv_cmd_alloc_mw)
CMD_STUB(ibv_cmd_alloc_pd)
CMD_STUB(ibv_cmd_attach_mcast)
CMD_STUB(ibv_cmd_close_xrcd)
CMD_STUB(ibv_cmd_create_ah)
CMD_STUB(ibv_cmd_create_counters)
CMD_STUB(ibv_cmd_create_cq)
CMD_STUB(ibv_cmd_create_cq_ex)
CMD_STUB(ibv_cmd_create_flow)
CMD_STUB(ibv_cmd_create_flow_action_esp)
CMD_STUB(ibv_cmd_create_qp)
CMD_STUB(ibv_cmd_create_qp_ex)
CMD_STUB(ibv_cmd_create_qp_ex2)
CMD_STUB(ibv_cmd_create_rwq_ind_table)
CMD_STUB(ibv_cmd_create_srq)
CMD_STUB(ibv_cmd_create_srq_ex)
CMD_STUB(ibv_cmd_create_wq)
CMD_STUB(ibv_cmd_dealloc_mw)
CMD_STUB(ibv_cmd_dealloc_pd)
CMD_STUB(ibv_cmd_dereg_mr)
CMD_STUB(ibv_cmd_destroy_ah)
CMD_STUB(ibv_cmd_destroy_counters)
CMD_STUB(ibv_cmd_destroy_cq)
CMD_STUB(ibv_cmd_destroy_flow)
CMD_STUB(ibv_cmd_destroy_flow_action)
CMD_STUB(ibv_cmd_destroy_qp)
CMD_STUB(ibv_cmd_destroy_rwq_ind_table)
CMD_STUB(ibv_cmd_destroy_srq)
CMD_STUB(ibv_cmd_destroy_wq)
CMD_STUB(ibv_cmd_detach_mcast)
CMD_STUB(ibv_cmd_free_dm)
CMD_STUB(ibv_cmd_get_context)
CMD_STUB(ibv_cmd_modify_cq)
CMD_STUB(ibv_cmd_modify_flow_action_esp)
CMD_STUB(ibv_cmd_modify_qp)
CMD_STUB(ibv_cmd_modify_qp_ex)
CMD_STUB(ibv_cmd_modify_srq)
CMD_STUB(ibv_cmd_modify_wq)
CMD_STUB(ibv_cmd_open_qp)
CMD_STUB(ibv_cmd_open_xrcd)
CMD_STUB(ibv_cmd_poll_cq)
CMD_STUB(ibv_cmd_post_recv)
CMD_STUB(ibv_cmd_post_send)
CMD_STUB(ibv_cmd_post_srq_recv)
CMD_STUB(ibv_cmd_query_context)
CMD_STUB(ibv_cmd_query_device_any)
CMD_STUB(ibv_cmd_query_mr)
CMD_STUB(ibv_cmd_query_port)
CMD_STUB(ibv_cmd_query_qp)
CMD_STUB(ibv_cmd_query_srq)
CMD_STUB(ibv_cmd_read_counters)
CMD_STUB(ibv_cmd_reg_dm_mr)
CMD_STUB(ibv_cmd_reg_dmabuf_mr)
CMD_STUB(ibv_cmd_reg_mr)
CMD_STUB(ibv_cmd_req_notify_cq)
CMD_STUB(ibv_cmd_rereg_mr)
CMD_STUB(ibv_cmd_resize_cq)

/* The attribute count of an ioctl command buffer chain: unchanged. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link);
unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	return num_attrs;
}

/* Provider contexts and devices: none is ever created. */
void *_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size,
				    void *context_offset, uint32_t driver_id);
void *
_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size,
			      void *context_offset, uint32_t driver_id)
{
	DROPIN_FAIL_PTR(EOPNOTSUPP);
}

struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);
struct ibv_context *
verbs_open_device(struct ibv_device *device, void *private_data)
{
	DROPIN_FAIL_PTR(EOPNOTSUPP);
}

void verbs_uninit_context(void *context);
void
verbs_uninit_context(void *context)
{
}

void verbs_set_ops(void *vctx, const void *ops);
void
verbs_set_ops(void *vctx, const void *ops)
{
}

void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
void
verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
	      struct ibv_comp_channel *channel, void *cq_context)
{
}

void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...);
void
__verbs_log(void *ctx, uint32_t level, const char *fmt, ...)
{
}

/* A provider's sysfs device: none exists. The length read, or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...);
int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...)
{
	DROPIN_FAIL_NEG(EOPNOTSUPP);
}
