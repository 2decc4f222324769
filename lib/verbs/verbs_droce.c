/* SPDX-License-Identifier: BSD-3-Clause */
/* droce.h: topology helpers and counters. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "droce.h"
#include "verbs_loc.h"

/* the process that asked for its EAL files to go at exit (a forked child leaves them) */
static pid_t eal_files_owner;

static void
eal_files_remove(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d;

	if (getpid() != eal_files_owner)
		return;
	/* not rte_eal_cleanup(): it would wait for engine lcores, which run on */
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	d = opendir(dir);
	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	if (rmdir(dir) != 0 && errno != ENOENT)
		fprintf(stderr, "droce: rmdir %s: %s\n", dir, strerror(errno));
}

int
droce_eal_files_remove_at_exit(void)
{
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return -EPERM;
	if (__atomic_exchange_n(&eal_files_owner, getpid(), __ATOMIC_ACQ_REL) == getpid())
		return 0;	/* asked before */
	return atexit(eal_files_remove) == 0 ? 0 : -ENOMEM;
}

int
droce_ring_pair_create(const char *name_a, const char *name_b)
{
	return droce_ring_pair_create_queues(name_a, name_b, 1);
}

#define RING_PAIR_MAX_QUEUES	16	/* the ring PMD's RTE_PMD_RING_MAX_{RX,TX}_RINGS */

int
droce_ring_pair_create_queues(const char *name_a, const char *name_b, unsigned int nb_queues)
{
	static const char pfx[] = "net_ring_";
	char n[RTE_RING_NAMESIZE];
	struct rte_ring *ab[RING_PAIR_MAX_QUEUES] = { NULL }, *ba[RING_PAIR_MAX_QUEUES] = { NULL };
	unsigned int i;

	/* the ring PMD names its ports "net_ring_<name>" */
	if (strncmp(name_a, pfx, sizeof(pfx) - 1) || strncmp(name_b, pfx, sizeof(pfx) - 1) ||
	    strcmp(name_a, name_b) == 0 || nb_queues < 1 || nb_queues > RING_PAIR_MAX_QUEUES)
		return -EINVAL;

	/* each ring has one producer (a tx queue) and one consumer (an rx queue) */
	for (i = 0; i < nb_queues; i++) {
		if (i == 0)
			snprintf(n, sizeof(n), "drp_%.24s", name_a);
		else
			snprintf(n, sizeof(n), "drp%u_%.22s", i, name_a);
		ab[i] = rte_ring_create(n, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (i == 0)
			snprintf(n, sizeof(n), "drp_%.24s", name_b);
		else
			snprintf(n, sizeof(n), "drp%u_%.22s", i, name_b);
		ba[i] = rte_ring_create(n, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab[i] == NULL || ba[i] == NULL)
			goto err;
	}
	if (rte_eth_from_rings(name_a + sizeof(pfx) - 1, ba, nb_queues, ab, nb_queues,
			       rte_socket_id()) < 0 ||
	    rte_eth_from_rings(name_b + sizeof(pfx) - 1, ab, nb_queues, ba, nb_queues,
			       rte_socket_id()) < 0)
		goto err;
	return 0;
err:
	for (i = 0; i < nb_queues; i++) {
		rte_ring_free(ab[i]);
		rte_ring_free(ba[i]);
	}
	return rte_errno == EEXIST ? -EEXIST : -ENOMEM;
}

int
droce_dev_create(const char *name, const char *args)
{
	return rte_vdev_init(name, args);
}

int
droce_dev_destroy(const char *name)
{
	return rte_vdev_uninit(name);
}

int
droce_dev_stats_get(const char *name, struct droce_dev_stats *st)
{
	struct droce_rdev *dev = droce_rdev_by_name(name);

	return dev ? dev->ops->stats_get(dev, st) : -ENODEV;
}

int
droce_dev_xstats(const char *name, const char **names, uint64_t *values, int n)
{
	struct droce_rdev *dev = droce_rdev_by_name(name);

	return dev ? dev->ops->xstats_get(dev, names, values, n) : -ENODEV;
}

int
droce_dev_objects_get(const char *name, struct droce_dev_objects *o)
{
	struct droce_rdev *dev = droce_rdev_by_name(name);

	return dev ? dev->ops->objects_get(dev, o) : -ENODEV;
}

int
droce_dev_neigh(const char *name, struct droce_neigh *tbl, int n)
{
	struct droce_rdev *dev = droce_rdev_by_name(name);

	return dev ? dev->ops->neigh_get(dev, tbl, n) : -ENODEV;
}

int
droce_dev_capture(const char *name, const char *path)
{
	struct droce_rdev *dev = droce_rdev_by_name(name);

	return dev ? dev->ops->capture_set(dev, path) : -ENODEV;
}

int
droce_qp_xstats(struct ibv_qp *qp, const char **names, uint64_t *values, int n)
{
	struct droce_qp *dq;
	struct droce_rdev_qp *fp;

	if (qp == NULL)
		return -EINVAL;
	dq = to_dqp(qp);
	/* an opened XRC_RECV handle names the shared QP */
	fp = dq->xqp != NULL ? dq->xqp->fp : dq->fp;
	return fp->dev->ops->qp_xstats_get(fp, names, values, n);
}
