#include "algorithms.hpp"

namespace tessera::detail {

template <class T>
void insert_lapack_potrf(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* a, int lda,
                         const PriorityFunction& priority) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, priority);
  insert_cholesky<T>(ctx, A, priority);
  insert_store<T>(ctx, A, uplo, a, lda, false, priority);
}

template <class T>
void insert_lapack_potrs(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, const T* a, int lda,
                         T* b, int ldb, const PriorityFunction& priority) {
  // A holds a factor: a NaN in it propagates into the solution, as in LAPACK's xPOTRS.
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::propagates, priority);
  insert_load<T>(ctx, B, Uplo::lower, b, ldb, NonFiniteInput::propagates, priority);
  insert_cholesky_solve<T>(ctx, A, B, priority);
  insert_store<T>(ctx, B, Uplo::lower, b, ldb, true, priority);
}

template <class T>
void insert_lapack_posv(const TaskContext& ctx, const TileGrid& A, const TileGrid& B, Uplo uplo, T* a, int lda, T* b,
                        int ldb, const PriorityFunction& priority) {
  insert_load<T>(ctx, A, uplo, a, lda, NonFiniteInput::fails_factorization, priority);
  insert_load<T>(ctx, B, Uplo::lower, b, ldb, NonFiniteInput::propagates, priority);
  insert_cholesky<T>(ctx, A, priority);
  insert_store<T>(ctx, A, uplo, a, lda, false, priority);
  insert_cholesky_solve<T>(ctx, A, B, priority);
  // LAPACK leaves B as it was when the factorization fails.
  insert_store<T>(ctx, B, Uplo::lower, b, ldb, true, priority);
}

template void insert_lapack_potrf<float>(const TaskContext&, const TileGrid&, Uplo, float*, int, const PriorityFunction&);
template void insert_lapack_potrf<double>(const TaskContext&, const TileGrid&, Uplo, double*, int, const PriorityFunction&);
template void insert_lapack_potrs<float>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, const float*, int, float*,
                                         int, const PriorityFunction&);
template void insert_lapack_potrs<double>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, const double*, int,
                                          double*, int, const PriorityFunction&);
template void insert_lapack_posv<float>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, float*, int, float*, int,
                                        const PriorityFunction&);
template void insert_lapack_posv<double>(const TaskContext&, const TileGrid&, const TileGrid&, Uplo, double*, int, double*,
                                         int, const PriorityFunction&);

}  // namespace tessera::detail
