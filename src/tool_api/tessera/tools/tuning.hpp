// Offline tuning of Tessera's CUDA tile kernels on the GPU present: every candidate configuration
// (inner blocking, thread-block shape, work per thread) is timed at each tile size (fixed seeds,
// warm-up, median of repetitions) and the fastest per (precision, operation, nb) is written to a
// JSON tuning file, which RuntimeOptions::tuning_file (or TESSERA_TUNING_FILE) loads at start.
#pragma once

#include "tessera/export.h"
#include "tessera/precision.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera {

// The tile operations Tessera has CUDA kernels of, in the order a sweep takes them.
inline const std::vector<std::string>& tile_operations() {
  static const std::vector<std::string> operations = {"potf2", "trsm", "syrk", "gemm"};
  return operations;
}

struct TuningRequest {
  std::vector<Precision> precisions = {Precision::double_real, Precision::single_real};
  std::vector<int> tile_sizes = {64, 128, 256, 512, 1024};
  int repetitions = 7;
  unsigned long long seed = 1;
  int device = 0;
  // The tile operations swept, of tile_operations() (empty: all four).
  std::vector<std::string> operations;
};

// Tunes and writes the table to output_path (merged into an existing file there). Progress lines
// go to log when given. Throws RuntimeError when Tessera has no CUDA or no GPU is present, and
// InvalidArgument for an operation that is not a tile operation.
TESSERA_EXPORT void tune_tile_kernels(const TuningRequest& request, const std::string& output_path, std::ostream* log);

}  // namespace tessera
