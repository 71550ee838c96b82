"""torch_program.py [--emu LIBRARY] [--profile PATH BACKEND]: a PyTorch program whose
device kernels run inside PyTorch ops, for the PyTorch tests: OpenCL kernels (pyopencl, on
the machine's OpenCL device), or with --emu, launches through a vendor ABI emulator's
runtime (tests/emu: devemu_launch, called with ctypes), traced through the CUPTI family.

It runs torch ops before its first device call, then kernels inside nested record_function
scopes, inside a custom autograd Function's forward and backward, and on a second Python
thread. EXPECTED says what the trace must show; check_torch_trace.py checks it. With
--profile PATH BACKEND it profiles itself in process (devtrace.torch.profile) instead of
being run under devtrace record --torch.
"""
import json
import sys
import threading

ADDS_BEFORE_DEVICE = 3  # torch.add calls before the first device call
# Kernels launched directly inside each op (the innermost op around their launch).
EXPECTED_KERNELS = {"inner": 2, "outer": 1, "Scale": 3, "ScaleBackward": 1, "worker_scope": 4}
EXPECTED_OPS = {"outer": 1, "inner": 1, "worker_scope": 1, "Scale": 1, "ScaleBackward": 1}


def opencl_launcher():
    import numpy as np
    import pyopencl as cl
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, "__kernel void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }").build()
    host = np.ones(256, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    kernel = program.scale

    def launch(n):
        for _ in range(n):
            kernel(queue, (256,), None, buf, np.float32(1.0))
        queue.finish()
    return launch


def emulator_launcher(library):
    import ctypes
    emu = ctypes.CDLL(library)  # the emulated runtime the backend traces (the same file: one instance)
    emu.devemu_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint32]

    def launch(n):
        for _ in range(n):
            assert emu.devemu_launch(b"_Z5scalePff", 2, 128, 3000, 7) == 0
        assert emu.devemu_sync_device() == 0
    return launch


def main(emu_library=None):
    import torch
    from torch.autograd.profiler import record_function

    a = torch.ones(8)
    for _ in range(ADDS_BEFORE_DEVICE):
        a = torch.add(a, a)

    launch = emulator_launcher(emu_library) if emu_library else opencl_launcher()

    with record_function("outer"):
        with record_function("inner"):
            launch(EXPECTED_KERNELS["inner"])
        launch(EXPECTED_KERNELS["outer"])

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            launch(EXPECTED_KERNELS["Scale"])
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            launch(EXPECTED_KERNELS["ScaleBackward"])
            return grad * 2

    x = torch.ones(4, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0] * 4

    def worker():
        with record_function("worker_scope"):
            launch(EXPECTED_KERNELS["worker_scope"])

    t = threading.Thread(target=worker)
    t.start()
    t.join()


if __name__ == "__main__":
    args = sys.argv[1:]
    emu = args[args.index("--emu") + 1] if "--emu" in args else None
    if "--profile" in args:
        import devtrace.torch
        i = args.index("--profile")
        with devtrace.torch.profile(args[i + 1], backend=args[i + 2]) as p:
            main(emu)
        averages = p.key_averages()
        print(averages.table(sort_by="device_time_total", row_limit=12))
        # Per op name: calls, self device time (us), device events.
        print("averages", json.dumps({a.key: [a.count, a.self_device_time_total, a.device_events] for a in averages}))
    else:
        main(emu)
    print("torch_program: done with", sys.executable)
