// Batched mode: many small SPD factorizations and solves as StarPU tasks. The batch is cut into
// chunks of consecutive matrices, one task per chunk; a chunk runs on a CPU worker (LAPACKE per
// matrix) or on a GPU (Tessera's batched kernels), placed by the scheduler. info[k] is LAPACK's
// info for matrix k: a matrix that is not positive definite only sets its own info.
//
// Matrices are column-major. In a strided batch matrix k starts at A + k * strideA (strideA >=
// lda * n when batch > 1 and n > 0); in a variable-size batch matrix k has order n[k] and leading
// dimension lda[k] and starts at A + offsets[k], with offsets increasing and the matrices
// disjoint (docs/user-guide.md, "Batched mode", has the rules). Only the triangle options.uplo is read
// and written. Arrays must stay valid until the request is done. The scalars are any of
// tessera/precision.hpp's: complex matrices are Hermitian (A_k = L_k L_k^H).
#pragma once

#include "tessera/export.h"

#include "tessera/cholesky.hpp"

namespace tessera {

struct BatchOptions {
  Uplo uplo = Uplo::lower;
  Mode mode = Mode::hybrid;
  int chunk = 0;           // matrices per task; 0 -> chosen from the batch and the workers
  bool fast_math = false;  // GPU only: approximate reciprocal square roots (see docs/user-guide.md, Batched mode)
  // Each chunk's tasks are TaskKind::other at step k = the chunk's index, nt = the chunk count
  // (critical_path_hints: chunks in order).
  SchedulingHints hints = critical_path_hints;
  // Reported while the synchronous forms wait (FactorOptions::progress).
  ProgressReport progress;
  std::chrono::milliseconds progress_interval{100};

  // The same settings for the operations' entries (tessera/cholesky.hpp).
  TESSERA_EXPORT FactorOptions as_factor_options() const;
};

// The forms below are compositions of potrf_async, potrs_async, posv_async and potri_async over
// MatrixView::host_batch and host_variable_batch.

// A_k = L_k L_k^T (or U_k^T U_k) for every k.
template <class T>
Request potrf_batched_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                            const BatchOptions& options = {}) {
  return potrf_async(runtime, MatrixView<T>::host_batch(n, n, A, lda, strideA, batch, info),
                     options.as_factor_options());
}
// B_k := A_k^{-1} B_k with the factors of potrf_batched (B_k n x nrhs at B + k * strideB).
template <class T>
Request potrs_batched_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                            long long strideB, int batch, const BatchOptions& options = {}) {
  return potrs_async(runtime, MatrixView<T>::host_batch(n, n, const_cast<T*>(A), lda, strideA, batch),
                     MatrixView<T>::host_batch(n, nrhs, B, ldb, strideB, batch), options.as_factor_options());
}
// Factor, then solve every matrix whose factorization succeeded (the others keep their B).
template <class T>
Request posv_batched_async(Runtime& runtime, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                           long long strideB, int batch, int* info, const BatchOptions& options = {}) {
  return posv_async(runtime, MatrixView<T>::host_batch(n, n, A, lda, strideA, batch, info),
                    MatrixView<T>::host_batch(n, nrhs, B, ldb, strideB, batch), options.as_factor_options());
}

// A_k^{-1} from the factors of potrf_batched (LAPACK's xPOTRI on each): the triangle options.uplo
// of each factor replaced by that of its matrix's inverse, the other triangle untouched. info[k]
// = j > 0 when factor k has a zero at diagonal entry j (that matrix is then left as it was). A
// chunk runs on a CPU worker (LAPACKE per matrix) or on a GPU (Tessera's batched inverse kernel,
// slow past the orders whose factor fits in shared memory: a few large matrices are better served
// by potri_async on each, a tile task graph per matrix).
template <class T>
Request potri_batched_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                            const BatchOptions& options = {}) {
  return potri_async(runtime, MatrixView<T>::host_batch(n, n, A, lda, strideA, batch, info), options.as_factor_options());
}

// Variable sizes (n[k] >= 0). B_k is n[k] x nrhs at B + offsetsB[k] with leading dimension ldb[k].
template <class T>
Request potrf_vbatched_async(Runtime& runtime, const int* n, T* A, const long long* offsets, const int* lda, int batch,
                             int* info, const BatchOptions& options = {}) {
  return potrf_async(runtime, MatrixView<T>::host_variable_batch(n, A, offsets, lda, batch, info),
                     options.as_factor_options());
}
template <class T>
Request potrs_vbatched_async(Runtime& runtime, const int* n, int nrhs, const T* A, const long long* offsets,
                             const int* lda, T* B, const long long* offsetsB, const int* ldb, int batch,
                             const BatchOptions& options = {}) {
  return potrs_async(runtime, MatrixView<T>::host_variable_batch(n, const_cast<T*>(A), offsets, lda, batch),
                     MatrixView<T>::host_variable_batch(n, nrhs, B, offsetsB, ldb, batch), options.as_factor_options());
}
template <class T>
Request posv_vbatched_async(Runtime& runtime, const int* n, int nrhs, T* A, const long long* offsets, const int* lda,
                            T* B, const long long* offsetsB, const int* ldb, int batch, int* info,
                            const BatchOptions& options = {}) {
  return posv_async(runtime, MatrixView<T>::host_variable_batch(n, A, offsets, lda, batch, info),
                    MatrixView<T>::host_variable_batch(n, nrhs, B, offsetsB, ldb, batch), options.as_factor_options());
}

// Synchronous forms: wait and return once every matrix is done (the per-matrix info is in info).
template <class T>
void potrf_batched(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                   const BatchOptions& options = {}) {
  potrf_batched_async(runtime, n, A, lda, strideA, batch, info, options).wait(options.progress, options.progress_interval);
}
template <class T>
void potri_batched(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                   const BatchOptions& options = {}) {
  potri_batched_async(runtime, n, A, lda, strideA, batch, info, options).wait(options.progress, options.progress_interval);
}
template <class T>
void posv_batched(Runtime& runtime, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                  long long strideB, int batch, int* info, const BatchOptions& options = {}) {
  posv_batched_async(runtime, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, options)
      .wait(options.progress, options.progress_interval);
}

// Matrices per task Tessera picks for a batch when BatchOptions::chunk is 0.
TESSERA_EXPORT int default_batch_chunk(const Runtime& runtime, int batch, Mode resolved_mode);

}  // namespace tessera
