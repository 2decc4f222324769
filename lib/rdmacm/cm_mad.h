/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * InfiniBand connection management MADs (IBA vol. 1 ch. 12.6, the
 * communication management class 0x07, class version 2) as they go on QP1,
 * and the IP addressing that rdma_cm puts in them (IBA annex A11): the bytes
 * Linux's ib_cm and rdma_cm send and accept (drivers/infiniband/core/cm.c,
 * include/rdma/ibta_vol1_c12.h, cma.c), so that droce can talk to kernel
 * RoCE hosts.
 *
 * A pure library: no DPDK, no verbs objects. Each message is a plain struct
 * of host-order fields; encoding makes exactly DROCE_CM_MAD_LEN bytes in
 * network order, decoding takes them back. Reserved bits are written as zero
 * and ignored when read, as the kernel does. Integer fields narrower than
 * their C type carry the field's width in a comment; encoding refuses a
 * value that does not fit.
 */
#ifndef DROCE_CM_MAD_H
#define DROCE_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DROCE_CM_MAD_LEN		256	/* every MAD (IBA 13.4) */
#define DROCE_CM_MAD_HDR_LEN		24	/* the common MAD header (IBA 13.4) */

#define DROCE_CM_BASE_VERSION		1
#define DROCE_CM_MGMT_CLASS		0x07	/* communication management */
/* IBA 1.2 and later: Linux's IB_CM_CLASS_VERSION */
#define DROCE_CM_CLASS_VERSION		2
/* the one method of CM messages (ClassPortInfo aside), as mad.c's validate_mad */
#define DROCE_CM_METHOD_SEND		0x03

/* QP1 and the Q_Key of every GMP (Linux's IB_QP1_QKEY) */
#define DROCE_CM_QP1			1
#define DROCE_CM_QP1_QKEY		0x80010000u

/* Attribute IDs (IBA 12.6, table 104) */
#define DROCE_CM_ATTR_REQ		0x0010
#define DROCE_CM_ATTR_MRA		0x0011
#define DROCE_CM_ATTR_REJ		0x0012
#define DROCE_CM_ATTR_REP		0x0013
#define DROCE_CM_ATTR_RTU		0x0014
#define DROCE_CM_ATTR_DREQ		0x0015
#define DROCE_CM_ATTR_DREP		0x0016
#define DROCE_CM_ATTR_SIDR_REQ		0x0017
#define DROCE_CM_ATTR_SIDR_REP		0x0018

/* The private data each message carries: the rest of its 232 bytes */
#define DROCE_CM_REQ_PDATA_LEN		92
#define DROCE_CM_MRA_PDATA_LEN		222
#define DROCE_CM_REJ_PDATA_LEN		148
#define DROCE_CM_REP_PDATA_LEN		196
#define DROCE_CM_RTU_PDATA_LEN		224
#define DROCE_CM_DREQ_PDATA_LEN		220
#define DROCE_CM_DREP_PDATA_LEN		224
#define DROCE_CM_SIDR_REQ_PDATA_LEN	216
#define DROCE_CM_SIDR_REP_PDATA_LEN	136
#define DROCE_CM_ARI_LEN		72	/* REJ's additional reject information */
#define DROCE_CM_SIDR_INFO_LEN		72	/* SIDR_REP's additional information */

/* REQ transport service type (2 bits); 3 means the extended type says (1: XRC) */
enum {
	DROCE_CM_TRANSPORT_RC = 0,
	DROCE_CM_TRANSPORT_UC = 1,
	DROCE_CM_TRANSPORT_RD = 2,
	DROCE_CM_TRANSPORT_EXT = 3,
};
#define DROCE_CM_EXT_TRANSPORT_XRC	1

/* Which message an MRA acknowledges or a REJ rejects (2 bits) */
enum {
	DROCE_CM_MSG_REQ = 0,
	DROCE_CM_MSG_REP = 1,
	DROCE_CM_MSG_OTHER = 2,		/* LAP for an MRA; no message for a REJ */
};

