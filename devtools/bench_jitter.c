/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_jitter: how often the machine itself takes a busy CPU away, the
 * floor under every tail latency measured on it. One thread on each of the
 * first two CPUs the process may run on, both at once (as a benchmark's two
 * polling threads run), reads CLOCK_MONOTONIC in a loop for @seconds and
 * counts every gap between two reads of @threshold_us or more: an
 * interrupt, the host descheduling the vCPU, anything that stops the loop.
 * devtools/bench-compare compiles it with cc -pthread and runs it under
 * taskset on its two cores:
 *
 *   bench_jitter seconds [threshold_us]
 *
 * Prints one JSON object: {"results": [{"cpu", "seconds", "threshold_us",
 * "gaps", "per_s", "lost_pct", "p50_us", "p99_us", "max_us"}, ...]}: the
 * gaps' count, their rate, the share of the time they took and their
 * sizes. A ping-pong whose round trip takes t us on the two CPUs is stopped
 * in about (per_s of one + per_s of the other) * t / 1e6 of its iterations:
 * where that exceeds 0.1%, its p99.9 measures the machine.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define MAX_GAPS	(1u << 20)

struct probe {
	pthread_t tid;
	int cpu;
	double seconds;
	uint64_t threshold_ns;
	uint64_t *gaps;		/* ns, MAX_GAPS at most kept */
	uint64_t n;
	uint64_t lost_ns;
	double ran;
};

static pthread_barrier_t start;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *
spin(void *arg)
{
	struct probe *p = arg;
	uint64_t t0, end, prev;

	bench_pin(p->cpu);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	end = t0 + (uint64_t)(p->seconds * 1e9);
	prev = t0;
	for (;;) {
		uint64_t t = now_ns(), d = t - prev;

		if (d >= p->threshold_ns) {
			if (p->n < MAX_GAPS)
				p->gaps[p->n] = d;
			p->n++;
			p->lost_ns += d;
		}
		prev = t;
		if (t >= end)
			break;
	}
	p->ran = (double)(prev - t0) / 1e9;
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @q quantile of the @n sorted gaps kept, in us (0 for none). */
static double
quantile(const uint64_t *g, uint64_t n, double q)
{
	uint64_t i;

	if (n == 0)
		return 0;
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return (double)g[i] / 1e3;
}

int
main(int argc, char **argv)
{
	struct probe p[2];
	int cpus[2], np = 2;
	double seconds, threshold_us = 1.0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_jitter seconds [threshold_us]\n");
		return 2;
	}
	seconds = atof(argv[1]);
	if (argc == 3)
		threshold_us = atof(argv[2]);
	if (!(seconds > 0 && seconds <= 600 && threshold_us > 0)) {
		fprintf(stderr, "bench_jitter: seconds in (0, 600], threshold above 0\n");
		return 2;
	}
	if (bench_two_cpus(cpus) != 0) {
		cpus[0] = sched_getcpu();
		np = 1;
	}
	pthread_barrier_init(&start, NULL, (unsigned int)np);
	for (int i = 0; i < np; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].cpu = cpus[i];
		p[i].seconds = seconds;
		p[i].threshold_ns = (uint64_t)(threshold_us * 1e3);
		p[i].gaps = malloc(MAX_GAPS * sizeof(uint64_t));
		if (p[i].gaps == NULL) {
			fprintf(stderr, "bench_jitter: no memory\n");
			return 1;
		}
		if (pthread_create(&p[i].tid, NULL, spin, &p[i]) != 0) {
			fprintf(stderr, "bench_jitter: pthread_create failed\n");
			return 1;
		}
	}
	printf("{\"results\": [");
	for (int i = 0; i < np; i++) {
		uint64_t kept;

		pthread_join(p[i].tid, NULL);
		kept = p[i].n < MAX_GAPS ? p[i].n : MAX_GAPS;
		qsort(p[i].gaps, kept, sizeof(uint64_t), cmp_u64);
		printf("%s{\"cpu\": %d, \"seconds\": %.3f, \"threshold_us\": %.3f, "
		       "\"gaps\": %llu, \"per_s\": %.1f, \"lost_pct\": %.4f, \"p50_us\": %.2f, "
		       "\"p99_us\": %.2f, \"max_us\": %.2f}",
		       i ? ", " : "", p[i].cpu, p[i].ran, threshold_us,
		       (unsigned long long)p[i].n, (double)p[i].n / p[i].ran,
		       100.0 * (double)p[i].lost_ns / 1e9 / p[i].ran,
		       quantile(p[i].gaps, kept, 0.5), quantile(p[i].gaps, kept, 0.99),
		       quantile(p[i].gaps, kept, 1.0));
		free(p[i].gaps);
	}
	printf("]}\n");
	return 0;
}
