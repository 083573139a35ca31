// Batched Cholesky in blocks of columns (potrf_batched_blocked): for block [j0, j0 + w)
//   1. its rows from j0 down are updated from the columns left of it,
//        A(j0:n, j0:j0+w) -= L(j0:n, 0:j0) L(j0:j0+w, 0:j0)^H,
//      by one strided batched gemm (upper storage: the transposed product on U's rows);
//   2. the panel kernel factors the trailing submatrix's first w columns (its own left-looking
//      updates then span the block only).
// The gemm writes the whole w x w diagonal block, the opposite triangle included: those triangles
// (blocks from the second on) are copied out first and put back at the end, or zeroed at the end.
// Both copies are memory traffic beside kernels bound by their chains of per-column steps, so they
// run on a second stream: the copy out beside the first block's panel kernel (which touches no
// later block's columns), the copy back (or the zeros) beside the last one's (which writes only
// its own triangle), once the last product has written.
#include <algorithm>
#include <optional>
#include <string>

#include "cuda/batched_common.cuh"
#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#include "cuda/stream_memory.hpp"
#include "cuda/tile_common.cuh"
#include "cuda/vendor.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

using batched_detail::device_view;
using batched_detail::DeviceScalar;

constexpr int kCopyThreads = 256;
constexpr unsigned kMaxGridY = 65535;

enum class Opposite { save, restore, zero };

// Elements of one matrix's saved triangles: a width x width square per diagonal block from the second.
__host__ __device__ constexpr long long saved_elements(int n, int width) {
  return (static_cast<long long>((n + width - 1) / width) - 1) * width * width;
}

// The strictly opposite triangles of the diagonal blocks 1 .. blocks - 1 (each in a width x width
// square of `saved`, per matrix) copied out of A, back into it, or set to zero there.
template <class T>
__global__ void opposite_triangles_kernel(T* A, int lda, long long stride, int n, int width, int batch, bool upper,
                                          T* saved, Opposite what) {
  const long long square = static_cast<long long>(width) * width;
  const long long per_matrix = saved_elements(n, width);
  const long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= per_matrix) return;
  const int block = 1 + static_cast<int>(e / square);
  const int r = static_cast<int>(e % square % width), c = static_cast<int>(e % square / width);
  const int j0 = block * width, size = min(width, n - j0);
  if (r >= size || c >= size || (upper ? r <= c : c <= r)) return;
  for (long long k = blockIdx.y; k < batch; k += gridDim.y) {
    T& a = A[k * stride + (j0 + r) + static_cast<long long>(j0 + c) * lda];
    if (what == Opposite::zero)
      a = T(0);
    else if (what == Opposite::restore)
      a = saved[k * per_matrix + e];
    else
      saved[k * per_matrix + e] = a;
  }
}

