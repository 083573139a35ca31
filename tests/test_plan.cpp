// The plan layer (src/plan): every decision of a request from a machine snapshot, pinned against
// fake machines (no GPU and no StarPU needed), and one plan per request on a real runtime.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "plan.hpp"
#include "runtime_control.hpp"
#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/trace.hpp"
#include "test_support.hpp"
#include "thresholds.hpp"

namespace tessera {
namespace {

using detail::DataPlace;
using detail::Machine;
using detail::Path;
using detail::Plan;
using detail::PlanRequest;
using detail::kThresholds;

constexpr std::size_t kGiB = std::size_t(1) << 30;

Machine cpu_only(int workers) {
  Machine m;
  m.cpu_workers = workers;
  m.automatic = {Mode::cpu, "no CUDA worker"};
  return m;
}

// An H100 host: 15 CPU workers beside one GPU, whose FP64 dominates (auto runs gpu mode).
Machine one_gpu(std::size_t memory = 80 * kGiB) {
  Machine m;
  m.cpu_workers = 15;
  m.cuda_workers = 1;
  m.cuda_devices = 1;
  m.gpu_memory_bytes = memory;
  m.automatic = {Mode::gpu, "the GPUs dominate"};
  m.cuda_device_ids = {0};
  return m;
}

// Two GPUs whose tile tasks are placed on their owners.
Machine two_gpus() {
  Machine m = one_gpu();
  m.cuda_workers = 2;
  m.cuda_devices = 2;
  m.cuda_device_ids = {3, 5};
  m.gpus_for_tiles = 2;
  return m;
}

// A consumer GPU beside 16 cores: auto runs hybrid.
Machine weak_gpu() {
  Machine m = one_gpu(24 * kGiB);
  m.automatic = {Mode::hybrid, "the CPUs hold more"};
  return m;
}

// A request made where GPUs could take host work (a machine without any takes larger single
// matrices onto the calling thread: SmallHostWorkRunsOnTheCallingThread).
PlanRequest request(DataPlace place, int n, Mode mode = Mode::automatic, Precision precision = Precision::double_real) {
  PlanRequest r;
  r.place = place;
  r.n = n;
  r.precision = precision;
  r.options.mode = mode;
  r.gpus_present = [] { return true; };
  return r;
}

TEST(Plan, ModesResolveAgainstTheMachine) {
  struct Row {
    Machine machine;
    Mode requested;
    Mode expected;
  };
  const std::vector<Row> rows = {
      {cpu_only(2), Mode::automatic, Mode::cpu}, {cpu_only(2), Mode::cpu, Mode::cpu},
      {cpu_only(2), Mode::hybrid, Mode::cpu},    {one_gpu(), Mode::automatic, Mode::gpu},
      {one_gpu(), Mode::hybrid, Mode::hybrid},   {one_gpu(), Mode::cpu, Mode::cpu},
      {weak_gpu(), Mode::automatic, Mode::hybrid},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(to_string(row.requested)) + " on " + row.machine.automatic.reason);
    const Plan p = detail::plan(row.machine, request(DataPlace::host_array, 1000, row.requested));
    EXPECT_EQ(p.mode, row.expected);
    EXPECT_EQ(p.requested, row.requested);
    EXPECT_EQ(p.hybrid_without_gpu, row.requested == Mode::hybrid && row.machine.cuda_workers == 0);
    ASSERT_FALSE(p.why.empty());
    EXPECT_NE(p.why.front().find(std::string("mode ") + to_string(row.expected)), std::string::npos) << p.why.front();
  }
}

TEST(Plan, ModesTheMachineCannotRunAreErrors) {
  EXPECT_THROW(detail::plan(cpu_only(2), request(DataPlace::host_array, 10, Mode::gpu)), RuntimeError);
  Machine no_cpu = one_gpu();
  no_cpu.cpu_workers = 0;
  // Work for tasks (smaller work runs on the calling thread, which needs no worker).
  const int tasks_n = kThresholds.calling_thread_max_n_without_gpus + 1;
  EXPECT_THROW(detail::plan(no_cpu, request(DataPlace::host_array, tasks_n, Mode::cpu)), RuntimeError);
  Machine panel_cpu = one_gpu();
  panel_cpu.policy = {"panel-cpu", false, true, "its panels run on CPU workers"};
  try {
    detail::plan(panel_cpu, request(DataPlace::host_array, 10, Mode::gpu));
    FAIL() << "gpu mode under panel-cpu";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("panel-cpu"), std::string::npos) << e.what();
  }
  EXPECT_EQ(detail::plan(panel_cpu, request(DataPlace::host_array, 10, Mode::hybrid)).mode, Mode::hybrid);
}

TEST(Plan, AutomaticModeFallsBackToWhatThePolicyRuns) {
  const detail::GpuThroughput h100{132, 1.98, 90};
  detail::PolicyModes panel_cpu{"panel-cpu", false, true, "its panels run on CPU workers"};
  const ModeChoice choice = detail::automatic_mode_for(panel_cpu, 15, {h100});
  EXPECT_EQ(choice.mode, Mode::hybrid);
  EXPECT_NE(choice.reason.find("cannot run gpu mode"), std::string::npos) << choice.reason;
  EXPECT_EQ(detail::automatic_mode_for(detail::PolicyModes{}, 15, {h100}).mode, Mode::gpu);
}

TEST(Plan, DefaultTileSizesFollowTheTable) {
  struct Row {
    int n;
    Precision precision;
    Mode mode;
    int cpu_workers;
    int nb;
  };
  const Precision d = Precision::double_real, s = Precision::single_real;
  const std::vector<Row> rows = {
      {1, d, Mode::cpu, 0, 1},          {300, d, Mode::cpu, 0, 64},        {1000, d, Mode::cpu, 0, 128},
      {4000, d, Mode::cpu, 12, 256},    {4000, d, Mode::cpu, 2, 384},      {9000, d, Mode::cpu, 16, 384},
      {1000, d, Mode::gpu, 0, 256},     {4096, d, Mode::gpu, 0, 512},      {8192, d, Mode::gpu, 0, 1024},
      {16384, d, Mode::gpu, 0, 2048},   {16384, d, Mode::hybrid, 0, 1024}, {30000, d, Mode::hybrid, 0, 2048},
      {4096, s, Mode::gpu, 0, 1024},    {16384, s, Mode::gpu, 0, 2048},    {100, s, Mode::gpu, 0, 100},
  };
  for (const Row& row : rows)
    EXPECT_EQ(detail::default_tile_size(row.n, row.precision, row.mode, row.cpu_workers), row.nb)
        << "n = " << row.n << " in " << to_string(row.mode);
}

