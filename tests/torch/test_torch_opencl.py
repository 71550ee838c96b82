#!/usr/bin/env python3
"""test_torch_opencl.py DEVTRACE PYTHON_DIR TMPDIR: PyTorch ops in the OpenCL timeline (PoCL).

torch_program.py traced with devtrace record --torch and with devtrace.torch.profile:
exact counts, and every kernel's External id is the innermost op around its launch on its
thread (check_torch_trace in torch_checks.py). The observer is built at first use into an
empty cache, and not again; without a compiler the run says so in one line and in the
trace, and still records the device events; a program that never imports torch does not
load it, and its own sitecustomize and usercustomize still run.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch_checks as T

devtrace, python_dir, tmp = sys.argv[1:4]
py = T.torch_python()
program_path = os.path.join(T.HERE, "torch_program.py")
sys.path.insert(0, T.HERE)
import torch_program as program  # noqa: E402  (its expected counts; it imports torch only when run)

work = tempfile.mkdtemp(prefix="torch-opencl-", dir=tmp)
cache = os.path.join(work, "cache")  # empty: the first run builds the observer
failures = []


def case(fn):
    try:
        fn()
        print("ok   %s" % fn.__name__)
    except AssertionError as e:
        failures.append(fn.__name__)
        print("FAIL %s: %s" % (fn.__name__, e))
    return fn


def record(out, args, env=None):
    e = {"DEVTRACE_TORCH_CACHE": cache}
    e.update(env or {})
    return T.run([devtrace, "record", "--torch", "--backend", "opencl", "-q", "-o", out, "--", py] + args, env=e)


@case
def record_torch_attributes_every_kernel_to_its_innermost_op():
    out = os.path.join(work, "record.json")
    r = record(out, [program_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "building the PyTorch observer for torch" in r.stderr, "first use did not build: " + r.stderr
    built = [f for f in os.listdir(cache) if f.endswith(".so")]
    assert len(built) == 1 and built[0].startswith("observer-torch"), built
    trace = T.tc.load(out)
    kernels, ops = T.check_attribution(trace, program)
    notes = trace["devtrace"].get("notes", [])
    assert any("PyTorch ops: torch" in n for n in notes), notes
    print("     %d kernels, %d cpu ops" % (kernels, ops))


@case
def second_run_uses_the_cached_observer():
    out = os.path.join(work, "record2.json")
    before = {f: os.stat(os.path.join(cache, f)).st_mtime_ns for f in os.listdir(cache)}
    r = record(out, [program_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "building the PyTorch observer" not in r.stderr, r.stderr
    after = {f: os.stat(os.path.join(cache, f)).st_mtime_ns for f in os.listdir(cache)}
    assert before == after, (before, after)
    T.check_attribution(T.tc.load(out), program)


@case
def in_process_profile_attributes_the_same():
    out = os.path.join(work, "profile.json")
    r = T.run([py, program_path, "--profile", out, "opencl"], env={"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": cache})
    assert r.returncode == 0, r.stdout + r.stderr
    trace = T.tc.load(out)
    T.check_attribution(trace, program)
    # key_averages: the table's device self time of 'inner' is the sum of its kernels' durations.
    ops = {e["args"]["External id"]: e for e in T.tc.complete_events(trace, "cpu_op")}
    inner_ns = sum(round(k["dur"] * 1000) for k in T.tc.complete_events(trace, "kernel")
                   if ops[k["args"]["External id"]]["name"] == "inner")
    averages = json.loads(next(l for l in r.stdout.splitlines() if l.startswith("averages "))[len("averages "):])
    calls, self_device_us, device_events = averages["inner"]
    assert (calls, device_events) == (1, program.EXPECTED_KERNELS["inner"]), averages["inner"]
    assert abs(self_device_us * 1000 - inner_ns) <= 2 * program.EXPECTED_KERNELS["inner"], (averages["inner"], inner_ns)
    # The table has the device columns (torch's, named "device" off CUDA).
    head = next(l for l in r.stdout.splitlines() if l.strip().startswith("Name"))
    assert " ".join(head.split()).endswith("CPU time avg Self device Self device % device total device time avg "
                                           "# of Calls"), head
    # No schedule: no ProfilerStep ops (torch.profiler records them only with one).
    assert not [n for n in T.ops_by_name(trace) if n.startswith("ProfilerStep")], T.ops_by_name(trace)


@case
def without_a_compiler_says_so_and_still_records_device_events():
    out = os.path.join(work, "nocompiler.json")
    r = record(out, [program_path], env={"CXX": "/nonexistent/c++", "DEVTRACE_TORCH_CACHE": os.path.join(work, "c2")})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if "PyTorch ops are not recorded" in l]
    assert len(lines) == 1 and "no C++ compiler" in lines[0] and "$CXX" in lines[0], r.stderr
    trace = T.tc.load(out)
    assert len(T.tc.complete_events(trace, "kernel")) == sum(program.EXPECTED_KERNELS.values())
    assert T.tc.complete_events(trace, "cpu_op") == []
    assert any("PyTorch ops are not recorded: no C++ compiler" in n for n in trace["devtrace"]["notes"])


@case
def ranks_with_percent_r_write_one_attributed_trace_each():
    # What torchrun does for each rank (RANK, WORLD_SIZE, LOCAL_RANK), two at once. Debian's
    # torchrun 1.13 itself stops before starting workers on Python 3.11 (AttributeError in
    # elastic.multiprocessing's to_map), so the test starts the ranks itself.
    traces = os.path.join(work, "ranks")
    os.makedirs(traces)
    cmd = [devtrace, "record", "--torch", "--backend", "opencl", "-q", "-o", os.path.join(traces, "rank%r.json"),
           "--", py, program_path]
    procs = []
    for rank in (0, 1):
        e = dict(os.environ, DEVTRACE_TORCH_CACHE=cache, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2")
        procs.append(subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for p in procs:
        output = p.communicate(timeout=300)[0]
        assert p.returncode == 0, output
    assert sorted(os.listdir(traces)) == ["rank0.json", "rank1.json"], os.listdir(traces)
    for rank in (0, 1):
        trace = T.tc.load(os.path.join(traces, "rank%d.json" % rank))
        assert trace["distributedInfo"]["rank"] == rank and trace["distributedInfo"]["world_size"] == 2, \
            trace["distributedInfo"]
        T.check_attribution(trace, program)


@case
def a_program_without_torch_is_unaffected_and_its_customize_modules_run():
    site = os.path.join(work, "site")
    os.makedirs(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['SITECUSTOMIZE_RAN'] = '1'\n")
    with open(os.path.join(site, "usercustomize.py"), "w") as f:
        f.write("import os\nos.environ['USERCUSTOMIZE_RAN'] = '1'\n")
    code = ("import os, sys; print('site', os.environ.get('SITECUSTOMIZE_RAN'), 'user', "
            "os.environ.get('USERCUSTOMIZE_RAN'), 'torch', 'torch' in sys.modules)")
    out = os.path.join(work, "notorch.json")
    r = record(out, ["-c", code], env={"PYTHONPATH": site})
    assert r.returncode == 0, r.stdout + r.stderr
    user_site = T.run([py, "-c", "import site; print(site.ENABLE_USER_SITE)"]).stdout.strip() == "True"
    assert r.stdout.strip() == "site 1 user %s torch False" % ("1" if user_site else "None"), r.stdout
    trace = T.tc.load(out)
    assert T.tc.complete_events(trace) == [], "a program without torch or OpenCL records nothing"


@case
def a_torch_only_program_is_told_what_was_recorded_and_what_not():
    out = os.path.join(work, "torchonly.json")
    r = record(out, ["-c", "import torch\nfor _ in range(4): torch.add(torch.ones(1), 1)"])
    assert r.returncode == 0, r.stdout + r.stderr
    trace = T.tc.load(out)
    assert T.ops_by_name(trace)["aten::add"] == 4, T.ops_by_name(trace)
    notes = trace["devtrace"]["notes"]
    assert "no OpenCL call reached devtrace (the program made none through the OpenCL loader): no OpenCL runtime " \
           "call, kernel, copy or memset was traced; ops and annotations (cpu_op events) were recorded" in notes, notes
    assert not any("nothing was traced" in n for n in notes), notes


print("devtrace: %s" % ("FAILED: " + ", ".join(failures) if failures else "all PyTorch/OpenCL cases passed"))
sys.exit(1 if failures else 0)
