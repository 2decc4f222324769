/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: moves WQEs from the posted SQ ring into the QP's window and
 * segments them into packets at the path MTU. RC WQEs stay in the window
 * until acknowledged; go-back-N rewinds the cursor to a PSN, and since
 * segmentation is a pure function of (WQE, packet index), a resent packet is
 * identical to the original.
 */
#include <rte_cycles.h>

#include "roce_loc.h"

#define REQ_BUDGET	DROCE_BURST	/* packets per QP per loop */

/*
 * RC: PSNs sent beyond the oldest unacknowledged one. Without a bound, a
 * multi-megabyte message goes out in one stream; a receiver that falls
 * behind (its rx ring full, its CPU shared) loses the tail, and each
 * go-back-N resends everything after the loss, to be lost again. The
 * responder ACKs every DROCE_ACK_EVERY packets, so the bound keeps several
 * ACKs in flight. A READ may span more PSNs; it is sent when below the bound
 * and holds what follows until its responses arrive.
 */
#define REQ_MAX_UNACKED	(4 * DROCE_ACK_EVERY)

static inline struct droce_send_wqe *
win_at(const struct roce_qp *qp, uint32_t i)
{
	return *roce_win_slot(qp, i);
}

static uint8_t
wr_opcode(const struct droce_send_wqe *wqe, bool first, bool last)
{
	bool imm = wqe->opcode == IBV_WR_SEND_WITH_IMM || wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool write = wqe->opcode == IBV_WR_RDMA_WRITE || wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

	if (write) {
		if (first && last)
			return imm ? IBV_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE : IBV_OPCODE_RDMA_WRITE_ONLY;
		if (first)
			return IBV_OPCODE_RDMA_WRITE_FIRST;
		if (last)
			return imm ? IBV_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE : IBV_OPCODE_RDMA_WRITE_LAST;
		return IBV_OPCODE_RDMA_WRITE_MIDDLE;
	}
	if (wqe->opcode == IBV_WR_ATOMIC_WRITE)	/* RC, 8 bytes: one packet (the facade checked) */
		return ROCE_OPCODE_ATOMIC_WRITE;
	if (wqe->opcode == IBV_WR_SEND_WITH_INV && last)	/* RC, XRC: the facade checked */
		return first ? ROCE_OPCODE_SEND_ONLY_INV : ROCE_OPCODE_SEND_LAST_INV;
	if (first && last)
		return imm ? IBV_OPCODE_SEND_ONLY_WITH_IMMEDIATE : IBV_OPCODE_SEND_ONLY;
	if (first)
		return IBV_OPCODE_SEND_FIRST;
	if (last)
		return imm ? IBV_OPCODE_SEND_LAST_WITH_IMMEDIATE : IBV_OPCODE_SEND_LAST;
	return IBV_OPCODE_SEND_MIDDLE;
}

static uint8_t
transport_of(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? IBV_OPCODE_RC : t == IBV_QPT_UC ? IBV_OPCODE_UC :
	       t == IBV_QPT_XRC_SEND ? ROCE_OPCODE_XRC : IBV_OPCODE_UD;
}

static uint32_t
qp_mtu(const struct roce_dev *dev, const struct roce_qp *qp)
{
	return qp->fp.type == IBV_QPT_UD ? dev->ib_mtu : qp->mtu;
}

/* e->psn moved on past what was sent: the responses valid now reach further */
static inline void
sent_upto(struct roce_qp_eng *e)
{
	if (psn_cmp(e->psn, e->psn_hi) > 0)
		e->psn_hi = e->psn;
}

/*
 * READ request (from packet e->cur_pkt on, after a rewind) or atomic request:
 * one packet that stands for all the WQE's PSNs.
 */
