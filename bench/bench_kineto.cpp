/* bench_kineto.cpp: devtrace-bench-kineto, what the Kineto adaptor (kineto/devtrace_kineto.cpp)
 * adds over devtrace's own path, as ratios measured in one run (docs/performance.md, docs/kineto.md);
 * devtrace-bench's "kineto" group (scripts/bench) runs it and takes its figures:
 *
 *   devtrace-bench-kineto EMULATOR.so WORKLOAD.wl [OPS] [RUNS] [REPS]   (DEVTRACE_BACKEND and
 *   DEVTRACE_<NAME>_LIBRARY select the emulated backend, as in tests/kineto)
 *
 * per op: libkineto's pushCorrelationId + popCorrelationId with devtrace's child session,
 *   less the same without a child profiler (the adaptor's added cost), against
 *   devtrace_push_external + devtrace_pop_external on a session (devtrace's own path);
 * per event: the session's processTrace into a logger that keeps what Kineto's memory logger
 *   keeps (torch's path), then each activity's name and args (metadataJson) asked for as
 *   Kineto's JSON writer asks at save: all of the adaptor's own work for an event, against
 *   devtrace_write_chrome of a session with the same events (devtrace's own path from events
 *   to a trace file); and, as the reference of the adaptor's previous way, the same for one
 *   GenericTraceActivity per event with its args in its map (what processTrace did before).
 * Times are the process's CPU time (every thread: devtrace_write_chrome's workers included),
 * REPS repetitions of each (the two sessions record one after the other: a vendor has one
 * subscriber); the per-event ratio is that of the medians. The target: the per-event ratio at
 * most 1.10. Figures are printed as "bench: NAME = VALUE UNIT". */
#include <libkineto.h>
#include <output_base.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "devtrace.h"
#include "devtrace/kineto.hpp"

