// potf2, variant 2: right-looking over block columns of 32 or 64, each factored by one kernel,
// then syrk_ln of the trailing matrix.
//
// Each thread block holds the diagonal block (one warp per 32 rows, lane c = row c) and RP rows
// of the panel below it (one row per lane) in registers. One warp factors each 32 x 32 diagonal
// block with no barrier and no branch between column steps: the next pivot's owner computes it
// before the rest of the update and hands it over by one shuffle, and the column goes through
// shared memory to the other lanes. The chain from one pivot to the next is then shuffle,
// reciprocal square root, scale and one fma: several times shorter than when the columns passed
// between warps (the removed variant 1; docs/kernels-tile.md, section "potf2", has the cycle
// counts). Every thread
// block factors the diagonal block redundantly (the same arithmetic, so the same result); its
// other warps then solve their rows against it. Since every thread block reads the diagonal block
// of A, the first one writes its L last, once the others have counted themselves past reading it.
// Info: the first failing pivot in stream order, as the other variants report it.
#include <algorithm>

#include "tile_common.cuh"
#include "tile_potf2_warp.cuh"
#include "tile_warp_cholesky.cuh"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda::detail {
namespace {

// The block column A: w <= 32 H columns, the diagonal block on top and m rows below it (m > 0
// only when w = 32 H). Thread block b holds panel rows w + b RP .. w + (b + 1) RP - 1.
//
// Warp h < H holds rows 32 h .. 32 h + 31 of the diagonal block, the panel warps after them one
// panel row per lane; every lane keeps its row's 32 H columns in registers. Half h (columns
// 32 h ..) is factored by warp h, then solved by every warp after it; with two halves, warp 1
// publishes its rows' first half so that every later warp updates its second half before warp 1
// factors it. Rows and columns past w are an identity, so that no step depends on w.
template <class T, int H, int RP>
__global__ void __launch_bounds__(kWarpBlock * H + RP)
    potf2_warp_panel_kernel(int w, int m, T* A, int lda, int* info, int info_offset, int overwrite_info,
                            int* read_diagonal) {
  static_assert(H == 1 || H == 2, "block columns of 32 or 64");
  static_assert(RP % 32 == 0, "panel rows in whole warps");
  __shared__ __align__(16) T lcol[H][kWarpBlock][kWarpBlock];  // lcol[h][j][r] = L(32 h + r, 32 h + j)
  __shared__ T inv[H][kWarpBlock];                         // 1 / L(32 h + j, 32 h + j)
  __shared__ __align__(16) T lsub[H > 1 ? kWarpBlock : 1][kWarpBlock];  // lsub[k][c] = L(32 + c, k)
  __shared__ int failed_in[H];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const bool first_block = blockIdx.x == 0, diagonal = warp < H;
  const int row = diagonal ? kWarpBlock * warp + lane : w + static_cast<int>(blockIdx.x) * RP + (warp - H) * 32 + lane;
  const bool valid = row < w + (diagonal ? 0 : m);

  T x[H][kWarpBlock];
#pragma unroll
  for (int h = 0; h < H; ++h) {
#pragma unroll
    for (int k = 0; k < kWarpBlock; ++k) {
      const int col = kWarpBlock * h + k;
      const bool load = valid && col < w && (!diagonal || col <= row);
      x[h][k] = load ? A[row + static_cast<std::size_t>(col) * lda] : T(diagonal && col == row ? 1 : 0);
    }
  }
  // With two halves, the stores' addresses are computed afresh: shared with the loads', they held
  // about two registers per element for the whole kernel, and spilled.
  T* out = A;
  if (H > 1) opaque(out);

  // Each half of a panel row is stored as soon as it is final in this warp, so that its registers
  // are free while the next half is factored. The diagonal block's L is stored at the end, from
  // shared memory, by the first thread block once every other one is past reading the block.
  const bool stores = valid && !diagonal;
#pragma unroll
  for (int h = 0; h < H; ++h) {
    if (warp == h) {
      const int failed = factor_diagonal_warp<T>(x[h], lcol[h], inv[h]);
      if (lane == 0) failed_in[h] = failed;
    }
    __syncthreads();
    // After the last half's factorization every diagonal load of this block is consumed.
    if (h == H - 1 && !first_block) block_count_up(read_diagonal);
    if (warp > h) solve_against_diagonal<T>(x[h], lcol[h], inv[h]);
    if (h + 1 < H) {
      if (warp == h + 1)
#pragma unroll
        for (int k = 0; k < kWarpBlock; ++k) lsub[k][lane] = x[h][k];
      __syncthreads();
      if (warp > h)
#pragma unroll
        for (int k = 0; k < kWarpBlock; ++k) {
          const T l = x[h][k];
#pragma unroll
          for (int c = 0; c < kWarpBlock; ++c) x[h + 1][c] = fma(-l, lsub[k][c], x[h + 1][c]);
        }
    }
    // Columns before the first failing pivot are stored; failed_in[h] is set for every warp.
    const int good = (h == 0 || failed_in[0] == kWarpBlock) ? failed_in[h] : 0;
    if (stores && warp >= h) {
#pragma unroll
      for (int k = 0; k < kWarpBlock; ++k) {
        const int col = kWarpBlock * h + k;
        if (col < w && k < good && (!diagonal || col <= row)) out[row + static_cast<std::size_t>(col) * lda] = x[h][k];
      }
    }
  }

  int failed = failed_in[0];
  if (H > 1 && failed == kWarpBlock) failed += failed_in[H - 1];
  if (!first_block) return;
  block_wait_at_least(read_diagonal, static_cast<int>(gridDim.x) - 1);
  for (int i = static_cast<int>(threadIdx.x); i < kWarpBlock * H * kWarpBlock * H; i += static_cast<int>(blockDim.x)) {
    const int r = i % (kWarpBlock * H), col = i / (kWarpBlock * H);
    if (r < w && col <= r && col < failed) {
      // lcol[h][j][r'] = L(32 h + r', 32 h + j); lsub[k][c] = L(32 + c, k)
      const T v = r / kWarpBlock == col / kWarpBlock ? lcol[col / kWarpBlock][col % kWarpBlock][r % kWarpBlock]
                                                    : lsub[H > 1 ? col : 0][r % kWarpBlock];
      out[r + static_cast<std::size_t>(col) * lda] = v;
    }
  }
  if (threadIdx.x == 0) {
    if (failed < w)
      report_info(info, info_offset + failed + 1, overwrite_info != 0);
    else if (overwrite_info)
      *info = 0;
  }
}

template <class T, int H, int RP>
void launch_warp_panel(int w, int m, T* A, int lda, int* info, int info_offset, bool overwrite, int* read_diagonal,
                       cudaStream_t stream) {
  const int blocks = std::max(1, ceil_div(m, RP));
  potf2_warp_panel_kernel<T, H, RP><<<blocks, kWarpBlock * H + RP, 0, stream>>>(w, m, A, lda, info, info_offset,
                                                                            overwrite ? 1 : 0, read_diagonal);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// cfg's shape (zero fields: 64 columns, 64 rows), when it is one of kWarpPanelShapes.
WarpPanelShape warp_panel_shape(const TileKernelConfig& cfg) {
  const WarpPanelShape s{cfg.ib ? cfg.ib : 64, cfg.tile ? cfg.tile : 64};
  for (const WarpPanelShape& k : kWarpPanelShapes)
    if (k.width == s.width && k.rows == s.rows && (cfg.threads == 0 || cfg.threads == s.width + s.rows)) return s;
  invalid_config("potf2 variant 2 supports (ib, tile) = (32, 64|96), (64, 64|96|128), threads = ib + tile");
}

template <class T>
void launch_warp_panel_shape(const WarpPanelShape& s, int w, int m, T* A, int lda, int* info, int offset,
                             bool overwrite, int* read_diagonal, cudaStream_t stream) {
  if (s.width == 32 && s.rows == 64)
    launch_warp_panel<T, 1, 64>(w, m, A, lda, info, offset, overwrite, read_diagonal, stream);
  else if (s.width == 32 && s.rows == 96)
    launch_warp_panel<T, 1, 96>(w, m, A, lda, info, offset, overwrite, read_diagonal, stream);
  else if (s.width == 64 && s.rows == 64)
    launch_warp_panel<T, 2, 64>(w, m, A, lda, info, offset, overwrite, read_diagonal, stream);
  else if (s.width == 64 && s.rows == 96)
    launch_warp_panel<T, 2, 96>(w, m, A, lda, info, offset, overwrite, read_diagonal, stream);
  else if (s.width == 64 && s.rows == 128)
    launch_warp_panel<T, 2, 128>(w, m, A, lda, info, offset, overwrite, read_diagonal, stream);
  else
    invalid_config("potf2 variant 2: a shape of kWarpPanelShapes has no kernel instantiated");
}

}  // namespace

void check_potf2_warp_config(const TileKernelConfig& cfg) { (void)warp_panel_shape(cfg); }

std::size_t potf2_warp_workspace_bytes(int n, const TileKernelConfig& cfg) {
  return sizeof(int) * static_cast<std::size_t>(ceil_div(n, warp_panel_shape(cfg).width));
}

template <class T>
void potf2_warp_panels(int n, T* A, int lda, int* info, void* workspace, cudaStream_t stream,
                       const TileKernelConfig& cfg) {
  const WarpPanelShape shape = warp_panel_shape(cfg);
  int* read_diagonal = static_cast<int*>(workspace);  // one counter per block column
  TESSERA_CUDA_CHECK(cudaMemsetAsync(read_diagonal, 0, potf2_warp_workspace_bytes(n, cfg), stream));
  for (int j0 = 0; j0 < n; j0 += shape.width) {
    const int w = std::min(shape.width, n - j0), m = n - j0 - w;
    T* Ajj = A + j0 + static_cast<std::size_t>(j0) * lda;
    launch_warp_panel_shape<T>(shape, w, m, Ajj, lda, info, j0, j0 == 0, read_diagonal + j0 / shape.width, stream);
    if (m == 0) break;
    T* panel = Ajj + w;
    syrk_ln<T>(m, w, panel, lda, panel + static_cast<std::size_t>(w) * lda, lda, stream);
  }
}

#define TESSERA_INSTANTIATE(T)                                                                          \
  template void potf2_warp_panels<T>(int, T*, int, int*, void*, cudaStream_t, const TileKernelConfig&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda::detail