/* REJ reasons (IBA 12.6.7.2, table 109) that rdma_cm uses or reports */
enum {
	DROCE_CM_REJ_NO_QP = 1,
	DROCE_CM_REJ_NO_RESOURCES = 3,
	DROCE_CM_REJ_TIMEOUT = 4,
	DROCE_CM_REJ_UNSUPPORTED = 5,
	DROCE_CM_REJ_INVALID_COMM_ID = 6,
	DROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	DROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	DROCE_CM_REJ_STALE_CONN = 10,
	DROCE_CM_REJ_INVALID_GID = 12,
	DROCE_CM_REJ_INVALID_MTU = 26,
	DROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	DROCE_CM_REJ_CONSUMER_DEFINED = 28,
	DROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	DROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	DROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* SIDR_REP status (IBA 12.11.2, table 120) */
enum {
	DROCE_CM_SIDR_SUCCESS = 0,
	DROCE_CM_SIDR_UNSUPPORTED = 1,
	DROCE_CM_SIDR_REJECT = 2,
	DROCE_CM_SIDR_NO_QP = 3,
	DROCE_CM_SIDR_REDIRECT = 4,
	DROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* The common MAD header (IBA 13.4). */
struct droce_cm_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;			/* with the response bit (0x80) */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* One path of a REQ (IBA 12.6.5: primary and alternate alike). */
struct droce_cm_path {
	uint16_t local_lid;		/* 0xffff (permissive) on RoCE */
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/* 4 bits */
	uint8_t subnet_local;		/* 1 bit */
	uint8_t local_ack_timeout;	/* 5 bits */
};

/* REQ (IBA 12.6.5, table 106) */
struct droce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;		/* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		/* 24 bits */
	uint8_t remote_cm_response_timeout;	/* 5 bits */
	uint8_t transport_service_type;	/* 2 bits, DROCE_CM_TRANSPORT_* */
	uint8_t end_to_end_flow_control;	/* 1 bit */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t local_cm_response_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, IBV_MTU_* */
	uint8_t rdc_exists;		/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t max_cm_retries;		/* 4 bits */
	uint8_t srq;			/* 1 bit */
	uint8_t extended_transport_type;	/* 3 bits */
	struct droce_cm_path primary;
	struct droce_cm_path alternate;	/* all zero: none */
	uint8_t sap_supported;		/* 1 bit */
	uint8_t private_data[DROCE_CM_REQ_PDATA_LEN];
	uint32_t private_data_len;	/* encode: bytes used; decode: always the whole field */
};

/* MRA (IBA 12.6.6, table 107) */
struct droce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_mraed;		/* 2 bits, DROCE_CM_MSG_* */
	uint8_t service_timeout;	/* 5 bits */
	uint8_t private_data[DROCE_CM_MRA_PDATA_LEN];
	uint32_t private_data_len;
};

/* REJ (IBA 12.6.7, table 108) */
struct droce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_rejected;	/* 2 bits, DROCE_CM_MSG_* */
	uint8_t ari_len;		/* 7 bits, at most DROCE_CM_ARI_LEN */
	uint16_t reason;		/* DROCE_CM_REJ_* */
	uint8_t ari[DROCE_CM_ARI_LEN];
	uint8_t private_data[DROCE_CM_REJ_PDATA_LEN];
	uint32_t private_data_len;
};

/* REP (IBA 12.6.8, table 110) */
struct droce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint32_t local_eecn;		/* 24 bits */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover_accepted;	/* 2 bits */
	uint8_t end_to_end_flow_control;	/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t srq;			/* 1 bit */
	uint64_t local_ca_guid;
	uint8_t private_data[DROCE_CM_REP_PDATA_LEN];
	uint32_t private_data_len;
};

/* RTU (IBA 12.6.9, table 111) */
struct droce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_RTU_PDATA_LEN];
	uint32_t private_data_len;
};

/* DREQ (IBA 12.6.10, table 112) */
struct droce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn;	/* 24 bits */
	uint8_t private_data[DROCE_CM_DREQ_PDATA_LEN];
	uint32_t private_data_len;
};

/* DREP (IBA 12.6.11, table 113) */
struct droce_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_DREP_PDATA_LEN];
	uint32_t private_data_len;
};

/* SIDR_REQ (IBA 12.11.1, table 119) */
struct droce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[DROCE_CM_SIDR_REQ_PDATA_LEN];
	uint32_t private_data_len;
};

/* SIDR_REP (IBA 12.11.2, table 120) */
struct droce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;			/* DROCE_CM_SIDR_* */
	uint8_t info_len;		/* at most DROCE_CM_SIDR_INFO_LEN */
	uint32_t qpn;			/* 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[DROCE_CM_SIDR_INFO_LEN];
	uint8_t private_data[DROCE_CM_SIDR_REP_PDATA_LEN];
	uint32_t private_data_len;
};

/* A CM MAD: the header and the attribute hdr.attr_id names. */
struct droce_cm_msg {
	struct droce_cm_mad_hdr hdr;
	union {
		struct droce_cm_req req;
		struct droce_cm_mra mra;
		struct droce_cm_rej rej;
		struct droce_cm_rep rep;
		struct droce_cm_rtu rtu;
		struct droce_cm_dreq dreq;
		struct droce_cm_drep drep;
		struct droce_cm_sidr_req sidr_req;
		struct droce_cm_sidr_rep sidr_rep;
	};
};

/**
 * Encode a CM message as a MAD.
 *
 * Writes base version 1, class 0x07, class version 2, method Send, status and
 * class-specific 0, and @m->hdr's tid, attr_id and attr_mod (the other header
 * fields are ignored); then the attribute, reserved bits zero, private data
 * past private_data_len zero.
 *
 * @param m    the message; m->hdr.attr_id selects the union member
 * @param buf  where the MAD goes
 * @param len  the room at @buf
 * @return DROCE_CM_MAD_LEN, or
 *   -EMSGSIZE  @len is below DROCE_CM_MAD_LEN;
 *   -EINVAL    an attribute this codec does not encode, a field wider than
 *              its width, a private data, ARI or info length over its field.
 */
