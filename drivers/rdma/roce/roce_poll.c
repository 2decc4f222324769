/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run-to-completion loop: rx burst -> validate -> responder/completer ->
 * requester -> tx burst. One iteration of one queue of a device (struct
 * roce_q) is roce_q_poll(); it runs either on an engine lcore that owns the
 * device (the engines are here: attach, detach, quiesce), or inline from the
 * application's own post and poll calls and the waker (roce_inline.c). No
 * locks, allocations or syscalls on the engine lcore.
 */
#include <errno.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "roce_loc.h"

/* An engine lcore: the queues of devices it moves, in turn (struct roce_q). */
struct roce_engine {
	unsigned int lcore;
	uint32_t stop;
	uint32_t nb_qs;
	struct roce_q *qs[DROCE_MAX_DEVS * DROCE_MAX_QUEUES];
};

static struct roce_engine *engines[RTE_MAX_LCORE];
/* attaching and detaching devices, engine lcores and inline (roce_inline.c) */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

#define RX_BURSTS	8	/* receive bursts in one device iteration, at most */

/* The QPs whose doorbell rang join the active list. */
static void
db_collect(struct roce_q *q)
{
	uint64_t t[DROCE_BURST];
	unsigned int n;

	/* every post and iteration looks: a burst dequeue costs more than that look */
	if (droce_ring_empty(q->db))
		return;
	do {
		n = rte_ring_dequeue_burst_elem(q->db, t, sizeof(t[0]), DROCE_BURST, NULL);
		for (unsigned int i = 0; i < n; i++) {
			struct roce_qp *qp = roce_qp_by_token(q->dev, t[i]);

			if (qp != NULL)	/* else destroyed since it rang */
				roce_qp_activate(qp);
		}
	} while (n == DROCE_BURST);
}

/*
 * Nothing for the engine to do on @qp in state @st until a post, a packet or
 * a state change: everything posted is sent and acknowledged (a QP waiting
 * for ACKs stays, its local ACK timer runs in the requester). A QP in SQD
 * keeps the WRs posted meanwhile for RTS.
 */
static bool
qp_idle(struct roce_qp *qp, uint32_t st)
{
	const struct roce_qp_eng *e = &qp->e;

	if (st == IBV_QPS_RESET)
		return true;
	if (e->win_head != e->win_tail || e->cur_pkt != 0 || e->tx_stalled ||
	    e->rd_head != e->rd_tail || e->ack_pending)
		return false;
	if (st != IBV_QPS_SQD && roce_sq_pending(qp))
		return false;
	/*
	 * ERR: until everything is flushed, and a QP taking its receive WQEs
	 * from SRQs has raised IBV_EVENT_QP_LAST_WQE_REACHED: with nothing
	 * posted, that event is the only work a move to ERR brings such a QP,
	 * and a doorbell the application rang while the QP was still on the
	 * list (not rung again) must not let it leave before it is raised.
	 */
	if (st != IBV_QPS_ERR)
		return true;
	if (e->rwqe != NULL)
		return false;
	if (roce_qp_srq_fed(qp))
		return e->last_wqe_raised;
	return qp->fp.rq.slots == NULL || droce_wq_pending(&qp->fp.rq) == 0;
}

static void
tokens_reverse(uint64_t *a, uint32_t lo, uint32_t hi)
{
	while (lo + 1 < hi) {
		uint64_t t = a[lo];

		a[lo++] = a[--hi];
		a[hi] = t;
	}
}

/* @a[0..@n) rotated left by @k, in place: a[k] first */
static void
active_rotate(uint64_t *a, uint32_t n, uint32_t k)
{
	tokens_reverse(a, 0, k);
	tokens_reverse(a, k, n);
	tokens_reverse(a, 0, n);
}

