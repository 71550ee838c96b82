#!/usr/bin/env python3
"""test_report_shapes.py DEVTRACE: devtrace report and diff on traces in the shapes real Kineto
exports take, written here, with every expected figure computed here from the JSON written,
by a separate, brute-force computation (never from devtrace's own output).

Shapes: an old export whose kernels' "External id" is their correlation (the runtime call
around each launch, not the External id, says which op launched it); ops nested several deep
with launches at every depth, on two threads, written out of time order; launches outside any
op, kernels without a correlation or whose correlation names no runtime call.

The checker (link_like_hta) follows Holistic Trace Analysis's rule: a device event's
correlation names a runtime call; the cpu_ops on that call's thread (pid, tid) that contain it
are its op stack; the innermost (the latest start, then the shortest, then the later in the
file) owns the event's time (self), and each distinct name on the stack counts it once (total).
"""
import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hta_check import DEVICE_CATS, is_runtime, link_like_hta, ns  # noqa: E402

DEVTRACE = sys.argv[1]
print(f"interpreter: {sys.executable}")
failures = []
tmp = tempfile.mkdtemp(prefix="devtrace-shapes-")

def case(fn):
    try:
        fn()
        print(f"ok   {fn.__name__}")
    except Exception as e:  # an assertion, or output without the expected keys
        failures.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
    return fn


def run(*args):
    return subprocess.run([DEVTRACE, *args], capture_output=True, text=True, timeout=120)


def out(name):
    return os.path.join(tmp, name)


def write(name, trace):
    path = out(name)
    with open(path, "w") as f:
        json.dump(trace, f, indent=1)
    return path


def us(v):
    sign = "-" if v < 0 else ""
    v = abs(v)
    return f"{sign}{v // 1000}.{v % 1000:03d}"


def report_json(path, *extra):
    r = run("report", "--format", "json", *extra, path)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return json.loads(r.stdout)


def check_ops_against_checker(path, trace):
    want = link_like_hta(trace)
    j = report_json(path)
    got_self = {o["name"]: round(o["device_self_us"] * 1000) for o in j["ops"]}
    assert got_self == want["self"], f"device self time per op:\n got {got_self}\nwant {want['self']}"
    got_total = {o["name"]: round(o["device_total_us"] * 1000) for o in j["ops"]}
    assert got_total == want["total"], f"device total time per op:\n got {got_total}\nwant {want['total']}"
    totals = [o["device_total_us"] for o in j["ops"]]
    assert totals == sorted(totals, reverse=True), f"ops not sorted by device_total_us: {totals}"
    got_cpu = {o["name"]: (o["count"], round(o["cpu_total_us"] * 1000)) for o in j["ops"]}
    assert got_cpu == {k: (want["count"][k], want["cpu"][k]) for k in want["cpu"]}, got_cpu
    link = j["about"]["link"]
    assert link["rule"] == "correlation", link
    assert link["linked"] == want["linked"], (link, want)
    for cause, n in want["unlinked"].items():
        assert link[cause] == n, (cause, link, want["unlinked"])
    assert (link["external_id_checked"], link["external_id_disagree"]) == (want["checked"], want["disagree"]), \
        (link, want)
    return j, want


# ---- the shapes ----

