// Factorization and solves through the C++ API on LAPACK-layout arrays: residuals on odd sizes,
// both triangles, both precisions, every mode (gpu and hybrid skip where no GPU is present).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "policy_modes.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

struct Case {
  int n;
  int nb;
  int extra_ld;  // lda = n + extra_ld
};

std::string case_name(const Case& c, Uplo uplo, Mode mode) {
  return "n" + std::to_string(c.n) + "_nb" + std::to_string(c.nb) + "_ld" + std::to_string(c.extra_ld) + "_" +
         to_string(uplo) + "_" + to_string(mode);
}

const Case kCases[] = {
    {1, 16, 0},  {2, 16, 3},  {15, 16, 0}, {16, 16, 0}, {17, 16, 2}, {33, 16, 0},  {31, 1, 0},  {64, 17, 1},
    {97, 64, 5}, {10, 100, 0}, {127, 17, 0}, {211, 64, 0}, {997, 64, 3}, {300, 300, 0},
};

// Hybrid mode runs on the CPUs when there is no GPU, so only gpu mode is skipped; and the modes
// the running policy (TESSERA_POLICY) refuses.
#define SKIP_UNLESS_MODE_AVAILABLE(mode)                                                                       \
  do {                                                                                                         \
    if ((mode) == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";            \
    if (resolved_here(mode) && !policy_runs(*resolved_here(mode)))                                             \
      GTEST_SKIP() << runtime().scheduler() << " does not run " << to_string(*resolved_here(mode)) << " mode"; \
  } while (0)

// ||A - L L^T|| / (n ||A|| eps) below this: at n = 1 a correctly rounded square root and the
// rounding of its square alone may leave up to 1.5 (cuSOLVER's potrf of a 1 x 1 matrix left 1.17).
constexpr double kFactorErrorLimit = 2.0;

template <class T>
void check_potrf(const Case& c, Uplo uplo, Mode mode, unsigned seed, TaskGrain grain = TaskGrain::automatic) {
  const int ld = c.n + c.extra_ld;
  const std::vector<T> A = random_spd<T>(c.n, ld, seed);
  std::vector<T> F = A;
  FactorOptions options;
  options.uplo = uplo;
  options.nb = c.nb;
  options.mode = mode;
  options.grain = grain;
  ASSERT_EQ(potrf(runtime(), c.n, F.data(), ld, options), 0) << case_name(c, uplo, mode);
  EXPECT_LT(factor_backward_error(uplo, c.n, A, F, ld), kFactorErrorLimit) << case_name(c, uplo, mode);
  // The other triangle and the padding rows are untouched.
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < ld; ++i) {
      const bool referenced = i < c.n && (uplo == Uplo::lower ? i >= j : i <= j);
      if (!referenced) ASSERT_EQ(F[i + static_cast<std::size_t>(j) * ld], A[i + static_cast<std::size_t>(j) * ld]) << i << "," << j;
    }
}

class Factorization : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {};

TEST_P(Factorization, DoubleResidualSmallOnOddSizes) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  unsigned seed = 1;
  for (const Case& c : kCases) check_potrf<double>(c, uplo, mode, seed++);
}

TEST_P(Factorization, FloatResidualSmallOnOddSizes) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  unsigned seed = 100;
  for (const Case& c : kCases) check_potrf<float>(c, uplo, mode, seed++);
}

template <class T>
void check_posv(int n, int nrhs, int nb, Uplo uplo, Mode mode, unsigned seed, TaskGrain grain = TaskGrain::automatic) {
  const int lda = n + 1, ldb = n + 2;
  const std::vector<T> A = random_spd<T>(n, lda, seed);
  const std::vector<T> B = random_matrix<T>(n, nrhs, ldb, seed + 1);
  FactorOptions options;
  options.uplo = uplo;
  options.nb = nb;
  options.mode = mode;
  options.grain = grain;
  std::vector<T> F = A, X = B;
  ASSERT_EQ(posv(runtime(), n, nrhs, F.data(), lda, X.data(), ldb, options), 0);
  EXPECT_LT(factor_backward_error(uplo, n, A, F, lda), 1.0);
  std::vector<T> Y = B;
  ASSERT_EQ(potrs(runtime(), n, nrhs, F.data(), lda, Y.data(), ldb, options), 0);
  if (nrhs == 0) return;
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, X, B, ldb), kResidualThreshold) << "posv n=" << n << " nrhs=" << nrhs;
  // potrs on the factor gives the solution too.
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, Y, B, ldb), kResidualThreshold) << "potrs n=" << n << " nrhs=" << nrhs;
}

