// Per-CUDA-worker handles and workspaces (see runtime_resources.hpp). Without CUDA these do nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime_resources.hpp"

namespace tessera::detail {

// Runs on every CUDA worker: handles bound to the worker's stream, a first workspace, and the
// tile-kernel tuning table (from tuning_file, or the one shipped with Tessera when empty).
void create_cuda_contexts(RuntimeResources& resources, const std::string& tuning_file);
void destroy_cuda_contexts(RuntimeResources& resources);
// Distinct GPUs driven by the runtime's CUDA workers.
int cuda_devices_in_use();
// The NVIDIA GPUs whose device nodes this process can see (/dev/nvidia0, /dev/nvidia1, ...): a
// count that costs no driver initialization, for before StarPU starts (cudaGetDeviceCount would
// initialize the driver there, a large part of a process's start that the CUDA warm-up overlaps
// with StarPU's own start otherwise). 0 where CUDA's libraries cannot be used.
int nvidia_device_nodes();
// Whether a GPU could take work that has no runtime of its own: where StarPU runs (Tessera's
// runtime or the application's), whether it has CUDA workers, asked without a call into CUDA;
// elsewhere nvidia_device_nodes(), which loads CUDA's libraries where there is a device node.
bool gpus_could_take_work();
// The /dev/nvidiaN files alone, without a call into CUDA (which loads its libraries).
int nvidia_device_node_count();
// Whether the CUDA runtime, cuBLAS and cuSOLVER this process loaded answer a version query (no
// driver involved): not where they are the binary wheel's placeholders, loaded when NVIDIA's
// libraries are not installed, or lazy forwarders (src/lazy_cuda) that found no real library,
// whose every function reports that. Empty when they answer, else what they say.
std::optional<std::string> cuda_libraries_problem();
// One entry per GPU in use, by device number: the bitmap (over worker ids) of that GPU's CUDA
// workers and every CPU worker (RuntimeResources::set_gpu_workers).
std::vector<std::vector<uint32_t>> workers_by_gpu();

}  // namespace tessera::detail
