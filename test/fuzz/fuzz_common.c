/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive-path fuzzing rig shared by fuzz_rx and fuzz_tm (see
 * fuzz_common.h for what it guarantees). Records of an input:
 *
 *   type & 7   body
 *   0 RAW      a whole Ethernet frame, injected as it is
 *   1, 7 V4    fix header (8 bytes), then BTH + extension headers + payload:
 *              the harness writes Ethernet, IPv4, UDP/4791, lengths, the IP
 *              checksum, the pad and the ICRC around them, and what the fix
 *              flags ask for (QPN of a live QP, a PSN near the one it
 *              expects, the address and key of a registered MR, ...)
 *   2 V6       the same in IPv6 (droce0 has no IPv6 receive path: dropped)
 *   3 ARP      an ARP frame built from flags, then XORed with the rest
 *   4 CTRL     a harness action (post a WR, force a QP to ERR, ...)
 *   5 CHAIN    as V4, first byte choosing where the frame is cut into a
 *              chain of mbufs
 *   6 POLL     time passes (RNR waits end, see fz_poll), then more engine
 *              iterations (1 + body[0] % 8)
 *   type & 8   burst: the frame waits for the next one (same rx burst)
 *
 * Fix header: flags (le16, FIX_*), QP selector, PSN delta (int8), MR
 * selector (index in bits 0-3, stale key bit 4, from the end bit 5, offset
 * scale 1/8/256/4096 in bits 6-7), offset (le16), RETH length multiplier of
 * the path MTU (also given to the payload hook).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce.h"
#include "eal_dir.h"
#include "frame.h"
#include "fuzz_common.h"

struct fz_env fz;

enum {
	REC_RAW, REC_V4, REC_V6, REC_ARP, REC_CTRL, REC_CHAIN, REC_POLL, REC_V4B,
};
#define REC_BURST	0x08

enum {
	FIX_QPN		= 1 << 0,	/* BTH dest QP := the selected QP */
	FIX_PSN		= 1 << 1,	/* BTH PSN := base + delta */
	FIX_UNA		= 1 << 2,	/* base: its requester's oldest unacked PSN, else its expected PSN */
	FIX_KEY		= 1 << 3,	/* RETH / AtomicETH address and key from the MR selector */
	FIX_QKEY	= 1 << 4,	/* DETH Q_Key := the QP's */
	FIX_MTU		= 1 << 5,	/* payload exactly the path MTU */
	FIX_PAD		= 1 << 6,	/* pad count and bytes so the payload ends aligned */
	FIX_BTH		= 1 << 7,	/* TVer 0, P_Key 0xffff */
	FIX_BADICRC	= 1 << 8,	/* a wrong ICRC */
	FIX_SRC		= 1 << 9,	/* from 10.0.0.3, a host droce0 does not know */
	FIX_LEN		= 1 << 10,	/* RETH length := multiplier * MTU + payload */
	FIX_HOOK	= 1 << 11,	/* the harness rewrites the payload (TMH) */
	FIX_ACKREQ	= 1 << 12,	/* AckReq set */
};
#define FIX_HDR_LEN	8

#define PAGE		4096u
#define NB_SLOTS	64		/* injected frames in flight (guarded buffers) */
#define SLOT_DATA	(3 * PAGE)	/* a frame ends where the slot's guard page starts */
#define SEND_TAG	0xa5ull
#define RECV_TAG	0x5aull

static uint8_t *slot_mem;
static bool slot_busy[NB_SLOTS];
static struct rte_mbuf_ext_shared_info slot_sh[NB_SLOTS];
static uint64_t injected;
static unsigned int pending;		/* injected, not yet polled */
static uint64_t rx_base;		/* droce0's rx_pkts before the first injection */

/* ------------------------------------------------------------------ */
/* memory */

