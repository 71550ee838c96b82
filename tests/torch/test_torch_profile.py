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
        fn()
        print("ok   %s" % fn.__name__)
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


print("devtrace: %s" % ("FAILED: " + ", ".join(failures) if failures else "all devtrace.torch.profile cases passed"))
sys.exit(1 if failures else 0)
