#include "matrix_utils.hpp"
#include "graph_nodes.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "batched_scalar.cuh"
#include "check.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {

namespace {

template <class T>
__global__ void copy_lower_kernel(int m, int n, const T* src, int lds, T* dst, int ldd) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < m && j < n) dst[i + static_cast<long>(j) * ldd] = i >= j ? src[i + static_cast<long>(j) * lds] : T{};
}

constexpr int kTransposeBlock = 32;
constexpr int kTransposeRows = 8;  // threads per block: kTransposeBlock x kTransposeRows

__host__ __device__ constexpr bool in_triangle(Triangle t, int i, int j) {
  return t == Triangle::lower ? i >= j : i <= j;
}

// One 32 x 32 block of dst per thread block (block row blockIdx.x, block column blockIdx.y), through
// shared memory so that both the reads of src and the writes of dst are along columns.
template <class T>
__global__ void transpose_triangle_kernel(Triangle to, int n, const T* src, int lds, long long src_stride, T* dst,
                                          int ldd, long long dst_stride) {
  src += blockIdx.z * src_stride;  // matrix blockIdx.z of a stack
  dst += blockIdx.z * dst_stride;
  const int row0 = static_cast<int>(blockIdx.x) * kTransposeBlock;
  const int col0 = static_cast<int>(blockIdx.y) * kTransposeBlock;
  // Blocks wholly outside the triangle have nothing to do.
  if (!in_triangle(to, row0 + (to == Triangle::lower ? kTransposeBlock - 1 : 0),
                   col0 + (to == Triangle::lower ? 0 : kTransposeBlock - 1)))
    return;
  __shared__ T block[kTransposeBlock][kTransposeBlock + 1];
  const int tx = static_cast<int>(threadIdx.x);
  // Read src(col0 + tx, row0 + r), the element that goes to dst(row0 + r, col0 + tx).
  for (int r = static_cast<int>(threadIdx.y); r < kTransposeBlock; r += kTransposeRows) {
    const int i = row0 + r, j = col0 + tx;
    if (i < n && j < n && in_triangle(to, i, j)) block[r][tx] = batched_detail::conj_of(src[j + static_cast<long long>(i) * lds]);
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    if (i < n && j < n && in_triangle(to, i, j)) dst[i + static_cast<long long>(j) * ldd] = block[tx][c];
  }
}

__device__ __forceinline__ bool is_zero(float x) { return x == 0.0f; }
__device__ __forceinline__ bool is_zero(double x) { return x == 0.0; }
template <class R>
__device__ __forceinline__ bool is_zero(batched_detail::DeviceComplex<R> x) {
  return x.re == R(0) && x.im == R(0);
}

// One 32 x 32 block of X per thread block, as transpose_triangle_kernel moves one, after every
// block has read the factor's diagonal for a zero: then the blocks on and above X's diagonal take
// the transposed lower triangle, or every block fills itself with NaN.
template <class T>
__global__ void finish_inverse_kernel(int n, const T* factor, long long diagonal_stride, T* X, int ldx, int* info) {
  __shared__ int first_zero;  // 0-based; n: none
  const int thread = static_cast<int>(threadIdx.x + threadIdx.y * blockDim.x);
  if (thread == 0) first_zero = n;
  __syncthreads();
  for (int j = thread; j < n; j += static_cast<int>(blockDim.x * blockDim.y))
    if (is_zero(factor[j * diagonal_stride])) atomicMin(&first_zero, j);
  __syncthreads();
  const int failed = first_zero < n ? first_zero + 1 : 0;
  if (info && blockIdx.x == 0 && blockIdx.y == 0 && thread == 0) *info = failed;
  const int row0 = static_cast<int>(blockIdx.x) * kTransposeBlock;
  const int col0 = static_cast<int>(blockIdx.y) * kTransposeBlock;
  const int tx = static_cast<int>(threadIdx.x);
  if (failed) {
    using R = batched_detail::RealPartOf<T>;
    T nan;
    if constexpr (std::is_floating_point_v<T>)
      nan = R(NAN);
    else
      nan = T(R(NAN), R(NAN));
    for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
      const int i = row0 + tx, j = col0 + c;
      if (i < n && j < n) X[i + static_cast<long long>(j) * ldx] = nan;
    }
    return;
  }
  if (row0 > col0 + kTransposeBlock - 1) return;  // wholly below the diagonal: kept
  __shared__ T block[kTransposeBlock][kTransposeBlock + 1];
  // Read X(col0 + tx, row0 + r), the element that goes to X(row0 + r, col0 + tx).
  for (int r = static_cast<int>(threadIdx.y); r < kTransposeBlock; r += kTransposeRows) {
    const int i = row0 + r, j = col0 + tx;
    if (i < n && j < n && i <= j) block[r][tx] = batched_detail::conj_of(X[j + static_cast<long long>(i) * ldx]);
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    if (i < n && j < n && i <= j)
      X[i + static_cast<long long>(j) * ldx] = i == j ? T(batched_detail::real_of(block[tx][c])) : block[tx][c];
  }
}

