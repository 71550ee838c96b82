#!/usr/bin/env python3
"""test_report_cli.py DEVTRACE [EMU_RUN CUPTI_EMU MCPTI_EMU WORKLOAD]: devtrace report and diff.

On traces shaped like torch.profiler's exports (tests/report/torch_cuda.json: a CUDA run with
python_function and user_annotation events, flows, metadata, string pids, unknown keys;
torch_rocm_legacy.json: the older capitalised categories, "stream N" tids, integer us), the
tables are checked cell by cell in csv and json, also from .json.gz; bad input gives one line
with the byte offset and no table; empty traces give empty tables; diff and the many-rank view
are checked row by row; the SVG is well-formed and has one lane per stream and thread and one
box per event. With the emulators, devtrace's own traces (CUPTI, and MCPTI with the MACA 3.8
faults, which fill the devtrace section's loss counters) are reported and checked against
totals computed here from the trace's JSON, and compared op by op across the two vendors.
"""
import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hta_check import link_like_hta  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEVTRACE = sys.argv[1]
EMU = sys.argv[2:6] if len(sys.argv) >= 6 else None
TORCH = os.path.join(HERE, "torch_cuda.json")
LEGACY = os.path.join(HERE, "torch_rocm_legacy.json")
failures = []
tmp = tempfile.mkdtemp(prefix="devtrace-report-")


def case(fn):
    try:
        fn()
        print(f"ok   {fn.__name__}")
    except AssertionError as e:
        failures.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {e}")
    return fn


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([DEVTRACE, *args], capture_output=True, text=True, env=e, timeout=120)


def out(name):
    return os.path.join(tmp, name)


def read(path):
    with open(path) as f:
        return f.read()


TORCH_CSV = {
    "kernels.csv":
        "name,count,total_us,avg_us,min_us,max_us,median_us,percent\n"
        "\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\",1,100.000,100.000,"
        "100.000,100.000,100.000,61.54\n"
        "ampere_sgemm_64x64_nn,2,60.000,30.000,20.000,40.000,30.000,36.92\n"
        "\"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)\","
        "1,2.500,2.500,2.500,2.500,2.500,1.54\n",
    "memory.csv":
        "name,count,bytes,total_us,avg_gbps\n"
        "Memcpy HtoD (Pageable -> Device),1,1048576,10.000,104.858\n"
        "Memset (Device),1,4096,1.500,2.731\n",
    "api.csv":
        "name,count,total_us,avg_us,max_us\n"
        "cudaStreamSynchronize,1,400.000,400.000,400.000\n"
        "cudaMemcpyAsync,1,50.000,50.000,50.000\n"
        "cudaLaunchKernel,3,17.250,5.750,8.250\n"
        "cudaMemsetAsync,1,3.000,3.000,3.000\n",
    "ops.csv":
        "name,count,cpu_total_us,device_self_us,device_total_us\n"
        "aten::mm,2,80.500,60.000,60.000\n"
        "aten::copy_,1,60.000,10.000,10.000\n"
        "aten::add_,1,12.000,2.500,2.500\n"
        "aten::zero_,1,10.000,1.500,1.500\n",
    "streams.csv":
        "device,stream,busy_us,span_us,busy_percent,gap1_us,gap1_at_us,gap2_us,gap2_at_us,gap3_us,gap3_at_us\n"
        "0,20,111.500,290.000,38.45,93.500,506.500,85.000,420.000,,\n"
        "0,7,62.500,182.500,34.25,80.000,230.000,40.000,170.000,,\n",
    "annotations.csv":
        "name,category,count,total_us,avg_us,max_us\n"
        "ProfilerStep#1,user_annotation,1,1000.000,1000.000,1000.000\n"
        "\"fwd \u00e9tape \"\"1\"\"\",user_annotation,1,420.000,420.000,420.000\n",
}


def check_csv_dir(d, expected):
    assert sorted(os.listdir(d)) == sorted(expected), os.listdir(d)
    for name, text in expected.items():
        got = read(os.path.join(d, name))
        assert got == text, f"{name}:\n{got}\n!=\n{text}"


@case
def torch_trace_csv_tables_exactly():
    r = run("report", "--format", "csv", "--output", out("torch-csv"), TORCH)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", (r.returncode, r.stdout, r.stderr)
    check_csv_dir(out("torch-csv"), TORCH_CSV)


@case
def gzip_trace_gives_the_same_tables():
    with open(TORCH, "rb") as f, gzip.open(out("torch.json.gz"), "wb") as g:
        g.write(f.read())
    r = run("report", "--format", "csv", "--output", out("torch-gz"), out("torch.json.gz"))
    assert r.returncode == 0, r.stderr
    check_csv_dir(out("torch-gz"), TORCH_CSV)


