#!/usr/bin/env python3
"""test_torch_profile.py PYTHON_DIR TMPDIR: devtrace.torch.profile's life cycle, on the
"none" backend (no device needed): the RecordFunction callback is removed when the last
profile ends (torch itself reports no global callback left, and ops after it are not
recorded), a profile started inside another is refused the way torch.profiler refuses it
(RuntimeError), and a read-only observer cache is named in one line."""
import json
import os
import sys
import tempfile

import torch_checks as T

python_dir, tmp = sys.argv[1:3]
py = T.torch_python(need=("torch",))
work = tempfile.mkdtemp(prefix="torch-profile-", dir=tmp)
cache = os.path.join(tmp, "cache")
failures = []


def case(fn):
    try:
        skipped = fn()
        print("%s %s" % ("skip" if skipped else "ok  ", fn.__name__))
    except AssertionError as e:
        failures.append(fn.__name__)
        print("FAIL %s: %s" % (fn.__name__, e))
    return fn


def run_code(code, env=None):
    """Runs code under the torch interpreter with the package; returns its last stdout line
    as JSON."""
    e = {"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": cache}
    e.update(env or {})
    r = T.run([py, "-c", code], env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r


@case
def the_callback_is_removed_when_the_last_profile_ends():
    out, _ = run_code(r'''
import json, torch, devtrace.torch as dt
a = torch.ones(1)
state = {"before": dt.observer_state()}
with dt.profile(None, backend="none") as p:
    state["inside"] = dt.observer_state()
    for _ in range(3):
        torch.add(a, a)
state["after"] = dt.observer_state()
for _ in range(5):
    torch.add(a, a)  # no callback: nothing to record, nothing to pay
adds = [n for _, n in p.events() if n == "aten::add"]
with dt.profile(None, backend="none") as q:
    state["again"] = dt.observer_state()
    torch.add(a, a)
state["after_again"] = dt.observer_state()
state["adds"] = [len(adds), len([n for _, n in q.events() if n == "aten::add"])]
print(json.dumps(state))
''')
    # (devtrace's callback installed, torch has a global callback)
    assert out == {"before": [False, None], "inside": [True, True], "after": [False, False],
                   "again": [True, True], "after_again": [False, False], "adds": [3, 1]}, out


@case
def a_profile_inside_another_is_refused_as_torch_refuses_it():
    outer = os.path.join(work, "outer.json")
    out, r = run_code(r'''
import json, sys, torch, devtrace.torch as dt
import torch.profiler as tp
a = torch.ones(1)
seen = {}
for name, make in (("torch", lambda: tp.profile()), ("devtrace", lambda: dt.profile(None, backend="none"))):
    with make():
        try:
            with make():
                torch.add(a, a)
        except Exception as e:
            seen[name] = [type(e).__name__, str(e)]
with dt.profile(sys.argv[1] if len(sys.argv) > 1 else %r, backend="none") as p:
    torch.add(a, a)
    try:
        with dt.profile(None, backend="none"):
            pass
    except RuntimeError:
        torch.mul(a, a)
    torch.sub(a, a)
seen["outer"] = sorted(n for _, n in p.events() if n in ("aten::add", "aten::mul", "aten::sub"))
print(json.dumps(seen))
''' % outer)
    assert out["torch"][0] == "RuntimeError", out  # what torch.profiler raises
    assert out.get("devtrace") == ["RuntimeError", "devtrace.torch.profile: another profile is already recording in "
                               "this process; profiles do not nest (torch.profiler refuses it too: 'Profiler is "
                               "already enabled on this thread.'): stop the outer one first"], out
    # The outer profile goes on and writes its trace, with the op of the refused one.
    assert out["outer"] == ["aten::add", "aten::mul", "aten::sub"], out
    assert "runs under devtrace record" not in r.stderr, r.stderr
    names = T.ops_by_name(T.tc.load(outer))
    assert (names["aten::add"], names["aten::mul"], names["aten::sub"]) == (1, 1, 1), names


@case
def a_read_only_cache_folder_is_named_in_one_line():
    ro = os.path.join(work, "ro-cache")
    os.makedirs(ro)
    code = ("import torch, devtrace.torch as dt\n"
            "with dt.profile(None, backend='none') as p:\n    torch.add(torch.ones(1), 1)\n"
            "print(len([n for _, n in p.events() if n == 'aten::add']))\n")
    env = {"PYTHONPATH": python_dir, "DEVTRACE_TORCH_CACHE": ro}
    if os.geteuid() != 0:
        os.chmod(ro, 0o555)
        cmd, why = [py, "-c", code], "Permission denied"
    else:  # root writes through permissions: a read-only bind mount in a mount namespace of its own
        cmd = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', ro, py, "-c", code]
        why = "Read-only file system"
        probe = T.run(["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0"', ro])
        if probe.returncode != 0:
            print("     (root, and no mount namespace here: %s)" % probe.stderr.strip())
            return "skipped"
    r = T.run(cmd, env=env)
    os.chmod(ro, 0o755)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines == ["devtrace: PyTorch ops are not recorded: cannot write the observer into its cache %s (%s): "
                     "set DEVTRACE_TORCH_CACHE to a writable folder; device events are still recorded" % (ro, why)], \
        r.stderr
    assert r.stdout.strip() == "0", r.stdout
    assert os.listdir(ro) == [], os.listdir(ro)


print("devtrace: %s" % ("FAILED: " + ", ".join(failures) if failures else "all devtrace.torch.profile cases passed"))
sys.exit(1 if failures else 0)
