#include "algorithms.hpp"

namespace tessera::detail {

template <class T>
void insert_cholesky(const TaskContext& ctx, const TileMatrix<T>& A, const PriorityFunction& priority) {
  const int nt = A.tile_rows();
  for (int k = 0; k < nt; ++k) {
    insert_potrf<T>(ctx, tile_ref(A, k, k), priority(TaskKind::potrf, k, k, k, nt));
    for (int i = k + 1; i < nt; ++i)
      insert_trsm<T>(ctx, Side::right, Trans::yes, T(1), tile_ref(A, k, k), tile_ref(A, i, k),
                     priority(TaskKind::trsm, k, i, k, nt));
    for (int i = k + 1; i < nt; ++i) {
      insert_syrk<T>(ctx, T(-1), tile_ref(A, i, k), T(1), tile_ref(A, i, i), priority(TaskKind::syrk, k, i, i, nt));
      for (int j = k + 1; j < i; ++j)
        insert_gemm<T>(ctx, Trans::no, Trans::yes, T(-1), tile_ref(A, i, k), tile_ref(A, j, k), T(1), tile_ref(A, i, j),
                       priority(TaskKind::gemm, k, i, j, nt));
    }
  }
}

template void insert_cholesky<float>(const TaskContext&, const TileMatrix<float>&, const PriorityFunction&);
template void insert_cholesky<double>(const TaskContext&, const TileMatrix<double>&, const PriorityFunction&);

}  // namespace tessera::detail