TEST(Plan, HybridTakesGpuTilesWhereTheGpusDominate) {
  const Plan dominated = detail::plan(one_gpu(), request(DataPlace::host_array, 16384, Mode::hybrid));
  EXPECT_TRUE(dominated.runs_as_gpu_mode);
  EXPECT_EQ(dominated.nb, 2048);
  const Plan balanced = detail::plan(weak_gpu(), request(DataPlace::host_array, 16384, Mode::hybrid));
  EXPECT_FALSE(balanced.runs_as_gpu_mode);
  EXPECT_EQ(balanced.nb, 1024);
}

TEST(Plan, AskedTileSizesAreKeptAndChecked) {
  PlanRequest r = request(DataPlace::host_array, 5000, Mode::cpu);
  r.options.nb = 200;
  EXPECT_EQ(detail::plan(cpu_only(2), r).nb, 200);
  r.options.nb = -1;
  EXPECT_THROW(detail::plan(cpu_only(2), r), InvalidArgument);
  // Three tiles of order 4096 in double are 384 MiB: more than a GPU of 256 MiB holds.
  r = request(DataPlace::host_array, 8192, Mode::gpu);
  r.options.nb = 4096;
  EXPECT_THROW(detail::plan(one_gpu(256 << 20), r), ResourceError);
  r.options.mode = Mode::cpu;
  EXPECT_EQ(detail::plan(one_gpu(256 << 20), r).nb, 4096);
}

TEST(Plan, DeviceMatricesUpToTheLimitAreOneVendorCallOnTheCallersStream) {
  const int limit = kThresholds.whole_device_matrix_max_n;
  for (const int n : {1, 4096, limit}) {
    const Plan p = detail::plan(one_gpu(), request(DataPlace::device_array, n));
    EXPECT_EQ(p.path, Path::callers_stream) << n;
    EXPECT_EQ(p.grain, TaskGrain::whole_matrix);
    EXPECT_EQ(p.nb, n);
  }
  const Plan above = detail::plan(one_gpu(), request(DataPlace::device_array, limit + 1));
  EXPECT_EQ(above.path, Path::tiles);
  EXPECT_EQ(above.nb, 2048);
  EXPECT_EQ(detail::plan(two_gpus(), request(DataPlace::device_array, 4096)).path, Path::tiles);
  EXPECT_EQ(detail::plan(weak_gpu(), request(DataPlace::device_array, 4096)).path, Path::tiles);
  PlanRequest traced = request(DataPlace::device_array, 4096);
  traced.options.trace = std::make_shared<Trace>();  // a trace records the runtime's tasks: one task, not the caller's stream
  EXPECT_EQ(detail::plan(one_gpu(), traced).path, Path::one_task);
  PlanRequest asked = request(DataPlace::device_array, 30000);
  asked.options.grain = TaskGrain::whole_matrix;
  const Plan whole = detail::plan(one_gpu(), asked);
  EXPECT_EQ(whole.path, Path::one_task);
  EXPECT_EQ(whole.nb, 30000);
  PlanRequest tiled = request(DataPlace::device_array, 4096);
  tiled.options.nb = 512;
  EXPECT_EQ(detail::plan(one_gpu(), tiled).path, Path::tiles);
}

// Up to the table's order such a call's launches are one CUDA graph replayed, in every scalar
// type; not above it, not for an inverse, and never off the caller's stream.
TEST(Plan, SmallDeviceFactorizationsReplayTheirLaunches) {
  const int limit = kThresholds.replayed_launches_max_n;
  ASSERT_LT(limit, kThresholds.whole_device_matrix_max_n);
  for (const Precision precision : {Precision::double_real, Precision::single_real, Precision::double_complex,
                                    Precision::single_complex})
    for (const int n : {1, 64, limit}) {
      PlanRequest r = request(DataPlace::device_array, n);
      r.precision = precision;
      const Plan p = detail::plan(one_gpu(), r);
      EXPECT_EQ(p.path, Path::callers_stream) << n;
      EXPECT_TRUE(p.replays_launches) << n;
      r.inverts = true;
      EXPECT_FALSE(detail::plan(one_gpu(), r).replays_launches) << "inverse, n = " << n;
    }
  EXPECT_FALSE(detail::plan(one_gpu(), request(DataPlace::device_array, limit + 1)).replays_launches);
  PlanRequest traced = request(DataPlace::device_array, 64);
  traced.options.trace = std::make_shared<Trace>();
  EXPECT_FALSE(detail::plan(one_gpu(), traced).replays_launches);
  PlanRequest asked = request(DataPlace::device_array, 64);
  asked.options.grain = TaskGrain::whole_matrix;
  EXPECT_FALSE(detail::plan(one_gpu(), asked).replays_launches);
  EXPECT_FALSE(detail::plan(two_gpus(), request(DataPlace::device_array, 64)).replays_launches);
}

// Up to the table's order for its scalar type a matrix's factorization on the caller's stream is
// one thread block's; not an inverse, not above that order, and never off the caller's stream.
TEST(Plan, SmallDeviceFactorizationsRunInOneBlock) {
  for (auto [precision, limit] : {std::pair{Precision::double_real, kThresholds.one_block_potrf_max_n},
                                  std::pair{Precision::single_real, kThresholds.one_block_potrf_max_n},
                                  std::pair{Precision::double_complex, kThresholds.one_block_potrf_max_n_complex_double},
                                  std::pair{Precision::single_complex, kThresholds.one_block_potrf_max_n_complex_single}})
    for (const int n : {1, 48, limit, limit + 1}) {
      ASSERT_LE(limit, kThresholds.replayed_launches_max_n);
      PlanRequest r = request(DataPlace::device_array, n);
      r.precision = precision;
      const Plan p = detail::plan(one_gpu(), r);
      EXPECT_EQ(p.path, Path::callers_stream) << n;
      EXPECT_EQ(p.factors_in_one_block, n <= limit) << n;
      r.inverts = true;
      EXPECT_FALSE(detail::plan(one_gpu(), r).factors_in_one_block) << "inverse, n = " << n;
    }
  PlanRequest traced = request(DataPlace::device_array, 64);
  traced.options.trace = std::make_shared<Trace>();
  EXPECT_FALSE(detail::plan(one_gpu(), traced).factors_in_one_block);
  EXPECT_FALSE(detail::plan(two_gpus(), request(DataPlace::device_array, 64)).factors_in_one_block);
}

