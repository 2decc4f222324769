/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "cm_samples.h"

const uint16_t cm_sample_attrs[CM_NB_SAMPLES] = {
	DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_MRA, DROCE_CM_ATTR_REJ,
	DROCE_CM_ATTR_REP, DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_DREQ,
	DROCE_CM_ATTR_DREP, DROCE_CM_ATTR_SIDR_REQ, DROCE_CM_ATTR_SIDR_REP,
};

#define GID4(host)	{ [10] = 0xff, 0xff, 10, 0, 0, (host) }	/* ::ffff:10.0.0.host */
#define GID6(host)	{ 0xfe, 0x80, [15] = (host) }		/* fe80::host */

/*
 * In cm_sample_attrs' order. Private data is filled in by cm_sample: a
 * pattern, after an IP CM header for REQ (IPv4) and SIDR_REQ (IPv6).
 */
static const struct droce_cm_msg samples[CM_NB_SAMPLES] = {
	{ .req = {
		.local_comm_id = 0x11223344, .service_id = 0x0000000001064853ull,
		.local_ca_guid = 0x0a1b2c3d4e5f6071ull, .local_qkey = 0x0badcafe,
		.local_qpn = 0xabcdef, .responder_resources = 0x8f, .local_eecn = 0x123456,
		.initiator_depth = 0x9e, .remote_eecn = 0x654321,
		.remote_cm_response_timeout = 0x15, .transport_service_type = DROCE_CM_TRANSPORT_RD,
		.end_to_end_flow_control = 1, .starting_psn = 0xfedcba,
		.local_cm_response_timeout = 0x0b, .retry_count = 5, .pkey = 0x7fff, .path_mtu = 0xa,
		.rdc_exists = 1, .rnr_retry_count = 6, .max_cm_retries = 0xd, .srq = 1,
		.extended_transport_type = 5, .sap_supported = 1,
		.primary = {
			.local_lid = 0x1234, .remote_lid = 0x5678, .local_gid = GID4(1),
			.remote_gid = GID4(2), .flow_label = 0xabcde, .packet_rate = 0x2d,
			.traffic_class = 0xb8, .hop_limit = 0x40, .sl = 0xc, .subnet_local = 1,
			.local_ack_timeout = 0x13,
		},
		.alternate = {
			.local_lid = 0x9abc, .remote_lid = 0xdef0, .local_gid = GID6(3),
			.remote_gid = GID6(4), .flow_label = 0x54321, .packet_rate = 0x1e,
			.traffic_class = 0x28, .hop_limit = 0x7f, .sl = 0x3, .subnet_local = 1,
			.local_ack_timeout = 0x1f,
		},
	} },
	{ .mra = {
		.local_comm_id = 0x21222324, .remote_comm_id = 0x25262728,
		.message_mraed = DROCE_CM_MSG_REP, .service_timeout = 0x1a,
	} },
	{ .rej = {
		.local_comm_id = 0x31323334, .remote_comm_id = 0x35363738,
		.message_rejected = DROCE_CM_MSG_REP, .reason = DROCE_CM_REJ_CONSUMER_DEFINED,
		.ari_len = 5, .ari = { 0xa0, 0xa7, 0xae, 0xb5, 0xbc },
	} },
	{ .rep = {
		.local_comm_id = 0x41424344, .remote_comm_id = 0x11223344,
		.local_qkey = 0x13572468, .local_qpn = 0x2468ac, .local_eecn = 0x13579b,
		.starting_psn = 0x0a0b0c, .responder_resources = 0x10, .initiator_depth = 0x20,
		.target_ack_delay = 0x1d, .failover_accepted = 2, .end_to_end_flow_control = 1,
		.rnr_retry_count = 5, .srq = 1, .local_ca_guid = 0x8091a2b3c4d5e6f7ull,
	} },
	{ .rtu = { .local_comm_id = 0x11223344, .remote_comm_id = 0x41424344 } },
	{ .dreq = {
		.local_comm_id = 0x51525354, .remote_comm_id = 0x55565758,
		.remote_qpn_eecn = 0x2468ac,
	} },
	{ .drep = { .local_comm_id = 0x55565758, .remote_comm_id = 0x51525354 } },
	{ .sidr_req = {
		.request_id = 0x71727374, .pkey = 0xffff, .service_id = 0x0000000001111f90ull,
	} },
	{ .sidr_rep = {
		.request_id = 0x71727374, .status = DROCE_CM_SIDR_REDIRECT, .info_len = 7,
		.info = { 0xb0, 0xb7, 0xbe, 0xc5, 0xcc, 0xd3, 0xda }, .qpn = 0x00beef,
		.service_id = 0x0000000001111f90ull, .qkey = 0x01234567,
	} },
};

