#include "refinement.hpp"

#include <cuComplex.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "tessera/error.hpp"

namespace tessera::kernels::cuda {

namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: each loads kTile / kTileRows rows

// The scalar operations where a complex matrix's differ (W: double or cuDoubleComplex, a double
// matrix's entry; N: its single-precision type).
__device__ double zero_of(double) { return 0.0; }
__device__ cuDoubleComplex zero_of(cuDoubleComplex) { return make_cuDoubleComplex(0.0, 0.0); }
__device__ double conjugate(double v) { return v; }
__device__ cuDoubleComplex conjugate(cuDoubleComplex v) { return cuConj(v); }
__device__ double real_part(double v) { return v; }
__device__ double real_part(cuDoubleComplex v) { return cuCreal(v); }
// A Hermitian matrix's diagonal entry: its real part.
__device__ double on_diagonal(double v) { return v; }
__device__ cuDoubleComplex on_diagonal(cuDoubleComplex v) { return make_cuDoubleComplex(cuCreal(v), 0.0); }
__device__ double scaled(double v, double s) { return v * s; }
__device__ cuDoubleComplex scaled(cuDoubleComplex v, double s) { return make_cuDoubleComplex(v.x * s, v.y * s); }
__device__ double sum(double a, double b) { return a + b; }
__device__ cuDoubleComplex sum(cuDoubleComplex a, cuDoubleComplex b) { return cuCadd(a, b); }
// The modulus (the norm's |a_ij|) and IxAMAX's magnitude (|re| + |im| for a complex entry).
__device__ double modulus(double v) { return fabs(v); }
__device__ double modulus(cuDoubleComplex v) { return hypot(v.x, v.y); }
__device__ double picked_magnitude(double v) { return fabs(v); }
__device__ double picked_magnitude(cuDoubleComplex v) { return fabs(v.x) + fabs(v.y); }
__device__ bool is_finite(double v) { return isfinite(v); }
__device__ bool is_finite(cuDoubleComplex v) { return isfinite(v.x) && isfinite(v.y); }
__device__ float narrowed(double v) { return static_cast<float>(v); }
__device__ cuFloatComplex narrowed(cuDoubleComplex v) {
  return make_cuFloatComplex(static_cast<float>(v.x), static_cast<float>(v.y));
}
__device__ double widened(float v) { return static_cast<double>(v); }
__device__ cuDoubleComplex widened(cuFloatComplex v) { return make_cuDoubleComplex(v.x, v.y); }
// Beyond single precision's range (false for a NaN, as in xLAG2S; a complex value part by part, as
// in ZLAG2C).
__device__ bool overflows_single(double v) { return fabs(v) > FLT_MAX; }
__device__ bool overflows_single(cuDoubleComplex v) { return fabs(v.x) > FLT_MAX || fabs(v.y) > FLT_MAX; }

// The kernels' types of a public double-precision scalar.
template <class T>
struct DeviceTypes {
  using Wide = double;
  using Narrow = float;
};
template <>
struct DeviceTypes<std::complex<double>> {
  using Wide = cuDoubleComplex;
  using Narrow = cuFloatComplex;
};
template <class T>
const typename DeviceTypes<T>::Wide* wide(const T* p) {
  return reinterpret_cast<const typename DeviceTypes<T>::Wide*>(p);
}
template <class T>
typename DeviceTypes<T>::Wide* wide(T* p) {
  return reinterpret_cast<typename DeviceTypes<T>::Wide*>(p);
}
template <class S>
auto narrow_view(S* p) {
  using Narrow = std::conditional_t<std::is_same_v<std::remove_const_t<S>, float>, float, cuFloatComplex>;
  using Pointer = std::conditional_t<std::is_const_v<S>, const Narrow*, Narrow*>;
  return reinterpret_cast<Pointer>(p);
}

// tile[y][x] := value(I * 32 + x, J * 32 + y) of the symmetric (Hermitian) A stored in its
// triangle uplo, for (i, j) on or below the diagonal and inside the matrix (a diagonal entry's
// real part); 0 elsewhere. Loads are coalesced either way: an upper A's tile is read along its
// stored columns and transposed (conjugated) through shared memory.
template <class W>
__device__ void load_lower_tile(char uplo, int n, const W* A, long long lda, int I, int J,
                                W (&tile)[kTile][kTile + 1]) {
  const W zero = zero_of(W{});
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    if (uplo == 'L') {
      const int i = I * kTile + threadIdx.x, j = J * kTile + r;
      const W v = (i < n && j < n && i >= j) ? A[i + j * lda] : zero;
      tile[r][threadIdx.x] = i == j ? on_diagonal(v) : v;
    } else {
      // value(i, j) = conj(A(j, i)): consecutive threads walk A's column i down its rows j.
      const int j = J * kTile + threadIdx.x, i = I * kTile + r;
      const W v = (i < n && j < n && i >= j) ? conjugate(A[j + i * lda]) : zero;
      tile[threadIdx.x][r] = i == j ? on_diagonal(v) : v;
    }
  }
  __syncthreads();
}

