// Distributed matrices: tiles registered with StarPU-MPI under their owner's rank, and the
// conversions between tiles and each rank's local array in ScaLAPACK's layout.
#include <starpu_mpi.h>

#include <algorithm>
#include <string>

#include "collective.hpp"
#include "distributed_state.hpp"
#include "runtime_control.hpp"
#include "runtime_resources.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

// A tile whose home is this rank's memory at `origin`, or, with origin null, a tile of another
// rank: no memory here until a task that runs here needs it.
void* register_tile(void* origin, int height, int width, std::size_t element_size) {
  starpu_data_handle_t h = nullptr;
  const int home = origin ? STARPU_MAIN_RAM : -1;
  starpu_matrix_data_register(&h, home, reinterpret_cast<uintptr_t>(origin), static_cast<uint32_t>(height),
                              static_cast<uint32_t>(height), static_cast<uint32_t>(width), element_size);
  return h;
}

}  // namespace

TileGrid DistributedTiles::register_tiles(ContextState& context, int rows, int cols, int nb, TileStructure structure,
                                          Uplo uplo, std::size_t element_size, void*& storage) {
  const TileGrid shape(rows, cols, nb, structure, {});
  const BlockCyclic layout = context.layout();
  // This rank's tiles, one after the other, each column-major.
  std::size_t local_bytes = 0;
  std::size_t stored = 0;
  for (int j = 0; j < shape.tile_cols(); ++j)
    for (int i = 0; i < shape.tile_rows(); ++i) {
      if (!shape.stored(i, j)) continue;
      ++stored;
      if (tile_owner(layout, structure, uplo, i, j) == context.rank)
        local_bytes += static_cast<std::size_t>(shape.tile_height(i)) * shape.tile_width(j) * element_size;
    }
  // Pinned where GPUs are used: each operation copies every tile to a GPU and back, and the tiles
  // that go to other ranks once more.
  if (local_bytes > 0) {
    storage = context.runtime->resources().host_memory().allocate_pinned(local_bytes);
    if (!storage)
      throw ResourceError("distributed::Matrix: cannot allocate " + std::to_string(local_bytes >> 20) +
                          " MiB for this rank's tiles of a " + std::to_string(rows) + " x " + std::to_string(cols) +
                          " matrix");
  }
  const std::int64_t first_tag = context.take_tags(stored);
  std::vector<void*> handles(static_cast<std::size_t>(shape.tile_rows()) * shape.tile_cols(), nullptr);
  std::size_t offset = 0;
  std::int64_t tag = first_tag;
  for (int j = 0; j < shape.tile_cols(); ++j)
    for (int i = 0; i < shape.tile_rows(); ++i) {
      if (!shape.stored(i, j)) continue;
      const int owner = tile_owner(layout, structure, uplo, i, j);
      void* origin = nullptr;
      if (owner == context.rank) {
        origin = static_cast<char*>(storage) + offset;
        offset += static_cast<std::size_t>(shape.tile_height(i)) * shape.tile_width(j) * element_size;
      }
      void* handle = register_tile(origin, shape.tile_height(i), shape.tile_width(j), element_size);
      starpu_mpi_data_register_comm(static_cast<starpu_data_handle_t>(handle), tag++, owner, context.comm);
      handles[static_cast<std::size_t>(j) * shape.tile_rows() + i] = handle;
    }
  return TileGrid(rows, cols, nb, structure, std::move(handles));
}

DistributedTiles::DistributedTiles(ContextState& context, int rows, int cols, int nb, TileStructure structure, Uplo uplo,
                                   std::size_t element_size)
    : context_(&context),
      uplo_(uplo),
      grid_(register_tiles(context, rows, cols, nb, structure, uplo, element_size, storage_)) {}

DistributedTiles::~DistributedTiles() {
  const TransfersInFlight awake(*context_->runtime);
  for (int j = 0; j < grid_.tile_cols(); ++j)
    for (int i = 0; i < grid_.tile_rows(); ++i)
      if (grid_.stored(i, j)) starpu_data_unregister(static_cast<starpu_data_handle_t>(grid_.ref(i, j).handle));
  if (storage_) context_->runtime->resources().host_memory().release(storage_);
}

template <class T>
MatrixState& DistributedAccess::state(const distributed::Matrix<T>& matrix) {
  return matrix.impl_->state;
}

}  // namespace tessera::detail

