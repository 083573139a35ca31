// The inverse from Cholesky factors, batched. Up to order 32 a warp per matrix (below, "orders up
// to 32"); larger orders one thread block per matrix, the factor in a work square (shared memory
// where it fits, else a slice of device memory per block):
//   1. load:    L (lower; an upper factor U is read as L = U^H) into the square's lower triangle
//               and the reciprocals of its diagonal into D. A zero on the diagonal stops there,
//               as LAPACK's xTRTRI does, with the matrix's info set and nothing computed.
//   2. W = L^-1: in panels of 32 rows: every diagonal block inverted by a warp at once, then each
//               panel's rows left of its block from the rows above (a barrier per panel), W kept
//               in the square's strict upper triangle (W(i, j) at row j, column i), W(j, j) = D[j].
//   3. X = W^H W (xLAUUM's product): warps of 32 rows by a few columns, each lane summing its
//               entries in registers; written to X in its triangle or in both (the real types'
//               upper triangles up to order 64: 64 rows a warp, every store down a column).
// The arithmetic follows LAPACK's xPOTRI: the factor's diagonal is a full complex number in the
// triangular inverse and its real part in the product, so that the inverse's diagonal is real.
#include <algorithm>
#include <cstddef>
#include <cmath>
#include <type_traits>

#include "cuda/batched_inverse.hpp"
#include "cuda/batched_scalar.cuh"
#include "cuda/check.hpp"
#include "cuda/stream_memory.hpp"
#include "cuda/tile_common.cuh"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

using namespace batched_detail;  // the scalar helpers (batched_scalar.cuh)
using detail::require;

constexpr int kMaxInverseThreads = 256;
// Device memory the work squares may take when they do not fit in shared memory.
constexpr std::size_t kMaxWorkBytes = std::size_t{1} << 30;

template <class T>
struct InverseDesc {
  const T* A = nullptr;  // factor k at A + k * stride, element (r, c) at r * rs + c * cs
  long long rs = 0;
  long long cs = 0;
  long long stride = 0;
  T* X = nullptr;  // inverse k at X + k * strideX, column-major
  int ldx = 0;
  long long strideX = 0;
  int n = 0;
  int batch = 0;
  bool upper = false;
  bool full = false;            // write both triangles of X
  bool nan_on_failure = false;  // a failed matrix's X filled with NaN (else left as it is)
  int* info = nullptr;
  T* const* array = nullptr;  // not null: factor k at array[k] (rs 1, cs ldx), its inverse there too
  // Not null (with array): a variable batch, matrix k of order orders[k] (-1: left alone) and
  // leading dimension ldas[k]; n is then the largest order.
  const int* orders = nullptr;
  const int* ldas = nullptr;
  T* work = nullptr;  // one square per block in device memory; null: shared memory
  int ld = 0;         // leading dimension of a work square: odd, against bank conflicts
};

// Where factor k is read and its inverse written.
template <class T>
__device__ __forceinline__ const T* factor_of(const InverseDesc<T>& d, long long k) {
  return d.array ? d.array[k] : d.A + k * d.stride;
}
template <class T>
__device__ __forceinline__ T* inverse_of(const InverseDesc<T>& d, long long k) {
  return d.array ? d.array[k] : d.X + k * d.strideX;
}

// Matrix k's own description: in a variable batch its order and leading dimension, its square
// packed with ld = n | 1 inside the one sized for the largest order.
template <class T>
__device__ __forceinline__ InverseDesc<T> matrix_desc(const InverseDesc<T>& d, long long k) {
  InverseDesc<T> m = d;
  if (d.orders) {
    m.n = d.orders[k];
    m.cs = m.ldx = d.ldas[k];
    m.ld = m.n | 1;
  }
  return m;
}

// Elements of one work square and its diagonal.
constexpr long long work_elements(int n, int ld) { return static_cast<long long>(n) * ld + n; }

__device__ __forceinline__ bool is_zero(float x) { return x == 0.0f; }
__device__ __forceinline__ bool is_zero(double x) { return x == 0.0; }
template <class R>
__device__ __forceinline__ bool is_zero(DeviceComplex<R> x) {
  return x.re == R(0) && x.im == R(0);
}

template <class T>
__device__ __forceinline__ T quiet_nan() {
  using R = RealPartOf<T>;
  if constexpr (std::is_floating_point_v<T>)
    return R(NAN);
  else
    return {R(NAN), R(NAN)};
}

// f(fast, slow) for every entry of an n x n matrix, entries spread over the block's threads: int
// arithmetic where n^2 fits (64-bit division is a long subroutine).
constexpr int kLargestIntSquare = 46340;

