// Scheduling policies: the runtime's policy (TESSERA_POLICY; tests/CMakeLists.txt runs these tests
// once per policy, each in its own process) factors correctly in every mode it supports, refuses
// the others, keeps its placement contract (read from the recorded schedule), keeps the task
// graph's order, and neither hangs nor loses tasks under concurrent submissions, an application's
// own tasks, and many factorizations in a row.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "application_tasks.hpp"
#include "policy_modes.hpp"
#include "tessera/policies.hpp"
#include "tessera/trace.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

const Mode kModes[] = {Mode::cpu, Mode::gpu, Mode::hybrid};

bool on_cuda(const TraceEvent& e) { return starpu_worker_get_type(e.worker) == STARPU_CUDA_WORKER; }

// (kind, step, i, j) of every task of a LAPACK-layout potrf on nt x nt tiles.
using TaskId = std::tuple<TaskKind, int, int, int>;

std::multiset<TaskId> expected_potrf_tasks(int nt) {
  std::multiset<TaskId> tasks;
  for (int j = 0; j < nt; ++j)
    for (int i = j; i < nt; ++i) {
      tasks.insert({TaskKind::copy_in, 0, i, j});
      tasks.insert({TaskKind::copy_out, 0, i, j});
    }
  for (int k = 0; k < nt; ++k) {
    tasks.insert({TaskKind::potrf, k, k, k});
    for (int i = k + 1; i < nt; ++i) {
      tasks.insert({TaskKind::trsm, k, i, k});
      tasks.insert({TaskKind::syrk, k, i, i});
      for (int j = k + 1; j < i; ++j) tasks.insert({TaskKind::gemm, k, i, j});
    }
  }
  return tasks;
}

// The order in which the tasks writing tile (i, j) must run: loaded, updated step by step, then
// factored (diagonal) or solved (panel), then stored.
int write_rank(const TraceEvent& e) {
  switch (e.kind) {
    case TaskKind::copy_in: return -1;
    case TaskKind::syrk:
    case TaskKind::gemm: return e.step;
    case TaskKind::potrf:
    case TaskKind::trsm: return 1 << 20;
    case TaskKind::copy_out: return 1 << 21;
    default: return 0;
  }
}

// Every tile's writers ran one after the other in the graph's order; each trsm ran after its
// diagonal tile's potrf. The runtime clock is shared by all workers.
void expect_graph_order(const std::vector<TraceEvent>& events) {
  std::map<std::pair<int, int>, std::vector<TraceEvent>> writers;
  std::map<int, double> potrf_end;
  for (const TraceEvent& e : events) {
    writers[{e.i, e.j}].push_back(e);
    if (e.kind == TaskKind::potrf) potrf_end[e.step] = e.end_us;
  }
  for (auto& [tile, list] : writers) {
    std::sort(list.begin(), list.end(), [](const TraceEvent& a, const TraceEvent& b) { return write_rank(a) < write_rank(b); });
    for (std::size_t n = 1; n < list.size(); ++n)
      EXPECT_GE(list[n].start_us, list[n - 1].end_us)
          << to_string(list[n].kind) << " k=" << list[n].step << " on tile (" << tile.first << "," << tile.second
          << ") started before " << to_string(list[n - 1].kind) << " k=" << list[n - 1].step << " ended";
  }
  for (const TraceEvent& e : events)
    if (e.kind == TaskKind::trsm) EXPECT_GE(e.start_us, potrf_end.at(e.step)) << "trsm (" << e.i << "," << e.j << ")";
}

// What every policy promises: the mode's workers only. What panel-cpu promises on top: the
// diagonal tiles on CPU workers, the updates on GPUs.
// The workers lookahead keeps for critical tasks: each GPU's lowest-numbered CUDA worker, where
// the GPU has more than one.
std::set<int> kept_streams() {
  std::map<int, std::vector<int>> workers_of_gpu;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER)
      workers_of_gpu[starpu_worker_get_devid(static_cast<int>(w))].push_back(static_cast<int>(w));
  std::set<int> kept;
  for (const auto& [gpu, workers] : workers_of_gpu)
    if (workers.size() > 1) kept.insert(*std::min_element(workers.begin(), workers.end()));
  return kept;
}

