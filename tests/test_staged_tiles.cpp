// A host array factored with its tiles in GPU memory (HostTiles::staged, which auto chooses in gpu
// mode for a first call of 1 GiB or more), each tile on the GPU owning it: tiles larger than a
// staging slot copied in pieces, the caller's other triangle left as it was, nothing moved between
// host and GPU by the runtime itself, LAPACK's info for a failing minor and for a NaN or infinity
// at the edges of tiles and pieces, posv and potrs, two calls sharing the slots.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/tessera.h"
#include "policy_modes.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

// Tiles of 1024 doubles or 1100 floats take 8 and 4.6 MiB: every tile is copied in pieces of
// whole columns of at most 4 MiB (a staging slot), and a diagonal tile's pieces start on its
// diagonal (a 1024 tile of doubles: columns [0, 512) then [512, 1024)).
template <class T>
constexpr int kPiecedTile = std::is_same_v<T, double> ? 1024 : 1100;

// A runtime beside the test binary's, on the same StarPU, with its own host-tile setting.
std::unique_ptr<Runtime> runtime_with(HostTiles host_tiles) {
  runtime();  // StarPU started with the test binary's options
  RuntimeOptions options = RuntimeOptions::from_environment();
  options.host_tiles = host_tiles;
  return std::make_unique<Runtime>(options);
}

// Every call staged where it can be.
Runtime& staged_runtime() {
  static std::unique_ptr<Runtime> rt = runtime_with(HostTiles::staged);
  return *rt;
}

// Why a staged call cannot run here, or "" when it can.
std::string why_not_staged() {
  if (!have_gpu()) return "no CUDA worker: this machine has no usable GPU";
  if (!policy_runs(Mode::gpu)) return runtime().scheduler() + " does not run gpu mode";
  return "";
}

#define TESSERA_SKIP_UNLESS_STAGED()                     \
  do {                                                   \
    const std::string why = why_not_staged();            \
    if (!why.empty()) GTEST_SKIP() << why;               \
  } while (0)

template <class T>
FactorOptions staged_options(int nb, std::shared_ptr<Trace> trace = nullptr) {
  FactorOptions options;
  options.nb = nb;
  options.mode = Mode::gpu;
  options.uplo = Uplo::lower;
  options.trace = std::move(trace);
  return options;
}

// Lower triangle SPD, strict upper triangle `upper` (never read, never written).
template <class T>
std::vector<T> lower_spd(int n, unsigned seed, T upper) {
  std::vector<T> A = random_spd<T>(n, n, seed);
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) A[i + static_cast<std::size_t>(j) * n] = upper;
  return A;
}

// The copies of a traced call that ran on CUDA workers (a staged call's) and on CPU workers.
struct CopiesIn {
  int on_gpu = 0;
  int on_cpu = 0;
};
CopiesIn copies_in(const Trace& trace) {
  CopiesIn copies;
  for (const TraceEvent& e : trace.events())
    if (e.kind == TaskKind::copy_in) (e.worker_name.rfind("CUDA", 0) == 0 ? copies.on_gpu : copies.on_cpu) += 1;
  return copies;
}

// Entries of the strict triangle `triangle` of the n x n F that differ from `value`.
template <class T>
int changed_in_strict_triangle(const std::vector<T>& F, int n, Uplo triangle, T value) {
  int changed = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (triangle == Uplo::upper ? i < j : i > j) changed += F[i + static_cast<std::size_t>(j) * n] != value;
  return changed;
}

bool host_memory_node(const std::string& node) { return node.rfind("CUDA", 0) != 0; }

// A staged call's copies: packing on CPU workers, the copy to the GPU on CUDA workers. The tiles
// live on the GPUs: the runtime itself moves no data between host and GPU (only the slots'
// handles, which carry none); between GPUs it moves the tiles a GPU reads of another's.
void expect_staged_copies(const Trace& trace) {
  const CopiesIn copies = copies_in(trace);
  EXPECT_GT(copies.on_gpu, 0) << "not staged";
  EXPECT_EQ(copies.on_gpu, copies.on_cpu);
  for (const TraceTransfer& t : trace.transfers())
    if (host_memory_node(t.from) || host_memory_node(t.to)) EXPECT_EQ(t.bytes, 0) << t.from << " -> " << t.to;
}