// A tensor-core factorization with 16-bit operands of a float matrix in GPU memory on one GPU is
// recursive on the caller's stream from the table's order (its tiles are no task's, so no GPU is
// too small for them), the tile DAG below it; TF32, asked tiles, a trace or two GPUs keep the tile
// DAG.
TEST(Plan, LargeTensorCoreFactorizationsOfDeviceMatricesAreRecursiveOnTheCallersStream) {
  const int from = kThresholds.tensor_core_recursive_min_n;
  for (const int n : {from, 40000})
    for (const TensorCores cores : {TensorCores::fp16, TensorCores::bf16}) {
      PlanRequest r = request(DataPlace::device_array, n, Mode::automatic, Precision::single_real);
      r.options.tensor_cores = cores;
      const Plan p = detail::plan(one_gpu(16 * kGiB), r);
      EXPECT_EQ(p.path, Path::callers_stream) << n;
      EXPECT_EQ(p.grain, TaskGrain::whole_matrix) << n;
      EXPECT_EQ(p.tensor_cores, cores) << n;
    }
  for (const int n : {1, 4096, from - 1}) {
    PlanRequest r = request(DataPlace::device_array, n, Mode::automatic, Precision::single_real);
    r.options.tensor_cores = TensorCores::fp16;
    const Plan p = detail::plan(one_gpu(16 * kGiB), r);
    EXPECT_EQ(p.path, Path::tiles) << n;
    EXPECT_EQ(p.tensor_cores, TensorCores::fp16) << n;
  }
  PlanRequest r = request(DataPlace::device_array, from, Mode::automatic, Precision::single_real);
  r.options.tensor_cores = TensorCores::tf32;
  EXPECT_EQ(detail::plan(one_gpu(16 * kGiB), r).path, Path::tiles);
  r.options.tensor_cores = TensorCores::fp16;
  EXPECT_EQ(detail::plan(two_gpus(), r).path, Path::tiles);
  PlanRequest tiled = r;
  tiled.options.nb = 1024;
  EXPECT_EQ(detail::plan(one_gpu(), tiled).path, Path::tiles);
  tiled = r;
  tiled.options.grain = TaskGrain::tiles;
  EXPECT_EQ(detail::plan(one_gpu(), tiled).path, Path::tiles);
  PlanRequest traced = r;
  traced.options.trace = std::make_shared<Trace>();
  EXPECT_EQ(detail::plan(one_gpu(), traced).path, Path::tiles);
  PlanRequest on_cpus = r;
  on_cpus.options.mode = Mode::cpu;
  EXPECT_EQ(detail::plan(one_gpu(), on_cpus).path, Path::tiles);
}

// The inverse from a factor in GPU memory has its own limit: cuSOLVER's potri below it, the tile DAG
// above.
TEST(Plan, DeviceInversesUpToTheirLimitAreOneVendorCallOnTheCallersStream) {
  const int limit = kThresholds.whole_device_inverse_max_n;
  ASSERT_LT(limit, kThresholds.whole_device_matrix_max_n);
  for (const Precision precision : {Precision::double_real, Precision::single_complex}) {
    PlanRequest r = request(DataPlace::device_array, limit);
    r.precision = precision;
    r.inverts = true;
    EXPECT_EQ(detail::plan(one_gpu(), r).path, Path::callers_stream) << limit;
    r.n = limit + 1;
    EXPECT_EQ(detail::plan(one_gpu(), r).path, Path::tiles) << limit;
    r.inverts = false;
    EXPECT_EQ(detail::plan(one_gpu(), r).path, Path::callers_stream) << limit;
  }
  // There the triangle's inverse is one solve of the identity up to its order, by levels above.
  const int solve_max = kThresholds.triangle_inverse_by_solve_max_n;
  ASSERT_LT(solve_max, limit);
  EXPECT_FALSE(detail::triangle_inverse_by_levels(1));
  EXPECT_FALSE(detail::triangle_inverse_by_levels(solve_max));
  EXPECT_TRUE(detail::triangle_inverse_by_levels(solve_max + 1));
  EXPECT_TRUE(detail::triangle_inverse_by_levels(limit));
}

TEST(Plan, ResidentTilesUpToTheLimitAreGatheredIntoOneTask) {
  const int limit = kThresholds.whole_resident_tiles_max_n;
  int asked = 0;
  auto tiles = [&](int n, bool on_gpu) {
    PlanRequest r = request(DataPlace::tiles, n);
    r.tile_nb = 1024;
    r.tiles_on_first_gpu = [&asked, on_gpu] {
      ++asked;
      return on_gpu;
    };
    return r;
  };
  EXPECT_EQ(detail::plan(one_gpu(), tiles(limit, true)).path, Path::one_task);
  EXPECT_EQ(detail::plan(one_gpu(), tiles(limit, false)).path, Path::tiles);
  asked = 0;
  EXPECT_EQ(detail::plan(one_gpu(), tiles(limit + 1, true)).path, Path::tiles);
  EXPECT_EQ(detail::plan(cpu_only(2), tiles(1000, true)).path, Path::tiles);
  EXPECT_EQ(detail::plan(two_gpus(), tiles(1000, true)).path, Path::tiles);
  EXPECT_EQ(asked, 0) << "where the answer does not matter, the tiles are not asked where they are";
  // The gathered copy (800 MiB at n = 10240) within a quarter of the GPU's memory.
  EXPECT_EQ(detail::plan(one_gpu(2 * kGiB), tiles(limit, true)).path, Path::tiles);
  EXPECT_EQ(detail::plan(one_gpu(), tiles(limit, true)).nb, 1024);
}

TEST(Plan, MatricesLargerThanTheGpuAreCutIntoPanels) {
  PlanRequest r = request(DataPlace::host_array, 20000, Mode::gpu);
  r.options.nb = 1000;
  r.options.out_of_core_panel_percent = 30;
  // 20000^2 / 2 doubles are about 1.5 GiB: a GPU of 1 GiB needs panels.
  const Plan p = detail::plan(one_gpu(kGiB), r);
  ASSERT_GT(p.panel_starts.size(), 1u);
  EXPECT_EQ(p.panel_starts.front(), 0);
  EXPECT_EQ(p.cholesky().panel_starts, p.panel_starts);
  EXPECT_LE(detail::plan(one_gpu(), r).panel_starts.size(), 1u);
  r.options.out_of_core_panel_percent = 0;
  EXPECT_LE(detail::plan(one_gpu(kGiB), r).panel_starts.size(), 1u);
  r.options.out_of_core_panel_percent = 91;
  EXPECT_THROW(detail::plan(one_gpu(kGiB), r), InvalidArgument);
  r.factors = false;  // a solve has no panels, but the option is out of range all the same
  EXPECT_THROW(detail::plan(one_gpu(kGiB), r), InvalidArgument);
  r.n = 10;  // on the calling thread too
  EXPECT_THROW(detail::plan(one_gpu(kGiB), r), InvalidArgument);
}