static int
send_rd_atomic(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *wqe)
{
	struct roce_qp_eng *e = &qp->e;
	bool read = wqe->opcode == IBV_WR_RDMA_READ;
	uint8_t op = transport_of(qp->fp.type) |
		(read ? IBV_OPCODE_RDMA_READ_REQUEST :
		 wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_OPCODE_COMPARE_SWAP :
		 IBV_OPCODE_FETCH_ADD);
	const struct roce_opcode_info *oi = &roce_opcode_tbl[op];
	struct rte_mbuf *m = roce_pkt_alloc(qp->q);
	struct roce_bth *bth;

	if (m == NULL)
		return -ENOBUFS;
	bth = (struct roce_bth *)rte_pktmbuf_append(m, oi->hdr_len + ROCE_ICRC_LEN);
	bth_init(bth, op, 0, 0, DROCE_DEFAULT_PKEY, qp->attr.dest_qp_num, 1, e->psn);
	if (oi->flags & ROCE_OPF_XRCETH)
		xrceth_init(bth_xrceth(bth), wqe->xrc_srqn);
	if (read) {
		uint32_t off = e->cur_pkt * qp->mtu;

		reth_init(bth_reth(bth), wqe->wr.rdma.remote_addr + off,
			  wqe->wr.rdma.rkey, wqe->length - off);
	} else {
		atmeth_init(bth_atmeth(bth), wqe->wr.atomic.remote_addr,
			    wqe->wr.atomic.rkey,
			    wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? wqe->wr.atomic.swap :
			    wqe->wr.atomic.compare_add, wqe->wr.atomic.compare_add);
	}
	roce_qp_cnt_tx(qp);
	if (roce_ip_xmit(qp->q, m, qp->av.dip, qp->sport, qp->av.tos, qp->av.ttl) != 0)
		return -EAGAIN;
	e->pkts_since_ackreq = 0;
	e->psn = psn_add(wqe->last_psn, 1);
	sent_upto(e);
	return 1;
}

/*
 * IBA 9.7.6.1: at most max_rd_atomic READs/atomics outstanding; a FENCEd WR
 * waits for every earlier READ/atomic to complete. true: @wqe may start.
 */
static bool
rd_atomic_allowed(const struct roce_qp *qp, const struct droce_send_wqe *wqe)
{
	const struct roce_qp_eng *e = &qp->e;
	uint32_t n = 0, max = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
	bool rd = roce_wqe_is_rd_atomic(wqe), fence = wqe->send_flags & IBV_SEND_FENCE;

	if (!rd && !fence)
		return true;
	for (uint32_t i = e->win_head; i != e->win_cur; i++)
		n += roce_wqe_is_rd_atomic(win_at(qp, i));
	return fence ? n == 0 : n < max;
}

/*
 * A message send_pkt_as() builds with @one: the only packet of an RC or UC
 * SEND or RDMA WRITE, with or without immediate data (no UD, XRC or atomic
 * header, no invalidation, no segmentation). npkts is set (start_wqe).
 */
