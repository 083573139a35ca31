// One entry per operation (potrf_async, potrs_async, posv_async over MatrixView): each home of the
// matrices gives LAPACK's results and info through it, and the mistakes only a view can make (a
// matrix that is not square, operands in different homes or of different sizes) are refused.
#include <gtest/gtest.h>

#include <vector>

#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

FactorOptions on_cpus(Uplo uplo = Uplo::lower) {
  FactorOptions options;
  options.mode = Mode::cpu;
  options.uplo = uplo;
  return options;
}

// The matrix made indefinite at 0-based column j: its leading minor of order j + 1 fails.
template <class T>
void break_at(std::vector<T>& A, int ld, long long offset, int j) {
  A[offset + j + static_cast<long long>(j) * ld] = T(-1);
}

template <class T>
void host_arrays_in_both_triangles() {
  for (const Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const int n : {1, 31, 33, 97}) {
      SCOPED_TRACE(testing::Message() << "n = " << n << ", " << to_string(uplo));
      const int ld = n + 3, nrhs = 4;
      const std::vector<T> A = random_spd<T>(n, ld, 7 + n);
      const std::vector<T> B = random_matrix<T>(n, nrhs, ld, 11 + n);
      std::vector<T> F = A, X = B;
      ASSERT_EQ(potrf(runtime(), MatrixView<T>::host(n, n, F.data(), ld), on_cpus(uplo)), 0);
      EXPECT_LT(factor_backward_error(uplo, n, A, F, ld), kResidualThreshold);
      ASSERT_EQ(potrs(runtime(), MatrixView<T>::host(n, n, F.data(), ld), MatrixView<T>::host(n, nrhs, X.data(), ld),
                      on_cpus(uplo)),
                0);
      EXPECT_LT(solve_backward_error(n, nrhs, A, ld, X, B, ld), kResidualThreshold);
      std::vector<T> G = A, Y = B;
      ASSERT_EQ(posv(runtime(), MatrixView<T>::host(n, n, G.data(), ld), MatrixView<T>::host(n, nrhs, Y.data(), ld),
                     on_cpus(uplo)),
                0);
      EXPECT_LT(solve_backward_error(n, nrhs, A, ld, Y, B, ld), kResidualThreshold);
    }
}

TEST(MatrixView, HostArraysInBothTrianglesDouble) { host_arrays_in_both_triangles<double>(); }
TEST(MatrixView, HostArraysInBothTrianglesFloat) { host_arrays_in_both_triangles<float>(); }

TEST(MatrixView, HostArrayInfoIsTheFirstFailingMinor) {
  const int n = 41, ld = 41;
  for (const int j : {0, 16, 40}) {
    std::vector<double> A = random_spd<double>(n, ld, 3);
    break_at(A, ld, 0, j);
    std::vector<double> B = random_matrix<double>(n, 2, ld, 5);
    const std::vector<double> B0 = B;
    EXPECT_EQ(potrf(runtime(), MatrixView<double>::host(n, n, std::vector<double>(A).data(), ld), on_cpus()), j + 1);
    EXPECT_EQ(posv(runtime(), MatrixView<double>::host(n, n, A.data(), ld), MatrixView<double>::host(n, 2, B.data(), ld),
                   on_cpus()),
              j + 1);
    EXPECT_EQ(B, B0) << "LAPACK leaves B as it was when the factorization fails";
  }
}

TEST(MatrixView, TilesFactorSolveAndKeepBWhenTheFactorizationFails) {
  const int n = 70, nb = 16, nrhs = 3;
  const std::vector<double> A = random_spd<double>(n, n, 13);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 17);
  TileMatrix<double> tiles(runtime(), n, nb), rhs(runtime(), n, nrhs, nb, TileStructure::general);
  load_async(tiles, Uplo::lower, A.data(), n).wait();
  load_async(rhs, B.data(), n).wait();
  ASSERT_EQ(posv(runtime(), MatrixView<double>::of(tiles), MatrixView<double>::of(rhs), on_cpus()), 0);
  std::vector<double> X(B.size());
  store_async(rhs, X.data(), n).wait();
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, X, B, n), kResidualThreshold);

  std::vector<double> broken = A;
  break_at(broken, n, 0, 33);
  load_async(tiles, Uplo::lower, broken.data(), n).wait();
  load_async(rhs, B.data(), n).wait();
  EXPECT_EQ(posv(runtime(), MatrixView<double>::of(tiles), MatrixView<double>::of(rhs), on_cpus()), 34);
  store_async(rhs, X.data(), n).wait();
  EXPECT_EQ(X, B);
}

