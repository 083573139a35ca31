#include "tessera/runtime.hpp"

#include <sched.h>
#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "address_space.hpp"
#include "gpu_throughput.hpp"
#include "plan.hpp"
#include "thresholds.hpp"
#include "cuda_context.hpp"
#include "cuda_warm_up.hpp"
#include "caller_memory.hpp"
#include "device_memory.hpp"
#include "environment.hpp"
#include "perfmodel_files.hpp"
#include "pinned_host_memory.hpp"
#include "process_state.hpp"
#include "registry.hpp"
#include "runtime_control.hpp"
#include "runtime_resources.hpp"
#include "submission.hpp"
#include "tessera/error.hpp"

namespace tessera {

// Whether StarPU's workers should sleep: paused explicitly (and not moving data home), or idle
// with no request in flight and no runtime wanting them awake. StarPU is one per process and the
// Runtimes Tessera starts share it, so this state is process-wide (worker_sleep()); Tessera holds
// at most one starpu_pause() of its own. Attached runtimes never take part. While work may run
// tasks BLAS is single-threaded; idle, the program has its own thread count back.
//
// Idle workers are paused only after `pause_delay` (RuntimeOptions::pause_after_idle_us) without
// work, by a thread of its own: a program that calls again within it finds the workers awake
// (resuming paused workers costs a call a fraction of a millisecond), and one that does something
// else has its cores back soon after. An explicit pause takes effect at once.
struct WorkerSleep {
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  int awake_votes = 0;       // runtimes whose workers must not sleep when idle
  int explicit_pauses = 0;   // pause_workers() not yet resumed, all runtimes
  int requests = 0;          // requests in flight
  int forced_awake = 0;      // scopes that need the workers whatever else holds (data going home)
  bool starpu_paused = false;
  std::chrono::microseconds pause_delay{0};  // set by the Runtime that starts StarPU
  std::optional<Clock::time_point> pause_due;  // when idle workers are to be paused
  std::condition_variable pause_changed;
  std::thread pauser;  // makes the delayed pauses; stopped before StarPU stops
  bool pauser_stopping = false;
  std::optional<detail::SingleThreadedBlas> blas;  // held while work may run

  bool should_sleep() const {
    if (forced_awake > 0) return false;
    return explicit_pauses > 0 || (awake_votes == 0 && requests == 0);
  }
  // Called with the mutex held after any change.
  void apply() {
#ifdef STARPU_SIMGRID
    // In StarPU's simulation idle workers cost no time of this machine, and starpu_pause() under
    // this lock could hand the thread to another simulated worker that wants the lock.
    return;
#endif
    if (!should_sleep()) {
      pause_due.reset();
      if (starpu_paused) {
        starpu_resume();
        starpu_paused = false;
      }
      if (!blas) blas.emplace();
      return;
    }
    if (!starpu_paused) {
      if (explicit_pauses > 0 || pause_delay.count() == 0)
        pause_now();
      else if (!pause_due)
        schedule_pause();
    }
    // Giving the program its BLAS threads back may start threads, which inherit the calling
    // thread's CPU binding: a worker ending the last request leaves it to the application thread
    // that waits for it (RuntimeControl::work_waited).
    if (starpu_worker_get_id() < 0) blas.reset();
  }

  void pause_now() {
    starpu_pause();
    starpu_paused = true;
    pause_due.reset();
  }

  void schedule_pause() {
    pause_due = Clock::now() + pause_delay;
    if (!pauser.joinable()) {
      pauser_stopping = false;
      const detail::WorkerStacks stacks;  // StarPU's pause and resume run on it
      pauser = std::thread([this] { run_pauser(); });
    }
    pause_changed.notify_one();
  }

  void run_pauser() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!pauser_stopping) {
      if (!pause_due) {
        pause_changed.wait(lock);
      } else if (const Clock::time_point due = *pause_due; Clock::now() < due) {
        pause_changed.wait_until(lock, due);
      } else if (should_sleep() && !starpu_paused) {
        pause_now();
      } else {
        pause_due.reset();
      }
    }
  }

  // Before StarPU stops: no pause may come after.
  void stop_pauser() {
    std::thread stopped;
    {
      std::lock_guard<std::mutex> lock(mutex);
      pauser_stopping = true;
      pause_due.reset();
      pause_changed.notify_all();
      stopped = std::move(pauser);
    }
    if (stopped.joinable()) stopped.join();
  }
};

