/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-testpmd: an interactive console over droce devices, in the style of
 * dpdk-testpmd, on DPDK's cmdline library. It is a DPDK application: EAL
 * arguments, then "--", then its own options. With no EAL arguments it
 * brings up the embedded default (droce0 10.0.0.1 and droce1 10.0.0.2 on a
 * net_ring pair, no hugepages); EAL arguments that create no port get the
 * same two devices (on hugepages unless told otherwise). Objects (PD, CQ,
 * SRQ, QP, MR, AH) are created from the prompt and named by their index; WRs
 * are posted from the prompt; a refused post prints its errno as text and
 * names the failing WR; completions are printed in words.
 *
 *   droce-testpmd [EAL args --] [-f FILE] [-q] [-I]
 *     -f FILE   run the commands of FILE without interaction and exit with
 *               0 if every command did what it should, 1 otherwise
 *     -q        do not echo the commands of FILE
 *     -I        the embedded default's devices, each port wrapped in
 *               net_impair (net_impair0, net_impair1: no faults until
 *               "impair ... set")
 *
 * In a command file, a command that fails stops the file (exit 1) unless
 * the next line is "expect <ERRNO>" naming its error (e.g. "expect EINVAL")
 * ; "expect ok" states success. See doc/guides/testpmd.rst.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pdump.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "rte_pmd_impair.h"

#define MAX_OBJ		64
#define MAX_ARGS	24
#define POLL_WAIT_MS	1000

/* --- the objects the console holds, by kind and index --- */

struct dev_slot {
	struct ibv_context *ctx;
	const char *name;
};

struct mr_slot {
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};

struct qp_slot {
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	int pd, scq, rcq, srq;
	int dev;
};

static struct dev_slot devs[8];
static int nb_devs;
static struct ibv_device **dev_list;
static struct {
	struct ibv_pd *pd;
	int dev;
} pds[MAX_OBJ];
static struct {
	struct ibv_cq *cq;
	int dev;
} cqs[MAX_OBJ];
static struct {
	struct ibv_srq *srq;
	int pd;
	int tm_cq;			/* a tag-matching SRQ's CQ, else -1 */
} srqs[MAX_OBJ];
static struct qp_slot qps[MAX_OBJ];
static struct mr_slot mrs[MAX_OBJ];
static struct {
	struct ibv_ah *ah;
	int pd;
} ahs[MAX_OBJ];

/* --- output and errors --- */

static const char *const errno_names[][2] = {
	{ "EPERM", "1" }, { "ENOENT", "2" }, { "EIO", "5" }, { "EBADF", "9" },
	{ "EAGAIN", "11" }, { "ENOMEM", "12" }, { "EACCES", "13" }, { "EFAULT", "14" },
	{ "EBUSY", "16" }, { "EEXIST", "17" }, { "ENODEV", "19" }, { "EINVAL", "22" },
	{ "ENOSPC", "28" }, { "ERANGE", "34" }, { "ENOSYS", "38" }, { "EOPNOTSUPP", "95" },
	{ "ETIMEDOUT", "110" },
};

static const char *
errno_name(int e)
{
	static char buf[16];

	for (size_t i = 0; i < RTE_DIM(errno_names); i++)
		if (atoi(errno_names[i][1]) == e)
			return errno_names[i][0];
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static int
errno_by_name(const char *s)
{
	for (size_t i = 0; i < RTE_DIM(errno_names); i++)
		if (strcasecmp(errno_names[i][0], s) == 0)
			return atoi(errno_names[i][1]);
	return isdigit((unsigned char)s[0]) ? atoi(s) : -1;
}

/* A command's failure: prints "<what>: <ERRNO> (<text>)" and returns @e. */
static int
fail(int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(": %s (%s)\n", errno_name(e), strerror(e));
	return e;
}

/* A usage error: EINVAL. */
static int
usage(const char *syntax)
{
	printf("usage: %s\n", syntax);
	return EINVAL;
}

/* --- argument parsing --- */

static bool
num(const char *s, uint64_t *v)
{
	char *end;

	if (s == NULL || *s == '\0')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno == 0 && *end == '\0';
}

/* An index into a table of @n slots whose entry is set (@set tells). */
static int
index_of(const char *s, const char *kind, bool (*set)(int))
{
	uint64_t v;

	if (!num(s, &v) || v >= MAX_OBJ || !set((int)v)) {
		printf("no %s %s\n", kind, s ? s : "(missing)");
		return -1;
	}
	return (int)v;
}

static bool pd_set(int i) { return pds[i].pd != NULL; }
static bool cq_set(int i) { return cqs[i].cq != NULL; }
static bool srq_set(int i) { return srqs[i].srq != NULL; }
static bool qp_set(int i) { return qps[i].qp != NULL; }
static bool mr_set(int i) { return mrs[i].mr != NULL; }
static bool ah_set(int i) { return ahs[i].ah != NULL; }
static bool dev_set(int i) { return i < nb_devs; }

static int
free_slot(bool (*set)(int))
{
	for (int i = 0; i < MAX_OBJ; i++)
		if (!set(i))
			return i;
	return -1;
}

/* "key value" pairs after the positional arguments: the value of @key, or NULL. */
static const char *
opt(int argc, char **argv, int from, const char *key)
{
	for (int i = from; i + 1 < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return argv[i + 1];
	return NULL;
}

static uint64_t
opt_num(int argc, char **argv, int from, const char *key, uint64_t dflt)
{
	const char *s = opt(argc, argv, from, key);
	uint64_t v;

	return s != NULL && num(s, &v) ? v : dflt;
}

/* --- words for verbs values --- */

static const char *
qp_type_str(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	default: return "?";
	}
}

static const char *
qp_state_str(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned int)st < RTE_DIM(names) ? names[st] : "?";
}

static const char *
wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	case IBV_WC_TM_ADD: return "TM_ADD";
	case IBV_WC_TM_DEL: return "TM_DEL";
	case IBV_WC_TM_SYNC: return "TM_SYNC";
	case IBV_WC_TM_RECV: return "TM_RECV";
	case IBV_WC_TM_NO_TAG: return "TM_NO_TAG";
	default: return "?";
	}
}

static void
wc_print(const struct ibv_wc *wc)
{
	printf("wc wr_id %#" PRIx64 " qp %#x: %s", wc->wr_id, wc->qp_num,
	       ibv_wc_status_str(wc->status));
	if (wc->status == IBV_WC_SUCCESS) {
		printf(", %s", wc_opcode_str(wc->opcode));
		/* a list operation's completion (TM_ADD, TM_DEL, TM_SYNC) carries no bytes */
		if ((wc->opcode & IBV_WC_RECV) && wc->opcode != IBV_WC_TM_ADD &&
		    wc->opcode != IBV_WC_TM_DEL && wc->opcode != IBV_WC_TM_SYNC)
			printf(", %u bytes", wc->byte_len);
		if ((wc->opcode & IBV_WC_RECV) && wc->src_qp != 0)
			printf(" from qp %#x", wc->src_qp);
		if (wc->wc_flags & IBV_WC_WITH_IMM)
			printf(", imm %#x", ntohl(wc->imm_data));
	} else {
		printf(" (vendor_err %#x)", wc->vendor_err);
	}
	printf("\n");
}

/* --- show --- */

static int
show_device(void)
{
	for (int d = 0; d < nb_devs; d++) {
		struct ibv_device_attr a;
		struct ibv_port_attr p;
		union ibv_gid gid;
		char ip[INET6_ADDRSTRLEN];
		int ret;

		ret = ibv_query_device(devs[d].ctx, &a);
		if (ret)
			return fail(ret, "ibv_query_device(%s)", devs[d].name);
		ret = ibv_query_port(devs[d].ctx, 1, &p);
		if (ret)
			return fail(ret, "ibv_query_port(%s)", devs[d].name);
		if (ibv_query_gid(devs[d].ctx, 1, 0, &gid) != 0)
			memset(&gid, 0, sizeof(gid));
		inet_ntop(AF_INET, gid.raw + 12, ip, sizeof(ip));
		printf("device %d: %s, ip %s, port %s, active MTU %d, fw %s\n", d, devs[d].name, ip,
		       ibv_port_state_str(p.state), 128 << p.active_mtu, a.fw_ver);
		printf("  max: qp %d, qp_wr %d, sge %d, cq %d, cqe %d, mr %d, pd %d, srq %d, ah %d\n",
		       a.max_qp, a.max_qp_wr, a.max_sge, a.max_cq, a.max_cqe, a.max_mr, a.max_pd,
		       a.max_srq, a.max_ah);
		/* the device's own ethdev port (the frames that are not RoCE), unless ethport=0 */
		{
			struct rte_eth_stats st = { 0 };
			uint16_t pid;

			if (rte_eth_dev_get_port_by_name(devs[d].name, &pid) == 0 &&
			    rte_eth_stats_get(pid, &st) == 0)
				printf("  ethdev port %u (%s): rx %" PRIu64 " tx %" PRIu64 " frames\n",
				       pid, devs[d].name, st.ipackets, st.opackets);
		}
	}
	return 0;
}