/*
 * One visit to each QP with work: responder, then requester. A QP without
 * work leaves the list: its doorbell is cleared, then it is looked at once
 * more, as a post may have come in between (it found the doorbell still set
 * and did not ring: the full barrier of the exchange pairs with the one of
 * droce_rdev_qp_doorbell). A post's own short iteration (roce_progress_qp)
 * only reads the doorbell, under the lock this runs under: it never meets
 * this clearing half done.
 *
 * The port may fill during the visits (roce_tx_room fails: tx_full): the
 * QPs after that point got no room. The list is then rotated so that the
 * first of them is visited first next time: with thousands of QPs on a
 * full port, those at the end of the list would otherwise never send, and
 * their retry budgets ran out on a live peer.
 */
static void
active_run(struct roce_q *q)
{
	struct roce_dev *dev = q->dev;
	uint32_t full_at = UINT32_MAX;

	q->tx_full = false;
	for (uint32_t i = 0; i < q->nb_active;) {
		struct roce_qp *qp = roce_qp_by_token(dev, q->active[i]);
		uint32_t st;

		/* two visits ahead (roce_qp_prefetch) */
		if (i + 2 < q->nb_active) {
			const struct roce_qp *next = __atomic_load_n(
				&dev->qp_tbl[q->active[i + 2] & ((1U << ROCE_QP_TOKEN_IDX_BITS) - 1)],
				__ATOMIC_RELAXED);

			if (next != NULL)
				roce_qp_prefetch(next);
		}

		if (qp == NULL) {	/* destroyed: the entry goes, nothing of it is read */
			q->active[i] = q->active[--q->nb_active];
			continue;
		}
		/* another process's QP (roce_share.c): only it can reach its buffers */
		if (unlikely(dev->share_on) && qp->owner != roce_share_owner()) {
			i++;
			continue;
		}
		/*
		 * IBA 10.3.1: a QP in Reset does nothing; and once ibv_modify_qp
		 * has quiesced the device it zeroes qp->e (roce_qp_reset_engine)
		 */
		st = roce_qp_state(qp);
		if (st != IBV_QPS_RESET) {
			if (qp->e.rd_head != qp->e.rd_tail || qp->e.ack_pending)
				roce_resp_run(dev, qp);
			roce_req_run(dev, qp, false);
			st = roce_qp_state(qp);
			if (unlikely(q->tx_full) && full_at == UINT32_MAX)
				full_at = i;
		}
		if (!qp_idle(qp, st)) {
			i++;
			continue;
		}
		__atomic_exchange_n(&qp->fp.db_armed, 0, __ATOMIC_SEQ_CST);
		if (!qp_idle(qp, roce_qp_state(qp)) &&
		    __atomic_exchange_n(&qp->fp.db_armed, 1, __ATOMIC_SEQ_CST) == 0) {
			i++;	/* work came: it stays */
			continue;
		}
		/* idle, or a post rang meanwhile: its token brings the QP back */
		qp->on_active = false;
		q->active[i] = q->active[--q->nb_active];
	}
	if (unlikely(full_at != UINT32_MAX) && full_at > 0 && full_at < q->nb_active)
		active_rotate(q->active, q->nb_active, full_at);
}

static inline void
iteration_begin(struct roce_q *q, bool clock)
{
	/*
	 * Odd while the iteration runs. One writer at a time (the engine lcore,
	 * or whoever holds the inline lock), so a plain store: no locked
	 * instruction per iteration. roce_dev_quiesce needs no more (see there).
	 */
	__atomic_store_n(&q->epoch, q->epoch + 1, __ATOMIC_RELAXED);
	/*
	 * The engine clock (roce_clock), which RC deadlines use. A device is
	 * polled without pause by its lcore, or at least every
	 * DROCE_WAKE_SLOW_US inline; a longer gap means the process was off
	 * the CPU (a loaded or throttled machine, a -O0 sanitizer build), and
	 * counts only DROCE_CLOCK_GAP_US. The timers then fired on the return,
	 * before the rx below had read the answers waiting in the queue, and
	 * a local ACK timeout resent whole windows the peer had answered: a
	 * few such gaps in a row spent the retry budget on a live peer. A dead
	 * peer still times out after timeout x (retry_cnt + 1) of polling.
	 * A post's short iteration (@clock false) reads no timer: its sends
	 * leave their deadlines to the next whole one (roce_req_run's @stale).
	 */
	if (clock) {
		uint64_t now = rte_get_timer_cycles();

		q->clock += RTE_MIN(now - q->clock_tsc, q->dev->clock_gap_max);
		q->clock_tsc = now;
	}
}

