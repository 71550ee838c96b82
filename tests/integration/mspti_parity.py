#!/usr/bin/env python3
"""mspti_parity.py: DESIGN.md's parity assertions on an MSPTI trace, through check_parity.py
(parameterised, not copied): the Ascend names of the generic calls, runtime events without
a cbid, and kernels without the keys MSPTI has no data for (registers, shared memory, grid,
block, occupancy: the trace must omit them, so their presence fails). With `record`, first
runs `devtrace record --backend mspti` on the emulator and checks the devtrace section.

    mspti_parity.py check TRACE.json WORKLOAD.wl
    mspti_parity.py record --devtrace BIN --emu-run BIN --lib EMULATOR.so --workload WL --out TRACE.json
                           [--library-env PATH] [--parity] [--expect PATH=VALUE ...] [--expect-note TEXT ...]
                           [--expect-unavailable TEXT ...]
$DEVEMU_FAULTS passes through to the emulator. Exit 0 when everything holds.
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_parity  # noqa: E402

# DESIGN.md, "Generic runtime calls", the Ascend column; the launch is aclrtLaunchKernel
# (tests/emu/README.md: the emulator's "aclnn kernel launch").
ASCEND_NAMES = {
    "get_device": "aclrtGetDevice", "get_device_count": "aclrtGetDeviceCount",
    "get_device_properties": "aclrtGetDeviceInfo", "set_device": "aclrtSetDevice",
    "malloc": "aclrtMalloc", "free": "aclrtFree", "event_record": "aclrtRecordEvent",
    "launch": "aclrtLaunchKernel", "memcpy": "aclrtMemcpy", "memset": "aclrtMemsetAsync",
    "sync_stream": "aclrtSynchronizeStream", "sync_device": "aclrtSynchronizeDevice",
}
# What an MSPTI kernel record cannot give (no launch configuration, no device attributes).
NOT_IN_MSPTI_KERNELS = {"registers per thread", "shared memory", "grid", "block"} | check_parity.OCCUPANCY_KEYS
RUNTIME_CATEGORY = "privateuse1_runtime"


@contextlib.contextmanager
def mspti_profile():
    """check_parity with MSPTI's names and kernel keys, restored afterwards."""
    saved_keys, had = check_parity.KERNEL_KEYS, "mspti" in check_parity.VENDOR_NAMES
    check_parity.VENDOR_NAMES.setdefault("mspti", ASCEND_NAMES)
    check_parity.KERNEL_KEYS = saved_keys - NOT_IN_MSPTI_KERNELS
    try:
        yield
    finally:
        check_parity.KERNEL_KEYS = saved_keys
        if not had:
            del check_parity.VENDOR_NAMES["mspti"]


def check(trace, wl):
    with mspti_profile():
        c = check_parity.check_trace(trace, wl, RUNTIME_CATEGORY, "mspti", require_cbid=False)
    # Omitted, not zero: no kernel carries a launch key, no runtime event a cbid.
    for e in trace.get("traceEvents", []):
        args = e.get("args", {})
        if e.get("cat") == "kernel":
            c.check(not (set(args) & NOT_IN_MSPTI_KERNELS), "4. an MSPTI kernel carries %s"
                    % sorted(set(args) & NOT_IN_MSPTI_KERNELS))
        if e.get("cat") == RUNTIME_CATEGORY:
            c.check("cbid" not in args, "4. an MSPTI runtime event carries a cbid")
    c.check(trace.get("devtrace", {}).get("backend") == "mspti", "the trace's backend is not mspti")
    return c


def lookup(meta, path):
    node = meta
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def cmd_check(args):
    try:
        with open(args.trace, encoding="utf-8") as f:
            trace = json.load(f)
        wl = check_parity.Workload(args.workload)
    except (OSError, ValueError, check_parity.WorkloadError, KeyError) as e:
        print("mspti_parity: %s" % e, file=sys.stderr)
        return 2
    c = check(trace, wl)
    for what in c.failed:
        print("FAIL %s" % what)
    print("parity (mspti): %d assertion(s) hold, %d fail" % (c.passed, len(c.failed)))
    return 1 if c.failed else 0


def cmd_record(args):
    env = dict(os.environ)
    env["DEVTRACE_MSPTI_LIBRARY"] = args.library_env or args.lib
    env.pop("LD_PRELOAD", None)  # devtrace record must set it itself
    if os.path.exists(args.out):
        os.unlink(args.out)
    cmd = [args.devtrace, "record", "--backend", "mspti", "-o", args.out, "--",
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
    for item in args.expect:
        path, _, value = item.partition("=")
        got = lookup(meta, path)
        if str(got) != value:
            failures.append("devtrace.%s = %s, expected %s" % (path, got, value))
    notes = "\n".join(meta.get("notes", []))
    for text in args.expect_note:
        if text not in notes:
            failures.append("no note contains %r (notes: %s)" % (text, meta.get("notes")))
    for text in args.expect_unavailable:
        if text not in meta.get("unavailable", ""):
            failures.append("devtrace.unavailable lacks %r: %r" % (text, meta.get("unavailable")))
    if args.parity:
        c = check(trace, check_parity.Workload(args.workload))
        failures += ["parity: " + f for f in c.failed]
        print("parity (mspti): %d assertion(s) hold, %d fail" % (c.passed, len(c.failed)))
    for f in failures:
        print("FAIL %s" % f)
    print("%s: %s" % (os.path.basename(args.out), "ok" if not failures else "%d failure(s)" % len(failures)))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("trace")
    c.add_argument("workload")
    r = sub.add_parser("record")
    r.add_argument("--devtrace", required=True)
    r.add_argument("--emu-run", required=True)
    r.add_argument("--lib", required=True)
    r.add_argument("--workload", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--library-env", help="$DEVTRACE_MSPTI_LIBRARY for devtrace (default: --lib)")
    r.add_argument("--parity", action="store_true")
    r.add_argument("--expect", nargs="*", default=[])
    r.add_argument("--expect-note", nargs="*", default=[])
    r.add_argument("--expect-unavailable", nargs="*", default=[])
    args = ap.parse_args()
    return cmd_check(args) if args.cmd == "check" else cmd_record(args)


if __name__ == "__main__":
    sys.exit(main())
