/* kineto_host.cpp: a program that profiles itself with libkineto exactly as PyTorch's profiler
 * does (torch/csrc/profiler/kineto_shim.cpp), with devtrace as Kineto's child profiler loaded
 * from libdevtrace_kineto.so; the tests of docs/kineto.md run it and check the JSON that
 * libkineto's own writer saves.
 *
 *   kineto_host --adaptor LIBDEVTRACE_KINETO.so --out TRACE.json (--emulator EMU.so --workload W.wl | --opencl)
 *               [--no-adaptor] [--ops-outside N] [--user-annotations]
 *
 * It links libkineto (built from the shared snapshot) and exports its symbols, as libtorch_cpu.so
 * does; libdevtrace_kineto.so, which has none of them, takes them from here. The sequence:
 *   libkineto_init(false, true); dlopen the adaptor and call devtrace_kineto_register();
 *   initProfilerIfRegistered(); prepareTrace(torch's CPU types + its PrivateUse1 device types);
 *   startTrace(); the program's ops; transferCpuTrace(their CPU op activities); stopTrace();
 *   save(TRACE.json).
 * The ops: the workload's (a workload file the emulator runs) or the OpenCL parity
 * example's (examples/opencl_parity.c, linked in, on the machine's OpenCL platform) announce
 * each op through devtrace_annotate_push/pop, which they look up by name in the process; this
 * program defines them (exported, so found first) as torch's op callbacks are: an op gets a
 * correlation id (the workload's op id + 1: torch's ids start at 1, and Kineto's writer omits
 * an External id of 0), pushCorrelationId/popCorrelationId around it, and a CPU_OP activity
 * with its name, times and thread, with the workload's id as its "Op id" arg.
 * --no-adaptor: the same without devtrace (the bench's reference). --ops-outside N: N more
 * ops after the trace stopped (they must not reach the trace). --user-annotations: each op is
 * also a user scope, as torch's record_function user scopes are: pushUserCorrelationId /
 * popUserCorrelationId with its user id (its correlation id + 1000000) around it, and a
 * USER_ANNOTATION activity named "user OPNAME" with that id.
 * Exit 0 with one summary line; 1 on a failure, with one line saying what failed. */
#include <libkineto.h>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" int opencl_parity_main(int argc, char **argv); /* examples/opencl_parity.c's main */

namespace
{

struct Op {
    std::string name;
    uint64_t workload_id, correlation;
    int64_t start_ns, end_ns;
    int32_t tid;
};

std::mutex g_lock;
std::vector<Op> g_done;
thread_local std::vector<Op> t_open;
bool g_recording = false;
bool g_user_annotations = false;
constexpr uint64_t kUserIdOffset = 1000000; /* an op's user id: its correlation id + this */

int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

int32_t thread_id()
{
    return static_cast<int32_t>(syscall(SYS_gettid));
}

[[noreturn]] void fail(const std::string &what)
{
    std::fprintf(stderr, "kineto_host: %s\n", what.c_str());
    std::exit(1);
}

} // namespace

/* The ops' announcements (see the header comment): torch's op enter and exit. */
extern "C" __attribute__((visibility("default"))) int devtrace_annotate_push(const char *name, uint64_t id)
{
    Op op{name ? name : "", id, id + 1, now_ns(), 0, thread_id()};
    if (g_recording) {
        libkineto::api().activityProfiler().pushCorrelationId(op.correlation);
        if (g_user_annotations)
            libkineto::api().activityProfiler().pushUserCorrelationId(op.correlation + kUserIdOffset);
    }
    t_open.push_back(op);
    return 0;
}

