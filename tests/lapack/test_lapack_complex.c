/* libtessera_lapack's complex routines (cpotrf_, zpotrf_, cpotrs_, zpotrs_, cposv_, zposv_, cpotri_,
 * zpotri_) against reference LAPACK.
 *
 * Linked as a LAPACK program with libtessera_lapack in front of reference LAPACK: its calls resolve
 * to Tessera's library. Each call is repeated straight into reference LAPACK (through its library
 * handle) and the two compared: INFO, XERBLA's name and argument position (this program defines
 * xerbla_ to record them), the results to rounding, and every element LAPACK must not write (the
 * other triangle, padding rows). With TESSERA_LAPACK_MIN_N=0 every call with work goes through
 * Tessera; the verbose line of each must say so.
 *
 *   test_lapack_complex REFERENCE_LIBLAPACK
 */
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lapack_test_support.h"
#include "reference_comparison.h"

/* L##hpd: a random Hermitian positive definite matrix (lda >= n, padding -7), diagonally dominant, the
 * diagonal's imaginary parts garbage that LAPACK does not read. */
#define DEFINE_CASES(T, R, L, EPS)                                                                                  \
  typedef void (*L##potrf_routine)(const char *, const int *, T *, const int *, int *, size_t);                     \
  typedef void (*L##potrs_routine)(const char *, const int *, const int *, const T *, const int *, T *, const int *, \
                                   int *, size_t);                                                                  \
  void L##potrf_(const char *, const int *, T *, const int *, int *, size_t);                                       \
  void L##potri_(const char *, const int *, T *, const int *, int *, size_t);                                       \
  void L##potrs_(const char *, const int *, const int *, const T *, const int *, T *, const int *, int *, size_t);   \
  void L##posv_(const char *, const int *, const int *, T *, const int *, T *, const int *, int *, size_t);          \
                                                                                                                    \
  static T *L##hpd(int n, int lda, unsigned long long state) {                                                      \
    T *A = malloc(sizeof(T) * (size_t)lda * (size_t)(n > 0 ? n : 1));                                              \
    for (size_t k = 0; k < (size_t)lda * (size_t)(n > 0 ? n : 1); ++k) A[k] = -7;                                   \
    for (int j = 0; j < n; ++j)                                                                                     \
      for (int i = j; i < n; ++i) {                                                                                 \
        const double re = next_uniform(&state), im = next_uniform(&state);                                         \
        if (i == j) {                                                                                               \
          A[i + (size_t)j * lda] = (T)(n + 0.0 + 0.75 * I);                                                         \
        } else {                                                                                                    \
          A[i + (size_t)j * lda] = (T)(re + im * I);                                                                \
          A[j + (size_t)i * lda] = (T)(re - im * I);                                                                \
        }                                                                                                           \
      }                                                                                                             \
    return A;                                                                                                       \
  }                                                                                                                 \
                                                                                                                    \
  static R L##max_difference(int rows, int cols, int ld, const T *a, const T *b) {                                  \
    R worst = 0;                                                                                                    \
    for (int j = 0; j < cols; ++j)                                                                                  \
      for (int i = 0; i < rows; ++i) {                                                                              \
        const R d = cabs(a[i + (size_t)j * ld] - b[i + (size_t)j * ld]) / (1 + cabs(b[i + (size_t)j * ld]));       \
        if (!(d <= worst)) worst = d;                                                                               \
      }                                                                                                             \
    return worst;                                                                                                   \
  }                                                                                                                 \
                                                                                                                    \
  /* potrf, then potri of the factor, and potrs and posv with its matrix: ours against reference. */               \
  static void L##compare(char uplo, int n, int lda, int bad) {                                                      \
    const char *name = #L;                                                                                          \
    T *A = L##hpd(n, lda, 42 + (unsigned)n);                                                                        \
    if (bad >= 0) A[bad + (size_t)bad * lda] = -1;                                                                  \
    const size_t size = sizeof(T) * (size_t)lda * (size_t)n;                                                        \
    T *ours = malloc(size), *theirs = malloc(size);                                                                 \
    memcpy(ours, A, size);                                                                                          \
    memcpy(theirs, A, size);                                                                                        \
    int info_ours = -99, info_theirs = -98;                                                                         \
    const int before = lines_through_tessera();                                                                     \
    L##potrf_(&uplo, &n, ours, &lda, &info_ours, 1);                                                                \
    CHECK(lines_through_tessera() == before + 1, "%spotrf n=%d did not go through Tessera", name, n);               \
    ((L##potrf_routine)dlsym(reference, #L "potrf_"))(&uplo, &n, theirs, &lda, &info_theirs, 1);                    \
    CHECK(info_ours == info_theirs, "%spotrf %c n=%d bad=%d: info %d, reference %d", name, uplo, n, bad, info_ours,  \
          info_theirs);                                                                                             \
    const R tolerance = 64 * n * EPS;                                                                               \
    if (info_theirs == 0) {                                                                                         \
      CHECK(L##max_difference(lda, n, lda, ours, theirs) < tolerance, "%spotrf %c n=%d: factor differs by %g", name, \
            uplo, n, (double)L##max_difference(lda, n, lda, ours, theirs));                                         \
      T *inverse = malloc(size);                                                                                    \
      memcpy(inverse, ours, size);                                                                                  \
      L##potri_(&uplo, &n, inverse, &lda, &info_ours, 1);                                                           \
      ((L##potrf_routine)dlsym(reference, #L "potri_"))(&uplo, &n, theirs, &lda, &info_theirs, 1);                  \
      CHECK(info_ours == 0 && info_theirs == 0 && L##max_difference(lda, n, lda, inverse, theirs) < tolerance,      \
            "%spotri %c n=%d: info %d, differs by %g", name, uplo, n, info_ours,                                    \
            (double)L##max_difference(lda, n, lda, inverse, theirs));                                               \
      free(inverse);                                                                                                \
    }                                                                                                               \
    const int nrhs = 3, ldb = lda;                                                                                  \
    T *B = malloc(sizeof(T) * ldb * nrhs), *x_ours = malloc(sizeof(T) * ldb * nrhs),                                \
      *x_theirs = malloc(sizeof(T) * ldb * nrhs);                                                                   \
    unsigned long long state = 7;                                                                                   \
    for (int k = 0; k < ldb * nrhs; ++k) B[k] = (T)(next_uniform(&state) + next_uniform(&state) * I);               \
    memcpy(x_ours, B, sizeof(T) * ldb * nrhs);                                                                      \
    memcpy(x_theirs, B, sizeof(T) * ldb * nrhs);                                                                    \
    memcpy(ours, A, size);                                                                                          \
    memcpy(theirs, A, size);                                                                                        \
    L##posv_(&uplo, &n, &nrhs, ours, &lda, x_ours, &ldb, &info_ours, 1);                                            \
    ((L##potrs_routine)dlsym(reference, #L "posv_"))(&uplo, &n, &nrhs, theirs, &lda, x_theirs, &ldb, &info_theirs, 1); \
    CHECK(info_ours == info_theirs && L##max_difference(ldb, nrhs, ldb, x_ours, x_theirs) < tolerance &&            \
              (info_theirs != 0 || L##max_difference(lda, n, lda, ours, theirs) < tolerance),                       \
          "%sposv %c n=%d bad=%d: info %d, reference %d, solution differs by %g", name, uplo, n, bad, info_ours,    \
          info_theirs, (double)L##max_difference(ldb, nrhs, ldb, x_ours, x_theirs));                                \
    if (info_theirs == 0) {                                                                                         \
      memcpy(x_ours, B, sizeof(T) * ldb * nrhs);                                                                    \
      memcpy(x_theirs, B, sizeof(T) * ldb * nrhs);                                                                  \
      L##potrs_(&uplo, &n, &nrhs, ours, &lda, x_ours, &ldb, &info_ours, 1);                                         \
      ((L##potrs_routine)dlsym(reference, #L "potrs_"))(&uplo, &n, &nrhs, theirs, &lda, x_theirs, &ldb,             \
                                                        &info_theirs, 1);                                           \
      CHECK(info_ours == 0 && info_theirs == 0 && L##max_difference(ldb, nrhs, ldb, x_ours, x_theirs) < tolerance,  \
            "%spotrs %c n=%d: info %d, solution differs by %g", name, uplo, n, info_ours,                           \
            (double)L##max_difference(ldb, nrhs, ldb, x_ours, x_theirs));                                           \
    }                                                                                                               \
    free(A);                                                                                                        \
    free(B);                                                                                                        \
    free(ours);                                                                                                     \
    free(theirs);                                                                                                   \
    free(x_ours);                                                                                                   \
    free(x_theirs);                                                                                                 \
  }                                                                                                                 \
                                                                                                                    \
  /* A bad argument: XERBLA with the routine's name and the position, INFO = -position, as LAPACK. */              \
  static void L##bad_arguments(void) {                                                                              \
    T A[16] = {0};                                                                                                  \
    const int n = 4, small = 3, negative = -1;                                                                      \
    int info = 0;                                                                                                   \
    char upper_name[8];                                                                                             \
    snprintf(upper_name, sizeof upper_name, "%cPOTRF", #L[0] == 'z' ? 'Z' : 'C');                                   \
    memset(&last_xerbla, 0, sizeof last_xerbla);                                                                    \
    L##potrf_("L", &n, A, &small, &info, 1);                                                                        \
    CHECK(info == -4 && last_xerbla.calls == 1 && last_xerbla.position == 4 &&                                      \
              strcmp(last_xerbla.name, upper_name) == 0,                                                            \
          "%spotrf lda < n: info %d, xerbla '%s' %d (%d calls)", #L, info, last_xerbla.name, last_xerbla.position,   \
          last_xerbla.calls);                                                                                       \
    memset(&last_xerbla, 0, sizeof last_xerbla);                                                                   \
    L##potri_("X", &n, A, &n, &info, 1);                                                                            \
    CHECK(info == -1 && last_xerbla.calls == 1 && last_xerbla.position == 1, "%spotri uplo X: info %d", #L, info);  \
    memset(&last_xerbla, 0, sizeof last_xerbla);                                                                   \
    L##potrs_("U", &n, &negative, A, &n, A, &n, &info, 1);                                                          \
    CHECK(info == -3 && last_xerbla.calls == 1 && last_xerbla.position == 3, "%spotrs nrhs < 0: info %d", #L, info); \
  }

DEFINE_CASES(double complex, double, z, DBL_EPSILON)
DEFINE_CASES(float complex, float, c, FLT_EPSILON)

int main(int argc, char **argv) {
  const int status = start_comparison(argc, argv);
  if (status) return status;
  const int sizes[] = {1, 17, 64, 65, 150};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (int u = 0; u < 2; ++u) {
      const char uplo = u ? 'U' : 'L';
      zcompare(uplo, sizes[s], sizes[s] + 3, -1);
      ccompare(uplo, sizes[s], sizes[s], -1);
    }
  /* Not positive definite at every position that matters (tiles of 64: TESSERA_NB). */
  const int bad[] = {0, 63, 64, 65, 149};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    zcompare('L', 150, 150, bad[b]);
    zcompare('U', 150, 151, bad[b]);
    ccompare('L', 150, 150, bad[b]);
  }
  zbad_arguments();
  cbad_arguments();
  printf("%d checks passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
