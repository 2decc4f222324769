/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline progress: the devices that run on no engine lcore. The application
 * moves them from its own post and poll calls (roce_progress), and the waker
 * thread moves them while it sleeps. roce_poll.c attaches and detaches them,
 * under its engine_lock.
 */
#include <sys/prctl.h>
#include <time.h>

#include <rte_lcore.h>
#include <rte_pause.h>

#include "roce_loc.h"

static struct roce_dev *inline_devs[DROCE_MAX_DEVS];
static uint32_t nb_inline;
static uint32_t quitting;	/* the process exits: no more iterations from it (roce_share.c) */
static uint32_t forked_idle;	/* a forked process that opened no device yet: none from it */
/*
 * The application's calls that moved a device shared by forked processes,
 * and their count at the waker's last round: such a device's epoch moves
 * with every process's iterations, so it does not say whether this one's
 * application moves it.
 */
static uint64_t share_calls, share_seen;
static bool share_moved;	/* ...changed since (the waker's own) */

/* One iteration of @q unless another caller is running one. */
static inline void
q_try_poll(struct roce_q *q)
{
	if (roce_q_trylock(q)) {
		roce_q_poll(q);
		roce_q_unlock(q);
	}
}

/*
 * The application's calls, about @hint: every inline device of the process,
 * one caller at a time each; of the devices with lcore=thread (progress_own),
 * only @hint, so that threads that each use devices of their own never move
 * one another's.
 */
void
roce_progress(struct droce_rdev *hint)
{
	uint32_t n = __atomic_load_n(&nb_inline, __ATOMIC_ACQUIRE);

	if (unlikely(__atomic_load_n(&quitting, __ATOMIC_RELAXED) |
		     __atomic_load_n(&forked_idle, __ATOMIC_RELAXED)))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct roce_dev *dev = __atomic_load_n(&inline_devs[i], __ATOMIC_ACQUIRE);
		struct roce_q *own;

		if (dev == NULL || (dev->progress_own && &dev->rdev != hint))
			continue;
		/* a change is all the waker looks for: no locked add, racing ones may merge */
		if (unlikely(dev->share_on))
			__atomic_store_n(&share_calls,
					 __atomic_load_n(&share_calls, __ATOMIC_RELAXED) + 1,
					 __ATOMIC_RELAXED);
		/* lcore=thread: the caller's own queue, if it is an lcore */
		own = dev->progress_own ? roce_q_self(dev) : NULL;
		if (own != NULL) {
			q_try_poll(own);
			continue;
		}
		for (uint16_t k = 0; k < dev->nb_q; k++)
			q_try_poll(dev->q[k]);
	}
}

/*
 * The driver's qp_progress: what a post to @fp asks of inline progress, its
 * doorbell and its own WRs sent (roce_dev_send_qp). A device another thread
 * is moving is left to that iteration; one shared by forked processes has
 * whole ones.
 *
 * Under the queue's inline lock, the doorbell is looked at, not exchanged:
 * only the iterations this lock serializes clear it (roce_poll.c's active
 * list), so set it stays set and the QP is visited; clear, the QP joins the
 * list here. The exchange is a full barrier, which on a 64-byte SEND's path
 * waited for the stores of the frame before it to reach their cache lines,
 * which the peer's CPU holds.
 */
void
roce_progress_qp(struct droce_rdev_qp *fp)
{
	struct roce_qp *qp = to_roce_qp(fp);
	struct roce_dev *dev = qp->dev;

	if (unlikely(dev->share_on)) {	/* its iterations look at the others' frames too */
		droce_rdev_qp_doorbell(fp);
		roce_progress(&dev->rdev);
		return;
	}
	if (unlikely(__atomic_load_n(&quitting, __ATOMIC_RELAXED)) || !roce_q_trylock(qp->q)) {
		droce_rdev_qp_doorbell(fp);
		return;
	}
	if (__atomic_load_n(&fp->db_armed, __ATOMIC_RELAXED) == 0)
		roce_qp_activate(qp);
	roce_dev_send_qp(qp);
	roce_q_unlock(qp->q);
}

/*
 * The waker: inline progress while the application sleeps, in
 * ibv_get_cq_event / ibv_get_async_event or in its own poll/epoll on a
 * channel fd or async_fd. A control thread, not an lcore: it sleeps and makes
 * syscalls. It moves an inline device that needs it:
 *  - fast: a CQ with a channel is armed, or a thread is in a blocking wait;
 *  - slow: the device has QPs, whose async events a poll() on async_fd may
 *    wait for;
 * one iteration at a time, under the inline lock taken with trylock (the
 * application's own calls keep priority), and only if the application has
 * not moved the device itself since the waker last looked. It sleeps
 * DROCE_WAKE_MIN_US after a round that moved packets, doubling while idle up
 * to DROCE_WAKE_FAST_US or DROCE_WAKE_SLOW_US, and parks on a condition
 * variable while no inline device needs it. It lives while an inline device
 * is attached.
 */
enum { WAKE_NONE, WAKE_SLOW, WAKE_FAST };

