// Conversions between the caller's column-major matrix and the tiles (copy_in, copy_out: CPU
// tasks, so they run in parallel over the CPU workers), and copy_tile (tile -> tile, optionally
// with the strict upper triangle zeroed; CPU and CUDA).
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "staging.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#endif

namespace tessera::detail {

namespace {

template <class T>
struct CopyArgs {
  TaskHeader header;
  BlockMap<T> block;
  int tile_row0;
  bool skip_after_failure;
};

template <class T>
T* block_origin(const BlockMap<T>& b) {
  return b.base + b.row0 + static_cast<long>(b.col0) * b.ld;
}

// The tile is the block itself (a tile matrix registered on the caller's array): nothing to copy.
template <class T>
bool is_in_place(const BlockMap<T>& b, const TileView<T>& tile) {
  return !b.transpose && block_origin(b) == tile.ptr && b.ld == tile.ld;
}

// Streaming stores (kernels::cpu::Stores) for tiles larger than this: gpu-mode tiles (8 to 32 MiB)
// go to the GPU or home to the caller's array from memory anyway, while cpu mode's (at most about
// 1 MiB) may still be in cache when the next task reads them.
constexpr std::size_t kStreamingTileBytes = std::size_t(4) << 20;

template <class T>
kernels::cpu::Stores stores_for(const TileView<T>& tile) {
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(tile.rows) * static_cast<std::size_t>(tile.cols);
  return bytes >= kStreamingTileBytes ? kernels::cpu::Stores::streaming : kernels::cpu::Stores::cached;
}

// copy_in's copy and scan: the smallest row of the tile (i, j) holding a NaN or infinity, or -1.
// The block is tile-shaped, or transposed (rows and columns swapped).
template <class T>
int copy_in_tile(const BlockMap<T>& b, const TileView<T>& tile) {
  const int m = b.transpose ? tile.cols : tile.rows;
  const int n = b.transpose ? tile.rows : tile.cols;
  if (b.in_matrix && !b.transpose && !is_in_place(b, tile))
    return kernels::cpu::copy_block_and_find_non_finite_row(b.lower_only, m, n, block_origin(b), b.ld, tile.ptr, tile.ld,
                                                            stores_for(tile));
  if (!is_in_place(b, tile))  // in place there is nothing to copy
    kernels::cpu::copy_block(b.transpose, b.lower_only, m, n, block_origin(b), b.ld, tile.ptr, tile.ld);
  // The scan only where a NaN or infinity is reported.
  return b.in_matrix ? kernels::cpu::first_non_finite_row(b.lower_only, tile.rows, tile.cols, tile.ptr, tile.ld) : -1;
}

// The same for a transposed tile, which holds the block as stored: row r of the tile it stands
// for is column r here.
template <class T>
int copy_in_transposed_tile(const BlockMap<T>& b, const TileView<T>& tile) {
  if (b.in_matrix && !is_in_place(b, tile))
    return kernels::cpu::copy_columns_and_find_non_finite_column(b.lower_only, tile.rows, tile.cols, block_origin(b),
                                                                  b.ld, tile.ptr, tile.ld, stores_for(tile));
  if (!is_in_place(b, tile))
    kernels::cpu::copy_columns(b.lower_only, tile.rows, tile.cols, block_origin(b), b.ld, tile.ptr, tile.ld);
  return b.in_matrix ? kernels::cpu::first_non_finite_column(b.lower_only, tile.rows, tile.cols, tile.ptr, tile.ld) : -1;
}

template <class T>
void copy_in_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<CopyArgs<T>>(cl_arg);
  run_task_body(args.header, "copy_in", [&] {
    const TileView<T> tile = tile_view<T>(buffers[0]);
    const BlockMap<T>& b = args.block;
    const int bad_row = b.tile_transposed ? copy_in_transposed_tile(b, tile) : copy_in_tile(b, tile);
    if (bad_row >= 0 && b.in_matrix) args.header.submission->record_non_finite(args.tile_row0 + bad_row + 1);
  }, /*even_after_failure=*/true);
}

template <class T>
void copy_out_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<CopyArgs<T>>(cl_arg);
  run_task_body(args.header, "copy_out", [&] {
    const TileView<T> tile = tile_view<T>(buffers[0]);
    const BlockMap<T>& b = args.block;
    if (is_in_place(b, tile)) return;  // the task only brought the tile home
    if (b.tile_transposed) {
      kernels::cpu::copy_columns(b.lower_only, tile.rows, tile.cols, tile.ptr, tile.ld, block_origin(b), b.ld,
                                 stores_for(tile));
    } else if (b.lower_only && b.transpose) {
      // Diagonal tile of an upper-stored matrix: the tile's lower triangle goes above the diagonal.
      kernels::cpu::copy_lower_to_upper_transposed(tile.cols, tile.ptr, tile.ld, block_origin(b), b.ld);
    } else {
      // Copying the tile (or its transpose) into the block is copy_block with the roles swapped.
      kernels::cpu::copy_block(b.transpose, b.lower_only, tile.rows, tile.cols, tile.ptr, tile.ld, block_origin(b), b.ld,
                               stores_for(tile));
    }
  }, /*even_after_failure=*/!args.skip_after_failure);
}

