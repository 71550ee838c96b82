"""torch_checks.py: what the PyTorch tests share: the interpreter that imports torch (the
``python3`` on PATH may be another one), running a program under devtrace record, and the
attribution check on a trace of torch_program.py."""
import collections
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import trace_checks as tc  # noqa: E402

SKIP = 77


def torch_python(need=("torch", "pyopencl", "numpy")):
    """An interpreter that imports torch (and pyopencl): /usr/bin/python3 (Debian's
    python3-torch), else python3 on PATH. Exits 77 (skip, saying why) when none does."""
    tried = []
    for candidate in ("/usr/bin/python3", shutil.which("python3"), sys.executable):
        if not candidate or candidate in tried or not os.path.exists(candidate):
            continue
        tried.append(candidate)
        probe = subprocess.run([candidate, "-c", "import %s" % ", ".join(need)], capture_output=True, text=True)
        if probe.returncode == 0:
            print("interpreter with torch: %s" % candidate)
            return candidate
    print("SKIPPED: no interpreter imports %s (tried %s); scripts/install-deps installs python3-torch and "
          "python3-pyopencl" % (", ".join(need), ", ".join(tried)))
    sys.exit(SKIP)


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
    return r


def ops_by_name(trace):
    return collections.Counter(e["name"] for e in tc.complete_events(trace, "cpu_op"))


def innermost_op(ops, call):
    """The innermost cpu_op on call's thread whose interval holds the call's."""
    best = None
    for op in ops:
        if op["pid"] != call["pid"] or op["tid"] != call["tid"]:
            continue
        if op["ts"] <= call["ts"] and call["ts"] + call["dur"] <= op["ts"] + op["dur"]:
            if best is None or (op["ts"], -op["dur"]) > (best["ts"], -best["dur"]):
                best = op
    return best


def check_attribution(trace, program, runtime_cat="privateuse1_runtime"):
    """Every kernel's External id is the id of the innermost op around its launching
    runtime call on the same thread; the counts are torch_program.py's, exactly."""
    ops = tc.complete_events(trace, "cpu_op")
    kernels = tc.complete_events(trace, "kernel")
    calls = {e["args"]["correlation"]: e for e in tc.complete_events(trace, runtime_cat)}
    assert len(kernels) == sum(program.EXPECTED_KERNELS.values()), \
        "kernels: %d, expected %d" % (len(kernels), sum(program.EXPECTED_KERNELS.values()))
    names = ops_by_name(trace)
    for name, count in program.EXPECTED_OPS.items():
        assert names[name] == count, "op %s: %d in the trace, expected %d" % (name, names[name], count)
    by_innermost = collections.Counter()
    for k in kernels:
        call = calls.get(k["args"]["correlation"])
        assert call is not None, "kernel %s has no launching call" % k["args"]["correlation"]
        op = innermost_op(ops, call)
        assert op is not None, "kernel launched by %s at %s is inside no op" % (call["name"], call["ts"])
        assert k["args"].get("External id") == op["args"]["External id"], \
            "kernel (correlation %s) has External id %s; the innermost op around its launch is %s (%s)" % (
                k["args"]["correlation"], k["args"].get("External id"), op["name"], op["args"]["External id"])
        by_innermost[op["name"]] += 1
    assert dict(by_innermost) == program.EXPECTED_KERNELS, dict(by_innermost)
    # Ops before the first device call are kept.
    first_call = min(c["ts"] for c in calls.values())
    adds = [e for e in ops if e["name"] == "aten::add" and e["ts"] + e["dur"] <= first_call]
    assert len(adds) == program.ADDS_BEFORE_DEVICE, "aten::add before the first device call: %d" % len(adds)
    # The second thread's op is on its own thread; forward and backward share a sequence number.
    main_tid = next(e["tid"] for e in ops if e["name"] == "outer")
    worker = next(e for e in ops if e["name"] == "worker_scope")
    assert worker["tid"] != main_tid, "worker_scope on the main thread"
    fwd = next(e for e in ops if e["name"] == "Scale")
    bwd = next(e for e in ops if e["name"] == "ScaleBackward")
    assert "Sequence number" in fwd["args"] and fwd["args"]["Sequence number"] == bwd["args"].get("Sequence number"), \
        (fwd["args"], bwd["args"])
    assert "Fwd thread id" in bwd["args"], bwd["args"]
    return len(kernels), len(ops)