static inline bool
wqe_is_one(const struct roce_qp *qp, const struct droce_send_wqe *wqe)
{
	return wqe->npkts == 1 && (qp->fp.type == IBV_QPT_RC || qp->fp.type == IBV_QPT_UC) &&
	       (wqe->opcode == IBV_WR_SEND || wqe->opcode == IBV_WR_SEND_WITH_IMM ||
		wqe->opcode == IBV_WR_RDMA_WRITE || wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
}

/*
 * Build and queue packet number e->cur_pkt of @wqe. @one, a constant at
 * each call: a message wqe_is_one() says is one, for which the compiler
 * drops the tests of what it cannot be (its other call builds the rest).
 */
static __rte_always_inline int
send_pkt_as(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *wqe, bool one)
{
	struct roce_qp_eng *e = &qp->e;
	bool ud = !one && qp->fp.type == IBV_QPT_UD;
	uint32_t mtu = qp_mtu(dev, qp);
	uint32_t pay = one ? wqe->length : RTE_MIN(mtu, wqe->length - e->cur_off);
	bool first = one || e->cur_pkt == 0;
	bool last = one || e->cur_off + pay == wqe->length;
	uint8_t opcode = transport_of(qp->fp.type) | wr_opcode(wqe, first, last);
	const struct roce_opcode_info *oi = &roce_opcode_tbl[opcode];
	uint32_t pad = -pay & 3;
	const struct droce_av *av = ud ? &wqe->wr.ud.av : &qp->av;
	uint32_t dqpn = ud ? wqe->wr.ud.remote_qpn : qp->attr.dest_qp_num;
	uint32_t l4 = oi->hdr_len + pay + pad + ROCE_ICRC_LEN;
	bool ackreq = false, summed, zc;
	struct roce_txf t;
	struct roce_bth *bth;
	uint16_t sport;
	uint8_t *p;

	if (!one && roce_wqe_is_rd_atomic(wqe))
		return send_rd_atomic(dev, qp, wqe);
	if (roce_qp_reliable(qp))
		ackreq = last || ++e->pkts_since_ackreq >= DROCE_ACK_EVERY;
	/* RC's WQEs complete on ACKs, after the flush (roce_tx_settle); others at once */
	zc = !wqe->inl && roce_qp_reliable(qp) && roce_tx_zc_ok(qp->q, wqe->length, av->dip);
	bth = roce_txf_begin(qp->q, &t, ud ? NULL : qp, av->dip, l4, zc ? oi->hdr_len : l4);
	if (bth == NULL)
		return -ENOBUFS;
	zc = zc && t.m != NULL;	/* a frame in the port's slot is written once, there */
	bth_init(bth, opcode, last && (wqe->send_flags & IBV_SEND_SOLICITED),
		 pad, DROCE_DEFAULT_PKEY, dqpn, ackreq, e->psn);
	if (!one && (oi->flags & ROCE_OPF_XRCETH))
		xrceth_init(bth_xrceth(bth), wqe->xrc_srqn);
	if (!one && (oi->flags & ROCE_OPF_DETH)) {
		/* IBA 10.2.4: a Q_Key with the high bit set means "use the QP's" */
		uint32_t qkey = (int32_t)wqe->wr.ud.remote_qkey < 0 ? qp->attr.qkey : wqe->wr.ud.remote_qkey;

		deth_init(bth_deth(bth), qkey, qp->fp.qpn);
	}
	if (oi->flags & ROCE_OPF_RETH)
		reth_init(bth_reth(bth), wqe->wr.rdma.remote_addr, wqe->wr.rdma.rkey, wqe->length);
	if (oi->flags & ROCE_OPF_IMMDT)
		bth_set_immdt(bth, oi->flags, wqe->imm_data);
	if (!one && (oi->flags & ROCE_OPF_IETH))
		bth_set_ieth(bth, wqe->invalidate_rkey);
	p = bth_payload(bth);
	sport = ud ? roce_qp_ud_sport(qp, av->dip, dqpn) : qp->sport;
	if (zc) {
		if (roce_tx_zc(qp->q, t.m, bth, oi->hdr_len, wqe->sge, e->cur_off, pay, av->dip,
			       sport) != 0) {
			roce_txf_abort(&t);
			return -ENOBUFS;
		}
		summed = true;
	} else {
		summed = !wqe->inl && roce_tx_sum_copy(qp->q, l4, bth, oi->hdr_len, wqe->sge,
						       e->cur_off, pay, av->dip, sport);
	}
	if (!summed) {
		if (wqe->inl) {
			memcpy(p, wqe->inline_data + e->cur_off, pay);
		} else if (roce_copy_from_sge(p, wqe->sge, e->cur_off, pay) != 0) {
			roce_txf_abort(&t);	/* an ODP page that is not there */
			return -EFAULT;
		}
		memset(p + pay, 0, pad);
	}
	roce_qp_cnt_tx(qp);
	if (roce_txf_send(qp->q, &t, av->dip, sport, av->tos, av->ttl, qp->mc_noloop, l4,
			  summed) != 0)
		return -EAGAIN;
	if (ackreq)
		e->pkts_since_ackreq = 0;
	e->psn = psn_add(e->psn, 1);
	sent_upto(e);
	e->cur_pkt++;
	e->cur_off += pay;
	return last;
}

static int
send_pkt(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *wqe)
{
	return wqe_is_one(qp, wqe) ? send_pkt_as(dev, qp, wqe, true) :
				     send_pkt_as(dev, qp, wqe, false);
}

/*
 * The local ACK timer runs from the last request sent (0 = infinite); so
 * does the early resend's, unless this is a resend after one: a peer that
 * is gone then times out as it would without them.
 */
static inline void
arm_retry(struct roce_qp *qp, uint64_t now)
{
	struct roce_qp_eng *e = &qp->e;

	e->arm_due = 0;		/* armed from a whole iteration's clock */
	if (e->fast_resend && e->retry_tsc != 0)
		return;
	e->retry_tsc = qp->tmo_tsc ? now + qp->tmo_tsc : 0;
	e->fast_tsc = e->rto_fast ? now + ((uint64_t)e->rto_fast << e->fast_shift) : 0;
}

/*
 * The next packet cannot leave (no mbuf, or the peer's MAC not known yet):
 * each retry waits at least STALL_MIN_MS, so that ARP's own retries (10 ms,
 * doubling) and a pool that drains have their time even under a short ACK
 * timeout; after retry_cnt + 1 of them the WR ends in RETRY_EXC_ERR.
 */
#define STALL_MIN_MS	100

static void
arm_stall(struct roce_qp *qp, uint64_t now)
{
	uint64_t min = rte_get_timer_hz() / 1000 * STALL_MIN_MS;

	qp->e.retry_tsc = qp->tmo_tsc ? now + RTE_MAX(qp->tmo_tsc, min) : 0;
}

/*
 * An RC packet could not leave: no mbuf, no neighbour yet, or a port that
 * takes nothing (a peer that stopped draining its link). The local ACK
 * timer runs meanwhile, even with nothing outstanding (a timeout may have
 * rewound to the first packet of the oldest WQE), so that a WR which cannot
 * leave for a whole retry budget ends in IBV_WC_RETRY_EXC_ERR rather than
 * waiting forever.
 */
static void
req_stall(struct roce_qp *qp, uint64_t now, bool stale)
{
	if (roce_qp_reliable(qp) && !qp->e.tx_stalled) {
		qp->e.tx_stalled = 1;
		/* a stale clock arms nothing: the next whole iteration (check_timeout) */
		if (qp->e.retry_tsc == 0 && !stale)
			arm_stall(qp, now);
	}
}

/*
 * Go-back-N: (re)send from @psn, the oldest unacknowledged PSN, which lies
 * in a WQE of the window that has its PSNs (one sent, the one being sent: a
 * loss in a long message is resent at once, not after the whole message and
 * a timeout; or one sent before an earlier rewind), or follows them all.
 * The cursor may move forward too: an acknowledgement of what was sent
 * before a rewind skips what need not be sent again.
 */
void
roce_req_rewind(struct roce_qp *qp, uint32_t psn)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t i;

	for (i = e->win_head; i != e->win_tail; i++) {
		struct droce_send_wqe *w = win_at(qp, i);

		if (w->npkts == 0)
			break;		/* not begun: no PSNs yet */
		if (psn_cmp(psn, w->first_psn) >= 0 && psn_cmp(psn, w->last_psn) <= 0) {
			e->win_cur = i;
			e->cur_pkt = psn_diff(psn, w->first_psn);
			e->cur_off = e->cur_pkt * qp->mtu;
			e->psn = psn;
			return;
		}
	}
	/* everything begun is acknowledged: go on with the next WQE */
	e->win_cur = i;
	e->cur_pkt = 0;
	e->cur_off = 0;
	e->psn = psn;
}

