// The Tessera runtime as the Python package owns it (tessera._core.Runtime), and the one published
// to the JAX FFI handlers, which run on XLA's threads without the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera_python {

namespace nb = nanobind;

// A Tessera runtime (one StarPU) for Python. Calls on it run with the GIL released, so another
// thread may close it while one runs: each call is admitted first (call() gives a RuntimeCall,
// which the Python layer takes under the same lock that picks the runtime, so that a call never
// races a close), and close() refuses new calls and waits for those admitted before StarPU stops.
class PyRuntime {
 public:
  explicit PyRuntime(const tessera::RuntimeOptions& options)
      : runtime_(std::make_unique<tessera::Runtime>(options)) {}

  // Admits one call; throws once close() has begun.
  tessera::Runtime& admit() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw tessera::RuntimeError("this Tessera runtime has been shut down");
    ++calls_;
    return *runtime_;
  }
  void leave() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--calls_ == 0) idle_.notify_all();
  }

  // Refuses new calls, waits for those admitted, then shuts StarPU down, all with the GIL released
  // (the calls in flight need it to finish). The mutex is never held while taking the GIL.
  void close() {
    nb::gil_scoped_release unlocked;
    std::unique_ptr<tessera::Runtime> stopped;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      open_ = false;
      idle_.wait(lock, [&] { return calls_ == 0; });
      stopped = std::move(runtime_);
    }
    stopped.reset();
  }

  // A short query (the workers' counts...) under the lock, so that close() cannot stop the runtime
  // meanwhile.
  template <class Query>
  auto query(Query query) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw tessera::RuntimeError("this Tessera runtime has been shut down");
    return query(*runtime_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int calls_ = 0;
  bool open_ = true;
  std::unique_ptr<tessera::Runtime> runtime_;
};

// The runtime that a call made now through tessera._runtime.runtime_call() without a policy would
// run on, and the mode such a call defaults to: published by the Python layer (under its lock)
// whenever either changes, withdrawn before that runtime closes, and none where such a call would
// start a runtime or raise. The FFI handlers run their calls on it without Python; where none is
// published they go through Python, which starts one.
class PublishedRuntime {
 public:
  void publish(PyRuntime* runtime, std::string mode) {
    std::lock_guard<std::mutex> lock(mutex_);
    runtime_ = runtime;
    mode_ = std::move(mode);
  }

  // Runs work(runtime, mode) admitted on the published runtime; false, having run nothing, where
  // none is published.
  template <class Work>
  bool run(Work&& work) {
    PyRuntime* owner = nullptr;
    std::string mode;
    tessera::Runtime* runtime = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!runtime_) return false;
      owner = runtime_;
      mode = mode_;
      runtime = &owner->admit();  // open: it is withdrawn before it closes
    }
    struct Leave {
      PyRuntime* owner;
      ~Leave() { owner->leave(); }
    } leave{owner};
    work(*runtime, mode);
    return true;
  }

 private:
  std::mutex mutex_;
  PyRuntime* runtime_ = nullptr;
  std::string mode_;
};

// The process's (replaced in a forked child, whose runtimes are the parent's; defined in core.cpp).
extern PublishedRuntime* published_runtime;

}  // namespace tessera_python
