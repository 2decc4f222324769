/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM MADs byte by byte. Every layout is a table of fields in the IBA's
 * Byte[Bit] notation (byte offset, first bit counted from the byte's most
 * significant bit, width), as the message tables of IBA 12.6 and Linux's
 * include/rdma/ibta_vol1_c12.h give them; one loop writes and one reads
 * every table, so a layout is stated once.
 */
#include <errno.h>
#include <string.h>

#include "cm_mad.h"

#define DIM(a)		(sizeof(a) / sizeof((a)[0]))
#define ATTR_LEN	(DROCE_CM_MAD_LEN - DROCE_CM_MAD_HDR_LEN)
#define ATTR_CLASSPORTINFO	0x0001

/* An integer field (width > 0) or a byte array (width 0) of a struct. */
struct field {
	uint16_t off;		/* byte offset on the wire */
	uint8_t bit;		/* first bit, 0 the most significant */
	uint8_t width;		/* bits; bit + width <= 64 */
	uint16_t member;	/* offsetof in the struct */
	uint16_t size;		/* sizeof the member */
};

#define MSIZE(type, m)	sizeof(((type *)0)->m)
#define FLD(type, m, o, b, w)	{ (o), (b), (w), offsetof(type, m), MSIZE(type, m) }
#define ARR(type, m, o)		FLD(type, m, o, 0, 0)
/* the two comm IDs that open every message but REQ and the SIDRs */
#define COMM_IDS(type)	FLD(type, local_comm_id, 0, 0, 32), FLD(type, remote_comm_id, 4, 0, 32)

/*
 * Bytes whose count is another member: private data (the count is ours, the
 * wire carries the whole field, which runs to the end of the MAD) or REJ's
 * ARI and SIDR_REP's information (the count is a field of the message).
 */
struct blob {
	uint16_t off;		/* in the attribute */
	uint16_t max;		/* the field's bytes */
	uint16_t data;		/* offsetof the bytes */
	uint16_t len;		/* offsetof the count */
	uint8_t len_size;
	bool on_wire;		/* the count is a field of the message */
};

#define PDATA(type)	{ ATTR_LEN - MSIZE(type, private_data), MSIZE(type, private_data), \
			  offsetof(type, private_data), offsetof(type, private_data_len), \
			  MSIZE(type, private_data_len), false }
#define VAR(type, m, n, o)	{ (o), MSIZE(type, m), offsetof(type, m), offsetof(type, n), \
				  MSIZE(type, n), true }

struct attr {
	uint16_t id;
	const char *name;
	const struct field *f;	/* offsets in the attribute */
	unsigned int nf;
	struct blob pdata;
	struct blob var;	/* max 0: none */
};

/* IBA 13.4: the common MAD header */
static const struct field hdr_fields[] = {
	FLD(struct droce_cm_mad_hdr, base_version, 0, 0, 8),
	FLD(struct droce_cm_mad_hdr, mgmt_class, 1, 0, 8),
	FLD(struct droce_cm_mad_hdr, class_version, 2, 0, 8),
	FLD(struct droce_cm_mad_hdr, method, 3, 0, 8),
	FLD(struct droce_cm_mad_hdr, status, 4, 0, 16),
	FLD(struct droce_cm_mad_hdr, class_specific, 6, 0, 16),
	FLD(struct droce_cm_mad_hdr, tid, 8, 0, 64),
	FLD(struct droce_cm_mad_hdr, attr_id, 16, 0, 16),
	/* 18-19 reserved */
	FLD(struct droce_cm_mad_hdr, attr_mod, 20, 0, 32),
};

/* IBA 12.6.5: a REQ path, primary at 52, alternate at 96 */
#define PATH(p, o) \
	FLD(struct droce_cm_req, p.local_lid, (o), 0, 16), \
	FLD(struct droce_cm_req, p.remote_lid, (o) + 2, 0, 16), \
	ARR(struct droce_cm_req, p.local_gid, (o) + 4), \
	ARR(struct droce_cm_req, p.remote_gid, (o) + 20), \
	FLD(struct droce_cm_req, p.flow_label, (o) + 36, 0, 20), \
	FLD(struct droce_cm_req, p.packet_rate, (o) + 39, 2, 6), \
	FLD(struct droce_cm_req, p.traffic_class, (o) + 40, 0, 8), \
	FLD(struct droce_cm_req, p.hop_limit, (o) + 41, 0, 8), \
	FLD(struct droce_cm_req, p.sl, (o) + 42, 0, 4), \
	FLD(struct droce_cm_req, p.subnet_local, (o) + 42, 4, 1), \
	FLD(struct droce_cm_req, p.local_ack_timeout, (o) + 43, 0, 5)

