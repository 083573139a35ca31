// Public batched factorization entry points: argument checks and the choice of kernel family.
//   n <= 32       register kernel (batched_potrf_small.cu)
//   n > 32        panel kernel    (batched_potrf_panel.cu)
// A variable batch runs both: split into classes of orders on the device first
// (batched_order_classes.cu), the register kernel taking the classes of n_k <= 32, the panel kernel
// the rest (for most bounds up to 32, the register kernel over every matrix in one class). Arrays of pointers use the
// same kernels: BatchDesc::A_array replaces the base pointer and its stride or offsets. The out-of-place form
// sets BatchDesc::src: the same families, in their out-of-place instantiations. Complex matrices
// run the kernels' DeviceScalar type (the caller's std::complex arrays, reinterpreted).
#include <algorithm>
#include <iterator>
#include <string>

#include "cuda/batched_common.cuh"
#include "cuda/check.hpp"
#include "cuda/stream_memory.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda {
namespace {

using batched_detail::BatchDesc;
using batched_detail::BatchLayout;
using batched_detail::device_view;
using batched_detail::DeviceScalar;

constexpr int kRegisterMaxN = 32;

void require(bool ok, const std::string& what, int position) {
  if (!ok) throw InvalidArgument("batched potrf: " + what, position);
}

// The fields every layout sets; each entry point adds its layout's own.
template <class T>
BatchDesc<T> batch_desc(BatchLayout layout, BatchUplo uplo, T* A, int n, int batch, int* info) {
  BatchDesc<T> desc;
  desc.layout = layout;
  desc.A = A;
  desc.n = n;
  desc.batch = batch;
  desc.info = info;
  desc.upper = uplo == BatchUplo::upper;
  return desc;
}

template <class T>
void run_uniform(BatchDesc<T> desc, cudaStream_t stream, const BatchedOptions& opts) {
  if (desc.batch == 0) return;
  if (desc.n == 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(desc.info, 0, sizeof(int) * desc.batch, stream));
    return;
  }
  desc.fast = opts.fast_math;
  if (desc.n <= kRegisterMaxN)
    batched_detail::launch_potrf_small(desc, desc.n, stream, opts);
  else
    batched_detail::launch_potrf_panel(desc, desc.n, 0, stream, opts);
}

// Classes for a variable batch of orders up to max_n > 32, bounds descending: the orders above 32
// in up to kPanelClasses ranges of equal width (the panel kernel takes them in turn, largest orders
// first, so that the longest blocks start first and the last wave is short), then the register
// kernel's: 32, 16 and 8 (each class in groups of its bound, so that small orders are not spread
// over groups sized for the largest).
constexpr int kPanelClasses = 8;
// Bounds up to 32 split into classes from 17 to 24 only: there the orders up to 16 run two matrices
// to a warp instead of one, which repays the classifying pass and the extra launches; from 25 the
// pass cost more than it saved, and up to 16 there is no smaller class worth a launch (H200,
// docs/kernels-batched.md, "Variable orders").
constexpr int kSmallClassesMinBound = 17;
constexpr int kSmallClassesMaxBound = 24;
constexpr int kRegisterClasses[] = {32, 16, 8};
batched_detail::OrderClasses order_classes(int max_n) {
  batched_detail::OrderClasses classes;
  const long long above = max_n - kRegisterMaxN;
  const int panel_classes = static_cast<int>(std::clamp<long long>(above, 0, kPanelClasses));
  for (int c = 0; c < panel_classes; ++c)
    classes.bound[classes.count++] =
        kRegisterMaxN + static_cast<int>((above * (panel_classes - c) + panel_classes - 1) / panel_classes);
  for (int bound : kRegisterClasses) classes.bound[classes.count++] = bound;
  return classes;
}

