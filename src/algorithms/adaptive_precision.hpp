// Adaptive precision (FactorOptions::accuracy): each tile's trailing updates in the lowest
// arithmetic its norm allows, the tiles themselves stored in the matrix's precision.
#pragma once

#include <vector>

#include "tasks.hpp"
#include "tessera/options.hpp"
#include "tile_grid.hpp"

namespace tessera::detail {

// Unit roundoffs of the reduced arithmetics: FP16's (round to nearest), and for fp32 the two FP16
// pieces' (hi + 2^-11 lo holds each value to about 2^-22), what the GPUs compute it with.
constexpr double kFp16UnitRoundoff = 0x1p-11;
constexpr double kFp32UnitRoundoff = 0x1p-22;

// The lower tiles of an nt x nt tile matrix packed as TileArithmeticMap packs them.
inline int packed_tile(int i, int j) { return i * (i + 1) / 2 + j; }

// The arithmetic of every lower tile from the tiles' Frobenius norms (packed_tile order; a diagonal
// tile's norm is that of the whole symmetric block): off-diagonal tile (i, j) takes the lowest
// arithmetic of unit roundoff u with norm_ij * nt / ||A||_F < accuracy / u. A norm that is not
// finite, or a matrix whose norm is zero or not finite, keeps every tile in FP64.
TileArithmeticMap choose_tile_arithmetic(const std::vector<double>& tile_norms, int nt, double accuracy);

// The factorization of insert_cholesky with each gemm in its tile's arithmetic: first every tile's
// norm (tasks), then, once they are done (the insertion waits for them), the map and the tasks.
// Real double precision only; `map`, where not null, receives the map.
void insert_adaptive_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints,
                              double accuracy, TileArithmeticMap* map);

}  // namespace tessera::detail