template <class W>
__device__ void flag_overflow(W v, int* flags) {
  if (overflows_single(v)) atomicOr(flags, kScaledOverflow);
}

template <class W>
__global__ void diagonal_scale_kernel(int n, const W* A, long long lda, double* scale, int* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double a = real_part(A[i + i * lda]);
  const bool usable = a > 0 && a <= DBL_MAX;
  if (!usable) atomicOr(flags, kDiagonalNotPositive);
  scale[i] = usable ? 1.0 / sqrt(a) : 1.0;
}

// Adds the tile's share of each row's sum of |a_ij| over the symmetric matrix: the rows of the
// tile (entries on and left of the diagonal), and by symmetry the rows of its columns.
template <class W>
__device__ void add_row_sums(int n, int I, int J, const W (&tile)[kTile][kTile + 1], double* sums) {
  const int x = threadIdx.x;
  if (threadIdx.y == 0) {
    double s = 0;
    for (int y = 0; y < kTile; ++y) s += modulus(tile[y][x]);
    if (I * kTile + x < n) atomicAdd(&sums[I * kTile + x], s);
  } else if (threadIdx.y == 1) {
    double s = 0;
    for (int y = 0; y < kTile; ++y)
      if (I * kTile + y != J * kTile + x) s += modulus(tile[x][y]);
    if (J * kTile + x < n) atomicAdd(&sums[J * kTile + x], s);
  }
}

template <class W, class N>
__global__ void narrow_kernel(char uplo, int n, const W* A, long long lda, const double* scale, N* As, long long lds,
                              double* sums, int* flags) {
  const int I = blockIdx.x, J = blockIdx.y;
  if (I < J) return;
  __shared__ W tile[kTile][kTile + 1];
  load_lower_tile(uplo, n, A, lda, I, J, tile);
  const int i = I * kTile + threadIdx.x;
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int j = J * kTile + r;
    if (i >= n || j >= n || i < j) continue;
    const W v = scaled(tile[r][threadIdx.x], scale[i] * scale[j]);
    flag_overflow(v, flags);
    As[i + j * lds] = narrowed(v);
  }
  add_row_sums(n, I, J, tile, sums);
}

__global__ void row_sums_kernel(char uplo, int n, const double* A, long long lda, double* sums) {
  const int I = blockIdx.x, J = blockIdx.y;
  if (I < J) return;
  __shared__ double tile[kTile][kTile + 1];
  load_lower_tile(uplo, n, A, lda, I, J, tile);
  add_row_sums(n, I, J, tile, sums);
}

template <class W, class N>
__global__ void narrow_scaled_kernel(int n, int nrhs, const double* scale, const W* R, long long ldr, N* Z,
                                     long long ldz, int* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= n || j >= nrhs) return;
  const W v = scaled(R[i + j * ldr], scale[i]);
  flag_overflow(v, flags);
  Z[i + j * ldz] = narrowed(v);
}

template <class W, class N>
__global__ void widen_scaled_kernel(bool add, int n, int nrhs, const double* scale, const N* Z, long long ldz, W* X,
                                    long long ldx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= n || j >= nrhs) return;
  const W v = scaled(widened(Z[i + j * ldz]), scale[i]);
  X[i + j * ldx] = add ? sum(X[i + j * ldx], v) : v;
}

constexpr int kReduceThreads = 256;

template <class W>
__global__ void largest_magnitudes_kernel(int n, const W* M, long long ldm, double* largest) {
  const W* column = M + blockIdx.x * ldm;
  double m = 0;
  for (int i = threadIdx.x; i < n; i += kReduceThreads) m = fmax(m, picked_magnitude(column[i]));  // NaNs passed over
  __shared__ double partial[kReduceThreads];
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int stride = kReduceThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmax(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double first = picked_magnitude(column[0]);
    largest[blockIdx.x] = isnan(first) ? first : partial[0];
  }
}

template <class W>
__global__ void mark_non_finite_kernel(int n, int cols, const W* M, long long ldm, int* non_finite) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && j < cols && !is_finite(M[i + j * ldm])) non_finite[j] = 1;  // any writer writes 1
}

// The residual R := B - A X of a symmetric (Hermitian) A stored in its triangle uplo, for K <= 4
// columns of X at once, reading that triangle once: cuBLAS's symv reads it at about half the
// memory's bandwidth, and its blocked products for several columns read the off-diagonal blocks
// twice. A block of threads takes a run of tiles of 64 x 64 in one tile column J (a chunk of the
// column's stored tiles): each tile's product with X_J is summed across the threads at once (the
// rows' share), its conjugate transpose's with X_I is kept per thread across the run (the columns'
// share). The shares go to `work` (symmetric_residual_workspace(n, K) elements: per column of X, n
// for each tile column, then n for each chunk of a column) and are summed in a fixed order by the
// second kernel: no atomics, so the same inputs give the same R bit for bit.
constexpr int kResidualTile = 64;

