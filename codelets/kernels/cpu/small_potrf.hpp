// Cholesky of one small matrix without LAPACK: below a dozen or so columns the call into LAPACK
// (argument checks, a workspace from OpenBLAS's allocator, dispatch) costs several times the
// arithmetic, which a stack of thousands of tiny matrices pays per matrix; in the real types the
// sums kept in registers below also outrun OpenBLAS's unblocked potf2 into the dozens of columns
// (the orders each triangle takes this kernel up to: thresholds.hpp).
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

// In the real types column j's entries below (lower) or right of (upper) the diagonal are computed
// kGroup at a time, each in a register of its own across the sum over the finished columns:
// independent chains of multiply-adds and one store per entry, where an update of the whole column
// per finished column stored each entry j times. The complex types keep that update (lower) and
// one entry at a time (upper), which measured faster there. Each entry's sum runs in the same order
// either way.
template <class T>
inline constexpr int kGroup = kIsComplex<T> ? 1 : 4;

// LAPACK's unblocked potf2, left-looking as it is: the triangle `uplo` ('L' or 'U') of the n x n
// column-major matrix A is overwritten by its Cholesky factor (A = L L^H or U^H U); returns
// LAPACK's info: 0, or the 1-based order of the first leading minor whose pivot is not positive
// (a NaN pivot included, as LAPACK's DISNAN test has it), whose diagonal entry then holds that
// pivot; the columns before it hold the factor of the leading minor, those after it are untouched.
// The other triangle is never read or written. Each entry is its entry of A less a sum over the
// finished columns, with the contiguous loops of column-major storage: multiply-adds down the
// finished columns (lower), a dot product of two columns (upper).
template <class T>
int potrf_unblocked(char uplo, int n, T* A, int lda) {
  using small_potrf_detail::product;
  using small_potrf_detail::squared_magnitude;
  using R = RealOf<T>;
  constexpr int group = kGroup<T>;
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
    int i = j + 1;
    if (uplo == 'U') {
      // Row j of U right of the diagonal: u_ji = (a_ji - sum_k conj(u_kj) u_ki) / u_jj.
      for (; group > 1 && i + group <= n; i += group) {
        T sum[group];
        for (int g = 0; g < group; ++g) sum[g] = column(i + g)[j];
        for (int k = 0; k < j; ++k) {
          const T factor = adjoint_element(cj[k]);
          for (int g = 0; g < group; ++g) sum[g] -= product(factor, column(i + g)[k]);
        }
        for (int g = 0; g < group; ++g) column(i + g)[j] = sum[g] * reciprocal;
      }
      for (; i < n; ++i) {
        T* ci = column(i);
        T sum = ci[j];
        for (int k = 0; k < j; ++k) sum -= product(adjoint_element(cj[k]), ci[k]);
        ci[j] = sum * reciprocal;
      }
    } else {
      // Column j of L below the diagonal: l_ij = (a_ij - sum_k l_ik conj(l_jk)) / l_jj.
      if constexpr (group > 1) {
        for (; i + group <= n; i += group) {
          T sum[group];
          for (int g = 0; g < group; ++g) sum[g] = cj[i + g];
          for (int k = 0; k < j; ++k) {
            const T* ck = column(k);
            const T factor = adjoint_element(ck[j]);
            for (int g = 0; g < group; ++g) sum[g] -= product(ck[i + g], factor);
          }
          for (int g = 0; g < group; ++g) cj[i + g] = sum[g] * reciprocal;
        }
        for (; i < n; ++i) {
          T sum = cj[i];
          for (int k = 0; k < j; ++k) sum -= product(column(k)[i], adjoint_element(column(k)[j]));
          cj[i] = sum * reciprocal;
        }
      } else {
        for (int k = 0; k < j; ++k) {
          const T* ck = column(k);
          const T factor = adjoint_element(ck[j]);
          for (int r = i; r < n; ++r) cj[r] -= product(ck[r], factor);
        }
        for (int r = i; r < n; ++r) cj[r] *= reciprocal;
      }
    }
  }
  return 0;
}

}  // namespace tessera::kernels::cpu
