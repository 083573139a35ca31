// Mixed-precision solves (tessera/refinement.hpp, tessera_dsposv, tessera_zcposv; ZCPOSV in GPU
// memory too: device::posv_refined, tessera_zcposv_device) against LAPACK's DSPOSV and ZCPOSV on
// the same input: ITER's meaning (converged with A unchanged, or the reason
// for the double-precision factorization, which A then holds), INFO, the solution's backward error
// in double precision, B never written; odd sizes on the calling thread and through the runtime's
// tasks, both triangles, padded leading dimensions; the C API's argument positions.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <complex>
#include <random>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/refinement.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cstring>

#include "cuda/kernel_test_support.hpp"
#endif

namespace tessera::test {
namespace {

using zdouble = std::complex<double>;

double random_part(std::mt19937& gen) { return std::uniform_real_distribution<double>(-1.0, 1.0)(gen); }
template <class T>
T random_value(std::mt19937& gen) {
  if constexpr (std::is_same_v<T, zdouble>) {
    const double re = random_part(gen);
    return {re, random_part(gen)};
  } else {
    return random_part(gen);
  }
}
double conj_of(double x) { return x; }
zdouble conj_of(const zdouble& x) { return std::conj(x); }
double magnitude(double x) { return std::abs(x); }
double magnitude(const zdouble& x) { return std::abs(x); }

// G G^H / n + I (both triangles; padding rows hold -7): well conditioned, so the refinement converges.
template <class T>
std::vector<T> well_conditioned(int n, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<T> G(static_cast<std::size_t>(n) * n);
  for (T& g : G) g = random_value<T>(gen);
  std::vector<T> A(static_cast<std::size_t>(ld) * std::max(n, 1), T(-7));
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      T s = i == j ? T(1) : T(0);
      for (int k = 0; k < n; ++k) s += G[at(i, k, n)] * conj_of(G[at(j, k, n)]) / double(n);
      A[at(i, j, ld)] = s;
      A[at(j, i, ld)] = conj_of(s);
    }
  return A;
}

template <class T>
std::vector<T> random_rhs(int n, int nrhs, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<T> B(static_cast<std::size_t>(ld) * std::max(nrhs, 1), T(-7));
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) B[at(i, j, ld)] = random_value<T>(gen);
  return B;
}

// ||A X - B||_inf / (||A||_inf ||X||_inf + ||B||_inf) / (n eps) over the columns, A Hermitian
// from its triangle uplo (the other triangle unread).
template <class T>
double solve_error(char uplo, int n, int nrhs, const std::vector<T>& A, int lda, const std::vector<T>& X, int ldx,
                   const std::vector<T>& B, int ldb) {
  const auto a = [&](int i, int j) {
    const bool stored = uplo == 'L' ? i >= j : i <= j;
    return stored ? A[at(i, j, lda)] : conj_of(A[at(j, i, lda)]);
  };
  double a_norm = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) row += magnitude(i == j ? T(std::real(a(i, i))) : a(i, j));
    a_norm = std::max(a_norm, row);
  }
  double worst = 0;
  for (int r = 0; r < nrhs; ++r) {
    double x_norm = 0, b_norm = 0, r_norm = 0;
    for (int i = 0; i < n; ++i) {
      T s = -B[at(i, r, ldb)];
      for (int j = 0; j < n; ++j) s += (i == j ? T(std::real(a(i, i))) : a(i, j)) * X[at(j, r, ldx)];
      r_norm = std::max(r_norm, magnitude(s));
      x_norm = std::max(x_norm, magnitude(X[at(i, r, ldx)]));
      b_norm = std::max(b_norm, magnitude(B[at(i, r, ldb)]));
    }
    worst = std::max(worst, r_norm / (a_norm * x_norm + b_norm) / (n * DBL_EPSILON));
  }
  return worst;
}