def ev(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def old_export():
    """An older export (AlexNet-like): kernels' and runtime calls' External id is the correlation,
    which happens to be the External id of other ops (aten::to, aten::view); the runtime call
    around each launch lies inside aten::copy_ or aten::conv2d."""
    T = 1000
    evs = [
        ev("cpu_op", "aten::to", 10, 10, T + 0, 5, **{"External id": 101}),
        ev("cpu_op", "aten::view", 10, 10, T + 10, 2, **{"External id": 102}),
        ev("cpu_op", "aten::copy_", 10, 10, T + 20, 100, **{"External id": 103}),
        ev("cpu_op", "aten::conv2d", 10, 10, T + 130, 200, **{"External id": 104}),
        ev("cpu_op", "aten::convolution", 10, 10, T + 140, 180, **{"External id": 105}),
    ]
    corr = [101, 102, 103, 104, 105]  # the correlations: other ops' External ids but the last's
    where = [30, 60, 150, 200, 250]   # the runtime calls' starts: copy_, copy_, convolution x3
    names = ["cudaMemcpyAsync", "cudaMemcpyAsync", "cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernel"]
    for k, (c, w, n) in enumerate(zip(corr, where, names)):
        evs.append(ev("cuda_runtime", n, 10, 10, T + w, 4, correlation=c, **{"External id": c}))
        cat = "gpu_memcpy" if n == "cudaMemcpyAsync" else "kernel"
        dname = "Memcpy HtoD (Pageable -> Device)" if cat == "gpu_memcpy" else f"conv_kernel_{k}"
        evs.append(ev(cat, dname, 0, 7, T + w + 10, 7 + k * 3.5, correlation=c, device=0, stream=7,
                      **{"External id": c}))
    return {"traceEvents": evs}


def nested_random(seed):
    """Ops nested up to five deep on two threads (one name reused inside itself), launches at
    every depth and between ops, some kernels without a correlation or with one no runtime call
    has; the events shuffled."""
    rnd = random.Random(seed)
    evs = []
    corr = [1000]
    names = ["aten::linear", "aten::addmm", "aten::add", "aten::relu", "aten::to", "aten::copy_", "aten::mm"]

    def launch(pid, tid, t):
        c = corr[0]
        corr[0] += 1
        kind = rnd.choice(["kernel", "kernel", "gpu_memcpy", "gpu_memset"])
        evs.append(ev("cuda_runtime", "cudaLaunchKernel" if kind == "kernel" else "cudaMemcpyAsync", pid, tid, t,
                      1.5, correlation=c))
        dur = rnd.randint(1, 40000) / 1000
        evs.append(ev(kind, f"k{rnd.randint(0, 5)}" if kind == "kernel" else "Memcpy DtoD (Device -> Device)", 0,
                      7 + tid % 2, t + 3, dur, correlation=c, device=0, stream=7 + tid % 2,
                      **({"External id": rnd.choice([1, 2, 3])} if rnd.random() < 0.3 else {})))

    def op(pid, tid, start, end, depth):
        name = rnd.choice(names)
        evs.append(ev("cpu_op", name, pid, tid, start, end - start, **{"External id": len(evs) + 1}))
        t = start + 1
        while t + 4 < end:
            if depth < 5 and rnd.random() < 0.4 and end - t > 12:
                length = rnd.randint(6, max(6, (end - t) // 2))
                op(pid, tid, t, t + length, depth + 1)
                t += length + 1
            else:
                if rnd.random() < 0.7:
                    launch(pid, tid, t)
                t += 3
    for tid in (1, 2):
        t = 0
        for _ in range(6):
            op(7, tid, t, t + 300, 0)
            t += 310
            launch(7, tid, t - 8)  # between ops: outside every op
    for k in range(3):  # no correlation; a correlation no runtime call has
        evs.append(ev("kernel", "k_orphan", 0, 7, 5000 + k * 10, 2.5, device=0, stream=7))
        evs.append(ev("kernel", "k_lost", 0, 7, 5005 + k * 10, 1.25, correlation=99000 + k, device=0, stream=7))
    rnd.shuffle(evs)
    return {"traceEvents": evs}


@case
def old_export_links_through_the_runtime_call_not_the_external_id():
    trace = old_export()
    path = write("old_export.json", trace)
    j, want = check_ops_against_checker(path, trace)
    assert want["self"]["aten::copy_"] == 7000 + 10500 and want["self"]["aten::to"] == 0, want
    assert want["self"]["aten::convolution"] == 14000 + 17500 + 21000 and want["disagree"] == 4, want


@case
def nested_ops_launches_at_every_depth_two_threads_shuffled():
    for seed in (1, 2, 3):
        trace = nested_random(seed)
        path = write(f"nested{seed}.json", trace)
        _, want = check_ops_against_checker(path, trace)
        assert want["linked"] > 20 and all(want["unlinked"].values()), want


def events_text(events):
    """The trace's text with one event per line, and where each event's '{' is."""
    text, offsets = '{"traceEvents": [\n', []
    for i, e in enumerate(events):
        offsets.append(len(text.encode()))
        text += json.dumps(e) + (",\n" if i + 1 < len(events) else "\n")
    return text + "]}\n", offsets


@case
def not_a_trace_is_an_error_with_the_offset():
    execution_trace = {"schema": "1.0.3-chakra.0.0.4", "pid": 7, "time": "2024-01-01 00:00:00",
                       "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1,
                                  "inputs": {"values": [], "shapes": [], "types": []}}]}
    for name, text in (("empty_object.json", "{}"), ("execution_trace.json", json.dumps(execution_trace)),
                       ("members_only.json", '{"schemaVersion": 1, "deviceProperties": []}\n')):
        with open(out(name), "w") as f:
            f.write(text)
        closing = len(text.rstrip()) - 1  # the top-level object's '}'
        for strict in ([], ["--strict"]):
            r = run("report", *strict, out(name))
            assert r.returncode == 1 and r.stdout == "", (name, r.returncode, r.stdout[:200])
            lines = r.stderr.splitlines()
            assert len(lines) == 1 and f"{name}: byte {closing}: the top-level object ends without traceEvents" \
                in lines[0], (name, r.stderr)


BAD_FIELDS = {  # cause: how the event's ts/dur are spoiled
    "no_ph": lambda e: e.pop("ph"),
    "no_ts": lambda e: e.pop("ts"),
    "ts_not_number": lambda e: e.update(ts="17"),
    "no_dur": lambda e: e.pop("dur"),
    "dur_not_number": lambda e: e.update(dur="5.0"),
    "negative_dur": lambda e: e.update(dur=-3.5),
    "dur_out_of_range": lambda e: e.update(dur=1e300),
    "ts_out_of_range": lambda e: e.update(ts=-1e300),
}
BAD_TEXT = {"no_ph": "without ph", "no_ts": "without ts", "ts_not_number": "whose ts is not a number",
            "ts_out_of_range": "whose ts is out of range (beyond 2^61 ns)", "no_dur": "without dur",
            "dur_not_number": "whose dur is not a number", "negative_dur": "with a negative dur",
            "dur_out_of_range": "whose dur is out of range (beyond 2^61 ns)"}
ORDER = ["no_ph", "no_ts", "ts_not_number", "ts_out_of_range", "no_dur", "dur_not_number", "negative_dur",
         "dur_out_of_range"]


@case
def events_without_a_usable_ts_or_dur_are_counted_and_strict_fails():
    rnd = random.Random(7)
    events, spoiled = [], []
    for i in range(200):
        e = ev("kernel", f"k{i % 3}", 0, 7, 1000 + i * 10, rnd.randint(1, 9000) / 1000, device=0, stream=7)
        cause = rnd.choice(ORDER) if rnd.random() < 0.25 else None
        if cause:
            BAD_FIELDS[cause](e)
        events.append(e)
        spoiled.append(cause)
    text, offsets = events_text(events)
    path = out("spoiled.json")
    with open(path, "w") as f:
        f.write(text)
    counts = {c: spoiled.count(c) for c in ORDER if c in spoiled}
    first = {c: offsets[spoiled.index(c)] for c in counts}
    parts = [f"{counts[c]} {BAD_TEXT[c]} (first at byte {first[c]})" for c in ORDER if c in counts]
    line = f"skipped {sum(counts.values())} events: " + ", ".join(parts)
    totals = {}
    for e, c in zip(events, spoiled):
        if not c:
            totals[e["name"]] = totals.get(e["name"], 0) + ns(e["dur"])
    r = run("report", "--format", "json", path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"devtrace report: {path}: {line}; left out of every table (--strict makes this an error)\n", \
        (r.stderr, line)
    j = json.loads(r.stdout)
    assert {k["name"]: round(k["total_us"] * 1000) for k in j["kernels"]} == totals, (j["kernels"], totals)
    assert j["about"]["skipped"] == dict({"events": sum(counts.values())}, **{c: counts.get(c, 0) for c in ORDER}), \
        j["about"]["skipped"]
    r = run("report", path)
    assert f"  {line}\n" in r.stdout, r.stdout[:1500]
    for cmd in (["report", "--strict", path], ["diff", "--strict", path, path]):
        r = run(*cmd)
        assert r.returncode == 1 and r.stdout == "", (cmd, r.returncode, r.stdout[:300])
        assert r.stderr.startswith(f"devtrace {cmd[0]}: {path}: {line}; no table under --strict"), r.stderr


# Kineto's ActivityType names (libkineto include/ActivityType.h) and what docs/report.md says
# devtrace makes of each; restated here so that a change on either side shows.
KIND_OF_CAT = {
    "cpu_op": "cpu_op", "user_annotation": "user_annotation", "gpu_user_annotation": "gpu_user_annotation",
    "gpu_memcpy": "memcpy", "gpu_memset": "memset", "kernel": "kernel", "external_correlation": "other",
    "cuda_runtime": "runtime", "cuda_driver": "runtime", "cpu_instant_event": "other",
    "python_function": "python_function", "overhead": "other", "mtia_runtime": "runtime",
    "mtia_ccp_events": "kernel", "mtia_insight": "other", "cuda_sync": "sync", "cuda_event": "sync",
    "mtia_counters": "other", "glow_runtime": "runtime", "cuda_profiler_range": "other", "hpu_op": "runtime",
    "xpu_runtime": "runtime", "xpu_driver": "runtime", "collective_comm": "other",
    "privateuse1_runtime": "runtime", "privateuse1_driver": "runtime", "xpu_scope_profiler": "other",
    "xpu_sync": "sync", "hardware_counters": "other",
}


def mtia_trace():
    """An MTIA run: mtia_runtime launches inside ops, mtia_ccp_events on the device (one of them
    a collective), copies without bytes, a gpu_user_annotation on a stream, and one complete
    event of every other ActivityType name."""
    rnd = random.Random(11)
    evs = [ev("user_annotation", "ProfilerStep#3", 300, 300, 0, 5000)]
    corr = 1
    for i in range(40):
        t = 10 + i * 120
        evs.append(ev("cpu_op", rnd.choice(["aten::mm", "aten::add", "c10d::allreduce_"]), 300, 300, t, 100,
                      **{"External id": 500 + i}))
        for _ in range(rnd.randint(1, 3)):
            t += 20
            evs.append(ev("mtia_runtime", "launchKernel", 300, 300, t, 4, correlation=corr))
            cat = rnd.choice(["mtia_ccp_events", "mtia_ccp_events", "gpu_memcpy"])
            name = rnd.choice(["mtia_mm_kernel", "hccl::all_reduce", "mtia_add"]) if cat == "mtia_ccp_events" \
                else "Memcpy DtoD (Device -> Device)"
            evs.append(ev(cat, name, 2, 0, t + 6, rnd.randint(100, 90000) / 1000, correlation=corr,
                          **{"External id": 500 + i}))
            corr += 1
    evs.append(ev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 2, 0, 6000, 12.5, bytes=4096))
    evs.append(ev("gpu_user_annotation", "ProfilerStep#3", 2, 0, 0, 5000, device=2, stream=0))
    for cat in KIND_OF_CAT:
        evs.append(ev(cat, f"one {cat}", 300, 301, 7000, 1.5))
    evs.append({"ph": "C", "cat": "mtia_counters", "name": "hbm", "pid": 2, "ts": 10, "args": {"bw": 5}})
    rnd.shuffle(evs)
    return {"traceEvents": evs}


@case
def every_kineto_category_counts_mtia_kernels_and_copies_without_bytes():
    trace = mtia_trace()
    path = write("mtia.json", trace)
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    kinds = {}
    for e in xs:
        kinds[KIND_OF_CAT[e["cat"]]] = kinds.get(KIND_OF_CAT[e["cat"]], 0) + 1
    j = report_json(path)
    kernels = {}
    for e in xs:
        if KIND_OF_CAT[e["cat"]] == "kernel":
            kernels.setdefault(e["name"], []).append(ns(e["dur"]))
    got = {k["name"]: (k["count"], round(k["total_us"] * 1000)) for k in j["kernels"]}
    assert got == {n: (len(d), sum(d)) for n, d in kernels.items()}, (got, kernels)
    assert round(j["about"]["kernel_us"] * 1000) == sum(sum(d) for d in kernels.values())
    for kind, n in j["about"]["complete_events"].items():
        assert kinds.get(kind, 0) == n, (kind, n, kinds)
    _, want = check_ops_against_checker(path, trace)
    assert want["self"]["c10d::allreduce_"] > 0, want
    dtod = [e for e in xs if e["name"] == "Memcpy DtoD (Device -> Device)"]
    rows = list(csv.reader(io.StringIO(run("report", "--format", "csv", path).stdout)))
    assert ["Memcpy DtoD (Device -> Device)", str(len(dtod)), "", us(sum(ns(e["dur"]) for e in dtod)), ""] in rows, \
        "a copy without bytes: empty bytes and bandwidth"
    assert ["Memcpy HtoD (Pageable -> Device)", "1", "4096", "12.500", "0.328"] in rows, rows
    ann = {(a["name"], a["category"]): (a["count"], round(a["total_us"] * 1000)) for a in j["annotations"]}
    want_ann = {}
    for e in xs:
        if e["cat"] in ("user_annotation", "gpu_user_annotation"):
            c, t = want_ann.get((e["name"], e["cat"]), (0, 0))
            want_ann[(e["name"], e["cat"])] = (c + 1, t + ns(e["dur"]))
    assert ann == want_ann, (ann, want_ann)


@case
def two_files_of_one_rank_are_refused_naming_both():
    d = out("one_rank")
    os.mkdir(d)
    trace = old_export()
    for name, rank in (("a.json", 3), ("b.json", 5), ("c.json", 3)):
        write(os.path.join("one_rank", name), dict(trace, distributedInfo={"rank": rank, "world_size": 8}))
    for extra in ([], ["--format", "csv", "--output", out("one_rank_out")]):
        r = run("report", *extra, d)
        assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout[:300])
        assert r.stderr == f"devtrace report: {d}/a.json and {d}/c.json are both rank 3 (their distributedInfo.rank); " \
                           "give one trace per rank, or compare the two with 'devtrace diff'\n", r.stderr
        assert not os.path.exists(out("one_rank_out")), "nothing is written"
    # without a rank, a trace's place in the list is its rank: place 1 against an explicit rank 1
    no_rank = write("no_rank.json", trace)
    rank1 = write("rank1.json", dict(trace, distributedInfo={"rank": 1, "world_size": 2}))
    r = run("report", rank1, no_rank)
    assert r.returncode == 1 and f"{rank1} and {no_rank} are both rank 1 (a trace without" in r.stderr, r.stderr
    r = run("report", "--format", "csv", "--output", out("two_ranks"), no_rank, rank1)
    assert r.returncode == 0, r.stderr  # place 0 and rank 1: distinct
    assert sorted(os.listdir(out("two_ranks"))) == ["kernels_across_ranks.csv", "ops_across_ranks.csv", "rank0",
                                                    "rank1", "stragglers.csv"], os.listdir(out("two_ranks"))


