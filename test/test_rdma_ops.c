/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA READ, atomics, ATOMIC WRITE, max_rd_atomic, FENCE and remote access
 * checks over RC, between droce0 and droce1 (harness.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "droce_test.h"
#include "harness.h"

static struct h_side a, b;
static const struct h_qp_opts rc = { .type = IBV_QPT_RC, .max_send_wr = 128, .cqe = 512 };

static int
setup(void)
{
	return h_pair(&a, &b, &rc);
}

static void
teardown(void)
{
	h_pair_destroy(&a, &b);
}

static int
post_rdma(struct h_side *s, enum ibv_wr_opcode op, size_t off, uint32_t len,
	  uint64_t raddr, uint32_t rkey, uint64_t id, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = flags | IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int
post_atomic(struct h_side *s, enum ibv_wr_opcode op, size_t off, uint64_t raddr,
	    uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, 8, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int
test_read_sizes_bytes_identical(void)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4096, 65537, 512 * 1024 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ibv_wc wc;

		for (uint32_t k = 0; k < sizes[i]; k++)
			b.buf[k] = (uint8_t)(k * 7 + i);
		memset(a.buf, 0xee, sizes[i] + 16);
		TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_RDMA_READ, 0, sizes[i], (uintptr_t)b.buf,
					 b.mr->rkey, i, 0), 0);
		TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 5000), 1);
		TEST_ASSERT(wc.status == IBV_WC_SUCCESS, "size %u: %s", sizes[i], ibv_wc_status_str(wc.status));
		TEST_ASSERT_EQ(wc.opcode, IBV_WC_RDMA_READ);
		TEST_ASSERT_EQ(wc.wr_id, i);
		TEST_ASSERT_EQ(wc.byte_len, sizes[i]);
		TEST_ASSERT(memcmp(a.buf, b.buf, sizes[i]) == 0, "size %u differs", sizes[i]);
		TEST_ASSERT(a.buf[sizes[i]] == 0xee, "wrote past the end at size %u", sizes[i]);
	}
	return TEST_SUCCESS;
}

static int atomics_on(uint64_t *remote, uint32_t rkey);

static int
test_atomics_return_original_and_apply_once(void)
{
	uint64_t *remote = (uint64_t *)(b.buf + 4096);
	struct ibv_mr *amr = ibv_reg_mr(b.pd, b.buf, b.buf_len,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	int ret;

	TEST_ASSERT(amr != NULL, "atomic MR");
	ret = atomics_on(remote, amr->rkey);
	ibv_dereg_mr(amr);
	return ret;
}

static int
atomics_on(uint64_t *remote, uint32_t rkey)
{
	struct ibv_wc wc;
	uint64_t v;

	*remote = 40;
	TEST_ASSERT_EQ(post_atomic(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, (uintptr_t)remote,
				   rkey, 2, 0, 1), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_FETCH_ADD);
	memcpy(&v, a.buf, 8);
	TEST_ASSERT_EQ(v, 40);
	TEST_ASSERT_EQ(*remote, 42);
	/* compare fails: no swap, original returned */
	TEST_ASSERT_EQ(post_atomic(&a, IBV_WR_ATOMIC_CMP_AND_SWP, 8, (uintptr_t)remote,
				   rkey, 7, 99, 2), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_COMP_SWAP);
	memcpy(&v, a.buf + 8, 8);
	TEST_ASSERT_EQ(v, 42);
	TEST_ASSERT_EQ(*remote, 42);
	/* compare matches: swapped */
	TEST_ASSERT_EQ(post_atomic(&a, IBV_WR_ATOMIC_CMP_AND_SWP, 16, (uintptr_t)remote,
				   rkey, 42, 99, 3), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(*remote, 99);
	return TEST_SUCCESS;
}

static int
test_atomic_misaligned_or_wrong_length_rejected_at_post(void)
{
	struct ibv_sge sge = { (uintptr_t)a.buf, 4, a.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD }, *bad = NULL;

	wr.wr.atomic.remote_addr = (uintptr_t)b.buf;
	wr.wr.atomic.rkey = b.mr->rkey;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	sge.length = 8;
	wr.wr.atomic.remote_addr = (uintptr_t)b.buf + 4;
	bad = NULL;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	return TEST_SUCCESS;
}

/* max_rd_atomic is 1 in the harness: 32 READs queue up, none is dropped. */
static int
test_reads_beyond_max_rd_atomic_wait_not_dropped(void)
{
	struct ibv_wc wc[32];
	int got;

	for (int i = 0; i < 32; i++) {
		b.buf[i * 2048] = (uint8_t)(i + 1);
		TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_RDMA_READ, i * 2048, 2048,
					 (uintptr_t)b.buf + i * 2048, b.mr->rkey, i, 0), 0);
	}
	got = h_poll(a.scq, wc, 32, 5000);
	TEST_ASSERT_EQ(got, 32);
	for (int i = 0; i < 32; i++) {
		TEST_ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
		TEST_ASSERT_EQ(wc[i].wr_id, i);
		TEST_ASSERT_EQ(a.buf[i * 2048], i + 1);
	}
	return TEST_SUCCESS;
}

