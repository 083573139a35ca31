// The batched half of tessera/device.hpp: arguments checked on the host (nothing is read through
// the device pointers), then Tessera's batched CUDA kernels enqueued on the caller's stream. No
// StarPU and no runtime: the matrices already live on the GPU. Built without CUDA, every call
// throws RuntimeError.
#include "tessera/device.hpp"

#include <string>

#include "argument_errors.hpp"
#include "tessera/error.hpp"
#include "tessera/tools/lapack_arguments.hpp"
#include "tessera/precision.hpp"

#if TESSERA_HAVE_CUDA
#include <algorithm>
#include <cstddef>
#include <vector>

#include "cuda/batch_uplo.hpp"
#include "cuda/batched_inverse.hpp"
#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#endif

namespace tessera::device {

namespace {

// read_info's arguments; false where there is nothing to read (count 0).
bool info_to_read(const int* info, int count, const int* host_info) {
  const std::string routine = "tessera::device::read_info";
  if (count < 0) throw InvalidArgument(routine + ": count (argument 2) is negative", 2);
  if (count == 0) return false;
  if (!info) throw InvalidArgument(routine + ": info (argument 1) is null", 1);
  if (!host_info) throw InvalidArgument(routine + ": host_info (argument 3) is null", 3);
  return true;
}

}  // namespace

#if TESSERA_HAVE_CUDA

namespace {

namespace kc = kernels::cuda;

void check_arguments(const char* routine, const ArgumentError& error) {
  detail::throw_if_invalid((std::string("device::") + routine).c_str(), error);
}

// Device memory for one call, allocated and freed in the order of the caller's stream: ready for
// the work enqueued after it, given back once that work is done, and never a synchronisation.
class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t ints, cudaStream_t stream) : stream_(stream) {
    TESSERA_CUDA_CHECK(cudaMallocAsync(&data_, ints * sizeof(int), stream_));
  }
  ~StreamWorkspace() {
    // Only reached without release() when an exception is on its way out: that error is the one
    // to report, so the status of this clean-up is not.
    if (data_) static_cast<void>(cudaFreeAsync(data_, stream_));
  }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;

  int* get() const { return data_; }
  // Frees the memory after the work enqueued so far on the stream.
  void release() {
    int* data = data_;
    data_ = nullptr;
    TESSERA_CUDA_CHECK(cudaFreeAsync(data, stream_));
  }

 private:
  int* data_ = nullptr;
  cudaStream_t stream_;
};

// Positions reported in info[k] for a variable batch's per-matrix sizes (lapack_arguments.hpp):
// potrf_vbatched lists lda at 5, the solves at 6 with ldb at 8.
constexpr kc::VariableSizePositions potrf_size_positions{2, 3, 5, 0};
constexpr kc::VariableSizePositions solve_size_positions{2, 3, 6, 8};

// Runs `enqueue(device_info)` on a workspace info array, copies it to host_info (or to a local
// array when host_info is null), synchronises the stream and counts the failed matrices.
template <class Enqueue>
int count_failures(int batch, int* host_info, cudaStream_t stream, const Enqueue& enqueue) {
  StreamWorkspace info(static_cast<std::size_t>(batch), stream);
  enqueue(info.get());
  std::vector<int> local;
  if (host_info == nullptr) {
    local.resize(static_cast<std::size_t>(batch));
    host_info = local.data();
  }
  const int failed = read_info(info.get(), batch, host_info, stream);
  info.release();
  return failed;
}

// Every matrix of order 0 succeeds: no device work, nothing to wait for.
int no_failures(int batch, int* host_info) {
  if (host_info) std::fill(host_info, host_info + batch, 0);
  return 0;
}

}  // namespace

int read_info(const int* info, int count, int* host_info, Stream stream) {
  if (!info_to_read(info, count, host_info)) return 0;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host_info, info, static_cast<std::size_t>(count) * sizeof(int),
                                     cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<int>(std::count_if(host_info, host_info + count, [](int v) { return v != 0; }));
}

// ---- strided ----------------------------------------------------------------------------------------

