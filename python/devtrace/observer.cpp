// observer.cpp: the PyTorch observer, the only C++ in devtrace. A global
// at::RecordFunction callback that turns every op torch records (aten ops, record_function
// scopes, autograd Functions and backward functions, on any thread) into devtrace ops:
// enter -> devtrace_op_enter(name, handle, sequence number, forward thread id), exit ->
// devtrace_op_exit(handle). Everything else (the stack of ops, the External id of device work, the
// events) is devtrace's C. Built at first use against the importing torch's own headers
// (python/devtrace/observer_build.py) and cached per torch version.
//
// With DEVTRACE_OBSERVER_SHAPES (devtrace.torch.profile(record_shapes=True)), the callback also
// asks torch for the op's inputs and keeps their shapes and types as Kineto writes them
// ("Input Dims", "Input type"), per thread, until the profile takes them.
#include <ATen/record_function.h>
#include <torch/version.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "observer_api.h"

namespace {

std::atomic<devtrace_op_enter_fn> enter_fn{nullptr};
std::atomic<devtrace_op_exit_fn> exit_fn{nullptr};
at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;
int installed_flags = 0;

constexpr char evaluate_prefix[] = "autograd::engine::evaluate_function: ";

// Shapes, per thread: a thread appends under its own (uncontended) lock; the profile takes
// every thread's under each one's.
struct ShapeRecord {
    uint64_t id;
    std::string dims, types;
};
struct ShapeBuffer {
    std::mutex lock;
    std::vector<ShapeRecord> records;
};
std::mutex buffers_lock;
std::vector<ShapeBuffer *> buffers; // never freed: a thread's buffer outlives the thread
std::atomic<bool> shapes_on{false};

ShapeBuffer *thread_buffer()
{
    thread_local ShapeBuffer *mine = nullptr;
    if (!mine) {
        mine = new ShapeBuffer;
        std::lock_guard<std::mutex> g(buffers_lock);
        buffers.push_back(mine);
    }
    return mine;
}

// One input as Kineto writes it: a tensor's sizes and dtype name, "Scalar", "TensorList",
// else no dims and an empty type.
void describe(const c10::IValue &v, std::string &dims, std::string &types)
{
    if (v.isTensor() && v.toTensor().defined()) {
        const at::Tensor &t = v.toTensor();
        dims += '[';
        bool first = true;
        for (int64_t d : t.sizes()) {
            if (!first)
                dims += ", ";
            dims += std::to_string(d);
            first = false;
        }
        dims += ']';
        types += '"';
        types += std::string(t.dtype().name());
        types += '"';
        return;
    }
    dims += "[]";
    types += v.isScalar() ? "\"Scalar\"" : v.isTensorList() ? "\"TensorList\"" : "\"\"";
}

void record_shapes(const at::RecordFunction &fn)
{
    ShapeRecord r{fn.handle(), "[", "["};
    bool first = true;
    for (const c10::IValue &v : fn.inputs()) {
        if (!first) {
            r.dims += ", ";
            r.types += ", ";
        }
        describe(v, r.dims, r.types);
        first = false;
    }
    r.dims += ']';
    r.types += ']';
    ShapeBuffer *b = thread_buffer();
    std::lock_guard<std::mutex> g(b->lock);
    b->records.push_back(std::move(r));
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    devtrace_op_enter_fn enter = enter_fn.load(std::memory_order_relaxed);
    if (!enter)
        return nullptr;
    const char *name = fn.name();
    int64_t seq = fn.seqNr();
    // The engine's evaluate_function op has no sequence number of its own: torch gives it its
    // node's, the op entered inside it.
    if (seq < 0 && name[0] == 'a' && name[1] == 'u' &&
        std::strncmp(name, evaluate_prefix, sizeof evaluate_prefix - 1) == 0)
        seq = DEVTRACE_OBSERVER_SEQUENCE_FROM_CHILD;
    if (enter(name, fn.handle(), seq, fn.forwardThreadId()) == 0 &&
        shapes_on.load(std::memory_order_relaxed) && fn.needsInputs())
        record_shapes(fn);
    return nullptr;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    devtrace_op_exit_fn exit_ = exit_fn.load(std::memory_order_relaxed);
    if (exit_)
        exit_(fn.handle());
}

std::unique_ptr<at::ObserverContext> on_enter_empty(const at::RecordFunction &)
{
    return nullptr;
}

void on_exit_empty(const at::RecordFunction &, at::ObserverContext *) {}

} // namespace

extern "C" __attribute__((visibility("default"))) void devtrace_torch_observer_remove(void)
{
    if (handle != at::INVALID_CALLBACK_HANDLE)
        at::removeCallback(handle);
    handle = at::INVALID_CALLBACK_HANDLE;
    shapes_on.store(false);
}

extern "C" __attribute__((visibility("default"))) int devtrace_torch_observer_install(devtrace_op_enter_fn enter,
                                                                                    devtrace_op_exit_fn exit_,
                                                                                    int flags)
{
    enter_fn.store(enter);
    exit_fn.store(exit_);
    if (handle != at::INVALID_CALLBACK_HANDLE && flags == installed_flags)
        return 0;
    devtrace_torch_observer_remove(); // another set of flags: torch's callback is registered anew
    bool shapes = (flags & DEVTRACE_OBSERVER_SHAPES) != 0;
    if (flags & DEVTRACE_OBSERVER_EMPTY)
        handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter_empty, on_exit_empty));
    else
        handle =
            at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsIds(true).needsInputs(shapes));
    installed_flags = flags;
    shapes_on.store(shapes);
    return handle == at::INVALID_CALLBACK_HANDLE ? -1 : 0;
}

extern "C" __attribute__((visibility("default"))) size_t devtrace_torch_observer_take_shapes(devtrace_shape_fn fn,
                                                                                           void *user)
{
    std::vector<ShapeRecord> all;
    {
        std::lock_guard<std::mutex> g(buffers_lock);
        for (ShapeBuffer *b : buffers) {
            std::lock_guard<std::mutex> bg(b->lock);
            for (ShapeRecord &r : b->records)
                all.push_back(std::move(r));
            b->records.clear();
        }
    }
    for (const ShapeRecord &r : all)
        fn(r.id, r.dims.c_str(), r.types.c_str(), user);
    return all.size();
}

// What the callback costs without devtrace behind it (the benchmark's breakdown): an enter
// that records nothing, an exit that ends nothing.
extern "C" __attribute__((visibility("default"))) int devtrace_torch_observer_null_enter(const char *, uint64_t,
                                                                                       int64_t, uint64_t)
{
    return 1;
}

extern "C" __attribute__((visibility("default"))) int devtrace_torch_observer_null_exit(uint64_t)
{
    return 1;
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
