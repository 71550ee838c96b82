"""devtrace record --torch's bootstrap: Python imports this ``sitecustomize`` at start-up
(the recorder puts this folder first on PYTHONPATH). It imports nothing heavy and never
imports torch: it watches for the program's own ``import torch`` and, once torch is
imported, attaches the PyTorch observer to the recorder's session (devtrace.torch). Then
it runs the sitecustomize it shadows, if there is one; usercustomize runs as usual."""
import os
import sys


def _devtrace_watch_torch():
    import importlib.abc
    import importlib.util

    class TorchImportWatch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("torch")
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            run_module = spec.loader.exec_module

            def exec_module(module):
                run_module(module)
                try:
                    import devtrace.torch
                    devtrace.torch.attach_to_record(module)
                except Exception as e:  # never break the program
                    print("devtrace: cannot attach to PyTorch: %s: %s" % (type(e).__name__, e), file=sys.stderr)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, TorchImportWatch())


def _devtrace_run_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    ours = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  (the program's own, if any)
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        if ours is not None:
            sys.modules["sitecustomize"] = ours


if os.environ.get("DEVTRACE_COLLECT_SOCKET") or os.environ.get("DEVTRACE_COLLECT_FD"):
    _devtrace_watch_torch()
_devtrace_run_shadowed_sitecustomize()
