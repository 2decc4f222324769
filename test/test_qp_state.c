/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP state machine checks: transitions, required/optional attribute masks
 * per QP type (man ibv_modify_qp, IBA ch. 10.3) and attribute value ranges.
 * The expected rules are written out here independently of the library's
 * table, so that a wrong table entry fails a case.
 */
#include <errno.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_test.h"
#include "verbs_qp_state.h"

#define NPORTS		1
#define PKEY_LEN	1
#define MAX_RD		16
#define MAX_DEST_RD	16

/* every mask bit enum ibv_qp_attr_mask defines */
static const int all_bits[] = {
	IBV_QP_STATE, IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
	IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY,
	IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT,
	IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC,
	IBV_QP_ALT_PATH, IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
	IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE, IBV_QP_CAP,
	IBV_QP_DEST_QPN, IBV_QP_RATE_LIMIT,
};
#define N_BITS ((int)(sizeof(all_bits) / sizeof(all_bits[0])))

struct exp_trans {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	int req, opt;
};

#define UD IBV_QPT_UD
#define UC IBV_QPT_UC
#define RC IBV_QPT_RC
#define S(x) IBV_QPS_##x

#define UD_INIT		(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define CONN_INIT	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UC_RTR		(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RC_RTR		(UC_RTR | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS		(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define UD_RTS_OPT	(IBV_QP_CUR_STATE | IBV_QP_QKEY)
#define UC_RTS_OPT	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | \
			 IBV_QP_PATH_MIG_STATE)
#define RC_RTS_OPT	(UC_RTS_OPT | IBV_QP_MIN_RNR_TIMER)
#define UC_SQD_OPT	(IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | \
			 IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE)
#define RC_SQD_OPT	(UC_SQD_OPT | IBV_QP_PORT | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | \
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)

