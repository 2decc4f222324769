/* SPDX-License-Identifier: BSD-3-Clause */
/* net_shm devargs, callable without a device (test/fuzz). */
#ifndef SHM_ARGS_H
#define SHM_ARGS_H

#define SHM_LINK_MAX		64	/* bytes of a link name */

int shm_args_parse(const char *name, const char *params, char link[SHM_LINK_MAX + 1]);

#endif /* SHM_ARGS_H */
