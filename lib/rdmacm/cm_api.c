/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rdma_* API of librdmacm (rdma_cma.h): event channels, events, ids,
 * addresses, listen, connect, accept, reject, disconnect, options, with
 * rdma-core v44's semantics (errno values, synchronous ids, event
 * accounting). Each call takes cm.lock; a synchronous id (created with a
 * NULL channel) then waits on its own channel for the event that ends the
 * operation, as rdma-core's ucma_complete does.
 *
 * Addresses are IPv4: a droce device has one, its GID 0 (IPv4-mapped).
 * An IPv6 address is one no droce device has (v6_as_v4 below): binding to
 * it fails with EADDRNOTAVAIL, resolving it ends in ADDR_ERROR (-ENODEV),
 * as the kernel's rdma_cm answers where no RDMA device has a GID for it;
 * IPv4-mapped ones (::ffff:a.b.c.d) are their IPv4 address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm_loc.h"
#include "droce_private.h"

/* ---- event channels and events ---- */

static struct cm_channel *
chan_new(bool sync)
{
	struct cm_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;
	/*
	 * A counting eventfd: each read takes one event's count, blocks at
	 * zero (EAGAIN with O_NONBLOCK), and a thread still blocked in it when
	 * the channel is destroyed stays blocked, as on the kernel's rdma_cm
	 * fd (rping's event thread is left so when its main thread exits).
	 */
	ch->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->sync = sync;
	TAILQ_INIT(&ch->events);
	return ch;
}

/*
 * An application's channel is not closed at once: a program's event thread
 * may be about to read it when another thread destroys it (rping does), and
 * on the kernel's fd it would find it open and block. It waits, fd open and
 * memory kept, among the last CM_ZOMBIES destroyed; older ones are closed.
 * An id's own channel (synchronous ids) is closed at once.
 */
#define CM_ZOMBIES	16

static void
chan_close(struct cm_channel *ch)
{
	close(ch->ch.fd);
	free(ch);
}

static void
chan_free(struct cm_channel *ch)
{
	static struct cm_channel *zombie[CM_ZOMBIES];
	static unsigned int next;
	static pthread_mutex_t zlock = PTHREAD_MUTEX_INITIALIZER;
	struct cm_event *e;

	while ((e = TAILQ_FIRST(&ch->events)) != NULL) {
		TAILQ_REMOVE(&ch->events, e, link);
		free(e);
	}
	if (ch->sync) {
		chan_close(ch);
		return;
	}
	pthread_mutex_lock(&zlock);
	if (zombie[next] != NULL)
		chan_close(zombie[next]);
	zombie[next] = ch;
	next = (next + 1) % CM_ZOMBIES;
	pthread_mutex_unlock(&zlock);
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cm_channel *ch;

	if (cm_init() != 0)
		return NULL;
	ch = chan_new(false);
	if (ch == NULL)
		return NULL;
	return &ch->ch;
}

/*
 * rdma_cma.h asks for the ids to be destroyed first; a program that does it
 * the other way round (some do, on their error paths) must not find its ids
 * pointing at freed memory: the channel then lives on, fd included, until
 * its last id goes.
 */
void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	bool now;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&cm.lock);
	now = ch->refs == 0;
	ch->dead = !now;
	pthread_mutex_unlock(&cm.lock);
	if (now)
		chan_free(ch);
}

/* Under cm.lock: an id leaves @ch; true if the caller must free it. */
static bool
chan_put(struct cm_channel *ch, bool owned)
{
	ch->refs--;
	return ch->refs == 0 && (owned || ch->dead);
}

struct cm_event *
cm_event_new(struct cm_id *c, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->ev.id = &c->id;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = c;
	return e;
}

void
cm_event_post(struct cm_channel *ch, struct cm_event *e)
{
	uint64_t one = 1;

	TAILQ_INSERT_TAIL(&ch->events, e, link);
	if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		(void)0;	/* cannot overflow: at most one count per event */
}

