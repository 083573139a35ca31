// One collective operation on distributed matrices: every rank inserts its tasks, waits for them
// and for every rank's transfers, and the ranks agree on the outcome (LAPACK info, failures).
#pragma once

#include <exception>
#include <memory>

#include "distributed_state.hpp"
#include "request_support.hpp"
#include "runtime_control.hpp"

namespace tessera::detail {

// Waits for every rank's tasks and transfers, drops the copies of other ranks' tiles this rank
// received (the next operation may change them), and reduces over the ranks: returns the
// smallest positive info of any rank (0 if none); rethrows this rank's error, or throws
// RuntimeError when a task failed on another rank.
int finish_collective(ContextState& context, int local_info, std::exception_ptr local_error);

// insert(distributed, local): `distributed` inserts a task on every rank (StarPU-MPI runs it on the
// owner of what it writes), `local` a task on this rank only (tiles it owns, its own memory).
// With `trace`, the tasks this rank runs are recorded in it (each rank its own schedule).
template <class Insert>
int run_collective(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                   const std::shared_ptr<Trace>& trace = nullptr) {
  Runtime& runtime = *context.runtime;
  RuntimeControl::check_callable(runtime);
  // Awake until the last transfer: a rank with no task left still sends its tiles to the others.
  const TransfersInFlight awake(runtime);
  context.inserter.start_operation();
  int info = 0;
  std::exception_ptr error;
  try {
    info = make_request(runtime, nullptr, [&](Submission& s) {
             s.set_trace(trace);
             const TaskContext local = make_context(runtime, s, mode, kernels);
             TaskContext distributed = local;
             distributed.distributed = &context.inserter;
             insert(distributed, local);
           }).wait();
  } catch (...) {
    error = std::current_exception();
  }
  if (trace) context.inserter.record_sends(*trace);
  return finish_collective(context, info, error);
}

}  // namespace tessera::detail
