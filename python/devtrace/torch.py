"""devtrace.torch: PyTorch's ops in the device timeline, on any devtrace backend.

Every op PyTorch records through at::RecordFunction (aten ops, ``record_function``
scopes, autograd Functions and backward functions, on any thread) becomes a ``cpu_op``
event with Kineto's args (``External id``, ``Sequence number``, ``Fwd thread id``), and
the device work launched inside an op carries the External id of the innermost op. The
observer is a global RecordFunction callback (observer.cpp) built at first use against
this torch's headers (observer_build.py).

Two ways: ``devtrace record --torch -- python3 train.py`` (nothing to change in the
program), or in process, shaped like torch.profiler:

    with devtrace.torch.profile("trace.json", schedule=devtrace.torch.schedule(wait=1, warmup=1, active=2)) as p:
        for batch in data:
            train_step(batch)
            p.step()
    print(p.key_averages().table())
"""
import collections
import ctypes
import os
import sys

import devtrace
from devtrace.observer_build import ObserverUnavailable, observer_library

__all__ = ["profile", "schedule", "ProfilerAction", "install_observer", "ObserverUnavailable", "KeyAverages"]

_observer = None  # the observer library, loaded once
_installed = False  # its RecordFunction callback is registered with torch
_holders = 0  # profiles recording ops now; the callback is removed when the last one ends
_for_record = False  # devtrace record --torch: installed for the life of the process


def _load_observer(torch):
    global _observer
    if _observer is None:
        if torch is None:
            import torch
        obs = ctypes.CDLL(observer_library(torch))
        obs.devtrace_torch_observer_install.restype = ctypes.c_int
        obs.devtrace_torch_observer_install.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        obs.devtrace_torch_observer_remove.restype = None
        for name in ("devtrace_torch_observer_installed", "devtrace_torch_global_callbacks"):
            getattr(obs, name).restype = ctypes.c_int
        _observer = obs
    return _observer


def install_observer(torch=None):
    """Installs the RecordFunction observer (when it is not), forwarding to the process's one
    libdevtrace instance. Returns the observer's path; raises ObserverUnavailable."""
    global _installed
    obs = _load_observer(torch)
    if _installed:
        return obs._name
    lib = devtrace.library()
    # The functions of the instance this package loaded, by address: a lookup by name from
    # the observer could find nothing (the OpenCL loader loads the layer RTLD_LOCAL) or
    # another copy of the library.
    enter = ctypes.cast(lib.devtrace_op_enter, ctypes.c_void_p).value
    exit_ = ctypes.cast(lib.devtrace_op_exit, ctypes.c_void_p).value
    if obs.devtrace_torch_observer_install(enter, exit_) != 0:
        raise ObserverUnavailable("torch refused the RecordFunction callback (at::addGlobalCallback)")
    _installed = True
    return obs._name


def remove_observer():
    """Removes the RecordFunction callback: later ops cost what they cost without devtrace."""
    global _installed
    if _observer is not None and _installed:
        _observer.devtrace_torch_observer_remove()
        _installed = False


def _hold_observer():
    global _holders
    install_observer()
    _holders += 1


def _release_observer():
    global _holders
    _holders -= 1
    if _holders == 0 and not _for_record:
        remove_observer()


def observer_state():
    """(installed, torch's global callbacks): whether devtrace's callback is registered, and
    whether torch has any global RecordFunction callback at all (at::hasGlobalCallbacks)."""
    if _observer is None:
        return False, None
    return bool(_observer.devtrace_torch_observer_installed()), bool(_observer.devtrace_torch_global_callbacks())


def attach_to_record(torch):
    """Under devtrace record --torch: called once torch is imported. Starts the recorder's
    session now (ops before the program's first device call are kept) and installs the
    observer; without one, says why on stderr and in the trace (device events are still
    recorded)."""
    lib = devtrace.library()
    session = lib.devtrace_default_session()
    if not session:
        return False  # not the process devtrace record runs (a child of it, or not traced)
    global _for_record
    try:
        install_observer(torch)
        _for_record = True
    except ObserverUnavailable as e:
        print("devtrace: PyTorch ops are not recorded: %s; device events are still recorded" % e,
              file=sys.stderr, flush=True)
        lib.devtrace_add_note(session, ("PyTorch ops are not recorded: %s" % e).encode())
        return False
    lib.devtrace_add_note(session, ("PyTorch ops: torch %s, every op through a global RecordFunction observer"
                                    % torch.__version__).encode())
    return True


