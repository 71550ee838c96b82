"""devtrace.torch: PyTorch's ops in the device timeline, on any devtrace backend.

Every op PyTorch records through at::RecordFunction (aten ops, ``record_function``
scopes, autograd Functions and backward functions, on any thread) becomes a ``cpu_op``
event with Kineto's args (``External id``, ``Sequence number``, ``Fwd thread id``), and
the device work launched inside an op carries the External id of the innermost op. The
observer is a global RecordFunction callback (observer.cpp) built at first use against
this torch's headers (observer_build.py).

Two ways: ``devtrace record --torch -- python3 train.py`` (nothing to change in the
program), or in process, shaped like torch.profiler:

    from torch.profiler import ProfilerActivity, schedule, tensorboard_trace_handler
    with devtrace.torch.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                schedule=schedule(wait=1, warmup=1, active=2),
                                on_trace_ready=tensorboard_trace_handler("log"), record_shapes=True) as p:
        for batch in data:
            train_step(batch)
            p.step()
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
"""
import collections
import ctypes
import gzip
import json
import os
import sys

import devtrace
from devtrace.observer_build import ObserverUnavailable, observer_library

__all__ = ["profile", "schedule", "ProfilerAction", "install_observer", "remove_observer", "ObserverUnavailable",
           "EventList", "FunctionEvent", "FunctionEventAvg"]

_observer = None  # the observer library, loaded once
_installed = False  # its RecordFunction callback is registered with torch
_holders = 0  # profiles recording ops now; the callback is removed when the last one ends
_for_record = False  # devtrace record --torch: installed for the life of the process
_flags = 0  # the installed callback's flags (observer_api.h)
SHAPES = 1  # DEVTRACE_OBSERVER_SHAPES: the ops' input shapes and types are kept
EMPTY = 2  # DEVTRACE_OBSERVER_EMPTY: callbacks that return at once (the benchmark's floor)
_SHAPE_FN = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p)


def _load_observer(torch):
    global _observer
    if _observer is None:
        if torch is None:
            import torch
        obs = ctypes.CDLL(observer_library(torch))
        obs.devtrace_torch_observer_install.restype = ctypes.c_int
        obs.devtrace_torch_observer_install.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        obs.devtrace_torch_observer_take_shapes.restype = ctypes.c_size_t
        obs.devtrace_torch_observer_take_shapes.argtypes = [_SHAPE_FN, ctypes.c_void_p]
        obs.devtrace_torch_observer_remove.restype = None
        for name in ("devtrace_torch_observer_installed", "devtrace_torch_global_callbacks"):
            getattr(obs, name).restype = ctypes.c_int
        _observer = obs
    return _observer


def install_observer(torch=None, flags=0, null=False):
    """Installs the RecordFunction observer (when it is not, or with other flags), forwarding
    to the process's one libdevtrace instance (null: to functions that do nothing, what the
    benchmark measures the callback alone with; flags EMPTY with null: callbacks that return
    at once, the benchmark's floor). Returns the observer's path; raises ObserverUnavailable."""
    global _installed, _flags
    obs = _load_observer(torch)
    if _installed and flags == _flags and not null:
        return obs._name
    # The functions of the instance this package loaded, by address: a lookup by name from
    # the observer could find nothing (the OpenCL loader loads the layer RTLD_LOCAL) or
    # another copy of the library.
    lib = obs if null else devtrace.library()
    enter = ctypes.cast(lib.devtrace_torch_observer_null_enter if null else lib.devtrace_op_enter, ctypes.c_void_p).value
    exit_ = ctypes.cast(lib.devtrace_torch_observer_null_exit if null else lib.devtrace_op_exit, ctypes.c_void_p).value
    if obs.devtrace_torch_observer_install(enter, exit_, flags) != 0:
        raise ObserverUnavailable("torch refused the RecordFunction callback (at::addGlobalCallback)")
    _installed, _flags = True, flags
    return obs._name


def remove_observer():
    """Removes the RecordFunction callback: later ops cost what they cost without devtrace."""
    global _installed
    if _observer is not None and _installed:
        _observer.devtrace_torch_observer_remove()
        _installed = False


def _hold_observer(flags):
    global _holders
    install_observer(flags=flags)
    _holders += 1


