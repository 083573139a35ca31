// GMRES of the refined solve's GMRES-IR (src/api/gmres.hpp) on small systems with a known
// solution, real and complex: a full cycle with no preconditioner solves to the tolerance; the
// exact inverse as preconditioner needs one step; the tolerance stops it early; a preconditioner
// that fails leaves d at 0 and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "gmres.hpp"

namespace tessera::detail {
namespace {

template <class T>
class Gmres : public ::testing::Test {};
using Scalars = ::testing::Types<double, std::complex<double>>;
TYPED_TEST_SUITE(Gmres, Scalars);

template <class T>
T random_value(std::mt19937& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_same_v<T, double>) {
    return u(gen);
  } else {
    const double re = u(gen);
    return {re, u(gen)};
  }
}

// A nonsymmetric n x n matrix (column-major) with its diagonal shifted by n / 2: well conditioned.
template <class T>
std::vector<T> system_matrix(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<T> a(static_cast<std::size_t>(n) * n);
  for (T& x : a) x = random_value<T>(gen);
  for (int i = 0; i < n; ++i) a[i + static_cast<std::size_t>(i) * n] += T(n / 2.0);
  return a;
}

template <class T>
void multiply(int n, const std::vector<T>& a, const T* v, T* out) {
  for (int i = 0; i < n; ++i) out[i] = T(0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) out[i] += a[i + static_cast<std::size_t>(j) * n] * v[j];
}

template <class T>
double largest_difference(const std::vector<T>& x, const std::vector<T>& y) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

TYPED_TEST(Gmres, SolvesToTheToleranceWithoutPreconditioner) {
  using T = TypeParam;
  const int n = 37;
  const std::vector<T> a = system_matrix<T>(n, 3);
  std::mt19937 gen(4);
  std::vector<T> solution(n), r(n), d(n, T(99));
  for (T& x : solution) x = random_value<T>(gen);
  multiply(n, a, solution.data(), r.data());
  const auto times_a = [&](const T* v, T* out) { multiply(n, a, v, out); };
  const auto identity = [&](const T* v, T* out) {
    std::copy(v, v + n, out);
    return true;
  };
  const GmresResult result = gmres(n, r.data(), d.data(), n, 1e-12, times_a, identity);
  EXPECT_TRUE(result.converged);
  EXPECT_FALSE(result.preconditioner_failed);
  EXPECT_GT(result.iterations, 1);
  EXPECT_LE(result.iterations, n);
  EXPECT_LT(largest_difference(d, solution), 1e-10);

  // A looser tolerance stops sooner, with a correspondingly rougher d.
  std::vector<T> rough(n);
  const GmresResult early = gmres(n, r.data(), rough.data(), n, 1e-3, times_a, identity);
  EXPECT_TRUE(early.converged);
  EXPECT_LT(early.iterations, result.iterations);
  EXPECT_LT(largest_difference(rough, solution), 1e-1);
  EXPECT_GT(largest_difference(rough, solution), 1e-12);
}

TYPED_TEST(Gmres, TheExactInverseAsPreconditionerTakesOneStep) {
  using T = TypeParam;
  const int n = 12;
  // A diagonal system, whose inverse is known exactly.
  std::vector<T> a(static_cast<std::size_t>(n) * n, T(0)), r(n), d(n);
  for (int i = 0; i < n; ++i) {
    a[i + static_cast<std::size_t>(i) * n] = T(1.0 + i);
    r[i] = T(2.0 * (1.0 + i));  // solution: all 2
  }
  const auto times_a = [&](const T* v, T* out) { multiply(n, a, v, out); };
  const auto inverse = [&](const T* v, T* out) {
    for (int i = 0; i < n; ++i) out[i] = v[i] / T(1.0 + i);
    return true;
  };
  const GmresResult result = gmres(n, r.data(), d.data(), n, 1e-12, times_a, inverse);
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 1);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(std::abs(d[i] - T(2)), 0.0, 1e-13) << i;
}

TYPED_TEST(Gmres, AFailingPreconditionerLeavesDAtZero) {
  using T = TypeParam;
  const int n = 9;
  const std::vector<T> a = system_matrix<T>(n, 5);
  std::vector<T> r(n, T(1)), d(n, T(7));
  const auto times_a = [&](const T* v, T* out) { multiply(n, a, v, out); };
  for (int fail_at : {0, 2}) {
    int calls = 0;
    const auto failing = [&](const T* v, T* out) {
      std::copy(v, v + n, out);
      return calls++ < fail_at;
    };
    const GmresResult result = gmres(n, r.data(), d.data(), n, 1e-12, times_a, failing);
    EXPECT_TRUE(result.preconditioner_failed) << fail_at;
    EXPECT_FALSE(result.converged) << fail_at;
    for (const T& x : d) EXPECT_EQ(x, T(0)) << fail_at;
  }
}

}  // namespace
}  // namespace tessera::detail
