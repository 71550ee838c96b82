"""cli_cases.py: what the devtrace command's test scripts share: the case decorator (runs a
case at once, prints ok/FAIL/SKIP, and keeps the names of the failed ones; a skipped case is
never counted as passed) and the runner of the command under test."""
import os
import subprocess


class Skipped(Exception):
    """A case that cannot run here: printed as SKIP, never counted as passed."""


def case_runner(failures):
    """A decorator that runs each case it decorates and appends the failed ones' names to failures."""
    def case(fn):
        try:
            fn()
            print(f"ok   {fn.__name__}")
        except Skipped as why:
            print(f"SKIP {fn.__name__}: {why}")
        except AssertionError as e:
            failures.append(fn.__name__)
            print(f"FAIL {fn.__name__}: {e}")
        return fn
    return case


def command_runner(devtrace, unset=()):
    """run(*args, env=None, timeout=120): devtrace with args, the environment without `unset`
    plus env, output captured as text."""
    def run(*args, env=None, timeout=120):
        e = {k: v for k, v in os.environ.items() if k not in unset}
        e.update(env or {})
        return subprocess.run([devtrace, *args], capture_output=True, text=True, env=e, timeout=timeout)
    return run
