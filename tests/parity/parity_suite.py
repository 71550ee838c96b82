#!/usr/bin/env python3
"""parity_suite.py: the cross-backend parity suite (ctest label `parity`).

    parity_suite.py backend NAME --devtrace BIN --emu-run BIN --lib EMULATOR.so --workload WL --out-dir DIR
    parity_suite.py opencl --devtrace BIN --example BIN --workload WL --out-dir DIR --api-calls N
    parity_suite.py compare --backends A,B,... --devtrace BIN --workload WL --out-dir DIR

`backend NAME` (every backend an emulator stands in for) runs the workload under
`devtrace record --backend NAME` with the emulator as the vendor library
($DEVTRACE_<NAME>_LIBRARY; mcpti with DEVEMU_FAULTS=maca-3.8, every MACA 3.8.0 quirk on),
asserts every DESIGN.md parity assertion with the backend's profile (check_parity.py's
profile_from_facts: the descriptor's public facts and the emulated vendor's names), the
exact values of the trace's devtrace section, and that the trace's normalised structure is
the workload's; then writes DIR/NAME.structure.json.

`opencl` traces the OpenCL example on the machine's OpenCL platform (PoCL in CI): its own
exact counts (17 kernels, 1 memcpy, 1 memset, N runtime calls: the example's own count,
which must be --api-calls), the example's checks (tests/cli/check_example_parity.py), the
opencl profile's facts, and its op structure: the same op ids and names as the workload,
the same device-event kinds (and bytes) per op, flows from the same generic calls.

`compare` reads every structure and asserts they are the same across backends: kinds and
counts, flows, per-op attribution (op id -> device ns and device events), kernel names
after demangling, runtime names mapping to the same sequence of generic calls per op,
launch configurations where the backend has them; the OpenCL example on the fields it shares.

Each run writes DIR/NAME.status ({"status": "passed" | "skipped" | "failed", "why": ...})
first thing, so that `compare` never reads a structure left over from an earlier run.
A backend that is not compiled into this devtrace (or whose emulator is not built, or, for
OpenCL, without a platform) is skipped with exit 77 and says so; `compare` then checks the
others and exits 77 (incomplete), never 0. Exit 1 on any failure, 2 on bad usage.
Standard library only.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # the source tree stays as checked out
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import check_parity  # noqa: E402
import record_emulated_backend  # noqa: E402

SKIP = 77
# The emulated backends are the ones CMake pairs with an emulator (tests/emu: STANDS_IN_FOR),
# given to `compare` as --backends in the registry's order; each backend's facts come from
# `devtrace list --json` and its emulator's `emu-run --describe` (check_parity.profile_from_facts).
# The suite's own choice: the DEVEMU_FAULTS a backend runs under (MCPTI with every MACA 3.8.0 quirk on).
FAULTS = {"mcpti": "maca-3.8"}
LOSS_ZERO = {"dropped.store_full": 0, "dropped.pool_full": 0, "dropped.vendor": 0, "malformed.records": 0,
             "malformed.bytes": 0, "zero_timestamp": 0, "refused_buffers": 0, "unpaired_flows": 0,
             "unresolved_names": 0, "bad_timestamps": 0, "out_of_window.kernel": 0, "out_of_window.memcpy": 0,
             "out_of_window.memset": 0, "out_of_window.runtime": 0, "out_of_window.cpu_op": 0}
# What each fault set must leave in the devtrace section (DEVEMU_FAULTS in tests/emu/README.md):
# maca-3.8 = stale-iterator, malformed=4 (200-byte kernel records: 800 bytes), zero-time=3,
# a device clock; every one counted, nothing else lost.
LOSSES = {"maca-3.8": {"malformed.records": 4, "malformed.bytes": 800, "zero_timestamp": 3}}
DEVICE_CATS = check_parity.DEVICE_CATS
OUTSIDE = "-"  # the op key of events outside every op


class Failures(list):
    def check(self, ok, what):
        if not ok:
            self.append(what)
        return ok


def write_status(out_dir, name, status, why=""):
    with open(os.path.join(out_dir, name + ".status"), "w", encoding="utf-8") as f:
        json.dump({"status": status, "why": why}, f)


def start(out_dir, name):
    """Forgets the previous run's results for this backend; marks this one as failed until it passes."""
    os.makedirs(out_dir, exist_ok=True)
    for suffix in (".structure.json", ".json"):
        path = os.path.join(out_dir, name + suffix)
        if os.path.exists(path):
            os.unlink(path)
    write_status(out_dir, name, "failed", "did not finish")