@case
def legacy_rocm_trace_tables_exactly():
    r = run("report", "--format", "csv", "--output", out("legacy"), LEGACY)
    assert r.returncode == 0, r.stderr
    check_csv_dir(out("legacy"), {
        "kernels.csv": "name,count,total_us,avg_us,min_us,max_us,median_us,percent\n"
                       "Cijk_Ailk_Bljk_SB_MT64x64x16_SN_K1,1,30.000,30.000,30.000,30.000,30.000,100.00\n",
        "memory.csv": "name,count,bytes,total_us,avg_gbps\nMemcpy DtoH (Device -> Pageable),1,4000,4.000,1.000\n",
        "api.csv": "name,count,total_us,avg_us,max_us\nhipMemcpyWithStream,1,18.000,18.000,18.000\n"
                   "hipLaunchKernel,1,6.000,6.000,6.000\n",
        "ops.csv": "name,count,cpu_total_us,device_self_us,device_total_us\naten::mm,1,50.000,30.000,30.000\n"
                   "aten::to,1,20.000,4.000,4.000\n",
        "streams.csv": "device,stream,busy_us,span_us,busy_percent,gap1_us,gap1_at_us,gap2_us,gap2_at_us,gap3_us,"
                       "gap3_at_us\n1,0,34.000,44.000,77.27,10.000,50.000,,,,\n",
        "annotations.csv": "name,category,count,total_us,avg_us,max_us\n",
    })


@case
def json_format_has_numbers_and_the_trace_facts():
    r = run("report", "--format", "json", TORCH)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert list(j) == ["about", "kernels", "memory", "api", "ops", "streams", "annotations"], list(j)
    assert j["about"]["events"] == 30 and j["about"]["rank"] is None, j["about"]
    assert j["about"]["unlinked_device_us"] == 100.0, j["about"]
    assert j["kernels"][1] == {"name": "ampere_sgemm_64x64_nn", "count": 2, "total_us": 60.0, "avg_us": 30.0,
                               "min_us": 20.0, "max_us": 40.0, "median_us": 30.0, "percent": 36.92}, j["kernels"][1]
    assert j["streams"][0]["gap3_us"] is None and j["streams"][0]["gap1_at_us"] == 506.5, j["streams"][0]
    assert "devtrace" not in j["about"], "a trace without a devtrace section has none"


@case
def table_format_top_and_short_names():
    r = run("report", "--top", "1", "--names", "short", TORCH)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "kernels (top 1 of 3):" in lines, r.stdout
    i = lines.index("kernels (top 1 of 3):")
    assert lines[i + 1].split() == ["count", "total_us", "avg_us", "min_us", "max_us", "median_us", "percent", "name"]
    assert lines[i + 2].split()[:7] == ["1", "100.000", "100.000", "100.000", "100.000", "100.000", "61.54"]
    r = run("report", "--format", "csv", "--names", "short", TORCH)
    assert '"void at::native::vectorized_elementwise_kernel<...>(int, at::native::CUDAFunctor_add<...>, ' \
           'at::detail::Array<...>)",1,2.500' in r.stdout, r.stdout


def check_one_line_error(args, expect_in):
    r = run(*args)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "", f"a partial result was printed: {r.stdout[:200]}"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and expect_in in lines[0], r.stderr
    return lines[0]


