// The tile algorithms: loops that insert tasks through tasks.hpp. They know tiles and priorities,
// nothing of the runtime underneath.
#pragma once

#include "tasks.hpp"
#include "tessera/options.hpp"
#include "tessera/tile_matrix.hpp"

namespace tessera::detail {

// Tessera's own access to tile handles (TileMatrix::handle() is the application's).
struct TileAccess {
  template <class T>
  static void* handle(const TileMatrix<T>& A, int i, int j) {
    return A.stored_handle(i, j);
  }
};

template <class T>
TileRef tile_ref(const TileMatrix<T>& A, int i, int j) {
  return {TileAccess::handle(A, i, j), A.tile_height(i), A.tile_width(j), i, j, i * A.nb(), j * A.nb()};
}

// Right-looking tile Cholesky of the lower tiles of A.
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileMatrix<T>& A, const PriorityFunction& priority);

// B := L^{-T} L^{-1} B (forward then backward substitution with the lower tiles of L).
template <class T>
void insert_cholesky_solve(const TaskContext& ctx, const TileMatrix<T>& L, const TileMatrix<T>& B,
                           const PriorityFunction& priority);

// What a NaN or infinity in a symmetric matrix being loaded means: a leading minor that fails in
// a matrix about to be factored (LAPACK's xPOTRF reports it), or just a value of a factor that a
// solve propagates into the solution (LAPACK's xPOTRS has no positive INFO).
enum class NonFiniteInput { fails_factorization, propagates };

// Conversions between a caller's column-major matrix and tiles. For a symmetric tile matrix only
// the triangle `uplo` of the caller's matrix is read or written (the upper one transposed).
// Right-hand sides (general tile matrices) always let a NaN propagate.
template <class T>
void insert_load(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, const T* src, int ld,
                 NonFiniteInput non_finite, const PriorityFunction& priority);
template <class T>
void insert_store(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, T* dst, int ld, bool skip_after_failure,
                  const PriorityFunction& priority);

}  // namespace tessera::detail
