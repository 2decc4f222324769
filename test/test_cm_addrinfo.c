/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo() and rdma_freeaddrinfo() (lib/rdmacm/cm_addrinfo.c)
 * against rdma-core v44's answers: passive and active lookups, numeric
 * hosts, service only, IPv6, the QP type and port space defaults, hints
 * only, AF_IB, every failure with its return convention (EAI_* code or -1
 * and errno), and that nothing is left allocated, chains included. No EAL.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "droce_test.h"

#define PORT	7471

/*
 * The allocations of cm_addrinfo.c and of this file, counted: the test links
 * with -Wl,--wrap for malloc, calloc and free, which reroutes the calls these
 * two files make (and not libc's own, inside getaddrinfo()). fail_at makes
 * the n-th allocation from now fail.
 */
static long live_blocks;
static int fail_at;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void __wrap_free(void *p);

static bool
injected_failure(void)
{
	return fail_at > 0 && --fail_at == 0;
}

void *
__wrap_malloc(size_t size)
{
	void *p = injected_failure() ? NULL : __real_malloc(size);

	live_blocks += p != NULL;
	return p;
}

void *
__wrap_calloc(size_t n, size_t size)
{
	void *p = injected_failure() ? NULL : __real_calloc(n, size);

	live_blocks += p != NULL;
	return p;
}

void
__wrap_free(void *p)
{
	live_blocks -= p != NULL;
	__real_free(p);
}

static char *
dup_str(const char *s)
{
	char *d = malloc(strlen(s) + 1);

	return d ? strcpy(d, s) : NULL;
}

static int
check_sin(const struct sockaddr *sa, socklen_t len, const char *ip, uint16_t port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct in_addr want;

	TEST_ASSERT(sa != NULL, "no address");
	TEST_ASSERT_EQ(len, sizeof(*sin));
	TEST_ASSERT_EQ(sin->sin_family, AF_INET);
	TEST_ASSERT_EQ(inet_pton(AF_INET, ip, &want), 1);
	TEST_ASSERT(sin->sin_addr.s_addr == want.s_addr, "address %08x, want %s",
		    ntohl(sin->sin_addr.s_addr), ip);
	TEST_ASSERT_EQ(ntohs(sin->sin_port), port);
	return 0;
}

static int
check_sin6(const struct sockaddr *sa, socklen_t len, const char *ip, uint16_t port)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	struct in6_addr want;

	TEST_ASSERT(sa != NULL, "no address");
	TEST_ASSERT_EQ(len, sizeof(*sin6));
	TEST_ASSERT_EQ(sin6->sin6_family, AF_INET6);
	TEST_ASSERT_EQ(inet_pton(AF_INET6, ip, &want), 1);
	TEST_ASSERT(memcmp(&sin6->sin6_addr, &want, sizeof(want)) == 0, "address is not %s", ip);
	TEST_ASSERT_EQ(ntohs(sin6->sin6_port), port);
	return 0;
}

/* What every IP answer has: one entry, no route, no connect data, no names. */
static int
check_plain(const struct rdma_addrinfo *rai)
{
	TEST_ASSERT_PTR_EQ(rai->ai_next, NULL);
	TEST_ASSERT_PTR_EQ(rai->ai_route, NULL);
	TEST_ASSERT_EQ(rai->ai_route_len, 0);
	TEST_ASSERT_PTR_EQ(rai->ai_connect, NULL);
	TEST_ASSERT_EQ(rai->ai_connect_len, 0);
	TEST_ASSERT_PTR_EQ(rai->ai_src_canonname, NULL);
	TEST_ASSERT_PTR_EQ(rai->ai_dst_canonname, NULL);
	return 0;
}

