/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager's devices, MAD transport and thread.
 *
 * At the first rdma_* call, every device the (drop-in) libibverbs lists is
 * opened once for the life of the process, as rdma-core's librdmacm does;
 * each gets a default PD and its QP1 (droce_gsi_qp_create, exported to this
 * library alone under the DROCE_PRIVATE version node), with CM_RECV_SLOTS
 * receives posted and a completion channel. The CM thread waits in epoll on
 * those channels (an armed CQ keeps an inline-progress device moving: the
 * driver's waker), on an eventfd the API uses to wake it when a timer is
 * set, and on the fd of the RC QPs the engine moved to ERR (droce_qp_err_fd:
 * a peer gone without a DREQ), and runs the MADs, the timers and those QP
 * errors under cm.lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_log.h>

#include "cm_loc.h"
#include "droce_private.h"

#define CM_MIN(a, b)	((a) < (b) ? (a) : (b))

struct cm_state cm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.epfd = -1,
	.wakefd = -1,
	.qp_err_fd = -1,
};

/* the epoll tag of cm.qp_err_fd (a device's is its cm_dev, the wake fd's NULL) */
static char qp_err_tag;

uint64_t
cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t *
recv_slot(struct cm_dev *d, unsigned int i)
{
	return d->buf + (size_t)i * CM_RECV_LEN;
}

static uint8_t *
send_slot(struct cm_dev *d, unsigned int i)
{
	return d->buf + (size_t)CM_RECV_SLOTS * CM_RECV_LEN + (size_t)i * DROCE_CM_MAD_LEN;
}

static int
post_recv(struct cm_dev *d, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_slot(d, i), .length = CM_RECV_LEN, .lkey = d->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(d->qp1, &wr, &bad);
}

static void
dev_close(struct cm_dev *d)
{
	for (unsigned int i = 0; i < CM_AH_CACHE; i++)
		if (d->ah[i].ah)
			ibv_destroy_ah(d->ah[i].ah);
	if (d->qp1)
		ibv_destroy_qp(d->qp1);
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->ch)
		ibv_destroy_comp_channel(d->ch);
	if (d->xrcd)
		ibv_close_xrcd(d->xrcd);	/* EBUSY if the application kept its XRC objects */
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	free(d->buf);
	free(d->backlog);
	if (d->verbs)
		ibv_close_device(d->verbs);
	memset(d, 0, sizeof(*d));
}

/*
 * The XRC domain of @d that rdma_create_qp and rdma_create_srq give an XRC
 * target id which brings none (rdma-core's one per device): opened on first
 * use, kept until exit. NULL with errno set.
 */
struct ibv_xrcd *
cm_dev_xrcd(struct cm_dev *d)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *x;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&cm.lock);
	if (d->xrcd == NULL)
		d->xrcd = ibv_open_xrcd(d->verbs, &attr);
	x = d->xrcd;
	pthread_mutex_unlock(&cm.lock);
	return x;
}

