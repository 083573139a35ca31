#include "refinement.hpp"

#include <cfloat>
#include <cmath>

#include "check.hpp"

namespace tessera::kernels::cuda {

namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: each loads kTile / kTileRows rows

// tile[y][x] := value(I * 32 + x, J * 32 + y) of the symmetric A stored in its triangle uplo, for
// (i, j) on or below the diagonal and inside the matrix; 0 elsewhere. Loads are coalesced either
// way: an upper A's tile is read along its stored columns and transposed through shared memory.
__device__ void load_lower_tile(char uplo, int n, const double* A, long long lda, int I, int J,
                                double (&tile)[kTile][kTile + 1]) {
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    if (uplo == 'L') {
      const int i = I * kTile + threadIdx.x, j = J * kTile + r;
      tile[r][threadIdx.x] = (i < n && j < n && i >= j) ? A[i + j * lda] : 0.0;
    } else {
      // value(i, j) = A(j, i): consecutive threads walk A's column i down its rows j.
      const int j = J * kTile + threadIdx.x, i = I * kTile + r;
      tile[threadIdx.x][r] = (i < n && j < n && i >= j) ? A[j + i * lda] : 0.0;
    }
  }
  __syncthreads();
}

__device__ void flag_overflow(double v, int* flags) {
  if (fabs(v) > FLT_MAX) atomicOr(flags, kScaledOverflow);  // false for a NaN, as in xLAG2S
}

__global__ void diagonal_scale_kernel(int n, const double* A, long long lda, double* scale, int* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double a = A[i + i * lda];
  const bool usable = a > 0 && a <= DBL_MAX;
  if (!usable) atomicOr(flags, kDiagonalNotPositive);
  scale[i] = usable ? 1.0 / sqrt(a) : 1.0;
}

// Adds the tile's share of each row's sum of |a_ij| over the symmetric matrix: the rows of the
// tile (entries on and left of the diagonal), and by symmetry the rows of its columns.
__device__ void add_row_sums(int n, int I, int J, const double (&tile)[kTile][kTile + 1], double* sums) {
  const int x = threadIdx.x;
  if (threadIdx.y == 0) {
    double s = 0;
    for (int y = 0; y < kTile; ++y) s += fabs(tile[y][x]);
    if (I * kTile + x < n) atomicAdd(&sums[I * kTile + x], s);
  } else if (threadIdx.y == 1) {
    double s = 0;
    for (int y = 0; y < kTile; ++y)
      if (I * kTile + y != J * kTile + x) s += fabs(tile[x][y]);
    if (J * kTile + x < n) atomicAdd(&sums[J * kTile + x], s);
  }
}

__global__ void narrow_kernel(char uplo, int n, const double* A, long long lda, const double* scale, float* As,
                              long long lds, double* sums, int* flags) {
  const int I = blockIdx.x, J = blockIdx.y;
  if (I < J) return;
  __shared__ double tile[kTile][kTile + 1];
  load_lower_tile(uplo, n, A, lda, I, J, tile);
  const int i = I * kTile + threadIdx.x;
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int j = J * kTile + r;
    if (i >= n || j >= n || i < j) continue;
    const double v = tile[r][threadIdx.x] * scale[i] * scale[j];
    flag_overflow(v, flags);
    As[i + j * lds] = static_cast<float>(v);
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

__global__ void narrow_scaled_kernel(int n, int nrhs, const double* scale, const double* R, long long ldr, float* Z,
                                     long long ldz, int* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= n || j >= nrhs) return;
  const double v = scale[i] * R[i + j * ldr];
  flag_overflow(v, flags);
  Z[i + j * ldz] = static_cast<float>(v);
}

__global__ void widen_scaled_kernel(bool add, int n, int nrhs, const double* scale, const float* Z, long long ldz,
                                    double* X, long long ldx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= n || j >= nrhs) return;
  const double v = scale[i] * static_cast<double>(Z[i + j * ldz]);
  X[i + j * ldx] = add ? X[i + j * ldx] + v : v;
}

constexpr int kReduceThreads = 256;

__global__ void largest_magnitudes_kernel(int n, const double* M, long long ldm, double* largest) {
  const double* column = M + blockIdx.x * ldm;
  double m = 0;
  for (int i = threadIdx.x; i < n; i += kReduceThreads) m = fmax(m, fabs(column[i]));  // fmax passes NaNs over
  __shared__ double partial[kReduceThreads];
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int stride = kReduceThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmax(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) largest[blockIdx.x] = isnan(column[0]) ? column[0] : partial[0];
}

__global__ void mark_non_finite_kernel(int n, int cols, const double* M, long long ldm, int* non_finite) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && j < cols && !isfinite(M[i + j * ldm])) non_finite[j] = 1;  // any writer writes 1
}

dim3 lower_tile_grid(int n) {
  const unsigned tiles = static_cast<unsigned>((n + kTile - 1) / kTile);
  return dim3(tiles, tiles);
}

dim3 column_grid(int n, int cols) { return dim3(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(cols)); }

}  // namespace

void scale_and_narrow(char uplo, int n, const double* A, long long lda, double* scale, float* As, long long lds,
                      double* row_sums, int* flags, cudaStream_t stream) {
  if (n <= 0) return;
  diagonal_scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(n, A, lda, scale, flags);
  TESSERA_CUDA_CHECK_LAUNCH();
  TESSERA_CUDA_CHECK(cudaMemsetAsync(row_sums, 0, sizeof(double) * static_cast<std::size_t>(n), stream));
  narrow_kernel<<<lower_tile_grid(n), dim3(kTile, kTileRows), 0, stream>>>(uplo, n, A, lda, scale, As, lds, row_sums,
                                                                            flags);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void narrow_scaled(int n, int nrhs, const double* scale, const double* R, long long ldr, float* Z, long long ldz,
                   int* flags, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0) return;
  narrow_scaled_kernel<<<column_grid(n, nrhs), 256, 0, stream>>>(n, nrhs, scale, R, ldr, Z, ldz, flags);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void widen_scaled(bool add, int n, int nrhs, const double* scale, const float* Z, long long ldz, double* X,
                  long long ldx, cudaStream_t stream) {
  if (n <= 0 || nrhs <= 0) return;
  widen_scaled_kernel<<<column_grid(n, nrhs), 256, 0, stream>>>(add, n, nrhs, scale, Z, ldz, X, ldx);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void symmetric_row_sums(char uplo, int n, const double* A, long long lda, double* sums, cudaStream_t stream) {
  if (n <= 0) return;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(double) * static_cast<std::size_t>(n), stream));
  row_sums_kernel<<<lower_tile_grid(n), dim3(kTile, kTileRows), 0, stream>>>(uplo, n, A, lda, sums);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void largest_magnitudes(int n, int cols, const double* M, long long ldm, double* largest, cudaStream_t stream) {
  if (n <= 0 || cols <= 0) return;
  largest_magnitudes_kernel<<<cols, kReduceThreads, 0, stream>>>(n, M, ldm, largest);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void mark_non_finite_columns(int n, int cols, const double* M, long long ldm, int* non_finite, cudaStream_t stream) {
  if (cols <= 0) return;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(non_finite, 0, sizeof(int) * static_cast<std::size_t>(cols), stream));
  if (n <= 0) return;
  mark_non_finite_kernel<<<column_grid(n, cols), 256, 0, stream>>>(n, cols, M, ldm, non_finite);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace tessera::kernels::cuda
