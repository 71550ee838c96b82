#!/usr/bin/env python3
"""compare_with_json.py: checks a devtrace Perfetto trace (.pftrace) against the Chrome JSON
trace of the same session, exactly.

usage: compare_with_json.py PROTOC PROTO TRACE.pftrace TRACE.json [--expect kind=N,...]

The .pftrace is decoded with `protoc --decode=perfetto.protos.Trace PROTO` (the minimal
schema in this folder) and read back as Perfetto's trace processor reads it: the packets
sorted by timestamp (file order breaking ties), each track's BEGIN and END events paired
as a stack, names, categories and arg names through the sequence's interned data. Then:

- the sequence: every packet on sequence 1, the first clearing its state, every packet
  that uses interned data saying so, every iid and track uuid defined before use;
- slices: the same multiset of (category, name, lane, start ns, duration ns, args) as the
  JSON's "X" events (start = baseTimeNanoseconds + ts), so the same count per kind;
- tracks: the same lanes as the JSON's (a device's "GPU N" with its "stream S" lanes, a
  host process's threads by pid and tid), named as the JSON names them;
- flows: the same (launch slice, device slice) pairs as the JSON's ac2g "s"/"f" events;
- memory: the counter tracks' values (bytes, a track per process and device below the
  process's track, named "GPU N memory allocated") the same multiset of (pid, device, time,
  value) as the JSON's "[memory]" instants' (pid, Device Id, time, Total Allocated);
- the capture's facts: the "devtrace" instant's args equal the JSON's devtrace object,
  deviceProperties and distributedInfo; "Record Window End" at the same time.

--expect kernel=17,memcpy=1,... also asserts the count of slices of each kind named (marker=
for user_annotation and gpu_user_annotation), and of lanes, overlapping tracks, flow pairs,
counter values and counter tracks (lanes=, overlapping=, flows=, counters=, counter_tracks=).
Prints the counts compared; exits 1 with the first difference.
"""
import json
import subprocess
import sys
from collections import Counter
from decimal import Decimal

CATEGORY_KIND = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "cpu_op": "cpu_op",
                 "user_annotation": "marker", "gpu_user_annotation": "marker"}
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def unescape(text):
    """A protoc text-format string literal's body to its str."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = text[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n == "x":
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(text[i + 2:j], 16))
            i = j
        else:
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1:j], 8))
            i = j
    return out.decode("utf-8")


def parse_text_format(text):
    """protoc's text output as nested dicts: field -> list of values (dicts for messages)."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
            continue
        key, _, value = line.partition(": ")
        if value.startswith('"'):
            value = unescape(value[1:-1])
        elif value.lstrip("-").isdigit():
            value = int(value)
        elif value[:1].isdigit() or value[:1] == "-":
            value = float(value)
        stack[-1].setdefault(key, []).append(value)
    if len(stack) != 1:
        fail("protoc's output does not close every message")
    return root


def one(message, field, default=None):
    values = message.get(field, [])
    if len(values) > 1:
        fail("field %s repeated where one value was expected: %r" % (field, values))
    return values[0] if values else default


def annotation_value(ann, names):
    """A DebugAnnotation's value as the JSON would hold it (Decimal for doubles)."""
    if "uint_value" in ann:
        return one(ann, "uint_value")
    if "int_value" in ann:
        return one(ann, "int_value")
    if "double_value" in ann:
        return ("double", one(ann, "double_value"))
    if "string_value" in ann:
        return one(ann, "string_value")
    if "dict_entries" in ann:
        return annotations_dict(ann["dict_entries"], names)
    if "array_values" in ann:
        return [annotation_value(v, names) for v in ann["array_values"]]
    return None


def annotations_dict(anns, names):
    out = {}
    for ann in anns:
        if "name_iid" in ann:
            iid = one(ann, "name_iid")
            if iid not in names:
                fail("debug annotation name iid %d is not interned" % iid)
            key = names[iid]
        else:
            key = one(ann, "name")
        if key in out:
            fail("arg %r twice in one event" % key)
        out[key] = annotation_value(ann, names)
    return out


