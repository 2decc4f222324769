/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Assertions shared by the verbs-level tests: byte ranges, completion status,
 * and "exactly one completion" / "no completion" within a time window. The
 * including file defines WC_MS, the wait for one expected completion.
 */
#ifndef DROCE_VERBS_ASSERT_H
#define DROCE_VERBS_ASSERT_H

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "droce_test.h"
#include "harness.h"

static inline long
first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	if (memcmp(a, b, n) == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

#define ASSERT_BYTES(got, exp, n) do { \
	const uint8_t *_g = (const uint8_t *)(got), *_e = (const uint8_t *)(exp); \
	long _d = first_diff(_g, _e, (n)); \
	if (_d >= 0) { \
		fprintf(stderr, "  FAIL %s:%d: %s differs from %s at byte %ld of %zu: " \
			"0x%02x != 0x%02x\n", __FILE__, __LINE__, #got, #exp, _d, \
			(size_t)(n), _g[_d], _e[_d]); \
		return TEST_FAILED; \
	} \
} while (0)

static inline long
first_not(const uint8_t *p, uint8_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

#define ASSERT_FILL(p, v, n) do { \
	const uint8_t *_p = (const uint8_t *)(p); \
	long _d = first_not(_p, (v), (n)); \
	if (_d >= 0) { \
		fprintf(stderr, "  FAIL %s:%d: %s[%ld] = 0x%02x, expected untouched 0x%02x\n", \
			__FILE__, __LINE__, #p, _d, _p[_d], (unsigned int)(v)); \
		return TEST_FAILED; \
	} \
} while (0)

#define ASSERT_STATUS(wc, st) do { \
	if ((wc).status != (st)) { \
		fprintf(stderr, "  FAIL %s:%d: wr_id %" PRIu64 " status %s (%d), expected %s\n", \
			__FILE__, __LINE__, (uint64_t)(wc).wr_id, \
			ibv_wc_status_str((wc).status), (wc).status, ibv_wc_status_str(st)); \
		return TEST_FAILED; \
	} \
} while (0)

/* Exactly one completion within WC_MS. */
#define POLL1(cq, wc) do { \
	int _n = h_poll((cq), &(wc), 1, WC_MS); \
	TEST_ASSERT(_n == 1, "no completion on " #cq " within %d ms (got %d)", WC_MS, _n); \
} while (0)

/* No completion on @cq for @ms (progress is driven meanwhile). */
#define ASSERT_QUIET(cq, ms) do { \
	struct ibv_wc _w; \
	int _n = h_poll((cq), &_w, 1, (ms)); \
	TEST_ASSERT(_n == 0, "unexpected completion on " #cq ": wr_id %" PRIu64 " status %s", \
		    (uint64_t)_w.wr_id, ibv_wc_status_str(_w.status)); \
} while (0)

/* One completion of WR @wr_id on @cq within 5 s, of @status (and, on success, of @opcode). */
static inline int
one_wc(struct ibv_cq *cq, struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status status,
       enum ibv_wc_opcode opcode)
{
	TEST_ASSERT_EQ(h_poll(cq, wc, 1, 5000), 1);
	TEST_ASSERT(wc->status == status, "wr %" PRIu64 ": %s, want %s", wc->wr_id,
		    ibv_wc_status_str(wc->status), ibv_wc_status_str(status));
	TEST_ASSERT_EQ(wc->wr_id, wr_id);
	if (status == IBV_WC_SUCCESS)
		TEST_ASSERT_EQ(wc->opcode, opcode);
	return TEST_SUCCESS;
}

#endif
