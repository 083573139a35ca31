// Mode::automatic: which mode the machine's workers call for, from an estimate of the
// double-precision throughput each kind of worker brings.
#pragma once

#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera::detail {

// What the estimate needs to know of one GPU.
struct GpuThroughput {
  int multiprocessors = 0;
  double clock_ghz = 0;
  int compute_capability = 0;  // e.g. 90
};

// Peak double-precision GFLOP/s of one GPU: its FP64 units (tensor cores included where they
// take FP64) at its clock. Chips whose FP64 runs at a small fraction of FP32 count 2 FMA per SM.
double estimated_gpu_gflops(const GpuThroughput& gpu);
// What one CPU worker's single-threaded DGEMM reaches: 16 flops per cycle (AVX2 FMA) at 2.5 GHz.
double estimated_cpu_gflops(int cpu_workers);

// GPUs holding at least this share of the estimated throughput: the CPUs would add too little to
// be worth scheduling onto (a task placed there blind costs far more than they add).
constexpr double gpu_only_share = 0.9;

// gpu when the GPUs hold gpu_only_share or more, hybrid when the CPUs hold more, cpu without GPUs.
ModeChoice choose_automatic_mode(int cpu_workers, const std::vector<GpuThroughput>& gpus);

// The GPUs driven by the runtime's CUDA workers (empty without CUDA).
std::vector<GpuThroughput> cuda_worker_throughputs();

}  // namespace tessera::detail
