// potf2's variant 1 (tile_potf2_panels.cu): block columns factored by one kernel over the rows
// below the diagonal block, the trailing matrix updated by syrk_ln. No workspace.
#pragma once

#include <cuda_runtime.h>

#include "tile_kernels.hpp"

namespace tessera::kernels::cuda::detail {

// Throws InvalidArgument (through invalid_config) when cfg names no instantiated shape.
void check_potf2_panel_config(const TileKernelConfig& cfg);

template <class T>
void potf2_panels(int n, T* A, int lda, int* info, cudaStream_t stream, const TileKernelConfig& cfg);

}  // namespace tessera::kernels::cuda::detail