/*
 * Whether a READ or an atomic has been sent and not answered. Early resends
 * leave such a QP to its local ACK timer: a READ resent is executed again
 * from its PSN (megabytes of responses, queued ahead of those still due),
 * and its answer takes as long as its responses, not a round trip.
 */
static bool
rd_atomic_outstanding(const struct roce_qp *qp)
{
	const struct roce_qp_eng *e = &qp->e;

	for (uint32_t i = e->win_head; i != e->win_tail; i++) {
		const struct droce_send_wqe *w = win_at(qp, i);

		if (w->npkts == 0)
			break;		/* not begun */
		if (roce_wqe_is_rd_atomic(w))
			return true;
	}
	return false;
}

/*
 * The longest early resend delay of @qp (see roce_req_rtt), in timer
 * cycles; 0 with no local ACK timer (timeout 0, IBA 9.7.6.1.3: the
 * application asked for no retransmission timer at all).
 */
static uint64_t
rto_cap(const struct roce_dev *dev, const struct roce_qp *qp)
{
	return RTE_MIN(dev->tsc_hz / 1000000 * DROCE_RTO_MAX_US, qp->tmo_tsc / 8);
}

/*
 * Early resend (adaptive retransmission, as RoCE NICs do it): the peer has
 * not answered within its measured round trip (roce_req_rtt), so a request
 * or its answer was probably lost where no later packet could reveal it
 * with a sequence NAK: the tail of a burst, the NAK itself, or a resent
 * packet. Resend now (a tail probe, then from the oldest unacknowledged
 * PSN) rather than after the local ACK timeout (4.096 us x 2^timeout,
 * often tens of milliseconds).
 * Each waits twice as long as the one before, and they stop once that
 * would pass rto_cap (an outage longer than a few milliseconds is left to
 * the local ACK timer); the peer's next answer starts them over. They leave
 * the local ACK timer's deadline as it was and do not use retry_cnt: a peer
 * that is gone fails exactly as without them.
 */
