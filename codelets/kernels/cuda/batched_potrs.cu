// Batched triangular solves with Cholesky factors: one warp per right-hand side (matrix k,
// column c), several per thread block.
//   n <= 32: the whole factor in registers (lane i: row i and column i of L), see below.
//   n <= 512: lane l keeps rows l, l+32, ... of the right-hand side in registers and both sweeps
//             read the factor one stored column at a time (coalesced whatever the triangle):
//   lower, L y = b:    column j gives y_j = b_j / L(j,j), then b_i -= L(i,j) y_j   (i > j)
//   lower, L^T x = y:  column j gives x_j = (y_j - sum_{i>j} L(i,j) x_i) / L(j,j) (warp sum)
//   upper, U^T y = b:  column j gives y_j = (b_j - sum_{i<j} U(i,j) y_i) / U(j,j)
//   upper, U x = y:    column j gives x_j = y_j / U(j,j), then y_i -= U(i,j) x_j   (i < j)
// Larger orders update B in place in global memory.
//   staged (32 < n, few systems): the factor copied into shared memory first, see below.
//   lanes (many right-hand sides): the factor and the right-hand sides in shared memory, a thread
//             per right-hand side, see below.
// Complex (Hermitian) factors: the second sweep of lower storage and the first of upper storage
// solve with L^H and U^H, so the dot sweeps (and the register kernel's backward sweep) conjugate
// the factor's elements, the divisor included: a sweep divides by the diagonal's complex element or
// its conjugate, as LAPACK's ztrsm does (the same result where the diagonal is real, as in every
// factor Tessera writes).
#include <cuda_pipeline.h>

#include <limits>
#include <string>
#include <type_traits>

#include "cuda/batched_kernels.hpp"
#include "cuda/batched_scalar.cuh"
#include "cuda/check.hpp"
#include "cuda/tile_common.cuh"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

using namespace batched_detail;  // the scalar helpers (batched_scalar.cuh)

constexpr int kSolveWarps = 4;  // right-hand sides per thread block
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kMaxRegisterBlocks = 16;  // rows per lane kept in registers (n <= 512)

// Every matrix of a uniform batch: order n, matrices strideA apart, right-hand sides strideB apart.
struct UniformSolveLayout {
  int n = 0;
  int lda = 0;
  long long strideA = 0;
  int ldb = 0;
  long long strideB = 0;
};

// A variable batch: per-matrix order, leading dimensions and offsets (device arrays).
struct VariableSolveLayout {
  const int* n = nullptr;
  const int* lda = nullptr;
  const long long* offA = nullptr;
  const int* ldb = nullptr;
  const long long* offB = nullptr;
};

template <class T>
struct SolveDesc {
  const T* A = nullptr;
  T* B = nullptr;
  int nrhs = 0;
  int batch = 0;
  const int* info = nullptr;
  UniformSolveLayout uniform;
  VariableSolveLayout variable;  // the batch is variable when variable.n is set
  // Arrays of pointers: when set, system k's factor starts at A_array[k] and its right-hand
  // sides at B_array[k] (A, B, the strides and the offsets are then unused).
  const T* const* A_array = nullptr;
  T* const* B_array = nullptr;
};

template <class T>
struct SolveSystem {
  const T* A;
  long long lda;
  T* b;
  int n;
};

// The distance between system k's right-hand sides.
template <class T>
__device__ __forceinline__ long long column_stride(const SolveDesc<T>& d, int k) {
  return d.variable.n ? d.variable.ldb[k] : d.uniform.ldb;
}

template <class T>
__device__ __forceinline__ SolveSystem<T> system_at(const SolveDesc<T>& d, int k, int col) {
  const VariableSolveLayout& v = d.variable;
  const UniformSolveLayout& u = d.uniform;
  const bool variable = v.n != nullptr;
  const T* a = d.A_array ? d.A_array[k] : d.A + (variable ? v.offA[k] : k * u.strideA);
  T* b = d.B_array ? d.B_array[k] : d.B + (variable ? v.offB[k] : k * u.strideB);
  return {a, variable ? v.lda[k] : u.lda, b + col * column_stride(d, k), variable ? v.n[k] : u.n};
}

// Body of every solve kernel: warp w of the grid runs Solve(system, lane) on matrix w / nrhs,
// column w % nrhs; nothing past the batch or for a matrix whose factorization failed (nonzero
// info). Solve is a template argument so that the call is direct and inlined.
template <auto Solve, class T>
__device__ __forceinline__ void solve_warp_system(const SolveDesc<T>& d) {
  const long long w = static_cast<long long>(blockIdx.x) * kSolveWarps + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (w >= static_cast<long long>(d.batch) * d.nrhs) return;
  const int k = static_cast<int>(w / d.nrhs), col = static_cast<int>(w % d.nrhs);
  if (d.info && d.info[k] != 0) return;
  Solve(system_at(d, k, col), lane);
}

// The two sweeps of a solve. axpy: x_j = x_j / A(j,j), then x_i -= A(i,j) x_j over the
// off-diagonal part of column j. dot: x_j = (x_j - sum of the off-diagonal products of
// column j) / A(j,j).
enum class Sweep { axpy, dot };