/* The complete list of valid transitions; anything absent must be -EINVAL. */
static const struct exp_trans valid[] = {
	/* UD */
	{ UD, S(RESET), S(RESET), 0, 0 },
	{ UD, S(RESET), S(INIT), UD_INIT, 0 },
	{ UD, S(INIT), S(RESET), 0, 0 },
	{ UD, S(INIT), S(ERR), 0, 0 },
	{ UD, S(INIT), S(INIT), 0, UD_INIT },
	{ UD, S(INIT), S(RTR), 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	{ UD, S(RTR), S(RESET), 0, 0 },
	{ UD, S(RTR), S(ERR), 0, 0 },
	{ UD, S(RTR), S(RTS), IBV_QP_SQ_PSN, UD_RTS_OPT },
	{ UD, S(RTS), S(RESET), 0, 0 },
	{ UD, S(RTS), S(ERR), 0, 0 },
	{ UD, S(RTS), S(RTS), 0, UD_RTS_OPT },
	{ UD, S(RTS), S(SQD), 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ UD, S(SQD), S(RESET), 0, 0 },
	{ UD, S(SQD), S(ERR), 0, 0 },
	{ UD, S(SQD), S(RTS), 0, UD_RTS_OPT },
	{ UD, S(SQD), S(SQD), 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	{ UD, S(SQE), S(RESET), 0, 0 },
	{ UD, S(SQE), S(ERR), 0, 0 },
	{ UD, S(SQE), S(RTS), 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ UD, S(ERR), S(RESET), 0, 0 },
	{ UD, S(ERR), S(ERR), 0, 0 },
	/* UC */
	{ UC, S(RESET), S(RESET), 0, 0 },
	{ UC, S(RESET), S(INIT), CONN_INIT, 0 },
	{ UC, S(INIT), S(RESET), 0, 0 },
	{ UC, S(INIT), S(ERR), 0, 0 },
	{ UC, S(INIT), S(INIT), 0, CONN_INIT },
	{ UC, S(INIT), S(RTR), UC_RTR,
	  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH },
	{ UC, S(RTR), S(RESET), 0, 0 },
	{ UC, S(RTR), S(ERR), 0, 0 },
	{ UC, S(RTR), S(RTS), IBV_QP_SQ_PSN, UC_RTS_OPT },
	{ UC, S(RTS), S(RESET), 0, 0 },
	{ UC, S(RTS), S(ERR), 0, 0 },
	{ UC, S(RTS), S(RTS), 0, UC_RTS_OPT },
	{ UC, S(RTS), S(SQD), 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ UC, S(SQD), S(RESET), 0, 0 },
	{ UC, S(SQD), S(ERR), 0, 0 },
	{ UC, S(SQD), S(RTS), 0, UC_RTS_OPT },
	{ UC, S(SQD), S(SQD), 0, UC_SQD_OPT },
	{ UC, S(SQE), S(RESET), 0, 0 },
	{ UC, S(SQE), S(ERR), 0, 0 },
	{ UC, S(SQE), S(RTS), 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS },
	{ UC, S(ERR), S(RESET), 0, 0 },
	{ UC, S(ERR), S(ERR), 0, 0 },
	/* RC: no SQE */
	{ RC, S(RESET), S(RESET), 0, 0 },
	{ RC, S(RESET), S(INIT), CONN_INIT, 0 },
	{ RC, S(INIT), S(RESET), 0, 0 },
	{ RC, S(INIT), S(ERR), 0, 0 },
	{ RC, S(INIT), S(INIT), 0, CONN_INIT },
	{ RC, S(INIT), S(RTR), RC_RTR,
	  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH },
	{ RC, S(RTR), S(RESET), 0, 0 },
	{ RC, S(RTR), S(ERR), 0, 0 },
	{ RC, S(RTR), S(RTS), RC_RTS, RC_RTS_OPT },
	{ RC, S(RTS), S(RESET), 0, 0 },
	{ RC, S(RTS), S(ERR), 0, 0 },
	{ RC, S(RTS), S(RTS), 0, RC_RTS_OPT },
	{ RC, S(RTS), S(SQD), 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ RC, S(SQD), S(RESET), 0, 0 },
	{ RC, S(SQD), S(ERR), 0, 0 },
	{ RC, S(SQD), S(RTS), 0, RC_RTS_OPT },
	{ RC, S(SQD), S(SQD), 0, RC_SQD_OPT },
	{ RC, S(ERR), S(RESET), 0, 0 },
	{ RC, S(ERR), S(ERR), 0, 0 },
};
#define N_VALID ((int)(sizeof(valid) / sizeof(valid[0])))

static const enum ibv_qp_type types[] = { IBV_QPT_UD, IBV_QPT_UC, IBV_QPT_RC };

static const char *
type_str(enum ibv_qp_type t)
{
	return t == IBV_QPT_UD ? "UD" : t == IBV_QPT_UC ? "UC" : "RC";
}

static const struct exp_trans *
find_valid(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	for (int i = 0; i < N_VALID; i++)
		if (valid[i].type == type && valid[i].cur == cur && valid[i].next == next)
			return &valid[i];
	return NULL;
}

static int
check(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next, int mask)
{
	return droce_qp_modify_check(type, cur, next, mask);
}

/* ---- transitions and masks ---- */

static int
test_every_valid_transition_with_exact_required_mask_succeeds(void)
{
	for (int i = 0; i < N_VALID; i++) {
		const struct exp_trans *e = &valid[i];
		int rc = check(e->type, e->cur, e->next, IBV_QP_STATE | e->req);

		TEST_ASSERT(rc == 0, "%s %s->%s rc %d", type_str(e->type),
			    droce_qp_state_str(e->cur), droce_qp_state_str(e->next), rc);
	}
	return TEST_SUCCESS;
}

static int
test_each_required_bit_removed_gives_einval(void)
{
	int tried = 0;

	for (int i = 0; i < N_VALID; i++) {
		const struct exp_trans *e = &valid[i];

		for (int b = 0; b < N_BITS; b++) {
			int bit = all_bits[b], rc;

			if (!(e->req & bit))
				continue;
			rc = check(e->type, e->cur, e->next, (IBV_QP_STATE | e->req) & ~bit);
			TEST_ASSERT(rc == -EINVAL, "%s %s->%s without 0x%x rc %d",
				    type_str(e->type), droce_qp_state_str(e->cur),
				    droce_qp_state_str(e->next), bit, rc);
			tried++;
		}
	}
	/* UD 3+1, UC 3+4+1, RC 3+6+5 */
	TEST_ASSERT_EQ(tried, 26);
	return TEST_SUCCESS;
}

static int
test_extra_non_optional_bit_gives_einval(void)
{
	for (int i = 0; i < N_VALID; i++) {
		const struct exp_trans *e = &valid[i];

		for (int b = 0; b < N_BITS; b++) {
			int bit = all_bits[b], rc;

			if ((e->req | e->opt | IBV_QP_STATE) & bit)
				continue;
			rc = check(e->type, e->cur, e->next, IBV_QP_STATE | e->req | bit);
			TEST_ASSERT(rc == -EINVAL, "%s %s->%s with extra 0x%x rc %d",
				    type_str(e->type), droce_qp_state_str(e->cur),
				    droce_qp_state_str(e->next), bit, rc);
		}
	}
	return TEST_SUCCESS;
}

static int
test_undefined_mask_bit_gives_einval(void)
{
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), IBV_QP_STATE | (1 << 21)), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), IBV_QP_STATE | (1 << 30)), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(RTS), S(RTS), IBV_QP_STATE | (int)(1u << 31)), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_each_optional_bit_accepted_alone_and_all_together(void)
{
	for (int i = 0; i < N_VALID; i++) {
		const struct exp_trans *e = &valid[i];
		int base = IBV_QP_STATE | e->req, rc;

		for (int b = 0; b < N_BITS; b++) {
			int bit = all_bits[b];

			if (!(e->opt & bit))
				continue;
			rc = check(e->type, e->cur, e->next, base | bit);
			TEST_ASSERT(rc == 0, "%s %s->%s with optional 0x%x rc %d",
				    type_str(e->type), droce_qp_state_str(e->cur),
				    droce_qp_state_str(e->next), bit, rc);
		}
		rc = check(e->type, e->cur, e->next, base | e->opt);
		TEST_ASSERT(rc == 0, "%s %s->%s with all optional rc %d",
			    type_str(e->type), droce_qp_state_str(e->cur),
			    droce_qp_state_str(e->next), rc);
	}
	return TEST_SUCCESS;
}

