/* An ordinary LAPACK program (linked to the system LAPACK only) that factors from an atexit
 * handler, as a program cleaning up at exit may do. Run under LD_PRELOAD=libtessera_lapack.so by
 * run_at_exit_test.sh.
 *
 *   at_exit_program after-first-use   main factors once, which starts Tessera's runtime; the
 *                                     handler, registered before that, runs after the runtime
 *                                     was stopped at exit: its dpotrf_ must still factor.
 *   at_exit_program only-at-exit      the handler makes the process's first call.
 *
 * Exits 0 when every call factored right; 1 (from the handler) when not. A crash fails too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lapack_test_support.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);

enum { n = 301 };

/* Symmetric and diagonally dominant (fixed linear congruential sequence): positive definite. */
static void spd_matrix(double *A) {
  unsigned long long state = 11;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const double value = (double)(state >> 11) / 9007199254740992.0 - 0.5;
      A[i + j * n] = A[j + i * n] = i == j ? n : value;
    }
}


static int factor_and_check(const char *when) {
  static double A[n * n], F[n * n];
  spd_matrix(A);
  memcpy(F, A, sizeof A);
  const int size = n;
  int info = -99;
  dpotrf_("L", &size, F, &size, &info, 1);
  const double residual = factor_residual(n, A, F);
  const int ok = info == 0 && residual < 1e-13;
  printf("%s: dpotrf_ info %d, max|A - L L^T| / max|A| = %g: %s\n", when, info, residual, ok ? "ok" : "FAILED");
  fflush(stdout);
  return ok;
}

static void at_exit(void) {
  if (!factor_and_check("in an atexit handler")) _exit(1);
}

int main(int argc, char **argv) {
  const int after_first_use = argc == 2 && strcmp(argv[1], "after-first-use") == 0;
  if (argc != 2 || (!after_first_use && strcmp(argv[1], "only-at-exit") != 0)) {
    fprintf(stderr, "usage: %s after-first-use|only-at-exit\n", argv[0]);
    return 2;
  }
  atexit(at_exit);
  if (after_first_use && !factor_and_check("in main")) return 1;
  return 0;
}
