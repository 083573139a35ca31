// Options of the runtime and of each factorization, with their defaults. Environment variables
// (TESSERA_*) are read in one place only: RuntimeOptions::from_environment and
// FactorOptions::from_environment (src/runtime/host/environment.cpp).
#pragma once

#include "tessera/export.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

class Trace;

enum class Uplo { lower, upper };

// Where the tasks of a factorization run.
//   cpu:    CPU workers only.
//   gpu:    every factorization task on CUDA workers (the diagonal-tile factorization included);
//           CPU workers only move data between the user's layout and the tiles.
//   hybrid: CPU and CUDA workers together, placed by the scheduler.
//   automatic ("auto"): gpu where the GPUs hold nearly all of the machine's estimated
//           double-precision throughput, hybrid where the CPUs add a share worth scheduling, cpu
//           without a CUDA worker (Runtime::automatic_mode says which and why).
enum class Mode { cpu, gpu, hybrid, automatic };

// Which GPU implementation of a tile kernel may run: the vendor one (cuBLAS/cuSOLVER), Tessera's
// own CUDA kernels, or `any`: the one the tuning table measured faster on the GPU at the nearest
// tile size, or both where the table has no timing of both (the scheduler then chooses per tile
// size from the perf models).
enum class GpuKernels { vendor, custom, any };

// The arithmetic of a real single-precision factorization's trailing updates (its gemm and syrk
// tasks) on the GPUs: off, FP32 as stored; on the tensor cores with FP32 accumulation and result:
//   tf32: each operand rounded to TF32 inside the product (8 bits of exponent, 10 of mantissa),
//         several times FP32's (and FP64's) throughput for a factor about as accurate as an FP16 one;
//   bf16: the operand tiles rounded to BF16 (8 bits of exponent, 7 of mantissa) before the
//         product, about 3x TF32's throughput for a factor 8x less accurate;
//   fp16: rounded to FP16 (5 bits of exponent, 10 of mantissa: TF32's accuracy at BF16's speed),
//         whose largest value is 65504: a factor entry beyond it overflows, and the factorization
//         then fails (info > 0) as one of a matrix too ill-conditioned for the arithmetic does
//         (|l_ij| <= sqrt(a_ii): a diagonal up to about 4e9 is safe; posv_refined scales A to a
//         unit diagonal first, on host arrays under every choice but off).
// The panel solves' products run in TF32 under every choice but off. Tasks on CPU workers compute
// in FP32 either way. Meant for a factor that preconditions a refinement (posv_refined).
enum class TensorCores { off, tf32, bf16, fp16 };

// How posv_refined (tessera/refinement.hpp) refines the low-precision solution.
//   lapack: LAPACK's DSPOSV/ZCPOSV steps exactly: classical refinement (d = M^{-1} r, M the
//          low-precision factor), at most 30 iterations, then the double-precision factorization
//          (ITER -31); the LAPACK drop-in's.
//   classical_then_gmres: classical refinement while each step at least halves the residual;
//          then GMRES-IR: each correction from GMRES on M^{-1} A d = M^{-1} r in double precision,
//          which converges for matrices far more ill-conditioned than classical refinement takes
//          (the double-precision factorization only where neither converges). Host arrays only.
//          Each Krylov step costs a product with A and a solve with M, O(n^2): worth it where the
//          double-precision factorization, O(n^3), costs far more than the steps GMRES takes
//          (large n, slow double precision), which Tessera does not yet decide by itself.
enum class Refinement { lapack, classical_then_gmres };

// Adaptive precision (FactorOptions::accuracy): the lowest arithmetic a tile's trailing updates
// may take. Every tile stays stored in FP64, the updates accumulate into it in FP64. In gpu and
// hybrid modes each panel tile is split once per step into two FP16 pieces (scaled by a power of
// two into FP16's range; hi, and the rest times 2^11) and the updates run on the tensor cores
// with FP32 accumulation: fp16 from hi alone (one product), fp32 from both (three products, about
// 2^-22 of each value); in cpu mode both in FP32.
enum class TileArithmetic { fp64, fp32, fp16 };

