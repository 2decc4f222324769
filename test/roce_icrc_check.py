#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Checks the ICRC of every RoCEv2 IPv4 frame of a pcap (libpcap format), as
# IBA annex A17.3.3 defines it: CRC-32 over 8 bytes of 0xff (the LRH's
# stand-in), the IPv4 header with TOS, TTL and checksum set to ones, UDP with
# its checksum set to ones, the BTH with byte 4 (FECN/BECN/reserved) set to
# ones, then the rest up to the ICRC, stored least significant byte first.
# Wireshark 4.0 shows the ICRC but does not check it.
#
# Usage: roce_icrc_check.py <pcap>. Prints "<good> <bad> [first bad frame]".
import struct
import sys
import zlib


def main(path):
    good = bad = n = 0
    first = None
    with open(path, 'rb') as f:
        gh = f.read(24)
        e = '<' if struct.unpack('<I', gh[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            _, _, incl, _ = struct.unpack(e + 'IIII', h)
            d = f.read(incl)
            n += 1
            if struct.unpack('>H', d[12:14])[0] != 0x0800:
                continue
            ip = d[14:]
            ihl = (ip[0] & 0xf) * 4
            tot = struct.unpack('>H', ip[2:4])[0]
            pkt = bytearray(ip[:tot])
            m = bytearray(pkt[:tot - 4])
            m[1] = 0xff
            m[8] = 0xff
            m[10:12] = b'\xff\xff'
            m[ihl + 6:ihl + 8] = b'\xff\xff'
            m[ihl + 8 + 4] = 0xff
            want = struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(m)) & 0xffffffff)
            if bytes(pkt[tot - 4:tot]) == want:
                good += 1
            else:
                bad += 1
                if first is None:
                    first = 'frame %d: ICRC %s, computed %s' % (n, pkt[tot - 4:tot].hex(), want.hex())
    print(good, bad, first or '')


if __name__ == '__main__':
    main(sys.argv[1])