static int
show_objects(void)
{
	for (int d = 0; d < nb_devs; d++) {
		struct droce_dev_objects o;

		if (droce_dev_objects_get(devs[d].name, &o) != 0)
			continue;
		printf("device %d %s: %u contexts, %u PDs, %u MRs, %u CQs, %u SRQs, %u QPs, %u AHs, "
		       "%u mbufs in use\n", d, devs[d].name, o.contexts, o.pds, o.mrs, o.cqs, o.srqs,
		       o.qps, o.ahs, o.mbufs_in_use);
	}
	printf("console:");
	for (int i = 0; i < MAX_OBJ; i++) {
		if (pd_set(i)) printf(" pd%d", i);
		if (cq_set(i)) printf(" cq%d", i);
		if (srq_set(i)) printf(" srq%d", i);
		if (qp_set(i)) printf(" qp%d", i);
		if (mr_set(i)) printf(" mr%d", i);
		if (ah_set(i)) printf(" ah%d", i);
	}
	printf("\n");
	return 0;
}

static uint64_t stat_of(const char *const *names, const uint64_t *values, int n,
			const char *name);

/* One line of a QP's main counters (show stats). */
static void
qp_stats_line(int q)
{
	const char *names[64];
	uint64_t v[64];
	int n = droce_qp_xstats(qps[q].qp, names, v, (int)RTE_DIM(names));

	if (n < 0)
		return;
	n = RTE_MIN(n, (int)RTE_DIM(names));
#define S(x) stat_of(names, v, n, x)
	printf("  qp %d (qpn %#x): rx %" PRIu64 " pkts %" PRIu64 " B, tx %" PRIu64 " pkts %" PRIu64
	       " B, retransmits %" PRIu64 ", timeouts %" PRIu64 ", NAKs sent %" PRIu64 " rcvd %"
	       PRIu64 ", RNR NAKs sent %" PRIu64 " rcvd %" PRIu64 ", dup %" PRIu64 ", out of seq %"
	       PRIu64 "\n", q, qps[q].qp->qp_num, S("rx_pkts"), S("rx_bytes"), S("tx_pkts"),
	       S("tx_bytes"), S("retransmits"), S("timeouts"),
	       S("naks_sent_seq_err") + S("naks_sent_inv_req") + S("naks_sent_rem_access") +
	       S("naks_sent_rem_op"),
	       S("naks_rcvd_seq_err") + S("naks_rcvd_inv_req") + S("naks_rcvd_rem_access") +
	       S("naks_rcvd_rem_op"),
	       S("rnr_naks_sent"), S("rnr_naks_rcvd"), S("rx_dup"), S("rx_drop_seq"));
#undef S
}

static int
show_stats(int argc, char **argv)
{
	const char *names[128];
	uint64_t values[128];

	for (int d = 0; d < nb_devs; d++) {
		int n;

		if (argc > 2 && strcmp(argv[2], devs[d].name) != 0 && atoi(argv[2]) != d)
			continue;
		n = droce_dev_xstats(devs[d].name, names, values, (int)RTE_DIM(names));
		if (n < 0)
			return fail(-n, "droce_dev_xstats(%s)", devs[d].name);
		printf("device %d %s:\n", d, devs[d].name);
		for (int i = 0; i < n && i < (int)RTE_DIM(names); i++)
			if (values[i] != 0 || argc > 3)
				printf("  %-28s %" PRIu64 "\n", names[i], values[i]);
		for (int q = 0; q < MAX_OBJ; q++)
			if (qp_set(q) && qps[q].dev == d)
				qp_stats_line(q);
	}
	return 0;
}

/* The value of counter @name among @n, 0 if absent. */
static uint64_t
stat_of(const char *const *names, const uint64_t *values, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return values[i];
	return 0;
}

static int
show_qp(int argc, char **argv)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr init;
	int i = index_of(argc > 2 ? argv[2] : NULL, "qp", qp_set), ret;

	if (i < 0)
		return EINVAL;
	ret = ibv_query_qp(qps[i].qp, &at, IBV_QP_STATE, &init);
	if (ret)
		return fail(ret, "ibv_query_qp");
	printf("qp %d: %s qpn %#x on %s, state %s, pd %d, send cq %d, recv cq %d",
	       i, qp_type_str(qps[i].type), qps[i].qp->qp_num, devs[qps[i].dev].name,
	       qp_state_str(at.qp_state), qps[i].pd, qps[i].scq, qps[i].rcq);
	if (qps[i].srq >= 0)
		printf(", srq %d", qps[i].srq);
	printf("\n  sq_psn %#x, rq_psn %#x, dest qpn %#x, path MTU %d, timeout %u, retry %u, "
	       "rnr_retry %u\n  cap: send_wr %u, recv_wr %u, send_sge %u, recv_sge %u, inline %u\n",
	       at.sq_psn, at.rq_psn, at.dest_qp_num, at.path_mtu ? 128 << at.path_mtu : 0,
	       at.timeout, at.retry_cnt, at.rnr_retry, init.cap.max_send_wr, init.cap.max_recv_wr,
	       init.cap.max_send_sge, init.cap.max_recv_sge, init.cap.max_inline_data);
	/* its counters: those not zero, or all with "all" */
	{
		const char *names[64];
		uint64_t v[64];
		int n = droce_qp_xstats(qps[i].qp, names, v, (int)RTE_DIM(names)), col = 0;
		bool all = argc > 3 && strcmp(argv[3], "all") == 0;

		if (n < 0)
			return fail(-n, "droce_qp_xstats");
		printf("  counters:");
		for (int k = 0; k < n && k < (int)RTE_DIM(names); k++) {
			if (v[k] == 0 && !all)
				continue;
			printf("%s%s %" PRIu64, col % 4 == 0 ? "\n    " : ", ", names[k], v[k]);
			col++;
		}
		printf("%s\n", col == 0 ? " all zero" : "");
	}
	return 0;
}

/* show neigh [dev]: each device's ARP table */
static int
show_neigh(int argc, char **argv)
{
	for (int d = 0; d < nb_devs; d++) {
		struct droce_neigh t[64];
		int n;

		if (argc > 2 && strcmp(argv[2], devs[d].name) != 0 && atoi(argv[2]) != d)
			continue;
		n = droce_dev_neigh(devs[d].name, t, (int)RTE_DIM(t));
		if (n < 0)
			return fail(-n, "droce_dev_neigh(%s)", devs[d].name);
		printf("device %d %s: %d neighbour%s\n", d, devs[d].name, n, n == 1 ? "" : "s");
		for (int k = 0; k < n && k < (int)RTE_DIM(t); k++) {
			char ip[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, &t[k].ip, ip, sizeof(ip));
			if (t[k].resolved)
				printf("  %-15s %02x:%02x:%02x:%02x:%02x:%02x%s\n", ip, t[k].mac[0],
				       t[k].mac[1], t[k].mac[2], t[k].mac[3], t[k].mac[4], t[k].mac[5],
				       t[k].is_static ? " static" : "");
			else
				printf("  %-15s incomplete\n", ip);
		}
	}
	return 0;
}

static int
show_srq(int argc, char **argv)
{
	struct ibv_srq_attr at;
	int i = index_of(argc > 2 ? argv[2] : NULL, "srq", srq_set), ret;

	if (i < 0)
		return EINVAL;
	ret = ibv_query_srq(srqs[i].srq, &at);
	if (ret)
		return fail(ret, "ibv_query_srq");
	printf("srq %d: pd %d, max_wr %u, max_sge %u, limit %u", i, srqs[i].pd, at.max_wr,
	       at.max_sge, at.srq_limit);
	if (srqs[i].tm_cq >= 0)
		printf(", tag matching, completions on cq %d", srqs[i].tm_cq);
	printf("\n");
	return 0;
}

static int
show_cq(int argc, char **argv)
{
	int i = index_of(argc > 2 ? argv[2] : NULL, "cq", cq_set);

	if (i < 0)
		return EINVAL;
	printf("cq %d: on %s, %d entries\n", i, devs[cqs[i].dev].name, cqs[i].cq->cqe);
	return 0;
}

static int cmd_traffic_show(void);

static int
cmd_show(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "device") == 0 || strcmp(what, "port") == 0)
		return show_device();
	if (strcmp(what, "objects") == 0)
		return show_objects();
	if (strcmp(what, "stats") == 0)
		return show_stats(argc, argv);
	if (strcmp(what, "qp") == 0)
		return show_qp(argc, argv);
	if (strcmp(what, "srq") == 0)
		return show_srq(argc, argv);
	if (strcmp(what, "cq") == 0)
		return show_cq(argc, argv);
	if (strcmp(what, "traffic") == 0)
		return cmd_traffic_show();
	if (strcmp(what, "neigh") == 0)
		return show_neigh(argc, argv);
	return usage("show device|port|objects|stats [dev [all]]|qp <n> [all]|srq <n>|cq <n>|"
		     "neigh [dev]|traffic");
}

/* --- create and destroy --- */

static int
create_pd(int argc, char **argv)
{
	int d = index_of(argc > 2 ? argv[2] : "0", "device", dev_set), i = free_slot(pd_set);

	if (d < 0)
		return EINVAL;
	if (i < 0)
		return fail(ENOSPC, "create pd");
	pds[i].pd = ibv_alloc_pd(devs[d].ctx);
	if (pds[i].pd == NULL)
		return fail(errno, "ibv_alloc_pd");
	pds[i].dev = d;
	printf("pd %d on %s\n", i, devs[d].name);
	return 0;
}

