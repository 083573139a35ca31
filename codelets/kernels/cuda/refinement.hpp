// The element-wise steps of a refined solve on the GPU (device::posv_refined): a double-precision
// SPD matrix A is factored as As = S A S in single precision, S = diag(1 / sqrt(a_ii)), whose
// entries (and its factor's) lie in [-1, 1] for an SPD A: no operand of a low-precision product
// can overflow. A^{-1} = S As^{-1} S, so a correction is S As^{-1} (S r). Column-major, device
// pointers, asynchronous on `stream`. A complex A is Hermitian: the imaginary parts of its
// diagonal are not read (taken as zero, as LAPACK does), an upper one is read conjugated, and
// magnitudes are LAPACK's: the modulus in the norm (ZLANHE), |re| + |im| in IZAMAX's pick.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstddef>

namespace tessera::kernels::cuda {

// Bits of the word `flags` (device memory, one int) the steps below set; the caller zeroes it.
enum RefinementFlag : int {
  kScaledOverflow = 1,     // a scaled value beyond single precision's range (not a NaN)
  kDiagonalNotPositive = 2,  // a diagonal entry of A not positive and finite: no S exists
};

// scale[i] := 1 / sqrt(a_ii); As's lower triangle (ld lds) := S A S rounded to single precision,
// from A's triangle uplo ('L' or 'U', ld lda; an upper A is read transposed); row_sums as
// symmetric_row_sums gives them, from the same pass over A. As's strict upper triangle is not
// written.
void scale_and_narrow(char uplo, int n, const double* A, long long lda, double* scale, float* As, long long lds,
                      double* row_sums, int* flags, cudaStream_t stream);
void scale_and_narrow(char uplo, int n, const std::complex<double>* A, long long lda, double* scale,
                      std::complex<float>* As, long long lds, double* row_sums, int* flags, cudaStream_t stream);

// Z := S R in single precision (n x nrhs).
void narrow_scaled(int n, int nrhs, const double* scale, const double* R, long long ldr, float* Z, long long ldz,
                   int* flags, cudaStream_t stream);
void narrow_scaled(int n, int nrhs, const double* scale, const std::complex<double>* R, long long ldr,
                   std::complex<float>* Z, long long ldz, int* flags, cudaStream_t stream);

// X := S Z (add false) or X += S Z (add true), in double precision (n x nrhs).
void widen_scaled(bool add, int n, int nrhs, const double* scale, const float* Z, long long ldz, double* X,
                  long long ldx, cudaStream_t stream);
void widen_scaled(bool add, int n, int nrhs, const double* scale, const std::complex<float>* Z, long long ldz,
                  std::complex<double>* X, long long ldx, cudaStream_t stream);

// sums[i] := sum_j |a_ij| over the symmetric A stored in its triangle uplo (its infinity norm is
// the largest of them).
void symmetric_row_sums(char uplo, int n, const double* A, long long lda, double* sums, cudaStream_t stream);

// R := B - A X for the symmetric (Hermitian) A stored in its triangle uplo and n x nrhs matrices X,
// B, R (R may be B, with ldr = ldb), nrhs <= symmetric_residual_most_columns<T>(): the triangle read
// once, the sums in a fixed order (the same R every run). `work` holds
// symmetric_residual_workspace(n, nrhs) elements (about nrhs n^2 / 64).
template <class T>
constexpr int symmetric_residual_most_columns() {
  return sizeof(T) == sizeof(double) ? 4 : 2;  // the shares' registers and shared memory
}
std::size_t symmetric_residual_workspace(int n, int nrhs);
void symmetric_residual(char uplo, int n, int nrhs, const double* A, long long lda, const double* X, long long ldx,
                        const double* B, long long ldb, double* R, long long ldr, double* work, cudaStream_t stream);
void symmetric_residual(char uplo, int n, int nrhs, const std::complex<double>* A, long long lda,
                        const std::complex<double>* X, long long ldx, const std::complex<double>* B, long long ldb,
                        std::complex<double>* R, long long ldr, std::complex<double>* work, cudaStream_t stream);

// largest[j] := the magnitude IxAMAX picks in column j of M (n x cols): the first entry's unless a
// later one is strictly larger, so that a NaN is kept only where it comes first.
void largest_magnitudes(int n, int cols, const double* M, long long ldm, double* largest, cudaStream_t stream);
void largest_magnitudes(int n, int cols, const std::complex<double>* M, long long ldm, double* largest,
                        cudaStream_t stream);

// non_finite[j] := 1 where column j of M (n x cols) holds a NaN or an infinity, else 0.
void mark_non_finite_columns(int n, int cols, const double* M, long long ldm, int* non_finite, cudaStream_t stream);
void mark_non_finite_columns(int n, int cols, const std::complex<double>* M, long long ldm, int* non_finite,
                             cudaStream_t stream);

// ---- batches: matrix k of a strided batch, one block of threads per matrix -----------------------
//
// The steps of device::posv_refined_batched. Each matrix's refinement has a state (state[k],
// device, batch ints); a step works on the matrices still refining and leaves the others alone.
// The scaled copies, the right-hand sides in single precision (Z) and the residuals (R) are the
// steps' own arrays: As_k n x n at As + k n^2, Z_k and R_k n x nrhs at k n nrhs, leading dimension n.
enum BatchedRefinementState : int {
  kBatchRefining = 0,
  kBatchConverged = 1,
  kBatchOverflowed = 2,    // a scaled value beyond single precision's range (ITER -2)
  kBatchSingleFailed = 3,  // no S (a diagonal entry not positive and finite) or spotrf failed (-3)
  kBatchNotConverged = 4,  // 30 corrections, or X diverged to a NaN or an infinity (-31)
};

// scale_k := 1 / sqrt(diag(A_k)); As_k's lower triangle := S_k A_k S_k in single precision (from A_k's
// triangle uplo); bound[k] := ||A_k||_inf eps sqrt(n) (eps of double: LAPACK's convergence test);
// state[k] := kBatchRefining, kBatchOverflowed or kBatchSingleFailed.
void batched_scale_and_narrow(char uplo, int n, const double* A, long long lda, long long strideA, double* scale,
                              float* As, double* bound, int* state, int batch, cudaStream_t stream);
void batched_scale_and_narrow(char uplo, int n, const std::complex<double>* A, long long lda, long long strideA,
                              double* scale, std::complex<float>* As, double* bound, int* state, int batch,
                              cudaStream_t stream);

// A matrix still refining whose single-precision factorization failed (info[k] != 0) stops there.
void batched_stop_failed_factorizations(const int* info, int* state, int batch, cudaStream_t stream);

// Z_k := S_k V_k in single precision, V_k n x nrhs at V + k strideV (leading dimension ldv): the
// right-hand sides, then the residuals; a value beyond single precision's range stops the matrix
// (kBatchOverflowed).
void batched_narrow_scaled(int n, int nrhs, const double* scale, const double* V, long long ldv, long long strideV,
                           float* Z, int* state, int batch, cudaStream_t stream);
void batched_narrow_scaled(int n, int nrhs, const double* scale, const std::complex<double>* V, long long ldv,
                           long long strideV, std::complex<float>* Z, int* state, int batch, cudaStream_t stream);

// X_k := S_k Z_k (add false) or X_k += S_k Z_k (add true), in double precision.
void batched_widen_scaled(bool add, int n, int nrhs, const double* scale, const float* Z, double* X, long long ldx,
                          long long strideX, const int* state, int batch, cudaStream_t stream);
void batched_widen_scaled(bool add, int n, int nrhs, const double* scale, const std::complex<float>* Z,
                          std::complex<double>* X, long long ldx, long long strideX, const int* state, int batch,
                          cudaStream_t stream);

// R_k := B_k - A_k X_k, then LAPACK's test on every column (max|r| <= max|x| bound[k], IxAMAX's
// magnitudes): a matrix whose columns all pass is kBatchConverged with steps[k] := iteration; one
// with a column of X holding a NaN or an infinity where B's column is finite, or still failing at
// the last iteration, is kBatchNotConverged; *refining (zeroed by the call) counts the rest.
void batched_residual_test(char uplo, int n, int nrhs, const double* A, long long lda, long long strideA,
                           const double* B, long long ldb, long long strideB, const double* X, long long ldx,
                           long long strideX, double* R, const double* bound, int iteration, bool last, int* state,
                           int* steps, int* refining, int batch, cudaStream_t stream);
void batched_residual_test(char uplo, int n, int nrhs, const std::complex<double>* A, long long lda, long long strideA,
                           const std::complex<double>* B, long long ldb, long long strideB,
                           const std::complex<double>* X, long long ldx, long long strideX, std::complex<double>* R,
                           const double* bound, int iteration, bool last, int* state, int* steps, int* refining,
                           int batch, cudaStream_t stream);

// X_k := B_k for the `count` matrices k = which[m], m < count, whose info[m] is 0 (device ints;
// which null: k = m).
void batched_copy_selected(int n, int nrhs, const double* B, long long ldb, long long strideB, double* X, long long ldx,
                           long long strideX, const int* which, const int* info, int count, cudaStream_t stream);
void batched_copy_selected(int n, int nrhs, const std::complex<double>* B, long long ldb, long long strideB,
                           std::complex<double>* X, long long ldx, long long strideX, const int* which, const int* info,
                           int count, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
