/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for tag matching: a TM SRQ (ibv_create_srq_ex with
 * IBV_SRQ_INIT_ATTR_TM) with tags posted through ibv_post_srq_ops and two RC
 * QPs on it, fed SENDs whose payload starts with a TMH (struct ibv_tmh:
 * NO_TAG, EAGER, RNDV with an ibv_rvh, FIN), in one or several packets, and
 * the READ responses a rendezvous asks for. The rig (fuzz_common.h) is
 * fuzz_rx's: records, guarded memory, canonical state per input.
 *
 * Canonical tag list: NT tags, added in order: 0x100 + k exactly for
 * k < 6, 0xab00 under mask 0xff00, and a catch-all (mask 0) last; tagged
 * buffers of assorted lengths, each ending at a PROT_NONE page. The fix
 * header's FIX_HOOK writes a TMH over the payload: byte 7's bits 0-1 the
 * TMH opcode, bits 2-4 which tag it names, bit 5 an RVH whose length fits
 * that tag's buffer (shifted right by bits 6-7), else the fuzzer's.
 *
 * Checked per completion of the TM CQ: a tag completes only while posted
 * or matched, what it reports matches its tag under its mask and fits its
 * buffer; list operations complete only when signaled, in the order posted,
 * each with its wr_id and opcode, ADD and SYNC successfully, a DEL of a
 * handle not posted with TM_ERR. A DEL of a posted tag races with the
 * tag's consumption (a rendezvous request of several packets takes its tag
 * at the first and completes at the last), so the tag lives on as a ghost:
 * its DEL succeeds only if no completion ever names it, fails only if one
 * ends it; at the end of each input, after the QPs are back: no tag or
 * ghost is left matched, every ghost whose DEL failed has ended, the SRQ's
 * count of unexpected messages equals what software saw, and every handle
 * not posted is back in the free ring.
 *
 * CTRL records: byte 0 the action, byte 1 a selector:
 *   0 post a send WR on a QP     1 force a QP to ERR     2 bring it back
 *   3 TAG_ADD (flags, tag, mask from the rest; maybe no buffer or a bad key)
 *   4 TAG_DEL of a tag slot
 *   5 SYNC with a count off by an int8 from the right one
 *   6 re-register an MR
 */
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/tm_types.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define NT		8	/* canonical tags */
#define MAX_TAGS	16	/* the SRQ's max_num_tags: room for the fuzzer's ADDs */
#define TAG_TAG		0x7aull	/* recv_wr_id top byte of a tagged buffer, then a
				 * generation (bits 8-55) and the slot (bits 0-7) */
#define OPS_TAG		0x0bull	/* wr_id top byte of a list operation */
#define NOPS		1024	/* signaled list operations not yet completed, at most */
#define NGHOST		512	/* DELs of posted tags per input, at most (records: 256) */

enum { T_FREE, T_POSTED, T_BUSY };

/* A signaled list operation, as its completion must be. */
struct op_exp {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	int ghost;			/* a DEL of a posted tag: its ghost, else -1 */
};

/*
 * A tag whose DEL was posted. The engine may have consumed it first: its
 * completions then still come, and the DEL fails (TM_ERR if signaled).
 */
struct ghost {
	uint64_t wr_id;			/* its recv_wr_id; 0 once deleted for sure */
	uint64_t tag, mask;
	uint32_t cap;
	bool matched;			/* a MATCH completion: the one ending it is owed */
	bool ended;			/* a completion ended it: consumed before the DEL */
	bool failed;			/* its DEL failed: a completion ending it is owed */
};

static struct {
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct roce_srq *rsrq;
	struct fz_srq *fsrq;
	struct fz_rbuf tb;		/* tagged buffers, NT of them, shared by the slots */
	struct {
		uint64_t wr_id;		/* recv_wr_id of its latest ADD */
		uint64_t tag, mask;
		uint32_t handle;
		int state;
		int buf;
		uint32_t cap;		/* bytes its buffer takes (0: none) */
	} t[MAX_TAGS];
	uint32_t unexp;			/* unexpected messages software has seen */
	struct op_exp ops[NOPS];	/* signaled list operations not completed, in order */
	uint32_t ops_head;
	uint32_t ops_out;
	uint32_t ops_seq;
	uint64_t gen;			/* ADDs posted */
	struct ghost gh[NGHOST];
	int ng;
	bool dirty;
} tm;

static const uint32_t tag_lens[NT] = { 64, 1000, 4096, 8192, 16, 2048, 300, 5000 };

static int
post_op(struct ibv_ops_wr *op)
{
	struct ibv_ops_wr *bad = NULL;

	return ibv_post_srq_ops(tm.srq, op, &bad);
}

