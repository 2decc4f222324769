/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the configuration parsers: the droce vdev's devargs
 * (roce_dev_args_parse), net_impair's (impair_args_parse), net_shm's
 * (shm_args_parse) and the DROCE_EAL environment variable's split into an
 * EAL argv (droce_eal_args_split). The first input byte picks the parser,
 * the rest, up to its first NUL, is the string. No EAL: none of them needs
 * it. Beyond the sanitizers, what a parser accepts is checked against what
 * its devargs promise (ranges, lengths, termination).
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_log.h>

#include "impair_args.h"
#include "roce_loc.h"
#include "shm_args.h"
#include "verbs_loc.h"

#include "fuzz_common.h"

#define MAX_STR 4096

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	/* every rejected string is logged at ERR: keep the fuzzer's output readable */
	if (getenv("DROCE_FUZZ_VERBOSE") == NULL)
		rte_log_set_global_level(RTE_LOG_EMERG);
	return 0;
}

static void
check_droce(const char *s)
{
	struct roce_dev_args a;

	memset(&a, 0, sizeof(a));
	a.dev = "fuzz";
	a.lcore = -2;
	if (roce_dev_args_parse(&a, s) != 0)
		return;
	FZ_CHECK(memchr(a.ethdev, '\0', sizeof(a.ethdev)) != NULL && a.ethdev[0] != '\0');
	FZ_CHECK(a.ip != 0);
	FZ_CHECK(a.mtu == 0 || (a.mtu >= 576 && a.mtu <= 9600));
	FZ_CHECK(a.lcore >= -2 && a.lcore < RTE_MAX_LCORE);
	FZ_CHECK(a.link_wait_ms <= 60000);
	FZ_CHECK(a.nb_neigh <= DROCE_NEIGH_MAX);
	FZ_CHECK(!a.has_mac || rte_is_valid_assigned_ether_addr(&a.mac));
}

static void
check_impair(const char *s)
{
	struct impair_cfg c;

	if (impair_args_parse("fuzz", s, &c) != 0)
		return;
	FZ_CHECK(memchr(c.ethdev, '\0', sizeof(c.ethdev)) != NULL && c.ethdev[0] != '\0');
	for (int i = 0; i < IMPAIR_RNG_MAX; i++)
		FZ_CHECK(isfinite(c.p[i]) && c.p[i] >= 0.0 && c.p[i] <= 1.0);
	FZ_CHECK(c.delay_us <= 10000000ULL);
	FZ_CHECK(c.dir == IMPAIR_DIR_TX || c.dir == IMPAIR_DIR_RX ||
		 c.dir == (IMPAIR_DIR_TX | IMPAIR_DIR_RX));
}

static void
check_shm(const char *s)
{
	char link[SHM_LINK_MAX + 1];
	size_t n;

	memset(link, 0x5a, sizeof(link));
	if (shm_args_parse("fuzz", s, link) != 0)
		return;
	n = strnlen(link, sizeof(link));
	FZ_CHECK(n >= 1 && n <= SHM_LINK_MAX);
	for (size_t i = 0; i < n; i++)
		FZ_CHECK(isalnum((unsigned char)link[i]) || link[i] == '-' || link[i] == '_' ||
			 link[i] == '.');
}

/* The tokens are the input's whitespace-separated words, in order, none lost below the cap. */
static void
check_eal(const char *s, int max)
{
	char *argv[128], *copy = NULL;
	const char *p = s;
	int argc = droce_eal_args_split(s, &copy, argv, max);

	FZ_CHECK(argc >= 1 && argc <= max - 1);
	FZ_CHECK(argv[argc] == NULL && strcmp(argv[0], "droce") == 0);
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);

		FZ_CHECK(n > 0 && strpbrk(argv[i], " \t\n") == NULL);
		p += strspn(p, " \t\n");
		FZ_CHECK(strncmp(p, argv[i], n) == 0);
		p += n;
	}
	if (argc < max - 1)	/* below the cap: nothing is left over */
		FZ_CHECK(p[strspn(p, " \t\n")] == '\0');
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[MAX_STR + 1];
	size_t n;

	if (size < 1)
		return 0;
	n = RTE_MIN(size - 1, (size_t)MAX_STR);
	memcpy(s, data + 1, n);
	s[n] = '\0';
	switch (data[0] & 3) {
	case 0:
		check_droce(s);
		break;
	case 1:
		check_impair(s);
		break;
	case 2:
		check_shm(s);
		break;
	default:
		/* a small cap too, to reach the truncation */
		check_eal(s, (data[0] & 4) ? 4 : 128);
		break;
	}
	return 0;
}