// Entries of column j a sweep combines with x: below the diagonal for lower, above for upper.
template <bool Lower>
__device__ __forceinline__ bool off_diagonal(int i, int j) {
  return Lower ? i > j : i < j;
}

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += shuffle_xor(kFullMask, v, offset);
  return v;
}

// ---- n <= 32: the factor in registers -------------------------------------------------------
// Lane i holds row i of L left of the diagonal and column i of L below it (v[c] = L(i, c) for
// c < i, L(c, i) for c > i), all loaded at once. Both sweeps are then axpy sweeps with one
// shuffle per column: forward x_i -= L(i, j) y_j, backward x_i -= L(j, i) x_j. Division by the
// diagonal is a multiplication by its reciprocal (conjugated going back), computed off the chain.

template <class T, bool Lower>
__device__ __forceinline__ void solve_warp32(const SolveSystem<T>& s, int lane) {
  const int n = s.n;
  if (n <= 0 || n > 32) return;
  const bool active = lane < n;
  T v[32];
#pragma unroll
  for (int c = 0; c < 32; ++c) {
    v[c] = T(0);
    if (active && c < n && c != lane) {
      const int i = c < lane ? lane : c;  // v[c] = L(i, j)
      const int j = c < lane ? c : lane;
      // Upper storage holds U = L^H: L(i, j) = conj(U(j, i)).
      v[c] = Lower ? load_read_only(s.A + j * s.lda + i) : conj_of(load_read_only(s.A + i * s.lda + j));
    }
  }
  const T diagonal = active ? load_read_only(s.A + lane * s.lda + lane) : T(1);
  const T rinv = active ? reciprocal(Lower ? diagonal : conj_of(diagonal)) : T(0);  // 1 / L(lane, lane)
  T x = active ? s.b[lane] : T(0);
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    if (j >= n) break;
    const T y = shuffle(kFullMask, times(x, rinv), j);
    if (lane == j)
      x = y;
    else if (lane > j)
      x = minus_product(x, v[j], y);
  }
#pragma unroll
  for (int j = 31; j >= 0; --j) {
    if (j >= n) continue;
    const T y = shuffle(kFullMask, times(x, conj_of(rinv)), j);
    if (lane == j)
      x = y;
    else if (lane < j)
      x = minus_product(x, conj_of(v[j]), y);  // L^H x = y
  }
  if (active) s.b[lane] = x;
}

template <class T, bool Lower>
__global__ void __launch_bounds__(kSolveWarps * 32) potrs_warp32_kernel(SolveDesc<T> d) {
  solve_warp_system<solve_warp32<T, Lower>>(d);
}

// ---- n <= 512: right-hand side in registers, factor streamed ---------------------------------
// Lane l keeps rows l, l+32, ... (MB blocks). The factor is read one stored column at a time and
// the next column is fetched while the current one is applied. (Fetching 2 to 8 columns ahead
// with reciprocals computed in advance measured no faster at n <= 64 and slower at n = 100..128,
// where the extra registers cost occupancy.)

template <class T, int MB, bool Lower>
__device__ __forceinline__ void load_column(const T* col, int j, int n, int lane, T (&l)[MB]) {
#pragma unroll
  for (int m = 0; m < MB; ++m) {
    const int i = lane + 32 * m;
    l[m] = (i < n && (i == j || off_diagonal<Lower>(i, j))) ? load_read_only(col + i) : T(0);
  }
}

template <class T, int MB>
__device__ __forceinline__ T pick(const T (&v)[MB], int m) {
  T r = v[0];
#pragma unroll
  for (int q = 1; q < MB; ++q)
    if (q == m) r = v[q];
  return r;
}

// One sweep over the stored columns j of A (Forward: 0 to n-1); the next column is fetched while
// column j is applied.
template <class T, int MB, bool Lower, bool Forward, Sweep KIND>
__device__ void register_sweep(const T* A, long long lda, int n, int lane, T (&x)[MB]) {
  int j = Forward ? 0 : n - 1;
  T l[MB];
  load_column<T, MB, Lower>(A + j * lda, j, n, lane, l);
  for (int s = 0; s < n; ++s) {
    const int jn = Forward ? j + 1 : j - 1;
    const bool more = s + 1 < n;
    T ln[MB];
    if (more) load_column<T, MB, Lower>(A + jn * lda, jn, n, lane, ln);
    if constexpr (KIND == Sweep::axpy) {
      const int mo = j >> 5;
      const T y = shuffle(kFullMask, divide_by_diagonal(pick(x, mo), pick(l, mo)), j & 31);
#pragma unroll
      for (int m = 0; m < MB; ++m) {
        const int i = lane + 32 * m;
        if (i == j)
          x[m] = y;
        else if (i < n && off_diagonal<Lower>(i, j))
          x[m] = minus_product(x[m], l[m], y);
      }
    } else {
      T part = T(0);
#pragma unroll
      for (int m = 0; m < MB; ++m) {
        const int i = lane + 32 * m;
        if (i < n && off_diagonal<Lower>(i, j)) part = plus_product(part, conj_of(l[m]), x[m]);
      }
      part = warp_sum(part);
#pragma unroll
      for (int m = 0; m < MB; ++m)
        if (lane + 32 * m == j) x[m] = divide_by_diagonal(x[m] - part, conj_of(l[m]));
    }
    if (more) {
#pragma unroll
      for (int m = 0; m < MB; ++m) l[m] = ln[m];
    }
    j = jn;
  }
}

