/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP state machine rules for ibv_modify_qp: which state transitions a QP
 * type may make, which attribute-mask bits each transition requires and
 * permits, and range checks on the attribute values themselves.
 *
 * Pure functions with no device or QP state: the facade calls them before
 * it touches the QP, so that a rejected modify changes nothing
 * (man ibv_modify_qp, NOTES).
 *
 * Supported QP types are IBV_QPT_RC, IBV_QPT_UC and IBV_QPT_UD.
 */
#ifndef DROCE_VERBS_QP_STATE_H
#define DROCE_VERBS_QP_STATE_H

#include <stdint.h>

#include <infiniband/verbs.h>

/**
 * Check that a modify_qp transition and its attribute mask are allowed.
 *
 * Valid transitions (IBA ch. 10.3, Modify QP verb 11.2.5.2, man ibv_modify_qp):
 *   RESET -> RESET, INIT            (RESET -> ERR is rejected)
 *   INIT  -> RESET, ERR, INIT, RTR
 *   RTR   -> RESET, ERR, RTS
 *   RTS   -> RESET, ERR, RTS, SQD
 *   SQD   -> RESET, ERR, RTS, SQD
 *   SQE   -> RESET, ERR, RTS        (SQE exists for UD and UC only; RC QPs
 *                                    never enter SQE, so SQE -> * is
 *                                    rejected for RC)
 *   ERR   -> RESET, ERR
 * Moves into SQE or ERR caused by the transport are not modify_qp
 * transitions and are not described here (except the explicit -> ERR).
 *
 * Mask rules:
 *  - IBV_QP_STATE selects the transition. It is always permitted and never
 *    counted as "extra". When attr_mask lacks IBV_QP_STATE the call is a
 *    modify-in-place: the caller must pass next == cur (anything else is
 *    -EINVAL), and the mask is checked against the cur -> cur row. Hence a
 *    mask without IBV_QP_STATE is only accepted in states that have a
 *    self-transition (RESET, INIT, RTS, SQD, ERR) and may only carry the
 *    optional bits of that self-transition; in RTR or SQE it is -EINVAL.
 *  - Every bit in the transition's required set for this type must be
 *    present; no bit outside required + optional (+ IBV_QP_STATE) may be.
 *  - IBV_QP_CUR_STATE is rejected unless cur is RTR, RTS, SQD or SQE, and
 *    is optional only on RTR->RTS, RTS->RTS, SQD->RTS and SQE->RTS.
 *    This function does not read attr->cur_qp_state: @cur is whatever
 *    state the caller has decided is current (the QP's own state, having
 *    checked that a supplied cur_qp_state agrees with it).
 *
 * Required bits (besides IBV_QP_STATE):
 *   RESET->INIT  UD: PKEY_INDEX PORT QKEY   UC/RC: PKEY_INDEX PORT ACCESS_FLAGS
 *   INIT->RTR    UD: none   UC: AV PATH_MTU DEST_QPN RQ_PSN
 *                RC: UC set + MAX_DEST_RD_ATOMIC MIN_RNR_TIMER
 *   RTR->RTS     UD/UC: SQ_PSN
 *                RC: SQ_PSN TIMEOUT RETRY_CNT RNR_RETRY MAX_QP_RD_ATOMIC
 *   all others: none.
 *
 * Optional bits:
 *   INIT->INIT   UD: PKEY_INDEX PORT QKEY   UC/RC: PKEY_INDEX PORT ACCESS_FLAGS
 *   INIT->RTR    UD: PKEY_INDEX QKEY        UC/RC: PKEY_INDEX ACCESS_FLAGS ALT_PATH
 *   RTR->RTS, RTS->RTS, SQD->RTS
 *                UD: CUR_STATE QKEY
 *                UC: CUR_STATE ACCESS_FLAGS ALT_PATH PATH_MIG_STATE
 *                RC: UC set + MIN_RNR_TIMER
 *   RTS->SQD     all: EN_SQD_ASYNC_NOTIFY
 *   SQD->SQD     UD: PKEY_INDEX QKEY
 *                UC: AV ALT_PATH ACCESS_FLAGS PKEY_INDEX PATH_MIG_STATE
 *                RC: UC set + PORT TIMEOUT RETRY_CNT RNR_RETRY
 *                    MAX_QP_RD_ATOMIC MAX_DEST_RD_ATOMIC MIN_RNR_TIMER
 *   SQE->RTS     UD: CUR_STATE QKEY   UC: CUR_STATE ACCESS_FLAGS
 *   all others (RESET->RESET, RESET->INIT, * -> RESET, * -> ERR): none.
 * IBV_QP_CAP and IBV_QP_RATE_LIMIT are never accepted.
 *
 * @param type       QP transport type.
 * @param cur        Current QP state.
 * @param next       Requested state; must equal @cur when attr_mask lacks
 *                   IBV_QP_STATE.
 * @param attr_mask  Bitwise OR of enum ibv_qp_attr_mask.
 * @return 0 if allowed;
 *         -EOPNOTSUPP if @type is not RC, UC or UD;
 *         -EINVAL if @cur or @next is not a real state (IBV_QPS_UNKNOWN or
 *         out of range), the transition is not valid for @type, a required
 *         bit is missing, a bit outside required + optional is set, or
 *         IBV_QP_STATE is absent and @next != @cur.
 */
