// potrf: Cholesky of a diagonal tile (its lower triangle, or its upper one when the tile is stored
// transposed). CPU: LAPACKE. CUDA: cuSOLVER, and Tessera's fused potf2 kernel, both on a lower
// tile (diagonal_factor.hpp). Info from either device lands in the submission with the tile's
// global column.
#include <stdexcept>
#include <string>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"

#include "diagonal_factor.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

struct PotrfArgs {
  TaskHeader header;
  int first_col;  // global 0-based column of the tile
  Uplo uplo;
};

void report_info(const PotrfArgs& args, int info) {
  if (info > 0) args.header.submission->record_not_positive_definite(args.first_col + info);
  if (info < 0) throw std::logic_error("potrf kernel rejected argument " + std::to_string(-info));
}

template <class T>
void potrf_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<PotrfArgs, T, 1>(buffers, cl_arg, "potrf", [](const PotrfArgs& args, TileView<T> A) {
    report_info(args, kernels::cpu::potrf(uplo_letter(args.uplo), A.rows, A.ptr, A.ld));
  });
}

#ifdef TESSERA_HAVE_CUDA
// The CUDA implementations are synchronous: the info (and the diagonal that checks it) is read
// back before the task ends, so that every task depending on this tile already sees a failure and
// skips its work.
template <class T>
void report_device_info(const PotrfArgs& args, const TileView<T>& A, CudaWorkerContext& ctx) {
  report_info(args, device_potrf_info(A, ctx));
}

// LAPACK on the host where the request's input held a NaN or an infinity (factor_on_host).
template <class T, class Factor>
void factor_tile(const PotrfArgs& args, CudaWorkerContext& ctx, const TileView<T>& A, Factor&& factor) {
  if (factor_on_host_for(args.header)) {
    report_info(args, factor_on_host(ctx, uplo_letter(args.uplo), A));
    return;
  }
  factor(ctx, A, args.uplo);
  report_device_info(args, A, ctx);
}

template <class T>
void potrf_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<PotrfArgs, T, 1>(buffers, cl_arg, "potrf (cuSOLVER)",
                                     [](const PotrfArgs& args, CudaWorkerContext& ctx, TileView<T> A) {
    factor_tile(args, ctx, A, factor_diagonal_vendor<T>);
  });
}

template <class T>
void potrf_cuda_custom(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<PotrfArgs, T, 1>(buffers, cl_arg, "potrf (Tessera CUDA)",
                                     [](const PotrfArgs& args, CudaWorkerContext& ctx, TileView<T> A) {
    factor_tile(args, ctx, A, factor_diagonal_custom<T>);
  });
}

bool potrf_custom_supports(const PotrfArgs&) { return true; }
#endif

template <class T>
starpu_codelet* potrf_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(with_custom_kernel<T, PotrfArgs>(
      {"potrf", potrf_cpu<T>, TESSERA_IF_CUDA(potrf_cuda_vendor<T>), nullptr, false, {STARPU_RW}},
      TESSERA_IF_CUDA(([](auto real) {
        using R = typename decltype(real)::type;
        return CustomKernel{potrf_cuda_custom<R>, can_execute_with_kernel_choice<PotrfArgs, potrf_custom_supports>};
      }))));
  return &codelet;
}

}  // namespace

template <class T>
void insert_potrf(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  PotrfArgs args{};
  args.header.kind = TaskKind::potrf;
  args.first_col = A.col0;
  args.uplo = diagonal_form(A);
  submit(ctx, potrf_codelet<T>(), args, {{A.handle, STARPU_RW}}, hints, A, A.j);
}

#define TESSERA_INSTANTIATE(T) template void insert_potrf<T>(const TaskContext&, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
