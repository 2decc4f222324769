/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM MAD codec (lib/rdmacm/cm_mad.c): every message type through a round
 * trip, MADs built by hand byte by byte from IBA 12.6 and Linux's
 * ibta_vol1_c12.h, the reserved bits of every layout, each malformed input
 * with its errno, the encoder's limits, and rdma_cm's IP header and service
 * IDs. No EAL: the codec is a pure library.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "cm_mad.h"
#include "cm_samples.h"
#include "droce_test.h"

#define MAD_LEN		DROCE_CM_MAD_LEN
#define HDR		DROCE_CM_MAD_HDR_LEN

/* A kernel rdma_cm REQ over RoCE (ib_cm's cm_format_req, cma.c's cma_format_hdr), byte by byte */
static const uint8_t req_kat[MAD_LEN] = {
	/* common MAD header: version 1, class CM, class version 2, Send */
	0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,	/* TID */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* REQ, reserved, modifier */
	/* 0: local comm ID, reserved */
	0x1a, 0x2b, 0x3c, 0x4d, 0x00, 0x00, 0x00, 0x00,
	/* 8: service ID: rdma_cm prefix, TCP, port 20000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x4e, 0x20,
	/* 16: local CA GUID */
	0x02, 0x02, 0xc9, 0xff, 0xfe, 0x00, 0x00, 0x01,
	/* 24: reserved; 28: local Q_Key */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 32: local QPN 0x11, responder resources 1; 36: local EECN 0, initiator depth 1 */
	0x00, 0x00, 0x11, 0x01, 0x00, 0x00, 0x00, 0x01,
	/* 40: remote EECN 0; remote CM response timeout 20 (10100), RC (00), flow control (1) */
	0x00, 0x00, 0x00, 0xa1,
	/* 44: starting PSN 0xabcd; local CM response timeout 20 (10100), retry count 7 (111) */
	0x00, 0xab, 0xcd, 0xa7,
	/* 48: P_Key; MTU 1024 (0011), no RDC (0), RNR retry 7 (111); max CM retries 15, no SRQ, no XRC */
	0xff, 0xff, 0x37, 0xf0,
	/* 52: primary path: permissive LIDs */
	0xff, 0xff, 0xff, 0xff,
	/* 56: local GID ::ffff:10.0.0.1; 72: remote GID ::ffff:10.0.0.2 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2,
	/* 88: flow label 0x12345 (20 bits), reserved (6), packet rate 7 (6) */
	0x12, 0x34, 0x50, 0x07,
	/* 92: traffic class, hop limit; SL 5 (0101), not subnet local; local ACK timeout 19 (10011) */
	0x68, 0x40, 0x50, 0x98,
	/* 96-139: no alternate path; 140: private data: IP CM header v0.0, IPv4, source port */
	[HDR + 140] = 0x00, 0x40, 0x9c, 0x41,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	/* 176: the consumer's private data */
	'd', 'r', 'o', 'c', 'e',
};

/* The message req_kat encodes. */
static const struct droce_cm_msg req_kat_msg = {
	.hdr = { .tid = 0x000000011a2b3c4dull, .attr_id = DROCE_CM_ATTR_REQ },
	.req = {
		.local_comm_id = 0x1a2b3c4d,
		.service_id = 0x0000000001064e20ull,
		.local_ca_guid = 0x0202c9fffe000001ull,
		.local_qpn = 0x11, .responder_resources = 1, .initiator_depth = 1,
		.remote_cm_response_timeout = 20, .transport_service_type = DROCE_CM_TRANSPORT_RC,
		.end_to_end_flow_control = 1, .starting_psn = 0xabcd,
		.local_cm_response_timeout = 20, .retry_count = 7, .pkey = 0xffff, .path_mtu = 3,
		.rnr_retry_count = 7, .max_cm_retries = 15,
		.primary = {
			.local_lid = 0xffff, .remote_lid = 0xffff,
			.local_gid = { [10] = 0xff, 0xff, 10, 0, 0, 1 },
			.remote_gid = { [10] = 0xff, 0xff, 10, 0, 0, 2 },
			.flow_label = 0x12345, .packet_rate = 7, .traffic_class = 0x68,
			.hop_limit = 0x40, .sl = 5, .local_ack_timeout = 19,
		},
		.private_data = { 0x00, 0x40, 0x9c, 0x41, [16] = 10, 0, 0, 1, [32] = 10, 0, 0, 2,
				  'd', 'r', 'o', 'c', 'e' },
		.private_data_len = DROCE_CM_IP_HDR_LEN + 5,
	},
};

/* REP (table 110) byte by byte, after the header */
static const uint8_t rep_kat[MAD_LEN - HDR] = {
	/* 0: local comm ID; 4: remote comm ID; 8: local Q_Key */
	0xaa, 0xbb, 0xcc, 0xdd, 0x1a, 0x2b, 0x3c, 0x4d, 0x00, 0x00, 0x00, 0x00,
	/* 12: local QPN, reserved; 16: local EECN, reserved; 20: starting PSN, reserved */
	0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xbe, 0xef, 0x00,
	/* 24: responder resources 4, initiator depth 2; target ACK delay 15 (01111),
	 * failover accepted 1 (01), flow control (1); RNR retry 6 (110), SRQ (1), reserved */
	0x04, 0x02, 0x7b, 0xd0,
	/* 28: local CA GUID; 36: private data */
	0x02, 0x02, 0xc9, 0xff, 0xfe, 0x00, 0x00, 0x02,
	0xca, 0xfe,
};

