// lauum: L^T L on a diagonal tile's lower triangle (U U^T on the upper one when stored
// transposed), the last task of each step of the inverse's triangle product. CPU: LAPACKE.
// CUDA: cuSOLVER.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

struct LauumArgs {
  TaskHeader header;
  Uplo uplo;
};

template <class T>
void lauum_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<LauumArgs, T, 1>(buffers, cl_arg, "lauum", [](const LauumArgs& args, TileView<T> A) {
    kernels::cpu::lauum(uplo_letter(args.uplo), A.rows, A.ptr, A.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void lauum_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<LauumArgs, T, 1>(buffers, cl_arg, "lauum (cuSOLVER)",
                                     [](const LauumArgs& args, CudaWorkerContext& ctx, TileView<T> A) {
    namespace vendor = kernels::cuda::vendor;
    const char uplo = uplo_letter(args.uplo);
    const int lwork = vendor::lauum_workspace(ctx.cusolver, uplo, A.rows, A.ptr, A.ld);
    T* work = static_cast<T*>(ctx.workspace_of(sizeof(T) * static_cast<std::size_t>(lwork > 0 ? lwork : 1)));
    // xlauum's info is an argument check only: the arguments here are valid.
    vendor::lauum(ctx.cusolver, uplo, A.rows, A.ptr, A.ld, work, lwork, ctx.device_info);
  });
}
#endif

template <class T>
starpu_codelet* lauum_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"lauum", lauum_cpu<T>, TESSERA_IF_CUDA(lauum_cuda_vendor<T>), nullptr, true, {STARPU_RW},
       TESSERA_IF_CUDA((can_execute_with_kernel_choice<LauumArgs, no_custom_kernel<LauumArgs>, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_lauum(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  LauumArgs args{};
  args.header.kind = TaskKind::potrf;
  args.uplo = diagonal_form(A);
  submit(ctx, lauum_codelet<T>(), args, {{A.handle, STARPU_RW}}, hints, A, A.j);
}

#define TESSERA_INSTANTIATE(T) template void insert_lauum<T>(const TaskContext&, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
