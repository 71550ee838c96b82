#!/usr/bin/env python3
"""test_selection.py: the backend selection matrix (ctest label `selection`; docs/testing.md).

    test_selection.py CASE --devtrace BIN --open BIN --shim LIB --emu-run BIN --workload WL --work DIR
                      --emu NAME=PATH ... [--source-dir DIR --cmake BIN --generator G --c-compiler CC]

Each CASE builds a machine from scratch for the programs it runs: an environment with only
PATH, HOME, LC_ALL and the sanitizer options; every vendor library hidden by the shim
(hide_libs.c: dlopen and access fail for their file names, whatever the build machine has
installed: the CUDA toolkit's libcupti, the OpenCL ICD loader); OCL_ICD_VENDORS and
OPENCL_VENDOR_PATH pointing to an empty folder; then the emulators the case makes present,
through $DEVTRACE_<NAME>_LIBRARY as a user would. It runs `devtrace list`, and
`selection_open` (a program linked to libdevtrace that opens a session as an application
does: $DEVTRACE_BACKEND, else auto, or the name it is given, and prints `backend=` and
`reason=`), and `devtrace record`, and asserts their output lines exactly.

Cases: list_nothing_installed, auto_nothing_installed, list_overrides_missing,
auto_overrides_missing, list_sdk_roots_empty, auto_sdk_roots_empty,
opencl_loader_without_platform, one_present_<backend> (every backend an emulator stands in
for: --emu BACKEND=PATH), mspti_without_preload, two_present, auto_order, record_backend_wins,
missing_symbol, unknown_backend, empty_backends_build.
Exit 0 when every assertion holds, 1 otherwise, 77 when the case cannot run here (a backend
or an emulator it needs is not built), 2 on bad usage. Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
# Every backend's facts, read in main() from `devtrace list --json` (each descriptor through the
# public devtrace_backend_info): the fixed order in which DEVTRACE_BACKEND=auto probes the
# compiled-in backends, each one's description, validation level, the API name its messages
# use, the variable naming its library, its SDK variables and the file names it looks for.
ORDER, DESCRIPTION, LEVEL, API, LIBRARY_VARIABLE, SDK_VARS = [], {}, {}, {}, {}, {}
# The file names every backend looks for (the shim hides them all); the OpenCL loader apart.
VENDOR_LIBS = []
OPENCL_LOADER = "libOpenCL.so.1"
VENDOR_FILES = {}
# The backends an emulator stands in for (--emu BACKEND=PATH, from tests/emu's STANDS_IN_FOR).
EMULATED = []
# The backends whose vendor library must itself be preloaded (devtrace_backend_info.preload_library):
# a program run as `devtrace record` runs it has the emulator standing in for it in LD_PRELOAD.
PRELOADED = []


def read_facts(devtrace, emulators):
    proc = subprocess.run([devtrace, "list", "--json"], capture_output=True, text=True, timeout=60)
    facts = json.loads(proc.stdout)["backends"]
    for b in facts:
        name = b["name"]
        DESCRIPTION[name] = b["description"]
        if name == "none":
            continue
        ORDER.append(name)
        LEVEL[name] = b["validation"].split(":", 1)[0]
        API[name] = b["library_api"]
        LIBRARY_VARIABLE[name] = b["library_variable"]
        SDK_VARS[name] = b["sdk_variables"]
        VENDOR_FILES[name] = b["library_files"]
        if b["preload_library"]:
            PRELOADED.append(name)
        for f in b["library_files"]:
            if f not in VENDOR_LIBS and f != OPENCL_LOADER:
                VENDOR_LIBS.append(f)
    EMULATED.extend(b for b in ORDER if b in emulators)


# `why not:` on a machine with nothing installed and no SDK variable set: every backend's own
# account of where it looked and how to point it at the library. These are the texts of the
# messages, as specified; a backend without one here (a new vendor of the PTI family) has its
# text checked against the family's rule from its facts (pti_family_why) and taken as
# `devtrace list` gives it (complete_why_nothing).
WHY_NOTHING = {
    "cupti": "CUPTI library not found; tried $CUDA_HOME (unset), $CUDA_PATH (unset), "
             "/usr/local/cuda/lib64/{libcupti.so.13,libcupti.so.12,libcupti.so}, "
             "/usr/local/cuda/extras/CUPTI/lib64/{libcupti.so.13,libcupti.so.12,libcupti.so}, "
             "the loader's search path for libcupti.so.13,libcupti.so.12,libcupti.so, the process itself; "
             "set $DEVTRACE_CUPTI_LIBRARY to the library's path or $CUDA_HOME to the SDK root",
    "mcpti": "MCPTI library not found; tried $METAX_PATH (unset), $METAX_HOME (unset), $MACA_PATH (unset), "
             "$MACA_HOME (unset), /opt/maca/lib/libmcpti.so, /opt/maca/lib64/libmcpti.so, the loader's search path "
             "for libmcpti.so, the process itself; set $DEVTRACE_MCPTI_LIBRARY to the library's path or $METAX_PATH "
             "to the SDK root",
    "ppu": "HGPTI library not found; tried $PPU_SDK (unset), $PPU_HOME (unset), the loader's search path for "
           "libhgpti.so; set $DEVTRACE_PPU_LIBRARY to the library's path or $PPU_SDK to the SDK root",
    "iluvatar": "CoreX CUPTI library not found; tried $COREX_HOME (unset), $COREX_PATH (unset), "
                "/usr/local/corex/lib64/{libcupti.so,libcupti.so.1}, /usr/local/corex/lib/{libcupti.so,libcupti.so.1}; "
                "set $DEVTRACE_ILUVATAR_LIBRARY to the library's path or $COREX_HOME to the SDK root",
    "roctracer": "ROCtracer not found; tried $ROCM_PATH (unset), $DTK_PATH (unset), /opt/rocm/lib, /opt/dtk/lib "
                 "(libroctracer64.so{,.4,.1}, libgalaxyhip.so.5), the loader's search path, the process itself; set "
                 "DEVTRACE_ROCTRACER_LIBRARY to libroctracer64.so (ROCm) or libgalaxyhip.so.5 (Hygon DTK), or ROCM_PATH "
                 "or DTK_PATH to the SDK root",
    "mspti": "MSPTI library not found; tried $ASCEND_HOME_PATH (unset), "
             "/usr/local/Ascend/ascend-toolkit/latest/lib64/libmspti.so, "
             "/usr/local/Ascend/ascend-toolkit/latest/tools/mspti/lib64/libmspti.so, the loader's search path for "
             "libmspti.so, the process itself; set $DEVTRACE_MSPTI_LIBRARY to the library's path or $ASCEND_HOME_PATH "
             "to the SDK root",
    "opencl": "libOpenCL.so.1 not found (install ocl-icd-libopencl1 and an ICD such as pocl-opencl-icd)",
}
NOT_A_FILE = "cannot open shared object file: No such file or directory"


def pti_family_why(backend):
    """The rule every PTI-family backend's "not found" text follows, from its facts: the API's
    name, every SDK variable unset in order, its first library file, and the fix (its library
    variable, its first SDK variable)."""
    sdk = SDK_VARS[backend]
    head = "%s library not found; tried %s" % (API[backend], "".join("$%s (unset), " % v for v in sdk))
    fix = "; set $%s to the library's path%s" % (LIBRARY_VARIABLE[backend], " or $%s to the SDK root" % sdk[0]
                                                 if sdk else "")

    def check(text):
        if not text.startswith(head):
            return "does not start %r" % head
        if not text.endswith(fix):
            return "does not end %r" % fix
        files = VENDOR_FILES.get(backend, [])
        if files and files[0] not in text:
            return "does not name %s" % files[0]
        return None
    return check


def why_override_missing(backend, path):
    if backend == "roctracer":
        return ("$DEVTRACE_ROCTRACER_LIBRARY=%s cannot be loaded: %s: %s; point it at libroctracer64.so (ROCm) or "
                "libgalaxyhip.so.5 (Hygon DTK), or unset it to search" % (path, path, NOT_A_FILE))
    return ("$%s=%s cannot be loaded: %s: %s; point it at the %s library (or unset it to search)"
            % (LIBRARY_VARIABLE[backend], path, path, NOT_A_FILE, API[backend]))


def why_missing_symbol(backend, path, symbol):
    if backend == "roctracer":
        return "%s lacks the required symbol %s; it is not a usable ROCtracer library" % (path, symbol)
    return "%s in %s lacks the required symbol %s; it is not a usable %s library" % (API[backend], path, symbol,
                                                                                       API[backend])


def why_mspti_without_preload(path):
    return re.compile(re.escape("MSPTI (%s, API version " % path) + r"\d+" + re.escape(
        ") cannot trace here: msptiActivityEnable(MEMCPY) returned MSPTI_ERROR_WITHOUT_LD_PRELOAD (6); libmspti.so "
        "must be in LD_PRELOAD: run under 'devtrace record --backend mspti', or LD_PRELOAD=/path/libmspti.so"))


class Case:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.passed = 0
        self.work = os.path.join(args.work, args.case)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.empty = self.mkdir("empty")      # an SDK root with nothing in it
        self.vendors = self.mkdir("vendors")  # an OpenCL vendors folder without any ICD
        self.missing = os.path.join(self.work, "missing")  # never created

    def mkdir(self, name):
        path = os.path.join(self.work, name)
        os.makedirs(path, exist_ok=True)
        return path

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
        return ok

    def complete_why_nothing(self):
        """WHY_NOTHING for every backend: one without a text of its own gets the text `devtrace
        list` gives on a machine with nothing installed, once it follows the PTI family's rule."""
        lacking = [b for b in ORDER if b not in WHY_NOTHING]
        if not lacking:
            return
        blocks = self.list_blocks(self.machine())[2]
        for b in lacking:
            why = (blocks.get(b) or {}).get("why")
            if self.check_why(why, pti_family_why(b), "%s: why-not with nothing installed (the PTI family's rule)" % b):
                WHY_NOTHING[b] = why
            else:
                WHY_NOTHING[b] = "(%s: no valid why-not)" % b

    def emu(self, name):
        path = self.args.emu.get(name)
        if not path or not os.path.exists(path):
            raise Skip("the %s emulator is not built here" % name)
        return path

    def machine(self, present=None, missing=None, sdk=None, hide_opencl=True, preload=(), extra=None):
        """The environment of a machine with only what the case puts there."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.work, "LC_ALL": "C"}
        for k in ("UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"):
            if os.environ.get(k):
                env[k] = os.environ[k]
        # The shim is preloaded ahead of gcc's ASan runtime, which must then not insist on being first.
        env["ASAN_OPTIONS"] = ":".join(x for x in (os.environ.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0") if x)
        env["DT_HIDE_LIBS"] = ":".join(VENDOR_LIBS + ([OPENCL_LOADER] if hide_opencl else []))
        env["LD_PRELOAD"] = ":".join([self.args.shim] + list(preload))
        env["OCL_ICD_VENDORS"] = env["OPENCL_VENDOR_PATH"] = self.vendors
        if sdk:
            for names in SDK_VARS.values():
                for name in names:
                    env[name] = sdk
        for b, path in dict(present or {}, **(missing or {})).items():
            env[LIBRARY_VARIABLE[b]] = path
        env.update(extra or {})
        return env

    def run(self, argv, env, timeout=120):
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)

    # ---- devtrace list ----

    def list_blocks(self, env):
        """`devtrace list` as (exit status, lines, {backend: {line, validation, why, extra}}, order)."""
        proc = self.run([self.args.devtrace, "list"], env)
        lines = proc.stdout.splitlines()
        blocks, order = {}, []
        for line in lines[1:]:
            m = re.match(r"^(\S+)\s+(yes|no)\s", line)
            if m:
                order.append(m.group(1))
                blocks[m.group(1)] = {"line": line, "validation": None, "why": None, "extra": []}
            elif order and line.startswith("           validation: "):
                blocks[order[-1]]["validation"] = line
            elif order and line.startswith("           why not: "):
                blocks[order[-1]]["why"] = line[len("           why not: "):]
            elif order:
                blocks[order[-1]]["extra"].append(line)
        return proc, lines, blocks, order

    def expect_list(self, env, expected, label):
        """expected: backend -> None (can trace) or its why: exact text, a compiled pattern, or a
        function returning an error text (None when it holds)."""
        proc, lines, blocks, order = self.list_blocks(env)
        self.check(proc.returncode == 0, "%s: devtrace list exited %d: %s" % (label, proc.returncode, proc.stderr))
        self.check(lines[:1] == ["BACKEND    CAN  WHAT"], "%s: header %r" % (label, lines[:1]))
        self.check(order == ORDER + ["none"], "%s: backends %s, not the fixed order %s" % (label, order, ORDER + ["none"]))
        for name in ORDER + ["none"]:
            b = blocks.get(name)
            if not b:
                continue
            can = "yes" if name == "none" or expected.get(name) is None else "no"
            want = "%-10s %-4s %s" % (name, can, DESCRIPTION[name])
            self.check(b["line"] == want, "%s: %r, expected %r" % (label, b["line"], want))
            if name == "none":
                self.check(b["validation"] == "           validation: n/a: records nothing",
                           "%s: none's validation line %r" % (label, b["validation"]))
            else:
                prefix = "           validation: %s: " % LEVEL[name]
                self.check((b["validation"] or "").startswith(prefix) and len(b["validation"]) > len(prefix),
                           "%s: %s's validation line %r does not start %r" % (label, name, b["validation"], prefix))
            self.check(not b["extra"], "%s: %s: unexpected lines %s" % (label, name, b["extra"]))
            if can == "yes":
                self.check(b["why"] is None, "%s: %s can trace but says why not: %r" % (label, name, b["why"]))
            else:
                self.check_why(b["why"], expected[name], "%s: %s why-not" % (label, name))
        return blocks

    def check_why(self, got, want, label):
        if got is None:
            return self.check(False, "%s: missing" % label)
        if isinstance(want, str):
            return self.check(got == want, "%s:\n   got  %r\n   want %r" % (label, got, want))
        if hasattr(want, "fullmatch"):
            return self.check(bool(want.fullmatch(got)), "%s: %r does not match %r" % (label, got, want.pattern))
        err = want(got)
        return self.check(err is None, "%s: %s: %r" % (label, err, got))

    # ---- what a session selects ----

    def select(self, env, name=None):
        argv = [self.args.open] + ([name] if name else [])
        proc = self.run(argv, env)
        out = {}
        for line in proc.stdout.splitlines():
            k, _, v = line.partition("=")
            out[k] = v
        out["rc"] = proc.returncode
        out["stderr"] = proc.stderr
        return out

    def expect_select(self, env, backend, reason, label, name=None):
        got = self.select(env, name)
        self.check(got["rc"] == 0, "%s: selection_open exited %d: %s %s" % (label, got["rc"], got.get("error"),
                                                                              got["stderr"]))
        self.check(got.get("backend") == backend, "%s: selected %r, expected %r (reason: %r)"
                   % (label, got.get("backend"), backend, got.get("reason")))
        if reason is not None:
            self.check_why(got.get("reason"), reason, "%s: the session's reason" % label)
        return got


class Skip(Exception):
    pass


def every_reason(whys):
    """The unavailable session's reason: every compiled-in backend's why, in the auto order."""
    return "; ".join("%s: %s" % (b, whys[b]) for b in ORDER)


def ends_with_fix_and_names(root, backend):
    fix = WHY_NOTHING[backend][WHY_NOTHING[backend].rindex("; set "):]

    def check(text):
        if (root + "/") not in text:
            return "does not name the SDK root %s it was pointed at" % root
        if not text.endswith(fix):
            return "is cut short or lacks the fix (should end %r)" % fix
        return None
    return check


def whys_sdk_roots(root):
    whys = {b: ends_with_fix_and_names(root, b) for b in EMULATED}
    whys["opencl"] = WHY_NOTHING["opencl"]
    return whys


# ---- the cases ----

def case_list_nothing_installed(c):
    c.expect_list(c.machine(), WHY_NOTHING, "nothing installed")


def case_auto_nothing_installed(c):
    env = c.machine(extra={"DEVTRACE_BACKEND": "auto"})
    c.expect_select(env, "none", every_reason(WHY_NOTHING), "DEVTRACE_BACKEND=auto, nothing installed")
    c.expect_select(c.machine(), "none", every_reason(WHY_NOTHING), "DEVTRACE_BACKEND unset, nothing installed")


def overrides_missing(c):
    missing = {b: os.path.join(c.missing, "lib%s.so" % b) for b in EMULATED}
    whys = {b: why_override_missing(b, p) for b, p in missing.items()}
    whys["opencl"] = WHY_NOTHING["opencl"]
    return c.machine(missing=missing, sdk=c.empty), whys


def case_list_overrides_missing(c):
    env, whys = overrides_missing(c)
    c.expect_list(env, whys, "overrides to missing files")


def case_auto_overrides_missing(c):
    env, whys = overrides_missing(c)
    env["DEVTRACE_BACKEND"] = "auto"
    c.expect_select(env, "none", every_reason(whys), "DEVTRACE_BACKEND=auto, overrides to missing files")


def case_list_sdk_roots_empty(c):
    c.expect_list(c.machine(sdk=c.empty), whys_sdk_roots(c.empty), "SDK roots empty")


def case_auto_sdk_roots_empty(c):
    env = c.machine(sdk=c.empty, extra={"DEVTRACE_BACKEND": "auto"})
    got = c.expect_select(env, "none", None, "DEVTRACE_BACKEND=auto, SDK roots empty")
    # Every backend's own why, in the auto order, each as `devtrace list` gives it (whether
    # those are whole is list_sdk_roots_empty's business).
    listed = c.list_blocks(c.machine(sdk=c.empty))[2]
    whys = {b: (listed.get(b) or {}).get("why") for b in ORDER}
    c.check_why(got.get("reason"), every_reason(whys), "DEVTRACE_BACKEND=auto, SDK roots empty: the session's reason")


def case_opencl_loader_without_platform(c):
    # The OpenCL probe asks only whether the ICD loader (libOpenCL.so.1) loads: it never calls
    # OpenCL (it runs inside the loader's own initialisation when the layer starts a
    # session), so an installed loader with no ICD at all (OCL_ICD_VENDORS and
    # OPENCL_VENDOR_PATH point to an empty folder) still says yes, and auto picks it.
    env = c.machine(hide_opencl=False, extra={"DEVTRACE_BACKEND": "auto"})
    probe = c.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('%s')" % OPENCL_LOADER], env)
    if probe.returncode != 0:
        raise Skip("no OpenCL ICD loader (%s) on this machine" % OPENCL_LOADER)
    whys = dict(WHY_NOTHING, opencl=None)
    c.expect_list(env, whys, "ICD loader, no platform")
    c.expect_select(env, "opencl", "", "DEVTRACE_BACKEND=auto, ICD loader, no platform")


def one_present(backend):
    def case(c):
        lib = c.emu(backend)
        preload = [lib] if backend in PRELOADED else []  # as `devtrace record --backend mspti` runs a program
        env = c.machine(present={backend: lib}, preload=preload)
        c.expect_list(env, dict(WHY_NOTHING, **{backend: None}), "only %s present" % backend)
        env["DEVTRACE_BACKEND"] = "auto"
        c.expect_select(env, backend, "", "DEVTRACE_BACKEND=auto, only %s present" % backend)
    return case


def case_mspti_without_preload(c):
    lib = c.emu("mspti")
    env = c.machine(present={"mspti": lib})
    why = why_mspti_without_preload(lib)
    c.expect_list(env, dict(WHY_NOTHING, mspti=why), "mspti present, not preloaded")
    got = c.expect_select(dict(env, DEVTRACE_BACKEND="mspti"), "none", None, "DEVTRACE_BACKEND=mspti, not preloaded")
    c.check_why(got.get("reason", "")[len("mspti: "):], why, "DEVTRACE_BACKEND=mspti, not preloaded: reason")
    c.check(got.get("reason", "").startswith("mspti: "), "the reason %r does not start 'mspti: '" % got.get("reason"))
    c.expect_select(dict(env, DEVTRACE_BACKEND="auto"), "none", None, "DEVTRACE_BACKEND=auto, mspti not preloaded")


def presence(c, backends):
    """present, preload, hide_opencl for a set of backends present."""
    present = {b: c.emu(b) for b in backends if b != "opencl"}
    preload = [present[b] for b in PRELOADED if b in present]
    return present, preload, "opencl" not in backends


def need_opencl_loader(c):
    probe = c.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('%s')" % OPENCL_LOADER], c.machine(hide_opencl=False))
    return probe.returncode == 0


def case_two_present(c):
    have_cl = need_opencl_loader(c)
    for first, second in zip(ORDER, ORDER[1:]):
        if second == "opencl" and not have_cl:
            print("note: no OpenCL ICD loader here: the pair (mspti, opencl) is not checked")
            continue
        present, preload, hide_cl = presence(c, [first, second])
        env = c.machine(present=present, preload=preload, hide_opencl=hide_cl)
        label = "%s and %s present" % (first, second)
        c.expect_list(env, dict(WHY_NOTHING, **{first: None, second: None}), label)
        c.expect_select(dict(env, DEVTRACE_BACKEND="auto"), first, "", "DEVTRACE_BACKEND=auto, " + label)
        c.expect_select(dict(env, DEVTRACE_BACKEND=second), second, "", "DEVTRACE_BACKEND=%s, %s" % (second, label))
        # The name the program gives (devtrace_config.backend, `--backend`) wins over the variable.
        c.expect_select(dict(env, DEVTRACE_BACKEND=first), second, "",
                        "config backend=%s over DEVTRACE_BACKEND=%s, %s" % (second, first, label), name=second)
        # A backend asked for by name is never replaced by another one: unavailable, and why.
        absent = next(b for b in ORDER if b not in (first, second))
        c.expect_select(dict(env, DEVTRACE_BACKEND=absent), "none", "%s: %s" % (absent, WHY_NOTHING[absent]),
                        "DEVTRACE_BACKEND=%s (absent), %s" % (absent, label))


def case_auto_order(c):
    """Everything present, then the winner taken away one at a time: the whole auto order."""
    backends = [b for b in ORDER if b != "opencl" or need_opencl_loader(c)]
    if "opencl" not in backends:
        print("note: no OpenCL ICD loader here: opencl is not part of the order checked")
    present_list = list(backends)
    first = True
    while True:
        present, preload, hide_cl = presence(c, present_list)
        env = c.machine(present=present, preload=preload, hide_opencl=hide_cl)
        want = present_list[0] if present_list else "none"
        label = "present: %s" % (", ".join(present_list) or "nothing")
        if first:
            c.expect_list(env, dict(WHY_NOTHING, **{b: None for b in present_list}), label)
            first = False
        c.expect_select(dict(env, DEVTRACE_BACKEND="auto"), want, "" if present_list else None,
                        "DEVTRACE_BACKEND=auto, " + label)
        if not present_list:
            break
        last = present_list[-1]
        c.expect_select(dict(env, DEVTRACE_BACKEND=last), last, "", "DEVTRACE_BACKEND=%s, %s" % (last, label))
        present_list.pop(0)


def load_trace(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def case_record_backend_wins(c):
    cupti, mcpti = c.emu("cupti"), c.emu("mcpti")
    env = c.machine(present={"cupti": cupti, "mcpti": mcpti}, extra={"DEVTRACE_BACKEND": "cupti"})
    out = os.path.join(c.work, "mcpti.json")
    proc = c.run([c.args.devtrace, "record", "--backend", "mcpti", "-q", "-o", out, "--", c.args.emu_run, "--lib",
                  mcpti, c.args.workload], env, timeout=240)
    c.check(proc.returncode == 0, "record --backend mcpti exited %d: %s" % (proc.returncode, proc.stderr[-800:]))
    if c.check(os.path.exists(out), "record --backend mcpti wrote no trace"):
        meta = load_trace(out)["devtrace"]
        c.check(meta.get("backend") == "mcpti" and meta["counts"]["kernel"] == 17,
                "--backend mcpti over DEVTRACE_BACKEND=cupti: backend %s, counts %s" % (meta.get("backend"),
                                                                                      meta.get("counts")))
    env.pop("DEVTRACE_BACKEND")
    out = os.path.join(c.work, "auto.json")
    proc = c.run([c.args.devtrace, "record", "-q", "-o", out, "--", c.args.emu_run, "--lib", cupti, c.args.workload],
                 env, timeout=240)
    c.check(proc.returncode == 0, "record (auto) exited %d: %s" % (proc.returncode, proc.stderr[-800:]))
    if c.check(os.path.exists(out), "record (auto) wrote no trace"):
        meta = load_trace(out)["devtrace"]
        c.check(meta.get("backend") == "cupti" and meta["counts"]["kernel"] == 17,
                "record (auto), cupti and mcpti present: backend %s, counts %s" % (meta.get("backend"),
                                                                                  meta.get("counts")))
    # $DEVTRACE_BACKEND in the recorder's environment names the backend when --backend is not given.
    env["DEVTRACE_BACKEND"] = "mcpti"
    out = os.path.join(c.work, "env.json")
    proc = c.run([c.args.devtrace, "record", "-q", "-o", out, "--", c.args.emu_run, "--lib", mcpti, c.args.workload],
                 env, timeout=240)
    if c.check(proc.returncode == 0 and os.path.exists(out), "record with DEVTRACE_BACKEND=mcpti: %s" % proc.stderr[-800:]):
        meta = load_trace(out)["devtrace"]
        c.check(meta.get("backend") == "mcpti" and meta["counts"]["kernel"] == 17,
                "record with DEVTRACE_BACKEND=mcpti: backend %s, counts %s" % (meta.get("backend"), meta.get("counts")))


def case_record_auto_preloads_a_vendor_without_injection_hook(c):
    # auto, and only MetaX present: the recorder finds mcpti (it has no injection hook) and
    # preloads the collector with it, so a MetaX program is traced without --backend.
    mcpti = c.emu("mcpti")
    env = c.machine(present={"mcpti": mcpti})
    out = os.path.join(c.work, "auto-mcpti.json")
    proc = c.run([c.args.devtrace, "record", "-q", "-o", out, "--", c.args.emu_run, "--lib", mcpti, c.args.workload],
                 env, timeout=240)
    c.check(proc.returncode == 0, "record (auto), mcpti present: exited %d: %s" % (proc.returncode, proc.stderr[-800:]))
    if c.check(os.path.exists(out), "record (auto), mcpti present: no trace"):
        meta = load_trace(out)["devtrace"]
        c.check(meta.get("backend") == "mcpti" and meta["counts"]["kernel"] == 17 and meta["counts"]["runtime"] == 187,
                "record (auto), mcpti present: backend %s, counts %s" % (meta.get("backend"), meta.get("counts")))


def case_missing_symbol(c):
    noflush, nocb, mspti_noflush = c.emu("cupti-noflush"), c.emu("roctracer-nocb"), c.emu("mspti-noflush")
    mcpti, mspti = c.emu("mcpti"), c.emu("mspti")
    whys = dict(WHY_NOTHING, cupti=why_missing_symbol("cupti", noflush, "cuptiActivityFlushAll"),
                roctracer=why_missing_symbol("roctracer", nocb, "roctracer_enable_domain_callback"),
                mspti=why_missing_symbol("mspti", mspti_noflush, "msptiActivityFlushAll"))
    env = c.machine(present={"cupti": noflush, "roctracer": nocb, "mspti": mspti_noflush})
    c.expect_list(env, whys, "libraries without a required symbol")
    for b in ("cupti", "roctracer", "mspti"):
        c.expect_select(dict(env, DEVTRACE_BACKEND=b), "none", "%s: %s" % (b, whys[b]),
                        "DEVTRACE_BACKEND=%s, its library lacks a symbol" % b)
    # auto passes over a library without a required symbol to the next backend that can trace.
    env = c.machine(present={"cupti": noflush, "mcpti": mcpti})
    c.expect_list(env, dict(WHY_NOTHING, cupti=whys["cupti"], mcpti=None), "cupti without FlushAll, mcpti present")
    c.expect_select(dict(env, DEVTRACE_BACKEND="auto"), "mcpti", "", "DEVTRACE_BACKEND=auto, cupti lacks FlushAll")
    env = c.machine(present={"roctracer": nocb, "mspti": mspti}, preload=[mspti])
    c.expect_select(dict(env, DEVTRACE_BACKEND="auto"), "mspti", "", "DEVTRACE_BACKEND=auto, roctracer lacks a symbol")


def case_unknown_backend(c):
    names = "auto, " + ", ".join(ORDER) + ", none"
    env = c.machine(extra={"DEVTRACE_BACKEND": "nosuch"})
    got = c.select(env)
    c.check(got["rc"] == 1 and got.get("error") == "unknown backend \"nosuch\"; choose one of: %s (see 'devtrace list')"
            % names, "DEVTRACE_BACKEND=nosuch: %r" % got)
    proc = c.run([c.args.devtrace, "record", "--backend", "nosuch", "-o", os.path.join(c.work, "t.json"), "--", "true"],
                 c.machine())
    want = "devtrace record: unknown backend 'nosuch'; choose one of: %s (see 'devtrace list')\n" % names
    c.check(proc.returncode == 2 and proc.stderr == want, "record --backend nosuch: exit %d, %r (want 2, %r)"
            % (proc.returncode, proc.stderr, want))


def case_empty_backends_build(c):
    a = c.args
    if not (a.source_dir and a.cmake):
        raise Skip("needs --source-dir and --cmake")
    build = os.path.join(c.work, "build")
    cfg = [a.cmake, "-S", a.source_dir, "-B", build, "-DDEVTRACE_BACKENDS=", "-DDEVTRACE_BUILD_TESTS=OFF",
           "-DDEVTRACE_BUILD_EXAMPLES=OFF", "-DDEVTRACE_BUILD_BENCH=OFF", "-DDEVTRACE_BUILD_FUZZ=OFF",
           "-DDEVTRACE_WERROR=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if a.generator:
        cfg += ["-G", a.generator]
    if a.c_compiler:
        cfg += ["-DCMAKE_C_COMPILER=" + a.c_compiler]
    env = dict(os.environ)
    for k in ("CFLAGS", "LDFLAGS"):
        env.pop(k, None)
    proc = subprocess.run(cfg, env=env, capture_output=True, text=True, timeout=300)
    if not c.check(proc.returncode == 0, "configure with DEVTRACE_BACKENDS= failed:\n%s%s" % (proc.stdout, proc.stderr)):
        return
    c.check("-- devtrace backends compiled in:  (and 'none')" in proc.stdout.splitlines(),
            "configure does not say that no backend is compiled in")
    proc = subprocess.run([a.cmake, "--build", build, "--target", "devtrace", "devtrace_cli"], env=env,
                          capture_output=True, text=True, timeout=600)
    if not c.check(proc.returncode == 0, "build of devtrace and devtrace_cli with no backend failed (warnings are "
                                         "errors):\n%s%s" % (proc.stdout[-4000:], proc.stderr[-4000:])):
        return
    devtrace = os.path.join(build, "bin", "devtrace")
    lib = os.path.join(build, "lib")
    proc = c.run([devtrace, "list"], c.machine())
    want = ["BACKEND    CAN  WHAT", "none       yes  unavailable (records nothing, says why)",
            "           validation: n/a: records nothing"]
    c.check(proc.returncode == 0 and proc.stdout.splitlines() == want, "devtrace list with no backend:\n%s\nwant:\n%s"
            % (proc.stdout, "\n".join(want)))
    proc = c.run([devtrace, "record", "--backend", "cupti", "-o", os.path.join(c.work, "t.json"), "--", "true"],
                 c.machine())
    want_err = "devtrace record: unknown backend 'cupti'; choose one of: auto, none (see 'devtrace list')\n"
    c.check(proc.returncode == 2 and proc.stderr == want_err, "record --backend cupti with no backend: exit %d, %r"
            % (proc.returncode, proc.stderr))
    out = os.path.join(c.work, "none.json")
    proc = c.run([devtrace, "record", "--backend", "none", "-q", "-o", out, "--", "true"], c.machine())
    c.check(proc.returncode == 0, "record --backend none exited %d: %s" % (proc.returncode, proc.stderr))
    if c.check(os.path.exists(out), "record --backend none wrote no trace"):
        meta = load_trace(out)["devtrace"]
        c.check(meta.get("backend") == "none" and meta.get("unavailable") == 'backend "none" selected'
                and all(v == 0 for v in meta["counts"].values()),
                "record --backend none: %s" % {k: meta.get(k) for k in ("backend", "unavailable", "counts")})
    # A program linked to this libdevtrace: auto falls back to none, and says why.
    exe = os.path.join(c.work, "selection_open")
    cc = a.c_compiler or "cc"
    proc = subprocess.run([cc, "-std=c11", "-I", os.path.join(a.source_dir, "include"), a.open_source, "-o", exe,
                           "-L", lib, "-ldevtrace", "-Wl,-rpath," + lib], capture_output=True, text=True, timeout=120)
    if c.check(proc.returncode == 0, "a program does not link to libdevtrace with no backend: %s" % proc.stderr):
        run = c.run([exe], dict(c.machine(), DEVTRACE_BACKEND="auto"))
        lines = run.stdout.splitlines()
        c.check(run.returncode == 0 and lines[:1] == ["backend=none"], "auto with no backend: %r" % run.stdout)
        reason = lines[1][len("reason="):] if len(lines) > 1 and lines[1].startswith("reason=") else None
        c.check(bool(reason), "auto with no backend compiled in gives no reason (%r): an unavailable session must "
                              "say why (no backend is compiled in)" % reason)
    nm = shutil.which("nm")
    if nm:
        syms = subprocess.run([nm, "-D", "--defined-only", os.path.join(lib, "libdevtrace.so")], capture_output=True,
                              text=True).stdout
        vendor = sorted(set(re.findall(r"\b(InitializeInjection|clGetLayerInfo|clInitLayer)\b", syms)))
        c.check(not vendor, "libdevtrace.so with no backend exports vendor entry points: %s" % vendor)


CASES = {
    "list_nothing_installed": case_list_nothing_installed,
    "auto_nothing_installed": case_auto_nothing_installed,
    "list_overrides_missing": case_list_overrides_missing,
    "auto_overrides_missing": case_auto_overrides_missing,
    "list_sdk_roots_empty": case_list_sdk_roots_empty,
    "auto_sdk_roots_empty": case_auto_sdk_roots_empty,
    "opencl_loader_without_platform": case_opencl_loader_without_platform,
    "mspti_without_preload": case_mspti_without_preload,
    "two_present": case_two_present,
    "auto_order": case_auto_order,
    "record_backend_wins": case_record_backend_wins,
    "record_auto_preloads_a_vendor_without_injection_hook": case_record_auto_preloads_a_vendor_without_injection_hook,
    "missing_symbol": case_missing_symbol,
    "unknown_backend": case_unknown_backend,
    "empty_backends_build": case_empty_backends_build,
}
# one_present_BACKEND: for each backend an emulator stands in for (main()).


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", help="one of: %s, one_present_BACKEND" % ", ".join(sorted(CASES)))
    ap.add_argument("--all-backends", default="", help="every backend of the registry, ','-separated (CMake's "
                                                       "DEVTRACE_ALL_BACKENDS): the matrix needs them all compiled in")
    ap.add_argument("--devtrace", required=True)
    ap.add_argument("--open", required=True, help="the selection_open program")
    ap.add_argument("--open-source", help="selection_open.c (empty_backends_build compiles it)")
    ap.add_argument("--shim", required=True, help="libdt-hide-libs.so")
    ap.add_argument("--emu-run", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--emu", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--source-dir")
    ap.add_argument("--cmake")
    ap.add_argument("--generator")
    ap.add_argument("--c-compiler")
    args = ap.parse_args()
    args.emu = dict(e.split("=", 1) for e in args.emu)
    read_facts(args.devtrace, args.emu)
    for b in EMULATED:
        CASES["one_present_" + b] = one_present(b)
    if args.case not in CASES:
        print("test_selection.py: unknown case %r (one of: %s)" % (args.case, ", ".join(sorted(CASES))),
              file=sys.stderr)
        return 2
    if args.case != "empty_backends_build":
        lacking = [b for b in args.all_backends.split(",") if b and b not in ORDER]
        if lacking:
            print("SKIPPED: the selection matrix needs every backend compiled in; this devtrace lacks %s "
                  "(DEVTRACE_BACKENDS, or a backend source not written yet)" % ", ".join(lacking))
            return SKIP
    c = Case(args)
    try:
        if args.case != "empty_backends_build":
            c.complete_why_nothing()
        CASES[args.case](c)
    except Skip as e:
        print("SKIPPED: %s: %s" % (args.case, e))
        return SKIP
    for f in c.failures:
        print("FAIL %s" % f)
    print("selection %s: %d assertion(s) hold, %d fail" % (args.case, c.passed, len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
