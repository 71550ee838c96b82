# devtrace workload v1: Ascend collectives, markers and device memory, run once by each rank
# (two processes, one communicator: hccl_world_group). Grammar: ../shared/workloads/parity.wl's, plus
#   collective call= name= comm= alg= count= dtype=int8|int32|fp16|fp32|bf16 dur_ns= stream=
#                                one runtime call (call= is its API name) and the collective on the stream
#   mark push name= id=          a marker range begins on this thread (no runtime call)
#   mark pop                     the innermost marker range ends
#   alloc addr= bytes= stream=   device memory allocated: one malloc call and a memory record
#   free addr= bytes= stream=    the same memory released: one free call and a memory record
#   launch ... levels=node,runtime  the launch (an ACL call) also recorded at the node and runtime API
#                                levels below it (nested, one correlation id): the flow starts at runtime
# Every allocation is freed before the end: each device's total returns to 0.
device id=0 name=EmulatedAscend sms=24 warp=32 max_threads_per_sm=2048 max_blocks_per_sm=32 regs_per_sm=65536 smem_per_sm=196608 max_threads_per_block=1024
api call=set_device
op push name=ProfilerStep#0 id=0
mark push name=forward id=100
op push name=aten::mm id=1
alloc addr=4096 bytes=4194304 stream=7
launch kernel=MatMulV2 grid=24,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=20000 stream=7 levels=node,runtime
op pop
op push name=c10d::allreduce_ id=2
alloc addr=8392704 bytes=1048576 stream=8
collective call=HcclAllReduce name=hcom_allReduce_ comm=hccl_world_group alg=RING count=262144 dtype=fp32 dur_ns=40000 stream=8
op pop
mark pop
mark push name=backward id=101
op push name=c10d::allgather_ id=3
collective call=HcclAllGather name=hcom_allGather_ comm=hccl_world_group alg=MESH count=65536 dtype=bf16 dur_ns=15000 stream=8
op pop
op push name=c10d::broadcast_ id=4
collective call=HcclBroadcast name=hcclBroadcast comm=hccl_world_group alg=RING count=1024 dtype=int32 dur_ns=5000 stream=8
op pop
sync what=device
free addr=8392704 bytes=1048576 stream=8
free addr=4096 bytes=4194304 stream=7
mark pop
op pop
