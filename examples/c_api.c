/* Tessera from C: LAPACK-style calls, info as the return value. */
#include <stdio.h>
#include <stdlib.h>

#include "tessera/tessera.h"

int main(void) {
  const int n = 300;
  double *A = malloc(sizeof(double) * n * n);
  double *b = malloc(sizeof(double) * n);
  for (int j = 0; j < n; ++j) {
    b[j] = 1.0;
    for (int i = 0; i < n; ++i) A[i + j * n] = (i == j) ? 2.0 * n : 1.0;
  }
  int info = tessera_dposv('U', n, 1, A, n, b, n);
  printf("tessera %s: dposv info = %d, x[0] = %.8f\n", tessera_version(), info, b[0]);
  /* A bad argument is reported as -i, as in LAPACK; tessera_last_error() says why. */
  const int bad = tessera_dpotrf('L', n, A, n - 1);
  printf("lda too small gives %d (%s)\n", bad, tessera_last_error());
  free(A);
  free(b);
  return info == 0 ? 0 : 1;
}
