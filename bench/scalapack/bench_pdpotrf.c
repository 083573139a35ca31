/* Times pdpotrf_ on a P x Q BLACS grid: a plain ScaLAPACK program, run once as it is (ScaLAPACK
   computes) and once with libtessera_lapack preloaded (Tessera computes), on the same ranks, block
   size and matrix (bench/scalapack/compare.sh does both).

     bench_pdpotrf --grid PxQ --n N --nb NB [--repetitions R]

   The matrix is symmetric and diagonally dominant, each element a hash of (i, j); each repetition
   refills the local part, then times pdpotrf_ between two barriers. Rank 0 prints one JSON line
   per repetition (seconds, GFLOP/s with n^3/3 flops, INFO) and the median. */
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
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
void pdpotrf_(const char*, const int*, double*, const int*, const int*, const int*, int*, size_t);

static double element(long i, long j, int n) {
  if (i == j) return n;
  unsigned long long z = (unsigned long long)(i < j ? i : j) * 0x9e3779b97f4a7c15ull + (unsigned long long)(i < j ? j : i);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int nprow = 2, npcol = 2, n = 4000, nb = 256, repetitions = 3;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--grid")) sscanf(argv[a + 1], "%dx%d", &nprow, &npcol);
    else if (!strcmp(argv[a], "--n")) n = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--nb")) nb = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--repetitions")) repetitions = atoi(argv[a + 1]);
    else {
      fprintf(stderr, "usage: %s --grid PxQ --n N --nb NB [--repetitions R]\n", argv[0]);
      return 2;
    }
  }
  int rank, size, context, myrow, mycol, zero = 0, one = 1, info;
  Cblacs_pinfo(&rank, &size);
  if (size != nprow * npcol) {
    if (rank == 0) fprintf(stderr, "bench_pdpotrf: %d ranks for a %dx%d grid\n", size, nprow, npcol);
    Cblacs_exit(0);
    return 2;
  }
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "Row", nprow, npcol);
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  const int local_rows = numroc_(&n, &nb, &myrow, &zero, &nprow), local_cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int lld = local_rows > 1 ? local_rows : 1;
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
  double* a = malloc(sizeof(double) * (size_t)lld * (local_cols > 0 ? local_cols : 1));
  double* seconds = malloc(sizeof(double) * (size_t)repetitions);
  for (int r = 0; r < repetitions; ++r) {
    for (int lj = 0; lj < local_cols; ++lj)
      for (int li = 0; li < local_rows; ++li) {
        const long i = ((long)(li / nb) * nprow + myrow) * nb + li % nb, j = ((long)(lj / nb) * npcol + mycol) * nb + lj % nb;
        a[li + (size_t)lj * lld] = element(i, j, n);
      }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    pdpotrf_("L", &n, a, &one, &one, desc, &info, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    seconds[r] = MPI_Wtime() - start;
    if (rank == 0)
      printf("{\"grid\": \"%dx%d\", \"n\": %d, \"nb\": %d, \"repetition\": %d, \"seconds\": %.4f, \"gflops\": %.2f, \"info\": %d}\n",
             nprow, npcol, n, nb, r, seconds[r], (double)n * n * n / 3.0 / seconds[r] * 1e-9, info);
  }
  qsort(seconds, (size_t)repetitions, sizeof(double), compare_doubles);
  if (rank == 0)
    printf("median %dx%d n=%d nb=%d: %.4f s, %.2f GFLOP/s\n", nprow, npcol, n, nb, seconds[repetitions / 2],
           (double)n * n * n / 3.0 / seconds[repetitions / 2] * 1e-9);
  free(a);
  free(seconds);
  Cblacs_gridexit(context);
  Cblacs_exit(0);
  return 0;
}