template <class F>
__device__ __forceinline__ void for_each_entry(int n, const F& f) {
  if (n <= kLargestIntSquare) {
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) f(e % n, e / n);
  } else {
    const long long elements = static_cast<long long>(n) * n;
    for (long long e = threadIdx.x; e < elements; e += blockDim.x) f(static_cast<int>(e % n), static_cast<int>(e / n));
  }
}

constexpr int kLoadsInFlight = 4;

// The factor's entries e = fast + n * slow of its referenced triangle into the square's lower
// triangle as L, kLoadsInFlight loads issued by a thread before its stores.
template <class Index, class T>
__device__ void load_entries(const InverseDesc<T>& d, const T* a, T* S, Index elements) {
  const int n = d.n, ld = d.ld;
  const bool rows_fast = llabs(d.rs) <= llabs(d.cs);
  const Index step = static_cast<Index>(blockDim.x) * kLoadsInFlight;
  for (Index e0 = threadIdx.x; e0 < elements; e0 += step) {
    T v[kLoadsInFlight];
    Index to[kLoadsInFlight];  // where in the square; -1: nothing to store
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const Index e = e0 + static_cast<Index>(u) * blockDim.x;
      const int fast = static_cast<int>(e % n), slow = static_cast<int>(e / n);
      const int r = rows_fast ? fast : slow, c = rows_fast ? slow : fast;
      const bool stored = e < elements && (d.upper ? r <= c : r >= c);
      v[u] = stored ? load_read_only(a + r * d.rs + c * d.cs) : T(0);
      to[u] = !stored ? Index(-1) : d.upper ? c + static_cast<Index>(r) * ld : r + static_cast<Index>(c) * ld;
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u)
      if (to[u] >= 0) S[to[u]] = d.upper ? conj_of(v[u]) : v[u];
  }
}

// Step 1: the factor into the square's lower triangle, D = 1 / diag; returns the 0-based column of
// the first zero on the diagonal, or n. The faster-moving index of the source walks across
// neighbouring threads, so that the loads coalesce whatever the layout.
template <class T>
__device__ int load_factor(const InverseDesc<T>& d, long long k, T* S, T* D, int* first_zero) {
  const int n = d.n, ld = d.ld;
  if (threadIdx.x == 0) *first_zero = n;
  const T* a = factor_of(d, k);
  if (n <= kLargestIntSquare)
    load_entries<int>(d, a, S, n * n);
  else
    load_entries<long long>(d, a, S, static_cast<long long>(n) * n);
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const T v = S[j + static_cast<long long>(j) * ld];
    if (is_zero(v))
      atomicMin(first_zero, j);
    else
      D[j] = reciprocal(v);
  }
  __syncthreads();
  return *first_zero;
}

// Step 2: W = L^-1 in panels of 32 rows, W(i, j) (j < i) kept in the square's row j, column i
// (the upper triangle, transposed), L staying in the lower triangle, W(j, j) = D[j]:
//   a. each diagonal block by one warp (invert_diagonal_block), all at once;
//   b. then panel by panel down the matrix (invert_panel_row), a barrier between panels: the
//      panel's rows of W left of its diagonal block from the rows above.
constexpr int kPanel = 32;        // rows of a panel: a lane each
constexpr int kUnitColumns = 8;   // columns a lane accumulates at once (steps 2b and 3)

// Element (r, c) of a work square.
template <class T>
__device__ __forceinline__ T& at(T* S, int ld, int r, int c) {
  return S[r + static_cast<long long>(c) * ld];
}

// Row `lane` of W = L^-1 for an n x n lower triangle L (n <= N, element (r, c) at L[r + c * ld]):
// entries j <= lane, the others zero; dinv = 1 / L(lane, lane). At step m lane m's row is final and
// is broadcast by shuffles into the later rows' sums, which read L(lane, m): no barrier.
template <int N, class T>
__device__ void invert_triangle_by_warp(int n, const T* L, int ld, T dinv, int lane, T (&w)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) w[j] = T(0);
#pragma unroll
  for (int m = 0; m < N; ++m) {
    if (m >= n) break;
    const T l_im = lane < n ? L[lane + m * ld] : T(0);  // used by the later rows only
#pragma unroll
    for (int j = 0; j <= m; ++j) {
      if (lane == m) w[j] = j == m ? dinv : times(-w[j], dinv);
      const T w_mj = shuffle(0xffffffffu, w[j], m);
      if (lane > m) w[j] = plus_product(w[j], l_im, w_mj);
    }
  }
}

// W = L^-1 (order n <= N, L in the square's lower triangle) by one warp, lane c on column c of W
// (w[r] = W(r, c), zero above the diagonal): L w = e_c solved by forward substitution, the rows
// of L read by broadcast. dinv: the reciprocal of L(lane, lane), kept in the square's diagonal,
// which the substitution does not read. A multiply-add and a shared-memory read per term, where
// the row form (invert_triangle_by_warp) spends a shuffle and a select per term.
template <int N, class T>
__device__ void invert_triangle_by_columns(int n, T* L, int ld, T dinv, int lane, T (&w)[N]) {
  if (lane < n) L[lane + lane * ld] = dinv;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < N; ++r) w[r] = T(0);
