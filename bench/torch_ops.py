"""torch_ops.py MODE OPS [WORKLOAD]: the PyTorch benchmark's program (bench_torch.c runs it).
Timed inside the process (the loop only, after a warm-up, in the thread's CPU time).

WORKLOAD "add" (the default): OPS calls of torch.add on 1-element tensors on one thread;
prints "ns_per_op N". WORKLOAD "step": OPS training steps of a small model (six
blocks of linear, layer norm and ReLU, then a linear layer; a loss, backward, an SGD step with
momentum: about 685 ops a step, as torch.profiler counts them); prints "ns_per_step N" and "ops_per_step N" (counted by
torch.profiler in a separate step).

MODE: plain (run it as is, or under devtrace record --torch), profiler (inside
torch.profiler.profile(activities=[CPU])), devtrace (inside devtrace.torch.profile, on the
none backend: the ops alone) or callback (devtrace's RecordFunction callback forwarding to
functions that do nothing: torch's RecordFunction and the callback, without devtrace)."""
import sys
import time

import torch


def add_loop(n):
    a, b = torch.ones(1), torch.ones(1)
    add = torch.add

    def run(k):
        t0 = time.thread_time_ns()
        for _ in range(k):
            add(a, b)
        return time.thread_time_ns() - t0
    return run


def step_loop(n):
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(64, 64), torch.nn.LayerNorm(64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data, target = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        opt.step()

    def run(k):
        t0 = time.thread_time_ns()
        for _ in range(k):
            step()
        return time.thread_time_ns() - t0
    run.step = step
    return run


def ops_per_step(run):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as p:
        run.step()
    return len(p.events())


def main(mode, n, workload="add"):
    if workload not in ("add", "step"):
        sys.exit("torch_ops.py: WORKLOAD is add or step, not %r" % workload)
    run = add_loop(n) if workload == "add" else step_loop(n)
    run(min(n, 2000) if workload == "add" else min(n, 20))  # warm-up
    if mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]):
            elapsed = run(n)
    elif mode == "devtrace":
        import devtrace.torch
        with devtrace.torch.profile(None, backend="none"):
            elapsed = run(n)
    elif mode == "callback":
        import devtrace.torch
        devtrace.torch.install_observer(torch, null=True)
        elapsed = run(n)
        devtrace.torch.remove_observer()
    elif mode == "plain":
        elapsed = run(n)
    else:
        sys.exit("torch_ops.py: MODE is plain, profiler, devtrace or callback, not %r" % mode)
    if workload == "add":
        print("ns_per_op %.3f" % (elapsed / n))
    else:
        print("ns_per_step %.3f" % (elapsed / n))
        if mode not in ("profiler", "callback"):
            print("ops_per_step %d" % ops_per_step(run))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:4])
