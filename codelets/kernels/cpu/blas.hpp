// CPU tile kernels: thin typed wrappers over single-threaded OpenBLAS/LAPACKE calls, column-major.
// Plain functions of (sizes, pointers, leading dimensions) that the codelets and tests call.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "column_copy.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cpu {

// LAPACK's info from the info `reported` by a potrf and the factor it left in A: OpenBLAS's potrf
// takes a NaN pivot for a positive one (its test is ajj <= 0) and goes on, where LAPACK stops at
// it. The first diagonal entry of the factor that is not positive, before the column reported,
// is the first failing leading minor (sqrt of a positive pivot is positive, +inf included).
template <class T>
int info_with_nan_pivots(int reported, int n, const T* A, int lda) {
  if (reported < 0) return reported;
  const int factored = reported > 0 ? reported - 1 : n;
  for (int j = 0; j < factored; ++j)
    if (!(std::real(A[j + static_cast<std::size_t>(j) * lda]) > RealOf<T>(0))) return j + 1;
  return reported;
}

// Complex scalars as LAPACKE and CBLAS take them (the same layout as std::complex).
inline lapack_complex_float* lapack_ptr(std::complex<float>* p) { return reinterpret_cast<lapack_complex_float*>(p); }
inline lapack_complex_double* lapack_ptr(std::complex<double>* p) { return reinterpret_cast<lapack_complex_double*>(p); }
inline const lapack_complex_float* lapack_ptr(const std::complex<float>* p) {
  return reinterpret_cast<const lapack_complex_float*>(p);
}
inline const lapack_complex_double* lapack_ptr(const std::complex<double>* p) {
  return reinterpret_cast<const lapack_complex_double*>(p);
}

// Cholesky of the triangle uplo ('L' or 'U') of the n x n matrix A; returns LAPACK info (1-based
// column of the failing minor, a NaN pivot included).
inline int potrf(char uplo, int n, double* A, int lda) {
  return info_with_nan_pivots(LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, A, lda), n, A, lda);
}
inline int potrf(char uplo, int n, float* A, int lda) {
  return info_with_nan_pivots(LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, A, lda), n, A, lda);
}
inline int potrf(char uplo, int n, std::complex<double>* A, int lda) {
  return info_with_nan_pivots(LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda), n, A, lda);
}
inline int potrf(char uplo, int n, std::complex<float>* A, int lda) {
  return info_with_nan_pivots(LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda), n, A, lda);
}
inline int potrs(char uplo, int n, int nrhs, const double* A, int lda, double* B, int ldb) {
  return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}
inline int potrs(char uplo, int n, int nrhs, const float* A, int lda, float* B, int ldb) {
  return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}
inline int potrs(char uplo, int n, int nrhs, const std::complex<double>* A, int lda, std::complex<double>* B, int ldb) {
  return LAPACKE_zpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, lapack_ptr(A), lda, lapack_ptr(B), ldb);
}
inline int potrs(char uplo, int n, int nrhs, const std::complex<float>* A, int lda, std::complex<float>* B, int ldb) {
  return LAPACKE_cpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, lapack_ptr(A), lda, lapack_ptr(B), ldb);
}

