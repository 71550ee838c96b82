#!/usr/bin/env python3
"""test_torch_profile.py PYTHON_DIR TMPDIR DEVTRACE: devtrace.torch.profile as torch.profiler
users write it, on the "none" backend (no device needed). The same training loop under
torch.profiler.profile and devtrace.torch.profile (compare_program.py): the same op names
and counts, key_averages' columns, attribute names and sort keys, events' tree, sequence
numbers on autograd::engine::evaluate_function ops, input shapes, and traces from
tensorboard_trace_handler that devtrace report reads. The arguments devtrace cannot honour
say so in one line each. The RecordFunction callback is removed when the last profile ends
(torch itself reports no global callback left, and ops after it are not recorded), a
profile started inside another is refused the way torch.profiler refuses it
(RuntimeError), and a read-only observer cache is named in one line."""
import json
import os
import sys
import tempfile

import torch_checks as T

python_dir, tmp, devtrace = sys.argv[1:4]
py = T.torch_python(need=("torch",))
work = tempfile.mkdtemp(prefix="torch-profile-", dir=tmp)
cache = os.path.join(tmp, "cache")
failures = []


def case(fn):
    try:
        skipped = fn()
        print("%s %s" % ("skip" if skipped else "ok  ", fn.__name__))
    except AssertionError as e:
        failures.append(fn.__name__)
        print("FAIL %s: %s" % (fn.__name__, e))
    return fn