#pragma unroll
  for (int r = 0; r < N; ++r) {
    if (r >= n) break;
    T acc = lane == r ? T(1) : T(0);
#pragma unroll
    for (int q = 0; q < r; ++q) acc = minus_product(acc, L[r + q * ld], w[q]);
    w[r] = times(acc, L[r + r * ld]);
  }
}

// W_bb = L_bb^-1 for the diagonal block at p0 (order nb <= 32) by one warp, lane i on row i;
// W(r, c), r > c, written to (c, r).
template <class T>
__device__ void invert_diagonal_block_by_rows(T* S, int ld, const T* D, int p0, int nb, int lane) {
  T* B = &at(S, ld, p0, p0);
  T w[kPanel];
  invert_triangle_by_warp<kPanel>(nb, B, ld, D[p0 + min(lane, nb - 1)], lane, w);
  if (lane >= nb) return;
#pragma unroll
  for (int j = 0; j < kPanel; ++j)
    if (j < lane) at(B, ld, j, lane) = w[j];
}

// The same by columns, for complex double (its shuffles are four words each): lane c solves
// L_bb w = e_c for column c of W_bb in registers, reading L_bb's rows by broadcast.
template <class T>
__device__ void invert_diagonal_block_by_columns(T* S, int ld, const T* D, int p0, int nb, int lane) {
  T* B = &at(S, ld, p0, p0);
  T w[kPanel];
#pragma unroll
  for (int r = 0; r < kPanel; ++r) {
    if (r >= nb) break;
    T acc = lane == r ? T(1) : T(0);
#pragma unroll
    for (int q = 0; q < r; ++q) acc = minus_product(acc, at(B, ld, r, q), w[q]);
    w[r] = times(acc, D[p0 + r]);
  }
  if (lane >= nb) return;
#pragma unroll
  for (int r = 1; r < kPanel; ++r) {
    if (r >= nb) break;
    if (r > lane) at(B, ld, lane, r) = w[r];
  }
}

template <class T>
__device__ void invert_diagonal_block(T* S, int ld, const T* D, int p0, int nb, int lane) {
  if constexpr (sizeof(T) > 8)
    invert_diagonal_block_by_columns(S, ld, D, p0, nb, lane);
  else
    invert_diagonal_block_by_rows(S, ld, D, p0, nb, lane);
}

// The rows p0 .. p0 + 31 of W left of their diagonal block, from the rows above (final):
//   T(r, c) = sum_{k=c}^{p0-1} L(r, k) W(k, c),   W(r, c) = -sum_{q=p0}^{r} W(r, q) T(q, c),
// lane r - p0 taking row r, a warp kUnitColumns columns c at a time; groups of columns share
// nothing, so T waits in W's place with no barrier.
template <class T>
__device__ void invert_panel_row(T* S, int ld, const T* D, int n, int p0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int r = p0 + lane, rows = min(kPanel, n - p0);
  const bool owns_row = r < n;
  const int rr = owns_row ? r : n - 1;  // reads of lanes past n stay in the square
  for (int c0 = warp * kUnitColumns; c0 < p0; c0 += warps * kUnitColumns) {
    T t[kUnitColumns];
#pragma unroll
    for (int u = 0; u < kUnitColumns; ++u) t[u] = T(0);
    // k < c0 + kUnitColumns: W(k, c) is zero for k < c and D[c] on the diagonal.
#pragma unroll
    for (int kk = 0; kk < kUnitColumns; ++kk) {
      const T l = at(S, ld, rr, c0 + kk);
#pragma unroll
      for (int u = 0; u <= kk; ++u) t[u] = plus_product(t[u], l, u == kk ? D[c0 + kk] : at(S, ld, c0 + u, c0 + kk));
    }
#pragma unroll 2
    for (int k = c0 + kUnitColumns; k < p0; ++k) {
      const T l = at(S, ld, rr, k);
      const T* w = &at(S, ld, c0, k);  // W(k, c0 ...)
#pragma unroll
      for (int u = 0; u < kUnitColumns; ++u) t[u] = plus_product(t[u], l, w[u]);
    }
    if (owns_row)
#pragma unroll
      for (int u = 0; u < kUnitColumns; ++u) at(S, ld, c0 + u, r) = t[u];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < kUnitColumns; ++u) t[u] = T(0);
    for (int q = p0; q < p0 + rows; ++q) {
      const T w_rq = q < rr ? at(S, ld, q, rr) : q == rr ? D[rr] : T(0);
      const T* tq = &at(S, ld, c0, q);  // T(q, c0 ...)
#pragma unroll
      for (int u = 0; u < kUnitColumns; ++u) t[u] = minus_product(t[u], w_rq, tq[u]);
    }
    __syncwarp();
    if (owns_row)
#pragma unroll
      for (int u = 0; u < kUnitColumns; ++u) at(S, ld, c0 + u, r) = t[u];
  }
}