static int
create_cq(int argc, char **argv)
{
	int d = index_of(argc > 2 ? argv[2] : NULL, "device", dev_set), i = free_slot(cq_set);
	uint64_t n = 256;

	if (d < 0)
		return usage("create cq <dev> [<entries>]");
	if (argc > 3 && !num(argv[3], &n))
		return usage("create cq <dev> [<entries>]");
	if (i < 0)
		return fail(ENOSPC, "create cq");
	cqs[i].cq = ibv_create_cq(devs[d].ctx, (int)n, NULL, NULL, 0);
	if (cqs[i].cq == NULL)
		return fail(errno, "ibv_create_cq");
	cqs[i].dev = d;
	printf("cq %d on %s, %d entries\n", i, devs[d].name, cqs[i].cq->cqe);
	return 0;
}

/*
 * create srq <pd> [wr <n>] [sge <n>] [tm <tags> cq <cq>]: with tm, a
 * tag-matching SRQ (IBV_SRQT_TM) of <tags> tags whose list operations and
 * matched receives complete on <cq>
 */
static int
create_srq(int argc, char **argv)
{
	static const char syntax[] = "create srq <pd> [wr <n>] [sge <n>] [tm <tags> cq <cq>]";
	int p = index_of(argc > 2 ? argv[2] : NULL, "pd", pd_set), i = free_slot(srq_set), c = -1;
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 64, .max_sge = 1 } };

	if (p < 0)
		return usage(syntax);
	a.attr.max_wr = (uint32_t)opt_num(argc, argv, 3, "wr", 64);
	a.attr.max_sge = (uint32_t)opt_num(argc, argv, 3, "sge", 1);
	if (i < 0)
		return fail(ENOSPC, "create srq");
	if (opt(argc, argv, 3, "tm") != NULL) {
		struct ibv_srq_init_attr_ex x = {
			.attr = a.attr,
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
			.srq_type = IBV_SRQT_TM,
			.pd = pds[p].pd,
			.tm_cap = { .max_num_tags = (uint32_t)opt_num(argc, argv, 3, "tm", 0),
				    .max_ops = 16 },
		};

		c = index_of(opt(argc, argv, 3, "cq"), "cq", cq_set);
		if (c < 0 || x.tm_cap.max_num_tags == 0)
			return usage(syntax);
		x.cq = cqs[c].cq;
		srqs[i].srq = ibv_create_srq_ex(devs[pds[p].dev].ctx, &x);
		if (srqs[i].srq == NULL)
			return fail(errno, "ibv_create_srq_ex(IBV_SRQT_TM)");
	} else {
		srqs[i].srq = ibv_create_srq(pds[p].pd, &a);
		if (srqs[i].srq == NULL)
			return fail(errno, "ibv_create_srq");
	}
	srqs[i].pd = p;
	srqs[i].tm_cq = c;
	if (c >= 0)
		printf("srq %d, %u WRs, tag matching, %s tags, completions on cq %d\n", i,
		       a.attr.max_wr, opt(argc, argv, 3, "tm"), c);
	else
		printf("srq %d, %u WRs\n", i, a.attr.max_wr);
	return 0;
}

static int
create_qp(int argc, char **argv)
{
	static const char syntax[] =
		"create qp rc|uc|ud <pd> <cq> [rcq <cq>] [srq <n>] [wr <n>] [sge <n>] [inline <n>]";
	struct ibv_qp_init_attr a = { 0 };
	int p, c, rc, s = -1, i = free_slot(qp_set);
	const char *t = argc > 2 ? argv[2] : "";

	if (strcasecmp(t, "rc") == 0)
		a.qp_type = IBV_QPT_RC;
	else if (strcasecmp(t, "uc") == 0)
		a.qp_type = IBV_QPT_UC;
	else if (strcasecmp(t, "ud") == 0)
		a.qp_type = IBV_QPT_UD;
	else
		return usage(syntax);
	p = index_of(argc > 3 ? argv[3] : NULL, "pd", pd_set);
	c = index_of(argc > 4 ? argv[4] : NULL, "cq", cq_set);
	if (p < 0 || c < 0)
		return usage(syntax);
	rc = c;
	if (opt(argc, argv, 5, "rcq") && (rc = index_of(opt(argc, argv, 5, "rcq"), "cq", cq_set)) < 0)
		return EINVAL;
	if (opt(argc, argv, 5, "srq") &&
	    (s = index_of(opt(argc, argv, 5, "srq"), "srq", srq_set)) < 0)
		return EINVAL;
	if (i < 0)
		return fail(ENOSPC, "create qp");
	a.send_cq = cqs[c].cq;
	a.recv_cq = cqs[rc].cq;
	a.srq = s >= 0 ? srqs[s].srq : NULL;
	a.cap.max_send_wr = a.cap.max_recv_wr = (uint32_t)opt_num(argc, argv, 5, "wr", 64);
	a.cap.max_send_sge = a.cap.max_recv_sge = (uint32_t)opt_num(argc, argv, 5, "sge", 1);
	a.cap.max_inline_data = (uint32_t)opt_num(argc, argv, 5, "inline", 0);
	if (s >= 0)
		a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
	qps[i].qp = ibv_create_qp(pds[p].pd, &a);
	if (qps[i].qp == NULL)
		return fail(errno, "ibv_create_qp");
	qps[i].type = a.qp_type;
	qps[i].pd = p;
	qps[i].scq = c;
	qps[i].rcq = rc;
	qps[i].srq = s;
	qps[i].dev = pds[p].dev;
	printf("qp %d: %s qpn %#x on %s\n", i, qp_type_str(a.qp_type), qps[i].qp->qp_num,
	       devs[qps[i].dev].name);
	return 0;
}

static int
create_mr(int argc, char **argv)
{
	int p = index_of(argc > 2 ? argv[2] : NULL, "pd", pd_set), i = free_slot(mr_set);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t len;

	if (p < 0 || argc < 4 || !num(argv[3], &len) || len == 0)
		return usage("create mr <pd> <bytes> [access local|all]");
	if (opt(argc, argv, 4, "access") && strcmp(opt(argc, argv, 4, "access"), "local") == 0)
		access = IBV_ACCESS_LOCAL_WRITE;
	if (i < 0)
		return fail(ENOSPC, "create mr");
	mrs[i].buf = aligned_alloc(64, RTE_ALIGN_CEIL(len, 64));
	if (mrs[i].buf == NULL)
		return fail(ENOMEM, "create mr");
	memset(mrs[i].buf, 0, len);
	mrs[i].mr = ibv_reg_mr(pds[p].pd, mrs[i].buf, len, access);
	if (mrs[i].mr == NULL) {
		int e = errno;

		free(mrs[i].buf);
		return fail(e, "ibv_reg_mr");
	}
	mrs[i].len = len;
	printf("mr %d: %" PRIu64 " bytes at %p, lkey %#x, rkey %#x\n", i, len, (void *)mrs[i].buf,
	       mrs[i].mr->lkey, mrs[i].mr->rkey);
	return 0;
}

/* create ah <pd> <ip>: an address handle to a droce device's IPv4 address */
static int
create_ah(int argc, char **argv)
{
	int p = index_of(argc > 2 ? argv[2] : NULL, "pd", pd_set), i = free_slot(ah_set);
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct in_addr ip;

	if (p < 0 || argc < 4 || inet_pton(AF_INET, argv[3], &ip) != 1)
		return usage("create ah <pd> <ipv4>");
	if (i < 0)
		return fail(ENOSPC, "create ah");
	a.grh.dgid.raw[10] = 0xff;
	a.grh.dgid.raw[11] = 0xff;
	memcpy(a.grh.dgid.raw + 12, &ip, 4);
	a.grh.hop_limit = 64;
	ahs[i].ah = ibv_create_ah(pds[p].pd, &a);
	if (ahs[i].ah == NULL)
		return fail(errno, "ibv_create_ah");
	ahs[i].pd = p;
	printf("ah %d to %s\n", i, argv[3]);
	return 0;
}

static int
cmd_create(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "pd") == 0)
		return create_pd(argc, argv);
	if (strcmp(what, "cq") == 0)
		return create_cq(argc, argv);
	if (strcmp(what, "srq") == 0)
		return create_srq(argc, argv);
	if (strcmp(what, "qp") == 0)
		return create_qp(argc, argv);
	if (strcmp(what, "mr") == 0)
		return create_mr(argc, argv);
	if (strcmp(what, "ah") == 0)
		return create_ah(argc, argv);
	return usage("create pd|cq|srq|qp|mr|ah ...");
}

