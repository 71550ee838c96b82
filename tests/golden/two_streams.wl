# devtrace workload v1: two streams (tests/golden), for the golden traces
# Copies in every direction, kernels on streams 7 and 9 inside nested ops, a memset and the
# syncs; every device statement lies well inside the capture window.
device id=0 name=GoldenGPU sms=80 warp=32 max_threads_per_sm=2048 max_blocks_per_sm=32 regs_per_sm=65536 smem_per_sm=102400 max_threads_per_block=1024
api call=get_device_count
api call=set_device
op push name=step id=100
op push name=copy_in id=101
api call=malloc
memcpy dir=htod bytes=1048576 dur_ns=20000 stream=7
memcpy dir=htod bytes=4096 dur_ns=1500 stream=9
op pop
op push name=compute id=102
launch kernel=_Z6scale2Pfi grid=256,1,1 block=256,1,1 regs=24 smem=0 dyn_smem=0 dur_ns=7000 stream=7
op push name=inner id=103
launch kernel=_Z4halfPf grid=64,2,1 block=128,2,1 regs=40 smem=4096 dyn_smem=1024 dur_ns=5000 stream=9
memset bytes=65536 value=0 dur_ns=900 stream=9
op pop
memcpy dir=dtod bytes=65536 dur_ns=2500 stream=7
op pop
sync what=stream stream=9
op push name=copy_out id=104
memcpy dir=dtoh bytes=1048576 dur_ns=21000 stream=7
sync what=device
op pop
op pop
api call=free