template <class T>
__device__ void invert_triangle(const InverseDesc<T>& d, T* S, const T* D) {
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int p0 = warp * kPanel; p0 < n; p0 += warps * kPanel)
    invert_diagonal_block(S, ld, D, p0, min(kPanel, n - p0), lane);
  __syncthreads();
  for (int p0 = kPanel; p0 < n; p0 += kPanel) {
    invert_panel_row(S, ld, D, n, p0);
    __syncthreads();
  }
}

// Between steps 2 and 3: the square becomes V^T for V = W with re(D) on its diagonal and zeros
// above it (the factor L is no longer needed), so that step 3 sums over a common range.
template <class T>
__device__ void prepare_product(const InverseDesc<T>& d, T* S, const T* D) {
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int c = warp; c < n; c += warps)
    for (int r = c + lane; r < n; r += 32) at(S, ld, r, c) = r == c ? T(real_of(D[r])) : T(0);
}

// Step 3: X(i, j) = sum_m conj(V(m, i)) V(m, j) (LAPACK's xLAUU2 with the real part of W's diagonal).
// A warp takes 32 rows (a lane each) and kUnitColumns columns left of their block's end, sums
// over m from the block's first row or the group's first column (the zeros of V cover the rest)
// and writes the entries i >= j: to the lower triangle (coalesced), the upper one as conjugates,
// or both.
template <class T>
__device__ void multiply_inverse(const InverseDesc<T>& d, long long k, const T* S) {
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  T* x = inverse_of(d, k);
  const bool lower_out = !d.upper || d.full, upper_out = d.upper || d.full;
  const int row_blocks = (n + 31) / 32;
  // Units of row block b: the column groups that reach into columns < min(n, 32 (b + 1)).
  const auto groups_of = [n](int b) { return (min(n, 32 * (b + 1)) + kUnitColumns - 1) / kUnitColumns; };
  int units = 0;
  for (int b = 0; b < row_blocks; ++b) units += groups_of(b);
  for (int u = warp; u < units; u += warps) {
    int b = 0, g = u;
    while (g >= groups_of(b)) g -= groups_of(b++);
    const int i = 32 * b + lane, j0 = kUnitColumns * g;
    T sum[kUnitColumns];
#pragma unroll
    for (int t = 0; t < kUnitColumns; ++t) sum[t] = T(0);
    // Columns j0 + t past n read within the square (or its diagonal) and are not written.
    const int ii = min(i, n - 1);
    for (int m = max(32 * b, j0); m < n; ++m) {
      const T* row = S + static_cast<long long>(m) * ld;  // V(m, c) at row[c]
      const T vi = i < n ? conj_of(row[ii]) : T(0);
#pragma unroll
      for (int t = 0; t < kUnitColumns; ++t) sum[t] = plus_product(sum[t], vi, row[j0 + t]);
    }
    if (i >= n) continue;
#pragma unroll
    for (int t = 0; t < kUnitColumns; ++t) {
      const int j = j0 + t;
      if (j > i || j >= n) continue;
      const T value = i == j ? T(real_of(sum[t])) : sum[t];
      if (lower_out) x[i + static_cast<long long>(j) * d.ldx] = value;
      if (upper_out && (i != j || !lower_out)) x[j + static_cast<long long>(i) * d.ldx] = conj_of(value);
    }
  }
}