static size_t
page_up(size_t n)
{
	return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

uint8_t *
fz_guarded(size_t len, int prot)
{
	size_t body = page_up(len ? len : 1);
	uint8_t *p = mmap(NULL, body + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	FZ_CHECK(p != MAP_FAILED);
	if (prot != PROT_NONE)
		FZ_CHECK(mprotect(p + PAGE, body, prot) == 0);
	return p + PAGE;
}

struct fz_mr *
fz_mr_add(const char *name, size_t len, int access, int prot, struct ibv_pd *pd, uint64_t iova)
{
	struct fz_mr *m = calloc(1, sizeof(*m));

	FZ_CHECK(m != NULL);
	m->name = name;
	m->len = len;
	m->access = access;
	m->prot = prot;
	m->pd = pd;
	m->buf = fz_guarded(len, prot);
	m->iova = iova ? iova : (uintptr_t)m->buf;
	m->mr = ibv_reg_mr_iova(pd, m->buf, len, m->iova, access);
	if (m->mr == NULL)
		fprintf(stderr, "fuzz: ibv_reg_mr_iova(%s): %s\n", name, strerror(errno));
	FZ_CHECK(m->mr != NULL);
	m->key = m->stale_key = m->mr->rkey;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && (prot & PROT_WRITE)) {
		m->shadow = calloc(1, len);
		FZ_CHECK(m->shadow != NULL);
	}
	fz_mr_target(m);
	return m;
}

void
fz_mr_rereg(struct fz_mr *m)
{
	rte_spinlock_unlock(&fz.dev->inline_lock);	/* dereg waits for the engine */
	FZ_CHECK(ibv_dereg_mr(m->mr) == 0);
	rte_spinlock_lock(&fz.dev->inline_lock);
	m->mr = ibv_reg_mr_iova(m->pd, m->buf, m->len, m->iova, m->access);
	FZ_CHECK(m->mr != NULL);
	m->stale_key = m->key;
	m->key = m->mr->rkey;
}

/* Receive buffers: assorted lengths (a UD MTU and its GRH, short, long, tiny). */
const uint32_t fz_recv_lens[FZ_MAX_RX] = {
	FZ_UD_MTU + ROCE_GRH_LEN, FZ_UD_MTU + ROCE_GRH_LEN, 1024, 256, 8192,
	FZ_UD_MTU + ROCE_GRH_LEN, 60, 2048,
};

/*
 * @n buffers of @lens bytes, each between PROT_NONE pages and ending where
 * its guard begins; one MR (local write) over the whole region.
 */
void
fz_rbuf_init(struct fz_rbuf *rb, int n, const uint32_t *lens)
{
	size_t total = PAGE;
	uint8_t *p;

	FZ_CHECK(n <= FZ_MAX_RX);
	memset(rb, 0, sizeof(*rb));
	rb->n = n;
	for (int i = 0; i < n; i++) {
		rb->len[i] = lens[i];
		rb->nsge[i] = i % 3 == 0 && rb->len[i] > 64 ? 2 : 1;
		total += page_up(rb->len[i]) + PAGE;
	}
	p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FZ_CHECK(p != MAP_FAILED);
	rb->mr = calloc(1, sizeof(*rb->mr));
	FZ_CHECK(rb->mr != NULL);
	rb->mr->name = "rbuf";
	rb->mr->buf = p;
	rb->mr->len = total;
	rb->mr->iova = (uintptr_t)p;
	rb->mr->access = IBV_ACCESS_LOCAL_WRITE;
	rb->mr->prot = PROT_READ | PROT_WRITE;
	rb->mr->pd = fz.pd;
	p += PAGE;
	for (int i = 0; i < n; i++) {
		size_t body = page_up(rb->len[i]);

		FZ_CHECK(mprotect(p, body, PROT_READ | PROT_WRITE) == 0);
		rb->buf[i] = p + body - rb->len[i];
		p += body + PAGE;
	}
	rb->mr->mr = ibv_reg_mr(fz.pd, rb->mr->buf, total, IBV_ACCESS_LOCAL_WRITE);
	FZ_CHECK(rb->mr->mr != NULL);
	rb->mr->key = rb->mr->stale_key = rb->mr->mr->lkey;
}

void
fz_mr_target(struct fz_mr *m)
{
	FZ_CHECK(fz.nmr < FZ_MAX_MR);
	fz.mrs[fz.nmr++] = m;
}

static uint64_t
recv_wr_id(int owner, int slot)
{
	return RECV_TAG << 56 | (uint64_t)owner << 16 | (uint64_t)slot;
}

/* Fill @wr for buffer @i of @rb (1 or 2 SGEs). */
static void
recv_wr(struct fz_rbuf *rb, int owner, int i, struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
	uint32_t len = rb->len[i];

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = recv_wr_id(owner, i);
	wr->sg_list = sge;
	wr->num_sge = rb->nsge[i];
	sge[0] = (struct ibv_sge){ (uintptr_t)rb->buf[i], rb->nsge[i] == 2 ? len - 64 : len,
				   rb->mr->key };
	sge[1] = (struct ibv_sge){ (uintptr_t)rb->buf[i] + len - 64, 64, rb->mr->key };
}

static void
rbuf_post_qp(struct fz_qp *q)
{
	for (int i = 0; i < q->rb.n; i++) {
		struct ibv_recv_wr wr, *bad;
		struct ibv_sge sge[2];

		if (q->rb.posted[i])
			continue;
		recv_wr(&q->rb, q->idx, i, &wr, sge);
		FZ_CHECK(ibv_post_recv(q->qp, &wr, &bad) == 0);
		q->rb.posted[i] = true;
	}
}

static void
rbuf_post_srq(struct fz_srq *s)
{
	for (int i = 0; i < s->rb.n; i++) {
		struct ibv_recv_wr wr, *bad;
		struct ibv_sge sge[2];

		if (s->rb.posted[i])
			continue;
		recv_wr(&s->rb, 0x80 | s->id, i, &wr, sge);
		FZ_CHECK(ibv_post_srq_recv(s->srq, &wr, &bad) == 0);
		s->rb.posted[i] = true;
	}
}

struct fz_srq *
fz_srq_add(int n, struct ibv_srq *tm_srq)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = FZ_MAX_RX, .max_sge = 2 } };
	struct fz_srq *s = calloc(1, sizeof(*s));
	uint32_t lens[FZ_MAX_RX];

	FZ_CHECK(s != NULL && fz.nsrq < (int)RTE_DIM(fz.srqs) && n <= FZ_MAX_RX);
	s->id = fz.nsrq;
	/*
	 * All alike: an SRQ takes its WQEs back in the order they complete,
	 * and which one the next message gets must not depend on the inputs
	 * before it.
	 */
	for (int i = 0; i < n; i++)
		lens[i] = FZ_UD_MTU + ROCE_GRH_LEN;
	fz_rbuf_init(&s->rb, n, lens);
	for (int i = 0; i < n; i++)
		s->rb.nsge[i] = tm_srq != NULL ? 1 : 2;	/* a TM SRQ takes one SGE */
	if (tm_srq != NULL) {
		s->srq = tm_srq;
		s->tm = true;
	} else {
		s->srq = ibv_create_srq(fz.pd, &a);
	}
	FZ_CHECK(s->srq != NULL);
	rbuf_post_srq(s);
	fz.srqs[fz.nsrq++] = s;
	return s;
}

/* ------------------------------------------------------------------ */
/* EAL and ports */

static int
eal_init(const char *argv0)
{
	static char prefix[64], lcores[32];
	static char *args[] = {
		NULL, prefix, "--no-huge", "-m", "256", "--no-pci", "--no-telemetry", "--no-shconf",
		lcores, "--log-level=lib.eal:crit", "--log-level=pmd.rdma.roce:crit",
		"--log-level=lib.verbs:crit", "--log-level=pmd.net.ring:crit", NULL,
	};
	const char *cpu = getenv("DROCE_FUZZ_CPU");

	/* no shared config; a prefix of its own, its directory removed at exit */
	snprintf(prefix, sizeof(prefix), "--file-prefix=fz%d", (int)getpid());
	/*
	 * lcore 0 on CPU 0, or on DROCE_FUZZ_CPU: devtools/fuzz --parallel runs
	 * harnesses side by side, each on a CPU of its own (the EAL pins its
	 * main lcore there)
	 */
	snprintf(lcores, sizeof(lcores), "--lcores=0@%d", cpu != NULL && *cpu ? atoi(cpu) : 0);
	args[0] = (char *)(uintptr_t)argv0;
	/* EAL keeps pointers into argv: static storage */
	if (rte_eal_init((int)RTE_DIM(args) - 1, args) < 0)
		return -1;
	eal_dir_remove_at_exit();
	return 0;
}

