// What the device-resident API (tessera/device.hpp) needs of CUDA, behind an interface without
// CUDA's types: where a matrix lives, waiting for the caller's stream, and the workspace of an
// upper-stored matrix. Only built with CUDA.
#pragma once

#ifdef TESSERA_HAVE_CUDA

#include <cstddef>

namespace tessera::detail {

// The CUDA device whose memory holds `pointer` (device or managed memory), or -1 for host memory
// (pageable, pinned, or memory CUDA does not know).
int cuda_device_holding(const void* pointer);

// Whether `pointer` is host memory pinned with CUDA (cudaHostAlloc, cudaHostRegister).
bool pinned_host_memory(const void* pointer);

// Blocks until the work already enqueued on `stream` (a cudaStream_t; null: the legacy default
// stream of the calling thread's current device) is complete.
void synchronize_stream(void* stream);

// The smallest device number driven by one of the runtime's CUDA workers, or -1 without one.
int first_cuda_device();

// Bytes free on `device` now (cudaMemGetInfo).
std::size_t free_device_memory(int device);

// An n x n column-major matrix in the memory of `device` (cudaMalloc; columns padded to 256
// bytes), for a host array's tiles while a call runs on the GPU (HostTiles::staged).
template <class T>
class DeviceMatrix {
 public:
  // Throws ResourceError when the GPU has not that much memory free.
  DeviceMatrix(int device, int n);
  ~DeviceMatrix();
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;

  T* data() const noexcept { return data_; }
  int ld() const noexcept { return ld_; }
  int device() const noexcept { return device_; }
  // The bytes an n x n matrix takes.
  static std::size_t bytes_for(int n);

 private:
  int device_;
  int ld_;
  T* data_ = nullptr;
};

// The upper triangle of an n x n matrix on a GPU, transposed into the lower triangle of a
// workspace on the same GPU: the tile algorithm factors lower triangles only, and the caller's
// lower triangle is not Tessera's to write. Costs n x ld() elements of GPU memory while it lives
// and one pass over the triangle each way. The memory comes from cudaMalloc, not from the device's
// stream-ordered pool: StarPU may copy the workspace's tiles to another GPU, and other GPUs see a
// pool's allocations only once the pool's access is changed, a setting of the whole process.
template <class T>
class TransposedUpper {
 public:
  // Allocates the workspace on `device` and copies the upper triangle of `upper` (leading
  // dimension ld) into it; returns once the copy is complete. Throws ResourceError when the GPU
  // has not that much memory free.
  TransposedUpper(int device, int n, const T* upper, int ld);
  ~TransposedUpper();
  TransposedUpper(const TransposedUpper&) = delete;
  TransposedUpper& operator=(const TransposedUpper&) = delete;

  T* lower() const noexcept { return lower_; }
  int ld() const noexcept { return ld_; }
  // The lower triangle, transposed, into the upper triangle of `upper` (nothing else of it is
  // written); returns once the copy is complete.
  void store(T* upper, int ld) const;

 private:
  // Frees the workspace and the stream (device_ current).
  void release() noexcept;

  int device_;
  int n_;
  int ld_;
  void* stream_ = nullptr;  // a non-blocking stream of `device`, for the copies
  T* lower_ = nullptr;
};

}  // namespace tessera::detail

#endif