// A variable batch of max_n > 32 in classes of orders (order_classes): one launch of the register
// kernel per class of n_k <= 32, one launch of the panel kernel over the others.
template <class T>
void run_classes(BatchDesc<T> desc, cudaStream_t stream, const BatchedOptions& opts) {
  const batched_detail::OrderClasses classes = order_classes(desc.n);
  StreamBuffer<int> scratch(batched_detail::classify_orders_scratch(desc.batch, classes), stream);
  batched_detail::classify_orders(desc.nvec, desc.batch, classes, scratch.data(), stream);
  batched_detail::ClassRange range;
  range.count = scratch.data();
  range.list = scratch.data() + classes.count;
  range.batch = desc.batch;
  const int first_small = classes.count - static_cast<int>(std::size(kRegisterClasses));
  BatchedOptions small_opts = opts;
  small_opts.threads = 0;  // `threads` names the panel shape
  for (int c = first_small; c < classes.count; ++c) {
    range.first = c;
    range.end = c + 1;
    batched_detail::launch_potrf_small_class(desc, range, classes.bound[c], stream, small_opts);
  }
  if (first_small == 0) return;  // no order above 32
  range.first = 0;
  range.end = first_small;
  batched_detail::launch_potrf_panel(desc, desc.n, kRegisterMaxN, stream, opts, range);
}

// A variable batch: in classes of orders where the panel kernel has matrices to take, and for the
// bounds from kSmallClassesMinBound to kSmallClassesMaxBound; otherwise (or as asked) the register
// kernel over every matrix in one class, in groups of the smallest of its class sizes that holds
// max_n, then the panel kernel over every matrix (each skips the other's matrices).
template <class T>
void run_variable(BatchDesc<T> desc, cudaStream_t stream, const BatchedOptions& opts) {
  const int max_n = desc.n;
  desc.fast = opts.fast_math;
  const bool split = max_n > kRegisterMaxN || (max_n >= kSmallClassesMinBound && max_n <= kSmallClassesMaxBound);
  if (opts.order_classes && split) return run_classes(desc, stream, opts);
  const int group_n = max_n <= 8 ? 8 : max_n <= 16 ? 16 : kRegisterMaxN;
  BatchedOptions small_opts = opts;
  if (max_n > kRegisterMaxN) small_opts.threads = 0;  // `threads` then names the panel shape
  batched_detail::ClassRange whole;  // no list: every matrix of the batch
  whole.batch = desc.batch;
  batched_detail::launch_potrf_small_class(desc, whole, group_n, stream, small_opts);
  if (max_n > kRegisterMaxN)
    batched_detail::launch_potrf_panel(desc, max_n, kRegisterMaxN, stream, opts);
}

}  // namespace

namespace batched_detail {

void check_strided_arguments(int n, bool has_A, int lda, long long strideA, int batch, const int* info) {
  require(n >= 0, "n must be >= 0", 2);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 4);
  require(batch >= 0, "batch must be >= 0", 6);
  require(batch <= 1 || strideA >= static_cast<long long>(lda) * (n - 1) + n, "strideA must separate the matrices", 5);
  require(batch == 0 || info != nullptr, "info must not be null", 7);
  require(batch == 0 || n == 0 || has_A, "A must not be null", 3);
}

}  // namespace batched_detail

template <class T>
void potrf_batched(BatchUplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info, cudaStream_t stream,
                   const BatchedOptions& opts) {
  batched_detail::check_strided_arguments(n, A != nullptr, lda, strideA, batch, info);
  BatchDesc<DeviceScalar<T>> desc = batch_desc(BatchLayout::strided, uplo, device_view(A), n, batch, info);
  desc.lda = lda;
  desc.stride = strideA;
  run_uniform(desc, stream, opts);
}

template <class T>
void potrf_batched(BatchUplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA,
                   long long strideA, T* L, int ldl, long long strideL, int batch, int* info,
                   cudaStream_t stream, const BatchedOptions& opts) {
  require(n >= 0, "n must be >= 0", 2);
  require(ldl >= (n > 1 ? n : 1), "ldl must be >= max(1, n)", 8);
  require(batch >= 0, "batch must be >= 0", 10);
  require(batch <= 1 || strideL >= static_cast<long long>(ldl) * (n - 1) + n,
          "strideL must separate the matrices", 9);
  require(batch == 0 || info != nullptr, "info must not be null", 11);
  require(batch == 0 || n == 0 || A != nullptr, "A must not be null", 3);
  require(batch == 0 || n == 0 || L != nullptr, "L must not be null", 7);
  BatchDesc<DeviceScalar<T>> desc = batch_desc(BatchLayout::strided, uplo, device_view(L), n, batch, info);
  desc.lda = ldl;
  desc.stride = strideL;
  desc.src = device_view(A);
  desc.src_rs = rowStrideA;
  desc.src_cs = colStrideA;
  desc.src_stride = strideA;
  run_uniform(desc, stream, opts);
}