static void
raw_port_setup(void)
{
	struct rte_eth_conf conf = { 0 };

	FZ_CHECK(rte_eth_dev_get_port_by_name("net_ring_fz1", &fz.raw_port) == 0);
	fz.pool = rte_pktmbuf_pool_create("fz_pool", 2047, 0, 0,
					  RTE_PKTMBUF_HEADROOM + FZ_FRAME_MAX + 64, rte_socket_id());
	FZ_CHECK(fz.pool != NULL);
	FZ_CHECK(rte_eth_dev_configure(fz.raw_port, 1, 1, &conf) == 0);
	FZ_CHECK(rte_eth_rx_queue_setup(fz.raw_port, 0, 1024, rte_socket_id(), NULL, fz.pool) == 0);
	FZ_CHECK(rte_eth_tx_queue_setup(fz.raw_port, 0, 1024, rte_socket_id(), NULL) == 0);
	FZ_CHECK(rte_eth_dev_start(fz.raw_port) == 0);
	slot_mem = mmap(NULL, NB_SLOTS * (SLOT_DATA + PAGE), PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FZ_CHECK(slot_mem != MAP_FAILED);
	for (int i = 0; i < NB_SLOTS; i++)
		FZ_CHECK(mprotect(slot_mem + i * (SLOT_DATA + PAGE), SLOT_DATA,
				  PROT_READ | PROT_WRITE) == 0);
}

void
fz_setup(const char *argv0)
{
	struct ibv_device **devs;
	struct ibv_ah_attr ah = { 0 };
	int ndev;

	fz.verbose = getenv("DROCE_FUZZ_VERBOSE") != NULL;
	if (eal_init(argv0) < 0) {
		fprintf(stderr, "fuzz: rte_eal_init failed\n");
		exit(1);
	}
	fz.dev_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	fz.peer_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	fz.dev_mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x01 }};
	fz.peer_mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x02 }};
	fz.peer_gid.raw[10] = fz.peer_gid.raw[11] = 0xff;
	memcpy(&fz.peer_gid.raw[12], &fz.peer_ip, 4);
	FZ_CHECK(droce_ring_pair_create("net_ring_fz0", "net_ring_fz1") == 0);
	raw_port_setup();
	FZ_CHECK(droce_dev_create("droce0", "ethdev=net_ring_fz0,ip=10.0.0.1,mtu=4200,lcore=inline,"
				  "mac=02:00:00:00:00:01,neigh=10.0.0.2@02:00:00:00:00:02") == 0);
	devs = ibv_get_device_list(&ndev);
	FZ_CHECK(devs != NULL && ndev == 1);
	fz.ctx = ibv_open_device(devs[0]);
	FZ_CHECK(fz.ctx != NULL);
	ibv_free_device_list(devs);
	/* async events are drained after each input, without waiting */
	FZ_CHECK(fcntl(fz.ctx->async_fd, F_SETFL,
		       fcntl(fz.ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
	fz.dev = roce_dev_by_name("droce0");
	FZ_CHECK(fz.dev != NULL && fz.dev->engine == NULL);
	/* from here on only the harness moves droce0 */
	rte_spinlock_lock(&fz.dev->inline_lock);
	fz.pd = ibv_alloc_pd(fz.ctx);
	fz.pd2 = ibv_alloc_pd(fz.ctx);
	FZ_CHECK(fz.pd != NULL && fz.pd2 != NULL);
	ah.is_global = 1;
	ah.grh.dgid = fz.peer_gid;
	ah.grh.hop_limit = 64;
	ah.port_num = 1;
	fz.ah = ibv_create_ah(fz.pd, &ah);
	/* 10.0.0.3: no static entry, droce0 ARPs for it (and learns it from its frames) */
	ah.grh.dgid.raw[15] = 3;
	fz.ah_unknown = ibv_create_ah(fz.pd, &ah);
	FZ_CHECK(fz.ah != NULL && fz.ah_unknown != NULL);
}

/* ------------------------------------------------------------------ */
/* QPs */

static struct ibv_cq *
cq_new(int cqe)
{
	struct ibv_cq *cq = ibv_create_cq(fz.ctx, cqe, NULL, NULL, 0);

	FZ_CHECK(cq != NULL);
	return cq;
}

int
fz_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int ret;

	if (!((mask & IBV_QP_STATE) && a->qp_state == IBV_QPS_RESET))
		return ibv_modify_qp(qp, a, mask);
	/* RESET quiesces the engine: under the inline lock */
	rte_spinlock_unlock(&fz.dev->inline_lock);
	ret = ibv_modify_qp(qp, a, mask);
	rte_spinlock_lock(&fz.dev->inline_lock);
	return ret;
}

static uint32_t
qp_rq_psn(const struct fz_qp *q)
{
	/* half of them wrap the 24-bit PSN within a few packets */
	return q->idx & 1 ? FZ_RQ_PSN : 0xfffffd;
}

static void
qp_connect(struct fz_qp *q)
{
	struct ibv_qp_attr a = { 0 };
	int mask;

	if (q->want == IBV_QPS_RESET)
		return;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (q->type == IBV_QPT_UD) {
		a.qkey = FZ_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = q->access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	FZ_CHECK(fz_modify(q->qp, &a, mask) == 0);
	if (q->want == IBV_QPS_INIT)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (q->type != IBV_QPT_UD) {
		a.path_mtu = FZ_PMTU;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = qp_rq_psn(q);
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = fz.peer_gid;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	FZ_CHECK(fz_modify(q->qp, &a, mask) == 0);
	if (q->want == IBV_QPS_RTR)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = FZ_SQ_PSN;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->type == IBV_QPT_RC) {
		a.timeout = 0;		/* no retransmission timer: inputs do not depend on time */
		a.retry_cnt = 2;
		a.rnr_retry = 1;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	FZ_CHECK(fz_modify(q->qp, &a, mask) == 0);
}

static uint64_t
send_wr_id(const struct fz_qp *q, uint32_t seq)
{
	return SEND_TAG << 56 | (uint64_t)q->idx << 16 | seq;
}

/* what each outstanding send WR must complete as */
static enum ibv_wc_opcode send_op[FZ_MAX_QP][64];
static uint32_t send_len[FZ_MAX_QP][64];

/* local buffers: 0 source (64 KiB), 1 READ destination (8 KiB), 2 atomic result (8 bytes) */
static struct fz_rbuf local;

/* post_one's @how: a local key that names nothing; UD to a host droce0 must ARP for */
#define POST_BAD_LKEY	1
#define POST_UNKNOWN_AH	2

static int
post_one(struct fz_qp *q, enum ibv_wr_opcode op, uint32_t len, unsigned int flags, uint64_t raddr,
	 uint32_t rkey, int how)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge[2] = { { (uintptr_t)local.buf[0], len, local.mr->key } };
	uint32_t seq = q->send_seq;
	int nsge = 1, ret;

	if (seq >= 64)
		return -1;
	if (op == IBV_WR_RDMA_READ) {
		len = RTE_MIN(len, local.len[1]);
		sge[0] = (struct ibv_sge){ (uintptr_t)local.buf[1] + local.len[1] - len, len,
					   local.mr->key };
	} else if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		len = 8;
		sge[0] = (struct ibv_sge){ (uintptr_t)local.buf[2], 8, local.mr->key };
	} else {
		len = RTE_MIN(len, local.len[0]);
		sge[0].length = len;
		if (len > 100) {	/* gathered from two SGEs */
			sge[0].length = 100;
			sge[1] = (struct ibv_sge){ (uintptr_t)local.buf[0] + 100, len - 100,
						   local.mr->key };
			nsge = 2;
		}
	}
	if (how & POST_BAD_LKEY)
		sge[nsge - 1].lkey ^= 0x5a5a5;
	wr.wr_id = send_wr_id(q, seq);
	wr.opcode = op;
	wr.send_flags = flags;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.imm_data = rte_cpu_to_be_32(0x1234 + seq);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr & ~7ull;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (q->type == IBV_QPT_UD) {
		wr.wr.ud.ah = how & POST_UNKNOWN_AH ? fz.ah_unknown : fz.ah;
		wr.wr.ud.remote_qpn = q->peer_qpn;
		wr.wr.ud.remote_qkey = FZ_QKEY;
	}
	ret = ibv_post_send(q->qp, &wr, &bad);
	if (ret != 0)
		return ret;
	send_op[q->idx][seq] = op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
			       op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP :
			       op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
			       op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ?
			       IBV_WC_RDMA_WRITE : IBV_WC_SEND;
	send_len[q->idx][seq] = len;
	q->send_out |= 1ull << seq;
	q->send_seq++;
	return 0;
}

/*
 * An RC requester's canonical window: a 3-packet SEND, an unsignaled WRITE,
 * a 2-packet READ, both atomics, an empty SEND with immediate and a
 * 2-packet WRITE with immediate; its PSNs wrap the 24-bit space.
 */
static void
post_canonical(struct fz_qp *q)
{
	uint64_t peer_va = 0x10000;

	FZ_CHECK(post_one(q, IBV_WR_SEND, 2500, IBV_SEND_SIGNALED, 0, 0, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_RDMA_WRITE, 100, 0, peer_va, 0x77, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_RDMA_READ, 2048, IBV_SEND_SIGNALED, peer_va, 0x77, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_ATOMIC_CMP_AND_SWP, 8, IBV_SEND_SIGNALED, peer_va, 0x77, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, IBV_SEND_SIGNALED, peer_va, 0x77, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_SEND_WITH_IMM, 0, IBV_SEND_SIGNALED, 0, 0, 0) == 0);
	FZ_CHECK(post_one(q, IBV_WR_RDMA_WRITE_WITH_IMM, 1500, IBV_SEND_SIGNALED, peer_va, 0x77, 0) == 0);
}

void
fz_post_send(struct fz_qp *q, const uint8_t *b, uint32_t n)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	uint8_t x[4] = { 0 };
	unsigned int flags;

	memcpy(x, b, RTE_MIN(n, sizeof(x)));
	flags = (x[3] & 1 ? IBV_SEND_SIGNALED : 0) | (x[3] & 2 ? IBV_SEND_FENCE : 0) |
		(x[3] & 4 ? IBV_SEND_SOLICITED : 0) | (x[3] & 8 ? IBV_SEND_INLINE : 0);
	/* a post the QP refuses (state, type, inline size) is fine */
	post_one(q, ops[x[0] % RTE_DIM(ops)], fz_le16(x + 1), flags, 0x10000, 0x77,
		 (x[3] & 0x10 ? POST_BAD_LKEY : 0) | (x[3] & 0x20 ? POST_UNKNOWN_AH : 0));
}

