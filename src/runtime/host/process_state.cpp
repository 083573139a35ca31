#include "process_state.hpp"

#include <cblas.h>
#include <starpu.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int current_blas_threads() { return BlasThreadsSetting::current(); }

namespace {

// OpenBLAS's workers spin for 2^28 cycles (its default THREAD_TIMEOUT) after a job before they
// sleep: about 0.1 s; twice that covers slower clocks.
constexpr std::chrono::milliseconds kBlasWorkersSpin{250};
// Beyond this many threads the scan would cost more than it can save on a call it may change.
constexpr int kMaxThreadsScanned = 128;

std::atomic<std::chrono::steady_clock::rep>& last_threaded_blas_call_end() {
  static std::atomic<std::chrono::steady_clock::rep> end{std::chrono::steady_clock::now().time_since_epoch().count()};
  return end;
}

// OpenBLAS starts its workers when it is loaded, just before this library, and they spin first:
// the time of the library's load counts as a threaded call's end.
[[maybe_unused]] const auto& load_time = last_threaded_blas_call_end();

// Whether the thread whose /proc/self/task entry is `tid` is running or runnable (state R).
bool thread_running(const char* tid) {
  char path[sizeof "/proc/self/task//stat" + sizeof dirent::d_name];
  std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[160];  // "tid (name) S ...": the state follows a name of at most 16 characters
  const ssize_t size = read(fd, text, sizeof text - 1);
  close(fd);
  if (size <= 0) return false;
  text[size] = '\0';
  const char* name_end = std::strrchr(text, ')');
  return name_end && name_end[1] == ' ' && name_end[2] == 'R';
}

// Threads of this process other than the caller in state R; -1 where they cannot be read.
int other_running_threads() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return -1;
  const long self = syscall(SYS_gettid);
  int running = 0, scanned = 0;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.' || std::strtol(entry->d_name, nullptr, 10) == self) continue;
    if (++scanned > kMaxThreadsScanned) {
      running = -1;
      break;
    }
    running += thread_running(entry->d_name) ? 1 : 0;
  }
  closedir(tasks);
  return running;
}

}  // namespace

int blas_threads_with_a_cpu() {
  const int threads = program_blas_threads();
  if (threads <= 1) return threads;
  int others = other_running_threads();
  if (others < 0) return threads;
  const std::chrono::steady_clock::duration last(last_threaded_blas_call_end().load(std::memory_order_relaxed));
  if (std::chrono::steady_clock::now().time_since_epoch() - last < kBlasWorkersSpin)
    others -= threads - 1;  // Tessera's own workers, which may still spin
  return std::clamp(threads - std::max(others, 0), 1, threads);
}

void note_threaded_blas_call_end() {
  last_threaded_blas_call_end().store(std::chrono::steady_clock::now().time_since_epoch().count(),
                                      std::memory_order_relaxed);
}

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
