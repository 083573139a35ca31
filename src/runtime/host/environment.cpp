// The one place where Tessera reads (and, for StarPU's defaults, writes) environment variables.
// Every access goes through read_variable() and set_default_variable(), under one lock, so that a
// runtime starting in one thread (which sets StarPU's defaults) never changes the environment
// under a read of Tessera's in another; values are copied out under the lock.
#include "environment.hpp"

#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/trace.hpp"

namespace tessera {

namespace {

std::mutex& environment_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The variable's value if it is set (possibly empty).
std::optional<std::string> read_variable(const char* name) {
  std::lock_guard<std::mutex> lock(environment_mutex());
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

// Sets `name` unless the user already did.
void set_default_variable(const char* name, const std::string& value) {
  std::lock_guard<std::mutex> lock(environment_mutex());
  setenv(name, value.c_str(), 0);
}

// The variable's value if it is set and not empty.
std::optional<std::string> env(const char* name) {
  std::optional<std::string> value = read_variable(name);
  return value && !value->empty() ? value : std::nullopt;
}

int env_int(const char* name, int fallback, int min_value) {
  const std::optional<std::string> value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value->c_str(), &end, 10);
  if (*end != '\0' || parsed < min_value || parsed > 1 << 24)
    throw InvalidArgument(std::string(name) + "='" + *value + "' is not an integer >= " + std::to_string(min_value));
  return static_cast<int>(parsed);
}

}  // namespace

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions options;
  options.ncpus = env_int("TESSERA_NCPU", options.ncpus, 0);
  options.ncuda = env_int("TESSERA_NCUDA", options.ncuda, 0);
  options.workers_per_cuda = env_int("TESSERA_WORKERS_PER_CUDA", options.workers_per_cuda, 1);
  if (const std::optional<std::string> policy = env("TESSERA_POLICY")) options.scheduler = *policy;
  if (const std::optional<std::string> tuning = env("TESSERA_TUNING_FILE")) options.tuning_file = *tuning;
  options.verbose = env_int("TESSERA_VERBOSE", options.verbose ? 1 : 0, 0) != 0;
  if (const std::optional<std::string> tiles = env("TESSERA_HOST_TILES")) options.host_tiles = parse_host_tiles(*tiles);
  options.urgent_streams = env_int("TESSERA_URGENT_STREAMS", options.urgent_streams ? 1 : 0, 0) != 0;
  options.pause_when_idle = env_int("TESSERA_PAUSE_WHEN_IDLE", options.pause_when_idle ? 1 : 0, 0) != 0;
  options.pause_after_idle_us = env_int("TESSERA_PAUSE_AFTER_IDLE_US", options.pause_after_idle_us, 0);
  if (const std::optional<std::string> placement = env("TESSERA_GPU_PLACEMENT"))
    options.gpu_placement = parse_gpu_placement(*placement);
  options.background_write_back =
      env_int("TESSERA_BACKGROUND_WRITE_BACK", options.background_write_back ? 1 : 0, 0) != 0;
  if (const std::optional<std::string> objective = env("TESSERA_OBJECTIVE")) options.objective = parse_objective(*objective);
  return options;
}

RuntimeOptions RuntimeOptions::for_mode(Mode mode) const {
  RuntimeOptions options = *this;
  if (mode == Mode::cpu && options.ncuda < 0 && !read_variable("STARPU_NCUDA")) options.ncuda = 0;
  return options;
}

FactorOptions FactorOptions::from_environment() {
  FactorOptions options;
  options.nb = env_int("TESSERA_NB", options.nb, 1);
  if (const std::optional<std::string> mode = env("TESSERA_MODE")) options.mode = parse_mode(*mode);
  if (const std::optional<std::string> kernels = env("TESSERA_GPU_KERNELS")) options.gpu_kernels = parse_gpu_kernels(*kernels);
  if (const std::optional<std::string> grain = env("TESSERA_TASK_GRAIN")) options.grain = parse_task_grain(*grain);
  options.out_of_core_panel_percent = env_int("TESSERA_OUT_OF_CORE_PANEL_PERCENT", options.out_of_core_panel_percent, 0);
  if (const std::optional<std::string> trace = env("TESSERA_TRACE")) options.trace = std::make_shared<Trace>(*trace);
  return options;
}

