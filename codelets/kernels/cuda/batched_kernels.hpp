// Batched Cholesky kernels for many small SPD matrices (column-major, each matrix k at
// A + k * strideA). Plain functions: all pointers are device pointers, launches are asynchronous
// on `stream`, launch errors throw tessera::CudaError. info[k] receives LAPACK's info for matrix k.
// T is any type of TESSERA_FOR_EACH_SCALAR: a complex matrix is Hermitian positive definite
// (A_k = L_k L_k^H, upper storage holds U_k = L_k^H), its diagonal's imaginary parts are not read
// and the factor's diagonal is real, as in LAPACK's zpotrf.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::kernels::cuda {

enum class BatchUplo { lower, upper };

struct BatchedOptions {
  bool fast_math = false;  // approximate sqrt/reciprocal; off unless a user asks for it

  // Kernel shape overrides for tuning sweeps; 0 keeps the built-in per-n choice.
  // n <= 32: `threads` is the thread-block size (32, 64, 128 or 256).
  // n > 32: (`panel_width`, `threads`, `rows_per_thread`, `update_width`) names one of the
  // shapes listed by potrf_batched_panel_shapes(); fields left 0 take the built-in shape's value,
  // and a combination that is not compiled in throws tessera::InvalidArgument.
  int panel_width = 0;
  int threads = 0;
  int rows_per_thread = 0;
  int update_width = 0;
  // n > 32, upper storage: the panel kernels that stage the previous columns' rows through shared
  // memory, where compiled in (the built-in shapes of the real types); false takes the kernels
  // that read them as lower storage's are read (for comparisons).
  bool upper_rows = true;
  // Variable batches with max_n > 32 or from 17 to 24: the matrices first split into classes of
  // orders on the device (each class of the register kernel's in groups of its own size, the
  // largest orders first for the panel kernel); false runs the register kernel over every matrix in
  // groups sized for the largest order it takes (for comparisons).
  bool order_classes = true;
  // potrf_batched_blocked: the width of its blocks of columns; 0 takes the built-in one.
  int blocked_width = 0;
  // potrf_batched_blocked: the opposite triangles of the diagonal blocks, which its products
  // overwrite, set to zero instead of kept (for callers whose opposite triangle holds zeros, as the
  // out-of-place forms' output does): no temporary memory.
  bool blocked_zero_opposite = false;
  // potrf_batched_blocked, potrf_batched_columns: the panel shapes potrf_batched_columns_shape picks
  // block by block; false takes potrf_batched_default_shape's for each block's rows (for comparisons).
  bool columns_shape_table = true;
};

// Factor batch matrices of order n in place (A_k = L_k L_k^T or U_k^T U_k).
// Only the referenced triangle is read and written. On failure info[k] is the 1-based column of
// the first non-positive (or NaN) pivot; as in LAPACK, the leading (info-1) x (info-1) block then
// holds the factor of that leading minor and the rest of the matrix's triangle is unspecified.
// Other matrices of the batch are unaffected.
template <class T>
void potrf_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info,
                   cudaStream_t stream, const BatchedOptions& opts = {});

// The same factorization in blocks of columns, for larger orders: each block is first updated from
// the columns left of it by cuBLAS's strided batched gemm on `blas`, then factored by the panel
// kernel, so that most of the arithmetic of large orders runs as products (on the tensor cores in
// double). The products also write the opposite triangle of each diagonal block, which is kept in
// temporary device memory and put back (or zeroed: BatchedOptions::blocked_zero_opposite); on
// stacks longer than the GPU has SMs those copies run on a stream of the function's own, beside
// the first and the last block's panel kernels, ordered with `stream` by events. `blas`
// must be bound to `stream` (cublasSetStream). Info as potrf_batched's; after a failure the
// matrix's triangle beyond the failing block of columns holds partly updated values (unspecified,
// as there).
template <class T>
void potrf_batched_blocked(cublasHandle_t blas, BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch,
                           int* info, cudaStream_t stream, const BatchedOptions& opts = {});
// One block of columns of potrf_batched_blocked: the first `count` columns (0 <= count <= n) of
// each matrix's factor L (rows of U in upper storage), computed from those columns of A_k alone
// (their own left-looking updates); the rest of the matrix is neither read nor written. Info as potrf_batched's, for a pivot among
// those columns (0 when they factor). The panel kernel's shape is potrf_batched_columns_shape's
// unless `opts` names one (tuning sweeps: bench_batched_columns).
template <class T>
void potrf_batched_columns(BatchUplo uplo, int n, int count, T* A, int lda, long long strideA, int batch, int* info,
                           cudaStream_t stream, const BatchedOptions& opts = {});
