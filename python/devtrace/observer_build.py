"""observer_build.py: the PyTorch observer (observer.cpp), built at first use against the
headers of the torch the program imported, and cached per torch version.

The cache is $DEVTRACE_TORCH_CACHE, else $XDG_CACHE_HOME/devtrace, else ~/.cache/devtrace;
one file per torch version, C++ ABI, compiler and observer source
(``observer-torch<version>-<hash>.so``), written under a temporary name and renamed, so
that ranks building at once all end with the same complete file. The compiler is $CXX,
else c++, g++ or clang++ from $PATH.
"""
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "observer.cpp")
HEADER = os.path.join(HERE, "observer_api.h")


class ObserverUnavailable(Exception):
    """The observer cannot be built here; the message says why and what to install."""


def cache_dir():
    if os.environ.get("DEVTRACE_TORCH_CACHE"):
        return os.environ["DEVTRACE_TORCH_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "devtrace")


def torch_paths(torch):
    """torch's include and library folders, as torch.utils.cpp_extension reports them
    (computed the same way, without importing cpp_extension: it is slow and prints)."""
    root = os.path.dirname(os.path.abspath(torch.__file__))
    include = os.path.join(root, "include")
    return [include, os.path.join(include, "torch", "csrc", "api", "include")], os.path.join(root, "lib")


def find_compiler():
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx) or (cxx if os.path.exists(cxx) else None)
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return found
    return None


def cached_library(name, version, key_parts):
    """(the cache folder, the path there of the library name built for this torch version from
    key_parts): ``<name>-torch<version>-<hash>.so``, the hash over every part (bytes)."""
    key = hashlib.sha256()
    for part in key_parts:
        key.update(part)
        key.update(b"\0")
    folder = cache_dir()
    return folder, os.path.join(folder, "%s-torch%s-%s.so" % (name, version.replace(os.sep, "_"), key.hexdigest()[:16]))


def make_cache(folder, unavailable, name="cache"):
    """Creates the cache folder (and its parents); raises unavailable with one line (the folder,
    why, and the fix) when it cannot. name: what the line calls the folder."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise unavailable("cannot create the %s %s (%s): set DEVTRACE_TORCH_CACHE to a writable folder"
                          % (name, folder, e.strerror))


def linker_first(lines):
    """A failed build's error lines, the most telling first: the first error; the linker's own
    line before collect2's summary of it."""
    return [l for l in lines if "error" in l and "ld returned" not in l] + \
        [l for l in lines if "ld: " in l] + [l for l in lines if "error" in l]


def compile_library(what, cmd, cxx, version, folder, tmp, path, unavailable, log, error_lines=linker_first):
    """Runs the compiler command cmd, which writes tmp, saying so on log first (what: "PyTorch
    observer"), then renames tmp to path. Raises unavailable with one line when it fails: the
    first of error_lines(the compiler's stderr lines), else its last line."""
    print("devtrace: building the %s for torch %s (once; cached in %s)" % (what, version, folder), file=log, flush=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise unavailable("building the %s with %s failed: %s" % (what, cxx, e))
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        errors = error_lines(lines)
        last = errors[0] if errors else lines[-1] if lines else "exit status %d" % r.returncode
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise unavailable("building the %s with %s failed: %s" % (what, cxx, last))
    os.replace(tmp, path)


def observer_library(torch, log=sys.stderr):
    """The path of the observer for this torch, building it when the cache has none.
    Raises ObserverUnavailable with a one-line reason."""
    version = str(torch.__version__)
    includes, libdir = torch_paths(torch)
    if not os.path.exists(os.path.join(includes[0], "ATen", "record_function.h")):
        raise ObserverUnavailable(
            "torch %s has no C++ headers (%s/ATen/record_function.h is missing): install its headers "
            "(Debian: libtorch-dev; pip wheels ship them) to attribute device work to PyTorch ops" % (version, includes[0]))
    cxx = find_compiler()
    if not cxx:
        raise ObserverUnavailable("no C++ compiler to build the PyTorch observer (set $CXX, or install g++) "
                                  "to attribute device work to PyTorch ops")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    # NDEBUG as torch's own release builds: without it, torch's inline debug checks assert on
    # state only its debug builds keep (RecordFunction::inputs).
    flags = ["-O2", "-DNDEBUG", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden",
             "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi]
    folder, path = cached_library("observer", version, (
        open(SOURCE, "rb").read(), open(HEADER, "rb").read(), version.encode(), " ".join(flags).encode(),
        os.path.realpath(cxx).encode(), os.path.realpath(includes[0]).encode()))
    if os.path.exists(path):
        return path
    make_cache(folder, ObserverUnavailable, "observer cache")
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:  # the compiler's own words for this would be "ld returned 1 exit status"
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    except OSError as e:
        raise ObserverUnavailable("cannot write the observer into its cache %s (%s): set DEVTRACE_TORCH_CACHE to a "
                                  "writable folder" % (folder, e.strerror))
    cmd = [cxx] + flags + ["-I", HERE] + [a for inc in includes for a in ("-isystem", inc)] + \
          [SOURCE, "-o", tmp, "-L", libdir, "-Wl,-rpath," + libdir, "-lc10", "-ltorch_cpu"]
    compile_library("PyTorch observer", cmd, cxx, version, folder, tmp, path, ObserverUnavailable, log)
    return path
