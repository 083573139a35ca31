// The tile algorithms of src/ on the recording backend, without StarPU: the shape of the DAGs they
// insert (task counts, every dependency, the longest chain), the priority each task gets, and
// LAPACK-layout posv/potrf/potrs executed in random orders that respect the recorded
// dependencies (a missing dependency or a wrong access mode shows as a wrong answer).
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms.hpp"
#include "recording_backend.hpp"

namespace tessera::detail {
namespace {

// A task of the tile Cholesky or solve by what it does: its kind and (k, i, j) as the priority
// function sees them.
using TaskKey = std::tuple<TaskKind, int, int, int>;

// (k, i, j) of a Cholesky task from its tile accesses (codelet buffer order: reads, then the write).
TaskKey cholesky_key(const RecordedTask& t) {
  const auto& a = t.accesses;
  switch (t.kind) {
    case TaskKind::potrf: return {t.kind, a[0].i, a[0].i, a[0].i};            // RW (k,k)
    case TaskKind::trsm: return {t.kind, a[0].i, a[1].i, a[0].i};             // R (k,k), RW (i,k)
    case TaskKind::syrk: return {t.kind, a[0].j, a[1].i, a[1].i};             // R (i,k), RW (i,i)
    case TaskKind::gemm: return {t.kind, a[0].j, a[2].i, a[2].j};             // R (i,k), R (j,k), RW (i,j)
    default: return {t.kind, -1, -1, -1};
  }
}

std::map<TaskKind, int> count_kinds(const Submission& s) {
  std::map<TaskKind, int> counts;
  for (const RecordedTask& t : s.tasks()) ++counts[t.kind];
  return counts;
}

class CholeskyGraph : public ::testing::TestWithParam<int> {};

TEST_P(CholeskyGraph, TaskCountsEveryDependencyAndTheCriticalPath) {
  const int nt = GetParam();
  const int nb = 4;
  HostTiles<double> tiles(nt * nb - 1, nt * nb - 1, nb, TileStructure::symmetric_lower);  // partial last tile
  Submission s;
  insert_cholesky<double>(recording_context(s), tiles.grid(), critical_path_hints);

  const std::map<TaskKind, int> counts = count_kinds(s);
  EXPECT_EQ(counts.at(TaskKind::potrf), nt);
  EXPECT_EQ(counts.count(TaskKind::trsm) ? counts.at(TaskKind::trsm) : 0, nt * (nt - 1) / 2);
  EXPECT_EQ(counts.count(TaskKind::syrk) ? counts.at(TaskKind::syrk) : 0, nt * (nt - 1) / 2);
  EXPECT_EQ(counts.count(TaskKind::gemm) ? counts.at(TaskKind::gemm) : 0, nt * (nt - 1) * (nt - 2) / 6);
  EXPECT_EQ(static_cast<int>(s.tasks().size()), nt * (nt + 1) * (nt + 2) / 6);

  // Every task's predecessors are exactly the tasks that produce what it reads and the previous
  // update of the tile it writes.
  std::map<TaskKey, std::size_t> index;
  for (std::size_t t = 0; t < s.tasks().size(); ++t)
    ASSERT_TRUE(index.emplace(cholesky_key(s.tasks()[t]), t).second) << "two tasks with one key";
  auto task = [&](TaskKind kind, int k, int i, int j) { return index.at({kind, k, i, j}); };
  auto last_update = [&](int i, int j, int k) {  // the update of tile (i, j) at step k - 1
    return i == j ? task(TaskKind::syrk, k - 1, i, i) : task(TaskKind::gemm, k - 1, i, j);
  };
  for (std::size_t t = 0; t < s.tasks().size(); ++t) {
    const auto [kind, k, i, j] = cholesky_key(s.tasks()[t]);
    std::set<std::size_t> expected;
    if (k > 0) expected.insert(last_update(i, j, k));
    if (kind == TaskKind::trsm) expected.insert(task(TaskKind::potrf, k, k, k));
    if (kind == TaskKind::syrk) expected.insert(task(TaskKind::trsm, k, i, k));
    if (kind == TaskKind::gemm) expected.insert({task(TaskKind::trsm, k, i, k), task(TaskKind::trsm, k, j, k)});
    const std::vector<std::size_t>& actual = s.tasks()[t].predecessors;
    EXPECT_EQ(std::set<std::size_t>(actual.begin(), actual.end()), expected)
        << "kind " << static_cast<int>(kind) << " k=" << k << " i=" << i << " j=" << j;
    const TaskHints& hints = s.tasks()[t].hints;
    const TaskHints expected_hints = critical_path_hints(kind, k, i, j, nt);
    EXPECT_EQ(hints.priority, expected_hints.priority) << "kind " << static_cast<int>(kind);
    // Critical: potrf, the panel trsm, and the updates of the next panel (column k + 1).
    EXPECT_EQ(hints.critical, kind == TaskKind::potrf || kind == TaskKind::trsm || j == k + 1);
    EXPECT_EQ(hints.preferred, kind == TaskKind::potrf ? WorkerKind::cpu : WorkerKind::gpu);
    EXPECT_EQ(hints.bucket, kind);
  }
  // potrf -> trsm -> syrk -> next potrf, nt - 1 times.
  EXPECT_EQ(s.longest_path(), 3 * nt - 2);
}

TEST_P(CholeskyGraph, EachTaskGetsTheHintsOfItsOwnCoordinates) {
  const int nt = GetParam();
  HostTiles<float> tiles(nt * 3, nt * 3, 3, TileStructure::symmetric_lower);
  // Injective hints: a task that passed wrong coordinates would decode to another task. Every
  // field is set from the coordinates, so that each one is seen to reach the task unchanged.
  const SchedulingHints encode = [nt](TaskKind kind, int k, int i, int j, int tiles_per_side) {
    EXPECT_EQ(tiles_per_side, nt);
    TaskHints hints;
    hints.priority = ((static_cast<int>(kind) * 32 + k) * 32 + i) * 32 + j;
    hints.critical = (i + j) % 2 == 1;
    hints.preferred = static_cast<WorkerKind>((i + k) % 3);
    hints.bucket = static_cast<TaskKind>((j + k) % 7);
    return hints;
  };
  Submission s;
  insert_cholesky<float>(recording_context(s), tiles.grid(), encode);
  for (const RecordedTask& t : s.tasks()) {
    const auto [kind, k, i, j] = cholesky_key(t);
    const TaskHints expected = encode(kind, k, i, j, nt);
    EXPECT_EQ(t.hints.priority, expected.priority);
    EXPECT_EQ(t.hints.critical, expected.critical);
    EXPECT_EQ(t.hints.preferred, expected.preferred);
    EXPECT_EQ(t.hints.bucket, expected.bucket);
  }
}

TEST_P(CholeskyGraph, TheNextDiagonalTileOutranksTheRestOfTheTrailingUpdate) {
  const int nt = GetParam();
  HostTiles<double> tiles(nt * 2, nt * 2, 2, TileStructure::symmetric_lower);
  Submission s;
  insert_cholesky<double>(recording_context(s), tiles.grid(), critical_path_hints);
  // Within step k, the tasks that lead to potrf(k + 1) (trsm (k+1, k), syrk (k+1, k+1)) rank
  // above every other update of the step.
  for (const RecordedTask& a : s.tasks())
    for (const RecordedTask& b : s.tasks()) {
      const auto [kind_a, ka, ia, ja] = cholesky_key(a);
      const auto [kind_b, kb, ib, jb] = cholesky_key(b);
      const bool a_leads = ka == kb && ia == ka + 1 && (kind_a == TaskKind::trsm || kind_a == TaskKind::syrk);
      const bool b_updates = kb == ka && (kind_b == TaskKind::syrk || kind_b == TaskKind::gemm) && ib > ka + 1;
      if (a_leads && b_updates) {
        EXPECT_GT(a.hints.priority, b.hints.priority);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(TileCounts, CholeskyGraph, ::testing::Values(1, 2, 3, 5, 8));

// The block-column factorization: panel(k) on tiles (k.., k), update(k, j) reading tiles (j.., k)
// and writing (j.., j).
class BlockColumnGraph : public ::testing::TestWithParam<int> {};

TEST_P(BlockColumnGraph, TaskCountsEveryDependencyAndTheCriticalPath) {
  const int nt = GetParam();
  const int nb = 4;
  HostTiles<double> tiles(nt * nb - 1, nt * nb - 1, nb, TileStructure::symmetric_lower);
  Submission s;
  insert_cholesky_by_block_columns<double>(recording_context(s), tiles.grid(), critical_path_hints);

  ASSERT_EQ(static_cast<int>(s.tasks().size()), nt * (nt + 1) / 2);
  std::map<std::pair<int, int>, std::size_t> index;  // (k, j): j == k for the panel
  for (std::size_t t = 0; t < s.tasks().size(); ++t) {
    const RecordedTask& task = s.tasks()[t];
    const int k = task.accesses[0].j;
    const bool panel = task.kind == TaskKind::potrf;
    ASSERT_TRUE(panel || task.kind == TaskKind::gemm);
    const int j = panel ? k : task.accesses.back().j;
    const int first_row = panel ? k : j;
    ASSERT_EQ(static_cast<int>(task.accesses.size()), (panel ? 1 : 2) * (nt - first_row));
    for (std::size_t a = 0; a < task.accesses.size(); ++a) {
      const RecordedAccess& access = task.accesses[a];
      const bool written = panel || a >= task.accesses.size() / 2;
      EXPECT_EQ(access.writes, written);
      EXPECT_EQ(access.j, written ? j : k);
      EXPECT_EQ(access.i, first_row + static_cast<int>(a % (nt - first_row)));
    }
    ASSERT_TRUE(index.emplace(std::make_pair(k, j), t).second) << "two tasks with one key";
    EXPECT_EQ(task.hints.priority, critical_path_hints(task.kind, k, j, j, nt).priority);
    EXPECT_EQ(task.hints.critical, panel || j == k + 1);
  }
  // panel(k) waits for update(k - 1, k); update(k, j) for panel(k) and update(k - 1, j).
  for (const auto& [key, t] : index) {
    const auto [k, j] = key;
    std::set<std::size_t> expected;
    if (k > 0) expected.insert(index.at({k - 1, j}));
    if (j != k) expected.insert(index.at({k, k}));
    const std::vector<std::size_t>& actual = s.tasks()[t].predecessors;
    EXPECT_EQ(std::set<std::size_t>(actual.begin(), actual.end()), expected) << "k=" << k << " j=" << j;
  }
  // panel -> update of the next block column -> next panel, nt - 1 times.
  EXPECT_EQ(s.longest_path(), 2 * nt - 1);
  // The next block column's update outranks the rest of its step.
  for (int k = 0; k + 2 < nt; ++k)
    EXPECT_GT(s.tasks()[index.at({k, k + 1})].hints.priority, s.tasks()[index.at({k, k + 2})].hints.priority);
}

INSTANTIATE_TEST_SUITE_P(TileCounts, BlockColumnGraph, ::testing::Values(1, 2, 3, 5, 8));

// The whole matrix as one task: one potrf task, on the critical path, writing every lower tile
// column by column from the diagonal down (the order its implementations read the tiles in).
TEST(WholeMatrixGraph, OneTaskWritesEveryLowerTileColumnByColumn) {
  for (const int nt : {1, 2, 5}) {
    const int nb = 4;
    HostTiles<double> tiles(nt * nb - 1, nt * nb - 1, nb, TileStructure::symmetric_lower);
    Submission s;
    insert_cholesky<double>(recording_context(s), tiles.grid(), critical_path_hints, CholeskyPlan(TaskGrain::whole_matrix));
    ASSERT_EQ(s.tasks().size(), 1u) << "nt=" << nt;
    const RecordedTask& task = s.tasks().front();
    EXPECT_EQ(task.kind, TaskKind::potrf);
    EXPECT_TRUE(task.hints.critical);
    ASSERT_EQ(static_cast<int>(task.accesses.size()), nt * (nt + 1) / 2);
    std::size_t a = 0;
    for (int j = 0; j < nt; ++j)
      for (int i = j; i < nt; ++i, ++a) {
        EXPECT_EQ(task.accesses[a].i, i);
        EXPECT_EQ(task.accesses[a].j, j);
        EXPECT_TRUE(task.accesses[a].writes);
      }
  }
}

// The out-of-core order: the right-looking factorization's tasks, reordered by panels of tile
// columns (left-looking between panels, right-looking within one).
class PanelGraph : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(PanelGraph, TheSameTasksEachTileUpdatedInStepOrderAndPanelsRankedInOrder) {
  const std::vector<int> starts = GetParam();
  const int nt = 8, nb = 3;
  HostTiles<double> tiles(nt * nb - 2, nt * nb - 2, nb, TileStructure::symmetric_lower);
  Submission right_looking, panels;
  insert_cholesky<double>(recording_context(right_looking), tiles.grid(), critical_path_hints);
  insert_cholesky_in_panels<double>(recording_context(panels), tiles.grid(), critical_path_hints, starts);

  std::multiset<TaskKey> expected, actual;
  for (const RecordedTask& t : right_looking.tasks()) expected.insert(cholesky_key(t));
  for (const RecordedTask& t : panels.tasks()) actual.insert(cholesky_key(t));
  ASSERT_EQ(actual, expected);

  const auto panel_of = [&](int column) {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), column) - starts.begin()) - 1;
  };
  std::map<std::pair<int, int>, int> last_step;  // per tile (i, j): the step of its last update so far
  int previous_panel = 0;
  for (const RecordedTask& t : panels.tasks()) {
    const auto [kind, k, i, j] = cholesky_key(t);
    const int panel = panel_of(j);
    // Panels are inserted one after the other, each with the priorities of the critical path
    // lowered below the panel before.
    EXPECT_GE(panel, previous_panel);
    previous_panel = panel;
    EXPECT_EQ(t.hints.priority, in_panel(critical_path_hints(kind, k, i, j, nt), panel, nt).priority);
    EXPECT_EQ(t.hints.critical, critical_path_hints(kind, k, i, j, nt).critical);
    // A tile's updates come in step order, so each task reads what the steps before it wrote.
    const auto tile = std::make_pair(i, j);
    const auto seen = last_step.find(tile);
    if (kind == TaskKind::syrk || kind == TaskKind::gemm) {
      EXPECT_EQ(seen == last_step.end() ? -1 : seen->second, k - 1) << "tile " << i << "," << j;
      last_step[tile] = k;
    } else {
      EXPECT_EQ(seen == last_step.end() ? -1 : seen->second, k - 1) << "tile " << i << "," << j;
    }
  }
  for (const RecordedTask& a : panels.tasks())
    for (const RecordedTask& b : panels.tasks()) {
      const int pa = panel_of(std::get<3>(cholesky_key(a))), pb = panel_of(std::get<3>(cholesky_key(b)));
      if (pa < pb) {
        EXPECT_GT(a.hints.priority, b.hints.priority);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Panels, PanelGraph,
                         ::testing::Values(std::vector<int>{0}, std::vector<int>{0, 1}, std::vector<int>{0, 3, 5},
                                           std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}, std::vector<int>{0, 7}));

TEST(PanelsWithin, EachPanelFitsTheBudgetOrIsOneColumn) {
  const int nb = 4;
  for (int n : {1, 3, 4, 5, 17, 40}) {
    const HostTiles<double> tiles(n, n, nb, TileStructure::symmetric_lower);
    const TileGrid& grid = tiles.grid();
    const auto column_elements = [&](int j) { return double(n - j * nb) * grid.tile_width(j); };
    double all = 0;
    for (int j = 0; j < grid.tile_cols(); ++j) all += column_elements(j);
    EXPECT_EQ(panels_within(grid, all), std::vector<int>{0}) << n;
    for (double budget : {1.0, double(n) * nb, 2.5 * n * nb, all / 2}) {
      const std::vector<int> starts = panels_within(grid, budget);
      ASSERT_FALSE(starts.empty());
      EXPECT_EQ(starts.front(), 0);
      for (std::size_t p = 0; p < starts.size(); ++p) {
        const int end = p + 1 < starts.size() ? starts[p + 1] : grid.tile_cols();
        ASSERT_LT(starts[p], end) << "an empty panel";
        double held = 0;
        for (int j = starts[p]; j < end; ++j) held += column_elements(j);
        if (end - starts[p] > 1) {
          EXPECT_LE(held, budget) << "n=" << n << " budget=" << budget;
        }
        if (end < grid.tile_cols()) {
          EXPECT_GT(held + column_elements(end), budget) << "a panel closed early";
        }
      }
    }
  }
}

TEST(TileGrid, ATileLargerThanTheMatrixIsOneTile) {
  for (int nb : {37, 38, 4096, INT_MAX - 1, INT_MAX}) {
    const TileGrid grid(37, 3, nb, TileStructure::general, std::vector<void*>(1, nullptr));
    EXPECT_EQ(grid.tile_rows(), 1) << nb;
    EXPECT_EQ(grid.tile_cols(), 1) << nb;
    EXPECT_EQ(grid.tile_height(0), 37) << nb;
    EXPECT_EQ(grid.tile_width(0), 3) << nb;
  }
  EXPECT_EQ(TileGrid::tiles(0, 5), 0);
  EXPECT_EQ(TileGrid::tiles(INT_MAX, INT_MAX - 1), 2);
}

TEST(SolveGraph, TaskCountsAndTheCriticalPath) {
  for (int nt : {1, 2, 4, 7})
    for (int nr : {1, 3}) {
      HostTiles<double> L(nt * 5, nt * 5, 5, TileStructure::symmetric_lower);
      HostTiles<double> B(nt * 5, nr * 5 - 2, 5, TileStructure::general);
      Submission s;
      insert_cholesky_solve<double>(recording_context(s), L.grid(), B.grid(), critical_path_hints);
      const std::map<TaskKind, int> counts = count_kinds(s);
      EXPECT_EQ(counts.at(TaskKind::trsm), 2 * nt * nr) << nt << " " << nr;
      EXPECT_EQ(counts.count(TaskKind::gemm) ? counts.at(TaskKind::gemm) : 0, nt * (nt - 1) * nr);
      // Forward trsm/gemm alternating down the tiles, then back up.
      EXPECT_EQ(s.longest_path(), 4 * nt - 2) << nt << " " << nr;
      // The factor is only read.
      std::set<const void*> factor;
      for (int j = 0; j < nt; ++j)
        for (int i = j; i < nt; ++i) factor.insert(L.grid().ref(i, j).handle);
      for (const RecordedTask& t : s.tasks())
        for (const RecordedAccess& a : t.accesses)
          if (a.writes) {
            EXPECT_EQ(factor.count(a.handle), 0u);
          }
    }
}

// ---- executing the DAGs ----------------------------------------------------------------------

template <class T>
std::vector<T> random_spd(int n, int lda, std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> m(static_cast<std::size_t>(n) * n);
  for (double& x : m) x = value(random);
  std::vector<T> a(static_cast<std::size_t>(lda) * n, T(-7));  // -7 marks elements outside the matrix
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sum = i == j ? n : 0.0;
      for (int k = 0; k < n; ++k) sum += m[i + static_cast<std::size_t>(k) * n] * m[j + static_cast<std::size_t>(k) * n] / n;
      a[i + static_cast<std::size_t>(j) * lda] = static_cast<T>(sum);
    }
  return a;
}

template <class T>
double tolerance(int n) {
  return 50.0 * n * std::numeric_limits<T>::epsilon();
}

// The factorizations the LAPACK-layout tests run: tile tasks, block columns, the out-of-core
// order in panels of about two tile columns, the whole matrix as one task, and tile tasks of a
// tensor-core factorization (its context says so).
CholeskyPlan plan_named(const std::string& name, const TileGrid& A) {
  if (name == "block columns") return CholeskyPlan(TaskGrain::block_columns);
  if (name == "whole matrix") return CholeskyPlan(TaskGrain::whole_matrix);
  if (name == "panels") return CholeskyPlan(TaskGrain::tiles, panels_within(A, 2.0 * A.rows() * A.nb()));
  return CholeskyPlan(TaskGrain::tiles);
}

template <class T>
class LapackLayout : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LapackLayout, Precisions);

TYPED_TEST(LapackLayout, PosvInRandomOrdersSolvesAndKeepsTheOtherTriangle) {
  using T = TypeParam;
  const int nb = 8;
  std::mt19937 random(2026);
  for (const char* plan_name : {"tiles", "block columns", "panels", "whole matrix", "tensor cores"})
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int n : {1, nb - 1, nb, nb + 1, 2 * nb + 3, 37})
      for (int order = 0; order < 3; ++order) {
        const int lda = n + 2, ldb = n + 1, nrhs = 2;
        const std::vector<T> a0 = random_spd<T>(n, lda, random);
        std::vector<T> b0(static_cast<std::size_t>(ldb) * nrhs);
        for (T& x : b0) x = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(random));
        std::vector<T> a = a0, b = b0;
        HostTiles<T> A(n, n, nb, TileStructure::symmetric_lower);
        HostTiles<T> B(n, nrhs, nb, TileStructure::general);
        Submission s;
        TaskContext ctx = recording_context(s);
        // A float factorization's panel solves then go by the diagonal factor's inverse.
        if (std::string(plan_name) == "tensor cores") ctx.tensor_cores = TensorCores::tf32;
        insert_lapack_posv<T>(ctx, A.grid(), B.grid(), uplo, a.data(), lda, b.data(), ldb, critical_path_hints,
                              plan_named(plan_name, A.grid()));
        s.execute_in_random_order(random);
        ASSERT_EQ(s.info(), 0);
        const auto in_triangle = [uplo](int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; };
        // The factor's entry (i, j) of the stored triangle, 0 outside it; A0 x = b.
        const auto factor = [&](int i, int j) { return in_triangle(i, j) ? double(a[i + static_cast<std::size_t>(j) * lda]) : 0.0; };
        double worst = 0, worst_solve = 0;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            if (!in_triangle(i, j)) {
              EXPECT_EQ(a[i + static_cast<std::size_t>(j) * lda], a0[i + static_cast<std::size_t>(j) * lda]) << "other triangle written";
              continue;
            }
            double llt = 0;  // (L L^T)(i, j), or (U^T U)(i, j)
            for (int k = 0; k < n; ++k)
              llt += uplo == Uplo::lower ? factor(i, k) * factor(j, k) : factor(k, i) * factor(k, j);
            worst = std::max(worst, std::abs(llt - a0[i + static_cast<std::size_t>(j) * lda]) / n);
          }
        for (int r = 0; r < nrhs; ++r)
          for (int i = 0; i < n; ++i) {
            double ax = 0;
            for (int k = 0; k < n; ++k) {
              const int row = std::min(i, k), col = std::max(i, k);  // a0 is symmetric in both triangles
              ax += a0[row + static_cast<std::size_t>(col) * lda] * b[k + static_cast<std::size_t>(r) * ldb];
            }
            worst_solve = std::max(worst_solve, std::abs(ax - b0[i + static_cast<std::size_t>(r) * ldb]));
          }
        EXPECT_LT(worst, tolerance<T>(n)) << "n=" << n;
        EXPECT_LT(worst_solve, 100 * tolerance<T>(n)) << "n=" << n;
        EXPECT_EQ(a[lda - 1], a0[lda - 1]) << "padding below the matrix written";
      }
}