// A staged factorization of the triangle `uplo` of an SPD matrix whose other strict triangle
// holds a value that must be neither read nor written.
template <class T>
void expect_staged_factor(Uplo uplo, int n, int nb) {
  const Uplo other = uplo == Uplo::lower ? Uplo::upper : Uplo::lower;
  const T untouched = T(-3.25);
  const std::vector<T> A = random_spd<T>(n, n, 11u + n);  // both triangles: the reference
  std::vector<T> F = A;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (other == Uplo::upper ? i < j : i > j) F[i + static_cast<std::size_t>(j) * n] = untouched;
  auto trace = std::make_shared<Trace>();
  FactorOptions options = staged_options<T>(nb, trace);
  options.uplo = uplo;
  ASSERT_EQ(potrf(staged_runtime(), n, F.data(), n, options), 0) << "n=" << n << " nb=" << nb;
  EXPECT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << "n=" << n << " nb=" << nb;
  EXPECT_EQ(changed_in_strict_triangle(F, n, other, untouched), 0);
  expect_staged_copies(*trace);
}

TEST(Staged, FactorsTilesCopiedInPiecesAndLeavesTheUpperTriangle) {
  TESSERA_SKIP_UNLESS_STAGED();
  expect_staged_factor<double>(Uplo::lower, 2 * kPiecedTile<double> + 337, kPiecedTile<double>);
  expect_staged_factor<float>(Uplo::lower, 2 * kPiecedTile<float> + 337, kPiecedTile<float>);
  expect_staged_factor<double>(Uplo::lower, 1, 1);
  expect_staged_factor<double>(Uplo::lower, 97, 16);  // tiles of one piece each, a prime order
}

TEST(Staged, InfoOfAFailingMinorAtTheEdgesOfTilesAndPieces) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int nb = kPiecedTile<double>, n = 2 * nb + 101;
  const std::vector<double> A = lower_spd<double>(n, 5u, 0.0);
  for (const int column : {1, 512, 513, nb, nb + 1, nb + 512, nb + 513, 2 * nb, 2 * nb + 1, n}) {
    std::vector<double> F = A;
    F[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -100.0;
    EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, staged_options<double>(nb)), column) << "column " << column;
  }
}

TEST(Staged, NonFiniteInputFailsTheSmallestMinorHoldingIt) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int nb = kPiecedTile<double>, n = 2 * nb + 101;
  const std::vector<double> A = lower_spd<double>(n, 6u, 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Bad {
    int row, col;
    double value;
  };
  // (row, col) 0-based in the lower triangle: info row + 1, as LAPACK's; +inf on the diagonal has a
  // square root, so there LAPACK fails no minor (info 0).
  for (const Bad bad : {Bad{0, 0, nan}, Bad{600, 513, inf}, Bad{511, 511, nan}, Bad{512, 512, -inf},
                        Bad{nb + 3, 100, nan}, Bad{n - 1, 2 * nb + 50, nan}, Bad{n - 1, n - 1, inf}}) {
    std::vector<double> F = A;
    F[bad.row + static_cast<std::size_t>(bad.col) * n] = bad.value;
    const int expected = bad.row == bad.col && bad.value == inf ? 0 : bad.row + 1;
    EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, staged_options<double>(nb)), expected)
        << "(" << bad.row << ", " << bad.col << ")";
  }
  // Above the diagonal nothing is read.
  std::vector<double> F = A;
  F[5 + static_cast<std::size_t>(nb + 7) * n] = nan;
  EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, staged_options<double>(nb)), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
}

// The CUDA device of a worker named "CUDA d.s (...)", or -1 for another worker.
int cuda_device_of(const std::string& worker_name) {
  if (worker_name.rfind("CUDA ", 0) != 0) return -1;
  return std::stoi(worker_name.substr(5));
}

