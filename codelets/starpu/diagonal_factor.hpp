// The diagonal tile's factorization on a CUDA worker, shared by the potrf and panel codelets:
// cuSOLVER's potrf or Tessera's potf2, on the worker's current stream, with LAPACK's info written
// to ctx.device_info (read back by device_potrf_info).
#pragma once

#ifdef TESSERA_HAVE_CUDA
#include <cstddef>

#include "codelet_support.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"

namespace tessera::detail {

// One way of factoring a lower tile (cuSOLVER's also an upper one): the workspace it needs, and
// the factorization on it.
template <class T>
struct VendorDiagonalFactor {
  static std::size_t bytes(CudaWorkerContext& ctx, const TileView<T>& A, char uplo = 'L') {
    return sizeof(T) * static_cast<std::size_t>(kernels::cuda::vendor::potrf_workspace(ctx.cusolver, uplo, A.rows, A.ptr, A.ld));
  }
  static void factor(CudaWorkerContext& ctx, const TileView<T>& A, void* work, std::size_t bytes, char uplo = 'L') {
    kernels::cuda::vendor::potrf(ctx.cusolver, uplo, A.rows, A.ptr, A.ld, static_cast<T*>(work),
                                 static_cast<int>(bytes / sizeof(T)), ctx.device_info);
  }
};

template <class T>
struct CustomDiagonalFactor {
  static kernels::cuda::TileKernelConfig config(CudaWorkerContext& ctx, const TileView<T>& A) {
    return ctx.tile_config(precision_of<T>(), "potf2", A.rows);
  }
  static std::size_t bytes(CudaWorkerContext& ctx, const TileView<T>& A) {
    return kernels::cuda::potf2_workspace_bytes<T>(A.rows, config(ctx, A));
  }
  static void factor(CudaWorkerContext& ctx, const TileView<T>& A, void* work, std::size_t bytes) {
    kernels::cuda::potf2<T>(A.rows, A.ptr, A.ld, ctx.device_info, bytes > 0 ? work : nullptr, bytes, ctx.stream,
                            config(ctx, A));
  }
};

// The factorization of a diagonal tile whose triangle `uplo` holds the matrix. A transposed tile
// (upper) is factored as a lower one in the worker's workspace, its upper triangle transposed in
// and the factor's lower triangle transposed back: two memory-bound copies of the tile instead of
// cuSOLVER's upper potrf, much slower than its lower one (bench_tile_kernels --ops forms measures
// both; docs/user-guide.md, section "GPUs", has the H100's ratio), and the tile's strict lower
// triangle (the caller's, not referenced) is never written.
template <class Factor, class T>
void factor_diagonal(CudaWorkerContext& ctx, const TileView<T>& A, Uplo uplo) {
  if (uplo == Uplo::lower) {
    const std::size_t bytes = Factor::bytes(ctx, A);
    Factor::factor(ctx, A, bytes > 0 ? ctx.workspace_of(bytes) : nullptr, bytes);
    return;
  }
  const int n = A.rows;
  const std::size_t tile_bytes = workspace_slice_bytes(sizeof(T) * static_cast<std::size_t>(n) * n);
  const TileView<T> sized{A.ptr, n, n, n};  // the workspace's shape, for the factor's own bytes
  const std::size_t bytes = Factor::bytes(ctx, sized);
  auto* work = static_cast<unsigned char*>(ctx.workspace_of(tile_bytes + bytes));
  const TileView<T> L{reinterpret_cast<T*>(work), n, n, n};
  namespace k = kernels::cuda;
  k::transpose_triangle(k::Triangle::lower, n, A.ptr, A.ld, L.ptr, L.ld, ctx.stream);
  Factor::factor(ctx, L, work + tile_bytes, bytes);
  k::transpose_triangle(k::Triangle::upper, n, L.ptr, L.ld, A.ptr, A.ld, ctx.stream);
}

// A complex tile is factored by cuSOLVER in its own triangle: the transposed copies (Tessera's
// kernels) take real scalars.
template <class T>
void factor_diagonal_vendor(CudaWorkerContext& ctx, const TileView<T>& A, Uplo uplo) {
  if constexpr (kIsComplex<T>) {
    const char letter = uplo == Uplo::upper ? 'U' : 'L';
    const std::size_t bytes = VendorDiagonalFactor<T>::bytes(ctx, A, letter);
    VendorDiagonalFactor<T>::factor(ctx, A, bytes > 0 ? ctx.workspace_of(bytes) : nullptr, bytes, letter);
  } else {
    factor_diagonal<VendorDiagonalFactor<T>>(ctx, A, uplo);
  }
}

template <class T>
void factor_diagonal_custom(CudaWorkerContext& ctx, const TileView<T>& A, Uplo uplo) {
  factor_diagonal<CustomDiagonalFactor<T>>(ctx, A, uplo);
}

}  // namespace tessera::detail
#endif
