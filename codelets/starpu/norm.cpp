// abs_sums: column and row sums of |tile| into a host array, from which the 1-norm of a tile
// matrix is assembled (backward-error checks). CPU only: the tiles come to the host for it.
#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

template <class T>
struct AbsSumsArgs {
  TaskHeader header;
  bool lower_only;
  RealOf<T>* sums;  // moduli for complex tiles
};

template <class T>
void abs_sums_cpu(void* buffers[], void* cl_arg) {
  run_on_tiles<AbsSumsArgs<T>, T, 1>(
      buffers, cl_arg, "abs_sums",
      [](const AbsSumsArgs<T>& args, TileView<T> tile) {
        kernels::cpu::abs_sums(args.lower_only, tile.rows, tile.cols, tile.ptr, tile.ld, args.sums, args.sums + tile.cols);
      },
      /*even_after_failure=*/true);
}

template <class T>
starpu_codelet* abs_sums_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"abs_sums", abs_sums_cpu<T>, nullptr, nullptr, false, {STARPU_R}});
  return &codelet;
}

}  // namespace

template <class T>
void insert_abs_sums(const TaskContext& ctx, const TileRef& tile, bool lower_only, RealOf<T>* sums, const TaskHints& hints) {
  AbsSumsArgs<T> args{};
  args.header.kind = TaskKind::other;
  args.lower_only = lower_only;
  args.sums = sums;
  submit(ctx, abs_sums_codelet<T>(), args, {{tile.handle, STARPU_R}}, hints, tile, 0);
}

#define TESSERA_INSTANTIATE(T)                                                                      \
  template void insert_abs_sums<T>(const TaskContext&, const TileRef&, bool, RealOf<T>*, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
