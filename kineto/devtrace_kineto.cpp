/* devtrace_kineto.cpp: devtrace::KinetoProfiler, devtrace as a libkineto child profiler
 * (include/devtrace/kineto.hpp says how a program takes it in; docs/kineto.md the mapping).
 *
 * Written over devtrace's public C API only (devtrace.h) and libkineto's public headers, so a
 * PrivateUse1 plugin compiles this one file against its own torch's libkineto. The mapping:
 *  - configure: the activity types asked for become the kinds recorded; a devtrace session is
 *    opened (backend from $DEVTRACE_BACKEND, else auto; an unavailable one says why);
 *  - start/stop: devtrace_start/devtrace_stop; push/popCorrelationId: devtrace's external
 *    correlation (torch's op id), so device work carries the op that launched it;
 *  - processTrace: one GenericTraceActivity per drained event, with the args Kineto's own CUPTI
 *    path writes for the same record, the op link (linked activity: "External id") and the
 *    runtime-to-device flows (ac2g), inside Kineto's capture window;
 *  - getDeviceInfo, getResourceInfos (one per stream), getDeviceProperties (devtrace's
 *    deviceProperties), getMetadata ("devtrace": backend, validation, every loss count, the
 *    window, the notes), errors() (the unavailable reason, losses).
 * Timestamps: devtrace gives host CLOCK_REALTIME ns, the clock (system_clock, ns since the
 * epoch) of libkineto's capture window and of torch's CPU ops. */
#include "devtrace/kineto.hpp"

#include <libkineto.h>
#include <output_base.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "devtrace.h"

namespace devtrace
{
namespace
{

using libkineto::ActivityType;

const std::string kName = "devtrace";

/* A JSON string for the trace's metadata. libkineto's writer turns every backslash in metadata
 * into a slash, so nothing is escaped with one: a quote becomes ', a control character a space. */
void put_json_string(std::string &out, const char *s)
{
    out += '"';
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(s ? s : ""); *p; p++) {
        if (*p == '"')
            out += '\'';
        else if (*p == '\\')
            out += '/';
        else if (*p < 0x20)
            out += ' ';
        else
            out += static_cast<char>(*p);
    }
    out += '"';
}

void put_key_u64(std::string &out, const char *key, uint64_t v, bool first = false)
{
    if (!first)
        out += ", ";
    put_json_string(out, key);
    out += ": ";
    out += std::to_string(v);
}

/* Kineto's names for a copy (CUPTI's copy kind and memory kinds), as devtrace's sink writes them. */
const char *memcpy_name(uint32_t direction)
{
    switch (direction) {
    case DEVTRACE_COPY_HTOD:
        return "Memcpy HtoD (Pageable -> Device)";
    case DEVTRACE_COPY_DTOH:
        return "Memcpy DtoH (Device -> Pageable)";
    case DEVTRACE_COPY_DTOD:
        return "Memcpy DtoD (Device -> Device)";
    case DEVTRACE_COPY_HTOH:
        return "Memcpy HtoH (Pageable -> Pageable)";
    default:
        return "Memcpy (Unknown)";
    }
}

std::string dim3(const int32_t *d)
{
    return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

/* The devtrace kinds and the Kineto activity type of each (the runtime's is the backend's). */
struct Kinds {
    bool kernel = false, memcpy = false, memset = false, external = false;
    bool cuda_runtime = false, privateuse1_runtime = false;

    explicit Kinds(const std::set<ActivityType> &types)
    {
        kernel = types.count(ActivityType::CONCURRENT_KERNEL) != 0;
        memcpy = types.count(ActivityType::GPU_MEMCPY) != 0;
        memset = types.count(ActivityType::GPU_MEMSET) != 0;
        external = types.count(ActivityType::EXTERNAL_CORRELATION) != 0;
        cuda_runtime = types.count(ActivityType::CUDA_RUNTIME) != 0;
        privateuse1_runtime = types.count(ActivityType::PRIVATEUSE1_RUNTIME) != 0;
    }
    /* devtrace's kinds: both runtime types ask for runtime calls (which one is logged is the
     * backend's category, known once the session is open). */
    [[nodiscard]] uint32_t mask() const
    {
        uint32_t m = 0;
        if (kernel)
            m |= DEVTRACE_KIND_BIT(DEVTRACE_KIND_KERNEL);
        if (memcpy)
            m |= DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMCPY);
        if (memset)
            m |= DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMSET);
        if (cuda_runtime || privateuse1_runtime)
            m |= DEVTRACE_KIND_BIT(DEVTRACE_KIND_RUNTIME);
        if (external)
            m |= DEVTRACE_KIND_BIT(DEVTRACE_KIND_EXTCORR);
        return m;
    }
    [[nodiscard]] bool any() const
    {
        return kernel || memcpy || memset || cuda_runtime || privateuse1_runtime;
    }
};