static const struct droce_cm_msg rep_kat_msg = {
	.hdr = { .tid = 0x000000011a2b3c4dull, .attr_id = DROCE_CM_ATTR_REP },
	.rep = {
		.local_comm_id = 0xaabbccdd, .remote_comm_id = 0x1a2b3c4d, .local_qpn = 0x12,
		.starting_psn = 0xbeef, .responder_resources = 4, .initiator_depth = 2,
		.target_ack_delay = 15, .failover_accepted = 1, .end_to_end_flow_control = 1,
		.rnr_retry_count = 6, .srq = 1, .local_ca_guid = 0x0202c9fffe000002ull,
		.private_data = { 0xca, 0xfe }, .private_data_len = 2,
	},
};

/*
 * SIDR_REP (table 120) byte by byte, after the header: its 64-bit service ID
 * sits at a 4-byte boundary
 */
static const uint8_t sidr_rep_kat[MAD_LEN - HDR] = {
	/* 0: request ID; 4: status (no QP), info length 3, reserved; 8: QPN, reserved */
	0x01, 0x02, 0x03, 0x04, 0x03, 0x03, 0x00, 0x00, 0x00, 0x0a, 0xbc, 0x00,
	/* 12: service ID: rdma_cm, UDP, port 12345; 20: Q_Key; 24: additional information */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x30, 0x39, 0x01, 0x23, 0x45, 0x67,
	0xe1, 0xe2, 0xe3,
	/* 96: private data */
	[96] = 0x99,
};

static const struct droce_cm_msg sidr_rep_kat_msg = {
	.hdr = { .tid = 7, .attr_id = DROCE_CM_ATTR_SIDR_REP },
	.sidr_rep = {
		.request_id = 0x01020304, .status = DROCE_CM_SIDR_NO_QP, .info_len = 3,
		.qpn = 0xabc, .service_id = 0x0000000001113039ull, .qkey = 0x01234567,
		.info = { 0xe1, 0xe2, 0xe3 }, .private_data = { 0x99 }, .private_data_len = 1,
	},
};

/* What every encoded header says; then cleared, as in a message to encode. */
static int
fixed_hdr(struct droce_cm_mad_hdr *h)
{
	TEST_ASSERT_EQ(h->base_version, 1);
	TEST_ASSERT_EQ(h->mgmt_class, 0x07);
	TEST_ASSERT_EQ(h->class_version, 2);
	TEST_ASSERT_EQ(h->method, 0x03);
	TEST_ASSERT_EQ(h->status, 0);
	TEST_ASSERT_EQ(h->class_specific, 0);
	h->base_version = h->mgmt_class = h->class_version = h->method = 0;
	return TEST_SUCCESS;
}

/* @want encodes to @kat, the MAD's bytes from byte @from on, and they decode to @want. */
static int
check_kat(const struct droce_cm_msg *want, const uint8_t *kat, int from)
{
	static struct droce_cm_msg m, d;
	uint8_t mad[MAD_LEN];
	uint32_t *len, *dlen, max;

	m = *want;
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), MAD_LEN);
	for (int i = from; i < MAD_LEN; i++)
		TEST_ASSERT(mad[i] == kat[i - from], "byte %d (attribute byte %d): 0x%02x, want 0x%02x",
			    i, i - HDR, mad[i], kat[i - from]);
	memcpy(mad + from, kat, MAD_LEN - from);
	TEST_ASSERT_EQ(droce_cm_mad_decode(mad, MAD_LEN, &d), 0);
	CHECK(fixed_hdr(&d.hdr));
	/* decoding gives the whole private data field: compare with that */
	TEST_ASSERT(cm_pdata(&m, &len, &max) && cm_pdata(&d, &dlen, &max), "private data");
	TEST_ASSERT_EQ(*dlen, max);
	*dlen = *len;
	TEST_ASSERT(memcmp(&m, &d, sizeof(m)) == 0, "the hand-built MAD decodes to another message");
	return TEST_SUCCESS;
}

static int
test_req_encodes_to_hand_built_bytes(void)
{
	struct droce_cm_msg d;
	struct droce_cm_ip_hdr ip;

	CHECK(check_kat(&req_kat_msg, req_kat, 0));
	TEST_ASSERT_EQ(droce_cm_mad_decode(req_kat, MAD_LEN, &d), 0);
	TEST_ASSERT_EQ(d.req.private_data_len, DROCE_CM_REQ_PDATA_LEN);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(d.req.private_data, d.req.private_data_len, &ip), 0);
	TEST_ASSERT_EQ(ip.ip_version, 4);
	TEST_ASSERT_EQ(ip.src_port, 0x9c41);
	TEST_ASSERT(memcmp(ip.dst_addr + 12, "\x0a\x00\x00\x02", 4) == 0, "destination address");
	TEST_ASSERT(memcmp(d.req.private_data + DROCE_CM_IP_HDR_LEN, "droce", 5) == 0, "user data");
	return TEST_SUCCESS;
}

