#include "tessera/runtime.hpp"

#include <starpu.h>

#include <cblas.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

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
  int saved_blas_threads = 1;
  mutable std::atomic<bool> said_hybrid_without_gpu{false};
  std::unique_ptr<detail::RuntimeResources> resources;
};

namespace {

// StarPU reads these at start; the user's own settings win.
void set_starpu_environment_defaults(const RuntimeOptions& options) {
  if (options.quiet) setenv("STARPU_SILENT", "1", 0);
  if (options.workers_per_cuda > 0)
    setenv("STARPU_NWORKER_PER_CUDA", std::to_string(options.workers_per_cuda).c_str(), 0);
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
  set_starpu_environment_defaults(options);
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU could not start: no worker is available (check STARPU_NCPU/STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU could not start (starpu_init returned " + std::to_string(ret) + ")");
  if (const char* env = std::getenv("STARPU_SCHED"); env && *env) scheduler = env;
}

}  // namespace

Runtime::Runtime(const RuntimeOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->attached = starpu_is_initialized() != 0;
  if (impl_->attached) {
    starpu_sched_policy* policy = starpu_sched_ctx_get_sched_policy(starpu_sched_ctx_get_context());
    impl_->scheduler = policy && policy->policy_name ? policy->policy_name : "unknown";
  } else {
    start_starpu(options, impl_->scheduler);
  }
  impl_->cpu_workers = static_cast<int>(starpu_cpu_worker_get_count());
  impl_->cuda_workers = static_cast<int>(starpu_cuda_worker_get_count());
  impl_->cuda_devices = detail::cuda_devices_in_use();
  // Parallelism comes from the task graph: every CPU task calls single-threaded BLAS.
  impl_->saved_blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  impl_->resources = std::make_unique<detail::RuntimeResources>(static_cast<int>(starpu_worker_get_count()));
  try {
    detail::create_cuda_contexts(*impl_->resources);
  } catch (...) {
    if (!impl_->attached) starpu_shutdown();
    throw;
  }
}

Runtime::~Runtime() {
  if (!starpu_is_initialized()) {
    // The host application already shut its StarPU down, and with it the means to free pinned
    // memory and CUDA handles: leave them to the end of the process.
    static_cast<void>(impl_->resources.release());
    return;
  }
  starpu_task_wait_for_all();
  detail::destroy_cuda_contexts(*impl_->resources);
  impl_->resources.reset();  // pinned memory goes back while StarPU can still free it
  openblas_set_num_threads(impl_->saved_blas_threads);
  if (!impl_->attached) starpu_shutdown();
}

bool Runtime::attached() const noexcept { return impl_->attached; }
int Runtime::cpu_workers() const noexcept { return impl_->cpu_workers; }
int Runtime::cuda_workers() const noexcept { return impl_->cuda_workers; }
int Runtime::cuda_devices() const noexcept { return impl_->cuda_devices; }
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
      return Mode::gpu;
    case Mode::hybrid:
      if (impl_->cuda_workers > 0) return Mode::hybrid;
      if (!impl_->said_hybrid_without_gpu.exchange(true))
        std::fprintf(stderr, "tessera: hybrid mode without CUDA workers: running on the CPUs only\n");
      return Mode::cpu;
  }
  return Mode::cpu;
}

Runtime& Runtime::shared() {
  static std::mutex mutex;
  static std::unique_ptr<Runtime> runtime;
  std::lock_guard<std::mutex> lock(mutex);
  if (!runtime) runtime = std::make_unique<Runtime>(RuntimeOptions::from_environment());
  return *runtime;
}

}  // namespace tessera
