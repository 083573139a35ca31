// The task runtime Tessera submits to. A Runtime either starts StarPU (and shuts it down when
// destroyed) or attaches to the StarPU that the host application already started, which it then
// never shuts down. Factorizations submitted through one Runtime may be in flight at once, from
// several threads.
#pragma once

#include "tessera/export.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera {

namespace detail {
class RuntimeResources;
struct RuntimeControl;
}

// What Mode::automatic runs as on a runtime's workers, and why.
struct ModeChoice {
  Mode mode = Mode::cpu;
  std::string reason;
};

class TESSERA_EXPORT Runtime {
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
  // CUDA worker throws RuntimeError; hybrid with none runs on the CPUs (and says so once);
  // automatic runs as automatic_mode() says.
  Mode resolve(Mode requested) const;
  // gpu, hybrid or cpu, chosen once from the workers present (see Mode::automatic), among the
  // modes the scheduling policy runs.
  ModeChoice automatic_mode() const;

  // Idle StarPU workers poll for tasks in a tight loop. A Runtime that started StarPU lets them
  // sleep (starpu_pause) once none of its requests has been in flight for
  // RuntimeOptions::pause_after_idle_us, and wakes them for the next one
  // (RuntimeOptions::pause_when_idle). Once starpu_interop::tile_handle() has given an application a
  // tile's StarPU handle, its own tasks may be in flight at any time: the workers then stay awake.
  // For explicit control: pause_workers() stops task processing until resume_workers(); pauses
  // nest, and tasks submitted while paused wait for the resume (tiles are still unregistered:
  // transfers run). No effect on an attached Runtime, whose StarPU belongs to the application.
  // The destructor resumes what is still paused before it stops StarPU.
  void pause_workers();
  void resume_workers();
  // True while the workers sleep (paused explicitly, or idle past the delay).
  bool workers_paused() const;
  // Whether idle workers sleep (RuntimeOptions::pause_when_idle): an application that submits its
  // own StarPU tasks to a Runtime Tessera started turns it off first, or its tasks wait for
  // Tessera's next request.
  void set_pause_when_idle(bool pause);

  // The runtime behind the C API: started on first use with RuntimeOptions::from_environment(),
  // or attached to a running StarPU; it lives until the process exits. Once it has been destroyed
  // at exit (an atexit handler registered before its first use runs after that), shared() throws
  // RuntimeError and shared_ended() is true.
  static Runtime& shared();
  static bool shared_ended() noexcept;
  // True on a thread running a StarPU task, where every Tessera call throws RuntimeError (it
  // would wait for tasks that need this very worker).
  static bool called_from_task() noexcept;

  const detail::RuntimeResources& resources() const noexcept;

  // Things worth telling a person (a hybrid request run on the CPUs alone, a performance-model
  // file set aside); printed on stderr as well when RuntimeOptions::verbose.
  std::vector<std::string> notices() const;

 private:
  friend struct detail::RuntimeControl;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

TESSERA_EXPORT const char* version() noexcept;
// The version of the StarPU Tessera was built with ("1.3.10").
TESSERA_EXPORT const char* starpu_version() noexcept;

}  // namespace tessera
