/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_xcopy: what two cores move through a ring of frame slots, as two
 * processes joined by net_shm do: one core copies 4 KiB into each slot from
 * a 1 MiB source, the other copies it out of the slot into a 1 MiB
 * destination. Every line crosses from one core's cache to the other's; this
 * is the ceiling of a transfer that copies in and out, where bench_memcpy's
 * is one core's alone. Compile with cc -O2 -pthread; run:
 *
 *   bench_xcopy [copy [offset ...]]
 *
 * copy: libc (memcpy), z64 (64-byte AVX-512 moves), y32 (32-byte AVX2
 * moves) or movsb (rep movsb); default z64. Each offset (default 64 and
 * 118) is where the 4 KiB start in their slot: 64 is a cache line's start,
 * 118 the start of a RoCE payload behind its headers in a slot laid out
 * without care. The offsets take turns in batches of 2000 slots, 100
 * batches each, so that a VM's changes of speed fall on all alike; each
 * prints its Gbit/s (1e9 bits) over its own batches.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOT		4352u		/* net_shm's stride */
#define NB_SLOTS	1024u
#define LEN		4096u
#define AREA		(1u << 20)
#define BATCH		2000u
#define ROUNDS		100u		/* batches per offset */
#define OFFS_MAX	8

typedef void copy_fn(uint8_t *d, const uint8_t *s, size_t n);

static uint8_t *ring;
static uint8_t src[AREA] __attribute__((aligned(64))), dst[AREA] __attribute__((aligned(64)));
static uint64_t head __attribute__((aligned(64)));
static uint64_t tail __attribute__((aligned(64)));
static uint64_t total;
static copy_fn *copy;

__attribute__((target("avx512f"))) static void
copy_z64(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		_mm512_storeu_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
}

__attribute__((target("avx2"))) static void
copy_y32(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 32)
		_mm256_storeu_si256((__m256i *)(void *)(d + i),
				    _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
}

static void
copy_movsb(uint8_t *d, const uint8_t *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void
copy_libc(uint8_t *d, const uint8_t *s, size_t n)
{
	memcpy(d, s, n);
}

static void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The consumer: each slot's first word is the offset its bytes start at. */
static void *
consumer(void *arg)
{
	size_t o = 0;

	(void)arg;
	pin(1);
	for (uint64_t i = 0; i < total; i++) {
		const uint8_t *s = ring + (size_t)(i % NB_SLOTS) * SLOT;
		uint32_t off;

		while (__atomic_load_n(&head, __ATOMIC_ACQUIRE) == i)
			_mm_pause();
		memcpy(&off, s, sizeof(off));
		copy(dst + o, s + off, LEN);
		o = (o + LEN) % AREA;
		__atomic_store_n(&tail, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	const struct { const char *name; copy_fn *fn; const char *cpu; bool have; } copies[] = {
		{ "libc", copy_libc, NULL, true },
		{ "z64", copy_z64, "avx512f", __builtin_cpu_supports("avx512f") },
		{ "y32", copy_y32, "avx2", __builtin_cpu_supports("avx2") },
		{ "movsb", copy_movsb, NULL, true },
	};
	uint32_t offs[OFFS_MAX] = { 64, 118 };
	unsigned int nb_offs = 2;
	double secs[OFFS_MAX] = { 0 };
	const char *name = argc > 1 ? argv[1] : "z64";
	pthread_t t;
	uint64_t i = 0;
	size_t o = 0;

	for (unsigned int c = 0; c < sizeof(copies) / sizeof(copies[0]); c++)
		if (strcmp(name, copies[c].name) == 0) {
			if (!copies[c].have) {
				fprintf(stderr, "bench_xcopy: %s needs %s\n", name, copies[c].cpu);
				return 1;
			}
			copy = copies[c].fn;
		}
	if (copy == NULL) {
		fprintf(stderr, "usage: bench_xcopy [libc|z64|y32|movsb [offset ...]]\n");
		return 1;
	}
	if (argc > 2) {
		nb_offs = 0;
		for (int a = 2; a < argc && nb_offs < OFFS_MAX; a++) {
			offs[nb_offs] = (uint32_t)strtoul(argv[a], NULL, 0);
			if (offs[nb_offs] < sizeof(uint32_t) || offs[nb_offs] + LEN > SLOT) {
				fprintf(stderr, "bench_xcopy: offset %s: 4..%u\n", argv[a], SLOT - LEN);
				return 1;
			}
			nb_offs++;
		}
	}
	ring = aligned_alloc(4096, (size_t)NB_SLOTS * SLOT);
	if (ring == NULL)
		return 1;
	memset(ring, 0, (size_t)NB_SLOTS * SLOT);
	memset(src, 1, sizeof(src));
	memset(dst, 2, sizeof(dst));
	total = (uint64_t)BATCH * ROUNDS * nb_offs;
	pthread_create(&t, NULL, consumer, NULL);
	pin(0);
	for (unsigned int r = 0; r < ROUNDS * nb_offs; r++) {
		unsigned int k = r % nb_offs;
		double t0 = now();

		for (uint32_t j = 0; j < BATCH; j++, i++) {
			uint8_t *s = ring + (size_t)(i % NB_SLOTS) * SLOT;

			while (i - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) >= NB_SLOTS)
				_mm_pause();
			memcpy(s, &offs[k], sizeof(offs[k]));
			copy(s + offs[k], src + o, LEN);
			o = (o + LEN) % AREA;
			__atomic_store_n(&head, i + 1, __ATOMIC_RELEASE);
		}
		/* the batch is timed until the consumer has it all */
		while (__atomic_load_n(&tail, __ATOMIC_ACQUIRE) < i)
			_mm_pause();
		secs[k] += now() - t0;
	}
	pthread_join(t, NULL);
	for (unsigned int k = 0; k < nb_offs; k++)
		printf("%s offset %u: %.1f Gbit/s\n", name, offs[k],
		       (double)BATCH * ROUNDS * LEN * 8 / secs[k] / 1e9);
	return 0;
}
