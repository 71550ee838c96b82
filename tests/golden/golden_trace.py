#!/usr/bin/env python3
"""golden_trace.py: golden traces of the Chrome sink (ctest label `golden`).

    golden_trace.py check|update --devtrace BIN --emu-run BIN --lib EMULATOR.so --backend NAME
                    --workload WL --expect FILE.expect [--faults DEVEMU_FAULTS]

Records WL under `devtrace record --backend NAME` with the emulator as the vendor library,
normalises the Chrome trace and compares it with FILE.expect line for line (`check`, exit 1
on any difference, the first ones printed), or writes FILE.expect (`update`, or `check`
with DEVTRACE_GOLDEN_UPDATE=1 in the environment: what scripts/update-golden runs).

Normalising keeps everything a run determines and removes what the clock or the machine
decides: every event's "ts" and "dur", a kernel's "queued" time and a copy's bandwidth
(device times go through the clock map, so they differ by nanoseconds from run to run);
the traced process's id, written
"<pid>" (and its thread's "<tid>") wherever it appears, in ids and in lane names; the
capture window, baseTimeNanoseconds and traceName; the emulator's path in notes
("<library>"). Events stay in the trace's order within each lane and category (there the
order is the program's: a thread's calls, a stream's kernels, an op's nesting), and these
groups are listed in the order of their first event, so that the interleaving of lanes
and of a thread's operators with its calls, which timing decides, does not show. The workloads chosen have
no event near the window's edges. One event a line: a diff names the event.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # the source tree stays as checked out
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import record_emulated_backend  # noqa: E402

HOST_CATS = {"cuda_runtime", "privateuse1_runtime", "cpu_op", "ac2g", "user_annotation"}


def host_ids(events):
    """The traced process's pid and its threads' tids: the lanes of host-side events."""
    pids, tids = set(), set()
    for e in events:
        if e.get("cat") in HOST_CATS and e.get("cat") != "ac2g":
            pids.add(e["pid"])
            tids.add(e["tid"])
    return pids, tids


def normalise(trace, library):
    events = trace.get("traceEvents", [])
    pids, tids = host_ids(events)
    tid_names = {t: "<tid>" if len(tids) == 1 else "<tid %d>" % i for i, t in enumerate(sorted(tids))}

    def text(value):
        if isinstance(value, str):
            for p in pids:
                value = value.replace(str(p), "<pid>")
        return value

    lanes, order = {}, []
    for e in events:
        e = dict(e)
        e.pop("ts", None)
        e.pop("dur", None)
        if "args" in e:
            e["args"] = {k: v for k, v in e["args"].items() if k not in ("queued", "memory bandwidth (GB/s)")}
        if e.get("pid") in pids:
            e["pid"] = "<pid>"
            if e.get("tid") in tid_names:
                e["tid"] = tid_names[e["tid"]]
        if "args" in e and isinstance(e["args"].get("name"), str):
            e["args"] = dict(e["args"], name=text(e["args"]["name"]))
        key = (str(e.get("pid")), str(e.get("tid")), str(e.get("cat", e.get("ph"))))
        if key not in lanes:
            lanes[key] = []
            order.append(key)
        lanes[key].append(e)
    meta = dict(trace.get("devtrace", {}))
    if "window" in meta:
        meta["window"] = ["<start>", "<stop>"]
    meta["notes"] = [n.replace(library, "<library>") for n in meta.get("notes", [])]
    top = {k: v for k, v in trace.items() if k not in ("traceEvents", "baseTimeNanoseconds", "traceName", "devtrace")}
    lines = ["# top-level: " + json.dumps(top, sort_keys=True), "# devtrace: " + json.dumps(meta, sort_keys=True)]
    for key in order:
        lines.append("# lane pid=%s tid=%s cat=%s" % key)
        lines += [json.dumps(e, sort_keys=True) for e in lanes[key]]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["check", "update"])
    for opt in ("--devtrace", "--emu-run", "--lib", "--backend", "--workload", "--expect"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--faults", default="")
    ap.add_argument("--out", help="the raw trace (default: beside FILE.expect's build copy)")
    args = ap.parse_args()
    out = args.out or os.path.join(os.getcwd(), os.path.basename(args.expect) + ".json")
    env = dict(os.environ)
    env["DEVEMU_FAULTS"] = args.faults
    proc = record_emulated_backend.record(args.devtrace, args.emu_run, args.lib, args.workload, out, args.backend, env=env)
    if proc.returncode != 0:
        print("golden: devtrace record exited %d: %s" % (proc.returncode, proc.stderr.strip()[-800:]))
        return 1
    with open(out, encoding="utf-8") as f:
        got = normalise(json.load(f), args.lib)
    if args.mode == "update" or os.environ.get("DEVTRACE_GOLDEN_UPDATE") == "1":
        with open(args.expect, "w", encoding="utf-8") as f:
            f.write(got)
        print("golden: wrote %s (%d lines)" % (args.expect, got.count("\n")))
        return 0
    with open(args.expect, encoding="utf-8") as f:
        want = f.read()
    if got == want:
        print("golden: %s matches (%d lines)" % (os.path.basename(args.expect), want.count("\n")))
        return 0
    g, w = got.splitlines(), want.splitlines()
    shown = 0
    for i in range(max(len(g), len(w))):
        a = w[i] if i < len(w) else "<end>"
        b = g[i] if i < len(g) else "<end>"
        if a != b:
            print("line %d:\n  expected %s\n  got      %s" % (i + 1, a[:400], b[:400]))
            shown += 1
            if shown == 5:
                break
    print("golden: %s differs (%d lines expected, %d got); the raw trace is %s; if the change is meant, "
          "run scripts/update-golden" % (args.expect, len(w), len(g), out))
    return 1


if __name__ == "__main__":
    sys.exit(main())
