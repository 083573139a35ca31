// The scheduling policies a Runtime can start (RuntimeOptions::scheduler, TESSERA_POLICY, the
// CLI's --policy): Tessera's own, then StarPU's built-in ones.
#pragma once

#include "tessera/export.h"

#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera {

struct PolicyInfo {
  std::string name;
  std::string description;  // one line
  bool tessera = false;     // Tessera's own (scheduler_policies/), else StarPU's
  std::vector<Mode> modes;  // the modes it can run
  // It places tasks by perf-model estimates. Under such a policy a CPU worker takes a task with
  // tiles larger than 256 in hybrid mode only once the CPU's timing for that tile size is known.
  bool uses_perf_models = false;
};

// Tessera's first.
TESSERA_EXPORT std::vector<PolicyInfo> scheduling_policies();

}  // namespace tessera
