// The device API's dense calls that are one vendor call on the matrix itself (tessera/device.hpp):
// enqueued from the calling thread on the caller's stream, without StarPU. Such a call would be one
// task of the runtime, and the runtime would add its request (registration, submission, a worker's
// start and end, unregistration; docs/gpu-performance.md, section "A matrix already in GPU
// memory") and a synchronisation of the
// caller's stream before it, for no overlap to gain. The handles are the runtime's, kept between
// calls. No CUDA or StarPU types here.
#pragma once

#ifdef TESSERA_HAVE_CUDA

#include <memory>

#include "tessera/options.hpp"
#include "tessera/precision.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// How a call factors one matrix on the caller's stream (the plan's choice):
//   calls: cuSOLVER's potrf with the loads, checks and stores around it, launched one by one;
//   replayed: those launches as one CUDA graph, replayed from the second call of a scalar type and
//             order on (the plan's replays_launches);
//   one_block: kernels::cuda::potrf_one_block, loads and stores included, in one launch (the
//              plan's factors_in_one_block), where the GPU's shared memory holds it.
enum class OneMatrixLaunch { calls, replayed, one_block };

// A (n x n, lda, in the memory of `device`) factored in place on `stream` (a cudaStream_t; null:
// the legacy default stream), after the work already on it; returns LAPACK's info once the factor
// is complete. Only the triangle `uplo` is read and written: an upper-stored A is transposed into
// a workspace of n x n elements (stream-ordered) and back. `cores` other than off (float only):
// a recursive factorization whose products run on the tensor cores
// (kernels::cuda::potrf_lower_on_tensor_cores) instead of cuSOLVER's.
// `launch`: as for potrf_into_on_callers_stream, leaving A's other triangle.
template <class T>
int potrf_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, void* stream,
                            TensorCores cores = TensorCores::off, OneMatrixLaunch launch = OneMatrixLaunch::calls);

// As potrf_on_callers_stream, with LAPACK's info written to `info` (device memory, on `device`) in
// the order of `stream`: returns once the work is enqueued, never waiting for the GPU.
template <class T>
void potrf_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, int* info,
                                   void* stream, TensorCores cores = TensorCores::off, OneMatrixLaunch launch = OneMatrixLaunch::calls);

// The out-of-place form of device::potrf: L (n x n, ldl, on `device`) := the factor of the matrix
// whose element (i, j) lies at A + i * row_stride + j * col_stride (its triangle `uplo` read, loaded
// into L's lower triangle, zeros above, an upper factor moved back into L's upper triangle), on
// `stream` after the work already on it; returns LAPACK's info once L is complete (one
// synchronisation of the stream, through the handles' own info word). `launch` replayed (cores
// off): from the second call of a scalar type and order on, the call's launches are one CUDA graph
// replayed on the call's matrices (the triangle factored in a workspace of the graph's, n x n
// elements kept for each of the last few orders); one_block (cores off): one kernel reads the
// triangle and writes the factor.
template <class T>
int potrf_into_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, const T* A, long long row_stride,
                                 long long col_stride, T* L, int ldl, void* stream,
                                 TensorCores cores = TensorCores::off, OneMatrixLaunch launch = OneMatrixLaunch::calls);

// As potrf_into_on_callers_stream, with LAPACK's info written to `info` (device memory, on
// `device`) in the order of `stream`: returns once the work is enqueued, never waiting for the GPU
// (device::potrf_ex's out-of-place form).
template <class T>
void potrf_into_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* A,
                                        long long row_stride, long long col_stride, T* L, int ldl, int* info,
                                        void* stream, TensorCores cores = TensorCores::off, OneMatrixLaunch launch = OneMatrixLaunch::calls);

// A stack of `batch` matrices (matrix k's element (i, j) at A + k * strideA + i * row_stride + j *
// col_stride, on `device`) factored out of place into L + k * strideL (n x n, ldl), each as
// device::potrf_ex's out-of-place form does, LAPACK's info of matrix k into info[k] (device
// memory), by `launch`:
//   vendor_batched: the triangle `uplo` loaded into L's lower triangle, zeros above, all of them
//                   factored by one call of cuSOLVER's batched potrf, an upper factor moved back
//                   into L's upper triangle;
//   in_blocks:      the same, the batched kernels in blocks of columns factoring them
//                   (kernels::cuda::potrf_batched_blocked);
//   one_block:      kernels::cuda::potrf_one_block_stack, a thread block per matrix reading its
//                   triangle and writing its factor in one launch (vendor_batched where the GPU's
//                   shared memory does not hold order n).
// On `stream` after the work already on it; returns once enqueued, never waiting for the GPU.
enum class StackLaunch { vendor_batched, in_blocks, one_block };
template <class T>
void potrf_stack_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* A,
                                         long long row_stride, long long col_stride, long long strideA, T* L, int ldl,
                                         long long strideL, int batch, int* info, void* stream, StackLaunch launch);