template <class T, int MB, bool Lower>
__device__ __forceinline__ void solve_registers(const SolveSystem<T>& s, int lane) {
  if (s.n <= 0 || s.n > 32 * MB) return;
  T x[MB];
#pragma unroll
  for (int m = 0; m < MB; ++m) {
    const int i = lane + 32 * m;
    x[m] = i < s.n ? s.b[i] : T(0);
  }
  if constexpr (Lower) {
    register_sweep<T, MB, true, true, Sweep::axpy>(s.A, s.lda, s.n, lane, x);    // L y = b
    register_sweep<T, MB, true, false, Sweep::dot>(s.A, s.lda, s.n, lane, x);    // L^H x = y
  } else {
    register_sweep<T, MB, false, true, Sweep::dot>(s.A, s.lda, s.n, lane, x);    // U^H y = b
    register_sweep<T, MB, false, false, Sweep::axpy>(s.A, s.lda, s.n, lane, x);  // U x = y
  }
#pragma unroll
  for (int m = 0; m < MB; ++m) {
    const int i = lane + 32 * m;
    if (i < s.n) s.b[i] = x[m];
  }
}

template <class T, int MB, bool Lower>
__global__ void __launch_bounds__(kSolveWarps * 32) potrs_register_kernel(SolveDesc<T> d) {
  solve_warp_system<solve_registers<T, MB, Lower>>(d);
}

// ---- 32 < n, few systems: the factor staged in shared memory ------------------------------------
// With few systems the streamed kernel's time is its chain of steps, each waiting for a column
// from global memory. Here a block first copies matrix k's stored triangle into shared memory in
// one go (cp.async: every element's copy in flight at once), as L's lower triangle column by column
// with an odd leading dimension (conflict-free by columns and by rows); upper storage lands
// transposed, unconjugated (S = conj(L) there). The reciprocals of S's diagonal go beside it. Each warp
// then solves one right-hand side of matrix k with two axpy sweeps from shared memory, forward by
// L's columns and backward by its rows (L^H x = y: x_i -= conj(L(j, i)) x_j), one shuffle a step.
// A matrix with many right-hand sides is spread over several blocks, each staging the factor.

constexpr int kStagedWarps = 8;  // warps of a staged block: the copy's threads, right-hand sides

__host__ __device__ constexpr int staged_ld(int n) { return n | 1; }

// The staged factor (an odd leading dimension) and a column of its diagonal's reciprocals.
template <class T>
std::size_t staged_bytes(int n) {
  return static_cast<std::size_t>(staged_ld(n) + 1) * n * sizeof(T);
}

