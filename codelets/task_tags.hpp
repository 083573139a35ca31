// The tag each Tessera task carries (StarPU's tag_id): its kind, step and tile. The trace and the
// scheduling policies read tasks through it, without the codelets' own headers.
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

}  // namespace tessera::detail
