// The tiles of a matrix as the algorithms see them: sizes, which tiles are stored, and an opaque
// runtime handle per stored tile. No runtime type appears here, so the algorithms compile and
// run against any implementation of tasks.hpp (StarPU's in codelets/, a recording one in tests).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "tasks.hpp"
#include "tessera/tile_structure.hpp"

namespace tessera::detail {

class TileGrid {
 public:
  // handles: tile_rows x tile_cols, column by column, nullptr where structure stores no tile.
  // transposed: every tile is stored transposed (TileRef::transposed).
  TileGrid(int rows, int cols, int nb, TileStructure structure, std::vector<void*> handles, bool transposed = false)
      : rows_(rows), cols_(cols), nb_(nb), tile_rows_(tiles(rows, nb)), tile_cols_(tiles(cols, nb)),
        structure_(structure), transposed_(transposed), handles_(std::move(handles)) {}

  // Tiles along a side of `size` elements (no overflow for any nb up to INT_MAX).
  static int tiles(int size, int nb) noexcept { return size / nb + (size % nb != 0); }

  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  int nb() const noexcept { return nb_; }
  int tile_rows() const noexcept { return tile_rows_; }
  int tile_cols() const noexcept { return tile_cols_; }
  TileStructure structure() const noexcept { return structure_; }
  int tile_height(int i) const noexcept { return i == tile_rows_ - 1 ? rows_ - i * nb_ : nb_; }
  int tile_width(int j) const noexcept { return j == tile_cols_ - 1 ? cols_ - j * nb_ : nb_; }
  bool stored(int i, int j) const noexcept { return tile_stored(structure_, i, j); }
  bool transposed() const noexcept { return transposed_; }

  // Tile (i, j), which must be stored.
  TileRef ref(int i, int j) const {
    return {handles_[static_cast<std::size_t>(j) * tile_rows_ + i], tile_height(i), tile_width(j), i, j, i * nb_, j * nb_,
            transposed_};
  }

 private:
  int rows_;
  int cols_;
  int nb_;
  int tile_rows_;
  int tile_cols_;
  TileStructure structure_;
  bool transposed_;
  std::vector<void*> handles_;
};

}  // namespace tessera::detail