/* @op was posted: if signaled, its completion is due after those before it. */
static void
op_posted(const struct ibv_ops_wr *op, enum ibv_wc_opcode opcode, int ghost)
{
	if (!(op->flags & IBV_OPS_SIGNALED))
		return;
	FZ_CHECK(tm.ops_out < NOPS);
	tm.ops[(tm.ops_head + tm.ops_out++) % NOPS] = (struct op_exp){ op->wr_id, opcode, ghost };
}

#define ADD_NO_SGE	1	/* tag_add's @how: a tag without a buffer */
#define ADD_BAD_LKEY	2	/* a buffer whose key names nothing */

/* TAG_ADD of slot @k over tagged buffer @buf; 0 or the errno. */
static int
tag_add(int k, uint64_t tag, uint64_t mask, int buf, unsigned int flags, int how)
{
	struct ibv_sge sge = { (uintptr_t)tm.tb.buf[buf], tm.tb.len[buf],
			       tm.tb.mr->key ^ (how & ADD_BAD_LKEY ? 0x5a5a5 : 0) };
	struct ibv_ops_wr op = {
		.wr_id = OPS_TAG << 56 | tm.ops_seq++,
		.opcode = IBV_WR_TAG_ADD,
		.flags = flags,
		.tm = { .unexpected_cnt = tm.unexp,
			.add = { .recv_wr_id = TAG_TAG << 56 | (tm.gen & ((1ull << 48) - 1)) << 8 |
					       (uint64_t)k,
				 .sg_list = &sge,
				 .num_sge = how & ADD_NO_SGE ? 0 : 1, .tag = tag, .mask = mask } },
	};
	int ret;

	if (tm.t[k].state != T_FREE || ((flags & IBV_OPS_SIGNALED) && tm.ops_out == NOPS))
		return EBUSY;
	ret = post_op(&op);
	if (ret != 0)
		return ret;
	tm.gen++;
	tm.t[k] = (typeof(tm.t[k])){ .wr_id = op.tm.add.recv_wr_id, .tag = tag, .mask = mask,
				     .handle = op.tm.handle, .state = T_POSTED, .buf = buf,
				     .cap = how & ADD_NO_SGE ? 0 : tm.tb.len[buf] };
	op_posted(&op, IBV_WC_TM_ADD, -1);
	return 0;
}

/*
 * TAG_DEL of @handle, completing only if signaled. A posted tag's slot is
 * free again; the tag becomes a ghost, as the engine may have consumed it
 * meanwhile. Any other handle fails.
 */
static int
tag_del(uint32_t handle, unsigned int flags)
{
	struct ibv_ops_wr op = {
		.wr_id = OPS_TAG << 56 | tm.ops_seq++,
		.opcode = IBV_WR_TAG_DEL,
		.flags = flags,
		.tm = { .handle = handle },
	};
	int k, ret, g = -1;

	for (k = 0; k < MAX_TAGS; k++)
		if (tm.t[k].state == T_POSTED && tm.t[k].handle == handle)
			break;
	if ((k < MAX_TAGS && tm.ng == NGHOST) ||
	    ((flags & IBV_OPS_SIGNALED) && tm.ops_out == NOPS))
		return EBUSY;
	ret = post_op(&op);
	if (ret != 0)
		return ret;
	if (k < MAX_TAGS) {
		g = tm.ng++;
		tm.gh[g] = (struct ghost){ .wr_id = tm.t[k].wr_id, .tag = tm.t[k].tag,
					   .mask = tm.t[k].mask, .cap = tm.t[k].cap };
		tm.t[k].state = T_FREE;
	}
	op_posted(&op, IBV_WC_TM_DEL, g);
	return 0;
}