// Element (i, c) of the stored triangle (i >= c lower, i <= c upper) into S(i, c) or S(c, i), in
// units of the real type so that every copy is aligned whatever the complex array's alignment.
template <class T, bool Lower>
__device__ __forceinline__ void stage_factor(const T* A, long long lda, int n, T* S, int ld) {
  using R = RealPartOf<T>;
  constexpr int kParts = sizeof(T) / sizeof(R);
  for (int c = threadIdx.x / 32; c < n; c += blockDim.x / 32) {
    const int first = Lower ? c : 0, end = Lower ? n : c + 1;
    for (int i = first + (threadIdx.x & 31); i < end; i += 32) {
      const R* from = reinterpret_cast<const R*>(A + c * lda + i);
      R* to = reinterpret_cast<R*>(S + (Lower ? c * ld + i : i * ld + c));
#pragma unroll
      for (int p = 0; p < kParts; ++p) __pipeline_memcpy_async(to + p, from + p, sizeof(R));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

// The factor staged (stage_factor, which also waits for the block's earlier cp.async copies) and
// the reciprocals of its diagonal into rinv, for the whole block. A solve with L multiplies by
// rinv, one with L^H by conj(rinv) (the reverse for upper storage, where S = conj(L)): see
// diagonal_factor.
template <class T, bool Lower>
__device__ __forceinline__ void stage_factor_and_reciprocals(const SolveSystem<T>& s, T* S, int ld, T* rinv) {
  stage_factor<T, Lower>(s.A, s.lda, s.n, S, ld);
  __syncthreads();
  for (int j = threadIdx.x; j < s.n; j += blockDim.x) rinv[j] = reciprocal(S[j * ld + j]);
  __syncthreads();
}

// 1 / L(j, j) going forward (L y = b), 1 / conj(L(j, j)) going back (L^H x = y), from the
// reciprocals of the staged factor's diagonal (S = L, or conj(L) for upper storage).
template <class T, bool Lower, bool Forward>
__device__ __forceinline__ T diagonal_factor(const T* rinv, int j) {
  return conj_if(Forward != Lower, rinv[j]);
}

// One sweep over the staged factor S (L, or conj(L) for upper storage): forward (L y = b) by L's
// columns, x_i -= L(i, j) y_j; backward (L^H x = y) by its rows, x_i -= conj(L(j, i)) x_j.
template <class T, int MB, bool Lower, bool Forward>
__device__ __forceinline__ void staged_sweep(const T* S, int ld, const T* rinv, int n, int lane, T (&x)[MB]) {
  for (int step = 0; step < n; ++step) {
    const int j = Forward ? step : n - 1 - step;
    const T y = shuffle(kFullMask, times(pick(x, j >> 5), diagonal_factor<T, Lower, Forward>(rinv, j)), j & 31);
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      const int i = lane + 32 * m;
      if (i == j)
        x[m] = y;
      else if (Forward ? i > j && i < n : i < j)
        x[m] = minus_product(x[m], conj_if(Forward != Lower, Forward ? S[j * ld + i] : S[i * ld + j]), y);
    }
  }
}

template <class T, int MB, bool Lower>
__global__ void __launch_bounds__(kStagedWarps * 32) potrs_staged_kernel(SolveDesc<T> d, int groups) {
  extern __shared__ __align__(16) unsigned char staged_memory[];
  const int k = static_cast<int>(blockIdx.x / groups), group = static_cast<int>(blockIdx.x % groups);
  if (d.info && d.info[k] != 0) return;
  const SolveSystem<T> s = system_at(d, k, 0);
  const int n = s.n, ld = staged_ld(n);
  if (n <= 0 || n > 32 * MB) return;
  T* S = reinterpret_cast<T*>(staged_memory);
  T* rinv = S + static_cast<std::size_t>(ld) * n;
  stage_factor_and_reciprocals<T, Lower>(s, S, ld, rinv);
  const int lane = threadIdx.x & 31;
  const int col = group * kStagedWarps + static_cast<int>(threadIdx.x / 32);
  if (col >= d.nrhs) return;
  T* b = system_at(d, k, col).b;
  T x[MB];
#pragma unroll
  for (int m = 0; m < MB; ++m) x[m] = lane + 32 * m < n ? b[lane + 32 * m] : T(0);
  staged_sweep<T, MB, Lower, true>(S, ld, rinv, n, lane, x);   // L y = b
  staged_sweep<T, MB, Lower, false>(S, ld, rinv, n, lane, x);  // L^H x = y
#pragma unroll
  for (int m = 0; m < MB; ++m)
    if (lane + 32 * m < n) b[lane + 32 * m] = x[m];
}

// The staged kernel for factors of order up to max_n, and its shared memory.
struct StagedKernel {
  const void* function;
  std::size_t bytes;
};

template <class T, bool Lower>
StagedKernel staged_kernel(int max_n) {
  const int mb = (max_n + 31) / 32;
  const void* f = mb <= 2   ? reinterpret_cast<const void*>(&potrs_staged_kernel<T, 2, Lower>)
                  : mb <= 4 ? reinterpret_cast<const void*>(&potrs_staged_kernel<T, 4, Lower>)
                            : reinterpret_cast<const void*>(&potrs_staged_kernel<T, 8, Lower>);
  return {f, staged_bytes<T>(max_n)};
}

// Whether the staged kernel serves these systems (its order range and shared memory checked
// already): where forced, else where its blocks take at most two waves, and past that where each
// block's staging serves several right-hand sides: eight (a block's warps) where two blocks fit a
// multiprocessor, two where six do. One right-hand side a matrix on long stacks stays streamed (its
// many warps per multiprocessor keep more loads in flight). Complex factors up to order 64 are
// staged whatever the count. The measurements: docs/kernels-batched.md, "Solves with the factor in
// shared memory" and "Complex factors".
constexpr long long kStagedWaves = 2;
constexpr int kStagedManyRhsMinBlocksPerSm = 2;
constexpr int kStagedTwoRhsMinBlocksPerSm = 6;
constexpr int kComplexAlwaysStagedMaxN = 64;

template <class T>
bool solve_stages_factor(const StagedKernel& staged, int max_n, int nrhs, long long blocks, SolveKernel kernel) {
  if (kernel == SolveKernel::staged) return true;
  if (!std::is_floating_point_v<T> && max_n <= kComplexAlwaysStagedMaxN) return true;
  int per_sm = 0;
  TESSERA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, staged.function, kStagedWarps * 32, staged.bytes));
  if (blocks <= kStagedWaves * detail::device_sm_count() * per_sm) return true;
  return (nrhs >= kStagedWarps && per_sm >= kStagedManyRhsMinBlocksPerSm) ||
         (nrhs >= 2 && per_sm >= kStagedTwoRhsMinBlocksPerSm);
}