def _release_observer():
    global _holders
    _holders -= 1
    if _holders == 0 and not _for_record:
        remove_observer()
    elif _flags:
        install_observer(flags=0)  # devtrace record's own: no shapes


def _take_shapes():
    """{op id: (input dims, input types)} kept by the observer since the last call."""
    out = {}
    if _observer is None:
        return out

    def take(op_id, dims, types, user):
        out[op_id] = (json.loads(dims), json.loads(types))

    _observer.devtrace_torch_observer_take_shapes(_SHAPE_FN(take), None)
    return out


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


def _action(a):
    """An action of torch.profiler's schedule (its ProfilerAction enum) or of ours, as ours."""
    return str(getattr(a, "name", a)).lower()


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule's cycles: skip_first steps, then cycles of wait, warmup and
    active steps, repeat times (0: until the end). Returns step -> ProfilerAction.
    torch.profiler.schedule(...) itself is accepted too."""
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


# -- torch.profiler's results: events, their averages and the table, with torch's attribute
# names (torch.autograd.profiler_util's), times in microseconds. "device" is torch's "cuda":
# both names are there (self_cuda_time_total and self_device_time_total, ...).

def _format_time(us):
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


def _format_share(us, total):
    return "NaN" if total == 0 else "%.2f%%" % (us * 100.0 / total)


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


Kernel = collections.namedtuple("Kernel", ["name", "device", "duration"])


class _Times:
    """The *_str and cuda_* names torch has beside each time."""
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_time = property(lambda self: self.device_time)
    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = cuda_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = cuda_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = self_cuda_time_total_str = property(
        lambda self: _format_time(self.self_device_time_total))
    # Not recorded (profile_memory, with_flops, with_stack are not supported): torch's zero values.
    cpu_memory_usage = self_cpu_memory_usage = cuda_memory_usage = self_cuda_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = is_remote = is_legacy = False
    device_type = "CPU"
    scope = 0


class FunctionEvent(_Times):
    """One op as torch.profiler's events() gives it: name (key), id (the External id), thread,
    time_range (start, end in us), cpu_parent, cpu_children, sequence_nr, fwd_thread,
    input_shapes (with record_shapes), kernels (the device events carrying its External id),
    and the times."""

    def __init__(self, op_id, name, thread, start_us, end_us, sequence_nr=-1, fwd_thread=0, input_shapes=None,
                 input_types=None):
        self.id, self.name, self.thread = op_id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.sequence_nr, self.fwd_thread = sequence_nr, fwd_thread
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.cpu_parent, self.cpu_children, self.kernels = None, [], []
        self.stack = []
        self.count = 1

    key = property(lambda self: self.name)
    cpu_time_total = cpu_time = property(lambda self: self.time_range.elapsed_us())
    self_cpu_time_total = property(
        lambda self: self.time_range.elapsed_us() - sum(c.time_range.elapsed_us() for c in self.cpu_children))
    self_device_time_total = property(lambda self: sum(k.duration for k in self.kernels))
    device_time_total = device_time = property(
        lambda self: self.self_device_time_total + sum(c.device_time_total for c in self.cpu_children))

    def __repr__(self):
        return "<FunctionEvent id=%d name=%s thread=%d cpu_time=%s start_us=%.3f end_us=%.3f input_shapes=%s>" % (
            self.id, self.name, self.thread, self.cpu_time_str, self.time_range.start, self.time_range.end,
            self.input_shapes)


class FunctionEventAvg(_Times):
    """One key's totals, as key_averages() gives them: key, count, cpu_time_total,
    self_cpu_time_total, device_time_total (cuda_time_total), self_device_time_total
    (self_cuda_time_total), cpu_time and device_time (averages), input_shapes (grouped by
    them), and devtrace's device_events (how many device events carry the ops' ids)."""

    def __init__(self):
        self.key, self.count, self.input_shapes, self.stack = None, 0, None, []
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.device_events = 0
        self.cpu_parent, self.cpu_children = None, None

    def add(self, other):
        if self.key is None:
            self.key, self.input_shapes = other.key, other.input_shapes
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.device_events += getattr(other, "device_events", None) or len(getattr(other, "kernels", ()))
        return self

    cpu_time = property(lambda self: self.cpu_time_total / self.count if self.count else 0.0)
    device_time = property(lambda self: self.device_time_total / self.count if self.count else 0.0)

    def __repr__(self):
        return "<FunctionEventAvg key=%s self_cpu_time=%s cpu_time=%s input_shapes=%s>" % (
            self.key, self.self_cpu_time_total_str, self.cpu_time_str, self.input_shapes)


SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time", "device_time_total",
             "self_device_time_total", "cuda_time", "cuda_time_total", "self_cuda_time_total", "count",
             "cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage")


class EventList(list):
    """A list of FunctionEvent or FunctionEventAvg, like torch's: key_averages(), table(),
    total_average(), self_cpu_time_total. device_label names the device columns ("CUDA" on
    CUDA, as torch does; else "device")."""

    def __init__(self, items=(), device_label="device"):
        super().__init__(items)
        self.device_label = device_label
        self.folded = collections.Counter()  # ops folded into a parent of the same name, per name

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_input_shape=None):
        if group_by_input_shape is not None:
            group_by_input_shapes = group_by_input_shape
        stats = collections.OrderedDict()
        for evt in self:
            key = (evt.key, str(evt.input_shapes)) if group_by_input_shapes else evt.key
            (stats.get(key) or stats.setdefault(key, FunctionEventAvg())).add(evt)
        out = EventList(stats.values(), self.device_label)
        if not group_by_input_shapes:
            for avg in out:
                avg.input_shapes = None
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, the
        device columns when there is device time (Self <device>, Self <device> %, <device>
        total, <device> time avg), # of Calls, and Input Shapes when grouped by them. sort_by:
        an attribute (torch's keys, SORT_KEYS), largest first; None keeps the order."""
        return _table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                      top_level_events_only, self.device_label)


