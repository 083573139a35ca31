#include "plan.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "tessera/error.hpp"
#include "thresholds.hpp"

namespace tessera::detail {

namespace {

// A decision's reason, formatted only where the plan is explained (Plan::explained): a request
// nobody traces or explains spends no time on text.
template <class Text>
void say(Plan& p, Text&& text) {
  if (p.explained) p.why.push_back(text());
}

constexpr const Thresholds& t = kThresholds;

// The largest order of one matrix of this scalar type that one thread block factors.
int one_block_max_n(Precision precision) {
  return precision == Precision::double_complex   ? t.one_block_potrf_max_n_complex_double
         : precision == Precision::single_complex ? t.one_block_potrf_max_n_complex_single
                                                  : t.one_block_potrf_max_n;
}

Mode allowed_by_policy(const PolicyModes& policy, Mode mode) {
  if (!policy.runs(mode))
    throw RuntimeError("scheduling policy '" + policy.name + "' cannot run " + to_string(mode) +
                       " mode: " + policy.restriction);
  return mode;
}

std::string mode_reason(const Machine& machine, const Plan& p) {
  if (p.requested == Mode::automatic)
    return fmt::format("mode {} (automatic: {})", to_string(p.mode), machine.automatic.reason);
  if (p.hybrid_without_gpu) return "mode cpu (hybrid asked for, but the runtime has no CUDA worker)";
  std::string line = fmt::format("mode {} (asked for)", to_string(p.mode));
  if (p.mode == Mode::hybrid && p.runs_as_gpu_mode)
    line += "; the GPUs dominate, so its tiles and staging are gpu mode's";
  return line;
}

// In gpu and hybrid modes a task may be placed on a GPU, so the largest task's tiles (the three
// of a trailing-update gemm; tiles of order min(nb, n)) must fit in the memory the runtime may use
// there: StarPU would otherwise retry the allocation for ever.
void check_tiles_fit_gpu(const Machine& machine, const Plan& p, Precision precision, int n) {
  const int tile_order = std::min(p.nb, n);
  const std::size_t capacity = machine.gpu_memory_bytes;
  // The caller's stream runs no task: the matrix is in GPU memory already.
  if (capacity == 0 || p.mode == Mode::cpu || p.path == Path::callers_stream) return;
  const double task_bytes = 3.0 * tile_order * tile_order * bytes_per_element(precision);
  if (task_bytes <= static_cast<double>(capacity)) return;
  const double mib = 1024.0 * 1024.0;
  throw ResourceError("tiles of order " + std::to_string(tile_order) + ": one task's three tiles need " +
                      std::to_string(static_cast<long long>(task_bytes / mib)) + " MiB, more than the " +
                      std::to_string(static_cast<long long>(capacity / mib)) +
                      " MiB StarPU may use on the GPU; choose a smaller nb or cpu mode");
}

void choose_tile_size(const Machine& machine, const PlanRequest& r, Plan& p) {
  if (r.place == DataPlace::tiles) {
    p.nb = r.tile_nb;
    say(p, [&] { return fmt::format("tile size {} (the tile matrix's)", p.nb); });
    return;
  }
  if (r.options.nb < 0) throw InvalidArgument("nb must be positive (or 0 to let Tessera choose)");
  if (r.options.nb > 0) {
    p.nb = r.options.nb;
    say(p, [&] { return fmt::format("tile size {} (asked for)", p.nb); });
    return;
  }
  const Mode tiles_of = tile_mode(machine, p.mode);
  p.nb = default_tile_size(r.n, r.precision, tiles_of, machine.cpu_workers);
  say(p, [&] {
    return fmt::format("tile size {} (Tessera's for n = {} in {} mode on {} CPU worker(s))", p.nb, r.n,
                       to_string(tiles_of), machine.cpu_workers);
  });
}

// The out-of-core panels of a factorization whose lower tiles do not fit the smallest GPU where
// its tasks may run (FactorOptions::out_of_core_panel_percent).
void choose_panels(const Machine& machine, const PlanRequest& r, Plan& p) {
  const int percent = r.options.out_of_core_panel_percent;
  const double capacity = static_cast<double>(machine.gpu_memory_bytes) / bytes_per_element(r.precision);
  if (percent == 0 || capacity == 0 || p.mode == Mode::cpu || r.n == 0) return;
  const TileGrid grid(r.n, r.n, p.nb, TileStructure::symmetric_lower, {});
  double tiles = 0;  // elements of the lower tiles
  for (int j = 0; j < grid.tile_cols(); ++j) tiles += double(grid.rows() - j * grid.nb()) * grid.tile_width(j);
  if (tiles <= t.out_of_core_fill * capacity) return;
  p.panel_starts = panels_within(grid, capacity * percent / 100);
  if (p.panel_starts.size() > 1)
    say(p, [&] {
      return fmt::format(
          "out of core: {} panels (the lower tiles exceed {:.0f}% of the GPU memory the runtime "
          "may use)",
          p.panel_starts.size(), 100 * t.out_of_core_fill);
    });
}

// A tile matrix factored as one task: grain left to Tessera, gpu mode on one GPU, n up to the
// table's limit, the gathered copy within its share of the GPU memory, and every lower tile on
// the GPU already (tiles that must first come from host memory overlap their copies with the
// tile graph instead).
bool factors_resident_tiles_whole(const Machine& machine, const PlanRequest& r, const Plan& p) {
  if (p.tensor_cores != TensorCores::off || p.accuracy != 0 || r.options.grain != TaskGrain::automatic ||
      r.n > t.whole_resident_tiles_max_n || machine.cuda_devices != 1 ||
      p.mode != Mode::gpu || p.panel_starts.size() > 1 || is_complex(r.precision))
    return false;
  const double gathered_bytes = double(r.n) * r.n * bytes_per_element(r.precision);
  return gathered_bytes <= t.whole_resident_tiles_memory_share * double(machine.gpu_memory_bytes) &&
         r.tiles_on_first_gpu && r.tiles_on_first_gpu();
}

// A device-API factorization as one vendor call on the whole matrix: asked for, or automatic
// (grain and tile size left to Tessera) up to the table's limit on one GPU in a request that runs
// as gpu mode does.
bool factors_device_matrix_whole(const Machine& machine, const PlanRequest& r, const Plan& p) {
  if (r.options.grain == TaskGrain::whole_matrix) return true;
  // A complex matrix as one vendor call on the caller's stream only: the one task of the runtime
  // (with a trace) takes real scalars.
  if (is_complex(r.precision) && r.options.trace) return false;
  const int whole_max_n = r.inverts ? t.whole_device_inverse_max_n : t.whole_device_matrix_max_n;
  return p.tensor_cores == TensorCores::off && p.accuracy == 0 && r.options.grain == TaskGrain::automatic &&
         r.options.nb == 0 && r.n <= whole_max_n && machine.cuda_devices == 1 && p.runs_as_gpu_mode;
}

// A large factorization on the tensor cores with 16-bit operands of a device array on one GPU, grain
// and tile size left to Tessera: recursive on the caller's stream
// (kernels::cuda::potrf_lower_on_tensor_cores), where the tile DAG waits on each FP32 panel solve
// and diagonal factorization between products that the tensor cores finish in a fraction of their
// time. A trace records the runtime's tasks: the tile DAG then.
bool factors_device_matrix_recursively(const Machine& machine, const PlanRequest& r, const Plan& p) {
  const bool sixteen_bit = p.tensor_cores == TensorCores::fp16 || p.tensor_cores == TensorCores::bf16;
  return sixteen_bit && !r.inverts && r.n >= t.tensor_core_recursive_min_n &&
         r.options.grain == TaskGrain::automatic && r.options.nb == 0 && !r.options.trace &&
         machine.cuda_devices == 1 && p.runs_as_gpu_mode;
}

void plan_device_array(const Machine& machine, const PlanRequest& r, Plan& p) {
  if (factors_device_matrix_recursively(machine, r, p)) {
    p.grain = TaskGrain::whole_matrix;
    p.nb = std::max(r.n, 1);
    p.path = Path::callers_stream;
    say(p, [&] {
      return fmt::format("recursive on the caller's stream, its products on the tensor cores (16-bit operands, n >= "
                         "{} on one GPU)",
                         t.tensor_core_recursive_min_n);
    });
    return;
  }
  if (!factors_device_matrix_whole(machine, r, p)) {
    choose_tile_size(machine, r, p);
    return;
  }
  p.grain = TaskGrain::whole_matrix;
  p.nb = std::max(r.n, 1);
  p.path = Path::one_task;
  const bool asked = r.options.grain == TaskGrain::whole_matrix;
  say(p, [&] {
    if (asked) return std::string("one task on the whole matrix (grain whole_matrix asked for)");
    if (r.inverts)
      return fmt::format("vendor calls on the whole matrix (n <= {} on one GPU)", t.whole_device_inverse_max_n);
    return fmt::format("one vendor call on the whole matrix (n <= {} on one GPU)", t.whole_device_matrix_max_n);
  });
  // The caller's stream rather than a runtime task: the grain left to Tessera, and no trace (a
  // trace records the runtime's tasks).
  if (!asked && !r.options.trace) {
    p.path = Path::callers_stream;
    say(p, [&] { return "on the caller's stream, where its matrices are on the runtime's GPU"; });
    p.replays_launches = !r.inverts && r.n <= t.replayed_launches_max_n;
    p.factors_in_one_block = !r.inverts && r.n <= one_block_max_n(r.precision);
    if (p.factors_in_one_block)
      say(p, [&] {
        return fmt::format("factored by one thread block in one launch (n <= {})", one_block_max_n(r.precision));
      });
    else if (p.replays_launches)
      say(p, [&] {
        return fmt::format("its launches replayed as one CUDA graph from the second call of its order (n <= {})",
                           t.replayed_launches_max_n);
      });
  }
}

bool fact(const std::function<bool()>& ask) { return ask && ask(); }

// Whether a host array's tiles can hold its blocks as stored: a lower-stored array, or an
// upper-stored one whose tiles are transposed (upper_as_stored).
bool tiles_hold_blocks_as_stored(const PlanRequest& r) {
  return r.options.uplo == Uplo::lower || upper_as_stored(r.options);
}

// Staged tiles (HostTiles::staged; automatic: the runtime's first call, on an array of
// staged_first_call_min_bytes or more): each tile on the GPU owning it (the plan's owners), a
// GPU's tiles of a tile column in one panel (OwnedPanels). For a request that runs as gpu mode
// does (hybrid too where the GPUs dominate: a tile task a CPU takes then has StarPU bring the tile
// over and back, as for any tile in GPU memory), blocks kept as stored, an array the caller has
// not pinned (a pinned one is used in place, with no copy at all), and tiles within their share
// of each GPU's free memory.
bool stages(const Machine& machine, const PlanRequest& r, Plan& p) {
  const double element = bytes_per_element(r.precision);
  const bool asked = machine.host_tiles == HostTiles::staged;
  if (!asked && !(machine.host_tiles == HostTiles::automatic &&
                  double(r.n) * r.n * element >= t.staged_first_call_min_bytes))
    return false;
  if (r.n <= 0 || machine.cuda_devices < 1 || !tiles_hold_blocks_as_stored(r) || !p.runs_as_gpu_mode ||
      fact(r.array_pinned_by_caller))
    return false;
  const int gpus = p.gpu_owners.gpus();
  if (static_cast<int>(machine.cuda_device_ids.size()) < gpus || !r.free_gpu_memory) return false;
  // Columns a whole number of 256 bytes apart keep the alignment of the GPU allocation.
  OwnedPanels panels(r.n, p.nb, upper_as_stored(r.options), p.gpu_owners, static_cast<std::size_t>(256 / element));
  for (int g = 0; g < gpus; ++g)
    if (double(panels.elements(g)) * element >
        t.staged_free_memory_share * double(r.free_gpu_memory(machine.cuda_device_ids[static_cast<std::size_t>(g)])))
      return false;
  if (!asked && !fact(r.claim_first_call)) return false;
  p.host_tiles = HostArrayTiles::staged;
  p.staging_devices.assign(machine.cuda_device_ids.begin(), machine.cuda_device_ids.begin() + gpus);
  p.staged_panels = std::move(panels);
  say(p, [&] {
    return asked ? fmt::format("tiles staged on {} GPU(s) (host tiles staged asked for)", gpus)
                 : fmt::format(
                       "tiles staged on {} GPU(s) (the runtime's first call, on an array of {:g} GiB or "
                       "more that its caller has not pinned)",
                       gpus, t.staged_first_call_min_bytes / (1024.0 * 1024 * 1024));
  });
  return true;
}

// The caller's array as tiles (HostTiles::in_place; automatic: an array its caller pinned, or the
// runtime's first call): blocks kept as stored, an array no larger than the machine's memory (one
// claimed larger cannot be the caller's), and a solve with right-hand sides.
bool in_place(const Machine& machine, const PlanRequest& r, Plan& p) {
  if (r.n <= 0 || !tiles_hold_blocks_as_stored(r) || (r.solves && r.nrhs <= 0)) return false;
  const double triangle_bytes = double(r.n) * (double(r.n) + 1) / 2 * bytes_per_element(r.precision);
  if (machine.physical_memory_bytes != 0 && triangle_bytes > double(machine.physical_memory_bytes)) return false;
  const char* why = nullptr;
  if (machine.host_tiles == HostTiles::in_place)
    why = "host tiles in-place asked for";
  else if (machine.host_tiles != HostTiles::automatic)
    return false;
  else if (fact(r.array_pinned_by_caller))
    why = "its caller pinned it";
  else if (fact(r.claim_first_call))
    why = "the runtime's first call";
  else
    return false;
  p.host_tiles = HostArrayTiles::in_place;
  // posv's right-hand sides stay pooled: its failure must leave B as it was, while solve tasks
  // that depend only on the factor's first columns may already have run.
  p.rhs_in_place = r.solves && !r.factors;
  say(p, [&] {
    return fmt::format("tiles in place: the caller's array{} ({})", p.rhs_in_place ? " and right-hand sides" : "", why);
  });
  return true;
}

void choose_host_tiles(const Machine& machine, const PlanRequest& r, Plan& p) {
  if (stages(machine, r, p) || in_place(machine, r, p)) return;
  if (r.n > 0) say(p, [&] { return "pooled tiles (the array copied in and out)"; });
}

void choose_gpu_owners(const Machine& machine, Plan& p) {
  if (p.mode == Mode::cpu || machine.gpus_for_tiles <= 1) return;
  p.gpu_owners = GpuOwners::for_gpus(machine.gpus_for_tiles);
  say(p, [&] {
    return fmt::format("tasks placed on the GPUs owning their tiles, a {} x {} grid of GPUs", p.gpu_owners.rows,
                       p.gpu_owners.cols);
  });
}

void plan_on_calling_thread(const PlanRequest& r, Plan& p) {
  p.path = Path::calling_thread;
  p.nb = std::max(r.n, 1);
  const int matrices = r.place == DataPlace::batch ? r.batch : 1;
  say(p, [&] {
    return fmt::format(
        "LAPACK on the calling thread, no task ({} matrix(es) of order {}{}: at most the work "
        "of one factorization of order {}, and nothing asking for tasks)",
        matrices, r.n, r.solves ? fmt::format(", {} right-hand side(s)", r.nrhs) : "", calling_thread_max_n(r));
  });
}

void plan_batch(const Machine& machine, const PlanRequest& r, Plan& p) {
  p.path = Path::batched_chunks;
  if (r.batch <= 0) return;
  if (r.batch_chunk < 0) throw InvalidArgument("chunk must be positive (or 0 to let Tessera choose)");
  p.batch_chunk = r.batch_chunk > 0 ? r.batch_chunk : default_batch_chunk(machine, r.batch, p.mode);
  say(p,
      [&] { return fmt::format("chunks of {} matrices{}", p.batch_chunk, r.batch_chunk > 0 ? " (asked for)" : ""); });
}

}  // namespace

const char* to_string(Path path) {
  switch (path) {
    case Path::tiles: return "tiles";
    case Path::one_task: return "one task";
    case Path::callers_stream: return "caller's stream";
    case Path::batched_chunks: return "batched chunks";
    case Path::calling_thread: return "calling thread";
  }
  return "?";
}

const char* to_string(HostArrayTiles tiles) {
  switch (tiles) {
    case HostArrayTiles::pooled: return "pooled";
    case HostArrayTiles::in_place: return "in place";
    case HostArrayTiles::staged: return "staged";
  }
  return "?";
}

const char* to_string(DataPlace place) {
  switch (place) {
    case DataPlace::host_array: return "host array";
    case DataPlace::tiles: return "tile matrix";
    case DataPlace::device_array: return "device array";
    case DataPlace::batch: return "batch";
  }
  return "?";
}

Mode resolve_mode(const Machine& machine, Mode requested, bool* hybrid_without_gpu) {
  switch (requested) {
    case Mode::cpu:
      if (machine.cpu_workers == 0) throw RuntimeError("cpu mode asked for, but the runtime has no CPU worker");
      return Mode::cpu;
    case Mode::gpu:
      if (machine.cuda_workers == 0)
        throw RuntimeError(machine.built_with_cuda
                               ? "gpu mode asked for, but no CUDA worker could start (no usable GPU, or STARPU_NCUDA=0)"
                               : "gpu mode asked for, but this Tessera was built without CUDA");
      return allowed_by_policy(machine.policy, Mode::gpu);
    case Mode::hybrid:
      if (machine.cuda_workers > 0) return allowed_by_policy(machine.policy, Mode::hybrid);
      if (hybrid_without_gpu) *hybrid_without_gpu = true;
      return Mode::cpu;
    case Mode::automatic:
      if (machine.automatic.mode == Mode::automatic) return resolve_mode(machine, Mode::cpu);
      return resolve_mode(machine, machine.automatic.mode, hybrid_without_gpu);
  }
  return Mode::cpu;
}

bool runs_as_gpu_mode(const Machine& machine, Mode mode) {
  return mode == Mode::gpu || (mode == Mode::hybrid && machine.automatic.mode == Mode::gpu);
}

int default_tile_size(int n, Precision precision, Mode mode, int cpu_workers) {
  if (n <= 0) return 1;
  if (mode == Mode::cpu) {
    int nb = n >= t.cpu_nb_large_from    ? t.cpu_nb_large
             : n >= t.cpu_nb_medium_from ? t.cpu_nb_medium
             : n >= t.cpu_nb_small_from  ? t.cpu_nb_small
                                         : t.cpu_nb_tiny;
    if (cpu_workers > 0 && cpu_workers <= t.cpu_few_workers && n >= t.cpu_few_workers_from) nb = t.cpu_few_workers_nb;
    return std::min(nb, n);
  }
  const int largest_from = mode == Mode::gpu ? t.gpu_nb_largest_from_gpu_mode : t.gpu_nb_largest_from_hybrid;
  const int gpu_nb = n >= largest_from           ? t.gpu_nb_largest
                     : n >= t.gpu_nb_large_from  ? t.gpu_nb_large
                     : n >= t.gpu_nb_medium_from ? t.gpu_nb_medium
                                                 : t.gpu_nb_small;
  // Single precision's tiles are twice as wide: half the bytes per element, the same work per byte
  // moved. Complex tiles keep double's width: four real multiply-adds per element's.
  return std::min(precision == Precision::single_real ? std::min(2 * gpu_nb, t.gpu_nb_largest) : gpu_nb, n);
}

int default_batch_chunk(const Machine& machine, int batch, Mode mode) {
  const int workers = mode == Mode::gpu   ? machine.cuda_workers
                      : mode == Mode::cpu ? machine.cpu_workers
                                          : machine.cpu_workers + machine.cuda_workers;
  const int chunks = std::max(1, t.batch_chunks_per_worker * workers);
  const int minimum = mode == Mode::cpu ? 1 : t.gpu_chunk_min;
  return std::max(1, std::max(std::min(minimum, batch), (batch + chunks - 1) / chunks));
}

namespace {

// A stack's path between the batched kernels alone, cuSOLVER's batched potrf and dense calls.
StackPath stack_path_without_blocks(int n, int batch, Precision precision) {
  if (n >= t.dense_device_min_n) return StackPath::one_at_a_time;
  const bool one = batch == 1;
  const int vendor_min_n =
      precision == Precision::double_complex
          ? (one ? t.complex_double_single_matrix_vendor_min_n : t.complex_double_short_stack_min_n)
      : precision == Precision::single_complex
          ? (one ? t.complex_single_single_matrix_vendor_min_n : t.complex_single_short_stack_min_n)
          : (one ? t.single_matrix_vendor_min_n : t.short_stack_min_n);
  const bool short_stack = n >= vendor_min_n && batch > 0 && batch < t.short_stack_max_batch;
  return short_stack ? StackPath::vendor_batched : StackPath::batched_kernels;
}

}  // namespace

StackPath stack_path(int n, int batch, Precision precision) {
  if (n >= t.dense_device_min_n) return StackPath::one_at_a_time;
  const bool short_batch = batch > 0 && batch < t.short_stack_max_batch;
  const int blocked_min_n = precision == Precision::double_real      ? t.blocked_stack_min_n_double
                            : precision == Precision::single_real    ? (short_batch ? t.blocked_short_stack_min_n_single
                                                                                    : t.blocked_stack_min_n_single)
                            : short_batch                            ? 0
                            : precision == Precision::double_complex ? t.blocked_stack_min_n_complex_double
                                                                     : t.blocked_stack_min_n_complex_single;
  if (batch > 1 && blocked_min_n > 0 && n >= blocked_min_n) return StackPath::blocked_kernels;
  const bool one_wave = batch <= t.one_block_stack_max_batch;
  if (batch > 1 && n >= t.one_block_stack_min_n && n <= one_block_max_n(precision) &&
      (one_wave || (short_batch && n >= t.one_block_short_stack_min_n)))
    return StackPath::one_block;
  return stack_path_without_blocks(n, batch, precision);
}

bool stack_solves_take_batched_kernels(int n, int batch, int nrhs, Precision precision) {
  if (stack_path_without_blocks(n, batch, precision) != StackPath::batched_kernels) return false;
  if (batch < t.short_stack_max_batch) return true;
  if (is_complex(precision)) return n <= t.complex_batched_solve_max_n;
  return n <= t.batched_solve_max_n && (nrhs <= t.batched_solve_max_nrhs || n <= t.batched_lane_solve_max_n);
}

bool inverse_takes_batched_kernel(int n, int batch, Precision precision) {
  const bool complex = is_complex(precision);
  if (batch == 1) return n <= (complex ? t.complex_single_inverse_max_n : t.single_inverse_max_n);
  if (batch < t.short_stack_max_batch)
    return n <= (complex ? t.short_stack_inverse_max_n_complex : t.short_stack_inverse_max_n_real);
  return n <= t.batched_inverse_max_n;
}

bool inverse_takes_dense_call(int n, int batch, Precision precision) {
  return batch == 1 && !inverse_takes_batched_kernel(n, batch, precision);
}

bool batched_refinement_in_single(int single_to_double_ratio) {
  return single_to_double_ratio >= t.batched_refinement_min_single_to_double_ratio;
}

bool triangle_inverse_by_levels(int n) { return n > t.triangle_inverse_by_solve_max_n; }

void check_options(const FactorOptions& options) {
  const int percent = options.out_of_core_panel_percent;
  if (percent < 0 || percent > 90)
    throw InvalidArgument("out_of_core_panel_percent must be 0 (never) or 1 to 90, not " + std::to_string(percent));
}

// Tensor-core updates (FactorOptions::tensor_cores) are the tile tasks' gemm and syrk on real
// single-precision tiles: refused for anything else rather than silently ignored.
void plan_tensor_cores(const PlanRequest& r, Plan& p) {
  if (r.options.tensor_cores == TensorCores::off) return;
  if (r.precision != Precision::single_real)
    throw InvalidArgument("tensor_cores takes real single-precision matrices (float); posv_refined applies it to its "
                          "single-precision factor");
  if (r.place == DataPlace::batch) throw InvalidArgument("tensor_cores applies to tile factorizations, not to batches");
  if (r.options.grain == TaskGrain::block_columns || r.options.grain == TaskGrain::whole_matrix)
    throw InvalidArgument(std::string("tensor_cores runs on tile tasks: grain tiles or automatic, not ") +
                          to_string(r.options.grain));
  p.tensor_cores = r.options.tensor_cores;
  say(p, [&] {
    return fmt::format("trailing updates on the GPUs' tensor cores ({} operands, FP32 accumulation)",
                       to_string(p.tensor_cores));
  });
}

namespace {

// Adaptive precision (FactorOptions::accuracy): a real double-precision factorization of a host
// array, a device array or a tile matrix as tile tasks (never on the calling thread or as one
// vendor call): refused for anything else rather than silently ignored. A solve with the factor
// given has nothing to adapt.
void plan_adaptive(const PlanRequest& r, Plan& p) {
  const double u = r.options.accuracy;
  if (u == 0) return;
  if (!(u > 0 && u < 1)) throw InvalidArgument(fmt::format("accuracy must be 0 (FP64 throughout) or in (0, 1), not {}", u));
  if (r.precision != Precision::double_real)
    throw InvalidArgument("accuracy (adaptive precision) takes real double-precision matrices");
  if (r.place == DataPlace::batch)
    throw InvalidArgument(std::string("accuracy (adaptive precision) takes one matrix (a host array, a device array or "
                                      "a tile matrix), not a ") +
                          to_string(r.place));
  if (r.options.grain == TaskGrain::block_columns || r.options.grain == TaskGrain::whole_matrix)
    throw InvalidArgument(std::string("accuracy (adaptive precision) runs on tile tasks: grain tiles or automatic, not ") +
                          to_string(r.options.grain));
  if (!r.factors) return;
  p.accuracy = u;
  say(p, [&] {
    return fmt::format(
        "adaptive precision: each tile's updates in the lowest arithmetic its norm allows for "
        "accuracy {:g}",
        u);
  });
}

// A request's work as the calling-thread limits count it: three times the flops (n^3 / 3 to
// factor, 2 n^2 per right-hand side to solve; a complex multiply-add is four real ones), as the
// cube of an order.
double calling_thread_work(const PlanRequest& r) {
  const double matrices = r.place == DataPlace::batch ? std::max(r.batch, 0) : 1;
  const double per_flop = is_complex(r.precision) ? 4.0 : 1.0;
  return per_flop * matrices * r.n * r.n * (double(r.n) + 6.0 * std::max(r.nrhs, 0));
}

bool within_order(double work, int order) { return work <= double(order) * order * order; }

}  // namespace

int calling_thread_max_n(const PlanRequest& r) {
  // The larger limit, and the fact it needs, only for work beyond the smaller one.
  if (r.place != DataPlace::host_array || within_order(calling_thread_work(r), t.calling_thread_max_n))
    return t.calling_thread_max_n;
  const bool without_gpus = r.options.mode == Mode::cpu || !fact(r.gpus_present);
  return without_gpus ? t.calling_thread_max_n_without_gpus : t.calling_thread_max_n;
}

bool runs_on_calling_thread(const PlanRequest& r) {
  const bool host = r.place == DataPlace::host_array || (r.place == DataPlace::batch && r.n >= 0);
  const FactorOptions& o = r.options;
  if (!host || (o.mode != Mode::cpu && o.mode != Mode::automatic) || o.nb != 0 || o.grain != TaskGrain::automatic ||
      o.batch_chunk != 0 || o.trace || (o.accuracy != 0 && r.factors))
    return false;
  return within_order(calling_thread_work(r), calling_thread_max_n(r));
}

Plan plan(const Machine& machine, const PlanRequest& r, bool explained) {
  Plan p;
  p.explained = explained;
  p.requested = r.options.mode;
  p.grain = r.options.grain;
  check_options(r.options);
  if (is_complex(r.precision) && (r.options.grain == TaskGrain::block_columns || r.options.grain == TaskGrain::whole_matrix))
    throw InvalidArgument(std::string("grain ") + to_string(r.options.grain) +
                          " takes real scalars: complex matrices are factored as tiles (grain tiles or automatic)");
  plan_tensor_cores(r, p);
  plan_adaptive(r, p);
  if (runs_on_calling_thread(r)) {
    p.mode = Mode::cpu;
    say(p, [&] { return r.options.mode == Mode::cpu ? "mode cpu (asked for)" : "mode cpu (automatic: small work)"; });
    plan_on_calling_thread(r, p);
    return p;
  }
  p.mode = resolve_mode(machine, r.options.mode, &p.hybrid_without_gpu);
  p.runs_as_gpu_mode = runs_as_gpu_mode(machine, p.mode);
  say(p, [&] { return mode_reason(machine, p); });
  choose_gpu_owners(machine, p);
  switch (r.place) {
    case DataPlace::batch:
      plan_batch(machine, r, p);
      return p;
    case DataPlace::device_array:
      plan_device_array(machine, r, p);
      check_tiles_fit_gpu(machine, p, r.precision, r.n);
      return p;
    case DataPlace::host_array:
    case DataPlace::tiles:
      choose_tile_size(machine, r, p);
      check_tiles_fit_gpu(machine, p, r.precision, r.n);
      if (r.factors && p.accuracy == 0) choose_panels(machine, r, p);
      if (r.place == DataPlace::host_array) {
        choose_host_tiles(machine, r, p);
        return p;
      }
      if (r.factors && factors_resident_tiles_whole(machine, r, p)) {
        p.grain = TaskGrain::whole_matrix;
        p.path = Path::one_task;
        say(p, [&] {
          return fmt::format("one task on the gathered tiles (n <= {}, every tile on the one GPU already)",
                             t.whole_resident_tiles_max_n);
        });
      }
      return p;
  }
  return p;
}

}  // namespace tessera::detail
