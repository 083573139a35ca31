// An application's own StarPU tasks, for the tests of Tessera beside an application that submits
// work to StarPU itself: a CPU kernel that counts its runs, in codelets without buffers.
#pragma once

#include <starpu.h>

#include <atomic>
#include <cstdint>

namespace tessera::test {

inline std::atomic<int> application_tasks_run{0};

inline void application_kernel(void**, void*) { ++application_tasks_run; }

// A codelet of the application: application_kernel on the CPUs, no tag, no name, priority 0.
// `where` limits the kinds of worker it claims (0: those it has kernels for).
inline starpu_codelet make_application_codelet(uint32_t where = 0) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = application_kernel;
  cl.where = where;
  cl.nbuffers = 0;
  return cl;
}

}  // namespace tessera::test
