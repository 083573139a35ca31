#include "gpu_throughput.hpp"

#include <vector>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include "device_memory.hpp"
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_CUDA
std::vector<GpuThroughput> cuda_worker_throughputs() {
  const std::vector<int> devices = cuda_devices_in_order();
  std::vector<GpuThroughput> gpus;
  for (int device : devices) {
    int sms = 0, clock_khz = 0, major = 0, minor = 0;
    // An attribute that cannot be read leaves the GPU estimated at 0 GFLOP/s: it still counts
    // as present (auto then runs hybrid, which is always correct).
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    gpus.push_back({sms, clock_khz * 1e-6, major * 10 + minor});
  }
  return gpus;
}
#else
std::vector<GpuThroughput> cuda_worker_throughputs() { return {}; }
#endif

}  // namespace tessera::detail
