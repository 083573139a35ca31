// Decide once, then run: a request is described once (PlanRequest), planned once against a
// snapshot of the machine (plan), and the plan executed. Every choice of mode, tile size, grain,
// path and chunking is made here, from the one table of thresholds (thresholds.hpp), with its
// reasons. No StarPU, no CUDA: tests plan against fake machines.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms.hpp"
#include "machine.hpp"
#include "tessera/options.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

// Where a request's matrix lies.
//   host_array: a LAPACK-layout array in host memory (copied to tiles, or its tiles in place);
//   tiles: a TileMatrix (the tile API): its tile size is its own;
//   device_array: a LAPACK-layout array in one GPU's memory (the device API);
//   batch: many small matrices, in chunks of tasks (the batched API).
enum class DataPlace { host_array, tiles, device_array, batch };

struct PlanRequest {
  Precision precision = Precision::double_real;
  DataPlace place = DataPlace::host_array;
  int n = 0;
  bool factors = true;  // false: a solve with the factor given
  FactorOptions options;
  // DataPlace::tiles: the tile matrix's tile size, and whether every lower tile is valid on the
  // runtime's first GPU already (asked only where the answer matters).
  int tile_nb = 0;
  std::function<bool()> tiles_on_first_gpu;
  // DataPlace::batch: matrices, and the chunk size asked for (0: Tessera's choice).
  int batch = 0;
  int batch_chunk = 0;
};

// How the plan runs.
//   tiles: the tile DAG (grain and panels say how it is cut);
//   one_task: one task calling the vendor's potrf on the whole matrix (TaskGrain::whole_matrix);
//   callers_stream: that one vendor call enqueued by the calling thread on the caller's stream,
//                   with no runtime task (the device API; its matrices must be on the one GPU);
//   batched_chunks: chunks of matrices, one task each.
enum class Path { tiles, one_task, callers_stream, batched_chunks };

const char* to_string(Path path);
const char* to_string(DataPlace place);

struct Plan {
  Mode requested = Mode::automatic;
  Mode mode = Mode::cpu;          // resolved against the machine's workers and policy
  bool runs_as_gpu_mode = false;  // gpu mode, or hybrid where auto runs gpu mode (see below)
  bool hybrid_without_gpu = false;  // hybrid asked for, no CUDA worker: runs on the CPUs
  int nb = 0;
  Path path = Path::tiles;
  TaskGrain grain = TaskGrain::automatic;
  std::vector<int> panel_starts;  // out-of-core panels (more than one: the matrix cut)
  int batch_chunk = 0;
  std::vector<std::string> why;   // one line per decision, for explanations and errors

  CholeskyPlan cholesky() const { return CholeskyPlan(grain, panel_starts); }
};

// The mode a request asked for, resolved against the machine: gpu mode with no CUDA worker and
// cpu mode with no CPU worker throw RuntimeError; a mode the policy cannot run throws
// RuntimeError; hybrid with no CUDA worker runs on the CPUs (*hybrid_without_gpu set);
// automatic runs as machine.automatic says.
Mode resolve_mode(const Machine& machine, Mode requested, bool* hybrid_without_gpu = nullptr);

// Whether a request resolved to `mode` runs as gpu mode does: gpu mode, or hybrid on a machine
// whose GPUs dominate (where auto runs gpu mode), whose CPUs take next to no tile task. Such a
// request gets gpu mode's tiles and, on a first call, its staging.
bool runs_as_gpu_mode(const Machine& machine, Mode mode);

// Tessera's tile size for an n x n matrix in `mode` (resolved; gpu for a request that runs as
// gpu mode does) on cpu_workers CPU workers (0: unknown).
int default_tile_size(int n, Precision precision, Mode mode, int cpu_workers);

// The mode whose tiles a request resolved to `mode` takes: gpu where it runs as gpu mode does.
inline Mode tile_mode(const Machine& machine, Mode mode) { return runs_as_gpu_mode(machine, mode) ? Mode::gpu : mode; }

// The chunk size of a batch in `mode` (resolved): a few chunks per worker.
int default_batch_chunk(const Machine& machine, int batch, Mode mode);

// Whether a stack of `batch` matrices of order n in GPU memory goes to the batched kernels
// (rather than to the dense device API one matrix at a time).
bool stack_takes_batched_kernels(int n, int batch);

// Whether the tiles of an upper-stored matrix hold its blocks as stored (transposed tiles: the
// tasks call the transposed BLAS forms, and nothing is transposed), rather than transposed copies
// in lower tiles. Block-column tasks take lower tiles only.
inline bool upper_as_stored(const FactorOptions& options) {
  return options.uplo == Uplo::upper && options.grain != TaskGrain::block_columns;
}

// The plan of one request. Throws InvalidArgument for options out of range, RuntimeError for a
// mode the machine cannot run, ResourceError for tiles that cannot fit the GPU.
Plan plan(const Machine& machine, const PlanRequest& request);

}  // namespace tessera::detail
