"""schedule_program.py PATH REPEAT STEPS: devtrace.torch.profile with
schedule(wait=1, warmup=1, active=2, repeat=REPEAT) over STEPS steps, each launching one
OpenCL kernel inside record_function("work"). Prints one line per trace ready (its path and
the steps it holds) and the last key_averages table."""
import json
import sys

import devtrace.torch


def main(path, repeat, steps):
    import numpy as np
    import pyopencl as cl
    import torch
    from torch.autograd.profiler import record_function

    prof = devtrace.torch.profile(path, backend="opencl",
                                  schedule=devtrace.torch.schedule(wait=1, warmup=1, active=2, repeat=repeat),
                                  on_trace_ready=lambda p: print("ready", p.trace_paths[-1], p.cycle))
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, "__kernel void one(__global float *x) { x[get_global_id(0)] = 1; }").build().one
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
    with prof as p:
        for _ in range(steps):
            with record_function("work"):
                torch.add(torch.ones(2), 1)
                kernel(queue, (64,), None, buf)
                queue.finish()
            p.step()
    averages = p.key_averages()
    print(averages.table(sort_by="count", row_limit=100))
    print("averages", json.dumps({a.key: [a.count, a.self_device_time_total, a.device_events] for a in averages}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
