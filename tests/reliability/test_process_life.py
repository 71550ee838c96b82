#!/usr/bin/env python3
"""test_process_life.py: a traced program's life and death under `devtrace record`.

SIGINT and SIGTERM while the program runs (to the recorder, and to the whole process group as a
terminal's Ctrl-C does), on the emulator (exact counts: everything captured before the signal) and
on the OpenCL example (a valid trace of what was captured); a program that forks (the child is
not traced twice, the parent's trace is intact) and one that calls exit() from a second thread;
the trace is never half-written under its final name (the recorder killed with SIGKILL while it
writes, an old trace under that name left as it was); a full disk (a 256 KiB tmpfs, else a file
size limit) gives one clear line, a non-zero exit and no file. Writes OUT/process-life.md.
"""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

from rel_common import Cases, check_flows, expect_meta, expect_note, host, load_trace, parse_args, record, workload_counts

args = parse_args(__doc__.split("\n\n")[0])
os.makedirs(args.out, exist_ok=True)
WL = workload_counts(args.workload)
cases = Cases(args, "process life")
tmp = tempfile.mkdtemp(prefix="devtrace-life-")


def counts_times(n):
    return {"counts." + k: n * WL[k] for k in ("kernel", "memcpy", "memset", "runtime")}


def start_record(out, program, env=None):
    path = os.path.join(args.out, out)
    for p in (path, path + ".tmp"):
        if os.path.exists(p):
            os.unlink(p)
    e = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu, **(env or {}))
    e.pop("DEVEMU_FAULTS", None)
    p = subprocess.Popen([args.devtrace, "record", "-q", "-b", "cupti", "-o", path, "--", *program], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return p, path


def wait_ready(p, timeout=60):
    deadline = time.time() + timeout
    line = p.stdout.readline()
    assert line.strip() == "ready" and time.time() < deadline, "the program did not get ready: %r" % line


def signal_case(sig, to_group):
    p, path = start_record("signal_%s_%s.json" % (sig.name, "group" if to_group else "recorder"),
                           host(args, "--wait-for-signal", repeat=2))
    resent = False
    try:
        wait_ready(p)
        if to_group:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=20 if args.tsan and not to_group else 60)
        except subprocess.TimeoutExpired:
            if not (args.tsan and not to_group):
                raise
            # Under ThreadSanitizer only (about 1 run in 1,500; never in the plain or ASan builds)
            # the program does not end: the recorder forwards the signal (kill() returns 0 within
            # 2 ms), the kernel delivers it to the program's main thread through TSan's handler
            # (traced with the signal_deliver tracepoint), and the collector's handler never runs:
            # TSan's runtime drops it (its pending slot is clear, its table holds the handler).
            # The recorder forwards a second signal as it did the first (a user's second Ctrl-C):
            # the case goes on with it, and its outcome says so.
            resent = True
            p.send_signal(sig)
            _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 128 + sig, "devtrace record exited %d, expected %d: %s" % (p.returncode, 128 + sig, err)
    assert sig.name in err, err
    assert not os.path.exists(path + ".tmp")
    t = load_trace(path)
    expect_meta(t, {**counts_times(2), "dropped.vendor": 0, "malformed.records": 0, "unpaired_flows": 0})
    expect_note(t, "killed by %s" % sig.name)
    check_flows(t)
    return ("exit %d (128+%s); the trace holds both runs exactly (kernel=34 runtime=374), shipped by the "
            "collector's shipper thread on the signal; note names %s%s" %
            (p.returncode, sig.name, sig.name,
             " (ThreadSanitizer's runtime dropped the first forwarded signal: a second was sent)" if resent else ""))


