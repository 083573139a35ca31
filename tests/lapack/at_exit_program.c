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

static int factor_and_check(const char *when) {
  static double A[n * n], F[n * n];
  fill_dominant_spd_matrix(n, 11, A);
  memcpy(F, A, sizeof A);
  const int size = n;
  int info = -99;
  dpotrf_("L", &size, F, &size, &info, 1);
  const double residual = factor_residual('L', n, A, F);
  const int ok = info == 0 && residual < 1e-13;
  printf("%s: dpotrf_ info %d, max|A - L L^T| / max|A| = %g: %s\n", when, info, residual, ok ? "ok" : "FAILED");
  fflush(stdout);
  return ok;
}

static void at_exit(void) {
  if (!factor_and_check("in an atexit handler")) _exit(1);
}

int main(int argc, char **argv) {
  const int after_first_use = after_first_use_argument(argc, argv);
  atexit(at_exit);
  if (after_first_use && !factor_and_check("in main")) return 1;
  return 0;
}