namespace detail {

namespace {

// StarPU 1.3 parses these with starpu_get_env_number and aborts the process on a value that is
// not a whole non-negative integer (StarPU's src/common/utils.c, include/starpu_helper.h).
constexpr const char* starpu_integer_variables[] = {
    "STARPU_BACKOFF_MAX", "STARPU_BACKOFF_MIN", "STARPU_BUS_CALIBRATE", "STARPU_BUS_STATS", "STARPU_CALIBRATE",
    "STARPU_CALIBRATE_MINIMUM", "STARPU_CATCH_SIGNALS", "STARPU_CHECK_ENTIRE_PLATFORM", "STARPU_CUDA_PIPELINE",
    "STARPU_CUDA_THREAD_PER_DEV", "STARPU_CUDA_THREAD_PER_WORKER", "STARPU_DIDUSE_BARRIER",
    "STARPU_DISABLE_ASYNCHRONOUS_COPY", "STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY",
    "STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY", "STARPU_DISABLE_KERNELS", "STARPU_DISABLE_PINNING",
    "STARPU_DISK_SWAP_SIZE", "STARPU_DISPLAY_BINDINGS", "STARPU_ENABLE_CUDA_GPU_GPU_DIRECT", "STARPU_FXT_TRACE",
    "STARPU_GENERATE_TRACE", "STARPU_GLOBAL_ARBITER", "STARPU_HISTORY_MAX_ERROR", "STARPU_LIMIT_BANDWIDTH",
    "STARPU_LIMIT_CPU_MEM", "STARPU_LIMIT_CPU_NUMA_MEM", "STARPU_LIMIT_CUDA_MEM", "STARPU_LIMIT_MAX_SUBMITTED_TASKS",
    "STARPU_LIMIT_MIN_SUBMITTED_TASKS", "STARPU_LIMIT_OPENCL_MEM", "STARPU_MAIN_THREAD_BIND",
    "STARPU_MAIN_THREAD_COREID", "STARPU_MAIN_THREAD_CPUID", "STARPU_MALLOC_SIMULATION_FOLD",
    "STARPU_MAX_MEMORY_USE", "STARPU_MAX_PRIO", "STARPU_MAX_WORKERSIZE", "STARPU_MEMORY_STATS",
    "STARPU_MINIMUM_AVAILABLE_MEM", "STARPU_MINIMUM_CLEAN_BUFFERS", "STARPU_MIN_PRIO", "STARPU_MIN_WORKERSIZE",
    "STARPU_NCPU", "STARPU_NCPUS", "STARPU_NCUDA", "STARPU_NOPENCL", "STARPU_NTASKS_THRESHOLD",
    "STARPU_NTHREADS_PER_CORE", "STARPU_NWORKER_PER_CUDA", "STARPU_OPENCL_ONLY_ON_CPUS", "STARPU_OPENCL_ON_CPUS",
    "STARPU_OPENCL_PIPELINE", "STARPU_PCI_FLAT", "STARPU_PERF_MODEL_HOMOGENEOUS_CPU",
    "STARPU_PERF_MODEL_HOMOGENEOUS_CUDA", "STARPU_PERF_MODEL_HOMOGENEOUS_OPENCL", "STARPU_PREFETCH",
    "STARPU_RESERVE_NCPU", "STARPU_SCHED_READY", "STARPU_SCHED_SORTED_ABOVE", "STARPU_SCHED_SORTED_BELOW",
    "STARPU_SILENT", "STARPU_SINGLE_COMBINED_WORKER", "STARPU_STATS", "STARPU_SYNTHESIZE_ARITY_COMBINED_WORKER",
    "STARPU_TARGET_AVAILABLE_MEM", "STARPU_TARGET_CLEAN_BUFFERS", "STARPU_TASK_BREAK_ON_EXEC",
    "STARPU_TASK_BREAK_ON_POP", "STARPU_TASK_BREAK_ON_PUSH", "STARPU_TASK_BREAK_ON_SCHED", "STARPU_TASK_PROGRESS",
    "STARPU_TRACE_BUFFER_SIZE", "STARPU_USE_NUMA", "STARPU_WATCHDOG_CRASH", "STARPU_WATCHDOG_DELAY",
    "STARPU_WORKERS_GETBIND", "STARPU_WORKERS_NOBIND", "STARPU_WORKER_TREE"};

// Parsed with starpu_get_env_float_default: the whole value must be a number.
constexpr const char* starpu_real_variables[] = {"STARPU_EXP_LEN_THRESHOLD", "STARPU_IDLE_POWER", "STARPU_SCHED_ALPHA",
                                                 "STARPU_SCHED_BETA", "STARPU_SCHED_GAMMA", "STARPU_WINDOW_TIME_SIZE"};

// StarPU reads an empty value as 0, so only a set, non-empty value is checked; values beyond int
// are refused too, since StarPU truncates them to int.
void check_starpu_integer(const char* name) {
  const std::optional<std::string> value = env(name);
  if (!value) return;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(value->c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || parsed < 0 || parsed > INT_MAX)
    throw InvalidArgument(std::string(name) + "='" + *value + "' is not a non-negative integer (StarPU would abort)");
}

// Variables StarPU 1.3 also asserts on when their value is out of a range (StarPU's
// src/core/topology.c, src/core/detect_combined_workers.c). An empty value reads as 0.
struct StarpuRange {
  const char* name;
  long low;
  long high;
};
// Priority levels StarPU may be asked for (STARPU_MIN_PRIO to STARPU_MAX_PRIO): far beyond any
// use of priorities, and a few MB per worker at most.
constexpr long kMaxStarpuPriorityLevels = 1L << 16;

constexpr StarpuRange starpu_ranged_variables[] = {
    {"STARPU_NWORKER_PER_CUDA", 1, STARPU_NMAXWORKERS - 1},
    {"STARPU_SYNTHESIZE_ARITY_COMBINED_WORKER", 1, INT_MAX},
};

void check_starpu_range(const StarpuRange& range) {
  const std::optional<std::string> value = read_variable(range.name);
  if (!value) return;
  const long parsed = std::strtol(value->c_str(), nullptr, 10);  // already checked to be a whole number
  if (parsed < range.low || parsed > range.high)
    throw InvalidArgument(std::string(range.name) + "='" + *value + "' is outside " + std::to_string(range.low) +
                          ".." + std::to_string(range.high) + " (StarPU would abort)");
}

void check_starpu_real(const char* name) {
  const std::optional<std::string> value = env(name);
  if (!value) return;
  char* end = nullptr;
  std::strtof(value->c_str(), &end);
  if (*end != '\0') throw InvalidArgument(std::string(name) + "='" + *value + "' is not a number (StarPU would abort)");
}

}  // namespace

void check_starpu_environment() {
  for (const char* name : starpu_integer_variables) check_starpu_integer(name);
  for (const char* name : starpu_real_variables) check_starpu_real(name);
  for (const StarpuRange& range : starpu_ranged_variables) check_starpu_range(range);
  // With both priority bounds set, StarPU's deque-model policies (dm, dmda, dmdas...) divide by
  // max - min (StarPU's src/sched_policies/fifo_queues.c, _starpu_normalize_prio): equal bounds kill the
  // process with a division by zero, and a maximum below the minimum gives a negative number of
  // priority levels. An empty value reads as 0.
  // The same policies allocate two arrays of max - min + 1 entries per worker: a span of 2^31
  // levels asked for tens of GB at the start.
  const std::optional<std::string> min_prio = read_variable("STARPU_MIN_PRIO");
  const std::optional<std::string> max_prio = read_variable("STARPU_MAX_PRIO");
  if (min_prio && max_prio) {
    const long low = std::strtol(min_prio->c_str(), nullptr, 10), high = std::strtol(max_prio->c_str(), nullptr, 10);
    if (high <= low)
      throw InvalidArgument("STARPU_MAX_PRIO='" + *max_prio + "' must be greater than STARPU_MIN_PRIO='" + *min_prio +
                            "' (StarPU would divide by zero or count negative priorities)");
    if (high - low >= kMaxStarpuPriorityLevels)
      throw InvalidArgument("STARPU_MIN_PRIO='" + *min_prio + "' to STARPU_MAX_PRIO='" + *max_prio + "' spans more than " +
                            std::to_string(kMaxStarpuPriorityLevels) +
                            " priority levels (StarPU's dm* policies would allocate arrays of that many entries per worker)");
  }
  // StarPU asserts on a thread per CUDA worker together with any thread-per-device setting.
  const std::optional<std::string> per_worker = read_variable("STARPU_CUDA_THREAD_PER_WORKER");
  if (per_worker && std::strtol(per_worker->c_str(), nullptr, 10) == 1 && read_variable("STARPU_CUDA_THREAD_PER_DEV"))
    throw InvalidArgument(
        "STARPU_CUDA_THREAD_PER_WORKER=1 and STARPU_CUDA_THREAD_PER_DEV cannot be set together (StarPU would abort)");
}

bool launched_by_mpi_from_environment() {
  // Open MPI's launcher, MPICH's and Intel MPI's (PMI), and PMIx launchers (srun among them).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (read_variable(name)) return true;
  return false;
}

std::optional<LocalRank> local_mpi_rank_from_environment() {
  const std::pair<const char*, const char*> launchers[] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}, {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}};
  for (const auto& [rank_name, size_name] : launchers) {
    const std::optional<std::string> rank = read_variable(rank_name), size = read_variable(size_name);
    if (!rank || !size) continue;
    const long r = std::strtol(rank->c_str(), nullptr, 10), n = std::strtol(size->c_str(), nullptr, 10);
    if (n >= 1 && r >= 0 && r < n) return LocalRank{static_cast<int>(r), static_cast<int>(n)};
  }
  return std::nullopt;
}

