// The C API: LAPACK's argument checks and numbering, then the C++ API on the shared runtime.
#include "tessera/tessera.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "memory_overlap.hpp"
#include "tessera/batched.hpp"
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

// Then B sharing an element with A: an invalid B, reported as argument 6.
template <class T>
int check_solve_apart(int n, int nrhs, const T* A, int lda, const T* B, int ldb) {
  const bool overlap = n > 0 && nrhs > 0 && tessera::detail::right_hand_sides_overlap(A, lda, B, ldb, n, nrhs, sizeof(T));
  return overlap ? -6 : 0;
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
  if (const int bad = check_solve_apart(n, nrhs, A, lda, B, ldb)) return bad;
  if (n == 0 || nrhs == 0) return 0;
  return guarded(routine, [&] { return tessera::potrs(Runtime::shared(), n, nrhs, A, lda, B, ldb, options_for(uplo)); });
}

template <class T>
int posv(const char* routine, char uplo, int n, int nrhs, T* A, int lda, T* B, int ldb) {
  if (const int bad = check_solve(uplo, n, nrhs, A, lda, B, ldb)) return bad;
  if (const int bad = check_solve_apart(n, nrhs, A, lda, B, ldb)) return bad;
  if (n == 0) return 0;
  return guarded(routine, [&] { return tessera::posv(Runtime::shared(), n, nrhs, A, lda, B, ldb, options_for(uplo)); });
}

tessera::BatchOptions batch_options_for(char uplo) {
  const FactorOptions factor = options_for(uplo);
  tessera::BatchOptions options;
  options.uplo = factor.uplo;
  options.mode = factor.mode;
  return options;
}

// Argument positions of xPOTRF_BATCHED: uplo 1, n 2, A 3, lda 4, strideA 5, batch 6, info 7.
int check_potrf_batched(char uplo, int n, const void* A, int lda, long long strideA, int batch, const int* info) {
  if (!valid_uplo(uplo)) return -1;
  if (n < 0) return -2;
  if (A == nullptr && n > 0 && batch > 0) return -3;
  if (lda < std::max(1, n)) return -4;
  if (batch > 1 && strideA < static_cast<long long>(lda) * n) return -5;
  if (batch < 0) return -6;
  if (info == nullptr && batch > 0) return -7;
  return 0;
}

// xPOSV_BATCHED: uplo 1, n 2, nrhs 3, A 4, lda 5, strideA 6, B 7, ldb 8, strideB 9, batch 10, info 11.
int check_posv_batched(char uplo, int n, int nrhs, const void* A, int lda, long long strideA, const void* B, int ldb,
                       long long strideB, int batch, const int* info) {
  if (!valid_uplo(uplo)) return -1;
  if (n < 0) return -2;
  if (nrhs < 0) return -3;
  if (A == nullptr && n > 0 && batch > 0) return -4;
  if (lda < std::max(1, n)) return -5;
  if (batch > 1 && strideA < static_cast<long long>(lda) * n) return -6;
  if (B == nullptr && n > 0 && nrhs > 0 && batch > 0) return -7;
  if (ldb < std::max(1, n)) return -8;
  if (batch > 1 && strideB < static_cast<long long>(ldb) * nrhs) return -9;
  if (batch < 0) return -10;
  if (info == nullptr && batch > 0) return -11;
  return 0;
}

template <class T>
int potrf_batched(const char* routine, char uplo, int n, T* A, int lda, long long strideA, int batch, int* info) {
  if (const int bad = check_potrf_batched(uplo, n, A, lda, strideA, batch, info)) return bad;
  return guarded(routine, [&] {
    tessera::potrf_batched(Runtime::shared(), n, A, lda, strideA, batch, info, batch_options_for(uplo));
    return 0;
  });
}

template <class T>
int posv_batched(const char* routine, char uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                 long long strideB, int batch, int* info) {
  if (const int bad = check_posv_batched(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info)) return bad;
  return guarded(routine, [&] {
    tessera::posv_batched(Runtime::shared(), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, batch_options_for(uplo));
    return 0;
  });
}

}  // namespace

extern "C" {

int tessera_dpotrf_batched(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info) {
  return potrf_batched("tessera_dpotrf_batched", uplo, n, A, lda, strideA, batch, info);
}
int tessera_spotrf_batched(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info) {
  return potrf_batched("tessera_spotrf_batched", uplo, n, A, lda, strideA, batch, info);
}
int tessera_dposv_batched(char uplo, int n, int nrhs, double* A, int lda, long long strideA, double* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_dposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}
int tessera_sposv_batched(char uplo, int n, int nrhs, float* A, int lda, long long strideA, float* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_sposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}

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
