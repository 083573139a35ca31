// The BLAS that Tessera's CPU tasks call, and the OpenBLAS kernel it runs on this CPU.
#pragma once

#include <string>

#include "tessera/export.h"
#include "tessera/options.hpp"

namespace tessera {

// The BLAS of the CPU tasks. OpenBLAS picks its CPU kernel once, when it loads, from the CPU's
// model number; on a CPU newer than the OpenBLAS build it falls back to a kernel without AVX2 or
// AVX-512 (an H100 host's Xeon, family 6 model 207, under OpenBLAS 0.3.21: Prescott, several
// times slower than SkylakeX; docs/gpu-performance.md, section "CPU mode on the H100 host").
// OPENBLAS_CORETYPE set before the program starts chooses the kernel; the `tessera` command starts
// itself again with it when this says so (restart_with_faster_blas_kernel).
struct BlasInfo {
  std::string library;                  // OpenBLAS's configuration line; empty for another BLAS
  std::string kernel;                   // the CPU kernel OpenBLAS runs (Prescott, Haswell, SkylakeX...)
  std::string kernel_from_environment;  // OPENBLAS_CORETYPE, when set
  // A kernel using this CPU's vector units (SkylakeX for AVX-512, Haswell for AVX2 and FMA), when
  // OpenBLAS runs one without AVX2; empty otherwise.
  std::string faster_kernel;
};

TESSERA_EXPORT BlasInfo blas_info();

// For a program's main(), before its work starts: where that work's CPU tasks call BLAS (`mode`
// cpu or hybrid, or automatic on a machine where no NVIDIA GPU is visible: beside a GPU that
// dominates, automatic mode runs gpu mode, whose CPU tasks only copy), blas_info() names a faster
// kernel and OPENBLAS_CORETYPE is not set, starts the program again (execv of /proc/self/exe with
// argv) with OPENBLAS_CORETYPE set to it; the second start costs a second load of the libraries.
// Returns only when it did not restart (nothing to do, or the exec failed, the environment then
// as it was). The `tessera` command calls it. The Python package loads with that kernel instead
// (OPENBLAS_CORETYPE set for the load only).
TESSERA_EXPORT void restart_with_faster_blas_kernel(char** argv, Mode mode);

}  // namespace tessera