void
cm_report(struct cm_id *c, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e = cm_event_new(c, type, status);

	if (e != NULL)
		cm_event_post(c->chan, e);
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	struct cm_event *e;
	uint64_t v;

	if (channel == NULL || event == NULL)
		return CM_ERR(EINVAL);
	for (;;) {
		/* one count per event; honours O_NONBLOCK set on the fd */
		if (read(ch->ch.fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&cm.lock);
		e = TAILQ_FIRST(&ch->events);
		if (e != NULL) {
			TAILQ_REMOVE(&ch->events, e, link);
			e->owner->events_reported++;	/* reported: now it must be acked */
			if (e->action == CM_ACT_CONN_RESP)
				cm_conn_response(to_cm_id(e->ev.id), e);
			else if (e->action == CM_ACT_QP_ERR)
				cm_qp_to_err(to_cm_id(e->ev.id));
			else if (e->action == CM_ACT_MC_JOIN)
				cm_mc_joined(to_cm_id(e->ev.id), e);
		}
		pthread_mutex_unlock(&cm.lock);
		if (e != NULL)
			break;
		/* an event moved to another channel (rdma_migrate_id) left its count */
	}
	*event = &e->ev;
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e = (struct cm_event *)event;

	if (event == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	e->owner->events_acked++;
	pthread_cond_broadcast(&cm.cond);
	pthread_mutex_unlock(&cm.lock);
	free(e);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "UNKNOWN EVENT";
}

/*
 * A synchronous id's wait for the event that ends its operation (rdma-core's
 * ucma_complete): the event stays in id->event until the next operation or
 * rdma_destroy_id acknowledges it. Without cm.lock.
 */
static int
complete(struct cm_id *c)
{
	struct rdma_cm_event *ev;

	if (!c->sync)
		return 0;
	if (c->id.event) {
		rdma_ack_cm_event(c->id.event);
		c->id.event = NULL;
	}
	if (rdma_get_cm_event(c->id.channel, &ev) != 0)
		return -1;
	c->id.event = ev;
	if (ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return CM_ERR(ECONNREFUSED);
	return CM_ERR(ev->status < 0 ? -ev->status : ev->status);
}

/* ---- ids ---- */

uint16_t
cm_ps_wire(enum rdma_port_space ps)
{
	switch (ps) {
	case RDMA_PS_TCP:
		return DROCE_CM_PS_TCP;
	case RDMA_PS_UDP:
		return DROCE_CM_PS_UDP;
	case RDMA_PS_IB:
		return DROCE_CM_PS_IB;
	default:
		return (uint16_t)ps;
	}
}

struct cm_id *
cm_id_new(struct cm_channel *ch, void *context, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct cm_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->chan = ch;
	ch->refs++;
	c->id.channel = &ch->ch;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = qpt;
	/* the top bits name this process, for a device shared by forked ones */
	do
		c->local_id = cm.owner << (32 - DROCE_CM_ID_OWNER_BITS) |
			      (cm.next_local_id++ & (UINT32_MAX >> DROCE_CM_ID_OWNER_BITS));
	while (c->local_id == 0 || cm_id_by_local(c->local_id) != NULL);
	/*
	 * As the kernel's rdma_cm, for the id's life: rdma_init_qp_attr may
	 * bring a QP of the application's to RTS before rdma_accept or
	 * rdma_connect send it in the REP or REQ
	 */
	c->local_psn = (uint32_t)(cm_now_ns() * 2654435761u) & 0xffffff;
	c->ack_timeout = CM_LOCAL_ACK_TIMEOUT;
	c->retry_count = 7;
	c->rnr_retry = 7;
	c->peer_rnr_retry = 7;
	c->state = CM_IDLE;
	TAILQ_INIT(&c->mcs);
	TAILQ_INSERT_TAIL(&cm.ids, c, link);
	return c;
}

struct cm_id *
cm_id_by_local(uint32_t local_id)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm.ids, link)
		if (c->local_id == local_id && !c->destroying)
			return c;
	return NULL;
}

void
cm_id_set_dev(struct cm_id *c, struct cm_dev *d)
{
	c->dev = d;
	c->id.verbs = d->verbs;
	c->id.port_num = 1;
	if (c->id.pd == NULL)
		c->id.pd = d->pd;
	c->mtu = d->mtu;
	c->id.route.addr.addr.ibaddr.sgid = d->gid;
	c->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
}

/* A request @c no longer counts in its listener's backlog (accepted, refused or gone). */
void
cm_pending_drop(struct cm_id *c)
{
	if (c->listen != NULL) {
		c->listen->pending--;
		c->listen = NULL;
	}
}

static enum ibv_qp_type
ps_qp_type(enum rdma_port_space ps)
{
	return ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	struct cm_id *c;

	if (id == NULL)
		return CM_ERR(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB && ps != RDMA_PS_IPOIB)
		return CM_ERR(EINVAL);
	if (cm_init() != 0)
		return -1;
	if (ch == NULL && (ch = chan_new(true)) == NULL)
		return -1;
	pthread_mutex_lock(&cm.lock);
	c = cm_id_new(ch, context, ps, ps_qp_type(ps));
	pthread_mutex_unlock(&cm.lock);
	if (c == NULL) {
		if (ch->sync)
			chan_free(ch);
		return CM_ERR(ENOMEM);
	}
	c->sync = ch->sync;
	*id = &c->id;
	return 0;
}

/* rdma-core's rdma_create_id2 (rdma_create_ep): the QP type from the address info */
int cm_create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		  enum rdma_port_space ps, enum ibv_qp_type qpt);

