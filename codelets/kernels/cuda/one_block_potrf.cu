// potrf_one_block: the Cholesky factor of one real or complex (Hermitian) matrix of order up to
// 192 by one thread block of 16 warps (8 in complex double, whose 32-element rows take twice the
// registers), in one launch.
//
// The lower triangle, padded to N = round_up(n, 32) with an identity, lives in shared memory as
// column panels of width 32 (panel P keeps rows 32P..N-1, leading dimension N - 32P + 4, so that
// FP64 MMA fragment loads fall in distinct banks). Right-looking over the panels:
//  * factoring panel J: warp 0 (the diagonal warp) holds the 32 x 32 diagonal block in registers
//    (lane c = row c) and factors it column by column; follower warps (one per 32-row block
//    below) hold their rows in registers and follow it column by column: after each column the
//    diagonal warp publishes the block's column and the pivot's reciprocal square root in shared
//    memory and raises a counter (release), which a follower reads (acquire) only when it has
//    caught up, so that the panel costs the diagonal chain and a small lag, with no block barrier
//    per column;
//  * look-ahead: after panel J every warp updates panel J + 1 with it, then, while panel J + 1 is
//    factored, the warps that neither factor nor follow apply panel J's update to the panels past
//    J + 1 (FP64 mma.m16n8k8 in double, FFMA in float).
// The chain per column: in double (CH = 0) the next pivot comes from its owner by one shuffle, in
// float (CH = 1) every lane tracks it (d_{j+1} = b_j - a_j^2 / d_j, with a_j = A(j+1, j) and
// b_j = A(j+1, j+1) through column j - 1, handed over a column ahead), so that the chain is one
// reciprocal and one FMA; in double that lost to the shuffle, the warp being bound by the
// counter's fences and instruction latency there. The complex types take the shuffle (CH = 0).
// A follower spins on the counter that the diagonal warp of the same block raises: warps of a
// block progress independently, so the wait always ends.
#include "one_block_potrf.hpp"

#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "batched_common.cuh"
#include "batched_scalar.cuh"
#include "batched_static_for.cuh"
#include "check.hpp"
#include "tile_common.cuh"

