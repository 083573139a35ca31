// Batched mode through the runtime: every mode's result against LAPACKE, non-SPD members at known
// positions, strides larger than n*n, variable sizes including 0 and 1, the C API.
#include <gtest/gtest.h>
#include <lapacke.h>

#include "tessera/batched.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

namespace tessera::test {
namespace {

struct Batch {
  int n, lda, count;
  long long stride;
  std::vector<double> A;
};

Batch random_batch(int n, int lda, long long stride, int count, unsigned seed) {
  Batch b{n, lda, count, stride, std::vector<double>(static_cast<std::size_t>(stride) * count + lda * n, -3.0)};
  for (int k = 0; k < count; ++k) {
    const std::vector<double> M = random_spd<double>(n, lda, seed + k);
    std::copy(M.begin(), M.begin() + static_cast<long long>(lda) * n, b.A.begin() + k * stride);
  }
  return b;
}

class BatchedModes : public ::testing::TestWithParam<Mode> {};

TEST_P(BatchedModes, MatchesLapackeWithFailuresAtKnownPositions) {
  const Mode mode = GetParam();
  if (mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  for (int n : {1, 2, 5, 16, 31, 33, 64, 100}) {
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      const int lda = n + 3, count = 37;
      const long long stride = static_cast<long long>(lda) * n + 11;  // larger than one matrix
      Batch b = random_batch(n, lda, stride, count, 7u * n);
      const int bad[] = {0, 17, 36};
      const int bad_column = (n + 1) / 2;
      for (int k : bad) b.A[k * stride + (bad_column - 1) + static_cast<long long>(bad_column - 1) * lda] = -1.0;
      std::vector<double> reference = b.A;
      std::vector<int> info(count, -99);
      BatchOptions options;
      options.uplo = uplo;
      options.mode = mode;
      options.chunk = 8;
      potrf_batched(runtime(), n, b.A.data(), lda, stride, count, info.data(), options);
      for (int k = 0; k < count; ++k) {
        const int expected = LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo == Uplo::lower ? 'L' : 'U', n, reference.data() + k * stride, lda);
        ASSERT_EQ(info[k], expected) << "n=" << n << " matrix " << k;
        if (expected != 0) continue;
        for (int j = 0; j < n; ++j)
          for (int i = uplo == Uplo::lower ? j : 0; i < (uplo == Uplo::lower ? n : j + 1); ++i) {
            const double got = b.A[k * stride + i + static_cast<long long>(j) * lda];
            const double want = reference[k * stride + i + static_cast<long long>(j) * lda];
            ASSERT_NEAR(got, want, 1e-10 * (1 + std::abs(want))) << "n=" << n << " matrix " << k << " (" << i << "," << j << ")";
          }
      }
      // Bytes outside the referenced triangles (padding, gaps, other triangle) are untouched.
      for (int k = 0; k < count; ++k)
        for (long long e = 0; e < stride && k * stride + e < static_cast<long long>(b.A.size()); ++e) {
          const int i = static_cast<int>(e % lda), j = static_cast<int>(e / lda);
          const bool referenced = j < n && i < n && (uplo == Uplo::lower ? i >= j : i <= j);
          if (!referenced) ASSERT_EQ(b.A[k * stride + e], reference[k * stride + e]) << "n=" << n << " k=" << k << " e=" << e;
        }
    }
  }
}

TEST_P(BatchedModes, SolvesSkipFailedMatrices) {
  const Mode mode = GetParam();
  if (mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  const int n = 24, nrhs = 3, count = 50;
  Batch a = random_batch(n, n, static_cast<long long>(n) * n, count, 3);
  a.A[10 * n * n + 5 + 5 * n] = -50.0;  // matrix 10 fails at column 6
  const std::vector<double> A0 = a.A;
  std::vector<double> B = random_matrix<double>(n * nrhs, count, n * nrhs, 4);
  const std::vector<double> B0 = B;
  std::vector<int> info(count, -1);
  BatchOptions options;
  options.mode = mode;
  posv_batched(runtime(), n, nrhs, a.A.data(), n, static_cast<long long>(n) * n, B.data(), n, static_cast<long long>(n) * nrhs,
               count, info.data(), options);
  for (int k = 0; k < count; ++k) {
    if (k == 10) {
      EXPECT_EQ(info[k], 6);
      EXPECT_TRUE(std::equal(B.begin() + k * n * nrhs, B.begin() + (k + 1) * n * nrhs, B0.begin() + k * n * nrhs));
      continue;
    }
    ASSERT_EQ(info[k], 0);
    const std::vector<double> Ak(A0.begin() + k * n * n, A0.begin() + (k + 1) * n * n);
    const std::vector<double> Xk(B.begin() + k * n * nrhs, B.begin() + (k + 1) * n * nrhs);
    const std::vector<double> Bk(B0.begin() + k * n * nrhs, B0.begin() + (k + 1) * n * nrhs);
    EXPECT_LT(solve_backward_error(n, nrhs, Ak, n, Xk, Bk, n), kResidualThreshold) << "matrix " << k;
  }
}

TEST_P(BatchedModes, VariableSizesIncludingZeroAndOne) {
  const Mode mode = GetParam();
  if (mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  const std::vector<int> n = {0, 1, 5, 33, 2, 0, 64, 17, 1, 100, 8};
  const int count = static_cast<int>(n.size()), nrhs = 2;
  std::vector<int> lda(count), ldb(count);
  std::vector<long long> offsets(count), offsets_b(count);
  long long total = 0, total_b = 0;
  for (int k = 0; k < count; ++k) {
    lda[k] = n[k] + (k % 3);
    lda[k] = std::max(lda[k], 1);
    ldb[k] = std::max(n[k], 1);
    offsets[k] = total;
    offsets_b[k] = total_b;
    total += static_cast<long long>(lda[k]) * std::max(n[k], 1) + 4;
    total_b += static_cast<long long>(ldb[k]) * nrhs;
  }
  std::vector<double> A(total, 0.0), B(total_b, 0.0);
  for (int k = 0; k < count; ++k) {
    const std::vector<double> M = random_spd<double>(n[k], lda[k], 100u + k);
    std::copy(M.begin(), M.begin() + static_cast<long long>(lda[k]) * n[k], A.begin() + offsets[k]);
    const std::vector<double> R = random_matrix<double>(n[k], nrhs, ldb[k], 200u + k);
    std::copy(R.begin(), R.begin() + static_cast<long long>(ldb[k]) * nrhs, B.begin() + offsets_b[k]);
  }
  const std::vector<double> A0 = A, B0 = B;
  std::vector<int> info(count, -1);
  BatchOptions options;
  options.mode = mode;
  options.chunk = 4;
  posv_vbatched_async(runtime(), n.data(), nrhs, A.data(), offsets.data(), lda.data(), B.data(), offsets_b.data(), ldb.data(),
                      count, info.data(), options)
      .wait();
  for (int k = 0; k < count; ++k) {
    ASSERT_EQ(info[k], 0) << "matrix " << k;
    if (n[k] == 0) continue;
    std::vector<double> Ak(static_cast<std::size_t>(lda[k]) * n[k]), Xk(static_cast<std::size_t>(ldb[k]) * nrhs), Bk(Xk.size());
    std::copy(A0.begin() + offsets[k], A0.begin() + offsets[k] + Ak.size(), Ak.begin());
    std::copy(B.begin() + offsets_b[k], B.begin() + offsets_b[k] + Xk.size(), Xk.begin());
    std::copy(B0.begin() + offsets_b[k], B0.begin() + offsets_b[k] + Bk.size(), Bk.begin());
    EXPECT_LT(solve_backward_error(n[k], nrhs, Ak, lda[k], Xk, Bk, ldb[k]), kResidualThreshold) << "matrix " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, BatchedModes, ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(BatchedApi, FloatAndCApi) {
  const int n = 12, count = 20;
  std::vector<float> A(static_cast<std::size_t>(n) * n * count);
  for (int k = 0; k < count; ++k) {
    const std::vector<float> M = random_spd<float>(n, n, 300u + k);
    std::copy(M.begin(), M.end(), A.begin() + k * n * n);
  }
  std::vector<float> reference = A;
  std::vector<int> info(count, -1);
  ASSERT_EQ(tessera_spotrf_batched('U', n, A.data(), n, n * n, count, info.data()), 0);
  for (int k = 0; k < count; ++k) {
    ASSERT_EQ(info[k], 0);
    ASSERT_EQ(LAPACKE_spotrf(LAPACK_COL_MAJOR, 'U', n, reference.data() + k * n * n, n), 0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) ASSERT_NEAR(A[k * n * n + i + j * n], reference[k * n * n + i + j * n], 1e-4f);
  }
  std::vector<double> D(4, 1.0), E(2, 1.0);
  EXPECT_EQ(tessera_dpotrf_batched('X', 2, D.data(), 2, 4, 1, info.data()), -1);
  EXPECT_EQ(tessera_dpotrf_batched('L', 2, D.data(), 2, 3, 2, info.data()), -5);  // matrices would overlap
  EXPECT_EQ(tessera_dpotrf_batched('L', 2, D.data(), 2, 4, 1, nullptr), -7);
  EXPECT_EQ(tessera_dposv_batched('L', 2, 1, D.data(), 2, 4, E.data(), 1, 2, 1, info.data()), -8);
  EXPECT_EQ(tessera_dposv_batched('L', 2, 1, D.data(), 2, 4, E.data(), 2, 2, -1, info.data()), -10);
  EXPECT_EQ(tessera_dpotrf_batched('L', 0, nullptr, 1, 0, 5, info.data()), 0);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(info[k], 0);
}

TEST(BatchedApi, RejectsOverlappingVariableMatrices) {
  const int n[2] = {4, 4}, lda[2] = {4, 4};
  const long long offsets[2] = {0, 10};  // the second starts inside the first
  std::vector<double> A(64, 1.0);
  int info[2];
  EXPECT_THROW(potrf_vbatched_async(runtime(), n, A.data(), offsets, lda, 2, info), InvalidArgument);
}

// posv reads A while it writes B: a B sharing an element with an A is an invalid B (argument 7 of
// xPOSV_BATCHED), nothing touched, as the non-batched posv's -6. B in A's padding rows, or
// interleaved with the matrices in one array, shares nothing and is fine.
TEST(BatchedApi, RejectsRightHandSidesOverlappingMatrices) {
  const int n = 3, lda = 3, batch = 4;
  const long long stride = 2LL * n * n;  // [A_k | B_k] interleaved: B_k fills the gap after A_k
  std::vector<double> buffer(static_cast<std::size_t>(stride) * batch, 0.0);
  for (int k = 0; k < batch; ++k) {
    const std::vector<double> A = random_spd<double>(n, lda, 40u + k);
    std::copy(A.begin(), A.end(), buffer.begin() + k * stride);
    for (int i = 0; i < n * n; ++i) buffer[k * stride + n * n + i] = 1.0;
  }
  const std::vector<double> before = buffer;
  std::vector<int> info(batch, -9);
  // B_k starting one element before A_k ends: shares the last element of A_k.
  double* bad_b = buffer.data() + n * n - 1;
  EXPECT_EQ(tessera_dposv_batched('L', n, n, buffer.data(), lda, stride, bad_b, n, stride, batch, info.data()), -7);
  // Only B_1 (elements 37..45) over A_2 (36..44); B_0 and B_2 apart: found too.
  EXPECT_EQ(tessera_dposv_batched('L', n, n, buffer.data(), lda, stride, buffer.data() + 27, n, 10, 3, info.data()), -7);
  EXPECT_EQ(buffer, before);
  EXPECT_THROW(posv_batched_async(runtime(), n, n, buffer.data(), lda, stride, buffer.data() + stride, n, stride, 2,
                                  info.data()),
               InvalidArgument);  // B_0 is A_1
  std::vector<double> fresh = before;
  EXPECT_THROW(potrs_batched_async(runtime(), n, 1, fresh.data(), lda, stride, fresh.data() + 1, n, stride, batch),
               InvalidArgument);
  EXPECT_EQ(fresh, before);
  // Interleaved and apart: solved.
  buffer = before;
  ASSERT_EQ(tessera_dposv_batched('L', n, n, buffer.data(), lda, stride, buffer.data() + n * n, n, stride, batch,
                                  info.data()),
            0);
  for (int k = 0; k < batch; ++k) EXPECT_EQ(info[k], 0);

  // Variable sizes: the same rule.
  const int sizes[2] = {3, 3}, lds[2] = {3, 3};
  const long long offsets[2] = {0, 9}, offsets_b[2] = {5, 20};  // B_0 inside A_0
  std::vector<double> V(40, 1.0);
  EXPECT_THROW(posv_vbatched_async(runtime(), sizes, 1, V.data(), offsets, lds, V.data(), offsets_b, lds, 2,
                                   info.data()),
               InvalidArgument);
}

// An empty matrix holds no element: its offset may repeat a neighbour's (it was refused).
TEST(BatchedApi, EmptyVariableMatricesMayShareOffsets) {
  const int sizes[4] = {0, 3, 0, 2}, lds[4] = {1, 3, 1, 2};
  const long long offsets[4] = {0, 0, 9, 9};
  std::vector<double> A(13, 0.0);
  const std::vector<double> A1 = random_spd<double>(3, 3, 5), A3 = random_spd<double>(2, 2, 6);
  std::copy(A1.begin(), A1.end(), A.begin());
  std::copy(A3.begin(), A3.end(), A.begin() + 9);
  std::vector<int> info(4, -9);
  BatchOptions options;
  options.mode = Mode::cpu;
  options.chunk = 1;  // a chunk of an empty matrix alone too
  potrf_vbatched_async(runtime(), sizes, A.data(), offsets, lds, 4, info.data(), options).wait();
  EXPECT_EQ(info, std::vector<int>({0, 0, 0, 0}));
  EXPECT_NEAR(A[0] * A[0], A1[0], 1e-12);
}

}  // namespace
}  // namespace tessera::test
