// The runtime-independent interface through which the algorithms in src/ insert tile tasks.
// Algorithms see tiles as opaque references and never include StarPU; the codelets in codelets/
// implement these functions on StarPU (implicit dependencies from the access modes).
#pragma once

#include <vector>

#include "tessera/options.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

class Submission;
class RuntimeResources;
class DistributedInserter;
class StagingRing;
class TileGrid;

// One tile: an opaque runtime handle, its shape, its tile indices (for traces) and the global
// row and column of its first element. A transposed tile holds the transpose of tile (i, j) in
// its memory (cols x rows there): the block (j, i) of an upper-stored matrix, kept as the caller
// stores it. The task functions below take every tile as the tile (i, j) it stands for and run
// the BLAS form that the stored orientations need (transposed_forms.hpp).
struct TileRef {
  void* handle = nullptr;
  int rows = 0;
  int cols = 0;
  int i = 0;
  int j = 0;
  int row0 = 0;
  int col0 = 0;
  bool transposed = false;
};

enum class Side { left, right };

// LAPACK's letter for a triangle (the checks of the C++ API's arguments, the kernels' calls).
inline char uplo_letter(Uplo uplo) { return uplo == Uplo::upper ? 'U' : 'L'; }

// Tile tasks spread over several GPUs (GpuPlacement::block_cyclic): tile (i, j) belongs to GPU
// (i mod P) Q + (j mod Q) of a P x Q grid of GPUs, batched chunk c to GPU c mod PQ. One GPU (the
// default 1 x 1) places nothing.
struct GpuOwners {
  int rows = 1;  // P
  int cols = 1;  // Q
  // P x Q = gpus with P >= Q and Q the largest divisor of gpus not above its square root: a
  // lower-triangular tile grid's rows are longer further down, so rows dealt cyclically share the
  // work evenly, and the columns of a square grid halve what each GPU receives of a panel.
  static GpuOwners for_gpus(int gpus);
  int gpus() const { return rows * cols; }
  int of_tile(int i, int j) const { return (i % rows) * cols + j % cols; }
  int of_chunk(int chunk) const { return chunk % gpus(); }
};

// What every inserted task needs: where its state lives and where it may run.
struct TaskContext {
  Submission* submission = nullptr;
  const RuntimeResources* resources = nullptr;
  Mode mode = Mode::cpu;          // already resolved against the workers present
  GpuKernels gpu_kernels = GpuKernels::any;
  // The arithmetic of real single-precision gemm and syrk tasks on CUDA workers.
  TensorCores tensor_cores = TensorCores::off;
  // Set for the tiles of a matrix distributed over MPI ranks: every rank inserts every task, the
  // rank owning the tile a task writes runs it, and the runtime moves the tiles it reads. Null:
  // the tasks run in this process.
  const DistributedInserter* distributed = nullptr;
  // Several GPUs: the tile tasks run on the GPU owning the tile they write (TaskHints::gpu).
  GpuOwners gpu_owners{};
  // Set when the tiles live on a GPU and the caller's array is reached through pinned slots
  // (HostTiles::staged): copy_in and copy_out then go through them.
  StagingRing* staging = nullptr;
  // Where a tensor-core factorization whose panel solves go by the diagonal tiles' inverses keeps
  // those inverses (tile (0, k) for diagonal tile k, the last one's made too), for a caller that
  // solves with them afterwards; null: scratch tiles, released once the panel is solved.
  const TileGrid* kept_panel_inverses = nullptr;
};

// The context of the work that keeps the tiles' own arithmetic (solves, inverses): tensor cores
// are for the factorization's trailing updates.
inline TaskContext with_native_arithmetic(TaskContext ctx) {
  ctx.tensor_cores = TensorCores::off;
  return ctx;
}

// The context of tiles in host memory beside a staged matrix's (a solve's right-hand sides).
inline TaskContext without_staging(TaskContext ctx) {
  ctx.staging = nullptr;
  return ctx;
}

// A = L L^T on the lower triangle of the diagonal tile A; a local failure at (1-based) column c is
// reported as info = A.col0 + c.
template <class T>
void insert_potrf(const TaskContext& ctx, const TileRef& A, const TaskHints& hints);

// B := alpha op(L)^{-1} B (side left) or alpha B op(L)^{-1} (side right); L lower triangular.
template <class T>
void insert_trsm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L,
                 const TileRef& B, const TaskHints& hints);

// C := alpha A A^T + beta C on the lower triangle of C.
template <class T>
void insert_syrk(const TaskContext& ctx, T alpha, const TileRef& A, T beta, const TileRef& C,
                 const TaskHints& hints);

// C := alpha op(A) op(A)^T + beta C on the lower triangle of C (trans no: A A^T, the trailing
// update; conjugate_transpose: A^T A, the triangle product of an inverse).
template <class T>
void insert_syrk(const TaskContext& ctx, Trans trans, T alpha, const TileRef& A, T beta, const TileRef& C,
                 const TaskHints& hints);

