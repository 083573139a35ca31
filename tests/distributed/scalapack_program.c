/* A plain ScaLAPACK program: it calls pdpotrf_, pdpotrs_, pdposv_, their single-precision
   twins and the complex pzposv_ and pcposv_ through ScaLAPACK's Fortran ABI, on a BLACS grid, and links only ScaLAPACK (or, in the
   link-order build, libtessera_lapack in front of it). run_scalapack_test.sh runs it once as it is
   (ScaLAPACK computes) and once with libtessera_lapack preloaded.

     scalapack_program --grid PxQ --write DIR     run every case, check it, keep the results in DIR
     scalapack_program --grid PxQ --compare DIR   run every case, check it, compare with DIR's
     --limit K                                     the first K cases only

   Every case is checked on its own (scaled residual of the factor and of the solution; the other
   triangle untouched; B untouched when the factorization fails); --compare also requires the same
   INFO on every case and factors and solutions equal to the kept ones within a tolerance. Cases:
   odd orders and block sizes that do not divide them, both uplo, both real precisions and complex
   Hermitian systems in both; matrices that
   are not positive definite at a column in a block of every process row and column; argument
   errors; layouts Tessera does not take (a sub-matrix, B's own column blocks). */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int* rank, int* size);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);

void pdpotrf_(const char*, const int*, double*, const int*, const int*, const int*, int*, size_t);
void pspotrf_(const char*, const int*, float*, const int*, const int*, const int*, int*, size_t);
void pdpotrs_(const char*, const int*, const int*, double*, const int*, const int*, const int*, double*, const int*,
              const int*, const int*, int*, size_t);
void pspotrs_(const char*, const int*, const int*, float*, const int*, const int*, const int*, float*, const int*,
              const int*, const int*, int*, size_t);
void pdposv_(const char*, const int*, const int*, double*, const int*, const int*, const int*, double*, const int*,
             const int*, const int*, int*, size_t);
void psposv_(const char*, const int*, const int*, float*, const int*, const int*, const int*, float*, const int*,
             const int*, const int*, int*, size_t);

void pzposv_(const char*, const int*, const int*, double complex*, const int*, const int*, const int*,
             double complex*, const int*, const int*, const int*, int*, size_t);
void pcposv_(const char*, const int*, const int*, float complex*, const int*, const int*, const int*, float complex*,
             const int*, const int*, const int*, int*, size_t);

enum { POTRF, POTRS, POSV };
static const char* op_name[] = {"potrf", "potrs", "posv"};

static int nprow, npcol, myrow, mycol, context, rank;
static FILE* kept;      /* --write: results go here; --compare: read from here */
static int comparing;
static int failures;
static int cases;
static int limit; /* --limit K: the first K cases only */

static int numroc(int n, int nb, int iproc, int nprocs) {
  int nblocks = n / nb, count = (nblocks / nprocs) * nb, extra = nblocks % nprocs;
  if (iproc < extra) count += nb;
  else if (iproc == extra) count += n % nb;
  return count;
}

/* Global index (0-based) of local index l of process `iproc` (first block on process 0). */
static int global_index(int l, int nb, int iproc, int nprocs) { return ((l / nb) * nprocs + iproc) * nb + l % nb; }

static double hash(int i, int j) {
  unsigned x = (unsigned)(i * 7919 + j * 104729 + 17);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (double)(x % 2001) / 1000.0 - 1.0;
}

/* A symmetric matrix, diagonally dominant, so SPD; -1 on the diagonal at `bad` (>= 0) makes the
   leading minor of order bad + 1 the first one that is not positive definite. */
static double matrix_element(int i, int j, int n, int bad) {
  if (i == j) return i == bad ? -1.0 : n + 1.0 + hash(i, i);
  return 0.5 * hash(i < j ? i : j, i < j ? j : i);
}

static double rhs_element(int i, int j) { return hash(i + 1000, j); }

static void fail(const char* what, const char* detail) {
  fprintf(stderr, "rank %d: FAILED %s: %s\n", rank, what, detail);
  failures++;
}

