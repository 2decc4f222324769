/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_icrc: what each ICRC engine (roce_icrc.c) computes per second on one
 * core, over one frame in cache, as the driver calls it (roce_icrc_ipv4():
 * the masked headers, then the rest). Built by meson as
 * build/devtools/bench_icrc (not installed, not a test):
 *
 *   bench_icrc [size[,size...]]
 *
 * A size is the ICRC-covered length from the IPv4 header on (40 bytes of
 * IPv4, UDP and BTH, then payload); the default list has an ACK (44), a
 * 64-byte SEND (104), small frames around the 16-byte steps and the small
 * frame path's end (40 + 256), then large ones. For each size and each
 * engine the CPU has: untimed calls to size a round (which warm up too),
 * then 15 rounds of about 20 ms each, timed with CLOCK_MONOTONIC; the best
 * round is printed (short rounds, so that on a shared machine some run
 * undisturbed), as GB/s (1e9 bytes) and ns per call, twice: with calls
 * independent of each other (throughput: the CPU overlaps them), and with
 * each call's frame address depending on the previous call's result
 * ("dep ns": latency, as when the driver waits for the value). Pin it to
 * one core (taskset -c N) for steadier figures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roce_hdr.h"

#define ROUNDS		15
#define ROUND_SEC	0.02
#define SIZE_MAX_B	9600

static const char *const engines[] = { "table", "clmul", "avx2", "avx512" };

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Calls per round: enough for about ROUND_SEC, from a short trial. */
static uint64_t
calibrate(const uint8_t *f, uint32_t len, volatile uint32_t *sink)
{
	uint64_t iters = 1000;
	double t;

	for (;;) {
		t = now();
		for (uint64_t i = 0; i < iters; i++)
			*sink ^= roce_icrc_ipv4(f, len);
		t = now() - t;
		if (t > ROUND_SEC / 10)
			break;
		iters *= 4;
	}
	return (uint64_t)((double)iters * ROUND_SEC / t) + 1;
}

int
main(int argc, char **argv)
{
	static uint8_t frame[SIZE_MAX_B] __attribute__((aligned(64)));
	const char *sizes = argc > 1 ? argv[1] :
			    "44,52,64,104,112,176,240,295,296,1024,4096";
	volatile uint32_t sink = 0, vzero = 0;
	const uint32_t zero = vzero;	/* 0, unknown to the compiler */
	char *list, *tok, *save;

	for (uint32_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 131 + 7);
	frame[0] = 0x45;	/* IPv4 without options: the usual masked prefix */

	printf("%8s  %-7s %9s %9s %9s\n", "bytes", "engine", "GB/s", "ns/call", "dep ns");
	list = strdup(sizes);
	if (list == NULL)
		return 1;
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		long len = strtol(tok, NULL, 0);

		if (len < 40 || len > SIZE_MAX_B) {
			fprintf(stderr, "bench_icrc: size %s: 40..%d\n", tok, SIZE_MAX_B);
			free(list);
			return 1;
		}
		for (unsigned int e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			double best = 1e30, best_dep = 1e30;
			uint64_t iters;
			uint32_t crc = 0;

			if (roce_icrc_engine_set(engines[e]) != 0)
				continue;	/* not on this CPU */
			iters = calibrate(frame, (uint32_t)len, &sink);
			for (int r = 0; r < ROUNDS; r++) {
				double t = now();

				for (uint64_t i = 0; i < iters; i++)
					sink ^= roce_icrc_ipv4(frame, (uint32_t)len);
				t = now() - t;
				if (t < best)
					best = t;
				/* the same, each call waiting for the one before */
				t = now();
				for (uint64_t i = 0; i < iters; i++)
					crc = roce_icrc_ipv4(frame + (crc & zero), (uint32_t)len);
				t = now() - t;
				if (t < best_dep)
					best_dep = t;
			}
			sink ^= crc;
			printf("%8ld  %-7s %9.2f %9.1f %9.1f\n", len, engines[e],
			       (double)len * (double)iters / best / 1e9, best / (double)iters * 1e9,
			       best_dep / (double)iters * 1e9);
		}
	}
	free(list);
	return 0;
}
