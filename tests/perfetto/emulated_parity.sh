#!/usr/bin/env bash
# perfetto.emulated_parity: parity.wl through the CUPTI emulator under devtrace record, with
# the trace written as .PFTRACE (the suffix in any case) and the raw capture saved; the
# capture replayed to JSON and converted to .perfetto-trace. The converted trace must be the
# live one's bytes, and the live one the same as the JSON, with parity.wl's counts. Then the
# one-line errors: convert given a JSON trace, replay --trace-name with a Perfetto output.
# usage: emulated_parity.sh DEVTRACE EMU_RUN CUPTI_EMU_LIB PARITY_WL OUT_PREFIX COMPARE...
set -euo pipefail
devtrace=$1 emu_run=$2 lib=$3 workload=$4 out=$5
shift 5
[[ -r "$workload" ]] || { echo "FAIL: cannot read $workload (the shared folder: set DEVTRACE_SHARED_DIR)"; exit 1; }
rm -f "$out".*
DEVTRACE_CUPTI_LIBRARY=$lib "$devtrace" record -q --backend cupti --raw "$out.dtraw" -o "$out-live.PFTRACE" -- \
  "$emu_run" --lib "$lib" "$workload"
"$devtrace" replay -q "$out.dtraw" -o "$out.json"
"$devtrace" convert -q "$out.dtraw" "$out-converted.perfetto-trace"
cmp "$out-live.PFTRACE" "$out-converted.perfetto-trace" || { echo "FAIL: the converted capture differs from the live trace"; exit 1; }
"$@" "$out-live.PFTRACE" "$out.json" --expect kernel=17,memcpy=1,memset=1,runtime=187,cpu_op=17,flows=19

expect_error() { # STATUS TEXT COMMAND...: the command fails with STATUS and one line containing TEXT
  local status=$1 text=$2 rc=0
  shift 2
  "$@" >"$out.stdout" 2>"$out.stderr" || rc=$?
  [[ $rc == "$status" ]] || { echo "FAIL: '$*' exited $rc, expected $status"; cat "$out.stderr"; exit 1; }
  [[ $(wc -l <"$out.stderr") == 1 ]] && grep -qF -- "$text" "$out.stderr" ||
    { echo "FAIL: '$*' said:"; cat "$out.stderr"; echo "expected one line with: $text"; exit 1; }
}
expect_error 1 "is a Chrome JSON trace; devtrace convert reads a raw capture (.dtraw) or a recorder's spill (.spill), not yet this kind" \
  "$devtrace" convert "$out.json" "$out-from-json.pftrace"
[[ ! -e "$out-from-json.pftrace" ]] || { echo "FAIL: convert of a JSON trace left a file"; exit 1; }
expect_error 2 "--trace-name names a JSON trace" "$devtrace" replay "$out.dtraw" -o "$out-named.pftrace" --trace-name x
echo "ok: live, converted and the errors"
