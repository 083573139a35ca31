// Scratch tiles (tasks.hpp): StarPU matrix handles with no home node, packed, dropped by
// starpu_data_unregister_submit once the tasks inserted before it are done.
#include <starpu.h>

#include <cstdint>

#include "tasks.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

template <class T>
TileRef scratch_tile(const TaskContext&, const TileRef& like) {
  TileRef tile = like;
  tile.transposed = false;
  starpu_data_handle_t handle = nullptr;
  starpu_matrix_data_register(&handle, -1, 0, static_cast<uint32_t>(like.rows), static_cast<uint32_t>(like.rows),
                              static_cast<uint32_t>(like.cols), sizeof(T));
  tile.handle = handle;
  return tile;
}

void release_scratch_tile(const TaskContext&, const TileRef& tile) {
  starpu_data_unregister_submit(static_cast<starpu_data_handle_t>(tile.handle));
}

#define TESSERA_INSTANTIATE(T) template TileRef scratch_tile<T>(const TaskContext&, const TileRef&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
