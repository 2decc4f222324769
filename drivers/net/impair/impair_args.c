/* SPDX-License-Identifier: BSD-3-Clause */
/* net_impair devargs (impair_args.h), callable without a device. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_kvargs.h>
#include <rte_string_fns.h>

#include "impair_loc.h"

/* ---------------------------------------------------------------------
 * Devargs.
 */

static const char *const impair_valid_args[] = {
	IMPAIR_ARG_ETHDEV, IMPAIR_ARG_DROP, IMPAIR_ARG_DUP, IMPAIR_ARG_REORDER,
	IMPAIR_ARG_CORRUPT, IMPAIR_ARG_DELAY_US, IMPAIR_ARG_SEED, IMPAIR_ARG_DIR,
	IMPAIR_ARG_LINK,
};

static int
impair_parse_prob(const char *name, const char *key, const char *val, double *out)
{
	char *end;
	double p;

	if (val[0] != '.' && !isdigit((unsigned char)val[0]))
		goto bad;
	errno = 0;
	p = strtod(val, &end);
	if (errno != 0 || *end != '\0' || !isfinite(p) || p < 0.0 || p > 1.0)
		goto bad;
	*out = p;
	return 0;
bad:
	IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected a probability from 0 to 1",
		   name, key, val);
	return -EINVAL;
}

static int
impair_parse_u64(const char *name, const char *key, const char *val, int base,
		 uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)val[0]))
		goto bad;
	errno = 0;
	v = strtoull(val, &end, base);
	if (errno != 0 || *end != '\0' || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected an integer from 0 to %" PRIu64,
		   name, key, val, max);
	return -EINVAL;
}

/* The devargs into @cfg; 0 or -EINVAL (logged). */
int
impair_args_parse(const char *name, const char *params, struct impair_cfg *cfg)
{
	struct rte_kvargs *kv;
	bool seen[RTE_DIM(impair_valid_args)] = { false };
	int ret = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->dir = IMPAIR_DIR_TX;
	if (params == NULL || params[0] == '\0') {
		IMPAIR_LOG(ERR, "%s: missing required argument %s=<port name>",
			   name, IMPAIR_ARG_ETHDEV);
		return -EINVAL;
	}
	kv = rte_kvargs_parse(params, NULL);
	if (kv == NULL) {
		IMPAIR_LOG(ERR, "%s: cannot parse arguments \"%s\"", name, params);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;
		const char *val = kv->pairs[i].value;
		unsigned int k;

		for (k = 0; k < RTE_DIM(impair_valid_args); k++)
			if (strcmp(key, impair_valid_args[k]) == 0)
				break;
		if (k == RTE_DIM(impair_valid_args)) {
			IMPAIR_LOG(ERR, "%s: unknown argument %s", name, key);
			ret = -EINVAL;
			break;
		}
		if (seen[k]) {
			IMPAIR_LOG(ERR, "%s: argument %s given twice", name, key);
			ret = -EINVAL;
			break;
		}
		seen[k] = true;
		if (val == NULL || val[0] == '\0') {
			IMPAIR_LOG(ERR, "%s: argument %s needs a value", name, key);
			ret = -EINVAL;
			break;
		}
		if (strcmp(key, IMPAIR_ARG_ETHDEV) == 0) {
			if (strlcpy(cfg->ethdev, val, sizeof(cfg->ethdev)) >= sizeof(cfg->ethdev)) {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: name too long",
					   name, key, val);
				ret = -EINVAL;
			}
		} else if (strcmp(key, IMPAIR_ARG_DROP) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_DROP]);
		} else if (strcmp(key, IMPAIR_ARG_DUP) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_DUP]);
		} else if (strcmp(key, IMPAIR_ARG_REORDER) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_REORDER]);
		} else if (strcmp(key, IMPAIR_ARG_CORRUPT) == 0) {
			ret = impair_parse_prob(name, key, val, &cfg->p[IMPAIR_RNG_CORRUPT]);
		} else if (strcmp(key, IMPAIR_ARG_DELAY_US) == 0) {
			ret = impair_parse_u64(name, key, val, 10, IMPAIR_DELAY_US_MAX,
					       &cfg->delay_us);
		} else if (strcmp(key, IMPAIR_ARG_SEED) == 0) {
			ret = impair_parse_u64(name, key, val, 0, UINT64_MAX, &cfg->seed);
		} else if (strcmp(key, IMPAIR_ARG_DIR) == 0) {
			if (strcmp(val, "tx") == 0) {
				cfg->dir = IMPAIR_DIR_TX;
			} else if (strcmp(val, "rx") == 0) {
				cfg->dir = IMPAIR_DIR_RX;
			} else if (strcmp(val, "both") == 0) {
				cfg->dir = IMPAIR_DIR_TX | IMPAIR_DIR_RX;
			} else {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected tx, rx or both",
					   name, key, val);
				ret = -EINVAL;
			}
		} else if (strcmp(key, IMPAIR_ARG_LINK) == 0) {
			if (strcmp(val, "up") == 0) {
				cfg->link_down = false;
			} else if (strcmp(val, "down") == 0) {
				cfg->link_down = true;
			} else {
				IMPAIR_LOG(ERR, "%s: invalid argument %s=%s: expected up or down",
					   name, key, val);
				ret = -EINVAL;
			}
		}
	}
	rte_kvargs_free(kv);
	if (ret == 0 && cfg->ethdev[0] == '\0') {
		IMPAIR_LOG(ERR, "%s: missing required argument %s=<port name>",
			   name, IMPAIR_ARG_ETHDEV);
		ret = -EINVAL;
	}
	return ret;
}