extern "C" __attribute__((visibility("default"))) int devtrace_annotate_pop(void)
{
    if (t_open.empty())
        return -1;
    Op op = t_open.back();
    t_open.pop_back();
    if (g_recording) {
        if (g_user_annotations)
            libkineto::api().activityProfiler().popUserCorrelationId();
        libkineto::api().activityProfiler().popCorrelationId();
        op.end_ns = now_ns();
        std::lock_guard<std::mutex> guard(g_lock);
        g_done.push_back(op);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *adaptor = nullptr, *out = nullptr, *emulator = nullptr, *workload = nullptr;
    bool opencl = false, use_adaptor = true;
    long ops_outside = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        if (a == "--adaptor" && has_value)
            adaptor = argv[++i];
        else if (a == "--out" && has_value)
            out = argv[++i];
        else if (a == "--emulator" && has_value)
            emulator = argv[++i];
        else if (a == "--workload" && has_value)
            workload = argv[++i];
        else if (a == "--ops-outside" && has_value)
            ops_outside = std::strtol(argv[++i], nullptr, 10);
        else if (a == "--opencl")
            opencl = true;
        else if (a == "--no-adaptor")
            use_adaptor = false;
        else if (a == "--user-annotations")
            g_user_annotations = true;
        else if (a == "--help") {
            std::printf("usage: kineto_host --adaptor LIB.so --out TRACE.json (--emulator EMU.so --workload W.wl | "
                        "--opencl) [--no-adaptor] [--ops-outside N] [--user-annotations]\n");
            return 0;
        } else
            fail("unknown argument '" + a + "' (--help lists them)");
    }
    if (!out || (!adaptor && use_adaptor) || (!opencl && (!emulator || !workload)))
        fail("give --adaptor, --out and either --emulator with --workload or --opencl (--help)");

    /* The device runtime is the application's: loaded before profiling, as torch loads it. */
    int (*run_workload)(void) = nullptr;
    if (emulator) {
        void *emu = dlopen(emulator, RTLD_NOW | RTLD_GLOBAL);
        if (!emu)
            fail(std::string("dlopen ") + emulator + ": " + dlerror());
        auto load = reinterpret_cast<int (*)(const char *, char *, size_t)>(dlsym(emu, "devemu_load_workload"));
        run_workload = reinterpret_cast<int (*)(void)>(dlsym(emu, "devemu_run"));
        if (!load || !run_workload)
            fail(std::string(emulator) + " is not a devtrace emulator (no devemu_load_workload/devemu_run)");
        char err[512] = "";
        if (load(workload, err, sizeof err) != 0)
            fail(err);
    }

    /* kineto_shim.cpp: prepareTrace. */
    libkineto_init(/*cpuOnly=*/false, /*logOnError=*/true);
    libkineto::api().suppressLogMessages();
    if (use_adaptor) {
        void *lib = dlopen(adaptor, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            fail(std::string("dlopen ") + adaptor + ": " + dlerror());
        auto reg = reinterpret_cast<int (*)(void)>(dlsym(lib, "devtrace_kineto_register"));
        if (!reg)
            fail(std::string(adaptor) + " has no devtrace_kineto_register");
        if (reg() != 0)
            fail("devtrace_kineto_register did not register (it says: already registered)");
    }
    if (!libkineto::api().isProfilerInitialized())
        libkineto::api().initProfilerIfRegistered();
    const std::set<libkineto::ActivityType> activities = {
        /* torch's kCpuTypes */
        libkineto::ActivityType::CPU_OP,
        libkineto::ActivityType::CPU_INSTANT_EVENT,
        libkineto::ActivityType::USER_ANNOTATION,
        libkineto::ActivityType::EXTERNAL_CORRELATION,
        libkineto::ActivityType::CUDA_RUNTIME,
        libkineto::ActivityType::CUDA_DRIVER,
        libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
        libkineto::ActivityType::PRIVATEUSE1_DRIVER,
        /* torch's kPrivateUse1Types */
        libkineto::ActivityType::GPU_MEMCPY,
        libkineto::ActivityType::GPU_MEMSET,
        libkineto::ActivityType::GPU_USER_ANNOTATION,
        libkineto::ActivityType::CONCURRENT_KERNEL,
    };
    libkineto::api().activityProfiler().prepareTrace(activities);
    libkineto::api().activityProfiler().startTrace();
    libkineto::api().activityProfiler().recordThreadInfo();
    int64_t start_ns = now_ns();
    g_recording = true;

    int rc = 0;
    if (run_workload) {
        rc = run_workload();
    } else {
        char name[] = "opencl-parity", quiet[] = "--quiet";
        char *args[] = {name, quiet, nullptr};
        rc = opencl_parity_main(2, args);
    }
    if (rc != 0)
        fail("the workload failed (status " + std::to_string(rc) + ")");

    /* kineto_shim.cpp: the CPU ops reach Kineto before stopTrace (transferCpuTrace). */
    auto cpu = std::make_unique<libkineto::CpuTraceBuffer>();
    cpu->span = libkineto::TraceSpan(start_ns, now_ns(), "PyTorch Profiler");
    cpu->gpuOpCount = -1;
    size_t nops;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        nops = g_done.size();
        for (const Op &op : g_done) {
            cpu->emplace_activity(cpu->span, libkineto::ActivityType::CPU_OP, op.name);
            libkineto::GenericTraceActivity &act = *cpu->activities.back();
            act.device = static_cast<int32_t>(getpid());
            act.resource = op.tid;
            act.threadId = op.tid;
            act.startTime = op.start_ns;
            act.endTime = op.end_ns;
            act.id = static_cast<int32_t>(op.correlation);
            act.addMetadata("Op id", op.workload_id);
            if (!g_user_annotations)
                continue;
            cpu->emplace_activity(cpu->span, libkineto::ActivityType::USER_ANNOTATION, "user " + op.name);
            libkineto::GenericTraceActivity &user = *cpu->activities.back();
            user.device = static_cast<int32_t>(getpid());
            user.resource = op.tid;
            user.threadId = op.tid;
            user.startTime = op.start_ns;
            user.endTime = op.end_ns;
            user.id = static_cast<int32_t>(op.correlation + kUserIdOffset);
        }
    }
    libkineto::api().activityProfiler().transferCpuTrace(std::move(cpu));
    g_recording = false;
    std::unique_ptr<libkineto::ActivityTraceInterface> trace = libkineto::api().activityProfiler().stopTrace();
    for (long i = 0; i < ops_outside && run_workload; i++)
        if (run_workload() != 0)
            fail("the workload failed after the trace");
    if (!trace)
        fail("stopTrace returned no trace");
    trace->save(out);
    std::printf("kineto_host: %zu ops, trace %s\n", nops, out);
    return 0;
}
