// Timing of the tile kernels: the configurations Tessera's kernel of each tile operation can run
// with, and the time of one configuration (or of the vendor's call) at one tile size. The sweep
// that keeps the fastest per tile size, and the table it fills, belong to the runtime layer
// (src/runtime/cuda/tile_tuning_table.hpp, src/runtime/cuda/tuning.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/precision.hpp"
#include "tile_kernels.hpp"

namespace tessera::kernels::cuda {

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

}  // namespace tessera::kernels::cuda