namespace tessera::kernels::cuda {
namespace detail {
namespace {

using batched_detail::DeviceComplex;
using batched_detail::DeviceScalar;
using batched_detail::minus_product_conj;
using batched_detail::real_of;
using batched_detail::RealPartOf;
using batched_detail::rsqrt_approx_ftz;
using batched_detail::static_for;

// Warps per block: a complex double row of 32 elements takes 128 registers, which only a block of
// at most 8 warps leaves a thread beside the rest.
template <class T>
constexpr int kWarps = std::is_same_v<T, DeviceComplex<double>> ? 8 : 16;

__host__ __device__ constexpr int padded(int n) { return (n + 31) / 32 * 32; }
// Panel P of the padded order N: N - 32P rows, leading dimension N - 32P + 4, its offset in elements.
__host__ __device__ constexpr int panel_ld(int N, int P) { return N - 32 * P + 4; }
__host__ __device__ constexpr int panel_offset(int N, int P) { return 32 * (P * (N + 4) - 16 * P * (P - 1)); }

template <class T>
__host__ __device__ constexpr std::size_t dynamic_smem_bytes(int n) {
  return static_cast<std::size_t>(panel_offset(padded(n), padded(n) / 32)) * sizeof(T);
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ int ld_acquire_shared(const int* p) {
  int v;
  asm volatile("ld.acquire.cta.shared::cta.b32 %0, [%1];" : "=r"(v) : "r"(shared_address(p)) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_shared(int* p, int v) {
  asm volatile("st.release.cta.shared::cta.b32 [%0], %1;" ::"r"(shared_address(p)), "r"(v) : "memory");
}
// Waits until *flag >= target; returns the value seen.
__device__ __forceinline__ int wait_flag(const int* flag, int target) {
  int v = ld_acquire_shared(flag);
  while (v < target) v = ld_acquire_shared(flag);
  return v;
}

// The reciprocal without the library's special-case branch (float's chain, CH = 1): the hardware
// approximation, as batched_detail::rsqrt_approx_ftz for the reciprocal square root.
__device__ __forceinline__ float rcp_approx_ftz(float d) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(d));
  return y;
}

// v[k] = row[k] for k > j (widest aligned shared loads; v[k <= j] left unset).
template <int J>
__device__ __forceinline__ void load_tail(const double* row, double (&v)[32]) {
#pragma unroll
  for (int k = 0; k < 32; k += 2)
    if (k + 1 > J) {
      const double2 q = *reinterpret_cast<const double2*>(row + k);
      v[k] = q.x;
      v[k + 1] = q.y;
    }
}
template <int J>
__device__ __forceinline__ void load_tail(const float* row, float (&v)[32]) {
#pragma unroll
  for (int k = 0; k < 32; k += 4)
    if (k + 3 > J) {
      const float4 q = *reinterpret_cast<const float4*>(row + k);
      v[k] = q.x;
      v[k + 1] = q.y;
      v[k + 2] = q.z;
      v[k + 3] = q.w;
    }
}

template <int J>
__device__ __forceinline__ void load_tail(const DeviceComplex<double>* row, DeviceComplex<double> (&v)[32]) {
#pragma unroll
  for (int k = J + 1; k < 32; ++k) {
    const double2 q = *reinterpret_cast<const double2*>(row + k);
    v[k] = {q.x, q.y};
  }
}
template <int J>
__device__ __forceinline__ void load_tail(const DeviceComplex<float>* row, DeviceComplex<float> (&v)[32]) {
#pragma unroll
  for (int k = 0; k < 32; k += 2)
    if (k + 1 > J) {
      const float4 q = *reinterpret_cast<const float4*>(row + k);
      v[k] = {q.x, q.y};
      v[k + 1] = {q.z, q.w};
    }
}

// acc - |l|^2 (acc - l^2 for a real l): the next pivot's update by the current column (the
// shuffled chain, CH = 0: not float's).
__device__ __forceinline__ double minus_square(double acc, double l) { return fma(-l, l, acc); }
template <class R>
__device__ __forceinline__ R minus_square(R acc, DeviceComplex<R> l) {
  return fma(-l.im, l.im, fma(-l.re, l.re, acc));
}

// Shared state of the panel factorization.
template <class T>
struct PanelShared {
  T lcol[32][32];          // lcol[j][r] = L(32J + r, 32J + j), the diagonal block's columns
  RealPartOf<T> sinv[32];  // 1 / L(32J + j, 32J + j)
  int flag;        // columns published so far (over all panels: 32J + j + 1)
  int fail;        // first failing column of the current panel (relative), 32 if none
};

// A row's step for column j of the diagonal block, whose entries lie in `column`: its later
// entries updated by l times their conjugates in that column, entry j := l.
template <int j, class T>
__device__ __forceinline__ void apply_column(T (&x)[32], T l, const T (&column)[32]) {
  T v[32];
  load_tail<j>(column, v);
#pragma unroll
  for (int k = j + 1; k < 32; ++k) x[k] = minus_product_conj(x[k], l, v[k]);
  x[j] = l;
}

// ---- the diagonal warp ---------------------------------------------------------------------

// The diagonal warp's step j after its pivot: column j of the block (l on each lane) and the pivot's
// reciprocal square root s published, the counter raised, then the block's later columns updated.
template <int j, class T, class R>
__device__ __forceinline__ void publish_column(T (&x)[32], T l, R s, int failed, PanelShared<T>& sh, int colbase) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  sh.lcol[j][lane] = l;
  if (lane == 0) {
    sh.sinv[j] = s;
    if (j == 31) sh.fail = failed;
  }
  __syncwarp();
  if (lane == 0) st_release_shared(&sh.flag, colbase + j + 1);
  apply_column<j>(x, l, sh.lcol[j]);
}

// CH = 0: the next pivot from its owner by one shuffle per column, CUDA's rsqrt. CH = 1: every lane
// tracks the next pivot (see the file's first comment). Returns the failing column or 32.
template <class T, int CH>
__device__ __forceinline__ int diag_panel(T (&x)[32], PanelShared<T>& sh, int colbase) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  int failed = 32;
  if constexpr (CH == 0) {
    using R = RealPartOf<T>;
    R pivot = __shfl_sync(kFullMask, real_of(x[0]), 0);
    static_for<0, 32>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      const R d = pivot;
      failed = (failed == 32 && !(d > R(0))) ? j : failed;
      const R s = reciprocal_sqrt(d);
      T l;
      if constexpr (std::is_floating_point_v<T>)
        l = lane >= j ? x[j] * s : T(0);
      else  // the diagonal real: its input's imaginary part ignored, as LAPACK does
        l = lane > j ? x[j] * s : T(lane == j ? d * s : R(0));
      if constexpr (j + 1 < 32) pivot = __shfl_sync(kFullMask, minus_square(real_of(x[j + 1]), l), j + 1);
      publish_column<j>(x, l, s, failed, sh, colbase);
    });
  } else {
    T d = __shfl_sync(kFullMask, x[0], 0);
    T a = __shfl_sync(kFullMask, x[0], 1);
    T b = __shfl_sync(kFullMask, x[1], 1);
    static_for<0, 32>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      failed = (failed == 32 && !(d > T(0))) ? j : failed;
      const T r = rcp_approx_ftz(d);
      const T s = rsqrt_approx_ftz(d);
      T dn = T(0);
      if constexpr (j + 1 < 32) dn = fma(-(a * a), r, b);  // d_{j+1}: the chain
      const T xj = x[j];
      const T l = lane == j ? d * s : (lane > j ? xj * s : T(0));
      if constexpr (j + 2 < 32) {
        // On lane j+2: row j+2's entries j+1, j+2 through column j, for the next step.
        const T an = fma(-(xj * a), r, x[j + 1]);
        const T bn = fma(-(xj * xj), r, x[j + 2]);
        a = __shfl_sync(kFullMask, an, j + 2);
        b = __shfl_sync(kFullMask, bn, j + 2);
      }
      publish_column<j>(x, l, s, failed, sh, colbase);
      d = dn;
    });
  }
  return failed;
}

