#!/usr/bin/env bash
# perfetto.opencl: the OpenCL integration test's workload on this machine's OpenCL device
# (PoCL), its one session written as JSON and as .pftrace (devtrace_write_trace), compared.
# usage: opencl.sh TEST_OPENCL_INPROC OUT_PREFIX COMPARE...  (exit 77: no OpenCL platform)
set -euo pipefail
program=$1 out=$2
shift 2
rc=0
DEVTRACE_TEST_TRACE_PAIR=$out "$program" || rc=$?
[[ $rc == 0 ]] || exit $rc
"$@" "$out.pftrace" "$out.json" --expect kernel=2,memcpy=2,memset=1,cpu_op=4,flows=5
