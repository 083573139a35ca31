// The layout of a call's tiles staged on the GPUs owning them (OwnedPanels): every lower tile on
// its owner, inside its GPU's memory, overlapping no other tile, columns aligned, and a GPU's tiles
// of a tile column contiguous as in one column-major panel.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "owned_panels.hpp"

namespace tessera::detail {
namespace {

struct Shape {
  int n, nb, gpus;
};

int extent(int n, int nb, int t) { return (t + 1) * nb <= n ? nb : n - t * nb; }

// Marks each stored element of every tile in its GPU's memory; fails on an element outside it or
// marked twice.
void expect_tiles_apart_and_on_their_owners(const Shape& s, bool transposed) {
  const GpuOwners owners = GpuOwners::for_gpus(s.gpus);
  constexpr std::size_t kAlignment = 32;
  const OwnedPanels layout(s.n, s.nb, transposed, owners, kAlignment);
  ASSERT_EQ(layout.gpus(), owners.gpus());
  const int nt = layout.tile_count();
  std::vector<std::vector<char>> used(static_cast<std::size_t>(layout.gpus()));
  std::size_t triangle = 0;
  for (int g = 0; g < layout.gpus(); ++g) used[static_cast<std::size_t>(g)].assign(layout.elements(g), 0);
  for (int j = 0; j < nt; ++j)
    for (int i = j; i < nt; ++i) {
      const PanelTile& t = layout.tile(i, j);
      SCOPED_TRACE(::testing::Message() << "n=" << s.n << " nb=" << s.nb << " gpus=" << s.gpus << " tile (" << i << ", "
                                        << j << ")" << (transposed ? " transposed" : ""));
      ASSERT_EQ(t.gpu, owners.of_tile(i, j));
      EXPECT_EQ(t.ld % static_cast<int>(kAlignment), 0);
      const int rows = transposed ? extent(s.n, s.nb, j) : extent(s.n, s.nb, i);
      const int cols = transposed ? extent(s.n, s.nb, i) : extent(s.n, s.nb, j);
      ASSERT_GE(t.ld, rows);
      triangle += static_cast<std::size_t>(rows) * cols;
      std::vector<char>& memory = used[static_cast<std::size_t>(t.gpu)];
      for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) {
          const std::size_t at = t.offset + r + static_cast<std::size_t>(c) * t.ld;
          ASSERT_LT(at, memory.size());
          ASSERT_EQ(memory[at], 0) << "overlap at (" << r << ", " << c << ")";
          memory[at] = 1;
        }
    }
  std::size_t total = 0;
  for (int g = 0; g < layout.gpus(); ++g) total += layout.elements(g);
  EXPECT_GE(total, triangle);
  // Padding: under one alignment per column of each panel.
  EXPECT_LT(total, triangle + static_cast<std::size_t>(nt) * (layout.gpus() * s.nb + s.n) * kAlignment);
}

TEST(OwnedPanels, EveryTileOnItsOwnerApartFromTheOthers) {
  for (const Shape& s : {Shape{1, 1, 1}, Shape{1, 16, 2}, Shape{97, 16, 1}, Shape{97, 16, 2}, Shape{15, 16, 2},
                         Shape{17, 16, 3}, Shape{131, 16, 4}, Shape{200, 7, 8}, Shape{64, 16, 6}})
    for (const bool transposed : {false, true}) expect_tiles_apart_and_on_their_owners(s, transposed);
}

// A GPU's tiles of one tile column follow one another as in one column-major matrix (what
// block-column tasks join into one call): below one another, or side by side when transposed.
TEST(OwnedPanels, AGpusTilesOfAColumnAreContiguous) {
  const int n = 10 * 16 + 5, nb = 16;
  for (const int gpus : {1, 2, 4})
    for (const bool transposed : {false, true}) {
      const GpuOwners owners = GpuOwners::for_gpus(gpus);
      const OwnedPanels layout(n, nb, transposed, owners, 32);
      const int nt = layout.tile_count();
      for (int j = 0; j < nt; ++j)
        for (int g = 0; g < owners.gpus(); ++g) {
          int previous = -1;
          for (int i = j; i < nt; ++i) {
            if (owners.of_tile(i, j) != g) continue;
            if (previous >= 0) {
              const PanelTile& a = layout.tile(previous, j);
              const PanelTile& b = layout.tile(i, j);
              EXPECT_EQ(a.ld, b.ld);
              const std::size_t step = transposed ? static_cast<std::size_t>(extent(n, nb, previous)) * a.ld
                                                  : static_cast<std::size_t>(extent(n, nb, previous));
              EXPECT_EQ(b.offset, a.offset + step) << "gpus=" << gpus << " column " << j << " tiles " << previous << ", "
                                                   << i << (transposed ? " transposed" : "");
            }
            previous = i;
          }
        }
    }
}

// One GPU holds the lower tiles as column panels, each from the diagonal down with its columns
// padded to the alignment: about half of an n x n matrix.
TEST(OwnedPanels, OneGpuHoldsTheLowerTilesInColumnPanels) {
  const int n = 2048 + 337, nb = 512;
  const OwnedPanels layout(n, nb, false, GpuOwners::for_gpus(1), 32);
  ASSERT_EQ(layout.gpus(), 1);
  std::size_t expected = 0;
  for (int j = 0; j * nb < n; ++j) {
    const std::size_t padded = static_cast<std::size_t>((n - j * nb + 31) / 32 * 32);
    expected += padded * static_cast<std::size_t>(extent(n, nb, j));
    EXPECT_EQ(layout.tile(j, j).offset + static_cast<std::size_t>(layout.tile(j, j).ld) * extent(n, nb, j),
              expected) << "column " << j;
  }
  EXPECT_EQ(layout.elements(0), expected);
}

}  // namespace
}  // namespace tessera::detail
