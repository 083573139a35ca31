// The inverse from a Cholesky factor (potri) through the C++ and C APIs on LAPACK-layout arrays:
// LAPACK's own test ratio on odd sizes, both triangles, both precisions, every mode (gpu skips
// where no GPU is present); a zero on the factor's diagonal at every position that matters; the
// other triangle and the padding untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "policy_modes.hpp"
#include "tessera/device.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tessera::test {
namespace {

// The symmetric matrix whose triangle `uplo` the array M holds, in full (n x n, ld n), in double.
template <class T>
std::vector<double> symmetric_from(Uplo uplo, int n, const std::vector<T>& M, int ld) {
  std::vector<double> S(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = uplo == Uplo::lower ? i >= j : i <= j;
      S[i + static_cast<std::size_t>(j) * n] =
          double(stored ? M[i + static_cast<std::size_t>(j) * ld] : M[j + static_cast<std::size_t>(i) * ld]);
    }
  return S;
}

double one_norm(int n, const std::vector<double>& M) {
  double norm = 0;
  for (int j = 0; j < n; ++j) {
    double column = 0;
    for (int i = 0; i < n; ++i) column += std::abs(M[i + static_cast<std::size_t>(j) * n]);
    norm = std::max(norm, column);
  }
  return norm;
}

// LAPACK's test ratio for an inverse (xPOT03): ||I - A A^{-1}||_1 / (n ||A||_1 ||A^{-1}||_1 eps).
template <class T>
double inverse_ratio(int n, const std::vector<double>& A, const std::vector<double>& inverse) {
  std::vector<double> R(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) R[i + static_cast<std::size_t>(i) * n] = 1.0;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0, A.data(), n, inverse.data(), n, 1.0, R.data(),
              n);
  return one_norm(n, R) / (n * one_norm(n, A) * one_norm(n, inverse) * std::numeric_limits<T>::epsilon());
}

struct Case {
  int n;
  int nb;
  int extra_ld;
};

const Case kCases[] = {{1, 16, 0},  {2, 16, 3},   {15, 16, 0},  {16, 16, 1}, {17, 16, 2},
                       {53, 16, 0}, {64, 17, 1},  {97, 32, 5},  {211, 64, 0}, {10, 100, 0}};

// Factors A with LAPACK, inverts the factor with Tessera, and checks the inverse and what it must
// not touch.
template <class T>
void check_potri(const Case& c, Uplo uplo, Mode mode, unsigned seed) {
  const int ld = c.n + c.extra_ld;
  const std::vector<T> A = random_spd<T>(c.n, ld, seed);
  std::vector<T> F = A;
  ASSERT_EQ(kernels::cpu::potrf(uplo == Uplo::lower ? 'L' : 'U', c.n, F.data(), ld), 0);
  const std::vector<T> factor = F;
  FactorOptions options;
  options.uplo = uplo;
  options.nb = c.nb;
  options.mode = mode;
  const std::string name = "n" + std::to_string(c.n) + " nb" + std::to_string(c.nb) + " " + to_string(uplo) + " " +
                           to_string(mode);
  ASSERT_EQ(potri(runtime(), c.n, F.data(), ld, options), 0) << name;
  EXPECT_LT(inverse_ratio<T>(c.n, symmetric_from(uplo, c.n, A, ld), symmetric_from(uplo, c.n, F, ld)),
            kResidualThreshold)
      << name;
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < ld; ++i) {
      const bool referenced = i < c.n && (uplo == Uplo::lower ? i >= j : i <= j);
      if (!referenced)
        ASSERT_EQ(F[i + static_cast<std::size_t>(j) * ld], factor[i + static_cast<std::size_t>(j) * ld])
            << name << " (" << i << ", " << j << ") outside the triangle written";
    }
}

class Inverse : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {};

TEST_P(Inverse, DoubleMatchesLapacksRatioOnOddSizes) {
  const auto [uplo, mode] = GetParam();
  if (mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  unsigned seed = 5;
  for (const Case& c : kCases) check_potri<double>(c, uplo, mode, seed++);
}

TEST_P(Inverse, FloatMatchesLapacksRatioOnOddSizes) {
  const auto [uplo, mode] = GetParam();
  if (mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  unsigned seed = 50;
  for (const Case& c : kCases) check_potri<float>(c, uplo, mode, seed++);
}

INSTANTIATE_TEST_SUITE_P(AllModes, Inverse,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)));

// xPOTRI fails where xTRTRI finds a zero on the factor's diagonal, before changing anything.
TEST(InverseInfo, AZeroOnTheDiagonalGivesItsPositionAndChangesNothing) {
  const int n = 37, nb = 8;
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int zero : {0, nb - 1, nb, nb + 1, n - 1}) {
      std::vector<double> F = random_spd<double>(n, n, 3);
      ASSERT_EQ(kernels::cpu::potrf(uplo == Uplo::lower ? 'L' : 'U', n, F.data(), n), 0);
      F[zero + static_cast<std::size_t>(zero) * n] = 0.0;
      const std::vector<double> before = F;
      FactorOptions options;
      options.uplo = uplo;
      options.nb = nb;
      EXPECT_EQ(potri(runtime(), n, F.data(), n, options), zero + 1) << to_string(uplo);
      EXPECT_EQ(F, before);
      std::vector<double> C = before;
      EXPECT_EQ(tessera_dpotri(uplo == Uplo::lower ? 'L' : 'U', n, C.data(), n), zero + 1);
      EXPECT_EQ(C, before);
    }
}

