#!/usr/bin/env python3
"""make_seeds.py: (re)writes the seed corpora in tests/fuzz/corpus/<target>/.

    tests/fuzz/make_seeds.py [--build BUILD_DIR] [--shared ../shared]

fuzz_wl           the shared workloads and one small file per statement kind
fuzz_pti_decode    activity buffers in CUPTI's byte layout (CUDA 13.0 and 12.x record sizes) and
                  MSPTI's packed layout, written at the documented offsets, each behind the target's
                  header (descriptor, version, flags, script)
fuzz_wire         real collector streams: a program under the CUPTI emulator traced with the
                  collector's pipe pointed at a file (needs a plain build with the emulators: --build)
fuzz_roctracer_walk  64-byte ROCtracer records of every class (kernels with remembered launches,
                  copies, fills, barriers, other domains, zero times, unknown kinds, a ragged tail)
fuzz_config       NUL-separated setting values, good and bad
fuzz_cli_options  `devtrace record` command lines, good and bad
The corpora are committed; rerun this after a record layout or the wire format changes.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_wl ----
SMALL_WORKLOADS = {
    "device": "device id=0 name=G sms=4 warp=32 max_threads_per_sm=2048 max_blocks_per_sm=32 regs_per_sm=65536 "
              "smem_per_sm=65536 max_threads_per_block=1024\n",
    "ops": "op push name=a id=0\nop push name=b id=18446744073709551615\napi call=get_device\nop pop\nop pop\n",
    "launch": "launch kernel=_Z1kv grid=1,2,3 block=32,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=0\n",
    "copies": "memcpy dir=htod bytes=1 dur_ns=1 stream=1\nmemcpy dir=dtoh bytes=4 dur_ns=2 stream=1\n"
              "memcpy dir=dtod bytes=8 dur_ns=3 stream=2\nmemset bytes=16 value=255 dur_ns=4 stream=3\n",
    "sync": "sync what=stream stream=7\nsync what=device\n",
    "every_call": "".join("api call=%s\n" % c for c in (
        "get_device", "get_device_count", "get_device_properties", "set_device", "malloc", "free",
        "event_record", "launch", "memcpy", "memset", "sync_stream", "sync_device")),
    "bad_pop": "op pop\n",
    "bad_key": "launch kernel=k grid=1,1,1 block=1,1,1 regs=1 smem=0 dyn_smem=0 dur_ns=1 stream=0 extra=1\n",
    "crlf_comment": "# comment\r\napi call=get_device\r\n   # indented comment\n",
}


def seeds_wl(shared):
    wl_dir = os.path.join(shared, "workloads")
    for name in sorted(os.listdir(wl_dir)) if os.path.isdir(wl_dir) else []:
        if name.endswith(".wl"):
            with open(os.path.join(wl_dir, name), "rb") as f:
                write("fuzz_wl", name, f.read())
    for name, text in SMALL_WORKLOADS.items():
        write("fuzz_wl", name + ".wl", text.encode())


# ---- fuzz_pti_decode ----
CUPTI = dict(memcpy=1, memset=2, kernel=3, runtime=5, concurrent_kernel=10, extcorr=39, custom0=3)


def cupti_kernel(size, corr, start, name_pick=1, grid=(416, 1, 1), block=(256, 1, 1), kind=10):
    b = bytearray(size)
    struct.pack_into("<IBBH", b, 0, kind, 0, 0, 40)
    struct.pack_into("<QQQ", b, 16, start, start + 3200, start + 3200)
    struct.pack_into("<III", b, 40, 0, 1, 7)
    struct.pack_into("<iiiiii", b, 52, *grid, *block)
    struct.pack_into("<ii", b, 76, 1024, 81920)
    struct.pack_into("<I", b, 92, corr)
    struct.pack_into("<q", b, 96, 77)
    struct.pack_into("<Q", b, 104, name_pick)  # the harness points it at one of its strings
    struct.pack_into("<QQ", b, 120, max(start - 500, 0), max(start - 400, 0))
    return bytes(b)


def cupti_api(corr, start, cbid=211, kind=5):
    return struct.pack("<IIQQIIII", kind, cbid, start, start + 900, 4242, 4243, corr, 0)


def cupti_memcpy(size, corr, start, copy_kind=2):
    b = bytearray(size)
    struct.pack_into("<IBBBB", b, 0, CUPTI["memcpy"], copy_kind, 3, 1, 0)
    struct.pack_into("<QQQ", b, 8, 4096, start, start + 700)
    struct.pack_into("<IIII", b, 32, 0, 1, 7, corr)
    return bytes(b)


def cupti_memset(corr, start):
    b = bytearray(88)
    struct.pack_into("<II", b, 0, CUPTI["memset"], 255)
    struct.pack_into("<QQQ", b, 8, 128, start, start + 300)
    struct.pack_into("<IIII", b, 32, 0, 1, 7, corr)
    return bytes(b)


def cupti_extcorr(corr, ext, kind=3):
    return struct.pack("<IIQII", CUPTI["extcorr"], kind, ext, corr, 0)


def mspti_records():
    out = b""
    out += struct.pack("<IQQIIQQQ", 2, 1000, 2000, 0, 3, 11, 1, 1) + b"\0" * 4   # kernel 56
    out += struct.pack("<IQQIIQQ", 3, 900, 2100, 77, 78, 11, 6) + b"\0" * 4     # api 48
    out += struct.pack("<IIQQQIIQB", 6, 0, 64, 3000, 3100, 0, 3, 12, 1) + b"\0" * 7  # memset 56
    out += struct.pack("<IIQQQIIQB", 7, 2, 64, 4000, 4100, 0, 3, 13, 0) + b"\0" * 7  # memcpy 56
    out += struct.pack("<IIQQ", 8, 2, 99, 11)                                   # extcorr 24
    return out


def mspti_more_records():
    out = b""
    out += struct.pack("<IIQIIQQQQQQ", 9, 4, 1024, 0, 3, 5000, 6000, 1, 2, 3, 14)   # communication 72
    out += struct.pack("<IQQIIdQQ", 4, 6100, 6200, 0, 3, 12.5, 4, 5) + b"\0" * 4   # hccl 56
    out += struct.pack("<IIIQQIIQQ", 1, 2, 0, 6300, 7, 77, 78, 6, 0) + b"\0" * 4   # marker start 56
    out += struct.pack("<IIIQQIIQQ", 1, 4, 0, 6400, 7, 77, 78, 0, 0) + b"\0" * 4   # marker end 56
    out += struct.pack("<IIIQQQQQIII", 5, 0, 1, 15, 6500, 6600, 0x1000, 4096, 77, 0, 3)  # memory 64
    out += struct.pack("<IIIQQQQQIII", 5, 1, 1, 16, 6700, 6800, 0x1000, 4096, 77, 0, 3)  # memory 64
    return out


def cf_header(desc, version, flags, window=0, script=b"", params=b""):
    params = (params + b"\0" * 64)[:64]
    return bytes([desc, version, flags, window, len(script) // 3]) + params + script


def seeds_cf():
    t = 1_700_000_000_000_000_000
    cuda13 = (cupti_api(1, t) + cupti_extcorr(1, 0) + cupti_kernel(216, 1, t + 1000) +
              cupti_api(2, t + 2000, cbid=31) + cupti_memcpy(96, 2, t + 2500) +
              cupti_api(3, t + 4000, cbid=51) + cupti_memset(3, t + 4500) +
              cupti_kernel(216, 4, 0, grid=(0, 1, 1)) + cupti_kernel(216, 5, 0) + cupti_extcorr(4, 5, kind=1))
    cuda12 = cupti_api(1, t) + cupti_kernel(208, 1, t + 1000) + cupti_memcpy(88, 1, t + 1500)
    samples = struct.pack("<QQQQ", t, t, t + 10_000, t + 10_000)
    window = struct.pack("<QQ", t - 1, t + 3000)
    # descriptor 0 = cupti; versions index 9 = 130001, 6 = 28
    write("fuzz_pti_decode", "cupti13_mixed", cf_header(0, 9, 0x40, 1, b"", samples + b"\0" * 16 + window) + cuda13)
    write("fuzz_pti_decode", "cupti12_small", cf_header(0, 6, 0x80, 0, b"", samples) + cuda12)
    write("fuzz_pti_decode", "cupti13_prefix_only", cf_header(0, 10, 0) + cuda13)
    write("fuzz_pti_decode", "cupti13_pool_full", cf_header(0, 9, 2) + cuda13)
    write("fuzz_pti_decode", "cupti13_truncated", cf_header(0, 9, 0) + cuda13[:300])
    script = bytes([6, 0, 0, 6, 0, 0, 1, 0, 0, 0, 8, 0, 5, 3, 0, 7, 0, 0, 2, 0, 0, 4, 12, 0])
    write("fuzz_pti_decode", "cupti13_hostile", cf_header(0, 9, 0x04, 0, script) + cuda13)
    write("fuzz_pti_decode", "ppu_mixed", cf_header(1, 9, 0x08) + cuda13)
    write("fuzz_pti_decode", "mspti_packed", cf_header(3, 0, 0x40, 0, b"", samples) + mspti_records())
    write("fuzz_pti_decode", "mspti_collectives_markers_memory",
          cf_header(3, 0, 0x40, 0, b"", samples) + mspti_records() + mspti_more_records())


# ---- fuzz_wire: real collector streams ----
TINY_WL = (SMALL_WORKLOADS["device"] +
           "op push name=step id=0\napi call=get_device\n"
           "launch kernel=_Z6kernelPf grid=2,1,1 block=64,1,1 regs=8 smem=0 dyn_smem=0 dur_ns=2000 stream=7\n"
           "memcpy dir=dtoh bytes=4 dur_ns=1000 stream=7\nmemset bytes=8 value=0 dur_ns=500 stream=7\n"
           "op pop\nsync what=device\n")


def capture_stream(build, workload, faults=""):
    """The stream, from a run in the emulators' folder with paths relative to it: its hello carries
    the command line, which so names no folder of the machine that made the seeds."""
    emu_dir = os.path.abspath(os.path.join(build, "tests", "emu"))
    lib = os.path.abspath(os.path.join(build, "lib", "libdevtrace.so.0"))
    with tempfile.NamedTemporaryFile(suffix=".wire", delete=False) as f:
        out = f.name
    shutil.copy(workload, os.path.join(emu_dir, "seed.wl"))
    env = dict(os.environ, DEVTRACE_BACKEND="cupti", DEVTRACE_CUPTI_LIBRARY="./libcupti-emu.so",
               CUDA_INJECTION64_PATH=lib, DEVEMU_FAULTS=faults, WIRE_OUT=out)
    try:
        subprocess.run(["sh", "-c", 'exec 9>"$WIRE_OUT"; DEVTRACE_COLLECT_FD=9 DEVTRACE_COLLECT_PID=$$ '
                        'exec ./emu-run --lib ./libcupti-emu.so seed.wl'], env=env, check=True, timeout=60, cwd=emu_dir)
    finally:
        os.unlink(os.path.join(emu_dir, "seed.wl"))
    with open(out, "rb") as f:
        data = f.read()
    os.unlink(out)
    return data


def seeds_wire(build):
    if not build:
        print("fuzz_wire: no --build given: corpus left as it is", file=sys.stderr)
        return
    with tempfile.NamedTemporaryFile("w", suffix=".wl", delete=False) as f:
        f.write(TINY_WL)
        tiny = f.name
    try:
        stream = capture_stream(build, tiny)
        write("fuzz_wire", "tiny_cupti_emu", b"\x00" + stream)
        write("fuzz_wire", "tiny_cupti_emu_split", b"\x07" + stream)
        write("fuzz_wire", "tiny_faults", b"\x01" + capture_stream(build, tiny, "zero-time=1,malformed=1,drop=1"))
        write("fuzz_wire", "tiny_truncated", b"\x02" + stream[: len(stream) * 2 // 3])
        write("fuzz_wire", "tiny_windows", b"\x13" + stream)  # bit 4: read as for capture windows
    finally:
        os.unlink(tiny)


# ---- fuzz_roctracer_walk ----
def roc_record(domain, kind, op, corr, begin, end, device=0, queue=1, payload=0):
    return struct.pack("<IIIIQQQiIQQ", domain, kind, op, 0, corr, begin, end, device, 0, queue, payload)


def seeds_roc():
    t = 1_700_000_000_000_000_000
    launch = struct.pack("<Q6iIB", 1, 416, 1, 1, 256, 1, 1, 1024, 3)
    words = struct.pack("<QQ", 2048, 0x7f0000000000)
    recs = (roc_record(2, 0x11F0, 0, 1, t, t + 3200, payload=1) + roc_record(2, 0x11F3, 1, 2, t + 4000, t + 4700,
                                                                             payload=4096) +
            roc_record(2, 0x1207, 1, 3, t + 5000, t + 5300, payload=128) + roc_record(2, 0, 2, 4, t + 6000, t + 6001) +
            roc_record(3, 0, 44, 5, t, t + 10) + roc_record(2, 0x11F0, 0, 6, 0, 0, payload=2) +
            roc_record(2, 0x11F0, 0, 7, t, t + 1, device=-1) + roc_record(2, 0x9999, 0, 8, t, t + 2, payload=3))
    write("fuzz_roctracer_walk", "every_class", bytes([0, 1]) + launch + words + recs)
    write("fuzz_roctracer_walk", "out_of_window", bytes([1, 1]) + launch + words + recs)
    write("fuzz_roctracer_walk", "ragged", bytes([0, 0]) + words + recs[:200])
    write("fuzz_roctracer_walk", "inverted", bytes([2, 0]) + words + recs[:128])


# ---- fuzz_config and fuzz_cli_options ----
def seeds_config():
    def fields(*f, tail=b""):
        return b"\0".join(x.encode() if isinstance(x, str) else x for x in f) + b"\0" + tail
    ops = bytes([0]) + struct.pack("<Q", 7) + bytes([2]) + struct.pack("<Q", 0) + bytes([3, 0]) + b"\0" * 8
    write("fuzz_config", "good", fields("1000000", "none", "1000", "0", "1", "aten::mm", tail=bytes([0x0f]) + ops))
    write("fuzz_config", "bad_numbers", fields(" 5", "nosuch", "-1", "x", "99999999999", "", tail=bytes([0x0e])))
    write("fuzz_config", "overflow", fields("18446744073709551616", "", "0", "+1", "1e3", "r", tail=bytes([0x3f])))
    write("fuzz_config", "max", fields("18446744073709551615", "none", "1", "1073741824", "1073741825", "x" * 300,
                                       tail=bytes([0x16, 3, 0]) + ops))


def seeds_cli():
    lines = {
        "plain": ["-o", "trace.json", "--", "prog", "arg"],
        "every_option": ["-q", "-b", "none", "--raw", "x.dtraw", "--top", "7", "--output", "t-%p-%r-%%.json.gz",
                         "prog"],
        "missing_value": ["--top"],
        "bad_top": ["--top", "1001", "--", "p"],
        "unknown_backend": ["-b", "nosuch", "p"],
        "unknown_option": ["--frobnicate", "p"],
        "empty_output": ["-o", "", "p"],
        "no_program": ["-q", "--"],
        "long_pattern": ["-o", "%p" * 3000, "p"],
    }
    for name, args in lines.items():
        write("fuzz_cli_options", name, b"\0".join(a.encode() for a in args))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", help="a plain build with the emulators (for fuzz_wire)")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    args = ap.parse_args()
    seeds_wl(args.shared)
    seeds_cf()
    seeds_roc()
    seeds_wire(args.build)
    seeds_config()
    seeds_cli()
    return 0


if __name__ == "__main__":
    sys.exit(main())