int droce_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur,
			  enum ibv_qp_state next, int attr_mask);

/**
 * Check the ranges of the attribute values selected by attr_mask. Fields
 * whose mask bit is clear are not read. Whether a bit is allowed at all for
 * the transition is droce_qp_modify_check()'s job; call both.
 *
 * Checked, for bits present:
 *   IBV_QP_STATE               qp_state in RESET..ERR
 *   IBV_QP_CUR_STATE           cur_qp_state in RESET..ERR
 *   IBV_QP_PORT                port_num in 1..phys_port_cnt
 *   IBV_QP_PKEY_INDEX          pkey_index < pkey_tbl_len
 *   IBV_QP_PATH_MTU            path_mtu in IBV_MTU_256..IBV_MTU_4096
 *   IBV_QP_TIMEOUT             timeout <= 31 (5-bit field)
 *   IBV_QP_RETRY_CNT           retry_cnt <= 7 (3-bit field)
 *   IBV_QP_RNR_RETRY           rnr_retry <= 7 (3-bit field, 7 = infinite)
 *   IBV_QP_MIN_RNR_TIMER       min_rnr_timer <= 31 (5-bit field)
 *   IBV_QP_MAX_QP_RD_ATOMIC    max_rd_atomic <= @max_rd_atomic
 *   IBV_QP_MAX_DEST_RD_ATOMIC  max_dest_rd_atomic <= @max_dest_rd_atomic
 *   IBV_QP_DEST_QPN            dest_qp_num <= 0xffffff (24-bit QPN)
 *   IBV_QP_SQ_PSN, IBV_QP_RQ_PSN  sq_psn, rq_psn <= 0xffffff (24-bit PSN)
 *   IBV_QP_ACCESS_FLAGS        qp_access_flags within IBV_ACCESS_LOCAL_WRITE |
 *                              REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC
 *   IBV_QP_PATH_MIG_STATE      path_mig_state in MIGRATED..ARMED
 *   IBV_QP_ALT_PATH            alt_port_num in 1..phys_port_cnt,
 *                              alt_pkey_index < pkey_tbl_len, alt_timeout <= 31
 * The contents of ah_attr / alt_ah_attr (GID index, GRH) are not checked
 * here. Any 32-bit qkey is accepted.
 *
 * @param type                QP transport type.
 * @param attr                Attributes; only fields selected by attr_mask
 *                            are read. May be NULL only if attr_mask is 0.
 * @param attr_mask           Bitwise OR of enum ibv_qp_attr_mask.
 * @param phys_port_cnt       Number of ports of the device (ports are 1-based).
 * @param pkey_tbl_len        P_Key table length of the port.
 * @param max_rd_atomic       Device limit for max_rd_atomic (max_qp_init_rd_atom).
 * @param max_dest_rd_atomic  Device limit for max_dest_rd_atomic (max_qp_rd_atom).
 * @return 0 if every selected value is in range;
 *         -EOPNOTSUPP if @type is not RC, UC or UD;
 *         -EINVAL if a selected value is out of range, or @attr is NULL
 *         with a non-zero attr_mask.
 */
int droce_qp_attr_values_check(enum ibv_qp_type type, const struct ibv_qp_attr *attr,
			       int attr_mask, uint8_t phys_port_cnt, uint16_t pkey_tbl_len,
			       uint32_t max_rd_atomic, uint32_t max_dest_rd_atomic);

/**
 * Name of a QP state for logs: "RESET", "INIT", "RTR", "RTS", "SQD", "SQE",
 * "ERR", "UNKNOWN". Never fails.
 *
 * @param s  A QP state.
 * @return A static string; "INVALID" for a value outside enum ibv_qp_state.
 */
const char *droce_qp_state_str(enum ibv_qp_state s);

#endif /* DROCE_VERBS_QP_STATE_H */
