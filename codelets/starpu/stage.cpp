// Copies between a caller's host array and tiles that live on a GPU, through the staging ring's
// pinned slots (HostTiles::staged). In: a CPU task packs a piece of the block into a slot,
// scanning it for NaN and infinity as copy_in does, and a CUDA task copies the slot into the
// tile. Out: a CUDA task copies a piece of the tile into a slot and a CPU task unpacks it into the
// block. The CPU workers pack and unpack in parallel while the copy engines move the slots.
#include <algorithm>
#include <stdexcept>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "staging.hpp"
#include "staging_ring.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#endif

namespace tessera::detail {

namespace {

// A piece of a tile as stored: columns [col0, col0 + cols), rows [row0, row0 + rows). In a
// diagonal tile (lower_only) a piece starts on the diagonal (row0 = col0): the lower triangle is
// all it holds. A transposed tile (an upper-stored matrix's block, as stored) is cut the same way,
// and a diagonal one's piece runs from row 0 down to its last column's diagonal: only the entries
// on and above the diagonal are packed, scanned and unpacked (the rest of the slot goes to the
// tile's strict lower triangle, which no task of an upper tile reads).
template <class T>
struct StageArgs {
  TaskHeader header;
  BlockMap<T> block;
  int tile_row0;
  int row0, col0, rows, cols;
  T* slot;  // the piece packed, leading dimension rows
  bool skip_after_failure;
};

template <class T>
T* piece_of_block(const StageArgs<T>& a) {
  const BlockMap<T>& b = a.block;
  return b.base + (b.row0 + a.row0) + static_cast<long>(b.col0 + a.col0) * b.ld;
}

// Slots are read by the copy engine, not by this core: streaming stores skip the cache.
template <class T>
void pack_cpu(void* /*buffers*/[], void* cl_arg) {
  const auto& a = task_args<StageArgs<T>>(cl_arg);
  run_task_body(a.header, "stage_in", [&] {
    const BlockMap<T>& b = a.block;
    constexpr kernels::cpu::Stores streaming = kernels::cpu::Stores::streaming;
    if (b.tile_transposed) {
      // Column c of the stored block is row c of the lower tile it stands for.
      const int bad_column = kernels::cpu::copy_columns_and_find_non_finite_column(
          b.lower_only, a.rows, a.cols, piece_of_block(a), b.ld, a.slot, a.rows, streaming, a.col0);
      if (bad_column >= 0 && b.in_matrix) a.header.submission->record_non_finite(a.tile_row0 + a.col0 + bad_column + 1);
      return;
    }
    if (!b.in_matrix) {
      kernels::cpu::copy_block(false, b.lower_only, a.rows, a.cols, piece_of_block(a), b.ld, a.slot, a.rows, streaming);
      return;
    }
    const int bad_row = kernels::cpu::copy_block_and_find_non_finite_row(b.lower_only, a.rows, a.cols, piece_of_block(a),
                                                                         b.ld, a.slot, a.rows, streaming);
    if (bad_row >= 0) a.header.submission->record_non_finite(a.tile_row0 + a.row0 + bad_row + 1);
  }, /*even_after_failure=*/true);
}

template <class T>
void unpack_cpu(void* /*buffers*/[], void* cl_arg) {
  const auto& a = task_args<StageArgs<T>>(cl_arg);
  run_task_body(a.header, "stage_out", [&] {
    constexpr kernels::cpu::Stores streaming = kernels::cpu::Stores::streaming;
    if (a.block.tile_transposed)
      kernels::cpu::copy_columns(a.block.lower_only, a.rows, a.cols, a.slot, a.rows, piece_of_block(a), a.block.ld,
                                 streaming, a.col0);
    else
      kernels::cpu::copy_block(false, a.block.lower_only, a.rows, a.cols, a.slot, a.rows, piece_of_block(a),
                               a.block.ld, streaming);
  }, /*even_after_failure=*/!a.skip_after_failure);
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
T* piece_of_tile(const StageArgs<T>& a, const TileView<T>& tile) {
  return tile.ptr + a.row0 + static_cast<long>(a.col0) * tile.ld;
}

// buffers: the slot (no data), the tile.
template <class T>
void upload_cuda(void* buffers[], void* cl_arg) {
  const auto& a = task_args<StageArgs<T>>(cl_arg);
  run_task_body(a.header, "stage_in (CUDA)", [&] {
    const TileView<T> tile = tile_view<T>(buffers[1]);
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(piece_of_tile(a, tile), sizeof(T) * tile.ld, a.slot, sizeof(T) * a.rows,
                                         sizeof(T) * a.rows, a.cols, cudaMemcpyHostToDevice,
                                         starpu_cuda_get_local_stream()));
  }, /*even_after_failure=*/true);
}

// buffers: the tile, the slot (no data).
template <class T>
void download_cuda(void* buffers[], void* cl_arg) {
  const auto& a = task_args<StageArgs<T>>(cl_arg);
  run_task_body(a.header, "stage_out (CUDA)", [&] {
    const TileView<T> tile = tile_view<T>(buffers[0]);
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(a.slot, sizeof(T) * a.rows, piece_of_tile(a, tile), sizeof(T) * tile.ld,
                                         sizeof(T) * a.rows, a.cols, cudaMemcpyDeviceToHost,
                                         starpu_cuda_get_local_stream()));
  }, /*even_after_failure=*/!a.skip_after_failure);
}
#endif

template <class T>
starpu_codelet* pack_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"stage_pack", pack_cpu<T>, nullptr, nullptr, false, {STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* upload_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"stage_upload", nullptr, TESSERA_IF_CUDA(upload_cuda<T>), nullptr, true, {STARPU_R, STARPU_RW}});
  return &codelet;
}

