// potf2: Cholesky of one n x n tile (lower).
//  - Fused: one thread block factors the whole tile. The lower triangle is staged once in shared
//    memory as column panels of width IB (panel J keeps rows J*IB..n-1), then the panels are
//    processed left-looking inside the kernel: update panel J with all panels to its left
//    (FP64 tensor-core MMA for double, FMA for float), factor its diagonal block with one warp,
//    solve the rows below with one thread per row, write the panel back.
//  - Blocked, for n above the crossover: for each block column of width nb, the fused kernel
//    factors the diagonal block, trsm_rlt solves the panel below it and syrk_ln updates the
//    trailing matrix. Info is reported by the first failing diagonal block (later blocks only
//    write it while it is still 0, so the first failure wins in stream order).
//  - cfg.variant 1 (block columns spread over the panel's rows, their columns passed between
//    warps) was removed: slower than variant 2 everywhere, and its first thread block wrote the
//    diagonal block while later ones could still be reading it.
//  - Warp panels (cfg.variant 2, tile_potf2_warp.cu): block columns of 32 or 64 whose diagonal
//    blocks one warp each factors while the thread block's other warps hold panel rows, then
//    syrk_ln.
//  - Dataflow (cfg.variant 3, tile_potf2_dataflow.cu): the whole tile in one persistent kernel
//    whose thread blocks take panel and update tasks in order, waiting on counters.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <type_traits>

#include "tile_common.cuh"
#include "tile_potf2_dataflow.cuh"
#include "tile_potf2_warp.cuh"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace detail {
namespace {

// Rows of a shared-memory panel of `rows` rows: slack for 16-row MMA tiles and 8-column
// operand tiles past the last row, and a stride = 4 (mod 16) so that FP64 fragment loads
// (8 rows x 4 columns per half-warp) fall in distinct banks.
__host__ __device__ constexpr int panel_ld(int rows) { return round_up(rows + 8, 16) + 4; }

__host__ __device__ inline std::size_t fused_smem_elems(int n, int ib) {
  std::size_t total = 0;
  for (int j0 = 0; j0 < n; j0 += ib) total += static_cast<std::size_t>(ib) * panel_ld(n - j0);
  return total;
}

// P (panel J: R rows, w columns) -= sum over panels Jp < J of Q_Jp(rows of P) Q_Jp(cols of P)^T.
// FP64 tensor cores: each warp owns 16-row blocks of P and all its (<= IB) columns.
template <int IB, int THREADS>
__device__ void fused_update_mma(const double* S, int n, int J, double* P, int R, int ld, int w) {
  constexpr int NI = IB / 8;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int row_blocks = ceil_div(R, 16);
  for (int rb = warp; rb < row_blocks; rb += THREADS / 32) {
    double acc[NI][4];
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[ni][v] = 0.0;
    int poff = 0;
    for (int jp = 0; jp < J; ++jp) {
      const int shift = (J - jp) * IB;  // row r of panel J is row r + shift of panel jp
      const int ldp = panel_ld(n - jp * IB);
      const double* qa = S + poff + shift + rb * 16 + g;
      const double* qb = S + poff + shift + g;
#pragma unroll
      for (int kk = 0; kk < IB; kk += 8) {
        const int k0 = (kk + t) * ldp, k1 = (kk + t + 4) * ldp;
        const double a[4] = {qa[k0], qa[k0 + 8], qa[k1], qa[k1 + 8]};
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) {
          if (ni * 8 < w) {  // warp-uniform
            const double b[2] = {qb[k0 + ni * 8], qb[k1 + ni * 8]};
            dmma_16x8x8(acc[ni], a, b);
          }
        }
      }
      poff += IB * ldp;
    }
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      if (ni * 8 < w) {
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int r = rb * 16 + g + 8 * (v >> 1), c = ni * 8 + 2 * t + (v & 1);
          P[c * ld + r] -= acc[ni][v];  // rows past R are zero padding inside the panel
        }
      }
    }
  }
}