// A follower warp: rows below the diagonal block, one per lane, L(r, j) = x_r[j] / L(j, j) and
// the rank-1 update of its later columns, column j as soon as the diagonal warp published it.
template <class T>
__device__ __forceinline__ void follow_panel(T (&x)[32], PanelShared<T>& sh, int colbase) {
  int avail = 0;
  static_for<0, 32>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (j >= avail) avail = wait_flag(&sh.flag, colbase + j + 1) - colbase;
    const RealPartOf<T> s = sh.sinv[j];
    const T l = x[j] * s;
    apply_column<j>(x, l, sh.lcol[j]);
  });
}

// ---- trailing update -----------------------------------------------------------------------

// Panels P0..P1 -= (their rows of panel J) (their columns' rows of panel J)^H.
// Double and complex double: FP64 MMA (complex: four per tile, on the real and imaginary parts,
// Re = Ar Br^T + Ai Bi^T and Im = Ai Br^T - Ar Bi^T); work item = (panel, 16-row tile, NS-th of
// the 4 8-column tiles).
template <int NS, class T>
__device__ __forceinline__ void update_by_mma(T* S, int N, int J, int P0, int P1, int rank, int workers) {
  constexpr bool complex = !std::is_same_v<T, double>;
  constexpr int parts = complex ? 2 : 1;  // acc[0]: the real part, acc[1]: the imaginary one
  const int lane = static_cast<int>(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  const int ldJ = panel_ld(N, J);
  const T* LJ = S + panel_offset(N, J);
  constexpr int NT = 4 / NS;
  int item = 0;
  for (int P = P0; P <= P1; ++P) {
    const int RP = N - 32 * P, ldP = RP + 4;
    T* SP = S + panel_offset(N, P);
    const int rowJ0 = 32 * (P - J);
    const int items = (RP / 16) * NS;
    // this warp's first item of this panel
    int i = rank - item;
    i = i < 0 ? ((i % workers) + workers) % workers : i;
    for (; i < items; i += workers) {
      const int mt = i / NS, h = i % NS;
      const int nt0 = h * NT;
      // in the diagonal block's first 16 rows only columns 0..15 are needed
      const int ntn = (mt == 0) ? max(0, min(NT, 2 - nt0)) : NT;
      if (ntn == 0) continue;
      double acc[parts][NT][4];
#pragma unroll
      for (int q = 0; q < parts; ++q)
#pragma unroll
        for (int a = 0; a < NT; ++a)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[q][a][v] = 0.0;
      const T* qa = LJ + rowJ0 + 16 * mt + g;
      const T* qb = LJ + rowJ0 + 8 * nt0 + g;
#pragma unroll
      for (int kk = 0; kk < 32; kk += 8) {
        const int k0 = (kk + t) * ldJ, k1 = (kk + t + 4) * ldJ;
        const T fa[4] = {qa[k0], qa[k0 + 8], qa[k1], qa[k1 + 8]};
#pragma unroll
        for (int a = 0; a < NT; ++a) {
          if (a < ntn) {
            const T fb[2] = {qb[k0 + 8 * a], qb[k1 + 8 * a]};
            if constexpr (complex) {
              const double ar[4] = {fa[0].re, fa[1].re, fa[2].re, fa[3].re};
              const double ai[4] = {fa[0].im, fa[1].im, fa[2].im, fa[3].im};
              const double an[4] = {-fa[0].re, -fa[1].re, -fa[2].re, -fa[3].re};
              const double br[2] = {fb[0].re, fb[1].re}, bi[2] = {fb[0].im, fb[1].im};
              dmma_16x8x8(acc[0][a], ar, br);
              dmma_16x8x8(acc[0][a], ai, bi);
              dmma_16x8x8(acc[1][a], ai, br);
              dmma_16x8x8(acc[1][a], an, bi);
            } else {
              dmma_16x8x8(acc[0][a], fa, fb);
            }
          }
        }
      }
#pragma unroll
      for (int a = 0; a < NT; ++a) {
        if (a < ntn) {
#pragma unroll
          for (int v = 0; v < 4; ++v) {
            const int r = 16 * mt + g + 8 * (v >> 1), c = 8 * (nt0 + a) + 2 * t + (v & 1);
            T& out = SP[c * ldP + r];
            if constexpr (complex)
              out = {out.re - acc[0][a][v], out.im - acc[1][a][v]};
            else
              out -= acc[0][a][v];
          }
        }
      }
    }
    item += items;
  }
}

// Float and complex float: FFMA; work item = (panel, 32-row block, 16-column half); lane: 4 rows x
// 4 columns.
template <int NS, class T>
__device__ __forceinline__ void update_by_fma(T* S, int N, int J, int P0, int P1, int rank, int workers) {
  constexpr bool complex = !std::is_same_v<T, float>;
  const int lane = static_cast<int>(threadIdx.x) & 31, rg = lane & 7, cg = lane >> 3;
  const int ldJ = panel_ld(N, J);
  const T* LJ = S + panel_offset(N, J);
  int item = 0;
  for (int P = P0; P <= P1; ++P) {
    const int RP = N - 32 * P, ldP = RP + 4;
    T* SP = S + panel_offset(N, P);
    const int rowJ0 = 32 * (P - J);
    const int items = (RP / 32) * 2;
    int i = rank - item;
    i = i < 0 ? ((i % workers) + workers) % workers : i;
    for (; i < items; i += workers) {
      const int rb = i >> 1, h = i & 1;
      float re[4][4], im[4][4];  // im: complex only
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) re[a][b] = im[a][b] = 0.f;
      const T* qa = LJ + rowJ0 + 32 * rb + 4 * rg;
      const T* qb = LJ + rowJ0 + 16 * h + 4 * cg;
      constexpr int kUnroll = complex ? 4 : 8;
#pragma unroll kUnroll
      for (int k = 0; k < 32; ++k) {
        // four consecutive elements of each operand: one float4 (real) or two (complex)
        float ar[4], ai[4], br[4], bi[4];
        if constexpr (complex) {
          const float4 a01 = *reinterpret_cast<const float4*>(qa + k * ldJ);
          const float4 a23 = *reinterpret_cast<const float4*>(qa + k * ldJ + 2);
          const float4 b01 = *reinterpret_cast<const float4*>(qb + k * ldJ);
          const float4 b23 = *reinterpret_cast<const float4*>(qb + k * ldJ + 2);
          ar[0] = a01.x, ai[0] = a01.y, ar[1] = a01.z, ai[1] = a01.w, ar[2] = a23.x, ai[2] = a23.y, ar[3] = a23.z,
          ai[3] = a23.w;
          br[0] = b01.x, bi[0] = b01.y, br[1] = b01.z, bi[1] = b01.w, br[2] = b23.x, bi[2] = b23.y, br[3] = b23.z,
          bi[3] = b23.w;
        } else {
          const float4 av = *reinterpret_cast<const float4*>(qa + k * ldJ);
          const float4 bv = *reinterpret_cast<const float4*>(qb + k * ldJ);
          ar[0] = av.x, ar[1] = av.y, ar[2] = av.z, ar[3] = av.w;
          br[0] = bv.x, br[1] = bv.y, br[2] = bv.z, br[3] = bv.w;
        }
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
          for (int b = 0; b < 4; ++b) {
            if constexpr (complex) {
              re[a][b] = fmaf(ai[a], bi[b], fmaf(ar[a], br[b], re[a][b]));
              im[a][b] = fmaf(-ar[a], bi[b], fmaf(ai[a], br[b], im[a][b]));
            } else {
              re[a][b] = fmaf(ar[a], br[b], re[a][b]);
            }
          }
      }
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        float4* dst = reinterpret_cast<float4*>(SP + (16 * h + 4 * cg + b) * ldP + 32 * rb + 4 * rg);
        if constexpr (complex) {
          float4 o01 = dst[0], o23 = dst[1];
          o01.x -= re[0][b], o01.y -= im[0][b], o01.z -= re[1][b], o01.w -= im[1][b];
          o23.x -= re[2][b], o23.y -= im[2][b], o23.z -= re[3][b], o23.w -= im[3][b];
          dst[0] = o01;
          dst[1] = o23;
        } else {
          float4 o = *dst;
          o.x -= re[0][b], o.y -= re[1][b], o.z -= re[2][b], o.w -= re[3][b];
          *dst = o;
        }
      }
    }
    item += items;
  }
}

