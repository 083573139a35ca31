// FP64 gemm_nt / syrk_ln: FP64 tensor-core kernels on sm_80+, FMA kernels before that.
#include "tile_gemm.cuh"
#include "tile_gemm_api.cuh"

namespace tessera::kernels::cuda::detail {

template <>
void gemm_launch<double>(GemmMode mode, int m, int n, int k, const double* A, int lda,
                         const double* B, int ldb, double* C, int ldc, cudaStream_t stream,
                         const TileKernelConfig& cfg) {
  if (device_cc() < 80) {  // no FP64 MMA: one FMA shape per mode
    if (mode == GemmMode::overwrite)
      launch_fma<double, 32, 64, 4, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
    else
      launch_fma<double, 64, 64, 4, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
    return;
  }
  const GemmShape s = pick_gemm_shape(Precision::double_real, mode, m, n, cfg);
  const auto is = [&](int bm, int bn, int threads) {
    return s.bm == bm && s.bn == bn && s.threads == threads;
  };
  if (is(32, 32, 128)) return launch_dmma<32, 32, 2, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(32, 64, 128)) return launch_dmma<32, 64, 2, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 32, 128)) return launch_dmma<64, 32, 2, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 64, 128)) return launch_dmma<64, 64, 2, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(64, 64, 256)) return launch_dmma<64, 64, 4, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(128, 64, 128)) return launch_dmma<128, 64, 2, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  if (is(128, 128, 256)) return launch_dmma<128, 128, 2, 4>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  invalid_config("unknown FP64 gemm shape");
}

}  // namespace tessera::kernels::cuda::detail

namespace tessera::kernels::cuda {

template void gemm_nt<double>(int, int, int, const double*, int, const double*, int, double*, int,
                              cudaStream_t, const TileKernelConfig&);
template void syrk_ln<double>(int, int, const double*, int, double*, int, cudaStream_t,
                              const TileKernelConfig&);

}  // namespace tessera::kernels::cuda