@case
def truncated_trace_is_one_line_with_the_offset():
    data = open(TORCH, "rb").read()
    for cut in (0, 1, 700, len(data) // 2, len(data) - 2):
        with open(out("cut.json"), "wb") as f:
            f.write(data[:cut])
        line = check_one_line_error(["report", out("cut.json")], f"truncated at byte {cut} (the end of the data)")
        assert line.startswith("devtrace report: " + out("cut.json")), line
    with gzip.open(out("cut.json.gz"), "wb") as g:
        g.write(data[:5000])
    check_one_line_error(["report", out("cut.json.gz")], "truncated at byte 5000")


@case
def malformed_trace_names_the_byte_and_what_was_expected():
    text = read(TORCH)
    at = text.index('"dur": 50.500,') + len('"dur": 50.500')
    bad = text[:at] + ";" + text[at + 1:]
    with open(out("bad.json"), "w") as f:
        f.write(bad)
    check_one_line_error(["report", out("bad.json")], f"byte {at}: expected ',' or '}}' after a member, found ';'")
    with open(out("notjson.json"), "w") as f:
        f.write("PK\x03\x04")
    check_one_line_error(["report", out("notjson.json")], "byte 0: expected '{' (a trace is a JSON object")
    check_one_line_error(["report", out("missing.json")], "No such file or directory")


@case
def empty_traces_give_empty_tables():
    for name, text in (("empty.json", '{"traceEvents": []}'), ("bare.json", "[]"),
                       ("cpu_only.json", '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add",'
                                         ' "pid": 1, "tid": 1, "ts": 5, "dur": 2.5}]}')):
        with open(out(name), "w") as f:
            f.write(text)
        d = out(name + ".d")
        r = run("report", "--format", "csv", "--output", d, out(name))
        assert r.returncode == 0, r.stderr
        assert read(os.path.join(d, "kernels.csv")) == TORCH_CSV["kernels.csv"].split("\n")[0] + "\n"
        assert read(os.path.join(d, "streams.csv")).count("\n") == 1
        ops = read(os.path.join(d, "ops.csv"))
        assert ops == ("name,count,cpu_total_us,device_self_us,device_total_us\n" +
                       ("aten::add,1,2.500,0.000,0.000\n" if name == "cpu_only.json" else "")), ops
        r = run("report", out(name))
        assert r.returncode == 0 and "kernels:\n  (none)" in r.stdout, r.stdout


@case
def times_are_exact_in_every_number_form():
    """The reader's microseconds become nanoseconds without a double where the text allows: the
    fraction's fourth digit rounds, digits past it are read and dropped, integers of 9 and 16
    digits, an exponent (through strtod), an escaped name; one kernel per form, so each total
    is the duration as read, printed with three decimals. Once with one blank between members,
    once pretty-printed; both after 1.1 MB of other events (more than one 1 MiB read)."""
    forms = (("k_exponent", "2.5e1", "25.000"), ("k_round_up", "1.0005", "1.001"),
             ("k_round_down", "1.00049", "1.000"), ("k_long_fraction", "12345678.12345678901", "12345678.123"),
             ("k_nine_digits", "100000000.5", "100000000.500"), ("k_integer", "7", "7.000"),
             ("k_zero_point", "0.0009", "0.001"), ("k_\\u0041", "3.25", "3.250"))
    for sep in (", ", ",\n    "):
        events = [f'{{"ph": "X"{sep}"cat": "kernel"{sep}"name": "{name}"{sep}"pid": 0{sep}"tid": 7{sep}'
                  f'"ts": 1700000000000{i:03d}.125{sep}"dur": {dur}{sep}"args": {{"device": 0{sep}"stream": 7}}}}'
                  for i, (name, dur, _) in enumerate(forms)]
        pad = '{"ph": "i", "cat": "other", "name": "pad", "args": {"s": "' + "x" * 1000 + '"}}'
        text = '{"traceEvents": [' + ",".join([pad] * 1100 + events) + "]}"
        with open(out("forms.json"), "w") as f:
            f.write(text)
        d = out("forms.d")
        r = run("report", "--format", "csv", "--output", d, out("forms.json"))
        assert r.returncode == 0, r.stderr
        rows = {row["name"]: row["total_us"] for row in csv.DictReader(io.StringIO(read(os.path.join(d, "kernels.csv"))))}
        want = {name.replace("\\u0041", "A"): total for name, _, total in forms}
        assert rows == want, (rows, want)


def with_durations_scaled(src, dst, name, factor, rank=None):
    """A copy of a trace whose events called name take factor times as long (and a rank)."""
    trace = json.load(open(src))
    for e in trace["traceEvents"]:
        if e.get("name") == name and "dur" in e:
            e["dur"] = round(e["dur"] * factor, 3)
    if rank is not None:
        trace["distributedInfo"] = {"rank": rank, "world_size": 3}
    with open(dst, "w") as f:
        json.dump(trace, f)


@case
def diff_per_op_and_per_kernel():
    with_durations_scaled(TORCH, out("slower.json"), "ampere_sgemm_64x64_nn", 1.5)
    r = run("diff", "--by", "kernel", "--format", "csv", TORCH, out("slower.json"))
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["name", "change", "count_a", "count_b", "total_us_a", "total_us_b", "delta_us", "ratio"], rows[0]
    assert rows[1] == ["ampere_sgemm_64x64_nn", "", "2", "2", "60.000", "90.000", "30.000", "1.500"], rows[1]
    assert rows[2][0].startswith("ncclKernel") and rows[2][6:] == ["0.000", "1.000"], rows[2]
    r = run("diff", "--by", "op", "--format", "csv", LEGACY, TORCH)
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["name", "change", "count_a", "count_b", "device_total_us_a", "device_total_us_b", "delta_us",
                       "ratio", "device_self_us_a", "device_self_us_b", "cpu_total_us_a", "cpu_total_us_b"], rows[0]
    assert rows[1:] == [
        ["aten::mm", "", "1", "2", "30.000", "60.000", "30.000", "2.000", "30.000", "60.000", "50.000", "80.500"],
        ["aten::copy_", "added", "0", "1", "0.000", "10.000", "10.000", "", "0.000", "10.000", "0.000", "60.000"],
        ["aten::to", "removed", "1", "0", "4.000", "0.000", "-4.000", "0.000", "4.000", "0.000", "20.000", "0.000"],
        ["aten::add_", "added", "0", "1", "0.000", "2.500", "2.500", "", "0.000", "2.500", "0.000", "12.000"],
        ["aten::zero_", "added", "0", "1", "0.000", "1.500", "1.500", "", "0.000", "1.500", "0.000", "10.000"]], rows
    r = run("diff", "--format", "json", LEGACY, TORCH)
    j = json.loads(r.stdout)
    assert list(j) == ["a", "b", "per_step", "steps_a", "steps_b", "top_changes", "op_diff", "kernel_diff",
                       "memory_diff", "api_diff", "annotation_diff"] and j["op_diff"][0]["ratio"] == 2.0, r.stdout[:300]
    r = run("diff", TORCH)
    assert r.returncode == 2 and "name two traces" in r.stderr, r.stderr


@case
def many_ranks_min_median_max_and_the_slowest():
    d = out("ranks")
    os.mkdir(d)
    for rank, factor in ((0, 1.0), (1, 2.0), (2, 1.5)):
        with_durations_scaled(TORCH, os.path.join(d, f"rank{rank}.json"), "ampere_sgemm_64x64_nn", factor, rank)
    r = run("report", "--format", "csv", "--output", out("ranks-out"), d)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out("ranks-out"))) == ["kernels_across_ranks.csv", "ops_across_ranks.csv",
                                                     "rank0", "rank1", "rank2", "stragglers.csv"], os.listdir(out("ranks-out"))
    assert read(out("ranks-out/rank0/ops.csv")) == TORCH_CSV["ops.csv"]
    rows = list(csv.reader(open(out("ranks-out/kernels_across_ranks.csv"))))
    assert rows[0] == ["name", "ranks", "min_total_us", "median_total_us", "max_total_us", "slowest_rank"], rows[0]
    assert rows[1] == ["ampere_sgemm_64x64_nn", "3", "60.000", "90.000", "120.000", "1"], rows[1]
    assert rows[2][1:] == ["3", "100.000", "100.000", "100.000", "0"], rows[2]
    rows = list(csv.reader(open(out("ranks-out/ops_across_ranks.csv"))))
    assert rows[1] == ["aten::mm", "3", "60.000", "90.000", "120.000", "1"], rows[1]
    r = run("report", d)
    assert r.returncode == 0 and "== rank 2 ==" in r.stdout and "== across 3 ranks ==" in r.stdout, r.stdout[-800:]
    r = run("report", "--format", "json", os.path.join(d, "rank0.json"), os.path.join(d, "rank1.json"))
    j = json.loads(r.stdout)
    assert len(j["reports"]) == 2 and j["across_ranks"]["kernels_across_ranks"][0]["slowest_rank"] == 1, r.stdout[-500:]


