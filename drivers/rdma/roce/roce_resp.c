/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: requests arriving at a QP. Checks PSN and opcode sequence,
 * places SEND payloads into receive WQEs (the QP's RQ or its SRQ) and WRITE
 * payloads into registered memory, completes receives, and owes the peer a
 * coalesced ACK, sent after the rx burst.
 */
#include "roce_loc.h"

/* The SRQ receives take their WQEs from: the QP's, or the one an XRC request names. */
static inline struct roce_srq *
resp_srq(const struct roce_qp *qp)
{
	return unlikely(qp->fp.type == IBV_QPT_XRC_RECV) ? qp->e.xsrq : qp->srq;
}

/*
 * The PD remote accesses are checked against. An XRC target has none: the
 * XRC SRQ the request names lends its own (as mlx5 and rxe's XRC do).
 */
static inline const struct droce_rdev_pd *
resp_pd(const struct roce_qp *qp)
{
	return unlikely(qp->fp.type == IBV_QPT_XRC_RECV) ? qp->e.xsrq->pd : qp->pd;
}

/* The responses' transport: XRC's to an XRC initiator, else RC's. */
static inline uint8_t
resp_transport(const struct roce_qp *qp)
{
	return unlikely(qp->fp.type == IBV_QPT_XRC_RECV) ? ROCE_OPCODE_XRC : IBV_OPCODE_RC;
}

static struct droce_recv_wqe *
get_rwqe(struct roce_dev *dev, struct roce_qp *qp)
{
	struct roce_srq *srq = resp_srq(qp);
	struct droce_recv_wqe *w;

	if (srq)
		return roce_srq_get(dev, srq);
	return roce_wq_pull(&qp->fp.rq, (void **)&w, 1) == 1 ? w : NULL;
}

/* IBA 10.2.9.1: an SRQ's WQEs are checked against the SRQ's PD */
static inline const struct droce_rdev_pd *
rwqe_pd(const struct roce_qp *qp)
{
	struct roce_srq *srq = resp_srq(qp);

	return srq ? srq->pd : qp->pd;
}

static void
put_rwqe(struct roce_qp *qp, struct droce_recv_wqe *w)
{
	struct roce_srq *srq = resp_srq(qp);

	roce_wq_retire(srq ? &srq->fp.rq : &qp->fp.rq, w);
}

/*
 * A WRITE with immediate that failed after it took its receive WQE (its
 * memory is an ODP page that is not there). RC keeps the WQE, to flush it
 * with the QP. A UC message is dropped and the QP goes on, so the WQE must
 * not stay taken (its SGEs were never checked, and a kept WQE is reused for
 * SEND data unchecked): it goes back for the next message, as if the
 * dropped one never came, at the head of a QP's own receive queue, or to
 * the SRQ's WQEs given back (roce_srq_unget).
 */
static void
imm_rwqe_drop(struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	struct roce_srq *srq = resp_srq(qp);

	if (e->rwqe == NULL || roce_qp_reliable(qp))
		return;
	if (srq != NULL)
		roce_srq_unget(srq, e->rwqe);
	else
		roce_wq_unpull(&qp->fp.rq, e->rwqe);
	e->rwqe = NULL;
}

static void
complete_recv(struct roce_qp *qp, struct droce_recv_wqe *w, enum ibv_wc_status st,
	      enum ibv_wc_opcode op, uint32_t len, unsigned int flags,
	      rte_be32_t imm, uint32_t src_qp, bool solicited)
{
	struct ibv_wc wc = {
		.wr_id = w->wr_id,
		.status = st,
		.opcode = op,
		.byte_len = len,
		.qp_num = qp->fp.qpn,
		.src_qp = src_qp,
		.wc_flags = flags,
		.imm_data = imm,
	};

	if (unlikely(qp->srq && qp->srq->tm)) {
		roce_tm_recv_done(qp, w, &wc, solicited);
		return;
	}
	put_rwqe(qp, w);
	/* XRC: the SRQ's CQ, with the target QP's number (as mlx5 reports it) */
	roce_cq_push(unlikely(qp->fp.type == IBV_QPT_XRC_RECV) ? qp->e.xsrq->cq : qp->rcq,
		     &wc, NULL, solicited);
}

/* An ACK's (or NAK's) BTH and AETH at @bth */
static inline void
ack_fill(struct roce_bth *bth, const struct roce_qp *qp, uint8_t opcode, uint32_t psn,
	 uint8_t syn, uint32_t msn)
{
	bth_init(bth, opcode, 0, 0, DROCE_DEFAULT_PKEY, qp->attr.dest_qp_num, 0, psn);
	aeth_init(bth_aeth(bth), syn, msn);
}

static struct rte_mbuf *
ack_alloc(struct roce_dev *dev, struct roce_qp *qp, uint8_t opcode, uint32_t psn,
	  uint8_t syn, uint32_t msn, uint32_t extra)
{
	struct rte_mbuf *m = roce_pkt_alloc(qp->q);
	struct roce_bth *bth;

	if (m == NULL)
		return NULL;
	bth = (struct roce_bth *)rte_pktmbuf_append(m, ROCE_BTH_LEN + ROCE_AETH_LEN + extra +
						    ROCE_ICRC_LEN);
	ack_fill(bth, qp, opcode, psn, syn, msn);
	return m;
}

/* false: no mbuf, nothing sent */
static bool
send_aeth(struct roce_dev *dev, struct roce_qp *qp, uint32_t psn, uint8_t syn)
{
	uint32_t l4 = ROCE_BTH_LEN + ROCE_AETH_LEN + ROCE_ICRC_LEN;
	struct roce_txf t;
	struct roce_bth *bth = roce_txf_begin(qp->q, &t, qp, qp->av.dip, l4, l4);

	if (bth == NULL)
		return false;
	ack_fill(bth, qp, resp_transport(qp) | IBV_OPCODE_ACKNOWLEDGE, psn, syn, qp->e.msn);
	roce_qp_cnt_tx(qp);
	roce_txf_send(qp->q, &t, qp->av.dip, qp->sport, qp->av.tos, qp->av.ttl, false, l4, false);
	return true;
}

/* The coalesced ACK owed since the last burst (or a fatal NAK, see nak_fatal). */
void
roce_resp_send_ack(struct roce_dev *dev, struct roce_qp *qp)
{
	/* behind owed READ responses: roce_resp_run sends it after them */
	if (!qp->e.ack_pending || qp->e.rd_head != qp->e.rd_tail)
		return;
	/* the port is full: still owed, roce_resp_run tries again */
	if (!roce_tx_room(qp->q, 1))
		return;
	/*
	 * No mbuf: still owed too. Dropped, it would cost the requester a
	 * timeout, and one without a timer (timeout 0) would wait forever.
	 */
	qp->e.ack_pending = !send_aeth(dev, qp, qp->e.ack_psn, qp->e.ack_syn);
}

static void
owe_ack(struct roce_dev *dev, struct roce_qp *qp, uint32_t psn)
{
	qp->e.ack_psn = psn;
	qp->e.ack_syn = AETH_ACK | AETH_CREDIT_INVALID;
	if (qp->e.ack_pending)
		return;
	if (qp->q->nb_ack == RTE_DIM(qp->q->ack_qp)) {
		qp->e.ack_pending = 1;
		roce_resp_send_ack(dev, qp);
		return;
	}
	qp->e.ack_pending = 1;
	qp->q->ack_qp[qp->q->nb_ack++] = qp;
}

/*
 * RC fatal request error: NAK it and take the QP to ERR (IBA 9.7.5.2.x). The
 * local consumer learns of it from the receive WQE's error completion when
 * one was consumed (@wc_reported), else from an affiliated async event.
 */
static void
nak_fatal(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt, uint8_t syn,
	  bool wc_reported)
{
	roce_cnt_nak_sent(dev, qp, syn);
	if (qp->e.rd_head != qp->e.rd_tail) {
		/*
		 * Responses go out in PSN order: the NAK follows the READ
		 * responses and atomic replies owed for earlier requests, in
		 * place of the pending ACK (roce_resp_run).
		 */
		qp->e.ack_pending = 1;
		qp->e.ack_psn = pkt->psn;
		qp->e.ack_syn = syn;
	} else {
		/* the NAK acknowledges everything before it; no ACK may follow it */
		qp->e.ack_pending = 0;
		send_aeth(dev, qp, pkt->psn, syn);
	}
	if (wc_reported)
		roce_qp_to_err(dev, qp);
	else
		roce_qp_error(dev, qp, syn == AETH_NAK_REM_ACC ? IBV_EVENT_QP_ACCESS_ERR :
				       IBV_EVENT_QP_REQ_ERR);
}

static void
abort_msg(struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;

	/* UC: the WQE of an aborted message is reused by the next one */
	e->in_msg = 0;
	e->roff = 0;
	e->w_host = NULL;
}

static void
ud_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	const struct roce_deth *deth = bth_deth(pkt->bth);
	struct droce_recv_wqe *w;
	uint8_t grh[ROCE_GRH_LEN];
	unsigned int flags = IBV_WC_GRH;
	rte_be32_t imm = 0;

	if (deth_qkey(deth) != qp->attr.qkey) {
		ROCE_QP_CNT(dev, qp, rx_drop_bad_qkey);
		return;
	}
	w = get_rwqe(dev, qp);
	if (w == NULL) {
		ROCE_QP_CNT(dev, qp, rx_drop_no_wqe);
		return;
	}
	if (roce_sge_check(dev, rwqe_pd(qp), w->sge, w->num_sge, IBV_ACCESS_LOCAL_WRITE) != 0) {
		complete_recv(qp, w, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, 0, 0, false);
		return;
	}
	if (pkt->paylen + ROCE_GRH_LEN > w->length) {
		complete_recv(qp, w, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, 0, 0, false);
		return;
	}
	grh_from_ipv4(grh, pkt->ip);
	/* fits (checked above); fails only on an ODP page that is not there */
	if (roce_copy_to_sge(w->sge, w->num_sge, 0, grh, sizeof(grh)) != 0 ||
	    roce_copy_to_sge(w->sge, w->num_sge, ROCE_GRH_LEN, pkt->payload, pkt->paylen) != 0) {
		complete_recv(qp, w, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, 0, 0, false);
		return;
	}
	if (pkt->opf & ROCE_OPF_IMMDT) {
		imm = bth_immdt(pkt->bth, pkt->opf);
		flags |= IBV_WC_WITH_IMM;
	}
	complete_recv(qp, w, IBV_WC_SUCCESS, IBV_WC_RECV, pkt->paylen + ROCE_GRH_LEN, flags,
		      imm, deth_sqp(deth), bth_se(pkt->bth));
}

