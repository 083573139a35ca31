// The DistributedInserter of StarPU-MPI: a task's buffers go to starpu_mpi_task_build and
// starpu_mpi_task_post_build on one communicator, which pick the rank that runs the task (the
// owner of the tile it writes) and post the transfers around it. The inserter also counts the
// tiles this rank sends and receives, as StarPU-MPI's cache posts them: a tile goes once to each
// rank that reads it, and again only after a task wrote it.
#pragma once

#include <mpi.h>

#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "distributed_inserter.hpp"
#include "tessera/distributed.hpp"
#include "tessera/trace.hpp"

namespace tessera::detail {

class MpiInserter final : public DistributedInserter {
 public:
  MpiInserter(MPI_Comm comm, int rank) : comm_(comm), rank_(rank) {}
  starpu_task* build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const override;
  void post_build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const override;

  // A collective operation starts: StarPU-MPI's cache was flushed at the end of the last one.
  void start_operation() noexcept;
  distributed::Traffic traffic() const noexcept { return traffic_; }
  // This operation's sends, one transfer per destination ("rank R" to "rank D").
  void record_sends(Trace& trace) const;

 private:
  void count_transfers(const TaskBuffer* buffers, int count) const;

  MPI_Comm comm_;
  int rank_;
  // Insertion runs on the calling thread only; build() is const in the interface.
  mutable distributed::Traffic traffic_;
  mutable std::unordered_map<void*, std::vector<int>> sent_to_;  // tile -> ranks it was sent to
  mutable std::unordered_set<void*> received_;
  mutable std::map<int, TraceTransfer> sends_;  // by destination rank
};

}  // namespace tessera::detail
