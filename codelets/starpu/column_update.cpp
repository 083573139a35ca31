// column_update: one block column's share of a step's trailing update in the block-column
// Cholesky, as one task: C0 -= P0 P0^T on the diagonal tile (lower triangle), then Ci -= Pi P0^T
// below it, one call per stretch of tiles that lie contiguously in memory (in both the panel and
// the block column). CPU: OpenBLAS. CUDA: cuBLAS, or Tessera's syrk and gemm kernels.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

struct ColumnUpdateArgs {
  TaskHeader header;
  int tiles;  // in the panel's rows and in the block column: the buffers are panel[], column[]
};

// syrk(P0, C0), then gemm(rows, Pi, P0, Ci) per stretch of tiles contiguous in both columns.
template <class T, class Syrk, class Gemm>
void update_column(void* buffers[], int count, Syrk&& syrk, Gemm&& gemm) {
  const std::vector<TileView<T>> panel = tile_views<T>(buffers, 0, count);
  const std::vector<TileView<T>> column = tile_views<T>(buffers, count, count);
  syrk(panel[0], column[0]);
  // The panel's tiles must form one block too (same heights, a leading dimension of their own).
  const auto both_continue = [&](int t, int rows) {
    return continues_below(panel[t - 1], panel[t]) && static_cast<long long>(rows) + panel[t].rows <= panel[t].ld;
  };
  for (const auto& run : contiguous_runs(column, 1, both_continue))
    gemm(run[2], panel[run[0]], panel[0], column[run[0]]);
}

template <class T>
void column_update_cpu(void* buffers[], void* cl_arg) {
  const ColumnUpdateArgs& args = task_args<ColumnUpdateArgs>(cl_arg);
  run_task_body(args.header, "column update", [&] {
    update_column<T>(
        buffers, args.tiles,
        [](const TileView<T>& P, const TileView<T>& C) {
          kernels::cpu::syrk('L', Trans::no, C.rows, P.cols, T(-1), P.ptr, P.ld, T(1), C.ptr, C.ld);
        },
        [](int rows, const TileView<T>& A, const TileView<T>& B, const TileView<T>& C) {
          kernels::cpu::gemm(Trans::no, Trans::conjugate_transpose, rows, C.cols, A.cols, T(-1), A.ptr, A.ld, B.ptr,
                             B.ld, T(1), C.ptr, C.ld);
        });
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T, class Syrk, class Gemm>
void column_update_cuda(void* buffers[], void* cl_arg, const char* what, Syrk&& syrk, Gemm&& gemm) {
  const ColumnUpdateArgs& args = task_args<ColumnUpdateArgs>(cl_arg);
  run_task_body(args.header, what, [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const UrgentWork urgent = urgent_work(args.header, ctx);
    update_column<T>(
        buffers, args.tiles, [&](const TileView<T>& P, const TileView<T>& C) { syrk(ctx, P, C); },
        [&](int rows, const TileView<T>& A, const TileView<T>& B, const TileView<T>& C) { gemm(ctx, rows, A, B, C); });
  });
}

template <class T>
void column_update_cuda_vendor(void* buffers[], void* cl_arg) {
  column_update_cuda<T>(
      buffers, cl_arg, "column update (cuBLAS)",
      [](CudaWorkerContext& ctx, const TileView<T>& P, const TileView<T>& C) {
        kernels::cuda::vendor::syrk(ctx.cublas, 'L', Trans::no, C.rows, P.cols, T(-1), P.ptr, P.ld, T(1), C.ptr, C.ld);
      },
      [](CudaWorkerContext& ctx, int rows, const TileView<T>& A, const TileView<T>& B, const TileView<T>& C) {
        kernels::cuda::vendor::gemm(ctx.cublas, Trans::no, Trans::conjugate_transpose, rows, C.cols, A.cols, T(-1),
                                    A.ptr, A.ld, B.ptr, B.ld, T(1), C.ptr, C.ld);
      });
}

template <class T>
void column_update_cuda_custom(void* buffers[], void* cl_arg) {
  column_update_cuda<T>(
      buffers, cl_arg, "column update (Tessera CUDA)",
      [](CudaWorkerContext& ctx, const TileView<T>& P, const TileView<T>& C) {
        const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "syrk", C.rows);
        kernels::cuda::syrk_ln<T>(C.rows, P.cols, P.ptr, P.ld, C.ptr, C.ld, ctx.stream, cfg);
      },
      [](CudaWorkerContext& ctx, int rows, const TileView<T>& A, const TileView<T>& B, const TileView<T>& C) {
        const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "gemm", C.cols);
        kernels::cuda::gemm_nt<T>(rows, C.cols, A.cols, A.ptr, A.ld, B.ptr, B.ld, C.ptr, C.ld, ctx.stream, cfg);
      });
}

bool column_update_custom_supports(const ColumnUpdateArgs&) { return true; }
#endif

template <class T>
starpu_codelet* column_update_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"column_update", column_update_cpu<T>, TESSERA_IF_CUDA(column_update_cuda_vendor<T>),
       TESSERA_IF_CUDA(column_update_cuda_custom<T>), true, {},
       TESSERA_IF_CUDA((can_execute_with_kernel_choice<ColumnUpdateArgs, column_update_custom_supports, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_column_update(const TaskContext& ctx, const std::vector<TileRef>& panel, const std::vector<TileRef>& column,
                          const TaskHints& hints) {
  if (panel.size() != column.size() || panel.empty())
    throw std::logic_error("a column update needs as many panel tiles as block-column tiles");
  ColumnUpdateArgs args{};
  args.header.kind = TaskKind::gemm;
  args.tiles = static_cast<int>(column.size());
  std::vector<TaskBuffer> buffers;
  for (const TileRef& tile : panel) buffers.push_back({tile.handle, STARPU_R});
  for (const TileRef& tile : column) buffers.push_back({tile.handle, STARPU_RW});
  submit(ctx, column_update_codelet<T>(), args, buffers.data(), buffers.size(), hints, column.front(),
         panel.front().j);
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void insert_column_update<T>(const TaskContext&, const std::vector<TileRef>&, const std::vector<TileRef>&, \
                                        const TaskHints&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