// Keeps the workers awake for a scope (work Tessera itself runs on them), paused or idle.
class WorkersAwake {
 public:
  explicit WorkersAwake(bool take_part);
  ~WorkersAwake();
  WorkersAwake(const WorkersAwake&) = delete;
  WorkersAwake& operator=(const WorkersAwake&) = delete;

 private:
  bool take_part_;
};

// Never destroyed: a forked child, or a program that leaves a Runtime alive at exit, holds a
// pauser that may not be joined then.
WorkerSleep& worker_sleep() {
  static WorkerSleep& sleep = *new WorkerSleep;
  return sleep;
}

// Runs `change` on the process-wide state under its lock, then pauses or resumes accordingly.
template <class Change>
void change_worker_sleep(Change&& change) {
  WorkerSleep& sleep = worker_sleep();
  std::lock_guard<std::mutex> lock(sleep.mutex);
  change(sleep);
  sleep.apply();
}

WorkersAwake::WorkersAwake(bool take_part) : take_part_(take_part) {
  if (take_part_) change_worker_sleep([](WorkerSleep& sleep) { ++sleep.forced_awake; });
}
WorkersAwake::~WorkersAwake() {
  if (take_part_) change_worker_sleep([](WorkerSleep& sleep) { --sleep.forced_awake; });
}

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

// The CPUs this process may run on (its affinity mask), in increasing order.
std::vector<unsigned> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The GPUs this process will drive: the device nodes, of them those CUDA_VISIBLE_DEVICES lists,
// at most conf.ncuda.
int gpus_to_drive(const starpu_conf& conf) {
  if (conf.ncuda == 0) return 0;
  int gpus = detail::nvidia_device_nodes();
  if (const std::optional<int> visible = detail::cuda_visible_devices_from_environment()) gpus = std::min(gpus, *visible);
  return conf.ncuda < 0 ? gpus : std::min(conf.ncuda, gpus);
}

// StarPU would start CUDA workers wherever the CUDA runtime finds a GPU, and abort when cuBLAS then
// cannot start: none where one of CUDA's libraries cannot be used, an error where some are asked for.
void refuse_cuda_workers_without_cuda_libraries(starpu_conf& conf) {
  if (conf.ncuda == 0) return;
  const std::optional<std::string> problem = detail::cuda_libraries_problem();
  if (!problem) return;
  if (conf.ncuda > 0)
    throw RuntimeError(std::to_string(conf.ncuda) + " CUDA workers asked for, but CUDA's libraries cannot be used: " + *problem);
  conf.ncuda = 0;
}

// Whether the calling thread keeps a core of `cpus` to itself (see keep_a_core_for_the_caller).
bool core_kept_for_the_caller(std::size_t cpus, long gpus, long driver_threads) {
  if (gpus <= 0) return cpus >= static_cast<std::size_t>(detail::kThresholds.caller_core_without_gpus_from);
  return static_cast<long>(cpus) >= driver_threads + 2;
}

// StarPU counts and binds the node's cores whatever CPUs the process may run on, so two cases
// need Tessera to bind its threads. Several MPI ranks on one node: StarPU binds the k-th worker of
// every process to the same core, so the ranks' workers would pile onto the first cores; each rank
// takes its own share of the CPUs it may use (the launcher's binding when there is one, its 1/size
// slice of them when the launcher did not bind). One process whose affinity leaves out some of
// the node's CPUs (taskset, numactl, a launcher's binding): its workers would run on CPUs it was
// kept from, as many as the node has. Unless the user set StarPU's binding, the threads are bound
// to those CPUs, and one CPU worker starts per CPU left over by the threads that must not wait for
// a time slice (StarPU-MPI's progress thread, one driver thread per CUDA worker, and the thread
// that calls Tessera where a core is kept for it), unless told how many.
void bind_to_the_allowed_cpus(const RuntimeOptions& options, starpu_conf& conf) {
  const std::vector<unsigned> allowed = allowed_cpus();
  if (allowed.empty()) return;
  const auto online = static_cast<std::size_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const std::optional<detail::LocalRank> local = detail::local_mpi_rank_from_environment();
  const bool ranks = local && local->size >= 2;
  if (!ranks && allowed.size() >= online) return;
  const std::vector<unsigned> share = ranks ? detail::cpus_for_local_rank(allowed, online, *local) : allowed;
  if (detail::starpu_binding_from_environment(share)) return;
  detail::bind_starpu_threads_to(share);
  if (options.ncpus >= 0 || detail::starpu_ncpu_from_environment()) return;
  const long gpus = gpus_to_drive(conf);
  const long drivers = gpus * std::max(1, options.workers_per_cuda);
  const bool caller = ranks ? gpus > 0 : core_kept_for_the_caller(share.size(), gpus, drivers);
  const long busy_threads = (ranks ? 1 : 0) + drivers + (caller ? 1 : 0);
  conf.ncpus = static_cast<int>(std::max(1L, static_cast<long>(share.size()) - busy_threads));
}

