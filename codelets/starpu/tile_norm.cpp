// tile_norm: a tile's Frobenius norm into host memory, from which an adaptive-precision
// factorization chooses each tile's arithmetic; on a GPU (the kernel and a read-back of the one
// value) where the mode lets one take it.
#include "codelet_support.hpp"
#include "kernels/cpu/reduced_precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/reduced_precision.hpp"
#endif

namespace tessera::detail {

namespace {

struct TileNormArgs {
  TaskHeader header;
  kernels::TilePart part;
  double* norm;
};

void tile_norm_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<TileNormArgs, double, 1>(
      buffers, cl_arg, "tile_norm",
      [](const TileNormArgs& args, TileView<double> tile) {
        *args.norm = kernels::cpu::frobenius_norm(args.part, tile.rows, tile.cols, tile.ptr, tile.ld);
      },
      /*even_after_failure=*/true);
}

#ifdef TESSERA_HAVE_CUDA
void tile_norm_cuda(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TileNormArgs, double, 1>(
      buffers, cl_arg, "tile_norm (CUDA)", [](const TileNormArgs& args, CudaWorkerContext& ctx, TileView<double> tile) {
        const std::size_t bytes = kernels::cuda::frobenius_norm_workspace_bytes(tile.cols);
        auto* workspace = static_cast<double*>(ctx.workspace_of(bytes + sizeof(double)));
        double* norm = workspace + bytes / sizeof(double);
        kernels::cuda::frobenius_norm(args.part, tile.rows, tile.cols, tile.ptr, tile.ld, workspace, norm, ctx.stream);
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(args.norm, norm, sizeof(double), cudaMemcpyDeviceToHost, ctx.stream));
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      });
}
#endif

starpu_codelet* tile_norm_codelet() {
  static starpu_codelet codelet =
      make_tile_codelet<double>({"tile_norm", tile_norm_cpu, TESSERA_IF_CUDA(tile_norm_cuda), nullptr, false, {STARPU_R}});
  return &codelet;
}

}  // namespace

void insert_tile_norm(const TaskContext& ctx, const TileRef& tile, bool diagonal, double* norm, const TaskHints& hints) {
  TileNormArgs args{};
  args.header.kind = TaskKind::other;
  // A transposed diagonal tile holds the upper triangle, as stored.
  args.part = !diagonal        ? kernels::TilePart::whole
              : tile.transposed ? kernels::TilePart::upper_symmetric
                                : kernels::TilePart::lower_symmetric;
  args.norm = norm;
  submit(ctx, tile_norm_codelet(), args, {{tile.handle, STARPU_R}}, hints, tile, 0);
}

}  // namespace tessera::detail
