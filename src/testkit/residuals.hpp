// Backward errors computed in double on the host: what `tessera batched` reports for a solve, and
// what the library's tests hold every solve to; and the bound every command's check uses.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace tessera::testkit {

// A scaled backward error (in units of n eps) passes below this, LAPACK's test-suite threshold:
// rounding alone exceeds 1 on the smallest systems (the factor of the 1 x 1 matrix [2], a 2 x 2
// solve), a wrong answer is orders of magnitude above.
constexpr double kBackwardErrorThreshold = 30.0;

// ||A X - B||_1 / (||A||_1 ||X||_1 n eps) of one system with the symmetric A in full storage; NaN
// when the residual of a right-hand side is NaN, so that a NaN never passes for a small error.
template <class T>
double solve_backward_error(int n, int nrhs, const T* A, int lda, const T* X, int ldx, const T* B, int ldb) {
  double nr = 0, na = 0, nx = 0;
  for (int j = 0; j < n; ++j) {
    double a = 0;
    for (int i = 0; i < n; ++i) a += std::abs(double(A[i + static_cast<std::size_t>(j) * lda]));
    na = std::max(na, a);
  }
  for (int r = 0; r < nrhs; ++r) {
    double res = 0, x = 0;
    for (int i = 0; i < n; ++i) {
      double ax = 0;
      for (int l = 0; l < n; ++l)
        ax += double(A[i + static_cast<std::size_t>(l) * lda]) * X[l + static_cast<std::size_t>(r) * ldx];
      res += std::abs(ax - B[i + static_cast<std::size_t>(r) * ldb]);
      x += std::abs(double(X[i + static_cast<std::size_t>(r) * ldx]));
    }
    nr = std::isnan(res) ? res : std::max(nr, res);
    nx = std::max(nx, x);
  }
  return nr / (na * std::max(nx, 1e-300) * n * std::numeric_limits<T>::epsilon());
}

}  // namespace tessera::testkit
