// trsm: triangular solve with a triangular tile (lower, or upper when stored transposed). The
// factorization's panel solve is B := B L^{-T} (right, transposed); the solves use the left-side
// forms. CPU: OpenBLAS. CUDA: cuBLAS, and Tessera's kernel for the panel form: on lower tiles, and
// on transposed ones through copies transposed into the worker's workspace.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/matrix_utils.hpp"
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"
#include "tensor_core_support.hpp"
#endif

namespace tessera::detail {

namespace {

template <class T>
struct TrsmArgs {
  TaskHeader header;
  Side side;
  Uplo uplo;
  Trans trans;
  T alpha;
};

template <class T>
void trsm_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<TrsmArgs<T>, T, 2>(buffers, cl_arg, "trsm", [](const TrsmArgs<T>& args, TileView<T> L, TileView<T> B) {
    kernels::cpu::trsm(args.side == Side::left, uplo_letter(args.uplo), args.trans, B.rows, B.cols, args.alpha, L.ptr, L.ld,
                       B.ptr, B.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void trsm_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TrsmArgs<T>, T, 2>(buffers, cl_arg, "trsm (cuBLAS)",
                                        [](const TrsmArgs<T>& args, CudaWorkerContext& ctx, TileView<T> L, TileView<T> B) {
    kernels::cuda::vendor::trsm(ctx.cublas, args.side == Side::left, uplo_letter(args.uplo), args.trans, B.rows, B.cols,
                                args.alpha, L.ptr, L.ld, B.ptr, B.ld);
  });
}

// Tessera's kernel solves the factorization's panel form, B := B L^{-T}. The same form on
// transposed tiles (an upper-stored matrix) is C := U^{-T} C with U = L^T and C = B^T.
template <class T>
bool is_panel_form(const TrsmArgs<T>& args) {
  return args.side == Side::right && args.uplo == Uplo::lower && args.trans != Trans::no;
}
template <class T>
bool is_transposed_panel_form(const TrsmArgs<T>& args) {
  return args.side == Side::left && args.uplo == Uplo::upper && args.trans != Trans::no;
}
template <class T>
bool trsm_custom_supports(const TrsmArgs<T>& args) {
  return args.alpha == T(1) && (is_panel_form(args) || is_transposed_panel_form(args));
}

// FP32 tiles with their products on the tensor cores in TF32 (every TensorCores but off, where a
// factorization's panel solves do not go by the diagonal factor's inverse): the panel form by
// solve_panel_tf32, the others by cuBLAS's trsm under TF32 math mode.
void trsm_cuda_tf32(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TrsmArgs<float>, float, 2>(
      buffers, cl_arg, "trsm (TF32)",
      [](const TrsmArgs<float>& args, CudaWorkerContext& ctx, TileView<float> L, TileView<float> B) {
        if (is_panel_form(args) && args.alpha == 1.0f) {
          solve_panel_tf32(ctx, B.rows, B.cols, L.ptr, L.ld, B.ptr, B.ld);
          return;
        }
        kernels::cuda::vendor::trsm_tf32(ctx.cublas, args.side == Side::left, uplo_letter(args.uplo), args.trans,
                                         B.rows, B.cols, args.alpha, L.ptr, L.ld, B.ptr, B.ld);
      });
}

// C := U^{-T} C (C k x m, U k x k upper) as X := X L^{-T} with X = C^T and L = U^T, both copied
// transposed into the worker's workspace, and X copied back transposed: two passes over C and one
// over U, against cuBLAS's left upper solve, which takes longer than Tessera's kernel at every tile
// size (docs/user-guide.md, section "GPUs").
template <class T>
void solve_transposed_panel_form(CudaWorkerContext& ctx, const TileView<T>& U, const TileView<T>& C) {
  namespace k = kernels::cuda;
  const int kb = C.rows, m = C.cols;
  const std::size_t x_bytes = workspace_slice_bytes(sizeof(T) * static_cast<std::size_t>(m) * kb);
  const std::size_t l_bytes = workspace_slice_bytes(sizeof(T) * static_cast<std::size_t>(kb) * kb);
  // One workspace for X, L and the kernel's own (growing it may move it).
  const k::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "trsm", kb);
  const std::size_t kernel_bytes = k::trsm_rlt_workspace_bytes<T>(m, kb, cfg);
  auto* work = static_cast<unsigned char*>(ctx.workspace_of(x_bytes + l_bytes + kernel_bytes));
  T* X = reinterpret_cast<T*>(work);
  T* L = reinterpret_cast<T*>(work + x_bytes);
  k::transpose_triangle(k::Triangle::lower, kb, U.ptr, U.ld, L, kb, ctx.stream);
  k::vendor::transpose(ctx.cublas, m, kb, C.ptr, C.ld, X, m);
  k::trsm_rlt<T>(m, kb, L, kb, X, m, kernel_bytes > 0 ? work + x_bytes + l_bytes : nullptr, kernel_bytes, ctx.stream,
                 cfg);
  k::vendor::transpose(ctx.cublas, kb, m, X, m, C.ptr, C.ld);
}

template <class T>
void trsm_cuda_custom(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<TrsmArgs<T>, T, 2>(buffers, cl_arg, "trsm (Tessera CUDA)",
                                        [](const TrsmArgs<T>& args, CudaWorkerContext& ctx, TileView<T> L, TileView<T> B) {
    if (is_transposed_panel_form(args)) {
      solve_transposed_panel_form(ctx, L, B);
      return;
    }
    const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "trsm", B.cols);
    const std::size_t bytes = kernels::cuda::trsm_rlt_workspace_bytes<T>(B.rows, B.cols, cfg);
    void* work = bytes > 0 ? ctx.workspace_of(bytes) : nullptr;
    kernels::cuda::trsm_rlt<T>(B.rows, B.cols, L.ptr, L.ld, B.ptr, B.ld, work, bytes, ctx.stream, cfg);
  });
}
#endif

template <class T>
starpu_codelet* trsm_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(with_custom_kernel<T, TrsmArgs<T>>(
      {"trsm", trsm_cpu<T>, TESSERA_IF_CUDA(trsm_cuda_vendor<T>), nullptr, true, {STARPU_R, STARPU_RW}},
      TESSERA_IF_CUDA(([](auto real) {
        using R = typename decltype(real)::type;
        return CustomKernel{trsm_cuda_custom<R>, can_execute_with_kernel_choice<TrsmArgs<R>, trsm_custom_supports<R>>};
      }))));
  return &codelet;
}

// The panel solves keep TF32 products under every tensor-core arithmetic: they are a small share of
// the flops, and the 16-bit ones would round each step's solved block again.
starpu_codelet* trsm_tensor_core_codelet(TensorCores) {
  static starpu_codelet codelet = make_tensor_core_codelet<TrsmArgs<float>>(
      "trsm_tf32", trsm_cpu<float>, TESSERA_IF_CUDA(trsm_cuda_tf32), {STARPU_R, STARPU_RW});
  return &codelet;
}

}  // namespace

template <class T>
void insert_trsm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 const TaskHints& hints) {
  TrsmArgs<T> args{};
  args.header.kind = TaskKind::trsm;
  const TrsmForm form = trsm_form(side, trans, L, B);
  args.side = form.side;
  args.uplo = form.uplo;
  args.trans = form.trans;
  args.alpha = alpha;
  submit(ctx, codelet_for<T>(ctx, trsm_codelet<T>, trsm_tensor_core_codelet), args,
         {{L.handle, STARPU_R}, {B.handle, STARPU_RW}}, hints, B, L.j);
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template void insert_trsm<T>(const TaskContext&, Side, Trans, T, const TileRef&, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
