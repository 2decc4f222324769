/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: SEND/RECV latency (ping-pong) and streaming bandwidth between
 * two RC QPs. With no arguments it runs on the embedded default: two droce
 * devices joined by a net_ring pair in this process, no hugepages, the
 * engine on a worker lcore when there is one.
 *
 *   droce-perf [EAL args --] [-s size] [-b bw size] [-n iters] [-d depth]
 *              [-p inline|lcore] [-L loss] [-t timeout]
 *
 * -L wraps both ports of the embedded default in net_impair with drop=<loss>
 * (a probability, e.g. 0.001), to measure goodput and latency under loss.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_eal.h>

#include "droce.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned int sends_done;	/* send completions seen but not yet waited for */
	unsigned int recvs_done;
	struct ibv_wc last_recv;
};

static size_t size = 64, bw_size = 65536;
static unsigned int iters = 10000, depth = 64, qp_timeout = 14;
static const char *loss;

#define die(...) do { fprintf(stderr, "droce-perf: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
side_open(struct side *s, struct ibv_device *dev, size_t bufsz)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_port_attr pa;

	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL)
		die("cannot open %s: %s", ibv_get_device_name(dev), strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = aligned_alloc(4096, bufsz);
	memset(s->buf, 0, bufsz);
	s->mr = ibv_reg_mr(s->pd, s->buf, bufsz, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s->cq = ibv_create_cq(s->ctx, 2 * depth + 2, NULL, NULL, 0);
	if (!s->pd || !s->mr || !s->cq)
		die("resource creation failed: %s", strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = depth;
	qa.cap.max_recv_wr = depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = 64;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (s->qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid) || ibv_query_port(s->ctx, 1, &pa))
		die("query gid/port failed");
	s->mtu = pa.active_mtu;
}

static void
connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS failed");
}

static void
post_recv(struct side *s, size_t off, size_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		die("ibv_post_recv failed");
}

static void
post_send(struct side *s, size_t off, size_t len, uint64_t id, bool signaled)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = signaled ? IBV_SEND_SIGNALED : 0 }, *bad;

	if (len <= 64)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(s->qp, &wr, &bad))
		die("ibv_post_send failed");
}

/* Wait for one completion of @op on @s, failing on any error status; other
 * completions polled meanwhile are counted for later waits. */
static void
dump_stats(void)
{
	static const char *const devs[] = { "droce0", "droce1" };
	const char *names[64];
	uint64_t vals[64];

	for (unsigned int d = 0; d < 2; d++) {
		int n = droce_dev_xstats(devs[d], names, vals, 64);

		fprintf(stderr, "%s:", devs[d]);
		for (int i = 0; i < n && i < 64; i++)
			if (vals[i])
				fprintf(stderr, " %s=%" PRIu64, names[i], vals[i]);
		fputc('\n', stderr);
	}
}

