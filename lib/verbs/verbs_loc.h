/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs facade's internal declarations, grouped by defining file. */
#ifndef VERBS_LOC_H
#define VERBS_LOC_H

#include <errno.h>
#include <sys/queue.h>
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

/* An event queue (verbs_event.c): a ring, and an eventfd readable while it holds events. */
struct droce_evq {
	struct rte_ring *ring;
	unsigned int esize;		/* bytes per event */
	int fd;
	pthread_mutex_t lock;		/* consumers take one at a time */
};

struct droce_context {
	struct verbs_context vctx;
	struct roce_dev *rdev;
	struct droce_evq async;		/* struct ibv_async_event; fd = async_fd */
	TAILQ_ENTRY(droce_context) next;	/* every open context (port events) */
};

struct roce_comp_channel {
	struct ibv_comp_channel ch;
	struct droce_evq fired;		/* CQs whose armed event fired; fd = ch.fd */
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
int droce_eal_args_split(const char *env, char **copy, char **argv, int max);
int droce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);

struct roce_ah {
	struct ibv_ah ibah;
	struct roce_av av;
};

/* verbs_event.c */
int droce_evq_init(struct droce_evq *q, const char *name, unsigned int esize, unsigned int count);
void droce_evq_fini(struct droce_evq *q);
void droce_evq_put(struct droce_evq *q, const void *ev);
int droce_evq_take(struct droce_evq *q, struct roce_dev *dev, void *ev);
void droce_ctx_add(struct droce_context *dctx);
void droce_ctx_del(struct droce_context *dctx);
void droce_async_raise(struct roce_dev *dev, struct ibv_async_event *ev);
void droce_comp_fire(struct roce_cq *cq);

/* verbs_ex.c */
void droce_ex_ops_set(struct verbs_context *vctx);
void droce_wr_batch_free(struct roce_qp *qp);
void droce_tm_polled(struct roce_dev *dev, struct ibv_wc *wc, struct ibv_wc_tm_info *info);
void droce_tm_srq_fini(struct roce_srq *srq);

/* verbs_obj.c */
struct roce_cq *droce_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				struct ibv_comp_channel *channel, int comp_vector);
struct roce_qp *droce_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr);
const struct roce_av *droce_ah_av(struct ibv_ah *ah);
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
