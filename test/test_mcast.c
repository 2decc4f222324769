/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast through the verbs API (ibv_attach_mcast / ibv_detach_mcast),
 * RoCEv2 over IPv4: a datagram droce0 sends to a group (::ffff:239.x.y.z,
 * DestQP 0xFFFFFF) reaches every QP attached to the group, each with its
 * own copy behind a GRH naming droce0, and no other QP; detach, QP
 * destruction and per-QP Q_Keys take effect; the errno cases; the limits
 * ibv_query_device reports; attach and detach racing a stream.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "droce.h"
#include "droce_config.h"
#include "droce_rdev_core.h"
#include "droce_test.h"
#include "harness.h"

#define GRH_LEN		40
#define MSG_LEN		200
#define RECV_SLOT	4096
#define GROUP_IP	RTE_IPV4(239u, 1, 2, 3)	/* u: DPDK 22.11 shifts its first byte as an int */

static const struct h_qp_opts ud = { .type = IBV_QPT_UD, .max_recv_wr = 64, .max_send_wr = 64 };

/* ::ffff:<ip> */
static union ibv_gid
gid_v4(uint32_t ip)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff } };
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memcpy(&g.raw[12], &be, 4);
	return g;
}

/* A UD side on droce@dev, in RTS with Q_Key @qkey. */
static struct h_side *
ud_side(int dev, uint32_t qkey)
{
	struct h_side *s = h_res_side(h_res_open(dev), &ud);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	if (s == NULL)
		return NULL;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return s;
}

/* @n receives of RECV_SLOT bytes each, in slots @first.. of @s's buffer. */
static int
post_recvs(struct h_side *s, int first, int n)
{
	for (int i = first; i < first + n; i++)
		if (h_post_recv(s, (size_t)i * RECV_SLOT, RECV_SLOT, i))
			return -1;
	return 0;
}

static struct ibv_ah *
group_ah(struct h_side *s, uint32_t group)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = gid_v4(group), .hop_limit = 1 },
		.port_num = 1,
	};

	return h_res_add_ah(ibv_create_ah(s->pd, &a));
}