bool
fz_ctrl_qp(struct fz_qp *q, unsigned int action, const uint8_t *b, uint32_t n)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	switch (action) {
	case 0:
		fz_post_send(q, b + RTE_MIN(n, 2u), n > 2 ? n - 2 : 0);
		return true;
	case 1:
		fz_modify(q->qp, &a, IBV_QP_STATE);
		return true;
	case 2:
		fz_qp_restore(q);
		return true;
	default:
		return false;
	}
}

struct fz_qp *
fz_qp_add(const char *name, enum ibv_qp_type type, enum ibv_qp_state want, int access,
	  struct fz_srq *srq, bool requester, int cqe)
{
	struct ibv_qp_init_attr ia = { 0 };
	struct fz_qp *q = calloc(1, sizeof(*q));

	FZ_CHECK(q != NULL && fz.nqp < FZ_MAX_QP);
	if (local.n == 0) {
		static const uint32_t ll[3] = { 65536, 8192, 8 };

		fz_rbuf_init(&local, 3, ll);
		fz.send_mr = local.mr;
	}
	q->name = name;
	q->type = type;
	q->want = want;
	q->access = access;
	q->srq = srq;
	q->requester = requester;
	q->idx = fz.nqp;
	q->peer_qpn = FZ_PEER_QPN + q->idx;
	q->scq = cq_new(cqe);
	q->rcq = cq_new(cqe);
	ia.qp_type = type;
	ia.send_cq = q->scq;
	ia.recv_cq = q->rcq;
	ia.srq = srq ? srq->srq : NULL;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = FZ_MAX_RX;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = 64;
	q->qp = ibv_create_qp(fz.pd, &ia);
	FZ_CHECK(q->qp != NULL);
	q->rqp = to_roce_qp(to_dqp(q->qp)->fp);
	if (srq == NULL)
		fz_rbuf_init(&q->rb, FZ_MAX_RX, fz_recv_lens);
	fz.qps[fz.nqp++] = q;
	fz_qp_restore(q);
	return q;
}

/* Take a receive WQE the engine held back when the QP is reset: it never completes. */
static void
forget_held_rwqe(struct fz_qp *q)
{
	const struct droce_recv_wqe *w = q->rqp->e.rwqe;
	struct fz_rbuf *rb = q->srq ? &q->srq->rb : &q->rb;
	uint64_t id;

	if (w == NULL)
		return;
	id = w->wr_id;
	if (id >> 56 != RECV_TAG)
		return;		/* a tagged buffer (fuzz_tm): the harness's own */
	FZ_CHECK((id & 0xffff) < (uint64_t)rb->n);
	rb->posted[id & 0xffff] = false;
}

static void
snapshot(struct fz_qp *q)
{
	q->snap = q->rqp->e;
	q->snap_state = roce_qp_state(q->rqp);
	q->snap_sq = (int)droce_wq_pending(&q->rqp->fp.sq);
	q->dirty = false;
}

static bool
moved(const struct fz_qp *q)
{
	return roce_qp_state(q->rqp) != q->snap_state ||
	       memcmp(&q->rqp->e, &q->snap, sizeof(q->snap)) != 0 ||
	       (int)droce_wq_pending(&q->rqp->fp.sq) != q->snap_sq;
}

void
fz_qp_restore(struct fz_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	fz_poll_cqs();
	forget_held_rwqe(q);
	FZ_CHECK(fz_modify(q->qp, &a, IBV_QP_STATE) == 0);
	/* RESET discarded its WRs without completions */
	q->send_out = 0;
	q->send_seq = 0;
	memset(q->rb.posted, 0, sizeof(q->rb.posted));
	qp_connect(q);
	if (q->want != IBV_QPS_RESET && q->srq == NULL)
		rbuf_post_qp(q);
	if (q->requester)
		post_canonical(q);
	if (q->want == IBV_QPS_ERR) {
		/* it had been working: a window to flush */
		if (q->type == IBV_QPT_RC)
			post_canonical(q);
		a.qp_state = IBV_QPS_ERR;
		FZ_CHECK(fz_modify(q->qp, &a, IBV_QP_STATE) == 0);
	}
	for (int i = 0; i < 3; i++)
		fz_poll();
	fz_drain();
	fz_poll_cqs();
	snapshot(q);
}

void
fz_ready(void)
{
	for (int i = 0; i < fz.nqp; i++)
		snapshot(fz.qps[i]);
	fz.dev_pool_avail = rte_mempool_avail_count(fz.dev->mp);
	fz.raw_pool_avail = rte_mempool_avail_count(fz.pool);
	rx_base = fz.dev->q0.stats.rx_pkts - injected;
}

/* ------------------------------------------------------------------ */
/* engine, outgoing frames, completions */

/*
 * The RNR timer runs on the harness's clock, not the wall's: a wait the
 * completer starts lasts until a POLL record lets time pass (expire_waits),
 * however long the input took to get there.
 */
void
fz_poll(void)
{
	for (int i = 0; i < fz.nqp; i++)
		if (fz.qps[i]->rqp->e.rnr_tsc > 1)
			fz.qps[i]->rqp->e.rnr_tsc = UINT64_MAX;
	roce_q_poll(&fz.dev->q0);
	pending = 0;
}

static void
expire_waits(void)
{
	for (int i = 0; i < fz.nqp; i++)
		if (fz.qps[i]->rqp->e.rnr_tsc != 0)
			fz.qps[i]->rqp->e.rnr_tsc = 1;
}

static const struct fz_qp *
qp_of_peer(uint32_t dqpn)
{
	uint32_t i = dqpn - FZ_PEER_QPN;

	return i < (uint32_t)fz.nqp ? fz.qps[i] : NULL;
}

