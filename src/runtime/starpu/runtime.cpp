#include "tessera/runtime.hpp"

#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "caller_memory.hpp"
#include "cuda_context.hpp"
#include "cuda_warm_up.hpp"
#include "device_memory.hpp"
#include "environment.hpp"
#include "gpu_throughput.hpp"
#include "pinned_host_memory.hpp"
#include "plan.hpp"
#include "process_state.hpp"
#include "registry.hpp"
#include "runtime_control.hpp"
#include "runtime_resources.hpp"
#include "starpu_start.hpp"
#include "submission.hpp"
#include "tessera/error.hpp"
#include "worker_sleep.hpp"

namespace tessera {

// Resources that cannot be freed any more (StarPU already stopped, or this is a forked child
// without StarPU's threads) stay until the process ends, in a list that is never destroyed, so
// that leak checkers see them as kept on purpose.
namespace {
void retain_until_exit(std::shared_ptr<void> resources) {
  static auto* retained = new std::vector<std::shared_ptr<void>>();
  static auto* mutex = new std::mutex;
  std::lock_guard<std::mutex> lock(*mutex);
  retained->push_back(std::move(resources));
}
}  // namespace

struct Runtime::Impl {
  bool attached = false;
  bool verbose = false;
  pid_t owner_pid = 0;  // the process that started or attached to StarPU
  std::string scheduler;
  int cpu_workers = 0;
  int cuda_workers = 0;
  int cuda_devices = 0;
  std::vector<int> cuda_device_ids;  // of the CUDA workers, in increasing order
  std::size_t gpu_memory_bytes = 0;
  // The host's, read once at the start: a machine snapshot is taken for every request, and
  // reading it (sysinfo) cost a system call on each.
  std::size_t physical_memory_bytes = 0;
  std::optional<detail::SingleThreadedBlas> attached_blas;  // an attached runtime's, for its lifetime
  std::mutex pause_mutex;
  bool votes_awake = false;  // this runtime's workers stay awake when idle (see WorkerSleep)
  int explicit_pauses = 0;   // its pause_workers() not yet resumed
  mutable std::mutex notices_mutex;
  std::vector<std::string> notices;
  mutable std::atomic<bool> said_hybrid_without_gpu{false};
  mutable std::atomic<long> machine_snapshots{0};
  std::unique_ptr<detail::RuntimeResources> resources;
  detail::PolicyEntry policy;  // the running policy (an unknown one: no mode restriction)
  ModeChoice automatic;        // what Mode::automatic runs as
  // What was made on this runtime and may outlive it (see RuntimeControl::track and adopt).
  std::mutex made_mutex;
  std::vector<std::weak_ptr<detail::Submission>> requests;
  std::vector<std::pair<const void*, detail::RuntimeControl::Release>> adopted;

  // Before StarPU stops: every request's tasks waited for and its temporaries released, every
  // adopted object released (or only let go of when StarPU may not be touched).
  void finish_what_outlives(bool starpu_running) {
    std::vector<std::weak_ptr<detail::Submission>> pending;
    {
      std::lock_guard<std::mutex> lock(made_mutex);
      pending.swap(requests);
    }
    // First the requests: the tile matrices they hold forget themselves as they go.
    for (const std::weak_ptr<detail::Submission>& weak : pending)
      if (const std::shared_ptr<detail::Submission> submission = weak.lock()) {
        if (starpu_running)
          submission->release_held();
        else
          retain_until_exit(submission);
      }
    std::vector<std::pair<const void*, detail::RuntimeControl::Release>> owned;
    {
      std::lock_guard<std::mutex> lock(made_mutex);
      owned.swap(adopted);
    }
    for (auto& [owner, release] : owned) release(starpu_running);
  }

