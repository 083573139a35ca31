#include "starpu_start.hpp"

#include <sched.h>
#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "address_space.hpp"
#include "cuda_context.hpp"
#include "device_memory.hpp"
#include "environment.hpp"
#include "perfmodel_files.hpp"
#include "pinned_host_memory.hpp"
#include "registry.hpp"
#include "runtime_control.hpp"
#include "tessera/error.hpp"
#include "thresholds.hpp"

namespace tessera::detail {

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

namespace {

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
  if (const std::optional<int> visible = detail::cuda_visible_devices_from_environment())
    gpus = std::min(gpus, *visible);
  return conf.ncuda < 0 ? gpus : std::min(conf.ncuda, gpus);
}

// StarPU would start CUDA workers wherever the CUDA runtime finds a GPU, and abort when cuBLAS then
// cannot start: none where one of CUDA's libraries cannot be used, an error where some are asked for.
// Where there is no GPU and none is asked for, there is nothing to refuse, and the libraries are not
// probed (which would load them).
void refuse_cuda_workers_without_cuda_libraries(starpu_conf& conf) {
  if (conf.ncuda == 0 || (conf.ncuda < 0 && detail::nvidia_device_node_count() == 0)) return;
  const std::optional<std::string> problem = detail::cuda_libraries_problem();
  if (!problem) return;
  if (conf.ncuda > 0)
    throw RuntimeError(std::to_string(conf.ncuda) +
                       " CUDA workers asked for, but CUDA's libraries cannot be used: " + *problem);
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

// What StarPU's "no worker" refusal of `conf` (as given to starpu_init) means for the caller.
std::string no_worker_message(const starpu_conf& conf) {
  const std::string cpus = conf.ncpus == 0
                               ? "0 CPU workers were asked for (the CPU-worker option, TESSERA_NCPU or STARPU_NCPU)"
                               : "no CPU worker could start";
  const std::string gpus = conf.ncuda == 0
                               ? "no CUDA worker was to start (none asked for, or CUDA's libraries unusable)"
                               : "no CUDA worker could start (no usable GPU)";
  return "StarPU could not start: no worker is available: " + cpus + ", and " + gpus;
}

void init_starpu(starpu_conf& conf) {
  const starpu_conf given = conf;
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError(no_worker_message(given));
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
  const int planned =
      conf.ncpus >= 0 ? conf.ncpus : std::max(1, static_cast<int>(allowed_cpus().size()) - conf.reserve_ncpus);
  const int cuda_threads = conf.ncuda == 0 ? 0 : detail::nvidia_device_nodes() * std::max(1, options.workers_per_cuda);
  const std::size_t stack = detail::worker_thread_stack_bytes();
  const std::size_t per_worker = stack + detail::blas_buffer_bytes_per_worker();
  const std::size_t reserved = stack * (kOtherStarpuThreads + cuda_threads) + detail::program_blas_bytes();
  const int fit = detail::regions_that_fit(planned, per_worker, reserved);
  if (fit >= planned) return std::nullopt;
  const std::string why =
      "the process's address-space limit (ulimit -v / -d) leaves room for the threads and BLAS "
      "buffers of " +
      std::to_string(fit) + " CPU workers (" + std::to_string(per_worker >> 20) + " MiB each), not " +
      std::to_string(planned);
  const bool fixed = options.ncpus >= 0 || detail::starpu_ncpu_from_environment();
  if (fit == 0 || fixed)
    throw ResourceError(
        why + (fit == 0 ? "" : ": ask for at most " + std::to_string(fit) + " (RuntimeOptions::ncpus, TESSERA_NCPU)"));
  conf.ncpus = fit;
  conf.reserve_ncpus = 0;  // fewer workers than cores: the caller's core is free anyway
  return why + ": starting " + std::to_string(fit);
}

// Once started, the workers map their BLAS buffers at once, while there is room. Where StarPU's
// start took more than the estimate above allowed for, it starts again with the workers whose
// buffers still fit (the threads that ended leave their arenas to the new ones), unless the
// number was fixed; returns what to tell a person then.
std::optional<std::string> map_blas_buffers_within_address_space(const RuntimeOptions& options,
                                                                 const starpu_conf& prepared) {
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
      throw ResourceError(
          why +
          (fit == 0 ? "" : ": ask for at most " + std::to_string(fit) + " (RuntimeOptions::ncpus, TESSERA_NCPU)"));
    starpu_conf fewer = prepared;
    fewer.ncpus = fit;
    fewer.reserve_ncpus = 0;
    init_starpu(fewer);
    notice = why + ": started " + std::to_string(fit);
  }
  if (starpu_cpu_worker_get_count() > 0) detail::map_blas_buffers_on_cpu_workers();
  return notice;
}

}  // namespace

std::string start_starpu(const RuntimeOptions& options, std::vector<std::string>& set_aside,
                         std::vector<std::string>& notices, std::optional<CudaWarmUp>& warm_up) {
  const detail::WorkerStacks stacks;         // for the threads started here: StarPU's, the CUDA warm-up's
  const detail::StarpuBindingScope binding;  // bind_to_the_allowed_cpus's binding, for this start only
  detail::check_starpu_environment();        // starpu_conf_init already parses StarPU's variables
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
  if (conf.ncuda != 0) warm_up.emplace(detail::starpu_cuda_ids_from_environment() ? 0 : conf.ncuda);
  if (std::optional<std::string> fewer = fit_cpu_workers_before_start(options, conf)) notices.push_back(*fewer);
  const starpu_conf prepared = conf;  // starpu_init may change what it is given
  // StarPU's pinned host buffers (received tiles, host copies) pinned faster than by cudaHostAlloc.
  if (conf.ncuda != 0) detail::set_starpu_host_allocation_hooks(detail::register_pinned_memory_from_environment());
  init_starpu(conf);
  if (std::optional<std::string> fewer = map_blas_buffers_within_address_space(options, prepared))
    notices.push_back(*fewer);
  return running_policy_name();
}

}  // namespace tessera::detail
