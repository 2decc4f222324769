/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program outside droce's tree, built against an installed droce:
 *
 *   cc -o hello_droce hello_droce.c $(pkg-config --cflags --libs libdroce)
 *   ./hello_droce -l 0 --no-huge -m 256 --no-pci --no-telemetry
 *
 * It starts EAL with its arguments, joins two droce devices by a net_ring
 * pair (droce.h), and sends one message from droce0 to droce1 over an RC QP
 * pair (<infiniband/verbs.h>). test/run_install.sh builds and runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <droce.h>
#include <infiniband/verbs.h>
#include <rte_eal.h>

#define MSG	"hello from droce0"
#define BUFSZ	4096

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	char buf[BUFSZ];
};

#define die(...) do { fprintf(stderr, "hello_droce: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static struct ibv_device *
find_dev(struct ibv_device **list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			return list[i];
	die("no device %s", name);
}

static void
side_open(struct side *s, struct ibv_device *dev)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_port_attr pa;

	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL)
		die("ibv_open_device %s: %s", ibv_get_device_name(dev), strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->mr = s->pd ? ibv_reg_mr(s->pd, s->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE) : NULL;
	s->cq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0);
	if (s->pd == NULL || s->mr == NULL || s->cq == NULL)
		die("PD, MR or CQ: %s", strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (s->qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid) || ibv_query_port(s->ctx, 1, &pa))
		die("ibv_query_gid/port failed");
	s->mtu = pa.active_mtu;
}

static void
side_connect(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT failed");
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->mtu,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 1,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .hop_limit = 64 } },
	};
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR failed");
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 1,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS failed");
}

/* One completion from @s's CQ within 10 s; a failed one ends the program. */
static struct ibv_wc
wait_wc(struct side *s)
{
	time_t deadline = time(NULL) + 10;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		if (time(NULL) > deadline)
			die("no completion within 10 s");
	if (n < 0)
		die("ibv_poll_cq failed");
	if (wc.status != IBV_WC_SUCCESS)
		die("completion: %s", ibv_wc_status_str(wc.status));
	return wc;
}

static void
side_close(struct side *s)
{
	ibv_destroy_qp(s->qp);
	ibv_destroy_cq(s->cq);
	ibv_dereg_mr(s->mr);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
}

int
main(int argc, char **argv)
{
	static struct side a, b;
	struct ibv_device **list;
	struct droce_dev_stats st;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad_swr;
	struct ibv_wc wc;
	int n, ret;

	if (rte_eal_init(argc, argv) < 0)
		die("rte_eal_init failed");
	ret = droce_ring_pair_create("net_ring_h0", "net_ring_h1");
	if (ret)
		die("droce_ring_pair_create: %s", strerror(-ret));
	ret = droce_dev_create("droce0", "ethdev=net_ring_h0,ip=10.0.0.1");
	if (ret == 0)
		ret = droce_dev_create("droce1", "ethdev=net_ring_h1,ip=10.0.0.2");
	if (ret)
		die("droce_dev_create: %s", strerror(-ret));
	list = ibv_get_device_list(&n);
	if (list == NULL)
		die("ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; i < n; i++)
		printf("device %s\n", ibv_get_device_name(list[i]));
	side_open(&a, find_dev(list, n, "droce0"));
	side_open(&b, find_dev(list, n, "droce1"));
	ibv_free_device_list(list);
	side_connect(&a, &b);
	side_connect(&b, &a);

	sge = (struct ibv_sge){ (uintptr_t)b.buf, BUFSZ, b.mr->lkey };
	if (ibv_post_recv(b.qp, &rwr, &bad_rwr))
		die("ibv_post_recv failed");
	strcpy(a.buf, MSG);
	sge = (struct ibv_sge){ (uintptr_t)a.buf, sizeof(MSG), a.mr->lkey };
	if (ibv_post_send(a.qp, &swr, &bad_swr))
		die("ibv_post_send failed");
	wc = wait_wc(&b);
	if (wc.opcode != IBV_WC_RECV || wc.wr_id != 2)
		die("droce1: opcode %d wr_id %" PRIu64 ", expected a RECV", wc.opcode, wc.wr_id);
	printf("droce1 received %u bytes: %s\n", wc.byte_len, b.buf);
	wc = wait_wc(&a);
	if (wc.opcode != IBV_WC_SEND || wc.wr_id != 1)
		die("droce0: opcode %d wr_id %" PRIu64 ", expected a SEND", wc.opcode, wc.wr_id);
	printf("droce0 SEND completed\n");
	if (droce_dev_stats_get("droce0", &st) == 0)
		printf("droce0 tx_pkts %" PRIu64 " rx_pkts %" PRIu64 "\n", st.tx_pkts, st.rx_pkts);

	side_close(&a);
	side_close(&b);
	if (droce_dev_destroy("droce1") || droce_dev_destroy("droce0"))
		die("droce_dev_destroy failed");
	rte_eal_cleanup();
	return 0;
}
