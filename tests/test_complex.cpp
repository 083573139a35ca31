// Complex Hermitian positive definite matrices (std::complex<float>, std::complex<double>): the
// factorization, the solves, the inverse and the log-determinant through the C++ and C APIs on
// LAPACK-layout arrays and tile matrices, every mode (gpu skips where no GPU is present), both
// triangles, odd sizes, against LAPACK's backward errors and INFO; the imaginary parts of the
// diagonal ignored on input and zero on output, the other triangle and the padding untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
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

using zdouble = std::complex<double>;

// A random Hermitian positive definite matrix, both triangles filled (column-major, ld): G G^H / n
// + I for a random complex G. The diagonal's imaginary parts hold garbage, which LAPACK ignores;
// the padding rows hold -7.
template <class T>
std::vector<T> random_hpd(int n, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<zdouble> G(static_cast<std::size_t>(n) * n);
  for (zdouble& g : G) g = {dist(gen), dist(gen)};
  std::vector<T> A(static_cast<std::size_t>(ld) * std::max(n, 1), T(-7));
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      zdouble s = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; ++k) s += G[at(i, k, n)] * std::conj(G[at(j, k, n)]) / double(n);
      A[at(i, j, ld)] = T(s);
      A[at(j, i, ld)] = T(std::conj(s));
    }
  for (int j = 0; j < n; ++j) A[at(j, j, ld)] = T(A[at(j, j, ld)].real(), 0.25 + 0.5 * j);
  return A;
}

// The Hermitian matrix whose triangle `uplo` M holds, in full (n x n, ld n), in complex double;
// the diagonal's imaginary parts taken as zero.
template <class T>
std::vector<zdouble> hermitian_from(Uplo uplo, int n, const std::vector<T>& M, int ld) {
  std::vector<zdouble> H(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = uplo == Uplo::lower ? i >= j : i <= j;
      const zdouble v = stored ? zdouble(M[at(i, j, ld)]) : std::conj(zdouble(M[at(j, i, ld)]));
      H[at(i, j, n)] = i == j ? zdouble(v.real(), 0.0) : v;
    }
  return H;
}

double one_norm(int n, int cols, const std::vector<zdouble>& M) {
  double norm = 0;
  for (int j = 0; j < cols; ++j) {
    double column = 0;
    for (int i = 0; i < n; ++i) column += std::abs(M[at(i, j, n)]);
    norm = std::max(norm, column);
  }
  return norm;
}

// ||A - L L^H||_1 / (n ||A||_1 eps), L the lower factor the triangle `uplo` of F holds (U^H for
// upper storage), in complex double.
template <class T>
double factor_backward_error(Uplo uplo, int n, const std::vector<T>& A, const std::vector<T>& F, int ld) {
  const std::vector<zdouble> H = hermitian_from(uplo, n, A, ld);
  std::vector<zdouble> L(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) L[at(i, j, n)] = uplo == Uplo::lower ? zdouble(F[at(i, j, ld)]) : std::conj(zdouble(F[at(j, i, ld)]));
  std::vector<zdouble> R = H;
  const zdouble minus_one = -1.0, one = 1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, n, n, n, &minus_one, L.data(), n, L.data(), n, &one,
              R.data(), n);
  return one_norm(n, n, R) / (n * one_norm(n, n, H) * std::numeric_limits<RealOf<T>>::epsilon());
}

// ||A X - B||_1 / (||A||_1 ||X||_1 n eps) for the Hermitian A of the triangle `uplo`.
template <class T>
double solve_backward_error(Uplo uplo, int n, int nrhs, const std::vector<T>& A, int lda, const std::vector<T>& X,
                            const std::vector<T>& B, int ldb) {
  const std::vector<zdouble> H = hermitian_from(uplo, n, A, lda);
  std::vector<zdouble> x(static_cast<std::size_t>(n) * nrhs), r(static_cast<std::size_t>(n) * nrhs);
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      x[at(i, j, n)] = zdouble(X[at(i, j, ldb)]);
      r[at(i, j, n)] = zdouble(B[at(i, j, ldb)]);
    }
  const zdouble minus_one = -1.0, one = 1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, nrhs, n, &minus_one, H.data(), n, x.data(), n, &one,
              r.data(), n);
  return one_norm(n, nrhs, r) /
         (one_norm(n, n, H) * one_norm(n, nrhs, x) * n * std::numeric_limits<RealOf<T>>::epsilon());
}

template <class T>
std::vector<T> random_rhs(int n, int nrhs, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> B(static_cast<std::size_t>(ld) * nrhs, T(-7));
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) B[at(i, j, ld)] = T(dist(gen), dist(gen));
  return B;
}

char letter(Uplo uplo) { return uplo == Uplo::lower ? 'L' : 'U'; }

// Outside the triangle `uplo` (and the padding) F equals A; on the diagonal of a factor the
// imaginary parts are zero.
template <class T>
void expect_only_the_triangle_written(Uplo uplo, int n, int ld, const std::vector<T>& A, const std::vector<T>& F,
                                      const std::string& name, bool factor) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i) {
      const bool referenced = i < n && (uplo == Uplo::lower ? i >= j : i <= j);
      if (!referenced) ASSERT_EQ(F[at(i, j, ld)], A[at(i, j, ld)]) << name << " (" << i << ", " << j << ") written";
      if (factor && i == j) ASSERT_EQ(F[at(i, j, ld)].imag(), RealOf<T>(0)) << name << " diagonal " << i;
    }
}

