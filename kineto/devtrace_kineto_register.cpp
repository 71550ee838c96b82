/* devtrace_kineto_register.cpp: the C entry point of libdevtrace_kineto.so. The library holds
 * devtrace::KinetoProfiler and no libkineto: its libkineto symbols are the loading process's
 * (libtorch_cpu.so in PyTorch), so the profiler registers with the process's one Kineto. */
#include "devtrace/kineto.hpp"

extern "C" __attribute__((visibility("default"))) int devtrace_kineto_register(void);

/* 0: registered now; 1: already registered by an earlier call. */
extern "C" int devtrace_kineto_register(void)
{
    return devtrace::register_kineto_profiler() ? 0 : 1;
}
