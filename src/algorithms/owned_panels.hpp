// Where each lower tile of a symmetric n x n tile grid lives when every GPU holds the tiles it owns
// (GpuOwners) in its own memory: a call's tiles staged on the GPUs (HostTiles::staged).
#pragma once

#include <cstddef>
#include <vector>

#include "tasks.hpp"

namespace tessera::detail {

// A tile's place: the GPU (owner) whose memory holds it, its first element's offset in elements
// from the start of that GPU's memory, and its leading dimension.
struct PanelTile {
  int gpu = 0;
  std::size_t offset = 0;
  int ld = 0;
};

// For each tile column, a GPU's tiles of that column stacked into one column-major panel, in
// tile-row order (transposed tiles, an upper-stored matrix's blocks as stored: side by side in one
// row panel), the panels packed one after another and each column of a panel starting on a
// multiple of `alignment` elements. A GPU's tiles of a column lie contiguously, as in one
// column-major matrix (what block-column tasks join into one call), and only the lower triangle
// takes memory.
class OwnedPanels {
 public:
  OwnedPanels(int n, int nb, bool transposed, const GpuOwners& owners, std::size_t alignment);

  const PanelTile& tile(int i, int j) const { return tiles_[index(i, j)]; }
  // The elements GPU `gpu` holds, padding included.
  std::size_t elements(int gpu) const { return elements_.at(static_cast<std::size_t>(gpu)); }
  int gpus() const { return static_cast<int>(elements_.size()); }
  int tile_count() const { return nt_; }

 private:
  // Lower tiles column by column, as TileMatrix stores them.
  std::size_t index(int i, int j) const {
    return static_cast<std::size_t>(j) * nt_ - static_cast<std::size_t>(j) * (j - 1) / 2 + (i - j);
  }

  int nt_ = 0;
  std::vector<PanelTile> tiles_;
  std::vector<std::size_t> elements_;
};

}  // namespace tessera::detail
