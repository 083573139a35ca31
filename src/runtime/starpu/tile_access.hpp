// Tessera's own access to the tiles of a TileMatrix (starpu_interop::tile_handle() is the application's):
// the grid the algorithms take, single tiles for the requests built outside algorithms.hpp, and
// tile matrices that are views of a caller's matrix (in GPU memory for tessera/device.hpp).
#pragma once

#include <memory>
#include <vector>

#include "algorithms.hpp"
#include "tessera/tile_matrix.hpp"

namespace tessera::detail {

// The home of a view's tiles when they are not on a GPU.
constexpr int kHostMemory = -1;

struct TileAccess {
  template <class T>
  static void* handle(const TileMatrix<T>& A, int i, int j) {
    return A.stored_handle(i, j);
  }
  template <class T>
  static bool transposed(const TileMatrix<T>& A) {
    return A.transposed_;
  }

  // The rows x cols column-major matrix at `matrix` (leading dimension ld) in the memory of CUDA
  // device `cuda_device`, or in host memory (kHostMemory), as tiles registered in place (see
  // TileMatrix's view constructor); with `transposed` the tiles of a symmetric matrix stored in
  // its upper triangle, as stored there (TileRef::transposed).
  template <class T>
  static std::unique_ptr<TileMatrix<T>> view(Runtime& runtime, int rows, int cols, int nb, TileStructure structure,
                                             T* matrix, int ld, int cuda_device, bool transposed = false) {
    return std::unique_ptr<TileMatrix<T>>(
        new TileMatrix<T>(runtime, rows, cols, nb, structure, matrix, ld, cuda_device, transposed));
  }

#ifdef TESSERA_HAVE_CUDA
  // A symmetric n x n matrix's tiles where `homes` holds them, on the GPUs owning them (see
  // TileMatrix's constructor from DeviceTiles).
  template <class T>
  static std::unique_ptr<TileMatrix<T>> on_gpus(Runtime& runtime, int n, int nb, const DeviceTiles<T>& homes,
                                                bool transposed) {
    return std::unique_ptr<TileMatrix<T>>(new TileMatrix<T>(runtime, n, nb, homes, transposed));
  }
#endif

  // Pool tiles stored transposed, for an upper-stored symmetric n x n matrix copied as stored.
  template <class T>
  static std::unique_ptr<TileMatrix<T>> transposed_tiles(Runtime& runtime, int n, int nb) {
    return std::unique_ptr<TileMatrix<T>>(new TileMatrix<T>(runtime, n, n, nb, TileStructure::symmetric_lower, true));
  }
};

// Whether every stored tile of A has a valid copy in the memory of the runtime's first GPU (false
// without one). A hint for choosing how to factor: tasks still in flight may move tiles.
bool tiles_valid_on_first_gpu(const TileGrid& A);

template <class T>
TileRef tile_ref(const TileMatrix<T>& A, int i, int j) {
  return {TileAccess::handle(A, i, j), A.tile_height(i), A.tile_width(j), i, j, i * A.nb(), j * A.nb(),
          TileAccess::transposed(A)};
}

template <class T>
TileGrid tile_grid(const TileMatrix<T>& A) {
  std::vector<void*> handles(static_cast<std::size_t>(A.tile_rows()) * A.tile_cols(), nullptr);
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = 0; i < A.tile_rows(); ++i)
      if (A.stored(i, j)) handles[static_cast<std::size_t>(j) * A.tile_rows() + i] = TileAccess::handle(A, i, j);
  return TileGrid(A.rows(), A.cols(), A.nb(), A.structure(), std::move(handles), TileAccess::transposed(A));
}

// The algorithms on tile matrices.
template <class T>
void insert_cholesky(const TaskContext& ctx, const TileMatrix<T>& A, const SchedulingHints& hints,
                     const CholeskyPlan& plan) {
  insert_cholesky<T>(ctx, tile_grid(A), hints, plan);
}
template <class T>
void insert_cholesky_solve(const TaskContext& ctx, const TileMatrix<T>& L, const TileMatrix<T>& B,
                           const SchedulingHints& hints) {
  insert_cholesky_solve<T>(ctx, tile_grid(L), tile_grid(B), hints);
}
template <class T>
void insert_load(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, const T* src, int ld, NonFiniteInput non_finite,
                 const SchedulingHints& hints) {
  insert_load<T>(ctx, tile_grid(A), uplo, src, ld, non_finite, hints);
}
template <class T>
void insert_store(const TaskContext& ctx, const TileMatrix<T>& A, Uplo uplo, T* dst, int ld, bool skip_after_failure,
                  const SchedulingHints& hints) {
  insert_store<T>(ctx, tile_grid(A), uplo, dst, ld, skip_after_failure, hints);
}

}  // namespace tessera::detail
