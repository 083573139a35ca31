// Tessera's unblocked potf2 and potri for the smallest matrices (kernels/cpu/small_potrf.hpp,
// small_potri.hpp) against LAPACK's potrf and potri: every order up to past the calling thread's
// limit, both triangles, the four scalar types, a leading dimension larger than the order; the
// factor's backward error, LAPACK's info with the failing pivot in its diagonal entry at every
// failing position (a NaN pivot included), the columns after it and the other triangle untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/small_potrf.hpp"
#include "kernels/cpu/small_potri.hpp"
#include "thresholds.hpp"

namespace tessera {
namespace {

template <class T>
class SmallPotrf : public ::testing::Test {};
using Scalars = ::testing::Types<double, float, std::complex<double>, std::complex<float>>;
TYPED_TEST_SUITE(SmallPotrf, Scalars);

template <class T>
T random_scalar(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_floating_point_v<T>) {
    return T(u(rng));
  } else {
    const double re = u(rng);
    return T(RealOf<T>(re), RealOf<T>(u(rng)));
  }
}

template <class T>
T conj_scalar(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x;
  } else {
    return std::conj(x);
  }
}

// A Hermitian positive definite n x n matrix (G G^H + n I) in an lda x n column-major array whose
// rows past n hold a marker value.
template <class T>
std::vector<T> spd(int n, int lda, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> g(static_cast<std::size_t>(n) * n);
  for (T& x : g) x = random_scalar<T>(rng);
  std::vector<T> a(static_cast<std::size_t>(lda) * n, T(-99));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      T sum = i == j ? T(n) : T(0);
      for (int k = 0; k < n; ++k) sum += g[i + k * n] * conj_scalar(g[j + k * n]);
      a[i + static_cast<std::size_t>(j) * lda] = sum;
    }
  for (int j = 0; j < n; ++j) a[j + static_cast<std::size_t>(j) * lda] = T(std::real(a[j + static_cast<std::size_t>(j) * lda]));
  return a;
}

bool in_triangle(char uplo, int i, int j) { return uplo == 'L' ? i >= j : i <= j; }

// max |A - F F^H| / max |A| over the triangle, F the factor in `f`'s triangle `uplo`.
template <class T>
double backward_error(char uplo, int n, const std::vector<T>& a, const std::vector<T>& f, int lda) {
  const auto factor = [&](int i, int j) {  // L(i, j): the lower factor, whichever triangle holds it
    if (i < j) return T(0);
    return uplo == 'L' ? f[i + static_cast<std::size_t>(j) * lda] : conj_scalar(f[j + static_cast<std::size_t>(i) * lda]);
  };
  double worst = 0, largest = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (!in_triangle(uplo, i, j)) continue;
      T sum(0);
      for (int k = 0; k < n; ++k) sum += factor(i, k) * conj_scalar(factor(j, k));
      worst = std::max(worst, double(std::abs(a[i + static_cast<std::size_t>(j) * lda] - sum)));
      largest = std::max(largest, double(std::abs(a[i + static_cast<std::size_t>(j) * lda])));
    }
  return worst / largest;
}

// The largest magnitude of a finite entry (the marker rows and NaNs aside, which sit beyond it).
template <class T>
double largest(const std::vector<T>& a) {
  double m = 0;
  for (const T& x : a)
    if (std::isfinite(std::abs(x)) && x != T(-99)) m = std::max(m, double(std::abs(x)));
  return m;
}

template <class T>
double unit_roundoff() {
  return std::numeric_limits<RealOf<T>>::epsilon() / 2;
}

TYPED_TEST(SmallPotrf, FactorsAsLapackDoesUpToPastTheLimit) {
  using T = TypeParam;
  const int limit = detail::kThresholds.calling_thread_unblocked_potrf_max_n(kIsComplex<T>, true);
  for (int n = 0; n <= limit + 3; ++n)
    for (char uplo : {'L', 'U'}) {
      const int lda = n + 2;
      const std::vector<T> a = spd<T>(n, lda, 7 + n);
      std::vector<T> ours = a, lapack = a;
      ASSERT_EQ(kernels::cpu::potrf_unblocked(uplo, n, ours.data(), std::max(1, lda)), 0) << n << uplo;
      ASSERT_EQ(kernels::cpu::potrf(uplo, n, lapack.data(), std::max(1, lda)), 0) << n << uplo;
      if (n > 0) EXPECT_LE(backward_error(uplo, n, a, ours, lda), 8 * n * unit_roundoff<T>()) << n << uplo;
      const double tolerance = 16 * n * unit_roundoff<T>() * largest(lapack);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < lda; ++i) {
          const std::size_t at = i + static_cast<std::size_t>(j) * lda;
          if (i < n && in_triangle(uplo, i, j))
            EXPECT_LE(std::abs(ours[at] - lapack[at]), tolerance)
                << "n " << n << " uplo " << uplo << " (" << i << ", " << j << ")";
          else
            EXPECT_EQ(ours[at], a[at]) << "outside the triangle: n " << n << " uplo " << uplo << " (" << i << ", " << j << ")";
        }
    }
}

// The leading minor of order `k` made the first one that is not positive definite: a diagonal
// entry lowered so that its pivot is -1 (or NaN).
template <class T>
void break_minor(std::vector<T>& a, int n, int lda, int k, bool nan) {
  std::vector<T> f = a;
  ASSERT_EQ(kernels::cpu::potrf('L', n, f.data(), lda), 0);
  const std::size_t d = (k - 1) + static_cast<std::size_t>(k - 1) * lda;
  const double pivot = std::norm(f[d]);  // the pivot squared: what k-1 columns leave of a_kk
  a[d] = nan ? T(std::numeric_limits<RealOf<T>>::quiet_NaN()) : T(std::real(a[d]) - RealOf<T>(pivot) - RealOf<T>(1));
}

