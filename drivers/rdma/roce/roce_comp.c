/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: acknowledgements, READ responses and atomic ACKs for an RC
 * requester, and send completions.
 */
#include <rte_cycles.h>

#include "roce_loc.h"

static enum ibv_wc_opcode
wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	default:
		return IBV_WC_SEND;
	}
}

/* Complete a send WQE (errors always, success when signaled) and free its slot. */
void
roce_comp_send_wqe(struct roce_qp *qp, struct droce_send_wqe *wqe, enum ibv_wc_status st)
{
	struct ibv_wc wc = {
		.wr_id = wqe->wr_id,
		.status = st,
		.opcode = wc_opcode(wqe->opcode),
		.qp_num = qp->fp.qpn,
		.byte_len = st == IBV_WC_SUCCESS && wqe->opcode == IBV_WR_RDMA_READ ? wqe->length :
			    st == IBV_WC_SUCCESS && wc_opcode(wqe->opcode) >= IBV_WC_COMP_SWAP &&
			    wc_opcode(wqe->opcode) <= IBV_WC_FETCH_ADD ? 8 : 0,
	};
	bool report = st != IBV_WC_SUCCESS || wqe->signaled;

	/* no staged frame reads its buffer once the application has it back */
	roce_tx_settle(qp->q);
	if (unlikely(wqe->tm)) {
		roce_tm_wqe_done(qp, wqe, st);
		return;
	}
	/* the slot is free before the application can see the completion */
	roce_wq_retire(&qp->fp.sq, wqe);
	if (report)
		roce_cq_push(qp->scq, &wc, NULL, false);
}

/*
 * Complete every sent WQE whose last PSN is at or before @psn: any WQE that
 * has its PSNs, also one beyond the requester's cursor, sent before a
 * go-back-N rewind (roce_comp_rcv moves the cursor on). A READ or an atomic
 * completes only with its responses: an acknowledgement beyond it means
 * they were lost, so resend from the oldest missing PSN (IBA 9.7.5.1.5).
 */
static void
ack_upto(struct roce_dev *dev, struct roce_qp *qp, uint32_t psn, bool implied_nak)
{
	struct roce_qp_eng *e = &qp->e;

	while (e->win_head != e->win_tail) {
		struct droce_send_wqe *w = *roce_win_slot(qp, e->win_head);

		if (w->npkts == 0)
			return;		/* not begun */
		if (roce_wqe_is_rd_atomic(w)) {
			if (implied_nak && psn_cmp(psn, w->first_psn) >= 0)
				roce_req_rewind(qp, e->una);
			return;
		}
		if (psn_cmp(w->last_psn, psn) > 0) {
			/* a message in part: what of it has arrived is acknowledged too */
			if (psn_cmp(psn_add(psn, 1), e->una) > 0)
				e->una = psn_add(psn, 1);
			return;
		}
		roce_comp_send_wqe(qp, w, IBV_WC_SUCCESS);
		e->win_head++;
		e->una = psn_add(w->last_psn, 1);
	}
}

/*
 * The READ or atomic at the head lands in local memory that is not there (an
 * ODP page): it completes with a local protection error (it is the oldest
 * WR), and the QP goes to ERR, flushing the rest.
 */
static void
local_fault(struct roce_dev *dev, struct roce_qp *qp, struct droce_send_wqe *w)
{
	struct roce_qp_eng *e = &qp->e;

	roce_qp_to_err(dev, qp);	/* before the completion */
	roce_comp_send_wqe(qp, w, IBV_WC_LOC_PROT_ERR);
	if (e->win_cur == e->win_head) {	/* a rewind had the cursor back on it */
		e->win_cur++;
		e->cur_pkt = 0;
		e->cur_off = 0;
	}
	e->win_head++;
}

