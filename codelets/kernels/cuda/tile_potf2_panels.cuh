// potf2's variant 1 (tile_potf2_panels.cu): block columns factored by one kernel over the rows
// below the diagonal block, the trailing matrix updated by syrk_ln. No workspace.
#pragma once

#include <cuda_runtime.h>

#include "tile_kernels.hpp"

namespace tessera::kernels::cuda::detail {

// A block column's shape: B (width, cfg.ib), RP (panel rows per thread block, cfg.tile) and
// 32 W threads (cfg.threads).
struct PanelShape {
  int width, rows, threads;
};

// The shapes instantiated, (B, RP, W) = (32, 64, 8), (32, 96, 8), (64, 64, 8), (64, 64, 16),
// (64, 128, 8); the tuning sweep's candidates. Wider block columns (128) measured slower: each
// warp's share of a column step grows with them.
inline constexpr PanelShape kPanelShapes[] = {{32, 64, 256}, {32, 96, 256}, {64, 64, 256}, {64, 64, 512}, {64, 128, 256}};

// Throws InvalidArgument (through invalid_config) when cfg names no instantiated shape.
void check_potf2_panel_config(const TileKernelConfig& cfg);

template <class T>
void potf2_panels(int n, T* A, int lda, int* info, cudaStream_t stream, const TileKernelConfig& cfg);

}  // namespace tessera::kernels::cuda::detail
