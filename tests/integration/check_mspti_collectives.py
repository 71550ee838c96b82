#!/usr/bin/env python3
"""check_mspti_collectives.py: two ranks of an Ascend workload with collectives, markers and
device memory (ascend_collectives.wl), each a process under the MSPTI emulator, recorded by one
`devtrace record --backend mspti` into one trace; then, per rank, exactly:

- every collective once, a kernel on its stream (tid and args.stream), named so that Holistic
  Trace Analysis counts it as communication (starts with hccl), the vendor's name, count,
  bytes, data type and communicator in args, and a flow from the call that issued it;
- every runtime event carries its API level; the launch recorded at three levels (ACL
  aclrtLaunchKernel, node MatMulV2, runtime rtKernelLaunch, one correlation id, nested) has
  exactly one flow start, on the runtime-level event, and the kernel's flow end; no other
  event of that id carries a flow; every flow id has exactly one start and one end;
- each marker range is a user_annotation inside the op that was open when it was pushed, and
  the ops pushed inside it lie inside it;
- the memory instants' running total per device returns to 0 at the end.

usage: check_mspti_collectives.py DEVTRACE EMU_RUN LIBMSPTI_EMU WORKLOAD OUT.json
"""
import json
import os
import subprocess
import sys

COLLECTIVES = [  # (trace name, vendor name, call, count, bytes, dtype)
    ("hccl:hcom_allReduce_", "hcom_allReduce_", "HcclAllReduce", 262144, 262144 * 4, "Float"),
    ("hccl:hcom_allGather_", "hcom_allGather_", "HcclAllGather", 65536, 65536 * 2, "BFloat16"),
    ("hcclBroadcast", "hcclBroadcast", "HcclBroadcast", 1024, 1024 * 4, "Int"),
]
MEMORY_TOTALS = [4194304, 5242880, 4194304, 0]
MARKERS = {"forward": [1, 2], "backward": [3, 4]}  # the ops pushed inside each range


# Marker records carry MSPTI's clock, ops the host's: the clock map aligns them within about a
# microsecond (a marker that ends right after its last op may read up to that much before it).
ALIGN_US = 2.0


def inside(inner, outer):
    return (outer["ts"] - ALIGN_US <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + ALIGN_US)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


LEVELS = {"MatMulV2": "node", "rtKernelLaunch": "runtime"}  # the others are ACL calls


def check_launch_levels(events, runtime, starts):
    """Per rank, the MatMulV2 launch: three runtime events of one correlation id, strictly nested
    (acl around node around runtime: the emulator puts 200 ns between their starts and ends,
    so the flow start's time tells which one it sits on), the flow start on the runtime one."""
    kernels = [e for e in events if e.get("cat") == "kernel" and e["name"] == "MatMulV2"]
    if len(kernels) != 2 or len({k["pid"] for k in kernels}) != 2:
        fail("MatMulV2: %d kernels, want one per rank" % len(kernels))
    for k in kernels:
        corr = k["args"]["correlation"]
        calls = sorted((r for r in runtime if r["args"]["correlation"] == corr), key=lambda r: r["ts"])
        got = [(r["name"], r["args"]["level"]) for r in calls]
        want = [("aclrtLaunchKernel", "acl"), ("MatMulV2", "node"), ("rtKernelLaunch", "runtime")]
        if got != want:
            fail("MatMulV2 (correlation %s): runtime events %s, want %s" % (corr, got, want))
        acl, node, rt = calls
        if not (acl["ts"] < node["ts"] < rt["ts"] and rt["ts"] + rt["dur"] < node["ts"] + node["dur"] <
                acl["ts"] + acl["dur"]) or len({(r["pid"], r["tid"]) for r in calls}) != 1:
            fail("MatMulV2: the levels' calls do not nest on one thread: %s" % calls)
        s = starts.get(corr)
        if s is None:
            fail("MatMulV2 (correlation %s): no flow start" % corr)
        if (s["pid"], s["tid"], s["ts"]) != (rt["pid"], rt["tid"], rt["ts"]):
            fail("MatMulV2: the flow starts at %s, not on the runtime-level call %s" % (s, rt))
        if not rt["ts"] <= k["ts"]:
            fail("MatMulV2: the kernel starts before its runtime-level launch")


