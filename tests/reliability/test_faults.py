#!/usr/bin/env python3
"""test_faults.py: the fault matrix of docs/reliability.md, through `devtrace record`.

Each case runs a host program under `devtrace record` with one fault injected: the vendor library
missing, not a shared object, without a required symbol, refusing the subscription, held by another
subscriber, failing buffer allocations (its own and ours), dropping records, writing malformed
records, a flush that never returns, a clock that jumps backwards, and more. The emulator path is
rel_host on the CUPTI emulator (backend cupti, the engine every CUPTI-shaped vendor uses); the real
path is the OpenCL example on the machine's OpenCL platform (PoCL). For every case: the host program
completes with its own status, the trace is strict JSON, and the counts, loss counters, reasons and
notes in its `devtrace` section are exactly what the fault implies. Writes OUT/fault-matrix.md.
"""
import os
import shutil
import sys
import tempfile

from rel_common import (Cases, check_flows, expect_meta, expect_note, host, load_trace, lookup, parse_args,
                        record, workload_counts)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import check_parity  # noqa: E402

args = parse_args(__doc__.split("\n\n")[0])
os.makedirs(args.out, exist_ok=True)
WL = workload_counts(args.workload)
ZERO_LOSSES = {"dropped.store_full": 0, "dropped.pool_full": 0, "dropped.vendor": 0, "malformed.records": 0,
               "zero_timestamp": 0, "refused_buffers": 0, "unpaired_flows": 0, "bad_timestamps": 0}
NO_EVENTS = {"counts.kernel": 0, "counts.memcpy": 0, "counts.memset": 0, "counts.runtime": 0}
cases = Cases(args, "fault matrix")
tmp = tempfile.mkdtemp(prefix="devtrace-faults-")


def counts(kernel=None, memcpy=None, memset=None, runtime=None):
    c = {"counts.kernel": WL["kernel"], "counts.memcpy": WL["memcpy"], "counts.memset": WL["memset"],
         "counts.runtime": WL["runtime"]}
    for k, v in dict(kernel=kernel, memcpy=memcpy, memset=memset, runtime=runtime).items():
        if v is not None:
            c["counts." + k] = v
    return c


def traced(name, program, env=None, rc=0, backend="cupti", timeout=120):
    proc, seconds, path = record(args, name + ".json", program, env=env, backend=backend, timeout=timeout)
    assert proc.returncode == rc, "devtrace record exited %d, expected %d: %s" % (proc.returncode, rc,
                                                                                 proc.stderr.strip()[-600:])
    assert not os.path.exists(path + ".tmp"), "a .tmp file was left behind"
    return load_trace(path), seconds, proc


def parity(trace, vendor="cupti", runtime_cat="cuda_runtime"):
    c = check_parity.check_trace(trace, check_parity.Workload(args.workload), runtime_cat, vendor)
    assert not c.failed, "parity: %s" % "; ".join(c.failed[:3])


def summary(trace, *paths):
    meta = trace["devtrace"]
    return ", ".join("%s=%s" % (p, lookup(meta, p)) for p in paths)


# ---- the emulator path ----

def baseline():
    t, _, _ = traced("baseline", host(args))
    expect_meta(t, {**counts(), **ZERO_LOSSES, "backend": "cupti", "clock": "affine"})
    check_flows(t)
    parity(t)
    return "traced: kernel=17 memcpy=1 memset=1 runtime=187, every loss counter 0, flows paired, parity holds"


def library_missing():
    t, _, _ = traced("library_missing", host(args), env={"DEVTRACE_CUPTI_LIBRARY": "/nonexistent/libcupti.so"})
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES, "backend": "none"})
    why = t["devtrace"]["unavailable"]
    assert "/nonexistent/libcupti.so" in why and "No such file" in why, why
    return ("program runs untraced (exit 0); backend none, `unavailable` names the variable, the path and \"No such "
            "file or directory\"")


def not_a_shared_object():
    bogus = os.path.join(tmp, "libcupti.so")
    with open(bogus, "w") as f:
        f.write("this is not a shared object\n" * 200)
    t, _, _ = traced("not_a_shared_object", host(args), env={"DEVTRACE_CUPTI_LIBRARY": bogus})
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES, "backend": "none"})
    why = t["devtrace"]["unavailable"]
    assert bogus in why and "invalid ELF header" in why, why
    return "program runs untraced (exit 0); backend none, `unavailable` names the file and \"invalid ELF header\""


