// Numerical failure and bad input: LAPACK info at the right global column (on and around tile
// boundaries), NaN and infinity reported, the runtime still usable afterwards; bad arguments
// rejected with LAPACK's numbering without touching memory.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/tessera.h"
#include "policy_modes.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

// An SPD matrix whose leading minor of order `column` (1-based) is not positive definite: the
// diagonal entry there is made very negative, so every earlier minor stays positive definite.
template <class T>
std::vector<T> spd_failing_at(int n, int column, unsigned seed) {
  std::vector<T> A = random_spd<T>(n, n, seed);
  A[(column - 1) + static_cast<std::size_t>(column - 1) * n] = T(-100);
  return A;
}

template <class T>
void expect_info(int n, int nb, int column, Uplo uplo, Mode mode) {
  std::vector<T> A = spd_failing_at<T>(n, column, 42u + column);
  FactorOptions options;
  options.nb = nb;
  options.uplo = uplo;
  options.mode = mode;
  EXPECT_EQ(potrf(runtime(), n, A.data(), n, options), column) << "n=" << n << " nb=" << nb << " column=" << column;
}

TEST(Errors, NotPositiveDefiniteGivesGlobalColumnAroundTileBoundaries) {
  const int n = 70, nb = 16;
  for (int column : {1, 2, 15, 16, 17, 32, 33, 48, 64, 65, 69, 70}) {
    expect_info<double>(n, nb, column, Uplo::lower, Mode::cpu);
    expect_info<double>(n, nb, column, Uplo::upper, Mode::cpu);
  }
  for (int column : {1, 16, 17, 70}) expect_info<float>(n, nb, column, Uplo::lower, Mode::cpu);
}

TEST(Errors, NotPositiveDefiniteOnGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (Mode mode : {Mode::gpu, Mode::hybrid}) {
    if (!policy_runs(mode)) continue;  // the running policy (TESSERA_POLICY) refuses it
    for (int column : {1, 16, 17, 33, 70}) {
      expect_info<double>(70, 16, column, Uplo::lower, mode);
      expect_info<float>(70, 16, column, Uplo::upper, mode);
    }
  }
}

TEST(Errors, RuntimeStillUsableAfterFailure) {
  expect_info<double>(200, 32, 100, Uplo::lower, Mode::cpu);
  std::vector<double> A = random_spd<double>(200, 200, 3);
  const std::vector<double> A0 = A;
  FactorOptions options;
  options.nb = 32;
  ASSERT_EQ(potrf(runtime(), 200, A.data(), 200, options), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, 200, A0, A, 200), 1.0);
}

TEST(Errors, IndefiniteMatrixReportsFirstFailingMinor) {
  // [[1, 2], [2, 1]] has eigenvalues 3 and -1: the minor of order 2 fails.
  double A[4] = {1, 2, 2, 1};
  EXPECT_EQ(potrf(runtime(), 2, A, 2), 2);
}

// A NaN or infinity in the referenced triangle: LAPACK's info (the row of the entry, the first
// leading minor that holds it, for all but +inf on the diagonal, whose square root LAPACK takes:
// info 0), and non_finite_input() says the input held one either way.
template <class T>
void expect_non_finite_reported(T bad, int row, int col, Uplo uplo) {
  const int n = 50;
  std::vector<T> A = random_spd<T>(n, n, 5);
  A[row + static_cast<std::size_t>(col) * n] = bad;
  FactorOptions options;
  options.nb = 16;
  options.uplo = uplo;
  options.mode = Mode::cpu;
  Request request = potrf_async(runtime(), n, A.data(), n, options);
  const int info = request.wait();
  EXPECT_EQ(info, row == col && bad > 0 ? 0 : std::max(row, col) + 1);
  EXPECT_TRUE(request.non_finite_input());
}

TEST(Errors, NanAndInfinityAreReported) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_non_finite_reported<double>(nan, 0, 0, Uplo::lower);
  expect_non_finite_reported<double>(inf, 20, 20, Uplo::lower);  // LAPACK: info 0, L(20, 20) = inf
  expect_non_finite_reported<double>(nan, 40, 3, Uplo::lower);
  expect_non_finite_reported<double>(-inf, 3, 40, Uplo::upper);
  expect_non_finite_reported<float>(std::numeric_limits<float>::infinity(), 49, 49, Uplo::upper);
}