def _table(events, sort_by, row_limit, name_width_max, shapes_width_max, header, top_level_only, label):
    if not events:
        return ""
    if sort_by is not None:
        if sort_by not in SORT_KEYS and not hasattr(events[0], sort_by):
            raise ValueError("sort_by=%r: one of %s" % (sort_by, ", ".join(SORT_KEYS)))
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_device = any(e.self_device_time_total > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    name_width = min(max(len(e.key) for e in events) + 4, name_width_max or 10 ** 9)
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device:
        heads += ["Self %s" % label, "Self %s %%" % label, "%s total" % label, "%s time avg" % label]
    heads.append("# of Calls")
    widths = [name_width] + [12] * (len(heads) - 1)
    if has_shapes:
        heads.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4, shapes_width_max or 10 ** 9))
    row_format = "".join("{:>%d}  " % w for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    self_cpu_total = sum(e.self_cpu_time_total for e in events)
    self_device_total = sum(e.self_device_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    if top_level_only:
        out += ["=" * (sum(widths) + 2 * len(widths) - 2), "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*heads), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if name_width_max is not None and len(name) >= name_width_max - 3:
            name = name[:name_width_max - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, self_cpu_total), e.self_cpu_time_total_str,
               _format_share(e.cpu_time_total, self_cpu_total), e.cpu_time_total_str, e.cpu_time_str]
        if has_device:
            row += [e.self_device_time_total_str, _format_share(e.self_device_time_total, self_device_total),
                    e.device_time_total_str, e.device_time_str]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:widths[-1]])
        out.append(row_format.format(*row))
    out.append(sep)
    out.append("Self CPU time total: %s" % _format_time(self_cpu_total))
    if has_device:
        out.append("Self %s time total: %s" % (label, _format_time(self_device_total)))
    return "\n".join(out) + "\n"