TYPED_TEST(LapackLayout, APivotThatFailsGivesItsColumnAndLeavesBAsItWas) {
  using T = TypeParam;
  const int nb = 4, n = 13, lda = n, ldb = n;
  std::mt19937 random(7);
  for (const char* plan_name : {"tiles", "block columns", "panels", "whole matrix"})
  for (int failing : {0, 3, 4, 5, 12})
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      std::vector<T> a = random_spd<T>(n, lda, random);
      a[failing + static_cast<std::size_t>(failing) * lda] = T(-1);
      std::vector<T> b(n, T(1));
      HostTiles<T> A(n, n, nb, TileStructure::symmetric_lower);
      HostTiles<T> B(n, 1, nb, TileStructure::general);
      Submission s;
      insert_lapack_posv<T>(recording_context(s), A.grid(), B.grid(), uplo, a.data(), lda, b.data(), ldb,
                            critical_path_hints, plan_named(plan_name, A.grid()));
      s.execute_in_random_order(random);
      EXPECT_EQ(s.info(), failing + 1);
      EXPECT_EQ(b, std::vector<T>(n, T(1)));
    }
}

TYPED_TEST(LapackLayout, PotrfThenPotrsEqualsPosv) {
  using T = TypeParam;
  const int nb = 5, n = 23, nrhs = 3;
  std::mt19937 random(11);
  const std::vector<T> a0 = random_spd<T>(n, n, random);
  std::vector<T> b0(static_cast<std::size_t>(n) * nrhs);
  for (T& x : b0) x = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(random));

  std::vector<T> a1 = a0, b1 = b0, a2 = a0, b2 = b0;
  HostTiles<T> A1(n, n, nb, TileStructure::symmetric_lower), B1(n, nrhs, nb, TileStructure::general);
  Submission posv;
  insert_lapack_posv<T>(recording_context(posv), A1.grid(), B1.grid(), Uplo::upper, a1.data(), n, b1.data(), n,
                        critical_path_hints);
  posv.execute_in_random_order(random);

  HostTiles<T> A2(n, n, nb, TileStructure::symmetric_lower), B2(n, nrhs, nb, TileStructure::general);
  Submission potrf, potrs;
  insert_lapack_potrf<T>(recording_context(potrf), A2.grid(), Uplo::upper, a2.data(), n, critical_path_hints);
  potrf.execute_in_random_order(random);
  HostTiles<T> A3(n, n, nb, TileStructure::symmetric_lower);
  insert_lapack_potrs<T>(recording_context(potrs), A3.grid(), B2.grid(), Uplo::upper, a2.data(), n, b2.data(), n,
                         critical_path_hints);
  potrs.execute_in_random_order(random);
  // The same operations on the same values in any order: the same results to the last bit.
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  // potrs reads A only.
  for (const RecordedTask& t : potrs.tasks())
    if (t.kind != TaskKind::copy_in && t.kind != TaskKind::copy_out)
      for (const RecordedAccess& access : t.accesses)
        if (access.writes) {
          EXPECT_EQ(access.handle, t.accesses.back().handle);
        }
}

