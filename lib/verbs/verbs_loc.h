/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs facade's internal declarations, grouped by defining file. */
#ifndef VERBS_LOC_H
#define VERBS_LOC_H

#include <errno.h>
#include <stdbool.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <infiniband/verbs.h>
#include <rte_log.h>

#include "droce_rdev_pmd.h"
#include "droce_private.h"

extern int droce_verbs_logtype;
#define VERBS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_verbs_logtype, "droce: %s(): " fmt "\n", __func__, ##__VA_ARGS__)

struct droce_device {
	struct ibv_device ibdev;
	struct droce_rdev *rdev;
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
	struct droce_rdev *rdev;
	struct droce_evq async;		/* struct ibv_async_event; fd = async_fd */
	TAILQ_ENTRY(droce_context) next;	/* every open context (port events) */
	/* cmd_fd's file (a memfd of its own): ibv_import_device finds the context by it */
	dev_t cmd_dev;
	ino_t cmd_ino;
	bool cmd_unique;		/* cmd_fd is such a file (else /dev/null: no import) */
};

struct droce_comp_channel {
	struct ibv_comp_channel ch;
	struct droce_evq fired;		/* CQs whose armed event fired; fd = ch.fd */
};

/*
 * The verbs objects: an ibv_* object the application holds, around the
 * driver's object (droce_rdev_pmd.h).
 */
