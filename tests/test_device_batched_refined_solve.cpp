// The mixed-precision solve of a strided batch in GPU memory (device::posv_refined_batched): per
// matrix, LAPACK's DSPOSV/ZCPOSV INFO and ITER, the solution's backward error in double precision,
// A_k unchanged where the refinement converged (its other triangle, NaN, never read) and holding the
// double-precision factor where it fell back, B never written; matrices that fall back in the same
// batch as matrices that converge. Both paths are asked for (detail::BatchedRefinedPath): the
// refinement, and double precision at once (ITER -1), which the plan takes where single precision
// cannot be the faster; the public function takes the plan's. The argument checks run without a
// GPU; the rest skips without one.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "batched_refined_solve.hpp"
#include "plan.hpp"
#include "tessera/device.hpp"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "cuda/kernel_test_support.hpp"
#endif

namespace tessera::test {
namespace {

using zdouble = std::complex<double>;

TEST(DeviceBatchedRefinedSolveArguments, RefusedWithTheirPositions) {
  // Stands for device memory: never read or written, since every call here is refused.
  std::vector<double> storage(256, 1.0);
  double* A = storage.data();
  double* B = storage.data() + 128;
  double* X = storage.data() + 192;
  const Uplo L = Uplo::lower;
  expect_refused_at(2, "n < 0", [&] {
    device::posv_refined_batched(L, -1, 1, A, 4, 16, B, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(3, "nrhs < 0", [&] {
    device::posv_refined_batched(L, 4, -1, A, 4, 16, B, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(5, "lda < n", [&] {
    device::posv_refined_batched(L, 4, 1, A, 3, 16, B, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(6, "strideA < lda n", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 15, B, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(8, "ldb < n", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 3, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(9, "strideB < ldb nrhs", [&] {
    device::posv_refined_batched(L, 4, 2, A, 4, 16, B, 4, 7, X, 4, 8, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(11, "ldx < n", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 4, 4, X, 3, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(12, "strideX < ldx nrhs", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 4, 4, X, 4, 3, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(13, "batch < 0", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 4, 4, X, 4, 4, -1, nullptr, nullptr, nullptr);
  });
  expect_refused_at(4, "null A", [&] {
    device::posv_refined_batched<double>(L, 4, 1, nullptr, 4, 16, B, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(7, "null B", [&] {
    device::posv_refined_batched<double>(L, 4, 1, A, 4, 16, nullptr, 4, 4, X, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(10, "null X", [&] {
    device::posv_refined_batched<double>(L, 4, 1, A, 4, 16, B, 4, 4, nullptr, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(10, "X inside A", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 4, 4, A + 20, 4, 4, 2, nullptr, nullptr, nullptr);
  });
  expect_refused_at(10, "X is B", [&] {
    device::posv_refined_batched(L, 4, 1, A, 4, 16, B, 4, 4, B, 4, 4, 2, nullptr, nullptr, nullptr);
  });
}

#ifdef TESSERA_HAVE_CUDA

// LAPACK's test on the host: ||A X - B||_1 / (||A||_1 ||X||_1 n eps) of one system, A Hermitian in
// full storage (n x n, ld n), X and B n x nrhs (ld n).
double backward_error(int n, int nrhs, const std::vector<zdouble>& A, const zdouble* X, const zdouble* B) {
  double na = 0, nr = 0, nx = 0;
  for (int j = 0; j < n; ++j) {
    double a = 0;
    for (int i = 0; i < n; ++i) a += std::abs(A[at(i, j, n)]);
    na = std::max(na, a);
  }
  for (int r = 0; r < nrhs; ++r) {
    double res = 0, x = 0;
    for (int i = 0; i < n; ++i) {
      zdouble ax = 0;
      for (int l = 0; l < n; ++l) ax += A[at(i, l, n)] * X[at(l, r, n)];
      res += std::abs(ax - B[at(i, r, n)]);
      x += std::abs(X[at(i, r, n)]);
    }
    nr = std::isnan(res) ? res : std::max(nr, res);
    nx = std::max(nx, x);
  }
  return nr / (na * std::max(nx, 1e-300) * n * std::numeric_limits<double>::epsilon());
}

// A batch laid out with padding: matrix k's A at k * strideA (ld lda), B_k and X_k at k * strideB
// (ld ldb); each A_k's triangle opposite `uplo` NaN.
template <class T>
struct Batch {
  int n, nrhs, lda, ldb, batch;
  long long strideA, strideB;
  std::vector<T> A, B;
  std::vector<std::vector<zdouble>> full;  // each matrix in full, for the backward errors

  Batch(int n_, int nrhs_, int batch_, int pad) : n(n_), nrhs(nrhs_), lda(n_ + pad), ldb(n_ + pad), batch(batch_) {
    strideA = static_cast<long long>(lda) * n + 3 * pad;
    strideB = static_cast<long long>(ldb) * nrhs + pad;
    A.assign(static_cast<std::size_t>(strideA) * batch, T(-7));
    B.assign(static_cast<std::size_t>(strideB) * batch, T(-7));
    full.assign(batch, std::vector<zdouble>(static_cast<std::size_t>(n) * n));
  }
  T& a(int k, int i, int j) { return A[k * strideA + at(i, j, lda)]; }
  T& b(int k, int i, int j) { return B[k * strideB + at(i, j, ldb)]; }
  // Matrix k := M (full, Hermitian, n x n ld n) stored in its triangle uplo, the other NaN.
  void set(int k, Uplo uplo, const std::vector<zdouble>& M) {
    full[k] = M;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool stored = uplo == Uplo::lower ? i >= j : i <= j;
        if constexpr (std::is_same_v<T, double>)
          a(k, i, j) = stored ? M[at(i, j, n)].real() : std::numeric_limits<double>::quiet_NaN();
        else
          a(k, i, j) = stored ? M[at(i, j, n)] : T(std::numeric_limits<double>::quiet_NaN(), 0.0);
      }
  }
  void set_rhs(int k, unsigned seed, double scale = 1.0) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int j = 0; j < nrhs; ++j)
      for (int i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, double>)
          b(k, i, j) = scale * dist(gen);
        else
          b(k, i, j) = scale * T(dist(gen), dist(gen));
      }
  }
};

// A random Hermitian (symmetric for real T) positive definite matrix in full storage: G G^H / n + I.
template <class T>
std::vector<zdouble> random_positive_definite(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  constexpr bool complex = !std::is_same_v<T, double>;
  std::vector<zdouble> G(static_cast<std::size_t>(n) * n), M(static_cast<std::size_t>(n) * n);
  for (zdouble& g : G) g = complex ? zdouble(dist(gen), dist(gen)) : zdouble(dist(gen), 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      zdouble s = i == j ? 1.0 : 0.0;
      for (int l = 0; l < n; ++l) s += G[at(i, l, n)] * std::conj(G[at(j, l, n)]) / double(n);
      M[at(i, j, n)] = s;
    }
  return M;
}

struct Result {
  int failed;
  std::vector<int> info, iter;
  std::vector<double> errors;  // per matrix
  std::vector<bool> a_unchanged;
  std::vector<bool> x_untouched;  // X_k as it was before the call (all -5)
  std::vector<double> A;  // real batches: A after the call
};

using detail::BatchedRefinedPath;

template <class T>
Result solve(Batch<T>& batch, Uplo uplo, BatchedRefinedPath path = BatchedRefinedPath::refine_in_single) {
  const int ldx = batch.ldb;
  const long long strideX = batch.strideB;
  DeviceBuffer<T> dA(batch.A), dB(batch.B), dX(std::vector<T>(batch.B.size(), T(-5)));
  Result r;
  r.info.assign(batch.batch, -100);
  r.iter.assign(batch.batch, -100);
  r.failed = detail::posv_refined_batched<T>(path, uplo, batch.n, batch.nrhs, dA.get(), batch.lda, batch.strideA,
                                             dB.get(), batch.ldb, batch.strideB, dX.get(), ldx, strideX, batch.batch,
                                             r.info.data(), r.iter.data(), nullptr);
  const std::vector<T> A = dA.to_host(), X = dX.to_host(), B = dB.to_host();
  EXPECT_EQ(std::memcmp(B.data(), batch.B.data(), B.size() * sizeof(T)), 0) << "B was written";
  for (int k = 0; k < batch.batch; ++k) {
    std::vector<zdouble> x(static_cast<std::size_t>(batch.n) * batch.nrhs), b(x.size());
    for (int j = 0; j < batch.nrhs; ++j)
      for (int i = 0; i < batch.n; ++i) {
        x[at(i, j, batch.n)] = zdouble(X[k * strideX + at(i, j, ldx)]);
        b[at(i, j, batch.n)] = zdouble(batch.b(k, i, j));
      }
    r.errors.push_back(batch.nrhs ? backward_error(batch.n, batch.nrhs, batch.full[k], x.data(), b.data()) : 0.0);
    bool untouched = true;
    for (const zdouble& v : x) untouched = untouched && v == zdouble(-5);
    r.x_untouched.push_back(untouched);
    r.a_unchanged.push_back(std::memcmp(A.data() + k * batch.strideA, batch.A.data() + k * batch.strideA,
                                        sizeof(T) * (static_cast<std::size_t>(batch.lda) * (batch.n - 1) + batch.n)) ==
                            0);
  }
  if constexpr (std::is_same_v<T, double>) r.A = A;
  return r;
}

template <class T>
void expect_every_matrix_converges(int n, int nrhs, int count, int pad) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    SCOPED_TRACE(testing::Message() << "n=" << n << " nrhs=" << nrhs << " batch=" << count << " " << to_string(uplo));
    Batch<T> batch(n, nrhs, count, pad);
    for (int k = 0; k < count; ++k) {
      batch.set(k, uplo, random_positive_definite<T>(n, 100 + k));
      batch.set_rhs(k, 200 + k);
    }
    const Result r = solve(batch, uplo);
    EXPECT_EQ(r.failed, 0);
    for (int k = 0; k < count; ++k) {
      EXPECT_EQ(r.info[k], 0) << "k=" << k;
      EXPECT_GE(r.iter[k], 0) << "k=" << k;
      EXPECT_LE(r.iter[k], 10) << "k=" << k;
      EXPECT_LT(r.errors[k], kResidualThreshold) << "k=" << k;
      EXPECT_TRUE(r.a_unchanged[k]) << "k=" << k;
    }
  }
}

TEST(DeviceBatchedRefinedSolve, EveryMatrixConvergesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  // n = 1, around the batched kernels' 32 and the warp's multiples, a prime, a larger order.
  for (int n : {1, 2, 31, 33, 64, 97, 200}) {
    expect_every_matrix_converges<double>(n, 1, 37, 3);
    expect_every_matrix_converges<double>(n, 3, 5, 0);
  }
}

TEST(DeviceBatchedRefinedSolve, ComplexMatricesConvergeGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (int n : {1, 17, 64, 131}) {
    expect_every_matrix_converges<zdouble>(n, 1, 9, 2);
    expect_every_matrix_converges<zdouble>(n, 2, 3, 0);
  }
}

// One batch of order 10: matrices that converge beside one too ill-conditioned for single precision
// (Hilbert's, condition about 1.6e13: ITER -3 or -31), one not positive definite at column 6
// (INFO 6, ITER -3, X not written), one whose right-hand side is beyond single precision's range (ITER -2). The
// ones that fell back hold the double-precision factor and (where positive definite) a solution as
// accurate as dposv's; the others are untouched.
TEST(DeviceBatchedRefinedSolve, MatricesThatFallBackBesideOnesThatConvergeGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 10, count = 6;
  std::vector<zdouble> hilbert(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) hilbert[at(i, j, n)] = 1.0 / (i + j + 1);
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    SCOPED_TRACE(to_string(uplo));
    Batch<double> batch(n, 2, count, 1);
    for (int k = 0; k < count; ++k) {
      batch.set(k, uplo, random_positive_definite<double>(n, 300 + k));
      batch.set_rhs(k, 400 + k);
    }
    batch.set(1, uplo, hilbert);
    std::vector<zdouble> not_positive = random_positive_definite<double>(n, 7);
    not_positive[at(5, 5, n)] = -1;
    batch.set(3, uplo, not_positive);
    batch.set_rhs(4, 9, 1e40);
    const Result r = solve(batch, uplo);
    EXPECT_EQ(r.failed, 1);
    for (int k : {0, 2, 5}) {
      EXPECT_EQ(r.info[k], 0);
      EXPECT_GE(r.iter[k], 0);
      EXPECT_TRUE(r.a_unchanged[k]);
      EXPECT_LT(r.errors[k], kResidualThreshold);
    }
    EXPECT_EQ(r.info[1], 0);
    EXPECT_TRUE(r.iter[1] == -3 || r.iter[1] == -31) << r.iter[1];
    EXPECT_LT(r.errors[1], kResidualThreshold);
    const double l21 =
        uplo == Uplo::lower ? r.A[batch.strideA + at(1, 0, batch.lda)] : r.A[batch.strideA + at(0, 1, batch.lda)];
    EXPECT_NEAR(r.A[batch.strideA], 1.0, 1e-15);
    EXPECT_NEAR(l21, 0.5, 1e-15) << "A_1 must hold the double-precision factor";
    EXPECT_EQ(r.info[3], 6);
    EXPECT_EQ(r.iter[3], -3);
    EXPECT_TRUE(r.x_untouched[3]) << "X written although A is not positive definite";
    EXPECT_EQ(r.info[4], 0);
    EXPECT_EQ(r.iter[4], -2);
    EXPECT_LT(r.errors[4], kResidualThreshold);
  }
}

// SPD in double precision, singular once rounded to single (1 - 1e-9 rounds to 1): ITER -3.
TEST(DeviceBatchedRefinedSolve, SingularInSinglePrecisionGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::vector<zdouble> M = {1, 1 - 1e-9, 1 - 1e-9, 1};
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    Batch<double> batch(2, 1, 3, 0);
    for (int k = 0; k < 3; ++k) {
      batch.set(k, uplo, k == 1 ? M : random_positive_definite<double>(2, k));
      batch.set_rhs(k, 50 + k);
    }
    const Result r = solve(batch, uplo);
    EXPECT_EQ(r.iter[1], -3);
    EXPECT_GE(r.iter[0], 0);
    EXPECT_GE(r.iter[2], 0);
    for (int k = 0; k < 3; ++k) EXPECT_LT(r.errors[k], kResidualThreshold) << "k=" << k;
  }
}

// No right-hand sides: each matrix is factored in single precision only to say whether it can be
// (ITER 0, or the fallback's INFO); nothing to solve. Empty batches return at once.
TEST(DeviceBatchedRefinedSolve, NoRightHandSidesAndEmptyBatchesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  Batch<double> batch(40, 0, 3, 0);
  std::vector<zdouble> not_positive = random_positive_definite<double>(40, 3);
  not_positive[at(39, 39, 40)] = -2;
  for (int k = 0; k < 3; ++k)
    batch.set(k, Uplo::lower, k == 2 ? not_positive : random_positive_definite<double>(40, k));
  const Result r = solve(batch, Uplo::lower);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.iter[0], 0);
  EXPECT_EQ(r.iter[1], 0);
  EXPECT_EQ(r.info[2], 40);
  EXPECT_EQ(r.iter[2], -3);
  int info = -1, iter = -1;
  EXPECT_EQ(device::posv_refined_batched<double>(Uplo::lower, 0, 1, nullptr, 1, 0, nullptr, 1, 1, nullptr, 1, 1, 1,
                                                 &info, &iter, nullptr),
            0);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(iter, 0);
}

// Double precision at once: every matrix factored and solved as dposv would, ITER -1, A_k holding
// its factor; the matrix that is not positive definite keeps its X_k unwritten.
TEST(DeviceBatchedRefinedSolve, DoublePrecisionAtOnceGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (int n : {1, 31, 33, 97}) {
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " " << to_string(uplo));
      const int count = 7;
      Batch<double> batch(n, 2, count, 1);
      for (int k = 0; k < count; ++k) {
        batch.set(k, uplo, random_positive_definite<double>(n, 500 + k));
        batch.set_rhs(k, 600 + k);
      }
      std::vector<zdouble> not_positive = random_positive_definite<double>(n, 11);
      not_positive[at(n - 1, n - 1, n)] = -1;
      batch.set(2, uplo, not_positive);
      const Result r = solve(batch, uplo, BatchedRefinedPath::double_at_once);
      EXPECT_EQ(r.failed, 1);
      for (int k = 0; k < count; ++k) {
        EXPECT_EQ(r.iter[k], -1) << "k=" << k;
        if (k == 2) continue;  // at n = 1 its factorization stops before writing anything
        EXPECT_FALSE(r.a_unchanged[k]) << "A_k must hold its factor, k=" << k;
        EXPECT_EQ(r.info[k], 0) << "k=" << k;
        EXPECT_LT(r.errors[k], kResidualThreshold) << "k=" << k;
      }
      EXPECT_EQ(r.info[2], n);
      EXPECT_TRUE(r.x_untouched[2]);
    }
  }
  Batch<zdouble> complex_batch(17, 1, 3, 0);
  for (int k = 0; k < 3; ++k) {
    complex_batch.set(k, Uplo::lower, random_positive_definite<zdouble>(17, 700 + k));
    complex_batch.set_rhs(k, 800 + k);
  }
  const Result r = solve(complex_batch, Uplo::lower, BatchedRefinedPath::double_at_once);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(r.iter[k], -1);
    EXPECT_LT(r.errors[k], kResidualThreshold);
  }
}

// The public function takes the path the plan chooses for this GPU from its single-to-double ratio.
TEST(DeviceBatchedRefinedSolve, PublicFunctionTakesThePlansPathGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  int ratio = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, 0), cudaSuccess);
  const bool refines = detail::batched_refinement_in_single(ratio);
  EXPECT_EQ(detail::batched_refined_path() == BatchedRefinedPath::refine_in_single, refines) << "ratio " << ratio;
  const int n = 24, count = 5;
  Batch<double> batch(n, 1, count, 0);
  for (int k = 0; k < count; ++k) {
    batch.set(k, Uplo::lower, random_positive_definite<double>(n, 900 + k));
    batch.set_rhs(k, 950 + k);
  }
  DeviceBuffer<double> dA(batch.A), dB(batch.B), dX(std::vector<double>(batch.B.size(), 0.0));
  std::vector<int> info(count, -100), iter(count, -100);
  EXPECT_EQ(device::posv_refined_batched<double>(Uplo::lower, n, 1, dA.get(), batch.lda, batch.strideA, dB.get(),
                                                 batch.ldb, batch.strideB, dX.get(), batch.ldb, batch.strideB, count,
                                                 info.data(), iter.data(), nullptr),
            0);
  for (int k = 0; k < count; ++k) {
    EXPECT_EQ(info[k], 0);
    if (refines)
      EXPECT_GE(iter[k], 0) << "ratio " << ratio;
    else
      EXPECT_EQ(iter[k], -1) << "ratio " << ratio;
  }
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera::test