/* Open @ibdev and bring its QP1 up: 0 or an errno. */
static int
dev_open(struct cm_dev *d, struct ibv_device *ibdev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = CM_SEND_SLOTS, .max_recv_wr = CM_RECV_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = DROCE_CM_QP1_QKEY,
	};
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	size_t len = (size_t)CM_RECV_SLOTS * CM_RECV_LEN + (size_t)CM_SEND_SLOTS * DROCE_CM_MAD_LEN;
	int err = ENOMEM;

	d->verbs = ibv_open_device(ibdev);
	if (d->verbs == NULL)
		return errno ? errno : ENODEV;
	if (ibv_query_device(d->verbs, &da) || ibv_query_port(d->verbs, 1, &pa) ||
	    ibv_query_gid(d->verbs, 1, 0, &d->gid)) {
		err = errno ? errno : EIO;
		goto fail;
	}
	d->guid = da.node_guid;
	d->mtu = pa.active_mtu;
	d->max_rd_atomic = (uint8_t)CM_MIN(da.max_qp_init_rd_atom, 255);
	d->max_dest_rd_atomic = (uint8_t)CM_MIN(da.max_qp_rd_atom, 255);
	memcpy(&d->ip, &d->gid.raw[12], 4);
	d->pd = ibv_alloc_pd(d->verbs);
	d->ch = ibv_create_comp_channel(d->verbs);
	d->buf = calloc(1, len);
	d->backlog = calloc(CM_BACKLOG, sizeof(*d->backlog));
	if (d->pd == NULL || d->ch == NULL || d->buf == NULL || d->backlog == NULL)
		goto fail;
	d->cq = ibv_create_cq(d->verbs, CM_RECV_SLOTS + CM_SEND_SLOTS, d, d->ch, 0);
	d->mr = ibv_reg_mr(d->pd, d->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (d->cq == NULL || d->mr == NULL)
		goto fail;
	ia.send_cq = ia.recv_cq = d->cq;
	d->qp1 = droce_gsi_qp_create(d->pd, &ia);
	if (d->qp1 == NULL) {
		err = errno ? errno : EIO;
		goto fail;
	}
	if ((err = ibv_modify_qp(d->qp1, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						  IBV_QP_QKEY)) != 0)
		goto fail;
	a.qp_state = IBV_QPS_RTR;
	if ((err = ibv_modify_qp(d->qp1, &a, IBV_QP_STATE)) != 0)
		goto fail;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if ((err = ibv_modify_qp(d->qp1, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) != 0)
		goto fail;
	for (unsigned int i = 0; i < CM_RECV_SLOTS; i++)
		if ((err = post_recv(d, i)) != 0)
			goto fail;
	d->send_free = CM_SEND_SLOTS == 64 ? ~0ull : (1ull << CM_SEND_SLOTS) - 1;
	if (fcntl(d->ch->fd, F_SETFL, fcntl(d->ch->fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    ibv_req_notify_cq(d->cq, 0) != 0) {
		err = errno ? errno : EIO;
		goto fail;
	}
	return 0;
fail:
	dev_close(d);
	return err;
}

struct cm_dev *
cm_dev_by_ip(in_addr_t ip)
{
	for (int i = 0; i < cm.nb_dev; i++)
		if (cm.dev[i].ip == ip)
			return &cm.dev[i];
	return NULL;
}

struct cm_dev *
cm_dev_by_verbs(const struct ibv_context *verbs)
{
	for (int i = 0; i < cm.nb_dev; i++)
		if (cm.dev[i].verbs == verbs)
			return &cm.dev[i];
	return NULL;
}

/*
 * The device a packet to @dst leaves from. droce devices have addresses but
 * no prefix length and no kernel routes: the device that has @dst itself,
 * else the one whose address shares the longest prefix with it (the usual
 * set-up puts both ends in one /24), else the first.
 */
struct cm_dev *
cm_dev_route(in_addr_t dst)
{
	struct cm_dev *best = NULL;
	int best_len = -1;

	for (int i = 0; i < cm.nb_dev; i++) {
		uint32_t x = ntohl(cm.dev[i].ip ^ dst);
		int len = x ? __builtin_clz(x) : 32;

		if (len > best_len) {
			best_len = len;
			best = &cm.dev[i];
		}
	}
	return best;
}

/* An address handle to @dst's QP1, cached per device. */
static struct ibv_ah *
ah_get(struct cm_dev *d, in_addr_t dst)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = 0, .hop_limit = 64 },
	};
	unsigned int i;

	for (i = 0; i < CM_AH_CACHE; i++)
		if (d->ah[i].ah && d->ah[i].ip == dst)
			return d->ah[i].ah;
	aa.grh.dgid.raw[10] = aa.grh.dgid.raw[11] = 0xff;
	memcpy(&aa.grh.dgid.raw[12], &dst, 4);
	for (i = 0; i < CM_AH_CACHE && d->ah[i].ah; i++)
		;
	if (i == CM_AH_CACHE) {
		i = d->ah_next++ % CM_AH_CACHE;
		ibv_destroy_ah(d->ah[i].ah);	/* no MAD in flight uses it: sends are copied */
		d->ah[i].ah = NULL;
	}
	d->ah[i].ah = ibv_create_ah(d->pd, &aa);
	d->ah[i].ip = dst;
	return d->ah[i].ah;
}

/*
 * The CM's log type: --log-level=lib.rdmacm:debug (or DROCE_CM_DEBUG=1,
 * which sets that level) traces every MAD sent and received and each
 * listen; errors at ERR and WARNING. On the log stream the drop-in's EAL
 * writes to (stderr).
 */
RTE_LOG_REGISTER(cm_logtype, lib.rdmacm, NOTICE);

int
cm_debug(void)
{
	static int env = -1;

	if (env < 0) {
		const char *e = getenv("DROCE_CM_DEBUG");

		env = e != NULL && *e != '\0' && *e != '0';
		if (env)
			rte_log_set_level(cm_logtype, RTE_LOG_DEBUG);
	}
	return rte_log_can_log(cm_logtype, RTE_LOG_DEBUG);
}