def skip(out_dir, name, why):
    write_status(out_dir, name, "skipped", why)
    print("SKIPPED: %s: %s" % (name, why))
    return SKIP


def compiled_backends(devtrace):
    """The backends `devtrace list` shows (compiled in), in its order."""
    proc = subprocess.run([devtrace, "list"], capture_output=True, text=True, timeout=60)
    names = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\S+)\s+(yes|no)\s", line)
        if m:
            names.append(m.group(1))
    return names


def not_compiled_reason(name):
    src = os.path.join(HERE, "..", "..", "src", "backends", name + ".c")
    if not os.path.exists(src):
        return "the %s backend is not compiled into this devtrace: src/backends/%s.c does not exist yet" % (name, name)
    return ("the %s backend is not compiled into this devtrace (`devtrace list` does not show it): "
            "DEVTRACE_BACKENDS excludes it" % name)


# ---- the normalised structure ----

def ts_key(e):
    return (float(e.get("ts", 0)), e.get("args", {}).get("correlation", 0))


def op_key(e):
    args = e.get("args", {})
    return str(args["External id"]) if "External id" in args else OUTSIDE


def ns(us):
    return int(round(float(us) * 1000.0))


def normalise(trace, profile):
    """What must be the same on every backend, with the vendor taken out: kinds and counts,
    flows, ops, per-op device events and time, per-op generic calls, kernel names, launches."""
    xs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    runtime = sorted((e for e in xs if e.get("cat") == profile.runtime_category), key=ts_key)
    device = sorted((e for e in xs if e.get("cat") in DEVICE_CATS), key=ts_key)
    ops = [e for e in xs if e.get("cat") == "cpu_op"]
    generic = profile.generic_of()
    by_corr = {e.get("args", {}).get("correlation"): e for e in runtime}
    s_ids = {e.get("id") for e in trace.get("traceEvents", []) if e.get("ph") == "s"}
    f_ids = {e.get("id") for e in trace.get("traceEvents", []) if e.get("ph") == "f"}

    op_device = collections.defaultdict(list)
    op_ns = collections.Counter()
    flow_calls = collections.defaultdict(collections.Counter)
    for e in device:
        args = e.get("args", {})
        op_device[op_key(e)].append([e.get("cat"), e.get("name"), args.get("bytes")])
        op_ns[op_key(e)] += ns(e.get("dur", 0))
        partner = by_corr.get(args.get("correlation"))
        flow_calls[e.get("cat")][generic.get(partner.get("name"), "?" + partner.get("name", ""))
                                 if partner else "(no runtime call)"] += 1
    op_calls = collections.defaultdict(list)
    for e in runtime:
        op_calls[op_key(e)].append(generic.get(e.get("name", ""), "?" + e.get("name", "")))
    launch = None
    if profile.has_launch:
        launch = [[e.get("name"), e.get("args", {}).get("grid"), e.get("args", {}).get("block")]
                  for e in device if e.get("cat") == "kernel"]
    return {
        "backend": trace.get("devtrace", {}).get("backend"),
        "counts": {"kernel": sum(e.get("cat") == "kernel" for e in device),
                   "memcpy": sum(e.get("cat") == "gpu_memcpy" for e in device),
                   "memset": sum(e.get("cat") == "gpu_memset" for e in device),
                   "runtime": len(runtime), "cpu_op": len(ops)},
        "flows": len(s_ids & f_ids),
        "ops": {op_key(e): e.get("name") for e in ops},
        "op_device_kinds": {k: sorted(d[0] for d in v) for k, v in op_device.items()},
        "op_device": dict(op_device),
        "op_device_ns": dict(op_ns),
        "op_calls": dict(op_calls),
        "kernel_names": sorted(e.get("name") for e in device if e.get("cat") == "kernel"),
        "flow_calls": {cat: dict(v) for cat, v in flow_calls.items()},
        "launch": launch,
        "streams": sorted({e.get("tid") for e in device}),
        "devices": sorted({e.get("pid") for e in device}),
    }


