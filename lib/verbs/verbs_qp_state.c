/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP state transition table and attribute checks for ibv_modify_qp.
 * The rules are documented in verbs_qp_state.h; the table below is the
 * single place they are encoded.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "verbs_qp_state.h"

enum {
	T_UD,
	T_UC,
	T_RC,
	T_XI,		/* XRC_SEND: the initiator, an RC requester */
	T_XT,		/* XRC_RECV: the target, an RC responder */
	T_NR,
};

#define V_UD	(1u << T_UD)
#define V_UC	(1u << T_UC)
#define V_RC	(1u << T_RC)
#define V_XRC	((1u << T_XI) | (1u << T_XT))
#define V_ALL	(V_UD | V_UC | V_RC | V_XRC)

#define NR_STATES	(IBV_QPS_ERR + 1)

struct qp_trans {
	unsigned int valid;	/* V_* bits of the types allowed this move */
	int req[T_NR];
	int opt[T_NR];
};

/* UC and RC share these; RC adds its own bits where the two differ. */
#define INIT_ATTRS_CONN		(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define INIT_ATTRS_UD		(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define RTR_REQ_UC		(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_REQ_RC		(RTR_REQ_UC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_REQ_RC		(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define TO_RTS_OPT_UD		(IBV_QP_CUR_STATE | IBV_QP_QKEY)
#define TO_RTS_OPT_UC		(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | \
				 IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)
#define TO_RTS_OPT_RC		(TO_RTS_OPT_UC | IBV_QP_MIN_RNR_TIMER)
#define SQD_OPT_UC		(IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | \
				 IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE)
#define SQD_OPT_RC		(SQD_OPT_UC | IBV_QP_PORT | IBV_QP_TIMEOUT | \
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
				 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | \
				 IBV_QP_MIN_RNR_TIMER)
/*
 * XRC (the kernel's qp_state_table, IB_QPT_XRC_INI and IB_QPT_XRC_TGT): the
 * initiator needs what an RC requester needs and the target what an RC
 * responder needs, and neither the other half's.
 */
#define RTS_REQ_XT		(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT)
#define SQD_OPT_XI		(SQD_OPT_UC | IBV_QP_PORT | IBV_QP_TIMEOUT | \
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define SQD_OPT_XT		(SQD_OPT_UC | IBV_QP_PORT | IBV_QP_TIMEOUT | \
				 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)

/* [current][next], after the QP state transition rules of IBA ch. 10.3 and
 * the Modify QP verb (11.2.5.2); an entry with .valid == 0 is invalid. */
