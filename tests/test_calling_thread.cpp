// Small work on host memory runs LAPACK on the calling thread (Path::calling_thread), with LAPACK's
// results and info, through the calls with a runtime and the forms without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_context.hpp"
#include "kernels/cpu/blas.hpp"
#include "process_state.hpp"
#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"
#include "thresholds.hpp"

namespace tessera {
namespace {

template <class T>
class CallingThread : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CallingThread, Scalars);

// Orders around the tile sizes and the table's limit, primes included.
const std::vector<int> kOrders = {1, 2, 31, 63, 65, 127, 251, 379, 384};

// Whether a request doing the work of these matrices runs on the calling thread, by the table.
// One matrix that no GPU could take has the larger limit (a machine without NVIDIA device nodes).
int single_matrix_limit() {
  return detail::nvidia_device_nodes() > 0 ? detail::kThresholds.calling_thread_max_n
                                           : detail::kThresholds.calling_thread_max_n_without_gpus;
}

bool small_work(double matrices, int n, int nrhs) {
  const double largest = matrices == 1 ? single_matrix_limit() : detail::kThresholds.calling_thread_max_n;
  return matrices * n * n * (double(n) + 6.0 * nrhs) <= largest * largest * largest;
}

TYPED_TEST(CallingThread, FactorsAndSolvesAsTheTaskGraphDoes) {
  using T = TypeParam;
  Runtime& rt = test::runtime();
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    for (int n : kOrders) {
      SCOPED_TRACE(std::string(to_string(uplo)) + ", n = " + std::to_string(n));
      const int ld = n + 3, nrhs = 2;
      const std::vector<T> A = test::random_spd<T>(n, ld, 11u + n);
      const std::vector<T> B = test::random_matrix<T>(n, nrhs, ld, 5u + n);
      FactorOptions options;
      options.uplo = uplo;
      ASSERT_TRUE(runs_on_calling_thread(MatrixView<T>::host(n, n, nullptr, ld), 0, options));
      std::vector<T> direct = A;
      EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host(n, n, direct.data(), ld), options), 0);
      EXPECT_LT(test::factor_backward_error(uplo, n, A, direct, ld), test::kResidualThreshold);
      // Through the runtime: the same path, the same factor; the padding and the other triangle
      // untouched, as LAPACK leaves them.
      std::vector<T> through_runtime = A;
      EXPECT_EQ(potrf(rt, n, through_runtime.data(), ld, options), 0);
      EXPECT_EQ(through_runtime, direct);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < ld; ++i) {
          const bool referenced = i < n && (uplo == Uplo::lower ? i >= j : i <= j);
          if (!referenced) ASSERT_EQ(direct[i + std::size_t(j) * ld], A[i + std::size_t(j) * ld]) << i << ", " << j;
        }
      // A task graph (a tile size asked for) agrees to rounding.
      FactorOptions tiled = options;
      tiled.nb = 16;
      ASSERT_FALSE(runs_on_calling_thread(MatrixView<T>::host(n, n, nullptr, ld), 0, tiled));
      std::vector<T> tasks = A;
      EXPECT_EQ(potrf(rt, n, tasks.data(), ld, tiled), 0);
      EXPECT_LT(test::factor_backward_error(uplo, n, A, tasks, ld), test::kResidualThreshold);

      // The solve's work counts its right-hand sides: at the largest orders it runs tasks where a
      // GPU could take it.
      std::vector<T> X = B;
      const auto factor = MatrixView<T>::host(n, n, direct.data(), ld);
      const auto rhs = MatrixView<T>::host(n, nrhs, X.data(), ld);
      EXPECT_EQ(runs_on_calling_thread(factor, nrhs, options), small_work(1, n, nrhs));
      if (runs_on_calling_thread(factor, nrhs, options))
        EXPECT_EQ(potrs_on_calling_thread(factor, rhs, options), 0);
      else
        EXPECT_THROW(potrs_on_calling_thread(factor, rhs, options), InvalidArgument);
      std::vector<T> Z = B;
      EXPECT_EQ(potrs(rt, n, nrhs, direct.data(), ld, Z.data(), ld, options), 0);
      EXPECT_LT(test::solve_backward_error(n, nrhs, A, ld, Z, B, ld), test::kResidualThreshold);
      if (small_work(1, n, nrhs)) EXPECT_EQ(Z, X);
      std::vector<T> F = A, Y = B;
      EXPECT_EQ(posv(rt, n, nrhs, F.data(), ld, Y.data(), ld, options), 0);
      EXPECT_LT(test::solve_backward_error(n, nrhs, A, ld, Y, B, ld), test::kResidualThreshold);
    }
  }
}

