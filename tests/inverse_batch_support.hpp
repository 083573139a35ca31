// Batches of Cholesky factors with LAPACKE's inverse of each, for the tests of the batched
// inverse (xPOTRI on every matrix) on the host and on a GPU: lda = n + 3, matrices lda * n + 5
// apart, NaN in every element outside the referenced triangles; members 1, 2 and 3 of a batch of
// more than 3 have a zero on their factor's diagonal at the first, a middle and the last column.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "tessera/options.hpp"
#include "tessera/precision.hpp"

namespace tessera::test::inverse_batch {

namespace cpu = tessera::kernels::cpu;

// Equal to the bit, NaNs included.
template <class T>
bool identical(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
T nan_value() {
  const RealOf<T> nan = std::numeric_limits<RealOf<T>>::quiet_NaN();
  if constexpr (std::is_floating_point_v<T>)
    return nan;
  else
    return T(nan, nan);
}

template <class T>
T conjugate(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return std::conj(x);
}

template <class T>
T random_entry(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(u(rng));
  else
    return T(static_cast<RealOf<T>>(u(rng)), static_cast<RealOf<T>>(u(rng)));
}

inline char letter(Uplo uplo) { return uplo == Uplo::lower ? 'L' : 'U'; }
inline bool in_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; }

// A batch of factors (lda = n + 3, matrices lda * n + 5 apart, NaN everywhere else) and, for each,
// LAPACKE's inverse in the same storage and the info xPOTRI must report.
template <class T>
struct FactorBatch {
  int n, lda, batch;
  long long stride;
  std::vector<T> factors;
  std::vector<T> inverses;
  std::vector<int> info;
};

// Column that member k of a batch of more than 3 gets a zero at (-1: none).
inline int zero_column(int k, int n, int batch) {
  if (batch <= 3) return -1;
  return k == 1 ? 0 : k == 2 ? n / 2 : k == 3 ? n - 1 : -1;
}

template <class T>
FactorBatch<T> factor_batch(Uplo uplo, int n, int batch, std::mt19937_64& rng) {
  FactorBatch<T> fb{n, n + 3, batch, static_cast<long long>(n + 3) * n + 5, {}, {}, {}};
  fb.factors.assign(static_cast<std::size_t>(fb.stride * batch), nan_value<T>());
  fb.info.assign(static_cast<std::size_t>(batch), 0);
  for (int k = 0; k < batch; ++k) {
    // A = B B^H + n I: well conditioned, so that the inverse is accurate to a few n eps.
    std::vector<T> b(static_cast<std::size_t>(n) * n), a(static_cast<std::size_t>(n) * n, T(0));
    for (T& v : b) v = random_entry<T>(rng);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        T sum = i == j ? T(static_cast<RealOf<T>>(n)) : T(0);
        for (int m = 0; m < n; ++m) {
          if constexpr (std::is_floating_point_v<T>)
            sum += b[i + m * n] * b[j + m * n];
          else
            sum += b[i + m * n] * std::conj(b[j + m * n]);
        }
        a[i + j * n] = sum;
      }
    EXPECT_EQ(cpu::potrf(letter(uplo), n, a.data(), n), 0);
    const int zero = zero_column(k, n, batch);
    if (zero >= 0) {
      a[zero + zero * n] = T(0);
      fb.info[k] = zero + 1;
    }
    T* slot = fb.factors.data() + k * fb.stride;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (in_triangle(uplo, i, j)) slot[i + j * fb.lda] = a[i + j * n];
  }
  fb.inverses = fb.factors;
  for (int k = 0; k < batch; ++k)
    EXPECT_EQ(cpu::potri(letter(uplo), n, fb.inverses.data() + k * fb.stride, fb.lda), fb.info[k]);
  return fb;
}

// The largest |x| of the triangle of member k of the reference inverses.
template <class T>
double largest(const FactorBatch<T>& fb, Uplo uplo, int k) {
  double most = 0;
  for (int j = 0; j < fb.n; ++j)
    for (int i = 0; i < fb.n; ++i)
      if (in_triangle(uplo, i, j)) most = std::max(most, static_cast<double>(std::abs(fb.inverses[k * fb.stride + i + j * fb.lda])));
  return most;
}

inline std::string describe(const char* form, Uplo uplo, int n, int batch) {
  std::ostringstream s;
  s << form << " uplo " << letter(uplo) << " n " << n << " batch " << batch;
  return s.str();
}

template <class T>
double tolerance(const FactorBatch<T>& fb, Uplo uplo, int k) {
  return 50.0 * fb.n * std::numeric_limits<RealOf<T>>::epsilon() * largest(fb, uplo, k);
}

// In place: the reference inverse in the triangle, everything else (and failed members) as it was.
template <class T>
void check_in_place(const FactorBatch<T>& fb, Uplo uplo, const std::vector<T>& out, const std::vector<int>& info,
                    const std::string& where) {
  for (int k = 0; k < fb.batch; ++k) {
    ASSERT_EQ(info[k], fb.info[k]) << where << ": matrix " << k;
    const double tol = tolerance(fb, uplo, k);
    for (long long e = 0; e < fb.stride && k * fb.stride + e < static_cast<long long>(out.size()); ++e) {
      const long long at = k * fb.stride + e;
      const int i = static_cast<int>(e % fb.lda), j = static_cast<int>(e / fb.lda);
      const bool computed = fb.info[k] == 0 && j < fb.n && i < fb.n && in_triangle(uplo, i, j);
      if (!computed) {
        ASSERT_TRUE(identical(out[at], fb.factors[at])) << where << ": matrix " << k << " element " << e << " changed";
        continue;
      }
      ASSERT_LE(std::abs(out[at] - fb.inverses[at]), tol)
          << where << ": matrix " << k << " X(" << i << ", " << j << ") differs from LAPACKE's potri";
      if (i == j) {
        ASSERT_EQ(std::imag(std::complex<double>(out[at])), 0.0) << where << ": a diagonal is not real";
      }
    }
  }
}

}  // namespace tessera::test::inverse_batch
