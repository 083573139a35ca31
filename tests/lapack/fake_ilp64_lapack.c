/* A stand-in for a 64-bit-integer LAPACK (OpenBLAS built with INTERFACE64=1 and the symbol suffix
 * 64_, as Julia uses it): the six routines of the dpotrf_64_ family, which only count their calls
 * and record their sizes. ilp64_program links it, so it is the next LAPACK after
 * libtessera_lapack for that family: calls with sizes beyond Tessera's int must come here.
 */
#include <stddef.h>
#include <stdint.h>

static int64_t calls, last_n, last_lda;

static void record(const int64_t *n, const int64_t *lda, int64_t *info) {
  ++calls;
  last_n = *n;
  last_lda = *lda;
  *info = 0;
}

/* Calls so far, and the sizes of the last one. */
int64_t fake_ilp64_calls(int64_t *n, int64_t *lda) {
  *n = last_n;
  *lda = last_lda;
  return calls;
}

void dpotrf_64_(const char *uplo, const int64_t *n, double *a, const int64_t *lda, int64_t *info, size_t len) {
  (void)uplo, (void)a, (void)len;
  record(n, lda, info);
}
void spotrf_64_(const char *uplo, const int64_t *n, float *a, const int64_t *lda, int64_t *info, size_t len) {
  (void)uplo, (void)a, (void)len;
  record(n, lda, info);
}
void dpotrs_64_(const char *uplo, const int64_t *n, const int64_t *nrhs, const double *a, const int64_t *lda,
                double *b, const int64_t *ldb, int64_t *info, size_t len) {
  (void)uplo, (void)nrhs, (void)a, (void)b, (void)ldb, (void)len;
  record(n, lda, info);
}
void spotrs_64_(const char *uplo, const int64_t *n, const int64_t *nrhs, const float *a, const int64_t *lda,
                float *b, const int64_t *ldb, int64_t *info, size_t len) {
  (void)uplo, (void)nrhs, (void)a, (void)b, (void)ldb, (void)len;
  record(n, lda, info);
}
void dposv_64_(const char *uplo, const int64_t *n, const int64_t *nrhs, double *a, const int64_t *lda, double *b,
               const int64_t *ldb, int64_t *info, size_t len) {
  (void)uplo, (void)nrhs, (void)a, (void)b, (void)ldb, (void)len;
  record(n, lda, info);
}
void sposv_64_(const char *uplo, const int64_t *n, const int64_t *nrhs, float *a, const int64_t *lda, float *b,
               const int64_t *ldb, int64_t *info, size_t len) {
  (void)uplo, (void)nrhs, (void)a, (void)b, (void)ldb, (void)len;
  record(n, lda, info);
}