// LAPACK's DSPOSV or ZCPOSV on copies: {info, iter}.
std::pair<int, int> lapack_refined(char uplo, int n, int nrhs, std::vector<double> A, int lda, std::vector<double> B,
                                   int ldb) {
  std::vector<double> X(static_cast<std::size_t>(std::max(n, 1)) * std::max(nrhs, 1));
  lapack_int iter = 0;
  const lapack_int info = LAPACKE_dsposv(LAPACK_COL_MAJOR, uplo, n, nrhs, A.data(), lda, B.data(), ldb, X.data(),
                                         std::max(n, 1), &iter);
  return {info, iter};
}
std::pair<int, int> lapack_refined(char uplo, int n, int nrhs, std::vector<zdouble> A, int lda,
                                   std::vector<zdouble> B, int ldb) {
  std::vector<zdouble> X(static_cast<std::size_t>(std::max(n, 1)) * std::max(nrhs, 1));
  lapack_int iter = 0;
  const lapack_int info = LAPACKE_zcposv(
      LAPACK_COL_MAJOR, uplo, n, nrhs, reinterpret_cast<lapack_complex_double*>(A.data()), lda,
      reinterpret_cast<lapack_complex_double*>(B.data()), ldb, reinterpret_cast<lapack_complex_double*>(X.data()),
      std::max(n, 1), &iter);
  return {info, iter};
}

// The same through LAPACKE's _work forms, which skip LAPACKE's NaN checks of the input (the plain
// forms refuse a NaN as a bad argument before LAPACK runs): LAPACK's own ITER.
int lapack_iter_unchecked(char uplo, int n, int nrhs, std::vector<double> A, int lda, std::vector<double> B, int ldb) {
  std::vector<double> X(static_cast<std::size_t>(n) * nrhs), work(static_cast<std::size_t>(n) * nrhs);
  std::vector<float> swork(static_cast<std::size_t>(n) * (n + nrhs));
  lapack_int iter = 0;
  LAPACKE_dsposv_work(LAPACK_COL_MAJOR, uplo, n, nrhs, A.data(), lda, B.data(), ldb, X.data(), n, work.data(),
                      swork.data(), &iter);
  return iter;
}
int lapack_iter_unchecked(char uplo, int n, int nrhs, std::vector<zdouble> A, int lda, std::vector<zdouble> B, int ldb) {
  std::vector<zdouble> X(static_cast<std::size_t>(n) * nrhs), work(static_cast<std::size_t>(n) * nrhs);
  std::vector<std::complex<float>> swork(static_cast<std::size_t>(n) * (n + nrhs));
  std::vector<double> rwork(n);
  lapack_int iter = 0;
  LAPACKE_zcposv_work(LAPACK_COL_MAJOR, uplo, n, nrhs, reinterpret_cast<lapack_complex_double*>(A.data()), lda,
                      reinterpret_cast<lapack_complex_double*>(B.data()), ldb,
                      reinterpret_cast<lapack_complex_double*>(X.data()), n,
                      reinterpret_cast<lapack_complex_double*>(work.data()),
                      reinterpret_cast<lapack_complex_float*>(swork.data()), rwork.data(), &iter);
  return iter;
}

int c_refined(char uplo, int n, int nrhs, double* A, int lda, const double* B, int ldb, double* X, int ldx, int* iter) {
  return tessera_dsposv(uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter);
}
int c_refined(char uplo, int n, int nrhs, zdouble* A, int lda, const zdouble* B, int ldb, zdouble* X, int ldx,
              int* iter) {
  return tessera_zcposv(uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter);
}

FactorOptions options_of(char uplo, Refinement refinement = Refinement::lapack) {
  FactorOptions options;
  options.uplo = uplo == 'U' ? Uplo::upper : Uplo::lower;
  options.mode = Mode::cpu;
  options.refinement = refinement;
  return options;
}

// One solve through the C++ API: {info, iter}; A and X updated.
template <class T>
RefinedSolve refined(char uplo, int n, int nrhs, std::vector<T>& A, int lda, const std::vector<T>& B, int ldb,
                     std::vector<T>& X, int ldx, Refinement refinement = Refinement::lapack) {
  return posv_refined(runtime(), MatrixView<T>::host(n, n, A.data(), lda),
                      MatrixView<T>::host(n, nrhs, const_cast<T*>(B.data()), ldb),
                      MatrixView<T>::host(n, nrhs, X.data(), ldx), options_of(uplo, refinement));
}

template <class T>
class RefinedSolveTest : public ::testing::Test {};
using Scalars = ::testing::Types<double, zdouble>;
TYPED_TEST_SUITE(RefinedSolveTest, Scalars);

