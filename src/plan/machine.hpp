// What a plan knows of the machine: a snapshot the runtime takes once per request (workers, GPUs
// and their memory, the policy's modes, the automatic mode). Plain data: tests make fake ones.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// What the automatic-mode estimate needs to know of one GPU.
struct GpuThroughput {
  int multiprocessors = 0;
  double clock_ghz = 0;
  int compute_capability = 0;  // e.g. 90
};

// The modes the scheduling policy can run, and why it refuses the others.
struct PolicyModes {
  std::string name = "dmdas";
  bool runs_gpu = true;
  bool runs_hybrid = true;
  std::string restriction;
  bool runs(Mode resolved) const {
    return resolved == Mode::cpu || (resolved == Mode::gpu ? runs_gpu : runs_hybrid);
  }
};

struct Machine {
  int cpu_workers = 0;
  int cuda_workers = 0;
  int cuda_devices = 0;
  std::size_t gpu_memory_bytes = 0;  // StarPU's limit on the smallest GPU in use
  bool built_with_cuda = true;
  PolicyModes policy;
  ModeChoice automatic;  // what Mode::automatic runs as (automatic_mode_for)
  // Host arrays: how the runtime holds their tiles (RuntimeOptions::host_tiles), how many GPUs
  // its tile tasks are dealt over, the CUDA devices of its workers in increasing order (GPU g of
  // GpuOwners is the g-th), and the machine's physical memory (0: unknown).
  HostTiles host_tiles = HostTiles::automatic;
  int gpus_for_tiles = 1;
  std::vector<int> cuda_device_ids;
  std::size_t physical_memory_bytes = 0;
};

// Peak FP64 GFLOP/s of one GPU: its FP64 units (tensor cores included where they take FP64) at
// its clock. Chips whose FP64 runs at a small fraction of FP32 count 2 FMA per SM.
double estimated_gpu_gflops(const GpuThroughput& gpu);
// What one CPU worker's single-threaded DGEMM reaches: 16 flops per cycle (AVX2 FMA) at 2.5 GHz.
double estimated_cpu_gflops(int cpu_workers);

// gpu when the GPUs hold Thresholds::gpu_only_share of the estimated throughput or more, hybrid
// when the CPUs hold more, cpu without GPUs; under Objective::energy gpu whenever there are GPUs.
ModeChoice choose_automatic_mode(int cpu_workers, const std::vector<GpuThroughput>& gpus,
                                 Objective objective = Objective::time);

// The estimate's choice, or the next mode the policy runs (hybrid, then cpu).
ModeChoice automatic_mode_for(const PolicyModes& policy, int cpu_workers, const std::vector<GpuThroughput>& gpus,
                              Objective objective = Objective::time);

}  // namespace tessera::detail
