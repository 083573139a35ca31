// potf2, variant 1: right-looking over block columns of width B, each factored by one kernel
// whose thread blocks are spread over the rows below the diagonal block, then syrk_ln of the
// trailing matrix.
//
// Every thread block holds the B x B diagonal block and RP rows of the panel below it in
// registers and factors them column by column. The diagonal block is factored redundantly by
// every thread block (the same arithmetic, so the same result), which makes the panel's solve
// part of the factorization instead of a triangular solve after it: the diagonal's latency chain
// is paid once per block column, whatever the panel's height. Info: the first failing pivot in
// stream order, as potf2's blocked variant reports it.
//
// On an H100 the column loop costs about 600 cycles per column, of which about 300 are the
// chain from one pivot to the next through shared memory alone (docs/kernels-tile.md): at
// nb = 1024 this variant takes 1.06x cuSOLVER's time, against 1.48x for variant 0 at its best.
#include <algorithm>

#include "tile_common.cuh"
#include "tile_potf2_panels.cuh"

namespace tessera::kernels::cuda::detail {
namespace {

// The block column A (w <= B columns; the diagonal block on top, m rows below it). Thread block
// b factors the diagonal block and rows w + b*RP .. w + (b+1)*RP - 1 of the panel.
//
// Lane l of warp v owns rows l, l + 32, ... of the block's B + RP rows in the columns v, v + W,
// v + 2W, ... (W warps). Step j: every warp reads column j (published in shared memory, every
// column in its own slot), takes 1/sqrt of the pivot, and updates its columns after j. Warps do
// not meet at a barrier: the owner of column j + 1 updates that column first, publishes it and
// raises its flag, and each warp waits only for the flag of the column it needs next. The chain
// from one pivot to the next is then one warp's load, reciprocal square root, update and store;
// the other columns' updates run behind it.
template <class T, int B, int RP, int W>
__global__ void __launch_bounds__(32 * W, 1)
    potf2_panel_kernel(int w, int m, T* A, int lda, int* info, int info_offset, int overwrite_info) {
  constexpr int kRows = B + RP, kRowTiles = kRows / 32, kCols = B / W;
  static_assert(kRows % 32 == 0 && B % W == 0, "rows in warps, columns spread over the warps");
  extern __shared__ __align__(16) unsigned char panel_smem[];
  T* columns = reinterpret_cast<T*>(panel_smem);  // column j at columns + j * kRows
  __shared__ int ready[B];

  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const bool first_block = blockIdx.x == 0;
  int row[kRowTiles];
  bool valid[kRowTiles], diagonal[kRowTiles];
#pragma unroll
  for (int i = 0; i < kRowTiles; ++i) {
    const int lr = lane + 32 * i;
    diagonal[i] = lr < B;
    row[i] = diagonal[i] ? lr : w + static_cast<int>(blockIdx.x) * RP + (lr - B);
    valid[i] = diagonal[i] ? lr < w : row[i] < w + m;
  }

  T a[kRowTiles][kCols];
#pragma unroll
  for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
    for (int q = 0; q < kCols; ++q) {
      const int k = warp + W * q;
      const bool load = valid[i] && k < w && (!diagonal[i] || k <= row[i]);
      a[i][q] = load ? A[row[i] + static_cast<std::size_t>(k) * lda] : T(0);
    }
  for (int k = static_cast<int>(threadIdx.x); k < B; k += 32 * W) ready[k] = 0;
  if (warp == 0)
#pragma unroll
    for (int i = 0; i < kRowTiles; ++i) columns[lane + 32 * i] = a[i][0];
  __syncthreads();

  // Rounds of W columns: in round q0 warp v's slot s holds column v + W (q0 + s), so that the
  // round's W steps, unrolled, index the registers with constants; the loop over rounds stays
  // rolled, which keeps the code in the instruction cache (unrolled over all B columns, fetching
  // the code cost more than the arithmetic).
  for (int q0 = 0; q0 * W < w; ++q0) {
#pragma unroll
    for (int r = 0; r < W; ++r) {
      const int j = q0 * W + r;
      if (j >= w) break;
      if (j > 0) {
        // Column j's owner raised ready[j] after storing it (and a fence).
        while (*static_cast<volatile int*>(&ready[j]) == 0) {
        }
        __threadfence_block();
      }
      const T* c = columns + j * kRows;
      const T d = c[j];
      if (!(d > T(0))) {  // not positive, or NaN: the same d in every warp
        if (threadIdx.x == 0 && first_block) report_info(info, info_offset + j + 1, overwrite_info != 0);
        return;
      }
      const T rs = reciprocal_sqrt(d);
      T l[kRowTiles], t[kRowTiles];
#pragma unroll
      for (int i = 0; i < kRowTiles; ++i) {
        l[i] = c[lane + 32 * i] * rs;  // L(row, j); sqrt(d) on the diagonal
        t[i] = l[i] * rs;
      }
      // The next column's owner first: its publication is the next step's critical path.
      const int owner = (r + 1) % W, owner_slot = r + 1 < W ? 0 : 1;  // constants once unrolled
      const int next = j + 1;
      if (next < w && warp == owner) {
        const T y = c[next];
#pragma unroll
        for (int i = 0; i < kRowTiles; ++i) {
          a[i][owner_slot] = fma(-t[i], y, a[i][owner_slot]);
          columns[next * kRows + lane + 32 * i] = a[i][owner_slot];
        }
        __syncwarp();
        __threadfence_block();
        if (lane == 0) *static_cast<volatile int*>(&ready[next]) = 1;
      }
#pragma unroll
      for (int s = 0; s < kCols; ++s) {
        const bool after_j = s > 0 || warp > r;
        const bool published = warp == owner && s == owner_slot;
        if (after_j && !published && s < kCols - q0) {
          const T y = c[warp + W * (q0 + s)];
#pragma unroll
          for (int i = 0; i < kRowTiles; ++i) a[i][s] = fma(-t[i], y, a[i][s]);
        }
      }
      if (warp == r)
#pragma unroll
        for (int i = 0; i < kRowTiles; ++i)
          if (valid[i] && (diagonal[i] ? first_block && row[i] >= j : true))
            A[row[i] + static_cast<std::size_t>(j) * lda] = l[i];
    }
    // Slot 0's column is factored: the others move down one slot.
#pragma unroll
    for (int s = 0; s + 1 < kCols; ++s)
#pragma unroll
      for (int i = 0; i < kRowTiles; ++i) a[i][s] = a[i][s + 1];
  }
  if (threadIdx.x == 0 && first_block && overwrite_info) *info = 0;
}

template <class T, int B, int RP, int W>
void launch_panel(int w, int m, T* A, int lda, int* info, int info_offset, bool overwrite,
                  cudaStream_t stream) {
  const int blocks = std::max(1, ceil_div(m, RP));
  const std::size_t smem = sizeof(T) * B * (B + RP);
  auto kernel = potf2_panel_kernel<T, B, RP, W>;
  // The opt-in covers the static flags too: dynamic and static together may not pass 48 KiB
  // without it.
  ensure_dynamic_smem(reinterpret_cast<const void*>(kernel), smem + sizeof(int) * B);
  kernel<<<blocks, 32 * W, smem, stream>>>(w, m, A, lda, info, info_offset, overwrite ? 1 : 0);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_panel_shape(const PanelShape& s, int w, int m, T* A, int lda, int* info, int offset,
                        bool overwrite, cudaStream_t stream) {
  if (s.width == 32 && s.rows == 64 && s.threads == 256)
    launch_panel<T, 32, 64, 8>(w, m, A, lda, info, offset, overwrite, stream);
  else if (s.width == 32 && s.rows == 96 && s.threads == 256)
    launch_panel<T, 32, 96, 8>(w, m, A, lda, info, offset, overwrite, stream);
  else if (s.width == 64 && s.rows == 64 && s.threads == 256)
    launch_panel<T, 64, 64, 8>(w, m, A, lda, info, offset, overwrite, stream);
  else if (s.width == 64 && s.rows == 64 && s.threads == 512)
    launch_panel<T, 64, 64, 16>(w, m, A, lda, info, offset, overwrite, stream);
  else if (s.width == 64 && s.rows == 128 && s.threads == 256)
    launch_panel<T, 64, 128, 8>(w, m, A, lda, info, offset, overwrite, stream);
  else
    invalid_config("potf2 variant 1: a shape of kPanelShapes has no kernel instantiated");
}

// cfg's shape (zero fields: 64, 64, 256), when it is one of kPanelShapes.
PanelShape panel_shape(const TileKernelConfig& cfg) {
  const PanelShape s{cfg.ib ? cfg.ib : 64, cfg.tile ? cfg.tile : 64, cfg.threads ? cfg.threads : 256};
  for (const PanelShape& k : kPanelShapes)
    if (k.width == s.width && k.rows == s.rows && k.threads == s.threads) return s;
  invalid_config("potf2 variant 1 supports (ib, tile, threads) = (32, 64|96, 256), (64, 64, 256|512), (64, 128, 256)");
}

}  // namespace

template <class T>
void potf2_panels(int n, T* A, int lda, int* info, cudaStream_t stream, const TileKernelConfig& cfg) {
  const PanelShape shape = panel_shape(cfg);
  for (int j0 = 0; j0 < n; j0 += shape.width) {
    const int w = std::min(shape.width, n - j0), m = n - j0 - w;
    T* Ajj = A + j0 + static_cast<std::size_t>(j0) * lda;
    launch_panel_shape<T>(shape, w, m, Ajj, lda, info, j0, j0 == 0, stream);
    if (m == 0) break;
    T* panel = Ajj + w;
    syrk_ln<T>(m, w, panel, lda, panel + static_cast<std::size_t>(w) * lda, lda, stream);
  }
}

void check_potf2_panel_config(const TileKernelConfig& cfg) { (void)panel_shape(cfg); }

template void potf2_panels<float>(int, float*, int, int*, cudaStream_t, const TileKernelConfig&);
template void potf2_panels<double>(int, double*, int, int*, cudaStream_t, const TileKernelConfig&);

}  // namespace tessera::kernels::cuda::detail
