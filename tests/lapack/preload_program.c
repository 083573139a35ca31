/* An ordinary LAPACK program, linked to the system LAPACK only: it factors and solves with
 * dpotrf_, dposv_ and spotrf_ and checks the results with its own loops (no LAPACK). Run under
 * LD_PRELOAD=libtessera_lapack.so by run_preload_test.sh, it shows that the calls reach Tessera
 * and that Tessera's own tile kernels, whose LAPACKE calls resolve to the interposed dpotrf_ too,
 * neither recurse nor deadlock. Last, a child made by fork() factors again: it has none of the
 * parent's StarPU threads, so its call must go to the system LAPACK rather than wait forever.
 *
 *   preload_program [N]      (default 600)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lapack_test_support.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, size_t uplo_len);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
            int *info, size_t uplo_len);

static int failures;

static double uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Full symmetric A = G G^T / n + I. */
static double *spd_matrix(int n, unsigned seed) {
  double *G = malloc(sizeof(double) * n * n), *A = malloc(sizeof(double) * n * n);
  uint64_t state = seed;
  for (int k = 0; k < n * n; ++k) G[k] = uniform(&state);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += G[i + k * n] * G[j + k * n];
      A[i + j * n] = A[j + i * n] = s / n + (i == j ? 1.0 : 0.0);
    }
  free(G);
  return A;
}


static void check(int ok, const char *what, double value) {
  printf("%s: %s (%g)\n", ok ? "ok" : "FAILED", what, value);
  if (!ok) ++failures;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 600;
  Dl_info where;
  void *symbol = dlsym(RTLD_DEFAULT, "dpotrf_");
  printf("dpotrf_ resolves to %s\n", symbol && dladdr(symbol, &where) ? where.dli_fname : "(none)");

  double *A = spd_matrix(n, 11u), *F = malloc(sizeof(double) * n * n);
  memcpy(F, A, sizeof(double) * n * n);
  int info = -99;
  dpotrf_("L", &n, F, &n, &info, 1);
  check(info == 0, "dpotrf_ info 0", info);
  const double residual = factor_residual('L', n, A, F);
  check(residual < 1e-13, "dpotrf_ max|A - L L^T| / max|A|", residual);

  /* dposv_ on the upper triangle: A x = b with x = (1, ..., 1). */
  const int nrhs = 1;
  double *b = malloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i) {
    b[i] = 0;
    for (int k = 0; k < n; ++k) b[i] += A[i + k * n];
  }
  memcpy(F, A, sizeof(double) * n * n);
  info = -99;
  dposv_("U", &n, &nrhs, F, &n, b, &n, &info, 1);
  double error = 0;
  for (int i = 0; i < n; ++i) error = fmax(error, fabs(b[i] - 1.0));
  check(info == 0 && error < 1e-10, "dposv_ max|x - 1|", error);

  /* spotrf_ of the same matrix in single precision. */
  float *S = malloc(sizeof(float) * n * n);
  for (int k = 0; k < n * n; ++k) S[k] = (float)A[k];
  info = -99;
  spotrf_("L", &n, S, &n, &info, 1);
  for (int k = 0; k < n * n; ++k) F[k] = S[k];
  const double single_residual = factor_residual('L', n, A, F);
  check(info == 0 && single_residual < 1e-5, "spotrf_ max|A - L L^T| / max|A|", single_residual);

  /* fork() after the runtime started: the child's call must complete (on the system LAPACK). */
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    memcpy(F, A, sizeof(double) * n * n);
    info = -99;
    dpotrf_("L", &n, F, &n, &info, 1);
    const double child_residual = factor_residual('L', n, A, F);
    printf("child after fork: dpotrf_ info %d, max|A - L L^T| / max|A| = %g\n", info, child_residual);
    fflush(stdout);
    _exit(info == 0 && child_residual < 1e-13 ? 0 : 1);
  }
  int child_status = -1;
  waitpid(child, &child_status, 0);
  check(child > 0 && WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0, "dpotrf_ in a child after fork",
        child_status);

  free(A), free(F), free(b), free(S);
  printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