// A thread's columns of a tile: 16 for one column of X; for several, 8 (twice the threads, each
// with K sums per column): the registers of 16 columns' sums left one block of 8 warps per
// multiprocessor, too few loads in flight.
template <class W, int K>
struct ResidualShape {
  static constexpr int kColumns = K == 1 ? 16 : 8;
  static constexpr int kGroups = kResidualTile / kColumns;
  static constexpr int kThreads = kResidualTile * kGroups;
  static_assert(kThreads >= K * kResidualTile, "a thread per row and column of X sums the rows' shares");
};

__device__ double times(double a, double b) { return a * b; }
__device__ cuDoubleComplex times(cuDoubleComplex a, cuDoubleComplex b) { return cuCmul(a, b); }

// The sum over a warp's 32 lanes, in lane 0 (a fixed order).
__device__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
__device__ cuDoubleComplex warp_sum(cuDoubleComplex v) { return make_cuDoubleComplex(warp_sum(v.x), warp_sum(v.y)); }

// Which tiles of tile column J a chunk takes: [first, last) of its tile rows.
struct ResidualChunk {
  int first, last;
};
__host__ __device__ inline int residual_tiles(int n) { return (n + kResidualTile - 1) / kResidualTile; }
__device__ inline ResidualChunk residual_chunk(char uplo, int tiles, int J, int chunk, int per_chunk) {
  // Lower: tile rows J .. tiles - 1; upper: 0 .. J.
  const int begin = uplo == 'L' ? J : 0, end = uplo == 'L' ? tiles : J + 1;
  const int first = begin + chunk * per_chunk;
  return {first, min(end, first + per_chunk)};
}
// The shares' slots of one column of X: one per tile column, then one per chunk.
__host__ __device__ inline long long residual_slots(int tiles, int per_chunk) {
  return tiles + (tiles + per_chunk - 1) / per_chunk;
}

template <class W, int K>
__global__ void __launch_bounds__(ResidualShape<W, K>::kThreads)
    residual_shares_kernel(char uplo, int n, const W* __restrict__ A, long long lda, const W* __restrict__ X,
                           long long ldx, int per_chunk, W* __restrict__ work) {
  using Shape = ResidualShape<W, K>;
  constexpr int kColumns = Shape::kColumns, kGroups = Shape::kGroups;
  const int tiles = residual_tiles(n), J = blockIdx.x;
  const ResidualChunk run = residual_chunk(uplo, tiles, J, blockIdx.y, per_chunk);
  if (run.first >= run.last) return;
  const long long slots = residual_slots(tiles, per_chunk);
  const W zero = zero_of(W{});
  const int r = threadIdx.x % kResidualTile, group = threadIdx.x / kResidualTile;
  const int c0 = group * kColumns;  // the thread's first column in the tile
  __shared__ W x_J[K][kResidualTile];
  __shared__ W rows[kGroups][K][kResidualTile];
  if (threadIdx.x < K * kResidualTile) {
    const int k = threadIdx.x / kResidualTile, c = threadIdx.x % kResidualTile, j = J * kResidualTile + c;
    x_J[k][c] = j < n ? X[j + k * ldx] : zero;
  }
  W columns[kColumns][K];
#pragma unroll
  for (int q = 0; q < kColumns; ++q)
#pragma unroll
    for (int k = 0; k < K; ++k) columns[q][k] = zero;
  const long long j0 = static_cast<long long>(J) * kResidualTile + c0;
  const int width = max(0, min(kColumns, n - static_cast<int>(j0)));  // columns inside the matrix
  __syncthreads();
  for (int I = run.first; I < run.last; ++I) {
    const int i = I * kResidualTile + r;
    const bool row_inside = i < n;
    W a[kColumns];
    const W* from = A + i + j0 * lda;
#pragma unroll
    for (int q = 0; q < kColumns; ++q) a[q] = (row_inside && q < width) ? from[q * lda] : zero;
    W x_i[K], row[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      x_i[k] = row_inside ? X[i + k * ldx] : zero;
      row[k] = zero;
    }
    if (I != J) {
#pragma unroll
      for (int q = 0; q < kColumns; ++q)
#pragma unroll
        for (int k = 0; k < K; ++k) {
          row[k] = sum(row[k], times(a[q], x_J[k][c0 + q]));
          columns[q][k] = sum(columns[q][k], times(conjugate(a[q]), x_i[k]));
        }
    } else {
      // The diagonal tile: only its stored triangle, its diagonal's real part, mirrored once.
#pragma unroll
      for (int q = 0; q < kColumns; ++q) {
        const int c = c0 + q;
        const bool stored = uplo == 'L' ? r >= c : r <= c;
        if (!stored) continue;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          if (r == c) {
            row[k] = sum(row[k], times(on_diagonal(a[q]), x_J[k][c]));
          } else {
            row[k] = sum(row[k], times(a[q], x_J[k][c]));
            columns[q][k] = sum(columns[q][k], times(conjugate(a[q]), x_i[k]));
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) rows[group][k][r] = row[k];
    __syncthreads();
    if (threadIdx.x < K * kResidualTile) {
      const int k = threadIdx.x / kResidualTile, rr = threadIdx.x % kResidualTile, ii = I * kResidualTile + rr;
      if (ii < n) {
        W total = rows[0][k][rr];
        for (int g = 1; g < kGroups; ++g) total = sum(total, rows[g][k][rr]);
        work[ii + (k * slots + J) * n] = total;  // slot J: tile (I, J)'s rows
      }
    }
    __syncthreads();
  }
  // The columns' shares: each column summed over the tile's 64 rows (two warps), in a fixed order.
  __shared__ W halves[2][K][kResidualTile];
  const int lane = threadIdx.x % 32, half = r / 32;
#pragma unroll
  for (int q = 0; q < kColumns; ++q)
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const W v = warp_sum(columns[q][k]);
      if (lane == 0) halves[half][k][c0 + q] = v;
    }
  __syncthreads();
  if (threadIdx.x < K * kResidualTile) {
    const int k = threadIdx.x / kResidualTile, c = threadIdx.x % kResidualTile, j = J * kResidualTile + c;
    if (j < n) work[j + (k * slots + tiles + blockIdx.y) * n] = sum(halves[0][k][c], halves[1][k][c]);
  }
}

// R_ik := B_ik - (the shares of row i, column k): the rows' shares of the tiles in tile row I, then
// the columns' shares of the chunks of tile column I, in that order.
template <class W>
__global__ void residual_sum_kernel(char uplo, int n, const W* __restrict__ work, int per_chunk, const W* B,
                                    long long ldb, W* R, long long ldr) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
  if (i >= n) return;
  const int tiles = residual_tiles(n), I = i / kResidualTile;
  const W* shares = work + k * residual_slots(tiles, per_chunk) * n;
  const int first = uplo == 'L' ? 0 : I, last = uplo == 'L' ? I : tiles - 1;
  W total = zero_of(W{});
  for (int J = first; J <= last; ++J) total = sum(total, shares[i + static_cast<long long>(J) * n]);
  const int stored = uplo == 'L' ? tiles - I : I + 1;
  const int chunks = (stored + per_chunk - 1) / per_chunk;
  for (int c = 0; c < chunks; ++c) total = sum(total, shares[i + static_cast<long long>(tiles + c) * n]);
  R[i + k * ldr] = sum(B[i + k * ldb], scaled(total, -1.0));
}

