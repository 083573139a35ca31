// The backward error's arithmetic once the tile tasks have summed the moduli of each lower tile
// of a symmetric matrix (insert_abs_sums: the tile's column sums, then its row sums).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tessera::detail {

// Adds tile (i, j)'s sums (height x width, tiles of nb) to the column sums of the whole symmetric
// matrix: its column sums to its columns, its row sums to the columns of its mirror (j, i).
template <class R>
void add_lower_tile_sums(std::vector<double>& column, int i, int j, int nb, int height, int width,
                         const std::vector<R>& sums) {
  for (int c = 0; c < width; ++c) column[static_cast<std::size_t>(j * nb + c)] += sums[static_cast<std::size_t>(c)];
  for (int r = 0; r < height; ++r)
    column[static_cast<std::size_t>(i * nb + r)] += sums[static_cast<std::size_t>(width + r)];
}

// The largest column sum (the 1-norm), NaN when any sum is.
inline double largest_column_sum(const std::vector<double>& column) {
  double norm = 0;
  for (double c : column) norm = (std::isnan(c) || std::isnan(norm)) ? std::nan("") : std::max(norm, c);
  return norm;
}

// ||A - L L^H||_1 / (n ||A||_1 eps): 0 for a zero residual of a zero matrix, infinity for a
// residual of a zero matrix, NaN when either norm is.
inline double scaled_backward_error(double norm_r, double norm_a, int n, double eps) {
  if (std::isnan(norm_r) || std::isnan(norm_a)) return std::nan("");
  if (norm_a == 0) return norm_r == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return norm_r / (static_cast<double>(n) * norm_a * eps);
}

}  // namespace tessera::detail