void
cm_trace(const char *dir, const struct cm_dev *d, in_addr_t peer, const uint8_t *mad)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	uint32_t ids[2];

	if (!cm_debug())
		return;
	memcpy(ids, mad + DROCE_CM_MAD_HDR_LEN, sizeof(ids));
	CM_LOG(DEBUG, "%.3f %s %s %s %s %s ids %08x %08x",
		(double)(cm_now_ns() % 1000000000000ull) / 1e9, dir,
		inet_ntop(AF_INET, &d->ip, a, sizeof(a)), dir[0] == 't' ? "->" : "<-",
		inet_ntop(AF_INET, &peer, b, sizeof(b)),
		droce_cm_attr_name((uint16_t)(mad[16] << 8 | mad[17])), ntohl(ids[0]), ntohl(ids[1]));
}

/* Post one MAD into free send slot @slot: 0 or an errno. */
static int
post_mad(struct cm_dev *d, in_addr_t dst, const uint8_t *mad)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .num_sge = 1 }, *bad;
	unsigned int slot = (unsigned int)__builtin_ctzll(d->send_free);
	struct ibv_sge sge;
	struct ibv_ah *ah = ah_get(d, dst);
	int ret;

	if (ah == NULL) {
		d->tx_drops++;
		return errno ? errno : ENOMEM;
	}
	memcpy(send_slot(d, slot), mad, DROCE_CM_MAD_LEN);
	sge = (struct ibv_sge){ .addr = (uintptr_t)send_slot(d, slot),
				.length = DROCE_CM_MAD_LEN, .lkey = d->mr->lkey };
	wr.wr_id = CM_RECV_SLOTS + slot;
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = DROCE_CM_QP1;
	wr.wr.ud.remote_qkey = DROCE_CM_QP1_QKEY;
	ret = ibv_post_send(d->qp1, &wr, &bad);
	if (ret) {
		d->tx_drops++;
		return ret;
	}
	d->send_free &= ~(1ull << slot);
	d->tx_mads++;
	cm_trace("tx", d, dst, mad);
	/* on its way before the call that sent it returns: the process may end next */
	d->flush_late = droce_qp_send_flush(d->qp1, d->flush_late ? 0 : CM_FLUSH_MS) == ETIMEDOUT;
	return 0;
}

/* Under cm.lock: send what waits in the backlog while slots are free. */
static void
backlog_flush(struct cm_dev *d)
{
	while (d->bl_len > 0 && d->send_free != 0) {
		struct cm_pending *p = &d->backlog[d->bl_head];

		post_mad(d, p->dst, p->mad);
		d->bl_head = (d->bl_head + 1) % CM_BACKLOG;
		d->bl_len--;
	}
}

/*
 * Send one MAD (DROCE_CM_MAD_LEN bytes) to @dst's QP1: 0, or an errno. With
 * every send slot in flight (a burst: a thousand connections at once), the
 * MAD waits in the device's backlog, in order, until completions free
 * slots; only a full backlog loses one, which its timer sends again.
 */
int
cm_mad_send(struct cm_dev *d, in_addr_t dst, const uint8_t *mad)
{
	struct cm_pending *p;

	if (d->bl_len == 0 && d->send_free != 0)
		return post_mad(d, dst, mad);
	if (d->bl_len == CM_BACKLOG) {
		d->tx_drops++;
		return ENOBUFS;
	}
	p = &d->backlog[(d->bl_head + d->bl_len) % CM_BACKLOG];
	p->dst = dst;
	memcpy(p->mad, mad, DROCE_CM_MAD_LEN);
	d->bl_len++;
	cm_wake();	/* the thread flushes as completions arrive */
	return 0;
}

/* Under cm.lock: every completion of @d's QP1. */
static void
drain(struct cm_dev *d)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(d->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;

			if (id >= CM_RECV_SLOTS) {
				d->send_free |= 1ull << (id - CM_RECV_SLOTS);
				backlog_flush(d);
				continue;
			}
			if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= CM_GRH_LEN) {
				const uint8_t *b = recv_slot(d, (unsigned int)id);
				in_addr_t src, dst;

				/* RoCEv2 over IPv4: the IPv4 header is in the GRH's last 20 bytes */
				memcpy(&src, b + 20 + 12, 4);
				memcpy(&dst, b + 20 + 16, 4);
				d->rx_mads++;
				cm_trace("rx", d, src, b + CM_GRH_LEN);
				cm_mad_input(d, src, dst, b + CM_GRH_LEN, wc[i].byte_len - CM_GRH_LEN);
			} else if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				d->rx_drops++;
			}
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				post_recv(d, (unsigned int)id);
		}
	}
}