def opencl_signal(sig):
    if not args.example:
        return "SKIPPED (the OpenCL example is not built)"
    path = os.path.join(args.out, "opencl_%s.json" % sig.name)
    for f in (path, path + ".tmp"):
        if os.path.exists(f):
            os.unlink(f)
    p = subprocess.Popen([args.devtrace, "record", "-q", "-b", "opencl", "-o", path, "--", args.example,
                          "--size", "1024"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    time.sleep(0.5)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert not os.path.exists(path + ".tmp")
    t = load_trace(path)
    c = t["devtrace"]["counts"]
    assert p.returncode in (0, 128 + sig), (p.returncode, err)
    if p.returncode == 128 + sig:
        assert any(sig.name in n for n in t["devtrace"]["notes"]), t["devtrace"]["notes"]
    assert c["kernel"] <= 17 and c["memcpy"] <= 1, c
    check_flows(t)
    return ("signal 0.5 s into a 1024x1024 run: exit %d, a valid trace of what was captured (kernel=%d runtime=%d), "
            "flows paired" % (p.returncode, c["kernel"], c["runtime"]))


def fork_case():
    proc, _, path = record(args, "fork.json", host(args, "--fork"))
    assert proc.returncode == 0, proc.stderr
    t = load_trace(path)
    expect_meta(t, {**counts_times(2), "dropped.vendor": 0, "unpaired_flows": 0})
    pids = {e["pid"] for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"}
    assert len(pids) == 1, "runtime events from processes %s" % pids
    check_flows(t)
    return ("parent runs, forks (the child runs the workload too and exits), runs again: the trace holds the "
            "parent's 2 runs exactly, one pid, nothing of the child")


def exit_from_thread():
    proc, _, path = record(args, "exit_thread.json", host(args, "--exit-from-thread"))
    assert proc.returncode == 0, proc.stderr
    t = load_trace(path)
    expect_meta(t, {**counts_times(2), "dropped.vendor": 0, "unpaired_flows": 0})
    assert not any("before its final flush" in n for n in t["devtrace"]["notes"]), t["devtrace"]["notes"]
    check_flows(t)
    return "exit(0) from a second thread while main waits: both runs exactly, the final flush ran (no note of a cut)"


def killed_while_writing():
    path = os.path.join(args.out, "killed_writer.json")
    with open(path, "w") as f:
        f.write("OLD TRACE")
    for f in os.listdir(args.out):
        if f.startswith("killed_writer.json.spill"):
            os.unlink(os.path.join(args.out, f))
    if os.path.exists(path + ".tmp"):
        os.unlink(path + ".tmp")
    e = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu)
    p = subprocess.Popen([args.devtrace, "record", "-q", "-b", "cupti", "-o", path, "--", *host(args, repeat=400)],
                         env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    # The program's END in the spill first: the recorder also makes (and removes) PATH.tmp at its start,
    # checking that it can write there.
    while (p.poll() is None and time.time() < deadline and
           not any(typ == WIRE_END for _, typ, _n in spill_records(path + ".spill")[0])):
        time.sleep(0.01)
    while not os.path.exists(path + ".tmp") and p.poll() is None and time.time() < deadline:
        time.sleep(0.002)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    with open(path) as f:
        content = f.read()
    # Under the final name: the old file, or the whole new trace (the recorder renames it in
    # place and lives on a little after: a kill that lands then finds it written), never a part.
    if content == "OLD TRACE":
        leftover = os.path.exists(path + ".tmp")
        if leftover:
            os.unlink(path + ".tmp")
        spills = [f for f in os.listdir(args.out) if f.startswith("killed_writer.json.spill")]
        assert spills == ["killed_writer.json.spill"], "the killed recorder's spill: %s" % spills
        os.unlink(path + ".spill")  # what devtrace convert would turn into the trace (the cases below)
        return ("recorder SIGKILLed while writing a 400-run trace: the old file under the final name is untouched "
                "(%s), its spill left beside it" % ("the partial .tmp beside it" if leftover else "no .tmp yet"))
    t = load_trace(path)
    expect_meta(t, counts_times(400))
    for f in os.listdir(args.out):
        if f.startswith("killed_writer.json.spill"):
            os.unlink(os.path.join(args.out, f))  # a kill between the rename and the spill's removal
    return "the write finished before the kill could land: the new trace is complete (rerun on a slower disk)"


def disk_full():
    mnt = os.path.join(tmp, "small")
    os.makedirs(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt], capture_output=True).returncode == 0
    try:
        path = os.path.join(mnt, "full.json")
        with open(path, "w") as f:
            f.write("OLD TRACE")
        preexec = None
        if not mounted:
            import resource

            def preexec():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, 256 << 10))
        e = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu)
        proc = subprocess.run([args.devtrace, "record", "-q", "-b", "cupti", "-o", path, "--", *host(args, repeat=20)],
                              env=e, capture_output=True, text=True, timeout=120, preexec_fn=preexec)
        assert proc.returncode != 0, "a trace that does not fit was reported as written"
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and path in lines[0], proc.stderr
        reason = "No space left on device" if mounted else "File too large"
        assert reason in lines[0], proc.stderr
        with open(path) as f:
            assert f.read() == "OLD TRACE", "the old trace was overwritten"
        assert not os.path.exists(path + ".tmp"), "the partial .tmp was left on the full disk"
        return ("%s: exit %d, one line: \"%s\"; the old trace is intact, no .tmp left" %
                ("a 256 KiB tmpfs" if mounted else "RLIMIT_FSIZE 256 KiB", proc.returncode, lines[0][:150]))
    finally:
        if mounted:
            subprocess.run(["umount", mnt])