// StarPU binds a thread to every core it is given: its CPU workers and one driver thread per CUDA
// worker. The application's thread that submits a request and waits for it then shares a core
// with a worker, and awake idle workers poll in a tight loop, so that thread waits for the
// kernel's time slices: a short device-API call then takes several times longer than the vendor
// call it makes. Unless the CPU workers are counted by the caller, one core is kept for it
// (StarPU's reserve_ncpus) where GPUs will be driven and at least one core is left for a CPU
// worker.
//
// Without GPUs the same thread inserts a factorization's tasks while the workers run the first
// ones: on a machine of many cores a worker fewer is faster, on one of few cores (where a worker
// is a large share of the machine) it is slower, so the core is kept from
// Thresholds::caller_core_without_gpus_from cores.

void keep_a_core_for_the_caller(const RuntimeOptions& options, starpu_conf& conf) {
  if (conf.ncpus >= 0 || conf.reserve_ncpus > 0) return;
  const int gpus = gpus_to_drive(conf);
  const long driver_threads = static_cast<long>(gpus) * std::max(1, options.workers_per_cuda);
  if (core_kept_for_the_caller(allowed_cpus().size(), gpus, driver_threads)) conf.reserve_ncpus = 1;
}

void init_starpu(starpu_conf& conf) {
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU could not start: no worker is available (check STARPU_NCPU/STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU could not start (starpu_init returned " + std::to_string(ret) + ")");
}

// Under an address-space limit (ulimit -v, -d) StarPU aborts where it cannot start a thread, and
// a CPU worker without room for the BLAS buffer it maps in its first task hangs (OpenBLAS retries
// for ever: address_space.hpp), as does the program's own BLAS where Tessera took its room. Before
// StarPU starts, the CPU workers asked for are cut to those whose stacks and buffers fit beside
// the other threads StarPU starts and the program's BLAS, unless the number was fixed by the
// caller; none fitting, or a fixed number that does not fit, is an error. Returns what to tell a
// person when the workers were cut.
constexpr int kOtherStarpuThreads = 4;  // beside the workers: StarPU's own, and headroom

std::optional<std::string> fit_cpu_workers_before_start(const RuntimeOptions& options, starpu_conf& conf) {
  if (!detail::address_space_limited()) return std::nullopt;
  const int planned = conf.ncpus >= 0 ? conf.ncpus
                                      : std::max(1, static_cast<int>(allowed_cpus().size()) - conf.reserve_ncpus);
  const int cuda_threads = conf.ncuda == 0 ? 0 : detail::nvidia_device_nodes() * std::max(1, options.workers_per_cuda);
  const std::size_t stack = detail::worker_thread_stack_bytes();
  const std::size_t per_worker = stack + detail::blas_buffer_bytes_per_worker();
  const std::size_t reserved = stack * (kOtherStarpuThreads + cuda_threads) + detail::program_blas_bytes();
  const int fit = detail::regions_that_fit(planned, per_worker, reserved);
  if (fit >= planned) return std::nullopt;
  const std::string why = "the process's address-space limit (ulimit -v / -d) leaves room for the threads and BLAS "
                          "buffers of " + std::to_string(fit) + " CPU workers (" + std::to_string(per_worker >> 20) +
                          " MiB each), not " + std::to_string(planned);
  const bool fixed = options.ncpus >= 0 || detail::starpu_ncpu_from_environment();
  if (fit == 0 || fixed)
    throw ResourceError(why + (fit == 0 ? "" : ": ask for at most " + std::to_string(fit) + " (RuntimeOptions::ncpus, TESSERA_NCPU)"));
  conf.ncpus = fit;
  conf.reserve_ncpus = 0;  // fewer workers than cores: the caller's core is free anyway
  return why + ": starting " + std::to_string(fit);
}

// Once started, the workers map their BLAS buffers at once, while there is room. Where StarPU's
// start took more than the estimate above allowed for, it starts again with the workers whose
// buffers still fit (the threads that ended leave their arenas to the new ones), unless the
// number was fixed; returns what to tell a person then.
std::optional<std::string> map_blas_buffers_within_address_space(const RuntimeOptions& options, const starpu_conf& prepared) {
  if (!detail::address_space_limited()) return std::nullopt;
  const int started = static_cast<int>(starpu_cpu_worker_get_count());
  const std::size_t per_worker = detail::blas_buffer_bytes_per_worker();
  const int fit = detail::regions_that_fit(started, per_worker, detail::program_blas_bytes());
  std::optional<std::string> notice;
  if (fit < started) {
    starpu_shutdown();
    const std::string why = "the process's address-space limit (ulimit -v / -d) leaves room for the BLAS buffers of " +
                            std::to_string(fit) + " CPU workers (" + std::to_string(per_worker >> 20) +
                            " MiB each), not " + std::to_string(started);
    if (fit == 0 || options.ncpus >= 0 || detail::starpu_ncpu_from_environment())
      throw ResourceError(why + (fit == 0 ? "" : ": ask for at most " + std::to_string(fit) + " (RuntimeOptions::ncpus, TESSERA_NCPU)"));
    starpu_conf fewer = prepared;
    fewer.ncpus = fit;
    fewer.reserve_ncpus = 0;
    init_starpu(fewer);
    notice = why + ": started " + std::to_string(fit);
  }
  if (starpu_cpu_worker_get_count() > 0) detail::map_blas_buffers_on_cpu_workers();
  return notice;
}

// Starts StarPU, refusing first what it would abort on; returns the running policy's name and,
// through set_aside, the corrupt performance-model files renamed first, and through notices what
// else to tell a person. When StarPU is to drive GPUs, warm_up pays the process's one-time CUDA
// costs alongside (the caller keeps it running).
std::string start_starpu(const RuntimeOptions& options, std::vector<std::string>& set_aside,
                         std::vector<std::string>& notices, std::optional<detail::CudaWarmUp>& warm_up) {
  const detail::WorkerStacks stacks;   // for the threads started here: StarPU's, the CUDA warm-up's
  const detail::StarpuBindingScope binding;  // bind_to_the_allowed_cpus's binding, for this start only
  detail::check_starpu_environment();  // starpu_conf_init already parses StarPU's variables
  starpu_conf conf;
  starpu_conf_init(&conf);
  // StarPU would replace the program's SIGINT, SIGSEGV and SIGTRAP handlers with its own (through
  // signal(), so a handler installed with SA_SIGINFO is later called without its siginfo): a
  // library leaves them to the program unless asked.
  if (!detail::starpu_catch_signals_from_environment()) conf.catch_signals = 0;
  if (options.ncpus >= 0) conf.ncpus = options.ncpus;
  if (options.ncuda >= 0) conf.ncuda = options.ncuda;
  refuse_cuda_workers_without_cuda_libraries(conf);
  bind_to_the_allowed_cpus(options, conf);
  keep_a_core_for_the_caller(options, conf);
  const std::string requested = options.scheduler.empty() ? "dmdas" : options.scheduler;
  const detail::PolicyEntry policy = detail::find_scheduling_policy(requested);
  if (policy.policy)
    conf.sched_policy = policy.policy;
  else
    conf.sched_policy_name = policy.name.c_str();
  // STARPU_SCHED overrides a policy chosen by name (StarPU's rule), not one passed as a struct; an
  // unknown name is refused as TESSERA_POLICY's is (StarPU would silently run its default).
  const std::optional<std::string> env_policy = detail::starpu_sched_from_environment();
  const detail::PolicyEntry started =
      env_policy && !policy.policy ? detail::find_scheduling_policy(*env_policy) : policy;
  conf.sched_policy_init = started.init;
  // StarPU aborts where it cannot make its calibration directories or write its files.
  const detail::PerfModelLocation models = detail::perf_model_location();
  if (const std::optional<std::string> problem = detail::perf_model_directory_problem(models))
    throw RuntimeError("StarPU cannot keep its calibration in " + models.directory + ": " + *problem +
                       "; set STARPU_PERF_MODEL_DIR to a writable directory");
  // Performance-model files StarPU could not parse are set aside, so that it recalibrates.
  set_aside = detail::set_aside_corrupt_perf_models(models);
  detail::set_starpu_environment_defaults(options);
  // StarPU starts CUDA workers on the first conf.ncuda GPUs (all when -1) unless told which.
  if (conf.ncuda != 0)
    warm_up.emplace(detail::starpu_cuda_ids_from_environment() ? 0 : conf.ncuda);
  if (std::optional<std::string> fewer = fit_cpu_workers_before_start(options, conf)) notices.push_back(*fewer);
  const starpu_conf prepared = conf;  // starpu_init may change what it is given
  // StarPU's pinned host buffers (received tiles, host copies) pinned faster than by cudaHostAlloc.
  if (conf.ncuda != 0) detail::set_starpu_host_allocation_hooks(detail::register_pinned_memory_from_environment());
  init_starpu(conf);
  if (std::optional<std::string> fewer = map_blas_buffers_within_address_space(options, prepared))
    notices.push_back(*fewer);
  return running_policy_name();
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
    impl_->scheduler = running_policy_name();
  } else {
    std::vector<std::string> set_aside, notices;
    impl_->scheduler = start_starpu(options, set_aside, notices, warm_up);
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
  impl_->gpu_memory_bytes = smallest_cuda_memory_node_bytes();
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
      const WorkersAwake awake(!impl_->attached);
      detail::create_cuda_contexts(*impl_->resources, options.tuning_file);
    }
    if (!impl_->attached) {
      impl_->votes_awake = !options.pause_when_idle;
      const bool starts_starpu = !running;
      change_worker_sleep([&](WorkerSleep& sleep) {  // idle from the start
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
    change_worker_sleep([&](WorkerSleep& sleep) {
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
  if (!last) change_worker_sleep([](WorkerSleep& sleep) { --sleep.forced_awake; });
  if (last) worker_sleep().stop_pauser();
  starpu_shutdown();  // only the last reference really stops StarPU
  if (last) {  // StarPU stopped awake; the next start pauses again
    std::lock_guard<std::mutex> sleep_lock(worker_sleep().mutex);
    --worker_sleep().forced_awake;
    worker_sleep().blas.reset();
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
  change_worker_sleep([](WorkerSleep& sleep) { ++sleep.explicit_pauses; });
}

void Runtime::resume_workers() {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  if (impl_->explicit_pauses == 0) throw InvalidArgument("Runtime::resume_workers: the workers are not paused");
  --impl_->explicit_pauses;
  change_worker_sleep([](WorkerSleep& sleep) { --sleep.explicit_pauses; });
}

bool Runtime::workers_paused() const {
  std::lock_guard<std::mutex> lock(worker_sleep().mutex);
  return worker_sleep().starpu_paused;
}

void Runtime::set_pause_when_idle(bool pause) {
  if (impl_->attached) return;
  std::lock_guard<std::mutex> lock(impl_->pause_mutex);
  const bool awake = !pause;
  if (awake == impl_->votes_awake) return;
  impl_->votes_awake = awake;
  change_worker_sleep([&](WorkerSleep& sleep) { sleep.awake_votes += awake ? 1 : -1; });
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
  change_worker_sleep([](WorkerSleep& sleep) { ++sleep.requests; });
}

void RuntimeControl::end_work(Runtime& runtime) noexcept {
  if (runtime.impl_->attached) return;
  change_worker_sleep([](WorkerSleep& sleep) { --sleep.requests; });
}

void RuntimeControl::work_waited() noexcept {
  WorkerSleep& sleep = worker_sleep();
  std::lock_guard<std::mutex> lock(sleep.mutex);
  if (sleep.should_sleep()) sleep.blas.reset();
}

void RuntimeControl::begin_transfers(Runtime& runtime) {
  if (runtime.impl_->attached) return;
  change_worker_sleep([](WorkerSleep& sleep) { ++sleep.forced_awake; });
}

void RuntimeControl::end_transfers(Runtime& runtime) noexcept {
  if (runtime.impl_->attached) return;
  change_worker_sleep([](WorkerSleep& sleep) { --sleep.forced_awake; });
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