/* READ response or atomic ACK for the READ/atomic at the head of the window. */
static void
rd_response(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	struct droce_send_wqe *w;
	uint32_t off;

	ack_upto(dev, qp, psn_add(pkt->psn, -1), false);
	/* the cursor may be back at the READ (a rewind): it is still outstanding */
	if (e->win_head == e->win_tail || (*roce_win_slot(qp, e->win_head))->npkts == 0) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);	/* no READ or atomic outstanding */
		return;
	}
	if (pkt->psn != e->una) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);
		if (psn_cmp(pkt->psn, e->una) <= 0)
			return;
		/* a response is missing: ask again from it, once per gap */
		if (e->rd_gap_psn != e->una + 1) {
			e->rd_gap_psn = e->una + 1;
			ROCE_QP_CNT(dev, qp, retransmits);
			roce_req_rewind(qp, e->una);
		}
		/*
		 * The responder is alive and still sending the responses that
		 * followed the gap, which queue ahead of those it sends again: the
		 * local ACK timer starts over, as an ACK restarts it. Otherwise a
		 * slow receiver (a loaded machine), whose link held a ring's worth
		 * of such responses to drop first, timed out on each resend before
		 * its answer could arrive, and a live READ ended in RETRY_EXC_ERR.
		 * A lost resend is still found: once these stop, the timer runs.
		 */
		e->retry_tsc = 0;
		return;
	}
	w = *roce_win_slot(qp, e->win_head);
	if (!roce_wqe_is_rd_atomic(w) || psn_cmp(pkt->psn, w->last_psn) > 0) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);	/* not a response to what is at this PSN */
		return;
	}
	if (roce_op_kind(pkt->opcode) == IBV_OPCODE_ATOMIC_ACKNOWLEDGE) {
		uint64_t orig = atmack_orig(bth_atmack(pkt->bth));

		if (w->opcode == IBV_WR_RDMA_READ) {
			ROCE_QP_CNT(dev, qp, rx_drop_seq);
			return;
		}
		if (roce_copy_to_sge(w->sge, w->num_sge, 0, (const uint8_t *)&orig,
				     sizeof(orig)) == -EFAULT) {
			local_fault(dev, qp, w);
			return;
		}
	} else {
		bool last = pkt->psn == w->last_psn;
		int ret = -EMSGSIZE;

		off = psn_diff(pkt->psn, w->first_psn) * qp->mtu;
		if (w->opcode == IBV_WR_RDMA_READ && pkt->paylen == (last ? w->length - off : qp->mtu))
			ret = roce_copy_to_sge(w->sge, w->num_sge, off, pkt->payload, pkt->paylen);
		if (ret == -EFAULT) {
			local_fault(dev, qp, w);
			return;
		}
		if (ret != 0) {
			ROCE_QP_CNT(dev, qp, rx_drop_bad_len);
			return;
		}
	}
	e->una = psn_add(pkt->psn, 1);
	e->retry_left = qp->attr.retry_cnt;
	e->retry_tsc = 0;
	if (pkt->psn == w->last_psn) {
		roce_comp_send_wqe(qp, w, IBV_WC_SUCCESS);
		e->win_head++;
	}
}

/*
 * Acknowledged beyond the requester's cursor (what a rewind was resending
 * had arrived after all): go on from the oldest unacknowledged PSN.
 */
static void
skip_acked(struct roce_qp *qp)
{
	if (psn_cmp(qp->e.una, qp->e.psn) > 0)
		roce_req_rewind(qp, qp->e.una);
}

static uint64_t
rnr_delay_tsc(const struct roce_dev *dev, uint8_t t)
{
	/* IBA table 45: RNR NAK timer field to microseconds */
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
		1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return (uint64_t)us[t & 31] * dev->tsc_hz / 1000000;
}