// Tiles per chunk: enough blocks of threads to fill the GPU several times over, few enough shares.
int residual_tiles_per_chunk(int n) {
  const long long tiles = residual_tiles(n), stored = tiles * (tiles + 1) / 2;
  return static_cast<int>(std::clamp<long long>(stored / 1024, 1, 16));
}

template <int K, class W>
void launch_residual_shares(char uplo, int n, const W* A, long long lda, const W* X, long long ldx, W* work,
                            cudaStream_t stream) {
  const int tiles = residual_tiles(n), per_chunk = residual_tiles_per_chunk(n);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((tiles + per_chunk - 1) / per_chunk));
  residual_shares_kernel<W, K><<<grid, ResidualShape<W, K>::kThreads, 0, stream>>>(uplo, n, A, lda, X, ldx,
                                                                                    per_chunk, work);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void symmetric_residual_as(char uplo, int n, int nrhs, const T* A, long long lda, const T* X, long long ldx,
                           const T* B, long long ldb, T* R, long long ldr, T* work, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0) return;
  if (nrhs > symmetric_residual_most_columns<T>())
    throw InvalidArgument("symmetric_residual: " + std::to_string(nrhs) + " columns, more than one pass takes (" +
                          std::to_string(symmetric_residual_most_columns<T>()) + ")");
  switch (nrhs) {
    case 1: launch_residual_shares<1>(uplo, n, wide(A), lda, wide(X), ldx, wide(work), stream); break;
    case 2: launch_residual_shares<2>(uplo, n, wide(A), lda, wide(X), ldx, wide(work), stream); break;
    case 3:
      if constexpr (symmetric_residual_most_columns<T>() >= 3)
        launch_residual_shares<3>(uplo, n, wide(A), lda, wide(X), ldx, wide(work), stream);
      break;
    default:
      if constexpr (symmetric_residual_most_columns<T>() >= 4)
        launch_residual_shares<4>(uplo, n, wide(A), lda, wide(X), ldx, wide(work), stream);
      break;
  }
  const dim3 grid(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(nrhs));
  residual_sum_kernel<<<grid, 256, 0, stream>>>(uplo, n, wide(work), residual_tiles_per_chunk(n), wide(B), ldb,
                                                wide(R), ldr);
  TESSERA_CUDA_CHECK_LAUNCH();
}

dim3 lower_tile_grid(int n) {
  const unsigned tiles = static_cast<unsigned>((n + kTile - 1) / kTile);
  return dim3(tiles, tiles);
}

dim3 column_grid(int n, int cols) { return dim3(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(cols)); }

