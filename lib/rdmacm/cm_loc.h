/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager's internals (issue 11): what the rdma_* API
 * (cm_api.c, cm_qp.c), the protocol (cm_conn.c) and the MAD transport and
 * thread (cm_dev.c) share. Not installed; the drop-in librdmacm.so.1 is the
 * only user.
 *
 * The model, as rdma-core's librdmacm over the kernel's rdma_cm, with the
 * kernel's part in this process:
 *  - cm_dev: one per droce device the drop-in libibverbs lists, opened once;
 *    its QP1 (the GSI QP: UD, QPN 1, Q_Key 0x80010000) carries the IBA CM
 *    MADs (cm_mad.h) to and from the QP1 of the peer's device.
 *  - cm_id: an rdma_cm_id and its connection state (IBA 12.9's state
 *    machine, reduced to what RoCE needs: no LAP/APR, no alternate path).
 *  - cm_channel: an rdma_event_channel; its fd is an eventfd counting the
 *    queued events (semaphore mode), so blocking, poll/epoll and O_NONBLOCK
 *    behave as on the kernel's rdma_cm fd.
 *  - one thread (the "CM thread") receives MADs and runs the timers
 *    (retransmission of REQ, REP, DREQ; the MRA wait; address and route
 *    resolution time-outs), and disconnects a connection whose RC QP the
 *    engine moved to ERR (droce_qp_err_get: the peer may be gone).
 * One mutex (cm.lock) guards all of it; the API takes it for each call and
 * the thread for each MAD or timer. Nothing here is on the data path: the
 * rdma_verbs.h inlines post straight to the ids' verbs objects.
 */
#ifndef DROCE_CM_LOC_H
#define DROCE_CM_LOC_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rte_log.h>

#include "cm_mad.h"

#ifndef TAILQ_FOREACH_SAFE	/* glibc's sys/queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST((head));				\
	     (var) && ((tvar) = TAILQ_NEXT((var), field), 1);		\
	     (var) = (tvar))
#endif

#define CM_MAX_DEVS		8
#define CM_RECV_SLOTS		2048	/* receive WQEs on each QP1: a burst of requests */
#define CM_SEND_SLOTS		64	/* MADs in flight from each QP1 (a 64-bit mask) */
#define CM_BACKLOG		2048	/* MADs waiting for a send slot, per device */
#define CM_GRH_LEN		40
#define CM_RECV_LEN		(CM_GRH_LEN + DROCE_CM_MAD_LEN)
#define CM_AH_CACHE		64	/* peers with an address handle on a QP1 */

/*
 * Timers. The REQ carries our CM response timeout as 2^(x+8) ns (IBA
 * 12.7.20); the kernel's rdma_cm sends 20 (4.3 s). droce answers from a
 * thread that is always ready, so 16 (268 ms) and the kernel's 15 retries:
 * a lost REQ costs about half a second, an absent peer ends in
 * RDMA_CM_EVENT_UNREACHABLE after about 8 s.
 */
#define CM_RESPONSE_TIMEOUT	16
#define CM_MAX_RETRIES		15
#define CM_MRA_TIMEOUT		24	/* service timeout an MRA asks for (kernel: 24) */
#define CM_DREQ_RETRIES		5
#define CM_LOCAL_ACK_TIMEOUT	14	/* QP ACK timeout by default: 67 ms */
#define CM_DEFAULT_RESP_RES	16	/* max_qp_rd_atom / max_qp_init_rd_atom of droce */
/*
 * RNR timer for the QP's RTR (rdma_init_qp_attr): 0, 655.36 ms in IBA's
 * encoding, as the kernel's CM gives (cm_init_qp_rtr_attr). A sender with
 * a finite RNR retry count (pyverbs asks 5) then waits seconds for a slow
 * receiver to post, not milliseconds.
 */
#define CM_MIN_RNR_TIMER	0
#define CM_ADDR_POLL_MS		5	/* address resolution: ask the device again */
#define CM_ADDR_TIMEOUT_MS	2000	/* rdma_resolve_addr with a time-out <= 0 */
/*
 * A MAD's wait to be on its way (droce_qp_send_flush) before the call that
 * sent it returns; a device that took nothing for so long (its port down)
 * is not waited for again until it has caught up.
 */
