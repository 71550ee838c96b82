"""rr_workers.py: a launcher in the shape of torchrun, for test_realruns.py: it starts N
Python workers with subprocess (close_fds, as torchrun's do), each with its own $RANK and
$WORLD_SIZE, and waits for them. Each worker runs RANK + 2 kernels through pyopencl on the
first OpenCL device and prints `rank R: K kernels`.

    python3 rr_workers.py N        (the launcher)
    python3 rr_workers.py --worker (one worker; $RANK says which)
"""
import os
import subprocess
import sys

if sys.argv[1] == "--worker":
    import numpy as np
    import pyopencl as cl

    rank = int(os.environ["RANK"])
    ctx = cl.Context(cl.get_platforms()[0].get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, "__kernel void twice(__global float *a) { a[get_global_id(0)] *= 2.0f; }").build()
    data = np.arange(64, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    for _ in range(rank + 2):
        program.twice(queue, data.shape, None, buf)
    queue.finish()
    print("rank %d: %d kernels" % (rank, rank + 2), flush=True)
    sys.exit(0)

n = int(sys.argv[1])
workers = [subprocess.Popen([sys.executable, __file__, "--worker"],
                            env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r)))
           for r in range(n)]
sys.exit(max(w.wait() for w in workers))
