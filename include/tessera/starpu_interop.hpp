// StarPU interoperability, for applications that embed Tessera in their own StarPU program and
// submit their own tasks on a TileMatrix's tiles. Opt-in: this is the only public header that
// includes <starpu.h>, so the rest of the API builds without StarPU on the include path (with
// CMake, link Tessera::starpu_interop to get StarPU's include path as well).
#pragma once

#include <starpu.h>

#include "tessera/export.h"
#include "tessera/tile_matrix.hpp"

namespace tessera::starpu_interop {

// The StarPU data handle of a stored tile (i, j); throws InvalidArgument for a tile that is not
// stored. From the first call on, the matrix's runtime keeps its workers awake when idle (see
// Runtime::pause_workers), since the application's tasks may arrive at any time.
template <class T>
TESSERA_EXPORT starpu_data_handle_t tile_handle(const TileMatrix<T>& A, int i, int j);

extern template TESSERA_EXPORT starpu_data_handle_t tile_handle(const TileMatrix<float>&, int, int);
extern template TESSERA_EXPORT starpu_data_handle_t tile_handle(const TileMatrix<double>&, int, int);

}  // namespace tessera::starpu_interop