/* Message @seed (MSG_LEN bytes) from @s to the group of @ah, completed. */
static int
send_group(struct h_side *s, struct ibv_ah *ah, uint32_t seed, uint32_t qkey)
{
	uint8_t *p = s->buf + s->buf_len - MSG_LEN;
	struct ibv_sge sge = { (uintptr_t)p, MSG_LEN, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = DROCE_MCAST_QPN, .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;

	h_pattern(p, MSG_LEN, seed);
	TEST_ASSERT_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	TEST_ASSERT_EQ(h_poll(s->scq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.wr_id == seed, "send: %s",
		    ibv_wc_status_str(wc.status));
	return 0;
}

/*
 * @r received message @seed from @from, sent to @group: its own QPN, the
 * sender's as source, the GRH (IPv4 source @from's, destination the group)
 * and the bytes.
 */
static int
expect_msg(struct h_side *r, const struct h_side *from, uint32_t group, uint32_t seed)
{
	uint8_t want[MSG_LEN];
	const struct rte_ipv4_hdr *ip;
	const uint8_t *p;
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_poll(r->rcq, &wc, 1, 5000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "recv: %s", ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQ(wc.qp_num, r->qp->qp_num);
	TEST_ASSERT_EQ(wc.src_qp, from->qp->qp_num);
	TEST_ASSERT_EQ(wc.byte_len, (uint32_t)(GRH_LEN + MSG_LEN));
	TEST_ASSERT(wc.wc_flags & IBV_WC_GRH, "no GRH flag");
	TEST_ASSERT(wc.opcode == IBV_WC_RECV, "opcode %d", wc.opcode);
	p = r->buf + wc.wr_id * RECV_SLOT;
	ip = droce_grh_ipv4(p);
	TEST_ASSERT(memcmp(&ip->src_addr, &from->gid.raw[12], 4) == 0, "GRH source not the sender");
	TEST_ASSERT_EQ(rte_be_to_cpu_32(ip->dst_addr), group);
	h_pattern(want, MSG_LEN, seed);
	TEST_ASSERT(memcmp(p + GRH_LEN, want, MSG_LEN) == 0, "the bytes changed on the way");
	return 0;
}

static int
expect_nothing(struct h_side *r, int ms)
{
	struct ibv_wc wc;

	TEST_ASSERT_EQ(h_poll(r->rcq, &wc, 1, ms), 0);
	return 0;
}

/* The sender of most cases: a UD side on droce0 and, in *ah, its AH to GROUP_IP. */
static struct h_side *
sender(struct ibv_ah **ah)
{
	struct h_side *s = ud_side(0, H_QKEY);

	*ah = s != NULL ? group_ah(s, GROUP_IP) : NULL;
	return *ah != NULL ? s : NULL;
}

/* @s, with @n receives posted, a member of the group of @g. */
static int
member(struct h_side *s, const union ibv_gid *g, int n)
{
	CHECK(post_recvs(s, 0, n));
	TEST_ASSERT_EQ(ibv_attach_mcast(s->qp, g, 0), 0);
	return 0;
}

/* Message @seed from @s to @ah's group, which droce1 has no member of: @r gets nothing in @ms. */
static int
expect_unheard(struct h_side *s, struct ibv_ah *ah, uint32_t seed, struct h_side *r, int ms)
{
	uint64_t drop0 = h_xstat("droce1", "rx_drop_mcast");

	CHECK(send_group(s, ah, seed, H_QKEY));
	CHECK(expect_nothing(r, ms));
	/* counted and dropped */
	TEST_ASSERT_EQ(h_xstat("droce1", "rx_drop_mcast"), drop0 + 1);
	return 0;
}

static int
test_query_device_reports_mcast_limits(void)
{
	struct ibv_context *c = h_res_open(0);
	struct ibv_device_attr a;

	TEST_ASSERT(c != NULL, "open");
	TEST_ASSERT_EQ(ibv_query_device(c, &a), 0);
	TEST_ASSERT_EQ(a.max_mcast_grp, DROCE_MAX_MCAST_GRP);
	TEST_ASSERT_EQ(a.max_mcast_qp_attach, DROCE_MAX_MCAST_QP_ATTACH);
	TEST_ASSERT_EQ(a.max_total_mcast_qp_attach, DROCE_MAX_MCAST_TOTAL);
	TEST_ASSERT(a.max_mcast_grp > 0 && a.max_mcast_qp_attach > 0, "multicast limits are 0");
	return TEST_SUCCESS;
}

static int
test_send_to_group_reaches_attached_qps_only(void)
{
	struct h_side *a = ud_side(0, H_QKEY), *b1 = ud_side(1, H_QKEY), *b2 = ud_side(1, H_QKEY);
	struct h_side *c = ud_side(1, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);
	uint64_t mc0 = h_xstat("droce1", "rx_mcast"), neigh0 = h_xstat("droce0", "tx_no_neigh");
	struct ibv_ah *ah;

	TEST_ASSERT(a && b1 && b2 && c, "sides");
	CHECK(member(b1, &g, 4));
	CHECK(post_recvs(b2, 0, 4));
	TEST_ASSERT_EQ(ibv_attach_mcast(b2->qp, &g, 0xc001), 0);	/* the LID means nothing on RoCE */
	CHECK(post_recvs(c, 0, 4));
	ah = group_ah(a, GROUP_IP);
	TEST_ASSERT(ah != NULL, "AH to the group: errno %d", errno);
	for (uint32_t i = 1; i <= 3; i++) {
		CHECK(send_group(a, ah, i, H_QKEY));
		CHECK(expect_msg(b1, a, GROUP_IP, i));
		CHECK(expect_msg(b2, a, GROUP_IP, i));
	}
	CHECK(expect_nothing(c, 200));
	TEST_ASSERT_EQ(h_xstat("droce1", "rx_mcast"), mc0 + 3);
	/* to the group's MAC: no ARP asked for, nothing waited for one */
	TEST_ASSERT_EQ(h_xstat("droce0", "tx_no_neigh"), neigh0);
	return TEST_SUCCESS;
}

static int
test_detach_stops_delivery(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *b = ud_side(1, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);

	TEST_ASSERT(a && b, "sides");
	CHECK(member(b, &g, 8));
	CHECK(send_group(a, ah, 1, H_QKEY));
	CHECK(expect_msg(b, a, GROUP_IP, 1));
	TEST_ASSERT_EQ(ibv_detach_mcast(b->qp, &g, 0), 0);
	/* no QP of droce1 is in the group any more */
	CHECK(expect_unheard(a, ah, 2, b, 300));
	/* a second detach: not attached */
	errno = 0;
	TEST_ASSERT_EQ(ibv_detach_mcast(b->qp, &g, 0), EINVAL);
	TEST_ASSERT_EQ(errno, EINVAL);
	/* and back in */
	TEST_ASSERT_EQ(ibv_attach_mcast(b->qp, &g, 0), 0);
	CHECK(send_group(a, ah, 3, H_QKEY));
	CHECK(expect_msg(b, a, GROUP_IP, 3));
	return TEST_SUCCESS;
}

static int
test_attach_twice_is_not_an_error(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *b = ud_side(1, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);

	TEST_ASSERT(a && b, "sides");
	CHECK(member(b, &g, 8));
	TEST_ASSERT_EQ(ibv_attach_mcast(b->qp, &g, 0), 0);
	CHECK(send_group(a, ah, 1, H_QKEY));
	CHECK(expect_msg(b, a, GROUP_IP, 1));
	CHECK(expect_nothing(b, 200));		/* one copy, not two */
	/* one detach undoes both */
	TEST_ASSERT_EQ(ibv_detach_mcast(b->qp, &g, 0), 0);
	TEST_ASSERT_EQ(ibv_detach_mcast(b->qp, &g, 0), EINVAL);
	return TEST_SUCCESS;
}

static int
expect_einval(int ret, const char *what)
{
	TEST_ASSERT(ret == EINVAL && errno == EINVAL, "%s: returned %d, errno %d", what, ret, errno);
	return 0;
}

static int
test_attach_errors(void)
{
	struct h_side *u = ud_side(1, H_QKEY);
	struct h_side *rc = h_res_side(h_res_open(1), &(struct h_qp_opts){ .type = IBV_QPT_RC });
	struct h_side *uc = h_res_side(h_res_open(1), &(struct h_qp_opts){ .type = IBV_QPT_UC });
	union ibv_gid g = gid_v4(GROUP_IP), bad;

	TEST_ASSERT(u && rc && uc, "sides");
	/* not UD */
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(rc->qp, &g, 0), "RC QP"));
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(uc->qp, &g, 0), "UC QP"));
	errno = 0;
	CHECK(expect_einval(ibv_detach_mcast(rc->qp, &g, 0), "detach of an RC QP"));
	/* not a multicast GID: a unicast IPv4 address, 240.0.0.1, zero */
	bad = gid_v4(RTE_IPV4(10, 0, 0, 2));
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(u->qp, &bad, 0), "unicast ::ffff:10.0.0.2"));
	bad = gid_v4(RTE_IPV4(240u, 0, 0, 1));
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(u->qp, &bad, 0), "::ffff:240.0.0.1"));
	memset(&bad, 0, sizeof(bad));
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(u->qp, &bad, 0), "the zero GID"));
	/* 224.0.0.1 not IPv4-mapped (IPv4-compatible ::e000:1): not a multicast GID */
	bad.raw[12] = 224;
	bad.raw[15] = 1;
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(u->qp, &bad, 0), "::224.0.0.1"));
	/* an IPv6 group: multicast, but droce carries RoCEv2 over IPv4 only */
	memset(&bad, 0, sizeof(bad));
	bad.raw[0] = 0xff;
	bad.raw[1] = 0x0e;
	bad.raw[15] = 1;
	errno = 0;
	CHECK(expect_einval(ibv_attach_mcast(u->qp, &bad, 0), "ff0e::1"));
	/* a group never joined */
	errno = 0;
	CHECK(expect_einval(ibv_detach_mcast(u->qp, &g, 0), "detach, never attached"));
	/* the edges of 224.0.0.0/4 are groups */
	bad = gid_v4(RTE_IPV4(224u, 0, 0, 0));
	TEST_ASSERT_EQ(ibv_attach_mcast(u->qp, &bad, 0), 0);
	TEST_ASSERT_EQ(ibv_detach_mcast(u->qp, &bad, 0), 0);
	bad = gid_v4(RTE_IPV4(239u, 255, 255, 255));
	TEST_ASSERT_EQ(ibv_attach_mcast(u->qp, &bad, 0), 0);
	TEST_ASSERT_EQ(ibv_detach_mcast(u->qp, &bad, 0), 0);
	return TEST_SUCCESS;
}

