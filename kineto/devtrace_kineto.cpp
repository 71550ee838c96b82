/* devtrace_kineto.cpp: devtrace::KinetoProfiler, devtrace as a libkineto child profiler
 * (include/devtrace/kineto.hpp says how a program takes it in; docs/kineto.md the mapping).
 *
 * Written over devtrace's public C API only (devtrace.h) and libkineto's public headers, so a
 * PrivateUse1 plugin compiles this one file against its own torch's libkineto. The mapping:
 *  - configure: the activity types asked for become the kinds recorded; a devtrace session is
 *    opened (backend from $DEVTRACE_BACKEND, else auto; an unavailable one says why);
 *  - start/stop: devtrace_start/devtrace_stop; push/popCorrelationId: devtrace's external
 *    correlation (torch's op id), so device work carries the op that launched it;
 *  - processTrace: one activity per drained event (DeviceActivity, an ITraceActivity kept in an
 *    arena the session hands to Kineto with its trace buffer, as Kineto's own CUPTI path keeps
 *    its records), with the args Kineto's own CUPTI path writes for the same record (written
 *    when Kineto's writer asks for them), the op link (linked activity: "External id") and the
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
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devtrace.h"

namespace devtrace
{
namespace
{

using libkineto::ActivityType;

const std::string kName = "devtrace";
const char kUserUnsupported[] = "user correlation is not supported by this libdevtrace (devtrace_push_user_correlation "
                                "returned DEVTRACE_ENOTSUP): the trace has no GPU user annotation spans";

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

/* The devtrace kinds and the Kineto activity type of each (the runtime's is the backend's). */
struct Kinds {
    bool kernel = false, memcpy = false, memset = false, external = false;
    bool cuda_runtime = false, privateuse1_runtime = false;
    bool user_annotation = false; /* GPU_USER_ANNOTATION: the spans of the user correlation ids */