static int
cmd_destroy(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "", *which = argc > 2 ? argv[2] : NULL;
	int i, ret;

	if (strcmp(what, "qp") == 0 && (i = index_of(which, "qp", qp_set)) >= 0) {
		ret = ibv_destroy_qp(qps[i].qp);
		if (ret == 0)
			qps[i].qp = NULL;
	} else if (strcmp(what, "cq") == 0 && (i = index_of(which, "cq", cq_set)) >= 0) {
		ret = ibv_destroy_cq(cqs[i].cq);
		if (ret == 0)
			cqs[i].cq = NULL;
	} else if (strcmp(what, "srq") == 0 && (i = index_of(which, "srq", srq_set)) >= 0) {
		ret = ibv_destroy_srq(srqs[i].srq);
		if (ret == 0)
			srqs[i].srq = NULL;
	} else if (strcmp(what, "mr") == 0 && (i = index_of(which, "mr", mr_set)) >= 0) {
		ret = ibv_dereg_mr(mrs[i].mr);
		if (ret == 0) {
			free(mrs[i].buf);
			mrs[i].mr = NULL;
		}
	} else if (strcmp(what, "ah") == 0 && (i = index_of(which, "ah", ah_set)) >= 0) {
		ret = ibv_destroy_ah(ahs[i].ah);
		if (ret == 0)
			ahs[i].ah = NULL;
	} else if (strcmp(what, "pd") == 0 && (i = index_of(which, "pd", pd_set)) >= 0) {
		ret = ibv_dealloc_pd(pds[i].pd);
		if (ret == 0)
			pds[i].pd = NULL;
	} else {
		return usage("destroy pd|cq|srq|qp|mr|ah <n>");
	}
	if (ret)
		return fail(ret, "destroy %s %s", what, which);
	printf("%s %s destroyed\n", what, which);
	return 0;
}

/* --- QP states --- */

static int
to_init(int i)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qps[i].type == IBV_QPT_UD) {
		at.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (qps[i].type == IBV_QPT_UC)
		at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	return ibv_modify_qp(qps[i].qp, &at, mask);
}

/* RTR then RTS towards @ip (network order) / @qpn; UD ignores them. */
static int
to_rts(int i, const uint8_t *ip, uint32_t qpn)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTR };
	int ret, mask = IBV_QP_STATE;

	if (qps[i].type != IBV_QPT_UD) {
		at.path_mtu = IBV_MTU_1024;
		at.dest_qp_num = qpn;
		at.rq_psn = 0;
		at.ah_attr.is_global = 1;
		at.ah_attr.port_num = 1;
		at.ah_attr.grh.hop_limit = 64;
		at.ah_attr.grh.dgid.raw[10] = 0xff;
		at.ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(at.ah_attr.grh.dgid.raw + 12, ip, 4);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (qps[i].type == IBV_QPT_RC) {
			at.max_dest_rd_atomic = 1;
			at.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qps[i].qp, &at, mask);
	if (ret)
		return ret;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 0;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qps[i].type == IBV_QPT_RC) {
		at.timeout = 14;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qps[i].qp, &at, mask);
}

static int
dev_ip(int d, uint8_t ip[4])
{
	union ibv_gid gid;
	int ret = ibv_query_gid(devs[d].ctx, 1, 0, &gid);

	if (ret == 0)
		memcpy(ip, gid.raw + 12, 4);
	return ret;
}

/*
 * connect qp <a> <b>: two QPs of this process, both to RTS towards each
 * other. connect qp <a> remote <ipv4> <qpn>: one QP to a remote one.
 */
static int
cmd_connect(int argc, char **argv)
{
	static const char syntax[] = "connect qp <a> <b> | connect qp <a> remote <ipv4> <qpn>";
	uint8_t ip_a[4], ip_b[4];
	uint64_t qpn;
	int a, b, ret;

	if (argc < 4 || strcmp(argv[1], "qp") != 0)
		return usage(syntax);
	a = index_of(argv[2], "qp", qp_set);
	if (a < 0)
		return EINVAL;
	if (strcmp(argv[3], "remote") == 0) {
		if (argc < 6 || inet_pton(AF_INET, argv[4], ip_b) != 1 || !num(argv[5], &qpn))
			return usage(syntax);
		ret = to_init(a);
		if (ret == 0)
			ret = to_rts(a, ip_b, (uint32_t)qpn);
		if (ret)
			return fail(ret, "connect qp %d", a);
		printf("qp %d RTS towards %s qpn %#x\n", a, argv[4], (uint32_t)qpn);
		return 0;
	}
	b = index_of(argv[3], "qp", qp_set);
	if (b < 0)
		return EINVAL;
	if (dev_ip(qps[a].dev, ip_a) || dev_ip(qps[b].dev, ip_b))
		return fail(EIO, "connect: no GID");
	ret = to_init(a);
	if (ret == 0)
		ret = to_init(b);
	if (ret == 0)
		ret = to_rts(a, ip_b, qps[b].qp->qp_num);
	if (ret == 0)
		ret = to_rts(b, ip_a, qps[a].qp->qp_num);
	if (ret)
		return fail(ret, "connect qp %d qp %d", a, b);
	printf("qp %d <-> qp %d: RTS\n", a, b);
	return 0;
}

/* modify qp <n> reset|init|err|rts: the transitions that need no peer */
static int
cmd_modify(int argc, char **argv)
{
	static const char syntax[] = "modify qp <n> reset|init|err|sqd|rts";
	struct ibv_qp_attr at = { 0 };
	int i, ret;

	if (argc < 4 || strcmp(argv[1], "qp") != 0)
		return usage(syntax);
	i = index_of(argv[2], "qp", qp_set);
	if (i < 0)
		return EINVAL;
	if (strcmp(argv[3], "init") == 0) {
		ret = to_init(i);
	} else {
		if (strcmp(argv[3], "reset") == 0)
			at.qp_state = IBV_QPS_RESET;
		else if (strcmp(argv[3], "err") == 0)
			at.qp_state = IBV_QPS_ERR;
		else if (strcmp(argv[3], "sqd") == 0)
			at.qp_state = IBV_QPS_SQD;
		else if (strcmp(argv[3], "rts") == 0)
			at.qp_state = IBV_QPS_RTS;
		else
			return usage(syntax);
		ret = ibv_modify_qp(qps[i].qp, &at, IBV_QP_STATE);
	}
	if (ret)
		return fail(ret, "ibv_modify_qp(qp %d -> %s)", i, argv[3]);
	printf("qp %d: %s\n", i, qp_state_str(qps[i].qp->state));
	return 0;
}

/* --- posting --- */

/* A remote QP number: a number, or "qp<n>" for the number of this console's qp n. */
static uint32_t
rqpn(const char *s)
{
	uint64_t v = 0;

	if (s != NULL && strncmp(s, "qp", 2) == 0 && num(s + 2, &v) && v < MAX_OBJ && qp_set((int)v))
		return qps[v].qp->qp_num;
	return s != NULL && num(s, &v) ? (uint32_t)v : 0;
}

/* Which WR of a refused list *bad_wr names (-1: none, NULL). */
static void
bad_wr_print(long idx, int nwr)
{
	if (idx < 0)
		printf("  *bad_wr = NULL\n");
	else
		printf("  *bad_wr = WR %ld of the list of %d (wr_id from id + %ld)\n", idx, nwr, idx);
}

/*
 * post send|write|read|fadd|cswap|recv|srq_recv ... : each posts one WR
 * (count <n> posts a list of n, wr_id from <id> up). A refused post prints
 * the errno and which WR of the list *bad_wr names.
 */
