// The machine as Tessera sees it: hwloc's topology and the CUDA devices with their NUMA affinity.
#pragma once

#include "tessera/blas.hpp"
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

}  // namespace tessera