static void req_fail(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt, uint8_t syn,
		     bool wc_reported);

static inline void
req_error(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt, uint8_t syn)
{
	req_fail(dev, qp, pkt, syn, false);
}

static struct roce_rd_job *
rd_push(struct roce_qp *qp, bool dup)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t max = qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
	uint32_t queued = e->rd_tail - e->rd_head;
	struct roce_rd_job *j;

	if (dup ? e->rd_ndup >= DROCE_MAX_RD_ATOMIC :
	    queued - e->rd_ndup >= RTE_MIN(max, (uint32_t)DROCE_MAX_RD_ATOMIC))
		return NULL;	/* a dropped duplicate is asked for again */
	j = &e->rd[e->rd_tail++ % ROCE_RD_JOBS];
	j->dup = dup;
	e->rd_ndup += dup;
	return j;
}

static inline void
rd_pop(struct roce_qp_eng *e)
{
	e->rd_ndup -= e->rd[e->rd_head % ROCE_RD_JOBS].dup;
	e->rd_head++;
}

/*
 * A duplicate READ request at @psn: the requester went back to @psn and
 * drops every response before it (go-back-N). A READ still queued whose
 * responses include @psn goes on from there, as the kernel's rxe replays
 * its read resource, rather than a second job sending them all again
 * behind it. Otherwise a slow responder, asked again after every timeout
 * and every gap, queued one full re-execution after another, and the one
 * response the requester waited for came ever later (and every other was
 * discarded). true: a queued READ now sends from @psn.
 */
