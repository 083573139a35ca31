// Options of libtessera_lapack, the library that exports LAPACK's Cholesky routines (dpotrf_...)
// so that unmodified programs reach Tessera. Like every Tessera option they are read from the
// environment in src/runtime/environment.cpp only.
#pragma once

#include "tessera/export.h"

namespace tessera {

struct TESSERA_EXPORT LapackInterceptOptions {
  // Measured with scripts/lapack-crossover.sh in cpu mode on a shared 2-core machine (8 runs):
  // below n = 400 the system LAPACK (OpenBLAS) was always faster, by 1.2x to 5x; above, the ratio
  // swung between 0.4x and 2x from run to run with the machine's load, and from n = 2000 on it
  // stayed within about 20% of even in most runs. 2000 keeps on the system LAPACK the calls that
  // Tessera's CPU path cannot be expected to speed up. A GPU moves the crossover: on an H100
  // (TESSERA_MODE=gpu, 16-core host, OpenBLAS on 16 threads) Tessera was faster by median times
  // from n = 1000 on (1.14x at 1000, 2.6x at 1200, 5.0x at 2000), so 2000 is safe there too but
  // leaves n = 1000..2000 to the system LAPACK: set TESSERA_LAPACK_MIN_N=1000 on such machines.
  static constexpr int default_min_n = 2000;

  // Calls doing less arithmetic than a Cholesky factorization of order min_n go to the next
  // LAPACK in the search order (xPOTRF: n < min_n; xPOTRS and xPOSV count their solves too);
  // 0 sends every call through Tessera.
  int min_n = default_min_n;
  // One line per intercepted call on stderr (routine, sizes, path taken, info, seconds).
  bool verbose = false;

  // Defaults overridden by TESSERA_LAPACK_MIN_N and TESSERA_LAPACK_VERBOSE (0 or 1).
  static LapackInterceptOptions from_environment();
};

}  // namespace tessera
