// The tuning table of the tile kernels: (GPU name, precision, operation, nb) -> TileKernelConfig,
// kept as JSON, which the CUDA workers read when the runtime starts (the shipped sm_90.json or
// RuntimeOptions' tuning file) and `tessera tune` writes (tuning.cpp).
//
// JSON schema (tuning/sm_90.json):
//   {"version": 1,
//    "entries": [{"gpu": "NVIDIA H100 80GB HBM3", "precision": "d", "op": "gemm", "nb": 512,
//                 "ib": 0, "threads": 128, "tile": 64, "tile_n": 64, "variant": 0,
//                 "crossover": 0, "time_us": 12.5, "vendor_time_us": 10.1}, ...]}
// "op" is one of potf2, trsm, syrk, gemm; "precision" is the precision's LAPACK letter ("s" or
// "d", lapack_letter in tessera/precision.hpp); time_us is the median time of the configuration
// at that nb, vendor_time_us the vendor library's (cuSOLVER potrf, cuBLAS trsm / syrk / gemm) in
// the same sweep (0 or absent: not measured). With GpuKernels::any, a GPU that has both timings
// runs the faster implementation only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/tile_kernels.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

struct TileTuningEntry {
  std::string gpu;
  Precision precision = Precision::double_real;
  std::string op;
  int nb = 0;
  kernels::cuda::TileKernelConfig cfg;
  double time_us = 0;
  double vendor_time_us = 0;  // 0: not measured
};

// Which implementation of a tile operation ran faster in a tuning sweep.
enum class FasterKernel { unknown, vendor, custom };

class TileTuningTable {
 public:
  // Adds the entry, replacing one with the same (gpu, precision, op, nb).
  void set(const TileTuningEntry& entry);
  // The configuration of the entry for (gpu, precision, op) whose nb is nearest to nb
  // (log scale; the smaller nb on ties); nothing when no entry matches gpu/precision/op.
  std::optional<kernels::cuda::TileKernelConfig> lookup(const std::string& gpu, Precision precision,
                                                        const std::string& op, int nb) const;
  // At the entry lookup() picks: whether Tessera's kernel or the vendor's ran faster (unknown
  // without an entry or a vendor timing).
  FasterKernel faster(const std::string& gpu, Precision precision, const std::string& op, int nb) const;
  const std::vector<TileTuningEntry>& entries() const { return entries_; }

  std::string to_json() const;
  // Throws tessera::InvalidArgument on malformed text.
  static TileTuningTable from_json(const std::string& text);
  void save(const std::string& path) const;
  static TileTuningTable load(const std::string& path);

 private:
  std::vector<TileTuningEntry> entries_;
};

// TileTuningTable::faster for one GPU's entries, cheap enough for a scheduler's every placement
// decision and safe to call from any thread once made.
class FasterKernels {
 public:
  FasterKernels() = default;
  FasterKernels(const TileTuningTable& table, const std::string& gpu);
  // op: "potf2", "trsm", "syrk" or "gemm".
  FasterKernel at(Precision precision, const char* op, int nb) const;

 private:
  std::vector<TileTuningEntry> entries_;  // the GPU's, with both timings
};

}  // namespace tessera::detail
