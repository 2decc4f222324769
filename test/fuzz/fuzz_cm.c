/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the connection manager's wire parser
 * (lib/rdmacm/cm_mad.c), what the CM thread runs on every MAD that reaches
 * a device's QP1: the common header, every CM message, the IP CM private
 * data header and the service ID. The input is the MAD (any length). Beyond
 * the sanitizers: a MAD that decodes encodes back to a MAD that decodes to
 * the same message (fields are masked to their widths, so nothing a peer
 * sends can be re-sent differently; the header's status is always sent 0),
 * the decoder never reports more private
 * data than its field holds, and an IP header that decodes names IPv4 or
 * IPv6 only.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm_mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c) do { if (!(c)) { \
	__builtin_printf("FUZZ CHECK FAILED: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
	abort(); } } while (0)

static void
ip_header(const uint8_t *pdata, size_t len)
{
	struct droce_cm_ip_hdr h;

	if (droce_cm_ip_hdr_decode(pdata, len, &h) == 0)
		FUZZ_CHECK(h.ip_version == 4 || h.ip_version == 6);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_cm_msg m, again;
	struct droce_cm_mad_hdr h;
	uint8_t buf[DROCE_CM_MAD_LEN];
	uint16_t ps, port;

	if (size >= 8) {
		uint64_t sid;

		memcpy(&sid, data, sizeof(sid));
		if (droce_cm_service_id_parse(sid, &ps, &port))
			FUZZ_CHECK(droce_cm_service_id(ps, port) == sid);
	}
	if (droce_cm_mad_hdr_decode(data, size, &h) != 0)
		return 0;
	memset(&m, 0, sizeof(m));
	if (droce_cm_mad_decode(data, size, &m) != 0)
		return 0;
	switch (m.hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		FUZZ_CHECK(m.req.private_data_len <= DROCE_CM_REQ_PDATA_LEN);
		ip_header(m.req.private_data, m.req.private_data_len);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		FUZZ_CHECK(m.sidr_req.private_data_len <= DROCE_CM_SIDR_REQ_PDATA_LEN);
		ip_header(m.sidr_req.private_data, m.sidr_req.private_data_len);
		break;
	case DROCE_CM_ATTR_REJ:
		FUZZ_CHECK(m.rej.ari_len <= DROCE_CM_ARI_LEN);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		FUZZ_CHECK(m.sidr_rep.info_len <= DROCE_CM_SIDR_INFO_LEN);
		break;
	default:
		break;
	}
	/* what decodes, encodes, and decodes to the same message */
	FUZZ_CHECK(droce_cm_mad_encode(&m, buf, sizeof(buf)) == DROCE_CM_MAD_LEN);
	memset(&again, 0, sizeof(again));
	FUZZ_CHECK(droce_cm_mad_decode(buf, sizeof(buf), &again) == 0);
	/* the header's status and class-specific word are ours to set (0) */
	FUZZ_CHECK(again.hdr.tid == m.hdr.tid && again.hdr.attr_id == m.hdr.attr_id &&
		   again.hdr.attr_mod == m.hdr.attr_mod && again.hdr.status == 0);
	FUZZ_CHECK(memcmp(&m.req, &again.req, sizeof(m) - offsetof(struct droce_cm_msg, req)) == 0);
	return 0;
}