/* A list operation's completion: the oldest signaled one not completed. */
static void
op_wc(const struct ibv_wc *wc)
{
	const struct op_exp *x = &tm.ops[tm.ops_head % NOPS];
	struct ghost *g;

	if (tm.ops_out == 0 || wc->wr_id != x->wr_id || wc->opcode != x->opcode)
		fprintf(stderr, "fuzz: list operation completion: opcode %d status %d (%s) "
			"wr_id %#" PRIx64 " wc_flags %#x; %u outstanding, the oldest "
			"wr_id %#" PRIx64 " opcode %d\n", wc->opcode, wc->status,
			ibv_wc_status_str(wc->status), wc->wr_id, wc->wc_flags, tm.ops_out,
			tm.ops_out ? x->wr_id : 0, tm.ops_out ? (int)x->opcode : -1);
	FZ_CHECK(tm.ops_out > 0 && wc->wr_id == x->wr_id && wc->opcode == x->opcode);
	tm.ops_head++;
	tm.ops_out--;
	if (wc->opcode != IBV_WC_TM_DEL || x->ghost < 0) {
		/* a DEL of a handle not posted fails */
		FZ_CHECK(wc->status == (wc->opcode == IBV_WC_TM_DEL ? IBV_WC_TM_ERR :
					IBV_WC_SUCCESS));
		return;
	}
	g = &tm.gh[x->ghost];
	if (wc->status == IBV_WC_SUCCESS) {
		/* deleted before anything matched it: no completion names it, ever */
		FZ_CHECK(!g->matched && !g->ended);
		g->wr_id = 0;
		tm.dirty = true;	/* its handle comes back with this poll */
	} else {
		/* consumed first: its completions end it (or have) */
		FZ_CHECK(wc->status == IBV_WC_TM_ERR);
		g->failed = true;
	}
}

static struct fz_qp *
qp_by_num(uint32_t qpn)
{
	for (int i = 0; i < fz.nqp; i++)
		if (fz.qps[i]->qp->qp_num == qpn)
			return fz.qps[i];
	return NULL;
}

/* One completion of the TM CQ. */
static void
tm_wc(void)
{
	struct ibv_cq_ex *cq = tm.cq;
	struct ibv_wc wc = {
		.wr_id = cq->wr_id,
		.status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq),
		.wc_flags = ibv_wc_read_wc_flags(cq),
	};
	struct ibv_wc_tm_info info;
	struct ghost *g = NULL;
	uint64_t tag, mask;
	uint32_t cap;
	bool match_only;
	int k;

	ibv_wc_read_tm_info(cq, &info);
	if (wc.opcode == IBV_WC_TM_ADD || wc.opcode == IBV_WC_TM_DEL || wc.opcode == IBV_WC_TM_SYNC) {
		FZ_CHECK(info.tag == 0 && info.priv == 0);
		op_wc(&wc);
		return;
	}
	if (wc.wr_id >> 56 != TAG_TAG) {
		struct fz_qp *q = qp_by_num(wc.qp_num);

		/* an SRQ WQE */
		FZ_CHECK(q != NULL && q->srq == tm.fsrq);
		fz_recv_done(q, &wc);
		FZ_CHECK(!(wc.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID)));
		FZ_CHECK(info.tag == 0 && info.priv == 0);
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TM_RECV) {
			tm.unexp++;
			tm.dirty = true;
		}
		return;
	}
	/* a tagged buffer: a posted or matched tag's, or a ghost's */
	k = wc.wr_id & 0xff;
	if (k >= MAX_TAGS || wc.wr_id != tm.t[k].wr_id ||
	    (tm.t[k].state != T_POSTED && tm.t[k].state != T_BUSY)) {
		for (int i = 0; i < tm.ng && g == NULL; i++)
			if (tm.gh[i].wr_id == wc.wr_id && !tm.gh[i].ended)
				g = &tm.gh[i];
		if (g == NULL)
			fprintf(stderr, "fuzz: tagged buffer completion: wr_id %#" PRIx64
				" status %d flags %#x, no such tag posted or matched\n",
				wc.wr_id, wc.status, wc.wc_flags);
		FZ_CHECK(g != NULL);
	}
	FZ_CHECK(wc.opcode == IBV_WC_TM_RECV);
	tm.dirty = true;
	tag = g ? g->tag : tm.t[k].tag;
	mask = g ? g->mask : tm.t[k].mask;
	cap = g ? g->cap : tm.t[k].cap;
	if (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_TM_RNDV_INCOMPLETE) {
		if (wc.wc_flags & IBV_WC_TM_MATCH)
			FZ_CHECK((info.tag & mask) == tag);
		else	/* tag information only with MATCH */
			FZ_CHECK(info.tag == 0 && info.priv == 0);
		if (wc.wc_flags & IBV_WC_TM_DATA_VALID)
			FZ_CHECK(wc.byte_len <= cap);
	}
	/* MATCH alone: more of the message (or the rendezvous data) is to come */
	match_only = wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_TM_MATCH) &&
		     !(wc.wc_flags & IBV_WC_TM_DATA_VALID);
	if (g != NULL) {
		FZ_CHECK(!(match_only && g->matched));
		g->matched |= match_only;
		g->ended = !match_only;
	} else if (match_only) {
		FZ_CHECK(tm.t[k].state == T_POSTED);
		tm.t[k].state = T_BUSY;
	} else {
		tm.t[k].state = T_FREE;
	}
}

