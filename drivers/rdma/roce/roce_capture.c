/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture (devarg pcapng=<file>): every frame the device takes from its port
 * and every frame it queues for the port, in a pcapng file (DPDK's
 * rte_pcapng), for Wireshark and tshark.
 *
 * The engine copies each frame (rte_pcapng_copy, from a pool of the
 * capture's own) onto a ring, and goes on; a control thread of the device
 * writes what the ring holds to the file. So the lcore loop makes no system
 * call and waits for no disk: when the writer falls behind, the ring fills
 * and frames go uncaptured (counted, never held back). Frames a device sends
 * to itself (its loopback ring) are not captured.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "roce_loc.h"

#define CAP_RING	4096	/* frames copied and not yet written */
#define CAP_BURST	64

struct roce_capture {
	rte_pcapng_t *pcapng;
	struct rte_mempool *mp;
	struct rte_ring *ring;
	pthread_t thread;
	uint32_t stop;
	char path[PATH_MAX];
	uint64_t written;	/* writer thread's */
	uint64_t dropped;	/* engine's: no copy mbuf, or the ring full */
	int write_err;		/* writer thread's: the file could not be written */
	bool closed;		/* the writer is joined and the file closed (under caps_lock) */
	struct roce_capture *next;	/* the process's captures (caps) */
};

/*
 * The process's captures: at exit, those still open are written out and
 * closed (capture_exit), so that a program that ends without removing its
 * devices (most do) leaves a whole file, not one cut in the middle of a
 * frame the writer was killed writing.
 */
static struct roce_capture *caps;
static pthread_mutex_t caps_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;

/* Stop @c's writer once it has written what the ring holds, and close the file. */
static void
capture_close(struct roce_capture *c)
{
	if (c->closed)
		return;
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	pthread_join(c->thread, NULL);
	rte_pcapng_close(c->pcapng);
	c->closed = true;
}

static void
capture_exit(void)
{
	pthread_mutex_lock(&caps_lock);
	for (struct roce_capture *c = caps; c != NULL; c = c->next)
		capture_close(c);
	pthread_mutex_unlock(&caps_lock);
}

static void
capture_exit_register(void)
{
	atexit(capture_exit);
}

/*
 * The engine, on a burst of frames queue @q took in, or (@out) one it queued
 * out: copies onto the ring, which the device's queues share (multi-producer).
 */
void
roce_capture_burst(struct roce_q *q, struct rte_mbuf **pkts, uint16_t n, bool out)
{
	struct roce_dev *dev = q->dev;
	struct roce_capture *c = __atomic_load_n(&dev->cap, __ATOMIC_ACQUIRE);
	struct rte_mbuf *cp[DROCE_BURST];
	uint64_t now;
	unsigned int k = 0, done;

	if (unlikely(c == NULL))	/* stopped since the caller looked (roce_capture_set) */
		return;
	now = rte_get_tsc_cycles();

	for (uint16_t i = 0; i < n && k < RTE_DIM(cp); i++) {
		cp[k] = rte_pcapng_copy(dev->port_id, q->id, pkts[i], c->mp, UINT32_MAX, now,
					out ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);
		if (cp[k] != NULL)
			k++;
	}
	done = rte_ring_enqueue_burst(c->ring, (void **)cp, k, NULL);
	if (unlikely(done < k))
		rte_pktmbuf_free_bulk(&cp[done], k - done);
	if (unlikely(done < n))
		__atomic_fetch_add(&c->dropped, n - done, __ATOMIC_RELAXED);
}

/* Write what the ring holds; true if it held anything. */
static bool
drain(struct roce_capture *c)
{
	struct rte_mbuf *m[CAP_BURST];
	unsigned int n = rte_ring_dequeue_burst(c->ring, (void **)m, CAP_BURST, NULL);

	if (n == 0)
		return false;
	/* rte_pcapng_write_packets frees them, written or not */
	if (rte_pcapng_write_packets(c->pcapng, m, n) < 0)
		__atomic_store_n(&c->write_err, errno ? errno : EIO, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&c->written, c->written + n, __ATOMIC_RELAXED);
	return true;
}

static void *
writer(void *arg)
{
	struct roce_capture *c = arg;
	const struct timespec nap = { 0, 200 * 1000 };

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		if (!drain(c))
			nanosleep(&nap, NULL);
	while (drain(c))
		;
	return NULL;
}

/* At probe, before the port is owned (roce_probe says why): 0, or a negative errno. */
int
roce_capture_start(struct roce_dev *dev, const char *path)
{
	char name[RTE_MEMPOOL_NAMESIZE], tname[RTE_MAX_THREAD_NAME_LEN], app[64];
	struct roce_capture *c = calloc(1, sizeof(*c));
	int fd, ret;

	if (c == NULL)
		return -ENOMEM;
	snprintf(c->path, sizeof(c->path), "%s", path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		ROCE_LOG(ERR, "%s: pcapng=%s: %s", dev->name, path, strerror(errno));
		goto err_free;
	}
	snprintf(app, sizeof(app), "droce (%s)", rte_version());
	c->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, app, dev->name);
	if (c->pcapng == NULL) {
		ret = -rte_errno;
		close(fd);
		ROCE_LOG(ERR, "%s: pcapng=%s: %s", dev->name, path, rte_strerror(rte_errno));
		goto err_free;
	}
	/* names of pools and rings are short: the device's name, cut (%.16s) */
	snprintf(name, sizeof(name), "dcap_%.16s", dev->name);
	/* sized for a 4096 B IB MTU's frames; larger ones take two segments */
	c->mp = rte_pktmbuf_pool_create(name, 2 * CAP_RING - 1, 0, 0,
					rte_pcapng_mbuf_size(4200 + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN),
					rte_socket_id());
	snprintf(name, sizeof(name), "dcapr_%.16s", dev->name);
	c->ring = rte_ring_create(name, CAP_RING, rte_socket_id(), RING_F_SC_DEQ);
	if (c->mp == NULL || c->ring == NULL) {
		ret = -ENOMEM;
		goto err_close;
	}
	snprintf(tname, sizeof(tname), "dcap-%.8s", dev->name);
	ret = rte_ctrl_thread_create(&c->thread, tname, NULL, writer, c);
	if (ret != 0) {
		ret = -ret;
		goto err_close;
	}
	pthread_once(&caps_once, capture_exit_register);
	pthread_mutex_lock(&caps_lock);
	c->next = caps;
	caps = c;
	pthread_mutex_unlock(&caps_lock);
	__atomic_store_n(&dev->cap, c, __ATOMIC_RELEASE);
	ROCE_LOG(INFO, "%s: capturing to %s", dev->name, path);
	return 0;

err_close:
	rte_ring_free(c->ring);
	rte_mempool_free(c->mp);
	rte_pcapng_close(c->pcapng);
err_free:
	free(c);
	return ret;
}

