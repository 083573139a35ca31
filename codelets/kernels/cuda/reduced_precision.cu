#include "cuda/reduced_precision.hpp"

#include <cuda_fp16.h>

#include <algorithm>

#include "cuda/check.hpp"

namespace tessera::kernels::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void exponent_kernel(const double* largest, short* exponent) {
  const double a = *largest;
  int e = 0;
  if (a > 0 && isfinite(a)) {
    frexp(a, &e);
    e = 15 - e;
  }
  *exponent = static_cast<short>(e);
}

__global__ void split_to_fp16_kernel(int m, int n, const double* A, int lda, const short* exponent, __half* hi,
                                     __half* lo, int ldd) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int e = *exponent;
  for (int c = blockIdx.y; c < n; c += gridDim.y) {
    const double x = ldexp(A[i + static_cast<long long>(c) * lda], e);
    const __half h = __double2half(x);
    hi[i + static_cast<long long>(c) * ldd] = h;
    if (lo) lo[i + static_cast<long long>(c) * ldd] = __double2half((x - static_cast<double>(__half2float(h))) * 2048.0);
  }
}

__global__ void add_unscaled_kernel(int m, int n, double alpha, const float* W, const float* W2, int ldw,
                                    const short* ea, const short* eb, double* C, int ldc) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const double scale = ldexp(alpha, -(*ea + *eb));
  for (int c = blockIdx.y; c < n; c += gridDim.y) {
    const long long w = i + static_cast<long long>(c) * ldw;
    double product = static_cast<double>(W[w]);
    if (W2) product += static_cast<double>(W2[w]) * (1.0 / 2048.0);
    C[i + static_cast<long long>(c) * ldc] += scale * product;
  }
}

constexpr int kNormThreads = 256;
constexpr int kNormBlocks = 512;  // partials per pass: every SM busy on a tile of order 512 and up

// The block's value of `op` over every thread's `value` (a tree in a fixed order), in every thread.
template <class Op>
__device__ double block_reduce(double value, Op op) {
  __shared__ double partial[kNormThreads];
  __syncthreads();  // a previous reduction's reads are done
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kNormThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + half]);
    __syncthreads();
  }
  return partial[0];
}

// Blocks over the columns (block b takes columns b, b + gridDim.x, ...), threads down each column:
// every block's partial in a fixed order, combined by one block in a fixed order, so that the same
// tile always gives the same norm. Pass 1: the largest modulus; pass 2: the sum of squares scaled
// by it (no square overflows or underflows).
__global__ void __launch_bounds__(kNormThreads)
    largest_in_part_kernel(TilePart part, int m, int n, const double* A, int lda, double* partial) {
  double largest = 0;
  for (int j = blockIdx.x; j < n; j += gridDim.x)
    for (int i = threadIdx.x; i < m; i += kNormThreads) {
      if (!in_part(part, i, j)) continue;
      const double a = fabs(A[i + static_cast<long long>(j) * lda]);
      largest = (a > largest || a != a) ? a : largest;
    }
  largest = block_reduce(largest, [](double x, double y) { return (y > x || y != y) ? y : x; });
  if (threadIdx.x == 0) partial[blockIdx.x] = largest;
}

