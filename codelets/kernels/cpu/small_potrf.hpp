// Cholesky of one small matrix without LAPACK: below a dozen or so columns the call into LAPACK
// (argument checks, a workspace from OpenBLAS's allocator, dispatch) costs several times the
// arithmetic, which a stack of thousands of tiny matrices pays per matrix.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>

#include "blas.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cpu {

namespace small_potrf_detail {

template <class T>
RealOf<T> squared_magnitude(T x) {
  return std::norm(x);  // x * x for a real x
}
// a * b, for complex scalars without the library's recovery of infinities from NaN products
// (a call per product): LAPACK's own arithmetic has none either.
template <class T>
T product(T a, T b) {
  return a * b;
}
template <class R>
std::complex<R> product(std::complex<R> a, std::complex<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

}  // namespace small_potrf_detail

// LAPACK's unblocked potf2, left-looking as it is: the triangle `uplo` ('L' or 'U') of the n x n
// column-major matrix A is overwritten by its Cholesky factor (A = L L^H or U^H U); returns
// LAPACK's info: 0, or the 1-based order of the first leading minor whose pivot is not positive
// (a NaN pivot included, as LAPACK's DISNAN test has it), whose diagonal entry then holds that
// pivot; the columns before it hold the factor of the leading minor, those after it are untouched.
// The other triangle is never read or written. Each column is updated from the finished ones with
// the contiguous loops of column-major storage: an axpy per finished column below the diagonal
// (lower), a dot product of two columns (upper).
template <class T>
int potrf_unblocked(char uplo, int n, T* A, int lda) {
  using small_potrf_detail::product;
  using small_potrf_detail::squared_magnitude;
  using R = RealOf<T>;
  const auto column = [A, lda](int j) { return A + static_cast<std::size_t>(j) * lda; };
  for (int j = 0; j < n; ++j) {
    T* cj = column(j);
    R pivot = std::real(cj[j]);
    if (uplo == 'U') {
      for (int k = 0; k < j; ++k) pivot -= squared_magnitude(cj[k]);
    } else {
      for (int k = 0; k < j; ++k) pivot -= squared_magnitude(column(k)[j]);
    }
    if (!(pivot > R(0))) {
      cj[j] = T(pivot);
      return j + 1;
    }
    const R diagonal = std::sqrt(pivot);
    cj[j] = T(diagonal);
    const R reciprocal = R(1) / diagonal;
    if (uplo == 'U') {
      // Row j of U right of the diagonal: u_ji = (a_ji - sum_k conj(u_kj) u_ki) / u_jj.
      for (int i = j + 1; i < n; ++i) {
        T* ci = column(i);
        T sum = ci[j];
        for (int k = 0; k < j; ++k) sum -= product(adjoint_element(cj[k]), ci[k]);
        ci[j] = sum * reciprocal;
      }
    } else {
      // Column j of L below the diagonal: l_ij = (a_ij - sum_k l_ik conj(l_jk)) / l_jj.
      for (int k = 0; k < j; ++k) {
        const T* ck = column(k);
        const T factor = adjoint_element(ck[j]);
        for (int i = j + 1; i < n; ++i) cj[i] -= product(ck[i], factor);
      }
      for (int i = j + 1; i < n; ++i) cj[i] *= reciprocal;
    }
  }
  return 0;
}

}  // namespace tessera::kernels::cpu