TEST(MatrixView, BatchesGiveEachMatrixItsOwnInfo) {
  const int n = 9, ld = 10, count = 6, nrhs = 2;
  const long long stride = static_cast<long long>(ld) * n;
  std::vector<double> A(stride * count), B(stride * count);
  for (int k = 0; k < count; ++k) {
    const std::vector<double> a = random_spd<double>(n, ld, 100 + k);
    std::copy(a.begin(), a.end(), A.begin() + k * stride);
  }
  break_at(A, ld, 3 * stride, 5);
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = 1.0 + static_cast<double>(i % 7);
  const std::vector<double> A0 = A, B0 = B;
  std::vector<int> info(count, -7);
  FactorOptions options = on_cpus();
  options.batch_chunk = 4;
  ASSERT_EQ(posv(runtime(), MatrixView<double>::host_batch(n, n, A.data(), ld, stride, count, info.data()),
                 MatrixView<double>::host_batch(n, nrhs, B.data(), ld, stride, count), options),
            0);
  for (int k = 0; k < count; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(info[k], k == 3 ? 6 : 0);
    const std::vector<double> a(A0.begin() + k * stride, A0.begin() + (k + 1) * stride);
    const std::vector<double> b(B0.begin() + k * stride, B0.begin() + (k + 1) * stride);
    const std::vector<double> x(B.begin() + k * stride, B.begin() + (k + 1) * stride);
    if (k == 3)
      EXPECT_EQ(x, b);
    else
      EXPECT_LT(solve_backward_error(n, nrhs, a, ld, x, b, ld), kResidualThreshold);
  }
}

TEST(MatrixView, VariableBatchesFactorEachMatrixAtItsOwnSize) {
  const std::vector<int> n = {1, 0, 12, 5}, ld = {1, 1, 13, 5};
  std::vector<long long> offsets;
  long long total = 0;
  for (std::size_t k = 0; k < n.size(); ++k) {
    offsets.push_back(total);
    total += static_cast<long long>(ld[k]) * n[k];
  }
  std::vector<float> A(total);
  for (std::size_t k = 0; k < n.size(); ++k) {
    const std::vector<float> a = random_spd<float>(n[k], ld[k], 40 + static_cast<unsigned>(k));
    std::copy(a.begin(), a.end(), A.begin() + offsets[k]);
  }
  break_at(A, ld[2], offsets[2], 11);
  const std::vector<float> A0 = A;
  std::vector<int> info(n.size(), -7);
  ASSERT_EQ(potrf(runtime(),
                  MatrixView<float>::host_variable_batch(n.data(), A.data(), offsets.data(), ld.data(),
                                                         static_cast<int>(n.size()), info.data()),
                  on_cpus(Uplo::upper)),
            0);
  EXPECT_EQ(info, (std::vector<int>{0, 0, 12, 0}));
  const std::vector<float> a(A0.begin() + offsets[3], A0.end()), f(A.begin() + offsets[3], A.end());
  EXPECT_LT(factor_backward_error(Uplo::upper, n[3], a, f, ld[3]), kResidualThreshold);
}

TEST(MatrixView, MistakesOnlyAViewCanMakeAreRefused) {
  std::vector<double> A = random_spd<double>(8, 8, 1), B(8 * 2, 1.0);
  const auto host = [](int rows, int cols, double* data) { return MatrixView<double>::host(rows, cols, data, 8); };
  EXPECT_THROW(potrf(runtime(), host(8, 7, A.data()), on_cpus()), InvalidArgument);
  EXPECT_THROW(potrs(runtime(), host(8, 8, A.data()), host(7, 2, B.data()), on_cpus()), InvalidArgument);
  EXPECT_THROW(posv(runtime(), host(8, 8, A.data()), MatrixView<double>::host_batch(8, 2, B.data(), 8, 16, 1),
                    on_cpus()),
               InvalidArgument);
  EXPECT_THROW(posv(runtime(), MatrixView<double>::host_batch(4, 4, A.data(), 4, 16, 4),
                    MatrixView<double>::host_batch(4, 2, B.data(), 4, 8, 2), on_cpus()),
               InvalidArgument);
  TileMatrix<double> tiles(runtime(), 8, 4);
  EXPECT_THROW(potrs(runtime(), MatrixView<double>::of(tiles), host(8, 2, B.data()), on_cpus()), InvalidArgument);
  // The LAPACK-layout form's checks still name its positions (lda is potrf's argument 4).
  try {
    potrf(runtime(), MatrixView<double>::host(8, 8, A.data(), 7), on_cpus());
    ADD_FAILURE() << "lda < n was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(error.position(), 4);
  }
}

TEST(MatrixView, ExplanationsFollowTheHomeOfTheMatrix) {
  TileMatrix<double> tiles(runtime(), 100, 24);
  const PlanExplanation of_tiles = explain_potrf(runtime(), MatrixView<double>::of(tiles), on_cpus());
  EXPECT_EQ(of_tiles.nb, 24);
  EXPECT_EQ(of_tiles.path, "tiles");
  std::vector<double> stack(10 * 16 * 16);
  const PlanExplanation of_small_batch =
      explain_potrf(runtime(), MatrixView<double>::host_batch(16, 16, stack.data(), 16, 256, 10), on_cpus());
  EXPECT_EQ(of_small_batch.path, "calling thread");
  EXPECT_EQ(of_small_batch.mode, Mode::cpu);
  const PlanExplanation of_batch =
      explain_potrf(runtime(), MatrixView<double>::host_batch(16, 16, stack.data(), 16, 256, 20000), on_cpus());
  EXPECT_EQ(of_batch.path, "batched chunks");
  EXPECT_EQ(of_batch.mode, Mode::cpu);
  const PlanExplanation of_array = explain_potrf<double>(runtime(), kOrderThatRunsTasks, on_cpus());
  EXPECT_EQ(of_array.nb, default_tile_size(runtime(), kOrderThatRunsTasks, Precision::double_real, Mode::cpu));
}

}  // namespace
}  // namespace tessera::test