int
cm_create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	      enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	int ret = rdma_create_id(channel, id, context, ps);

	if (ret == 0)
		(*id)->qp_type = qpt;
	return ret;
}

/* Under cm.lock: what destroying an id tells the peer (the kernel's rdma_destroy_id). */
static void
farewell(struct cm_id *c)
{
	switch (c->state) {
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
		cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CM_SIDR_REQ_RCVD:
		cm_send_sidr_rep(c, DROCE_CM_SIDR_REJECT, NULL, 0);
		break;
	case CM_REQ_SENT:
	case CM_REP_SENT:
		cm_send_rej(c, DROCE_CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CM_ESTABLISHED:
		cm_send_dreq(c);	/* once: nobody waits for the DREP */
		break;
	default:
		break;
	}
	cm_timer_stop(c);
	cm_pending_drop(c);
}

/*
 * Under cm.lock, in rdma_destroy_id: a DREQ to a peer on this very device
 * (processes forked from one that share it) waits for its DREP, up to
 * CM_DREP_WAIT_MS after it left. Nothing sends it again once the id is
 * gone, and the frame may be lost with this process: an iteration of its
 * own may hold it, taken from the port that the peer's process reads too,
 * when it ends. A peer elsewhere has it once the port does (the flush in
 * post_mad, cm_dev.c).
 */
static void
drep_wait(struct cm_id *c)
{
	uint64_t end = c->dreq_ns + CM_DREP_WAIT_MS * 1000000ull;

	if (c->dev == NULL || c->peer_ip != c->dev->ip)
		return;
	while (c->state == CM_DREQ_SENT && cm_now_ns() < end) {
		pthread_mutex_unlock(&cm.lock);
		usleep(1000);
		pthread_mutex_lock(&cm.lock);
	}
}

/*
 * Under cm.lock: drop @c's events the application has not taken (the
 * kernel's ucma does the same); a connection request it never saw is
 * refused and its id freed.
 */
static void
purge(struct cm_id *c)
{
	struct cm_event *e;

	for (;;) {
		struct cm_id *o = NULL;

		TAILQ_FOREACH(e, &c->chan->events, link) {
			o = to_cm_id(e->ev.id);
			if (e->owner == c || o == c)
				break;
		}
		if (e == NULL)
			return;
		TAILQ_REMOVE(&c->chan->events, e, link);
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && o != c) {
			farewell(o);
			o->destroying = true;
			purge(o);
			TAILQ_REMOVE(&cm.ids, o, link);
			chan_put(o->chan, false);	/* the listener's channel: it stays */
			free(o);
		}
		free(e);
	}
}

/*
 * The listener's service ID on its device, or on every device: a REQ for it
 * comes to this process on a device that forked processes share. 0 or an
 * errno (EADDRINUSE: another process listens there); under cm.lock.
 */