// A tensor-core factorization keeps its panel inverses where the caller asks
// (TaskContext::kept_panel_inverses, tile (0, k) for diagonal tile k): every diagonal tile's, the
// last one's included, is the inverse of its factor tile, zeros above its diagonal, in any order
// of the tasks. Plans that solve their panels otherwise keep none.
TEST(KeptPanelInverses, EveryDiagonalTileInvertedInRandomOrders) {
  const int nb = 8;
  std::mt19937 random(41);
  for (int n : {1, nb - 1, nb, nb + 1, 2 * nb + 3, 37}) {
    SCOPED_TRACE(testing::Message() << "n=" << n);
    const int nt = TileGrid::tiles(n, nb);
    std::vector<float> a = random_spd<float>(n, n, random);
    HostTiles<float> A(n, n, nb, TileStructure::symmetric_lower);
    HostTiles<float> kept(nb, nt * (nb + 1), nb + 1, TileStructure::general);
    Submission s;
    TaskContext ctx = recording_context(s);
    ctx.tensor_cores = TensorCores::fp16;
    ctx.kept_panel_inverses = &kept.grid();
    ASSERT_TRUE(solves_panels_by_inverse<float>(ctx, A.grid(), CholeskyPlan(TaskGrain::tiles)));
    insert_lapack_potrf<float>(ctx, A.grid(), Uplo::lower, a.data(), n, critical_path_hints);
    s.execute_in_random_order(random);
    ASSERT_EQ(s.info(), 0);
    for (int k = 0; k < nt; ++k) {
      const TileRef X = kept.grid().ref(0, k);
      const auto x = [&](int i, int j) { return static_cast<const float*>(X.handle)[i + std::size_t(j) * X.rows]; };
      const int k0 = k * nb, kb = std::min(nb, n - k0);
      double worst = 0;  // max |X L_kk - I|
      for (int j = 0; j < kb; ++j)
        for (int i = 0; i < kb; ++i) {
          if (i < j) {
            EXPECT_EQ(x(i, j), 0.0f) << "tile " << k << " above its diagonal";
          }
          double product = 0;
          for (int m = j; m <= i; ++m) product += double(x(i, m)) * a[(k0 + m) + std::size_t(k0 + j) * n];
          worst = std::max(worst, std::abs(product - (i == j ? 1.0 : 0.0)));
        }
      EXPECT_LT(worst, 1e-4) << "tile " << k;
    }
  }
  HostTiles<float> A(37, 37, nb, TileStructure::symmetric_lower);
  Submission s;
  TaskContext ctx = recording_context(s);
  EXPECT_FALSE(solves_panels_by_inverse<float>(ctx, A.grid(), CholeskyPlan(TaskGrain::tiles))) << "FP32";
  ctx.tensor_cores = TensorCores::tf32;
  EXPECT_FALSE(solves_panels_by_inverse<double>(ctx, A.grid(), CholeskyPlan(TaskGrain::tiles))) << "double tiles";
  for (const char* plan_name : {"block columns", "panels", "whole matrix"})
    EXPECT_FALSE(solves_panels_by_inverse<float>(ctx, A.grid(), plan_named(plan_name, A.grid()))) << plan_name;
}