template <class T>
void potrf_batched_ex(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info, Stream stream) {
  check_arguments("potrf_batched_ex",
                  potrf_batched_argument_error<T>(detail::uplo_letter(uplo), n, A, lda, strideA, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
}

template <class T>
void potrs_batched_ex(Uplo uplo, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                      long long strideB, int batch, const int* info, Stream stream) {
  check_arguments("potrs_batched_ex", potrs_batched_argument_error<T>(detail::uplo_letter(uplo), n, nrhs, A, lda,
                                                                      strideA, B, ldb, strideB, batch));
  if (n == 0 || nrhs == 0 || batch == 0) return;
  kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, stream);
}

template <class T>
void posv_batched_ex(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb, long long strideB,
                     int batch, int* info, Stream stream) {
  check_arguments("posv_batched_ex", posv_batched_argument_error<T>(detail::uplo_letter(uplo), n, nrhs, A, lda,
                                                                    strideA, B, ldb, strideB, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
  if (nrhs > 0)
    kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, stream);
}

// ---- out of place ---------------------------------------------------------------------------------------

template <class T>
void potrf_batched_ex(Uplo uplo, int n, const T* A, long long rowStrideA, long long colStrideA, long long strideA,
                      T* L, int ldl, long long strideL, int batch, int* info, Stream stream) {
  check_arguments("potrf_batched_ex",
                  potrf_batched_out_of_place_argument_error<T>(detail::uplo_letter(uplo), n, A, rowStrideA, colStrideA,
                                                               strideA, L, ldl, strideL, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch, info,
                       stream);
}

// ---- the inverse from the factors ------------------------------------------------------------------------

template <class T>
void potri_batched_ex(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info, Stream stream) {
  check_arguments("potri_batched_ex",
                  potrf_batched_argument_error<T>(detail::uplo_letter(uplo), n, A, lda, strideA, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potri_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
}

template <class T>
void potri_batched_ex(Uplo uplo, int n, const T* L, long long rowStrideL, long long colStrideL, long long strideL,
                      T* X, int ldx, long long strideX, int batch, int* info, Stream stream) {
  check_arguments("potri_batched_ex", out_of_place_matrices_argument_error<T>(detail::uplo_letter(uplo), n, L,
                                                                            rowStrideL, colStrideL, strideL, X, ldx,
                                                                            strideX, batch));
  if (n == 0 || batch == 0) return;
  kc::potri_batched<T>(kc::batch_uplo(uplo), n, L, rowStrideL, colStrideL, strideL, X, ldx, strideX, batch, info,
                       stream);
}

// ---- arrays of pointers -------------------------------------------------------------------------------

template <class T>
void potri_batched_ex(Uplo uplo, int n, T* const* A_array, int lda, int batch, int* info, Stream stream) {
  check_arguments("potri_batched_ex", potrf_batched_pointers_argument_error<T>(detail::uplo_letter(uplo), n, A_array,
                                                                               lda, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potri_batched<T>(kc::batch_uplo(uplo), n, A_array, lda, batch, info, stream);
}

template <class T>
void potrf_batched_ex(Uplo uplo, int n, T* const* A_array, int lda, int batch, int* info, Stream stream) {
  check_arguments("potrf_batched_ex", potrf_batched_pointers_argument_error<T>(detail::uplo_letter(uplo), n, A_array,
                                                                               lda, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A_array, lda, batch, info, stream);
}

template <class T>
void potrs_batched_ex(Uplo uplo, int n, int nrhs, const T* const* A_array, int lda, T* const* B_array, int ldb,
                      int batch, const int* info, Stream stream) {
  check_arguments("potrs_batched_ex", potrs_batched_pointers_argument_error<T>(detail::uplo_letter(uplo), n, nrhs,
                                                                               A_array, lda, B_array, ldb, batch));
  if (n == 0 || nrhs == 0 || batch == 0) return;
  kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A_array, lda, B_array, ldb, batch, info, stream);
}

template <class T>
void posv_batched_ex(Uplo uplo, int n, int nrhs, T* const* A_array, int lda, T* const* B_array, int ldb, int batch,
                     int* info, Stream stream) {
  check_arguments("posv_batched_ex", posv_batched_pointers_argument_error<T>(detail::uplo_letter(uplo), n, nrhs,
                                                                             A_array, lda, B_array, ldb, batch, info));
  if (n == 0 || batch == 0) return;
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A_array, lda, batch, info, stream);
  if (nrhs > 0) kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A_array, lda, B_array, ldb, batch, info, stream);
}

// ---- variable sizes -----------------------------------------------------------------------------------
// The sizes are device arrays: a first kernel checks them where they are and writes the orders the
// kernels use (-1 for an invalid matrix, which they then leave alone) to a stream-ordered workspace.

// One matrix at a time in place with potrf_vbatched_ex's arguments (potrf, potri): the sizes
// screened at potrf's positions, then `operation` on the valid matrices.
template <class T, class Operation>
void in_place_variable(const char* name, Uplo uplo, const int* n, int max_n, T* const* A_array, const int* lda,
                       int batch, int* info, Stream stream, Operation operation) {
  check_arguments(name, potrf_vbatched_device_argument_error<T>(detail::uplo_letter(uplo), n, max_n, A_array, lda,
                                                                batch, info));
  if (max_n == 0 || batch == 0) return;
  StreamWorkspace checked_n(static_cast<std::size_t>(batch), stream);
  kc::screen_variable_sizes(n, max_n, lda, nullptr, batch, checked_n.get(), info, potrf_size_positions, stream);
  operation(kc::batch_uplo(uplo), checked_n.get(), max_n, A_array, lda, batch, info, stream);
  checked_n.release();
}

template <class T>
void potrf_vbatched_ex(Uplo uplo, const int* n, int max_n, T* const* A_array, const int* lda, int batch, int* info,
                       Stream stream) {
  in_place_variable("potrf_vbatched_ex", uplo, n, max_n, A_array, lda, batch, info, stream,
                    [](auto... args) { kc::potrf_vbatched<T>(args...); });
}

template <class T>
void potri_vbatched_ex(Uplo uplo, const int* n, int max_n, T* const* A_array, const int* lda, int batch, int* info,
                       Stream stream) {
  in_place_variable("potri_vbatched_ex", uplo, n, max_n, A_array, lda, batch, info, stream,
                    [](auto... args) { kc::potri_vbatched<T>(args...); });
}

template <class T>
void potrs_vbatched_ex(Uplo uplo, const int* n, int max_n, int nrhs, const T* const* A_array, const int* lda,
                       T* const* B_array, const int* ldb, int batch, const int* info, Stream stream) {
  check_arguments("potrs_vbatched_ex", potrs_vbatched_device_argument_error<T>(detail::uplo_letter(uplo), n, max_n,
                                                                               nrhs, A_array, lda, B_array, ldb,
                                                                               batch));
  if (max_n == 0 || nrhs == 0 || batch == 0) return;
  StreamWorkspace checked_n(static_cast<std::size_t>(batch), stream);
  // info is the caller's (read only, may be null): an invalid matrix is skipped, not reported.
  kc::screen_variable_sizes(n, max_n, lda, ldb, batch, checked_n.get(), nullptr, solve_size_positions, stream);
  kc::potrs_vbatched<T>(kc::batch_uplo(uplo), checked_n.get(), max_n, nrhs, A_array, lda, B_array, ldb, batch, info,
                        stream);
  checked_n.release();
}

template <class T>
void posv_vbatched_ex(Uplo uplo, const int* n, int max_n, int nrhs, T* const* A_array, const int* lda,
                      T* const* B_array, const int* ldb, int batch, int* info, Stream stream) {
  check_arguments("posv_vbatched_ex", posv_vbatched_device_argument_error<T>(detail::uplo_letter(uplo), n, max_n, nrhs,
                                                                             A_array, lda, B_array, ldb, batch, info));
  if (max_n == 0 || batch == 0) return;
  StreamWorkspace checked_n(static_cast<std::size_t>(batch), stream);
  kc::screen_variable_sizes(n, max_n, lda, nrhs > 0 ? ldb : nullptr, batch, checked_n.get(), info,
                            solve_size_positions, stream);
  kc::potrf_vbatched<T>(kc::batch_uplo(uplo), checked_n.get(), max_n, A_array, lda, batch, info, stream);
  if (nrhs > 0)
    kc::potrs_vbatched<T>(kc::batch_uplo(uplo), checked_n.get(), max_n, nrhs, A_array, lda, B_array, ldb, batch, info,
                          stream);
  checked_n.release();
}

// ---- checking forms -----------------------------------------------------------------------------------

template <class T>
int potrf_batched(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* host_info, Stream stream) {
  // potrf_batched_ex's list, with info optional: host_info may be null.
  check_arguments("potrf_batched",
                  strided_matrices_argument_error<T>(detail::uplo_letter(uplo), n, A, lda, strideA, batch));
  if (batch == 0) return 0;
  if (n == 0) return no_failures(batch, host_info);
  return count_failures(batch, host_info, stream, [&](int* info) {
    kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
  });
}

template <class T>
int potri_batched(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* host_info, Stream stream) {
  check_arguments("potri_batched",
                  strided_matrices_argument_error<T>(detail::uplo_letter(uplo), n, A, lda, strideA, batch));
  if (batch == 0) return 0;
  if (n == 0) return no_failures(batch, host_info);
  return count_failures(batch, host_info, stream, [&](int* info) {
    kc::potri_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
  });
}

template <class T>
int posv_batched(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb, long long strideB,
                 int batch, int* host_info, Stream stream) {
  // posv_batched_ex's list, with info optional: the same checks as potrs_batched's.
  check_arguments("posv_batched", potrs_batched_argument_error<T>(detail::uplo_letter(uplo), n, nrhs, A, lda, strideA,
                                                                  B, ldb, strideB, batch));
  if (batch == 0) return 0;
  if (n == 0) return no_failures(batch, host_info);
  return count_failures(batch, host_info, stream, [&](int* info) {
    kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, info, stream);
    if (nrhs > 0)
      kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, stream);
  });
}

template <class T>
void zero_opposite_triangle(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, Stream stream) {
  check_arguments("zero_opposite_triangle",
                  strided_matrices_argument_error<T>(detail::uplo_letter(uplo), n, A, lda, strideA, batch));
  if (n == 0 || batch == 0) return;
  kc::zero_opposite_triangle_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, stream);
}

#else  // !TESSERA_HAVE_CUDA

namespace {

[[noreturn]] void without_cuda(const char* routine) {
  throw RuntimeError(std::string("tessera::device::") + routine +
                     ": Tessera was built without CUDA (device-resident operations need it)");
}

}  // namespace

int read_info(const int* info, int count, int* host_info, Stream) {
  if (info_to_read(info, count, host_info)) without_cuda("read_info");
  return 0;
}

template <class T>
void potrf_batched_ex(Uplo, int, T*, int, long long, int, int*, Stream) {
  without_cuda("potrf_batched_ex");
}
template <class T>
void potrs_batched_ex(Uplo, int, int, const T*, int, long long, T*, int, long long, int, const int*, Stream) {
  without_cuda("potrs_batched_ex");
}
template <class T>
void posv_batched_ex(Uplo, int, int, T*, int, long long, T*, int, long long, int, int*, Stream) {
  without_cuda("posv_batched_ex");
}
template <class T>
void potrf_batched_ex(Uplo, int, const T*, long long, long long, long long, T*, int, long long, int, int*, Stream) {
  without_cuda("potrf_batched_ex");
}
template <class T>
void potri_batched_ex(Uplo, int, T*, int, long long, int, int*, Stream) {
  without_cuda("potri_batched_ex");
}
template <class T>
void potri_batched_ex(Uplo, int, const T*, long long, long long, long long, T*, int, long long, int, int*, Stream) {
  without_cuda("potri_batched_ex");
}
template <class T>
void potri_batched_ex(Uplo, int, T* const*, int, int, int*, Stream) {
  without_cuda("potri_batched_ex");
}
template <class T>
int potri_batched(Uplo, int, T*, int, long long, int, int*, Stream) {
  without_cuda("potri_batched");
}
template <class T>
void potrf_batched_ex(Uplo, int, T* const*, int, int, int*, Stream) {
  without_cuda("potrf_batched_ex");
}
template <class T>
void potrs_batched_ex(Uplo, int, int, const T* const*, int, T* const*, int, int, const int*, Stream) {
  without_cuda("potrs_batched_ex");
}
template <class T>
void posv_batched_ex(Uplo, int, int, T* const*, int, T* const*, int, int, int*, Stream) {
  without_cuda("posv_batched_ex");
}
template <class T>
void potrf_vbatched_ex(Uplo, const int*, int, T* const*, const int*, int, int*, Stream) {
  without_cuda("potrf_vbatched_ex");
}
template <class T>
void potri_vbatched_ex(Uplo, const int*, int, T* const*, const int*, int, int*, Stream) {
  without_cuda("potri_vbatched_ex");
}
template <class T>
void potrs_vbatched_ex(Uplo, const int*, int, int, const T* const*, const int*, T* const*, const int*, int, const int*,
                       Stream) {
  without_cuda("potrs_vbatched_ex");
}
template <class T>
void posv_vbatched_ex(Uplo, const int*, int, int, T* const*, const int*, T* const*, const int*, int, int*, Stream) {
  without_cuda("posv_vbatched_ex");
}
template <class T>
int potrf_batched(Uplo, int, T*, int, long long, int, int*, Stream) {
  without_cuda("potrf_batched");
}
template <class T>
int posv_batched(Uplo, int, int, T*, int, long long, T*, int, long long, int, int*, Stream) {
  without_cuda("posv_batched");
}
template <class T>
void zero_opposite_triangle(Uplo, int, T*, int, long long, int, Stream) {
  without_cuda("zero_opposite_triangle");
}

#endif  // TESSERA_HAVE_CUDA

#define TESSERA_INSTANTIATE_DEVICE_BATCHED(T)                                                                     \
  template void potrf_batched_ex<T>(Uplo, int, T*, int, long long, int, int*, Stream);                            \
  template void potrs_batched_ex<T>(Uplo, int, int, const T*, int, long long, T*, int, long long, int, const int*, \
                                    Stream);                                                                      \
  template void posv_batched_ex<T>(Uplo, int, int, T*, int, long long, T*, int, long long, int, int*, Stream);    \
  template void potrf_batched_ex<T>(Uplo, int, const T*, long long, long long, long long, T*, int, long long, int,   \
                                    int*, Stream);                                                                \
  template void potri_batched_ex<T>(Uplo, int, T*, int, long long, int, int*, Stream);                            \
  template void potri_batched_ex<T>(Uplo, int, const T*, long long, long long, long long, T*, int, long long, int,   \
                                    int*, Stream);                                                                \
  template int potri_batched<T>(Uplo, int, T*, int, long long, int, int*, Stream);                                \
  template void potri_batched_ex<T>(Uplo, int, T* const*, int, int, int*, Stream);                                \
  template void potrf_batched_ex<T>(Uplo, int, T* const*, int, int, int*, Stream);                                \
  template void potrs_batched_ex<T>(Uplo, int, int, const T* const*, int, T* const*, int, int, const int*,        \
                                    Stream);                                                                      \
  template void posv_batched_ex<T>(Uplo, int, int, T* const*, int, T* const*, int, int, int*, Stream);            \
  template void potrf_vbatched_ex<T>(Uplo, const int*, int, T* const*, const int*, int, int*, Stream);            \
  template void potri_vbatched_ex<T>(Uplo, const int*, int, T* const*, const int*, int, int*, Stream);            \
  template void potrs_vbatched_ex<T>(Uplo, const int*, int, int, const T* const*, const int*, T* const*,          \
                                     const int*, int, const int*, Stream);                                        \
  template void posv_vbatched_ex<T>(Uplo, const int*, int, int, T* const*, const int*, T* const*, const int*, int, \
                                    int*, Stream);                                                                \
  template int potrf_batched<T>(Uplo, int, T*, int, long long, int, int*, Stream);                                \
  template int posv_batched<T>(Uplo, int, int, T*, int, long long, T*, int, long long, int, int*, Stream);        \
  template void zero_opposite_triangle<T>(Uplo, int, T*, int, long long, int, Stream);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE_DEVICE_BATCHED)
#undef TESSERA_INSTANTIATE_DEVICE_BATCHED

}  // namespace tessera::device
