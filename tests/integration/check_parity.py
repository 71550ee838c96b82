#!/usr/bin/env python3
"""check_parity.py: asserts DESIGN.md's parity assertions on a devtrace Chrome trace of a
workload file, with every expected value read from the workload itself. Vendor-neutral:
a backend PROFILE says what the backend writes (its runtime category, its names for the
workload's generic calls, the kernel keys it has no data for, whether cbid and occupancy
are required, its validation level and its name).

    check_parity.py TRACE.json WORKLOAD.wl [--profile NAME] [--expect PATH=VALUE ...]
    (legacy spellings: --vendor NAME (= --profile NAME), --runtime-category CAT,
     --no-cbid, --require-occupancy: each overrides that one item of the profile)

Profiles (PROFILES below): cupti, ppu, iluvatar, mcpti, roctracer, mspti, opencl, for the tests of
one backend; the suites that iterate every emulated backend build each profile from the facts
instead (profile_from_facts: `devtrace list --json` and the emulator's `emu-run --describe`).
--expect checks values of the trace's devtrace section by dotted path, compared as text:
counts.kernel=17 dropped.vendor=0 malformed.records=4 backend=mspti ...

The assertions (DESIGN.md, "Parity"):
 1. categories: kernel, gpu_memcpy, gpu_memset, the runtime category, ac2g flows,
    process and thread metadata;
 2. counts: exactly the workload's kernels, memcpys, memsets and runtime calls;
 3. flows paired: the set of "s" ids equals the set of "f" ids, one pair per device event;
 4. arg keys: kernels carry the 13 kernel keys (occupancy keys when the device has
    properties), memcpy/memset the 7 keys, runtime External id (when linked), cbid, correlation;
 5. device-time attribution: per op id (0 included, nested ops to the innermost) the sum of
    device time matches the workload's dur_ns within max(1 us, 1%);
 6. kernel names demangled (none starts with _Z, some contain ::); runtime names are the
    vendor's real names, never a fallback, in the workload's order with the right External id;
 7. capture window: every device and runtime event inside devtrace.window, and device work
    starting at or after its launch call's start.
With a profile, also: devtrace.backend is the profile's backend, devtrace.validation is at
the profile's level ("headers+emulated: ...", "emulated: ...", "hardware: ..."), the keys the
backend has no data for are absent (omitted, never zero), and kernels carry grid and block
whenever the backend has the launch configuration.
Standard library only. Exit status 0 when every assertion holds, 1 otherwise, 2 on bad input.
"""
import argparse
import collections
import json
import re
import shutil
import subprocess
import sys