int droce_cm_mad_encode(const struct droce_cm_msg *m, uint8_t *buf, size_t len);

/**
 * Decode the common MAD header of a CM MAD, checking what every CM MAD must
 * have: exactly DROCE_CM_MAD_LEN bytes, base version 1, class 0x07, class
 * version 2. Attribute and method are not checked (a ClassPortInfo Get
 * passes).
 *
 * @return 0, or
 *   -EMSGSIZE         @len is not DROCE_CM_MAD_LEN;
 *   -EPROTONOSUPPORT  base version not 1, or class version not 2;
 *   -ENOMSG           not the CM class.
 */
int droce_cm_mad_hdr_decode(const uint8_t *buf, size_t len, struct droce_cm_mad_hdr *hdr);

/**
 * Decode a CM MAD: the header as droce_cm_mad_hdr_decode() checks it, then
 * method Send and one of the nine attributes above, then the attribute's
 * fields. Reserved bits are ignored; private_data_len is the whole field
 * (CM messages carry no length of their own). @m is undefined on error.
 *
 * @return 0, or the errors of droce_cm_mad_hdr_decode(), or
 *   -EOPNOTSUPP  an attribute this codec does not decode (ClassPortInfo,
 *                LAP, APR, anything else);
 *   -EBADMSG     a method other than Send; a REJ ARI length or SIDR_REP
 *                info length over its 72-byte field.
 */
int droce_cm_mad_decode(const uint8_t *buf, size_t len, struct droce_cm_msg *m);

/** The message's short name ("REQ", "SIDR_REP"), or NULL for another attribute. */
const char *droce_cm_attr_name(uint16_t attr_id);

/*
 * rdma_cm's IP addressing (IBA annex A11, Linux cma.c): the service ID is
 * 0x0000000001 in its top 40 bits, the port space's protocol byte, then the
 * destination port; REQ and SIDR_REQ private data starts with a 36-byte
 * header naming the IP version, the source port and both addresses.
 */
#define DROCE_CM_PS_TCP			0x0106
#define DROCE_CM_PS_UDP			0x0111
#define DROCE_CM_PS_IB			0x013f
#define DROCE_CM_IP_SID_PREFIX		0x0000000001000000ull
#define DROCE_CM_IP_SID_MASK		0xffffffffff000000ull
#define DROCE_CM_IP_HDR_LEN		36
#define DROCE_CM_IP_HDR_VERSION		0x00	/* major 0, minor 0 */

/* The header rdma_cm puts first in REQ and SIDR_REQ private data. */
struct droce_cm_ip_hdr {
	uint8_t version;		/* major << 4 | minor: DROCE_CM_IP_HDR_VERSION */
	uint8_t ip_version;		/* 4 or 6 */
	uint16_t src_port;
	/* network order; IPv4 in bytes 12..15, bytes 0..11 zero (cma.c's cma_ip_addr) */
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
};

/** The service ID of port space @ps (DROCE_CM_PS_*) and @port, as cma_get_service_id(). */
uint64_t droce_cm_service_id(uint16_t ps, uint16_t port);

/**
 * Split an rdma_cm service ID.
 *
 * @return true if @sid has the IP prefix (then *ps and *port, either may be
 *   NULL, are its port space and destination port), false otherwise.
 */
bool droce_cm_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port);

/**
 * Write the IP header and then @user_len bytes of @user into private data
 * @pdata of @pdata_len bytes (the header's reserved bits, an IPv4 address's
 * 12 leading bytes and the rest of @pdata zero).
 *
 * @return the bytes used (DROCE_CM_IP_HDR_LEN + @user_len), or
 *   -EINVAL  ip_version neither 4 nor 6, or the header and @user do not fit.
 */
int droce_cm_ip_hdr_encode(const struct droce_cm_ip_hdr *h, const void *user, size_t user_len,
			   uint8_t *pdata, size_t pdata_len);

/**
 * Read the IP header at the start of private data, as cma.c checks it. The
 * consumer's data follows at @pdata + DROCE_CM_IP_HDR_LEN. For IPv4, the
 * address's 12 leading bytes are copied as they came (cma.c ignores them).
 *
 * @return 0, or
 *   -EMSGSIZE      @pdata_len is below DROCE_CM_IP_HDR_LEN;
 *   -EPROTONOSUPPORT  a version other than DROCE_CM_IP_HDR_VERSION;
 *   -EAFNOSUPPORT  an IP version neither 4 nor 6.
 */
int droce_cm_ip_hdr_decode(const uint8_t *pdata, size_t pdata_len, struct droce_cm_ip_hdr *h);

#endif /* DROCE_CM_MAD_H */