SVG = "{http://www.w3.org/2000/svg}"


@case
def svg_draws_gpu_user_annotations_on_their_stream():
    """Kineto writes a gpu_user_annotation with the device as pid and the stream as tid (no
    device/stream args); its kernels carry args.device/stream."""
    trace = {"traceEvents": [
        ev("user_annotation", "ProfilerStep#1", 4242, 4242, 0, 100),
        ev("cpu_op", "aten::mm", 4242, 4242, 5, 20, **{"External id": 1}),
        ev("cuda_runtime", "cudaLaunchKernel", 4242, 4242, 10, 5, correlation=9),
        ev("kernel", "gemm", 2, 0, 30, 40, correlation=9, device=2, stream=0),
        ev("gpu_user_annotation", "ProfilerStep#1", 2, 0, 29.999, 40.002),
        ev("cuda_sync", "Stream Sync", 2, 0, 75, 5, device=2, stream=0),
    ]}
    path = write("gpu_annotation.json", trace)
    r = run("report", "--svg", out("gpu_annotation.svg"), path)
    assert r.returncode == 0, r.stderr
    root = ET.parse(out("gpu_annotation.svg")).getroot()
    lanes = [t.text for t in root.iter(SVG + "text") if t.get("class") == "lane"]
    assert lanes == ["device 2 stream 0", "pid 4242 thread 4242"], lanes
    groups = [(g.get("class"), sorted(r.get("class") for r in g.iter(SVG + "rect"))) for g in root.iter(SVG + "g")
              if g.get("class", "").endswith("-lane")]
    assert groups == [("device-lane", ["gpu_user_annotation", "kernel", "sync"]),
                      ("host-lane", ["cpu_op", "runtime", "user_annotation"])], groups


