#include "tessera/options.hpp"

namespace tessera {

// Longest-path flavoured ranks of the tile Cholesky DAG: within a step the diagonal tile, then the
// panel from the top down, then the updates nearest the next diagonal tile; later steps rank lower
// than the critical tasks of earlier ones. Conversions in: columns on the left first; out: last.
int critical_path_priority(TaskKind kind, int k, int i, int j, int nt) {
  const int step = 2 * nt - 2 * k;
  switch (kind) {
    case TaskKind::potrf: return step;
    case TaskKind::trsm: return step - i;
    case TaskKind::syrk:
    case TaskKind::gemm: return step - i - j;
    case TaskKind::copy_in: return 2 * nt - i - j;
    case TaskKind::copy_out: return -2 * nt;
    case TaskKind::other: return 0;
  }
  return 0;
}

int no_priority(TaskKind, int, int, int, int) { return 0; }

}  // namespace tessera
