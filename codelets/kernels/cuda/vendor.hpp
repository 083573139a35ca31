// Typed wrappers over the cuBLAS and cuSOLVER calls the tile codelets use (column-major, device
// pointers, asynchronous on the handle's stream). Every status is checked.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <type_traits>

#include "check.hpp"
#include "matrix_utils.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda::vendor {

// cuBLAS's op of a Trans for real scalars: the conjugate transpose is the transpose.
inline cublasOperation_t op(Trans trans) { return trans == Trans::no ? CUBLAS_OP_N : CUBLAS_OP_T; }
// ... and for complex ones, where they differ.
inline cublasOperation_t complex_op(Trans trans) {
  return trans == Trans::no ? CUBLAS_OP_N : trans == Trans::transpose ? CUBLAS_OP_T : CUBLAS_OP_C;
}

// Complex scalars as cuBLAS and cuSOLVER take them (the same layout as std::complex).
inline cuDoubleComplex* cu(std::complex<double>* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
inline cuComplex* cu(std::complex<float>* p) { return reinterpret_cast<cuComplex*>(p); }
inline const cuDoubleComplex* cu(const std::complex<double>* p) { return reinterpret_cast<const cuDoubleComplex*>(p); }
inline const cuComplex* cu(const std::complex<float>* p) { return reinterpret_cast<const cuComplex*>(p); }
// The triangle of a tile, as LAPACK's letter ('L' or 'U').
inline cublasFillMode_t fill(char uplo) { return uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }

// Workspace elements cuSOLVER needs for potrf on the triangle uplo of an n x n tile.
inline int potrf_workspace(cusolverDnHandle_t h, char uplo, int n, double* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(h, fill(uplo), n, A, lda, &lwork));
  return lwork;
}
inline int potrf_workspace(cusolverDnHandle_t h, char uplo, int n, float* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(h, fill(uplo), n, A, lda, &lwork));
  return lwork;
}
inline int potrf_workspace(cusolverDnHandle_t h, char uplo, int n, std::complex<double>* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnZpotrf_bufferSize(h, fill(uplo), n, cu(A), lda, &lwork));
  return lwork;
}
inline int potrf_workspace(cusolverDnHandle_t h, char uplo, int n, std::complex<float>* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnCpotrf_bufferSize(h, fill(uplo), n, cu(A), lda, &lwork));
  return lwork;
}
// Writes LAPACK info to the device int *d_info.
inline void potrf(cusolverDnHandle_t h, char uplo, int n, double* A, int lda, double* work, int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(h, fill(uplo), n, A, lda, work, lwork, d_info));
}
inline void potrf(cusolverDnHandle_t h, char uplo, int n, float* A, int lda, float* work, int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf(h, fill(uplo), n, A, lda, work, lwork, d_info));
}

inline void potrf(cusolverDnHandle_t h, char uplo, int n, std::complex<double>* A, int lda, std::complex<double>* work,
                  int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnZpotrf(h, fill(uplo), n, cu(A), lda, cu(work), lwork, d_info));
}
inline void potrf(cusolverDnHandle_t h, char uplo, int n, std::complex<float>* A, int lda, std::complex<float>* work,
                  int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnCpotrf(h, fill(uplo), n, cu(A), lda, cu(work), lwork, d_info));
}

// cuSOLVER's batched potrf: the matrices at the device pointers of `A` (device memory, batch of
// them), each n x n with leading dimension lda, its info into info[k] (device memory).
inline void potrf_batched(cusolverDnHandle_t h, char uplo, int n, double** A, int lda, int* info, int batch) {
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrfBatched(h, fill(uplo), n, A, lda, info, batch));
}
inline void potrf_batched(cusolverDnHandle_t h, char uplo, int n, float** A, int lda, int* info, int batch) {
  TESSERA_CUSOLVER_CHECK(cusolverDnSpotrfBatched(h, fill(uplo), n, A, lda, info, batch));
}
inline void potrf_batched(cusolverDnHandle_t h, char uplo, int n, std::complex<double>** A, int lda, int* info,
                          int batch) {
  TESSERA_CUSOLVER_CHECK(
      cusolverDnZpotrfBatched(h, fill(uplo), n, reinterpret_cast<cuDoubleComplex**>(A), lda, info, batch));
}
inline void potrf_batched(cusolverDnHandle_t h, char uplo, int n, std::complex<float>** A, int lda, int* info,
                          int batch) {
  TESSERA_CUSOLVER_CHECK(cusolverDnCpotrfBatched(h, fill(uplo), n, reinterpret_cast<cuComplex**>(A), lda, info, batch));
}

