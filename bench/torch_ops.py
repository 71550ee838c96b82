"""torch_ops.py MODES BLOCKS BLOCK_SIZE [WORKLOAD [--callgrind LIB WARMUP]]: the PyTorch
benchmark's program (bench_torch.c runs it).

Runs the modes named in MODES (a comma-separated list) in interleaved blocks in this one
process: BLOCKS rounds, the order rotating each round, each a block of BLOCK_SIZE units
timed in the thread's CPU time (these machines are shared, and a whole process may run 1.5x
slower than the next one: modes compared inside one process see the same machine). Each block
is set up, runs a few units untimed (2 steps, or 1,000 ops), then the timed ones, then is torn
down. Two warm-up blocks of each mode come first and are not counted. For each mode it prints
"mode NAME median MEDIAN mean MEAN blocks N", in ns per unit.

WORKLOAD "add" (the default): a unit is one torch.add on 1-element tensors. "step": a unit
is one training step of a small model (six blocks of linear, layer norm and ReLU, then a
linear layer; a loss, backward, an SGD step with momentum); it also prints "ops_per_step N"
(counted by torch.profiler in a step of its own).

MODES, in a plain process:
  plain     nothing installed
  floor     a global RecordFunction callback that returns at once and asks torch for
            nothing: what any observer costs before it does anything (torch's part)
  callback  devtrace's callback forwarding to functions that do nothing
  profile   inside devtrace.torch.profile(None, backend="none") (the ops alone), one
            profile per block
  profiler  inside torch.profiler.profile(activities=[CPU]), one per block
and in a process under devtrace record --torch (its observer attached at import):
  on        recorded (the observer as devtrace record attached it)
  off       the observer removed for the block
  profiler  the observer removed, inside torch.profiler.profile(activities=[CPU])
A process under devtrace record also prints "ops_recorded N": the ops its "on" blocks
ran, warm-ups and untimed units included, for the caller to check against its trace.

With --callgrind LIB WARMUP (one mode, under valgrind --tool=callgrind --instr-atstart=no
--collect-atstart=no): the mode is set up once, WARMUP units run, then three times
BLOCK_SIZE units between LIB's devtrace_bench_callgrind_start and _stop, whose dumps (.1, .2,
.3) hold their instructions: the caller takes the least, since a count now and then, in every
mode, plain included, holds glibc consolidating its free lists before it grows the heap (about
2 M instructions at once). BLOCKS is ignored."""
import statistics
import sys
import time

import torch


def add_unit():
    a, b = torch.ones(1), torch.ones(1)
    add = torch.add

    def run(k):
        t0 = time.thread_time_ns()
        for _ in range(k):
            add(a, b)
        return time.thread_time_ns() - t0
    run.ops_per_unit = 1
    return run


def step_unit():
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


class _Mode:
    """One mode set up for the whole run (--callgrind): the block's set-up without timing."""

    def __init__(self, m, dt, under_record):
        self.m, self.dt, self.under_record, self.ctx = m, dt, under_record, None

    def __enter__(self):
        dt = self.dt
        if self.m == "floor":
            dt.install_observer(torch, flags=dt.EMPTY, null=True)
        elif self.m == "callback":
            dt.install_observer(torch, null=True)
        elif self.m == "profile":
            self.ctx = dt.profile(None, backend="none")
        elif self.m == "off":
            dt.remove_observer()
        elif self.m == "profiler":
            from torch.profiler import ProfilerActivity, profile
            if self.under_record:
                dt.remove_observer()
            self.ctx = profile(activities=[ProfilerActivity.CPU])
        if self.ctx is not None:
            self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)
        if self.m in ("floor", "callback"):
            self.dt.remove_observer()


def count_instructions(mode, size, workload, lib, warmup):
    import ctypes
    import devtrace.torch as dt
    marks = ctypes.CDLL(lib)
    run = add_unit() if workload == "add" else step_unit()
    with _Mode(mode, dt, dt._installed):
        run(warmup)
        for _ in range(3):  # three counts (dumps .1 to .3): the caller takes the least
            marks.devtrace_bench_callgrind_start()
            run(size)
            marks.devtrace_bench_callgrind_stop()


def main(modes, blocks, size, workload="add"):
    if workload not in ("add", "step"):
        sys.exit("torch_ops.py: WORKLOAD is add or step, not %r" % workload)
    import devtrace.torch as dt
    from torch.profiler import ProfilerActivity, profile
    under_record = dt._installed  # devtrace record --torch attached the observer at import
    plain_modes = ("plain", "floor", "callback", "profile", "profiler")
    record_modes = ("on", "off", "profiler")
    known = record_modes if under_record else plain_modes
    for m in modes:
        if m not in known:
            sys.exit("torch_ops.py: mode %r is not one of %s %s" % (
                m, ", ".join(known), "(under devtrace record --torch)" if under_record else "(in a plain process)"))
    run = add_unit() if workload == "add" else step_unit()
    per_step = 1
    if workload == "step":
        if under_record:
            dt.remove_observer()
        per_step = ops_per_step(run)
        if under_record:
            dt.install_observer(torch)
        print("ops_per_step %d" % per_step)
    recorded = [0]

    # Each block first runs `settle` units untimed in its mode: what the previous block's
    # teardown left (torch.profiler's post-processing, a profile's events made into Python
    # objects: the allocator's and the caches' state) otherwise lands on the timed units. Without
    # it the same two modes measured 0.51-0.55 or 1.41-1.59 depending on which modes ran between.
    settle = 2 if workload == "step" else 1000

    def timed():
        run(settle)
        return run(size)

    def block(m):
        if m in ("plain",):
            return timed()
        if m == "floor":
            dt.install_observer(torch, flags=dt.EMPTY, null=True)
            try:
                return timed()
            finally:
                dt.remove_observer()
        if m == "callback":
            dt.install_observer(torch, null=True)
            try:
                return timed()
            finally:
                dt.remove_observer()
        if m == "profile":
            with dt.profile(None, backend="none"):
                return timed()
        if m == "on":
            recorded[0] += (size + settle) * per_step
            return timed()
        if m == "off":
            dt.remove_observer()
            try:
                return timed()
            finally:
                dt.install_observer(torch)
        if m == "profiler":
            if under_record:
                dt.remove_observer()
            try:
                with profile(activities=[ProfilerActivity.CPU]):
                    return timed()
            finally:
                if under_record:
                    dt.install_observer(torch)

    for m in modes:
        block(m)
        block(m)
    ns = {m: [] for m in modes}
    for r in range(blocks):
        k = r % len(modes)
        for m in modes[k:] + modes[:k]:
            ns[m].append(block(m) / size)
    for m in modes:
        print("mode %s median %.3f mean %.3f blocks %d" % (m, statistics.median(ns[m]), statistics.fmean(ns[m]),
                                                          len(ns[m])))
    if under_record:
        print("ops_recorded %d" % recorded[0])


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[5] == "--callgrind":
        count_instructions(sys.argv[1], int(sys.argv[3]), sys.argv[4], sys.argv[6], int(sys.argv[7]))
    elif len(sys.argv) in (4, 5):
        main(sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:5])
    else:
        sys.exit("usage: torch_ops.py MODES BLOCKS BLOCK_SIZE [add|step [--callgrind LIB WARMUP]]")