// LAPACK's xPOT03 ratio of the inverse X (the triangle uplo of the inverse of A's triangle uplo):
// ||I - A X||_1 / (n ||A||_1 ||X||_1 eps).
template <class T>
double inverse_ratio(Uplo uplo, int n, const std::vector<T>& A, const std::vector<T>& X, int ld) {
  const std::vector<zdouble> H = hermitian_from(uplo, n, A, ld), inverse = hermitian_from(uplo, n, X, ld);
  std::vector<zdouble> R(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) R[at(i, i, n)] = 1.0;
  const zdouble minus_one = -1.0, one = 1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, &minus_one, H.data(), n, inverse.data(), n, &one,
              R.data(), n);
  return one_norm(n, n, R) /
         (n * one_norm(n, n, H) * one_norm(n, n, inverse) * std::numeric_limits<RealOf<T>>::epsilon());
}

struct Case {
  int n;
  int nb;
  int extra_ld;
};

const Case kCases[] = {{1, 16, 0}, {2, 16, 3}, {15, 16, 0}, {16, 16, 1}, {17, 16, 2}, {53, 16, 0}, {97, 32, 5}};

class ComplexModes : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {
 protected:
  void SetUp() override {
    if (std::get<1>(GetParam()) == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  }
  FactorOptions options(int nb) const {
    FactorOptions o;
    o.uplo = std::get<0>(GetParam());
    o.mode = std::get<1>(GetParam());
    o.nb = nb;
    return o;
  }
  static std::string name(const Case& c, const FactorOptions& o) {
    return "n" + std::to_string(c.n) + " nb" + std::to_string(c.nb) + " " + to_string(o.uplo) + " " +
           to_string(o.mode);
  }

  template <class T>
  void check_potrf_and_solves() {
    unsigned seed = 3;
    for (const Case& c : kCases) {
      const FactorOptions o = options(c.nb);
      const int ld = c.n + c.extra_ld;
      const std::vector<T> A = random_hpd<T>(c.n, ld, seed++);
      std::vector<T> F = A;
      double logdet = -1;
      FactorOptions with_logdet = o;
      with_logdet.log_determinant = &logdet;
      ASSERT_EQ(potrf(runtime(), MatrixView<T>::host(c.n, c.n, F.data(), ld), with_logdet), 0) << name(c, o);
      EXPECT_LT(factor_backward_error(o.uplo, c.n, A, F, ld), kResidualThreshold) << name(c, o);
      expect_only_the_triangle_written(o.uplo, c.n, ld, A, F, name(c, o), true);
      double expected = 0;
      for (int j = 0; j < c.n; ++j) expected += 2 * std::log(double(F[at(j, j, ld)].real()));
      EXPECT_NEAR(logdet, expected, 1e-4 * (1 + std::abs(expected))) << name(c, o);

      const int nrhs = 3;
      const std::vector<T> B = random_rhs<T>(c.n, nrhs, ld, seed++);
      std::vector<T> X = B;
      ASSERT_EQ(potrs(runtime(), MatrixView<T>::host(c.n, c.n, F.data(), ld), MatrixView<T>::host(c.n, nrhs, X.data(), ld), o), 0);
      EXPECT_LT(solve_backward_error(o.uplo, c.n, nrhs, A, ld, X, B, ld), kResidualThreshold) << name(c, o) << " potrs";

      std::vector<T> G = A, Y = B;
      ASSERT_EQ(posv(runtime(), MatrixView<T>::host(c.n, c.n, G.data(), ld), MatrixView<T>::host(c.n, nrhs, Y.data(), ld), o), 0);
      EXPECT_LT(solve_backward_error(o.uplo, c.n, nrhs, A, ld, Y, B, ld), kResidualThreshold) << name(c, o) << " posv";
      EXPECT_LT(factor_backward_error(o.uplo, c.n, A, G, ld), kResidualThreshold) << name(c, o) << " posv";
    }
  }

  // A matrix that is not positive definite at column `bad` (0-based): LAPACK's info, B unchanged by posv.
  template <class T>
  void check_not_positive_definite() {
    const int n = 37, nb = 8;
    for (int bad : {0, nb - 1, nb, nb + 1, n - 1}) {
      const FactorOptions o = options(nb);
      std::vector<T> A = random_hpd<T>(n, n, 11);
      A[at(bad, bad, n)] = T(-1, 0.5);
      std::vector<T> expected = A;
      const int lapack_info = kernels::cpu::potrf(letter(o.uplo), n, expected.data(), n);
      ASSERT_EQ(lapack_info, bad + 1);
      std::vector<T> F = A;
      EXPECT_EQ(potrf(runtime(), MatrixView<T>::host(n, n, F.data(), n), o), lapack_info) << "bad " << bad;
      std::vector<T> G = A;
      const std::vector<T> B = random_rhs<T>(n, 2, n, 5);
      std::vector<T> X = B;
      EXPECT_EQ(posv(runtime(), MatrixView<T>::host(n, n, G.data(), n), MatrixView<T>::host(n, 2, X.data(), n), o),
                lapack_info);
      EXPECT_EQ(X, B) << "posv changed B after a failed factorization";
    }
  }

  // The inverse from the factor: LAPACK's xPOT03 ratio, only the triangle written.
  template <class T>
  void check_potri() {
    unsigned seed = 30;
    for (const Case& c : kCases) {
      const FactorOptions o = options(c.nb);
      const int ld = c.n + c.extra_ld;
      const std::vector<T> A = random_hpd<T>(c.n, ld, seed++);
      std::vector<T> F = A;
      ASSERT_EQ(kernels::cpu::potrf(letter(o.uplo), c.n, F.data(), ld), 0);
      const std::vector<T> factor = F;
      ASSERT_EQ(potri(runtime(), MatrixView<T>::host(c.n, c.n, F.data(), ld), o), 0) << name(c, o);
      expect_only_the_triangle_written(o.uplo, c.n, ld, factor, F, name(c, o), true);
      EXPECT_LT(inverse_ratio(o.uplo, c.n, A, F, ld), kResidualThreshold) << name(c, o);
    }
  }
};

TEST_P(ComplexModes, DoubleFactorsAndSolvesOnOddSizes) { check_potrf_and_solves<std::complex<double>>(); }
TEST_P(ComplexModes, FloatFactorsAndSolvesOnOddSizes) { check_potrf_and_solves<std::complex<float>>(); }
TEST_P(ComplexModes, DoubleNotPositiveDefiniteGivesLapacksInfo) { check_not_positive_definite<std::complex<double>>(); }
TEST_P(ComplexModes, FloatNotPositiveDefiniteGivesLapacksInfo) { check_not_positive_definite<std::complex<float>>(); }
TEST_P(ComplexModes, DoubleInverseMatchesLapacksRatio) { check_potri<std::complex<double>>(); }
TEST_P(ComplexModes, FloatInverseMatchesLapacksRatio) { check_potri<std::complex<float>>(); }

INSTANTIATE_TEST_SUITE_P(Complex, ComplexModes,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)));