class KinetoSession final : public libkineto::IActivityProfilerSession
{
  public:
    KinetoSession(const Kinds &kinds, int64_t requested_ts_ms, int64_t requested_duration_ms)
        : kinds_(kinds), requested_ts_ms_(requested_ts_ms), requested_duration_ms_(requested_duration_ms)
    {
        devtrace_config cfg;
        devtrace_config_init(&cfg);
        cfg.kinds = kinds_.mask();
        devtrace_error err;
        std::memset(&err, 0, sizeof err);
        s_ = devtrace_open(&cfg, &err);
        if (!s_) {
            errors_.push_back(std::string("devtrace: could not open a session: ") + err.message);
            return;
        }
        const char *why = devtrace_unavailable_reason(s_);
        if (why && *why)
            errors_.push_back(std::string("devtrace: no device is traced: ") + why);
        const char *cat = devtrace_runtime_category(s_);
        runtime_type_ = cat && std::strcmp(cat, "cuda_runtime") == 0 ? ActivityType::CUDA_RUNTIME
                                                                     : ActivityType::PRIVATEUSE1_RUNTIME;
        log_runtime_ = runtime_type_ == ActivityType::CUDA_RUNTIME ? kinds_.cuda_runtime : kinds_.privateuse1_runtime;
    }

    ~KinetoSession() override
    {
        devtrace_close(s_);
    }

    void start() override
    {
        if (!s_)
            return;
        devtrace_error err;
        std::memset(&err, 0, sizeof err);
        if (devtrace_start_with_error(s_, &err) != 0)
            errors_.push_back(std::string("devtrace: start: ") + err.message);
        else
            status_ = libkineto::TraceStatus::RECORDING;
    }

    void stop() override
    {
        if (!s_)
            return;
        devtrace_error err;
        std::memset(&err, 0, sizeof err);
        if (devtrace_stop_with_error(s_, &err) != 0)
            errors_.push_back(std::string("devtrace: stop: ") + err.message);
        status_ = libkineto::TraceStatus::PROCESSING;
    }

    void pushCorrelationId(uint64_t id) override
    {
        if (s_ && kinds_.external)
            devtrace_push_external(s_, id);
    }

    void popCorrelationId() override
    {
        uint64_t id;
        if (s_ && kinds_.external)
            devtrace_pop_external(s_, &id);
    }

    void pushUserCorrelationId(uint64_t id) override
    {
        if (s_)
            devtrace_push_user_correlation(s_, id);
    }

    void popUserCorrelationId() override
    {
        uint64_t id;
        if (s_)
            devtrace_pop_user_correlation(s_, &id);
    }

    std::vector<std::string> errors() override
    {
        std::vector<std::string> all = errors_;
        if (outside_kineto_window_)
            all.push_back("devtrace: " + std::to_string(outside_kineto_window_) +
                          " event(s) outside Kineto's capture window were not logged");
        return all;
    }

    void processTrace(libkineto::ActivityLogger &logger) override
    {
        processTrace(logger, nullptr, 0, 0);
    }

    void processTrace(libkineto::ActivityLogger &logger, libkineto::getLinkedActivityCallback getLinkedActivity,
                      int64_t startTime, int64_t endTime) override;

