/* SPDX-License-Identifier: BSD-3-Clause */
/* What mp_peer and mp_stress share: see mp_common.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_memzone.h>

#include "droce.h"
#include "mp_common.h"

const char *mp_tag = "mp";
void (*mp_fail_hook)(int code);
bool mp_tcp_eof;

/* --- command line, logging, exit --- */
int
mp_parse_role(int argc, char **argv, const char *prog)
{
	static char tag[64];
	int role;

	if (argc < 3)
		return -1;
	if (strcmp(argv[1], "server") == 0)
		role = ROLE_SERVER;
	else if (strcmp(argv[1], "client") == 0)
		role = ROLE_CLIENT;
	else
		return -1;
	snprintf(tag, sizeof(tag), "%s %s", prog, argv[1]);
	mp_tag = tag;
	return role;
}

void
say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", mp_tag);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
mp_fail_exit(int code)
{
	if (mp_fail_hook)
		mp_fail_hook(code);
	exit(code);
}

static const char *watchdog_msg;
static size_t watchdog_len;

static void
watchdog(int sig)
{
	(void)sig;
	if (write(2, watchdog_msg, watchdog_len) < 0) {
		/* nothing more to do */
	}
	_exit(3);
}

void
mp_signals_init(const char *msg)
{
	watchdog_msg = msg;
	watchdog_len = strlen(msg);
	signal(SIGALRM, watchdog);
	signal(SIGPIPE, SIG_IGN);
}

/* --- time, numbers --- */
double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint32_t
rand_psn(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)splitmix64((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32)) & 0xffffff;
}

uint32_t
mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

void
mp_fill_pattern(uint8_t *p, size_t len, uint64_t seed, uint32_t idx)
{
	uint64_t base = splitmix64(seed ^ ((uint64_t)idx * 0xd1b54a32d192ed03ULL));
	size_t off = 0;

	for (uint64_t k = 0; off < len; k++) {
		uint64_t v = splitmix64(base + k);
		size_t n = len - off < 8 ? len - off : 8;

		for (size_t b = 0; b < n; b++)
			p[off + b] = (uint8_t)(v >> (8 * b));
		off += n;
	}
}

/* --- TCP --- */
int
write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	mp_tcp_eof = false;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int
read_all(int fd, void *buf, size_t len, double deadline)
{
	uint8_t *p = buf;

	mp_tcp_eof = false;
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = (int)((deadline - now_s()) * 1000);
		ssize_t n;

		if (ms <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			mp_tcp_eof = n == 0;
			errno = n == 0 ? ECONNRESET : errno;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

bool
readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

static void
nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int
mp_tcp_listen(const char *port, int backlog)
{
	struct sockaddr_in sa = { 0 };
	int lfd, one = 1;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(port));
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, backlog))
		die("cannot listen on TCP port %s: %s", port, strerror(errno));
	say("listening on TCP port %s", port);
	return lfd;
}

int
mp_tcp_accept(int lfd, unsigned int timeout)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&pfd, 1, timeout * 1000) <= 0)
		die("no client connected within %u s", timeout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	nodelay(fd);
	return fd;
}

/*
 * A connect() retried towards a local port nobody listens on can be given
 * that very port as its source and connect to itself (TCP simultaneous
 * open); the server then cannot listen. Such a socket is closed and the
 * connect retried.
 */
static bool
self_connected(int fd)
{
	struct sockaddr_in me, peer;
	socklen_t lm = sizeof(me), lp = sizeof(peer);

	if (getsockname(fd, (struct sockaddr *)&me, &lm) != 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &lp) != 0)
		return false;
	return me.sin_port == peer.sin_port && me.sin_addr.s_addr == peer.sin_addr.s_addr;
}

int
mp_tcp_connect(const char *addr, const char *port, double deadline, unsigned int timeout)
{
	struct sockaddr_in sa = { 0 };
	int fd;

	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(port));
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("bad --peer address %s", addr);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && !self_connected(fd))
			break;
		close(fd);
		if (now_s() > deadline)
			die("cannot connect to %s:%s within %u s: %s", addr, port, timeout,
			    strerror(errno));
		usleep(50000);
	}
	nodelay(fd);
	return fd;
}

