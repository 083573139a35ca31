// The inverse from Cholesky factors, batched. Up to order 32 a warp per matrix (below, "orders up
// to 32"); larger orders one thread block per matrix, the factor in a work square (shared memory
// where it fits, else a slice of device memory per block):
//   1. load:    L (lower; an upper factor U is read as L = U^H) into the square's lower triangle
//               and the reciprocals of its diagonal into D. A zero on the diagonal stops there,
//               as LAPACK's xTRTRI does, with the matrix's info set and nothing computed.
//   2. W = L^-1: right-looking elimination of L W = I, all threads on each step, W kept in the
//               square's strict upper triangle (W(i, j) at row j, column i) and W(j, j) = D[j].
//   3. X = W^H W (xLAUUM's product): warps of 32 rows by a few columns, each lane summing its
//               entries in registers; written to X in its triangle or in both.
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

constexpr int kMaxInverseThreads = 512;
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

// Elements of one work square and its diagonal.
constexpr long long work_elements(int n, int ld) { return static_cast<long long>(n) * ld + n; }

__device__ __forceinline__ bool is_zero(float x) { return x == 0.0f; }
__device__ __forceinline__ bool is_zero(double x) { return x == 0.0; }
template <class R>
__device__ __forceinline__ bool is_zero(DeviceComplex<R> x) {
  return x.re == R(0) && x.im == R(0);
}

__device__ __forceinline__ float reciprocal(float x) { return 1.0f / x; }
__device__ __forceinline__ double reciprocal(double x) { return 1.0 / x; }
// Smith's division, as LAPACK's complex division: no overflow of |x|^2 for large entries.
template <class R>
__device__ __forceinline__ DeviceComplex<R> reciprocal(DeviceComplex<R> x) {
  if (fabs(x.re) >= fabs(x.im)) {
    const R ratio = x.im / x.re;
    const R denominator = x.re + x.im * ratio;
    return {R(1) / denominator, -ratio / denominator};
  }
  const R ratio = x.re / x.im;
  const R denominator = x.re * ratio + x.im;
  return {ratio / denominator, R(-1) / denominator};
}

