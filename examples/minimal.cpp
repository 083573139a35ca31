// The smallest Tessera program: factor a matrix and solve a system with the C++ API.
#include <cstdio>
#include <vector>

#include "tessera/tessera.hpp"

int main() {
  const int n = 500, nrhs = 2;
  // A symmetric, diagonally dominant (so positive definite) matrix, column-major.
  std::vector<double> A(n * n), B(n * nrhs, 1.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A[i + j * n] = i == j ? n : 1.0 / (1 + i + j);

  tessera::Runtime runtime;  // starts StarPU (workers from the environment or StarPU's defaults)
  tessera::FactorOptions options;
  options.uplo = tessera::Uplo::lower;
  options.mode = tessera::Mode::hybrid;  // CPUs and GPUs if any

  const int info = tessera::posv(runtime, n, nrhs, A.data(), n, B.data(), n, options);
  if (info != 0) {
    std::printf("posv failed: info = %d\n", info);
    return 1;
  }
  std::printf("solved %d x %d system with %d CPU and %d CUDA workers; x[0] = %.6f\n", n, n, runtime.cpu_workers(),
              runtime.cuda_workers(), B[0]);
  return 0;
}