/* IBA 12.6.5, table 106; private data at 140 */
static const struct field req_fields[] = {
	FLD(struct droce_cm_req, local_comm_id, 0, 0, 32),
	FLD(struct droce_cm_req, service_id, 8, 0, 64),
	FLD(struct droce_cm_req, local_ca_guid, 16, 0, 64),
	FLD(struct droce_cm_req, local_qkey, 28, 0, 32),
	FLD(struct droce_cm_req, local_qpn, 32, 0, 24),
	FLD(struct droce_cm_req, responder_resources, 35, 0, 8),
	FLD(struct droce_cm_req, local_eecn, 36, 0, 24),
	FLD(struct droce_cm_req, initiator_depth, 39, 0, 8),
	FLD(struct droce_cm_req, remote_eecn, 40, 0, 24),
	FLD(struct droce_cm_req, remote_cm_response_timeout, 43, 0, 5),
	FLD(struct droce_cm_req, transport_service_type, 43, 5, 2),
	FLD(struct droce_cm_req, end_to_end_flow_control, 43, 7, 1),
	FLD(struct droce_cm_req, starting_psn, 44, 0, 24),
	FLD(struct droce_cm_req, local_cm_response_timeout, 47, 0, 5),
	FLD(struct droce_cm_req, retry_count, 47, 5, 3),
	FLD(struct droce_cm_req, pkey, 48, 0, 16),
	FLD(struct droce_cm_req, path_mtu, 50, 0, 4),
	FLD(struct droce_cm_req, rdc_exists, 50, 4, 1),
	FLD(struct droce_cm_req, rnr_retry_count, 50, 5, 3),
	FLD(struct droce_cm_req, max_cm_retries, 51, 0, 4),
	FLD(struct droce_cm_req, srq, 51, 4, 1),
	FLD(struct droce_cm_req, extended_transport_type, 51, 5, 3),
	PATH(primary, 52),
	PATH(alternate, 96),
	FLD(struct droce_cm_req, sap_supported, 139, 5, 1),
};

/* IBA 12.6.6, table 107; private data at 10 */
static const struct field mra_fields[] = {
	COMM_IDS(struct droce_cm_mra),
	FLD(struct droce_cm_mra, message_mraed, 8, 0, 2),
	FLD(struct droce_cm_mra, service_timeout, 9, 0, 5),
};

/* IBA 12.6.7, table 108; ARI at 12, private data at 84 */
#define REJ_ARI_OFF	12
static const struct field rej_fields[] = {
	COMM_IDS(struct droce_cm_rej),
	FLD(struct droce_cm_rej, message_rejected, 8, 0, 2),
	FLD(struct droce_cm_rej, ari_len, 9, 0, 7),
	FLD(struct droce_cm_rej, reason, 10, 0, 16),
};

/* IBA 12.6.8, table 110; private data at 36 */
static const struct field rep_fields[] = {
	COMM_IDS(struct droce_cm_rep),
	FLD(struct droce_cm_rep, local_qkey, 8, 0, 32),
	FLD(struct droce_cm_rep, local_qpn, 12, 0, 24),
	FLD(struct droce_cm_rep, local_eecn, 16, 0, 24),
	FLD(struct droce_cm_rep, starting_psn, 20, 0, 24),
	FLD(struct droce_cm_rep, responder_resources, 24, 0, 8),
	FLD(struct droce_cm_rep, initiator_depth, 25, 0, 8),
	FLD(struct droce_cm_rep, target_ack_delay, 26, 0, 5),
	FLD(struct droce_cm_rep, failover_accepted, 26, 5, 2),
	FLD(struct droce_cm_rep, end_to_end_flow_control, 26, 7, 1),
	FLD(struct droce_cm_rep, rnr_retry_count, 27, 0, 3),
	FLD(struct droce_cm_rep, srq, 27, 3, 1),
	FLD(struct droce_cm_rep, local_ca_guid, 28, 0, 64),
};

/* IBA 12.6.9, table 111; private data at 8 */
static const struct field rtu_fields[] = { COMM_IDS(struct droce_cm_rtu) };

/* IBA 12.6.10, table 112; private data at 12 */
static const struct field dreq_fields[] = {
	COMM_IDS(struct droce_cm_dreq),
	FLD(struct droce_cm_dreq, remote_qpn_eecn, 8, 0, 24),
};