template <class T, class S>
void scale_and_narrow_as(char uplo, int n, const T* A, long long lda, double* scale, S* As, long long lds,
                         double* row_sums, int* flags, cudaStream_t stream) {
  if (n <= 0) return;
  diagonal_scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(n, wide(A), lda, scale, flags);
  TESSERA_CUDA_CHECK_LAUNCH();
  TESSERA_CUDA_CHECK(cudaMemsetAsync(row_sums, 0, sizeof(double) * static_cast<std::size_t>(n), stream));
  narrow_kernel<<<lower_tile_grid(n), dim3(kTile, kTileRows), 0, stream>>>(uplo, n, wide(A), lda, scale,
                                                                            narrow_view(As), lds, row_sums, flags);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T, class S>
void narrow_scaled_as(int n, int nrhs, const double* scale, const T* R, long long ldr, S* Z, long long ldz, int* flags,
                      cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0) return;
  narrow_scaled_kernel<<<column_grid(n, nrhs), 256, 0, stream>>>(n, nrhs, scale, wide(R), ldr, narrow_view(Z), ldz,
                                                                  flags);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T, class S>
void widen_scaled_as(bool add, int n, int nrhs, const double* scale, const S* Z, long long ldz, T* X, long long ldx,
                     cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0) return;
  widen_scaled_kernel<<<column_grid(n, nrhs), 256, 0, stream>>>(add, n, nrhs, scale, narrow_view(Z), ldz, wide(X),
                                                                 ldx);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void largest_magnitudes_as(int n, int cols, const T* M, long long ldm, double* largest, cudaStream_t stream) {
  if (n <= 0 || cols <= 0) return;
  largest_magnitudes_kernel<<<cols, kReduceThreads, 0, stream>>>(n, wide(M), ldm, largest);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void mark_non_finite_columns_as(int n, int cols, const T* M, long long ldm, int* non_finite, cudaStream_t stream) {
  if (cols <= 0) return;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(non_finite, 0, sizeof(int) * static_cast<std::size_t>(cols), stream));
  if (n <= 0) return;
  mark_non_finite_kernel<<<column_grid(n, cols), 256, 0, stream>>>(n, cols, wide(M), ldm, non_finite);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scale_and_narrow(char uplo, int n, const double* A, long long lda, double* scale, float* As, long long lds,
                      double* row_sums, int* flags, cudaStream_t stream) {
  scale_and_narrow_as(uplo, n, A, lda, scale, As, lds, row_sums, flags, stream);
}
void scale_and_narrow(char uplo, int n, const std::complex<double>* A, long long lda, double* scale,
                      std::complex<float>* As, long long lds, double* row_sums, int* flags, cudaStream_t stream) {
  scale_and_narrow_as(uplo, n, A, lda, scale, As, lds, row_sums, flags, stream);
}

void narrow_scaled(int n, int nrhs, const double* scale, const double* R, long long ldr, float* Z, long long ldz,
                   int* flags, cudaStream_t stream) {
  narrow_scaled_as(n, nrhs, scale, R, ldr, Z, ldz, flags, stream);
}
void narrow_scaled(int n, int nrhs, const double* scale, const std::complex<double>* R, long long ldr,
                   std::complex<float>* Z, long long ldz, int* flags, cudaStream_t stream) {
  narrow_scaled_as(n, nrhs, scale, R, ldr, Z, ldz, flags, stream);
}

void widen_scaled(bool add, int n, int nrhs, const double* scale, const float* Z, long long ldz, double* X,
                  long long ldx, cudaStream_t stream) {
  widen_scaled_as(add, n, nrhs, scale, Z, ldz, X, ldx, stream);
}
void widen_scaled(bool add, int n, int nrhs, const double* scale, const std::complex<float>* Z, long long ldz,
                  std::complex<double>* X, long long ldx, cudaStream_t stream) {
  widen_scaled_as(add, n, nrhs, scale, Z, ldz, X, ldx, stream);
}

void symmetric_row_sums(char uplo, int n, const double* A, long long lda, double* sums, cudaStream_t stream) {
  if (n <= 0) return;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(double) * static_cast<std::size_t>(n), stream));
  row_sums_kernel<<<lower_tile_grid(n), dim3(kTile, kTileRows), 0, stream>>>(uplo, n, A, lda, sums);
  TESSERA_CUDA_CHECK_LAUNCH();
}

std::size_t symmetric_residual_workspace(int n, int nrhs) {
  if (n <= 0 || nrhs <= 0) return 0;
  return static_cast<std::size_t>(n) * static_cast<std::size_t>(nrhs) *
         static_cast<std::size_t>(residual_slots(residual_tiles(n), residual_tiles_per_chunk(n)));
}

void symmetric_residual(char uplo, int n, int nrhs, const double* A, long long lda, const double* X, long long ldx,
                        const double* B, long long ldb, double* R, long long ldr, double* work, cudaStream_t stream) {
  symmetric_residual_as(uplo, n, nrhs, A, lda, X, ldx, B, ldb, R, ldr, work, stream);
}
void symmetric_residual(char uplo, int n, int nrhs, const std::complex<double>* A, long long lda,
                        const std::complex<double>* X, long long ldx, const std::complex<double>* B, long long ldb,
                        std::complex<double>* R, long long ldr, std::complex<double>* work, cudaStream_t stream) {
  symmetric_residual_as(uplo, n, nrhs, A, lda, X, ldx, B, ldb, R, ldr, work, stream);
}