static int
test_every_unlisted_transition_gives_einval(void)
{
	/* masks that would satisfy some transition's requirements */
	const int masks[] = {
		IBV_QP_STATE,
		IBV_QP_STATE | UD_INIT,
		IBV_QP_STATE | CONN_INIT,
		IBV_QP_STATE | UC_RTR,
		IBV_QP_STATE | RC_RTR,
		IBV_QP_STATE | IBV_QP_SQ_PSN,
		IBV_QP_STATE | RC_RTS,
	};
	int invalid = 0;

	for (int t = 0; t < 3; t++)
		for (int c = IBV_QPS_RESET; c <= IBV_QPS_ERR; c++)
			for (int n = IBV_QPS_RESET; n <= IBV_QPS_ERR; n++) {
				if (find_valid(types[t], c, n))
					continue;
				invalid++;
				for (int m = 0; m < (int)(sizeof(masks) / sizeof(masks[0])); m++) {
					int rc = check(types[t], c, n, masks[m]);

					TEST_ASSERT(rc == -EINVAL, "%s %s->%s mask 0x%x rc %d",
						    type_str(types[t]), droce_qp_state_str(c),
						    droce_qp_state_str(n), masks[m], rc);
				}
			}
	TEST_ASSERT_EQ(invalid, 3 * 49 - N_VALID);
	return TEST_SUCCESS;
}

