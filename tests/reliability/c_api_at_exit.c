/* The C API called from an atexit handler, as a program that cleans up at exit may do.
 *
 *   c_api_at_exit after-first-use   main factors once, which starts the shared runtime; the
 *                                   handler, registered before that, runs after the runtime was
 *                                   destroyed at exit: tessera_dpotrf must return
 *                                   TESSERA_RUNTIME_FAILURE and leave the matrix as it was.
 *   c_api_at_exit only-at-exit      the handler makes the process's first call: it must factor.
 *
 * Exits 0 when the handler's call behaved; 1 (from the handler) when not. A crash fails too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lapack/lapack_test_support.h"

#include "tessera/tessera.h"

/* Work for the runtime's tasks (main asks for a tile size, TESSERA_NB): small work without one
 * runs on the calling thread and needs no runtime. */
enum { n = 500 };
static int expect_failure;

/* A = G G^T / n + I from a fixed linear congruential sequence, lower triangle, lda = n. */
static void spd_matrix(double *A) {
  static double G[n * n];
  unsigned long long state = 7;
  for (int k = 0; k < n * n; ++k) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    G[k] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += G[i + k * n] * G[j + k * n];
      A[i + j * n] = s / n + (i == j);
    }
}


static int factor_and_check(const char *when, int expected_status) {
  static double A[n * n], F[n * n];
  spd_matrix(A);
  memcpy(F, A, sizeof A);
  const int status = tessera_dpotrf('L', n, F, n);
  int ok = status == expected_status;
  if (status == 0)
    ok = ok && factor_residual('L', n, A, F) < 1e-13;
  else
    ok = ok && memcmp(A, F, sizeof A) == 0; /* a refused call reads and writes nothing */
  printf("%s: tessera_dpotrf returned %d (expected %d): %s\n", when, status, expected_status, ok ? "ok" : "FAILED");
  fflush(stdout);
  return ok;
}

static void at_exit(void) {
  if (!factor_and_check("in an atexit handler", expect_failure ? TESSERA_RUNTIME_FAILURE : 0)) _exit(1);
}

int main(int argc, char **argv) {
  const int after_first_use = after_first_use_argument(argc, argv);
  setenv("TESSERA_NB", "128", 1);
  atexit(at_exit);
  expect_failure = after_first_use;
  if (after_first_use && !factor_and_check("in main", 0)) return 1;
  return 0;
}