// A := L^{-1} on the lower triangle of the diagonal tile A (L non-unit lower triangular, with no
// zero on its diagonal: the operations check that before inserting it).
template <class T>
void insert_trtri(const TaskContext& ctx, const TileRef& A, const TaskHints& hints);

// A := L^T L on the lower triangle of the diagonal tile A (LAPACK's xLAUUM).
template <class T>
void insert_lauum(const TaskContext& ctx, const TileRef& A, const TaskHints& hints);

// *sum := 2 sum log of the diagonal of the diagonal tile A (a factor's), in double: the tile's
// share of the log-determinant (host memory the caller owns until the submission ends).
template <class T>
void insert_log_diagonal(const TaskContext& ctx, const TileRef& A, double* sum, const TaskHints& hints);

// B := alpha op(L) B (side left) or alpha B op(L) (side right); L lower triangular.
template <class T>
void insert_trmm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 const TaskHints& hints);

// C := alpha op(A) op(B) + beta C.
template <class T>
void insert_gemm(const TaskContext& ctx, Trans transa, Trans transb, T alpha, const TileRef& A,
                 const TileRef& B, T beta, const TileRef& C, const TaskHints& hints);

// Coarser tasks over runs of tiles of one tile column, top down (block-column Cholesky). Their
// implementations make one call per stretch of tiles lying contiguously in memory.
//
// The panel of a step: potrf of column[0] (the diagonal tile; info as insert_potrf), then
// column[i] := column[i] L^{-T} for the tiles below it.
template <class T>
void insert_panel(const TaskContext& ctx, const std::vector<TileRef>& column, const TaskHints& hints);

// The whole factorization as one task (TaskGrain::whole_matrix): `tiles` are the lower tiles of
// the matrix (or its transposed ones), column by column, each column top down from its diagonal
// tile; info as insert_potrf's, with the matrix's global column.
template <class T>
void insert_whole_factorization(const TaskContext& ctx, const std::vector<TileRef>& tiles, const TaskHints& hints);

// The update of one block column by a factored panel: with panel[0] the panel's tile in the block
// column's rows, column[0] -= panel[0] panel[0]^T (lower triangle) and column[i] -= panel[i]
// panel[0]^T below it. panel and column have the same length and tile heights.
template <class T>
void insert_column_update(const TaskContext& ctx, const std::vector<TileRef>& panel, const std::vector<TileRef>& column,
                          const TaskHints& hints);

// How a tile maps onto a block of a column-major matrix held by the caller: the block starts at
// (row0, col0) of the matrix (leading dimension ld) and is the tile itself, or its transpose when
// `transpose` (an upper-stored symmetric matrix copied into lower tiles). With lower_only the tile
// is a diagonal tile of a symmetric matrix: only its lower triangle is read or written. in_matrix:
// the block belongs to the symmetric matrix being factored (not to right-hand sides, whose NaNs
// simply propagate). tile_transposed: the tile is stored transposed (TileRef::transposed) and
// holds the upper-stored block as it is: lower_only then means the block's upper triangle, and a
// value in tile column c belongs to row c of the tile the block stands for.
template <class T>
struct BlockMap {
  T* base;
  int ld;
  int row0;
  int col0;
  bool transpose;
  bool lower_only;
  bool in_matrix;
  bool tile_transposed = false;
};

// Tile <- block. For a block in_matrix, a NaN or infinity at tile row r is reported to the
// submission as a failure of the leading minor of order tile.row0 + r + 1 (the smallest minor it
// belongs to).
template <class T>
void insert_copy_in(const TaskContext& ctx, const BlockMap<T>& from, const TileRef& tile, const TaskHints& hints);

// Block <- tile. With skip_after_failure the copy does not happen once the submission has
// failed (posv leaves B untouched when the factorization fails, as LAPACK does).
template <class T>
void insert_copy_out(const TaskContext& ctx, const TileRef& tile, const BlockMap<T>& to, bool skip_after_failure,
                     const TaskHints& hints);

// dst <- src (same shape); with zero_upper, zeros replace src's strict upper triangle.
template <class T>
void insert_copy_tile(const TaskContext& ctx, const TileRef& src, const TileRef& dst, bool zero_upper, const TaskHints& hints);

// A tensor-core factorization's panel solve by the inverse of the diagonal tile's factor (float
// tiles stored as they stand): X := L^{-1} from the diagonal tile L (X a tile of its shape, lower
// triangular, zeros above its diagonal), then B := B X^T = B L^{-T} for each tile B below it.
void insert_invert_panel_factor(const TaskContext& ctx, const TileRef& L, const TileRef& X, const TaskHints& hints);
void insert_multiply_by_panel_inverse(const TaskContext& ctx, const TileRef& X, const TileRef& B,
                                      const TaskHints& hints);

