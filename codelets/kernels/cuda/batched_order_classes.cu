// A variable batch split into classes of orders on the device, in one pass: each block counts its
// matrices per class in shared memory (one atomic per class and warp), reserves room in each
// class's list with one global atomic per class, and writes the matrices' indices there. The order
// inside a class depends on timing; no kernel's arithmetic depends on a matrix's position.
#include <algorithm>

#include "cuda/batched_common.cuh"
#include "cuda/check.hpp"
#include "cuda/tile_common.cuh"

namespace tessera::kernels::cuda::batched_detail {
namespace {

constexpr int kClassifyThreads = 256;
constexpr int kItemsPerThread = 4;
constexpr int kChunk = kClassifyThreads * kItemsPerThread;  // matrices a block takes at once
constexpr int kBlocksPerSm = 4;                             // the grid strides over the rest

// The tightest class whose bound holds the order (bounds descending); orders below 1 go last.
__device__ __forceinline__ int class_of(int order, const OrderClasses& classes) {
  int c = classes.count - 1;
  if (order < 1) return c;
  while (c > 0 && order > classes.bound[c]) --c;
  return c;
}

__global__ void __launch_bounds__(kClassifyThreads)
    classify_kernel(const int* n, int batch, OrderClasses classes, int* count, int* list) {
  __shared__ int block_count[kMaxOrderClasses];
  __shared__ int block_first[kMaxOrderClasses];
  const unsigned lane = threadIdx.x & 31u;
  for (long long c0 = static_cast<long long>(blockIdx.x) * kChunk; c0 < batch;
       c0 += static_cast<long long>(gridDim.x) * kChunk) {
    if (threadIdx.x < kMaxOrderClasses) block_count[threadIdx.x] = 0;
    __syncthreads();
    int cls[kItemsPerThread], rank[kItemsPerThread];
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
      const long long k = c0 + i * kClassifyThreads + threadIdx.x;
      cls[i] = k < batch ? class_of(n[k], classes) : -1;
      // The lanes of one class take consecutive ranks with one atomic between them.
      const unsigned peers = __match_any_sync(0xffffffffu, cls[i]);
      const int leader = __ffs(peers) - 1;
      int first = 0;
      if (static_cast<int>(lane) == leader && cls[i] >= 0) first = atomicAdd(&block_count[cls[i]], __popc(peers));
      rank[i] = __shfl_sync(0xffffffffu, first, leader) + __popc(peers & ((1u << lane) - 1u));
    }
    __syncthreads();
    if (threadIdx.x < classes.count) {
      const int mine = block_count[threadIdx.x];
      block_first[threadIdx.x] = mine ? atomicAdd(&count[threadIdx.x], mine) : 0;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i)
      if (cls[i] >= 0)
        list[static_cast<long long>(cls[i]) * batch + block_first[cls[i]] + rank[i]] =
            static_cast<int>(c0 + i * kClassifyThreads + threadIdx.x);
    __syncthreads();
  }
}

}  // namespace

std::size_t classify_orders_scratch(int batch, const OrderClasses& classes) {
  return static_cast<std::size_t>(classes.count) * (static_cast<std::size_t>(batch) + 1);
}

void classify_orders(const int* n, int batch, const OrderClasses& classes, int* scratch, cudaStream_t stream) {
  TESSERA_CUDA_CHECK(cudaMemsetAsync(scratch, 0, classes.count * sizeof(int), stream));
  const long long most = static_cast<long long>(kBlocksPerSm) * cuda::detail::device_sm_count();
  const long long blocks = std::clamp<long long>((batch + kChunk - 1) / kChunk, 1, std::max(most, 1LL));
  classify_kernel<<<static_cast<unsigned>(blocks), kClassifyThreads, 0, stream>>>(n, batch, classes, scratch,
                                                                                  scratch + classes.count);
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace tessera::kernels::cuda::batched_detail