/* IBA 10.5: a connection's destination cannot be a group. */
static int
test_rc_path_to_group_refused(void)
{
	struct h_side *rc = h_res_side(h_res_open(0), &(struct h_qp_opts){ .type = IBV_QPT_RC });
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 0x20,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid_v4(GROUP_IP), .hop_limit = 64 } },
	};

	TEST_ASSERT(rc != NULL, "side");
	TEST_ASSERT_EQ(h_to_init(rc->qp, IBV_QPT_RC), 0);
	TEST_ASSERT_EQ(ibv_modify_qp(rc->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER), EINVAL);
	TEST_ASSERT_EQ(h_qp_state(rc->qp), IBV_QPS_INIT);
	return TEST_SUCCESS;
}

static int
test_qkey_checked_per_qp(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *b1 = ud_side(1, H_QKEY), *b2 = ud_side(1, 0x22222222);
	union ibv_gid g = gid_v4(GROUP_IP);
	uint64_t bad0 = h_xstat("droce1", "rx_drop_bad_qkey");

	TEST_ASSERT(a && b1 && b2, "sides");
	CHECK(member(b1, &g, 4));
	CHECK(member(b2, &g, 4));
	CHECK(send_group(a, ah, 1, H_QKEY));
	CHECK(expect_msg(b1, a, GROUP_IP, 1));
	CHECK(expect_nothing(b2, 200));
	TEST_ASSERT_EQ(h_xstat("droce1", "rx_drop_bad_qkey"), bad0 + 1);
	CHECK(send_group(a, ah, 2, 0x22222222));
	CHECK(expect_msg(b2, a, GROUP_IP, 2));
	CHECK(expect_nothing(b1, 200));
	return TEST_SUCCESS;
}