// On several GPUs each tile is staged on the GPU owning it: its copies in and out run on the GPU
// that runs its tile tasks, every GPU holds tiles, and nothing goes through host memory but the
// slots.
TEST(Staged, SeveralGpusCopyEachTileOnTheGpuOwningIt) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int gpus = runtime().cuda_devices();
  if (gpus < 2) GTEST_SKIP() << "the runtime drives one GPU: this needs two";
  if (RuntimeOptions::from_environment().gpu_placement != GpuPlacement::block_cyclic)
    GTEST_SKIP() << "the scheduler places the tasks (TESSERA_GPU_PLACEMENT=policy): the tiles are on the first GPU";
  for (const Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const int nb = kPiecedTile<double>, n = 4 * nb + 37;
    const std::vector<double> A = random_spd<double>(n, n, 41u);
    std::vector<double> F = A;
    auto trace = std::make_shared<Trace>();
    FactorOptions options = staged_options<double>(nb, trace);
    options.uplo = uplo;
    ASSERT_EQ(potrf(staged_runtime(), n, F.data(), n, options), 0) << to_string(uplo);
    EXPECT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << to_string(uplo);
    expect_staged_copies(*trace);
    std::map<std::pair<int, int>, std::set<int>> kernel_gpus, copy_gpus;
    for (const TraceEvent& e : trace->events()) {
      const int device = cuda_device_of(e.worker_name);
      if (device < 0) continue;
      const bool copy = e.kind == TaskKind::copy_in || e.kind == TaskKind::copy_out;
      (copy ? copy_gpus : kernel_gpus)[{e.i, e.j}].insert(device);
    }
    std::set<int> holding;
    for (const auto& [tile, devices] : copy_gpus) {
      const std::string where = std::string(to_string(uplo)) + " tile (" + std::to_string(tile.first) + ", " +
                                std::to_string(tile.second) + ")";
      EXPECT_EQ(devices.size(), 1u) << where << " copied on several GPUs";
      EXPECT_EQ(devices, kernel_gpus[tile]) << where;
      holding.insert(devices.begin(), devices.end());
    }
    EXPECT_EQ(static_cast<int>(holding.size()), gpus) << to_string(uplo) << ": some GPU holds no tile";
  }
}

// An upper-stored matrix is staged as stored: its blocks' columns copied in pieces, a diagonal
// block's only on and above the diagonal. The strict lower triangle is never read nor written.
TEST(Staged, UpperStoredFactorsItsBlocksAsStored) {
  TESSERA_SKIP_UNLESS_STAGED();
  expect_staged_factor<double>(Uplo::upper, 2 * kPiecedTile<double> + 337, kPiecedTile<double>);
  expect_staged_factor<float>(Uplo::upper, 2 * kPiecedTile<float> + 337, kPiecedTile<float>);
  expect_staged_factor<double>(Uplo::upper, 1, 1);
  expect_staged_factor<double>(Uplo::upper, 97, 16);
}

// Info of an upper-stored matrix: a failing minor, and a NaN or infinity at (row, col), row <= col,
// failing the minor of order col + 1; below the diagonal nothing is read.
TEST(Staged, UpperStoredInfoAtTheEdgesOfTilesAndPieces) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int nb = kPiecedTile<double>, n = 2 * nb + 101;
  const std::vector<double> A = random_spd<double>(n, n, 19u);
  FactorOptions options = staged_options<double>(nb);
  options.uplo = Uplo::upper;
  for (const int column : {1, 512, 513, nb, nb + 1, nb + 513, 2 * nb + 1, n}) {
    std::vector<double> F = A;
    F[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -100.0;
    EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, options), column) << "column " << column;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Bad {
    int row, col;
    double value;
  };
  for (const Bad bad : {Bad{0, 0, nan}, Bad{513, 600, inf}, Bad{0, 511, nan}, Bad{511, 512, -inf},
                        Bad{100, nb + 3, nan}, Bad{2 * nb + 50, n - 1, nan}, Bad{n - 1, n - 1, inf}}) {
    std::vector<double> F = A;
    F[bad.row + static_cast<std::size_t>(bad.col) * n] = bad.value;
    const int expected = bad.row == bad.col && bad.value == inf ? 0 : bad.col + 1;  // LAPACK's, as above
    EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, options), expected) << "(" << bad.row << ", " << bad.col << ")";
  }
  std::vector<double> F = A;
  F[(nb + 7) + static_cast<std::size_t>(5) * n] = nan;  // below the diagonal: not read
  EXPECT_EQ(potrf(staged_runtime(), n, F.data(), n, options), 0);
  EXPECT_LT(factor_backward_error(Uplo::upper, n, A, F, n), 1.0);
}

