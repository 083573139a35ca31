#include "memory_budget.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "tessera/error.hpp"

namespace tessera::cli {

namespace {

// StarPU's data handle and Tessera's bookkeeping per registered tile (src/runtime/starpu/tile_matrix.cpp).
constexpr double kRuntimeBytesPerTile = 5 << 10;

// The lower tiles of an n x n symmetric matrix in tiles of order nb: at most n (n + nb) / 2
// elements, and one handle per tile.
double lower_tiles_bytes(double n, double nb, double element_bytes) {
  if (n <= 0) return 0;
  const double tiles_per_side = std::ceil(n / nb);
  return n * (n + nb) / 2 * element_bytes + tiles_per_side * (tiles_per_side + 1) / 2 * kRuntimeBytesPerTile;
}

}  // namespace

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? double(pages) * double(page_size) : 1e300;
}

double bytes_needed(const PotrfFootprint& run) {
  const double n = run.n, nb = std::max(1, std::min(run.nb, run.n)), element = double(run.element_bytes);
  const double matrix = n * n * element;
  const double tiles = lower_tiles_bytes(n, nb, element);
  double bytes = matrix + tiles;
  if (run.check) bytes += matrix + 3 * tiles + n * nb * element;
  const bool single = run.element_bytes < sizeof(double);
  if (single && run.from_file) bytes += n * n * sizeof(double);
  if (single && run.output) bytes += n * n * sizeof(double);
  return bytes;
}

double bytes_needed(const BatchedFootprint& run) {
  const double n = run.n, count = run.count, element = double(run.element_bytes);
  const double per_matrix = (n * n + n * std::max(run.nrhs, 1)) * element;
  return 2 * per_matrix * count + count * (sizeof(int) + sizeof(double)) + run.threads * n * n * sizeof(double);
}

void require_memory(double bytes, const std::string& what, const std::string& held) {
  const double available = physical_memory_bytes();
  if (bytes <= available) return;
  throw ResourceError(fmt::format("{} needs {:.1f} GiB ({}), more than this machine's {:.1f} GiB of memory", what, bytes / kGiB,
                          held, available / kGiB));
}

}  // namespace tessera::cli