    std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override;
    std::vector<libkineto::ResourceInfo> getResourceInfos() override;

    std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override
    {
        return std::move(buffer_);
    }

    std::string getDeviceProperties() override;
    std::unordered_map<std::string, std::string> getMetadata() override;

  private:
    struct Drained {
        const devtrace_event *ev; /* borrowed from the drain: copied into events */
    };

    /* Finalises the session once (devtrace's window filter, correlation, names). */
    bool finalize()
    {
        if (finalized_)
            return drained_ok_;
        finalized_ = true;
        if (!s_)
            return false;
        devtrace_error err;
        std::memset(&err, 0, sizeof err);
        size_t count = 0;
        drained_ok_ = devtrace_drain_events(s_, nullptr, nullptr, &count, &err) == 0;
        if (!drained_ok_ && err.code != DEVTRACE_ESTATE)
            errors_.push_back(std::string("devtrace: drain: ") + err.message);
        return drained_ok_;
    }

    bool wanted(const devtrace_event &ev) const
    {
        switch (ev.kind) {
        case DEVTRACE_KIND_KERNEL:
            return kinds_.kernel;
        case DEVTRACE_KIND_MEMCPY:
            return kinds_.memcpy;
        case DEVTRACE_KIND_MEMSET:
            return kinds_.memset;
        case DEVTRACE_KIND_RUNTIME:
            return log_runtime_;
        default:
            return false;
        }
    }

    void log_event(const devtrace_event &ev, const char *name, bool flow);
    void log_user_spans();

    /* The device work under one user correlation id on one stream (Kineto's GPU user
     * annotation: the span from its first start to its last end). */
    struct UserSpan {
        uint32_t device, stream;
        uint64_t user_id;
        int64_t start, end;
    };
    std::vector<UserSpan> user_spans_;

    /* Kineto's flow ids are 32 bits: the correlation id when every one fits, else a number
     * per correlation (MSPTI's ids are 64 bits). */
    uint32_t flow_id(uint64_t correlation)
    {
        if (max_correlation_ <= UINT32_MAX)
            return static_cast<uint32_t>(correlation);
        auto [it, added] = flow_ids_.emplace(correlation, static_cast<uint32_t>(flow_ids_.size() + 1));
        (void)added;
        return it->second;
    }

    Kinds kinds_;
    int64_t requested_ts_ms_, requested_duration_ms_; /* the timed configure's window; -1: untimed */
    devtrace_session *s_ = nullptr;
    ActivityType runtime_type_ = ActivityType::PRIVATEUSE1_RUNTIME;
    bool log_runtime_ = false;
    bool finalized_ = false, drained_ok_ = false;
    std::vector<std::string> errors_;
    uint64_t outside_kineto_window_ = 0;
    std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
    libkineto::ActivityLogger *logger_ = nullptr;
    libkineto::getLinkedActivityCallback linked_;
    std::unordered_set<uint64_t> device_correlations_, runtime_correlations_;
    uint64_t max_correlation_ = 0;
    std::unordered_map<uint64_t, uint32_t> flow_ids_;
    std::vector<std::pair<uint32_t, uint32_t>> streams_; /* (device, stream), in first-seen order */
};

/* What processTrace's passes over the drain share. */
struct Pass {
    KinetoSession *session;
    int64_t lo, hi; /* the window events must lie in */
    int what;       /* 0: collect correlations, 1: log */
};

