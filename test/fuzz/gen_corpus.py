#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Seed inputs for the droce fuzz harnesses, from valid traffic: writes one file
per seed into <outdir>/fuzz_rx, <outdir>/fuzz_tm and <outdir>/fuzz_args.
devtools/fuzz --seed runs it, lets each harness turn the fixed-up frames into
raw ones too (DROCE_FUZZ_DUMP), and minimises the lot with -merge=1 into
test/fuzz/corpus/<harness>/.

Record format and fix flags: test/fuzz/fuzz_common.c (keep in step).
"""
import os
import struct
import sys

# record types
RAW, V4, V6, ARP, CTRL, CHAIN, POLL = 0, 1, 2, 3, 4, 5, 6
BURST = 0x08
# fix flags
F_QPN, F_PSN, F_UNA, F_KEY, F_QKEY, F_MTU, F_PAD, F_BTH = (1 << i for i in range(8))
F_BADICRC, F_SRC, F_LEN, F_HOOK, F_ACKREQ = (1 << i for i in range(8, 13))
REQ = F_QPN | F_PSN | F_BTH | F_PAD | F_ACKREQ
RESP = F_QPN | F_PSN | F_UNA | F_BTH | F_PAD

# opcodes (IBA table 38)
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = range(6)
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = range(6, 12)
READ_REQ, RD_FIRST, RD_MIDDLE, RD_LAST, RD_ONLY, ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = range(12, 21)
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17
UC, UD = 0x20, 0x60
UD_SEND_ONLY, UD_SEND_ONLY_IMM = 0x64, 0x65


def rec(t, body):
    return bytes([t]) + struct.pack('<H', len(body)) + body


def fix(flags, qp=0, delta=0, mr=0, off=0, mult=0):
    return struct.pack('<HBbBHB', flags, qp, delta, mr, off, mult)


def bth(op, se=False):
    return struct.pack('>BBHII', op, 0x40 | (0x80 if se else 0), 0xffff, 0, 0)


def reth(length=0):
    return struct.pack('>QII', 0, 0, length)


def aeth(syn=0, msn=0):
    return struct.pack('>I', syn << 24 | msn)


def deth(qkey=0x11111111, sqp=0x77):
    return struct.pack('>II', qkey, sqp)


def atmeth(swap=5, comp=0):
    return struct.pack('>QIQQ', 0, 0, swap, comp)


def pay(n, seed=1):
    return bytes((seed * 131 + i * 7) & 0xff for i in range(n))


def v4(flags, qp, op, ext=b'', data=b'', delta=0, mr=0, off=0, mult=0, t=V4, se=False):
    return rec(t, fix(flags, qp, delta, mr, off, mult) + bth(op, se) + ext + data)


def ctrl(*b):
    return rec(CTRL, bytes(b))


def poll(n=1):
    return rec(POLL, bytes([n]))


def arp(flags, sip=2, sha=b'\x02\x00\x00\x00\x00\x02', xor=b''):
    return rec(ARP, bytes([flags, sip]) + sha + xor)


def rx_seeds():
    """fuzz_rx: QPs 0 rc_req, 1 rc_wonly, 2 uc, 3 ud, 4 rc_srq, 5 ud_srq, 6 uc_srq,
    7 rc_rtr, 8 rc_init, 9 rc_reset, 10 rc_err, 11 rc_noaccess; MRs 0 rw, 1 ro,
    2 wo, 3 atomic, 4 none, 5 pd2, 6 iova_top, 7 iova_odd, 8 send buffers, 9 receive buffers."""
    s = {}
    rc_like = {0: 0, 1: 0, 2: UC, 4: 0, 6: UC, 7: 0, 8: 0, 9: 0, 10: 0, 11: 0}
    for qp, tr in rc_like.items():
        s[f'send_only_qp{qp}'] = v4(REQ, qp, tr | SEND_ONLY, data=pay(64))
    for qp in (0, 2, 4, 6):
        tr = rc_like[qp]
        s[f'send_3pkt_qp{qp}'] = (v4(REQ | F_MTU, qp, tr | SEND_FIRST, data=pay(8)) +
                                  v4(REQ | F_MTU, qp, tr | SEND_MIDDLE) +
                                  v4(REQ, qp, tr | SEND_LAST_IMM, b'\0\0\0\x2a', pay(100)))
        s[f'write_only_qp{qp}'] = v4(REQ | F_KEY | F_LEN, qp, tr | WRITE_ONLY, reth(), pay(200),
                                     off=64)
        s[f'write_3pkt_qp{qp}'] = (v4(REQ | F_KEY | F_LEN | F_MTU, qp, tr | WRITE_FIRST, reth(),
                                      mult=2) +
                                   v4(REQ | F_MTU, qp, tr | WRITE_MIDDLE) +
                                   v4(REQ | F_MTU, qp, tr | WRITE_LAST_IMM, b'\0\0\0\x07'))
        s[f'write_imm_qp{qp}'] = v4(REQ | F_KEY | F_LEN, qp, tr | WRITE_ONLY_IMM,
                                    reth() + b'\0\0\0\x09', pay(33), mr=6, off=16)
    s['send_only_imm'] = v4(REQ, 0, SEND_ONLY_IMM, b'\x12\x34\x56\x78', pay(5), se=True)
    s['send_zero'] = v4(REQ, 0, SEND_ONLY)
    s['send_inv_unsupported'] = v4(REQ, 0, SEND_ONLY_INV, b'\0\0\0\x01', pay(8))
    for mr in range(10):
        s[f'write_mr{mr}'] = v4(REQ | F_KEY | F_LEN, 0, WRITE_ONLY, reth(), pay(48), mr=mr)
        s[f'read_mr{mr}'] = v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mr=mr, mult=3)
        s[f'cas_mr{mr}'] = v4(REQ | F_KEY, 0, CMP_SWAP, atmeth(7, 0), mr=mr, off=8)
    s['write_stale_key'] = (ctrl(3, 0) + v4(REQ | F_KEY | F_LEN, 0, WRITE_ONLY, reth(), pay(8),
                                            mr=0x10))
    s['write_end_of_mr'] = v4(REQ | F_KEY | F_LEN, 0, WRITE_ONLY, reth(), pay(64), mr=0x20, off=64)
    s['write_zero'] = v4(REQ | F_KEY, 0, WRITE_ONLY, reth(0))
    s['read_zero'] = v4(REQ | F_KEY, 0, READ_REQ, reth(0))
    s['read_noaccess_qp'] = v4(REQ | F_KEY | F_LEN, 11, READ_REQ, reth(), mult=1)
    s['read_wonly_qp'] = v4(REQ | F_KEY | F_LEN, 1, READ_REQ, reth(), mult=1)
    s['fetch_add'] = v4(REQ | F_KEY, 0, FETCH_ADD, atmeth(1), mr=3)
    s['atomic_iova_odd'] = v4(REQ | F_KEY, 0, FETCH_ADD, atmeth(1), mr=7, off=5)
    s['atomic_unaligned'] = v4(REQ | F_KEY, 0, FETCH_ADD, atmeth(1), off=3)
    s['dup_send'] = v4(REQ, 0, SEND_ONLY, data=pay(8)) + v4(REQ, 0, SEND_ONLY, data=pay(8), delta=-1)
    s['dup_read'] = (v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mult=2) +
                     v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mult=2, delta=-2))
    s['dup_atomic'] = (v4(REQ | F_KEY, 0, FETCH_ADD, atmeth(1)) +
                       v4(REQ | F_KEY, 0, FETCH_ADD, atmeth(1), delta=-1))
    s['psn_ahead'] = v4(REQ, 0, SEND_ONLY, data=pay(8), delta=5) + v4(REQ, 0, SEND_ONLY, delta=3)
    s['uc_gap'] = v4(REQ | F_MTU, 2, UC | SEND_FIRST) + v4(REQ, 2, UC | SEND_LAST, delta=1)
    s['bad_seq'] = v4(REQ | F_MTU, 0, SEND_FIRST) + v4(REQ, 0, WRITE_LAST, data=pay(4))
    s['short_middle'] = v4(REQ | F_MTU, 0, SEND_FIRST) + v4(REQ, 0, SEND_MIDDLE, data=pay(4))
    s['too_long'] = v4(REQ | F_KEY, 0, WRITE_ONLY, reth(8), pay(64))
    s['rnr'] = b''.join(v4(REQ, 4, SEND_ONLY, data=pay(16, i)) for i in range(10))
    s['burst'] = b''.join(v4(REQ, 0, SEND_ONLY, data=pay(16, i), t=V4 | BURST) for i in range(6))
    for qp in (3, 5):
        s[f'ud_qp{qp}'] = v4(F_QPN | F_BTH | F_PAD | F_QKEY, qp, UD_SEND_ONLY, deth(), pay(100))
        s[f'ud_imm_qp{qp}'] = v4(F_QPN | F_BTH | F_PAD | F_QKEY, qp, UD_SEND_ONLY_IMM,
                                 deth() + b'\0\0\0\x05', pay(4090))
    s['ud_bad_qkey'] = v4(F_QPN | F_BTH | F_PAD, 3, UD_SEND_ONLY, deth(0x22), pay(10))
    s['ud_mtu'] = v4(F_QPN | F_BTH | F_PAD | F_QKEY | F_MTU, 3, UD_SEND_ONLY, deth())
    # the completer: rc_req's window is SEND x3, WRITE, READ x2, CAS, FAA, SEND_IMM, WRITE_IMM x2
    s['ack_all'] = v4(RESP, 0, ACK, aeth(0x1f), delta=10)
    s['ack_some'] = v4(RESP, 0, ACK, aeth(0x1f), delta=2) + v4(RESP, 0, ACK, aeth(0x1f), delta=3)
    s['nak_seq'] = v4(RESP, 0, ACK, aeth(0x60), delta=1)
    s['nak_inv'] = v4(RESP, 0, ACK, aeth(0x61))
    s['nak_acc'] = v4(RESP, 0, ACK, aeth(0x62), delta=3)
    s['nak_op'] = v4(RESP, 0, ACK, aeth(0x63))
    s['rnr_nak'] = v4(RESP, 0, ACK, aeth(0x21), delta=1) + poll(3)
    s['read_resp'] = (v4(RESP, 0, ACK, aeth(0x1f), delta=3) +
                      v4(RESP | F_MTU, 0, RD_FIRST, aeth(), delta=0) +
                      v4(RESP, 0, RD_LAST, aeth(), pay(1024), delta=0) +
                      v4(RESP, 0, ATOMIC_ACK, aeth() + struct.pack('>Q', 42), delta=0) +
                      v4(RESP, 0, ATOMIC_ACK, aeth() + struct.pack('>Q', 43), delta=0) +
                      v4(RESP, 0, ACK, aeth(0x1f), delta=2))
    s['read_resp_only_gap'] = v4(RESP, 0, RD_ONLY, aeth(), pay(64), delta=5)
    s['read_resp_middle'] = v4(RESP | F_MTU, 0, RD_MIDDLE, aeth(), delta=4)
    s['atomic_ack_alone'] = v4(RESP, 0, ATOMIC_ACK, aeth() + struct.pack('>Q', 1), delta=6)
    s['ghost_ack'] = v4(RESP, 1, ACK, aeth(0x1f), delta=3)
    s['post_then_ack'] = (ctrl(0, 0, 4, 0x10, 0, 1) + ctrl(0, 0, 2, 0x20, 0, 1) +
                          v4(RESP, 0, ACK, aeth(0x1f), delta=12))
    s['sqd'] = ctrl(4, 0) + v4(RESP, 0, ACK, aeth(0x1f), delta=2) + ctrl(5, 0)
    s['err_then_frames'] = ctrl(1, 0) + v4(REQ, 0, SEND_ONLY, data=pay(8)) + ctrl(2, 0)
    s['ud_post'] = ctrl(0, 3, 0, 0x40, 0, 1) + ctrl(0, 3, 1, 0, 0x10, 9)
    s['ud_unknown_host'] = (ctrl(0, 3, 0, 0x40, 0, 0x21) + poll(2) +
                            v4(F_QPN | F_BTH | F_PAD | F_QKEY | F_SRC, 3, UD_SEND_ONLY, deth(), pay(8)) +
                            arp(0x01 | 0x02 | 0x10, sip=3, sha=b'\x02\x00\x00\x00\x00\x33'))
    s['bad_lkey_send'] = ctrl(0, 0, 0, 0x40, 0, 0x11) + ctrl(0, 1, 4, 0x40, 0, 0x11)
    s['big_send_ack'] = (ctrl(0, 0, 0, 0, 0xc0, 1) + v4(RESP, 0, ACK, aeth(0x1f), delta=14) +
                         poll(1) + v4(RESP, 0, ACK, aeth(0x1f), delta=40))
    s['rnr_twice'] = (v4(RESP, 0, ACK, aeth(0x21)) + poll(1) + v4(RESP, 0, ACK, aeth(0x21)) +
                      poll(1) + v4(RESP, 0, ACK, aeth(0x21)))
    s['big_send_ack_empty_window'] = (ctrl(0, 1, 0, 0, 0xc0, 1) + v4(RESP, 1, ACK, aeth(0x1f), delta=10) +
                                      poll(2) + v4(RESP, 1, ACK, aeth(0x1f), delta=47))
    s['send_5pkt'] = (v4(REQ | F_MTU, 0, SEND_FIRST) + v4(REQ | F_MTU, 0, SEND_MIDDLE) +
                      v4(REQ | F_MTU, 0, SEND_MIDDLE) + v4(REQ | F_MTU, 0, SEND_MIDDLE) +
                      v4(REQ, 0, SEND_LAST, data=pay(20)))
    s['send_5pkt_srq'] = (v4(REQ | F_MTU, 4, SEND_FIRST) + v4(REQ | F_MTU, 4, SEND_MIDDLE) +
                          v4(REQ | F_MTU, 4, SEND_MIDDLE) + v4(REQ | F_MTU, 4, SEND_MIDDLE) +
                          v4(REQ, 4, SEND_LAST, data=pay(20)))
    s['srq_limit'] = b''.join(v4(F_QPN | F_BTH | F_PAD | F_QKEY, 5, UD_SEND_ONLY, deth(), pay(8, i))
                              for i in range(6))
    s['reads_burst'] = b''.join(v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mult=8, delta=8 * i,
                                   t=V4 | BURST) for i in range(6))
    s['read_then_rereg'] = (v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mult=60) + ctrl(3, 0) +
                            poll(3))
    s['read_then_fatal'] = (v4(REQ | F_KEY | F_LEN, 0, READ_REQ, reth(), mult=2, t=V4 | BURST) +
                            v4(REQ | F_KEY | F_LEN, 0, WRITE_ONLY, reth(), pay(8), mr=4, delta=2))
    s['cq_overrun'] = b''.join(v4(REQ, 2, UC | SEND_ONLY, data=pay(8, i), delta=i) for i in range(5))
    s['rereg_recv'] = ctrl(6, 0) + v4(REQ, 0, SEND_ONLY, data=pay(8)) + ctrl(6, 3) + \
        v4(F_QPN | F_BTH | F_PAD | F_QKEY, 3, UD_SEND_ONLY, deth(), pay(10))
    s['ud_no_wqe'] = b''.join(v4(F_QPN | F_BTH | F_PAD | F_QKEY, 3, UD_SEND_ONLY, deth(), pay(8, i))
                              for i in range(10))
    # receive checks before the QP
    s['bad_icrc'] = v4(REQ | F_BADICRC, 0, SEND_ONLY, data=pay(8))
    s['unknown_src'] = v4(REQ | F_SRC, 0, SEND_ONLY, data=pay(8))
    s['bad_pkey'] = v4(F_QPN | F_PSN | F_PAD, 0, SEND_ONLY, data=pay(8))
    s['v6'] = v4(REQ, 0, SEND_ONLY, data=pay(8), t=V6)
    s['chain'] = rec(CHAIN, b'\x15' + fix(REQ, 0) + bth(SEND_ONLY) + pay(300))
    s['chain_first_only'] = rec(CHAIN, b'\x80' + fix(REQ, 0) + bth(SEND_ONLY) + pay(30))
    s['no_qp'] = v4(F_PSN | F_BTH | F_PAD, 0, SEND_ONLY, data=pay(8))
    s['arp_request'] = arp(0x02 | 0x04)
    s['arp_reply'] = arp(0x01 | 0x02 | 0x10, sip=7, sha=b'\x02\x00\x00\x00\x00\x77')
    s['arp_gratuitous'] = arp(0x08 | 0x04 | 0x10)
    s['arp_bad'] = arp(0x02, xor=b'\x00\x01')
    s['arp_short'] = arp(0x22, sip=20)
    s['raw_junk'] = rec(RAW, bytes(14) + b'\x08\x00' + bytes(40))
    return s


def tm_seeds():
    """fuzz_tm: QPs 0 tm_rc, 1 tm_rc_req; MRs 0 rw, 1 ro, 2 none, 3 send buffers,
    4 tagged buffers. Hook byte: bits 0-1 TMH op (0 NO_TAG, 1 RNDV, 2 FIN,
    3 EAGER), bits 2-4 tag slot, bit 5 RVH, bits 6-7 RVH length shift."""
    s = {}
    TMREQ = REQ | F_HOOK
    tmh = bytes(16)
    for k in range(8):
        s[f'eager_tag{k}'] = v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(40), mult=3 | k << 2)
    s['eager_3pkt'] = (v4(TMREQ | F_MTU, 0, SEND_FIRST, data=tmh, mult=3 | 3 << 2) +
                       v4(REQ | F_MTU, 0, SEND_MIDDLE) + v4(REQ, 0, SEND_LAST, data=pay(9)))
    s['eager_too_long'] = v4(TMREQ | F_MTU, 0, SEND_ONLY, data=tmh, mult=3)
    s['no_tag'] = v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(20), mult=0)
    s['fin'] = v4(TMREQ, 0, SEND_ONLY, data=tmh, mult=2)
    s['plain_short'] = v4(REQ, 0, SEND_ONLY, data=pay(7))
    s['unexpected'] = (v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3 | 7 << 2) +
                       v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3 | 7 << 2) +
                       v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3 | 0 << 2))
    s['rndv_hw'] = (v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16) + pay(16), mult=1 | 0x20) +
                    v4(RESP, 0, RD_ONLY, aeth(), pay(64)) + poll(2) +
                    v4(RESP, 0, ACK, aeth(0x1f)))
    s['rndv_hw_2pkt'] = (v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16), mult=1 | 0x20 | 3 << 2) +
                         v4(RESP | F_MTU, 0, RD_FIRST, aeth()) +
                         v4(RESP, 0, RD_LAST, aeth(), pay(8192 - 1024 * 7)))
    s['rndv_sw_too_big'] = v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16), mult=1 | 4 << 2)
    s['rndv_sw_long_hdr'] = v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16) + pay(80), mult=1 | 0x20)
    s['rndv_then_reset'] = (v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16), mult=1 | 0x20 | 1 << 2) +
                            ctrl(2, 0))
    s['rndv_nak'] = (v4(TMREQ, 0, SEND_ONLY, data=tmh + bytes(16), mult=1 | 0x20) +
                     v4(RESP, 0, ACK, aeth(0x62)))
    s['tag_add_del'] = (ctrl(3, 9, 1, 0x55, 0, 0, 0, 0, 0, 0, 0) +
                        v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3) + ctrl(4, 0, 1) +
                        ctrl(4, 9, 1))
    s['tag_del_bad'] = ctrl(4, 12, 1, 15) + ctrl(4, 12, 0, 200)
    # a DEL racing with its tag's consumption: a rendezvous request of two
    # packets takes tag 3 at the first; the DEL fails (silently if unsignaled)
    for sig in (0, 1):
        s[f'tag_del_mid_rndv{sig}'] = (v4(TMREQ | F_MTU, 0, SEND_FIRST, data=tmh, mult=1 | 3 << 2) +
                                       ctrl(4, 3, sig) + v4(REQ, 0, SEND_LAST, data=pay(9)))
    s['tag_no_sge'] = (ctrl(4, 0, 0) + ctrl(3, 0, 8 | 1, 0, 1) +
                       v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3))
    s['tag_bad_lkey'] = (ctrl(4, 0, 0) + ctrl(3, 0, 16 | 1, 0, 1) +
                         v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3))
    s['sync_wrong'] = (ctrl(5, 0, 1, 3) + v4(TMREQ, 0, SEND_ONLY, data=tmh + pay(8), mult=3))
    s['req_qp_window'] = v4(RESP, 1, ACK, aeth(0x1f), delta=4) + v4(RESP, 1, ACK, aeth(0x60), delta=5)
    s['err_mid_eager'] = v4(TMREQ | F_MTU, 0, SEND_FIRST, data=tmh, mult=3 | 2 << 2) + ctrl(1, 0)
    s['post_send'] = ctrl(0, 0, 0, 0x20, 0, 1)
    return s


def args_seeds():
    s = {}
    droce = ['ethdev=net_ring0,ip=10.0.0.1',
             'ethdev=p,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4200,lcore=inline,'
             'neigh=10.0.0.2@02:00:00:00:00:02,link_wait=100',
             'ethdev=p,ip=1.2.3.4,lcore=auto,neigh=1.1.1.1@aa:bb:cc:dd:ee:ff,neigh=2.2.2.2@02:00:00:00:00:09',
             'ethdev=p,ip=10.0.0.1,mtu=576,lcore=3', 'ip=0.0.0.0,ethdev=x,mtu=9601']
    impair = ['ethdev=net_ring_a,drop=0.05,dup=0.01,reorder=0.05,corrupt=0.01,seed=7,dir=tx',
              'ethdev=x,delay_us=100,dir=both,seed=0x10', 'ethdev=x,drop=.5,dir=rx', 'ethdev=x,drop=1e-3']
    shm = ['link=abc', 'link=a-b_c.d', 'link=' + 'x' * 64]
    eal = ['--no-huge --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1',
           '  -l 0\t--no-pci\n-m 512 ']
    for i, v in enumerate(droce):
        s[f'droce{i}'] = b'\x00' + v.encode()
    for i, v in enumerate(impair):
        s[f'impair{i}'] = b'\x01' + v.encode()
    for i, v in enumerate(shm):
        s[f'shm{i}'] = b'\x02' + v.encode()
    for i, v in enumerate(eal):
        s[f'eal{i}'] = b'\x03' + v.encode()
        s[f'eal_cap{i}'] = b'\x07' + v.encode()
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else 'seeds'
    for name, seeds in (('fuzz_rx', rx_seeds()), ('fuzz_tm', tm_seeds()), ('fuzz_args', args_seeds())):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for k, v in seeds.items():
            with open(os.path.join(d, k), 'wb') as f:
                f.write(v)
        print(f'{name}: {len(seeds)} seeds in {d}')


if __name__ == '__main__':
    main()