static inline void
iteration_end(struct roce_q *q)
{
	/* everything this iteration read and wrote is done before the count says so */
	__atomic_store_n(&q->epoch, q->epoch + 1, __ATOMIC_RELEASE);
}

/*
 * Inline progress from a post to @qp (under the inline lock): send what it
 * has posted, and nothing else, in a short iteration of its own. Receiving,
 * and so the peer's ACKs, waits for the next poll: a sender that posts many
 * WRs before polling then finds its peer's frames in bursts, one coalesced
 * ACK for many messages, where a whole iteration per post handled each
 * message alone.
 */
void
roce_dev_send_qp(struct roce_qp *qp)
{
	struct roce_q *q = qp->q;

	iteration_begin(q, false);
	db_collect(q);	/* its doorbell, if it rang: on the list for what follows */
	if (roce_qp_state(qp) != IBV_QPS_RESET)
		roce_req_run(q->dev, qp, true);
	if (q->nb_tx)
		roce_tx_flush(q);
	iteration_end(q);
}

/* Queue 0's share of an iteration: the device's own work (struct roce_q). */
static void
q0_jobs(struct roce_q *q)
{
	struct roce_dev *dev = q->dev;
	uint32_t hi;

	if (unlikely(__atomic_load_n(&dev->announce, __ATOMIC_RELAXED)) &&
	    __atomic_exchange_n(&dev->announce, 0, __ATOMIC_ACQUIRE))
		roce_arp_announce(q);
	if (unlikely(__atomic_load_n(&dev->neigh_want, __ATOMIC_RELAXED))) {
		rte_be32_t ip = __atomic_exchange_n(&dev->neigh_want, 0, __ATOMIC_ACQUIRE);
		struct rte_ether_addr mac;

		if (ip != 0)
			roce_neigh_resolve(q, ip, &mac);	/* asks ARP, rate-limited */
	}
	if (unlikely(__atomic_load_n(&dev->neigh_recheck, __ATOMIC_RELAXED))) {
		rte_be32_t ip = __atomic_exchange_n(&dev->neigh_recheck, 0, __ATOMIC_ACQUIRE);

		if (ip != 0)
			roce_neigh_confirm(q, ip);
	}

	hi = __atomic_load_n(&dev->tm_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++) {
		struct roce_srq *srq = __atomic_load_n(&dev->tm_tbl[i], __ATOMIC_ACQUIRE);

		if (srq != NULL && (likely(!dev->share_on) || srq->owner == roce_share_owner()))
			roce_tm_ops_run(srq);
	}
}

