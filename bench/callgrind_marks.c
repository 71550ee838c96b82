/* callgrind_marks.c: where the PyTorch benchmark's instruction counts start and stop
 * (torch_ops.py --callgrind loads this library with ctypes and calls both around the
 * measured loop; the program runs under valgrind --tool=callgrind --instr-atstart=no).
 * Outside valgrind both do nothing. */
#include <valgrind/callgrind.h>

void devtrace_bench_callgrind_start(void);
void devtrace_bench_callgrind_stop(void);

__attribute__((visibility("default"))) void devtrace_bench_callgrind_start(void)
{
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT;
}

__attribute__((visibility("default"))) void devtrace_bench_callgrind_stop(void)
{
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS;
    CALLGRIND_STOP_INSTRUMENTATION;
}
