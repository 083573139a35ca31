// Custom CUDA kernels for the four tile operations of Cholesky (lower storage, column-major).
// Plain functions of (sizes, pointers, leading dimensions, workspace, stream): the codelets call
// them and the tests call them without StarPU. All pointers are device pointers. Every launch is
// asynchronous on `stream`; errors of the launch itself throw tessera::CudaError.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tessera::kernels::cuda {

// Kernel parameters a tuning sweep may change; 0 means "use the built-in default for this size".
struct TileKernelConfig {
  int ib = 0;       // inner blocking (potf2 panel width, trsm diagonal block)
  int threads = 0;  // threads per block, where the kernel supports several shapes
  int tile = 0;     // output tile edge per thread block (syrk/gemm/trsm update)
  int tile_n = 0;   // gemm/syrk: block tile columns when not square (0: same as tile)
  int variant = 0;  // trsm: 1 direct, 2 inverted blocks; potf2: 0 blocked, 2 warp panels, 3 dataflow
  int crossover = 0;  // potf2: largest order of the single fused kernel; variant 3: thread blocks
};

inline bool operator==(const TileKernelConfig& a, const TileKernelConfig& b) {
  return a.ib == b.ib && a.threads == b.threads && a.tile == b.tile && a.tile_n == b.tile_n &&
         a.variant == b.variant && a.crossover == b.crossover;
}

// Cholesky of the lower triangle of the n x n tile A (A = L L^T, L overwrites the lower triangle;
// the strict upper triangle is not touched). Writes LAPACK info to *d_info (device int): 0, or
// the 1-based local column of the first non-positive (or NaN) pivot; columns after it are left
// unspecified as in LAPACK.
template <class T>
void potf2(int n, T* A, int lda, int* d_info, cudaStream_t stream, const TileKernelConfig& cfg = {});

// Same, with caller-provided device workspace (the blocked path, n above the fused kernel's
// crossover; variant 3's counters). The overload without workspace takes it from a per-device
// stream-ordered memory pool when needed; potf2_workspace_bytes returns 0 when no workspace is used.
template <class T>
std::size_t potf2_workspace_bytes(int n, const TileKernelConfig& cfg = {});
template <class T>
void potf2(int n, T* A, int lda, int* d_info, void* workspace, std::size_t workspace_bytes,
           cudaStream_t stream, const TileKernelConfig& cfg = {});

// Largest order the fused single-kernel potf2 accepts on the current device for panel width ib.
template <class T>
int potf2_fused_max_n(int ib);

// B := B * L^{-T} with L the n x n lower triangle (non-unit) of `L`, B m x n (the Cholesky panel).
template <class T>
std::size_t trsm_rlt_workspace_bytes(int m, int n, const TileKernelConfig& cfg = {});
template <class T>
void trsm_rlt(int m, int n, const T* L, int ldl, T* B, int ldb, void* workspace,
              std::size_t workspace_bytes, cudaStream_t stream, const TileKernelConfig& cfg = {});

// C := C - A A^T on the lower triangle of the n x n tile C (strict upper untouched), A n x k.
template <class T>
void syrk_ln(int n, int k, const T* A, int lda, T* C, int ldc, cudaStream_t stream,
             const TileKernelConfig& cfg = {});

// C := C - A B^T with C m x n, A m x k, B n x k.
template <class T>
void gemm_nt(int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C, int ldc,
             cudaStream_t stream, const TileKernelConfig& cfg = {});

}  // namespace tessera::kernels::cuda
