#!/usr/bin/env python3
"""test_python_abi.py PYTHON_DIR LIBDEVTRACE: the Python package's ctypes structs agree with
the library's structs, field by field (devtrace_abi_layout: offsets and sizes from the
compiler that built the library), and a config reaches the library whole: the backend asked
for is the one opened ("none" stays "none", an unknown runtime category is not read as the
backend's name)."""
import os
import sys

python_dir, library = sys.argv[1:3]
print("interpreter: %s" % sys.executable)
os.environ["DEVTRACE_LIBRARY"] = library
sys.path.insert(0, python_dir)
import devtrace  # noqa: E402

bad = devtrace.abi_mismatches()
assert bad == [], "\n".join(bad)
checked = ", ".join("%s (%d fields)" % (c._c_name, len(c._fields_)) for c in devtrace._STRUCTS)
print("ok   every ctypes struct matches the library: %s" % checked)

# A struct the library does not know, and a field it does not have, are said so.
devtrace.Event._c_name, saved = "devtrace_nosuch", devtrace.Event._c_name
assert devtrace.abi_mismatches() == ["devtrace_nosuch: the library does not know this struct"], devtrace.abi_mismatches()
devtrace.Event._c_name = saved

s = devtrace.Session(backend="none", start=False)
assert s.backend == "none", s.backend
s.close()
s = devtrace.Session(backend="none", start=False, runtime_category="nosuch")
assert s.backend == "none", s.backend
s.close()
print("ok   Session(backend=\"none\") opens \"none\", with any runtime category")
assert devtrace.library().devtrace_version_number() == 200, devtrace.library().devtrace_version_number()
print("ok   version number 200")