// Converged: iter >= 0 as LAPACK's, A and B unchanged, X as accurate as a double-precision solve.
// Orders on the calling thread and, from 400, through the runtime's tasks (two CPU workers).
TYPED_TEST(RefinedSolveTest, WellConditionedConvergesWithAUnchanged) {
  using T = TypeParam;
  unsigned seed = 1;
  for (int n : {1, 2, 17, 96, 97, 401, 613})
    for (char uplo : {'L', 'U'})
      for (int nrhs : {1, 3}) {
        const int lda = n + 3, ldb = n + 1, ldx = n + 2;
        const std::vector<T> A0 = well_conditioned<T>(n, lda, seed++);
        const std::vector<T> B = random_rhs<T>(n, nrhs, ldb, seed++);
        std::vector<T> A = A0, X(static_cast<std::size_t>(ldx) * nrhs, T(-5));
        const RefinedSolve result = refined(uplo, n, nrhs, A, lda, B, ldb, X, ldx);
        const auto [lapack_info, lapack_iter] = lapack_refined(uplo, n, nrhs, A0, lda, B, ldb);
        SCOPED_TRACE(testing::Message() << "n=" << n << " uplo=" << uplo << " nrhs=" << nrhs);
        EXPECT_EQ(result.info, 0);
        EXPECT_EQ(lapack_info, 0);
        // A well-conditioned matrix needs a few iterations. (LAPACK's own run is not held to it:
        // for complex matrices of order 1 its residual can stall just above the test's bound, and
        // it falls back with -31, rounding that differs from one BLAS to another.)
        EXPECT_GE(result.iter, 0);
        EXPECT_LE(result.iter, 5);
        if (n > 1) EXPECT_GE(lapack_iter, 0);
        EXPECT_EQ(A, A0) << "A must be unchanged when the refinement converged";
        EXPECT_LT(solve_error(uplo, n, nrhs, A0, lda, X, ldx, B, ldb), kResidualThreshold);
        for (int j = 0; j < nrhs; ++j)
          for (int i = n; i < ldx; ++i) ASSERT_EQ(X[at(i, j, ldx)], T(-5)) << "X's padding written";
      }
}

// Symmetric positive definite in double precision, singular once rounded to single: 1 - 1e-9
// rounds to 1, so the single-precision factorization fails at its second pivot (ITER -3) and A
// holds the double-precision factor.
TYPED_TEST(RefinedSolveTest, SingularInSinglePrecisionFactorsInDouble) {
  using T = TypeParam;
  for (char uplo : {'L', 'U'}) {
    const std::vector<T> A0 = {T(1), T(1 - 1e-9), T(1 - 1e-9), T(1)};
    const std::vector<T> B = {T(1), T(-1)};
    std::vector<T> A = A0, X(2);
    const RefinedSolve result = refined(uplo, 2, 1, A, 2, B, 2, X, 2);
    EXPECT_EQ(result.info, 0);
    EXPECT_EQ(result.iter, -3);
    EXPECT_EQ(lapack_refined(uplo, 2, 1, A0, 2, B, 2), std::make_pair(0, -3));
    const int stored = uplo == 'L' ? 1 : 2;  // L(2,1) or U(1,2)
    EXPECT_EQ(A[0], T(1));
    EXPECT_NEAR(std::real(A[stored]), 1 - 1e-9, 1e-15) << "A must hold the double-precision factor";
    EXPECT_LT(solve_error(uplo, 2, 1, A0, 2, X, 2, B, 2), kResidualThreshold);
  }
}

