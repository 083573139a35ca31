#include "refinement.hpp"

#include <cuComplex.h>

#include <cfloat>
#include <cmath>
#include <type_traits>

#include "check.hpp"

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
