#!/usr/bin/env python3
"""record_emulated_backend.py: any emulated backend recorded through the command line. Runs
    devtrace record --backend BACKEND -o TRACE -- emu-run --lib EMULATOR WORKLOAD
with the emulator as the vendor library ($DEVTRACE_<BACKEND>_LIBRARY), then checks that the
program completed, the trace came out from the expected backend, the devtrace section's
values equal the expectations given, and (with --parity) every parity assertion of the
backend's profile (check_parity.py, PROFILES).

    record_emulated_backend.py --devtrace BIN --emu-run BIN --lib EMULATOR.so --workload WL --out TRACE.json
                               [--backend cupti] [--profile NAME (default: the backend)] [--parity]
                               [--library-env PATH] [--expect PATH=VALUE ...] [--expect-note TEXT ...]
                               [--expect-unavailable TEXT ...]
                               (legacy: --vendor NAME = --profile NAME; --runtime-category CAT overrides
                               the profile's)

--expect takes devtrace-section values by dotted path (counts.kernel=15 dropped.vendor=2
zero_timestamp=3); an explicit backend=NAME replaces the default check that the trace's
backend is --backend (e.g. backend=none for a missing library). --library-env points
$DEVTRACE_<BACKEND>_LIBRARY elsewhere than --lib (a missing file, say). For mspti, LD_PRELOAD
is removed from the environment: devtrace record must set it itself. $DEVEMU_FAULTS passes
through to the emulator. Exit 0 when everything holds.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # the source tree stays as checked out
import check_parity  # noqa: E402


def record(devtrace, emu_run, lib, workload, out, backend, library_env=None, env=None, timeout=240):
    """Runs devtrace record on emu-run; returns the CompletedProcess. The old trace is removed
    first, so a trace that is read afterwards is this run's."""
    env = dict(os.environ if env is None else env)
    env["DEVTRACE_%s_LIBRARY" % backend.upper()] = library_env or lib
    if backend == "mspti":
        env.pop("LD_PRELOAD", None)  # devtrace record must set it itself
    if os.path.exists(out):
        os.unlink(out)
    cmd = [devtrace, "record", "--backend", backend, "-o", out, "--", emu_run, "--lib", lib, workload]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def check_recorded(trace, backend, expect=(), expect_note=(), expect_unavailable=()):
    """The devtrace section against the expectations; returns a list of failures."""
    failures = []
    meta = trace.get("devtrace", {})
    if not any(item.partition("=")[0] == "backend" for item in expect) and meta.get("backend") != backend:
        failures.append("backend %s, expected %s (notes: %s; unavailable: %s)"
                        % (meta.get("backend"), backend, meta.get("notes"), meta.get("unavailable")))
    c = check_parity.check_expect(check_parity.Checker(), meta, expect)
    failures += c.failed
    notes = "\n".join(meta.get("notes", []))
    for text in expect_note:
        if text not in notes:
            failures.append("no note contains %r (notes: %s)" % (text, meta.get("notes")))
    for text in expect_unavailable:
        if text not in meta.get("unavailable", ""):
            failures.append("devtrace.unavailable lacks %r: %r" % (text, meta.get("unavailable")))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devtrace", required=True)
    ap.add_argument("--emu-run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cupti")
    ap.add_argument("--profile", "--vendor", dest="profile", help="check_parity profile (default: the backend)")
    ap.add_argument("--runtime-category", help="override the profile's runtime category")
    ap.add_argument("--library-env", help="$DEVTRACE_<BACKEND>_LIBRARY for devtrace (default: --lib)")
    ap.add_argument("--parity", action="store_true")
    ap.add_argument("--expect", nargs="*", default=[])
    ap.add_argument("--expect-note", nargs="*", default=[])
    ap.add_argument("--expect-unavailable", nargs="*", default=[])
    args = ap.parse_args()
    try:
        profile = check_parity.profile_from_args(args.profile or args.backend, args.runtime_category)
    except KeyError as e:
        print("record_emulated_backend: %s" % e, file=sys.stderr)
        return 2

    proc = record(args.devtrace, args.emu_run, args.lib, args.workload, args.out, args.backend, args.library_env)
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
    failures += check_recorded(trace, args.backend, args.expect, args.expect_note, args.expect_unavailable)
    if args.parity:
        wl = check_parity.Workload(args.workload)
        c = check_parity.check_trace(trace, wl, profile=profile)
        failures += ["parity: " + f for f in c.failed]
        print("parity (%s): %d assertion(s) hold, %d fail" % (profile.backend, c.passed, len(c.failed)))
    for f in failures:
        print("FAIL %s" % f)
    print("%s: %s" % (os.path.basename(args.out), "ok" if not failures else "%d failure(s)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
