// Small CUDA helpers on column-major tiles (device pointers, asynchronous on `stream`).
#pragma once

#include <cuda_runtime.h>

#include <complex>

namespace tessera::kernels::cuda {

// dst := src on and below the diagonal, 0 above it; both m x n.
template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream);

// A := the m x n identity (ones on the diagonal, zeros elsewhere).
template <class T>
void set_identity(int m, int n, T* A, int ld, cudaStream_t stream);
// A + k stride := the m x n identity for k < batch.
template <class T>
void set_identity_batched(int m, int n, T* A, int ld, long long stride, int batch, cudaStream_t stream);

// One copy of copy_blocks: dst := src, both m x n (leading dimensions lds, ldd), or only the lower
// triangle (diagonal included, in the block's own (i, j)) when lower_only.
template <class T>
struct BlockCopy {
  const T* src;
  T* dst;
  int lds;
  int ldd;
  int m;
  int n;
  bool lower_only;
};

// Every copy of `copies` (a host array of `count`), 64 to a launch: the gather or scatter of a
// matrix's tiles at once instead of a launch per tile. Columns move 16 bytes at a time where both
// blocks' addresses and leading dimensions allow. No copy may write what another reads or writes.
// A kernel rather than CUDA's 2-D copy, which was slower than even a kernel launched per tile.
template <class T>
void copy_blocks(const BlockCopy<T>* copies, int count, cudaStream_t stream);

// Which triangle (diagonal included) of an n x n matrix an operation writes.
enum class Triangle { lower, upper };

// The triangle `t` of C := alpha W + beta C (both n x n); nothing else of C is written.
void update_triangle(Triangle t, int n, float alpha, const float* W, int ldw, float beta, float* C, int ldc,
                     cudaStream_t stream);

// The 16-bit floating-point formats of the tensor cores' operands.
enum class Float16Format { fp16, bf16 };

// dst := src rounded to nearest in `format` (m x n; dst holds 2-byte elements, leading dimension
// ldd). A value beyond FP16's range becomes infinite.
void round_to_16bit(Float16Format format, int m, int n, const float* src, int lds, void* dst, int ldd,
                    cudaStream_t stream);

// The triangle `to` of dst := the opposite triangle of src, transposed: dst(i, j) = src(j, i) for
// every (i, j) in `to` (conjugated for complex scalars: a Hermitian matrix's other triangle);
// nothing else of either matrix is read or written. src and dst must not
// overlap, except src == dst with lds == ldd: the other triangle is then moved onto `to` in place
// (each thread block reads all its elements before it writes any, and no block writes what another
// reads).
template <class T>
void transpose_triangle(Triangle to, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream);
// The same for each matrix of a stack: src + k * src_stride to dst + k * dst_stride, k < batch.
template <class T>
void transpose_triangle_batched(Triangle to, int n, const T* src, int lds, long long src_stride, T* dst, int ldd,
                                long long dst_stride, int batch, cudaStream_t stream);

// The end of an inverse computed in X's lower triangle (xPOTRI on a lower factor) from the factor
// whose diagonal entry j lies at factor[j * diagonal_stride]: where no diagonal entry of the factor
// is zero (both parts, for complex scalars), X's upper triangle := the conjugate transpose of its
// lower one and its diagonal made real, so that X is the whole Hermitian inverse, and *info := 0;
// where one is, every element of X := NaN and *info := 1 + the column of the first (xTRTRI's
// info; vendors' inverses do not all report it). info (device memory) may be null. One launch.
template <class T>
void finish_inverse(int n, const T* factor, long long diagonal_stride, T* X, int ldx, int* info, cudaStream_t stream);

