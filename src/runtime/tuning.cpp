#include "tessera/tools/tuning.hpp"

#include <fstream>

#include "tessera/error.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/tile_tuning.hpp"
#endif

namespace tessera {

void tune_tile_kernels(const TuningRequest& request, const std::string& output_path, std::ostream* log) {
#ifdef TESSERA_HAVE_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw RuntimeError("tuning needs a GPU; none is present");
  if (request.device < 0 || request.device >= devices)
    throw InvalidArgument("no CUDA device " + std::to_string(request.device));
  TESSERA_CUDA_CHECK(cudaSetDevice(request.device));
  kernels::cuda::TileTuningTable table;
  if (std::ifstream(output_path).good()) table = kernels::cuda::TileTuningTable::load(output_path);
  for (const Precision precision : request.precisions) {
    const kernels::cuda::TileTuningTable tuned =
        kernels::cuda::tune_tile_kernels(precision, request.tile_sizes, request.repetitions, request.seed, nullptr, log);
    for (const auto& entry : tuned.entries()) table.set(entry);
  }
  table.save(output_path);
#else
  static_cast<void>(request);
  static_cast<void>(output_path);
  static_cast<void>(log);
  throw RuntimeError("this Tessera was built without CUDA: nothing to tune");
#endif
}

}  // namespace tessera