/* Two groups: each QP gets what was sent to its own groups only. */
static int
test_groups_are_separate(void)
{
	const uint32_t g2ip = RTE_IPV4(239u, 1, 2, 4), g3ip = RTE_IPV4(239u, 129, 2, 3);
	struct h_side *a = ud_side(0, H_QKEY), *b1 = ud_side(1, H_QKEY), *b2 = ud_side(1, H_QKEY);
	union ibv_gid g1 = gid_v4(GROUP_IP), g2 = gid_v4(g2ip);
	struct ibv_ah *ah1, *ah2, *ah3;

	TEST_ASSERT(a && b1 && b2, "sides");
	ah1 = group_ah(a, GROUP_IP);
	ah2 = group_ah(a, g2ip);
	/* 239.129.2.3 has 239.1.2.3's MAC (RFC 1112 maps 23 bits): the IP decides */
	ah3 = group_ah(a, g3ip);
	TEST_ASSERT(ah1 && ah2 && ah3, "AHs");
	CHECK(member(b1, &g1, 8));
	CHECK(member(b2, &g2, 8));
	TEST_ASSERT_EQ(ibv_attach_mcast(b1->qp, &g2, 0), 0);
	CHECK(send_group(a, ah1, 1, H_QKEY));
	CHECK(expect_msg(b1, a, GROUP_IP, 1));
	CHECK(expect_nothing(b2, 200));
	CHECK(send_group(a, ah2, 2, H_QKEY));
	CHECK(expect_msg(b1, a, g2ip, 2));
	CHECK(expect_msg(b2, a, g2ip, 2));
	CHECK(expect_unheard(a, ah3, 3, b1, 200));
	return TEST_SUCCESS;
}