SVG = "{http://www.w3.org/2000/svg}"


def svg_boxes(path):
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg", root.tag
    boxes = {}
    for rect in root.iter(SVG + "rect"):
        c = rect.get("class")
        if c and c != "busy":
            boxes[c] = boxes.get(c, 0) + 1
    lanes = [t.text for t in root.iter(SVG + "text") if t.get("class") == "lane"]
    return lanes, boxes


@case
def svg_has_a_lane_per_stream_and_thread_and_a_box_per_event():
    r = run("report", "--svg", out("t.svg"), TORCH)
    assert r.returncode == 0, r.stderr
    lanes, boxes = svg_boxes(out("t.svg"))
    assert lanes == ["device 0 stream 7", "device 0 stream 20", "pid 4242 thread 4242"], lanes
    assert boxes == {"kernel": 4, "memcpy": 1, "memset": 1, "runtime": 6, "cpu_op": 5, "python_function": 1,
                     "user_annotation": 2}, boxes
    r = run("report", "--svg", out("w.svg"), "--from", "125", "--to", "240", TORCH)
    assert r.returncode == 0, r.stderr
    lanes, boxes = svg_boxes(out("w.svg"))
    assert lanes == ["device 0 stream 7", "pid 4242 thread 4242"], lanes
    assert boxes == {"kernel": 2, "runtime": 2, "cpu_op": 2, "python_function": 1, "user_annotation": 2}, boxes
    r = run("report", "--from", "5", TORCH)
    assert r.returncode == 2 and "--svg" in r.stderr, r.stderr