void
roce_q_poll(struct roce_q *q)
{
	struct roce_dev *dev = q->dev;
	struct rte_mbuf *pkts[DROCE_BURST];
	bool q0 = q->id == 0, cq_job;
	uint16_t n;

	iteration_begin(q, true);
	if (unlikely(__atomic_load_n(&dev->q_hold, __ATOMIC_RELAXED)) && !q0) {
		iteration_end(q);	/* held (roce_dev_hold): nothing done */
		return;
	}
	/*
	 * A CQ job (resize, purge), queue 0's while the others are held
	 * (roce_dev_hold): before anything completes in this iteration, or, a
	 * shrink, at its end, once what was posted before the call has been
	 * through the engine (roce_cq_job_late), what completed meanwhile moving
	 * with the rest.
	 */
	cq_job = unlikely(__atomic_load_n(&dev->cq_resize, __ATOMIC_ACQUIRE) != NULL) && q0 &&
		 (likely(!dev->share_on) || dev->cq_resize_owner == roce_share_owner());
	if (unlikely(cq_job) && !roce_cq_job_late(dev)) {
		roce_cq_resize_run(dev);
		cq_job = false;
	}
	/*
	 * Up to RX_BURSTS bursts while the port has more: the requesters below
	 * may send a burst per QP each round, and a receiver that took one
	 * burst per round fell behind its senders (frames piled up in the
	 * link, the mbuf pool ran dry, RC timed out).
	 */
	for (unsigned int b = 0; b < RX_BURSTS; b++) {
		/* net_shm: its RoCE frames without mbufs, then a burst for what they stopped at */
		if (q->shm_rxq != NULL && __atomic_load_n(&dev->cap, __ATOMIC_RELAXED) == NULL) {
			bool burst;

			if (roce_rx_shm(q, &burst) == DROCE_BURST)
				continue;
			if (!burst)
				break;	/* the ring is empty */
		}
		n = roce_port_rx(q, pkts, DROCE_BURST);
		for (uint16_t i = 0; i < n; i++)
			roce_mbuf_takeover(pkts[i]);
		if (unlikely(__atomic_load_n(&dev->cap, __ATOMIC_RELAXED) != NULL) && n)
			roce_capture_burst(q, pkts, n, false);
		if (n)
			roce_rx(q, pkts, n, ROCE_RX_PORT);
		if (n < DROCE_BURST)
			break;
	}
	/* an early resend waits for one (roce_req.c); the waker looks (roce_inline.c) */
	__atomic_store_n(&q->rx_rounds, q->rx_rounds + 1, __ATOMIC_RELAXED);
	/* what the other queues received for this one */
	if (q->in != NULL) {
		n = rte_ring_dequeue_burst(q->in, (void **)pkts, DROCE_BURST, NULL);
		for (uint16_t i = 0; i < n; i++)
			roce_mbuf_takeover(pkts[i]);
		if (n)
			roce_rx(q, pkts, n, ROCE_RX_QUEUE);
	}
	if (q0) {
		n = rte_ring_dequeue_burst(dev->loop, (void **)pkts, DROCE_BURST, NULL);
		for (uint16_t i = 0; i < n; i++)
			roce_mbuf_takeover(pkts[i]);
		if (n)
			roce_rx(q, pkts, n, ROCE_RX_LOOP);
		if (unlikely(dev->share_on))
			roce_share_poll(dev);
	}
	for (uint16_t i = 0; i < q->nb_ack; i++)
		roce_resp_send_ack(dev, q->ack_qp[i]);
	q->nb_ack = 0;
	if (q0)
		q0_jobs(q);
	db_collect(q);
	active_run(q);
	/* the application's frames on the device's ethdev port: after droce's own */
	if (q0 && roce_eth_running(dev))
		roce_eth_tx_run(dev);
	if (q->nb_tx)
		roce_tx_flush(q);
	else if (dev->port_tx_kick)	/* lets a wrapping port (net_impair) release frames it holds */
		roce_port_tx(q, q->tx, 0);
	if (unlikely(cq_job))
		roce_cq_resize_run(dev);
	iteration_end(q);
}

static int
engine_main(void *arg)
{
	struct roce_engine *eng = arg;

	while (!__atomic_load_n(&eng->stop, __ATOMIC_ACQUIRE)) {
		uint32_t n = __atomic_load_n(&eng->nb_qs, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < n; i++)
			roce_q_poll(eng->qs[i]);
	}
	/* rte_eal_wait_lcore, which roce_engine_detach waits in, is not instrumented */
	ROCE_TSAN_RELEASE(eng);
	return 0;
}

static void q_quiesce(struct roce_q *q);

/*
 * Wait until the engine has finished any iteration that may have seen state
 * published before this call: on every queue of @dev.
 */
