#include "tessera/tile_matrix.hpp"

#include <starpu.h>

#include <unistd.h>

#include <string>

#include "runtime_control.hpp"
#include "runtime_resources.hpp"
#include "tile_grid.hpp"
#include "tessera/error.hpp"

namespace tessera {

namespace {

// What the runtime allocates for each registered tile: StarPU 1.3's data handle, measured at
// about 4.5 KiB, and Tessera's bookkeeping.
constexpr double kRuntimeBytesPerTile = 5 << 10;

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? double(pages) * double(page_size) : 1e300;
}

}  // namespace

template <class T>
TileMatrix<T>::TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure)
    : runtime_(&runtime), rows_(rows), cols_(cols), nb_(nb), structure_(structure) {
  detail::RuntimeControl::check_callable(runtime);
  if (rows < 0 || cols < 0) throw InvalidArgument("TileMatrix: negative size " + std::to_string(rows) + " x " + std::to_string(cols));
  if (nb < 1) throw InvalidArgument("TileMatrix: tile size nb = " + std::to_string(nb) + " must be at least 1");
  if (structure != TileStructure::general && rows != cols)
    throw InvalidArgument("TileMatrix: a symmetric or block-diagonal matrix must be square");
  // Without overflow: rows + nb - 1 exceeds int when nb is near INT_MAX.
  tile_rows_ = detail::TileGrid::tiles(rows, nb);
  tile_cols_ = detail::TileGrid::tiles(cols, nb);

  // Tiles and elements counted per tile column, before anything is allocated: a matrix the
  // machine cannot hold is refused at once (pinning more than physical memory cannot succeed,
  // and StarPU aborts when it runs out of memory for handles).
  double tiles = 0, elements_needed = 0;
  for (int j = 0; j < tile_cols_; ++j) {
    const bool diagonal_only = structure == TileStructure::block_diagonal;
    const int first = structure == TileStructure::general ? 0 : j;
    tiles += diagonal_only ? 1 : tile_rows_ - first;
    elements_needed += double(diagonal_only ? tile_height(j) : rows - first * nb) * tile_width(j);
  }
  const double bytes_needed = elements_needed * sizeof(T) + tiles * kRuntimeBytesPerTile;
  if (bytes_needed > physical_memory_bytes())
    throw ResourceError("TileMatrix: cannot allocate " + std::to_string(static_cast<long long>(bytes_needed / (1 << 20))) +
                " MiB for the tiles of a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix (nb = " +
                std::to_string(nb) + "): more than the machine's memory");

  // One allocation for every stored tile, tile after tile, each tile column-major.
  std::vector<std::size_t> offsets;
  std::size_t elements = 0;
  for (int j = 0; j < tile_cols_; ++j)
    for (int i = 0; i < tile_rows_; ++i)
      if (stored(i, j)) {
        offsets.push_back(elements);
        elements += static_cast<std::size_t>(tile_height(i)) * static_cast<std::size_t>(tile_width(j));
      }
  storage_bytes_ = elements * sizeof(T);
  if (storage_bytes_ > 0) {
    void* memory = runtime.resources().host_memory().allocate(storage_bytes_);
    if (!memory)
      throw ResourceError("TileMatrix: cannot allocate " + std::to_string(storage_bytes_ >> 20) + " MiB for a " +
                  std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    storage_ = static_cast<T*>(memory);
  }
  handles_.reserve(offsets.size());
  std::size_t t = 0;
  for (int j = 0; j < tile_cols_; ++j)
    for (int i = 0; i < tile_rows_; ++i)
      if (stored(i, j)) {
        starpu_data_handle_t h = nullptr;
        const int height = tile_height(i);
        starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(storage_ + offsets[t++]),
                                    static_cast<uint32_t>(height), static_cast<uint32_t>(height),
                                    static_cast<uint32_t>(tile_width(j)), sizeof(T));
        handles_.push_back(h);
      }
}

template <class T>
TileMatrix<T>::~TileMatrix() {
  // Unregistering waits for the tasks that use a tile and brings the data home, which needs the
  // workers awake; the host copy is then up to date.
  const detail::TransfersInFlight transfers(*runtime_);
  for (void* h : handles_) starpu_data_unregister(static_cast<starpu_data_handle_t>(h));
  if (storage_) runtime_->resources().host_memory().release(storage_);
}

template <class T>
std::size_t TileMatrix<T>::tile_index(int i, int j) const noexcept {
  if (structure_ == TileStructure::general) return static_cast<std::size_t>(j) * tile_rows_ + i;
  if (structure_ == TileStructure::block_diagonal) return static_cast<std::size_t>(i);
  // Column j of a lower tile matrix holds tiles j..tile_rows-1; columns before it hold
  // sum_{c<j} (tile_rows - c) tiles.
  const std::size_t before = static_cast<std::size_t>(j) * tile_rows_ - static_cast<std::size_t>(j) * (j - 1) / 2;
  return before + (i - j);
}

template <class T>
void* TileMatrix<T>::stored_handle(int i, int j) const {
  if (i < 0 || j < 0 || i >= tile_rows_ || j >= tile_cols_ || !stored(i, j))
    throw InvalidArgument("TileMatrix: no stored tile (" + std::to_string(i) + ", " + std::to_string(j) + ")");
  return handles_[tile_index(i, j)];
}

template class TileMatrix<float>;
template class TileMatrix<double>;

}  // namespace tessera