static bool
rd_restart(struct roce_qp *qp, uint32_t psn)
{
	struct roce_qp_eng *e = &qp->e;

	for (uint32_t i = e->rd_head; i != e->rd_tail; i++) {
		struct roce_rd_job *j = &e->rd[i % ROCE_RD_JOBS];
		uint32_t n = j->len ? (j->len + qp->mtu - 1) >> rte_bsf32(qp->mtu) : 1;
		uint32_t k = psn_diff(psn, j->first_psn);

		if (j->atomic || psn_cmp(psn, j->first_psn) < 0 || k >= n)
			continue;
		/* va and left from the request's own start, as a READ from @psn */
		j->va = j->va - (uint64_t)psn_diff(j->psn, j->first_psn) * qp->mtu +
			(uint64_t)k * qp->mtu;
		j->left = j->len - k * qp->mtu;
		j->psn = psn;
		return true;
	}
	return false;
}

/* RDMA READ request (new, or a duplicate to execute again). 0 or -errno. */
static int
read_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt, bool dup)
{
	const struct roce_reth *reth = bth_reth(pkt->bth);
	uint32_t len = reth_len(reth);
	struct roce_rd_job *j;
	uint8_t *host = NULL;

	/* IBA: a message is at most 2^31 bytes (and the PSN count below stays exact) */
	if (len > DROCE_MAX_MSG) {
		if (!dup)
			req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return -EINVAL;
	}
	if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) ||
	    (len && roce_rkey_check(dev, qp, resp_pd(qp), reth_rkey(reth), reth_va(reth), len,
				  IBV_ACCESS_REMOTE_READ, &host) != 0)) {
		if (!dup)
			req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
		return -EACCES;
	}
	if (dup && rd_restart(qp, pkt->psn))
		return 0;
	j = rd_push(qp, dup);
	if (j == NULL) {
		/* more outstanding READs/atomics than max_dest_rd_atomic */
		if (!dup)
			req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return -ENOSPC;
	}
	j->host = host;
	j->pd = resp_pd(qp);
	j->rkey = reth_rkey(reth);
	j->va = reth_va(reth);
	j->left = len;
	j->len = len;
	j->psn = pkt->psn;
	j->first_psn = pkt->psn;
	j->atomic = 0;
	if (!dup)
		qp->e.epsn = psn_add(pkt->psn, len ? (len + qp->mtu - 1) >> rte_bsf32(qp->mtu) : 1);
	return 0;
}