static void
comp_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t st = roce_qp_state(qp), una = e->una;
	const struct roce_aeth *aeth;
	uint8_t syn;

	if (!roce_qp_reliable(qp) || qp->fp.type == IBV_QPT_XRC_RECV ||
	    (st != IBV_QPS_RTS && st != IBV_QPS_SQD)) {
		ROCE_QP_CNT(dev, qp, rx_drop_qp_state);
		return;
	}
	/*
	 * A response for a PSN never sent, or older than what is acknowledged:
	 * stale. One for a PSN sent before a go-back-N rewind (at or beyond
	 * e->psn, below e->psn_hi) is valid: after a timeout the peer's ACK
	 * of the whole window, or of its duplicates, ends the resend.
	 */
	if (psn_cmp(pkt->psn, e->psn_hi) >= 0 || psn_cmp(pkt->psn, psn_add(e->una, -1)) < 0) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);
		return;
	}
	aeth = bth_aeth(pkt->bth);
	syn = (pkt->opf & ROCE_OPF_AETH) ? aeth_syn(aeth) : AETH_ACK;
	/*
	 * Only an ACK may repeat the last acknowledged PSN (una - 1); a NAK or
	 * RNR NAK names an unacknowledged request, else it is a ghost.
	 */
	if (((syn & AETH_TYPE_MASK) == AETH_NAK || (syn & AETH_TYPE_MASK) == AETH_RNR_NAK) &&
	    psn_cmp(pkt->psn, e->una) < 0) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);
		return;
	}
	if (roce_op_kind(pkt->opcode) != IBV_OPCODE_ACKNOWLEDGE && (syn & AETH_TYPE_MASK) == AETH_ACK) {
		rd_response(dev, qp, pkt);
		skip_acked(qp);
		return;
	}
	switch (syn & AETH_TYPE_MASK) {
	case AETH_ACK:
		ack_upto(dev, qp, pkt->psn, true);
		e->retry_left = qp->attr.retry_cnt;
		e->rnr_left = qp->attr.rnr_retry;
		e->retry_tsc = 0;	/* the requester re-arms it while WQEs remain */
		skip_acked(qp);
		return;
	case AETH_RNR_NAK:
		ROCE_QP_CNT(dev, qp, rnr_naks_rcvd);
		ack_upto(dev, qp, psn_add(pkt->psn, -1), true);
		/*
		 * One RNR wait per RNR. During it nothing is sent, so an RNR
		 * NAK now answers a copy sent before it began: resends, early
		 * or after local ACK timeouts, while the responder was off
		 * the CPU, answered all at once when it came back (six in
		 * 13 us spent pyverbs' rnr_retry of 5, on a loaded machine,
		 * before the receiver had a chance to post).
		 */
		if (roce_clock(qp->q) < e->rnr_tsc)
			return;
		if (qp->attr.rnr_retry != 7 && e->rnr_left-- == 0) {
			/* in ERR before the completion that says so */
			roce_qp_to_err(dev, qp);
			if (e->win_head != e->win_cur) {
				roce_comp_send_wqe(qp, *roce_win_slot(qp, e->win_head++),
						   IBV_WC_RNR_RETRY_EXC_ERR);
			}
			return;
		}
		e->rnr_tsc = roce_clock(qp->q) + rnr_delay_tsc(dev, syn & 0x1f);
		/*
		 * The responder answered: local ACK timeouts count afresh,
		 * from the resend after the RNR delay. Only rnr_retry bounds
		 * an RNR wait (7: forever), however many RNR NAKs or resends
		 * a lossy path drops during it.
		 */
		e->retry_left = qp->attr.retry_cnt;
		e->retry_tsc = 0;
		roce_req_rewind(qp, e->una);
		return;
	case AETH_NAK:
		roce_cnt_nak_rcvd(dev, qp, syn);
		ack_upto(dev, qp, psn_add(pkt->psn, -1), true);
		if (syn == AETH_NAK_PSN_SEQ) {
			/*
			 * What it acknowledges is forward progress: the retries
			 * start over, as for an ACK (under heavy loss a window's
			 * AckReq packets may all follow a loss, and only NAKs
			 * move it). IBA 9.7.5.2.1: go back to the NAKed PSN (or
			 * an unanswered READ before it).
			 */
			if (e->una != una)
				e->retry_left = qp->attr.retry_cnt;
			roce_req_rewind(qp, e->una);
			return;
		}
		/* in ERR before the completion that says so */
		roce_qp_to_err(dev, qp);
		if (e->win_head != e->win_cur) {
			enum ibv_wc_status ws = syn == AETH_NAK_REM_ACC ? IBV_WC_REM_ACCESS_ERR :
				syn == AETH_NAK_REM_OP ? IBV_WC_REM_OP_ERR : IBV_WC_REM_INV_REQ_ERR;

			roce_comp_send_wqe(qp, *roce_win_slot(qp, e->win_head++), ws);
		}
		return;
	default:
		qp->q->stats.rx_drop_bad_bth++;
	}
}

void
roce_comp_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	uint32_t una = qp->e.una;

	comp_rcv(dev, qp, pkt);
	if (qp->e.una != una)
		roce_req_rtt(dev, qp);	/* the peer moved on: adaptive retransmission */
}
