// Starting StarPU for a Runtime: its configuration from the options and the process's environment
// (CPU binding, the caller's core, address-space limits, the scheduling policy, calibration
// files), refusing first what StarPU would abort on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cuda_warm_up.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// The running scheduling policy's name ("unknown" where StarPU gives none).
std::string running_policy_name();

// The smallest memory of the GPUs that CUDA workers drive, in bytes (0 where none is known).
std::size_t smallest_cuda_memory_node_bytes();

// Starts StarPU, refusing first what it would abort on; returns the running policy's name and,
// through set_aside, the corrupt performance-model files renamed first, and through notices what
// else to tell a person. When StarPU is to drive GPUs, warm_up pays the process's one-time CUDA
// costs alongside (the caller keeps it running).
std::string start_starpu(const RuntimeOptions& options, std::vector<std::string>& set_aside,
                         std::vector<std::string>& notices, std::optional<CudaWarmUp>& warm_up);

}  // namespace tessera::detail
