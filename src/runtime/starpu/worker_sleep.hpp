// The process-wide sleep of StarPU's workers (see WorkerSleep) and the scopes that keep them awake.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "process_state.hpp"

namespace tessera::detail {

// Whether StarPU's workers should sleep: paused explicitly (and not moving data home), or idle
// with no request in flight and no runtime wanting them awake. StarPU is one per process and the
// Runtimes Tessera starts share it, so this state is process-wide (worker_sleep()); Tessera holds
// at most one starpu_pause() of its own. Attached runtimes never take part. While work may run
// tasks BLAS is single-threaded; idle, the program has its own thread count back.
//
// Idle workers are paused only after `pause_delay` (RuntimeOptions::pause_after_idle_us) without
// work, by a thread of its own: a program that calls again within it finds the workers awake
// (resuming paused workers costs a call a fraction of a millisecond), and one that does something
// else has its cores back soon after. An explicit pause takes effect at once.
struct WorkerSleep {
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  int awake_votes = 0;      // runtimes whose workers must not sleep when idle
  int explicit_pauses = 0;  // pause_workers() not yet resumed, all runtimes
  int requests = 0;         // requests in flight
  int forced_awake = 0;     // scopes that need the workers whatever else holds (data going home)
  bool starpu_paused = false;
  std::chrono::microseconds pause_delay{0};    // set by the Runtime that starts StarPU
  std::optional<Clock::time_point> pause_due;  // when idle workers are to be paused
  std::condition_variable pause_changed;
  std::thread pauser;  // makes the delayed pauses; stopped before StarPU stops
  bool pauser_stopping = false;
  std::optional<SingleThreadedBlas> blas;  // held while work may run

  bool should_sleep() const;
  // Called with the mutex held after any change.
  void apply();
  void pause_now();
  void schedule_pause();
  void run_pauser();
  // Before StarPU stops: no pause may come after.
  void stop_pauser();
};

// Keeps the workers awake for a scope (work Tessera itself runs on them), paused or idle.
class WorkersAwake {
 public:
  explicit WorkersAwake(bool take_part);
  ~WorkersAwake();
  WorkersAwake(const WorkersAwake&) = delete;
  WorkersAwake& operator=(const WorkersAwake&) = delete;

 private:
  bool take_part_;
};

// The one state of the process. Never destroyed: a forked child, or a program that leaves a
// Runtime alive at exit, holds a pauser that may not be joined then.
WorkerSleep& worker_sleep();

// Runs `change` on the process-wide state under its lock, then pauses or resumes accordingly.
template <class Change>
void change_worker_sleep(Change&& change) {
  WorkerSleep& sleep = worker_sleep();
  std::lock_guard<std::mutex> lock(sleep.mutex);
  change(sleep);
  sleep.apply();
}

}  // namespace tessera::detail
