// State shared by the tasks of one request (a factorization, a solve, a conversion): how many are
// still in flight, the LAPACK info they found, and the first error any of them raised. Tasks run
// on runtime worker threads; the request's owner waits on it from its own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <functional>
#include <memory>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "process_state.hpp"
#include "tessera/options.hpp"

namespace tessera {
class Runtime;
class Trace;
}

namespace tessera::detail {

class Submission {
 public:
  Submission() = default;
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  // Opens the submission on `runtime`: until seal() (every task inserted) and the last task's
  // end, the request counts as work in flight and the runtime's workers stay awake.
  void open(Runtime& runtime);
  void seal() noexcept { count_down(); }

  // Called once per task: at submission, and when the task (callback included) has finished.
  void task_submitted() noexcept;
  void task_finished() noexcept;
  // A task that could not be submitted is withdrawn so that wait() does not wait for it.
  void task_withdrawn() noexcept;

  // Tasks finished and submitted so far (Request::progress); a withdrawn task counts as neither.
  Progress progress() const noexcept;

  // Blocks until every submitted task has finished.
  void wait();
  // Blocks until every task submitted so far has finished, while more may still be inserted (the
  // seal outstanding).
  void wait_for_submitted();
  // `count` doubles that live as long as this submission (results its tasks write).
  double* slots(int count);
  // Blocks until every submitted task has finished or `timeout` has passed; returns done().
  bool wait_for(std::chrono::nanoseconds timeout);
  bool done() const noexcept;

  // A leading minor that is not positive definite, at global 1-based column `column`.
  void record_not_positive_definite(int column) noexcept;
  // A NaN or infinity in the input at global 1-based row `column` of the referenced triangle
  // (reported by non_finite_input(); the factorization goes on and finds LAPACK's info).
  void record_non_finite(int column) noexcept;
  // The exception being handled inside a task (CUDA failure, allocation failure...); `what`
  // names the task. The first one is kept, with its type.
  void record_current_exception(const char* what);

  // Request::cancel: a Cancelled error and stopped(), unless every task has finished already
  // (false then).
  bool cancel();

  // True once a failure makes the remaining tasks' work pointless: they return at once.
  bool stopped() const noexcept { return stopped_.load(std::memory_order_relaxed); }
  // True once cancel() took: every remaining task returns at once, even those that run after a
  // failure (copies home, the chunks of a batch).
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

  // LAPACK info: 0, or the first leading minor found not positive definite (a NaN pivot included).
  int info() const noexcept;
  bool non_finite_input() const noexcept { return non_finite_.load() != INT_MAX; }
  // Null when no task raised an error.
  std::exception_ptr error() const;

  // What the tasks use beyond the caller's own data (the tiles of a LAPACK-layout call): held until
  // release_held(), which the request calls once its tasks are done, or its runtime when it ends
  // first (while StarPU can still take the tiles back).
  void hold(std::shared_ptr<void> resources);
  // Waits for the tasks, then lets go of what hold() kept. Idempotent, from any thread; a call
  // made while another thread is letting go returns once that thread is done, so that a runtime
  // that ends never shuts StarPU down under tiles still being unregistered.
  void release_held();

  // Run once, by the first Request::wait() that finds the tasks done without an error: what the
  // caller asked to be read off the results (FactorOptions::log_determinant), given the info.
  void set_completion(std::function<void(int info)> completion);
  void complete();

  // Where the tasks record their execution (none by default); set before the first task is
  // submitted. The submission keeps the trace alive until it is destroyed.
  // StarPU's task profiling stays on until the last task is done.
  void set_trace(std::shared_ptr<Trace> trace);
  Trace* trace() const noexcept { return trace_.get(); }

 private:
  static void atomic_min(std::atomic<int>& target, int value) noexcept;
  // One fewer task or seal in flight; the last one wakes the waiters.
  void count_down() noexcept;
  // Every submitted task has finished (read under mutex_ where a waiter must not miss the end).
  bool finished() const noexcept { return pending_.load(std::memory_order_acquire) == 0; }

  Runtime* runtime_ = nullptr;  // set by open(); told when the last task is done
  std::atomic<int> pending_{0};  // tasks in flight, plus one until seal()
  std::atomic<long long> tasks_submitted_{0};
  std::atomic<long long> tasks_finished_{0};
  std::atomic<int> not_spd_{INT_MAX};
  std::atomic<int> non_finite_{INT_MAX};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  std::condition_variable all_done_;
  std::exception_ptr error_;
  std::shared_ptr<Trace> trace_;
  std::shared_ptr<void> held_;  // under mutex_
  std::function<void(int)> completion_;  // under mutex_
  bool releasing_ = false;      // under mutex_: a thread is letting go of held_
  std::condition_variable released_;
  std::optional<TaskProfiling> profiling_;  // while a traced request's tasks are in flight
  std::vector<std::unique_ptr<double[]>> slots_;  // under mutex_
};

}  // namespace tessera::detail