@case
def bad_options_are_usage_errors():
    for args, what in ((["report", "--format", "xml", TORCH], "--format is table, csv or json"),
                       (["report", "--top", "0", TORCH], "--top takes a positive count"),
                       (["report", "--names", "tiny", TORCH], "--names is full or short"),
                       (["report"], "name a trace"),
                       (["diff", "--by", "stream", TORCH, TORCH], "--by is op, kernel, memory, api or annotation")):
        r = run(*args)
        assert r.returncode == 2 and what in r.stderr and len(r.stderr.splitlines()) == 1, (args, r.stderr)
    for args in (["report", "--help"], ["diff", "--help"]):
        r = run(*args)
        assert r.returncode == 0 and r.stdout.startswith("usage: devtrace"), r.stdout


def emu_trace(vendor, lib, dest, faults=None):
    emu_run, workload = EMU[0], EMU[3]
    env = {f"DEVTRACE_{vendor.upper()}_LIBRARY": lib}
    if faults:
        env["DEVEMU_FAULTS"] = faults
    r = run("record", "-q", "--backend", vendor, "-o", dest, "--", emu_run, "--lib", lib, workload, env=env)
    assert r.returncode == 0, r.stderr
    return json.load(open(dest))


def totals_from_json(trace):
    """name -> [count, total ns] for kernels; op name -> [count, device self ns, device total ns]
    (hta_check's linking: correlation, runtime call, the ops around it)."""
    kernels = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e["cat"] == "kernel":
            k = kernels.setdefault(e["name"], [0, 0])
            k[0] += 1
            k[1] += round(e.get("dur", 0) * 1000)
    link = link_like_hta(trace)
    ops = {name: [link["count"][name], link["self"][name], link["total"][name]] for name in link["count"]}
    return kernels, ops


def us(ns):
    return f"{ns // 1000}.{ns % 1000:03d}"


@case
def devtrace_traces_match_their_json_and_compare_across_vendors():
    if not EMU:
        raise AssertionError("the emulators were not given (EMU_RUN CUPTI_EMU MCPTI_EMU WORKLOAD)")
    cupti = emu_trace("cupti", EMU[1], out("cupti.json"))
    mcpti = emu_trace("mcpti", EMU[2], out("mcpti.json"), faults="maca-3.8")
    for trace, path in ((cupti, out("cupti.json")), (mcpti, out("mcpti.json"))):
        kernels, ops = totals_from_json(trace)
        r = run("report", "--format", "json", path)
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout)
        got = {k["name"]: [k["count"], round(k["total_us"] * 1000)] for k in j["kernels"]}
        assert got == kernels, (got, kernels)
        got = {o["name"]: [o["count"], round(o["device_self_us"] * 1000), round(o["device_total_us"] * 1000)]
               for o in j["ops"]}
        assert got == ops, (got, ops)
        losses = {k: v for k, v in j["about"]["devtrace"]["losses"].items()}
        section = trace["devtrace"]
        for key, value in losses.items():
            outer, _, inner = key.partition(".")
            assert (section[outer][inner] if inner else section[outer]) == value, (key, value)
        assert j["about"]["devtrace"]["notes"] == section["notes"], j["about"]["devtrace"]
    assert json.loads(run("report", "--format", "json", out("mcpti.json")).stdout)["about"]["devtrace"]["losses"][
        "malformed.records"] > 0, "the MACA 3.8 faults should show as malformed records"
    text = run("report", out("mcpti.json")).stdout
    assert "loss: malformed.records = " in text and "note: mcpti:" in text, text[:1500]
    # the same workload on two vendors: the same ops, counts equal, device totals from each JSON
    r = run("diff", "--by", "op", "--format", "csv", out("cupti.json"), out("mcpti.json"))
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout)))[1:]
    _, ops_a = totals_from_json(cupti)
    _, ops_b = totals_from_json(mcpti)
    assert sorted(row[0] for row in rows) == sorted(set(ops_a) | set(ops_b)), rows
    for row in rows:
        a, b = ops_a[row[0]], ops_b[row[0]]
        assert row[2:7] == [str(a[0]), str(b[0]), us(a[2]), us(b[2]), ("-" if b[2] < a[2] else "") +
                            us(abs(b[2] - a[2]))], (row, a, b)


print(f"{len(failures)} failed" if failures else "all passed")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