std::vector<unsigned> cpus_for_local_rank(const std::vector<unsigned>& allowed, std::size_t online, LocalRank local) {
  const auto size = static_cast<std::size_t>(std::max(1, local.size));
  if (allowed.size() < online || allowed.size() < size) return allowed;
  const std::size_t per_rank = allowed.size() / size, first = per_rank * static_cast<std::size_t>(local.rank);
  return std::vector<unsigned>(allowed.begin() + static_cast<std::ptrdiff_t>(first),
                               allowed.begin() + static_cast<std::ptrdiff_t>(first + per_rank));
}

namespace {

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string list;
  for (unsigned cpu : cpus) list += (list.empty() ? "" : ",") + std::to_string(cpu);
  return list;
}

}  // namespace

bool starpu_binding_from_environment(const std::vector<unsigned>& own_cpus) {
  for (const char* name : {"STARPU_WORKERS_COREID", "STARPU_WORKERS_NOBIND", "STARPU_WORKERS_GETBIND"})
    if (read_variable(name)) return true;
  const std::optional<std::string> cpus = read_variable("STARPU_WORKERS_CPUID");
  return cpus && (own_cpus.empty() || *cpus != cpu_list(own_cpus));
}

void bind_starpu_threads_to(const std::vector<unsigned>& cpus) {
  std::lock_guard<std::mutex> lock(environment_mutex());
  setenv("STARPU_WORKERS_CPUID", cpu_list(cpus).c_str(), 1);
}