def same_value(proto, js):
    """proto (from annotation_value) equals the JSON's value: exactly, a double to the
    JSON's six decimals."""
    if isinstance(proto, tuple) and proto[0] == "double":
        return isinstance(js, Decimal) and Decimal("%.6f" % proto[1]) == js
    if isinstance(proto, dict):
        return isinstance(js, dict) and proto.keys() == js.keys() and all(same_value(proto[k], js[k]) for k in proto)
    if isinstance(proto, list):
        return isinstance(js, list) and len(proto) == len(js) and all(same_value(a, b) for a, b in zip(proto, js))
    return proto == js and type(js) is not bool


def freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, tuple) and value[0] == "double":
        return ("double", "%.6f" % value[1])
    if isinstance(value, Decimal):
        return ("double", "%.6f" % value)
    return value


def read_proto(protoc, proto, path):
    with open(path, "rb") as f:
        decoded = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "--proto_path=" + proto[0], proto[1]],
                                 stdin=f, capture_output=True, text=True)
    if decoded.returncode != 0:
        fail("protoc could not decode %s: %s" % (path, decoded.stderr.strip()))
    return parse_text_format(decoded.stdout).get("packet", [])


def load_perfetto(packets):
    """The slices, tracks, flows and instants of the decoded packets, read as Perfetto does."""
    event_names, categories, arg_names, tracks = {}, {}, {}, {}
    cleared = False
    timed = []
    for index, packet in enumerate(packets):
        if one(packet, "trusted_packet_sequence_id") != 1:
            fail("packet %d is not on sequence 1" % index)
        flags = one(packet, "sequence_flags", 0)
        if index == 0 and flags != 1:
            fail("the first packet does not clear the sequence's incremental state (flags %d)" % flags)
        if index > 0 and flags & 1:
            fail("packet %d clears the incremental state again" % index)
        cleared = cleared or flags & 1
        interned = one(packet, "interned_data")
        if interned:
            if index > 0 and flags != 2:
                fail("packet %d adds interned data without SEQ_NEEDS_INCREMENTAL_STATE" % index)
            for field, table in (("event_names", event_names), ("event_categories", categories),
                                 ("debug_annotation_names", arg_names)):
                for entry in interned.get(field, []):
                    iid = one(entry, "iid")
                    if iid in table:
                        fail("%s iid %d interned twice" % (field, iid))
                    table[iid] = one(entry, "name")
        descriptor = one(packet, "track_descriptor")
        if descriptor:
            uuid = one(descriptor, "uuid")
            if uuid in tracks and tracks[uuid] != descriptor:
                fail("track %d described twice, differently" % uuid)
            tracks[uuid] = descriptor
        event = one(packet, "track_event")
        if event:
            uses_interned = "name_iid" in event or "category_iids" in event or any(
                "name_iid" in a for a in event.get("debug_annotations", []))
            if uses_interned and flags != 2:
                fail("packet %d uses interned data without SEQ_NEEDS_INCREMENTAL_STATE" % index)
            timed.append((one(packet, "timestamp"), index, event))
    timed.sort(key=lambda t: (t[0], t[1]))
    slices, instants, counters, open_slices = [], [], [], {}
    for ts, index, event in timed:
        uuid = one(event, "track_uuid")
        if uuid not in tracks:
            fail("packet %d refers to track %d, which no descriptor defines" % (index, uuid))
        kind = one(event, "type")
        if kind == "TYPE_SLICE_BEGIN":
            name_iid, cats = one(event, "name_iid"), event.get("category_iids", [])
            if name_iid not in event_names or len(cats) != 1 or cats[0] not in categories:
                fail("packet %d: name iid %s or categories %s not interned" % (index, name_iid, cats))
            open_slices.setdefault(uuid, []).append({
                "ts": ts, "name": event_names[name_iid], "cat": categories[cats[0]], "track": uuid,
                "args": annotations_dict(event.get("debug_annotations", []), arg_names),
                "flows": list(event.get("flow_ids", [])), "index": index})
        elif kind == "TYPE_SLICE_END":
            if not open_slices.get(uuid):
                fail("packet %d ends a slice on track %d, which has none open" % (index, uuid))
            s = open_slices[uuid].pop()
            s["dur"] = ts - s["ts"]
            slices.append(s)
        elif kind == "TYPE_COUNTER":
            if "name_iid" in event or "category_iids" in event or "counter_value" not in event:
                fail("packet %d: a counter value with a name or category, or without a value" % index)
            counters.append({"ts": ts, "track": uuid, "value": one(event, "counter_value")})
        elif kind == "TYPE_INSTANT":
            instants.append({"ts": ts, "name": one(event, "name"), "track": uuid,
                             "args": annotations_dict(event.get("debug_annotations", []), arg_names)})
        else:
            fail("packet %d: event type %s" % (index, kind))
    left = sum(len(v) for v in open_slices.values())
    if left:
        fail("%d slices never end" % left)
    return slices, instants, counters, tracks


