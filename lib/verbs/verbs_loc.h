/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs facade's internal declarations, grouped by defining file. */
#ifndef VERBS_LOC_H
#define VERBS_LOC_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <rte_log.h>

#include "roce_loc.h"

extern int droce_verbs_logtype;
#define VERBS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_verbs_logtype, "droce: %s(): " fmt "\n", __func__, ##__VA_ARGS__)

struct droce_device {
	struct ibv_device ibdev;
	struct roce_dev *rdev;
};

struct droce_context {
	struct verbs_context vctx;
	struct roce_dev *rdev;
	struct rte_ring *async;		/* struct ibv_async_event elements */
};

struct roce_comp_channel {
	struct ibv_comp_channel ch;
	struct rte_ring *fired;		/* CQs whose armed event fired */
};

static inline struct droce_context *
to_dctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct droce_context, vctx.context);
}

/* Inline progress is made from every post, poll and blocking wait. */
static inline void
verbs_progress(struct roce_dev *dev)
{
	if (dev->engine == NULL)
		roce_progress();
}

/* verbs_device.c */
void droce_async_raise(struct roce_dev *dev, struct ibv_async_event *ev);
int droce_eventfd_wait(int fd, struct roce_dev *dev, int (*ready)(void *), void *arg);
int droce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);

struct roce_ah {
	struct ibv_ah ibah;
	struct roce_av av;
};

/* verbs_ex.c */
void droce_ex_ops_set(struct verbs_context *vctx);
void droce_wr_batch_free(struct roce_qp *qp);

/* verbs_obj.c */
struct roce_cq *droce_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				struct ibv_comp_channel *channel, int comp_vector);
struct roce_qp *droce_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr);
const struct roce_av *droce_ah_av(struct ibv_ah *ah);
void droce_comp_fire(struct roce_cq *cq);
int droce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *attr, size_t attr_len);

/* verbs_post.c */
int droce_send_wr_check(const struct roce_qp *qp, const struct ibv_send_wr *wr);
int droce_sq_state_check(const struct roce_qp *qp);
int droce_send_wr_enqueue(struct roce_qp *qp, const struct ibv_send_wr *wr);
int droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

#endif /* VERBS_LOC_H */
