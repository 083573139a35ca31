#include "owned_panels.hpp"

#include <stdexcept>

#include "tile_grid.hpp"

namespace tessera::detail {

namespace {

std::size_t rounded_up(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

OwnedPanels::OwnedPanels(int n, int nb, bool transposed, const GpuOwners& owners, std::size_t alignment)
    : nt_(n > 0 ? TileGrid::tiles(n, nb) : 0), elements_(static_cast<std::size_t>(owners.gpus()), 0) {
  if (n < 0 || nb < 1 || alignment < 1) throw std::invalid_argument("OwnedPanels: n >= 0, nb >= 1, alignment >= 1");
  const auto extent = [&](int t) { return t == nt_ - 1 ? n - t * nb : nb; };
  tiles_.resize(static_cast<std::size_t>(nt_) * (nt_ + 1) / 2);
  for (int j = 0; j < nt_; ++j) {
    for (int gpu = 0; gpu < owners.gpus(); ++gpu) {
      int stacked = 0;  // rows (columns, transposed) of the GPU's tiles of column j
      for (int i = j; i < nt_; ++i)
        if (owners.of_tile(i, j) == gpu) stacked += extent(i);
      if (stacked == 0) continue;
      // Non-transposed: stacked x width, the tiles one below the other. Transposed: width x
      // stacked, the blocks (j, i) side by side.
      const int panel_rows = transposed ? extent(j) : stacked;
      const int panel_cols = transposed ? stacked : extent(j);
      const std::size_t ld = rounded_up(static_cast<std::size_t>(panel_rows), alignment);
      std::size_t& start = elements_[static_cast<std::size_t>(gpu)];
      int position = 0;
      for (int i = j; i < nt_; ++i) {
        if (owners.of_tile(i, j) != gpu) continue;
        const std::size_t within = transposed ? static_cast<std::size_t>(position) * ld : static_cast<std::size_t>(position);
        tiles_[index(i, j)] = {gpu, start + within, static_cast<int>(ld)};
        position += extent(i);
      }
      start += ld * static_cast<std::size_t>(panel_cols);
    }
  }
}

}  // namespace tessera::detail