/* IBA 12.6.11, table 113; private data at 8 */
static const struct field drep_fields[] = { COMM_IDS(struct droce_cm_drep) };

/* IBA 12.11.1, table 119; private data at 16 */
static const struct field sidr_req_fields[] = {
	FLD(struct droce_cm_sidr_req, request_id, 0, 0, 32),
	FLD(struct droce_cm_sidr_req, pkey, 4, 0, 16),
	FLD(struct droce_cm_sidr_req, service_id, 8, 0, 64),
};

/* IBA 12.11.2, table 120; information at 24, private data at 96 */
#define SIDR_REP_INFO_OFF	24
static const struct field sidr_rep_fields[] = {
	FLD(struct droce_cm_sidr_rep, request_id, 0, 0, 32),
	FLD(struct droce_cm_sidr_rep, status, 4, 0, 8),
	FLD(struct droce_cm_sidr_rep, info_len, 5, 0, 8),
	FLD(struct droce_cm_sidr_rep, qpn, 8, 0, 24),
	FLD(struct droce_cm_sidr_rep, service_id, 12, 0, 64),
	FLD(struct droce_cm_sidr_rep, qkey, 20, 0, 32),
};

/* REJ's ARI and SIDR_REP's information end where private data begins */
_Static_assert(REJ_ARI_OFF + DROCE_CM_ARI_LEN == ATTR_LEN - DROCE_CM_REJ_PDATA_LEN, "REJ");
_Static_assert(SIDR_REP_INFO_OFF + DROCE_CM_SIDR_INFO_LEN == ATTR_LEN - DROCE_CM_SIDR_REP_PDATA_LEN,
	       "SIDR_REP");

#define ATTR(id, nm, type, fields) \
	{ (id), (nm), (fields), DIM(fields), PDATA(type), { 0 } }

static const struct attr attrs[] = {
	ATTR(DROCE_CM_ATTR_REQ, "REQ", struct droce_cm_req, req_fields),
	ATTR(DROCE_CM_ATTR_MRA, "MRA", struct droce_cm_mra, mra_fields),
	{ DROCE_CM_ATTR_REJ, "REJ", rej_fields, DIM(rej_fields), PDATA(struct droce_cm_rej),
	  VAR(struct droce_cm_rej, ari, ari_len, REJ_ARI_OFF) },
	ATTR(DROCE_CM_ATTR_REP, "REP", struct droce_cm_rep, rep_fields),
	ATTR(DROCE_CM_ATTR_RTU, "RTU", struct droce_cm_rtu, rtu_fields),
	ATTR(DROCE_CM_ATTR_DREQ, "DREQ", struct droce_cm_dreq, dreq_fields),
	ATTR(DROCE_CM_ATTR_DREP, "DREP", struct droce_cm_drep, drep_fields),
	ATTR(DROCE_CM_ATTR_SIDR_REQ, "SIDR_REQ", struct droce_cm_sidr_req, sidr_req_fields),
	{ DROCE_CM_ATTR_SIDR_REP, "SIDR_REP", sidr_rep_fields, DIM(sidr_rep_fields),
	  PDATA(struct droce_cm_sidr_rep),
	  VAR(struct droce_cm_sidr_rep, info, info_len, SIDR_REP_INFO_OFF) },
};

/* Annex A11 (cma.c's struct cma_hdr): the IP header in REQ and SIDR_REQ private data */
static const struct field ip_hdr_fields[] = {
	FLD(struct droce_cm_ip_hdr, version, 0, 0, 8),
	FLD(struct droce_cm_ip_hdr, ip_version, 1, 0, 4),
	FLD(struct droce_cm_ip_hdr, src_port, 2, 0, 16),
	ARR(struct droce_cm_ip_hdr, src_addr, 4),
	ARR(struct droce_cm_ip_hdr, dst_addr, 20),
};

static const struct attr *
attr_find(uint16_t id)
{
	for (unsigned int i = 0; i < DIM(attrs); i++)
		if (attrs[i].id == id)
			return &attrs[i];
	return NULL;
}

const char *
droce_cm_attr_name(uint16_t attr_id)
{
	const struct attr *a = attr_find(attr_id);

	return a ? a->name : NULL;
}

static uint64_t
load(const uint8_t *s, unsigned int size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, s, 1);
		return u8;
	case 2:
		memcpy(&u16, s, 2);
		return u16;
	case 4:
		memcpy(&u32, s, 4);
		return u32;
	default:
		memcpy(&u64, s, 8);
		return u64;
	}
}

