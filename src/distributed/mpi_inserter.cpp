#include "mpi_inserter.hpp"

#include <starpu_mpi.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tessera::detail {

namespace {

using Descriptions = std::vector<starpu_data_descr>;

Descriptions describe(const TaskBuffer* buffers, int count) {
  Descriptions descriptions(static_cast<std::size_t>(count));
  for (int b = 0; b < count; ++b)
    descriptions[static_cast<std::size_t>(b)] = {static_cast<starpu_data_handle_t>(buffers[b].handle), buffers[b].mode};
  return descriptions;
}

starpu_data_handle_t handle_of(const TaskBuffer& buffer) { return static_cast<starpu_data_handle_t>(buffer.handle); }

// The rank StarPU-MPI runs the task on: the owner of the first tile it writes.
int executing_rank(const TaskBuffer* buffers, int count) {
  for (int b = 0; b < count; ++b)
    if (buffers[b].mode & STARPU_W) return starpu_mpi_data_get_rank(handle_of(buffers[b]));
  return -1;
}

}  // namespace

starpu_task* MpiInserter::build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const {
  count_transfers(buffers, count);
  Descriptions descriptions = describe(buffers, count);
  return starpu_mpi_task_build(comm_, codelet, STARPU_DATA_MODE_ARRAY, descriptions.data(), count, STARPU_PRIORITY,
                               priority, 0);
}

void MpiInserter::post_build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const {
  Descriptions descriptions = describe(buffers, count);
  starpu_mpi_task_post_build(comm_, codelet, STARPU_DATA_MODE_ARRAY, descriptions.data(), count, STARPU_PRIORITY,
                             priority, 0);
}

void MpiInserter::start_operation() noexcept {
  traffic_ = {};
  sent_to_.clear();
  received_.clear();
  sends_.clear();
}

void MpiInserter::record_sends(Trace& trace) const {
  for (const auto& [destination, transfer] : sends_) trace.record(transfer);
}

void MpiInserter::count_transfers(const TaskBuffer* buffers, int count) const {
  const int executor = executing_rank(buffers, count);
  if (executor < 0) return;
  for (int b = 0; b < count; ++b) {
    if (!(buffers[b].mode & STARPU_R)) continue;
    void* tile = buffers[b].handle;
    const int owner = starpu_mpi_data_get_rank(handle_of(buffers[b]));
    if (owner == executor) continue;
    const auto bytes = static_cast<std::int64_t>(starpu_data_get_size(handle_of(buffers[b])));
    if (owner == rank_) {
      std::vector<int>& ranks = sent_to_[tile];
      if (std::find(ranks.begin(), ranks.end(), executor) != ranks.end()) continue;
      ranks.push_back(executor);
      ++traffic_.tiles_sent;
      traffic_.bytes_sent += bytes;
      TraceTransfer& send = sends_[executor];
      if (send.count == 0) send.from = "rank " + std::to_string(rank_), send.to = "rank " + std::to_string(executor);
      ++send.count;
      send.bytes += bytes;
    } else if (executor == rank_ && received_.insert(tile).second) {
      ++traffic_.tiles_received;
      traffic_.bytes_received += bytes;
    }
  }
  // A tile the task writes changes: StarPU-MPI sends it again to the next rank that reads it.
  for (int b = 0; b < count; ++b) {
    if (!(buffers[b].mode & STARPU_W)) continue;
    sent_to_.erase(buffers[b].handle);
    received_.erase(buffers[b].handle);
  }
}

}  // namespace tessera::detail