/* A destroyed QP leaves its groups; the others keep receiving. */
static int
test_destroyed_qp_leaves_group(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *b = ud_side(1, H_QKEY), *d = ud_side(1, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);
	struct ibv_qp *q;

	TEST_ASSERT(a && b && d, "sides");
	CHECK(member(b, &g, 8));
	CHECK(member(d, &g, 8));
	/* d's QP goes, with receives posted and still attached */
	q = d->qp;
	d->qp = NULL;
	TEST_ASSERT_EQ(ibv_destroy_qp(q), 0);
	CHECK(send_group(a, ah, 1, H_QKEY));
	CHECK(expect_msg(b, a, GROUP_IP, 1));
	CHECK(expect_nothing(d, 200));
	/* the last member goes: the group with it */
	q = b->qp;
	b->qp = NULL;
	TEST_ASSERT_EQ(ibv_destroy_qp(q), 0);
	CHECK(expect_unheard(a, ah, 2, b, 200));
	return TEST_SUCCESS;
}

/*
 * A datagram to a group reaches the sending device's own attached QPs too
 * (the sender's included), as a NIC loops multicast back, and the wire's.
 */
static int
test_own_device_members_receive(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *a2 = ud_side(0, H_QKEY), *b = ud_side(1, H_QKEY);
	struct h_side *a3 = ud_side(0, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);

	TEST_ASSERT(a && a2 && a3 && b, "sides");
	CHECK(member(a, &g, 4));
	CHECK(member(a2, &g, 4));
	CHECK(member(b, &g, 4));
	CHECK(post_recvs(a3, 0, 4));
	CHECK(send_group(a, ah, 1, H_QKEY));
	CHECK(expect_msg(a, a, GROUP_IP, 1));
	CHECK(expect_msg(a2, a, GROUP_IP, 1));
	CHECK(expect_msg(b, a, GROUP_IP, 1));
	CHECK(expect_nothing(a3, 200));
	CHECK(expect_nothing(a, 0));
	return TEST_SUCCESS;
}

/*
 * A UD QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: its datagrams to a
 * group are not looped back to its own device (neither to itself nor to the
 * device's other members) and still reach the wire's; what other QPs send
 * reaches it as before. Its QP shares a's PD and CQs.
 */
static int
test_block_self_mcast_lb(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *a2 = ud_side(0, H_QKEY), *b = ud_side(1, H_QKEY);
	union ibv_gid g = gid_v4(GROUP_IP);
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = H_QKEY };
	struct ibv_qp *blk, *own;

	TEST_ASSERT(a && a2 && b, "sides");
	qa.pd = a->pd;
	qa.send_cq = a->scq;
	qa.recv_cq = a->rcq;
	blk = ibv_create_qp_ex(a->ctx, &qa);
	TEST_ASSERT(blk != NULL, "ibv_create_qp_ex(BLOCK_SELF_MCAST_LB): %s", strerror(errno));
	TEST_ASSERT_EQ(ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_QKEY), 0);
	at.qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQ(ibv_modify_qp(blk, &at, IBV_QP_STATE), 0);
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 0;
	TEST_ASSERT_EQ(ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	/* a's QP is no member: blk stands in its place on a's CQs */
	own = a->qp;
	a->qp = blk;
	CHECK(member(a, &g, 4));
	CHECK(member(a2, &g, 4));
	CHECK(member(b, &g, 4));
	CHECK(send_group(a, ah, 7, H_QKEY));
	CHECK(expect_msg(b, a, GROUP_IP, 7));
	CHECK(expect_nothing(a2, 200));
	CHECK(expect_nothing(a, 0));
	/* another QP's datagram reaches blk as before */
	CHECK(send_group(a2, group_ah(a2, GROUP_IP), 8, H_QKEY));
	CHECK(expect_msg(a, a2, GROUP_IP, 8));
	CHECK(expect_msg(a2, a2, GROUP_IP, 8));
	CHECK(expect_msg(b, a2, GROUP_IP, 8));
	TEST_ASSERT_EQ(ibv_detach_mcast(blk, &g, 0), 0);
	a->qp = own;
	TEST_ASSERT_EQ(ibv_destroy_qp(blk), 0);
	/* an RC QP may not ask for it */
	qa.qp_type = IBV_QPT_RC;
	TEST_ASSERT(ibv_create_qp_ex(a->ctx, &qa) == NULL && errno == EOPNOTSUPP,
		    "RC QP with BLOCK_SELF_MCAST_LB: not EOPNOTSUPP");
	return TEST_SUCCESS;
}