// The staged kernel where it applies and serves (solve_stages_factor); false where the streamed
// kernels are to run.
template <class T, bool Lower>
bool launch_staged_where_it_serves(SolveDesc<T> d, int max_n, cudaStream_t stream, SolveKernel kernel) {
  int groups = (d.nrhs + kStagedWarps - 1) / kStagedWarps;
  const long long blocks = static_cast<long long>(d.batch) * groups;
  if (kernel == SolveKernel::streamed || max_n <= 32 || max_n > 256 || blocks > 0x7fffffffLL) return false;
  const StagedKernel staged = staged_kernel<T, Lower>(max_n);
  if (staged.bytes > detail::max_dynamic_smem()) return false;
  detail::ensure_dynamic_smem(staged.function, staged.bytes);  // before the occupancy query, which counts it
  if (!solve_stages_factor<T>(staged, max_n, d.nrhs, blocks, kernel)) return false;
  void* arguments[] = {&d, &groups};
  TESSERA_CUDA_CHECK(cudaLaunchKernel(staged.function, dim3(static_cast<unsigned>(blocks)), dim3(kStagedWarps * 32),
                                      arguments, staged.bytes, stream));
  return true;
}

// ---- many right-hand sides: a lane per right-hand side ------------------------------------------
// With many right-hand sides a warp per column spends most of each step on its shuffle and its
// predicates. Here a block stages the factor as the staged kernel does, and its right-hand sides
// transposed beside it (X(i, c) at X[i * (columns + 1) + c], read and written with consecutive
// threads on consecutive rows of B); then each thread solves one column on its own: every lane of a
// warp reads the same element of the factor (a broadcast) and applies it to its own column, so the
// lanes exchange nothing. A thread keeps a block of its column's rows in registers and walks the
// row blocks in order (last to first for L^H x = y): first the products with the rows already
// solved, then the triangular solve inside the block.

// Rows a thread keeps in registers (single precision measured no faster with 32, and slower at
// order 16, where no block was whole).
template <class T>
constexpr int lane_block_rows() {
  return sizeof(T) > sizeof(double) ? 8 : 16;
}

// Rows [r0, r0 + RB) of L y = b (Forward) or L^H x = y for the column x (stride xs). S holds L
// (conj(L) for upper storage) as in the staged kernel. Full: the block lies wholly inside the
// matrix (every block but the last of an order that RB does not divide), so no row is checked.
template <class T, bool Lower, bool Forward, bool Full>
__device__ __forceinline__ void lane_block_solve(const T* S, int ld, const T* rinv, int n, int r0, T* x, int xs) {
  constexpr int RB = lane_block_rows<T>();
  const bool conjugate = Forward != Lower;
  const auto inside = [&](int ii) { return Full || r0 + ii < n; };
  T v[RB];
#pragma unroll
  for (int ii = 0; ii < RB; ++ii) v[ii] = inside(ii) ? x[(r0 + ii) * xs] : T(0);
  // The rows already solved: above the block going forward (L(r0 + ii, k)), below it going back
  // (conj(L(k, r0 + ii))).
  const int first = Forward ? 0 : r0 + RB, end = Forward ? r0 : n;
#pragma unroll 2
  for (int k = first; k < end; ++k) {
    const T xk = x[k * xs];
#pragma unroll
    for (int ii = 0; ii < RB; ++ii)
      if (inside(ii))
        v[ii] = minus_product(v[ii], conj_if(conjugate, Forward ? S[k * ld + r0 + ii] : S[(r0 + ii) * ld + k]), xk);
  }
  // The block's own triangle.
#pragma unroll
  for (int step = 0; step < RB; ++step) {
    const int jj = Forward ? step : RB - 1 - step;
    if (!inside(jj)) continue;
    v[jj] = times(v[jj], diagonal_factor<T, Lower, Forward>(rinv, r0 + jj));
#pragma unroll
    for (int ii = 0; ii < RB; ++ii)
      if ((Forward ? ii > jj : ii < jj) && inside(ii))
        v[ii] = minus_product(
            v[ii], conj_if(conjugate, Forward ? S[(r0 + jj) * ld + r0 + ii] : S[(r0 + ii) * ld + r0 + jj]), v[jj]);
  }
#pragma unroll
  for (int ii = 0; ii < RB; ++ii)
    if (inside(ii)) x[(r0 + ii) * xs] = v[ii];
}

template <class T, bool Lower, bool Forward>
__device__ __forceinline__ void lane_sweep(const T* S, int ld, const T* rinv, int n, T* x, int xs) {
  constexpr int RB = lane_block_rows<T>();
  const int blocks = (n + RB - 1) / RB;
  for (int step = 0; step < blocks; ++step) {
    const int r0 = (Forward ? step : blocks - 1 - step) * RB;
    if (r0 + RB <= n)
      lane_block_solve<T, Lower, Forward, true>(S, ld, rinv, n, r0, x, xs);
    else
      lane_block_solve<T, Lower, Forward, false>(S, ld, rinv, n, r0, x, xs);
  }
}