/*
 * droce_impair_fault_set: the fault keys of @params (drop, dup, reorder,
 * corrupt, delay_us) into @cfg, the others left as they are; 0, or -EINVAL
 * (logged) with @cfg unchanged.
 */
int
impair_args_update(const char *name, const char *params, struct impair_cfg *cfg)
{
	static const char *const keys[] = {
		IMPAIR_ARG_DROP, IMPAIR_ARG_DUP, IMPAIR_ARG_REORDER, IMPAIR_ARG_CORRUPT,
		IMPAIR_ARG_DELAY_US, NULL,
	};
	struct impair_cfg c = *cfg;
	struct rte_kvargs *kv;
	int ret = 0;

	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	kv = rte_kvargs_parse(params, keys);
	if (kv == NULL) {
		IMPAIR_LOG(ERR, "%s: cannot parse \"%s\" (keys: drop, dup, reorder, corrupt, delay_us)",
			   name, params);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;
		const char *val = kv->pairs[i].value;

		if (val == NULL || val[0] == '\0') {
			IMPAIR_LOG(ERR, "%s: argument %s needs a value", name, key);
			ret = -EINVAL;
		} else if (strcmp(key, IMPAIR_ARG_DROP) == 0) {
			ret = impair_parse_prob(name, key, val, &c.p[IMPAIR_RNG_DROP]);
		} else if (strcmp(key, IMPAIR_ARG_DUP) == 0) {
			ret = impair_parse_prob(name, key, val, &c.p[IMPAIR_RNG_DUP]);
		} else if (strcmp(key, IMPAIR_ARG_REORDER) == 0) {
			ret = impair_parse_prob(name, key, val, &c.p[IMPAIR_RNG_REORDER]);
		} else if (strcmp(key, IMPAIR_ARG_CORRUPT) == 0) {
			ret = impair_parse_prob(name, key, val, &c.p[IMPAIR_RNG_CORRUPT]);
		} else {
			ret = impair_parse_u64(name, key, val, 10, IMPAIR_DELAY_US_MAX, &c.delay_us);
		}
	}
	rte_kvargs_free(kv);
	if (ret == 0)
		*cfg = c;
	return ret;
}
