"""hta_check.py: the tests' own computation of what `devtrace report` should say about ops, by
Holistic Trace Analysis's rule, written for clarity (brute force), sharing no code with devtrace:
a device event's correlation names a runtime call; the cpu_ops on that call's thread (pid, tid)
that contain it are its op stack; the innermost (the latest start, then the shortest, then the
later in the file) owns the event's time (self), and each distinct name on the stack counts it
once (total)."""

DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events", "Kernel", "Memcpy", "Memset")
OP_CATS = ("cpu_op", "Operator")


def is_runtime(cat):
    return cat in ("Runtime", "cuda_runtime", "cuda_driver", "hpu_op") or cat.endswith("_runtime") or \
        cat.endswith("_driver")


def ns(us):
    """The file's microseconds as integer nanoseconds (the text has at most 3 decimals)."""
    return round(float(us) * 1000)


def link_like_hta(trace):
    """{"self": {name: ns}, "total": {name: ns}, "cpu": {name: ns}, "count": {name: n},
    "linked": n, "unlinked": {cause: n}, "checked": n, "disagree": n}"""
    evs = [(i, e) for i, e in enumerate(trace["traceEvents"]) if e.get("ph") == "X"]
    ops = [(i, e) for i, e in evs if e.get("cat") in OP_CATS]
    runtime = {}
    any_corr = False
    for i, e in evs:
        if is_runtime(e.get("cat", "")) and "correlation" in e.get("args", {}):
            any_corr = True
            runtime.setdefault(e["args"]["correlation"], (i, e))
    assert any_corr, "these shapes all have runtime calls with correlations"

    def span(e):
        return ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])

    def thread(e):
        return (str(e.get("pid")), str(e.get("tid")))

    def containing(s, t, th):
        return [(i, o) for i, o in ops if thread(o) == th and span(o)[0] <= s and t <= span(o)[1]]

    res = {"self": {}, "total": {}, "cpu": {}, "count": {}, "linked": 0, "checked": 0, "disagree": 0,
           "unlinked": {"no_correlation": 0, "no_runtime": 0, "outside_op": 0}}
    for i, o in ops:
        res["cpu"][o["name"]] = res["cpu"].get(o["name"], 0) + ns(o["dur"])
        res["count"][o["name"]] = res["count"].get(o["name"], 0) + 1
        res["self"].setdefault(o["name"], 0)
        res["total"].setdefault(o["name"], 0)
    for i, d in evs:
        if d.get("cat") not in DEVICE_CATS:
            continue
        a = d.get("args", {})
        if "correlation" not in a:
            res["unlinked"]["no_correlation"] += 1
            continue
        if a["correlation"] not in runtime:
            res["unlinked"]["no_runtime"] += 1
            continue
        _, rt = runtime[a["correlation"]]
        stack = containing(*span(rt), thread(rt))
        if not stack:
            res["unlinked"]["outside_op"] += 1
            continue
        inner_i, inner = max(stack, key=lambda io: (span(io[1])[0], -span(io[1])[1], io[0]))
        dur = ns(d["dur"])
        res["linked"] += 1
        res["self"][inner["name"]] += dur
        # the op stack of the innermost op: every op containing it (itself included)
        for name in {o["name"] for _, o in containing(*span(inner), thread(inner))}:
            res["total"][name] += dur
        if "External id" in a and "External id" in inner.get("args", {}):
            res["checked"] += 1
            res["disagree"] += a["External id"] != inner["args"]["External id"]
    return res
