/* A plugin that uses LAPACK the way a Python extension such as numpy's lapack_lite does: it is
 * linked against its own LAPACK (reference LAPACK here), is loaded with dlopen(RTLD_LOCAL), so
 * that LAPACK stays out of the process's global search order, and defines its own xerbla_ to
 * catch bad arguments (numpy raises ValueError from it). plugin_host.c drives it.
 */
#include <stdio.h>
#include <string.h>

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
            int *info, size_t uplo_len);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);

static char xerbla_name[8];
static int xerbla_position, xerbla_calls;

/* The plugin's own handler: LAPACK routines loaded with the plugin must call this one. */
void xerbla_(const char *name, const int *position, size_t name_length) {
  memset(xerbla_name, 0, sizeof xerbla_name);
  memcpy(xerbla_name, name, name_length < sizeof xerbla_name - 1 ? name_length : sizeof xerbla_name - 1);
  xerbla_position = *position;
  ++xerbla_calls;
}

/* Calls of the plugin's xerbla_ since the last look, with the last name and position. */
int plugin_xerbla_calls(char name[8], int *position) {
  const int calls = xerbla_calls;
  memcpy(name, xerbla_name, sizeof xerbla_name);
  *position = xerbla_position;
  xerbla_calls = 0;
  memset(xerbla_name, 0, sizeof xerbla_name);
  return calls;
}

void plugin_dpotrf(char uplo, int n, double *a, int lda, int *info) { dpotrf_(&uplo, &n, a, &lda, info, 1); }

void plugin_dposv(char uplo, int n, int nrhs, double *a, int lda, double *b, int ldb, int *info) {
  dposv_(&uplo, &n, &nrhs, a, &lda, b, &ldb, info, 1);
}

void plugin_dorgqr(int m, int n, int k, double *a, int lda, const double *tau, double *work, int lwork, int *info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
