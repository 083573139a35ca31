// A matrix cut into nb x nb tiles (the last row and column of tiles partial when nb does not
// divide the size), each tile contiguous in memory and registered with the runtime as one data
// handle (tessera/starpu_interop.hpp hands them to applications that submit their own tasks).
// A symmetric matrix stores its lower tiles only; an upper-stored matrix is transposed on the way
// in and out (load_async, store_async). Host memory is pinned when GPUs are present.
// Tessera's device-resident API (tessera/device.hpp) also makes tile matrices that are views of a
// column-major matrix in GPU memory: their tiles are registered in place.
#pragma once

#include "tessera/export.h"

#include <complex>
#include <cstddef>
#include <vector>

#include "tessera/runtime.hpp"
#include "tessera/tile_structure.hpp"

namespace tessera {

namespace detail {
struct TileAccess;
template <class U>
class DeviceTiles;
}
namespace starpu_interop {
struct TileHandles;
}

template <class T>
class TESSERA_EXPORT TileMatrix : public TileShape {
 public:
  // Throws InvalidArgument for negative sizes or nb < 1, Error if memory runs out.
  TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure);
  // A symmetric n x n matrix.
  TileMatrix(Runtime& runtime, int n, int nb) : TileMatrix(runtime, n, n, nb, TileStructure::symmetric_lower) {}
  // Waits for every task still using the tiles, then releases them.
  ~TileMatrix();
  TileMatrix(const TileMatrix&) = delete;
  TileMatrix& operator=(const TileMatrix&) = delete;

  // Throws RuntimeError once the runtime has ended: a Runtime destroyed before its tile matrices
  // takes their tiles back first (their values are lost); such a matrix may only be destroyed.
  Runtime& runtime() const;

 private:
  friend struct detail::TileAccess;
  friend struct starpu_interop::TileHandles;
  // A view (made by detail::TileAccess::view) of the rows x cols column-major matrix at `matrix`,
  // leading dimension ld, in the memory of CUDA device `cuda_device` (host memory when negative):
  // tile (i, j) is registered in place at matrix + i nb + j nb ld, with that memory as its home,
  // so releasing the view leaves the latest values there (a GPU's never go through host memory).
  // Throws RuntimeError when the runtime has no CUDA worker on that device. With `transposed`,
  // see below.
  TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure, T* matrix, int ld, int cuda_device,
             bool transposed);
  // Tiles stored transposed (made by detail::TileAccess for an upper-stored symmetric matrix):
  // tile (i, j) holds the transpose of the matrix's tile (i, j), tile_width(j) x tile_height(i) in
  // memory; in a view it is the block at matrix + j nb + i nb ld, in the upper triangle.
  TileMatrix(Runtime& runtime, int rows, int cols, int nb, TileStructure structure, bool transposed);
  // A symmetric n x n matrix's tiles, each registered in place where `homes` holds it (the memory
  // of the GPU owning it), that memory its home; with `transposed` as above. Only with CUDA.
  TileMatrix(Runtime& runtime, int n, int nb, const detail::DeviceTiles<T>& homes, bool transposed);
  // The constructors: checks the sizes.
  void check_shape() const;
  std::size_t tile_index(int i, int j) const noexcept;
  // The runtime's handle of a stored tile (opaque here); throws InvalidArgument for a tile that
  // is not stored.
  void* stored_handle(int i, int j) const;
  // Registers the matrix with its runtime, which releases it if it ends first.
  void adopt_by_runtime();
  // Unregisters the tiles and frees their storage (only lets go of them where StarPU no longer
  // runs); the matrix then has no runtime.
  void release_tiles(bool starpu_running);

  Runtime* runtime_;
  bool transposed_ = false;
  T* storage_ = nullptr;
  std::size_t storage_bytes_ = 0;
  std::vector<void*> handles_;
};

extern template class TileMatrix<float>;
extern template class TileMatrix<double>;
extern template class TileMatrix<std::complex<float>>;
extern template class TileMatrix<std::complex<double>>;

}  // namespace tessera