void
roce_dev_quiesce(struct roce_dev *dev)
{
	if (dev->engine == NULL) {
		roce_dev_lock_all(dev);
		roce_dev_unlock_all(dev);
		return;
	}
	for (uint16_t k = 0; k < dev->nb_q; k++)
		q_quiesce(dev->q[k]);
}

/* roce_dev_quiesce for @q, which an engine lcore moves */
static void
q_quiesce(struct roce_q *q)
{
	uint64_t e0, e;

	/*
	 * What the caller published is visible before the count is read. The
	 * engine's start of iteration is a plain store, which its own loads may
	 * pass: an iteration may already read the old state while the count
	 * still says it has not begun. Waiting for the end of the iteration
	 * after the one read covers it: that is the end of the iteration in
	 * flight, whatever the count showed of its start.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	e0 = __atomic_load_n(&q->epoch, __ATOMIC_ACQUIRE);
	/* an odd epoch is mid-iteration: wait for the next start, else one full pass */
	do {
		rte_pause();
		e = __atomic_load_n(&q->epoch, __ATOMIC_ACQUIRE);
	} while (e - e0 < 2 + (e0 & 1) &&
		 !__atomic_load_n(&q->engine->stop, __ATOMIC_ACQUIRE));
}

/*
 * With engine lcores: hold (@on) every queue but queue 0, which then alone
 * moves the device, until released. Returns once no iteration of those
 * queues runs that began before the hold (their iterations meanwhile do
 * nothing). For the control path's jobs that queue 0's engine runs on
 * state all queues write (a CQ resize or purge).
 */
void
roce_dev_hold(struct roce_dev *dev, bool on)
{
	if (dev->nb_q == 1)
		return;
	__atomic_store_n(&dev->q_hold, on, __ATOMIC_SEQ_CST);
	if (!on)
		return;
	for (uint16_t k = 1; k < dev->nb_q; k++)
		q_quiesce(dev->q[k]);
}

/* The lcore whose engine progresses @dev, or -1 (inline, or no context open yet). */
int
roce_engine_lcore(const struct roce_dev *dev)
{
	const struct roce_engine *eng = __atomic_load_n(&dev->engine, __ATOMIC_ACQUIRE);

	return eng != NULL ? (int)eng->lcore : -1;
}

/* The engine lcore for queue @k of @dev, or -1: inline */
static int
pick_lcore(const struct roce_dev *dev, uint16_t k)
{
	unsigned int lc;

	/*
	 * The parent's lcores are not in a forked process; and once processes
	 * share the device, they all move it inline, under its one lock
	 */
	if (roce_share_is_child() || dev->share_on)
		return -1;
	if (dev->nb_lcores > 1)		/* lcore=a:b:...: queue k on the k-th, round */
		return dev->q_lcore[k % dev->nb_lcores];
	if (dev->lcore >= 0)
		return dev->lcore;
	if (dev->lcore == -1)
		return -1;
	/* auto: share an engine droce already runs, else the highest idle worker */
	RTE_LCORE_FOREACH_WORKER(lc)
		if (engines[lc])
			return lc;
	for (int l = RTE_MAX_LCORE - 1; l >= 0; l--)
		if ((unsigned int)l != rte_get_main_lcore() && rte_lcore_is_enabled(l) &&
		    rte_eal_get_lcore_state(l) == WAIT)
			return l;
	return -1;
}

/* Under engine_lock: @q joins the engine on lcore @lc, which starts if it is new. */
static int
engine_add(struct roce_q *q, int lc)
{
	struct roce_engine *eng;
	int ret;

	if (!rte_lcore_is_enabled(lc) || (unsigned int)lc == rte_get_main_lcore()) {
		ROCE_LOG(ERR, "%s: lcore %d is not an enabled worker lcore", q->dev->name, lc);
		return -EINVAL;
	}
	eng = engines[lc];
	if (eng != NULL) {
		q->engine = eng;
		eng->qs[eng->nb_qs] = q;
		__atomic_store_n(&eng->nb_qs, eng->nb_qs + 1, __ATOMIC_RELEASE);
		return 0;
	}
	if (rte_eal_get_lcore_state(lc) != WAIT) {
		ROCE_LOG(ERR, "%s: lcore %d is busy", q->dev->name, lc);
		return -EBUSY;
	}
	eng = rte_zmalloc("droce_engine", sizeof(*eng), RTE_CACHE_LINE_SIZE);
	if (eng == NULL)
		return -ENOMEM;
	eng->lcore = lc;
	eng->qs[0] = q;
	eng->nb_qs = 1;
	q->engine = eng;
	ret = rte_eal_remote_launch(engine_main, eng, lc);
	if (ret) {
		q->engine = NULL;
		rte_free(eng);
		return ret;
	}
	engines[lc] = eng;
	return 0;
}

