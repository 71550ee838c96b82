#!/usr/bin/env python3
"""test_symlinks.py: no file devtrace creates is written through a name another user planted.

Run as root, as `devtrace record` often is: another user (a uid of its own, taken in a forked
child with setuid) owns a folder where root writes its traces and plants names there before the
run: a symbolic link to a file of root's (the victim) at the trace's `.tmp`, at the trace itself,
at a per-process trace's `.tmp` (`%r`), at the recorder's spill (`.spill`), at the raw capture, at the `.tmp` of `devtrace replay`
and `devtrace convert`; its own regular file at the raw capture; a link of its own standing for
a folder of the output path (`LINK/t.json`, as a `.d` folder of traces). The victim must keep
its bytes in every case, the trace must be complete under its name (or the run refused with
one line naming the link, before the program runs), and the planted names left as they were.
The collectors' control-socket folder (TMPDIR in that user's folder) must be root's own, 0700,
not a link. Not root, or no uid free: the test says so and is skipped (exit 77), never passed.
Writes OUT/symlinks.md.
"""
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from rel_common import Cases, host, load_trace, parse_args, record, workload_counts

args = parse_args(__doc__.split("\n\n")[0])
os.makedirs(args.out, exist_ok=True)
WL = workload_counts(args.workload)
SKIP = 77

if os.geteuid() != 0:
    print("SKIPPED: the planted names must belong to another user, which only root can arrange "
          "(run this test as root: CI does)")
    sys.exit(SKIP)


def free_uid():
    for uid in range(54321, 54421):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    return None


OTHER = free_uid()
if OTHER is None:
    print("SKIPPED: no free uid in 54321..54420 for the other user")
    sys.exit(SKIP)
print("the other user: uid %d (setuid in a forked child); fs.protected_symlinks=%s" % (
    OTHER, open("/proc/sys/fs/protected_symlinks").read().strip()
    if os.path.exists("/proc/sys/fs/protected_symlinks") else "?"))

base = tempfile.mkdtemp(prefix="devtrace-links-")
os.chmod(base, 0o755)
private = os.path.join(base, "root-only")
os.mkdir(private, 0o700)
VICTIM = os.path.join(private, "victim")
VICTIM_BYTES = b"root's file: must never be written by devtrace\n"
shared = os.path.join(base, "shared")  # the other user's folder: root writes its traces here
os.mkdir(shared, 0o755)
os.chown(shared, OTHER, OTHER)
cases = Cases(args, "symlinks")