/* A local array as doubles, whatever the precision of the call. */
typedef struct {
  int rows, cols, lld;
  double* x;
} Local;

static Local make_local(int m, int n, int nb) {
  Local l;
  l.rows = numroc(m, nb, myrow, nprow);
  l.cols = numroc(n, nb, mycol, npcol);
  l.lld = l.rows > 1 ? l.rows : 1;
  l.x = calloc((size_t)l.lld * (l.cols > 0 ? l.cols : 1), sizeof(double));
  return l;
}

/* Every element of a distributed matrix on every process (tiny matrices only). */
static double* gather(const Local* l, int m, int n, int nb) {
  double* g = calloc((size_t)m * n + 1, sizeof(double));
  for (int lj = 0; lj < l->cols; ++lj)
    for (int li = 0; li < l->rows; ++li)
      g[(size_t)global_index(lj, nb, mycol, npcol) * m + global_index(li, nb, myrow, nprow)] = l->x[(size_t)lj * l->lld + li];
  MPI_Allreduce(MPI_IN_PLACE, g, m * n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return g;
}

static void call(int op, int single, char uplo, int n, int nrhs, Local* a, const int* ia, const int* ja, const int* desca,
                 Local* b, const int* ib, const int* jb, const int* descb, int* info) {
  const int one = 1;
  if (!ia) ia = ja = &one;
  if (!ib) ib = jb = &one;
  size_t na = (size_t)a->lld * (a->cols > 0 ? a->cols : 1), nbb = b ? (size_t)b->lld * (b->cols > 0 ? b->cols : 1) : 1;
  if (!single) {
    if (op == POTRF) pdpotrf_(&uplo, &n, a->x, ia, ja, desca, info, 1);
    if (op == POTRS) pdpotrs_(&uplo, &n, &nrhs, a->x, ia, ja, desca, b->x, ib, jb, descb, info, 1);
    if (op == POSV) pdposv_(&uplo, &n, &nrhs, a->x, ia, ja, desca, b->x, ib, jb, descb, info, 1);
    return;
  }
  float* af = malloc(na * sizeof(float));
  float* bf = malloc(nbb * sizeof(float));
  for (size_t k = 0; k < na; ++k) af[k] = (float)a->x[k];
  for (size_t k = 0; b && k < nbb; ++k) bf[k] = (float)b->x[k];
  if (op == POTRF) pspotrf_(&uplo, &n, af, ia, ja, desca, info, 1);
  if (op == POTRS) pspotrs_(&uplo, &n, &nrhs, af, ia, ja, desca, bf, ib, jb, descb, info, 1);
  if (op == POSV) psposv_(&uplo, &n, &nrhs, af, ia, ja, desca, bf, ib, jb, descb, info, 1);
  for (size_t k = 0; k < na; ++k) a->x[k] = af[k];
  for (size_t k = 0; b && k < nbb; ++k) b->x[k] = bf[k];
  free(af);
  free(bf);
}

/* --write keeps INFO and the local arrays; --compare reads them back and compares. */
static void keep_or_compare(const char* name, int info, const Local* a, const Local* b, double tolerance) {
  size_t na = (size_t)a->lld * (a->cols > 0 ? a->cols : 1), nbb = b ? (size_t)b->lld * (b->cols > 0 ? b->cols : 1) : 0;
  if (!comparing) {
    fwrite(&info, sizeof info, 1, kept);
    fwrite(a->x, sizeof(double), na, kept);
    if (nbb) fwrite(b->x, sizeof(double), nbb, kept);
    return;
  }
  int kept_info = 0;
  double* x = malloc((na + nbb + 1) * sizeof(double));
  if (fread(&kept_info, sizeof kept_info, 1, kept) != 1 || fread(x, sizeof(double), na + nbb, kept) != na + nbb) {
    fail(name, "the kept results end early");
    free(x);
    return;
  }
  char detail[200];
  if (kept_info != info) {
    snprintf(detail, sizeof detail, "INFO %d, ScaLAPACK's %d", info, kept_info);
    fail(name, detail);
  }
  double diff = 0, scale = 0;
  for (size_t k = 0; k < na + nbb; ++k) {
    double v = k < na ? a->x[k] : b->x[k - na];
    /* At a failed factorization only INFO is compared: what either leaves in A past the leading
       factor is documented as unspecified (docs/distributed.md). */
    if (info > 0 && k < na) continue;
    diff = fmax(diff, fabs(v - x[k]));
    scale = fmax(scale, fabs(x[k]));
  }
  if (diff > tolerance * fmax(scale, 1.0)) {
    snprintf(detail, sizeof detail, "largest difference from ScaLAPACK's result %.3g (scale %.3g)", diff, scale);
    fail(name, detail);
  }
  free(x);
}

static void descriptor(int* desc, int m, int n, int mb, int nb, int lld) {
  int d[9] = {1, context, m, n, mb, nb, 0, 0, lld};
  memcpy(desc, d, sizeof d);
}

static void fill(Local* l, int m, int n, int nb, int symmetric, char uplo, int bad) {
  for (int lj = 0; lj < l->cols; ++lj)
    for (int li = 0; li < l->rows; ++li) {
      int i = global_index(li, nb, myrow, nprow), j = global_index(lj, nb, mycol, npcol);
      double v;
      if (!symmetric) v = rhs_element(i, j);
      else if ((uplo == 'L' && i >= j) || (uplo == 'U' && i <= j)) v = matrix_element(i, j, n, bad);
      else v = 7777.0 + i + 0.001 * j; /* the other triangle: never written */
      l->x[(size_t)lj * l->lld + li] = v;
    }
  (void)m;
}

/* One factorization or solve of an n x n matrix in nb blocks, checked. */
static void run_case(int op, int single, char uplo, int n, int nb, int bad) {
  if (limit && cases >= limit) return;
  const int nrhs = 3;
  char name[160];
  snprintf(name, sizeof name, "%s%s uplo=%c n=%d nb=%d%s%d", single ? "s" : "d", op_name[op], uplo, n, nb,
           bad >= 0 ? " not SPD at column " : "", bad >= 0 ? bad + 1 : 0);
  const double eps = single ? 5.96e-8 : 1.11e-16;
  Local a = make_local(n, n, nb), b = make_local(n, nrhs, nb);
  int desca[9], descb[9], info = 0;
  descriptor(desca, n, n, nb, nb, a.lld);
  descriptor(descb, n, nrhs, nb, nb, b.lld);
  fill(&a, n, n, nb, 1, uplo, bad);
  fill(&b, n, nrhs, nb, 0, uplo, bad);
  if (single) { /* the values the call sees */
    for (size_t k = 0; k < (size_t)a.lld * (a.cols > 0 ? a.cols : 1); ++k) a.x[k] = (float)a.x[k];
    for (size_t k = 0; k < (size_t)b.lld * (b.cols > 0 ? b.cols : 1); ++k) b.x[k] = (float)b.x[k];
  }
  Local a0 = make_local(n, n, nb), b0 = make_local(n, nrhs, nb);
  memcpy(a0.x, a.x, (size_t)a.lld * (a.cols > 0 ? a.cols : 1) * sizeof(double));
  memcpy(b0.x, b.x, (size_t)b.lld * (b.cols > 0 ? b.cols : 1) * sizeof(double));
  if (op == POTRS) { /* potrs takes a factor: the one ScaLAPACK or Tessera makes here */
    int finfo = 0;
    call(POTRF, single, uplo, n, 0, &a, NULL, NULL, desca, NULL, NULL, NULL, NULL, &finfo);
    if (finfo != 0) fail(name, "the factorization before the solve failed");
  }
  call(op, single, uplo, n, nrhs, &a, NULL, NULL, desca, op == POTRF ? NULL : &b, NULL, NULL, descb, &info);
  cases++;
  char detail[200];
  const int expected = bad >= 0 ? bad + 1 : 0;
  if (info != expected) {
    snprintf(detail, sizeof detail, "INFO %d, expected %d", info, expected);
    fail(name, detail);
  }
  double* g = gather(&a, n, n, nb);
  double* g0 = gather(&a0, n, n, nb);
  /* The other triangle, untouched. */
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (((uplo == 'L' && i < j) || (uplo == 'U' && i > j)) && g[(size_t)j * n + i] != g0[(size_t)j * n + i]) {
        snprintf(detail, sizeof detail, "the other triangle changed at (%d, %d)", i + 1, j + 1);
        fail(name, detail);
        i = j = n;
      }
  if (info == 0) {
    /* || A - L L^T ||_max / (n ||A||_max eps), with L the lower factor (U^T for upper). */
    double res = 0, norm = 0;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        double s = 0;
        for (int k = 0; k <= j; ++k) {
          double lik = uplo == 'L' ? g[(size_t)k * n + i] : g[(size_t)i * n + k];
          double ljk = uplo == 'L' ? g[(size_t)k * n + j] : g[(size_t)j * n + k];
          s += lik * ljk;
        }
        double aij = matrix_element(i, j, n, -1);
        res = fmax(res, fabs(aij - s));
        norm = fmax(norm, fabs(aij));
      }
    double scaled = res / (n * norm * eps);
    if (scaled > 10.0) {
      snprintf(detail, sizeof detail, "factor residual %.3g (scaled), above 10", scaled);
      fail(name, detail);
    }
    if (op != POTRF) {
      double* x = gather(&b, n, nrhs, nb);
      double worst = 0;
      for (int r = 0; r < nrhs; ++r) {
        double rn = 0, xn = 0, an = 0;
        for (int i = 0; i < n; ++i) {
          double s = 0;
          for (int k = 0; k < n; ++k) s += matrix_element(i, k, n, -1) * x[(size_t)r * n + k];
          rn = fmax(rn, fabs(s - rhs_element(i, r)));
          xn = fmax(xn, fabs(x[(size_t)r * n + i]));
        }
        for (int i = 0; i < n; ++i) {
          double row = 0;
          for (int k = 0; k < n; ++k) row += fabs(matrix_element(i, k, n, -1));
          an = fmax(an, row);
        }
        worst = fmax(worst, rn / (an * xn * n * eps));
      }
      if (worst > 10.0) {
        snprintf(detail, sizeof detail, "solution residual %.3g (scaled), above 10", worst);
        fail(name, detail);
      }
      free(x);
    }
  } else if (op == POSV) {
    for (size_t k = 0; k < (size_t)b.lld * (b.cols > 0 ? b.cols : 1); ++k)
      if (b.x[k] != b0.x[k]) {
        fail(name, "B changed although the factorization failed");
        break;
      }
  }
  keep_or_compare(name, info, &a, op == POTRF ? NULL : &b, single ? 1e-4 : 1e-10);
  free(g);
  free(g0);
  free(a.x);
  free(b.x);
  free(a0.x);
  free(b0.x);
}

