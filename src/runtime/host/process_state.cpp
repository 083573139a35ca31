#include "process_state.hpp"

#include <cblas.h>
#include <starpu.h>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace tessera::detail {

namespace {

// One process-wide setting changed by the first of its users and restored by the last.
template <class Setting>
class CountedSetting {
 public:
  void acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (users_++ == 0) saved_ = Setting::change();
  }
  void release() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--users_ == 0) Setting::restore(saved_);
  }
  // The program's own value: the saved one while Tessera holds the setting, else the current one.
  typename Setting::Saved program_value() {
    std::lock_guard<std::mutex> lock(mutex_);
    return users_ > 0 ? saved_ : Setting::current();
  }

 private:
  std::mutex mutex_;
  int users_ = 0;
  typename Setting::Saved saved_{};
};

#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
struct BlasThreadsSetting {
  using Saved = int;
  static Saved current() { return openblas_get_num_threads(); }
  static Saved change() {
    const int program_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return program_threads;
  }
  static void restore(Saved program_threads) noexcept { openblas_set_num_threads(program_threads); }
};
#else
// A BLAS without OpenBLAS's thread control (CMakeLists.txt: BLA_VENDOR) must be sequential.
struct BlasThreadsSetting {
  using Saved = int;
  static Saved current() { return 1; }
  static Saved change() { return 1; }
  static void restore(Saved) noexcept {}
};
#endif

struct ProfilingSetting {
  using Saved = bool;  // whether the program had it on
  static Saved current() { return starpu_profiling_status_get() != 0; }
  static Saved change() {
    const bool was_on = starpu_profiling_status_get() != 0;
    if (!was_on) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    return was_on;
  }
  static void restore(Saved was_on) noexcept {
    if (!was_on && starpu_is_initialized()) starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  }
};

// Never destroyed, so that runtimes ending in exit handlers still find them.
CountedSetting<BlasThreadsSetting>& blas_threads() {
  static auto* setting = new CountedSetting<BlasThreadsSetting>();
  return *setting;
}
CountedSetting<ProfilingSetting>& profiling() {
  static auto* setting = new CountedSetting<ProfilingSetting>();
  return *setting;
}

}  // namespace

int program_blas_threads() { return blas_threads().program_value(); }

ProcessSettingHolder::ProcessSettingHolder(ProcessSetting setting) : setting_(setting) {
  if (setting_ == ProcessSetting::single_threaded_blas)
    blas_threads().acquire();
  else
    profiling().acquire();
}

ProcessSettingHolder::~ProcessSettingHolder() {
  if (setting_ == ProcessSetting::single_threaded_blas)
    blas_threads().release();
  else
    profiling().release();
}

namespace {

class ProcessId {
 public:
  static ProcessId& instance() {
    static ProcessId id;
    return id;
  }
  int value() const { return value_.load(std::memory_order_relaxed); }

 private:
  ProcessId() : value_(getpid()) {
    pthread_atfork(nullptr, nullptr, [] { instance().value_.store(getpid(), std::memory_order_relaxed); });
  }
  std::atomic<int> value_;
};

}  // namespace

int current_process_id() { return ProcessId::instance().value(); }

}  // namespace tessera::detail
