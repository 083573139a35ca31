// Decide once, then run: a request is described once (PlanRequest), planned once against a
// snapshot of the machine (plan), and the plan executed. Every choice of mode, tile size, grain,
// path, host-array tiles (pooled, in place or staged, with the GPUs owning them) and chunking is
// made here, from the one table of thresholds (thresholds.hpp), with its
// reasons. No StarPU, no CUDA: tests plan against fake machines.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms.hpp"
#include "machine.hpp"
#include "owned_panels.hpp"
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
  bool inverts = false;  // the inverse from the factor given (xPOTRI)
  FactorOptions options;
  // DataPlace::tiles: the tile matrix's tile size, and whether every lower tile is valid on the
  // runtime's first GPU already (asked only where the answer matters).
  int tile_nb = 0;
  std::function<bool()> tiles_on_first_gpu;
  // DataPlace::batch: matrices, their order (-1: various, a variable batch) and the chunk size
  // asked for (0: Tessera's choice).
  int batch = 0;
  int batch_chunk = 0;
  // DataPlace::host_array: whether the request solves (potrs, posv) and for how many columns, and
  // facts asked only where the answer matters: whether the caller pinned the array (it is then
  // used in place, never staged), the bytes free on a CUDA device, and the runtime's first
  // host-array call (HostTiles::automatic gives it in-place or staged tiles): true when this
  // request is that call, which it claims (an explanation only looks).
  bool solves = false;
  int nrhs = 0;
  std::function<bool()> array_pinned_by_caller;
  std::function<std::size_t(int device)> free_gpu_memory;
  std::function<bool()> claim_first_call;
  // Whether GPUs could take host work, asked only where the answer matters: the runtime's CUDA
  // workers, or before any runtime NVIDIA device nodes in a build with CUDA (no CUDA call). Null:
  // none could.
  std::function<bool()> gpus_present;
};

// How the plan runs.
//   tiles: the tile DAG (grain and panels say how it is cut);
//   one_task: one task calling the vendor's potrf on the whole matrix (TaskGrain::whole_matrix);
//   callers_stream: that one vendor call enqueued by the calling thread on the caller's stream,
//                   with no runtime task (the device API; its matrices must be on the one GPU);
//   batched_chunks: chunks of matrices, one task each;
//   calling_thread: LAPACK on the calling thread, no task and no runtime (small host arrays and
//                   batches: runs_on_calling_thread).
enum class Path { tiles, one_task, callers_stream, batched_chunks, calling_thread };

// How a host array's tiles are held (DataPlace::host_array).
//   pooled: tiles from the runtime's pool, the array copied in and out;
//   in_place: the caller's array itself (pinned for the call when GPU workers take part);
//   staged: each tile in the memory of the GPU owning it, the array copied through the
//           runtime's pinned staging slots (HostTiles::staged).
enum class HostArrayTiles { pooled, in_place, staged };

const char* to_string(Path path);
const char* to_string(DataPlace place);
const char* to_string(HostArrayTiles tiles);

struct Plan {
  Mode requested = Mode::automatic;
  Mode mode = Mode::cpu;          // resolved against the machine's workers and policy
  bool runs_as_gpu_mode = false;  // gpu mode, or hybrid where auto runs gpu mode (see below)
  bool hybrid_without_gpu = false;  // hybrid asked for, no CUDA worker: runs on the CPUs
  int nb = 0;
  TensorCores tensor_cores = TensorCores::off;  // the trailing updates' arithmetic on GPU workers
  Path path = Path::tiles;
  TaskGrain grain = TaskGrain::automatic;
  // callers_stream: the call's launches replayed as one CUDA graph (small orders, where launching
  // them costs more host time than they take on the GPU).
  bool replays_launches = false;
  // callers_stream, a matrix up to Thresholds::one_block_potrf_max_n (and its complex forms):
  // factored by one thread block in one launch (kernels::cuda::potrf_one_block) instead of
  // cuSOLVER's potrf.
  bool factors_in_one_block = false;
  std::vector<int> panel_starts;  // out-of-core panels (more than one: the matrix cut)
  int batch_chunk = 0;
  GpuOwners gpu_owners;           // the GPUs tile tasks are placed on (1 x 1: placed by the policy)
  // DataPlace::host_array: its tiles, and a solve's right-hand sides in place too (rhs_in_place);
  // staged: the owning GPUs' CUDA devices (GPU g of gpu_owners is the g-th) and where each tile lies.
  HostArrayTiles host_tiles = HostArrayTiles::pooled;
  bool rhs_in_place = false;
  std::vector<int> staging_devices;
  std::optional<OwnedPanels> staged_panels;
  bool explained = true;         // why is filled (plan's `explained`)
  std::vector<std::string> why;  // one line per decision, for explanations and traces