TYPED_TEST(LapackLayout, LogDiagonalsSumToTheLogDeterminantInRandomOrders) {
  using T = TypeParam;
  const int nb = 5, n = 23;
  std::mt19937 random(17);
  for (const char* plan_name : {"tiles", "block columns", "panels", "whole matrix"})
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      const std::vector<T> a0 = random_spd<T>(n, n, random);
      std::vector<T> a = a0;
      HostTiles<T> A(n, n, nb, TileStructure::symmetric_lower);
      std::vector<double> slots(static_cast<std::size_t>(A.grid().tile_rows()), std::nan(""));
      Submission s;
      insert_lapack_potrf<T>(recording_context(s), A.grid(), uplo, a.data(), n, critical_path_hints,
                             plan_named(plan_name, A.grid()), slots.data());
      s.execute_in_random_order(random);
      ASSERT_EQ(s.info(), 0);
      double from_slots = 0, from_factor = 0;
      for (double slot : slots) from_slots += slot;
      for (int j = 0; j < n; ++j) from_factor += 2.0 * std::log(double(a[j + static_cast<std::size_t>(j) * n]));
      EXPECT_NEAR(from_slots, from_factor, 1e-12 * std::abs(from_factor) + 1e-12) << plan_name;
    }
}

TYPED_TEST(LapackLayout, PotriInRandomOrdersInvertsAndKeepsTheOtherTriangle) {
  using T = TypeParam;
  const int nb = 6;
  std::mt19937 random(31);
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (int n : {1, nb - 1, nb, nb + 1, 2 * nb + 5, 29})
      for (int order = 0; order < 3; ++order) {
        const int lda = n + 3;
        const std::vector<T> a0 = random_spd<T>(n, lda, random);
        std::vector<T> a = a0;
        HostTiles<T> F(n, n, nb, TileStructure::symmetric_lower), I(n, n, nb, TileStructure::symmetric_lower);
        Submission potrf, potri;
        insert_lapack_potrf<T>(recording_context(potrf), F.grid(), uplo, a.data(), lda, critical_path_hints);
        potrf.execute_in_random_order(random);
        ASSERT_EQ(potrf.info(), 0);
        insert_lapack_potri<T>(recording_context(potri), I.grid(), uplo, a.data(), lda, critical_path_hints);
        potri.execute_in_random_order(random);
        ASSERT_EQ(potri.info(), 0);
        const auto in_triangle = [uplo](int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; };
        // The inverse's entry (i, j) from its stored triangle; A0 A^{-1} = I.
        const auto inverse = [&](int i, int j) {
          return in_triangle(i, j) ? double(a[i + static_cast<std::size_t>(j) * lda])
                                   : double(a[j + static_cast<std::size_t>(i) * lda]);
        };
        double worst = 0;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            if (!in_triangle(i, j)) {
              EXPECT_EQ(a[i + static_cast<std::size_t>(j) * lda], a0[i + static_cast<std::size_t>(j) * lda])
                  << "other triangle written";
            }
            double product = 0;
            for (int k = 0; k < n; ++k) {
              const int row = std::min(i, k), col = std::max(i, k);
              product += a0[row + static_cast<std::size_t>(col) * lda] * inverse(k, j);
            }
            worst = std::max(worst, std::abs(product - (i == j ? 1.0 : 0.0)));
          }
        EXPECT_LT(worst, 100 * tolerance<T>(n)) << "n=" << n;
        EXPECT_EQ(a[lda - 1], a0[lda - 1]) << "padding below the matrix written";
      }
}

