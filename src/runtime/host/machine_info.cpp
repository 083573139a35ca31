#include "tessera/tools/machine.hpp"

#include <hwloc.h>

#include <memory>
#include <string>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "cuda_context.hpp"

namespace tessera {

namespace {

using Topology = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

Topology load_topology() {
  hwloc_topology_t raw = nullptr;
  hwloc_topology_init(&raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_load(raw);
  return Topology(raw, &hwloc_topology_destroy);
}

int count(hwloc_topology_t topology, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(topology, type));
}

#ifdef TESSERA_HAVE_CUDA
std::vector<int> numa_nodes_near(hwloc_topology_t topology, const cudaDeviceProp& props) {
  std::vector<int> nodes;
  hwloc_obj_t pci = hwloc_get_pcidev_by_busid(topology, static_cast<unsigned>(props.pciDomainID),
                                              static_cast<unsigned>(props.pciBusID),
                                              static_cast<unsigned>(props.pciDeviceID), 0);
  hwloc_obj_t parent = pci ? hwloc_get_non_io_ancestor_obj(topology, pci) : nullptr;
  if (!parent || !parent->nodeset) return nodes;
  unsigned node = 0;
  hwloc_bitmap_foreach_begin(node, parent->nodeset) nodes.push_back(static_cast<int>(node));
  hwloc_bitmap_foreach_end();
  return nodes;
}

void add_gpus(hwloc_topology_t topology, MachineInfo& info) {
  if (const std::optional<std::string> problem = detail::cuda_libraries_problem()) {
    info.cuda_status = "no GPU: CUDA's libraries cannot be used: " + *problem;
    return;
  }
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  // Without an NVIDIA device CUDA's error (often "driver version is insufficient", from the
  // toolkit's stub driver) says nothing true of the machine.
  if (status != cudaSuccess) {
    info.cuda_status = detail::nvidia_device_nodes() == 0
                           ? std::string("no GPU: this machine has no NVIDIA device")
                           : std::string("NVIDIA devices present, but CUDA cannot use them: ") + cudaGetErrorString(status);
    return;
  }
  if (n == 0) info.cuda_status = "no GPU: CUDA sees no device";
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, d) != cudaSuccess) continue;
    GpuInfo gpu;
    gpu.index = d;
    gpu.name = props.name;
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    gpu.pci_bus_id = bus;
    gpu.memory_gib = static_cast<double>(props.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    gpu.compute_capability = props.major * 10 + props.minor;
    gpu.numa_nodes = numa_nodes_near(topology, props);
    info.gpus.push_back(gpu);
  }
}
#endif

}  // namespace

MachineInfo machine_info() {
  MachineInfo info;
  Topology topology = load_topology();
  info.packages = count(topology.get(), HWLOC_OBJ_PACKAGE);
  info.cores = count(topology.get(), HWLOC_OBJ_CORE);
  info.processing_units = count(topology.get(), HWLOC_OBJ_PU);
  info.numa_nodes = count(topology.get(), HWLOC_OBJ_NUMANODE);
#ifdef TESSERA_HAVE_CUDA
  info.cuda_built = true;
  add_gpus(topology.get(), info);
#else
  info.cuda_status = "built without CUDA";
#endif
  return info;
}

}  // namespace tessera
