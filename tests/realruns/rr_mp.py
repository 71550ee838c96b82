"""rr_mp.py: Python multiprocessing workers that run OpenCL kernels, for test_realruns.py.

    python3 rr_mp.py METHOD N KERNELS

starts N workers with the start method METHOD (fork, forkserver or spawn); the main process
never calls OpenCL. Worker w runs KERNELS + w kernels through pyopencl on the first OpenCL
device, waits for them, prints `worker W: K kernels` and returns: multiprocessing then ends a
fork or forkserver worker with os._exit (no atexit handler runs). Each worker is short (well
under 100 ms of kernels). Exit 0 when every worker exited 0.
"""
import multiprocessing as mp
import sys


def work(w, kernels):
    import numpy as np
    import pyopencl as cl

    ctx = cl.Context(cl.get_platforms()[0].get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, "__kernel void inc(__global float *a) { a[get_global_id(0)] += 1.0f; }").build()
    data = np.zeros(64, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    for _ in range(kernels + w):
        program.inc(queue, data.shape, None, buf)
    queue.finish()
    print("worker %d: %d kernels" % (w, kernels + w), flush=True)


if __name__ == "__main__":
    method, n, kernels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ctx = mp.get_context(method)
    workers = [ctx.Process(target=work, args=(w, kernels)) for w in range(n)]
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    sys.exit(max(p.exitcode for p in workers))