// One 32 x 32 block of dst per thread block. A block above the diagonal is zeros and reads nothing.
// Source elements are read with consecutive threads on consecutive addresses: down a column when
// row_stride is 1, else along a row (contiguous when col_stride is 1), and written down dst's
// columns.
template <class T>
__global__ void load_lower_kernel(int n, const T* __restrict__ src, long long row_stride, long long col_stride,
                                  long long src_stride, T* __restrict__ dst, int ldd, long long dst_stride,
                                  bool conjugate) {
  src += blockIdx.z * src_stride;  // matrix blockIdx.z of a stack
  dst += blockIdx.z * dst_stride;
  const int row0 = static_cast<int>(blockIdx.x) * kTransposeBlock;
  const int col0 = static_cast<int>(blockIdx.y) * kTransposeBlock;
  const int tx = static_cast<int>(threadIdx.x);
  if (row0 + kTransposeBlock - 1 < col0) {  // wholly above the diagonal
    for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
      const int i = row0 + tx, j = col0 + c;
      if (i < n && j < n) dst[i + static_cast<long long>(j) * ldd] = T(0);
    }
    return;
  }
  __shared__ T block[kTransposeBlock][kTransposeBlock + 1];  // block[r][c]: element (row0 + r, col0 + c)
  const bool down_columns = row_stride == 1;
  for (int k = static_cast<int>(threadIdx.y); k < kTransposeBlock; k += kTransposeRows) {
    const int r = down_columns ? tx : k, c = down_columns ? k : tx;
    const int i = row0 + r, j = col0 + c;
    if (i < n && j < n && i >= j) block[r][c] = batched_detail::conj_if(conjugate, src[i * row_stride + j * col_stride]);
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    if (i < n && j < n) dst[i + static_cast<long long>(j) * ldd] = i >= j ? block[tx][c] : T(0);
  }
}

constexpr int kBlockCopiesPerLaunch = 64;
constexpr int kBlockCopyThreads = 256;
constexpr int kBlockCopyColumnBlocks = 32;  // thread blocks per copy, each taking every 32nd column

// The copies of one launch, passed by value (64 x 40 bytes, within a kernel's parameter space).
template <class T>
struct BlockCopyBatch {
  BlockCopy<T> copy[kBlockCopiesPerLaunch];
};

template <class T>
struct Vector16;
template <>
struct Vector16<double> {
  using type = double2;
};
template <>
struct Vector16<float> {
  using type = float4;
};