StarpuBindingScope::StarpuBindingScope() : previous_(read_variable("STARPU_WORKERS_CPUID")) {}

StarpuBindingScope::~StarpuBindingScope() {
  std::lock_guard<std::mutex> lock(environment_mutex());
  if (previous_)
    setenv("STARPU_WORKERS_CPUID", previous_->c_str(), 1);
  else
    unsetenv("STARPU_WORKERS_CPUID");
}

bool starpu_ncpu_from_environment() { return read_variable("STARPU_NCPU") || read_variable("STARPU_NCPUS"); }

std::optional<int> cuda_visible_devices_from_environment() {
  const std::optional<std::string> list = read_variable("CUDA_VISIBLE_DEVICES");
  if (!list) return std::nullopt;
  if (list->empty()) return 0;
  return static_cast<int>(std::count(list->begin(), list->end(), ',')) + 1;
}

bool starpu_cuda_ids_from_environment() { return read_variable("STARPU_WORKERS_CUDAID").has_value(); }

bool starpu_pinning_disabled_from_environment() {
  const std::optional<std::string> value = read_variable("STARPU_DISABLE_PINNING");
  return value && std::atoi(value->c_str()) > 0;
}

bool register_pinned_memory_from_environment() { return env_int("TESSERA_REGISTER_PINNED", 1, 0) != 0; }

bool starpu_catch_signals_from_environment() { return read_variable("STARPU_CATCH_SIGNALS").has_value(); }

std::optional<std::string> starpu_sched_from_environment() { return env("STARPU_SCHED"); }

std::optional<std::string> openblas_coretype_from_environment() { return env("OPENBLAS_CORETYPE"); }

bool set_openblas_coretype(const std::string& kernel) {
  std::lock_guard<std::mutex> lock(environment_mutex());
  return setenv("OPENBLAS_CORETYPE", kernel.c_str(), 1) == 0;
}