/* --- verbs --- */
void
mp_open_dev(struct mp_res *r)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1)
		die("no RDMA device (is DROCE_EAL set, and did its droce vdev probe?)");
	r->ctx = ibv_open_device(list[0]);
	if (r->ctx == NULL)
		die("cannot open %s: %s", ibv_get_device_name(list[0]), strerror(errno));
	if (ibv_query_port(r->ctx, 1, &pa) || ibv_query_gid(r->ctx, 1, 0, &r->gid))
		die("cannot query port 1 / GID 0");
	r->mtu = pa.active_mtu;
	say("device %s, port %s, active MTU %u", ibv_get_device_name(r->ctx->device),
	    ibv_port_state_str(pa.state), mtu_bytes(r->mtu));
	ibv_free_device_list(list);
	r->pd = ibv_alloc_pd(r->ctx);
	if (r->pd == NULL)
		die("ibv_alloc_pd: %s", strerror(errno));
}

void
mp_create_cqs(struct mp_res *r, int send_cqe, int recv_cqe)
{
	r->scq = ibv_create_cq(r->ctx, send_cqe, NULL, NULL, 0);
	r->rcq = ibv_create_cq(r->ctx, recv_cqe, NULL, NULL, 0);
	if (r->scq == NULL || r->rcq == NULL)
		die("ibv_create_cq: %s", strerror(errno));
}

void
mp_reg_buf(struct mp_res *r, size_t len, uint8_t canary, unsigned int access)
{
	r->buf_len = len;
	r->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (r->buf == NULL)
		die("cannot allocate %zu bytes", len);
	memset(r->buf, canary, len);
	r->mr = ibv_reg_mr(r->pd, r->buf, len, access);
	if (r->mr == NULL)
		die("ibv_reg_mr(%zu): %s", len, strerror(errno));
}

void
mp_wait_port_active(struct mp_res *r, double deadline, unsigned int timeout)
{
	struct ibv_port_attr pa;

	for (;;) {
		if (ibv_query_port(r->ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE)
			return;
		if (now_s() > deadline) {
			if (timeout)
				die("port 1 not ACTIVE within %u s (state %s)", timeout,
				    ibv_port_state_str(pa.state));
			die("port 1 not ACTIVE within the timeout (state %s)",
			    ibv_port_state_str(pa.state));
		}
		usleep(10000);
	}
}

/* release @obj with @fn unless it is NULL; say so if that fails */
#define RELEASE(obj, fn) do { if ((obj) && fn(obj)) say(#fn " failed"); } while (0)

void
mp_destroy_qp_res(struct mp_res *r)
{
	RELEASE(r->ah, ibv_destroy_ah);
	RELEASE(r->qp, ibv_destroy_qp);
	RELEASE(r->srq, ibv_destroy_srq);
	RELEASE(r->scq, ibv_destroy_cq);
	RELEASE(r->rcq, ibv_destroy_cq);
	RELEASE(r->mr, ibv_dereg_mr);
	free(r->buf);
	r->ah = NULL;
	r->qp = NULL;
	r->srq = NULL;
	r->scq = r->rcq = NULL;
	r->mr = NULL;
	r->buf = NULL;
}

void
mp_close_dev(struct mp_res *r)
{
	RELEASE(r->pd, ibv_dealloc_pd);
	RELEASE(r->ctx, ibv_close_device);
}

enum ibv_mtu
mp_path_mtu(enum ibv_mtu mine, uint32_t peer)
{
	return (uint32_t)mine < peer ? mine : (enum ibv_mtu)peer;
}

void
mp_rc_connect(struct ibv_qp *qp, const struct mp_rc_peer *peer, uint32_t my_psn,
	      const struct mp_rc_attr *at)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = at->access;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = peer->path_mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = at->rd_atomic;
	a.min_rnr_timer = at->min_rnr_timer;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = at->timeout;
	a.retry_cnt = at->retry_cnt;
	a.rnr_retry = at->rnr_retry;
	a.max_rd_atomic = at->rd_atomic;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS: %s", strerror(errno));
}

