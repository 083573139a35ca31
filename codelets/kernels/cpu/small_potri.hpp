// The inverse of one small Hermitian positive definite matrix from its Cholesky factor without
// LAPACK: xPOTRI is two calls (the triangle's inverse, then its product with its adjoint), each
// with LAPACK's fixed cost, which for a stack of thousands of tiny matrices is most of the time.
#pragma once

#include <complex>
#include <cstddef>

#include "blas.hpp"
#include "small_potrf.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cpu {

namespace small_potri_detail {

// The triangle `uplo` of the n x n column-major A (a non-unit triangle with no zero on its
// diagonal) replaced by its inverse, column by column as LAPACK's xTRTI2 goes (lower: from the
// last column, upper: from the first), each column's product with the part already inverted taken
// by columns (contiguous multiply-adds).
template <class T>
void invert_triangle(char uplo, int n, T* A, int lda) {
  using small_potrf_detail::product;
  const auto at = [A, lda](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * lda]; };
  const bool lower = uplo == 'L';
  for (int step = 0; step < n; ++step) {
    const int j = lower ? n - 1 - step : step;
    at(j, j) = T(1) / at(j, j);
    const T scale = -at(j, j);
    T* x = &at(0, j);  // column j: rows j + 1 .. n - 1 (lower) or 0 .. j - 1 (upper)
    if (lower) {
      // x := T22 x, T22 = A(j+1:n, j+1:n) inverted: from the last of its columns back.
      for (int k = n - 1; k > j; --k) {
        const T xk = x[k];
        for (int i = n - 1; i > k; --i) x[i] += product(xk, at(i, k));
        x[k] = product(xk, at(k, k));
      }
      for (int i = j + 1; i < n; ++i) x[i] = product(x[i], scale);
    } else {
      // x := T11 x, T11 = A(0:j, 0:j) inverted: from its first column on.
      for (int k = 0; k < j; ++k) {
        const T xk = x[k];
        for (int i = 0; i < k; ++i) x[i] += product(xk, at(i, k));
        x[k] = product(xk, at(k, k));
      }
      for (int i = 0; i < j; ++i) x[i] = product(x[i], scale);
    }
  }
}

// The triangle `uplo` of W^H W (lower: W the inverse of L) or W W^H (upper: W the inverse of U),
// in place over W's triangle: row i of the lower product and column j of the upper one need only
// W's entries from that row or column on, which are not yet overwritten when they are computed in
// increasing order.
template <class T>
void product_with_adjoint(char uplo, int n, T* A, int lda) {
  using small_potrf_detail::product;
  const auto at = [A, lda](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * lda]; };
  if (uplo == 'L') {
    // X(i, j) = sum_{k >= i} conj(W(k, i)) W(k, j), j <= i: dot products down columns i and j.
    for (int i = 0; i < n; ++i) {
      const T* wi = &at(0, i);
      for (int j = 0; j <= i; ++j) {
        const T* wj = &at(0, j);
        T sum = product(adjoint_element(wi[i]), wj[i]);
        for (int k = i + 1; k < n; ++k) sum += product(adjoint_element(wi[k]), wj[k]);
        at(i, j) = j == i ? T(std::real(sum)) : sum;
      }
    }
  } else {
    // X(0:j, j) = sum_{k >= j} W(0:j, k) conj(W(j, k)): column j scaled, then columns k > j added.
    for (int j = 0; j < n; ++j) {
      T* xj = &at(0, j);
      const T wjj = adjoint_element(xj[j]);
      for (int i = 0; i <= j; ++i) xj[i] = product(xj[i], wjj);
      for (int k = j + 1; k < n; ++k) {
        const T* wk = &at(0, k);
        const T factor = adjoint_element(wk[j]);
        for (int i = 0; i <= j; ++i) xj[i] += product(wk[i], factor);
      }
      xj[j] = T(std::real(xj[j]));
    }
  }
}

}  // namespace small_potri_detail

// LAPACK's xPOTRI for a small matrix: the triangle `uplo` ('L' or 'U') of the n x n column-major A,
// which holds potrf's factor there, replaced by that triangle of the inverse of the matrix it
// factors; returns LAPACK's info: 0, or the 1-based position of the first zero on the factor's
// diagonal, A then left as it was. The other triangle is never read or written.
template <class T>
int potri_unblocked(char uplo, int n, T* A, int lda) {
  for (int j = 0; j < n; ++j)
    if (A[j + static_cast<std::size_t>(j) * lda] == T(0)) return j + 1;
  small_potri_detail::invert_triangle(uplo, n, A, lda);
  small_potri_detail::product_with_adjoint(uplo, n, A, lda);
  return 0;
}

}  // namespace tessera::kernels::cpu
