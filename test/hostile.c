/* SPDX-License-Identifier: BSD-3-Clause */
/* The hostile peer of the test_hostile_* programs (hostile.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_config.h"
#include "harness.h"
#include "hostile.h"

#define UDP_SPORT	0xc123u
#define GUARD		4096u

const struct rte_ether_addr dev_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }};
const struct rte_ether_addr raw_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }};
rte_be32_t dev_ip, peer_ip;

static uint16_t raw_port;
static struct rte_mempool *pool;
static struct ibv_context *ctx;
static struct ibv_cq *pump_cq;
static uint64_t expect_rx;		/* frames droce0 should have taken in */
static union ibv_gid peer_gid;
static struct frame_ends from_peer;	/* the raw port's frames to droce0 */

/* ------------------------------------------------------------------ */
/* time, progress, counters */

void
hp_progress(void)
{
	struct ibv_wc wc;

	if (h_inline())
		ibv_poll_cq(pump_cq, 0, &wc);
	else
		rte_pause();
}

void
hp_snap(struct hp_snap *s)
{
	s->n = droce_dev_xstats(DEV_NAME, s->name, s->v, HP_NSTAT);
	if (s->n > HP_NSTAT)
		s->n = HP_NSTAT;
}

static uint64_t
sget(const struct hp_snap *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return s->v[i];
	fprintf(stderr, "  no counter %s\n", name);
	return UINT64_MAX;
}

uint64_t
hp_stat(const char *name)
{
	struct hp_snap s;

	hp_snap(&s);
	return sget(&s, name);
}

uint64_t
hp_sdelta(const struct hp_snap *a, const char *name)
{
	return hp_stat(name) - sget(a, name);
}

int
hp_drops_only(const struct hp_snap *a, const char *name, uint64_t n)
{
	struct hp_snap b;
	int bad = 0;

	hp_snap(&b);
	for (int i = 0; i < b.n; i++) {
		uint64_t d, want;

		if (strncmp(b.name[i], "rx_drop_", 8) != 0)
			continue;
		d = b.v[i] - sget(a, b.name[i]);
		want = name != NULL && strcmp(b.name[i], name) == 0 ? n : 0;
		if (d != want) {
			fprintf(stderr, "  counter %s moved by %" PRIu64 ", expected %" PRIu64 "\n",
				b.name[i], d, want);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* frames from the peer */

void
hp_build(struct frame *f, uint8_t op, uint32_t dqpn, uint32_t psn, const struct ext *x,
	 const void *pay, uint32_t paylen)
{
	frame_build(f, &from_peer, op, dqpn, psn, x, pay, paylen);
}

void
hp_fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 3u + 1u);
}

/* ------------------------------------------------------------------ */
/* the raw port */

int
hp_inject_len(const struct frame *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	if (m == NULL)
		return -1;
	p = rte_pktmbuf_append(m, len);
	if (p == NULL && len) {
		rte_pktmbuf_free(m);
		return -1;
	}
	if (len)
		memcpy(p, f->b, len);
	for (uint64_t t0 = h_now_ms(); rte_eth_tx_burst(raw_port, 0, &m, 1) != 1; hp_progress())
		if (h_now_ms() - t0 > 5000) {
			rte_pktmbuf_free(m);
			fprintf(stderr, "  raw port tx stuck\n");
			return -1;
		}
	expect_rx++;
	return 0;
}

int
hp_inject(const struct frame *f)
{
	return hp_inject_len(f, f->len);
}

int
hp_inject_chain(const struct frame *f, const uint32_t *cut, int ncut)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;

	for (int i = 0; i <= ncut; i++) {
		uint32_t to = i < ncut ? cut[i] : f->len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		char *p;

		if (m == NULL)
			goto err;
		p = rte_pktmbuf_append(m, to - from);
		if (to > from)
			memcpy(p, f->b + from, to - from);
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			goto err;
		from = to;
	}
	if (rte_eth_tx_burst(raw_port, 0, &head, 1) != 1)
		goto err;
	expect_rx++;
	return 0;
err:
	rte_pktmbuf_free(head);
	return -1;
}

