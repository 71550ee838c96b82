"""devtrace.kineto: devtrace as the child profiler of torch.profiler's libkineto (docs/kineto.md).

    import torch, devtrace.kineto
    devtrace.kineto.register()          # before the first torch.profiler.profile(...)
    with torch.profiler.profile(activities=[..., torch.profiler.ProfilerActivity.PrivateUse1]) as p:
        ...

register() builds the adaptor (kineto/devtrace_kineto.cpp) at first use against the imported
torch's own libkineto headers, links it to torch's libtorch_cpu.so (whose libkineto it then
uses: one Kineto per process) and to the libdevtrace this package loads, caches it as the
PyTorch observer is cached (observer_build.py: $DEVTRACE_TORCH_CACHE, else ~/.cache/devtrace),
loads it and calls devtrace_kineto_register(). When that cannot be done it raises
KinetoUnavailable with one line saying why and what to do: a torch built without Kineto
(Debian's torch 1.13), a torch that ships no libkineto headers, no compiler, no adaptor sources.
"""
import ctypes
import os
import sys

import devtrace
from devtrace import observer_build

HERE = os.path.dirname(os.path.abspath(__file__))

__all__ = ["register", "KinetoUnavailable", "adaptor_sources"]


class KinetoUnavailable(Exception):
    """devtrace cannot be torch.profiler's child profiler here; the message says why."""


def adaptor_sources():
    """The adaptor's sources: ([the .cpp files], the include folder), from the first folder
    that has kineto/devtrace_kineto.cpp and include/devtrace/kineto.hpp: $DEVTRACE_KINETO_SOURCE,
    the package's own _kineto/ (what pip install and cmake --install put there; in a checkout,
    links to kineto/ and include/), the checkout. None when there is none."""
    roots = [os.environ.get("DEVTRACE_KINETO_SOURCE"), os.path.join(HERE, "_kineto"), os.path.join(HERE, "..", "..")]
    for root in roots:
        if root and os.path.exists(os.path.join(root, "kineto", "devtrace_kineto.cpp")) and \
                os.path.exists(os.path.join(root, "include", "devtrace", "kineto.hpp")):
            root = os.path.normpath(root)
            return ([os.path.join(root, "kineto", "devtrace_kineto.cpp"),
                     os.path.join(root, "kineto", "devtrace_kineto_register.cpp")], os.path.join(root, "include"))
    return None


def kineto_headers(torch):
    """The folder of torch's libkineto.h, or None."""
    includes, _ = observer_build.torch_paths(torch)
    for folder in (os.path.join(includes[0], "kineto"), includes[0]):
        if os.path.exists(os.path.join(folder, "libkineto.h")):
            return folder
    return None


def adaptor_library(torch, log=sys.stderr):
    """The adaptor built for this torch (cached); raises KinetoUnavailable with one line."""
    version = str(torch.__version__)
    available = getattr(getattr(torch, "autograd", None), "kineto_available", None)
    if available is None or not available():
        raise KinetoUnavailable("torch %s was built without Kineto (torch.autograd.kineto_available() is False), so "
                                "torch.profiler has no child profilers: use devtrace.torch.profile" % version)
    headers = kineto_headers(torch)
    includes, libdir = observer_build.torch_paths(torch)
    if headers is None:
        raise KinetoUnavailable("torch %s ships no libkineto headers (no libkineto.h in %s or its kineto/): install a "
                                "torch with its C++ headers to build devtrace's Kineto adaptor" % (version, includes[0]))
    sources = adaptor_sources()
    if sources is None:
        raise KinetoUnavailable("the Kineto adaptor's sources (kineto/devtrace_kineto.cpp) are not in %s: "
                                "reinstall devtrace's Python package, or set DEVTRACE_KINETO_SOURCE to a devtrace "
                                "checkout" % os.path.join(HERE, "_kineto"))
    cxx = observer_build.find_compiler()
    if not cxx:
        raise KinetoUnavailable("no C++ compiler to build devtrace's Kineto adaptor (set $CXX, or install g++)")
    lib = devtrace.library_path()
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    folder, path = observer_build.cached_library(
        "kineto", version, [open(p, "rb").read() for p in sources[0]] +
        [version.encode(), str(abi).encode(), os.path.realpath(cxx).encode(), os.path.realpath(lib).encode()])
    if os.path.exists(path):
        return path
    observer_build.make_cache(folder, KinetoUnavailable)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    libdir_devtrace = os.path.dirname(os.path.realpath(lib))
    cmd = [cxx, "-O2", "-std=c++20", "-shared", "-fPIC", "-fvisibility=hidden", "-DFMT_HEADER_ONLY=1",
           "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi, "-I", sources[1], "-isystem", headers] + \
          [a for inc in includes for a in ("-isystem", inc)] + sources[0] + \
          ["-o", tmp, "-L", libdir, "-Wl,-rpath," + libdir, "-ltorch_cpu",
           os.path.realpath(lib), "-Wl,-rpath," + libdir_devtrace]
    observer_build.compile_library("Kineto adaptor", cmd, cxx, version, folder, tmp, path, KinetoUnavailable, log,
                                   error_lines=lambda lines: [l for l in lines if "error" in l])
    return path


_registered = None


def register(torch=None, log=sys.stderr):
    """Makes devtrace torch.profiler's child profiler (call before the first profile). Returns the
    adaptor's path; raises KinetoUnavailable (one line: why, and what to do)."""
    global _registered
    if _registered:
        return _registered
    if torch is None:
        try:
            import torch
        except ImportError as e:
            raise KinetoUnavailable("torch is not importable by %s (%s)" % (sys.executable, e))
    path = adaptor_library(torch, log)
    lib = ctypes.CDLL(path)
    lib.devtrace_kineto_register.restype = ctypes.c_int
    rc = lib.devtrace_kineto_register()
    if rc not in (0, 1):
        raise KinetoUnavailable("devtrace_kineto_register() returned %d" % rc)
    _registered = path
    return path