// Step 3 in the real types: a lane takes two rows 32 apart (a warp 64 rows) and kUnitColumns
// columns j, so that each broadcast entry V(m, j) serves two sums, and writes the unit's entries of
// the triangles asked for, a column of 32 rows per store; the units cover every column of those
// triangles, so that no entry is stored across rows. X(i, j) and X(j, i) are then the same products
// summed in the same order (the zeros of V exactly zero), bit for bit. Warps take the units in a
// snake order, the longest sums first, to even out their work.
template <class T>
__device__ void multiply_inverse_by_row_pairs(const InverseDesc<T>& d, long long k, const T* S) {
  static_assert(std::is_floating_point_v<T>, "the complex types write their upper triangle as conjugates");
  constexpr int kRows = 64;
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  T* x = inverse_of(d, k);
  const bool lower_out = !d.upper || d.full, upper_out = d.upper || d.full;
  const int row_blocks = (n + kRows - 1) / kRows, groups = (n + kUnitColumns - 1) / kUnitColumns;
  // The column groups of row block b: [first_group(b), last_group(b)).
  const auto first_group = [&](int b) { return lower_out ? 0 : kRows * b / kUnitColumns; };
  const auto last_group = [&](int b) {
    return upper_out ? groups : (min(n, kRows * (b + 1)) + kUnitColumns - 1) / kUnitColumns;
  };
  int units = 0;
  for (int b = 0; b < row_blocks; ++b) units += last_group(b) - first_group(b);
  for (int round = 0; round * warps < units; ++round) {
    const int u = round * warps + (round % 2 == 0 ? warp : warps - 1 - warp);
    if (u >= units) continue;
    int b = 0, g = u;
    while (g >= last_group(b) - first_group(b)) g -= last_group(b) - first_group(b++);
    const int i0 = kRows * b + lane, i1 = i0 + 32, j0 = kUnitColumns * (first_group(b) + g);
    T sum0[kUnitColumns], sum1[kUnitColumns];
#pragma unroll
    for (int t = 0; t < kUnitColumns; ++t) sum0[t] = sum1[t] = T(0);
    // Rows and columns past n read within the square (or its diagonal) and are not written.
    const int r0 = min(i0, n - 1), r1 = min(i1, n - 1);
    for (int m = max(kRows * b, j0); m < n; ++m) {
      const T* row = S + static_cast<long long>(m) * ld;  // V(m, c) at row[c]
      const T v0 = i0 < n ? row[r0] : T(0), v1 = i1 < n ? row[r1] : T(0);
#pragma unroll
      for (int t = 0; t < kUnitColumns; ++t) {
        const T v_mj = row[j0 + t];
        sum0[t] = plus_product(sum0[t], v0, v_mj);
        sum1[t] = plus_product(sum1[t], v1, v_mj);
      }
    }
#pragma unroll
    for (int t = 0; t < kUnitColumns; ++t) {
      const int j = j0 + t;
      if (j >= n) break;
      if (i0 < n && ((j <= i0 && lower_out) || (j >= i0 && upper_out)))
        x[i0 + static_cast<long long>(j) * d.ldx] = sum0[t];
      if (i1 < n && ((j <= i1 && lower_out) || (j >= i1 && upper_out)))
        x[i1 + static_cast<long long>(j) * d.ldx] = sum1[t];
    }
  }
}

template <class T>
__device__ void fill_with_nan(const InverseDesc<T>& d, long long k) {
  T* x = inverse_of(d, k);
  for_each_entry(d.n, [&](int r, int c) { x[r + static_cast<long long>(c) * d.ldx] = quiet_nan<T>(); });
}

// RowPairs: step 3 by row pairs (multiply_inverse_by_row_pairs), a kernel of its own so that the
// other's registers and code stay as they are.
template <class T, bool RowPairs>
__global__ void __launch_bounds__(kMaxInverseThreads) potri_batched_kernel(InverseDesc<T> d) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ int first_zero;
  T* S = d.work ? d.work + blockIdx.x * work_elements(d.n, d.ld) : reinterpret_cast<T*>(shared_bytes);
  T* D = S + static_cast<long long>(d.n) * d.ld;
  for (long long k = blockIdx.x; k < d.batch; k += gridDim.x) {
    const InverseDesc<T> m = matrix_desc(d, k);
    if (m.n <= 0) {  // the whole block alike
      if (m.n == 0 && threadIdx.x == 0 && d.info) d.info[k] = 0;
      continue;
    }
    const int zero = load_factor(m, k, S, D, &first_zero);
    if (zero < m.n) {
      if (m.nan_on_failure) fill_with_nan(m, k);
    } else {
      invert_triangle(m, S, D);
      prepare_product(m, S, D);
      __syncthreads();
      if constexpr (RowPairs)
        multiply_inverse_by_row_pairs(m, k, S);
      else
        multiply_inverse(m, k, S);
    }
    if (threadIdx.x == 0 && d.info) d.info[k] = zero < m.n ? zero + 1 : 0;
    __syncthreads();  // the square and first_zero are free for the next matrix
  }
}

// ---- orders up to 32: a warp per matrix, W in registers -------------------------------------------
//
// Lane i holds row i of W while it is computed: at step m lane m's row is final (W(m, j) = (δ_mj -
// acc_m(j)) / L(m, m), acc_m(j) = sum_{q < m} L(m, q) W(q, j)), broadcast by shuffles and added into
// the later rows' sums, with L(i, m) read from column m of the warp's square; no barrier at all. The
// square then takes V (W with the real part of its diagonal, zeros above it) column-major, and lane
// i sums X(i, j) = sum_{m >= i} conj(V(m, i)) V(m, j) in registers (entries j > i are not written).
// The upper triangle goes out through the square (X's lower triangle stored there), a column of X
// per store, rather than lane i storing row i of it across 32 columns.

