# droce-testpmd command file (test/meson.build: testpmd_cmdfile): objects,
# posts across QP states, the errno of refused posts, completions and bytes,
# and a background stream. Runs on the embedded default (droce0, droce1).
show device
create pd 0
create pd 1
create cq 0 64
create cq 1 64
create mr 0 65536
create mr 1 65536
create qp rc 0 0
create qp rc 1 1
show qp 0
# a receive in RESET: EINVAL (the QP takes no WR before INIT)
post recv 1 1 0 256
expect EINVAL
# a send before RTS: EINVAL, *bad_wr is the first WR
post send 0 0 0 64
expect EINVAL
connect qp 0 1
show qp 0
# SEND 64 B from qp 0 into qp 1's receive
fill mr 0 0 64 0xab
post recv 1 1 0 256 id 0x10
post send 0 0 0 64 id 0x20
poll cq 0 expect 1 success
poll cq 1 expect 1 success
check mr 1 0 64 0xab
# RDMA WRITE then READ back
fill mr 0 4096 1024 0x5c
post write 0 0 4096 1024 rmr 1 roff 8192 id 0x21
poll cq 0 expect 1
check mr 1 8192 1024 0x5c
post read 0 0 16384 1024 rmr 1 roff 8192 id 0x22
poll cq 0 expect 1
check mr 0 16384 1024 0x5c
# atomics: fetch-and-add twice on a zeroed word
fill mr 1 32768 8 0
post fadd 0 0 40960 8 rmr 1 roff 32768 add 5 id 0x23
poll cq 0 expect 1
post fadd 0 0 40960 8 rmr 1 roff 32768 add 5 id 0x24
poll cq 0 expect 1
# a list of 16 unsignaled SENDs: 16 receives, no send completion
post recv 1 1 0 256 count 16
post send 0 0 0 16 count 16 unsignaled
poll cq 1 expect 16
poll cq 0 wait 50 expect 0
# an inline send beyond max_inline_data (asked 0, given 16: one SGE's room): EINVAL
post send 0 0 0 64 inline
expect EINVAL
# background stream, then the QPs still work
traffic start 0 1 0 1 size 256 depth 8
sleep 300
show traffic
traffic stop
show stats 0
# ERR flushes what is posted; RESET clears it and the QP reconnects
modify qp 1 err
post recv 1 1 0 256 id 0x30
poll cq 1 expect 1 flush
modify qp 1 reset
modify qp 0 reset
connect qp 0 1
post recv 1 1 0 256 id 0x31
post send 0 0 0 64 id 0x32
poll cq 0 expect 1
poll cq 1 expect 1
# UD with an address handle
create cq 0 64
create cq 1 64
create qp ud 0 2
create qp ud 1 3
connect qp 2 3
create ah 0 10.0.0.2
fill mr 0 0 100 0x77
post recv 3 1 0 4096 id 0x40
post send 2 0 0 100 ah 0 rqpn qp3 id 0x41
poll cq 2 expect 1
poll cq 3 expect 1
# a UD receive begins with the 40-byte GRH
check mr 1 40 100 0x77
# a UD send without an address handle: usage error (EINVAL), nothing posted
post send 2 0 0 100 id 0x42
expect EINVAL
show objects
destroy pd 0
expect EBUSY
destroy qp 0
destroy qp 1
show objects
quit
