// FactorOptions::log_determinant and the C API's potrf_logdet: log det(A) from the factor, against
// LAPACK's factor, on host arrays (tile tasks in every mode, and the calling thread), host batches
// (fixed and variable sizes, with a failing matrix), tile matrices, GPU arrays (skipped without a
// GPU), posv, and the C API's null output.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "tessera/batched.hpp"
#include "tessera/device.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tessera::test {
namespace {

// 2 sum log(diag) of LAPACK's factor of the n x n matrix A (ld), in double.
template <class T>
double lapack_log_determinant(int n, std::vector<T> A, int ld) {
  EXPECT_EQ(kernels::cpu::potrf('L', n, A.data(), ld), 0);
  double sum = 0;
  for (int j = 0; j < n; ++j) sum += 2.0 * std::log(double(A[j + static_cast<std::size_t>(j) * ld]));
  return sum;
}

template <class T>
double tolerance(double value, int n) {
  return 20.0 * n * std::numeric_limits<T>::epsilon() * std::max(1.0, std::abs(value));
}

template <class T>
void check_host(int n, int nb, Uplo uplo, Mode mode) {
  const std::vector<T> A = random_spd<T>(n, n, 40 + n);
  const double expected = lapack_log_determinant(n, A, n);
  std::vector<T> F = A;
  double logdet = std::nan("");
  FactorOptions options;
  options.uplo = uplo;
  options.nb = nb;
  options.mode = mode;
  options.log_determinant = &logdet;
  ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0);
  EXPECT_NEAR(logdet, expected, tolerance<T>(expected, n)) << "n " << n << " nb " << nb << " " << to_string(mode);
}

TEST(LogDeterminant, HostArraysInEveryModeBothTrianglesBothPrecisions) {
  for (Mode mode : {Mode::cpu, Mode::hybrid, Mode::gpu}) {
    if (mode == Mode::gpu && !have_gpu()) continue;
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int n : {1, 15, 17, 53, 130}) {
        check_host<double>(n, 16, uplo, mode);
        check_host<float>(n, 16, uplo, mode);
      }
  }
}

TEST(LogDeterminant, ZeroWhereTheFactorizationFailsAndAfterAnAsyncWait) {
  const int n = 40;
  std::vector<double> A = random_spd<double>(n, n, 3);
  A[20 + 20 * n] = -1.0;
  double logdet = 7.0;
  FactorOptions options;
  options.nb = 8;
  options.log_determinant = &logdet;
  EXPECT_EQ(potrf(runtime(), n, A.data(), n, options), 21);
  EXPECT_EQ(logdet, 0.0);
  std::vector<double> B = random_spd<double>(n, n, 4);
  const double expected = lapack_log_determinant(n, B, n);
  logdet = std::nan("");
  Request request = potrf_async(runtime(), n, B.data(), n, options);
  EXPECT_EQ(request.wait(), 0);  // wait() writes it
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
}

TEST(LogDeterminant, PosvAndTheCallingThreadAndTheCApi) {
  const int n = 30;
  const std::vector<double> A = random_spd<double>(n, n, 5);
  const double expected = lapack_log_determinant(n, A, n);
  std::vector<double> F = A, b(n, 1.0);
  double logdet = std::nan("");
  FactorOptions options;  // small work: the calling thread
  options.log_determinant = &logdet;
  ASSERT_TRUE(runs_on_calling_thread(MatrixView<double>::host(n, n, F.data(), n), 1, options));
  ASSERT_EQ(posv(runtime(), n, 1, F.data(), n, b.data(), n, options), 0);
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
  FactorOptions tiled = options;  // tile tasks
  tiled.nb = 8;
  F = A;
  logdet = std::nan("");
  ASSERT_EQ(posv(runtime(), n, 1, F.data(), n, b.data(), n, tiled), 0);
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
  F = A;
  logdet = std::nan("");
  ASSERT_EQ(potrf_on_calling_thread(MatrixView<double>::host(n, n, F.data(), n), options), 0);
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
  F = A;
  logdet = std::nan("");
  ASSERT_EQ(tessera_dpotrf_logdet('U', n, F.data(), n, &logdet), 0);
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
  std::vector<float> G(A.begin(), A.end());
  logdet = std::nan("");
  ASSERT_EQ(tessera_spotrf_logdet('L', n, G.data(), n, &logdet), 0);
  EXPECT_NEAR(logdet, expected, tolerance<float>(expected, n));
  EXPECT_EQ(tessera_dpotrf_logdet('L', n, F.data(), n, nullptr), -5);
  EXPECT_EQ(tessera_dpotrf_logdet('X', n, F.data(), n, nullptr), -1);  // LAPACK's arguments first
  logdet = 3.0;
  EXPECT_EQ(tessera_dpotrf_logdet('L', 0, nullptr, 1, &logdet), 0);
  EXPECT_EQ(logdet, 0.0);  // the empty matrix's determinant is 1
}