// What an adaptive factorization chose, tile by tile: tile (i, j), j <= i < tiles, at
// i (i + 1) / 2 + j; diagonal tiles are always fp64.
struct TESSERA_EXPORT TileArithmeticMap {
  int tiles = 0;
  std::vector<TileArithmetic> lower;
  TileArithmetic at(int i, int j) const;
  // Tiles below the diagonal with arithmetic `a` (the diagonal ones, always fp64, not counted).
  long long count(TileArithmetic a) const;
  // The map drawn as an SVG image: the lower triangle's tiles coloured by arithmetic, with a legend
  // of the counts (`tessera potrf --accuracy U --tile-map FILE.svg` writes it).
  std::string svg() const;
};

// How a factorization is cut into tasks.
//   tiles: one task per tile operation (potrf, trsm, syrk, gemm on nb x nb tiles): about nt^3 / 6
//          tasks for nt tiles a side, the finest grain for the scheduler to spread.
//   block_columns: per step one panel task (the diagonal tile's factorization and the solves
//          below it) and one task per block column on its right (that column's share of the
//          trailing update): nt (nt + 1) / 2 tasks, each one or a few large calls where the tiles
//          of a column are contiguous in memory (a matrix already on the GPU, tessera/device.hpp).
//          It measured no faster than tiles on one GPU: the diagonal factorization bounds both.
//   whole_matrix: the whole factorization as one task over every tile, which calls the vendor's
//          potrf once: on the matrix itself where the tiles are views of one column-major matrix,
//          on a copy gathered from the tiles otherwise (an upper-stored matrix's blocks gathered
//          transposed). None of StarPU's per-task latency on the chain of nt steps, and no
//          overlap either. The device API (tessera/device.hpp) then takes its matrix as one tile.
//   automatic: tiles; in the device API, on a runtime with one GPU in a call that runs as gpu
//          mode does with the tile size left to Tessera, whole_matrix up to n = 16384, where
//          the tile graph through the device API is slower than cuSOLVER's own call
//          (docs/gpu-performance.md, section "A matrix already in GPU memory"); for a tile matrix
//          whose every lower tile is already in the memory of the runtime's one GPU, in gpu mode,
//          whole_matrix up to n = 10240 (gathered for one vendor call, faster than tile tasks there).
enum class TaskGrain { tiles, block_columns, whole_matrix, automatic };

// Kind of a tile task, for scheduling hints and traces. Batched chunks, residual checks and
// tile copies are `other`.
enum class TaskKind { potrf, trsm, syrk, gemm, copy_in, copy_out, other };

// Which kind of worker a task would rather run on (a hint: the policies that place by kind of
// worker, such as panel-cpu, read it; the others ignore it).
enum class WorkerKind { any, cpu, gpu };

// What the scheduling policies know of a task. Every task Tessera submits carries its hints, and
// policies read them instead of looking at tiles.
struct TaskHints {
  int priority = 0;                       // larger runs first
  bool critical = false;                  // on the critical path (critical-path-heft serves these first)
  WorkerKind preferred = WorkerKind::any;
  // heteroprio's bucket: the tasks of one kind share one (one per kind and placement); a task may
  // join another kind's bucket, e.g. to be served with the panel.
  TaskKind bucket = TaskKind::other;
  // The GPU (0-based among the runtime's GPUs, by device number) the task runs on when the runtime
  // places tasks over several GPUs (GpuPlacement); -1: wherever the policy chooses. Left at -1,
  // the runtime sets it to the owner of the tile the task writes; a hints function may set it (a
  // GPU the runtime lacks is refused with InvalidArgument; cpu mode ignores it).
  int gpu = -1;
};