#define CM_FLUSH_MS		50
/*
 * How long after its DREQ an id waits for the DREP, in rdma_destroy_id (a
 * peer on this device), and the process at exit (for all of its DREQs): the
 * kernel's CM would go on resending it after them.
 */
#define CM_DREP_WAIT_MS		200
#define CM_PORT_FIRST		32768	/* ephemeral ports, as ip_local_port_range */
#define CM_PORT_LAST		60999

struct cm_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;		/* the default PD (rdma_create_qp with NULL), QP1's */
	struct ibv_xrcd *xrcd;		/* XRC ids' domain, opened on first use (cm_dev_xrcd) */
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;		/* QP1's send and receive CQ */
	struct ibv_qp *qp1;
	struct ibv_mr *mr;
	uint8_t *buf;			/* CM_RECV_SLOTS receive slots, then CM_SEND_SLOTS MADs */
	uint64_t send_free;		/* bit i: send slot i is free */
	in_addr_t ip;			/* network order, from GID 0 (IPv4-mapped) */
	union ibv_gid gid;
	__be64 guid;
	enum ibv_mtu mtu;		/* the port's active MTU */
	uint8_t max_rd_atomic;		/* max_qp_init_rd_atom */
	uint8_t max_dest_rd_atomic;	/* max_qp_rd_atom */
	struct {
		in_addr_t ip;
		struct ibv_ah *ah;
	} ah[CM_AH_CACHE];
	unsigned int ah_next;		/* round-robin victim */
	/* MADs waiting for a free send slot, oldest first (a ring) */
	struct cm_pending {
		in_addr_t dst;
		uint8_t mad[DROCE_CM_MAD_LEN];
	} *backlog;
	unsigned int bl_head, bl_len;
	/* counters (telemetry /droce/cm, cm_telemetry.c) */
	uint64_t rx_mads, tx_mads, retransmits;
	uint64_t rx_drops;		/* receive completions in error */
	uint64_t tx_drops;		/* no address handle, or the post refused */
	uint64_t rx_malformed;		/* MADs that do not decode (cm_mad.c), or not a Send */
	uint64_t rx_unsupported;	/* LAP, APR, ClassPortInfo: not spoken */
	bool flush_late;		/* the last flush timed out (CM_FLUSH_MS) */
};

/* The connection's state; names follow IBA 12.9.6 where there is one. */
enum cm_conn_state {
	CM_IDLE,
	CM_ADDR_QUERY,		/* rdma_resolve_addr under way */
	CM_ADDR_BOUND,		/* bound or resolved: has a device */
	CM_ROUTE_QUERY,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT,		/* MRA received extends the same state */
	CM_REQ_RCVD,		/* CONNECT_REQUEST reported, accept or reject pending */
	CM_REP_RCVD,		/* active without QP: CONNECT_RESPONSE reported, rdma_establish pending */
	CM_REP_SENT,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DISCONNECTED,	/* closed and out of TimeWait: the QP may be used again */
	CM_TIMEWAIT,		/* closed (DREQ/DREP, a REJ after the REP): IBA 12.9.6 */
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
	CM_UD_READY,		/* UD: resolved or answered */
	CM_ERROR,		/* rejected, unreachable, timed out */
};

struct cm_channel;

/* A multicast group an id joined (cm_mcast.c). */
struct cm_mc {
	TAILQ_ENTRY(cm_mc) link;
	struct sockaddr_in addr;
	union ibv_gid mgid;		/* ::ffff:<group> */
	void *context;			/* the application's, in the join event */
	uint32_t join_flags;		/* RDMA_MC_JOIN_FLAG_* */
	bool attached;			/* the id's QP is attached (done as the event is taken) */
};

TAILQ_HEAD(cm_mc_list, cm_mc);