// Complex Hermitian matrices through the same DAGs (the tasks' transposes are adjoints): posv and
// potri in random orders, tiles and out-of-core panels (the grains complex matrices take), both
// triangles; the diagonal's imaginary parts, which LAPACK does not read, hold garbage.
TEST(ComplexLapackLayout, PosvAndPotriInRandomOrders) {
  using Z = std::complex<double>;
  const int nb = 6;
  std::mt19937 random(99);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (const char* plan_name : {"tiles", "panels"})
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int n : {1, nb - 1, nb + 1, 2 * nb + 5, 23}) {
        const int lda = n + 2, nrhs = 2;
        std::vector<Z> g(static_cast<std::size_t>(n) * n), a0(static_cast<std::size_t>(lda) * n, Z(-7));
        for (Z& x : g) x = Z(value(random), value(random));
        const auto at = [lda](int i, int j) { return i + static_cast<std::size_t>(j) * lda; };
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            Z sum = i == j ? Z(n) : Z(0);
            for (int k = 0; k < n; ++k) sum += g[i + static_cast<std::size_t>(k) * n] * std::conj(g[j + static_cast<std::size_t>(k) * n]) / double(n);
            a0[at(i, j)] = i == j ? Z(sum.real(), 3.0) : sum;
          }
        std::vector<Z> b0(static_cast<std::size_t>(lda) * nrhs);
        for (Z& x : b0) x = Z(value(random), value(random));
        std::vector<Z> a = a0, b = b0;
        HostTiles<Z> A(n, n, nb, TileStructure::symmetric_lower), B(n, nrhs, nb, TileStructure::general);
        Submission posv;
        insert_lapack_posv<Z>(recording_context(posv), A.grid(), B.grid(), uplo, a.data(), lda, b.data(), lda,
                              critical_path_hints, plan_named(plan_name, A.grid()));
        posv.execute_in_random_order(random);
        ASSERT_EQ(posv.info(), 0);
        const auto in_triangle = [uplo](int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; };
        // A0 as Hermitian (the diagonal's imaginary parts dropped), and L with A0 = L L^H.
        const auto hermitian = [&](int i, int j) {
          if (i == j) return Z(a0[at(i, i)].real());
          return in_triangle(i, j) ? a0[at(i, j)] : std::conj(a0[at(j, i)]);
        };
        const auto lower_factor = [&](int i, int j) {
          if (i < j) return Z(0);
          return uplo == Uplo::lower ? a[at(i, j)] : std::conj(a[at(j, i)]);
        };
        double worst = 0, worst_solve = 0;
        for (int j = 0; j < n; ++j) {
          EXPECT_EQ(a[at(j, j)].imag(), 0.0) << "the factor's diagonal is real";
          for (int i = 0; i < n; ++i) {
            if (!in_triangle(i, j)) {
              EXPECT_EQ(a[at(i, j)], a0[at(i, j)]) << "other triangle written";
              continue;
            }
            Z llh = 0;
            for (int k = 0; k < n; ++k) llh += lower_factor(i, k) * std::conj(lower_factor(j, k));
            worst = std::max(worst, std::abs(llh - hermitian(i, j)) / n);
          }
        }
        for (int r = 0; r < nrhs; ++r)
          for (int i = 0; i < n; ++i) {
            Z ax = 0;
            for (int k = 0; k < n; ++k) ax += hermitian(i, k) * b[at(k, r)];
            worst_solve = std::max(worst_solve, std::abs(ax - b0[at(i, r)]));
          }
        EXPECT_LT(worst, tolerance<double>(n)) << plan_name << " n=" << n;
        EXPECT_LT(worst_solve, 100 * tolerance<double>(n)) << plan_name << " n=" << n;

        // The inverse from that factor: A0 A^{-1} = I.
        HostTiles<Z> I(n, n, nb, TileStructure::symmetric_lower);
        Submission potri;
        insert_lapack_potri<Z>(recording_context(potri), I.grid(), uplo, a.data(), lda, critical_path_hints);
        potri.execute_in_random_order(random);
        ASSERT_EQ(potri.info(), 0);
        const auto inverse = [&](int i, int j) { return in_triangle(i, j) ? a[at(i, j)] : std::conj(a[at(j, i)]); };
        double worst_inverse = 0;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            Z product = 0;
            for (int k = 0; k < n; ++k) product += hermitian(i, k) * inverse(k, j);
            worst_inverse = std::max(worst_inverse, std::abs(product - (i == j ? Z(1) : Z(0))));
          }
        EXPECT_LT(worst_inverse, 100 * tolerance<double>(n)) << plan_name << " n=" << n;
      }
}

}  // namespace
}  // namespace tessera::detail