// The hints of the task of kind `kind` at step k writing tile (i, j) of an nt x nt tile matrix
// (conversions: step 0; batched chunks: k is the chunk, nt the number of chunks). Algorithms call
// it; they never compute priorities themselves.
using SchedulingHints = std::function<TaskHints(TaskKind kind, int k, int i, int j, int nt)>;

// Critical path first: the tasks of the next panel (potrf, its trsm, and the updates that feed the
// next diagonal tile) ahead of the rest of the trailing update, flagged critical; the panel
// (potrf) preferred on a CPU and the updates on a GPU; each kind in its own heteroprio bucket.
TESSERA_EXPORT TaskHints critical_path_hints(TaskKind kind, int k, int i, int j, int nt);
// No preference at all (priority 0, nothing critical, any worker): the schedule is the
// scheduler's alone; each kind in its own heteroprio bucket.
TESSERA_EXPORT TaskHints neutral_hints(TaskKind kind, int k, int i, int j, int nt);

// Host memory for tiles is kept between factorizations (a pool). How it is pinned, and when a
// caller's array is used in place of tiles:
//   automatic (default): an array is factored in place (see in_place) when it is pinned
//           already (nothing to pay). The runtime's first factorization (a process that factors
//           once pays neither for host tiles nor for pinning them) is staged (see staged) where
//           it can be and the array takes 1 GiB or more, in place otherwise; later ones as
//           pin_on_reuse. A one-shot process is fastest staged, then in place, then with tiles,
//           while a warm process repeating calls is fastest on pinned pooled tiles
//           (docs/user-guide.md, section "GPUs"; docs/gpu-performance.md, section "One shot").
//   pin_on_reuse: a new block is pageable, and pinned once it is back in the pool, by a
//           background thread (or by the factorization that reuses it, should that come first).
//           Allocating fresh memory pinned costs far more than pinning it once touched, and more
//           than copying it once through pageable memory, so a one-shot process never pays for
//           it and a repeating one pins once.
//   pinned: every block allocated pinned.
//   pageable: never pinned.
// A distributed::Matrix's tiles (which live across calls, and cross the bus every call) are
// allocated pinned where GPUs are used, under every mode but pageable.
//   in_place: a matrix is not copied into tiles at all: the tiles are the caller's array itself
//           (an upper-stored one's upper blocks as stored), pinned for the length of the call when GPU workers
//           take part (pinning memory already written costs a fraction of allocating and first
//           touching tiles and copying in and out).
//           potrs's right-hand sides too; posv's are copied (a failure leaves them untouched).
//           With block-column tasks an upper-stored matrix uses the pool as pin_on_reuse.
//   staged: in gpu mode (or hybrid where the GPUs dominate, as auto judges), a matrix's tiles
//           (lower blocks, or an upper-stored one's upper blocks as stored) live in GPU memory for
//           the call, each on the GPU owning it (GpuPlacement::block_cyclic; on the first GPU
//           under by_policy), a GPU's tiles of a tile column in one column-major panel, when each
//           GPU's share fits in 3/4 of its free memory (the lower triangle only: about half an
//           n x n matrix on one GPU); the caller's array reaches them through a few pinned slots
//           (80 MiB, kept by the runtime), each tile's copies on its own GPU:
//           CPU workers copy pieces of the array into slots and out of them while the copy engines
//           move the slots, beside the factorization's tasks. Nothing of the caller's array is
//           pinned and no host tiles are allocated. Any other call, or one whose GPU memory or
//           slots cannot be allocated after all: as pin_on_reuse.
enum class HostTiles { automatic, pin_on_reuse, pinned, pageable, in_place, staged };