// A matrix that is not positive definite at minor k: the identity with -1 at (k, k).
template <class T>
std::vector<T> failing_at(int n, int k) {
  std::vector<T> A(std::size_t(n) * n, T(0));
  for (int i = 0; i < n; ++i) A[i + std::size_t(i) * n] = T(i + 1 == k ? -1 : 2);
  return A;
}

TYPED_TEST(CallingThread, InfoIsLapacksAtEveryPosition) {
  using T = TypeParam;
  Runtime& rt = test::runtime();
  const int n = 37;
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    FactorOptions options;
    options.uplo = uplo;
    for (int k : {1, 2, 18, 36, 37}) {
      SCOPED_TRACE(std::string(to_string(uplo)) + ", k = " + std::to_string(k));
      std::vector<T> A = failing_at<T>(n, k);
      EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host(n, n, A.data(), n), options), k);
      A = failing_at<T>(n, k);
      std::vector<T> B(n, T(1));
      EXPECT_EQ(posv(rt, n, 1, A.data(), n, B.data(), n, options), k);
      EXPECT_EQ(B, std::vector<T>(n, T(1)));  // left as it was
      // A NaN in the referenced triangle at row k - 1 of the lower factor: info k, reported.
      A = failing_at<T>(n, 0);
      const int i = k - 1, j = std::max(0, k - 2);
      A[uplo == Uplo::lower ? i + std::size_t(j) * n : j + std::size_t(i) * n] = std::numeric_limits<T>::quiet_NaN();
      Request r = potrf_async(rt, n, A.data(), n, options);
      EXPECT_EQ(r.wait(), k);
      EXPECT_TRUE(r.non_finite_input());
    }
  }
}

// Upper triangles from the table's calling_thread_upper_as_lower_from_n are factored as the lower
// factor of their transpose: LAPACK's upper factor to rounding, LAPACK's info at every failing
// minor with the leading minor before it factored, nothing outside the triangle touched, for
// every scalar type, on both sides of the order where that path starts and of the order from which
// the call has the program's BLAS threads, and past it with BLAS held at one thread (as a runtime
// holds it), where the swaps are taken again.
template <class T>
class CallingThreadUpper : public ::testing::Test {};
using AllScalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CallingThreadUpper, AllScalars);

// G G^H / n + I for a random G (both triangles), column-major with leading dimension ld, the
// padding rows -7; the diagonal's imaginary parts hold garbage, which LAPACK ignores.
template <class T>
std::vector<T> hermitian_positive_definite(int n, int ld, unsigned seed) {
  constexpr bool complex = kIsComplex<T>;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::complex<double>> G(std::size_t(n) * n);
  for (auto& g : G) g = {dist(gen), complex ? dist(gen) : 0.0};
  std::vector<T> A(std::size_t(ld) * n, T(-7));
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      std::complex<double> sum = i == j ? n : 0;
      for (int p = 0; p < n; ++p) sum += G[i + std::size_t(p) * n] * std::conj(G[j + std::size_t(p) * n]);
      sum /= n;
      if constexpr (complex) {
        A[i + std::size_t(j) * ld] = T(sum);
        A[j + std::size_t(i) * ld] = T(std::conj(sum));
        if (i == j) A[i + std::size_t(i) * ld] = T(sum.real(), 0.25);
      } else {
        A[i + std::size_t(j) * ld] = A[j + std::size_t(i) * ld] = T(sum.real());
      }
    }
  return A;
}

