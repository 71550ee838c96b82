#!/usr/bin/env bash
# perfetto.synthetic: perfetto_pair's session (its edge cases: see perfetto_pair.c) as JSON
# and as Perfetto traces made by one thread and by four: the two .pftrace files must be the
# same bytes, and the same as the JSON (compare_with_json.py), with these exact counts.
# usage: synthetic.sh PERFETTO_PAIR OUT_PREFIX COMPARE...
set -euo pipefail
pair=$1 out=$2
shift 2
"$pair" "$out.json" "$out-serial.pftrace" "$out-threads.pftrace"
cmp "$out-serial.pftrace" "$out-threads.pftrace" || { echo "FAIL: four threads wrote other bytes than one"; exit 1; }
# 3000 launches: 600 memsets, 800 copies, 1600 kernels (+ 3 graph nodes, early, outer,
# inner and the badly named one); 3000 calls + 3 + 4100 on the extra threads; 3 CPU ops,
# two of which need the thread's one overlapping track; 3 markers (the range without its end
# left out); 7 memory values on 3 counter tracks, the two processes' threads 2 more lanes.
"$@" "$out-serial.pftrace" "$out.json" \
  --expect kernel=1607,memcpy=800,memset=600,runtime=7103,cpu_op=3,marker=3,overlapping=1,lanes=4106,flows=3004,counters=7,counter_tracks=3
