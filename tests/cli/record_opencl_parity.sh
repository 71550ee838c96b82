#!/usr/bin/env bash
# Traces the OpenCL example on the real device with devtrace record and checks the trace
# with exact values; the example's result must be bit-identical with and without tracing.
set -euo pipefail
devtrace=$1 example=$2 work=$3 python=$4
here=$(cd "$(dirname "$0")" && pwd)
if ! "$example" --quiet --size 16 >/dev/null 2>"$work/probe.err"; then
  if grep -q "no OpenCL platform" "$work/probe.err"; then echo "SKIPPED: no OpenCL platform"; exit 77; fi
  cat "$work/probe.err"; exit 1
fi
api_calls=$("$example" --print-api-count --quiet | sed -n 's/^api_calls=//p')
plain=$("$example" --quiet | grep '^result:')
traced=$("$devtrace" record -o "$work/parity.json" -- "$example" --quiet 2>"$work/record.err" | grep '^result:')
cat "$work/record.err"
[[ "$plain" == "$traced" ]] || { echo "results differ: untraced '$plain' traced '$traced'"; exit 1; }
grep -q "^trace: $work/parity.json$" "$work/record.err" || { echo "no 'trace: PATH' line"; exit 1; }
"$python" "$here/check_example_parity.py" "$work/parity.json" "$api_calls" --validation hardware
# The same through gzip.
"$devtrace" record -q -o "$work/parity.json.gz" -- "$example" --quiet >/dev/null
"$python" "$here/check_example_parity.py" "$work/parity.json.gz" "$api_calls" --validation hardware
echo "result bit-identical: $plain"
