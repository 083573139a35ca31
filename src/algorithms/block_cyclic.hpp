// ScaLAPACK's 2-D block-cyclic distribution over a P x Q process grid, with square nb x nb blocks
// whose first one is on process (0, 0): block (I, J) belongs to process (I mod P, J mod Q) and
// lies in that process's column-major local array at local block (I / P, J / Q). A tile of a
// Tessera tile matrix is such a block, so converting between a process's local array and the
// tiles it owns is a copy per tile, and the tile's owner is the process holding its block.
#pragma once

#include "algorithms.hpp"

namespace tessera::detail {

struct BlockCyclic {
  int grid_rows;  // P
  int grid_cols;  // Q
  int my_row;     // this process's place in the grid
  int my_col;

  // Processes are numbered row-major in the grid (BLACS' "Row" order).
  int rank_of_block(int I, int J) const noexcept { return (I % grid_rows) * grid_cols + J % grid_cols; }
  bool holds_block(int I, int J) const noexcept { return I % grid_rows == my_row && J % grid_cols == my_col; }
  // Where block I (J) starts in the local array, in rows (columns).
  int local_row(int I, int nb) const noexcept { return (I / grid_rows) * nb; }
  int local_col(int J, int nb) const noexcept { return (J / grid_cols) * nb; }
  // ScaLAPACK's NUMROC with the first block on process 0: how many of `size` rows (columns) cut
  // into blocks of nb lie on process `process` of `processes`.
  static int local_size(int size, int nb, int process, int processes) noexcept;
};

// The block of the caller's matrix that tile (i, j) holds: the tile itself, or for an
// upper-stored symmetric matrix the upper block (j, i), transposed.
struct BlockOfTile {
  int I;
  int J;
  bool transpose;
};
BlockOfTile block_of_tile(TileStructure structure, Uplo uplo, int i, int j) noexcept;

// The rank whose local array holds tile (i, j): the tile's owner, where its tasks run.
inline int tile_owner(const BlockCyclic& layout, TileStructure structure, Uplo uplo, int i, int j) noexcept {
  const BlockOfTile block = block_of_tile(structure, uplo, i, j);
  return layout.rank_of_block(block.I, block.J);
}

// Tiles this process owns <- its local array (leading dimension lld), or the other way; for a
// symmetric matrix only the triangle uplo is read or written, as insert_load and insert_store
// do on a whole matrix. Values are copied as they are: a NaN propagates.
template <class T>
void insert_load_local(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const BlockCyclic& layout, const T* local,
                       int lld, const SchedulingHints& hints);
template <class T>
void insert_store_local(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const BlockCyclic& layout, T* local, int lld,
                        const SchedulingHints& hints);

}  // namespace tessera::detail