TEST(Plan, BatchesAreChunkedForTheirWorkers) {
  PlanRequest r = request(DataPlace::batch, 100, Mode::cpu);  // work enough for tasks
  r.batch = 100;
  EXPECT_EQ(detail::plan(cpu_only(2), r).batch_chunk, 25);  // two chunks per worker
  r.options.mode = Mode::gpu;
  r.batch = 10000;
  EXPECT_EQ(detail::plan(one_gpu(), r).batch_chunk, 5000);
  r.batch = 300;
  EXPECT_EQ(detail::plan(one_gpu(), r).batch_chunk, kThresholds.gpu_chunk_min);
  r.batch_chunk = 7;
  EXPECT_EQ(detail::plan(one_gpu(), r).batch_chunk, 7);
  r.batch_chunk = -1;
  EXPECT_THROW(detail::plan(one_gpu(), r), InvalidArgument);
  r.batch = 0;  // nothing to chunk
  EXPECT_EQ(detail::plan(one_gpu(), r).batch_chunk, 0);
}

TEST(Plan, GpuInversesTakeTheBatchedKernelForSmallOrders) {
  const int long_stack = kThresholds.short_stack_max_batch, short_stack = long_stack - 1;
  EXPECT_TRUE(detail::inverse_takes_batched_kernel(1, 1));
  EXPECT_TRUE(detail::inverse_takes_batched_kernel(kThresholds.batched_inverse_max_n, long_stack));
  EXPECT_FALSE(detail::inverse_takes_batched_kernel(kThresholds.batched_inverse_max_n + 1, 10000));
  EXPECT_EQ(device::inverse_takes_batched_kernel(kThresholds.batched_inverse_max_n, 7),
            detail::inverse_takes_batched_kernel(kThresholds.batched_inverse_max_n, 7));
  // One matrix and a short stack, real or complex, have bounds of their own, below the long
  // stacks' one.
  for (const Precision precision : {Precision::single_real, Precision::double_complex, Precision::single_complex}) {
    const bool complex = precision != Precision::single_real;
    const int one = complex ? kThresholds.complex_single_inverse_max_n : kThresholds.single_inverse_max_n;
    const int short_max =
        complex ? kThresholds.short_stack_inverse_max_n_complex : kThresholds.short_stack_inverse_max_n_real;
    ASSERT_LT(one, short_max);
    ASSERT_LT(short_max, kThresholds.batched_inverse_max_n);
    EXPECT_TRUE(detail::inverse_takes_batched_kernel(one, 1, precision)) << one;
    EXPECT_FALSE(detail::inverse_takes_batched_kernel(one + 1, 1, precision)) << one;
    for (const int batch : {2, short_stack}) {
      EXPECT_TRUE(detail::inverse_takes_batched_kernel(short_max, batch, precision)) << short_max;
      EXPECT_FALSE(detail::inverse_takes_batched_kernel(short_max + 1, batch, precision)) << short_max;
    }
    EXPECT_TRUE(detail::inverse_takes_batched_kernel(short_max + 1, long_stack, precision)) << short_max;
  }
}

// One matrix past the kernel's orders goes to the dense call at every order; a stack never does.
TEST(Plan, OneGpuInverseTakesTheDenseCallPastTheKernel) {
  const int kernel_max = kThresholds.single_inverse_max_n;
  EXPECT_FALSE(detail::inverse_takes_dense_call(kernel_max, 1));
  EXPECT_TRUE(detail::inverse_takes_dense_call(kernel_max + 1, 1));
  EXPECT_TRUE(detail::inverse_takes_dense_call(100000, 1));
  EXPECT_FALSE(detail::inverse_takes_dense_call(kernel_max + 1, 2));
  EXPECT_FALSE(detail::inverse_takes_dense_call(100000, 2));
  EXPECT_TRUE(
      detail::inverse_takes_dense_call(kThresholds.complex_single_inverse_max_n + 1, 1, Precision::double_complex));
  EXPECT_EQ(device::inverse_takes_dense_call(300, 1, Precision::single_real),
            detail::inverse_takes_dense_call(300, 1, Precision::single_real));
}