static void
fast_resend(struct roce_dev *dev, struct roce_qp *qp, uint64_t now)
{
	struct roce_qp_eng *e = &qp->e;

	if (e->tx_stalled || ((uint64_t)e->rto_fast << e->fast_shift) > rto_cap(dev, qp) ||
	    rd_atomic_outstanding(qp)) {
		e->fast_tsc = 0;
		return;
	}
	/*
	 * Due: only once an iteration that read the port has passed since it
	 * fell due. The answer may be waiting there, or the peer may not have
	 * run: after a pause in the application's polls (inline progress), the
	 * first iteration finds everything late, its peer in the same thread
	 * included, and answered a moment later.
	 */
	if (!e->fast_due) {
		e->fast_due = 1;
		e->fast_round = qp->q->rx_rounds;
		return;
	}
	if (qp->q->rx_rounds == e->fast_round)
		return;
	e->fast_due = 0;
	e->fast_shift++;
	ROCE_QP_CNT(dev, qp, fast_retransmits);
	e->rtt_start = 0;	/* Karn: an answer to a resent PSN times nothing */
	/* re-armed now, as the resend's packets will not */
	e->fast_tsc = now + ((uint64_t)e->rto_fast << e->fast_shift);
	e->fast_resend = 1;
	/*
	 * The first of a row resends the last request sent, alone (a tail
	 * probe): if everything before it arrived, the responder answers its
	 * duplicate with an ACK of them all; if not, it is out of sequence
	 * and the responder NAKs the gap, which goes back there. One frame,
	 * not the whole window: with thousands of QPs late because the queues
	 * are long, whole windows resent early made them longer still. The
	 * next ones go back to the oldest unacknowledged PSN, as the NAK (sent
	 * once for a gap) may be what was lost.
	 */
	roce_req_rewind(qp, e->fast_shift == 1 && psn_cmp(e->psn_hi, e->una) > 0 ?
			    psn_add(e->psn_hi, -1) : e->una);
}

/*
 * Before the first round trip is measured (RTS): early resends after the
 * longest delay, so that a first request or its answer lost does not wait
 * for the local ACK timer (RFC 6298 starts at 1 s for the same reason).
 */
void
roce_req_rto_init(const struct roce_dev *dev, struct roce_qp *qp)
{
	uint64_t hi = rto_cap(dev, qp);

	qp->e.rto_fast = dev->rto_min == 0 || hi < dev->rto_min ? 0 : (uint32_t)hi;
	qp->e.fast_shift = 0;
}

