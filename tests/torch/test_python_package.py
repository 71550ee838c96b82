#!/usr/bin/env python3
"""test_python_package.py PYTHON_DIR LIBDEVTRACE TMPDIR: the devtrace Python package
without torch. From the build tree (PYTHONPATH=build/NAME/python: it finds ../../lib
itself) and installed offline (pip install --no-build-isolation ./python into a folder
of its own, with the interpreter's own setuptools; the library named by
$DEVTRACE_LIBRARY), a session on the "none" backend records devtrace.annotate ops with
their names and ids, exactly."""
import os
import subprocess
import sys
import tempfile

python_dir, library, tmp = sys.argv[1:4]
source = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
work = tempfile.mkdtemp(prefix="python-package-", dir=tmp)
probe = r'''
import devtrace, sys
s = devtrace.Session(backend="none")
s.make_default()
with devtrace.annotate("outer", 7):
    with devtrace.annotate("inner", 8):
        pass
s.make_default(False)
s.stop()
ops = [(name, ev.external_id) for ev, name in s.events() if ev.kind == 5]
print(sorted(ops), devtrace.library_path())
'''
expected = "[('inner', 8), ('outer', 7)]"

print("interpreter: %s" % sys.executable)
env = dict(os.environ, PYTHONPATH=python_dir)
env.pop("DEVTRACE_LIBRARY", None)
r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
assert r.returncode == 0, r.stderr
assert r.stdout.split(" /")[0] == expected, r.stdout
assert os.path.realpath(r.stdout.split()[-1]) == os.path.realpath(library), (r.stdout, library)
print("ok   import devtrace from the build tree: %s" % r.stdout.strip())

# Offline, pip builds with the interpreter's own setuptools and wheel (Debian's python3-pip,
# python3-setuptools, python3-wheel: scripts/install-deps).
builder = next((p for p in ("/usr/bin/python3", sys.executable)
                if os.path.exists(p) and subprocess.run([p, "-c", "import setuptools, wheel, pip, venv"]).returncode == 0),
               None)
if builder is None:
    print("SKIPPED: no interpreter has pip, setuptools, wheel and venv to install ./python offline")
    sys.exit(77)
print("interpreter for pip install: %s" % builder)
target = os.path.join(work, "site")  # pip install --target: an install folder of its own, quicker than a venv
pip = subprocess.run([builder, "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", "--no-compile",
                      "--disable-pip-version-check", "--target", target, source],
                     capture_output=True, text=True, timeout=300)
assert pip.returncode == 0, pip.stdout + pip.stderr
assert sorted(os.listdir(os.path.join(target, "devtrace"))) == [
    "__init__.py", "_bootstrap", "_kineto", "kineto.py", "observer.cpp", "observer_api.h", "observer_build.py",
    "torch.py"], \
    os.listdir(os.path.join(target, "devtrace"))
env = dict(os.environ, DEVTRACE_LIBRARY=library, PYTHONPATH=target)
r = subprocess.run([builder, "-c", probe], capture_output=True, text=True, env=env, cwd=work, timeout=120)
assert r.returncode == 0, r.stderr
assert r.stdout.split(" /")[0] == expected, r.stdout
print("ok   pip install ./python offline, then import devtrace: %s" % r.stdout.strip())