static void
capture_free(struct roce_capture *c)
{
	pthread_mutex_lock(&caps_lock);
	for (struct roce_capture **p = &caps; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	capture_close(c);
	pthread_mutex_unlock(&caps_lock);
	rte_ring_free(c->ring);
	rte_mempool_free(c->mp);
	free(c);
}

/* At remove, once the engine has let go of the device: the rest is written, the file closed. */
void
roce_capture_stop(struct roce_dev *dev)
{
	struct roce_capture *c = dev->cap;

	if (c == NULL)
		return;
	dev->cap = NULL;
	capture_free(c);
}

/*
 * droce_dev_capture: start a capture while the device runs, or stop it
 * (@path NULL). The engine sees dev->cap change at its next look; a stop
 * waits for the iteration that may still hold the old one to end
 * (roce_dev_quiesce) before the writer drains the ring and the file closes.
 */
int
roce_capture_set(struct roce_dev *dev, const char *path)
{
	static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
	struct roce_capture *c;
	int ret = 0;

	pthread_mutex_lock(&set_lock);
	c = dev->cap;
	if (path == NULL) {
		if (c == NULL) {
			ret = -ENOENT;
		} else {
			__atomic_store_n(&dev->cap, NULL, __ATOMIC_RELEASE);
			roce_dev_quiesce(dev);
			capture_free(c);
		}
	} else if (c != NULL) {
		ret = -EBUSY;
	} else {
		/*
		 * rte_pcapng_fdopen describes the ports RTE_ETH_FOREACH_DEV
		 * lists, which skips owned ones: the device's port is let go
		 * of for that moment, so that its frames have an interface
		 */
		bool owned = dev->owner.id != RTE_ETH_DEV_NO_OWNER &&
			     rte_eth_dev_owner_unset(dev->port_id, dev->owner.id) == 0;

		ret = roce_capture_start(dev, path);
		if (owned)
			rte_eth_dev_owner_set(dev->port_id, &dev->owner);
	}
	pthread_mutex_unlock(&set_lock);
	return ret;
}

/*
 * For telemetry: the file, frames written, frames not captured, the last
 * error writing the file (0: none); false if the device does not capture.
 */
bool
roce_capture_info(const struct roce_dev *dev, const char **path, uint64_t *written,
		  uint64_t *dropped, int *write_err)
{
	const struct roce_capture *c = dev->cap;

	if (c == NULL)
		return false;
	*path = c->path;
	*write_err = __atomic_load_n(&c->write_err, __ATOMIC_RELAXED);
	*written = __atomic_load_n(&c->written, __ATOMIC_RELAXED);
	*dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
	return true;
}