/* --- leak check --- */
static void
count_pool(struct rte_mempool *mp, void *arg)
{
	struct mp_levels *l = arg;

	l->pools++;
	l->pool_objs_in_use += rte_mempool_in_use_count(mp);
}

static void
count_memzone(const struct rte_memzone *mz, void *arg)
{
	(void)mz;
	((struct mp_levels *)arg)->memzones++;
}

void
mp_levels_get(struct ibv_context *ctx, struct mp_levels *l)
{
	struct droce_dev_objects o;

	memset(l, 0, sizeof(*l));
	if (droce_dev_objects_get(ibv_get_device_name(ctx->device), &o) != 0)
		die("droce_dev_objects_get(%s) failed", ibv_get_device_name(ctx->device));
	l->contexts = o.contexts;
	l->pds = o.pds;
	l->mrs = o.mrs;
	l->cqs = o.cqs;
	l->srqs = o.srqs;
	l->qps = o.qps;
	l->ahs = o.ahs;
	l->mbufs_in_use = o.mbufs_in_use;
	l->mbufs_staged = o.mbufs_staged;
	rte_mempool_walk(count_pool, l);
	rte_memzone_walk(count_memzone, l);
	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0) {
			l->heap_objs += st.alloc_count;
			l->heap_bytes += st.heap_allocsz_bytes;
		}
	}
}

void
mp_levels_str(const struct mp_levels *l, char *buf, size_t len)
{
	snprintf(buf, len, "%u contexts, %u PDs, %u MRs, %u CQs, %u SRQs, %u QPs, %u AHs; "
		 "device pool %u mbufs in use (%u staged for the port); %u mempools, %llu objects "
		 "in use; %u memzones; %llu rte_malloc objects, %llu bytes",
		 l->contexts, l->pds, l->mrs, l->cqs, l->srqs, l->qps, l->ahs, l->mbufs_in_use,
		 l->mbufs_staged, l->pools, (unsigned long long)l->pool_objs_in_use, l->memzones,
		 (unsigned long long)l->heap_objs, (unsigned long long)l->heap_bytes);
}

bool
mp_levels_same(const struct mp_levels *b, const struct mp_levels *n, bool droce_only, char *why,
	       size_t len)
{
	size_t off = 0;

	why[0] = '\0';
#define DIFF(name, x, y) do { \
	if ((x) != (y) && off < len) \
		off += snprintf(why + off, len - off, "%s%s %lld -> %lld", off ? ", " : "", \
				name, (long long)(x), (long long)(y)); \
} while (0)
	DIFF("contexts", b->contexts, n->contexts);
	DIFF("PDs", b->pds, n->pds);
	DIFF("MRs", b->mrs, n->mrs);
	DIFF("CQs", b->cqs, n->cqs);
	DIFF("SRQs", b->srqs, n->srqs);
	DIFF("QPs", b->qps, n->qps);
	DIFF("AHs", b->ahs, n->ahs);
	DIFF("device pool mbufs in use, not staged", (int64_t)b->mbufs_in_use - b->mbufs_staged,
	     (int64_t)n->mbufs_in_use - n->mbufs_staged);
	DIFF("mempools", b->pools, n->pools);
	DIFF("mempool objects in use, not staged", (int64_t)b->pool_objs_in_use - b->mbufs_staged,
	     (int64_t)n->pool_objs_in_use - n->mbufs_staged);
	if (!droce_only) {
		DIFF("memzones", b->memzones, n->memzones);
		DIFF("rte_malloc objects", b->heap_objs, n->heap_objs);
		DIFF("rte_malloc bytes", b->heap_bytes, n->heap_bytes);
	}
#undef DIFF
	return off == 0;
}
