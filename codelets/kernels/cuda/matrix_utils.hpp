// Small CUDA helpers on column-major tiles (device pointers, asynchronous on `stream`).
#pragma once

#include <cuda_runtime.h>

namespace tessera::kernels::cuda {

// dst := src on and below the diagonal, 0 above it; both m x n.
template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