// Column block [col0, col0 + width) of B into X (X(i, c) = B(i, col0 + c)) by cp.async, in units of
// the real type as stage_factor copies.
template <class T>
__device__ __forceinline__ void stage_columns(const T* B, long long ldb, int n, int width, T* X, int xs) {
  using R = RealPartOf<T>;
  constexpr int kParts = sizeof(T) / sizeof(R);
  for (int c = threadIdx.x / 32; c < width; c += blockDim.x / 32)
    for (int i = threadIdx.x & 31; i < n; i += 32) {
      const R* from = reinterpret_cast<const R*>(B + c * ldb + i);
      R* to = reinterpret_cast<R*>(X + i * xs + c);
#pragma unroll
      for (int p = 0; p < kParts; ++p) __pipeline_memcpy_async(to + p, from + p, sizeof(R));
    }
  __pipeline_commit();
}

// Shared memory of a lane block: its columns of B, the staged factor and its diagonal's reciprocals.
template <class T>
std::size_t lanes_bytes(int n, int columns) {
  return static_cast<std::size_t>(n) * (columns + 1) * sizeof(T) + staged_bytes<T>(n);
}

template <class T, bool Lower>
__global__ void __launch_bounds__(64) potrs_lanes_kernel(SolveDesc<T> d, int groups) {
  extern __shared__ __align__(16) unsigned char lanes_memory[];
  const int k = static_cast<int>(blockIdx.x / groups), group = static_cast<int>(blockIdx.x % groups);
  if (d.info && d.info[k] != 0) return;
  const SolveSystem<T> s = system_at(d, k, 0);
  const int n = s.n, ld = staged_ld(n), columns = static_cast<int>(blockDim.x), xs = columns + 1;
  const int col0 = group * columns, width = min(columns, d.nrhs - col0);
  if (n <= 0 || width <= 0) return;
  T* X = reinterpret_cast<T*>(lanes_memory);
  T* S = X + static_cast<std::size_t>(n) * xs;
  T* rinv = S + static_cast<std::size_t>(ld) * n;
  const long long ldb = column_stride(d, k);
  T* B = s.b + col0 * ldb;
  stage_columns(B, ldb, n, width, X, xs);
  stage_factor_and_reciprocals<T, Lower>(s, S, ld, rinv);  // waits for both copies
  if (static_cast<int>(threadIdx.x) < width) {
    lane_sweep<T, Lower, true>(S, ld, rinv, n, X + threadIdx.x, xs);   // L y = b
    lane_sweep<T, Lower, false>(S, ld, rinv, n, X + threadIdx.x, xs);  // L^H x = y
  }
  __syncthreads();
  for (int c = threadIdx.x / 32; c < width; c += blockDim.x / 32)
    for (int i = threadIdx.x & 31; i < n; i += 32) B[c * ldb + i] = X[i * xs + c];
}

// Whether the lane kernel serves these systems where the choice is automatic (H200,
// bench_batched_kernels --solves, docs/kernels-batched.md "A thread per right-hand side" and
// "Complex factors"): with a block for every multiprocessor at least (on 8 matrices the staged
// kernel's eight warps a matrix were faster, on 512 and more the lane kernel), and from a count of
// right-hand sides that grows with the order, each thread's work growing with its square; in
// complex double later past order 32 (its factor in shared memory leaves room for fewer blocks).
struct LaneRule {
  int max_n;
  int min_nrhs;
};
constexpr int kAnyOrder = std::numeric_limits<int>::max();
constexpr LaneRule kRealLaneRules[] = {{32, 4}, {48, 8}, {96, 16}, {kAnyOrder, 32}};
constexpr LaneRule kComplexSingleLaneRules[] = {{16, 2}, {32, 4}, {64, 8}, {kAnyOrder, 16}};
constexpr LaneRule kComplexDoubleLaneRules[] = {{16, 2}, {32, 4}, {48, 16}, {kAnyOrder, 32}};

template <class T>
bool lanes_serve(int max_n, int nrhs, long long blocks) {
  if (blocks < detail::device_sm_count()) return false;
  const auto first_rule_for = [&](const auto& rules) {
    for (const LaneRule& rule : rules)
      if (max_n <= rule.max_n) return nrhs >= rule.min_nrhs;
    return false;
  };
  if constexpr (std::is_floating_point_v<T>)
    return first_rule_for(kRealLaneRules);
  else if constexpr (sizeof(T) == 2 * sizeof(float))
    return first_rule_for(kComplexSingleLaneRules);
  else
    return first_rule_for(kComplexDoubleLaneRules);
}

