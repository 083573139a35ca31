// What every codelet file shares: the argument header each task carries, the view of a StarPU
// matrix buffer, perf-model and codelet construction, and task submission with completion
// accounting. Codelets stay thin adapters from StarPU buffers to kernel functions.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <array>

#include "distributed_inserter.hpp"
#include "runtime_resources.hpp"
#include "submission.hpp"
#include "task_tags.hpp"
#include "tasks.hpp"

namespace tessera::detail {

// Header of every task's argument block (the StarPU cl_arg, malloc'ed, freed by StarPU after the
// callback). Each operation's argument struct starts with it, and it starts with the task's
// scheduling hints, where the policies read them (task_tags.hpp).
struct TaskHeader {
  TaskHints hints;  // first: see task_hints() in task_tags.hpp
  Submission* submission;
  const RuntimeResources* resources;
  GpuKernels gpu_kernels;
  TaskKind kind;
};

// A tile as a task sees it. ld comes from the interface, never from the height: a tile of a view
// (TileMatrix over a caller's matrix) has the matrix's leading dimension where it is registered,
// while StarPU's copies of it on other memory nodes are packed (ld = rows).
template <class T>
struct TileView {
  T* ptr;
  int rows;
  int cols;
  int ld;
};

template <class T>
TileView<T> tile_view(void* buffer) {
  auto* m = static_cast<starpu_matrix_interface*>(buffer);
  return {reinterpret_cast<T*>(m->ptr), static_cast<int>(m->nx), static_cast<int>(m->ny), static_cast<int>(m->ld)};
}

// A history-based perf model named tessera_<precision><op> (one file per host in StarPU's
// sampling directory); StarPU keeps one history per implementation and architecture.
starpu_perfmodel make_history_model(const std::string& symbol);

// The parts of a codelet that differ between operations. CUDA implementation 0 is the vendor
// library's, 1 Tessera's own kernel (nullptr where there is none).
struct CodeletSpec {
  const char* name;
  starpu_cpu_func_t cpu = nullptr;
  starpu_cuda_func_t cuda_vendor = nullptr;
  starpu_cuda_func_t cuda_custom = nullptr;
  bool cuda_async = true;  // the CUDA functions only enqueue work on the worker's stream
  std::initializer_list<starpu_data_access_mode> modes;  // empty: a variable number, given per task
  int (*can_execute)(unsigned worker, starpu_task* task, unsigned implementation) = nullptr;
  starpu_perfmodel* model = nullptr;
};
starpu_codelet make_codelet(const CodeletSpec& spec);

// A CUDA implementation where Tessera is built with CUDA, none otherwise.
#ifdef TESSERA_HAVE_CUDA
#define TESSERA_IF_CUDA(implementation) implementation
#else
#define TESSERA_IF_CUDA(implementation) nullptr
#endif

// The codelet `spec` describes, with a history perf model named tessera_<precision><name>
// (allocated once per codelet: StarPU keeps it until the process ends).
template <class T>
starpu_codelet make_tile_codelet(CodeletSpec spec) {
  spec.model = new starpu_perfmodel(make_history_model(std::string("tessera_") + ScalarTraits<T>::letter + spec.name));
  return make_codelet(spec);
}

// Where tasks of a resolved mode may run.
uint32_t where_of(Mode mode);

// Runs a task body: skipped once the submission has stopped (a failure upstream; with
// even_after_failure, only once it is cancelled), and any
// exception is recorded in the submission (with its type) instead of escaping into the runtime's
// C code.
template <class Body>
void run_task_body(const TaskHeader& header, const char* what, Body&& body, bool even_after_failure = false) {
  if (header.submission->stopped() && (!even_after_failure || header.submission->cancelled())) return;
  try {
    body();
  } catch (...) {
    header.submission->record_current_exception(what);
  }
}

// Args must start with a TaskHeader and be trivially copyable.
template <class Args>
const Args& task_args(void* cl_arg) {
  return *static_cast<const Args*>(cl_arg);
}

template <class T, class Body, class Front, std::size_t... I>
void call_with_tiles(void* buffers[], std::index_sequence<I...>, Body& body, const Front& front) {
  body(front, tile_view<T>(buffers[I])...);
}

// A codelet implementation's usual shape: body(args, tile...) with the task's arguments and its
// first `Tiles` buffers as tiles, under run_task_body's rules.
template <class Args, class T, std::size_t Tiles, class Body>
void run_on_tiles(void* buffers[], void* cl_arg, const char* what, Body&& body, bool even_after_failure = false) {
  const Args& args = task_args<Args>(cl_arg);
  run_task_body(args.header, what, [&] { call_with_tiles<T>(buffers, std::make_index_sequence<Tiles>{}, body, args); },
                even_after_failure);
}

// Submits one task; the submission counts it until its callback has run. Throws RuntimeError if
// the runtime refuses the task (no worker can run it). A codelet with a variable number of buffers
// takes any count; the others exactly theirs, in their modes. With ctx.distributed, every rank
// calls it and the task is submitted (and counted) on the rank that runs it only.
void submit_task(const TaskContext& ctx, starpu_codelet* codelet, const TaskHeader& header, void* args,
                 std::size_t args_size, const TaskBuffer* buffers, std::size_t count, const TileRef& traced_tile,
                 int step);

// `hints` with the GPU a tile operation (potrf, trsm, syrk, gemm) runs on when the context deals
// tiles over several GPUs: the owner of the tile it writes, unless the hints name one. Outside
// cpu mode (where no task runs on a GPU and the hint is ignored) a GPU the runtime does not have
// is refused with InvalidArgument.
TaskHints placed_on_gpu(const TaskContext& ctx, TaskHints hints, TaskKind kind, const TileRef& written);

template <class Args>
void submit(const TaskContext& ctx, starpu_codelet* codelet, Args args, const TaskBuffer* buffers, std::size_t count,
            const TaskHints& hints, const TileRef& traced_tile, int step) {
  static_assert(std::is_trivially_copyable_v<Args>, "task arguments are copied bytewise");
  static_assert(offsetof(Args, header) == 0, "the arguments start with the task header");
  args.header = TaskHeader{placed_on_gpu(ctx, hints, args.header.kind, traced_tile), ctx.submission, ctx.resources,
                           ctx.gpu_kernels, args.header.kind};
  void* block = std::malloc(sizeof(Args));
  if (!block) throw std::bad_alloc();
  new (block) Args(args);
  submit_task(ctx, codelet, args.header, block, sizeof(Args), buffers, count, traced_tile, step);
}

template <class Args>
void submit(const TaskContext& ctx, starpu_codelet* codelet, Args args, std::initializer_list<TaskBuffer> buffers,
            const TaskHints& hints, const TileRef& traced_tile, int step) {
  submit(ctx, codelet, args, buffers.begin(), buffers.size(), hints, traced_tile, step);
}

// A task's buffers as tiles: count of them from `first`.
template <class T>
std::vector<TileView<T>> tile_views(void* buffers[], int first, int count) {
  std::vector<TileView<T>> views;
  views.reserve(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) views.push_back(tile_view<T>(buffers[first + t]));
  return views;
}

// Tile b continues tile a downwards in one column-major allocation (true of the tiles of a matrix
// registered in place; StarPU's own copies of tiles are separate allocations). Whether a run of
// such tiles is one block also depends on its height fitting the leading dimension.
template <class T>
bool continues_below(const TileView<T>& a, const TileView<T>& b) {
  return b.ptr == a.ptr + a.rows && b.ld == a.ld && b.cols == a.cols;
}

// Runs of consecutive tiles in [first, views.size()) that form one column-major block each, as
// (first tile, tiles, rows); also_continues(t, rows of the run so far) may refuse to join tile t
// to the run before it.
template <class T, class Also>
std::vector<std::array<int, 3>> contiguous_runs(const std::vector<TileView<T>>& views, int first, Also also_continues) {
  std::vector<std::array<int, 3>> runs;
  for (int t = first; t < static_cast<int>(views.size()); ++t) {
    const bool fits = !runs.empty() && static_cast<long long>(runs.back()[2]) + views[t].rows <= views[t].ld;
    if (fits && continues_below(views[t - 1], views[t]) && also_continues(t, runs.back()[2])) {
      runs.back()[1] += 1;
      runs.back()[2] += views[t].rows;
    } else {
      runs.push_back({t, 1, views[t].rows});
    }
  }
  return runs;
}


#ifdef TESSERA_HAVE_CUDA
// The CUDA context of the calling worker.
CudaWorkerContext& current_cuda_context(const TaskHeader& header);
// The room a slice of `bytes` takes in a worker's workspace cut into several slices: rounded up so
// that the next slice starts 256-byte aligned, as the workspace itself does.
constexpr std::size_t workspace_slice_bytes(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
// Implementation index 0 of each CUDA codelet is the vendor library, 1 Tessera's own kernel.
// `faster`: what the tuning table says for this task with GpuKernels::any (see
// can_execute_with_kernel_choice); unknown leaves the choice to the perf models.
bool cuda_implementation_allowed(const TaskHeader& header, unsigned implementation, bool custom_supported,
                                 FasterKernel faster = FasterKernel::unknown);

// A CPU worker may take a task it has no timing for (the scheduler would put it there to
// calibrate) only where no GPU can take it, or where its tiles are small enough that a blind
// placement costs little (Thresholds::largest_blind_cpu_tile): a trailing-update gemm on large
// tiles runs longer on one core than the whole factorization takes on the GPU.
bool cpu_may_run_uncalibrated(bool gpu_may_run, int tile_order);

// On a CPU worker: under a policy that places tasks by perf models, what cpu_may_run_uncalibrated
// allows, or the CPU's timing of this task's footprint is known. Policies that place by other
// rules (panel-cpu, heteroprio, work stealing) are not second-guessed.
int cpu_worker_may_run(const TaskHeader& header, unsigned worker, starpu_task* task, unsigned implementation);

// Whether the CUDA implementation running now is asynchronous (STARPU_CUDA_ASYNC).
bool running_cuda_implementation_is_asynchronous();

// The task's work on the worker's urgent stream when its hints put it on the critical path and
// the runtime allows urgent streams.
inline UrgentWork urgent_work(const TaskHeader& header, CudaWorkerContext& ctx) {
  return UrgentWork(ctx, header.hints.critical && header.resources->urgent_streams(),
                    running_cuda_implementation_is_asynchronous());
}

// On a CUDA worker: body(args, the worker's CUDA context, tile...), as run_on_tiles, on the urgent
// stream for a task on the critical path.
template <class Args, class T, std::size_t Tiles, class Body>
void run_on_cuda_tiles(void* buffers[], void* cl_arg, const char* what, Body&& body) {
  run_on_tiles<Args, T, Tiles>(buffers, cl_arg, what, [&](const Args& args, auto... tiles) {
    CudaWorkerContext& ctx = current_cuda_context(args.header);
    const UrgentWork urgent = urgent_work(args.header, ctx);
    body(args, ctx, tiles...);
  });
}

// LAPACK's info of a potrf whose device info cuSOLVER or Tessera's kernel wrote to
// ctx.device_info, checked against the diagonal of the factored tile A (see potrf.cpp); waits for
// the worker's stream.
template <class T>
int device_potrf_info(const TileView<T>& A, CudaWorkerContext& ctx);

// The factorization of the triangle `uplo` of the square tile A (GPU memory) by LAPACK on the host,
// the tile copied there and back on the worker's stream; returns LAPACK's info. For a request whose
// input held a NaN or an infinity: cuSOLVER's potrf and Tessera's potf2 compute a pivot's square
// root as d * rsqrt(d), NaN for d = +inf, where LAPACK takes it (+inf on the diagonal fails
// nowhere), and only a non-finite input brings an infinite pivot.
template <class T>
int factor_on_host(CudaWorkerContext& ctx, char uplo, const TileView<T>& A);
inline bool factor_on_host_for(const TaskHeader& header) { return header.submission->non_finite_input(); }

// For a task on one tile (potrf, trsm, syrk, gemm): which implementation the tuning table measured
// faster on CUDA worker `worker`'s GPU, at the task's precision and the tile order nearest its
// own; unknown for other tasks and GPUs the table does not time both on.
FasterKernel faster_tile_kernel(const TaskHeader& header, unsigned worker, starpu_task* task);

// can_execute for codelets with a vendor and a custom CUDA implementation: CPU workers as
// cpu_worker_may_run says; on CUDA workers, what FactorOptions::gpu_kernels allows, the custom
// kernel only for the arguments it supports (custom_supports). With GpuKernels::any, a tile task
// (`tile_task`) runs only the implementation the tuning table measured faster where it timed both:
// the perf models would otherwise try the slower one on every fresh machine, to calibrate it.
// custom_supports for a codelet with no kernel of Tessera's own.
template <class Args>
bool no_custom_kernel(const Args&) {
  return false;
}

template <class Args, bool (*custom_supports)(const Args&), bool tile_task = true>
int can_execute_with_kernel_choice(unsigned worker, starpu_task* task, unsigned implementation) {
  const Args& args = task_args<Args>(task->cl_arg);
  if (starpu_worker_get_type(static_cast<int>(worker)) != STARPU_CUDA_WORKER)
    return cpu_worker_may_run(args.header, worker, task, implementation);
  const FasterKernel faster = tile_task && args.header.gpu_kernels == GpuKernels::any
                                  ? faster_tile_kernel(args.header, worker, task)
                                  : FasterKernel::unknown;
  return cuda_implementation_allowed(args.header, implementation, custom_supports(args), faster);
}

// A codelet's own CUDA implementation and its can_execute.
struct CustomKernel {
  starpu_cuda_func_t implementation;
  int (*can_execute)(unsigned worker, starpu_task* task, unsigned implementation);
};
#endif

template <class T>
struct TypeTag {
  using type = T;
};

// The codelet of a float tile operation in a tensor-core factorization (TensorCores): the FP32 CPU
// implementation, `cuda` alone on CUDA workers, and a perf model of its own (tessera_s<name>), as
// its timings are not FP32's.
template <class Args>
starpu_codelet make_tensor_core_codelet(const char* name, starpu_cpu_func_t cpu,
                                        [[maybe_unused]] starpu_cuda_func_t cuda,
                                        std::initializer_list<starpu_data_access_mode> modes) {
#ifdef TESSERA_HAVE_CUDA
  return make_tile_codelet<float>(
      {name, cpu, cuda, nullptr, true, modes, can_execute_with_kernel_choice<Args, no_custom_kernel<Args>, false>});
#else
  return make_tile_codelet<float>({name, cpu, nullptr, nullptr, true, modes});
#endif
}

// Of an operation's codelets for each tensor-core arithmetic, the one for `cores` (not off).
inline starpu_codelet* tensor_core_codelet(TensorCores cores, starpu_codelet* tf32, starpu_codelet* bf16,
                                           starpu_codelet* fp16) {
  return cores == TensorCores::bf16 ? bf16 : cores == TensorCores::fp16 ? fp16 : tf32;
}

// The codelet a task of `ctx` takes: tensor_core(ctx.tensor_cores) for a float tile of a
// tensor-core factorization, native() otherwise.
template <class T>
starpu_codelet* codelet_for(const TaskContext& ctx, starpu_codelet* (*native)(),
                            starpu_codelet* (*tensor_core)(TensorCores)) {
  if constexpr (std::is_same_v<T, float>)
    if (ctx.tensor_cores != TensorCores::off) return tensor_core(ctx.tensor_cores);
  return native();
}

// `spec` with Tessera's own CUDA kernel where T has one. Those kernels take real scalars: for a
// complex T the codelet keeps the vendor's CUDA implementation alone (CPU workers under
// cpu_worker_may_run), and `custom` is never called, so that nothing of the custom kernels is
// instantiated for complex types. custom(TypeTag<T>) returns the CustomKernel of a real T; it is
// nullptr (TESSERA_IF_CUDA) without CUDA.
template <class T, class Args, class Custom>
CodeletSpec with_custom_kernel(CodeletSpec spec, [[maybe_unused]] Custom custom) {
#ifdef TESSERA_HAVE_CUDA
  if constexpr (kIsComplex<T>) {
    spec.can_execute = can_execute_with_kernel_choice<Args, no_custom_kernel<Args>, false>;
  } else {
    const CustomKernel kernel = custom(TypeTag<T>{});
    spec.cuda_custom = kernel.implementation;
    spec.can_execute = kernel.can_execute;
  }
#endif
  return spec;
}

}  // namespace tessera::detail