// Same update with FMA: each thread owns 4 rows (stride THREADS/(IB/4)) x 4 columns.
template <class T, int IB, int THREADS>
__device__ void fused_update_fma(const T* S, int n, int J, T* P, int R, int ld, int w) {
  constexpr int TN = 4, TM = 4, CG = IB / TN, RG = THREADS / CG;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % CG, ty = tid / CG;
  for (int rbase = 0; rbase < R; rbase += RG * TM) {
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    int poff = 0;
    for (int jp = 0; jp < J; ++jp) {
      const int shift = (J - jp) * IB;
      const int ldp = panel_ld(n - jp * IB);
      const T* q0 = S + poff + shift;
#pragma unroll 4
      for (int q = 0; q < IB; ++q) {
        const T* col = q0 + q * ldp;
        T a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int r = rbase + ty + i * RG;
          a[i] = r < R ? col[r] : T(0);
        }
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int c = tx + j * CG;
          b[j] = c < w ? col[c] : T(0);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
      }
      poff += IB * ldp;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int r = rbase + ty + i * RG, c = tx + j * CG;
        if (r < R && c < w) P[c * ld + r] -= acc[i][j];
      }
  }
}

// Cholesky of the w x w diagonal block at the top of panel P, by warp 0. Lane c holds row c of
// the symmetric block in registers; step jj broadcasts column jj through shared memory and the
// next pivot by one shuffle (computed by its owner before the rest of the update, so the
// critical path per column is shuffle -> rsqrt -> fma). Returns through *fail_col the 0-based
// column of the first non-positive or NaN pivot, or -1.
template <class T, int IB>
__device__ void fused_factor_diagonal(T* P, int ld, int w, T* invd, T (*lcol)[32], int* fail_col) {
  const int c = static_cast<int>(threadIdx.x);
  T x[IB];
#pragma unroll
  for (int r = 0; r < IB; ++r) {
    const int hi = max(r, c), lo = min(r, c);
    x[r] = (r < w && c < w) ? P[lo * ld + hi] : T(0);
  }
  int failed = -1;
  T pivot = __shfl_sync(kFullMask, x[0], 0);
#pragma unroll
  for (int jj = 0; jj < IB; ++jj) {
    if (jj >= w) break;
    const T d = pivot;
    if (!(d > T(0))) {
      failed = jj;
      break;
    }
    const T s = reciprocal_sqrt(d);
    const T l = x[jj] * s;  // L(c, jj) on lane c >= jj
    if (jj + 1 < IB) pivot = __shfl_sync(kFullMask, fma(-l, l, x[jj + 1]), jj + 1);
    T* col = lcol[jj & 1];
    col[c] = l;
    __syncwarp();
#pragma unroll
    for (int r = jj + 1; r < IB; ++r) x[r] = fma(-col[r], l, x[r]);
    x[jj] = l;
    if (c == 0) invd[jj] = s;
  }
  const int done = failed < 0 ? w : failed;
  if (c < w) {
#pragma unroll
    for (int jj = 0; jj < IB; ++jj)
      if (jj <= c && jj < done) P[jj * ld + c] = x[jj];
  }
  if (c == 0) *fail_col = failed;
}

// Rows w..R-1 of panel P := rows * L^{-T} (L the factored diagonal block), one thread per row;
// results go to shared memory (for later panels) and to the tile in global memory.
template <class T, int IB, int THREADS>
__device__ void fused_solve_below(T* P, int ld, int R, int w, const T* invd, T* Ag, int lda) {
  for (int r = w + static_cast<int>(threadIdx.x); r < R; r += THREADS) {
    T p[IB];
#pragma unroll
    for (int c = 0; c < IB; ++c) p[c] = c < w ? P[c * ld + r] : T(0);
    substitute_row<T, IB>(p, w, P, ld, invd);
#pragma unroll
    for (int c = 0; c < IB; ++c) {
      if (c < w) {
        P[c * ld + r] = p[c];
        Ag[r + static_cast<std::size_t>(c) * lda] = p[c];
      }
    }
  }
}

// Writes columns [0, ncols) of the diagonal block (rows c..w-1) of panel P to the tile.
template <class T, int THREADS>
__device__ void fused_store_diagonal(const T* P, int ld, int w, int ncols, T* Ag, int lda) {
  for (int e = static_cast<int>(threadIdx.x); e < w * ncols; e += THREADS) {
    const int c = e / w, r = e % w;
    if (r >= c) Ag[r + static_cast<std::size_t>(c) * lda] = P[c * ld + r];
  }
}