int
hp_settle(void)
{
	uint64_t t0 = h_now_ms();

	while (hp_stat("rx_pkts") < expect_rx) {
		hp_progress();
		if (h_now_ms() - t0 > 20000) {
			fprintf(stderr, "  droce0 took %" PRIu64 " of %" PRIu64 " frames\n",
				hp_stat("rx_pkts"), expect_rx);
			return -1;
		}
	}
	/*
	 * Wait for the counters to rest: the engine lcore, or with inline
	 * progress the waker thread (our own progress skips the device while
	 * the waker holds it), may still be working on the last frames.
	 */
	for (struct hp_snap a, b; h_now_ms() - t0 < 20000; ) {
		hp_snap(&a);
		for (int i = 0; h_inline() && i < 4; i++)
			hp_progress();
		rte_delay_us_sleep(h_inline() ? 1000 : 5000);
		hp_snap(&b);
		if (a.n == b.n && memcmp(a.v, b.v, sizeof(a.v[0]) * a.n) == 0)
			return 0;
	}
	fprintf(stderr, "  droce0's counters do not settle\n");
	return -1;
}

struct frame outf[OUT_MAX];

int
hp_collect_n(struct frame *out, int max, int want)
{
	struct rte_mbuf *pk[32];
	uint64_t t0 = h_now_ms(), last = t0;
	int n = 0, idle = 0;

	while (n < 100000 && h_now_ms() - t0 < 10000) {
		uint16_t k;

		hp_progress();
		k = rte_eth_rx_burst(raw_port, 0, pk, RTE_DIM(pk));
		for (uint16_t i = 0; i < k; i++) {
			if (out != NULL && n < max) {
				uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(pk[i]), FRAME_MAX);
				const void *d = rte_pktmbuf_read(pk[i], 0, len, out[n].b);

				if (d != out[n].b)
					memcpy(out[n].b, d, len);
				out[n].len = len;
			}
			n++;
			rte_pktmbuf_free(pk[i]);
		}
		if (k) {
			idle = 0;
			last = h_now_ms();
			continue;
		}
		if (n < want && h_now_ms() - t0 < 5000)
			continue;
		if (h_inline() ? ++idle >= 4 && h_now_ms() - last >= 2 : h_now_ms() - last >= 30)
			break;
	}
	return n;
}

int
hp_collect(struct frame *out, int max)
{
	return hp_collect_n(out, max, 0);
}

void
hp_drain(void)
{
	hp_collect(NULL, 0);
}

int
hp_parse_out(const struct frame *f, struct frame_info *o)
{
	const char *why = frame_decode(f->b, f->len, o);

	if (why == NULL && !rte_is_same_ether_addr(&o->eth->src_addr, &dev_mac))
		why = "a frame not from its MAC";
	if (why == NULL && !o->arp &&
	    (!rte_is_same_ether_addr(&o->eth->dst_addr, &raw_mac) || o->ip->src_addr != dev_ip ||
	     o->ip->dst_addr != peer_ip))
		why = "a frame that is not from its IP to the peer's MAC and IP";
	if (why != NULL) {
		fprintf(stderr, "  droce0 sent %s (%u bytes, opcode 0x%02x)\n", why, f->len, o->op);
		return -1;
	}
	return 0;
}

int
hp_expect_aeth(uint32_t psn, uint8_t syn)
{
	int n = hp_collect_n(outf, OUT_MAX, 1);
	struct frame_info o;

	if (n != 1) {
		fprintf(stderr, "  expected one ACK/NAK from droce0, got %d frames\n", n);
		for (int i = 0; i < n && i < OUT_MAX; i++)
			if (hp_parse_out(&outf[i], &o) == 0)
				fprintf(stderr, "    op 0x%02x psn 0x%06x syn 0x%02x\n", o.op, o.psn, o.syn);
		return -1;
	}
	if (hp_parse_out(&outf[0], &o) != 0)
		return -1;
	if (o.op != IBV_OPCODE_RC_ACKNOWLEDGE || o.dqpn != PEER_QPN || o.psn != psn ||
	    (syn == AETH_ACK ? (o.syn & AETH_TYPE_MASK) != AETH_ACK : o.syn != syn)) {
		fprintf(stderr, "  expected ACK psn 0x%06x syn 0x%02x; got op 0x%02x dqpn 0x%x psn 0x%06x syn 0x%02x\n",
			psn, syn, o.op, o.dqpn, o.psn, o.syn);
		return -1;
	}
	return 0;
}