constexpr int kWarpInverseMaxN = 32;

// A warp takes orders up to 32, except complex double past 16: two rows of 32 complex doubles a
// lane take most of its registers, and the thread-block kernel ran those faster.
template <class T>
bool warp_inverts(int n) {
  return n <= (sizeof(T) > 8 ? 16 : kWarpInverseMaxN);
}

// Four warps a block, two where four squares would pass the 48 KiB of static shared memory.
template <int N, class T>
constexpr int inverse_warps_per_block() {
  return sizeof(T) * N * (N + 1) * 4 <= 48 * 1024 ? 4 : 2;
}

// The triangle inverted by columns (invert_triangle_by_columns) rather than by rows wherever it
// measured faster (H200): the complex types (whose shuffles are two or four words), and the real
// ones at N = 32 and float at 16 (the real ones at 8 measured no faster). It takes more registers:
// in double at 16 they cost more occupancy than its fewer instructions save; in double at 32,
// capping them to the occupancy shared memory allows spilled and was slower than leaving them.
template <int N, class T>
constexpr bool kInvertsByColumns = !std::is_floating_point_v<T> || N == 32 || (N == 16 && sizeof(T) == 4);

// The factor of matrix k into the warp's square (lower triangle, ld = N + 1); lanes take the
// source's faster-moving index, so that the loads coalesce whatever the layout.
template <int N, class T>
__device__ void load_factor_by_warp(const InverseDesc<T>& d, long long k, int n, long long cs, T* S, int lane) {
  constexpr int ld = N + 1;
  const T* a = factor_of(d, k);
  const bool rows_fast = llabs(d.rs) <= llabs(cs);
  // Every load issued before the first store.
  T v[N];
#pragma unroll
  for (int slow = 0; slow < N; ++slow) {
    const int r = rows_fast ? lane : slow, c = rows_fast ? slow : lane;
    const bool stored = slow < n && lane < n && (d.upper ? r <= c : r >= c);
    v[slow] = stored ? load_read_only(a + r * d.rs + c * cs) : T(0);
  }
#pragma unroll
  for (int slow = 0; slow < N; ++slow) {
    const int r = rows_fast ? lane : slow, c = rows_fast ? slow : lane;
    if (slow >= n || lane >= n || (d.upper ? r > c : r < c)) continue;
    if (d.upper)
      S[c + r * ld] = conj_of(v[slow]);
    else
      S[r + c * ld] = v[slow];
  }
  __syncwarp();
}

// Variable: a variable batch (the orders read per matrix; a kernel of its own, since an order read
// from memory rather than from the parameters costs the fixed batches' kernel registers).
template <int N, class T, bool Variable>
__global__ void __launch_bounds__(32 * inverse_warps_per_block<N, T>()) potri_batched_warp_kernel(InverseDesc<T> d) {
  constexpr int ld = N + 1, warps = inverse_warps_per_block<N, T>();
  __shared__ T squares[warps][N * ld];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const long long k = static_cast<long long>(blockIdx.x) * warps + warp;
  if (k >= d.batch) return;
  T* S = squares[warp];
  const int n = Variable ? d.orders[k] : d.n;
  const long long ldx = Variable ? d.ldas[k] : d.ldx;
  if (n <= 0) {
    if (n == 0 && lane == 0 && d.info) d.info[k] = 0;
    return;
  }
  load_factor_by_warp<N>(d, k, n, Variable ? ldx : d.cs, S, lane);
  const T diagonal = lane < n ? S[lane + lane * ld] : T(1);
  const unsigned zeros = __ballot_sync(0xffffffffu, lane < n && is_zero(diagonal));
  const int zero = zeros ? __ffs(static_cast<int>(zeros)) - 1 : n;
  if (lane == 0 && d.info) d.info[k] = zero < n ? zero + 1 : 0;
  T* x = inverse_of(d, k);
  if (zero < n) {
    if (d.nan_on_failure)
      for (int c = 0; c < n; ++c)
        if (lane < n) x[lane + c * ldx] = quiet_nan<T>();
    return;
  }
  T w[N];
  if constexpr (kInvertsByColumns<N, T>) {
    invert_triangle_by_columns<N>(n, S, ld, reciprocal(diagonal), lane, w);
    __syncwarp();  // every lane done with the factor
    if (lane < n) {
#pragma unroll
      for (int r = 0; r < N; ++r) S[r + lane * ld] = r > lane ? w[r] : r == lane ? T(real_of(w[r])) : T(0);
    }
  } else {
    invert_triangle_by_warp<N>(n, S, ld, reciprocal(diagonal), lane, w);
    __syncwarp();  // every lane done with the factor's columns
    if (lane < n) {
#pragma unroll
      for (int j = 0; j < N; ++j) S[lane + j * ld] = j < lane ? w[j] : j == lane ? T(real_of(w[j])) : T(0);
    }
  }
  __syncwarp();
  // Row m of V is read by every lane at once (one broadcast per entry, and only its entries j <= m);
  // lane i adds it for m >= i.
  T sum[N];
#pragma unroll
  for (int j = 0; j < N; ++j) sum[j] = T(0);
#pragma unroll
  for (int m = 0; m < N; ++m) {
    if (m >= n) break;
    const bool adds = m >= lane;
    const T v_mi = adds ? conj_of(S[m + lane * ld]) : T(0);
#pragma unroll
    for (int j = 0; j <= m; ++j) {
      const T v_mj = S[m + j * ld];
      if (adds) sum[j] = plus_product(sum[j], v_mi, v_mj);
    }
  }
  const bool lower_out = !d.upper || d.full, upper_out = d.upper || d.full;
  __syncwarp();  // V is read; the square takes X's lower triangle for the upper one's stores
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j > lane || lane >= n) break;
    const T value = j == lane ? T(real_of(sum[j])) : sum[j];
    if (lower_out) x[lane + j * ldx] = value;
    if (upper_out) S[lane + j * ld] = value;
  }
  if (!upper_out) return;
  __syncwarp();
  // Column c of the upper triangle, lane r on X(r, c) = conj(X(c, r)): coalesced stores.
  for (int c = 0; c < n; ++c)
    if (lane < c || (lane == c && !lower_out)) x[lane + c * ldx] = conj_of(S[c + lane * ld]);
}

