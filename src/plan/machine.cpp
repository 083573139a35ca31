#include "machine.hpp"

#include <fmt/core.h>

#include "thresholds.hpp"

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

ModeChoice choose_automatic_mode(int cpu_workers, const std::vector<GpuThroughput>& gpus, Objective objective) {
  if (gpus.empty()) return {Mode::cpu, "no CUDA worker"};
  if (objective == Objective::energy)
    return {Mode::gpu, fmt::format("objective energy: every task on the {} GPU(s), none on the CPUs", gpus.size())};
  double gpu = 0;
  for (const GpuThroughput& g : gpus) gpu += estimated_gpu_gflops(g);
  const double cpu = estimated_cpu_gflops(cpu_workers);
  const double share = gpu / (gpu + cpu);
  const std::string estimate = fmt::format("{} GPU(s) ~{:.0f} GFLOP/s FP64 against {} CPU worker(s) ~{:.0f} GFLOP/s",
                                           gpus.size(), gpu, cpu_workers, cpu);
  if (share >= kThresholds.gpu_only_share)
    return {Mode::gpu, fmt::format("the GPUs hold {:.1f}% of the estimated throughput ({})", 100 * share, estimate)};
  return {Mode::hybrid,
          fmt::format("the CPUs hold {:.1f}% of the estimated throughput ({})", 100 * (1 - share), estimate)};
}

ModeChoice automatic_mode_for(const PolicyModes& policy, int cpu_workers, const std::vector<GpuThroughput>& gpus,
                              Objective objective) {
  ModeChoice choice = choose_automatic_mode(cpu_workers, gpus, objective);
  for (Mode mode : {choice.mode, Mode::hybrid, Mode::cpu}) {
    if (!policy.runs(mode)) continue;
    if (mode != choice.mode)
      choice.reason += std::string("; policy '") + policy.name + "' cannot run " + to_string(choice.mode) + " mode";
    choice.mode = mode;
    return choice;
  }
  return choice;  // a policy that runs no mode fails every request with its reason
}

}  // namespace tessera::detail