  void notice(const std::string& text, bool print) {
    {
      std::lock_guard<std::mutex> lock(notices_mutex);
      notices.push_back(text);
    }
    if (print) std::fprintf(stderr, "tessera: %s\n", text.c_str());
  }
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

// The modes a policy runs, as a plan reads them.
detail::PolicyModes policy_modes(const detail::PolicyEntry& policy) {
  return {policy.name, policy.runs(Mode::gpu), policy.runs(Mode::hybrid), policy.restriction};
}

}  // namespace

Runtime::Runtime(const RuntimeOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.pause_after_idle_us < 0)
    throw InvalidArgument("RuntimeOptions::pause_after_idle_us must be >= 0, not " +
                          std::to_string(options.pause_after_idle_us));
  StarpuOwnership& ownership = starpu_ownership();
  std::lock_guard<std::mutex> lock(ownership.mutex);
  const bool running = starpu_is_initialized() != 0;
  std::optional<detail::CudaWarmUp> warm_up;  // waited for at the end of the start
  impl_->attached = running && ownership.tessera_references == 0;
  impl_->verbose = options.verbose;
  impl_->owner_pid = detail::current_process_id();
  impl_->physical_memory_bytes = detail::physical_memory_bytes();
  if (running) {
    if (!impl_->attached && starpu_init(nullptr) != 0) throw RuntimeError("StarPU could not be shared");
    impl_->scheduler = detail::running_policy_name();
  } else {
    std::vector<std::string> set_aside, notices;
    impl_->scheduler = detail::start_starpu(options, set_aside, notices, warm_up);
    for (const std::string& path : set_aside)
      impl_->notice("StarPU performance-model file " + path + " was corrupt; set aside as " + path +
                        ".corrupt, it will be recalibrated",
                    true);
    for (const std::string& text : notices) impl_->notice(text, impl_->verbose);
  }
  impl_->policy = detail::policy_or_unrestricted(impl_->scheduler);
  if (!impl_->attached) ++ownership.tessera_references;
  impl_->cpu_workers = static_cast<int>(starpu_cpu_worker_get_count());
  impl_->cuda_workers = static_cast<int>(starpu_cuda_worker_get_count());
  impl_->cuda_devices = detail::cuda_devices_in_use();
#ifdef TESSERA_HAVE_CUDA
  impl_->cuda_device_ids = detail::cuda_devices_in_order();
#endif
  impl_->gpu_memory_bytes = detail::smallest_cuda_memory_node_bytes();
  impl_->automatic = detail::automatic_mode_for(policy_modes(impl_->policy), impl_->cpu_workers,
                                                detail::cuda_worker_throughputs(), options.objective);
  // Parallelism comes from the task graph: every CPU task calls single-threaded BLAS (for a
  // runtime Tessera started, whenever its workers are awake: see WorkerSleep).
  if (impl_->attached) impl_->attached_blas.emplace();
  impl_->resources = std::make_unique<detail::RuntimeResources>(static_cast<int>(starpu_worker_get_count()),
                                                                options.host_tiles,
                                                                impl_->policy.places_by_perf_models,
                                                                options.urgent_streams);
  impl_->resources->set_gpu_workers(detail::workers_by_gpu(), options.gpu_placement == GpuPlacement::block_cyclic);
  try {
    {
      // The contexts are made by a task on each CUDA worker, which must be awake even when
      // another Runtime sharing this StarPU lets the workers sleep.
      const detail::WorkersAwake awake(!impl_->attached);
      detail::create_cuda_contexts(*impl_->resources, options.tuning_file);
    }
    if (!impl_->attached) {
      impl_->votes_awake = !options.pause_when_idle;
      const bool starts_starpu = !running;
      detail::change_worker_sleep([&](detail::WorkerSleep& sleep) {  // idle from the start
        if (starts_starpu) sleep.pause_delay = std::chrono::microseconds(options.pause_after_idle_us);
        sleep.awake_votes += impl_->votes_awake;
      });
    }
  } catch (...) {
    if (!impl_->attached) {
      --ownership.tessera_references;
      starpu_shutdown();
    }
    throw;
  }
}

Runtime::~Runtime() {
  // A child made by fork() has none of StarPU's threads: stopping them would wait for ever.
  if (detail::current_process_id() != impl_->owner_pid) {
    impl_->finish_what_outlives(false);
    retain_until_exit(std::shared_ptr<detail::RuntimeResources>(std::move(impl_->resources)));
    return;
  }
  StarpuOwnership& ownership = starpu_ownership();
  std::lock_guard<std::mutex> lock(ownership.mutex);
  if (!starpu_is_initialized()) {
    // The host application already shut its StarPU down, and with it the means to free pinned
    // memory and CUDA handles: leave them to the end of the process, held by a list that is never
    // destroyed (so that leak checkers see them as retained on purpose, not lost).
    impl_->finish_what_outlives(false);
    retain_until_exit(std::shared_ptr<detail::RuntimeResources>(std::move(impl_->resources)));
    return;
  }
  // Awake while the last tasks and the data go home; this runtime's pauses and vote end here.
  if (!impl_->attached)
    detail::change_worker_sleep([&](detail::WorkerSleep& sleep) {
      ++sleep.forced_awake;
      sleep.explicit_pauses -= impl_->explicit_pauses;
      sleep.awake_votes -= impl_->votes_awake;
    });
  impl_->finish_what_outlives(true);
  starpu_task_wait_for_all();
  detail::destroy_cuda_contexts(*impl_->resources);
  impl_->resources.reset();  // pinned memory goes back while StarPU can still free it
  if (impl_->attached) return;
  const bool last = --ownership.tessera_references == 0;
  if (!last) detail::change_worker_sleep([](detail::WorkerSleep& sleep) { --sleep.forced_awake; });
  if (last) detail::worker_sleep().stop_pauser();
  starpu_shutdown();  // only the last reference really stops StarPU
  if (last) {  // StarPU stopped awake; the next start pauses again
    std::lock_guard<std::mutex> sleep_lock(detail::worker_sleep().mutex);
    --detail::worker_sleep().forced_awake;
    detail::worker_sleep().blas.reset();
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
  bool hybrid_without_gpu = false;
  const Mode mode = detail::resolve_mode(detail::RuntimeControl::machine(*this), requested, &hybrid_without_gpu);
  if (hybrid_without_gpu) detail::RuntimeControl::say_hybrid_without_gpu(*this);
  return mode;
}

ModeChoice Runtime::automatic_mode() const { return impl_->automatic; }

void Runtime::pause_workers() {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  ++impl_->explicit_pauses;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { ++sleep.explicit_pauses; });
}

