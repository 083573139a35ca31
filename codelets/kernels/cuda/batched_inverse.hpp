// The inverse from batched Cholesky factors (LAPACK's xPOTRI on every matrix of a batch). Plain
// functions like those of batched_kernels.hpp: device pointers, asynchronous on `stream`, launch
// errors throw tessera::CudaError; T is any type of TESSERA_FOR_EACH_SCALAR (a complex factor
// gives the Hermitian inverse; its diagonal is real).
#pragma once

#include <cuda_runtime.h>

#include "cuda/batched_kernels.hpp"

namespace tessera::kernels::cuda {

// In place: A_k := A_k^-1 in the triangle `uplo` from the factor there (potrf_batched's), the
// other triangle untouched. info[k] = j > 0 when the factor's diagonal entry j is zero; that
// matrix is then left as it was. info may be null. One kernel launch: a warp per matrix up to
// order 32, else a thread block per matrix, the factor held in shared memory where it fits, else
// in device memory taken for the call.
template <class T>
void potri_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info,
                   cudaStream_t stream);

// Out of place: factor k read through element strides as potrf_batched's out-of-place form reads
// a matrix (only its triangle `uplo`), the whole inverse (both triangles) written to
// X + k * strideX, column-major with leading dimension ldx. A failed matrix's X_k is filled with
// NaN. X must not overlap A.
template <class T>
void potri_batched(BatchUplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA,
                   long long strideA, T* X, int ldx, long long strideX, int batch, int* info,
                   cudaStream_t stream);

// Arrays of pointers, in place: factor k at A_array[k] (a device array of batch device pointers,
// leading dimension lda), replaced by its triangle of the inverse as the strided form does.
template <class T>
void potri_batched(BatchUplo uplo, int n, T* const* A_array, int lda, int batch, int* info, cudaStream_t stream);
// Variable sizes, in place: factor k of order n[k] at A_array[k] with leading dimension lda[k] (n
// and lda device arrays, screened by screen_variable_sizes: a matrix with n[k] < 0 is left alone
// and its info untouched, n[k] = 0 gets info 0); max_n bounds every n[k] and sizes the kernels.
template <class T>
void potri_vbatched(BatchUplo uplo, const int* n, int max_n, T* const* A_array, const int* lda, int batch, int* info,
                    cudaStream_t stream);

}  // namespace tessera::kernels::cuda