template <class T>
starpu_codelet* copy_in_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"copy_in", copy_in_cpu<T>, nullptr, nullptr, false, {STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* copy_out_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"copy_out", copy_out_cpu<T>, nullptr, nullptr, false, {STARPU_R}});
  return &codelet;
}

template <class T>
struct CopyTileArgs {
  TaskHeader header;
  bool zero_upper;
};

template <class T>
void copy_tile_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<CopyTileArgs<T>, T, 2>(
      buffers, cl_arg, "copy_tile",
      [](const CopyTileArgs<T>& args, TileView<T> src, TileView<T> dst) {
        if (args.zero_upper)
          kernels::cpu::copy_lower(src.rows, src.cols, src.ptr, src.ld, dst.ptr, dst.ld);
        else
          kernels::cpu::copy_block(false, false, src.rows, src.cols, src.ptr, src.ld, dst.ptr, dst.ld);
      },
      /*even_after_failure=*/true);
}

#ifdef TESSERA_HAVE_CUDA
// What the CUDA kernel copies: a complex element as a pair of reals.
template <class T>
using CudaElement = std::conditional_t<!kIsComplex<T>, T, std::conditional_t<sizeof(T) == 16, double2, float2>>;

template <class T>
void copy_tile_cuda(void* buffers[], void* cl_arg) {
  run_on_tiles<CopyTileArgs<T>, T, 2>(
      buffers, cl_arg, "copy_tile (CUDA)",
      [](const CopyTileArgs<T>& args, TileView<T> src, TileView<T> dst) {
        cudaStream_t stream = starpu_cuda_get_local_stream();
        if (args.zero_upper)
          kernels::cuda::copy_lower(src.rows, src.cols, reinterpret_cast<const CudaElement<T>*>(src.ptr), src.ld,
                                    reinterpret_cast<CudaElement<T>*>(dst.ptr), dst.ld, stream);
        else
          TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(dst.ptr, sizeof(T) * dst.ld, src.ptr, sizeof(T) * src.ld,
                                               sizeof(T) * src.rows, src.cols, cudaMemcpyDeviceToDevice, stream));
      },
      /*even_after_failure=*/true);
}
#endif

template <class T>
starpu_codelet* copy_tile_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"copy_tile", copy_tile_cpu<T>, TESSERA_IF_CUDA(copy_tile_cuda<T>), nullptr, true, {STARPU_R, STARPU_W}});
  return &codelet;
}

}  // namespace

template <class T>
void insert_copy_in(const TaskContext& ctx, const BlockMap<T>& from, const TileRef& tile, const TaskHints& hints) {
  if (ctx.staging) {
    insert_staged_copy_in<T>(ctx, from, tile, hints);
    return;
  }
  CopyArgs<T> args{};
  args.header.kind = TaskKind::copy_in;
  args.block = from;
  args.tile_row0 = tile.row0;
  submit(ctx, copy_in_codelet<T>(), args, {{tile.handle, STARPU_W}}, hints, tile, 0);
}

template <class T>
void insert_copy_out(const TaskContext& ctx, const TileRef& tile, const BlockMap<T>& to, bool skip_after_failure,
                     const TaskHints& hints) {
  if (ctx.staging) {
    insert_staged_copy_out<T>(ctx, tile, to, skip_after_failure, hints);
    return;
  }
  CopyArgs<T> args{};
  args.header.kind = TaskKind::copy_out;
  args.block = to;
  args.tile_row0 = tile.row0;
  args.skip_after_failure = skip_after_failure;
  submit(ctx, copy_out_codelet<T>(), args, {{tile.handle, STARPU_R}}, hints, tile, 0);
}

template <class T>
void insert_copy_tile(const TaskContext& ctx, const TileRef& src, const TileRef& dst, bool zero_upper, const TaskHints& hints) {
  CopyTileArgs<T> args{};
  args.header.kind = TaskKind::other;
  args.zero_upper = zero_upper;
  submit(ctx, copy_tile_codelet<T>(), args, {{src.handle, STARPU_R}, {dst.handle, STARPU_W}}, hints, dst, 0);
}

#define TESSERA_INSTANTIATE(T)                                                                                      \
  template void insert_copy_in<T>(const TaskContext&, const BlockMap<T>&, const TileRef&, const TaskHints&);        \
  template void insert_copy_out<T>(const TaskContext&, const TileRef&, const BlockMap<T>&, bool, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

#define TESSERA_INSTANTIATE(T) \
  template void insert_copy_tile<T>(const TaskContext&, const TileRef&, const TileRef&, bool, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
