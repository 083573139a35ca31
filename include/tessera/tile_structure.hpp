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

}  // namespace tessera
