#!/usr/bin/env python3
"""test_python_register.py PYTHON_DIR: devtrace.kineto.register() in the interpreter that has
torch (/usr/bin/python3: Debian's torch 1.13, built without Kineto). It must refuse in exactly one
line that names the torch and the reason, and leave the program running; a torch stand-in with
Kineto but without its headers gets the headers line. Exit 77 (skipped) without an interpreter
that imports torch."""
import os
import subprocess
import sys

python_dir = sys.argv[1]
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
env = dict(os.environ, PYTHONPATH=python_dir, PYTHONDONTWRITEBYTECODE="1")
for py in [c for c in candidates if c and os.path.exists(c)]:
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    if r.returncode == 77:
        continue
    print("interpreter: %s" % py)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    print("\n".join(lines))
    avail = lines[1].split()[0] == "kineto_available=True"
    version = lines[1].split("version=")[1]
    if not avail:
        want = ("refused: torch %s was built without Kineto (torch.autograd.kineto_available() is False), so "
                "torch.profiler has no child profilers: use devtrace.torch.profile" % version)
        assert lines[0] == want, (lines[0], want)
    assert lines[2] == ("refused: torch 9.9 ships no libkineto headers (no libkineto.h in TORCH/include or its "
                        "kineto/): install a torch with its C++ headers to build devtrace's Kineto adaptor"), lines[2]
    assert len(lines) == 3 and "\n" not in lines[0]
    print("ok   devtrace.kineto.register(): one line for a torch without Kineto, one for a torch without headers")
    sys.exit(0)
print("skipped: no interpreter here imports torch (tried %s)" % ", ".join(c for c in candidates if c))
sys.exit(77)