static int
cmd_post(int argc, char **argv)
{
	static const char syntax[] =
		"post send|write|read|fadd|cswap <qp> <mr> <off> <len> [rmr <mr> roff <off>] "
		"[ah <ah> rqpn <qpn>] [imm <v>] [add <v>] [cmp <v> swap <v>] [id <wr_id>] "
		"[count <n>] [unsignaled] [inline]\n"
		"       post recv <qp> <mr> <off> <len> [id <wr_id>] [count <n>]\n"
		"       post srq_recv <srq> <mr> <off> <len> [id <wr_id>] [count <n>]";
	struct ibv_send_wr swr[16], *sbad = NULL;
	struct ibv_recv_wr rwr[16], *rbad = NULL;
	struct ibv_sge sge[16];
	const char *op = argc > 1 ? argv[1] : "";
	uint64_t off, len, id, count;
	int q = -1, m, ret, nwr;
	bool recv = strcmp(op, "recv") == 0, srq_recv = strcmp(op, "srq_recv") == 0;

	if (argc < 6)
		return usage(syntax);
	if (srq_recv)
		q = index_of(argv[2], "srq", srq_set);
	else
		q = index_of(argv[2], "qp", qp_set);
	m = index_of(argv[3], "mr", mr_set);
	if (q < 0 || m < 0 || !num(argv[4], &off) || !num(argv[5], &len))
		return usage(syntax);
	id = opt_num(argc, argv, 6, "id", 1);
	count = opt_num(argc, argv, 6, "count", 1);
	if (count < 1 || count > RTE_DIM(swr))
		return usage(syntax);
	nwr = (int)count;
	for (int k = 0; k < nwr; k++) {
		sge[k].addr = (uintptr_t)mrs[m].buf + off;
		sge[k].length = (uint32_t)len;
		sge[k].lkey = mrs[m].mr->lkey;
	}
	if (recv || srq_recv) {
		memset(rwr, 0, sizeof(rwr));
		for (int k = 0; k < nwr; k++) {
			rwr[k].wr_id = id + (uint64_t)k;
			rwr[k].sg_list = len ? &sge[k] : NULL;
			rwr[k].num_sge = len ? 1 : 0;
			rwr[k].next = k + 1 < nwr ? &rwr[k + 1] : NULL;
		}
		ret = srq_recv ? ibv_post_srq_recv(srqs[q].srq, rwr, &rbad) :
				 ibv_post_recv(qps[q].qp, rwr, &rbad);
		if (ret) {
			bad_wr_print(rbad ? (long)(rbad - rwr) : -1L, nwr);
			return fail(ret, "post %s refused", op);
		}
		printf("posted %d %s WR%s\n", nwr, op, nwr > 1 ? "s" : "");
		return 0;
	}
	memset(swr, 0, sizeof(swr));
	for (int k = 0; k < nwr; k++) {
		struct ibv_send_wr *w = &swr[k];
		int rm;

		w->wr_id = id + (uint64_t)k;
		w->sg_list = len ? &sge[k] : NULL;
		w->num_sge = len ? 1 : 0;
		w->next = k + 1 < nwr ? &swr[k + 1] : NULL;
		w->send_flags = IBV_SEND_SIGNALED;
		for (int x = 6; x < argc; x++) {
			if (strcmp(argv[x], "inline") == 0)
				w->send_flags |= IBV_SEND_INLINE;
			if (strcmp(argv[x], "unsignaled") == 0)
				w->send_flags &= ~(unsigned int)IBV_SEND_SIGNALED;
		}
		if (strcmp(op, "send") == 0) {
			w->opcode = opt(argc, argv, 6, "imm") ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		} else if (strcmp(op, "write") == 0) {
			w->opcode = opt(argc, argv, 6, "imm") ? IBV_WR_RDMA_WRITE_WITH_IMM :
								IBV_WR_RDMA_WRITE;
		} else if (strcmp(op, "read") == 0) {
			w->opcode = IBV_WR_RDMA_READ;
		} else if (strcmp(op, "fadd") == 0) {
			w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		} else if (strcmp(op, "cswap") == 0) {
			w->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		} else {
			return usage(syntax);
		}
		if (w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
			w->imm_data = htonl((uint32_t)opt_num(argc, argv, 6, "imm", 0));
		if (w->opcode != IBV_WR_SEND && w->opcode != IBV_WR_SEND_WITH_IMM) {
			uint64_t roff = opt_num(argc, argv, 6, "roff", 0);

			rm = index_of(opt(argc, argv, 6, "rmr"), "mr", mr_set);
			if (rm < 0)
				return usage(syntax);
			if (w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
			    w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
				w->wr.atomic.remote_addr = (uintptr_t)mrs[rm].buf + roff;
				w->wr.atomic.rkey = mrs[rm].mr->rkey;
				w->wr.atomic.compare_add = opt_num(argc, argv, 6,
					w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? "add" : "cmp", 1);
				w->wr.atomic.swap = opt_num(argc, argv, 6, "swap", 0);
			} else {
				w->wr.rdma.remote_addr = (uintptr_t)mrs[rm].buf + roff;
				w->wr.rdma.rkey = mrs[rm].mr->rkey;
			}
		}
		if (qps[q].type == IBV_QPT_UD) {
			int a = index_of(opt(argc, argv, 6, "ah"), "ah", ah_set);

			if (a < 0 || !opt(argc, argv, 6, "rqpn"))
				return usage(syntax);
			w->wr.ud.ah = ahs[a].ah;
			w->wr.ud.remote_qpn = rqpn(opt(argc, argv, 6, "rqpn"));
			w->wr.ud.remote_qkey = 0x11111111;
		}
	}
	ret = ibv_post_send(qps[q].qp, swr, &sbad);
	if (ret) {
		bad_wr_print(sbad ? (long)(sbad - swr) : -1L, nwr);
		return fail(ret, "post %s refused", op);
	}
	printf("posted %d %s WR%s\n", nwr, op, nwr > 1 ? "s" : "");
	return 0;
}

/*
 * poll cq <n> [max <m>] [wait <ms>] [expect <count> [<status>]]: takes up to
 * m completions, waiting up to ms for the first; prints each. With expect,
 * exactly <count> completions, each with <status> (success by default).
 */
static int
cmd_poll(int argc, char **argv)
{
	struct ibv_wc wc[64];
	uint64_t max, wait_ms, want = UINT64_MAX;
	struct timespec t0, t;
	const char *st;
	int c, got = 0, bad = 0;

	if (argc < 3 || strcmp(argv[1], "cq") != 0)
		return usage("poll cq <n> [max <m>] [wait <ms>] [expect <count> [<status>]]");
	c = index_of(argv[2], "cq", cq_set);
	if (c < 0)
		return EINVAL;
	max = RTE_MIN(opt_num(argc, argv, 3, "max", 16), (uint64_t)RTE_DIM(wc));
	wait_ms = opt_num(argc, argv, 3, "wait", POLL_WAIT_MS);
	if (opt(argc, argv, 3, "expect")) {
		want = opt_num(argc, argv, 3, "expect", 0);
		if (want > max)
			max = want;
		if (max > RTE_DIM(wc))
			max = RTE_DIM(wc);
	}
	/* the status word after the count, if any */
	st = NULL;
	for (int i = 3; i + 2 < argc; i++)
		if (strcmp(argv[i], "expect") == 0)
			st = argv[i + 2];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cqs[c].cq, (int)(max - (uint64_t)got), wc + got);

		if (n < 0)
			return fail(EIO, "ibv_poll_cq");
		got += n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		/* expect 0: the whole wait, for a completion that must not come */
		if ((uint64_t)got >= max || ((want == UINT64_MAX || want == 0) && got > 0) ||
		    (want != UINT64_MAX && want != 0 && (uint64_t)got >= want) ||
		    (uint64_t)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000) >=
		    wait_ms)
			break;
		usleep(100);
	}
	/* with expect: a little longer, for completions that should not be there */
	if (want != UINT64_MAX && (uint64_t)got == want && (uint64_t)got < max) {
		usleep(20000);
		got += RTE_MAX(ibv_poll_cq(cqs[c].cq, (int)(max - (uint64_t)got), wc + got), 0);
	}
	for (int i = 0; i < got; i++) {
		wc_print(&wc[i]);
		if (st != NULL ? strcasecmp(ibv_wc_status_str(wc[i].status), st) != 0 &&
				 !(strcasecmp(st, "success") == 0 && wc[i].status == IBV_WC_SUCCESS) &&
				 !(strcasecmp(st, "flush") == 0 &&
				   wc[i].status == IBV_WC_WR_FLUSH_ERR) :
				 wc[i].status != IBV_WC_SUCCESS)
			bad++;
	}
	if (got == 0)
		printf("cq %d: no completion within %" PRIu64 " ms\n", c, wait_ms);
	if (want != UINT64_MAX && ((uint64_t)got != want || bad))
		return fail(EIO, "poll cq %d: %d completions, %d not %s; expected %" PRIu64, c, got,
			    bad, st ? st : "success", want);
	return 0;
}

/* --- memory contents --- */

/*
 * check qp <n> <counter> <op> <v> ; check dev <d> <counter> <op> <v>: a
 * counter of droce_qp_xstats / droce_dev_xstats compared with <v>
 * (<op>: == != < <= > >=); EIO when it does not hold, ENOENT for no such counter
 */
static int
check_counter(int argc, char **argv)
{
	static const char syntax[] = "check qp|dev <n> <counter> ==|!=|<|<=|>|>= <value>";
	const char *names[128];
	uint64_t values[128], want, have = 0;
	bool found = false, ok;
	const char *op;
	int i, n;

	if (argc < 6 || !num(argv[5], &want))
		return usage(syntax);
	if (strcmp(argv[1], "qp") == 0) {
		i = index_of(argv[2], "qp", qp_set);
		if (i < 0)
			return EINVAL;
		n = droce_qp_xstats(qps[i].qp, names, values, (int)RTE_DIM(names));
	} else {
		i = index_of(argv[2], "device", dev_set);
		if (i < 0)
			return EINVAL;
		n = droce_dev_xstats(devs[i].name, names, values, (int)RTE_DIM(names));
	}
	if (n < 0)
		return fail(-n, "%s %s counters", argv[1], argv[2]);
	for (int k = 0; k < n && k < (int)RTE_DIM(names); k++)
		if (strcmp(names[k], argv[3]) == 0) {
			have = values[k];
			found = true;
		}
	if (!found)
		return fail(ENOENT, "%s %s has no counter %s", argv[1], argv[2], argv[3]);
	op = argv[4];
	if (strcmp(op, "==") == 0)
		ok = have == want;
	else if (strcmp(op, "!=") == 0)
		ok = have != want;
	else if (strcmp(op, "<") == 0)
		ok = have < want;
	else if (strcmp(op, "<=") == 0)
		ok = have <= want;
	else if (strcmp(op, ">") == 0)
		ok = have > want;
	else if (strcmp(op, ">=") == 0)
		ok = have >= want;
	else
		return usage(syntax);
	if (!ok)
		return fail(EIO, "%s %s %s is %" PRIu64 ", not %s %" PRIu64, argv[1], argv[2],
			    argv[3], have, op, want);
	printf("%s %s %s = %" PRIu64 " (%s %" PRIu64 ")\n", argv[1], argv[2], argv[3], have, op,
	       want);
	return 0;
}

