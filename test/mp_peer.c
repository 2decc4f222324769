/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mp_peer: one side of a two-process RDMA test that uses nothing but
 * <infiniband/verbs.h>. The droce device comes from $DROCE_EAL (read by
 * ibv_get_device_list); the two processes exchange QPN, PSN and GID over a
 * TCP connection, connect an RC or UD QP and move messages:
 *
 *   mp_peer server|client <tcp port> [--qp rc|ud] [--srq] [--msgs N]
 *           [--sizes list] [--peer addr] [--seed S] [--timeout sec]
 *           [--depth D] [--slots K]
 *
 * The client sends N messages, message i being sizes[i % nsizes] bytes of a
 * pattern derived from the seed and i; some go with immediate data, some
 * inline, some gathered from two SGEs. The server (receiving through an SRQ
 * with --srq) checks every byte, wc.byte_len, wc.qp_num, wc.opcode, the
 * immediate data and, on UD, the 40-byte GRH and wc.src_qp; it reports the
 * outcome to the client over TCP. The client also checks a few rows of the
 * post-time errno table. Both exit 0 only if every message arrived intact
 * and every send completed with IBV_WC_SUCCESS. Every wait is bounded.
 *
 * Sizes: comma-separated numbers with an optional K or M suffix, or "mtu"
 * (the port's active MTU in bytes); UD sizes must not exceed the MTU.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mp_common.h"

#define MP_MAGIC	0x6d705065u	/* "mpPe" */
#define MP_MAX_SIZES	64
#define MP_QKEY		0x11111111u
#define MP_GRH		40
#define MP_CANARY	0xa5

static struct {
	int role;
	const char *port;
	const char *peer;
	enum ibv_qp_type type;
	bool srq;
	uint32_t msgs;
	uint64_t seed;
	unsigned int timeout;		/* seconds, for each phase */
	uint32_t depth;			/* client: sends in flight */
	uint32_t slots;			/* server: RC receive buffers */
	char sizes_arg[1024];
} opt = {
	.port = NULL,
	.peer = "127.0.0.1",
	.type = IBV_QPT_RC,
	.msgs = 200,
	.seed = 1,
	.timeout = 60,
	.depth = 16,
	.slots = 16,
};

/* --- TCP messages (network byte order) --- */
struct msg_hello {
	uint32_t magic;
	uint32_t qp_type;
	uint32_t qpn;
	uint32_t psn;
	uint32_t mtu;		/* enum ibv_mtu */
	uint8_t gid[16];
};

struct msg_plan {
	uint32_t magic;
	uint32_t msgs;
	uint32_t seed_hi, seed_lo;
	uint32_t srq;
	uint32_t nsizes;
	uint32_t sizes[MP_MAX_SIZES];
};

struct msg_ready {
	uint32_t magic;
	uint32_t ok;
};

struct msg_done {
	uint32_t magic;
	uint32_t posted;
	uint32_t ok;
	uint32_t failed;
};

struct msg_result {
	uint32_t magic;
	uint32_t received;
	uint32_t good;
	uint32_t bad;
	char detail[192];
};

static int
parse_sizes(const char *arg, uint32_t mtu, uint32_t *sizes)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v;
		char *end;

		if (n == MP_MAX_SIZES)
			die("at most %d sizes", MP_MAX_SIZES);
		if (strcmp(tok, "mtu") == 0) {
			sizes[n++] = mtu;
			continue;
		}
		errno = 0;
		v = strtoull(tok, &end, 0);
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (errno || *end != '\0' || v == 0 || v > (64u << 20))
			die("bad size \"%s\" (1 B .. 64 MiB)", tok);
		sizes[n++] = (uint32_t)v;
	}
	if (n == 0)
		die("empty size list");
	return n;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: mp_peer server|client <tcp port> [--qp rc|ud] [--srq] [--msgs N]\n"
		"       [--sizes list] [--peer addr] [--seed S] [--timeout sec] [--depth D] [--slots K]\n"
		"EAL arguments (and the droce vdev) come from $DROCE_EAL.\n");
	exit(2);
}

