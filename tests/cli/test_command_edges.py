#!/usr/bin/env python3
"""test_command_edges.py DEVTRACE [EXAMPLE]: the devtrace command's small edges, each asserted
exactly.

help and version spellings; record's option values ('--' is never a value, -o's suffix test
is case-insensitive); what record checks before the program runs (the trace file can be
created, RANK < WORLD_SIZE, --raw on a backend that can save raw captures, a forced backend
that cannot trace here); replay's refusal of another vendor's capture, and of a phantom
record read from inside a cut-short MCPTI record. EXAMPLE (the OpenCL example) is traced
where a case needs a backend that really starts (PoCL); without it those cases say SKIP.
"""
import gzip
import json
import os
import struct
import sys
import tempfile

import cli_cases

DEVTRACE = sys.argv[1]
EXAMPLE = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None  # the OpenCL example, when built
failures = []
case = cli_cases.case_runner(failures)
# The settings record reads from the environment are the cases' own.
run = cli_cases.command_runner(DEVTRACE, unset=("DEVTRACE_BACKEND", "RANK", "WORLD_SIZE"))
Skipped = cli_cases.Skipped
tmp = tempfile.mkdtemp(prefix="devtrace-edges-")


def out(name):
    return os.path.join(tmp, name)


def one_line(text):
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


@case
def help_record_prints_records_help():
    direct = run("record", "--help")
    via_help = run("help", "record")
    assert direct.returncode == 0 and via_help.returncode == 0, (direct.returncode, via_help.returncode)
    assert via_help.stdout == direct.stdout and via_help.stdout.startswith("usage: devtrace record"), via_help.stdout
    for command in ("capture", "list", "replay"):
        assert run("help", command).stdout == run(command, "--help").stdout, command
    r = run("help", "frobnicate")
    assert r.returncode == 2, r.returncode
    assert one_line(r.stderr) == "devtrace: no help for 'frobnicate': the commands are record, capture, list, replay, report, diff, convert", r.stderr


@case
def version_has_three_spellings():
    texts = set()
    for spelling in ("--version", "-V", "version"):
        r = run(spelling)
        assert r.returncode == 0, (spelling, r.returncode, r.stderr)
        texts.add(r.stdout)
    assert len(texts) == 1, texts
    text = texts.pop()
    assert text.startswith("devtrace ") and text.count("\n") == 1, text


@case
def record_help_states_the_defaults():
    text = run("record", "--help").stdout
    for default in ("DEVTRACE_MAX_EVENTS (bound on stored events; default 16777216",
                    "DEVTRACE_GZIP_LEVEL (0 to 9; default 1)",
                    "(default devtrace-PID.json, PID: PROGRAM's)", "(default 5)"):
        assert default in text, (default, text)


@case
def rank_at_or_above_world_size_is_refused_before_running():
    marker = out("ran-rank")
    r = run("record", "-o", out("r.json"), "--", "touch", marker, env={"RANK": "8", "WORLD_SIZE": "8"})
    assert r.returncode == 2, r.returncode
    assert one_line(r.stderr) == ("devtrace record: $RANK=8 is not below $WORLD_SIZE=8 (ranks are 0 to "
                                  "WORLD_SIZE - 1); fix one of them or unset both"), r.stderr
    assert not os.path.exists(marker)
    r = run("record", "-q", "-o", out("r7.json"), "--", "touch", marker, env={"RANK": "7", "WORLD_SIZE": "8"})
    assert r.returncode == 0 and r.stderr == "" and os.path.exists(marker), (r.returncode, r.stderr)


@case
def output_that_cannot_be_created_is_refused_before_running():
    marker = out("ran-proc")
    r = run("record", "-o", "/proc/devtrace-x.json", "--", "touch", marker)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert one_line(r.stderr).startswith("devtrace record: cannot write the trace to /proc/devtrace-x.json: creating "
                                         "/proc/devtrace-x.json.tmp failed ("), r.stderr
    assert r.stderr.rstrip().endswith("); choose another -o"), r.stderr
    assert not os.path.exists(marker), "the program must not run when its trace cannot be written"
    r = run("record", "-o", out("t.json"), "--raw", "/proc/devtrace-x.dtraw", "--", "touch", marker)
    assert r.returncode == 2 and "creating /proc/devtrace-x.dtraw.tmp failed" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(marker)
    # The probe leaves nothing behind, and a .tmp already there is left as it was.
    with open(out("keep.json.tmp"), "w") as f:
        f.write("mine")
    r = run("record", "-q", "-o", out("keep.json"), "--", "true")
    assert r.returncode == 0, r.stderr
    assert sorted(f for f in os.listdir(tmp) if f.startswith("keep")) == ["keep.json"], os.listdir(tmp)