void unset_openblas_coretype() {
  std::lock_guard<std::mutex> lock(environment_mutex());
  unsetenv("OPENBLAS_CORETYPE");
}

void set_starpu_environment_defaults(const RuntimeOptions& options) {
  if (options.quiet) set_default_variable("STARPU_SILENT", "1");
  if (options.hide_gpus_from_process && options.ncuda == 0) {
    set_default_variable("CUDA_VISIBLE_DEVICES", "");
    // Nor need hwloc look for I/O devices (PCI, and Linux's classes of them), which serve only to
    // place workers near GPUs: most of a cpu-mode start on a small machine.
    set_default_variable("HWLOC_COMPONENTS", "-pci,-linuxio");
  }
  // StarPU 1.3 reads a perf model's calibration flag separately when a task starts, ends and is
  // accounted, and turns calibration on in the middle of a run when a model lacks samples: a task
  // caught in between is timed with a start and no end, and StarPU aborts ("measured >= 0").
  // Calibrating from the start keeps the flag constant (and only adds two clock reads per task).
  set_default_variable("STARPU_CALIBRATE", "1");
  if (options.workers_per_cuda >= STARPU_NMAXWORKERS)
    throw InvalidArgument("RuntimeOptions::workers_per_cuda = " + std::to_string(options.workers_per_cuda) +
                          " is not below StarPU's " + std::to_string(STARPU_NMAXWORKERS) + " workers");
  if (options.workers_per_cuda > 0)
    set_default_variable("STARPU_NWORKER_PER_CUDA", std::to_string(options.workers_per_cuda));
  // One driver thread per CUDA worker: a task that waits on its stream (potrf reads its info
  // back) then holds up only its own stream, not the launches of the GPU's other workers, which
  // keep the GPU busy while a diagonal tile is factored.
  if (!read_variable("STARPU_CUDA_THREAD_PER_DEV")) set_default_variable("STARPU_CUDA_THREAD_PER_WORKER", "1");
  // StarPU's background write-back (RuntimeOptions::background_write_back) starts when fewer than
  // this percentage of a GPU's buffers are clean (StarPU's default: 5); 0 never.
  if (!options.background_write_back) set_default_variable("STARPU_MINIMUM_CLEAN_BUFFERS", "0");
  // A rank keeps the copies of other ranks' tiles that StarPU-MPI receives in StarPU's own host
  // allocations, pinned where GPUs are driven. StarPU frees them after every operation (and
  // cudaFreeHost waits for the whole GPU) unless its allocation cache keeps them for the next
  // tile of that size, which it does only under a host-memory limit: the rank's share of the
  // machine's memory.
  if (launched_by_mpi_from_environment()) {
    const std::optional<LocalRank> local = local_mpi_rank_from_environment();
    const double bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    const long mib = static_cast<long>(bytes / (1 << 20) / (local ? local->size : 1));
    if (mib > 0) set_default_variable("STARPU_LIMIT_CPU_MEM", std::to_string(mib));
  }
}

// StarPU 1.3's rules (StarPU's src/core/perfmodel/perfmodel.c, src/common/utils.c): STARPU_PERF_MODEL_DIR,
// else <home>/.starpu/sampling with the first of XDG_CACHE_HOME, STARPU_HOME, HOME, TMPDIR, TEMP,
// TMP; the host name is STARPU_HOSTNAME, else the machine's name up to its first dot.
PerfModelLocation perf_model_location() {
  PerfModelLocation location;
  if (const std::optional<std::string> dir = read_variable("STARPU_PERF_MODEL_DIR")) {
    location.directory = dir->empty() ? "/" : *dir;  // StarPU appends a slash
  } else {
    std::optional<std::string> home;
    for (const char* name : {"XDG_CACHE_HOME", "STARPU_HOME", "HOME", "TMPDIR", "TEMP", "TMP"})
      if ((home = read_variable(name))) break;
    location.directory = home.value_or("/tmp") + "/.starpu/sampling";
  }
  if (const std::optional<std::string> forced = env("STARPU_HOSTNAME")) {
    location.hostname = *forced;
  } else {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    location.hostname = name;
    location.hostname = location.hostname.substr(0, location.hostname.find('.'));
  }
  return location;
}

}  // namespace detail

}  // namespace tessera