void
cm_wake(void)
{
	uint64_t one = 1;

	if (cm.wakefd >= 0 && write(cm.wakefd, &one, sizeof(one)) < 0)
		(void)0;	/* the counter is saturated: the thread wakes anyway */
}

/* Under cm.lock: run expired timers; the next deadline, 0 if none. */
static uint64_t
timers_run(void)
{
	uint64_t now = cm_now_ns(), next = 0;
	struct cm_id *c, *tmp;

	TAILQ_FOREACH_SAFE(c, &cm.ids, link, tmp) {
		if (c->timer_ns == 0)
			continue;
		if (c->timer_ns <= now) {
			c->timer_ns = 0;
			cm_timer_fire(c);	/* may set the timer again, or free nothing: ids live */
		}
		if (c->timer_ns && (next == 0 || c->timer_ns < next))
			next = c->timer_ns;
	}
	return next;
}

/* Under cm.lock: the RC QPs the engine moved to ERR since the last look. */
static void
qp_err_drain(void)
{
	struct droce_qp_err e;

	while (droce_qp_err_get(&e) == 0)
		cm_qp_err_input(e.node_guid, e.qpn);
}

static void *
cm_thread(void *arg)
{
	struct epoll_event ev[CM_MAX_DEVS + 2];

	(void)arg;
	for (;;) {
		uint64_t next, now;
		int n, ms;

		pthread_mutex_lock(&cm.lock);
		for (int i = 0; i < cm.nb_dev; i++)
			drain(&cm.dev[i]);
		next = timers_run();
		pthread_mutex_unlock(&cm.lock);
		now = cm_now_ns();
		ms = next == 0 ? -1 : next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		n = epoll_wait(cm.epfd, ev, CM_MAX_DEVS + 2, ms);
		for (int i = 0; i < n; i++) {
			struct cm_dev *d = ev[i].data.ptr;
			struct ibv_cq *cq;
			void *ctx;

			if (ev[i].data.ptr == &qp_err_tag) {
				pthread_mutex_lock(&cm.lock);
				qp_err_drain();
				pthread_mutex_unlock(&cm.lock);
				continue;
			}

			if (d == NULL) {
				uint64_t v;

				if (read(cm.wakefd, &v, sizeof(v)) < 0)
					(void)0;
				continue;
			}
			pthread_mutex_lock(&cm.lock);
			while (ibv_get_cq_event(d->ch, &cq, &ctx) == 0)
				ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(d->cq, 0);
			drain(d);	/* what arrived before the CQ was armed again */
			pthread_mutex_unlock(&cm.lock);
		}
	}
	return NULL;
}

/*
 * At exit: a connection the program did not close is closed for it, as the
 * kernel does when a process's rdma_cm file goes: a DREQ for each
 * established one (a REJ for each request still waiting), then up to
 * CM_DREP_WAIT_MS for the answers, so that the peer sees a disconnect and
 * not a silent QP. The CM thread keeps running meanwhile.
 */
static void
cm_exit(void)
{
	struct timespec ts;
	struct cm_id *c;
	uint64_t end;
	bool waiting;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_mutex_timedlock(&cm.lock, &ts) != 0)
		return;		/* a thread died holding it: nothing safe to do */
	TAILQ_FOREACH(c, &cm.ids, link) {
		if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT) {
			cm_send_dreq(c);	/* its QP may be gone already: not touched */
		} else if (c->state == CM_REQ_RCVD || c->state == CM_REP_RCVD) {
			cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		}
	}
	end = cm_now_ns() + CM_DREP_WAIT_MS * 1000000ull;
	do {
		waiting = false;
		TAILQ_FOREACH(c, &cm.ids, link)
			waiting |= c->state == CM_DREQ_SENT;
		pthread_mutex_unlock(&cm.lock);
		if (!waiting)
			return;
		usleep(1000);
		pthread_mutex_lock(&cm.lock);
	} while (cm_now_ns() < end);
	pthread_mutex_unlock(&cm.lock);
}

