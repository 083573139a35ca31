#include "algorithms.hpp"

#include "tessera/precision.hpp"

namespace tessera::detail {

template <class T>
void insert_lapack_potrf(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints, const CholeskyPlan& plan, double* log_diagonals) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, hints);
  insert_cholesky<T>(ctx, A, hints, plan);
  if (log_diagonals) insert_log_diagonals<T>(ctx, A, log_diagonals, hints);
  insert_store<T>(ctx, A, uplo, a, lda, false, hints);
}

template <class T>
void insert_lapack_potrs(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, const T* a, int lda,
                         T* b, int ldb, const SchedulingHints& hints) {
  // A holds a factor: a NaN in it propagates into the solution, as in LAPACK's xPOTRS.
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::propagates, hints);
  insert_load<T>(without_staging(ctx), B, Uplo::lower, b, ldb, NonFiniteInput::propagates, hints);
  insert_cholesky_solve<T>(ctx, A, B, hints);
  insert_store<T>(without_staging(ctx), B, Uplo::lower, b, ldb, true, hints);
}

template <class T>
void insert_lapack_posv(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, T* a, int lda, T* b,
                        int ldb, const SchedulingHints& hints, const CholeskyPlan& plan, double* log_diagonals) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, hints);
  insert_load<T>(without_staging(ctx), B, Uplo::lower, b, ldb, NonFiniteInput::propagates, hints);
  insert_cholesky<T>(ctx, A, hints, plan);
  if (log_diagonals) insert_log_diagonals<T>(ctx, A, log_diagonals, hints);
  insert_store<T>(ctx, A, uplo, a, lda, false, hints);
  insert_cholesky_solve<T>(ctx, A, B, hints);
  // LAPACK leaves B as it was when the factorization fails.
  insert_store<T>(without_staging(ctx), B, Uplo::lower, b, ldb, true, hints);
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void insert_lapack_potrf<T>(const TaskContext&, const TileGrid&, Uplo, T*, int, const SchedulingHints&,    \
                                       const CholeskyPlan&, double*);                                                 \
  template void insert_lapack_potrs<T>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, const T*, int, T*, \
                                       int, const SchedulingHints&);                                                  \
  template void insert_lapack_posv<T>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, T*, int, T*, int,   \
                                      const SchedulingHints&, const CholeskyPlan&, double*);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