void Runtime::resume_workers() {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  if (impl_->explicit_pauses == 0) throw InvalidArgument("Runtime::resume_workers: the workers are not paused");
  --impl_->explicit_pauses;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { --sleep.explicit_pauses; });
}

bool Runtime::workers_paused() const {
  std::lock_guard<std::mutex> lock(detail::worker_sleep().mutex);
  return detail::worker_sleep().starpu_paused;
}

void Runtime::set_pause_when_idle(bool pause) {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  const bool awake = !pause;
  if (awake == impl_->votes_awake) return;
  impl_->votes_awake = awake;
  detail::change_worker_sleep([&](detail::WorkerSleep& sleep) { sleep.awake_votes += awake ? 1 : -1; });
}

std::vector<std::string> Runtime::notices() const {
  std::lock_guard<std::mutex> lock(impl_->notices_mutex);
  return impl_->notices;
}

namespace {

// The shared runtime and whether it is gone. It is destroyed at exit, before the atexit handlers
// registered ahead of its construction run, and such a handler may still call Tessera (a LAPACK
// program cleaning up, through the drop-in): it must get an error, not a destroyed runtime. The
// flag is trivially destructible, so it outlives every exit handler.
struct SharedRuntime {
  explicit SharedRuntime(const RuntimeOptions& options) : runtime(options) {}
  ~SharedRuntime() { ended().store(true); }  // before `runtime` is torn down
  SharedRuntime(const SharedRuntime&) = delete;
  SharedRuntime& operator=(const SharedRuntime&) = delete;

  static std::atomic<bool>& ended() {
    static std::atomic<bool> flag{false};
    return flag;
  }

  Runtime runtime;
};

}  // namespace

Runtime& Runtime::shared() {
  if (SharedRuntime::ended().load())
    throw RuntimeError("the shared runtime has already stopped: the process is exiting");
  // Constructed in place (not assigned into a static pointer made earlier): its destructor is
  // registered for the end of the process after the constructor has initialized CUDA, so it runs
  // before the CUDA runtime's own exit handlers, while StarPU can still stop its CUDA workers.
  // A constructor that throws leaves it unconstructed, and the next call tries again.
  static SharedRuntime shared(RuntimeOptions::from_environment().for_mode(FactorOptions::from_environment().mode));
  return shared.runtime;
}

bool Runtime::shared_ended() noexcept { return SharedRuntime::ended().load(); }
const char* starpu_version() noexcept {
#define TESSERA_TEXT(x) #x
#define TESSERA_VERSION_TEXT(major, minor, release) TESSERA_TEXT(major) "." TESSERA_TEXT(minor) "." TESSERA_TEXT(release)
  return TESSERA_VERSION_TEXT(STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
#undef TESSERA_VERSION_TEXT
#undef TESSERA_TEXT
}

bool Runtime::called_from_task() noexcept { return starpu_is_initialized() && starpu_worker_get_id() >= 0; }

namespace detail {

void RuntimeControl::check_callable(const Runtime& runtime) {
  if (detail::current_process_id() != runtime.impl_->owner_pid)
    throw RuntimeError("Tessera's runtime was started by process " + std::to_string(runtime.impl_->owner_pid) +
                       "; a child made by fork() has none of its threads and cannot use it");
  if (starpu_worker_get_id() >= 0)
    throw RuntimeError(
        "Tessera cannot be called from inside a StarPU task: the call would wait for tasks that need this "
        "worker; submit from an application thread instead");
}

void RuntimeControl::begin_work(Runtime& runtime) {
  if (runtime.impl_->attached) return;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { ++sleep.requests; });
}

void RuntimeControl::end_work(Runtime& runtime) noexcept {
  if (runtime.impl_->attached) return;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { --sleep.requests; });
}

