#include "tessera/tile_matrix.hpp"

#include <starpu.h>

#include <algorithm>
#include <string>

#include "caller_memory.hpp"
#ifdef TESSERA_HAVE_CUDA
#include "device_memory.hpp"
#endif
#include "runtime_control.hpp"
#include "runtime_resources.hpp"
#include "tile_access.hpp"
#include "tile_grid.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

// What the runtime allocates for each registered tile: StarPU 1.3's data handle, measured at
// about 4.5 KiB, and Tessera's bookkeeping.
constexpr double kRuntimeBytesPerTile = 5 << 10;

struct StoredTiles {
  double tiles = 0;
  double elements = 0;
};

// Counted per tile column (in double: no overflow), before anything is allocated.
template <class T>
StoredTiles count_stored_tiles(const TileMatrix<T>& A) {
  StoredTiles count;
  for (int j = 0; j < A.tile_cols(); ++j) {
    const bool diagonal_only = A.structure() == TileStructure::block_diagonal;
    const int first = A.structure() == TileStructure::general ? 0 : j;
    count.tiles += diagonal_only ? 1 : A.tile_rows() - first;
    count.elements += double(diagonal_only ? A.tile_height(j) : A.rows() - first * A.nb()) * A.tile_width(j);
  }
  return count;
}

// A matrix the machine cannot hold is refused at once: pinning more than physical memory cannot
// succeed, and StarPU aborts when it runs out of memory for handles.
template <class T>
void check_fits_host_memory(double bytes_needed, const TileMatrix<T>& A) {
#ifdef STARPU_SIMGRID
  return;  // simulated tiles are folded (HostMemoryPool): they take no memory of this machine
#endif
  if (detail::within_physical_memory(bytes_needed)) return;
  throw ResourceError("TileMatrix: cannot allocate " + std::to_string(static_cast<long long>(bytes_needed / (1 << 20))) +
                      " MiB for the tiles of a " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) +
                      " matrix (nb = " + std::to_string(A.nb()) + "): more than the machine's memory");
}

// StarPU's memory node of CUDA device `device`: the node its CUDA workers use.
unsigned cuda_memory_node(int device) {
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    const int worker = static_cast<int>(w);
    if (starpu_worker_get_type(worker) == STARPU_CUDA_WORKER && starpu_worker_get_devid(worker) == device)
      return starpu_worker_get_memory_node(w);
  }
  throw RuntimeError("the matrix is in the memory of GPU " + std::to_string(device) +
                     ", which the runtime has no CUDA worker on (see TESSERA_NCUDA, STARPU_NCUDA)");
}

// One tile as a StarPU matrix handle whose home is `node`: `height` rows of `width` columns,
// `ld` elements apart. The tile kernels read the leading dimension from the handle's interface
// (a copy elsewhere may be packed, ld = height).
template <class T>
void* register_tile(unsigned node, T* origin, int ld, int height, int width) {
  starpu_data_handle_t h = nullptr;
  starpu_matrix_data_register(&h, static_cast<int>(node), reinterpret_cast<uintptr_t>(origin), static_cast<uint32_t>(ld),
                              static_cast<uint32_t>(height), static_cast<uint32_t>(width), sizeof(T));
  return h;
}

}  // namespace

template <class T>
void TileMatrix<T>::check_shape() const {
  if (rows() < 0 || cols() < 0)
    throw InvalidArgument("TileMatrix: negative size " + std::to_string(rows()) + " x " + std::to_string(cols()));
  if (nb() < 1) throw InvalidArgument("TileMatrix: tile size nb = " + std::to_string(nb()) + " must be at least 1");
  if (structure() != TileStructure::general && rows() != cols())
    throw InvalidArgument("TileMatrix: a symmetric or block-diagonal matrix must be square");
}

template <class T>
TileMatrix<T>::TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure)
    : TileMatrix(runtime, rows, cols, nb, structure, false) {}

template <class T>
TileMatrix<T>::TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure, bool transposed)
    : TileShape(rows, cols, nb, structure), runtime_(&runtime), transposed_(transposed) {
  detail::RuntimeControl::check_callable(runtime);
  check_shape();

  const StoredTiles stored_tiles = count_stored_tiles(*this);
  check_fits_host_memory(stored_tiles.elements * sizeof(T) + stored_tiles.tiles * kRuntimeBytesPerTile, *this);

  // One allocation for every stored tile, tile after tile, each tile column-major.
  std::vector<std::size_t> offsets;
  std::size_t elements = 0;
  for (int j = 0; j < tile_cols(); ++j)
    for (int i = 0; i < tile_rows(); ++i)
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
  for (int j = 0; j < tile_cols(); ++j)
    for (int i = 0; i < tile_rows(); ++i)
      if (stored(i, j)) {
        const int height = transposed ? tile_width(j) : tile_height(i);
        const int width = transposed ? tile_height(i) : tile_width(j);
        handles_.push_back(register_tile(STARPU_MAIN_RAM, storage_ + offsets[t++], height, height, width));
      }
  adopt_by_runtime();
}