/* A FENCEd WRITE waits for the READ before it: the READ sees the old bytes. */
static int
test_fence_write_waits_for_earlier_read(void)
{
	struct ibv_wc wc[2];

	memset(b.buf, 'o', 4096);
	memset(a.buf + 8192, 'n', 4096);
	TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_RDMA_READ, 0, 4096, (uintptr_t)b.buf, b.mr->rkey, 1, 0), 0);
	TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_RDMA_WRITE, 8192, 4096, (uintptr_t)b.buf, b.mr->rkey, 2,
				 IBV_SEND_FENCE), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, wc, 2, 5000), 2);
	TEST_ASSERT_EQ(wc[0].wr_id, 1);
	TEST_ASSERT_EQ(wc[1].wr_id, 2);
	TEST_ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc[1].status, IBV_WC_SUCCESS);
	TEST_ASSERT(a.buf[0] == 'o' && a.buf[4095] == 'o', "READ saw the fenced WRITE's bytes");
	TEST_ASSERT(b.buf[0] == 'n', "WRITE did not land");
	return TEST_SUCCESS;
}

/* Remote access violations: REM_ACCESS_ERR, both QPs to ERR, guard bytes untouched. */
static int
remote_violation(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;
	int ret;

	memset(b.buf, 0x5a, b.buf_len);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		ret = post_atomic(&a, op, 0, raddr, rkey, 1, 0, 77);
	else
		ret = post_rdma(&a, op, 0, op == IBV_WR_ATOMIC_WRITE ? 8 : 64, raddr, rkey, 77, 0);
	TEST_ASSERT_EQ(ret, 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 5000), 1);
	TEST_ASSERT_EQ(wc.wr_id, 77);
	TEST_ASSERT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	TEST_ASSERT_EQ(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &ia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_ERR);
	TEST_ASSERT_EQ(ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &ia), 0);
	TEST_ASSERT_EQ(qa.qp_state, IBV_QPS_ERR);
	for (size_t i = 0; i < b.buf_len; i++)
		TEST_ASSERT(b.buf[i] == 0x5a, "byte %zu of the remote buffer changed", i);
	return TEST_SUCCESS;
}

static int
test_bad_rkey_gives_rem_access_err(void)
{
	return remote_violation(IBV_WR_RDMA_WRITE, (uintptr_t)b.buf, b.mr->rkey ^ 0x100);
}

static int
test_write_out_of_bounds_gives_rem_access_err(void)
{
	return remote_violation(IBV_WR_RDMA_WRITE, (uintptr_t)b.buf + b.buf_len - 32, b.mr->rkey);
}

static int
test_read_out_of_bounds_gives_rem_access_err(void)
{
	return remote_violation(IBV_WR_RDMA_READ, (uintptr_t)b.buf - 8, b.mr->rkey);
}

static int
test_atomic_without_remote_atomic_access_gives_rem_access_err(void)
{
	/* the harness MR has no IBV_ACCESS_REMOTE_ATOMIC */
	return remote_violation(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)b.buf, b.mr->rkey);
}