static int
test_reset_to_err_is_invalid(void)
{
	for (int t = 0; t < 3; t++)
		TEST_ASSERT_EQ(check(types[t], S(RESET), S(ERR), IBV_QP_STATE), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_reset_to_rtr_is_invalid(void)
{
	TEST_ASSERT_EQ(check(RC, S(RESET), S(RTR), IBV_QP_STATE | RC_RTR), -EINVAL);
	TEST_ASSERT_EQ(check(UC, S(RESET), S(RTR), IBV_QP_STATE | UC_RTR), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(RESET), S(RTR), IBV_QP_STATE), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_any_state_to_reset_and_err_but_reset_to_err(void)
{
	for (int t = 0; t < 3; t++)
		for (int c = IBV_QPS_RESET; c <= IBV_QPS_ERR; c++) {
			int exp_ok = !(types[t] == RC && c == IBV_QPS_SQE);

			TEST_ASSERT_EQ(check(types[t], c, S(RESET), IBV_QP_STATE),
				       exp_ok ? 0 : -EINVAL);
			TEST_ASSERT_EQ(check(types[t], c, S(ERR), IBV_QP_STATE),
				       exp_ok && c != IBV_QPS_RESET ? 0 : -EINVAL);
		}
	return TEST_SUCCESS;
}

static int
test_cur_state_rejected_from_init(void)
{
	TEST_ASSERT_EQ(check(RC, S(INIT), S(INIT), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(INIT), S(RTR), IBV_QP_STATE | RC_RTR | IBV_QP_CUR_STATE),
		       -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(INIT), S(RTR), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(RESET), S(INIT), IBV_QP_STATE | UD_INIT | IBV_QP_CUR_STATE),
		       -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(ERR), S(RESET), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_cur_state_accepted_into_rts(void)
{
	TEST_ASSERT_EQ(check(RC, S(RTR), S(RTS), IBV_QP_STATE | RC_RTS | IBV_QP_CUR_STATE), 0);
	TEST_ASSERT_EQ(check(UC, S(RTS), S(RTS), IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	TEST_ASSERT_EQ(check(UD, S(SQD), S(RTS), IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	TEST_ASSERT_EQ(check(UD, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	/* allowed from SQD, but not on SQD->SQD or the move to ERR */
	TEST_ASSERT_EQ(check(RC, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(ERR), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_sqe_to_rts_allowed_for_ud_uc_not_rc(void)
{
	TEST_ASSERT_EQ(check(UD, S(SQE), S(RTS), IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(check(UC, S(SQE), S(RTS), IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(check(RC, S(SQE), S(RTS), IBV_QP_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	/* QKEY is a UD attribute; ACCESS_FLAGS a UC one */
	TEST_ASSERT_EQ(check(UD, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_QKEY), 0);
	TEST_ASSERT_EQ(check(UC, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_QKEY), -EINVAL);
	TEST_ASSERT_EQ(check(UC, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0);
	TEST_ASSERT_EQ(check(UD, S(SQE), S(RTS), IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_init_to_init_optional_attrs_per_type(void)
{
	TEST_ASSERT_EQ(check(UD, S(INIT), S(INIT), IBV_QP_STATE | UD_INIT), 0);
	TEST_ASSERT_EQ(check(UD, S(INIT), S(INIT), IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(INIT), S(INIT), IBV_QP_STATE | CONN_INIT), 0);
	TEST_ASSERT_EQ(check(RC, S(INIT), S(INIT), IBV_QP_STATE | IBV_QP_QKEY), -EINVAL);
	TEST_ASSERT_EQ(check(UC, S(INIT), S(INIT), IBV_QP_STATE | IBV_QP_PORT), 0);
	return TEST_SUCCESS;
}

static int
test_rts_to_sqd_accepts_async_notify(void)
{
	TEST_ASSERT_EQ(check(RC, S(RTS), S(SQD), IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	TEST_ASSERT_EQ(check(RC, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY),
		       -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_QKEY), 0);
	TEST_ASSERT_EQ(check(UD, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_AV), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_AV | IBV_QP_TIMEOUT), 0);
	TEST_ASSERT_EQ(check(UC, S(SQD), S(SQD), IBV_QP_STATE | IBV_QP_TIMEOUT), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_cap_and_rate_limit_never_accepted(void)
{
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), IBV_QP_STATE | IBV_QP_CAP), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(RTR), S(RTS), IBV_QP_STATE | RC_RTS | IBV_QP_RATE_LIMIT),
		       -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(RTS), S(RTS), IBV_QP_RATE_LIMIT), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_without_state_bit_next_must_equal_cur(void)
{
	TEST_ASSERT_EQ(check(RC, S(INIT), S(RTR), RC_RTR), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(RTS), S(ERR), 0), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_without_state_bit_checks_self_transition(void)
{
	/* states with a self-transition: empty mask is a no-op */
	TEST_ASSERT_EQ(check(RC, S(RESET), S(RESET), 0), 0);
	TEST_ASSERT_EQ(check(RC, S(INIT), S(INIT), 0), 0);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), 0), 0);
	TEST_ASSERT_EQ(check(RC, S(SQD), S(SQD), 0), 0);
	TEST_ASSERT_EQ(check(RC, S(ERR), S(ERR), 0), 0);
	/* the self-transition's optional set applies */
	TEST_ASSERT_EQ(check(UD, S(RTS), S(RTS), IBV_QP_QKEY), 0);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS), 0);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(RTS), IBV_QP_TIMEOUT), -EINVAL);
	TEST_ASSERT_EQ(check(UC, S(INIT), S(INIT), IBV_QP_ACCESS_FLAGS), 0);
	TEST_ASSERT_EQ(check(UD, S(RESET), S(RESET), IBV_QP_QKEY), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(ERR), S(ERR), IBV_QP_QKEY), -EINVAL);
	/* RTR and SQE have no self-transition */
	TEST_ASSERT_EQ(check(RC, S(RTR), S(RTR), 0), -EINVAL);
	TEST_ASSERT_EQ(check(UD, S(SQE), S(SQE), 0), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_unsupported_qp_type_gives_eopnotsupp(void)
{
	TEST_ASSERT_EQ(check(IBV_QPT_RAW_PACKET, S(RESET), S(INIT), IBV_QP_STATE | IBV_QP_PORT),
		       -EOPNOTSUPP);
	TEST_ASSERT_EQ(check(IBV_QPT_DRIVER, S(RESET), S(RESET), 0), -EOPNOTSUPP);
	return TEST_SUCCESS;
}

static int
test_unknown_or_out_of_range_state_gives_einval(void)
{
	TEST_ASSERT_EQ(check(RC, S(UNKNOWN), S(RESET), IBV_QP_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(RTS), S(UNKNOWN), IBV_QP_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, (enum ibv_qp_state)42, S(RESET), IBV_QP_STATE), -EINVAL);
	TEST_ASSERT_EQ(check(RC, S(RESET), (enum ibv_qp_state)42, IBV_QP_STATE), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_state_str_names_every_state(void)
{
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_RESET), "RESET"), "RESET");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_INIT), "INIT"), "INIT");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_RTR), "RTR"), "RTR");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_RTS), "RTS"), "RTS");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_SQD), "SQD"), "SQD");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_SQE), "SQE"), "SQE");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_ERR), "ERR"), "ERR");
	TEST_ASSERT(!strcmp(droce_qp_state_str(IBV_QPS_UNKNOWN), "UNKNOWN"), "UNKNOWN");
	TEST_ASSERT(!strcmp(droce_qp_state_str((enum ibv_qp_state)99), "INVALID"), "99");
	return TEST_SUCCESS;
}