void expect_placement(const std::vector<TraceEvent>& events, Mode resolved) {
  const std::string policy = runtime().scheduler();
  const std::set<int> kept = policy == "lookahead" ? kept_streams() : std::set<int>{};
  for (const TraceEvent& e : events) {
    const bool tile_kernel = e.kind == TaskKind::potrf || e.kind == TaskKind::trsm || e.kind == TaskKind::syrk ||
                             e.kind == TaskKind::gemm;
    const std::string what = std::string(to_string(e.kind)) + " on " + e.worker_name;
    if (!tile_kernel || resolved == Mode::cpu) EXPECT_FALSE(on_cuda(e)) << what << " in " << to_string(resolved) << " mode";
    if (tile_kernel && resolved == Mode::gpu) EXPECT_TRUE(on_cuda(e)) << what << " in gpu mode";
    if (policy == "panel-cpu" && resolved == Mode::hybrid && tile_kernel) {
      if (e.kind == TaskKind::potrf) EXPECT_FALSE(on_cuda(e)) << what << ": panel-cpu runs potrf on CPUs";
      if (e.kind != TaskKind::potrf) EXPECT_TRUE(on_cuda(e)) << what << ": panel-cpu runs the updates on GPUs";
    }
    if (kept.count(e.worker))
      EXPECT_TRUE(critical_path_hints(e.kind, e.step, e.i, e.j, 0).critical)
          << what << " at step " << e.step << ", tile (" << e.i << ", " << e.j << "): lookahead keeps that stream for critical tasks";
  }
}

std::vector<TraceEvent> traced_potrf(int n, int nb, Mode mode, Uplo uplo, unsigned seed,
                                     const SchedulingHints& hints = critical_path_hints) {
  const std::vector<double> A = random_spd<double>(n, n, seed);
  std::vector<double> F = A;
  FactorOptions options;
  options.nb = nb;
  options.mode = mode;
  options.uplo = uplo;
  options.hints = hints;
  options.trace = std::make_shared<Trace>();
  EXPECT_EQ(potrf(runtime(), n, F.data(), n, options), 0);
  EXPECT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << "n=" << n << " nb=" << nb << " " << to_string(mode);
  return options.trace->events();
}

TEST(Policies, ListedByNameTesseraFirst) {
  const std::vector<PolicyInfo> all = scheduling_policies();
  std::set<std::string> names;
  bool builtins_started = false;
  for (const PolicyInfo& p : all) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name << " listed twice";
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_FALSE(builtins_started && p.tessera) << p.name << " listed after StarPU's policies";
    builtins_started = builtins_started || !p.tessera;
  }
  for (const char* name : {"panel-cpu", "critical-path-heft", "locality-ws", "owner-computes", "dmdas", "lws", "heteroprio"})
    EXPECT_EQ(names.count(name), 1u) << name;
  EXPECT_EQ(runtime().scheduler(), running_policy().name);
}

TEST(Policies, FactorsCorrectlyInEveryModeItRuns) {
  for (Mode mode : kModes) {
    if (!resolved_here(mode) || !policy_runs(*resolved_here(mode))) continue;
    unsigned seed = 11;
    for (const auto& [n, nb] : {std::pair{1, 8}, {17, 8}, {100, 16}, {257, 64}, {500, 96}})
      for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        const std::vector<TraceEvent> events = traced_potrf(n, nb, mode, uplo, seed++);
        const int nt = (n + nb - 1) / nb;
        EXPECT_EQ(events.size(), expected_potrf_tasks(nt).size()) << "n=" << n << " nb=" << nb;
      }
  }
}

TEST(Policies, RefusesTheModesItCannotRun) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA worker: every policy runs the cpu mode a GPU-less machine resolves to";
  for (Mode mode : {Mode::gpu, Mode::hybrid}) {
    if (policy_runs(mode)) continue;
    std::vector<double> A = random_spd<double>(64, 64, 3);
    FactorOptions options;
    options.mode = mode;
    options.nb = 16;
    EXPECT_THROW(potrf(runtime(), 64, A.data(), 64, options), RuntimeError) << to_string(mode);
  }
}

