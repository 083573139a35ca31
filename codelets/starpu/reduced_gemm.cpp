// The trailing updates of an adaptive-precision factorization (TileArithmetic) on double tiles,
// C accumulated in double:
//   float_gemm: C -= A B^T with the operands rounded to FP32 by the task (cpu mode: CPU workers
//       alone, where an FP16 product is no faster than FP32's);
//   round_fp16: the FP16 pieces of a panel tile (hi, and lo = the rest scaled by 2^11; the tile
//       first scaled by a power of two into FP16's range), made once per step for every update
//       that reads the tile;
//   gemm_fp16, gemm_fp32: C -= A B^T from two tiles' pieces: on the tensor cores, hi hi^T (fp16) or
//       hi hi^T + 2^-11 (hi lo^T + lo hi^T) (fp32: about 2^-22 of each value, three FP16 products
//       against one FP64 product's time), FP32 accumulation; on CPU workers in FP32 from the pieces'
//       values. One codelet per arithmetic: their timings, and their perf models, differ.
#include <cstdint>

#include "codelet_support.hpp"
#include "kernels/cpu/reduced_precision.hpp"
#include "transposed_forms.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/reduced_precision.hpp"
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

struct ReducedGemmArgs {
  TaskHeader header;
  Trans transa;
  Trans transb;
};

void float_gemm_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<ReducedGemmArgs, double, 3>(
      buffers, cl_arg, "gemm in FP32",
      [](const ReducedGemmArgs& args, TileView<double> A, TileView<double> B, TileView<double> C) {
        const int k = args.transa != Trans::no ? A.rows : A.cols;
        kernels::cpu::gemm_in_float(args.transa, args.transb, C.rows, C.cols, k, -1.0, A.ptr, A.ld, B.ptr, B.ld, C.ptr,
                                    C.ld);
      });
}

starpu_codelet* float_gemm_codelet() {
  static starpu_codelet codelet =
      make_tile_codelet<double>({"gemm_in_fp32", float_gemm_cpu, nullptr, nullptr, false, {STARPU_R, STARPU_R, STARPU_RW}});
  return &codelet;
}

// A tile's FP16 pieces as a task sees them: hi (the stored block's shape), lo after it, then the
// exponent of the power of two that scaled them.
struct Pieces {
  std::uint16_t* hi;
  std::uint16_t* lo;
  int rows;
  int cols;
  int ld;
  short* exponent;
};

Pieces pieces_of(void* buffer) {
  auto* m = static_cast<starpu_matrix_interface*>(buffer);
  auto* p = reinterpret_cast<std::uint16_t*>(m->ptr);
  const int cols = (static_cast<int>(m->ny) - 1) / 2;
  const std::size_t piece = static_cast<std::size_t>(m->ld) * cols;
  return {p, p + piece, static_cast<int>(m->nx), cols, static_cast<int>(m->ld), reinterpret_cast<short*>(p + 2 * piece)};
}

int reduced_can_execute(unsigned worker, starpu_task* task, unsigned implementation) {
#ifdef TESSERA_HAVE_CUDA
  return can_execute_with_kernel_choice<ReducedGemmArgs, no_custom_kernel<ReducedGemmArgs>, false>(worker, task,
                                                                                                  implementation);
#else
  (void)worker, (void)task, (void)implementation;
  return 1;
#endif
}

// The body of a task on a CUDA worker (on its urgent stream for a critical task), or on a CPU one.
template <class Body>
void run_reduced(void* cl_arg, const char* what, Body&& body) {
  const ReducedGemmArgs& args = task_args<ReducedGemmArgs>(cl_arg);
  run_task_body(args.header, what, [&] { body(args); });
}

void round_cpu(void* buffers[], void* cl_arg) {
  run_reduced(cl_arg, "round to FP16 pieces", [&](const ReducedGemmArgs&) {
    const TileView<double> A = tile_view<double>(buffers[0]);
    const Pieces R = pieces_of(buffers[1]);
    kernels::cpu::split_to_fp16(A.rows, A.cols, A.ptr, A.ld, R.hi, R.lo, R.exponent);
  });
}

template <TileArithmetic Arithmetic>
void pieces_gemm_cpu(void* buffers[], void* cl_arg) {
  run_reduced(cl_arg, "gemm from FP16 pieces", [&](const ReducedGemmArgs& args) {
    const Pieces A = pieces_of(buffers[0]), B = pieces_of(buffers[1]);
    const TileView<double> C = tile_view<double>(buffers[2]);
    const int k = args.transa != Trans::no ? A.rows : A.cols;
    constexpr bool low = Arithmetic == TileArithmetic::fp32;
    kernels::cpu::add_float_product(args.transa, args.transb, C.rows, C.cols, k, -1.0,
                                    kernels::cpu::widen_fp16(A.rows, A.cols, A.hi, A.lo, A.ld, low), *A.exponent,
                                    kernels::cpu::widen_fp16(B.rows, B.cols, B.hi, B.lo, B.ld, low), *B.exponent, C.ptr,
                                    C.ld);
  });
}

#ifdef TESSERA_HAVE_CUDA
void round_cuda(void* buffers[], void* cl_arg) {
  run_reduced(cl_arg, "round to FP16 pieces (CUDA)", [&](const ReducedGemmArgs& args) {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const UrgentWork urgent = urgent_work(args.header, ctx);
    const TileView<double> A = tile_view<double>(buffers[0]);
    const Pieces R = pieces_of(buffers[1]);
    auto* workspace = static_cast<double*>(ctx.workspace_of(kernels::cuda::range_exponent_workspace_bytes()));
    kernels::cuda::range_exponent(A.rows, A.cols, A.ptr, A.ld, workspace, R.exponent, ctx.stream);
    kernels::cuda::split_to_fp16(A.rows, A.cols, A.ptr, A.ld, R.exponent, R.hi, R.lo, R.ld, ctx.stream);
  });
}

