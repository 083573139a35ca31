// Device-resident operations: the matrices are already in GPU memory, as with cuSOLVER. Every
// pointer below is a device pointer unless its comment says otherwise; matrices are column-major
// and only the triangle `uplo` is read and written.
//
// Streams: work is ordered after what is already on the caller's `stream` and its result is ready
// on that stream (anything the caller enqueues on it afterwards sees it). The batched `_ex` forms
// never synchronise: per-matrix info stays in device memory. The checking forms synchronise the
// stream and return how many matrices failed. The dense forms run Tessera's tile DAG on tiles
// registered in place (no copy of the matrix) and, as that DAG is driven from the host, first
// synchronise `stream` (cudaStreamSynchronize: the calling thread waits for the work already on
// it), then return once the result is complete in the caller's memory.
//
// Scalars: every form takes float, double, std::complex<float> and std::complex<double>
// (complex matrices are Hermitian positive definite: A = L L^H, upper storage U = L^H; an upper
// triangle read through strides is read as the lower one's conjugate transpose).
//
// Misuse throws InvalidArgument (LAPACK's argument position in the message, tessera/
// lapack_arguments.hpp); a CUDA failure CudaError. Built without CUDA, every call throws
// RuntimeError.
//
// Batched forms, in detail:
//   - Arguments are checked on the host before anything is enqueued; nothing is read through a
//     device pointer there. The positions are LAPACK's (uplo is 1; docs/user-guide.md).
//   - n = 0 (max_n = 0 for vbatched), nrhs = 0 for potrs, or batch = 0: the call returns at once
//     and enqueues nothing (info is not written; the checking forms do not synchronise and set
//     host_info to 0).
//   - vbatched: the per-matrix sizes are device memory, so they are checked on the device: a
//     matrix with n[k] < 0, n[k] > max_n, lda[k] < max(1, n[k]) or (posv) ldb[k] < max(1, n[k])
//     is left as it is and gets info[k] = -position of that size (potrf: n 2, max_n 3, lda 5;
//     posv: n 2, max_n 3, lda 6, ldb 8). potrs_vbatched cannot report (its info is an input): it
//     skips such a matrix. The other matrices are factored and solved normally.
//   - The pointers inside A_array and B_array are not checked (as in cuBLAS and cuSOLVER).
//   - The vbatched and checking forms take a few bytes per matrix of temporary device memory,
//     allocated and freed in stream order on `stream` (cudaMallocAsync/cudaFreeAsync).
//   - Call with the device that owns `stream` current, as for a kernel launch.
#pragma once

#include "tessera/export.h"

#include "tessera/cholesky.hpp"
#include "tessera/options.hpp"
#include "tessera/refinement.hpp"
#include "tessera/runtime.hpp"