def number_after(prefix, name):
    if not name or not name.startswith(prefix) or not name[len(prefix):].isdigit():
        fail("track named %r, expected %r and a number" % (name, prefix))
    return int(name[len(prefix):])


def lane_of_track(tracks, uuid):
    """A lane as ("device", device, stream) or ("host", pid, tid), and its names: the
    device's and the stream's ("GPU N", "stream S"), or the thread's ("thread T")."""
    track = tracks[uuid]
    parent = tracks.get(one(track, "parent_uuid"))
    if parent is None:
        fail("track %d has no parent track" % uuid)
    if "(overlapping " in (one(track, "name") or ""):
        return lane_of_track(tracks, one(track, "parent_uuid"))  # a lane's overlapping track: that lane
    thread = one(track, "thread")
    if thread:
        if one(one(parent, "process"), "pid") != one(thread, "pid"):
            fail("thread track %d is not under its process's track" % uuid)
        return ("host", one(thread, "pid"), one(thread, "tid")), (one(thread, "thread_name"),)
    device, stream = one(parent, "name"), one(track, "name")
    return ("device", number_after("GPU ", device), number_after("stream ", stream)), (device, stream)


def load_json(path):
    with open(path) as f:
        trace = json.load(f, parse_float=Decimal)
    base = trace["baseTimeNanoseconds"]
    process_names, thread_names = {}, {}
    slices, flows, memory, previous = [], [], [], None
    for ev in trace["traceEvents"]:
        ph = ev["ph"]
        if ph == "M":
            if ev["name"] == "process_name":
                process_names[ev["pid"]] = ev["args"]["name"]
            elif ev["name"] == "thread_name":
                thread_names[(ev["pid"], ev["tid"])] = ev["args"]["name"]
        elif ph == "X":
            previous = {"cat": ev["cat"], "name": ev["name"], "pid": ev["pid"], "tid": ev["tid"],
                        "ts": base + int(ev["ts"] * 1000), "dur": int(ev["dur"] * 1000), "args": ev["args"]}
            slices.append(previous)
        elif ph == "i" and ev["name"] == "[memory]":
            memory.append({"pid": ev["pid"], "tid": ev["tid"], "device": ev["args"]["Device Id"],
                           "ts": base + int(ev["ts"] * 1000), "value": ev["args"]["Total Allocated"]})
        elif ph in ("s", "f"):
            if previous is None or (previous["pid"], previous["tid"]) != (ev["pid"], ev["tid"]) or \
                    previous["ts"] != base + int(ev["ts"] * 1000):
                fail("JSON flow %s %s does not follow its event" % (ph, ev["id"]))
            flows.append((ph, ev["id"], previous))
    return trace, slices, flows, memory, process_names, thread_names


def json_lane(ev):
    return ("device" if ev["cat"] in DEVICE_CATEGORIES else "host", ev["pid"], ev["tid"])


def counter_key(tracks, counter):
    """(pid, device, ts, value) of a counter value, checking its track: bytes, below its
    process's track, named after its device."""
    track = tracks[counter["track"]]
    if one(one(track, "counter"), "unit") != "UNIT_SIZE_BYTES":
        fail("counter track %d does not count bytes" % counter["track"])
    parent = tracks.get(one(track, "parent_uuid"))
    if parent is None or one(parent, "process") is None:
        fail("counter track %d is not below a process's track" % counter["track"])
    name = one(track, "name") or ""
    if not name.endswith(" memory allocated"):
        fail("counter track named %r" % name)
    device = number_after("GPU ", name[:-len(" memory allocated")])
    return (one(one(parent, "process"), "pid"), device, counter["ts"], counter["value"])


