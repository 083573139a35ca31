// Typed wrappers over the cuBLAS and cuSOLVER calls the tile codelets use (column-major, device
// pointers, asynchronous on the handle's stream). Every status is checked.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstddef>

#include "check.hpp"
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

// x := L^{-1} x (trans no) or L^{-T} x (L n x n lower, FP32) by blocks of columns: cuBLAS's trsv on
// each diagonal block and gemv with the block below it, which reads the triangle at gemv's
// bandwidth (cuBLAS's trsv on the whole triangle reads it several times slower).
inline void trsv_lower_blocked(cublasHandle_t h, Trans trans, int n, const float* L, int ldl, float* x) {
  constexpr int kBlock = 512;
  const float minus_one = -1, one = 1;
  const std::size_t ld = static_cast<std::size_t>(ldl);
  const auto diagonal_solve = [&](int k0, int kb) {
    TESSERA_CUBLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, op(trans), CUBLAS_DIAG_NON_UNIT, kb, L + k0 + k0 * ld,
                                     ldl, x + k0, 1));
  };
  if (trans == Trans::no) {
    for (int k0 = 0; k0 < n; k0 += kBlock) {
      const int kb = std::min(kBlock, n - k0), rest = n - k0 - kb;
      diagonal_solve(k0, kb);
      if (rest > 0)
        TESSERA_CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_N, rest, kb, &minus_one, L + (k0 + kb) + k0 * ld, ldl, x + k0, 1,
                                         &one, x + k0 + kb, 1));
    }
    return;
  }
  for (int k0 = (n - 1) / kBlock * kBlock; k0 >= 0; k0 -= kBlock) {
    const int kb = std::min(kBlock, n - k0), rest = n - k0 - kb;
    if (rest > 0)
      TESSERA_CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_T, rest, kb, &minus_one, L + (k0 + kb) + k0 * ld, ldl, x + k0 + kb,
                                       1, &one, x + k0, 1));
    diagonal_solve(k0, kb);
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