template <class T>
void opposite_triangles(T* A, int lda, long long stride, int n, int width, int batch, bool upper, T* saved,
                        Opposite what, cudaStream_t stream) {
  const long long per_matrix = saved_elements(n, width);
  if (per_matrix == 0) return;
  const dim3 grid(static_cast<unsigned>((per_matrix + kCopyThreads - 1) / kCopyThreads),
                  std::min<unsigned>(static_cast<unsigned>(batch), kMaxGridY));
  opposite_triangles_kernel<<<grid, kCopyThreads, 0, stream>>>(A, lda, stride, n, width, batch, upper, saved, what);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// The panel kernel's view of `batch` matrices of order n at A (in place, member k at k * stride).
template <class T>
batched_detail::BatchDesc<DeviceScalar<T>> strided_desc(T* A, int n, int lda, long long stride, int batch, int* info,
                                                        bool upper, const BatchedOptions& opts) {
  batched_detail::BatchDesc<DeviceScalar<T>> desc;
  desc.A = device_view(A);
  desc.n = n;
  desc.lda = lda;
  desc.stride = stride;
  desc.batch = batch;
  desc.info = info;
  desc.upper = upper;
  desc.fast = opts.fast_math;
  return desc;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TESSERA_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

// A second stream for work beside the caller's (for stacks longer than the GPU has SMs, where the
// copies are long enough to pay for it, and not while the caller's stream is being captured into
// a graph: the copies then stay on it): fork() orders it after the caller's stream's work
// so far and returns it; join() orders the caller's stream after what was put on it (also on
// destruction, before the temporary memory it uses is released on the caller's stream).
class SideStream {
 public:
  explicit SideStream(cudaStream_t stream) : stream_(stream) {
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ~SideStream() {
    if (forked_) {
      cudaEventRecord(join_, side_);
      cudaStreamWaitEvent(stream_, join_, 0);
    }
    cudaEventDestroy(join_);
    cudaEventDestroy(fork_);
    cudaStreamDestroy(side_);
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  cudaStream_t fork() {
    TESSERA_CUDA_CHECK(cudaEventRecord(fork_, stream_));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
    forked_ = true;
    return side_;
  }
  void join() {
    if (!forked_) return;
    TESSERA_CUDA_CHECK(cudaEventRecord(join_, side_));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
    forked_ = false;
  }

 private:
  cudaStream_t stream_;
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  bool forked_ = false;
};

}  // namespace

// Narrow blocks leave more of the arithmetic to the products; from order 448 on long stacks the
// wider ones' fewer, larger products won (H200, docs/kernels-batched.md, "In blocks of columns").
constexpr int kNarrowBlock = 32;
constexpr int kWideBlock = 64;
constexpr int kWideBlockMinN = 448;

int potrf_batched_blocked_width(int n, long long batch, int sm_count) {
  return n >= kWideBlockMinN && batch > sm_count ? kWideBlock : kNarrowBlock;
}

namespace {

// The panel kernel's shape for one block of columns, by the block's rows: over each range of rows,
// the shape that stayed within 4% of the fastest at every multiple of 32 in it (bench_batched_columns,
// NVIDIA H200, docs/kernels-batched.md, "Panel shapes block by block"). Keys: the type ('d', 's',
// 'z', 'c'), the triangle, blocks of more than 32 columns (wide), and stacks of more than
// kLongStackMatricesPerSm matrices per SM (measured at 10000 matrices; the others at 1000). The last
// range of a key also takes larger orders.
struct ColumnsShapeRange {
  char type;
  bool upper, wide, long_stack;
  int max_rows;
  PanelShape shape;
};
constexpr ColumnsShapeRange kColumnsShapes[] = {
    {'d', false, false, false, 32, {32, 32, 1, 4}},
    {'d', false, false, false, 192, {16, 64, 1, 8}},
    {'d', false, false, false, 1024, {32, 32, 1, 4}},
    {'d', false, true, false, 128, {32, 32, 1, 4}},
    {'d', false, true, false, 1024, {16, 64, 1, 8}},
    {'d', false, false, true, 160, {16, 32, 1, 8}},
    {'d', false, false, true, 384, {32, 64, 1, 4}},
    {'d', false, true, true, 384, {16, 32, 1, 8}},
    {'d', true, false, false, 96, {16, 32, 1, 8}},
    {'d', true, false, false, 1024, {32, 64, 1, 8}},
    {'d', true, true, false, 64, {16, 32, 1, 8}},
    {'d', true, true, false, 1024, {32, 64, 1, 8}},
    {'d', true, false, true, 160, {16, 32, 1, 8}},
    {'d', true, false, true, 384, {32, 64, 1, 8}},
    {'d', true, true, true, 128, {16, 32, 1, 8}},
    {'d', true, true, true, 384, {32, 64, 1, 8}},
    {'s', false, false, false, 32, {32, 32, 1, 4}},
    {'s', false, false, false, 1024, {32, 64, 1, 8}},
    {'s', false, true, false, 1024, {32, 64, 1, 8}},
    {'s', false, false, true, 224, {16, 32, 1, 8}},
    {'s', false, false, true, 544, {32, 64, 1, 8}},
    {'s', false, true, true, 192, {16, 32, 1, 8}},
    {'s', false, true, true, 544, {32, 64, 1, 8}},
    {'s', true, false, false, 32, {16, 32, 1, 8}},
    {'s', true, false, false, 384, {16, 64, 1, 8}},
    {'s', true, false, false, 1024, {32, 64, 1, 8}},
    {'s', true, true, false, 320, {16, 64, 1, 8}},
    {'s', true, true, false, 1024, {32, 64, 1, 8}},
    {'s', true, false, true, 224, {16, 32, 1, 8}},
    {'s', true, false, true, 352, {16, 64, 1, 8}},
    {'s', true, false, true, 544, {32, 64, 1, 8}},
    {'s', true, true, true, 192, {16, 32, 1, 8}},
    {'s', true, true, true, 320, {16, 64, 1, 8}},
    {'s', true, true, true, 544, {32, 64, 1, 8}},
    {'z', false, false, false, 896, {8, 32, 1, 8}},
    {'z', false, true, false, 320, {8, 32, 1, 8}},
    {'z', false, true, false, 896, {16, 64, 1, 8}},
    {'z', false, false, true, 256, {8, 32, 1, 8}},
    {'z', false, true, true, 256, {8, 32, 1, 8}},
    {'z', true, false, false, 896, {8, 32, 1, 8}},
    {'z', true, true, false, 192, {8, 32, 1, 8}},
    {'z', true, true, false, 896, {16, 64, 1, 8}},
    {'z', true, false, true, 256, {8, 32, 1, 8}},
    {'z', true, true, true, 192, {8, 32, 1, 8}},
    {'z', true, true, true, 256, {16, 64, 1, 8}},
    {'c', false, false, false, 96, {8, 32, 1, 8}},
    {'c', false, false, false, 1024, {16, 64, 1, 8}},
    {'c', false, true, false, 96, {8, 32, 1, 8}},
    {'c', false, true, false, 1024, {16, 64, 1, 8}},
    {'c', false, false, true, 288, {8, 32, 1, 8}},
    {'c', false, false, true, 384, {16, 64, 1, 8}},
    {'c', false, true, true, 128, {8, 32, 1, 8}},
    {'c', false, true, true, 384, {16, 64, 1, 8}},
    {'c', true, false, false, 160, {8, 32, 1, 8}},
    {'c', true, false, false, 1024, {16, 64, 1, 8}},
    {'c', true, true, false, 96, {8, 32, 1, 8}},
    {'c', true, true, false, 1024, {16, 64, 1, 8}},
    {'c', true, false, true, 160, {8, 32, 1, 8}},
    {'c', true, false, true, 384, {16, 64, 1, 8}},
    {'c', true, true, true, 128, {8, 32, 1, 8}},
    {'c', true, true, true, 384, {16, 64, 1, 8}},
};
// Between the two stack lengths measured (7.6 and 76 matrices per SM): their geometric mean.
constexpr int kLongStackMatricesPerSm = 24;

}  // namespace

PanelShape potrf_batched_columns_shape(int rows, int count, int element_bytes, bool complex, bool upper,
                                       long long batch, int sm_count) {
  // Stacks of few matrices per SM keep the whole kernel's shapes (their widest blocks).
  if (batch <= static_cast<long long>(kFewMatricesPerSm) * sm_count)
    return potrf_batched_default_shape(rows, element_bytes, complex, batch, sm_count);
  const char type = complex ? (element_bytes == 4 ? 'c' : 'z') : (element_bytes == 4 ? 's' : 'd');
  const bool wide = count > 32, long_stack = batch > static_cast<long long>(kLongStackMatricesPerSm) * sm_count;
  const ColumnsShapeRange* last = nullptr;
  for (const ColumnsShapeRange& r : kColumnsShapes)
    if (r.type == type && r.upper == upper && r.wide == wide && r.long_stack == long_stack) {
      if (rows <= r.max_rows) return r.shape;
      last = &r;
    }
  return last ? last->shape : potrf_batched_default_shape(rows, element_bytes, complex, batch, sm_count);
}

template <class T>
void potrf_batched_blocked(cublasHandle_t blas, BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch,
                           int* info, cudaStream_t stream, const BatchedOptions& opts) {
  batched_detail::check_strided_arguments(n, A != nullptr, lda, strideA, batch, info);
  if (batch == 0) return;
  if (n == 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int) * batch, stream));
    return;
  }
  const int width =
      opts.blocked_width > 0 ? opts.blocked_width : potrf_batched_blocked_width(n, batch, detail::device_sm_count());
  const bool upper = uplo == BatchUplo::upper;
  const bool keep = !opts.blocked_zero_opposite;
  std::optional<StreamBuffer<DeviceScalar<T>>> saved;
  std::optional<SideStream> side;  // after `saved`: joined before it is released
  if (saved_elements(n, width) > 0 && batch > detail::device_sm_count() && !capturing(stream)) side.emplace(stream);
  const auto beside = [&] { return side ? side->fork() : stream; };
  if (keep) {
    saved.emplace(static_cast<std::size_t>(saved_elements(n, width)) * batch, stream);
    opposite_triangles(device_view(A), lda, strideA, n, width, batch, upper, saved->data(), Opposite::save, beside());
  }
  const std::size_t ld = static_cast<std::size_t>(lda);
  const T one(1), minus_one(-1);
  for (int j0 = 0; j0 < n; j0 += width) {
    const int size = std::min(width, n - j0), rows = n - j0;
    T* block = A + j0 + j0 * ld;
    if (j0 > 0) {
      if (j0 == width && side) side->join();  // the triangles saved before the first product writes them
      if (upper)  // A(j0:j0+w, j0:n) -= U(0:j0, j0:j0+w)^H U(0:j0, j0:n)
        vendor::gemm_strided_batched(blas, Trans::conjugate_transpose, Trans::no, size, rows, j0, minus_one,
                                     A + j0 * ld, lda, strideA, A + j0 * ld, lda, strideA, one, block, lda, strideA,
                                     batch);
      else  // A(j0:n, j0:j0+w) -= L(j0:n, 0:j0) L(j0:j0+w, 0:j0)^H
        vendor::gemm_strided_batched(blas, Trans::no, Trans::conjugate_transpose, rows, size, j0, minus_one, A + j0,
                                     lda, strideA, A + j0, lda, strideA, one, block, lda, strideA, batch);
      if (j0 + width >= n)  // the last product written: the triangles back beside the last panel kernel
        opposite_triangles(device_view(A), lda, strideA, n, width, batch, upper, keep ? saved->data() : nullptr,
                           keep ? Opposite::restore : Opposite::zero, beside());
    }
    batched_detail::launch_potrf_panel_columns(strided_desc(block, rows, lda, strideA, batch, info, upper, opts), stream,
                                               opts, {j0, size});
  }
  if (side) side->join();
}

template <class T>
void potrf_batched_columns(BatchUplo uplo, int n, int count, T* A, int lda, long long strideA, int batch, int* info,
                           cudaStream_t stream, const BatchedOptions& opts) {
  batched_detail::check_strided_arguments(n, A != nullptr, lda, strideA, batch, info);
  if (count < 0 || count > n)
    throw InvalidArgument("batched potrf of columns: count = " + std::to_string(count) + " is not in [0, n = " +
                          std::to_string(n) + "]");
  if (batch == 0) return;
  if (count == 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int) * batch, stream));
    return;
  }
  batched_detail::launch_potrf_panel_columns(
      strided_desc(A, n, lda, strideA, batch, info, uplo == BatchUplo::upper, opts), stream, opts, {0, count});
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void potrf_batched_blocked<T>(cublasHandle_t, BatchUplo, int, T*, int, long long, int, int*, cudaStream_t, \
                                         const BatchedOptions&);                                                      \
  template void potrf_batched_columns<T>(BatchUplo, int, int, T*, int, long long, int, int*, cudaStream_t,             \
                                         const BatchedOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
