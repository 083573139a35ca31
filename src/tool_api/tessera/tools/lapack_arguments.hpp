// LAPACK-style argument checks of Tessera's routines: one set of rules behind the C++ API (which
// throws InvalidArgument with the position), the C API (which returns -position) and the LAPACK
// drop-in (INFO = -position, then XERBLA). Each function returns the first bad argument: its
// 1-based position in the routine's argument list below, or position 0 when every argument is
// valid. Nothing is read through the data pointers; the per-matrix arrays of a variable-size
// batch are read only once batch is known to be valid.
//
// Order of the checks. xPOTRF, xPOTRS, xPOSV: reference LAPACK's checks in its order (uplo, n,
// nrhs, lda, ldb), then Tessera's own: sizes beyond int (which only the 64-bit LAPACK interfaces
// can pass), null pointers to matrices that hold elements, and right-hand sides that share an
// element with A (an invalid B: the tasks read A while they write B). Batched routines: sizes in
// order of position (scalars, then the per-matrix arrays), then where the matrices lie (strides,
// offsets), then null pointers, then B sharing memory with A.
//
// Argument lists (the C API's where it has the routine; uplo comes from the options in C++):
//   potrf          uplo 1, n 2, A 3, lda 4
//   potrs, posv    uplo 1, n 2, nrhs 3, A 4, lda 5, B 6, ldb 7
//   posv_refined   uplo 1, n 2, nrhs 3, A 4, lda 5, B 6, ldb 7, X 8, ldx 9 (xSPOSV, xCPOSV: ldx
//                  checked after ldb; X must share no element with A or B, which are read while
//                  it is written)
//   potrf_batched  uplo 1, n 2, A 3, lda 4, strideA 5, batch 6, info 7
//   potrs_batched  uplo 1, n 2, nrhs 3, A 4, lda 5, strideA 6, B 7, ldb 8, strideB 9, batch 10
//   posv_batched   as potrs_batched, then info 11
//   potrf_vbatched uplo 1, n 2, A 3, offsets 4, lda 5, batch 6, info 7
//   potrs_vbatched uplo 1, n 2, nrhs 3, A 4, offsets 5, lda 6, B 7, offsetsB 8, ldb 9, batch 10
//   posv_vbatched  as potrs_vbatched, then info 11
//
// Device-resident batches (tessera/device.hpp; uplo 1 as well):
//   potrf_batched (pointers)  uplo 1, n 2, A_array 3, lda 4, batch 5, info 6
//   potrs_batched (pointers)  uplo 1, n 2, nrhs 3, A_array 4, lda 5, B_array 6, ldb 7, batch 8
//   posv_batched (pointers)   as potrs_batched (pointers), then info 9
//   potrf_vbatched (device)   uplo 1, n 2, max_n 3, A_array 4, lda 5, batch 6, info 7
//   potrs_vbatched (device)   uplo 1, n 2, max_n 3, nrhs 4, A_array 5, lda 6, B_array 7, ldb 8, batch 9
//   posv_vbatched (device)    as potrs_vbatched (device), then info 10
//   strided matrices          uplo 1, n 2, A 3, lda 4, strideA 5, batch 6 (zero_opposite_triangle,
//                             and potrf_batched's checking form, whose host info may be null)
//   potrf_batched (out of place)  uplo 1, n 2, A 3, rowStrideA 4, colStrideA 5, strideA 6, L 7,
//                             ldl 8, strideL 9, batch 10, info 11
// Their pointer arrays and per-matrix sizes lie in device memory and are not read here: only the
// scalars and the arrays' own pointers are checked (a null array is refused once batch > 0).
// The per-matrix sizes n[k], lda[k], ldb[k] of a device-resident variable batch are checked on the
// device (info[k] = -position; tessera/device.hpp).
//
// Strided batches (matrix k at A + k * strideA). With two or more matrices that hold elements,
// strideA >= lda * n and strideB >= ldb * nrhs: whole column-major matrices one after another,
// never overlapping, the rule of cuBLAS's, cuSOLVER's and rocSOLVER's strided batched routines;
// a zero or negative stride is refused then, since the matrices are written. A batch of 0 or 1
// matrices, or matrices with no element (n = 0; nrhs = 0 for B), need no stride: any value, even
// negative, is accepted, because no second matrix is ever addressed.
//
// Out-of-place batches (A_k read through element strides, L_k written column-major): A is only
// read, so its strides may take any value (zero, negative, overlapping matrices). L follows the
// strided rule above (ldl >= max(1, n), strideL >= ldl * n). L must not share memory with A, judged
// on the address ranges the two batches span, except the in-place layout: L == A with
// rowStrideA = 1, colStrideA = ldl and strideA = strideL (strides that no element uses, n <= 1 or
// batch <= 1, may be anything there).
//
// Variable-size batches (matrix k of order n[k] at A + offsets[k], leading dimension lda[k]): the
// matrices holding elements lie in increasing order of offset, each after the end of the
// previous one (offsets[k] >= 0 for the first); an empty matrix's offset is never used.
#pragma once