static void
parse_args(int argc, char **argv)
{
	opt.role = mp_parse_role(argc, argv, "mp_peer");
	if (opt.role < 0)
		usage();
	opt.port = argv[2];
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--srq") == 0) {
			opt.srq = true;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (strcmp(a, "--qp") == 0) {
			if (strcmp(v, "rc") == 0)
				opt.type = IBV_QPT_RC;
			else if (strcmp(v, "ud") == 0)
				opt.type = IBV_QPT_UD;
			else
				usage();
		} else if (strcmp(a, "--msgs") == 0) {
			opt.msgs = strtoul(v, NULL, 0);
		} else if (strcmp(a, "--sizes") == 0) {
			snprintf(opt.sizes_arg, sizeof(opt.sizes_arg), "%s", v);
		} else if (strcmp(a, "--peer") == 0) {
			opt.peer = v;
		} else if (strcmp(a, "--seed") == 0) {
			opt.seed = strtoull(v, NULL, 0);
		} else if (strcmp(a, "--timeout") == 0) {
			opt.timeout = strtoul(v, NULL, 0);
		} else if (strcmp(a, "--depth") == 0) {
			opt.depth = strtoul(v, NULL, 0);
		} else if (strcmp(a, "--slots") == 0) {
			opt.slots = strtoul(v, NULL, 0);
		} else {
			usage();
		}
	}
	if (opt.msgs == 0 || opt.msgs > 1000000 || opt.timeout == 0 ||
	    opt.depth == 0 || opt.depth > 1024 || opt.slots == 0 || opt.slots > 4096)
		usage();
	if (opt.sizes_arg[0] == '\0')
		snprintf(opt.sizes_arg, sizeof(opt.sizes_arg), "%s", opt.type == IBV_QPT_UD ?
			 "1,2,39,40,41,64,255,256,1000,mtu" :
			 "1,2,63,64,65,1000,1024,1025,4095,4096,4097,65536,1M");
}

