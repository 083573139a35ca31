// The command line under mpirun: `tessera potrf --grid PxQ` factors a distributed matrix (one
// result row, on rank 0), and `tessera info` lists every rank's workers (gathered on rank 0).
// Only in a tessera built with StarPU-MPI.
#pragma once

#include <string>

#include "potrf_command.hpp"
#include "runtime_flags.hpp"

namespace tessera::cli {

// Each starts MPI (with main's argc and argv) and stops it before returning. Exit statuses as
// run_potrf's, on every rank; 1 on a rank that met an error (printed with its rank).
int run_distributed_potrf(const PotrfCommand& cmd, int& argc, char**& argv);
int run_distributed_info(const RuntimeFlags& flags, const std::string& policy, bool as_json, int& argc, char**& argv);

}  // namespace tessera::cli