/* fill mr <m> <off> <len> <byte> ; check mr <m> <off> <len> <byte> */
static int
cmd_mem(int argc, char **argv)
{
	uint64_t off, len, byte;
	int m;

	if (strcmp(argv[0], "check") == 0 && argc > 1 &&
	    (strcmp(argv[1], "qp") == 0 || strcmp(argv[1], "dev") == 0))
		return check_counter(argc, argv);
	if (argc < 6 || strcmp(argv[1], "mr") != 0)
		return usage("fill|check mr <m> <off> <len> <byte>");
	m = index_of(argv[2], "mr", mr_set);
	if (m < 0 || !num(argv[3], &off) || !num(argv[4], &len) || !num(argv[5], &byte) ||
	    off + len > mrs[m].len)
		return usage("fill|check mr <m> <off> <len> <byte> (within the MR)");
	if (strcmp(argv[0], "fill") == 0) {
		memset(mrs[m].buf + off, (int)byte, len);
		printf("mr %d [%" PRIu64 ", +%" PRIu64 ") = %#x\n", m, off, len, (unsigned int)byte);
		return 0;
	}
	for (uint64_t i = 0; i < len; i++)
		if (mrs[m].buf[off + i] != (uint8_t)byte)
			return fail(EIO, "mr %d byte %" PRIu64 " is %#x, not %#x", m, off + i,
				    mrs[m].buf[off + i], (unsigned int)byte);
	printf("mr %d [%" PRIu64 ", +%" PRIu64 ") all %#x\n", m, off, len, (unsigned int)byte);
	return 0;
}

/* --- tag matching: list operations on a TM SRQ (ibv_post_srq_ops) --- */

/*
 * tag add <srq> <mr> <off> <len> tag <t> [mask <m>] [id <wr_id>] [recv_id <id>]
 * tag del <srq> <handle> [id <wr_id>] ; tag sync <srq> [id <wr_id>]
 * Each is signaled: its completion (TM_ADD, TM_DEL, TM_SYNC) arrives on the
 * SRQ's CQ (poll cq). The unexpected count an operation carries is what
 * the SRQ's CQ reported so far: none here (the console counts no messages).
 */
static int
cmd_tag(int argc, char **argv)
{
	static const char syntax[] =
		"tag add <srq> <mr> <off> <len> tag <t> [mask <m>] [id <wr_id>] [recv_id <id>]\n"
		"       tag del <srq> <handle> [id <wr_id>] | tag sync <srq> [id <wr_id>]";
	struct ibv_ops_wr op = { .flags = IBV_OPS_SIGNALED }, *bad = NULL;
	const char *what = argc > 1 ? argv[1] : "";
	struct ibv_sge sge;
	uint64_t off, len, h;
	int q, m, ret, from;

	q = index_of(argc > 2 ? argv[2] : NULL, "srq", srq_set);
	if (q < 0)
		return usage(syntax);
	if (srqs[q].tm_cq < 0)
		return fail(EINVAL, "srq %d is not a tag-matching SRQ", q);
	if (strcmp(what, "add") == 0) {
		m = argc > 3 ? index_of(argv[3], "mr", mr_set) : -1;
		if (m < 0 || argc < 6 || !num(argv[4], &off) || !num(argv[5], &len) ||
		    !opt(argc, argv, 6, "tag") || off + len > mrs[m].len)
			return usage(syntax);
		sge.addr = (uintptr_t)mrs[m].buf + off;
		sge.length = (uint32_t)len;
		sge.lkey = mrs[m].mr->lkey;
		op.opcode = IBV_WR_TAG_ADD;
		op.tm.add.recv_wr_id = opt_num(argc, argv, 6, "recv_id", 1);
		op.tm.add.sg_list = &sge;
		op.tm.add.num_sge = 1;
		op.tm.add.tag = opt_num(argc, argv, 6, "tag", 0);
		op.tm.add.mask = opt_num(argc, argv, 6, "mask", UINT64_MAX);
		from = 6;
	} else if (strcmp(what, "del") == 0) {
		if (argc < 4 || !num(argv[3], &h))
			return usage(syntax);
		op.opcode = IBV_WR_TAG_DEL;
		op.tm.handle = (uint32_t)h;
		from = 4;
	} else if (strcmp(what, "sync") == 0) {
		op.opcode = IBV_WR_TAG_SYNC;
		op.flags |= IBV_OPS_TM_SYNC;
		from = 3;
	} else {
		return usage(syntax);
	}
	op.wr_id = opt_num(argc, argv, from, "id", 1);
	ret = ibv_post_srq_ops(srqs[q].srq, &op, &bad);
	if (ret)
		return fail(ret, "ibv_post_srq_ops(tag %s)", what);
	if (op.opcode == IBV_WR_TAG_ADD)
		printf("tag add posted: handle %u, tag %#" PRIx64 " mask %#" PRIx64 "\n",
		       op.tm.handle, op.tm.add.tag, op.tm.add.mask);
	else
		printf("tag %s posted\n", what);
	return 0;
}

/* --- capture: a device's frames to a pcapng file, started and stopped at run time --- */

/* capture start <dev> <file> ; capture stop <dev> */
static int
cmd_capture(int argc, char **argv)
{
	static const char syntax[] = "capture start <dev> <file> | capture stop <dev>";
	const char *what = argc > 1 ? argv[1] : "";
	int d = -1, ret;

	/* a device by name or index */
	for (int k = 0; k < nb_devs && argc > 2; k++)
		if (strcmp(argv[2], devs[k].name) == 0)
			d = k;
	if (d < 0)
		d = index_of(argc > 2 ? argv[2] : NULL, "device", dev_set);
	if (d < 0)
		return usage(syntax);
	if (strcmp(what, "start") == 0 && argc > 3) {
		ret = droce_dev_capture(devs[d].name, argv[3]);
		if (ret)
			return fail(-ret, "capture start %s %s", devs[d].name, argv[3]);
		printf("%s: capturing to %s\n", devs[d].name, argv[3]);
		return 0;
	}
	if (strcmp(what, "stop") == 0) {
		ret = droce_dev_capture(devs[d].name, NULL);
		if (ret)
			return fail(-ret, "capture stop %s", devs[d].name);
		printf("%s: capture stopped, file closed\n", devs[d].name);
		return 0;
	}
	return usage(syntax);
}

/* --- a net_impair port's faults and link, at run time (rte_pmd_impair.h) --- */

/*
 * impair <port> set <key>=<v>[,<key>=<v>...] (drop, dup, reorder, corrupt,
 * delay_us) ; impair <port> link up|down. <port>: an ethdev name
 * (net_impair0) or a port id.
 */
static int
cmd_impair(int argc, char **argv)
{
	static const char syntax[] =
		"impair <port> set drop=<p>,dup=<p>,reorder=<p>,corrupt=<p>,delay_us=<us> | "
		"impair <port> link up|down";
	uint16_t port;
	uint64_t v;
	int ret;

	if (argc < 4)
		return usage(syntax);
	if (num(argv[1], &v) && v < RTE_MAX_ETHPORTS)
		port = (uint16_t)v;
	else if (rte_eth_dev_get_port_by_name(argv[1], &port) != 0)
		return fail(ENODEV, "impair: no port %s", argv[1]);
	if (strcmp(argv[2], "set") == 0) {
		ret = droce_impair_fault_set(port, argv[3]);
		if (ret)
			return fail(-ret, "droce_impair_fault_set(%s, %s)", argv[1], argv[3]);
		printf("%s: %s\n", argv[1], argv[3]);
		return 0;
	}
	if (strcmp(argv[2], "link") == 0 &&
	    (strcmp(argv[3], "up") == 0 || strcmp(argv[3], "down") == 0)) {
		ret = droce_impair_link_set(port, strcmp(argv[3], "up") == 0);
		if (ret)
			return fail(-ret, "droce_impair_link_set(%s)", argv[1]);
		printf("%s: link %s\n", argv[1], argv[3]);
		return 0;
	}
	return usage(syntax);
}

/* --- traffic: a background SEND stream between two connected QPs --- */

static struct {
	pthread_t thr;
	bool on;
	volatile bool stop;
	int qa, qb, ma, mb;
	uint32_t size, depth;
	uint64_t msgs, errors;
	struct timespec t0;
} tr;

