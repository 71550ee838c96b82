launch kernel=_Z1kv grid=1,2,3 block=32,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=0
