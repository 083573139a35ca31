#include "algorithms.hpp"

namespace tessera::detail {

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileGrid& A, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    insert_potrf<T>(ctx, A.ref(k, k), hints(TaskKind::potrf, k, k, k, nt));
    for (int i = k + 1; i < nt; ++i)
      insert_trsm<T>(ctx, Side::right, Trans::yes, T(1), A.ref(k, k), A.ref(i, k),
                     hints(TaskKind::trsm, k, i, k, nt));
    for (int i = k + 1; i < nt; ++i) {
      insert_syrk<T>(ctx, T(-1), A.ref(i, k), T(1), A.ref(i, i), hints(TaskKind::syrk, k, i, i, nt));
      for (int j = k + 1; j < i; ++j)
        insert_gemm<T>(ctx, Trans::no, Trans::yes, T(-1), A.ref(i, k), A.ref(j, k), T(1), A.ref(i, j),
                       hints(TaskKind::gemm, k, i, j, nt));
    }
  }
}

template void insert_cholesky<float>(const TaskContext&, const TileGrid&, const SchedulingHints&);
template void insert_cholesky<double>(const TaskContext&, const TileGrid&, const SchedulingHints&);

}  // namespace tessera::detail