template <class T>
void potrf_batched_interleaved(BatchUplo uplo, int n, T* Ai, int batch, int* info,
                               cudaStream_t stream, const BatchedOptions& opts) {
  require(n >= 0, "n must be >= 0", 2);
  require(batch >= 0, "batch must be >= 0", 4);
  require(batch == 0 || info != nullptr, "info must not be null", 5);
  require(batch == 0 || n == 0 || Ai != nullptr, "A must not be null", 3);
  BatchDesc<DeviceScalar<T>> desc = batch_desc(BatchLayout::interleaved, uplo, device_view(Ai), n, batch, info);
  desc.lda = n;
  run_uniform(desc, stream, opts);
}

template <class T>
void potrf_vbatched(BatchUplo uplo, const int* n, int max_n, T* A, const long long* offsetA,
                    const int* lda, int batch, int* info, cudaStream_t stream,
                    const BatchedOptions& opts) {
  require(max_n >= 0, "max_n must be >= 0", 3);
  require(batch >= 0, "batch must be >= 0", 7);
  if (batch == 0) return;
  require(n != nullptr && offsetA != nullptr && lda != nullptr && info != nullptr,
          "n, offsetA, lda and info must not be null", 2);
  BatchDesc<DeviceScalar<T>> desc = batch_desc(BatchLayout::variable, uplo, device_view(A), max_n, batch, info);
  desc.nvec = n;
  desc.ldvec = lda;
  desc.offvec = offsetA;
  run_variable(desc, stream, opts);
}

template <class T>
void potrf_batched(BatchUplo uplo, int n, T* const* A_array, int lda, int batch, int* info,
                   cudaStream_t stream, const BatchedOptions& opts) {
  require(n >= 0, "n must be >= 0", 2);
  require(lda >= (n > 1 ? n : 1), "lda must be >= max(1, n)", 4);
  require(batch >= 0, "batch must be >= 0", 5);
  require(batch == 0 || info != nullptr, "info must not be null", 6);
  require(batch == 0 || n == 0 || A_array != nullptr, "A_array must not be null", 3);
  auto desc = batch_desc<DeviceScalar<T>>(BatchLayout::strided, uplo, nullptr, n, batch, info);
  desc.A_array = device_view(A_array);
  desc.lda = lda;
  run_uniform(desc, stream, opts);
}

template <class T>
void potrf_vbatched(BatchUplo uplo, const int* n, int max_n, T* const* A_array, const int* lda,
                    int batch, int* info, cudaStream_t stream, const BatchedOptions& opts) {
  require(max_n >= 0, "max_n must be >= 0", 3);
  require(batch >= 0, "batch must be >= 0", 6);
  if (batch == 0) return;
  require(n != nullptr && lda != nullptr && info != nullptr, "n, lda and info must not be null", 2);
  require(max_n == 0 || A_array != nullptr, "A_array must not be null", 4);
  auto desc = batch_desc<DeviceScalar<T>>(BatchLayout::variable, uplo, nullptr, max_n, batch, info);
  desc.A_array = device_view(A_array);
  desc.nvec = n;
  desc.ldvec = lda;
  run_variable(desc, stream, opts);
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void potrf_batched<T>(BatchUplo, int, T*, int, long long, int, int*, cudaStream_t, const BatchedOptions&); \
  template void potrf_batched<T>(BatchUplo, int, const T*, long long, long long, long long, T*, int, long long, int,  \
                                 int*, cudaStream_t, const BatchedOptions&);                                          \
  template void potrf_batched_interleaved<T>(BatchUplo, int, T*, int, int*, cudaStream_t, const BatchedOptions&);     \
  template void potrf_vbatched<T>(BatchUplo, const int*, int, T*, const long long*, const int*, int, int*,            \
                                  cudaStream_t, const BatchedOptions&);                                               \
  template void potrf_batched<T>(BatchUplo, int, T* const*, int, int, int*, cudaStream_t, const BatchedOptions&);     \
  template void potrf_vbatched<T>(BatchUplo, const int*, int, T* const*, const int*, int, int*, cudaStream_t,         \
                                  const BatchedOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda
