#!/usr/bin/env bash
# test_install.sh BUILD_DIR SOURCE_DIR WORK_DIR PYTHON: installs the build into a fresh
# prefix (cmake --install), checks what it holds (the header, libdevtrace.so with its SONAME,
# libdevtrace.a, the command, devtrace.pc, the CMake package), builds the consumer through
# pkg-config and through find_package(devtrace), runs both, and traces the pkg-config one with
# the installed command: the trace holds its kernel and its annotated operator. The installed
# `devtrace record --torch` finds the installed Python package and records a torch program's ops.
set -euo pipefail
build=$1 src=$2 work=$3 python=$4
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && dirname "$(find . -name libdevtrace.so.0 -print -quit)")
libdir=${libdir#./}
[[ -n "$libdir" ]] || fail "no libdevtrace.so.0 installed under $prefix"
for f in include/devtrace.h "$libdir/libdevtrace.so" "$libdir/libdevtrace.a" bin/devtrace \
         "$libdir/pkgconfig/devtrace.pc" "$libdir/cmake/devtrace/devtraceConfig.cmake" \
         "$libdir/cmake/devtrace/devtraceConfigVersion.cmake" "$libdir/cmake/devtrace/devtraceTargets.cmake"; do
  [[ -e "$prefix/$f" ]] || fail "cmake --install did not install $f"
done
for f in __init__.py torch.py observer.cpp observer_api.h observer_build.py _bootstrap/sitecustomize.py; do
  [[ -f "$prefix/share/devtrace/python/devtrace/$f" ]] || fail "cmake --install did not install share/devtrace/python/devtrace/$f"
done
# The Kineto adaptor's sources, beside the package (devtrace.kineto.register() compiles them): files.
for f in kineto/devtrace_kineto.cpp kineto/devtrace_kineto_register.cpp include/devtrace.h include/devtrace/kineto.hpp; do
  f=share/devtrace/python/devtrace/_kineto/$f
  [[ -f "$prefix/$f" && ! -L "$prefix/$f" ]] || fail "cmake --install did not install $f (a file)"
done
soname=$(objdump -p "$prefix/$libdir/libdevtrace.so" | awk '$1 == "SONAME" {print $2}')
[[ "$soname" == "libdevtrace.so.0" ]] || fail "SONAME is '$soname', expected libdevtrace.so.0"
rpath=$(objdump -p "$prefix/bin/devtrace" | awk '$1 == "RUNPATH" || $1 == "RPATH" {print $2}')
[[ "$rpath" == "\$ORIGIN/../$libdir" ]] || fail "the command's RPATH is '$rpath', expected \$ORIGIN/../$libdir"
echo "installed: include/devtrace.h, $libdir/libdevtrace.so (SONAME $soname), libdevtrace.a, bin/devtrace (RPATH $rpath), devtrace.pc, cmake/devtrace"

# pkg-config: shared, and static (--static adds the archive's own libraries).
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[[ "$(pkg-config --modversion devtrace)" == "0.2.0" ]] || fail "pkg-config --modversion devtrace: $(pkg-config --modversion devtrace)"
cc -std=c11 -Wall -Werror -o "$work/consumer_pc" "$src/consumer.c" $(pkg-config --cflags --libs devtrace) -lOpenCL \
   -Wl,-rpath,"$prefix/$libdir"
cc -std=c11 -Wall -Werror -o "$work/consumer_pc_static" "$src/consumer.c" $(pkg-config --cflags devtrace) \
   "$prefix/$libdir/libdevtrace.a" $(pkg-config --static --libs-only-l devtrace | sed 's/-ldevtrace//') -lOpenCL

# CMake package: devtrace::devtrace and devtrace::devtrace_static.
cmake -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
for exe in "$work/consumer_pc" "$work/consumer_pc_static" "$work/cmake-build/consumer_shared" "$work/cmake-build/consumer_static"; do
  out=$("$exe") || fail "$exe exited $?"
  [[ "$out" == *"consumer: ok"* ]] || fail "$exe printed: $out"
done
# ldd's output is read whole: `ldd | grep -q` fails under pipefail when grep exits first and
# ldd dies of SIGPIPE.
libs=$(ldd "$work/cmake-build/consumer_shared")
[[ "$libs" == *"$prefix/$libdir/libdevtrace.so.0"* ]] ||
  fail "consumer_shared does not load the installed libdevtrace.so.0: $libs"
echo "built and ran: pkg-config (shared, static), find_package (devtrace::devtrace, devtrace::devtrace_static)"

# The installed command traces the consumer; DEVTRACE_LIBRARY unset, so it finds its collector itself.
env -u DEVTRACE_LIBRARY "$prefix/bin/devtrace" record --backend opencl -o "$work/trace.json" -- "$work/consumer_pc" >/dev/null
"$python" - "$work/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
kernels = [e["name"] for e in ev if e.get("cat") == "kernel"]
ops = [e["name"] for e in ev if e.get("cat") == "cpu_op"]
assert t["devtrace"]["backend"] == "opencl", t["devtrace"]["backend"]
assert kernels == ["add_one"], kernels
assert ops == ["install_consumer_op"], ops
print("traced with the installed command: backend opencl, kernels %s, cpu_ops %s" % (kernels, ops))
PY

# --torch: the installed command finds the installed Python package (share/devtrace/python) itself.
torch_py=
for p in /usr/bin/python3 "$python"; do
  if [[ -x "$p" ]] && "$p" -c "import torch" 2>/dev/null; then torch_py=$p; break; fi
done
if [[ -z "$torch_py" ]]; then
  echo "SKIPPED: record --torch with the installed command: no interpreter imports torch (/usr/bin/python3, $python)"
  exit 0
fi
echo "interpreter with torch: $torch_py"
env -u DEVTRACE_LIBRARY -u DEVTRACE_PYTHON_DIR -u PYTHONPATH DEVTRACE_TORCH_CACHE="$work/torch-cache" \
  "$prefix/bin/devtrace" record --torch --backend opencl -q -o "$work/torch.json" -- "$torch_py" -c \
  'import torch, devtrace; print("package", devtrace.__file__); [torch.add(torch.ones(1), 1) for _ in range(3)]' \
  >"$work/torch.out" 2>&1 || fail "the installed devtrace record --torch failed: $(cat "$work/torch.out")"
"$python" - "$work/torch.json" "$work/torch.out" "$prefix" <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
package = os.path.join(os.path.realpath(sys.argv[3]), "share", "devtrace", "python", "devtrace", "__init__.py")
assert "package %s" % package in out, out
adds = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op" and e["name"] == "aten::add"]
assert len(adds) == 3, out
print("installed devtrace record --torch: the installed package, 3 aten::add cpu_ops")
PY

# devtrace.kineto from the installed package: its own adaptor sources, and with this torch
# (Debian's 1.13 has no Kineto) register() refuses in one line.
PYTHONPATH=$prefix/share/devtrace/python DEVTRACE_LIBRARY=$prefix/$libdir/libdevtrace.so \
  "$torch_py" - "$prefix" >"$work/kineto.out" 2>&1 <<'PY' || fail "devtrace.kineto from the installed package: $(cat "$work/kineto.out")"
import os, sys, torch, devtrace.kineto
here = os.path.join(os.path.realpath(sys.argv[1]), "share", "devtrace", "python", "devtrace", "_kineto")
sources, include = devtrace.kineto.adaptor_sources()
assert [os.path.realpath(p) for p in sources + [include]] == [
    os.path.join(here, "kineto", "devtrace_kineto.cpp"), os.path.join(here, "kineto", "devtrace_kineto_register.cpp"),
    os.path.join(here, "include")], (sources, include)
try:
    devtrace.kineto.register()
    raise SystemExit("register() did not refuse")
except devtrace.kineto.KinetoUnavailable as e:
    line = str(e)
if not torch.autograd.kineto_available():
    want = ("torch %s was built without Kineto (torch.autograd.kineto_available() is False), so torch.profiler "
            "has no child profilers: use devtrace.torch.profile" % torch.__version__)
    assert line == want, (line, want)
print("installed devtrace.kineto: sources in share/devtrace/python/devtrace/_kineto; register(): %s" % line)
PY
cat "$work/kineto.out"
