// Collective operations: the reduction that ends each one, and the operation in flight.
#include "collective.hpp"

#include <starpu_mpi.h>

#include <climits>

#include "tessera/error.hpp"

namespace tessera::detail {

int finish_collective(ContextState& context, int local_info, std::exception_ptr local_error) {
  starpu_mpi_wait_for_all(context.comm);
  starpu_mpi_cache_flush_all_data(context.comm);
  // One reduction: the largest negated first failing column (none: INT_MAX) is the smallest
  // column, and the largest error flag says whether any rank failed.
  const int local[2] = {-(local_info > 0 ? local_info : INT_MAX), local_error ? 1 : 0};
  int global[2] = {local[0], local[1]};
#ifdef STARPU_SIMGRID
  // Under SMPI the application's thread is not an MPI process (distributed::Context): in
  // simulation no kernel runs, so there is no failure to reduce; the ranks only meet.
  starpu_mpi_barrier(context.comm);
#else
  MPI_Allreduce(local, global, 2, MPI_INT, MPI_MAX, context.comm);
#endif
  const int first_failing_column = -global[0];
  if (local_error) std::rethrow_exception(local_error);
  if (global[1]) throw RuntimeError("a task of a distributed operation failed on another rank");
  return first_failing_column == INT_MAX ? 0 : first_failing_column;
}

void CollectiveOperation::claim(ContextState& context) {
  if (context.operation_in_flight)
    throw InvalidArgument("distributed: an operation on this context is still in flight; wait() for it before "
                          "starting another");
  context.operation_in_flight = true;
}

int CollectiveOperation::wait() {
  if (!finished_) {
    finished_ = true;
    int local_info = 0;
    std::exception_ptr local_error = error_;
    if (request_ && !local_error) {
      try {
        local_info = request_->wait();
      } catch (...) {
        local_error = std::current_exception();
      }
    }
    if (trace_) context_->inserter.record_sends(*trace_);
    try {
      info_ = finish_collective(*context_, local_info, local_error);
      error_ = nullptr;
      if (then_) then_(info_);
    } catch (...) {
      error_ = std::current_exception();
    }
    awake_.reset();
    context_->operation_in_flight = false;
  }
  if (error_) std::rethrow_exception(error_);
  return info_;
}

CollectiveOperation::~CollectiveOperation() {
  try {
    wait();
  } catch (...) {
    // wait() was not called: the caller did not ask for the outcome.
  }
}

}  // namespace tessera::detail
