// The recursive tensor-core Cholesky factorization (kernels::cuda::potrf_lower_on_tensor_cores)
// against cuSOLVER's FP32 spotrf on the same matrix, by the products' operands and the
// recursion's leaves: milliseconds (median of --reps after two untimed calls, each on a fresh copy
// of the matrix, the L2 cache flushed), TFLOP/s counted as n^3 / 3, and the factor's relative
// residual ||A x - L (L^T x)||_2 / (||A||_F ||x||_2) for one random x. The matrix is the refined
// solve's scaled one: S (G G^T / n + I) S with unit diagonal, G uniform in [-1, 1].
// A leaf spec POTRF/TRSM/SYRK, with /i appended: the triangular solve's leaves by the inverses of
// the factorization's (RecursionLeaves::trsm_by_inverse).
//   bench_tensor_core_potrf [--sizes 8192,16384,30000] [--leaves 512/512/1024,256/256/512,512/512/1024/i]
//                           [--operands tf32,bf16,fp16] [--reps 5]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cuda/check.hpp"
#include "cuda/tensor_core_potrf.hpp"
#include "device_support.hpp"

namespace tk = tessera::kernels::cuda;
using tessera::bench::Device;

namespace {

// "1024/512/2048/i" -> {"1024", "512", "2048", "i"}.
std::vector<std::string> split_slashes(std::string spec) {
  std::replace(spec.begin(), spec.end(), '/', ',');
  return tessera::bench::split_commas(spec);
}

// A's lower triangle := A(i, j) / sqrt(A(i, i) A(j, j)), from the diagonal saved in d.
__global__ void unit_diagonal_kernel(int n, float* A, const float* d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && i >= j) A[i + std::size_t(j) * n] /= sqrtf(d[i] * d[j]);
}

