/* What the C test programs of the LAPACK drop-in and the C API share. */
#ifndef TESSERA_LAPACK_TEST_SUPPORT_H
#define TESSERA_LAPACK_TEST_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks that count and report themselves: a failed one prints where and why, and goes on. A
 * program prints the counts at its end and fails if any check did. */
__attribute__((unused)) static int checks_passed, checks_failed;

#define CHECK(condition, ...)                                  \
  do {                                                         \
    if (condition) {                                           \
      ++checks_passed;                                         \
    } else {                                                   \
      ++checks_failed;                                         \
      printf("FAILED (%s:%d): ", __FILE__, __LINE__);          \
      printf(__VA_ARGS__);                                     \
      printf("\n");                                            \
    }                                                          \
  } while (0)

/* Fills the n x n A (lda = n, both triangles) with a symmetric, diagonally dominant (hence
 * positive definite) matrix: diagonal n, off-diagonal entries in [-0.5, 0.5) from a linear
 * congruential sequence started at state, so that every program can rebuild it. */
static inline void fill_dominant_spd_matrix(int n, uint64_t state, double *A) {
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const double value = (double)(state >> 11) / 9007199254740992.0 - 0.5;
      A[i + j * n] = A[j + i * n] = i == j ? n : value;
    }
}

/* The same in a new array (malloc; the caller frees it). */
static inline double *dominant_spd_matrix(int n, uint64_t state) {
  double *A = malloc(sizeof(double) * n * n);
  fill_dominant_spd_matrix(n, state, A);
  return A;
}

/* max |A - L L^T| / max |A| over the lower triangle of the n x n A, L the factor held in the
 * triangle uplo ('L' or 'U') of F (U^T for upper). */
static inline double factor_residual(char uplo, int n, const double *A, const double *F) {
  double diff = 0, scale = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double s = 0;
      for (int k = 0; k <= j; ++k)
        s += uplo == 'L' ? F[i + k * n] * F[j + k * n] : F[k + i * n] * F[k + j * n];
      diff = fmax(diff, fabs(A[i + j * n] - s));
      scale = fmax(scale, fabs(A[i + j * n]));
    }
  return diff / scale;
}

/* The one argument of the at-exit test programs: 1 for after-first-use, 0 for only-at-exit;
 * anything else prints the usage and exits 2. */
static inline int after_first_use_argument(int argc, char **argv) {
  const int after_first_use = argc == 2 && strcmp(argv[1], "after-first-use") == 0;
  if (argc != 2 || (!after_first_use && strcmp(argv[1], "only-at-exit") != 0)) {
    fprintf(stderr, "usage: %s after-first-use|only-at-exit\n", argv[0]);
    exit(2);
  }
  return after_first_use;
}

#endif
