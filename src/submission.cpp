#include "submission.hpp"

#include <algorithm>

#include "runtime_control.hpp"

namespace tessera::detail {

void Submission::open(Runtime& runtime) {
  RuntimeControl::check_callable(runtime);
  RuntimeControl::begin_work(runtime);
  runtime_ = &runtime;
  task_submitted();  // the seal: the count cannot reach zero while tasks are still being inserted
}

void Submission::task_submitted() noexcept { pending_.fetch_add(1, std::memory_order_relaxed); }

// The count drops under the lock so that a waiter can never see zero, return and destroy this
// object while the last task is still about to touch the mutex.
void Submission::task_finished() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (runtime_) RuntimeControl::end_work(*runtime_);
  all_done_.notify_all();
}

void Submission::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  all_done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
}

bool Submission::done() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.load(std::memory_order_acquire) == 0;
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

void Submission::record_non_finite(int column) noexcept {
  atomic_min(non_finite_, column);
  stopped_.store(true, std::memory_order_relaxed);
}

void Submission::record_error(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = message;
  }
  stopped_.store(true, std::memory_order_relaxed);
}

int Submission::info() const noexcept {
  const int column = std::min(not_spd_.load(), non_finite_.load());
  return column == INT_MAX ? 0 : column;
}

std::string Submission::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace tessera::detail