static int
test_rkey_of_another_pd_gives_rem_access_err(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	struct ibv_mr *mr2 = ibv_reg_mr(pd2, b.buf, b.buf_len,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	int ret;

	TEST_ASSERT(pd2 && mr2, "pd/mr");
	ret = remote_violation(IBV_WR_RDMA_WRITE, (uintptr_t)b.buf, mr2->rkey);
	ibv_dereg_mr(mr2);
	ibv_dealloc_pd(pd2);
	return ret;
}

/*
 * ATOMIC WRITE (rdma-core v44's IBV_WR_ATOMIC_WRITE, IBA 1.5): 8 bytes from
 * an SGE, then inline (whatever max_inline_data), then through
 * ibv_wr_atomic_write on an extended QP, each stored whole at the remote
 * address; the completion is IBV_WC_ATOMIC_WRITE.
 */
static int
test_atomic_write_stores_8_bytes(void)
{
	const struct h_qp_opts xo = { .type = IBV_QPT_RC, .send_ops_flags =
				      IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_SEND };
	uint64_t v = 0x1122334455667788ull, got;
	struct h_side c = { 0 }, d = { 0 };
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;

	memcpy(a.buf, &v, 8);
	memset(b.buf, 0, 64);
	TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_ATOMIC_WRITE, 0, 8, (uintptr_t)b.buf + 16, b.mr->rkey,
				 5, 0), 0);
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	TEST_ASSERT_EQ(wc.opcode, IBV_WC_ATOMIC_WRITE);
	TEST_ASSERT_EQ(wc.wr_id, 5);
	memcpy(&got, b.buf + 16, 8);
	TEST_ASSERT_EQ(got, v);
	TEST_ASSERT(b.buf[15] == 0 && b.buf[24] == 0, "bytes around the word changed");
	/* inline: the harness QP has no inline room, an ATOMIC WRITE's 8 bytes fit all the same */
	v = ~v;
	memcpy(a.buf, &v, 8);
	TEST_ASSERT_EQ(post_rdma(&a, IBV_WR_ATOMIC_WRITE, 0, 8, (uintptr_t)b.buf + 16, b.mr->rkey,
				 6, IBV_SEND_INLINE), 0);
	memset(a.buf, 0, 8);	/* the buffer is ours again at once */
	TEST_ASSERT_EQ(h_poll(a.scq, &wc, 1, 2000), 1);
	TEST_ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	memcpy(&got, b.buf + 16, 8);
	TEST_ASSERT_EQ(got, v);
	/* ibv_wr_atomic_write */
	CHECK(h_pair(&c, &d, &xo));
	qx = ibv_qp_to_qp_ex(c.qp);
	TEST_ASSERT(qx != NULL, "ibv_qp_to_qp_ex");
	v = 0x0badc0ffee0ddf00ull;
	ibv_wr_start(qx);
	qx->wr_id = 7;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, d.mr->rkey, (uintptr_t)d.buf + 40, &v);
	TEST_ASSERT_EQ(ibv_wr_complete(qx), 0);
	v = 0;
	TEST_ASSERT_EQ(h_poll(c.scq, &wc, 1, 2000), 1);
	TEST_ASSERT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 7,
		    "wr_atomic_write: %s, opcode %d", ibv_wc_status_str(wc.status), wc.opcode);
	memcpy(&got, d.buf + 40, 8);
	TEST_ASSERT_EQ(got, 0x0badc0ffee0ddf00ull);
	h_pair_destroy(&c, &d);
	return TEST_SUCCESS;
}

/* Not 8 bytes, or not 8-aligned: EINVAL at post, *bad_wr the WR; UC has no ATOMIC WRITE. */
static int
test_atomic_write_misaligned_wrong_length_or_uc_einval(void)
{
	const struct h_qp_opts uo = { .type = IBV_QPT_UC };
	struct ibv_sge sge = { (uintptr_t)a.buf, 4, a.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_WRITE },
		*bad = NULL;
	struct h_side c = { 0 }, d = { 0 };

	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	sge.length = 16;
	bad = NULL;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	sge.length = 8;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + 4;
	bad = NULL;
	TEST_ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	CHECK(h_pair(&c, &d, &uo));
	sge = (struct ibv_sge){ (uintptr_t)c.buf, 8, c.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)d.buf;
	wr.wr.rdma.rkey = d.mr->rkey;
	bad = NULL;
	TEST_ASSERT_EQ(ibv_post_send(c.qp, &wr, &bad), EINVAL);
	TEST_ASSERT_PTR_EQ(bad, &wr);
	h_pair_destroy(&c, &d);
	return TEST_SUCCESS;
}