// Values beyond single precision's range: narrowing A or B overflows (ITER -2).
TYPED_TEST(RefinedSolveTest, ValuesBeyondSinglePrecisionFactorInDouble) {
  using T = TypeParam;
  const int n = 23;
  for (char uplo : {'L', 'U'})
    for (bool scale_a : {true, false}) {
      std::vector<T> A0 = well_conditioned<T>(n, n, 5);
      std::vector<T> B = random_rhs<T>(n, 2, n, 6);
      for (T& a : (scale_a ? A0 : B)) a *= 1e40;
      std::vector<T> A = A0, X(static_cast<std::size_t>(n) * 2);
      const RefinedSolve result = refined(uplo, n, 2, A, n, B, n, X, n);
      SCOPED_TRACE(testing::Message() << "uplo=" << uplo << (scale_a ? " A" : " B") << " scaled");
      EXPECT_EQ(result.info, 0);
      EXPECT_EQ(result.iter, -2);
      EXPECT_EQ(lapack_refined(uplo, n, 2, A0, n, B, n), std::make_pair(0, -2));
      EXPECT_LT(solve_error(uplo, n, 2, A0, n, X, n, B, n), kResidualThreshold);
    }
}

// Too ill-conditioned for single precision (the Hilbert matrix of order 9, condition about 5e11):
// LAPACK's refinement cannot converge, and the solve is the double-precision one.
TYPED_TEST(RefinedSolveTest, IllConditionedFallsBackToDoublePrecision) {
  using T = TypeParam;
  const int n = 9;
  std::vector<T> A0(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A0[at(i, j, n)] = T(1.0 / (i + j + 1));
  const std::vector<T> B = random_rhs<T>(n, 1, n, 9);
  for (char uplo : {'L', 'U'}) {
    std::vector<T> A = A0, X(n);
    const RefinedSolve result = refined(uplo, n, 1, A, n, B, n, X, n);
    EXPECT_EQ(result.info, 0);
    EXPECT_TRUE(result.iter == -3 || result.iter == -31) << result.iter;
    EXPECT_LT(lapack_refined(uplo, n, 1, A0, n, B, n).second, 0);
    EXPECT_NE(A, A0) << "A must hold the double-precision factor";
    EXPECT_LT(solve_error(uplo, n, 1, A0, n, X, n, B, n), kResidualThreshold);
  }
}

// A NaN in B: LAPACK's test passes the NaN residual of that column, and so does Tessera's (a
// solution is taken as diverged only where its column of B is finite): the same ITER as LAPACK's,
// A unchanged, the finite column solved.
TYPED_TEST(RefinedSolveTest, NanInBKeepsLapacksOutcome) {
  using T = TypeParam;
  const int n = 40;
  const std::vector<T> A0 = well_conditioned<T>(n, n, 21);
  std::vector<T> B = random_rhs<T>(n, 2, n, 22);
  B[at(7, 1, n)] = T(std::numeric_limits<double>::quiet_NaN());
  for (char uplo : {'L', 'U'}) {
    std::vector<T> A = A0, X(static_cast<std::size_t>(n) * 2);
    const RefinedSolve result = refined(uplo, n, 2, A, n, B, n, X, n);
    EXPECT_EQ(result.iter, lapack_iter_unchecked(uplo, n, 2, A0, n, B, n)) << uplo;
    EXPECT_GE(result.iter, 0) << uplo;
    EXPECT_EQ(A, A0);
    const std::vector<T> B0(B.begin(), B.begin() + n), X0(X.begin(), X.begin() + n);
    EXPECT_LT(solve_error(uplo, n, 1, A0, n, X0, n, B0, n), kResidualThreshold);
    EXPECT_TRUE(std::isnan(std::real(X[at(0, 1, n)])) || std::isnan(std::imag(X[at(0, 1, n)])));
  }
}

// Beyond what classical refinement from a single-precision factor takes (condition 3e8: LAPACK's
// steps do not converge in 30 iterations and end in the double-precision factorization; from about
// 1e9 the single-precision factorization itself fails), GMRES-IR converges from the same factor:
// A unchanged, the Krylov steps counted, X as accurate as a double-precision solve.
TYPED_TEST(RefinedSolveTest, IllConditionedConvergesThroughGmres) {
  using T = TypeParam;
  const int n = std::is_same_v<T, double> ? 480 : 200;
  const std::vector<T> A0 = spd_with_condition<T>(n, 3e8, 11);
  const std::vector<T> B = random_rhs<T>(n, 2, n, 12);
  for (char uplo : {'L', 'U'}) {
    SCOPED_TRACE(testing::Message() << "uplo=" << uplo);
    std::vector<T> A = A0, X(static_cast<std::size_t>(n) * 2);
    std::vector<T> A_lapack = A0, X_lapack(static_cast<std::size_t>(n) * 2);
    const RefinedSolve lapack = refined(uplo, n, 2, A_lapack, n, B, n, X_lapack, n, Refinement::lapack);
    EXPECT_EQ(lapack.krylov_iterations, 0);
    const RefinedSolve result = refined(uplo, n, 2, A, n, B, n, X, n, Refinement::classical_then_gmres);
    EXPECT_EQ(result.info, 0);
    EXPECT_GE(result.iter, 1);
    EXPECT_LE(result.iter, 30);
    // Whether LAPACK's steps stall here depends on the FP32 factor's rounding, which differs from
    // one BLAS kernel to another (they did with Debian's OpenBLAS on this suite's machines, in
    // double on every machine tried): where they do, GMRES-IR takes over; where they converge,
    // it is not slower.
    if (lapack.iter == -31)
      EXPECT_GT(result.krylov_iterations, 0);
    else
      EXPECT_LE(result.iter, lapack.iter);
    if (std::is_same_v<T, double>) EXPECT_EQ(lapack.iter, -31);
    EXPECT_EQ(A, A0) << "A must be unchanged when the refinement converged";
    EXPECT_LT(solve_error(uplo, n, 2, A0, n, X, n, B, n), kResidualThreshold);
  }
}

// Not positive definite (a negative diagonal entry at the first, a middle and the last column):
// INFO is the double-precision factorization's, as LAPACK's; X is not computed.
TYPED_TEST(RefinedSolveTest, NotPositiveDefiniteReportsTheDoublePrecisionInfo) {
  using T = TypeParam;
  const int n = 31;
  for (int bad : {0, 15, n - 1})
    for (char uplo : {'L', 'U'}) {
      std::vector<T> A0 = well_conditioned<T>(n, n, 7);
      A0[at(bad, bad, n)] = T(-1);
      const std::vector<T> B = random_rhs<T>(n, 1, n, 8);
      std::vector<T> A = A0, X(n, T(-5));
      const RefinedSolve result = refined(uplo, n, 1, A, n, B, n, X, n);
      EXPECT_EQ(result.info, bad + 1);
      EXPECT_EQ(result.iter, -3);
      EXPECT_EQ(lapack_refined(uplo, n, 1, A0, n, B, n), std::make_pair(bad + 1, -3));
      EXPECT_EQ(X, std::vector<T>(n, T(-5)));
    }
}

// The C API: LAPACK's argument positions in its order, then Tessera's (null pointers, X apart from
// A and B, iter); n = 0 returns at once with iter 0; a solve gives LAPACK's info and iter.
TYPED_TEST(RefinedSolveTest, CApiArgumentsAndSolve) {
  using T = TypeParam;
  const int n = 5;
  std::vector<T> A = well_conditioned<T>(n, n, 3), B = random_rhs<T>(n, 2, n, 4), X(n * 2);
  int iter = 99;
  EXPECT_EQ(c_refined('X', n, 2, A.data(), n, B.data(), n, X.data(), n, &iter), -1);
  EXPECT_EQ(c_refined('L', -1, 2, A.data(), n, B.data(), n, X.data(), n, &iter), -2);
  EXPECT_EQ(c_refined('L', n, -1, A.data(), n, B.data(), n, X.data(), n, &iter), -3);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n - 1, B.data(), n, X.data(), n, &iter), -5);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n - 1, X.data(), n, &iter), -7);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n, X.data(), n - 1, &iter), -9);
  EXPECT_EQ(c_refined('L', n, 2, static_cast<T*>(nullptr), n, B.data(), n, X.data(), n, &iter), -4);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, static_cast<const T*>(nullptr), n, X.data(), n, &iter), -6);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n, static_cast<T*>(nullptr), n, &iter), -8);
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n, B.data(), n, &iter), -8);  // X is B
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n, A.data(), n, &iter), -8);  // X inside A
  EXPECT_EQ(c_refined('L', n, 2, A.data(), n, B.data(), n, X.data(), n, nullptr), -10);
  EXPECT_EQ(iter, 99) << "a refused call writes nothing";
  T* const none = nullptr;
  EXPECT_EQ(c_refined('L', 0, 2, none, 1, none, 1, none, 1, &iter), 0);
  EXPECT_EQ(iter, 0);
  const std::vector<T> A0 = A;
  EXPECT_EQ(c_refined('U', n, 2, A.data(), n, B.data(), n, X.data(), n, &iter), 0);
  EXPECT_GE(iter, 0);
  EXPECT_EQ(A, A0);
  EXPECT_LT(solve_error('U', n, 2, A0, n, X, n, B, n), kResidualThreshold);
  // B may share memory with A: both are only read.
  std::vector<T> AB = A0;
  AB.resize(n * n + n);
  for (int i = 0; i < n; ++i) AB[n * n + i] = B[i];
  std::vector<T> x(n);
  EXPECT_EQ(c_refined('L', n, 1, AB.data(), n, AB.data() + n * n, n, x.data(), n, &iter), 0);
  EXPECT_GE(iter, 0);
}

