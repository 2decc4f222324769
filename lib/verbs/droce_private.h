/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the drop-in libibverbs.so.1 exports to the drop-in librdmacm.so.1
 * alone, under the version node DROCE_PRIVATE_1 (dropin/libibverbs.private
 * .symbols): the connection manager's needs that no verb expresses. Not an
 * API: no program may use it, and test/run_dropin_abi.sh checks that this
 * node holds nothing else.
 */
#ifndef DROCE_PRIVATE_H
#define DROCE_PRIVATE_H

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A device's QP1, the GSI QP that carries CM MADs: UD, QPN 1, one per
 * device (EBUSY for a second), @attr as for ibv_create_qp (qp_type UD, no
 * SRQ: EINVAL). Brought up with the Q_Key 0x80010000 like any UD QP.
 */
struct ibv_qp *droce_gsi_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/*
 * The link-layer address of IPv4 @ip (network order) on @ctx's link: 0 with
 * @mac filled when known (or @ip is the device's own), EAGAIN after asking
 * the device to resolve it (ARP): ask again later; an errno otherwise. The
 * connection manager's rdma_resolve_addr polls it until its time-out.
 */
int droce_neigh_resolve(struct ibv_context *ctx, uint32_t ip, uint8_t mac[6]);

/*
 * An RC QP the engine moved to ERR on its own: a fatal completion error
 * (retry or RNR retry exceeded, a NAK for a remote error, a local
 * protection error) or an affiliated QP error the responder found; never a
 * move by ibv_modify_qp. The connection manager disconnects the connection
 * whose QP it is: a peer killed without a DREQ leaves only this trace.
 */
struct droce_qp_err {
	uint64_t node_guid;	/* the device's, big endian (ibv_device_attr.node_guid) */
	uint32_t qpn;
};

/*
 * The fd of the process's queue of such QPs, made at the first call and
 * kept for the life of the process (until then, nothing is queued): an
 * O_NONBLOCK eventfd, readable while the queue holds entries. -1 with errno
 * on failure. The queue holds DROCE_ASYNC_RING entries; more are lost.
 */
int droce_qp_err_fd(void);

/* The oldest entry into @e: 0, or -1 with errno EAGAIN when there is none (or EINVAL). */
int droce_qp_err_get(struct droce_qp_err *e);

/*
 * A device shared by processes forked from the one that opened it
 * (doc/guides/architecture.rst): each is an owner, with an index, and a CM
 * MAD reaches the owner whose ID it names. droce_cm_owner: this process's
 * index on @ctx's device (0 unless forked), to put in the top
 * DROCE_CM_ID_OWNER_BITS bits of every communication ID and SIDR request
 * ID the connection manager makes. droce_cm_listen: a listener of this
 * process takes service ID @sid (@on) or gives it up: a REQ or SIDR REQ
 * for it comes to this process. 0, or an errno: EADDRINUSE while another
 * process listens there, ENOSPC.
 */
#define DROCE_CM_ID_OWNER_BITS	4
uint32_t droce_cm_owner(struct ibv_context *ctx);
int droce_cm_listen(struct ibv_context *ctx, uint64_t sid, int on);

/*
 * What was posted to @qp's send queue has left: the driver took every WR
 * and the iteration that took them ended, their frames handed to the port
 * (for UD, what its send completion says). The connection manager's MADs
 * leave before the call that sent them returns, as a kernel CM's do: a
 * process may end right after (_exit, which runs no atexit handler), and
 * what it left posted on an inline device would never be sent. 0, or
 * ETIMEDOUT after @ms milliseconds (the WRs stay posted), EINVAL.
 */
int droce_qp_send_flush(struct ibv_qp *qp, unsigned int ms);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_PRIVATE_H */