namespace
{

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* The process's CPU time in seconds (every thread). */
double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/* A logger that keeps what Kineto's memory logger (torch's path: stopTrace, then save) keeps:
 * the address of an activity logged with handleActivity, a copy of a GenericTraceActivity
 * logged with handleGenericActivity. ask() then asks each activity what Kineto's JSON writer
 * asks of it at save (its name and its args, metadataJson): the adaptor's code, run then. */
class KeepingLogger final : public libkineto::ActivityLogger
{
  public:
    KeepingLogger()
    {
        kept.reserve(100000);
    }
    std::vector<const libkineto::ITraceActivity *> kept;
    std::vector<std::unique_ptr<libkineto::GenericTraceActivity>> copies;
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
    void handleActivity(const libkineto::ITraceActivity &a) override
    {
        kept.push_back(&a);
    }
    void handleGenericActivity(const libkineto::GenericTraceActivity &a) override
    {
        copies.push_back(std::make_unique<libkineto::GenericTraceActivity>(a));
        kept.push_back(copies.back().get());
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
    size_t ask() const
    {
        size_t bytes = 0;
        for (const libkineto::ITraceActivity *a : kept)
            bytes += a->name().size() + a->metadataJson().size();
        return bytes;
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

/* The adaptor's previous way, kept as the reference: two passes over the drain (the
 * correlations of each half in hash sets, then the events), one GenericTraceActivity per
 * event in a CpuTraceBuffer with every arg in its own map entry, logged. */
struct GenericPass {
    libkineto::CpuTraceBuffer *buffer;
    libkineto::ActivityLogger *logger;
    std::unordered_set<uint64_t> device, runtime;
    int what;
};

std::string dim3_text(const int32_t *d)
{
    return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

void generic_visit(const devtrace_event *ev, const char *name, void *user)
{
    auto *p = static_cast<GenericPass *>(user);
    if (ev->kind != DEVTRACE_KIND_KERNEL && ev->kind != DEVTRACE_KIND_MEMCPY && ev->kind != DEVTRACE_KIND_MEMSET &&
        ev->kind != DEVTRACE_KIND_RUNTIME)
        return;
    if (p->what == 0) {
        (ev->kind == DEVTRACE_KIND_RUNTIME ? p->runtime : p->device).insert(ev->correlation);
        return;
    }
    using libkineto::ActivityType;
    ActivityType type = ev->kind == DEVTRACE_KIND_KERNEL   ? ActivityType::CONCURRENT_KERNEL
                        : ev->kind == DEVTRACE_KIND_MEMCPY ? ActivityType::GPU_MEMCPY
                        : ev->kind == DEVTRACE_KIND_MEMSET ? ActivityType::GPU_MEMSET
                                                           : ActivityType::CUDA_RUNTIME;
    p->buffer->emplace_activity(p->buffer->span, type, name ? name : "");
    libkineto::GenericTraceActivity &act = *p->buffer->activities.back();
    act.startTime = static_cast<int64_t>(ev->start_ns);
    act.endTime = static_cast<int64_t>(ev->end_ns);
    act.id = static_cast<int32_t>(ev->correlation);
    act.device = static_cast<int32_t>(ev->device);
    act.resource = ev->stream;
    bool flow = ev->kind == DEVTRACE_KIND_RUNTIME ? p->device.count(ev->correlation) != 0
                                                  : p->runtime.count(ev->correlation) != 0;
    if (flow && ev->correlation) {
        act.flow.id = static_cast<uint32_t>(ev->correlation);
        act.flow.type = libkineto::kLinkAsyncCpuGpu;
        act.flow.start = ev->kind == DEVTRACE_KIND_RUNTIME ? 1 : 0;
    }
    if (ev->kind == DEVTRACE_KIND_RUNTIME) {
        act.addMetadata("cbid", ev->u.runtime.cbid);
        act.addMetadata("correlation", ev->correlation);
    } else if (ev->kind == DEVTRACE_KIND_KERNEL) {
        act.addMetadata("queued", 0);
        act.addMetadata("device", ev->device);
        act.addMetadata("context", ev->context);
        act.addMetadata("stream", ev->stream);
        act.addMetadata("correlation", ev->correlation);
        act.addMetadata("registers per thread", ev->u.kernel.registers_per_thread);
        act.addMetadata("shared memory",
                        static_cast<uint64_t>(ev->u.kernel.static_shared) + ev->u.kernel.dynamic_shared);
        act.addMetadata("grid", dim3_text(ev->u.kernel.grid));
        act.addMetadata("block", dim3_text(ev->u.kernel.block));
        char text[64];
        std::snprintf(text, sizeof text, "%.6f", 1.0);
        act.addMetadata("blocks per SM", text);
        act.addMetadata("warps per SM", text);
        act.addMetadata("est. achieved occupancy %", 100);
    } else {
        uint64_t bytes = ev->kind == DEVTRACE_KIND_MEMCPY ? ev->u.memcpy.bytes : ev->u.memset.bytes;
        act.addMetadata("device", ev->device);
        act.addMetadata("context", ev->context);
        act.addMetadata("stream", ev->stream);
        act.addMetadata("correlation", ev->correlation);
        act.addMetadata("bytes", bytes);
        char text[64];
        std::snprintf(text, sizeof text, "%.6f", 1.0);
        act.addMetadata("memory bandwidth (GB/s)", text);
    }
    act.log(*p->logger);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3 || std::strcmp(argv[1], "--help") == 0) {
        std::printf("usage: devtrace-bench-kineto EMULATOR.so WORKLOAD.wl [OPS] [RUNS] [REPS]\n");
        return argc < 3 ? 2 : 0;
    }
    long ops = argc > 3 ? std::atol(argv[3]) : 200000;
    int runs = argc > 4 ? std::atoi(argv[4]) : 100;
    int reps = argc > 5 ? std::max(1, std::atoi(argv[5])) : 5;
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

    /* Per op (a first short round warms libkineto up, not counted). */
    kineto_ops(ops / 10 + 1);
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

    /* Per event: the same workload RUNS times in each session, each path timed REPS times: first
     * devtrace's own session (its write and the reference), closed (a vendor has one
     * subscriber), then the adaptor's. */
    std::vector<double> own_ns, adaptor_ns, generic_ns, own_wall_ns, adaptor_wall_ns, process_ns;
    s = devtrace_open(&cfg, nullptr);
    devtrace_start(s);
    for (int i = 0; i < runs; i++)
        g_run();
    devtrace_stop(s);
    size_t events = 0;
    devtrace_drain_events(s, nullptr, nullptr, &events, nullptr); /* finalised outside the timing, as below */
    std::string path = "/tmp/devtrace-bench-kineto-" + std::to_string(getpid()) + ".json";
    size_t logged = 0, generic_logged = 0, bytes = 0;
    for (int r = 0; r < reps; r++) {
        auto w0 = std::chrono::steady_clock::now();
        double c0 = cpu_seconds();
        devtrace_write_chrome(s, path.c_str(), nullptr);
        double own_cpu = cpu_seconds() - c0, own_wall = seconds_since(w0);
        std::remove(path.c_str());
        own_ns.push_back(own_cpu / static_cast<double>(events ? events : 1) * 1e9);
        own_wall_ns.push_back(own_wall / static_cast<double>(events ? events : 1) * 1e9);

        KeepingLogger generic_logger;
        auto buffer = std::make_unique<libkineto::CpuTraceBuffer>();
        GenericPass pass{buffer.get(), &generic_logger, {}, {}, 0};
        c0 = cpu_seconds();
        devtrace_drain_events(s, generic_visit, &pass, nullptr, nullptr);
        pass.what = 1;
        devtrace_drain_events(s, generic_visit, &pass, nullptr, nullptr);
        bytes += generic_logger.ask();
        double generic_cpu = cpu_seconds() - c0;
        generic_logged = generic_logger.kept.size();
        buffer.reset();
        generic_ns.push_back(generic_cpu / static_cast<double>(generic_logged ? generic_logged : 1) * 1e9);
    }
    devtrace_close(s);

    devtrace::KinetoProfiler profiler;
    libkineto::Config config;
    auto session = profiler.configure(kTypes, config);
    session->start();
    for (int i = 0; i < runs; i++)
        g_run();
    session->stop();
    session->getMetadata(); /* finalises (outside the timing, as above) */
    const char *slowdown = std::getenv("DEVTRACE_BENCH_SLOWDOWN");
    bool slowed = slowdown && std::strstr(slowdown, "kineto") != nullptr;
    for (int r = 0; r < reps; r++) {
        KeepingLogger logger;
        auto w0 = std::chrono::steady_clock::now();
        double c0 = cpu_seconds();
        session->processTrace(
            logger, [](int32_t) -> const libkineto::ITraceActivity * { return nullptr; }, 0, 0);
        double process_cpu = cpu_seconds() - c0;
        bytes += logger.ask();
        if (slowed) { /* $DEVTRACE_BENCH_SLOWDOWN=kineto: the adaptor's region made 2x slower (bench.h) */
            double spent = cpu_seconds() - c0;
            while (cpu_seconds() - c0 < 2 * spent) {
            }
        }
        double adaptor_cpu = cpu_seconds() - c0, adaptor_wall = seconds_since(w0);
        session->getTraceBuffer(); /* the activities, freed outside the timing */
        logged = logger.kept.size();
        adaptor_ns.push_back(adaptor_cpu / static_cast<double>(logged ? logged : 1) * 1e9);
        adaptor_wall_ns.push_back(adaptor_wall / static_cast<double>(logged ? logged : 1) * 1e9);
        process_ns.push_back(process_cpu / static_cast<double>(logged ? logged : 1) * 1e9);
    }
    session.reset();
    if (logged == 0 || events == 0) {
        std::fprintf(stderr,
                     "devtrace-bench-kineto: nothing to measure: %zu events recorded, %zu logged by the "
                     "adaptor (is DEVTRACE_BACKEND's library the emulator?)\n",
                     events, logged);
        return 1;
    }
    std::printf("bench: kineto.events = %zu (devtrace), %zu (logged by the adaptor), %zu (the reference); %zu bytes of "
                "names and args asked\n",
                events, logged, generic_logged, bytes);
    std::printf("bench: kineto.event_adaptor_ns = %.1f ns (processTrace + name and args per event, CPU time; wall "
                "%.1f ns; processTrace alone %.1f ns)\n",
                median(adaptor_ns), median(adaptor_wall_ns), median(process_ns));
    std::printf("bench: kineto.event_devtrace_own_ns = %.1f ns (devtrace_write_chrome per event, CPU time; wall %.1f "
                "ns)\n",
                median(own_ns), median(own_wall_ns));
    std::printf("bench: kineto.event_generic_ns = %.1f ns (one GenericTraceActivity per event, args in its map: the "
                "previous way)\n",
                median(generic_ns));
    std::printf("bench: kineto.event_generic_ratio = %.3f (the previous way / devtrace's own, medians of %d)\n",
                median(generic_ns) / median(own_ns), reps);
    std::printf("bench: kineto.event_ratio = %.3f (the adaptor / devtrace's own, medians of %d; target <= 1.10)\n",
                median(adaptor_ns) / median(own_ns), reps);
    return 0;
}