#include "tessera/export.h"

#include <string>

namespace tessera {

struct ArgumentError {
  int position = 0;       // 1-based position of the first bad argument; 0 when all are valid
  const char* name = "";  // the argument as the list above names it: "lda"
  const char* rule = "";  // what it breaks: "must be >= max(1, n)"
  int matrix = -1;        // a per-matrix array of a variable-size batch: the first matrix it fails for

  explicit operator bool() const noexcept { return position != 0; }
};

// "potrf: lda (argument 4) must be >= max(1, n)"; for a variable-size batch the matrix follows.
TESSERA_EXPORT std::string describe(const char* routine, const ArgumentError& error);

// Reference LAPACK's checks alone, the ones LAPACK itself refuses a call for (the drop-in's INFO).
TESSERA_EXPORT ArgumentError reference_potrf_argument_error(char uplo, long long n, long long lda);
TESSERA_EXPORT ArgumentError reference_potrs_argument_error(char uplo, long long n, long long nrhs, long long lda,
                                                           long long ldb);
TESSERA_EXPORT ArgumentError reference_posv_argument_error(char uplo, long long n, long long nrhs, long long lda,
                                                          long long ldb);
TESSERA_EXPORT ArgumentError reference_posv_refined_argument_error(char uplo, long long n, long long nrhs,
                                                                  long long lda, long long ldb, long long ldx);

// Every check: reference LAPACK's, then Tessera's (what Tessera refuses to run). T is float or double.
template <class T>
TESSERA_EXPORT ArgumentError potrf_argument_error(char uplo, long long n, const T* a, long long lda);
template <class T>
TESSERA_EXPORT ArgumentError potrs_argument_error(char uplo, long long n, long long nrhs, const T* a, long long lda,
                                                  const T* b, long long ldb);
template <class T>
TESSERA_EXPORT ArgumentError posv_argument_error(char uplo, long long n, long long nrhs, const T* a, long long lda,
                                                 const T* b, long long ldb);
// T is double or std::complex<double> (the refined solves' precisions).
template <class T>
TESSERA_EXPORT ArgumentError posv_refined_argument_error(char uplo, long long n, long long nrhs, const T* a,
                                                         long long lda, const T* b, long long ldb, const T* x,
                                                         long long ldx);

// device::posv_refined_batched's list (uplo 1 ... batch 13); T is double or std::complex<double>.
template <class T>
TESSERA_EXPORT ArgumentError posv_refined_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda,
                                                                 long long stride_a, const T* b, int ldb,
                                                                 long long stride_b, const T* x, int ldx,
                                                                 long long stride_x, int batch);

template <class T>
TESSERA_EXPORT ArgumentError potrf_batched_argument_error(char uplo, int n, const T* a, int lda, long long stride_a,
                                                          int batch, const int* info);
template <class T>
TESSERA_EXPORT ArgumentError potrs_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda,
                                                          long long stride_a, const T* b, int ldb, long long stride_b,
                                                          int batch);
