// Tuning of the tile kernels: a table (GPU name, precision, operation, nb) -> TileKernelConfig
// kept as JSON, and the sweep that fills it by timing each candidate configuration.
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

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tessera/precision.hpp"
#include "tile_kernels.hpp"

namespace tessera::kernels::cuda {

struct TileTuningEntry {
  std::string gpu;
  Precision precision = Precision::double_real;
  std::string op;
  int nb = 0;
  TileKernelConfig cfg;
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
  std::optional<TileKernelConfig> lookup(const std::string& gpu, Precision precision,
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

// Name of the current CUDA device (cudaDeviceProp::name).
std::string current_gpu_name();

// Configurations the sweep tries for (precision, op) at order nb.
std::vector<TileKernelConfig> tile_kernel_candidates(Precision precision, const std::string& op, int nb);

// Median time in microseconds of one call of op at order nb (m = n = k = nb) with cfg: each of
// `repetitions` timed batches (after one warm-up batch) runs the operation once on each of a few
// copies of the input, restored between batches, with CUDA events around the batch. Inputs are
// random (fixed seed): general matrices in (-1, 1), well-conditioned triangles, diagonally
// dominant SPD tiles.
double time_tile_kernel(Precision precision, const std::string& op, int nb, const TileKernelConfig& cfg,
                        int repetitions, std::uint64_t seed);
// The same measurement of the vendor library's call for op (cuSOLVER potrf for potf2, cuBLAS
// trsm / syrk / gemm) on the same inputs.
double time_vendor_tile_kernel(Precision precision, const std::string& op, int nb, int repetitions, std::uint64_t seed);

// Times every candidate of every op ("potf2", "trsm", "syrk", "gemm") at every nb and returns
// the fastest per (op, nb) for the current GPU, with the vendor call's time beside it. When `all` is given, every measurement is
// appended to it; progress lines go to `log` when given.
// `ops` names the operations swept (empty: potf2, trsm, syrk and gemm).
TileTuningTable tune_tile_kernels(Precision precision, const std::vector<int>& nbs, int repetitions,
                                  std::uint64_t seed, std::vector<TileTuningEntry>* all = nullptr,
                                  std::ostream* log = nullptr, const std::vector<std::string>& ops = {});

}  // namespace tessera::kernels::cuda
