// trsm_rlt: B := B L^{-T} (right side, lower, transposed, non-unit), the Cholesky panel solve.
// Rows of B are independent, so the solve recurses over the columns: the first half is solved,
// the second half updated with one large gemm (C -= X1 L21^T) and then solved. Leaves of width
// nl (cfg.ib) are solved by one of two variants:
//  - inverse (variant 2): one launch inverts every nl x nl diagonal block of L into workspace,
//    then each leaf is a gemm B_J := B_J D_J^T (blocks own whole rows, so it runs in place);
//  - direct (variant 1): one thread per row of B runs the forward substitution in registers
//    against the diagonal block held in shared memory (no workspace).
#include <algorithm>
#include <cstdint>
#include <string>

#include "tile_common.cuh"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace detail {
namespace {

constexpr int kVariantDirect = 1;
constexpr int kVariantInverse = 2;

// Inverts the lower-triangular diagonal blocks of L (order n, block nl) into D: block b is a
// dense nl x nl column-major matrix at D + b nl^2 with explicit zeros above the diagonal and
// outside the block's order. Gauss-Jordan on unscaled rows: at step kk, row kk of X is final up
// to its scale 1/L(kk,kk), and rows below subtract L(i,kk)/L(kk,kk) times it.
template <class T, int NL, int THREADS>
__global__ void __launch_bounds__(THREADS) trsm_invert_diagonal_kernel(int n, const T* L, int ldl,
                                                                      T* D) {
  static_assert(THREADS % NL == 0 && (NL * NL) % THREADS == 0, "thread owns one row slice");
  constexpr int LDS = NL + 1;
  constexpr int JSTEP = THREADS / NL;
  constexpr int Q = NL * NL / THREADS;
  __shared__ T Ls[NL * LDS];
  __shared__ T invd[NL];
  __shared__ T row_kk[2][NL];

  const int b = static_cast<int>(blockIdx.x);
  const int j0 = b * NL, w = min(NL, n - j0);
  const int tid = static_cast<int>(threadIdx.x);
  for (int e = tid; e < NL * NL; e += THREADS) {
    const int c = e / NL, r = e % NL;
    Ls[c * LDS + r] =
        (r < w && c < w && r >= c) ? L[(j0 + r) + static_cast<std::size_t>(j0 + c) * ldl] : T(0);
  }
  __syncthreads();
  for (int r = tid; r < w; r += THREADS) invd[r] = T(1) / Ls[r * LDS + r];
  __syncthreads();

  const int i = tid % NL, jb = tid / NL;
  T x[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) x[q] = (i == jb + q * JSTEP) ? T(1) : T(0);

  for (int kk = 0; kk < w; ++kk) {
    T* row = row_kk[kk & 1];
    if (i == kk) {
#pragma unroll
      for (int q = 0; q < Q; ++q) row[jb + q * JSTEP] = x[q];
    }
    __syncthreads();
    if (i > kk && i < w) {
      const T f = Ls[kk * LDS + i] * invd[kk];
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int j = jb + q * JSTEP;
        if (j <= kk) x[q] = fma(-f, row[j], x[q]);
      }
    }
  }

  T* Db = D + static_cast<std::size_t>(b) * NL * NL;
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int j = jb + q * JSTEP;
    Db[j * NL + i] = (i >= j && i < w && j < w) ? x[q] * invd[i] : T(0);
  }
}

// Forward substitution of m rows of B (w <= NL columns) against the w x w lower block L.
template <class T, int NL, int THREADS>
__global__ void __launch_bounds__(THREADS) trsm_leaf_direct_kernel(int m, int w, const T* L, int ldl,
                                                                  T* B, int ldb) {
  constexpr int LDS = NL + 1;
  __shared__ T Ls[NL * LDS];
  __shared__ T invd[NL];
  const int tid = static_cast<int>(threadIdx.x);
  for (int e = tid; e < NL * NL; e += THREADS) {
    const int c = e / NL, r = e % NL;
    Ls[c * LDS + r] = (r < w && c < w && r >= c) ? L[r + static_cast<std::size_t>(c) * ldl] : T(0);
  }
  __syncthreads();
  for (int r = tid; r < w; r += THREADS) invd[r] = T(1) / Ls[r * LDS + r];
  __syncthreads();

  const int r = static_cast<int>(blockIdx.x) * THREADS + tid;
  if (r >= m) return;
  T p[NL];
#pragma unroll
  for (int c = 0; c < NL; ++c) p[c] = c < w ? B[r + static_cast<std::size_t>(c) * ldb] : T(0);
  substitute_row<T, NL>(p, w, Ls, LDS, invd);
#pragma unroll
  for (int c = 0; c < NL; ++c)
    if (c < w) B[r + static_cast<std::size_t>(c) * ldb] = p[c];
}

struct TrsmPlan {
  int nl;       // leaf width = diagonal block order
  int variant;  // kVariantDirect or kVariantInverse
  int leaf_bm;  // inverse leaves: gemm block rows
  int threads;  // direct leaves: rows (threads) per block
};

template <class T>
TrsmPlan plan_trsm(int n, const TileKernelConfig& cfg) {
  const TileKernelConfig def = default_tile_config(precision_of<T>(), "trsm", n);
  TrsmPlan p;
  p.nl = cfg.ib ? cfg.ib : (def.ib ? def.ib : 64);
  p.variant = cfg.variant ? cfg.variant : (def.variant ? def.variant : kVariantInverse);
  p.leaf_bm = cfg.tile ? cfg.tile : (def.tile ? def.tile : 32);
  p.threads = cfg.threads ? cfg.threads : (def.threads ? def.threads : 128);
  if (p.nl != 32 && p.nl != 64) invalid_config("trsm ib must be 32 or 64");
  if (p.variant != kVariantDirect && p.variant != kVariantInverse)
    invalid_config("trsm variant must be 1 (direct) or 2 (inverse)");
  if (p.variant == kVariantInverse && p.leaf_bm != 32 && p.leaf_bm != 64)
    invalid_config("trsm tile (leaf block rows) must be 32 or 64");
  if (p.variant == kVariantDirect && p.threads != 64 && p.threads != 128)
    invalid_config("trsm threads (direct leaves) must be 64 or 128");
  return p;
}

