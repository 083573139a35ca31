// Blocked gemm kernels behind gemm_nt, syrk_ln and the trsm updates: C -= A B^T (or C = A B^T),
// A m x k, B n x k, column-major. Two families:
//  - gemm_dmma_kernel (double, sm_80+): warps compute 16x8 tiles with FP64 tensor-core MMA
//    (m16n8k16 on sm_90);
//  - gemm_fma_kernel (float, and double on older GPUs): each thread computes TM x TN outputs
//    with FMA.
// Both stage bm x 16 and bn x 16 panels of A and B in shared memory through a three-stage
// cp.async pipeline (element-wise copies: any leading dimension, zero-filled edges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tile_common.cuh"

namespace tessera::kernels::cuda::detail {

constexpr int kGemmBK = 16;     // k depth of one pipeline stage
constexpr int kGemmStages = 3;  // cp.async pipeline depth
constexpr int kSmemPad = 4;     // row padding: FP64 fragments conflict-free, 16-byte rows

// Block (bm, bn) for this block: a plain 2-D grid, or the lower-triangle enumeration for syrk.
template <GemmMode MODE>
__device__ __forceinline__ void gemm_block_coords(int& bm, int& bn) {
  if constexpr (MODE == GemmMode::lower_update) {
    const int t = static_cast<int>(blockIdx.x);
    int bi = static_cast<int>((sqrtf(8.0f * static_cast<float>(t) + 1.0f) - 1.0f) * 0.5f);
    while ((bi + 1) * (bi + 2) / 2 <= t) ++bi;
    while (bi * (bi + 1) / 2 > t) --bi;
    bm = bi;
    bn = t - bi * (bi + 1) / 2;
  } else {
    bm = static_cast<int>(blockIdx.x);
    bn = static_cast<int>(blockIdx.y);
  }
}

// Copies rows [row0, row0 + BR) x columns [k0, k0 + BK) of X (ld ldx; rows < nrows and
// columns < k are valid, the rest is zero-filled) into xs (k-major, row stride LDS). VEC
// consecutive rows go in one copy (16 bytes when VEC > 1: the caller checked the alignment).
// Each thread keeps one row offset and walks k with one running pointer, so the copies cost a
// few registers whatever the panel size.
template <class T, int BR, int LDS, int THREADS, int VEC>
__device__ __forceinline__ void gemm_stage_panel(T* xs, const T* X, int ldx, int row0, int nrows,
                                                 int k0, int k, int tid) {
  constexpr int CHUNKS_PER_K = BR / VEC;
  static_assert(THREADS % CHUNKS_PER_K == 0, "a thread copies one row chunk of several k");
  constexpr int KSTEP = THREADS / CHUNKS_PER_K;
  static_assert(kGemmBK % KSTEP == 0, "k slices split evenly");
  constexpr int BYTES = VEC * static_cast<int>(sizeof(T));
  const int i = (tid % CHUNKS_PER_K) * VEC;
  int gk = k0 + tid / CHUNKS_PER_K;
  const int gr = row0 + i;
  const int valid_rows = min(max(nrows - gr, 0), VEC);
  const unsigned row_bytes = static_cast<unsigned>(valid_rows) * sizeof(T);
  const std::size_t step = static_cast<std::size_t>(KSTEP) * ldx;
  const T* p = X + (valid_rows > 0 ? gr : 0) + static_cast<std::size_t>(gk) * ldx;
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(xs + (gk - k0) * LDS + i));
#pragma unroll 1
  for (int j = 0; j < kGemmBK / KSTEP; ++j, gk += KSTEP, p += step, dst += KSTEP * LDS * sizeof(T)) {
    const bool ok = gk < k && valid_rows > 0;
    const unsigned nbytes = ok ? row_bytes : 0u;
    const T* src = ok ? p : X;
    if constexpr (BYTES == 16) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                   "r"(nbytes)
                   : "memory");
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                   "n"(BYTES), "r"(nbytes)
                   : "memory");
    }
  }
}

