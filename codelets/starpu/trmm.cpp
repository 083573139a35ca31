// trmm: B := alpha op(L) B or alpha B op(L) with a triangular tile (lower, or upper when stored
// transposed; the forms are trsm's), the inverse's triangle product. CPU: OpenBLAS. CUDA: cuBLAS.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

template <class T>
struct TrmmArgs {
  TaskHeader header;
  Side side;
  Uplo uplo;
  Trans trans;
  T alpha;
};

template <class T>
void trmm_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<TrmmArgs<T>, T, 2>(buffers, cl_arg, "trmm", [](const TrmmArgs<T>& args, TileView<T> L, TileView<T> B) {
    kernels::cpu::trmm(args.side == Side::left, uplo_letter(args.uplo), args.trans, B.rows, B.cols, args.alpha, L.ptr,
                       L.ld, B.ptr, B.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void trmm_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TrmmArgs<T>, T, 2>(buffers, cl_arg, "trmm (cuBLAS)",
                                        [](const TrmmArgs<T>& args, CudaWorkerContext& ctx, TileView<T> L, TileView<T> B) {
    kernels::cuda::vendor::trmm(ctx.cublas, args.side == Side::left, uplo_letter(args.uplo), args.trans, B.rows, B.cols,
                                args.alpha, L.ptr, L.ld, B.ptr, B.ld);
  });
}
#endif

template <class T>
starpu_codelet* trmm_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"trmm", trmm_cpu<T>, TESSERA_IF_CUDA(trmm_cuda_vendor<T>), nullptr, true, {STARPU_R, STARPU_RW},
       TESSERA_IF_CUDA((can_execute_with_kernel_choice<TrmmArgs<T>, no_custom_kernel<TrmmArgs<T>>, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_trmm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 const TaskHints& hints) {
  TrmmArgs<T> args{};
  args.header.kind = TaskKind::trsm;
  const TrsmForm form = trsm_form(side, trans, L, B);  // (op(L) B)^T = B^T op(L)^T, as for a solve
  args.side = form.side;
  args.uplo = form.uplo;
  args.trans = form.trans;
  args.alpha = alpha;
  submit(ctx, trmm_codelet<T>(), args, {{L.handle, STARPU_R}, {B.handle, STARPU_RW}}, hints, B, L.j);
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void insert_trmm<T>(const TaskContext&, Side, Trans, T, const TileRef&, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