void KinetoSession::log_event(const devtrace_event &ev, const char *name, bool flow)
{
    ActivityType type;
    std::string label;
    switch (ev.kind) {
    case DEVTRACE_KIND_KERNEL:
        type = ActivityType::CONCURRENT_KERNEL;
        label = name ? name : "";
        break;
    case DEVTRACE_KIND_MEMCPY:
        type = ActivityType::GPU_MEMCPY;
        label = memcpy_name(ev.u.memcpy.direction);
        break;
    case DEVTRACE_KIND_MEMSET:
        type = ActivityType::GPU_MEMSET;
        label = "Memset (Device)";
        break;
    default:
        type = runtime_type_;
        label = name ? name : "";
        break;
    }
    buffer_->emplace_activity(buffer_->span, type, label);
    libkineto::GenericTraceActivity &act = *buffer_->activities.back();
    act.startTime = static_cast<int64_t>(ev.start_ns);
    act.endTime = static_cast<int64_t>(ev.end_ns);
    act.id = static_cast<int32_t>(ev.correlation);
    act.device = static_cast<int32_t>(ev.device);
    act.resource = ev.stream;
    act.threadId = ev.kind == DEVTRACE_KIND_RUNTIME ? static_cast<int32_t>(ev.stream) : 0;
    if ((ev.flags & DEVTRACE_EVENT_HAS_EXTERNAL) && linked_)
        act.linked = linked_(static_cast<int32_t>(ev.external_id));
    if (flow && ev.correlation) {
        act.flow.id = flow_id(ev.correlation);
        act.flow.type = libkineto::kLinkAsyncCpuGpu;
        act.flow.start = ev.kind == DEVTRACE_KIND_RUNTIME ? 1 : 0;
    }
    if (ev.kind == DEVTRACE_KIND_RUNTIME) {
        if (ev.flags & DEVTRACE_EVENT_HAS_CBID)
            act.addMetadata("cbid", ev.u.runtime.cbid);
        act.addMetadata("correlation", ev.correlation);
    } else if (ev.kind == DEVTRACE_KIND_KERNEL) {
        uint64_t queued = (ev.flags & DEVTRACE_EVENT_HAS_QUEUED) && ev.u.kernel.queued_ns <= ev.start_ns
                              ? ev.start_ns - ev.u.kernel.queued_ns
                              : 0;
        act.addMetadata("queued", queued);
        act.addMetadata("device", ev.device);
        act.addMetadata("context", ev.context);
        act.addMetadata("stream", ev.stream);
        act.addMetadata("correlation", ev.correlation);
        if (ev.flags & DEVTRACE_EVENT_HAS_REGS)
            act.addMetadata("registers per thread", ev.u.kernel.registers_per_thread);
        if (ev.flags & (DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED))
            act.addMetadata("shared memory",
                            static_cast<uint64_t>(ev.u.kernel.static_shared) + ev.u.kernel.dynamic_shared);
        if (ev.flags & DEVTRACE_EVENT_HAS_LAUNCH) {
            act.addMetadata("grid", dim3(ev.u.kernel.grid));
            act.addMetadata("block", dim3(ev.u.kernel.block));
        }
        devtrace_occupancy occ;
        std::memset(&occ, 0, sizeof occ);
        occ.size = sizeof occ;
        if (devtrace_kernel_occupancy(s_, &ev, &occ) == 0) {
            char text[64];
            std::snprintf(text, sizeof text, "%.6f", occ.blocks_per_sm);
            act.addMetadata("blocks per SM", text);
            std::snprintf(text, sizeof text, "%.6f", occ.warps_per_sm);
            act.addMetadata("warps per SM", text);
            act.addMetadata("est. achieved occupancy %", static_cast<uint64_t>(occ.est_achieved_occupancy_pct + 0.5));
        }
    } else {
        uint64_t bytes = ev.kind == DEVTRACE_KIND_MEMCPY ? ev.u.memcpy.bytes : ev.u.memset.bytes;
        act.addMetadata("device", ev.device);
        act.addMetadata("context", ev.context);
        act.addMetadata("stream", ev.stream);
        act.addMetadata("correlation", ev.correlation);
        act.addMetadata("bytes", bytes);
        uint64_t dur = ev.end_ns > ev.start_ns ? ev.end_ns - ev.start_ns : 0;
        if (dur) {
            char text[64];
            std::snprintf(text, sizeof text, "%.6f", static_cast<double>(bytes) / static_cast<double>(dur));
            act.addMetadata("memory bandwidth (GB/s)", text);
        }
    }
    if (ev.kind != DEVTRACE_KIND_RUNTIME && (ev.flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL)) {
        auto span = std::find_if(user_spans_.begin(), user_spans_.end(), [&ev](const UserSpan &u) {
            return u.device == ev.device && u.stream == ev.stream && u.user_id == ev.user_external_id;
        });
        if (span == user_spans_.end())
            user_spans_.push_back(UserSpan{ev.device, ev.stream, ev.user_external_id, act.startTime, act.endTime});
        else {
            span->start = std::min(span->start, act.startTime);
            span->end = std::max(span->end, act.endTime);
        }
    }
    if (ev.kind != DEVTRACE_KIND_RUNTIME) {
        std::pair<uint32_t, uint32_t> key(ev.device, ev.stream);
        if (std::find(streams_.begin(), streams_.end(), key) == streams_.end())
            streams_.push_back(key);
    }
    act.log(*logger_);
}

