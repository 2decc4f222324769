# droce-testpmd -I command file (test/meson.build: testpmd_impair): faults
# set on the net_impair ports at run time (impair <port> set|link), and what
# they cost as the QP counters see it: local ACK timeouts and retransmits,
# sequence NAKs sent and received.
create pd 0
create pd 1
create cq 0 256
create cq 1 256
create mr 0 65536
create mr 1 65536
create qp rc 0 0
create qp rc 1 1
connect qp 0 1
# refused: an unknown key, a probability out of range, a port that is not
# net_impair's, no such port
impair net_impair0 set color=red
expect EINVAL
impair net_impair0 set drop=1.5
expect EINVAL
impair net_ring_a set drop=0.5
expect EINVAL
impair nosuch set drop=0.5
expect ENODEV
# one SEND through: ARP has resolved both ways
post recv 1 1 0 4096 id 0x3f
post send 0 0 0 64 id 0x3f
poll cq 0 expect 1
poll cq 1 expect 1
check qp 0 timeouts == 0
# everything droce0 sends is lost for 250 ms: the SEND is resent early
# (on the measured round trip, doubling up to an eighth of the timeout),
# then at each local ACK timeout (67 ms), and gets through once it passes
impair net_impair0 set drop=1
post recv 1 1 0 4096 count 2
post send 0 0 0 64 id 0x40
poll cq 0 wait 250 expect 0
impair net_impair0 set drop=0
poll cq 0 wait 2000 expect 1
poll cq 1 expect 1
check qp 0 fast_retransmits >= 1
check qp 0 timeouts >= 1
check qp 0 retransmits >= 1
check dev 0 timeouts >= 1
# its link down and up again
impair net_impair1 link down
impair net_impair1 link up
# a lossy link under a stream: sequence NAKs on both sides, duplicates
impair net_impair0 set drop=0.05,delay_us=20
traffic start 0 1 0 1 size 2000 depth 16
sleep 1500
traffic stop
impair net_impair0 set drop=0,delay_us=0
check qp 1 naks_sent_seq_err > 0
check qp 0 naks_rcvd_seq_err > 0
check qp 1 rx_drop_seq > 0
show qp 0
show qp 1
show stats