static void *
traffic_main(void *arg)
{
	struct ibv_cq *scq = cqs[qps[tr.qa].scq].cq, *rcq = cqs[qps[tr.qb].rcq].cq;
	struct ibv_sge ssge = { (uintptr_t)mrs[tr.ma].buf, tr.size, mrs[tr.ma].mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)mrs[tr.mb].buf, tr.size, mrs[tr.mb].mr->lkey };
	struct ibv_send_wr swr = { .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[32];
	uint32_t in_flight = 0, recvs = 0;

	RTE_SET_USED(arg);
	while (!tr.stop) {
		int n;

		while (recvs < tr.depth && ibv_post_recv(qps[tr.qb].qp, &rwr, &rbad) == 0)
			recvs++;
		while (in_flight < tr.depth && recvs > in_flight &&
		       ibv_post_send(qps[tr.qa].qp, &swr, &sbad) == 0)
			in_flight++;
		n = ibv_poll_cq(scq, 32, wc);
		for (int i = 0; i < n; i++) {
			in_flight--;
			if (wc[i].status != IBV_WC_SUCCESS)
				__atomic_fetch_add(&tr.errors, 1, __ATOMIC_RELAXED);
		}
		n = ibv_poll_cq(rcq, 32, wc);
		for (int i = 0; i < n; i++) {
			recvs--;
			if (wc[i].status == IBV_WC_SUCCESS)
				__atomic_fetch_add(&tr.msgs, 1, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&tr.errors, 1, __ATOMIC_RELAXED);
		}
		if (tr.errors)
			break;
	}
	/*
	 * Let what is in flight land, and use up the receives posted ahead of
	 * their SENDs (the loop may stop between the two): the QPs stay usable,
	 * with nothing of the stream left posted
	 */
	while (!tr.errors && recvs > in_flight && ibv_post_send(qps[tr.qa].qp, &swr, &sbad) == 0)
		in_flight++;
	for (int k = 0; k < 2000 && (in_flight > 0 || recvs > 0); k++) {
		int n = ibv_poll_cq(scq, 32, wc);

		in_flight -= (uint32_t)RTE_MAX(n, 0);
		n = ibv_poll_cq(rcq, 32, wc);
		for (int i = 0; i < n; i++)
			recvs--, __atomic_fetch_add(&tr.msgs, 1, __ATOMIC_RELAXED);
		usleep(500);
	}
	return NULL;
}

static double
traffic_secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - tr.t0.tv_sec) + (double)(t.tv_nsec - tr.t0.tv_nsec) * 1e-9;
}

static int
cmd_traffic_show(void)
{
	double s = traffic_secs();
	uint64_t m = __atomic_load_n(&tr.msgs, __ATOMIC_RELAXED);

	if (!tr.on) {
		printf("traffic: not running\n");
		return 0;
	}
	printf("traffic qp %d -> qp %d, %u B, depth %u: %" PRIu64 " messages in %.2f s, "
	       "%.3f M msg/s, %.3f Gbit/s, %" PRIu64 " errors\n", tr.qa, tr.qb, tr.size, tr.depth,
	       m, s, (double)m / s / 1e6, (double)m * tr.size * 8 / s / 1e9,
	       __atomic_load_n(&tr.errors, __ATOMIC_RELAXED));
	return 0;
}

/*
 * traffic start <qpA> <qpB> <mrA> <mrB> [size <B>] [depth <n>] ; traffic show
 * ; traffic stop. SENDs from qpA to qpB (connected, each with its own CQs
 * nobody else polls meanwhile) from a thread of the console.
 */
static int
cmd_traffic(int argc, char **argv)
{
	static const char syntax[] =
		"traffic start <qpA> <qpB> <mrA> <mrB> [size <B>] [depth <n>] | traffic show | traffic stop";
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "show") == 0)
		return cmd_traffic_show();
	if (strcmp(what, "stop") == 0) {
		if (!tr.on)
			return fail(EINVAL, "traffic stop: not running");
		tr.stop = true;
		pthread_join(tr.thr, NULL);
		cmd_traffic_show();
		tr.on = false;
		return tr.errors ? fail(EIO, "traffic: %" PRIu64 " error completions", tr.errors) : 0;
	}
	if (strcmp(what, "start") != 0 || argc < 6)
		return usage(syntax);
	if (tr.on)
		return fail(EBUSY, "traffic start: already running");
	tr.qa = index_of(argv[2], "qp", qp_set);
	tr.qb = index_of(argv[3], "qp", qp_set);
	tr.ma = index_of(argv[4], "mr", mr_set);
	tr.mb = index_of(argv[5], "mr", mr_set);
	if (tr.qa < 0 || tr.qb < 0 || tr.ma < 0 || tr.mb < 0)
		return usage(syntax);
	tr.size = (uint32_t)opt_num(argc, argv, 6, "size", 64);
	tr.depth = (uint32_t)opt_num(argc, argv, 6, "depth", 16);
	if (tr.size > mrs[tr.ma].len || tr.size > mrs[tr.mb].len || tr.depth == 0 ||
	    qps[tr.qb].srq >= 0 || qps[tr.qa].type == IBV_QPT_UD)
		return fail(EINVAL, "traffic start: size within both MRs, depth > 0, "
			    "connected RC/UC QPs with their own receive queue");
	tr.msgs = tr.errors = 0;
	tr.stop = false;
	clock_gettime(CLOCK_MONOTONIC, &tr.t0);
	if (pthread_create(&tr.thr, NULL, traffic_main, NULL) != 0)
		return fail(EAGAIN, "traffic start");
	tr.on = true;
	printf("traffic qp %d -> qp %d started\n", tr.qa, tr.qb);
	return 0;
}

/* --- dispatch --- */

static bool quit;

static int
cmd_help(int argc, char **argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	printf("devices: ");
	for (int d = 0; d < nb_devs; d++)
		printf("%d=%s ", d, devs[d].name);
	printf("\n"
	       "show device|port|objects|stats [dev [all]]|qp <n> [all]|srq <n>|cq <n>|neigh [dev]|traffic\n"
	       "create pd <dev> | cq <dev> [<entries>] | srq <pd> [wr <n>] [sge <n>] [tm <tags> cq <cq>]\n"
	       "create qp rc|uc|ud <pd> <cq> [rcq <cq>] [srq <n>] [wr <n>] [sge <n>] [inline <n>]\n"
	       "create mr <pd> <bytes> [access local|all] | ah <pd> <ipv4>\n"
	       "destroy pd|cq|srq|qp|mr|ah <n>\n"
	       "modify qp <n> reset|init|err|sqd|rts\n"
	       "connect qp <a> <b> | connect qp <a> remote <ipv4> <qpn>\n"
	       "post send|write|read|fadd|cswap <qp> <mr> <off> <len> [rmr <mr> roff <off>]\n"
	       "     [ah <ah> rqpn <qpn>|qp<n>] [imm <v>] [add <v>] [cmp <v> swap <v>] [id <wr_id>]\n"
	       "     [count <n>] [unsignaled] [inline]\n"
	       "post recv <qp> <mr> <off> <len> [id <wr_id>] [count <n>]\n"
	       "post srq_recv <srq> <mr> <off> <len> [id <wr_id>] [count <n>]\n"
	       "poll cq <n> [max <m>] [wait <ms>] [expect <count> [<status>|flush]]\n"
	       "fill|check mr <m> <off> <len> <byte>\n"
	       "check qp|dev <n> <counter> ==|!=|<|<=|>|>= <value>\n"
	       "traffic start <qpA> <qpB> <mrA> <mrB> [size <B>] [depth <n>] | show | stop\n"
	       "tag add <srq> <mr> <off> <len> tag <t> [mask <m>] [id <wr_id>] [recv_id <id>]\n"
	       "tag del <srq> <handle> [id <wr_id>] | tag sync <srq> [id <wr_id>]\n"
	       "capture start <dev> <file> | capture stop <dev>\n"
	       "impair <port> set drop=<p>,dup=<p>,reorder=<p>,corrupt=<p>,delay_us=<us> | link up|down\n"
	       "sleep <ms>\n"
	       "expect ok|<ERRNO>   (in a command file: the previous command's outcome)\n"
	       "quit\n");
	return 0;
}

/* sleep <ms>: let time pass (a background stream runs meanwhile) */
static int
cmd_sleep(int argc, char **argv)
{
	uint64_t ms;

	if (argc < 2 || !num(argv[1], &ms) || ms > 600000)
		return usage("sleep <ms>");
	usleep((useconds_t)(ms * 1000));
	return 0;
}

static int
cmd_quit(int argc, char **argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	quit = true;
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "help", cmd_help }, { "quit", cmd_quit }, { "show", cmd_show },
	{ "create", cmd_create }, { "destroy", cmd_destroy }, { "modify", cmd_modify },
	{ "connect", cmd_connect }, { "post", cmd_post }, { "poll", cmd_poll },
	{ "fill", cmd_mem }, { "check", cmd_mem }, { "traffic", cmd_traffic },
	{ "sleep", cmd_sleep }, { "tag", cmd_tag }, { "capture", cmd_capture },
	{ "impair", cmd_impair },
};

/* Run one command line: 0, or the errno value of its failure. */
static int
run_line(char *line)
{
	char *argv[MAX_ARGS], *save = NULL, *tok;
	int argc = 0;

	for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL && argc < MAX_ARGS;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (tok[0] == '#')
			break;
		argv[argc++] = tok;
	}
	if (argc == 0)
		return 0;
	for (size_t i = 0; i < RTE_DIM(commands); i++)
		if (strcmp(argv[0], commands[i].name) == 0)
			return commands[i].fn(argc, argv);
	printf("unknown command \"%s\" (help lists them)\n", argv[0]);
	return EINVAL;
}