def as_other(fn):
    """Runs fn() in a forked child with the other user's uid and gid; raises if it failed."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(OTHER)
            os.setuid(OTHER)
            fn()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the other user could not plant its names"


def fresh_victim():
    with open(VICTIM, "wb") as f:
        f.write(VICTIM_BYTES)
    os.chmod(VICTIM, 0o600)


def plant_link(name, target=VICTIM):
    path = os.path.join(shared, name)
    if os.path.lexists(path):
        as_other(lambda: os.unlink(path))
    as_other(lambda: os.symlink(target, path))
    st = os.lstat(path)
    assert stat.S_ISLNK(st.st_mode) and st.st_uid == OTHER, "the planted link is the other user's"
    return path


def check_victim_and_link(link, target=VICTIM):
    with open(VICTIM, "rb") as f:
        got = f.read()
    assert got == VICTIM_BYTES, "the victim was written through the link: now %d bytes, begins %r" % (
        len(got), got[:40])
    st = os.lstat(link)
    assert stat.S_ISLNK(st.st_mode) and os.readlink(link) == target, "the planted link was changed"


def rel_host():
    return host(args)


def check_complete(path):
    t = load_trace(path)
    meta = t["devtrace"]
    for k in ("kernel", "memcpy", "memset", "runtime"):
        assert meta["counts"][k] == WL[k], "counts.%s = %d, expected %d" % (k, meta["counts"][k], WL[k])
    return t


def record_into(name, extra=(), env=None):
    """devtrace record -o SHARED/name (name may hold %r) on the emulator: (result, trace path)."""
    e = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu)
    e.pop("DEVEMU_FAULTS", None)
    e.update(env or {})
    cmd = [args.devtrace, "record", "-q", "-b", "cupti", "-o", os.path.join(shared, name), *extra, "--", *rel_host()]
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=120)


def trace_tmp():
    fresh_victim()
    link = plant_link("t.json.tmp")
    r = record_into("t.json")
    check_victim_and_link(link)
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr)
    check_complete(os.path.join(shared, "t.json"))
    left = sorted(f for f in os.listdir(shared) if f.startswith("t.json.tmp."))
    assert not left, "a temporary file was left: %s" % left
    return "trace complete under t.json; the victim unchanged; the link left as it was"


def trace_itself():
    fresh_victim()
    link = plant_link("t2.json")
    r = record_into("t2.json")
    assert r.returncode == 0, r.stderr
    with open(VICTIM, "rb") as f:
        assert f.read() == VICTIM_BYTES, "the victim was written through the link"
    st = os.lstat(link)
    assert stat.S_ISREG(st.st_mode) and st.st_uid == 0, "the link is replaced by root's trace (renamed over it)"
    check_complete(link)
    return "the link is replaced by the trace (a rename), the victim unchanged"


def spill_link():
    """The recorder's spill (TRACE.spill, written while the program runs): a link planted there is
    left alone, the spill made under a new name beside it and removed after the trace is written."""
    fresh_victim()
    link = plant_link("sp.json.spill")
    r = record_into("sp.json")
    check_victim_and_link(link)
    assert r.returncode == 0 and r.stderr == "", "exit %d: %s" % (r.returncode, r.stderr)
    check_complete(os.path.join(shared, "sp.json"))
    left = sorted(f for f in os.listdir(shared) if f.startswith("sp.json.spill."))
    assert not left, "a spill was left: %s" % left
    return "trace complete under sp.json; the spill made beside the link and removed; the victim unchanged"


def per_process_tmp():
    fresh_victim()
    link = plant_link("p0.json.tmp")
    r = record_into("p%r.json", env={"RANK": "0", "WORLD_SIZE": "1"})
    check_victim_and_link(link)
    assert r.returncode == 0, r.stderr
    check_complete(os.path.join(shared, "p0.json"))
    return "per-process trace p%r.json complete as p0.json; the victim unchanged"


def raw_capture_link():
    fresh_victim()
    link = plant_link("r.dtraw")
    r = record_into("r.json", extra=["--raw", link])
    check_victim_and_link(link)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, "exit %d: %s" % (r.returncode, r.stderr)
    assert lines[0] == ("devtrace record: cannot write the raw capture to %s: it is a symbolic link, which devtrace "
                        "does not write through; remove it or choose another path" % link), lines[0]
    assert r.stdout == "", "the program ran: %r" % r.stdout
    return "refused before the program runs, one line naming the link; the victim unchanged"


def raw_capture_other_users_file():
    path = os.path.join(shared, "theirs.dtraw")
    if os.path.lexists(path):
        as_other(lambda: os.unlink(path))

    def make():
        with open(path, "wb") as f:
            f.write(b"the other user's bytes\n")
    as_other(make)
    r = record_into("r2.json", extra=["--raw", path])
    assert r.returncode == 2 and "a file of another user is there" in r.stderr, (r.returncode, r.stderr)
    with open(path, "rb") as f:
        assert f.read() == b"the other user's bytes\n", "the other user's file was emptied"
    return "refused (a file of another user is there); that file unchanged"


def raw_capture_in_the_collector():
    """The collector opens the raw capture itself ($DEVTRACE_RAW, as a program linked to devtrace
    or a launcher that sets it does): a link planted there gets a note, not a write."""
    fresh_victim()
    link = plant_link("env.dtraw")
    r = record_into("env.json", env={"DEVTRACE_RAW": link})
    check_victim_and_link(link)
    assert r.returncode == 0, r.stderr
    t = check_complete(os.path.join(shared, "env.json"))
    assert any("raw capture not written" in n and "symbolic link" in n for n in t["devtrace"]["notes"]), \
        t["devtrace"]["notes"]
    return "the collector refuses it: a note 'raw capture not written: ... symbolic link', the trace complete"


def own_raw():
    """A raw capture of root's own, in root's folder (for replay and convert)."""
    raw = os.path.join(private, "own.dtraw")
    r = record(args, "links-own.json", rel_host(), extra=["--raw", raw])[0]
    assert r.returncode == 0 and os.path.exists(raw), r.stderr
    return raw


def replay_tmp():
    fresh_victim()
    raw = own_raw()
    link = plant_link("rp.json.tmp")
    target = os.path.join(shared, "rp.json")
    r = subprocess.run([args.devtrace, "replay", raw, "-o", target, "-q"], capture_output=True, text=True,
                       timeout=60)
    check_victim_and_link(link)
    assert r.returncode == 0, r.stderr
    check_complete(target)
    return "devtrace replay -o: trace complete, the victim unchanged"


def convert_tmp():
    fresh_victim()
    raw = own_raw()
    link = plant_link("cv.json.tmp")
    target = os.path.join(shared, "cv.json")
    r = subprocess.run([args.devtrace, "convert", raw, target, "-q"], capture_output=True, text=True, timeout=60)
    check_victim_and_link(link)
    assert r.returncode == 0, r.stderr
    check_complete(target)
    return "devtrace convert: trace complete, the victim unchanged"


def folder_link():
    fresh_victim()
    elsewhere = os.path.join(private, "traces.d")
    os.makedirs(elsewhere, exist_ok=True)
    for f in os.listdir(elsewhere):
        os.unlink(os.path.join(elsewhere, f))
    link = plant_link("run.json.d", elsewhere)
    r = record_into("run.json.d/t.json")
    check_victim_and_link(link, elsewhere)
    assert os.listdir(elsewhere) == [], "root wrote through the other user's folder link: %s" % os.listdir(elsewhere)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "a folder on the way is a symbolic link of another user's" in \
        lines[0], (r.returncode, r.stderr)
    return "refused (a folder on the way is the other user's link), nothing written where it points"


def control_socket_folder():
    p = subprocess.Popen([args.devtrace, "record", "-q", "-b", "cupti", "--on-demand", "-o",
                          os.path.join(shared, "od-%w.json"), "--", *host(args, "--wait-for-signal")],
                         env=dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu, TMPDIR=shared),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = p.stdout.readline()
        assert line.strip() == "ready", line
        made = [f for f in os.listdir(shared) if f.startswith("devtrace-")]
        assert len(made) == 1, made
        folder = os.path.join(shared, made[0])
        st = os.lstat(folder)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700, oct(st.st_mode)
        socks = sorted(os.listdir(folder))
        assert socks == ["collect.sock", "control.sock"], socks
        for s in socks:
            assert stat.S_ISSOCK(os.lstat(os.path.join(folder, s)).st_mode), s
        os.killpg(p.pid, 15)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 9)
            p.communicate()
    assert not os.path.exists(folder), "the socket folder is removed at the end"
    return "TMPDIR in the other user's folder: a new folder of root's, 0700, two sockets, removed at the end"


S = "root writes into a folder of another user's"
cases.run("trace_tmp_link", S, "a link at t.json.tmp to a file of root's", trace_tmp)
cases.run("trace_link", S, "a link at t.json", trace_itself)
cases.run("spill_link", S, "a link at t.json.spill (the recorder's spill)", spill_link)
cases.run("per_process_tmp_link", S, "a link at p0.json.tmp (-o p%r.json)", per_process_tmp)
cases.run("raw_link", S, "a link at the --raw path", raw_capture_link)
cases.run("raw_other_users_file", S, "the other user's file at the --raw path", raw_capture_other_users_file)
cases.run("raw_link_in_collector", S, "a link at $DEVTRACE_RAW", raw_capture_in_the_collector)
cases.run("replay_tmp_link", S, "a link at replay's -o .tmp", replay_tmp)
cases.run("convert_tmp_link", S, "a link at convert's output .tmp", convert_tmp)
cases.run("folder_link", S, "the other user's link as the output's folder", folder_link)
cases.run("control_socket_folder", S, "TMPDIR in the other user's folder", control_socket_folder)
code = cases.finish("symlinks.md")
shutil.rmtree(base, ignore_errors=True)
sys.exit(code)
