// A distributed factorization and solve: run with mpirun -np R (R = P x Q; one process makes a
// 1 x 1 grid). Each rank fills the part of the matrix it holds, all factor and solve together.
#include <mpi.h>

#include <cmath>
#include <cstdio>

#include "tessera/distributed.hpp"
#include "tessera/error.hpp"

namespace dist = tessera::distributed;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // StarPU-MPI needs MULTIPLE
  int ranks = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  try {
    // The squarest P x Q grid of the ranks.
    int p = static_cast<int>(std::sqrt(double(ranks)));
    while (ranks % p != 0) --p;
    tessera::Runtime runtime;
    dist::Context context(runtime, MPI_COMM_WORLD, {p, ranks / p});
    const int n = 600, nb = 128, nrhs = 2;
    const auto entry = [n](int i, int j) { return i == j ? double(n) : 1.0 / (1 + i + j); };
    dist::Matrix<double> A(context, n, nb, tessera::Uplo::lower);
    dist::Matrix<double> L(context, n, nb, tessera::Uplo::lower);
    dist::Matrix<double> B(context, n, nrhs, nb);
    A.fill(entry);
    L.fill(entry);
    B.fill([](int, int) { return 1.0; });
    const int info = dist::posv(L, B);  // L: the factor, B: the solution
    const double error = dist::backward_error(A, L);
    if (rank == 0)
      std::printf("posv of order %d on a %d x %d grid: info %d, backward error %.3g\n", n, p, ranks / p, info, error);
    status = info == 0 && error < 1 ? 0 : 1;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
