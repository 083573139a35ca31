/* libtessera_lapack against reference LAPACK.
 *
 * This program is linked like a LAPACK program that put libtessera_lapack in front of reference
 * LAPACK (-ltessera_lapack -llapack): its calls to dpotrf_ & co. resolve to Tessera's library,
 * which sends small matrices on to reference LAPACK (the next definition) and the others through
 * Tessera. Each call is repeated straight into reference LAPACK (through its library handle) and
 * the two are compared: INFO, XERBLA's name and argument position (this program defines xerbla_
 * to record them, as LAPACK lets programs do), the results, and every element LAPACK must not
 * write (the other triangle, padding rows). The verbose line of each call must name the path the
 * threshold asks for.
 *
 *   test_lapack_reference REFERENCE_LIBLAPACK
 * Environment: TESSERA_LAPACK_MIN_N (required), TESSERA_LAPACK_VERBOSE=1, TESSERA_MODE.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lapack_test_support.h"


static int min_n;
static const char *mode = "hybrid";

/* ---- XERBLA, as a program may define it --------------------------------------------------- */

struct xerbla_record {
  char name[16];
  size_t name_length;
  int position;
  int calls;
};
static struct xerbla_record last_xerbla;

static void reset_xerbla(void) { memset(&last_xerbla, 0, sizeof last_xerbla); }

void xerbla_(const char *name, const int *position, size_t name_length) {
  memset(last_xerbla.name, 0, sizeof last_xerbla.name);
  memcpy(last_xerbla.name, name, name_length < sizeof last_xerbla.name - 1 ? name_length : sizeof last_xerbla.name - 1);
  last_xerbla.name_length = name_length;
  last_xerbla.position = *position;
  ++last_xerbla.calls;
}

static void check_bad_argument(const char *expected_name, int expected_position, int info_ours,
                               const struct xerbla_record *ours, int info_reference,
                               const struct xerbla_record *reference) {
  CHECK(reference->calls == 1 && strcmp(reference->name, expected_name) == 0 &&
            reference->position == expected_position && info_reference == -expected_position,
        "reference LAPACK itself: '%s' position %d info %d (expected '%s' %d)", reference->name, reference->position,
        info_reference, expected_name, expected_position);
  CHECK(ours->calls == 1 && strcmp(ours->name, reference->name) == 0 && ours->name_length == reference->name_length &&
            ours->position == reference->position && info_ours == info_reference,
        "'%s' argument %d: xerbla_ got '%s' (length %zu) position %d, %d calls, info %d; reference '%s' (length "
        "%zu) position %d, info %d",
        expected_name, expected_position, ours->name, ours->name_length, ours->position, ours->calls, info_ours,
        reference->name, reference->name_length, reference->position, info_reference);
}

/* ---- stderr of one call, for its verbose line ------------------------------------------------ */

static FILE *capture_file;
static int saved_stderr = -1;
static char captured_text[1 << 16];

static void begin_capture(void) {
  fflush(stderr);
  capture_file = tmpfile();
  saved_stderr = dup(STDERR_FILENO);
  dup2(fileno(capture_file), STDERR_FILENO);
}

static const char *end_capture(void) {
  fflush(stderr);
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  rewind(capture_file);
  const size_t length = fread(captured_text, 1, sizeof captured_text - 1, capture_file);
  captured_text[length] = '\0';
  fclose(capture_file);
  fputs(captured_text, stderr); /* keep it in the test log */
  return captured_text;
}

/* Tessera's documented routing: a call goes through Tessera when it does at least the arithmetic
 * of a Cholesky factorization of order TESSERA_LAPACK_MIN_N. */
static double factorization_work(double n) { return n * n * n / 3.0; }
static double solve_work(double n, double nrhs) { return 2.0 * n * n * nrhs; }

/* The call's verbose line must exist and name the path: the system LAPACK below the threshold,
 * Tessera in the configured mode above it. */
static void check_path(const char *captured, const char *precision, const char *routine, char uplo, int n, int nrhs,
                       double work) {
  char prefix[128], expected[160];
  if (nrhs >= 0)
    snprintf(prefix, sizeof prefix, "tessera-lapack: %s%s uplo=%c n=%d nrhs=%d: ", precision, routine, uplo, n, nrhs);
  else
    snprintf(prefix, sizeof prefix, "tessera-lapack: %s%s uplo=%c n=%d: ", precision, routine, uplo, n);
  if (work < factorization_work(min_n))
    snprintf(expected, sizeof expected, "%ssystem LAPACK,", prefix);
  else
    snprintf(expected, sizeof expected, "%stessera %s,", prefix, mode);
  CHECK(strstr(captured, expected) != NULL, "expected a line starting '%s' in:\n%s", expected, captured);
}