static int
atomic_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	const struct roce_atmeth *a = bth_atmeth(pkt->bth);
	uint64_t va = atmeth_va(a), orig;
	struct roce_rd_job *j;
	uint8_t *host;
	bool cas;

	if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC) ||
	    roce_rkey_check(dev, qp, resp_pd(qp), atmeth_rkey(a), va, 8, IBV_ACCESS_REMOTE_ATOMIC,
			  &host) != 0) {
		req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
		return -EACCES;
	}
	/*
	 * The VA must be 8-byte aligned, and so must the memory: an MR whose
	 * iova is aligned differently from its address maps an aligned VA to
	 * memory where an 8-byte atomic is not atomic (or faults).
	 */
	if ((va & 7) || ((uintptr_t)host & 7)) {
		req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return -EINVAL;
	}
	j = rd_push(qp, false);
	if (j == NULL) {
		req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return -ENOSPC;
	}
	cas = roce_op_kind(pkt->opcode) == IBV_OPCODE_COMPARE_SWAP;
	if (roce_mem_atomic((uint64_t *)host, cas, cas ? atmeth_comp(a) : atmeth_swap_add(a),
			    atmeth_swap_add(a), &orig) != 0) {
		/* an ODP page that is not there: as an R_Key violation */
		qp->e.rd_tail--;	/* the job just pushed */
		req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
		return -EACCES;
	}
	j->atomic = 1;
	j->orig = orig;
	j->psn = j->first_psn = pkt->psn;
	qp->e.atm[qp->e.atm_next].psn = pkt->psn;
	qp->e.atm[qp->e.atm_next].orig = orig;
	qp->e.atm[qp->e.atm_next].valid = 1;
	qp->e.atm_next = (qp->e.atm_next + 1) % DROCE_MAX_RD_ATOMIC;
	qp->e.epsn = psn_add(pkt->psn, 1);
	return 0;
}

/*
 * A READ's memory is no longer readable (its MR gone since the request, or
 * an ODP page that is not there): NAK remote access error, the QP to ERR.
 */
static void
read_access_error(struct roce_dev *dev, struct roce_qp *qp, const struct roce_rd_job *j)
{
	qp->e.rd_head = qp->e.rd_tail;
	qp->e.rd_ndup = 0;
	roce_cnt_nak_sent(dev, qp, AETH_NAK_REM_ACC);
	send_aeth(dev, qp, j->psn, AETH_NAK_REM_ACC);
	roce_qp_error(dev, qp, IBV_EVENT_QP_ACCESS_ERR);
}

/* A duplicate atomic is answered from the replay cache, never applied twice. */
static void
atomic_replay(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	for (unsigned int i = 0; i < DROCE_MAX_RD_ATOMIC; i++) {
		if (qp->e.atm[i].valid && qp->e.atm[i].psn == pkt->psn) {
			struct roce_rd_job *j = rd_push(qp, true);

			if (j != NULL) {
				j->atomic = 1;
				j->orig = qp->e.atm[i].orig;
				j->psn = j->first_psn = pkt->psn;
			}
			return;
		}
	}
}

/*
 * Emit owed READ responses and atomic ACKs, in order, then the coalesced ACK
 * that had to wait behind them (responses must not be overtaken).
 */