template <class T>
starpu_codelet* download_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"stage_download", nullptr, TESSERA_IF_CUDA(download_cuda<T>), nullptr, true, {STARPU_R, STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* unpack_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"stage_unpack", unpack_cpu<T>, nullptr, nullptr, false, {STARPU_R}});
  return &codelet;
}

// The tile cut into pieces of whole columns that fit one slot each, left to right.
template <class T>
std::vector<StageArgs<T>> pieces_of(const BlockMap<T>& block, const TileRef& tile, std::size_t slot_bytes) {
  if (block.transpose) throw std::logic_error("staged copies take tiles stored as the caller's blocks");
  // A transposed tile stands for the lower tile (i, j) and stores the block (j, i).
  const bool upper = block.tile_transposed;
  const int stored_rows = upper ? tile.cols : tile.rows;
  const int stored_cols = upper ? tile.rows : tile.cols;
  std::vector<StageArgs<T>> pieces;
  for (int col0 = 0; col0 < stored_cols;) {
    const int row0 = block.lower_only && !upper ? col0 : 0;
    const std::size_t column_bytes = sizeof(T) * static_cast<std::size_t>(std::max(stored_rows - row0, 1));
    if (column_bytes > slot_bytes) throw std::logic_error("a tile column does not fit a staging slot");
    const int cols = std::min<int>(stored_cols - col0, static_cast<int>(slot_bytes / column_bytes));
    const int rows = block.lower_only && upper ? std::min(col0 + cols, stored_rows) : stored_rows - row0;
    StageArgs<T> piece{};
    piece.block = block;
    piece.tile_row0 = tile.row0;
    piece.row0 = row0;
    piece.col0 = col0;
    piece.rows = rows;
    piece.cols = cols;
    pieces.push_back(piece);
    col0 += cols;
  }
  return pieces;
}

// A slot's copy to or from the GPU takes a tenth of a millisecond and frees the slot for the CPU
// workers: it goes ahead of the tile tasks waiting for the same GPU worker (the order among the
// copies kept), instead of queueing behind trailing updates of a millisecond or more each.
TaskHints ahead_of_tile_tasks(TaskHints hints) {
  constexpr int kAheadOfTileTasks = 1 << 20;  // critical-path ranks lie within 2 nt of 0
  hints.priority += kAheadOfTileTasks;
  return hints;
}

// On several GPUs a tile's copies run on the GPU whose memory is its home (OwnedPanels: its
// owner, or the first GPU where the tile tasks are not placed): a copy elsewhere would have StarPU
// fetch the tile there first and write it back after.
TaskHints on_owner(const TaskContext& ctx, TaskHints hints, const TileRef& tile) {
  if (hints.gpu >= 0 || !ctx.resources || ctx.resources->gpu_count() < 2) return hints;
  hints.gpu = ctx.gpu_owners.gpus() > 1 ? ctx.gpu_owners.of_tile(tile.i, tile.j) : 0;
  return hints;
}

}  // namespace

template <class T>
void insert_staged_copy_in(const TaskContext& ctx, const BlockMap<T>& from, const TileRef& tile,
                           const TaskHints& tile_hints) {
  const TaskHints hints = on_owner(ctx, tile_hints, tile);
  for (StageArgs<T> piece : pieces_of(from, tile, ctx.staging->slot_bytes())) {
    const StagingRing::Slot& slot = ctx.staging->next(StagingRing::Direction::to_gpu);
    piece.slot = static_cast<T*>(slot.memory);
    piece.header.kind = TaskKind::copy_in;
    submit(ctx, pack_codelet<T>(), piece, {{slot.handle, STARPU_W}}, hints, tile, 0);
    submit(ctx, upload_codelet<T>(), piece, {{slot.handle, STARPU_R}, {tile.handle, STARPU_RW}}, ahead_of_tile_tasks(hints),
           tile, 0);
  }
}

template <class T>
void insert_staged_copy_out(const TaskContext& ctx, const TileRef& tile, const BlockMap<T>& to, bool skip_after_failure,
                            const TaskHints& tile_hints) {
  const TaskHints hints = on_owner(ctx, tile_hints, tile);
  for (StageArgs<T> piece : pieces_of(to, tile, ctx.staging->slot_bytes())) {
    const StagingRing::Slot& slot = ctx.staging->next(StagingRing::Direction::from_gpu);
    piece.slot = static_cast<T*>(slot.memory);
    piece.header.kind = TaskKind::copy_out;
    piece.skip_after_failure = skip_after_failure;
    submit(ctx, download_codelet<T>(), piece, {{tile.handle, STARPU_R}, {slot.handle, STARPU_W}},
           ahead_of_tile_tasks(hints), tile, 0);
    submit(ctx, unpack_codelet<T>(), piece, {{slot.handle, STARPU_R}}, hints, tile, 0);
  }
}

#define TESSERA_INSTANTIATE(T)                                                                                      \
  template void insert_staged_copy_in<T>(const TaskContext&, const BlockMap<T>&, const TileRef&, const TaskHints&); \
  template void insert_staged_copy_out<T>(const TaskContext&, const TileRef&, const BlockMap<T>&, bool,             \
                                          const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
