#include "automatic_mode.hpp"

#include <fmt/core.h>

#include <vector>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include "device_memory.hpp"
#endif

namespace tessera::detail {

namespace {

// FP64 fused multiply-adds per SM per cycle. The data-centre chips: P100 and V100 32, A100 64
// (its FP64 tensor cores), H100 128 (likewise), B100/B200 64; every other chip runs FP64 at 1/32
// or 1/64 of FP32, about 2.
int fp64_fma_per_sm(int compute_capability) {
  switch (compute_capability) {
    case 60:
    case 70: return 32;
    case 80: return 64;
    case 90: return 128;
    case 100: return 64;
    default: return 2;
  }
}

}  // namespace

double estimated_gpu_gflops(const GpuThroughput& gpu) {
  return 2.0 * fp64_fma_per_sm(gpu.compute_capability) * gpu.multiprocessors * gpu.clock_ghz;
}

double estimated_cpu_gflops(int cpu_workers) { return 16.0 * 2.5 * cpu_workers; }

ModeChoice choose_automatic_mode(int cpu_workers, const std::vector<GpuThroughput>& gpus) {
  if (gpus.empty()) return {Mode::cpu, "no CUDA worker"};
  double gpu = 0;
  for (const GpuThroughput& g : gpus) gpu += estimated_gpu_gflops(g);
  const double cpu = estimated_cpu_gflops(cpu_workers);
  const double share = gpu / (gpu + cpu);
  const std::string estimate = fmt::format("{} GPU(s) ~{:.0f} GFLOP/s FP64 against {} CPU worker(s) ~{:.0f} GFLOP/s",
                                           gpus.size(), gpu, cpu_workers, cpu);
  if (share >= gpu_only_share)
    return {Mode::gpu, fmt::format("the GPUs hold {:.1f}% of the estimated throughput ({})", 100 * share, estimate)};
  return {Mode::hybrid,
          fmt::format("the CPUs hold {:.1f}% of the estimated throughput ({})", 100 * (1 - share), estimate)};
}

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
