/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_pingpong: the floor of every shared-memory transport between two
 * cores, measured the way droce-perf measures send_lat. Two threads, each
 * pinned to one of the first two CPUs the process may run on, hand
 * @lines cache lines to each other in turn: one writes them (the first
 * line last, as a flag), the other waits for the flag, reads the rest and
 * answers the same way. Each iteration is timed with CLOCK_MONOTONIC
 * around one round trip and counts half of it, after an untimed tenth.
 * devtools/bench-compare compiles it with cc -pthread and runs it under
 * taskset on its two cores:
 *
 *   bench_pingpong iters [lines]
 *
 * Prints one JSON object: {"results": [{"lines", "iters", "p50_us",
 * "p99_us", "p999_us", "max_us"}]}. On a VM the figure moves with where
 * the host places the two vCPUs (sharing a cache or not): a run's floor
 * says which placement the run had.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define MAX_LINES	64

struct line {
	volatile uint64_t v;
	char pad[64 - sizeof(uint64_t)];
};

static struct line ping[MAX_LINES] __attribute__((aligned(64)));
static struct line pong[MAX_LINES] __attribute__((aligned(64)));
static unsigned long total;
static unsigned int nlines = 1;
static int cpus[2];

/* Write @l's lines with @v, the flag (line 0) last. */
static void
put(struct line *l, uint64_t v)
{
	for (unsigned int k = nlines; k-- > 0;)
		__atomic_store_n(&l[k].v, v, k == 0 ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
}

/* Wait for @v in @l's flag, then read the rest: their sum, so nothing is skipped. */
static uint64_t
take(const struct line *l, uint64_t v)
{
	uint64_t sum = 0;

	while (__atomic_load_n(&l[0].v, __ATOMIC_ACQUIRE) != v)
		__builtin_ia32_pause();
	for (unsigned int k = 1; k < nlines; k++)
		sum += l[k].v;
	return sum;
}

static void *
echo(void *arg)
{
	uint64_t sum = 0;

	(void)arg;
	bench_pin(cpus[1]);
	for (uint64_t i = 1; i <= total; i++) {
		sum += take(ping, i);
		put(pong, i);
	}
	return (void *)(uintptr_t)sum;
}

int
main(int argc, char **argv)
{
	unsigned long iters, warm;
	pthread_t t;
	double *us;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_pingpong iters [lines]\n");
		return 2;
	}
	iters = strtoul(argv[1], &end, 0);
	if (*end || iters == 0) {
		fprintf(stderr, "bench_pingpong: iters must be a positive number\n");
		return 2;
	}
	if (argc == 3) {
		nlines = (unsigned int)strtoul(argv[2], &end, 0);
		if (*end || nlines == 0 || nlines > MAX_LINES) {
			fprintf(stderr, "bench_pingpong: lines must be 1 to %d\n", MAX_LINES);
			return 2;
		}
	}
	if (bench_two_cpus(cpus) != 0) {
		fprintf(stderr, "bench_pingpong: needs two CPUs (taskset -c A,B)\n");
		return 2;
	}
	warm = iters / 10;
	total = warm + iters;
	us = malloc(iters * sizeof(*us));
	if (us == NULL)
		return 1;
	memset(us, 0xff, iters * sizeof(*us));	/* no page fault in the timed loop */
	if (pthread_create(&t, NULL, echo, NULL) != 0)
		return 1;
	bench_pin(cpus[0]);
	for (uint64_t i = 1; i <= total; i++) {
		double t0 = (double)bench_now_ns() / 1e3;

		put(ping, i);
		(void)take(pong, i);
		if (i > warm)
			us[i - warm - 1] = ((double)bench_now_ns() / 1e3 - t0) / 2;
	}
	pthread_join(t, NULL);
	printf("{\"results\": [{\"lines\": %u, \"iters\": %lu, ", nlines, iters);
	bench_print_lat(us, iters);
	printf("}]}\n");
	free(us);
	return 0;
}
