// The diagonal tile's factorization on a CUDA worker, shared by the potrf and panel codelets:
// cuSOLVER's potrf or Tessera's potf2, on the worker's current stream, with LAPACK's info written
// to ctx.device_info (read back by device_potrf_info).
#pragma once

#ifdef TESSERA_HAVE_CUDA
#include "codelet_support.hpp"
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"

namespace tessera::detail {

template <class T>
void factor_diagonal_vendor(CudaWorkerContext& ctx, const TileView<T>& A) {
  const int lwork = kernels::cuda::vendor::potrf_workspace(ctx.cusolver, A.rows, A.ptr, A.ld);
  T* work = static_cast<T*>(ctx.workspace_of(sizeof(T) * static_cast<std::size_t>(lwork)));
  kernels::cuda::vendor::potrf(ctx.cusolver, A.rows, A.ptr, A.ld, work, lwork, ctx.device_info);
}

template <class T>
void factor_diagonal_custom(CudaWorkerContext& ctx, const TileView<T>& A) {
  const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_letter<T>(), "potf2", A.rows);
  const std::size_t bytes = kernels::cuda::potf2_workspace_bytes<T>(A.rows, cfg);
  void* work = bytes > 0 ? ctx.workspace_of(bytes) : nullptr;
  kernels::cuda::potf2<T>(A.rows, A.ptr, A.ld, ctx.device_info, work, bytes, ctx.stream, cfg);
}

}  // namespace tessera::detail
#endif