__global__ void __launch_bounds__(kNormThreads)
    scaled_squares_kernel(TilePart part, int m, int n, const double* A, int lda, const double* largest, double* partial) {
  const double scale = *largest;
  double sum = 0;
  if (scale > 0 && !isinf(scale))  // zero, infinite or NaN: the norm is the largest modulus itself
    for (int j = blockIdx.x; j < n; j += gridDim.x)
      for (int i = threadIdx.x; i < m; i += kNormThreads) {
        if (!in_part(part, i, j)) continue;
        const double s = A[i + static_cast<long long>(j) * lda] / scale;
        sum += part_weight(part, i, j) * s * s;
      }
  sum = block_reduce(sum, [](double x, double y) { return x + y; });
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// One block: *out := op over partial[0, count) in a fixed order; with `largest`, the norm
// largest * sqrt(sum) (or the largest modulus itself when it is zero, infinite or NaN).
__global__ void __launch_bounds__(kNormThreads)
    combine_kernel(const double* partial, int count, const double* largest, double* out) {
  double value = 0;
  for (int b = threadIdx.x; b < count; b += kNormThreads) {
    const double p = partial[b];
    value = largest ? value + p : ((p > value || p != p) ? p : value);
  }
  value = largest ? block_reduce(value, [](double x, double y) { return x + y; })
                  : block_reduce(value, [](double x, double y) { return (y > x || y != y) ? y : x; });
  if (threadIdx.x != 0) return;
  if (!largest) {
    *out = value;
    return;
  }
  const double scale = *largest;
  *out = (scale > 0 && !isinf(scale)) ? scale * sqrt(value) : scale;
}

dim3 column_grid(int m, int n) {
  return dim3(static_cast<unsigned>((m + kThreads - 1) / kThreads), static_cast<unsigned>(n < 65535 ? n : 65535));
}

}  // namespace

std::size_t range_exponent_workspace_bytes() { return sizeof(double) * (kNormBlocks + 1); }

std::size_t frobenius_norm_workspace_bytes(int n) {
  return sizeof(double) * (2 * static_cast<std::size_t>(std::min(std::max(n, 1), kNormBlocks)) + 1);
}

void frobenius_norm(TilePart part, int m, int n, const double* A, int lda, double* workspace, double* norm,
                    cudaStream_t stream) {
  if (m <= 0 || n <= 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(norm, 0, sizeof(double), stream));
    return;
  }
  const int blocks = std::min(n, kNormBlocks);
  double* largest_partial = workspace;
  double* sum_partial = workspace + blocks;
  double* largest = workspace + 2 * blocks;
  largest_in_part_kernel<<<blocks, kNormThreads, 0, stream>>>(part, m, n, A, lda, largest_partial);
  TESSERA_CUDA_CHECK_LAUNCH();
  combine_kernel<<<1, kNormThreads, 0, stream>>>(largest_partial, blocks, nullptr, largest);
  TESSERA_CUDA_CHECK_LAUNCH();
  scaled_squares_kernel<<<blocks, kNormThreads, 0, stream>>>(part, m, n, A, lda, largest, sum_partial);
  TESSERA_CUDA_CHECK_LAUNCH();
  combine_kernel<<<1, kNormThreads, 0, stream>>>(sum_partial, blocks, largest, norm);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void range_exponent(int m, int n, const double* A, int lda, double* workspace, short* exponent, cudaStream_t stream) {
  double* largest = workspace + kNormBlocks;
  if (m > 0 && n > 0) {
    const int blocks = std::min(n, kNormBlocks);
    largest_in_part_kernel<<<blocks, kNormThreads, 0, stream>>>(TilePart::whole, m, n, A, lda, workspace);
    TESSERA_CUDA_CHECK_LAUNCH();
    combine_kernel<<<1, kNormThreads, 0, stream>>>(workspace, blocks, nullptr, largest);
    TESSERA_CUDA_CHECK_LAUNCH();
  } else {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(largest, 0, sizeof(double), stream));
  }
  exponent_kernel<<<1, 1, 0, stream>>>(largest, exponent);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void split_to_fp16(int m, int n, const double* A, int lda, const short* exponent, void* hi, void* lo, int ldd,
                   cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  split_to_fp16_kernel<<<column_grid(m, n), kThreads, 0, stream>>>(m, n, A, lda, exponent, static_cast<__half*>(hi),
                                                                   static_cast<__half*>(lo), ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

void add_unscaled(int m, int n, double alpha, const float* W, const float* W2, int ldw, const short* ea,
                  const short* eb, double* C, int ldc, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  add_unscaled_kernel<<<column_grid(m, n), kThreads, 0, stream>>>(m, n, alpha, W, W2, ldw, ea, eb, C, ldc);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace tessera::kernels::cuda
