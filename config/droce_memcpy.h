/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_memcpy: a copy as fast as the machine allows, for the drivers' frame
 * and payload copies. rte_memcpy is compiled inline for the build's
 * instruction set, which Debian's libdpdk sets to -march=corei7 (SSE4.2):
 * from a few hundred bytes on, its SSE loop (palignr for a misaligned
 * source) is slower than the C library's memcpy, which picks AVX2, AVX-512
 * and ERMS at run time. On the EPYC this was written on, hot caches, a
 * destination 6 bytes off alignment as a frame's payload is: 256 bytes
 * 6.6 ns against 3.6, 1 KiB 19.2 against 11.0, 4 KiB 91 against 49; up to
 * 128 bytes rte_memcpy is as fast or faster (64 bytes: 1.4 against 2.9, the
 * call's own cost).
 */
#ifndef DROCE_MEMCPY_H
#define DROCE_MEMCPY_H

#include <string.h>

#include <rte_memcpy.h>

/* from this many bytes on, the C library's memcpy */
#define DROCE_COPY_LIBC_MIN	256

static inline void
droce_memcpy(void *dst, const void *src, size_t n)
{
	if (n < DROCE_COPY_LIBC_MIN)
		rte_memcpy(dst, src, n);
	else
		memcpy(dst, src, n);
}

#endif /* DROCE_MEMCPY_H */