/* A Hermitian matrix: matrix_element's real parts, imaginary parts off the diagonal. */
static double complex hermitian_element(int i, int j, int n) {
  const double re = matrix_element(i, j, n, -1);
  if (i == j) return re;
  const double im = 0.3 * hash((i > j ? i : j) + 500, i < j ? i : j);
  return i > j ? re + im * I : re - im * I;
}

/* One complex Hermitian system (pzposv_, or pcposv_ when single): INFO, the solution's scaled
   residual, the other triangle untouched; the results kept or compared as the real cases'. */
static void run_complex_case(int single, char uplo, int n, int nb) {
  if (limit && cases >= limit) return;
  const int nrhs = 2, one = 1;
  char name[100];
  snprintf(name, sizeof name, "%sposv uplo=%c n=%d nb=%d", single ? "c" : "z", uplo, n, nb);
  const int rows = numroc(n, nb, myrow, nprow), cols = numroc(n, nb, mycol, npcol), bcols = numroc(nrhs, nb, mycol, npcol);
  const int lld = rows > 1 ? rows : 1;
  const size_t na = (size_t)lld * (cols > 0 ? cols : 1), nbb = (size_t)lld * (bcols > 0 ? bcols : 1);
  double complex* a = calloc(na, sizeof(double complex));
  double complex* b = calloc(nbb, sizeof(double complex));
  for (int lj = 0; lj < cols; ++lj)
    for (int li = 0; li < rows; ++li) {
      const int i = global_index(li, nb, myrow, nprow), j = global_index(lj, nb, mycol, npcol);
      const int held = uplo == 'L' ? i >= j : i <= j;
      a[(size_t)lj * lld + li] = held ? hermitian_element(i, j, n) : 7777.0 + i + 0.001 * j;
    }
  for (int lj = 0; lj < bcols; ++lj)
    for (int li = 0; li < rows; ++li) {
      const int i = global_index(li, nb, myrow, nprow), r = global_index(lj, nb, mycol, npcol);
      b[(size_t)lj * lld + li] = rhs_element(i, r) + 0.5 * rhs_element(r, i) * I;
    }
  int desca[9], descb[9], info = 0;
  descriptor(desca, n, n, nb, nb, lld);
  descriptor(descb, n, nrhs, nb, nb, lld);
  if (single) {
    float complex* af = malloc(na * sizeof(float complex));
    float complex* bf = malloc(nbb * sizeof(float complex));
    for (size_t k = 0; k < na; ++k) af[k] = (float complex)a[k];
    for (size_t k = 0; k < nbb; ++k) bf[k] = (float complex)b[k];
    pcposv_(&uplo, &n, &nrhs, af, &one, &one, desca, bf, &one, &one, descb, &info, 1);
    for (size_t k = 0; k < na; ++k) a[k] = af[k];
    for (size_t k = 0; k < nbb; ++k) b[k] = bf[k];
    free(af);
    free(bf);
  } else {
    pzposv_(&uplo, &n, &nrhs, a, &one, &one, desca, b, &one, &one, descb, &info, 1);
  }
  cases++;
  if (info != 0) fail(name, "INFO is not 0");
  for (int lj = 0; lj < cols; ++lj)
    for (int li = 0; li < rows; ++li) {
      const int i = global_index(li, nb, myrow, nprow), j = global_index(lj, nb, mycol, npcol);
      const double untouched = single ? (float)(7777.0 + i + 0.001 * j) : 7777.0 + i + 0.001 * j;
      if ((uplo == 'L' ? i < j : i > j) && a[(size_t)lj * lld + li] != untouched) {
        fail(name, "the other triangle changed");
        lj = cols;
        break;
      }
    }
  /* The solution gathered as real and imaginary parts; ||A x - b||_max / (||A||_inf ||x||_max n eps). */
  double* x = calloc((size_t)2 * n * nrhs + 1, sizeof(double));
  for (int lj = 0; lj < bcols; ++lj)
    for (int li = 0; li < rows; ++li) {
      const size_t e = (size_t)global_index(lj, nb, mycol, npcol) * n + global_index(li, nb, myrow, nprow);
      x[2 * e] = creal(b[(size_t)lj * lld + li]);
      x[2 * e + 1] = cimag(b[(size_t)lj * lld + li]);
    }
  MPI_Allreduce(MPI_IN_PLACE, x, 2 * n * nrhs, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double rn = 0, xn = 0, an = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int k = 0; k < n; ++k) row += cabs(hermitian_element(i, k, n));
    an = fmax(an, row);
    for (int r = 0; r < nrhs; ++r) {
      double complex s = 0;
      for (int k = 0; k < n; ++k) s += hermitian_element(i, k, n) * (x[2 * ((size_t)r * n + k)] + x[2 * ((size_t)r * n + k) + 1] * I);
      rn = fmax(rn, cabs(s - (rhs_element(i, r) + 0.5 * rhs_element(r, i) * I)));
      xn = fmax(xn, cabs(x[2 * ((size_t)r * n + i)] + x[2 * ((size_t)r * n + i) + 1] * I));
    }
  }
  const double eps = single ? 5.96e-8 : 1.11e-16, scaled = rn / (an * xn * n * eps);
  if (scaled > 10.0) {
    char detail[100];
    snprintf(detail, sizeof detail, "solution residual %.3g (scaled), above 10", scaled);
    fail(name, detail);
  }
  /* The complex arrays as twice as many doubles per column. */
  Local la = {rows, cols, 2 * lld, (double*)a}, lb = {rows, bcols, 2 * lld, (double*)b};
  keep_or_compare(name, info, &la, &lb, single ? 1e-4 : 1e-10);
  free(x);
  free(a);
  free(b);
}

