#include "device_memory.hpp"

#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA

#include <cuda_runtime.h>
#include <starpu.h>

#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "current_device.hpp"
#include "kernels/cuda/batched_kernels.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Columns a whole number of 256 bytes apart, so that every tile's columns keep the alignment of
// the allocation (Tessera's tile kernels load 16 bytes at a time where columns allow it).
int padded_ld(int n, std::size_t element_bytes) {
  const int per_256 = static_cast<int>(256 / element_bytes);
  return (n + per_256 - 1) / per_256 * per_256;
}

std::size_t free_bytes_of_current_device() {
  std::size_t free_bytes = 0, total_bytes = 0;
  TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

void require_free_memory(int device, std::size_t bytes, const std::string& what, const std::string& remedy) {
  const std::size_t free_bytes = free_bytes_of_current_device();
  if (bytes <= free_bytes) return;
  const std::size_t mib = std::size_t(1) << 20;
  throw ResourceError(what + " of " + std::to_string(bytes / mib) + " MiB, and GPU " + std::to_string(device) +
                      " has " + std::to_string(free_bytes / mib) + " MiB free" + remedy);
}

}  // namespace

int first_cuda_device() {
  const std::vector<int> devices = cuda_devices_in_order();
  return devices.empty() ? -1 : devices.front();
}

std::size_t free_device_memory(int device) {
  const CurrentDevice current(device);
  return free_bytes_of_current_device();
}

std::vector<int> cuda_devices_in_order() {
  std::set<int> devices;
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER)
      devices.insert(starpu_worker_get_devid(static_cast<int>(w)));
  return {devices.begin(), devices.end()};
}

template <class T>
DeviceTiles<T>::DeviceTiles(std::vector<int> devices, OwnedPanels layout)
    : devices_(std::move(devices)), layout_(std::move(layout)), memory_(devices_.size(), nullptr) {
  if (static_cast<int>(devices_.size()) != layout_.gpus())
    throw std::logic_error("DeviceTiles: one device per owner of the layout");
  try {
    for (std::size_t g = 0; g < devices_.size(); ++g) {
      const std::size_t bytes = bytes_of(layout_, static_cast<int>(g));
      if (bytes == 0) continue;
      const CurrentDevice current(devices_[g]);
      require_free_memory(devices_[g], bytes, "the tiles of a host matrix are staged on the GPU", "");
      TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&memory_[g]), bytes));
    }
  } catch (...) {
    release();
    throw;
  }
}

template <class T>
DeviceTiles<T>::~DeviceTiles() {
  release();
}

template <class T>
void DeviceTiles<T>::release() noexcept {
  int previous = 0;
  cudaGetDevice(&previous);
  for (std::size_t g = 0; g < devices_.size(); ++g) {
    if (!memory_[g]) continue;
    cudaSetDevice(devices_[g]);
    cudaFree(memory_[g]);  // nothing to report to: a failure leaves at worst the memory allocated
    memory_[g] = nullptr;
  }
  cudaSetDevice(previous);
}

#define TESSERA_INSTANTIATE(T) template class DeviceTiles<T>;
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

int cuda_device_holding(const void* pointer) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status == cudaErrorInvalidValue) {  // CUDA before 11 for memory it does not know
    cudaGetLastError();
    return -1;
  }
  TESSERA_CUDA_CHECK(status);
  const bool on_device = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return on_device ? attributes.device : -1;
}

bool pinned_host_memory(const void* pointer) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

void synchronize_stream(void* stream) { TESSERA_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream))); }

template <class T>
void load_lower_on_stream(int device, int n, const T* A, long long row_stride, long long col_stride, T* L, int ldl,
                          bool conjugate, void* stream) {
  const CurrentDevice current(device);
  kernels::cuda::load_lower(n, A, row_stride, col_stride, L, ldl, conjugate, as_stream(stream));
}

template <class T>
void lower_to_upper_on_stream(int device, int n, T* L, int ldl, void* stream) {
  const CurrentDevice current(device);
  kernels::cuda::transpose_triangle(kernels::cuda::Triangle::upper, n, L, ldl, L, ldl, as_stream(stream));
  kernels::cuda::zero_opposite_triangle_batched(kernels::cuda::BatchUplo::upper, n, L, ldl, 0, 1, as_stream(stream));
}