TYPED_TEST(CallingThreadUpper, MatchesLapacksUpperFactorAndInfo) {
  using T = TypeParam;
  using R = RealOf<T>;
  const int from = detail::kThresholds.calling_thread_upper_as_lower_from_n;  // complex double: never swapped
  const int threaded = detail::kThresholds.calling_thread_threaded_blas_from_n;  // direct again from there
  FactorOptions options;
  options.uplo = Uplo::upper;
  options.mode = Mode::cpu;  // the calling thread's larger limit on a machine with GPUs too
  const std::vector<std::pair<int, bool>> cases = {{from - 1, false},     {from, false},     {from + 1, false},
                                                   {2 * from + 1, false}, {threaded - 1, false}, {threaded, false},
                                                   {threaded, true},      {threaded + 1, true}};
  for (const auto& [n, one_thread] : cases) {
    const int ld = n + 2;
    std::optional<detail::SingleThreadedBlas> held;
    if (one_thread) held.emplace();
    for (int k : {0, 1, 2, n / 2, n - 1, n}) {  // k = 0: positive definite
      SCOPED_TRACE("n = " + std::to_string(n) + (one_thread ? " (BLAS held at one thread)" : "") +
                   ", failing minor " + std::to_string(k));
      std::vector<T> A = hermitian_positive_definite<T>(n, ld, 13u + n);
      // The leading minor of order k is not positive definite, the one before it is.
      if (k > 0) A[(k - 1) + std::size_t(k - 1) * ld] = T(-1);
      std::vector<T> F = A, lapack = A;
      EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host(n, n, F.data(), ld), options), k);
      EXPECT_EQ(kernels::cpu::potrf('U', n, lapack.data(), ld), k);
      const int factored = k == 0 ? n : k - 1;
      double largest = 0, difference = 0;
      for (int j = 0; j < factored; ++j)
        for (int i = 0; i <= j; ++i) {
          const std::size_t at = i + std::size_t(j) * ld;
          largest = std::max(largest, double(std::abs(lapack[at])));
          difference = std::max(difference, double(std::abs(F[at] - lapack[at])));
        }
      EXPECT_LE(difference, 100.0 * n * std::numeric_limits<R>::epsilon() * largest);
      for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < ld; ++i) ASSERT_EQ(F[i + std::size_t(j) * ld], A[i + std::size_t(j) * ld]) << i << ", " << j;
    }
  }
}

TEST(CallingThread, BatchesOfSmallWorkRunThereWithInfoPerMatrix) {
  Runtime& rt = test::runtime();
  const int n = 9, count = 5;
  std::vector<double> A;
  for (int k = 0; k < count; ++k) {
    const std::vector<double> m = k == 3 ? failing_at<double>(n, 4) : test::random_spd<double>(n, n, 3u + k);
    A.insert(A.end(), m.begin(), m.end());
  }
  ASSERT_TRUE(runs_on_calling_thread(MatrixView<double>::host_batch(n, n, A.data(), n, n * n, count), 0));
  std::vector<double> F = A, B(std::size_t(n) * count, 1.0);
  std::vector<int> info(count, -1);
  posv_batched(rt, n, 1, F.data(), n, (long long)n * n, B.data(), n, n, count, info.data());
  EXPECT_EQ(info, (std::vector<int>{0, 0, 0, 4, 0}));
  std::vector<double> G = A;
  std::vector<int> direct_info(count, -1);
  EXPECT_EQ(potrf_on_calling_thread(MatrixView<double>::host_batch(n, n, G.data(), n, n * n, count, direct_info.data())),
            0);
  EXPECT_EQ(direct_info, info);
  for (int k = 0; k < count; ++k) {
    if (k == 3) continue;
    const std::vector<double> a(A.begin() + k * n * n, A.begin() + (k + 1) * n * n);
    const std::vector<double> x(B.begin() + k * n, B.begin() + (k + 1) * n), b(n, 1.0);
    EXPECT_LT(test::solve_backward_error(n, 1, a, n, x, b, n), test::kResidualThreshold) << k;
  }
}

