/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What devtools' benchmark programs (bench_memcpy.c, bench_xcopy.c,
 * bench_pingpong.c, bench_jitter.c, bench_link.c) share; each is one file,
 * compiled with cc by devtools/bench-compare, which finds this header beside
 * it (bench_link, which needs DPDK, by meson).
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC, in nanoseconds. */
static inline uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same in seconds. */
static inline double
bench_now(void)
{
	return (double)bench_now_ns() / 1e9;
}

/* A size with an optional K or M suffix; *@end past it. */
static inline size_t
bench_parse_size(const char *s, char **end)
{
	size_t v = strtoull(s, end, 0);

	if (**end == 'K' || **end == 'k')
		v <<= 10, (*end)++;
	else if (**end == 'M' || **end == 'm')
		v <<= 20, (*end)++;
	return v;
}

/* The calling thread to CPU @cpu alone. */
static inline void
bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The first two CPUs the process may run on (taskset -c A,B): 0, or -1. */
static inline int
bench_two_cpus(int cpus[2])
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n == 2 ? 0 : -1;
}

/* For qsort: doubles in ascending order. */
static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The @n latency samples @us (microseconds), sorted here, as the JSON
 * members "p50_us", "p99_us", "p999_us" and "max_us" (without braces),
 * as droce-perf reports them.
 */
static inline void
bench_print_lat(double *us, size_t n)
{
	qsort(us, n, sizeof(*us), bench_cmp_double);
	printf("\"p50_us\": %.4f, \"p99_us\": %.4f, \"p999_us\": %.4f, \"max_us\": %.2f",
	       us[n / 2], us[(size_t)(n * 0.99)], us[(size_t)(n * 0.999)], us[n - 1]);
}

#endif /* BENCH_UTIL_H */
