/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_impair's private API: what a program that wraps a port in net_impair
 * can change at run time beyond the devargs (doc/guides/impair.rst).
 */
#ifndef DROCE_PMD_IMPAIR_H
#define DROCE_PMD_IMPAIR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Take the link of the net_impair port @port_id down (@up == 0) or bring it
 * back up (@up != 0), as unplugging and plugging back a cable would.
 *
 * While the link is down the port reports it down (rte_eth_link_get_nowait
 * and the like), and its burst calls, in both directions whatever dir=
 * says, drop every frame offered for transmission and every frame that
 * arrives from the underlying port (xstat impair_link_dropped), and the
 * frames the port was holding for delay or reordering (impair_flushed).
 * Once it is up again the port shows the underlying port's link and passes
 * traffic as configured. The data path sees the change at its next burst
 * call on each queue.
 *
 * A change of the reported link status raises RTE_ETH_EVENT_INTR_LSC
 * (the port has RTE_ETH_DEV_INTR_LSC): the callbacks registered for it on
 * the port run in the calling thread before this returns, so they must not
 * wait for that thread. Setting the state the link is already in does
 * nothing. The same as rte_eth_dev_set_link_down() / rte_eth_dev_set_link_up()
 * on the port; the devarg link=down starts the port with its link down.
 *
 * @param port_id
 *   A net_impair port, started or not.
 * @param up
 *   Non-zero: link up; zero: link down.
 * @return
 *   0 on success, -ENODEV if @port_id names no port, -EINVAL if the port is
 *   not a net_impair port.
 */
int droce_impair_link_set(uint16_t port_id, int up);

/**
 * Change the faults of the net_impair port @port_id while it runs: @params
 * holds the devargs' fault keys, "key=value" separated by commas, those
 * named taking their new value and the others staying:
 * drop, dup, reorder, corrupt (probabilities from 0 to 1) and delay_us
 * (0 to 10000000). E.g. "drop=0.05,delay_us=200", or "drop=0" to stop
 * dropping.
 *
 * They apply to the directions dir= named at probe (a direction passed
 * through untouched stays so), from each queue's next packet on; frames
 * already held for delay keep the deadline they got. seed=, dir= and
 * link= cannot change here (droce_impair_link_set takes the link down).
 *
 * @return
 *   0 on success, -ENODEV if @port_id names no port, -EINVAL if the port is
 *   not a net_impair port or @params is malformed (an unknown key, a value
 *   out of range; logged), in which case nothing changed.
 */
int droce_impair_fault_set(uint16_t port_id, const char *params);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_PMD_IMPAIR_H */