// A stack whose work is worth threads is split over the program's BLAS threads: every matrix is
// factored and solved as on its own, each info in its place, failures on both sides of a split.
TYPED_TEST(CallingThread, StacksSplitOverThreadsKeepEachMatrixsFactorAndInfo) {
  using T = TypeParam;
  const int n = 64, count = 41;
  const double split_from = detail::kThresholds.calling_thread_split_from_n;
  ASSERT_GE(double(count) * n * n * n, split_from * split_from * split_from);
  const std::vector<int> failing = {0, 19, 20, 21, 40};
  std::vector<T> A;
  std::vector<int> expected(count, 0);
  for (int k = 0; k < count; ++k) {
    const bool fails = std::find(failing.begin(), failing.end(), k) != failing.end();
    if (fails) expected[k] = 1 + k % n;
    const std::vector<T> m = fails ? failing_at<T>(n, expected[k]) : test::random_spd<T>(n, n, 7u + k);
    A.insert(A.end(), m.begin(), m.end());
  }
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    SCOPED_TRACE(to_string(uplo));
    FactorOptions options;
    options.uplo = uplo;
    const long long stride = static_cast<long long>(n) * n;
    ASSERT_TRUE(runs_on_calling_thread(MatrixView<T>::host_batch(n, n, nullptr, n, stride, count), 0, options));
    std::vector<T> F = A;
    std::vector<int> info(count, -1);
    EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host_batch(n, n, F.data(), n, stride, count, info.data()), options),
              0);
    EXPECT_EQ(info, expected);
    for (int k = 0; k < count; ++k) {
      std::vector<T> one(A.begin() + k * stride, A.begin() + (k + 1) * stride);
      EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host(n, n, one.data(), n), options), expected[k]) << k;
      EXPECT_TRUE(std::equal(one.begin(), one.end(), F.begin() + k * stride)) << "matrix " << k;
    }
    std::vector<T> X(std::size_t(n) * count, T(1));
    const auto factors = MatrixView<T>::host_batch(n, n, F.data(), n, stride, count);
    ASSERT_TRUE(runs_on_calling_thread(factors, 1, options));
    EXPECT_EQ(potrs_on_calling_thread(factors, MatrixView<T>::host_batch(n, 1, X.data(), n, n, count), options), 0);
    for (int k = 0; k < count; ++k) {
      if (expected[k] != 0) continue;
      const std::vector<T> a(A.begin() + k * stride, A.begin() + (k + 1) * stride);
      const std::vector<T> x(X.begin() + k * n, X.begin() + (k + 1) * n), b(n, T(1));
      EXPECT_LT(test::solve_backward_error(n, 1, a, n, x, b, n), test::kResidualThreshold) << k;
    }
  }
}