void
cm_fill(uint8_t *p, unsigned int n, uint8_t seed)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

uint8_t *
cm_pdata(struct droce_cm_msg *m, uint32_t **len, uint32_t *max)
{
#define PD(a, x) { DROCE_CM_ATTR_##a, offsetof(struct droce_cm_msg, x.private_data), \
		   offsetof(struct droce_cm_msg, x.private_data_len), DROCE_CM_##a##_PDATA_LEN }
	static const struct { uint16_t attr, data, len, max; } pd[] = {
		PD(REQ, req), PD(MRA, mra), PD(REJ, rej), PD(REP, rep), PD(RTU, rtu),
		PD(DREQ, dreq), PD(DREP, drep), PD(SIDR_REQ, sidr_req), PD(SIDR_REP, sidr_rep),
	};
#undef PD

	for (unsigned int i = 0; i < sizeof(pd) / sizeof(pd[0]); i++)
		if (pd[i].attr == m->hdr.attr_id) {
			*len = (uint32_t *)((uint8_t *)m + pd[i].len);
			*max = pd[i].max;
			return (uint8_t *)m + pd[i].data;
		}
	return NULL;
}

void
cm_sample(uint16_t attr_id, struct droce_cm_msg *m)
{
	struct droce_cm_ip_hdr ip = { .ip_version = 4, .src_port = 0xc001,
				      .src_addr = GID4(1), .dst_addr = GID4(2) };
	uint8_t user[DROCE_CM_SIDR_REQ_PDATA_LEN];
	uint32_t *len, max;
	uint8_t *pdata;
	int i, rc;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < CM_NB_SAMPLES && cm_sample_attrs[i] != attr_id; i++)
		;
	if (i == CM_NB_SAMPLES)
		return;
	*m = samples[i];
	m->hdr.attr_id = attr_id;
	m->hdr.tid = 0x0000000100000000ull | (uint64_t)attr_id << 24 | 0x5a5a5a;
	m->hdr.attr_mod = attr_id == DROCE_CM_ATTR_RTU ? 0x00c0ffee : 0;
	pdata = cm_pdata(m, &len, &max);
	cm_fill(pdata, max, (uint8_t)(0x10 * i));
	*len = max;
	if (attr_id != DROCE_CM_ATTR_REQ && attr_id != DROCE_CM_ATTR_SIDR_REQ)
		return;
	if (attr_id == DROCE_CM_ATTR_SIDR_REQ) {
		static const struct droce_cm_ip_hdr ip6 = { .ip_version = 6, .src_port = 0xc002,
							    .src_addr = GID6(5), .dst_addr = GID6(6) };

		ip = ip6;
	}
	/* the header over the pattern's first bytes, the rest of the pattern after it */
	memcpy(user, pdata + DROCE_CM_IP_HDR_LEN, max - DROCE_CM_IP_HDR_LEN);
	rc = droce_cm_ip_hdr_encode(&ip, user, max - DROCE_CM_IP_HDR_LEN, pdata, max);
	*len = rc < 0 ? 0 : (uint32_t)rc;
}