void largest_magnitudes(int n, int cols, const double* M, long long ldm, double* largest, cudaStream_t stream) {
  largest_magnitudes_as(n, cols, M, ldm, largest, stream);
}
void largest_magnitudes(int n, int cols, const std::complex<double>* M, long long ldm, double* largest,
                        cudaStream_t stream) {
  largest_magnitudes_as(n, cols, M, ldm, largest, stream);
}

void mark_non_finite_columns(int n, int cols, const double* M, long long ldm, int* non_finite, cudaStream_t stream) {
  mark_non_finite_columns_as(n, cols, M, ldm, non_finite, stream);
}
void mark_non_finite_columns(int n, int cols, const std::complex<double>* M, long long ldm, int* non_finite,
                             cudaStream_t stream) {
  mark_non_finite_columns_as(n, cols, M, ldm, non_finite, stream);
}

}  // namespace tessera::kernels::cuda

// ---- batches ---------------------------------------------------------------------------------------

namespace tessera::kernels::cuda {

namespace {

constexpr int kBatchThreads = 256;

// Threads for one matrix's rows: a power of two (block_max halves them) from a warp up to kBatchThreads.
unsigned batch_threads(int n) {
  int threads = 32;
  while (threads < n && threads < kBatchThreads) threads *= 2;
  return static_cast<unsigned>(threads);
}

// Entry (i, j) of the symmetric (Hermitian) A stored in its triangle uplo, for any i, j (a diagonal
// entry's real part).
template <class W>
__device__ W symmetric_entry(char uplo, const W* A, long long lda, int i, int j) {
  if (i == j) return on_diagonal(A[i + i * lda]);
  const bool stored = uplo == 'L' ? i > j : i < j;
  return stored ? A[i + j * lda] : conjugate(A[j + i * lda]);
}

// The block's largest of `value` (NaNs passed over), in every thread.
__device__ double block_max(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
  const double result = shared[0];
  __syncthreads();
  return result;
}

// A row per thread: the row's sum of |a_ij| over the whole symmetric matrix (the norm's), and the
// row's entries on and left of the diagonal scaled and narrowed into As's lower triangle. Each
// row's sum runs in one thread in a fixed order: the same bound every run.
template <class W, class N>
__global__ void batched_scale_and_narrow_kernel(char uplo, int n, const W* A, long long lda, long long strideA,
                                                double* scale, N* As, double* bound, int* state) {
  const long long k = blockIdx.x;
  const W* a = A + k * strideA;
  double* s = scale + k * n;
  N* as = As + k * static_cast<long long>(n) * n;
  __shared__ int flags;
  __shared__ double partial[kBatchThreads];
  if (threadIdx.x == 0) flags = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double d = real_part(a[i + i * lda]);
    const bool usable = d > 0 && d <= DBL_MAX;
    if (!usable) atomicOr(&flags, kDiagonalNotPositive);
    s[i] = usable ? 1.0 / sqrt(d) : 1.0;
  }
  __syncthreads();
  double largest_row = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    double row = 0;
    for (int j = 0; j < n; ++j) {
      const W v = symmetric_entry(uplo, a, lda, i, j);
      row += modulus(v);
      if (j > i) continue;
      const W scaled_v = scaled(v, s[i] * s[j]);
      if (overflows_single(scaled_v)) atomicOr(&flags, kScaledOverflow);
      as[i + static_cast<long long>(j) * n] = narrowed(scaled_v);
    }
    largest_row = fmax(largest_row, row);
  }
  const double norm = block_max(largest_row, partial);
  if (threadIdx.x == 0) {
    bound[k] = norm * DBL_EPSILON * sqrt(static_cast<double>(n));
    state[k] = (flags & kDiagonalNotPositive) ? kBatchSingleFailed
               : (flags & kScaledOverflow)    ? kBatchOverflowed
                                              : kBatchRefining;
  }
}

__global__ void batched_stop_failed_kernel(const int* info, int* state, int batch) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < batch && state[k] == kBatchRefining && info[k] != 0) state[k] = kBatchSingleFailed;
}

template <class W, class N>
__global__ void batched_narrow_scaled_kernel(int n, int nrhs, const double* scale, const W* V, long long ldv,
                                             long long strideV, N* Z, int* state) {
  const long long k = blockIdx.x;
  if (state[k] != kBatchRefining) return;
  const double* s = scale + k * n;
  const W* v = V + k * strideV;
  N* z = Z + k * static_cast<long long>(n) * nrhs;
  __shared__ int overflowed;
  if (threadIdx.x == 0) overflowed = 0;
  __syncthreads();
  for (int j = 0; j < nrhs; ++j)
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const W value = scaled(v[i + j * ldv], s[i]);
      if (overflows_single(value)) overflowed = 1;
      z[i + static_cast<long long>(j) * n] = narrowed(value);
    }
  __syncthreads();
  if (threadIdx.x == 0 && overflowed) state[k] = kBatchOverflowed;
}