TEST(Plan, StacksOfGpuMatricesGoWhereTheyRunFastest) {
  using detail::StackPath;
  EXPECT_EQ(detail::stack_path(8, 1), StackPath::batched_kernels);
  EXPECT_EQ(detail::stack_path(8, 3), StackPath::batched_kernels);
  // One matrix goes to the dense device API from its order.
  EXPECT_EQ(detail::stack_path(kThresholds.single_matrix_vendor_min_n - 1, 1), StackPath::batched_kernels);
  EXPECT_EQ(detail::stack_path(kThresholds.single_matrix_vendor_min_n, 1), StackPath::vendor_batched);
  // Stacks of a wave of blocks or fewer within the one-block orders: a thread block per matrix, in
  // every type; more matrices from a larger order while the stack is short, else the kernels.
  const int wave = kThresholds.one_block_stack_max_batch, from = kThresholds.one_block_stack_min_n;
  const int short_from = kThresholds.one_block_short_stack_min_n;
  for (auto [precision, largest] :
       {std::pair{Precision::double_real, kThresholds.blocked_stack_min_n_double - 1},
        std::pair{Precision::single_real, kThresholds.one_block_potrf_max_n},
        std::pair{Precision::double_complex, kThresholds.one_block_potrf_max_n_complex_double},
        std::pair{Precision::single_complex, kThresholds.one_block_potrf_max_n_complex_single}}) {
    for (const int n : {from, short_from, largest})
      for (const int batch : {2, wave}) EXPECT_EQ(detail::stack_path(n, batch, precision), StackPath::one_block) << n;
    EXPECT_EQ(detail::stack_path(from - 1, 2, precision), StackPath::batched_kernels);
    EXPECT_NE(detail::stack_path(largest + 1, 2, precision), StackPath::one_block);
    EXPECT_EQ(detail::stack_path(short_from - 1, wave + 1, precision), StackPath::batched_kernels);
    EXPECT_EQ(detail::stack_path(short_from, wave + 1, precision), StackPath::one_block);
    EXPECT_EQ(detail::stack_path(short_from, kThresholds.short_stack_max_batch - 1, precision), StackPath::one_block);
    EXPECT_NE(detail::stack_path(short_from, kThresholds.short_stack_max_batch, precision), StackPath::one_block);
    EXPECT_FALSE(device::stack_takes_batched_kernels(from, 2, precision));
  }
  // One complex matrix: its own bound per precision.
  for (auto [precision, bound] :
       {std::pair{Precision::double_complex, kThresholds.complex_double_single_matrix_vendor_min_n},
        std::pair{Precision::single_complex, kThresholds.complex_single_single_matrix_vendor_min_n}}) {
    EXPECT_EQ(detail::stack_path(bound - 1, 1, precision), StackPath::batched_kernels);
    EXPECT_EQ(detail::stack_path(bound, 1, precision), StackPath::vendor_batched);
  }
  // ... and keeps it from there on, through the orders the one-block kernel takes.
  for (const int n : {80, 128, 192}) {
    EXPECT_EQ(detail::stack_path(n, 1, Precision::single_complex), StackPath::vendor_batched) << n;
    EXPECT_EQ(detail::stack_path(n, 1, Precision::double_complex), StackPath::vendor_batched) << n;
  }
  EXPECT_EQ(detail::stack_path(256, 1), StackPath::vendor_batched);
  // Real stacks of larger matrices, short or long: the kernels in blocks of columns, double from its
  // own order at any count.
  const int dn = kThresholds.blocked_stack_min_n_double;
  EXPECT_EQ(detail::stack_path(dn - 1, 2), StackPath::one_block);
  EXPECT_EQ(detail::stack_path(dn - 1, kThresholds.short_stack_max_batch), StackPath::batched_kernels);
  EXPECT_EQ(detail::stack_path(dn, 2), StackPath::blocked_kernels);
  EXPECT_EQ(detail::stack_path(dn, 100000), StackPath::blocked_kernels);
  EXPECT_EQ(detail::stack_path(512, 64), StackPath::blocked_kernels);
  EXPECT_EQ(detail::stack_path(kThresholds.dense_device_min_n - 1, 1000), StackPath::blocked_kernels);
  EXPECT_EQ(detail::stack_path(kThresholds.dense_device_min_n, 100000), StackPath::one_at_a_time);
  // Single precision: short stacks go to the vendor below their blocked order, long ones to the
  // kernels alone below theirs.
  const auto single = Precision::single_real;
  const int short_count = kThresholds.short_stack_max_batch - 1, long_count = kThresholds.short_stack_max_batch;
  const int ss = kThresholds.blocked_short_stack_min_n_single, sl = kThresholds.blocked_stack_min_n_single;
  EXPECT_EQ(detail::stack_path(kThresholds.one_block_potrf_max_n + 1, 2, single), StackPath::vendor_batched);
  EXPECT_EQ(detail::stack_path(ss - 1, short_count, single), StackPath::vendor_batched);
  EXPECT_EQ(detail::stack_path(ss, short_count, single), StackPath::blocked_kernels);
  EXPECT_EQ(detail::stack_path(ss, long_count, single), StackPath::batched_kernels);
  EXPECT_EQ(detail::stack_path(sl - 1, long_count, single), StackPath::batched_kernels);
  EXPECT_EQ(detail::stack_path(sl, long_count, single), StackPath::blocked_kernels);
  // Short complex stacks past the one-block orders go to the vendor; longer ones below the one-block
  // stacks' order to the kernels up to the vendor's orders.
  const int zn = kThresholds.complex_double_short_stack_min_n, cn = kThresholds.complex_single_short_stack_min_n;
  EXPECT_EQ(detail::stack_path(kThresholds.one_block_potrf_max_n_complex_double + 1, 2, Precision::double_complex),
            StackPath::vendor_batched);
  EXPECT_EQ(detail::stack_path(kThresholds.one_block_potrf_max_n_complex_single + 1, 2, Precision::single_complex),
            StackPath::vendor_batched);
  EXPECT_EQ(detail::stack_path(short_from - 1, wave + 1, Precision::double_complex), StackPath::batched_kernels);
  EXPECT_LE(zn, kThresholds.one_block_potrf_max_n_complex_double);
  EXPECT_LE(cn, kThresholds.one_block_potrf_max_n_complex_single);
  EXPECT_EQ(detail::stack_path(512, 64, Precision::double_complex), StackPath::vendor_batched);
  // Long complex stacks: the kernels alone, then in blocks of columns from an order per precision.
  for (auto [precision, bound] :
       {std::pair{Precision::double_complex, kThresholds.blocked_stack_min_n_complex_double},
        std::pair{Precision::single_complex, kThresholds.blocked_stack_min_n_complex_single}}) {
    EXPECT_EQ(detail::stack_path(bound - 1, long_count, precision), StackPath::batched_kernels);
    EXPECT_EQ(detail::stack_path(bound, long_count, precision), StackPath::blocked_kernels);
    EXPECT_EQ(detail::stack_path(kThresholds.dense_device_min_n - 1, 10000, precision), StackPath::blocked_kernels);
    EXPECT_NE(detail::stack_path(bound, short_count, precision), StackPath::blocked_kernels);
    EXPECT_EQ(detail::stack_path(512, short_count, precision), StackPath::vendor_batched);
    EXPECT_FALSE(device::stack_takes_batched_kernels(bound, long_count, precision));
  }
  EXPECT_TRUE(device::stack_takes_batched_kernels(short_from - 1, wave + 1));
  EXPECT_FALSE(device::stack_takes_batched_kernels(short_from, wave + 1));
  EXPECT_FALSE(detail::stack_takes_batched_kernels(512, 64));
  EXPECT_FALSE(detail::stack_takes_batched_kernels(256, 1000));
  EXPECT_TRUE(detail::stack_takes_batched_kernels(256, 1000, single));
  EXPECT_EQ(device::stack_takes_batched_kernels(513, 5), detail::stack_takes_batched_kernels(513, 5));
  // The solves keep one launch of the batched kernels on long stacks and short stacks of small orders.
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(256, long_count));
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(kThresholds.short_stack_min_n - 1, 2));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(kThresholds.short_stack_min_n, short_count));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(kThresholds.dense_device_min_n, long_count));
  // A long stack not with more right-hand sides than the kernels are made for (an inverse's
  // identity); a short one of small orders still.
  const int most = kThresholds.batched_solve_max_nrhs;
  const int lanes_n = kThresholds.batched_lane_solve_max_n;
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(256, long_count, most));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(256, long_count, most + 1));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(lanes_n + 1, kThresholds.short_stack_max_batch, most + 1));
  // Up to the lane kernel's order, any number of right-hand sides.
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(16, kThresholds.short_stack_max_batch, most + 1));
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(lanes_n, long_count, 256));
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(kThresholds.short_stack_min_n - 1, 2, most + 1));
  // Long stacks past the solve kernels' order go to the vendor's solves whatever the count.
  const int largest = kThresholds.batched_solve_max_n;
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(largest, long_count, 1));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(largest + 1, long_count, 1));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(512, long_count, 2));
  // Complex stacks: short ones follow the factorization's route (their own orders per precision),
  // long ones keep the kernels up to their own order whatever the count, the vendor's past it.
  const int complex_largest = kThresholds.complex_batched_solve_max_n;
  for (Precision precision : {Precision::double_complex, Precision::single_complex}) {
    EXPECT_TRUE(device::stack_solves_take_batched_kernels(complex_largest, long_count, 256, precision));
    EXPECT_TRUE(device::stack_solves_take_batched_kernels(1, long_count, 1, precision));
    EXPECT_FALSE(device::stack_solves_take_batched_kernels(complex_largest + 1, long_count, 1, precision));
  }
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(zn - 1, 2, 64, Precision::double_complex));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(zn, 2, 1, Precision::double_complex));
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(cn - 1, 2, 1, Precision::single_complex));
  EXPECT_FALSE(device::stack_solves_take_batched_kernels(cn, 2, 1, Precision::single_complex));
  EXPECT_TRUE(device::stack_solves_take_batched_kernels(complex_largest + 1, 2, 1, Precision::single_complex));
}