SPILL_HEADER = 96  # record_spill.h: the header, then records: u32 type, u32 connection, u64 length, payload, pad to 8
EVENT_SIZE, KIND_AT, WIRE_EVENTS, WIRE_END = 112, 36, 3, 9
KINDS = {1: "kernel", 2: "memcpy", 3: "memset", 4: "runtime"}


def spill_records(path):
    """The spill's whole records: [(offset, type, payload length)], and the file's bytes."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return [], b""  # not made yet
    if len(data) < SPILL_HEADER:
        return [], data  # just made: its header not written yet
    assert data[:8] == b"DTSPILL1", "not a spill: %r" % data[:8]
    recs, off = [], SPILL_HEADER
    while len(data) - off >= 16:
        typ, _conn, n = struct.unpack_from("<IIQ", data, off)
        padded = (n + 7) & ~7
        if padded > len(data) - off - 16:
            break
        recs.append((off, typ, n))
        off += 16 + padded
    return recs, data


def spill_kind_counts(path, upto=None):
    """Events per kind in the spill's EVENTS records (the first upto records)."""
    recs, data = spill_records(path)
    counts = {k: 0 for k in KINDS.values()}
    for off, typ, n in recs[:upto]:
        if typ != WIRE_EVENTS:
            continue
        for i in range(n // EVENT_SIZE):
            kind = struct.unpack_from("<H", data, off + 16 + i * EVENT_SIZE + KIND_AT)[0]
            if kind in KINDS:
                counts[KINDS[kind]] += 1
    return counts


def convert(spill, out_name):
    out = os.path.join(args.out, out_name)
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run([args.devtrace, "convert", spill, out, "-q"], capture_output=True, text=True, timeout=120)
    return r, out


def kill_all(p):
    """The recorder p (if it still runs) and its process group (the program, left running): SIGKILLed."""
    if p.poll() is None:
        os.kill(p.pid, signal.SIGKILL)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def kill_recorder(when):
    """SIGKILL to devtrace record alone (not the program). when="after_end": the traced program ran the
    workload 3 times and ended (its END is in the spill), while the top program (a shell) still runs;
    when="mid_run": 0.3 s after its first kernels reached the spill, in a run of 20,000 repeats, the program then killed too. Then devtrace convert
    of the spill left beside the trace: the counts are exactly what the spill's EVENTS records hold, and
    after the end exactly the workload's."""
    path = os.path.join(args.out, "killed_recorder_%s.json" % when)
    spill = path + ".spill"
    for f in os.listdir(args.out):
        if f.startswith(os.path.basename(path)):
            os.unlink(os.path.join(args.out, f))
    if when == "after_end":
        program = ["sh", "-c", '"$@" && echo done && exec sleep 60', "sh", *host(args, repeat=3)]
    else:
        program = host(args, repeat=20000)  # about 15 s traced
    p, _ = start_record(os.path.basename(path), program)
    try:
        deadline = time.time() + 60
        if when == "after_end":
            line = p.stdout.readline()
            assert line.strip() == "done", "the program did not end: %r" % line
            while not any(typ == WIRE_END for _, typ, _n in spill_records(spill)[0]) and time.time() < deadline:
                time.sleep(0.02)  # the recorder writes what it received at each poll round
        else:
            while (not os.path.exists(spill) or not spill_kind_counts(spill)["kernel"]) and time.time() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
        assert p.poll() is None, "the recorder ended before it was killed: %s" % p.communicate()[1]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        kill_all(p)
    assert not os.path.exists(path), "a trace was written by a killed recorder"
    shipped = spill_kind_counts(spill)
    ended = any(typ == WIRE_END for _, typ, _n in spill_records(spill)[0])
    assert ended == (when == "after_end"), "the program's END %s in the spill" % ("is" if ended else "is not")
    if when == "after_end":
        want = counts_times(3)
        assert shipped == {k: want["counts." + k] for k in KINDS.values()}, shipped
    r, out = convert(spill, "killed_recorder_%s_converted.json" % when)
    # A kill that lands inside the recorder's write of the spill can cut its last record: then one line
    # says so and the whole records are kept (what spill_kind_counts counts).
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 0 and (not lines or (when == "mid_run" and len(lines) == 1 and
                                                "ends mid-message" in lines[0])), (r.returncode, r.stderr)
    t = load_trace(out)
    expect_meta(t, {**{"counts." + k: v for k, v in shipped.items()}, "malformed.records": 0,
                    "events_missing": 0 if when == "after_end" else 1})
    if when == "after_end":
        assert not any("final flush" in n for n in t["devtrace"]["notes"]), t["devtrace"]["notes"]
        check_flows(t)
    else:
        expect_note(t, "ended without its final flush")
    return ("recorder SIGKILLed %s: the spill left beside the trace holds kernel=%d runtime=%d; devtrace convert "
            "writes exactly those%s" %
            ("after the traced program ran 3 times and ended" if when == "after_end" else "mid-run (no END)",
             shipped["kernel"], shipped["runtime"],
             ", flows paired, no note of a cut" if when == "after_end" else
             ", events_missing=1 and the note of a process without its final flush"))


def per_process_spill():
    """-o with %p, two traced processes (the workload 2 and 3 times), the recorder SIGKILLed after both
    ended: devtrace convert of the spill with %p in OUT writes one trace per process, each named with its
    pid and holding exactly its own runs; with a plain OUT, one trace of both and a line saying how to get
    one each."""
    for f in os.listdir(args.out):
        if f.startswith("pp_"):
            os.unlink(os.path.join(args.out, f))
    runs = (2, 3)
    script = '"$@" --repeat %d && "$@" --repeat %d && echo done && exec sleep 60' % runs
    program = ["sh", "-c", script, "sh", args.rel_host, "--lib", args.emu, args.workload]
    p, _ = start_record("pp_%p.json", program)
    spill = None
    try:
        line = p.stdout.readline()
        assert line.strip() == "done", "the program did not end: %r" % line
        deadline = time.time() + 60
        while time.time() < deadline:
            spills = [f for f in os.listdir(args.out) if f.startswith("pp_") and f.endswith(".json.spill")]
            if spills and sum(typ == WIRE_END for _, typ, _n in
                              spill_records(os.path.join(args.out, spills[0]))[0]) == 2:
                spill = os.path.join(args.out, spills[0])
                break
            time.sleep(0.02)
        assert spill, "the spill never held both processes' ENDs"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        kill_all(p)
    assert spill == os.path.join(args.out, "pp_%d.json.spill" % p.pid), spill  # -o expanded with the recorder's pid
    r = subprocess.run([args.devtrace, "convert", spill, os.path.join(args.out, "pp_out_%p.json"), "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    outs = sorted(f for f in os.listdir(args.out) if f.startswith("pp_out_"))
    assert len(outs) == 2, outs
    got = []
    for f in outs:
        t = load_trace(os.path.join(args.out, f))
        pids = {e["pid"] for e in t["traceEvents"] if e.get("cat") == "cuda_runtime"}
        assert pids == {int(f[len("pp_out_"):-len(".json")])}, (f, pids)  # its own process's, named by its pid
        got.append(t["devtrace"]["counts"]["kernel"])
        check_flows(t)
    assert sorted(got) == [n * WL["kernel"] for n in runs], got
    r = subprocess.run([args.devtrace, "convert", spill, os.path.join(args.out, "pp_all.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr.startswith(
        "devtrace convert: the recorder was writing one trace per process (-o had %%p or %%r); this writes them all "
        "to %s (an OUT with %%p or %%r writes one each)\n" % os.path.join(args.out, "pp_all.json")), r.stderr
    expect_meta(load_trace(os.path.join(args.out, "pp_all.json")), counts_times(sum(runs)))
    return ("-o pp_%%p.json, 2 processes (%d and %d runs), recorder SIGKILLed: convert to pp_out_%%p.json writes "
            "one trace per process, named by its pid, kernel=%s; a plain OUT gets both and the line saying how" %
            (runs[0], runs[1], sorted(got)))


def truncated_spill():
    """A spill cut in the middle of its last EVENTS record: convert says so in one line and keeps
    every whole record (its counts: those of the records before the cut)."""
    src = os.path.join(args.out, "killed_recorder_after_end.json.spill")
    if not os.path.exists(src):
        kill_recorder("after_end")
    recs, data = spill_records(src)
    last = max(i for i, (_, typ, _n) in enumerate(recs) if typ == WIRE_EVENTS)
    off, _, n = recs[last]
    cut = off + 16 + n // 2
    spill = os.path.join(args.out, "truncated.spill")
    with open(spill, "wb") as f:
        f.write(data[:cut])
    kept = spill_kind_counts(spill)
    assert kept == spill_kind_counts(src, upto=last), "the walk of the cut file"
    r, out = convert(spill, "truncated_converted.json")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 0 and len(lines) == 1, (r.returncode, r.stderr)
    assert lines[0] == ("devtrace convert: %s ends mid-message (its last %d bytes are part of a message the "
                        "recorder was writing when it stopped): the %d whole messages before them are converted" %
                        (spill, cut - off, last)), lines[0]
    t = load_trace(out)
    expect_meta(t, {"counts." + k: v for k, v in kept.items()})
    expect_note(t, "the spill ends mid-message")
    return ("cut in the middle of record %d of %d: one line, exit 0, the %d whole records converted (kernel=%d of "
            "%d)" % (last + 1, len(recs), last, kept["kernel"], spill_kind_counts(src)["kernel"]))


def damaged_spill():
    """A spill whose second event record names a connection no recorder has (70,000; a recorder takes
    65,536 at most): convert says where it is damaged in one line, keeps the records before it and
    reads nothing after."""
    src = os.path.join(args.out, "killed_recorder_after_end.json.spill")
    if not os.path.exists(src):
        kill_recorder("after_end")
    recs, data = spill_records(src)
    at = [i for i, (_, typ, _n) in enumerate(recs) if typ == WIRE_EVENTS][1]
    off = recs[at][0]
    damaged = bytearray(data)
    struct.pack_into("<I", damaged, off + 4, 70000)
    spill = os.path.join(args.out, "damaged.spill")
    with open(spill, "wb") as f:
        f.write(damaged)
    r, out = convert(spill, "damaged_converted.json")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 0 and len(lines) == 1, (r.returncode, r.stderr)
    assert lines[0] == ("devtrace convert: %s is damaged at byte %d (a record of connection 70000, type %d, %d bytes, "
                        "that no recorder writes): the %d whole messages before it are converted, the %d bytes from "
                        "there are not" % (spill, off, WIRE_EVENTS, recs[at][2], at, len(data) - off)), lines[0]
    kept = spill_kind_counts(src, upto=at)
    ops_after = recs[at][2] // EVENT_SIZE  # the second event record: the ops (cpu_op), 17 a run
    t = load_trace(out)
    expect_meta(t, {**{"counts." + k: v for k, v in kept.items()}, "counts.cpu_op": 0})
    expect_note(t, "the spill is damaged at byte %d" % off)
    return ("record %d of %d (the second of events: %d ops) names connection 70000: one line naming byte %d, the %d "
            "records before it converted (kernel=%d runtime=%d), no op" % (at + 1, len(recs), ops_after, off, at,
                                                                         kept["kernel"], kept["runtime"]))


def spill_removed():
    """An ordinary run leaves no spill; the trace is the same as one recorded in memory
    (DEVTRACE_RECORD_SPILL=0): every event but its times, which differ run to run."""
    proc, _, path = record(args, "spilled.json", host(args, repeat=2))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    left = [f for f in os.listdir(args.out) if f.startswith("spilled.json.spill")]
    assert not left, "the spill was left: %s" % left
    proc2, _, path2 = record(args, "in_memory.json", host(args, repeat=2), env={"DEVTRACE_RECORD_SPILL": "0"})
    assert proc2.returncode == 0 and proc2.stderr == "", proc2.stderr
    a, b = load_trace(path), load_trace(path2)
    expect_meta(a, counts_times(2))
    strip = ("ts", "dur", "pid", "tid", "id")

    def shape(t):
        return sorted(json.dumps({k: v for k, v in e.items() if k not in strip and k != "args"}, sort_keys=True)
                      for e in t["traceEvents"])
    assert shape(a) == shape(b), "the spilled run's events differ from the in-memory run's"
    return "no spill left; the same %d events (names, kinds, categories) as the in-memory recorder" % len(
        a["traceEvents"])


MEMORY_REPEATS = 1500  # 334,500 events: about 37 MB of events, 90 MB with finalise's arrays
MEMORY_BOUND_KB = 64 << 10  # issue 25's bound on the recorder's memory, whatever the run's length


def recorder_memory():
    """The end of a long run in bounded memory: the recorder builds, finalises and writes a run of
    334,500 events with its peak resident memory (VmHWM, DEVTRACE_RECORDER_STATS=1) under 64 MB, the
    events and finalise's arrays in file memory trimmed out of its resident set as it goes; the trace
    holds every event exactly. (With DEVTRACE_RECORD_CHUNKS=heap, which keeps them in memory as before, the
    peak was 138 MB.)"""
    if args.sanitized:
        return "SKIPPED (a sanitizer's shadow memory grows with every page touched: the bound holds for plain builds)"
    proc, _, path = record(args, "recorder_memory.json", host(args, repeat=MEMORY_REPEATS),
                           env={"DEVTRACE_RECORDER_STATS": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    hwm = re.search(r"memory after writing: VmHWM (\d+) kB", proc.stderr)
    trims = re.search(r"file memory trimmed (\d+) times", proc.stderr)
    assert hwm and trims, proc.stderr
    hwm_kb, ntrims = int(hwm.group(1)), int(trims.group(1))
    assert ntrims > 0, "the file memory was never trimmed: %s" % proc.stderr
    assert hwm_kb < MEMORY_BOUND_KB, "the recorder's peak was %d kB (bound %d kB)" % (hwm_kb, MEMORY_BOUND_KB)
    t = load_trace(path)
    expect_meta(t, {**counts_times(MEMORY_REPEATS), "events_missing": 0, "malformed.records": 0})
    os.unlink(path)
    return "%d device events and runtime calls: peak %.1f MB (bound 64 MB), file memory trimmed %d times; all in the trace" % (
        MEMORY_REPEATS * sum(WL[k] for k in ("kernel", "memcpy", "memset", "runtime")), hwm_kb / 1024, ntrims)


def disk_full_keeps_the_spill():
    """The trace does not fit but the spill did: the recorder keeps the spill and says in one line where
    it is and how to convert it; devtrace convert of it (to another disk) gives the whole run."""
    probe, _, probe_path = record(args, "spill_size.json", host(args, repeat=20), env={"DEVTRACE_RECORDER_STATS": "1"})
    assert probe.returncode == 0, probe.stderr
    spill_bytes = int(probe.stderr.split("spill ")[1].split(" bytes")[0])
    mnt = os.path.join(tmp, "spill_fits")
    os.makedirs(mnt)
    size_kb = (spill_bytes + (256 << 10)) // 1024  # the spill and 256 KiB: not the ~1 MB trace as well
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % size_kb, "tmpfs", mnt],
                      capture_output=True).returncode != 0:
        return "SKIPPED (cannot mount a tmpfs here: run as root, as CI does)"
    try:
        path = os.path.join(mnt, "t.json")
        e = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu)
        proc = subprocess.run([args.devtrace, "record", "-q", "-b", "cupti", "-o", path, "--", *host(args, repeat=20)],
                              env=e, capture_output=True, text=True, timeout=120)
        lines = proc.stderr.strip().splitlines()
        spill = path + ".spill"
        assert proc.returncode == 1 and len(lines) == 2, (proc.returncode, proc.stderr)
        assert lines[0].startswith("devtrace record: writing the trace to %s.tmp failed: No space left" % path), lines
        assert lines[1] == ("devtrace record: the events are kept in %s: 'devtrace convert %s OUT.json' writes the "
                            "trace from it" % (spill, spill)), lines[1]
        assert sorted(os.listdir(mnt)) == ["t.json.spill"], os.listdir(mnt)
        r, out = convert(spill, "disk_full_converted.json")
        assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
        t = load_trace(out)
        expect_meta(t, {**counts_times(20), "events_missing": 0, "malformed.records": 0})
        check_flows(t)
        return ("a tmpfs of the spill's size + 256 KiB: exit 1, the write's line and \"the events are kept in "
                "t.json.spill: 'devtrace convert ...'\"; converted elsewhere: the 20 runs exactly")
    finally:
        subprocess.run(["umount", mnt])


E, O = "emulator (CUPTI)", "OpenCL (PoCL)"
cases.run("sigint_to_recorder", E, "SIGINT to devtrace record", lambda: signal_case(signal.SIGINT, False))
cases.run("sigterm_to_recorder", E, "SIGTERM to devtrace record", lambda: signal_case(signal.SIGTERM, False))
cases.run("sigint_to_group", E, "SIGINT to the process group (Ctrl-C)", lambda: signal_case(signal.SIGINT, True))
cases.run("sigterm_to_group", E, "SIGTERM to the process group", lambda: signal_case(signal.SIGTERM, True))
cases.run("opencl_sigint", O, "SIGINT mid-run", lambda: opencl_signal(signal.SIGINT))
cases.run("opencl_sigterm", O, "SIGTERM mid-run", lambda: opencl_signal(signal.SIGTERM))
cases.run("fork", E, "fork(); the child runs the workload", fork_case)
cases.run("exit_from_thread", E, "exit(0) from a second thread", exit_from_thread)
cases.run("killed_while_writing", E, "SIGKILL to the recorder mid-write", killed_while_writing)
cases.run("disk_full", E, "disk full while writing", disk_full)
cases.run("disk_full_keeps_the_spill", E, "disk full while writing, the spill whole", disk_full_keeps_the_spill)
cases.run("spill_removed", E, "an ordinary run", spill_removed)
cases.run("recorder_memory", E, "a long run's end in bounded memory", recorder_memory)
cases.run("recorder_killed_after_end", E, "SIGKILL to the recorder alone after the program ran",
          lambda: kill_recorder("after_end"))
cases.run("recorder_killed_mid_run", E, "SIGKILL to the recorder alone mid-run", lambda: kill_recorder("mid_run"))
cases.run("spill_per_process", E, "a spill of -o with %p, converted per process", per_process_spill)
cases.run("spill_truncated", E, "a spill cut mid-message, converted", truncated_spill)
cases.run("spill_damaged", E, "a spill with a record no recorder writes, converted", damaged_spill)
sys.exit(cases.finish("process-life.md"))
