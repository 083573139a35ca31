// Building Requests: a submission, the temporaries its tasks use, and the guarantee that a
// failure while inserting tasks still waits for those already submitted.
#pragma once

#include <memory>
#include <utility>

#include "plan.hpp"
#include "runtime_control.hpp"
#include "submission.hpp"
#include "tasks.hpp"
#include "tessera/cholesky.hpp"

namespace tessera::detail {

// A request's tasks in the mode `requested` resolves to (requests that made a plan pass the plan).
TaskContext make_context(Runtime& runtime, Submission& submission, Mode requested, GpuKernels kernels);
TaskContext make_context(Runtime& runtime, Submission& submission, const Plan& plan, GpuKernels kernels);

// The plan of a request on `runtime`: one machine snapshot, planned once, and the notices the
// plan calls for (hybrid on the CPUs alone).
Plan plan_request(const Runtime& runtime, const PlanRequest& request);

// The submission behind a request (every request made by Tessera's own functions has one).
struct RequestAccess {
  static Submission* submission(const Request& request) { return request.submission_.get(); }
};

// insert(Submission&) inserts the tasks on `runtime`; keep_alive holds what they use until they
// are done. Throws RuntimeError when the calling thread cannot use the runtime (inside a StarPU
// task, in a forked child).
template <class Insert>
Request make_request(Runtime& runtime, std::shared_ptr<void> keep_alive, Insert&& insert) {
  auto submission = std::make_shared<Submission>();
  submission->hold(std::move(keep_alive));
  submission->open(runtime);
  try {
    insert(*submission);
  } catch (...) {
    submission->seal();
    submission->release_held();
    throw;
  }
  submission->seal();
  RuntimeControl::track(runtime, submission);
  return Request(std::move(submission));
}

}  // namespace tessera::detail