/* ---- attribute values ---- */

static struct ibv_qp_attr a;

static int
setup_attr(void)
{
	memset(&a, 0, sizeof(a));
	return 0;
}

static int
vcheck(enum ibv_qp_type type, int mask)
{
	return droce_qp_attr_values_check(type, &a, mask, NPORTS, PKEY_LEN,
					  MAX_RD, MAX_DEST_RD);
}

static int
test_values_all_in_range_pass(void)
{
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTR;
	a.port_num = 1;
	a.pkey_index = 0;
	a.path_mtu = IBV_MTU_1024;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.min_rnr_timer = 12;
	a.max_rd_atomic = 1;
	a.max_dest_rd_atomic = 1;
	a.dest_qp_num = 0x12;
	a.sq_psn = 0x123456;
	a.rq_psn = 0x654321;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	a.path_mig_state = IBV_MIG_MIGRATED;
	a.alt_port_num = 1;
	a.alt_timeout = 14;
	a.qkey = 0xffffffff;
	TEST_ASSERT_EQ(vcheck(RC, 0x7fffffff), 0);
	TEST_ASSERT_EQ(vcheck(UD, 0x7fffffff), 0);
	return TEST_SUCCESS;
}

static int
test_values_unselected_fields_are_ignored(void)
{
	memset(&a, 0xff, sizeof(a));
	TEST_ASSERT_EQ(vcheck(RC, 0), 0);
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_QKEY | IBV_QP_AV | IBV_QP_CAP | IBV_QP_RATE_LIMIT), 0);
	TEST_ASSERT_EQ(droce_qp_attr_values_check(RC, NULL, 0, NPORTS, PKEY_LEN, 1, 1), 0);
	TEST_ASSERT_EQ(droce_qp_attr_values_check(RC, NULL, IBV_QP_PORT, NPORTS, PKEY_LEN, 1, 1),
		       -EINVAL);
	return TEST_SUCCESS;
}

