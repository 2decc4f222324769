/* SPDX-License-Identifier: BSD-3-Clause */
/* net_impair devargs, callable without a device (test/fuzz). */
#ifndef IMPAIR_ARGS_H
#define IMPAIR_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <rte_ethdev.h>

#define IMPAIR_DIR_TX		1u
#define IMPAIR_DIR_RX		2u

enum impair_stream {
	IMPAIR_RNG_DROP,
	IMPAIR_RNG_DUP,
	IMPAIR_RNG_CORRUPT,
	IMPAIR_RNG_REORDER,
	IMPAIR_RNG_MAX,
};

struct impair_cfg {
	char ethdev[RTE_ETH_NAME_MAX_LEN];
	double p[IMPAIR_RNG_MAX];	/* indexed by enum impair_stream */
	uint64_t delay_us;
	uint64_t seed;
	unsigned int dir;
	bool link_down;		/* link=down: the link starts down */
};

int impair_args_parse(const char *name, const char *params, struct impair_cfg *cfg);
int impair_args_update(const char *name, const char *params, struct impair_cfg *cfg);

#endif /* IMPAIR_ARGS_H */