// posv and potrs stage the matrix as potrf does; their right-hand sides are pooled tiles, one CPU
// copy task each way per tile, which the runtime moves to the GPU and back.
template <class T>
void expect_staged_solves(Uplo uplo, int n, int nb, int nrhs) {
  const Uplo other = uplo == Uplo::lower ? Uplo::upper : Uplo::lower;
  const T untouched = T(-3.25);
  const std::vector<T> A = random_spd<T>(n, n, 23u + n);  // both triangles: the reference
  const std::vector<T> B = random_matrix<T>(n, nrhs, n, 29u + n);
  const int rhs_tiles = ((n + nb - 1) / nb) * ((nrhs + nb - 1) / nb);
  std::vector<T> F = A;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (other == Uplo::upper ? i < j : i > j) F[i + static_cast<std::size_t>(j) * n] = untouched;
  const std::string where = "uplo=" + std::string(to_string(uplo)) + " n=" + std::to_string(n);

  auto trace = std::make_shared<Trace>();
  FactorOptions options = staged_options<T>(nb, trace);
  options.uplo = uplo;
  std::vector<T> X = B;
  ASSERT_EQ(posv(staged_runtime(), n, nrhs, F.data(), n, X.data(), n, options), 0) << where;
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, X, B, n), kResidualThreshold) << where;
  EXPECT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << where;
  EXPECT_EQ(changed_in_strict_triangle(F, n, other, untouched), 0) << where;
  CopiesIn copies = copies_in(*trace);
  EXPECT_GT(copies.on_gpu, 0) << where << ": posv not staged";
  EXPECT_EQ(copies.on_cpu, copies.on_gpu + rhs_tiles) << where;

  trace = std::make_shared<Trace>();
  options.trace = trace;
  std::vector<T> Y = B;
  ASSERT_EQ(potrs(staged_runtime(), n, nrhs, F.data(), n, Y.data(), n, options), 0) << where;
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, Y, B, n), kResidualThreshold) << where;
  EXPECT_EQ(changed_in_strict_triangle(F, n, other, untouched), 0) << where;
  copies = copies_in(*trace);
  EXPECT_GT(copies.on_gpu, 0) << where << ": potrs not staged";
  EXPECT_EQ(copies.on_cpu, copies.on_gpu + rhs_tiles) << where;
}

TEST(Staged, SolvesStageTheMatrixAndPoolTheRightHandSides) {
  TESSERA_SKIP_UNLESS_STAGED();
  for (const Uplo uplo : {Uplo::lower, Uplo::upper}) {
    expect_staged_solves<double>(uplo, 2 * kPiecedTile<double> + 337, kPiecedTile<double>, 3);
    expect_staged_solves<float>(uplo, kPiecedTile<float> + 1, kPiecedTile<float>, 1);
    expect_staged_solves<double>(uplo, 1, 1, 2);
    expect_staged_solves<double>(uplo, 97, 16, 37);  // right-hand sides over three tile columns
  }
}

// A staged posv that fails: LAPACK's info, and B as it was, whichever triangle holds the matrix.
TEST(Staged, FailedPosvLeavesTheRightHandSides) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int nb = kPiecedTile<double>, n = 2 * nb + 101, nrhs = 2;
  const std::vector<double> A = random_spd<double>(n, n, 31u);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 37u);
  for (const Uplo uplo : {Uplo::lower, Uplo::upper}) {
    FactorOptions options = staged_options<double>(nb);
    options.uplo = uplo;
    for (const int column : {1, 513, nb + 1, n}) {
      std::vector<double> F = A, X = B;
      F[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -100.0;
      EXPECT_EQ(posv(staged_runtime(), n, nrhs, F.data(), n, X.data(), n, options), column)
          << to_string(uplo) << " column " << column;
      EXPECT_EQ(X, B) << to_string(uplo) << " column " << column;
    }
  }
}

TEST(Staged, TwoCallsInFlightShareTheSlots) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int nb = kPiecedTile<double>, n = 2 * nb + 64;
  const std::vector<double> A = lower_spd<double>(n, 7u, 0.0), B = lower_spd<double>(n, 8u, 0.0);
  std::vector<double> FA = A, FB = B;
  Request first = potrf_async(staged_runtime(), n, FA.data(), n, staged_options<double>(nb));
  Request second = potrf_async(staged_runtime(), n, FB.data(), n, staged_options<double>(nb));
  EXPECT_EQ(first.wait(), 0);
  EXPECT_EQ(second.wait(), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, FA, n), 1.0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, B, FB, n), 1.0);
}

// Hybrid where the GPU dominates (auto runs gpu mode there) is staged as gpu mode is. Tiles of 32
// are small enough for a CPU worker to take blind, so the CPUs may take tile tasks too: StarPU then
// brings those tiles to host memory and back, and the factor must still be right.
TEST(Staged, HybridWhereTheGpuDominatesIsStagedToo) {
  TESSERA_SKIP_UNLESS_STAGED();
  const ModeChoice automatic = staged_runtime().automatic_mode();
  if (automatic.mode != Mode::gpu) GTEST_SKIP() << "the GPU does not dominate here: " << automatic.reason;
  if (!policy_runs(Mode::hybrid)) GTEST_SKIP() << runtime().scheduler() << " does not run hybrid mode";
  int tile_tasks_on_cpus = 0;
  for (const int nb : {32, kPiecedTile<double>}) {
    const int n = 2 * nb + 37;
    const double upper = 3.5;
    const std::vector<double> A = lower_spd<double>(n, 13u + n, upper);
    std::vector<double> F = A;
    auto trace = std::make_shared<Trace>();
    FactorOptions options = staged_options<double>(nb, trace);
    options.mode = Mode::hybrid;
    ASSERT_EQ(potrf(staged_runtime(), n, F.data(), n, options), 0) << "nb=" << nb;
    EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0) << "nb=" << nb;
    EXPECT_EQ(changed_in_strict_triangle(F, n, Uplo::upper, upper), 0) << "nb=" << nb;
    const CopiesIn copies = copies_in(*trace);
    EXPECT_GT(copies.on_gpu, 0) << "nb=" << nb << ": not staged";
    EXPECT_EQ(copies.on_gpu, copies.on_cpu) << "nb=" << nb;
    for (const TraceEvent& e : trace->events())
      if (e.kind != TaskKind::copy_in && e.kind != TaskKind::copy_out && e.worker_name.rfind("CPU", 0) == 0)
        ++tile_tasks_on_cpus;
  }
  RecordProperty("tile_tasks_on_cpus", tile_tasks_on_cpus);
}