// dst (n x n, column-major, leading dimension ldd) := the lower triangle of the n x n matrix whose
// element (i, j) lies at src + i * row_stride + j * col_stride, with zeros above the diagonal; every
// element of the n x n block written, nothing of src above its diagonal read. Any strides (a
// C-ordered matrix has row_stride = n, col_stride = 1; swapping them reads the upper triangle,
// transposed). Both reads and writes go along memory through shared memory where a stride is 1.
// src and dst must not overlap. With `conjugate` every element read is conjugated (a Hermitian
// matrix's upper triangle read through swapped strides is its lower one conjugated); real
// elements are their own conjugates.
template <class T>
void load_lower(int n, const T* src, long long row_stride, long long col_stride, T* dst, int ldd, bool conjugate,
                cudaStream_t stream);
// The same for each matrix of a stack: src + k * src_stride to dst + k * dst_stride, k < batch.
template <class T>
void load_lower_batched(int n, const T* src, long long row_stride, long long col_stride, long long src_stride, T* dst,
                        int ldd, long long dst_stride, int batch, bool conjugate, cudaStream_t stream);

// *sum (device memory) := 2 sum log(A(j, j)) over the n diagonal entries of A (a Cholesky factor:
// the log-determinant of its matrix), in double, in a fixed order.
template <class T>
void log_diagonal_sum(int n, const T* A, int ld, double* sum, cudaStream_t stream);

// *first (device memory) := the 1-based position of the first exactly zero diagonal entry of the
// n x n matrix A, 0 when none (xTRTRI's check; `first` written from pageable memory: the call
// returns once that copy has read its value).
template <class T>
void first_zero_diagonal(int n, const T* A, int ld, int* first, cudaStream_t stream);
// A complex entry is zero when both its parts are (ZTRTRI's check).
template <class R>
void first_zero_diagonal(int n, const std::complex<R>* A, int ld, int* first, cudaStream_t stream);

// LAPACK's info of a potrf of the n x n matrix whose factor A now holds, from the `info` the
// factorization wrote (in place, in device memory): a negative info is kept; otherwise the first
// factored column whose diagonal entry is not positive (NaN included) fails, or the reported one
// when none before it does. Vendor and custom factorizations may report a NaN pivot one column late
// or not at all (bench/cuda/survey_potrf_info.cu); reading the diagonal here, on the device, keeps
// the check off the host: one 4-byte read-back instead of n strided elements.
template <class T>
void check_potrf_info(int n, const T* A, int ld, int* info, cudaStream_t stream);

// The diagonal of a complex matrix's real parts is the diagonal of a real matrix over the same
// memory: A(j, j)'s real part lies at real element 2 (j + j ld) = j + j (2 ld + 1). A Cholesky
// factor's diagonal is real, so its checks and its log-determinant read the real parts only.
template <class R>
void check_potrf_info(int n, const std::complex<R>* A, int ld, int* info, cudaStream_t stream) {
  check_potrf_info(n, reinterpret_cast<const R*>(A), 2 * ld + 1, info, stream);
}
template <class R>
void log_diagonal_sum(int n, const std::complex<R>* A, int ld, double* sum, cudaStream_t stream) {
  log_diagonal_sum(n, reinterpret_cast<const R*>(A), 2 * ld + 1, sum, stream);
}

// The same for each matrix of a stack: A + k * stride with info[k], k < batch.
// pointers[k] := base + k * stride for k < batch (pointers in device memory), on `stream`: the
// array of pointers that vendor batched calls take, made without a copy from the host (a copy
// from pageable memory would synchronise the stream).
template <class T>
void strided_pointers(T* base, long long stride, int batch, T** pointers, cudaStream_t stream);

template <class T>
void check_potrf_info_batched(int n, const T* A, int ld, long long stride, int batch, int* info, cudaStream_t stream);
template <class R>
void check_potrf_info_batched(int n, const std::complex<R>* A, int ld, long long stride, int batch, int* info,
                              cudaStream_t stream) {
  check_potrf_info_batched(n, reinterpret_cast<const R*>(A), 2 * ld + 1, 2 * stride, batch, info, stream);
}

}  // namespace tessera::kernels::cuda
