// Scheduling policies selectable by name: StarPU's built-in ones and Tessera's own (one file per
// policy in this folder).
#pragma once

#include <starpu.h>

#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera::detail {

struct PolicyEntry {
  std::string name;
  std::string description;
  starpu_sched_policy* policy = nullptr;  // Tessera's own; nullptr for StarPU's (started by name)
  bool needs_cuda = false;                // meaningless without CUDA workers
};

// Every policy, Tessera's first.
std::vector<PolicyEntry> scheduling_policies();
// The named policy; throws InvalidArgument listing the valid names when there is none.
PolicyEntry find_scheduling_policy(const std::string& name);

}  // namespace tessera::detail
