// Filling a tessera::Trace from StarPU's profiling information (trace.hpp); the Trace class itself
// and its renderings are src/trace's.
#include "trace.hpp"

#include <starpu.h>

#include <string>
#include <utility>

#include "task_tags.hpp"

namespace tessera {

namespace detail {

namespace {

std::string memory_node_name(int node) {
  char name[64] = "";
  starpu_memory_node_get_name(static_cast<unsigned>(node), name, sizeof name);
  return name;
}

}  // namespace

void reset_transfer_counts() {
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) starpu_bus_get_profiling_info(bus, nullptr);
}

void record_transfers(Trace& trace) {
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) {
    starpu_profiling_bus_info info{};
    starpu_bus_get_profiling_info(bus, &info);
    if (info.transfer_count == 0) continue;
    trace.record(TraceTransfer{memory_node_name(starpu_bus_get_src(bus)), memory_node_name(starpu_bus_get_dst(bus)),
                               static_cast<long long>(info.transferred_bytes), static_cast<long long>(info.transfer_count)});
  }
}

void record_executed_task(Trace& trace, const starpu_task* task) {
  if (!task || !task->profiling_info) return;
  starpu_profiling_task_info& info = *task->profiling_info;
  TraceEvent event;
  if (is_tessera_task_tag(task->tag_id)) {
    const TaskTag tag = decode_task_tag(task->tag_id);
    event.kind = tag.kind;
    event.step = tag.step;
    event.i = tag.i;
    event.j = tag.j;
  }
  event.worker = info.workerid;
  char name[64] = "";
  if (info.workerid >= 0) starpu_worker_get_name(info.workerid, name, sizeof name);
  event.worker_name = name;
  event.start_us = starpu_timing_timespec_to_us(&info.start_time);
  event.end_us = starpu_timing_timespec_to_us(&info.end_time);
  trace.record(std::move(event));
}

}  // namespace detail

}  // namespace tessera