/*
 * In a forked child: the ids, the devices' QP1s and the thread are the
 * parent's (its thread is not even here), the epoll and wake fds shared
 * with it. The child's first rdma_* call starts a connection manager of
 * its own, with its own QP1 on each device (drivers/rdma/roce/roce_share.c);
 * the parent's ids are not the child's to use, and are forgotten here.
 */
static void
cm_atfork_child(void)
{
	pthread_mutex_init(&cm.lock, NULL);
	pthread_cond_init(&cm.cond, NULL);
	if (!cm.inited)
		return;
	if (cm.epfd >= 0)
		close(cm.epfd);
	if (cm.wakefd >= 0)
		close(cm.wakefd);
	memset(cm.dev, 0, sizeof(cm.dev));
	cm.nb_dev = 0;
	cm.ctx_list = NULL;
	TAILQ_INIT(&cm.ids);
	cm.thread_running = false;
	cm.epfd = cm.wakefd = cm.qp_err_fd = -1;
	cm.init_err = 0;
	cm.inited = false;
}

static void
cm_atfork_register(void)
{
	pthread_atfork(NULL, NULL, cm_atfork_child);
}

/*
 * Once per process: open the devices and start the thread. 0, or -1 with
 * errno (ENODEV: no droce device; the EAL could not start, for instance).
 */
int
cm_init(void)
{
	struct ibv_device **list;
	struct epoll_event ev = { .events = EPOLLIN };
	int n = 0, err = 0;
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, cm_atfork_register);
	pthread_mutex_lock(&cm.lock);
	if (cm.inited) {
		err = cm.init_err;
		goto out;
	}
	cm.inited = true;
	TAILQ_INIT(&cm.ids);
	cm.next_local_id = (uint32_t)cm_now_ns() ^ ((uint32_t)getpid() << 16);
	cm.next_port = CM_PORT_FIRST + (uint16_t)(cm_now_ns() % (CM_PORT_LAST - CM_PORT_FIRST));
	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		err = ENODEV;
		goto done;
	}
	cm.ctx_list = calloc((size_t)CM_MIN(n, CM_MAX_DEVS) + 1, sizeof(*cm.ctx_list));
	cm.epfd = epoll_create1(EPOLL_CLOEXEC);
	cm.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cm.ctx_list == NULL || cm.epfd < 0 || cm.wakefd < 0) {
		err = errno ? errno : ENOMEM;
		goto done;
	}
	for (int i = 0; i < n && cm.nb_dev < CM_MAX_DEVS; i++) {
		struct cm_dev *d = &cm.dev[cm.nb_dev];

		/* a device that cannot serve the CM is left out, the others serve */
		err = dev_open(d, list[i]);
		if (err) {
			CM_LOG(ERR, "%s left out: %s",
				ibv_get_device_name(list[i]), strerror(err));
			continue;
		}
		ev.data.ptr = d;
		if (epoll_ctl(cm.epfd, EPOLL_CTL_ADD, d->ch->fd, &ev) < 0) {
			err = errno;
			dev_close(d);
			continue;
		}
		cm.ctx_list[cm.nb_dev++] = d->verbs;
	}
	err = cm.nb_dev > 0 ? 0 : err ? err : ENODEV;
	if (err == 0)
		cm.owner = droce_cm_owner(cm.dev[0].verbs);
	if (err == 0) {
		ev.data.ptr = NULL;
		if (epoll_ctl(cm.epfd, EPOLL_CTL_ADD, cm.wakefd, &ev) < 0)
			err = errno;
	}
	if (err == 0) {
		/* without it the CM works, but a peer gone without a DREQ goes unnoticed */
		cm.qp_err_fd = droce_qp_err_fd();
		ev.data.ptr = &qp_err_tag;
		if (cm.qp_err_fd < 0 || epoll_ctl(cm.epfd, EPOLL_CTL_ADD, cm.qp_err_fd, &ev) < 0)
			CM_LOG(WARNING, "no QP error queue: %s", strerror(errno));
	}
	if (err == 0) {
		err = pthread_create(&cm.thread, NULL, cm_thread, NULL);
		cm.thread_running = err == 0;
	}
	if (err == 0) {
		atexit(cm_exit);	/* before the drop-in's linger, which it registered first */
		cm_telemetry_register();
	}
done:
	if (list)
		ibv_free_device_list(list);
	cm.init_err = err;
out:
	pthread_mutex_unlock(&cm.lock);
	return err ? CM_ERR(err) : 0;
}
