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

class TileGrid : public TileShape {
 public:
  // handles: tile_rows x tile_cols, column by column, nullptr where structure stores no tile.
  // transposed: every tile is stored transposed (TileRef::transposed).
  TileGrid(int rows, int cols, int nb, TileStructure structure, std::vector<void*> handles, bool transposed = false)
      : TileShape(rows, cols, nb, structure), transposed_(transposed), handles_(std::move(handles)) {}

  bool transposed() const noexcept { return transposed_; }

  // Tile (i, j), which must be stored.
  TileRef ref(int i, int j) const {
    return {handles_[static_cast<std::size_t>(j) * tile_rows() + i], tile_height(i), tile_width(j), i, j, i * nb(), j * nb(),
            transposed_};
  }

 private:
  bool transposed_;
  std::vector<void*> handles_;
};

}  // namespace tessera::detail
