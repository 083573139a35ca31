#include "algorithms.hpp"

namespace tessera::detail {

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    insert_potrf<T>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
    for (int i = k + 1; i < nt; ++i)
      insert_trsm<T>(ctx, Side::right, Trans::yes, T(1), A.ref(k, k), A.ref(i, k),
                     hints(TaskKind::trsm, k, i, k, nt));
    for (int i = k + 1; i < nt; ++i) {
      insert_syrk<T>(ctx, T(-1), A.ref(i, k), T(1), A.ref(i, i), hints(TaskKind::syrk, k, i, i, nt));
      for (int j = k + 1; j < i; ++j)
        insert_gemm<T>(ctx, Trans::no, Trans::yes, T(-1), A.ref(i, k), A.ref(j, k), T(1), A.ref(i, j),
                       hints(TaskKind::gemm, k, i, j, nt));
    }
  }
}

namespace {

// Tiles rows first..last of tile column j.
std::vector<TileRef> column_tiles(const TileGrid& A, int j, int first) {
  std::vector<TileRef> tiles;
  for (int i = first; i < A.tile_rows(); ++i) tiles.push_back(A.ref(i, j));
  return tiles;
}

}  // namespace

template <class T>
void insert_cholesky_by_block_columns(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    insert_panel<T>(ctx, column_tiles(A, k, k), hints(TaskKind::potrf, k, k, k, nt));
    for (int j = k + 1; j < nt; ++j)
      insert_column_update<T>(ctx, column_tiles(A, k, j), column_tiles(A, j, j), hints(TaskKind::gemm, k, j, j, nt));
  }
}

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints, TaskGrain grain) {
  // Measured on an H100 (docs/gpu-performance.md), block columns ran as fast as tiles within the
  // spread between runs, even on a matrix already on the GPU: tiles stay the default.
  if (grain == TaskGrain::block_columns)
    insert_cholesky_by_block_columns<T>(ctx, A, hints);
  else
    insert_cholesky<T>(ctx, A, hints);
}

template void insert_cholesky<float>(const TaskContext&, const TileGrid&, const SchedulingHints&);
template void insert_cholesky<double>(const TaskContext&, const TileGrid&, const SchedulingHints&);
template void insert_cholesky_by_block_columns<float>(const TaskContext&, const TileGrid&, const SchedulingHints&);
template void insert_cholesky_by_block_columns<double>(const TaskContext&, const TileGrid&, const SchedulingHints&);
template void insert_cholesky<float>(const TaskContext&, const TileGrid&, const SchedulingHints&, TaskGrain);
template void insert_cholesky<double>(const TaskContext&, const TileGrid&, const SchedulingHints&, TaskGrain);

}  // namespace tessera::detail