TEST(InverseInfo, ANanInTheFactorPropagatesAsInLapack) {
  const int n = 20;
  std::vector<double> F = random_spd<double>(n, n, 4);
  ASSERT_EQ(kernels::cpu::potrf('L', n, F.data(), n), 0);
  F[7 + 3 * n] = std::nan("");
  FactorOptions options;
  options.nb = 8;
  EXPECT_EQ(potri(runtime(), n, F.data(), n, options), 0);
  EXPECT_TRUE(std::isnan(F[3 + 3 * n]));
}

TEST(InverseArguments, LapacksPositionsAndQuickReturn) {
  std::vector<double> A(16, 1.0);
  try {
    potri(runtime(), -1, A.data(), 4);
    FAIL() << "n < 0 was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 2);
  }
  try {
    potri(runtime(), 4, A.data(), 3);
    FAIL() << "lda < n was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 4);
  }
  EXPECT_EQ(potri(runtime(), 0, static_cast<double*>(nullptr), 1), 0);
  EXPECT_EQ(tessera_dpotri('X', 4, A.data(), 4), -1);
  EXPECT_EQ(tessera_dpotri('L', -1, A.data(), 4), -2);
  EXPECT_EQ(tessera_spotri('L', 0, nullptr, 1), 0);
  EXPECT_THROW(potri_async(runtime(), MatrixView<double>::host_batch(4, 4, A.data(), 4, 16, 1)), InvalidArgument);
}

// The calling thread (small work, no tile size asked) and the C API agree with LAPACK to rounding.
TEST(InverseSmall, CallingThreadAndCApiMatchLapack) {
  for (int n : {1, 5, 40}) {
    std::vector<double> F = random_spd<double>(n, n, 9);
    ASSERT_EQ(kernels::cpu::potrf('U', n, F.data(), n), 0);
    std::vector<double> expected = F, cpp = F, c = F;
    ASSERT_EQ(kernels::cpu::potri('U', n, expected.data(), n), 0);
    FactorOptions options;
    options.uplo = Uplo::upper;
    ASSERT_TRUE(runs_on_calling_thread(MatrixView<double>::host(n, n, cpp.data(), n), 0, options));
    ASSERT_EQ(potri_on_calling_thread(MatrixView<double>::host(n, n, cpp.data(), n), options), 0);
    ASSERT_EQ(tessera_dpotri('U', n, c.data(), n), 0);
    // Small orders take Tessera's unblocked potri (kernels/cpu/small_potri.hpp): LAPACK's result
    // to rounding.
    double largest = 0;
    for (double x : expected) largest = std::max(largest, std::abs(x));
    for (std::size_t k = 0; k < c.size(); ++k) {
      EXPECT_NEAR(cpp[k], expected[k], 1e-14 * n * largest) << "n " << n << " element " << k;
      EXPECT_NEAR(c[k], expected[k], 1e-14 * n * largest) << "n " << n << " element " << k;
    }
  }
}

#ifdef TESSERA_HAVE_CUDA
// A factor in GPU memory: the same ratio, both triangles, tiles of several sizes and the whole
// matrix as one tile; a zero on the diagonal leaves the matrix as it was.
TEST(InverseOnDevice, MatchesLapacksRatioAndReportsAZeroPivot) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 301;
  const std::vector<double> A = random_spd<double>(n, n, 21);
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(double) * n * n), cudaSuccess);
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int nb : {0, 64, 300}) {
      std::vector<double> F = A;
      ASSERT_EQ(kernels::cpu::potrf(uplo == Uplo::lower ? 'L' : 'U', n, F.data(), n), 0);
      ASSERT_EQ(cudaMemcpy(d, F.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice), cudaSuccess);
      FactorOptions options;
      options.uplo = uplo;
      options.nb = nb;
      ASSERT_EQ(device::potri(runtime(), n, d, n, nullptr, options), 0);
      std::vector<double> X(F.size());
      ASSERT_EQ(cudaMemcpy(X.data(), d, sizeof(double) * n * n, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_LT(inverse_ratio<double>(n, symmetric_from(uplo, n, A, n), symmetric_from(uplo, n, X, n)),
                kResidualThreshold)
          << to_string(uplo) << " nb " << nb;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (uplo == Uplo::lower ? i < j : i > j)
            ASSERT_EQ(X[i + static_cast<std::size_t>(j) * n], F[i + static_cast<std::size_t>(j) * n]) << "other triangle";
      F[150 + 150 * n] = 0.0;
      ASSERT_EQ(cudaMemcpy(d, F.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(device::potri(runtime(), n, d, n, nullptr, options), 151);
      ASSERT_EQ(cudaMemcpy(X.data(), d, sizeof(double) * n * n, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(X, F);
    }
  cudaFree(d);
}
#endif

}  // namespace
}  // namespace tessera::test
