/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a droce driver implements, and what the verbs facade, the connection
 * manager and the apps call: the control path, in the manner of DPDK's
 * rte_dmadev_pmd.h. The facade checks a verb's arguments against the man
 * pages and translates; the driver applies the change to the object it owns
 * (the split of the kernel's rxe_verbs.c and rxe_qp.c).
 *
 * Every op returns 0 or a negative errno unless it says otherwise. Objects
 * are the driver's: the facade holds pointers and never frees them itself.
 */
#ifndef DROCE_RDEV_PMD_H
#define DROCE_RDEV_PMD_H

#include "droce_rdev_core.h"

/* Opaque: the driver's. */
struct droce_rdev_pd;
struct droce_rdev_mr;
struct droce_rdev_mw;
struct droce_rdev_xrcd;
struct droce_dev_objects;
struct droce_dev_stats;
struct droce_neigh;

/* Port 1's state, as ibv_query_port reports it. */
struct droce_rdev_port {
	bool up;			/* the state last announced by a port event */
	uint32_t speed_mbps;		/* the ethdev link's, 0 unknown */
};

/*
 * An application's allocator for a queue's memory (a parent domain's,
 * ibv_alloc_parent_domain(3)): @alloc returns 0 and sets *@p to memory of
 * @size bytes aligned to @align, or to NULL when droce's own allocator is
 * to be used; -ENOMEM when it failed. @type is a DROCE_RES_TYPE_* of
 * droce.h. The facade keeps it alive while objects use it.
 */
struct droce_rdev_alloc {
	int (*alloc)(void *arg, size_t size, size_t align, uint64_t type, void **p);
	void (*free)(void *arg, void *p, uint64_t type);
	void *arg;
};

struct droce_rdev_qp_init {
	enum ibv_qp_type type;
	struct droce_rdev_cq *send_cq;
	struct droce_rdev_cq *recv_cq;
	struct droce_rdev_srq *srq;	/* or NULL */
	/*
	 * XRC_RECV: its domain (no PD, no CQ, no queue: each request names an
	 * XRC SRQ of the domain); XRC_SEND: NULL (a send queue, no receive queue)
	 */
	struct droce_rdev_xrcd *xrcd;
	struct ibv_qp_cap cap;		/* in: checked by the facade; out: what was made */
	bool sq_sig_all;
	bool gsi;			/* the device's QP1: UD, one per device (-EBUSY) */
	bool mc_noloop;			/* UD: its multicast sends not looped back to this device */
	/* on a parent domain: its work queues' WQE slots from there, or NULL */
	const struct droce_rdev_alloc *alloc;
	bool single_threaded;		/* a thread domain's: posts take no lock */
	void *user;
};

/* the top bits of a CM ID that name its process (share_owner below) */
#define DROCE_RDEV_ID_OWNER_BITS	4

struct droce_rdev_ops {
	/* a context opens or closes; the last close stops the device's work */
	int (*dev_open)(struct droce_rdev *dev);
	void (*dev_close)(struct droce_rdev *dev);
	void (*port_query)(struct droce_rdev *dev, struct droce_rdev_port *port);
	/* droce.h's droce_dev_objects_get, droce_dev_stats_get, droce_dev_xstats */
	int (*objects_get)(struct droce_rdev *dev, struct droce_dev_objects *o);
	int (*stats_get)(struct droce_rdev *dev, struct droce_dev_stats *st);
	int (*xstats_get)(struct droce_rdev *dev, const char **names, uint64_t *values, int n);
	/* droce.h's droce_dev_neigh and droce_dev_capture (@path NULL: stop) */
	int (*neigh_get)(struct droce_rdev *dev, struct droce_neigh *tbl, int n);
	int (*capture_set)(struct droce_rdev *dev, const char *path);
	/* droce_qp_xstats: a QP's counters, as xstats_get (the QP stays while called) */
	int (*qp_xstats_get)(struct droce_rdev_qp *qp, const char **names, uint64_t *values, int n);

	/* progress: wait until the engine holds no reference to a removed object */
	void (*quiesce)(struct droce_rdev *dev);
	/* a thread blocks in a verbs wait (inline progress continues meanwhile) */
	void (*wait_begin)(struct droce_rdev *dev);
	void (*wait_end)(struct droce_rdev *dev);
	/*
	 * Inline progress (dev->progress set) from a post to @qp: ring its
	 * doorbell (droce_rdev_qp_doorbell, or what stands for it) and at
	 * least send what it has posted. Receiving waits for a poll or a
	 * wait, so that WRs posted in a row are answered in bursts.
	 */
	void (*qp_progress)(struct droce_rdev_qp *qp);

	/*
	 * The link-layer address of IPv4 @ip (network order) on the device's
	 * link: 0 with @mac filled when known (or @ip is the device's own),
	 * -EAGAIN after asking the engine to resolve it (ARP, rate-limited):
	 * ask again later. For the connection manager's address resolution.
	 */
	int (*neigh_resolve)(struct droce_rdev *dev, uint32_t ip, uint8_t mac[6]);

	/*
	 * A device shared by processes forked from the one that probed it:
	 * the calling process's index among them (0: that one), which the
	 * connection manager puts in the top DROCE_RDEV_ID_OWNER_BITS bits of
	 * its communication and request IDs so that a MAD finds its process;
	 * and the service IDs its listeners take (@on) or give up, by which a
	 * REQ finds its process: -EADDRINUSE while another process listens on
	 * @sid, -ENOSPC when the device's table is full.
	 */
	uint32_t (*share_owner)(struct droce_rdev *dev);
	int (*share_listen)(struct droce_rdev *dev, uint64_t sid, bool on);

	int (*pd_alloc)(struct droce_rdev *dev, struct droce_rdev_pd **pd, uint32_t *pdn);
	void (*pd_free)(struct droce_rdev_pd *pd);

	/* lkey == rkey == *key; -ENOMEM when the device's MRs are used up */
	int (*mr_reg)(struct droce_rdev_pd *pd, void *addr, uint64_t length, uint64_t iova,
		      int access, struct droce_rdev_mr **mr, uint32_t *key);
	/* -EINVAL while memory windows are bound to it (as the kernel's rxe) */
	int (*mr_dereg)(struct droce_rdev_mr *mr);
	/*
	 * ibv_rereg_mr, checked by the facade: @flags are IBV_REREG_MR_CHANGE_*
	 * bits, and only the attributes they name are taken (@pd; @addr,
	 * @length and @iova; @access). The key stays. *@mr is replaced: once
	 * this returns, the engine checks every remote access and every WQE
	 * it starts against the new attributes. -ENOMEM leaves the MR as it was.
	 */
	int (*mr_rereg)(struct droce_rdev_mr **mr, int flags, struct droce_rdev_pd *pd,
			void *addr, uint64_t length, uint64_t iova, int access);
	/*
	 * ibv_advise_mr's prefetch (the facade checked advice and flags): each
	 * SGE names a range of an ODP MR of @pd, else -EFAULT (no such key,
	 * another PD's, out of bounds), -EINVAL (not ODP), -EPERM (@write on an
	 * MR without local write). With @fault its pages are made present
	 * (writable with @write); with @sync a range not mapped is -EFAULT.
	 */
	int (*mr_advise)(struct droce_rdev_pd *pd, const struct ibv_sge *sge, uint32_t n,
			 bool write, bool fault, bool sync);

	/*
	 * A memory window of @type (IBV_MW_TYPE_1 or _2) on @pd: its R_Key
	 * and the handle bind WQEs name it by (droce_send_wqe wr.bind).
	 * Binds and invalidations are WQEs the engine executes; -ENOMEM when
	 * the device's windows are used up.
	 */
	int (*mw_alloc)(struct droce_rdev_pd *pd, enum ibv_mw_type type,
			struct droce_rdev_mw **mw, uint32_t *rkey, uint32_t *handle);
	/* a bound window too: its MR loses a binding */
	void (*mw_dealloc)(struct droce_rdev_mw *mw);

	/*
	 * @events: completion events may be asked for (a channel); @alloc: a
	 * parent domain's allocator for its ring (on resize too), or NULL
	 */
	int (*cq_create)(struct droce_rdev *dev, uint32_t cqe, bool events, void *user,
			 const struct droce_rdev_alloc *alloc, struct droce_rdev_cq **cq);
	/* -EBUSY while a QP or tag-matching SRQ completes into it */
	int (*cq_destroy)(struct droce_rdev_cq *cq);
	/*
	 * ibv_resize_cq (@cqe checked by the facade): the CQ holds @cqe
	 * completions from now on, those it held kept, in order, while the
	 * engine goes on completing into it. The caller keeps pollers out
	 * (the slots are swapped). -EINVAL if it holds more than @cqe, -ENOMEM;
	 * either way the CQ is unchanged.
	 */
	int (*cq_resize)(struct droce_rdev_cq *cq, uint32_t cqe);
	/* ibv_req_notify_cq: 1 next completion, 2 next solicited or error one */
	void (*cq_arm)(struct droce_rdev_cq *cq, uint32_t how);

	int (*srq_create)(struct droce_rdev_pd *pd, uint32_t max_wr, uint32_t max_sge,
			  void *user, struct droce_rdev_srq **srq);
	/* make @srq a tag-matching SRQ completing into @cq */
	int (*srq_tm_enable)(struct droce_rdev_srq *srq, struct droce_rdev_cq *cq,
			     uint32_t max_tags, uint32_t max_ops);
	/* 0 disarms; the limit event fires once below it */
	int (*srq_limit_set)(struct droce_rdev_srq *srq, uint32_t limit);
	uint32_t (*srq_limit_get)(struct droce_rdev_srq *srq);
	/* -EBUSY while a QP uses it */
	int (*srq_destroy)(struct droce_rdev_srq *srq);
	/*
	 * An XRC domain (ibv_open_xrcd); the facade frees it only once no SRQ
	 * or QP uses it.
	 */
	int (*xrcd_alloc)(struct droce_rdev *dev, struct droce_rdev_xrcd **xrcd);
	void (*xrcd_free)(struct droce_rdev_xrcd *xrcd);
	/*
	 * Make @srq an XRC SRQ of @xrcd completing into @cq: it gets a number
	 * (srq->srqn) by which XRC requests reach it. -ENOMEM: numbers used up.
	 */
	int (*srq_xrc_enable)(struct droce_rdev_srq *srq, struct droce_rdev_xrcd *xrcd,
			      struct droce_rdev_cq *cq);
	/* a polled tag-matching completion gives its tag handle back */
	void (*tm_release)(struct droce_rdev *dev, uint32_t release);

	/* @pd is NULL for an XRC_RECV QP (init->xrcd names its device) */
	int (*qp_create)(struct droce_rdev_pd *pd, struct droce_rdev_qp_init *init,
			 struct droce_rdev_qp **qp);
	/* checked by the facade (verbs_qp_state.c); -EINVAL for a bad address */
	int (*qp_modify)(struct droce_rdev_qp *qp, const struct ibv_qp_attr *attr, int mask);
	void (*qp_query)(struct droce_rdev_qp *qp, struct ibv_qp_attr *attr);
	/* attachments go with it: the QP is detached from every multicast group */
	void (*qp_destroy)(struct droce_rdev_qp *qp);

	/*
	 * A UD QP joins or leaves the multicast group @gid (the facade checked
	 * the QP type and that @gid is a multicast GID). Attach: 0 if it was
	 * attached already; -EINVAL unless @gid is an IPv4-mapped group
	 * (::ffff:224.0.0.0/100, RoCEv2 over IPv4); -ENOMEM past the device's
	 * groups or a group's QPs (DROCE_MAX_MCAST_*). Detach: -EINVAL if the
	 * QP is not attached to @gid. The port's multicast filter follows.
	 */
	int (*mcast_attach)(struct droce_rdev_qp *qp, const union ibv_gid *gid);
	int (*mcast_detach)(struct droce_rdev_qp *qp, const union ibv_gid *gid);

	/* an address handle's destination; -EINVAL unless a RoCEv2 IPv4 GID */
	int (*ah_create)(struct droce_rdev_pd *pd, const struct ibv_ah_attr *attr,
			 struct droce_av *av);
	void (*ah_destroy)(struct droce_rdev *dev);
};

/* droce_rdev.c: the devices drivers have registered. */
int droce_rdev_register(struct droce_rdev *dev);
void droce_rdev_unregister(struct droce_rdev *dev);
unsigned int droce_rdev_count(void);
struct droce_rdev *droce_rdev_get(unsigned int idx);
struct droce_rdev *droce_rdev_by_name(const char *name);

#endif /* DROCE_RDEV_PMD_H */
