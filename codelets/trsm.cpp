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

template <class T>
int trsm_can_execute(unsigned worker, starpu_task* task, unsigned implementation) {
  if (starpu_worker_get_type(static_cast<int>(worker)) != STARPU_CUDA_WORKER) return 1;
  return cuda_implementation_allowed(task_args<TrsmArgs<T>>(task->cl_arg).header, implementation, false);
}
#endif

template <class T>
starpu_codelet* trsm_codelet() {
  static starpu_perfmodel model = make_history_model(std::string("tessera_") + precision_letter<T>() + "trsm");
  static starpu_codelet codelet = make_codelet({
      "trsm", trsm_cpu<T>,
#ifdef TESSERA_HAVE_CUDA
      trsm_cuda_vendor<T>, nullptr, true, {STARPU_R, STARPU_RW}, trsm_can_execute<T>,
#else
      nullptr, nullptr, true, {STARPU_R, STARPU_RW}, nullptr,
#endif
      &model});
  return &codelet;
}

}  // namespace

template <class T>
void insert_trsm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 int priority) {
  TrsmArgs<T> args{};
  args.header.kind = TaskKind::trsm;
  args.side = side;
  args.trans = trans;
  args.alpha = alpha;
  submit(ctx, trsm_codelet<T>(), args, {{L.handle, STARPU_R}, {B.handle, STARPU_RW}}, priority, B, L.j);
}

template void insert_trsm<float>(const TaskContext&, Side, Trans, float, const TileRef&, const TileRef&, int);
template void insert_trsm<double>(const TaskContext&, Side, Trans, double, const TileRef&, const TileRef&, int);

}  // namespace tessera::detail
