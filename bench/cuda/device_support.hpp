// What the kernel benchmarks share on the device: whether there is one, its memory, and a timer.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"

namespace tessera::bench {

inline bool cuda_device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// The PCI address of CUDA device `device` ("0000:41:00.0"), by which NVML finds the same GPU.
inline std::string pci_bus_id(int device) {
  char id[32] = {};
  TESSERA_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
}

// x := uniform in [-scale, scale] from a hash of each index and the seed: the same values every run.
template <class T>
__global__ void uniform_kernel(T* x, std::size_t count, unsigned seed, T scale) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned long long h = (e + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    x[e] = T((static_cast<double>(h >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0) * scale);
  }
}
template <class T>
void fill_uniform(T* x, std::size_t count, unsigned seed, T scale = T(1)) {
  uniform_kernel<<<1024, 256>>>(x, count, seed, scale);
  TESSERA_CUDA_CHECK_LAUNCH();
}

// Reads a buffer larger than the L2 cache, so that the next timed work finds its data in memory.
static __global__ void flush_kernel(const float4* buf, std::size_t count, float* sink) {
  float acc = 0;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = buf[e];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 123.456f) *sink = acc;  // keeps the loads alive
}

// Median of timed repetitions on the default stream, each after prepare() and an L2 flush.
class Timer {
 public:
  Timer() {
    TESSERA_CUDA_CHECK(cudaEventCreate(&start_));
    TESSERA_CUDA_CHECK(cudaEventCreate(&stop_));
    int dev = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    int l2 = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    flush_count_ = std::max<std::size_t>(4u * l2, 256u << 20) / sizeof(float4);
    TESSERA_CUDA_CHECK(cudaMalloc(&flush_buf_, flush_count_ * sizeof(float4)));
    TESSERA_CUDA_CHECK(cudaMemset(flush_buf_, 0, flush_count_ * sizeof(float4)));
    TESSERA_CUDA_CHECK(cudaMalloc(&sink_, sizeof(float)));
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(flush_buf_);
    cudaFree(sink_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Median over `reps` of the time of work(), after two untimed calls.
  double median_ms(int reps, const std::function<void()>& prepare, const std::function<void()>& work) {
    for (int w = 0; w < 2; ++w) {
      prepare();
      work();
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
      prepare();
      flush();
      TESSERA_CUDA_CHECK(cudaEventRecord(start_));
      work();
      TESSERA_CUDA_CHECK(cudaEventRecord(stop_));
      TESSERA_CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

  void flush() {
    flush_kernel<<<1024, 256>>>(flush_buf_, flush_count_, sink_);
    TESSERA_CUDA_CHECK_LAUNCH();
  }

 private:
  cudaEvent_t start_{}, stop_{};
  float4* flush_buf_ = nullptr;
  float* sink_ = nullptr;
  std::size_t flush_count_ = 0;
};

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
