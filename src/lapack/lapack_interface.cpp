// libtessera_lapack's exported symbols: LAPACK's Cholesky routines with LAPACK's Fortran ABI, in
// every symbol family of fortran_abi.hpp (dpotrf_, scipy_dpotrf_, dpotrf_64_, scipy_dpotrf_64_),
// so that a program calling any of them reaches Tessera when this library comes first in the
// search order (LD_PRELOAD, or linked before -llapack). Everything else in the library is hidden.
#include "fortran_abi.hpp"
#include "intercept.hpp"

#define TESSERA_LAPACK_EXPORT extern "C" __attribute__((visibility("default"), noinline))

using tessera::lapack::fortran_strlen;

// The four routines of one family in one precision (LETTER d with double, s with float, z and c
// with the complex types). Each
// passes its return address on: the caller's own LAPACK is the next one when the global search
// order has none (next_lapack.hpp).
#define TESSERA_LAPACK_PRECISION(Family, PREFIX, SUFFIX, LETTER, T)                                                  \
  TESSERA_LAPACK_EXPORT void PREFIX##LETTER##potrf##SUFFIX(const char* uplo, const Family::Int* n, T* a,             \
                                                           const Family::Int* lda, Family::Int* info,                \
                                                           fortran_strlen uplo_len) {                                \
    tessera::lapack::potrf<Family>(uplo, n, a, lda, info, uplo_len, __builtin_return_address(0));                   \
  }                                                                                                                  \
  TESSERA_LAPACK_EXPORT void PREFIX##LETTER##potri##SUFFIX(const char* uplo, const Family::Int* n, T* a,             \
                                                           const Family::Int* lda, Family::Int* info,                \
                                                           fortran_strlen uplo_len) {                                \
    tessera::lapack::potri<Family>(uplo, n, a, lda, info, uplo_len, __builtin_return_address(0));                   \
  }                                                                                                                  \
  TESSERA_LAPACK_EXPORT void PREFIX##LETTER##potrs##SUFFIX(const char* uplo, const Family::Int* n,                   \
                                                           const Family::Int* nrhs, const T* a,                      \
                                                           const Family::Int* lda, T* b, const Family::Int* ldb,     \
                                                           Family::Int* info, fortran_strlen uplo_len) {             \
    tessera::lapack::potrs<Family>(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len, __builtin_return_address(0));     \
  }                                                                                                                  \
  TESSERA_LAPACK_EXPORT void PREFIX##LETTER##posv##SUFFIX(const char* uplo, const Family::Int* n,                    \
                                                          const Family::Int* nrhs, T* a, const Family::Int* lda,     \
                                                          T* b, const Family::Int* ldb, Family::Int* info,           \
                                                          fortran_strlen uplo_len) {                                 \
    tessera::lapack::posv<Family>(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len, __builtin_return_address(0));      \
  }

// DSPOSV and ZCPOSV of one family.
#define TESSERA_LAPACK_REFINED(Family, PREFIX, SUFFIX)                                                                \
  TESSERA_LAPACK_EXPORT void PREFIX##dsposv##SUFFIX(                                                                  \
      const char* uplo, const Family::Int* n, const Family::Int* nrhs, double* a, const Family::Int* lda, double* b,  \
      const Family::Int* ldb, double* x, const Family::Int* ldx, double* work, float* swork, Family::Int* iter,       \
      Family::Int* info, fortran_strlen uplo_len) {                                                                   \
    tessera::lapack::posv_refined<Family>(uplo, n, nrhs, a, lda, b, ldb, x, ldx, work, swork, nullptr, iter, info,    \
                                          uplo_len, __builtin_return_address(0));                                     \
  }                                                                                                                   \
  TESSERA_LAPACK_EXPORT void PREFIX##zcposv##SUFFIX(                                                                  \
      const char* uplo, const Family::Int* n, const Family::Int* nrhs, std::complex<double>* a,                       \
      const Family::Int* lda, std::complex<double>* b, const Family::Int* ldb, std::complex<double>* x,               \
      const Family::Int* ldx, std::complex<double>* work, std::complex<float>* swork, double* rwork,                  \
      Family::Int* iter, Family::Int* info, fortran_strlen uplo_len) {                                                \
    tessera::lapack::posv_refined<Family>(uplo, n, nrhs, a, lda, b, ldb, x, ldx, work, swork, rwork, iter, info,      \
                                          uplo_len, __builtin_return_address(0));                                     \
  }

// The sixteen routines of one family, and its two refined solves.
#define TESSERA_LAPACK_FAMILY(Family, PREFIX, SUFFIX)                        \
  TESSERA_LAPACK_PRECISION(Family, PREFIX, SUFFIX, d, double)               \
  TESSERA_LAPACK_PRECISION(Family, PREFIX, SUFFIX, s, float)                \
  TESSERA_LAPACK_PRECISION(Family, PREFIX, SUFFIX, z, std::complex<double>) \
  TESSERA_LAPACK_PRECISION(Family, PREFIX, SUFFIX, c, std::complex<float>) \
  TESSERA_LAPACK_REFINED(Family, PREFIX, SUFFIX)

TESSERA_LAPACK_FAMILY(tessera::lapack::Lp64, , _)
TESSERA_LAPACK_FAMILY(tessera::lapack::ScipyLp64, scipy_, _)
TESSERA_LAPACK_FAMILY(tessera::lapack::Ilp64, , _64_)
TESSERA_LAPACK_FAMILY(tessera::lapack::ScipyIlp64, scipy_, _64_)