static int
test_rep_encodes_to_hand_built_bytes(void)
{
	return check_kat(&rep_kat_msg, rep_kat, HDR);
}

static int
test_sidr_rep_encodes_to_hand_built_bytes(void)
{
	return check_kat(&sidr_rep_kat_msg, sidr_rep_kat, HDR);
}

static int
test_every_message_round_trips(void)
{
	static struct droce_cm_msg m, d;
	uint8_t mad[MAD_LEN], again[MAD_LEN];

	for (int i = 0; i < CM_NB_SAMPLES; i++) {
		const char *name = droce_cm_attr_name(cm_sample_attrs[i]);

		cm_sample(cm_sample_attrs[i], &m);
		TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), MAD_LEN);
		TEST_ASSERT(droce_cm_mad_decode(mad, MAD_LEN, &d) == 0, "%s", name);
		CHECK(fixed_hdr(&d.hdr));
		/* every sample fills its private data, so decode's whole-field length matches */
		TEST_ASSERT(memcmp(&m, &d, sizeof(m)) == 0, "%s comes back different", name);
		TEST_ASSERT_EQ(droce_cm_mad_encode(&d, again, sizeof(again)), MAD_LEN);
		TEST_ASSERT(memcmp(mad, again, MAD_LEN) == 0, "%s re-encodes differently", name);
	}
	return TEST_SUCCESS;
}

/*
 * The bits of each attribute byte that no field uses (IBA 12.6 tables 106 to
 * 113, 12.11 tables 119 and 120); every other bit belongs to a field.
 */
struct rsvd {
	uint16_t attr;
	struct { uint8_t off, used; } b[12];
};

static const struct rsvd rsvd[] = {
	{ DROCE_CM_ATTR_REQ, { { 4, 0 }, { 5, 0 }, { 6, 0 }, { 7, 0 }, { 24, 0 }, { 25, 0 },
			       { 26, 0 }, { 27, 0 }, { 90, 0xf0 }, { 91, 0x3f }, { 94, 0xf8 },
			       { 95, 0xf8 } } },
	/* the alternate path's reserved bits; its byte 139 also holds SAP supported */
	{ DROCE_CM_ATTR_REQ, { { 134, 0xf0 }, { 135, 0x3f }, { 138, 0xf8 }, { 139, 0xfc } } },
	{ DROCE_CM_ATTR_MRA, { { 8, 0xc0 }, { 9, 0xf8 } } },
	{ DROCE_CM_ATTR_REJ, { { 8, 0xc0 }, { 9, 0xfe } } },
	{ DROCE_CM_ATTR_REP, { { 15, 0 }, { 19, 0 }, { 23, 0 }, { 27, 0xf0 } } },
	{ DROCE_CM_ATTR_DREQ, { { 11, 0 } } },
	{ DROCE_CM_ATTR_SIDR_REQ, { { 6, 0 }, { 7, 0 } } },
	{ DROCE_CM_ATTR_SIDR_REP, { { 6, 0 }, { 7, 0 }, { 11, 0 } } },
};

/* The attribute bits some field of @attr uses. */
static void
used_bits(uint16_t attr, uint8_t *used)
{
	memset(used, 0xff, MAD_LEN - HDR);
	for (unsigned int i = 0; i < sizeof(rsvd) / sizeof(rsvd[0]); i++) {
		if (rsvd[i].attr != attr)
			continue;
		for (int j = 0; j < 12 && (rsvd[i].b[j].off || rsvd[i].b[j].used); j++)
			used[rsvd[i].b[j].off] = rsvd[i].b[j].used;
	}
}

/* A valid header for @attr. */
static void
put_hdr(uint8_t *mad, uint16_t attr)
{
	memset(mad, 0, HDR);
	mad[0] = 1;
	mad[1] = 0x07;
	mad[2] = 2;
	mad[3] = 0x03;
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
}

/*
 * Every bit set, reserved ones included (the ARI and information lengths at
 * their 72-byte maximum), decodes to every field at its maximum, as the
 * kernel ignores reserved bits; encoding that gives the bits back and zero
 * in the reserved ones. So the fields tile each layout with no gap and no
 * overlap.
 */