static struct {
	pthread_t tid;
	bool running;		/* under engine_lock (roce_poll.c) */
	uint32_t stop;
	uint32_t kickable;	/* sleeping long or parked: roce_wake_kick signals */
	uint64_t round;		/* odd while a round looks at inline_devs */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC */
} waker = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int
wake_need(const struct roce_dev *dev)
{
	if (__atomic_load_n(&dev->wake_armed, __ATOMIC_SEQ_CST) != 0 ||
	    __atomic_load_n(&dev->wake_waiters, __ATOMIC_SEQ_CST) != 0)
		return WAKE_FAST;
	/* shared by forked processes: the others' frames may wait in its box */
	return __atomic_load_n(&dev->nb_qp, __ATOMIC_SEQ_CST) != 0 || dev->share_on ?
	       WAKE_SLOW : WAKE_NONE;
}

/* One iteration of @q if the application is not moving it: true if packets moved. */
static bool
waker_poll_q(struct roce_q *q)
{
	struct roce_dev *dev = q->dev;
	uint32_t rounds = __atomic_load_n(&q->rx_rounds, __ATOMIC_RELAXED);
	uint64_t before;
	bool moved;

	/*
	 * Whole iterations since the last look: the application polls it. A
	 * post's short one counts for nothing, as it reads nothing and no
	 * clock: a thread that posts and does not poll is not moving the
	 * device's clock and receives. Shared by forked processes
	 * (roce_share.c), the device moves for the others' QPs too, never for
	 * this process's: this process's calls since the last round say
	 * (waker_round).
	 */
	if (rounds != q->wake_rounds && !dev->share_on) {
		q->wake_rounds = rounds;
		return false;
	}
	if (dev->share_on && share_moved) {
		/* ...but a holder that ended is still the waker's to find */
		if (q->id == 0 && roce_share_lock_check(dev))
			roce_q_unlock(q);
		return false;
	}
	if (__atomic_load_n(&quitting, __ATOMIC_ACQUIRE) ||
	    (!roce_q_trylock(q) && !(q->id == 0 && dev->share_on && roce_share_lock_check(dev))))
		return false;
	if (__atomic_load_n(&quitting, __ATOMIC_SEQ_CST)) {	/* set meanwhile: leave() waits for this */
		roce_q_unlock(q);
		return false;
	}
	before = q->stats.rx_pkts + q->stats.tx_pkts;
	roce_q_poll(q);
	moved = q->stats.rx_pkts + q->stats.tx_pkts != before;
	q->wake_rounds = q->rx_rounds;
	roce_q_unlock(q);
	return moved;
}

/* Each queue of @dev, as waker_poll_q: true if packets moved. */
static bool
waker_poll(struct roce_dev *dev)
{
	bool moved = false;

	for (uint16_t k = 0; k < dev->nb_q; k++)
		moved |= waker_poll_q(dev->q[k]);
	return moved;
}

/*
 * One look at every inline device: what they need, most first. With @moved,
 * move those that need it and set *moved if packets moved.
 */
static int
waker_round(bool *moved)
{
	uint32_t n;
	int need = WAKE_NONE;

	__atomic_fetch_add(&waker.round, 1, __ATOMIC_SEQ_CST);
	if (moved != NULL) {
		uint64_t calls = __atomic_load_n(&share_calls, __ATOMIC_RELAXED);

		share_moved = calls != share_seen;
		share_seen = calls;
	}
	n = __atomic_load_n(&nb_inline, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct roce_dev *dev = __atomic_load_n(&inline_devs[i], __ATOMIC_ACQUIRE);
		int d;

		if (dev == NULL || (d = wake_need(dev)) == WAKE_NONE)
			continue;
		need = RTE_MAX(need, d);
		if (moved != NULL && waker_poll(dev))
			*moved = true;
	}
	__atomic_fetch_add(&waker.round, 1, __ATOMIC_SEQ_CST);
	return need;
}

/* Sleep @us microseconds, or park (0), unless kicked or stopped. */
static void
waker_sleep(uint32_t us, int need)
{
	struct timespec ts;

	pthread_mutex_lock(&waker.lock);
	if (us == 0 || us > DROCE_WAKE_FAST_US) {
		/* publish, then look again: pairs with roce_wake_kick */
		__atomic_store_n(&waker.kickable, 1, __ATOMIC_SEQ_CST);
		if (waker_round(NULL) > need)
			goto out;
	}
	if (__atomic_load_n(&waker.stop, __ATOMIC_ACQUIRE))
		goto out;
	if (us == 0) {
		pthread_cond_wait(&waker.cond, &waker.lock);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)us * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&waker.cond, &waker.lock, &ts);
out:
	__atomic_store_n(&waker.kickable, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&waker.lock);
}