static int
test_passive_without_node_is_the_wildcard_in_src(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_family = AF_INET }, *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_flags, RAI_PASSIVE);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_RC);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_TCP);
	CHECK(check_sin(rai->ai_src_addr, rai->ai_src_len, "0.0.0.0", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_dst_addr, NULL);
	TEST_ASSERT_EQ(rai->ai_dst_len, 0);
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);

	hints.ai_family = AF_INET6;
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET6);
	CHECK(check_sin6(rai->ai_src_addr, rai->ai_src_len, "::", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_dst_addr, NULL);
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_passive_node_goes_to_src_and_hints_src_is_ignored(void)
{
	struct sockaddr_in other = { .sin_family = AF_INET, .sin_port = htons(1) };
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST,
		.ai_src_addr = (struct sockaddr *)&other, .ai_src_len = sizeof(other),
	}, *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.1", "7471", &hints, &rai), 0);
	/* only RAI_PASSIVE of the hints' flags comes back */
	TEST_ASSERT_EQ(rai->ai_flags, RAI_PASSIVE);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET);
	CHECK(check_sin(rai->ai_src_addr, rai->ai_src_len, "10.0.0.1", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_dst_addr, NULL);
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_active_numeric_host_goes_to_dst_without_src(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST | RAI_NOROUTE }, *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_flags, 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_RC);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_TCP);
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "10.0.0.2", PORT));
	/* no ibacm, no kernel route: the source is left to rdma_resolve_addr() */
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	TEST_ASSERT_EQ(rai->ai_src_len, 0);
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);

	/* no service: port 0 */
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", NULL, &hints, &rai), 0);
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "10.0.0.2", 0));
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_no_hints_is_an_active_rc_tcp_lookup(void)
{
	struct rdma_addrinfo *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", NULL, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_flags, 0);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_RC);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_TCP);
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "10.0.0.2", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_active_hints_src_is_copied(void)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(4000) };
	struct rdma_addrinfo hints = {
		.ai_src_addr = (struct sockaddr *)&src, .ai_src_len = sizeof(src),
	}, *rai;

	src.sin_addr.s_addr = inet_addr("10.0.0.1");
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), 0);
	CHECK(check_sin(rai->ai_src_addr, rai->ai_src_len, "10.0.0.1", 4000));
	TEST_ASSERT(rai->ai_src_addr != hints.ai_src_addr, "a copy, not the caller's");
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "10.0.0.2", PORT));
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_service_only_is_the_loopback(void)
{
	struct rdma_addrinfo hints = { .ai_family = AF_INET }, *rai;
	const struct sockaddr_in6 *sin6;

	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_flags, 0);
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "127.0.0.1", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	rdma_freeaddrinfo(rai);

	/* by name, and without hints: the loopback of either family */
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, "echo", NULL, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_RC);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_TCP);
	if (rai->ai_family == AF_INET) {
		CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "127.0.0.1", 7));
	} else {
		TEST_ASSERT_EQ(rai->ai_family, AF_INET6);
		sin6 = (const struct sockaddr_in6 *)rai->ai_dst_addr;
		TEST_ASSERT(IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr), "not ::1");
		TEST_ASSERT_EQ(ntohs(sin6->sin6_port), 7);
	}
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_ipv6_literals_and_family_hint(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo("2001:db8::5", "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET6);
	CHECK(check_sin6(rai->ai_dst_addr, rai->ai_dst_len, "2001:db8::5", PORT));
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);

	hints.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
	TEST_ASSERT_EQ(rdma_getaddrinfo("fe80::1%lo", "7471", &hints, &rai), 0);
	CHECK(check_sin6(rai->ai_src_addr, rai->ai_src_len, "fe80::1", PORT));
	TEST_ASSERT(((struct sockaddr_in6 *)rai->ai_src_addr)->sin6_scope_id != 0,
		    "the scope of %%lo");
	rdma_freeaddrinfo(rai);

	/* ai_family is a filter whether or not RAI_FAMILY is set */
	hints.ai_flags = 0;
	hints.ai_family = AF_INET6;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.1", "7471", &hints, &rai), EAI_ADDRFAMILY);
	hints.ai_flags = RAI_FAMILY;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.1", "7471", &hints, &rai), EAI_ADDRFAMILY);
	hints.ai_family = AF_INET;
	TEST_ASSERT_EQ(rdma_getaddrinfo("2001:db8::5", "7471", &hints, &rai), EAI_ADDRFAMILY);
	return TEST_SUCCESS;
}