// The lane kernel where it is forced or serves (lanes_serve) and its factor and columns fit a
// block's shared memory: 64 columns a block where there are more than 32 and they fit, else 32.
template <class T, bool Lower>
bool launch_lanes_where_it_serves(SolveDesc<T> d, int max_n, cudaStream_t stream, SolveKernel kernel) {
  if (kernel == SolveKernel::streamed || kernel == SolveKernel::staged || max_n <= 0) return false;
  const std::size_t limit = detail::max_dynamic_smem();
  const int columns = d.nrhs > 32 && lanes_bytes<T>(max_n, 64) <= limit ? 64 : 32;
  const std::size_t bytes = lanes_bytes<T>(max_n, columns);
  int groups = (d.nrhs + columns - 1) / columns;
  const long long blocks = static_cast<long long>(d.batch) * groups;
  if (blocks > 0x7fffffffLL || bytes > limit) return false;
  const void* function = reinterpret_cast<const void*>(&potrs_lanes_kernel<T, Lower>);
  if (kernel != SolveKernel::lanes && !lanes_serve<T>(max_n, d.nrhs, blocks)) return false;
  detail::ensure_dynamic_smem(function, bytes);
  void* arguments[] = {&d, &groups};
  TESSERA_CUDA_CHECK(
      cudaLaunchKernel(function, dim3(static_cast<unsigned>(blocks)), dim3(columns), arguments, bytes, stream));
  return true;
}

// ---- right-hand side in global memory (n > 512) ---------------------------------------------
// Lane l reads and writes only rows l, l+32, ... of b, so the lanes never share an element.

template <class T, bool Lower, bool Forward, Sweep KIND>
__device__ void global_sweep(const T* A, long long lda, int n, int lane, T* b) {
  for (int s = 0; s < n; ++s) {
    const int j = Forward ? s : n - 1 - s;
    const T* col = A + j * lda;
    if constexpr (KIND == Sweep::axpy) {
      T y = T(0);
      if (lane == (j & 31)) y = divide_by_diagonal(b[j], col[j]);
      y = shuffle(kFullMask, y, j & 31);
      for (int i = lane; i < n; i += 32) {
        if (i == j)
          b[i] = y;
        else if (off_diagonal<Lower>(i, j))
          b[i] = minus_product(b[i], col[i], y);
      }
    } else {
      T part = T(0);
      for (int i = lane; i < n; i += 32)
        if (off_diagonal<Lower>(i, j)) part = plus_product(part, conj_of(col[i]), b[i]);
      part = warp_sum(part);
      if (lane == (j & 31)) b[j] = divide_by_diagonal(b[j] - part, conj_of(col[j]));
    }
  }
}

template <class T, bool Lower>
__device__ __forceinline__ void solve_global(const SolveSystem<T>& s, int lane) {
  if (s.n <= 0) return;
  if constexpr (Lower) {
    global_sweep<T, true, true, Sweep::axpy>(s.A, s.lda, s.n, lane, s.b);
    global_sweep<T, true, false, Sweep::dot>(s.A, s.lda, s.n, lane, s.b);
  } else {
    global_sweep<T, false, true, Sweep::dot>(s.A, s.lda, s.n, lane, s.b);
    global_sweep<T, false, false, Sweep::axpy>(s.A, s.lda, s.n, lane, s.b);
  }
}

template <class T, bool Lower>
__global__ void __launch_bounds__(kSolveWarps * 32) potrs_global_kernel(SolveDesc<T> d) {
  solve_warp_system<solve_global<T, Lower>>(d);
}

template <class T, bool Lower>
void launch_for_lower(const SolveDesc<T>& d, int max_n, unsigned blocks, cudaStream_t stream, SolveKernel kernel) {
  if (launch_lanes_where_it_serves<T, Lower>(d, max_n, stream, kernel)) return;
  if (launch_staged_where_it_serves<T, Lower>(d, max_n, stream, kernel)) return;
  const dim3 threads(kSolveWarps * 32);
  const int mb = (max_n + 31) / 32;
  if (mb <= 1)
    potrs_warp32_kernel<T, Lower><<<blocks, threads, 0, stream>>>(d);
  else if (mb <= 2)
    potrs_register_kernel<T, 2, Lower><<<blocks, threads, 0, stream>>>(d);
  else if (mb <= 4)
    potrs_register_kernel<T, 4, Lower><<<blocks, threads, 0, stream>>>(d);
  else if (mb <= 8)
    potrs_register_kernel<T, 8, Lower><<<blocks, threads, 0, stream>>>(d);
  else if (mb <= kMaxRegisterBlocks)
    potrs_register_kernel<T, kMaxRegisterBlocks, Lower><<<blocks, threads, 0, stream>>>(d);
  else
    potrs_global_kernel<T, Lower><<<blocks, threads, 0, stream>>>(d);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_solve(const SolveDesc<T>& d, BatchUplo uplo, int max_n, cudaStream_t stream, SolveKernel kernel) {
  const long long warps = static_cast<long long>(d.batch) * d.nrhs;
  if (warps == 0 || max_n == 0) return;
  const long long blocks = (warps + kSolveWarps - 1) / kSolveWarps;
  if (blocks > 0x7fffffffLL)
    throw ResourceError("batched potrs: batch * nrhs is too large for one launch");
  if (uplo == BatchUplo::lower)
    launch_for_lower<T, true>(d, max_n, static_cast<unsigned>(blocks), stream, kernel);
  else
    launch_for_lower<T, false>(d, max_n, static_cast<unsigned>(blocks), stream, kernel);
}

void require(bool ok, const std::string& what, int position) {
  if (!ok) throw InvalidArgument("batched potrs: " + what, position);
}

}  // namespace