/* An MR with remote atomic but no remote write access: ATOMIC WRITE is REM_ACCESS_ERR. */
static int
test_atomic_write_needs_remote_write_access(void)
{
	struct ibv_mr *amr = ibv_reg_mr(b.pd, b.buf, b.buf_len,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	int ret;

	TEST_ASSERT(amr != NULL, "atomic MR");
	ret = remote_violation(IBV_WR_ATOMIC_WRITE, (uintptr_t)b.buf + 8, amr->rkey);
	ibv_dereg_mr(amr);
	return ret;
}

/* Two QPs from two contexts hammer one counter with FETCH_ADD: the sum is exact. */
static int
test_two_qps_fetch_add_one_counter_exact(void)
{
	struct h_qp_opts o = rc;
	struct h_side c, d;
	struct ibv_mr *amr;
	uint64_t *counter = (uint64_t *)(b.buf + 65536);
	const int n = 3000;
	int done[2] = { 0 }, posted[2] = { 0 };
	struct h_side *src[2] = { &a, &c };
	struct ibv_context *cc = h_open(0);
	struct ibv_wc wc[16];

	/* d shares b's PD, so the counter's rkey is valid on both responder QPs */
	o.pd = b.pd;
	TEST_ASSERT_EQ(h_side_create(&d, b.ctx, &o), 0);
	o.pd = NULL;
	TEST_ASSERT_EQ(h_side_create(&c, cc, &o), 0);
	TEST_ASSERT_EQ(h_connect(&c, &d, &o), 0);
	TEST_ASSERT_EQ(h_connect(&d, &c, &o), 0);
	amr = ibv_reg_mr(b.pd, b.buf, b.buf_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	TEST_ASSERT(amr != NULL, "atomic MR");
	*counter = 0;
	while (done[0] < n || done[1] < n) {
		for (int q = 0; q < 2; q++) {
			while (posted[q] < n && posted[q] - done[q] < 8) {
				TEST_ASSERT_EQ(post_atomic(src[q], IBV_WR_ATOMIC_FETCH_AND_ADD,
							   (posted[q] % 8) * 8, (uintptr_t)counter,
							   amr->rkey, q ? 3 : 1, 0, posted[q]), 0);
				posted[q]++;
			}
			int k = ibv_poll_cq(src[q]->scq, 16, wc);

			for (int i = 0; i < k; i++)
				TEST_ASSERT(wc[i].status == IBV_WC_SUCCESS, "qp %d: %s", q,
					    ibv_wc_status_str(wc[i].status));
			done[q] += k;
		}
	}
	TEST_ASSERT_EQ(*counter, (uint64_t)n * 1 + (uint64_t)n * 3);
	ibv_dereg_mr(amr);
	h_side_destroy(&c);
	h_side_destroy(&d);
	ibv_close_device(cc);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_two_qps_fetch_add_one_counter_exact),
	TEST_CASE(test_read_sizes_bytes_identical),
	TEST_CASE(test_atomics_return_original_and_apply_once),
	TEST_CASE(test_atomic_misaligned_or_wrong_length_rejected_at_post),
	TEST_CASE(test_reads_beyond_max_rd_atomic_wait_not_dropped),
	TEST_CASE(test_fence_write_waits_for_earlier_read),
	TEST_CASE(test_bad_rkey_gives_rem_access_err),
	TEST_CASE(test_write_out_of_bounds_gives_rem_access_err),
	TEST_CASE(test_read_out_of_bounds_gives_rem_access_err),
	TEST_CASE(test_atomic_without_remote_atomic_access_gives_rem_access_err),
	TEST_CASE(test_rkey_of_another_pd_gives_rem_access_err),
	TEST_CASE(test_atomic_write_stores_8_bytes),
	TEST_CASE(test_atomic_write_misaligned_wrong_length_or_uc_einval),
	TEST_CASE(test_atomic_write_needs_remote_write_access),
};

int
main(int argc, char **argv)
{
	return H_TEST_MAIN(argc, argv, "rdma_ops", cases, setup, teardown);
}