// The built-in width of potrf_batched_blocked's blocks of columns for `batch` matrices of order n on a
// GPU of sm_count multiprocessors.
int potrf_batched_blocked_width(int n, long long batch, int sm_count);

// Out of place: matrix k is read from A + k * strideA, its element (i, j) at
// i * rowStrideA + j * colStrideA (any strides, zero and negative ones included: A is only read, so
// a C-ordered, a Fortran-ordered or a broadcast batch is read as it lies), and its factor is
// written to L + k * strideL (column-major, leading dimension ldl) with zeros in the strict
// opposite triangle; rows past n are not written. One kernel launch. Only the triangle `uplo` of
// A_k (in (i, j) terms) is read. Info and a failed matrix's factor as in the in-place form (the
// rest of the failed factor's triangle is what the in-place form would leave there). L must not
// overlap A, except L == A with rowStrideA = 1, colStrideA = ldl, strideA = strideL (in place).
// Panel shape overrides in `opts` must name a built-in shape (potrf_batched_default_shape).
template <class T>
void potrf_batched(BatchUplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA,
                   long long strideA, T* L, int ldl, long long strideL, int batch, int* info,
                   cudaStream_t stream, const BatchedOptions& opts = {});

// Which kernel the batched solves run: `streamed` (a warp per right-hand side; above order 32 it
// reads the factor a column at a time from global memory in each sweep, below it holds the factor
// in registers), `staged` (above order 32: the factor copied into shared memory first, a warp per
// right-hand side), `lanes` (the factor and the right-hand sides in shared memory, a thread per
// right-hand side, for many of them). `automatic` picks by order, count, right-hand sides and the
// blocks that fit a multiprocessor (batched_potrs.cu says where each was measured faster).
enum class SolveKernel { automatic, streamed, staged, lanes };
struct BatchedSolveOptions {
  SolveKernel kernel = SolveKernel::automatic;  // other values for comparisons and tests
};

// Solve A_k X_k = B_k with the factors from potrf_batched; B_k is n x nrhs at B + k * strideB.
// Matrices whose info is non-zero are skipped (their B is left as it was). info may be null
// (every matrix is then solved). `staged` or `lanes` in opts where it cannot apply (staged: n <= 32;
// either: a factor larger than a block's shared memory) runs the automatic choice.
template <class T>
void potrs_batched(BatchUplo uplo, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                   long long strideB, int batch, const int* info, cudaStream_t stream,
                   const BatchedSolveOptions& opts = {});

// Variable sizes: matrix k has order n[k] (>= 0), leading dimension lda[k] and starts at
// A + offsetA[k] (element offsets). n, lda, offsetA, info are device arrays of length batch;
// max_n bounds every n[k].
template <class T>
void potrf_vbatched(BatchUplo uplo, const int* n, int max_n, T* A, const long long* offsetA,
                    const int* lda, int batch, int* info, cudaStream_t stream,
                    const BatchedOptions& opts = {});

// Variable-size solve with the factors from potrf_vbatched: B_k (n[k] x nrhs, leading dimension
// ldb[k]) starts at B + offsetB[k]. Device arrays as for potrf_vbatched; info may be null.
template <class T>
void potrs_vbatched(BatchUplo uplo, const int* n, int max_n, int nrhs, const T* A, const long long* offsetA,
                    const int* lda, T* B, const long long* offsetB, const int* ldb, int batch, const int* info,
                    cudaStream_t stream, const BatchedSolveOptions& opts = {});

// ---- arrays of pointers ----------------------------------------------------------------------
// Matrix k starts at A_array[k] (B_k at B_array[k]): device arrays of batch device pointers.
// Same kernels, info and triangle conventions as the forms above.
template <class T>
void potrf_batched(BatchUplo uplo, int n, T* const* A_array, int lda, int batch, int* info,
                   cudaStream_t stream, const BatchedOptions& opts = {});
template <class T>
void potrs_batched(BatchUplo uplo, int n, int nrhs, const T* const* A_array, int lda, T* const* B_array, int ldb,
                   int batch, const int* info, cudaStream_t stream, const BatchedSolveOptions& opts = {});

// Variable sizes with arrays of pointers (n, lda, ldb, info: device arrays of length batch). A
// negative n[k] marks a matrix to leave alone: neither it, its B nor info[k] is touched (see
// screen_variable_sizes). This also holds for the offset forms above.
template <class T>
void potrf_vbatched(BatchUplo uplo, const int* n, int max_n, T* const* A_array, const int* lda,
                    int batch, int* info, cudaStream_t stream, const BatchedOptions& opts = {});
