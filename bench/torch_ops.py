"""torch_ops.py MODE OPS: the PyTorch per-op benchmark's program (bench_torch.c runs it).
OPS calls of torch.add on 1-element tensors on one thread, timed inside the process (the
loop only, after a warm-up, in the thread's CPU time); prints "ns_per_op N". MODE: plain (run it as is, or under
devtrace record --torch) or profiler (inside torch.profiler.profile(activities=[CPU]))."""
import sys
import time

import torch


def loop(a, b, n):
    add = torch.add
    t0 = time.thread_time_ns()
    for _ in range(n):
        add(a, b)
    return time.thread_time_ns() - t0


def main(mode, n):
    a, b = torch.ones(1), torch.ones(1)
    loop(a, b, min(n, 2000))  # warm-up
    if mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]):
            elapsed = loop(a, b, n)
    elif mode == "plain":
        elapsed = loop(a, b, n)
    else:
        sys.exit("torch_ops.py: MODE is plain or profiler, not %r" % mode)
    print("ns_per_op %.3f" % (elapsed / n))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