  double accuracy = 0;            // adaptive precision (FactorOptions::accuracy): 0, FP64 throughout

  // The factorization's plan; an adaptive one's map goes to `map` (FactorOptions::tile_arithmetic).
  CholeskyPlan cholesky(TileArithmeticMap* map = nullptr) const {
    CholeskyPlan plan(grain, panel_starts);
    plan.accuracy = accuracy;
    plan.arithmetic_map = map;
    return plan;
  }
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

// How a stack of `batch` matrices of order n and scalar type `precision` in GPU memory is factored
// (thresholds.hpp): the batched kernels alone, the batched kernels in blocks of columns with
// cuBLAS's products between them, cuSOLVER's batched potrf, the one-block kernel (a thread block
// per matrix), or one dense call per matrix.
enum class StackPath { batched_kernels, blocked_kernels, vendor_batched, one_block, one_at_a_time };
StackPath stack_path(int n, int batch, Precision precision = Precision::double_real);
inline bool stack_takes_batched_kernels(int n, int batch, Precision precision = Precision::double_real) {
  return stack_path(n, batch, precision) == StackPath::batched_kernels;
}
// The solves with a stack's factors: potrs_batched_ex's one launch, except where few larger
// matrices go to the vendor's or dense solves (the factorization's split before blocks of columns)
// and where the matrices of a long stack past the lane kernel's orders have more right-hand sides
// than the kernels are made for (complex: where they are past complex_batched_solve_max_n).
bool stack_solves_take_batched_kernels(int n, int batch, int nrhs = 1, Precision precision = Precision::double_real);

// Whether device::posv_refined_batched refines single-precision solutions on a GPU whose
// single-precision arithmetic runs `single_to_double_ratio` times as fast as its double, rather
// than solving in double precision at once.
bool batched_refinement_in_single(int single_to_double_ratio);

// Whether the inverse from `batch` GPU factors of order n and scalar type `precision` goes through
// the batched inverse kernel.
bool inverse_takes_batched_kernel(int n, int batch, Precision precision = Precision::double_real);
// Whether it goes through device::potri_ex (one matrix, on the caller's stream) rather than by
// solving with the identity; never for a stack.
bool inverse_takes_dense_call(int n, int batch, Precision precision = Precision::double_real);

// Whether the inverse of one GPU factor of order n on the caller's stream makes the triangle's
// inverse by levels (batched solves of the diagonal blocks, then products joining them) rather
// than by one triangular solve of the identity.
bool triangle_inverse_by_levels(int n);

// Whether the tiles of an upper-stored matrix hold its blocks as stored (transposed tiles: the
// tasks call the transposed BLAS forms, and nothing is transposed), rather than transposed copies
// in lower tiles. Block-column tasks take lower tiles only.
inline bool upper_as_stored(const FactorOptions& options) {
  return options.uplo == Uplo::upper && options.grain != TaskGrain::block_columns;
}

// Throws InvalidArgument for options out of range, whatever path a request takes.
void check_options(const FactorOptions& options);

// Whether a request on host memory (DataPlace::host_array, or a batch of `batch` matrices of
// order n) runs on the calling thread (Path::calling_thread): small work, and nothing in its
// options asking for tasks. Decided from the request alone, before any runtime is asked anything,
// so that such a call never needs one started.
bool runs_on_calling_thread(const PlanRequest& request);
// The order whose factorization's work is the most runs_on_calling_thread takes for `request`: the
// smaller limit where its work is within it (GPUs are not asked about then).
int calling_thread_max_n(const PlanRequest& request);

// The plan of one request. Throws InvalidArgument for options out of range, RuntimeError for a
// mode the machine cannot run, ResourceError for tiles that cannot fit the GPU. `why` is filled
// where `explained` (a plan nobody reads leaves it empty).
Plan plan(const Machine& machine, const PlanRequest& request, bool explained = true);

}  // namespace tessera::detail