// Rows [first, m) of column j, V elements (16 bytes) at a time from row first rounded down to a
// multiple of V; rows before `first` are not written.
template <class T>
__device__ void copy_column_vectors(const BlockCopy<T>& c, int j, int first) {
  using V = typename Vector16<T>::type;
  constexpr int width = static_cast<int>(sizeof(V) / sizeof(T));
  const T* src = c.src + static_cast<long long>(j) * c.lds;
  T* dst = c.dst + static_cast<long long>(j) * c.ldd;
  const int start = first / width * width;
  for (int i = start + static_cast<int>(threadIdx.x) * width; i < c.m; i += kBlockCopyThreads * width) {
    if (i >= first && i + width <= c.m) {
      *reinterpret_cast<V*>(dst + i) = *reinterpret_cast<const V*>(src + i);
    } else {
      for (int k = i; k < i + width && k < c.m; ++k)
        if (k >= first) dst[k] = src[k];
    }
  }
}

// Thread block (x, y) copies columns x, x + 32, ... of copy y.
template <class T>
__global__ void copy_blocks_kernel(const BlockCopyBatch<T> batch) {
  const BlockCopy<T>& c = batch.copy[blockIdx.y];
  constexpr int width = static_cast<int>(16 / sizeof(T));
  const bool vectors = reinterpret_cast<unsigned long long>(c.src) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(c.dst) % 16 == 0 && c.lds % width == 0 &&
                       c.ldd % width == 0;
  for (int j = static_cast<int>(blockIdx.x); j < c.n; j += static_cast<int>(gridDim.x)) {
    const int first = c.lower_only ? j : 0;
    if (vectors) {
      copy_column_vectors(c, j, first);
    } else {
      for (int i = first + static_cast<int>(threadIdx.x); i < c.m; i += kBlockCopyThreads)
        c.dst[i + static_cast<long long>(j) * c.ldd] = c.src[i + static_cast<long long>(j) * c.lds];
    }
  }
}

constexpr int kInfoThreads = 1024;

template <class T>
__global__ void strided_pointers_kernel(T* base, long long stride, int batch, T** pointers) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < batch) pointers[k] = base + k * stride;
}

// One thread block per matrix of a stack (matrix blockIdx.x at A + blockIdx.x * stride).
template <class T>
__global__ void check_potrf_info_kernel(int n, const T* A, int ld, long long stride, int* info) {
  A += blockIdx.x * stride;
  info += blockIdx.x;
  __shared__ int first;  // 0-based column of the first failing diagonal entry, n if none
  const int reported = *info;
  if (reported < 0) return;
  if (threadIdx.x == 0) first = n;
  __syncthreads();
  const int factored = reported > 0 ? reported - 1 : n;
  for (int j = static_cast<int>(threadIdx.x); j < factored; j += kInfoThreads)
    if (!(A[j + static_cast<long long>(j) * ld] > T(0))) {
      atomicMin(&first, j);
      break;  // the thread's later columns come after this one
    }
  __syncthreads();
  if (threadIdx.x == 0 && first < n) *info = first + 1;
}

// store_factor_node's LAPACK info, by the whole thread block: cuSOLVER's, or the first column
// before the one it reports whose diagonal entry of W is not positive.
template <class T>
__device__ void store_potrf_info(int n, const T* W, int ldw, const int* solver_info, int* info) {
  __shared__ int first;  // 0-based column of the first failing diagonal entry, n if none
  const int thread = static_cast<int>(threadIdx.x + threadIdx.y * blockDim.x);
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int reported = *solver_info;
  if (thread == 0) first = n;
  __syncthreads();
  const int factored = reported < 0 ? 0 : reported > 0 ? reported - 1 : n;
  for (int j = thread; j < factored; j += threads)
    if (!(batched_detail::real_of(W[j + static_cast<long long>(j) * ldw]) > 0)) {
      atomicMin(&first, j);
      break;  // the thread's later columns come after this one
    }
  __syncthreads();
  if (thread == 0) *info = reported >= 0 && first < n ? first + 1 : reported;
}

