// The tile algorithms: loops that insert tasks through tasks.hpp. They know tiles and scheduling hints,
// nothing of the runtime underneath (tests/task_graph runs them on a recording backend).
#pragma once

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

// The factorization `grain` asks for (automatic: tiles).
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints, TaskGrain grain);

// B := L^{-T} L^{-1} B (forward then backward substitution with the lower tiles of L).
template <class T>
void insert_cholesky_solve(const TaskContext& ctx, const TileGrid& L, const TileGrid& B, const SchedulingHints& hints);

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
// The factorization's tasks are cut as `grain` says.
template <class T>
void insert_lapack_potrf(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints, TaskGrain grain = TaskGrain::automatic);
template <class T>
void insert_lapack_potrs(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, const T* a, int lda,
                         T* b, int ldb, const SchedulingHints& hints);
template <class T>
void insert_lapack_posv(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, T* a, int lda, T* b,
                        int ldb, const SchedulingHints& hints, TaskGrain grain = TaskGrain::automatic);

}  // namespace tessera::detail