// The largest |A - L L^T| / |A| over `samples` entries of the lower triangle (i >= j), in double:
// a check of a factor of order ten thousand without the n^3 of a full product.
template <class T>
double sampled_factor_error(int n, const std::vector<T>& A, const std::vector<T>& L, int samples, unsigned seed) {
  std::mt19937 pick(seed);
  double worst = 0, largest = 0;
  for (const T& a : A) largest = std::max(largest, std::abs(double(a)));
  for (int s = 0; s < samples; ++s) {
    int i = static_cast<int>(pick() % n), j = static_cast<int>(pick() % n);
    if (i < j) std::swap(i, j);
    double sum = 0;
    for (int k = 0; k <= j; ++k)
      sum += double(L[i + static_cast<std::size_t>(k) * n]) * double(L[j + static_cast<std::size_t>(k) * n]);
    worst = std::max(worst, std::abs(sum - double(A[i + static_cast<std::size_t>(j) * n])));
  }
  return worst / largest;
}

// The copies of one automatic-mode call to potrf on a lower-stored array of order n, traced.
CopiesIn copies_of_automatic_call(Runtime& automatic, int n, unsigned seed) {
  const std::vector<double> A = lower_spd<double>(n, seed, 0.0);
  std::vector<double> F = A;
  auto trace = std::make_shared<Trace>();
  FactorOptions options = staged_options<double>(0, trace);  // nb: the default for n
  EXPECT_EQ(potrf(automatic, n, F.data(), n, options), 0);
  EXPECT_LT(sampled_factor_error(n, A, F, 64, seed), 1e-10) << "n=" << n;
  return copies_in(*trace);
}

// auto stages the runtime's first call on an array of 1 GiB or more (nothing pinned yet, in a
// process that may factor only once); a smaller first array is pinned in place instead, and later
// calls use pooled tiles, which the pool pins for reuse.
TEST(Staged, AutomaticStagesTheFirstCallOnAGigabyteArray) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int large = 11600;  // 1.08 GB of doubles
  {
    const std::unique_ptr<Runtime> automatic = runtime_with(HostTiles::automatic);
    EXPECT_EQ(copies_of_automatic_call(*automatic, 300, 9u).on_gpu, 0) << "a small first array";
  }
  const std::unique_ptr<Runtime> automatic = runtime_with(HostTiles::automatic);
  EXPECT_GT(copies_of_automatic_call(*automatic, large, 10u).on_gpu, 0) << "a large first array";
  EXPECT_EQ(copies_of_automatic_call(*automatic, large, 11u).on_gpu, 0) << "a large second array";
}

// The drop-in's one-shot dposv: a runtime's first call is staged when it is a posv too.
TEST(Staged, AutomaticStagesAFirstPosvOnAGigabyteArray) {
  TESSERA_SKIP_UNLESS_STAGED();
  const int n = 11600, nrhs = 2;
  const std::vector<double> A = random_spd<double>(n, n, 41u);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 43u);
  std::vector<double> F = A, X = B;
  auto trace = std::make_shared<Trace>();
  const std::unique_ptr<Runtime> automatic = runtime_with(HostTiles::automatic);
  ASSERT_EQ(posv(*automatic, n, nrhs, F.data(), n, X.data(), n, staged_options<double>(0, trace)), 0);
  EXPECT_GT(copies_in(*trace).on_gpu, 0) << "not staged";
  EXPECT_LT(sampled_factor_error(n, A, F, 64, 47u), 1e-10);
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, X, B, n), kResidualThreshold);
}

}  // namespace
}  // namespace tessera::test