namespace tessera::detail {
namespace {

TEST(GpuOwners, GridsAreAsSquareAsTheCountAllowsWithMoreRows) {
  const std::map<int, std::pair<int, int>> expected = {{1, {1, 1}}, {2, {2, 1}}, {3, {3, 1}}, {4, {2, 2}},
                                                       {6, {3, 2}}, {7, {7, 1}}, {8, {4, 2}}, {9, {3, 3}}};
  for (const auto& [gpus, shape] : expected) {
    const GpuOwners owners = GpuOwners::for_gpus(gpus);
    EXPECT_EQ(owners.rows, shape.first) << gpus << " GPUs";
    EXPECT_EQ(owners.cols, shape.second) << gpus << " GPUs";
    EXPECT_EQ(owners.gpus(), gpus);
  }
  EXPECT_EQ(GpuOwners::for_gpus(0).gpus(), 1);
}

// Every GPU owns tiles, the owners of a lower-triangular grid of 48 x 48 tiles share its updates
// within 10% on two GPUs (rows alternate) and 30% on up to eight (a 2-D grid's GPUs below its
// diagonal own more of the triangle's tiles; the difference falls as the grid grows), and chunks
// are dealt in turn.
TEST(GpuOwners, TilesOfALowerGridAreSharedEvenly) {
  for (int gpus : {2, 3, 4, 8}) {
    const GpuOwners owners = GpuOwners::for_gpus(gpus);
    const int nt = 48;
    std::vector<int> tiles(static_cast<std::size_t>(gpus), 0);
    std::vector<long long> updates(static_cast<std::size_t>(gpus), 0);
    for (int j = 0; j < nt; ++j)
      for (int i = j; i < nt; ++i) {
        const int g = owners.of_tile(i, j);
        ASSERT_GE(g, 0);
        ASSERT_LT(g, gpus);
        ++tiles[static_cast<std::size_t>(g)];
        updates[static_cast<std::size_t>(g)] += j;  // tile (i, j) takes j updates
      }
    const auto [fewest, most] = std::minmax_element(tiles.begin(), tiles.end());
    EXPECT_GT(*fewest, 0) << gpus << " GPUs";
    EXPECT_LE(*most - *fewest, nt) << gpus << " GPUs";
    const auto [least, busiest] = std::minmax_element(updates.begin(), updates.end());
    EXPECT_LE(static_cast<double>(*busiest), (gpus == 2 ? 1.1 : 1.3) * static_cast<double>(*least)) << gpus << " GPUs";
    for (int c = 0; c < 3 * gpus; ++c) EXPECT_EQ(owners.of_chunk(c), c % gpus);
  }
}

}  // namespace
}  // namespace tessera::detail