static int
test_qp_type_and_port_space_defaults(void)
{
	static const struct {
		int qp_type, ps;	/* hints */
		int want_qp, want_ps;
	} t[] = {
		{ 0, 0, IBV_QPT_RC, RDMA_PS_TCP },
		{ IBV_QPT_RC, 0, IBV_QPT_RC, RDMA_PS_TCP },
		{ IBV_QPT_UC, 0, IBV_QPT_UC, RDMA_PS_TCP },
		{ IBV_QPT_UD, 0, IBV_QPT_UD, RDMA_PS_UDP },
		{ 0, RDMA_PS_TCP, IBV_QPT_RC, RDMA_PS_TCP },
		{ 0, RDMA_PS_UDP, IBV_QPT_UD, RDMA_PS_UDP },
		{ 0, RDMA_PS_IPOIB, IBV_QPT_UD, RDMA_PS_IPOIB },
		{ 0, RDMA_PS_IB, IBV_QPT_RC, RDMA_PS_IB },
		{ IBV_QPT_UD, RDMA_PS_IB, IBV_QPT_UD, RDMA_PS_IB },
		{ IBV_QPT_UD, RDMA_PS_UDP, IBV_QPT_UD, RDMA_PS_UDP },
	};
	struct rdma_addrinfo hints = { 0 }, *rai;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		hints.ai_qp_type = t[i].qp_type;
		hints.ai_port_space = t[i].ps;
		TEST_ASSERT(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai) == 0, "case %zu", i);
		TEST_ASSERT(rai->ai_qp_type == t[i].want_qp, "case %zu: QP type %d", i,
			    rai->ai_qp_type);
		TEST_ASSERT(rai->ai_port_space == t[i].want_ps, "case %zu: port space %#x", i,
			    rai->ai_port_space);
		rdma_freeaddrinfo(rai);
	}
	return TEST_SUCCESS;
}

static int
test_inconsistent_qp_type_and_port_space_is_eai_socktype(void)
{
	struct rdma_addrinfo hints = { .ai_qp_type = IBV_QPT_UD, .ai_port_space = RDMA_PS_TCP }, *rai;
	long before = live_blocks;

	/* the man page's EAI_QPTYPE does not exist: getaddrinfo()'s code comes back */
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), EAI_SOCKTYPE);
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_UDP;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), EAI_SOCKTYPE);
	TEST_ASSERT_EQ(live_blocks, before);
	return TEST_SUCCESS;
}

static int
test_hints_only_are_copied_verbatim(void)
{
	struct sockaddr_in6 src = { .sin6_family = AF_INET6, .sin6_port = htons(1) };
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6, .sin6_port = htons(2) };
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_NOROUTE | RAI_FAMILY, .ai_family = AF_INET6,
		.ai_qp_type = IBV_QPT_UD, .ai_port_space = RDMA_PS_UDP,
		.ai_src_addr = (struct sockaddr *)&src, .ai_src_len = sizeof(src),
		.ai_dst_addr = (struct sockaddr *)&dst, .ai_dst_len = sizeof(dst),
	}, *rai;

	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_flags, RAI_NOROUTE | RAI_FAMILY);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET6);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_UD);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_UDP);
	TEST_ASSERT_EQ(rai->ai_src_len, sizeof(src));
	TEST_ASSERT(memcmp(rai->ai_src_addr, &src, sizeof(src)) == 0, "source");
	TEST_ASSERT_EQ(rai->ai_dst_len, sizeof(dst));
	TEST_ASSERT(memcmp(rai->ai_dst_addr, &dst, sizeof(dst)) == 0, "destination");
	TEST_ASSERT(rai->ai_dst_addr != hints.ai_dst_addr, "a copy, not the caller's");
	CHECK(check_plain(rai));
	rdma_freeaddrinfo(rai);

	/* empty hints: an empty answer, no defaults filled in */
	memset(&hints, 0, sizeof(hints));
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_qp_type, 0);
	TEST_ASSERT_EQ(rai->ai_port_space, 0);
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	TEST_ASSERT_PTR_EQ(rai->ai_dst_addr, NULL);
	rdma_freeaddrinfo(rai);
	return TEST_SUCCESS;
}