void
roce_resp_run(struct roce_dev *dev, struct roce_qp *qp)
{
	struct roce_qp_eng *e = &qp->e;
	unsigned int budget = DROCE_BURST;

	while (budget && e->rd_head != e->rd_tail) {
		struct roce_rd_job *j = &e->rd[e->rd_head % ROCE_RD_JOBS];
		struct rte_mbuf *m;
		struct roce_bth *bth;

		if (!roce_tx_room_data(qp->q))
			return;
		if (j->atomic) {
			m = ack_alloc(dev, qp, resp_transport(qp) | IBV_OPCODE_ATOMIC_ACKNOWLEDGE, j->psn,
				      AETH_ACK | AETH_CREDIT_INVALID, e->msn, ROCE_ATMACK_LEN);
			if (m == NULL)
				return;
			atmack_init(bth_atmack(rte_pktmbuf_mtod(m, struct roce_bth *)), j->orig);
			roce_qp_cnt_tx(qp);
			if (roce_ip_xmit(qp->q, m, qp->av.dip, qp->sport, qp->av.tos, qp->av.ttl))
				return;
			rd_pop(e);
			budget--;
			continue;
		}
		while (budget) {
			uint32_t pay = RTE_MIN(j->left, qp->mtu);
			bool first = j->psn == j->first_psn, last = pay == j->left;
			uint8_t op = resp_transport(qp) |
				(first && last ? IBV_OPCODE_RDMA_READ_RESPONSE_ONLY :
				 first ? IBV_OPCODE_RDMA_READ_RESPONSE_FIRST :
				 last ? IBV_OPCODE_RDMA_READ_RESPONSE_LAST :
				 IBV_OPCODE_RDMA_READ_RESPONSE_MIDDLE);
			const struct roce_opcode_info *oi = &roce_opcode_tbl[op];
			uint32_t pad = -pay & 3, l4 = oi->hdr_len + pay + pad + ROCE_ICRC_LEN;
			struct roce_txf t;
			bool summed;

			/* the MR may have been deregistered since the request */
			if (pay != 0 && roce_rkey_check(dev, qp, j->pd, j->rkey, j->va, pay,
						      IBV_ACCESS_REMOTE_READ, &j->host) != 0) {
				read_access_error(dev, qp, j);
				return;
			}
			if (!roce_tx_room_data(qp->q))
				return;
			bth = roce_txf_begin(qp->q, &t, qp, qp->av.dip, l4, l4);
			if (bth == NULL)
				return;
			bth_init(bth, op, 0, pad, DROCE_DEFAULT_PKEY, qp->attr.dest_qp_num, 0, j->psn);
			if (oi->flags & ROCE_OPF_AETH)
				aeth_init(bth_aeth(bth), AETH_ACK | AETH_CREDIT_INVALID, e->msn);
			/*
			 * Copied, never sent from the MR where it lies (roce_tx_zc): the
			 * application may change memory a peer READs at any time, and
			 * the ICRC must be over the bytes the frame carries
			 */
			summed = roce_tx_sum_copy(qp->q, l4, bth, oi->hdr_len,
						  &(struct ibv_sge){ (uintptr_t)j->host, pay, 0 }, 0,
						  pay, qp->av.dip, qp->sport);
			/* a zero-length READ names no memory: host is NULL */
			if (!summed && pay != 0 && roce_mem_copy(bth_payload(bth), j->host, pay) != 0) {
				roce_txf_abort(&t);	/* an ODP page that is not there */
				read_access_error(dev, qp, j);
				return;
			}
			if (!summed)
				memset(bth_payload(bth) + pay, 0, pad);
			roce_qp_cnt_tx(qp);
			if (roce_txf_send(qp->q, &t, qp->av.dip, qp->sport, qp->av.tos, qp->av.ttl,
					  false, l4, summed))
				return;
			budget--;
			if (pay != 0)
				j->host += pay;
			j->va += pay;
			j->left -= pay;
			j->psn = psn_add(j->psn, 1);
			if (last) {
				rd_pop(e);
				break;
			}
		}
	}
	if (e->rd_head == e->rd_tail && e->ack_pending)
		roce_resp_send_ack(dev, qp);
}

/* PSN check. true: process the packet. */
static bool
check_psn(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	int32_t d = psn_cmp(pkt->psn, e->epsn);

	if (qp->fp.type == IBV_QPT_UC) {
		if (d != 0) {
			/* IBA 9.8.3: lost packets drop the message in progress */
			ROCE_QP_CNT(dev, qp, rx_drop_seq);
			abort_msg(qp);
			e->epsn = pkt->psn;
			e->drop_msg = !(pkt->opf & ROCE_OPF_FIRST);
		}
		if (e->drop_msg && (pkt->opf & ROCE_OPF_FIRST))
			e->drop_msg = 0;
		if (e->drop_msg) {
			e->epsn = psn_add(e->epsn, 1);
			return false;
		}
		return true;
	}
	if (d < 0) {
		ROCE_QP_CNT(dev, qp, rx_dup);
		if (pkt->opf & ROCE_OPF_READ)
			read_rcv(dev, qp, pkt, true);	/* IBA 9.7.5.1.3: re-executed */
		else if (pkt->opf & ROCE_OPF_ATOMIC)
			atomic_replay(dev, qp, pkt);
		else	/* IBA 9.7.5.1.2: not re-applied, acknowledged again */
			owe_ack(dev, qp, psn_add(e->epsn, -1));
		return false;
	}
	if (d > 0) {
		ROCE_QP_CNT(dev, qp, rx_drop_seq);
		if (!e->nak_sent) {
			e->nak_sent = 1;
			roce_cnt_nak_sent(dev, qp, AETH_NAK_PSN_SEQ);
			send_aeth(dev, qp, e->epsn, AETH_NAK_PSN_SEQ);
		}
		return false;
	}
	e->nak_sent = 0;
	return true;
}

