// What the CUDA kernel tests share: the check for a usable device, and the precision helpers for
// tolerances and for the NaN poison that must come back bit-identical.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <limits>
#include <string>

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