def copies_run(extra_copies, steps=4, seed=5):
    """A training loop of `steps` ProfilerSteps (and a warm-up before them): per step, ops that
    launch kernels, and cudaMemcpyAsync DtoD copies, `extra_copies` more of them in each step of
    the test run. A kernel only the control has, a copy kind only the test has."""
    rnd = random.Random(seed)
    evs, corr, t = [], [1], 0

    def launch(tid_t, cat, name, dur, api, **args):
        c = corr[0]
        corr[0] += 1
        evs.append(ev("cuda_runtime", api, 1, 1, tid_t, 2, correlation=c))
        evs.append(ev(cat, name, 0, 7, tid_t + 5, dur, correlation=c, device=0, stream=7, **args))

    for step in range(-1, steps):  # step -1: the warm-up, outside every ProfilerStep
        start = t
        if step >= 0:
            evs.append(ev("user_annotation", f"ProfilerStep#{step}", 1, 1, start, 0))  # its dur set below
        t += 1
        for k in range(3):
            evs.append(ev("cpu_op", "aten::linear", 1, 1, t, 40))
            evs.append(ev("cpu_op", "aten::addmm", 1, 1, t + 2, 30))
            launch(t + 5, "kernel", "sm90_gemm", 10 + k, "cudaLaunchKernel")
            t += 41
        for k in range(18 // 6 + extra_copies):
            evs.append(ev("cpu_op", "aten::copy_", 1, 1, t, 8))
            launch(t + 1, "gpu_memcpy", "Memcpy DtoD (Device -> Device)", 0.6, "cudaMemcpyAsync", bytes=1 << 20)
            t += 9
        if extra_copies:
            launch(t, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1.5, "cudaMemcpyAsync", bytes=4096)
        else:
            launch(t, "kernel", "old_kernel", 3.25, "cudaLaunchKernel")
        t += 10
        if step >= 0:
            evs[[i for i, e in enumerate(evs) if e["name"] == f"ProfilerStep#{step}"][0]]["dur"] = t - start
        evs.append(ev("gpu_user_annotation", f"ProfilerStep#{step}", 0, 7, start + 5, t - start))
        t += 5
    rnd.shuffle(evs)
    return {"traceEvents": evs}


def in_steps(trace):
    """The trace with only what lies inside its ProfilerSteps' span (host events by their start,
    device events by their runtime call's), and the number of steps."""
    steps = [e for e in trace["traceEvents"] if e["cat"] in ("cpu_op", "user_annotation") and
             e["name"].startswith("ProfilerStep#")]
    lo = min(ns(e["ts"]) for e in steps)
    hi = max(ns(e["ts"]) + ns(e["dur"]) for e in steps)
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in trace["traceEvents"] if is_runtime(e["cat"])}
    keep = []
    for e in trace["traceEvents"]:
        at = ns(e["ts"])
        if e["cat"] in DEVICE_CATS + ("gpu_user_annotation",) and e["args"].get("correlation") in launch:
            at = launch[e["args"]["correlation"]]
        if lo <= at <= hi:
            keep.append(e)
    return {"traceEvents": keep}, len({e["name"] for e in steps})