class ProfilerAction:
    NONE = "none"
    WARMUP = "warmup"
    RECORD = "record"
    RECORD_AND_SAVE = "record_and_save"


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule's cycles: skip_first steps, then cycles of wait, warmup and
    active steps, repeat times (0: until the end). Returns step -> ProfilerAction."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule: wait, warmup, repeat and skip_first must be >= 0 and active > 0")

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    schedule_fn.cycles = repeat  # 0: unbounded
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


_always_record.cycles = 1


class OpAverage:
    """One op name's totals: count, CPU time (its cpu_op events) and device time: self (the
    device events carrying its External id) and total (with the ops nested in it)."""
    __slots__ = ("key", "count", "cpu_time_total_ns", "device_time_self_ns", "device_time_total_ns", "device_events")

    def __init__(self, key):
        self.key, self.count = key, 0
        self.cpu_time_total_ns = self.device_time_self_ns = self.device_time_total_ns = self.device_events = 0


class KeyAverages(list):
    """A list of OpAverage, like torch.profiler's key_averages()."""

    def table(self, sort_by="device_time_total", row_limit=100):
        keys = {"device_time_total": lambda a: a.device_time_total_ns, "device_time": lambda a: a.device_time_self_ns,
                "cpu_time_total": lambda a: a.cpu_time_total_ns, "count": lambda a: a.count}
        if sort_by not in keys:
            raise ValueError("sort_by: one of %s" % ", ".join(keys))
        rows = sorted(self, key=lambda a: (-keys[sort_by](a), a.key))[:row_limit] if row_limit else []
        width = max([len("Name")] + [len(a.key) for a in rows])
        width = min(width, 60)
        head = ("%-*s %8s %14s %14s %14s %8s" % (width, "Name", "Calls", "CPU total us", "Device self us",
                                                 "Device total us", "Device#"))
        line = "-" * len(head)
        out = [line, head, line]
        for a in rows:
            name = a.key if len(a.key) <= width else a.key[:width - 3] + "..."
            out.append("%-*s %8d %14.3f %14.3f %14.3f %8d" % (width, name, a.count, a.cpu_time_total_ns / 1e3,
                                                             a.device_time_self_ns / 1e3,
                                                             a.device_time_total_ns / 1e3, a.device_events))
        out.append(line)
        cpu = sum(a.cpu_time_total_ns for a in self if a.key.startswith("ProfilerStep#"))
        dev = sum(a.device_time_self_ns for a in self)
        out.append("Device time attributed to ops: %.3f us%s" % (dev / 1e3, "; CPU time in steps: %.3f us" % (cpu / 1e3)
                                                                  if cpu else ""))
        return "\n".join(out)


def key_averages_of(events):
    """KeyAverages of finalised events [(devtrace.Event, name)]: per op name."""
    ops = [(ev, name) for ev, name in events if ev.kind == 5]
    self_ns = collections.Counter()
    self_count = collections.Counter()
    for ev, _ in events:
        if ev.kind in devtrace.DEVICE_KINDS and ev.flags & devtrace.HAS_EXTERNAL:
            self_ns[ev.external_id] += ev.end_ns - ev.start_ns
            self_count[ev.external_id] += 1
    # Nesting per thread: an op's total is its own device time plus its children's totals.
    lanes = collections.defaultdict(list)
    for i, (ev, _) in enumerate(ops):
        lanes[(ev.device, ev.stream)].append(i)
    parent = [-1] * len(ops)
    order = []
    for idx in lanes.values():
        idx.sort(key=lambda i: (ops[i][0].start_ns, -ops[i][0].end_ns))
        stack = []
        for i in idx:
            ev = ops[i][0]
            while stack and ops[stack[-1]][0].end_ns < ev.end_ns:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
            order.append(i)
    total = [self_ns[ev.external_id] for ev, _ in ops]
    for i in reversed(order):
        if parent[i] >= 0:
            total[parent[i]] += total[i]
    by_name = collections.OrderedDict()
    for i, (ev, name) in enumerate(ops):
        a = by_name.get(name) or by_name.setdefault(name, OpAverage(name))
        a.count += 1
        a.cpu_time_total_ns += ev.end_ns - ev.start_ns
        a.device_time_self_ns += self_ns[ev.external_id]
        a.device_events += self_count[ev.external_id]
        a.device_time_total_ns += total[i]
    return KeyAverages(by_name.values())


_active = None  # the profile recording now (profiles do not nest)


