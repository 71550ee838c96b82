/* devtrace/kineto.hpp: devtrace as a libkineto child profiler (docs/kineto.md).
 *
 * devtrace::KinetoProfiler is a libkineto::IActivityProfiler: libkineto (PyTorch's profiler
 * library) creates one session of it per trace, forwards torch's op correlation ids to it, and
 * writes the device events it logs into its own trace (torch.profiler's JSON, TensorBoard,
 * key_averages()). Underneath, a devtrace session records through whichever backend devtrace
 * selects (DEVTRACE_BACKEND, else auto), over the public C API only (devtrace.h).
 *
 * Two ways in:
 *  - a PrivateUse1 plugin compiles kineto/devtrace_kineto.cpp with its own torch's libkineto
 *    headers (this header includes <IActivityProfiler.h>: put torch's kineto include folder on
 *    the include path) and registers with one line:
 *        REGISTER_PRIVATEUSE1_PROFILER(devtrace::KinetoProfiler)
 *    or with devtrace::register_kineto_profiler() (libkineto::api().registerProfilerFactory);
 *  - libdevtrace_kineto.so, built without libkineto, whose C entry point
 *        extern "C" int devtrace_kineto_register(void);
 *    registers the factory with the libkineto of the process that loaded it (devtrace.kineto in
 *    Python loads it into a PyTorch process and calls it).
 * Register before the first trace is prepared (libkineto configures its child profilers then). */
#ifndef DEVTRACE_KINETO_HPP
#define DEVTRACE_KINETO_HPP

#include <IActivityProfiler.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace devtrace
{

class KinetoProfiler : public libkineto::IActivityProfiler
{
  public:
    KinetoProfiler();
    ~KinetoProfiler() override;

    // "devtrace"
    [[nodiscard]] const std::string &name() const override;
    // kernels, copies, sets, both runtime categories, external correlation, GPU user annotations
    [[nodiscard]] const std::set<libkineto::ActivityType> &availableActivities() const override;

    // A session recording only the kinds asked for; nullptr when none of them is devtrace's
    // (a CPU-only trace), as libkineto expects from a child profiler with nothing to do.
    std::unique_ptr<libkineto::IActivityProfilerSession> configure(
        const std::set<libkineto::ActivityType> &activity_types, const libkineto::Config &config) override;
    // The same, for the window [ts_ms, ts_ms + duration_ms] (ms since the epoch, system clock):
    // a window that starts after this call (an on-demand trace) also bounds the events logged.
    std::unique_ptr<libkineto::IActivityProfilerSession> configure(
        int64_t ts_ms, int64_t duration_ms, const std::set<libkineto::ActivityType> &activity_types,
        const libkineto::Config &config) override;
};

// Registers a factory of KinetoProfiler with libkineto::api(); a second call does nothing.
// Returns true when this call registered it.
bool register_kineto_profiler();

} // namespace devtrace

#endif // DEVTRACE_KINETO_HPP