/* ENOMEM past max_mcast_qp_attach and max_mcast_grp; room again after a detach. */
static int
test_group_limits(void)
{
	struct h_side *s = h_res_side(h_res_open(1), &ud);
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .cap = { 1, 1, 1, 1, 0 } };
	struct ibv_qp *qp[DROCE_MAX_MCAST_QP_ATTACH + 1] = { NULL };
	union ibv_gid g = gid_v4(GROUP_IP);
	int ret = TEST_FAILED;
	uint32_t i;

	TEST_ASSERT(s != NULL, "side");
	ia.send_cq = s->scq;
	ia.recv_cq = s->rcq;
	for (i = 0; i < RTE_DIM(qp); i++)
		if ((qp[i] = ibv_create_qp(s->pd, &ia)) == NULL)
			goto out;
	for (i = 0; i < DROCE_MAX_MCAST_QP_ATTACH; i++)
		if (ibv_attach_mcast(qp[i], &g, 0) != 0)
			goto out;
	if (ibv_attach_mcast(qp[i], &g, 0) != ENOMEM || errno != ENOMEM) {
		fprintf(stderr, "  QP %u of a group: not ENOMEM\n", i + 1);
		goto out;
	}
	if (ibv_detach_mcast(qp[3], &g, 0) != 0 || ibv_attach_mcast(qp[i], &g, 0) != 0) {
		fprintf(stderr, "  no room after a detach\n");
		goto out;
	}
	/* groups: this one, and as many more as the device holds */
	for (i = 1; i < DROCE_MAX_MCAST_GRP; i++) {
		union ibv_gid gi = gid_v4(RTE_IPV4(239u, 2, 0, i));

		if (ibv_attach_mcast(s->qp, &gi, 0) != 0) {
			fprintf(stderr, "  group %u: errno %d\n", i + 1, errno);
			goto out;
		}
	}
	{
		union ibv_gid gi = gid_v4(RTE_IPV4(239u, 2, 1, 0));

		if (ibv_attach_mcast(s->qp, &gi, 0) != ENOMEM) {
			fprintf(stderr, "  group %u: not ENOMEM\n", i + 1);
			goto out;
		}
		/* a full table still takes members into its groups (a full group does not) */
		if (ibv_attach_mcast(qp[3], &g, 0) != ENOMEM ||
		    ibv_detach_mcast(qp[0], &g, 0) != 0 || ibv_attach_mcast(qp[3], &g, 0) != 0) {
			fprintf(stderr, "  members of a full table\n");
			goto out;
		}
		g = gid_v4(RTE_IPV4(239u, 2, 0, 1));
		if (ibv_detach_mcast(s->qp, &g, 0) != 0 || ibv_attach_mcast(s->qp, &gi, 0) != 0) {
			fprintf(stderr, "  no group after one left\n");
			goto out;
		}
	}
	ret = TEST_SUCCESS;
out:
	/* destroying them detaches them */
	for (i = 0; i < RTE_DIM(qp); i++)
		if (qp[i] != NULL && ibv_destroy_qp(qp[i]) != 0)
			ret = TEST_FAILED;
	return ret;
}

/* Attach and detach race a stream: members throughout get every message, once. */
#define RACE_MSGS	600
#define RACE_WIN	16
#define RACE_TOGGLES	200

struct race {
	struct h_side *t;
	union ibv_gid g;
	int stop;
	int err, toggles;		/* toggles: atomic */
};