static bool
check_seq(struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t cls = pkt->opf & (ROCE_OPF_SEND | ROCE_OPF_WRITE);

	if (e->in_msg)
		return !(pkt->opf & ROCE_OPF_FIRST) && cls == e->msg_op;
	return (pkt->opf & ROCE_OPF_FIRST) != 0;
}

/* Error path of an RC/UC request; @syn is the NAK an RC QP sends. */
static void
req_fail(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt, uint8_t syn,
	 bool wc_reported)
{
	if (!roce_pkt_icrc_ok(qp, pkt))
		return;		/* not a request at all: dropped */
	if (roce_qp_reliable(qp)) {
		nak_fatal(dev, qp, pkt, syn, wc_reported);
	} else {
		abort_msg(qp);
		qp->e.drop_msg = 1;
		qp->e.epsn = psn_add(pkt->psn, 1);
	}
}

static void
rnr(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	if (!roce_pkt_icrc_ok(qp, pkt))
		return;
	if (roce_qp_reliable(qp)) {
		ROCE_QP_CNT(dev, qp, rnr_naks_sent);
		send_aeth(dev, qp, pkt->psn, AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f));
	} else {
		ROCE_QP_CNT(dev, qp, rx_drop_no_wqe);
		abort_msg(qp);		/* a LAST must not leave the message open */
		qp->e.drop_msg = !(pkt->opf & ROCE_OPF_LAST);
		qp->e.epsn = psn_add(pkt->psn, 1);
	}
}

static int
send_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t skip = 0;
	int ret;

	if (pkt->opf & ROCE_OPF_FIRST) {
		e->roff = 0;
		/* UC: an aborted message's WQE (already checked) is reused */
		if (e->rwqe == NULL) {
			if (unlikely(qp->srq && qp->srq->tm)) {
				ret = roce_tm_rcv_first(dev, qp, pkt);

				skip = ret > 0 ? ret : 0;
			} else {
				e->rwqe = get_rwqe(dev, qp);
			}
			if (e->rwqe == NULL) {
				rnr(dev, qp, pkt);
				return -EAGAIN;
			}
			if (roce_sge_check(dev, rwqe_pd(qp), e->rwqe->sge, e->rwqe->num_sge,
					   IBV_ACCESS_LOCAL_WRITE) != 0) {
				complete_recv(qp, e->rwqe, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV,
					      0, 0, 0, 0, false);
				e->rwqe = NULL;
				req_fail(dev, qp, pkt, AETH_NAK_REM_OP, true);
				return -EACCES;
			}
		}
	}
	ret = roce_copy_to_sge(e->rwqe->sge, e->rwqe->num_sge, e->roff,
			       pkt->payload + skip, pkt->paylen - skip);
	if (ret == -EFAULT) {
		/* an ODP page that is not there: as a bad local key */
		complete_recv(qp, e->rwqe, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, 0, 0, false);
		e->rwqe = NULL;
		req_fail(dev, qp, pkt, AETH_NAK_REM_OP, true);
		return -EACCES;
	}
	if (ret != 0) {
		complete_recv(qp, e->rwqe, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, 0, 0, false);
		e->rwqe = NULL;
		req_fail(dev, qp, pkt, AETH_NAK_INV_REQ, true);
		return -EMSGSIZE;
	}
	e->roff += pkt->paylen - skip;
	if (pkt->opf & ROCE_OPF_LAST) {
		unsigned int flags = 0;
		rte_be32_t imm = 0;

		if (pkt->opf & ROCE_OPF_IMMDT) {
			imm = bth_immdt(pkt->bth, pkt->opf);
			flags |= IBV_WC_WITH_IMM;
		}
		if (unlikely(pkt->opf & ROCE_OPF_IETH)) {
			uint32_t rkey = bth_ieth_rkey(pkt->bth);

			/*
			 * The R_Key is invalidated before the receive
			 * completes; one that names no window bound to
			 * this QP (none is, on an XRC target) is an
			 * invalid request (the receive WQE completes in
			 * error, as the kernel's rxe has it)
			 */
			if (roce_mw_invalidate(dev, qp, resp_pd(qp), rkey, true) != 0) {
				complete_recv(qp, e->rwqe, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV,
					      0, 0, 0, 0, false);
				e->rwqe = NULL;
				req_fail(dev, qp, pkt, AETH_NAK_INV_REQ, true);
				return -EINVAL;
			}
			/* ibv_wc.invalidated_rkey shares imm_data's place */
			imm = (rte_be32_t)rkey;
			flags |= IBV_WC_WITH_INV;
		}
		complete_recv(qp, e->rwqe, IBV_WC_SUCCESS, IBV_WC_RECV, e->roff, flags, imm, 0,
			      bth_se(pkt->bth));
		e->rwqe = NULL;
	}
	return 0;
}

