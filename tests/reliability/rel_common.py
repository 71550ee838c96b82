"""rel_common.py: what the reliability drivers share (standard library only): their command-line
arguments (the paths CMake gives), running `devtrace record`, loading a trace strictly (valid JSON,
no duplicate key, the top-level keys in order: tests/cli/trace_checks.py), reading the devtrace
section by dotted paths, the workload's expected counts, and a small case runner that prints one
line per case and a Markdown table of the outcomes for docs/reliability.md.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import trace_checks  # noqa: E402

RUNTIME_CATS = ("cuda_runtime", "privateuse1_runtime")
DEVICE_KINDS = ("kernel", "memcpy", "memset")


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--devtrace", required=True)
    ap.add_argument("--rel-host", required=True)
    ap.add_argument("--emu-run", required=True)
    ap.add_argument("--emu", required=True, help="libcupti-emu.so")
    ap.add_argument("--emu-noflush", required=True, help="libcupti-emu-noflush.so")
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True, help="a folder for traces and the outcome table")
    ap.add_argument("--example", help="the OpenCL example (opencl-parity), when built")
    ap.add_argument("--failmalloc", help="rel_failmalloc.so (not under sanitizers)")
    ap.add_argument("--tsan", action="store_true", help="devtrace is built with ThreadSanitizer")
    ap.add_argument("--sanitized", action="store_true", help="devtrace is built with any sanitizer")
    ap.add_argument("--emu-roctracer", help="libroctracer-emu.so, when built")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    return ap.parse_args()


def no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError("duplicate keys %s" % sorted(dup))
    return dict(pairs)


def load_trace(path):
    """The trace, strictly: JSON without duplicate keys, top-level keys in Kineto's order."""
    with open(path, "rb") as f:
        raw = f.read()
    json.loads(raw, object_pairs_hook=no_duplicate_keys)
    return trace_checks.load(path)


def lookup(meta, path):
    node = meta
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def workload_counts(path):
    """kernel, memcpy, memset, runtime and external-correlation records of one run of a .wl file."""
    c = dict(kernel=0, memcpy=0, memset=0, runtime=0, extcorr=0)
    depth = 0
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            kind = words[0]
            if kind == "op":
                depth += 1 if words[1] == "push" else -1
                continue
            if kind in ("api", "launch", "memcpy", "memset", "sync"):
                c["runtime"] += 1
                c["extcorr"] += depth > 0
                if kind == "launch":
                    c["kernel"] += 1
                elif kind in ("memcpy", "memset"):
                    c[kind] += 1
    return c


def record(args, out_name, program, env=None, backend="cupti", extra=(), timeout=120, input_text=None):
    """Runs devtrace record; returns (CompletedProcess, seconds, trace path)."""
    path = os.path.join(args.out, out_name)
    for p in (path, path + ".tmp"):
        if os.path.exists(p):
            os.unlink(p)
    e = dict(os.environ)
    e["DEVTRACE_CUPTI_LIBRARY"] = args.emu
    e.pop("DEVEMU_FAULTS", None)
    e.update(env or {})
    cmd = [args.devtrace, "record", "-q", "-b", backend, "-o", path, *extra, "--", *program]
    t0 = time.time()
    return run_group(cmd, e, timeout, input_text), time.time() - t0, path


def run_group(cmd, env, timeout, input_text=None):
    """subprocess.run in its own process group: on a timeout the whole group (the recorder and the
    traced program) is killed, so a hung program never outlives the test."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(input_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def host(args, *scenario, lib=None, repeat=1):
    return [args.rel_host, "--lib", lib or args.emu, args.workload, "--repeat", str(repeat), *scenario]


class Cases:
    """Runs cases (functions returning an outcome string), one line each; collects a table."""

    def __init__(self, args, title):
        self.args = args
        self.title = title
        self.rows = []
        self.failures = []

    def run(self, name, path, fault, fn):
        if self.args.only and self.args.only not in name:
            return
        try:
            outcome = fn()
            if outcome is None:
                outcome = "ok"
            skipped = outcome.startswith("SKIPPED")
            print("%s %s: %s" % ("skip" if skipped else "ok  ", name, outcome))
            self.rows.append((name, path, fault, outcome))
        except (AssertionError, ValueError, OSError, subprocess.TimeoutExpired) as e:
            self.failures.append(name)
            print("FAIL %s: %s" % (name, e))
            self.rows.append((name, path, fault, "**FAILED**: %s" % e))

    def finish(self, table_name):
        lines = ["| case | path | fault / event | outcome (checked exactly) |", "|---|---|---|---|"]
        for name, path, fault, outcome in self.rows:
            lines.append("| %s | %s | %s | %s |" % (name, path, fault, outcome.replace("|", "/")))
        with open(os.path.join(self.args.out, table_name), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("table: %s" % os.path.join(self.args.out, table_name))
        if self.failures:
            print("%d failed: %s" % (len(self.failures), ", ".join(self.failures)))
            return 1
        print("%s: all %d cases passed" % (self.title, len(self.rows)))
        return 0


def expect_meta(trace, expected):
    meta = trace["devtrace"]
    for path, want in expected.items():
        got = lookup(meta, path)
        assert got == want, "devtrace.%s = %r, expected %r (notes: %s)" % (path, got, want, meta.get("notes"))


def expect_note(trace, *needles):
    notes = trace["devtrace"]["notes"]
    for n in needles:
        assert any(n in x for x in notes), "no note with %r in %s" % (n, notes)


def check_flows(trace):
    """Flow arrows paired: s ids == f ids, each once, each device event has one."""
    runtime_cat = trace["devtrace"].get("runtime_category")
    for cat in RUNTIME_CATS if runtime_cat is None else (runtime_cat,):
        if trace_checks.complete_events(trace, cat):
            trace_checks.check_flows(trace, cat)
            return
    trace_checks.check_flows(trace, RUNTIME_CATS[0])
