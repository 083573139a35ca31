// Device memory in the order of a stream (cudaMallocAsync, cudaFreeAsync): allocated for the work
// enqueued after it, given back after the work enqueued before its release, never a
// synchronisation of the device.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "check.hpp"

namespace tessera::kernels::cuda {

// `elements` of T (at least one) for one call, given back on every path out.
template <class T>
class StreamBuffer {
 public:
  StreamBuffer(std::size_t elements, cudaStream_t stream) : stream_(stream) {
    TESSERA_CUDA_CHECK(
        cudaMallocAsync(reinterpret_cast<void**>(&data_), std::max<std::size_t>(elements, 1) * sizeof(T), stream_));
  }
  ~StreamBuffer() { cudaFreeAsync(data_, stream_); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

// A workspace kept between calls (`memory`, `bytes` of it) grown to at least `needed` bytes in the
// order of `stream`; returns it.
inline void* grown_workspace(void*& memory, std::size_t& bytes, std::size_t needed, cudaStream_t stream) {
  if (needed <= bytes) return memory;
  if (memory) TESSERA_CUDA_CHECK(cudaFreeAsync(memory, stream));
  memory = nullptr;
  bytes = 0;
  TESSERA_CUDA_CHECK(cudaMallocAsync(&memory, needed, stream));
  bytes = needed;
  return memory;
}

// Offsets of buffers carved one after the other from one allocation, each aligned as cudaMalloc's.
class Carving {
 public:
  std::size_t place(std::size_t count, std::size_t size) {
    const std::size_t at = (bytes_ + kAlignment - 1) / kAlignment * kAlignment;
    bytes_ = at + count * size;
    return at;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  static constexpr std::size_t kAlignment = 256;
  std::size_t bytes_ = 0;
};

}  // namespace tessera::kernels::cuda