# The generic runtime calls (DESIGN.md, "Generic runtime calls") in each vendor's names.
_CUDA = {
    "get_device": "cudaGetDevice", "get_device_count": "cudaGetDeviceCount",
    "get_device_properties": "cudaGetDeviceProperties", "set_device": "cudaSetDevice",
    "malloc": "cudaMalloc", "free": "cudaFree", "event_record": "cudaEventRecord",
    "launch": "cudaLaunchKernel", "memcpy": "cudaMemcpy", "memset": "cudaMemsetAsync",
    "sync_stream": "cudaStreamSynchronize", "sync_device": "cudaDeviceSynchronize",
}
VENDOR_NAMES = {
    "cupti": _CUDA, "ppu": _CUDA, "iluvatar": _CUDA,
    "mcpti": {
        "get_device": "mcGetDevice", "get_device_count": "mcGetDeviceCount",
        "get_device_properties": "mcGetDeviceProperties", "set_device": "mcSetDevice",
        "malloc": "mcMalloc", "free": "mcFree", "event_record": "mcEventRecord",
        "launch": "mcLaunchKernel", "memcpy": "mcMemcpy", "memset": "mcMemsetAsync",
        "sync_stream": "mcStreamSynchronize", "sync_device": "mcDeviceSynchronize",
    },
    "roctracer": {
        "get_device": "hipGetDevice", "get_device_count": "hipGetDeviceCount",
        "get_device_properties": "hipGetDeviceProperties", "set_device": "hipSetDevice",
        "malloc": "hipMalloc", "free": "hipFree", "event_record": "hipEventRecord",
        "launch": "hipLaunchKernel", "memcpy": "hipMemcpy", "memset": "hipMemsetAsync",
        "sync_stream": "hipStreamSynchronize", "sync_device": "hipDeviceSynchronize",
    },
    # DESIGN.md's Ascend column; the launch is aclrtLaunchKernel (tests/emu/README.md: the
    # MSPTI emulator's "aclnn kernel launch").
    "mspti": {
        "get_device": "aclrtGetDevice", "get_device_count": "aclrtGetDeviceCount",
        "get_device_properties": "aclrtGetDeviceInfo", "set_device": "aclrtSetDevice",
        "malloc": "aclrtMalloc", "free": "aclrtFree", "event_record": "aclrtRecordEvent",
        "launch": "aclrtLaunchKernel", "memcpy": "aclrtMemcpy", "memset": "aclrtMemsetAsync",
        "sync_stream": "aclrtSynchronizeStream", "sync_device": "aclrtSynchronizeDevice",
    },
    "opencl": {
        "get_device": "clGetDeviceInfo", "get_device_count": "clGetDeviceIDs",
        "get_device_properties": "clGetDeviceInfo", "set_device": "clGetContextInfo",
        "malloc": "clCreateBuffer", "free": "clReleaseMemObject",
        "event_record": "clEnqueueMarkerWithWaitList", "launch": "clEnqueueNDRangeKernel",
        "memcpy": None, "memset": "clEnqueueFillBuffer", "sync_stream": "clFinish", "sync_device": "clFinish",
    },
}
FALLBACK_NAME = re.compile(r"(#\d+$)|(^[a-z]+Runtime$)|(^$)|(^unknown)", re.I)

KERNEL_KEYS = {"External id", "queued", "device", "context", "stream", "correlation", "registers per thread",
               "shared memory", "blocks per SM", "warps per SM", "grid", "block", "est. achieved occupancy %"}
OCCUPANCY_KEYS = {"blocks per SM", "warps per SM", "est. achieved occupancy %"}
MEM_KEYS = {"External id", "device", "context", "stream", "correlation", "bytes", "memory bandwidth (GB/s)"}
RUNTIME_KEYS = {"External id", "cbid", "correlation"}
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
# The names the Chrome sink gives copies (by the workload's dir=) and fills (DESIGN.md, "The trace").
MEMCPY_NAMES = {"htod": "Memcpy HtoD (Pageable -> Device)", "dtoh": "Memcpy DtoH (Device -> Pageable)",
                "dtod": "Memcpy DtoD (Device -> Device)"}
MEMSET_NAME = "Memset (Device)"
LAUNCH_KEYS = {"grid", "block"}
REGISTER_KEYS = {"registers per thread", "shared memory"}  # both from the register flag; OpenCL: shared memory alone


class Profile:
    """What one backend writes into a trace of a workload: the facts every check of its
    traces needs, in one place.

    backend             devtrace.backend of its traces
    runtime_category    the cat of its runtime events
    names               generic call (the workload's) -> the vendor's runtime name (VENDOR_NAMES)
    absent_kernel_keys  kernel arg keys it has no data for: they must be absent, never zero
    absent_runtime_keys runtime arg keys it has no data for (MSPTI: cbid)
    extra_runtime_keys  runtime arg keys it has besides (MSPTI: level, the API level of the record)
    require_cbid        every runtime event carries a cbid
    require_occupancy   every kernel carries the occupancy keys (its device answers the
                        attribute queries), whether or not deviceProperties lists the device
    validation          the level devtrace.validation starts with ("emulated", ...); None: unchecked
    """

    def __init__(self, backend, runtime_category, names, absent_kernel_keys=(), absent_runtime_keys=(),
                 require_cbid=True, require_occupancy=False, validation=None, why="", extra_runtime_keys=()):
        self.backend = backend
        self.runtime_category = runtime_category
        self.names = names
        self.absent_kernel_keys = frozenset(absent_kernel_keys)
        self.absent_runtime_keys = frozenset(absent_runtime_keys)
        self.extra_runtime_keys = frozenset(extra_runtime_keys)
        self.require_cbid = require_cbid
        self.require_occupancy = require_occupancy
        self.validation = validation
        self.why = why

    @property
    def has_launch(self):
        return not (LAUNCH_KEYS & self.absent_kernel_keys)

    def generic_of(self):
        """vendor runtime name -> the generic call(s) it stands for, '|'-joined when one
        name serves several (OpenCL's clGetDeviceInfo, clFinish)."""
        inverse = collections.defaultdict(list)
        for generic, name in (self.names or {}).items():
            if name:
                inverse[name].append(generic)
        for name, generic in self.extra_generic.items():
            inverse[name].append(generic)
        return {name: "|".join(sorted(set(g))) for name, g in inverse.items()}

    extra_generic = {}

    def replace(self, **changes):
        p = Profile.__new__(Profile)
        p.__dict__.update(self.__dict__)
        p.__dict__.update(changes)
        return p


