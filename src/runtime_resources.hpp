// What the runtime owns on behalf of the codelets: per CUDA worker, the cuBLAS and cuSOLVER
// handles bound to that worker's stream and a device workspace. Each context is touched only by
// its own worker thread once the runtime has started.
#pragma once

#include <cstddef>
#include <vector>

#ifdef TESSERA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

namespace tessera::detail {

struct CudaWorkerContext {
#ifdef TESSERA_HAVE_CUDA
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cusolverDnHandle_t cusolver = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int* device_info = nullptr;  // LAPACK info of the last diagonal-tile factorization

  // A workspace of at least `bytes`, grown in stream order (never synchronizes the device).
  void* workspace_of(std::size_t bytes);
#endif
};

class RuntimeResources {
 public:
  explicit RuntimeResources(int max_workers) : cuda_(static_cast<std::size_t>(max_workers)) {}
  // The context of CUDA worker `worker` (StarPU worker id); only that worker may use it.
  CudaWorkerContext& cuda(int worker) const { return cuda_[static_cast<std::size_t>(worker)]; }

 private:
  mutable std::vector<CudaWorkerContext> cuda_;
};

}  // namespace tessera::detail
