#include "algorithms.hpp"

#include "tessera/precision.hpp"

namespace tessera::detail {

// Step k finishes tile row k of L^{-1}: the tiles below the diagonal tile are scaled by its
// inverse from the right, the rows below updated with row k's tiles on the left of the diagonal,
// those tiles then multiplied by the diagonal tile's inverse from the left, and the diagonal tile
// inverted. Row k is final after step k.
template <class T>
void insert_triangular_inverse(const TaskContext& caller_ctx, const TileGrid& A, const SchedulingHints& hints) {
  const TaskContext ctx = with_native_arithmetic(caller_ctx);
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    for (int m = k + 1; m < nt; ++m)
      insert_trsm<T>(ctx, Side::right, Trans::no, T(-1), A.ref(k, k), A.ref(m, k), hints(TaskKind::trsm, k, m, k, nt));
    for (int m = k + 1; m < nt; ++m)
      for (int n = 0; n < k; ++n)
        insert_gemm<T>(ctx, Trans::no, Trans::no, T(1), A.ref(m, k), A.ref(k, n), T(1), A.ref(m, n),
                       hints(TaskKind::gemm, k, m, n, nt));
    for (int n = 0; n < k; ++n)
      insert_trsm<T>(ctx, Side::left, Trans::no, T(1), A.ref(k, k), A.ref(k, n), hints(TaskKind::trsm, k, k, n, nt));
    insert_trtri<T>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
  }
}

// (L^T L)(m, n) for m >= n is the sum over tile rows k >= m of L(k, m)^T L(k, n): step k adds tile
// row k's terms to the tiles above it (reading row k before it changes), then forms its own
// L(k, k)^T L(k, n) and the diagonal tile's L(k, k)^T L(k, k).
template <class T>
void insert_triangle_product(const TaskContext& caller_ctx, const TileGrid& A, const SchedulingHints& hints) {
  const TaskContext ctx = with_native_arithmetic(caller_ctx);
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    for (int n = 0; n < k; ++n) {
      insert_syrk<T>(ctx, Trans::conjugate_transpose, T(1), A.ref(k, n), T(1), A.ref(n, n),
                     hints(TaskKind::syrk, k, n, n, nt));
      for (int m = n + 1; m < k; ++m)
        insert_gemm<T>(ctx, Trans::conjugate_transpose, Trans::no, T(1), A.ref(k, m), A.ref(k, n), T(1), A.ref(m, n),
                       hints(TaskKind::gemm, k, m, n, nt));
    }
    for (int n = 0; n < k; ++n)
      insert_trmm<T>(ctx, Side::left, Trans::conjugate_transpose, T(1), A.ref(k, k), A.ref(k, n),
                     hints(TaskKind::trsm, k, k, n, nt));
    insert_lauum<T>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
  }
}

template <class T>
void insert_cholesky_inverse(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  insert_triangular_inverse<T>(ctx, A, hints);
  insert_triangle_product<T>(ctx, A, hints);
}

template <class T>
void insert_lapack_potri(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints) {
  // A holds a factor whose diagonal has no zero (checked before): a NaN in it propagates.
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::propagates, hints);
  insert_cholesky_inverse<T>(ctx, A, hints);
  insert_store<T>(ctx, A, uplo, a, lda, false, hints);
}

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template void insert_triangular_inverse<T>(const TaskContext&, const TileGrid&, const SchedulingHints&);        \
  template void insert_triangle_product<T>(const TaskContext&, const TileGrid&, const SchedulingHints&);          \
  template void insert_cholesky_inverse<T>(const TaskContext&, const TileGrid&, const SchedulingHints&);          \
  template void insert_lapack_potri<T>(const TaskContext&, const TileGrid&, Uplo, T*, int, const SchedulingHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
