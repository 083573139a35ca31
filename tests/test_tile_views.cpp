// Tile matrices that are views of a caller's column-major matrix (the tiles of the device API,
// tessera/device.hpp): every tile registered in place with the matrix's leading dimension, then
// factored and solved where it is. Here the matrix is in host memory, so the views' registration,
// the kernels on tiles whose leading dimension is not their height, and the in-place DAG run on
// every machine; in gpu and hybrid modes the tiles travel to the GPUs and back.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tile_access.hpp"

namespace tessera::test {
namespace {

using detail::kHostMemory;
using detail::TileAccess;

template <class T>
std::unique_ptr<TileMatrix<T>> symmetric_view(int n, int nb, std::vector<T>& A, int ld) {
  return TileAccess::view(runtime(), n, n, nb, TileStructure::symmetric_lower, A.data(), ld, kHostMemory);
}

FactorOptions options_for(Mode mode) {
  FactorOptions options;
  options.mode = mode;
  return options;
}

// Factors the lower triangle of A in place; returns info. The view is released before A is read.
template <class T>
int factor_in_place(int n, int nb, std::vector<T>& A, int ld, Mode mode) {
  const auto view = symmetric_view(n, nb, A, ld);
  return potrf_async(*view, options_for(mode)).wait();
}

class TileViews : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    if (GetParam() == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  }
};

template <class T>
void check_factor_in_place(int n, int nb, int extra_ld, Mode mode, unsigned seed) {
  const std::string name = "n=" + std::to_string(n) + " nb=" + std::to_string(nb) + " ld=n+" + std::to_string(extra_ld);
  const int ld = n + extra_ld;
  const std::vector<T> symmetric = random_spd<T>(n, ld, seed);
  std::vector<T> A = symmetric;
  // The strict upper triangle, which shares the diagonal tiles, is never read: NaN there.
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) A[i + static_cast<std::size_t>(j) * ld] = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> before = A;
  ASSERT_EQ(factor_in_place(n, nb, A, ld, mode), 0) << name;
  EXPECT_LT(factor_backward_error(Uplo::lower, n, symmetric, A, ld), 1.0) << name;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i)
      if (i < j || i >= n) {
        const std::size_t e = i + static_cast<std::size_t>(j) * ld;
        ASSERT_EQ(std::memcmp(&A[e], &before[e], sizeof(T)), 0) << name << ": (" << i << ", " << j << ") changed";
      }
}

TEST_P(TileViews, FactorInPlace) {
  struct Case {
    int n, nb, extra_ld;
  };
  unsigned seed = 1;
  for (const Case& c : {Case{1, 64, 0}, Case{63, 64, 5}, Case{65, 64, 1}, Case{997, 128, 3}, Case{1000, 48, 7}}) {
    check_factor_in_place<double>(c.n, c.nb, c.extra_ld, GetParam(), seed++);
    check_factor_in_place<float>(c.n, c.nb, c.extra_ld, GetParam(), seed++);
  }
}

TEST_P(TileViews, NotPositiveDefiniteGivesGlobalColumn) {
  const int n = 70, nb = 16, ld = 73;
  for (int column : {1, 16, 17, 33, 70}) {
    std::vector<double> A = random_spd<double>(n, ld, 60u + column);
    A[(column - 1) + static_cast<std::size_t>(column - 1) * ld] = -100;
    EXPECT_EQ(factor_in_place(n, nb, A, ld, GetParam()), column) << "column " << column;
  }
}

TEST_P(TileViews, SolveInPlace) {
  const int n = 300, nb = 64, lda = 307, nrhs = 3, ldb = 302;
  const std::vector<double> A = random_spd<double>(n, lda, 70);
  const std::vector<double> B = random_matrix<double>(n, nrhs, ldb, 71);
  std::vector<double> L = A, X = B;
  ASSERT_EQ(factor_in_place(n, nb, L, lda, GetParam()), 0);
  {
    const auto factor = symmetric_view(n, nb, L, lda);
    const auto rhs = TileAccess::view(runtime(), n, nrhs, nb, TileStructure::general, X.data(), ldb, kHostMemory);
    ASSERT_EQ(potrs_async(*factor, *rhs, options_for(GetParam())).wait(), 0);
  }
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, X, B, ldb), kResidualThreshold);
  for (int r = 0; r < nrhs; ++r)
    for (int i = n; i < ldb; ++i) ASSERT_EQ(X[i + static_cast<std::size_t>(r) * ldb], B[i + static_cast<std::size_t>(r) * ldb]);
}

TEST(TileViewsArguments, RefusedBeforeRegistration) {
  std::vector<double> A(16, 1.0);
  EXPECT_THROW(TileAccess::view(runtime(), 4, 4, 2, TileStructure::symmetric_lower, A.data(), 3, kHostMemory),
               InvalidArgument);
  EXPECT_THROW(TileAccess::view<double>(runtime(), 4, 4, 2, TileStructure::symmetric_lower, nullptr, 4, kHostMemory),
               InvalidArgument);
  EXPECT_THROW(TileAccess::view(runtime(), 4, 4, 0, TileStructure::symmetric_lower, A.data(), 4, kHostMemory),
               InvalidArgument);
  if (!have_gpu())
    EXPECT_THROW(TileAccess::view(runtime(), 4, 4, 2, TileStructure::symmetric_lower, A.data(), 4, 0), RuntimeError);
}

INSTANTIATE_TEST_SUITE_P(AllModes, TileViews, ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace tessera::test
