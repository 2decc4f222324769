/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm.so.1: every RDMACM_1.0 .. 1.3 entry point of
 * rdma-core v44's librdmacm, so that programs linked against it load over
 * droce. Debian's own librdmacm cannot be used: it needs the kernel's
 * rdma_cm (/dev/infiniband/rdma_cm) and libibverbs' kernel-ABI internals.
 *
 * There is no connection manager yet: every call fails with errno ENOSYS,
 * returning -1 (NULL for pointers); the void ones release nothing, since
 * nothing was ever handed out. rdma_event_str() is a pure table lookup
 * and answers.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#define FAIL_NEG() do { errno = ENOSYS; return -1; } while (0)
#define FAIL_PTR() do { errno = ENOSYS; return NULL; } while (0)

/* rdma_verbs.h and rdma_cma.h declare these as part of the public API */
int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr);
void rdma_destroy_srq(struct rdma_cm_id *id);

/* --- RDMACM_1.0: event channels and ids --- */
struct rdma_event_channel *
rdma_create_event_channel(void)
{
	FAIL_PTR();
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	FAIL_NEG();
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	FAIL_NEG();
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	FAIL_NEG();
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	FAIL_NEG();
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	FAIL_NEG();
}

/* --- addresses and routes --- */
int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	FAIL_NEG();
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	FAIL_NEG();
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	FAIL_NEG();
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	FAIL_NEG();
}

/* no id exists, so it has no port */
__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	errno = ENOSYS;
	return 0;
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	errno = ENOSYS;
	return 0;
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	FAIL_PTR();
}

void
rdma_free_devices(struct ibv_context **list)
{
}

/* --- QPs and SRQs on an id --- */
int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	FAIL_NEG();
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *qp_init_attr)
{
	FAIL_NEG();
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	FAIL_NEG();
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	FAIL_NEG();
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
}

/* --- connections --- */
int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	FAIL_NEG();
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	FAIL_NEG();
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	FAIL_NEG();
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	FAIL_NEG();
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	FAIL_NEG();
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	FAIL_NEG();
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	FAIL_NEG();
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	FAIL_NEG();
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	FAIL_NEG();
}

/* --- events --- */
int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	FAIL_NEG();
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	FAIL_NEG();
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR: return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR: return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST: return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR: return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE: return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED: return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED: return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED: return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL: return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN: return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR: return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE: return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT: return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	default: return "UNKNOWN EVENT";
	}
}

/* --- RDMACM_1.1 .. 1.3 --- */
int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	FAIL_NEG();
}

int
rdma_establish(struct rdma_cm_id *id)
{
	FAIL_NEG();
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	FAIL_NEG();
}

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	FAIL_NEG();
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	FAIL_NEG();
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	FAIL_NEG();
}

/* --- rsockets (RDMACM_1.0) --- */
int
rsocket(int domain, int type, int protocol)
{
	FAIL_NEG();
}

#define RSOCK_STUB(ret, name, ...)						\
	ret name(__VA_ARGS__)							\
	{									\
		errno = ENOSYS;							\
		return -1;							\
	}

RSOCK_STUB(int, rbind, int socket, const struct sockaddr *addr, socklen_t addrlen)
RSOCK_STUB(int, rlisten, int socket, int backlog)
RSOCK_STUB(int, raccept, int socket, struct sockaddr *addr, socklen_t *addrlen)
RSOCK_STUB(int, rconnect, int socket, const struct sockaddr *addr, socklen_t addrlen)
RSOCK_STUB(int, rshutdown, int socket, int how)
RSOCK_STUB(int, rclose, int socket)
RSOCK_STUB(ssize_t, rrecv, int socket, void *buf, size_t len, int flags)
RSOCK_STUB(ssize_t, rrecvfrom, int socket, void *buf, size_t len, int flags,
	   struct sockaddr *src_addr, socklen_t *addrlen)
RSOCK_STUB(ssize_t, rrecvmsg, int socket, struct msghdr *msg, int flags)
RSOCK_STUB(ssize_t, rsend, int socket, const void *buf, size_t len, int flags)
RSOCK_STUB(ssize_t, rsendto, int socket, const void *buf, size_t len, int flags,
	   const struct sockaddr *dest_addr, socklen_t addrlen)
RSOCK_STUB(ssize_t, rsendmsg, int socket, const struct msghdr *msg, int flags)
RSOCK_STUB(ssize_t, rread, int socket, void *buf, size_t count)
RSOCK_STUB(ssize_t, rreadv, int socket, const struct iovec *iov, int iovcnt)
RSOCK_STUB(ssize_t, rwrite, int socket, const void *buf, size_t count)
RSOCK_STUB(ssize_t, rwritev, int socket, const struct iovec *iov, int iovcnt)
RSOCK_STUB(int, rgetpeername, int socket, struct sockaddr *addr, socklen_t *addrlen)
RSOCK_STUB(int, rgetsockname, int socket, struct sockaddr *addr, socklen_t *addrlen)
RSOCK_STUB(int, rsetsockopt, int socket, int level, int optname, const void *optval,
	   socklen_t optlen)
RSOCK_STUB(int, rgetsockopt, int socket, int level, int optname, void *optval,
	   socklen_t *optlen)
RSOCK_STUB(int, rfcntl, int socket, int cmd, ...)
RSOCK_STUB(off_t, riomap, int socket, void *buf, size_t len, int prot, int flags, off_t offset)
RSOCK_STUB(int, riounmap, int socket, void *buf, size_t len)

/* riowrite returns a size_t count; "-1" as rdma-core does on error */
size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	errno = ENOSYS;
	return (size_t)-1;
}

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	FAIL_NEG();
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	FAIL_NEG();
}