template <GemmMode MODE, class T>
__device__ __forceinline__ void gemm_store(T* C, int ldc, int m, int n, int r, int c, T v) {
  if (r < m && c < n && (MODE != GemmMode::lower_update || r >= c)) {
    T* p = C + r + static_cast<std::size_t>(c) * ldc;
    if constexpr (MODE == GemmMode::overwrite) {
      *p = v;
    } else {
      *p -= v;
    }
  }
}

template <int BM, int BN, int WARPS_M, int WARPS_N, GemmMode MODE, int VEC>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32, 1)
    gemm_dmma_kernel(int m, int n, int k, const double* A, int lda, const double* B, int ldb,
                     double* C, int ldc) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int LDS_A = BM + kSmemPad, LDS_B = BN + kSmemPad;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
  constexpr int MI = WM / 16, NI = WN / 8;
  static_assert(WM % 16 == 0 && WN % 8 == 0, "warp tile must be made of 16x8 MMA tiles");
  static_assert(kGemmBK == 16, "one m16n8k16 step per stage");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  double* As = reinterpret_cast<double*>(gemm_smem);
  double* Bs = As + kGemmStages * kGemmBK * LDS_A;

  int bm, bn;
  gemm_block_coords<MODE>(bm, bn);
  const int row0 = bm * BM, col0 = bn * BN;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wr = (warp % WARPS_M) * WM, wc = (warp / WARPS_M) * WN;

  auto load_stage = [&](int stage, int kt) {
    gemm_stage_panel<double, BM, LDS_A, THREADS, VEC>(As + stage * kGemmBK * LDS_A, A, lda, row0,
                                                      m, kt * kGemmBK, k, tid);
    gemm_stage_panel<double, BN, LDS_B, THREADS, VEC>(Bs + stage * kGemmBK * LDS_B, B, ldb, col0,
                                                      n, kt * kGemmBK, k, tid);
  };

  double acc[MI][NI][4];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[mi][ni][v] = 0.0;

  const int ktiles = ceil_div(k, kGemmBK);
#pragma unroll
  for (int s = 0; s < kGemmStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kGemmStages - 2>();
    __syncthreads();
    const int next = kt + kGemmStages - 1;
    if (next < ktiles) load_stage(next % kGemmStages, next);
    cp_async_commit();

    const double* as = As + (kt % kGemmStages) * kGemmBK * LDS_A + wr + g;
    const double* bs = Bs + (kt % kGemmStages) * kGemmBK * LDS_B + wc + g;
    double bf[NI][4];
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int v = 0; v < 4; ++v) bf[ni][v] = bs[(t + 4 * v) * LDS_B + ni * 8];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      double af[8];
#pragma unroll
      for (int v1 = 0; v1 < 4; ++v1)
#pragma unroll
        for (int v0 = 0; v0 < 2; ++v0) af[v0 + 2 * v1] = as[(t + 4 * v1) * LDS_A + mi * 16 + 8 * v0];
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) dmma_16x8x16(acc[mi][ni], af, bf[ni]);
    }
  }

#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        gemm_store<MODE>(C, ldc, m, n, row0 + wr + mi * 16 + g + 8 * (v >> 1),
                         col0 + wc + ni * 8 + 2 * t + (v & 1), acc[mi][ni][v]);
}

