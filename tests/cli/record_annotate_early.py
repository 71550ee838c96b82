#!/usr/bin/env python3
"""record_annotate_early.py DEVTRACE PROGRAM TMPDIR: an annotation before the program's
first OpenCL call is recorded under devtrace record (the default session exists from the
collector's first use, not from the backend's first call).

PROGRAM is annotate_before_opencl: its op "before_first_opencl_call" (id 41) comes before
any OpenCL call, "fill" (id 42) holds one clEnqueueFillBuffer. The trace must have exactly
one of each, the memset must carry External id 42, and no annotation call may fail.
"""
import os
import subprocess
import sys

import trace_checks as tc

devtrace, program, tmp = sys.argv[1:4]
out = os.path.join(tmp, "annotate-early.json")
r = subprocess.run([devtrace, "record", "--backend", "opencl", "-q", "-o", out, "--", program],
                   capture_output=True, text=True, timeout=120)
print(r.stdout, end="")
if r.returncode == 77:
    sys.exit(77)
assert r.returncode == 0, f"exit {r.returncode}: {r.stdout}{r.stderr}"
assert "before_first_opencl_call: push 0 pop 0" in r.stdout, r.stdout
trace = tc.load(out)
ops = tc.complete_events(trace, "cpu_op")
names = sorted((e["name"], e["args"]["External id"]) for e in ops)
assert names == [("before_first_opencl_call", 41), ("fill", 42)], names
memsets = tc.complete_events(trace, "gpu_memset")
assert [m["args"].get("External id") for m in memsets] == [42], memsets
before = next(e for e in ops if e["name"] == "before_first_opencl_call")
first_call = min(e["ts"] for e in tc.complete_events(trace, "privateuse1_runtime"))
assert before["ts"] + before["dur"] <= first_call, (before, first_call)
print("ok   annotation before the first OpenCL call recorded (External id 41), memset in 'fill' (42)")
