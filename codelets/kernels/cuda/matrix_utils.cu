#include "matrix_utils.hpp"

#include <algorithm>

#include "check.hpp"

namespace tessera::kernels::cuda {

namespace {

template <class T>
__global__ void copy_lower_kernel(int m, int n, const T* src, int lds, T* dst, int ldd) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < m && j < n) dst[i + static_cast<long>(j) * ldd] = i >= j ? src[i + static_cast<long>(j) * lds] : T(0);
}

// Thread i of block row blockIdx.x copies row i of every gridDim.y-th column from blockIdx.y on.
template <class T>
__global__ void copy_block_kernel(int m, int n, const T* __restrict__ src, int lds, T* __restrict__ dst, int ldd) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= m) return;
  for (int j = static_cast<int>(blockIdx.y); j < n; j += static_cast<int>(gridDim.y))
    dst[i + static_cast<long>(j) * ldd] = src[i + static_cast<long>(j) * lds];
}

constexpr int kCopyThreads = 256;
constexpr int kCopyColumnBlocks = 256;

constexpr int kTransposeBlock = 32;
constexpr int kTransposeRows = 8;  // threads per block: kTransposeBlock x kTransposeRows

__host__ __device__ constexpr bool in_triangle(Triangle t, int i, int j) {
  return t == Triangle::lower ? i >= j : i <= j;
}

// One 32 x 32 block of dst per thread block (block row blockIdx.x, block column blockIdx.y), through
// shared memory so that both the reads of src and the writes of dst are along columns.
template <class T>
__global__ void transpose_triangle_kernel(Triangle to, int n, const T* src, int lds, T* dst, int ldd) {
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
    if (i < n && j < n && in_triangle(to, i, j)) block[r][tx] = src[j + static_cast<long long>(i) * lds];
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    if (i < n && j < n && in_triangle(to, i, j)) dst[i + static_cast<long long>(j) * ldd] = block[tx][c];
  }
}

// One 32 x 32 block of dst per thread block. A block above the diagonal is zeros and reads nothing.
// Source elements are read with consecutive threads on consecutive addresses: down a column when
// row_stride is 1, else along a row (contiguous when col_stride is 1), and written down dst's
// columns.
template <class T>
__global__ void load_lower_kernel(int n, const T* __restrict__ src, long long row_stride, long long col_stride,
                                  T* __restrict__ dst, int ldd) {
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
    if (i < n && j < n && i >= j) block[r][c] = src[i * row_stride + j * col_stride];
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.y); c < kTransposeBlock; c += kTransposeRows) {
    const int i = row0 + tx, j = col0 + c;
    if (i < n && j < n) dst[i + static_cast<long long>(j) * ldd] = i >= j ? block[tx][c] : T(0);
  }
}

constexpr int kInfoThreads = 1024;

template <class T>
__global__ void check_potrf_info_kernel(int n, const T* A, int ld, int* info) {
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

}  // namespace

template <class T>
void check_potrf_info(int n, const T* A, int ld, int* info, cudaStream_t stream) {
  if (n <= 0) return;
  check_potrf_info_kernel<<<1, kInfoThreads, 0, stream>>>(n, A, ld, info);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 grid((m + 127) / 128, n);
  copy_lower_kernel<<<grid, 128, 0, stream>>>(m, n, src, lds, dst, ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void copy_block(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 grid((m + kCopyThreads - 1) / kCopyThreads, std::min(n, kCopyColumnBlocks));
  copy_block_kernel<<<grid, kCopyThreads, 0, stream>>>(m, n, src, lds, dst, ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void transpose_triangle(Triangle to, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  // A grid's y extent is at most 65535 blocks: orders up to 2 million, beyond any GPU's memory.
  const dim3 grid(blocks, blocks);
  transpose_triangle_kernel<<<grid, dim3(kTransposeBlock, kTransposeRows), 0, stream>>>(to, n, src, lds, dst, ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void load_lower(int n, const T* src, long long row_stride, long long col_stride, T* dst, int ldd,
                cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kTransposeBlock - 1) / kTransposeBlock);
  const dim3 grid(blocks, blocks);
  load_lower_kernel<<<grid, dim3(kTransposeBlock, kTransposeRows), 0, stream>>>(n, src, row_stride, col_stride, dst,
                                                                                 ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template void check_potrf_info<float>(int, const float*, int, int*, cudaStream_t);
template void check_potrf_info<double>(int, const double*, int, int*, cudaStream_t);
template void copy_block<float>(int, int, const float*, int, float*, int, cudaStream_t);
template void copy_block<double>(int, int, const double*, int, double*, int, cudaStream_t);
template void copy_lower<float>(int, int, const float*, int, float*, int, cudaStream_t);
template void copy_lower<double>(int, int, const double*, int, double*, int, cudaStream_t);
template void load_lower<float>(int, const float*, long long, long long, float*, int, cudaStream_t);
template void load_lower<double>(int, const double*, long long, long long, double*, int, cudaStream_t);
template void transpose_triangle<float>(Triangle, int, const float*, int, float*, int, cudaStream_t);
template void transpose_triangle<double>(Triangle, int, const double*, int, double*, int, cudaStream_t);

}  // namespace tessera::kernels::cuda
