#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pyverbs (rdma-core v44's Cython bindings) over the drop-in
# libibverbs, object API only. run_dropin_pyverbs.sh starts it with
# LD_LIBRARY_PATH=<build/dropin> and a DROCE_EAL giving one device, droce0,
# on a net_ring port that loops back to itself, so that two QPs of droce0
# reach each other through the ring:
#
#   RC: PD, MR, CQ, two RC QPs (ibv_create_qp) taken to RTS against each other
#       through GID 0 (::ffff:<ip>); SEND with and without immediate data,
#       RDMA WRITE and RDMA READ; a type 1 memory window bound with
#       ibv_bind_mw and an RDMA WRITE through it; every completion
#       successful, bytes compared;
#       CQ.resize with completions held (EINVAL below them, then all in
#       order) and MR.rereg taking remote write away (same rkey, refused).
#   UD: two UD QPs (RTS through QP(pd, init_attr, qp_attr)), an AH on GID 0,
#       SEND with immediate; the receive buffer holds the 40-byte GRH first.
#   TM: tag matching as rdma-core's own tests drive it: an extended CQ with
#       TM info, a TM SRQ, a server RC QP on it with no send queue of its own;
#       ADD, an expected eager message (MATCH | DATA_VALID, the payload
#       without its TMH), an unexpected one (whole, in the SRQ WQE) and the
#       SYNC after it, and a rendezvous: MATCH, the engine's RDMA READ of the
#       sender's data, the FIN the sender receives, DATA_VALID (the tag only
#       with MATCH).
#
# Exit 0 if every step passed, 1 otherwise (the failing step is printed).
import errno
import os
import sys
import time
import traceback

from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
from pyverbs.srq import SRQ, SrqInitAttrEx, OpsWr
from pyverbs.qp import QP, QPInitAttr, QPAttr, QPCap
from pyverbs.wr import SendWR, RecvWR, SGE
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e

DEV = os.environ.get('PYVERBS_DEV', 'droce0')
PORT = 1
GID_INDEX = 0
QKEY = 0x11111111
SIZE = 4096
TIMEOUT = 10.0
step = 'start'


def say(*a):
    print('dropin_pyverbs:', *a, flush=True)


def poll(cq, what, n=1):
    """Poll until n completions arrive; each must be successful."""
    wcs = []
    deadline = time.monotonic() + TIMEOUT
    while len(wcs) < n:
        npolled, got = cq.poll(num_entries=n - len(wcs))
        if npolled > 0:
            wcs.extend(got[:npolled])
        elif time.monotonic() > deadline:
            raise RuntimeError('%s: %d of %d completions in %.0f s' % (what, len(wcs), n, TIMEOUT))
    for wc in wcs:
        if wc.status != e.IBV_WC_SUCCESS:
            raise RuntimeError('%s: wr_id %d status %d (%s), opcode %d, vendor_err %d' %
                               (what, wc.wr_id, wc.status, wc_status_str(wc.status),
                                wc.opcode, wc.vendor_err))
    return wcs


def wc_status_str(s):
    names = [k for k in dir(e) if k.startswith('IBV_WC_') and k not in ('IBV_WC_SEND',)
             and not k.startswith('IBV_WC_EX_') and getattr(e, k) == s
             and (k.endswith('_ERR') or k in ('IBV_WC_SUCCESS', 'IBV_WC_WR_FLUSH_ERR'))]
    return names[0] if names else '?'


def pattern(seed, n):
    return bytes((seed + i * 7 + (i >> 8)) & 0xff for i in range(n))


