// trtri: the inverse of a diagonal tile's triangle (lower, or upper when stored transposed), the
// last task of each step of a triangular inverse. The operations check the factor's diagonal for
// zeros before inserting any task (LAPACK's xPOTRI fails there without changing anything), and
// the tasks before a diagonal tile's trtri do not write it: its info is always 0 here.
#include <stdexcept>
#include <string>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <vector>

#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

struct TrtriArgs {
  TaskHeader header;
  Uplo uplo;
};

template <class T>
void trtri_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<TrtriArgs, T, 1>(buffers, cl_arg, "trtri", [](const TrtriArgs& args, TileView<T> A) {
    const int info = kernels::cpu::trtri(uplo_letter(args.uplo), A.rows, A.ptr, A.ld);
    if (info != 0) throw std::logic_error("trtri of a checked diagonal tile returned info " + std::to_string(info));
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void trtri_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TrtriArgs, T, 1>(buffers, cl_arg, "trtri (cuSOLVER)",
                                     [](const TrtriArgs& args, CudaWorkerContext& ctx, TileView<T> A) {
    namespace vendor = kernels::cuda::vendor;
    const char uplo = uplo_letter(args.uplo);
    std::size_t device_bytes = 0, host_bytes = 0;
    vendor::trtri_workspace(ctx.cusolver, uplo, A.rows, A.ptr, A.ld, &device_bytes, &host_bytes);
    std::vector<unsigned char> host_work(host_bytes);
    vendor::trtri(ctx.cusolver, uplo, A.rows, A.ptr, A.ld, device_bytes > 0 ? ctx.workspace_of(device_bytes) : nullptr,
                  device_bytes, host_bytes > 0 ? host_work.data() : nullptr, host_bytes, ctx.device_info);
    // cuSOLVER may still read its host workspace once the call has returned.
    if (host_bytes > 0) TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  });
}
#endif

template <class T>
starpu_codelet* trtri_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"trtri", trtri_cpu<T>, TESSERA_IF_CUDA(trtri_cuda_vendor<T>), nullptr, true, {STARPU_RW},
       TESSERA_IF_CUDA((can_execute_with_kernel_choice<TrtriArgs, no_custom_kernel<TrtriArgs>, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_trtri(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  TrtriArgs args{};
  args.header.kind = TaskKind::potrf;
  args.uplo = diagonal_form(A);
  submit(ctx, trtri_codelet<T>(), args, {{A.handle, STARPU_RW}}, hints, A, A.j);
}

#define TESSERA_INSTANTIATE(T) template void insert_trtri<T>(const TaskContext&, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