// The C API equals LAPACK on the same input, on the calling thread (small) and through tiles.
TEST(ComplexCApi, MatchesLapack) {
  for (int n : {1, 9, 130})
    for (char uplo : {'L', 'U'}) {
      const std::vector<zdouble> A = random_hpd<zdouble>(n, n, 7);
      std::vector<zdouble> expected = A, F = A;
      ASSERT_EQ(kernels::cpu::potrf(uplo, n, expected.data(), n), 0);
      double logdet = 0;
      ASSERT_EQ(tessera_zpotrf_logdet(uplo, n, F.data(), n, &logdet), 0);
      EXPECT_LT(factor_backward_error(uplo == 'L' ? Uplo::lower : Uplo::upper, n, A, F, n), kResidualThreshold);
      for (std::size_t k = 0; k < F.size(); ++k) EXPECT_NEAR(std::abs(F[k] - expected[k]), 0.0, 1e-10) << n << uplo;
      const std::vector<zdouble> B = random_rhs<zdouble>(n, 2, n, 8);
      std::vector<zdouble> X = B, Y = B, G = A;
      ASSERT_EQ(tessera_zpotrs(uplo, n, 2, F.data(), n, X.data(), n), 0);
      ASSERT_EQ(tessera_zposv(uplo, n, 2, G.data(), n, Y.data(), n), 0);
      EXPECT_LT(solve_backward_error(uplo == 'L' ? Uplo::lower : Uplo::upper, n, 2, A, n, X, B, n), kResidualThreshold);
      EXPECT_LT(solve_backward_error(uplo == 'L' ? Uplo::lower : Uplo::upper, n, 2, A, n, Y, B, n), kResidualThreshold);
      std::vector<zdouble> inverse = F, lapack_inverse = F;
      ASSERT_EQ(tessera_zpotri(uplo, n, inverse.data(), n), 0);
      ASSERT_EQ(kernels::cpu::potri(uplo, n, lapack_inverse.data(), n), 0);
      for (std::size_t k = 0; k < F.size(); ++k)
        EXPECT_NEAR(std::abs(inverse[k] - lapack_inverse[k]), 0.0, 1e-9 * (1 + std::abs(lapack_inverse[k])));
    }
  std::vector<std::complex<float>> C = random_hpd<std::complex<float>>(40, 40, 9);
  EXPECT_EQ(tessera_cpotrf('L', 40, C.data(), 40), 0);
  EXPECT_EQ(tessera_cpotrf('X', 40, C.data(), 40), -1);
  EXPECT_EQ(tessera_zpotrf('L', 4, nullptr, 3), -4);
  EXPECT_EQ(tessera_zpotri('L', -1, nullptr, 1), -2);
}

// A tile matrix of complex scalars: loaded from either triangle, factored, stored back.
TEST(ComplexTiles, LoadFactorStore) {
  const int n = 45, nb = 16;
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const std::vector<zdouble> A = random_hpd<zdouble>(n, n, 12);
    TileMatrix<zdouble> tiles(runtime(), n, n, nb, TileStructure::symmetric_lower);
    load_async(tiles, uplo, A.data(), n).wait();
    ASSERT_EQ(potrf(runtime(), MatrixView<zdouble>::of(tiles)), 0);
    std::vector<zdouble> F = A;
    store_async(tiles, uplo, F.data(), n).wait();
    EXPECT_LT(factor_backward_error(uplo, n, A, F, n), kResidualThreshold) << to_string(uplo);
  }
}

// backward_error on complex tile matrices (||A - L L^H||_1 / (n ||A||_1 eps), computed by tile tasks)
// is small for the factor and large for a factor with one entry changed, in every mode.
TEST(ComplexTiles, BackwardErrorOfTheFactorAndOfAWrongOne) {
  const int n = 45, nb = 16;
  for (Mode mode : {Mode::cpu, Mode::gpu, Mode::hybrid}) {
    if (mode != Mode::cpu && !have_gpu()) continue;
    const std::vector<zdouble> A = random_hpd<zdouble>(n, n, 14);
    TileMatrix<zdouble> original(runtime(), n, n, nb, TileStructure::symmetric_lower);
    TileMatrix<zdouble> factor(runtime(), n, n, nb, TileStructure::symmetric_lower);
    load_async(original, Uplo::lower, A.data(), n).wait();
    load_async(factor, Uplo::lower, A.data(), n).wait();
    ASSERT_EQ(potrf(runtime(), MatrixView<zdouble>::of(factor)), 0);
    EXPECT_LT(backward_error(original, factor, mode), kResidualThreshold) << to_string(mode);
    std::vector<zdouble> F(static_cast<std::size_t>(n) * n);
    store_async(factor, Uplo::lower, F.data(), n).wait();
    F[at(30, 7, n)] += zdouble(0.0, 1e-3);  // an imaginary part only: the conjugation matters
    load_async(factor, Uplo::lower, F.data(), n).wait();
    EXPECT_GT(backward_error(original, factor, mode), 1e6) << to_string(mode);
  }
}

