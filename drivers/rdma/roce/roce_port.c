/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port 1's state follows the ethdev's link. A change is announced to every
 * open context as IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR. It is seen on
 * the control path only: the ethdev's link-state interrupt where the PMD has
 * one (RTE_ETH_DEV_INTR_LSC), else an EAL alarm polling the link every
 * DROCE_LINK_POLL_MS, and any ibv_query_port, which announces a change it
 * sees before it answers, so that the state it reports and the events agree.
 */
#include <rte_alarm.h>
#include <rte_ethdev.h>
#include <rte_pause.h>

#include "roce_loc.h"

/*
 * Read the link; announce a change. Returns the state now announced (true:
 * ACTIVE). Called from the EAL interrupt thread and from query_port.
 */
bool
roce_port_check(struct roce_dev *dev)
{
	struct rte_eth_link link;
	bool up;

	pthread_mutex_lock(&dev->port_lock);
	up = rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
	     link.link_status == RTE_ETH_LINK_UP;
	if (up != dev->port_up) {
		struct ibv_async_event ev = {
			.element.port_num = 1,
			.event_type = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
		};

		dev->port_up = up;
		if (up)
			__atomic_store_n(&dev->announce, 1, __ATOMIC_RELEASE);
		ROCE_LOG(INFO, "%s: port 1 %s (link of %s)", dev->name, up ? "ACTIVE" : "DOWN",
			 dev->ethdev_name);
		roce_async_raise(dev, &ev);
	}
	pthread_mutex_unlock(&dev->port_lock);
	return up;
}

static void
port_alarm(void *arg)
{
	struct roce_dev *dev = arg;

	roce_port_check(dev);
	if (rte_eal_alarm_set(DROCE_LINK_POLL_MS * 1000, port_alarm, dev) != 0)
		ROCE_LOG(ERR, "%s: cannot re-arm the link poll: port events stop", dev->name);
}

static int
port_lsc(uint16_t port_id, enum rte_eth_event_type type, void *arg, void *ret_param)
{
	RTE_SET_USED(port_id);
	RTE_SET_USED(type);
	RTE_SET_USED(ret_param);
	roce_port_check(arg);
	return 0;
}

/* First context opened: the current link is the state, unannounced. */
void
roce_port_monitor_start(struct roce_dev *dev)
{
	struct rte_eth_link link;
	int ret;

	pthread_mutex_lock(&dev->port_lock);
	dev->port_up = rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
		       link.link_status == RTE_ETH_LINK_UP;
	pthread_mutex_unlock(&dev->port_lock);
	if (dev->port_lsc)
		ret = rte_eth_dev_callback_register(dev->port_id, RTE_ETH_EVENT_INTR_LSC,
						    port_lsc, dev);
	else
		ret = rte_eal_alarm_set(DROCE_LINK_POLL_MS * 1000, port_alarm, dev);
	if (ret != 0)
		ROCE_LOG(ERR, "%s: cannot watch the link of %s (%d): no port events",
			 dev->name, dev->ethdev_name, ret);
}

/* Last context closed: no callback runs on @dev once this returns. */
void
roce_port_monitor_stop(struct roce_dev *dev)
{
	if (!dev->port_lsc) {
		/* waits for a running callback, and removes what it re-armed */
		rte_eal_alarm_cancel(port_alarm, dev);
		return;
	}
	while (rte_eth_dev_callback_unregister(dev->port_id, RTE_ETH_EVENT_INTR_LSC,
					       port_lsc, dev) == -EAGAIN)
		rte_pause();
}
