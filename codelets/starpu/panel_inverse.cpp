// A tensor-core factorization's panel solves by the inverse of the diagonal tile's factor (float
// tiles stored as they stand): invert_panel_factor, X := L^{-1} (lower, zeros above), once per
// step, and multiply_by_panel_inverse, B := B X^T = B L^{-T}, per tile below it: one TF32 product
// each on the tensor cores, where a solve per tile spends most of its time in small triangular
// steps. The inverse is made by levels of batched TF32 products (vendor::invert_lower_by_levels):
// it lies on the factorization's critical path. CPU: LAPACK's trtri and BLAS's trmm in FP32.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#include "kernels/cuda/vendor.hpp"
#include "tensor_core_support.hpp"
#endif

#include <stdexcept>
#include <string>

namespace tessera::detail {

namespace {

struct PanelInverseArgs {
  TaskHeader header;
};

// X := L (zeros above), then its inverse in place.
void invert_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<PanelInverseArgs, float, 2>(buffers, cl_arg, "invert_panel_factor",
                                           [](const PanelInverseArgs&, TileView<float> L, TileView<float> X) {
    const int n = L.rows;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        X.ptr[i + static_cast<std::size_t>(j) * X.ld] = i >= j ? L.ptr[i + static_cast<std::size_t>(j) * L.ld] : 0.0f;
    const int info = kernels::cpu::trtri('L', n, X.ptr, X.ld);
    if (info != 0) throw std::logic_error("trtri of a factored diagonal tile returned info " + std::to_string(info));
  });
}

void multiply_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<PanelInverseArgs, float, 2>(buffers, cl_arg, "multiply_by_panel_inverse",
                                           [](const PanelInverseArgs&, TileView<float> X, TileView<float> B) {
    kernels::cpu::trmm(false, 'L', Trans::transpose, B.rows, B.cols, 1.0f, X.ptr, X.ld, B.ptr, B.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
void invert_cuda(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<PanelInverseArgs, float, 2>(
      buffers, cl_arg, "invert_panel_factor (TF32)",
      [](const PanelInverseArgs&, CudaWorkerContext& ctx, TileView<float> L, TileView<float> X) {
        namespace vendor = kernels::cuda::vendor;
        const int n = L.rows;
        const std::size_t work_bytes = workspace_slice_bytes(sizeof(float) * vendor::inverse_by_levels_elements(n, n));
        auto* work = static_cast<unsigned char*>(
            ctx.workspace_of(work_bytes + sizeof(float*) * std::size_t(vendor::inverse_by_levels_pointers(n))));
        vendor::invert_lower_by_levels(ctx.cublas, true, n, n, L.ptr, L.ld, X.ptr, X.ld,
                                       reinterpret_cast<float*>(work), reinterpret_cast<float**>(work + work_bytes),
                                       ctx.stream);
      });
}

// B := B X^T from a copy of B in the worker's workspace, X's zeros above its diagonal included.
void multiply_cuda(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<PanelInverseArgs, float, 2>(
      buffers, cl_arg, "multiply_by_panel_inverse (TF32)",
      [](const PanelInverseArgs&, CudaWorkerContext& ctx, TileView<float> X, TileView<float> B) {
        const int m = B.rows, n = B.cols;
        auto* copy = static_cast<float*>(ctx.workspace_of(sizeof(float) * static_cast<std::size_t>(m) * n));
        TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(copy, sizeof(float) * m, B.ptr, sizeof(float) * B.ld, sizeof(float) * m, n,
                                             cudaMemcpyDeviceToDevice, ctx.stream));
        kernels::cuda::vendor::gemm_tf32(ctx.cublas, Trans::no, Trans::transpose, m, n, n, 1.0f, copy, m, X.ptr, X.ld,
                                         0.0f, B.ptr, B.ld);
      });
}
#endif

starpu_codelet* invert_codelet() {
  static starpu_codelet codelet = make_tensor_core_codelet<PanelInverseArgs>(
      "invert_panel_factor", invert_cpu, TESSERA_IF_CUDA(invert_cuda), {STARPU_R, STARPU_W});
  return &codelet;
}

starpu_codelet* multiply_codelet() {
  static starpu_codelet codelet = make_tensor_core_codelet<PanelInverseArgs>(
      "multiply_by_panel_inverse", multiply_cpu, TESSERA_IF_CUDA(multiply_cuda), {STARPU_R, STARPU_RW});
  return &codelet;
}

}  // namespace

void insert_invert_panel_factor(const TaskContext& ctx, const TileRef& L, const TileRef& X, const TaskHints& hints) {
  PanelInverseArgs args{};
  args.header.kind = TaskKind::potrf;
  submit(ctx, invert_codelet(), args, {{L.handle, STARPU_R}, {X.handle, STARPU_W}}, hints, X, L.j);
}

void insert_multiply_by_panel_inverse(const TaskContext& ctx, const TileRef& X, const TileRef& B,
                                      const TaskHints& hints) {
  PanelInverseArgs args{};
  args.header.kind = TaskKind::trsm;
  submit(ctx, multiply_codelet(), args, {{X.handle, STARPU_R}, {B.handle, STARPU_RW}}, hints, B, X.j);
}

}  // namespace tessera::detail
