/* libtessera_lapack's refined solves (dsposv_, zcposv_) against reference LAPACK's.
 *
 * Linked as a LAPACK program with libtessera_lapack in front of reference LAPACK: its calls resolve
 * to Tessera's library. Each call is repeated straight into reference LAPACK (through its library
 * handle) and the two compared: INFO, ITER (both converged, or both falling back for the same
 * reason where the reason does not depend on rounding), XERBLA's name and argument position (this
 * program defines xerbla_ to record them), the solutions to rounding, A unchanged after a converged
 * refinement and holding the factor after a fallback, B and the padding never written. With
 * TESSERA_LAPACK_MIN_N=0 every call with work goes through Tessera; the verbose line of each must
 * say so.
 *
 *   test_lapack_refined REFERENCE_LIBLAPACK
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

void dsposv_(const char *, const int *, const int *, double *, const int *, double *, const int *, double *,
             const int *, double *, float *, int *, int *, size_t);
void zcposv_(const char *, const int *, const int *, double complex *, const int *, double complex *, const int *,
             double complex *, const int *, double complex *, float complex *, double *, int *, int *, size_t);
typedef void (*dsposv_routine)(const char *, const int *, const int *, double *, const int *, double *, const int *,
                               double *, const int *, double *, float *, int *, int *, size_t);
typedef void (*zcposv_routine)(const char *, const int *, const int *, double complex *, const int *,
                               double complex *, const int *, double complex *, const int *, double complex *,
                               float complex *, double *, int *, int *, size_t);

/* How a case's matrix is made. */
enum kind {
  dominant,     /* diagonally dominant: the refinement converges */
  hilbert,      /* the Hilbert matrix (order 9 and up: too ill-conditioned for single precision) */
  beyond_float, /* dominant, times 1e40: narrowing overflows (ITER -2) */
  not_spd       /* dominant with A(bad, bad) = -1 */
};

