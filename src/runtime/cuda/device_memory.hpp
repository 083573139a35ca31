// What the device-resident API (tessera/device.hpp) needs of CUDA, behind an interface without
// CUDA's types: where a matrix lives, waiting for the caller's stream, and the workspace of an
// upper-stored matrix. Only built with CUDA.
#pragma once

#ifdef TESSERA_HAVE_CUDA

#include <cstddef>
#include <vector>

#include "owned_panels.hpp"

namespace tessera::detail {

// The CUDA device whose memory holds `pointer` (device or managed memory), or -1 for host memory
// (pageable, pinned, or memory CUDA does not know).
int cuda_device_holding(const void* pointer);

// Whether `pointer` is host memory pinned with CUDA (cudaHostAlloc, cudaHostRegister).
bool pinned_host_memory(const void* pointer);

// Blocks until the work already enqueued on `stream` (a cudaStream_t; null: the legacy default
// stream of the calling thread's current device) is complete.
void synchronize_stream(void* stream);

// *destination (device memory) := value, in the order of `stream`; returns without waiting for it.
void write_int_on_stream(int* destination, int value, void* stream);

// dst (rows x cols, ldd) := src (lds), both of elements of `element_bytes` in device memory, in the
// order of `stream`, without waiting.
void copy_matrix_on_stream(int rows, int cols, std::size_t element_bytes, const void* src, int lds, void* dst, int ldd,
                           void* stream);

// L (n x n, leading dimension ldl, on `device`) := the lower triangle of the matrix whose element
// (i, j) lies at A + i * row_stride + j * col_stride (on `device`), zeros above the diagonal, each
// element conjugated with `conjugate` (a complex upper triangle read through swapped strides); in
// the order of `stream`, without waiting.
template <class T>
void load_lower_on_stream(int device, int n, const T* A, long long row_stride, long long col_stride, T* L, int ldl,
                          bool conjugate, void* stream);

// The lower triangle of L (n x n, ldl, on `device`) transposed (conjugated for complex scalars)
// into its upper triangle, and zeros below the diagonal; in the order of `stream`, without waiting.
template <class T>
void lower_to_upper_on_stream(int device, int n, T* L, int ldl, void* stream);

// X (n x n, ldx, on `device`), holding an inverse in its lower triangle, finished as
// kernels::cuda::finish_inverse does from the factor whose diagonal entry j lies at factor[j *
// diagonal_stride] (mirrored, or all NaN where that diagonal holds a zero); info (device memory,
// may be null) := xTRTRI's info. In the order of `stream`, without waiting.
template <class T>
void finish_inverse_on_stream(int device, int n, const T* factor, long long diagonal_stride, T* X, int ldx, int* info,
                              void* stream);

// 2 sum log(A(j, j)) of the n x n factor A (device memory, leading dimension lda) in the order of
// `stream`: one kernel and an 8-byte read-back; returns once it has the value.
template <class T>
double log_determinant_on_stream(int n, const T* A, int lda, void* stream);

// The 1-based position of the first exactly zero diagonal entry of the n x n matrix A (device
// memory), 0 when none, in the order of `stream`; returns once it has the answer.
template <class T>
int first_zero_diagonal_on_stream(int n, const T* A, int lda, void* stream);

// The smallest device number driven by one of the runtime's CUDA workers, or -1 without one.
int first_cuda_device();

// Bytes free on `device` now (cudaMemGetInfo).
std::size_t free_device_memory(int device);

// The CUDA devices driven by the runtime's CUDA workers, in increasing order: GPU g of the
// owners (GpuOwners, RuntimeResources::workers_of_gpu) is the g-th.
std::vector<int> cuda_devices_in_order();

// Columns a whole number of 256 bytes apart keep the alignment of an allocation: Tessera's tile
// kernels load 16 bytes at a time where columns allow it.
template <class T>
constexpr std::size_t kColumnAlignment = 256 / sizeof(T);

// The lower tiles of an n x n symmetric matrix, each in the memory of the GPU that owns it, laid
// out as OwnedPanels says (one cudaMalloc per GPU): a host array's tiles while a call runs on the
// GPUs (HostTiles::staged).
template <class T>
class DeviceTiles {
 public:
  struct Home {
    int device;
    T* data;
    int ld;
  };
  // `devices[g]` holds the tiles of owner g. Throws ResourceError when a GPU has not that much
  // memory free.
  DeviceTiles(std::vector<int> devices, OwnedPanels layout);
  ~DeviceTiles();
  DeviceTiles(const DeviceTiles&) = delete;
  DeviceTiles& operator=(const DeviceTiles&) = delete;

  Home home(int i, int j) const {
    const PanelTile& t = layout_.tile(i, j);
    return {devices_[static_cast<std::size_t>(t.gpu)], memory_[static_cast<std::size_t>(t.gpu)] + t.offset, t.ld};
  }
  // The bytes GPU g of `layout` takes.
  static std::size_t bytes_of(const OwnedPanels& layout, int gpu) { return layout.elements(gpu) * sizeof(T); }

 private:
  void release() noexcept;

  std::vector<int> devices_;
  OwnedPanels layout_;
  std::vector<T*> memory_;
};

// The upper triangle of an n x n matrix on a GPU, transposed into the lower triangle of a
// workspace on the same GPU: the tile algorithm factors lower triangles only, and the caller's
// lower triangle is not Tessera's to write. Costs n x ld() elements of GPU memory while it lives
// and one pass over the triangle each way. The memory comes from cudaMalloc, not from the device's
// stream-ordered pool: StarPU may copy the workspace's tiles to another GPU, and other GPUs see a
// pool's allocations only once the pool's access is changed, a setting of the whole process.
template <class T>
class TransposedUpper {
 public:
  // Allocates the workspace on `device` and copies the upper triangle of `upper` (leading
  // dimension ld) into it; returns once the copy is complete. Throws ResourceError when the GPU
  // has not that much memory free.
  TransposedUpper(int device, int n, const T* upper, int ld);
  ~TransposedUpper();
  TransposedUpper(const TransposedUpper&) = delete;
  TransposedUpper& operator=(const TransposedUpper&) = delete;

  T* lower() const noexcept { return lower_; }
  int ld() const noexcept { return ld_; }
  // The lower triangle, transposed, into the upper triangle of `upper` (nothing else of it is
  // written); returns once the copy is complete.
  void store(T* upper, int ld) const;

 private:
  // Frees the workspace and the stream (device_ current).
  void release() noexcept;

  int device_;
  int n_;
  int ld_;
  void* stream_ = nullptr;  // a non-blocking stream of `device`, for the copies
  T* lower_ = nullptr;
};

}  // namespace tessera::detail

#endif
