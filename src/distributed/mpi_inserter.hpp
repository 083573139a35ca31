// The DistributedInserter of StarPU-MPI: a task's buffers go to starpu_mpi_task_build and
// starpu_mpi_task_post_build on one communicator, which pick the rank that runs the task (the
// owner of the tile it writes) and post the transfers around it.
#pragma once

#include <mpi.h>

#include "distributed_inserter.hpp"

namespace tessera::detail {

class MpiInserter final : public DistributedInserter {
 public:
  explicit MpiInserter(MPI_Comm comm) : comm_(comm) {}
  starpu_task* build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const override;
  void post_build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const override;

 private:
  MPI_Comm comm_;
};

}  // namespace tessera::detail
