/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * On-demand paging (IBV_ACCESS_ON_DEMAND MRs and the implicit MR over the
 * whole address space).
 *
 * droce never pins: the engine reads and writes the process's memory
 * directly, and the kernel faults pages in as it touches them, so every MR
 * is "on demand" as far as paging goes. What ODP adds is that the range
 * need not be mapped: a page that is not (never was, or was unmapped since)
 * must turn into an error completion or a NAK, as a failed page fault does
 * on an ODP NIC, never into a crash of the process. The implicit MR makes
 * every address reachable by a peer.
 *
 * So while an ODP MR exists in the process, the engine's accesses to
 * application memory are guarded: a SIGSEGV or SIGBUS raised inside one
 * jumps back out of it (siglongjmp from droce's handler), and the access
 * fails with -EFAULT. Faults outside a guarded access go to the handler that
 * was installed before droce's. The handler is installed at the first ODP
 * registration, so programs without ODP keep theirs untouched; it stays.
 * A guarded access costs a sigsetjmp without the signal mask (no system
 * call); without ODP MRs, one relaxed load of a counter.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_memcpy.h>

#include "roce_loc.h"

/* ODP MRs registered in the process; non-zero: accesses are guarded */
uint32_t roce_odp_mrs;

/* the guarded access this thread is in, or NULL */
static __thread sigjmp_buf *odp_jmp __attribute__((tls_model("initial-exec")));

static struct sigaction odp_prev[2];	/* SIGSEGV's and SIGBUS's before droce's */
static pthread_once_t odp_once = PTHREAD_ONCE_INIT;
static int odp_install_err;

static void
odp_handler(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = odp_jmp;
	const struct sigaction *prev;

	if (j != NULL) {
		odp_jmp = NULL;
		siglongjmp(*j, 1);
	}
	/* not a guarded access: whoever handled it before */
	prev = &odp_prev[sig == SIGBUS];
	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, si, uc);
	} else if (prev->sa_handler != SIG_IGN && prev->sa_handler != SIG_DFL) {
		prev->sa_handler(sig);
	} else {
		/* the default action: the faulting instruction runs again, and kills */
		signal(sig, SIG_DFL);
	}
}

static void
odp_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = odp_handler;
	/*
	 * SA_NODEFER: the signal is not blocked while the handler runs, so the
	 * siglongjmp (which keeps the mask as it is) leaves it unblocked.
	 */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &odp_prev[0]) != 0 ||
	    sigaction(SIGBUS, &sa, &odp_prev[1]) != 0)
		odp_install_err = errno;
}

/* An ODP MR is registered (control path): 0, or a negative errno. */
int
roce_odp_mr_add(void)
{
	pthread_once(&odp_once, odp_install);
	if (odp_install_err != 0)
		return -odp_install_err;
	__atomic_fetch_add(&roce_odp_mrs, 1, __ATOMIC_RELEASE);
	return 0;
}

/* An ODP MR is gone, once the engine no longer uses it. */
void
roce_odp_mr_del(void)
{
	__atomic_fetch_sub(&roce_odp_mrs, 1, __ATOMIC_RELEASE);
}

/*
 * The guarded accesses: @fn runs on @op with a jump back ready. The compiler
 * may not move its accesses across the setting and clearing of odp_jmp
 * (signal fences), and after a jump back only the return value counts (what
 * lives across sigsetjmp is volatile).
 */
struct odp_op {
	void *dst;
	const void *src;
	size_t n;
	uint64_t *p;
	bool store;			/* ATOMIC WRITE: swap stored */
	bool cmp_swap;
	uint64_t cmp_add, swap, orig;
};

static int
guarded(void (*fn)(struct odp_op *), struct odp_op *op)
{
	void (*volatile f)(struct odp_op *) = fn;
	struct odp_op *volatile o = op;
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0) != 0)
		return -EFAULT;
	odp_jmp = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	f(o);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	odp_jmp = NULL;
	return 0;
}

static void
op_copy(struct odp_op *op)
{
	rte_memcpy(op->dst, op->src, op->n);
}

static void
op_atomic(struct odp_op *op)
{
	if (op->store)
		__atomic_store_n(op->p, op->swap, __ATOMIC_SEQ_CST);
	else
		op->orig = roce_atomic_apply(op->p, op->cmp_swap, op->cmp_add, op->swap);
}

int
roce_odp_copy(void *dst, const void *src, size_t n)
{
	struct odp_op op = { .dst = dst, .src = src, .n = n };

	return guarded(op_copy, &op);
}

int
roce_odp_store64(uint64_t *p, uint64_t v)
{
	struct odp_op op = { .p = p, .store = true, .swap = v };

	return guarded(op_atomic, &op);
}

/* 8-byte compare-and-swap (@cmp_add compared, @swap stored) or fetch-and-add. */
int
roce_odp_atomic(uint64_t *p, bool cmp_swap, uint64_t cmp_add, uint64_t swap, uint64_t *orig)
{
	struct odp_op op = { .p = p, .cmp_swap = cmp_swap, .cmp_add = cmp_add, .swap = swap };
	int ret = guarded(op_atomic, &op);

	if (ret == 0)
		*orig = op.orig;
	return ret;
}

/*
 * ibv_advise_mr: the ranges are checked against their MRs; prefetching asks
 * the kernel to populate the pages (MADV_POPULATE_READ/WRITE, Linux 5.14),
 * or, where it cannot, touches one byte a page, guarded (a write that
 * changes nothing: an atomic add of 0).
 */
static int
prefetch(uint8_t *p, uint64_t len, bool write)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(pg - 1), hi = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);

	if (madvise((void *)lo, hi - lo, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return 0;
	if (errno != EINVAL)
		return -EFAULT;		/* ENOMEM: not mapped; EFAULT, EPERM, EHWPOISON */
	for (uintptr_t a = lo < (uintptr_t)p ? (uintptr_t)p : lo; a < hi; a = (a & ~(pg - 1)) + pg) {
		struct odp_op op = { .p = (uint64_t *)(a & ~(uintptr_t)7) };

		if (write) {
			if (guarded(op_atomic, &op) != 0)
				return -EFAULT;
		} else {
			uint8_t b;

			if (roce_odp_copy(&b, (const void *)a, 1) != 0)
				return -EFAULT;
		}
	}
	return 0;
}

int
roce_mr_advise(struct droce_rdev_pd *pd, const struct ibv_sge *sge, uint32_t n, bool write,
	       bool fault, bool sync)
{
	for (uint32_t i = 0; i < n; i++) {
		struct droce_rdev_mr *mr = roce_mr_lookup(pd->dev, sge[i].lkey);
		uint8_t *host;
		int ret;

		if (mr == NULL || mr->pd != pd)
			return -EFAULT;
		if (!(mr->access & IBV_ACCESS_ON_DEMAND))
			return -EINVAL;
		if (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return -EPERM;
		if (roce_mr_check(pd->dev, pd, sge[i].lkey, sge[i].addr, sge[i].length, 0, &host) != 0)
			return -EFAULT;
		if (!fault || sge[i].length == 0)
			continue;
		ret = prefetch(host, sge[i].length, write);
		if (ret != 0 && sync)
			return ret;
	}
	return 0;
}