static int
listen_share(struct cm_id *c, bool on)
{
	uint64_t sid = droce_cm_service_id(cm_ps_wire(c->id.ps),
					   cm_sa_port(&c->id.route.addr.src_addr));
	int ret = 0;

	for (int i = 0; i < cm.nb_dev && ret == 0; i++) {
		if (c->dev != NULL && c->dev != &cm.dev[i])
			continue;
		ret = droce_cm_listen(cm.dev[i].verbs, sid, on);
		if (ret && on)	/* the devices it took before: given back */
			for (int j = 0; j < i; j++)
				if (c->dev == NULL || c->dev == &cm.dev[j])
					droce_cm_listen(cm.dev[j].verbs, sid, false);
	}
	return ret;
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *c = to_cm_id(id), *o;
	bool ch_free;

	if (id == NULL)
		return CM_ERR(EINVAL);
	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm.lock);
	if (c->state == CM_LISTEN)
		listen_share(c, false);
	farewell(c);
	drep_wait(c);
	c->destroying = true;
	purge(c);
	cm_mc_leave_all(c);	/* rdma_cma.h: destroying the id leaves its groups */
	TAILQ_FOREACH(o, &cm.ids, link)
		if (o->listen == c)
			o->listen = NULL;	/* its requests outlive it */
	/* rdma_destroy_id blocks until every event reported for the id is acknowledged */
	while (c->events_acked < c->events_reported)
		pthread_cond_wait(&cm.cond, &cm.lock);
	TAILQ_REMOVE(&cm.ids, c, link);
	ch_free = chan_put(c->chan, c->sync);
	pthread_mutex_unlock(&cm.lock);
	if (ch_free)
		chan_free(c->chan);
	free(c->ep_qp_attr);
	free(c);
	return 0;
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_id *c = to_cm_id(id);
	struct cm_channel *to = (struct cm_channel *)channel, *from;
	struct cm_event *e, *tmp;
	bool owned = c != NULL && c->sync;	/* the old channel was the id's own */

	if (id == NULL)
		return CM_ERR(EINVAL);
	if (to == NULL && (to = chan_new(true)) == NULL)
		return -1;
	pthread_mutex_lock(&cm.lock);
	from = c->chan;
	TAILQ_FOREACH_SAFE(e, &from->events, link, tmp) {
		if (e->ev.id != id)
			continue;
		/* its count stays behind: a reader there finds the queue shorter and waits on */
		TAILQ_REMOVE(&from->events, e, link);
		cm_event_post(to, e);
	}
	c->chan = to;
	to->refs++;
	c->id.channel = &to->ch;
	c->sync = to->sync;
	owned = chan_put(from, owned);
	pthread_mutex_unlock(&cm.lock);
	if (owned)
		chan_free(from);
	return 0;
}

/* ---- addresses ---- */

static bool
port_in_use(enum rdma_port_space ps, uint16_t port, in_addr_t ip, const struct cm_id *self)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm.ids, link) {
		in_addr_t o;

		if (c == self || c->destroying || !c->port_set || c->child || c->id.ps != ps ||
		    cm_sa_port(&c->id.route.addr.src_addr) != port)
			continue;
		o = cm_sa_ip(&c->id.route.addr.src_addr);
		if (o == INADDR_ANY || ip == INADDR_ANY || o == ip) {
			if (self->reuseaddr && c->reuseaddr && c->state != CM_LISTEN)
				continue;
			return true;
		}
	}
	return false;
}

uint16_t
cm_port_alloc(enum rdma_port_space ps)
{
	for (unsigned int i = 0; i <= CM_PORT_LAST - CM_PORT_FIRST; i++) {
		uint16_t p = cm.next_port++;
		struct cm_id probe = { .id.ps = ps };

		if (cm.next_port > CM_PORT_LAST)
			cm.next_port = CM_PORT_FIRST;
		if (!port_in_use(ps, p, INADDR_ANY, &probe))
			return p;
	}
	return 0;
}

/*
 * The IPv4 form of an AF_INET6 address in *@out: an IPv4-mapped address
 * (::ffff:a.b.c.d, what getaddrinfo gives with AI_V4MAPPED) is that IPv4
 * address, the unspecified one (::) the IPv4 wildcard unless the id is
 * AF_ONLY (the kernel's dual-stack wildcard: it takes IPv4 requests too).
 * False for any other address: droce devices have no IPv6 GID.
 */
static bool
v6_as_v4(const struct sockaddr *sa, bool afonly, struct sockaddr_in *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family != AF_INET6)
		return false;
	memset(out, 0, sizeof(*out));
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		memcpy(&out->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	else if (!IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) || afonly)
		return false;
	out->sin_family = AF_INET;
	out->sin_port = s6->sin6_port;
	return true;
}