/* One case in one precision: ours against reference LAPACK's. */
#define DEFINE_CASE(T, L, CONJUGATE, ABS, ROUTINE, CALL_OURS, CALL_THEIRS)                                                          \
  static void L##case(char uplo, int n, int lda, enum kind kind, int bad) {                                          \
    const int nrhs = 2, ldb = n + 1, ldx = n + 2;                                                                    \
    const size_t a_size = (size_t)lda * n, b_size = (size_t)ldb * nrhs, x_size = (size_t)ldx * nrhs;                 \
    T *A = malloc(sizeof(T) * a_size), *B = malloc(sizeof(T) * b_size);                                              \
    unsigned long long state = 42 + (unsigned)n;                                                                     \
    for (size_t k = 0; k < a_size; ++k) A[k] = -7;                                                                   \
    for (size_t k = 0; k < b_size; ++k) B[k] = (T)(next_uniform(&state) + (sizeof(T) > 8 ? next_uniform(&state) : 0) * I); \
    for (int j = 0; j < n; ++j)                                                                                      \
      for (int i = j; i < n; ++i) {                                                                                  \
        T value = kind == hilbert ? (T)(1.0 / (i + j + 1)) : (i == j ? (T)n : (T)next_uniform(&state));              \
        if (kind == beyond_float) value *= 1e40;                                                                     \
        A[i + (size_t)j * lda] = value;                                                                              \
        A[j + (size_t)i * lda] = CONJUGATE(value);                                                                   \
      }                                                                                                              \
    if (kind == not_spd) A[bad + (size_t)bad * lda] = -1;                                                            \
    T *a_ours = malloc(sizeof(T) * a_size), *a_theirs = malloc(sizeof(T) * a_size);                                  \
    T *b_ours = malloc(sizeof(T) * b_size), *b_theirs = malloc(sizeof(T) * b_size);                                  \
    T *x_ours = malloc(sizeof(T) * x_size), *x_theirs = malloc(sizeof(T) * x_size);                                  \
    T *work = malloc(sizeof(T) * n * nrhs);                                                                          \
    void *swork = malloc(sizeof(T) / 2 * (size_t)n * (n + nrhs));                                                    \
    double *rwork = malloc(sizeof(double) * n);                                                                      \
    memcpy(a_ours, A, sizeof(T) * a_size);                                                                           \
    memcpy(a_theirs, A, sizeof(T) * a_size);                                                                         \
    memcpy(b_ours, B, sizeof(T) * b_size);                                                                           \
    memcpy(b_theirs, B, sizeof(T) * b_size);                                                                         \
    for (size_t k = 0; k < x_size; ++k) x_ours[k] = x_theirs[k] = -5;                                                \
    int info_ours = -99, info_theirs = -98, iter_ours = -99, iter_theirs = -98;                                      \
    const int before = lines_through_tessera();                                                                      \
    CALL_OURS;                                                                                                       \
    CHECK(lines_through_tessera() == before + 1, "%s n=%d did not go through Tessera", ROUTINE, n);                  \
    CALL_THEIRS;                                                                                                     \
    CHECK(info_ours == info_theirs, "%s %c n=%d kind=%d: info %d, reference %d", ROUTINE, uplo, n, kind, info_ours,  \
          info_theirs);                                                                                              \
    /* (At n = 1 a complex residual can stall just above LAPACK's bound: reference LAPACK may fall back.) */      \
    if (kind == dominant)                                                                                            \
      CHECK(iter_ours >= 0 && (n == 1 || iter_theirs >= 0), "%s %c n=%d: iter %d, reference %d", ROUTINE, uplo, n,   \
            iter_ours, iter_theirs);                                                                                 \
    else if (kind == hilbert)                                                                                        \
      CHECK(iter_ours < 0 && iter_theirs < 0, "%s %c n=%d hilbert: iter %d, reference %d", ROUTINE, uplo, n,         \
            iter_ours, iter_theirs);                                                                                 \
    else                                                                                                             \
      CHECK(iter_ours == iter_theirs, "%s %c n=%d kind=%d: iter %d, reference %d", ROUTINE, uplo, n, kind, iter_ours, \
            iter_theirs);                                                                                            \
    CHECK(memcmp(b_ours, B, sizeof(T) * b_size) == 0, "%s %c n=%d: B written", ROUTINE, uplo, n);                    \
    if (iter_ours >= 0)                                                                                              \
      CHECK(memcmp(a_ours, A, sizeof(T) * a_size) == 0, "%s %c n=%d: A written by a converged refinement", ROUTINE,   \
            uplo, n);                                                                                                \
    if (info_theirs == 0) {                                                                                          \
      double worst = 0; /* max |x_ours - x_theirs| / max |x_theirs|, the worst column */                           \
      for (int j = 0; j < nrhs; ++j) {                                                                               \
        double difference = 0, size = 0;                                                                             \
        for (int i = 0; i < n; ++i) {                                                                                \
          difference = fmax(difference, ABS(x_ours[i + (size_t)j * ldx] - x_theirs[i + (size_t)j * ldx]));          \
          size = fmax(size, ABS(x_theirs[i + (size_t)j * ldx]));                                                    \
        }                                                                                                            \
        if (!(difference / size <= worst)) worst = difference / size;                                                \
      }                                                                                                              \
      /* The Hilbert matrix's condition number scales the difference of two accurate solutions. */                  \
      const double tolerance = kind == hilbert ? 1e-3 : 1e-12;                                                       \
      CHECK(worst < tolerance, "%s %c n=%d kind=%d: solutions differ by %g", ROUTINE, uplo, n, kind, worst);         \
      for (int j = 0; j < nrhs; ++j)                                                                                 \
        for (int i = n; i < ldx; ++i)                                                                                \
          CHECK(x_ours[i + (size_t)j * ldx] == -5, "%s %c n=%d: X's padding written", ROUTINE, uplo, n);             \
    }                                                                                                                \
    free(A), free(B), free(a_ours), free(a_theirs), free(b_ours), free(b_theirs), free(x_ours), free(x_theirs);      \
    free(work), free(swork), free(rwork);                                                                            \
  }

DEFINE_CASE(double, d, , fabs, "dsposv",
            dsposv_(&uplo, &n, &nrhs, a_ours, &lda, b_ours, &ldb, x_ours, &ldx, work, swork, &iter_ours, &info_ours, 1),
            ((dsposv_routine)dlsym(reference, "dsposv_"))(&uplo, &n, &nrhs, a_theirs, &lda, b_theirs, &ldb, x_theirs,
                                                          &ldx, work, swork, &iter_theirs, &info_theirs, 1))