static int
test_reserved_bits_ignored_on_decode_zero_on_encode(void)
{
	static struct droce_cm_msg d;
	uint8_t mad[MAD_LEN], out[MAD_LEN], used[MAD_LEN - HDR];

	for (int i = 0; i < CM_NB_SAMPLES; i++) {
		uint16_t attr = cm_sample_attrs[i];
		const char *name = droce_cm_attr_name(attr);

		memset(mad, 0xff, sizeof(mad));
		put_hdr(mad, attr);
		mad[4] = mad[5] = mad[6] = mad[7] = 0xff;	/* status, class specific */
		mad[18] = mad[19] = 0xff;			/* reserved */
		if (attr == DROCE_CM_ATTR_REJ)
			mad[HDR + 9] = 72 << 1 | 1;
		if (attr == DROCE_CM_ATTR_SIDR_REP)
			mad[HDR + 5] = 72;
		TEST_ASSERT(droce_cm_mad_decode(mad, MAD_LEN, &d) == 0, "%s", name);
		TEST_ASSERT_EQ(d.hdr.status, 0xffff);
		TEST_ASSERT_EQ(d.hdr.class_specific, 0xffff);
		TEST_ASSERT_EQ(droce_cm_mad_encode(&d, out, sizeof(out)), MAD_LEN);
		TEST_ASSERT(memcmp(out, mad, 4) == 0 && memcmp(out + 8, mad + 8, 10) == 0 &&
			    memcmp(out + 20, mad + 20, 4) == 0, "%s: header", name);
		TEST_ASSERT(out[4] == 0 && out[5] == 0 && out[6] == 0 && out[7] == 0 &&
			    out[18] == 0 && out[19] == 0, "%s: status or reserved header bytes", name);
		used_bits(attr, used);
		for (int b = 0; b < MAD_LEN - HDR; b++)
			TEST_ASSERT(out[HDR + b] == (mad[HDR + b] & used[b]),
				    "%s byte %d: 0x%02x, want 0x%02x", name, b, out[HDR + b],
				    mad[HDR + b] & used[b]);
	}
	/* and the maxima are the fields' widths */
	memset(mad, 0xff, sizeof(mad));
	put_hdr(mad, DROCE_CM_ATTR_REQ);
	TEST_ASSERT_EQ(droce_cm_mad_decode(mad, MAD_LEN, &d), 0);
	TEST_ASSERT_EQ(d.req.local_qpn, 0xffffff);
	TEST_ASSERT_EQ(d.req.remote_cm_response_timeout, 0x1f);
	TEST_ASSERT_EQ(d.req.transport_service_type, 3);
	TEST_ASSERT_EQ(d.req.end_to_end_flow_control, 1);
	TEST_ASSERT_EQ(d.req.path_mtu, 0xf);
	TEST_ASSERT_EQ(d.req.extended_transport_type, 7);
	TEST_ASSERT_EQ(d.req.primary.flow_label, 0xfffff);
	TEST_ASSERT_EQ(d.req.primary.packet_rate, 0x3f);
	TEST_ASSERT_EQ(d.req.alternate.local_ack_timeout, 0x1f);
	TEST_ASSERT_EQ(d.req.sap_supported, 1);
	TEST_ASSERT_EQ(d.req.service_id, UINT64_MAX);
	return TEST_SUCCESS;
}

/*
 * Random attribute bytes: a MAD decodes unless its ARI or information length
 * is over 72, and encodes back to its bytes less the reserved bits (and the
 * ARI or information bytes past their length).
 */
static int
test_random_mads_come_back_less_reserved_bits(void)
{
	static struct droce_cm_msg d;
	uint8_t mad[MAD_LEN], out[MAD_LEN], used[MAD_LEN - HDR];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int refused = 0;

	for (int it = 0; it < 2000; it++) {
		uint16_t attr = cm_sample_attrs[it % CM_NB_SAMPLES];
		int rc, want = 0;

		for (int b = 0; b < MAD_LEN; b++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			mad[b] = (uint8_t)(x >> 56);
		}
		put_hdr(mad, attr);
		if ((attr == DROCE_CM_ATTR_REJ && mad[HDR + 9] >> 1 > 72) ||
		    (attr == DROCE_CM_ATTR_SIDR_REP && mad[HDR + 5] > 72))
			want = -EBADMSG;
		rc = droce_cm_mad_decode(mad, MAD_LEN, &d);
		TEST_ASSERT(rc == want, "%s, round %d: %d, want %d", droce_cm_attr_name(attr), it,
			    rc, want);
		if (rc < 0) {
			refused++;
			continue;
		}
		TEST_ASSERT_EQ(droce_cm_mad_encode(&d, out, sizeof(out)), MAD_LEN);
		TEST_ASSERT(memcmp(out, mad, HDR) == 0, "header, round %d", it);
		used_bits(attr, used);
		/* the ARI and information bytes past their length are not sent */
		if (attr == DROCE_CM_ATTR_REJ)
			memset(used + 12 + d.rej.ari_len, 0, DROCE_CM_ARI_LEN - d.rej.ari_len);
		if (attr == DROCE_CM_ATTR_SIDR_REP)
			memset(used + 24 + d.sidr_rep.info_len, 0,
			       DROCE_CM_SIDR_INFO_LEN - d.sidr_rep.info_len);
		for (int b = 0; b < MAD_LEN - HDR; b++)
			TEST_ASSERT(out[HDR + b] == (mad[HDR + b] & used[b]), "%s, round %d, byte %d",
				    droce_cm_attr_name(attr), it, b);
	}
	TEST_ASSERT(refused > 0 && refused < 2000 / CM_NB_SAMPLES * 2, "%d refused", refused);
	return TEST_SUCCESS;
}