template <class T>
std::size_t inverse_bytes(int n, int nl) {
  return static_cast<std::size_t>(ceil_div(n, nl)) * nl * nl * sizeof(T);
}

template <class T>
void launch_invert_diagonal(int n, int nl, const T* L, int ldl, T* D, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(n, nl)));
  if (nl == 32)
    trsm_invert_diagonal_kernel<T, 32, 128><<<grid, 128, 0, stream>>>(n, L, ldl, D);
  else
    trsm_invert_diagonal_kernel<T, 64, 256><<<grid, 256, 0, stream>>>(n, L, ldl, D);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T, int NL>
void launch_direct_leaf(int m, int w, const T* L, int ldl, T* B, int ldb, int threads,
                        cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(m, threads)));
  switch (threads) {
    case 64: trsm_leaf_direct_kernel<T, NL, 64><<<grid, 64, 0, stream>>>(m, w, L, ldl, B, ldb); break;
    default: trsm_leaf_direct_kernel<T, NL, 128><<<grid, 128, 0, stream>>>(m, w, L, ldl, B, ldb); break;
  }
  TESSERA_CUDA_CHECK_LAUNCH();
}

// Solves the w <= nl columns starting at column j0 of the whole problem.
template <class T>
void trsm_leaf(const TrsmPlan& p, int m, int w, int j0, const T* L, int ldl, T* B, int ldb,
               const T* D, cudaStream_t stream) {
  if (p.variant == kVariantInverse) {
    const T* Dj = D + static_cast<std::size_t>(j0 / p.nl) * p.nl * p.nl;
    TileKernelConfig leaf;
    leaf.tile = p.leaf_bm;
    leaf.tile_n = p.nl;  // one block column covers the leaf: the product runs in place
    gemm_launch<T>(GemmMode::overwrite, m, w, w, B, ldb, Dj, p.nl, B, ldb, stream, leaf);
  } else if (p.nl == 32) {
    launch_direct_leaf<T, 32>(m, w, L, ldl, B, ldb, p.threads, stream);
  } else {
    launch_direct_leaf<T, 64>(m, w, L, ldl, B, ldb, p.threads, stream);
  }
}

template <class T>
void trsm_recursive(const TrsmPlan& p, int m, int n, int j0, const T* L, int ldl, T* B, int ldb,
                    const T* D, cudaStream_t stream) {
  if (n <= p.nl) {
    trsm_leaf(p, m, n, j0, L, ldl, B, ldb, D, stream);
    return;
  }
  const int n1 = round_up(ceil_div(n, 2), p.nl);
  trsm_recursive(p, m, n1, j0, L, ldl, B, ldb, D, stream);
  T* B2 = B + static_cast<std::size_t>(n1) * ldb;
  gemm_launch<T>(GemmMode::update, m, n - n1, n1, B, ldb, L + n1, ldl, B2, ldb, stream, {});
  trsm_recursive(p, m, n - n1, j0 + n1, L + n1 + static_cast<std::size_t>(n1) * ldl, ldl, B2, ldb,
                 D, stream);
}

}  // namespace
}  // namespace detail

template <class T>
std::size_t trsm_rlt_workspace_bytes(int m, int n, const TileKernelConfig& cfg) {
  if (m <= 0 || n <= 0) return 0;
  const detail::TrsmPlan p = detail::plan_trsm<T>(n, cfg);
  return p.variant == detail::kVariantInverse ? detail::inverse_bytes<T>(n, p.nl) : 0;
}

template <class T>
void trsm_rlt(int m, int n, const T* L, int ldl, T* B, int ldb, void* workspace,
              std::size_t workspace_bytes, cudaStream_t stream, const TileKernelConfig& cfg) {
  using detail::require;
  require(m >= 0, "trsm_rlt: m < 0", 1);
  require(n >= 0, "trsm_rlt: n < 0", 2);
  require(ldl >= std::max(1, n), "trsm_rlt: ldl < max(1, n)", 4);
  require(ldb >= std::max(1, m), "trsm_rlt: ldb < max(1, m)", 6);
  if (m == 0 || n == 0) return;
  require(L && B, "trsm_rlt: null matrix pointer", 0);
  const detail::TrsmPlan p = detail::plan_trsm<T>(n, cfg);
  T* D = nullptr;
  if (p.variant == detail::kVariantInverse) {
    require(workspace != nullptr && workspace_bytes >= detail::inverse_bytes<T>(n, p.nl),
            "trsm_rlt: workspace smaller than trsm_rlt_workspace_bytes", 7);
    require(reinterpret_cast<std::uintptr_t>(workspace) % 16 == 0,
            "trsm_rlt: workspace must be 16-byte aligned", 7);
    D = static_cast<T*>(workspace);
    detail::launch_invert_diagonal(n, p.nl, L, ldl, D, stream);
  }
  detail::trsm_recursive(p, m, n, 0, L, ldl, B, ldb, D, stream);
}

#define TESSERA_INSTANTIATE(T)                                                                  \
  template std::size_t trsm_rlt_workspace_bytes<T>(int, int, const TileKernelConfig&);          \
  template void trsm_rlt<T>(int, int, const T*, int, T*, int, void*, std::size_t, cudaStream_t, \
                            const TileKernelConfig&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