def tables_of(trace):
    """Per table, per name: [count, main ns, extras...] as the diff compares them."""
    t = {"kernel": {}, "memory": {}, "api": {}, "annotation": {}, "op": {}}
    for e in trace["traceEvents"]:
        cat, d = e["cat"], ns(e["dur"])
        table = {"kernel": "kernel", "gpu_memcpy": "memory", "gpu_memset": "memory", "cuda_runtime": "api",
                 "user_annotation": "annotation", "gpu_user_annotation": "annotation"}.get(cat)
        if not table:
            continue
        key = (e["name"], cat) if table == "annotation" else e["name"]
        row = t[table].setdefault(key, [0, 0, 0])
        row[0] += 1
        row[1] += d
        row[2] += e["args"].get("bytes", 0)
    link = link_like_hta(trace)
    for name in link["count"]:
        t["op"][name] = [link["count"][name], link["total"][name], link["self"][name], link["cpu"][name]]
    return t


def div(v, steps):
    return v if steps == 1 else (2 * v + steps) // (2 * steps)


def count_cell(c, steps):
    return str(c) if steps == 1 else f"{(c * 1000 * 2 + steps) // (2 * steps) / 1000:.3f}"


def ratio(b, a):
    return "" if a == 0 else f"{(b * 1000 * 2 + a) // (2 * a) / 1000:.3f}"


