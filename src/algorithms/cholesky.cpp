#include "algorithms.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "adaptive_precision.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

// A tensor-core factorization's panel solves go by the diagonal factor's inverse: X = L(k, k)^{-1}
// once per step (on the critical path, as the first tile's solve was), then one TF32 product per
// tile below it, where a solve per tile spends most of its time in small triangular steps that
// leave the tensor cores idle. The inverse's error grows with the diagonal tile's condition, which
// a factor meant for refinement can afford. Float tiles stored as they stand, in this process.
template <class T>
bool solves_by_inverse(const TaskContext& ctx, const TileGrid& A) {
  return std::is_same_v<T, float> && ctx.tensor_cores != TensorCores::off && ctx.distributed == nullptr &&
         !A.transposed();
}

template <class T>
void insert_panel_solves(const TaskContext& ctx, const TileGrid& A, int k, bool by_inverse,
                         const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  if (!by_inverse) {
    for (int i = k + 1; i < nt; ++i)
      insert_trsm<T>(ctx, Side::right, Trans::conjugate_transpose, T(1), A.ref(k, k), A.ref(i, k),
                     hints(TaskKind::trsm, k, i, k, nt));
    return;
  }
  const bool kept = ctx.kept_panel_inverses != nullptr;
  if (k + 1 == nt && !kept) return;
  const TileRef inverse = kept ? ctx.kept_panel_inverses->ref(0, k) : scratch_tile<float>(ctx, A.ref(k, k));
  insert_invert_panel_factor(ctx, A.ref(k, k), inverse, hints(TaskKind::trsm, k, std::min(k + 1, nt - 1), k, nt));
  for (int i = k + 1; i < nt; ++i)
    insert_multiply_by_panel_inverse(ctx, inverse, A.ref(i, k), hints(TaskKind::trsm, k, i, k, nt));
  if (!kept) release_scratch_tile(ctx, inverse);
}

}  // namespace

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  const bool by_inverse = solves_by_inverse<T>(ctx, A);
  for (int k = 0; k < nt; ++k) {
    insert_potrf<T>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
    insert_panel_solves<T>(ctx, A, k, by_inverse, hints);
    for (int i = k + 1; i < nt; ++i) {
      insert_syrk<T>(ctx, T(-1), A.ref(i, k), T(1), A.ref(i, i), hints(TaskKind::syrk, k, i, i, nt));
      for (int j = k + 1; j < i; ++j)
        insert_gemm<T>(ctx, Trans::no, Trans::conjugate_transpose, T(-1), A.ref(i, k), A.ref(j, k), T(1), A.ref(i, j),
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

namespace {

// Tile columns [first, end) of A updated by the factored tile column k < first.
template <class T, class Hint>
void insert_column_updates(const TaskContext& ctx, const TileGrid& A, int k, int first, int end, Hint&& hint) {
  for (int j = first; j < end; ++j) {
    insert_syrk<T>(ctx, T(-1), A.ref(j, k), T(1), A.ref(j, j), hint(TaskKind::syrk, k, j, j));
    for (int i = j + 1; i < A.tile_rows(); ++i)
      insert_gemm<T>(ctx, Trans::no, Trans::conjugate_transpose, T(-1), A.ref(i, k), A.ref(j, k), T(1), A.ref(i, j),
                     hint(TaskKind::gemm, k, i, j));
  }
}

}  // namespace

template <class T>
void insert_cholesky_in_panels(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints,
                               const std::vector<int>& starts) {
  const int nt = A.tile_rows();
  for (std::size_t p = 0; p < starts.size(); ++p) {
    const int first = starts[p], end = p + 1 < starts.size() ? starts[p + 1] : nt;
    const auto hint = [&](TaskKind kind, int k, int i, int j) {
      return in_panel(hints(kind, k, i, j, nt), static_cast<int>(p), nt);
    };
    for (int k = 0; k < first; ++k) insert_column_updates<T>(ctx, A, k, first, end, hint);
    for (int k = first; k < end; ++k) {
      insert_potrf<T>(ctx, A.ref(k, k), hint(TaskKind::potrf, k, k, k));
      for (int i = k + 1; i < nt; ++i)
        insert_trsm<T>(ctx, Side::right, Trans::conjugate_transpose, T(1), A.ref(k, k), A.ref(i, k), hint(TaskKind::trsm, k, i, k));
      insert_column_updates<T>(ctx, A, k, k + 1, end, hint);
    }
  }
}

std::vector<int> panels_within(const TileGrid& A, double budget_elements) {
  std::vector<int> starts{0};
  double held = 0;  // elements of the current panel's tiles
  for (int j = 0; j < A.tile_cols(); ++j) {
    const double column = double(A.rows() - j * A.nb()) * A.tile_width(j);
    if (held > 0 && held + column > budget_elements) {
      starts.push_back(j);
      held = 0;
    }
    held += column;
  }
  return starts;
}

template <class T>
void insert_cholesky_as_one_task(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  std::vector<TileRef> tiles;
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = j; i < A.tile_rows(); ++i) tiles.push_back(A.ref(i, j));
  insert_whole_factorization<T>(ctx, tiles, hints(TaskKind::potrf, 0, 0, 0, A.tile_rows()));
}

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints, const CholeskyPlan& plan) {
  if (plan.accuracy > 0) {
    if constexpr (!std::is_same_v<T, double>) throw std::logic_error("adaptive precision takes real double tiles");
    else return insert_adaptive_cholesky(ctx, A, hints, plan.accuracy, plan.arithmetic_map);
  }
  if (plan.panel_starts.size() > 1) return insert_cholesky_in_panels<T>(ctx, A, hints, plan.panel_starts);
  // Block-column and whole-matrix tasks exist for real scalars only (the plan gives complex
  // matrices tiles). Block columns measured no faster than tiles on a GPU, even on a matrix
  // already there: tiles stay the default. Block-column tasks take lower tiles: transposed ones
  // run as tiles.
  if constexpr (!kIsComplex<T>) {
    if (plan.grain == TaskGrain::block_columns && !A.transposed())
      return insert_cholesky_by_block_columns<T>(ctx, A, hints);
    if (plan.grain == TaskGrain::whole_matrix) return insert_cholesky_as_one_task<T>(ctx, A, hints);
  }
  insert_cholesky<T>(ctx, A, hints);
}

// The choices of insert_cholesky(ctx, A, hints, plan) above: only its tile form solves by inverses.
template <class T>
bool solves_panels_by_inverse(const TaskContext& ctx, const TileGrid& A, const CholeskyPlan& plan) {
  if (plan.accuracy > 0 || plan.panel_starts.size() > 1) return false;
  if constexpr (!kIsComplex<T>)
    if ((plan.grain == TaskGrain::block_columns && !A.transposed()) || plan.grain == TaskGrain::whole_matrix)
      return false;
  return solves_by_inverse<T>(ctx, A);
}

template <class T>
void insert_log_diagonals(const TaskContext& ctx, const TileGrid& L, double* sums, const SchedulingHints& hints) {
  const int nt = L.tile_rows();
  for (int k = 0; k < nt; ++k) insert_log_diagonal<T>(ctx, L.ref(k, k), sums + k, hints(TaskKind::other, k, k, k, nt));
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void insert_log_diagonals<T>(const TaskContext&, const TileGrid&, double*, const SchedulingHints&);       \
  template void insert_cholesky<T>(const TaskContext&, const TileGrid&, const SchedulingHints&);                      \
  template void insert_cholesky_in_panels<T>(const TaskContext&, const TileGrid&, const SchedulingHints&,             \
                                             const std::vector<int>&);                                                \
  template void insert_cholesky<T>(const TaskContext&, const TileGrid&, const SchedulingHints&, const CholeskyPlan&); \
  template bool solves_panels_by_inverse<T>(const TaskContext&, const TileGrid&, const CholeskyPlan&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template void insert_cholesky_by_block_columns<T>(const TaskContext&, const TileGrid&, const SchedulingHints&); \
  template void insert_cholesky_as_one_task<T>(const TaskContext&, const TileGrid&, const SchedulingHints&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