def slice_key(cat, name, lane, ts, dur, args):
    return (cat, name, lane, ts, dur, freeze(args))


def main():
    args = sys.argv[1:]
    expect = {}
    if "--expect" in args:
        at = args.index("--expect")
        expect = {k: int(v) for k, v in (item.split("=") for item in args[at + 1].split(","))}
        del args[at:at + 2]
    if len(args) != 4:
        print(__doc__)
        sys.exit(2)
    protoc, proto_file, pftrace, json_path = args
    proto = proto_file.rsplit("/", 1) if "/" in proto_file else (".", proto_file)
    slices, instants, counters, tracks = load_perfetto(read_proto(protoc, proto, pftrace))
    trace, jslices, jflows, jmemory, process_names, thread_names = load_json(json_path)

    # Slices, with their lanes, names, times and args.
    proto_keys = Counter()
    for s in slices:
        s["lane"] = lane_of_track(tracks, s["track"])[0]
        proto_keys[slice_key(s["cat"], s["name"], s["lane"], s["ts"], s["dur"], s["args"])] += 1
    json_keys = Counter()
    for ev in jslices:
        ev["lane"] = json_lane(ev)
        json_keys[slice_key(ev["cat"], ev["name"], ev["lane"], ev["ts"], ev["dur"], ev["args"])] += 1
    if proto_keys != json_keys:
        only_p, only_j = proto_keys - json_keys, json_keys - proto_keys
        fail("slices differ: %d only in the .pftrace (first %s), %d only in the JSON (first %s)" % (
            sum(only_p.values()), next(iter(only_p), None), sum(only_j.values()), next(iter(only_j), None)))
    # Doubles were compared at the JSON's six decimals; check the values behind them too.
    for s in slices:
        for key, value in s["args"].items():
            if isinstance(value, tuple) and not any(
                    same_value(value, j["args"].get(key)) for j in jslices if j["ts"] == s["ts"] and j["name"] == s["name"]):
                fail("arg %r of %s: %r matches no JSON value" % (key, s["name"], value))
    kinds = Counter()
    for s in slices:
        kinds[CATEGORY_KIND.get(s["cat"], "runtime")] += 1
    jkinds = Counter(CATEGORY_KIND.get(ev["cat"], "runtime") for ev in jslices)
    if kinds != jkinds:
        fail("slices per kind: %s in the .pftrace, %s in the JSON" % (dict(kinds), dict(jkinds)))
    for kind, n in expect.items():
        if kind in ("kernel", "memcpy", "memset", "runtime", "cpu_op", "marker") and kinds[kind] != n:
            fail("%d %s slices, expected %d" % (kinds[kind], kind, n))

    # Tracks: the lanes of the JSON's events, each named as the JSON names it (the JSON
    # names the first 4096 lanes only), and no other.
    counter_tracks = {u for u, t in tracks.items() if one(t, "counter") is not None}
    proto_lanes = dict(lane_of_track(tracks, u) for u, t in tracks.items()
                       if one(t, "parent_uuid") is not None and u not in counter_tracks)
    overlapping = sum(1 for t in tracks.values() if "(overlapping " in (one(t, "name") or ""))
    json_lanes = {ev["lane"] for ev in jslices} | {("host", m["pid"], m["tid"]) for m in jmemory}
    if set(proto_lanes) != json_lanes:
        fail("lanes differ: only in the .pftrace %s, only in the JSON %s" % (
            sorted(map(str, set(proto_lanes) - json_lanes))[:3], sorted(map(str, json_lanes - set(proto_lanes)))[:3]))
    named = 0
    for (pid, tid), name in thread_names.items():
        lane = ("device", pid, tid) if pid in process_names else ("host", pid, tid)
        want = (process_names[pid], name) if pid in process_names else (name,)
        if proto_lanes.get(lane) != want:
            fail("lane %s is named %s in the .pftrace, %s in the JSON" % (lane, proto_lanes.get(lane), want))
        named += 1

    # Flows: the pairs (launch slice, device slice).
    def key_of(s):
        return slice_key(s["cat"], s["name"], s["lane"], s["ts"], s["dur"], s["args"])
    by_flow = {}
    for s in slices:
        for flow in s["flows"]:
            by_flow.setdefault(flow, []).append(s)
    proto_pairs = Counter()
    for flow, ends in by_flow.items():
        if len(ends) != 2:
            fail("flow %d joins %d slices, not 2" % (flow, len(ends)))
        host = [e for e in ends if e["lane"][0] == "host"]
        device = [e for e in ends if e["lane"][0] == "device"]
        if len(host) != 1 or len(device) != 1:
            fail("flow %d does not join a launch and a device slice" % flow)
        proto_pairs[(key_of(host[0]), key_of(device[0]))] += 1
    starts = {}
    for ph, fid, ev in jflows:
        if ph == "s":
            if fid in starts:
                fail("JSON flow id %s starts twice" % fid)
            starts[fid] = ev
    json_pairs = Counter()
    for ph, fid, ev in jflows:
        if ph == "f":
            if fid not in starts:
                fail("JSON flow %s ends without a start" % fid)
            json_pairs[(key_of(starts[fid]), key_of(ev))] += 1
    if proto_pairs != json_pairs:
        fail("flow pairs differ: %d in the .pftrace, %d in the JSON" % (sum(proto_pairs.values()),
                                                                      sum(json_pairs.values())))

    # Memory: the counters' values, the JSON's running totals.
    proto_memory = Counter(counter_key(tracks, c) for c in counters)
    json_memory = Counter((m["pid"], m["device"], m["ts"], m["value"]) for m in jmemory)
    if proto_memory != json_memory:
        fail("memory differs: only in the .pftrace %s, only in the JSON %s" % (
            sorted(proto_memory - json_memory)[:3], sorted(json_memory - proto_memory)[:3]))

    # The capture's facts and the window's end.
    facts = [i for i in instants if i["name"] == "devtrace"]
    ends = [i for i in instants if i["name"] == "Record Window End"]
    if len(facts) != 1 or len(ends) != 1 or len(instants) != 2:
        fail("instants: %s" % [i["name"] for i in instants])
    got = facts[0]["args"]
    want = dict(trace["devtrace"])
    want["deviceProperties"] = trace["deviceProperties"]
    want["distributedInfo"] = trace["distributedInfo"]
    if not same_value(got, want):
        fail("the devtrace instant's args %s differ from the JSON's %s" % (got, want))
    window_start = trace["devtrace"]["window"][0]
    if facts[0]["ts"] != (window_start or trace["baseTimeNanoseconds"]):
        fail("the devtrace instant is at %d, not at the window's start" % facts[0]["ts"])
    jend = [e for e in trace["traceEvents"] if e.get("name") == "Record Window End"][0]
    if ends[0]["ts"] != trace["baseTimeNanoseconds"] + int(jend["ts"] * 1000):
        fail("Record Window End at %d, the JSON's at %s" % (ends[0]["ts"], jend["ts"]))

    figures = {"overlapping": overlapping, "lanes": len(proto_lanes), "flows": sum(proto_pairs.values()),
               "counters": len(counters), "counter_tracks": len({c["track"] for c in counters})}
    for key, n in expect.items():
        if key in figures and figures[key] != n:
            fail("%d %s, expected %d" % (figures[key], key, n))
    print("same as the JSON: %d slices (%s), %d lanes (%d named in the JSON; and %d overlapping tracks), "
          "%d flow pairs, %d memory values on %d counter tracks, the capture's facts" % (
              len(slices), ", ".join("%s %d" % kv for kv in sorted(kinds.items())), len(proto_lanes), named,
              overlapping, sum(proto_pairs.values()), figures["counters"], figures["counter_tracks"]))


if __name__ == "__main__":
    main()