def _function_events(events, shapes, label):
    """EventList of FunctionEvent from finalised events [(devtrace.Event, name)]: the cpu_op
    events, nested per thread, with the device events that carry their External ids."""
    ops = [(ev, name) for ev, name in events if ev.kind == 5]
    if not ops:
        return EventList((), label)
    base = min(ev.start_ns for ev, _ in ops)
    out, by_id = [], {}
    for ev, name in ops:
        seq = ctypes.c_int64(ev.u[0]).value if ev.flags & devtrace.HAS_SEQUENCE else -1
        dims, types = shapes.get(ev.external_id, (None, None))
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"  # torch's events name every step so (the trace keeps the number)
        fe = FunctionEvent(ev.external_id, name, ev.stream, (ev.start_ns - base) / 1e3, (ev.end_ns - base) / 1e3,
                           seq, ev.u[1] if seq >= 0 else 0, dims, types)
        fe._ns = (ev.start_ns, ev.end_ns)
        out.append(fe)
        by_id[ev.external_id] = fe
    for ev, name in events:
        if ev.kind in devtrace.DEVICE_KINDS and ev.flags & devtrace.HAS_EXTERNAL and ev.external_id in by_id:
            by_id[ev.external_id].kernels.append(Kernel(name, ev.device, (ev.end_ns - ev.start_ns) / 1e3))
    out.sort(key=lambda e: (e._ns[0], -e._ns[1]))
    stacks = collections.defaultdict(list)  # per thread: the ops open at this point
    for e in out:
        stack = stacks[e.thread]
        while stack and stack[-1]._ns[1] < e._ns[1]:
            stack.pop()
        if stack:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)
    # torch's rule: an op whose only child has its name (aten::sum calling aten::sum) is one op.
    folded = set()
    for e in out:
        parent = e.cpu_parent
        if parent is not None and parent.name == e.name and len(parent.cpu_children) == 1:
            parent.cpu_children, parent.kernels = e.cpu_children, parent.kernels + e.kernels
            for child in e.cpu_children:
                child.cpu_parent = parent
            folded.add(id(e))
    kept = EventList([e for e in out if id(e) not in folded], label)
    kept.folded = collections.Counter(e.name for e in out if id(e) in folded)
    return kept


