/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-perf's tests: latency and bandwidth of each verb (perf_tests.c). */
#ifndef DROCE_PERF_TESTS_H
#define DROCE_PERF_TESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define PERF_MAX_SIZES	32
#define MAX_QPS		16384	/* -q: QPs a side for bandwidth tests */

struct perf_opts {
	const char *tests;		/* comma-separated names, or "main" */
	enum ibv_qp_type transport;	/* RC (default), UC or UD */
	bool transport_set;		/* given: tests that cannot use it are refused */
	size_t sizes[PERF_MAX_SIZES];	/* the sizes, in order */
	unsigned int nb_sizes;		/* 0: each test's default */
	unsigned int iters;		/* 0: each test's default */
	long warmup;			/* latency tests' untimed first iterations (-1: a tenth) */
	double duration;		/* > 0: seconds per figure instead of iterations */
	unsigned int qps;		/* QPs for bandwidth tests (1) */
	unsigned int post_list;		/* WRs per ibv_post_send call (1) */
	unsigned int inline_size;	/* max_inline_data; sends up to it go inline (0) */
	unsigned int cq_mod;		/* one signaled WR in cq_mod (1: all) */
	unsigned int depth;		/* outstanding WRs per QP (128) */
	unsigned int slots;		/* bandwidth tests' message buffers (0: depth) */
	bool td;			/* QPs on a thread domain, single-threaded CQs */
	unsigned int qp_timeout;	/* RC local ACK timeout exponent */
	bool json;			/* JSON on stdout instead of the table */
	bool odp;			/* buffers registered IBV_ACCESS_ON_DEMAND */
	const char *progress;		/* "inline" or "engine lcore", for the header */
	const char *loss;		/* drop probability of the embedded default, or NULL */
	size_t eager_limit;		/* tag tests: larger messages go by rendezvous */
};

/*
 * The bandwidth tests of @o on @n pairs of devices at once (@devs[2i] and
 * @devs[2i + 1]), pair i on the i-th of the EAL's lcores; 0, or exits.
 */
int perf_tests_run_threads(struct ibv_device **devs, unsigned int n, const struct perf_opts *o);

/* Run the tests of @o between @d0 and @d1; 0, or exits on a failure. */
int perf_tests_run(struct ibv_device *d0, struct ibv_device *d1, const struct perf_opts *o);

/*
 * Run one side of the tests between two processes, joined by the TCP
 * connection @sock: the client (@server false) runs the tests of @o and
 * measures; the server takes its options from the client. 0, or exits on
 * a failure.
 */
int perf_tests_remote(struct ibv_device *dev, const struct perf_opts *o, int sock, bool server);

/* Exit with a message unless every test of @o can run (@remote: with perf_tests_remote). */
void perf_tests_check(const struct perf_opts *o, bool remote);

/* "a,b,c" sizes (with K/M suffixes) into @o; a single size with @sweep: 2..size by powers of 2. */
int perf_sizes_parse(struct perf_opts *o, const char *s, bool sweep);

/* The test names perf_tests_run knows, for usage messages. */
extern const char perf_test_names[];

#endif