def expected_diff(ta, tb, table, sa=1, sb=1):
    rows = []
    for key in set(ta[table]) | set(tb[table]):
        a, b = ta[table].get(key), tb[table].get(key)
        za = a or [0, 0, 0, 0]
        zb = b or [0, 0, 0, 0]
        ma, mb = div(za[1], sa), div(zb[1], sb)
        change = "removed" if a and not b else "added" if b and not a else ""
        name = key[0] if table == "annotation" else key
        row = [name] + ([key[1]] if table == "annotation" else []) + [change, count_cell(za[0], sa),
                                                                      count_cell(zb[0], sb)]
        if table == "memory":
            row += [count_cell(za[2], sa) if a else "", count_cell(zb[2], sb) if b else ""]
        row += [us(ma), us(mb), us(mb - ma), ratio(mb, ma)]
        if table == "op":
            row += [us(div(za[2], sa)), us(div(zb[2], sb)), us(div(za[3], sa)), us(div(zb[3], sb))]
        cpu = abs(div(zb[3], sb) - div(za[3], sa)) if table == "op" else 0
        rows.append(((-abs(mb - ma), -cpu, name, str(key)), row))
    return [r for _, r in sorted(rows)]


@case
def diff_of_a_pair_differing_only_in_copies_whole_and_per_step():
    control, test = copies_run(0), copies_run(5, seed=6)
    pa, pb = write("control.json", control), write("test.json", test)
    ta, tb = tables_of(control), tables_of(test)
    for table in ("memory", "api", "kernel", "op", "annotation"):
        r = run("diff", "--by", table, "--format", "csv", pa, pb)
        assert r.returncode == 0, r.stderr
        got = list(csv.reader(io.StringIO(r.stdout)))[1:]
        assert got == expected_diff(ta, tb, table), (table, got, expected_diff(ta, tb, table))
    # the top changes first, over every table
    r = run("diff", "--format", "json", pa, pb)
    j = json.loads(r.stdout)
    assert list(j)[:6] == ["a", "b", "per_step", "steps_a", "steps_b", "top_changes"], list(j)
    delta_col = {"memory": 8, "annotation": 7}
    order = ("op", "kernel", "memory", "api", "annotation")  # ties: in the order the tables are printed
    every = sorted((-abs(float(row[delta_col.get(table, 6)])), order.index(table), row[0],
                    float(row[delta_col.get(table, 6)])) for table in order for row in expected_diff(ta, tb, table))
    got_top = [(-abs(x["delta_us"]), order.index(x["table"][:-5]), x["name"], x["delta_us"])
               for x in j["top_changes"]]
    assert got_top == every, (got_top[:5], every[:5])
    text = run("diff", pa, pb).stdout
    assert text.index("top_changes") < text.index("op_diff") < text.index("memory_diff"), text[:400]
    # per step: only what lies inside the steps, divided by their number
    (sa_trace, sa), (sb_trace, sb) = in_steps(control), in_steps(test)
    sta, stb = tables_of(sa_trace), tables_of(sb_trace)
    for table in ("memory", "api", "kernel", "op", "annotation"):
        r = run("diff", "--per-step", "--by", table, "--format", "csv", pa, pb)
        assert r.returncode == 0, r.stderr
        got = list(csv.reader(io.StringIO(r.stdout)))[1:]
        assert got == expected_diff(sta, stb, table, sa, sb), (table, got, expected_diff(sta, stb, table, sa, sb))
    r = run("diff", "--per-step", pa, write("no_steps.json", old_export()))
    assert r.returncode == 1 and "no ProfilerStep#N event" in r.stderr and r.stdout == "", r.stderr


