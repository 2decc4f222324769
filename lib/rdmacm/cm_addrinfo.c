/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo() and rdma_freeaddrinfo() as rdma-core v44's librdmacm
 * answers them (librdmacm/addrinfo.c, man rdma_getaddrinfo(3)), for IP
 * addresses; libc only.
 *
 * libc's getaddrinfo() resolves the node and the service under hints
 * translated from the rdma_addrinfo ones, and its FIRST answer becomes the
 * one rdma_addrinfo returned: RAI_PASSIVE puts the address in ai_src_addr,
 * otherwise in ai_dst_addr. A getaddrinfo() failure is returned as is (an
 * EAI_* code, negative in glibc); the other failures return -1 with errno.
 * With neither node nor service, the hints themselves are the answer.
 *
 * What rdma-core adds on the active side and droce does not: it asks ibacm,
 * when its socket answers, for the source address and the path records
 * (ai_src_addr, ai_route), and with kernel AF_IB support puts an AF_IB entry
 * in front of the IP one (the only way its answer is ever a chain). Without
 * ibacm rdma-core leaves the source empty and the route unset; droce has no
 * ibacm and no kernel routes for its IP addresses, so it always answers that
 * way: ai_src_addr only when the hints give one (rdma_resolve_addr() picks
 * the source later), ai_route, ai_connect and ai_next NULL. Nor does it
 * open a device first, as rdma-core's ucma_init() does (-1 and ENODEV
 * without one): names resolve without one, the CM calls report its absence.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

static void
to_ai_hints(const struct rdma_addrinfo *hints, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	/* RAI_NOROUTE and RAI_FAMILY have no getaddrinfo() counterpart */
	if (hints->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (hints->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	/* libc knows no AF_IB: the node is looked up as IP, then converted */
	if (hints->ai_family != AF_IB)
		ai->ai_family = hints->ai_family;

	switch (hints->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	default:
		break;
	}

	switch (hints->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		if (ai->ai_socktype == SOCK_STREAM)
			ai->ai_protocol = IPPROTO_TCP;
		else if (ai->ai_socktype == SOCK_DGRAM)
			ai->ai_protocol = IPPROTO_UDP;
		break;
	default:
		break;
	}
}

static int
copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *src, socklen_t len)
{
	/* rdma-core reads through a NULL address with a length: refuse it */
	if (src == NULL)
		return -EINVAL;
	*dst = malloc(len);
	if (*dst == NULL)
		return -ENOMEM;
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

/*
 * An IPv6 literal as an AF_IB address: the GID, the P_Key 0xffff and the
 * service ID of the port space and port (IBA annex A11, as the kernel's
 * rdma_cm forms it). rdma-core reads an IPv4 answer as if it were IPv6,
 * past the end of the address; there is no behaviour to match there, so
 * an IPv4 node is refused.
 */
static int
to_sockaddr_ib(int ps, const struct addrinfo *ai, struct sockaddr **dst, socklen_t *dst_len)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ai->ai_addr;
	struct sockaddr_ib *sib;
	uint16_t port;

	if (ai->ai_family != AF_INET6)
		return -EAFNOSUPPORT;
	sib = calloc(1, sizeof(*sib));
	if (sib == NULL)
		return -ENOMEM;
	port = be16toh(sin6->sin6_port);
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff);
	sib->sib_flowinfo = sin6->sin6_flowinfo;
	memcpy(&sib->sib_addr, &sin6->sin6_addr, sizeof(sib->sib_addr));
	sib->sib_sid = htobe64(((uint64_t)ps << 16) + port);
	if (ps)
		sib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
	if (port)
		sib->sib_sid_mask |= htobe64(RDMA_IB_IP_PORT_MASK);
	sib->sib_scope_id = sin6->sin6_scope_id;
	*dst = (struct sockaddr *)sib;
	*dst_len = sizeof(*sib);
	return 0;
}

/* getaddrinfo()'s first answer into rai; 0 or a negative errno */
static int
from_ai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints, const struct addrinfo *ai)
{
	bool passive = hints->ai_flags & RAI_PASSIVE;
	bool as_ib = (hints->ai_flags & (RAI_FAMILY | RAI_NUMERICHOST)) ==
		     (RAI_FAMILY | RAI_NUMERICHOST) && hints->ai_family == AF_IB;
	struct sockaddr **addr = passive ? &rai->ai_src_addr : &rai->ai_dst_addr;
	socklen_t *len = passive ? &rai->ai_src_len : &rai->ai_dst_len;

	rai->ai_qp_type = hints->ai_qp_type;
	if (rai->ai_qp_type == 0) {
		if (ai->ai_socktype == SOCK_STREAM)
			rai->ai_qp_type = IBV_QPT_RC;
		else if (ai->ai_socktype == SOCK_DGRAM)
			rai->ai_qp_type = IBV_QPT_UD;
	}
	rai->ai_port_space = hints->ai_port_space;
	if (rai->ai_port_space == 0) {
		if (ai->ai_protocol == IPPROTO_TCP)
			rai->ai_port_space = RDMA_PS_TCP;
		else if (ai->ai_protocol == IPPROTO_UDP)
			rai->ai_port_space = RDMA_PS_UDP;
	}
	/* only RAI_PASSIVE of the hints' flags shows in the answer */
	rai->ai_flags = passive ? RAI_PASSIVE : 0;
	/*
	 * The canonical names stay NULL: glibc gives one only under
	 * AI_CANONNAME, which rdma-core never asks for.
	 */
	if (as_ib) {
		rai->ai_family = AF_IB;
		return to_sockaddr_ib(rai->ai_port_space, ai, addr, len);
	}
	rai->ai_family = ai->ai_family;
	return copy_addr(addr, len, ai->ai_addr, ai->ai_addrlen);
}

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	static const struct rdma_addrinfo no_hints;
	struct rdma_addrinfo *rai;
	int ret = 0;

	if ((node == NULL && service == NULL && hints == NULL) || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL) {
		errno = ENOMEM;
		return -1;
	}

	if (node != NULL || service != NULL) {
		struct addrinfo ai_hints, *ai;
		int gai;

		/* no hints: libc's defaults (AI_V4MAPPED | AI_ADDRCONFIG), as rdma-core */
		if (hints != NULL)
			to_ai_hints(hints, &ai_hints);
		gai = getaddrinfo(node, service, hints != NULL ? &ai_hints : NULL, &ai);
		if (gai != 0) {
			free(rai);	/* keeps errno for EAI_SYSTEM */
			return gai;
		}
		if (hints == NULL)
			hints = &no_hints;
		ret = from_ai(rai, hints, ai);
		freeaddrinfo(ai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
					hints->ai_dst_addr, hints->ai_dst_len);
	}
	/* the hints' source where the lookup gave none (the active side) */
	if (ret == 0 && rai->ai_src_len == 0 && hints->ai_src_len)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				hints->ai_src_addr, hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		errno = -ret;
		return -1;
	}
	*res = rai;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_connect);
		free(res->ai_route);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = next;
	}
}
