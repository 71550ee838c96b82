"""devtrace: the device timeline of an accelerator program, from Python.

ctypes over libdevtrace.so (the C library; its API is include/devtrace.h). The library
is the one instance in the process: under ``devtrace record`` the very file the recorder
injected ($DEVTRACE_COLLECT_LIBRARY), else $DEVTRACE_LIBRARY, else the build tree's
(``PYTHONPATH=build/plain/python``: ``../../lib``), else the system's.

    import devtrace
    with devtrace.Session(backend="auto") as s:   # started; stopped at exit of the block
        with devtrace.annotate("step", 1):
            ...                                   # device work here carries External id 1
    s.write("trace.json")

PyTorch: ``devtrace.torch.profile`` (in process) and ``devtrace record --torch``.
"""
import ctypes
import ctypes.util
import os

__all__ = ["Session", "Event", "annotate", "library", "library_path", "DevtraceError", "KIND_NAMES", "KIND_BITS",
           "abi_mismatches"]

KIND_NAMES = {1: "kernel", 2: "memcpy", 3: "memset", 4: "runtime", 5: "cpu_op"}
DEVICE_KINDS = (1, 2, 3)
HAS_EXTERNAL = 0x01
HAS_SEQUENCE = 0x80  # DEVTRACE_EVENT_HAS_SEQUENCE
HAS_USER_EXTERNAL = 0x100  # DEVTRACE_EVENT_HAS_USER_EXTERNAL
KIND_BITS = {name: 1 << kind for kind, name in KIND_NAMES.items()}  # DEVTRACE_KIND_BIT, for Session(kinds=...)


class DevtraceError(RuntimeError):
    """A devtrace call failed; the message is devtrace's (it names the cause and the fix)."""


# Every ctypes struct here names its C struct (_c_name): abi_mismatches() checks each one
# against the library's own layout (devtrace_abi_layout), field by field.
class Event(ctypes.Structure):
    """devtrace_event (include/devtrace.h); the union is read as raw words."""
    _c_name = "devtrace_event"
    _fields_ = [("start_ns", ctypes.c_uint64), ("end_ns", ctypes.c_uint64), ("correlation", ctypes.c_uint64),
                ("external_id", ctypes.c_uint64), ("name_id", ctypes.c_uint32), ("kind", ctypes.c_uint16),
                ("flags", ctypes.c_uint16), ("device", ctypes.c_uint32), ("context", ctypes.c_uint32),
                ("stream", ctypes.c_uint32), ("reserved", ctypes.c_uint32), ("u", ctypes.c_uint64 * 6),
                ("user_external_id", ctypes.c_uint64)]


class _Error(ctypes.Structure):
    _c_name = "devtrace_error"
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class _Config(ctypes.Structure):
    _c_name = "devtrace_config"
    _fields_ = [("size", ctypes.c_size_t), ("backend", ctypes.c_char_p), ("runtime_category", ctypes.c_char_p),
                ("max_events", ctypes.c_uint64), ("rank", ctypes.c_int), ("world_size", ctypes.c_int),
                ("raw_path", ctypes.c_char_p), ("kinds", ctypes.c_uint32)]


_STRUCTS = (Event, _Error, _Config)


def abi_mismatches():
    """What differs between this package's ctypes structs and the library's structs (a list of
    lines; empty when they agree): a size, a field's offset or size, a field the library has
    that the struct lacks, or one the library does not know."""
    lib = library()
    out = []
    for cls in _STRUCTS:
        c_name = cls._c_name.encode()
        off, size = ctypes.c_size_t(), ctypes.c_size_t()
        if lib.devtrace_abi_layout(c_name, None, ctypes.byref(off), ctypes.byref(size)) != 0:
            out.append("%s: the library does not know this struct" % cls._c_name)
            continue
        if size.value != ctypes.sizeof(cls):
            out.append("%s: sizeof %d in C, %d in ctypes" % (cls._c_name, size.value, ctypes.sizeof(cls)))
        mine = [f[0] for f in cls._fields_]
        for name in mine:
            if lib.devtrace_abi_layout(c_name, name.encode(), ctypes.byref(off), ctypes.byref(size)) != 0:
                out.append("%s.%s: not a field of the C struct" % (cls._c_name, name))
                continue
            field = getattr(cls, name)
            if (field.offset, field.size) != (off.value, size.value):
                out.append("%s.%s: offset %d size %d in C, offset %d size %d in ctypes"
                           % (cls._c_name, name, off.value, size.value, field.offset, field.size))
        i = 0
        while True:
            c_field = lib.devtrace_abi_field(c_name, i)
            if c_field is None:
                break
            if c_field.decode() not in mine:
                out.append("%s.%s: in C, missing from ctypes" % (cls._c_name, c_field.decode()))
            i += 1
    return out


_EVENT_CB = ctypes.CFUNCTYPE(None, ctypes.POINTER(Event), ctypes.c_char_p, ctypes.c_void_p)
_lib = None
_lib_path = None


def _candidates():
    for var in ("DEVTRACE_COLLECT_LIBRARY", "DEVTRACE_LIBRARY"):
        if os.environ.get(var):
            yield os.environ[var]
    here = os.path.dirname(os.path.abspath(__file__))  # the build tree's link, not resolved
    yield os.path.normpath(os.path.join(here, "..", "..", "lib", "libdevtrace.so.0"))  # build/NAME/lib
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "..", "lib", "libdevtrace.so.0"))  # PREFIX/share/devtrace/python
    found = ctypes.util.find_library("devtrace")
    if found:
        yield found