TYPED_TEST(RefinedSolveTest, CppApiRefusesOtherHomesAndShapes) {
  using T = TypeParam;
  std::vector<T> A = well_conditioned<T>(4, 4, 1), B = random_rhs<T>(4, 1, 4, 2), X(4);
  const auto a = MatrixView<T>::host(4, 4, A.data(), 4), b = MatrixView<T>::host(4, 1, B.data(), 4);
  EXPECT_THROW(posv_refined(runtime(), a, b, MatrixView<T>::host(4, 2, X.data(), 4)), InvalidArgument);
  EXPECT_THROW(posv_refined(runtime(), a, MatrixView<T>::host(3, 1, B.data(), 4), MatrixView<T>::host(3, 1, X.data(), 4)),
               InvalidArgument);
  FactorOptions with_log_determinant;
  double log_determinant = 0;
  with_log_determinant.log_determinant = &log_determinant;
  EXPECT_THROW(posv_refined(runtime(), a, b, MatrixView<T>::host(4, 1, X.data(), 4), with_log_determinant),
               InvalidArgument);
  try {
    posv_refined(runtime(), a, b, MatrixView<T>::host(4, 1, X.data(), 3));
    ADD_FAILURE() << "ldx < n accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 9);
  }
}

// Tensor cores apply to the single-precision factor only: a fallback to double precision through
// the runtime's tasks (a tile size asked for) takes the double-precision factorization and solve
// without them, instead of refusing them.
TEST(RefinedSolveTensorCores, FallbackThroughTasksFactorsInDoublePrecision) {
  const int n = 9;
  std::vector<double> A0(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A0[at(i, j, n)] = 1.0 / (i + j + 1);
  const std::vector<double> B = random_rhs<double>(n, 1, n, 9);
  std::vector<double> A = A0, X(n);
  FactorOptions options = options_of('L');
  options.nb = 4;
  options.tensor_cores = TensorCores::tf32;
  const RefinedSolve result = posv_refined(runtime(), MatrixView<double>::host(n, n, A.data(), n),
                                           MatrixView<double>::host(n, 1, const_cast<double*>(B.data()), n),
                                           MatrixView<double>::host(n, 1, X.data(), n), options);
  EXPECT_EQ(result.info, 0);
  EXPECT_LT(result.iter, 0);
  EXPECT_LT(solve_error('L', n, 1, A0, n, X, n, B, n), kResidualThreshold);
}

// ---- ZCPOSV in GPU memory ------------------------------------------------------------------------

// Refused before anything touches CUDA: LAPACK's positions (the C form's as negative returns), and
// tensor cores, which a complex factor does not take.
TEST(ComplexRefinedSolveInGpuMemory, RefusedWithLapackPositions) {
  std::vector<zdouble> storage(64, zdouble(1));
  zdouble* A = storage.data();
  zdouble* B = storage.data() + 32;
  zdouble* X = storage.data() + 48;
  int iter = 5;
  EXPECT_EQ(tessera_zcposv_device('X', 4, 1, A, 4, B, 4, X, 4, &iter, nullptr), -1);
  EXPECT_EQ(tessera_zcposv_device('L', -1, 1, A, 4, B, 4, X, 4, &iter, nullptr), -2);
  EXPECT_EQ(tessera_zcposv_device('L', 4, -1, A, 4, B, 4, X, 4, &iter, nullptr), -3);
  EXPECT_EQ(tessera_zcposv_device('L', 4, 1, A, 3, B, 4, X, 4, &iter, nullptr), -5);
  EXPECT_EQ(tessera_zcposv_device('L', 4, 1, A, 4, B, 3, X, 4, &iter, nullptr), -7);
  EXPECT_EQ(tessera_zcposv_device('L', 4, 1, A, 4, B, 4, A, 4, &iter, nullptr), -8);
  EXPECT_EQ(tessera_zcposv_device('L', 4, 1, A, 4, B, 4, X, 4, nullptr, nullptr), -10);
  EXPECT_EQ(iter, 5) << "iter written on a refused call";
  EXPECT_EQ(tessera_zcposv_device('L', 0, 1, A, 1, B, 1, X, 1, &iter, nullptr), 0);
  EXPECT_EQ(iter, 0);
#ifdef TESSERA_HAVE_CUDA
  FactorOptions options;
  options.tensor_cores = TensorCores::tf32;
  try {
    device::posv_refined(runtime(), 4, 1, A, 4, B, 4, X, 4, nullptr, options);
    ADD_FAILURE() << "tensor cores taken for a complex matrix";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("tensor_cores"), std::string::npos) << e.what();
  }
#endif
}