static void
store(uint8_t *s, unsigned int size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(s, &u8, 1);
		break;
	case 2:
		memcpy(s, &u16, 2);
		break;
	case 4:
		memcpy(s, &u32, 4);
		break;
	default:
		memcpy(s, &v, 8);
	}
}

static uint64_t
width_mask(unsigned int width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* @width bits, big-endian, from bit @bit of @p (0: the MSB of p[0]) */
static uint64_t
get_bits(const uint8_t *p, unsigned int bit, unsigned int width)
{
	unsigned int n = (bit + width + 7) / 8;
	uint64_t w = 0;

	for (unsigned int i = 0; i < n; i++)
		w = w << 8 | p[i];
	return w >> (n * 8 - bit - width) & width_mask(width);
}

static void
put_bits(uint8_t *p, unsigned int bit, unsigned int width, uint64_t v)
{
	unsigned int n = (bit + width + 7) / 8, shift = n * 8 - bit - width;
	uint64_t mask = width_mask(width) << shift, w = 0;

	for (unsigned int i = 0; i < n; i++)
		w = w << 8 | p[i];
	w = (w & ~mask) | (v << shift & mask);
	for (unsigned int i = n; i-- > 0; w >>= 8)
		p[i] = (uint8_t)w;
}

/* -EINVAL if a member does not fit its field */
static int
pack(uint8_t *wire, const void *s, const struct field *f, unsigned int n)
{
	const uint8_t *src = s;

	for (unsigned int i = 0; i < n; i++, f++) {
		uint64_t v;

		if (f->width == 0) {
			memcpy(wire + f->off, src + f->member, f->size);
			continue;
		}
		v = load(src + f->member, f->size);
		if (v & ~width_mask(f->width))
			return -EINVAL;
		put_bits(wire + f->off, f->bit, f->width, v);
	}
	return 0;
}

static void
unpack(const uint8_t *wire, void *s, const struct field *f, unsigned int n)
{
	uint8_t *dst = s;

	for (unsigned int i = 0; i < n; i++, f++) {
		if (f->width == 0)
			memcpy(dst + f->member, wire + f->off, f->size);
		else
			store(dst + f->member, f->size, get_bits(wire + f->off, f->bit, f->width));
	}
}

/* The bytes of @b the count says; the rest of the field stays zero (as the kernel's IBA_SET_MEM). */
static int
pack_blob(uint8_t *attr, const uint8_t *s, const struct blob *b)
{
	uint64_t len;

	if (b->max == 0)
		return 0;
	len = load(s + b->len, b->len_size);
	if (len > b->max)
		return -EINVAL;
	memcpy(attr + b->off, s + b->data, len);
	return 0;
}

/*
 * Private data: the whole field. A field with its count on the wire (REJ's
 * ARI, SIDR_REP's additional information): the count must fit the field,
 * and only the bytes it counts are taken (the rest is zero), so that what
 * decodes encodes back to the same MAD.
 */
static int
unpack_blob(const uint8_t *attr, uint8_t *s, const struct blob *b)
{
	uint64_t len;

	if (b->max == 0)
		return 0;
	if (!b->on_wire) {
		memcpy(s + b->data, attr + b->off, b->max);
		store(s + b->len, b->len_size, b->max);
		return 0;
	}
	len = load(s + b->len, b->len_size);
	if (len > b->max)
		return -EBADMSG;
	memcpy(s + b->data, attr + b->off, len);
	memset(s + b->data + len, 0, b->max - len);
	return 0;
}

int
droce_cm_mad_encode(const struct droce_cm_msg *m, uint8_t *buf, size_t len)
{
	const uint8_t *body = (const uint8_t *)m + offsetof(struct droce_cm_msg, req);
	const struct attr *a = attr_find(m->hdr.attr_id);
	struct droce_cm_mad_hdr h = {
		.base_version = DROCE_CM_BASE_VERSION,
		.mgmt_class = DROCE_CM_MGMT_CLASS,
		.class_version = DROCE_CM_CLASS_VERSION,
		.method = DROCE_CM_METHOD_SEND,
		.tid = m->hdr.tid,
		.attr_id = m->hdr.attr_id,
		.attr_mod = m->hdr.attr_mod,
	};
	uint8_t mad[DROCE_CM_MAD_LEN] = { 0 };
	uint8_t *attr = mad + DROCE_CM_MAD_HDR_LEN;
	int rc;

	if (len < DROCE_CM_MAD_LEN)
		return -EMSGSIZE;
	if (a == NULL)
		return -EINVAL;
	/* built aside: @buf is untouched when a field does not fit */
	rc = pack(mad, &h, hdr_fields, DIM(hdr_fields));
	if (rc == 0)
		rc = pack(attr, body, a->f, a->nf);
	if (rc == 0)
		rc = pack_blob(attr, body, &a->var);
	if (rc == 0)
		rc = pack_blob(attr, body, &a->pdata);
	if (rc < 0)
		return rc;
	memcpy(buf, mad, sizeof(mad));
	return DROCE_CM_MAD_LEN;
}

int
droce_cm_mad_hdr_decode(const uint8_t *buf, size_t len, struct droce_cm_mad_hdr *hdr)
{
	if (len != DROCE_CM_MAD_LEN)
		return -EMSGSIZE;
	memset(hdr, 0, sizeof(*hdr));
	unpack(buf, hdr, hdr_fields, DIM(hdr_fields));
	/* the kernel's validate_mad, then its agent look-up by class and class version */
	if (hdr->base_version != DROCE_CM_BASE_VERSION)
		return -EPROTONOSUPPORT;
	if (hdr->mgmt_class != DROCE_CM_MGMT_CLASS)
		return -ENOMSG;
	if (hdr->class_version != DROCE_CM_CLASS_VERSION)
		return -EPROTONOSUPPORT;
	return 0;
}

int
droce_cm_mad_decode(const uint8_t *buf, size_t len, struct droce_cm_msg *m)
{
	uint8_t *body = (uint8_t *)m + offsetof(struct droce_cm_msg, req);
	const uint8_t *attr = buf + DROCE_CM_MAD_HDR_LEN;
	const struct attr *a;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = droce_cm_mad_hdr_decode(buf, len, &m->hdr);
	if (rc < 0)
		return rc;
	/* mad.c's validate_mad: CM attributes but ClassPortInfo use Send only */
	if (m->hdr.attr_id != ATTR_CLASSPORTINFO && m->hdr.method != DROCE_CM_METHOD_SEND)
		return -EBADMSG;
	a = attr_find(m->hdr.attr_id);
	if (a == NULL)
		return -EOPNOTSUPP;
	unpack(attr, body, a->f, a->nf);
	rc = unpack_blob(attr, body, &a->var);
	if (rc == 0)
		rc = unpack_blob(attr, body, &a->pdata);
	return rc;
}

uint64_t
droce_cm_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

bool
droce_cm_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	if ((sid & DROCE_CM_IP_SID_MASK) != DROCE_CM_IP_SID_PREFIX)
		return false;
	if (ps != NULL)
		*ps = (uint16_t)(sid >> 16);
	if (port != NULL)
		*port = (uint16_t)sid;
	return true;
}

