/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for droce0's receive path: Ethernet, ARP, IPv4 (and the
 * IPv6 drop), UDP, ICRC, BTH and every extension header, the responder
 * (SEND/WRITE/READ/atomic requests, duplicates, UD with DETH, immediates)
 * and the completer (ACK, NAK, RNR NAK, READ responses, atomic ACKs) of live
 * QPs of every type and state, against MRs of every kind of access. The
 * frames enter through droce0's port (a net_ring) and the engine's own
 * iteration; see fuzz_common.h for the rig, the record format and the
 * oracles.
 *
 * QPs (index: what), QPNs in this order from 0x11:
 *   0 RC in RTS, a requester with a window of every kind of WR outstanding
 *   1 RC in RTS granting remote write only     2 UC in RTS
 *   3 UD in RTS                                4 RC on the SRQ
 *   5 UD on the SRQ                            6 UC on the SRQ
 *   7 RC in RTR      8 RC in INIT      9 RC in RESET      10 RC in ERR
 *   11 RC in RTS granting no remote access at all
 * MRs the MR selector names: read/write/atomic 64 KiB, remote read only
 * (pages read-only), remote write only, atomic only, no access (pages
 * PROT_NONE), another PD's (PROT_NONE), one whose iova ends 16 KiB below 2^64,
 * one whose iova is not aligned like its address, the local send buffers, a
 * QP's receive buffers.
 *
 * CTRL records: byte 0 the action, byte 1 a QP (or MR) selector:
 *   0 post a send WR (fz_post_send: opcode, length, flags from the rest)
 *   1 force the QP to ERR     2 bring it back now (reset, reconnect)
 *   3 re-register an MR (its old key goes stale)
 *   4 RTS -> SQD              5 SQD -> RTS
 *   6 re-register the QP's receive buffers (what it has posted names a stale key)
 * The UC QP's CQs hold 3 completions: more in one input overrun them.
 */
#include <string.h>
#include <sys/mman.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void
ctrl(const uint8_t *b, uint32_t n)
{
	struct fz_qp *q = fz.qps[(n > 1 ? b[1] : 0) % fz.nqp];
	struct ibv_qp_attr a = { 0 };

	if (fz_ctrl_qp(q, b[0] % 7, b, n))
		return;
	switch (b[0] % 7) {
	case 3: {
		struct fz_mr *m = fz.mrs[(n > 1 ? b[1] : 0) % fz.nmr];

		if (m->mr != NULL && m != fz.send_mr)
			fz_mr_rereg(m);
		break;
	}
	case 6:
		/* the receives it has posted now name a stale key: LOC_PROT_ERR; fresh ones next input */
		if (q->srq == NULL) {
			fz_mr_rereg(q->rb.mr);
			q->dirty = true;
		}
		break;
	case 4:
		a.qp_state = IBV_QPS_SQD;
		fz_modify(q->qp, &a, IBV_QP_STATE);	/* refused outside RTS: fine */
		break;
	default:
		a.qp_state = IBV_QPS_RTS;
		fz_modify(q->qp, &a, IBV_QP_STATE);
		break;
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fz_srq *srq;
	struct fz_qp *ud;

	RTE_SET_USED(argc);
	fz_setup((*argv)[0]);
	fz.hooks.ctrl = ctrl;
	fz_mr_add("rw", 64 << 10, IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE, PROT_READ | PROT_WRITE,
		  fz.pd, 0);
	fz_mr_add("ro", 16 << 10, IBV_ACCESS_REMOTE_READ, PROT_READ, fz.pd, 0);
	fz_mr_add("wo", 16 << 10, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  PROT_READ | PROT_WRITE, fz.pd, 0);
	fz_mr_add("atomic", 4 << 10, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		  PROT_READ | PROT_WRITE, fz.pd, 0);
	fz_mr_add("none", 16 << 10, 0, PROT_NONE, fz.pd, 0);
	fz_mr_add("pd2", 16 << 10, IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE, PROT_NONE, fz.pd2, 0);
	fz_mr_add("iova_top", 16 << 10, IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE, PROT_READ | PROT_WRITE,
		  fz.pd, 0ull - (32 << 10));
	/* an iova whose low bits are not its address's: aligned addresses, unaligned memory */
	fz_mr_add("iova_odd", 16 << 10, IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE, PROT_READ | PROT_WRITE,
		  fz.pd, 0x100003);
	srq = fz_srq_add(FZ_MAX_RX, NULL);
	fz_qp_add("rc_req", IBV_QPT_RC, IBV_QPS_RTS, ALL_REMOTE, NULL, true, 256);
	fz_qp_add("rc_wonly", IBV_QPT_RC, IBV_QPS_RTS, IBV_ACCESS_REMOTE_WRITE, NULL, false, 256);
	fz_qp_add("uc", IBV_QPT_UC, IBV_QPS_RTS, IBV_ACCESS_REMOTE_WRITE, NULL, false, 3);
	ud = fz_qp_add("ud", IBV_QPT_UD, IBV_QPS_RTS, 0, NULL, false, 256);
	fz_qp_add("rc_srq", IBV_QPT_RC, IBV_QPS_RTS, ALL_REMOTE, srq, false, 256);
	fz_qp_add("ud_srq", IBV_QPT_UD, IBV_QPS_RTS, 0, srq, false, 256);
	fz_qp_add("uc_srq", IBV_QPT_UC, IBV_QPS_RTS, IBV_ACCESS_REMOTE_WRITE, srq, false, 256);
	fz_qp_add("rc_rtr", IBV_QPT_RC, IBV_QPS_RTR, ALL_REMOTE, NULL, false, 256);
	fz_qp_add("rc_init", IBV_QPT_RC, IBV_QPS_INIT, ALL_REMOTE, NULL, false, 256);
	fz_qp_add("rc_reset", IBV_QPT_RC, IBV_QPS_RESET, ALL_REMOTE, NULL, false, 256);
	fz_qp_add("rc_err", IBV_QPT_RC, IBV_QPS_ERR, ALL_REMOTE, NULL, false, 256);
	fz_qp_add("rc_noaccess", IBV_QPT_RC, IBV_QPS_RTS, 0, NULL, false, 256);
	fz_mr_target(fz.send_mr);
	fz_mr_target(ud->rb.mr);
	fz_ready();
	return 0;
}