def required_symbol_missing():
    t, _, _ = traced("required_symbol_missing", host(args, lib=args.emu_noflush),
                     env={"DEVTRACE_CUPTI_LIBRARY": args.emu_noflush})
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES, "backend": "none"})
    why = t["devtrace"]["unavailable"]
    assert "cuptiActivityFlushAll" in why, why
    return "program runs untraced (exit 0); backend none, `unavailable` names cuptiActivityFlushAll"


SUBSCRIBE_NOTE = "cuptiSubscribe refused: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)"


def subscribe_refused():
    t, _, _ = traced("subscribe_refused", host(args), env={"DEVEMU_FAULTS": "subscribe-fail"})
    expect_meta(t, {**counts(), **ZERO_LOSSES, "backend": "cupti"})
    expect_note(t, SUBSCRIBE_NOTE)
    check_flows(t)
    return "traced in full (activity API needs no subscriber); note \"%s\"" % SUBSCRIBE_NOTE


def second_subscriber():
    t, _, _ = traced("second_subscriber", host(args, "--subscribe-first"))
    expect_meta(t, {**counts(), **ZERO_LOSSES, "backend": "cupti"})
    expect_note(t, SUBSCRIBE_NOTE)
    check_flows(t)
    parity(t)
    return "another tool subscribed first: traced in full, the same note, parity holds"


def vendor_buffer_allocation_failure():
    t, _, _ = traced("vendor_buffer_failure", host(args), env={"DEVEMU_FAULTS": "refuse-buffer=3"})
    expect_meta(t, {**counts(runtime=WL["runtime"] - 3), **{**ZERO_LOSSES, "dropped.vendor": 3}})
    return "3 requests fail in the library: the 3 records that needed them are dropped.vendor=3, runtime=184"


def tracer_buffer_allocation_failure():
    if not args.failmalloc:
        return "SKIPPED (needs the malloc interposer, not built under sanitizers)"
    size = str((1 << 20) + 8)
    env = {"LD_PRELOAD": args.failmalloc, "REL_FAIL_MALLOC_SIZE": size, "DEVTRACE_BUFFER_SIZE": size}
    t, _, _ = traced("tracer_buffer_failure", host(args), env=env)
    records = WL["kernel"] + WL["memcpy"] + WL["memset"] + WL["runtime"] + WL["extcorr"]
    expect_meta(t, {**NO_EVENTS, **{**ZERO_LOSSES, "refused_buffers": records, "dropped.vendor": records},
                    "backend": "cupti"})
    return ("every malloc of our buffers fails: each request refused and counted, refused_buffers = "
            "dropped.vendor = %d (every record of the run), no event, program exit 0" % records)


def pool_exhausted():
    t, _, _ = traced("pool_exhausted", host(args), env={"DEVEMU_FAULTS": "small-buffer", "DEVTRACE_BUFFER_COUNT": "1"})
    meta = t["devtrace"]
    refused, dropped = meta["refused_buffers"], meta["dropped"]["vendor"]
    events = sum(meta["counts"][k] for k in ("kernel", "memcpy", "memset", "runtime"))
    device_and_api = WL["kernel"] + WL["memcpy"] + WL["memset"] + WL["runtime"]
    assert refused > 0 and refused == dropped, (refused, dropped)
    assert events + dropped >= device_and_api and events + dropped <= device_and_api + WL["extcorr"], (events, dropped)
    check_flows(t)
    return ("a 1-buffer pool: %d requests refused, each costs exactly one record (refused_buffers = dropped.vendor"
            " = %d), %d events kept" % (refused, dropped, events))


def vendor_drops():
    t, _, _ = traced("vendor_drops", host(args), env={"DEVEMU_FAULTS": "drop=4"})
    expect_meta(t, {**counts(kernel=WL["kernel"] - 4), **{**ZERO_LOSSES, "dropped.vendor": 4}})
    check_flows(t)
    return "the library drops 4 device records: dropped.vendor=4, kernel=13, flows paired (the 4 have none)"


def malformed_records():
    t, _, _ = traced("malformed", host(args), env={"DEVEMU_FAULTS": "malformed=2"})
    expect_meta(t, {**counts(), **{**ZERO_LOSSES, "malformed.records": 2}})
    check_flows(t)
    return "2 records of an unknown kind in the buffers: malformed.records=2, every real record kept"