inline void trsm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, double alpha, const double* L, int ldl,
                 double* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasDtrsm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, &alpha, L, ldl, B, ldb));
}
inline void trsm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, float alpha, const float* L, int ldl,
                 float* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasStrsm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, &alpha, L, ldl, B, ldb));
}

inline void trsm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, std::complex<double> alpha,
                 const std::complex<double>* L, int ldl, std::complex<double>* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasZtrsm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), complex_op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, cu(&alpha), cu(L), ldl, cu(B), ldb));
}
inline void trsm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, std::complex<float> alpha,
                 const std::complex<float>* L, int ldl, std::complex<float>* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasCtrsm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), complex_op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, cu(&alpha), cu(L), ldl, cu(B), ldb));
}

// B_k := alpha op(L_k)^{-1} B_k from the left for the batch of matrices at the device pointers of L
// and B (device memory, batch of each): cuBLAS's batched trsm.
inline void trsm_batched(cublasHandle_t h, char uplo, Trans trans, int m, int n, double alpha, const double* const* L,
                         int ldl, double* const* B, int ldb, int batch) {
  TESSERA_CUBLAS_CHECK(cublasDtrsmBatched(h, CUBLAS_SIDE_LEFT, fill(uplo), op(trans), CUBLAS_DIAG_NON_UNIT, m, n,
                                          &alpha, L, ldl, B, ldb, batch));
}
inline void trsm_batched(cublasHandle_t h, char uplo, Trans trans, int m, int n, float alpha, const float* const* L,
                         int ldl, float* const* B, int ldb, int batch) {
  TESSERA_CUBLAS_CHECK(cublasStrsmBatched(h, CUBLAS_SIDE_LEFT, fill(uplo), op(trans), CUBLAS_DIAG_NON_UNIT, m, n,
                                          &alpha, L, ldl, B, ldb, batch));
}
inline void trsm_batched(cublasHandle_t h, char uplo, Trans trans, int m, int n, std::complex<double> alpha,
                         const std::complex<double>* const* L, int ldl, std::complex<double>* const* B, int ldb,
                         int batch) {
  TESSERA_CUBLAS_CHECK(cublasZtrsmBatched(h, CUBLAS_SIDE_LEFT, fill(uplo), complex_op(trans), CUBLAS_DIAG_NON_UNIT, m,
                                          n, cu(&alpha), reinterpret_cast<const cuDoubleComplex* const*>(L), ldl,
                                          reinterpret_cast<cuDoubleComplex* const*>(B), ldb, batch));
}
inline void trsm_batched(cublasHandle_t h, char uplo, Trans trans, int m, int n, std::complex<float> alpha,
                         const std::complex<float>* const* L, int ldl, std::complex<float>* const* B, int ldb,
                         int batch) {
  TESSERA_CUBLAS_CHECK(cublasCtrsmBatched(h, CUBLAS_SIDE_LEFT, fill(uplo), complex_op(trans), CUBLAS_DIAG_NON_UNIT, m,
                                          n, cu(&alpha), reinterpret_cast<const cuComplex* const*>(L), ldl,
                                          reinterpret_cast<cuComplex* const*>(B), ldb, batch));
}

// B := alpha op(L) B (left) or alpha B op(L) (right), in place (cuBLAS's out-of-place form with C = B).
inline void trmm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, double alpha, const double* L,
                 int ldl, double* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasDtrmm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, &alpha, L, ldl, B, ldb, B, ldb));
}
inline void trmm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, float alpha, const float* L, int ldl,
                 float* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasStrmm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, &alpha, L, ldl, B, ldb, B, ldb));
}

inline void trmm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, std::complex<double> alpha,
                 const std::complex<double>* L, int ldl, std::complex<double>* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasZtrmm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), complex_op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, cu(&alpha), cu(L), ldl, cu(B), ldb, cu(B), ldb));
}
inline void trmm(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, std::complex<float> alpha,
                 const std::complex<float>* L, int ldl, std::complex<float>* B, int ldb) {
  TESSERA_CUBLAS_CHECK(cublasCtrmm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), complex_op(trans),
                                   CUBLAS_DIAG_NON_UNIT, m, n, cu(&alpha), cu(L), ldl, cu(B), ldb, cu(B), ldb));
}

