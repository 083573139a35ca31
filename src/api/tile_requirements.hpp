// What every tiled request of the API checks before it makes tiles: the tile size (chosen or
// given), and tiles that fit the GPU where a task may run there.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

template <class T>
int tile_size_for(const Runtime& runtime, int n, const FactorOptions& options) {
  if (options.nb < 0) throw InvalidArgument("nb must be positive (or 0 to let Tessera choose)");
  return options.nb > 0 ? options.nb : default_tile_size(n, std::is_same_v<T, double>, runtime.resolve(options.mode));
}

// In gpu and hybrid modes a task may be placed on a GPU, so the largest task's tiles (the three
// of a trailing-update gemm; tiles of order min(nb, n)) must fit in the memory StarPU may use
// there: StarPU would otherwise retry the allocation for ever.
template <class T>
void check_tiles_fit_gpu(const Runtime& runtime, Mode requested, int nb, int n) {
  const int tile_order = std::min(nb, n);
  const std::size_t capacity = runtime.gpu_memory_bytes();
  if (capacity == 0 || runtime.resolve(requested) == Mode::cpu) return;
  const double task_bytes = 3.0 * tile_order * tile_order * sizeof(T);
  if (task_bytes <= static_cast<double>(capacity)) return;
  const double mib = 1024.0 * 1024.0;
  throw ResourceError("tiles of order " + std::to_string(tile_order) + ": one task's three tiles need " +
                        std::to_string(static_cast<long long>(task_bytes / mib)) + " MiB, more than the " +
                        std::to_string(static_cast<long long>(capacity / mib)) +
                        " MiB StarPU may use on the GPU; choose a smaller nb or cpu mode");
}

}  // namespace tessera::detail