/*
 * The peer acknowledged up to e->una, beyond what it had before: it is
 * alive, so early resends start over, from now. If the request being
 * timed is acknowledged, its round trip updates the estimate (the smoothed
 * value and mean deviation of RFC 6298, in timer cycles) and the early
 * resend delay: smoothed + 4 deviations, at least the device's rto_min_us
 * (DROCE_RTO_MIN_US by default), at most rto_cap; none when that range is
 * empty (a local ACK timeout too short to gain from them) or rto_min_us=0.
 */
void
roce_req_rtt(struct roce_dev *dev, struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	uint64_t now = roce_clock(qp->q);
	uint64_t lo, hi, rto;
	uint32_t s;

	e->fast_shift = 0;
	e->fast_resend = 0;
	e->fast_due = 0;
	if (e->rtt_start != 0 && psn_cmp(e->una, e->rtt_psn) > 0) {
		s = RTE_MIN((uint32_t)now - e->rtt_start, UINT32_MAX / 16);
		e->rtt_start = 0;
		if (e->srtt == 0) {
			e->srtt = RTE_MAX(s, 1U);
			e->rttvar = s / 2;
		} else {
			uint32_t d = e->srtt > s ? e->srtt - s : s - e->srtt;

			e->rttvar = e->rttvar - e->rttvar / 4 + d / 4;
			e->srtt = e->srtt - e->srtt / 8 + s / 8;
		}
		lo = dev->rto_min;
		hi = rto_cap(dev, qp);
		rto = RTE_MAX((uint64_t)e->srtt + 4 * (uint64_t)e->rttvar, lo);
		e->rto_fast = lo == 0 || hi < lo ? 0 : (uint32_t)RTE_MIN(rto, hi);
	}
	e->fast_tsc = e->rto_fast ? now + e->rto_fast : 0;
}

static void
check_timeout(struct roce_dev *dev, struct roce_qp *qp, uint64_t now)
{
	struct roce_qp_eng *e = &qp->e;

	/* nothing outstanding, unless the next packet cannot leave (roce_req_run) */
	if (e->win_head == e->win_cur && e->cur_pkt == 0 && !e->tx_stalled) {
		e->retry_tsc = 0;
		e->fast_tsc = 0;
		e->arm_due = 0;
		return;
	}
	/* sent by a post's short run, after the deadlines now set: from now on, then */
	if (e->arm_due) {
		e->arm_due = 0;
		arm_retry(qp, now);
		return;
	}
	if (e->retry_tsc == 0 && qp->tmo_tsc != 0) {
		if (e->tx_stalled)
			arm_stall(qp, now);
		else
			arm_retry(qp, now);
		return;
	}
	if (unlikely(e->fast_tsc != 0) && now >= e->fast_tsc &&
	    (now < e->retry_tsc || e->retry_tsc == 0)) {
		fast_resend(dev, qp, now);
		return;
	}
	if (now < e->retry_tsc || e->retry_tsc == 0)
		return;
	ROCE_QP_CNT(dev, qp, timeouts);
	e->fast_resend = 0;
	e->rtt_start = 0;
	if (e->retry_left-- == 0) {
		/* in ERR before the completion that says so: a query after it sees ERR */
		roce_qp_to_err(dev, qp);
		roce_comp_send_wqe(qp, win_at(qp, e->win_head), IBV_WC_RETRY_EXC_ERR);
		e->win_head++;
		return;
	}
	ROCE_QP_CNT(dev, qp, retransmits);
	/* a second timeout in a row: maybe the peer came back with another MAC */
	if (e->retry_left + 1 < qp->attr.retry_cnt)
		roce_neigh_confirm(qp->q, qp->av.dip);
	roce_req_rewind(qp, e->una);
	if (e->tx_stalled)
		arm_stall(qp, now);
	else
		arm_retry(qp, now);
}

/* @w, just taken from the send queue, at the window's tail: not started */
static inline void
win_push(struct roce_qp *qp, struct droce_send_wqe *w)
{
	w->npkts = 0;
	*roce_win_slot(qp, qp->e.win_tail++) = w;
}

