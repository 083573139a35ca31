// syrk: C := alpha A A^T + beta C on the lower triangle of a diagonal tile (the trailing update).
// CPU: OpenBLAS. CUDA: cuBLAS, and Tessera's kernel for C -= A A^T.
#include <string>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

template <class T>
struct SyrkArgs {
  TaskHeader header;
  T alpha;
  T beta;
};

template <class T>
void syrk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<SyrkArgs<T>>(cl_arg);
  run_task_body(args.header, "syrk", [&] {
    const TileView<T> A = tile_view<T>(buffers[0]);
    const TileView<T> C = tile_view<T>(buffers[1]);
    kernels::cpu::syrk(C.rows, A.cols, args.alpha, A.ptr, A.ld, args.beta, C.ptr, C.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void syrk_cuda_vendor(void* buffers[], void* cl_arg) {
  const auto& args = task_args<SyrkArgs<T>>(cl_arg);
  run_task_body(args.header, "syrk (cuBLAS)", [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const TileView<T> A = tile_view<T>(buffers[0]);
    const TileView<T> C = tile_view<T>(buffers[1]);
    kernels::cuda::vendor::syrk(ctx.cublas, C.rows, A.cols, args.alpha, A.ptr, A.ld, args.beta, C.ptr, C.ld);
  });
}

// Tessera's kernel does the trailing update's form, C -= A A^T.
template <class T>
bool syrk_custom_supports(const SyrkArgs<T>& args) {
  return args.alpha == T(-1) && args.beta == T(1);
}

template <class T>
void syrk_cuda_custom(void* buffers[], void* cl_arg) {
  const auto& args = task_args<SyrkArgs<T>>(cl_arg);
  run_task_body(args.header, "syrk (Tessera CUDA)", [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const TileView<T> A = tile_view<T>(buffers[0]);
    const TileView<T> C = tile_view<T>(buffers[1]);
    const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_letter<T>(), "syrk", C.rows);
    kernels::cuda::syrk_ln<T>(C.rows, A.cols, A.ptr, A.ld, C.ptr, C.ld, ctx.stream, cfg);
  });
}
#endif

template <class T>
starpu_codelet* syrk_codelet() {
  static starpu_perfmodel model = make_history_model(std::string("tessera_") + precision_letter<T>() + "syrk");
  static starpu_codelet codelet = make_codelet({
      "syrk", syrk_cpu<T>,
#ifdef TESSERA_HAVE_CUDA
      syrk_cuda_vendor<T>, syrk_cuda_custom<T>, true, {STARPU_R, STARPU_RW},
      can_execute_with_kernel_choice<SyrkArgs<T>, syrk_custom_supports<T>>,
#else
      nullptr, nullptr, true, {STARPU_R, STARPU_RW}, nullptr,
#endif
      &model});
  return &codelet;
}

}  // namespace

template <class T>
void insert_syrk(const TaskContext& ctx, T alpha, const TileRef& A, T beta, const TileRef& C, const TaskHints& hints) {
  SyrkArgs<T> args{};
  args.header.kind = TaskKind::syrk;
  args.alpha = alpha;
  args.beta = beta;
  submit(ctx, syrk_codelet<T>(), args, {{A.handle, STARPU_R}, {C.handle, STARPU_RW}}, hints, C, A.j);
}

template void insert_syrk<float>(const TaskContext&, float, const TileRef&, float, const TileRef&, const TaskHints&);
template void insert_syrk<double>(const TaskContext&, double, const TileRef&, double, const TileRef&, const TaskHints&);

}  // namespace tessera::detail
