#include "block_cyclic.hpp"

#include "tessera/precision.hpp"

namespace tessera::detail {

int BlockCyclic::local_size(int size, int nb, int process, int processes) noexcept {
  const int blocks = size / nb;
  const int extra_blocks = blocks % processes;
  int local = (blocks / processes) * nb;
  if (process < extra_blocks)
    local += nb;
  else if (process == extra_blocks)
    local += size % nb;
  return local;
}

BlockOfTile block_of_tile(TileStructure structure, Uplo uplo, int i, int j) noexcept {
  const bool transpose = structure == TileStructure::symmetric_lower && uplo == Uplo::upper;
  return transpose ? BlockOfTile{j, i, true} : BlockOfTile{i, j, false};
}

namespace {

// Where tile (i, j) lies in this process's local array.
template <class T>
BlockMap<T> local_block(const TileGrid& A, Uplo uplo, const BlockCyclic& layout, const T* local, int lld, int i, int j) {
  const BlockOfTile block = block_of_tile(A.structure(), uplo, i, j);
  const bool diagonal = A.structure() == TileStructure::symmetric_lower && i == j;
  return {const_cast<T*>(local), lld,   layout.local_row(block.I, A.nb()), layout.local_col(block.J, A.nb()),
          block.transpose,       diagonal, false};
}

// Calls visit(i, j) for every stored tile whose block this process holds.
template <class Visit>
void for_local_tiles(const TileGrid& A, Uplo uplo, const BlockCyclic& layout, Visit&& visit) {
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = 0; i < A.tile_rows(); ++i) {
      if (!A.stored(i, j)) continue;
      const BlockOfTile block = block_of_tile(A.structure(), uplo, i, j);
      if (layout.holds_block(block.I, block.J)) visit(i, j);
    }
}

}  // namespace

template <class T>
void insert_load_local(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const BlockCyclic& layout, const T* local,
                       int lld, const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for_local_tiles(A, uplo, layout, [&](int i, int j) {
    insert_copy_in<T>(ctx, local_block(A, uplo, layout, local, lld, i, j), A.ref(i, j), hints(TaskKind::copy_in, 0, i, j, nt));
  });
}

template <class T>
void insert_store_local(const TaskContext& ctx, const TileGrid& A, Uplo uplo, const BlockCyclic& layout, T* local, int lld,
                        const SchedulingHints& hints) {
  const int nt = A.tile_rows();
  for_local_tiles(A, uplo, layout, [&](int i, int j) {
    insert_copy_out<T>(ctx, A.ref(i, j), local_block(A, uplo, layout, local, lld, i, j), false,
                       hints(TaskKind::copy_out, 0, i, j, nt));
  });
}

#define TESSERA_INSTANTIATE(T)                                                                                     \
  template void insert_load_local<T>(const TaskContext&, const TileGrid&, Uplo, const BlockCyclic&, const T*, int, \
                                     const SchedulingHints&);                                                      \
  template void insert_store_local<T>(const TaskContext&, const TileGrid&, Uplo, const BlockCyclic&, T*, int,      \
                                      const SchedulingHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