struct cm_id {
	struct rdma_cm_id id;		/* first: what the application holds */
	TAILQ_ENTRY(cm_id) link;
	struct cm_channel *chan;
	bool sync;			/* created with a NULL channel: chan is its own */
	enum cm_conn_state state;
	struct cm_dev *dev;		/* once bound to a device */
	bool bound;			/* rdma_bind_addr or resolve_addr gave it an address */
	bool port_set;			/* its port was chosen (port != 0 in route.addr.src) */
	bool destroying;
	bool child;			/* made by a request: shares its listener's port */
	int backlog, pending;		/* a listener: requests not yet accepted or rejected */
	struct cm_id *listen;		/* a request's listener, while it counts in pending */

	/* the connection */
	uint32_t local_id, remote_id;	/* communication IDs (ours, the peer's) */
	uint64_t remote_tid;		/* TID of the peer's REQ / SIDR_REQ (answers echo it) */
	uint64_t tid;			/* TID of what we started (REQ, DREQ, SIDR_REQ) */
	in_addr_t peer_ip;
	__be64 peer_guid;
	uint32_t local_psn, remote_qpn, remote_psn, remote_qkey;
	uint32_t qp_num;		/* the QPN announced: id.qp's, or the conn_param's */
	uint8_t resp_res, init_depth;	/* as agreed */
	uint8_t retry_count, rnr_retry;	/* ours: for our QP's RTS */
	uint8_t peer_rnr_retry;		/* what we ask of the peer in our REQ/REP */
	uint8_t srq, flow_control;
	enum ibv_mtu mtu;
	uint8_t tos, ack_timeout;
	bool tos_set, ack_timeout_set, reuseaddr, afonly;
	bool tw_report;			/* TimeWait after DISCONNECTED: TIMEWAIT_EXIT at its end */
	struct ibv_sa_path_rec path;

	/* the last MAD we sent that may be sent again (REQ, REP, RTU, MRA, DREQ, DREP, REJ, SIDR) */
	uint8_t mad[DROCE_CM_MAD_LEN];
	bool mad_valid;
	int retries;			/* sends left before the timer gives up */
	uint64_t timer_ns;		/* CLOCK_MONOTONIC deadline; 0: none */
	uint64_t dreq_ns;		/* when the last DREQ left (cm_send_dreq) */
	uint32_t timeout_ms;		/* between retransmissions */
	uint64_t addr_end_ns;		/* rdma_resolve_addr's time-out */

	/* events reported and acknowledged (rdma_destroy_id waits for them to match) */
	uint32_t events_reported, events_acked;

	struct cm_mc_list mcs;		/* multicast groups joined */

	/* rdma_create_ep's passive endpoint: what rdma_get_request gives each request */
	struct ibv_qp_init_attr *ep_qp_attr;
	bool ep_pd_set;
};

enum cm_event_action {
	CM_ACT_NONE,
	CM_ACT_CONN_RESP,	/* a REP: the QP to RTR/RTS and the RTU when taken */
	CM_ACT_QP_ERR,		/* a REJ: the QP to error when taken */
	CM_ACT_MC_JOIN,		/* a join: the QP attached to the group when taken */
};

struct cm_event {
	struct rdma_cm_event ev;	/* first: what the application holds */
	TAILQ_ENTRY(cm_event) link;
	struct cm_id *owner;		/* counts the acknowledgement */
	enum cm_event_action action;	/* done in rdma_get_cm_event, the application's thread */
	struct cm_mc *mc;		/* CM_ACT_MC_JOIN's group */
	uint8_t pdata[DROCE_CM_MAD_LEN];
};

TAILQ_HEAD(cm_event_list, cm_event);

struct cm_channel {
	struct rdma_event_channel ch;	/* first: ch.fd, a counting eventfd */
	struct cm_event_list events;
	bool sync;			/* an id's own (destroyed with it) */
	unsigned int refs;		/* ids on it */
	bool dead;			/* destroyed while ids were on it: freed with the last */
};

TAILQ_HEAD(cm_id_list, cm_id);