static void
poll_tm(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int ret = ibv_start_poll(tm.cq, &pa);

	if (ret == ENOENT)
		return;
	FZ_CHECK(ret == 0);
	do
		tm_wc();
	while ((ret = ibv_next_poll(tm.cq)) == 0);
	FZ_CHECK(ret == ENOENT);
	ibv_end_poll(tm.cq);
}

/* The canonical list again, in order, in phase with what software counted. */
static void
tm_restore(void)
{
	struct roce_tm *rtm = tm.rsrq->tm;
	struct ibv_ops_wr sync = {
		.wr_id = OPS_TAG << 56 | tm.ops_seq++, .opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, .tm = { .unexpected_cnt = 0 },
	};
	uint32_t seen = 0;
	int posted = 0;

	poll_tm();
	/* with the QPs back in shape, nothing is half-received */
	for (int k = 0; k < MAX_TAGS; k++)
		FZ_CHECK(tm.t[k].state != T_BUSY);
	for (int i = 0; i < tm.ng; i++)
		FZ_CHECK(!tm.gh[i].matched || tm.gh[i].ended);
	if (!tm.dirty && tm.ops_out == 0 && tm.ng == 0 && rtm->sw_cnt == tm.unexp &&
	    __atomic_load_n(&rtm->hw_cnt, __ATOMIC_RELAXED) == tm.unexp)
		return;
	for (int k = 0; k < MAX_TAGS; k++)
		if (tm.t[k].state == T_POSTED)
			FZ_CHECK(tag_del(tm.t[k].handle, 0) == 0);
	sync.tm.unexpected_cnt = tm.unexp;
	FZ_CHECK(post_op(&sync) == 0);
	op_posted(&sync, IBV_WC_TM_SYNC, -1);
	fz_poll();
	poll_tm();
	FZ_CHECK(tm.ops_out == 0);
	/*
	 * Every handle free, each once; back in order, so that tag k gets
	 * handle k and a handle an input names is the same tag's whatever ran
	 * before it.
	 */
	FZ_CHECK(rte_ring_count(rtm->free) == rtm->max_tags && rtm->max_tags == MAX_TAGS);
	for (void *h; rte_ring_dequeue(rtm->free, &h) == 0; ) {
		FZ_CHECK((uintptr_t)h < MAX_TAGS && !(seen & 1u << (uintptr_t)h));
		seen |= 1u << (uintptr_t)h;
	}
	for (uintptr_t h = 0; h < MAX_TAGS; h++)
		FZ_CHECK(rte_ring_enqueue(rtm->free, (void *)h) == 0);
	for (int k = 0; k < NT; k++) {
		uint64_t tag = k < 6 ? 0x100u + k : k == 6 ? 0xab00 : 0;
		uint64_t mask = k < 6 ? ~0ull : k == 6 ? 0xff00 : 0;

		FZ_CHECK(tag_add(k, tag, mask, k, 0, 0) == 0);
		posted++;
	}
	fz_poll();
	poll_tm();
	FZ_CHECK(tm.ops_out == 0);
	/* a DEL that failed lost to the tag's consumption, which has completed */
	for (int i = 0; i < tm.ng; i++)
		FZ_CHECK(!tm.gh[i].failed || tm.gh[i].ended);
	tm.ng = 0;
	/* phase: the SRQ counted exactly the unexpected messages software saw */
	FZ_CHECK(rtm->sw_cnt == tm.unexp && __atomic_load_n(&rtm->hw_cnt, __ATOMIC_RELAXED) == tm.unexp);
	/* no handle lost: all but the posted ones are free */
	FZ_CHECK(rte_ring_count(rtm->free) == rtm->max_tags - (uint32_t)posted);
	tm.dirty = false;
}

/* FIX_HOOK: a TMH (and maybe an RVH) over the payload. */
static void
tmh_hook(uint8_t *pay, uint32_t len, uint8_t sel)
{
	static const uint8_t ops[4] = { IBV_TMH_NO_TAG, IBV_TMH_RNDV, IBV_TMH_FIN, IBV_TMH_EAGER };
	struct ibv_tmh tmh;
	int k = (sel >> 2) & 7;

	if (len < sizeof(tmh))
		return;
	memcpy(&tmh, pay, sizeof(tmh));
	tmh.opcode = ops[sel & 3];
	memset(tmh.reserved, 0, sizeof(tmh.reserved));
	if (tm.t[k].mask != 0)
		tmh.tag = rte_cpu_to_be_64(tm.t[k].tag | (rte_be_to_cpu_64(tmh.tag) & ~tm.t[k].mask));
	memcpy(pay, &tmh, sizeof(tmh));
	if ((sel & 0x20) && len >= sizeof(tmh) + sizeof(struct ibv_rvh)) {
		struct ibv_rvh rvh = {
			.va = rte_cpu_to_be_64(0x20000),
			.rkey = rte_cpu_to_be_32(0x99),
			.len = rte_cpu_to_be_32(tm.tb.len[tm.t[k].buf] >> (sel >> 6)),
		};

		memcpy(pay + sizeof(tmh), &rvh, sizeof(rvh));
	}
}