// W := hi_A hi_B^T (and W2 := hi_A lo_B^T + lo_A hi_B^T for fp32) in the worker's workspace, then
// C -= 2^-(e_A + e_B) (W + 2^-11 W2).
template <TileArithmetic Arithmetic>
void pieces_gemm_cuda(void* buffers[], void* cl_arg) {
  run_reduced(cl_arg, "gemm from FP16 pieces (tensor cores)", [&](const ReducedGemmArgs& args) {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const UrgentWork urgent = urgent_work(args.header, ctx);
    const Pieces A = pieces_of(buffers[0]), B = pieces_of(buffers[1]);
    const TileView<double> C = tile_view<double>(buffers[2]);
    const int k = args.transa != Trans::no ? A.rows : A.cols;
    constexpr bool low = Arithmetic == TileArithmetic::fp32;
    const std::size_t w_bytes = workspace_slice_bytes(sizeof(float) * static_cast<std::size_t>(C.rows) * C.cols);
    auto* w = static_cast<float*>(ctx.workspace_of(low ? 2 * w_bytes : w_bytes));
    float* w2 = low ? reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(w) + w_bytes) : nullptr;
    const auto product = [&](const std::uint16_t* a, const std::uint16_t* b, float beta, float* out) {
      kernels::cuda::vendor::gemm_16bit(ctx.cublas, false, args.transa, args.transb, C.rows, C.cols, k, 1.0f, a, A.ld,
                                        b, B.ld, beta, out, C.rows);
    };
    product(A.hi, B.hi, 0.0f, w);
    if (low) {
      product(A.hi, B.lo, 0.0f, w2);
      product(A.lo, B.hi, 1.0f, w2);
    }
    kernels::cuda::add_unscaled(C.rows, C.cols, -1.0, w, w2, C.rows, A.exponent, B.exponent, C.ptr, C.ld, ctx.stream);
  });
}
#endif

starpu_codelet* round_codelet() {
  static starpu_codelet codelet = make_tile_codelet<double>(
      {"round_fp16", round_cpu, TESSERA_IF_CUDA(round_cuda), nullptr, true, {STARPU_R, STARPU_W}, reduced_can_execute});
  return &codelet;
}

starpu_codelet* pieces_gemm_codelet(TileArithmetic arithmetic) {
  static starpu_codelet fp16 = make_tile_codelet<double>(
      {"gemm_fp16", pieces_gemm_cpu<TileArithmetic::fp16>, TESSERA_IF_CUDA(pieces_gemm_cuda<TileArithmetic::fp16>),
       nullptr, true, {STARPU_R, STARPU_R, STARPU_RW}, reduced_can_execute});
  static starpu_codelet fp32 = make_tile_codelet<double>(
      {"gemm_fp32", pieces_gemm_cpu<TileArithmetic::fp32>, TESSERA_IF_CUDA(pieces_gemm_cuda<TileArithmetic::fp32>),
       nullptr, true, {STARPU_R, STARPU_R, STARPU_RW}, reduced_can_execute});
  return arithmetic == TileArithmetic::fp16 ? &fp16 : &fp32;
}

// C -= A B^T in the form the tiles' stored orientations need.
void submit_update(const TaskContext& ctx, starpu_codelet* codelet, const TileRef& A, const TileRef& B,
                   const TileRef& C, const TaskHints& hints) {
  ReducedGemmArgs args{};
  args.header.kind = TaskKind::gemm;
  const GemmForm form = gemm_form(Trans::no, Trans::conjugate_transpose, A, B, C);
  args.transa = form.transa;
  args.transb = form.transb;
  submit(ctx, codelet, args, {{form.a->handle, STARPU_R}, {form.b->handle, STARPU_R}, {C.handle, STARPU_RW}}, hints,
         C, A.j);
}

}  // namespace

void insert_float_gemm(const TaskContext& ctx, const TileRef& A, const TileRef& B, const TileRef& C,
                       const TaskHints& hints) {
  submit_update(ctx, float_gemm_codelet(), A, B, C, hints);
}

TileRef fp16_pieces_tile(const TaskContext&, const TileRef& like) {
  TileRef tile = like;  // transposed as `like`: the pieces keep the stored block's shape
  const int stored_rows = like.transposed ? like.cols : like.rows;
  const int stored_cols = like.transposed ? like.rows : like.cols;
  starpu_data_handle_t handle = nullptr;
  starpu_matrix_data_register(&handle, -1, 0, static_cast<uint32_t>(stored_rows), static_cast<uint32_t>(stored_rows),
                              static_cast<uint32_t>(2 * stored_cols + 1), sizeof(std::uint16_t));
  tile.handle = handle;
  return tile;
}

void insert_round_to_fp16(const TaskContext& ctx, const TileRef& A, const TileRef& pieces, const TaskHints& hints) {
  ReducedGemmArgs args{};  // the header alone
  args.header.kind = TaskKind::trsm;  // the panel's: it feeds the step's updates
  submit(ctx, round_codelet(), args, {{A.handle, STARPU_R}, {pieces.handle, STARPU_W}}, hints, pieces, A.j);
}

void insert_pieces_gemm(const TaskContext& ctx, TileArithmetic arithmetic, const TileRef& A, const TileRef& B,
                        const TileRef& C, const TaskHints& hints) {
  submit_update(ctx, pieces_gemm_codelet(arithmetic), A, B, C, hints);
}

}  // namespace tessera::detail