static int
decode_rc(const uint8_t *mad, size_t len)
{
	static struct droce_cm_msg d;

	return droce_cm_mad_decode(mad, len, &d);
}

/* Every length short of a MAD, the buffer ending at an inaccessible page: a read past it faults. */
static int
test_short_buffer_is_emsgsize_and_never_overread(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *area, *end, mad[MAD_LEN];
	struct droce_cm_msg m;
	int rc = TEST_SUCCESS;

	cm_sample(DROCE_CM_ATTR_REQ, &m);
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), MAD_LEN);
	area = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(area != MAP_FAILED, "mmap");
	TEST_ASSERT_EQ(mprotect(area + pg, pg, PROT_NONE), 0);
	end = area + pg;
	for (size_t len = 0; len < MAD_LEN && rc == TEST_SUCCESS; len++) {
		memcpy(end - len, mad, len);
		if (decode_rc(end - len, len) != -EMSGSIZE) {
			fprintf(stderr, "  FAIL: %zu bytes: %d\n", len, decode_rc(end - len, len));
			rc = TEST_FAILED;
		}
	}
	memcpy(end - MAD_LEN, mad, MAD_LEN);
	if (rc == TEST_SUCCESS && decode_rc(end - MAD_LEN, MAD_LEN) != 0)
		rc = TEST_FAILED;
	munmap(area, 2 * pg);
	TEST_ASSERT_EQ(rc, TEST_SUCCESS);
	/* a UD payload longer than a MAD is no MAD either */
	TEST_ASSERT_EQ(decode_rc(mad, MAD_LEN + 1), -EMSGSIZE);
	return TEST_SUCCESS;
}

/* A sample MAD of @attr with byte @off set to @v. */
static int
decode_with(uint16_t attr, int off, uint8_t v)
{
	static struct droce_cm_msg m;
	uint8_t mad[MAD_LEN];

	cm_sample(attr, &m);
	if (droce_cm_mad_encode(&m, mad, sizeof(mad)) != MAD_LEN)
		return -1000;
	mad[off] = v;
	return decode_rc(mad, MAD_LEN);
}

static int
test_bad_versions_and_class_are_refused(void)
{
	struct droce_cm_mad_hdr h;
	uint8_t mad[MAD_LEN];

	for (int i = 0; i < CM_NB_SAMPLES; i++) {
		uint16_t a = cm_sample_attrs[i];

		TEST_ASSERT_EQ(decode_with(a, 0, 0), -EPROTONOSUPPORT);
		TEST_ASSERT_EQ(decode_with(a, 0, 2), -EPROTONOSUPPORT);
		TEST_ASSERT_EQ(decode_with(a, 0, 0x80), -EPROTONOSUPPORT);	/* OPA */
		TEST_ASSERT_EQ(decode_with(a, 1, 0x03), -ENOMSG);	/* subnet administration */
		TEST_ASSERT_EQ(decode_with(a, 1, 0x87), -ENOMSG);
		TEST_ASSERT_EQ(decode_with(a, 2, 1), -EPROTONOSUPPORT);
		TEST_ASSERT_EQ(decode_with(a, 2, 3), -EPROTONOSUPPORT);
	}
	/* the base version is checked before the class (mad.c's validate_mad) */
	put_hdr(mad, DROCE_CM_ATTR_REQ);
	mad[0] = 2;
	mad[1] = 0x03;
	TEST_ASSERT_EQ(droce_cm_mad_hdr_decode(mad, MAD_LEN, &h), -EPROTONOSUPPORT);
	TEST_ASSERT_EQ(droce_cm_mad_hdr_decode(mad, MAD_LEN - 1, &h), -EMSGSIZE);
	return TEST_SUCCESS;
}

static int
test_unknown_attribute_is_eopnotsupp(void)
{
	static const uint16_t other[] = { 0x0000, 0x000f, 0x0019 /* LAP */, 0x001a /* APR */,
					  0x001b, 0xff10 };
	struct droce_cm_mad_hdr h;
	uint8_t mad[MAD_LEN] = { 0 };

	for (unsigned int i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		put_hdr(mad, other[i]);
		TEST_ASSERT_EQ(decode_rc(mad, MAD_LEN), -EOPNOTSUPP);
		TEST_ASSERT_PTR_EQ(droce_cm_attr_name(other[i]), NULL);
		/* the header alone decodes: the caller may answer it */
		TEST_ASSERT_EQ(droce_cm_mad_hdr_decode(mad, MAD_LEN, &h), 0);
		TEST_ASSERT_EQ(h.attr_id, other[i]);
	}
	/* ClassPortInfo is the one CM attribute with Get and GetResp */
	put_hdr(mad, 0x0001);
	mad[3] = 0x01;
	TEST_ASSERT_EQ(decode_rc(mad, MAD_LEN), -EOPNOTSUPP);
	mad[3] = 0x81;
	TEST_ASSERT_EQ(decode_rc(mad, MAD_LEN), -EOPNOTSUPP);
	TEST_ASSERT_EQ(droce_cm_mad_hdr_decode(mad, MAD_LEN, &h), 0);
	TEST_ASSERT_EQ(h.method, 0x81);
	return TEST_SUCCESS;
}