TEST_P(Factorization, SolvesHaveSmallResiduals) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  check_posv<double>(1, 1, 16, uplo, mode, 7);
  check_posv<double>(50, 3, 16, uplo, mode, 8);
  check_posv<double>(131, 40, 32, uplo, mode, 9);
  check_posv<float>(77, 5, 20, uplo, mode, 10);
  check_posv<double>(64, 0, 16, uplo, mode, 11);
}

INSTANTIATE_TEST_SUITE_P(AllModes, Factorization,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
                         });

// The block-column factorization (one panel task and one task per block column per step; not the
// default), on host arrays in every mode.
class BlockColumnFactorization : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {};

TEST_P(BlockColumnFactorization, ResidualSmallOnOddSizesAndSolves) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  unsigned seed = 200;
  for (const Case& c : kCases) {
    check_potrf<double>(c, uplo, mode, seed++, TaskGrain::block_columns);
    check_potrf<float>(c, uplo, mode, seed++, TaskGrain::block_columns);
  }
  check_posv<double>(131, 40, 32, uplo, mode, 9, TaskGrain::block_columns);
  check_posv<float>(77, 5, 20, uplo, mode, 10, TaskGrain::block_columns);
}

INSTANTIATE_TEST_SUITE_P(AllModes, BlockColumnFactorization,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
                         });

// The whole factorization as one task (TaskGrain::whole_matrix; auto's choice for tiles already
// on one GPU up to a measured order), on host arrays in every mode: the tiles gathered into one
// matrix (pooled tiles, and StarPU's copies on a GPU) and factored as it is (an array used in
// place, whose tiles are views of it).
class WholeMatrixFactorization : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {};

TEST_P(WholeMatrixFactorization, ResidualSmallOnOddSizesAndSolves) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  unsigned seed = 300;
  for (const Case& c : kCases) {
    check_potrf<double>(c, uplo, mode, seed++, TaskGrain::whole_matrix);
    check_potrf<float>(c, uplo, mode, seed++, TaskGrain::whole_matrix);
  }
  check_posv<double>(131, 40, 32, uplo, mode, 9, TaskGrain::whole_matrix);
  check_posv<float>(77, 5, 20, uplo, mode, 10, TaskGrain::whole_matrix);
}

TEST_P(WholeMatrixFactorization, ArrayInPlaceIsFactoredAsItIs) {
  const auto [uplo, mode] = GetParam();
  SKIP_UNLESS_MODE_AVAILABLE(mode);
  runtime();  // StarPU started with the test binary's options
  RuntimeOptions in_place = RuntimeOptions::from_environment();
  in_place.host_tiles = HostTiles::in_place;
  Runtime rt(in_place);
  for (const Case& c : kCases) {
    const int ld = c.n + c.extra_ld;
    const std::vector<double> A = random_spd<double>(c.n, ld, 400u + c.n);
    std::vector<double> F = A;
    FactorOptions options;
    options.uplo = uplo;
    options.nb = c.nb;
    options.mode = mode;
    options.grain = TaskGrain::whole_matrix;
    ASSERT_EQ(potrf(rt, c.n, F.data(), ld, options), 0) << case_name(c, uplo, mode);
    EXPECT_LT(factor_backward_error(uplo, c.n, A, F, ld), kFactorErrorLimit) << case_name(c, uplo, mode);
    std::vector<double> G = A;
    G[(c.n - 1) + static_cast<std::size_t>(c.n - 1) * ld] = -1.0;  // the last minor fails
    EXPECT_EQ(potrf(rt, c.n, G.data(), ld, options), c.n) << case_name(c, uplo, mode);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, WholeMatrixFactorization,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace tessera::test
