#!/usr/bin/env python3
"""test_record_cli.py DEVTRACE [EXAMPLE]: devtrace record's behaviour at its edges.

Bad input (unknown backend, unwritable output, missing program) gives one clear line, a
non-zero exit and no file under the final name; the program's exit status and crashes
pass through; SIGTERM to the recorder still writes a valid trace; -o expands %p and %r;
every subcommand has --help. With EXAMPLE (the OpenCL example), a crash mid-run leaves
either a complete valid trace or nothing under the final name.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import cli_cases
import trace_checks as tc

DEVTRACE = sys.argv[1]
EXAMPLE = sys.argv[2] if len(sys.argv) > 2 else None
failures = []
case = cli_cases.case_runner(failures)
run = cli_cases.command_runner(DEVTRACE)


tmp = tempfile.mkdtemp(prefix="devtrace-cli-")


def out(name):
    return os.path.join(tmp, name)


@case
def unknown_backend_is_a_clear_usage_error():
    r = run("record", "--backend", "nosuch", "-o", out("a.json"), "--", "true")
    assert r.returncode == 2, r.returncode
    assert "unknown backend 'nosuch'" in r.stderr and "devtrace list" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(out("a.json"))


@case
def output_in_missing_directory_is_refused_before_running():
    marker = out("ran")
    r = run("record", "-o", out("nodir/x.json"), "--", "touch", marker)
    assert r.returncode == 2, r.returncode
    assert "does not exist" in r.stderr and "-o" in r.stderr, r.stderr
    assert not os.path.exists(marker), "the program must not run when the trace cannot be written"


@case
def output_that_is_a_directory_is_refused():
    os.mkdir(out("isdir.json"))
    r = run("record", "-o", out("isdir.json"), "--", "true")
    assert r.returncode == 2 and "is a directory" in r.stderr, (r.returncode, r.stderr)


@case
def missing_program_exits_127_and_writes_nothing():
    r = run("record", "-o", out("m.json"), "--", "no-such-program-devtrace")
    assert r.returncode == 127, r.returncode
    assert "cannot run 'no-such-program-devtrace'" in r.stderr, r.stderr
    assert not os.path.exists(out("m.json")) and not os.path.exists(out("m.json.tmp"))


@case
def no_program_is_a_usage_error():
    r = run("record", "-o", out("n.json"))
    assert r.returncode == 2 and "no program given" in r.stderr, (r.returncode, r.stderr)


@case
def exit_status_passes_through():
    r = run("record", "-q", "-o", out("s.json"), "--", "sh", "-c", "exit 7")
    assert r.returncode == 7, r.returncode
    tc.load(out("s.json"))


@case
def crash_is_named_and_passes_through():
    r = run("record", "-q", "-o", out("c.json"), "--", "sh", "-c", "kill -SEGV $$")
    assert r.returncode == 128 + signal.SIGSEGV, r.returncode
    assert "SIGSEGV" in r.stderr, r.stderr
    trace = tc.load(out("c.json"))
    assert any("SIGSEGV" in n for n in trace["devtrace"]["notes"]), trace["devtrace"]["notes"]


@case
def untraced_program_gets_a_trace_that_says_why_it_is_empty():
    r = run("record", "-o", out("u.json"), "--", "true")
    assert r.returncode == 0, r.stderr
    trace = tc.load(out("u.json"))
    assert any("never started tracing" in n for n in trace["devtrace"]["notes"]), trace["devtrace"]["notes"]
    assert "never started tracing" in r.stderr and f"trace: {out('u.json')}" in r.stderr, r.stderr


@case
def output_pattern_expands_pid_and_rank():
    r = run("record", "-q", "-o", out("rank%r-%p.json"), "--", "true", env={"RANK": "3", "WORLD_SIZE": "8"})
    assert r.returncode == 0, r.stderr
    files = [f for f in os.listdir(tmp) if f.startswith("rank3-") and f.endswith(".json")]
    assert len(files) == 1 and files[0][6:-5].isdigit(), files
    trace = tc.load(os.path.join(tmp, files[0]))  # never traced, yet rank 3 of 8 as its name says
    assert trace["distributedInfo"] == {"rank": 3, "world_size": 8}, trace["distributedInfo"]


@case
def every_command_has_help():
    for args in (["--help"], ["help"], ["record", "--help"], ["capture", "--help"], ["list", "--help"],
                 ["replay", "--help"], ["convert", "--help"]):
        r = run(*args)
        assert r.returncode == 0 and "usage:" in r.stdout, (args, r.returncode, r.stdout)
    r = run("frobnicate")
    assert r.returncode == 2 and "unknown command" in r.stderr


# What has run on real hardware by this project (the only backends that may say "hardware"):
# every other backend says "headers+emulated" or "emulated" (README, "Honesty about hardware").
RUN_ON_HARDWARE = {"opencl"}
LEVELS = ("hardware", "headers+emulated", "emulated")


@case
def list_names_every_backend_with_its_validation():
    # The backends and their facts come from the descriptors (`devtrace list --json`, the public
    # devtrace_backend_info); $DT_COMPILED_BACKENDS (from CMake: DEVTRACE_BACKENDS) says which
    # are compiled in. The text lists the same backends, in the same order, with the same facts.
    compiled = set(b for b in os.environ["DT_COMPILED_BACKENDS"].split(",") if b)
    j = run("list", "--json")
    assert j.returncode == 0, j.stderr
    facts = json.loads(j.stdout)["backends"]
    want = [b["name"] for b in facts]
    assert want[-1] == "none" and set(want[:-1]) == compiled, (want, compiled)
    r = run("list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["BACKEND", "CAN", "WHAT"], lines[0]
    rows = [ln for ln in lines[1:] if ln and not ln.startswith(" ")]
    assert [ln.split()[0] for ln in rows] == want, (rows, want)
    for b, row in zip(facts, rows):
        assert row == "%-10s %-4s %s" % (b["name"], "yes" if b["can"] else "no", b["description"]), (row, b)
    validations = [ln.strip() for ln in lines if ln.startswith(" ") and ln.strip().startswith("validation:")]
    assert validations == ["validation: " + b["validation"] for b in facts], validations
    for b in facts:
        level = b["validation"].split(": ", 1)[0]
        if b["name"] == "none":
            assert b["validation"] == "n/a: records nothing", b
        else:
            assert level in LEVELS and (level == "hardware") == (b["name"] in RUN_ON_HARDWARE), b
    whys = [ln.strip()[len("why not: "):] for ln in lines if ln.strip().startswith("why not:")]
    assert whys == [b["why_not"] for b in facts if not b["can"]], whys  # one cause per backend that cannot


@case
def sigterm_to_the_recorder_still_writes_a_valid_trace():
    p = subprocess.Popen([DEVTRACE, "record", "-q", "-o", out("t.json"), "--", "sleep", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM, (p.returncode, err)
    tc.load(out("t.json"))


if EXAMPLE:
    @case
    def example_killed_mid_run_leaves_a_valid_trace():
        # SIGKILL after a short while: whatever was shipped is written; the file under the
        # final name is complete JSON.
        p = subprocess.Popen([DEVTRACE, "record", "-q", "-o", out("k.json"), "--", EXAMPLE, "--size", "512"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        for child in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
            os.kill(int(child), signal.SIGKILL)
        p.communicate(timeout=60)
        if os.path.exists(out("k.json")):
            tc.load(out("k.json"))
        assert not os.path.exists(out("k.json.tmp"))

if failures:
    print(f"{len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("all record CLI cases passed")