/* Calls ScaLAPACK refuses: the same INFO (and PXERBLA's message) whoever answers. */
static void run_argument_errors(void) {
  if (limit && cases >= limit) return;
  const int n = 10, nb = 3, nrhs = 2, two = 2, one = 1;
  Local a = make_local(n, n, nb), b = make_local(n, nrhs, nb);
  int desca[9], descb[9], info;
  char uplo;
  struct {
    const char* name;
    int op, expected;
  } errors[] = {{"potrf uplo=X", POTRF, -1},        {"potrf n=-1", POTRF, -2},        {"potrf NB != MB", POTRF, -606},
                {"potrf IA=2", POTRF, -4},           {"posv uplo=X", POSV, -1},         {"posv B's MB != A's NB", POSV, -1006},
                {"potrs B's DTYPE", POTRS, -1101},   {"potrf bad context", POTRF, -602}};
  for (size_t e = 0; e < sizeof errors / sizeof errors[0]; ++e) {
    fill(&a, n, n, nb, 1, 'L', -1);
    fill(&b, n, nrhs, nb, 0, 'L', -1);
    descriptor(desca, n, n, nb, nb, a.lld);
    descriptor(descb, n, nrhs, nb, nb, b.lld);
    uplo = e == 0 || e == 4 ? 'X' : 'L';
    int order = e == 1 ? -1 : e == 3 ? n - 1 : n;
    const int* ia = NULL;
    if (e == 2) desca[5] = nb + 1;
    if (e == 3) ia = &two;
    if (e == 5) descb[4] = nb + 1;
    if (e == 6) descb[0] = 7;
    if (e == 7) desca[1] = -1;
    info = 0;
    call(errors[e].op, 0, uplo, order, nrhs, &a, ia, ia ? &one : NULL, desca, &b, NULL, NULL, descb, &info);
    cases++;
    if (info != errors[e].expected) {
      char detail[100];
      snprintf(detail, sizeof detail, "INFO %d, ScaLAPACK gives %d", info, errors[e].expected);
      fail(errors[e].name, detail);
    }
    keep_or_compare(errors[e].name, info, &a, &b, 0.0);
  }
  free(a.x);
  free(b.x);
}