def expected_structure(wl):
    """The structure the workload implies (kernel names: c++filt's demangling, None without it)."""
    demangled = check_parity.demangle_reference(sorted(set(wl.kernel_names))) or {}

    def key(op):
        return OUTSIDE if op is None else str(op)
    op_device = {key(op): [[cat, demangled.get(n) if cat == "kernel" else n, b] for cat, n, b in v]
                 for op, v in wl.op_device.items()}
    op_calls = collections.defaultdict(list)
    for generic, op in wl.calls:
        op_calls[key(op)].append(generic)
    op_ns = {key(op): n for op, n in wl.op_ns.items() if wl.op_events.get(op)}
    if wl.unattributed_ns:
        op_ns[OUTSIDE] = wl.unattributed_ns
    ndev = wl.kernels + wl.memcpys + wl.memsets
    return {
        "counts": {"kernel": wl.kernels, "memcpy": wl.memcpys, "memset": wl.memsets, "runtime": wl.runtime,
                   "cpu_op": len(wl.op_names)},
        "flows": ndev,
        "ops": {str(k): v for k, v in wl.op_names.items()},
        "op_device_kinds": {k: sorted(d[0] for d in v) for k, v in op_device.items()},
        "op_device": op_device if demangled else None,
        "op_device_ns": op_ns,
        "op_calls": dict(op_calls),
        "kernel_names": sorted(demangled[k] for k in wl.kernel_names) if demangled else None,
        "flow_calls": {cat: {g: n} for cat, g, n in (("kernel", "launch", wl.kernels),
                                                     ("gpu_memcpy", "memcpy", wl.memcpys),
                                                     ("gpu_memset", "memset", wl.memsets)) if n},
        "launch": [[demangled.get(k), g, b] for k, g, b in wl.launches] if demangled else None,
    }


