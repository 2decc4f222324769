/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_memcpy: what one core copies with memcpy, the ceiling for droce's
 * large transfers (the engine copies each payload once into and once out
 * of an mbuf on the same kind of core). devtools/bench-compare compiles it
 * with cc and runs it pinned to one core:
 *
 *   bench_memcpy size[,size...] iters
 *
 * For each size: two buffers of that size, touched first so no page fault
 * is timed, one untimed warm-up copy, then iters copies from one to the
 * other timed as a whole with CLOCK_MONOTONIC. Prints one JSON object
 * ({"results": [{"size", "iters", "seconds", "msg_rate_mps", "gbit_s"}]},
 * gbit_s counting the bytes copied, 1e9 bits a Gbit as droce-perf does).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

int
main(int argc, char **argv)
{
	unsigned long iters;
	const char *p;
	char *end;
	int first = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_memcpy size[,size...] iters\n");
		return 2;
	}
	iters = strtoul(argv[2], &end, 0);
	if (*end || iters == 0) {
		fprintf(stderr, "bench_memcpy: iters must be a positive number\n");
		return 2;
	}
	printf("{\"results\": [");
	for (p = argv[1]; *p; p = end + (*end == ',')) {
		size_t size = bench_parse_size(p, &end);
		unsigned char *src, *dst;
		double t0, secs;

		if ((*end && *end != ',') || size == 0) {
			fprintf(stderr, "bench_memcpy: bad size list %s\n", argv[1]);
			return 2;
		}
		src = malloc(size);
		dst = malloc(size);
		if (src == NULL || dst == NULL) {
			fprintf(stderr, "bench_memcpy: no memory for %zu bytes\n", size);
			return 1;
		}
		memset(src, 0x5a, size);
		memset(dst, 0, size);
		memcpy(dst, src, size);
		t0 = bench_now();
		for (unsigned long i = 0; i < iters; i++) {
			memcpy(dst, src, size);
			/* the copy must happen every time: dst is "read" here */
			__asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
		}
		secs = bench_now() - t0;
		if (dst[size - 1] != 0x5a) {
			fprintf(stderr, "bench_memcpy: the copy did not arrive\n");
			return 1;
		}
		printf("%s\n  {\"size\": %zu, \"iters\": %lu, \"seconds\": %.9f, "
		       "\"msg_rate_mps\": %.6g, \"gbit_s\": %.6g}", first ? "" : ",", size, iters,
		       secs, (double)iters / secs / 1e6, (double)iters * (double)size * 8 / secs / 1e9);
		first = 0;
		free(src);
		free(dst);
	}
	printf("\n]}\n");
	return 0;
}
