/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Object import (man ibv_import_device, ibv_import_pd, ibv_import_mr):
 * another context on the device of a command fd, and handles on a PD and an
 * MR of the contexts that share that fd, by their handles.
 *
 * droce has no kernel to keep objects between processes: each process runs
 * its own DPDK instance and devices. Import works within a process: a
 * context's cmd_fd is a memfd of its own (its inode names the context), and
 * ibv_import_device of that fd or a dup of it gives a new context on the
 * same device, sharing its PDs and MRs by handle, as rdma-core's tests do
 * (test_shared_pd: Context(cmd_fd=os.dup(ctx.cmd_fd))). A fd of another
 * process, or no droce context's, is refused the way rdma-core refuses a fd
 * that is not a uverbs device: EINVAL (ENODEV for a character device).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs_loc.h"

/* Every PD made by ibv_alloc_pd and every MR not imported, for the imports to find. */
static pthread_mutex_t imp_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, droce_pd) imp_pds = TAILQ_HEAD_INITIALIZER(imp_pds);
static TAILQ_HEAD(, droce_mr) imp_mrs = TAILQ_HEAD_INITIALIZER(imp_mrs);

/* @dctx's cmd_fd names it (a file of its own) or not (/dev/null). */
void
droce_import_ctx_init(struct droce_context *dctx)
{
	struct stat st;

	dctx->cmd_unique = dctx->vctx.context.cmd_fd >= 0 &&
			   fstat(dctx->vctx.context.cmd_fd, &st) == 0 && S_ISREG(st.st_mode);
	if (dctx->cmd_unique) {
		dctx->cmd_dev = st.st_dev;
		dctx->cmd_ino = st.st_ino;
	}
}

/* Two contexts share their command fd's file: one was imported from the other. */
static bool
same_cmd(struct ibv_context *a, struct ibv_context *b)
{
	struct droce_context *x = to_dctx(a), *y = to_dctx(b);

	return x->cmd_unique && y->cmd_unique && x->cmd_dev == y->cmd_dev &&
	       x->cmd_ino == y->cmd_ino;
}

void
droce_import_pd_add(struct droce_pd *pd)
{
	pthread_mutex_lock(&imp_lock);
	TAILQ_INSERT_TAIL(&imp_pds, pd, imp_next);
	pthread_mutex_unlock(&imp_lock);
}

void
droce_import_pd_del(struct droce_pd *pd)
{
	pthread_mutex_lock(&imp_lock);
	TAILQ_REMOVE(&imp_pds, pd, imp_next);
	pthread_mutex_unlock(&imp_lock);
}

void
droce_import_mr_add(struct droce_mr *mr)
{
	pthread_mutex_lock(&imp_lock);
	TAILQ_INSERT_TAIL(&imp_mrs, mr, imp_next);
	pthread_mutex_unlock(&imp_lock);
}

void
droce_import_mr_del(struct droce_mr *mr)
{
	pthread_mutex_lock(&imp_lock);
	TAILQ_REMOVE(&imp_mrs, mr, imp_next);
	pthread_mutex_unlock(&imp_lock);
}

/*
 * man ibv_import_device: a context of its own on the device whose context
 * has @cmd_fd's file, which it owns from then on (ibv_close_device closes
 * it). EINVAL for a fd that is no droce context's (ENODEV if it is a
 * character device, as rdma-core answers a device that is not RDMA's).
 */
struct ibv_context *
ibv_import_device(int cmd_fd)
{
	struct ibv_device *dev;
	struct stat st;

	if (fstat(cmd_fd, &st) != 0) {
		errno = EINVAL;
		return NULL;
	}
	dev = S_ISREG(st.st_mode) ? droce_ctx_device_by_cmd(st.st_dev, st.st_ino) : NULL;
	if (dev == NULL) {
		errno = S_ISCHR(st.st_mode) ? ENODEV : EINVAL;
		return NULL;
	}
	return droce_open_device_fd(dev, cmd_fd);
}

/*
 * man ibv_import_pd: a handle on PD @pd_handle of a context sharing
 * @context's command fd (EINVAL if there is none). Objects made on it are
 * the PD's: the creator's ibv_dealloc_pd is EBUSY while they exist.
 */
struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct droce_pd *pd, *imp;

	imp = calloc(1, sizeof(*imp));
	if (imp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&imp_lock);
	TAILQ_FOREACH(pd, &imp_pds, imp_next)
		if (pd->ibpd.handle == pd_handle && pd->dev == to_dctx(context)->rdev &&
		    same_cmd(pd->ibpd.context, context))
			break;
	if (pd != NULL) {
		imp->dev = pd->dev;
		imp->pd = pd->pd;
		imp->origin = pd;
		imp->users = 1;		/* the handle */
		imp->ibpd.context = context;
		imp->ibpd.handle = pd_handle;
	}
	pthread_mutex_unlock(&imp_lock);
	if (pd == NULL) {
		free(imp);
		errno = EINVAL;
		return NULL;
	}
	return &imp->ibpd;
}

/*
 * An object made through imported handle @pd was created (+1) or destroyed
 * (-1), or the handle itself released (-1, droce_import_pd_put): the
 * origin counts the objects, the handle everything, and goes with the last.
 * Objects may outlive the handle, as after rdma-core's unimport (pyverbs
 * destroys an imported PD's QPs after ibv_unimport_pd).
 */
void
droce_import_pd_use(struct droce_pd *pd, int d)
{
	__atomic_fetch_add(&pd->origin->users, (uint32_t)d, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&pd->users, (uint32_t)d, __ATOMIC_ACQ_REL) == 0)
		free(pd);
}

/* The handle @pd itself is released: it goes now, or with its last object. */
void
droce_import_pd_put(struct droce_pd *pd)
{
	if (__atomic_sub_fetch(&pd->users, 1, __ATOMIC_ACQ_REL) == 0)
		free(pd);
}

/* man ibv_unimport_pd: the handle goes, the PD stays its creator's. Other PDs: nothing. */
void
ibv_unimport_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = to_dpd(ibpd);

	if (pd->origin != NULL)
		droce_import_pd_put(pd);
}

/*
 * man ibv_import_mr: a handle on MR @mr_handle of @pd's PD (EINVAL if it
 * has none such), with the MR's keys, address and length.
 */
struct ibv_mr *
ibv_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_mr *mr, *imp;

	imp = calloc(1, sizeof(*imp));
	if (imp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&imp_lock);
	TAILQ_FOREACH(mr, &imp_mrs, imp_next)
		if (mr->ibmr.handle == mr_handle && mr->dev == pd->dev &&
		    to_dpd(mr->ibmr.pd)->pd == pd->pd && same_cmd(mr->ibmr.context, ibpd->context))
			break;
	if (mr != NULL) {
		imp->ibmr = mr->ibmr;
		imp->dev = mr->dev;
		imp->mr = mr->mr;
		imp->imported = true;
		imp->ibmr.context = ibpd->context;
		imp->ibmr.pd = ibpd;
	}
	pthread_mutex_unlock(&imp_lock);
	if (mr == NULL) {
		free(imp);
		errno = EINVAL;
		return NULL;
	}
	return &imp->ibmr;
}

/* man ibv_unimport_mr: the handle goes, the MR stays its creator's. Other MRs: nothing. */
void
ibv_unimport_mr(struct ibv_mr *ibmr)
{
	struct droce_mr *mr = to_dmr(ibmr);

	if (mr->imported)
		free(mr);
}
