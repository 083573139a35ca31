// What a task tells the layers that only observe it, without the codelets' own headers: the tag
// each Tessera task carries (StarPU's tag_id: its kind, step and tile), which the trace reads, and
// its scheduling hints, which the policies read.
#pragma once

#include <cstdint>

#include "tessera/options.hpp"

namespace tessera::detail {

struct TaskTag {
  TaskKind kind;
  int step;
  int i;
  int j;
};

uint64_t encode_task_tag(TaskKind kind, int step, int i, int j);
TaskTag decode_task_tag(uint64_t tag);
// True for the tag of a task Tessera submitted (an application's own tasks carry 0 or their own
// tags).
bool is_tessera_task_tag(uint64_t tag);

// A task's scheduling hints. A Tessera task's argument block (StarPU's cl_arg) starts with them
// (codelet_support.hpp's TaskHeader); an application's own task has only its priority.
TaskHints task_hints(uint64_t tag, const void* cl_arg, int priority);

}  // namespace tessera::detail