// The inverse of the non-unit triangle uplo of the n x n matrix A, in place (cuSOLVER's 64-bit
// xtrtri): `device_work` and `host_work` at least the sizes trtri_workspace gives; d_info receives
// its info.
inline cudaDataType data_type(const double*) { return CUDA_R_64F; }
inline cudaDataType data_type(const float*) { return CUDA_R_32F; }
inline cudaDataType data_type(const std::complex<double>*) { return CUDA_C_64F; }
inline cudaDataType data_type(const std::complex<float>*) { return CUDA_C_32F; }
template <class T>
void trtri_workspace(cusolverDnHandle_t h, char uplo, int n, T* A, int lda, std::size_t* device_bytes,
                     std::size_t* host_bytes) {
  TESSERA_CUSOLVER_CHECK(cusolverDnXtrtri_bufferSize(h, fill(uplo), CUBLAS_DIAG_NON_UNIT, n, data_type(A), A, lda,
                                                     device_bytes, host_bytes));
}
template <class T>
void trtri(cusolverDnHandle_t h, char uplo, int n, T* A, int lda, void* device_work, std::size_t device_bytes,
           void* host_work, std::size_t host_bytes, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnXtrtri(h, fill(uplo), CUBLAS_DIAG_NON_UNIT, n, data_type(A), A, lda, device_work,
                                          device_bytes, host_work, host_bytes, d_info));
}

// The triangle uplo of L^T L (uplo 'L') or U U^T ('U'), in place (cuSOLVER's xlauum); `work` of
// lauum_workspace elements.
inline int lauum_workspace(cusolverDnHandle_t h, char uplo, int n, double* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnDlauum_bufferSize(h, fill(uplo), n, A, lda, &lwork));
  return lwork;
}
inline int lauum_workspace(cusolverDnHandle_t h, char uplo, int n, float* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnSlauum_bufferSize(h, fill(uplo), n, A, lda, &lwork));
  return lwork;
}
inline int lauum_workspace(cusolverDnHandle_t h, char uplo, int n, std::complex<double>* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnZlauum_bufferSize(h, fill(uplo), n, cu(A), lda, &lwork));
  return lwork;
}
inline int lauum_workspace(cusolverDnHandle_t h, char uplo, int n, std::complex<float>* A, int lda) {
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnClauum_bufferSize(h, fill(uplo), n, cu(A), lda, &lwork));
  return lwork;
}
inline void lauum(cusolverDnHandle_t h, char uplo, int n, std::complex<double>* A, int lda, std::complex<double>* work,
                  int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnZlauum(h, fill(uplo), n, cu(A), lda, cu(work), lwork, d_info));
}
inline void lauum(cusolverDnHandle_t h, char uplo, int n, std::complex<float>* A, int lda, std::complex<float>* work,
                  int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnClauum(h, fill(uplo), n, cu(A), lda, cu(work), lwork, d_info));
}
inline void lauum(cusolverDnHandle_t h, char uplo, int n, double* A, int lda, double* work, int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnDlauum(h, fill(uplo), n, A, lda, work, lwork, d_info));
}
inline void lauum(cusolverDnHandle_t h, char uplo, int n, float* A, int lda, float* work, int lwork, int* d_info) {
  TESSERA_CUSOLVER_CHECK(cusolverDnSlauum(h, fill(uplo), n, A, lda, work, lwork, d_info));
}

// C := alpha A B + beta C with A symmetric (for complex scalars Hermitian: hemm) in its triangle
// uplo, B and C n x nrhs: symv / hemv for one column.
inline void symm(cublasHandle_t h, char uplo, int n, int nrhs, double alpha, const double* A, int lda, const double* B,
                 int ldb, double beta, double* C, int ldc) {
  if (nrhs == 1)
    TESSERA_CUBLAS_CHECK(cublasDsymv(h, fill(uplo), n, &alpha, A, lda, B, 1, &beta, C, 1));
  else
    TESSERA_CUBLAS_CHECK(
        cublasDsymm(h, CUBLAS_SIDE_LEFT, fill(uplo), n, nrhs, &alpha, A, lda, B, ldb, &beta, C, ldc));
}
inline void symm(cublasHandle_t h, char uplo, int n, int nrhs, std::complex<double> alpha,
                 const std::complex<double>* A, int lda, const std::complex<double>* B, int ldb,
                 std::complex<double> beta, std::complex<double>* C, int ldc) {
  if (nrhs == 1)
    TESSERA_CUBLAS_CHECK(cublasZhemv(h, fill(uplo), n, cu(&alpha), cu(A), lda, cu(B), 1, cu(&beta), cu(C), 1));
  else
    TESSERA_CUBLAS_CHECK(cublasZhemm(h, CUBLAS_SIDE_LEFT, fill(uplo), n, nrhs, cu(&alpha), cu(A), lda, cu(B), ldb,
                                     cu(&beta), cu(C), ldc));
}