@case
def output_option_without_its_value_is_an_error():
    marker = out("ran-dash")
    for option in ("-o", "--output", "--raw", "-b", "--top"):
        r = run("record", option, "--", "touch", marker)
        assert r.returncode == 2, (option, r.returncode)
        assert one_line(r.stderr) == (f"devtrace record: {option} needs a value before '--'; "
                                      "run 'devtrace record --help'"), r.stderr
        r = run("record", option)
        assert one_line(r.stderr) == f"devtrace record: {option} needs a value; run 'devtrace record --help'", r.stderr
    assert not os.path.exists(marker) and not os.path.exists("--"), os.listdir(".")


@case
def output_suffix_gz_compresses_in_any_case():
    for name in ("x.JSON.GZ", "y.json.Gz", "z.json.gz"):
        r = run("record", "-q", "-o", out(name), "--", "true")
        assert r.returncode == 0, r.stderr
        with open(out(name), "rb") as f:
            assert f.read(2) == b"\x1f\x8b", name
        with gzip.open(out(name), "rt") as f:
            assert json.load(f)["schemaVersion"] == 1, name
    r = run("record", "-q", "-o", out("plain.json"), "--", "true")
    with open(out("plain.json"), "rb") as f:
        assert f.read(1) == b"{"


def raw_facts():
    """Which backends can save raw captures, by their descriptors' capabilities (`devtrace
    list --json`): (the names of those that can, ', '-joined; the names of those that cannot)."""
    facts = json.loads(run("list", "--json").stdout)["backends"]
    return (", ".join(b["name"] for b in facts if b["capabilities"]["raw_capture"]),
            [b["name"] for b in facts if not b["capabilities"]["raw_capture"]])


@case
def raw_with_a_backend_that_cannot_save_it_is_refused_before_running():
    marker = out("ran-raw")
    raw_can, backends = raw_facts()
    assert raw_can and backends[-1] == "none" and len(backends) > 1, (raw_can, backends)
    for backend in backends:
        r = run("record", "--backend", backend, "--raw", out("x.dtraw"), "-o", out("raw.json"), "--", "touch", marker)
        assert r.returncode == 2, (backend, r.returncode, r.stderr)
        assert one_line(r.stderr) == (f"devtrace record: --raw {out('x.dtraw')} would not be written: the {backend} "
                                      f"backend cannot save raw captures (the backends that can: {raw_can}); drop "
                                      "--raw or choose one of those"), r.stderr
        assert not os.path.exists(marker) and not os.path.exists(out("x.dtraw")), backend


