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

// r := b - A x for the symmetric (Hermitian) A stored in its triangle uplo and vectors x, b, r (r
// may be b): the triangle read once, the sum in a fixed order (the same r every run). `work` holds
// symmetric_residual_workspace(n) elements (about n^2 / 64).
std::size_t symmetric_residual_workspace(int n);
void symmetric_residual(char uplo, int n, const double* A, long long lda, const double* x, const double* b, double* r,
                        double* work, cudaStream_t stream);
void symmetric_residual(char uplo, int n, const std::complex<double>* A, long long lda, const std::complex<double>* x,
                        const std::complex<double>* b, std::complex<double>* r, std::complex<double>* work,
                        cudaStream_t stream);

// largest[j] := the magnitude IxAMAX picks in column j of M (n x cols): the first entry's unless a
// later one is strictly larger, so that a NaN is kept only where it comes first.
void largest_magnitudes(int n, int cols, const double* M, long long ldm, double* largest, cudaStream_t stream);
void largest_magnitudes(int n, int cols, const std::complex<double>* M, long long ldm, double* largest,
                        cudaStream_t stream);

// non_finite[j] := 1 where column j of M (n x cols) holds a NaN or an infinity, else 0.
void mark_non_finite_columns(int n, int cols, const double* M, long long ldm, int* non_finite, cudaStream_t stream);
void mark_non_finite_columns(int n, int cols, const std::complex<double>* M, long long ldm, int* non_finite,
                             cudaStream_t stream);

}  // namespace tessera::kernels::cuda
