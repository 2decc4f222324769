/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC under a lossy wire: both directions pass through net_impair (drop,
 * duplication, reordering, corruption; see meson.build for the rates). A
 * stream of mixed opcodes (SEND, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM,
 * RDMA_READ, ATOMIC_FETCH_AND_ADD) with sizes from 1 B to 1 MiB must arrive
 * exactly once, in order, byte-identical, every atomic must apply exactly once
 * (duplicated requests are answered from the replay cache), and every WR must
 * complete successfully.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include "droce_test.h"
#include "harness.h"

#define DEPTH	16
#define SLOT	(1u << 20)	/* one message slot: up to 1 MiB */

static unsigned int nmsgs = 40000, atomics_done;
static struct h_side a, b;

/* Message k: opcode and size (mostly small, some up to 1 MiB). */
static void
msg_shape(unsigned int k, enum ibv_wr_opcode *op, uint32_t *len)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	uint64_t r = h_mix64(k);
	unsigned int bits = (k % 997 == 0) ? 20 : (unsigned int)(r % 14);

	*op = ops[(r >> 8) % 5];
	*len = 1 + (uint32_t)((r >> 16) % (1u << bits));
	if (k % 997 == 0)
		*len = SLOT;
	if (*op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		*len = 8;
}

/* READs and atomics consume no receive WQE at the responder. */
static bool
one_sided(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void
fill(uint8_t *p, uint32_t len, unsigned int k)
{
	uint64_t s = h_mix64(k * 31 + 7);

	for (uint32_t i = 0; i < len; i++) {
		if ((i & 7) == 0)
			s = h_mix64(s);
		p[i] = (uint8_t)(s >> ((i & 7) * 8));
	}
}

static int
check(const uint8_t *p, uint32_t len, unsigned int k)
{
	uint64_t s = h_mix64(k * 31 + 7);

	for (uint32_t i = 0; i < len; i++) {
		if ((i & 7) == 0)
			s = h_mix64(s);
		if (p[i] != (uint8_t)(s >> ((i & 7) * 8)))
			return -1;
	}
	return 0;
}

static int
post(unsigned int k)
{
	enum ibv_wr_opcode op;
	uint32_t len;
	size_t slot = (size_t)(k % DEPTH) * SLOT;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_sge rsge = { (uintptr_t)b.buf + slot, SLOT, b.mr->lkey };

	msg_shape(k, &op, &len);
	if (op == IBV_WR_RDMA_READ) {
		fill(b.buf + slot, len, k);	/* the responder's memory is the source */
	} else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* nothing to prepare: the counter lives past the slots */
	} else {
		fill(a.buf + slot, len, k);
		rwr.wr_id = k;
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		if (ibv_post_recv(b.qp, &rwr, &rbad))
			return -1;
	}
	sge.addr = (uintptr_t)a.buf + slot;
	sge.length = len;
	sge.lkey = a.mr->lkey;
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(k);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)b.buf + (size_t)DEPTH * SLOT;
		wr.wr.atomic.rkey = b.mr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)b.buf + slot;
		wr.wr.rdma.rkey = b.mr->rkey;
	}
	return ibv_post_send(a.qp, &wr, &bad);
}

