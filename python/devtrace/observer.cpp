// observer.cpp: the PyTorch observer, the only C++ in devtrace. A global
// at::RecordFunction callback that turns every op torch records (aten ops, record_function
// scopes, autograd Functions and backward functions, on any thread) into devtrace ops:
// enter -> devtrace_op_enter(name, handle, sequence number, forward thread id), exit ->
// devtrace_op_exit(handle). Everything else (the stack of ops, the External id of device work, the
// events) is devtrace's C. Built at first use against the importing torch's own headers
// (python/devtrace/observer_build.py) and cached per torch version.
#include <ATen/record_function.h>
#include <torch/version.h>

#include <atomic>

#include "observer_api.h"

namespace {

std::atomic<devtrace_op_enter_fn> enter_fn{nullptr};
std::atomic<devtrace_op_exit_fn> exit_fn{nullptr};
at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    devtrace_op_enter_fn enter = enter_fn.load(std::memory_order_relaxed);
    if (enter)
        enter(fn.name(), fn.handle(), fn.seqNr(), fn.forwardThreadId());
    return nullptr;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    devtrace_op_exit_fn exit_ = exit_fn.load(std::memory_order_relaxed);
    if (exit_)
        exit_(fn.handle());
}

} // namespace

extern "C" __attribute__((visibility("default"))) int devtrace_torch_observer_install(devtrace_op_enter_fn enter,
                                                                                    devtrace_op_exit_fn exit_)
{
    enter_fn.store(enter);
    exit_fn.store(exit_);
    if (handle != at::INVALID_CALLBACK_HANDLE)
        return 0;
    handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsIds(true));
    return handle == at::INVALID_CALLBACK_HANDLE ? -1 : 0;
}

extern "C" __attribute__((visibility("default"))) void devtrace_torch_observer_remove(void)
{
    if (handle != at::INVALID_CALLBACK_HANDLE)
        at::removeCallback(handle);
    handle = at::INVALID_CALLBACK_HANDLE;
}

extern "C" __attribute__((visibility("default"))) int devtrace_torch_observer_installed(void)
{
    return handle != at::INVALID_CALLBACK_HANDLE;
}

extern "C" __attribute__((visibility("default"))) int devtrace_torch_global_callbacks(void)
{
    return at::hasGlobalCallbacks() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) const char *devtrace_torch_observer_built_for(void)
{
    return TORCH_VERSION;
}
