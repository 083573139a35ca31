// How the GPU diagonal-tile factorizations report a failing column, before Tessera's check of the
// factored diagonal: for a matrix whose leading minor of order c is the first that is not
// positive definite (diagonal entry c set to -1), cuSOLVER's potrf and Tessera's potf2 (its
// built-in configuration and the crossovers the tuning table uses) are run for every c = 1..n,
// and their raw info is compared with LAPACKE's. Prints one row per kernel: how many columns
// agree, how many are reported one too late, and the first such columns.
//   survey_potrf_info [--n 200]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>
#include <lapacke.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/tile_kernels.hpp"

namespace {

namespace tk = tessera::kernels::cuda;

std::vector<double> random_spd(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> G(static_cast<std::size_t>(n) * n), A(G.size());
  for (double& g : G) g = dist(gen);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += G[i + static_cast<std::size_t>(k) * n] * G[j + static_cast<std::size_t>(k) * n];
      A[i + static_cast<std::size_t>(j) * n] = s / n + (i == j ? 1.0 : 0.0);
    }
  return A;
}

using Factor = std::function<void(int n, double* dA, int* dinfo)>;

void survey(const std::string& name, int n, const std::vector<double>& spd, const Factor& factor) {
  double* dA = nullptr;
  int* dinfo = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, sizeof(double) * spd.size()));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  int agree = 0, late = 0, other = 0;
  std::string late_columns;
  for (int c = 1; c <= n; ++c) {
    std::vector<double> A = spd;
    A[(c - 1) + static_cast<std::size_t>(c - 1) * n] = -1.0;
    std::vector<double> ref = A;
    const int expected = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, ref.data(), n);
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(double) * A.size(), cudaMemcpyHostToDevice));
    factor(n, dA, dinfo);
    int info = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
    if (info == expected)
      ++agree;
    else if (info == expected + 1) {
      if (++late <= 6) late_columns += " " + std::to_string(expected);
    } else
      ++other;
  }
  fmt::print("{:<34} {:>5} {:>6} {:>10} {:>6}  {}\n", name, n, agree, late, other, late_columns);
  cudaFree(dA);
  cudaFree(dinfo);
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoi(argv[i + 1]);
  const std::vector<double> spd = random_spd(n, 2026);
  cusolverDnHandle_t handle = nullptr;
  if (cusolverDnCreate(&handle) != CUSOLVER_STATUS_SUCCESS) {
    fmt::print(stderr, "cannot create a cuSOLVER handle\n");
    return 1;
  }
  fmt::print("{:<34} {:>5} {:>6} {:>10} {:>6}  {}\n", "kernel (double)", "n", "agree", "one late", "other",
             "first columns reported one late");
  int lwork = 0;
  double* work = nullptr;
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, nullptr, n, &lwork));
  TESSERA_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * (lwork + 1)));
  survey("cuSOLVER cusolverDnDpotrf", n, spd, [&](int order, double* dA, int* dinfo) {
    TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, order, dA, order, work, lwork, dinfo));
  });
  for (const int crossover : {0, 48, 64, 128}) {
    tk::TileKernelConfig cfg;
    cfg.crossover = crossover;
    survey("Tessera potf2, crossover " + (crossover ? std::to_string(crossover) : std::string("default")), n, spd,
           [&](int order, double* dA, int* dinfo) { tk::potf2<double>(order, dA, order, dinfo, nullptr, cfg); });
  }
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  cudaFree(work);
  cusolverDnDestroy(handle);
  return 0;
}