template <int N, class T>
void launch_warp_inverse(const InverseDesc<T>& d, cudaStream_t stream) {
  constexpr int warps = inverse_warps_per_block<N, T>();
  const long long blocks = (static_cast<long long>(d.batch) + warps - 1) / warps;
  if (d.orders)
    potri_batched_warp_kernel<N, T, true><<<static_cast<unsigned>(blocks), 32 * warps, 0, stream>>>(d);
  else
    potri_batched_warp_kernel<N, T, false><<<static_cast<unsigned>(blocks), 32 * warps, 0, stream>>>(d);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// Two warps per panel of 32 rows up to order 64, then kMaxInverseThreads.
int inverse_threads(int n) { return n <= 64 ? 64 * ((n + kPanel - 1) / kPanel) : kMaxInverseThreads; }

// Step 3 by row pairs where the real types write an upper triangle (in place, or both triangles
// out of place) up to order 64, their square in shared memory: its stores then run down columns
// and its broadcast reads serve two rows. Above 64 it measured no faster, and from device memory
// slower (H100; the out-of-place form timed, the in-place upper one not).
constexpr int kRowPairsMaxN = 64;

template <class T>
bool by_row_pairs(const InverseDesc<T>& d) {
  return (d.upper || d.full) && d.n <= kRowPairsMaxN;
}

template <class T, bool RowPairs>
void launch_in_shared_memory(const InverseDesc<T>& d, int threads, std::size_t square_bytes, cudaStream_t stream) {
  detail::ensure_dynamic_smem(reinterpret_cast<const void*>(&potri_batched_kernel<T, RowPairs>), square_bytes);
  potri_batched_kernel<T, RowPairs><<<static_cast<unsigned>(d.batch), threads, square_bytes, stream>>>(d);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_inverse(InverseDesc<T> d, cudaStream_t stream) {
  if (warp_inverts<T>(d.n)) {
    if (d.n <= 8) return launch_warp_inverse<8>(d, stream);
    if (d.n <= 16) return launch_warp_inverse<16>(d, stream);
    if constexpr (sizeof(T) <= 8) return launch_warp_inverse<32>(d, stream);
  }
  d.ld = d.n | 1;
  const std::size_t square_bytes = static_cast<std::size_t>(work_elements(d.n, d.ld)) * sizeof(T);
  const int threads = inverse_threads(d.n);
  if (square_bytes <= detail::max_dynamic_smem()) {
    if constexpr (std::is_floating_point_v<T>) {
      if (by_row_pairs(d)) return launch_in_shared_memory<T, true>(d, threads, square_bytes, stream);
    }
    return launch_in_shared_memory<T, false>(d, threads, square_bytes, stream);
  }
  const long long most_blocks = static_cast<long long>(detail::device_sm_count()) * kFewMatricesPerSm;
  const long long fit = static_cast<long long>(std::max<std::size_t>(1, kMaxWorkBytes / square_bytes));
  const int blocks = static_cast<int>(std::min<long long>({static_cast<long long>(d.batch), most_blocks, fit}));
  StreamBuffer<T> work(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(work_elements(d.n, d.ld)), stream);
  d.work = work.data();
  potri_batched_kernel<T, false><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(d);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace

namespace {

// What every form describes alike: the order, the count, the triangle and where the info goes.
template <class T>
InverseDesc<DeviceScalar<T>> inverse_desc(BatchUplo uplo, int n, int batch, int* info) {
  InverseDesc<DeviceScalar<T>> d;
  d.n = n;
  d.batch = batch;
  d.upper = uplo == BatchUplo::upper;
  d.info = info;
  return d;
}

// Factor k read at A + k * stride through (rs, cs), its inverse written to X + k * strideX: both
// triangles and NaN for a failed matrix when out of place, else (X == A) the triangle only.
template <class T>
void enqueue_inverse(BatchUplo uplo, int n, const T* A, long long rs, long long cs, long long stride, T* X, int ldx,
                     long long strideX, int batch, int* info, bool out_of_place, cudaStream_t stream) {
  InverseDesc<DeviceScalar<T>> d = inverse_desc<T>(uplo, n, batch, info);
  d.A = device_view(A);
  d.rs = rs;
  d.cs = cs;
  d.stride = stride;
  d.X = device_view(X);
  d.ldx = ldx;
  d.strideX = strideX;
  d.full = out_of_place;
  d.nan_on_failure = out_of_place;
  launch_inverse(d, stream);
}

}  // namespace

template <class T>
void potri_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info,
                   cudaStream_t stream) {
  require(n >= 0, "potri_batched: n must be >= 0", 2);
  require(lda >= (n > 1 ? n : 1), "potri_batched: lda must be >= max(1, n)", 4);
  require(batch >= 0, "potri_batched: batch must be >= 0", 6);
  if (n == 0 || batch == 0) return;
  require(A != nullptr, "potri_batched: A must not be null", 3);
  enqueue_inverse<T>(uplo, n, A, 1, lda, strideA, A, lda, strideA, batch, info, false, stream);
}

template <class T>
void potri_batched(BatchUplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA,
                   long long strideA, T* X, int ldx, long long strideX, int batch, int* info,
                   cudaStream_t stream) {
  require(n >= 0, "potri_batched: n must be >= 0", 2);
  require(ldx >= (n > 1 ? n : 1), "potri_batched: ldx must be >= max(1, n)", 8);
  require(batch >= 0, "potri_batched: batch must be >= 0", 10);
  if (n == 0 || batch == 0) return;
  require(A != nullptr && X != nullptr, "potri_batched: A and X must not be null", 3);
  enqueue_inverse(uplo, n, A, rowStrideA, colStrideA, strideA, X, ldx, strideX, batch, info, true, stream);
}

template <class T>
void potri_batched(BatchUplo uplo, int n, T* const* A_array, int lda, int batch, int* info, cudaStream_t stream) {
  require(n >= 0, "potri_batched: n must be >= 0", 2);
  require(lda >= (n > 1 ? n : 1), "potri_batched: lda must be >= max(1, n)", 4);
  require(batch >= 0, "potri_batched: batch must be >= 0", 5);
  if (n == 0 || batch == 0) return;
  require(A_array != nullptr, "potri_batched: A_array must not be null", 3);
  InverseDesc<DeviceScalar<T>> d = inverse_desc<T>(uplo, n, batch, info);
  d.array = device_view(A_array);
  d.rs = 1;
  d.cs = lda;
  d.ldx = lda;
  launch_inverse(d, stream);
}

template <class T>
void potri_vbatched(BatchUplo uplo, const int* n, int max_n, T* const* A_array, const int* lda, int batch, int* info,
                    cudaStream_t stream) {
  require(max_n >= 0, "potri_vbatched: max_n must be >= 0", 3);
  require(batch >= 0, "potri_vbatched: batch must be >= 0", 6);
  if (max_n == 0 || batch == 0) return;
  require(n != nullptr && lda != nullptr, "potri_vbatched: n and lda must not be null", 2);
  require(A_array != nullptr, "potri_vbatched: A_array must not be null", 4);
  InverseDesc<DeviceScalar<T>> d = inverse_desc<T>(uplo, max_n, batch, info);
  d.array = device_view(A_array);
  d.orders = n;
  d.ldas = lda;
  d.rs = 1;
  launch_inverse(d, stream);
}

#define TESSERA_INSTANTIATE(T)                                                                                  \
  template void potri_batched<T>(BatchUplo, int, T*, int, long long, int, int*, cudaStream_t);                  \
  template void potri_vbatched<T>(BatchUplo, const int*, int, T* const*, const int*, int, int*, cudaStream_t);  \
  template void potri_batched<T>(BatchUplo, int, T* const*, int, int, int*, cudaStream_t);                      \
  template void potri_batched<T>(BatchUplo, int, const T*, long long, long long, long long, T*, int, long long, \
                                 int, int*, cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