def _under_record():
    """Whether devtrace record runs this process (it records it whole; its session is the
    default one)."""
    if not (os.environ.get("DEVTRACE_COLLECT_SOCKET") or os.environ.get("DEVTRACE_COLLECT_FD")):
        return False
    return bool(devtrace.library().devtrace_default_session())


def _cycle_path(path, cycle, numbered):
    if path is None:
        return None
    if "%n" in path:
        return path.replace("%n", str(cycle))
    if not numbered:
        return path
    for ext in (".json.gz", ".json"):
        if path.endswith(ext):
            return "%s.%d%s" % (path[:-len(ext)], cycle, ext)
    return "%s.%d" % (path, cycle)


class profile:
    """In-process profiling shaped like torch.profiler.profile: a context manager; step()
    marks the end of a step (``ProfilerStep#N`` ops). With a schedule, one trace per active
    cycle: PATH when the schedule has one cycle (repeat=1, or no schedule), else PATH with
    the cycle number before the extension (trace.1.json, trace.2.json; or where PATH has
    %n). on_trace_ready(p) is called after each trace is written. key_averages() covers the
    last trace. backend: as devtrace_open's (auto, opencl, cupti, ...).

    For OpenCL in process, create the profile before the program's first OpenCL call (the
    loader loads the devtrace layer when it initialises), or run under devtrace record."""

    def __init__(self, path="devtrace-trace.json", backend="auto", schedule=None, on_trace_ready=None,
                 record_steps=True):
        self.path, self.backend = path, backend
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_steps = record_steps
        self.step_num = 0
        self.trace_paths = []
        self.cycle = 0
        self._events = []
        self._session = None
        self._step_fn = None
        self._observer_error = None
        self._holding = False
        self._under_record = _under_record()
        if not self._under_record and _active is None:
            self._session = devtrace.Session(backend=backend, start=False)  # binds the backend now

    # -- torch.profiler's shape
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if self._under_record:
            print("devtrace.torch.profile: this process runs under devtrace record, which records it; "
                  "profile() writes no trace of its own", file=sys.stderr)
            return
        global _active
        if _active is not None:
            raise RuntimeError("devtrace.torch.profile: another profile is already recording in this process; "
                               "profiles do not nest (torch.profiler refuses it too: 'Profiler is already enabled "
                               "on this thread.'): stop the outer one first")
        _active = self
        try:
            _hold_observer()
            self._holding = True
        except ObserverUnavailable as e:
            self._observer_error = str(e)
            print("devtrace: PyTorch ops are not recorded: %s; device events are still recorded" % e,
                  file=sys.stderr)
        self.current_action = self.schedule(self.step_num)
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self):
        global _active
        if self._under_record or _active is not self:
            return  # not started, or refused
        self._exit_step()
        self._transit(self.current_action, None)
        if self._holding:
            self._holding = False
            _release_observer()
        _active = None

    def step(self):
        if self._under_record:
            return
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._enter_step()

    def key_averages(self):
        return key_averages_of(self._events)

    def events(self):
        """The last trace's events: [(devtrace.Event, name)]."""
        return list(self._events)

    # -- inside
    def _enter_step(self):
        if self.record_steps and self._session_recording():
            import torch
            self._step_fn = torch.autograd.profiler.record_function("ProfilerStep#%d" % self.step_num)
            self._step_fn.__enter__()

    def _exit_step(self):
        if self._step_fn is not None:
            self._step_fn.__exit__(None, None, None)
            self._step_fn = None

    def _session_recording(self):
        return self._session is not None and getattr(self, "_started", False)

    def _transit(self, prev, now):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and now not in recording):
            self._save()
        if now in (ProfilerAction.WARMUP,) + recording and self._session is None:
            self._session = devtrace.Session(backend=self.backend, start=False)
        if now in recording and not getattr(self, "_started", False):
            self._session.make_default()
            self._session.start()
            self._started = True

    def _save(self):
        s = self._session
        if s is None or not getattr(self, "_started", False):
            return
        self._started = False
        s.stop()
        s.make_default(False)
        if self._observer_error:
            s.note("PyTorch ops are not recorded: %s" % self._observer_error)
        self.cycle += 1
        self._events = s.events()
        path = _cycle_path(self.path, self.cycle, getattr(self.schedule, "cycles", 0) != 1)
        if path:
            s.write(path)
            self.trace_paths.append(path)
        s.close()
        self._session = None
        if self.on_trace_ready:
            self.on_trace_ready(self)