struct droce_pd {
	struct ibv_pd ibpd;
	struct droce_rdev *dev;
	struct droce_rdev_pd *pd;	/* a parent domain's: its PD's */
	uint32_t users;		/* MRs, MWs, QPs, SRQs, AHs on it (atomic): ibv_dealloc_pd is EBUSY */
	/* a parent domain (verbs_domain.c): the PD it stands for, else NULL */
	struct droce_pd *parent;
	struct ibv_td *td;		/* its thread domain, or NULL */
	void *(*app_alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
			   uint64_t resource_type);	/* NULL: no allocators */
	void (*app_free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	struct droce_rdev_alloc alloc;	/* the driver's view of app_alloc/app_free */
	/* ibv_import_pd (verbs_import.c): the PDs one may import, and an import's origin */
	TAILQ_ENTRY(droce_pd) imp_next;
	/*
	 * an imported handle: the PD it stands for, else NULL. Its users
	 * count the handle itself (until unimported) and the objects made
	 * through it, which the last to go frees; the objects count in the
	 * origin's users too.
	 */
	struct droce_pd *origin;
};

/* The allocator objects on @pd take their queues' memory from, or NULL. */
static inline const struct droce_rdev_alloc *
droce_pd_alloc(const struct droce_pd *pd)
{
	return pd->app_alloc != NULL ? &pd->alloc : NULL;
}

/* An object on @ibpd was created (+1) or destroyed (-1). */
void droce_import_pd_use(struct droce_pd *pd, int d);

static inline void
droce_pd_use(struct ibv_pd *ibpd, int d)
{
	struct droce_pd *pd = container_of(ibpd, struct droce_pd, ibpd);

	if (pd->origin != NULL)	/* an imported handle (verbs_import.c) */
		droce_import_pd_use(pd, d);
	else
		__atomic_fetch_add(&pd->users, (uint32_t)d, __ATOMIC_RELAXED);
}

struct droce_mr {
	struct ibv_mr ibmr;
	struct droce_rdev *dev;
	struct droce_rdev_mr *mr;
	TAILQ_ENTRY(droce_mr) imp_next;	/* the MRs one may import (verbs_import.c) */
	bool imported;			/* an ibv_import_mr handle */
};

struct droce_mw {
	struct ibv_mw ibmw;
	struct droce_rdev *dev;
	struct droce_rdev_mw *mw;
};

struct droce_cq {
	union {				/* ibv_cq_ex starts with the ibv_cq fields */
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;	/* created by ibv_create_cq_ex */
	};
	struct droce_rdev_cq *fp;
	struct droce_rdev *dev;
	struct ibv_wc cur;		/* ibv_start_poll/next_poll: the current one */
	struct ibv_wc_tm_info cur_tm;	/* its tag and app_ctx */
	pthread_mutex_t poll_lock;	/* held from ibv_start_poll to ibv_end_poll */
	bool single_threaded;		/* IBV_CREATE_CQ_ATTR_SINGLE_THREADED, or a TD's: no lock */
	struct droce_pd *pdom;		/* the parent domain it was created on, or NULL */
	uint64_t wc_flags;		/* ibv_create_cq_ex: the fields it may read */
	struct droce_comp_channel *chan;
};

/*
 * An XRC domain (verbs_xrc.c): the driver's, shared within the process by
 * every ibv_open_xrcd of the same file (its inode), each open a handle of
 * its own (struct droce_xrcd).
 */
struct droce_xqp;
struct droce_xrcd_dom {
	struct droce_rdev_xrcd *fp;
	struct droce_rdev *dev;
	bool has_inode;			/* opened with a file, not fd -1 */
	dev_t st_dev;
	ino_t st_ino;
	uint32_t opens;			/* handles (under the XRC lock) */
	TAILQ_HEAD(, droce_xqp) qps;	/* its XRC_RECV QPs, for ibv_open_qp */
	TAILQ_ENTRY(droce_xrcd_dom) next;
};

struct droce_xrcd {
	struct ibv_xrcd ibxrcd;
	struct droce_xrcd_dom *dom;
	uint32_t users;			/* SRQs and QPs made or opened with it (atomic): EBUSY */
};

/*
 * The handles of an XRC_RECV QP its async events go to, as the engine reads
 * them: replaced whole when a handle comes, published with a release store;
 * a handle that goes is taken out of a copy, or its slot set to NULL when
 * there is no memory for one; the old array is freed once the device is
 * quiesced (verbs_xrc.c).
 */
struct droce_xqp_fan {
	uint32_t n;
	struct droce_qp *qp[];
};

/* An XRC_RECV QP, which every ibv_open_qp of it in its domain shares. */
struct droce_xqp {
	struct droce_rdev_qp *fp;
	struct droce_xrcd_dom *dom;
	/* the handle the driver's events name (its key to the others): freed last */
	struct droce_qp *creator;
	struct droce_xqp_fan *fan;	/* every handle, the creator's while it exists */
	uint32_t refs;			/* ibv_qp handles (under the XRC lock) */
	TAILQ_ENTRY(droce_xqp) next;
};

struct droce_srq {
	struct ibv_srq ibsrq;
	struct droce_rdev_srq *fp;
	struct droce_xrcd *xrcd;	/* an XRC SRQ's domain handle, else NULL */
};

struct droce_wr_batch;

struct droce_qp {
	union {				/* ibv_qp_ex starts with an ibv_qp */
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex;	/* created with send ops flags */
	};
	struct droce_rdev_qp *fp;
	struct droce_wr_batch *batch;	/* the ibv_wr_* WRs being built, or NULL */
	pthread_mutex_t modify_lock;	/* one ibv_modify_qp at a time: check, then change */
	struct droce_xqp *xqp;		/* an XRC_RECV QP handle: the shared QP */
	struct droce_xrcd *xrcd;	/* and the domain handle it was made or opened with */
};

static inline struct droce_xrcd *
to_dxrcd(struct ibv_xrcd *p)
{
	return container_of(p, struct droce_xrcd, ibxrcd);
}

struct droce_ah {
	struct ibv_ah ibah;
	struct droce_av av;
};

/* Downcasts (functions: they nest inside the driver's container_of macros) */
static inline struct droce_pd *
to_dpd(struct ibv_pd *p)
{
	return container_of(p, struct droce_pd, ibpd);
}
static inline struct droce_mr *
to_dmr(struct ibv_mr *p)
{
	return container_of(p, struct droce_mr, ibmr);
}
static inline struct droce_mw *
to_dmw(struct ibv_mw *p)
{
	return container_of(p, struct droce_mw, ibmw);
}
static inline struct droce_cq *
to_dcq(struct ibv_cq *p)
{
	return container_of(p, struct droce_cq, ibcq);
}
static inline struct droce_cq *
to_dcq_ex(struct ibv_cq_ex *p)
{
	return container_of(p, struct droce_cq, ibcq_ex);
}
static inline struct droce_srq *
to_dsrq(struct ibv_srq *p)
{
	return container_of(p, struct droce_srq, ibsrq);
}
static inline struct droce_qp *
to_dqp(struct ibv_qp *p)
{
	return container_of(p, struct droce_qp, ibqp);
}
static inline struct droce_qp *
to_dqp_ex(struct ibv_qp_ex *p)
{
	return container_of(p, struct droce_qp, ibqp_ex);
}
static inline struct droce_ah *
to_dah(struct ibv_ah *p)
{
	return container_of(p, struct droce_ah, ibah);
}

static inline struct droce_context *
to_dctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct droce_context, vctx.context);
}

