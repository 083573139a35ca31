// Small CUDA helpers on column-major tiles (device pointers, asynchronous on `stream`).
#pragma once

#include <cuda_runtime.h>

namespace tessera::kernels::cuda {

// dst := src on and below the diagonal, 0 above it; both m x n.
template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream);

// Which triangle (diagonal included) of an n x n matrix an operation writes.
enum class Triangle { lower, upper };

// The triangle `to` of dst := the opposite triangle of src, transposed: dst(i, j) = src(j, i) for
// every (i, j) in `to`; nothing else of either matrix is read or written. src and dst must not
// overlap.
template <class T>
void transpose_triangle(Triangle to, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