static int
test_method_other_than_send_is_ebadmsg(void)
{
	static const uint8_t bad[] = { 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x07, 0x81, 0x83, 0xff };
	uint8_t mad[MAD_LEN] = { 0 };

	for (int i = 0; i < CM_NB_SAMPLES; i++)
		for (unsigned int j = 0; j < sizeof(bad); j++)
			TEST_ASSERT_EQ(decode_with(cm_sample_attrs[i], 3, bad[j]), -EBADMSG);
	/* as validate_mad: the method is checked before the attribute is known */
	put_hdr(mad, 0x0019);
	mad[3] = 0x01;
	TEST_ASSERT_EQ(decode_rc(mad, MAD_LEN), -EBADMSG);
	return TEST_SUCCESS;
}

static int
test_ari_and_info_lengths_over_72_are_ebadmsg(void)
{
	/* REJ: rejected info length, 7 bits at byte 9; SIDR_REP: info length at byte 5 */
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_REJ, HDR + 9, 72 << 1), 0);
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_REJ, HDR + 9, 73 << 1), -EBADMSG);
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_REJ, HDR + 9, 0xfe), -EBADMSG);
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_SIDR_REP, HDR + 5, 72), 0);
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_SIDR_REP, HDR + 5, 73), -EBADMSG);
	TEST_ASSERT_EQ(decode_with(DROCE_CM_ATTR_SIDR_REP, HDR + 5, 0xff), -EBADMSG);
	return TEST_SUCCESS;
}

static int
test_private_data_over_its_field_is_einval(void)
{
	static struct droce_cm_msg m, d;
	uint8_t mad[MAD_LEN], before[MAD_LEN];
	uint32_t max, *len;

	for (int i = 0; i < CM_NB_SAMPLES; i++) {
		const char *name = droce_cm_attr_name(cm_sample_attrs[i]);

		cm_sample(cm_sample_attrs[i], &m);
		TEST_ASSERT(cm_pdata(&m, &len, &max) != NULL && *len == max,
			    "%s: the sample fills its private data", name);
		memset(mad, 0xa5, sizeof(mad));
		memcpy(before, mad, sizeof(mad));
		*len = max + 1;
		TEST_ASSERT(droce_cm_mad_encode(&m, mad, sizeof(mad)) == -EINVAL, "%s", name);
		*len = UINT32_MAX;
		TEST_ASSERT(droce_cm_mad_encode(&m, mad, sizeof(mad)) == -EINVAL, "%s", name);
		TEST_ASSERT(memcmp(mad, before, MAD_LEN) == 0, "%s: a refused encode wrote", name);
		/* a shorter one: only those bytes go, zeros after */
		*len = 3;
		TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), MAD_LEN);
		TEST_ASSERT_EQ(droce_cm_mad_decode(mad, MAD_LEN, &d), 0);
		TEST_ASSERT(cm_pdata(&d, &len, &max) != NULL && *len == max, "%s: decoded length",
			    name);
		TEST_ASSERT_EQ(mad[MAD_LEN - max + 3], 0);
		TEST_ASSERT_EQ(mad[MAD_LEN - 1], 0);
		TEST_ASSERT(mad[MAD_LEN - max + 2] != 0, "%s: the third byte of private data", name);
	}
	return TEST_SUCCESS;
}