static const struct qp_trans qp_trans_table[NR_STATES][NR_STATES] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_INIT] = {
			.valid = V_ALL,
			.req = {
				[T_UD] = INIT_ATTRS_UD,
				[T_UC] = INIT_ATTRS_CONN,
				[T_RC] = INIT_ATTRS_CONN,
				[T_XI] = INIT_ATTRS_CONN,
				[T_XT] = INIT_ATTRS_CONN,
			},
		},
		/* RESET -> ERR deliberately absent: a QP leaves RESET via INIT only */
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_INIT] = {
			.valid = V_ALL,
			.opt = {
				[T_UD] = INIT_ATTRS_UD,
				[T_UC] = INIT_ATTRS_CONN,
				[T_RC] = INIT_ATTRS_CONN,
				[T_XI] = INIT_ATTRS_CONN,
				[T_XT] = INIT_ATTRS_CONN,
			},
		},
		[IBV_QPS_RTR] = {
			.valid = V_ALL,
			.req = {
				[T_UC] = RTR_REQ_UC,
				[T_RC] = RTR_REQ_RC,
				[T_XI] = RTR_REQ_UC,
				[T_XT] = RTR_REQ_RC,
			},
			.opt = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[T_UC] = IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
				[T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
				[T_XI] = IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
				[T_XT] = IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH,
			},
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = {
			.valid = V_ALL,
			.req = {
				[T_UD] = IBV_QP_SQ_PSN,
				[T_UC] = IBV_QP_SQ_PSN,
				[T_RC] = RTS_REQ_RC,
				[T_XI] = RTS_REQ_RC,
				[T_XT] = RTS_REQ_XT,
			},
			.opt = {
				[T_UD] = TO_RTS_OPT_UD,
				[T_UC] = TO_RTS_OPT_UC,
				[T_RC] = TO_RTS_OPT_RC,
				[T_XI] = TO_RTS_OPT_UC,
				[T_XT] = TO_RTS_OPT_RC,
			},
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = {
			.valid = V_ALL,
			.opt = {
				[T_UD] = TO_RTS_OPT_UD,
				[T_UC] = TO_RTS_OPT_UC,
				[T_RC] = TO_RTS_OPT_RC,
				[T_XI] = TO_RTS_OPT_UC,
				[T_XT] = TO_RTS_OPT_RC,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = V_ALL,
			.opt = {
				[T_UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_UC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_XI] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_XT] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = {
			.valid = V_ALL,
			.opt = {
				[T_UD] = TO_RTS_OPT_UD,
				[T_UC] = TO_RTS_OPT_UC,
				[T_RC] = TO_RTS_OPT_RC,
				[T_XI] = TO_RTS_OPT_UC,
				[T_XT] = TO_RTS_OPT_RC,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = V_ALL,
			.opt = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[T_UC] = SQD_OPT_UC,
				[T_RC] = SQD_OPT_RC,
				[T_XI] = SQD_OPT_XI,
				[T_XT] = SQD_OPT_XT,
			},
		},
	},
	/* RC and XRC send errors take the QP straight to ERR: no SQE row for them */
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = V_UD | V_UC },
		[IBV_QPS_ERR] = { .valid = V_UD | V_UC },
		[IBV_QPS_RTS] = {
			.valid = V_UD | V_UC,
			.opt = {
				[T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[T_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
			},
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
	},
};

static int
type_index(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD:
		return T_UD;
	case IBV_QPT_UC:
		return T_UC;
	case IBV_QPT_RC:
		return T_RC;
	case IBV_QPT_XRC_SEND:
		return T_XI;
	case IBV_QPT_XRC_RECV:
		return T_XT;
	default:
		return -1;
	}
}

static int
state_ok(enum ibv_qp_state s)
{
	return (unsigned int)s < NR_STATES;
}

int
droce_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur,
		      enum ibv_qp_state next, int attr_mask)
{
	const struct qp_trans *t;
	int ti = type_index(type);
	int req, opt;

	if (ti < 0)
		return -EOPNOTSUPP;
	if (!state_ok(cur) || !state_ok(next))
		return -EINVAL;
	if (!(attr_mask & IBV_QP_STATE) && next != cur)
		return -EINVAL;
	/*
	 * The consumer's idea of the state can only be stale once the QP may
	 * move on its own (RTS->SQE, SQD draining), so earlier states refuse it.
	 */
	if ((attr_mask & IBV_QP_CUR_STATE) &&
	    cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return -EINVAL;

	t = &qp_trans_table[cur][next];
	if (!(t->valid & (1u << ti)))
		return -EINVAL;
	req = t->req[ti];
	opt = t->opt[ti];
	if ((attr_mask & req) != req)
		return -EINVAL;
	if (attr_mask & ~(req | opt | IBV_QP_STATE))
		return -EINVAL;
	return 0;
}

#define QPN_PSN_MAX		0xffffffu
/*
 * ON_DEMAND is an MR's flag, meaningless on a QP: accepted and ignored, as
 * the kernel does (rdma-core's ODP tests pass their MR's flags here).
 */
#define QP_ACCESS_ALLOWED	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
				 IBV_ACCESS_ON_DEMAND)

int
droce_qp_attr_values_check(enum ibv_qp_type type, const struct ibv_qp_attr *attr,
			   int attr_mask, uint8_t phys_port_cnt, uint16_t pkey_tbl_len,
			   uint32_t max_rd_atomic, uint32_t max_dest_rd_atomic)
{
	if (type_index(type) < 0)
		return -EOPNOTSUPP;
	if (attr_mask == 0)
		return 0;
	if (attr == NULL)
		return -EINVAL;

	if ((attr_mask & IBV_QP_STATE) && !state_ok(attr->qp_state))
		return -EINVAL;
	if ((attr_mask & IBV_QP_CUR_STATE) && !state_ok(attr->cur_qp_state))
		return -EINVAL;
	if ((attr_mask & IBV_QP_PORT) &&
	    (attr->port_num < 1 || attr->port_num > phys_port_cnt))
		return -EINVAL;
	if ((attr_mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= pkey_tbl_len)
		return -EINVAL;
	if ((attr_mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096))
		return -EINVAL;
	if ((attr_mask & IBV_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((attr_mask & IBV_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((attr_mask & IBV_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((attr_mask & IBV_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((attr_mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > max_rd_atomic)
		return -EINVAL;
	if ((attr_mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > max_dest_rd_atomic)
		return -EINVAL;
	if ((attr_mask & IBV_QP_DEST_QPN) && attr->dest_qp_num > QPN_PSN_MAX)
		return -EINVAL;
	if ((attr_mask & IBV_QP_SQ_PSN) && attr->sq_psn > QPN_PSN_MAX)
		return -EINVAL;
	if ((attr_mask & IBV_QP_RQ_PSN) && attr->rq_psn > QPN_PSN_MAX)
		return -EINVAL;
	if ((attr_mask & IBV_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(unsigned int)QP_ACCESS_ALLOWED))
		return -EINVAL;
	if ((attr_mask & IBV_QP_PATH_MIG_STATE) &&
	    (unsigned int)attr->path_mig_state > IBV_MIG_ARMED)
		return -EINVAL;
	if (attr_mask & IBV_QP_ALT_PATH) {
		if (attr->alt_port_num < 1 || attr->alt_port_num > phys_port_cnt)
			return -EINVAL;
		if (attr->alt_pkey_index >= pkey_tbl_len)
			return -EINVAL;
		if (attr->alt_timeout > 31)
			return -EINVAL;
	}
	return 0;
}

static const char *const qp_state_names[] = {
	[IBV_QPS_RESET] = "RESET",
	[IBV_QPS_INIT] = "INIT",
	[IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS",
	[IBV_QPS_SQD] = "SQD",
	[IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
	[IBV_QPS_UNKNOWN] = "UNKNOWN",
};

const char *
droce_qp_state_str(enum ibv_qp_state s)
{
	if ((unsigned int)s >= sizeof(qp_state_names) / sizeof(qp_state_names[0]))
		return "INVALID";
	return qp_state_names[s];
}
