// The task runtime Tessera submits to. A Runtime either starts StarPU (and shuts it down when
// destroyed) or attaches to the StarPU that the host application already started, which it then
// never shuts down. Factorizations submitted through one Runtime may be in flight at once, from
// several threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/options.hpp"

namespace tessera {

namespace detail {
class RuntimeResources;
}

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // True when StarPU was already running: Tessera uses its workers and leaves it running.
  bool attached() const noexcept;
  int cpu_workers() const noexcept;
  int cuda_workers() const noexcept;
  int cuda_devices() const noexcept;
  // The memory StarPU may use on the smallest GPU in use (STARPU_LIMIT_CUDA_MEM applies), in
  // bytes; 0 with no CUDA worker or where StarPU does not know it.
  std::size_t gpu_memory_bytes() const noexcept;
  std::string scheduler() const;

  // The mode a factorization asked for, resolved against the workers present: gpu mode with no
  // CUDA worker throws RuntimeError; hybrid with none runs on the CPUs (and says so once).
  Mode resolve(Mode requested) const;

  // Idle StarPU workers poll for tasks in a tight loop. A program that uses Tessera now and then
  // (the LAPACK drop-in) lets them sleep in between: pause_workers() stops task processing
  // (starpu_pause), resume_workers() restarts it; pauses nest. Tasks submitted while paused wait
  // for the resume. No effect on an attached Runtime, whose StarPU belongs to the application.
  // The destructor resumes what is still paused before it stops StarPU.
  void pause_workers();
  void resume_workers();

  // The runtime behind the C API: started on first use with RuntimeOptions::from_environment(),
  // or attached to a running StarPU; it lives until the process exits.
  static Runtime& shared();

  const detail::RuntimeResources& resources() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

const char* version() noexcept;

}  // namespace tessera