int
hp_expect_nak(uint32_t psn, uint8_t syn)
{
	int n = hp_collect_n(outf, OUT_MAX, 1);
	struct frame_info o;

	for (int i = 0; i < n && i < OUT_MAX; i++) {
		if (hp_parse_out(&outf[i], &o))
			return -1;
		if (o.op != IBV_OPCODE_RC_ACKNOWLEDGE || o.dqpn != PEER_QPN ||
		    (i == n - 1 ? o.psn != psn || o.syn != syn :
		     (o.syn & AETH_TYPE_MASK) != AETH_ACK || psn_cmp(o.psn, psn) >= 0)) {
			fprintf(stderr, "  expected ACKs then a NAK psn 0x%06x syn 0x%02x; frame %d of %d: "
				"op 0x%02x psn 0x%06x syn 0x%02x\n", psn, syn, i, n, o.op, o.psn, o.syn);
			return -1;
		}
	}
	if (n == 0)
		fprintf(stderr, "  no NAK from droce0\n");
	return n == 0 ? -1 : 0;
}

int
hp_expect_silence(void)
{
	int n = hp_collect(outf, OUT_MAX);
	struct frame_info o;

	if (n != 0) {
		fprintf(stderr, "  droce0 sent %d frames, expected none\n", n);
		for (int i = 0; i < n && i < OUT_MAX; i++)
			if (hp_parse_out(&outf[i], &o) == 0)
				fprintf(stderr, "    op 0x%02x psn 0x%06x syn 0x%02x\n", o.op, o.psn, o.syn);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* droce0's objects */

struct hp_world W;
struct frame F, G;

static struct hp_qp tqps[NB_TQP];

static uint8_t
guard_byte(uint32_t i)
{
	return (uint8_t)(0xa5 ^ (i * 29u));
}

static uint8_t *
guarded_alloc(uint32_t len, uint8_t **inner)
{
	uint8_t *raw = aligned_alloc(4096, GUARD + len + GUARD);

	if (raw == NULL)
		return NULL;
	for (uint32_t i = 0; i < GUARD; i++) {
		raw[i] = guard_byte(i);
		raw[GUARD + len + i] = guard_byte(i + 1);
	}
	*inner = raw + GUARD;
	return raw;
}

static int
guards_intact(const uint8_t *raw, uint32_t len, const char *what)
{
	for (uint32_t i = 0; i < GUARD; i++)
		if (raw[i] != guard_byte(i) || raw[GUARD + len + i] != guard_byte(i + 1)) {
			fprintf(stderr, "  guard bytes of %s overwritten (%s, offset %u)\n", what,
				raw[i] != guard_byte(i) ? "before" : "after", i);
			return -1;
		}
	return 0;
}

void
hp_mr_save(void)
{
	memcpy(W.shadow, W.buf, MR_LEN);
}

int
hp_mr_same_except(uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < MR_LEN; i++)
		if ((i < lo || i >= hi) && W.buf[i] != W.shadow[i]) {
			fprintf(stderr, "  MR byte at offset 0x%x changed (0x%02x -> 0x%02x)\n", i,
				W.shadow[i], W.buf[i]);
			return -1;
		}
	return 0;
}

int
hp_mr_same(void)
{
	return hp_mr_same_except(0, 0);
}

int
hp_memory_intact(void)
{
	static uint8_t ref[SMALL_LEN];

	if (guards_intact(W.raw, MR_LEN, "the MR") || guards_intact(W.raw2, SMALL_LEN, "the pd2 MR") ||
	    guards_intact(W.raw3, SMALL_LEN, "the local-only MR"))
		return -1;
	hp_fill(ref, SMALL_LEN, 2);
	if (memcmp(W.buf2, ref, SMALL_LEN) != 0) {
		fprintf(stderr, "  the MR of another PD was written\n");
		return -1;
	}
	hp_fill(ref, SMALL_LEN, 3);
	if (memcmp(W.buf3, ref, SMALL_LEN) != 0) {
		fprintf(stderr, "  the MR without remote access was written\n");
		return -1;
	}
	return 0;
}

uint64_t
hp_va(uint32_t off)
{
	return (uint64_t)(uintptr_t)W.buf + off;
}

int
hp_post_recvs(struct hp_qp *q, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)(q->posted % (int)RX_PER_QP);
		struct ibv_sge sge = { hp_va(q->area * QP_AREA + slot * RX_SLOT), q->recv_len, W.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)q->area << 16 | (uint64_t)q->posted,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(q->qp, &wr, &bad))
			return -1;
		q->posted++;
	}
	return 0;
}

