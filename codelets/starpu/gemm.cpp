// gemm: C := alpha op(A) op(B) + beta C (the trailing update C -= A B^T, and the solves' updates),
// in the form the tiles' stored orientations need. CPU: OpenBLAS. CUDA: cuBLAS, and Tessera's
// kernel for C -= A B^T.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/tile_kernels.hpp"
#include "kernels/cuda/vendor.hpp"
#include "tensor_core_support.hpp"
#endif

namespace tessera::detail {

namespace {

template <class T>
struct GemmArgs {
  TaskHeader header;
  Trans transa;
  Trans transb;
  T alpha;
  T beta;
};

template <class T>
int inner_dimension(const GemmArgs<T>& args, const TileView<T>& A) {
  return args.transa != Trans::no ? A.rows : A.cols;
}

template <class T>
void gemm_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<GemmArgs<T>, T, 3>(buffers, cl_arg, "gemm",
                                  [](const GemmArgs<T>& args, TileView<T> A, TileView<T> B, TileView<T> C) {
    kernels::cpu::gemm(args.transa, args.transb, C.rows, C.cols, inner_dimension(args, A),
                       args.alpha, A.ptr, A.ld, B.ptr, B.ld, args.beta, C.ptr, C.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void gemm_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<GemmArgs<T>, T, 3>(
      buffers, cl_arg, "gemm (cuBLAS)",
      [](const GemmArgs<T>& args, CudaWorkerContext& ctx, TileView<T> A, TileView<T> B, TileView<T> C) {
        kernels::cuda::vendor::gemm(ctx.cublas, args.transa, args.transb, C.rows, C.cols,
                                    inner_dimension(args, A), args.alpha, A.ptr, A.ld, B.ptr, B.ld, args.beta, C.ptr,
                                    C.ld);
      });
}

// FP32 tiles on the tensor cores (TensorCores::tf32).
void gemm_cuda_tf32(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<GemmArgs<float>, float, 3>(
      buffers, cl_arg, "gemm (cuBLAS, TF32)",
      [](const GemmArgs<float>& args, CudaWorkerContext& ctx, TileView<float> A, TileView<float> B, TileView<float> C) {
        kernels::cuda::vendor::gemm_tf32(ctx.cublas, args.transa, args.transb, C.rows, C.cols, inner_dimension(args, A),
                                         args.alpha, A.ptr, A.ld, B.ptr, B.ld, args.beta, C.ptr, C.ld);
      });
}

// FP32 tiles with 16-bit products (TensorCores::bf16, fp16): A and B rounded into the worker's
// workspace, then multiplied there on the tensor cores into C in FP32.
template <kernels::cuda::Float16Format Format>
void gemm_cuda_16bit(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<GemmArgs<float>, float, 3>(
      buffers, cl_arg, Format == kernels::cuda::Float16Format::bf16 ? "gemm (cuBLAS, BF16)" : "gemm (cuBLAS, FP16)",
      [](const GemmArgs<float>& args, CudaWorkerContext& ctx, TileView<float> A, TileView<float> B, TileView<float> C) {
        const RoundedOperands rounded = round_operands(ctx, Format, A, &B);
        kernels::cuda::vendor::gemm_16bit(ctx.cublas, Format == kernels::cuda::Float16Format::bf16, args.transa,
                                          args.transb, C.rows, C.cols, inner_dimension(args, A), args.alpha, rounded.a,
                                          A.rows, rounded.b, B.rows, args.beta, C.ptr, C.ld);
      });
}

// Tessera's kernel does the trailing update's form, C -= A B^T.
template <class T>
bool gemm_custom_supports(const GemmArgs<T>& args) {
  return args.transa == Trans::no && args.transb != Trans::no && args.alpha == T(-1) && args.beta == T(1);
}

template <class T>
void gemm_cuda_custom(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<GemmArgs<T>, T, 3>(
      buffers, cl_arg, "gemm (Tessera CUDA)",
      [](const GemmArgs<T>&, CudaWorkerContext& ctx, TileView<T> A, TileView<T> B, TileView<T> C) {
        const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "gemm", C.rows);
        kernels::cuda::gemm_nt<T>(C.rows, C.cols, A.cols, A.ptr, A.ld, B.ptr, B.ld, C.ptr, C.ld, ctx.stream, cfg);
      });
}
#endif

template <class T>
starpu_codelet* gemm_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(with_custom_kernel<T, GemmArgs<T>>(
      {"gemm", gemm_cpu<T>, TESSERA_IF_CUDA(gemm_cuda_vendor<T>), nullptr, true, {STARPU_R, STARPU_R, STARPU_RW}},
      TESSERA_IF_CUDA(([](auto real) {
        using R = typename decltype(real)::type;
        return CustomKernel{gemm_cuda_custom<R>, can_execute_with_kernel_choice<GemmArgs<R>, gemm_custom_supports<R>>};
      }))));
  return &codelet;
}

starpu_codelet* gemm_tensor_core_codelet(TensorCores cores) {
  using Args = GemmArgs<float>;
  static starpu_codelet tf32 = make_tensor_core_codelet<Args>("gemm_tf32", gemm_cpu<float>,
                                                              TESSERA_IF_CUDA(gemm_cuda_tf32), {STARPU_R, STARPU_R, STARPU_RW});
  static starpu_codelet bf16 = make_tensor_core_codelet<Args>(
      "gemm_bf16", gemm_cpu<float>, TESSERA_IF_CUDA(gemm_cuda_16bit<kernels::cuda::Float16Format::bf16>),
      {STARPU_R, STARPU_R, STARPU_RW});
  static starpu_codelet fp16 = make_tensor_core_codelet<Args>(
      "gemm_fp16", gemm_cpu<float>, TESSERA_IF_CUDA(gemm_cuda_16bit<kernels::cuda::Float16Format::fp16>),
      {STARPU_R, STARPU_R, STARPU_RW});
  return tensor_core_codelet(cores, &tf32, &bf16, &fp16);
}

}  // namespace

template <class T>
void insert_gemm(const TaskContext& ctx, Trans transa, Trans transb, T alpha, const TileRef& A, const TileRef& B,
                 T beta, const TileRef& C, const TaskHints& hints) {
  GemmArgs<T> args{};
  args.header.kind = TaskKind::gemm;
  const GemmForm form = gemm_form(transa, transb, A, B, C);
  args.transa = form.transa;
  args.transb = form.transb;
  args.alpha = alpha;
  args.beta = beta;
  submit(ctx, codelet_for<T>(ctx, gemm_codelet<T>, gemm_tensor_core_codelet), args,
         {{form.a->handle, STARPU_R}, {form.b->handle, STARPU_R}, {C.handle, STARPU_RW}}, hints, C,
         transa != Trans::no ? A.i : A.j);
}

#define TESSERA_INSTANTIATE(T)                                                                                         \
  template void insert_gemm<T>(const TaskContext&, Trans, Trans, T, const TileRef&, const TileRef&, T, const TileRef&, \
                               const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
