/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sample CM messages (cm_samples.c) encoded by lib/rdmacm and sent as a
 * kernel CM sends them on RoCEv2: a UD SEND_ONLY to QP1 with a DETH (the
 * GSI Q_Key 0x80010000, source QP 1), the 256-byte MAD, the ICRC. Writes
 * them into a pcap file and prints, for run_cm_tshark.sh, what Wireshark
 * must make of each frame:
 *
 *   <frame number> <tab> <attribute name>
 *   <frame number> <tab> <display filter the frame must match>
 *
 * Usage: cm_pcap FILE.pcap. Exit 0, or 1 with the reason on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "cm_mad.h"
#include "cm_samples.h"
#include "frame.h"

static int frame_no;

/* A Wireshark field (after a prefix) and the value it must show. */
struct want {
	const char *field;
	uint64_t v;
};

static void
want_list(const char *prefix, const struct want *w, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		printf("%d\t%s%s == 0x%llx\n", frame_no, prefix, w[i].field,
		       (unsigned long long)w[i].v);
}

#define WANT(prefix, ...) do { \
	const struct want w_[] = { __VA_ARGS__ }; \
	want_list(prefix, w_, sizeof(w_) / sizeof(w_[0])); \
} while (0)

static void
want_addr(const char *field, const uint8_t *a, bool v4)
{
	char s[64];

	if (v4)
		snprintf(s, sizeof(s), "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
	else
		snprintf(s, sizeof(s), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
			 "%02x%02x:%02x%02x", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
			 a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
	printf("%d\tinfiniband.cm.req.%s == %s\n", frame_no, field, s);
}

/*
 * The fields of a REQ's primary ("prim_") or alternate ("alt_") path that
 * Wireshark 4.0 dissects right. Not its flow label and packet rate: it
 * reads the flow label from 3 bytes at the word's byte 0 (mask 0xfffff000
 * on 24 bits: the label >> 8) and the packet rate from that byte 0, not
 * byte 3 (table 106: label 88[0..19], packet rate 91[2..7], as
 * ibta_vol1_c12.h has them); test_cm_mad's hand-built REQ checks those bytes.
 */
static void
want_path(const char *prefix, const struct droce_cm_path *x)
{
	WANT(prefix, { "locallid", x->local_lid }, { "remotelid", x->remote_lid },
	     { "tfcclass", x->traffic_class }, { "hoplim", x->hop_limit }, { "sl", x->sl },
	     { "subnetlocal", x->subnet_local }, { "localacktout", x->local_ack_timeout });
}

static void
want_req(const struct droce_cm_req *r)
{
	struct droce_cm_ip_hdr ip;
	uint16_t ps = 0, port = 0;
	bool v4;

	droce_cm_service_id_parse(r->service_id, &ps, &port);
	WANT("infiniband.cm.req", { "", r->local_comm_id },
	     { ".serviceid.protocol", ps & 0xff }, { ".serviceid.dport", port },
	     { ".localcaguid", r->local_ca_guid }, { ".localqkey", r->local_qkey },
	     { ".localqpn", r->local_qpn }, { ".responderres", r->responder_resources },
	     { ".localeecn", r->local_eecn }, { ".initdepth", r->initiator_depth },
	     { ".remoteeecn", r->remote_eecn }, { ".remoteresptout", r->remote_cm_response_timeout },
	     { ".transpsvctype", r->transport_service_type },
	     { ".e2eflowctrl", r->end_to_end_flow_control }, { ".startpsn", r->starting_psn },
	     { ".localresptout", r->local_cm_response_timeout }, { ".retrcount", r->retry_count },
	     { ".pkey", r->pkey }, { ".pppmtu", r->path_mtu }, { ".rdcexist", r->rdc_exists },
	     { ".rnrretrcount", r->rnr_retry_count }, { ".maxcmretr", r->max_cm_retries },
	     { ".srq", r->srq }, { ".ext_transport", r->extended_transport_type });
	want_path("infiniband.cm.req.prim_", &r->primary);
	want_path("infiniband.cm.req.alt_", &r->alternate);
	want_addr("prim_localgid_ipv4", r->primary.local_gid, true);
	want_addr("prim_remotegid_ipv4", r->primary.remote_gid, true);
	if (droce_cm_ip_hdr_decode(r->private_data, sizeof(r->private_data), &ip) < 0)
		return;
	v4 = ip.ip_version == 4;
	WANT("infiniband.cm.req.ip_cm.", { "majv", ip.version >> 4 }, { "minv", ip.version & 0xf },
	     { "ipv", ip.ip_version }, { "sport", ip.src_port });
	want_addr(v4 ? "ip_cm.sip4" : "ip_cm.sip6", ip.src_addr, v4);
	want_addr(v4 ? "ip_cm.dip4" : "ip_cm.dip6", ip.dst_addr, v4);
}

/* What Wireshark 4.0 dissects of each attribute (MRA and SIDR: the name only). */
static void
want_fields(const struct droce_cm_msg *m)
{
	WANT("infiniband.mad.", { "baseversion", 1 }, { "mgmtclass", DROCE_CM_MGMT_CLASS },
	     { "classversion", 2 }, { "method", DROCE_CM_METHOD_SEND },
	     { "transactionid", m->hdr.tid }, { "attributeid", m->hdr.attr_id },
	     { "attributemodifier", m->hdr.attr_mod });
	switch (m->hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		want_req(&m->req);
		break;
	case DROCE_CM_ATTR_REJ:
		WANT("infiniband.cm.rej.", { "localcommid", m->rej.local_comm_id },
		     { "remotecommid", m->rej.remote_comm_id }, { "msgrej", m->rej.message_rejected },
		     { "rejinfolen", m->rej.ari_len }, { "reason", m->rej.reason });
		break;
	case DROCE_CM_ATTR_REP:
		WANT("infiniband.cm.rep", { "", m->rep.local_comm_id },
		     { ".remotecommid", m->rep.remote_comm_id }, { ".localqkey", m->rep.local_qkey },
		     { ".localqpn", m->rep.local_qpn }, { ".localeecn", m->rep.local_eecn },
		     { ".startpsn", m->rep.starting_psn }, { ".respres", m->rep.responder_resources },
		     { ".initdepth", m->rep.initiator_depth },
		     { ".tgtackdelay", m->rep.target_ack_delay },
		     { ".failoveracc", m->rep.failover_accepted },
		     { ".e2eflowctrl", m->rep.end_to_end_flow_control },
		     { ".rnrretrcount", m->rep.rnr_retry_count }, { ".srq", m->rep.srq },
		     { ".localcaguid", m->rep.local_ca_guid });
		break;
	case DROCE_CM_ATTR_RTU:
		WANT("infiniband.cm.rtu.", { "localcommid", m->rtu.local_comm_id },
		     { "remotecommid", m->rtu.remote_comm_id });
		break;
	case DROCE_CM_ATTR_DREQ:
		/* Wireshark files DREQ's remote QPN under the REQ's fields */
		WANT("infiniband.cm.", { "dreq.localcommid", m->dreq.local_comm_id },
		     { "dreq.remotecommid", m->dreq.remote_comm_id },
		     { "req.remoteqpneecn", m->dreq.remote_qpn_eecn });
		break;
	case DROCE_CM_ATTR_DREP:
		WANT("infiniband.cm.drsp.", { "localcommid", m->drep.local_comm_id },
		     { "remotecommid", m->drep.remote_comm_id });
		break;
	}
}

/*
 * Classic pcap, written by hand so that this program needs no EAL
 * (rte_pcapng writes mbufs from a mempool).
 */
static int
pcap_put(FILE *f, const void *p, uint32_t len)
{
	uint32_t rec[4] = { (uint32_t)frame_no, 0, len, len };

	return fwrite(rec, sizeof(rec), 1, f) == 1 && fwrite(p, len, 1, f) == 1 ? 0 : -1;
}

static int
put_msg(FILE *f, const struct frame_ends *e, const struct droce_cm_msg *m)
{
	static struct frame fr;
	struct ext deth = ext_deth(DROCE_CM_QP1_QKEY, DROCE_CM_QP1);
	struct frame_info fi;
	uint8_t mad[DROCE_CM_MAD_LEN];
	const char *why;
	int rc;

	frame_no++;
	rc = droce_cm_mad_encode(m, mad, sizeof(mad));
	if (rc != DROCE_CM_MAD_LEN) {
		fprintf(stderr, "cm_pcap: frame %d: encode: %d\n", frame_no, rc);
		return -1;
	}
	frame_build(&fr, e, IBV_OPCODE_UD_SEND_ONLY, DROCE_CM_QP1, (uint32_t)frame_no, &deth,
		    mad, sizeof(mad));
	why = frame_decode(fr.b, fr.len, &fi);
	if (why != NULL || fi.paylen != DROCE_CM_MAD_LEN) {
		fprintf(stderr, "cm_pcap: frame %d: %s\n", frame_no, why ? why : "payload length");
		return -1;
	}
	printf("%d\t%s\n", frame_no, droce_cm_attr_name(m->hdr.attr_id));
	want_fields(m);
	return pcap_put(f, fr.b, fr.len);
}

int
main(int argc, char **argv)
{
	/* classic pcap: magic, version 2.4, GMT offset, accuracy, snaplen, Ethernet */
	static const uint32_t ghdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	struct frame_ends e = {
		.src_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }}, .dst_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }},
		.src_ip = RTE_BE32(0x0a000001), .dst_ip = RTE_BE32(0x0a000002), .sport = 0xc0de,
	};
	static struct droce_cm_msg m;
	struct droce_cm_ip_hdr ip = { .ip_version = 6, .src_port = 0xc003 };
	FILE *f;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: cm_pcap FILE.pcap\n");
		return 1;
	}
	f = fopen(argv[1], "wb");
	if (f == NULL || fwrite(ghdr, sizeof(ghdr), 1, f) != 1) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < CM_NB_SAMPLES && rc == 0; i++) {
		cm_sample(cm_sample_attrs[i], &m);
		rc = put_msg(f, &e, &m);
	}
	/* and an RC REQ with an IPv6 IP CM header and nothing but the header in private data */
	cm_sample(DROCE_CM_ATTR_REQ, &m);
	m.req.transport_service_type = DROCE_CM_TRANSPORT_RC;
	m.req.extended_transport_type = 0;
	memcpy(ip.src_addr, m.req.alternate.local_gid, 16);
	memcpy(ip.dst_addr, m.req.alternate.remote_gid, 16);
	m.req.private_data_len = (uint32_t)droce_cm_ip_hdr_encode(&ip, NULL, 0, m.req.private_data,
								  sizeof(m.req.private_data));
	if (rc == 0)
		rc = put_msg(f, &e, &m);
	if (fclose(f) != 0 || rc != 0) {
		fprintf(stderr, "cm_pcap: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