/* --- verbs set-up --- */
static void
create_qp(struct mp_res *r, uint32_t send_wr, uint32_t recv_wr, uint32_t cqe)
{
	struct ibv_qp_init_attr qa = { 0 };

	mp_create_cqs(r, cqe, cqe);
	if (opt.srq && opt.role == ROLE_SERVER) {
		struct ibv_srq_init_attr sa = { 0 };

		sa.attr.max_wr = recv_wr;
		sa.attr.max_sge = 1;
		r->srq = ibv_create_srq(r->pd, &sa);
		if (r->srq == NULL)
			die("ibv_create_srq(max_wr %u): %s", recv_wr, strerror(errno));
	}
	qa.qp_type = opt.type;
	qa.send_cq = r->scq;
	qa.recv_cq = r->rcq;
	qa.srq = r->srq;
	qa.cap.max_send_wr = send_wr;
	qa.cap.max_recv_wr = r->srq ? 0 : recv_wr;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = r->srq ? 0 : 1;
	qa.cap.max_inline_data = 64;
	r->qp = ibv_create_qp(r->pd, &qa);
	if (r->qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	r->cap = qa.cap;
}

/* RC: the values of mp_rc_connect(); UD: the Q_Key, and an AH to the peer */
static void
connect_qp(struct mp_res *r, const struct msg_hello *peer, uint32_t my_psn)
{
	static const struct mp_rc_attr rc = {
		.access = 0, .rd_atomic = 1, .min_rnr_timer = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct ibv_qp_attr a = { 0 };
	struct ibv_ah_attr ah = { 0 };

	if (opt.type == IBV_QPT_RC) {
		struct mp_rc_peer p = { ntohl(peer->qpn), ntohl(peer->psn),
			mp_path_mtu(r->mtu, ntohl(peer->mtu)), peer->gid };

		mp_rc_connect(r->qp, &p, my_psn, &rc);
		return;
	}
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qkey = MP_QKEY;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("modify_qp INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE))
		die("modify_qp RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("modify_qp RTS: %s", strerror(errno));

	ah.is_global = 1;
	memcpy(ah.grh.dgid.raw, peer->gid, 16);
	ah.grh.hop_limit = 64;
	ah.port_num = 1;
	r->ah = ibv_create_ah(r->pd, &ah);
	if (r->ah == NULL)
		die("ibv_create_ah: %s", strerror(errno));
}

static const char *
type_name(void)
{
	return opt.type == IBV_QPT_UD ? (opt.srq ? "UD+SRQ" : "UD") : (opt.srq ? "RC+SRQ" : "RC");
}

static void
make_hello(struct msg_hello *h, const struct mp_res *r, uint32_t psn)
{
	memset(h, 0, sizeof(*h));
	h->magic = htonl(MP_MAGIC);
	h->qp_type = htonl(opt.type);
	h->qpn = htonl(r->qp->qp_num);
	h->psn = htonl(psn);
	h->mtu = htonl(r->mtu);
	memcpy(h->gid, r->gid.raw, 16);
}

static void
check_hello(const struct msg_hello *h)
{
	char g[INET6_ADDRSTRLEN];

	if (ntohl(h->magic) != MP_MAGIC)
		die("bad hello from the peer");
	if (ntohl(h->qp_type) != (uint32_t)opt.type)
		die("peer uses another QP type (%u, we %u)", ntohl(h->qp_type), opt.type);
	inet_ntop(AF_INET6, h->gid, g, sizeof(g));
	say("peer QPN 0x%06x PSN 0x%06x GID %s", ntohl(h->qpn), ntohl(h->psn), g);
}

/* ================================ server ================================ */

struct slot {
	uint8_t *p;
	uint32_t dirty;		/* bytes to re-canary before reuse */
};

static void
post_slot(struct mp_res *r, struct slot *s, uint32_t idx, uint32_t slot_len)
{
	struct ibv_sge sge = { (uintptr_t)s->p, slot_len, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = idx, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	int ret;

	if (s->dirty) {
		memset(s->p, MP_CANARY, s->dirty);
		s->dirty = 0;
	}
	ret = r->srq ? ibv_post_srq_recv(r->srq, &wr, &bad) : ibv_post_recv(r->qp, &wr, &bad);
	if (ret)
		die("ibv_post_%srecv: %s", r->srq ? "srq_" : "", strerror(ret));
}

static int
run_server(void)
{
	struct mp_res r = { 0 };
	struct msg_hello mine, peer;
	struct msg_plan plan;
	struct msg_ready ready = { htonl(MP_MAGIC), htonl(1) };
	struct msg_done done = { 0 };
	struct msg_result res = { 0 };
	uint32_t sizes[MP_MAX_SIZES], nsizes, msgs, max_size = 0, slot_len, nslots;
	uint32_t received = 0, good = 0, bad = 0, posted = 0;
	uint64_t seed, bytes = 0;
	struct slot *slots;
	uint8_t *expect;
	int lfd, fd;
	uint32_t psn = rand_psn(), peer_ip, my_ip;
	bool got_done = false;
	double t0, t_first = 0, t_last = 0, deadline, done_at = 0;
	char detail[192] = "";

	mp_open_dev(&r);

	lfd = mp_tcp_listen(opt.port, 1);
	fd = mp_tcp_accept(lfd, opt.timeout);
	close(lfd);

	deadline = now_s() + opt.timeout;
	if (read_all(fd, &peer, sizeof(peer), deadline) || read_all(fd, &plan, sizeof(plan), deadline))
		die("reading the client's hello: %s", strerror(errno));
	if (ntohl(plan.magic) != MP_MAGIC)
		die("bad plan from the client");
	msgs = ntohl(plan.msgs);
	nsizes = ntohl(plan.nsizes);
	seed = (uint64_t)ntohl(plan.seed_hi) << 32 | ntohl(plan.seed_lo);
	if (nsizes == 0 || nsizes > MP_MAX_SIZES || msgs == 0)
		die("bad plan from the client");
	for (uint32_t i = 0; i < nsizes; i++) {
		sizes[i] = ntohl(plan.sizes[i]);
		if (sizes[i] > max_size)
			max_size = sizes[i];
	}
	if (opt.type == IBV_QPT_UD && max_size > mtu_bytes(r.mtu))
		die("UD message of %u bytes exceeds the MTU (%u)", max_size, mtu_bytes(r.mtu));

	/* UD has no flow control: every receive is posted before the client starts */
	slot_len = max_size + (opt.type == IBV_QPT_UD ? MP_GRH : 0) + 64;
	nslots = opt.type == IBV_QPT_UD ? msgs : (msgs < opt.slots ? msgs : opt.slots);
	if (nslots > 4096)
		die("too many receive slots (%u, at most 4096)", nslots);
	create_qp(&r, 4, nslots, nslots + 8);
	mp_reg_buf(&r, (size_t)slot_len * nslots, MP_CANARY, IBV_ACCESS_LOCAL_WRITE);
	slots = calloc(nslots, sizeof(*slots));
	expect = malloc(max_size);
	if (slots == NULL || expect == NULL)
		die("out of memory");
	for (uint32_t i = 0; i < nslots; i++)
		slots[i].p = r.buf + (size_t)i * slot_len;

	make_hello(&mine, &r, psn);
	if (write_all(fd, &mine, sizeof(mine)))
		die("sending hello: %s", strerror(errno));
	check_hello(&peer);
	say("%s QPN 0x%06x, %u messages, %u sizes (max %u B), %u receive slots, seed %" PRIu64,
	    type_name(), r.qp->qp_num, msgs, nsizes, max_size, nslots, seed);
	connect_qp(&r, &peer, psn);
	memcpy(&peer_ip, &peer.gid[12], 4);
	memcpy(&my_ip, &r.gid.raw[12], 4);
	for (; posted < nslots; posted++)
		post_slot(&r, &slots[posted], posted, slot_len);
	mp_wait_port_active(&r, deadline, 0);
	if (write_all(fd, &ready, sizeof(ready)))
		die("sending ready: %s", strerror(errno));

	t0 = now_s();
	deadline = t0 + opt.timeout;
	while (received < msgs || !got_done) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(r.rcq, 16, wc);

		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (int k = 0; k < n; k++) {
			struct ibv_wc *w = &wc[k];
			uint32_t idx = received++, size = sizes[idx % nsizes];
			uint32_t off = opt.type == IBV_QPT_UD ? MP_GRH : 0;
			struct slot *s;
			bool imm = idx % 4 == 3;
			char why[160] = "";

			if (t_first == 0)
				t_first = now_s();
			t_last = now_s();
			if (w->wr_id >= nslots) {
				snprintf(why, sizeof(why), "wr_id %" PRIu64 " is no slot", w->wr_id);
				goto bad_msg;
			}
			s = &slots[w->wr_id];
			s->dirty = slot_len;
			if (w->status != IBV_WC_SUCCESS) {
				snprintf(why, sizeof(why), "status %s", ibv_wc_status_str(w->status));
				goto bad_msg;
			}
			if (w->opcode != IBV_WC_RECV) {
				snprintf(why, sizeof(why), "opcode %d, not IBV_WC_RECV", w->opcode);
				goto bad_msg;
			}
			if (w->qp_num != r.qp->qp_num) {
				snprintf(why, sizeof(why), "wc.qp_num 0x%x, our QP is 0x%x", w->qp_num, r.qp->qp_num);
				goto bad_msg;
			}
			if (w->byte_len != size + off) {
				snprintf(why, sizeof(why), "wc.byte_len %u, expected %u", w->byte_len, size + off);
				goto bad_msg;
			}
			if (!!(w->wc_flags & IBV_WC_WITH_IMM) != imm ||
			    (imm && ntohl(w->imm_data) != (idx ^ 0x5a5a0000u))) {
				snprintf(why, sizeof(why), "immediate: flags 0x%x data 0x%08x, expected %s",
					 w->wc_flags, ntohl(w->imm_data), imm ? "one" : "none");
				goto bad_msg;
			}
			if (opt.type == IBV_QPT_UD) {
				const uint8_t *g = s->p;

				if (w->src_qp != ntohl(peer.qpn)) {
					snprintf(why, sizeof(why), "wc.src_qp 0x%x, peer QP is 0x%x",
						 w->src_qp, ntohl(peer.qpn));
					goto bad_msg;
				}
				if (!(w->wc_flags & IBV_WC_GRH)) {
					snprintf(why, sizeof(why), "no IBV_WC_GRH");
					goto bad_msg;
				}
				/* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 bytes */
				if (g[20] != 0x45 || g[29] != 17 || memcmp(g + 32, &peer_ip, 4) ||
				    memcmp(g + 36, &my_ip, 4) ||
				    (uint32_t)(g[22] << 8 | g[23]) != 20 + 8 + 12 + 8 + (imm ? 4 : 0) +
				    ((size + 3) & ~3u) + 4) {
					snprintf(why, sizeof(why), "GRH: not the IPv4 header expected "
						 "(%02x .. proto %u, total length %u)", g[20], g[29],
						 g[22] << 8 | g[23]);
					goto bad_msg;
				}
			}
			mp_fill_pattern(expect, size, seed, idx);
			if (memcmp(s->p + off, expect, size) != 0) {
				uint32_t j = 0;

				while (s->p[off + j] == expect[j])
					j++;
				snprintf(why, sizeof(why), "payload differs at byte %u: 0x%02x, expected 0x%02x",
					 j, s->p[off + j], expect[j]);
				goto bad_msg;
			}
			for (uint32_t j = off + size; j < off + size + 64; j++)
				if (s->p[j] != MP_CANARY) {
					snprintf(why, sizeof(why), "written past byte_len (byte %u)", j - off);
					goto bad_msg;
				}
			s->dirty = off + size + 64;
			good++;
			bytes += size;
			goto next;
bad_msg:
			bad++;
			if (bad <= 5)
				say("message %u (%u B): %s", idx, size, why);
			if (detail[0] == '\0')
				snprintf(detail, sizeof(detail), "message %u (%u B): %s", idx, size, why);
next:
			if (posted < msgs && w->wr_id < nslots) {
				post_slot(&r, &slots[w->wr_id], w->wr_id, slot_len);
				posted++;
			}
		}
		if (!got_done && readable(fd)) {
			if (read_all(fd, &done, sizeof(done), now_s() + 5) || ntohl(done.magic) != MP_MAGIC)
				die("lost the client before it reported: %s", strerror(errno));
			got_done = true;
			done_at = now_s();
		}
		/* sends all acknowledged but messages missing: give stragglers a moment */
		if (got_done && received < msgs && now_s() - done_at > 2)
			break;
		if (now_s() > deadline) {
			say("timed out after %u s with %u of %u messages", opt.timeout, received, msgs);
			break;
		}
	}
	if (received > msgs)
		bad += received - msgs;
	if (good != msgs && detail[0] == '\0')
		snprintf(detail, sizeof(detail), "%u of %u messages arrived", received, msgs);

	res.magic = htonl(MP_MAGIC);
	res.received = htonl(received);
	res.good = htonl(good);
	res.bad = htonl(bad);
	snprintf(res.detail, sizeof(res.detail), "%s", detail);
	if (write_all(fd, &res, sizeof(res)))
		say("sending the result failed: %s", strerror(errno));
	{
		double dt = t_last > t_first ? t_last - t_first : 1e-9;

		say("%s: %u/%u messages intact, %u bad, %" PRIu64 " payload bytes in %.3f s (%.1f Mbit/s)%s%s",
		    type_name(), good, msgs, bad, bytes, dt, bytes * 8 / dt / 1e6,
		    detail[0] ? "; first problem: " : "", detail);
	}
	/* let the client read the result before the QP goes away */
	{
		char c;

		read_all(fd, &c, 1, now_s() + 5);
	}
	close(fd);
	mp_destroy_qp_res(&r);
	mp_close_dev(&r);
	free(slots);
	free(expect);
	return good == msgs && bad == 0 ? 0 : 1;
}

/* ================================ client ================================ */

static int errno_checks, errno_failed;

static void
errno_check(const char *what, int ret, int want, bool bad_ok)
{
	errno_checks++;
	if (ret != want || !bad_ok) {
		errno_failed++;
		say("errno table: %s: returned %d (%s), expected %d (%s), *bad_wr %s", what, ret,
		    strerror(ret), want, strerror(want), bad_ok ? "right" : "WRONG");
	}
}

static int
run_client(void)
{
	struct mp_res r = { 0 };
	struct msg_hello mine, peer;
	struct msg_plan plan = { 0 };
	struct msg_ready ready;
	struct msg_done done;
	struct msg_result res;
	uint32_t sizes[MP_MAX_SIZES], nsizes, max_size = 0, depth = opt.depth;
	uint32_t posted = 0, completed = 0, ok = 0, failed = 0, inline_n = 0, sge2_n = 0, imm_n = 0;
	uint32_t psn = rand_psn(), peer_qpn;
	uint64_t bytes = 0;
	struct ibv_sge sge_many[32];
	int fd = -1, ret;
	double t0, dt, deadline;
	char first_err[160] = "";

	mp_open_dev(&r);
	nsizes = parse_sizes(opt.sizes_arg, mtu_bytes(r.mtu), sizes);
	for (uint32_t i = 0; i < nsizes; i++)
		if (sizes[i] > max_size)
			max_size = sizes[i];
	if (opt.type == IBV_QPT_UD && max_size > mtu_bytes(r.mtu))
		die("UD message of %u bytes exceeds the MTU (%u)", max_size, mtu_bytes(r.mtu));
	create_qp(&r, depth, 1, depth + 8);
	mp_reg_buf(&r, (size_t)max_size * depth, MP_CANARY, IBV_ACCESS_LOCAL_WRITE);

	/* errno table, QP in RESET: sends are posted from RTS on */
	{
		struct ibv_sge sge = { (uintptr_t)r.buf, 1, r.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND }, *bad = NULL;

		ret = ibv_post_send(r.qp, &wr, &bad);
		errno_check("post_send in RESET", ret, EINVAL, bad == &wr);
	}

	/* the server may start after us: retry until the timeout */
	deadline = now_s() + opt.timeout;
	fd = mp_tcp_connect(opt.peer, opt.port, deadline, opt.timeout);

	make_hello(&mine, &r, psn);
	plan.magic = htonl(MP_MAGIC);
	plan.msgs = htonl(opt.msgs);
	plan.seed_hi = htonl(opt.seed >> 32);
	plan.seed_lo = htonl((uint32_t)opt.seed);
	plan.srq = htonl(opt.srq);
	plan.nsizes = htonl(nsizes);
	for (uint32_t i = 0; i < nsizes; i++)
		plan.sizes[i] = htonl(sizes[i]);
	if (write_all(fd, &mine, sizeof(mine)) || write_all(fd, &plan, sizeof(plan)))
		die("sending hello: %s", strerror(errno));
	if (read_all(fd, &peer, sizeof(peer), deadline))
		die("reading the server's hello: %s", strerror(errno));
	check_hello(&peer);
	peer_qpn = ntohl(peer.qpn);
	say("%s QPN 0x%06x, %u messages, %u sizes (max %u B), depth %u, seed %" PRIu64,
	    type_name(), r.qp->qp_num, opt.msgs, nsizes, max_size, depth, opt.seed);
	connect_qp(&r, &peer, psn);

	/* errno table, QP in RTS: more SGEs than max_send_sge / max_recv_sge */
	for (unsigned int i = 0; i < 32; i++)
		sge_many[i] = (struct ibv_sge){ (uintptr_t)r.buf, 1, r.mr->lkey };
	if (r.cap.max_send_sge + 1 <= 32) {
		struct ibv_send_wr wr = { .wr_id = 2, .sg_list = sge_many,
			.num_sge = (int)r.cap.max_send_sge + 1, .opcode = IBV_WR_SEND }, *bad = NULL;

		if (opt.type == IBV_QPT_UD) {
			wr.wr.ud.ah = r.ah;
			wr.wr.ud.remote_qpn = peer_qpn;
			wr.wr.ud.remote_qkey = MP_QKEY;
		}
		ret = ibv_post_send(r.qp, &wr, &bad);
		errno_check("post_send num_sge > max_send_sge", ret, EINVAL, bad == &wr);
	}
	if (r.cap.max_recv_sge + 1 <= 32) {
		struct ibv_recv_wr wr = { .wr_id = 3, .sg_list = sge_many,
			.num_sge = (int)r.cap.max_recv_sge + 1 }, *bad = NULL;

		ret = ibv_post_recv(r.qp, &wr, &bad);
		errno_check("post_recv num_sge > max_recv_sge", ret, EINVAL, bad == &wr);
	}
	if (opt.type == IBV_QPT_UD) {
		struct ibv_sge sge = { (uintptr_t)r.buf, mtu_bytes(r.mtu) + 1, r.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND }, *bad = NULL;

		if (sge.length <= r.buf_len) {
			wr.wr.ud.ah = r.ah;
			wr.wr.ud.remote_qpn = peer_qpn;
			wr.wr.ud.remote_qkey = MP_QKEY;
			ret = ibv_post_send(r.qp, &wr, &bad);
			errno_check("UD post_send longer than the MTU", ret, EINVAL, bad == &wr);
		}
	}

	mp_wait_port_active(&r, deadline, 0);
	if (read_all(fd, &ready, sizeof(ready), deadline) || ntohl(ready.magic) != MP_MAGIC)
		die("the server did not get ready: %s", strerror(errno));

	t0 = now_s();
	deadline = t0 + opt.timeout;
	while (completed < opt.msgs) {
		struct ibv_wc wc[16];
		int n;

		while (posted < opt.msgs && posted - completed < depth) {
			uint32_t i = posted, size = sizes[i % nsizes];
			uint8_t *p = r.buf + (size_t)(i % depth) * max_size;
			struct ibv_sge sge[2] = {
				{ (uintptr_t)p, size, r.mr->lkey },
			};
			struct ibv_send_wr wr = { .wr_id = i, .sg_list = sge, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
			struct ibv_send_wr badwr = { .wr_id = UINT64_MAX, .sg_list = sge_many,
				.num_sge = (int)r.cap.max_send_sge + 1, .opcode = IBV_WR_SEND };
			struct ibv_send_wr *bad = NULL;
			bool chain = i == 0 && r.cap.max_send_sge + 1 <= 32;

			mp_fill_pattern(p, size, opt.seed, i);
			if (i % 4 == 3) {
				wr.opcode = IBV_WR_SEND_WITH_IMM;
				wr.imm_data = htonl(i ^ 0x5a5a0000u);
				imm_n++;
			}
			if (i % 5 == 1 && size >= 2 && r.cap.max_send_sge >= 2) {
				sge[0].length = size / 2;
				sge[1] = (struct ibv_sge){ (uintptr_t)p + size / 2, size - size / 2, r.mr->lkey };
				wr.num_sge = 2;
				sge2_n++;
			}
			if (i % 2 == 0 && size <= r.cap.max_inline_data) {
				wr.send_flags |= IBV_SEND_INLINE;
				inline_n++;
			}
			if (opt.type == IBV_QPT_UD) {
				wr.wr.ud.ah = r.ah;
				wr.wr.ud.remote_qpn = peer_qpn;
				wr.wr.ud.remote_qkey = MP_QKEY;
				badwr.wr.ud = wr.wr.ud;
			}
			/* the first WR goes with a bad one chained: it stays posted, the bad one comes back */
			if (chain)
				wr.next = &badwr;
			ret = ibv_post_send(r.qp, &wr, &bad);
			if (chain) {
				errno_check("post_send [good, num_sge > max] list", ret, EINVAL, bad == &badwr);
			} else if (ret) {
				die("ibv_post_send message %u (%u B): %s", i, size, strerror(ret));
			}
			/* inline data is copied at post time: the buffer is ours again */
			if (wr.send_flags & IBV_SEND_INLINE)
				memset(p, 0xee, size);
			posted++;
			bytes += size;
		}
		n = ibv_poll_cq(r.scq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (int k = 0; k < n; k++) {
			completed++;
			if (wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_SEND &&
			    wc[k].qp_num == r.qp->qp_num) {
				ok++;
				continue;
			}
			failed++;
			if (first_err[0] == '\0')
				snprintf(first_err, sizeof(first_err), "send %" PRIu64 ": status %s, opcode %d, qp_num 0x%x",
					 wc[k].wr_id, ibv_wc_status_str(wc[k].status), wc[k].opcode, wc[k].qp_num);
			if (failed <= 5)
				say("send %" PRIu64 " completed with %s (vendor_err 0x%x)", wc[k].wr_id,
				    ibv_wc_status_str(wc[k].status), wc[k].vendor_err);
		}
		if (now_s() > deadline) {
			say("timed out after %u s: %u posted, %u completed", opt.timeout, posted, completed);
			break;
		}
	}
	dt = now_s() - t0;

	done.magic = htonl(MP_MAGIC);
	done.posted = htonl(posted);
	done.ok = htonl(ok);
	done.failed = htonl(failed);
	if (write_all(fd, &done, sizeof(done)) ||
	    read_all(fd, &res, sizeof(res), now_s() + opt.timeout) || ntohl(res.magic) != MP_MAGIC)
		die("no result from the server: %s", strerror(errno));
	res.detail[sizeof(res.detail) - 1] = '\0';
	say("%s: %u sends posted, %u completed with IBV_WC_SUCCESS, %u failed; %" PRIu64
	    " bytes in %.3f s (%.1f Mbit/s); %u inline, %u with 2 SGEs, %u with immediate",
	    type_name(), posted, ok, failed, bytes, dt, bytes * 8 / (dt > 0 ? dt : 1e-9) / 1e6,
	    inline_n, sge2_n, imm_n);
	say("server verified %u/%u messages intact, %u bad%s%s", ntohl(res.good), opt.msgs,
	    ntohl(res.bad), res.detail[0] ? ": " : "", res.detail);
	say("errno table: %d/%d checks held", errno_checks - errno_failed, errno_checks);
	if (first_err[0])
		say("first send error: %s", first_err);
	close(fd);
	mp_destroy_qp_res(&r);
	mp_close_dev(&r);
	return ok == opt.msgs && failed == 0 && ntohl(res.good) == opt.msgs && ntohl(res.bad) == 0 &&
	       errno_failed == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	mp_signals_init("mp_peer: watchdog expired, giving up\n");
	/* connect + data + result phases, each bounded by --timeout */
	alarm(3 * opt.timeout + 30);
	rc = opt.role == ROLE_SERVER ? run_server() : run_client();
	printf("%s: %s\n", mp_tag, rc == 0 ? "PASS" : "FAIL");
	return rc;
}