static void
pull_posted(struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t space = qp->fp.sq.size - (e->win_tail - e->win_head);
	void *tmp[DROCE_BURST];
	unsigned int n = 0;

	if (space == 0)
		return;
	space = RTE_MIN(space, (uint32_t)DROCE_BURST);
	RTE_ASSERT(qp->fp.sq.posted == NULL);	/* a QP's own queue, no SRQ's ring */
	if (likely(qp->tm_posted == NULL)) {	/* straight into the window */
		n = roce_wq_avail(&qp->fp.sq, space);
		for (unsigned int i = 0; i < n; i++)
			win_push(qp, roce_wq_next_posted(&qp->fp.sq));
		roce_wq_took(&qp->fp.sq, n);
		return;
	}
	/* the engine's own (a rendezvous READ, its FIN) before the application's */
	n = rte_ring_dequeue_burst(qp->tm_posted, tmp, space, NULL);
	n += roce_wq_pull(&qp->fp.sq, tmp + n, space - n);
	for (unsigned int i = 0; i < n; i++)
		win_push(qp, tmp[i]);
}

static inline bool
wqe_is_local(const struct droce_send_wqe *w)
{
	return w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV;
}

/*
 * A BIND_MW or LOCAL_INV WQE: nothing is sent; it is executed once every
 * WQE before it has completed, so that no request still in flight sees the
 * window change under it (a bind is fenced; the kernel's rxe too runs these
 * in send-queue order), and completes at once. A failure
 * completes it in error (a bind with IBV_WC_MW_BIND_ERR, an invalidation
 * with IBV_WC_LOC_QP_OP_ERR, as rxe) and takes the QP to ERR. false: it
 * waits for earlier WQEs.
 */
static bool
run_local(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *wqe)
{
	struct roce_qp_eng *e = &qp->e;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (e->win_head != e->win_cur)
		return false;
	if (wqe->opcode == IBV_WR_BIND_MW) {
		if (roce_mw_bind(dev, qp, wqe) != 0)
			st = IBV_WC_MW_BIND_ERR;
	} else if (roce_mw_invalidate(dev, qp, qp->pd, wqe->invalidate_rkey, false) != 0) {
		st = IBV_WC_LOC_QP_OP_ERR;
	}
	if (st != IBV_WC_SUCCESS)
		roce_qp_to_err(dev, qp);	/* before the completion that says so */
	roce_comp_send_wqe(qp, wqe, st);
	e->win_head++;
	e->win_cur++;
	return true;
}

/* First transmission of a WQE: check its local keys and assign its PSNs. */
static int
start_wqe(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *wqe)
{
	uint32_t mtu = qp_mtu(dev, qp);
	int access = roce_wqe_is_rd_atomic(wqe) ? IBV_ACCESS_LOCAL_WRITE : 0;

	/* a rendezvous READ lands in a tagged buffer: memory of the TM SRQ's PD */
	if (!wqe->inl && roce_sge_check(dev, unlikely(wqe->tm) ? qp->srq->pd : qp->pd,
					wqe->sge, wqe->num_sge, access) != 0)
		return -EACCES;
	/* an MTU is a power of two: a shift, not a division */
	wqe->npkts = wqe->length ? (wqe->length + mtu - 1) >> rte_bsf32(mtu) : 1;
	wqe->first_psn = qp->e.psn;
	wqe->last_psn = psn_add(qp->e.psn, wqe->npkts - 1);
	return 0;
}

/*
 * Send what @qp may send now. @stale (a post's short iteration: the clock
 * as the last whole iteration left it): no timer fires and no deadline is
 * set; the next whole iteration sets them from its own clock, as if the
 * packets had left then (later than they did, never earlier; a timeout
 * due before the post waits one more period). Its RTT sample starts from
 * that clock (longer than the round trip by the time since that iteration
 * began, at most DROCE_CLOCK_GAP_US: roce_req_rtt's estimate errs long).
 */