static void *
waker_main(void *arg)
{
	uint32_t us = DROCE_WAKE_MIN_US;
	int prev = WAKE_NONE;

	RTE_SET_USED(arg);
	/* sleeps of tens of microseconds must not become the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	while (!__atomic_load_n(&waker.stop, __ATOMIC_ACQUIRE)) {
		bool moved = false;
		int need = waker_round(&moved);

		if (moved || (need == WAKE_FAST && prev != WAKE_FAST))
			us = DROCE_WAKE_MIN_US;
		else
			us = RTE_MIN(us * 2, need == WAKE_FAST ? (uint32_t)DROCE_WAKE_FAST_US :
					     (uint32_t)DROCE_WAKE_SLOW_US);
		prev = need;
		waker_sleep(need == WAKE_NONE ? 0 : us, need);
	}
	return NULL;
}

/*
 * Something a sleeping application waits for appeared on @dev (a CQ armed, a
 * blocking wait, a QP): wake the waker if it sleeps long or is parked.
 */
void
roce_wake_kick(struct roce_dev *dev)
{
	if (dev->engine != NULL)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&waker.kickable, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&waker.lock);
		pthread_cond_signal(&waker.cond);
		pthread_mutex_unlock(&waker.lock);
	}
}

/* A thread blocks in a verbs wait (ibv_get_cq_event, ibv_get_async_event). */
void
roce_wait_begin(struct roce_dev *dev)
{
	__atomic_fetch_add(&dev->wake_waiters, 1, __ATOMIC_SEQ_CST);
	roce_wake_kick(dev);
}

void
roce_wait_end(struct roce_dev *dev)
{
	__atomic_fetch_sub(&dev->wake_waiters, 1, __ATOMIC_RELEASE);
}

/* Under engine_lock: the first inline device starts the waker. */
static int
waker_start(void)
{
	pthread_condattr_t ca;
	int ret;

	if (waker.running)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&waker.cond, &ca);
	pthread_condattr_destroy(&ca);
	waker.stop = 0;
	ret = rte_ctrl_thread_create(&waker.tid, "droce-wake", NULL, waker_main, NULL);
	if (ret != 0) {
		pthread_cond_destroy(&waker.cond);
		return -ret;
	}
	waker.running = true;
	return 0;
}

/* Under engine_lock: the last inline device is gone. */
static void
waker_stop(void)
{
	if (!waker.running)
		return;
	pthread_mutex_lock(&waker.lock);
	__atomic_store_n(&waker.stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&waker.cond);
	pthread_mutex_unlock(&waker.lock);
	pthread_join(waker.tid, NULL);
	pthread_cond_destroy(&waker.cond);
	waker.running = false;
}

/* A device left inline_devs: wait until no waker round can still hold it. */
static void
waker_forget(void)
{
	uint64_t r = __atomic_load_n(&waker.round, __ATOMIC_SEQ_CST);

	if (r & 1)
		while (__atomic_load_n(&waker.round, __ATOMIC_ACQUIRE) == r)
			rte_pause();
}

/*
 * Under engine_lock: @dev joins the inline devices; the first one starts the
 * waker. 0 or -errno (the waker could not start).
 */
int
roce_inline_attach(struct roce_dev *dev)
{
	int ret = waker_start();

	if (ret)
		return ret;
	__atomic_store_n(&inline_devs[nb_inline], dev, __ATOMIC_RELAXED);
	__atomic_store_n(&nb_inline, nb_inline + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Under engine_lock: @dev leaves; once no inline device remains the waker stops. */
void
roce_inline_detach(struct roce_dev *dev)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < nb_inline; i++)
		if (inline_devs[i] != dev)	/* the waker reads them */
			__atomic_store_n(&inline_devs[j++], inline_devs[i], __ATOMIC_RELAXED);
	if (j != nb_inline) {
		__atomic_store_n(&nb_inline, j, __ATOMIC_RELEASE);
		/* an inline poller may still hold the device */
		waker_forget();
		roce_inline_lock(dev);
		roce_inline_unlock(dev);
	}
	if (j == 0)
		waker_stop();
}

/*
 * In a forked child: the waker was the parent's thread (fork copies only the
 * caller). Nothing moves until the child opens a device.
 */
void
roce_inline_forked(void)
{
	pthread_mutex_init(&waker.lock, NULL);
	waker.running = false;
	waker.kickable = 0;
	waker.round = 0;
	/* its devices move once it opens one (roce_inline_join): it may only exec */
	__atomic_store_n(&forked_idle, 1, __ATOMIC_RELEASE);
}

/*
 * Under engine_lock, in a forked process: @dev joins this process's inline
 * devices unless it is there already. Its attachment count is the device's,
 * shared with the other processes, so the first open in this process does
 * not always attach (roce_dev_open).
 */
int
roce_inline_join(struct roce_dev *dev)
{
	int ret = 0;
	bool there = false;

	for (uint32_t i = 0; i < nb_inline; i++)
		there |= inline_devs[i] == dev;
	if (!there)
		ret = roce_inline_attach(dev);
	else if (nb_inline > 0)
		ret = waker_start();	/* the inherited devices: this process's waker */
	if (ret == 0)
		__atomic_store_n(&forked_idle, 0, __ATOMIC_RELEASE);
	return ret;
}

/*
 * The process exits while it shares devices with others (roce_share.c): it
 * starts no iteration from now on; the caller then takes and drops each
 * device's lock, which waits for one that runs.
 */
void
roce_inline_quit(void)
{
	__atomic_store_n(&quitting, 1, __ATOMIC_SEQ_CST);
}
