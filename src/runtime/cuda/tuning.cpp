#include "tessera/tools/tuning.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/error.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/tile_timing.hpp"
#include "tile_tuning_table.hpp"
#endif

namespace tessera {

#ifdef TESSERA_HAVE_CUDA
namespace {

using kernels::cuda::TileKernelConfig;

void log_candidate(std::ostream* log, Precision precision, const std::string& op, int nb, const TileKernelConfig& cfg,
                   double us) {
  if (!log) return;
  *log << "tune " << lapack_letter(precision) << ' ' << op << " nb=" << nb << " ib=" << cfg.ib
       << " threads=" << cfg.threads << " tile=" << cfg.tile << 'x' << cfg.tile_n << " variant=" << cfg.variant
       << " crossover=" << cfg.crossover << " : " << us << " us\n";
}

// The fastest candidate of op at order nb on the current GPU, with the vendor call's time beside
// it; nothing where op has no candidate at nb.
std::optional<detail::TileTuningEntry> fastest(const TuningRequest& request, const std::string& gpu,
                                               Precision precision, const std::string& op, int nb, std::ostream* log) {
  std::optional<detail::TileTuningEntry> best;
  for (const TileKernelConfig& cfg : kernels::cuda::tile_kernel_candidates(precision, op, nb)) {
    const double us = kernels::cuda::time_tile_kernel(precision, op, nb, cfg, request.repetitions, request.seed);
    log_candidate(log, precision, op, nb, cfg, us);
    if (!best || us < best->time_us) best = detail::TileTuningEntry{gpu, precision, op, nb, cfg, us};
  }
  if (!best) return best;
  best->vendor_time_us = kernels::cuda::time_vendor_tile_kernel(precision, op, nb, request.repetitions, request.seed);
  if (log)
    *log << "tune " << lapack_letter(precision) << ' ' << op << " nb=" << nb << " vendor : " << best->vendor_time_us
         << " us\n";
  return best;
}

std::vector<std::string> swept_operations(const TuningRequest& request) {
  const std::vector<std::string>& all = tile_operations();
  for (const std::string& op : request.operations)
    if (std::find(all.begin(), all.end(), op) == all.end())
      throw InvalidArgument("tuning: " + op + " is not a tile operation (potf2, trsm, syrk, gemm)");
  return request.operations.empty() ? all : request.operations;
}

}  // namespace
#endif

void tune_tile_kernels(const TuningRequest& request, const std::string& output_path, std::ostream* log) {
#ifdef TESSERA_HAVE_CUDA
  const std::vector<std::string> operations = swept_operations(request);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw RuntimeError("tuning needs a GPU; none is present");
  if (request.device < 0 || request.device >= devices)
    throw InvalidArgument("no CUDA device " + std::to_string(request.device));
  TESSERA_CUDA_CHECK(cudaSetDevice(request.device));
  detail::TileTuningTable table;
  if (std::ifstream(output_path).good()) table = detail::TileTuningTable::load(output_path);
  const std::string gpu = kernels::cuda::current_gpu_name();
  for (const Precision precision : request.precisions)
    for (const std::string& op : operations)
      for (const int nb : request.tile_sizes)
        if (const auto best = fastest(request, gpu, precision, op, nb, log)) table.set(*best);
  table.save(output_path);
#else
  static_cast<void>(request);
  static_cast<void>(output_path);
  static_cast<void>(log);
  throw RuntimeError("this Tessera was built without CUDA: nothing to tune");
#endif
}

}  // namespace tessera