static void *
race_toggle(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		/* a member for a while, so that some datagrams find it there */
		if (ibv_attach_mcast(r->t->qp, &r->g, 0) != 0)
			r->err = errno;
		usleep(__atomic_load_n(&r->toggles, __ATOMIC_RELAXED) % 3 * 100);
		if (ibv_detach_mcast(r->t->qp, &r->g, 0) != 0)
			r->err = errno;
		usleep(__atomic_load_n(&r->toggles, __ATOMIC_RELAXED) % 2 * 150);
		__atomic_fetch_add(&r->toggles, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int
test_attach_detach_race_a_stream(void)
{
	struct ibv_ah *ah;
	struct h_side *a = sender(&ah), *b = ud_side(1, H_QKEY), *t = ud_side(1, H_QKEY);
	struct race r = { .t = t, .g = gid_v4(GROUP_IP) };
	struct ibv_wc wc[RACE_WIN];
	uint64_t end = h_now_ms() + 30000;
	pthread_t th;
	uint32_t got = 0, sent = 0, tgot = 0, next = 0;

	TEST_ASSERT(a && b && t, "sides");
	CHECK(member(b, &r.g, RACE_WIN));
	CHECK(post_recvs(t, 0, 64));
	TEST_ASSERT_EQ(pthread_create(&th, NULL, race_toggle, &r), 0);
	/*
	 * One in flight at a time: a UD receiver without a WQE would drop it.
	 * At least RACE_TOGGLES attach/detach pairs meanwhile (the toggling
	 * thread shares the CPU of this one: each message leaves it a moment).
	 */
	while ((sent < RACE_MSGS ||
		__atomic_load_n(&r.toggles, __ATOMIC_RELAXED) < RACE_TOGGLES) && h_now_ms() < end) {
		int n;

		if (send_group(a, ah, sent, H_QKEY) != 0)
			break;
		sent++;
		n = h_poll(b->rcq, wc, 1, 5000);
		if (n != 1 || wc[0].status != IBV_WC_SUCCESS)
			break;
		{
			uint8_t want[MSG_LEN];

			h_pattern(want, MSG_LEN, next);
			if (memcmp(b->buf + wc[0].wr_id * RECV_SLOT + GRH_LEN, want, MSG_LEN) != 0)
				break;
		}
		next++;
		got++;
		usleep(20);
		if (h_post_recv(b, wc[0].wr_id * RECV_SLOT, RECV_SLOT, wc[0].wr_id) != 0)
			break;
		/* the toggled member: whatever it got, each a whole message */
		while ((n = ibv_poll_cq(t->rcq, RACE_WIN, wc)) > 0) {
			for (int k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS ||
				    wc[k].byte_len != GRH_LEN + MSG_LEN)
					r.err = -1;
				h_post_recv(t, wc[k].wr_id * RECV_SLOT, RECV_SLOT, wc[k].wr_id);
			}
			tgot += n;
		}
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("  %u messages, the toggled QP got %u across %d attach/detach pairs\n", got, tgot,
	       r.toggles);
	TEST_ASSERT_EQ(got, sent);
	TEST_ASSERT(got >= RACE_MSGS, "%u messages", got);
	TEST_ASSERT(r.toggles > 0, "no attach/detach raced the stream");
	TEST_ASSERT_EQ(r.err, 0);
	TEST_ASSERT(tgot <= got, "the toggled QP got more than was sent");
	CHECK(expect_nothing(b, 100));
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_query_device_reports_mcast_limits),
	TEST_CASE(test_send_to_group_reaches_attached_qps_only),
	TEST_CASE(test_detach_stops_delivery),
	TEST_CASE(test_attach_twice_is_not_an_error),
	TEST_CASE(test_attach_errors),
	TEST_CASE(test_rc_path_to_group_refused),
	TEST_CASE(test_qkey_checked_per_qp),
	TEST_CASE(test_groups_are_separate),
	TEST_CASE(test_destroyed_qp_leaves_group),
	TEST_CASE(test_own_device_members_receive),
	TEST_CASE(test_block_self_mcast_lb),
	TEST_CASE(test_group_limits),
	TEST_CASE(test_attach_detach_race_a_stream),
};

static void
teardown(void)
{
	h_res_release();
}

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "mcast", cases, NULL, teardown);
}