template <class T>
TileMatrix<T>::TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure, T* matrix, int ld,
                          int cuda_device, bool transposed)
    : TileShape(rows, cols, nb, structure), runtime_(&runtime), transposed_(transposed) {
  detail::RuntimeControl::check_callable(runtime);
  check_shape();
  if (ld < std::max(1, rows))
    throw InvalidArgument("TileMatrix view: leading dimension " + std::to_string(ld) + " < max(1, " +
                          std::to_string(rows) + ")");
  if (!matrix && rows > 0 && cols > 0) throw InvalidArgument("TileMatrix view: null matrix");
  const double tiles = count_stored_tiles(*this).tiles;
  check_fits_host_memory(tiles * kRuntimeBytesPerTile, *this);
  const unsigned node = cuda_device < 0 ? STARPU_MAIN_RAM : cuda_memory_node(cuda_device);
  handles_.reserve(static_cast<std::size_t>(tiles));
  for (int j = 0; j < tile_cols(); ++j)
    for (int i = 0; i < tile_rows(); ++i)
      if (stored(i, j)) {
        const std::size_t row0 = static_cast<std::size_t>(transposed ? j : i) * nb;
        const std::size_t col0 = static_cast<std::size_t>(transposed ? i : j) * nb;
        handles_.push_back(transposed ? register_tile(node, matrix + row0 + col0 * ld, ld, tile_width(j), tile_height(i))
                                      : register_tile(node, matrix + row0 + col0 * ld, ld, tile_height(i), tile_width(j)));
      }
  adopt_by_runtime();
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
TileMatrix<T>::TileMatrix(Runtime& runtime, int n, int nb, const detail::DeviceTiles<T>& homes, bool transposed)
    : TileShape(n, n, nb, TileStructure::symmetric_lower), runtime_(&runtime), transposed_(transposed) {
  detail::RuntimeControl::check_callable(runtime);
  check_shape();
  const double tiles = count_stored_tiles(*this).tiles;
  check_fits_host_memory(tiles * kRuntimeBytesPerTile, *this);
  handles_.reserve(static_cast<std::size_t>(tiles));
  for (int j = 0; j < tile_cols(); ++j)
    for (int i = j; i < tile_rows(); ++i) {
      const typename detail::DeviceTiles<T>::Home home = homes.home(i, j);
      const unsigned node = cuda_memory_node(home.device);
      handles_.push_back(transposed ? register_tile(node, home.data, home.ld, tile_width(j), tile_height(i))
                                    : register_tile(node, home.data, home.ld, tile_height(i), tile_width(j)));
    }
  adopt_by_runtime();
}
#endif

template <class T>
TileMatrix<T>::~TileMatrix() {
  if (!runtime_) return;  // its runtime ended first and released it
  detail::RuntimeControl::forget(*runtime_, this);
  release_tiles(true);
}

template <class T>
void TileMatrix<T>::adopt_by_runtime() {
  detail::RuntimeControl::adopt(*runtime_, this, [this](bool starpu_running) { release_tiles(starpu_running); });
}

template <class T>
void TileMatrix<T>::release_tiles(bool starpu_running) {
  if (starpu_running) {
    // Unregistering waits for the tasks that use a tile and brings the data home (host memory, or
    // the GPU of a view), which needs the workers awake; the home copy is then up to date.
    const detail::TransfersInFlight transfers(*runtime_);
    for (void* h : handles_) starpu_data_unregister(static_cast<starpu_data_handle_t>(h));
    if (storage_) runtime_->resources().host_memory().release(storage_);
  }
  handles_.clear();
  storage_ = nullptr;
  runtime_ = nullptr;
}

template <class T>
Runtime& TileMatrix<T>::runtime() const {
  if (!runtime_) throw RuntimeError("TileMatrix: its Runtime has been destroyed, and with it the tiles");
  return *runtime_;
}

template <class T>
std::size_t TileMatrix<T>::tile_index(int i, int j) const noexcept {
  if (structure() == TileStructure::general) return static_cast<std::size_t>(j) * tile_rows() + i;
  if (structure() == TileStructure::block_diagonal) return static_cast<std::size_t>(i);
  // Column j of a lower tile matrix holds tiles j..tile_rows-1; columns before it hold
  // sum_{c<j} (tile_rows - c) tiles.
  const std::size_t before = static_cast<std::size_t>(j) * tile_rows() - static_cast<std::size_t>(j) * (j - 1) / 2;
  return before + (i - j);
}

template <class T>
void* TileMatrix<T>::stored_handle(int i, int j) const {
  if (i < 0 || j < 0 || i >= tile_rows() || j >= tile_cols() || !stored(i, j))
    throw InvalidArgument("TileMatrix: no stored tile (" + std::to_string(i) + ", " + std::to_string(j) + ")");
  runtime();  // throws once the runtime has ended
  return handles_[tile_index(i, j)];
}

#define TESSERA_INSTANTIATE(T) template class TileMatrix<T>;
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

namespace detail {

bool tiles_valid_on_first_gpu(const TileGrid& A) {
  const int worker = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0);
  if (worker < 0) return false;
  const unsigned node = starpu_worker_get_memory_node(static_cast<unsigned>(worker));
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = 0; i < A.tile_rows(); ++i)
      if (A.stored(i, j) && !starpu_data_is_on_node(static_cast<starpu_data_handle_t>(A.ref(i, j).handle), node))
        return false;
  return true;
}

}  // namespace detail

}  // namespace tessera
