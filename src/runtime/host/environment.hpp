// What the runtime layer reads from, and writes to, the process environment: StarPU's own
// variables, checked before StarPU parses them, and where StarPU keeps its performance models.
// Defined in environment.cpp, the one place that touches the environment.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera::detail {

// Throws InvalidArgument naming the first STARPU_* variable whose value StarPU would reject by
// aborting the process (a non-integer or negative count, a malformed number or size).
void check_starpu_environment();

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: its variables are set.
bool launched_by_mpi_from_environment();

// This process's place among the ranks an MPI launcher started on this node (Open MPI's and
// MPICH's variables), when it says; nullopt otherwise.
struct LocalRank {
  int rank;
  int size;
};
std::optional<LocalRank> local_mpi_rank_from_environment();

// The CPUs the workers of local rank `local` are bound to, of the `allowed` ones (the process's
// affinity, `online` CPUs on the node): all of them when the launcher bound the rank (fewer than
// online) or when there are fewer than ranks; otherwise the rank's 1/size slice.
std::vector<unsigned> cpus_for_local_rank(const std::vector<unsigned>& allowed, std::size_t online, LocalRank local);

// Whether the user set how StarPU binds its workers (STARPU_WORKERS_CPUID, _COREID, _NOBIND,
// _GETBIND) or how many CPU workers it starts (STARPU_NCPU, STARPU_NCPUS). A STARPU_WORKERS_CPUID
// that lists exactly `own_cpus` is the one bind_starpu_threads_to set, not the user's.
bool starpu_binding_from_environment(const std::vector<unsigned>& own_cpus = {});
// Binds StarPU's threads (workers, GPU driver threads, its main and MPI threads), one per CPU of
// `cpus` in order, through STARPU_WORKERS_CPUID: StarPU binds every thread to a distinct entry of
// that list, whereas starpu_conf's workers_bindid has all STARPU_NMAXWORKERS entries, so that a
// list shorter than that repeats and StarPU puts a GPU's driver threads on the cores of CPU workers.
void bind_starpu_threads_to(const std::vector<unsigned>& cpus);
// STARPU_WORKERS_CPUID as it was when the scope began, put back when it ends: a binding made for
// one start of StarPU (which reads it in starpu_init) must not outlive that start, where a later
// runtime of the process, on other CPUs, would take it for the user's.
class StarpuBindingScope {
 public:
  StarpuBindingScope();
  ~StarpuBindingScope();
  StarpuBindingScope(const StarpuBindingScope&) = delete;
  StarpuBindingScope& operator=(const StarpuBindingScope&) = delete;

 private:
  std::optional<std::string> previous_;
};
bool starpu_ncpu_from_environment();
// How many devices CUDA_VISIBLE_DEVICES lists (0 when empty); none when it is not set.
std::optional<int> cuda_visible_devices_from_environment();
// Whether the user chose the GPUs of StarPU's CUDA workers (STARPU_WORKERS_CUDAID).
bool starpu_cuda_ids_from_environment();
// TESSERA_REGISTER_PINNED (default 1): StarPU's pinned host buffers registered by Tessera
// (pinned_host_memory.hpp); 0 leaves StarPU's cudaHostAlloc, to compare the two.
bool register_pinned_memory_from_environment();
// STARPU_DISABLE_PINNING as StarPU reads it: a number above 0 turns pinning off.
bool starpu_pinning_disabled_from_environment();

// Whether the user asked StarPU to install its signal handlers (STARPU_CATCH_SIGNALS set).
bool starpu_catch_signals_from_environment();

// STARPU_SCHED, when set and not empty.
std::optional<std::string> starpu_sched_from_environment();

// OPENBLAS_CORETYPE (the CPU kernel OpenBLAS was told to use when it loaded), when set and not empty.
std::optional<std::string> openblas_coretype_from_environment();
// Sets OPENBLAS_CORETYPE for a program about to start itself again; false when it could not.
bool set_openblas_coretype(const std::string& kernel);
void unset_openblas_coretype();

// Defaults StarPU reads at start (silence, calibration, streams per GPU); the user's own settings win.
void set_starpu_environment_defaults(const RuntimeOptions& options);

// Where StarPU 1.3 keeps its calibration for this machine: the sampling directory and the host
// name its files are keyed by.
struct PerfModelLocation {
  std::string directory;  // holds codelets/<version>/ and bus/
  std::string hostname;
};
PerfModelLocation perf_model_location();

}  // namespace tessera::detail
