# droce-testpmd command file (test/meson.build: testpmd_tm): list operations
# on a tag-matching SRQ (tag add|del|sync, ibv_post_srq_ops), each
# completing on the SRQ's CQ, and what is refused.
create pd 0
create cq 0 64
create mr 0 65536
create srq 0 wr 16 tm 4 cq 0
create srq 0 wr 16
# tags on an SRQ that does not match tags: refused
tag sync 1
expect EINVAL
# two tagged buffers, handles 0 and 1 (the first free ones)
tag add 0 0 0 1024 tag 0x1234 id 0x51
poll cq 0 expect 1 success
tag add 0 0 1024 1024 tag 0x99 mask 0xff id 0x52 recv_id 7
poll cq 0 expect 1 success
# deleted: its completion, then the handle deleted again is an error completion
tag del 0 0 id 0x53
poll cq 0 expect 1 success
tag del 0 0 id 0x54
poll cq 0 expect 1 success
expect EIO
tag sync 0 id 0x55
poll cq 0 expect 1 success
# a buffer beyond the MR: refused by the console before posting
tag add 0 0 65000 1024 tag 1
expect EINVAL
show srq 0