// N contiguous shared-memory elements into registers, with the widest aligned loads.
template <class T, int N>
__device__ __forceinline__ void lds_vec(T (&d)[N], const T* s) {
  if constexpr (std::is_same_v<T, float> && N == 4) {
    const float4 v = *reinterpret_cast<const float4*>(s);
    d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
  } else if constexpr (std::is_same_v<T, float> && N == 2) {
    const float2 v = *reinterpret_cast<const float2*>(s);
    d[0] = v.x, d[1] = v.y;
  } else if constexpr (std::is_same_v<T, double> && N % 2 == 0) {
#pragma unroll
    for (int q = 0; q < N / 2; ++q) {
      const double2 v = reinterpret_cast<const double2*>(s)[q];
      d[2 * q] = v.x, d[2 * q + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) d[q] = s[q];
  }
}

// Each thread owns rows {ty*TM/2 + i, ty*TM/2 + i + BM/2} and columns likewise, so the
// per-k operand loads are TM/2- and TN/2-wide vectors.
template <class T, int BM, int BN, int TM, int TN, GemmMode MODE, int VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 1)
    gemm_fma_kernel(int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C,
                    int ldc) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int LDS_A = BM + kSmemPad, LDS_B = BN + kSmemPad;
  constexpr int HM = TM / 2, HN = TN / 2;
  static_assert(TM % 2 == 0 && TN % 2 == 0, "micro-tile is two halves");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  T* As = reinterpret_cast<T*>(gemm_smem);
  T* Bs = As + kGemmStages * kGemmBK * LDS_A;

  int bm, bn;
  gemm_block_coords<MODE>(bm, bn);
  const int row0 = bm * BM, col0 = bn * BN;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);

  auto load_stage = [&](int stage, int kt) {
    gemm_stage_panel<T, BM, LDS_A, THREADS, VEC>(As + stage * kGemmBK * LDS_A, A, lda, row0, m,
                                                 kt * kGemmBK, k, tid);
    gemm_stage_panel<T, BN, LDS_B, THREADS, VEC>(Bs + stage * kGemmBK * LDS_B, B, ldb, col0, n,
                                                 kt * kGemmBK, k, tid);
  };

  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

  const int ktiles = ceil_div(k, kGemmBK);
#pragma unroll
  for (int s = 0; s < kGemmStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kGemmStages - 2>();
    __syncthreads();
    const int next = kt + kGemmStages - 1;
    if (next < ktiles) load_stage(next % kGemmStages, next);
    cp_async_commit();

    const T* as = As + (kt % kGemmStages) * kGemmBK * LDS_A + ty * HM;
    const T* bs = Bs + (kt % kGemmStages) * kGemmBK * LDS_B + tx * HN;
#pragma unroll
    for (int kk = 0; kk < kGemmBK; ++kk) {
      T a[2][HM], b[2][HN];
      lds_vec<T, HM>(a[0], as + kk * LDS_A);
      lds_vec<T, HM>(a[1], as + kk * LDS_A + BM / 2);
      lds_vec<T, HN>(b[0], bs + kk * LDS_B);
      lds_vec<T, HN>(b[1], bs + kk * LDS_B + BN / 2);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i / HM][i % HM], b[j / HN][j % HN], acc[i][j]);
    }
  }

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      gemm_store<MODE>(C, ldc, m, n, row0 + (i / HM) * (BM / 2) + ty * HM + i % HM,
                       col0 + (j / HN) * (BN / 2) + tx * HN + j % HN, acc[i][j]);
}

// ---- launch ------------------------------------------------------------------------------

inline dim3 gemm_grid(GemmMode mode, int m, int n, int bm, int bn) {
  if (mode == GemmMode::lower_update) {
    const int tiles = ceil_div(n, bm);
    return dim3(static_cast<unsigned>(tiles * (tiles + 1) / 2));
  }
  return dim3(static_cast<unsigned>(ceil_div(m, bm)), static_cast<unsigned>(ceil_div(n, bn)));
}

