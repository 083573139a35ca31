#include <stdexcept>

#include "algorithms.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

// The block of the caller's matrix that tile (i, j) holds: for an upper-stored symmetric matrix
// the lower tile (i, j) is the transpose of the upper block (j, i), copied transposed, or kept as
// stored in a transposed tile.
template <class T>
BlockMap<T> block_of(const TileGrid& A, Uplo uplo, const T* base, int ld, int i, int j,
                     NonFiniteInput non_finite = NonFiniteInput::propagates) {
  const bool symmetric = A.structure() == TileStructure::symmetric_lower;
  const bool reports_non_finite = symmetric && non_finite == NonFiniteInput::fails_factorization;
  const bool upper = symmetric && uplo == Uplo::upper;
  if (A.transposed() && !upper) throw std::logic_error("transposed tiles hold an upper-stored symmetric matrix only");
  const int row0 = (upper ? j : i) * A.nb();
  const int col0 = (upper ? i : j) * A.nb();
  return {const_cast<T*>(base), ld, row0, col0, upper && !A.transposed(), symmetric && i == j, reports_non_finite,
          A.transposed()};
}

}  // namespace

template <class T>
void insert_load(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const T* src, int ld,
                 NonFiniteInput non_finite, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = 0; i < A.tile_rows(); ++i)
      if (A.stored(i, j))
        insert_copy_in<T>(ctx, block_of(A, uplo, src, ld, i, j, non_finite), A.ref(i, j), hints(TaskKind::copy_in, 0, i, j, nt));
}

template <class T>
void insert_store(const TaskContext& ctx, const TileGrid& A, Uplo uplo, T* dst, int ld, bool skip_after_failure,
                  const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = 0; i < A.tile_rows(); ++i)
      if (A.stored(i, j))
        insert_copy_out<T>(ctx, A.ref(i, j), block_of(A, uplo, dst, ld, i, j), skip_after_failure,
                           hints(TaskKind::copy_out, 0, i, j, nt));
}

#define TESSERA_INSTANTIATE(T)                                                                                     \
  template void insert_load<T>(const TaskContext&, const TileGrid&, Uplo, const T*, int, NonFiniteInput,           \
                               const SchedulingHints&);                                                            \
  template void insert_store<T>(const TaskContext&, const TileGrid&, Uplo, T*, int, bool, const SchedulingHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
