// potf2's variant 2 (tile_potf2_warp.cu): block columns of 32 or 64, whose 32 x 32 diagonal
// blocks one warp each factors in registers while the thread block's other warps hold rows of
// the panel below; the trailing matrix updated by syrk_ln.
#pragma once

#include <cuda_runtime.h>

#include "tile_kernels.hpp"

namespace tessera::kernels::cuda::detail {

// A block column's shape: its width (cfg.ib: 32, or 64 factored as two halves by two warps) and
// the panel rows per thread block (cfg.tile); a thread block has width + rows threads.
struct WarpPanelShape {
  int width, rows;
};

// The shapes instantiated; the tuning sweep's candidates.
inline constexpr WarpPanelShape kWarpPanelShapes[] = {{32, 64}, {32, 96}, {64, 64}, {64, 96}, {64, 128}};

// Throws InvalidArgument (through invalid_config) when cfg names no instantiated shape.
void check_potf2_warp_config(const TileKernelConfig& cfg);

// Workspace: one counter per block column, zeroed by the call (the first thread block writes the
// diagonal block once the others are past reading it).
std::size_t potf2_warp_workspace_bytes(int n, const TileKernelConfig& cfg);

template <class T>
void potf2_warp_panels(int n, T* A, int lda, int* info, void* workspace, cudaStream_t stream,
                       const TileKernelConfig& cfg);

}  // namespace tessera::kernels::cuda::detail