/* A frame droce0 sent: well-formed, from its MAC and IP, to the peer. */
static void
check_out(const uint8_t *f, uint32_t len)
{
	struct frame_info o;
	const char *why = frame_decode(f, len, &o);
	const struct roce_opcode_info *oi;
	const struct fz_qp *q;

	if (why != NULL)
		fprintf(stderr, "fuzz: droce0 sent %s\n", why);
	FZ_CHECK(why == NULL);
	FZ_CHECK(rte_is_same_ether_addr(&o.eth->src_addr, &fz.dev_mac));
	if (o.arp) {
		const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(o.eth + 1);

		FZ_CHECK(arp->arp_data.arp_sip == fz.dev_ip &&
			 rte_is_same_ether_addr(&arp->arp_data.arp_sha, &fz.dev_mac));
		return;
	}
	/* no Ethernet padding: as long as the IPv4 packet */
	FZ_CHECK(RTE_ETHER_HDR_LEN + o.iplen == len);
	FZ_CHECK(o.ip->src_addr == fz.dev_ip);
	oi = &roce_opcode_tbl[o.op];
	q = qp_of_peer(o.dqpn);
	if (q != NULL) {
		/* every droce0 QP talks to its own peer QPN, at the peer's address (UD: or 10.0.0.3) */
		if (q->type == IBV_QPT_UD && o.ip->dst_addr == rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 3)))
			FZ_CHECK(rte_is_valid_assigned_ether_addr(&o.eth->dst_addr));
		else
			FZ_CHECK(o.ip->dst_addr == fz.peer_ip &&
				 rte_is_same_ether_addr(&o.eth->dst_addr, &fz.peer_mac));
		FZ_CHECK(o.paylen <= (q->type == IBV_QPT_UD ? FZ_UD_MTU : FZ_PMTU_BYTES));
		/* READ responses and atomic ACKs only where the QP grants the access */
		if (oi->flags & ROCE_OPF_RESP && o.op != IBV_OPCODE_RC_ACKNOWLEDGE) {
			FZ_CHECK(q->type == IBV_QPT_RC);
			if (o.op == IBV_OPCODE_RC_ATOMIC_ACKNOWLEDGE)
				FZ_CHECK(q->access & IBV_ACCESS_REMOTE_ATOMIC);
			else
				FZ_CHECK(q->access & IBV_ACCESS_REMOTE_READ);
		}
	}
	if (fz.hooks.out_frame)
		fz.hooks.out_frame(q, o.op, (const uint8_t *)o.bth, o.blen);
}

unsigned int
fz_drain(void)
{
	static uint8_t copy[FZ_FRAME_MAX];
	struct rte_mbuf *pk[32];
	unsigned int total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(fz.raw_port, 0, pk, RTE_DIM(pk))) != 0) {
		for (uint16_t i = 0; i < n; i++) {
			uint32_t len = rte_pktmbuf_pkt_len(pk[i]);
			const uint8_t *d;

			FZ_CHECK(len <= FZ_FRAME_MAX);
			d = rte_pktmbuf_read(pk[i], 0, len, copy);
			FZ_CHECK(d != NULL);
			check_out(d, len);
			rte_pktmbuf_free(pk[i]);
		}
		total += n;
	}
	return total;
}

static struct fz_qp *
owner_qp(struct ibv_cq *cq, bool *send)
{
	for (int i = 0; i < fz.nqp; i++) {
		if (fz.qps[i]->scq == cq) {
			*send = true;
			return fz.qps[i];
		}
		if (fz.qps[i]->rcq == cq) {
			*send = false;
			return fz.qps[i];
		}
	}
	return NULL;
}

static void
check_send_wc(struct fz_qp *q, const struct ibv_wc *wc)
{
	uint32_t seq = wc->wr_id & 0xffff;

	FZ_CHECK(wc->wr_id >> 56 == SEND_TAG && (int)((wc->wr_id >> 16) & 0xff) == q->idx);
	FZ_CHECK(seq < 64 && (q->send_out & (1ull << seq)));
	q->send_out &= ~(1ull << seq);
	FZ_CHECK(wc->qp_num == q->qp->qp_num);
	if (wc->status == IBV_WC_SUCCESS) {
		FZ_CHECK(wc->opcode == send_op[q->idx][seq]);
		if (wc->opcode == IBV_WC_RDMA_READ)
			FZ_CHECK(wc->byte_len == send_len[q->idx][seq]);
	}
}

void
fz_recv_done(struct fz_qp *q, const struct ibv_wc *wc)
{
	int owner = (wc->wr_id >> 16) & 0xff;
	uint32_t slot = wc->wr_id & 0xffff;
	struct fz_rbuf *rb;

	FZ_CHECK(wc->wr_id >> 56 == RECV_TAG);
	if (q->srq != NULL) {
		FZ_CHECK(owner == (0x80 | q->srq->id));
		rb = &q->srq->rb;
	} else {
		FZ_CHECK(owner == q->idx);
		rb = &q->rb;
	}
	FZ_CHECK(slot < (uint32_t)rb->n && rb->posted[slot]);
	rb->posted[slot] = false;
	/* a reposted WQE would queue behind the others: back to the canonical order */
	if (q->srq == NULL)
		q->dirty = true;
	FZ_CHECK(wc->qp_num == q->qp->qp_num);
	if (wc->status != IBV_WC_SUCCESS)
		return;
	if (!(wc->opcode == IBV_WC_RECV || wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ||
	      (q->srq != NULL && q->srq->tm &&
	       (wc->opcode == IBV_WC_TM_RECV || wc->opcode == IBV_WC_TM_NO_TAG))))
		fprintf(stderr, "fuzz: %s: receive completion opcode %d\n", q->name, wc->opcode);
	FZ_CHECK(wc->opcode == IBV_WC_RECV || wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ||
		 (q->srq != NULL && q->srq->tm &&
		  (wc->opcode == IBV_WC_TM_RECV || wc->opcode == IBV_WC_TM_NO_TAG)));
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
		FZ_CHECK(wc->byte_len <= rb->len[slot]);
	if (q->type == IBV_QPT_UD)
		FZ_CHECK(wc->byte_len >= ROCE_GRH_LEN && (wc->wc_flags & IBV_WC_GRH));
}

static void
poll_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	bool send = false;
	struct fz_qp *q = owner_qp(cq, &send);
	int n;

	FZ_CHECK(q != NULL);
	while ((n = ibv_poll_cq(cq, RTE_DIM(wc), wc)) > 0)
		for (int i = 0; i < n; i++)
			(send ? check_send_wc : fz_recv_done)(q, &wc[i]);
	FZ_CHECK(n == 0);
}

/* The async events so far: each about one of the harness's objects. */
static void
drain_async(void)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(fz.ctx, &ev) == 0) {
		switch (ev.event_type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR: {
			bool ours = false;

			for (int i = 0; i < fz.nqp; i++)
				ours |= ev.element.qp == fz.qps[i]->qp;
			FZ_CHECK(ours);
			break;
		}
		case IBV_EVENT_SRQ_LIMIT_REACHED:
		case IBV_EVENT_SRQ_ERR: {
			bool ours = false;

			for (int i = 0; i < fz.nsrq; i++)
				ours |= ev.element.srq == fz.srqs[i]->srq;
			FZ_CHECK(ours);
			break;
		}
		default:
			break;
		}
		ibv_ack_async_event(&ev);
	}
	FZ_CHECK(errno == EAGAIN);
}