// The inverse of the non-unit triangle uplo of A, in place (LAPACK's xTRTRI); returns its info (k > 0:
// A(k, k) is zero, nothing changed).
inline int trtri(char uplo, int n, double* A, int lda) {
  return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, A, lda);
}
inline int trtri(char uplo, int n, float* A, int lda) {
  return LAPACKE_strtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, A, lda);
}
inline int trtri(char uplo, int n, std::complex<double>* A, int lda) {
  return LAPACKE_ztrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, lapack_ptr(A), lda);
}
inline int trtri(char uplo, int n, std::complex<float>* A, int lda) {
  return LAPACKE_ctrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, lapack_ptr(A), lda);
}
// The triangle uplo of L^H L (uplo 'L') or U U^H ('U'), in place (LAPACK's xLAUUM).
inline void lauum(char uplo, int n, double* A, int lda) { LAPACKE_dlauum_work(LAPACK_COL_MAJOR, uplo, n, A, lda); }
inline void lauum(char uplo, int n, float* A, int lda) { LAPACKE_slauum_work(LAPACK_COL_MAJOR, uplo, n, A, lda); }
inline void lauum(char uplo, int n, std::complex<double>* A, int lda) {
  LAPACKE_zlauum_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda);
}
inline void lauum(char uplo, int n, std::complex<float>* A, int lda) {
  LAPACKE_clauum_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda);
}
// A factor's inverse A^{-1} in the triangle uplo, in place (LAPACK's xPOTRI); returns its info.
inline int potri(char uplo, int n, double* A, int lda) {
  return LAPACKE_dpotri_work(LAPACK_COL_MAJOR, uplo, n, A, lda);
}
inline int potri(char uplo, int n, float* A, int lda) {
  return LAPACKE_spotri_work(LAPACK_COL_MAJOR, uplo, n, A, lda);
}
inline int potri(char uplo, int n, std::complex<double>* A, int lda) {
  return LAPACKE_zpotri_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda);
}
inline int potri(char uplo, int n, std::complex<float>* A, int lda) {
  return LAPACKE_cpotri_work(LAPACK_COL_MAJOR, uplo, n, lapack_ptr(A), lda);
}

inline CBLAS_UPLO cblas_uplo(char uplo) { return uplo == 'U' ? CblasUpper : CblasLower; }
// BLAS's op of a Trans for real scalars: the conjugate transpose is the transpose.
inline CBLAS_TRANSPOSE cblas_trans(Trans trans) { return trans == Trans::no ? CblasNoTrans : CblasTrans; }
// ... and for complex ones, where they differ.
inline CBLAS_TRANSPOSE cblas_complex_trans(Trans trans) {
  return trans == Trans::no ? CblasNoTrans : trans == Trans::transpose ? CblasTrans : CblasConjTrans;
}

// C := alpha op(A) op(B) + beta C; C m x n.
inline void gemm(Trans transa, Trans transb, int m, int n, int k, double alpha, const double* A, int lda,
                 const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, cblas_trans(transa), cblas_trans(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void gemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, cblas_trans(transa), cblas_trans(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

inline void gemm(Trans transa, Trans transb, int m, int n, int k, std::complex<double> alpha,
                 const std::complex<double>* A, int lda, const std::complex<double>* B, int ldb,
                 std::complex<double> beta, std::complex<double>* C, int ldc) {
  cblas_zgemm(CblasColMajor, cblas_complex_trans(transa), cblas_complex_trans(transb), m, n, k, &alpha, A, lda, B, ldb,
              &beta, C, ldc);
}
inline void gemm(Trans transa, Trans transb, int m, int n, int k, std::complex<float> alpha, const std::complex<float>* A,
                 int lda, const std::complex<float>* B, int ldb, std::complex<float> beta, std::complex<float>* C,
                 int ldc) {
  cblas_cgemm(CblasColMajor, cblas_complex_trans(transa), cblas_complex_trans(transb), m, n, k, &alpha, A, lda, B, ldb,
              &beta, C, ldc);
}

// B := alpha op(A) B (left) or alpha B op(A) (right); A non-unit triangular (triangle uplo).
inline void trmm(bool left, char uplo, Trans trans, int m, int n, double alpha, const double* A, int lda, double* B,
                 int ldb) {
  cblas_dtrmm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, A, lda, B, ldb);
}
inline void trmm(bool left, char uplo, Trans trans, int m, int n, float alpha, const float* A, int lda, float* B,
                 int ldb) {
  cblas_strmm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, A, lda, B, ldb);
}

inline void trmm(bool left, char uplo, Trans trans, int m, int n, std::complex<double> alpha,
                 const std::complex<double>* A, int lda, std::complex<double>* B, int ldb) {
  cblas_ztrmm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_complex_trans(trans), CblasNonUnit,
              m, n, &alpha, A, lda, B, ldb);
}
inline void trmm(bool left, char uplo, Trans trans, int m, int n, std::complex<float> alpha, const std::complex<float>* A,
                 int lda, std::complex<float>* B, int ldb) {
  cblas_ctrmm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_complex_trans(trans), CblasNonUnit,
              m, n, &alpha, A, lda, B, ldb);
}