// The out-of-place form: each matrix's triangle copied from a padded source whose other triangle
// and padding hold NaN, then factored, as the in-place form factors the same triangle with zeros in
// the other; the source comes back bit-identical; failures at the first, a middle and the last
// column; orders on both sides of the unblocked kernel's limit and a stack split over threads.
TYPED_TEST(CallingThread, OutOfPlaceStacksFactorEachTriangleAndLeaveTheSourceAlone) {
  using T = TypeParam;
  for (const auto& [n, count] : {std::pair{5, 7}, std::pair{17, 9}, std::pair{64, 41}}) {
    const int ld = n + 3;
    const long long source_stride = static_cast<long long>(ld) * n + 5, stride = static_cast<long long>(n) * n;
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + to_string(uplo));
      std::vector<T> source(static_cast<std::size_t>(source_stride) * count, std::numeric_limits<T>::quiet_NaN());
      std::vector<T> expected_factors(static_cast<std::size_t>(stride) * count, T(0));
      std::vector<int> expected_info(count, 0);
      for (int k = 0; k < count; ++k) {
        const int fail_at = k == 1 ? 1 : k == 3 ? (n + 1) / 2 : k == count - 1 ? n : 0;
        const std::vector<T> m = fail_at ? failing_at<T>(n, fail_at) : test::random_spd<T>(n, n, 11u + k);
        T* in_source = source.data() + k * source_stride;
        T* in_expected = expected_factors.data() + k * stride;
        for (int j = 0; j < n; ++j)
          for (int i = uplo == Uplo::lower ? j : 0; i < (uplo == Uplo::lower ? n : j + 1); ++i) {
            in_source[i + static_cast<std::size_t>(j) * ld] = m[i + static_cast<std::size_t>(j) * n];
            in_expected[i + static_cast<std::size_t>(j) * n] = m[i + static_cast<std::size_t>(j) * n];
          }
        expected_info[k] = fail_at;
      }
      FactorOptions options;
      options.uplo = uplo;
      // The in-place form on the same triangles, the other one zero.
      std::vector<int> in_place_info(count, -1);
      EXPECT_EQ(potrf_on_calling_thread(MatrixView<T>::host_batch(n, n, expected_factors.data(), n, stride, count,
                                                                  in_place_info.data()),
                                        options),
                0);
      EXPECT_EQ(in_place_info, expected_info);
      const std::vector<T> source_before = source;
      std::vector<T> factors(static_cast<std::size_t>(stride) * count, T(7));
      std::vector<int> info(count, -1);
      const auto A = MatrixView<T>::host_batch(n, n, source.data(), ld, source_stride, count);
      ASSERT_TRUE(runs_on_calling_thread(A, 0, options));
      const auto F = MatrixView<T>::host_batch(n, n, factors.data(), n, stride, count, info.data());
      EXPECT_EQ(potrf_on_calling_thread(A, F, options), 0);
      EXPECT_EQ(info, expected_info);
      EXPECT_TRUE(std::equal(factors.begin(), factors.end(), expected_factors.begin()));
      EXPECT_EQ(std::memcmp(source.data(), source_before.data(), sizeof(T) * source.size()), 0);
    }
  }
  std::vector<double> a(16, 1.0), f(16);
  std::vector<int> info(1);
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host_batch(4, 4, a.data(), 4, 16, 1),
                                       MatrixView<double>::host_batch(3, 3, f.data(), 3, 9, 1, info.data())),
               InvalidArgument);
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host(4, 4, a.data(), 4),
                                       MatrixView<double>::host_batch(4, 4, f.data(), 4, 16, 1, info.data())),
               InvalidArgument);
  // Factors sharing memory with A (but for in place) would be written before A is read.
  std::vector<double> shared(64, 1.0);
  std::vector<int> two(2);
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host_batch(4, 4, shared.data(), 4, 16, 2),
                                       MatrixView<double>::host_batch(4, 4, shared.data() + 8, 4, 16, 2, two.data())),
               InvalidArgument);
}

// The out-of-place inverse: each factor's triangle read where it lies (the other triangle and the
// padding NaN, never read), the whole inverse written (xPOTRI's triangle, bit for bit, and its
// mirror), a factor with a zero on its diagonal reported with xPOTRI's info and an inverse of NaN.
TYPED_TEST(CallingThread, OutOfPlaceInversesAreWholeAndLeaveTheFactorsAlone) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (const auto& [n, count] : {std::pair{5, 7}, std::pair{17, 9}, std::pair{64, 11}}) {
    const int ld = n + 3;
    const long long source_stride = static_cast<long long>(ld) * n + 5, stride = static_cast<long long>(n) * n;
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + to_string(uplo));
      const char letter = uplo == Uplo::lower ? 'L' : 'U';  // the factors'
      const auto in_triangle = [&](int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; };
      std::vector<T> source(static_cast<std::size_t>(source_stride) * count, nan);
      std::vector<T> expected(static_cast<std::size_t>(stride) * count);
      std::vector<int> expected_info(count, 0);
      for (int k = 0; k < count; ++k) {
        std::vector<T> factor = test::random_spd<T>(n, n, 31u + k);
        ASSERT_EQ(kernels::cpu::potrf(letter, n, factor.data(), n), 0);
        const int zero_at = k == 1 ? 1 : k == count - 1 ? (n + 1) / 2 : 0;
        if (zero_at) factor[(zero_at - 1) * (n + 1)] = T(0);
        T* x = expected.data() + k * stride;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            const T value = in_triangle(i, j) ? factor[i + static_cast<std::size_t>(j) * n] : T(0);
            x[i + static_cast<std::size_t>(j) * n] = value;
            if (in_triangle(i, j)) source[k * source_stride + i + static_cast<std::size_t>(j) * ld] = value;
          }
      }
      // The in-place form's triangles (xPOTRI with the same BLAS threads), mirrored, or NaN.
      FactorOptions options;
      options.uplo = uplo;
      EXPECT_EQ(potri_on_calling_thread(
                    MatrixView<T>::host_batch(n, n, expected.data(), n, stride, count, expected_info.data()), options),
                0);
      for (int k = 0; k < count; ++k) {
        T* x = expected.data() + k * stride;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (!in_triangle(i, j) || expected_info[k] != 0)
              x[i + static_cast<std::size_t>(j) * n] = expected_info[k] != 0 ? nan : x[j + static_cast<std::size_t>(i) * n];
      }
      EXPECT_EQ(expected_info[1], 1);
      EXPECT_EQ(expected_info[count - 1], (n + 1) / 2);
      const std::vector<T> source_before = source;
      std::vector<T> inverses(static_cast<std::size_t>(stride) * count, T(7));
      std::vector<int> info(count, -1);
      EXPECT_EQ(potri_on_calling_thread(MatrixView<T>::host_batch(n, n, source.data(), ld, source_stride, count),
                                        MatrixView<T>::host_batch(n, n, inverses.data(), n, stride, count, info.data()),
                                        options),
                0);
      EXPECT_EQ(info, expected_info);
      EXPECT_EQ(std::memcmp(inverses.data(), expected.data(), sizeof(T) * inverses.size()), 0);
      EXPECT_EQ(std::memcmp(source.data(), source_before.data(), sizeof(T) * source.size()), 0);
    }
  }
  std::vector<double> a(64, 1.0), x(64);
  std::vector<int> info(2);
  EXPECT_THROW(potri_on_calling_thread(MatrixView<double>::host_batch(4, 4, a.data(), 4, 16, 2),
                                       MatrixView<double>::host_batch(4, 4, x.data(), 4, 16, 1, info.data())),
               InvalidArgument);
  EXPECT_THROW(potri_on_calling_thread(MatrixView<double>::host(4, 4, a.data(), 4),
                                       MatrixView<double>::host_batch(4, 4, x.data(), 4, 16, 1, info.data())),
               InvalidArgument);
  EXPECT_THROW(potri_on_calling_thread(MatrixView<double>::host_batch(4, 4, a.data(), 4, 16, 2),
                                       MatrixView<double>::host_batch(4, 4, a.data() + 8, 4, 16, 2, info.data())),
               InvalidArgument);
}