namespace tessera::distributed {

template <class T>
struct Matrix<T>::Impl {
  detail::MatrixState state;
};

namespace {

void check_sizes(int rows, int cols, int nb) {
  if (rows < 0 || cols < 0)
    throw InvalidArgument("distributed::Matrix: negative size " + std::to_string(rows) + " x " + std::to_string(cols));
  if (nb < 1) throw InvalidArgument("distributed::Matrix: tile size nb = " + std::to_string(nb) + " must be at least 1");
}

// The local array a conversion reads or writes: its leading dimension, and a pointer where it holds elements.
void check_local_array(const char* what, const void* local, int lld, int local_rows, int local_cols) {
  if (lld < std::max(1, local_rows))
    throw InvalidArgument(std::string("distributed::Matrix::") + what + ": local leading dimension " +
                          std::to_string(lld) + " < max(1, local rows " + std::to_string(local_rows) + ")");
  if (!local && local_rows > 0 && local_cols > 0)
    throw InvalidArgument(std::string("distributed::Matrix::") + what + ": null local array");
}

}  // namespace

template <class T>
Matrix<T>::Matrix(Context& context, int n, int nb, Uplo uplo) {
  check_sizes(n, n, nb);
  detail::ContextState& state = detail::DistributedAccess::state(context);
  // Built in place: the registered tiles never move.
  impl_.reset(new Impl{detail::MatrixState(state, context, n, n, nb, TileStructure::symmetric_lower, uplo, sizeof(T))});
}

template <class T>
Matrix<T>::Matrix(Context& context, int rows, int cols, int nb) {
  check_sizes(rows, cols, nb);
  detail::ContextState& state = detail::DistributedAccess::state(context);
  impl_.reset(new Impl{detail::MatrixState(state, context, rows, cols, nb, TileStructure::general, Uplo::lower, sizeof(T))});
}

template <class T>
Matrix<T>::~Matrix() = default;

template <class T>
int Matrix<T>::rows() const noexcept { return impl_->state.tiles.grid().rows(); }
template <class T>
int Matrix<T>::cols() const noexcept { return impl_->state.tiles.grid().cols(); }
template <class T>
int Matrix<T>::nb() const noexcept { return impl_->state.tiles.grid().nb(); }
template <class T>
bool Matrix<T>::symmetric() const noexcept { return impl_->state.symmetric(); }
template <class T>
Uplo Matrix<T>::uplo() const noexcept { return impl_->state.tiles.uplo(); }
template <class T>
Context& Matrix<T>::context() const noexcept { return *impl_->state.public_context; }

template <class T>
int Matrix<T>::local_rows() const noexcept {
  const detail::ContextState& c = *impl_->state.context;
  return detail::BlockCyclic::local_size(rows(), nb(), c.rank / c.grid.cols, c.grid.rows);
}

template <class T>
int Matrix<T>::local_cols() const noexcept {
  const detail::ContextState& c = *impl_->state.context;
  return detail::BlockCyclic::local_size(cols(), nb(), c.rank % c.grid.cols, c.grid.cols);
}

template <class T>
void Matrix<T>::import_local(const T* local, int lld) {
  check_local_array("import_local", local, lld, local_rows(), local_cols());
  const detail::DistributedTiles& tiles = impl_->state.tiles;
  detail::run_collective(tiles.context(), Mode::cpu, GpuKernels::any,
                         [&](const detail::TaskContext&, const detail::TaskContext& local_tasks) {
                           detail::insert_load_local<T>(local_tasks, tiles.grid(), tiles.uplo(), tiles.context().layout(),
                                                        local, lld, critical_path_hints);
                         });
}

template <class T>
void Matrix<T>::export_local(T* local, int lld) const {
  check_local_array("export_local", local, lld, local_rows(), local_cols());
  const detail::DistributedTiles& tiles = impl_->state.tiles;
  detail::run_collective(tiles.context(), Mode::cpu, GpuKernels::any,
                         [&](const detail::TaskContext&, const detail::TaskContext& local_tasks) {
                           detail::insert_store_local<T>(local_tasks, tiles.grid(), tiles.uplo(),
                                                         tiles.context().layout(), local, lld, critical_path_hints);
                         });
}

template <class T>
void Matrix<T>::fill(const std::function<T(int, int)>& value) {
  const int lrows = local_rows();
  const int lcols = local_cols();
  const detail::BlockCyclic layout = impl_->state.context->layout();
  const int block = nb();
  std::vector<T> local(static_cast<std::size_t>(std::max(1, lrows)) * static_cast<std::size_t>(lcols));
  // Local (r, c) is global (I * nb + r % nb, J * nb + c % nb) with I = (r / nb) P + my_row.
  for (int c = 0; c < lcols; ++c) {
    const int j = ((c / block) * layout.grid_cols + layout.my_col) * block + c % block;
    for (int r = 0; r < lrows; ++r) {
      const int i = ((r / block) * layout.grid_rows + layout.my_row) * block + r % block;
      const bool held = !symmetric() || (uplo() == Uplo::lower ? i >= j : i <= j);
      if (held) local[static_cast<std::size_t>(c) * std::max(1, lrows) + r] = value(i, j);
    }
  }
  import_local(local.data(), std::max(1, lrows));
}

#define TESSERA_INSTANTIATE(T) template class Matrix<T>;
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE
}  // namespace tessera::distributed

namespace tessera::detail {

#define TESSERA_INSTANTIATE(T) template MatrixState& DistributedAccess::state<T>(const distributed::Matrix<T>&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
