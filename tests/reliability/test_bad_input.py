#!/usr/bin/env python3
"""test_bad_input.py: bad input everywhere: workload files (emu-run), .dtraw captures (devtrace
replay), devtrace's options and the environment values it reads.

Every case must give exactly one line on stderr that names the problem, a non-zero exit status,
and overwrite nothing: an old trace under the output name is still there, byte for byte, and no
.tmp is left. Writes OUT/bad-input.md (one row per kind of input, with the number of cases).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from rel_common import Cases, host, load_trace, parse_args

args = parse_args(__doc__.split("\n\n")[0])
os.makedirs(args.out, exist_ok=True)
cases = Cases(args, "bad input")
tmp = tempfile.mkdtemp(prefix="devtrace-bad-")
OLD = b"OLD TRACE, must survive\n"


def old_output(name):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(OLD)
    return path


def one_line_error(cmd, needle, rc=None, env=None, output=None):
    e = dict(os.environ)
    e.pop("DEVEMU_FAULTS", None)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode != 0, "%s: exit 0 (stderr %r)" % (cmd[1:], p.stderr)
    assert rc is None or p.returncode == rc, "%s: exit %d, expected %d" % (cmd[1:], p.returncode, rc)
    assert len(lines) == 1, "%s: %d lines on stderr: %r" % (cmd[1:], len(lines), p.stderr)
    assert needle in lines[0], "%s: %r does not name %r" % (cmd[1:], lines[0], needle)
    if output:
        with open(output, "rb") as f:
            assert f.read() == OLD, "%s: the old %s was overwritten" % (cmd[1:], output)
        assert not os.path.exists(output + ".tmp"), "a .tmp was left"
    return lines[0]


# ---- workload files (emu-run) ----
BAD_WORKLOADS = [
    ("unknown statement", "frobnicate x=1\n", ":1:"),
    ("not key=value", "api call get_device\n", ":1:"),
    ("unknown key", "api call=get_device extra=1\n", ":1:"),
    ("unknown call", "api call=get_coffee\n", ":1:"),
    ("missing key", "launch kernel=_Z1kv grid=1,1,1 block=1,1,1\n", ":1:"),
    ("bad number", "memcpy dir=htod bytes=12x dur_ns=1 stream=0\n", ":1:"),
    ("negative number", "memset bytes=-1 value=0 dur_ns=1 stream=0\n", ":1:"),
    ("number too big", "memcpy dir=htod bytes=99999999999999999999999 dur_ns=1 stream=0\n", ":1:"),
    ("zero grid", "launch kernel=_Z1kv grid=0,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=0\n", ":1:"),
    ("bad direction", "memcpy dir=sideways bytes=1 dur_ns=1 stream=0\n", ":1:"),
    ("duplicate key", "api call=get_device call=free\n", ":1:"),
    ("pop without push", "api call=get_device\nop pop\n", ":2:"),
    ("op left open", "op push name=a id=1\napi call=get_device\n", "a"),
    ("binary garbage", "\x00\x01\x02\xff\xfe\n", ":1:"),
    ("bad sync", "sync what=everything\n", ":1:"),
]


def workloads():
    n = 0
    for name, text, where in BAD_WORKLOADS:
        path = os.path.join(tmp, name.replace(" ", "_") + ".wl")
        with open(path, "w", errors="surrogateescape") as f:
            f.write(text)
        line = one_line_error([args.emu_run, "--lib", args.emu, path], where, rc=2)
        assert path in line, "%s: the message does not name the file: %s" % (name, line)
        n += 1
    one_line_error([args.emu_run, "--lib", args.emu, "/nonexistent.wl"], "/nonexistent.wl: cannot open", rc=2)
    one_line_error([args.emu_run, "--lib", args.emu, tmp], tmp, rc=2)
    one_line_error(host(args)[:3] + ["/nonexistent.wl"], "/nonexistent.wl", rc=2)
    return "%d bad workloads (every grammar rule) and 3 bad paths: exit 2, `emu-run: FILE:LINE: message`" % n


# ---- .dtraw captures (devtrace replay) ----
def header(vendor=b"cupti", version=1, vlen=None, api=130001):
    return b"DTRAW1\0\0" + struct.pack("<II", version, len(vendor) if vlen is None else vlen) + vendor + \
        struct.pack("<I", api)


def dtraw():
    real = os.path.join(tmp, "real.dtraw")
    trace = os.path.join(tmp, "real.json")
    env = dict(os.environ, DEVTRACE_CUPTI_LIBRARY=args.emu)
    r = subprocess.run([args.devtrace, "record", "-q", "-b", "cupti", "--raw", real, "-o", trace, "--", *host(args)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and os.path.getsize(real) > 64, r.stderr
    with open(real, "rb") as f:
        good = f.read()
    out = os.path.join(tmp, "replayed.json")
    r = subprocess.run([args.devtrace, "replay", real, "-o", out, "-q"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "the real capture does not replay: %s" % r.stderr
    first_chunk = len(header())
    bad = {
        "empty": (b"", "no DTRAW1 header"),
        "wrong magic": (b"NOTDTRAW" + good[8:], "no DTRAW1 header"),
        "cut header": (good[:10], "DTRAW"),
        "version 2": (header(version=2) + good[first_chunk:], "version"),
        "vendor length 2^32-1": (header(vlen=0xFFFFFFFF), "vendor name length"),
        "unknown vendor": (header(vendor=b"nosuchvendor") + good[first_chunk:], "nosuchvendor"),
        "malformed chunk": (good + b"CLK " + struct.pack("<Q", 3) + b"abc", "chunk 'CLK ' at offset %d" % len(good)),
        "random bytes": (os.urandom(4096), "no DTRAW1 header"),
    }
    for name, (data, needle) in bad.items():
        path = os.path.join(tmp, name.replace(" ", "_") + ".dtraw")
        with open(path, "wb") as f:
            f.write(data)
        dest = old_output("replay_" + name.replace(" ", "_") + ".json")
        one_line_error([args.devtrace, "replay", path, "-o", dest, "-q"], needle, output=dest)
    dest = old_output("replay_paths.json")
    one_line_error([args.devtrace, "replay", "/nonexistent.dtraw", "-o", dest], "/nonexistent.dtraw", output=dest)
    one_line_error([args.devtrace, "replay", tmp, "-o", dest], "not a regular file", output=dest)
    one_line_error([args.devtrace, "replay", real], "no output given", rc=2)
    one_line_error([args.devtrace, "replay", "-o", dest], "no capture given", rc=2, output=dest)
    # A capture cut short (a killed program) is not an error: what it holds, and a note.
    cut = os.path.join(tmp, "cut.dtraw")
    with open(cut, "wb") as f:
        f.write(good[: len(good) * 2 // 3])
    r = subprocess.run([args.devtrace, "replay", cut, "-o", out, "-q"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    notes = load_trace(out)["devtrace"]["notes"]
    assert any("cut short" in n for n in notes), notes
    return ("a real capture replays; %d corrupt ones (header, version, vendor, chunk lengths, garbage) and 4 bad "
            "command lines: one line naming the problem, exit 1 or 2, the old trace untouched; a capture cut short "
            "replays what it holds, with a note" % len(bad))


# ---- options ----
def options():
    dest = old_output("options.json")
    sub = os.path.join(tmp, "a_directory.json")
    os.makedirs(sub, exist_ok=True)
    d = args.devtrace
    bad = [
        ([d, "record", "--frobnicate", "-o", dest, "--", "true"], "unknown option '--frobnicate'", 2),
        ([d, "record", "-o", dest, "--top"], "--top needs a value", 2),
        ([d, "record", "-o", dest, "--top", "abc", "--", "true"], "--top takes a number", 2),
        ([d, "record", "-o", dest, "--top", "1001", "--", "true"], "--top takes a number", 2),
        ([d, "record", "-o", dest, "--top", " 5", "--", "true"], "--top takes a number", 2),
        ([d, "record", "-o", dest, "--top", "-1", "--", "true"], "--top takes a number", 2),
        ([d, "record", "-o", dest, "-b", "nosuch", "--", "true"], "unknown backend 'nosuch'", 2),
        ([d, "record", "-o", dest, "-b", "", "--", "true"], "unknown backend ''", 2),
        ([d, "record", "-o", "", "--", "true"], "-o needs a file name", 2),
        ([d, "record", "-o", dest], "no program given", 2),
        ([d, "record", "-o", dest, "--"], "no program given", 2),
        ([d, "record", "-o", "/nonexistent/dir/t.json", "--", "true"], "does not exist", 2),
        ([d, "record", "-o", sub, "--", "true"], "is a directory", 2),
        ([d, "record", "-o", "%p" * 3000, "--", "true"], "longer than", 2),
        ([d, "record", "-o", dest, "--raw", "/nonexistent/dir/x.dtraw", "--", "true"], "--raw", 2),
        ([d, "record", "-o", dest, "--raw", sub, "--", "true"], "is a directory", 2),
        ([d, "record", "-o", dest, "--", "/nonexistent/program"], "cannot run '/nonexistent/program'", 127),
        ([d, "frobnicate"], "unknown command", 2),
        ([d, "list", "--bogus"], "unknown option '--bogus'", 2),
    ]
    for cmd, needle, rc in bad:
        one_line_error(cmd, needle, rc=rc, output=dest)
    return "%d bad command lines: one line naming the option and the fix, exit 2 (127: no such program), the old trace untouched" % len(bad)


# ---- environment values ----
def environment():
    dest = old_output("env.json")
    bad = [
        ("DEVTRACE_MAX_EVENTS", v) for v in ("abc", "0", "-1", " 5", "1e6", "99999999999999999999999", "5 ")
    ] + [
        ("RANK", "x"), ("RANK", "-1"), ("RANK", "2147483648"), ("WORLD_SIZE", "two"), ("WORLD_SIZE", "+4"),
        ("DEVTRACE_GZIP_LEVEL", "10"), ("DEVTRACE_GZIP_LEVEL", "x"), ("DEVTRACE_GZIP_LEVEL", "07"),
        ("DEVTRACE_BUFFER_SIZE", "100"), ("DEVTRACE_BUFFER_SIZE", "1GiB"), ("DEVTRACE_BUFFER_COUNT", "0"),
        ("DEVTRACE_BUFFER_COUNT", "99999"), ("DEVTRACE_FLUSH_TIMEOUT_MS", "0"), ("DEVTRACE_FLUSH_TIMEOUT_MS", "-5"),
        ("DEVTRACE_OPENCL_STOP_TIMEOUT_MS", "soon"), ("DEVTRACE_HOST_CLOCK", "rdtsc"), ("DEVTRACE_HOST_CLOCK", "TSC"),
        ("DEVTRACE_WRITE_THREADS", "0"), ("DEVTRACE_WRITE_THREADS", "65"), ("DEVTRACE_WRITE_THREADS", "two"),
    ]
    marker = os.path.join(tmp, "ran")
    for name, value in bad:
        one_line_error([args.devtrace, "record", "-q", "-o", dest, "--", "touch", marker], "$%s=" % name, rc=2,
                       env={name: value}, output=dest)
        assert not os.path.exists(marker), "the program ran with $%s=%r" % (name, value)
    return ("%d bad values of %d settings: `devtrace record: $NAME=\"value\" is not ...; fix it or unset it`, exit 2, "
            "the program not started, the old trace untouched" % (len(bad), len({name for name, _ in bad})))


cases.run("workload_files", "emu-run", "malformed .wl files", workloads)
cases.run("dtraw_files", "devtrace replay", "corrupt .dtraw captures", dtraw)
cases.run("options", "devtrace record/list", "bad options", options)
cases.run("environment", "devtrace record", "bad environment values", environment)
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(cases.finish("bad-input.md"))