static int
test_mixed_stream_exactly_once_in_order_under_loss(void)
{
	static const struct h_qp_opts o = { .type = IBV_QPT_RC, .max_send_wr = DEPTH,
		.max_recv_wr = DEPTH, .cqe = 4 * DEPTH, .buf_len = (size_t)DEPTH * SLOT + 4096,
		.mr_access = IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 12 /* 17 ms: under loss and a busy CPU, 4 ms x 8 was too short */ };
	unsigned int posted = 0, sent_done = 0, recv_next = 0, read_next = 0;
	struct ibv_wc wc[DEPTH];

	TEST_ASSERT_EQ(h_pair(&a, &b, &o), 0);
	while (sent_done < nmsgs) {
		/* a slot is reused only once both sides have checked its message */
		while (posted < nmsgs && posted - sent_done < DEPTH && posted - recv_next < DEPTH &&
		       posted - read_next < DEPTH)
			TEST_ASSERT_EQ(post(posted++), 0);
		int n = h_poll(a.scq, wc, 1, 30000);

		TEST_ASSERT(n == 1, "no send completion after 30 s (%u done)", sent_done);
		TEST_ASSERT(wc[0].status == IBV_WC_SUCCESS, "WR %" PRIu64 ": %s", wc[0].wr_id,
			    ibv_wc_status_str(wc[0].status));
		TEST_ASSERT_EQ(wc[0].wr_id, sent_done);
		{
			enum ibv_wr_opcode op;
			uint32_t len;

			msg_shape(sent_done, &op, &len);
			if (op == IBV_WR_RDMA_READ) {
				TEST_ASSERT_EQ(wc[0].byte_len, len);
				TEST_ASSERT(check(a.buf + (size_t)(sent_done % DEPTH) * SLOT, len,
						  sent_done) == 0, "READ %u corrupt", sent_done);
			} else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
				uint64_t orig;

				memcpy(&orig, a.buf + (size_t)(sent_done % DEPTH) * SLOT, 8);
				/* applied exactly once each, in order */
				TEST_ASSERT_EQ(orig, atomics_done);
				atomics_done++;
			}
		}
		sent_done++;
		/* receives complete in order, for every message that is not a READ */
		for (;;) {
			enum ibv_wr_opcode op;
			uint32_t len;

			while (read_next < posted) {
				msg_shape(read_next, &op, &len);
				if (!one_sided(op) || read_next >= sent_done)
					break;
				read_next++;
			}
			if (recv_next >= posted)
				break;
			msg_shape(recv_next, &op, &len);
			if (one_sided(op)) {
				if (recv_next >= sent_done)
					break;
				recv_next++;
				continue;
			}
			if (ibv_poll_cq(b.rcq, 1, wc) != 1)
				break;
			TEST_ASSERT(wc[0].status == IBV_WC_SUCCESS, "recv %u: %s", recv_next,
				    ibv_wc_status_str(wc[0].status));
			TEST_ASSERT_EQ(wc[0].wr_id, recv_next);
			TEST_ASSERT_EQ(wc[0].byte_len, len);
			if (op != IBV_WR_SEND)
				TEST_ASSERT_EQ(ntohl(wc[0].imm_data), recv_next);
			TEST_ASSERT(check(b.buf + (size_t)(recv_next % DEPTH) * SLOT, len, recv_next) == 0,
				    "message %u corrupt", recv_next);
			recv_next++;
			if (read_next < recv_next)
				read_next = recv_next;
		}
	}
	/* drain the last receives */
	while (recv_next < nmsgs) {
		enum ibv_wr_opcode op;
		uint32_t len;

		msg_shape(recv_next, &op, &len);
		if (!one_sided(op)) {
			TEST_ASSERT_EQ(h_poll(b.rcq, wc, 1, 30000), 1);
			TEST_ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
			TEST_ASSERT_EQ(wc[0].wr_id, recv_next);
			TEST_ASSERT(check(b.buf + (size_t)(recv_next % DEPTH) * SLOT, len, recv_next) == 0,
				    "message %u corrupt", recv_next);
		}
		recv_next++;
	}
	TEST_ASSERT_EQ(ibv_poll_cq(b.rcq, DEPTH, wc), 0);	/* nothing twice */
	{
		uint64_t counter;

		memcpy(&counter, b.buf + (size_t)DEPTH * SLOT, 8);
		TEST_ASSERT_EQ(counter, atomics_done);
		printf("# %u messages, %u atomics applied once each\n", nmsgs, atomics_done);
	}
	{
		const char *names[64];
		uint64_t v[64];
		int n = droce_dev_xstats("droce0", names, v, 64);

		printf("# droce0:");
		for (int i = 0; i < n && i < 64; i++)
			if (v[i])
				printf(" %s=%" PRIu64, names[i], v[i]);
		printf("\n");
	}
	h_pair_destroy(&a, &b);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_mixed_stream_exactly_once_in_order_under_loss),
};

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--msgs=", 7) == 0)
			nmsgs = strtoul(argv[i] + 7, NULL, 0);
	return H_TEST_MAIN(argc, argv, "stress", cases, NULL, NULL);
}