// B := alpha op(A)^{-1} B (left) or alpha B op(A)^{-1} (right); A triangular (triangle uplo,
// 'L' or 'U'), non-unit: OpenBLAS's trsm, for a block of at most kTrsmLeaf along A.
inline void blas_trsm(bool left, char uplo, Trans trans, int m, int n, double alpha, const double* A, int lda, double* B,
                      int ldb) {
  cblas_dtrsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, A, lda, B, ldb);
}
inline void blas_trsm(bool left, char uplo, Trans trans, int m, int n, float alpha, const float* A, int lda, float* B,
                      int ldb) {
  cblas_strsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_trans(trans), CblasNonUnit, m, n,
              alpha, A, lda, B, ldb);
}

inline void blas_trsm(bool left, char uplo, Trans trans, int m, int n, std::complex<double> alpha,
                      const std::complex<double>* A, int lda, std::complex<double>* B, int ldb) {
  cblas_ztrsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_complex_trans(trans), CblasNonUnit,
              m, n, &alpha, A, lda, B, ldb);
}
inline void blas_trsm(bool left, char uplo, Trans trans, int m, int n, std::complex<float> alpha,
                      const std::complex<float>* A, int lda, std::complex<float>* B, int ldb) {
  cblas_ctrsm(CblasColMajor, left ? CblasLeft : CblasRight, cblas_uplo(uplo), cblas_complex_trans(trans), CblasNonUnit,
              m, n, &alpha, A, lda, B, ldb);
}

// The order below which trsm calls OpenBLAS's own: single-threaded, its trsm of a tile runs well
// below its gemm's rate; halving A until blocks of 32 and updating with gemm in between closes most
// of the gap.
constexpr int kTrsmLeaf = 32;

// The same solve, recursive: A halved along its order, the block solved first updating the
// other half of B with one gemm (op(A)'s off-diagonal block is A's, A21 for uplo 'L' and A12 for
// 'U', transposed with trans).
template <class T>
void trsm(bool left, char uplo, Trans trans, int m, int n, T alpha, const T* A, int lda, T* B, int ldb) {
  const int k = left ? m : n;
  if (k <= kTrsmLeaf) return blas_trsm(left, uplo, trans, m, n, alpha, A, lda, B, ldb);
  if (alpha != T(1))
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) B[i + static_cast<long>(j) * ldb] *= alpha;
  const int k1 = k / 2, k2 = k - k1;
  const T* A11 = A;
  const T* A22 = A + k1 + static_cast<long>(k1) * lda;
  const T* off = uplo == 'L' ? A + k1 : A + static_cast<long>(k1) * lda;
  const bool lower_op = (uplo == 'L') == (trans == Trans::no);  // op(A) is lower triangular
  if (left) {  // op(A) X = B, B split into rows B1 (k1) and B2 (k2)
    T* B1 = B;
    T* B2 = B + k1;
    if (lower_op) {
      trsm(true, uplo, trans, k1, n, T(1), A11, lda, B1, ldb);
      gemm(trans, Trans::no, k2, n, k1, T(-1), off, lda, B1, ldb, T(1), B2, ldb);
      trsm(true, uplo, trans, k2, n, T(1), A22, lda, B2, ldb);
    } else {
      trsm(true, uplo, trans, k2, n, T(1), A22, lda, B2, ldb);
      gemm(trans, Trans::no, k1, n, k2, T(-1), off, lda, B2, ldb, T(1), B1, ldb);
      trsm(true, uplo, trans, k1, n, T(1), A11, lda, B1, ldb);
    }
  } else {  // X op(A) = B, B split into columns B1 (k1) and B2 (k2)
    T* B1 = B;
    T* B2 = B + static_cast<long>(k1) * ldb;
    if (lower_op) {
      trsm(false, uplo, trans, m, k2, T(1), A22, lda, B2, ldb);
      gemm(Trans::no, trans, m, k1, k2, T(-1), B2, ldb, off, lda, T(1), B1, ldb);
      trsm(false, uplo, trans, m, k1, T(1), A11, lda, B1, ldb);
    } else {
      trsm(false, uplo, trans, m, k1, T(1), A11, lda, B1, ldb);
      gemm(Trans::no, trans, m, k2, k1, T(-1), B1, ldb, off, lda, T(1), B2, ldb);
      trsm(false, uplo, trans, m, k2, T(1), A22, lda, B2, ldb);
    }
  }
}

