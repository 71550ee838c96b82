#!/usr/bin/env python3
"""test_realruns.py: devtrace record on real OpenCL runs (PoCL), with rr_opencl as the program.

Process trees: a shell script running two OpenCL programs gives one trace holding both (each
on its own pid lanes, named) or, with %p, one file per process; --no-children traces the top
only; children forked without exec are counted; the recorder exits with the top's status.
Crashes: a program that runs seconds of kernels and then gets SIGSEGV or SIGABRT leaves a
trace with every kernel it completed, and the commands it had not completed are counted
(lost.device_pending); one ended by _exit or SIGKILL keeps every kernel shipped before its
last DT_SHIP_AGE_MS (100 ms), and the summary says events are missing. Capture windows:
--delay/--duration (the window's place and length, every kernel kept inside it), and
--capture-op on an annotated loop (exactly the chosen iterations).

Each case is bounded in time; the whole runs in about 30 s on 2 cores.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import trace_checks as tc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--devtrace", required=True)
ap.add_argument("--program", required=True, help="rr_opencl")
ap.add_argument("--out", required=True)
ap.add_argument("--only", help="run only the cases whose name contains this")
ap.add_argument("--sanitized", action="store_true", help="libdevtrace is built with a sanitizer")
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)
failures = []
SKIP = 77


class Skipped(Exception):
    """A case that cannot run here (said, never counted as passed)."""


def case(fn):
    if args.only and args.only not in fn.__name__:
        return fn
    started = time.time()
    try:
        fn()
        print("ok   %s (%.1f s)" % (fn.__name__, time.time() - started))
    except Skipped as e:
        print("skip %s: %s" % (fn.__name__, e))
    except AssertionError as e:
        failures.append(fn.__name__)
        print("FAIL %s: %s" % (fn.__name__, e))
    return fn


def out(name):
    path = os.path.join(args.out, name)
    if os.path.exists(path):
        os.unlink(path)
    return path


def record(options, program, timeout=90, env=None):
    """devtrace record OPTIONS -- PROGRAM: the completed process (stdout, stderr as text)."""
    return subprocess.run([args.devtrace, "record", *options, "--", *program], capture_output=True, text=True,
                          timeout=timeout, env=env)


def without_sanitizer_crash_handlers():
    """The environment for a program that is to crash: in an AddressSanitizer build, ASan's own
    SIGSEGV/SIGBUS handler would report and exit 1 instead of letting the signal kill it."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(o for o in (env.get("ASAN_OPTIONS"), "handle_segv=0:handle_sigbus=0") if o)
    return env


def rr(*options):
    return [args.program, *options]


def kernels(trace):
    return [e for e in tc.complete_events(trace, "kernel")]