@case
def raw_with_auto_that_picks_opencl_says_so_on_stderr_and_in_the_trace():
    if not EXAMPLE:
        raise Skipped("no OpenCL example built")
    raw = out("auto.dtraw")
    r = run("record", "--raw", raw, "-o", out("auto.json"), "--", EXAMPLE, "--size", "64", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (f"devtrace record: --raw {raw} was not written: the opencl backend cannot save raw captures (the "
            f"backends that can: {raw_facts()[0]})\n") in r.stderr, r.stderr
    assert not os.path.exists(raw)
    with open(out("auto.json")) as f:
        notes = json.load(f)["devtrace"]["notes"]
    assert (f"raw capture {raw} not written: the opencl backend cannot save one (a .dtraw holds vendor activity "
            f"buffers, and its events do not come from such buffers); the backends that can: {raw_facts()[0]}") in notes, notes
    r = run("record", "--raw", raw, "-o", out("none.json"), "--", "true")
    assert r.returncode == 0 and (f"devtrace record: --raw {raw} was not written: the program never started "
                                  "tracing\n") in r.stderr, r.stderr


@case
def forced_backend_that_cannot_trace_says_why_before_running_and_in_the_trace():
    env = {"DEVTRACE_CUPTI_LIBRARY": out("no-such-libcupti.so")}
    listed = run("list", env=env).stdout.splitlines()
    at = next(i for i, line in enumerate(listed) if line.startswith("cupti "))
    why = listed[at + 2].strip()
    assert why.startswith("why not: ") and "no-such-libcupti.so" in why, listed[at:at + 3]
    why = why[len("why not: "):]
    marker = out("ran-forced")
    r = run("record", "--backend", "cupti", "-o", out("forced.json"), "--", "touch", marker, env=env)
    assert r.returncode == 0 and os.path.exists(marker), (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert lines[0] == (f"devtrace record: backend cupti cannot trace here, so touch runs untraced (see 'devtrace "
                        f"list'): {why}"), lines
    assert lines[1] == "devtrace: backend none (n/a: records nothing)", lines
    assert lines[2] == f"  nothing was traced: cupti: {why}", lines
    with open(out("forced.json")) as f:
        d = json.load(f)["devtrace"]
    assert d["backend"] == "none" and d["unavailable"] == f"cupti: {why}", d
    assert d["notes"] == ["the program ran untraced: backend cupti cannot trace here (the reason is in "
                          "'unavailable')"], d["notes"]


def capture(vendor, api_version, buffers, clock=(), clock_after=()):
    """A .dtraw capture (docs/raw-format.md): the header, CLK chunks (vendor ns, host ns),
    one BUF chunk per buffer, then more CLK chunks (as a live capture writes the last one)."""
    data = b"DTRAW1\0\0" + struct.pack("<II", 1, len(vendor)) + vendor + struct.pack("<I", api_version)
    clk = lambda pair: b"CLK " + struct.pack("<QQQ", 16, *pair)
    data += b"".join(clk(pair) for pair in clock)
    for buf in buffers:
        payload = struct.pack("<Q", len(buf)) + buf
        data += b"BUF " + struct.pack("<Q", len(payload)) + payload
    return data + b"".join(clk(pair) for pair in clock_after)


@case
def replay_as_another_vendors_records_is_refused():
    path = out("mcpti.dtraw")
    with open(path, "wb") as f:
        f.write(capture(b"mcpti", 1, [bytes(8)]))
    r = run("replay", path, "--backend", "cupti", "-o", out("as-cupti.json"))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert one_line(r.stderr) == (f"devtrace replay: replaying {path}: the capture holds mcpti's records, and "
                                  "--backend cupti would decode them as cupti's, another vendor's layouts; drop "
                                  "--backend to decode it as mcpti"), r.stderr
    assert not os.path.exists(out("as-cupti.json")) and not os.path.exists(out("as-cupti.json.tmp"))
    r = run("replay", path, "--backend", "mcpti", "-q", "-o", out("as-mcpti.json"))
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)


@case
def replay_as_a_vendor_with_the_same_records_names_both_vendors():
    path = out("ppu.dtraw")
    with open(path, "wb") as f:
        f.write(capture(b"ppu", 130001, [bytes(8)]))
    note = "the capture was written by ppu and its buffers were decoded as cupti's records (--backend cupti)"
    r = run("replay", path, "--backend", "cupti", "-o", out("ppu-as-cupti.json"))
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert f"  note: {note}\n" in r.stderr, r.stderr
    with open(out("ppu-as-cupti.json")) as f:
        d = json.load(f)["devtrace"]
    assert d["backend"] == "cupti" and note in d["notes"], d
    r = run("replay", path, "-q", "-o", out("ppu.json"))
    with open(out("ppu.json")) as f:
        assert not any("decoded as" in n for n in json.load(f)["devtrace"]["notes"])


def mcpti_api(cbid, start, end, correlation):
    """MCpti_ActivityAPI, 40 bytes (vendor-abi.md)."""
    return struct.pack("<IIQQIII4x", 5, cbid, start, end, 4242, 4343, correlation)


def mcpti_kernel_cut_short(start, end, completed, correlation, keep=120):
    """MCpti_ActivityKernel8 (200 bytes), only its first `keep` bytes."""
    k = bytearray(200)
    struct.pack_into("<I", k, 0, 10)           # CONCURRENT_KERNEL
    struct.pack_into("<I", k, 8, 1)            # partitionedGlobalCacheRequested: OFF
    struct.pack_into("<QQQ", k, 16, start, end, completed)
    struct.pack_into("<III", k, 40, 0, 1, 7)   # device, context, stream
    struct.pack_into("<6I", k, 52, 416, 6, 7, 256, 8, 9)
    struct.pack_into("<I", k, 92, correlation)
    return bytes(k[:keep])


@case
def mcpti_replay_of_a_truncated_tail_gives_no_phantom_copy():
    # The last buffer ends 120 bytes into a kernel record; read from +8, its bytes look like a
    # memcpy (kind 1, copy kind 0, 2 bytes, start 2, end 2^32), far outside the clock samples.
    lo, hi = 1_000_000_000_000, 1_001_000_000_000
    buf = mcpti_api(19, lo + 1000, lo + 1200, 501) + mcpti_kernel_cut_short(2, 2, 1 << 32, 502)
    path = out("cut.dtraw")
    with open(path, "wb") as f:
        f.write(capture(b"mcpti", 18, [buf], clock=[(lo, 1_700_000_000_000_000_000)],
                        clock_after=[(hi, 1_700_000_001_000_000_000)]))
    r = run("replay", path, "-q", "-o", out("cut.json"))
    assert r.returncode == 0, r.stderr
    with open(out("cut.json")) as f:
        trace = json.load(f)
    d = trace["devtrace"]
    assert d["counts"] == {"kernel": 0, "memcpy": 0, "memset": 0, "runtime": 1, "cpu_op": 0}, d["counts"]
    assert d["malformed"] == {"records": 1, "bytes": 120}, d["malformed"]
    assert not [e for e in trace["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    assert d["unpaired_flows"] == 0, d["unpaired_flows"]


if failures:
    print(f"{len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("all command edge cases passed")