// C := alpha op(A) op(A)^T + beta C on the triangle uplo; C n x n, op(A) n x k (op(A) = A^T with a transposing trans).
inline void syrk(char uplo, Trans trans, int n, int k, double alpha, const double* A, int lda, double beta, double* C,
                 int ldc) {
  cblas_dsyrk(CblasColMajor, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, beta, C, ldc);
}
inline void syrk(char uplo, Trans trans, int n, int k, float alpha, const float* A, int lda, float beta, float* C,
                 int ldc) {
  cblas_ssyrk(CblasColMajor, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, beta, C, ldc);
}

// For complex scalars the same update of a Hermitian C is herk, C := alpha op(A) op(A)^H + beta C
// (op conjugate-transposing), with real alpha and beta: the imaginary parts of C's diagonal are
// taken as zero and set to zero.
inline void syrk(char uplo, Trans trans, int n, int k, std::complex<double> alpha, const std::complex<double>* A,
                 int lda, std::complex<double> beta, std::complex<double>* C, int ldc) {
  cblas_zherk(CblasColMajor, cblas_uplo(uplo), trans == Trans::no ? CblasNoTrans : CblasConjTrans, n, k, alpha.real(), A,
              lda, beta.real(), C, ldc);
}
inline void syrk(char uplo, Trans trans, int n, int k, std::complex<float> alpha, const std::complex<float>* A, int lda,
                 std::complex<float> beta, std::complex<float>* C, int ldc) {
  cblas_cherk(CblasColMajor, cblas_uplo(uplo), trans == Trans::no ? CblasNoTrans : CblasConjTrans, n, k, alpha.real(), A,
              lda, beta.real(), C, ldc);
}

// A tile's element as its adjoint holds it: x for real scalars, conj(x) for complex ones (the
// block (j, i) of a Hermitian matrix is the conjugate transpose of the block (i, j)).
template <class T>
T adjoint_element(T x) {
  if constexpr (kIsComplex<T>)
    return std::conj(x);
  else
    return x;
}

// Side of the square blocks a transposed copy works in (32 doubles: 8 cache lines per column).
constexpr int kTransposeBlock = 32;

// Copies the m x n block src (leading dimension lds) into dst (ldd), or its transpose (then dst
// is n x m; the conjugate transpose for complex scalars). With lower_only, only entries on or
// below the diagonal of dst are written. `stores` applies to the copy that is not transposed.
template <class T>
void copy_block(bool transpose, bool lower_only, int m, int n, const T* src, int lds, T* dst, int ldd,
                Stores stores = Stores::cached) {
  const int rows = transpose ? n : m;
  const int cols = transpose ? m : n;
  if (!transpose) {
    for (int j = 0; j < cols; ++j) {
      const int first = lower_only ? std::min(j, rows) : 0;
      copy_column(src + first + static_cast<long>(j) * lds, rows - first, dst + first + static_cast<long>(j) * ldd, stores);
    }
    if (stores == Stores::streaming) finish_streaming();
    return;
  }
  // A transposed copy reads src across its columns: square blocks keep the lines it reads in
  // cache until every element of them has been used (element by element, copying an upper-stored
  // matrix in and out took longer than factoring it on a GPU).
  const int block = kTransposeBlock;
  for (int j0 = 0; j0 < cols; j0 += block)
    for (int i0 = lower_only ? j0 : 0; i0 < rows; i0 += block)
      for (int j = j0; j < std::min(j0 + block, cols); ++j)
        for (int i = std::max(i0, lower_only ? j : 0); i < std::min(i0 + block, rows); ++i)
          dst[i + static_cast<long>(j) * ldd] = adjoint_element(src[j + static_cast<long>(i) * lds]);
}

