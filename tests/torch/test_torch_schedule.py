#!/usr/bin/env python3
"""test_torch_schedule.py PYTHON_DIR TMPDIR: devtrace.torch.profile's schedule, as
torch.profiler's: schedule(wait=1, warmup=1, active=2) records steps 2 and 3 of each cycle
(ProfilerStep#N ops, N the step), one trace per cycle (PATH for one cycle; PATH.1.json,
PATH.2.json for repeat=2), on_trace_ready once per trace, and nothing outside the active
steps."""
import json
import os
import sys
import tempfile

import torch_checks as T

python_dir, tmp = sys.argv[1:3]
py = T.torch_python()
work = tempfile.mkdtemp(prefix="torch-schedule-", dir=tmp)
program = os.path.join(T.HERE, "schedule_program.py")
env = {"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": os.path.join(tmp, "cache")}


def steps_in(path):
    trace = T.tc.load(path)
    names = T.ops_by_name(trace)
    return (sorted(n for n in names if n.startswith("ProfilerStep#")), names["work"],
            len(T.tc.complete_events(trace, "kernel")))


def check(repeat, steps, expected):
    path = os.path.join(work, "r%d.json" % repeat)
    r = T.run([py, program, path, str(repeat), str(steps)], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    ready = [l.split() for l in r.stdout.splitlines() if l.startswith("ready ")]
    assert [(p, int(c)) for _, p, c in ready] == [(p, i + 1) for i, (p, _) in enumerate(expected)], ready
    for p, want_steps in expected:
        got = steps_in(p)
        assert got == (want_steps, 2, 2), "%s: %s, expected steps %s with 2 'work' ops and 2 kernels" % (p, got,
                                                                                                     want_steps)
    averages = json.loads(next(l for l in r.stdout.splitlines() if l.startswith("averages "))[len("averages "):])
    assert averages["work"][0] == 2 and averages["work"][2] == 2, averages["work"]  # calls, device events
    leftovers = sorted(f for f in os.listdir(work) if f.startswith("r%d" % repeat))
    assert leftovers == sorted(os.path.basename(p) for p, _ in expected), leftovers
    print("ok   repeat=%d over %d steps: %s" % (repeat, steps, ", ".join(os.path.basename(p) for p, _ in expected)))


check(1, 6, [(os.path.join(work, "r1.json"), ["ProfilerStep#2", "ProfilerStep#3"])])
check(2, 9, [(os.path.join(work, "r2.1.json"), ["ProfilerStep#2", "ProfilerStep#3"]),
             (os.path.join(work, "r2.2.json"), ["ProfilerStep#6", "ProfilerStep#7"])])