// A NaN in the triangle not stored, in a diagonal tile and in an off-diagonal block, is neither
// read nor reported, and that triangle comes back as it was (upper storage: the tiles are the
// upper blocks as stored).
TEST(Errors, NanInUnreferencedTriangleIsIgnored) {
  const int n = 40;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int call = 0; call < 2; ++call) {  // the first call of a runtime may run in place
      std::vector<double> A = random_spd<double>(n, n, 6);
      auto unreferenced = [&](int i, int j) -> double& { return uplo == Uplo::lower ? A[i + j * n] : A[j + i * n]; };
      unreferenced(0, 30) = nan;
      unreferenced(2, 5) = nan;
      FactorOptions options;
      options.nb = 16;
      options.uplo = uplo;
      EXPECT_EQ(potrf(runtime(), n, A.data(), n, options), 0) << to_string(uplo) << " call " << call;
      EXPECT_TRUE(std::isnan(unreferenced(0, 30)) && std::isnan(unreferenced(2, 5))) << to_string(uplo);
      EXPECT_EQ(unreferenced(1, 30), random_spd<double>(n, n, 6)[uplo == Uplo::lower ? 1 + 30 * n : 30 + 1 * n]);
    }
}

TEST(Errors, CApiRejectsBadArgumentsWithLapackNumbering) {
  double canary[4] = {1, 2, 3, 4};
  EXPECT_EQ(tessera_dpotrf('X', 2, canary, 2), -1);
  EXPECT_EQ(tessera_dpotrf('L', -1, canary, 2), -2);
  EXPECT_EQ(tessera_dpotrf('L', 2, nullptr, 2), -3);
  EXPECT_EQ(tessera_dpotrf('L', 2, canary, 1), -4);
  EXPECT_EQ(tessera_spotrf('u', -3, nullptr, 0), -2);
  EXPECT_EQ(tessera_dpotrs('L', 2, -1, canary, 2, canary, 2), -3);
  EXPECT_EQ(tessera_dpotrs('L', 2, 1, nullptr, 2, canary, 2), -4);
  EXPECT_EQ(tessera_dpotrs('L', 2, 1, canary, 1, canary, 2), -5);
  EXPECT_EQ(tessera_dposv('L', 2, 1, canary, 2, nullptr, 2), -6);
  EXPECT_EQ(tessera_dposv('L', 2, 1, canary, 2, canary, 1), -7);
  EXPECT_EQ(tessera_dposv('Q', 2, 1, canary, 2, canary, 2), -1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(canary[i], i + 1);  // never touched
}

TEST(Errors, CApiZeroSizesSucceed) {
  EXPECT_EQ(tessera_dpotrf('L', 0, nullptr, 1), 0);
  EXPECT_EQ(tessera_dposv('U', 0, 3, nullptr, 1, nullptr, 1), 0);
  double A[1] = {4};
  EXPECT_EQ(tessera_dpotrs('L', 1, 0, A, 1, nullptr, 1), 0);
}

TEST(Errors, CppApiRejectsMisuse) {
  std::vector<double> A(16, 1.0);
  EXPECT_THROW(potrf(runtime(), 4, A.data(), 3), InvalidArgument);
  EXPECT_THROW(potrf(runtime(), -1, A.data(), 4), InvalidArgument);
  EXPECT_THROW(potrf<double>(runtime(), 4, nullptr, 4), InvalidArgument);
  FactorOptions options;
  options.nb = -5;
  EXPECT_THROW(potrf(runtime(), 4, A.data(), 4, options), InvalidArgument);
  EXPECT_THROW(TileMatrix<double>(runtime(), 5, 0), InvalidArgument);
  EXPECT_THROW(parse_mode("fast"), InvalidArgument);
  if (!have_gpu()) {
    options.nb = 2;
    options.mode = Mode::gpu;
    EXPECT_THROW(potrf(runtime(), 4, A.data(), 4, options), RuntimeError);
  }
}

TEST(Errors, PosvLeavesRightHandSideUntouchedOnFailure) {
  const int n = 48;
  std::vector<double> A = spd_failing_at<double>(n, 20, 9);
  std::vector<double> B = random_matrix<double>(n, 2, n, 10);
  const std::vector<double> B0 = B;
  FactorOptions options;
  options.nb = 16;
  EXPECT_EQ(posv(runtime(), n, 2, A.data(), n, B.data(), n, options), 20);
  EXPECT_EQ(B, B0);
}

}  // namespace
}  // namespace tessera::test