void
fz_poll_cqs(void)
{
	for (int i = 0; i < fz.nqp; i++) {
		poll_cq(fz.qps[i]->scq);
		poll_cq(fz.qps[i]->rcq);
	}
	if (fz.hooks.poll_extra)
		fz.hooks.poll_extra();
	drain_async();
}

/* ------------------------------------------------------------------ */
/* frames */

/*
 * Remote writes: an MR droce0 lets a peer write keeps a shadow copy, and
 * each input may change only the bytes its frames named with the MR's
 * current key (a RETH's [va, va + length), an AtomicETH's 8 bytes).
 */
#define MAX_RANGES 512
static struct {
	struct fz_mr *mr;
	uint64_t off, len;
	bool atomic;
} ranges[MAX_RANGES];
static unsigned int nranges;

static void
allow(uint32_t key, uint64_t va, uint64_t len, bool atomic)
{
	for (int i = 0; i < fz.nmr; i++) {
		struct fz_mr *m = fz.mrs[i];
		uint64_t off = va - m->iova;

		if (m->shadow == NULL || m->key != key || va < m->iova || off >= m->len)
			continue;
		if (nranges == MAX_RANGES)	/* too many to tell: anything goes this time */
			len = m->len;
		ranges[nranges < MAX_RANGES ? nranges++ : MAX_RANGES - 1] =
			(typeof(ranges[0])){ m, off, RTE_MIN(len, m->len - off), atomic };
	}
}

/* What a frame about to be injected may write (whatever its checksums). */
static void
note_writes(const uint8_t *f, uint32_t len)
{
	const uint8_t *b = f + ROCE_L2L4_LEN;
	const struct roce_opcode_info *oi;

	/* a raw record's frame is the fuzzer's bytes, at any alignment: copies */
	if (len < ROCE_L2L4_LEN + ROCE_BTH_LEN || f[12] != 0x08 || f[13] != 0x00)
		return;
	oi = &roce_opcode_tbl[b[0]];
	if (len < ROCE_L2L4_LEN + oi->hdr_len)
		return;
	if ((oi->flags & ROCE_OPF_RETH) && (oi->flags & ROCE_OPF_WRITE)) {
		struct roce_reth r;

		memcpy(&r, b + ROCE_BTH_LEN, sizeof(r));
		allow(reth_rkey(&r), reth_va(&r), reth_len(&r), false);
	} else if (oi->flags & ROCE_OPF_ATMETH) {
		struct roce_atmeth a;

		memcpy(&a, b + ROCE_BTH_LEN, sizeof(a));
		allow(atmeth_rkey(&a), atmeth_va(&a), 8, true);
	}
}

/* No byte of a shadowed MR changed that no frame of this input named. */
static bool
unaligned_atomic(unsigned int r)
{
	return ranges[r].atomic && ((uintptr_t)(ranges[r].mr->buf + ranges[r].off) & 7);
}

/* A byte of @r's MR at @off changed that no range may write but unaligned atomics. */
static bool
changed_by_unaligned(unsigned int r, uint64_t off)
{
	const struct fz_mr *m = ranges[r].mr;

	if (m->shadow[off] == m->buf[off])
		return false;
	for (unsigned int i = 0; i < nranges; i++)
		if (!unaligned_atomic(i) && ranges[i].mr == m && off >= ranges[i].off &&
		    off - ranges[i].off < ranges[i].len)
			return false;
	return true;
}

static void
check_writes(void)
{
	/* an 8-byte atomic is only atomic (on some CPUs only possible) aligned */
	for (unsigned int i = 0; i < nranges; i++) {
		uint8_t *mem = ranges[i].mr->buf + ranges[i].off;
		bool bad = false;

		if (!unaligned_atomic(i))
			continue;
		for (uint64_t o = ranges[i].off; o < ranges[i].off + ranges[i].len; o++)
			bad |= changed_by_unaligned(i, o);
		if (bad)
			fprintf(stderr, "fuzz: MR %s: atomic applied at unaligned %p\n",
				ranges[i].mr->name, (void *)mem);
		FZ_CHECK(!bad);
	}
	for (unsigned int i = 0; i < nranges; i++)
		memcpy(ranges[i].mr->shadow + ranges[i].off, ranges[i].mr->buf + ranges[i].off,
		       ranges[i].len);
	nranges = 0;
	for (int i = 0; i < fz.nmr; i++) {
		struct fz_mr *m = fz.mrs[i];

		if (m->shadow != NULL && memcmp(m->shadow, m->buf, m->len) != 0) {
			size_t j = 0;

			while (m->shadow[j] == m->buf[j])
				j++;
			fprintf(stderr, "fuzz: MR %s: byte %zu written, no frame named it\n", m->name, j);
			FZ_CHECK(memcmp(m->shadow, m->buf, m->len) == 0);
		}
	}
}

static void
ext_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	slot_busy[(uintptr_t)opaque] = false;
}

/* @f as one mbuf whose data ends where a PROT_NONE page begins. */
static void
inject_guarded(const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m;
	uint8_t *buf;
	int s;

	if (len > SLOT_DATA)
		len = SLOT_DATA;
	note_writes(f, len);
	for (s = 0; s < NB_SLOTS && slot_busy[s]; s++)
		;
	if (s == NB_SLOTS) {
		fz_poll();
		for (s = 0; s < NB_SLOTS && slot_busy[s]; s++)
			;
		FZ_CHECK(s < NB_SLOTS);	/* droce0 frees what it receives */
	}
	m = rte_pktmbuf_alloc(fz.pool);
	FZ_CHECK(m != NULL);
	buf = slot_mem + s * (SLOT_DATA + PAGE);
	slot_busy[s] = true;
	slot_sh[s].free_cb = ext_free;
	slot_sh[s].fcb_opaque = (void *)(uintptr_t)s;
	rte_mbuf_ext_refcnt_set(&slot_sh[s], 1);
	rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, SLOT_DATA, &slot_sh[s]);
	/* Ethernet headers are 2-byte aligned: an odd frame ends a byte short of the guard */
	memcpy(buf + ((SLOT_DATA - len) & ~1u), f, len);
	m->data_off = (SLOT_DATA - len) & ~1u;
	m->data_len = len;
	m->pkt_len = len;
	FZ_CHECK(rte_eth_tx_burst(fz.raw_port, 0, &m, 1) == 1);
	injected++;
	pending++;
}

/* @f as a chain of mbufs cut where @cut says (empty segments included). */
static void
inject_chain(const uint8_t *f, uint32_t len, uint8_t cut)
{
	/* bit 7: the whole frame in the first segment, empty ones after it */
	uint32_t cuts[4] = { cut & 0x80 ? len : (cut & 3) * 7u, 14u + (cut >> 2 & 7) * 6u,
			     42u + (cut >> 5 & 3) * 20u, len };
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;

	note_writes(f, len);
	for (int i = 0; i < 4; i++) {
		uint32_t to = cuts[i] < from ? from : cuts[i] > len ? len : cuts[i];
		struct rte_mbuf *m = rte_pktmbuf_alloc(fz.pool);
		char *p;

		FZ_CHECK(m != NULL);
		p = rte_pktmbuf_append(m, (uint16_t)(to - from));
		FZ_CHECK(p != NULL || to == from);
		if (to > from)
			memcpy(p, f + from, to - from);
		if (head == NULL)
			head = m;
		else
			FZ_CHECK(rte_pktmbuf_chain(head, m) == 0);
		from = to;
	}
	FZ_CHECK(rte_eth_tx_burst(fz.raw_port, 0, &head, 1) == 1);
	injected++;
	pending++;
}