/* Valid for ScaLAPACK, not Tessera's layout: the leading (n - nb) sub-matrix at IA = JA = nb + 1,
   and B in column blocks of its own. */
static void run_other_layouts(void) {
  if (limit && cases >= limit) return;
  const int n = 23, nb = 4, nrhs = 5, start = nb + 1, sub = n - nb;
  Local a = make_local(n, n, nb), b = make_local(n, nrhs, nb);
  int desca[9], descb[9], info = 0;
  fill(&a, n, n, nb, 1, 'L', -1);
  descriptor(desca, n, n, nb, nb, a.lld);
  call(POTRF, 0, 'L', sub, 0, &a, &start, &start, desca, NULL, NULL, NULL, NULL, &info);
  cases++;
  if (info != 0) fail("potrf on a sub-matrix", "INFO is not 0");
  keep_or_compare("potrf on a sub-matrix", info, &a, NULL, 1e-12);
  free(b.x);
  /* B's columns in blocks of 2, A's in 4: the local arrays of B follow its own blocks. */
  fill(&a, n, n, nb, 1, 'U', -1);
  const int bnb = 2;
  Local bb;
  bb.rows = numroc(n, nb, myrow, nprow);
  bb.cols = numroc(nrhs, bnb, mycol, npcol);
  bb.lld = bb.rows > 1 ? bb.rows : 1;
  bb.x = calloc((size_t)bb.lld * (bb.cols > 0 ? bb.cols : 1), sizeof(double));
  for (int lj = 0; lj < bb.cols; ++lj)
    for (int li = 0; li < bb.rows; ++li)
      bb.x[(size_t)lj * bb.lld + li] = rhs_element(global_index(li, nb, myrow, nprow), global_index(lj, bnb, mycol, npcol));
  int dbb[9] = {1, context, n, nrhs, nb, bnb, 0, 0, bb.lld};
  call(POSV, 0, 'U', n, nrhs, &a, NULL, NULL, desca, &bb, NULL, NULL, dbb, &info);
  cases++;
  if (info != 0) fail("posv with B in blocks of its own", "INFO is not 0");
  keep_or_compare("posv with B in blocks of its own", info, &a, &bb, 1e-12);
  (void)descb;
  free(a.x);
  free(bb.x);
}