def run_code(code, env=None):
    """Runs code under the torch interpreter with the package; returns its last stdout line
    as JSON."""
    e = {"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": cache}
    e.update(env or {})
    r = T.run([py, "-c", code], env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r


@case
def the_callback_is_removed_when_the_last_profile_ends():
    out, _ = run_code(r'''
import json, torch, devtrace.torch as dt
a = torch.ones(1)
state = {"before": dt.observer_state()}
with dt.profile(None, backend="none") as p:
    state["inside"] = dt.observer_state()
    for _ in range(3):
        torch.add(a, a)
state["after"] = dt.observer_state()
for _ in range(5):
    torch.add(a, a)  # no callback: nothing to record, nothing to pay
adds = [e for e in p.events() if e.name == "aten::add"]
with dt.profile(None, backend="none") as q:
    state["again"] = dt.observer_state()
    torch.add(a, a)
state["after_again"] = dt.observer_state()
state["adds"] = [len(adds), len([e for e in q.events() if e.name == "aten::add"])]
print(json.dumps(state))
''')
    # (devtrace's callback installed, torch has a global callback)
    assert out == {"before": [False, None], "inside": [True, True], "after": [False, False],
                   "again": [True, True], "after_again": [False, False], "adds": [3, 1]}, out


@case
def a_profile_inside_another_is_refused_as_torch_refuses_it():
    outer = os.path.join(work, "outer.json")
    out, r = run_code(r'''
import json, sys, torch, devtrace.torch as dt
import torch.profiler as tp
a = torch.ones(1)
seen = {}
for name, make in (("torch", lambda: tp.profile()), ("devtrace", lambda: dt.profile(None, backend="none"))):
    with make():
        try:
            with make():
                torch.add(a, a)
        except Exception as e:
            seen[name] = [type(e).__name__, str(e)]
with dt.profile(sys.argv[1] if len(sys.argv) > 1 else %r, backend="none") as p:
    torch.add(a, a)
    try:
        with dt.profile(None, backend="none"):
            pass
    except RuntimeError:
        torch.mul(a, a)
    torch.sub(a, a)
seen["outer"] = sorted(e.name for e in p.events() if e.name in ("aten::add", "aten::mul", "aten::sub"))
print(json.dumps(seen))
''' % outer)
    assert out["torch"][0] == "RuntimeError", out  # what torch.profiler raises
    assert out.get("devtrace") == ["RuntimeError", "devtrace.torch.profile: another profile is already recording in "
                               "this process; profiles do not nest (torch.profiler refuses it too: 'Profiler is "
                               "already enabled on this thread.'): stop the outer one first"], out
    # The outer profile goes on and writes its trace, with the op of the refused one.
    assert out["outer"] == ["aten::add", "aten::mul", "aten::sub"], out
    assert "runs under devtrace record" not in r.stderr, r.stderr
    names = T.ops_by_name(T.tc.load(outer))
    assert (names["aten::add"], names["aten::mul"], names["aten::sub"]) == (1, 1, 1), names


@case
def a_read_only_cache_folder_is_named_in_one_line():
    ro = os.path.join(work, "ro-cache")
    os.makedirs(ro)
    code = ("import torch, devtrace.torch as dt\n"
            "with dt.profile(None, backend='none') as p:\n    torch.add(torch.ones(1), 1)\n"
            "print(len([e for e in p.events() if e.name == 'aten::add']))\n")
    env = {"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": ro}
    if os.geteuid() != 0:
        os.chmod(ro, 0o555)
        cmd, why = [py, "-c", code], "Permission denied"
    else:  # root writes through permissions: a read-only bind mount in a mount namespace of its own
        cmd = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', ro, py, "-c", code]
        why = "Read-only file system"
        probe = T.run(["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0"', ro])
        if probe.returncode != 0:
            print("     (root, and no mount namespace here: %s)" % probe.stderr.strip())
            return "skipped"
    r = T.run(cmd, env=env)
    os.chmod(ro, 0o755)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines == ["devtrace: PyTorch ops are not recorded: cannot write the observer into its cache %s (%s): "
                     "set DEVTRACE_TORCH_CACHE to a writable folder; device events are still recorded" % (ro, why)], \
        r.stderr
    assert r.stdout.strip() == "0", r.stdout
    assert os.listdir(ro) == [], os.listdir(ro)


@case
def the_same_program_under_torch_profiler_and_devtrace_gives_the_same():
    out_dir = os.path.join(work, "compare")
    r = T.run([py, os.path.join(T.HERE, "compare_program.py"), out_dir],
              env={"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": cache})
    assert r.returncode == 0, r.stdout + r.stderr
    both = json.loads(r.stdout.strip().splitlines()[-1])
    t, d = both["torch"], both["devtrace"]
    # on_trace_ready after steps 4 and 8 (two cycles of wait 1, warmup 1, active 2), one trace each.
    assert t["ready"] == d["ready"] == [4, 8], (t["ready"], d["ready"])
    assert len(t["traces"]) == len(d["traces"]) == 2, (t["traces"], d["traces"])
    # Names and counts. torch folds an op into its parent of the same name when it is the
    # parent's only child, on its microsecond clock; devtrace on its nanosecond one: an op
    # devtrace folded may stay apart in torch (never the other way round).
    assert sorted(t["names"]) == sorted(d["names"]), (sorted(set(t["names"]) ^ set(d["names"])))
    for name, n in d["names"].items():
        assert n <= t["names"][name] <= n + d["folded"].get(name, 0), (name, t["names"][name], n, d["folded"])
    # events() is the last trace's: steps 6 and 7.
    assert d["names"]["ProfilerStep*"] == 2 and d["names"]["step_body"] == 2, d["names"]
    assert d["names"]["autograd::engine::evaluate_function: AddmmBackward0"] == 4, d["names"]
    assert d["event_fields"] == t["event_fields"] and len(d["event_fields"]) == 13, (d["event_fields"], t["event_fields"])
    assert d["avg_fields"] == t["avg_fields"] and len(d["avg_fields"]) == 8, (d["avg_fields"], t["avg_fields"])
    tavg, davg = dict(map(tuple, t["averages"])), dict(map(tuple, d["averages"]))
    assert sorted(tavg) == sorted(davg), sorted(set(tavg) ^ set(davg))
    for key, n in davg.items():
        assert n <= tavg[key] <= n + d["folded"].get(key, 0), (key, tavg[key], n)
    tshaped = {(k, s): n for k, s, n in t["shaped"]}
    dshaped = {(k, s): n for k, s, n in d["shaped"]}
    # A same-name child torch kept apart (its microsecond clock did not nest it) keeps its own
    # shapes in torch's table; devtrace folded it into its parent. Only such names may differ.
    assert set(dshaped) <= set(tshaped), sorted(set(dshaped) - set(tshaped))
    extra = sorted(k for k in set(tshaped) - set(dshaped) if k[0] not in d["folded"])
    assert not extra, (extra, d["folded"])
    # The table: torch's header and footer, every sort key torch has, largest first.
    assert d["header"] == t["header"], (d["header"], t["header"])
    assert d["header"][1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                      "CPU", "time", "avg", "#", "of", "Calls"], d["header"]
    assert d["footer"] == t["footer"] == "Self CPU time total", (d["footer"], t["footer"])
    assert d["sort_keys"] == t["sort_keys"] and sorted(d["sort_keys"]) == sorted(
        ["self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "self_cuda_time_total", "cuda_time_total"]), \
        (d["sort_keys"], t["sort_keys"])
    assert d["table_counts"] == sorted(d["table_counts"], reverse=True) and len(d["table_counts"]) == len(davg), \
        d["table_counts"]
    # evaluate_function ops carry their node's sequence number, as torch's do.
    # (torch's own tree, on its microsecond clock, sometimes misses the node inside it.)
    assert [[n, seq >= 0] for n, seq, _ in d["evaluate"]] == [[n, seq >= 0] for n, seq, _ in t["evaluate"]], \
        (d["evaluate"], t["evaluate"])
    assert all(children == [seq] for _, seq, children in d["evaluate"]), d["evaluate"]
    # Per step: MeanBackward0, PowBackward0, 2 AddmmBackward0, 2 TBackward0, ReluBackward0.
    assert sum(1 for _, seq, _ in d["evaluate"] if seq >= 0) == 14, d["evaluate"]
    assert d["addmm_shapes"] == t["addmm_shapes"] == [[16], [4, 8], [8, 16], [], []], (d["addmm_shapes"],
                                                                                        t["addmm_shapes"])
    # The traces tensorboard_trace_handler wrote through export_chrome_trace: devtrace report
    # reads them; cpu_ops with Kineto's Input Dims and Input type, evaluate_function's Sequence number.
    for name in d["traces"]:
        path = os.path.join(d["trace_dir"], name)
        rep = T.run([devtrace, "report", "--top", "1000", path])  # every op (the top 20 move with the load)
        assert rep.returncode == 0 and "aten::addmm" in rep.stdout, rep.stdout + rep.stderr
        trace = T.tc.load(path)
        ops = T.tc.complete_events(trace, "cpu_op")
        addmm = [e for e in ops if e["name"] == "aten::addmm"]
        assert len(addmm) == 4, len(addmm)
        assert addmm[0]["args"]["Input Dims"] == [[16], [4, 8], [8, 16], [], []], addmm[0]["args"]
        assert addmm[0]["args"]["Input type"] == ["float", "float", "float", "Scalar", "Scalar"], addmm[0]["args"]
        nodes = {e["name"]: e for e in ops if e["name"] == "MeanBackward0"}
        evaluate = [e for e in ops if e["name"] == "autograd::engine::evaluate_function: MeanBackward0"]
        assert len(evaluate) == 2 and all("Sequence number" in e["args"] for e in evaluate), evaluate
        node_seqs = sorted(e["args"]["Sequence number"] for e in ops if e["name"] == "MeanBackward0")
        assert sorted(e["args"]["Sequence number"] for e in evaluate) == node_seqs, (evaluate, nodes)
    print("     %d op names, %d calls; %d folded into a parent by devtrace, %d of them kept apart by torch" % (
        len(d["names"]), sum(d["names"].values()), sum(d["folded"].values()),
        sum(d["names"].values()) + sum(d["folded"].values()) - sum(t["names"].values())))


@case
def what_devtrace_cannot_honour_says_so_in_one_line_each():
    trace = os.path.join(work, "unsupported.json")
    out, r = run_code(r'''
import json, torch, devtrace.torch as dt
from torch.profiler import ProfilerActivity
with dt.profile(%r, activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True, with_flops=True,
                with_modules=True) as p:
    torch.add(torch.ones(1), 1)
p.start()  # start() and stop() as torch's
torch.mul(torch.ones(1), 1)
p.stop()
with dt.profile(None, activities=[ProfilerActivity.CUDA]) as q:  # no CPU: no ops
    torch.add(torch.ones(1), 1)
print(json.dumps([[e.name for e in p.events() if e.name.startswith("aten::m")], len(q.events()), q.backend]))
''' % trace)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines == ["devtrace.torch.profile: profile_memory=True is not supported: no allocator events are recorded",
                     "devtrace.torch.profile: with_stack=True is not supported: no Python stacks are recorded",
                     "devtrace.torch.profile: with_flops=True is not supported: no FLOPs are counted",
                     "devtrace.torch.profile: with_modules=True is not supported: no module hierarchy is recorded"], \
        r.stderr
    assert out == [["aten::mul"], 0, "auto"], out
    notes = T.tc.load(trace)["devtrace"]["notes"]
    assert sum(1 for n in notes if "is not supported" in n) == 4, notes


print("devtrace: %s" % ("FAILED: " + ", ".join(failures) if failures else "all devtrace.torch.profile cases passed"))
sys.exit(1 if failures else 0)
