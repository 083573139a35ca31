// What the kernel benchmarks share on the device: whether there is one, and its memory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "cuda/check.hpp"

namespace tessera::bench {

inline bool cuda_device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// count elements of T in device memory, freed with the object. Never empty (one element at
// least), so that get() is a valid device pointer even for count 0.
template <class T>
class Device {
 public:
  explicit Device(std::size_t count) : count_(count) {
    TESSERA_CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)));
  }
  ~Device() { cudaFree(ptr_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  T* get() const { return ptr_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

}  // namespace tessera::bench
