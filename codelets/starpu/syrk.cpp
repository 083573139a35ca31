// syrk: C := alpha A A^T + beta C on the lower triangle of a diagonal tile (the trailing update),
// alpha A^T A + beta C (the inverse's triangle product), or their transposed forms on tiles stored transposed. CPU: OpenBLAS. CUDA: cuBLAS, and Tessera's
// kernel for C -= A A^T on the lower triangle.
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
struct SyrkArgs {
  TaskHeader header;
  Uplo uplo;
  Trans trans;
  T alpha;
  T beta;
};

// k of the update: A is n x k, or k x n when the form transposes it.
template <class T>
int inner_dimension(const SyrkArgs<T>& args, const TileView<T>& A) {
  return args.trans != Trans::no ? A.rows : A.cols;
}

template <class T>
void syrk_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<SyrkArgs<T>, T, 2>(buffers, cl_arg, "syrk", [](const SyrkArgs<T>& args, TileView<T> A, TileView<T> C) {
    kernels::cpu::syrk(uplo_letter(args.uplo), args.trans, C.rows, inner_dimension(args, A), args.alpha, A.ptr, A.ld, args.beta, C.ptr, C.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void syrk_cuda_vendor(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<SyrkArgs<T>, T, 2>(buffers, cl_arg, "syrk (cuBLAS)",
                                        [](const SyrkArgs<T>& args, CudaWorkerContext& ctx, TileView<T> A, TileView<T> C) {
    kernels::cuda::vendor::syrk(ctx.cublas, uplo_letter(args.uplo), args.trans, C.rows,
                                inner_dimension(args, A), args.alpha, A.ptr, A.ld, args.beta, C.ptr, C.ld);
  });
}

// FP32 tiles on the tensor cores (TensorCores::tf32). cuBLAS has no syrk with a compute type: the
// whole product goes to the worker's workspace by gemm_tf32 (twice syrk's flops, at the tensor
// cores' rate), and its triangle is added to C's, so that nothing outside C's triangle is written.
void syrk_cuda_tf32(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<SyrkArgs<float>, float, 2>(
      buffers, cl_arg, "syrk (cuBLAS, TF32)",
      [](const SyrkArgs<float>& args, CudaWorkerContext& ctx, TileView<float> A, TileView<float> C) {
        const int n = C.rows;
        auto* W = static_cast<float*>(ctx.workspace_of(sizeof(float) * static_cast<std::size_t>(n) * n));
        const Trans other = args.trans == Trans::no ? Trans::transpose : Trans::no;
        kernels::cuda::vendor::gemm_tf32(ctx.cublas, args.trans, other, n, n, inner_dimension(args, A), 1.0f, A.ptr,
                                         A.ld, A.ptr, A.ld, 0.0f, W, n);
        kernels::cuda::update_triangle(
            args.uplo == Uplo::lower ? kernels::cuda::Triangle::lower : kernels::cuda::Triangle::upper, n, args.alpha,
            W, n, args.beta, C.ptr, C.ld, ctx.stream);
      });
}

// The same with 16-bit products (TensorCores::bf16, fp16): A rounded into the workspace beside the
// product's room.
template <kernels::cuda::Float16Format Format>
void syrk_cuda_16bit(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<SyrkArgs<float>, float, 2>(
      buffers, cl_arg, Format == kernels::cuda::Float16Format::bf16 ? "syrk (cuBLAS, BF16)" : "syrk (cuBLAS, FP16)",
      [](const SyrkArgs<float>& args, CudaWorkerContext& ctx, TileView<float> A, TileView<float> C) {
        const int n = C.rows;
        const RoundedOperands rounded = round_operands(ctx, Format, A, nullptr, sizeof(float) * std::size_t(n) * n);
        auto* W = static_cast<float*>(rounded.extra);
        const Trans other = args.trans == Trans::no ? Trans::transpose : Trans::no;
        kernels::cuda::vendor::gemm_16bit(ctx.cublas, Format == kernels::cuda::Float16Format::bf16, args.trans, other,
                                          n, n, inner_dimension(args, A), 1.0f, rounded.a, A.rows, rounded.a, A.rows,
                                          0.0f, W, n);
        kernels::cuda::update_triangle(
            args.uplo == Uplo::lower ? kernels::cuda::Triangle::lower : kernels::cuda::Triangle::upper, n, args.alpha,
            W, n, args.beta, C.ptr, C.ld, ctx.stream);
      });
}

// Tessera's kernel does the trailing update's form, C -= A A^T.
template <class T>
bool syrk_custom_supports(const SyrkArgs<T>& args) {
  return args.uplo == Uplo::lower && args.trans == Trans::no && args.alpha == T(-1) && args.beta == T(1);
}

template <class T>
void syrk_cuda_custom(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<SyrkArgs<T>, T, 2>(buffers, cl_arg, "syrk (Tessera CUDA)",
                                        [](const SyrkArgs<T>&, CudaWorkerContext& ctx, TileView<T> A, TileView<T> C) {
    const kernels::cuda::TileKernelConfig cfg = ctx.tile_config(precision_of<T>(), "syrk", C.rows);
    kernels::cuda::syrk_ln<T>(C.rows, A.cols, A.ptr, A.ld, C.ptr, C.ld, ctx.stream, cfg);
  });
}
#endif

template <class T>
starpu_codelet* syrk_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(with_custom_kernel<T, SyrkArgs<T>>(
      {"syrk", syrk_cpu<T>, TESSERA_IF_CUDA(syrk_cuda_vendor<T>), nullptr, true, {STARPU_R, STARPU_RW}},
      TESSERA_IF_CUDA(([](auto real) {
        using R = typename decltype(real)::type;
        return CustomKernel{syrk_cuda_custom<R>, can_execute_with_kernel_choice<SyrkArgs<R>, syrk_custom_supports<R>>};
      }))));
  return &codelet;
}

starpu_codelet* syrk_tensor_core_codelet(TensorCores cores) {
  using Args = SyrkArgs<float>;
  static starpu_codelet tf32 = make_tensor_core_codelet<Args>("syrk_tf32", syrk_cpu<float>,
                                                              TESSERA_IF_CUDA(syrk_cuda_tf32), {STARPU_R, STARPU_RW});
  static starpu_codelet bf16 = make_tensor_core_codelet<Args>(
      "syrk_bf16", syrk_cpu<float>, TESSERA_IF_CUDA(syrk_cuda_16bit<kernels::cuda::Float16Format::bf16>),
      {STARPU_R, STARPU_RW});
  static starpu_codelet fp16 = make_tensor_core_codelet<Args>(
      "syrk_fp16", syrk_cpu<float>, TESSERA_IF_CUDA(syrk_cuda_16bit<kernels::cuda::Float16Format::fp16>),
      {STARPU_R, STARPU_RW});
  return tensor_core_codelet(cores, &tf32, &bf16, &fp16);
}

}  // namespace

template <class T>
void insert_syrk(const TaskContext& ctx, T alpha, const TileRef& A, T beta, const TileRef& C, const TaskHints& hints) {
  insert_syrk<T>(ctx, Trans::no, alpha, A, beta, C, hints);
}

template <class T>
void insert_syrk(const TaskContext& ctx, Trans trans, T alpha, const TileRef& A, T beta, const TileRef& C,
                 const TaskHints& hints) {
  SyrkArgs<T> args{};
  args.header.kind = TaskKind::syrk;
  const SyrkForm form = syrk_form(A, C, trans);
  args.uplo = form.uplo;
  args.trans = form.trans;
  args.alpha = alpha;
  args.beta = beta;
  submit(ctx, codelet_for<T>(ctx, syrk_codelet<T>, syrk_tensor_core_codelet), args,
         {{A.handle, STARPU_R}, {C.handle, STARPU_RW}}, hints, C, A.j);
}

#define TESSERA_INSTANTIATE(T)                                                                              \
  template void insert_syrk<T>(const TaskContext&, T, const TileRef&, T, const TileRef&, const TaskHints&);     \
  template void insert_syrk<T>(const TaskContext&, Trans, T, const TileRef&, T, const TileRef&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