#ifdef TESSERA_HAVE_CUDA

struct OnDevice {
  RefinedSolve result;
  std::vector<zdouble> A;  // after the call
  std::vector<zdouble> X;
};

// One ZCPOSV in GPU memory (the C++ form, or the C form where `c_api`) on copies of A and B, A's
// strict other triangle and the imaginary parts of its diagonal holding garbage (LAPACK reads
// neither); X's padding rows must stay as they were, B must come back unchanged, and A too where
// the refinement converged.
OnDevice zcposv_on_device(char uplo, int n, int nrhs, const std::vector<zdouble>& A, int lda,
                          const std::vector<zdouble>& B, int ldb, int ldx, bool c_api) {
  std::vector<zdouble> A_in = A;
  for (int j = 0; j < n; ++j) {
    A_in[at(j, j, lda)] = {A[at(j, j, lda)].real(), 1e3};
    for (int i = 0; i < n; ++i)
      if (uplo == 'L' ? i < j : i > j) A_in[at(i, j, lda)] = {std::numeric_limits<double>::quiet_NaN(), 1e300};
  }
  DeviceBuffer<zdouble> dA(A_in), dB(B), dX(std::vector<zdouble>(static_cast<std::size_t>(ldx) * nrhs, zdouble(-5)));
  OnDevice s;
  if (c_api) {
    s.result.info = tessera_zcposv_device(uplo, n, nrhs, dA.get(), lda, dB.get(), ldb, dX.get(), ldx, &s.result.iter,
                                          nullptr);
  } else {
    FactorOptions options = options_of(uplo);
    options.mode = Mode::gpu;
    s.result = device::posv_refined(runtime(), n, nrhs, dA.get(), lda, dB.get(), ldb, dX.get(), ldx, nullptr, options);
  }
  s.A = dA.to_host();
  s.X = dX.to_host();
  EXPECT_EQ(std::memcmp(dB.to_host().data(), B.data(), B.size() * sizeof(zdouble)), 0) << "B was written";
  if (s.result.iter >= 0)
    EXPECT_EQ(std::memcmp(s.A.data(), A_in.data(), A_in.size() * sizeof(zdouble)), 0) << "A changed, iter >= 0";
  for (int j = 0; j < nrhs; ++j)
    for (int i = n; i < ldx; ++i) EXPECT_EQ(s.X[at(i, j, ldx)], zdouble(-5)) << "X's padding written";
  return s;
}