def connect_rc(qpa, qpb, gid, access):
    """Take two RC QPs of one device to RTS against each other."""
    global step
    for me, peer, psn_me, psn_peer in ((qpa, qpb, 0x1000, 0x2000), (qpb, qpa, 0x2000, 0x1000)):
        step = 'RC: modify to INIT'
        a = QPAttr()
        a.qp_state = e.IBV_QPS_INIT
        a.pkey_index = 0
        a.port_num = PORT
        a.qp_access_flags = access
        me.to_init(a)
        step = 'RC: modify to RTR'
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTR
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = peer.qp_num
        a.rq_psn = psn_peer
        a.max_dest_rd_atomic = 4
        a.min_rnr_timer = 12
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=GID_INDEX, hop_limit=64),
                           is_global=1, port_num=PORT)
        me.to_rtr(a)
        step = 'RC: modify to RTS'
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTS
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.sq_psn = psn_me
        a.max_rd_atomic = 4
        me.to_rts(a)


def rc_test(ctx, pd, gid):
    global step
    access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ)
    step = 'RC: CQ'
    cqa, cqb = CQ(ctx, 64), CQ(ctx, 64)
    step = 'RC: MR'
    mra, mrb = MR(pd, SIZE, access), MR(pd, SIZE, access)
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    step = 'RC: QP(pd, QPInitAttr) (ibv_create_qp)'
    qpa = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqa, rcq=cqa, cap=cap, sq_sig_all=1))
    qpb = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqb, rcq=cqb, cap=cap, sq_sig_all=1))
    say('RC QPs 0x%x and 0x%x on %s, GID %s' % (qpa.qp_num, qpb.qp_num, DEV, gid))
    connect_rc(qpa, qpb, gid, access)

    # SEND (4096 B: four 1024-byte packets) and SEND with immediate (1 B).
    # pyverbs passes imm_data through as the raw __be32 both ways.
    for n, imm in ((SIZE, None), (1, 0x12345678), (1000, None)):
        step = 'RC: SEND %d B%s' % (n, ' with immediate' if imm is not None else '')
        data = pattern(n & 0xff, n)
        mra.write(data, n)
        mrb.write(b'\0' * SIZE, SIZE)
        qpb.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mrb.buf, SIZE, mrb.lkey)]))
        op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
        wr = SendWR(wr_id=2, opcode=op, num_sge=1, sg=[SGE(mra.buf, n, mra.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED, imm_data=imm or 0)
        qpa.post_send(wr)
        poll(cqa, step + ' (send completion)')
        wc, = poll(cqb, step + ' (receive completion)')
        if wc.byte_len != n:
            raise RuntimeError('%s: receive byte_len %d' % (step, wc.byte_len))
        if imm is not None:
            if not wc.wc_flags & e.IBV_WC_WITH_IMM or wc.imm_data != imm:
                raise RuntimeError('%s: wc_flags 0x%x imm_data 0x%x' % (step, wc.wc_flags, wc.imm_data))
        got = mrb.read(n, 0)
        if got != data:
            raise RuntimeError('%s: received bytes differ' % step)
        say('ok   %s: %d bytes, wc opcode %d' % (step, wc.byte_len, wc.opcode))

    # RDMA WRITE a -> b, then RDMA READ b -> a
    step = 'RC: RDMA WRITE 3000 B'
    data = pattern(0x5a, 3000)
    mra.write(data, 3000)
    mrb.write(b'\0' * SIZE, SIZE)
    wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mra.buf, 3000, mra.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(mrb.rkey, mrb.buf + 100)
    qpa.post_send(wr)
    poll(cqa, step)
    if mrb.read(3000, 100) != data:
        raise RuntimeError('%s: target bytes differ' % step)
    say('ok   %s' % step)
    step = 'RC: RDMA READ 2500 B'
    data = pattern(0xa5, 2500)
    mrb.write(data, 2500)
    mra.write(b'\0' * SIZE, SIZE)
    wr = SendWR(wr_id=4, opcode=e.IBV_WR_RDMA_READ, num_sge=1, sg=[SGE(mra.buf + 7, 2500, mra.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(mrb.rkey, mrb.buf)
    qpa.post_send(wr)
    wc, = poll(cqa, step)
    if mra.read(2500, 7) != data:
        raise RuntimeError('%s: read bytes differ' % step)
    say('ok   %s: wc byte_len %d' % (step, wc.byte_len))

    # A type 1 memory window on an MR with MW_BIND, bound by ibv_bind_mw (the
    # verbs.h inline calling the drop-in's context op), then an RDMA WRITE
    # through its R_Key lands inside it
    step = 'RC: MW type 1, ibv_bind_mw, RDMA WRITE through it'
    mrw = MR(pd, SIZE, access | e.IBV_ACCESS_MW_BIND)
    mw = MW(pd, e.IBV_MW_TYPE_1)
    old = mw.rkey
    qpb.bind_mw(mw, MWBind(MWBindInfo(mrw, mrw.buf + 1024, 2048, e.IBV_ACCESS_REMOTE_WRITE),
                           e.IBV_SEND_SIGNALED))
    wc, = poll(cqb, step + ' (bind completion)')
    if wc.opcode != e.IBV_WC_BIND_MW or mw.rkey == old or (mw.rkey ^ old) & ~0xff:
        raise RuntimeError('%s: wc opcode %d, rkey 0x%x after 0x%x' % (step, wc.opcode, mw.rkey, old))
    data = pattern(0x77, 2048)
    mra.write(data, 2048)
    mrw.write(b'\0' * SIZE, SIZE)
    wr = SendWR(wr_id=6, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mra.buf, 2048, mra.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(mw.rkey, mrw.buf + 1024)
    qpa.post_send(wr)
    poll(cqa, step)
    if mrw.read(2048, 1024) != data or mrw.read(1024, 0) != b'\0' * 1024:
        raise RuntimeError('%s: target bytes differ' % step)
    mw.close()
    mrw.close()
    say('ok   %s: rkey 0x%x' % (step, old))

    # ibv_resize_cq: qpb's CQ holds three receive completions; shrinking
    # below them is EINVAL, to exactly them keeps them, in order
    step = 'RC: CQ.resize with 3 completions held'
    for i in range(3):
        qpb.post_recv(RecvWR(wr_id=10 + i, num_sge=1, sg=[SGE(mrb.buf, SIZE, mrb.lkey)]))
        qpa.post_send(SendWR(wr_id=20 + i, opcode=e.IBV_WR_SEND, num_sge=1,
                             sg=[SGE(mra.buf, 100 + i, mra.lkey)], send_flags=e.IBV_SEND_SIGNALED))
    poll(cqa, step + ' (send completions)', 3)
    try:
        cqb.resize(2)
        raise RuntimeError('%s: resize(2) succeeded' % step)
    except PyverbsRDMAError as ex:
        if ex.error_code != errno.EINVAL:
            raise
    cqb.resize(3)
    wcs = poll(cqb, step + ' (receive completions)', 3)
    if [(w.wr_id, w.byte_len) for w in wcs] != [(10, 100), (11, 101), (12, 102)]:
        raise RuntimeError('%s: completions %s' % (step, [(w.wr_id, w.byte_len) for w in wcs]))
    say('ok   %s: EINVAL below them, then all three in order' % step)

    # ibv_rereg_mr: remote write taken away, the same rkey then refused
    step = 'RC: MR.rereg(IBV_REREG_MR_CHANGE_ACCESS)'
    rkey = mrb.rkey
    mrb.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, pd, 0, 0,
              e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    if mrb.rkey != rkey:
        raise RuntimeError('%s: rkey 0x%x became 0x%x' % (step, rkey, mrb.rkey))
    wr = SendWR(wr_id=5, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mra.buf, 8, mra.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(mrb.rkey, mrb.buf)
    qpa.post_send(wr)
    deadline = time.monotonic() + TIMEOUT
    while True:
        npolled, got = cqa.poll()
        if npolled:
            break
        if time.monotonic() > deadline:
            raise RuntimeError('%s: no completion' % step)
    if got[0].status != e.IBV_WC_REM_ACCESS_ERR:
        raise RuntimeError('%s: WRITE status %d' % (step, got[0].status))
    say('ok   %s: same rkey, a WRITE gets IBV_WC_REM_ACCESS_ERR' % step)
    for o in (qpa, qpb, mra, mrb, cqa, cqb):
        o.close()


def ud_test(ctx, pd, gid):
    global step
    GRH = 40
    n = 1000
    step = 'UD: CQ, MR'
    cqa, cqb = CQ(ctx, 64), CQ(ctx, 64)
    mra = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    mrb = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    qps = []
    for cq in (cqa, cqb):
        step = 'UD: QP(pd, QPInitAttr, QPAttr) (ibv_create_qp, to RTS)'
        a = QPAttr()
        a.qkey = QKEY
        a.pkey_index = 0
        a.port_num = PORT
        qps.append(QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap, sq_sig_all=1), a))
    qpa, qpb = qps
    say('UD QPs 0x%x and 0x%x, states %d %d' % (qpa.qp_num, qpb.qp_num, qpa.qp_state, qpb.qp_state))
    step = 'UD: AH (ibv_create_ah)'
    ah = AH(pd, attr=AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=GID_INDEX, hop_limit=64),
                            is_global=1, port_num=PORT))
    step = 'UD: SEND %d B with immediate' % n
    data = pattern(0x33, n)
    mra.write(data, n)
    mrb.write(b'\0' * SIZE, SIZE)
    qpb.post_recv(RecvWR(wr_id=5, num_sge=1, sg=[SGE(mrb.buf, GRH + n, mrb.lkey)]))
    wr = SendWR(wr_id=6, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1, sg=[SGE(mra.buf, n, mra.lkey)],
                send_flags=e.IBV_SEND_SIGNALED, imm_data=0x0badcafe)
    wr.set_wr_ud(ah, qpb.qp_num, QKEY)
    qpa.post_send(wr)
    poll(cqa, step + ' (send completion)')
    wc, = poll(cqb, step + ' (receive completion)')
    if wc.byte_len != GRH + n:
        raise RuntimeError('%s: receive byte_len %d, want %d' % (step, wc.byte_len, GRH + n))
    if wc.src_qp != qpa.qp_num:
        raise RuntimeError('%s: src_qp 0x%x, want 0x%x' % (step, wc.src_qp, qpa.qp_num))
    if not wc.wc_flags & e.IBV_WC_WITH_IMM or wc.imm_data != 0x0badcafe:
        raise RuntimeError('%s: wc_flags 0x%x imm_data 0x%x' % (step, wc.wc_flags, wc.imm_data))
    if mrb.read(n, GRH) != data:
        raise RuntimeError('%s: received bytes differ' % step)
    grh = mrb.read(GRH, 0)
    say('ok   %s: byte_len %d (GRH + %d), src_qp 0x%x, GRH %s' %
        (step, wc.byte_len, n, wc.src_qp, grh[20:40].hex()))
    for o in (qpa, qpb, ah, mra, mrb, cqa, cqb):
        o.close()

def tm_poll(cqx, what, opcode, flags=None):
    """One completion of the extended CQ: (wr_id, byte_len, wc_flags, tag)."""
    deadline = time.monotonic() + TIMEOUT
    attr = PollCqAttr()
    while True:
        try:
            cqx.start_poll(attr)
            break
        except Exception:
            # pyverbs raises on ENOENT in some versions; poll again
            if time.monotonic() > deadline:
                raise RuntimeError('%s: no completion in %.0f s' % (what, TIMEOUT))
    try:
        got = (cqx.status, cqx.wr_id, cqx.read_opcode(), cqx.read_byte_len(),
               cqx.read_wc_flags(), cqx.read_tm_info().tag)
    finally:
        cqx.end_poll()
    status, wr_id, op, byte_len, wc_flags, tag = got
    if status != e.IBV_WC_SUCCESS or op != opcode or (flags is not None and
                                                       wc_flags & 0x7f != flags):
        raise RuntimeError('%s: status %d opcode %d wc_flags 0x%x (want opcode %d flags %s)' %
                           (what, status, op, wc_flags, opcode, flags))
    return wr_id, byte_len, wc_flags, tag


def tmh(op, tag, ctx=0):
    return bytes([op, 0, 0, 0]) + ctx.to_bytes(4, 'big') + tag.to_bytes(8, 'big')


def tm_test(ctx, pd, gid):
    global step
    TMH = 16
    access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ)
    step = 'TM: query_device_ex().tm_caps'
    caps = ctx.query_device_ex().tm_caps
    if not caps.flags & e.IBV_TM_CAP_RC:
        raise RuntimeError('%s: no IBV_TM_CAP_RC' % step)
    step = 'TM: CQEX with IBV_WC_EX_WITH_TM_INFO'
    cqx = CQEX(ctx, CqInitAttrEx(cqe=64, wc_flags=e.IBV_WC_EX_WITH_TM_INFO |
                                 e.IBV_WC_STANDARD_FLAGS))
    cqa = CQ(ctx, 64)
    step = 'TM: SRQ(ctx, SrqInitAttrEx) of type IBV_SRQT_TM'
    sa = SrqInitAttrEx(max_wr=16, max_sge=1)
    sa.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                    e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_TM)
    sa.srq_type = e.IBV_SRQT_TM
    sa.pd = pd
    sa.cq = cqx
    sa.max_num_tags = 16
    sa.max_ops = 8
    srq = SRQ(ctx, sa)
    mra, mrb = MR(pd, 2 * SIZE, access), MR(pd, 2 * SIZE, access)
    step = 'TM: QPs (the server one on the TM SRQ, without a send queue)'
    qpa = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqa, rcq=cqa, sq_sig_all=1,
                            cap=QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)))
    qpb = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqx, rcq=cqx, srq=srq,
                            cap=QPCap(max_send_wr=0, max_recv_wr=0, max_send_sge=0, max_recv_sge=0)))
    connect_rc(qpa, qpb, gid, access)
    for i in range(4):      # SRQ WQEs for unexpected messages: mrb + SIZE + i * 512
        srq.post_recv(RecvWR(wr_id=100 + i, num_sge=1, sg=[SGE(mrb.buf + SIZE + i * 512, 512, mrb.lkey)]))

    def add(tag, wr_id, unexp=0):
        srq.post_srq_ops(OpsWr(wr_id=wr_id, opcode=e.IBV_WR_TAG_ADD, flags=e.IBV_OPS_SIGNALED,
                               unexpected_cnt=unexp, recv_wr_id=wr_id, num_sge=1, tag=tag,
                               mask=0xffff, sg_list=[SGE(mrb.buf, SIZE, mrb.lkey)]))
        tm_poll(cqx, step + ' (TM_ADD)', e.IBV_WC_TM_ADD)

    def send(data):
        mra.write(data, len(data))
        qpa.post_send(SendWR(wr_id=9, opcode=e.IBV_WR_SEND, num_sge=1,
                             sg=[SGE(mra.buf, len(data), mra.lkey)], send_flags=e.IBV_SEND_SIGNALED))
        poll(cqa, step + ' (send completion)')

    step = 'TM: expected eager message'
    add(7, 1)
    data = pattern(0x21, 700)
    send(tmh(e.IBV_TMH_EAGER, 7, 0x99) + data)
    wr_id, n, _, tag = tm_poll(cqx, step, e.IBV_WC_TM_RECV, e.IBV_WC_TM_MATCH | e.IBV_WC_TM_DATA_VALID)
    if wr_id != 1 or n != 700 or tag != 7 or mrb.read(700, 0) != data:
        raise RuntimeError('%s: wr_id %d byte_len %d tag %d, or the tagged buffer differs' %
                           (step, wr_id, n, tag))
    say('ok   %s: TM_RECV MATCH|DATA_VALID, %d bytes without the TMH, tag %d' % (step, n, tag))

    step = 'TM: unexpected eager message, then SYNC'
    msg = tmh(e.IBV_TMH_EAGER, 0x1234) + pattern(0x42, 100)
    send(msg)
    wr_id, n, _, tag = tm_poll(cqx, step, e.IBV_WC_TM_RECV, 0)
    # tag information only with MATCH
    if wr_id != 100 or n != len(msg) or tag != 0 or mrb.read(len(msg), SIZE) != msg:
        raise RuntimeError('%s: wr_id %d byte_len %d, or the SRQ WQE differs' % (step, wr_id, n))
    srq.post_srq_ops(OpsWr(wr_id=27, opcode=e.IBV_WR_TAG_SYNC, unexpected_cnt=1, recv_wr_id=27,
                           flags=e.IBV_OPS_SIGNALED | e.IBV_OPS_TM_SYNC))
    tm_poll(cqx, step + ' (TM_SYNC)', e.IBV_WC_TM_SYNC)
    say('ok   %s: whole message (%d bytes) in SRQ WQE %d, TM_SYNC' % (step, n, wr_id))

    step = 'TM: rendezvous'
    add(8, 2, unexp=1)
    data = pattern(0x77, 3000)
    mra.write(data, 3000, 1024)
    qpa.post_recv(RecvWR(wr_id=55, num_sge=1, sg=[SGE(mra.buf + SIZE, 64, mra.lkey)]))
    rvh = (mra.buf + 1024).to_bytes(8, 'big') + mra.rkey.to_bytes(4, 'big') + (3000).to_bytes(4, 'big')
    send(tmh(e.IBV_TMH_RNDV, 8, 3) + rvh + bytes(32))
    wr_id, _, _, tag = tm_poll(cqx, step + ' (MATCH)', e.IBV_WC_TM_RECV, e.IBV_WC_TM_MATCH)
    if wr_id != 2 or tag != 8:
        raise RuntimeError('%s: MATCH wr_id %d tag %d' % (step, wr_id, tag))
    wc, = poll(cqa, step + ' (the FIN at the sender)')
    fin = mra.read(TMH, SIZE)
    if wc.wr_id != 55 or wc.byte_len != TMH or fin != tmh(e.IBV_TMH_FIN, 8, 3):
        raise RuntimeError('%s: FIN wr_id %d byte_len %d: %s' % (step, wc.wr_id, wc.byte_len, fin.hex()))
    wr_id, n, _, tag = tm_poll(cqx, step + ' (DATA_VALID)', e.IBV_WC_TM_RECV, e.IBV_WC_TM_DATA_VALID)
    # DATA_VALID alone carries no tag (rdma-core's test_tm_rndv)
    if wr_id != 2 or n != 3000 or tag != 0 or mrb.read(3000, 0) != data:
        raise RuntimeError('%s: wr_id %d byte_len %d tag %d, or the data differs' %
                           (step, wr_id, n, tag))
    say('ok   %s: MATCH, FIN at the sender, DATA_VALID with %d bytes read' % (step, n))
    for o in (qpa, qpb, srq, mra, mrb, cqa, cqx):
        o.close()


def main():
    global step
    try:
        step = 'Context(name=%s)' % DEV
        ctx = Context(name=DEV)
        step = 'query_gid'
        gid = ctx.query_gid(PORT, GID_INDEX)
        say('%s: GID[%d] %s' % (DEV, GID_INDEX, gid))
        step = 'PD'
        pd = PD(ctx)
        rc_test(ctx, pd, gid)
        ud_test(ctx, pd, gid)
        tm_test(ctx, pd, gid)
        pd.close()
        ctx.close()
    except Exception as ex:
        say('FAIL at %s: %s: %s' % (step, type(ex).__name__, ex))
        traceback.print_exc()
        return 1
    say('all steps passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