// What complex matrices do not take yet, refused with the reason.
TEST(ComplexRefusals, GrainsAndHomesOfRealScalarsOnly) {
  std::vector<zdouble> A = random_hpd<zdouble>(64, 64, 13);
  FactorOptions options;
  options.grain = TaskGrain::block_columns;
  EXPECT_THROW(potrf(runtime(), MatrixView<zdouble>::host(64, 64, A.data(), 64), options), InvalidArgument);
  options.grain = TaskGrain::whole_matrix;
  EXPECT_THROW(potrf(runtime(), MatrixView<zdouble>::host(64, 64, A.data(), 64), options), InvalidArgument);
}

// Batches of complex matrices (strided and variable sizes) in every mode: each matrix's factor and
// solution against the backward-error bounds, the failing members' LAPACK info, their B unchanged.
class ComplexBatches : public ::testing::TestWithParam<std::tuple<Uplo, Mode>> {
 protected:
  void SetUp() override {
    if (std::get<1>(GetParam()) == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  }

  template <class T>
  void check_strided() {
    const Uplo uplo = std::get<0>(GetParam());
    BatchOptions options;
    options.uplo = uplo;
    options.mode = std::get<1>(GetParam());
    options.chunk = 5;  // several tasks
    for (int n : {1, 7, 32, 33, 70}) {
      const int batch = 13, ld = n + 2, nrhs = 2;
      const long long stride = static_cast<long long>(ld) * n, strideB = static_cast<long long>(ld) * nrhs;
      std::vector<T> A(static_cast<std::size_t>(stride) * batch), B(static_cast<std::size_t>(strideB) * batch);
      std::vector<int> expected_info(batch, 0);
      for (int k = 0; k < batch; ++k) {
        const std::vector<T> a = random_hpd<T>(n, ld, 100 + k + n);
        std::copy(a.begin(), a.end(), A.begin() + k * stride);
        const std::vector<T> b = random_rhs<T>(n, nrhs, ld, 200 + k);
        std::copy(b.begin(), b.end(), B.begin() + k * strideB);
      }
      const int bad = n / 2;  // matrices 3 and 11 are not positive definite at column bad + 1
      for (int k : {3, 11}) {
        A[k * stride + at(bad, bad, ld)] = T(-1, 0.5);
        expected_info[k] = bad + 1;
      }
      const std::string name = "n" + std::to_string(n) + " " + to_string(uplo) + " " + to_string(options.mode);

      std::vector<T> F = A, X = B;
      std::vector<int> info(batch, -9);
      posv_batched(runtime(), n, nrhs, F.data(), ld, stride, X.data(), ld, strideB, batch, info.data(), options);
      EXPECT_EQ(info, expected_info) << name;
      for (int k = 0; k < batch; ++k) {
        const auto slice = [&](const std::vector<T>& v, long long s, long long size) {
          return std::vector<T>(v.begin() + k * s, v.begin() + k * s + size);
        };
        const std::vector<T> a = slice(A, stride, stride), f = slice(F, stride, stride);
        const std::vector<T> b = slice(B, strideB, strideB), x = slice(X, strideB, strideB);
        if (expected_info[k] != 0) {
          EXPECT_EQ(x, b) << name << ": posv changed B of failed matrix " << k;
          continue;
        }
        EXPECT_LT(factor_backward_error(uplo, n, a, f, ld), kResidualThreshold) << name << " matrix " << k;
        expect_only_the_triangle_written(uplo, n, ld, a, f, name, true);
        EXPECT_LT(solve_backward_error(uplo, n, nrhs, a, ld, x, b, ld), kResidualThreshold) << name << " matrix " << k;
      }

      // potrs with the factors of posv: the same solutions.
      std::vector<T> Y = B;
      for (int k : {3, 11}) std::copy(A.begin() + k * stride, A.begin() + (k + 1) * stride, F.begin() + k * stride);
      for (int k : {3, 11})
        for (int j = 0; j < n; ++j) F[k * stride + at(j, j, ld)] = T(1);  // solvable placeholders
      potrs_batched_async(runtime(), n, nrhs, F.data(), ld, stride, Y.data(), ld, strideB, batch, options).wait();
      for (int k = 0; k < batch; ++k)
        if (expected_info[k] == 0)
          for (int e = 0; e < strideB; ++e)
            EXPECT_LT(std::abs(Y[k * strideB + e] - X[k * strideB + e]),
                      1e3 * std::numeric_limits<RealOf<T>>::epsilon() * (1 + std::abs(X[k * strideB + e])))
                << name << " potrs matrix " << k;
    }
  }

  template <class T>
  void check_variable() {
    const Uplo uplo = std::get<0>(GetParam());
    FactorOptions options;
    options.uplo = uplo;
    options.mode = std::get<1>(GetParam());
    const std::vector<int> orders = {5, 0, 33, 1, 64, 17, 40};
    const int batch = static_cast<int>(orders.size());
    std::vector<int> lds(batch);
    std::vector<long long> offsets(batch);
    long long total = 0;
    for (int k = 0; k < batch; ++k) {
      lds[k] = std::max(1, orders[k] + k % 2);
      offsets[k] = total;
      total += static_cast<long long>(lds[k]) * std::max(orders[k], 1);
    }
    std::vector<T> A(static_cast<std::size_t>(total));
    for (int k = 0; k < batch; ++k) {
      const std::vector<T> a = random_hpd<T>(orders[k], lds[k], 300 + k);
      std::copy(a.begin(), a.begin() + static_cast<long long>(lds[k]) * orders[k], A.begin() + offsets[k]);
    }
    A[offsets[4] + at(10, 10, lds[4])] = T(0);  // matrix 4 fails at column 11
    std::vector<T> F = A;
    std::vector<int> info(batch, -9);
    potrf(runtime(),
          MatrixView<T>::host_variable_batch(orders.data(), F.data(), offsets.data(), lds.data(), batch, info.data()),
          options);
    for (int k = 0; k < batch; ++k) {
      const std::string name = "variable matrix " + std::to_string(k) + " " + to_string(uplo) + " " + to_string(options.mode);
      EXPECT_EQ(info[k], k == 4 ? 11 : 0) << name;
      if (k == 4 || orders[k] == 0) continue;
      const long long size = static_cast<long long>(lds[k]) * orders[k];
      const std::vector<T> a(A.begin() + offsets[k], A.begin() + offsets[k] + size);
      const std::vector<T> f(F.begin() + offsets[k], F.begin() + offsets[k] + size);
      EXPECT_LT(factor_backward_error(uplo, orders[k], a, f, lds[k]), kResidualThreshold) << name;
    }
  }
};

TEST_P(ComplexBatches, DoubleStrided) { check_strided<std::complex<double>>(); }
TEST_P(ComplexBatches, FloatStrided) { check_strided<std::complex<float>>(); }
TEST_P(ComplexBatches, DoubleVariableSizes) { check_variable<std::complex<double>>(); }
TEST_P(ComplexBatches, FloatVariableSizes) { check_variable<std::complex<float>>(); }

INSTANTIATE_TEST_SUITE_P(Complex, ComplexBatches,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Mode::cpu, Mode::gpu, Mode::hybrid)));

