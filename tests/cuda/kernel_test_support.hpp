// What the CUDA kernel tests share: the check for a usable device, and the precision helpers for
// tolerances and for the NaN poison that must come back bit-identical.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace tessera::test {

// Why no CUDA device can be used ("" when one can).
inline std::string missing_gpu_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
  }
  if (count == 0) return "cudaGetDeviceCount returned 0";
  return {};
}

// Skips the test, with the reason, where no CUDA device can be used.
#define TESSERA_REQUIRE_CUDA_DEVICE()                                             \
  do {                                                                            \
    const std::string why_ = ::tessera::test::missing_gpu_reason();               \
    if (!why_.empty()) GTEST_SKIP() << "no CUDA device: " << why_;                \
  } while (0)

// A host vector's copy in GPU memory, freed with the object.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : count_(host.size()) {
    if (cudaMalloc(&data_, std::max<std::size_t>(count_, 1) * sizeof(T)) != cudaSuccess ||
        cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      ADD_FAILURE() << "cannot copy " << count_ << " elements to the GPU";
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return data_; }
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    if (cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
      ADD_FAILURE() << "cannot copy " << count_ << " elements from the GPU";
    return host;
  }

 private:
  std::size_t count_;
  T* data_ = nullptr;
};

template <class T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

// Marks storage a kernel must not write (or must write before it is read).
template <class T>
T poison() {
  return std::numeric_limits<T>::quiet_NaN();
}

// Equal to the bit, NaNs included.
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace tessera::test