// Converged to a double-precision solution in a few steps, as LAPACK's ZCPOSV on the same input:
// orders of one, either side of the tile boundaries and beyond one block of the triangular solves'
// inverses (2048), both triangles, padded leading dimensions, one and several right-hand sides.
TEST(ComplexRefinedSolveInGpuMemory, ConvergesAsZcposvGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  unsigned seed = 3;
  bool c_api = false;
  for (int n : {1, 63, 65, 400, 2053}) {
    const int lda = n + 3, ldb = n + 1, ldx = n + 2;
    const std::vector<zdouble> A = well_conditioned<zdouble>(n, lda, seed++);
    for (char uplo : {'L', 'U'})
      for (int nrhs : {1, 3}) {
        const std::vector<zdouble> B = random_rhs<zdouble>(n, nrhs, ldb, seed++);
        SCOPED_TRACE(testing::Message() << "n=" << n << " uplo=" << uplo << " nrhs=" << nrhs << " c_api=" << c_api);
        const OnDevice s = zcposv_on_device(uplo, n, nrhs, A, lda, B, ldb, ldx, c_api);
        c_api = !c_api;
        EXPECT_EQ(s.result.info, 0);
        EXPECT_GE(s.result.iter, 0);
        EXPECT_LE(s.result.iter, 10);
        if (n > 1 && n <= 400) EXPECT_GE(lapack_refined(uplo, n, nrhs, A, lda, B, ldb).second, 0);
        EXPECT_LT(solve_error(uplo, n, nrhs, A, lda, s.X, ldx, B, ldb), kResidualThreshold);
      }
  }
}

