/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One CM message of each attribute with every field set to a value of its
 * own (no two neighbours alike, most of each field's width used), for the
 * codec's round trips (test_cm_mad) and the frames tshark decodes (cm_pcap).
 * The REQ carries an IPv4 IP CM header, the SIDR_REQ an IPv6 one.
 */
#ifndef DROCE_TEST_CM_SAMPLES_H
#define DROCE_TEST_CM_SAMPLES_H

#include <stdint.h>

#include "cm_mad.h"

#define CM_NB_SAMPLES	9

/* The nine attributes, REQ (0x10) to SIDR_REP (0x18). */
extern const uint16_t cm_sample_attrs[CM_NB_SAMPLES];

/* @m := the sample message of @attr_id (zeroed first, padding included). */
void cm_sample(uint16_t attr_id, struct droce_cm_msg *m);

/* @n bytes of a pattern that starts at @seed. */
void cm_fill(uint8_t *p, unsigned int n, uint8_t seed);

/*
 * The private data of @m's attribute: its bytes, *len its length member,
 * *max its size. NULL for an attribute that is none of the nine.
 */
uint8_t *cm_pdata(struct droce_cm_msg *m, uint32_t **len, uint32_t *max);

#endif /* DROCE_TEST_CM_SAMPLES_H */