// A tile of the runtime's own shaped as `like` (its coordinates too), with no home: the runtime
// allocates it where its first task writes it. For a result that lives between a few tasks of one
// step; release_scratch_tile once the last of them is inserted (the memory goes when they are done).
template <class T>
TileRef scratch_tile(const TaskContext& ctx, const TileRef& like);
void release_scratch_tile(const TaskContext& ctx, const TileRef& tile);

// *norm := the Frobenius norm of the double tile (of the whole symmetric block for a diagonal tile,
// whose referenced triangle alone is read; host memory from submission_slots). On a GPU where
// one may run the task: there the tile takes part in the factorization next, and its transfer then
// costs less than norms on the CPUs.
void insert_tile_norm(const TaskContext& ctx, const TileRef& tile, bool diagonal, double* norm, const TaskHints& hints);

// The reduced updates C -= A B^T of an adaptive-precision factorization on double tiles (C
// accumulated in double; TileArithmetic):
//   insert_float_gemm: the operands rounded to FP32 by the task (CPU workers alone);
//   fp16_pieces_tile, insert_round_to_fp16: a panel tile's FP16 pieces (a scratch tile shaped as
//       `like` is stored; release_scratch_tile), made once per step for every update reading it;
//   insert_pieces_gemm: the update from two tiles' pieces, in `arithmetic` (fp16 or fp32).
void insert_float_gemm(const TaskContext& ctx, const TileRef& A, const TileRef& B, const TileRef& C,
                       const TaskHints& hints);
TileRef fp16_pieces_tile(const TaskContext& ctx, const TileRef& like);
void insert_round_to_fp16(const TaskContext& ctx, const TileRef& A, const TileRef& pieces, const TaskHints& hints);
void insert_pieces_gemm(const TaskContext& ctx, TileArithmetic arithmetic, const TileRef& A, const TileRef& B,
                        const TileRef& C, const TaskHints& hints);

// `count` doubles of host memory that live as long as ctx's submission: results of tasks that the
// inserting thread reads once wait_for_inserted_tasks has returned.
double* submission_slots(const TaskContext& ctx, int count);
// Blocks until every task inserted so far into ctx's submission has finished (a decision that
// needs their results before the next tasks are inserted).
void wait_for_inserted_tasks(const TaskContext& ctx);

// sums (2 * max(rows, cols) values, host memory owned by the caller until the submission ends):
// sums[0..cols) += column sums of |tile|, sums[cols..cols+rows) += row sums (lower_only as in
// kernels::cpu::abs_sums; moduli of complex entries, as reals).
template <class T>
void insert_abs_sums(const TaskContext& ctx, const TileRef& tile, bool lower_only, RealOf<T>* sums, const TaskHints& hints);

}  // namespace tessera::detail

// ---- batched mode ------------------------------------------------------------------------------

namespace tessera::detail {

// Memory the caller owns, registered with the runtime for the tasks of one request: `count`
// blocks of `block_elements` elements, `stride` elements apart (the matrices of one chunk of a
// batch), or one contiguous array. release_data waits for the tasks using it and leaves the
// latest contents in the caller's memory.
void* register_blocks(void* base, std::size_t element_size, long long block_elements, long long stride, int count);
void* register_array(void* base, std::size_t element_size, long long count);
void release_data(void* handle);

// Matrices `matrices` (registered by register_blocks, one block per matrix, leading dimension
// lda inside a block) of order n factored in place; info (an int array of the chunk's size)
// receives each matrix's LAPACK info.
template <class T>
void insert_potrf_chunk(const TaskContext& ctx, Uplo uplo, int n, int lda, void* matrices, void* info, bool fast_math,
                        const TaskHints& hints);
// rhs (blocks of n x nrhs, leading dimension ldb) := A^{-1} rhs for every matrix whose info is 0.
template <class T>
void insert_potrs_chunk(const TaskContext& ctx, Uplo uplo, int n, int nrhs, int lda, int ldb, void* matrices,
                        void* info, void* rhs, const TaskHints& hints);

// The factors `matrices` (as insert_potrf_chunk's) replaced by their inverses (LAPACK's xPOTRI
// on each); info receives each one's info (a zero on its factor's diagonal; that matrix is then
// left as it was).
template <class T>
void insert_potri_chunk(const TaskContext& ctx, Uplo uplo, int n, int lda, void* matrices, void* info,
                        const TaskHints& hints);

// Variable sizes: `data` is a registered array holding the chunk's matrices; sizes, lds and
// offsets (element offsets into data) are registered int / int / long long arrays.
struct VariableChunk {
  void* data;
  void* sizes;
  void* lds;
  void* offsets;
  int count;
  int max_n;
};
template <class T>
void insert_vpotrf_chunk(const TaskContext& ctx, Uplo uplo, const VariableChunk& a, void* info, bool fast_math,
                         const TaskHints& hints);
template <class T>
void insert_vpotrs_chunk(const TaskContext& ctx, Uplo uplo, int nrhs, const VariableChunk& a, void* info,
                         const VariableChunk& b, const TaskHints& hints);

}  // namespace tessera::detail