DEFINE_CASE(double complex, z, conj, cabs, "zcposv",
            zcposv_(&uplo, &n, &nrhs, a_ours, &lda, b_ours, &ldb, x_ours, &ldx, work, swork, rwork, &iter_ours,
                    &info_ours, 1),
            ((zcposv_routine)dlsym(reference, "zcposv_"))(&uplo, &n, &nrhs, a_theirs, &lda, b_theirs, &ldb, x_theirs,
                                                          &ldx, work, swork, rwork, &iter_theirs, &info_theirs, 1))

/* A bad argument: XERBLA with the routine's name and the position, INFO = -position, ITER 0. */
static void bad_arguments(void) {
  double a[16] = {0}, b[4] = {0}, x[4], work[4];
  float swork[20];
  const int n = 4, one = 1, small = 3, negative = -1;
  int info = 0, iter = 7;
  memset(&last_xerbla, 0, sizeof last_xerbla);
  dsposv_("L", &n, &one, a, &n, b, &n, x, &small, work, swork, &iter, &info, 1);
  CHECK(info == -9 && iter == 0 && last_xerbla.calls == 1 && last_xerbla.position == 9 &&
            strcmp(last_xerbla.name, "DSPOSV") == 0,
        "dsposv ldx < n: info %d iter %d, xerbla '%s' %d (%d calls)", info, iter, last_xerbla.name,
        last_xerbla.position, last_xerbla.calls);
  memset(&last_xerbla, 0, sizeof last_xerbla);
  dsposv_("L", &n, &negative, a, &n, b, &n, x, &n, work, swork, &iter, &info, 1);
  CHECK(info == -3 && last_xerbla.position == 3, "dsposv nrhs < 0: info %d", info);
  double complex za[16] = {0}, zb[4] = {0}, zx[4], zwork[4];
  float complex zswork[20];
  double rwork[4];
  memset(&last_xerbla, 0, sizeof last_xerbla);
  zcposv_("X", &n, &one, za, &n, zb, &n, zx, &n, zwork, zswork, rwork, &iter, &info, 1);
  CHECK(info == -1 && last_xerbla.calls == 1 && last_xerbla.position == 1 && strcmp(last_xerbla.name, "ZCPOSV") == 0,
        "zcposv uplo X: info %d, xerbla '%s' %d", info, last_xerbla.name, last_xerbla.position);
  memset(&last_xerbla, 0, sizeof last_xerbla);
  zcposv_("U", &n, &one, za, &small, zb, &n, zx, &n, zwork, zswork, rwork, &iter, &info, 1);
  CHECK(info == -5 && last_xerbla.position == 5, "zcposv lda < n: info %d", info);
  const int zero = 0;
  iter = 7;
  dsposv_("L", &zero, &one, a, &one, b, &one, x, &one, work, swork, &iter, &info, 1);
  CHECK(info == 0 && iter == 0, "dsposv n = 0: info %d iter %d", info, iter);
}

int main(int argc, char **argv) {
  const int status = start_comparison(argc, argv);
  if (status) return status;
  const int sizes[] = {1, 17, 64, 65, 150};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (int u = 0; u < 2; ++u) {
      const char uplo = u ? 'U' : 'L';
      dcase(uplo, sizes[s], sizes[s] + 3, dominant, -1);
      zcase(uplo, sizes[s], sizes[s], dominant, -1);
    }
  for (int u = 0; u < 2; ++u) {
    const char uplo = u ? 'U' : 'L';
    dcase(uplo, 9, 9, hilbert, -1);
    zcase(uplo, 10, 11, hilbert, -1);
    dcase(uplo, 40, 41, beyond_float, -1);
    zcase(uplo, 40, 40, beyond_float, -1);
    /* Not positive definite at every position that matters (tiles of 64: TESSERA_NB). */
    const int bad[] = {0, 63, 64, 65, 149};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
      dcase(uplo, 150, 150, not_spd, bad[b]);
      zcase(uplo, 150, 151, not_spd, bad[b]);
    }
  }
  bad_arguments();
  printf("%d checks passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
