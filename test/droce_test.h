/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small test harness: a test file defines named cases and runs them as one
 * suite; each case states what it checks in its name. Assertions print the
 * expression and values and fail the case. main() exits non-zero if any case
 * failed, so meson counts the file as failed.
 */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct droce_test_case {
	const char *name;
	int (*fn)(void);
};

#define TEST_SUCCESS 0
#define TEST_FAILED -1
#define TEST_SKIPPED 77

#define TEST_ASSERT(cond, fmt, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "  FAIL %s:%d: %s: " fmt "\n", __FILE__, __LINE__, \
			#cond, ##__VA_ARGS__); \
		return TEST_FAILED; \
	} \
} while (0)

#define TEST_ASSERT_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		fprintf(stderr, "  FAIL %s:%d: %s == %s: %lld != %lld\n", __FILE__, \
			__LINE__, #a, #b, _a, _b); \
		return TEST_FAILED; \
	} \
} while (0)

#define TEST_ASSERT_PTR_EQ(a, b) do { \
	const void *_a = (const void *)(a), *_b = (const void *)(b); \
	if (_a != _b) { \
		fprintf(stderr, "  FAIL %s:%d: %s == %s: %p != %p\n", __FILE__, \
			__LINE__, #a, #b, _a, _b); \
		return TEST_FAILED; \
	} \
} while (0)

/* A helper that returns 0 or has said (on stderr) why not: fail the case at this line. */
#define CHECK(x) TEST_ASSERT((x) == 0, "(see above)")

#define TEST_CASE(fn) { #fn, fn }

/* Runs every case; setup/teardown may be NULL. Returns the process exit code. */
static inline int
droce_test_run(const char *suite, const struct droce_test_case *cases, int n,
	       int (*setup)(void), void (*teardown)(void))
{
	int passed = 0, failed = 0, skipped = 0;

	for (int i = 0; i < n; i++) {
		int rc = setup ? setup() : 0;

		if (rc == 0)
			rc = cases[i].fn();
		else
			fprintf(stderr, "  setup failed\n");
		if (teardown)
			teardown();
		if (rc == TEST_SKIPPED) {
			skipped++;
			printf("SKIP %s.%s\n", suite, cases[i].name);
		} else if (rc == 0) {
			passed++;
			printf("ok   %s.%s\n", suite, cases[i].name);
		} else {
			failed++;
			printf("FAIL %s.%s\n", suite, cases[i].name);
		}
		fflush(stdout);
	}
	printf("%s: %d cases passed, %d failed, %d skipped\n", suite, passed, failed, skipped);
	return failed ? 1 : 0;
}

#define DROCE_TEST_MAIN(suite, cases, setup, teardown) \
	droce_test_run(suite, cases, (int)(sizeof(cases) / sizeof(cases[0])), setup, teardown)

#endif /* DROCE_TEST_H */