static int
test_encode_refuses_fields_wider_than_their_width(void)
{
	static struct droce_cm_msg m;
	uint8_t mad[MAD_LEN];

#define REFUSED(attr, field, v) do { \
	cm_sample(attr, &m); \
	m.field = (v); \
	TEST_ASSERT(droce_cm_mad_encode(&m, mad, sizeof(mad)) == -EINVAL, #field " = " #v); \
	m.field = (v) - 1; \
	TEST_ASSERT(droce_cm_mad_encode(&m, mad, sizeof(mad)) == MAD_LEN, #field " = " #v " - 1"); \
} while (0)
	REFUSED(DROCE_CM_ATTR_REQ, req.local_qpn, 1u << 24);
	REFUSED(DROCE_CM_ATTR_REQ, req.starting_psn, 1u << 24);
	REFUSED(DROCE_CM_ATTR_REQ, req.remote_cm_response_timeout, 32);
	REFUSED(DROCE_CM_ATTR_REQ, req.transport_service_type, 4);
	REFUSED(DROCE_CM_ATTR_REQ, req.retry_count, 8);
	REFUSED(DROCE_CM_ATTR_REQ, req.path_mtu, 16);
	REFUSED(DROCE_CM_ATTR_REQ, req.srq, 2);
	REFUSED(DROCE_CM_ATTR_REQ, req.primary.flow_label, 1u << 20);
	REFUSED(DROCE_CM_ATTR_REQ, req.alternate.packet_rate, 64);
	REFUSED(DROCE_CM_ATTR_REQ, req.sap_supported, 2);
	REFUSED(DROCE_CM_ATTR_MRA, mra.message_mraed, 4);
	REFUSED(DROCE_CM_ATTR_MRA, mra.service_timeout, 32);
	REFUSED(DROCE_CM_ATTR_REJ, rej.message_rejected, 4);
	REFUSED(DROCE_CM_ATTR_REJ, rej.ari_len, DROCE_CM_ARI_LEN + 1);
	REFUSED(DROCE_CM_ATTR_REP, rep.failover_accepted, 4);
	REFUSED(DROCE_CM_ATTR_REP, rep.target_ack_delay, 32);
	REFUSED(DROCE_CM_ATTR_REP, rep.local_eecn, 1u << 24);
	REFUSED(DROCE_CM_ATTR_DREQ, dreq.remote_qpn_eecn, 1u << 24);
	REFUSED(DROCE_CM_ATTR_SIDR_REP, sidr_rep.qpn, 1u << 24);
	REFUSED(DROCE_CM_ATTR_SIDR_REP, sidr_rep.info_len, DROCE_CM_SIDR_INFO_LEN + 1);
#undef REFUSED
	return TEST_SUCCESS;
}

static int
test_encode_refuses_small_buffer_and_unknown_attribute(void)
{
	static struct droce_cm_msg m;
	uint8_t mad[MAD_LEN + 1];

	cm_sample(DROCE_CM_ATTR_RTU, &m);
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, MAD_LEN - 1), -EMSGSIZE);
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, 0), -EMSGSIZE);
	mad[MAD_LEN] = 0x77;
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), MAD_LEN);
	TEST_ASSERT_EQ(mad[MAD_LEN], 0x77);
	m.hdr.attr_id = 0x0019;		/* LAP: not encoded */
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), -EINVAL);
	m.hdr.attr_id = 0x0001;
	TEST_ASSERT_EQ(droce_cm_mad_encode(&m, mad, sizeof(mad)), -EINVAL);
	return TEST_SUCCESS;
}

static int
test_attribute_names(void)
{
	static const char *const names[CM_NB_SAMPLES] = {
		"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP",
	};

	for (int i = 0; i < CM_NB_SAMPLES; i++) {
		TEST_ASSERT_EQ(cm_sample_attrs[i], 0x10 + i);
		TEST_ASSERT(strcmp(droce_cm_attr_name(cm_sample_attrs[i]), names[i]) == 0, "%s",
			    names[i]);
	}
	return TEST_SUCCESS;
}

static int
test_service_ids_as_rdma_cm_makes_them(void)
{
	uint16_t ps, port;

	/* the port spaces are librdmacm's */
	TEST_ASSERT_EQ(DROCE_CM_PS_TCP, RDMA_PS_TCP);
	TEST_ASSERT_EQ(DROCE_CM_PS_UDP, RDMA_PS_UDP);
	TEST_ASSERT_EQ(DROCE_CM_PS_IB, RDMA_PS_IB);
	/* annex A11: 0x0000000001 | protocol | port */
	TEST_ASSERT_EQ(droce_cm_service_id(DROCE_CM_PS_TCP, 4791), 0x00000000010612b7ull);
	TEST_ASSERT_EQ(droce_cm_service_id(DROCE_CM_PS_TCP, 20000), 0x0000000001064e20ull);
	TEST_ASSERT_EQ(droce_cm_service_id(DROCE_CM_PS_UDP, 1), 0x0000000001110001ull);
	TEST_ASSERT_EQ(droce_cm_service_id(DROCE_CM_PS_IB, 0xffff), 0x00000000013fffffull);
	TEST_ASSERT(droce_cm_service_id_parse(0x00000000010612b7ull, &ps, &port), "TCP");
	TEST_ASSERT_EQ(ps, RDMA_PS_TCP);
	TEST_ASSERT_EQ(port, 4791);
	TEST_ASSERT(droce_cm_service_id_parse(0x0000000001110000ull, NULL, &port), "UDP");
	TEST_ASSERT_EQ(port, 0);
	TEST_ASSERT(!droce_cm_service_id_parse(0x0000000002060001ull, &ps, &port), "prefix 2");
	TEST_ASSERT(!droce_cm_service_id_parse(0x1000000001060001ull, &ps, &port), "high byte");
	TEST_ASSERT(!droce_cm_service_id_parse(0x0200000000000001ull, &ps, &port),
		    "a CM-assigned service ID");
	return TEST_SUCCESS;
}