// The update in T's arithmetic: FP64 MMA in the double types, FFMA in the single ones.
template <int NS, class T>
__device__ __forceinline__ void update(T* S, int N, int J, int P0, int P1, int rank, int workers) {
  if constexpr (std::is_same_v<RealPartOf<T>, double>)
    update_by_mma<NS>(S, N, J, P0, P1, rank, workers);
  else
    update_by_fma<NS>(S, N, J, P0, P1, rank, workers);
}

// ---- warp roles ----------------------------------------------------------------------------

// Warps other than 0, those off sub-partition 0 first: index i -> warp.
template <int NW>
__device__ __forceinline__ int follower_index(int w) {
  constexpr int count = NW - NW / 4;  // warps with w % 4 != 0
  return (w % 4 != 0) ? (w / 4) * 3 + (w % 4) - 1 : count + w / 4 - 1;
}

// ---- the kernel ----------------------------------------------------------------------------

// L(i, j) at L + i * lr + j * lc := the factor of the matrix whose element (i, j) lies at
// A + i * ar + j * ac (potrf_one_block).
template <class T, int CH>
__global__ void __launch_bounds__(kWarps<T> * 32, 1)
    one_block_potrf_kernel(int n, const T* A, long long ar, long long ac, long long a_matrix, T* L, long long lr,
                           long long lc, long long l_matrix, int out_of_place, int* info) {
  constexpr int NW = kWarps<T>;
  // block b: matrix b of a stack (the pointers hidden from the compiler afterwards: derived from
  // the parameters throughout the kernel, they took registers that its rows need)
  if (blockIdx.x != 0) {
    A += blockIdx.x * a_matrix;
    L += blockIdx.x * l_matrix;
    info += blockIdx.x;
  }
  opaque(A);
  opaque(L);
  extern __shared__ __align__(16) unsigned char one_block_smem[];
  T* S = reinterpret_cast<T*>(one_block_smem);
  __shared__ __align__(16) PanelShared<T> sh;

  const int N = padded(n), NP = N / 32;
  const int tid = static_cast<int>(threadIdx.x), warp = tid >> 5, lane = tid & 31;
  const int fidx = warp == 0 ? -1 : follower_index<NW>(warp);
  constexpr int kNon0 = NW - NW / 4;

  if (tid == 0) {
    sh.flag = 0;
    sh.fail = 32;
    if (NP == 0) *info = 0;
  }
  __syncthreads();

  int failed_column = -1;  // 0-based, over the whole matrix
  for (int J = 0; J < NP; ++J) {
    const int m = NP - J;  // 32-row blocks of panel J
    const int ldJ = panel_ld(N, J);
    T* SJ = S + panel_offset(N, J);
    const int colbase = 32 * J;
    if (warp == 0 || fidx < m - 1) {
      // ---- panel J: the diagonal warp (block 0) or a follower (block b) ----
      const int b = warp == 0 ? 0 : fidx + 1;
      const int rl = 32 * b + lane;  // row within panel J
      const int rg = colbase + rl;   // row of the matrix
      T x[32];
      if (J == 0) {
#pragma unroll
        for (int k = 0; k < 32; ++k) {
          const bool inside = rg < n && k < n && (b > 0 || k <= lane);
          x[k] = inside ? A[rg * ar + k * ac] : T(rg == k ? 1 : 0);
        }
      } else {
#pragma unroll
        for (int k = 0; k < 32; ++k) x[k] = (b > 0 || k <= lane) ? SJ[k * ldJ + rl] : T(0);
      }
      int failed;
      if (warp == 0) {
        failed = diag_panel<T, CH>(x, sh, colbase);
      } else {
        follow_panel<T>(x, sh, colbase);
        failed = sh.fail;  // written before the last column's release, which this warp acquired
        // rows below the diagonal block: kept in shared memory for the trailing update
        T* dst = SJ + rl;
        opaque(dst);  // fresh addresses: shared with the loads', they stayed live and spilled
#pragma unroll
        for (int k = 0; k < 32; ++k) dst[k * ldJ] = x[k];
      }
      if (rg < n) {
        T* out = L + rg * lr + colbase * lc;
        opaque(out);
        const int kmax = min(failed, n - colbase);
#pragma unroll
        for (int k = 0; k < 32; ++k) {
          if (k < kmax && (b > 0 || k <= lane)) *out = x[k];
          out += lc;
        }
      }
    } else if (J == 0) {
      // ---- the other warps: panels 1.. into shared memory (lower part; padding = identity),
      // and an out-of-place factor's strict upper triangle zeroed ----
      const int rank = fidx - (m - 1), workers = NW - m;
      const int cols = 32 * (NP - 1);
      for (int q = rank; q < cols; q += workers) {
        const int P = 1 + q / 32, c = q % 32;
        const int RP = N - 32 * P, ldP = RP + 4;
        T* SP = S + panel_offset(N, P) + c * ldP;
        const int cg = 32 * P + c;
        for (int rl = c + lane; rl < RP; rl += 32) {
          const int r = 32 * P + rl;
          if (r < n && cg < n)
            cp_async_elem(SP + rl, A + r * ar + cg * ac, true);
          else
            SP[rl] = T(r == cg ? 1 : 0);
        }
      }
      cp_async_commit();
      if (out_of_place) {
        // along L's contiguous dimension (lr == 1: down its columns)
        const bool by_columns = lr == 1;
        for (int e = rank * 32 + lane; e < n * n; e += workers * 32) {
          const int r = by_columns ? e % n : e / n, c = by_columns ? e / n : e % n;
          if (r < c) L[r * lr + c * lc] = T(0);
        }
      }
      cp_async_wait<0>();
    } else if (J + 1 < NP) {
      // ---- deferred update: panel J - 1 into panels J + 1.. ----
      const int rank = fidx - (m - 1);
      const int workers = kNon0 - (m - 1);
      if (rank < workers) update<1>(S, N, J - 1, J + 1, NP - 1, rank, workers);
    }
    __syncthreads();
    const int failed = sh.fail;
    if (failed < 32) {
      failed_column = colbase + failed;
      if (tid == 0) *info = failed_column + 1;
      break;
    }
    if (J == NP - 1) {
      if (tid == 0) *info = 0;
      break;
    }
    update<2>(S, N, J, J + 1, J + 1, warp, NW);
    __syncthreads();
  }
  if (out_of_place && failed_column >= 0) {
    // the columns from the failing one as A's, as an in-place call leaves them
    for (int e = tid; e < n * n; e += NW * 32) {
      const int r = e % n, c = e / n;
      if (c >= failed_column && r >= c) L[r * lr + c * lc] = A[r * ar + c * ac];
    }
  }
}

}  // namespace

