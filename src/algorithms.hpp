// The tile algorithms: loops that insert tasks through tasks.hpp. They know tiles and priorities,
// nothing of the runtime underneath.
#pragma once

#include "tasks.hpp"
#include "tessera/options.hpp"
#include "tessera/tile_matrix.hpp"

namespace tessera::detail {

template <class T>
TileRef tile_ref(const TileMatrix<T>& A, int i, int j) {
  return {A.handle(i, j), A.tile_height(i), A.tile_width(j), i, j, i * A.nb(), j * A.nb()};
}

// Right-looking tile Cholesky of the lower tiles of A.
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileMatrix<T>& A, const PriorityFunction& priority);

// B := L^{-T} L^{-1} B (forward then backward substitution with the lower tiles of L).
template <class T>
void insert_cholesky_solve(const TaskContext& ctx, const TileMatrix<T>& L, const TileMatrix<T>& B,
                           const PriorityFunction& priority);

// Conversions between a caller's column-major matrix and tiles. For a symmetric tile matrix only
// the triangle `uplo` of the caller's matrix is read or written (the upper one transposed).
template <class T>
void insert_load(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, const T* src, int ld,
                 const PriorityFunction& priority);
template <class T>
void insert_store(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, T* dst, int ld, bool skip_after_failure,
                  const PriorityFunction& priority);

}  // namespace tessera::detail
