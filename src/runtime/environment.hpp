// What the runtime layer reads from, and writes to, the process environment: StarPU's own
// variables, checked before StarPU parses them, and where StarPU keeps its performance models.
// Defined in environment.cpp, the one place that touches the environment.
#pragma once

#include <optional>
#include <string>

#include "tessera/options.hpp"

namespace tessera::detail {

// Throws InvalidArgument naming the first STARPU_* variable whose value StarPU would reject by
// aborting the process (a non-integer or negative count, a malformed number or size).
void check_starpu_environment();

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: its variables are set.
bool launched_by_mpi_from_environment();

// STARPU_SCHED, when set and not empty.
std::optional<std::string> starpu_sched_from_environment();

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
