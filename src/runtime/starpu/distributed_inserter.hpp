// How codelets insert a task into a task graph that spans MPI ranks (TaskContext::distributed).
// The runtime layer knows only this interface; src/distributed implements it on StarPU-MPI, so
// the codelets build with or without MPI.
#pragma once

#include <starpu.h>

namespace tessera::detail {

struct TaskBuffer {
  void* handle;
  starpu_data_access_mode mode;
};

class DistributedInserter {
 public:
  virtual ~DistributedInserter() = default;
  // Posts the transfers the task needs on this rank; returns the task (its buffers set) when this
  // rank runs it, nullptr when another rank does.
  virtual starpu_task* build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const = 0;
  // After the task was submitted here or left to another rank: posts the transfers of what it
  // wrote and drops the copies this rank no longer holds valid.
  virtual void post_build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const = 0;
};

}  // namespace tessera::detail
