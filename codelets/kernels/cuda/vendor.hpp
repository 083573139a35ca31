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

// The diagonal blocks of a lower triangle inverted, for triangular solves at the bandwidth of
// matrix-vector products (cuBLAS's trsv, blocked or not, stays well below it): block k covers rows
// and columns [k b, k b + b), b = kInverseBlock, the last one fewer.
constexpr int kInverseBlock = 1024;
inline int inverse_blocks(int n) { return (n + kInverseBlock - 1) / kInverseBlock; }

// inverses + k b^2 (b x b, leading dimension b) := the inverse of L's block k, for the n x n lower
// triangle L (float or complex<float>): the full blocks by one batched solve of identities, the
// last one by its own. `pointers`: room for 2 inverse_blocks(n) pointers in device memory.
template <class T>
void invert_lower_diagonal_blocks(cublasHandle_t h, int n, T* L, int ldl, T* inverses, T** pointers,
                                  cudaStream_t stream) {
  constexpr int b = kInverseBlock;
  const int blocks = inverse_blocks(n), full = n / b, last = n - full * b;
  for (int k = 0; k < blocks; ++k) set_identity<T>(b, b, inverses + std::size_t(k) * b * b, b, stream);
  if (full > 0) {
    strided_pointers<T>(L, static_cast<long long>(b) * (ldl + 1), full, pointers, stream);
    strided_pointers<T>(inverses, static_cast<long long>(b) * b, full, pointers + blocks, stream);
    trsm_batched(h, 'L', Trans::no, b, b, T(1), pointers, ldl, pointers + blocks, b, full);
  }
  if (last > 0) {
    const std::size_t k0 = std::size_t(full) * b;
    trsm(h, true, 'L', Trans::no, last, last, T(1), L + k0 + k0 * ldl, ldl, inverses + k0 * b, b);
  }
}

// X := op(L)^{-1} R (n x nrhs; op: none, or the (conjugate) transpose) with the block inverses of
// invert_lower_diagonal_blocks: per block, one product with its inverse and one with the panel
// below it (gemv for one real column, gemm otherwise). R is overwritten (the updates land there);
// X must not overlap it.
template <class T>
void solve_lower_by_block_inverses(cublasHandle_t h, Trans trans, int n, int nrhs, const T* L, int ldl,
                                   const T* inverses, T* R, int ldr, T* X, int ldx) {
  constexpr int b = kInverseBlock;
  const T one = 1, minus_one = -1, zero = 0;
  // out := alpha op(A) in + beta out, op(A) m x k.
  const auto product = [&](Trans t, int m, int k, T alpha, const T* A, int lda, const T* in, int ldi, T beta, T* out,
                           int ldo) {
    if constexpr (std::is_same_v<T, float>) {
      if (nrhs == 1) {
        TESSERA_CUBLAS_CHECK(cublasSgemv(h, op(t), t == Trans::no ? m : k, t == Trans::no ? k : m, &alpha, A, lda, in,
                                         1, &beta, out, 1));
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
    const T* inverse = inverses + std::size_t(k) * b * b;
    const T* panel = L + (k0 + kb) + k0 * ld;  // below block k
    if (trans == Trans::no) {
      product(Trans::no, kb, kb, one, inverse, b, R + k0, ldr, zero, X + k0, ldx);
      if (rest > 0) product(Trans::no, rest, kb, minus_one, panel, ldl, X + k0, ldx, one, R + k0 + kb, ldr);
    } else {
      if (rest > 0) product(trans, kb, rest, minus_one, panel, ldl, X + k0 + kb, ldx, one, R + k0, ldr);
      product(trans, kb, kb, one, inverse, b, R + k0, ldr, zero, X + k0, ldx);
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
