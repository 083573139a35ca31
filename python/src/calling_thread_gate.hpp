// The gate of the calls that run LAPACK on the calling thread (tessera._core and the JAX FFI
// handlers), which fork() waits on.
#pragma once

#include <nanobind/nanobind.h>

#include <condition_variable>
#include <mutex>
#include <optional>

namespace tessera_python {

namespace nb = nanobind;

// The calls running LAPACK on the calling thread, counted so that fork() can wait for them: a
// child copied from a process in the middle of a multithreaded BLAS call waits for the pool's
// threads for ever. While a fork is prepared, new calls wait. The package's fork handlers
// (tessera._runtime) call begin_fork, then end_fork in the parent or reset in the child. No lock
// is held while the GIL is taken, nor the GIL while a call waits here.
class CallingThreadGate {
 public:
  class Pass {
   public:
    explicit Pass(CallingThreadGate& gate) : gate_(&gate) { gate.enter(); }
    ~Pass() { gate_->leave(); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    CallingThreadGate* gate_;
  };

  // Called with the GIL held; returns with it held.
  void begin_fork() {
    nb::gil_scoped_release unlocked;
    std::unique_lock<std::mutex> lock(mutex_);
    forking_ = true;
    changed_.wait(lock, [this] { return in_flight_ == 0; });
  }
  void end_fork() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      forking_ = false;
    }
    changed_.notify_all();
  }

 private:
  // With or without the GIL (the JAX FFI handlers run without it); a call that waits releases it.
  void enter() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!forking_) {
        ++in_flight_;
        return;
      }
    }
    std::optional<nb::gil_scoped_release> unlocked;
    if (PyGILState_Check()) unlocked.emplace();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !forking_; });
    ++in_flight_;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--in_flight_ != 0) return;
    }
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int in_flight_ = 0;
  bool forking_ = false;
};

// The process's gate (replaced in a forked child; defined in core.cpp).
extern CallingThreadGate* calling_thread_gate;

}  // namespace tessera_python
