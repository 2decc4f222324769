/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)).
 *
 * A parent domain is a droce_pd that stands for a protection domain: objects
 * created on it use that PD's driver PD, and count as users of the parent
 * domain, which counts as a user of the PD. What it adds:
 * - a thread domain: the application promises that one thread at a time
 *   uses the QPs and CQs created on it, so their posts and polls take no
 *   lock;
 * - allocators: the memory of those QPs' WQEs and those CQs' rings comes
 *   from the application's alloc(), called with a DROCE_RES_TYPE_* of
 *   droce.h; IBV_ALLOCATOR_USE_DEFAULT leaves it to droce.
 */
#include <stdlib.h>

#include <rte_common.h>

#include "droce.h"
#include "verbs_loc.h"

struct droce_td {
	struct ibv_td ibtd;
	uint32_t users;		/* parent domains on it (atomic): dealloc is EBUSY */
};

static struct ibv_td *
alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct droce_td *td;

	if (attr == NULL || attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (td == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibtd.context = context;
	return &td->ibtd;
}

static int
dealloc_td(struct ibv_td *ibtd)
{
	struct droce_td *td = container_of(ibtd, struct droce_td, ibtd);

	if (__atomic_load_n(&td->users, __ATOMIC_RELAXED) != 0)
		return EBUSY;
	free(td);
	return 0;
}

/* The driver's view of the application's allocator (droce_rdev_alloc). */
static int
pd_alloc_shim(void *arg, size_t size, size_t align, uint64_t type, void **p)
{
	struct droce_pd *pd = arg;
	void *m = pd->app_alloc(&pd->ibpd, pd->pd_context, size, align, type);

	if (m == IBV_ALLOCATOR_USE_DEFAULT) {
		*p = NULL;
		return 0;
	}
	if (m == NULL)
		return -ENOMEM;
	*p = m;
	return 0;
}

static void
pd_free_shim(void *arg, void *p, uint64_t type)
{
	struct droce_pd *pd = arg;

	pd->app_free(&pd->ibpd, pd->pd_context, p, type);
}

static struct ibv_pd *
alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct droce_pd *parent, *pd;

	if (attr == NULL || attr->pd == NULL || attr->pd->context != context ||
	    (attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (attr->alloc == NULL || attr->free == NULL)) ||
	    (attr->td != NULL && attr->td->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	parent = to_dpd(attr->pd);
	if (parent->parent != NULL) {	/* a parent domain stands for a PD, not another domain */
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->dev = parent->dev;
	pd->pd = parent->pd;
	pd->parent = parent;
	pd->td = attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->app_alloc = attr->alloc;
		pd->app_free = attr->free;
		pd->alloc = (struct droce_rdev_alloc){
			.alloc = pd_alloc_shim, .free = pd_free_shim, .arg = pd,
		};
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	pd->ibpd.context = context;
	pd->ibpd.handle = attr->pd->handle;
	droce_pd_use(attr->pd, 1);
	if (attr->td != NULL)
		__atomic_fetch_add(&container_of(attr->td, struct droce_td, ibtd)->users, 1,
				   __ATOMIC_RELAXED);
	return &pd->ibpd;
}

/* ibv_dealloc_pd of a parent domain, no longer in use: what it holds goes. */
void
droce_parent_domain_free(struct droce_pd *pd)
{
	if (pd->td != NULL)
		__atomic_fetch_sub(&container_of(pd->td, struct droce_td, ibtd)->users, 1,
				   __ATOMIC_RELAXED);
	droce_pd_use(&pd->parent->ibpd, -1);
	free(pd);
}

void
droce_domain_ops_set(struct verbs_context *vctx)
{
	vctx->alloc_td = alloc_td;
	vctx->dealloc_td = dealloc_td;
	vctx->alloc_parent_domain = alloc_parent_domain;
}