static void
ctrl(const uint8_t *b, uint32_t n)
{
	uint8_t x[24] = { 0 };
	struct fz_qp *q;
	int k;

	memcpy(x, b, RTE_MIN(n, sizeof(x)));
	poll_tm();	/* the tags as they are now */
	q = fz.qps[x[1] % fz.nqp];
	k = x[1] % MAX_TAGS;
	if (fz_ctrl_qp(q, x[0] % 7, b, n))
		return;
	switch (x[0] % 7) {
	case 3:
		/* any slot, any buffer, the fuzzer's tag and mask */
		tm.dirty = true;
		tag_add(k, fz_le64(x + 3), x[2] & 4 ? fz_le64(x + 11) : ~0ull, x[2] % NT,
			(x[2] & 1 ? IBV_OPS_SIGNALED : 0) | (x[2] & 2 ? IBV_OPS_TM_SYNC : 0),
			(x[2] & 8 ? ADD_NO_SGE : 0) | (x[2] & 16 ? ADD_BAD_LKEY : 0));
		break;
	case 4:
		/* a posted tag's handle, or whatever handle the fuzzer says */
		tm.dirty = true;
		tag_del(tm.t[k].state == T_POSTED ? tm.t[k].handle : x[3],
			x[2] & 1 ? IBV_OPS_SIGNALED : 0);
		break;
	case 5: {
		struct ibv_ops_wr op = {
			.wr_id = OPS_TAG << 56 | tm.ops_seq++, .opcode = IBV_WR_TAG_SYNC,
			.flags = (x[2] & 1 ? IBV_OPS_SIGNALED : 0) | IBV_OPS_TM_SYNC,
			.tm = { .unexpected_cnt = tm.unexp + (int8_t)x[3] },
		};

		tm.dirty = true;
		if (tm.ops_out < NOPS && post_op(&op) == 0)
			op_posted(&op, IBV_WC_TM_SYNC, -1);
		break;
	}
	default: {
		struct fz_mr *m = fz.mrs[x[1] % fz.nmr];

		if (m->mr != NULL && m != fz.send_mr && m != tm.tb.mr)
			fz_mr_rereg(m);
		break;
	}
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = FZ_MAX_RX, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.tm_cap = { .max_num_tags = MAX_TAGS, .max_ops = 64 },
	};

	RTE_SET_USED(argc);
	fz_setup((*argv)[0]);
	fz.hooks.ctrl = ctrl;
	fz.hooks.payload = tmh_hook;
	fz.hooks.poll_extra = poll_tm;
	fz.hooks.restore_extra = tm_restore;
	tm.cq = ibv_create_cq_ex(fz.ctx, &ca);
	FZ_CHECK(tm.cq != NULL);
	sa.pd = fz.pd;
	sa.cq = ibv_cq_ex_to_cq(tm.cq);
	tm.srq = ibv_create_srq_ex(fz.ctx, &sa);
	FZ_CHECK(tm.srq != NULL);
	tm.rsrq = to_roce_srq(to_dsrq(tm.srq)->fp);
	fz_rbuf_init(&tm.tb, NT, tag_lens);
	for (int k = 0; k < NT; k++)
		tm.tb.nsge[k] = 1;
	fz_mr_add("rw", 64 << 10, IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE, PROT_READ | PROT_WRITE,
		  fz.pd, 0);
	fz_mr_add("ro", 16 << 10, IBV_ACCESS_REMOTE_READ, PROT_READ, fz.pd, 0);
	fz_mr_add("none", 16 << 10, 0, PROT_NONE, fz.pd, 0);
	tm.fsrq = fz_srq_add(FZ_MAX_RX, tm.srq);
	/* rendezvous READs start an empty window; the other QP's is full of WRs */
	fz_qp_add("tm_rc", IBV_QPT_RC, IBV_QPS_RTS, ALL_REMOTE, tm.fsrq, false, 256);
	fz_qp_add("tm_rc_req", IBV_QPT_RC, IBV_QPS_RTS, ALL_REMOTE, tm.fsrq, true, 256);
	fz_mr_target(fz.send_mr);
	fz_mr_target(tm.tb.mr);
	tm.dirty = true;
	tm_restore();
	fz_ready();
	return 0;
}
