/* A program without LAPACK that loads lapack_plugin (linked against reference LAPACK) with
 * dlopen(RTLD_LOCAL), as Python loads numpy, and calls LAPACK through it. Run under
 * LD_PRELOAD=libtessera_lapack.so by run_plugin_test.sh, it checks that libtessera_lapack leaves
 * the plugin its own LAPACK and its own xerbla_:
 *   - a routine libtessera_lapack does not handle (dorgqr_) with a bad argument calls the
 *     plugin's xerbla_, not one that Tessera's dependencies bring into the process;
 *   - dpotrf_ with a bad argument calls the plugin's xerbla_ too, with LAPACK's name and position;
 *   - small calls go to the plugin's LAPACK (run_plugin_test.sh reads the verbose line), large
 *     ones through Tessera, and both factor right.
 *
 *   plugin_host LAPACK_PLUGIN
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapack_test_support.h"

static int failures;

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  fflush(stdout);
  if (!ok) ++failures;
}

static void *symbol(void *plugin, const char *name) {
  void *found = dlsym(plugin, name);
  if (!found) {
    fprintf(stderr, "plugin_host: %s not found in the plugin\n", name);
    exit(2);
  }
  return found;
}

typedef int (*xerbla_calls_fn)(char name[8], int *position);
typedef void (*dpotrf_fn)(char, int, double *, int, int *);
typedef void (*dposv_fn)(char, int, int, double *, int, double *, int, int *);
typedef void (*dorgqr_fn)(int, int, int, double *, int, const double *, double *, int, int *);

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LAPACK_PLUGIN\n", argv[0]);
    return 2;
  }
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "plugin_host: %s\n", dlerror());
    return 2;
  }
  const xerbla_calls_fn xerbla_calls = (xerbla_calls_fn)symbol(plugin, "plugin_xerbla_calls");
  const dpotrf_fn potrf = (dpotrf_fn)symbol(plugin, "plugin_dpotrf");
  const dposv_fn posv = (dposv_fn)symbol(plugin, "plugin_dposv");
  const dorgqr_fn orgqr = (dorgqr_fn)symbol(plugin, "plugin_dorgqr");
  char name[8];
  int position = 0, info = -99;

  /* DORGQR with LDA = 1 < M = 2: argument 5. */
  double a[4] = {0}, tau[2] = {0}, work[8] = {0};
  orgqr(2, 2, 2, a, 1, tau, work, 8, &info);
  int calls = xerbla_calls(name, &position);
  printf("dorgqr_ with a bad LDA: info %d, plugin's xerbla_ called %d times ('%s', %d)\n", info, calls, name, position);
  check(info == -5 && calls == 1 && strcmp(name, "DORGQR") == 0 && position == 5,
        "a routine Tessera does not handle calls the plugin's own xerbla_");

  /* DPOTRF with LDA = 2 < N = 3: argument 4. */
  info = -99;
  potrf('L', 3, a, 2, &info);
  calls = xerbla_calls(name, &position);
  printf("dpotrf_ with a bad LDA: info %d, plugin's xerbla_ called %d times ('%s', %d)\n", info, calls, name, position);
  check(info == -4 && calls == 1 && strcmp(name, "DPOTRF") == 0 && position == 4,
        "dpotrf_ calls the plugin's own xerbla_");

  /* Below and above TESSERA_LAPACK_MIN_N (run_plugin_test.sh sets 200). */
  const int sizes[] = {57, 263};
  for (int s = 0; s < 2; ++s) {
    const int n = sizes[s];
    double *A = dominant_spd_matrix(n, 100u + (unsigned)n), *F = malloc(sizeof(double) * n * n);
    memcpy(F, A, sizeof(double) * n * n);
    info = -99;
    potrf('L', n, F, n, &info);
    const double residual = factor_residual('L', n, A, F);
    printf("dpotrf_ n=%d: info %d, max|A - L L^T| / max|A| = %g\n", n, info, residual);
    check(info == 0 && residual < 1e-13, "dpotrf_ factors");
    free(A), free(F);
  }

  /* DPOSV through the plugin's LAPACK, which calls dpotrf_ and dpotrs_ itself: x = (1, ..., 1). */
  const int n = 61, nrhs = 1;
  double *A = dominant_spd_matrix(n, 7u), *b = malloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i) {
    b[i] = 0;
    for (int k = 0; k < n; ++k) b[i] += A[i + k * n];
  }
  info = -99;
  posv('U', n, nrhs, A, n, b, n, &info);
  double error = 0;
  for (int i = 0; i < n; ++i) error = fmax(error, fabs(b[i] - 1.0));
  printf("dposv_ n=%d: info %d, max|x - 1| = %g\n", n, info, error);
  check(info == 0 && error < 1e-12, "dposv_ solves");
  free(A), free(b);

  printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