PROFILES = {
    "cupti": Profile("cupti", "cuda_runtime", VENDOR_NAMES["cupti"], validation="headers+emulated",
                     why="NVIDIA CUPTI: every key; layouts checked against the CUDA headers"),
    "ppu": Profile("ppu", "privateuse1_runtime", VENDOR_NAMES["ppu"], validation="emulated",
                   why="Alibaba PPU (HGPTI), CUDA names, against the CUPTI emulator"),
    "iluvatar": Profile("iluvatar", "privateuse1_runtime", VENDOR_NAMES["iluvatar"], validation="emulated",
                        why="Iluvatar CoreX (CUDA-compatible CUPTI), CUDA names, against the CUPTI emulator"),
    "mcpti": Profile("mcpti", "privateuse1_runtime", VENDOR_NAMES["mcpti"], validation="emulated",
                     why="MetaX MCPTI: mc* names with MetaX cbids"),
    # Kineto's ROCm build writes HIP calls as CUDA_RUNTIME. No ROCtracer record or HIP
    # callback carries the register count, so no "registers per thread" and (one flag in
    # the sink) no "shared memory"; the launch's dynamic shared memory still goes into the
    # occupancy figures, which are required: the device answers hipDeviceGetAttribute.
    "roctracer": Profile("roctracer", "cuda_runtime", VENDOR_NAMES["roctracer"], absent_kernel_keys=REGISTER_KEYS,
                         require_occupancy=True, validation="emulated",
                         why="ROCtracer: HIP names; no register count; grid/block from the launch arguments"),
    # MSPTI kernel records have no launch configuration and there is no device attribute
    # query; API records are named by string, without a callback id.
    "mspti": Profile("mspti", "privateuse1_runtime", VENDOR_NAMES["mspti"],
                     absent_kernel_keys=REGISTER_KEYS | LAUNCH_KEYS | OCCUPANCY_KEYS, absent_runtime_keys={"cbid"},
                     extra_runtime_keys={"level"}, require_cbid=False, validation="headers+emulated",
                     why="Ascend MSPTI: aclrt* names, no cbid, no grid/block/registers/shared memory/occupancy"),
    # OpenCL has no register, warp or per-SM limits, and no callback ids; its shared memory
    # is the kernel's local memory (CL_KERNEL_LOCAL_MEM_SIZE plus the __local arguments).
    "opencl": Profile("opencl", "privateuse1_runtime", VENDOR_NAMES["opencl"],
                      absent_kernel_keys={"registers per thread"} | OCCUPANCY_KEYS, absent_runtime_keys={"cbid"},
                      require_cbid=False, validation="hardware",
                      why="the OpenCL loader layer (PoCL in CI): cl* names, local memory as shared memory, no "
                          "registers or occupancy"),
}
# clEnqueueReadBuffer/WriteBuffer both stand for the generic memcpy (no single name).
PROFILES["opencl"].extra_generic = {"clEnqueueReadBuffer": "memcpy", "clEnqueueWriteBuffer": "memcpy"}


# ---- profiles from the facts: what the backend's descriptor says (`devtrace list --json`, the
# public devtrace_backend_info) and what its emulator says of the vendor (`emu-run --lib LIB
# --describe`: the vendor's runtime name of each generic call, whether its runtime records
# carry the callback id). A new backend needs nothing here. ----