int
droce_cm_ip_hdr_encode(const struct droce_cm_ip_hdr *h, const void *user, size_t user_len,
		       uint8_t *pdata, size_t pdata_len)
{
	struct droce_cm_ip_hdr c = *h;
	int rc;

	if ((h->ip_version != 4 && h->ip_version != 6) || pdata_len < DROCE_CM_IP_HDR_LEN ||
	    user_len > pdata_len - DROCE_CM_IP_HDR_LEN)
		return -EINVAL;
	if (c.ip_version == 4) {
		memset(c.src_addr, 0, 12);
		memset(c.dst_addr, 0, 12);
	}
	memset(pdata, 0, pdata_len);
	rc = pack(pdata, &c, ip_hdr_fields, DIM(ip_hdr_fields));
	if (rc < 0)
		return rc;
	if (user_len)
		memcpy(pdata + DROCE_CM_IP_HDR_LEN, user, user_len);
	return (int)(DROCE_CM_IP_HDR_LEN + user_len);
}

int
droce_cm_ip_hdr_decode(const uint8_t *pdata, size_t pdata_len, struct droce_cm_ip_hdr *h)
{
	if (pdata_len < DROCE_CM_IP_HDR_LEN)
		return -EMSGSIZE;
	memset(h, 0, sizeof(*h));
	unpack(pdata, h, ip_hdr_fields, DIM(ip_hdr_fields));
	/* cma.c's cma_save_ip_info */
	if (h->version != DROCE_CM_IP_HDR_VERSION)
		return -EPROTONOSUPPORT;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EAFNOSUPPORT;
	return 0;
}
