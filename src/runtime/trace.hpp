// Filling a tessera::Trace from the runtime: StarPU's profiling information of a finished task.
#pragma once

#include <starpu.h>

#include "tessera/trace.hpp"

namespace tessera::detail {

// Records `task` (its kind and tile from its tag, its worker and times from its profiling
// information); a task submitted before profiling was on has none and is skipped.
void record_executed_task(Trace& trace, const starpu_task* task);

}  // namespace tessera::detail
