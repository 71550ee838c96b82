"""compare_program.py OUT_DIR: the same training loop under torch.profiler.profile and
devtrace.torch.profile, written as a torch.profiler user writes it (the import is the only
change); prints one JSON line with what each returned, for test_torch_profile.py.

The loop: a two-layer model, loss, backward and SGD step inside record_function("step_body"),
8 steps under schedule(wait=1, warmup=1, active=2, repeat=2) with
tensorboard_trace_handler, record_shapes=True, activities=[CPU]."""
import collections
import json
import os
import sys

import torch
import torch.profiler as tp
from torch.autograd.profiler import record_function

import devtrace.torch as dt

SORT_KEYS = ["self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "self_cuda_time_total",
             "cuda_time_total"]


def train(prof, model, opt, steps):
    data = torch.ones(4, 8)
    for _ in range(steps):
        with record_function("step_body"):
            loss = model(data).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        prof.step()


def summary(mod, out_dir):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    ready = []
    trace_dir = os.path.join(out_dir, mod.__name__.split(".")[0])
    handler = tp.tensorboard_trace_handler(trace_dir)

    def on_ready(p):
        ready.append(p.step_num)
        handler(p)

    with mod.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=True, on_trace_ready=on_ready,
                     schedule=tp.schedule(wait=1, warmup=1, active=2, repeat=2)) as prof:
        train(prof, model, opt, 8)
    events = prof.events()
    avg = prof.key_averages()
    shaped = prof.key_averages(group_by_input_shape=True)
    table = avg.table(sort_by="count", row_limit=1000).splitlines()
    evaluate = [[e.name, e.sequence_nr, [c.sequence_nr for c in e.cpu_children if c.name == e.name.split(": ")[1]]]
                for e in events if e.name.startswith("autograd::engine::evaluate_function: ")]
    sorted_rows = {}
    for key in SORT_KEYS:
        rows = avg.table(sort_by=key, row_limit=1000).splitlines()[3:-2]
        sorted_rows[key] = len(rows)
        values = [getattr(a, key) for a in sorted(avg, key=lambda a: getattr(a, key), reverse=True)]
        assert values == sorted(values, reverse=True)
    return {
        "ready": ready,
        "traces": sorted(os.listdir(trace_dir)),
        "trace_dir": trace_dir,
        "names": collections.Counter(e.name for e in events),
        "folded": getattr(events, "folded", {}),
        "event_fields": sorted(k for k in ("name", "id", "thread", "time_range", "cpu_parent", "cpu_children",
                                           "sequence_nr", "fwd_thread", "input_shapes", "cpu_time_total",
                                           "self_cpu_time_total", "key", "count") if hasattr(events[0], k)),
        "avg_fields": sorted(k for k in ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_time",
                                         "cuda_time_total", "self_cuda_time_total", "input_shapes")
                             if hasattr(avg[0], k)),
        "averages": sorted([a.key, a.count] for a in avg),
        "shaped": sorted([a.key, str(a.input_shapes), a.count] for a in shaped),
        "header": table[:3],
        "table_counts": [int(line.split()[-1]) for line in table[3:-2]],
        "footer": table[-1].split(":")[0],
        "evaluate": evaluate,
        "sort_keys": sorted_rows,
        "addmm_shapes": next(e.input_shapes for e in events if e.name == "aten::addmm"),
    }


def main(out_dir):
    print(json.dumps({"torch": summary(tp, out_dir), "devtrace": summary(dt, out_dir)}))


if __name__ == "__main__":
    main(sys.argv[1])
