// What libtessera_lapack reads from the environment: its own two options. It reads them itself,
// not through the backend (libtessera, whose environment.cpp owns the rest of the environment), so
// that a process whose calls all stay on the system LAPACK never loads Tessera, its StarPU and
// its CUDA libraries.
#pragma once

#include <string>

namespace tessera::lapack {

struct DropInOptions {
  // From scripts/lapack-crossover.sh in cpu mode on a 2-core machine: the system LAPACK
  // (OpenBLAS) was always faster below n = 400, and the two were about even from n = 2000 on, so
  // 2000 keeps on the system LAPACK the calls that Tessera's CPU path cannot be expected to speed
  // up. A GPU moves the crossover lower: run the script with TESSERA_MODE=gpu and set
  // TESSERA_LAPACK_MIN_N from its table (docs/user-guide.md, section "Use Tessera from an existing
  // program", has an H100's; docs/performance.md, section "A 2-core CPU machine").
  static constexpr int default_min_n = 2000;

  // Calls doing less arithmetic than a Cholesky factorization of order min_n go to the next
  // LAPACK in the search order (xPOTRF: n < min_n; xPOTRS and xPOSV count their solves too);
  // 0 sends every call through Tessera.
  int min_n = default_min_n;
  // One line per intercepted call on stderr (routine, sizes, path taken, info, seconds).
  bool verbose = false;
};

// The defaults overridden by TESSERA_LAPACK_MIN_N and TESSERA_LAPACK_VERBOSE (integers >= 0; set
// but empty is unset, as for every Tessera variable). A value that is not such an integer leaves
// both at their defaults, and `error` says which.
DropInOptions drop_in_options_from_environment(std::string* error);

}  // namespace tessera::lapack
