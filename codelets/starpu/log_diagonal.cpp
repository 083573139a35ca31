// log_diagonal: 2 sum log of a factor's diagonal tile's diagonal into a host slot, in double (the
// tile's share of the log-determinant, FactorOptions::log_determinant). CPU: a loop. CUDA: one
// kernel and an 8-byte read-back, the task synchronous (its slot is written when it ends).
#include <cmath>

#include "codelet_support.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#endif

namespace tessera::detail {

namespace {

struct LogDiagonalArgs {
  TaskHeader header;
  double* sum;
};

template <class T>
void log_diagonal_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<LogDiagonalArgs, T, 1>(buffers, cl_arg, "log_diagonal", [](const LogDiagonalArgs& args, TileView<T> A) {
    double sum = 0.0;
    // A factor's diagonal is real (for complex scalars, the real parts).
    for (int j = 0; j < A.rows; ++j)
      sum += std::log(static_cast<double>(std::real(A.ptr[j + static_cast<long long>(j) * A.ld])));
    *args.sum = 2.0 * sum;
  });
}

#ifdef TESSERA_HAVE_CUDA
template <class T>
void log_diagonal_cuda(void* buffers[], void* cl_arg) {
  run_on_cuda_tiles<LogDiagonalArgs, T, 1>(buffers, cl_arg, "log_diagonal (CUDA)",
                                           [](const LogDiagonalArgs& args, CudaWorkerContext& ctx, TileView<T> A) {
    auto* sum = static_cast<double*>(ctx.workspace_of(sizeof(double)));
    kernels::cuda::log_diagonal_sum(A.rows, A.ptr, A.ld, sum, ctx.stream);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(args.sum, sum, sizeof(double), cudaMemcpyDeviceToHost, ctx.stream));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  });
}
#endif

template <class T>
starpu_codelet* log_diagonal_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"log_diagonal", log_diagonal_cpu<T>, TESSERA_IF_CUDA(log_diagonal_cuda<T>), nullptr, false, {STARPU_R}});
  return &codelet;
}

}  // namespace

template <class T>
void insert_log_diagonal(const TaskContext& ctx, const TileRef& A, double* sum, const TaskHints& hints) {
  LogDiagonalArgs args{};
  args.header.kind = TaskKind::other;
  args.sum = sum;
  submit(ctx, log_diagonal_codelet<T>(), args, {{A.handle, STARPU_R}}, hints, A, A.j);
}

#define TESSERA_INSTANTIATE(T) \
  template void insert_log_diagonal<T>(const TaskContext&, const TileRef&, double*, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