template <class W, class N>
__global__ void batched_widen_scaled_kernel(bool add, int n, int nrhs, const double* scale, const N* Z, W* X,
                                            long long ldx, long long strideX, const int* state) {
  const long long k = blockIdx.x;
  if (state[k] != kBatchRefining) return;
  const double* s = scale + k * n;
  const N* z = Z + k * static_cast<long long>(n) * nrhs;
  W* x = X + k * strideX;
  for (int j = 0; j < nrhs; ++j)
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const W value = scaled(widened(z[i + static_cast<long long>(j) * n]), s[i]);
      x[i + j * ldx] = add ? sum(x[i + j * ldx], value) : value;
    }
}

// A row per thread: r_i := b_i - sum_j a_ij x_j, summed in a fixed order; then each column's test.
template <class W>
__global__ void batched_residual_test_kernel(char uplo, int n, int nrhs, const W* A, long long lda, long long strideA,
                                             const W* B, long long ldb, long long strideB, const W* X, long long ldx,
                                             long long strideX, W* R, const double* bound, int iteration, bool last,
                                             int* state, int* steps, int* refining) {
  const long long k = blockIdx.x;
  if (state[k] != kBatchRefining) return;
  const W* a = A + k * strideA;
  __shared__ double partial[kBatchThreads];
  __shared__ int non_finite[2];  // X's column, B's column
  bool converged = true, diverged = false;
  for (int j = 0; j < nrhs; ++j) {
    const W* b = B + k * strideB + j * ldb;
    const W* x = X + k * strideX + j * ldx;
    W* r = R + k * static_cast<long long>(n) * nrhs + static_cast<long long>(j) * n;
    if (threadIdx.x < 2) non_finite[threadIdx.x] = 0;
    __syncthreads();
    double largest_r = 0, largest_x = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      W total = zero_of(W{});
      for (int c = 0; c < n; ++c) total = sum(total, times(symmetric_entry(uplo, a, lda, i, c), x[c]));
      const W residual = sum(b[i], scaled(total, -1.0));
      r[i] = residual;
      largest_r = fmax(largest_r, picked_magnitude(residual));
      largest_x = fmax(largest_x, picked_magnitude(x[i]));
      if (!is_finite(x[i])) non_finite[0] = 1;
      if (!is_finite(b[i])) non_finite[1] = 1;
    }
    double max_r = block_max(largest_r, partial);
    double max_x = block_max(largest_x, partial);
    // IxAMAX keeps a NaN only where it comes first.
    if (isnan(picked_magnitude(r[0]))) max_r = picked_magnitude(r[0]);
    if (isnan(picked_magnitude(x[0]))) max_x = picked_magnitude(x[0]);
    if (max_r > max_x * bound[k]) converged = false;
    if (non_finite[0] && !non_finite[1]) diverged = true;
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (diverged) {
    state[k] = kBatchNotConverged;
  } else if (converged) {
    state[k] = kBatchConverged;
    steps[k] = iteration;
  } else if (last) {
    state[k] = kBatchNotConverged;
  } else {
    atomicAdd(refining, 1);
  }
}

template <class W>
__global__ void batched_copy_selected_kernel(int n, int nrhs, const W* B, long long ldb, long long strideB, W* X,
                                             long long ldx, long long strideX, const int* which, const int* info) {
  if (info[blockIdx.x] != 0) return;
  const long long k = which ? which[blockIdx.x] : blockIdx.x;
  for (int j = 0; j < nrhs; ++j)
    for (int i = threadIdx.x; i < n; i += blockDim.x) X[k * strideX + i + j * ldx] = B[k * strideB + i + j * ldb];
}