def main():
    devtrace, emu_run, lib, workload, out = sys.argv[1:6]
    env = dict(os.environ)
    env["DEVTRACE_MSPTI_LIBRARY"] = lib
    env.pop("LD_PRELOAD", None)
    # emu-run --ranks 2: two processes at once, RANK 0 and 1 (a launcher built like the rest)
    r = subprocess.run([devtrace, "record", "--backend", "mspti", "-o", out, "--", emu_run, "--ranks", "2", "--lib",
                        lib, workload], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("devtrace record exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))
    with open(out) as f:
        trace = json.load(f)
    meta = trace["devtrace"]
    if meta["backend"] != "mspti" or not meta["validation"].startswith("headers+emulated:"):
        fail("backend/validation: %s / %s" % (meta["backend"], meta["validation"]))
    events = trace["traceEvents"]
    runtime = [e for e in events if e.get("cat") == "privateuse1_runtime"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    pids = sorted({e["pid"] for e in ops})
    if len(pids) != 2:
        fail("expected the ops of two processes, got pids %s" % pids)
    for e in runtime:
        want = LEVELS.get(e["name"], "acl")
        if e["args"].get("level") != want:
            fail("runtime event %s has level %r, want %r" % (e["name"], e["args"].get("level"), want))
    start_list = [e for e in events if e.get("ph") == "s"]
    finish_list = [e for e in events if e.get("ph") == "f"]
    starts = {e["id"]: e for e in start_list}
    finishes = {e["id"] for e in finish_list}
    if len(starts) != len(start_list) or len(finishes) != len(finish_list) or set(starts) != finishes:
        fail("flow halves unpaired: %d starts (%d ids), %d ends (%d ids)" %
             (len(start_list), len(starts), len(finish_list), len(finishes)))
    check_launch_levels(events, runtime, starts)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    comm = [e for e in kernels if e["name"].startswith(("hccl", "nccl")) or "ncclKernel" in e["name"]]
    if len(comm) != 2 * len(COLLECTIVES):
        fail("%d communication kernels, want %d" % (len(comm), 2 * len(COLLECTIVES)))
    by_device_pid = {}
    for name, vendor, call, count, nbytes, dtype in COLLECTIVES:
        same = [e for e in comm if e["name"] == name]
        if len(same) != 2 or len({e["pid"] for e in same}) != 2:
            fail("%s: %d events on pids %s, want one per rank" % (name, len(same), [e["pid"] for e in same]))
        for e in same:
            a = e["args"]
            want = {"Collective name": vendor, "In msg nelems": count, "bytes": nbytes, "dtype": dtype,
                    "Process Group Name": "hccl_world_group", "stream": 8}
            got = {k: a.get(k) for k in want}
            if got != want:
                fail("%s args %s, want %s" % (name, got, want))
            if e["tid"] != 8:
                fail("%s on tid %s, want stream 8" % (name, e["tid"]))
            corr = a["correlation"]
            s = starts.get(corr)
            if s is None or corr not in finishes:
                fail("%s: no flow pair for correlation %s" % (name, corr))
            launch = [r for r in runtime if r["args"]["correlation"] == corr]
            if len(launch) != 1 or launch[0]["name"] != call:
                fail("%s: issued by %s, want %s" % (name, [r["name"] for r in launch], call))
            by_device_pid.setdefault(e["pid"], 0)
            by_device_pid[e["pid"]] += 1
    for pid in pids:
        mine = [e for e in ops if e["pid"] == pid]
        marks = [e for e in events if e.get("cat") == "user_annotation" and e["pid"] == pid]
        if sorted(m["name"] for m in marks) != sorted(MARKERS):
            fail("pid %d: markers %s" % (pid, [m["name"] for m in marks]))
        step = [o for o in mine if o["name"] == "ProfilerStep#0"][0]
        for m in marks:
            if not inside(m, step):
                fail("pid %d: marker %s is not inside the op that opened it" % (pid, m["name"]))
            for o in mine:
                if o["args"]["External id"] in MARKERS[m["name"]] and not inside(o, m):
                    fail("pid %d: op %s is not inside marker %s" % (pid, o["name"], m["name"]))
        memory = [e for e in events if e.get("name") == "[memory]" and e["pid"] == pid]
        totals = [e["args"]["Total Allocated"] for e in sorted(memory, key=lambda e: e["ts"])]
        if totals != MEMORY_TOTALS:
            fail("pid %d: memory totals %s, want %s" % (pid, totals, MEMORY_TOTALS))
    print("ok: 2 ranks x %d collectives as communication kernels, %d markers nested, memory back to 0" %
          (len(COLLECTIVES), 2 * len(MARKERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