namespace tessera::device {

// Whether a stack of `batch` matrices of order n and scalar type `precision` in GPU memory is
// factored fastest by the batched kernels alone (potrf_batched_ex) rather than through
// potrf_stack_ex: cuSOLVER's batched potrf where few large matrices would leave most of the GPU
// idle in the batched kernels, and for larger orders (real stacks, and long complex ones) the
// batched kernels in blocks of columns with cuBLAS's products between them. Tessera's Python
// package follows it.
TESSERA_EXPORT bool stack_takes_batched_kernels(int n, int batch, Precision precision = Precision::double_real);
// Whether the solves with a stack of `batch` factors of order n and scalar type `precision` in GPU
// memory, `nrhs` right-hand sides each, run fastest as one launch of potrs_batched_ex rather than
// through potrs_stack_ex (few large matrices, or a long stack with many right-hand sides).
TESSERA_EXPORT bool stack_solves_take_batched_kernels(int n, int batch, int nrhs = 1,
                                                      Precision precision = Precision::double_real);
// Whether the inverse from `batch` factors of order n and scalar type `precision` in GPU memory is
// computed fastest by potri_batched_ex (one kernel launch), and otherwise whether by potri_ex (one
// matrix, on the caller's stream), rather than by solving with the identity.
// Tessera's Python package follows them.
TESSERA_EXPORT bool inverse_takes_batched_kernel(int n, int batch, Precision precision = Precision::double_real);
TESSERA_EXPORT bool inverse_takes_dense_call(int n, int batch, Precision precision = Precision::double_real);

using Stream = CUstream_st*;

// ---- batched, strided: matrix k at A + k * strideA ----------------------------------------------

// A_k = L_k L_k^T (or U_k^T U_k); info[k] (device, batch ints) is LAPACK's info for matrix k.
template <class T>
TESSERA_EXPORT void potrf_batched_ex(Uplo uplo, int n, T* A, int lda, long long strideA, int batch,
                                     int* info, Stream stream);
// B_k := A_k^{-1} B_k (B_k n x nrhs at B + k * strideB) with potrf_batched's factors; a matrix
// whose info[k] is non-zero keeps its B_k. info may be null (every matrix solved).
template <class T>
TESSERA_EXPORT void potrs_batched_ex(Uplo uplo, int n, int nrhs, const T* A, int lda,
                                     long long strideA, T* B, int ldb, long long strideB, int batch,
                                     const int* info, Stream stream);
template <class T>
TESSERA_EXPORT void posv_batched_ex(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA,
                                    T* B, int ldb, long long strideB, int batch, int* info,
                                    Stream stream);

// ---- batched, out of place: A_k read through element strides, its factor written to L_k -----------
//
// L_k := the Cholesky factor of A_k for every k < batch, in one kernel launch; A is not modified.
//   - A_k starts at A + k * strideA and its element (i, j) lies at i * rowStrideA + j * colStrideA,
//     so a batch is read as it lies in memory: a C-ordered (batch, n, n) array has rowStrideA = n,
//     colStrideA = 1, strideA = n * n; a Fortran-ordered stack or a transposed view has
//     rowStrideA = 1, colStrideA = n. Any strides are accepted (zero and negative included: A is
//     only read; strideA = 0 factors one matrix batch times). Strides count elements, as
//     PyTorch's do (CuPy's and numpy's count bytes: divide them by the item size).
//   - Only the triangle `uplo` of A_k, in (i, j) terms, is read: i >= j for lower, i <= j for upper.
//   - L_k starts at L + k * strideL, column-major with leading dimension ldl. It receives the factor
//     in the triangle `uplo` (A_k = L_k L_k^T, or U_k^T U_k for upper) and zeros in the strict
//     other triangle, all n x n entries written; rows n to ldl - 1 are not touched.
//   - info[k] is LAPACK's info. A matrix that fails (info[k] = j > 0) holds, as in LAPACK, the
//     factor of its leading (j-1) x (j-1) minor in columns 0 to j-2 of its triangle; the rest of
//     that triangle is unspecified (today: what potrf_batched_ex would leave there in place), the
//     other triangle zeros. The other matrices of the batch are unaffected.
//   - L must not share memory with A (the check compares the address ranges the two batches span),
//     except the in-place layout: L == A with rowStrideA = 1, colStrideA = ldl and strideA =
//     strideL, which factors in place and zeros the opposite triangle.
//   - Positions: uplo 1, n 2, A 3, rowStrideA 4, colStrideA 5, strideA 6, L 7, ldl 8, strideL 9,
//     batch 10, info 11. n = 0 or batch = 0 enqueues nothing (info is not written).
//   - Cost: one read of each referenced triangle and one write of each n x n factor; no workspace.
template <class T>
TESSERA_EXPORT void potrf_batched_ex(Uplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA,
                                     long long strideA, T* L, int ldl, long long strideL, int batch, int* info,
                                     Stream stream);

// ---- batched inverse from the factors: LAPACK's xPOTRI on every matrix -----------------------------
//
// In place: A_k := A_k^{-1} in the triangle `uplo`, from the factor potrf_batched_ex left there; the
// other triangle is not touched. info[k] (device) = j > 0 when the factor's diagonal entry j is
// zero (that matrix is then left as it was), else 0. The arithmetic is LAPACK's (xTRTRI, then
// xLAUUM): a complex factor's diagonal enters the triangular inverse as stored and the product by
// its real part, so that the inverse's diagonal is real. One kernel launch: a warp per matrix up
// to order 32, else a thread block per matrix with its factor in shared memory (up to n = 168 for
// double, 119 for complex double, 238 for float on an H100 or H200); larger matrices run from
// device memory taken for the call (up to 1 GiB, in stream order), correct but far slower than the
// dense potri one matrix at a time.
// Positions as potrf_batched_ex's.
template <class T>
TESSERA_EXPORT void potri_batched_ex(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info,
                                     Stream stream);
// Out of place: factor k read from L through element strides as the out-of-place potrf_batched_ex
// reads a matrix (only its triangle `uplo`), the whole inverse (both triangles, Hermitian)
// written to X + k * strideX, column-major with leading dimension ldx. A matrix whose factor has a
// zero on its diagonal gets its info and an X_k of NaN; info may be null (no infos written: the
// NaN still marks a failed matrix). X must not share memory with L, except
// the in-place layout (then both triangles of A_k are written). Positions as the out-of-place
// potrf_batched_ex's (X in L's places).
template <class T>
TESSERA_EXPORT void potri_batched_ex(Uplo uplo, int n, const T* L, long long rowStrideL, long long colStrideL,
                                     long long strideL, T* X, int ldx, long long strideX, int batch, int* info,
                                     Stream stream);

// ---- batched, arrays of pointers: A_array (device) holds batch device pointers ---------------------

// The inverse from the factors (the strided potri_batched_ex above) with factor k at A_array[k].
template <class T>
TESSERA_EXPORT void potri_batched_ex(Uplo uplo, int n, T* const* A_array, int lda, int batch, int* info,
                                     Stream stream);

template <class T>
TESSERA_EXPORT void potrf_batched_ex(Uplo uplo, int n, T* const* A_array, int lda, int batch,
                                     int* info, Stream stream);
template <class T>
TESSERA_EXPORT void potrs_batched_ex(Uplo uplo, int n, int nrhs, const T* const* A_array, int lda,
                                     T* const* B_array, int ldb, int batch, const int* info,
                                     Stream stream);
template <class T>
TESSERA_EXPORT void posv_batched_ex(Uplo uplo, int n, int nrhs, T* const* A_array, int lda,
                                    T* const* B_array, int ldb, int batch, int* info, Stream stream);

// Variable sizes: n, lda, ldb are device arrays of batch ints; max_n (host) bounds every n[k]
// (a matrix beyond it is refused through its info, above). Matrices with n[k] = 0 get info 0.
template <class T>
TESSERA_EXPORT void potrf_vbatched_ex(Uplo uplo, const int* n, int max_n, T* const* A_array,
                                      const int* lda, int batch, int* info, Stream stream);
template <class T>
TESSERA_EXPORT void potrs_vbatched_ex(Uplo uplo, const int* n, int max_n, int nrhs,
                                      const T* const* A_array, const int* lda, T* const* B_array,
                                      const int* ldb, int batch, const int* info, Stream stream);
template <class T>
TESSERA_EXPORT void posv_vbatched_ex(Uplo uplo, const int* n, int max_n, int nrhs,
                                     T* const* A_array, const int* lda, T* const* B_array,
                                     const int* ldb, int batch, int* info, Stream stream);
// The inverse from variable-size factors, in place (potri_batched_ex per matrix; sizes refused as
// potrf_vbatched_ex refuses them, at the same positions).
template <class T>
TESSERA_EXPORT void potri_vbatched_ex(Uplo uplo, const int* n, int max_n, T* const* A_array,
                                      const int* lda, int batch, int* info, Stream stream);

// ---- checking forms: synchronise `stream`; host_info (host, batch ints) may be null ----------------

// The infos that the *_ex forms write to device memory, read back: waits for the work enqueued on
// `stream`, copies info[0..count) into host_info and returns how many are non-zero. Positions:
// info 1, count 2, host_info 3 (null only with count 0).
TESSERA_EXPORT int read_info(const int* info, int count, int* host_info, Stream stream);

// Returns how many matrices are not positive definite; host_info[k] gets each one's info.
template <class T>
TESSERA_EXPORT int potrf_batched(Uplo uplo, int n, T* A, int lda, long long strideA, int batch,
                                 int* host_info, Stream stream);
// Returns how many factors have a zero on their diagonal (potri_batched_ex, in place).
template <class T>
TESSERA_EXPORT int potri_batched(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* host_info,
                                 Stream stream);
template <class T>
TESSERA_EXPORT int posv_batched(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B,
                                int ldb, long long strideB, int batch, int* host_info,
                                Stream stream);

// Zeros the triangle opposite `uplo` of each n x n matrix (strict part), e.g. to return the factor
// alone as numpy.linalg.cholesky does. Never synchronises.
template <class T>
TESSERA_EXPORT void zero_opposite_triangle(Uplo uplo, int n, T* A, int lda, long long strideA,
                                           int batch, Stream stream);

// ---- dense, through the tile DAG on `runtime` -------------------------------------------------------
//
// potrf, potrs and posv are compositions of the operations' entries (tessera/cholesky.hpp) over
// MatrixView::on_device, which behave as described here.
// The tiles are views of A and B: each nb x nb block is registered with the runtime in place, its
// home the GPU that holds the matrix (which needs a CUDA worker of `runtime`: RuntimeError
// otherwise), so the tasks on that GPU work on the caller's memory and the results are there on
// return, never copied through host memory. options.mode: gpu (every task on the GPUs), hybrid or
// automatic (the scheduler may move tiles to CPU workers and back), or cpu (every task on the
// CPUs: each tile goes to host memory and back; correct, not fast). Upper storage is factored in
// place too: the tiles are A's upper blocks as stored, on which the tasks call the transposed BLAS
// forms. Only with options.grain = block_columns (whose tasks take lower tiles) is it factored in a
// workspace of n x n elements on A's GPU holding A's upper triangle transposed, at the cost of
// that memory (ResourceError when the GPU has not that much free) and one pass over the triangle
// each way. Only the triangle
// `uplo` of A is read and changed. Info: the first pivot the tile kernels find not positive, a NaN
// included (as LAPACK's and cuSOLVER's kernels do: a NaN or infinity elsewhere is reported where
// it reaches a pivot, if it does); the matrix is not scanned here, so +inf on the diagonal, whose
// square root cuSOLVER and Tessera's kernels compute as NaN, is reported at its column where
// LAPACK (and a host array's factorization) gives 0. Misuse: InvalidArgument with LAPACK's positions
// (docs/user-guide.md), checked before any CUDA call; then a host pointer for A or B is
// an InvalidArgument at its position too. A runtime without a CUDA worker: RuntimeError.
//
// One vendor call: left to Tessera (options.grain automatic, options.nb 0), a matrix of order up to
// 16384 on the one GPU of a runtime that runs the call as gpu mode is factored by cuSOLVER's potrf
// on the matrix itself (an upper-stored one through a transposed workspace of n x n elements, which
// the runtime keeps for its next such call while it is at most 1/16 of the GPU's memory; a real
// matrix up to order 192 by one thread block of Tessera's in one launch instead), the
// solves are cuBLAS's two trsm, and no trace is asked for: these are enqueued by the calling thread
// on `stream`, after the work already there, with handles the runtime keeps, and without a task
// of the runtime (whose request would add its own cost to every call and wait for the stream
// first; docs/gpu-performance.md, section "A matrix already in GPU memory"). The call returns once the result is
// complete, as the others do. The inverse (potri, potri_ex) takes that path up to order 8192 (the
// triangle's inverse W, by one cuBLAS triangular solve of the identity or by levels of batched
// products, then cuBLAS's Hermitian product W^H W), its tile DAG above.

// A (n x n, lda) factored in place; returns LAPACK's info.
template <class T>
int potrf(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options = {}) {
  return potrf_async(runtime, MatrixView<T>::on_device(n, n, A, lda, stream), options).wait();
}
// A (n x n, lda) holding potrf's factor := A^{-1} in the same triangle (LAPACK's xPOTRI, as tile
// tasks); returns LAPACK's info (k > 0: a zero at the factor's diagonal entry k, A unchanged).
template <class T>
int potri(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options = {}) {
  return potri_async(runtime, MatrixView<T>::on_device(n, n, A, lda, stream), options).wait();
}
// B (n x nrhs, ldb; on any GPU of the runtime) := A^{-1} B with A factored by potrf; returns 0.
template <class T>
int potrs(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb, Stream stream,
          const FactorOptions& options = {}) {
  return potrs_async(runtime, MatrixView<T>::on_device(n, n, const_cast<T*>(A), lda, stream),
                     MatrixView<T>::on_device(n, nrhs, B, ldb, stream), options)
      .wait();
}
// potrf with LAPACK's info written to `info` (one int in the memory of A's GPU) in the order of
// `stream` instead of returned. As one vendor call (below) it never synchronises: it returns once
// the work is enqueued on `stream`. Otherwise the tiles are factored as by potrf, the call returns
// when they are, and the info is written on `stream`. Misuse as potrf's; a null `info`, or one in
// host memory, is an InvalidArgument at position 5.
template <class T>
TESSERA_EXPORT void potrf_ex(Runtime& runtime, int n, T* A, int lda, int* info, Stream stream,
                             const FactorOptions& options = {});
// Out of place, as torch.linalg.cholesky_ex: L (n x n, column-major, ldl, on A's GPU) := the
// Cholesky factor of A, whose element (i, j) lies at A + i * rowStrideA + j * colStrideA (strides
// in elements, any values, as in the batched out-of-place form above: a C-ordered matrix has
// rowStrideA = n, colStrideA = 1). Only the triangle options.uplo of A is read and A is not
// written; L receives the factor in that triangle and zeros in the other, every n x n entry
// written, and the info goes to `info` as in potrf_ex. The triangle is loaded into L by one kernel
// on `stream`, then factored in place as potrf_ex does (an upper one as its lower transpose, moved
// back to L's upper triangle by one more kernel). L must not share memory with A, except in place
// (L == A, rowStrideA 1, colStrideA ldl). Positions: n 2, A 3, rowStrideA 4, colStrideA 5, L 6,
// ldl 7, info 8 (uplo, options.uplo, 1).
template <class T>
TESSERA_EXPORT void potrf_ex(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA, T* L,
                             int ldl, int* info, Stream stream, const FactorOptions& options = {});
// The out-of-place form above with LAPACK's info returned, as torch.linalg.cholesky: returns once
// L is complete. As one vendor call (below) the info comes back through a word the runtime keeps,
// with one synchronisation of `stream`: no info array of the caller's. Positions: n 2, A 3,
// rowStrideA 4, colStrideA 5, L 6, ldl 7 (uplo, options.uplo, 1).
template <class T>
TESSERA_EXPORT int potrf(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA, T* L, int ldl,
                         Stream stream, const FactorOptions& options = {});
// Out of place, as torch.cholesky_inverse: X (n x n, column-major, ldx, on L's GPU) := A^{-1},
// both triangles (Hermitian, with a real diagonal), from the Cholesky factor of A whose element
// (i, j) lies at L + i * rowStrideL + j * colStrideL (strides as potrf_ex's out-of-place form
// takes them; only the triangle options.uplo is read and L is not written). `info` (one int in
// the memory of L's GPU, or null for none): LAPACK's info, k > 0 when the factor's diagonal entry
// k is zero, X then all NaN. On the one-call path (above) the factor is loaded into X, inverted
// there and mirrored, all enqueued on `stream` without synchronising;
// otherwise X is inverted as potri's tile tasks and the call returns when they are done. X must
// not share memory with L. Positions: n 2, L 3, rowStrideL 4, colStrideL 5, X 6, ldx 7, info 8
// (uplo, options.uplo, 1).
template <class T>
TESSERA_EXPORT void potri_ex(Runtime& runtime, int n, const T* L, long long rowStrideL, long long colStrideL, T* X,
                             int ldx, int* info, Stream stream, const FactorOptions& options = {});
// A stack of `batch` matrices factored out of place, each as by potrf_ex's out-of-place form
// above: matrix k's element (i, j) at A + k * strideA + i * rowStrideA + j * colStrideA, its factor
// into L + k * strideL (ldl), its info into info[k] (batch ints in the memory of A's GPU), all in the
// order of `stream`. Where the plan runs the stack on the caller's stream (a mode that resolves to
// gpu on one GPU), a stack of moderate orders is one call of cuSOLVER's batched potrf, and a real
// one of larger orders is factored by the batched kernels in blocks of columns with cuBLAS's
// products between them; neither synchronises (tessera::device::stack_takes_batched_kernels says
// where the batched kernels of potrf_batched_ex alone are faster still). Off the caller's stream the
// latter stacks take potrf_batched_ex and the others go one after the other through potrf_ex.
// Positions as potrf_batched_ex's out-of-place form: n 2, A 3, rowStrideA 4, colStrideA
// 5, strideA 6, L 7, ldl 8, strideL 9, batch 10, info 11 (uplo, options.uplo, 1).
template <class T>
TESSERA_EXPORT void potrf_stack_ex(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA,
                                   long long strideA, T* L, int ldl, long long strideL, int batch, int* info,
                                   Stream stream, const FactorOptions& options = {});
// B_k (n x nrhs at B + k * strideB, ldb) := A_k^{-1} B_k for a stack of `batch` factors of potrf
// (A_k at A + k * strideA, lda, the triangle options.uplo), in the order of `stream`. Where the
// plan runs the solve on the caller's stream (a mode that resolves to gpu on one GPU) every
// matrix's two triangular solves are enqueued there and the call never synchronises; otherwise
// the matrices go one after the other through potrs. Positions: uplo 1 (options.uplo), n 2, nrhs 3,
// A 4, lda 5, strideA 6, B 7, ldb 8, strideB 9, batch 10.
template <class T>
TESSERA_EXPORT void potrs_stack_ex(Runtime& runtime, int n, int nrhs, const T* A, int lda, long long strideA, T* B,
                                   int ldb, long long strideB, int batch, Stream stream,
                                   const FactorOptions& options = {});
// potrf, then potrs once the factor exists: B is left as it was when info > 0, as in LAPACK.
template <class T>
int posv(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, Stream stream,
         const FactorOptions& options = {}) {
  return posv_async(runtime, MatrixView<T>::on_device(n, n, A, lda, stream),
                    MatrixView<T>::on_device(n, nrhs, B, ldb, stream), options)
      .wait();
}

// X := A^{-1} B in mixed precision, as tessera::posv_refined (tessera/refinement.hpp) with A (n x n,
// lda), B and X (n x nrhs) in the memory of one GPU, double precision (complex<double>: LAPACK's
// ZCPOSV, A Hermitian, its factor in complex<float> without tensor cores: options.tensor_cores
// other than off is an InvalidArgument; the imaginary parts of A's diagonal are not read); LAPACK's DSPOSV otherwise:
// same INFO, ITER and convergence test, A unchanged when iter >= 0 and holding potrf's factor when
// iter < 0. Here A is scaled to a unit diagonal before it is rounded, S A S with S = diag(1 /
// sqrt(a_ii)) (no entry of an SPD matrix then exceeds 1 in magnitude, so values beyond single
// precision's range in A do not by themselves send the solve to double precision), and the
// corrections are S (S A S)^{-1} S r. The scaled matrix is factored through the tile DAG in single
// precision (options.tensor_cores: its trailing updates on the tensor cores in TF32, BF16 or FP16),
// the triangular solves (with the inverses of the factor's diagonal blocks of 2048) and the
// residuals (cuBLAS) on `stream`; a workspace of n x n floats, about n x 2600 floats for those
// inverses and a few vectors are taken from the stream's memory pool for the call. Under
// options.refinement = Refinement::classical_then_gmres, GMRES-IR takes over where a classical step
// does not halve the residual, as on host arrays, its Krylov basis (n x 61 scalars) in that pool
// too, one copy of a few scalars to the host per Krylov step. ITER -3 also where a diagonal
// entry of A is not positive and finite (the double-precision factorization then reports it).
// Returns once X (or A's factor and X) is complete. Misuse: InvalidArgument with LAPACK's positions
// (uplo 1, n 2, nrhs 3, A 4, lda 5, B 6, ldb 7, X 8, ldx 9; B may share memory with A, X may not
// share memory with either; all three on one GPU), as is FactorOptions::log_determinant.
TESSERA_EXPORT RefinedSolve posv_refined(Runtime& runtime, int n, int nrhs, double* A, int lda, const double* B,
                                         int ldb, double* X, int ldx, Stream stream,
                                         const FactorOptions& options = {});
TESSERA_EXPORT RefinedSolve posv_refined(Runtime& runtime, int n, int nrhs, std::complex<double>* A, int lda,
                                         const std::complex<double>* B, int ldb, std::complex<double>* X, int ldx,
                                         Stream stream, const FactorOptions& options = {});

// X_k := A_k^{-1} B_k in mixed precision for a strided batch of small matrices (A_k n x n at A + k
// strideA, B_k and X_k n x nrhs at B + k strideB and X + k strideX, leading dimensions lda, ldb,
// ldx; GPU memory), each as posv_refined above solves one: LAPACK's DSPOSV (ZCPOSV for
// complex<double>) with its INFO, ITER and convergence test per matrix, A_k scaled to a unit
// diagonal before it is rounded. The matrices are factored and solved in single precision by the
// batched kernels (potrf_batched_ex, potrs_batched_ex), the residuals taken in double precision,
// each matrix refined until it passes LAPACK's test; a matrix whose refinement cannot work is
// factored and solved in double precision by the batched kernels (its A_k then holds the factor,
// as potrf leaves it; A_k is unchanged where iter >= 0). host_info[k] (host, batch ints) is
// LAPACK's INFO of matrix k, host_iter[k] its ITER (either may be null). On a GPU whose
// single-precision arithmetic is not several times as fast as its double (Hopper's and Ampere's
// data-centre GPUs among them; docs/user-guide.md, "Mixed precision"), where the refinement
// cannot be the faster, every matrix is factored and solved in double precision at once, with
// ITER -1 (LAPACK's "machine-specific reasons"; A_k then holds its factor). Returns how many
// matrices are not positive definite (their X_k is not written). Waits for the work it enqueues on `stream` (one wait
// per refinement step). Workspace from the stream's memory pool where it refines: n^2 + 2 n nrhs scalars per
// matrix (the single-precision copy and right-hand sides, the residuals). Misuse: InvalidArgument with the position
// (uplo 1, n 2, nrhs 3, A 4, lda 5, strideA 6, B 7, ldb 8, strideB 9, X 10, ldx 11, strideX 12, batch 13; X may share
// memory with neither A nor B).
template <class T>
TESSERA_EXPORT int posv_refined_batched(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, const T* B,
                                        int ldb, long long strideB, T* X, int ldx, long long strideX, int batch,
                                        int* host_info, int* host_iter, Stream stream);

}  // namespace tessera::device