template <class T>
__device__ __forceinline__ T times(T a, T b) {
  return plus_product(T(0), a, b);
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
template <class F>
__device__ __forceinline__ void for_each_entry(int n, const F& f) {
  constexpr int kLargestIntSquare = 46340;
  if (n <= kLargestIntSquare) {
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) f(e % n, e / n);
  } else {
    const long long elements = static_cast<long long>(n) * n;
    for (long long e = threadIdx.x; e < elements; e += blockDim.x) f(static_cast<int>(e % n), static_cast<int>(e / n));
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
  const bool rows_fast = llabs(d.rs) <= llabs(d.cs);
  for_each_entry(n, [&](int fast, int slow) {
    const int r = rows_fast ? fast : slow, c = rows_fast ? slow : fast;
    if (d.upper ? r > c : r < c) return;
    const T v = load_read_only(a + r * d.rs + c * d.cs);
    if (d.upper)
      S[c + static_cast<long long>(r) * ld] = conj_of(v);
    else
      S[r + static_cast<long long>(c) * ld] = v;
  });
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

// Step 2: W = L^-1 by rows, right-looking (L W = I eliminated one column of L at a time): at step
// k row k of W is final (W(k, k) = D[k]); every later row i takes W(i, j) -= L(i, k) W(k, j) for
// j <= k (for j = k the first term: W(i, k) = -L(i, k) D[k]). Warp w updates rows k+1+w, k+1+w+warps,
// ...: warp 0 holds row k+1, which no later step changes, and scales it by D[k+1] at once. W(i, j)
// (j < i) lives in the square's row j, column i; one barrier per step.
template <class T>
__device__ void invert_triangle(const InverseDesc<T>& d, T* S, const T* D) {
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int k = 0; k + 1 < n; ++k) {
    const T* row_k = S + static_cast<long long>(k) * ld;  // W(k, j) at row_k[j], j < k
    const T* column_k = S + static_cast<long long>(k) * ld;  // L(i, k) at column_k[i], i > k
    for (int j0 = 0; j0 <= k; j0 += 32) {
      const int j = j0 + lane;
      if (j > k) break;
      // W(k, j), read once for every row this warp updates; two rows at a time for the loads'
      // sake (the rows are independent).
      const T wkj = j == k ? D[k] : row_k[j];
      int i = k + 1 + warp;
      for (; i + warps < n; i += 2 * warps) {
        T* row_a = S + static_cast<long long>(i) * ld;
        T* row_b = row_a + static_cast<long long>(warps) * ld;
        const T la = column_k[i], lb = column_k[i + warps];
        const T old_a = j == k ? T(0) : row_a[j], old_b = j == k ? T(0) : row_b[j];
        T wa = minus_product(old_a, la, wkj);
        const T wb = minus_product(old_b, lb, wkj);
        if (i == k + 1) wa = times(wa, D[i]);  // row k+1's last update: scale it
        row_a[j] = wa;
        row_b[j] = wb;
      }
      if (i < n) {
        T* row_a = S + static_cast<long long>(i) * ld;
        T wa = minus_product(j == k ? T(0) : row_a[j], column_k[i], wkj);
        if (i == k + 1) wa = times(wa, D[i]);
        row_a[j] = wa;
      }
    }
    __syncthreads();
  }
}

// Between steps 2 and 3: the square becomes V^T for V = W with re(D) on its diagonal and zeros
// above it (the factor L is no longer needed), so that step 3 sums over a common range.
template <class T>
__device__ void prepare_product(const InverseDesc<T>& d, T* S, const T* D) {
  const int n = d.n, ld = d.ld;
  for_each_entry(n, [&](int r, int c) {
    if (r == c)
      S[r + static_cast<long long>(c) * ld] = T(real_of(D[r]));
    else if (r > c)
      S[r + static_cast<long long>(c) * ld] = T(0);
  });
}

constexpr int kProductColumns = 8;  // columns of X a lane accumulates at once

// Step 3: X(i, j) = sum_m conj(V(m, i)) V(m, j) (LAPACK's xLAUU2 with the real part of W's diagonal).
// A warp takes 32 rows (a lane each) and kProductColumns columns left of their block's end, sums
// over m from the block's first row (the zeros of V cover the rest) and writes the entries i >= j:
// to the lower triangle (coalesced), the upper one as conjugates, or both.
template <class T>
__device__ void multiply_inverse(const InverseDesc<T>& d, long long k, const T* S) {
  const int n = d.n, ld = d.ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  T* x = inverse_of(d, k);
  const bool lower_out = !d.upper || d.full, upper_out = d.upper || d.full;
  const int row_blocks = (n + 31) / 32;
  // Units of row block b: the column groups that reach into columns < min(n, 32 (b + 1)).
  const auto groups_of = [n](int b) { return (min(n, 32 * (b + 1)) + kProductColumns - 1) / kProductColumns; };
  int units = 0;
  for (int b = 0; b < row_blocks; ++b) units += groups_of(b);
  for (int u = warp; u < units; u += warps) {
    int b = 0, g = u;
    while (g >= groups_of(b)) g -= groups_of(b++);
    const int i = 32 * b + lane, j0 = kProductColumns * g;
    T sum[kProductColumns];
#pragma unroll
    for (int t = 0; t < kProductColumns; ++t) sum[t] = T(0);
    for (int m = 32 * b; m < n; ++m) {
      const T* row = S + static_cast<long long>(m) * ld;  // V(m, c) at row[c]
      const T vi = conj_of(i < n ? row[i] : T(0));
#pragma unroll
      for (int t = 0; t < kProductColumns; ++t)
        if (j0 + t < n) sum[t] = plus_product(sum[t], vi, row[j0 + t]);
    }
    if (i >= n) continue;
#pragma unroll
    for (int t = 0; t < kProductColumns; ++t) {
      const int j = j0 + t;
      if (j > i || j >= n) continue;
      const T value = i == j ? T(real_of(sum[t])) : sum[t];
      if (lower_out) x[i + static_cast<long long>(j) * d.ldx] = value;
      if (upper_out && (i != j || !lower_out)) x[j + static_cast<long long>(i) * d.ldx] = conj_of(value);
    }
  }
}

template <class T>
__device__ void fill_with_nan(const InverseDesc<T>& d, long long k) {
  T* x = inverse_of(d, k);
  for_each_entry(d.n, [&](int r, int c) { x[r + static_cast<long long>(c) * d.ldx] = quiet_nan<T>(); });
}

template <class T>
__global__ void __launch_bounds__(kMaxInverseThreads) potri_batched_kernel(InverseDesc<T> d) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ int first_zero;
  T* S = d.work ? d.work + blockIdx.x * work_elements(d.n, d.ld) : reinterpret_cast<T*>(shared_bytes);
  T* D = S + static_cast<long long>(d.n) * d.ld;
  for (long long k = blockIdx.x; k < d.batch; k += gridDim.x) {
    const int zero = load_factor(d, k, S, D, &first_zero);
    if (zero < d.n) {
      if (d.nan_on_failure) fill_with_nan(d, k);
    } else {
      invert_triangle(d, S, D);
      prepare_product(d, S, D);
      __syncthreads();
      multiply_inverse(d, k, S);
    }
    if (threadIdx.x == 0 && d.info) d.info[k] = zero < d.n ? zero + 1 : 0;
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

// The factor of matrix k into the warp's square (lower triangle, ld = N + 1); lanes take the
// source's faster-moving index, so that the loads coalesce whatever the layout.
template <int N, class T>
__device__ void load_factor_by_warp(const InverseDesc<T>& d, long long k, T* S, int lane) {
  constexpr int ld = N + 1;
  const T* a = factor_of(d, k);
  const bool rows_fast = llabs(d.rs) <= llabs(d.cs);
  for (int slow = 0; slow < d.n; ++slow) {
    if (lane >= d.n) break;
    const int r = rows_fast ? lane : slow, c = rows_fast ? slow : lane;
    if (d.upper ? r > c : r < c) continue;
    const T v = load_read_only(a + r * d.rs + c * d.cs);
    if (d.upper)
      S[c + r * ld] = conj_of(v);
    else
      S[r + c * ld] = v;
  }
  __syncwarp();
}

// Row `lane` of W = L^-1 (entries j <= lane; the others stay zero), dinv = 1 / L(lane, lane).
template <int N, class T>
__device__ void invert_triangle_by_warp(int n, const T* S, T dinv, int lane, T (&w)[N]) {
  constexpr int ld = N + 1;
#pragma unroll
  for (int j = 0; j < N; ++j) w[j] = T(0);
#pragma unroll
  for (int m = 0; m < N; ++m) {
    if (m >= n) break;
    const T l_im = lane < n ? S[lane + m * ld] : T(0);  // L(lane, m): used by the later rows only
#pragma unroll
    for (int j = 0; j <= m; ++j) {
      if (lane == m) w[j] = j == m ? dinv : times(-w[j], dinv);
      const T w_mj = shuffle(0xffffffffu, w[j], m);
      if (lane > m) w[j] = plus_product(w[j], l_im, w_mj);
    }
  }
}

template <int N, class T>
__global__ void __launch_bounds__(32 * inverse_warps_per_block<N, T>()) potri_batched_warp_kernel(InverseDesc<T> d) {
  constexpr int ld = N + 1, warps = inverse_warps_per_block<N, T>();
  __shared__ T squares[warps][N * ld];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const long long k = static_cast<long long>(blockIdx.x) * warps + warp;
  if (k >= d.batch) return;
  T* S = squares[warp];
  const int n = d.n;
  load_factor_by_warp<N>(d, k, S, lane);
  const T diagonal = lane < n ? S[lane + lane * ld] : T(1);
  const unsigned zeros = __ballot_sync(0xffffffffu, lane < n && is_zero(diagonal));
  const int zero = zeros ? __ffs(static_cast<int>(zeros)) - 1 : n;
  if (lane == 0 && d.info) d.info[k] = zero < n ? zero + 1 : 0;
  T* x = inverse_of(d, k);
  if (zero < n) {
    if (d.nan_on_failure)
      for (int c = 0; c < n; ++c)
        if (lane < n) x[lane + static_cast<long long>(c) * d.ldx] = quiet_nan<T>();
    return;
  }
  T w[N];
  invert_triangle_by_warp<N>(n, S, reciprocal(diagonal), lane, w);
  __syncwarp();  // every lane done with the factor's columns
  if (lane < n) {
#pragma unroll
    for (int j = 0; j < N; ++j) S[lane + j * ld] = j < lane ? w[j] : j == lane ? T(real_of(w[j])) : T(0);
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
  if (lane >= n) return;
  const bool lower_out = !d.upper || d.full, upper_out = d.upper || d.full;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j > lane) break;
    const T value = j == lane ? T(real_of(sum[j])) : sum[j];
    if (lower_out) x[lane + static_cast<long long>(j) * d.ldx] = value;
    if (upper_out && (j != lane || !lower_out)) x[j + static_cast<long long>(lane) * d.ldx] = conj_of(value);
  }
}

template <int N, class T>
void launch_warp_inverse(const InverseDesc<T>& d, cudaStream_t stream) {
  constexpr int warps = inverse_warps_per_block<N, T>();
  const long long blocks = (static_cast<long long>(d.batch) + warps - 1) / warps;
  potri_batched_warp_kernel<N, T><<<static_cast<unsigned>(blocks), 32 * warps, 0, stream>>>(d);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// Warps enough to keep the per-step updates of step 2 in flight; complex double keeps to 256
// threads (its product registers).
template <class T>
int inverse_threads(int n) {
  const int most = sizeof(T) > 8 ? 256 : kMaxInverseThreads;
  return n <= 32 ? 64 : n <= 64 ? 256 : most;
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
  const int threads = inverse_threads<T>(d.n);
  if (square_bytes <= detail::max_dynamic_smem()) {
    detail::ensure_dynamic_smem(reinterpret_cast<const void*>(&potri_batched_kernel<T>), square_bytes);
    potri_batched_kernel<T><<<static_cast<unsigned>(d.batch), threads, square_bytes, stream>>>(d);
    TESSERA_CUDA_CHECK_LAUNCH();
    return;
  }
  const long long most_blocks = static_cast<long long>(detail::device_sm_count()) * kFewMatricesPerSm;
  const long long fit = static_cast<long long>(std::max<std::size_t>(1, kMaxWorkBytes / square_bytes));
  const int blocks = static_cast<int>(std::min<long long>({static_cast<long long>(d.batch), most_blocks, fit}));
  StreamBuffer<T> work(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(work_elements(d.n, d.ld)), stream);
  d.work = work.data();
  potri_batched_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(d);
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

#define TESSERA_INSTANTIATE(T)                                                                                  \
  template void potri_batched<T>(BatchUplo, int, T*, int, long long, int, int*, cudaStream_t);                  \
  template void potri_batched<T>(BatchUplo, int, T* const*, int, int, int*, cudaStream_t);                      \
  template void potri_batched<T>(BatchUplo, int, const T*, long long, long long, long long, T*, int, long long, \
                                 int, int*, cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
