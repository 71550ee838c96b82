#!/usr/bin/env python3
"""cupti_record.py: the CUPTI backend through the command line, against the emulator:
runs `devtrace record --backend BACKEND -o TRACE -- emu-run --lib EMULATOR WORKLOAD` with
the emulator as the vendor library ($DEVTRACE_<BACKEND>_LIBRARY), then checks that the
program completed, the trace came out, the devtrace section's counters equal the
expectations given, and (with --parity) every parity assertion (check_parity.py).

    cupti_record.py --devtrace BIN --emu-run BIN --lib EMULATOR.so --workload WL --out TRACE.json
                    [--backend cupti] [--parity] [--vendor cupti] [--runtime-category cuda_runtime]
                    [--expect PATH=VALUE ...]     e.g. counts.kernel=15 dropped.vendor=2 zero_timestamp=3
$DEVEMU_FAULTS passes through to the emulator. Exit 0 when everything holds.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_parity  # noqa: E402


def lookup(meta, path):
    node = meta
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devtrace", required=True)
    ap.add_argument("--emu-run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cupti")
    ap.add_argument("--vendor", default="cupti")
    ap.add_argument("--runtime-category", default="cuda_runtime")
    ap.add_argument("--parity", action="store_true")
    ap.add_argument("--expect", nargs="*", default=[])
    args = ap.parse_args()

    env = dict(os.environ)
    env["DEVTRACE_%s_LIBRARY" % args.backend.upper()] = args.lib
    if os.path.exists(args.out):
        os.unlink(args.out)
    cmd = [args.devtrace, "record", "--backend", args.backend, "-o", args.out, "--",
           args.emu_run, "--lib", args.lib, args.workload]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    failures = []
    if proc.returncode != 0:
        failures.append("devtrace record exited %d (the program or the recorder failed)" % proc.returncode)
    try:
        with open(args.out, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL no trace: %s" % e)
        return 1
    meta = trace.get("devtrace", {})
    if meta.get("backend") != args.backend:
        failures.append("backend %s, expected %s (notes: %s)" % (meta.get("backend"), args.backend,
                                                                   meta.get("notes")))
    for item in args.expect:
        path, _, value = item.partition("=")
        got = lookup(meta, path)
        if str(got) != value:
            failures.append("devtrace.%s = %s, expected %s" % (path, got, value))
    if args.parity:
        wl = check_parity.Workload(args.workload)
        c = check_parity.check_trace(trace, wl, args.runtime_category, args.vendor)
        failures += ["parity: " + f for f in c.failed]
        print("parity: %d assertion(s) hold, %d fail" % (c.passed, len(c.failed)))
    for f in failures:
        print("FAIL %s" % f)
    print("%s: %s" % (os.path.basename(args.out), "ok" if not failures else "%d failure(s)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