static int
write_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;

	if (pkt->opf & ROCE_OPF_FIRST) {
		const struct roce_reth *reth = bth_reth(pkt->bth);

		/* C9-88: a zero-length WRITE has no address or R_Key to check */
		if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) ||
		    (reth_len(reth) != 0 &&
		     roce_rkey_check(dev, qp, resp_pd(qp), reth_rkey(reth), reth_va(reth), reth_len(reth),
				   IBV_ACCESS_REMOTE_WRITE, &e->w_host) != 0)) {
			req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
			return -EACCES;
		}
		e->w_len = e->w_left = reth_len(reth);
		e->w_rkey = reth_rkey(reth);
		e->w_va = reth_va(reth);
	}
	/*
	 * ATOMIC WRITE (IBA 1.5): exactly 8 bytes, at an 8-aligned address and
	 * memory, stored at once, atomic with respect to every other atomic of
	 * the process; else an invalid request
	 */
	if (unlikely(pkt->opf & ROCE_OPF_ATOMIC_WRITE)) {
		if (e->w_len != 8 || pkt->paylen != 8 || (e->w_va & 7) || ((uintptr_t)e->w_host & 7)) {
			req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
			return -EINVAL;
		}
		if (roce_mem_store64((uint64_t *)e->w_host, pkt->payload) != 0) {
			/* an ODP page that is not there: as an R_Key violation */
			req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
			return -EACCES;
		}
		e->w_left = 0;
		return 0;
	}
	/* IBA 9.7.5.1.3: no packet past the RETH length, and the last one ends it */
	if (pkt->paylen > e->w_left || ((pkt->opf & ROCE_OPF_LAST) && pkt->paylen != e->w_left)) {
		req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return -EINVAL;
	}
	/* the MR may have been deregistered since the first packet */
	if (!(pkt->opf & ROCE_OPF_FIRST) && pkt->paylen != 0 &&
	    roce_rkey_check(dev, qp, resp_pd(qp), e->w_rkey, e->w_va + (e->w_len - e->w_left), pkt->paylen,
			  IBV_ACCESS_REMOTE_WRITE, &e->w_host) != 0) {
		req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
		return -EACCES;
	}
	if ((pkt->opf & ROCE_OPF_IMMDT) && e->rwqe == NULL) {
		/* a receive WQE is taken only for a packet known to be intact */
		if (!roce_pkt_icrc_ok(qp, pkt))
			return -EBADMSG;
		e->rwqe = get_rwqe(dev, qp);
		if (e->rwqe == NULL) {
			rnr(dev, qp, pkt);
			return -EAGAIN;
		}
	}
	/* a zero-length WRITE names no memory: w_host is NULL (or the last message's) */
	if (pkt->paylen != 0) {
		int ret = roce_pkt_place(qp, pkt, e->w_host, pkt->opf & ROCE_OPF_LAST);

		if (ret == -EBADMSG)
			return ret;	/* a wrong ICRC: dropped, nothing moves on */
		if (ret != 0) {
			/* an ODP page that is not there: as an R_Key violation */
			imm_rwqe_drop(qp);
			req_error(dev, qp, pkt, AETH_NAK_REM_ACC);
			return -EACCES;
		}
		e->w_host += pkt->paylen;
	} else if (!roce_pkt_icrc_ok(qp, pkt)) {
		return -EBADMSG;
	}
	e->w_left -= pkt->paylen;
	if (pkt->opf & ROCE_OPF_IMMDT) {
		complete_recv(qp, e->rwqe, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, e->w_len,
			      IBV_WC_WITH_IMM, bth_immdt(pkt->bth, pkt->opf), 0, bth_se(pkt->bth));
		e->rwqe = NULL;
	}
	return 0;
}

/*
 * An XRC request names an XRC SRQ (its XRCETH), which must exist and be of
 * the target QP's domain; every packet of a message names the SRQ its first
 * did. A request naming an SRQ that does not exist is NAKed as an invalid
 * request, one naming another domain's as a remote access error (IBA
 * 9.7.5.2.x; the requester gets REM_INV_REQ_ERR or REM_ACCESS_ERR and both
 * QPs go to ERR, as for RC). true: go on, e->xsrq set for this packet.
 */
