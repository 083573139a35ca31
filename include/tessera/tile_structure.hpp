// Which tiles of a tiled matrix are stored (tessera/tile_matrix.hpp).
#pragma once

namespace tessera {

enum class TileStructure {
  symmetric_lower,  // tiles (i, j) with i >= j of a square symmetric matrix
  general,          // every tile (right-hand sides, solutions)
  block_diagonal,   // tiles (i, i) of a square matrix only
};

// Whether tile (i, j) is stored in a matrix of this structure.
constexpr bool tile_stored(TileStructure structure, int i, int j) noexcept {
  return structure == TileStructure::general || (structure == TileStructure::symmetric_lower ? i >= j : i == j);
}

// The shape of a rows x cols matrix cut into nb x nb tiles (the last row and column of tiles
// smaller where nb does not divide the size), and which tiles it stores: what a TileMatrix and
// the algorithms' tile grids share.
class TileShape {
 public:
  TileShape(int rows, int cols, int nb, TileStructure structure) noexcept
      : rows_(rows), cols_(cols), nb_(nb), tile_rows_(tiles(rows, nb)), tile_cols_(tiles(cols, nb)),
        structure_(structure) {}

  // Tiles along a side of `size` elements, without overflow for any nb up to INT_MAX (none for a
  // negative size or nb < 1, which TileMatrix refuses).
  static constexpr int tiles(int size, int nb) noexcept { return size < 0 || nb < 1 ? 0 : size / nb + (size % nb != 0); }

  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  int nb() const noexcept { return nb_; }
  int tile_rows() const noexcept { return tile_rows_; }
  int tile_cols() const noexcept { return tile_cols_; }
  TileStructure structure() const noexcept { return structure_; }
  int tile_height(int i) const noexcept { return i == tile_rows_ - 1 ? rows_ - i * nb_ : nb_; }
  int tile_width(int j) const noexcept { return j == tile_cols_ - 1 ? cols_ - j * nb_ : nb_; }
  bool stored(int i, int j) const noexcept { return tile_stored(structure_, i, j); }

 private:
  int rows_;
  int cols_;
  int nb_;
  int tile_rows_;
  int tile_cols_;
  TileStructure structure_;
};

}  // namespace tessera
