// One collective operation on distributed matrices: every rank inserts its tasks, waits for them
// and for every rank's transfers, and the ranks agree on the outcome (LAPACK info, failures).
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <utility>

#include "distributed_state.hpp"
#include "request_support.hpp"
#include "runtime_control.hpp"

namespace tessera::detail {

// Waits for every rank's tasks and transfers, drops the copies of other ranks' tiles this rank
// received (the next operation may change them), and reduces over the ranks: returns the
// smallest positive info of any rank (0 if none); rethrows this rank's error, or throws
// RuntimeError when a task failed on another rank.
int finish_collective(ContextState& context, int local_info, std::exception_ptr local_error);

// A collective operation in flight on this rank, from the insertion of its tasks to wait(). One
// at a time on a context: another started before wait() throws InvalidArgument (on every rank,
// since every rank starts the same operations in the same order).
class CollectiveOperation {
 public:
  // insert(distributed, local): `distributed` inserts a task on every rank (StarPU-MPI runs it on
  // the owner of what it writes), `local` a task on this rank only (tiles it owns, its own
  // memory). With `trace`, the tasks this rank runs and the tiles it sends are recorded in it.
  template <class Insert>
  CollectiveOperation(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                      std::shared_ptr<Trace> trace = nullptr);
  // Waits unless wait() was called (collective, as wait()); errors are dropped here.
  ~CollectiveOperation();
  CollectiveOperation(const CollectiveOperation&) = delete;
  CollectiveOperation& operator=(const CollectiveOperation&) = delete;

  // Collective: the operation's info, the same on every rank (finish_collective); again the same
  // result when called again.
  int wait();
  // Called by wait() on every rank once the ranks agreed on the info, with it (not when the
  // operation failed); may call MPI on the context's communicator (every rank calls it).
  void then(std::function<void(int info)> finish) { then_ = std::move(finish); }
  // This rank's tasks are done (its transfers to other ranks may still run).
  bool done() const { return !request_ || request_->done(); }
  Progress progress() const { return request_ ? request_->progress() : Progress{}; }

 private:
  static void claim(ContextState& context);

  ContextState* context_;
  std::shared_ptr<Trace> trace_;
  // Awake until the last transfer: a rank with no task left still sends its tiles to the others.
  std::unique_ptr<TransfersInFlight> awake_;
  std::unique_ptr<Request> request_;
  std::exception_ptr error_;
  std::function<void(int)> then_;
  bool finished_ = false;
  int info_ = 0;
};

template <class Insert>
CollectiveOperation::CollectiveOperation(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                                         std::shared_ptr<Trace> trace)
    : context_(&context), trace_(std::move(trace)) {
  Runtime& runtime = *context.runtime;
  RuntimeControl::check_callable(runtime);
  awake_ = std::make_unique<TransfersInFlight>(runtime);
  claim(context);  // last of what may throw: a refused operation leaves the context as it was
  context.inserter.start_operation();
  try {
    request_ = std::make_unique<Request>(make_request(runtime, nullptr, [&](Submission& s) {
      s.set_trace(trace_);
      const TaskContext local = make_context(runtime, s, mode, kernels);
      TaskContext distributed = local;
      distributed.distributed = &context.inserter;
      insert(distributed, local);
    }));
  } catch (...) {
    error_ = std::current_exception();  // reduced over the ranks by wait()
  }
}

// The operation started and waited for: its info on every rank.
template <class Insert>
int run_collective(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                   const std::shared_ptr<Trace>& trace = nullptr) {
  return CollectiveOperation(context, mode, kernels, std::forward<Insert>(insert), trace).wait();
}

}  // namespace tessera::detail