static bool
xrc_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t srqn = xrceth_srqn(bth_xrceth(pkt->bth));
	struct roce_srq *srq = roce_srq_by_num(dev, srqn);
	int32_t d = psn_cmp(pkt->psn, e->epsn);
	bool ok = srq != NULL && srq->xrcd == qp->xrcd;

	/* the SRQ of the message in progress was destroyed: its WQE went with it */
	if (unlikely(e->rwqe != NULL) && roce_srq_by_num(dev, e->xsrqn) == NULL)
		e->rwqe = NULL;
	e->xsrq = ok ? srq : NULL;
	if (d > 0)
		return true;	/* out of sequence: check_psn NAKs it, nothing else is read */
	if (d < 0)
		return ok;	/* a duplicate is answered again only while its SRQ is there */
	if (!ok) {
		req_error(dev, qp, pkt, srq == NULL ? AETH_NAK_INV_REQ : AETH_NAK_REM_ACC);
		return false;
	}
	if (e->in_msg && srqn != e->xsrqn) {
		req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return false;
	}
	e->xsrqn = srqn;
	return true;
}

void
roce_resp_rcv(struct roce_dev *dev, struct roce_qp *qp, struct roce_pkt *pkt)
{
	struct roce_qp_eng *e = &qp->e;
	uint32_t st = roce_qp_state(qp);
	uint32_t mtu = qp->fp.type == IBV_QPT_UD ? dev->ib_mtu : qp->mtu;
	bool ok_state = st == IBV_QPS_RTR || st == IBV_QPS_RTS || st == IBV_QPS_SQD ||
			st == IBV_QPS_SQE;
	int ret;

	/*
	 * An RDMA WRITE read in place, its ICRC not yet checked (rx_one): if
	 * it is the packet the QP expects next (and check_psn() has no NAK
	 * state to clear), its ICRC is checked as write_rcv() places its
	 * payload, and before that wherever a check fails and acts on it
	 * (req_fail(), rnr(), the bad length's count below) or a receive WQE
	 * is taken (a WRITE with immediate); anything else is checked here,
	 * before it acts.
	 */
	if (unlikely(pkt->icrc_at != NULL) &&
	    !(ok_state && pkt->psn == e->epsn && pkt->paylen <= mtu &&
	      ((qp->fp.type == IBV_QPT_RC && !e->nak_sent) ||
	       (qp->fp.type == IBV_QPT_UC && !e->drop_msg))) &&
	    !roce_pkt_icrc_ok(qp, pkt))
		return;
	if (!ok_state) {
		ROCE_QP_CNT(dev, qp, rx_drop_qp_state);
		return;
	}
	if (pkt->paylen > mtu) {
		ROCE_QP_CNT(dev, qp, rx_drop_bad_len);
		return;
	}
	if (qp->fp.type == IBV_QPT_UD) {
		ud_rcv(dev, qp, pkt);
		return;
	}
	if (unlikely(qp->fp.type == IBV_QPT_XRC_RECV) && !xrc_rcv(dev, qp, pkt))
		return;
	if (!check_psn(dev, qp, pkt))
		return;
	if (pkt->opf & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)) {
		if (!roce_qp_reliable(qp) || e->in_msg) {
			req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
			return;
		}
		if (((pkt->opf & ROCE_OPF_READ) ? read_rcv(dev, qp, pkt, false) :
		     atomic_rcv(dev, qp, pkt)) == 0)
			e->msn = (e->msn + 1) & 0xffffff;
		return;
	}
	/*
	 * IBA 9.7.5.1.3: opcode sequence; only the last packet may be short,
	 * and a LAST after a FIRST is not empty (the packet that ends a
	 * message is its LAST: a WRITE's last byte is stored last in it)
	 */
	if (!check_seq(qp, pkt) || (!(pkt->opf & ROCE_OPF_LAST) && pkt->paylen != mtu) ||
	    ((pkt->opf & ROCE_OPF_ONLY) == ROCE_OPF_LAST && pkt->paylen == 0)) {
		if (!roce_pkt_icrc_ok(qp, pkt))
			return;
		ROCE_QP_CNT(dev, qp, rx_drop_bad_len);
		req_error(dev, qp, pkt, AETH_NAK_INV_REQ);
		return;
	}
	ret = (pkt->opf & ROCE_OPF_SEND) ? send_rcv(dev, qp, pkt) : write_rcv(dev, qp, pkt);
	if (ret != 0)
		return;
	e->in_msg = !(pkt->opf & ROCE_OPF_LAST);
	e->msg_op = pkt->opf & (ROCE_OPF_SEND | ROCE_OPF_WRITE);
	e->epsn = psn_add(pkt->psn, 1);
	if (pkt->opf & ROCE_OPF_LAST)
		e->msn = (e->msn + 1) & 0xffffff;
	/* not for a message whose completion a CQ overrun lost (the QP is in ERR) */
	if (roce_qp_reliable(qp) && bth_ackreq(pkt->bth) && roce_qp_state(qp) != IBV_QPS_ERR)
		owe_ack(dev, qp, pkt->psn);
}
