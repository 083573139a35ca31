#include "request_support.hpp"

#include "runtime_resources.hpp"

#include "tessera/error.hpp"
#include "tessera/trace.hpp"

namespace tessera {

Request::Request(std::shared_ptr<detail::Submission> submission) : submission_(std::move(submission)) {}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    finish();
    submission_ = std::move(other.submission_);
  }
  return *this;
}

Request::~Request() { finish(); }

// The tasks are done: the temporaries they used may go (already gone when the runtime ended first).
void Request::finish() {
  if (submission_) submission_->release_held();
}

int Request::wait() {
  if (!submission_) return 0;
  finish();
  if (const std::exception_ptr error = submission_->error()) std::rethrow_exception(error);
  submission_->complete();
  return submission_->info();
}

bool Request::done() const { return !submission_ || submission_->done(); }

bool Request::wait_for(std::chrono::milliseconds timeout) { return !submission_ || submission_->wait_for(timeout); }

int Request::wait(const ProgressReport& report, std::chrono::milliseconds interval) {
  if (!report) return wait();
  try {
    while (!wait_for(interval)) report(progress());
    report(progress());
  } catch (...) {
    cancel();
    try {
      wait();
    } catch (...) {  // Cancelled, or what a task raised: the report's exception wins
    }
    throw;
  }
  return wait();
}

Progress Request::progress() const { return submission_ ? submission_->progress() : Progress{}; }

bool Request::cancel() { return submission_ && submission_->cancel(); }

bool Request::non_finite_input() const { return submission_ && submission_->non_finite_input(); }

namespace detail {

namespace {

TaskContext context_in(Runtime& runtime, Submission& submission, Mode resolved, GpuKernels kernels) {
  TaskContext ctx{&submission, &runtime.resources(), resolved, kernels};
  if (ctx.mode != Mode::cpu) ctx.gpu_owners = GpuOwners::for_gpus(runtime.resources().gpus_for_tiles());
  return ctx;
}

}  // namespace

TaskContext make_context(Runtime& runtime, Submission& submission, Mode requested, GpuKernels kernels) {
  return context_in(runtime, submission, runtime.resolve(requested), kernels);
}

TaskContext make_context(Runtime& runtime, Submission& submission, const Plan& plan, GpuKernels kernels) {
  TaskContext ctx{&submission, &runtime.resources(), plan.mode, kernels};
  ctx.gpu_owners = plan.gpu_owners;
  ctx.tensor_cores = plan.tensor_cores;
  return ctx;
}

Plan plan_request(const Runtime& runtime, const PlanRequest& request) {
  // Refused where the runtime cannot serve this thread, whatever path the plan takes: a request
  // on a runtime behaves the same on every path.
  RuntimeControl::check_callable(runtime);
  // The decisions' text only where it is read: a trace records it, a verbose runtime says it.
  const bool explained = request.options.trace != nullptr || RuntimeControl::says_plans(runtime);
  Plan plan = detail::plan(RuntimeControl::machine(runtime), request, explained);
  if (plan.hybrid_without_gpu) RuntimeControl::say_hybrid_without_gpu(runtime);
  if (request.options.trace) request.options.trace->record_plan(plan.why);
  RuntimeControl::say_plan(runtime, plan.why);
  return plan;
}

}  // namespace detail

}  // namespace tessera