static void
wait_wc(struct side *s, enum ibv_wc_opcode op, struct ibv_wc *out)
{
	double deadline = now_us() + 10e6;
	unsigned int *done = op == IBV_WC_RECV ? &s->recvs_done : &s->sends_done;
	struct ibv_wc wc;

	for (;;) {
		int n;

		if (*done) {
			(*done)--;
			if (out)
				*out = s->last_recv;
			return;
		}
		n = ibv_poll_cq(s->cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n == 0) {
			if (now_us() > deadline) {
				dump_stats();
				die("no completion within 10 s");
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			die("completion error: %s (wr_id %" PRIu64 ")", ibv_wc_status_str(wc.status), wc.wr_id);
		if (wc.opcode == IBV_WC_RECV) {
			s->last_recv = wc;
			s->recvs_done++;
		} else {
			s->sends_done++;
		}
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
run_latency(struct side *a, struct side *b)
{
	double *lat = calloc(iters, sizeof(*lat)), sum = 0;
	struct ibv_wc wc;

	post_recv(a, 0, size, 1);
	post_recv(b, 0, size, 1);
	for (unsigned int i = 0; i < iters; i++) {
		double t0 = now_us();

		a->buf[0] = (uint8_t)i;
		post_send(a, 0, size, 2, true);
		wait_wc(b, IBV_WC_RECV, &wc);
		if (wc.byte_len != size || b->buf[0] != (uint8_t)i)
			die("ping %u: got %u bytes, first byte %u", i, wc.byte_len, b->buf[0]);
		post_recv(b, 0, size, 1);
		post_send(b, 0, size, 2, true);
		wait_wc(a, IBV_WC_RECV, &wc);
		post_recv(a, 0, size, 1);
		wait_wc(a, IBV_WC_SEND, NULL);
		wait_wc(b, IBV_WC_SEND, NULL);
		lat[i] = (now_us() - t0) / 2;
		sum += lat[i];
	}
	/* consume b's outstanding receive so the streaming run starts clean */
	post_send(a, 0, size, 3, true);
	wait_wc(b, IBV_WC_RECV, NULL);
	wait_wc(a, IBV_WC_SEND, NULL);
	qsort(lat, iters, sizeof(*lat), cmp_double);
	printf("latency  size %6zu B  iters %u  avg %.2f us  p50 %.2f us  p99 %.2f us  (half round trip)\n",
	       size, iters, sum / iters, lat[iters / 2], lat[(size_t)(iters * 0.99)]);
	free(lat);
}

static void
run_bandwidth(struct side *a, struct side *b)
{
	unsigned int n = iters, posted = 0, done = 0, recvd = 0;
	uint64_t bytes = 0;
	struct ibv_wc wc[32];
	double t0, dt;

	/* drain the receives left from the latency run */
	for (unsigned int i = 0; i < depth; i++)
		post_recv(b, (i % depth) * bw_size, bw_size, i);
	t0 = now_us();
	while (recvd < n) {
		while (posted < n && posted - done < depth) {
			post_send(a, (posted % depth) * bw_size, bw_size, posted, true);
			posted++;
		}
		int k = ibv_poll_cq(a->cq, 32, wc);

		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("send completion error: %s", ibv_wc_status_str(wc[i].status));
			if (wc[i].opcode == IBV_WC_SEND)
				done++;
		}
		k = ibv_poll_cq(b->cq, 32, wc);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != bw_size)
				die("recv completion error: %s, %u bytes",
				    ibv_wc_status_str(wc[i].status), wc[i].byte_len);
			if (wc[i].opcode != IBV_WC_RECV)
				continue;
			bytes += wc[i].byte_len;
			recvd++;
			post_recv(b, (wc[i].wr_id % depth) * bw_size, bw_size, wc[i].wr_id);
		}
	}
	dt = now_us() - t0;
	printf("bandwidth size %6zu B  msgs %u  %.3f Gbit/s  %.3f Mmsg/s\n",
	       bw_size, n, bytes * 8 / dt / 1e3, n / dt);
}

int
main(int argc, char **argv)
{
	char prefix[64], *dflt[16];
	int nd = 0, opt, ret;
	bool embedded = true, inl;
	const char *prog = "lcore";
	struct ibv_device **list;
	struct side a = { 0 }, b = { 0 };
	int ndev;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			embedded = false;
	if (!embedded || (argc > 1 && argv[1][0] == '-' && argv[1][1] == '-' && argv[1][2])) {
		embedded = false;
		ret = rte_eal_init(argc, argv);
		if (ret < 0)
			die("EAL init failed");
		argc -= ret;
		argv += ret;
	}
	optind = 1;
	while ((opt = getopt(argc, argv, "s:n:d:p:b:L:t:")) != -1) {
		switch (opt) {
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'b': bw_size = strtoul(optarg, NULL, 0); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'd': depth = strtoul(optarg, NULL, 0); break;
		case 'p': prog = optarg; break;
		case 'L': loss = optarg; break;
		case 't': qp_timeout = strtoul(optarg, NULL, 0); break;
		default: die("usage: droce-perf [EAL args --] [-s size] [-b bw size] [-n iters] [-d depth] [-p inline|lcore] [-L loss] [-t timeout]");
		}
	}
	if (embedded) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=droce-perf-%d", getpid());
		dflt[nd++] = argv[0];
		dflt[nd++] = "--no-huge";
		dflt[nd++] = "-m";
		dflt[nd++] = "512";
		dflt[nd++] = "--no-pci";
		dflt[nd++] = prefix;
		dflt[nd++] = "--log-level=lib.eal:error";
		dflt[nd++] = "-l";
		inl = strcmp(prog, "inline") == 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2;
		dflt[nd++] = inl ? "0" : "0-1";
		if (rte_eal_init(nd, dflt) < 0)
			die("EAL init failed");
		if (droce_ring_pair_create("net_ring_a", "net_ring_b"))
			die("cannot create the net_ring pair");
		if (loss) {
			char args[128];

			snprintf(args, sizeof(args), "ethdev=net_ring_a,drop=%s,seed=1", loss);
			if (droce_dev_create("net_impair0", args))
				die("bad loss %s", loss);
			snprintf(args, sizeof(args), "ethdev=net_ring_b,drop=%s,seed=2", loss);
			if (droce_dev_create("net_impair1", args))
				die("bad loss %s", loss);
		}
		if (droce_dev_create("droce0", loss ? "ethdev=net_impair0,ip=10.0.0.1,mtu=4200" :
				     "ethdev=net_ring_a,ip=10.0.0.1,mtu=4200") ||
		    droce_dev_create("droce1", loss ? "ethdev=net_impair1,ip=10.0.0.2,mtu=4200" :
				     "ethdev=net_ring_b,ip=10.0.0.2,mtu=4200"))
			die("cannot create the embedded net_ring topology");
		printf("embedded default: droce0 (10.0.0.1) <-> net_ring pair <-> droce1 (10.0.0.2), %s progress, loss %s\n",
		       inl ? "inline" : "engine lcore", loss ? loss : "0");
	}
	list = ibv_get_device_list(&ndev);
	if (list == NULL || ndev < 2)
		die("need two droce devices, found %d", list ? ndev : 0);
	side_open(&a, list[0], depth * RTE_MAX(bw_size, size));
	side_open(&b, list[1], depth * RTE_MAX(bw_size, size));
	connect_qp(&a, &b);
	connect_qp(&b, &a);
	run_latency(&a, &b);
	run_bandwidth(&a, &b);
	ibv_free_device_list(list);
	return 0;
}