/* Inline progress is made from every poll and blocking wait. */
static inline void
verbs_progress(struct droce_rdev *dev)
{
	droce_rdev_progress(dev);
}

/*
 * After a post of send WRs to @qp: its doorbell, and with inline progress
 * its WRs sent at once by the driver's qp_progress, which rings the
 * doorbell itself (it can tell when it need not); what comes back is the
 * next poll's. A receive needs no progress to be posted.
 */
static inline void
verbs_post_ring(struct droce_rdev_qp *qp)
{
	if (__atomic_load_n(&qp->dev->progress, __ATOMIC_RELAXED) != NULL)
		qp->dev->ops->qp_progress(qp);
	else
		droce_rdev_qp_doorbell(qp);
}

/* verbs_device.c */
struct ibv_context *droce_open_device_fd(struct ibv_device *device, int cmd_fd);
int droce_eal_args_split(const char *env, char **copy, char **argv, int max);
void droce_port_attr_get(struct droce_rdev *rdev, struct ibv_port_attr *out);
int droce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);

/* verbs_event.c */
struct ibv_device *droce_ctx_device_by_cmd(dev_t dev, ino_t ino);
int droce_evq_init(struct droce_evq *q, const char *name, unsigned int esize, unsigned int count);
void droce_evq_fini(struct droce_evq *q);
void droce_evq_put(struct droce_evq *q, const void *ev);
int droce_evq_take(struct droce_evq *q, struct droce_rdev *dev, void *ev);
void droce_ctx_add(struct droce_context *dctx);
void droce_ctx_del(struct droce_context *dctx);
void droce_async_raise(struct droce_rdev *dev, struct ibv_async_event *ev);
void droce_comp_fire(struct droce_rdev_cq *fp);

/* verbs_sysfs.c */
void droce_sysfs_publish(struct ibv_device **list, unsigned int n);

/* verbs_util.c */
int droce_sysfs_attr(struct droce_rdev *rdev, const char *file, char *buf, size_t size);

/* verbs_ex.c */
void droce_ex_ops_set(struct verbs_context *vctx);
void droce_wr_batch_free(struct droce_qp *qp);

/* verbs_obj.c */
struct droce_cq *droce_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				 struct ibv_comp_channel *channel, int comp_vector,
				 const struct droce_rdev_alloc *alloc);
struct droce_qp *droce_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr,
				 uint32_t create_flags);
struct droce_qp *droce_xrc_recv_qp_create(struct droce_xrcd *xrcd, struct ibv_qp_init_attr *attr);
void droce_qp_free(struct droce_qp *qp);

/* verbs_import.c */
void droce_import_ctx_init(struct droce_context *dctx);
void droce_import_pd_add(struct droce_pd *pd);
void droce_import_pd_del(struct droce_pd *pd);
void droce_import_pd_put(struct droce_pd *pd);
void droce_import_mr_add(struct droce_mr *mr);
void droce_import_mr_del(struct droce_mr *mr);

/* verbs_xrc.c */
struct ibv_xrcd *droce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int droce_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_srq *droce_create_xrc_srq(struct ibv_srq_init_attr_ex *attr);
int droce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_qp *droce_create_xrc_recv_qp(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *droce_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);
void droce_xrc_qp_destroy(struct droce_qp *qp);
void droce_xrc_qp_event(const struct droce_xqp *xqp, const struct ibv_async_event *ev);
void droce_xrc_srq_destroyed(struct droce_srq *srq);
int droce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *attr, size_t attr_len);
struct ibv_mw *droce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int droce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw, struct ibv_mw_bind *mw_bind);
int droce_dealloc_mw(struct ibv_mw *ibmw);

/* verbs_post.c */
int droce_send_wr_check(const struct droce_rdev_qp *qp, const struct ibv_send_wr *wr);
int droce_sq_state_check(const struct droce_rdev_qp *qp);
int droce_send_wr_enqueue(struct droce_rdev_qp *qp, const struct ibv_send_wr *wr);
int droce_cq_take(struct droce_cq *cq, struct ibv_wc *wc, struct ibv_wc_tm_info *tm);
int droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* verbs_obj.c: the advise_mr op */
int droce_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sge);

/* verbs_domain.c */
void droce_parent_domain_free(struct droce_pd *pd);
void droce_domain_ops_set(struct verbs_context *vctx);

#endif /* VERBS_LOC_H */