// What a host-array request tells the plan of its array and of the runtime's first call, counting
// how often the plan asks.
struct HostArrayFacts {
  bool pinned = false;
  bool first_call = true;
  std::size_t free_gpu_bytes = 80 * kGiB;
  int claims = 0;
  std::vector<int> free_memory_asked_of;

  PlanRequest request(int n, Mode mode = Mode::automatic) {
    PlanRequest r = tessera::request(DataPlace::host_array, n, mode);
    r.array_pinned_by_caller = [this] { return pinned; };
    r.claim_first_call = [this] {
      ++claims;
      return std::exchange(first_call, false);
    };
    r.free_gpu_memory = [this](int device) {
      free_memory_asked_of.push_back(device);
      return free_gpu_bytes;
    };
    return r;
  }
};

PlanRequest solve(PlanRequest r, bool factors, int nrhs) {
  r.solves = true;
  r.factors = factors;
  r.nrhs = nrhs;
  return r;
}

TEST(Plan, HostArraysAreInPlaceWhereTheRuntimeSaysOrOnItsFirstCall) {
  using detail::HostArrayTiles;
  Machine m = cpu_only(2);
  HostArrayFacts facts;
  const Plan first = detail::plan(m, facts.request(1000));
  EXPECT_EQ(first.host_tiles, HostArrayTiles::in_place);
  EXPECT_NE(first.why.back().find("first call"), std::string::npos) << first.why.back();
  EXPECT_EQ(detail::plan(m, facts.request(1000)).host_tiles, HostArrayTiles::pooled);
  EXPECT_EQ(facts.claims, 2);
  facts.pinned = true;  // an array its caller pinned costs no copy: in place, the first call left alone
  EXPECT_EQ(detail::plan(m, facts.request(1000)).host_tiles, HostArrayTiles::in_place);
  EXPECT_EQ(facts.claims, 2);

  struct Row {
    HostTiles runtime_tiles;
    PlanRequest request;
    HostArrayTiles expected;
    bool rhs_in_place;
  };
  HostArrayFacts fresh;
  fresh.first_call = false;
  PlanRequest upper_columns = fresh.request(1000);
  upper_columns.options.uplo = Uplo::upper;
  upper_columns.options.grain = TaskGrain::block_columns;  // upper blocks copied into lower tiles
  PlanRequest upper = fresh.request(1000);
  upper.options.uplo = Uplo::upper;
  const std::vector<Row> rows = {
      {HostTiles::in_place, fresh.request(1000), HostArrayTiles::in_place, false},
      {HostTiles::in_place, upper, HostArrayTiles::in_place, false},
      {HostTiles::in_place, upper_columns, HostArrayTiles::pooled, false},
      {HostTiles::in_place, fresh.request(0), HostArrayTiles::pooled, false},
      {HostTiles::in_place, solve(fresh.request(1000), false, 3), HostArrayTiles::in_place, true},
      {HostTiles::in_place, solve(fresh.request(1000), true, 3), HostArrayTiles::in_place, false},  // posv
      {HostTiles::in_place, solve(fresh.request(1000), false, 0), HostArrayTiles::pooled, false},
      {HostTiles::pinned, fresh.request(1000), HostArrayTiles::pooled, false},
      {HostTiles::pageable, fresh.request(1000), HostArrayTiles::pooled, false},
      {HostTiles::pin_on_reuse, fresh.request(1000), HostArrayTiles::pooled, false},
      {HostTiles::automatic, fresh.request(1000), HostArrayTiles::pooled, false},
  };
  for (const Row& row : rows) {
    m.host_tiles = row.runtime_tiles;
    SCOPED_TRACE(std::string(to_string(row.runtime_tiles)) + ", n = " + std::to_string(row.request.n));
    const Plan p = detail::plan(m, row.request);
    EXPECT_EQ(p.host_tiles, row.expected) << to_string(p.host_tiles);
    EXPECT_EQ(p.rhs_in_place, row.rhs_in_place);
  }
  // An array claimed larger than the machine's memory cannot be the caller's.
  m.host_tiles = HostTiles::in_place;
  m.physical_memory_bytes = std::size_t(1) << 20;
  EXPECT_EQ(detail::plan(m, fresh.request(1000)).host_tiles, HostArrayTiles::pooled);
}

TEST(Plan, LargeFirstCallsAreStagedOnTheGpusOwningTheirTiles) {
  using detail::HostArrayTiles;
  const int large = 16384;  // 2 GiB of doubles: from 1 GiB the first call is staged
  HostArrayFacts facts;
  Plan p = detail::plan(one_gpu(), facts.request(large));
  EXPECT_EQ(p.host_tiles, HostArrayTiles::staged);
  EXPECT_EQ(p.staging_devices, std::vector<int>{0});
  ASSERT_TRUE(p.staged_panels.has_value());
  EXPECT_EQ(p.staged_panels->gpus(), 1);
  EXPECT_EQ(p.staged_panels->tile_count(), large / p.nb);
  EXPECT_EQ(facts.claims, 1);
  // The next call finds the first one claimed: pooled tiles, pinned by then.
  EXPECT_EQ(detail::plan(one_gpu(), facts.request(large)).host_tiles, HostArrayTiles::pooled);

  struct Row {
    std::string what;
    Machine machine;
    PlanRequest request;
    HostArrayTiles expected;
  };
  HostArrayFacts first, pinned, full, cpu, hybrid, no_gpu, any_size;  // each request's own facts
  pinned.pinned = true;
  full.free_gpu_bytes = kGiB;  // the lower tiles (36 of 2048^2 doubles, 1.125 GiB) above 3/4 of it
  Machine staged = cpu_only(2);
  staged.host_tiles = HostTiles::staged;
  Machine staged_gpu = one_gpu();
  staged_gpu.host_tiles = HostTiles::staged;
  const std::vector<Row> rows = {
      {"half a GiB: in place", one_gpu(), first.request(8192), HostArrayTiles::in_place},
      {"pinned by its caller: in place", one_gpu(), pinned.request(large), HostArrayTiles::in_place},
      {"GPU memory short: in place", one_gpu(), full.request(large), HostArrayTiles::in_place},
      {"cpu mode: in place", one_gpu(), cpu.request(large, Mode::cpu), HostArrayTiles::in_place},
      {"hybrid beside strong CPUs: in place", weak_gpu(), hybrid.request(large), HostArrayTiles::in_place},
      {"staged asked for, no GPU: pooled", staged, no_gpu.request(large), HostArrayTiles::pooled},
      {"staged asked for: any size", staged_gpu, any_size.request(500), HostArrayTiles::staged},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(detail::plan(row.machine, row.request).host_tiles, row.expected);
  }
  EXPECT_EQ(first.claims, 1) << "the small first call claims for in place, once";
  EXPECT_EQ(pinned.claims, 0);

  // Two GPUs owning their tiles: each GPU's panels on its own device, each device asked for its memory.
  HostArrayFacts two;
  p = detail::plan(two_gpus(), two.request(large));
  EXPECT_EQ(p.host_tiles, HostArrayTiles::staged);
  EXPECT_EQ(p.gpu_owners.gpus(), 2);
  EXPECT_EQ(p.staging_devices, (std::vector<int>{3, 5}));
  EXPECT_EQ(two.free_memory_asked_of, (std::vector<int>{3, 5}));
  ASSERT_TRUE(p.staged_panels.has_value());
  EXPECT_EQ(p.staged_panels->gpus(), 2);
  EXPECT_GT(p.staged_panels->elements(1), 0u);
  Machine ids_missing = two_gpus();
  ids_missing.cuda_device_ids = {3};
  EXPECT_NE(detail::plan(ids_missing, HostArrayFacts{}.request(large)).host_tiles, HostArrayTiles::staged);
}