// The C API's complex batches equal LAPACK matrix by matrix; a bad argument is refused.
TEST(ComplexCApi, BatchesMatchLapack) {
  const int n = 19, batch = 6, nrhs = 2;
  const long long stride = static_cast<long long>(n) * n, strideB = static_cast<long long>(n) * nrhs;
  std::vector<zdouble> A(static_cast<std::size_t>(stride) * batch), B(static_cast<std::size_t>(strideB) * batch);
  for (int k = 0; k < batch; ++k) {
    const std::vector<zdouble> a = random_hpd<zdouble>(n, n, 400 + k);
    std::copy(a.begin(), a.end(), A.begin() + k * stride);
    const std::vector<zdouble> b = random_rhs<zdouble>(n, nrhs, n, 500 + k);
    std::copy(b.begin(), b.end(), B.begin() + k * strideB);
  }
  for (char uplo : {'L', 'U'}) {
    std::vector<zdouble> F = A, G = A, X = B;
    std::vector<int> info(batch, -9), info2(batch, -9);
    ASSERT_EQ(tessera_zpotrf_batched(uplo, n, F.data(), n, stride, batch, info.data()), 0);
    ASSERT_EQ(tessera_zposv_batched(uplo, n, nrhs, G.data(), n, stride, X.data(), n, strideB, batch, info2.data()), 0);
    for (int k = 0; k < batch; ++k) {
      EXPECT_EQ(info[k], 0);
      EXPECT_EQ(info2[k], 0);
      std::vector<zdouble> expected(A.begin() + k * stride, A.begin() + (k + 1) * stride);
      std::vector<zdouble> solution(B.begin() + k * strideB, B.begin() + (k + 1) * strideB);
      ASSERT_EQ(kernels::cpu::potrf(uplo, n, expected.data(), n), 0);
      ASSERT_EQ(kernels::cpu::potrs(uplo, n, nrhs, expected.data(), n, solution.data(), n), 0);
      for (long long e = 0; e < stride; ++e) EXPECT_NEAR(std::abs(F[k * stride + e] - expected[e]), 0.0, 1e-12) << uplo;
      for (long long e = 0; e < strideB; ++e)
        EXPECT_NEAR(std::abs(X[k * strideB + e] - solution[e]), 0.0, 1e-10 * (1 + std::abs(solution[e]))) << uplo;
    }
  }
  std::vector<std::complex<float>> C(static_cast<std::size_t>(stride) * batch);
  std::vector<int> info(batch);
  EXPECT_EQ(tessera_cpotrf_batched('L', n, C.data(), n - 1, stride, batch, info.data()), -4);
  EXPECT_EQ(tessera_cposv_batched('X', n, 1, C.data(), n, stride, C.data(), n, stride, batch, info.data()), -1);
}