TEST(CallingThread, WorkThatRunsTasksAndMisuseAreRefused) {
  const int n = single_matrix_limit() + 1;
  std::vector<double> A(static_cast<std::size_t>(n) * n);  // refused before it is read
  // Larger than the table's limit, GPUs asked for, a tile size asked for: the runtime's.
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host(n, n, A.data(), n)), InvalidArgument);
  FactorOptions gpu;
  gpu.mode = Mode::gpu;
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host(10, 10, A.data(), n), gpu), InvalidArgument);
  FactorOptions tiles;
  tiles.nb = 4;
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host(10, 10, A.data(), n), tiles), InvalidArgument);
  // LAPACK's argument checks, at LAPACK's positions.
  try {
    potrf_on_calling_thread(MatrixView<double>::host(10, 10, A.data(), 5));
    FAIL() << "lda < n accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 4) << e.what();
  }
  EXPECT_THROW(potrf_on_calling_thread(MatrixView<double>::host(10, 9, A.data(), n)), InvalidArgument);
  std::vector<double> B(10, 1.0);
  EXPECT_THROW(posv_on_calling_thread(MatrixView<double>::host(10, 10, A.data(), n),
                                      MatrixView<double>::host(9, 1, B.data(), 10)),
               InvalidArgument);
}

TEST(CallingThread, TheCApiFactorsSmallMatricesThere) {
  const int n = 40;
  const std::vector<double> A = test::random_spd<double>(n, n, 4);
  std::vector<double> F = A, b(n, 1.0);
  EXPECT_EQ(tessera_dposv('U', n, 1, F.data(), n, b.data(), n), 0);
  EXPECT_LT(test::solve_backward_error(n, 1, A, n, b, std::vector<double>(n, 1.0), n), test::kResidualThreshold);
  std::vector<double> failing = failing_at<double>(n, 7);
  EXPECT_EQ(tessera_dpotrf('L', n, failing.data(), n), 7);
  EXPECT_EQ(tessera_dpotrf('L', n, failing.data(), n - 1), -4);
}

}  // namespace
}  // namespace tessera