TEST(Plan, TasksArePlacedOnTheirOwnersWhereTheRuntimeDealsTiles) {
  EXPECT_EQ(detail::plan(two_gpus(), request(DataPlace::host_array, 4000, Mode::gpu)).gpu_owners.gpus(), 2);
  EXPECT_EQ(detail::plan(two_gpus(), request(DataPlace::host_array, 4000, Mode::cpu)).gpu_owners.gpus(), 1);
  EXPECT_EQ(detail::plan(one_gpu(), request(DataPlace::host_array, 4000, Mode::gpu)).gpu_owners.gpus(), 1);
  Machine unplaced = two_gpus();
  unplaced.gpus_for_tiles = 1;  // the policy places tile tasks
  EXPECT_EQ(detail::plan(unplaced, request(DataPlace::batch, 0, Mode::gpu)).gpu_owners.gpus(), 1);
}

// Every request on a real runtime takes one snapshot of the machine and plans once: nothing
// resolves the mode again on the way to its tasks.
TEST(Plan, SmallHostWorkRunsOnTheCallingThread) {
  const int largest = kThresholds.calling_thread_max_n;
  for (const Machine& m : {cpu_only(2), one_gpu(), weak_gpu()}) {
    for (Mode mode : {Mode::automatic, Mode::cpu}) {
      SCOPED_TRACE(to_string(mode));
      const Plan p = detail::plan(m, request(DataPlace::host_array, largest, mode));
      EXPECT_EQ(p.path, Path::calling_thread);
      EXPECT_EQ(p.mode, Mode::cpu);
      EXPECT_EQ(p.host_tiles, detail::HostArrayTiles::pooled);  // no tile at all
      EXPECT_NE(p.why.back().find("calling thread"), std::string::npos) << p.why.back();
      // cpu mode: no GPU could take it, the larger limit (LargerSingleMatricesOnTheCallingThreadWithoutGpus).
      const int beyond = (mode == Mode::cpu ? kThresholds.calling_thread_max_n_without_gpus : largest) + 1;
      EXPECT_EQ(detail::plan(m, request(DataPlace::host_array, beyond, mode)).path, Path::tiles);
      EXPECT_EQ(detail::plan(m, request(DataPlace::host_array, 0, mode)).path, Path::calling_thread);
    }
  }
  // Asked-for GPUs, tile size, grain, chunk or trace: tasks.
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::host_array, 10, Mode::gpu)));
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::host_array, 10, Mode::hybrid)));
  EXPECT_EQ(detail::plan(one_gpu(), request(DataPlace::host_array, 10, Mode::gpu)).path, Path::tiles);
  PlanRequest asked = request(DataPlace::host_array, 10);
  asked.options.nb = 8;
  EXPECT_FALSE(detail::runs_on_calling_thread(asked));
  asked = request(DataPlace::host_array, 10);
  asked.options.grain = TaskGrain::block_columns;
  EXPECT_FALSE(detail::runs_on_calling_thread(asked));
  asked = request(DataPlace::host_array, 10);
  asked.options.trace = std::make_shared<Trace>();
  EXPECT_FALSE(detail::runs_on_calling_thread(asked));
  asked = request(DataPlace::batch, 10);
  asked.batch = 2;
  asked.batch_chunk = 1;
  asked.options.batch_chunk = 1;
  EXPECT_FALSE(detail::runs_on_calling_thread(asked));
  // The work counts right-hand sides (6 n^2 each beside n^3) and matrices.
  PlanRequest solve = request(DataPlace::host_array, 200);
  solve.solves = true;
  solve.nrhs = 202;  // 200^2 (200 + 6 x 202) <= 384^3
  ASSERT_EQ(largest, 384);
  EXPECT_TRUE(detail::runs_on_calling_thread(solve));
  solve.nrhs = 203;
  EXPECT_FALSE(detail::runs_on_calling_thread(solve));
  PlanRequest batch = request(DataPlace::batch, largest / 4);
  batch.batch = 64;  // 64 (n/4)^3 = n^3
  EXPECT_EQ(detail::plan(cpu_only(2), batch).path, Path::calling_thread);
  batch.batch = 65;
  EXPECT_EQ(detail::plan(cpu_only(2), batch).path, Path::batched_chunks);
  batch.n = -1;  // a variable batch
  batch.batch = 1;
  EXPECT_FALSE(detail::runs_on_calling_thread(batch));
  // Matrices that are not in host memory never do.
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::device_array, 10)));
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::tiles, 10)));
}

// One matrix that no GPU could take (none present, or cpu mode asked for) runs on the calling
// thread up to the larger limit; a batch keeps the smaller one, and GPUs are asked about only
// beyond the smaller one.
static_assert(test::kOrderThatRunsTasks > kThresholds.calling_thread_max_n_without_gpus &&
              test::kOrderThatRunsTasks > kThresholds.calling_thread_max_n);