// Where the tile tasks run when the runtime has several GPUs:
//   block_cyclic (default): owner computes. The tile grid is dealt over the GPUs in 2-D
//           block-cyclic order (a P x Q grid of GPUs, P >= Q, as square as the count allows: 2
//           GPUs are 2 x 1, rows of tiles alternating), and each task runs on a GPU owning the tile
//           it writes (TaskHints::gpu), so a tile stays on one GPU from step to step and only the
//           panel travels. Batched chunks are dealt in turn. Every policy honours it (StarPU's
//           through the task's set of allowed workers); owner-computes serves it directly.
//   by_policy: the scheduling policy places every task (dmdas: by its perf models).
// With one GPU both are the same.
enum class GpuPlacement { block_cyclic, by_policy };

// What a runtime's own choices make smallest: a request's time (default), or the energy it takes.
// energy: Mode::automatic runs gpu mode wherever a CUDA worker runs (a GPU does a flop for a small
// fraction of a CPU core's energy, and hybrid mode pays the CPUs' power for the few tasks they
// take; time decides by throughput, and runs hybrid mode where the CPUs hold a tenth or more of it).
// The CPU workers stay: they copy host arrays to and from tiles, and with fewer of them the GPU
// waits longer for its tiles, which costs more of its energy than it saves (docs/performance.md,
// "Energy"). A mode asked for is kept; GPU clocks are never changed.
enum class Objective { time, energy };

struct TESSERA_EXPORT RuntimeOptions {
  // CPU workers; -1: every core but those of the GPUs' driver threads (one per CUDA worker) and,
  // where GPUs are driven or the process has 16 cores or more, one kept for the thread that calls
  // Tessera, which inserts the tasks while the workers run them (STARPU_NCPU if set)
  int ncpus = -1;
  int ncuda = -1;              // CUDA devices; -1: every device (STARPU_NCUDA if set)
  int workers_per_cuda = 4;    // StarPU workers (streams) per GPU, so tasks overlap on a GPU
  std::string scheduler;       // policy name; "" -> "dmdas" (STARPU_SCHED if set)
  bool quiet = true;           // silence StarPU's warnings about uncalibrated perf models
  std::string tuning_file;     // tile-kernel tuning table (JSON); "" -> the one shipped for sm_90
  // Idle StarPU workers poll for work: a Runtime that started StarPU puts them to sleep whenever
  // no Tessera work is in flight, so the application keeps its cores (see Runtime::pause_workers).
  bool pause_when_idle = true;
  // How long idle workers keep polling before they sleep (microseconds; 0: at once). A program
  // that calls again within it finds them awake and saves their wake-up (docs/user-guide.md,
  // section "C++ API").
  int pause_after_idle_us = 2000;
  // Notes on stderr (hybrid mode running on the CPUs alone...); Tessera prints nothing otherwise,
  // except one line when it sets aside a corrupt StarPU performance-model file.
  bool verbose = false;
  // How host memory for tiles is pinned (page-locked, so that copies to and from the GPU run at
  // the bus's full speed); see HostTiles.
  HostTiles host_tiles = HostTiles::automatic;
  // GPU tasks on the critical path (the diagonal factorization, the panel, the update of the next
  // panel) run on a stream of the device's highest priority, so that the GPU schedules them ahead
  // of the trailing update running beside them on the other workers' streams.
  bool urgent_streams = true;
  // For a process that will use no GPU at all (the CLI in cpu mode): with ncuda = 0, CUDA is told
  // to see no device (CUDA_VISIBLE_DEVICES set empty unless set already) before StarPU starts, so
  // that StarPU's bus calibration neither initializes CUDA nor measures the GPUs (which would
  // take several times the rest of a cpu-mode start), and hwloc is told to skip I/O devices
  // (HWLOC_COMPONENTS=-pci,-linuxio unless set already). Never for a library
  // inside an application that may use CUDA itself: no CUDA call of the process would see a GPU.
  bool hide_gpus_from_process = false;
  // Where tile tasks run on several GPUs (see GpuPlacement).
  GpuPlacement gpu_placement = GpuPlacement::block_cyclic;
  // StarPU's background write-back: tiles held only on a GPU copied to host memory whenever few of
  // the GPU's buffers are clean, so that eviction finds clean ones. Off by default: a tile written
  // back is dirty again at its next update, and the task that writes it first waits for the copy.
  // On for matrices larger than the GPU, where it is faster (docs/out-of-core.md, which has the
  // figures).
  // STARPU_MINIMUM_CLEAN_BUFFERS, where set, decides instead.
  bool background_write_back = false;
  Objective objective = Objective::time;  // see Objective

