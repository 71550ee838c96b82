/* bench_kineto.cpp: devtrace-bench-kineto, what the Kineto adaptor (kineto/devtrace_kineto.cpp)
 * adds over devtrace's own path, as ratios measured in one run (docs/performance.md):
 *
 *   devtrace-bench-kineto EMULATOR.so WORKLOAD.wl [OPS] [RUNS]   (DEVTRACE_BACKEND and
 *   DEVTRACE_<NAME>_LIBRARY select the emulated backend, as in tests/kineto)
 *
 * per op: libkineto's pushCorrelationId + popCorrelationId with devtrace's child session,
 *   less the same without a child profiler (the adaptor's added cost), against
 *   devtrace_push_external + devtrace_pop_external on a session (devtrace's own path);
 * per event: the session's processTrace into a logger that keeps nothing (the drain passes,
 *   one GenericTraceActivity per event with its args and flows), against devtrace_write_chrome
 *   of a session with the same events (devtrace's own path from events to a trace).
 * The target: the per-event ratio within 1.10. Figures are printed as "bench: NAME = VALUE UNIT". */
#include <libkineto.h>
#include <output_base.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "devtrace.h"
#include "devtrace/kineto.hpp"

namespace
{

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class NullLogger final : public libkineto::ActivityLogger
{
  public:
    size_t activities = 0;
    void handleDeviceInfo(const libkineto::DeviceInfo &, int64_t) override
    {
    }
    void handleResourceInfo(const libkineto::ResourceInfo &, int64_t) override
    {
    }
    void handleOverheadInfo(const OverheadInfo &, int64_t) override
    {
    }
    void handleTraceSpan(const libkineto::TraceSpan &) override
    {
    }
    void handleActivity(const libkineto::ITraceActivity &) override
    {
        activities++;
    }
    void handleGenericActivity(const libkineto::GenericTraceActivity &) override
    {
        activities++;
    }
    void handleTraceStart(const std::unordered_map<std::string, std::string> &, const std::string &) override
    {
    }
    void finalizeMemoryTrace(const std::string &, const libkineto::Config &) override
    {
    }
    void finalizeTrace(const libkineto::Config &, std::unique_ptr<libkineto::ActivityBuffers>, int64_t) override
    {
    }
};

int (*g_run)(void);

/* The workload's op statements: nothing to do here (the per-op figures are taken apart). */
extern "C" __attribute__((visibility("default"))) int devtrace_annotate_push(const char *, uint64_t)
{
    return 0;
}
extern "C" __attribute__((visibility("default"))) int devtrace_annotate_pop(void)
{
    return 0;
}

const std::set<libkineto::ActivityType> kTypes = {
    libkineto::ActivityType::CPU_OP,
    libkineto::ActivityType::EXTERNAL_CORRELATION,
    libkineto::ActivityType::CUDA_RUNTIME,
    libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
    libkineto::ActivityType::GPU_MEMCPY,
    libkineto::ActivityType::GPU_MEMSET,
    libkineto::ActivityType::CONCURRENT_KERNEL,
};

double kineto_ops(long ops)
{
    auto &p = libkineto::api().activityProfiler();
    p.prepareTrace(kTypes);
    p.startTrace();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < ops; i++) {
        p.pushCorrelationId(static_cast<uint64_t>(i) + 1);
        p.popCorrelationId();
    }
    double t = seconds_since(t0);
    p.stopTrace();
    return t;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3 || std::strcmp(argv[1], "--help") == 0) {
        std::printf("usage: devtrace-bench-kineto EMULATOR.so WORKLOAD.wl [OPS] [RUNS]\n");
        return argc < 3 ? 2 : 0;
    }
    long ops = argc > 3 ? std::atol(argv[3]) : 200000;
    int runs = argc > 4 ? std::atoi(argv[4]) : 100;
    void *emu = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!emu) {
        std::fprintf(stderr, "devtrace-bench-kineto: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    auto load = reinterpret_cast<int (*)(const char *, char *, size_t)>(dlsym(emu, "devemu_load_workload"));
    g_run = reinterpret_cast<int (*)(void)>(dlsym(emu, "devemu_run"));
    char err[512] = "";
    if (!load || !g_run || load(argv[2], err, sizeof err) != 0) {
        std::fprintf(stderr, "devtrace-bench-kineto: %s: not an emulator or a bad workload: %s\n", argv[1], err);
        return 1;
    }
    libkineto_init(false, true);
    libkineto::api().suppressLogMessages();
    libkineto::api().initProfilerIfRegistered();

    /* Per op. */
    double without = kineto_ops(ops);
    devtrace::register_kineto_profiler(); /* Kineto is initialised: added at once */
    double with = kineto_ops(ops);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    devtrace_session *s = devtrace_open(&cfg, nullptr);
    devtrace_start(s);
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < ops; i++) {
        uint64_t id;
        devtrace_push_external(s, static_cast<uint64_t>(i) + 1);
        devtrace_pop_external(s, &id);
    }
    double own = seconds_since(t0);
    devtrace_stop(s);
    devtrace_close(s);
    double added_op = (with - without) / static_cast<double>(ops) * 1e9;
    double own_op = own / static_cast<double>(ops) * 1e9;
    std::printf("bench: kineto.op_added_ns = %.1f ns (Kineto push+pop %.1f ns without devtrace)\n", added_op,
                without / static_cast<double>(ops) * 1e9);
    std::printf("bench: kineto.op_devtrace_own_ns = %.1f ns\n", own_op);
    std::printf("bench: kineto.op_ratio = %.3f (the adaptor's added cost / devtrace's own)\n", added_op / own_op);

    /* Per event: the same workload RUNS times in each session. */
    s = devtrace_open(&cfg, nullptr);
    devtrace_start(s);
    for (int i = 0; i < runs; i++)
        g_run();
    devtrace_stop(s);
    size_t events = 0;
    devtrace_drain_events(s, nullptr, nullptr, &events, nullptr); /* finalised outside the timing, as below */
    std::string path = "/tmp/devtrace-bench-kineto-" + std::to_string(getpid()) + ".json";
    t0 = std::chrono::steady_clock::now();
    devtrace_write_chrome(s, path.c_str(), nullptr);
    double own_write = seconds_since(t0);
    std::remove(path.c_str());
    devtrace_close(s);

    devtrace::KinetoProfiler profiler;
    libkineto::Config config;
    auto session = profiler.configure(kTypes, config);
    session->start();
    for (int i = 0; i < runs; i++)
        g_run();
    session->stop();
    session->getMetadata(); /* finalises (outside the timing, as above) */
    NullLogger logger;
    t0 = std::chrono::steady_clock::now();
    session->processTrace(
        logger, [](int32_t) -> const libkineto::ITraceActivity * { return nullptr; }, 0, 0);
    double adaptor = seconds_since(t0);
    auto buffer = session->getTraceBuffer();
    double own_ev = own_write / static_cast<double>(events) * 1e9;
    double adaptor_ev = adaptor / static_cast<double>(logger.activities ? logger.activities : 1) * 1e9;
    std::printf("bench: kineto.events = %zu (devtrace), %zu (logged by the adaptor)\n", events, logger.activities);
    std::printf("bench: kineto.event_adaptor_ns = %.1f ns (processTrace per event)\n", adaptor_ev);
    std::printf("bench: kineto.event_devtrace_own_ns = %.1f ns (devtrace_write_chrome per event)\n", own_ev);
    std::printf("bench: kineto.event_ratio = %.3f (target <= 1.10)\n", adaptor_ev / own_ev);
    return 0;
}
