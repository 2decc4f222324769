/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm.so.1: every RDMACM_1.0 .. 1.3 entry point of
 * rdma-core v44's librdmacm, so that programs linked against it load over
 * droce. Debian's own librdmacm cannot be used: it needs the kernel's
 * rdma_cm (/dev/infiniband/rdma_cm) and libibverbs' kernel-ABI internals.
 *
 * The connection manager is lib/rdmacm (linked whole into this library).
 * What it does not do yet fails here with errno EOPNOTSUPP, returning -1:
 * the rsocket API. The first such call of a process prints one line on
 * stderr that says so: rstream, riostream, rcopy and udpong then stop with
 * their own "rsocket failed: Operation not supported", and librspreload
 * (which falls back to the kernel's sockets when rsocket fails) would
 * otherwise give no sign that nothing went over RDMA.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

static void
rs_note(void)
{
	fputs("droce: rsockets (rsocket, rbind, rconnect, ...) are not supported by droce's "
	      "librdmacm yet: they fail with EOPNOTSUPP\n", stderr);
}

/* Once per process: the line above; then errno, which fputs may have changed. */
static void
rs_unsupported(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, rs_note);
	errno = EOPNOTSUPP;
}

#define FAIL_NEG() do { rs_unsupported(); return -1; } while (0)

/* --- rsockets (RDMACM_1.0) --- */
int
rsocket(int domain, int type, int protocol)
{
	FAIL_NEG();
}

#define RSOCK_STUB(ret, name, ...)						\
	ret name(__VA_ARGS__)							\
	{									\
		rs_unsupported();						\
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
	rs_unsupported();
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