int main(int argc, char** argv) {
  int size = 0, P = 0, Q = 0;
  const char *dir = NULL, *order = "Row";
  for (int k = 1; k + 1 < argc; k += 2) {
    if (!strcmp(argv[k], "--grid")) sscanf(argv[k + 1], "%dx%d", &P, &Q);
    if (!strcmp(argv[k], "--write") || !strcmp(argv[k], "--compare")) {
      dir = argv[k + 1];
      comparing = !strcmp(argv[k], "--compare");
    }
    if (!strcmp(argv[k], "--order")) order = argv[k + 1];
    if (!strcmp(argv[k], "--limit")) limit = atoi(argv[k + 1]);
  }
  Cblacs_pinfo(&rank, &size); /* initializes MPI as BLACS does: MPI_Init */
  if (P * Q != size || !dir) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np P*Q %s --grid PxQ --write|--compare DIR [--order Row|Col]\n", argv[0]);
    Cblacs_exit(0);
    return 2;
  }
  Cblacs_get(0, 0, &context);
  Cblacs_gridinit(&context, order, P, Q);
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  char path[4096];
  snprintf(path, sizeof path, "%s/rank%d.bin", dir, rank);
  kept = fopen(path, comparing ? "rb" : "wb");
  if (!kept) {
    perror(path);
    return 2;
  }
  const int orders[] = {1, 7, 37, 100}, blocks[] = {3, 8, 16};
  for (int single = 0; single <= 1; ++single)
    for (int u = 0; u < 2; ++u)
      for (int o = 0; o < 4; ++o)
        for (int k = 0; k < 3; ++k)
          for (int op = POTRF; op <= POSV; ++op)
            /* Many small tiles on 4 ranks of 2 cores take seconds a call: n = 100 with nb = 16 only. */
            if (!(orders[o] == 100 && blocks[k] != 16)) run_case(op, single, u ? 'U' : 'L', orders[o], blocks[k], -1);
  /* Not positive definite at a column in block k, for k = 0 .. P*Q-1: the diagonal blocks of
     every process row and every process column. */
  for (int single = 0; single <= 1; ++single)
    for (int u = 0; u < 2; ++u)
      for (int k = 0; k < P * Q; ++k) {
        const int n = 20, nb = 3;
        int column = k * nb + (k % nb);
        run_case(POTRF, single, u ? 'U' : 'L', n, nb, column);
        run_case(POSV, single, u ? 'U' : 'L', n, nb, column);
      }
  for (int single = 0; single <= 1; ++single)
    for (int u = 0; u < 2; ++u) {
      run_complex_case(single, u ? 'U' : 'L', 1, 3);
      run_complex_case(single, u ? 'U' : 'L', 37, 8);
      run_complex_case(single, u ? 'U' : 'L', 41, 6);
    }
  run_argument_errors();
  run_other_layouts();
  fclose(kept);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%d cases on a %dx%d grid (%s order), %d failures\n", cases, P, Q, order, total);
  Cblacs_gridexit(context);
  Cblacs_exit(0); /* MPI_Finalize */
  return total ? 1 : 0;
}