TEST(Plan, LargerSingleMatricesOnTheCallingThreadWithoutGpus) {
  const int smaller = kThresholds.calling_thread_max_n, larger = kThresholds.calling_thread_max_n_without_gpus;
  ASSERT_GT(larger, smaller);
  int asked = 0;
  const auto without_gpus = [&](int n, Mode mode = Mode::automatic) {
    PlanRequest r = request(DataPlace::host_array, n, mode);
    r.gpus_present = [&asked] {
      ++asked;
      return false;
    };
    return r;
  };
  EXPECT_TRUE(detail::runs_on_calling_thread(without_gpus(smaller)));
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(detail::calling_thread_max_n(without_gpus(smaller)), smaller);
  for (int n : {smaller + 1, larger}) {
    const Plan p = detail::plan(cpu_only(2), without_gpus(n));
    EXPECT_EQ(p.path, Path::calling_thread) << n;
    EXPECT_NE(p.why.back().find("order " + std::to_string(larger)), std::string::npos) << p.why.back();
  }
  EXPECT_GT(asked, 0);
  EXPECT_EQ(detail::plan(cpu_only(2), without_gpus(larger + 1)).path, Path::tiles);
  PlanRequest no_answer = without_gpus(larger);
  no_answer.gpus_present = nullptr;  // nothing to ask: no GPU could take it
  EXPECT_TRUE(detail::runs_on_calling_thread(no_answer));
  // GPUs present: the smaller limit, unless cpu mode is asked for.
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::host_array, smaller + 1)));
  EXPECT_TRUE(detail::runs_on_calling_thread(request(DataPlace::host_array, larger, Mode::cpu)));
  EXPECT_FALSE(detail::runs_on_calling_thread(request(DataPlace::host_array, larger + 1, Mode::cpu)));
  // A solve counts its right-hand sides against the larger limit as well; a batch never takes it.
  PlanRequest solve = without_gpus(larger);
  solve.solves = true;
  solve.nrhs = 1;
  EXPECT_FALSE(detail::runs_on_calling_thread(solve));
  PlanRequest batch = request(DataPlace::batch, smaller + 1);
  batch.batch = 1;
  batch.gpus_present = nullptr;
  EXPECT_FALSE(detail::runs_on_calling_thread(batch));
}

TEST(Plan, EveryRequestPlansOnce) {
  Runtime& rt = test::runtime();
  const int n = 70, nrhs = 3;
  const std::vector<double> a = test::random_spd<double>(n, n, 5);
  auto snapshots_of = [&](auto&& call) {
    const long before = detail::RuntimeControl::machine_snapshots(rt);
    call();
    return detail::RuntimeControl::machine_snapshots(rt) - before;
  };
  FactorOptions options;
  options.nb = 32;
  std::vector<double> f = a, b(n * nrhs, 1.0), x = b;
  EXPECT_EQ(snapshots_of([&] { EXPECT_EQ(potrf_async(rt, n, f.data(), n, options).wait(), 0); }), 1);
  EXPECT_EQ(snapshots_of([&] { potrs_async(rt, n, nrhs, f.data(), n, x.data(), n, options).wait(); }), 1);
  f = a;
  x = b;
  EXPECT_EQ(snapshots_of([&] { EXPECT_EQ(posv_async(rt, n, nrhs, f.data(), n, x.data(), n, options).wait(), 0); }), 1);
  TileMatrix<double> A(rt, n, 32);
  load_async(A, Uplo::lower, a.data(), n).wait();
  TileMatrix<double> B(rt, n, nrhs, 32, TileStructure::general);
  load_async(B, b.data(), n).wait();
  EXPECT_EQ(snapshots_of([&] { EXPECT_EQ(potrf_async(A, options).wait(), 0); }), 1);
  EXPECT_EQ(snapshots_of([&] { potrs_async(A, B, options).wait(); }), 1);
  std::vector<double> batch = a;
  batch.insert(batch.end(), a.begin(), a.end());
  std::vector<int> info(2, -1);
  EXPECT_EQ(snapshots_of([&] { potrf_batched_async(rt, n, batch.data(), n, (long long)n * n, 2, info.data()).wait(); }),
            1);
  EXPECT_EQ(info, std::vector<int>(2, 0));
}

TEST(Plan, ExplanationsAreThePlanOfTheRequest) {
  Runtime& rt = test::runtime();
  FactorOptions options;
  options.mode = Mode::cpu;
  const PlanExplanation plan = explain_potrf<double>(rt, 5000, options);
  EXPECT_EQ(plan.mode, Mode::cpu);
  EXPECT_EQ(plan.nb, default_tile_size(5000, Precision::double_real, Mode::cpu, rt.cpu_workers()));
  EXPECT_EQ(plan.path, "tiles");
  ASSERT_GE(plan.reasons.size(), 2u);
  EXPECT_NE(plan.reasons[1].find("tile size"), std::string::npos) << plan.reasons[1];
  options.nb = -3;
  EXPECT_THROW(explain_potrf<float>(rt, 100, options), InvalidArgument);
}

// A plan nobody reads (plan_request's, where the request is not traced and the runtime not
// verbose) makes the same decisions without their text; an explained one gives a line per
// decision.
TEST(Plan, DecisionsTheSameWhetherExplainedOrNot) {
  std::vector<PlanRequest> requests = {request(DataPlace::host_array, 100), request(DataPlace::host_array, 20000),
                                       request(DataPlace::host_array, 20000, Mode::gpu),
                                       request(DataPlace::device_array, 4096), request(DataPlace::batch, 64)};
  requests.back().batch = 1000;
  requests.push_back(request(DataPlace::host_array, 20000, Mode::gpu, Precision::single_real));
  requests.back().options.tensor_cores = TensorCores::fp16;
  for (const Machine& m : {cpu_only(2), one_gpu(), two_gpus()})
    for (const PlanRequest& r : requests) {
      if (m.cuda_workers == 0 && (r.options.mode == Mode::gpu || r.place == DataPlace::device_array)) continue;
      SCOPED_TRACE(testing::Message() << to_string(r.place) << " n=" << r.n << " cuda workers " << m.cuda_workers);
      const Plan explained = detail::plan(m, r), silent = detail::plan(m, r, false);
      EXPECT_FALSE(explained.why.empty());
      EXPECT_TRUE(silent.why.empty());
      EXPECT_EQ(silent.mode, explained.mode);
      EXPECT_EQ(silent.nb, explained.nb);
      EXPECT_EQ(silent.path, explained.path);
      EXPECT_EQ(silent.grain, explained.grain);
      EXPECT_EQ(silent.host_tiles, explained.host_tiles);
      EXPECT_EQ(silent.tensor_cores, explained.tensor_cores);
      EXPECT_EQ(silent.batch_chunk, explained.batch_chunk);
      EXPECT_EQ(silent.panel_starts, explained.panel_starts);
      EXPECT_EQ(silent.gpu_owners.gpus(), explained.gpu_owners.gpus());
    }
}

}  // namespace
}  // namespace tessera