/* Under engine_lock: @q leaves its engine, which stops if it moves nothing more. */
static void
engine_remove(struct roce_q *q)
{
	struct roce_engine *eng = q->engine;
	uint32_t j = 0;

	if (eng == NULL)
		return;
	/* stop, edit the list, restart if other queues remain */
	__atomic_store_n(&eng->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(eng->lcore);
	/* everything the engine wrote is before what follows (a removed device is freed) */
	ROCE_TSAN_ACQUIRE(eng);
	for (uint32_t i = 0; i < eng->nb_qs; i++)
		if (eng->qs[i] != q)
			eng->qs[j++] = eng->qs[i];
	eng->nb_qs = j;
	q->engine = NULL;
	if (j == 0) {
		engines[eng->lcore] = NULL;
		rte_free(eng);
	} else {
		eng->stop = 0;
		rte_eal_remote_launch(engine_main, eng, eng->lcore);
	}
}

int
roce_engine_attach(struct roce_dev *dev)
{
	int lc, ret = 0;

	pthread_mutex_lock(&engine_lock);
	lc = pick_lcore(dev, 0);
	if (lc < 0) {
		dev->engine = NULL;
		ret = roce_inline_attach(dev);
		if (ret)
			ROCE_LOG(ERR, "%s: cannot start the inline progress thread: %s",
				 dev->name, rte_strerror(-ret));
		else
			ROCE_LOG(INFO, "%s: inline progress", dev->name);
		goto out;
	}
	for (uint16_t k = 0; k < dev->nb_q && ret == 0; k++) {
		lc = pick_lcore(dev, k);
		ret = lc < 0 ? -EINVAL : engine_add(dev->q[k], lc);
		if (ret == 0)
			ROCE_LOG(INFO, "%s: queue %u: engine on lcore %d", dev->name, k, lc);
	}
	if (ret) {
		for (uint16_t k = 0; k < dev->nb_q; k++)
			engine_remove(dev->q[k]);
		goto out;
	}
	/* published last: the device is an engine's once every queue is */
	dev->engine = dev->q[0]->engine;
out:
	pthread_mutex_unlock(&engine_lock);
	return ret;
}

void
roce_engine_detach(struct roce_dev *dev)
{
	pthread_mutex_lock(&engine_lock);
	if (dev->engine == NULL) {
		roce_inline_detach(dev);
		goto out;
	}
	for (uint16_t k = 0; k < dev->nb_q; k++)
		engine_remove(dev->q[k]);
	dev->engine = NULL;
out:
	pthread_mutex_unlock(&engine_lock);
}

/*
 * In a forked child: no engine lcore runs here (fork copies only the
 * calling thread). The devices they progress stay theirs: the parent's
 * (roce_share.c).
 */
void
roce_engine_forked(void)
{
	pthread_mutex_init(&engine_lock, NULL);
	roce_inline_forked();
	memset(engines, 0, sizeof(engines));	/* they go on in the parent */
}

/* A forked process opens @dev: it progresses it inline too (roce_share.c). */
int
roce_engine_join(struct roce_dev *dev)
{
	int ret;

	pthread_mutex_lock(&engine_lock);
	ret = roce_inline_join(dev);
	pthread_mutex_unlock(&engine_lock);
	return ret;
}