void KinetoSession::log_user_spans()
{
    /* As Kineto's CUPTI path does: a span named after the user annotation (the CPU activity
     * of the user correlation id), on each stream its device work ran on. */
    for (const UserSpan &u : user_spans_) {
        const libkineto::ITraceActivity *cpu = linked_ ? linked_(static_cast<int32_t>(u.user_id)) : nullptr;
        if (!cpu)
            continue;
        buffer_->emplace_activity(buffer_->span, ActivityType::GPU_USER_ANNOTATION, cpu->name());
        libkineto::GenericTraceActivity &act = *buffer_->activities.back();
        act.startTime = u.start;
        act.endTime = u.end;
        act.device = static_cast<int32_t>(u.device);
        act.resource = u.stream;
        act.id = static_cast<int32_t>(cpu->correlationId());
        act.linked = cpu;
        act.log(*logger_);
    }
}

void KinetoSession::processTrace(libkineto::ActivityLogger &logger,
                                 libkineto::getLinkedActivityCallback getLinkedActivity, int64_t startTime,
                                 int64_t endTime)
{
    if (!finalize())
        return;
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(startTime, endTime, "devtrace");
    buffer_->gpuOpCount = -1;
    logger_ = &logger;
    linked_ = std::move(getLinkedActivity);
    /* Kineto's capture window (its start and stop, which also start and stop this session). */
    int64_t lo = startTime, hi = endTime > 0 ? endTime : INT64_MAX;
    Pass pass{this, lo, hi, 0};
    /* Pass 0: which correlations have both halves logged (a flow only for a pair). */
    auto visit = [](const devtrace_event *ev, const char *name, void *user) {
        Pass *p = static_cast<Pass *>(user);
        KinetoSession *self = p->session;
        if (!self->wanted(*ev))
            return;
        if (static_cast<int64_t>(ev->start_ns) < p->lo || static_cast<int64_t>(ev->end_ns) > p->hi) {
            if (p->what == 1)
                self->outside_kineto_window_++;
            return;
        }
        if (p->what == 0) {
            self->max_correlation_ = std::max(self->max_correlation_, ev->correlation);
            (ev->kind == DEVTRACE_KIND_RUNTIME ? self->runtime_correlations_ : self->device_correlations_)
                .insert(ev->correlation);
            return;
        }
        bool flow = ev->kind == DEVTRACE_KIND_RUNTIME ? self->device_correlations_.count(ev->correlation) != 0
                                                      : self->runtime_correlations_.count(ev->correlation) != 0;
        self->log_event(*ev, name, flow);
    };
    devtrace_drain_events(s_, visit, &pass, nullptr, nullptr);
    pass.what = 1;
    devtrace_drain_events(s_, visit, &pass, nullptr, nullptr);
    log_user_spans();
    logger_ = nullptr;
    status_ = libkineto::TraceStatus::READY;
}

std::unique_ptr<libkineto::DeviceInfo> KinetoSession::getDeviceInfo()
{
    /* One device: named here. Several: nullptr, so Kineto names its GPU lanes itself. */
    if (!s_ || devtrace_device_count(s_) != 1)
        return nullptr;
    devtrace_device d;
    std::memset(&d, 0, sizeof d);
    d.size = sizeof d;
    if (devtrace_device_get(s_, 0, &d) != 0)
        return nullptr;
    return std::unique_ptr<libkineto::DeviceInfo>(
        new libkineto::DeviceInfo{d.id, d.id + 0x1000000, std::string(d.name), "GPU " + std::to_string(d.id)});
}

