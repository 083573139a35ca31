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

// Shared memory of the pipeline: kGemmStages k tiles of the A panel (BM rows), then of the B panel.
template <class T, int BM, int BN>
constexpr std::size_t gemm_smem_bytes() {
  return sizeof(T) * kGemmStages * kGemmBK *
         static_cast<std::size_t>(BM + kSmemPad + BN + kSmemPad);
}

// The cp.async pipeline of both kernel families: k tile kt of the block's A and B panels is read
// from stage kt % kGemmStages of shared memory (k-major, row strides LDS_A and LDS_B) while the
// copies of the next kGemmStages - 1 tiles are in flight. The kernel keeps its own k loop:
//   pipe.start(); for (kt < pipe.ktiles) { pipe.advance(kt); use pipe.a_stage(kt), b_stage(kt) }
template <class T, int BM, int BN, int THREADS, int VEC>
struct GemmPipeline {
  static constexpr int LDS_A = BM + kSmemPad, LDS_B = BN + kSmemPad;
  int m, n, k;
  const T* A;
  int lda;
  const T* B;
  int ldb;
  int row0, col0, tid, ktiles;
  T* As;
  T* Bs;

  __device__ __forceinline__ GemmPipeline(int m_, int n_, int k_, const T* A_, int lda_,
                                          const T* B_, int ldb_, int row0_, int col0_)
      : m(m_), n(n_), k(k_), A(A_), lda(lda_), B(B_), ldb(ldb_), row0(row0_), col0(col0_),
        tid(static_cast<int>(threadIdx.x)), ktiles(ceil_div(k_, kGemmBK)) {
    extern __shared__ __align__(16) unsigned char gemm_smem[];
    As = reinterpret_cast<T*>(gemm_smem);
    Bs = As + kGemmStages * kGemmBK * LDS_A;
  }

  __device__ __forceinline__ void load_stage(int stage, int kt) const {
    gemm_stage_panel<T, BM, LDS_A, THREADS, VEC>(As + stage * kGemmBK * LDS_A, A, lda, row0, m,
                                                 kt * kGemmBK, k, tid);
    gemm_stage_panel<T, BN, LDS_B, THREADS, VEC>(Bs + stage * kGemmBK * LDS_B, B, ldb, col0, n,
                                                 kt * kGemmBK, k, tid);
  }

  // Issues the first kGemmStages - 1 k tiles.
  __device__ __forceinline__ void start() const {
#pragma unroll
    for (int s = 0; s < kGemmStages - 1; ++s) {
      if (s < ktiles) load_stage(s, s);
      cp_async_commit();
    }
  }

  // Waits until k tile kt has landed (for every thread), then issues tile kt + kGemmStages - 1.
  __device__ __forceinline__ void advance(int kt) const {
    cp_async_wait<kGemmStages - 2>();
    __syncthreads();
    const int next = kt + kGemmStages - 1;
    if (next < ktiles) load_stage(next % kGemmStages, next);
    cp_async_commit();
  }

  __device__ __forceinline__ const T* a_stage(int kt) const {
    return As + (kt % kGemmStages) * kGemmBK * LDS_A;
  }
  __device__ __forceinline__ const T* b_stage(int kt) const {
    return Bs + (kt % kGemmStages) * kGemmBK * LDS_B;
  }
};

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

  int bm, bn;
  gemm_block_coords<MODE>(bm, bn);
  const int row0 = bm * BM, col0 = bn * BN;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wr = (warp % WARPS_M) * WM, wc = (warp / WARPS_M) * WN;

  double acc[MI][NI][4];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[mi][ni][v] = 0.0;

  const GemmPipeline<double, BM, BN, THREADS, VEC> pipe(m, n, k, A, lda, B, ldb, row0, col0);
  pipe.start();
  for (int kt = 0; kt < pipe.ktiles; ++kt) {
    pipe.advance(kt);
    const double* as = pipe.a_stage(kt) + wr + g;
    const double* bs = pipe.b_stage(kt) + wc + g;
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

  int bm, bn;
  gemm_block_coords<MODE>(bm, bn);
  const int row0 = bm * BM, col0 = bn * BN;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);

  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

  const GemmPipeline<T, BM, BN, THREADS, VEC> pipe(m, n, k, A, lda, B, ldb, row0, col0);
  pipe.start();
  for (int kt = 0; kt < pipe.ktiles; ++kt) {
    pipe.advance(kt);
    const T* as = pipe.a_stage(kt) + ty * HM;
    const T* bs = pipe.b_stage(kt) + tx * HN;
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

template <GemmMode MODE>
using GemmModeConstant = std::integral_constant<GemmMode, MODE>;

// Launches kernel_for(GemmModeConstant<mode>{}), the BM x BN block kernel of the runtime mode.
// Only square blocks take lower_update and only blocks up to 64 x 64 take overwrite (the modes
// the callers use with them), so the other combinations are not instantiated.
template <int BM, int BN, class T, class KernelFor>
void gemm_launch_mode(KernelFor kernel_for, GemmMode mode, int threads, int m, int n, int k,
                      const T* A, int lda, const T* B, int ldb, T* C, int ldc,
                      cudaStream_t stream) {
  const std::size_t smem = gemm_smem_bytes<T, BM, BN>();
  const dim3 grid = gemm_grid(mode, m, n, BM, BN);
  const auto run = [&](auto kernel) {
    gemm_run(kernel, threads, smem, grid, stream, m, n, k, A, lda, B, ldb, C, ldc);
  };
  switch (mode) {
    case GemmMode::update:
      run(kernel_for(GemmModeConstant<GemmMode::update>{}));
      return;
    case GemmMode::lower_update:
      if constexpr (BM == BN) {
        run(kernel_for(GemmModeConstant<GemmMode::lower_update>{}));
        return;
      }
      break;
    case GemmMode::overwrite:
      if constexpr (BM <= 64 && BN <= 64) {
        run(kernel_for(GemmModeConstant<GemmMode::overwrite>{}));
        return;
      }
      break;
  }
  invalid_config("gemm shape not instantiated for this mode");
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int VEC>
void launch_dmma_vec(GemmMode mode, int m, int n, int k, const double* A, int lda,
                     const double* B, int ldb, double* C, int ldc, cudaStream_t stream) {
  const auto kernel_for = [](auto mode_constant) {
    return gemm_dmma_kernel<BM, BN, WARPS_M, WARPS_N, decltype(mode_constant)::value, VEC>;
  };
  gemm_launch_mode<BM, BN>(kernel_for, mode, WARPS_M * WARPS_N * 32, m, n, k, A, lda, B, ldb, C,
                           ldc, stream);
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
  const auto kernel_for = [](auto mode_constant) {
    return gemm_fma_kernel<T, BM, BN, TM, TN, decltype(mode_constant)::value, VEC>;
  };
  gemm_launch_mode<BM, BN>(kernel_for, mode, (BM / TM) * (BN / TN), m, n, k, A, lda, B, ldb, C,
                           ldc, stream);
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