def zero_timestamps():
    t, _, _ = traced("zero_time", host(args), env={"DEVEMU_FAULTS": "zero-time=3"})
    expect_meta(t, {**counts(), **{**ZERO_LOSSES, "zero_timestamp": 3}})
    return "3 kernel records with start = end = 0: zero_timestamp=3, kept out of the timeline"


def flush_hang():
    env = {"DEVEMU_FAULTS": "flush-hang", "DEVTRACE_FLUSH_TIMEOUT_MS": "1000"}
    t, seconds, _ = traced("flush_hang", host(args), env=env, timeout=60)
    assert seconds < 20, "the program took %.1f s" % seconds
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES, "backend": "cupti"})
    expect_note(t, "cuptiActivityFlushAll(1) did not return within 1000 ms")
    return ("FlushAll never returns: stop waits 1 s ($DEVTRACE_FLUSH_TIMEOUT_MS, default 10 s), the program exits 0 "
            "in %.1f s; note says so; the records the library kept are missing (no event, none invented)" % seconds)


def clock_backwards():
    t, _, _ = traced("clock_backwards", host(args, "--clock-jump", "1000000000000", repeat=2))
    oow = {"out_of_window." + k: WL[k] for k in ("kernel", "memcpy", "memset", "runtime")}
    expect_meta(t, {**counts(), **ZERO_LOSSES, **oow, "clock": "offset"})
    expect_note(t, "the vendor clock did not advance with the host clock")
    check_flows(t)
    return ("the vendor clock steps 1000 s back after run 1 of 2: clock map falls back to \"offset\" (noted), run 1 "
            "kept exactly, run 2 counted per kind in out_of_window (17/1/1/187)")


def vendor_clock_epoch_rate():
    t, _, _ = traced("vendor_clock", host(args), env={"DEVEMU_FAULTS": "clock-epoch=load,clock-rate=1.5"})
    expect_meta(t, {**counts(), **ZERO_LOSSES, "clock": "affine"})
    parity(t)
    return "a device clock with its own epoch and 1.5 ticks/ns: mapped affine, parity holds (attribution within 1%)"


def small_buffers():
    t, _, _ = traced("small_buffers", host(args, repeat=3), env={"DEVEMU_FAULTS": "small-buffer"})
    expect_meta(t, {**counts(*(3 * WL[k] for k in ("kernel", "memcpy", "memset", "runtime"))), **ZERO_LOSSES})
    check_flows(t)
    return "1 KiB buffers (hundreds of completions): every record of 3 runs kept, flows paired"


def roctracer_flush_hang():
    if not args.emu_roctracer:
        return "SKIPPED (the ROCtracer emulator is not built)"
    env = {"DEVEMU_FAULTS": "flush-hang", "DEVTRACE_FLUSH_TIMEOUT_MS": "1000",
           "DEVTRACE_ROCTRACER_LIBRARY": args.emu_roctracer}
    t, seconds, _ = traced("roctracer_flush_hang", [args.emu_run, "--lib", args.emu_roctracer, args.workload], env=env,
                           backend="roctracer", timeout=60)
    device = WL["kernel"] + WL["memcpy"] + WL["memset"]
    expect_meta(t, {**counts(kernel=0, memcpy=0, memset=0), "dropped.vendor": device, "backend": "roctracer"})
    expect_note(t, "roctracer_flush_activity_expl did not return within 1000 ms")
    return ("the ROCtracer engine: flush never returns, stop waits 1 s, exit 0 in %.1f s; runtime=187 kept (callbacks), "
            "the 19 device records the library kept are counted exactly (dropped.vendor=19: calls whose record never "
            "came)" % seconds)


# ---- the real OpenCL path ----

def opencl_api_calls():
    import subprocess
    out = subprocess.run([args.example, "--print-api-count"], capture_output=True, text=True, timeout=120)
    for line in out.stdout.splitlines():
        if line.startswith("api_calls="):
            return int(line.split("=")[1])
    raise AssertionError("the example printed no api_calls=: %s" % out.stderr[-300:])


def opencl_baseline():
    if not args.example:
        return "SKIPPED (the OpenCL example is not built)"
    calls = opencl_api_calls()
    t, _, _ = traced("opencl_baseline", [args.example], backend="opencl")
    expect_meta(t, {**counts(runtime=calls), **ZERO_LOSSES, "backend": "opencl"})
    check_flows(t)
    return "PoCL: kernel=17 memcpy=1 memset=1 runtime=%d (the program's own count of its calls), no loss" % calls