def library_path():
    """The path of the libdevtrace.so this package uses (loading it if needed)."""
    library()
    return _lib_path


def library():
    """libdevtrace.so as a ctypes library, loaded once."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        lib = ctypes.CDLL(path)  # the same file as one already loaded: the same instance
        _declare(lib)
        _lib, _lib_path = lib, os.path.realpath(path) if os.path.exists(path) else path
        return lib
    raise DevtraceError("libdevtrace.so not found (tried %s); set DEVTRACE_LIBRARY to its path"
                        % ", ".join(tried or ["the system's library path"]))


def _declare(lib):
    P, I, U64, I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int64
    sigs = {
        "devtrace_config_init": (None, [ctypes.POINTER(_Config)]),
        "devtrace_open": (P, [ctypes.POINTER(_Config), ctypes.POINTER(_Error)]),
        "devtrace_start": (I, [P]), "devtrace_stop": (I, [P]), "devtrace_close": (None, [P]),
        "devtrace_range_push": (I, [P, ctypes.c_char_p, U64]), "devtrace_range_pop": (I, [P]),
        "devtrace_annotate_push": (I, [ctypes.c_char_p, U64]), "devtrace_annotate_pop": (I, []),
        "devtrace_op_enter": (I, [ctypes.c_char_p, U64, I64, U64]), "devtrace_op_exit": (I, [U64]),
        "devtrace_default_session": (P, []), "devtrace_set_default_session": (I, [P]),
        "devtrace_add_note": (I, [P, ctypes.c_char_p]),
        "devtrace_drain": (ctypes.c_size_t, [P, _EVENT_CB, P]),
        "devtrace_write_chrome": (I, [P, ctypes.c_char_p, ctypes.POINTER(_Error)]),
        "devtrace_backend_name": (ctypes.c_char_p, [P]), "devtrace_unavailable_reason": (ctypes.c_char_p, [P]),
        "devtrace_strerror": (ctypes.c_char_p, [I]),
        "devtrace_abi_layout": (I, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                                    ctypes.POINTER(ctypes.c_size_t)]),
        "devtrace_abi_field": (ctypes.c_char_p, [ctypes.c_char_p, I]),
        "devtrace_version_number": (ctypes.c_uint, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def _check(rc, what):
    if rc != 0:
        raise DevtraceError("%s: %s" % (what, library().devtrace_strerror(rc).decode()))


class Session:
    """One devtrace session in this process (devtrace_open): started on creation unless
    start=False; a context manager that stops it at the end of the block."""

    def __init__(self, backend="auto", start=True, runtime_category=None, kinds=None):
        """kinds: the kinds to record, names of KIND_NAMES ("kernel", "memcpy", ...); None: all."""
        lib = library()
        cfg, err = _Config(), _Error()
        lib.devtrace_config_init(ctypes.byref(cfg))
        cfg.backend = None if backend in (None, "") else backend.encode()
        cfg.runtime_category = runtime_category.encode() if runtime_category else None
        if kinds:
            unknown = [k for k in kinds if k not in KIND_BITS]
            if unknown:
                raise DevtraceError("unknown kind %r; choose from %s" % (unknown[0], ", ".join(KIND_BITS)))
            for k in kinds:
                cfg.kinds |= KIND_BITS[k]
        self._handle = lib.devtrace_open(ctypes.byref(cfg), ctypes.byref(err))
        if not self._handle:
            raise DevtraceError(err.message.decode(errors="replace"))
        self.backend = lib.devtrace_backend_name(self._handle).decode()
        self.unavailable_reason = lib.devtrace_unavailable_reason(self._handle).decode()
        self._stopped = False
        if start:
            self.start()

    def start(self):
        _check(library().devtrace_start(self._handle), "devtrace_start")

    def stop(self):
        if not self._stopped:
            self._stopped = True
            _check(library().devtrace_stop(self._handle), "devtrace_stop")

    def note(self, text):
        library().devtrace_add_note(self._handle, text.encode())

    def make_default(self, on=True):
        """Makes this the default session: the one the PyTorch observer and annotate use."""
        _check(library().devtrace_set_default_session(self._handle if on else None), "devtrace_set_default_session")

    def events(self):
        """The finalised events (after stop): a list of (Event copy, name) in time order."""
        out = []

        def take(ev, name, user):
            out.append((Event.from_buffer_copy(ev.contents), name.decode(errors="replace") if name else ""))

        cb = _EVENT_CB(take)
        library().devtrace_drain(self._handle, cb, None)
        return out

    def write(self, path):
        err = _Error()
        if library().devtrace_write_chrome(self._handle, os.fsencode(path), ctypes.byref(err)) != 0:
            raise DevtraceError(err.message.decode(errors="replace"))
        return path

    def close(self):
        if self._handle:
            library().devtrace_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class annotate:
    """A named op on the default session (devtrace_annotate_push/pop): the External id of
    the device work launched inside it. A no-op when no session records."""

    def __init__(self, name, op_id):
        self.name, self.op_id = name.encode(), op_id

    def __enter__(self):
        self.status = library().devtrace_annotate_push(self.name, self.op_id)
        return self

    def __exit__(self, *exc):
        if self.status == 0:
            library().devtrace_annotate_pop()
        return False