static int
test_ip_header_ipv4_and_ipv6(void)
{
	struct droce_cm_ip_hdr h = { .ip_version = 4, .src_port = 0x1234 }, d;
	uint8_t pdata[DROCE_CM_REQ_PDATA_LEN];
	static const uint8_t want[8] = { 0x00, 0x40, 0x12, 0x34, 0, 0, 0, 0 };

	memset(h.src_addr, 0xee, 12);	/* not sent for IPv4 */
	memcpy(h.src_addr + 12, "\xc0\xa8\x01\x02", 4);
	memcpy(h.dst_addr + 12, "\xc0\xa8\x01\x03", 4);
	memset(pdata, 0x55, sizeof(pdata));
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, "xy", 2, pdata, sizeof(pdata)), 38);
	TEST_ASSERT(memcmp(pdata, want, 8) == 0, "version, IP version, port, zero pad");
	TEST_ASSERT(memcmp(pdata + 16, "\xc0\xa8\x01\x02", 4) == 0, "source IPv4");
	TEST_ASSERT(memcmp(pdata + 20, "\0\0\0\0\0\0\0\0\0\0\0\0\xc0\xa8\x01\x03", 16) == 0,
		    "destination IPv4");
	TEST_ASSERT(memcmp(pdata + 36, "xy\0", 3) == 0, "user data, then zeros");
	TEST_ASSERT_EQ(pdata[sizeof(pdata) - 1], 0);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), 0);
	TEST_ASSERT_EQ(d.ip_version, 4);
	TEST_ASSERT_EQ(d.src_port, 0x1234);
	TEST_ASSERT(memcmp(d.dst_addr, h.dst_addr, 16) == 0, "IPv4 back");
	/* the reserved nibble is ignored */
	pdata[1] |= 0x0f;
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), 0);
	TEST_ASSERT_EQ(d.ip_version, 4);

	h.ip_version = 6;
	memset(h.src_addr, 0x11, 16);
	memset(h.dst_addr, 0x22, 16);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, NULL, 0, pdata, DROCE_CM_IP_HDR_LEN), 36);
	TEST_ASSERT_EQ(pdata[1], 0x60);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, DROCE_CM_IP_HDR_LEN, &d), 0);
	TEST_ASSERT(memcmp(&d, &h, sizeof(d)) == 0, "IPv6 back");
	return TEST_SUCCESS;
}

static int
test_ip_header_errors(void)
{
	struct droce_cm_ip_hdr h = { .ip_version = 4 }, d;
	uint8_t pdata[DROCE_CM_SIDR_REQ_PDATA_LEN], user[DROCE_CM_SIDR_REQ_PDATA_LEN] = { 0 };

	/* the consumer's share of REQ and SIDR_REQ private data: 56 and 180 bytes */
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, user, 56, pdata, DROCE_CM_REQ_PDATA_LEN), 92);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, user, 57, pdata, DROCE_CM_REQ_PDATA_LEN), -EINVAL);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, user, 180, pdata, sizeof(pdata)), 216);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, user, 181, pdata, sizeof(pdata)), -EINVAL);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, NULL, 0, pdata, 35), -EINVAL);
	h.ip_version = 5;
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, NULL, 0, pdata, sizeof(pdata)), -EINVAL);
	h.ip_version = 0;
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, NULL, 0, pdata, sizeof(pdata)), -EINVAL);

	h.ip_version = 6;
	TEST_ASSERT_EQ(droce_cm_ip_hdr_encode(&h, NULL, 0, pdata, sizeof(pdata)), 36);
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, 35, &d), -EMSGSIZE);
	pdata[0] = 0x10;	/* major version 1 */
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), -EPROTONOSUPPORT);
	pdata[0] = 0x01;	/* minor version 1 */
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), -EPROTONOSUPPORT);
	pdata[0] = 0;
	pdata[1] = 0x00;	/* a private data of zeros: no header */
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), -EAFNOSUPPORT);
	pdata[1] = 0x50;
	TEST_ASSERT_EQ(droce_cm_ip_hdr_decode(pdata, sizeof(pdata), &d), -EAFNOSUPPORT);
	return TEST_SUCCESS;
}

static const struct droce_test_case cases[] = {
	TEST_CASE(test_req_encodes_to_hand_built_bytes),
	TEST_CASE(test_rep_encodes_to_hand_built_bytes),
	TEST_CASE(test_sidr_rep_encodes_to_hand_built_bytes),
	TEST_CASE(test_every_message_round_trips),
	TEST_CASE(test_reserved_bits_ignored_on_decode_zero_on_encode),
	TEST_CASE(test_random_mads_come_back_less_reserved_bits),
	TEST_CASE(test_short_buffer_is_emsgsize_and_never_overread),
	TEST_CASE(test_bad_versions_and_class_are_refused),
	TEST_CASE(test_unknown_attribute_is_eopnotsupp),
	TEST_CASE(test_method_other_than_send_is_ebadmsg),
	TEST_CASE(test_ari_and_info_lengths_over_72_are_ebadmsg),
	TEST_CASE(test_private_data_over_its_field_is_einval),
	TEST_CASE(test_encode_refuses_fields_wider_than_their_width),
	TEST_CASE(test_encode_refuses_small_buffer_and_unknown_attribute),
	TEST_CASE(test_attribute_names),
	TEST_CASE(test_service_ids_as_rdma_cm_makes_them),
	TEST_CASE(test_ip_header_ipv4_and_ipv6),
	TEST_CASE(test_ip_header_errors),
};

int
main(void)
{
	return DROCE_TEST_MAIN("cm_mad", cases, NULL, NULL);
}
