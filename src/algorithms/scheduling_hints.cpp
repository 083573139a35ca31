#include "algorithms.hpp"
#include "tessera/options.hpp"

namespace tessera {

namespace {

// Longest-path flavoured ranks of the tile Cholesky DAG: within a step the diagonal tile, then the
// panel from the top down, then the updates nearest the next diagonal tile; later steps rank lower
// than the critical tasks of earlier ones. Conversions in: columns on the left first; out: last.
// Batched chunks (k of nt): in order.
int critical_path_rank(TaskKind kind, int k, int i, int j, int nt) {
  const int step = 2 * nt - 2 * k;
  switch (kind) {
    case TaskKind::potrf: return step;
    case TaskKind::trsm: return step - i;
    case TaskKind::syrk:
    case TaskKind::gemm: return step - i - j;
    case TaskKind::copy_in: return 2 * nt - i - j;
    case TaskKind::copy_out: return -2 * nt;
    case TaskKind::other: return nt - k;
  }
  return 0;
}

// The diagonal factorization, the panel solves, and the updates of the next panel (tiles
// (i, k+1) at step k).
bool on_critical_path(TaskKind kind, int k, int j) {
  switch (kind) {
    case TaskKind::potrf:
    case TaskKind::trsm: return true;
    case TaskKind::syrk:
    case TaskKind::gemm: return j == k + 1;
    default: return false;
  }
}

WorkerKind preferred_worker(TaskKind kind) {
  switch (kind) {
    case TaskKind::potrf: return WorkerKind::cpu;
    case TaskKind::trsm:
    case TaskKind::syrk:
    case TaskKind::gemm: return WorkerKind::gpu;
    default: return WorkerKind::any;
  }
}

}  // namespace

TaskHints critical_path_hints(TaskKind kind, int k, int i, int j, int nt) {
  return {critical_path_rank(kind, k, i, j, nt), on_critical_path(kind, k, j), preferred_worker(kind), kind};
}

TaskHints neutral_hints(TaskKind kind, int, int, int, int) { return {0, false, WorkerKind::any, kind}; }

}  // namespace tessera

namespace tessera::detail {

GpuOwners GpuOwners::for_gpus(int gpus) {
  if (gpus < 2) return {};
  int cols = 1;
  for (int q = 2; q * q <= gpus; ++q)
    if (gpus % q == 0) cols = q;
  return {gpus / cols, cols};
}

// critical_path_rank stays within [-2 nt, 2 nt]: a panel's whole range sits below the one before.
TaskHints in_panel(TaskHints hints, int panel, int nt) {
  hints.priority -= panel * (4 * nt + 1);
  return hints;
}

}  // namespace tessera::detail
