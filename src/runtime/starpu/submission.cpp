#include "submission.hpp"

#include <starpu.h>

#include <new>
#include <string>

#include "tessera/error.hpp"

#include <algorithm>

#include "runtime_control.hpp"
#include "tasks.hpp"
#include "trace.hpp"

namespace tessera::detail {

void Submission::open(Runtime& runtime) {
  RuntimeControl::check_callable(runtime);
  RuntimeControl::begin_work(runtime);
  runtime_ = &runtime;
  pending_.fetch_add(1, std::memory_order_relaxed);  // the seal: no zero while tasks are still being inserted
}

void Submission::task_submitted() noexcept {
  tasks_submitted_.fetch_add(1, std::memory_order_relaxed);
  pending_.fetch_add(1, std::memory_order_relaxed);
}

void Submission::task_finished() noexcept {
  tasks_finished_.fetch_add(1, std::memory_order_relaxed);
  count_down();
}

void Submission::task_withdrawn() noexcept {
  tasks_submitted_.fetch_sub(1, std::memory_order_relaxed);
  count_down();
}

Progress Submission::progress() const noexcept {
  // Finished read first: a task submitted and finished between the reads cannot push the
  // fraction above 1.
  Progress progress;
  progress.tasks_finished = tasks_finished_.load(std::memory_order_relaxed);
  progress.tasks_submitted = std::max(progress.tasks_finished, tasks_submitted_.load(std::memory_order_relaxed));
  return progress;
}

// The count drops under the lock so that a waiter can never see zero, return and destroy this
// object while the last task is still about to touch the mutex.
void Submission::count_down() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const int before = pending_.fetch_sub(1, std::memory_order_acq_rel);
  if (before == 2) all_done_.notify_all();  // only the seal left: wait_for_submitted's end
  if (before != 1) return;
  if (trace_) {
    try {
      record_transfers(*trace_);
    } catch (...) {  // out of memory: the trace lacks its transfers, the request is still done
    }
  }
  profiling_.reset();
  if (runtime_) RuntimeControl::end_work(*runtime_);
  all_done_.notify_all();
}

void Submission::set_trace(std::shared_ptr<Trace> trace) {
  trace_ = std::move(trace);
  if (trace_) {
    profiling_.emplace();
    reset_transfer_counts();
  }
}

void Submission::wait() {
#ifdef STARPU_SIMGRID
  // In StarPU's simulation every worker is a SimGrid actor of this one thread: a condition
  // variable of the system would block them all. StarPU's own wait lets the simulation run.
  while (!finished()) {
    starpu_task_wait_for_all();
    if (!finished()) starpu_sleep(1e-6f);
  }
#endif
  {
    std::unique_lock<std::mutex> lock(mutex_);
    all_done_.wait(lock, [this] { return finished(); });
  }
  RuntimeControl::work_waited();
}

void Submission::wait_for_submitted() {
#ifdef STARPU_SIMGRID
  // See wait(): StarPU's own wait lets the simulation's actors run.
  while (pending_.load(std::memory_order_acquire) > 1) {
    starpu_task_wait_for_all();
    if (pending_.load(std::memory_order_acquire) > 1) starpu_sleep(1e-6f);
  }
#endif
  std::unique_lock<std::mutex> lock(mutex_);
  all_done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) <= 1; });
}

double* Submission::slots(int count) {
  auto memory = std::make_unique<double[]>(static_cast<std::size_t>(std::max(count, 0)));
  std::lock_guard<std::mutex> lock(mutex_);
  slots_.push_back(std::move(memory));
  return slots_.back().get();
}

double* submission_slots(const TaskContext& ctx, int count) { return ctx.submission->slots(count); }

void wait_for_inserted_tasks(const TaskContext& ctx) { ctx.submission->wait_for_submitted(); }

bool Submission::wait_for(std::chrono::nanoseconds timeout) {
#ifdef STARPU_SIMGRID
  // A condition variable would block the simulation's actors (see wait()).
  (void)timeout;
  wait();
  return true;
#else
  std::unique_lock<std::mutex> lock(mutex_);
  return all_done_.wait_for(lock, timeout, [this] { return finished(); });
#endif
}

void Submission::hold(std::shared_ptr<void> resources) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_ = std::move(resources);
}

void Submission::release_held() {
  wait();
  std::unique_lock<std::mutex> lock(mutex_);
  if (releasing_) {
    released_.wait(lock, [&] { return !releasing_; });
    return;
  }
  std::shared_ptr<void> released = std::move(held_);
  if (!released) return;
  releasing_ = true;
  lock.unlock();
  released.reset();  // outside the lock: releasing tiles waits for StarPU
  lock.lock();
  releasing_ = false;
  released_.notify_all();
}

void Submission::set_completion(std::function<void(int info)> completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  completion_ = std::move(completion);
}

void Submission::complete() {
  std::function<void(int)> completion;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completion.swap(completion_);
  }
  if (completion) completion(info());
}

bool Submission::done() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished();
}

void Submission::atomic_min(std::atomic<int>& target, int value) noexcept {
  int current = target.load(std::memory_order_relaxed);
  while (value < current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

void Submission::record_not_positive_definite(int column) noexcept {
  atomic_min(not_spd_, column);
  stopped_.store(true, std::memory_order_relaxed);
}

// Not a failure by itself: LAPACK's info is the first leading minor the factorization finds not
// positive definite, which may lie before this column (and +inf on the diagonal fails nowhere).
// The kernels find it: a NaN pivot is not positive.
void Submission::record_non_finite(int column) noexcept { atomic_min(non_finite_, column); }

namespace {

// The exception being handled, as the same Tessera type with the task's name in front of its
// message; anything else that is not a Tessera error (std::bad_alloc included) as it is. An
// argument position inside a task is not one of the caller's arguments: it is dropped.
std::exception_ptr with_task_context(const char* what) {
  try {
    throw;
  } catch (const InvalidArgument& e) {
    return std::make_exception_ptr(InvalidArgument(std::string(what) + ": " + e.what()));
  } catch (const ResourceError& e) {
    return std::make_exception_ptr(ResourceError(std::string(what) + ": " + e.what()));
  } catch (const CudaError& e) {
    return std::make_exception_ptr(CudaError(std::string(what) + ": " + e.what()));
  } catch (const RuntimeError& e) {
    return std::make_exception_ptr(RuntimeError(std::string(what) + ": " + e.what()));
  } catch (const std::bad_alloc&) {
    return std::current_exception();
  } catch (const std::exception& e) {
    return std::make_exception_ptr(Error(std::string(what) + ": " + e.what()));
  } catch (...) {
    return std::make_exception_ptr(Error(std::string(what) + ": unknown exception"));
  }
}

}  // namespace

void Submission::record_current_exception(const char* what) {
  std::exception_ptr error = with_task_context(what);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::move(error);
  }
  stopped_.store(true, std::memory_order_relaxed);
}

bool Submission::cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished()) return false;
    if (!error_) error_ = std::make_exception_ptr(Cancelled("the request was cancelled"));
  }
  cancelled_.store(true, std::memory_order_relaxed);
  stopped_.store(true, std::memory_order_relaxed);
  return true;
}

int Submission::info() const noexcept {
  const int column = not_spd_.load();
  return column == INT_MAX ? 0 : column;
}

std::exception_ptr Submission::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace tessera::detail