TYPED_TEST(SmallPotrf, LapacksInfoAndStateAtEveryFailingMinor) {
  using T = TypeParam;
  const int limit = detail::kThresholds.calling_thread_unblocked_potrf_max_n(kIsComplex<T>, true);
  const int lower_limit = detail::kThresholds.calling_thread_unblocked_potrf_max_n(kIsComplex<T>, false);
  // Orders with a part group of entries at the end (7, 9), and each triangle's limit.
  for (int n : {1, 2, 5, 7, 9, lower_limit, limit})
    for (int k = 1; k <= n; ++k)
      for (bool nan : {false, true})
        for (char uplo : {'L', 'U'}) {
          const int lda = n + 1;
          std::vector<T> a = spd<T>(n, lda, 100 + n);
          // The columns (lower) or rows (upper) before the failing one do not depend on the
          // diagonal entry broken: they are those of the unbroken matrix's factor. (LAPACK's own
          // state there is its algorithm's: a blocked potrf that fails in its first block leaves
          // the rows below that block as they were.)
          std::vector<T> unbroken = a;
          ASSERT_EQ(kernels::cpu::potrf(uplo, n, unbroken.data(), lda), 0);
          break_minor(a, n, lda, k, nan);
          std::vector<T> ours = a, lapack = a;
          const double tolerance = 64 * n * unit_roundoff<T>() * largest(a);
          ASSERT_EQ(kernels::cpu::potrf_unblocked(uplo, n, ours.data(), lda), k) << n << uplo << k << nan;
          ASSERT_EQ(kernels::cpu::potrf(uplo, n, lapack.data(), lda), k) << n << uplo << k << nan;
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < lda; ++i) {
              const std::size_t at = i + static_cast<std::size_t>(j) * lda;
              const bool factored = i < n && in_triangle(uplo, i, j) && (uplo == 'L' ? j < k - 1 : i < k - 1 && j >= i);
              const bool failing_diagonal = i == k - 1 && j == k - 1;
              if (failing_diagonal && nan) {
                EXPECT_TRUE(std::isnan(std::real(ours[at]))) << n << uplo << k;
              } else if (failing_diagonal) {
                EXPECT_NEAR(std::real(ours[at]), -1.0, tolerance) << n << uplo << k;
              } else if (factored) {
                EXPECT_LE(std::abs(ours[at] - unbroken[at]), tolerance)
                    << "n " << n << " uplo " << uplo << " k " << k << " (" << i << ", " << j << ")";
              }
              // Columns (lower) or rows (upper) from the failing one on, and the other triangle.
              const bool untouched = uplo == 'L' ? (j >= k - 1 && !failing_diagonal) || i < j
                                                 : (i >= k - 1 && !failing_diagonal) || i > j;
              if (untouched && i < n && !(nan && failing_diagonal))
                EXPECT_TRUE(ours[at] == a[at] || (std::isnan(std::real(a[at])) && std::isnan(std::real(ours[at]))))
                    << "changed: n " << n << " uplo " << uplo << " k " << k << " (" << i << ", " << j << ")";
            }
        }
}

// Tessera's unblocked potri (kernels/cpu/small_potri.hpp) against LAPACK's from the same factor:
// every order up to past the calling thread's limit, both triangles, a leading dimension larger
// than the order; the other triangle and the padding untouched; a zero on the factor's diagonal
// (first, middle, last) gives LAPACK's info and leaves the matrix as it was.
TYPED_TEST(SmallPotrf, InverseFromTheFactorAsLapacksPotriUpToPastTheLimit) {
  using T = TypeParam;
  const int limit = detail::kThresholds.calling_thread_unblocked_potri_max_n(kIsComplex<T>);
  for (int n = 0; n <= limit + 3; ++n)
    for (char uplo : {'L', 'U'}) {
      const int lda = n + 2;
      std::vector<T> factor = spd<T>(n, lda, 300 + n);
      if (n > 0) ASSERT_EQ(kernels::cpu::potrf(uplo, n, factor.data(), lda), 0);
      std::vector<T> ours = factor, lapack = factor;
      ASSERT_EQ(kernels::cpu::potri_unblocked(uplo, n, ours.data(), std::max(1, lda)), 0) << n << uplo;
      if (n > 0) ASSERT_EQ(kernels::cpu::potri(uplo, n, lapack.data(), lda), 0) << n << uplo;
      const double tolerance = 32 * (n + 1) * unit_roundoff<T>() * largest(lapack);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < lda; ++i) {
          const std::size_t at = i + static_cast<std::size_t>(j) * lda;
          if (i < n && in_triangle(uplo, i, j))
            EXPECT_LE(std::abs(ours[at] - lapack[at]), tolerance) << "n " << n << " uplo " << uplo << " (" << i << ", " << j << ")";
          else
            EXPECT_EQ(ours[at], factor[at]) << "outside the triangle: n " << n << " uplo " << uplo << " (" << i << ", " << j << ")";
        }
      for (int zero_at : {1, (n + 1) / 2, n}) {
        if (n == 0) break;
        std::vector<T> singular = factor;
        singular[(zero_at - 1) * static_cast<std::size_t>(lda + 1)] = T(0);
        std::vector<T> before = singular;
        EXPECT_EQ(kernels::cpu::potri_unblocked(uplo, n, singular.data(), lda), zero_at) << n << uplo;
        EXPECT_EQ(kernels::cpu::potri(uplo, n, before.data(), lda), zero_at) << n << uplo;
        EXPECT_EQ(singular, before) << "changed on a zero diagonal: n " << n << " uplo " << uplo;
      }
    }
}

}  // namespace
}  // namespace tessera