// A (n x n, lda, on `device`) holding potrf's factor in its triangle `uplo` := A^{-1} in that
// triangle (W = L^{-1} by a triangular solve of the identity, or by levels where `by_levels`, then
// W^H W; an upper factor through a transposed workspace), on `stream` after the work already on
// it; returns once the inverse is complete. The caller has checked the factor's diagonal for
// zeros first (xTRTRI leaves A as it was then; nothing after that check can fail numerically).
template <class T>
void potri_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, void* stream,
                             bool by_levels);

// The out-of-place inverse (device::potri_ex): X (n x n, ldx, on `device`) := A^{-1}, both
// triangles, from the factor whose element (i, j) lies at L + i * row_stride + j * col_stride (its
// triangle `uplo` loaded into X's lower triangle, inverted there as potri_on_callers_stream does,
// then mirrored; X all NaN where the factor's diagonal holds a zero), LAPACK's info into `info`
// (device memory; null: none written), on `stream` after the work already on it; returns once
// enqueued, never waiting for the GPU.
template <class T>
void potri_into_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* L,
                                        long long row_stride, long long col_stride, T* X, int ldx, int* info,
                                        void* stream, bool by_levels);

// B (n x nrhs, ldb, on `device`) := A^{-1} B with potrf's factor in the triangle `uplo` of A, on
// `stream` after the work already on it; returns once B is complete.
template <class T>
void potrs_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A, int lda, T* B,
                             int ldb, void* stream);

// B_k := A_k^{-1} B_k for a stack of `batch` factors (A_k at A + k * strideA, B_k at B + k *
// strideB, on `device`), on `stream` after the work already on it; returns once enqueued, never
// waiting for the GPU.
template <class T>
void potrs_stack_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A,
                                         int lda, long long strideA, T* B, int ldb, long long strideB, int batch,
                                         void* stream);

// The GPU's steps of a refined solve (device::posv_refined) of a double-precision A (T: double or
// complex<double>; n x n, lda, its triangle uplo), B and X (n x nrhs) on `device`, on `stream`
// with the runtime's handles (kernels/cuda/refinement.hpp says how A is scaled). The
// single-precision matrix (SingleOf<T>) is a workspace of n x n elements held for the object's
// life, with the rest of its buffers (about n x 2600 single-precision elements and, for one
// right-hand side, n x n / 64 of T); the caller factors it in place (its lower triangle) between
// narrow_matrix and the first correct, which inverts the factor's diagonal blocks of 2048 for the
// triangular solves, with TF32 products where `factor_on_tensor_cores` (the factor is no more
// accurate than that).
template <class T>
class RefinementOnStream {
 public:
  using Single = SingleOf<T>;
  RefinementOnStream(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A, int lda, const T* B,
                     int ldb, T* X, int ldx, void* stream, bool factor_on_tensor_cores);
  ~RefinementOnStream();
  RefinementOnStream(const RefinementOnStream&) = delete;
  RefinementOnStream& operator=(const RefinementOnStream&) = delete;

  enum class Narrowing { done, overflowed, diagonal_not_positive };
  // The single-precision matrix := S A S (its lower triangle); waits for it.
  Narrowing narrow_matrix();
  Single* single_matrix() const;
  int single_ld() const;
  // Where the inverses of the factor's diagonal blocks go (vendor::invert_lower_diagonal_blocks's
  // layout); the first correction makes them unless the factorization's have been noted there.
  Single* diagonal_block_inverses() const;
  void note_diagonal_block_inverses_made();
  // LAPACK's convergence bound: ||A||_inf eps sqrt(n) (eps of double), after narrow_matrix.
  double convergence_bound();
  // first: X := A_s^{-1} B through the single-precision factor; then X += A_s^{-1} R with the last
  // residual. Enqueued only: the next `converged` says whether the right-hand side overflowed.
  void correct(bool first);
  // R := B - A X; whether every column has converged (LAPACK's test against `bound`), or the
  // refinement diverged: a column of X holds a NaN or an infinity where B's column is finite
  // (LAPACK's test lets it through); first of all, whether the last correction's right-hand side
  // overflowed single precision (X unspecified). One wait for the GPU and one copy per call.
  enum class Convergence { converged, refining, diverged, overflowed };
  // `progress`, where given: the largest max|r| / max|x| over the columns.
  Convergence converged(double bound, double* progress = nullptr);
  // After converged: whether column j passed LAPACK's test.
  bool column_converged(int j) const;

  // GMRES-IR's Krylov space (gmres.hpp) in GPU memory for column `column` of the last residual,
  // its corrections added to X's column; at most `max_steps` steps. Arnoldi by classical
  // Gram-Schmidt applied twice (two products with the basis each way), one copy to the host a
  // step; M^{-1} the single-precision factor's solve with the scaling, as in `correct`.
  void krylov_begin(int column, int max_steps);
  bool krylov_start(double* beta);
  bool krylov_extend(int k, T* column);
  void krylov_add_combination(int k, const T* y);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::detail

#endif