// Where single precision cannot serve: ITER as LAPACK's (-3 singular once rounded, -2 a right-hand
// side beyond its range; A beyond it is scaled to a unit diagonal first and converges), A then
// holding the double-precision factor; not positive definite at the first, a middle and the last
// column: INFO, and X not written.
TEST(ComplexRefinedSolveInGpuMemory, FallsBackAndReportsInfoAsZcposvGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (char uplo : {'L', 'U'}) {
    SCOPED_TRACE(uplo);
    const std::vector<zdouble> singular = {zdouble(1), zdouble(1 - 1e-9), zdouble(1 - 1e-9), zdouble(1)};
    const std::vector<zdouble> b2 = {zdouble(1), zdouble(-1)};
    OnDevice s = zcposv_on_device(uplo, 2, 1, singular, 2, b2, 2, 2, false);
    EXPECT_EQ(s.result.info, 0);
    EXPECT_EQ(s.result.iter, -3);
    EXPECT_EQ(lapack_refined(uplo, 2, 1, singular, 2, b2, 2), std::make_pair(0, -3));
    EXPECT_NEAR(std::real(s.A[uplo == 'L' ? 1 : 2]), 1 - 1e-9, 1e-15) << "A must hold the double-precision factor";
    EXPECT_LT(solve_error(uplo, 2, 1, singular, 2, s.X, 2, b2, 2), kResidualThreshold);

    const int n = 70;
    std::vector<zdouble> A = well_conditioned<zdouble>(n, n, 5), B = random_rhs<zdouble>(n, 2, n, 6);
    for (zdouble& b : B) b *= 1e40;
    s = zcposv_on_device(uplo, n, 2, A, n, B, n, n, true);
    EXPECT_EQ(s.result.info, 0);
    EXPECT_EQ(s.result.iter, -2);
    EXPECT_LT(solve_error(uplo, n, 2, A, n, s.X, n, B, n), kResidualThreshold);
    B = random_rhs<zdouble>(n, 2, n, 6);
    for (zdouble& a : A) a *= 1e40;
    s = zcposv_on_device(uplo, n, 2, A, n, B, n, n, false);
    EXPECT_EQ(s.result.info, 0);
    EXPECT_GE(s.result.iter, 0);
    EXPECT_LT(solve_error(uplo, n, 2, A, n, s.X, n, B, n), kResidualThreshold);

    for (int bad : {0, 65, 130}) {
      std::vector<zdouble> C = well_conditioned<zdouble>(131, 131, 7);
      C[at(bad, bad, 131)] = zdouble(-1);
      const OnDevice f = zcposv_on_device(uplo, 131, 1, C, 131, random_rhs<zdouble>(131, 1, 131, 8), 131, 131, true);
      EXPECT_EQ(f.result.info, bad + 1) << "bad=" << bad;
      EXPECT_EQ(f.result.iter, -3);
      EXPECT_EQ(f.X, std::vector<zdouble>(131, zdouble(-5))) << "X written although A is not positive definite";
    }
  }
}

#endif

}  // namespace
}  // namespace tessera::test
