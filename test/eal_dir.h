/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL's runtime directory (/var/run/dpdk/<file-prefix>) outlives the
 * process, rte_eal_cleanup() included; a test program with a --file-prefix
 * of its own (tag + pid) removes it at exit, so that runs leave nothing
 * behind.
 */
#ifndef DROCE_EAL_DIR_H
#define DROCE_EAL_DIR_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>

/* Remove @dir and the files in it (EAL puts no subdirectories there). */
static inline void
eal_dir_remove(const char *dir)
{
	char path[PATH_MAX + 264];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
					    (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static char eal_dir_path[PATH_MAX];

static inline void
eal_dir_remove_own(void)
{
	eal_dir_remove(eal_dir_path);
}

/* After rte_eal_init(): remove this process's runtime directory at exit. */
static inline void
eal_dir_remove_at_exit(void)
{
	snprintf(eal_dir_path, sizeof(eal_dir_path), "%s", rte_eal_get_runtime_dir());
	if (eal_dir_path[0] != '\0')
		atexit(eal_dir_remove_own);
}

#endif
