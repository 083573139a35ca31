// libtessera_lapack's exported symbols: LAPACK's Cholesky routines with LAPACK's Fortran ABI, so
// that a program calling dpotrf_ & co. reaches Tessera when this library comes first in the
// search order (LD_PRELOAD, or linked before -llapack). Everything else in the library is hidden.
#include "fortran_abi.hpp"
#include "intercept.hpp"

#define TESSERA_LAPACK_EXPORT __attribute__((visibility("default")))

using tessera::lapack::fortran_int;
using tessera::lapack::fortran_strlen;

extern "C" {

TESSERA_LAPACK_EXPORT void dpotrf_(const char* uplo, const fortran_int* n, double* a, const fortran_int* lda,
                                   fortran_int* info, fortran_strlen uplo_len) {
  tessera::lapack::potrf(uplo, n, a, lda, info, uplo_len);
}

TESSERA_LAPACK_EXPORT void spotrf_(const char* uplo, const fortran_int* n, float* a, const fortran_int* lda,
                                   fortran_int* info, fortran_strlen uplo_len) {
  tessera::lapack::potrf(uplo, n, a, lda, info, uplo_len);
}

TESSERA_LAPACK_EXPORT void dpotrs_(const char* uplo, const fortran_int* n, const fortran_int* nrhs, const double* a,
                                   const fortran_int* lda, double* b, const fortran_int* ldb, fortran_int* info,
                                   fortran_strlen uplo_len) {
  tessera::lapack::potrs(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
}

TESSERA_LAPACK_EXPORT void spotrs_(const char* uplo, const fortran_int* n, const fortran_int* nrhs, const float* a,
                                   const fortran_int* lda, float* b, const fortran_int* ldb, fortran_int* info,
                                   fortran_strlen uplo_len) {
  tessera::lapack::potrs(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
}

TESSERA_LAPACK_EXPORT void dposv_(const char* uplo, const fortran_int* n, const fortran_int* nrhs, double* a,
                                  const fortran_int* lda, double* b, const fortran_int* ldb, fortran_int* info,
                                  fortran_strlen uplo_len) {
  tessera::lapack::posv(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
}

TESSERA_LAPACK_EXPORT void sposv_(const char* uplo, const fortran_int* n, const fortran_int* nrhs, float* a,
                                  const fortran_int* lda, float* b, const fortran_int* ldb, fortran_int* info,
                                  fortran_strlen uplo_len) {
  tessera::lapack::posv(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
}

}  // extern "C"