void make_matrix(cublasHandle_t blas, int n, float* A) {
  const std::size_t nn = std::size_t(n) * n;
  Device<float> G(nn), d(n);
  tessera::bench::fill_uniform(G.get(), nn, 2026);
  const float alpha = 3.0f / n, beta = 0;  // uniform [-1, 1] has variance 1/3
  TESSERA_CUBLAS_CHECK(cublasSsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &alpha, G.get(), n, &beta, A, n));
  const float one = 1;
  Device<float> ones(n);
  std::vector<float> host_ones(n, 1.0f);
  TESSERA_CUDA_CHECK(cudaMemcpy(ones.get(), host_ones.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  TESSERA_CUBLAS_CHECK(cublasSaxpy(blas, n, &one, ones.get(), 1, A, n + 1));
  TESSERA_CUBLAS_CHECK(cublasScopy(blas, n, A, n + 1, d.get(), 1));
  unit_diagonal_kernel<<<dim3((n + 255) / 256, n), 256>>>(n, A, d.get());
  TESSERA_CUDA_CHECK_LAUNCH();
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

// ||A||_F from A's lower triangle (n x n).
double frobenius_norm(int n, const float* A) {
  std::vector<float> host(std::size_t(n) * n);
  TESSERA_CUDA_CHECK(cudaMemcpy(host.data(), A, sizeof(float) * host.size(), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double a = host[i + std::size_t(j) * n];
      sum += (i == j ? 1.0 : 2.0) * a * a;
    }
  return std::sqrt(sum);
}

// ||A x - L (L^T x)||_2 / (||A||_F ||x||_2), A's and L's lower triangles.
double relative_residual(cublasHandle_t blas, int n, const float* A, double a_norm, const float* L) {
  Device<float> x(n), y(n), z(n);
  tessera::bench::fill_uniform(x.get(), n, 7);
  const float one = 1, zero = 0, minus_one = -1;
  TESSERA_CUBLAS_CHECK(cublasSsymv(blas, CUBLAS_FILL_MODE_LOWER, n, &one, A, n, x.get(), 1, &zero, y.get(), 1));
  TESSERA_CUBLAS_CHECK(cublasScopy(blas, n, x.get(), 1, z.get(), 1));
  TESSERA_CUBLAS_CHECK(
      cublasStrmv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, n, L, n, z.get(), 1));
  TESSERA_CUBLAS_CHECK(
      cublasStrmv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, L, n, z.get(), 1));
  TESSERA_CUBLAS_CHECK(cublasSaxpy(blas, n, &minus_one, z.get(), 1, y.get(), 1));
  float r = 0, xn = 0;
  TESSERA_CUBLAS_CHECK(cublasSnrm2(blas, n, y.get(), 1, &r));
  TESSERA_CUBLAS_CHECK(cublasSnrm2(blas, n, x.get(), 1, &xn));
  return r / (a_norm * xn);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {8192, 16384, 30000};
  std::vector<std::string> leaves_text = {"512/512/1024", "256/256/512", "1024/1024/2048"};
  std::vector<std::string> operands_text = {"tf32", "bf16", "fp16"};
  int reps = 5;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string option = argv[a], value = argv[a + 1];
    if (option == "--sizes") {
      sizes = tessera::bench::parse_int_list(value);
    } else if (option == "--leaves") {
      leaves_text = tessera::bench::split_commas(value);
    } else if (option == "--operands") {
      operands_text = tessera::bench::split_commas(value);
    } else if (option == "--reps") {
      reps = std::stoi(value);
    } else {
      fmt::print(stderr, "unknown option {}\n", option);
      return 2;
    }
  }
  if (!tessera::bench::cuda_device_present()) {
    fmt::print("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  fmt::print("{}; ms (median of {}), TFLOP/s as n^3/3, relative residual; leaves potrf/trsm/syrk\n", prop.name, reps);
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
  tessera::bench::Timer timer;
  for (const int n : sizes) {
    const std::size_t nn = std::size_t(n) * n;
    const double flops = double(n) * n * n / 3.0;
    Device<float> A(nn), work(nn);
    Device<int> info(1);
    make_matrix(blas, n, A.get());
    const double a_norm = frobenius_norm(n, A.get());
    const auto prepare = [&] {
      TESSERA_CUDA_CHECK(cudaMemcpy(work.get(), A.get(), A.bytes(), cudaMemcpyDeviceToDevice));
    };
    int lwork = 0;
    TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, n, work.get(), n, &lwork));
    Device<float> solver_work(lwork);
    const double spotrf_ms = timer.median_ms(reps, prepare, [&] {
      TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf(solver, CUBLAS_FILL_MODE_LOWER, n, work.get(), n, solver_work.get(),
                                              lwork, info.get()));
    });
    fmt::print("n {:>6}  cuSOLVER spotrf {:>9.2f} ms {:>6.1f} TFLOP/s  residual {:.1e}\n", n, spotrf_ms,
               flops / spotrf_ms / 1e9, relative_residual(blas, n, A.get(), a_norm, work.get()));
    for (const std::string& o : operands_text) {
      const tk::ProductOperands operands = o == "tf32"   ? tk::ProductOperands::tf32
                                           : o == "bf16" ? tk::ProductOperands::bf16
                                                         : tk::ProductOperands::fp16;
      for (const std::string& l : leaves_text) {
        const std::vector<std::string> parts = split_slashes(l);
        if (parts.size() != 3 && !(parts.size() == 4 && parts[3] == "i")) {
          fmt::print(stderr, "--leaves takes POTRF/TRSM/SYRK or POTRF/TRSM/SYRK/i, not {}\n", l);
          return 2;
        }
        const tk::RecursionLeaves leaves{std::stoi(parts[0]), std::stoi(parts[1]), std::stoi(parts[2]),
                                         parts.size() == 4};
        Device<unsigned char> space(tk::potrf_lower_on_tensor_cores_workspace(solver, operands, n, leaves));
        const double ms = timer.median_ms(reps, prepare, [&] {
          tk::potrf_lower_on_tensor_cores(blas, solver, operands, n, work.get(), n, space.get(), info.get(), nullptr,
                                          leaves);
        });
        int host_info = -1;
        TESSERA_CUDA_CHECK(cudaMemcpy(&host_info, info.get(), sizeof(int), cudaMemcpyDeviceToHost));
        fmt::print("n {:>6}  {:<4} {:>14} {:>9.2f} ms {:>6.1f} TFLOP/s  residual {:.1e}  info {}  x spotrf {:.2f}\n", n,
                   o, l, ms, flops / ms / 1e9, relative_residual(blas, n, A.get(), a_norm, work.get()), host_info,
                   spotrf_ms / ms);
        std::fflush(stdout);
      }
    }
  }
  cusolverDnDestroy(solver);
  cublasDestroy(blas);
  return 0;
}