std::vector<libkineto::ResourceInfo> KinetoSession::getResourceInfos()
{
    /* devtrace's stream list (its names), else the streams of the events logged. */
    std::vector<libkineto::ResourceInfo> out;
    int n = s_ ? devtrace_stream_count(s_) : 0;
    for (int i = 0; i < n; i++) {
        devtrace_stream st;
        std::memset(&st, 0, sizeof st);
        st.size = sizeof st;
        if (devtrace_stream_get(s_, i, &st) == 0)
            out.push_back(libkineto::ResourceInfo{st.stream, st.stream, st.device, std::string(st.name)});
    }
    if (!out.empty())
        return out;
    for (const auto &[device, stream] : streams_)
        out.push_back(libkineto::ResourceInfo{stream, stream, device, "stream " + std::to_string(stream)});
    return out;
}

std::string KinetoSession::getDeviceProperties()
{
    std::string out;
    int n = s_ ? devtrace_device_count(s_) : 0;
    for (int i = 0; i < n; i++) {
        devtrace_device d;
        std::memset(&d, 0, sizeof d);
        d.size = sizeof d;
        if (devtrace_device_get(s_, i, &d) != 0)
            continue;
        if (!out.empty())
            out += ",";
        out += "\n    {\"id\": " + std::to_string(d.id) + ", \"name\": ";
        put_json_string(out, d.name);
        put_key_u64(out, "totalGlobalMem", d.total_global_mem);
        const std::pair<const char *, int64_t> fields[] = {
            {"computeMajor", d.compute_major},
            {"computeMinor", d.compute_minor},
            {"maxThreadsPerBlock", d.max_threads_per_block},
            {"maxThreadsPerMultiprocessor", d.max_threads_per_sm},
            {"regsPerBlock", d.regs_per_block},
            {"regsPerMultiprocessor", d.regs_per_sm},
            {"warpSize", d.warp_size},
            {"sharedMemPerBlock", static_cast<int64_t>(d.smem_per_block)},
            {"sharedMemPerMultiprocessor", static_cast<int64_t>(d.smem_per_sm)},
            {"numSms", d.num_sms},
        };
        for (const auto &[key, value] : fields)
            out += std::string(", \"") + key + "\": " + std::to_string(value);
        out += "}";
    }
    return out;
}

