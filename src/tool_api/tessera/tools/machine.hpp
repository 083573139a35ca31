// The machine as Tessera sees it: hwloc's topology and the CUDA devices with their NUMA affinity.
#pragma once

#include "tessera/export.h"
#include "tessera/options.hpp"

#include <string>
#include <vector>

namespace tessera {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  double memory_gib = 0;
  int compute_capability = 0;  // e.g. 90
  std::vector<int> numa_nodes;  // hwloc NUMA nodes close to the GPU (empty when unknown)
};

struct MachineInfo {
  int packages = 0;
  int cores = 0;
  int processing_units = 0;
  int numa_nodes = 0;
  bool cuda_built = false;        // this Tessera has CUDA codelets
  std::string cuda_status;        // why no GPU is usable, when none is
  std::vector<GpuInfo> gpus;
};

TESSERA_EXPORT MachineInfo machine_info();

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
// Returns only when it did not restart (nothing to do, or the exec
// failed, the environment then as it was). The `tessera` command calls it.
TESSERA_EXPORT void restart_with_faster_blas_kernel(char** argv, Mode mode);

}  // namespace tessera