static int
test_values_unsupported_type_gives_eopnotsupp(void)
{
	a.port_num = 1;
	TEST_ASSERT_EQ(vcheck(IBV_QPT_RAW_PACKET, IBV_QP_PORT), -EOPNOTSUPP);
	return TEST_SUCCESS;
}

static int
test_values_port_num_range(void)
{
	a.port_num = 0;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PORT), -EINVAL);
	a.port_num = NPORTS + 1;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PORT), -EINVAL);
	a.port_num = NPORTS;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PORT), 0);
	a.port_num = 2;
	TEST_ASSERT_EQ(droce_qp_attr_values_check(UD, &a, IBV_QP_PORT, 2, PKEY_LEN, 1, 1), 0);
	return TEST_SUCCESS;
}

static int
test_values_pkey_index_range(void)
{
	a.pkey_index = PKEY_LEN;
	TEST_ASSERT_EQ(vcheck(UD, IBV_QP_PKEY_INDEX), -EINVAL);
	a.pkey_index = PKEY_LEN - 1;
	TEST_ASSERT_EQ(vcheck(UD, IBV_QP_PKEY_INDEX), 0);
	a.pkey_index = 127;
	TEST_ASSERT_EQ(droce_qp_attr_values_check(UD, &a, IBV_QP_PKEY_INDEX, NPORTS, 128, 1, 1),
		       0);
	a.pkey_index = 128;
	TEST_ASSERT_EQ(droce_qp_attr_values_check(UD, &a, IBV_QP_PKEY_INDEX, NPORTS, 128, 1, 1),
		       -EINVAL);
	return TEST_SUCCESS;
}

static int
test_values_path_mtu_range(void)
{
	a.path_mtu = (enum ibv_mtu)0;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MTU), -EINVAL);
	a.path_mtu = (enum ibv_mtu)(IBV_MTU_4096 + 1);
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MTU), -EINVAL);
	a.path_mtu = IBV_MTU_256;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MTU), 0);
	a.path_mtu = IBV_MTU_4096;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MTU), 0);
	return TEST_SUCCESS;
}