inline void syrk(cublasHandle_t h, char uplo, Trans trans, int n, int k, double alpha, const double* A, int lda, double beta, double* C,
                 int ldc) {
  TESSERA_CUBLAS_CHECK(cublasDsyrk(h, fill(uplo), op(trans), n, k, &alpha, A, lda, &beta, C, ldc));
}
inline void syrk(cublasHandle_t h, char uplo, Trans trans, int n, int k, float alpha, const float* A, int lda, float beta, float* C,
                 int ldc) {
  TESSERA_CUBLAS_CHECK(cublasSsyrk(h, fill(uplo), op(trans), n, k, &alpha, A, lda, &beta, C, ldc));
}

// For complex scalars the Hermitian update herk (real alpha and beta; op conjugate-transposing).
inline void syrk(cublasHandle_t h, char uplo, Trans trans, int n, int k, std::complex<double> alpha,
                 const std::complex<double>* A, int lda, std::complex<double> beta, std::complex<double>* C, int ldc) {
  const double a = alpha.real(), b = beta.real();
  TESSERA_CUBLAS_CHECK(cublasZherk(h, fill(uplo), trans == Trans::no ? CUBLAS_OP_N : CUBLAS_OP_C, n, k, &a, cu(A), lda,
                                   &b, cu(C), ldc));
}
inline void syrk(cublasHandle_t h, char uplo, Trans trans, int n, int k, std::complex<float> alpha,
                 const std::complex<float>* A, int lda, std::complex<float> beta, std::complex<float>* C, int ldc) {
  const float a = alpha.real(), b = beta.real();
  TESSERA_CUBLAS_CHECK(cublasCherk(h, fill(uplo), trans == Trans::no ? CUBLAS_OP_N : CUBLAS_OP_C, n, k, &a, cu(A), lda,
                                   &b, cu(C), ldc));
}

inline void gemm(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, std::complex<double> alpha,
                 const std::complex<double>* A, int lda, const std::complex<double>* B, int ldb,
                 std::complex<double> beta, std::complex<double>* C, int ldc) {
  TESSERA_CUBLAS_CHECK(cublasZgemm(h, complex_op(transa), complex_op(transb), m, n, k, cu(&alpha), cu(A), lda, cu(B), ldb,
                                   cu(&beta), cu(C), ldc));
}
inline void gemm(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, std::complex<float> alpha,
                 const std::complex<float>* A, int lda, const std::complex<float>* B, int ldb, std::complex<float> beta,
                 std::complex<float>* C, int ldc) {
  TESSERA_CUBLAS_CHECK(cublasCgemm(h, complex_op(transa), complex_op(transb), m, n, k, cu(&alpha), cu(A), lda, cu(B), ldb,
                                   cu(&beta), cu(C), ldc));
}

