#include "task_tags.hpp"

namespace tessera::detail {

namespace {

// Tag layout: a marker bit (Tessera's task, not an application's), 3 bits of kind, 20 bits each
// of step, i and j.
constexpr uint64_t tessera_tag_marker = uint64_t(1) << 63;
constexpr uint64_t tag_kind_mask = 7;
static_assert(static_cast<uint64_t>(TaskKind::other) <= tag_kind_mask, "every task kind fits the tag's 3 bits");
constexpr int tag_field_bits = 20;
constexpr uint64_t tag_field_mask = (uint64_t(1) << tag_field_bits) - 1;

}  // namespace

uint64_t encode_task_tag(TaskKind kind, int step, int i, int j) {
  return tessera_tag_marker | ((uint64_t(kind) & tag_kind_mask) << 60) | ((uint64_t(step) & tag_field_mask) << 40) |
         ((uint64_t(i) & tag_field_mask) << 20) | (uint64_t(j) & tag_field_mask);
}

bool is_tessera_task_tag(uint64_t tag) { return (tag & tessera_tag_marker) != 0; }

TaskHints task_hints(uint64_t tag, const void* cl_arg, int priority) {
  if (is_tessera_task_tag(tag) && cl_arg) return *static_cast<const TaskHints*>(cl_arg);
  TaskHints hints;
  hints.priority = priority;
  return hints;
}

TaskTag decode_task_tag(uint64_t tag) {
  return {static_cast<TaskKind>((tag >> 60) & tag_kind_mask), static_cast<int>((tag >> 40) & tag_field_mask),
          static_cast<int>((tag >> 20) & tag_field_mask), static_cast<int>(tag & tag_field_mask)};
}

}  // namespace tessera::detail
