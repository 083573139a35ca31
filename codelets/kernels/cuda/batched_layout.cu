// Conversion between the strided batch layout and the interleaved one (chunks of 32 matrices,
// batch index fastest). A thread block moves a tile of 32 matrices x 32 elements through shared
// memory, so both the strided side (elements of one matrix consecutive) and the interleaved side
// (matrices consecutive) are read and written coalesced.
#include <string>

#include "cuda/batched_kernels.hpp"
#include "cuda/batched_scalar.cuh"
#include "cuda/check.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

constexpr int kTile = 32;       // matrices (one chunk) x elements per tile
constexpr int kTileRows = 8;    // thread block is kTile x kTileRows
constexpr int kMaxTileY = 65535;

struct LayoutArgs {
  int n;
  int lda;
  long long stride;
  int batch;
};

// Element e (column-major index j*n + i) of matrix b in the strided layout.
__device__ __forceinline__ long long strided_index(const LayoutArgs& a, int b, int e) {
  return static_cast<long long>(b) * a.stride + static_cast<long long>(e / a.n) * a.lda + e % a.n;
}

__device__ __forceinline__ long long interleaved_index(const LayoutArgs& a, int chunk, int e,
                                                       int b_in_chunk) {
  return (static_cast<long long>(chunk) * a.n * a.n + e) * kInterleaveWidth + b_in_chunk;
}

template <class T, bool ToInterleaved>
__global__ void __launch_bounds__(kTile* kTileRows)
    convert_kernel(const T* __restrict__ src, T* __restrict__ dst, LayoutArgs a) {
  __shared__ T tile[kTile][kTile + 1];  // [matrix in chunk][element in tile]
  const int chunk = blockIdx.x;
  const int nn = a.n * a.n;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int e0 = blockIdx.y * kTile; e0 < nn; e0 += gridDim.y * kTile) {
    // Read: strided side has elements fastest, interleaved side has matrices fastest.
    for (int q = ty; q < kTile; q += kTileRows) {
      if constexpr (ToInterleaved) {
        const int b = chunk * kTile + q, e = e0 + tx;
        if (b < a.batch && e < nn) tile[q][tx] = src[strided_index(a, b, e)];
      } else {
        const int b = chunk * kTile + tx, e = e0 + q;
        if (b < a.batch && e < nn) tile[tx][q] = src[interleaved_index(a, chunk, e, tx)];
      }
    }
    __syncthreads();
    for (int q = ty; q < kTile; q += kTileRows) {
      if constexpr (ToInterleaved) {
        const int b = chunk * kTile + tx, e = e0 + q;
        if (b < a.batch && e < nn) dst[interleaved_index(a, chunk, e, tx)] = tile[tx][q];
      } else {
        const int b = chunk * kTile + q, e = e0 + tx;
        if (b < a.batch && e < nn) dst[strided_index(a, b, e)] = tile[q][tx];
      }
    }
    __syncthreads();
  }
}

void require(bool ok, const std::string& what, int position) {
  if (!ok) throw InvalidArgument("batched layout conversion: " + what, position);
}

template <class T, bool ToInterleaved>
void convert(int n, const T* src, T* dst, int lda, long long stride, int batch,
             cudaStream_t stream) {
  require(n >= 0, "n must be >= 0", 1);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 4);
  require(batch >= 0, "batch must be >= 0", 3);
  require(batch <= 1 || stride >= static_cast<long long>(lda) * (n - 1) + n,
          "stride must separate the matrices", 5);
  if (n == 0 || batch == 0) return;
  const long long nn = static_cast<long long>(n) * n;
  require(nn <= 0x7fffffffLL, "n * n must fit in int", 1);
  const long long tiles = (nn + kTile - 1) / kTile;
  const dim3 grid((batch + kTile - 1) / kTile,
                  static_cast<unsigned>(tiles < kMaxTileY ? tiles : kMaxTileY));
  const dim3 block(kTile, kTileRows);
  convert_kernel<T, ToInterleaved><<<grid, block, 0, stream>>>(src, dst, {n, lda, stride, batch});
  TESSERA_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T>
void interleave_batched(int n, const T* A, int lda, long long strideA, int batch, T* Ai,
                        cudaStream_t stream) {
  using batched_detail::device_view;
  convert<batched_detail::DeviceScalar<T>, true>(n, device_view(A), device_view(Ai), lda, strideA, batch, stream);
}

template <class T>
void deinterleave_batched(int n, const T* Ai, int batch, T* A, int lda, long long strideA,
                          cudaStream_t stream) {
  using batched_detail::device_view;
  convert<batched_detail::DeviceScalar<T>, false>(n, device_view(Ai), device_view(A), lda, strideA, batch, stream);
}

#define TESSERA_INSTANTIATE(T)                                                                 \
  template void interleave_batched<T>(int, const T*, int, long long, int, T*, cudaStream_t);   \
  template void deinterleave_batched<T>(int, const T*, int, T*, int, long long, cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