def opencl_layer_not_a_shared_object():
    if not args.example:
        return "SKIPPED (the OpenCL example is not built)"
    bogus = os.path.join(tmp, "libdevtrace.so.0")
    with open(bogus, "w") as f:
        f.write("not a shared object\n" * 200)
    t, _, _ = traced("opencl_bad_layer", [args.example], env={"DEVTRACE_LIBRARY": bogus}, backend="opencl")
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES})
    # The example's own libdevtrace (the one it links, not the file the recorder injected) never
    # becomes a collector, so no collector ever starts: the recorder says so.
    expect_note(t, "the program never started tracing")
    return "the OpenCL loader cannot load the layer: program runs untraced (exit 0), trace says it never started tracing"


def opencl_layer_missing():
    if not args.example:
        return "SKIPPED (the OpenCL example is not built)"
    proc, _, path = record(args, "opencl_no_layer.json", [args.example], env={"DEVTRACE_LIBRARY": "/nonexistent/x.so"},
                           backend="opencl")
    assert proc.returncode == 1, proc.returncode
    assert "cannot find libdevtrace.so.0" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not os.path.exists(path), "a trace was written"
    return "the collector library is missing: one-line error naming $DEVTRACE_LIBRARY, exit 1, the program not started"


def opencl_no_platform():
    if not args.example:
        return "SKIPPED (the OpenCL example is not built)"
    empty = os.path.join(tmp, "no-icds")
    os.makedirs(empty, exist_ok=True)
    proc, _, path = record(args, "opencl_no_platform.json", [args.example], env={"OCL_ICD_VENDORS": empty},
                           backend="opencl")
    assert proc.returncode != 0, "the example ran without a platform?"
    t = load_trace(path)
    expect_meta(t, {**NO_EVENTS, **ZERO_LOSSES})
    assert "exited with status %d" % proc.returncode in proc.stderr, proc.stderr
    return ("no OpenCL driver (ICD) at all: the program fails on its own (status %d passed through), the trace is "
            "valid with no event" % proc.returncode)


E, O = "emulator (CUPTI)", "OpenCL (PoCL)"
cases.run("baseline", E, "none", baseline)
cases.run("library_missing", E, "$DEVTRACE_CUPTI_LIBRARY names no file", library_missing)
cases.run("not_a_shared_object", E, "the library is a text file", not_a_shared_object)
cases.run("required_symbol_missing", E, "no cuptiActivityFlushAll", required_symbol_missing)
cases.run("subscribe_refused", E, "Subscribe returns 39", subscribe_refused)
cases.run("second_subscriber", E, "another tool subscribed first", second_subscriber)
cases.run("vendor_buffer_allocation_failure", E, "refuse-buffer=3", vendor_buffer_allocation_failure)
cases.run("tracer_buffer_allocation_failure", E, "malloc of our buffers fails", tracer_buffer_allocation_failure)
cases.run("pool_exhausted", E, "1-buffer pool, 1 KiB buffers", pool_exhausted)
cases.run("vendor_drops", E, "drop=4", vendor_drops)
cases.run("malformed_records", E, "malformed=2", malformed_records)
cases.run("zero_timestamps", E, "zero-time=3", zero_timestamps)
cases.run("flush_hang", E, "FlushAll never returns", flush_hang)
cases.run("roctracer_flush_hang", "emulator (ROCtracer)", "roctracer_flush_activity never returns",
          roctracer_flush_hang)
cases.run("clock_backwards", E, "vendor clock -1000 s mid-run", clock_backwards)
cases.run("vendor_clock_epoch_rate", E, "clock-epoch=load, rate 1.5", vendor_clock_epoch_rate)
cases.run("small_buffers", E, "small-buffer, 3 runs", small_buffers)
cases.run("opencl_baseline", O, "none", opencl_baseline)
cases.run("opencl_layer_not_a_shared_object", O, "$DEVTRACE_LIBRARY is a text file", opencl_layer_not_a_shared_object)
cases.run("opencl_layer_missing", O, "$DEVTRACE_LIBRARY names no file", opencl_layer_missing)
cases.run("opencl_no_platform", O, "no ICD ($OCL_ICD_VENDORS empty)", opencl_no_platform)
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(cases.finish("fault-matrix.md"))
