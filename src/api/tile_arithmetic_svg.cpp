// TileArithmeticMap::svg: an adaptive factorization's choice of arithmetic per tile as an image.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tessera/options.hpp"

namespace tessera {

namespace {

struct ArithmeticStyle {
  TileArithmetic arithmetic;
  const char* name;
  const char* colour;
};

// Indexed by TileArithmetic's value.
constexpr ArithmeticStyle kStyles[] = {{TileArithmetic::fp64, "fp64", "#2471a3"},
                                       {TileArithmetic::fp32, "fp32", "#e67e22"},
                                       {TileArithmetic::fp16, "fp16", "#27ae60"}};
static_assert(kStyles[static_cast<int>(TileArithmetic::fp16)].arithmetic == TileArithmetic::fp16);

const ArithmeticStyle& style_of(TileArithmetic a) { return kStyles[static_cast<int>(a)]; }

}  // namespace

std::string TileArithmeticMap::svg() const {
  // Tiles of at least 4 units, the grid at most 600 units wide where they allow; the legend below.
  const double cell = std::max(4.0, 600.0 / std::max(tiles, 1));
  const double side = cell * tiles, margin = 10, legend = 26;
  const double width = std::max(side, 330.0) + 2 * margin, height = side + 2 * margin + legend;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<title>arithmetic per tile, {2} x {2} tiles</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, tiles);
  for (int i = 0; i < tiles; ++i)
    for (int j = 0; j <= i; ++j)
      out += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>tile ({}, {}): {}</title></rect>\n",
                         margin + j * cell, margin + i * cell, cell, cell, style_of(at(i, j)).colour, i, j,
                         style_of(at(i, j)).name);
  double x = margin;
  const double y = margin + side + 8;
  for (const ArithmeticStyle& s : kStyles) {  // the diagonal's tiles counted as fp64
    const long long n = count(s.arithmetic) + (s.arithmetic == TileArithmetic::fp64 ? tiles : 0);
    out += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{:.0f}\" y=\"{:.0f}\">{} {}</text>\n",
                       x, y, s.colour, x + 16, y + 11, s.name, n);
    x += 110;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace tessera
