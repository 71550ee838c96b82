#!/usr/bin/env python3
"""test_torch_emulators.py DEVTRACE PYTHON_DIR TMPDIR CUPTI_EMU MCPTI_EMU: the PyTorch
attribution on CUPTI-shaped backends. torch_program.py --emu drives an emulator's runtime
(devemu_launch through ctypes) inside the same ops as the OpenCL test; traced with
devtrace record --torch on the cupti and mcpti backends, and in process with
devtrace.torch.profile on cupti: 11 kernels, each with the External id of the innermost op
around its cudaLaunchKernel / mcLaunchKernel on its thread. Emulated: not run on a GPU."""
import json
import os
import sys
import tempfile

import torch_checks as T

devtrace, python_dir, tmp, cupti_emu, mcpti_emu = sys.argv[1:6]
py = T.torch_python(need=("torch",))
sys.path.insert(0, T.HERE)
import torch_program as program  # noqa: E402

work = tempfile.mkdtemp(prefix="torch-emu-", dir=tmp)
program_path = os.path.join(T.HERE, "torch_program.py")
cache = os.path.join(tmp, "cache")
cases = [("cupti", cupti_emu, "cuda_runtime", "DEVTRACE_CUPTI_LIBRARY"),
         ("mcpti", mcpti_emu, "privateuse1_runtime", "DEVTRACE_MCPTI_LIBRARY")]
for backend, emu, runtime_cat, var in cases:
    out = os.path.join(work, backend + ".json")
    r = T.run([devtrace, "record", "--torch", "--backend", backend, "-q", "-o", out, "--", py, program_path,
               "--emu", emu], env={var: emu, "DEVTRACE_TORCH_CACHE": cache})
    assert r.returncode == 0, r.stdout + r.stderr
    trace = T.tc.load(out)
    assert trace["devtrace"]["backend"] == backend, trace["devtrace"]["backend"]
    kernels, ops = T.check_attribution(trace, program, runtime_cat)
    print("ok   devtrace record --torch on %s (emulated): %d kernels attributed, %d cpu ops" % (backend, kernels, ops))

out = os.path.join(work, "profile-cupti.json")
r = T.run([py, program_path, "--emu", cupti_emu, "--profile", out, "cupti"],
          env={"DEVTRACE_CUPTI_LIBRARY": cupti_emu, "PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": cache})
assert r.returncode == 0, r.stdout + r.stderr
trace = T.tc.load(out)
T.check_attribution(trace, program, "cuda_runtime")
# The table's device self time of Scale is its 3 kernels' time in the trace (each 3000 ns in
# the emulator's clock, mapped to the host clock; the trace rounds each to 1 ns).
scale_id = next(e["args"]["External id"] for e in T.tc.complete_events(trace, "cpu_op") if e["name"] == "Scale")
scale_ns = sum(round(k["dur"] * 1000) for k in T.tc.complete_events(trace, "kernel")
               if k["args"]["External id"] == scale_id)
averages = json.loads(next(l for l in r.stdout.splitlines() if l.startswith("averages "))[len("averages "):])
calls, self_device_us, device_events = averages["Scale"]
assert (calls, device_events) == (1, 3) and abs(self_device_us * 1000 - scale_ns) <= 3, (averages["Scale"], scale_ns)
# On CUDA the table's device columns are torch's: Self CUDA, Self CUDA %, CUDA total, CUDA time avg.
head = next(l for l in r.stdout.splitlines() if l.strip().startswith("Name"))
assert " ".join(head.split()).endswith("CPU time avg Self CUDA Self CUDA % CUDA total CUDA time avg # of Calls"), head
print("ok   devtrace.torch.profile on cupti (emulated): 'Scale' 1 call, 3 kernels, %.3f us device self" % self_device_us)
