// The operations for each home of their matrices, behind the one public entry per operation
// (potrf_async, potrs_async, posv_async over MatrixView: matrix_operations.cpp). Each checks its
// arguments with LAPACK's positions for the LAPACK-layout form of its home, plans once and runs.
#pragma once

#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"

namespace tessera::detail {

// Tiles registered with the runtime.
template <class T>
Request potrf_tiles_async(TileMatrix<T>& A, const FactorOptions& options);
template <class T>
Request potrs_tiles_async(const TileMatrix<T>& L, TileMatrix<T>& B, const FactorOptions& options);

// Column-major arrays in host memory.
template <class T>
Request potrf_array_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options);
template <class T>
Request potrs_array_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb,
                          const FactorOptions& options);
template <class T>
Request posv_array_async(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, const FactorOptions& options);
template <class T>
Request potri_array_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options);

// Batches of host arrays (tessera/batched.hpp).
template <class T>
Request potrf_strided_batch_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                                  const FactorOptions& options);
template <class T>
Request potrs_strided_batch_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, long long strideA, T* B,
                                  int ldb, long long strideB, int batch, const FactorOptions& options);
template <class T>
Request posv_strided_batch_async(Runtime& runtime, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                                 long long strideB, int batch, int* info, const FactorOptions& options);
// The inverses from a strided batch of factors (xPOTRI on each; info[k] its info).
template <class T>
Request potri_strided_batch_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                                  const FactorOptions& options);
template <class T>
Request potrf_variable_batch_async(Runtime& runtime, const int* n, T* A, const long long* offsets, const int* lda,
                                   int batch, int* info, const FactorOptions& options);
template <class T>
Request potrs_variable_batch_async(Runtime& runtime, const int* n, int nrhs, const T* A, const long long* offsets,
                                   const int* lda, T* B, const long long* offsetsB, const int* ldb, int batch,
                                   const FactorOptions& options);
template <class T>
Request posv_variable_batch_async(Runtime& runtime, const int* n, int nrhs, T* A, const long long* offsets,
                                  const int* lda, T* B, const long long* offsetsB, const int* ldb, int batch, int* info,
                                  const FactorOptions& options);

// A request that is already done, with LAPACK's info (the synchronous paths).
Request finished_request(int info);

// FactorOptions::log_determinant (log_determinant.cpp). A factorization on tiles: one slot per
// diagonal tile for insert_log_diagonals, summed into *out by the request's wait() (null, and
// nothing set, without out). GPU arrays and host batches: read off A's factor by the request's
// wait() (with_log_determinant; other homes' requests are returned as they are).
double* log_diagonal_slots(Submission& submission, int tiles, double* out);
template <class T>
Request with_log_determinant(Request request, const MatrixView<T>& A, const FactorOptions& options);
// The log-determinant of each matrix whose factor A holds into out[k] (a batch's info per
// matrix; `info` for one matrix): 0 where the factorization failed.
template <class T>
void write_log_determinants(const MatrixView<T>& A, int info, double* out);

}  // namespace tessera::detail

namespace tessera::device {

// Column-major arrays in GPU memory (tessera/device.hpp: synchronous, info returned).
template <class T>
int potrf_dense(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options);
template <class T>
int potrs_dense(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb, Stream stream,
                const FactorOptions& options);
template <class T>
int potri_dense(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options);
template <class T>
int posv_dense(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, Stream stream,
               const FactorOptions& options);

}  // namespace tessera::device