#ifdef TESSERA_HAVE_CUDA
// Complex matrices in GPU memory (the device API): one vendor call on the caller's stream, tile
// tasks, and the log-determinant, both triangles; the solves; a failing minor's info.
TEST(ComplexOnDevice, FactorsSolvesAndReportsInfo) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 211, ld = 215, nrhs = 3;
  zdouble *dA = nullptr, *dB = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, sizeof(zdouble) * ld * n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dB, sizeof(zdouble) * ld * nrhs), cudaSuccess);
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int nb : {0, 64}) {  // 0: the plan's choice (one vendor call); 64: tile tasks
      const std::string name = to_string(uplo) + std::string(" nb ") + std::to_string(nb);
      const std::vector<zdouble> A = random_hpd<zdouble>(n, ld, 40 + nb);
      const std::vector<zdouble> B = random_rhs<zdouble>(n, nrhs, ld, 41);
      FactorOptions options;
      options.uplo = uplo;
      options.nb = nb;
      options.mode = Mode::gpu;
      double logdet = 0;
      options.log_determinant = &logdet;
      ASSERT_EQ(cudaMemcpy(dA, A.data(), sizeof(zdouble) * ld * n, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(device::potrf(runtime(), n, dA, ld, nullptr, options), 0) << name;
      std::vector<zdouble> F(A.size());
      ASSERT_EQ(cudaMemcpy(F.data(), dA, sizeof(zdouble) * ld * n, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_LT(factor_backward_error(uplo, n, A, F, ld), kResidualThreshold) << name;
      expect_only_the_triangle_written(uplo, n, ld, A, F, name, true);
      double expected = 0;
      for (int j = 0; j < n; ++j) expected += 2 * std::log(F[at(j, j, ld)].real());
      EXPECT_NEAR(logdet, expected, 1e-9 * std::abs(expected)) << name;
      options.log_determinant = nullptr;
      ASSERT_EQ(cudaMemcpy(dB, B.data(), sizeof(zdouble) * ld * nrhs, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(device::potrs(runtime(), n, nrhs, dA, ld, dB, ld, nullptr, options), 0) << name;
      std::vector<zdouble> X(B.size());
      ASSERT_EQ(cudaMemcpy(X.data(), dB, sizeof(zdouble) * ld * nrhs, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_LT(solve_backward_error(uplo, n, nrhs, A, ld, X, B, ld), kResidualThreshold) << name;
      // posv on a matrix that is not positive definite at column 100: info 100 + 1, B unchanged.
      std::vector<zdouble> bad = A;
      bad[at(100, 100, ld)] = zdouble(-1, 0);
      ASSERT_EQ(cudaMemcpy(dA, bad.data(), sizeof(zdouble) * ld * n, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dB, B.data(), sizeof(zdouble) * ld * nrhs, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(device::posv(runtime(), n, nrhs, dA, ld, dB, ld, nullptr, options), 101) << name;
      ASSERT_EQ(cudaMemcpy(X.data(), dB, sizeof(zdouble) * ld * nrhs, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(X, B) << name << ": posv changed B after a failed factorization";
    }
  cudaFree(dA);
  cudaFree(dB);
}

// The inverse from a complex factor in GPU memory (tile tasks), both triangles, tiles of several
// sizes and the whole matrix as one tile: LAPACK's ratio, only the triangle written, a real
// diagonal. A zero on the factor's diagonal (both parts zero) gives its position and leaves the
// matrix as it was; an entry with only an imaginary part is no zero (ZTRTRI's check).
template <class T>
void check_inverse_on_device() {
  const int n = 173, ld = 177;
  T* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(T) * ld * n), cudaSuccess);
  const auto to_device = [&](const std::vector<T>& M) {
    ASSERT_EQ(cudaMemcpy(d, M.data(), sizeof(T) * ld * n, cudaMemcpyHostToDevice), cudaSuccess);
  };
  const auto from_device = [&] {
    std::vector<T> M(static_cast<std::size_t>(ld) * n);
    EXPECT_EQ(cudaMemcpy(M.data(), d, sizeof(T) * ld * n, cudaMemcpyDeviceToHost), cudaSuccess);
    return M;
  };
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int nb : {0, 64, n}) {
      const std::string name = to_string(uplo) + std::string(" nb ") + std::to_string(nb);
      const std::vector<T> A = random_hpd<T>(n, ld, 60 + nb);
      std::vector<T> F = A;
      ASSERT_EQ(kernels::cpu::potrf(uplo == Uplo::lower ? 'L' : 'U', n, F.data(), ld), 0);
      FactorOptions options;
      options.uplo = uplo;
      options.nb = nb;
      to_device(F);
      ASSERT_EQ(device::potri(runtime(), n, d, ld, nullptr, options), 0) << name;
      const std::vector<T> X = from_device();
      expect_only_the_triangle_written(uplo, n, ld, F, X, name, true);
      EXPECT_LT(inverse_ratio(uplo, n, A, X, ld), kResidualThreshold) << name;

      std::vector<T> singular = F;
      singular[at(90, 90, ld)] = T(0);
      to_device(singular);
      EXPECT_EQ(device::potri(runtime(), n, d, ld, nullptr, options), 91) << name;
      EXPECT_EQ(from_device(), singular) << name << ": changed by a failed inverse";
      singular[at(90, 90, ld)] = T(0, 1);
      to_device(singular);
      EXPECT_EQ(device::potri(runtime(), n, d, ld, nullptr, options), 0) << name << ": an imaginary diagonal entry";
    }
  cudaFree(d);
}

TEST(ComplexOnDevice, DoubleInverseMatchesLapacksRatio) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_inverse_on_device<zdouble>();
}

TEST(ComplexOnDevice, FloatInverseMatchesLapacksRatio) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_inverse_on_device<std::complex<float>>();
}

// The out-of-place forms on complex matrices in GPU memory: potrf_ex through strides (column- and
// row-ordered sources, both triangles: an upper one is read as its conjugate transpose, and its
// factor written back as U = L^H) and potrf_stack_ex (few matrices of moderate order: cuSOLVER's
// batched potrf in one call). Against LAPACK's factor in the triangle, zeros in the other, a real
// diagonal; the source (NaN outside its triangle) neither written nor read outside it; a member
// that is not positive definite gets LAPACK's info.
template <class T>
void check_out_of_place_on_device() {
  using R = RealOf<T>;
  const R tolerance = std::is_same_v<R, double> ? R(1e-11) : R(1e-4);
  const T nan(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  const int n = 193, batch = 3, ldl = n + 1;
  const long long nn = static_cast<long long>(n) * n, strideL = static_cast<long long>(ldl) * n;
  T *dA = nullptr, *dL = nullptr;
  int* dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, sizeof(T) * nn * batch), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dL, sizeof(T) * strideL * batch), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dinfo, sizeof(int) * batch), cudaSuccess);
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const char u = uplo == Uplo::lower ? 'L' : 'U';
    std::vector<std::vector<T>> factors;
    std::vector<int> expected_info;
    std::vector<T> matrices;  // tight, column-major, one after the other
    for (int k = 0; k < batch; ++k) {
      std::vector<T> A = random_hpd<T>(n, n, 70 + k);
      if (k == 1) A[at(60, 60, n)] = T(-1);  // not positive definite at column 61
      std::vector<T> F = A;
      expected_info.push_back(kernels::cpu::potrf(u, n, F.data(), n));
      factors.push_back(F);
      matrices.insert(matrices.end(), A.begin(), A.end());
    }
    ASSERT_EQ(expected_info, (std::vector<int>{0, 61, 0}));
    for (bool row_ordered : {false, true}) {
      const long long rs = row_ordered ? n : 1, cs = row_ordered ? 1 : n;
      std::vector<T> source(static_cast<std::size_t>(nn * batch), nan);
      for (int k = 0; k < batch; ++k)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (uplo == Uplo::lower ? i >= j : i <= j)
              source[k * nn + i * rs + j * cs] = matrices[k * nn + at(i, j, n)];
      ASSERT_EQ(cudaMemcpy(dA, source.data(), sizeof(T) * source.size(), cudaMemcpyHostToDevice), cudaSuccess);
      for (bool stack : {false, true}) {
        const std::string name = std::string(to_string(uplo)) + (row_ordered ? " row-ordered" : " column-ordered") +
                                 (stack ? " potrf_stack_ex" : " potrf_ex");
        ASSERT_EQ(cudaMemset(dL, 0xff, sizeof(T) * strideL * batch), cudaSuccess);
        ASSERT_EQ(cudaMemset(dinfo, 0xff, sizeof(int) * batch), cudaSuccess);
        FactorOptions options;
        options.uplo = uplo;
        options.mode = Mode::gpu;
        if (stack)
          device::potrf_stack_ex<T>(runtime(), n, dA, rs, cs, nn, dL, ldl, strideL, batch, dinfo, nullptr, options);
        else
          for (int k = 0; k < batch; ++k)
            device::potrf_ex<T>(runtime(), n, dA + k * nn, rs, cs, dL + k * strideL, ldl, dinfo + k, nullptr, options);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
        std::vector<T> L(static_cast<std::size_t>(strideL * batch));
        std::vector<int> info(batch);
        ASSERT_EQ(cudaMemcpy(L.data(), dL, sizeof(T) * L.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(info.data(), dinfo, sizeof(int) * batch, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(info, expected_info) << name;
        for (int k = 0; k < batch; ++k) {
          if (expected_info[k] != 0) continue;  // a failed factor is partial, as LAPACK leaves it
          R largest = 0;
          for (const T& x : factors[k]) largest = std::max(largest, std::abs(x));
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
              const T x = L[k * strideL + at(i, j, ldl)];
              if (uplo == Uplo::lower ? i >= j : i <= j) {
                ASSERT_LE(std::abs(x - factors[k][at(i, j, n)]), tolerance * largest)
                    << name << " matrix " << k << " (" << i << ", " << j << ")";
                if (i == j) ASSERT_EQ(x.imag(), R(0)) << name << " diagonal " << i;
              } else {
                ASSERT_EQ(x, T(0)) << name << " matrix " << k << " (" << i << ", " << j << ") in the other triangle";
              }
            }
        }
        std::vector<T> after(source.size());
        ASSERT_EQ(cudaMemcpy(after.data(), dA, sizeof(T) * after.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(std::memcmp(after.data(), source.data(), sizeof(T) * source.size()), 0) << name << ": source written";
      }
    }
  }
  cudaFree(dA);
  cudaFree(dL);
  cudaFree(dinfo);
}

TEST(ComplexOnDevice, DoubleOutOfPlaceAndStacksMatchLapack) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_out_of_place_on_device<zdouble>();
}

TEST(ComplexOnDevice, FloatOutOfPlaceAndStacksMatchLapack) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_out_of_place_on_device<std::complex<float>>();
}

// The C API's dense forms for complex matrices in GPU memory (T's own entry points).
struct ZDeviceCalls {
  static constexpr auto potrf = tessera_zpotrf_device;
  static constexpr auto potrf_ex = tessera_zpotrf_device_ex;
  static constexpr auto potrs = tessera_zpotrs_device;
  static constexpr auto posv = tessera_zposv_device;
  static constexpr auto potri = tessera_zpotri_device;
};
struct CDeviceCalls {
  static constexpr auto potrf = tessera_cpotrf_device;
  static constexpr auto potrf_ex = tessera_cpotrf_device_ex;
  static constexpr auto potrs = tessera_cpotrs_device;
  static constexpr auto posv = tessera_cposv_device;
  static constexpr auto potri = tessera_cpotri_device;
};

// posv, then potrs on its factor, then potri on it, both triangles (backward errors and LAPACK's
// inverse ratio); a matrix that is not positive definite at column 70 gives 71 from potrf and,
// in device memory, from potrf_ex; a zero on a factor's diagonal gives its position from potri.
template <class T, class Calls>
void check_dense_c_api_on_device() {
  const int n = 150, ld = 153, nrhs = 2;
  T *dA = nullptr, *dB = nullptr;
  int* dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, sizeof(T) * ld * n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dB, sizeof(T) * ld * nrhs), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dinfo, sizeof(int)), cudaSuccess);
  const auto to_device = [](T* d, const std::vector<T>& M) {
    ASSERT_EQ(cudaMemcpy(d, M.data(), sizeof(T) * M.size(), cudaMemcpyHostToDevice), cudaSuccess);
  };
  const auto from_device = [](const T* d, std::size_t size) {
    std::vector<T> M(size);
    EXPECT_EQ(cudaMemcpy(M.data(), d, sizeof(T) * size, cudaMemcpyDeviceToHost), cudaSuccess);
    return M;
  };
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const char u = uplo == Uplo::lower ? 'L' : 'U';
    const std::string name = to_string(uplo);
    const std::vector<T> A = random_hpd<T>(n, ld, 80);
    const std::vector<T> B = random_rhs<T>(n, nrhs, ld, 81);
    to_device(dA, A);
    to_device(dB, B);
    ASSERT_EQ(Calls::posv(u, n, nrhs, dA, ld, dB, ld, nullptr), 0) << name;
    EXPECT_LT(solve_backward_error(uplo, n, nrhs, A, ld, from_device(dB, B.size()), B, ld), kResidualThreshold) << name;
    to_device(dB, B);
    ASSERT_EQ(Calls::potrs(u, n, nrhs, dA, ld, dB, ld, nullptr), 0) << name;
    EXPECT_LT(solve_backward_error(uplo, n, nrhs, A, ld, from_device(dB, B.size()), B, ld), kResidualThreshold) << name;
    const std::vector<T> factor = from_device(dA, A.size());
    ASSERT_EQ(Calls::potri(u, n, dA, ld, nullptr), 0) << name;
    EXPECT_LT(inverse_ratio(uplo, n, A, from_device(dA, A.size()), ld), kResidualThreshold) << name;
    std::vector<T> singular = factor;
    singular[at(40, 40, ld)] = T(0);
    to_device(dA, singular);
    EXPECT_EQ(Calls::potri(u, n, dA, ld, nullptr), 41) << name;
    EXPECT_EQ(from_device(dA, A.size()), singular) << name << ": changed by a failed inverse";

    std::vector<T> bad = A;
    bad[at(70, 70, ld)] = T(-1);
    to_device(dA, bad);
    EXPECT_EQ(Calls::potrf(u, n, dA, ld, nullptr), 71) << name;
    to_device(dA, bad);
    ASSERT_EQ(cudaMemset(dinfo, 0, sizeof(int)), cudaSuccess);
    ASSERT_EQ(Calls::potrf_ex(u, n, dA, ld, dinfo, nullptr), 0) << name;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    int info = 0;
    ASSERT_EQ(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(info, 71) << name;
  }
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dinfo);
}