template <class T>
void launch_one_block_potrf(int n, int batch, const T* A, long long ar, long long ac, long long a_matrix, T* L,
                            long long lr, long long lc, long long l_matrix, bool out_of_place, int* info,
                            cudaStream_t stream) {
  if (batch == 0) return;
  constexpr int chain = std::is_same_v<T, float> ? 1 : 0;
  const auto kernel = one_block_potrf_kernel<T, chain>;
  const std::size_t smem = dynamic_smem_bytes<T>(n);
  ensure_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  kernel<<<batch, kWarps<T> * 32, smem, stream>>>(n, A, ar, ac, a_matrix, L, lr, lc, l_matrix, out_of_place ? 1 : 0,
                                                   info);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace detail

template <class T>
bool potrf_one_block_fits(int n) {
  using D = batched_detail::DeviceScalar<T>;
  return n >= 0 && n <= one_block_potrf_max_n &&
         detail::dynamic_smem_bytes<D>(n) + sizeof(detail::PanelShared<D>) <= detail::max_dynamic_smem();
}

template <class T>
void potrf_one_block(int n, const T* A, long long a_row, long long a_col, T* L, long long l_row, long long l_col,
                     bool out_of_place, int* info, cudaStream_t stream) {
  potrf_one_block_stack(n, 1, A, a_row, a_col, 0, L, l_row, l_col, 0, out_of_place, info, stream);
}

template <class T>
void potrf_one_block_stack(int n, int batch, const T* A, long long a_row, long long a_col, long long a_matrix, T* L,
                           long long l_row, long long l_col, long long l_matrix, bool out_of_place, int* info,
                           cudaStream_t stream) {
  detail::launch_one_block_potrf(n, batch, batched_detail::device_view(A), a_row, a_col, a_matrix,
                                 batched_detail::device_view(L), l_row, l_col, l_matrix, out_of_place, info, stream);
}

#define TESSERA_INSTANTIATE(T)                                                                               \
  template bool potrf_one_block_fits<T>(int);                                                                \
  template void potrf_one_block<T>(int, const T*, long long, long long, T*, long long, long long, bool, int*, \
                                   cudaStream_t);                                                            \
  template void potrf_one_block_stack<T>(int, int, const T*, long long, long long, long long, T*, long long,   \
                                         long long, long long, bool, int*, cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