template <class T>
void finish_inverse_on_stream(int device, int n, const T* factor, long long diagonal_stride, T* X, int ldx, int* info,
                              void* stream) {
  const CurrentDevice current(device);
  kernels::cuda::finish_inverse(n, factor, diagonal_stride, X, ldx, info, as_stream(stream));
}

#define TESSERA_INSTANTIATE(T)                                                                           \
  template void load_lower_on_stream<T>(int, int, const T*, long long, long long, T*, int, bool, void*); \
  template void lower_to_upper_on_stream<T>(int, int, T*, int, void*);                                   \
  template void finish_inverse_on_stream<T>(int, int, const T*, long long, T*, int, int*, void*);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

void write_int_on_stream(int* destination, int value, void* stream) {
  // From pageable memory the copy has read `value` when it returns (CUDA stages such a source).
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(destination, &value, sizeof(int), cudaMemcpyHostToDevice, as_stream(stream)));
}

void copy_matrix_on_stream(int rows, int cols, std::size_t element_bytes, const void* src, int lds, void* dst, int ldd,
                           void* stream) {
  if (rows <= 0 || cols <= 0) return;
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(dst, element_bytes * ldd, src, element_bytes * lds, element_bytes * rows, cols,
                                       cudaMemcpyDeviceToDevice, as_stream(stream)));
}

namespace {

// One value of type Value that `enqueue(value_on_device, stream)` writes in device memory of the
// GPU holding `matrix`, in the order of `stream`, read back once it is there.
template <class Value, class Enqueue>
Value read_back_on_stream(const void* matrix, void* stream, Enqueue&& enqueue) {
  const CurrentDevice current(cuda_device_holding(matrix));
  cudaStream_t s = as_stream(stream);
  Value* on_device = nullptr;
  TESSERA_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&on_device), sizeof(Value), s));
  Value value{};
  try {
    enqueue(on_device, s);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&value, on_device, sizeof(Value), cudaMemcpyDeviceToHost, s));
  } catch (...) {
    cudaFreeAsync(on_device, s);
    throw;
  }
  TESSERA_CUDA_CHECK(cudaFreeAsync(on_device, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return value;
}

}  // namespace

template <class T>
double log_determinant_on_stream(int n, const T* A, int lda, void* stream) {
  return read_back_on_stream<double>(A, stream, [&](double* sum, cudaStream_t s) {
    kernels::cuda::log_diagonal_sum(n, A, lda, sum, s);
  });
}

template <class T>
int first_zero_diagonal_on_stream(int n, const T* A, int lda, void* stream) {
  return read_back_on_stream<int>(A, stream, [&](int* first, cudaStream_t s) {
    kernels::cuda::first_zero_diagonal(n, A, lda, first, s);
  });
}

template <class T>
TransposedUpper<T>::TransposedUpper(int device, int n, const T* upper, int ld)
    : device_(device), n_(n), ld_(padded_ld(n, sizeof(T))) {
  const CurrentDevice current(device_);
  const std::size_t bytes = static_cast<std::size_t>(ld_) * static_cast<std::size_t>(n_) * sizeof(T);
  require_free_memory(device_, bytes, "an upper-stored matrix is factored in a lower workspace",
                      "; a lower-stored matrix needs none");
  TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&lower_), bytes));
  cudaStream_t stream = nullptr;
  try {
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_ = stream;
    kernels::cuda::transpose_triangle(kernels::cuda::Triangle::lower, n_, upper, ld, lower_, ld_, stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    release();
    throw;
  }
}

template <class T>
TransposedUpper<T>::~TransposedUpper() {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  release();
  cudaSetDevice(previous);
}

template <class T>
void TransposedUpper<T>::release() noexcept {
  // Nothing to report to: a failure here leaves at worst the memory allocated.
  if (stream_) cudaStreamDestroy(as_stream(stream_));
  cudaFree(lower_);
  stream_ = nullptr;
  lower_ = nullptr;
}

template <class T>
void TransposedUpper<T>::store(T* upper, int ld) const {
  const CurrentDevice current(device_);
  kernels::cuda::transpose_triangle(kernels::cuda::Triangle::upper, n_, lower_, ld_, upper, ld, as_stream(stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream_)));
}

#define TESSERA_INSTANTIATE(T) template class TransposedUpper<T>;
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

#define TESSERA_INSTANTIATE(T)                                                    \
  template double log_determinant_on_stream<T>(int, const T*, int, void*);        \
  template int first_zero_diagonal_on_stream<T>(int, const T*, int, void*);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail

#endif