def ns_close(a, b):
    return abs(a - b) <= max(1000, max(a, b) // 100)  # DESIGN.md: max(1 us, 1%)


def diff_structures(got, want, fields, what):
    """Differences of got from want on the fields given, as readable lines."""
    out = []
    for field in fields:
        g, w = got.get(field), want.get(field)
        if w is None:
            continue  # not known for the reference (no c++filt, no launch configuration)
        if field == "op_device_ns":
            keys = sorted(set(g or {}) | set(w))
            bad = ["op %s: %s vs %s ns" % (k, (g or {}).get(k), w.get(k)) for k in keys
                   if not ns_close((g or {}).get(k, 0), w.get(k, 0))]
            if bad:
                out.append("%s: device time per op differs beyond max(1 us, 1%%): %s" % (what, "; ".join(bad)))
            continue
        if field == "launch" and g is None:
            continue  # this backend has no launch configuration (its profile says so)
        if g != w:
            if isinstance(w, dict) and isinstance(g, dict):
                keys = sorted(set(g) | set(w), key=str)
                detail = "; ".join("%s: %s vs %s" % (k, g.get(k), w.get(k)) for k in keys if g.get(k) != w.get(k))
            else:
                detail = "%s vs %s" % (g, w)
            out.append("%s: %s differs: %s" % (what, field, detail[:1500]))
    return out


EMULATED_FIELDS = ["counts", "flows", "ops", "op_device_kinds", "op_device", "op_device_ns", "op_calls",
                   "kernel_names", "flow_calls", "launch", "streams", "devices"]
WORKLOAD_FIELDS = ["counts", "flows", "ops", "op_device_kinds", "op_device", "op_device_ns", "op_calls",
                   "kernel_names", "flow_calls", "launch"]


def opencl_shared(structure):
    """The fields the OpenCL example shares with the workload: device-event kinds and bytes
    per op, the ops, flows and which generic call each device event came from."""
    return {
        "counts": {k: v for k, v in structure["counts"].items() if k in ("kernel", "memcpy", "memset", "cpu_op")},
        "flows": structure["flows"],
        "ops": structure["ops"],
        "op_device_kinds": structure["op_device_kinds"],
        "op_device_bytes": {k: [[d[0], d[2]] for d in v] for k, v in (structure.get("op_device") or {}).items()},
        "flow_calls": structure["flow_calls"],
    }


# ---- the subcommands ----

def cmd_backend(args):
    name = args.name
    start(args.out_dir, name)
    facts = check_parity.backend_facts(args.devtrace)
    if name not in facts:
        return skip(args.out_dir, name, not_compiled_reason(name))
    faults = FAULTS.get(name, "")
    if not args.lib or not os.path.exists(args.lib):
        return skip(args.out_dir, name, "the %s emulator is not built here" % name)
    emulator = check_parity.emulator_facts(args.emu_run, args.lib)
    emu = emulator["vendor"]
    profile = check_parity.profile_from_facts(facts[name], emulator)
    wl = check_parity.Workload(args.workload)
    fails = Failures()
    # A backend that also has a written profile (check_parity.PROFILES, for the tests of one
    # backend) must have the same facts there as its descriptor and emulator give.
    legacy = check_parity.PROFILES.get(name)
    if legacy:
        for field in ("runtime_category", "names", "absent_kernel_keys", "absent_runtime_keys", "extra_runtime_keys",
                      "require_cbid", "require_occupancy", "validation"):
            want, got = getattr(profile, field), getattr(legacy, field)
            if field == "names":  # the written profile may leave out calls its tests never make (collective)
                want = {generic: want.get(generic) for generic in got}
            fails.check(want == got, "check_parity.PROFILES[%r].%s is %r; the descriptor and emulator say %r"
                        % (name, field, got, want))
    trace_path = os.path.join(args.out_dir, name + ".json")
    env = dict(os.environ)
    env["DEVEMU_FAULTS"] = faults
    print("%s: devtrace record --backend %s on lib%s-emu.so%s" % (name, name, emu,
                                                                  ", DEVEMU_FAULTS=" + faults if faults else ""))
    proc = record_emulated_backend.record(args.devtrace, args.emu_run, args.lib, args.workload, trace_path, name, env=env)
    fails.check(proc.returncode == 0, "devtrace record exited %d: %s" % (proc.returncode, proc.stderr.strip()[-800:]))
    try:
        with open(trace_path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print(proc.stderr)
        print("FAIL %s: no trace: %s" % (name, e))
        write_status(args.out_dir, name, "failed", "no trace")
        return 1
    # The devtrace section: exact counts and every loss counter (those the faults cause, exactly).
    expect = {"backend": name, "counts.kernel": wl.kernels, "counts.memcpy": wl.memcpys, "counts.memset": wl.memsets,
              "counts.runtime": wl.runtime, "counts.cpu_op": len(wl.op_names)}
    expect.update(LOSS_ZERO)
    expect.update(LOSSES.get(faults, {}))
    fails += record_emulated_backend.check_recorded(trace, name, ["%s=%s" % kv for kv in expect.items()])
    # DESIGN.md's parity assertions with the backend's profile.
    c = check_parity.check_trace(trace, wl, profile=profile)
    fails += ["parity: " + f for f in c.failed]
    # The normalised structure is the workload's.
    structure = normalise(trace, profile)
    fails += diff_structures(structure, expected_structure(wl), WORKLOAD_FIELDS, "%s vs the workload" % name)
    for f in fails:
        print("FAIL %s" % f)
    if fails:
        write_status(args.out_dir, name, "failed", "%d failure(s)" % len(fails))
        return 1
    with open(os.path.join(args.out_dir, name + ".structure.json"), "w", encoding="utf-8") as f:
        json.dump(structure, f, indent=1, sort_keys=True)
    write_status(args.out_dir, name, "passed")
    print("%s: %d parity assertions hold (profile: %s); devtrace section exact (%s); structure = the workload's"
          % (name, c.passed, profile.why, ", ".join("%s=%s" % kv for kv in sorted(expect.items())
                                                     if kv[1] not in (0,) or kv[0].startswith("counts"))))
    return 0


def cmd_opencl(args):
    name = "opencl"
    start(args.out_dir, name)
    if name not in compiled_backends(args.devtrace):
        return skip(args.out_dir, name, not_compiled_reason(name))
    if not args.example or not os.path.exists(args.example):
        return skip(args.out_dir, name, "the OpenCL example (examples/opencl_parity.c) is not built here "
                                        "(DEVTRACE_BUILD_EXAMPLES=OFF, or no OpenCL headers and loader)")
    probe = subprocess.run([args.example, "--quiet", "--size", "16"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        if "no OpenCL platform" in probe.stderr:
            return skip(args.out_dir, name, "no OpenCL platform on this machine (%s)" % probe.stderr.strip())
        print("FAIL the OpenCL example fails untraced: %s" % probe.stderr.strip())
        write_status(args.out_dir, name, "failed", "example fails untraced")
        return 1
    fails = Failures()
    count = subprocess.run([args.example, "--print-api-count", "--quiet"], capture_output=True, text=True, timeout=120)
    m = re.search(r"^api_calls=(\d+)$", count.stdout, re.M)
    api_calls = int(m.group(1)) if m else -1
    fails.check(api_calls == args.api_calls, "the example reports %d runtime calls of its own, the suite expects %d"
                % (api_calls, args.api_calls))
    trace_path = os.path.join(args.out_dir, "opencl.json")
    proc = subprocess.run([args.devtrace, "record", "--backend", "opencl", "-q", "-o", trace_path, "--",
                           args.example, "--quiet"], capture_output=True, text=True, timeout=300)
    fails.check(proc.returncode == 0, "devtrace record exited %d: %s" % (proc.returncode, proc.stderr.strip()[-800:]))
    try:
        with open(trace_path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL opencl: no trace: %s" % e)
        write_status(args.out_dir, name, "failed", "no trace")
        return 1
    # The example's own exact checks (counts 17/1/1/N, no loss, flows, window, ops, names, bytes).
    ex = subprocess.run([sys.executable, os.path.join(HERE, "..", "cli", "check_example_parity.py"), trace_path,
                         str(args.api_calls), "--backend", "opencl", "--validation", "hardware"],
                        capture_output=True, text=True, timeout=120)
    sys.stdout.write(ex.stdout)
    fails.check(ex.returncode == 0, "check_example_parity.py: %s" % (ex.stderr.strip()[-1500:] or ex.stdout.strip()))
    profile = check_parity.PROFILES["opencl"]
    c = check_parity.check_profile_facts(check_parity.Checker(), trace, profile)
    fails += ["opencl profile: " + f for f in c.failed]
    fails += record_emulated_backend.check_recorded(trace, name, ["%s=%s" % kv for kv in sorted(LOSS_ZERO.items())] +
                                         ["counts.kernel=17", "counts.memcpy=1", "counts.memset=1",
                                          "counts.runtime=%d" % args.api_calls])
    rnames = {e.get("name") for e in trace.get("traceEvents", [])
              if e.get("ph") == "X" and e.get("cat") == profile.runtime_category}
    fallbacks = sorted(n for n in rnames if check_parity.FALLBACK_NAME.search(n or "") or not (n or "").startswith("cl"))
    fails.check(not fallbacks, "runtime names that are not OpenCL's own: %s" % fallbacks)
    # Its op structure is the workload's: the same op ids and names, device-event kinds and
    # bytes per op, and each device event flows from the generic call that makes it.
    wl = check_parity.Workload(args.workload)
    structure = normalise(trace, profile)
    want = expected_structure(wl)
    want["op_device"] = {OUTSIDE if op is None else str(op): [list(d) for d in v] for op, v in wl.op_device.items()}
    fails += diff_structures(opencl_shared(structure), opencl_shared(want),
                             ["counts", "flows", "ops", "op_device_kinds", "op_device_bytes", "flow_calls"],
                             "opencl vs the workload's op structure")
    for f in fails:
        print("FAIL %s" % f)
    if fails:
        write_status(args.out_dir, name, "failed", "%d failure(s)" % len(fails))
        return 1
    with open(os.path.join(args.out_dir, name + ".structure.json"), "w", encoding="utf-8") as f:
        json.dump(structure, f, indent=1, sort_keys=True)
    write_status(args.out_dir, name, "passed")
    print("opencl: kernel=17 memcpy=1 memset=1 runtime=%d exact; %d ops with the workload's ids, names and device "
          "kinds per op; profile facts hold" % (args.api_calls, len(structure["ops"])))
    return 0


def cmd_compare(args):
    compiled = compiled_backends(args.devtrace)
    structures, skipped, failed = collections.OrderedDict(), [], []
    for name in [b for b in args.backends.split(",") if b] + ["opencl"]:
        path = os.path.join(args.out_dir, name + ".status")
        try:
            with open(path, encoding="utf-8") as f:
                status = json.load(f)
        except (OSError, ValueError):
            status = ({"status": "skipped", "why": not_compiled_reason(name)} if name not in compiled else
                      {"status": "failed", "why": "its test did not run (no %s)" % path})
        if status["status"] == "passed":
            with open(os.path.join(args.out_dir, name + ".structure.json"), encoding="utf-8") as f:
                structures[name] = json.load(f)
        elif status["status"] == "skipped":
            skipped.append("%s (%s)" % (name, status["why"]))
        else:
            failed.append((name, status["why"]))
    fails = Failures("parity.%s failed (%s): its structure cannot be compared" % f for f in failed)
    emulated = [n for n in structures if n != "opencl"]
    ref = emulated[0] if emulated else None
    for name in emulated[1:]:
        fails += diff_structures(structures[name], structures[ref], EMULATED_FIELDS, "%s vs %s" % (name, ref))
    if "opencl" in structures and ref:
        fails += diff_structures(opencl_shared(structures["opencl"]), opencl_shared(structures[ref]),
                                 ["counts", "flows", "ops", "op_device_kinds", "op_device_bytes", "flow_calls"],
                                 "opencl vs %s" % ref)
    for f in fails:
        print("FAIL %s" % f)
    if ref:
        s = structures[ref]
        print("compared: %s (reference %s: kernel=%d memcpy=%d memset=%d runtime=%d cpu_op=%d, %d flows, %d ops; "
              "opencl on ops, device kinds and bytes per op, flows)"
              % (", ".join(structures), ref, s["counts"]["kernel"], s["counts"]["memcpy"], s["counts"]["memset"],
                 s["counts"]["runtime"], s["counts"]["cpu_op"], s["flows"], len(s["ops"])))
    if fails:
        print("cross-backend parity: %d difference(s) or failure(s)" % len(fails))
        return 1
    if len(structures) < 2:
        print("SKIPPED: fewer than two backends to compare (%s); skipped: %s"
              % (", ".join(structures) or "none", "; ".join(skipped) or "none"))
        return SKIP
    if skipped:
        print("INCOMPLETE (exit 77, not a pass): the same structure on %s; not compared: %s"
              % (", ".join(structures), "; ".join(skipped)))
        return SKIP
    print("cross-backend parity: the same normalised structure on every backend: %s" % ", ".join(structures))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("backend")
    b.add_argument("name")
    b.add_argument("--emu-run", required=True)
    b.add_argument("--lib", default="", help="the emulator library ('' when it is not built)")
    o = sub.add_parser("opencl")
    o.add_argument("--example", default="", help="the opencl-parity example ('' when it is not built)")
    o.add_argument("--api-calls", type=int, required=True)
    cmp = sub.add_parser("compare")
    cmp.add_argument("--backends", required=True, help="the emulated backends, ','-separated, in the order compared")
    for p in (b, o, sub.choices["compare"]):
        p.add_argument("--devtrace", required=True)
        p.add_argument("--workload", required=True)
        p.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    return {"backend": cmd_backend, "opencl": cmd_opencl, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