def rank_run(rank, compute_us, wait_us, steps=3, seed=0):
    """One rank of a data-parallel run: per ProfilerStep, compute kernels (compute_us in all),
    then an all-reduce that starts when this rank is done computing and lasts until every rank
    arrives (wait_us) plus the transfer; short nccl kernels too (under 1% of a step)."""
    rnd = random.Random(seed + rank)
    evs, t = [], 0.0
    for k in range(steps):
        start = t
        parts = [compute_us * f for f in (0.5, 0.3, 0.2)]
        t += 2
        for i, p in enumerate(parts):
            evs.append(ev("kernel", f"gemm_{i}", 0, 7, t, round(p, 3), device=0, stream=7))
            t += p
        evs.append(ev("kernel", "ncclDevKernel_Broadcast_small", 0, 20, t - 5, 0.25, device=0, stream=20))
        evs.append(ev("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 20, round(t, 3), round(wait_us + 50, 3),
                      device=0, stream=20))
        t += wait_us + 50 + 10
        evs.append(ev("user_annotation", f"ProfilerStep#{k}", 9, 9, round(start, 3), round(t - start, 3)))
        t += rnd.randint(1, 3)
    return {"traceEvents": evs, "distributedInfo": {"rank": rank, "world_size": 3}}


def stragglers_like_hta(traces):
    """Per rank: steps, compute and collective kernel time per step, and how many steps its last
    long collective (>= 1% of its mean step time) started latest from the step's start."""
    rows, starts = [], []
    for tr in traces:
        ks = [e for e in tr["traceEvents"] if e["cat"] == "kernel"]
        steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in tr["traceEvents"]
                       if e["name"].startswith("ProfilerStep#"))
        coll = sorted((ns(e["ts"]), ns(e["dur"])) for e in ks if "nccl" in e["name"])
        compute = sum(ns(e["dur"]) for e in ks if "nccl" not in e["name"])
        mean = (steps[-1][1] - steps[0][0]) // len(steps)
        per = []
        for k, (s0, s1) in enumerate(steps):
            end = steps[k + 1][0] if k + 1 < len(steps) else s1
            long_ = [c for c in coll if s0 <= c[0] < end and c[1] * 100 >= mean]
            per.append(long_[-1][0] - s0 if long_ else -1)
        starts.append(per)
        rows.append([tr["distributedInfo"]["rank"], len(steps), div(compute, len(steps)),
                     div(sum(c[1] for c in coll), len(steps))])
    late = [0] * len(traces)
    for k in range(min(len(p) for p in starts)):
        latest = max(p[k] for p in starts)
        for r, p in enumerate(starts):
            late[r] += latest >= 0 and p[k] == latest
    slowest = max(r[2] for r in rows)
    return [[str(r[0]), str(r[1]), us(r[2]), us(r[3]), str(late[i]), "yes" if r[2] == slowest else ""]
            for i, r in enumerate(rows)]


@case
def stragglers_are_the_slowest_computing_not_the_longest_waiting():
    d = out("straggle")
    os.mkdir(d)
    # rank 1 computes longest: the others wait for it in the all-reduce
    computes = {0: 400.0, 1: 700.0, 2: 450.0}
    traces = []
    for rank, c in computes.items():
        trace = rank_run(rank, c, max(computes.values()) - c)
        traces.append(trace)
        write(os.path.join("straggle", f"rank{rank}.json"), trace)
    want = stragglers_like_hta(traces)
    assert [row[0] for row in want if row[5] == "yes"] == ["1"] and want[1][4] == "3", want
    r = run("report", "--format", "csv", "--output", out("straggle_out"), d)
    assert r.returncode == 0, r.stderr
    got = list(csv.reader(open(out("straggle_out/stragglers.csv"))))
    assert got[0] == ["rank", "steps", "compute_us_per_step", "collective_us_per_step", "late_start_steps",
                      "straggler"], got[0]
    assert got[1:] == want, (got, want)
    # the longest collective time is a waiting rank's, not the straggler's
    coll = {row[0]: float(row[3]) for row in got[1:]}
    assert max(coll, key=coll.get) != "1", coll


print(f"{len(failures)} failed" if failures else "all passed")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
