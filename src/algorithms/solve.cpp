#include "algorithms.hpp"

#include "tessera/precision.hpp"

namespace tessera::detail {

// Forward: L Y = B, column of tiles k after k. Backward: L^T X = Y, from the last tile row up;
// (L^T)(i, k) = L(k, i)^T for i < k. In the tiles' own arithmetic (with_native_arithmetic).
template <class T>
void insert_cholesky_solve(const TaskContext& factor_ctx, const TileGrid& L, const TileGrid& B,
                           const SchedulingHints& hints) {
  const TaskContext ctx = with_native_arithmetic(factor_ctx);
  const int nt = L.tile_rows();
  const int nr = B.tile_cols();
  for (int k = 0; k < nt; ++k)
    for (int r = 0; r < nr; ++r) {
      insert_trsm<T>(ctx, Side::left, Trans::no, T(1), L.ref(k, k), B.ref(k, r),
                     hints(TaskKind::trsm, k, k, r, nt));
      for (int i = k + 1; i < nt; ++i)
        insert_gemm<T>(ctx, Trans::no, Trans::no, T(-1), L.ref(i, k), B.ref(k, r), T(1), B.ref(i, r),
                       hints(TaskKind::gemm, k, i, r, nt));
    }
  for (int k = nt - 1; k >= 0; --k)
    for (int r = 0; r < nr; ++r) {
      insert_trsm<T>(ctx, Side::left, Trans::conjugate_transpose, T(1), L.ref(k, k), B.ref(k, r),
                     hints(TaskKind::trsm, nt - 1 - k, k, r, nt));
      for (int i = 0; i < k; ++i)
        insert_gemm<T>(ctx, Trans::conjugate_transpose, Trans::no, T(-1), L.ref(k, i), B.ref(k, r), T(1), B.ref(i, r),
                       hints(TaskKind::gemm, nt - 1 - k, i, r, nt));
    }
}

#define TESSERA_INSTANTIATE(T)                                                                 \
  template void insert_cholesky_solve<T>(const TaskContext&, const TileGrid&, const TileGrid&, \
                                         const SchedulingHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
