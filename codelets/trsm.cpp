// trsm: triangular solve with a lower tile. The factorization's panel solve is B := B L^{-T}
// (right, transposed); the solves use the left-side forms. CPU: OpenBLAS. CUDA: cuBLAS, and
// Tessera's kernel for the panel form.
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
struct TrsmArgs {
  TaskHeader header;
  Side side;
  Trans trans;
  T alpha;
};

template <class T>
void trsm_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<TrsmArgs<T>>(cl_arg);
  run_task_body(args.header, "trsm", [&] {
    const TileView<T> L = tile_view<T>(buffers[0]);
    const TileView<T> B = tile_view<T>(buffers[1]);
    kernels::cpu::trsm(args.side == Side::left, args.trans == Trans::yes, B.rows, B.cols, args.alpha, L.ptr, L.ld,
                       B.ptr, B.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void trsm_cuda_vendor(void* buffers[], void* cl_arg) {
  const auto& args = task_args<TrsmArgs<T>>(cl_arg);
  run_task_body(args.header, "trsm (cuBLAS)", [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const TileView<T> L = tile_view<T>(buffers[0]);
    const TileView<T> B = tile_view<T>(buffers[1]);
    kernels::cuda::vendor::trsm(ctx.cublas, args.side == Side::left, args.trans == Trans::yes, B.rows, B.cols,
                                args.alpha, L.ptr, L.ld, B.ptr, B.ld);
  });
}

// Tessera's kernel solves the factorization's panel form, B := B L^{-T}.
template <class T>
bool trsm_custom_supports(const TrsmArgs<T>& args) {
  return args.side == Side::right && args.trans == Trans::yes && args.alpha == T(1);
}

template <class T>
void trsm_cuda_custom(void* buffers[], void* cl_arg) {
  const auto& args = task_args<TrsmArgs<T>>(cl_arg);
  run_task_body(args.header, "trsm (Tessera CUDA)", [&] {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const TileView<T> L = tile_view<T>(buffers[0]);
    const TileView<T> B = tile_view<T>(buffers[1]);
    const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_letter<T>(), "trsm", B.cols);
    const std::size_t bytes = kernels::cuda::trsm_rlt_workspace_bytes<T>(B.rows, B.cols, cfg);
    void* work = bytes > 0 ? ctx.workspace_of(bytes) : nullptr;
    kernels::cuda::trsm_rlt<T>(B.rows, B.cols, L.ptr, L.ld, B.ptr, B.ld, work, bytes, ctx.stream, cfg);
  });
}
#endif

template <class T>
starpu_codelet* trsm_codelet() {
  static starpu_perfmodel model = make_history_model(std::string("tessera_") + precision_letter<T>() + "trsm");
  static starpu_codelet codelet = make_codelet({
      "trsm", trsm_cpu<T>,
#ifdef TESSERA_HAVE_CUDA
      trsm_cuda_vendor<T>, trsm_cuda_custom<T>, true, {STARPU_R, STARPU_RW},
      can_execute_with_kernel_choice<TrsmArgs<T>, trsm_custom_supports<T>>,
#else
      nullptr, nullptr, true, {STARPU_R, STARPU_RW}, nullptr,
#endif
      &model});
  return &codelet;
}

}  // namespace

template <class T>
void insert_trsm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 const TaskHints& hints) {
  TrsmArgs<T> args{};
  args.header.kind = TaskKind::trsm;
  args.side = side;
  args.trans = trans;
  args.alpha = alpha;
  submit(ctx, trsm_codelet<T>(), args, {{L.handle, STARPU_R}, {B.handle, STARPU_RW}}, hints, B, L.j);
}

template void insert_trsm<float>(const TaskContext&, Side, Trans, float, const TileRef&, const TileRef&, const TaskHints&);
template void insert_trsm<double>(const TaskContext&, Side, Trans, double, const TileRef&, const TileRef&, const TaskHints&);

}  // namespace tessera::detail