/* Under cm.lock: give @c the source address @sa (port 0: one is chosen). */
static int
bind_locked(struct cm_id *c, const struct sockaddr *sa)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct sockaddr_in v4;
	struct cm_dev *d = NULL;
	uint16_t port;

	if (sa->sa_family == AF_INET6) {
		/* the kernel's rdma_bind_addr: no device has the address */
		if (!v6_as_v4(sa, c->afonly, &v4))
			return EADDRNOTAVAIL;
		sin = &v4;
	} else if (sa->sa_family != AF_INET) {
		return EINVAL;
	}
	if (c->state != CM_IDLE || c->bound)
		return EINVAL;
	if (sin->sin_addr.s_addr != INADDR_ANY) {
		d = cm_dev_by_ip(sin->sin_addr.s_addr);
		if (d == NULL)
			return EADDRNOTAVAIL;
	}
	port = ntohs(sin->sin_port);
	if (port == 0) {
		port = cm_port_alloc(c->id.ps);
		if (port == 0)
			return EADDRINUSE;
	} else if (port_in_use(c->id.ps, port, sin->sin_addr.s_addr, c)) {
		return EADDRINUSE;
	}
	memset(&c->id.route.addr.src_storage, 0, sizeof(c->id.route.addr.src_storage));
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.src_sin.sin_addr = sin->sin_addr;
	c->id.route.addr.src_sin.sin_port = htons(port);
	c->bound = c->port_set = true;
	c->state = CM_ADDR_BOUND;
	if (d != NULL)
		cm_id_set_dev(c, d);
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int ret;

	if (id == NULL || addr == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	ret = bind_locked(to_cm_id(id), addr);
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

void
cm_path_fill(struct cm_id *c)
{
	struct ibv_sa_path_rec *p = &c->path;

	memset(p, 0, sizeof(*p));
	p->sgid = c->dev->gid;
	memset(&p->dgid, 0, sizeof(p->dgid));
	p->dgid.raw[10] = p->dgid.raw[11] = 0xff;
	memcpy(&p->dgid.raw[12], &c->peer_ip, 4);
	p->dlid = p->slid = 0;
	p->raw_traffic = 0;
	p->hop_limit = 64;
	p->traffic_class = c->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htons(0xffff);
	p->mtu_selector = 2;		/* exactly */
	p->mtu = (uint8_t)c->mtu;
	p->rate_selector = 2;
	p->rate = 3;			/* 10 Gb/s, as the kernel reports a RoCE path */
	p->packet_life_time_selector = 2;
	p->packet_life_time = c->ack_timeout > 0 ? (uint8_t)(c->ack_timeout - 1) : 0;
	c->id.route.addr.addr.ibaddr.dgid = p->dgid;
	c->id.route.path_rec = p;
	c->id.route.num_paths = 1;
}

/*
 * Under cm.lock: is @c's peer's MAC known yet? ADDR_RESOLVED when it is,
 * ADDR_ERROR (-ETIMEDOUT, as Linux) once the time-out has passed, else ask
 * again in CM_ADDR_POLL_MS.
 */
void
cm_addr_poll(struct cm_id *c)
{
	uint8_t mac[6];
	int ret = droce_neigh_resolve(c->dev->verbs, c->peer_ip, mac);

	if (ret == 0) {
		c->state = CM_ADDR_BOUND;
		cm_report(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	} else if (ret != EAGAIN || cm_now_ns() >= c->addr_end_ns) {
		c->state = CM_ADDR_BOUND;	/* may be resolved again */
		c->peer_ip = 0;
		cm_report(c, RDMA_CM_EVENT_ADDR_ERROR, ret == EAGAIN ? -ETIMEDOUT : -ret);
	} else {
		cm_timer_set(c, CM_ADDR_POLL_MS, 0);
	}
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct cm_id *c = to_cm_id(id);
	const struct sockaddr_in *dst = (const struct sockaddr_in *)dst_addr;
	struct sockaddr_in any = { .sin_family = AF_INET }, dst4;
	bool no_dev = false;
	struct cm_dev *d;
	int ret = 0;

	if (id == NULL || dst_addr == NULL)
		return CM_ERR(EINVAL);
	if (dst_addr->sa_family == AF_INET6) {
		if (v6_as_v4(dst_addr, false, &dst4))
			dst = &dst4;
		else
			no_dev = true;	/* an IPv6 destination: no device can reach it */
	} else if (dst_addr->sa_family != AF_INET) {
		return CM_ERR(EINVAL);
	}
	pthread_mutex_lock(&cm.lock);
	if (!c->bound) {
		if (src_addr != NULL && src_addr->sa_family != AF_UNSPEC)
			ret = bind_locked(c, src_addr);
		else
			ret = bind_locked(c, (struct sockaddr *)&any);
	} else if (c->state != CM_ADDR_BOUND) {
		ret = EINVAL;
	}
	if (ret)
		goto out;
	if (no_dev) {
		/*
		 * The kernel's rdma_cm resolves the route, then finds no RDMA
		 * device with a GID for the source: ADDR_ERROR, -ENODEV.
		 */
		cm_report(c, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
		goto out;
	}
	d = c->dev;
	if (d == NULL) {
		d = cm_dev_route(dst->sin_addr.s_addr);
		if (d == NULL) {
			ret = ENODEV;
			goto out;
		}
		cm_id_set_dev(c, d);
		c->id.route.addr.src_sin.sin_addr.s_addr = d->ip;
	}
	memset(&c->id.route.addr.dst_storage, 0, sizeof(c->id.route.addr.dst_storage));
	memcpy(&c->id.route.addr.dst_sin, dst, sizeof(*dst));
	c->peer_ip = dst->sin_addr.s_addr;
	/* a loopback destination is the device itself */
	if ((ntohl(c->peer_ip) >> 24) == 127 || c->peer_ip == INADDR_ANY) {
		c->peer_ip = d->ip;
		c->id.route.addr.dst_sin.sin_addr.s_addr = d->ip;
	}
	c->id.route.addr.addr.ibaddr.dgid.raw[10] = 0xff;
	c->id.route.addr.addr.ibaddr.dgid.raw[11] = 0xff;
	memcpy(&c->id.route.addr.addr.ibaddr.dgid.raw[12], &c->peer_ip, 4);
	if (IN_MULTICAST(ntohl(c->peer_ip))) {
		/* a group: its MAC is made from its address, nothing to ask */
		c->state = CM_ADDR_BOUND;
		cm_report(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
		goto out;
	}
	/* the peer's link-layer address, as the kernel's rdma_resolve_ip: ARP */
	c->state = CM_ADDR_QUERY;
	c->addr_end_ns = cm_now_ns() +
			 (uint64_t)(timeout_ms > 0 ? timeout_ms : CM_ADDR_TIMEOUT_MS) * 1000000;
	cm_addr_poll(c);
out:
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return CM_ERR(ret);
	return complete(c);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *c = to_cm_id(id);
	int ret = 0;

	(void)timeout_ms;
	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (c->state != CM_ADDR_BOUND || c->dev == NULL || c->peer_ip == 0) {
		ret = EINVAL;
	} else {
		cm_path_fill(c);
		c->state = CM_ROUTE_RESOLVED;
		cm_report(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	}
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return CM_ERR(ret);
	return complete(c);
}

/* ---- listen ---- */

struct cm_id *
cm_listener_find(struct cm_dev *d, uint16_t ps, uint16_t port, in_addr_t dst)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm.ids, link) {
		in_addr_t ip;

		if (c->state != CM_LISTEN || c->destroying || cm_ps_wire(c->id.ps) != ps ||
		    cm_sa_port(&c->id.route.addr.src_addr) != port)
			continue;
		ip = cm_sa_ip(&c->id.route.addr.src_addr);
		if (ip != INADDR_ANY && ip != dst && ip != d->ip)
			continue;
		if (c->dev != NULL && c->dev != d)
			continue;
		return c;
	}
	return NULL;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *c = to_cm_id(id);
	struct sockaddr_in any = { .sin_family = AF_INET };
	int ret = 0;

	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (!c->bound)
		ret = bind_locked(c, (struct sockaddr *)&any);
	if (ret == 0 && c->state != CM_ADDR_BOUND)
		ret = c->state == CM_LISTEN ? 0 : EINVAL;
	if (ret == 0 && c->state != CM_LISTEN)
		ret = listen_share(c, true);
	if (ret == 0) {
		/* the kernel's ucma: 0, negative or too large means its maximum */
		c->backlog = backlog > 0 && backlog < 1024 ? backlog : 1024;
		c->state = CM_LISTEN;
		if (cm_debug())
			CM_LOG(DEBUG, "%.3f listen port %u backlog %d",
				(double)(cm_now_ns() % 1000000000000ull) / 1e9,
				cm_sa_port(&c->id.route.addr.src_addr), c->backlog);
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

/* ---- connect, accept, reject, establish, disconnect ---- */

static int
param_check(struct cm_id *c, const struct rdma_conn_param *p)
{
	if (c->id.ps != RDMA_PS_TCP)
		return 0;
	if (c->id.qp == NULL && p == NULL)
		return EINVAL;
	if (p == NULL)
		return 0;
	if (p->responder_resources != RDMA_MAX_RESP_RES &&
	    p->responder_resources > c->dev->max_dest_rd_atomic)
		return EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    p->initiator_depth > c->dev->max_rd_atomic)
		return EINVAL;
	return 0;
}

static bool
is_ud(const struct cm_id *c)
{
	return c->id.qp_type == IBV_QPT_UD;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct cm_id *c = to_cm_id(id);
	int ret;

	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (c->state != CM_ROUTE_RESOLVED) {
		ret = EINVAL;
		goto out;
	}
	if (p && p->private_data_len > (is_ud(c) ? DROCE_CM_SIDR_REQ_PDATA_LEN :
				       DROCE_CM_REQ_PDATA_LEN) - DROCE_CM_IP_HDR_LEN) {
		ret = EINVAL;
		goto out;
	}
	if (is_ud(c)) {
		ret = cm_send_sidr_req(c, p);
		goto out;
	}
	ret = param_check(c, p);
	if (ret)
		goto out;
	c->init_depth = p && p->initiator_depth != RDMA_MAX_INIT_DEPTH ? p->initiator_depth :
								      c->dev->max_rd_atomic;
	c->resp_res = p && p->responder_resources != RDMA_MAX_RESP_RES ?
		      p->responder_resources : c->dev->max_dest_rd_atomic;
	c->qp_num = c->id.qp ? c->id.qp->qp_num : p->qp_num;
	c->srq = c->id.qp ? c->id.qp->srq != NULL : p->srq;
	c->retry_count = p ? p->retry_count & 7 : 7;
	c->peer_rnr_retry = p ? p->rnr_retry_count & 7 : 7;
	c->flow_control = p ? p->flow_control & 1 : 0;
	ret = cm_send_req(c, p);
out:
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return CM_ERR(ret);
	return complete(c);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct cm_id *c = to_cm_id(id);
	int ret;

	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (c->state == CM_SIDR_REQ_RCVD) {
		c->qp_num = c->id.qp ? c->id.qp->qp_num : p ? p->qp_num : 0;
		c->remote_qkey = RDMA_UDP_QKEY;
		ret = cm_send_sidr_rep(c, DROCE_CM_SIDR_SUCCESS, p ? p->private_data : NULL,
				       p ? p->private_data_len : 0);
		if (ret == 0)
			cm_pending_drop(c);
		pthread_mutex_unlock(&cm.lock);
		if (ret)
			return CM_ERR(ret);
		if (c->sync && c->id.event) {
			rdma_ack_cm_event(c->id.event);
			c->id.event = NULL;
		}
		return 0;
	}
	if (c->state != CM_REQ_RCVD) {
		ret = EINVAL;
		goto out;
	}
	ret = param_check(c, p);
	if (ret == 0 && p && p->private_data_len > DROCE_CM_REP_PDATA_LEN)
		ret = EINVAL;
	if (ret)
		goto out;
	if (p && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		c->init_depth = p->initiator_depth;
	else if (c->init_depth > c->dev->max_rd_atomic)
		c->init_depth = c->dev->max_rd_atomic;
	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		c->resp_res = p->responder_resources;
	else if (c->resp_res > c->dev->max_dest_rd_atomic)
		c->resp_res = c->dev->max_dest_rd_atomic;
	c->qp_num = c->id.qp ? c->id.qp->qp_num : p->qp_num;
	c->srq = c->id.qp ? c->id.qp->srq != NULL : p->srq;
	c->peer_rnr_retry = p ? p->rnr_retry_count & 7 : 7;
	if (p)
		c->flow_control = p->flow_control & 1;
	if (cm_qp_to_rtr_rts(c) != 0) {
		ret = errno;
		goto out;
	}
	ret = cm_send_rep(c, p);
	if (ret == 0)
		cm_pending_drop(c);
out:
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return CM_ERR(ret);
	return complete(c);
}

static int
reject(struct rdma_cm_id *id, const void *pdata, uint8_t len, uint16_t reason)
{
	struct cm_id *c = to_cm_id(id);
	int ret;

	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (c->state == CM_SIDR_REQ_RCVD && len <= DROCE_CM_SIDR_REP_PDATA_LEN)
		ret = cm_send_sidr_rep(c, DROCE_CM_SIDR_REJECT, pdata, len);
	else if (c->state == CM_REQ_RCVD && len <= DROCE_CM_REJ_PDATA_LEN)
		ret = cm_send_rej(c, reason, pdata, len);
	else
		ret = EINVAL;
	if (ret == 0)
		cm_pending_drop(c);
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, DROCE_CM_REJ_CONSUMER_DEFINED);
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, DROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *c = to_cm_id(id);
	int ret = 0;

	if (id == NULL || id->qp != NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (c->state != CM_REP_RCVD) {
		ret = EINVAL;
	} else {
		c->state = CM_ESTABLISHED;
		ret = cm_send_rtu(c);
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *c = to_cm_id(id);
	int ret = 0;

	if (id == NULL)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		cm_qp_to_err(c);
		ret = cm_send_dreq(c);
		break;
	case CM_TIMEWAIT:
		if (!c->tw_report) {	/* rejected after the REP: never connected */
			ret = EINVAL;
			break;
		}
		/* fall through */
	case CM_DISCONNECTED:
	case CM_DREQ_SENT:
		cm_qp_to_err(c);	/* the peer's DREQ was answered already */
		break;
	default:
		ret = EINVAL;
		break;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct cm_id *c = to_cm_id(id);
	int ret = 0;

	if (id == NULL)
		return CM_ERR(EINVAL);
	if (event != IBV_EVENT_COMM_EST)
		return CM_ERR(EINVAL);
	pthread_mutex_lock(&cm.lock);
	/* data arrived before the RTU: the connection is there (IBA 12.9.8.4) */
	if (c->state == CM_REP_SENT) {
		cm_timer_stop(c);
		c->state = CM_ESTABLISHED;
		c->mad_valid = false;
		cm_report(c, RDMA_CM_EVENT_ESTABLISHED, 0);
	} else if (c->state != CM_ESTABLISHED) {
		ret = EINVAL;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? CM_ERR(ret) : 0;
}

/* ---- options, ports, devices, ECE ---- */

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct cm_id *c = to_cm_id(id);
	bool ok;

	if (id == NULL || optval == NULL)
		return CM_ERR(EINVAL);
	if (level == RDMA_OPTION_IB)
		return CM_ERR(optname == RDMA_OPTION_IB_PATH ? EINVAL : ENOSYS);	/* no SA on RoCE */
	if (level != RDMA_OPTION_ID)
		return CM_ERR(ENOSYS);
	pthread_mutex_lock(&cm.lock);
	/* each option: its size and when it may be set, then the value */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		ok = optlen == sizeof(uint8_t);
		if (ok) {
			c->tos = *(uint8_t *)optval;
			c->tos_set = true;
		}
		break;
	case RDMA_OPTION_ID_REUSEADDR:
		ok = optlen == sizeof(int) && (c->state == CM_IDLE || c->state == CM_ADDR_BOUND);
		if (ok)
			c->reuseaddr = *(int *)optval != 0;
		break;
	case RDMA_OPTION_ID_AFONLY:
		ok = optlen == sizeof(int) && !c->bound;
		if (ok)
			c->afonly = *(int *)optval != 0;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		ok = optlen == sizeof(uint8_t);
		if (ok) {
			c->ack_timeout = *(uint8_t *)optval & 31;
			c->ack_timeout_set = true;
		}
		break;
	default:
		pthread_mutex_unlock(&cm.lock);
		return CM_ERR(ENOSYS);
	}
	pthread_mutex_unlock(&cm.lock);
	return ok ? 0 : CM_ERR(EINVAL);
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_addr.sa_family == AF_INET ? id->route.addr.src_sin.sin_port :
	       id->route.addr.src_addr.sa_family == AF_INET6 ? id->route.addr.src_sin6.sin6_port : 0;
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_addr.sa_family == AF_INET ? id->route.addr.dst_sin.sin_port :
	       id->route.addr.dst_addr.sa_family == AF_INET6 ? id->route.addr.dst_sin6.sin6_port : 0;
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;

	if (cm_init() != 0) {
		if (num_devices)
			*num_devices = 0;
		return NULL;
	}
	list = calloc((size_t)cm.nb_dev + 1, sizeof(*list));
	if (list == NULL)
		return NULL;
	memcpy(list, cm.ctx_list, (size_t)cm.nb_dev * sizeof(*list));
	if (num_devices)
		*num_devices = cm.nb_dev;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ECE (enhanced connection establishment) is a vendor extension droce does not negotiate. */
int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || id->qp != NULL || ece == NULL)
		return CM_ERR(EINVAL);
	return CM_ERR(EOPNOTSUPP);
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL)
		return CM_ERR(EINVAL);
	return CM_ERR(EOPNOTSUPP);
}