struct cm_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* acknowledgements, sync waits */
	bool inited;
	int init_err;			/* errno of a failed initialisation */
	struct cm_dev dev[CM_MAX_DEVS];
	int nb_dev;
	struct ibv_context **ctx_list;	/* rdma_get_devices' NULL-terminated list */
	struct cm_id_list ids;
	uint32_t next_local_id;
	uint32_t owner;			/* this process's index on a shared device (droce_cm_owner) */
	uint16_t next_port;
	pthread_t thread;
	bool thread_running;
	int epfd, wakefd;
	int qp_err_fd;			/* RC QPs the engine moved to ERR (droce_qp_err_fd) */
};

extern struct cm_state cm;

#define CM_ERR(e)	(errno = (e), -1)

/* cm_dev.c: the log type lib.rdmacm */
extern int cm_logtype;
#define CM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, cm_logtype, "droce-cm: " fmt "\n", ##__VA_ARGS__)

/* cm_dev.c */
int cm_init(void);
uint64_t cm_now_ns(void);
struct cm_dev *cm_dev_by_ip(in_addr_t ip);
struct cm_dev *cm_dev_by_verbs(const struct ibv_context *verbs);
struct cm_dev *cm_dev_route(in_addr_t dst);
struct ibv_xrcd *cm_dev_xrcd(struct cm_dev *d);
int cm_mad_send(struct cm_dev *dev, in_addr_t dst, const uint8_t *mad);
void cm_wake(void);
int cm_debug(void);
void cm_trace(const char *dir, const struct cm_dev *d, in_addr_t peer, const uint8_t *mad);

/* cm_conn.c: under cm.lock */
void cm_mad_input(struct cm_dev *dev, in_addr_t src, in_addr_t dst, const uint8_t *mad, size_t len);
void cm_qp_err_input(__be64 guid, uint32_t qpn);
void cm_timer_fire(struct cm_id *c);
void cm_conn_response(struct cm_id *c, struct cm_event *e);
int cm_send_req(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_rep(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_rtu(struct cm_id *c);
int cm_send_rej(struct cm_id *c, uint16_t reason, const void *pdata, uint8_t len);
int cm_send_dreq(struct cm_id *c);
int cm_send_sidr_req(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_sidr_rep(struct cm_id *c, uint8_t status, const void *pdata, uint8_t len);
void cm_timer_set(struct cm_id *c, uint32_t ms, int retries);
void cm_timer_stop(struct cm_id *c);
uint32_t cm_timeout_ms(uint8_t iba_time);
uint32_t cm_timewait_ms(const struct cm_id *c);

/* cm_api.c: under cm.lock */
struct cm_event *cm_event_new(struct cm_id *c, enum rdma_cm_event_type type, int status);
void cm_event_post(struct cm_channel *ch, struct cm_event *e);
void cm_report(struct cm_id *c, enum rdma_cm_event_type type, int status);
struct cm_id *cm_id_new(struct cm_channel *ch, void *context, enum rdma_port_space ps,
			enum ibv_qp_type qpt);
void cm_id_set_dev(struct cm_id *c, struct cm_dev *dev);
void cm_pending_drop(struct cm_id *c);
uint16_t cm_port_alloc(enum rdma_port_space ps);
struct cm_id *cm_id_by_local(uint32_t local_id);
struct cm_id *cm_listener_find(struct cm_dev *dev, uint16_t ps, uint16_t port, in_addr_t dst);
uint16_t cm_ps_wire(enum rdma_port_space ps);
void cm_path_fill(struct cm_id *c);

void cm_addr_poll(struct cm_id *c);

/* cm_telemetry.c */
void cm_telemetry_register(void);

/* cm_mcast.c: under cm.lock */
void cm_mc_joined(struct cm_id *c, struct cm_event *e);
void cm_mc_leave_all(struct cm_id *c);

/* cm_qp.c */
int cm_qp_to_rtr_rts(struct cm_id *c);
int cm_qp_to_err(struct cm_id *c);
int cm_qp_attr(struct cm_id *c, struct ibv_qp_attr *a, int *mask);

static inline struct cm_id *
to_cm_id(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

static inline in_addr_t
cm_sa_ip(const struct sockaddr *sa)
{
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
}

static inline uint16_t
cm_sa_port(const struct sockaddr *sa)
{
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

#endif /* DROCE_CM_LOC_H */
