"""trace_checks.py: shared assertions on a devtrace Chrome trace (standard library only).

Used by the CLI and integration tests. Every check raises AssertionError with a message
that names the event and the rule it broke.
"""
import json

TOP_LEVEL_ORDER = ["schemaVersion", "deviceProperties", "distributedInfo", "devtrace",
                   "displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "traceName"]
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".gz"):
        import gzip
        raw = gzip.decompress(raw)
    trace = json.loads(raw)
    keys = list(trace.keys())
    assert keys == TOP_LEVEL_ORDER, f"top-level keys {keys} != {TOP_LEVEL_ORDER}"
    assert b'"rank": ' in raw, "distributedInfo must write '\"rank\": N' with a space"
    return trace


def complete_events(trace, cat=None):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and (cat is None or e.get("cat") == cat)]


def abs_ns(trace, us):
    """A trace timestamp (us, 3 decimals, relative) back to absolute ns."""
    return trace["baseTimeNanoseconds"] + round(us * 1000)


def check_flows(trace, runtime_cat):
    starts = [e for e in trace["traceEvents"] if e.get("ph") == "s"]
    finishes = [e for e in trace["traceEvents"] if e.get("ph") == "f"]
    s_ids = sorted(e["id"] for e in starts)
    f_ids = sorted(e["id"] for e in finishes)
    assert s_ids == f_ids, f"flow ids differ: only s {set(s_ids) - set(f_ids)}, only f {set(f_ids) - set(s_ids)}"
    assert len(set(s_ids)) == len(s_ids), "a flow id is used twice"
    for e in starts + finishes:
        assert e["cat"] == "ac2g", f"flow {e} has cat {e['cat']}"
    for e in finishes:
        assert e.get("bp") == "e", f"flow end {e} lacks bp=e"
    device = [e for e in complete_events(trace) if e["cat"] in DEVICE_CATS]
    by_corr = {e["args"]["correlation"]: e for e in complete_events(trace, runtime_cat)}
    for d in device:
        c = d["args"]["correlation"]
        assert c in f_ids, f"device event {d['name']} (correlation {c}) has no flow"
        assert c in by_corr, f"device event {d['name']} has no runtime call with correlation {c}"
    return by_corr


def check_window(trace, runtime_cat):
    start, stop = trace["devtrace"]["window"]
    for e in complete_events(trace):
        if e["cat"] not in DEVICE_CATS + (runtime_cat,):
            continue
        b = abs_ns(trace, e["ts"])
        end = b + round(e["dur"] * 1000)
        assert start - 1 <= b and end <= stop + 1, f"{e['cat']} {e['name']} [{b}, {end}] outside window [{start}, {stop}]"


def check_after_launch(trace, runtime_cat):
    by_corr = {e["args"]["correlation"]: e for e in complete_events(trace, runtime_cat)}
    for d in complete_events(trace):
        if d["cat"] not in DEVICE_CATS:
            continue
        launch = by_corr[d["args"]["correlation"]]
        assert d["ts"] >= launch["ts"], f"{d['name']} starts at {d['ts']} before its launch call {launch['name']} at {launch['ts']}"


def device_time_by_op(trace):
    """External id -> total device ns (sum of dur of device events carrying it)."""
    totals = {}
    for e in complete_events(trace):
        if e["cat"] in DEVICE_CATS and "External id" in e["args"]:
            ext = e["args"]["External id"]
            totals[ext] = totals.get(ext, 0) + round(e["dur"] * 1000)
    return totals


def counts(trace, runtime_cat):
    c = {"kernel": 0, "memcpy": 0, "memset": 0, "runtime": 0}
    for e in complete_events(trace):
        cat = e["cat"]
        if cat == "kernel":
            c["kernel"] += 1
        elif cat == "gpu_memcpy":
            c["memcpy"] += 1
        elif cat == "gpu_memset":
            c["memset"] += 1
        elif cat == runtime_cat:
            c["runtime"] += 1
    return c