template <class T>
void potrs_batched(BatchUplo uplo, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                   long long strideB, int batch, const int* info, cudaStream_t stream,
                   const BatchedSolveOptions& opts) {
  require(n >= 0, "n must be >= 0", 2);
  require(nrhs >= 0, "nrhs must be >= 0", 3);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 5);
  require(ldb >= (n > 1 ? n : 1), "ldb must be >= max(1, n)", 8);
  require(batch >= 0, "batch must be >= 0", 10);
  require(batch <= 1 || strideA >= static_cast<long long>(lda) * (n - 1) + n,
          "strideA must separate the matrices", 6);
  require(batch <= 1 || nrhs == 0 ||
              strideB >= static_cast<long long>(ldb) * (nrhs - 1) + n,
          "strideB must separate the right-hand sides", 9);
  SolveDesc<DeviceScalar<T>> d{device_view(A), device_view(B), nrhs, batch, info};
  d.uniform = {n, lda, strideA, ldb, strideB};
  launch_solve(d, uplo, n, stream, opts.kernel);
}

template <class T>
void potrs_vbatched(BatchUplo uplo, const int* n, int max_n, int nrhs, const T* A, const long long* offsetA,
                    const int* lda, T* B, const long long* offsetB, const int* ldb, int batch, const int* info,
                    cudaStream_t stream, const BatchedSolveOptions& opts) {
  require(max_n >= 0, "max_n must be >= 0", 3);
  require(nrhs >= 0, "nrhs must be >= 0", 4);
  require(batch >= 0, "batch must be >= 0", 11);
  if (batch == 0 || nrhs == 0) return;
  require(n && offsetA && lda && offsetB && ldb, "size, offset and ld arrays must not be null", 2);
  SolveDesc<DeviceScalar<T>> d{device_view(A), device_view(B), nrhs, batch, info};
  d.variable = {n, lda, offsetA, ldb, offsetB};
  launch_solve(d, uplo, max_n, stream, opts.kernel);
}

template <class T>
void potrs_batched(BatchUplo uplo, int n, int nrhs, const T* const* A_array, int lda, T* const* B_array, int ldb,
                   int batch, const int* info, cudaStream_t stream, const BatchedSolveOptions& opts) {
  require(n >= 0, "n must be >= 0", 2);
  require(nrhs >= 0, "nrhs must be >= 0", 3);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 5);
  require(ldb >= (n > 1 ? n : 1), "ldb must be >= max(1, n)", 7);
  require(batch >= 0, "batch must be >= 0", 8);
  if (batch == 0 || n == 0 || nrhs == 0) return;
  require(A_array != nullptr && B_array != nullptr, "A_array and B_array must not be null", 4);
  SolveDesc<DeviceScalar<T>> d{nullptr, nullptr, nrhs, batch, info};
  d.uniform = {n, lda, 0, ldb, 0};
  d.A_array = device_view(A_array);
  d.B_array = device_view(B_array);
  launch_solve(d, uplo, n, stream, opts.kernel);
}

template <class T>
void potrs_vbatched(BatchUplo uplo, const int* n, int max_n, int nrhs, const T* const* A_array, const int* lda,
                    T* const* B_array, const int* ldb, int batch, const int* info, cudaStream_t stream,
                    const BatchedSolveOptions& opts) {
  require(max_n >= 0, "max_n must be >= 0", 3);
  require(nrhs >= 0, "nrhs must be >= 0", 4);
  require(batch >= 0, "batch must be >= 0", 9);
  if (batch == 0 || nrhs == 0 || max_n == 0) return;
  require(n && lda && ldb, "size and ld arrays must not be null", 2);
  require(A_array != nullptr && B_array != nullptr, "A_array and B_array must not be null", 5);
  SolveDesc<DeviceScalar<T>> d{nullptr, nullptr, nrhs, batch, info};
  d.variable = {n, lda, nullptr, ldb, nullptr};
  d.A_array = device_view(A_array);
  d.B_array = device_view(B_array);
  launch_solve(d, uplo, max_n, stream, opts.kernel);
}

#define TESSERA_INSTANTIATE(T)                                                                                         \
  template void potrs_batched<T>(BatchUplo, int, int, const T*, int, long long, T*, int, long long, int, const int*,   \
                                 cudaStream_t, const BatchedSolveOptions&);                                            \
  template void potrs_vbatched<T>(BatchUplo, const int*, int, int, const T*, const long long*, const int*, T*,         \
                                  const long long*, const int*, int, const int*, cudaStream_t,                         \
                                  const BatchedSolveOptions&);                                                         \
  template void potrs_batched<T>(BatchUplo, int, int, const T* const*, int, T* const*, int, int, const int*,           \
                                 cudaStream_t, const BatchedSolveOptions&);                                            \
  template void potrs_vbatched<T>(BatchUplo, const int*, int, int, const T* const*, const int*, T* const*, const int*, \
                                  int, const int*, cudaStream_t, const BatchedSolveOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