static const struct fz_qp *
target_qp(uint8_t sel)
{
	return fz.nqp ? fz.qps[sel % fz.nqp] : NULL;
}

/* The address and key the MR selector names. */
static void
mr_pick(const uint8_t *fix, uint64_t *va, uint32_t *key)
{
	static const uint32_t scale[4] = { 1, 8, 256, 4096 };
	const struct fz_mr *m;
	uint64_t off;

	if (fz.nmr == 0)
		return;
	m = fz.mrs[(fix[4] & 15) % fz.nmr];
	off = (uint64_t)fz_le16(fix + 5) * scale[fix[4] >> 6];
	*va = fix[4] & 0x20 ? m->iova + m->len - off : m->iova + off;
	*key = fix[4] & 0x10 ? m->stale_key : m->key;
}

/*
 * Build a RoCEv2 frame around @body (BTH, extension headers, payload) as the
 * fix header says. Returns its length.
 */
static uint32_t
build_roce(uint8_t *f, const uint8_t *fix, const uint8_t *body, uint32_t n, bool v6)
{
	uint32_t flags = fz_le16(fix), l3 = v6 ? 40 : 20, off = RTE_ETHER_HDR_LEN + l3 + 8;
	const struct fz_qp *q = target_qp(fix[2]);
	uint8_t *p = f + off;
	struct roce_bth *bth = (struct roce_bth *)p;
	const struct roce_opcode_info *oi;
	uint32_t hdr, pay, pad, l4, max = FZ_FRAME_MAX - off - 4 - 3;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + RTE_ETHER_HDR_LEN + l3);

	n = RTE_MIN(n, max);
	memcpy(p, body, n);
	if (n < ROCE_BTH_LEN) {
		memset(p + n, 0, ROCE_BTH_LEN - n);
		n = ROCE_BTH_LEN;
	}
	oi = &roce_opcode_tbl[bth_opcode(bth)];
	hdr = oi->flags & ROCE_OPF_VALID ? oi->hdr_len : ROCE_BTH_LEN;
	if (n < hdr && (flags & (FIX_KEY | FIX_QKEY | FIX_MTU | FIX_LEN))) {
		memset(p + n, 0, hdr - n);
		n = hdr;
	}
	pay = n >= hdr ? n - hdr : 0;
	if ((flags & FIX_MTU) && n >= hdr && q != NULL) {
		uint32_t mtu = q->type == IBV_QPT_UD ? FZ_UD_MTU : FZ_PMTU_BYTES;

		if (pay < mtu)
			memset(p + n, 0, mtu - pay);
		pay = mtu;
		n = hdr + pay;
	}
	if ((flags & FIX_QPN) && q != NULL)
		bth->qpn = rte_cpu_to_be_32(q->qp->qp_num);
	if (flags & FIX_BTH) {
		bth->flags &= ~BTH_TVER_MASK;
		bth->pkey = rte_cpu_to_be_16(DROCE_DEFAULT_PKEY);
	}
	if (flags & (FIX_PSN | FIX_ACKREQ)) {
		uint32_t apsn = rte_be_to_cpu_32(bth->apsn);

		if ((flags & FIX_PSN) && q != NULL) {
			uint32_t base = flags & FIX_UNA ? q->rqp->e.una : q->rqp->e.epsn;

			apsn = (apsn & ~ROCE_PSN_MASK) | psn_add(base, (uint32_t)(int32_t)(int8_t)fix[3]);
		}
		if (flags & FIX_ACKREQ)
			apsn |= 1u << 31;
		bth->apsn = rte_cpu_to_be_32(apsn);
	}
	if ((flags & FIX_KEY) && n >= hdr && (oi->flags & (ROCE_OPF_RETH | ROCE_OPF_ATMETH))) {
		uint64_t va = 0;
		uint32_t key = 0;

		mr_pick(fix, &va, &key);
		if (oi->flags & ROCE_OPF_RETH) {
			struct roce_reth *r = (struct roce_reth *)(p + ROCE_BTH_LEN);

			r->va = rte_cpu_to_be_64(va);
			r->rkey = rte_cpu_to_be_32(key);
		} else {
			struct roce_atmeth *a = (struct roce_atmeth *)(p + ROCE_BTH_LEN);

			a->va = rte_cpu_to_be_64(va);
			a->rkey = rte_cpu_to_be_32(key);
		}
	}
	if ((flags & FIX_LEN) && n >= hdr && (oi->flags & ROCE_OPF_RETH)) {
		struct roce_reth *r = (struct roce_reth *)(p + ROCE_BTH_LEN);

		r->len = rte_cpu_to_be_32(fix[7] * FZ_PMTU_BYTES + pay);
	}
	if ((flags & FIX_QKEY) && n >= hdr && (oi->flags & ROCE_OPF_DETH) && q != NULL)
		((struct roce_deth *)(p + ROCE_BTH_LEN))->qkey = rte_cpu_to_be_32(FZ_QKEY);
	if ((flags & FIX_HOOK) && fz.hooks.payload && n > hdr)
		fz.hooks.payload(p + hdr, n - hdr, fix[7]);
	if (flags & FIX_PAD) {
		pad = -pay & 3;
		bth->flags = (bth->flags & ~BTH_PAD_MASK) | pad << 4;
		memset(p + n, 0, pad);
		n += pad;
	}
	l4 = 8 + n + ROCE_ICRC_LEN;
	if (!v6) {
		struct frame_ends e = {
			.src_mac = fz.peer_mac, .dst_mac = fz.dev_mac,
			.src_ip = flags & FIX_SRC ? rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 3)) : fz.peer_ip,
			.dst_ip = fz.dev_ip, .sport = 0xc000 | fix[2],
		};

		frame_l2l4(f, &e, l4);
		frame_put_icrc(f + RTE_ETHER_HDR_LEN);
		if (flags & FIX_BADICRC)
			p[n] ^= 1;
	} else {
		uint8_t *ip6 = f + RTE_ETHER_HDR_LEN;

		memset(f, 0, off);
		eth->dst_addr = fz.dev_mac;
		eth->src_addr = fz.peer_mac;
		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		udp->src_port = rte_cpu_to_be_16(0xc000 | fix[2]);
		udp->dst_port = rte_cpu_to_be_16(DROCE_UDP_PORT);
		udp->dgram_len = rte_cpu_to_be_16(l4);
		ip6[0] = 0x60;
		ip6[4] = l4 >> 8;
		ip6[5] = l4 & 0xff;
		ip6[6] = IPPROTO_UDP;
		ip6[7] = 64;
		memcpy(ip6 + 8, fz.peer_gid.raw, 16);
		memcpy(ip6 + 24, fz.peer_gid.raw, 12);
		memcpy(ip6 + 36, &fz.dev_ip, 4);
		memset(p + n, 0, ROCE_ICRC_LEN);	/* no IPv6 ICRC: droce0 drops IPv6 first */
	}
	return off + n + ROCE_ICRC_LEN;
}