std::unordered_map<std::string, std::string> KinetoSession::getMetadata()
{
    std::string m = "{";
    put_json_string(m, "version");
    m += ": ";
    put_json_string(m, devtrace_version());
    if (!s_) {
        m += ", \"unavailable\": ";
        put_json_string(m, errors_.empty() ? "" : errors_.front().c_str());
        m += "}";
        return {{"devtrace", m}};
    }
    finalize();
    m += ", \"backend\": ";
    put_json_string(m, devtrace_backend_name(s_));
    m += ", \"validation\": ";
    put_json_string(m, devtrace_validation(s_));
    const char *why = devtrace_unavailable_reason(s_);
    if (why && *why) {
        m += ", \"unavailable\": ";
        put_json_string(m, why);
    }
    devtrace_stats st;
    std::memset(&st, 0, sizeof st);
    st.size = sizeof st;
    if (devtrace_stats_read(s_, &st) != 0)
        std::memset(&st, 0, sizeof st);
    static const int kinds[] = {DEVTRACE_KIND_KERNEL, DEVTRACE_KIND_MEMCPY, DEVTRACE_KIND_MEMSET, DEVTRACE_KIND_RUNTIME,
                                DEVTRACE_KIND_CPU_OP};
    auto per_kind = [&](const char *key, const uint64_t *v) {
        m += ", ";
        put_json_string(m, key);
        m += ": {";
        bool first = true;
        for (int k : kinds) {
            put_key_u64(m, devtrace_kind_name(k), v[k], first);
            first = false;
        }
        m += "}";
    };
    per_kind("counts", st.events);
    per_kind("out_of_window", st.out_of_window);
    /* Every counter of the stats, as devtrace's own trace writes them (DEVTRACE_STATS_COUNTERS). */
    struct Counter {
        const char *group, *key;
        uint64_t value;
    };
    const Counter counters[] = {
#define DT_KINETO_COUNTER(field, group, key, what) {group, key, st.field},
        DEVTRACE_STATS_COUNTERS(DT_KINETO_COUNTER)
#undef DT_KINETO_COUNTER
    };
    std::vector<std::string> groups_done;
    for (const Counter &c : counters) {
        if (!*c.group) {
            put_key_u64(m, c.key, c.value);
            continue;
        }
        if (std::find(groups_done.begin(), groups_done.end(), c.group) != groups_done.end())
            continue;
        groups_done.emplace_back(c.group);
        m += ", ";
        put_json_string(m, c.group);
        m += ": {";
        bool first = true;
        for (const Counter &g : counters) {
            if (std::strcmp(g.group, c.group) == 0) {
                put_key_u64(m, g.key, g.value, first);
                first = false;
            }
        }
        m += "}";
    }
    uint64_t w0 = 0, w1 = 0;
    devtrace_capture_window(s_, &w0, &w1);
    if (requested_ts_ms_ >= 0)
        m += ", \"requested_window_ms\": [" + std::to_string(requested_ts_ms_) + ", " +
             std::to_string(requested_ts_ms_ + requested_duration_ms_) + "]";
    m += ", \"window\": [" + std::to_string(w0) + ", " + std::to_string(w1) + "], \"notes\": [";
    for (int i = 0; i < devtrace_note_count(s_); i++) {
        if (i)
            m += ", ";
        put_json_string(m, devtrace_note(s_, i));
    }
    m += "]}";
    return {{"devtrace", m}};
}

const std::set<ActivityType> &available()
{
    static const std::set<ActivityType> types = {
        ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,          ActivityType::GPU_MEMSET,
        ActivityType::CUDA_RUNTIME,      ActivityType::PRIVATEUSE1_RUNTIME, ActivityType::EXTERNAL_CORRELATION,
    };
    return types;
}

} // namespace

KinetoProfiler::KinetoProfiler() = default;
KinetoProfiler::~KinetoProfiler() = default;

const std::string &KinetoProfiler::name() const
{
    return kName;
}

const std::set<ActivityType> &KinetoProfiler::availableActivities() const
{
    return available();
}

std::unique_ptr<libkineto::IActivityProfilerSession> KinetoProfiler::configure(
    const std::set<ActivityType> &activity_types, const libkineto::Config &config)
{
    (void)config;
    Kinds kinds(activity_types);
    if (!kinds.any())
        return nullptr;
    return std::make_unique<KinetoSession>(kinds, -1, 0);
}

std::unique_ptr<libkineto::IActivityProfilerSession> KinetoProfiler::configure(
    int64_t ts_ms, int64_t duration_ms, const std::set<ActivityType> &activity_types, const libkineto::Config &config)
{
    (void)config;
    Kinds kinds(activity_types);
    if (!kinds.any())
        return nullptr;
    /* libkineto starts and stops its child sessions when its own window opens and closes (at
     * ts_ms and ts_ms + duration_ms for an on-demand trace; at startTrace and stopTrace for a
     * synchronous one, whose ts_ms is the request's time plus the warm-up), and passes its
     * capture window to processTrace: the session records from start to stop and logs what
     * lies inside that window. The request is kept in the trace's devtrace metadata. */
    return std::make_unique<KinetoSession>(kinds, ts_ms, duration_ms);
}

bool register_kineto_profiler()
{
    static std::once_flag once;
    bool registered = false;
    std::call_once(once, [&registered] {
        libkineto::api().registerProfilerFactory([] { return std::make_unique<KinetoProfiler>(); });
        registered = true;
    });
    return registered;
}

} // namespace devtrace
