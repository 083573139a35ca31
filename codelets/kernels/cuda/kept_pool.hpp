// Device memory from Tessera's own stream-ordered pool of the current device (tile_config.cu),
// whose freed blocks are kept for the next call instead of going back to the driver at every
// synchronisation, as the device's default pool does: a call that waits for its work and then
// allocates again would otherwise map fresh memory every time.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace tessera::kernels::cuda {

namespace detail {
void* pool_alloc(std::size_t bytes, cudaStream_t stream);
}  // namespace detail

// `elements` of T (at least one) from that pool for one call, given back on every path out.
template <class T>
class KeptPoolBuffer {
 public:
  KeptPoolBuffer(std::size_t elements, cudaStream_t stream)
      : data_(static_cast<T*>(detail::pool_alloc(std::max<std::size_t>(elements, 1) * sizeof(T), stream))),
        stream_(stream) {}
  ~KeptPoolBuffer() { cudaFreeAsync(data_, stream_); }
  KeptPoolBuffer(const KeptPoolBuffer&) = delete;
  KeptPoolBuffer& operator=(const KeptPoolBuffer&) = delete;
  T* data() const { return data_; }

 private:
  T* data_;
  cudaStream_t stream_;
};

}  // namespace tessera::kernels::cuda