static int
test_bad_input_returns_einval_or_the_eai_code(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *rai = NULL;
	long before = live_blocks;

	errno = 0;
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, NULL, NULL, &rai), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	errno = 0;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", NULL, NULL), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	/* a length with no address */
	hints.ai_dst_len = sizeof(struct sockaddr_in);
	errno = 0;
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &rai), -1);
	TEST_ASSERT_EQ(errno, EINVAL);
	hints.ai_dst_len = 0;

	/* getaddrinfo()'s failures: its EAI_* code, *res untouched */
	TEST_ASSERT_EQ(rdma_getaddrinfo("localhost", "7471", &hints, &rai), EAI_NONAME);
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.256", "7471", &hints, &rai), EAI_NONAME);
	TEST_ASSERT_EQ(rdma_getaddrinfo("", NULL, &hints, &rai), EAI_NONAME);
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "no-such-service", &hints, &rai),
		       EAI_SERVICE);
	hints.ai_family = AF_UNIX;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), EAI_FAMILY);
	TEST_ASSERT_PTR_EQ(rai, NULL);
	TEST_ASSERT_EQ(live_blocks, before);
	return TEST_SUCCESS;
}

static int
test_af_ib_numeric_gid_is_a_sockaddr_ib(void)
{
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_FAMILY | RAI_NUMERICHOST, .ai_family = AF_IB,
	}, *rai;
	const struct sockaddr_ib *sib;
	struct in6_addr gid;
	long before = live_blocks;

	TEST_ASSERT_EQ(inet_pton(AF_INET6, "fe80::2:c903:0:1", &gid), 1);
	TEST_ASSERT_EQ(rdma_getaddrinfo("fe80::2:c903:0:1", "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_IB);
	TEST_ASSERT_EQ(rai->ai_qp_type, IBV_QPT_RC);
	TEST_ASSERT_EQ(rai->ai_port_space, RDMA_PS_TCP);
	TEST_ASSERT_EQ(rai->ai_dst_len, sizeof(*sib));
	sib = (const struct sockaddr_ib *)rai->ai_dst_addr;
	TEST_ASSERT_EQ(sib->sib_family, AF_IB);
	TEST_ASSERT_EQ(be16toh(sib->sib_pkey), 0xffff);
	TEST_ASSERT(memcmp(&sib->sib_addr, &gid, sizeof(gid)) == 0, "GID");
	/* the service ID: the port space, then the port (RDMA_IB_IP_PS_TCP | 7471) */
	TEST_ASSERT_EQ(be64toh(sib->sib_sid), RDMA_IB_IP_PS_TCP | PORT);
	TEST_ASSERT_EQ(be64toh(sib->sib_sid_mask), RDMA_IB_IP_PS_MASK | RDMA_IB_IP_PORT_MASK);
	TEST_ASSERT_PTR_EQ(rai->ai_src_addr, NULL);
	rdma_freeaddrinfo(rai);

	/* passive, no service: the port space only in the mask */
	hints.ai_flags |= RAI_PASSIVE;
	TEST_ASSERT_EQ(rdma_getaddrinfo("fe80::2:c903:0:1", NULL, &hints, &rai), 0);
	sib = (const struct sockaddr_ib *)rai->ai_src_addr;
	TEST_ASSERT_EQ(rai->ai_src_len, sizeof(*sib));
	TEST_ASSERT_EQ(be64toh(sib->sib_sid), RDMA_IB_IP_PS_TCP);
	TEST_ASSERT_EQ(be64toh(sib->sib_sid_mask), RDMA_IB_IP_PS_MASK);
	rdma_freeaddrinfo(rai);

	/* an IPv4 node has no GID form here */
	hints.ai_flags &= ~RAI_PASSIVE;
	errno = 0;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), -1);
	TEST_ASSERT_EQ(errno, EAFNOSUPPORT);

	/* AF_IB without RAI_FAMILY | RAI_NUMERICHOST is an IP lookup */
	hints.ai_flags = RAI_NUMERICHOST;
	TEST_ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai), 0);
	TEST_ASSERT_EQ(rai->ai_family, AF_INET);
	CHECK(check_sin(rai->ai_dst_addr, rai->ai_dst_len, "10.0.0.2", PORT));
	rdma_freeaddrinfo(rai);
	TEST_ASSERT_EQ(live_blocks, before);
	return TEST_SUCCESS;
}