// One 32 x 32 block of L per thread block (block row blockIdx.x, block column blockIdx.y), read
// through shared memory along W's columns: L's lower triangle is W's, its upper one (`upper`) W's
// lower one conjugated and transposed; zeros elsewhere where `zero_other`. Block (0, 0) also
// writes the info.
template <class T>
__global__ void store_factor_kernel(int n, const T* __restrict__ W, int ldw, const int* solver_info,
                                    T* __restrict__ L, int ldl, bool upper, bool zero_other, int* info) {
  if (blockIdx.x == 0 && blockIdx.y == 0) store_potrf_info(n, W, ldw, solver_info, info);
  const int row0 = static_cast<int>(blockIdx.x) * kTransposeBlock;
  const int col0 = static_cast<int>(blockIdx.y) * kTransposeBlock;
  const int tx = static_cast<int>(threadIdx.x);
  const Triangle kept = upper ? Triangle::upper : Triangle::lower;
  __shared__ T block[kTransposeBlock][kTransposeBlock + 1];  // block[r][c]: L's element (row0 + r, col0 + c)
  for (int k = static_cast<int>(threadIdx.y); k < kTransposeBlock; k += kTransposeRows) {
    const int r = upper ? k : tx, c = upper ? tx : k;
    const int i = row0 + r, j = col0 + c;
    if (i < n && j < n && in_triangle(kept, i, j))
      block[r][c] = upper ? batched_detail::conj_of(W[j + static_cast<long long>(i) * ldw])
                          : W[i + static_cast<long long>(j) * ldw];
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    const bool in_kept = in_triangle(kept, i, j);
    if (i < n && j < n && (in_kept || zero_other))
      L[i + static_cast<long long>(j) * ldl] = in_kept ? block[tx][c] : T(0);
  }
}

constexpr int kLogThreads = 256;

// One thread block: 2 sum log(A(j, j)) over the n diagonal entries, in double, in a fixed order.
template <class T>
__global__ void log_diagonal_sum_kernel(int n, const T* A, int ld, double* sum) {
  __shared__ double partial[kLogThreads];
  double own = 0.0;
  for (int j = static_cast<int>(threadIdx.x); j < n; j += kLogThreads)
    own += log(static_cast<double>(A[j + static_cast<long long>(j) * ld]));
  partial[threadIdx.x] = own;
  __syncthreads();
  for (int half = kLogThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = 2.0 * partial[0];
}

// *first := the 1-based position of the first exactly zero diagonal entry of A, or 0; *first
// holds n + 1 on entry. An entry is `Parts` consecutive reals (2 for a complex one), zero when
// every part is.
template <class R, int Parts>
__global__ void first_zero_diagonal_kernel(int n, const R* A, int ld, int* first) {
  for (int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); j < n; j += gridDim.x * blockDim.x) {
    const R* entry = A + (j + static_cast<long long>(j) * ld) * Parts;
    bool zero = true;
    for (int p = 0; p < Parts; ++p) zero = zero && entry[p] == R(0);
    if (zero) atomicMin(first, j + 1);
  }
}

__global__ void none_found_is_zero_kernel(int n, int* first) {
  if (*first == n + 1) *first = 0;
}

__global__ void update_triangle_kernel(Triangle t, int n, float alpha, const float* W, int ldw, float beta, float* C,
                                       int ldc) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i >= n || !in_triangle(t, i, j)) return;
  float& c = C[i + static_cast<long>(j) * ldc];
  c = alpha * W[i + static_cast<long>(j) * ldw] + beta * c;
}

}  // namespace

void update_triangle(Triangle t, int n, float alpha, const float* W, int ldw, float beta, float* C, int ldc,
                     cudaStream_t stream) {
  if (n <= 0) return;
  update_triangle_kernel<<<dim3(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(n)), 256, 0, stream>>>(
      t, n, alpha, W, ldw, beta, C, ldc);
  TESSERA_CUDA_CHECK_LAUNCH();
}

