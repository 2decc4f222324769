# droce-testpmd command file (test/meson.build: testpmd_counters): the
# per-QP and device counters (show stats, show qp, check qp|dev), the
# neighbour table (show neigh) and a NAK counted by kind on both sides.
create pd 0
create pd 1
create cq 0 64
create cq 1 64
create mr 0 65536
create mr 1 65536
create qp rc 0 0
create qp rc 1 1
connect qp 0 1
check qp 0 tx_pkts == 0
check qp 0 rx_pkts == 0
# 4 SENDs of 2000 B at a 1024 B path MTU: 2 packets each
post recv 1 1 0 4096 count 4
post send 0 0 0 2000 count 4
poll cq 0 expect 4
poll cq 1 expect 4
check qp 0 tx_pkts >= 8
check qp 0 tx_bytes > 8000
check qp 1 rx_pkts >= 8
check qp 1 rx_bytes > 8000
# the receiver ACKs: the sender takes them in
check qp 1 tx_pkts >= 1
check qp 0 rx_pkts >= 1
check qp 0 retransmits == 0
check qp 0 timeouts == 0
check qp 1 rx_dup == 0
check qp 1 rx_drop_seq == 0
check qp 0 no_such_counter == 0
expect ENOENT
check qp 0 tx_pkts == 0
expect EIO
show qp 0
show qp 1 all
show stats
show stats droce1 all
show neigh
show neigh droce0
check dev 0 tx_pkts >= 8
check dev 1 rx_pkts >= 8
check dev 0 naks_rcvd_rem_access == 0
# a WRITE with an rkey droce1 does not know (mr 0 is droce0's): droce1
# NAKs it, remote access error, counted by kind on both QPs and devices
post write 0 0 0 64 rmr 0 roff 0 id 0x31
poll cq 0 expect 1 success
expect EIO
check qp 1 naks_sent_rem_access == 1
check qp 0 naks_rcvd_rem_access == 1
check qp 0 naks_rcvd_seq_err == 0
check dev 1 naks_sent_rem_access >= 1
check dev 0 naks_rcvd_rem_access >= 1
check dev 1 naks_sent >= 1
show qp 0