    explicit Kinds(const std::set<ActivityType> &types)
    {
        kernel = types.count(ActivityType::CONCURRENT_KERNEL) != 0;
        memcpy = types.count(ActivityType::GPU_MEMCPY) != 0;
        memset = types.count(ActivityType::GPU_MEMSET) != 0;
        external = types.count(ActivityType::EXTERNAL_CORRELATION) != 0;
        cuda_runtime = types.count(ActivityType::CUDA_RUNTIME) != 0;
        privateuse1_runtime = types.count(ActivityType::PRIVATEUSE1_RUNTIME) != 0;
        user_annotation = types.count(ActivityType::GPU_USER_ANNOTATION) != 0;
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

/* A small append-only text buffer for metadataJson (one allocation, the returned string). */
struct JsonArgs {
    std::string out;
    void key(const char *k)
    {
        if (!out.empty())
            out += ", ";
        out += '"';
        out += k;
        out += "\": ";
    }
    void u64(const char *k, uint64_t v)
    {
        key(k);
        char text[24];
        auto r = std::to_chars(text, text + sizeof text, v);
        out.append(text, static_cast<size_t>(r.ptr - text));
    }
    void i32(int32_t v)
    {
        char text[16];
        auto r = std::to_chars(text, text + sizeof text, v);
        out.append(text, static_cast<size_t>(r.ptr - text));
    }
    /* v with 6 decimals, exactly as "%.6f" writes it: from v * 10^6 rounded, below 10^6 (every
     * figure written so: blocks and warps per SM, GB/s), else and where v * 10^6 lies within
     * 10^-3 of a half (its rounding there could differ from printf's), by printf. */
    void fixed6(const char *k, double v)
    {
        key(k);
        char text[64];
        double x = v * 1e6, frac_part = x - std::floor(x);
        if (!(v >= 0 && v < 1e6) || std::fabs(frac_part - 0.5) < 1e-3) {
            int n = std::snprintf(text, sizeof text, "%.6f", v);
            out.append(text, n > 0 ? static_cast<size_t>(n) : 0);
            return;
        }
        auto micro = static_cast<uint64_t>(std::llround(x));
        auto r = std::to_chars(text, text + sizeof text, micro / 1000000u);
        *r.ptr++ = '.';
        uint64_t frac = micro % 1000000u;
        for (int i = 5; i >= 0; i--, frac /= 10)
            r.ptr[i] = static_cast<char>('0' + frac % 10);
        out.append(text, static_cast<size_t>(r.ptr + 6 - text));
    }
    void dim3(const char *k, const int32_t *d)
    {
        key(k);
        out += '[';
        i32(d[0]);
        out += ", ";
        i32(d[1]);
        out += ", ";
        i32(d[2]);
        out += ']';
    }
};

/* One drained event as libkineto reads it, as Kineto's own CUPTI activities are: an
 * ITraceActivity over the record (a copy of the devtrace_event), logged with handleActivity (a
 * memory logger keeps the pointer, so nothing is copied), its name interned in the arena, its
 * args written by metadataJson() from the event's fields only when a writer asks for them. */
class DeviceActivity final : public libkineto::ITraceActivity
{
  public:
    DeviceActivity(const devtrace_event &event, ActivityType type, const std::string *name)
        : ev_(event), name_(name), type_(type)
    {
    }

    [[nodiscard]] int64_t deviceId() const override
    {
        return ev_.device;
    }
    [[nodiscard]] int64_t resourceId() const override
    {
        return ev_.stream;
    }
    [[nodiscard]] int32_t getThreadId() const override
    {
        return ev_.kind == DEVTRACE_KIND_RUNTIME ? static_cast<int32_t>(ev_.stream) : 0;
    }
    [[nodiscard]] int64_t timestamp() const override
    {
        return static_cast<int64_t>(ev_.start_ns);
    }
    [[nodiscard]] int64_t duration() const override
    {
        return static_cast<int64_t>(ev_.end_ns) - static_cast<int64_t>(ev_.start_ns);
    }
    [[nodiscard]] int64_t correlationId() const override
    {
        return static_cast<int32_t>(ev_.correlation); /* Kineto's activity ids are 32 bits */
    }
    [[nodiscard]] int flowType() const override
    {
        return flow_id_ ? static_cast<int>(libkineto::kLinkAsyncCpuGpu) : 0;
    }
    [[nodiscard]] int64_t flowId() const override
    {
        return flow_id_;
    }
    [[nodiscard]] bool flowStart() const override
    {
        return flow_id_ && ev_.kind == DEVTRACE_KIND_RUNTIME;
    }
    [[nodiscard]] ActivityType type() const override
    {
        return type_;
    }
    [[nodiscard]] const std::string name() const override
    {
        return *name_;
    }
    [[nodiscard]] const libkineto::ITraceActivity *linkedActivity() const override
    {
        return linked_;
    }
    [[nodiscard]] const libkineto::TraceSpan *traceSpan() const override
    {
        return span_;
    }
    void log(libkineto::ActivityLogger &logger) const override
    {
        logger.handleActivity(*this);
    }
    [[nodiscard]] const std::string metadataJson() const override;

    [[nodiscard]] const devtrace_event &event() const
    {
        return ev_;
    }

    /* Set by processTrace before the activity is logged. */
    const libkineto::TraceSpan *span_ = nullptr;
    const libkineto::ITraceActivity *linked_ = nullptr;
    uint32_t flow_id_ = 0;               /* 0: no flow */
    const std::string *level_ = nullptr; /* runtime: the API level's name (interned), or none */
    bool has_occupancy_ = false;
    double blocks_per_sm_ = 0, warps_per_sm_ = 0, occupancy_pct_ = 0;

  private:
    devtrace_event ev_;
    const std::string *name_; /* interned in the arena */
    ActivityType type_;
};

/* The args Kineto's CUPTI path writes for the same record, in its order. */
const std::string DeviceActivity::metadataJson() const
{
    JsonArgs a;
    a.out.reserve(ev_.kind == DEVTRACE_KIND_RUNTIME ? 64 : 320);
    const devtrace_event &ev = ev_;
    if (ev.kind == DEVTRACE_KIND_RUNTIME) {
        if (ev.flags & DEVTRACE_EVENT_HAS_CBID)
            a.u64("cbid", ev.u.runtime.cbid);
        a.u64("correlation", ev.correlation);
        if (level_) {
            a.key("level");
            put_json_string(a.out, level_->c_str());
        }
    } else if (ev.kind == DEVTRACE_KIND_KERNEL) {
        uint64_t queued = (ev.flags & DEVTRACE_EVENT_HAS_QUEUED) && ev.u.kernel.queued_ns <= ev.start_ns
                              ? ev.start_ns - ev.u.kernel.queued_ns
                              : 0;
        a.u64("queued", queued);
        a.u64("device", ev.device);
        a.u64("context", ev.context);
        a.u64("stream", ev.stream);
        a.u64("correlation", ev.correlation);
        if (ev.flags & DEVTRACE_EVENT_HAS_REGS)
            a.u64("registers per thread", ev.u.kernel.registers_per_thread);
        if (ev.flags & (DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED))
            a.u64("shared memory", static_cast<uint64_t>(ev.u.kernel.static_shared) + ev.u.kernel.dynamic_shared);
        if (has_occupancy_) {
            a.fixed6("blocks per SM", blocks_per_sm_);
            a.fixed6("warps per SM", warps_per_sm_);
        }
        if (ev.flags & DEVTRACE_EVENT_HAS_LAUNCH) {
            a.dim3("grid", ev.u.kernel.grid);
            a.dim3("block", ev.u.kernel.block);
        }
        if (has_occupancy_)
            a.u64("est. achieved occupancy %", static_cast<uint64_t>(occupancy_pct_ + 0.5));
    } else {
        uint64_t bytes = ev.kind == DEVTRACE_KIND_MEMCPY ? ev.u.memcpy.bytes : ev.u.memset.bytes;
        a.u64("device", ev.device);
        a.u64("context", ev.context);
        a.u64("stream", ev.stream);
        a.u64("correlation", ev.correlation);
        a.u64("bytes", bytes);
        uint64_t dur = ev.end_ns > ev.start_ns ? ev.end_ns - ev.start_ns : 0;
        if (dur)
            a.fixed6("memory bandwidth (GB/s)", static_cast<double>(bytes) / static_cast<double>(dur));
    }
    return std::move(a.out);
}

/* What one processTrace logged: the activities (their addresses are what a memory logger
 * keeps) and the names they point to. Owned by the session until getTraceBuffer() hands it to
 * Kineto inside the trace buffer (ArenaKeeper), which Kineto keeps with the trace. */
struct Arena {
    std::vector<DeviceActivity> activities; /* not resized once the first one is logged */
    std::deque<std::string> names;          /* stable: activities point to them */
    std::vector<const std::string *> by_name_id;
    const std::string *fixed_names[8] = {};

    const std::string *intern(uint32_t name_id, const char *name)
    {
        if (name_id < by_name_id.size() && by_name_id[name_id])
            return by_name_id[name_id];
        names.emplace_back(name ? name : "");
        if (name_id >= by_name_id.size())
            by_name_id.resize(name_id + 1u + name_id / 2u, nullptr);
        by_name_id[name_id] = &names.back();
        return &names.back();
    }
    /* A name Kineto's CUPTI path makes from the record (copies, sets): slot < 8. */
    const std::string *intern_fixed(unsigned slot, const char *name)
    {
        if (!fixed_names[slot]) {
            names.emplace_back(name);
            fixed_names[slot] = &names.back();
        }
        return fixed_names[slot];
    }
};

/* The arena's owner inside the CpuTraceBuffer getTraceBuffer() returns: libkineto keeps that
 * buffer with the trace it built (ActivityBuffers, moved to the logger by finalizeTrace), so the
 * activities it points to live as long as the trace. Never logged: Kineto processes a child's
 * buffer only after the child's processTrace, to keep it. */
class ArenaKeeper final : public libkineto::GenericTraceActivity
{
  public:
    explicit ArenaKeeper(std::unique_ptr<Arena> arena) : arena_(std::move(arena))
    {
    }

  private:
    std::unique_ptr<Arena> arena_;
};

/* Which correlations have a runtime half and a device half logged, and the flow id of each:
 * an open-addressing table sized once for the events logged (no allocation per event). */
class FlowTable
{
  public:
    explicit FlowTable(size_t events)
    {
        size_t n = 16;
        while (n < events * 2)
            n <<= 1;
        slots_.assign(n, Slot{});
        mask_ = n - 1;
    }
    /* Marks a half (1: runtime, 2: device) of a correlation (not 0). */
    void add(uint64_t correlation, uint8_t half)
    {
        Slot &s = find(correlation);
        if (!s.correlation) {
            s.correlation = correlation;
            s.id = ++assigned_;
        }
        s.halves |= half;
    }
    /* The flow id of a correlation with both halves, else 0; wide: ids beyond 32 bits. */
    uint32_t paired_id(uint64_t correlation, bool wide)
    {
        const Slot &s = find(correlation);
        if (s.correlation != correlation || s.halves != 3)
            return 0;
        return wide ? s.id : static_cast<uint32_t>(correlation);
    }

  private:
    struct Slot {
        uint64_t correlation = 0;
        uint32_t id = 0;
        uint8_t halves = 0;
    };
    Slot &find(uint64_t correlation)
    {
        size_t i = static_cast<size_t>((correlation * 0x9E3779B97F4A7C15ull) >> 17) & mask_;
        while (slots_[i].correlation && slots_[i].correlation != correlation)
            i = (i + 1) & mask_;
        return slots_[i];
    }
    std::vector<Slot> slots_;
    size_t mask_ = 0;
    uint32_t assigned_ = 0;
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
        if (!s_ || user_unsupported_)
            return;
        if (devtrace_push_user_correlation(s_, id) == DEVTRACE_ENOTSUP) {
            /* Said once, in errors() and the trace's devtrace metadata: no user spans. */
            user_unsupported_ = true;
            errors_.push_back(std::string("devtrace: ") + kUserUnsupported);
        }
    }

    void popUserCorrelationId() override
    {
        uint64_t id;
        if (s_ && !user_unsupported_)
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
        if (buffer_ && arena_)
            buffer_->activities.push_back(std::make_unique<ArenaKeeper>(std::move(arena_)));
        return std::move(buffer_);
    }

    std::string getDeviceProperties() override;
    std::unordered_map<std::string, std::string> getMetadata() override;

  private:
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
        drained_count_ = count;
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

    void collect(const devtrace_event &ev, const char *name, int64_t lo, int64_t hi);
    void log_activity(DeviceActivity &act);
    void log_user_spans();

    /* The device work under one user correlation id on one stream (Kineto's GPU user
     * annotation: the span from its first start to its last end). */
    struct UserSpan {
        uint32_t device, stream;
        uint64_t user_id;
        int64_t start, end;
    };
    std::vector<UserSpan> user_spans_;

    Kinds kinds_;
    int64_t requested_ts_ms_, requested_duration_ms_; /* the timed configure's window; -1: untimed */
    devtrace_session *s_ = nullptr;
    ActivityType runtime_type_ = ActivityType::PRIVATEUSE1_RUNTIME;
    bool log_runtime_ = false;
    bool finalized_ = false, drained_ok_ = false;
    bool user_unsupported_ = false; /* devtrace_push_user_correlation said DEVTRACE_ENOTSUP */
    std::vector<std::string> errors_;
    uint64_t outside_kineto_window_ = 0;
    size_t drained_count_ = 0;                                                    /* the events the drain gives */
    size_t event_size_ = std::min(devtrace_event_size(), sizeof(devtrace_event)); /* the library's */
    std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
    std::unique_ptr<Arena> arena_; /* the activities of the last processTrace, until getTraceBuffer */
    libkineto::ActivityLogger *logger_ = nullptr;
    libkineto::getLinkedActivityCallback linked_;
    uint64_t max_correlation_ = 0;
    std::vector<std::pair<uint32_t, uint32_t>> streams_; /* (device, stream), in first-seen order */
    /* The last kernel launch shape and device whose occupancy was computed, and the result. */
    devtrace_event occupancy_key_{};
    bool occupancy_key_set_ = false, occupancy_ok_ = false;
    devtrace_occupancy occupancy_{};
};

/* One drained event: kept (a copy, its name interned) when its kind was asked for and it lies
 * inside Kineto's window [lo, hi], else counted outside the window. */
void KinetoSession::collect(const devtrace_event &ev, const char *name, int64_t lo, int64_t hi)
{
    if (!wanted(ev))
        return;
    if (static_cast<int64_t>(ev.start_ns) < lo || static_cast<int64_t>(ev.end_ns) > hi) {
        outside_kineto_window_++;
        return;
    }
    Arena &arena = *arena_;
    ActivityType type;
    const std::string *label;
    switch (ev.kind) {
    case DEVTRACE_KIND_KERNEL:
        type = ActivityType::CONCURRENT_KERNEL;
        label = arena.intern(ev.name_id, name);
        break;
    case DEVTRACE_KIND_MEMCPY: {
        uint32_t dir = ev.u.memcpy.direction;
        unsigned slot = dir == DEVTRACE_COPY_HTOD   ? 0
                        : dir == DEVTRACE_COPY_DTOH ? 1
                        : dir == DEVTRACE_COPY_DTOD ? 2
                        : dir == DEVTRACE_COPY_HTOH ? 3
                                                    : 4;
        type = ActivityType::GPU_MEMCPY;
        label = arena.intern_fixed(slot, devtrace_memcpy_name(dir));
        break;
    }
    case DEVTRACE_KIND_MEMSET:
        type = ActivityType::GPU_MEMSET;
        label = arena.intern_fixed(5, "Memset (Device)");
        break;
    default:
        type = runtime_type_;
        label = arena.intern(ev.name_id, name);
        break;
    }
    max_correlation_ = std::max(max_correlation_, ev.correlation);
    if (event_size_ == sizeof(devtrace_event)) {
        arena.activities.emplace_back(ev, type, label);
        return;
    }
    devtrace_event copy{}; /* an older library's smaller event: the fields it has */
    std::memcpy(&copy, &ev, event_size_);
    arena.activities.emplace_back(copy, type, label);
}

void KinetoSession::log_activity(DeviceActivity &act)
{
    const devtrace_event &ev = act.event();
    act.span_ = &buffer_->span;
    if ((ev.flags & DEVTRACE_EVENT_HAS_EXTERNAL) && linked_)
        act.linked_ = linked_(static_cast<int32_t>(ev.external_id));
    if (ev.kind == DEVTRACE_KIND_RUNTIME && (ev.flags & DEVTRACE_EVENT_HAS_LEVEL))
        act.level_ = arena_->intern(ev.u.runtime.level_id, devtrace_interned_name(s_, ev.u.runtime.level_id));
    if (ev.kind == DEVTRACE_KIND_KERNEL) {
        /* Consecutive launches of one shape on one device (the common case) share the figures. */
        const auto &k = ev.u.kernel, &p = occupancy_key_.u.kernel;
        bool same = occupancy_key_set_ && occupancy_key_.device == ev.device &&
                    ((occupancy_key_.flags ^ ev.flags) &
                     (DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED | DEVTRACE_EVENT_HAS_LAUNCH)) == 0 &&
                    std::memcmp(k.grid, p.grid, sizeof k.grid) == 0 &&
                    std::memcmp(k.block, p.block, sizeof k.block) == 0 &&
                    k.registers_per_thread == p.registers_per_thread && k.static_shared == p.static_shared &&
                    k.dynamic_shared == p.dynamic_shared;
        if (!same) {
            occupancy_ = devtrace_occupancy{};
            occupancy_.size = sizeof occupancy_;
            occupancy_ok_ = devtrace_kernel_occupancy(s_, &ev, &occupancy_) == 0;
            occupancy_key_ = ev;
            occupancy_key_set_ = true;
        }
        if (occupancy_ok_) {
            act.has_occupancy_ = true;
            act.blocks_per_sm_ = occupancy_.blocks_per_sm;
            act.warps_per_sm_ = occupancy_.warps_per_sm;
            act.occupancy_pct_ = occupancy_.est_achieved_occupancy_pct;
        }
    }
    if (ev.kind != DEVTRACE_KIND_RUNTIME && (ev.flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL)) {
        int64_t start = act.timestamp(), end = start + act.duration();
        auto span = std::find_if(user_spans_.begin(), user_spans_.end(), [&ev](const UserSpan &u) {
            return u.device == ev.device && u.stream == ev.stream && u.user_id == ev.user_external_id;
        });
        if (span == user_spans_.end())
            user_spans_.push_back(UserSpan{ev.device, ev.stream, ev.user_external_id, start, end});
        else {
            span->start = std::min(span->start, start);
            span->end = std::max(span->end, end);
        }
    }
    if (ev.kind != DEVTRACE_KIND_RUNTIME) {
        std::pair<uint32_t, uint32_t> key(ev.device, ev.stream);
        if ((streams_.empty() || streams_.back() != key) &&
            std::find(streams_.begin(), streams_.end(), key) == streams_.end())
            streams_.push_back(key);
    }
    act.log(*logger_);
}

void KinetoSession::log_user_spans()
{
    /* As Kineto's CUPTI path does when GPU_USER_ANNOTATION is asked for: a span named after the
     * user annotation (the CPU activity of the user correlation id), on each stream its device
     * work ran on, from the first start to the last end of that work. */
    if (!kinds_.user_annotation)
        return;
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
    arena_ = std::make_unique<Arena>();
    arena_->activities.reserve(drained_count_);
    logger_ = &logger;
    linked_ = std::move(getLinkedActivity);
    /* Kineto's capture window (its start and stop, which also start and stop this session). */
    struct Window {
        KinetoSession *self;
        int64_t lo, hi;
    } window{this, startTime, endTime > 0 ? endTime : INT64_MAX};
    /* One pass over the drain: the events kept; then which correlations have both halves kept
     * (a flow only for a pair); then each is logged, in the drain's order. */
    devtrace_drain_events(
        s_,
        [](const devtrace_event *ev, const char *name, void *user) {
            auto *w = static_cast<Window *>(user);
            w->self->collect(*ev, name, w->lo, w->hi);
        },
        &window, nullptr, nullptr);
    std::vector<DeviceActivity> &acts = arena_->activities;
    FlowTable flows(acts.size());
    for (const DeviceActivity &act : acts) {
        if (act.event().correlation)
            flows.add(act.event().correlation, act.event().kind == DEVTRACE_KIND_RUNTIME ? 1 : 2);
    }
    /* Kineto's flow ids are 32 bits: the correlation id when every one fits, else a number
     * per correlation (MSPTI's ids are 64 bits). */
    bool wide = max_correlation_ > UINT32_MAX;
    for (DeviceActivity &act : acts) {
        if (act.event().correlation)
            act.flow_id_ = flows.paired_id(act.event().correlation, wide);
        log_activity(act);
    }
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
    if (user_unsupported_) {
        m += ", \"user_correlation\": ";
        put_json_string(m, kUserUnsupported);
    }
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
        ActivityType::CONCURRENT_KERNEL,   ActivityType::GPU_MEMCPY,          ActivityType::GPU_MEMSET,
        ActivityType::CUDA_RUNTIME,        ActivityType::PRIVATEUSE1_RUNTIME, ActivityType::EXTERNAL_CORRELATION,
        ActivityType::GPU_USER_ANNOTATION,
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
