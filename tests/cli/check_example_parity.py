#!/usr/bin/env python3
"""check_example_parity.py TRACE API_CALLS [--backend opencl] [--runtime-category CAT] [--at-least]:
the trace of a parity example (examples/opencl_parity.c on OpenCL, examples/cuda_parity.cu
on CUDA), with exact values.

Each example makes 17 kernels, 1 memset and 1 memcpy DtoH of 4 bytes, each inside the op
annotations of parity.wl (ids 1..16 inside ProfilerStep#0, id 0), and API_CALLS runtime
calls in all (its own count). --at-least accepts more runtime events than API_CALLS, for
runtimes that trace calls the program does not make itself (CUDA's launch configuration
calls); the number found is printed.
"""
import argparse

import trace_checks as tc
# op id -> (name, the device events it must own, as sorted category list)
EXPECTED_OPS = {
    1: ("aten::randn", ["kernel"]), 2: ("aten::randn", ["kernel"]), 3: ("aten::randn", ["kernel"]),
    **{i: ("aten::mm" if i % 2 == 0 else "aten::relu", ["kernel"]) for i in range(4, 14)},
    14: ("aten::sort", ["gpu_memset", "kernel", "kernel"]),
    15: ("aten::sum", ["kernel", "kernel"]),
    16: ("aten::item", ["gpu_memcpy"]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("api_calls", type=int)
    ap.add_argument("--backend", default="opencl")
    ap.add_argument("--runtime-category", default="privateuse1_runtime")
    ap.add_argument("--at-least", action="store_true")
    ap.add_argument("--validation", help="the trace's validation must start with this (e.g. hardware)")
    args = ap.parse_args()
    path, api_calls, RUNTIME = args.trace, args.api_calls, args.runtime_category
    trace = tc.load(path)
    meta = trace["devtrace"]
    assert meta["backend"] == args.backend, f"backend {meta['backend']}"
    if args.validation:
        assert meta["validation"].startswith(args.validation), meta["validation"]
    got = tc.counts(trace, RUNTIME)
    if args.at_least and got["runtime"] >= api_calls:
        api_calls = got["runtime"]
    want = {"kernel": 17, "memcpy": 1, "memset": 1, "runtime": api_calls}
    assert got == want, f"counts {got} != {want}"
    assert meta["counts"]["kernel"] == 17 and meta["counts"]["runtime"] == api_calls, meta["counts"]
    for key in ("store_full", "pool_full", "vendor"):
        assert meta["dropped"][key] == 0, f"dropped {key} = {meta['dropped'][key]}"
    assert meta["unpaired_flows"] == 0, meta["unpaired_flows"]
    tc.check_flows(trace, RUNTIME)
    tc.check_window(trace, RUNTIME)
    tc.check_after_launch(trace, RUNTIME)

    device = [e for e in tc.complete_events(trace) if e["cat"] in tc.DEVICE_CATS]
    owned = {}
    for e in device:
        assert "External id" in e["args"], f"{e['name']} has no External id"
        owned.setdefault(e["args"]["External id"], []).append(e["cat"])
    assert 0 not in owned, "ProfilerStep#0 (id 0) owns no device work directly: ops nest"
    for op, (name, cats) in EXPECTED_OPS.items():
        assert sorted(owned.get(op, [])) == cats, f"op {op} {name}: device events {owned.get(op)} != {cats}"
    ops = {e["args"]["External id"]: e for e in tc.complete_events(trace, "cpu_op")}
    assert sorted(ops) == list(range(17)), f"cpu_op ids {sorted(ops)}"
    assert ops[0]["name"] == "ProfilerStep#0"
    for op, (name, _) in EXPECTED_OPS.items():
        assert ops[op]["name"] == name, f"op {op} is {ops[op]['name']}, want {name}"
    # Per-op device time is the sum of the op's device events, and each device event lies
    # inside the time of the op that launched it... on the device timeline it may run later.
    totals = tc.device_time_by_op(trace)
    for op in EXPECTED_OPS:
        s = sum(round(e["dur"] * 1000) for e in device if e["args"]["External id"] == op)
        assert totals[op] == s and s > 0, f"op {op}: device time {totals.get(op)} vs {s}"
    memcpy = tc.complete_events(trace, "gpu_memcpy")[0]
    assert memcpy["name"] == "Memcpy DtoH (Device -> Pageable)" and memcpy["args"]["bytes"] == 4, memcpy
    memset = tc.complete_events(trace, "gpu_memset")[0]
    assert memset["name"] == "Memset (Device)" and memset["args"]["bytes"] == 128, memset
    names = sorted({e["name"].split("(")[0] for e in tc.complete_events(trace, "kernel")})
    want_names = ["bitonic_sort_kv", "fill_index", "fill_zero", "gemm_tiled", "randn_philox", "reduce_sum", "relu"]
    assert names == want_names, f"kernel names {names}"
    for e in tc.complete_events(trace, "kernel"):
        for key in ("queued", "device", "context", "stream", "correlation", "grid", "block"):  # all backends
            assert key in e["args"], f"kernel {e['name']} lacks arg {key}"
        assert e["args"]["stream"] > 0, "streams are numbered from 1"
    meta_names = {(e["name"], e["pid"]) for e in trace["traceEvents"] if e.get("ph") == "M"}
    assert ("process_name", 0) in meta_names and ("thread_name", 0) in meta_names, meta_names
    print(f"ok: {path}: kernel=17 memcpy=1 memset=1 runtime={api_calls}, {len(device)} flows paired, 16 ops attributed")


if __name__ == "__main__":
    main()