TEST(Policies, KeepsItsPlacementContract) {
  for (Mode mode : kModes) {
    if (!resolved_here(mode) || !policy_runs(*resolved_here(mode))) continue;
    const std::vector<TraceEvent> events = traced_potrf(600, 64, mode, Uplo::lower, 5);
    ASSERT_FALSE(events.empty());
    expect_placement(events, *resolved_here(mode));
    if (runtime().scheduler() == "lookahead" && *resolved_here(mode) == Mode::gpu && !kept_streams().empty()) {
      const std::set<int> kept = kept_streams();
      EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const TraceEvent& e) { return kept.count(e.worker) > 0; }))
          << "no task ran on a kept stream";
    }
  }
}

// The rank of a CUDA worker's GPU among the runtime's GPUs, by device number.
int gpu_of_worker(int worker) {
  std::set<int> devices;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER) devices.insert(starpu_worker_get_devid(static_cast<int>(w)));
  return static_cast<int>(std::distance(devices.begin(), devices.find(starpu_worker_get_devid(worker))));
}

// Tile (i, j)'s GPU in the 2-D block-cyclic map over a P x Q grid of `gpus` (P >= Q, as square as
// the count allows), written out here as RuntimeOptions::gpu_placement documents it.
int block_cyclic_gpu(int gpus, int i, int j) {
  int cols = 1;
  for (int q = 2; q * q <= gpus; ++q)
    if (gpus % q == 0) cols = q;
  const int rows = gpus / cols;
  return (i % rows) * cols + j % cols;
}

bool is_tile_kernel(const TraceEvent& e) {
  return e.kind == TaskKind::potrf || e.kind == TaskKind::trsm || e.kind == TaskKind::syrk || e.kind == TaskKind::gemm;
}

TEST(Policies, TileTasksRunOnTheGpuOwningTheirTile) {
  const int gpus = runtime().cuda_devices();
  if (gpus < 2) GTEST_SKIP() << "fewer than two GPUs (" << gpus << "): no tile is placed";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const std::vector<TraceEvent> events = traced_potrf(1000, 100, Mode::gpu, Uplo::lower, 11);
  std::vector<int> tasks_per_gpu(static_cast<std::size_t>(gpus), 0);
  for (const TraceEvent& e : events) {
    if (!is_tile_kernel(e)) continue;
    ASSERT_TRUE(on_cuda(e)) << to_string(e.kind) << " on " << e.worker_name;
    EXPECT_EQ(gpu_of_worker(e.worker), block_cyclic_gpu(gpus, e.i, e.j))
        << to_string(e.kind) << " (" << e.i << "," << e.j << ") k=" << e.step << " on " << e.worker_name;
    ++tasks_per_gpu[static_cast<std::size_t>(gpu_of_worker(e.worker))];
  }
  for (int g = 0; g < gpus; ++g) EXPECT_GT(tasks_per_gpu[static_cast<std::size_t>(g)], 0) << "GPU " << g << " ran nothing";
}

// Tessera's hints with every task placed on `gpu`.
SchedulingHints hints_naming_gpu(int gpu) {
  return [gpu](TaskKind kind, int k, int i, int j, int nt) {
    TaskHints hints = critical_path_hints(kind, k, i, j, nt);
    hints.gpu = gpu;
    return hints;
  };
}

// A hints function may name the GPU itself: every tile task then runs there (with one GPU, on
// its several workers, which the worker set of a placed task names).
TEST(Policies, TheGpuHintedRunsEveryTileTask) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA worker: no GPU to hint";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const int last = runtime().cuda_devices() - 1;
  std::set<int> workers;
  for (const TraceEvent& e : traced_potrf(700, 100, Mode::gpu, Uplo::lower, 23, hints_naming_gpu(last))) {
    if (!is_tile_kernel(e)) continue;
    ASSERT_TRUE(on_cuda(e)) << to_string(e.kind) << " on " << e.worker_name;
    EXPECT_EQ(gpu_of_worker(e.worker), last) << to_string(e.kind) << " on " << e.worker_name;
    workers.insert(e.worker);
  }
  EXPECT_FALSE(workers.empty());
}

