// The public gemm_nt / syrk_ln: argument checks, then gemm_launch<T>. tile_gemm_d.cu and
// tile_gemm_s.cu define gemm_launch for their precision and instantiate these next to it.
#pragma once

#include <algorithm>

#include "tile_common.cuh"

namespace tessera::kernels::cuda {

template <class T>
void gemm_nt(int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C, int ldc,
             cudaStream_t stream, const TileKernelConfig& cfg) {
  using detail::require;
  require(m >= 0, "gemm_nt: m < 0", 1);
  require(n >= 0, "gemm_nt: n < 0", 2);
  require(k >= 0, "gemm_nt: k < 0", 3);
  require(lda >= std::max(1, m), "gemm_nt: lda < max(1, m)", 5);
  require(ldb >= std::max(1, n), "gemm_nt: ldb < max(1, n)", 7);
  require(ldc >= std::max(1, m), "gemm_nt: ldc < max(1, m)", 9);
  if (m == 0 || n == 0 || k == 0) return;
  require(A && B && C, "gemm_nt: null matrix pointer", 0);
  detail::gemm_launch<T>(detail::GemmMode::update, m, n, k, A, lda, B, ldb, C, ldc, stream, cfg);
}

template <class T>
void syrk_ln(int n, int k, const T* A, int lda, T* C, int ldc, cudaStream_t stream,
             const TileKernelConfig& cfg) {
  using detail::require;
  require(n >= 0, "syrk_ln: n < 0", 1);
  require(k >= 0, "syrk_ln: k < 0", 2);
  require(lda >= std::max(1, n), "syrk_ln: lda < max(1, n)", 4);
  require(ldc >= std::max(1, n), "syrk_ln: ldc < max(1, n)", 6);
  if (n == 0 || k == 0) return;
  require(A && C, "syrk_ln: null matrix pointer", 0);
  detail::gemm_launch<T>(detail::GemmMode::lower_update, n, n, k, A, lda, A, lda, C, ldc, stream,
                         cfg);
}

}  // namespace tessera::kernels::cuda