template <class T>
TESSERA_EXPORT ArgumentError posv_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda,
                                                         long long stride_a, const T* b, int ldb, long long stride_b,
                                                         int batch, const int* info);

template <class T>
TESSERA_EXPORT ArgumentError potrf_vbatched_argument_error(char uplo, const int* n, const T* a, const long long* offsets,
                                                           const int* lda, int batch, const int* info);
template <class T>
TESSERA_EXPORT ArgumentError potrs_vbatched_argument_error(char uplo, const int* n, int nrhs, const T* a,
                                                           const long long* offsets, const int* lda, const T* b,
                                                           const long long* offsets_b, const int* ldb, int batch);
template <class T>
TESSERA_EXPORT ArgumentError posv_vbatched_argument_error(char uplo, const int* n, int nrhs, const T* a,
                                                          const long long* offsets, const int* lda, const T* b,
                                                          const long long* offsets_b, const int* ldb, int batch,
                                                          const int* info);

// Device-resident batches: nothing is read through the pointers (the list above).
template <class T>
TESSERA_EXPORT ArgumentError strided_matrices_argument_error(char uplo, int n, const T* a, int lda, long long stride_a,
                                                             int batch);
template <class T>
TESSERA_EXPORT ArgumentError potrf_batched_out_of_place_argument_error(char uplo, int n, const T* a,
                                                                       long long row_stride_a,
                                                                       long long col_stride_a, long long stride_a,
                                                                       const T* l, int ldl, long long stride_l,
                                                                       int batch, const int* info);
// The same checks without the info: the out-of-place inverses' (device::potri_batched_ex), whose
// info may be null.
template <class T>
TESSERA_EXPORT ArgumentError out_of_place_matrices_argument_error(char uplo, int n, const T* l,
                                                                  long long row_stride_l, long long col_stride_l,
                                                                  long long stride_l, const T* x, int ldx,
                                                                  long long stride_x, int batch);
template <class T>
TESSERA_EXPORT ArgumentError potrf_out_of_place_argument_error(char uplo, int n, const T* a, long long row_stride_a,
                                                               long long col_stride_a, const T* l, int ldl,
                                                               const int* info);
// device::potrf's out-of-place form, which returns its info: no info among the arguments.
template <class T>
TESSERA_EXPORT ArgumentError potrf_out_of_place_argument_error(char uplo, int n, const T* a, long long row_stride_a,
                                                               long long col_stride_a, const T* l, int ldl);
template <class T>
TESSERA_EXPORT ArgumentError potrf_batched_pointers_argument_error(char uplo, int n, const T* const* a_array, int lda,
                                                                   int batch, const int* info);
template <class T>
TESSERA_EXPORT ArgumentError potrs_batched_pointers_argument_error(char uplo, int n, int nrhs, const T* const* a_array,
                                                                   int lda, const T* const* b_array, int ldb,
                                                                   int batch);
template <class T>
TESSERA_EXPORT ArgumentError posv_batched_pointers_argument_error(char uplo, int n, int nrhs, const T* const* a_array,
                                                                  int lda, const T* const* b_array, int ldb, int batch,
                                                                  const int* info);
template <class T>
TESSERA_EXPORT ArgumentError potrf_vbatched_device_argument_error(char uplo, const int* n, int max_n,
                                                                  const T* const* a_array, const int* lda, int batch,
                                                                  const int* info);
template <class T>
TESSERA_EXPORT ArgumentError potrs_vbatched_device_argument_error(char uplo, const int* n, int max_n, int nrhs,
                                                                  const T* const* a_array, const int* lda,
                                                                  const T* const* b_array, const int* ldb, int batch);
template <class T>
TESSERA_EXPORT ArgumentError posv_vbatched_device_argument_error(char uplo, const int* n, int max_n, int nrhs,
                                                                 const T* const* a_array, const int* lda,
                                                                 const T* const* b_array, const int* ldb, int batch,
                                                                 const int* info);

}  // namespace tessera
