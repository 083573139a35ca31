// What Tessera's own code needs of a Runtime beyond its public interface: whether the calling
// thread may use it, and when its workers must be awake.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "machine.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

class Submission;

struct RuntimeControl {
  // Throws RuntimeError when the calling thread cannot use `runtime`: it runs a StarPU task (a
  // request waited on there would wait on its own worker; StarPU forbids unregistering data in a
  // task), or it is a child made by fork() after the runtime started (no StarPU threads there).
  static void check_callable(const Runtime& runtime);

  // A request in flight: the workers run it, unless paused explicitly.
  static void begin_work(Runtime& runtime);
  static void end_work(Runtime& runtime) noexcept;
  // The application thread that waited for a request: process-wide settings the workers may not
  // restore themselves are restored here once the runtime is idle (see WorkerSleep::apply).
  static void work_waited() noexcept;
  // Data going home (tiles unregistered): the workers move it even while paused explicitly.
  static void begin_transfers(Runtime& runtime);
  static void end_transfers(Runtime& runtime) noexcept;
  // The application got a StarPU handle and may submit its own tasks: never pause when idle.
  static void handles_handed_out(Runtime& runtime) noexcept;

  // What is made on a runtime may outlive it; its destructor finishes and releases it while StarPU
  // still runs. A request: its tasks waited for, its temporaries released (the Request keeps its
  // info). Where the list cannot grow (no memory), the request is waited for at once instead.
  static void track(Runtime& runtime, const std::shared_ptr<Submission>& submission) noexcept;
  // Anything else (a TileMatrix): `release` is called by the runtime's destructor unless forget()
  // came first, with whether StarPU still runs (false: it may not be touched; in a forked child,
  // or after the application stopped its own StarPU); its owner calls forget() when it releases
  // itself.
  using Release = std::function<void(bool starpu_running)>;
  static void adopt(Runtime& runtime, const void* owner, Release release);
  static void forget(Runtime& runtime, const void* owner) noexcept;

  // The machine as a plan sees it (src/plan/machine.hpp), taken once per request; every snapshot
  // is counted (tests check that a request plans once).
  static Machine machine(const Runtime& runtime);
  static long machine_snapshots(const Runtime& runtime) noexcept;
  // Says once per runtime that hybrid mode ran on the CPUs alone.
  static void say_hybrid_without_gpu(const Runtime& runtime);
  // A request's plan on stderr, when the runtime is verbose (RuntimeOptions::verbose).
  static void say_plan(const Runtime& runtime, const std::vector<std::string>& reasons);
  // Whether say_plan says anything (RuntimeOptions::verbose).
  static bool says_plans(const Runtime& runtime) noexcept;
};

// Scopes for the calls above.
class TransfersInFlight {
 public:
  explicit TransfersInFlight(Runtime& runtime) : runtime_(runtime) { RuntimeControl::begin_transfers(runtime_); }
  ~TransfersInFlight() { RuntimeControl::end_transfers(runtime_); }
  TransfersInFlight(const TransfersInFlight&) = delete;
  TransfersInFlight& operator=(const TransfersInFlight&) = delete;

 private:
  Runtime& runtime_;
};

}  // namespace tessera::detail
