// The C API: LAPACK's argument checks and numbering, then the C++ API on the shared runtime.
#include "tessera/tessera.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"

namespace {

using tessera::FactorOptions;
using tessera::Runtime;

bool valid_uplo(char uplo) { return uplo == 'L' || uplo == 'l' || uplo == 'U' || uplo == 'u'; }

FactorOptions options_for(char uplo) {
  FactorOptions options = FactorOptions::from_environment();
  options.uplo = (uplo == 'U' || uplo == 'u') ? tessera::Uplo::upper : tessera::Uplo::lower;
  return options;
}

// Runs a call, turning exceptions into a status: C callers never see one.
template <class Call>
int guarded(const char* routine, Call&& call) {
  try {
    return call();
  } catch (const tessera::InvalidArgument& e) {
    std::fprintf(stderr, "tessera: %s: %s\n", routine, e.what());
    return e.position() > 0 ? -e.position() : TESSERA_RUNTIME_FAILURE;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: %s: %s\n", routine, e.what());
    return TESSERA_RUNTIME_FAILURE;
  }
}

// LAPACK's xPOTRF checks, then a null A.
int check_potrf(char uplo, int n, const void* A, int lda) {
  if (!valid_uplo(uplo)) return -1;
  if (n < 0) return -2;
  if (A == nullptr && n > 0) return -3;
  if (lda < std::max(1, n)) return -4;
  return 0;
}

// LAPACK's xPOTRS/xPOSV checks, then null pointers.
int check_solve(char uplo, int n, int nrhs, const void* A, int lda, const void* B, int ldb) {
  if (!valid_uplo(uplo)) return -1;
  if (n < 0) return -2;
  if (nrhs < 0) return -3;
  if (A == nullptr && n > 0) return -4;
  if (lda < std::max(1, n)) return -5;
  if (B == nullptr && n > 0 && nrhs > 0) return -6;
  if (ldb < std::max(1, n)) return -7;
  return 0;
}

template <class T>
int potrf(const char* routine, char uplo, int n, T* A, int lda) {
  if (const int bad = check_potrf(uplo, n, A, lda)) return bad;
  if (n == 0) return 0;
  return guarded(routine, [&] { return tessera::potrf(Runtime::shared(), n, A, lda, options_for(uplo)); });
}

template <class T>
int potrs(const char* routine, char uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb) {
  if (const int bad = check_solve(uplo, n, nrhs, A, lda, B, ldb)) return bad;
  if (n == 0 || nrhs == 0) return 0;
  return guarded(routine, [&] { return tessera::potrs(Runtime::shared(), n, nrhs, A, lda, B, ldb, options_for(uplo)); });
}

template <class T>
int posv(const char* routine, char uplo, int n, int nrhs, T* A, int lda, T* B, int ldb) {
  if (const int bad = check_solve(uplo, n, nrhs, A, lda, B, ldb)) return bad;
  if (n == 0) return 0;
  return guarded(routine, [&] { return tessera::posv(Runtime::shared(), n, nrhs, A, lda, B, ldb, options_for(uplo)); });
}

}  // namespace

extern "C" {

int tessera_dpotrf(char uplo, int n, double* A, int lda) { return potrf("tessera_dpotrf", uplo, n, A, lda); }
int tessera_spotrf(char uplo, int n, float* A, int lda) { return potrf("tessera_spotrf", uplo, n, A, lda); }
int tessera_dpotrs(char uplo, int n, int nrhs, const double* A, int lda, double* B, int ldb) {
  return potrs("tessera_dpotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_spotrs(char uplo, int n, int nrhs, const float* A, int lda, float* B, int ldb) {
  return potrs("tessera_spotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_dposv(char uplo, int n, int nrhs, double* A, int lda, double* B, int ldb) {
  return posv("tessera_dposv", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_sposv(char uplo, int n, int nrhs, float* A, int lda, float* B, int ldb) {
  return posv("tessera_sposv", uplo, n, nrhs, A, lda, B, ldb);
}
const char* tessera_version(void) { return tessera::version(); }

}  // extern "C"