# What a backend's records lack or add beyond what its capabilities say (the record content
# of one vendor, not derivable from the descriptor's public facts).
RECORD_QUIRKS = {
    # No ROCtracer record or HIP callback carries the register count (PROFILES["roctracer"]).
    "roctracer": {"absent_kernel_keys": REGISTER_KEYS, "require_occupancy": True},
    # MSPTI API records carry their API level.
    "mspti": {"extra_runtime_keys": {"level"}},
}


def backend_facts(devtrace):
    """name -> the backend's public facts, from `devtrace list --json` (every compiled-in backend and none)."""
    proc = subprocess.run([devtrace, "list", "--json"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("%s list --json exited %d: %s" % (devtrace, proc.returncode, proc.stderr.strip()))
    return collections.OrderedDict((b["name"], b) for b in json.loads(proc.stdout)["backends"])


def emulator_facts(emu_run, lib):
    """The emulated vendor's facts (`emu-run --lib LIB --describe`)."""
    proc = subprocess.run([emu_run, "--lib", lib, "--describe"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("emu-run --lib %s --describe exited %d: %s" % (lib, proc.returncode, proc.stderr.strip()))
    return json.loads(proc.stdout)


def profile_from_facts(info, emulator):
    """The profile of backend info (one entry of backend_facts) traced against emulator
    (emulator_facts): runtime category and validation level from the descriptor; launch,
    register and occupancy keys absent where the capabilities say the records lack them;
    the runtime names and whether a cbid is carried from the emulated vendor."""
    caps = info["capabilities"]
    absent = set()
    if not caps["kernel_launch"]:
        absent |= LAUNCH_KEYS | REGISTER_KEYS
    if not caps["occupancy"]:
        absent |= OCCUPANCY_KEYS
    cbid = bool(emulator["records_cbid"])
    names = {generic: call["name"] for generic, call in emulator["calls"].items() if call["name"]}
    quirks = dict(RECORD_QUIRKS.get(info["name"], {}))
    absent |= set(quirks.pop("absent_kernel_keys", ()))
    return Profile(info["name"], info["runtime_category"], names, absent_kernel_keys=absent,
                   absent_runtime_keys=() if cbid else {"cbid"}, require_cbid=cbid,
                   validation=info["validation"].split(":", 1)[0],
                   why="%s (%s): %s names%s, against the %s emulator" % (
                       info["description"], info["validation"].split(":", 1)[0], names.get("launch", "?"),
                       " with cbids" if cbid else ", no cbid", emulator["vendor"]), **quirks)


class WorkloadError(Exception):
    pass


class Workload:
    """What a tracer must report for one run of a .wl file (grammar in parity.wl)."""

    def __init__(self, path):
        self.kernels = self.memcpys = self.memsets = self.runtime = 0
        self.op_ns = collections.OrderedDict()   # op id -> expected device ns
        self.op_events = collections.Counter()   # op id -> device statements
        self.unattributed_ns = 0
        self.calls = []                          # runtime calls in order: (generic, innermost op id or None)
        self.devices = set()
        self.kernel_names = []                   # mangled names, in launch order
        self.launches = []                       # (mangled name, grid [x,y,z], block [x,y,z]), in order
        self.op_names = collections.OrderedDict()  # op id -> name (op push name=)
        self.op_device = collections.defaultdict(list)  # op id (None: outside ops) -> device statements,
        #               in order: (trace cat, mangled kernel name or the copy's/fill's trace name, bytes)
        stack = []
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                words = text.split()
                stmt, kv = words[0], {}
                for w in words[1:]:
                    if "=" in w:
                        k, v = w.split("=", 1)
                        kv[k] = v
                    else:
                        kv[w] = None
                top = stack[-1] if stack else None
                if stmt == "device":
                    self.devices.add(int(kv["id"]))
                elif stmt == "op":
                    if "push" in kv:
                        op_id = int(kv["id"])
                        stack.append(op_id)
                        self.op_ns.setdefault(op_id, 0)
                        self.op_names.setdefault(op_id, kv.get("name", ""))
                    elif "pop" in kv:
                        if not stack:
                            raise WorkloadError("%s:%d: op pop without push" % (path, lineno))
                        stack.pop()
                elif stmt == "api":
                    self.runtime += 1
                    self.calls.append((kv["call"], top))
                elif stmt in ("launch", "memcpy", "memset"):
                    self.runtime += 1
                    self.calls.append(({"launch": "launch", "memcpy": "memcpy", "memset": "memset"}[stmt], top))
                    if stmt == "launch":
                        self.kernels += 1
                        self.kernel_names.append(kv["kernel"])
                        self.op_device[top].append(("kernel", kv["kernel"], None))
                        self.launches.append((kv["kernel"], [int(x) for x in kv["grid"].split(",")],
                                              [int(x) for x in kv["block"].split(",")]))
                    elif stmt == "memcpy":
                        self.memcpys += 1
                        self.op_device[top].append(("gpu_memcpy", MEMCPY_NAMES.get(kv["dir"]), int(kv["bytes"])))
                    else:
                        self.memsets += 1
                        self.op_device[top].append(("gpu_memset", MEMSET_NAME, int(kv["bytes"])))
                    dur = int(kv["dur_ns"])
                    if top is None:
                        self.unattributed_ns += dur
                    else:
                        self.op_ns[top] += dur
                        self.op_events[top] += 1
                elif stmt == "sync":
                    self.runtime += 1
                    self.calls.append(("sync_device" if kv.get("what") == "device" else "sync_stream", top))
                else:
                    raise WorkloadError("%s:%d: unknown statement %s" % (path, lineno, stmt))


class Checker:
    def __init__(self):
        self.failed = []
        self.passed = 0

    def info(self, what):
        print("note: " + what)

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed.append(what)
        return ok


def ns(us):
    return int(round(float(us) * 1000.0))


def demangle_reference(names):
    """name -> c++filt's demangling (unchanged when not a valid mangling); None without c++filt."""
    tool = shutil.which("c++filt")
    if not tool:
        return None
    if not names:
        return {}
    out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True).stdout.split("\n")
    return dict(zip(names, out))


def legacy_profile(runtime_cat, vendor, require_cbid=True, require_occupancy=False):
    """The profile the old arguments describe: the vendor's names and nothing else of its
    profile (no backend, validation or absent-key checks), as check_trace always did."""
    return Profile(None, runtime_cat, VENDOR_NAMES.get(vendor), require_cbid=require_cbid,
                   require_occupancy=require_occupancy)


def check_trace(trace, wl, runtime_cat=None, vendor=None, require_cbid=True, require_occupancy=False, profile=None):
    """DESIGN.md's parity assertions. Either a profile (PROFILES[name], possibly .replace()d),
    or the legacy arguments (runtime category, vendor names table, cbid, occupancy)."""
    if profile is None:
        profile = legacy_profile(runtime_cat, vendor, require_cbid, require_occupancy)
    runtime_cat = profile.runtime_category
    require_cbid, require_occupancy = profile.require_cbid, profile.require_occupancy
    kernel_keys = set(KERNEL_KEYS) - profile.absent_kernel_keys
    runtime_keys = (set(RUNTIME_KEYS) - profile.absent_runtime_keys) | profile.extra_runtime_keys
    c = Checker()
    events = trace.get("traceEvents", [])
    meta = trace.get("devtrace", {})
    base = int(trace.get("baseTimeNanoseconds", 0))
    xs = [e for e in events if e.get("ph") == "X"]
    by_cat = collections.defaultdict(list)
    for e in xs:
        by_cat[e.get("cat")].append(e)
    device = [e for e in xs if e.get("cat") in DEVICE_CATS]
    runtime = by_cat.get(runtime_cat, [])

    # 1. categories
    for cat in DEVICE_CATS + (runtime_cat,):
        want = {"kernel": wl.kernels, "gpu_memcpy": wl.memcpys, "gpu_memset": wl.memsets}.get(cat, wl.runtime)
        c.check(not want or by_cat.get(cat), "1. category %s missing" % cat)
    flows = [e for e in events if e.get("ph") in ("s", "f")]
    c.check(all(e.get("cat") == "ac2g" for e in flows) and flows, "1. ac2g flow events missing or miscategorised")
    metas = collections.Counter(e.get("name") for e in events if e.get("ph") == "M")
    c.check(metas.get("process_name", 0) > 0, "1. no process_name metadata")
    c.check(metas.get("thread_name", 0) > 0, "1. no thread_name metadata")

    # 2. counts
    got = {"kernel": len(by_cat.get("kernel", [])), "memcpy": len(by_cat.get("gpu_memcpy", [])),
           "memset": len(by_cat.get("gpu_memset", [])), "runtime": len(runtime)}
    want = {"kernel": wl.kernels, "memcpy": wl.memcpys, "memset": wl.memsets, "runtime": wl.runtime}
    for k in want:
        c.check(got[k] == want[k], "2. %s=%d, the workload has %d" % (k, got[k], want[k]))
    counts = meta.get("counts", {})
    for k in want:
        c.check(counts.get(k) == got[k], "2. devtrace.counts.%s=%s but the trace has %d" % (k, counts.get(k), got[k]))

    # 3. flows paired, one pair per device event
    s_ids = collections.Counter(e.get("id") for e in flows if e.get("ph") == "s")
    f_ids = collections.Counter(e.get("id") for e in flows if e.get("ph") == "f")
    c.check(set(s_ids) == set(f_ids), "3. flow ids unpaired: %d s-only, %d f-only"
            % (len(set(s_ids) - set(f_ids)), len(set(f_ids) - set(s_ids))))
    c.check(all(n == 1 for n in s_ids.values()) and all(n == 1 for n in f_ids.values()), "3. a flow id repeats")
    c.check(len(f_ids) == len(device), "3. %d flow pairs for %d device events" % (len(f_ids), len(device)))
    c.check(all(e.get("bp") == "e" for e in flows if e.get("ph") == "f"), "3. an f flow lacks bp=e")
    dev_corr = collections.Counter(e.get("args", {}).get("correlation") for e in device)
    c.check(set(f_ids) == set(dev_corr), "3. flow ids are not the device events' correlation ids")

    # 4. arg keys
    props = {int(p.get("id", -1)) for p in trace.get("deviceProperties", [])}
    bad = collections.Counter()
    for e in by_cat.get("kernel", []):
        keys = set(e.get("args", {}))
        need = kernel_keys - {"External id"}
        if e.get("pid") not in props and not require_occupancy:
            need -= OCCUPANCY_KEYS
        if not (need <= keys <= kernel_keys):
            bad["kernel %s" % sorted(keys ^ kernel_keys)] += 1
    for e in by_cat.get("gpu_memcpy", []) + by_cat.get("gpu_memset", []):
        keys = set(e.get("args", {}))
        if not (MEM_KEYS - {"External id"} <= keys <= MEM_KEYS):
            bad["%s %s" % (e.get("cat"), sorted(keys ^ MEM_KEYS))] += 1
    for e in runtime:
        keys = set(e.get("args", {}))
        need = {"correlation"} | ({"cbid"} if require_cbid else set()) | set(profile.extra_runtime_keys)
        if not (need <= keys <= runtime_keys):
            bad["runtime %s" % sorted(keys ^ runtime_keys)] += 1
    for what, n in bad.items():
        c.check(False, "4. %d event(s) with wrong arg keys: %s (difference from the backend's key set)" % (n, what))
    if require_occupancy or props:
        c.check(all(e.get("pid") in props for e in device if e.get("cat") == "kernel"),
                "4. a kernel's device has no deviceProperties (no occupancy keys)")

    # 5. device-time attribution, per op id (0 included), nested ops to the innermost
    got_ns = collections.Counter()
    unattributed = 0
    for e in device:
        args = e.get("args", {})
        if "External id" in args:
            got_ns[int(args["External id"])] += ns(e["dur"])
        else:
            unattributed += ns(e["dur"])
    for op_id, want_ns in wl.op_ns.items():
        tol = max(1000, want_ns // 100)
        c.check(abs(got_ns.get(op_id, 0) - want_ns) <= tol,
                "5. op %d: device time %d ns, the workload says %d ns (tolerance %d)"
                % (op_id, got_ns.get(op_id, 0), want_ns, tol))
    stray = set(got_ns) - set(wl.op_ns)
    c.check(not stray, "5. device events attributed to ids the workload never pushed: %s" % sorted(stray))
    c.check(abs(unattributed - wl.unattributed_ns) <= max(1000, wl.unattributed_ns // 100),
            "5. unattributed device time %d ns, the workload has %d ns" % (unattributed, wl.unattributed_ns))

    # 6. names
    knames = sorted({e.get("name", "") for e in by_cat.get("kernel", [])})
    # Every name the workload launches must appear exactly as a correct Itanium demangler
    # writes it (c++filt from binutils, the reference); a name that is not a valid
    # mangling stays raw (DESIGN.md: "else the raw name"), and is reported, not hidden.
    wl_kernels = sorted(set(wl.kernel_names))
    want = demangle_reference(wl_kernels)
    if want is None:
        c.check(False, "6. c++filt (binutils) is needed to know the reference demangling")
    else:
        c.check(sorted(set(want.values())) == knames,
                "6. kernel names %s differ from the reference demangling %s" % (knames, sorted(set(want.values()))))
        invalid = sorted(n for n, d in want.items() if n == d and n.startswith("_Z"))
        if invalid:
            c.info("6. %d of the workload's kernel names are not valid Itanium manglings (c++filt cannot "
                   "demangle them either) and stay raw: %s" % (len(invalid), ", ".join(n[:40] + "..." for n in invalid)))
    c.check(not knames or any("::" in n for n in knames), "6. no kernel name contains '::'")
    rnames = [e.get("name", "") for e in runtime]
    fallbacks = sorted({n for n in rnames if FALLBACK_NAME.search(n)})
    c.check(not fallbacks, "6. fallback runtime names: %s" % fallbacks)
    table = profile.names
    if table:
        got_names = collections.Counter(rnames)
        want_names = collections.Counter(table[g] for g, _ in wl.calls if table.get(g))
        if all(table.get(g) for g, _ in wl.calls):
            diff = dict((got_names - want_names) + (want_names - got_names))
            c.check(not diff, "6. runtime names differ from the workload's calls in %s names (count "
                              "differences): %s" % (profile.backend or vendor, diff))
        else:  # some calls have no single vendor name: the named ones must all be there
            c.check(not (want_names - got_names), "6. runtime names missing: %s" % dict(want_names - got_names))
        tids = {(e.get("pid"), e.get("tid")) for e in runtime}
        if len(tids) == 1 and len(runtime) == len(wl.calls):
            seq = sorted(runtime, key=lambda e: float(e["ts"]))
            mism = 0
            for e, (generic, op) in zip(seq, wl.calls):
                ext = e.get("args", {}).get("External id")
                if (table.get(generic) and e.get("name") != table[generic]) or ext != op:
                    mism += 1
            c.check(mism == 0, "6. %d runtime event(s) out of the workload's order or with the wrong External id"
                    % mism)

    # 7. capture window; device work at or after its launch call
    window = meta.get("window")
    if c.check(isinstance(window, list) and len(window) == 2, "7. devtrace.window missing"):
        lo, hi = int(window[0]), int(window[1])
        outside = 0
        for e in device + runtime:
            start = base + ns(e["ts"])
            end = start + ns(e["dur"])
            if start < lo - 1 or end > hi + 1:
                outside += 1
        c.check(outside == 0, "7. %d event(s) outside the capture window" % outside)
    launch_start = {}
    for e in runtime:
        launch_start[e.get("args", {}).get("correlation")] = ns(e["ts"])
    early = 0
    for e in device:
        t = launch_start.get(e.get("args", {}).get("correlation"))
        if t is not None and ns(e["ts"]) < t:
            early += 1
    c.check(early == 0, "7. %d device event(s) start before their launch call" % early)

    check_profile_facts(c, trace, profile)
    return c


def check_profile_facts(c, trace, profile):
    """The profile's own facts: which backend wrote the trace, how far that backend is
    validated, the keys it has no data for omitted (never written as zeros), and grid/block
    on every kernel when it has the launch configuration. Workload-independent."""
    meta = trace.get("devtrace", {})
    xs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    kernels = [e for e in xs if e.get("cat") == "kernel"]
    runtime = [e for e in xs if e.get("cat") == profile.runtime_category]
    if profile.backend is not None:
        c.check(meta.get("backend") == profile.backend, "backend %s, not %s (unavailable: %s)"
                % (meta.get("backend"), profile.backend, meta.get("unavailable")))
    if profile.validation is not None:
        level = str(meta.get("validation", "")).split(":", 1)[0]
        c.check(level == profile.validation, "validation %r is not at level %r"
                % (meta.get("validation"), profile.validation))
    if profile.absent_kernel_keys:
        extra = collections.Counter(k for e in kernels for k in set(e.get("args", {})) & profile.absent_kernel_keys)
        c.check(not extra, "4. %s kernels carry keys it has no data for: %s" % (profile.backend, dict(extra)))
    if profile.absent_runtime_keys:
        extra = collections.Counter(k for e in runtime for k in set(e.get("args", {})) & profile.absent_runtime_keys)
        c.check(not extra, "4. %s runtime events carry keys it has no data for: %s" % (profile.backend, dict(extra)))
    if profile.backend is not None and profile.has_launch:
        nogrid = [e.get("name") for e in kernels if not LAUNCH_KEYS <= set(e.get("args", {}))]
        c.check(not nogrid, "4. %d kernel(s) without grid/block, e.g. %s" % (len(nogrid), nogrid[:1]))
    return c


def lookup(meta, path):
    """The value at a dotted path of the devtrace section (None when absent)."""
    node = meta
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def check_expect(c, meta, items):
    """--expect PATH=VALUE: each devtrace-section value, compared as text."""
    for item in items:
        path, sep, value = item.partition("=")
        if not sep:
            c.check(False, "--expect %r is not PATH=VALUE" % item)
            continue
        got = lookup(meta, path)
        c.check(str(got) == value, "devtrace.%s = %s, expected %s" % (path, got, value))
    return c


def profile_from_args(name, runtime_category=None, no_cbid=False, require_occupancy=False):
    """PROFILES[name], with the legacy per-item overrides applied."""
    if name not in PROFILES:
        raise KeyError("unknown profile %r (known: %s)" % (name, ", ".join(sorted(PROFILES))))
    changes = {}
    if runtime_category:
        changes["runtime_category"] = runtime_category
    if no_cbid:
        changes["require_cbid"] = False
    if require_occupancy:
        changes["require_occupancy"] = True
    return PROFILES[name].replace(**changes)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("workload")
    ap.add_argument("--profile", "--vendor", dest="profile", default="cupti",
                    help="backend profile: %s (--vendor: the old spelling)" % ", ".join(sorted(PROFILES)))
    ap.add_argument("--runtime-category", help="override the profile's runtime category")
    ap.add_argument("--no-cbid", action="store_true", help="runtime events need not carry a cbid")
    ap.add_argument("--require-occupancy", action="store_true")
    ap.add_argument("--expect", nargs="*", default=[], metavar="PATH=VALUE",
                    help="devtrace-section values, e.g. counts.kernel=17 dropped.vendor=0")
    args = ap.parse_args(argv)
    try:
        profile = profile_from_args(args.profile, args.runtime_category, args.no_cbid, args.require_occupancy)
        with open(args.trace, encoding="utf-8") as f:
            trace = json.load(f)
        wl = Workload(args.workload)
    except (OSError, ValueError, WorkloadError, KeyError) as e:
        print("check_parity: %s" % e, file=sys.stderr)
        return 2
    c = check_trace(trace, wl, profile=profile)
    check_expect(c, trace.get("devtrace", {}), args.expect)
    for what in c.failed:
        print("FAIL %s" % what)
    print("parity (%s): %d assertion(s) hold, %d fail (kernel=%d memcpy=%d memset=%d runtime=%d expected)"
          % (profile.backend, c.passed, len(c.failed), wl.kernels, wl.memcpys, wl.memsets, wl.runtime))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
