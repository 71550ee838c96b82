#!/usr/bin/env python3
"""test_report_communication.py DEVTRACE EMU_RUN MSPTI_EMU ASCEND_WL TORCH_CUDA_JSON: devtrace
report counts collectives as communication (the kernels its straggler view counts as
collectives: a name that contains nccl or rccl, or starts with hccl, as devtrace writes MSPTI's
collectives, or xccl::).

- An Ascend two-rank trace: ascend_collectives.wl run by two processes under the MSPTI
  emulator, recorded by `devtrace record --backend mspti` into one trace. Its communication
  time in `devtrace report --format json` ("communication_us") and in the table's facts line is
  exactly the sum of the durations of its collectives, computed here from the trace's JSON: the
  kernels written from MSPTI's communication records (args "Collective name"), three per rank,
  named as the workload names them; the rest of the kernel time is MatMulV2's.
- torch_cuda.json (a CUDA export): its one NCCL kernel, 100 us.
"""
import json
import os
import subprocess
import sys
import tempfile

DEVTRACE, EMU_RUN, LIB, WORKLOAD, TORCH = sys.argv[1:6]
COLLECTIVES = {"hccl:hcom_allReduce_", "hccl:hcom_allGather_", "hcclBroadcast"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def report(path):
    r = subprocess.run([DEVTRACE, "report", "--format", "json", path], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("devtrace report %s: %s" % (path, r.stderr))
    text = subprocess.run([DEVTRACE, "report", path], capture_output=True, text=True, timeout=60).stdout
    return json.loads(r.stdout)["about"], text


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def main():
    out = os.path.join(tempfile.mkdtemp(prefix="devtrace-report-comm-"), "ascend_two_rank.json")
    env = dict(os.environ)
    env["DEVTRACE_MSPTI_LIBRARY"] = LIB
    env.pop("LD_PRELOAD", None)
    r = subprocess.run([DEVTRACE, "record", "-q", "--backend", "mspti", "-o", out, "--", EMU_RUN, "--ranks", "2",
                        "--lib", LIB, WORKLOAD], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("devtrace record exited %d: %s" % (r.returncode, r.stderr))
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    collectives = [e for e in kernels if "Collective name" in e["args"]]
    if sorted(e["name"] for e in collectives) != sorted(list(COLLECTIVES) * 2) or \
            len({e["pid"] for e in collectives}) != 2:
        fail("collectives %s" % [(e["name"], e["pid"]) for e in collectives])
    others = [e for e in kernels if "Collective name" not in e["args"]]
    if sorted(e["name"] for e in others) != ["MatMulV2"] * 2:
        fail("other kernels %s" % [e["name"] for e in others])
    communication_ns = sum(round(e["dur"] * 1000) for e in collectives)
    kernel_ns = communication_ns + sum(round(e["dur"] * 1000) for e in others)
    about, text = report(out)
    if "communication_us" not in about:
        fail("the report's facts have no communication_us: %s" % about)
    got = (round(about["communication_us"] * 1000), round(about["kernel_us"] * 1000))
    if got != (communication_ns, kernel_ns):
        fail("communication, kernel ns %s; the trace's collectives and kernels: %s" % (got, (communication_ns,
                                                                                          kernel_ns)))
    line = "kernel time %s us (communication %s us);" % (us(kernel_ns), us(communication_ns))
    if line not in text:
        fail("the table's facts do not say %r:\n%s" % (line, text[:600]))
    about, text = report(TORCH)
    if about.get("communication_us") != 100.0 or "(communication 100.000 us)" not in text:
        fail("torch_cuda.json: communication %s us, want 100 (its ncclKernel)" % about.get("communication_us"))
    print("ok: %s us of %s us kernel time is communication (6 collectives, 2 ranks); torch_cuda.json 100 us" %
          (us(communication_ns), us(kernel_ns)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
