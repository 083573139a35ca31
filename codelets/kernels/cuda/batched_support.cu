// Helpers around the batched kernels for callers whose batch already lives on the device: the
// per-matrix sizes of a variable batch checked where they are, and the opposite triangle zeroed.
#include <string>

#include "cuda/batched_kernels.hpp"
#include "cuda/batched_scalar.cuh"
#include "cuda/check.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

constexpr int kScreenThreads = 256;
constexpr int kZeroWarps = 8;                  // columns per thread block
constexpr long long kMaxZeroBlocks = 1 << 20;  // the grid strides over the rest

// -position of matrix k's first bad size, or 0 when its sizes are valid.
__device__ __forceinline__ int size_error(const int* n, int max_n, const int* lda, const int* ldb,
                                          const VariableSizePositions& p, int k) {
  const int nk = n[k];
  if (nk < 0) return -p.n;
  if (nk > max_n) return -p.max_n;
  const int least_ld = nk > 1 ? nk : 1;
  if (lda[k] < least_ld) return -p.lda;
  if (ldb && ldb[k] < least_ld) return -p.ldb;
  return 0;
}

__global__ void __launch_bounds__(kScreenThreads)
    screen_sizes_kernel(const int* n, int max_n, const int* lda, const int* ldb, int batch,
                        int* checked_n, int* info, VariableSizePositions positions) {
  const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= batch) return;
  const int error = size_error(n, max_n, lda, ldb, positions, static_cast<int>(k));
  checked_n[k] = error == 0 ? n[k] : -1;
  if (error != 0 && info) info[k] = error;
}

// One warp per column (k, j) of the batch; lanes stride down the rows of the strict triangle.
template <class T>
__global__ void __launch_bounds__(kZeroWarps * 32)
    zero_opposite_kernel(bool lower_kept, int n, T* A, int lda, long long strideA,
                         long long columns) {
  const int lane = threadIdx.x & 31;
  const long long warps = static_cast<long long>(gridDim.x) * kZeroWarps;
  for (long long c = static_cast<long long>(blockIdx.x) * kZeroWarps + threadIdx.x / 32;
       c < columns; c += warps) {
    const long long k = c / n;
    const int j = static_cast<int>(c % n);
    T* column = A + k * strideA + static_cast<long long>(j) * lda;
    const int first = lower_kept ? 0 : j + 1;  // lower kept: rows above the diagonal go
    const int end = lower_kept ? j : n;
    for (int i = first + lane; i < end; i += 32) column[i] = T(0);
  }
}

void require(bool ok, const std::string& what, int position) {
  if (!ok) throw InvalidArgument("batched support: " + what, position);
}

}  // namespace

void screen_variable_sizes(const int* n, int max_n, const int* lda, const int* ldb, int batch,
                           int* checked_n, int* info, const VariableSizePositions& positions,
                           cudaStream_t stream) {
  require(batch >= 0, "batch must be >= 0", 0);
  if (batch == 0) return;
  require(n && lda && checked_n, "n, lda and checked_n must not be null", 0);
  const long long blocks = (static_cast<long long>(batch) + kScreenThreads - 1) / kScreenThreads;
  screen_sizes_kernel<<<static_cast<unsigned>(blocks), kScreenThreads, 0, stream>>>(
      n, max_n, lda, ldb, batch, checked_n, info, positions);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void zero_opposite_triangle_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA,
                                    int batch, cudaStream_t stream) {
  require(n >= 0, "n must be >= 0", 2);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 4);
  require(batch >= 0, "batch must be >= 0", 6);
  if (n == 0 || batch == 0) return;
  require(A != nullptr, "A must not be null", 3);
  const long long columns = static_cast<long long>(batch) * n;
  const long long needed = (columns + kZeroWarps - 1) / kZeroWarps;
  const long long blocks = needed < kMaxZeroBlocks ? needed : kMaxZeroBlocks;
  zero_opposite_kernel<batched_detail::DeviceScalar<T>><<<static_cast<unsigned>(blocks), kZeroWarps * 32, 0, stream>>>(
      uplo == BatchUplo::lower, n, batched_detail::device_view(A), lda, strideA, columns);
  TESSERA_CUDA_CHECK_LAUNCH();
}

#define TESSERA_INSTANTIATE(T)                                                                            \
  template void zero_opposite_triangle_batched<T>(BatchUplo, int, T*, int, long long, int, cudaStream_t);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