template <class T, int IB, int THREADS, bool MMA>
__global__ void __launch_bounds__(THREADS, 1)
    potf2_fused_kernel(int n, T* A, int lda, int* info, int info_offset, int overwrite_info) {
  static_assert(IB % 8 == 0 && IB <= 32, "panel width is 8..32 (one warp factors it)");
  extern __shared__ __align__(16) unsigned char potf2_smem[];
  T* S = reinterpret_cast<T*>(potf2_smem);
  __shared__ T invd[IB];
  __shared__ T lcol[2][32];
  __shared__ int fail_col;

  const int tid = static_cast<int>(threadIdx.x);
  const int panels = ceil_div(n, IB);

  // Stage the lower triangle, zero elsewhere (upper part of diagonal blocks, padding rows);
  // panel 0 is its own copy group so that its work starts before the rest has landed.
  {
    int off = 0;
    for (int J = 0; J < panels; ++J) {
      const int j0 = J * IB, R = n - j0, ld = panel_ld(R), w = min(IB, R);
      for (int e = tid; e < IB * ld; e += THREADS) {
        const int c = e / ld, r = e - c * ld;
        const bool ok = c < w && r < R && r >= c;
        cp_async_elem(S + off + e, ok ? A + (j0 + r) + static_cast<std::size_t>(j0 + c) * lda : A,
                      ok);
      }
      if (J == 0) cp_async_commit();
      off += IB * ld;
    }
    cp_async_commit();
  }

  int off = 0;
  for (int J = 0; J < panels; ++J) {
    const int j0 = J * IB, R = n - j0, ld = panel_ld(R), w = min(IB, R);
    T* P = S + off;
    T* Ag = A + j0 + static_cast<std::size_t>(j0) * lda;
    if (J == 0)
      cp_async_wait<1>();
    else if (J == 1)
      cp_async_wait<0>();
    __syncthreads();
    if (J > 0) {
      if constexpr (MMA)
        fused_update_mma<IB, THREADS>(S, n, J, P, R, ld, w);
      else
        fused_update_fma<T, IB, THREADS>(S, n, J, P, R, ld, w);
      __syncthreads();
    }
    if (tid < 32) fused_factor_diagonal<T, IB>(P, ld, w, invd, lcol, &fail_col);
    __syncthreads();
    const int failed = fail_col;
    if (failed >= 0) {
      fused_store_diagonal<T, THREADS>(P, ld, w, failed, Ag, lda);
      if (tid == 0) report_info(info, info_offset + j0 + failed + 1, overwrite_info != 0);
      return;
    }
    fused_solve_below<T, IB, THREADS>(P, ld, R, w, invd, Ag, lda);
    fused_store_diagonal<T, THREADS>(P, ld, w, w, Ag, lda);
    off += IB * ld;
  }
  if (tid == 0 && overwrite_info) *info = 0;
}

// ---- host side -----------------------------------------------------------------------------

constexpr std::size_t kStaticSmemReserve = 1024;  // invd, lcol, fail_col

template <class T>
std::size_t fused_smem_bytes(int n, int ib) {
  return fused_smem_elems(n, ib) * sizeof(T);
}

