// What the automatic mode's estimate (src/plan/machine.hpp) needs of the runtime's GPUs.
#pragma once

#include <vector>

#include "machine.hpp"

namespace tessera::detail {

// The GPUs driven by the runtime's CUDA workers (empty without CUDA).
std::vector<GpuThroughput> cuda_worker_throughputs();

}  // namespace tessera::detail
