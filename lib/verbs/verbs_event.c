/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Events: asynchronous events (ibv_get_async_event) and completion channels
 * (ibv_get_cq_event). Each is an event queue: a ring its producer fills (the
 * engine for QP, CQ, SRQ and completion events, a control thread for port
 * events) and an eventfd that is readable exactly while the ring holds
 * events, so that applications may poll/epoll the fd. With inline progress a
 * blocking wait moves the device itself for DROCE_WAIT_SPIN_US, then sleeps
 * on the fd while the driver's waker thread moves it.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "verbs_loc.h"

/* Every open context, for the unaffiliated (port) events of its device. */
static TAILQ_HEAD(, droce_context) ctx_list = TAILQ_HEAD_INITIALIZER(ctx_list);
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * RC QPs the engine moved to ERR (DROCE_RDEV_EVENT_QP_ERR), for the
 * connection manager (droce_private.h): published once made, never freed.
 */
static struct droce_evq qp_err_q;
static struct droce_evq *qp_err;
static pthread_mutex_t qp_err_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- Event queues --- */

/* 0, or a negative errno. */
int
droce_evq_init(struct droce_evq *q, const char *name, unsigned int esize, unsigned int count)
{
	q->esize = esize;
	q->fd = eventfd(0, EFD_CLOEXEC);
	if (q->fd < 0)
		return -errno;
	/*
	 * In process memory: no other process sees it, and a memzone or
	 * rte_malloc would hand memory between threads under locks that
	 * ThreadSanitizer does not see.
	 */
	ssize_t sz = rte_ring_get_memsize_elem(esize, rte_align32pow2(count + 1));
	int ret;

	if (sz < 0) {
		close(q->fd);
		return (int)sz;
	}
	if (posix_memalign((void **)&q->ring, RTE_CACHE_LINE_SIZE, sz) != 0) {
		close(q->fd);
		return -ENOMEM;
	}
	ret = rte_ring_init(q->ring, name, count, RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (ret) {
		free(q->ring);
		close(q->fd);
		return ret;
	}
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

void
droce_evq_fini(struct droce_evq *q)
{
	free(q->ring);
	close(q->fd);
	pthread_mutex_destroy(&q->lock);
}

/* Producer side: lock-free, the engine calls it. A full queue drops the event. */
void
droce_evq_put(struct droce_evq *q, const void *ev)
{
	uint64_t one = 1;

	if (rte_ring_enqueue_elem(q->ring, (void *)(uintptr_t)ev, q->esize) == 0 &&
	    write(q->fd, &one, sizeof(one)) < 0)
		VERBS_LOG(DEBUG, "event fd write failed");
}

/*
 * Under q->lock, after a take: the fd stays readable exactly while events
 * remain. Producers enqueue before they write, so an event enqueued while
 * the count is cleared is seen by the second look.
 */
static void
evq_settle(struct droce_evq *q)
{
	struct pollfd p = { .fd = q->fd, .events = POLLIN };
	uint64_t v, one = 1;

	if (!droce_ring_empty(q->ring))
		return;
	/* only q->lock's holder reads the fd: after POLLIN the read cannot block */
	if (poll(&p, 1, 0) == 1 && read(q->fd, &v, sizeof(v)) < 0)
		VERBS_LOG(DEBUG, "event fd read failed");
	if (!droce_ring_empty(q->ring) && write(q->fd, &one, sizeof(one)) < 0)
		VERBS_LOG(DEBUG, "event fd write failed");
}

/*
 * Take the oldest event into @ev: 0, or -1 with errno (EAGAIN: none and the
 * fd is O_NONBLOCK). Blocks otherwise, as ibv_get_cq_event does, moving
 * @dev if it progresses inline (@dev may be NULL).
 */
int
droce_evq_take(struct droce_evq *q, struct droce_rdev *dev, void *ev)
{
	bool nonblock = fcntl(q->fd, F_GETFL) & O_NONBLOCK;
	uint64_t spin_end = 0, v;
	bool asleep = false;
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (rte_ring_dequeue_elem(q->ring, ev, q->esize) == 0)
			break;
		/* @dev NULL: a queue no device fills (the fd is O_NONBLOCK) */
		if (dev != NULL && __atomic_load_n(&dev->progress, __ATOMIC_RELAXED) != NULL) {
			if (spin_end == 0)
				spin_end = rte_get_timer_cycles() +
					   rte_get_timer_hz() / 1000000 * DROCE_WAIT_SPIN_US;
			droce_rdev_progress(dev);
			if (rte_ring_dequeue_elem(q->ring, ev, q->esize) == 0)
				break;
			if (!nonblock && rte_get_timer_cycles() < spin_end)
				continue;
		}
		if (nonblock) {
			/* clear a stale count, unless an event raced in */
			if (read(q->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				VERBS_LOG(DEBUG, "event fd read failed");
			if (!droce_ring_empty(q->ring))
				continue;
			errno = EAGAIN;
			ret = -1;
			break;
		}
		if (!asleep && dev != NULL) {
			dev->ops->wait_begin(dev);	/* inline: the waker moves the device */
			asleep = true;
		}
		if (read(q->fd, &v, sizeof(v)) < 0 && errno != EINTR) {
			ret = -1;
			break;
		}
	}
	if (asleep)
		dev->ops->wait_end(dev);
	if (ret == 0)
		evq_settle(q);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

/* --- Asynchronous events --- */

void
droce_ctx_add(struct droce_context *dctx)
{
	pthread_mutex_lock(&ctx_lock);
	TAILQ_INSERT_TAIL(&ctx_list, dctx, next);
	pthread_mutex_unlock(&ctx_lock);
}

/* The device of the open context whose command fd is file @ino of @dev, or NULL. */
struct ibv_device *
droce_ctx_device_by_cmd(dev_t dev, ino_t ino)
{
	struct ibv_device *found = NULL;
	struct droce_context *d;

	pthread_mutex_lock(&ctx_lock);
	TAILQ_FOREACH(d, &ctx_list, next)
		if (d->cmd_unique && d->cmd_dev == dev && d->cmd_ino == ino) {
			found = d->vctx.context.device;
			break;
		}
	pthread_mutex_unlock(&ctx_lock);
	return found;
}

/* Once this returns no port event reaches @dctx. */
void
droce_ctx_del(struct droce_context *dctx)
{
	pthread_mutex_lock(&ctx_lock);
	TAILQ_REMOVE(&ctx_list, dctx, next);
	pthread_mutex_unlock(&ctx_lock);
}

/* The engine moved an RC QP to ERR: the connection manager's, if it asked (lock-free). */
static void
qp_err_raise(struct droce_rdev *dev, const struct ibv_qp *qp)
{
	struct droce_evq *q = __atomic_load_n(&qp_err, __ATOMIC_ACQUIRE);
	struct droce_qp_err e = { .node_guid = dev->guid, .qpn = qp->qp_num };

	if (q != NULL)
		droce_evq_put(q, &e);
}

/*
 * In a forked child: the queue (in process memory) is the child's copy, but
 * its eventfd is the parent's. The child gets an fd of its own and an empty
 * queue: each process's connection manager hears of its own QPs.
 */
static void
qp_err_atfork_child(void)
{
	int fd;

	pthread_mutex_init(&qp_err_lock, NULL);
	if (qp_err == NULL)
		return;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd >= 0 && dup3(fd, qp_err_q.fd, O_CLOEXEC) >= 0)	/* the number the CM holds stays */
		close(fd);
	rte_ring_reset(qp_err_q.ring);
	pthread_mutex_init(&qp_err_q.lock, NULL);
}

static void
droce_qp_err_atfork_register(void)
{
	pthread_atfork(NULL, NULL, qp_err_atfork_child);
}

int
droce_qp_err_fd(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int ret = 0;

	pthread_once(&once, droce_qp_err_atfork_register);
	pthread_mutex_lock(&qp_err_lock);
	if (qp_err == NULL) {
		ret = droce_evq_init(&qp_err_q, "droce_qp_err", sizeof(struct droce_qp_err),
				     DROCE_ASYNC_RING);
		if (ret == 0 && fcntl(qp_err_q.fd, F_SETFL, O_NONBLOCK) < 0) {
			ret = -errno;
			droce_evq_fini(&qp_err_q);
		}
		if (ret == 0)
			__atomic_store_n(&qp_err, &qp_err_q, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&qp_err_lock);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return qp_err_q.fd;
}

int
droce_qp_err_get(struct droce_qp_err *e)
{
	struct droce_evq *q = __atomic_load_n(&qp_err, __ATOMIC_ACQUIRE);

	if (q == NULL || e == NULL) {
		errno = q == NULL ? EAGAIN : EINVAL;
		return -1;
	}
	return droce_evq_take(q, NULL, e);
}

/*
 * The device's async_cb. An affiliated event goes to the context owning its
 * object (lock-free: the engine raises those), an XRC_RECV QP's to the
 * context of each of its handles; a port event, raised on the control path,
 * goes to every context open on the device. The driver's
 * DROCE_RDEV_EVENT_QP_ERR goes to the connection manager alone.
 */
void
droce_async_raise(struct droce_rdev *dev, struct ibv_async_event *ev)
{
	struct droce_context *dctx;
	struct ibv_context *ctx;

	if (ev->event_type == DROCE_RDEV_EVENT_QP_ERR) {
		qp_err_raise(dev, ev->element.qp);
		return;
	}
	switch (ev->event_type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
		pthread_mutex_lock(&ctx_lock);
		TAILQ_FOREACH(dctx, &ctx_list, next)
			if (dctx->rdev == dev)
				droce_evq_put(&dctx->async, ev);
		pthread_mutex_unlock(&ctx_lock);
		return;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		ctx = ev->element.srq->context;
		break;
	case IBV_EVENT_CQ_ERR:
		ctx = ev->element.cq->context;
		break;
	default:
		if (unlikely(to_dqp(ev->element.qp)->xqp != NULL)) {
			droce_xrc_qp_event(to_dqp(ev->element.qp)->xqp, ev);
			return;
		}
		ctx = ev->element.qp->context;
		break;
	}
	droce_evq_put(&to_dctx(ctx)->async, ev);
}

int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct droce_context *dctx = to_dctx(context);

	return droce_evq_take(&dctx->async, dctx->rdev, event);
}

/* Count the acknowledgement on the object, as rdma-core does. */
static void
ack_one(pthread_mutex_t *mutex, pthread_cond_t *cond, uint32_t *completed)
{
	pthread_mutex_lock(mutex);
	++*completed;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		ack_one(&cq->mutex, &cq->cond, &cq->async_events_completed);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		ack_one(&qp->mutex, &qp->cond, &qp->events_completed);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		ack_one(&srq->mutex, &srq->cond, &srq->events_completed);
		return;
	}
	default:	/* port and device events concern no object */
		return;
	}
}

/* --- Completion channels --- */

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct droce_comp_channel *c = calloc(1, sizeof(*c));
	char name[RTE_RING_NAMESIZE];
	int ret;

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "droce_ch_%p", (void *)c);
	/* a CQ is queued at most once per arming */
	ret = droce_evq_init(&c->fired, name, sizeof(struct droce_cq *), DROCE_MAX_CQ);
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	c->ch.context = context;
	c->ch.fd = c->fired.fd;
	return &c->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct droce_comp_channel *c = container_of(channel, struct droce_comp_channel, ch);

	if (channel->refcnt)
		return EBUSY;
	droce_evq_fini(&c->fired);
	free(c);
	return 0;
}

/* The device's comp_cb: an armed CQ got a completion (engine side). */
void
droce_comp_fire(struct droce_rdev_cq *fp)
{
	struct droce_cq *cq = to_dcq((struct ibv_cq *)fp->user);

	if (cq->chan != NULL)
		droce_evq_put(&cq->chan->fired, &cq);
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct droce_comp_channel *c = container_of(channel, struct droce_comp_channel, ch);
	struct droce_cq *rcq;

	if (droce_evq_take(&c->fired, to_dctx(channel->context)->rdev, &rcq) != 0)
		return -1;
	*cq = &rcq->ibcq;
	*cq_context = rcq->ibcq.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
