#include "algorithms.hpp"

namespace tessera::detail {

template <class T>
void insert_lapack_potrf(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const SchedulingHints& hints, const CholeskyPlan& plan) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, hints);
  insert_cholesky<T>(ctx, A, hints, plan);
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
                        int ldb, const SchedulingHints& hints, const CholeskyPlan& plan) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, hints);
  insert_load<T>(without_staging(ctx), B, Uplo::lower, b, ldb, NonFiniteInput::propagates, hints);
  insert_cholesky<T>(ctx, A, hints, plan);
  insert_store<T>(ctx, A, uplo, a, lda, false, hints);
  insert_cholesky_solve<T>(ctx, A, B, hints);
  // LAPACK leaves B as it was when the factorization fails.
  insert_store<T>(without_staging(ctx), B, Uplo::lower, b, ldb, true, hints);
}

template void insert_lapack_potrf<float>(const TaskContext&, const TileGrid&, Uplo, float*, int, const SchedulingHints&, const CholeskyPlan&);
template void insert_lapack_potrf<double>(const TaskContext&, const TileGrid&, Uplo, double*, int, const SchedulingHints&, const CholeskyPlan&);
template void insert_lapack_potrs<float>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, const float*, int, float*,
                                         int, const SchedulingHints&);
template void insert_lapack_potrs<double>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, const double*, int,
                                          double*, int, const SchedulingHints&);
template void insert_lapack_posv<float>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, float*, int, float*, int,
                                        const SchedulingHints&, const CholeskyPlan&);
template void insert_lapack_posv<double>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, double*, int, double*,
                                         int, const SchedulingHints&, const CholeskyPlan&);

}  // namespace tessera::detail