template <class T, int IB, int THREADS>
void launch_fused_shape(int n, T* A, int lda, int* info, int info_offset, bool overwrite,
                        cudaStream_t stream) {
  const std::size_t smem = fused_smem_bytes<T>(n, IB);
  if constexpr (std::is_same_v<T, double>) {
    if (device_cc() >= 80) {
      auto kernel = potf2_fused_kernel<double, IB, THREADS, true>;
      ensure_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
      kernel<<<1, THREADS, smem, stream>>>(n, A, lda, info, info_offset, overwrite ? 1 : 0);
      TESSERA_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  auto kernel = potf2_fused_kernel<T, IB, THREADS, false>;
  ensure_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  kernel<<<1, THREADS, smem, stream>>>(n, A, lda, info, info_offset, overwrite ? 1 : 0);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_fused(int n, T* A, int lda, int* info, int info_offset, bool overwrite, int ib,
                  int threads, cudaStream_t stream) {
  if (ib == 16 && threads == 128)
    launch_fused_shape<T, 16, 128>(n, A, lda, info, info_offset, overwrite, stream);
  else if (ib == 16 && threads == 256)
    launch_fused_shape<T, 16, 256>(n, A, lda, info, info_offset, overwrite, stream);
  else if (ib == 32 && threads == 128)
    launch_fused_shape<T, 32, 128>(n, A, lda, info, info_offset, overwrite, stream);
  else if (ib == 32 && threads == 256)
    launch_fused_shape<T, 32, 256>(n, A, lda, info, info_offset, overwrite, stream);
  else
    invalid_config("potf2 supports ib 16 or 32 with 128 or 256 threads");
}

template <class T>
int fused_max_n(int ib) {
  // Cached per (device, ib): the scan is cheap but potf2 calls it on every launch.
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> cache;
  int dev = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find({dev, ib});
    if (it != cache.end()) return it->second;
  }
  const std::size_t limit = max_dynamic_smem() - kStaticSmemReserve;
  int n = ib;
  while (fused_smem_bytes<T>(n + 1, ib) <= limit) ++n;
  std::lock_guard<std::mutex> lock(mutex);
  cache[{dev, ib}] = n;
  return n;
}

struct Potf2Plan {
  int ib, threads, nb;  // nb: fused crossover (block column width of the blocked path)
};

template <class T>
Potf2Plan plan_potf2(int n, const TileKernelConfig& cfg) {
  // Fields the caller left at 0 come from the built-in default when it is of this variant.
  TileKernelConfig def = default_tile_config(precision_of<T>(), "potf2", n);
  if (def.variant != 0) def = {};
  Potf2Plan p;
  p.ib = cfg.ib ? cfg.ib : (def.ib ? def.ib : 32);
  p.threads = cfg.threads ? cfg.threads : (def.threads ? def.threads : 256);
  p.nb = cfg.crossover ? cfg.crossover : (def.crossover ? def.crossover : 128);
  if (p.ib != 16 && p.ib != 32) invalid_config("potf2 ib must be 16 or 32");
  if (p.threads != 128 && p.threads != 256) invalid_config("potf2 threads must be 128 or 256");
  if (p.nb < p.ib) invalid_config("potf2 crossover must be at least ib");
  p.nb = std::min(p.nb, fused_max_n<T>(p.ib));
  return p;
}

// cfg as given, or the built-in default for this order when cfg is all zero (a default names a
// whole configuration: its fields are not mixed with the caller's).
template <class T>
TileKernelConfig effective_config(int n, const TileKernelConfig& cfg) {
  return cfg == TileKernelConfig{} ? default_tile_config(precision_of<T>(), "potf2", n) : cfg;
}

template <class T>
std::size_t blocked_workspace_bytes(int n, const Potf2Plan& p) {
  return n > p.nb ? trsm_rlt_workspace_bytes<T>(n - p.nb, p.nb) : 0;
}

template <class T>
void potf2_blocked(const Potf2Plan& p, int n, T* A, int lda, int* info, void* work,
                   std::size_t work_bytes, cudaStream_t stream) {
  for (int j0 = 0; j0 < n; j0 += p.nb) {
    const int w = std::min(p.nb, n - j0);
    T* Ajj = A + j0 + static_cast<std::size_t>(j0) * lda;
    launch_fused<T>(w, Ajj, lda, info, j0, j0 == 0, p.ib, p.threads, stream);
    const int rest = n - j0 - w;
    if (rest == 0) break;
    T* Apanel = Ajj + w;
    trsm_rlt<T>(rest, w, Ajj, lda, Apanel, lda, work, work_bytes, stream);
    syrk_ln<T>(rest, w, Apanel, lda, Apanel + static_cast<std::size_t>(w) * lda, lda, stream);
  }
}

// Counters of variant 2 or 3 (every other variant value is refused here or by plan_potf2).
std::size_t panel_variant_workspace_bytes(int n, const TileKernelConfig& cfg) {
  return cfg.variant == 2 ? potf2_warp_workspace_bytes(n, cfg) : potf2_dataflow_workspace_bytes(n, cfg);
}

void check_variant(const TileKernelConfig& cfg) {
  if (cfg.variant != 0 && cfg.variant != 2 && cfg.variant != 3)
    invalid_config("potf2 variant must be 0 (fused or blocked), 2 (warp panels) or 3 (dataflow)");
}

// Runs run(workspace, bytes) with `need` bytes of workspace: the caller's (checked), or, when the
// call owns its workspace, from the pool for the duration of the call.
template <class Run>
void with_workspace(std::size_t need, void* work, std::size_t work_bytes, bool own_workspace, cudaStream_t stream,
                    Run&& run) {
  if (!own_workspace) {
    require(need == 0 || (work != nullptr && work_bytes >= need), "potf2: workspace smaller than potf2_workspace_bytes",
            6);
    run(work, work_bytes);
    return;
  }
  void* w = need ? pool_alloc(need, stream) : nullptr;
  try {
    run(w, need);
  } catch (...) {
    pool_free(w, stream);
    throw;
  }
  pool_free(w, stream);
}

template <class T>
void potf2_checked(int n, T* A, int lda, int* d_info, void* work, std::size_t work_bytes,
                   bool own_workspace, cudaStream_t stream, const TileKernelConfig& cfg) {
  require(n >= 0, "potf2: n < 0", 1);
  require(lda >= std::max(1, n), "potf2: lda < max(1, n)", 3);
  require(d_info != nullptr, "potf2: null info pointer", 4);
  if (n == 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(d_info, 0, sizeof(int), stream));
    return;
  }
  require(A != nullptr, "potf2: null matrix pointer", 2);
  const TileKernelConfig chosen = effective_config<T>(n, cfg);
  check_variant(chosen);
  if (chosen.variant == 2 || chosen.variant == 3) {
    with_workspace(panel_variant_workspace_bytes(n, chosen), work, work_bytes, own_workspace, stream,
                   [&](void* w, std::size_t) {
                     if (chosen.variant == 2)
                       potf2_warp_panels<T>(n, A, lda, d_info, w, stream, chosen);
                     else
                       potf2_dataflow<T>(n, A, lda, d_info, w, stream, chosen);
                   });
    return;
  }
  const Potf2Plan p = plan_potf2<T>(n, chosen);
  if (n <= p.nb) {
    launch_fused<T>(n, A, lda, d_info, 0, true, p.ib, p.threads, stream);
    return;
  }
  with_workspace(blocked_workspace_bytes<T>(n, p), work, work_bytes, own_workspace, stream,
                 [&](void* w, std::size_t bytes) { potf2_blocked(p, n, A, lda, d_info, w, bytes, stream); });
}

}  // namespace
}  // namespace detail

