/* The 64-bit-integer entry points of libtessera_lapack (dpotrf_64_ and scipy_dpotrf_64_ families:
 * INTEGER arguments and INFO of 64 bits), under LD_PRELOAD with every call sent through Tessera
 * (run_ilp64_test.sh). The program is linked to fake_ilp64_lapack, the next LAPACK for the
 * dpotrf_64_ family; nothing defines the scipy_*_64_ family besides libtessera_lapack. It checks:
 *   - factorizations and solves in both precisions and triangles, and all 64 bits of INFO;
 *   - a matrix that is not positive definite: INFO is the column;
 *   - bad arguments, judged on 64 bits: INFO = -position, and the family's XERBLA (defined here)
 *     gets LAPACK's name and position;
 *   - sizes beyond INT_MAX (here LDA, with N = 1 so that the array is one element): passed to the
 *     next LAPACK, or, with none, refused like a bad argument.
 * The routines are looked up at run time, so that a library without them fails the checks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapack_test_support.h"

typedef void (*potrf_d)(const char *, const int64_t *, double *, const int64_t *, int64_t *, size_t);
typedef void (*potrf_s)(const char *, const int64_t *, float *, const int64_t *, int64_t *, size_t);
typedef void (*solve_d)(const char *, const int64_t *, const int64_t *, double *, const int64_t *, double *,
                        const int64_t *, int64_t *, size_t);
typedef void (*solve_s)(const char *, const int64_t *, const int64_t *, float *, const int64_t *, float *,
                        const int64_t *, int64_t *, size_t);

int64_t fake_ilp64_calls(int64_t *n, int64_t *lda);

static int failures;
static const int64_t unset = 0x5555555555555555LL; /* INFO before a call: every byte must change */

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  fflush(stdout);
  if (!ok) ++failures;
}

static void *routine(const char *name) {
  void *found = dlsym(RTLD_DEFAULT, name);
  if (!found) {
    printf("FAILED: %s is not defined\n", name);
    exit(1);
  }
  return found;
}

/* XERBLA of each family, as a program may define it: the last name and position. (Exported, as
 * in a program linked to a LAPACK that calls them.) */
static char xerbla_name[8];
static int64_t xerbla_position;
static int xerbla_calls;
static void record_xerbla(const char *name, const int64_t *position, size_t length) {
  memset(xerbla_name, 0, sizeof xerbla_name);
  memcpy(xerbla_name, name, length < sizeof xerbla_name - 1 ? length : sizeof xerbla_name - 1);
  xerbla_position = *position;
  ++xerbla_calls;
}
void xerbla_64_(const char *name, const int64_t *position, size_t length) { record_xerbla(name, position, length); }
void scipy_xerbla_64_(const char *name, const int64_t *position, size_t length) {
  record_xerbla(name, position, length);
}

/* b = A (1, ..., 1)^T for each of nrhs columns. */
static double *ones_rhs(int n, int nrhs, const double *A) {
  double *b = malloc(sizeof(double) * n * nrhs);
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i) {
      b[i + r * n] = 0;
      for (int k = 0; k < n; ++k) b[i + r * n] += A[i + k * n];
    }
  return b;
}

static double distance_from_ones(int count, const double *x) {
  double error = 0;
  for (int i = 0; i < count; ++i) error = fmax(error, fabs(x[i] - 1.0));
  return error;
}

