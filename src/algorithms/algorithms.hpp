// The tile algorithms: loops that insert tasks through tasks.hpp. They know tiles and scheduling hints,
// nothing of the runtime underneath (tests/task_graph runs them on a recording backend).
#pragma once

#include <utility>
#include <vector>

#include "tasks.hpp"
#include "tessera/options.hpp"
#include "tile_grid.hpp"

namespace tessera::detail {

// Right-looking tile Cholesky of the lower tiles of A.
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);

// The same factorization in block columns: per step one panel task and one update task per block
// column on its right (TaskGrain::block_columns), hinted as the step's potrf and as the gemm of
// the block column's diagonal tile.
template <class T>
void insert_cholesky_by_block_columns(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);

// The whole factorization as one task (TaskGrain::whole_matrix).
template <class T>
void insert_cholesky_as_one_task(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);

// Out-of-core order, for a matrix whose tiles do not fit the GPU's memory: the tile columns cut
// into panels [starts[p], starts[p + 1]). Each panel is first updated by every tile column on its
// left (left-looking: those columns pass through the GPU once per panel), then factored
// right-looking within itself, so that one panel and the columns streaming through need to be on
// the GPU at a time. The same tasks as insert_cholesky in another order; each panel's tasks rank
// below every task of the panels before it.
template <class T>
void insert_cholesky_in_panels(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints,
                               const std::vector<int>& starts);

// The first tile column of each panel when a panel may hold at most `budget_elements` elements of
// A's tiles (at least one tile column each): {0} when the whole matrix fits.
std::vector<int> panels_within(const TileGrid& A, double budget_elements);

// How a factorization is cut and ordered: the task grain, and the out-of-core panels (at most one
// panel: the whole matrix at once, in the grain asked for; more: insert_cholesky_in_panels, with
// tile tasks).
// With an accuracy (FactorOptions::accuracy, real double precision), the adaptive-precision
// factorization (adaptive_precision.hpp) on tiles, whatever the grain and panels say; its map goes
// to arithmetic_map where that is set.
struct CholeskyPlan {
  CholeskyPlan(TaskGrain task_grain = TaskGrain::automatic, std::vector<int> starts = {})  // NOLINT: from a grain
      : grain(task_grain), panel_starts(std::move(starts)) {}
  TaskGrain grain;
  std::vector<int> panel_starts;
  double accuracy = 0;
  TileArithmeticMap* arithmetic_map = nullptr;
};

// The factorization `plan` asks for (automatic grain: tiles; the API chooses the grain of a plan,
// see src/plan/plan.hpp).
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints, const CholeskyPlan& plan);

// Whether insert_cholesky(ctx, A, hints, plan) solves its panels by the inverses of the diagonal
// tiles' factors (a tensor-core factorization's tiles), and so keeps them where
// ctx.kept_panel_inverses asks.
template <class T>
bool solves_panels_by_inverse(const TaskContext& ctx, const TileGrid& A, const CholeskyPlan& plan);

// The hints of a task of out-of-core panel `panel` (0-based) of an nt x nt tile matrix: `hints`,
// with a priority below those of every earlier panel's tasks.
TaskHints in_panel(TaskHints hints, int panel, int nt);

// sums[k] := the log-determinant's share of factor tile (k, k), for every diagonal tile (their
// sum is log det(A) once the factorization has succeeded).
template <class T>
void insert_log_diagonals(const TaskContext& ctx, const TileGrid& L, double* sums, const SchedulingHints& hints);

// B := L^{-T} L^{-1} B (forward then backward substitution with the lower tiles of L).
template <class T>
void insert_cholesky_solve(const TaskContext& ctx, const TileGrid& L, const TileGrid& B, const SchedulingHints& hints);

// The inverse from a Cholesky factor (LAPACK's xPOTRI) on the lower tiles of L: L := L^{-1}
// (xTRTRI), then the lower triangle of L^{-T} L^{-1} (xLAUUM), which is A^{-1} for A = L L^T.
template <class T>
void insert_triangular_inverse(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);
template <class T>
void insert_triangle_product(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);
template <class T>
void insert_cholesky_inverse(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints);

// What a NaN or infinity in a symmetric matrix being loaded means: a leading minor that fails in
// a matrix about to be factored (LAPACK's xPOTRF reports it), or just a value of a factor that a
// solve propagates into the solution (LAPACK's xPOTRS has no positive INFO).
enum class NonFiniteInput { fails_factorization, propagates };

// Conversions between a caller's column-major matrix and tiles. For a symmetric tile matrix only
// the triangle `uplo` of the caller's matrix is read or written (the upper one transposed).
// Right-hand sides (general tile matrices) always let a NaN propagate.
template <class T>
void insert_load(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const T* src, int ld, NonFiniteInput non_finite,
                 const SchedulingHints& hints);
template <class T>
void insert_store(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* dst, int ld, bool skip_after_failure,
                  const SchedulingHints& hints);

}  // namespace tessera::detail

namespace tessera::detail {

// LAPACK's xPOTRF, xPOTRS and xPOSV on the caller's column-major matrices (triangle uplo of a,
// lda; b, ldb), through the tiles A and B: conversions in, the algorithm, conversions out.
// The factorization's tasks are cut and ordered as `plan` says; with log_diagonals (one slot per
// tile row) they are followed by insert_log_diagonals.
template <class T>
void insert_lapack_potrf(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints, const CholeskyPlan& plan = {}, double* log_diagonals = nullptr);
template <class T>
void insert_lapack_potrs(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, const T* a, int lda,
                         T* b, int ldb, const SchedulingHints& hints);
template <class T>
void insert_lapack_posv(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, T* a, int lda, T* b,
                        int ldb, const SchedulingHints& hints, const CholeskyPlan& plan = {},
                        double* log_diagonals = nullptr);

// LAPACK's xPOTRI on the caller's column-major factor (triangle uplo of a, lda): A^{-1} in that
// triangle, through the tiles A.
template <class T>
void insert_lapack_potri(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints);

}  // namespace tessera::detail
