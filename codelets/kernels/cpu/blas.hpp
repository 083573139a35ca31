// CPU tile kernels: thin typed wrappers over single-threaded OpenBLAS/LAPACKE calls, column-major.
// Plain functions of (sizes, pointers, leading dimensions) that the codelets and tests call.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace tessera::kernels::cpu {

// Cholesky of the triangle uplo ('L' or 'U') of the n x n matrix A; returns LAPACK info (1-based
// column of the failing minor).
inline int potrf(char uplo, int n, double* A, int lda) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, A, lda); }
inline int potrf(char uplo, int n, float* A, int lda) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, A, lda); }
inline int potrs(char uplo, int n, int nrhs, const double* A, int lda, double* B, int ldb) {
  return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}
inline int potrs(char uplo, int n, int nrhs, const float* A, int lda, float* B, int ldb) {
  return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}

inline CBLAS_UPLO cblas_uplo(char uplo) { return uplo == 'U' ? CblasUpper : CblasLower; }
inline CBLAS_TRANSPOSE cblas_trans(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// B := alpha op(L)^{-1} B (left) or alpha B op(L)^{-1} (right); L triangular (triangle uplo), non-unit.
inline void trsm(bool left, char uplo, bool trans, int m, int n, double alpha, const double* L, int ldl, double* B,
                 int ldb) {
  cblas_dtrsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, L, ldl, B, ldb);
}
inline void trsm(bool left, char uplo, bool trans, int m, int n, float alpha, const float* L, int ldl, float* B,
                 int ldb) {
  cblas_strsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, L, ldl, B, ldb);
}

// C := alpha op(A) op(A)^T + beta C on the triangle uplo; C n x n, op(A) n x k (op(A) = A^T with trans).
inline void syrk(char uplo, bool trans, int n, int k, double alpha, const double* A, int lda, double beta, double* C,
                 int ldc) {
  cblas_dsyrk(CblasColMajor, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, beta, C, ldc);
}
inline void syrk(char uplo, bool trans, int n, int k, float alpha, const float* A, int lda, float beta, float* C,
                 int ldc) {
  cblas_ssyrk(CblasColMajor, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, beta, C, ldc);
}

// C := alpha op(A) op(B) + beta C; C m x n.
inline void gemm(bool transa, bool transb, int m, int n, int k, double alpha, const double* A, int lda,
                 const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void gemm(bool transa, bool transb, int m, int n, int k, float alpha, const float* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Side of the square blocks a transposed copy works in (32 doubles: 8 cache lines per column).
constexpr int kTransposeBlock = 32;

// Copies the m x n block src (leading dimension lds) into dst (ldd), or its transpose (then dst
// is n x m). With lower_only, only entries on or below the diagonal of dst are written and
// scanned. Returns the smallest row of dst holding a NaN or infinity, or -1.
template <class T>
int copy_block(bool transpose, bool lower_only, int m, int n, const T* src, int lds, T* dst, int ldd) {
  const int rows = transpose ? n : m;
  const int cols = transpose ? m : n;
  int first_bad_row = -1;
  // A transposed copy reads src across its columns: square blocks keep the lines it reads in
  // cache until every element of them has been used (element by element, an upper-stored matrix
  // of order 16384 copied in and out took longer than factoring it on an H100).
  const int block = transpose ? kTransposeBlock : std::max(rows, 1);
  for (int j0 = 0; j0 < cols; j0 += block)
    for (int i0 = lower_only ? j0 : 0; i0 < rows; i0 += block)
      for (int j = j0; j < std::min(j0 + block, cols); ++j)
        for (int i = std::max(i0, lower_only ? j : 0); i < std::min(i0 + block, rows); ++i) {
          const T v = transpose ? src[j + static_cast<long>(i) * lds] : src[i + static_cast<long>(j) * lds];
          dst[i + static_cast<long>(j) * ldd] = v;
          if (!std::isfinite(v) && (first_bad_row < 0 || i < first_bad_row)) first_bad_row = i;
        }
  return first_bad_row;
}

// The smallest row of the m x n block holding a NaN or infinity (on or below the diagonal with
// lower_only), or -1: copy_block's scan for a block that is its own tile (no copy to make).
template <class T>
int first_non_finite_row(bool lower_only, int m, int n, const T* A, int lda) {
  int first_bad_row = -1;
  for (int j = 0; j < n; ++j)
    for (int i = lower_only ? j : 0; i < m && (first_bad_row < 0 || i < first_bad_row); ++i)
      if (!std::isfinite(A[i + static_cast<long>(j) * lda])) first_bad_row = i;
  return first_bad_row;
}

// Copies the m x n block src (leading dimension lds) into dst (ldd), or with upper_only (a square
// block) its entries on and above the diagonal. Returns the smallest column holding a NaN or
// infinity, or -1.
template <class T>
int copy_columns(bool upper_only, int m, int n, const T* src, int lds, T* dst, int ldd) {
  int first_bad_column = -1;
  for (int j = 0; j < n; ++j) {
    const int rows = upper_only ? std::min(j + 1, m) : m;
    const T* s = src + static_cast<long>(j) * lds;
    T* d = dst + static_cast<long>(j) * ldd;
    std::copy(s, s + rows, d);
    if (first_bad_column < 0 && !std::all_of(s, s + rows, [](T v) { return std::isfinite(v); })) first_bad_column = j;
  }
  return first_bad_column;
}

// The smallest column of the m x n block holding a NaN or infinity (on or above the diagonal with
// upper_only), or -1: copy_columns's scan for a block that is its own tile.
template <class T>
int first_non_finite_column(bool upper_only, int m, int n, const T* A, int lda) {
  for (int j = 0; j < n; ++j) {
    const T* a = A + static_cast<long>(j) * lda;
    if (!std::all_of(a, a + (upper_only ? std::min(j + 1, m) : m), [](T v) { return std::isfinite(v); })) return j;
  }
  return -1;
}

// dst(j, i) := src(i, j) for i >= j (n x n): the lower triangle of a tile into the upper triangle
// of a column-major block, in cache-sized blocks as in copy_block.
template <class T>
void copy_lower_to_upper_transposed(int n, const T* src, int lds, T* dst, int ldd) {
  for (int j0 = 0; j0 < n; j0 += kTransposeBlock)
    for (int i0 = j0; i0 < n; i0 += kTransposeBlock)
      for (int i = i0; i < std::min(i0 + kTransposeBlock, n); ++i)
        for (int j = j0; j <= std::min({j0 + kTransposeBlock - 1, i, n - 1}); ++j)
          dst[j + static_cast<long>(i) * ldd] = src[i + static_cast<long>(j) * lds];
}

// dst := src on and below the diagonal, 0 above it (n x n tiles).
template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) dst[i + static_cast<long>(j) * ldd] = i >= j ? src[i + static_cast<long>(j) * lds] : T(0);
}

// Adds the column sums of |A| (m x n) to colsum[0..n) and its row sums to rowsum[0..m); with
// lower_only (square diagonal tile) only the lower triangle counts, and the diagonal goes to the
// column sums alone, so that colsum + rowsum of a symmetric matrix gives its full column sums.
template <class T>
void abs_sums(bool lower_only, int m, int n, const T* A, int lda, T* colsum, T* rowsum) {
  for (int j = 0; j < n; ++j) {
    T s = 0;
    for (int i = lower_only ? j : 0; i < m; ++i) {
      const T a = std::abs(A[i + static_cast<long>(j) * lda]);
      s += a;
      if (!lower_only || i != j) rowsum[i] += a;
    }
    colsum[j] += s;
  }
}

}  // namespace tessera::kernels::cpu
