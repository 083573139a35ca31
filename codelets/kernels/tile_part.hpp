// Which part of an m x n block a reduction over a tile reads (CPU and CUDA kernels alike).
#pragma once

namespace tessera::kernels {

// All of it, or the triangle (diagonal included) of a square diagonal block of a symmetric
// matrix, whose strict part then stands for the other triangle's mirror too.
enum class TilePart { whole, lower_symmetric, upper_symmetric };

// Whether element (i, j) is read, and how many times it counts.
constexpr bool in_part(TilePart part, int i, int j) {
  return part == TilePart::whole || (part == TilePart::lower_symmetric ? i >= j : i <= j);
}
constexpr double part_weight(TilePart part, int i, int j) { return part == TilePart::whole || i == j ? 1.0 : 2.0; }

}  // namespace tessera::kernels
