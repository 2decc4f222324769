/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_xcopy: what two cores move through a ring of frame slots, as two
 * processes joined by net_shm do: one core copies each frame's bytes into a
 * slot, the other copies them out of the slot. Every line crosses from one
 * core's cache to the other's: this is the ceiling of a transfer that
 * copies in on one core and out on another (droce's RDMA WRITE between two
 * processes), where bench_memcpy's is one core's copy alone.
 * devtools/bench-compare compiles it with cc -O2 -pthread; it runs the
 * producer on the first CPU it may run on and the consumer on the second
 * (taskset -c A,B):
 *
 *   bench_xcopy size[,size...] iters
 *     Each size (K and M suffixes) moved iters times, from a source of that
 *     size into a destination of that size (both in the caches, as
 *     droce-perf -b 1 has them), in frames of up to 4 KiB whose bytes start
 *     on a cache line in their slot, with the copy droce uses
 *     (config/droce_memcpy.h: 64-byte moves with AVX-512, 32-byte with AVX2,
 *     else memcpy). Prints one JSON object as bench_memcpy does
 *     ({"results": [{"size", "iters", "seconds", "msg_rate_mps", "gbit_s"}]}).
 *
 *   bench_xcopy --copy libc|z64|y32|movsb[@offset] ...
 *     4 KiB frames copied in and out with memcpy, 64-byte AVX-512 moves,
 *     32-byte AVX2 moves or rep movsb, the bytes at @offset in their slot
 *     (default 64, a line's start; 58 is where net_shm's layout before
 *     version 4 put a payload behind 54 bytes of headers). The ways given
 *     take turns in batches of 2000 frames, 100 batches each, so that a
 *     VM's changes of speed fall on all alike; each prints its Gbit/s
 *     (1e9 bits) over its own batches.
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

#include "bench_util.h"

#define SLOT		4352u		/* net_shm's stride */
#define NB_SLOTS	1024u
#define LEN		4096u
#define AREA		(1u << 20)
#define BATCH		2000u
#define ROUNDS		100u		/* batches per offset */
#define OFFS_MAX	8

typedef void copy_fn(uint8_t *d, const uint8_t *s, size_t n);

static uint8_t *ring;
static int cpus[2];
static uint64_t head __attribute__((aligned(64)));
static uint64_t tail __attribute__((aligned(64)));
static copy_fn *copy;

/* a slot: its frame's offset and length, then the bytes at that offset */
struct slot_hdr {
	uint32_t off;
	uint32_t len;
};

/* what the consumer copies into, and how many frames it takes */
static struct {
	uint8_t *dst;
	size_t area;
	uint64_t frames;
} cons;

__attribute__((target("avx512f"))) static void
copy_z64(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 64 <= n; i += 64)
		_mm512_storeu_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
	if (i < n)
		memcpy(d + i, s + i, n - i);
}

