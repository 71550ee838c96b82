#!/usr/bin/env python3
"""test_python_register.py PYTHON_DIR LIBDEVTRACE KINETO_INCLUDE WORK_DIR: devtrace.kineto.register()
in the interpreter that has torch (/usr/bin/python3: Debian's torch 1.13, built without Kineto),
from the build tree and from the package as `pip install ./python` installs it (offline, into a
folder of its own). Each must refuse in exactly one line that names the torch and the reason, and
leave the program running; a torch stand-in with Kineto but without its headers gets the headers
line. From the installed package, the adaptor's sources are the package's own (devtrace/_kineto:
files, not links), and they build: a torch stand-in whose include/kineto is KINETO_INCLUDE (the
snapshot's libkineto headers) and whose lib/ has a libtorch_cpu.so gets an adaptor compiled from
them that exports devtrace_kineto_register (it is not loaded: the stand-in has no libkineto).
Exit 77 (skipped) without an interpreter that imports torch."""
import os
import shutil
import subprocess
import sys
import tempfile

python_dir, library, kineto_include, work_dir = sys.argv[1:5]
candidates = [os.environ.get("DEVTRACE_TORCH_PYTHON"), "/usr/bin/python3", sys.executable]
probe = r'''
import sys, devtrace.kineto
try:
    import torch
except ImportError:
    sys.exit(77)
try:
    devtrace.kineto.register()
    print("registered")
except devtrace.kineto.KinetoUnavailable as e:
    print("refused: %s" % e)
print("kineto_available=%s version=%s" % (torch.autograd.kineto_available(), torch.__version__))
# A torch with Kineto but no headers (a stand-in module: the real one's attributes, its own include/).
import types, tempfile, os
fake = types.SimpleNamespace(__version__="9.9", __file__=os.path.join(tempfile.mkdtemp(), "__init__.py"),
                             autograd=types.SimpleNamespace(kineto_available=lambda: True), _C=torch._C)
try:
    devtrace.kineto.register(fake)
except devtrace.kineto.KinetoUnavailable as e:
    print("refused: %s" % str(e).replace(os.path.dirname(fake.__file__), "TORCH"))
'''
# From an installed package: where the sources are, and that they build against libkineto's headers.
build_probe = r'''
import os, sys, types, devtrace.kineto
import torch
sources, include = devtrace.kineto.adaptor_sources()
print("sources: %s" % " ".join(os.path.relpath(p, os.path.dirname(devtrace.kineto.__file__)) for p in sources + [include]))
print("links: %d" % sum(os.path.islink(p) for p in sources + [os.path.join(include, "devtrace", "kineto.hpp")]))
root = sys.argv[1]
fake = types.SimpleNamespace(__version__="9.9-headers", __file__=os.path.join(root, "__init__.py"),
                             autograd=types.SimpleNamespace(kineto_available=lambda: True), _C=torch._C)
print("built: %s" % os.path.basename(devtrace.kineto.adaptor_library(fake, log=sys.stdout)).split("-")[0])
'''


def run(py, code, env, *args):
    return subprocess.run([py, "-c", code] + list(args), capture_output=True, text=True, env=env, timeout=600)


def check_refusals(py, env, where):
    r = run(py, probe, env)
    if r.returncode == 77:
        return None
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    print("\n".join("  " + line for line in lines))
    avail = lines[1].split()[0] == "kineto_available=True"
    version = lines[1].split("version=")[1]
    if not avail:
        want = ("refused: torch %s was built without Kineto (torch.autograd.kineto_available() is False), so "
                "torch.profiler has no child profilers: use devtrace.torch.profile" % version)
        assert lines[0] == want, (lines[0], want)
    assert lines[2] == ("refused: torch 9.9 ships no libkineto headers (no libkineto.h in TORCH/include or its "
                        "kineto/): install a torch with its C++ headers to build devtrace's Kineto adaptor"), lines[2]
    assert len(lines) == 3 and "\n" not in lines[0]
    print("ok   devtrace.kineto.register() %s: one line for a torch without Kineto, one for a torch without "
          "headers" % where)
    return avail


def main():
    for py in [c for c in candidates if c and os.path.exists(c)]:
        env = dict(os.environ, PYTHONPATH=python_dir, PYTHONDONTWRITEBYTECODE="1")
        env.pop("DEVTRACE_KINETO_SOURCE", None)
        print("interpreter: %s" % py)
        if check_refusals(py, env, "from the build tree") is None:
            continue
        # pip install ./python, offline, with the interpreter's own setuptools and wheel.
        source = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
        os.makedirs(work_dir, exist_ok=True)
        work = tempfile.mkdtemp(prefix="kineto-register-", dir=work_dir)
        target = os.path.join(work, "site")
        pip = subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", "--no-compile",
                              "--disable-pip-version-check", "--target", target, source],
                             capture_output=True, text=True, timeout=300)
        if pip.returncode != 0:
            print("FAIL pip install ./python: %s" % (pip.stdout + pip.stderr).strip().splitlines()[-1:])
            return 1
        env = dict(os.environ, PYTHONPATH=target, DEVTRACE_LIBRARY=library, PYTHONDONTWRITEBYTECODE="1",
                   DEVTRACE_TORCH_CACHE=os.path.join(work, "cache"))
        env.pop("DEVTRACE_KINETO_SOURCE", None)
        check_refusals(py, env, "from the package pip installed")
        if not os.path.exists(os.path.join(kineto_include, "libkineto.h")):
            print("skipped: no libkineto.h in %s to build the installed sources against" % kineto_include)
            return 77
        # The stand-in torch: include/kineto (libkineto's headers), lib/libtorch_cpu.so (empty).
        root = os.path.join(work, "torch")
        os.makedirs(os.path.join(root, "include"))
        os.makedirs(os.path.join(root, "lib"))
        os.symlink(kineto_include, os.path.join(root, "include", "kineto"))
        empty = os.path.join(work, "empty.c")
        with open(empty, "w") as f:
            f.write("int devtrace_test_empty;\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(root, "lib", "libtorch_cpu.so"), empty], check=True)
        r = run(py, build_probe, env, root)
        print("\n".join("  " + line for line in r.stdout.splitlines()))
        assert r.returncode == 0, r.stderr.strip().splitlines()[-3:]
        lines = r.stdout.splitlines()
        assert lines[0] == ("sources: _kineto/kineto/devtrace_kineto.cpp _kineto/kineto/devtrace_kineto_register.cpp "
                            "_kineto/include"), lines[0]
        assert lines[1] == "links: 0", lines[1]
        assert lines[-1] == "built: kineto", lines[-1]
        built = [os.path.join(work, "cache", n) for n in os.listdir(os.path.join(work, "cache")) if n.endswith(".so")]
        assert len(built) == 1, built
        nm = subprocess.run(["nm", "-D", "--defined-only", built[0]], capture_output=True, text=True, check=True)
        exported = sorted(line.split()[-1] for line in nm.stdout.splitlines() if " T " in line)
        assert "devtrace_kineto_register" in exported, exported
        print("ok   the installed package's adaptor sources (files) build against libkineto's headers: "
              "devtrace_kineto_register exported")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print("skipped: no interpreter here imports torch (tried %s)" % ", ".join(c for c in candidates if c))
    return 77


if __name__ == "__main__":
    sys.exit(main())