void
roce_req_run(struct roce_dev *dev, struct roce_qp *qp, bool stale)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t st = roce_qp_state(qp);
	unsigned int budget = REQ_BUDGET;
	uint32_t psn0;
	uint64_t now;
	bool fresh;

	if (st == IBV_QPS_ERR) {
		roce_qp_flush(dev, qp);
		return;
	}
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return;
	/* SQD: finish the messages already begun, start no new one (IBA 10.3.1) */
	if (st != IBV_QPS_SQD && e->win_tail - e->win_head < qp->fp.sq.size &&
	    roce_sq_pending(qp))
		pull_posted(qp);
	if (e->win_cur == e->win_tail && e->win_head == e->win_cur)
		return;
	now = stale ? qp->q->clock : roce_clock(qp->q);
	if (roce_qp_reliable(qp)) {
		/* waiting out an RNR NAK's delay is not waiting for an ACK */
		if (now < e->rnr_tsc)
			return;
		if (!stale) {
			check_timeout(dev, qp, now);
			if (roce_qp_state(qp) == IBV_QPS_ERR)
				return;
		}
	}
	while (budget-- && e->win_cur != e->win_tail) {
		struct droce_send_wqe *wqe = win_at(qp, e->win_cur);
		int ret;

		if (st == IBV_QPS_SQD && e->cur_pkt == 0 && wqe->npkts == 0)
			return;
		if (unlikely(wqe_is_local(wqe)) && e->cur_pkt == 0 && wqe->npkts == 0) {
			if (!run_local(dev, qp, wqe) || roce_qp_state(qp) == IBV_QPS_ERR)
				return;
			continue;
		}
		if (e->cur_pkt == 0 && wqe->npkts == 0 && !rd_atomic_allowed(qp, wqe))
			return;
		if (roce_qp_reliable(qp) && psn_diff(e->psn, e->una) >= REQ_MAX_UNACKED)
			return;
		if (e->cur_pkt == 0 && wqe->npkts == 0 && start_wqe(dev, qp, wqe) != 0) {
			/* a bad local key fails the WR; the QP goes to ERR */
			if (e->win_cur == e->win_head) {
				roce_qp_to_err(dev, qp);	/* before the completion */
				roce_comp_send_wqe(qp, wqe, IBV_WC_LOC_PROT_ERR);
				e->win_head++;
				e->win_cur++;
			}
			return;
		}
		/* a packet never sent before (not a go-back-N resend) */
		psn0 = e->psn;
		fresh = psn_cmp(psn0, e->psn_hi) >= 0;
		/* the port is full: wait, do not drop; else no mbuf or no neighbour yet */
		ret = roce_tx_room_data(qp->q) ? send_pkt(dev, qp, wqe) : -ENOBUFS;
		if (unlikely(ret == -EFAULT)) {
			/*
			 * Its local memory is not there (an ODP page): the WR
			 * fails once it is the oldest, as for a bad local key
			 */
			if (e->win_cur == e->win_head) {
				roce_qp_to_err(dev, qp);	/* before the completion */
				roce_comp_send_wqe(qp, wqe, IBV_WC_LOC_PROT_ERR);
				e->win_head++;
				e->win_cur++;
				e->cur_pkt = 0;
				e->cur_off = 0;
			}
			return;
		}
		if (ret < 0) {
			req_stall(qp, now, stale);
			return;		/* try next loop */
		}
		e->tx_stalled = 0;
		if (roce_qp_reliable(qp)) {
			if (fresh) {
				/* one request at a time is timed (roce_req_rtt) */
				if (e->rtt_start == 0) {
					e->rtt_psn = psn0;
					e->rtt_start = (uint32_t)now | 1;
				}
				e->fast_resend = 0;	/* past the resend: new requests */
			}
			if (stale)
				e->arm_due = 1;
			else
				arm_retry(qp, now);
		}
		if (ret == 0)
			continue;
		/* message fully sent (READ/atomic: its request) */
		e->win_cur++;
		e->cur_pkt = 0;
		e->cur_off = 0;
		if (!roce_qp_reliable(qp)) {
			roce_comp_send_wqe(qp, wqe, IBV_WC_SUCCESS);
			e->win_head++;
		}
	}
}
