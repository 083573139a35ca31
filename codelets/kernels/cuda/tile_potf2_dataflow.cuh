// potf2's variant 3 (tile_potf2_dataflow.cu): the whole tile in one persistent cooperative kernel
// whose thread blocks take panel and update tasks in order and wait for their inputs through
// counters. Workspace: the counters, zeroed by the call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "tile_kernels.hpp"

namespace tessera::kernels::cuda::detail {

// Chunk rows per task (cfg.tile; a thread block has 32 + rows threads) and thread blocks of the
// launch (cfg.crossover), at most as many as can be resident together.
struct DataflowShape {
  int rows, blocks;
};

// The shapes instantiated; the tuning sweep's candidates.
inline constexpr DataflowShape kDataflowShapes[] = {{64, 64}, {64, 128}, {96, 64}, {96, 128}, {96, 256}};

// Whether the current device runs cooperative launches (variant 3's only requirement).
bool cooperative_launch_supported();

// Throws InvalidArgument (through invalid_config) when cfg names no shape, n > 2048 or the
// device has no cooperative launch.
void check_potf2_dataflow_config(int n, const TileKernelConfig& cfg);

std::size_t potf2_dataflow_workspace_bytes(int n, const TileKernelConfig& cfg);

template <class T>
void potf2_dataflow(int n, T* A, int lda, int* info, void* workspace, cudaStream_t stream,
                    const TileKernelConfig& cfg);

}  // namespace tessera::kernels::cuda::detail
