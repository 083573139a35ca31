#include "adaptive_precision.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tessera {

TileArithmetic TileArithmeticMap::at(int i, int j) const {
  if (j < 0 || j > i || i >= tiles) throw std::out_of_range("TileArithmeticMap::at: not a lower tile");
  return lower[static_cast<std::size_t>(detail::packed_tile(i, j))];
}

long long TileArithmeticMap::count(TileArithmetic a) const {
  long long n = 0;
  for (int i = 0; i < tiles; ++i)
    for (int j = 0; j < i; ++j) n += at(i, j) == a ? 1 : 0;
  return n;
}

}  // namespace tessera

namespace tessera::detail {

TileArithmeticMap choose_tile_arithmetic(const std::vector<double>& tile_norms, int nt, double accuracy) {
  TileArithmeticMap map;
  map.tiles = nt;
  map.lower.assign(static_cast<std::size_t>(packed_tile(nt, 0)), TileArithmetic::fp64);
  double squares = 0;  // ||A||_F^2: the diagonal blocks once, the others for both triangles
  for (int i = 0; i < nt; ++i)
    for (int j = 0; j <= i; ++j) {
      const double norm = tile_norms[static_cast<std::size_t>(packed_tile(i, j))];
      squares += (i == j ? 1.0 : 2.0) * norm * norm;
    }
  const double total = std::sqrt(squares);
  if (!(total > 0) || !std::isfinite(total) || !(accuracy > 0)) return map;
  for (int i = 0; i < nt; ++i)
    for (int j = 0; j < i; ++j) {
      const double ratio = tile_norms[static_cast<std::size_t>(packed_tile(i, j))] * nt / total;
      TileArithmetic& a = map.lower[static_cast<std::size_t>(packed_tile(i, j))];
      if (ratio < accuracy / kFp16UnitRoundoff)
        a = TileArithmetic::fp16;
      else if (ratio < accuracy / kFp32UnitRoundoff)
        a = TileArithmetic::fp32;
    }
  return map;
}

namespace {

// Whether a reduced update of step k reads panel tile (i, k): the gemm on (i, j), k < j < i, or on
// (m, i), m > i.
bool read_by_reduced_update(const TileArithmeticMap& map, int i, int k) {
  for (int j = k + 1; j < i; ++j)
    if (map.at(i, j) != TileArithmetic::fp64) return true;
  for (int m = i + 1; m < map.tiles; ++m)
    if (map.at(m, i) != TileArithmetic::fp64) return true;
  return false;
}

}  // namespace

void insert_adaptive_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints,
                              double accuracy, TileArithmeticMap* map_out) {
  const int nt = A.tile_rows();
  // The submission's memory: should an insertion below throw, tasks may still write there.
  const int tiles = packed_tile(nt, 0);
  double* slots = submission_slots(ctx, tiles);
  std::fill(slots, slots + tiles, std::nan(""));  // a norm never computed keeps its tile in FP64
  for (int j = 0; j < nt; ++j)
    for (int i = j; i < nt; ++i)
      insert_tile_norm(ctx, A.ref(i, j), i == j, slots + packed_tile(i, j), hints(TaskKind::other, 0, i, j, nt));
  wait_for_inserted_tasks(ctx);
  const TileArithmeticMap map = choose_tile_arithmetic(std::vector<double>(slots, slots + tiles), nt, accuracy);
  if (map_out) *map_out = map;
  // Where a GPU may run the updates, each panel tile a reduced update reads is split into FP16
  // pieces once per step instead of by every update; CPU workers alone (cpu mode) round their own
  // operands to FP32, no slower there.
  const bool pieces = ctx.mode != Mode::cpu;
  for (int k = 0; k < nt; ++k) {
    insert_potrf<double>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
    for (int i = k + 1; i < nt; ++i)
      insert_trsm<double>(ctx, Side::right, Trans::conjugate_transpose, 1.0, A.ref(k, k), A.ref(i, k),
                          hints(TaskKind::trsm, k, i, k, nt));
    std::vector<TileRef> split(static_cast<std::size_t>(nt));
    for (int i = k + 1; pieces && i < nt; ++i)
      if (read_by_reduced_update(map, i, k)) {
        split[static_cast<std::size_t>(i)] = fp16_pieces_tile(ctx, A.ref(i, k));
        insert_round_to_fp16(ctx, A.ref(i, k), split[static_cast<std::size_t>(i)], hints(TaskKind::trsm, k, i, k, nt));
      }
    for (int i = k + 1; i < nt; ++i) {
      insert_syrk<double>(ctx, -1.0, A.ref(i, k), 1.0, A.ref(i, i), hints(TaskKind::syrk, k, i, i, nt));
      for (int j = k + 1; j < i; ++j) {
        const TaskHints h = hints(TaskKind::gemm, k, i, j, nt);
        const TileArithmetic a = map.at(i, j);
        if (a == TileArithmetic::fp64)
          insert_gemm<double>(ctx, Trans::no, Trans::conjugate_transpose, -1.0, A.ref(i, k), A.ref(j, k), 1.0,
                              A.ref(i, j), h);
        else if (pieces)
          insert_pieces_gemm(ctx, a, split[static_cast<std::size_t>(i)], split[static_cast<std::size_t>(j)], A.ref(i, j), h);
        else
          insert_float_gemm(ctx, A.ref(i, k), A.ref(j, k), A.ref(i, j), h);
      }
    }
    for (const TileRef& tile : split)
      if (tile.handle) release_scratch_tile(ctx, tile);
  }
}

}  // namespace tessera::detail