// In cpu mode no task runs on a GPU, so a GPU named by the hints, even one the runtime lacks, is
// ignored.
TEST(Policies, CpuModeIgnoresGpuHints) {
  if (!policy_runs(Mode::cpu)) GTEST_SKIP() << runtime().scheduler() << " does not run cpu mode";
  const std::vector<TraceEvent> events = traced_potrf(300, 64, Mode::cpu, Uplo::lower, 29, hints_naming_gpu(7));
  EXPECT_FALSE(events.empty());
}

TEST(Policies, AHintedGpuTheRuntimeLacksIsRefused) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA worker: cpu mode ignores GPU hints";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const int gpus = runtime().cuda_devices();
  std::vector<double> A = random_spd<double>(64, 64, 3);
  FactorOptions options;
  options.nb = 32;
  options.mode = Mode::gpu;
  options.hints = hints_naming_gpu(gpus);
  EXPECT_THROW(potrf(runtime(), 64, A.data(), 64, options), InvalidArgument);
}

// With no CPU timing for a tile size, a policy that places tasks by perf models would run tasks
// on CPU workers to calibrate them; in hybrid mode that puts half-second tasks on the critical
// path of a factorization the GPU finishes in milliseconds. No CPU worker may take such a task
// blind. The tile order 389 is used by no other test, so no CPU timing of it exists (hybrid runs
// never create one).
TEST(Policies, HybridModeRunsNoLargeTaskOnACpuWithoutItsTiming) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA worker: hybrid mode runs on the CPUs alone";
  if (!running_policy().uses_perf_models || !policy_runs(Mode::hybrid))
    GTEST_SKIP() << runtime().scheduler() << " does not place tasks by perf models in hybrid mode";
  const int nb = 389;
  const std::vector<TraceEvent> events = traced_potrf(3 * nb, nb, Mode::hybrid, Uplo::lower, 8);
  ASSERT_EQ(events.size(), expected_potrf_tasks(3).size());
  for (const TraceEvent& e : events) {
    const bool tile_kernel = e.kind == TaskKind::potrf || e.kind == TaskKind::trsm || e.kind == TaskKind::syrk ||
                             e.kind == TaskKind::gemm;
    if (tile_kernel) EXPECT_TRUE(on_cuda(e)) << to_string(e.kind) << " (" << e.i << ", " << e.j << ") on " << e.worker_name;
  }
}

TEST(Policies, KeepsTheGraphOrder) {
  const std::vector<TraceEvent> events = traced_potrf(640, 64, a_mode_the_policy_runs(), Uplo::lower, 6);
  std::multiset<TaskId> ran;
  for (const TraceEvent& e : events) ran.insert({e.kind, e.step, e.i, e.j});
  EXPECT_EQ(ran, expected_potrf_tasks(10));
  expect_graph_order(events);
  // A CPU worker runs one task at a time.
  std::map<int, std::vector<TraceEvent>> by_worker;
  for (const TraceEvent& e : events)
    if (!on_cuda(e)) by_worker[e.worker].push_back(e);
  for (auto& [worker, list] : by_worker)
    for (std::size_t n = 1; n < list.size(); ++n) EXPECT_GE(list[n].start_us, list[n - 1].end_us) << list[n].worker_name;
}

// An application's own tasks (application_tasks.hpp), on the CPUs or claiming CUDA only.
starpu_codelet* application_codelet(uint32_t where) {
  static starpu_codelet cpu_codelet = make_application_codelet();
  // Claims CUDA only: a GPU-less machine cannot run it.
  static starpu_codelet cuda_only_codelet = make_application_codelet(STARPU_CUDA);
  return where == STARPU_CUDA ? &cuda_only_codelet : &cpu_codelet;
}