inline void gemm(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, double alpha, const double* A,
                 int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  TESSERA_CUBLAS_CHECK(cublasDgemm(h, op(transa), op(transb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
}
inline void gemm(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A,
                 int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  TESSERA_CUBLAS_CHECK(cublasSgemm(h, op(transa), op(transb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
}

// y := alpha op(A) x + beta y, A m x n, x and y contiguous (GMRES-IR's Arnoldi steps).
inline void gemv(cublasHandle_t h, Trans trans, int m, int n, double alpha, const double* A, int lda, const double* x,
                 double beta, double* y) {
  TESSERA_CUBLAS_CHECK(cublasDgemv(h, op(trans), m, n, &alpha, A, lda, x, 1, &beta, y, 1));
}
inline void gemv(cublasHandle_t h, Trans trans, int m, int n, std::complex<double> alpha, const std::complex<double>* A,
                 int lda, const std::complex<double>* x, std::complex<double> beta, std::complex<double>* y) {
  TESSERA_CUBLAS_CHECK(
      cublasZgemv(h, complex_op(trans), m, n, cu(&alpha), cu(A), lda, cu(x), 1, cu(&beta), cu(y), 1));
}

// x := alpha x, x contiguous, alpha real.
inline void scal(cublasHandle_t h, int n, double alpha, double* x) {
  TESSERA_CUBLAS_CHECK(cublasDscal(h, n, &alpha, x, 1));
}
inline void scal(cublasHandle_t h, int n, double alpha, std::complex<double>* x) {
  TESSERA_CUBLAS_CHECK(cublasZdscal(h, n, &alpha, cu(x), 1));
}

// gemm and syrk of FP32 matrices on the tensor cores: each operand rounded to TF32 inside the
// product, FP32 accumulation and result (FactorOptions::tensor_cores).
inline void gemm_tf32(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A,
                      int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  TESSERA_CUBLAS_CHECK(cublasGemmEx(h, op(transa), op(transb), m, n, k, &alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb,
                                    &beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// C := alpha op(A) op(B) + beta C with A and B already rounded to FP16 or BF16 (round_to_16bit)
// and C in FP32: the tensor cores' 16-bit products with FP32 accumulation. cuBLAS's
// COMPUTE_32F_FAST_16F on FP32 operands runs at TF32's rate, so the operands are rounded first.
inline void gemm_16bit(cublasHandle_t h, bool bf16, Trans transa, Trans transb, int m, int n, int k, float alpha,
                       const void* A, int lda, const void* B, int ldb, float beta, float* C, int ldc) {
  const cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  TESSERA_CUBLAS_CHECK(cublasGemmEx(h, op(transa), op(transb), m, n, k, &alpha, A, type, lda, B, type, ldb, &beta, C,
                                    CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// R := R - A X for A symmetric (complex: Hermitian) in its triangle uplo (n x n), X and R n x nrhs:
// symv for one column; for several, symm of each diagonal block of `block` and two products with
// the panel beside it (R2 -= A21 X1, R1 -= A21^H X2), where cuBLAS's symm of the whole matrix
// reads it at a fraction of the bandwidth its products reach.
template <class T>
void subtract_symmetric_product(cublasHandle_t h, char uplo, int n, int nrhs, const T* A, int lda, const T* X, int ldx,
                                T* R, int ldr, int block = 4096) {
  const T one(1), minus_one(-1);
  if (nrhs == 1) {
    symm(h, uplo, n, nrhs, minus_one, A, lda, X, ldx, one, R, ldr);
    return;
  }
  const bool lower = uplo == 'L';
  const std::size_t ld = static_cast<std::size_t>(lda);
  for (int j0 = 0; j0 < n; j0 += block) {
    const int jb = std::min(block, n - j0), rest = n - j0 - jb;
    const T* diagonal = A + j0 + j0 * ld;
    symm(h, uplo, jb, nrhs, minus_one, diagonal, lda, X + j0, ldx, one, R + j0, ldr);
    if (rest == 0) continue;
    // The panel A21 (rest x jb) below the block, or A12 = A21^H (jb x rest) right of it.
    const T* panel = lower ? diagonal + jb : diagonal + jb * ld;
    const Trans below = lower ? Trans::no : Trans::conjugate_transpose;
    const Trans beside = lower ? Trans::conjugate_transpose : Trans::no;
    gemm(h, below, Trans::no, rest, nrhs, jb, minus_one, panel, lda, X + j0, ldx, one, R + j0 + jb, ldr);
    gemm(h, beside, Trans::no, jb, nrhs, rest, minus_one, panel, lda, X + j0 + jb, ldx, one, R + j0, ldr);
  }
}

// The handle's math mode set for a scope, then restored (the handle is shared by a worker's tasks).
class MathModeScope {
 public:
  MathModeScope(cublasHandle_t h, cublasMath_t mode) : h_(h) {
    TESSERA_CUBLAS_CHECK(cublasGetMathMode(h_, &saved_));
    TESSERA_CUBLAS_CHECK(cublasSetMathMode(h_, mode));
  }
  ~MathModeScope() { cublasSetMathMode(h_, saved_); }
  MathModeScope(const MathModeScope&) = delete;
  MathModeScope& operator=(const MathModeScope&) = delete;

 private:
  cublasHandle_t h_;
  cublasMath_t saved_ = CUBLAS_DEFAULT_MATH;
};

// C_k := alpha A_k B_k + beta C_k for k < batch, A_k = A + k sa (m x k), B_k = B + k sb, C_k = C + k
// sc: cuBLAS's strided batched product, a float one on the tensor cores (TF32) when asked.
template <class T>
void gemm_strided_batched(cublasHandle_t h, bool tf32, int m, int n, int k, T alpha, const T* A, int lda,
                          long long sa, const T* B, int ldb, long long sb, T beta, T* C, int ldc, long long sc,
                          int batch) {
  constexpr bool single = std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>;
  const cublasComputeType_t compute =
      single ? (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_64F;
  TESSERA_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, data_type(A), lda,
                                                  sa, B, data_type(B), ldb, sb, &beta, C, data_type(C), ldc, sc,
                                                  batch, compute, CUBLAS_GEMM_DEFAULT));
}

// The same with op(A_k) op(B_k) (complex: conjugate transposes where asked), on the data type's own
// arithmetic: the tensor cores for FP64.
template <class T>
void gemm_strided_batched(cublasHandle_t h, Trans transa, Trans transb, int m, int n, int k, T alpha, const T* A,
                          int lda, long long sa, const T* B, int ldb, long long sb, T beta, T* C, int ldc, long long sc,
                          int batch) {
  constexpr bool single = std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>;
  constexpr bool real = std::is_floating_point_v<T>;
  TESSERA_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, real ? op(transa) : complex_op(transa), real ? op(transb) : complex_op(transb), m, n, k, &alpha, A,
      data_type(A), lda, sa, B, data_type(B), ldb, sb, &beta, C, data_type(C), ldc, sc, batch,
      single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
}

// Lower triangles inverted by levels: leaves of order kInverseLeaf by one batched solve of
// identities, then per level one pair of batched products joining neighbours, the inverse of
// [L11 0; L21 L22] being [X11 0; X21 X22] with X21 = -X22 (L21 X11). A dozen wide launches where a
// solve of the identity steps through the whole triangle: the diagonal chain of a tensor-core
// factorization and the refinement's block inverses wait on it.
constexpr int kInverseLeaf = 64;

namespace detail {

// Levels of one region of order n whose diagonal blocks of order `block` are inverted (block: n, or
// a power of two times kInverseLeaf dividing n): per level s, the pairs of order s that join, all
// but the last by one strided batched call, the last one by its own when its second half is short.
struct InverseLevel {
  int s, pairs, short_order;  // short_order: the last pair's second half, 0 when it is not short
};
template <class F>
void for_each_inverse_level(int n, int block, F&& f) {
  for (int s = kInverseLeaf; s < block; s *= 2) {
    const int count = (n + s - 1) / s, last = n - (count - 1) * s;
    const bool short_pair = count % 2 == 0 && last < s;
    f(InverseLevel{s, count / 2 - (short_pair ? 1 : 0), short_pair ? last : 0});
  }
}

template <class T>
void invert_region(cublasHandle_t h, bool tf32, int n, int block, const T* L, int ldl, T* X, int ldx, T* work,
                   T** pointers, cudaStream_t stream) {
  constexpr int leaf = kInverseLeaf;
  const T one(1), minus_one(-1), zero(0);
  const int leaves = n / leaf, rest = n - leaves * leaf;
  if (leaves > 0) {
    strided_pointers<T>(const_cast<T*>(L), static_cast<long long>(leaf) * (ldl + 1), leaves, pointers, stream);
    strided_pointers<T>(X, static_cast<long long>(leaf) * (ldx + 1), leaves, pointers + leaves, stream);
    trsm_batched(h, 'L', Trans::no, leaf, leaf, one, pointers, ldl, pointers + leaves, ldx, leaves);
  }
  if (rest > 0) {
    const std::size_t o = std::size_t(leaves) * leaf;
    trsm(h, true, 'L', Trans::no, rest, rest, one, L + o * (ldl + 1), ldl, X + o * (ldx + 1), ldx);
  }
  const std::size_t ld = static_cast<std::size_t>(ldl), ldX = static_cast<std::size_t>(ldx);
  for_each_inverse_level(n, block, [&](const InverseLevel& level) {
    const int s = level.s;
    const long long step_l = 2LL * s * (ldl + 1), step_x = 2LL * s * (ldx + 1), step_w = static_cast<long long>(s) * s;
    if (level.pairs > 0) {
      gemm_strided_batched(h, tf32, s, s, s, one, L + s, ldl, step_l, X, ldx, step_x, zero, work, s, step_w,
                           level.pairs);
      gemm_strided_batched(h, tf32, s, s, s, minus_one, X + s * (ldX + 1), ldx, step_x, work, s, step_w, zero, X + s,
                           ldx, step_x, level.pairs);
    }
    if (const int z = level.short_order) {
      const std::size_t o = std::size_t(2) * level.pairs * s, o2 = o + s;
      gemm_strided_batched(h, tf32, z, s, s, one, L + o2 + o * ld, ldl, 0, X + o * (ldX + 1), ldx, 0, zero, work, z,
                           0, 1);
      gemm_strided_batched(h, tf32, z, s, z, minus_one, X + o2 * (ldX + 1), ldx, 0, work, z, 0, zero, X + o2 + o * ldX,
                           ldx, 0, 1);
    }
  });
}

}  // namespace detail

// Workspace of invert_lower_by_levels(n, block): elements of T, and device pointers.
inline std::size_t inverse_by_levels_elements(int n, int block) {
  block = std::min(block, n);
  std::size_t most = 0;
  const auto region = [&](int order, int blocks_of) {
    detail::for_each_inverse_level(order, blocks_of, [&](const detail::InverseLevel& level) {
      const std::size_t s = static_cast<std::size_t>(level.s);
      most = std::max({most, std::size_t(level.pairs) * s * s, std::size_t(level.short_order) * s});
    });
  };
  if (block > 0) region(n / block * block, block);
  if (block > 0 && n % block > 0) region(n % block, n % block);
  return most;
}
inline int inverse_by_levels_pointers(int n) { return 2 * (n / kInverseLeaf); }

// X's diagonal blocks of order `block` (the last one possibly fewer; block >= n: X := L^{-1}) :=
// the inverses of L's, L lower (its strict upper triangle not referenced): block k at
// X + k block (ldx + 1), zeros above its diagonal; X's elements outside the blocks are not written.
// `block` is n or more, or a power of two times kInverseLeaf. `tf32`: the products of float
// triangles on the tensor cores. work, pointers: inverse_by_levels_elements / _pointers of them.
template <class T>
void invert_lower_by_levels(cublasHandle_t h, bool tf32, int n, int block, const T* L, int ldl, T* X, int ldx,
                            T* work, T** pointers, cudaStream_t stream) {
  if (n <= 0) return;
  block = std::min(block, n);
  const int full = n / block, rest = n - full * block;
  const long long step = static_cast<long long>(block) * (ldx + 1);
  set_identity_batched<T>(block, block, X, ldx, step, full, stream);
  if (rest > 0) set_identity<T>(rest, rest, X + full * step, ldx, stream);
  detail::invert_region(h, tf32, full * block, block, L, ldl, X, ldx, work, pointers, stream);
  if (rest > 0) {
    const std::size_t o = std::size_t(full) * block;
    detail::invert_region(h, tf32, rest, rest, L + o * (ldl + 1), ldl, X + o * (ldx + 1), ldx, work, pointers, stream);
  }
}

// X's lower triangle := (L L^H)^{-1} = W^H W with W = L^{-1}, from the lower factor L (xPOTRI's
// result; nothing above X's diagonal written; X may be L itself): W (n x n, ldw) by one triangular
// solve of the identity, or by levels where `by_levels` (invert_lower_by_levels; work and pointers
// as it takes them, unused otherwise), then one Hermitian rank-n product. cuSOLVER's potri (its
// own triangular inverse, then the product of the triangles) was several times slower from order
// 64 to 4096 (docs/performance.md, "The inverse of one GPU matrix"). A zero on L's diagonal gives
// infinities and NaNs: the caller checks the diagonal.
template <class T>
void invert_from_lower_factor(cublasHandle_t h, bool by_levels, int n, const T* L, int ldl, T* X, int ldx, T* W,
                              int ldw, T* work, T** pointers, cudaStream_t stream) {
  if (n <= 0) return;
  const T one(1), zero(0);
  if (by_levels) {
    invert_lower_by_levels(h, false, n, n, L, ldl, W, ldw, work, pointers, stream);
  } else {
    set_identity<T>(n, n, W, ldw, stream);
    trsm(h, true, 'L', Trans::no, n, n, one, L, ldl, W, ldw);
  }
  syrk(h, 'L', Trans::conjugate_transpose, n, n, one, W, ldw, zero, X, ldx);
}

// The diagonal blocks of a lower triangle inverted, for triangular solves at the bandwidth of
// matrix-vector products (cuBLAS's trsv, blocked or not, stays well below it): block k covers rows
// and columns [k b, k b + b), b = kInverseBlock, the last one fewer.
constexpr int kInverseBlock = 2048;
inline int inverse_blocks(int n) { return (n + kInverseBlock - 1) / kInverseBlock; }
// Where block k's inverse lies (leading dimension b): a stride of b (b + 1), so that the blocks'
// diagonals run at one stride, as invert_lower_by_levels writes them.
constexpr std::size_t inverse_block_offset(int k) {
  return std::size_t(k) * kInverseBlock * (kInverseBlock + 1);
}
inline std::size_t inverse_blocks_elements(int n) { return inverse_block_offset(inverse_blocks(n)); }

// inverses + inverse_block_offset(k) (b x b, leading dimension b) := the inverse of L's block k,
// for the n x n lower triangle L (float or complex<float>), by levels (products on the tensor
// cores when tf32). work, pointers: inverse_by_levels_elements(n, b) and _pointers(n) of them.
template <class T>
void invert_lower_diagonal_blocks(cublasHandle_t h, bool tf32, int n, const T* L, int ldl, T* inverses, T* work,
                                  T** pointers, cudaStream_t stream) {
  invert_lower_by_levels(h, tf32, n, kInverseBlock, L, ldl, inverses, kInverseBlock, work, pointers, stream);
}

// X := op(L)^{-1} R (n x nrhs; op: none, or the (conjugate) transpose) with the block inverses of
// invert_lower_diagonal_blocks: per block, one product with its inverse and one update of the
// right-hand sides still to solve (gemv for one real column, gemm otherwise): forward from the
// panel below the block; backward, gemv sums the panel's columns, and gemm takes the block row left
// of the block (its transpose's product is parallel over the many rows it updates, where the
// panel's would sum over them in a block of rows only a few blocks of threads take). R is
// overwritten (the updates land there); X must not overlap it. `tf32`: a float solve's products of
// several columns on the tensor cores, for a factor made there (its 16-bit or TF32 operands
// already bound the correction's accuracy).
template <class T>
void solve_lower_by_block_inverses(cublasHandle_t h, Trans trans, int n, int nrhs, const T* L, int ldl,
                                   const T* inverses, T* R, int ldr, T* X, int ldx, bool tf32) {
  constexpr int b = kInverseBlock;
  const T one = 1, minus_one = -1, zero = 0;
  const bool by_gemv = std::is_same_v<T, float> && nrhs == 1;
  // out := alpha op(A) in + beta out, op(A) m x k.
  const auto product = [&](Trans t, int m, int k, T alpha, const T* A, int lda, const T* in, int ldi, T beta, T* out,
                           int ldo) {
    if constexpr (std::is_same_v<T, float>) {
      if (by_gemv) {
        TESSERA_CUBLAS_CHECK(cublasSgemv(h, op(t), t == Trans::no ? m : k, t == Trans::no ? k : m, &alpha, A, lda, in,
                                         1, &beta, out, 1));
        return;
      }
      if (tf32) {
        gemm_tf32(h, t, Trans::no, m, nrhs, k, alpha, A, lda, in, ldi, beta, out, ldo);
        return;
      }
    }
    gemm(h, t, Trans::no, m, nrhs, k, alpha, A, lda, in, ldi, beta, out, ldo);
  };
  const std::size_t ld = static_cast<std::size_t>(ldl);
  const int blocks = inverse_blocks(n);
  for (int step = 0; step < blocks; ++step) {
    // Forward (L) from the first block, backward (L^H) from the last.
    const int k = trans == Trans::no ? step : blocks - 1 - step;
    const int k0 = k * b, kb = std::min(b, n - k0), rest = n - k0 - kb;
    const T* inverse = inverses + inverse_block_offset(k);
    const T* panel = L + (k0 + kb) + k0 * ld;  // below block k
    if (trans == Trans::no) {
      product(Trans::no, kb, kb, one, inverse, b, R + k0, ldr, zero, X + k0, ldx);
      if (rest > 0) product(Trans::no, rest, kb, minus_one, panel, ldl, X + k0, ldx, one, R + k0 + kb, ldr);
    } else if (by_gemv) {
      if (rest > 0) product(trans, kb, rest, minus_one, panel, ldl, X + k0 + kb, ldx, one, R + k0, ldr);
      product(trans, kb, kb, one, inverse, b, R + k0, ldr, zero, X + k0, ldx);
    } else {
      // R's block k is complete: every later block's update has landed.
      product(trans, kb, kb, one, inverse, b, R + k0, ldr, zero, X + k0, ldx);
      if (k0 > 0) product(trans, k0, kb, minus_one, L + k0, ldl, X + k0, ldx, one, R, ldr);  // block row k
    }
  }
}

// B := alpha op(L)^{-1} B or alpha B op(L)^{-1} in FP32 under TF32 math mode: cuBLAS's blocked
// solve may run its products on the tensor cores.
inline void trsm_tf32(cublasHandle_t h, bool left, char uplo, Trans trans, int m, int n, float alpha, const float* L,
                      int ldl, float* B, int ldb) {
  const MathModeScope tf32(h, CUBLAS_TF32_TENSOR_OP_MATH);
  trsm(h, left, uplo, trans, m, n, alpha, L, ldl, B, ldb);
}

// dst (rows x cols) := src^T, src being cols x rows (cuBLAS geam; dst must not overlap src).
inline void transpose(cublasHandle_t h, int rows, int cols, const double* src, int lds, double* dst, int ldd) {
  const double one = 1, zero = 0;
  TESSERA_CUBLAS_CHECK(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, src, lds, &zero, dst, ldd, dst, ldd));
}
inline void transpose(cublasHandle_t h, int rows, int cols, const float* src, int lds, float* dst, int ldd) {
  const float one = 1, zero = 0;
  TESSERA_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, src, lds, &zero, dst, ldd, dst, ldd));
}

}  // namespace tessera::kernels::cuda::vendor