/* -f FILE: each line; a failure not named by the next "expect" line ends the run. */
static int
run_file(const char *path, bool echo)
{
	char line[1024], copy[1024];
	int pending = 0, lineno = 0, pending_line = 0;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "droce-testpmd: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (!quit && fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (strncmp(p, "expect ", 7) == 0) {
			char *w = strtok(p + 7, " \t\r\n");
			int want = w == NULL ? -1 : strcmp(w, "ok") == 0 ? 0 : errno_by_name(w);

			if (echo)
				printf("testpmd> expect %s\n", w ? w : "");
			if (want < 0 || want != pending) {
				printf("%s:%d: expected %s, the command of line %d gave %s\n", path,
				       lineno, w ? w : "(nothing)", pending_line,
				       pending ? errno_name(pending) : "ok");
				return 1;
			}
			pending = 0;
			continue;
		}
		if (pending) {
			printf("%s:%d: failed with %s\n", path, pending_line, errno_name(pending));
			return 1;
		}
		snprintf(copy, sizeof(copy), "%s", p);
		if (echo)
			printf("testpmd> %s%s", copy, copy[strlen(copy) - 1] == '\n' ? "" : "\n");
		pending = run_line(p);
		pending_line = lineno;
		fflush(stdout);
	}
	if (f != stdin)
		fclose(f);
	if (pending) {
		printf("%s:%d: failed with %s\n", path, pending_line, errno_name(pending));
		return 1;
	}
	return 0;
}

/* --- the interactive console (DPDK cmdline): one instruction per command word --- */

struct cmd_line_result {
	cmdline_fixed_string_t word;
	cmdline_multi_string_t rest;
};

static void
cmd_line_parsed(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_line_result *r = parsed;
	char line[sizeof(r->word) + sizeof(r->rest) + 2];

	RTE_SET_USED(data);
	snprintf(line, sizeof(line), "%s %s", r->word, r->rest);
	run_line(line);
	fflush(stdout);
	if (quit)
		cmdline_quit(cl);
}

static cmdline_parse_token_string_t tok_word =
	TOKEN_STRING_INITIALIZER(struct cmd_line_result, word,
				 "help#quit#show#create#destroy#modify#connect#post#poll#fill#check#traffic#sleep#"
				 "tag#capture#impair");
static cmdline_parse_token_string_t tok_rest =
	TOKEN_STRING_INITIALIZER(struct cmd_line_result, rest, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t inst_line = {
	.f = cmd_line_parsed,
	.data = NULL,
	.help_str = "a droce-testpmd command (help lists them)",
	.tokens = { (void *)&tok_word, (void *)&tok_rest, NULL },
};

/* a command word alone (help, quit, show with no argument...) */
static void
cmd_word_parsed(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_line_result *r = parsed;

	RTE_SET_USED(data);
	run_line(r->word);
	fflush(stdout);
	if (quit)
		cmdline_quit(cl);
}

static cmdline_parse_inst_t inst_word = {
	.f = cmd_word_parsed,
	.data = NULL,
	.help_str = "a droce-testpmd command (help lists them)",
	.tokens = { (void *)&tok_word, NULL },
};

static cmdline_parse_ctx_t main_ctx[] = { &inst_word, &inst_line, NULL };

static void
interact(void)
{
	struct cmdline *cl = cmdline_stdin_new(main_ctx, "testpmd> ");

	if (cl == NULL) {
		fprintf(stderr, "droce-testpmd: cannot open the console\n");
		return;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
}

/* --- set-up --- */

static char eal_prefix[64];

static void
cleanup(void)
{
	if (tr.on) {
		tr.stop = true;
		pthread_join(tr.thr, NULL);
	}
	for (int i = 0; i < MAX_OBJ; i++)
		if (qps[i].qp)
			ibv_destroy_qp(qps[i].qp);
	for (int i = 0; i < MAX_OBJ; i++) {
		if (srqs[i].srq)
			ibv_destroy_srq(srqs[i].srq);
		if (ahs[i].ah)
			ibv_destroy_ah(ahs[i].ah);
		if (mrs[i].mr) {
			ibv_dereg_mr(mrs[i].mr);
			free(mrs[i].buf);
		}
	}
	for (int i = 0; i < MAX_OBJ; i++)
		if (cqs[i].cq)
			ibv_destroy_cq(cqs[i].cq);
	for (int i = 0; i < MAX_OBJ; i++)
		if (pds[i].pd)
			ibv_dealloc_pd(pds[i].pd);
	for (int d = 0; d < nb_devs; d++)
		ibv_close_device(devs[d].ctx);
	if (dev_list)
		ibv_free_device_list(dev_list);
	if (rte_eal_process_type() == RTE_PROC_PRIMARY)
		rte_pdump_uninit();
}

/*
 * droce0 (10.0.0.1) and droce1 (10.0.0.2) on a net_ring pair; with -I,
 * each port wrapped in a net_impair that passes all until told otherwise.
 * The ports stay unowned (own=0): nothing else in this process iterates
 * ports, and dpdk-dumpcap sees only ports nobody owns.
 */
static int
embedded_default_create(bool impair, bool own_eal)
{
	if (droce_ring_pair_create("net_ring_a", "net_ring_b") ||
	    (impair && (droce_dev_create("net_impair0", "ethdev=net_ring_a,dir=both,seed=1") ||
			droce_dev_create("net_impair1", "ethdev=net_ring_b,dir=both,seed=2"))) ||
	    droce_dev_create("droce0", impair ? "ethdev=net_impair0,ip=10.0.0.1,mtu=4200,own=0" :
			     "ethdev=net_ring_a,ip=10.0.0.1,mtu=4200,own=0") ||
	    droce_dev_create("droce1", impair ? "ethdev=net_impair1,ip=10.0.0.2,mtu=4200,own=0" :
			     "ethdev=net_ring_b,ip=10.0.0.2,mtu=4200,own=0")) {
		fprintf(stderr, "droce-testpmd: cannot create the embedded default\n");
		return -1;
	}
	printf("embedded default: droce0 (10.0.0.1) <-> %snet_ring pair%s <-> droce1 (10.0.0.2), "
	       "%s progress\n", impair ? "net_impair0, " : "", impair ? ", net_impair1" : "",
	       own_eal ? "inline" : "lcore=auto");
	return 0;
}

int
main(int argc, char **argv)
{
	const char *file = NULL;
	bool echo = true, embedded = true, impair = false;
	char *dflt[12];
	int nd = 0, opt_c, n, ret;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			embedded = false;
	/* stdout is the console's: DPDK's and droce's logs go to stderr */
	rte_openlog_stream(stderr);
	if (!embedded) {
		ret = rte_eal_init(argc, argv);
		if (ret < 0) {
			fprintf(stderr, "droce-testpmd: EAL init failed\n");
			return 1;
		}
		droce_eal_files_remove_at_exit();
		argc -= ret;
		argv += ret;
	}
	optind = 1;
	while ((opt_c = getopt(argc, argv, "f:qIh")) != -1) {
		switch (opt_c) {
		case 'f': file = optarg; break;
		case 'q': echo = false; break;
		case 'I': impair = true; break;
		default:
			fprintf(stderr, "usage: droce-testpmd [EAL args --] [-f FILE] [-q] [-I]\n");
			return opt_c == 'h' ? 0 : 1;
		}
	}
	if (embedded) {
		snprintf(eal_prefix, sizeof(eal_prefix), "--file-prefix=droce-testpmd-%d", getpid());
		dflt[nd++] = argv[0];
		dflt[nd++] = "--no-huge";
		dflt[nd++] = "-m";
		dflt[nd++] = "512";
		dflt[nd++] = "--no-pci";
		dflt[nd++] = "--no-telemetry";
		dflt[nd++] = eal_prefix;
		dflt[nd++] = "--log-level=lib.eal:error";
		dflt[nd++] = "-l";
		dflt[nd++] = "0";
		dflt[nd] = NULL;
		if (rte_eal_init(nd, dflt) < 0) {
			fprintf(stderr, "droce-testpmd: EAL init failed\n");
			return 1;
		}
		droce_eal_files_remove_at_exit();
	}
	/*
	 * EAL arguments that create no port get the embedded default's
	 * devices: that is how they run on hugepages with a --file-prefix of
	 * the user's, a primary dpdk-dumpcap can attach to
	 */
	if ((embedded || rte_eth_dev_count_total() == 0) &&
	    embedded_default_create(impair, embedded) != 0)
		return 1;
	/*
	 * the rte_pdump server: dpdk-dumpcap (a secondary process of this
	 * one, --file-prefix) captures the ports' frames through it
	 */
	if (rte_eal_process_type() == RTE_PROC_PRIMARY && rte_pdump_init() != 0)
		fprintf(stderr, "droce-testpmd: no rte_pdump server (%s): dpdk-dumpcap cannot attach\n",
			rte_strerror(rte_errno));
	dev_list = ibv_get_device_list(&n);
	if (dev_list == NULL || n == 0) {
		fprintf(stderr, "droce-testpmd: no droce device (a --vdev=droce0,ethdev=...,ip=... ?)\n");
		return 1;
	}
	for (int d = 0; d < n && d < (int)RTE_DIM(devs); d++) {
		devs[d].ctx = ibv_open_device(dev_list[d]);
		devs[d].name = ibv_get_device_name(dev_list[d]);
		if (devs[d].ctx == NULL) {
			fprintf(stderr, "droce-testpmd: cannot open %s\n", devs[d].name);
			return 1;
		}
		nb_devs++;
	}
	if (file != NULL) {
		ret = run_file(file, echo);
	} else {
		cmd_help(0, NULL);
		interact();
		ret = 0;
	}
	cleanup();
	return ret;
}