TEST(ComplexOnDevice, DoubleDenseCApiFormsGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_dense_c_api_on_device<zdouble, ZDeviceCalls>();
}

TEST(ComplexOnDevice, FloatDenseCApiFormsGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  check_dense_c_api_on_device<std::complex<float>, CDeviceCalls>();
}

// Complex batches in GPU memory through the C API (no runtime): posv in place with a failing
// member, then the checking form's count of failures; each solution against its backward error.
TEST(ComplexOnDevice, BatchesThroughTheCApi) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 45, batch = 9, nrhs = 2;
  const long long stride = static_cast<long long>(n) * n, strideB = static_cast<long long>(n) * nrhs;
  std::vector<zdouble> A(static_cast<std::size_t>(stride) * batch), B(static_cast<std::size_t>(strideB) * batch);
  for (int k = 0; k < batch; ++k) {
    const std::vector<zdouble> a = random_hpd<zdouble>(n, n, 600 + k);
    std::copy(a.begin(), a.end(), A.begin() + k * stride);
    const std::vector<zdouble> b = random_rhs<zdouble>(n, nrhs, n, 700 + k);
    std::copy(b.begin(), b.end(), B.begin() + k * strideB);
  }
  A[5 * stride + at(20, 20, n)] = zdouble(-2, 1);  // matrix 5 fails at column 21
  zdouble *dA = nullptr, *dB = nullptr;
  int* dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, sizeof(zdouble) * A.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dB, sizeof(zdouble) * B.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dinfo, sizeof(int) * batch), cudaSuccess);
  for (char uplo : {'L', 'U'}) {
    ASSERT_EQ(cudaMemcpy(dA, A.data(), sizeof(zdouble) * A.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dB, B.data(), sizeof(zdouble) * B.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(tessera_zposv_batched_device_ex(uplo, n, nrhs, dA, n, stride, dB, n, strideB, batch, dinfo, nullptr), 0);
    std::vector<zdouble> F(A.size()), X(B.size());
    std::vector<int> info(batch);
    ASSERT_EQ(cudaMemcpy(F.data(), dA, sizeof(zdouble) * F.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(X.data(), dB, sizeof(zdouble) * X.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(info.data(), dinfo, sizeof(int) * batch, cudaMemcpyDeviceToHost), cudaSuccess);
    const Uplo u = uplo == 'L' ? Uplo::lower : Uplo::upper;
    for (int k = 0; k < batch; ++k) {
      ASSERT_EQ(info[k], k == 5 ? 21 : 0) << uplo << " matrix " << k;
      const std::vector<zdouble> a(A.begin() + k * stride, A.begin() + (k + 1) * stride);
      const std::vector<zdouble> f(F.begin() + k * stride, F.begin() + (k + 1) * stride);
      const std::vector<zdouble> b(B.begin() + k * strideB, B.begin() + (k + 1) * strideB);
      const std::vector<zdouble> x(X.begin() + k * strideB, X.begin() + (k + 1) * strideB);
      if (k == 5) {
        EXPECT_EQ(x, b) << uplo << ": B of the failed matrix changed";
        continue;
      }
      EXPECT_LT(factor_backward_error(u, n, a, f, n), kResidualThreshold) << uplo << " matrix " << k;
      expect_only_the_triangle_written(u, n, n, a, f, std::string(1, uplo), true);
      EXPECT_LT(solve_backward_error(u, n, nrhs, a, n, x, b, n), kResidualThreshold) << uplo << " matrix " << k;
    }
    ASSERT_EQ(cudaMemcpy(dA, A.data(), sizeof(zdouble) * A.size(), cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<int> host_info(batch, -9);
    EXPECT_EQ(tessera_zpotrf_batched_device(uplo, n, dA, n, stride, batch, host_info.data(), nullptr), 1) << uplo;
    EXPECT_EQ(host_info[5], 21) << uplo;
  }
  EXPECT_EQ(tessera_zpotrf_batched_device_ex('L', n, dA, n - 1, stride, batch, dinfo, nullptr), -4);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dinfo);
}
#endif

}  // namespace
}  // namespace tessera::test
