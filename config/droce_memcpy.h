/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_memcpy: a copy as fast as the machine allows, for the drivers' frame
 * and payload copies.
 *
 * Small copies: rte_memcpy, compiled inline for the build's instruction set
 * (Debian's libdpdk sets -march=corei7, SSE4.2). Up to 128 bytes it is as
 * fast as anything or faster (64 bytes: 1.4 ns against the C library's 2.9,
 * the call's own cost); from a few hundred bytes on, its SSE loop (palignr
 * for a misaligned source) is slow (4 KiB, hot caches, a destination 6
 * bytes off alignment as a frame's payload is: 91 ns against 49).
 *
 * From DROCE_COPY_WIDE_MIN bytes on: plain 64-byte (AVX-512) or 32-byte
 * (AVX2) moves where the CPU and OS have them, chosen at run time, else the
 * C library's memcpy. Frames and payloads cross CPUs: one core writes a
 * slot or a frame that another then reads. On the AMD EPYC this was
 * measured on, 4 KiB copied into a ring of slots by one core and out by the
 * other (devtools/bench_xcopy.c --copy libc z64 y32, the ways taking turns):
 * plain moves 184-227 Gbit/s against memcpy's 174-203 (glibc 2.36, which
 * takes `rep movsb` at such sizes), and in some runs memcpy fell to 56-78
 * where plain moves kept 190-230. In one process, hot caches (droce-perf
 * -p inline write_bw -b 1, 64 KiB and 1 MiB, five rounds each way in
 * turn): 95-98 and 87-93 Gbit/s against 75-97 and 69-87. Where the bytes
 * start in their cache line matters more than either (net_shm's
 * shm_frame_off).
 */
#ifndef DROCE_MEMCPY_H
#define DROCE_MEMCPY_H

#include <stdint.h>
#include <string.h>

#include <rte_memcpy.h>

/* from this many bytes on, droce_copy_wide() */
#define DROCE_COPY_WIDE_MIN	256

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>

/*
 * @n >= 64 bytes in 64-byte moves, the last one overlapping the one before
 * where @n is not a multiple (the areas do not overlap: memcpy's contract).
 */
__attribute__((target("avx512f"))) static void
droce_copy_z(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 64 <= n; i += 64)
		_mm512_storeu_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
	if (i < n)
		_mm512_storeu_si512((void *)(d + n - 64),
				    _mm512_loadu_si512((const void *)(s + n - 64)));
	_mm256_zeroupper();	/* no dirty upper halves for the SSE code after */
}

/* The same in 32-byte moves, @n >= 32. */
__attribute__((target("avx2"))) static void
droce_copy_y(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(void *)(d + i),
				    _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
	if (i < n)
		_mm256_storeu_si256((__m256i *)(void *)(d + n - 32),
				    _mm256_loadu_si256((const __m256i *)(const void *)(s + n - 32)));
	_mm256_zeroupper();
}

/*
 * GCC's __builtin_cpu_supports() reads what libgcc's constructor found,
 * AVX-512 and AVX only where the OS saves their registers (XGETBV).
 */
static inline void
droce_copy_wide(void *dst, const void *src, size_t n)
{
	if (__builtin_cpu_supports("avx512f"))
		droce_copy_z(dst, src, n);
	else if (__builtin_cpu_supports("avx2"))
		droce_copy_y(dst, src, n);
	else
		memcpy(dst, src, n);
}
#else
static inline void
droce_copy_wide(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}
#endif

static inline void
droce_memcpy(void *dst, const void *src, size_t n)
{
	if (n < DROCE_COPY_WIDE_MIN)
		rte_memcpy(dst, src, n);
	else
		droce_copy_wide(dst, src, n);
}

#endif /* DROCE_MEMCPY_H */