static int
test_freeaddrinfo_frees_a_whole_chain(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *head = NULL, *rai;
	static const char *const nodes[] = { "10.0.0.1", "2001:db8::1", "10.0.0.3" };
	long before = live_blocks;

	rdma_freeaddrinfo(NULL);
	/* what rdma-core's ibacm path hangs on an answer: every member malloc'd */
	for (int i = 2; i >= 0; i--) {
		TEST_ASSERT_EQ(rdma_getaddrinfo(nodes[i], "7471", &hints, &rai), 0);
		rai->ai_route = calloc(1, 64);
		rai->ai_route_len = 64;
		rai->ai_connect = calloc(1, 36);
		rai->ai_connect_len = 36;
		rai->ai_src_canonname = dup_str("src.example");
		rai->ai_dst_canonname = dup_str("dst.example");
		rai->ai_next = head;
		head = rai;
	}
	/* each: the entry, its destination, route, connect data and two names */
	TEST_ASSERT_EQ(live_blocks, before + 3 * 6);
	rdma_freeaddrinfo(head);
	TEST_ASSERT_EQ(live_blocks, before);
	return TEST_SUCCESS;
}

static int
test_out_of_memory_is_enomem_and_frees_all(void)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *rai = NULL;
	struct rdma_addrinfo ib_hints = {
		.ai_flags = RAI_FAMILY | RAI_NUMERICHOST, .ai_family = AF_IB,
	};
	long before = live_blocks;
	int ret;

	/* the entry, then its destination, then the hints' source */
	for (int n = 1; n <= 3; n++) {
		hints.ai_src_addr = (struct sockaddr *)&src;
		hints.ai_src_len = sizeof(src);
		fail_at = n;
		errno = 0;
		ret = rdma_getaddrinfo("10.0.0.2", "7471", &hints, &rai);
		fail_at = 0;
		TEST_ASSERT(ret == -1 && errno == ENOMEM, "allocation %d: %d, errno %d", n, ret, errno);
	}
	/* the AF_IB address */
	fail_at = 2;
	errno = 0;
	ret = rdma_getaddrinfo("fe80::1", "7471", &ib_hints, &rai);
	fail_at = 0;
	TEST_ASSERT_EQ(ret, -1);
	TEST_ASSERT_EQ(errno, ENOMEM);
	/* hints only: the destination's copy */
	hints.ai_dst_addr = (struct sockaddr *)&src;
	hints.ai_dst_len = sizeof(src);
	fail_at = 2;
	errno = 0;
	ret = rdma_getaddrinfo(NULL, NULL, &hints, &rai);
	fail_at = 0;
	TEST_ASSERT_EQ(ret, -1);
	TEST_ASSERT_EQ(errno, ENOMEM);
	TEST_ASSERT_PTR_EQ(rai, NULL);
	TEST_ASSERT_EQ(live_blocks, before);

	/* and with every allocation there, the same calls succeed */
	TEST_ASSERT_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &rai), 0);
	TEST_ASSERT_EQ(live_blocks, before + 3);
	rdma_freeaddrinfo(rai);
	TEST_ASSERT_EQ(live_blocks, before);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_passive_without_node_is_the_wildcard_in_src),
	TEST_CASE(test_passive_node_goes_to_src_and_hints_src_is_ignored),
	TEST_CASE(test_active_numeric_host_goes_to_dst_without_src),
	TEST_CASE(test_no_hints_is_an_active_rc_tcp_lookup),
	TEST_CASE(test_active_hints_src_is_copied),
	TEST_CASE(test_service_only_is_the_loopback),
	TEST_CASE(test_ipv6_literals_and_family_hint),
	TEST_CASE(test_qp_type_and_port_space_defaults),
	TEST_CASE(test_inconsistent_qp_type_and_port_space_is_eai_socktype),
	TEST_CASE(test_hints_only_are_copied_verbatim),
	TEST_CASE(test_bad_input_returns_einval_or_the_eai_code),
	TEST_CASE(test_af_ib_numeric_gid_is_a_sockaddr_ib),
	TEST_CASE(test_freeaddrinfo_frees_a_whole_chain),
	TEST_CASE(test_out_of_memory_is_enomem_and_frees_all),
};

int
main(void)
{
	return DROCE_TEST_MAIN("cm_addrinfo", cases, NULL, NULL);
}