template <class T>
void potrs_vbatched(BatchUplo uplo, const int* n, int max_n, int nrhs, const T* const* A_array, const int* lda,
                    T* const* B_array, const int* ldb, int batch, const int* info, cudaStream_t stream,
                    const BatchedSolveOptions& opts = {});

// LAPACK positions that screen_variable_sizes reports (0: that array is not checked).
struct VariableSizePositions {
  int n = 0;
  int max_n = 0;
  int lda = 0;
  int ldb = 0;
};

// The per-matrix sizes of a variable batch, checked on the device where they live: matrix k is
// valid when 0 <= n[k] <= max_n, lda[k] >= max(1, n[k]) and (ldb set) ldb[k] >= max(1, n[k]).
// checked_n[k] (device, batch ints) gets n[k] for a valid matrix and -1 otherwise, so that the
// vbatched kernels given checked_n leave it alone; where info is set, an invalid matrix's info[k]
// gets -position of its first bad size (n, then max_n, lda, ldb).
void screen_variable_sizes(const int* n, int max_n, const int* lda, const int* ldb, int batch,
                           int* checked_n, int* info, const VariableSizePositions& positions,
                           cudaStream_t stream);

// Zeros the strict triangle opposite `uplo` of each n x n matrix of a strided batch (the
// referenced triangle and the rows past n are left as they are).
template <class T>
void zero_opposite_triangle_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA,
                                    int batch, cudaStream_t stream);

// ---- interleaved ("batch-index fastest") layout ---------------------------------------------
// Matrices are grouped in chunks of 32 (kInterleaveWidth); inside a chunk the batch index varies
// fastest. Element (i, j) of matrix b lives at
//   Ai[((c * n * n) + j * n + i) * 32 + b % 32],   c = b / 32,
// so a warp that reads element (i, j) of 32 neighbouring matrices reads 32 consecutive values.
// The last chunk is padded to 32 matrices (the padding is never read or written).
inline constexpr int kInterleaveWidth = 32;

// Number of elements an interleaved batch occupies.
constexpr long long interleaved_elements(int n, int batch) {
  return (static_cast<long long>(batch) + kInterleaveWidth - 1) / kInterleaveWidth *
         kInterleaveWidth * n * n;
}

// Copy a strided batch (whole n x n matrices) into the interleaved layout, and back.
template <class T>
void interleave_batched(int n, const T* A, int lda, long long strideA, int batch, T* Ai,
                        cudaStream_t stream);
template <class T>
void deinterleave_batched(int n, const T* Ai, int batch, T* A, int lda, long long strideA,
                          cudaStream_t stream);

// potrf_batched on an interleaved batch (same info and triangle conventions). Fastest for
// n <= 32; larger n is correct but reads less efficiently.
template <class T>
void potrf_batched_interleaved(BatchUplo uplo, int n, T* Ai, int batch, int* info,
                               cudaStream_t stream, const BatchedOptions& opts = {});

// ---- tuning introspection --------------------------------------------------------------------
struct PanelShape {
  int panel_width;      // NB: columns factored per panel
  int threads;          // thread-block size
  int rows_per_thread;  // rows of the panel each thread keeps in registers
  int update_width;     // previous columns streamed per step of the panel update
};

// The panel shapes compiled in (n > 32 kernels), and the one potrf_batched picks for order n
// and precision (element_bytes: the size of a real number, 4 or 8; complex: a complex type's)
// for `batch` matrices on a GPU of `sm_count` SMs (batch 0: as many as fill it). Every listed
// shape runs in place for the real types; out of place and for the complex types, the picked
// ones only (another throws InvalidArgument).
int potrf_batched_panel_shapes(const PanelShape** shapes);
// Up to this many matrices per SM, a batch takes the shapes for few matrices.
inline constexpr int kFewMatricesPerSm = 2;
PanelShape potrf_batched_default_shape(int n, int element_bytes = 8, bool complex = false, long long batch = 0,
                                       int sm_count = 0);
// The shape of the panel kernel that factors the first `count` columns of `batch` matrices of
// order `rows` (one block of potrf_batched_blocked, potrf_batched_columns), in the triangle `upper`:
// potrf_batched_default_shape's for few matrices per SM, a table measured block by block otherwise.
PanelShape potrf_batched_columns_shape(int rows, int count, int element_bytes, bool complex, bool upper,
                                       long long batch, int sm_count);

}  // namespace tessera::kernels::cuda
