// Filling a tessera::Trace from the runtime: StarPU's profiling information of a finished task.
#pragma once

#include <starpu.h>

#include "tessera/trace.hpp"

namespace tessera::detail {

// Records `task` (its kind and tile from its tag, its worker and times from its profiling
// information); a task submitted before profiling was on has none and is skipped.
void record_executed_task(Trace& trace, const starpu_task* task);

// StarPU counts the bytes moved between each pair of memory nodes while profiling is on, and
// reading the counts resets them: a traced request resets them when it starts and records them
// into its trace when its last task is done.
void reset_transfer_counts();
void record_transfers(Trace& trace);

}  // namespace tessera::detail