def _add_input_args(path, shapes):
    """Adds "Input Dims" and "Input type" (Kineto's args) to the cpu_op events of the trace at
    path whose External id has shapes."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    for e in trace.get("traceEvents", ()):
        if e.get("cat") == "cpu_op":
            found = shapes.get(e.get("args", {}).get("External id"))
            if found:
                e["args"]["Input Dims"], e["args"]["Input type"] = found
    tmp = path + ".tmp"
    with opener(tmp, "wt") as f:
        json.dump(trace, f)
    os.replace(tmp, path)


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


_DEVICE_ACTIVITIES = ("CUDA", "PRIVATEUSE1")


def _activities(activities, use_cuda, say):
    """(record ops, record device events) from torch.profiler's activities; others are named
    in one line each and ignored."""
    if activities is None:
        return True, True if use_cuda is None else bool(use_cuda)
    cpu = device = bool(use_cuda)
    for a in activities:
        name = str(getattr(a, "name", a)).upper()
        if name == "CPU":
            cpu = True
        elif name in _DEVICE_ACTIVITIES:
            device = True
        else:
            say("activity %s is not supported (CPU, CUDA and PrivateUse1 are): ignored" % name)
    return cpu, device


class profile:
    """In-process profiling shaped like torch.profiler.profile, with its arguments: a context
    manager (or start()/stop()); step() marks the end of a step (``ProfilerStep#N`` ops, with
    a schedule, as torch.profiler has them).

    activities: ProfilerActivity.CPU records the ops, .CUDA or .PrivateUse1 the device events
    of devtrace's backend (default: both). schedule (devtrace.torch.schedule or
    torch.profiler.schedule): one trace per active cycle. on_trace_ready(p) after each, where
    p.export_chrome_trace(path) writes it (torch.profiler.tensorboard_trace_handler(dir) does
    that); with PATH, each is also written there: PATH when the schedule has one cycle, else
    PATH with the cycle number before the extension (trace.1.json; or where PATH has %n).
    record_shapes: each op's "Input Dims" and "Input type" (in the trace, as Kineto writes
    them, and as input_shapes). profile_memory, with_stack, with_flops, with_modules and
    experimental_config are not supported: each says so in one line on stderr and in the
    trace's notes. events() and key_averages() cover the last trace. backend: as
    devtrace_open's (auto, opencl, cupti, ...).

    For OpenCL in process, create the profile before the program's first OpenCL call (the
    loader loads the devtrace layer when it initialises), or run under devtrace record."""

    def __init__(self, path=None, backend="auto", *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None, record_steps=None):
        self.unsupported = []
        say = self._not_supported
        self.record_ops, self.record_device = _activities(activities, use_cuda, say)
        for flag, value, what in (("profile_memory", profile_memory, "no allocator events are recorded"),
                                  ("with_stack", with_stack, "no Python stacks are recorded"),
                                  ("with_flops", with_flops, "no FLOPs are counted"),
                                  ("with_modules", with_modules, "no module hierarchy is recorded")):
            if value:
                say("%s=True is not supported: %s" % (flag, what))
        if experimental_config is not None:
            say("experimental_config is not supported: ignored")
        self.path = path
        self.backend = backend if self.record_device else "none"
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes) and self.record_ops
        # ProfilerStep#N ops: with a schedule, as torch.profiler records them.
        self.record_steps = (schedule is not None if record_steps is None else record_steps) and self.record_ops
        self.step_num = 0
        self.trace_paths = []
        self.cycle = 0
        self.current_action = None
        self._event_list = EventList()
        self._shapes = {}
        self._last = None  # the last cycle's session, kept for export_chrome_trace
        self._session = None
        self._started = False
        self._step_fn = None
        self._observer_error = None
        self._holding = False
        self._under_record = _under_record()
        if not self._under_record and _active is None:
            self._session = devtrace.Session(backend=self.backend, start=False)  # binds the backend now

    def _not_supported(self, text):
        self.unsupported.append(text)
        print("devtrace.torch.profile: %s" % text, file=sys.stderr, flush=True)

    # -- torch.profiler's shape
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        global _active
        if self._under_record:
            print("devtrace.torch.profile: this process runs under devtrace record, which records it; "
                  "profile() writes no trace of its own", file=sys.stderr)
            return
        if _active is not None:
            raise RuntimeError("devtrace.torch.profile: another profile is already recording in this process; "
                               "profiles do not nest (torch.profiler refuses it too: 'Profiler is already enabled "
                               "on this thread.'): stop the outer one first")
        _active = self
        if self.record_ops:
            try:
                _hold_observer(SHAPES if self.record_shapes else 0)
                self._holding = True
            except ObserverUnavailable as e:
                self._observer_error = str(e)
                print("devtrace: PyTorch ops are not recorded: %s; device events are still recorded" % e,
                      file=sys.stderr)
        self.current_action = _action(self.schedule(self.step_num))
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
        if self._under_record or _active is not self:
            return
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = _action(self.schedule(self.step_num))
        self._transit(prev, self.current_action)
        self._enter_step()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The last trace's ops averaged per name (and input shapes): EventList of FunctionEventAvg."""
        return self._event_list.key_averages(group_by_input_shape, group_by_stack_n)

    def events(self):
        """The last trace's ops: EventList of FunctionEvent, in start order."""
        return self._event_list

    def export_chrome_trace(self, path):
        """Writes the last trace to path (.json, or .json.gz compressed), as a Kineto trace."""
        if self._last is None:
            raise RuntimeError("devtrace.torch.profile: no trace to export yet (a trace is ready when the profile "
                               "stops, or when the schedule's active steps end)")
        self._last.write(path)
        if self._shapes:
            _add_input_args(path, self._shapes)
        return path

    # -- inside
    def _enter_step(self):
        if self.record_steps and self._started:
            import torch
            self._step_fn = torch.autograd.profiler.record_function("ProfilerStep#%d" % self.step_num)
            self._step_fn.__enter__()

    def _exit_step(self):
        if self._step_fn is not None:
            self._step_fn.__exit__(None, None, None)
            self._step_fn = None

    def _transit(self, prev, now):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and now not in recording):
            self._save()
        if now in (ProfilerAction.WARMUP,) + recording and self._session is None:
            self._session = devtrace.Session(backend=self.backend, start=False)
        if now in recording and not self._started:
            self._session.make_default()
            self._session.start()
            self._started = True

    def _save(self):
        s = self._session
        if s is None or not self._started:
            return
        self._started = False
        s.stop()
        s.make_default(False)
        if self._observer_error:
            s.note("PyTorch ops are not recorded: %s" % self._observer_error)
        for text in self.unsupported:
            s.note("devtrace.torch.profile: %s" % text)
        self.cycle += 1
        label = "CUDA" if s.backend in ("cupti", "roctracer") else "device"
        self._shapes = _take_shapes() if self.record_shapes else {}
        self._event_list = _function_events(s.events(), self._shapes, label)
        if self._last is not None:
            self._last.close()
        self._last, self._session = s, None
        path = _cycle_path(self.path, self.cycle, getattr(self.schedule, "cycles", 0) != 1)
        if path:
            self.export_chrome_trace(path)
            self.trace_paths.append(path)
        if self.on_trace_ready:
            self.on_trace_ready(self)
