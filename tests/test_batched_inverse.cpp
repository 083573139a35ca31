// The batched inverse from factors on host memory (tessera::potri_batched, potri_async on a
// host_batch view, tessera_?potri_batched) against LAPACKE's xPOTRI on each matrix, in the four
// scalar types, both triangles, odd orders, lda > n and gaps between the matrices: on the calling
// thread, and as chunk tasks in cpu, hybrid and gpu mode (gpu skips where no GPU is present).
// Members 1, 2 and 3 have a zero on their factor's diagonal at the first, a middle and the last
// column: their info must say where and their storage must come back bit-identical, as must every
// element outside the referenced triangles (NaN).
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <string>
#include <vector>

#include "inverse_batch_support.hpp"
#include "tessera/batched.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

namespace tessera::test {
namespace {

using namespace inverse_batch;

constexpr int kOrders[] = {1, 2, 15, 17, 33, 64, 97};
constexpr int kBatch = 13;

// How a test runs the batch.
enum class Route { calling_thread, c_api, cpu_tasks, hybrid_tasks, gpu_tasks };

const char* to_string(Route route) {
  switch (route) {
    case Route::calling_thread: return "calling thread";
    case Route::c_api: return "C API";
    case Route::cpu_tasks: return "cpu tasks";
    case Route::hybrid_tasks: return "hybrid tasks";
    case Route::gpu_tasks: return "gpu tasks";
  }
  return "?";
}

// The C API's host batched inverse for T.
int c_potri_batched(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info) {
  return tessera_spotri_batched(uplo, n, A, lda, strideA, batch, info);
}
int c_potri_batched(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info) {
  return tessera_dpotri_batched(uplo, n, A, lda, strideA, batch, info);
}
int c_potri_batched(char uplo, int n, std::complex<float>* A, int lda, long long strideA, int batch, int* info) {
  return tessera_cpotri_batched(uplo, n, A, lda, strideA, batch, info);
}
int c_potri_batched(char uplo, int n, std::complex<double>* A, int lda, long long strideA, int batch, int* info) {
  return tessera_zpotri_batched(uplo, n, A, lda, strideA, batch, info);
}

template <class T>
void invert(Route route, Uplo uplo, int n, std::vector<T>& A, int lda, long long stride, std::vector<int>& info) {
  BatchOptions options;
  options.uplo = uplo;
  options.chunk = 4;  // tasks: a chunk size asked for keeps the request off the calling thread
  switch (route) {
    case Route::calling_thread: {
      FactorOptions factor_options;
      factor_options.uplo = uplo;
      const auto view = MatrixView<T>::host_batch(n, n, A.data(), lda, stride, kBatch, info.data());
      ASSERT_TRUE(runs_on_calling_thread(view, 0, factor_options));
      ASSERT_EQ(potri_on_calling_thread(view, factor_options), 0);
      return;
    }
    case Route::c_api:
      ASSERT_EQ(c_potri_batched(letter(uplo), n, A.data(), lda, stride, kBatch, info.data()), 0);
      return;
    case Route::cpu_tasks: options.mode = Mode::cpu; break;
    case Route::hybrid_tasks: options.mode = Mode::hybrid; break;
    case Route::gpu_tasks: options.mode = Mode::gpu; break;
  }
  potri_batched(runtime(), n, A.data(), lda, stride, kBatch, info.data(), options);
}

template <class T>
class BatchedInverse : public ::testing::Test {};
using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(BatchedInverse, Scalars);

template <class T>
void check_route(Route route) {
  std::mt19937_64 rng(20261201);
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int n : kOrders) {
      const std::string where = describe(to_string(route), uplo, n, kBatch);
      const FactorBatch<T> fb = factor_batch<T>(uplo, n, kBatch, rng);
      std::vector<T> A = fb.factors;
      std::vector<int> info(kBatch, -77);
      invert(route, uplo, n, A, fb.lda, fb.stride, info);
      if (::testing::Test::HasFatalFailure()) return;
      check_in_place(fb, uplo, A, info, where);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TYPED_TEST(BatchedInverse, CallingThreadAndCApiMatchLapack) {
  check_route<TypeParam>(Route::calling_thread);
  check_route<TypeParam>(Route::c_api);
}

TYPED_TEST(BatchedInverse, CpuAndHybridTasksMatchLapack) {
  check_route<TypeParam>(Route::cpu_tasks);
  check_route<TypeParam>(Route::hybrid_tasks);
}

TYPED_TEST(BatchedInverse, GpuTasksMatchLapack) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_route<TypeParam>(Route::gpu_tasks);
}

// A request too large for the calling thread (order 400, 4 matrices) runs as tasks by itself.
TEST(BatchedInverseSizes, LargerMatricesRunAsTasks) {
  const int n = 400, lda = n, batch = 4;
  const long long stride = static_cast<long long>(lda) * n;
  std::vector<double> A(static_cast<std::size_t>(stride) * batch), reference;
  for (int k = 0; k < batch; ++k) {
    std::vector<double> M = random_spd<double>(n, lda, 40u + k);
    ASSERT_EQ(kernels::cpu::potrf('U', n, M.data(), lda), 0);
    std::copy(M.begin(), M.end(), A.begin() + k * stride);
  }
  FactorOptions options;
  options.uplo = Uplo::upper;
  std::vector<int> info(batch, -77);
  const auto view = MatrixView<double>::host_batch(n, n, A.data(), lda, stride, batch, info.data());
  ASSERT_FALSE(runs_on_calling_thread(view, 0, options));
  reference = A;
  for (int k = 0; k < batch; ++k) ASSERT_EQ(kernels::cpu::potri('U', n, reference.data() + k * stride, lda), 0);
  ASSERT_EQ(potri(runtime(), view, options), 0);
  for (int k = 0; k < batch; ++k) {
    EXPECT_EQ(info[k], 0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) {
        const std::size_t at = k * stride + i + static_cast<std::size_t>(j) * lda;
        ASSERT_NEAR(A[at], reference[at], 1e-12 * (1 + std::abs(reference[at]))) << "matrix " << k;
      }
  }
}

TEST(BatchedInverseArguments, LapacksPositionsAndEmptyBatches) {
  std::vector<double> A(32, 1.0);
  std::vector<int> info(2, -77);
  EXPECT_EQ(tessera_dpotri_batched('X', 4, A.data(), 4, 16, 2, info.data()), -1);
  EXPECT_EQ(tessera_dpotri_batched('L', -1, A.data(), 4, 16, 2, info.data()), -2);
  EXPECT_EQ(tessera_dpotri_batched('L', 4, nullptr, 4, 16, 2, info.data()), -3);
  EXPECT_EQ(tessera_dpotri_batched('L', 4, A.data(), 3, 16, 2, info.data()), -4);
  EXPECT_EQ(tessera_dpotri_batched('L', 4, A.data(), 4, 15, 2, info.data()), -5);
  EXPECT_EQ(tessera_dpotri_batched('L', 4, A.data(), 4, 16, -1, info.data()), -6);
  EXPECT_EQ(tessera_dpotri_batched('L', 4, A.data(), 4, 16, 2, nullptr), -7);
  EXPECT_EQ(info, std::vector<int>(2, -77)) << "misuse wrote info";
  // Order 0: every info 0, nothing read; batch 0: nothing at all.
  EXPECT_EQ(tessera_zpotri_batched('U', 0, nullptr, 1, 0, 2, info.data()), 0);
  EXPECT_EQ(info, std::vector<int>(2, 0));
  EXPECT_EQ(tessera_spotri_batched('L', 3, nullptr, 3, 9, 0, nullptr), 0);
  // The C++ form throws with the same position, and a variable batch is refused.
  BatchOptions options;
  options.chunk = 1;
  try {
    potri_batched(runtime(), 4, A.data(), 4, 15, 2, info.data(), options);
    ADD_FAILURE() << "an overlapping stride was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 5) << e.what();
  }
  const int sizes[] = {2, 2};
  const long long offsets[] = {0, 4};
  const int lds[] = {2, 2};
  EXPECT_THROW(potri(runtime(), MatrixView<double>::host_variable_batch(sizes, A.data(), offsets, lds, 2, info.data())),
               InvalidArgument);
}

}  // namespace
}  // namespace tessera::test
