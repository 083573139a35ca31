// The checks the device API's functions share: their qualified names in messages, a runtime that
// can reach a GPU, and the GPU a matrix argument lies on.
#pragma once

#include <string>

#include "device_memory.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera::device {

inline std::string qualified(const char* routine) { return std::string("tessera::device::") + routine; }

#ifdef TESSERA_HAVE_CUDA

inline void require_cuda_workers(const char* routine, const Runtime& runtime) {
  if (runtime.cuda_workers() == 0)
    throw RuntimeError(qualified(routine) +
                       ": the runtime has no CUDA worker, and a matrix in GPU memory needs one (no usable GPU, or "
                       "TESSERA_NCUDA=0)");
}

// The GPU holding a matrix argument; host memory is an invalid argument at its LAPACK position.
inline int device_holding(const char* routine, const void* matrix, const char* name, int position) {
  const int device = detail::cuda_device_holding(matrix);
  if (device < 0)
    throw InvalidArgument(qualified(routine) + ": " + name + " (argument " + std::to_string(position) +
                              ") is not device memory: the device API takes matrices in GPU memory (tessera::" +
                              routine + " takes them in host memory)",
                          position);
  return device;
}

#endif

}  // namespace tessera::device
