#!/usr/bin/env python3
"""mcpti_record_replay.py: raw capture and replay through the command line, against an
emulator: `devtrace record --backend BACKEND --raw CAPTURE.dtraw -o TRACE.json -- emu-run
--lib EMULATOR WORKLOAD`, then `devtrace replay CAPTURE.dtraw -o REPLAY.json --trace-name
TRACE.json`, which must give the recorded trace byte for byte; then the parity assertions
(check_parity.py) and the devtrace section's counters (--expect) on the recorded trace,
and a replay to a .gz trace that decompresses to the same events.

    mcpti_record_replay.py --devtrace BIN --emu-run BIN --lib EMULATOR.so --workload WL --out TRACE.json
                           [--backend mcpti] [--vendor mcpti] [--runtime-category privateuse1_runtime]
                           [--expect PATH=VALUE ...] [--no-parity]
$DEVEMU_FAULTS passes through to the emulator. Exit 0 when everything holds.
"""
import argparse
import gzip
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


def run(cmd, env, failures, what):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    if proc.returncode != 0:
        failures.append("%s exited %d" % (what, proc.returncode))
    return proc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devtrace", required=True)
    ap.add_argument("--emu-run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="mcpti")
    ap.add_argument("--vendor", default="mcpti")
    ap.add_argument("--runtime-category", default="privateuse1_runtime")
    ap.add_argument("--expect", nargs="*", default=[])
    ap.add_argument("--no-parity", action="store_true", help="faults that lose records on purpose (drop=N)")
    args = ap.parse_args()

    env = dict(os.environ)
    env["DEVTRACE_%s_LIBRARY" % args.backend.upper()] = args.lib
    raw = args.out + ".dtraw"
    replay = args.out + ".replay.json"
    replay_gz = args.out + ".replay.json.gz"
    for p in (args.out, raw, replay, replay_gz):
        if os.path.exists(p):
            os.unlink(p)
    failures = []
    run([args.devtrace, "record", "--backend", args.backend, "--raw", raw, "-o", args.out, "--",
         args.emu_run, "--lib", args.lib, args.workload], env, failures, "devtrace record")
    if not os.path.exists(raw):
        failures.append("no raw capture at %s" % raw)
    run([args.devtrace, "replay", raw, "-o", replay, "--trace-name", args.out], env, failures, "devtrace replay")
    run([args.devtrace, "replay", "-q", raw, "-o", replay_gz], env, failures, "devtrace replay to .gz")
    try:
        with open(args.out, "rb") as f:
            recorded = f.read()
        with open(replay, "rb") as f:
            replayed = f.read()
        if recorded != replayed:
            failures.append("the replayed trace differs from the recorded one (%d vs %d bytes): diff %s %s"
                            % (len(recorded), len(replayed), args.out, replay))
        trace = json.loads(recorded)
        with gzip.open(replay_gz, "rt", encoding="utf-8") as f:
            zipped = json.load(f)
        if zipped.get("traceEvents") != trace.get("traceEvents") or zipped.get("traceName") != replay_gz:
            failures.append("the .gz replay has other events (or traceName %r)" % zipped.get("traceName"))
    except (OSError, ValueError) as e:
        failures.append("cannot read the traces: %s" % e)
        trace = None
    if trace is not None:
        meta = trace.get("devtrace", {})
        if meta.get("backend") != args.backend:
            failures.append("backend %r, expected %r" % (meta.get("backend"), args.backend))
        if not any(n.startswith("raw capture: ") for n in meta.get("notes", [])):
            failures.append("no note names the raw capture")
        for e in args.expect:
            path, want = e.split("=", 1)
            got = lookup(meta, path)
            if str(got) != want:
                failures.append("devtrace.%s = %s, expected %s" % (path, got, want))
        if not args.no_parity:
            c = check_parity.check_trace(trace, check_parity.Workload(args.workload), args.runtime_category,
                                         args.vendor)
            failures.extend("parity: " + f for f in c.failed)
            print("parity: %d assertion(s) hold" % c.passed)
    for f in failures:
        print("FAIL " + f)
    print("record/replay: %s" % ("ok" if not failures else "%d failure(s)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