template <class T, class S>
void batched_scale_and_narrow_as(char uplo, int n, const T* A, long long lda, long long strideA, double* scale, S* As,
                                 double* bound, int* state, int batch, cudaStream_t stream) {
  if (n <= 0 || batch <= 0) return;
  batched_scale_and_narrow_kernel<<<batch, batch_threads(n), 0, stream>>>(uplo, n, wide(A), lda, strideA, scale,
                                                                          narrow_view(As), bound, state);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T, class S>
void batched_narrow_scaled_as(int n, int nrhs, const double* scale, const T* V, long long ldv, long long strideV, S* Z,
                              int* state, int batch, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0 || batch <= 0) return;
  batched_narrow_scaled_kernel<<<batch, batch_threads(n), 0, stream>>>(n, nrhs, scale, wide(V), ldv, strideV,
                                                                       narrow_view(Z), state);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T, class S>
void batched_widen_scaled_as(bool add, int n, int nrhs, const double* scale, const S* Z, T* X, long long ldx,
                             long long strideX, const int* state, int batch, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0 || batch <= 0) return;
  batched_widen_scaled_kernel<<<batch, batch_threads(n), 0, stream>>>(add, n, nrhs, scale, narrow_view(Z), wide(X), ldx,
                                                                      strideX, state);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void batched_residual_test_as(char uplo, int n, int nrhs, const T* A, long long lda, long long strideA, const T* B,
                              long long ldb, long long strideB, const T* X, long long ldx, long long strideX, T* R,
                              const double* bound, int iteration, bool last, int* state, int* steps, int* refining,
                              int batch, cudaStream_t stream) {
  TESSERA_CUDA_CHECK(cudaMemsetAsync(refining, 0, sizeof(int), stream));
  if (n <= 0 || nrhs <= 0 || batch <= 0) return;
  batched_residual_test_kernel<<<batch, batch_threads(n), 0, stream>>>(uplo, n, nrhs, wide(A), lda, strideA, wide(B),
                                                                       ldb, strideB, wide(X), ldx, strideX, wide(R),
                                                                       bound, iteration, last, state, steps, refining);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void batched_copy_selected_as(int n, int nrhs, const T* B, long long ldb, long long strideB, T* X, long long ldx,
                              long long strideX, const int* which, const int* info, int count, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0 || count <= 0) return;
  batched_copy_selected_kernel<<<count, batch_threads(n), 0, stream>>>(n, nrhs, wide(B), ldb, strideB, wide(X), ldx,
                                                                       strideX, which, info);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void batched_scale_and_narrow(char uplo, int n, const double* A, long long lda, long long strideA, double* scale,
                              float* As, double* bound, int* state, int batch, cudaStream_t stream) {
  batched_scale_and_narrow_as(uplo, n, A, lda, strideA, scale, As, bound, state, batch, stream);
}
void batched_scale_and_narrow(char uplo, int n, const std::complex<double>* A, long long lda, long long strideA,
                              double* scale, std::complex<float>* As, double* bound, int* state, int batch,
                              cudaStream_t stream) {
  batched_scale_and_narrow_as(uplo, n, A, lda, strideA, scale, As, bound, state, batch, stream);
}

void batched_stop_failed_factorizations(const int* info, int* state, int batch, cudaStream_t stream) {
  if (batch <= 0) return;
  batched_stop_failed_kernel<<<(batch + 255) / 256, 256, 0, stream>>>(info, state, batch);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void batched_narrow_scaled(int n, int nrhs, const double* scale, const double* V, long long ldv, long long strideV,
                           float* Z, int* state, int batch, cudaStream_t stream) {
  batched_narrow_scaled_as(n, nrhs, scale, V, ldv, strideV, Z, state, batch, stream);
}
void batched_narrow_scaled(int n, int nrhs, const double* scale, const std::complex<double>* V, long long ldv,
                           long long strideV, std::complex<float>* Z, int* state, int batch, cudaStream_t stream) {
  batched_narrow_scaled_as(n, nrhs, scale, V, ldv, strideV, Z, state, batch, stream);
}

void batched_widen_scaled(bool add, int n, int nrhs, const double* scale, const float* Z, double* X, long long ldx,
                          long long strideX, const int* state, int batch, cudaStream_t stream) {
  batched_widen_scaled_as(add, n, nrhs, scale, Z, X, ldx, strideX, state, batch, stream);
}
void batched_widen_scaled(bool add, int n, int nrhs, const double* scale, const std::complex<float>* Z,
                          std::complex<double>* X, long long ldx, long long strideX, const int* state, int batch,
                          cudaStream_t stream) {
  batched_widen_scaled_as(add, n, nrhs, scale, Z, X, ldx, strideX, state, batch, stream);
}

void batched_residual_test(char uplo, int n, int nrhs, const double* A, long long lda, long long strideA,
                           const double* B, long long ldb, long long strideB, const double* X, long long ldx,
                           long long strideX, double* R, const double* bound, int iteration, bool last, int* state,
                           int* steps, int* refining, int batch, cudaStream_t stream) {
  batched_residual_test_as(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, R, bound, iteration, last,
                           state, steps, refining, batch, stream);
}
void batched_residual_test(char uplo, int n, int nrhs, const std::complex<double>* A, long long lda, long long strideA,
                           const std::complex<double>* B, long long ldb, long long strideB,
                           const std::complex<double>* X, long long ldx, long long strideX, std::complex<double>* R,
                           const double* bound, int iteration, bool last, int* state, int* steps, int* refining,
                           int batch, cudaStream_t stream) {
  batched_residual_test_as(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, R, bound, iteration, last,
                           state, steps, refining, batch, stream);
}

void batched_copy_selected(int n, int nrhs, const double* B, long long ldb, long long strideB, double* X, long long ldx,
                           long long strideX, const int* which, const int* info, int count, cudaStream_t stream) {
  batched_copy_selected_as(n, nrhs, B, ldb, strideB, X, ldx, strideX, which, info, count, stream);
}
void batched_copy_selected(int n, int nrhs, const std::complex<double>* B, long long ldb, long long strideB,
                           std::complex<double>* X, long long ldx, long long strideX, const int* which, const int* info,
                           int count, cudaStream_t stream) {
  batched_copy_selected_as(n, nrhs, B, ldb, strideB, X, ldx, strideX, which, info, count, stream);
}

}  // namespace tessera::kernels::cuda