static void factorizations_and_solves(void) {
  const int64_t n = 157, nrhs = 2;
  const potrf_d dpotrf = (potrf_d)routine("dpotrf_64_");
  const potrf_s spotrf = (potrf_s)routine("scipy_spotrf_64_");
  const solve_d dposv = (solve_d)routine("scipy_dposv_64_");
  const solve_d dpotrs = (solve_d)routine("dpotrs_64_");
  const solve_s sposv = (solve_s)routine("sposv_64_");
  const solve_s spotrs = (solve_s)routine("scipy_spotrs_64_");
  double *A = dominant_spd_matrix((int)n, 5u), *F = malloc(sizeof(double) * n * n);
  float *S = malloc(sizeof(float) * n * n), *sb = malloc(sizeof(float) * n * nrhs);
  const char uplos[2] = {'L', 'U'};
  for (int u = 0; u < 2; ++u) {
    const char uplo = uplos[u];
    memcpy(F, A, sizeof(double) * n * n);
    int64_t info = unset;
    dpotrf(&uplo, &n, F, &n, &info, 1);
    check(info == 0 && factor_residual(uplo, (int)n, A, F) < 1e-13, "dpotrf_64_ factors, INFO = 0 in 64 bits");

    double *b = ones_rhs((int)n, (int)nrhs, A);
    info = unset;
    dpotrs(&uplo, &n, &nrhs, F, &n, b, &n, &info, 1);
    check(info == 0 && distance_from_ones((int)(n * nrhs), b) < 1e-12, "dpotrs_64_ solves");
    free(b);

    b = ones_rhs((int)n, (int)nrhs, A);
    memcpy(F, A, sizeof(double) * n * n);
    info = unset;
    dposv(&uplo, &n, &nrhs, F, &n, b, &n, &info, 1);
    check(info == 0 && distance_from_ones((int)(n * nrhs), b) < 1e-12, "scipy_dposv_64_ solves");
    free(b);

    for (int64_t k = 0; k < n * n; ++k) S[k] = (float)A[k];
    b = ones_rhs((int)n, (int)nrhs, A);
    for (int64_t k = 0; k < n * nrhs; ++k) sb[k] = (float)b[k];
    info = unset;
    sposv(&uplo, &n, &nrhs, S, &n, sb, &n, &info, 1);
    for (int64_t k = 0; k < n * nrhs; ++k) b[k] = sb[k];
    check(info == 0 && distance_from_ones((int)(n * nrhs), b) < 1e-4, "sposv_64_ solves");
    for (int64_t k = 0; k < n * nrhs; ++k) sb[k] = 1.0f;
    for (int64_t k = 0; k < n * n; ++k) S[k] = (float)A[k];
    info = unset;
    spotrf(&uplo, &n, S, &n, &info, 1);
    check(info == 0, "scipy_spotrf_64_ factors");
    info = unset;
    spotrs(&uplo, &n, &nrhs, S, &n, sb, &n, &info, 1); /* sb := A^{-1} 1 */
    double error = 0;
    for (int64_t i = 0; i < n; ++i) { /* A sb must give back 1 */
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += A[i + k * n] * sb[k];
      error = fmax(error, fabs(s - 1.0));
    }
    check(info == 0 && error < 1e-4, "scipy_spotrs_64_ solves");
    free(b);
  }
  /* Not positive definite from column 100. */
  memcpy(F, A, sizeof(double) * n * n);
  F[99 + 99 * n] = -1.0;
  int64_t info = unset;
  const char lower = 'L';
  dpotrf(&lower, &n, F, &n, &info, 1);
  printf("dpotrf_64_ of a matrix not positive definite at column 100: INFO %lld\n", (long long)info);
  check(info == 100, "INFO is the column, in 64 bits");
  free(A), free(F), free(S), free(sb);
}

static void bad_arguments_and_large_sizes(void) {
  const potrf_d dpotrf = (potrf_d)routine("dpotrf_64_");
  const potrf_d scipy_dpotrf = (potrf_d)routine("scipy_dpotrf_64_");
  const char lower = 'L';
  double a[4] = {4, 0, 0, 0};
  int64_t fake_n = 0, fake_lda = 0;
  const int64_t fake_calls_before = fake_ilp64_calls(&fake_n, &fake_lda);

  /* N = 3e9 with LDA = 1: LDA (argument 4) is bad, judged on 64 bits. */
  const int64_t huge = 3000000000LL, one = 1;
  int64_t info = unset;
  xerbla_calls = 0;
  dpotrf(&lower, &huge, a, &one, &info, 1);
  check(info == -4 && xerbla_calls == 1 && strcmp(xerbla_name, "DPOTRF") == 0 && xerbla_position == 4,
        "dpotrf_64_ N=3e9 LDA=1: INFO -4, xerbla_64_('DPOTRF', 4)");

  /* N = 1, LDA = 3e9: valid for LAPACK, beyond Tessera's int: the next LAPACK takes it. */
  info = unset;
  xerbla_calls = 0;
  dpotrf(&lower, &one, a, &huge, &info, 1);
  const int64_t fake_calls = fake_ilp64_calls(&fake_n, &fake_lda);
  printf("dpotrf_64_ N=1 LDA=3e9: INFO %lld; the next LAPACK had %lld calls, the last with N=%lld LDA=%lld\n",
         (long long)info, (long long)(fake_calls - fake_calls_before), (long long)fake_n, (long long)fake_lda);
  check(info == 0 && xerbla_calls == 0 && fake_calls == fake_calls_before + 1 && fake_lda == huge,
        "a size beyond INT_MAX goes to the next LAPACK unchanged");

  /* The same in the scipy_*_64_ family, which no other library defines: refused as argument 4. */
  info = unset;
  xerbla_calls = 0;
  scipy_dpotrf(&lower, &one, a, &huge, &info, 1);
  check(info == -4 && xerbla_calls == 1 && strcmp(xerbla_name, "DPOTRF") == 0 && xerbla_position == 4,
        "scipy_dpotrf_64_ LDA=3e9 with no next LAPACK: INFO -4, scipy_xerbla_64_('DPOTRF', 4)");
  check(a[0] == 4, "refused calls leave A alone");
}

int main(void) {
  factorizations_and_solves();
  bad_arguments_and_large_sizes();
  printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