void
hp_qp_destroy(struct hp_qp *q)
{
	if (q == NULL || !q->used)
		return;
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->scq)
		ibv_destroy_cq(q->scq);
	if (q->rcq)
		ibv_destroy_cq(q->rcq);
	memset(q, 0, sizeof(*q));
}

struct hp_qp *
hp_qp_new(enum ibv_qp_type type, const struct hp_qopt *o)
{
	static const struct hp_qopt dflt;
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct hp_qp *q = NULL;
	int mask;

	if (o == NULL)
		o = &dflt;
	for (int i = 0; i < NB_TQP && q == NULL; i++)
		if (!tqps[i].used)
			q = &tqps[i];
	if (q == NULL)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->used = true;
	q->area = (int)(q - tqps);
	q->type = type;
	q->recv_len = o->recv_len ? o->recv_len : RECV_LEN;
	q->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	q->rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (q->scq == NULL || q->rcq == NULL)
		goto err;
	ia.qp_type = type;
	ia.send_cq = q->scq;
	ia.recv_cq = q->rcq;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	q->qp = ibv_create_qp(W.pd, &ia);
	if (q->qp == NULL)
		goto err;
	q->qpn = q->qp->qp_num;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	q->epsn = o->rq_psn ? o->rq_psn : RQ_PSN;
	q->spsn = o->sq_psn ? o->sq_psn : SQ_PSN;
	if (type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = PEER_QPN;
		a.rq_psn = q->epsn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer_gid;
		if (o->peer_ip != 0)
			memcpy(&a.ah_attr.grh.dgid.raw[12], &o->peer_ip, 4);
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = o->max_dest_rd ? o->max_dest_rd : 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->spsn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = o->timeout ? o->timeout : 18;
		a.retry_cnt = o->retry_cnt_p1 ? o->retry_cnt_p1 - 1 : 7;
		a.rnr_retry = o->rnr_retry_p1 ? o->rnr_retry_p1 - 1 : 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		goto err;
	if (o->nrecv >= 0 && hp_post_recvs(q, o->nrecv ? o->nrecv : (int)RX_PER_QP))
		goto err;
	return q;
err:
	fprintf(stderr, "  cannot create a %s QP\n", type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" : "UD");
	hp_qp_destroy(q);
	return NULL;
}

enum ibv_qp_state
hp_qp_state(const struct hp_qp *q)
{
	return h_qp_state(q->qp);
}

int
hp_no_completion(const struct hp_qp *q)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(q->scq, 1, &wc);

	if (n == 0)
		n = ibv_poll_cq(q->rcq, 1, &wc);
	if (n != 0) {
		fprintf(stderr, "  unexpected completion on QP 0x%x: status %s opcode %d byte_len %u\n",
			q->qpn, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		return -1;
	}
	return 0;
}

int
hp_post_send_wr(struct hp_qp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(q->qp, wr, &bad);
}

int
hp_post_send(struct hp_qp *q, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t wr_id,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { hp_va(off), len, W.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 6;
	} else if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return hp_post_send_wr(q, &wr);
}

int
hp_expect_err_and_flush(struct hp_qp *q, int posted)
{
	struct ibv_wc wc[RX_PER_QP + 2];
	int n;

	if (hp_qp_state(q) != IBV_QPS_ERR) {
		fprintf(stderr, "  QP 0x%x in state %d, expected ERR\n", q->qpn, hp_qp_state(q));
		return -1;
	}
	n = h_poll(q->rcq, wc, posted, 2000);
	if (n != posted) {
		fprintf(stderr, "  %d of %d receives flushed\n", n, posted);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			fprintf(stderr, "  receive completed with %s, expected a flush\n",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
	if (hp_post_send(q, IBV_WR_SEND, LOC_OFF, 16, 0xf1, 0, 0) || hp_post_recvs(q, 1))
		return -1;
	if (h_poll(q->scq, wc, 1, 2000) != 1 || wc[0].status != IBV_WC_WR_FLUSH_ERR ||
	    wc[0].wr_id != 0xf1) {
		fprintf(stderr, "  a send posted in ERR did not flush\n");
		return -1;
	}
	if (h_poll(q->rcq, wc, 1, 2000) != 1 || wc[0].status != IBV_WC_WR_FLUSH_ERR) {
		fprintf(stderr, "  a receive posted in ERR did not flush\n");
		return -1;
	}
	return hp_no_completion(q);
}

/* ------------------------------------------------------------------ */
/* legitimate traffic */

int
hp_inject_send_only(struct hp_qp *q, uint32_t psn, const void *pay, uint32_t len)
{
	struct frame *f = malloc(sizeof(*f));
	struct ext x = ext_deth(QKEY, PEER_QPN);
	uint8_t op = q->type == IBV_QPT_RC ? IBV_OPCODE_RC_SEND_ONLY :
		     q->type == IBV_QPT_UC ? IBV_OPCODE_UC_SEND_ONLY : IBV_OPCODE_UD_SEND_ONLY;
	int ret;

	if (f == NULL)
		return -1;
	hp_build(f, op, q->qpn, psn, q->type == IBV_QPT_UD ? &x : NULL, pay, len);
	ret = hp_inject(f);
	free(f);
	return ret;
}

int
hp_expect_recv(struct hp_qp *q, const uint8_t *data, uint32_t len)
{
	struct ibv_wc wc;
	uint32_t grh = q->type == IBV_QPT_UD ? ROCE_GRH_LEN : 0;
	const uint8_t *p;

	if (h_poll(q->rcq, &wc, 1, 2000) != 1) {
		fprintf(stderr, "  no receive completion on QP 0x%x\n", q->qpn);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != len + grh || wc.qp_num != q->qpn) {
		fprintf(stderr, "  receive: status %s byte_len %u (expected %u)\n",
			ibv_wc_status_str(wc.status), wc.byte_len, len + grh);
		return -1;
	}
	p = (const uint8_t *)(uintptr_t)hp_va((uint32_t)(wc.wr_id >> 16) * QP_AREA +
					   (uint32_t)(wc.wr_id & 0xffff) % RX_PER_QP * RX_SLOT);
	if (memcmp(p + grh, data, len) != 0) {
		fprintf(stderr, "  received data differs\n");
		return -1;
	}
	return 0;
}

/*
 * A fresh RC QP whose PSNs wrap: a 3-packet SEND in (ACKed once), a 3-packet
 * SEND out (ACKed by the test), data checked both ways.
 */
static int
legit_rc(void)
{
	static uint8_t data[3000];
	struct hp_qopt o = { .rq_psn = 0xfffffe, .sq_psn = 0xffffff, .nrecv = 1 };
	struct hp_qp *q = hp_qp_new(IBV_QPT_RC, &o);
	struct frame *f = malloc(sizeof(*f));
	struct ibv_wc wc;
	struct frame_info po;
	int n, ret = -1;

	if (q == NULL || f == NULL)
		goto out;
	hp_fill(data, sizeof(data), 77);
	hp_build(f, IBV_OPCODE_RC_SEND_FIRST, q->qpn, 0xfffffe, NULL, data, PMTU);
	bth_init(frame_bth(f), IBV_OPCODE_RC_SEND_FIRST, 0, 0, DROCE_DEFAULT_PKEY, q->qpn, 0, 0xfffffe);
	frame_seal(f);
	hp_inject(f);
	hp_build(f, IBV_OPCODE_RC_SEND_MIDDLE, q->qpn, 0xffffff, NULL, data + PMTU, PMTU);
	bth_init(frame_bth(f), IBV_OPCODE_RC_SEND_MIDDLE, 0, 0, DROCE_DEFAULT_PKEY, q->qpn, 0, 0xffffff);
	frame_seal(f);
	hp_inject(f);
	hp_build(f, IBV_OPCODE_RC_SEND_LAST, q->qpn, 0, NULL, data + 2 * PMTU, sizeof(data) - 2 * PMTU);
	hp_inject(f);
	if (hp_settle() || hp_expect_recv(q, data, sizeof(data)) || hp_expect_aeth(0, AETH_ACK))
		goto out;

	hp_fill(W.buf + LOC_OFF, 2500, 78);
	if (hp_post_send(q, IBV_WR_SEND, LOC_OFF, 2500, 0x5e, 0, 0))
		goto out;
	n = hp_collect_n(outf, OUT_MAX, 3);
	if (n != 3) {
		fprintf(stderr, "  legit RC: droce0 sent %d frames for a 3-packet SEND\n", n);
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		static const uint8_t ops[3] = { IBV_OPCODE_RC_SEND_FIRST, IBV_OPCODE_RC_SEND_MIDDLE,
						IBV_OPCODE_RC_SEND_LAST };
		uint32_t len = i < 2 ? PMTU : 2500 - 2 * PMTU;

		if (hp_parse_out(&outf[i], &po))
			goto out;
		if (po.op != ops[i] || po.dqpn != PEER_QPN || po.psn != psn_add(0xffffff, i) ||
		    po.paylen != len || memcmp(po.pay, W.buf + LOC_OFF + i * PMTU, len) != 0) {
			fprintf(stderr, "  legit RC: packet %d: op 0x%02x psn 0x%06x len %u\n", i,
				po.op, po.psn, po.paylen);
			goto out;
		}
	}
	{
		struct ext x = ext_aeth(AETH_ACK | AETH_CREDIT_INVALID, 1);

		hp_build(f, IBV_OPCODE_RC_ACKNOWLEDGE, q->qpn, 1, &x, NULL, 0);
		hp_inject(f);
	}
	if (hp_settle() || h_poll(q->scq, &wc, 1, 2000) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 0x5e) {
		fprintf(stderr, "  legit RC: the SEND did not complete\n");
		goto out;
	}
	ret = hp_no_completion(q) || hp_expect_silence() ? -1 : 0;
out:
	if (ret)
		fprintf(stderr, "  legitimate RC exchange failed\n");
	free(f);
	hp_qp_destroy(q);
	return ret;
}

/* A fresh UD QP: a datagram in, a datagram out through an AH. */
static int
legit_ud(void)
{
	struct hp_qp *q = hp_qp_new(IBV_QPT_UD, &(struct hp_qopt){ .nrecv = 1 });
	uint8_t data[300];
	struct ibv_wc wc;
	struct frame_info po;
	int ret = -1;

	if (q == NULL)
		goto out;
	hp_fill(data, sizeof(data), 91);
	if (hp_inject_send_only(q, 0, data, sizeof(data)) || hp_settle() || hp_expect_recv(q, data, sizeof(data)))
		goto out;
	hp_fill(W.buf + LOC_OFF, 200, 92);
	{
		struct ibv_sge sge = { hp_va(LOC_OFF), 200, W.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0x0d, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		wr.wr.ud.ah = W.ah;
		wr.wr.ud.remote_qpn = PEER_QPN;
		wr.wr.ud.remote_qkey = QKEY;
		if (hp_post_send_wr(q, &wr))
			goto out;
	}
	if (hp_collect_n(outf, OUT_MAX, 1) != 1 || hp_parse_out(&outf[0], &po) ||
	    po.op != IBV_OPCODE_UD_SEND_ONLY || po.dqpn != PEER_QPN || po.paylen != 200 ||
	    deth_qkey((const struct roce_deth *)po.ext) != QKEY ||
	    deth_sqp((const struct roce_deth *)po.ext) != q->qpn ||
	    memcmp(po.pay, W.buf + LOC_OFF, 200) != 0) {
		fprintf(stderr, "  legit UD: droce0's datagram is wrong or missing\n");
		goto out;
	}
	if (h_poll(q->scq, &wc, 1, 2000) != 1 || wc.status != IBV_WC_SUCCESS)
		goto out;
	ret = hp_no_completion(q);
out:
	if (ret)
		fprintf(stderr, "  legitimate UD exchange failed\n");
	hp_qp_destroy(q);
	return ret;
}

int
hp_finish(void)
{
	if (hp_memory_intact() || hp_settle())
		return TEST_FAILED;
	hp_drain();
	if (legit_rc() || legit_ud() || hp_memory_intact())
		return TEST_FAILED;
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* per-case world */

static int
hp_setup(void)
{
	memset(&W, 0, sizeof(W));
	W.pd = ibv_alloc_pd(ctx);
	W.pd2 = ibv_alloc_pd(ctx);
	W.raw = guarded_alloc(MR_LEN, &W.buf);
	W.raw2 = guarded_alloc(SMALL_LEN, &W.buf2);
	W.raw3 = guarded_alloc(SMALL_LEN, &W.buf3);
	W.shadow = malloc(MR_LEN);
	if (W.pd == NULL || W.pd2 == NULL || W.raw == NULL || W.raw2 == NULL || W.raw3 == NULL ||
	    W.shadow == NULL)
		return -1;
	hp_fill(W.buf, MR_LEN, 1);
	hp_fill(W.buf2, SMALL_LEN, 2);
	hp_fill(W.buf3, SMALL_LEN, 3);
	W.mr = ibv_reg_mr(W.pd, W.buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	W.mr2 = ibv_reg_mr(W.pd2, W.buf2, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	W.mr3 = ibv_reg_mr(W.pd, W.buf3, SMALL_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (W.mr == NULL || W.mr2 == NULL || W.mr3 == NULL)
		return -1;
	{
		struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

		ah.grh.dgid = peer_gid;
		ah.grh.hop_limit = 64;
		W.ah = ibv_create_ah(W.pd, &ah);
	}
	W.rc = hp_qp_new(IBV_QPT_RC, NULL);
	W.uc = hp_qp_new(IBV_QPT_UC, NULL);
	W.ud = hp_qp_new(IBV_QPT_UD, NULL);
	if (W.ah == NULL || W.rc == NULL || W.uc == NULL || W.ud == NULL)
		return -1;
	hp_drain();
	expect_rx = hp_stat("rx_pkts");
	return 0;
}

static void
hp_teardown(void)
{
	hp_drain();
	for (int i = 0; i < NB_TQP; i++)
		hp_qp_destroy(&tqps[i]);
	if (W.ah)
		ibv_destroy_ah(W.ah);
	if (W.mr)
		ibv_dereg_mr(W.mr);
	if (W.mr2)
		ibv_dereg_mr(W.mr2);
	if (W.mr3)
		ibv_dereg_mr(W.mr3);
	if (W.pd)
		ibv_dealloc_pd(W.pd);
	if (W.pd2)
		ibv_dealloc_pd(W.pd2);
	free(W.raw);
	free(W.raw2);
	free(W.raw3);
	free(W.shadow);
	memset(&W, 0, sizeof(W));
	expect_rx = hp_stat("rx_pkts");
}

/* ------------------------------------------------------------------ */
/* start-up */

static int
raw_port_setup(void)
{
	struct rte_eth_conf conf = { 0 };

	if (rte_eth_dev_get_port_by_name("net_ring_h1", &raw_port) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("hostile_pool", 8191, 256, 0,
				       RTE_PKTMBUF_HEADROOM + FRAME_MAX + 64, rte_socket_id());
	if (pool == NULL)
		return -1;
	if (rte_eth_dev_configure(raw_port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(raw_port, 0, 1024, rte_socket_id(), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(raw_port, 0, 1024, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(raw_port) != 0)
		return -1;
	return 0;
}

int
hp_main(int argc, char **argv, const char *suite, const struct droce_test_case *cases, int n)
{
	struct ibv_device **devs;
	int ndev, rc;

	if (h_init_eal(argc, argv, "dh",
		       (const char *const[]){ "--log-level=pmd.rdma.roce:error", NULL }))
		return 1;
	dev_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	peer_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	from_peer = (struct frame_ends){ .src_mac = raw_mac, .dst_mac = dev_mac, .src_ip = peer_ip,
					 .dst_ip = dev_ip, .sport = UDP_SPORT };
	memset(&peer_gid, 0, sizeof(peer_gid));
	peer_gid.raw[10] = peer_gid.raw[11] = 0xff;
	memcpy(&peer_gid.raw[12], &peer_ip, 4);
	if (droce_ring_pair_create("net_ring_h0", "net_ring_h1") != 0 || raw_port_setup() != 0) {
		fprintf(stderr, "topology set-up failed\n");
		return 1;
	}
	/*
	 * rto_min_us=0: no early resends. The scripted peer answers when a
	 * test says so, not within a round trip, and the tests count every
	 * frame the device sends
	 */
	if (droce_dev_create(DEV_NAME, "ethdev=net_ring_h0,ip=10.0.0.1,mtu=4200,rto_min_us=0,"
			     "mac=02:00:00:00:00:01,neigh=10.0.0.2@02:00:00:00:00:02") != 0) {
		fprintf(stderr, "droce_dev_create failed\n");
		return 1;
	}
	devs = ibv_get_device_list(&ndev);
	for (int i = 0; devs != NULL && i < ndev && ctx == NULL; i++)
		if (strcmp(ibv_get_device_name(devs[i]), DEV_NAME) == 0)
			ctx = ibv_open_device(devs[i]);
	if (ctx == NULL || (pump_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0)) == NULL) {
		fprintf(stderr, "cannot open %s\n", DEV_NAME);
		return 1;
	}
	printf("# %s progress\n", h_inline() ? "inline" : "engine lcore");
	rc = droce_test_run(suite, cases, n, hp_setup, hp_teardown);
	ibv_destroy_cq(pump_cq);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return rc;
}
