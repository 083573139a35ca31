// What the kernel benchmarks share on the device: whether there is one, and its memory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cuda/batched_kernels.hpp"
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

// The batched kernels' shapes a tuning sweep measures for order n: every register-kernel block
// size (n <= 32), or every compiled panel shape.
inline std::vector<kernels::cuda::BatchedOptions> batched_kernel_shapes(int n) {
  std::vector<kernels::cuda::BatchedOptions> candidates;
  if (n <= 32) {
    for (int threads : {32, 64, 128, 256}) {
      kernels::cuda::BatchedOptions o;
      o.threads = threads;
      candidates.push_back(o);
    }
    return candidates;
  }
  const kernels::cuda::PanelShape* shapes = nullptr;
  const int count = kernels::cuda::potrf_batched_panel_shapes(&shapes);
  for (int i = 0; i < count; ++i) {
    kernels::cuda::BatchedOptions o;
    o.panel_width = shapes[i].panel_width;
    o.threads = shapes[i].threads;
    o.rows_per_thread = shapes[i].rows_per_thread;
    o.update_width = shapes[i].update_width;
    candidates.push_back(o);
  }
  return candidates;
}

}  // namespace tessera::bench
