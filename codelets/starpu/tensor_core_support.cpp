#include "tensor_core_support.hpp"

#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"

#ifdef TESSERA_HAVE_CUDA

namespace tessera::detail {

namespace {

// Each part of the workspace starts on a 256-byte boundary (cuBLAS's preferred alignment).
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t rounded_bytes(const TileView<float>& tile) {
  return aligned(2 * static_cast<std::size_t>(tile.rows) * static_cast<std::size_t>(tile.cols));
}

}  // namespace

RoundedOperands round_operands(CudaWorkerContext& ctx, kernels::cuda::Float16Format format, const TileView<float>& A,
                               const TileView<float>* B, std::size_t extra_bytes) {
  const std::size_t a_bytes = rounded_bytes(A), b_bytes = B ? rounded_bytes(*B) : 0;
  auto* base = static_cast<unsigned char*>(ctx.workspace_of(a_bytes + b_bytes + extra_bytes));
  RoundedOperands rounded;
  rounded.a = base;
  kernels::cuda::round_to_16bit(format, A.rows, A.cols, A.ptr, A.ld, base, A.rows, ctx.stream);
  if (B) {
    rounded.b = base + a_bytes;
    kernels::cuda::round_to_16bit(format, B->rows, B->cols, B->ptr, B->ld, base + a_bytes, B->rows, ctx.stream);
  }
  rounded.extra = base + a_bytes + b_bytes;
  return rounded;
}

void solve_panel_tf32(CudaWorkerContext& ctx, int m, int n, const float* L, int ldl, float* B, int ldb) {
  constexpr int kDiagonalBlock = 512;
  if (n <= kDiagonalBlock) {
    const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(Precision::single_real, "trsm", n);
    const std::size_t bytes = kernels::cuda::trsm_rlt_workspace_bytes<float>(m, n, cfg);
    void* work = bytes > 0 ? ctx.workspace_of(bytes) : nullptr;
    kernels::cuda::trsm_rlt<float>(m, n, L, ldl, B, ldb, work, bytes, ctx.stream, cfg);
    return;
  }
  const int n1 = (n / 2 + 63) / 64 * 64, n2 = n - n1;
  const std::size_t ld = static_cast<std::size_t>(ldl), ldb_ = static_cast<std::size_t>(ldb);
  solve_panel_tf32(ctx, m, n1, L, ldl, B, ldb);
  kernels::cuda::vendor::gemm_tf32(ctx.cublas, Trans::no, Trans::transpose, m, n2, n1, -1.0f, B, ldb, L + n1, ldl, 1.0f,
                                   B + n1 * ldb_, ldb);
  solve_panel_tf32(ctx, m, n2, L + n1 + n1 * ld, ldl, B + n1 * ldb_, ldb);
}

}  // namespace tessera::detail

#endif
