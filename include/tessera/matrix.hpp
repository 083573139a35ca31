// An operand wherever it lies: one description of a matrix argument (host array, tiles, GPU array,
// batch of host arrays), so that each operation has one entry point (tessera/cholesky.hpp) whatever
// the home of its matrices. A MatrixView owns nothing: what it points at must outlive the request.
#pragma once

#include "tessera/tile_matrix.hpp"

// cudaStream_t without <cuda_runtime.h>: the same type (CUDA defines it as CUstream_st*).
struct CUstream_st;

namespace tessera {

// Where a matrix lies.
enum class MatrixIn {
  host,                 // a column-major array in host memory
  device,               // a column-major array in the memory of one of the runtime's GPUs
  tiles,                // a TileMatrix registered with the runtime
  host_batch,           // matrices of one size in host memory, at a fixed stride
  host_variable_batch,  // matrices of their own sizes in host memory, at given offsets
};

template <class T>
class MatrixView {
 public:
  static constexpr int kSquare = -1;

  // rows x cols at `data`, column-major with leading dimension ld >= max(1, rows).
  static MatrixView host(int rows, int cols, T* data, int ld) { return {MatrixIn::host, rows, cols, data, ld}; }
  // The same in GPU memory; the work is ordered after what is on `stream` and its result is ready
  // on it (tessera/device.hpp says how).
  static MatrixView on_device(int rows, int cols, T* data, int ld, CUstream_st* stream) {
    MatrixView view{MatrixIn::device, rows, cols, data, ld};
    view.stream_ = stream;
    return view;
  }
  // Tiles already registered; a view of const tiles is for an operand that is only read (a factor).
  static MatrixView of(const TileMatrix<T>& tiles) {
    MatrixView view{MatrixIn::tiles, tiles.rows(), tiles.cols(), nullptr, 0};
    view.tiles_ = const_cast<TileMatrix<T>*>(&tiles);
    return view;
  }
  // `count` matrices of rows x cols, matrix k at data + k * stride (leading dimension ld);
  // info[k] (host, count ints) receives matrix k's LAPACK info where the operation reports one.
  static MatrixView host_batch(int rows, int cols, T* data, int ld, long long stride, int count,
                               int* info = nullptr) {
    MatrixView view{MatrixIn::host_batch, rows, cols, data, ld};
    view.batch_ = {stride, count, info};
    return view;
  }
  // `count` matrices, matrix k of order n[k] (or n[k] x cols: right-hand sides) at data + offsets[k]
  // with leading dimension ld[k]; info as in host_batch.
  static MatrixView host_variable_batch(const int* n, T* data, const long long* offsets, const int* ld, int count,
                                        int* info = nullptr) {
    return host_variable_batch(n, kSquare, data, offsets, ld, count, info);
  }
  static MatrixView host_variable_batch(const int* n, int cols, T* data, const long long* offsets, const int* ld,
                                        int count, int* info = nullptr) {
    MatrixView view{MatrixIn::host_variable_batch, 0, cols, data, 0};
    view.batch_ = {0, count, info, n, offsets, ld};
    return view;
  }

  MatrixIn where() const noexcept { return where_; }
  // Of one matrix (host_variable_batch: rows 0, and cols kSquare for square matrices).
  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  T* data() const noexcept { return data_; }
  int ld() const noexcept { return ld_; }
  CUstream_st* stream() const noexcept { return stream_; }
  TileMatrix<T>* tiles() const noexcept { return tiles_; }
  long long stride() const noexcept { return batch_.stride; }
  int count() const noexcept { return batch_.count; }
  int* info() const noexcept { return batch_.info; }
  const int* variable_rows() const noexcept { return batch_.rows; }
  const long long* offsets() const noexcept { return batch_.offsets; }
  const int* variable_ld() const noexcept { return batch_.ld; }

 private:
  struct Batch {
    long long stride = 0;
    int count = 1;
    int* info = nullptr;
    const int* rows = nullptr;  // variable sizes
    const long long* offsets = nullptr;
    const int* ld = nullptr;
  };

  MatrixView(MatrixIn where, int rows, int cols, T* data, int ld)
      : where_(where), rows_(rows), cols_(cols), data_(data), ld_(ld) {}

  MatrixIn where_;
  int rows_;
  int cols_;
  T* data_;
  int ld_;
  CUstream_st* stream_ = nullptr;
  TileMatrix<T>* tiles_ = nullptr;
  Batch batch_;
};

}  // namespace tessera