template <class KernelPtr, class T>
void gemm_run(KernelPtr kernel, int threads, std::size_t smem, dim3 grid, cudaStream_t stream,
              int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C, int ldc) {
  ensure_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  kernel<<<grid, threads, smem, stream>>>(m, n, k, A, lda, B, ldb, C, ldc);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// 16-byte copies need 16-byte aligned columns in both operands.
template <class T>
bool gemm_operands_aligned(const T* A, int lda, const T* B, int ldb) {
  constexpr int per16 = 16 / static_cast<int>(sizeof(T));
  const auto aligned = [](const T* p, int ld) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % per16 == 0;
  };
  return aligned(A, lda) && aligned(B, ldb);
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int VEC>
void launch_dmma_vec(GemmMode mode, int m, int n, int k, const double* A, int lda,
                     const double* B, int ldb, double* C, int ldc, cudaStream_t stream) {
  constexpr int threads = WARPS_M * WARPS_N * 32;
  const std::size_t smem = sizeof(double) * kGemmStages * kGemmBK *
                           static_cast<std::size_t>(BM + kSmemPad + BN + kSmemPad);
  const dim3 grid = gemm_grid(mode, m, n, BM, BN);
  switch (mode) {
    case GemmMode::update:
      gemm_run(gemm_dmma_kernel<BM, BN, WARPS_M, WARPS_N, GemmMode::update, VEC>, threads, smem,
               grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
      return;
    case GemmMode::lower_update:
      if constexpr (BM == BN) {
        gemm_run(gemm_dmma_kernel<BM, BN, WARPS_M, WARPS_N, GemmMode::lower_update, VEC>, threads,
                 smem, grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
        return;
      }
      break;
    case GemmMode::overwrite:
      if constexpr (BM <= 64 && BN <= 64) {
        gemm_run(gemm_dmma_kernel<BM, BN, WARPS_M, WARPS_N, GemmMode::overwrite, VEC>, threads,
                 smem, grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
        return;
      }
      break;
  }
  invalid_config("gemm shape not instantiated for this mode");
}

template <int BM, int BN, int WARPS_M, int WARPS_N>
void launch_dmma(GemmMode mode, int m, int n, int k, const double* A, int lda, const double* B,
                 int ldb, double* C, int ldc, cudaStream_t stream) {
  if (gemm_operands_aligned(A, lda, B, ldb))
    launch_dmma_vec<BM, BN, WARPS_M, WARPS_N, 2>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  else
    launch_dmma_vec<BM, BN, WARPS_M, WARPS_N, 1>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
}

template <class T, int BM, int BN, int TM, int TN, int VEC>
void launch_fma_vec(GemmMode mode, int m, int n, int k, const T* A, int lda, const T* B, int ldb,
                    T* C, int ldc, cudaStream_t stream) {
  constexpr int threads = (BM / TM) * (BN / TN);
  const std::size_t smem =
      sizeof(T) * kGemmStages * kGemmBK * static_cast<std::size_t>(BM + kSmemPad + BN + kSmemPad);
  const dim3 grid = gemm_grid(mode, m, n, BM, BN);
  switch (mode) {
    case GemmMode::update:
      gemm_run(gemm_fma_kernel<T, BM, BN, TM, TN, GemmMode::update, VEC>, threads, smem, grid,
               stream, m, n, k, A, lda, B, ldb, C, ldc);
      return;
    case GemmMode::lower_update:
      if constexpr (BM == BN) {
        gemm_run(gemm_fma_kernel<T, BM, BN, TM, TN, GemmMode::lower_update, VEC>, threads, smem,
                 grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
        return;
      }
      break;
    case GemmMode::overwrite:
      if constexpr (BM <= 64 && BN <= 64) {
        gemm_run(gemm_fma_kernel<T, BM, BN, TM, TN, GemmMode::overwrite, VEC>, threads, smem,
                 grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
        return;
      }
      break;
  }
  invalid_config("gemm shape not instantiated for this mode");
}

template <class T, int BM, int BN, int TM, int TN>
void launch_fma(GemmMode mode, int m, int n, int k, const T* A, int lda, const T* B, int ldb,
                T* C, int ldc, cudaStream_t stream) {
  constexpr int vec = 16 / static_cast<int>(sizeof(T));
  if (gemm_operands_aligned(A, lda, B, ldb))
    launch_fma_vec<T, BM, BN, TM, TN, vec>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
  else
    launch_fma_vec<T, BM, BN, TM, TN, 1>(mode, m, n, k, A, lda, B, ldb, C, ldc, stream);
}

}  // namespace tessera::kernels::cuda::detail
