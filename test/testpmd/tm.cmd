# droce-testpmd command file (test/meson.build: testpmd_tm): list operations
# on a tag-matching SRQ (tag add|del|sync, ibv_post_srq_ops), each
# completing on the SRQ's CQ, what is refused, and an eager message
# matched to its tagged buffer.
create pd 0
create pd 1
create cq 0 64
create cq 1 64
create mr 0 65536
create mr 1 65536
create srq 1 wr 16 tm 4 cq 1
create srq 1 wr 16
# tags on an SRQ that does not match tags: refused
tag sync 1
expect EINVAL
# two tagged buffers, handles 0 and 1 (the first free ones)
tag add 0 1 4096 1024 tag 0x1234 id 0x51
poll cq 1 expect 1 success
tag add 0 1 8192 1024 tag 0x99 mask 0xff id 0x52 recv_id 7
poll cq 1 expect 1 success
# deleted: its completion, then the handle deleted again is an error completion
tag del 0 0 id 0x53
poll cq 1 expect 1 success
tag del 0 0 id 0x54
poll cq 1 expect 1 success
expect EIO
tag sync 0 id 0x55
poll cq 1 expect 1 success
# a buffer beyond the MR: refused by the console before posting
tag add 0 1 65000 1024 tag 1
expect EINVAL
show srq 0
# an eager message (TMH: opcode 3, EAGER, and 3s throughout, so its tag is
# 0x0303030303030303) from qp 0 to qp 1 on the TM SRQ: TM_RECV into the
# tagged buffer with the TMH stripped, 100 bytes
create qp rc 0 0
create qp rc 1 1 srq 0
connect qp 0 1
tag add 0 1 0 1024 tag 0x0303030303030303 id 0x61 recv_id 0x77
poll cq 1 expect 1 success
fill mr 0 0 16 0x03
fill mr 0 16 100 0xab
post send 0 0 0 116 id 0x62
poll cq 0 expect 1 success
poll cq 1 expect 1 success
check mr 1 0 100 0xab
check mr 1 100 16 0