namespace {

template <class Half>
__device__ Half round_from_float(float x);
template <>
__device__ __half round_from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 round_from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Each thread rounds two neighbours of a column and stores them as one 4-byte pair when dst's
// alignment allows (the element rows and ldd even), one at a time otherwise.
template <class Half>
__global__ void round_to_16bit_kernel(int m, int n, const float* src, int lds, Half* dst, int ldd) {
  const int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  const int j = blockIdx.y;
  if (i >= m || j >= n) return;
  const float* s = src + i + static_cast<long>(j) * lds;
  Half* d = dst + i + static_cast<long>(j) * ldd;
  const Half first = round_from_float<Half>(s[0]);
  if (i + 1 >= m) {
    d[0] = first;
    return;
  }
  const Half second = round_from_float<Half>(s[1]);
  if ((ldd % 2) == 0 && (reinterpret_cast<std::uintptr_t>(d) % 4) == 0) {
    struct alignas(4) Pair {
      Half a, b;
    };
    *reinterpret_cast<Pair*>(d) = Pair{first, second};
  } else {
    d[0] = first;
    d[1] = second;
  }
}

template <class Half>
void round_to(int m, int n, const float* src, int lds, void* dst, int ldd, cudaStream_t stream) {
  constexpr int threads = 256;
  const dim3 grid(static_cast<unsigned>((m + 2 * threads - 1) / (2 * threads)), static_cast<unsigned>(n));
  round_to_16bit_kernel<Half><<<grid, threads, 0, stream>>>(m, n, src, lds, static_cast<Half*>(dst), ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void round_to_16bit(Float16Format format, int m, int n, const float* src, int lds, void* dst, int ldd,
                    cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  if (format == Float16Format::fp16)
    round_to<__half>(m, n, src, lds, dst, ldd, stream);
  else
    round_to<__nv_bfloat16>(m, n, src, lds, dst, ldd, stream);
}

template <int Parts, class R>
void first_zero_diagonal_of_parts(int n, const R* A, int ld, int* first, cudaStream_t stream) {
  const int start = n + 1;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(first, &start, sizeof(int), cudaMemcpyHostToDevice, stream));
  if (n > 0) {
    constexpr int threads = 256;
    const int blocks = std::min((n + threads - 1) / threads, 1024);
    first_zero_diagonal_kernel<R, Parts><<<blocks, threads, 0, stream>>>(n, A, ld, first);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
  none_found_is_zero_kernel<<<1, 1, 0, stream>>>(n, first);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void first_zero_diagonal(int n, const T* A, int ld, int* first, cudaStream_t stream) {
  first_zero_diagonal_of_parts<1>(n, A, ld, first, stream);
}

template <class R>
void first_zero_diagonal(int n, const std::complex<R>* A, int ld, int* first, cudaStream_t stream) {
  first_zero_diagonal_of_parts<2>(n, reinterpret_cast<const R*>(A), ld, first, stream);
}

template <class T>
void log_diagonal_sum(int n, const T* A, int ld, double* sum, cudaStream_t stream) {
  log_diagonal_sum_kernel<<<1, kLogThreads, 0, stream>>>(n, A, ld, sum);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// A grid's y and z extents are at most 65535 blocks: a stack goes in launches of that many.
constexpr int kMaxStackPerLaunch = 65535;

template <class T>
void check_potrf_info(int n, const T* A, int ld, int* info, cudaStream_t stream) {
  check_potrf_info_batched(n, A, ld, 0, 1, info, stream);
}

template <class T>
void check_potrf_info_batched(int n, const T* A, int ld, long long stride, int batch, int* info, cudaStream_t stream) {
  if (n <= 0) return;
  for (int first = 0; first < batch; first += kMaxStackPerLaunch) {
    const unsigned count = static_cast<unsigned>(std::min(kMaxStackPerLaunch, batch - first));
    check_potrf_info_kernel<<<count, kInfoThreads, 0, stream>>>(n, A + first * stride, ld, stride, info + first);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
}

template <class T>
void strided_pointers(T* base, long long stride, int batch, T** pointers, cudaStream_t stream) {
  if (batch <= 0) return;
  constexpr int threads = 256;
  using batched_detail::device_view;
  strided_pointers_kernel<<<(batch + threads - 1) / threads, threads, 0, stream>>>(
      device_view(base), stride, batch, reinterpret_cast<batched_detail::DeviceScalar<T>**>(pointers));
  TESSERA_CUDA_CHECK_LAUNCH();
}

namespace {

template <class T>
__global__ void set_identity_kernel(int m, int n, T* A, int ld, long long stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < m && j < n) A[blockIdx.z * stride + i + static_cast<long>(j) * ld] = i == j ? T(1) : T(0);
}

}  // namespace

template <class T>
void set_identity_batched(int m, int n, T* A, int ld, long long stride, int batch, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  using batched_detail::DeviceScalar;
  set_identity_kernel<DeviceScalar<T>><<<dim3((m + 127) / 128, n, batch), 128, 0, stream>>>(
      m, n, batched_detail::device_view(A), ld, stride);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void set_identity(int m, int n, T* A, int ld, cudaStream_t stream) {
  set_identity_batched(m, n, A, ld, 0, 1, stream);
}

template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 grid((m + 127) / 128, n);
  copy_lower_kernel<<<grid, 128, 0, stream>>>(m, n, src, lds, dst, ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void transpose_triangle(Triangle to, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  transpose_triangle_batched(to, n, src, lds, 0, dst, ldd, 0, 1, stream);
}

template <class T>
void transpose_triangle_batched(Triangle to, int n, const T* src, int lds, long long src_stride, T* dst, int ldd,
                                long long dst_stride, int batch, cudaStream_t stream) {
  using batched_detail::device_view;
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  // A grid's y extent is at most 65535 blocks: orders up to 2 million, beyond any GPU's memory.
  for (int first = 0; first < batch; first += kMaxStackPerLaunch) {
    const dim3 grid(blocks, blocks, static_cast<unsigned>(std::min(kMaxStackPerLaunch, batch - first)));
    transpose_triangle_kernel<<<grid, dim3(kTransposeBlock, kTransposeRows), 0, stream>>>(
        to, n, device_view(src + first * src_stride), lds, src_stride, device_view(dst + first * dst_stride), ldd,
        dst_stride);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
}

template <class T>
void finish_inverse(int n, const T* factor, long long diagonal_stride, T* X, int ldx, int* info, cudaStream_t stream) {
  using batched_detail::device_view;
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  finish_inverse_kernel<<<dim3(blocks, blocks), dim3(kTransposeBlock, kTransposeRows), 0, stream>>>(
      n, device_view(factor), diagonal_stride, device_view(X), ldx, info);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void load_lower(int n, const T* src, long long row_stride, long long col_stride, T* dst, int ldd, bool conjugate,
                cudaStream_t stream) {
  load_lower_batched(n, src, row_stride, col_stride, 0, dst, ldd, 0, 1, conjugate, stream);
}

template <class T>
void load_lower_batched(int n, const T* src, long long row_stride, long long col_stride, long long src_stride, T* dst,
                        int ldd, long long dst_stride, int batch, bool conjugate, cudaStream_t stream) {
  using batched_detail::device_view;
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  for (int first = 0; first < batch; first += kMaxStackPerLaunch) {
    const dim3 grid(blocks, blocks, static_cast<unsigned>(std::min(kMaxStackPerLaunch, batch - first)));
    load_lower_kernel<<<grid, dim3(kTransposeBlock, kTransposeRows), 0, stream>>>(
        n, device_view(src + first * src_stride), row_stride, col_stride, src_stride,
        device_view(dst + first * dst_stride), ldd, dst_stride, conjugate);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
}

template <class T>
void copy_blocks(const BlockCopy<T>* copies, int count, cudaStream_t stream) {
  int k = 0;
  while (k < count) {
    BlockCopyBatch<T> batch{};
    int launched = 0;
    for (; k < count && launched < kBlockCopiesPerLaunch; ++k)
      if (copies[k].m > 0 && copies[k].n > 0) batch.copy[launched++] = copies[k];
    if (launched == 0) continue;
    const dim3 grid(kBlockCopyColumnBlocks, static_cast<unsigned>(launched));
    copy_blocks_kernel<<<grid, kBlockCopyThreads, 0, stream>>>(batch);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
}

#define TESSERA_INSTANTIATE(T)                                                              \
  template void check_potrf_info<T>(int, const T*, int, int*, cudaStream_t);                \
  template void log_diagonal_sum<T>(int, const T*, int, double*, cudaStream_t);             \
  template void first_zero_diagonal<T>(int, const T*, int, int*, cudaStream_t);             \
  template void copy_lower<T>(int, int, const T*, int, T*, int, cudaStream_t);              \
  template void copy_blocks<T>(const BlockCopy<T>*, int, cudaStream_t);                     \
  template void check_potrf_info_batched<T>(int, const T*, int, long long, int, int*, cudaStream_t);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

template <class T>
void load_lower_node(KernelNode& node, int n, const T* src, long long row_stride, long long col_stride, T* dst, int ldd,
                     bool conjugate) {
  using batched_detail::device_view;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  node.set(reinterpret_cast<const void*>(&load_lower_kernel<batched_detail::DeviceScalar<T>>), dim3(blocks, blocks, 1),
           dim3(kTransposeBlock, kTransposeRows), n, device_view(src), row_stride, col_stride, 0LL, device_view(dst),
           ldd, 0LL, conjugate);
}

template <class T>
void store_factor_node(KernelNode& node, int n, const T* W, int ldw, const int* solver_info, T* L, int ldl, bool upper,
                       bool zero_other, int* info) {
  using batched_detail::device_view;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  node.set(reinterpret_cast<const void*>(&store_factor_kernel<batched_detail::DeviceScalar<T>>), dim3(blocks, blocks),
           dim3(kTransposeBlock, kTransposeRows), n, device_view(W), ldw, solver_info, device_view(L), ldl, upper,
           zero_other, info);
}

// Every scalar type (complex ones conjugated where a triangle is read transposed).
#define TESSERA_INSTANTIATE(T)                                                                                       \
  template void load_lower_node<T>(KernelNode&, int, const T*, long long, long long, T*, int, bool);                 \
  template void store_factor_node<T>(KernelNode&, int, const T*, int, const int*, T*, int, bool, bool, int*);      \
  template void load_lower<T>(int, const T*, long long, long long, T*, int, bool, cudaStream_t);                     \
  template void transpose_triangle<T>(Triangle, int, const T*, int, T*, int, cudaStream_t);                          \
  template void finish_inverse<T>(int, const T*, long long, T*, int, int*, cudaStream_t);                            \
  template void strided_pointers<T>(T*, long long, int, T**, cudaStream_t);                                          \
  template void set_identity<T>(int, int, T*, int, cudaStream_t);                                                    \
  template void set_identity_batched<T>(int, int, T*, int, long long, int, cudaStream_t);                            \
  template void load_lower_batched<T>(int, const T*, long long, long long, long long, T*, int, long long, int, bool, \
                                      cudaStream_t);                                                                 \
  template void transpose_triangle_batched<T>(Triangle, int, const T*, int, long long, T*, int, long long, int,      \
                                              cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

template void first_zero_diagonal<float>(int, const std::complex<float>*, int, int*, cudaStream_t);
template void first_zero_diagonal<double>(int, const std::complex<double>*, int, int*, cudaStream_t);

// Complex tiles are copied as pairs of reals (float2, double2: the same size and alignment).
template void copy_lower<float2>(int, int, const float2*, int, float2*, int, cudaStream_t);
template void copy_lower<double2>(int, int, const double2*, int, double2*, int, cudaStream_t);

}  // namespace tessera::kernels::cuda