  // Defaults overridden by TESSERA_NCPU, TESSERA_NCUDA, TESSERA_WORKERS_PER_CUDA, TESSERA_POLICY,
  // TESSERA_TUNING_FILE, TESSERA_VERBOSE (0 or 1), TESSERA_HOST_TILES (auto, pin-on-reuse, pinned,
  // pageable, in-place or staged), TESSERA_URGENT_STREAMS (0 or 1), TESSERA_GPU_PLACEMENT (block-cyclic or policy),
  // TESSERA_PAUSE_WHEN_IDLE (0 or 1), TESSERA_BACKGROUND_WRITE_BACK (0 or 1), TESSERA_OBJECTIVE
  // (time or energy).
  static RuntimeOptions from_environment();

  // These options for a runtime whose factorizations all run in `mode`: in cpu mode no GPU is
  // started unless ncuda, TESSERA_NCUDA or STARPU_NCUDA asks for one (no CUDA context to create,
  // a large part of a process's start, and no core kept to drive a GPU: every core is a CPU worker but,
  // from 16 cores, the calling thread's).
  // The shared runtime (Runtime::shared) applies it with TESSERA_MODE, the CLI with --mode.
  RuntimeOptions for_mode(Mode mode) const;
};

// How far a request has come: its tasks finished out of those submitted (all of them once the
// call that submits them has returned). Tasks are the unit: in a tile factorization most are
// updates of one tile each, so the fraction follows the work done closely.
struct Progress {
  long long tasks_finished = 0;
  long long tasks_submitted = 0;
  // In [0, 1]; 1 for a request with no task (one that ran on the calling thread, say).
  double fraction() const {
    return tasks_submitted == 0 ? 1.0 : static_cast<double>(tasks_finished) / static_cast<double>(tasks_submitted);
  }
};

// Called on the thread that waits for a request (never on a runtime worker), every
// progress_interval while it runs and once when it is done.
using ProgressReport = std::function<void(const Progress&)>;

