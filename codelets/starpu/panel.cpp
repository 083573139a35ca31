// panel: one step's panel of the block-column Cholesky, as one task: the diagonal tile's potrf,
// then the solves of the tiles below it (B := B L^{-T}), one call per stretch of tiles that lie
// contiguously in memory. CPU: LAPACKE and OpenBLAS. CUDA: cuSOLVER and cuBLAS, or Tessera's potf2
// and trsm kernels.
#include <stdexcept>
#include <string>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"

#include "diagonal_factor.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

struct PanelArgs {
  TaskHeader header;
  int first_col;  // global 0-based column of the panel
  int tiles;      // the diagonal tile and the tiles below it
};

// Records info > 0 as the global column; true when the factorization of the diagonal tile held.
bool record_info(const PanelArgs& args, int info) {
  if (info < 0) throw std::logic_error("potrf kernel rejected argument " + std::to_string(-info));
  if (info > 0) args.header.submission->record_not_positive_definite(args.first_col + info);
  return info == 0;
}

// solve(rows, B) on each stretch of contiguous tiles below the diagonal one.
template <class T, class Solve>
void solve_below(const std::vector<TileView<T>>& tiles, Solve&& solve) {
  for (const auto& run : contiguous_runs(tiles, 1, [](int, int) { return true; })) solve(run[2], tiles[run[0]]);
}

template <class T>
void panel_cpu(void* buffers[], void* cl_arg) {
  const PanelArgs& args = task_args<PanelArgs>(cl_arg);
  run_task_body(args.header, "panel", [&] {
    const std::vector<TileView<T>> tiles = tile_views<T>(buffers, 0, args.tiles);
    const TileView<T>& L = tiles[0];
    if (!record_info(args, kernels::cpu::potrf('L', L.rows, L.ptr, L.ld))) return;
    solve_below(tiles, [&](int rows, const TileView<T>& B) {
      kernels::cpu::trsm(false, 'L', Trans::conjugate_transpose, rows, B.cols, T(1), L.ptr, L.ld, B.ptr, B.ld);
    });
  });
}

#ifdef TESSERA_HAVE_CUDA
// The solves are queued behind the potrf before its info is read back (one wait per panel): after
// a failure they compute values nobody reads, since the tasks after this one skip their work.
template <class T, class Factor, class Solve>
void panel_cuda(void* buffers[], void* cl_arg, const char* what, Factor&& factor, Solve&& solve) {
  const PanelArgs& args = task_args<PanelArgs>(cl_arg);
  run_task_body(args.header, what, [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const UrgentWork urgent = urgent_work(args.header, ctx);
    const std::vector<TileView<T>> tiles = tile_views<T>(buffers, 0, args.tiles);
    if (factor_on_host_for(args.header)) {  // LAPACK for an input that held a NaN or an infinity
      if (!record_info(args, factor_on_host(ctx, 'L', tiles[0]))) return;
      solve_below(tiles, [&](int rows, const TileView<T>& B) { solve(ctx, tiles[0], rows, B); });
      return;
    }
    factor(ctx, tiles[0]);
    solve_below(tiles, [&](int rows, const TileView<T>& B) { solve(ctx, tiles[0], rows, B); });
    record_info(args, device_potrf_info(tiles[0], ctx));
  });
}

template <class T>
void panel_cuda_vendor(void* buffers[], void* cl_arg) {
  panel_cuda<T>(
      buffers, cl_arg, "panel (cuSOLVER, cuBLAS)",
      [](CudaWorkerContext& ctx, const TileView<T>& L) { factor_diagonal_vendor(ctx, L, Uplo::lower); },
      [](CudaWorkerContext& ctx, const TileView<T>& L, int rows, const TileView<T>& B) {
        kernels::cuda::vendor::trsm(ctx.cublas, false, 'L', Trans::conjugate_transpose, rows, B.cols, T(1), L.ptr, L.ld, B.ptr, B.ld);
      });
}

template <class T>
void panel_cuda_custom(void* buffers[], void* cl_arg) {
  panel_cuda<T>(
      buffers, cl_arg, "panel (Tessera CUDA)",
      [](CudaWorkerContext& ctx, const TileView<T>& L) { factor_diagonal_custom(ctx, L, Uplo::lower); },
      [](CudaWorkerContext& ctx, const TileView<T>& L, int rows, const TileView<T>& B) {
        const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "trsm", B.cols);
        const std::size_t bytes = kernels::cuda::trsm_rlt_workspace_bytes<T>(rows, B.cols, cfg);
        void* work = bytes > 0 ? ctx.workspace_of(bytes) : nullptr;
        kernels::cuda::trsm_rlt<T>(rows, B.cols, L.ptr, L.ld, B.ptr, B.ld, work, bytes, ctx.stream, cfg);
      });
}

bool panel_custom_supports(const PanelArgs&) { return true; }
#endif

template <class T>
starpu_codelet* panel_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"panel", panel_cpu<T>, TESSERA_IF_CUDA(panel_cuda_vendor<T>), TESSERA_IF_CUDA(panel_cuda_custom<T>), false,
       {}, TESSERA_IF_CUDA((can_execute_with_kernel_choice<PanelArgs, panel_custom_supports, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_panel(const TaskContext& ctx, const std::vector<TileRef>& column, const TaskHints& hints) {
  PanelArgs args{};
  args.header.kind = TaskKind::potrf;
  args.first_col = column.front().col0;
  args.tiles = static_cast<int>(column.size());
  std::vector<TaskBuffer> buffers;
  for (const TileRef& tile : column) buffers.push_back({tile.handle, STARPU_RW});
  submit(ctx, panel_codelet<T>(), args, buffers.data(), buffers.size(), hints, column.front(), column.front().j);
}

#define TESSERA_INSTANTIATE(T)                                                                      \
  template void insert_panel<T>(const TaskContext&, const std::vector<TileRef>&, const TaskHints&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