TEST(LogDeterminant, OnePerMatrixOfABatchZeroForTheOneThatFails) {
  const int n = 9, batch = 5;
  const long long stride = n * n;
  std::vector<double> A(stride * batch);
  std::vector<double> expected(batch);
  for (int k = 0; k < batch; ++k) {
    const std::vector<double> M = random_spd<double>(n, n, 60 + k);
    std::copy(M.begin(), M.end(), A.begin() + k * stride);
    expected[k] = lapack_log_determinant(n, M, n);
  }
  A[3 * stride + 4 + 4 * n] = -1.0;
  expected[3] = 0.0;
  std::vector<double> variable = A;
  std::vector<int> info(batch, -1);
  std::vector<double> logdet(batch, std::nan(""));
  FactorOptions options;
  options.mode = Mode::cpu;
  options.batch_chunk = 2;  // tasks, not the calling thread
  options.log_determinant = logdet.data();
  ASSERT_EQ(potrf(runtime(), MatrixView<double>::host_batch(n, n, A.data(), n, stride, batch, info.data()), options), 0);
  EXPECT_EQ(info[3], 5);
  for (int k = 0; k < batch; ++k) EXPECT_NEAR(logdet[k], expected[k], tolerance<double>(expected[k], n)) << k;
  const std::vector<int> sizes(batch, n), lds(batch, n);
  std::vector<long long> offsets(batch);
  for (int k = 0; k < batch; ++k) offsets[k] = k * stride;
  std::fill(logdet.begin(), logdet.end(), std::nan(""));
  ASSERT_EQ(potrf(runtime(),
                  MatrixView<double>::host_variable_batch(sizes.data(), variable.data(), offsets.data(), lds.data(),
                                                          batch, info.data()),
                  options),
            0);
  for (int k = 0; k < batch; ++k) EXPECT_NEAR(logdet[k], expected[k], tolerance<double>(expected[k], n)) << k;
}

TEST(LogDeterminant, TileMatricesSumEachDiagonalTilesShare) {
  const int n = 45;
  const std::vector<double> A = random_spd<double>(n, n, 12);
  const double expected = lapack_log_determinant(n, A, n);
  TileMatrix<double> L(runtime(), n, 8);
  load_async(L, Uplo::lower, A.data(), n).wait();
  double logdet = std::nan("");
  FactorOptions options;
  options.log_determinant = &logdet;
  ASSERT_EQ(potrf_async(L, options).wait(), 0);
  EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
}

#ifdef TESSERA_HAVE_CUDA
TEST(LogDeterminant, GpuArrays) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 300;
  const std::vector<double> A = random_spd<double>(n, n, 8);
  const double expected = lapack_log_determinant(n, A, n);
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(double) * n * n), cudaSuccess);
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    ASSERT_EQ(cudaMemcpy(d, A.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice), cudaSuccess);
    double logdet = std::nan("");
    FactorOptions options;
    options.uplo = uplo;
    options.log_determinant = &logdet;
    EXPECT_EQ(potrf(runtime(), MatrixView<double>::on_device(n, n, d, n, nullptr), options), 0);
    EXPECT_NEAR(logdet, expected, tolerance<double>(expected, n));
  }
  cudaFree(d);
}
#endif

}  // namespace
}  // namespace tessera::test