struct TESSERA_EXPORT FactorOptions {
  Uplo uplo = Uplo::lower;
  int nb = 0;                  // tile size; 0 -> chosen per n, precision and mode
  Mode mode = Mode::automatic;  // see Mode; hybrid with no CUDA worker runs on the CPUs
  GpuKernels gpu_kernels = GpuKernels::any;
  // Single-precision real matrices only (InvalidArgument otherwise), factored as tiles (grain
  // tiles or automatic); posv_refined applies it to its single-precision factorization.
  TensorCores tensor_cores = TensorCores::off;
  Refinement refinement = Refinement::lapack;  // posv_refined only
  TaskGrain grain = TaskGrain::automatic;
  // Out of core: a matrix whose tiles need more than 90% of the memory StarPU may use on the
  // smallest GPU (in gpu and hybrid modes) is factored in panels of tile columns, each updated by
  // the columns on its left and then factored, with at most this percentage of that memory in one
  // panel (1 to 90); 0: never (StarPU then evicts tiles as the right-looking order asks for them).
  int out_of_core_panel_percent = 30;
  // What the scheduling policies are told of each task (under heteroprio a task's StarPU priority
  // is its bucket and placement instead of hints.priority).
  SchedulingHints hints = critical_path_hints;
  // Where the executed schedule is recorded (tessera/trace.hpp); none by default.
  std::shared_ptr<Trace> trace;
  // Batches only (MatrixIn::host_batch, host_variable_batch; tessera/batched.hpp): matrices per
  // task (0: chosen from the batch and the workers), and on a GPU approximate reciprocal square
  // roots (docs/user-guide.md, Batched mode).
  int batch_chunk = 0;
  bool fast_math = false;
  // Reported while the synchronous forms (potrf, potrs, posv) wait; none by default. The async
  // forms' callers pass theirs to Request::wait.
  ProgressReport progress;
  std::chrono::milliseconds progress_interval{100};
  // Factorizations (potrf, posv), wherever A lies: where asked (not null), Request::wait() writes
  // log det(A) = 2 sum log(diag(L)) here, in double whatever the precision: one value, or one per
  // matrix of a batch; 0 for a matrix whose factorization failed (never a NaN or an infinity).
  // Tile factorizations sum one task's share per diagonal tile, read where the tile lies.
  double* log_determinant = nullptr;
  // Adaptive precision (one real double-precision matrix: a host array, a tile matrix or a matrix
  // in GPU memory (device::potrf, potrf_ex), factored as tiles; batches refused): the accuracy
  // u_req asked of the factor, 0 (default) for FP64 throughout. From the tiles' Frobenius norms,
  // each tile (i, j) below the diagonal of an nt x nt tile matrix takes the lowest arithmetic of
  // unit roundoff u (fp16 2^-11, fp32 2^-22: TileArithmetic) with
  //   ||A_ij||_F nt / ||A||_F < u_req / u,
  // FP64 otherwise and on the diagonal (the rule of Higham and Mary's adaptive-precision
  // factorizations): the factor's backward error ||A - L L^T||_F / ||A||_F stays within a small
  // multiple of u_req. The request waits for the norms before it returns.
  double accuracy = 0;
  // Where asked (not null), the arithmetic each tile took, written before the request returns.
  TileArithmeticMap* tile_arithmetic = nullptr;

  // Defaults overridden by TESSERA_NB, TESSERA_MODE, TESSERA_GPU_KERNELS, TESSERA_TASK_GRAIN
  // (tiles, block-columns or auto), TESSERA_OUT_OF_CORE_PANEL_PERCENT, and TESSERA_TRACE
  // (a .json or .svg file each request's trace is written to when the request is done).
  static FactorOptions from_environment();
};

// Names <-> enums (throw InvalidArgument on unknown names).
TESSERA_EXPORT Mode parse_mode(const std::string& name);
TESSERA_EXPORT const char* to_string(Mode mode);
TESSERA_EXPORT Uplo parse_uplo(const std::string& name);
TESSERA_EXPORT const char* to_string(Uplo uplo);
TESSERA_EXPORT GpuKernels parse_gpu_kernels(const std::string& name);
TESSERA_EXPORT const char* to_string(GpuKernels kernels);
TESSERA_EXPORT TensorCores parse_tensor_cores(const std::string& name);
TESSERA_EXPORT const char* to_string(TensorCores cores);
TESSERA_EXPORT Refinement parse_refinement(const std::string& name);  // lapack or gmres
TESSERA_EXPORT const char* to_string(Refinement refinement);
TESSERA_EXPORT const char* to_string(TaskKind kind);
TESSERA_EXPORT TaskGrain parse_task_grain(const std::string& name);
TESSERA_EXPORT const char* to_string(TaskGrain grain);
TESSERA_EXPORT HostTiles parse_host_tiles(const std::string& name);
TESSERA_EXPORT GpuPlacement parse_gpu_placement(const std::string& name);
TESSERA_EXPORT const char* to_string(GpuPlacement placement);
TESSERA_EXPORT Objective parse_objective(const std::string& name);
TESSERA_EXPORT const char* to_string(Objective objective);
TESSERA_EXPORT const char* to_string(HostTiles tiles);

}  // namespace tessera
