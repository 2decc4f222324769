#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pyverbs over the drop-in libibverbs, between two
# processes: dropin_pyverbs_pair.py server|client <tcp port>. Each opens
# droce0 (from its own DROCE_EAL), makes a PD, an MR, a CQ and an RC QP, and
# the two exchange QPN, PSN, GID, MR address and rkey over TCP (the client
# retries its connect, so either may start first), then take their QPs to
# RTS at the port's active MTU. The client SENDs (with and without
# immediate data, several sizes), RDMA WRITEs into the server's MR and READs
# it back; the server checks every receive completion and byte. Both report
# over TCP and exit 0 only if everything held.
import json
import os
import random
import socket
import sys
import time
import traceback

from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPAttr, QPCap
from pyverbs.wr import SendWR, RecvWR, SGE
from pyverbs.addr import AHAttr, GlobalRoute, GID
import pyverbs.enums as e

from dropin_pyverbs import poll, pattern

DEV = os.environ.get('PYVERBS_DEV', 'droce0')
PORT = 1
GID_INDEX = 0
SIZE = 65536
SENDS = (1, 1000, 4096, 4097, 65536, 3, 20000)
TIMEOUT = 20.0
ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
role = sys.argv[1] if len(sys.argv) > 1 else ''
step = 'start'


def say(*a):
    print('dropin_pyverbs_pair %s:' % role, *a, flush=True)


def tcp(port):
    """The server listens, the client connects (retrying until TIMEOUT)."""
    if role == 'server':
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(('127.0.0.1', port))
        ls.listen(1)
        say('listening on TCP port %d' % port)
        ls.settimeout(TIMEOUT)
        s, _ = ls.accept()
        ls.close()
    else:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                s = socket.create_connection(('127.0.0.1', port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    s.settimeout(TIMEOUT)
    # one file each way: a text file open for both drops what it read ahead when written to
    return s.makefile('r'), s.makefile('w')


def send(f, mine):
    f[1].write(json.dumps(mine) + '\n')
    f[1].flush()


def recv(f):
    line = f[0].readline()
    if not line:
        raise RuntimeError('the peer closed the connection')
    return json.loads(line)


def xchg(f, mine):
    send(f, mine)
    return recv(f)


def connect(qp, peer, my_psn, mtu):
    a = QPAttr()
    a.qp_state = e.IBV_QPS_INIT
    a.pkey_index = 0
    a.port_num = PORT
    a.qp_access_flags = ACCESS
    qp.to_init(a)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    a.path_mtu = mtu
    a.dest_qp_num = peer['qpn']
    a.rq_psn = peer['psn']
    a.max_dest_rd_atomic = 4
    a.min_rnr_timer = 12
    raw = socket.inet_pton(socket.AF_INET6, peer['gid'])
    dgid = GID(':'.join(raw[i:i + 2].hex() for i in range(0, 16, 2)))
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=dgid, sgid_index=GID_INDEX, hop_limit=64),
                       is_global=1, port_num=PORT)
    qp.to_rtr(a)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = 14
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.sq_psn = my_psn
    a.max_rd_atomic = 4
    qp.to_rts(a)


def main():
    global step
    port = int(sys.argv[2])
    try:
        step = 'Context(name=%s)' % DEV
        ctx = Context(name=DEV)
        gid = ctx.query_gid(PORT, GID_INDEX)
        mtu = ctx.query_port(PORT).active_mtu
        step = 'PD, MR, CQ, QP'
        pd = PD(ctx)
        mr = MR(pd, SIZE, ACCESS)
        cq = CQ(ctx, 64)
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, sq_sig_all=1,
                               cap=QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                                         max_recv_sge=1)))
        psn = random.randrange(1 << 24)
        step = 'TCP'
        f = tcp(port)
        peer = xchg(f, {'qpn': qp.qp_num, 'psn': psn, 'gid': str(gid), 'mtu': mtu,
                        'addr': mr.buf, 'rkey': mr.rkey})
        mtu = min(mtu, peer['mtu'])
        say('QPN 0x%x, peer QPN 0x%x GID %s, path MTU %d' % (qp.qp_num, peer['qpn'], peer['gid'],
                                                             128 << mtu))
        step = 'connect'
        connect(qp, peer, psn, mtu)
        if role == 'server':
            for i, n in enumerate(SENDS):
                step = 'receive %d (%d B)' % (i, n)
                mr.write(b'\0' * SIZE, SIZE)
                qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf, SIZE, mr.lkey)]))
                xchg(f, {'posted': i})
                wc, = poll(cq, step)
                imm = i if i % 2 else None
                if wc.wr_id != i or wc.byte_len != n or mr.read(n, 0) != pattern(i, n):
                    raise RuntimeError('%s: wr_id %d byte_len %d, or bytes differ' %
                                       (step, wc.wr_id, wc.byte_len))
                if imm is not None and (not wc.wc_flags & e.IBV_WC_WITH_IMM or wc.imm_data != imm):
                    raise RuntimeError('%s: wc_flags 0x%x imm 0x%x' % (step, wc.wc_flags, wc.imm_data))
            step = 'the client\'s WRITE and READ'
            mr.write(b'\0' * SIZE, SIZE)
            xchg(f, {'ready': 1})
            done = recv(f)
            ok = mr.read(30000, 100) == pattern(0x5a, 30000)
            send(f, {'ok': int(ok and done.get('ok', 0))})
            if not ok:
                raise RuntimeError('%s: the WRITE did not land' % step)
            if not done.get('ok', 0):
                raise RuntimeError('%s: the client read back other bytes' % step)
        else:
            for i, n in enumerate(SENDS):
                step = 'SEND %d (%d B)' % (i, n)
                xchg(f, {})
                mr.write(pattern(i, n), n)
                imm = i if i % 2 else None
                qp.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND if imm is None else
                                    e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                                    sg=[SGE(mr.buf, n, mr.lkey)], imm_data=imm or 0))
                poll(cq, step)
            xchg(f, {})
            step = 'RDMA WRITE 30000 B'
            mr.write(pattern(0x5a, 30000), 30000)
            wr = SendWR(wr_id=100, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[SGE(mr.buf, 30000, mr.lkey)])
            wr.set_wr_rdma(peer['rkey'], peer['addr'] + 100)
            qp.post_send(wr)
            poll(cq, step)
            step = 'RDMA READ 30000 B'
            mr.write(b'\0' * SIZE, SIZE)
            wr = SendWR(wr_id=101, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                        sg=[SGE(mr.buf + 3, 30000, mr.lkey)])
            wr.set_wr_rdma(peer['rkey'], peer['addr'] + 100)
            qp.post_send(wr)
            poll(cq, step)
            ok = mr.read(30000, 3) == pattern(0x5a, 30000)
            if not xchg(f, {'ok': int(ok)}).get('ok') or not ok:
                raise RuntimeError('%s: the bytes read back differ' % step)
        for o in (qp, cq, mr, pd, ctx):
            o.close()
    except Exception as ex:
        say('FAIL at %s: %s: %s' % (step, type(ex).__name__, ex))
        traceback.print_exc()
        return 1
    say('PASS: %d SENDs, a WRITE and a READ' % len(SENDS))
    return 0


if __name__ == '__main__':
    sys.exit(main())
