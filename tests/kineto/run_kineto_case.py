#!/usr/bin/env python3
"""run_kineto_case.py: one test of devtrace as libkineto's child profiler (docs/kineto.md).

Runs kineto_host (libkineto driven as PyTorch's profiler drives it, libdevtrace_kineto.so
registered as its child profiler) on a workload, then checks the JSON that libkineto's own
writer saved:

    run_kineto_case.py --host KINETO_HOST --adaptor LIB.so --out TRACE.json
        (--emulator EMU.so --workload W.wl | --opencl --workload parity.wl)
        [--profile NAME] [--expect PATH=VALUE ...] [--unavailable TEXT ...] [--host-clock]
        [--user-annotations]
    run_kineto_case.py --check-library LIB.so

The backend comes from the environment (DEVTRACE_BACKEND, DEVTRACE_<NAME>_LIBRARY, DEVEMU_FAULTS).

On every trace:
 - libkineto wrote it (schemaVersion, deviceProperties, traceEvents, traceName) with the
   adaptor's "devtrace" metadata (backend, validation, counts, losses, window);
 - one cpu_op per op the program ran (the workload's names), each with its External id
   (its correlation id: the workload's op id + 1) and its "Op id" (the workload's);
 - every device event's op link (External id) is its runtime call's and names a cpu_op; with
   --host-clock (and --opencl), the cpu_op innermost open on the launching thread when the call
   started;
 - nothing outside the capture window: every device and runtime event inside devtrace's window
   and before Kineto's "Record Window End";
 - the streams (getResourceInfos): exactly one thread_name per device stream that has device
   events, on that stream's lane (pid = device, tid = stream), named "stream N", and none for a
   stream without any.
Emulated backends (--emulator): DESIGN.md's seven parity assertions with the backend's profile
(tests/integration/check_parity.py: kernel=17, memcpy=1, memset=1, runtime=187, names from the
backend's namespace, every flow paired, attribution per op, arg keys and occupancy where the
backend has them, the window), on the trace with each External id mapped back to the workload's
op id, and --expect on the devtrace metadata.
OpenCL (--opencl): the example's counts (17 kernels, 1 memcpy, 1 memset), every flow paired, one
pair per device event, the opencl profile's facts, cl* runtime names, and per op the workload's
device-event kinds in order.
--unavailable TEXT (repeatable): the backend cannot trace: the program ran and its ops are in the
trace, no device or runtime event, backend "none", and the devtrace metadata's "unavailable"
reason contains each TEXT.
--user-annotations: each op is also a user scope (kineto_host --user-annotations: user
correlation id = the op's correlation id + 1000000, a user_annotation "user OPNAME"); what
Kineto's own CUPTI path makes of user correlation (GenericActivityProfiler: GpuUserEventMap)
must come out: per device stream and user id, exactly one gpu_user_annotation span named after
the user annotation, External id the user id, on the stream's lane, from the first start to the
last end of the device events launched under it (each device event counts for the innermost
scope open at its launch: its op's), widened by 1 ns each side as Kineto's writer does; no other
span. Skipped (77) when the library's devtrace_push_user_correlation is not implemented (the
adaptor then says so in the trace's devtrace metadata, "user_correlation").
--check-library: the library defines and exports no libkineto symbol (its dynamic symbols are
its entry point only), takes libkineto::api() from the host, and needs no libkineto.
Exit 0 when every assertion holds, 1 otherwise, 77 when the host has no OpenCL platform (or, with
--user-annotations, the library has no user correlation).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import check_parity  # noqa: E402

DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME_CATS = ("cuda_runtime", "privateuse1_runtime")


def ns(us):
    return int(round(float(us) * 1000.0))


def check_library(path):
    c = check_parity.Checker()
    out = subprocess.run(["nm", "-D", "-C", "--defined-only", path], capture_output=True, text=True, check=True)
    defined = sorted(line.split(None, 2)[-1] for line in out.stdout.splitlines() if line.strip())
    c.check(defined == ["devtrace_kineto_register"], "dynamic symbols defined: %s (want devtrace_kineto_register "
            "only)" % defined)
    out = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True, check=True)
    api = [line for line in out.stdout.splitlines() if "libkineto::api()" in line
           or "libkineto::GenericTraceActivity::log" in line or "libkineto_init" in line]
    c.check(not api, "libkineto's own functions are defined in it: %s" % api)
    out = subprocess.run(["nm", "-D", "-C", "--undefined-only", path], capture_output=True, text=True, check=True)
    c.check("libkineto::api()" in out.stdout, "libkineto::api() is not taken from the host")
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    needed = [line for line in out.stdout.splitlines() if "NEEDED" in line]
    c.check(not any("kineto" in line or "torch" in line for line in needed), "it needs %s" % needed)
    return report(c, "library %s" % os.path.basename(path))


def report(c, what):
    for f in c.failed:
        print("FAIL %s" % f)
    print("%s: %d assertion(s) hold, %d fail" % (what, c.passed, len(c.failed)))
    return 1 if c.failed else 0


def cpu_ops(trace):
    return [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") == "cpu_op"]


def check_common(c, trace, wl, runtime_cat, host_clock):
    """What every trace of a run with devtrace must show (the module docstring's first list)."""
    for key in ("schemaVersion", "deviceProperties", "traceEvents", "traceName", "devtrace"):
        c.check(key in trace, "the trace has no %r: not written by libkineto with the adaptor" % key)
    events = trace.get("traceEvents", [])
    xs = [e for e in events if e.get("ph") == "X"]
    ops = cpu_ops(trace)
    want_ops = sum(1 for _ in wl.op_names)  # every op id of parity.wl is pushed once
    c.check(len(ops) == want_ops, "%d cpu_op events, the workload has %d ops" % (len(ops), want_ops))
    by_ext = {}
    for e in ops:
        args = e.get("args", {})
        op_id = args.get("Op id")
        c.check(args.get("External id") == (op_id + 1 if isinstance(op_id, int) else None),
                "cpu_op %s: External id %s is not its Op id + 1" % (e.get("name"), args.get("External id")))
        c.check(wl.op_names.get(op_id) == e.get("name"), "cpu_op %s: the workload's op %s is %s"
                % (e.get("name"), op_id, wl.op_names.get(op_id)))
        by_ext[args.get("External id")] = e
    device = [e for e in xs if e.get("cat") in DEVICE_CATS]
    runtime = [e for e in xs if e.get("cat") == runtime_cat]
    launch = {e.get("args", {}).get("correlation"): e for e in runtime}
    # The op link: the device event's External id is its launch call's, and names a cpu_op; with
    # host_clock, that cpu_op is the innermost one open on the launching thread when the call
    # started. (An emulated device clock maps runtime calls within a microsecond or so: there,
    # parity's assertion 6 checks each call's op by the workload's order instead.)
    bad_link = 0
    for e in device:
        r = launch.get(e.get("args", {}).get("correlation"))
        ext = e.get("args", {}).get("External id")
        if r is None or ext is None or ext not in by_ext or r.get("args", {}).get("External id") != ext:
            bad_link += 1
            continue
        if host_clock:
            t = ns(r["ts"])
            open_ops = [o for o in ops
                        if o.get("tid") == r.get("tid") and ns(o["ts"]) <= t <= ns(o["ts"]) + ns(o["dur"])]
            inner = max(open_ops, key=lambda o: ns(o["ts"]), default=None)
            if inner is None or inner.get("args", {}).get("External id") != ext:
                bad_link += 1
    c.check(device and bad_link == 0, "%d of %d device event(s) whose op link is not the op open at their launch"
            % (bad_link, len(device)))
    # The window: devtrace's, and Kineto's end.
    base = int(trace.get("baseTimeNanoseconds", 0))
    window = trace.get("devtrace", {}).get("window", [0, 0])
    ends = [ns(e["ts"]) + base for e in events if e.get("ph") == "i" and e.get("name") == "Record Window End"]
    c.check(len(ends) == 1, "%d 'Record Window End' events, not 1" % len(ends))
    hi = min([int(window[1])] + ends)
    outside = [e.get("name") for e in device + runtime
               if base + ns(e["ts"]) < int(window[0]) - 1 or base + ns(e["ts"]) + ns(e["dur"]) > hi + 1]
    c.check(not outside, "%d event(s) outside the capture window, e.g. %s" % (len(outside), outside[:1]))
    return by_ext


def check_streams(c, trace):
    """getResourceInfos: one resource per device stream, named, on the stream's own lane."""
    events = trace.get("traceEvents", [])
    lanes = {(e.get("pid"), e.get("tid")) for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS}
    devices = {pid for pid, _ in lanes}
    names = collections.Counter((e.get("pid"), e.get("tid"), e.get("args", {}).get("name")) for e in events
                                if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") in devices)
    named = collections.Counter((pid, tid) for pid, tid, _ in names.elements())
    c.check(lanes and set(named) == lanes, "device streams with events %s, thread names on %s"
            % (sorted(lanes, key=str), sorted(named, key=str)))
    c.check(all(n == 1 for n in named.values()), "a stream named more than once: %s"
            % sorted(k for k, n in named.items() if n > 1))
    wrong = [(pid, tid, name) for pid, tid, name in names if name != "stream %s" % tid]
    c.check(not wrong, "streams not named 'stream N': %s" % wrong[:3])


USER_ID_OFFSET = 1000000  # kineto_host --user-annotations: the user id is the op's correlation id + this


def check_user_spans(c, trace):
    """Kineto's own path for user correlation (the docstring): spans per stream and user id."""
    events = trace.get("traceEvents", [])
    xs = [e for e in events if e.get("ph") == "X"]
    users = {e.get("args", {}).get("External id"): e for e in xs if e.get("cat") == "user_annotation"}
    c.check(users, "no user_annotation CPU activity in the trace (kineto_host --user-annotations)")
    want = {}
    for e in xs:
        if e.get("cat") not in DEVICE_CATS:
            continue
        ext = e.get("args", {}).get("External id")
        if ext is None:
            continue
        key = (e.get("pid"), e.get("tid"), ext + USER_ID_OFFSET)
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        lo, hi = want.get(key, (start, end))
        want[key] = (min(lo, start), max(hi, end))
    spans = [e for e in xs if e.get("cat") == "gpu_user_annotation"]
    got = collections.Counter((e.get("pid"), e.get("tid"), e.get("args", {}).get("External id")) for e in spans)
    c.check(want and set(got) == set(want), "gpu_user_annotation spans on %d (stream, user id) pairs, the device "
            "work has %d: extra %s, missing %s" % (len(got), len(want), sorted(set(got) - set(want), key=str)[:3],
                                                   sorted(set(want) - set(got), key=str)[:3]))
    c.check(all(n == 1 for n in got.values()), "a (stream, user id) pair with more than one span")
    bad = []
    for e in spans:
        key = (e.get("pid"), e.get("tid"), e.get("args", {}).get("External id"))
        if key not in want:
            continue
        lo, hi = want[key]
        user = users.get(key[2])
        if (ns(e["ts"]), ns(e["dur"])) != (lo - 1, hi - lo + 2) or user is None or e.get("name") != user.get("name"):
            bad.append("%s %s: ts %s dur %s, want %.3f %.3f named %s" % (
                e.get("name"), key, e["ts"], e["dur"], (lo - 1) / 1000.0, (hi - lo + 2) / 1000.0,
                user.get("name") if user else None))
    c.check(not bad, "%d span(s) not as Kineto's path makes them, e.g. %s" % (len(bad), bad[:2]))


def remapped(trace, by_ext):
    """The trace with each External id replaced by the workload's op id of its cpu_op, and each
    flow's id by the correlation of the event it binds to (Kineto's flow ids are 32 bits: the
    adaptor numbers the flows when the backend's correlation ids are wider)."""
    out = dict(trace)
    events = []
    at = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X" and "correlation" in e.get("args", {}):
            at[(e.get("pid"), e.get("tid"), e.get("ts"))] = e["args"]["correlation"]
    for e in trace.get("traceEvents", []):
        if e.get("ph") in ("s", "f"):
            e = dict(e)
            e["id"] = at.get((e.get("pid"), e.get("tid"), e.get("ts")), "unbound %s" % e.get("id"))
        args = e.get("args")
        if isinstance(args, dict) and "External id" in args and e.get("cat") != "cpu_op":
            e = dict(e)
            e["args"] = dict(args)
            op = by_ext.get(args["External id"])
            e["args"]["External id"] = op["args"]["Op id"] if op else -1 - args["External id"]
        events.append(e)
    out["traceEvents"] = events
    return out


def check_opencl(c, trace, wl, profile):
    events = trace.get("traceEvents", [])
    xs = [e for e in events if e.get("ph") == "X"]
    by_cat = collections.Counter(e.get("cat") for e in xs)
    for cat, want in (("kernel", 17), ("gpu_memcpy", 1), ("gpu_memset", 1)):
        c.check(by_cat[cat] == want, "%s=%d, the example has %d" % (cat, by_cat[cat], want))
    meta = trace.get("devtrace", {})
    for kind, cat in (("kernel", "kernel"), ("memcpy", "gpu_memcpy"), ("memset", "gpu_memset")):
        c.check(meta.get("counts", {}).get(kind) == by_cat[cat], "devtrace.counts.%s=%s, the trace has %d"
                % (kind, meta.get("counts", {}).get(kind), by_cat[cat]))
    device = [e for e in xs if e.get("cat") in DEVICE_CATS]
    flows = [e for e in events if e.get("ph") in ("s", "f")]
    s_ids = collections.Counter(e.get("id") for e in flows if e.get("ph") == "s")
    f_ids = collections.Counter(e.get("id") for e in flows if e.get("ph") == "f")
    c.check(set(s_ids) == set(f_ids) and len(f_ids) == len(device) and max(s_ids.values(), default=1) == 1,
            "flows: %d s, %d f ids for %d device events" % (len(s_ids), len(f_ids), len(device)))
    runtime = [e for e in xs if e.get("cat") == profile.runtime_category]
    c.check(runtime and all(e.get("name", "").startswith("cl") for e in runtime),
            "runtime names outside OpenCL's namespace: %s"
            % sorted({e.get("name") for e in runtime if not e.get("name", "").startswith("cl")}))
    check_parity.check_profile_facts(c, trace, profile)
    got = collections.defaultdict(list)
    for e in sorted(device, key=lambda e: float(e["ts"])):
        got[e.get("args", {}).get("External id")].append(e.get("cat"))
    for op_id, want in wl.op_device.items():
        if op_id is None:
            continue
        kinds = [k for k, _, _ in want]
        c.check(got.get(op_id, []) == kinds, "op %s (%s): device events %s, the workload has %s"
                % (op_id, wl.op_names.get(op_id), got.get(op_id, []), kinds))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check-library")
    ap.add_argument("--host")
    ap.add_argument("--adaptor")
    ap.add_argument("--out")
    ap.add_argument("--emulator")
    ap.add_argument("--opencl", action="store_true")
    ap.add_argument("--workload")
    ap.add_argument("--profile")
    ap.add_argument("--expect", nargs="*", default=[])
    ap.add_argument("--unavailable", action="append", default=[])
    ap.add_argument("--host-clock", action="store_true", help="runtime calls are stamped on the host clock")
    ap.add_argument("--user-annotations", action="store_true", help="each op is also a user scope")
    args = ap.parse_args(argv)
    if args.check_library:
        return check_library(args.check_library)
    print("interpreter: %s" % sys.executable)
    cmd = [args.host, "--adaptor", args.adaptor, "--out", args.out]
    cmd += ["--opencl"] if args.opencl else ["--emulator", args.emulator, "--workload", args.workload]
    cmd += ["--user-annotations"] if args.user_annotations else []
    if os.path.exists(args.out):
        os.remove(args.out)
    run = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write("".join(line + "\n" for line in run.stderr.splitlines() if not line.startswith("USDT:")))
    if run.returncode == 77 or (args.opencl and run.returncode != 0 and "platform" in run.stderr.lower()):
        print("skipped: no OpenCL platform here")
        return 77
    if run.returncode != 0:
        print("FAIL kineto_host exited with status %d" % run.returncode)
        return 1
    with open(args.out, encoding="utf-8") as f:
        trace = json.load(f)
    wl = check_parity.Workload(args.workload)
    c = check_parity.Checker()
    meta = trace.get("devtrace", {})
    if args.unavailable:
        c.check(meta.get("backend") == "none", "backend %r, not none" % meta.get("backend"))
        why = str(meta.get("unavailable", ""))
        for text in args.unavailable:
            c.check(text in why, "the reason %r does not say %r" % (why, text))
        xs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
        traced = [e for e in xs if e.get("cat") in DEVICE_CATS + RUNTIME_CATS]
        c.check(not traced, "%d device or runtime events from an unavailable backend" % len(traced))
        c.check(len(cpu_ops(trace)) == len(wl.op_names), "%d cpu_op events, the program ran %d ops"
                % (len(cpu_ops(trace)), len(wl.op_names)))
        return report(c, "kineto (unavailable backend)")
    profile = check_parity.profile_from_args(args.profile)
    if args.user_annotations and "user_correlation" in meta:
        print("skipped: %s (the trace's devtrace.user_correlation)" % meta["user_correlation"])
        return 77
    by_ext = check_common(c, trace, wl, profile.runtime_category, args.opencl or args.host_clock)
    check_streams(c, trace)
    if args.user_annotations:
        check_user_spans(c, trace)
        return report(c, "kineto (%s, user correlation)" % profile.backend)
    if args.opencl:
        check_opencl(c, remapped(trace, by_ext), wl, profile)
    else:
        parity = check_parity.check_trace(remapped(trace, by_ext), wl, profile=profile)
        c.failed += parity.failed
        c.passed += parity.passed
        check_parity.check_expect(c, meta, args.expect)
    return report(c, "kineto (%s)" % profile.backend)


if __name__ == "__main__":
    sys.exit(main())
