// What every tiled request of the API checks before it makes tiles: the tile size (chosen or
// given), and tiles that fit the GPU where a task may run there.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

#include "algorithms.hpp"
#include "tile_access.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

// Whether a call asking for `requested` runs as gpu mode does: gpu mode, or hybrid on a runtime
// whose GPUs dominate (where auto runs gpu mode), whose CPUs take next to no tile task. Such a
// call gets gpu mode's tiles and, on a first call, its staging.
inline bool runs_as_gpu_mode(const Runtime& runtime, Mode requested) {
  const Mode mode = runtime.resolve(requested);
  return mode == Mode::gpu || (mode == Mode::hybrid && runtime.automatic_mode().mode == Mode::gpu);
}

template <class T>
int tile_size_for(const Runtime& runtime, int n, const FactorOptions& options) {
  if (options.nb < 0) throw InvalidArgument("nb must be positive (or 0 to let Tessera choose)");
  return options.nb > 0 ? options.nb : default_tile_size(runtime, n, std::is_same_v<T, double>, options.mode);
}

// In gpu and hybrid modes a task may be placed on a GPU, so the largest task's tiles (the three
// of a trailing-update gemm; tiles of order min(nb, n)) must fit in the memory StarPU may use
// there: StarPU would otherwise retry the allocation for ever.
template <class T>
void check_tiles_fit_gpu(const Runtime& runtime, Mode requested, int nb, int n) {
  const int tile_order = std::min(nb, n);
  const std::size_t capacity = runtime.gpu_memory_bytes();
  if (capacity == 0 || runtime.resolve(requested) == Mode::cpu) return;
  const double task_bytes = 3.0 * tile_order * tile_order * sizeof(T);
  if (task_bytes <= static_cast<double>(capacity)) return;
  const double mib = 1024.0 * 1024.0;
  throw ResourceError("tiles of order " + std::to_string(tile_order) + ": one task's three tiles need " +
                        std::to_string(static_cast<long long>(task_bytes / mib)) + " MiB, more than the " +
                        std::to_string(static_cast<long long>(capacity / mib)) +
                        " MiB StarPU may use on the GPU; choose a smaller nb or cpu mode");
}

// Whether the tiles of an upper-stored matrix hold its blocks as stored (transposed tiles: the
// tasks call the transposed BLAS forms, and nothing is transposed), rather than transposed copies
// in lower tiles. Block-column tasks take lower tiles only.
inline bool upper_as_stored(const FactorOptions& options) {
  return options.uplo == Uplo::upper && options.grain != TaskGrain::block_columns;
}

// Up to this order, a matrix in one GPU's memory (the device API) is factored as one task calling
// the vendor's potrf on the matrix itself: there the tile DAG through the device API measured
// below that one vendor call on an H100 (0.39x at 4096, 0.66x at 8192, 0.90x at 16384, 1.00x at
// 30000), its chain of nt steps paying StarPU's latency at each, and the one task 0.83-0.93x at
// 4096, 0.96-0.98x at 8192 and 1.02-1.06x at 16384 (docs/gpu-performance.md).
template <class T>
constexpr int kWholeDeviceMatrixLimit = 16384;

// Whether a device-API factorization of order n runs as one task on the whole matrix (a single
// tile, TaskGrain::whole_matrix): asked for, or automatic (grain and tile size left to Tessera) up
// to kWholeDeviceMatrixLimit in a call that runs as gpu mode does on a runtime with one GPU.
template <class T>
bool factors_device_matrix_whole(const Runtime& runtime, const FactorOptions& options, int n) {
  if (options.grain == TaskGrain::whole_matrix) return true;
  return options.grain == TaskGrain::automatic && options.nb == 0 && n <= kWholeDeviceMatrixLimit<T> &&
         runtime.cuda_devices() == 1 && runs_as_gpu_mode(runtime, options.mode);
}

// Whether a device-API call is that one vendor call enqueued by the calling thread on the caller's
// stream (callers_stream.hpp) rather than one task of the runtime: the grain left to Tessera where
// factors_device_matrix_whole chooses the whole matrix, and no trace asked for (a trace records
// the runtime's tasks). The caller also checks that the matrices are on the runtime's GPU.
template <class T>
bool runs_on_callers_stream(const Runtime& runtime, const FactorOptions& options, int n) {
  return options.grain == TaskGrain::automatic && !options.trace && factors_device_matrix_whole<T>(runtime, options, n);
}

// Up to this order, a tile matrix whose every lower tile is already in the memory of the runtime's
// one GPU is factored as one task (TaskGrain::whole_matrix: the tiles gathered into one matrix for
// the vendor's potrf and scattered back). Measured on an H100, tiles on the GPU, double: 0.63-0.72x
// cuSOLVER as one task against 0.37-0.39x as tile tasks at n = 4096, 0.85-0.86x against 0.74-0.76x
// at 8192, 0.86x against 0.78-0.79x at 10240, and level at 12288 (docs/gpu-performance.md).
constexpr int kWholeResidentTilesLimit = 10240;

// Whether a tile matrix's factorization runs as one task: grain left to Tessera, gpu mode (auto
// included) on a runtime with one GPU, n up to kWholeResidentTilesLimit, the gathered copy within a
// quarter of the memory StarPU may use on the GPU, and every lower tile already there (tiles that
// must first come from host memory overlap their copies with the tile graph instead).
template <class T>
bool factors_resident_tiles_whole(const Runtime& runtime, const FactorOptions& options, const TileGrid& A) {
  if (options.grain != TaskGrain::automatic || A.rows() > kWholeResidentTilesLimit || runtime.cuda_devices() != 1 ||
      runtime.resolve(options.mode) != Mode::gpu)
    return false;
  const double gathered_bytes = double(A.rows()) * A.rows() * sizeof(T);
  return gathered_bytes <= 0.25 * double(runtime.gpu_memory_bytes()) && tiles_valid_on_first_gpu(A);
}

// The grain asked for, and the out-of-core panels of a matrix whose tiles do not fit the smallest
// GPU where its tasks may run (FactorOptions::out_of_core_panel_percent).
template <class T>
CholeskyPlan cholesky_plan(const Runtime& runtime, const FactorOptions& options, const TileGrid& A) {
  const int percent = options.out_of_core_panel_percent;
  if (percent < 0 || percent > 90)
    throw InvalidArgument("out_of_core_panel_percent must be 0 (never) or 1 to 90, not " + std::to_string(percent));
  CholeskyPlan plan(options.grain);
  const double capacity = static_cast<double>(runtime.gpu_memory_bytes()) / sizeof(T);  // in elements
  if (percent == 0 || capacity == 0 || runtime.resolve(options.mode) == Mode::cpu) return plan;
  double tiles = 0;  // elements of the lower tiles
  for (int j = 0; j < A.tile_cols(); ++j) tiles += double(A.rows() - j * A.nb()) * A.tile_width(j);
  if (tiles <= 0.9 * capacity) return plan;
  plan.panel_starts = panels_within(A, capacity * percent / 100);
  return plan;
}

}  // namespace tessera::detail
