#!/usr/bin/env python3
"""roctracer_parity.py: DESIGN.md's parity assertions (check_parity.py) on a trace of the
roctracer backend, with what ROCtracer cannot give taken out, and the ROCtracer-specific
facts added.

    roctracer_parity.py TRACE.json WORKLOAD.wl [--expect PATH=VALUE ...]

What differs from check_parity.py's defaults, and why:
  - runtime category "cuda_runtime": Kineto's ROCm build writes HIP calls as CUDA_RUNTIME;
  - vendor names "roctracer": hipGetDevice, hipLaunchKernel, ... (check_parity's table);
  - kernels lack "registers per thread" (no ROCtracer record or HIP callback carries the
    register count) and so "shared memory" (the Chrome sink writes both from one flag);
    the dynamic shared memory of the launch still goes into the occupancy figures;
  - occupancy keys required (the emulator's device answers hipDeviceGetAttribute).
Added: devtrace.backend is "roctracer" and its validation says "emulated"; every kernel
has a grid and a block (from its launch call); --expect checks devtrace-section values
(e.g. counts.kernel=17 dropped.vendor=0 malformed.records=0).
Exit status 0 when every assertion holds, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_parity  # noqa: E402

ROCTRACER_ABSENT_KERNEL_KEYS = {"registers per thread", "shared memory"}


def lookup(meta, path):
    node = meta
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("workload")
    ap.add_argument("--expect", nargs="*", default=[])
    args = ap.parse_args(argv)
    try:
        with open(args.trace, encoding="utf-8") as f:
            trace = json.load(f)
        wl = check_parity.Workload(args.workload)
    except (OSError, ValueError, check_parity.WorkloadError, KeyError) as e:
        print("roctracer_parity: %s" % e, file=sys.stderr)
        return 2
    check_parity.KERNEL_KEYS = set(check_parity.KERNEL_KEYS) - ROCTRACER_ABSENT_KERNEL_KEYS
    c = check_parity.check_trace(trace, wl, "cuda_runtime", "roctracer", require_cbid=True, require_occupancy=True)
    meta = trace.get("devtrace", {})
    c.check(meta.get("backend") == "roctracer", "backend %s, not roctracer" % meta.get("backend"))
    c.check("emulated" in str(meta.get("validation", "")), "validation does not say emulated: %s"
            % meta.get("validation"))
    kernels = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") == "kernel"]
    nogrid = [e.get("name") for e in kernels if "grid" not in e.get("args", {}) or "block" not in e.get("args", {})]
    c.check(not nogrid, "%d kernel(s) without grid/block, e.g. %s" % (len(nogrid), nogrid[:1]))
    for item in args.expect:
        path, _, value = item.partition("=")
        got = lookup(meta, path)
        c.check(str(got) == value, "devtrace.%s = %s, expected %s" % (path, got, value))
    for what in c.failed:
        print("FAIL %s" % what)
    print("roctracer parity: %d assertion(s) hold, %d fail (kernel=%d memcpy=%d memset=%d runtime=%d expected)"
          % (c.passed, len(c.failed), wl.kernels, wl.memcpys, wl.memsets, wl.runtime))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