void RuntimeControl::work_waited() noexcept {
  detail::WorkerSleep& sleep = detail::worker_sleep();
  std::lock_guard<std::mutex> lock(sleep.mutex);
  if (sleep.should_sleep()) sleep.blas.reset();
}

void RuntimeControl::begin_transfers(Runtime& runtime) {
  if (runtime.impl_->attached) return;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { ++sleep.forced_awake; });
}

void RuntimeControl::end_transfers(Runtime& runtime) noexcept {
  if (runtime.impl_->attached) return;
  detail::change_worker_sleep([](detail::WorkerSleep& sleep) { --sleep.forced_awake; });
}

void RuntimeControl::handles_handed_out(Runtime& runtime) noexcept {
  runtime.set_pause_when_idle(false);
}

void RuntimeControl::track(Runtime& runtime, const std::shared_ptr<Submission>& submission) noexcept {
  Runtime::Impl& impl = *runtime.impl_;
  try {
    std::lock_guard<std::mutex> lock(impl.made_mutex);
    auto& requests = impl.requests;
    if (requests.size() == requests.capacity())  // forget finished requests before growing
      requests.erase(std::remove_if(requests.begin(), requests.end(),
                                    [](const std::weak_ptr<Submission>& r) { return r.expired(); }),
                     requests.end());
    requests.push_back(submission);
    return;
  } catch (...) {
  }
  try {
    submission->release_held();  // no memory to track it: finished now, as the runtime would
  } catch (...) {
  }
}

void RuntimeControl::adopt(Runtime& runtime, const void* owner, Release release) {
  std::lock_guard<std::mutex> lock(runtime.impl_->made_mutex);
  runtime.impl_->adopted.emplace_back(owner, std::move(release));
}

void RuntimeControl::forget(Runtime& runtime, const void* owner) noexcept {
  std::lock_guard<std::mutex> lock(runtime.impl_->made_mutex);
  auto& adopted = runtime.impl_->adopted;
  const auto it = std::find_if(adopted.begin(), adopted.end(), [&](const auto& entry) { return entry.first == owner; });
  if (it != adopted.end()) adopted.erase(it);
}

Machine RuntimeControl::machine(const Runtime& runtime) {
  const Runtime::Impl& impl = *runtime.impl_;
  impl.machine_snapshots.fetch_add(1, std::memory_order_relaxed);
  Machine machine;
  machine.cpu_workers = impl.cpu_workers;
  machine.cuda_workers = impl.cuda_workers;
  machine.cuda_devices = impl.cuda_devices;
  machine.gpu_memory_bytes = impl.gpu_memory_bytes;
#ifdef TESSERA_HAVE_CUDA
  machine.built_with_cuda = true;
#else
  machine.built_with_cuda = false;
#endif
  machine.policy = policy_modes(impl.policy);
  machine.automatic = impl.automatic;
  machine.host_tiles = impl.resources->host_memory().mode();
  machine.gpus_for_tiles = impl.resources->gpus_for_tiles();
  machine.cuda_device_ids = impl.cuda_device_ids;
  machine.physical_memory_bytes = impl.physical_memory_bytes;
  return machine;
}

long RuntimeControl::machine_snapshots(const Runtime& runtime) noexcept {
  return runtime.impl_->machine_snapshots.load(std::memory_order_relaxed);
}

bool RuntimeControl::says_plans(const Runtime& runtime) noexcept { return runtime.impl_->verbose; }

void RuntimeControl::say_plan(const Runtime& runtime, const std::vector<std::string>& reasons) {
  if (!says_plans(runtime)) return;
  std::string text;
  for (const std::string& reason : reasons) text += (text.empty() ? "" : "; ") + reason;
  std::fprintf(stderr, "tessera: plan: %s\n", text.c_str());
}

void RuntimeControl::say_hybrid_without_gpu(const Runtime& runtime) {
  if (!runtime.impl_->said_hybrid_without_gpu.exchange(true))
    runtime.impl_->notice("hybrid mode without CUDA workers: running on the CPUs only", runtime.impl_->verbose);
}

}  // namespace detail

}  // namespace tessera
