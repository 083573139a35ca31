/* What the C test programs of the LAPACK drop-in and the C API share. */
#ifndef TESSERA_LAPACK_TEST_SUPPORT_H
#define TESSERA_LAPACK_TEST_SUPPORT_H

#include <math.h>

/* max |A - L L^T| / max |A| over the lower triangle of the n x n A, L in the lower triangle of F. */
static inline double factor_residual(int n, const double *A, const double *F) {
  double diff = 0, scale = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double s = 0;
      for (int k = 0; k <= j; ++k) s += F[i + k * n] * F[j + k * n];
      diff = fmax(diff, fabs(A[i + j * n] - s));
      scale = fmax(scale, fabs(A[i + j * n]));
    }
  return diff / scale;
}

#endif