static int
test_values_timeout_range(void)
{
	a.timeout = 32;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_TIMEOUT), -EINVAL);
	a.timeout = 31;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_TIMEOUT), 0);
	a.timeout = 0;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_TIMEOUT), 0);
	return TEST_SUCCESS;
}

static int
test_values_retry_cnt_range(void)
{
	a.retry_cnt = 8;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RETRY_CNT), -EINVAL);
	a.retry_cnt = 7;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RETRY_CNT), 0);
	return TEST_SUCCESS;
}

static int
test_values_rnr_retry_range(void)
{
	a.rnr_retry = 8;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RNR_RETRY), -EINVAL);
	a.rnr_retry = 7;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RNR_RETRY), 0);
	return TEST_SUCCESS;
}

static int
test_values_min_rnr_timer_range(void)
{
	a.min_rnr_timer = 32;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MIN_RNR_TIMER), -EINVAL);
	a.min_rnr_timer = 31;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MIN_RNR_TIMER), 0);
	return TEST_SUCCESS;
}

static int
test_values_max_rd_atomic_limit(void)
{
	a.max_rd_atomic = MAX_RD + 1;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MAX_QP_RD_ATOMIC), -EINVAL);
	a.max_rd_atomic = MAX_RD;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MAX_QP_RD_ATOMIC), 0);
	/* the two limits are separate */
	TEST_ASSERT_EQ(droce_qp_attr_values_check(RC, &a, IBV_QP_MAX_QP_RD_ATOMIC, NPORTS,
						  PKEY_LEN, MAX_RD - 1, MAX_RD), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_values_max_dest_rd_atomic_limit(void)
{
	a.max_dest_rd_atomic = MAX_DEST_RD + 1;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MAX_DEST_RD_ATOMIC), -EINVAL);
	a.max_dest_rd_atomic = MAX_DEST_RD;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	TEST_ASSERT_EQ(droce_qp_attr_values_check(RC, &a, IBV_QP_MAX_DEST_RD_ATOMIC, NPORTS,
						  PKEY_LEN, MAX_RD, MAX_DEST_RD - 1), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_values_dest_qpn_is_24_bit(void)
{
	a.dest_qp_num = 0x1000000;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_DEST_QPN), -EINVAL);
	a.dest_qp_num = 0xffffff;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_DEST_QPN), 0);
	return TEST_SUCCESS;
}

static int
test_values_sq_psn_is_24_bit(void)
{
	a.sq_psn = 0x1000000;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_SQ_PSN), -EINVAL);
	a.sq_psn = 0xffffff;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_SQ_PSN), 0);
	return TEST_SUCCESS;
}

static int
test_values_rq_psn_is_24_bit(void)
{
	a.rq_psn = 0xffffffff;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RQ_PSN), -EINVAL);
	a.rq_psn = 0xffffff;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_RQ_PSN), 0);
	return TEST_SUCCESS;
}

static int
test_values_access_flags_only_remote_and_local_write(void)
{
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ACCESS_FLAGS), -EINVAL);
	a.qp_access_flags = IBV_ACCESS_ZERO_BASED;
	TEST_ASSERT_EQ(vcheck(UC, IBV_QP_ACCESS_FLAGS), -EINVAL);
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ACCESS_FLAGS), 0);
	a.qp_access_flags = 0;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ACCESS_FLAGS), 0);
	return TEST_SUCCESS;
}

static int
test_values_state_fields_range(void)
{
	a.qp_state = IBV_QPS_UNKNOWN;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_STATE), -EINVAL);
	a.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_STATE), 0);
	a.cur_qp_state = IBV_QPS_UNKNOWN;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_CUR_STATE), -EINVAL);
	a.cur_qp_state = IBV_QPS_SQE;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_CUR_STATE), 0);
	return TEST_SUCCESS;
}

