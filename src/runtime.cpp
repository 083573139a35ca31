#include "tessera/runtime.hpp"

#include <starpu.h>

#include <cblas.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_context.hpp"
#include "registry.hpp"
#include "runtime_resources.hpp"
#include "tessera/error.hpp"

namespace tessera {

struct Runtime::Impl {
  bool attached = false;
  std::string scheduler;
  int cpu_workers = 0;
  int cuda_workers = 0;
  int cuda_devices = 0;
  std::size_t gpu_memory_bytes = 0;
  int saved_blas_threads = 1;
  std::mutex pause_mutex;
  int pause_depth = 0;  // starpu_pause() calls not yet resumed
  mutable std::atomic<bool> said_hybrid_without_gpu{false};
  std::unique_ptr<detail::RuntimeResources> resources;
  detail::PolicyEntry policy;  // the running policy (an unknown one: no mode restriction)
};

namespace {

// StarPU is one per process, so starting, attaching and stopping are serialized process-wide.
// Runtimes that started StarPU count their references: a second Tessera Runtime shares the first
// one's StarPU (starpu_init nests), and the last of them shuts it down. A StarPU the application
// started is only attached to.
struct StarpuOwnership {
  std::mutex mutex;
  int tessera_references = 0;
};

StarpuOwnership& starpu_ownership() {
  static StarpuOwnership ownership;
  return ownership;
}

// StarPU reads these at start; the user's own settings win.
void set_starpu_environment_defaults(const RuntimeOptions& options) {
  if (options.quiet) setenv("STARPU_SILENT", "1", 0);
  // StarPU 1.3 reads a perf model's calibration flag separately when a task starts, ends and is
  // accounted, and turns calibration on in the middle of a run when a model lacks samples: a task
  // caught in between is timed with a start and no end, and StarPU aborts ("measured >= 0").
  // Calibrating from the start keeps the flag constant (and only adds two clock reads per task).
  setenv("STARPU_CALIBRATE", "1", 0);
  if (options.workers_per_cuda > 0)
    setenv("STARPU_NWORKER_PER_CUDA", std::to_string(options.workers_per_cuda).c_str(), 0);
}

std::string running_policy_name() {
  starpu_sched_policy* policy = starpu_sched_ctx_get_sched_policy(detail::current_sched_ctx());
  return policy && policy->policy_name ? policy->policy_name : "unknown";
}

std::size_t smallest_cuda_memory_node_bytes() {
  std::size_t smallest = 0;
  for (unsigned worker = 0; worker < starpu_worker_get_count(); ++worker) {
    if (starpu_worker_get_type(static_cast<int>(worker)) != STARPU_CUDA_WORKER) continue;
    const starpu_ssize_t total = starpu_memory_get_total(starpu_worker_get_memory_node(worker));
    if (total <= 0) continue;  // StarPU does not know this node's size
    const auto bytes = static_cast<std::size_t>(total);
    if (smallest == 0 || bytes < smallest) smallest = bytes;
  }
  return smallest;
}

void start_starpu(const RuntimeOptions& options, std::string& scheduler) {
  starpu_conf conf;
  starpu_conf_init(&conf);
  if (options.ncpus >= 0) conf.ncpus = options.ncpus;
  if (options.ncuda >= 0) conf.ncuda = options.ncuda;
  scheduler = options.scheduler.empty() ? "dmdas" : options.scheduler;
  const detail::PolicyEntry policy = detail::find_scheduling_policy(scheduler);
  if (policy.policy)
    conf.sched_policy = policy.policy;
  else
    conf.sched_policy_name = policy.name.c_str();
  // STARPU_SCHED overrides a policy chosen by name (StarPU's rule), not one passed as a struct.
  const char* env_policy = std::getenv("STARPU_SCHED");
  const auto started = !policy.policy && env_policy && *env_policy ? detail::scheduling_policy_named(env_policy) : policy;
  if (started) conf.sched_policy_init = started->init;
  set_starpu_environment_defaults(options);
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU could not start: no worker is available (check STARPU_NCPU/STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU could not start (starpu_init returned " + std::to_string(ret) + ")");
  scheduler = running_policy_name();
}

// A policy refuses the modes its placement cannot serve (panel-cpu needs CPU workers).
Mode allowed_by_policy(const detail::PolicyEntry& policy, Mode mode) {
  if (!policy.runs(mode))
    throw RuntimeError("scheduling policy '" + policy.name + "' cannot run " + to_string(mode) + " mode: " +
                       policy.restriction);
  return mode;
}

}  // namespace

Runtime::Runtime(const RuntimeOptions& options) : impl_(std::make_unique<Impl>()) {
  StarpuOwnership& ownership = starpu_ownership();
  std::lock_guard<std::mutex> lock(ownership.mutex);
  const bool running = starpu_is_initialized() != 0;
  impl_->attached = running && ownership.tessera_references == 0;
  if (running) {
    if (!impl_->attached && starpu_init(nullptr) != 0) throw RuntimeError("StarPU could not be shared");
    impl_->scheduler = running_policy_name();
  } else {
    start_starpu(options, impl_->scheduler);
  }
  impl_->policy = detail::policy_or_unrestricted(impl_->scheduler);
  if (!impl_->attached) ++ownership.tessera_references;
  impl_->cpu_workers = static_cast<int>(starpu_cpu_worker_get_count());
  impl_->cuda_workers = static_cast<int>(starpu_cuda_worker_get_count());
  impl_->cuda_devices = detail::cuda_devices_in_use();
  impl_->gpu_memory_bytes = smallest_cuda_memory_node_bytes();
  // Parallelism comes from the task graph: every CPU task calls single-threaded BLAS.
  impl_->saved_blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  impl_->resources = std::make_unique<detail::RuntimeResources>(static_cast<int>(starpu_worker_get_count()));
  try {
    detail::create_cuda_contexts(*impl_->resources, options.tuning_file);
  } catch (...) {
    if (!impl_->attached) {
      --ownership.tessera_references;
      starpu_shutdown();
    }
    throw;
  }
}

Runtime::~Runtime() {
  StarpuOwnership& ownership = starpu_ownership();
  std::lock_guard<std::mutex> lock(ownership.mutex);
  if (!starpu_is_initialized()) {
    // The host application already shut its StarPU down, and with it the means to free pinned
    // memory and CUDA handles: leave them to the end of the process, held by a list that is never
    // destroyed (so that leak checkers see them as retained on purpose, not lost).
    static auto* retained = new std::vector<std::unique_ptr<detail::RuntimeResources>>();
    retained->push_back(std::move(impl_->resources));
    return;
  }
  for (; impl_->pause_depth > 0; --impl_->pause_depth) starpu_resume();
  starpu_task_wait_for_all();
  detail::destroy_cuda_contexts(*impl_->resources);
  impl_->resources.reset();  // pinned memory goes back while StarPU can still free it
  openblas_set_num_threads(impl_->saved_blas_threads);
  if (!impl_->attached) {
    --ownership.tessera_references;
    starpu_shutdown();  // only the last reference really stops StarPU
  }
}

bool Runtime::attached() const noexcept { return impl_->attached; }
int Runtime::cpu_workers() const noexcept { return impl_->cpu_workers; }
int Runtime::cuda_workers() const noexcept { return impl_->cuda_workers; }
int Runtime::cuda_devices() const noexcept { return impl_->cuda_devices; }
std::size_t Runtime::gpu_memory_bytes() const noexcept { return impl_->gpu_memory_bytes; }
std::string Runtime::scheduler() const { return impl_->scheduler; }
const detail::RuntimeResources& Runtime::resources() const noexcept { return *impl_->resources; }

Mode Runtime::resolve(Mode requested) const {
  switch (requested) {
    case Mode::cpu:
      if (impl_->cpu_workers == 0) throw RuntimeError("cpu mode asked for, but the runtime has no CPU worker");
      return Mode::cpu;
    case Mode::gpu:
      if (impl_->cuda_workers == 0)
        throw RuntimeError(
#ifdef TESSERA_HAVE_CUDA
            "gpu mode asked for, but no CUDA worker could start (no usable GPU, or STARPU_NCUDA=0)"
#else
            "gpu mode asked for, but this Tessera was built without CUDA"
#endif
        );
      return allowed_by_policy(impl_->policy, Mode::gpu);
    case Mode::hybrid:
      if (impl_->cuda_workers > 0) return allowed_by_policy(impl_->policy, Mode::hybrid);
      if (!impl_->said_hybrid_without_gpu.exchange(true))
        std::fprintf(stderr, "tessera: hybrid mode without CUDA workers: running on the CPUs only\n");
      return Mode::cpu;
  }
  return Mode::cpu;
}

void Runtime::pause_workers() {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  starpu_pause();
  ++impl_->pause_depth;
}

void Runtime::resume_workers() {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  if (impl_->pause_depth == 0) throw InvalidArgument("Runtime::resume_workers: the workers are not paused");
  starpu_resume();
  --impl_->pause_depth;
}

Runtime& Runtime::shared() {
  // Constructed in place (not assigned into a static pointer made earlier): its destructor is
  // registered for the end of the process after the constructor has initialized CUDA, so it runs
  // before the CUDA runtime's own exit handlers, while StarPU can still stop its CUDA workers.
  // A constructor that throws leaves it unconstructed, and the next call tries again.
  static Runtime runtime(RuntimeOptions::from_environment());
  return runtime;
}

}  // namespace tessera
