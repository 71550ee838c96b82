launch kernel=k grid=1,1,1 block=1,1,1 regs=1 smem=0 dyn_smem=0 dur_ns=1 stream=0 extra=1
