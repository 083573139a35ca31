// FP32 gemm_nt / syrk_ln: full-precision FMA kernels (no TF32).
#include "tile_gemm.cuh"
#include "tile_gemm_api.cuh"

namespace tessera::kernels::cuda::detail {

template <>
void gemm_launch<float>(GemmMode mode, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, float* C, int ldc, cudaStream_t stream,
                        const TileKernelConfig& cfg) {
  const GemmShape s = pick_gemm_shape(Precision::single_real, mode, m, n, cfg);
  const auto is = [&](int bm, int bn, int threads) {
    return s.bm == bm && s.bn == bn && s.threads == threads;
  };
  if (is(32, 32, 128)) return launch_fma<float, 32, 32, 4, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(32, 64, 128)) return launch_fma<float, 32, 64, 4, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 32, 128)) return launch_fma<float, 64, 32, 4, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 64, 128)) return launch_fma<float, 64, 64, 8, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 64, 256)) return launch_fma<float, 64, 64, 4, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(128, 64, 256)) return launch_fma<float, 128, 64, 8, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(128, 128, 256)) return launch_fma<float, 128, 128, 8, 8>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  invalid_config("unknown FP32 gemm shape");
}

}  // namespace tessera::kernels::cuda::detail

namespace tessera::kernels::cuda {

template void gemm_nt<float>(int, int, int, const float*, int, const float*, int, float*, int,
                             cudaStream_t, const TileKernelConfig&);
template void syrk_ln<float>(int, int, const float*, int, float*, int, cudaStream_t,
                             const TileKernelConfig&);

}  // namespace tessera::kernels::cuda
