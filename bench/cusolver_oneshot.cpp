// The one-shot peer: what a fresh process pays to factor an n x n matrix held in ordinary
// (pageable) host memory with cuSOLVER. Timed: the CUDA context, the cuSOLVER handle, device
// allocations, the copy in, dpotrf (or spotrf), the copy back and the frees; the matrix is made
// (not timed) after the context, as `tessera potrf` makes it after its runtime's start (the CUDA
// driver's initialization is slower in a process that has touched gigabytes), or before it with
// --matrix-first. Prints one JSON object. bench/oneshot.sh runs it beside `tessera potrf`.
//   cusolver_oneshot N [d|s] [--matrix-first]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
std::vector<T> spd(int n) {
  std::vector<T> A(static_cast<std::size_t>(n) * n);
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int j = 0; j < n; ++j) {
    A[j + static_cast<std::size_t>(j) * n] = static_cast<T>(n);
    for (int i = j + 1; i < n; ++i) A[i + static_cast<std::size_t>(j) * n] = static_cast<T>(dist(gen));
  }
  return A;
}

cusolverStatus_t workspace(cusolverDnHandle_t h, int n, double* a, int* lwork) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
cusolverStatus_t workspace(cusolverDnHandle_t h, int n, float* a, int* lwork) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
cusolverStatus_t factor(cusolverDnHandle_t h, int n, double* a, double* w, int lwork, int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, info);
}
cusolverStatus_t factor(cusolverDnHandle_t h, int n, float* a, float* w, int lwork, int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, info);
}

template <class T>
int run(int n, char precision, bool matrix_first) {
  std::vector<T> A;
  if (matrix_first) A = spd<T>(n);
  const auto context_start = Clock::now();
  TESSERA_CUDA_CHECK(cudaFree(nullptr));  // the CUDA context
  const double context = std::chrono::duration<double>(Clock::now() - context_start).count();
  if (!matrix_first) A = spd<T>(n);
  const auto start = Clock::now();  // the rest, after the context (and the matrix)
  cusolverDnHandle_t handle;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  const std::size_t bytes = sizeof(T) * A.size();
  T* dA = nullptr;
  int* dinfo = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(workspace(handle, n, dA, &lwork));
  T* work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&work, sizeof(T) * static_cast<std::size_t>(lwork > 0 ? lwork : 1)));
  TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
  const auto factor_start = Clock::now();
  TESSERA_CUSOLVER_CHECK(factor(handle, n, dA, work, lwork, dinfo));
  int info = 0;
  TESSERA_CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  const double potrf = std::chrono::duration<double>(Clock::now() - factor_start).count();
  TESSERA_CUDA_CHECK(cudaMemcpy(A.data(), dA, bytes, cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaFree(work));
  TESSERA_CUDA_CHECK(cudaFree(dinfo));
  TESSERA_CUDA_CHECK(cudaFree(dA));
  TESSERA_CUSOLVER_CHECK(cusolverDnDestroy(handle));
  const double total = context + std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print("{{\"n\": {}, \"precision\": \"{}\", \"info\": {}, \"seconds\": {:.6f}, \"context_seconds\": {:.6f}, "
             "\"potrf_seconds\": {:.6f}, \"matrix_first\": {}}}\n",
             n, precision, info, total, context, potrf, matrix_first);
  return info == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto flag = std::find(args.begin(), args.end(), "--matrix-first");
  const bool matrix_first = flag != args.end();
  if (matrix_first) args.erase(flag);
  if (args.empty() || args.size() > 2) {
    fmt::print(stderr, "usage: cusolver_oneshot N [d|s] [--matrix-first]\n");
    return 2;
  }
  try {
    const int n = std::stoi(args[0]);
    const char precision = args.size() > 1 ? args[1][0] : 'd';
    return precision == 's' ? run<float>(n, 's', matrix_first) : run<double>(n, 'd', matrix_first);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cusolver_oneshot: {}\n", e.what());
    return 1;
  }
}
