// What the codelets of a tensor-core factorization share: the operands of 16-bit products
// (TensorCores::bf16, fp16) rounded from the FP32 tiles into the worker's workspace, and the panel
// solve with its products in TF32.
#pragma once

#ifdef TESSERA_HAVE_CUDA

#include <cstddef>

#include "codelet_support.hpp"
#include "kernels/cuda/matrix_utils.hpp"

namespace tessera::detail {

// A's (and B's where given) 16-bit copies, each with its rows as leading dimension, and
// `extra_bytes` of room after them (for a product that must not land in C directly).
struct RoundedOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* extra = nullptr;
};

RoundedOperands round_operands(CudaWorkerContext& ctx, kernels::cuda::Float16Format format, const TileView<float>& A,
                               const TileView<float>* B, std::size_t extra_bytes = 0);

// B := B L^{-T} (B m x n, L n x n lower), the factorization's panel solve, in FP32 with most of
// its work on the tensor cores: the columns are halved until the diagonal blocks are small, X1 =
// B1 L11^{-T}, then B2 -= X1 L21^T (gemm_tf32) and X2 = B2 L22^{-T}; Tessera's FP32 kernel on the
// small diagonal blocks (cuBLAS's trsm is slow on this form).
void solve_panel_tf32(CudaWorkerContext& ctx, int m, int n, const float* L, int ldl, float* B, int ldb);

}  // namespace tessera::detail

#endif