/* ---- deterministic random numbers ------------------------------------------------------------ */

static double uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* ---- the cases, once per precision ----------------------------------------------------------- */

#define T double
#define X(name) d##name
#define X_SYMBOL(name) "d" name
#define NAME "D"
#define EPS DBL_EPSILON
#include "lapack_cases.inc"
#undef T
#undef X
#undef X_SYMBOL
#undef NAME
#undef EPS

#define T float
#define X(name) s##name
#define X_SYMBOL(name) "s" name
#define NAME "S"
#define EPS FLT_EPSILON
#include "lapack_cases.inc"
#undef T
#undef X
#undef X_SYMBOL
#undef NAME
#undef EPS

/* ---- several threads at once ----------------------------------------------------------------- */

enum { thread_count = 4, thread_n = 300, thread_nrhs = 2 };

struct solve_job {
  double *a, *b;
  int info;
};

static void *solve_in_thread(void *argument) {
  struct solve_job *job = argument;
  const char uplo = 'L';
  const int n = thread_n, nrhs = thread_nrhs;
  dposv_(&uplo, &n, &nrhs, job->a, &n, job->b, &n, &job->info, 1);
  return NULL;
}

static void concurrent_calls(void) {
  struct solve_job jobs[thread_count];
  double *expected_a[thread_count], *expected_b[thread_count];
  pthread_t threads[thread_count];
  const char uplo = 'L';
  const int n = thread_n, nrhs = thread_nrhs;
  for (int t = 0; t < thread_count; ++t) {
    jobs[t].a = dspd_matrix(uplo, n, n, 1000u + (unsigned)t);
    jobs[t].b = dgeneral_matrix(n, nrhs, n, 2000u + (unsigned)t);
    jobs[t].info = -99;
    expected_a[t] = dcopy(jobs[t].a, (size_t)n * n);
    expected_b[t] = dcopy(jobs[t].b, (size_t)n * nrhs);
    int info = -99;
    dreference_solve(uplo, n, nrhs, expected_a[t], n, expected_b[t], n, &info);
  }
  for (int t = 0; t < thread_count; ++t) pthread_create(&threads[t], NULL, solve_in_thread, &jobs[t]);
  for (int t = 0; t < thread_count; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < thread_count; ++t) {
    const double diff = dblock_difference(n, nrhs, jobs[t].b, expected_b[t], n);
    CHECK(jobs[t].info == 0 && diff <= dtolerance(n), "thread %d: DPOSV info %d, solution differs by %g", t,
          jobs[t].info, diff);
    free(jobs[t].a), free(jobs[t].b), free(expected_a[t]), free(expected_b[t]);
  }
}

/* ---- which libraries answer ------------------------------------------------------------------ */

static const char *library_of(void *symbol) {
  Dl_info info;
  return symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "(none)";
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s REFERENCE_LIBLAPACK\n", argv[0]);
    return 2;
  }
  const char *threshold = getenv("TESSERA_LAPACK_MIN_N");
  if (!threshold || !getenv("TESSERA_LAPACK_VERBOSE")) {
    fprintf(stderr, "set TESSERA_LAPACK_MIN_N and TESSERA_LAPACK_VERBOSE=1\n");
    return 2;
  }
  min_n = atoi(threshold);
  if (getenv("TESSERA_MODE")) mode = getenv("TESSERA_MODE");

  /* The program's dpotrf_ must be Tessera's, and reference LAPACK must be the one loaded. */
  void *reference = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  const char *global_dpotrf = library_of(dlsym(RTLD_DEFAULT, "dpotrf_"));
  printf("dpotrf_ resolves to %s; reference LAPACK %s is %s\n", global_dpotrf, argv[1],
         reference ? "loaded" : "NOT loaded");
  CHECK(strstr(global_dpotrf, "libtessera_lapack") != NULL, "dpotrf_ resolves to %s", global_dpotrf);
  CHECK(reference != NULL, "reference LAPACK %s is not the liblapack.so.3 this program runs with", argv[1]);
  if (reference) {
    drun_cases(reference);
    srun_cases(reference);
    concurrent_calls();
  }
  printf("%d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
