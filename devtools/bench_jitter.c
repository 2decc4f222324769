/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_jitter: how often the machine itself takes a busy CPU away, the
 * floor under every tail latency measured on it. One thread on each of the
 * first two CPUs the process may run on, both at once (as a benchmark's two
 * polling threads run), reads CLOCK_MONOTONIC in a loop for @seconds and
 * counts every gap between two reads of @threshold_us or more: an
 * interrupt, the host descheduling the vCPU, anything that stops the loop.
 * Then each times UNITS pieces of the same work, two kinds in turn, each
 * about UNIT_US: a chain of dependent multiplies (no memory: what the core
 * itself does to a constant task that is slowed, not stopped), and a chain
 * of dependent loads through CHASE_KB of memory in a random cycle (misses
 * L1, stays in L2: what the caches and memory add, as a transport's frames,
 * queues and QP state meet it). Their spread is the floor under any tail
 * measured here: a task that does the same thing each time varies so much
 * on this machine.
 * devtools/bench-compare compiles it with cc -pthread and runs it under
 * taskset on its two cores:
 *
 *   bench_jitter seconds [threshold_us]
 *
 * Prints one JSON object: {"results": [{"cpu", "seconds", "threshold_us",
 * "gaps", "per_s", "lost_pct", "p50_us", "p99_us", "max_us", "alu_p50_us",
 * "alu_p99_us", "alu_p999_us", "mem_p50_us", "mem_p99_us", "mem_p999_us"},
 * ...]}: the gaps' count, their rate, the share of the time they took and
 * their sizes; each work's p50, p99 and p99.9. A ping-pong whose round
 * trip takes t us on the two CPUs is stopped in about (per_s of one +
 * per_s of the other) * t / 1e6 of its iterations: where that exceeds
 * 0.1%, its p99.9 measures the machine.
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
#define UNITS		100000u
#define UNIT_US		0.5
#define CHASE_KB	512u
#define CHASE_LINES	(CHASE_KB * 1024u / 64u)

struct probe {
	pthread_t tid;
	int cpu;
	double seconds;
	uint64_t threshold_ns;
	uint64_t *gaps;		/* ns, MAX_GAPS at most kept */
	uint64_t n;
	uint64_t lost_ns;
	double ran;
	uint64_t iters;		/* the multiplies a unit of work */
	uint64_t loads;		/* the loads a unit of the other */
	uint64_t *chase;	/* CHASE_LINES lines, each the index of the next */
	uint32_t *perm;		/* CHASE_LINES, to build it */
	double *alu, *mem;	/* UNITS times each, us */
	/* where the work's results go, so that it is done: each thread's own line */
	volatile uint64_t sink __attribute__((aligned(64)));
};

static pthread_barrier_t start;

/* @n dependent multiply-adds: the same time every run on an undisturbed core */
static uint64_t __attribute__((noinline))
work(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* @n dependent loads through @c, from line @x: its cycle is all the lines */
static uint64_t __attribute__((noinline))
chase(const uint64_t *c, uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = c[x * 8];
	return x;
}

/*
 * @c's lines in one random cycle (a fixed seed: the same walk every run),
 * shuffled in @perm (CHASE_LINES, the caller's: each thread its own)
 */
static void
chase_init(uint64_t *c, uint32_t *perm)
{
	uint64_t r = 88172645463325252ull;

	for (uint32_t i = 0; i < CHASE_LINES; i++)
		perm[i] = i;
	for (uint32_t i = CHASE_LINES - 1; i > 0; i--) {
		uint32_t j, t;

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		j = (uint32_t)(r % (i + 1));
		t = perm[i], perm[i] = perm[j], perm[j] = t;
	}
	for (uint32_t i = 0; i < CHASE_LINES; i++)
		c[perm[i] * 8] = perm[(i + 1) % CHASE_LINES];
}

/* How many of @f's steps take about UNIT_US on this core: from the fastest of a few tries. */
static uint64_t
calibrate(struct probe *p, uint64_t (*f)(const uint64_t *, uint64_t, uint64_t), const uint64_t *c)
{
	uint64_t n = 1000, best = UINT64_MAX;

	for (int k = 0; k < 200; k++) {
		uint64_t a = bench_now_ns(), d;

		p->sink = f(c, n, 0);
		d = bench_now_ns() - a;
		if (d < best)
			best = d;
	}
	return (uint64_t)((double)n * UNIT_US * 1e3 / (double)(best ? best : 1)) + 1;
}

static uint64_t
work_c(const uint64_t *c, uint64_t n, uint64_t x)
{
	(void)c;
	return work(n, x);
}
static void *
spin(void *arg)
{
	struct probe *p = arg;
	uint64_t t0, end, prev;

	bench_pin(p->cpu);
	pthread_barrier_wait(&start);
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(p->seconds * 1e9);
	prev = t0;
	for (;;) {
		uint64_t t = bench_now_ns(), d = t - prev;

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
	/* the same work, UNITS times each, both cores at once */
	chase_init(p->chase, p->perm);
	pthread_barrier_wait(&start);
	p->iters = calibrate(p, work_c, NULL);
	p->loads = calibrate(p, chase, p->chase);
	for (uint32_t i = 0; i < UNITS; i++) {
		uint64_t a = bench_now_ns(), b;

		p->sink = work(p->iters, a);
		b = bench_now_ns();
		p->sink = chase(p->chase, p->loads, p->sink % CHASE_LINES);
		p->alu[i] = (double)(b - a) / 1e3;
		p->mem[i] = (double)(bench_now_ns() - b) / 1e3;
	}
	return NULL;
}

/* p50, p99 and p99.9 of @u (UNITS, sorted here) as JSON members named @name_* */
static void
print_units(const char *name, double *u)
{
	qsort(u, UNITS, sizeof(double), bench_cmp_double);
	printf(", \"%s_p50_us\": %.3f, \"%s_p99_us\": %.3f, \"%s_p999_us\": %.3f", name,
	       u[UNITS / 2], name, u[(uint64_t)(0.99 * (UNITS - 1) + 0.5)], name,
	       u[(uint64_t)(0.999 * (UNITS - 1) + 0.5)]);
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
		p[i].alu = malloc(UNITS * sizeof(double));
		p[i].mem = malloc(UNITS * sizeof(double));
		p[i].chase = aligned_alloc(64, CHASE_LINES * 64u);
		p[i].perm = malloc(CHASE_LINES * sizeof(uint32_t));
		if (p[i].gaps == NULL || p[i].alu == NULL || p[i].mem == NULL || p[i].chase == NULL ||
		    p[i].perm == NULL) {
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
		       "\"p99_us\": %.2f, \"max_us\": %.2f",
		       i ? ", " : "", p[i].cpu, p[i].ran, threshold_us,
		       (unsigned long long)p[i].n, (double)p[i].n / p[i].ran,
		       100.0 * (double)p[i].lost_ns / 1e9 / p[i].ran,
		       quantile(p[i].gaps, kept, 0.5), quantile(p[i].gaps, kept, 0.99),
		       quantile(p[i].gaps, kept, 1.0));
		print_units("alu", p[i].alu);
		print_units("mem", p[i].mem);
		printf("}");
		free(p[i].gaps);
		free(p[i].alu);
		free(p[i].mem);
		free(p[i].chase);
		free(p[i].perm);
	}
	printf("]}\n");
	return 0;
}