static int
test_values_path_mig_state_range(void)
{
	a.path_mig_state = (enum ibv_mig_state)(IBV_MIG_ARMED + 1);
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MIG_STATE), -EINVAL);
	a.path_mig_state = IBV_MIG_ARMED;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_PATH_MIG_STATE), 0);
	return TEST_SUCCESS;
}

static int
test_values_alt_path_fields_range(void)
{
	a.alt_port_num = 1;
	a.alt_pkey_index = 0;
	a.alt_timeout = 31;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ALT_PATH), 0);
	a.alt_port_num = 0;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ALT_PATH), -EINVAL);
	a.alt_port_num = 1;
	a.alt_pkey_index = PKEY_LEN;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ALT_PATH), -EINVAL);
	a.alt_pkey_index = 0;
	a.alt_timeout = 32;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_ALT_PATH), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_values_one_bad_field_fails_whole_mask(void)
{
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_STATE | CONN_INIT), 0);
	a.timeout = 40;	/* bad, but TIMEOUT is not in the mask */
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_STATE | CONN_INIT), 0);
	TEST_ASSERT_EQ(vcheck(RC, IBV_QP_STATE | CONN_INIT | IBV_QP_TIMEOUT), -EINVAL);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_every_valid_transition_with_exact_required_mask_succeeds),
	TEST_CASE(test_each_required_bit_removed_gives_einval),
	TEST_CASE(test_extra_non_optional_bit_gives_einval),
	TEST_CASE(test_undefined_mask_bit_gives_einval),
	TEST_CASE(test_each_optional_bit_accepted_alone_and_all_together),
	TEST_CASE(test_every_unlisted_transition_gives_einval),
	TEST_CASE(test_reset_to_err_is_invalid),
	TEST_CASE(test_reset_to_rtr_is_invalid),
	TEST_CASE(test_any_state_to_reset_and_err_but_reset_to_err),
	TEST_CASE(test_cur_state_rejected_from_init),
	TEST_CASE(test_cur_state_accepted_into_rts),
	TEST_CASE(test_sqe_to_rts_allowed_for_ud_uc_not_rc),
	TEST_CASE(test_init_to_init_optional_attrs_per_type),
	TEST_CASE(test_rts_to_sqd_accepts_async_notify),
	TEST_CASE(test_cap_and_rate_limit_never_accepted),
	TEST_CASE(test_without_state_bit_next_must_equal_cur),
	TEST_CASE(test_without_state_bit_checks_self_transition),
	TEST_CASE(test_unsupported_qp_type_gives_eopnotsupp),
	TEST_CASE(test_unknown_or_out_of_range_state_gives_einval),
	TEST_CASE(test_state_str_names_every_state),
	TEST_CASE(test_values_all_in_range_pass),
	TEST_CASE(test_values_unselected_fields_are_ignored),
	TEST_CASE(test_values_unsupported_type_gives_eopnotsupp),
	TEST_CASE(test_values_port_num_range),
	TEST_CASE(test_values_pkey_index_range),
	TEST_CASE(test_values_path_mtu_range),
	TEST_CASE(test_values_timeout_range),
	TEST_CASE(test_values_retry_cnt_range),
	TEST_CASE(test_values_rnr_retry_range),
	TEST_CASE(test_values_min_rnr_timer_range),
	TEST_CASE(test_values_max_rd_atomic_limit),
	TEST_CASE(test_values_max_dest_rd_atomic_limit),
	TEST_CASE(test_values_dest_qpn_is_24_bit),
	TEST_CASE(test_values_sq_psn_is_24_bit),
	TEST_CASE(test_values_rq_psn_is_24_bit),
	TEST_CASE(test_values_access_flags_only_remote_and_local_write),
	TEST_CASE(test_values_state_fields_range),
	TEST_CASE(test_values_path_mig_state_range),
	TEST_CASE(test_values_alt_path_fields_range),
	TEST_CASE(test_values_one_bad_field_fails_whole_mask),
};

int
main(void)
{
	return DROCE_TEST_MAIN("qp_state", cases, setup_attr, NULL);
}
