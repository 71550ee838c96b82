device id=0 name=G sms=4 warp=32 max_threads_per_sm=2048 max_blocks_per_sm=32 regs_per_sm=65536 smem_per_sm=65536 max_threads_per_block=1024