// Whether an entry is a NaN or infinity (for complex scalars, either part).
template <class T>
bool is_non_finite(T x) {
  if constexpr (kIsComplex<T>)
    return !std::isfinite(x.real()) || !std::isfinite(x.imag());
  else
    return !std::isfinite(x);
}

// The first of the entries a[first..end) that is a NaN or infinity, or -1.
template <class T>
int first_non_finite_between(const T* a, int first, int end) {
  if (first >= end || !any_non_finite(a + first, end - first)) return -1;
  for (int i = first; i < end; ++i)
    if (is_non_finite(a[i])) return i;
  return -1;
}

// The smallest row of the m x n block holding a NaN or infinity (on or below the diagonal with
// lower_only), or -1: the scan of a block loaded into a tile (copy_block) or that is its own tile.
template <class T>
int first_non_finite_row(bool lower_only, int m, int n, const T* A, int lda) {
  int first_bad_row = -1;
  for (int j = 0; j < n; ++j) {
    const int end = first_bad_row < 0 ? m : first_bad_row;  // rows below a bad one found already do not matter
    const int bad = first_non_finite_between(A + static_cast<long>(j) * lda, lower_only ? j : 0, end);
    if (bad >= 0) first_bad_row = bad;
  }
  return first_bad_row;
}

// copy_block (not transposed) followed by first_non_finite_row of the copy, in one pass: each
// column is checked as it is copied (copy_column_and_check), and only a column with a NaN or
// infinity is scanned again, in cache. A second pass over the tile would read it from memory.
template <class T>
int copy_block_and_find_non_finite_row(bool lower_only, int m, int n, const T* src, int lds, T* dst, int ldd,
                                       Stores stores = Stores::cached) {
  int first_bad_row = -1;
  for (int j = 0; j < n; ++j) {
    const int first = lower_only ? std::min(j, m) : 0;
    const T* s = src + static_cast<long>(j) * lds;
    if (!copy_column_and_check(s + first, m - first, dst + first + static_cast<long>(j) * ldd, stores)) continue;
    const int bad = first_non_finite_between(s, first, first_bad_row < 0 ? m : first_bad_row);
    if (bad >= 0) first_bad_row = bad;
  }
  if (stores == Stores::streaming) finish_streaming();
  return first_bad_row;
}

// Copies the m x n block src (leading dimension lds) into dst (ldd), or with upper_only (a square
// block) its entries on and above the diagonal.
// With upper_only the block's first column is column first_column of the square block whose
// diagonal it follows (a piece of a diagonal block, cut by whole columns).
template <class T>
void copy_columns(bool upper_only, int m, int n, const T* src, int lds, T* dst, int ldd, Stores stores = Stores::cached,
                  int first_column = 0) {
  for (int j = 0; j < n; ++j) {
    const int rows = upper_only ? std::min(first_column + j + 1, m) : m;
    copy_column(src + static_cast<long>(j) * lds, rows, dst + static_cast<long>(j) * ldd, stores);
  }
  if (stores == Stores::streaming) finish_streaming();
}

// The smallest column of the m x n block holding a NaN or infinity (on or above the diagonal with
// upper_only), or -1: the scan of a transposed tile (copy_columns).
template <class T>
int first_non_finite_column(bool upper_only, int m, int n, const T* A, int lda) {
  for (int j = 0; j < n; ++j)
    if (any_non_finite(A + static_cast<long>(j) * lda, upper_only ? std::min(j + 1, m) : m)) return j;
  return -1;
}