__attribute__((target("avx2"))) static void
copy_y32(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(void *)(d + i),
				    _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
	if (i < n)
		memcpy(d + i, s + i, n - i);
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

static uint8_t *
slot_at(uint64_t i)
{
	return ring + (size_t)(i % NB_SLOTS) * SLOT;
}

static void *
consumer(void *arg)
{
	size_t o = 0;

	(void)arg;
	bench_pin(cpus[1]);
	for (uint64_t i = 0; i < cons.frames; i++) {
		const uint8_t *s = slot_at(i);
		struct slot_hdr h;

		while (__atomic_load_n(&head, __ATOMIC_ACQUIRE) == i)
			_mm_pause();
		memcpy(&h, s, sizeof(h));
		if (o + h.len > cons.area)
			o = 0;
		copy(cons.dst + o, s + h.off, h.len);
		o += h.len;
		__atomic_store_n(&tail, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* The consumer started for @frames frames into @dst (@area bytes). */
static pthread_t
start(uint8_t *dst, size_t area, uint64_t frames)
{
	pthread_t t;

	head = tail = 0;
	cons.dst = dst;
	cons.area = area;
	cons.frames = frames;
	pthread_create(&t, NULL, consumer, NULL);
	return t;
}

/*
 * The producer: @n frames of @len bytes at offset @off of their slots, from
 * @src (@area bytes, taken in turn) starting at frame number *@i; returns
 * once the consumer has taken them all.
 */
static void
produce(uint64_t *i, uint64_t n, uint32_t off, uint32_t len, const uint8_t *src, size_t area,
	size_t *o)
{
	for (uint64_t j = 0; j < n; j++, (*i)++) {
		uint8_t *s = slot_at(*i);
		struct slot_hdr h = { off, len };

		while (*i - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) >= NB_SLOTS)
			_mm_pause();
		if (*o + len > area)
			*o = 0;
		memcpy(s, &h, sizeof(h));
		copy(s + off, src + *o, len);
		*o += len;
		__atomic_store_n(&head, *i + 1, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&tail, __ATOMIC_ACQUIRE) < *i)
		_mm_pause();
}

/* The sizes of @list, each moved @iters times: JSON on stdout. */
static int
sizes(const char *list, unsigned long iters)
{
	const char *p;
	char *end;
	int first = 1;

	copy = __builtin_cpu_supports("avx512f") ? copy_z64 :
	       __builtin_cpu_supports("avx2") ? copy_y32 : copy_libc;
	printf("{\"results\": [");
	for (p = list; *p; p = end + (*end == ',')) {
		size_t size = bench_parse_size(p, &end), o = 0;
		uint32_t len;
		uint64_t per, i = 0;
		uint8_t *src, *dst;
		double t0, secs;
		pthread_t t;

		if ((*end && *end != ',') || size == 0) {
			fprintf(stderr, "bench_xcopy: bad size list %s\n", list);
			return 2;
		}
		len = size < LEN ? (uint32_t)size : LEN;
		per = (size + len - 1) / len;
		src = aligned_alloc(64, (size + 63) & ~(size_t)63);
		dst = aligned_alloc(64, (size + 63) & ~(size_t)63);
		if (src == NULL || dst == NULL) {
			fprintf(stderr, "bench_xcopy: no memory for %zu bytes\n", size);
			return 1;
		}
		memset(src, 0x5a, size);
		memset(dst, 0, size);
		/* one untimed pass: the pages and the caches as the timed ones find them */
		t = start(dst, size, per * (iters + 1));
		produce(&i, per, 64, len, src, size, &o);
		t0 = bench_now();
		produce(&i, per * iters, 64, len, src, size, &o);
		secs = bench_now() - t0;
		pthread_join(t, NULL);
		printf("%s{\"size\": %zu, \"iters\": %lu, \"seconds\": %.6f, "
		       "\"msg_rate_mps\": %.6f, \"gbit_s\": %.3f}", first ? "" : ", ", size, iters,
		       secs, iters / secs / 1e6, (double)size * iters * 8 / secs / 1e9);
		first = 0;
		free(src);
		free(dst);
	}
	printf("]}\n");
	return 0;
}

/* The alternating comparison of copies and offsets (--copy). */
static int
offsets(int argc, char **argv)
{
	const struct { const char *name; copy_fn *fn; bool have; } copies[] = {
		{ "libc", copy_libc, true },
		{ "z64", copy_z64, __builtin_cpu_supports("avx512f") },
		{ "y32", copy_y32, __builtin_cpu_supports("avx2") },
		{ "movsb", copy_movsb, true },
	};
	static uint8_t src[AREA] __attribute__((aligned(64))), dst[AREA] __attribute__((aligned(64)));
	struct { const char *name; copy_fn *fn; uint32_t off; double secs; } run[OFFS_MAX];
	unsigned int nb = 0;
	uint64_t i = 0;
	size_t o = 0;
	pthread_t t;

	for (int a = 0; a < argc && nb < OFFS_MAX; a++, nb++) {
		const char *at = strchr(argv[a], '@');
		size_t len = at != NULL ? (size_t)(at - argv[a]) : strlen(argv[a]);

		run[nb].fn = NULL;
		run[nb].secs = 0;
		run[nb].off = at != NULL ? (uint32_t)strtoul(at + 1, NULL, 0) : 64;
		for (unsigned int c = 0; c < sizeof(copies) / sizeof(copies[0]); c++)
			if (strlen(copies[c].name) == len && strncmp(argv[a], copies[c].name, len) == 0) {
				if (!copies[c].have) {
					fprintf(stderr, "bench_xcopy: this CPU cannot run %s\n",
						copies[c].name);
					return 1;
				}
				run[nb].name = copies[c].name;
				run[nb].fn = copies[c].fn;
			}
		if (run[nb].fn == NULL) {
			fprintf(stderr, "bench_xcopy: --copy libc|z64|y32|movsb[@offset] ...\n");
			return 2;
		}
		if (run[nb].off < sizeof(struct slot_hdr) || run[nb].off + LEN > SLOT) {
			fprintf(stderr, "bench_xcopy: %s: offset %zu..%u\n", argv[a],
				sizeof(struct slot_hdr), SLOT - LEN);
			return 2;
		}
	}
	memset(src, 1, sizeof(src));
	memset(dst, 2, sizeof(dst));
	t = start(dst, sizeof(dst), (uint64_t)BATCH * ROUNDS * nb);
	for (unsigned int r = 0; r < ROUNDS * nb; r++) {
		unsigned int k = r % nb;
		double t0 = bench_now();

		copy = run[k].fn;	/* the consumer takes it with the batch's first frame */
		produce(&i, BATCH, run[k].off, LEN, src, sizeof(src), &o);
		run[k].secs += bench_now() - t0;
	}
	pthread_join(t, NULL);
	for (unsigned int k = 0; k < nb; k++)
		printf("%s@%u: %.1f Gbit/s\n", run[k].name, run[k].off,
		       (double)BATCH * ROUNDS * LEN * 8 / run[k].secs / 1e9);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long iters;
	char *end;

	if (bench_two_cpus(cpus) != 0) {
		fprintf(stderr, "bench_xcopy: needs two CPUs (taskset -c A,B)\n");
		return 2;
	}
	ring = aligned_alloc(4096, (size_t)NB_SLOTS * SLOT);
	if (ring == NULL)
		return 1;
	memset(ring, 0, (size_t)NB_SLOTS * SLOT);
	bench_pin(cpus[0]);
	if (argc >= 3 && strcmp(argv[1], "--copy") == 0)
		return offsets(argc - 2, argv + 2);
	if (argc != 3) {
		fprintf(stderr, "usage: bench_xcopy size[,size...] iters\n"
			"       bench_xcopy --copy libc|z64|y32|movsb[@offset] ...\n");
		return 2;
	}
	iters = strtoul(argv[2], &end, 0);
	if (*end || iters == 0) {
		fprintf(stderr, "bench_xcopy: iters must be a positive number\n");
		return 2;
	}
	return sizes(argv[1], iters);
}