static uint32_t
build_arp(uint8_t *f, const uint8_t *b, uint32_t n)
{
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(f + RTE_ETHER_HDR_LEN);
	struct rte_ether_addr sha;
	uint8_t a[8] = { 0 };
	uint32_t len = RTE_ETHER_HDR_LEN + sizeof(*arp), extra;

	memcpy(a, b, RTE_MIN(n, sizeof(a)));
	if (a[0] & 0x10)
		memcpy(&sha, a + 2, RTE_ETHER_ADDR_LEN);
	else
		sha = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 1, a[1] }};
	frame_arp(f, a[0] & 8 ? NULL : &fz.dev_mac, &fz.peer_mac,
		  a[0] & 1 ? RTE_ARP_OP_REPLY : RTE_ARP_OP_REQUEST, &sha,
		  a[0] & 4 ? fz.peer_ip : rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, a[1])),
		  a[0] & 2 ? fz.dev_ip : rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 99)));
	/* the rest flips bits of the ARP header, then trails it */
	n = n > sizeof(a) ? n - sizeof(a) : 0;
	b += sizeof(a);
	for (uint32_t i = 0; i < n && i < sizeof(*arp); i++)
		((uint8_t *)arp)[i] ^= b[i];
	extra = n > sizeof(*arp) ? RTE_MIN(n - (uint32_t)sizeof(*arp), 64u) : 0;
	memcpy(f + len, b + sizeof(*arp), extra);
	len += extra;
	if (a[0] & 0x20)	/* truncated */
		len = RTE_ETHER_HDR_LEN + a[1] % (sizeof(*arp) + 1);
	return len;
}

/*
 * DROCE_FUZZ_DUMP=<dir>: each frame a record built, as a one-record input
 * of its own (a RAW record) in <dir>: raw seeds from fixed-up ones.
 */
static void
dump_raw(const uint8_t *f, uint32_t len)
{
	static const char *dir;
	static bool looked;
	static unsigned int seq;
	char path[512];
	uint8_t hdr[3] = { REC_RAW, len & 0xff, len >> 8 };
	FILE *out;

	if (!looked) {
		dir = getenv("DROCE_FUZZ_DUMP");
		looked = true;
	}
	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/raw-%06u", dir, seq++);
	out = fopen(path, "wb");
	if (out == NULL)
		return;
	fwrite(hdr, 1, sizeof(hdr), out);
	fwrite(f, 1, len, out);
	fclose(out);
}

static void
settle(void)
{
	uint64_t want = rx_base + injected;

	/* droce0 takes every frame of the rx ring in one or two iterations */
	for (int i = 0; i < 4 && fz.dev->q0.stats.rx_pkts < want; i++)
		fz_poll();
	FZ_CHECK(fz.dev->q0.stats.rx_pkts >= want);
	fz_poll();	/* owed ACKs, READ responses, what the requester may send now */
	fz_drain();
}

void
fz_run(const uint8_t *data, size_t size)
{
	static uint8_t frame[FZ_FRAME_MAX];
	size_t pos = 0;
	int nrec = 0;

	fz.inputs++;
	while (pos + 3 <= size && nrec++ < 256) {
		uint8_t type = data[pos];
		uint32_t n = RTE_MIN(fz_le16(data + pos + 1), (uint32_t)(size - pos - 3));
		const uint8_t *b = data + pos + 3;
		uint32_t len;

		pos += 3 + n;
		switch (type & 7) {
		case REC_RAW:
			inject_guarded(b, n);
			break;
		case REC_V4:
		case REC_V4B:
		case REC_V6:
			if (n < FIX_HDR_LEN)
				continue;
			len = build_roce(frame, b, b + FIX_HDR_LEN, n - FIX_HDR_LEN, (type & 7) == REC_V6);
			dump_raw(frame, len);
			inject_guarded(frame, len);
			break;
		case REC_CHAIN:
			if (n < FIX_HDR_LEN + 1)
				continue;
			len = build_roce(frame, b + 1, b + 1 + FIX_HDR_LEN, n - 1 - FIX_HDR_LEN, false);
			inject_chain(frame, len, b[0]);
			break;
		case REC_ARP:
			len = build_arp(frame, b, n);
			dump_raw(frame, len);
			inject_guarded(frame, len);
			break;
		case REC_CTRL:
			if (pending)
				settle();
			if (fz.hooks.ctrl && n > 0) {
				fz.hooks.ctrl(b, n);
				fz_poll();
				fz_drain();
			}
			continue;
		case REC_POLL:
			if (pending)
				settle();
			expire_waits();
			for (int i = 0; i < 1 + (n ? b[0] % 8 : 0); i++)
				fz_poll();
			fz_drain();
			continue;
		}
		if (!(type & REC_BURST))
			settle();
	}
	if (pending)
		settle();
	for (int i = 0; i < 2; i++)
		fz_poll();
	fz_drain();
	fz_poll_cqs();
	for (int i = 0; i < fz.nqp; i++)
		if (fz.qps[i]->dirty || moved(fz.qps[i]))
			fz_qp_restore(fz.qps[i]);
	if (fz.hooks.restore_extra)
		fz.hooks.restore_extra();
	/* receives that completed go back, to QPs that take them */
	for (int i = 0; i < fz.nqp; i++) {
		struct fz_qp *q = fz.qps[i];
		uint32_t st = roce_qp_state(q->rqp);

		if (q->srq == NULL && (st == IBV_QPS_INIT || st == IBV_QPS_RTR || st == IBV_QPS_RTS))
			rbuf_post_qp(q);
	}
	for (int i = 0; i < fz.nsrq; i++) {
		struct ibv_srq_attr sa = { .srq_limit = FZ_MAX_RX / 2 };

		rbuf_post_srq(fz.srqs[i]);
		/* armed again once it fired (IBV_EVENT_SRQ_LIMIT_REACHED when it runs low) */
		if (!fz.srqs[i]->tm && to_roce_srq(to_dsrq(fz.srqs[i]->srq)->fp)->limit == 0)
			FZ_CHECK(ibv_modify_srq(fz.srqs[i]->srq, &sa, IBV_SRQ_LIMIT) == 0);
	}
	for (int i = 0; i < fz.nqp; i++)
		FZ_CHECK(!moved(fz.qps[i]));
	/*
	 * droce0 forgets what ARP taught it (there is no verb for that): the
	 * next input meets the same table, only the static peer in it.
	 */
	for (int i = 0; i < DROCE_NEIGH_MAX; i++)
		if (!fz.dev->neigh[i].is_static)
			memset(&fz.dev->neigh[i], 0, sizeof(fz.dev->neigh[i]));
	fz.dev->neigh_pending = 0;
	check_writes();
	/* no mbuf lost: droce0's pool and the raw port's are whole again */
	FZ_CHECK(rte_mempool_avail_count(fz.dev->mp) == fz.dev_pool_avail);
	FZ_CHECK(rte_mempool_avail_count(fz.pool) == fz.raw_pool_avail);
	for (int s = 0; s < NB_SLOTS; s++)
		FZ_CHECK(!slot_busy[s]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_run(data, size);
	return 0;
}