// copy_columns followed by first_non_finite_column of the copy, in one pass (as
// copy_block_and_find_non_finite_row).
template <class T>
int copy_columns_and_find_non_finite_column(bool upper_only, int m, int n, const T* src, int lds, T* dst, int ldd,
                                            Stores stores = Stores::cached, int first_column = 0) {
  int first_bad_column = -1;
  for (int j = 0; j < n; ++j) {
    const int rows = upper_only ? std::min(first_column + j + 1, m) : m;
    const bool bad = copy_column_and_check(src + static_cast<long>(j) * lds, rows, dst + static_cast<long>(j) * ldd, stores);
    if (bad && first_bad_column < 0) first_bad_column = j;
  }
  if (stores == Stores::streaming) finish_streaming();
  return first_bad_column;
}

// dst(j, i) := src(i, j) for i >= j (n x n; conjugated for complex scalars): the lower triangle of
// a tile into the upper triangle of a column-major block, in cache-sized blocks as in copy_block.
template <class T>
void copy_lower_to_upper_transposed(int n, const T* src, int lds, T* dst, int ldd) {
  for (int j0 = 0; j0 < n; j0 += kTransposeBlock)
    for (int i0 = j0; i0 < n; i0 += kTransposeBlock)
      for (int i = i0; i < std::min(i0 + kTransposeBlock, n); ++i)
        for (int j = j0; j <= std::min({j0 + kTransposeBlock - 1, i, n - 1}); ++j)
          dst[j + static_cast<long>(i) * ldd] = adjoint_element(src[i + static_cast<long>(j) * lds]);
}

// dst := src on and below the diagonal, 0 above it (n x n tiles).
template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) dst[i + static_cast<long>(j) * ldd] = i >= j ? src[i + static_cast<long>(j) * lds] : T(0);
}

// C := alpha A B + beta C with A symmetric (real) or Hermitian (complex), n x n, its triangle uplo
// referenced; B and C n x nrhs.
inline void symm(char uplo, int n, int nrhs, double alpha, const double* A, int lda, const double* B, int ldb,
                 double beta, double* C, int ldc) {
  cblas_dsymm(CblasColMajor, CblasLeft, cblas_uplo(uplo), n, nrhs, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void symm(char uplo, int n, int nrhs, std::complex<double> alpha, const std::complex<double>* A, int lda,
                 const std::complex<double>* B, int ldb, std::complex<double> beta, std::complex<double>* C, int ldc) {
  cblas_zhemm(CblasColMajor, CblasLeft, cblas_uplo(uplo), n, nrhs, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

// LAPACK's infinity norm of a symmetric (Hermitian) matrix from its triangle uplo (xLANSY, xLANHE);
// work holds n values. The _work forms: a NaN is part of the norm, not a refused argument.
inline double symmetric_inf_norm(char uplo, int n, const double* A, int lda, double* work) {
  return LAPACKE_dlansy_work(LAPACK_COL_MAJOR, 'I', uplo, n, A, lda, work);
}
inline double symmetric_inf_norm(char uplo, int n, const std::complex<double>* A, int lda, double* work) {
  return LAPACKE_zlanhe_work(LAPACK_COL_MAJOR, 'I', uplo, n, lapack_ptr(A), lda, work);
}

// Adds the column sums of |A| (m x n) to colsum[0..n) and its row sums to rowsum[0..m); with
// lower_only (square diagonal tile) only the lower triangle counts, and the diagonal goes to the
// column sums alone, so that colsum + rowsum of a symmetric matrix gives its full column sums.
template <class T>
void abs_sums(bool lower_only, int m, int n, const T* A, int lda, RealOf<T>* colsum, RealOf<T>* rowsum) {
  for (int j = 0; j < n; ++j) {
    RealOf<T> s = 0;
    for (int i = lower_only ? j : 0; i < m; ++i) {
      const RealOf<T> a = std::abs(A[i + static_cast<long>(j) * lda]);
      s += a;
      if (!lower_only || i != j) rowsum[i] += a;
    }
    colsum[j] += s;
  }
}

}  // namespace tessera::kernels::cpu