def kernel_lines(stdout):
    """The program's own account: (index, begin ns, end ns) of each kernel it waited for."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith("kernel "):
            _, i, b, e = line.split()
            rows.append((int(i), int(b), int(e)))
    return rows


def script(name, body):
    path = os.path.join(args.out, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


class BusyLoops:
    """n processes that spin (the load under which the signal and crash cases are run); each is
    killed at the end of the case and ends by itself after 120 s in any case."""
    SPIN = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end:\n    pass\n"

    def __init__(self, n=3):
        self.n = n

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", self.SPIN]) for _ in range(self.n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def check_every_logged_kernel(t, rows, may_add_one=False):
    """The trace's kernels are exactly the program's logged ones (each at its place in time);
    may_add_one: a program ended by a signal may have completed one more kernel it had no time
    to log, after its last logged one."""
    kept = sorted((tc.abs_ns(t, k["ts"]), tc.abs_ns(t, k["ts"] + k["dur"])) for k in kernels(t))
    for i, b, e in rows:
        assert any(b <= kb + 1 and ke <= e + 1 for kb, ke in kept), \
            "kernel %d of the program's log (%d of %d logged) is missing from the trace (%d kernels)" % (
                i, i + 1, len(rows), len(kept))
    extra = len(kept) - len(rows)
    assert extra == 0 or (may_add_one and extra == 1 and kept[-1][0] >= rows[-1][2] - 1 if rows else True), \
        "%d kernels in the trace, %d logged" % (len(kept), len(rows))


# ---------------------------------------------------------------------------- probe
probe = subprocess.run(rr("--kernels", "0"), capture_output=True, text=True, timeout=60)
if probe.returncode == SKIP:
    print("SKIPPED: no OpenCL device (%s)" % probe.stdout.strip())
    sys.exit(SKIP)
assert probe.returncode == 0, probe.stderr


# ---------------------------------------------------------------------------- process trees
TWO = script("two.sh", '"%s" --kernels 3 --pause-ms 0\n"%s" --kernels 4 --pause-ms 0\nexit 3\n' % (args.program, args.program))


@case
def script_of_two_programs_gives_one_trace_with_both():
    path = out("two.json")
    r = record(["-o", path], [TWO])
    assert r.returncode == 3, "the recorder exits with the script's status 3, not %d: %s" % (r.returncode, r.stderr)
    t = tc.load(path)
    meta = t["devtrace"]
    procs = meta["processes"]
    assert len(procs) == 2, procs
    assert all(p["ended"] == 1 and p["crash_signal"] == 0 for p in procs), procs
    ks = kernels(t)
    assert len(ks) == 7 and meta["counts"]["kernel"] == 7, (len(ks), meta["counts"])
    # Each process has device lanes of its own, named after it, and host lanes on its own pid.
    by_lane = {}
    for k in ks:
        by_lane[k["pid"]] = by_lane.get(k["pid"], 0) + 1
    assert sorted(by_lane.values()) == [3, 4], by_lane
    names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
    for p in procs:
        assert names.get(p["pid"]) == "rr_opencl", (p, names)
    device_names = sorted(names[pid] for pid in by_lane)
    assert device_names == sorted("GPU 0 (pid %d)" % p["pid"] for p in procs), device_names
    runtime_pids = {e["pid"] for e in tc.complete_events(t, "privateuse1_runtime")}
    assert runtime_pids == {p["pid"] for p in procs}, runtime_pids
    tc.check_flows(t, "privateuse1_runtime")  # no flow joins two processes' correlation ids
    assert "processes: 2 traced" in r.stderr, r.stderr


@case
def percent_p_gives_one_file_per_process():
    for f in os.listdir(args.out):
        if f.startswith("per-"):
            os.unlink(os.path.join(args.out, f))
    r = record(["-q", "-o", os.path.join(args.out, "per-%p.json")], [TWO])
    assert r.returncode == 3, r.stderr
    files = sorted(f for f in os.listdir(args.out) if f.startswith("per-"))
    assert len(files) == 2, files
    counts = []
    for f in files:
        t = tc.load(os.path.join(args.out, f))
        assert "processes" not in t["devtrace"], "a trace of one process is as its replay would be"
        pids = {e["pid"] for e in tc.complete_events(t, "privateuse1_runtime")}
        assert len(pids) == 1 and f == "per-%d.json" % pids.pop(), (f, pids)
        counts.append(len(kernels(t)))
        tc.check_flows(t, "privateuse1_runtime")
    assert sorted(counts) == [3, 4], counts


@case
def percent_p_with_raw_when_only_children_trace_says_the_raw_was_not_written():
    # The top program (sh) never traces, so its own trace is not among the per-process files;
    # the OpenCL backend cannot save raw captures, and the recorder says so for the children.
    for f in os.listdir(args.out):
        if f.startswith("rawper-"):
            os.unlink(os.path.join(args.out, f))
    raw = out("rawper.dtraw")
    r = record(["-q", "-o", os.path.join(args.out, "rawper-%p.json"), "--raw", raw], [TWO])
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "--raw %s was not written: the opencl backend cannot save raw captures" % raw in r.stderr, r.stderr
    assert not os.path.exists(raw)
    assert len([f for f in os.listdir(args.out) if f.startswith("rawper-")]) == 2


@case
def no_children_traces_the_top_program_only():
    path = out("nochildren.json")
    r = record(["-o", path, "--no-children"], [TWO])
    assert r.returncode == 3, r.stderr
    t = tc.load(path)
    assert "processes" not in t["devtrace"] and len(kernels(t)) == 0, t["devtrace"]
    assert any("--no-children" in n for n in t["devtrace"]["notes"]), t["devtrace"]["notes"]


@case
def sh_c_and_system_children_are_traced():
    path = out("shc.json")
    r = record(["-q", "-o", path], ["sh", "-c", '"%s" --kernels 2 --pause-ms 0 && exit 0' % args.program])
    assert r.returncode == 0, r.stderr
    assert len(kernels(tc.load(path))) == 2


@case
def forked_children_without_exec_are_counted():
    path = out("forks.json")
    r = record(["-o", path], rr("--kernels", "1", "--fork", "2"))
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    assert t["devtrace"]["forked_untraced"] == 2, t["devtrace"]["forked_untraced"]
    assert len(t["devtrace"]["processes"]) == 1 and len(kernels(t)) == 1
    assert "2 forked without exec (not traced)" in r.stderr, r.stderr


def python_with_pyopencl():
    """An interpreter that imports pyopencl (Debian's python3-pyopencl is for /usr/bin/python3), or None."""
    for python in ("/usr/bin/python3", sys.executable):
        if os.path.exists(python) and subprocess.run([python, "-c", "import pyopencl, numpy"],
                                                     capture_output=True).returncode == 0:
            return python
    return None


@case
def python_subprocess_workers_give_one_file_per_rank():
    python = python_with_pyopencl()
    if not python or args.sanitized:
        raise Skipped("a sanitized libdevtrace cannot load into an uninstrumented Python" if python else
                      "no interpreter imports pyopencl")
    print("     (workers run by %s)" % python)
    for f in os.listdir(args.out):
        if f.startswith("rank"):
            os.unlink(os.path.join(args.out, f))
    r = record(["-q", "-o", os.path.join(args.out, "rank%r.json")],
               [python, os.path.join(HERE, "rr_workers.py"), "2"])
    assert r.returncode == 0, r.stderr
    files = sorted(f for f in os.listdir(args.out) if f.startswith("rank"))
    assert files == ["rank0.json", "rank1.json"], files
    for rank, f in enumerate(files):
        t = tc.load(os.path.join(args.out, f))
        assert t["distributedInfo"] == {"rank": rank, "world_size": 2}, t["distributedInfo"]
        assert len(kernels(t)) == rank + 2, (f, len(kernels(t)))
        assert len({e["pid"] for e in tc.complete_events(t, "privateuse1_runtime")}) == 1


TWO_ANNOTATED = script("two_annotated.sh", '"%s" --kernels 6 --pause-ms 10 --annotate step\n'
                       '"%s" --kernels 6 --pause-ms 10 --annotate step\n' % (args.program, args.program))
TWO_RANKS = script("two_ranks.sh", 'RANK=1 WORLD_SIZE=2 "%s" --kernels 3 --pause-ms 0\n'
                   'RANK=0 WORLD_SIZE=2 "%s" --kernels 4 --pause-ms 0\n' % (args.program, args.program))


@case
def capture_op_in_one_file_applies_to_each_process():
    # --capture-op chooses iterations per process; in one file it used the union of the
    # processes' windows (the first's later steps and the second's earlier ones too).
    path = out("capture_op_two.json")
    r = record(["-q", "-o", path, "--capture-op", "step", "--skip", "2", "--count", "2"], [TWO_ANNOTATED])
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    meta = t["devtrace"]
    pids = sorted(p["pid"] for p in meta["processes"])
    assert len(pids) == 2, meta["processes"]
    ops = sorted((e["pid"], e["args"]["External id"]) for e in tc.complete_events(t, "cpu_op"))
    assert ops == [(pids[0], 2), (pids[0], 3), (pids[1], 2), (pids[1], 3)], ops
    assert meta["counts"]["kernel"] == 4 and meta["out_of_window"]["kernel"] == 8, (meta["counts"], meta["out_of_window"])
    assert meta["counts"]["cpu_op"] == 4 and meta["out_of_window"]["cpu_op"] == 8, meta["counts"]
    per_process = {}
    for k in kernels(t):
        per_process[k["pid"]] = per_process.get(k["pid"], 0) + 1
    assert sorted(per_process.values()) == [2, 2], per_process


@case
def rank_name_clash_keeps_the_format_and_the_folder():
    # Two processes of one rank (both 0): the second file gets .PID before the extension, in
    # the same folder and the same format (it used to get "r0.pftrace.PID", written as JSON,
    # and "run.PID.json.d/r0.json", in a folder that does not exist).
    folder = os.path.join(args.out, "run.json.d")
    os.makedirs(folder, exist_ok=True)
    for d in (args.out, folder):
        for f in os.listdir(d):
            if f.startswith("r0."):
                os.unlink(os.path.join(d, f))
    r = record(["-q", "-o", os.path.join(folder, "r%r.json")], [TWO])
    assert r.returncode == 3, (r.returncode, r.stderr)
    files = sorted(os.listdir(folder), key=len)
    assert len(files) == 2 and files[0] == "r0.json", files
    second = files[1]
    assert second.startswith("r0.") and second.endswith(".json") and second[3:-5].isdigit(), files
    counts = sorted(len(kernels(tc.load(os.path.join(folder, f)))) for f in files)
    assert counts == [3, 4], counts
    assert "process %s writes %s" % (second[3:-5], os.path.join(folder, second)) in r.stderr, r.stderr
    r = record(["-q", "-o", os.path.join(args.out, "r%r.pftrace")], [TWO])
    assert r.returncode == 3, (r.returncode, r.stderr)
    files = sorted((f for f in os.listdir(args.out) if f.startswith("r0.")), key=len)
    assert len(files) == 2 and files[0] == "r0.pftrace" and files[1].endswith(".pftrace") and \
        files[1][3:-8].isdigit(), files
    for f in files:
        with open(os.path.join(args.out, f), "rb") as fh:
            head = fh.read(1)
        assert head == b"\x0a", "%s is not a Perfetto trace (first byte %r)" % (f, head)


@case
def one_file_of_several_ranks_gives_each_process_its_rank():
    # distributedInfo used to be whichever process reported last.
    path = out("two_ranks.json")
    r = record(["-q", "-o", path], [TWO_RANKS])
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    meta = t["devtrace"]
    assert t["distributedInfo"] == {"rank": 0, "world_size": 2}, t["distributedInfo"]
    procs = sorted((p.get("rank"), p.get("world_size")) for p in meta["processes"])
    assert procs == [(0, 2), (1, 2)], meta["processes"]
    rank_of = {p["pid"]: p.get("rank") for p in meta["processes"]}
    low = [p["pid"] for p in meta["processes"] if p.get("rank") == 0][0]
    assert any("different ranks" in n and "process %d's" % low in n for n in meta["notes"]), meta["notes"]
    labels = {e["pid"]: e["args"]["labels"] for e in t["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_labels"}
    for pid, rank in rank_of.items():
        assert labels.get(pid) == "pid %d, rank %d" % (pid, rank), (pid, labels)
        assert "GPU 0 (pid %d), rank %d" % (pid, rank) in labels.values(), labels


def perfetto_tracks(path):
    """The track descriptors of a .pftrace (decoded with protoc), or Skipped."""
    protoc = shutil.which("protoc")
    if not protoc:
        raise Skipped("no protoc (Debian protobuf-compiler) to decode the .pftrace")
    sys.path.insert(0, os.path.join(HERE, "..", "perfetto"))
    import compare_with_json as cw
    proto = (os.path.join(HERE, "..", "perfetto"), "devtrace_perfetto.proto")
    return [cw.one(p, "track_descriptor") for p in cw.read_proto(protoc, proto, path) if "track_descriptor" in p]


@case
def perfetto_file_of_several_processes_names_their_tracks():
    # Device tracks were named "GPU 1073742080", process tracks had no name.
    path = out("two.pftrace")
    r = record(["-q", "-o", path], [TWO])
    assert r.returncode == 3, r.stderr
    tracks = perfetto_tracks(path)
    gpus = sorted(t["name"][0] for t in tracks if t.get("name", [""])[0].startswith("GPU"))
    processes = {t["process"][0]["pid"][0]: t["process"][0] for t in tracks if "process" in t}
    pids = sorted(processes)
    assert len(pids) == 2, processes
    assert gpus == ["GPU 0 (pid %d)" % pid for pid in pids], gpus
    for pid, p in processes.items():
        assert p.get("process_name") == ["rr_opencl"] and p.get("process_labels") == ["pid %d" % pid], p


# ---------------------------------------------------------------------------- crashes
def crash_case(then, sig, pending=0, linger_ms=0, n=12, pause_ms=150):
    """n kernels, pause_ms apart (about n * pause_ms of kernels), then the ending."""
    path = out("crash_%s.json" % then)
    options = ["--kernels", str(n), "--pause-ms", str(pause_ms), "--then", then]
    if pending:
        options += ["--pending", str(pending)]
    if linger_ms:
        options += ["--linger-ms", str(linger_ms)]
    r = record(["-o", path], rr(*options), env=without_sanitizer_crash_handlers())
    assert r.returncode == 128 + sig if sig else r.returncode == 0, (r.returncode, r.stderr)
    assert len(kernel_lines(r.stdout)) == n, r.stdout
    t = tc.load(path)
    return t, r


@case
def sigsegv_after_seconds_of_kernels_keeps_every_kernel():
    t, r = crash_case("segv", signal.SIGSEGV)
    meta = t["devtrace"]
    assert len(kernels(t)) == 12 and meta["counts"]["kernel"] == 12, meta["counts"]
    assert any("got SIGSEGV: what it had captured was shipped" in n for n in meta["notes"]), meta["notes"]
    assert "crashed" in r.stderr, r.stderr  # the summary's process line
    assert meta["lost"] == {"device_pending": 0} and meta["events_missing"] == 0, meta
    assert "nothing dropped" in r.stderr, r.stderr  # nothing is known lost: the crash flush shipped it all


@case
def sigabrt_counts_the_commands_not_yet_complete():
    t, r = crash_case("abort", signal.SIGABRT, pending=3)
    meta = t["devtrace"]
    assert len(kernels(t)) == 12, len(kernels(t))
    assert meta["lost"] == {"device_pending": 3}, meta["lost"]
    assert "lost (device work not read back when the program died): 3" in r.stderr, r.stderr
    assert "nothing dropped" not in r.stderr, r.stderr


@case
def sigkill_keeps_what_was_shipped_by_age_and_says_events_are_missing():
    t, r = crash_case("kill", signal.SIGKILL, linger_ms=400)
    meta = t["devtrace"]
    assert len(kernels(t)) == 12, len(kernels(t))  # the last kernel ended 400 ms before the kill
    assert meta["events_missing"] == 1 and any("ended without its final flush" in n for n in meta["notes"]), meta
    assert "events are missing" in r.stderr and "nothing dropped" not in r.stderr, r.stderr


@case
def underscore_exit_right_after_the_kernels_keeps_every_kernel():
    # _exit runs no atexit handler: the collector's hook on _exit ships the rest first (it used
    # to lose the last 100 ms: every kernel of a program this short).
    if args.sanitized:
        raise Skipped("a sanitizer's runtime in the program defines _exit itself (its interceptor): the "
                      "program's calls bind to it directly, with no slot for devtrace's hook")
    t, r = crash_case("_exit", 0, n=3, pause_ms=0)
    assert len(kernels(t)) == 3 and t["devtrace"]["counts"]["kernel"] == 3, len(kernels(t))
    assert t["devtrace"]["events_missing"] == 0, t["devtrace"]["notes"]
    check_every_logged_kernel(t, kernel_lines(r.stdout))


@case
def multiprocessing_fork_and_forkserver_workers_lose_nothing():
    # Workers of Python multiprocessing end with os._exit; each ran under 100 ms of kernels and
    # used to lose them all ("traced, 0 events").
    python = python_with_pyopencl()
    if not python or args.sanitized:
        raise Skipped("a sanitized libdevtrace cannot load into an uninstrumented Python" if python else
                      "no interpreter imports pyopencl")
    print("     (workers run by %s)" % python)
    for method in ("fork", "forkserver"):
        path = out("mp_%s.json" % method)
        r = record(["-q", "-o", path], [python, os.path.join(HERE, "rr_mp.py"), method, "2", "3"], timeout=180)
        assert r.returncode == 0, (method, r.returncode, r.stderr)
        logged = sorted(l for l in r.stdout.splitlines() if l.startswith("worker "))
        assert logged == ["worker 0: 3 kernels", "worker 1: 4 kernels"], (method, r.stdout)
        t = tc.load(path)
        meta = t["devtrace"]
        workers = [p for p in meta["processes"] if p["events"] > 0]
        assert len(workers) == 2 and all(p["ended"] == 1 for p in workers), (method, meta["processes"])
        assert meta["counts"]["kernel"] == 7 and meta["events_missing"] == 0, (method, meta["counts"], meta["notes"])
        by_pid = {}
        for k in kernels(t):
            by_pid[k["pid"]] = by_pid.get(k["pid"], 0) + 1
        assert sorted(by_pid.values()) == [3, 4], (method, by_pid)


def group_interrupt(path, second_to_program_ms=None):
    """devtrace record in a session of its own; 1 s after the program is ready, SIGINT to the
    whole group (a terminal's Ctrl-C: the recorder forwards its own copy too), and with
    second_to_program_ms another SIGINT to the program that long after. Returns the exit
    status, stdout, stderr and when the group's SIGINT was sent (CLOCK_REALTIME ns, the
    program's log's clock)."""
    p = subprocess.Popen([args.devtrace, "record", "-q", "-o", path, "--",
                          *rr("--kernels", "100000", "--pause-ms", "2", "--work", "3000")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        line = b""
        while not line.endswith(b"\n"):  # a byte at a time: communicate() later reads the descriptor
            byte = os.read(p.stdout.fileno(), 1)
            if not byte:
                break
            line += byte
        assert line == b"ready\n", "the program did not get ready: %r" % line
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            program = int(f.read().split()[0])
        time.sleep(1)
        sent_ns = time.time_ns()
        os.killpg(p.pid, signal.SIGINT)
        if second_to_program_ms is not None:
            time.sleep(second_to_program_ms / 1000)
            try:
                os.kill(program, signal.SIGINT)
            except ProcessLookupError:
                pass
        rest, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    return p.returncode, rest.decode(), err.decode(), sent_ns


@case
def sigint_to_the_group_under_load_keeps_every_completed_kernel():
    # The group's SIGINT and the recorder's forwarded copy reach the program at once: the
    # second must not cut the final flush short (it used to kill the program mid-flush: 2 to
    # 16 of the newest kernels missing in 4 runs of 5 beside three busy loops). And the signal
    # may land on any of the program's threads: one of PoCL's, whose work the flush reads back,
    # used to be held in devtrace's handler until its 15 s bound ran out and the program died
    # without its final flush (events_missing=1, in CI and in 2 of ~8 ASan runs). The handler
    # now returns at once and the program runs on while the shipper flushes: recording stops
    # when the flush begins, so what the program launches meanwhile is not in the trace.
    # Every kernel it logged as ended before the signal was sent must be, and every kernel in
    # the trace must be one it logged (or the one it completed and had no time to log).
    with BusyLoops(3):
        for run in range(3):
            path = out("group_sigint_%d.json" % run)
            code, rest, err, sent_ns = group_interrupt(path, second_to_program_ms=None if run == 0 else 5 * run)
            assert code == 130, "run %d: devtrace record exited %d, not 130 (128+SIGINT): %s" % (run, code, err)
            rows = kernel_lines(rest)
            assert len(rows) >= 5, "run %d: the program logged %d kernels in 1 s" % (run, len(rows))
            t = tc.load(path)
            meta = t["devtrace"]
            assert meta["events_missing"] == 0, "run %d: events_missing=%r, notes %s" % (
                run, meta["events_missing"], meta["notes"])
            assert any("killed by SIGINT" in n for n in meta["notes"]), meta["notes"]
            before = [row for row in rows if row[2] <= sent_ns]
            assert len(before) >= 5, "run %d: %d of %d logged kernels ended before the signal" % (run, len(before),
                                                                                                  len(rows))
            kept = sorted((tc.abs_ns(t, k["ts"]), tc.abs_ns(t, k["ts"] + k["dur"])) for k in kernels(t))
            for i, b, e in before:
                assert any(b <= kb + 1 and ke <= e + 1 for kb, ke in kept), \
                    "run %d: kernel %d, logged as ended before the signal, is missing from the trace" % (run, i)
            unlogged = [(kb, ke) for kb, ke in kept if not any(b <= kb + 1 and ke <= e + 1 for _, b, e in rows)]
            assert len(unlogged) <= 1 and all(kb >= rows[-1][2] - 1 for kb, _ in unlogged), \
                "run %d: %d kernels in the trace the program never logged: %s" % (run, len(unlogged), unlogged[:3])


@case
def abort_right_after_a_kernel_build_keeps_every_kernel():
    # A library may install its signal handlers over devtrace's during an OpenCL call (PoCL's
    # LLVM does when the platform starts and at builds); devtrace's went back on top only at the
    # next ship (100 ms), so a crash soon after lost everything (0 kernels kept in 4 runs of 8).
    # Here the build's notify callback installs a handler as LLVM's does (it puts back the one it
    # displaced and returns, so abort() ends with the default action) and the program aborts as
    # soon as the build returns: devtrace's handlers must be back on top by then.
    with BusyLoops(3):
        for run in range(2):
            path = out("abort_build_%d.json" % run)
            r = record(["-q", "-o", path], rr("--kernels", "3", "--pause-ms", "0", "--work", "100", "--then",
                                              "build-abort"), env=without_sanitizer_crash_handlers())
            assert r.returncode == 128 + signal.SIGABRT, (run, r.returncode, r.stderr)
            rows = kernel_lines(r.stdout)
            assert len(rows) == 3, r.stdout
            t = tc.load(path)
            meta = t["devtrace"]
            assert any("got SIGABRT: what it had captured was shipped" in n for n in meta["notes"]), (run, meta["notes"])
            assert meta["counts"]["kernel"] == 3 and meta["events_missing"] == 0, (run, meta["counts"], meta["notes"])
            check_every_logged_kernel(t, rows)
            builds = [e for e in tc.complete_events(t, "privateuse1_runtime") if e["name"] == "clBuildProgram"]
            assert len(builds) == 2, "both builds recorded, the second right before the abort: %d" % len(builds)


# ---------------------------------------------------------------------------- capture windows
def window_of(trace):
    start, stop = trace["devtrace"]["window"]
    return start, stop


def check_kernels_against_window(trace, rows, all_counted=True):
    """Every kernel kept lies wholly in the window; a kernel the program saw begin and end
    inside it is kept, one it saw wholly outside is not; kept + out_of_window = all (when
    all_counted: a trace of the whole run, not one window of several)."""
    start, stop = window_of(trace)
    kept = sorted(tc.abs_ns(trace, k["ts"]) for k in kernels(trace))
    for k in kernels(trace):
        b = tc.abs_ns(trace, k["ts"])
        e = tc.abs_ns(trace, k["ts"] + k["dur"])
        assert start <= b + 1 and e <= stop + 1, "kernel [%d, %d] not wholly in the window [%d, %d]" % (b, e, start, stop)
    inside = [r for r in rows if r[1] >= start and r[2] <= stop]
    outside = [r for r in rows if r[2] < start or r[1] > stop]
    for _, b, e in inside:
        assert any(b <= t <= e for t in kept), "the kernel run in [%d, %d], inside the window, is missing" % (b, e)
    for _, b, e in outside:
        assert not any(b <= t <= e for t in kept), "the kernel run in [%d, %d], outside the window, was kept" % (b, e)
    assert len(inside) <= len(kept) <= len(rows) - len(outside), (len(inside), len(kept), len(outside))
    meta = trace["devtrace"]
    if all_counted:
        assert meta["counts"]["kernel"] + meta["out_of_window"]["kernel"] == len(rows), (meta["counts"], meta["out_of_window"])
    return len(kept)


@case
def delay_and_duration_place_the_window_and_keep_every_kernel_inside():
    path = out("delay.json")
    launched = time.time_ns()
    r = record(["-o", path, "--delay", "1", "--duration", "0.8"], rr("--kernels", "30", "--pause-ms", "100", "--work", "2000"))
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    start, stop = window_of(t)
    assert stop - start == 800000000, (start, stop)  # exactly --duration
    assert launched + 1000000000 <= start <= launched + 1500000000, (start - launched)  # --delay after the start
    rows = kernel_lines(r.stdout)
    assert len(rows) == 30, len(rows)
    kept = check_kernels_against_window(t, rows)
    assert kept >= 2, kept  # 0.8 s of a kernel every 100 ms or so (more on a loaded machine)


@case
def duration_alone_captures_the_first_seconds():
    path = out("duration.json")
    r = record(["-o", path, "--duration", "0.5"], rr("--kernels", "12", "--pause-ms", "100", "--work", "2000"))
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    start, stop = window_of(t)
    assert stop - start == 500000000, (start, stop)
    check_kernels_against_window(t, kernel_lines(r.stdout))
    assert t["devtrace"]["out_of_window"]["kernel"] > 0, t["devtrace"]["out_of_window"]


@case
def capture_op_keeps_exactly_the_chosen_iterations():
    path = out("capture_op.json")
    r = record(["-o", path, "--capture-op", "step", "--skip", "2", "--count", "3"],
               rr("--kernels", "8", "--pause-ms", "20", "--annotate", "step"))
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    ops = [e for e in tc.complete_events(t, "cpu_op")]
    assert [(e["name"], e["args"]["External id"]) for e in ops] == [("step", 2), ("step", 3), ("step", 4)], ops
    start, stop = window_of(t)
    assert tc.abs_ns(t, ops[0]["ts"]) - start in (0, 1) and stop - tc.abs_ns(t, ops[-1]["ts"] + ops[-1]["dur"]) in (-1, 0, 1)
    meta = t["devtrace"]
    assert meta["counts"]["kernel"] == 3 and meta["out_of_window"]["kernel"] == 5, (meta["counts"], meta["out_of_window"])
    assert meta["out_of_window"]["cpu_op"] == 5, meta["out_of_window"]
    rows = kernel_lines(r.stdout)
    for k in kernels(t):  # the kernels of iterations 2, 3 and 4
        b = tc.abs_ns(t, k["ts"])
        assert any(rows[i][1] <= b <= rows[i][2] for i in (2, 3, 4)), b


@case
def capture_op_that_never_runs_gives_an_empty_window_and_says_so():
    path = out("capture_op_none.json")
    r = record(["-o", path, "--capture-op", "nosuchop"], rr("--kernels", "2", "--pause-ms", "0", "--annotate", "step"))
    assert r.returncode == 0, r.stderr
    t = tc.load(path)
    assert t["devtrace"]["counts"]["kernel"] == 0 and t["devtrace"]["out_of_window"]["kernel"] == 2
    assert any("never opened: 'nosuchop' began 0 times" in n for n in t["devtrace"]["notes"]), t["devtrace"]["notes"]


@case
def bad_capture_options_are_refused_before_the_program_runs():
    for options, says in ((["--delay", "-1"], "--delay takes seconds"), (["--duration", "0"], "--duration 0"),
                          (["--skip", "2"], "give --capture-op"), (["--capture-op", "x", "--count", "0"], "--count takes"),
                          (["--capture-op", "x", "--delay", "1"], "cannot be combined")):
        r = record(options, rr("--kernels", "1"))
        assert r.returncode == 2 and says in r.stderr and "ready" not in r.stdout, (options, r.returncode, r.stderr)


# ---------------------------------------------------------------------------- on demand
def start_on_demand(options, program):
    p = subprocess.Popen([args.devtrace, "record", *options, "--", *program], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = b""
    while not line.endswith(b"\n"):  # a byte at a time: communicate() later reads the descriptor, not a buffer
        byte = os.read(p.stdout.fileno(), 1)
        if not byte:
            break
        line += byte
    assert line == b"ready\n", "the program did not get ready: %r" % line
    return p


def capture(pid, *options, timeout=60):
    return subprocess.run([args.devtrace, "capture", str(pid), *options], capture_output=True, text=True,
                          timeout=timeout)


def control_socket(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        for item in f.read().split(b"\0"):
            if item.startswith(b"DEVTRACE_CONTROL_SOCKET="):
                return item.split(b"=", 1)[1].decode()
    raise AssertionError("no $DEVTRACE_CONTROL_SOCKET in process %d" % pid)


def program_pid(recorder):
    with open("/proc/%d/task/%d/children" % (recorder.pid, recorder.pid)) as f:
        return int(f.read().split()[0])


@case
def on_demand_captures_two_windows_each_its_own_trace():
    pattern = os.path.join(args.out, "ondemand-%w.json")
    for w in ("0", "1"):
        out("ondemand-%s.json" % w)
    mine = os.path.abspath(out("ondemand-mine.json"))
    p = start_on_demand(["-o", pattern, "--on-demand"], rr("--kernels", "40", "--pause-ms", "100", "--work", "2000"))
    try:
        pid = program_pid(p)
        time.sleep(0.5)
        first = capture(pid, "--duration", "0.6")
        assert first.returncode == 0 and first.stdout == "trace: %s\n" % pattern.replace("%w", "0"), (first.stdout, first.stderr)
        second = capture(p.pid, "--duration", "0.4", "-o", mine)  # the recorder's pid works too
        assert second.returncode == 0 and second.stdout == "trace: %s\n" % mine, (second.stdout, second.stderr)
        rest, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    rows = kernel_lines(rest)
    assert len(rows) == 40, len(rows)
    for path, length in ((pattern.replace("%w", "0"), 600000000), (mine, 400000000)):
        t = tc.load(path)
        start, stop = window_of(t)
        assert stop - start == length, (path, stop - start)
        kept = check_kernels_against_window(t, rows, all_counted=False)
        assert kept >= 1, (path, kept)
        assert t["devtrace"]["out_of_window"]["kernel"] > 0  # the kernels before the window, counted
    assert not os.path.exists(pattern.replace("%w", "1")), "the second window went to its -o"
    assert "2 capture windows, 2 traces written" in err, err


@case
def on_demand_refuses_bad_requests_and_the_program_runs_on():
    import socket
    p = start_on_demand(["-q", "-o", os.path.join(args.out, "refuse-%w.json"), "--on-demand"],
                        rr("--kernels", "25", "--pause-ms", "100", "--work", "2000"))
    try:
        pid = program_pid(p)
        path = control_socket(pid)
        assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o700", "the control socket's directory is private"
        for request in (b"hello\n", b"capture 0 -\n", b"capture 5 relative.json\n", b"\xff" * 5000):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.settimeout(10)
            c.connect(path)
            c.sendall(request)
            answer = c.recv(4096).decode()
            c.close()
            assert answer.startswith("error: "), (request[:20], answer)
        opened = subprocess.Popen([args.devtrace, "capture", str(pid), "--duration", "1"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        time.sleep(0.4)
        busy = capture(pid, "--duration", "1")
        assert busy.returncode == 1 and "a capture window is open" in busy.stderr, busy.stderr
        o, e = opened.communicate(timeout=30)
        assert opened.returncode == 0 and o.startswith("trace: "), (o, e)
        rest, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0 and len(kernel_lines(rest)) == 25, (p.returncode, err)


@case
def capture_of_an_untraced_process_says_so():
    r = capture(os.getpid())
    assert r.returncode == 1 and "is not traced by 'devtrace record --on-demand'" in r.stderr, r.stderr
    r = capture(4194303 + 1)  # above any pid
    assert r.returncode == 1 and "no such process" in r.stderr, r.stderr


@case
def on_demand_needs_percent_w_and_nothing_captured_says_so():
    r = record(["--on-demand", "-o", os.path.join(args.out, "x.json")], rr("--kernels", "1"))
    assert r.returncode == 2 and "put %w" in r.stderr and "ready" not in r.stdout, r.stderr
    r = record(["-o", os.path.join(args.out, "x-%w.json")], rr("--kernels", "1"))
    assert r.returncode == 2 and "needs --on-demand" in r.stderr, r.stderr
    r = record(["--on-demand", "-o", os.path.join(args.out, "never-%w.json")], rr("--kernels", "1"))
    assert r.returncode == 0 and "no capture window was opened" in r.stderr, r.stderr


if failures:
    print("%d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
print("all passed")