template <class T>
void potf2(int n, T* A, int lda, int* d_info, cudaStream_t stream, const TileKernelConfig& cfg) {
  detail::potf2_checked(n, A, lda, d_info, nullptr, 0, true, stream, cfg);
}

template <class T>
void potf2(int n, T* A, int lda, int* d_info, void* workspace, std::size_t workspace_bytes,
           cudaStream_t stream, const TileKernelConfig& cfg) {
  detail::potf2_checked(n, A, lda, d_info, workspace, workspace_bytes, false, stream, cfg);
}

template <class T>
std::size_t potf2_workspace_bytes(int n, const TileKernelConfig& cfg) {
  if (n <= 0) return 0;
  const TileKernelConfig chosen = detail::effective_config<T>(n, cfg);
  detail::check_variant(chosen);
  if (chosen.variant == 2 || chosen.variant == 3) return detail::panel_variant_workspace_bytes(n, chosen);
  return detail::blocked_workspace_bytes<T>(n, detail::plan_potf2<T>(n, chosen));
}

template <class T>
int potf2_fused_max_n(int ib) {
  if (ib != 16 && ib != 32) detail::invalid_config("potf2 ib must be 16 or 32");
  return detail::fused_max_n<T>(ib);
}

#define TESSERA_INSTANTIATE(T)                                                                           \
  template void potf2<T>(int, T*, int, int*, cudaStream_t, const TileKernelConfig&);                     \
  template void potf2<T>(int, T*, int, int*, void*, std::size_t, cudaStream_t, const TileKernelConfig&); \
  template std::size_t potf2_workspace_bytes<T>(int, const TileKernelConfig&);                           \
  template int potf2_fused_max_n<T>(int);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
