// Requests the plan runs on the calling thread (Path::calling_thread): LAPACK on the caller's
// arrays, one matrix after another, with LAPACK's semantics and info (a NaN pivot included, as the
// tile kernels report it), and no task and no runtime.
#pragma once

#include "tessera/cholesky.hpp"
#include "tessera/options.hpp"

namespace tessera::detail {

// What a factorization on the calling thread found: LAPACK's info, and whether the referenced
// triangle held a NaN or an infinity (Request::non_finite_input).
struct CallingThreadResult {
  int info = 0;
  bool non_finite = false;
};

template <class T>
CallingThreadResult potrf_on_calling_thread(Uplo uplo, int n, T* A, int lda);
template <class T>
void potrs_on_calling_thread(Uplo uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb);
// potrf, then potrs where it succeeded (B left as it was otherwise, as LAPACK's xPOSV).
template <class T>
CallingThreadResult posv_on_calling_thread(Uplo uplo, int n, int nrhs, T* A, int lda, T* B, int ldb);

// LAPACK's xPOTRI (info: the first zero on the factor's diagonal).
template <class T>
int potri_on_calling_thread(Uplo uplo, int n, T* A, int lda);

// The first exactly zero entry on the diagonal of the n x n matrix A (1-based), 0 when none:
// LAPACK's xPOTRI fails there before changing anything.
template <class T>
int first_zero_diagonal(int n, const T* A, int lda);

// A strided batch (tessera/batched.hpp's layout): each matrix's info into info[k] where info is
// given (a factorization); nrhs > 0 solves each matrix that factored (or every one, without info).
template <class T>
void batch_on_calling_thread(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                             long long strideB, int batch, int* info, bool factor);

// Out of place: each matrix's triangle `uplo` of the source (source + k * sourceStride, leading
// dimension sourceLd) copied into A's matrix k, the other triangle zero, and factored there at
// once, while it is in cache; the source is not written. info[k]: matrix k's info.
template <class T>
void batch_into_on_calling_thread(Uplo uplo, int n, const T* source, int sourceLd, long long sourceStride, T* A,
                                  int lda, long long strideA, int batch, int* info);

// The same for the batch's inverses from their factors (xPOTRI on each; info[k] its info).
template <class T>
void inverse_batch_on_calling_thread(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info);

// Out of place: each factor's triangle `uplo` (source + k * sourceStride, leading dimension
// sourceLd; not written) copied into X's matrix k and inverted there by xPOTRI, its triangle then
// mirrored into the other (the whole Hermitian inverse), while it is in cache. info[k]: xPOTRI's
// info; a failed matrix's X_k is NaN.
template <class T>
void inverse_into_on_calling_thread(Uplo uplo, int n, const T* source, int sourceLd, long long sourceStride, T* X,
                                    int ldx, long long strideX, int batch, int* info);

// A request that is already done, with what the calling thread found.
Request finished_request(const CallingThreadResult& result);

}  // namespace tessera::detail