int submit_application_task(uint32_t where) {
  starpu_task* task = starpu_task_create();
  task->cl = application_codelet(where);
  const int ret = starpu_task_submit(task);
  if (ret != 0) {
    task->destroy = 0;
    starpu_task_destroy(task);
  }
  return ret;
}

TEST(Policies, ConcurrentRequestsAndApplicationTasks) {
  runtime().set_pause_when_idle(false);  // the application's own tasks run between Tessera's requests
  const int before = application_tasks_run.load();
  constexpr int threads = 4, per_thread = 3, application_tasks = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < per_thread; ++r) {
        const int n = 150 + 37 * t + 11 * r;
        const std::vector<double> A = random_spd<double>(n, n, 100u + 10u * t + r);
        std::vector<double> F = A;
        FactorOptions options;
        options.nb = 32 + 8 * t;
        options.mode = a_mode_the_policy_runs();
        if (potrf(runtime(), n, F.data(), n, options) != 0 || factor_backward_error(Uplo::lower, n, A, F, n) >= 1.0)
          ++failures;
      }
    });
  pool.emplace_back([&] {
    for (int a = 0; a < application_tasks; ++a)
      if (submit_application_task(STARPU_CPU) != 0) ++failures;
  });
  for (auto& th : pool) th.join();
  starpu_task_wait_for_all();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(application_tasks_run.load() - before, application_tasks);
}

// StarPU's own copy tasks (starpu_data_cpy) end without the policy's post-execution hook; more of
// them than there are workers, then factorizations, which must still complete.
TEST(Policies, StarpuCopyTasksLeaveThePolicyWhole) {
  runtime().set_pause_when_idle(false);
  std::vector<double> from(64, 1.0), to(64, 0.0);
  starpu_data_handle_t source = nullptr, destination = nullptr;
  starpu_vector_data_register(&source, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(from.data()), from.size(), sizeof(double));
  starpu_vector_data_register(&destination, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(to.data()), to.size(), sizeof(double));
  const int copies = 4 * static_cast<int>(starpu_worker_get_count()) + 4;
  for (int c = 0; c < copies; ++c) ASSERT_EQ(starpu_data_cpy(destination, source, 1, nullptr, nullptr), 0);
  starpu_task_wait_for_all();
  starpu_data_unregister(source);
  starpu_data_unregister(destination);
  EXPECT_EQ(to, from);
  for (const int n : {97, 300}) {
    const std::vector<double> A = random_spd<double>(n, n, 7u + n);
    std::vector<double> F = A;
    FactorOptions options;
    options.nb = 32;
    options.mode = a_mode_the_policy_runs();
    ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0);
    EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
  }
}

TEST(Policies, TaskNoWorkerCanRunIsRefusedNotHung) {
  if (have_gpu()) GTEST_SKIP() << "this machine has CUDA workers: a CUDA-only task can run";
  runtime().set_pause_when_idle(false);
  EXPECT_EQ(submit_application_task(STARPU_CUDA), -ENODEV);
  const int before = application_tasks_run.load();
  EXPECT_EQ(submit_application_task(STARPU_CPU), 0);
  starpu_task_wait_for_all();
  EXPECT_EQ(application_tasks_run.load(), before + 1);
}

TEST(Policies, FiftyRandomFactorizationsInARow) {
  std::mt19937 gen(2024);
  std::uniform_int_distribution<int> size(1, 320), tile(8, 96), coin(0, 1);
  for (int r = 0; r < 50; ++r) {
    const int n = size(gen), nb = tile(gen);
    const Uplo uplo = coin(gen) ? Uplo::lower : Uplo::upper;
    const std::vector<double> A = random_spd<double>(n, n, 500u + r);
    std::vector<double> F = A;
    FactorOptions options;
    options.nb = nb;
    options.uplo = uplo;
    options.mode = a_mode_the_policy_runs();
    ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0) << "run " << r << ": n=" << n << " nb=" << nb;
    ASSERT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << "run " << r << ": n=" << n << " nb=" << nb;
  }
}

}  // namespace
}  // namespace tessera::test
