#include "codelet_support.hpp"

#include "thresholds.hpp"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "registry.hpp"
#include "task_tags.hpp"
#include "tessera/error.hpp"
#include "trace.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cpu/blas.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#endif

namespace tessera::detail {

namespace {

// Runs after the task's work (asynchronous GPU work included) is complete.
void task_finished(void* cl_arg) {
  Submission& submission = *static_cast<TaskHeader*>(cl_arg)->submission;
  if (Trace* trace = submission.trace()) record_executed_task(*trace, starpu_task_get_current());
  submission.task_finished();
}

}  // namespace

starpu_perfmodel make_history_model(const std::string& symbol) {
  starpu_perfmodel model;
  std::memset(&model, 0, sizeof model);
  model.type = STARPU_HISTORY_BASED;
  // StarPU keeps the pointer: the names live as long as the process.
  model.symbol = strdup(symbol.c_str());
  return model;
}

starpu_codelet make_codelet(const CodeletSpec& spec) {
  starpu_codelet cl;
  std::memset(&cl, 0, sizeof cl);
  cl.name = spec.name;
  if (spec.cpu) {
    cl.where |= STARPU_CPU;
    cl.cpu_funcs[0] = spec.cpu;
  }
#ifdef TESSERA_HAVE_CUDA
  unsigned n = 0;
  for (starpu_cuda_func_t f : {spec.cuda_vendor, spec.cuda_custom}) {
    if (!f) continue;
    cl.cuda_funcs[n] = f;
    cl.cuda_flags[n] = spec.cuda_async ? STARPU_CUDA_ASYNC : 0;
    ++n;
  }
  if (n > 0) cl.where |= STARPU_CUDA;
#endif
  cl.nbuffers = spec.modes.size() == 0 ? STARPU_VARIABLE_NBUFFERS : static_cast<int>(spec.modes.size());
  int i = 0;
  for (starpu_data_access_mode mode : spec.modes) cl.modes[i++] = mode;
  cl.can_execute = spec.can_execute;
  cl.model = spec.model;
  return cl;
}

uint32_t where_of(Mode mode) {
  switch (mode) {
    case Mode::cpu: return STARPU_CPU;
    case Mode::gpu: return STARPU_CUDA;
    case Mode::hybrid: return STARPU_CPU | STARPU_CUDA;
    case Mode::automatic: break;  // resolved by the Runtime before any task is inserted
  }
  return STARPU_CPU;
}

namespace {

// The buffers are the codelet's: exactly its count, in its modes, or any for a codelet with a
// variable number of buffers.
bool buffers_match(const starpu_codelet* codelet, const TaskBuffer* buffers, std::size_t count) {
  if (codelet->nbuffers == STARPU_VARIABLE_NBUFFERS) return true;
  if (count != static_cast<std::size_t>(codelet->nbuffers)) return false;
  for (std::size_t b = 0; b < count; ++b)
    if (codelet->modes[b] != buffers[b].mode) return false;
  return true;
}

// The task's handles and, for a codelet with a variable number of buffers, their modes.
void set_buffers(starpu_task* task, const starpu_codelet* codelet, const TaskBuffer* buffers, std::size_t count) {
  if (codelet->nbuffers != STARPU_VARIABLE_NBUFFERS) {
    for (std::size_t b = 0; b < count; ++b) task->handles[b] = static_cast<starpu_data_handle_t>(buffers[b].handle);
    return;
  }
  // StarPU frees dyn_handles and dyn_modes with the task.
  auto* handles = static_cast<starpu_data_handle_t*>(std::malloc(count * sizeof(starpu_data_handle_t)));
  auto* modes = static_cast<starpu_data_access_mode*>(std::malloc(count * sizeof(starpu_data_access_mode)));
  if (!handles || !modes) {
    std::free(handles);
    std::free(modes);
    throw std::bad_alloc();
  }
  for (std::size_t b = 0; b < count; ++b) {
    handles[b] = static_cast<starpu_data_handle_t>(buffers[b].handle);
    modes[b] = buffers[b].mode;
  }
  task->dyn_handles = handles;
  task->dyn_modes = modes;
  task->nbuffers = static_cast<int>(count);
}

// Everything but the buffers: arguments (freed with the task), where it may run, its priority,
// name and tag, and the completion callback that counts it in the submission.
void describe_task(starpu_task* task, const TaskContext& ctx, starpu_codelet* codelet, const TaskHeader& header,
                   void* args, std::size_t args_size, const TileRef& traced_tile, int step) {
  task->cl = codelet;
  task->cl_arg = args;
  task->cl_arg_size = args_size;
  task->cl_arg_free = 1;
  // Conversions run where the data's home is; the tile operations where the mode allows.
  task->where = (codelet->where & STARPU_CUDA) ? static_cast<int32_t>(where_of(ctx.mode) & codelet->where)
                                                : static_cast<int32_t>(codelet->where);
  task->priority = submitted_priority(header.hints, static_cast<uint32_t>(task->where));
  // A task placed on a GPU may run on that GPU's workers (and on CPU workers, where its mode has
  // them); the masks live as long as the runtime.
  if (header.hints.gpu >= 0 && (task->where & STARPU_CUDA) && ctx.resources) {
    const std::vector<uint32_t>& workers = ctx.resources->workers_of_gpu(header.hints.gpu);
    task->workerids = const_cast<uint32_t*>(workers.data());
    task->workerids_len = static_cast<unsigned>(workers.size());
  }
  task->callback_func = task_finished;
  task->callback_arg = args;
  task->callback_arg_free = 0;  // the arguments are the callback's argument too, freed once
  task->name = to_string(header.kind);
  task->tag_id = encode_task_tag(header.kind, step, traced_tile.i, traced_tile.j);
}

// The asynchronous signals blocked in the calling thread for the object's life where `hold`, then
// delivered. StarPU reads a codelet's perf model from its file at the first submission of its
// tasks, under a record lock taken with fcntl(F_SETLKW): a signal caught meanwhile by a handler
// that interrupts system calls (Python's Ctrl-C handler is one) fails the lock with EINTR, on which
// StarPU aborts the process.
class SignalsHeldBack {
 public:
  explicit SignalsHeldBack(bool hold) {
    if (!hold) return;
    sigset_t asynchronous;
    sigfillset(&asynchronous);
    for (int synchronous : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&asynchronous, synchronous);
    held_ = pthread_sigmask(SIG_BLOCK, &asynchronous, &saved_) == 0;
  }
  ~SignalsHeldBack() {
    if (held_) pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SignalsHeldBack(const SignalsHeldBack&) = delete;
  SignalsHeldBack& operator=(const SignalsHeldBack&) = delete;

 private:
  sigset_t saved_{};
  bool held_ = false;
};

// Whether submitting a task of `codelet` may read its perf model's file (the model not loaded yet).
bool loads_perf_model(const starpu_codelet* codelet) {
  return codelet && codelet->model && !codelet->model->is_loaded;
}

// Submits a described task counted in the submission; a refused one is destroyed (its
// arguments with it) and reported.
void submit_described(const TaskContext& ctx, starpu_task* task, TaskKind kind) {
  ctx.submission->task_submitted();
  const int ret = [task] {
    const SignalsHeldBack held(loads_perf_model(task->cl));
    return starpu_task_submit(task);
  }();
  if (ret != 0) {
    ctx.submission->task_withdrawn();
    task->destroy = 0;
    starpu_task_destroy(task);  // frees args (cl_arg_free)
    throw RuntimeError(std::string("the runtime refused a ") + to_string(kind) + " task (" +
                       (ret == -ENODEV ? "no worker can run it in this mode" : "error " + std::to_string(ret)) + ")");
  }
}

void submit_distributed(const TaskContext& ctx, starpu_codelet* codelet, const TaskHeader& header, void* args,
                        std::size_t args_size, const TaskBuffer* buffers, std::size_t count, const TileRef& traced_tile,
                        int step) {
  const int buffer_count = static_cast<int>(count);
  // The transfers take the task's priority, as far as its hints give one.
  const int priority = submitted_priority(header.hints, STARPU_CPU);
  starpu_task* task = ctx.distributed->build(codelet, buffers, buffer_count, priority);
  if (task) {
    describe_task(task, ctx, codelet, header, args, args_size, traced_tile, step);
    submit_described(ctx, task, header.kind);
  } else {
    std::free(args);  // another rank runs the task
  }
  ctx.distributed->post_build(codelet, buffers, buffer_count, priority);
}

}  // namespace

TaskHints placed_on_gpu(const TaskContext& ctx, TaskHints hints, TaskKind kind, const TileRef& written) {
  const bool tile_operation =
      kind == TaskKind::potrf || kind == TaskKind::trsm || kind == TaskKind::syrk || kind == TaskKind::gemm;
  if (hints.gpu < 0 && tile_operation && ctx.gpu_owners.gpus() > 1) hints.gpu = ctx.gpu_owners.of_tile(written.i, written.j);
  const int gpus = ctx.resources ? ctx.resources->gpu_count() : 0;
  if (hints.gpu >= gpus && ctx.mode != Mode::cpu)
    throw InvalidArgument("a task's hints place it on GPU " + std::to_string(hints.gpu) + " but the runtime has " +
                          std::to_string(gpus) + " GPU(s)");
  return hints;
}

void submit_task(const TaskContext& ctx, starpu_codelet* codelet, const TaskHeader& header, void* args,
                 std::size_t args_size, const TaskBuffer* buffers, std::size_t count, const TileRef& traced_tile,
                 int step) {
  if (!buffers_match(codelet, buffers, count)) {
    std::free(args);
    throw std::logic_error(std::string("task buffers do not match codelet ") + codelet->name);
  }
  if (ctx.distributed) {
    submit_distributed(ctx, codelet, header, args, args_size, buffers, count, traced_tile, step);
    return;
  }
  starpu_task* task = starpu_task_create();
  task->cl = codelet;
  try {
    set_buffers(task, codelet, buffers, count);
  } catch (...) {
    task->destroy = 0;
    starpu_task_destroy(task);
    std::free(args);
    throw;
  }
  describe_task(task, ctx, codelet, header, args, args_size, traced_tile, step);
  submit_described(ctx, task, header.kind);
}

#ifdef TESSERA_HAVE_CUDA
bool running_cuda_implementation_is_asynchronous() {
  starpu_task* task = starpu_task_get_current();
  return task && (task->cl->cuda_flags[starpu_task_get_implementation(task)] & STARPU_CUDA_ASYNC) != 0;
}

CudaWorkerContext& current_cuda_context(const TaskHeader& header) {
  return header.resources->cuda(starpu_worker_get_id_check());
}

bool cpu_may_run_uncalibrated(bool gpu_may_run, int tile_order) {
  return !gpu_may_run || tile_order <= kThresholds.largest_blind_cpu_tile;
}

int cpu_worker_may_run(const TaskHeader& header, unsigned worker, starpu_task* task, unsigned implementation) {
  if (!header.resources->placement_by_perf_models()) return 1;
  const bool gpu_may_run = (task->where & STARPU_CUDA) != 0 && starpu_cuda_worker_get_count() > 0;
  const unsigned nbuffers = STARPU_TASK_GET_NBUFFERS(task);
  // The written tile is the task's last buffer; its order is the tile size.
  const starpu_data_handle_t written = STARPU_TASK_GET_HANDLE(task, nbuffers - 1);
  const int tile_order = static_cast<int>(std::max(starpu_matrix_get_nx(written), starpu_matrix_get_ny(written)));
  if (cpu_may_run_uncalibrated(gpu_may_run, tile_order)) return 1;
  starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(static_cast<int>(worker), task->sched_ctx);
  return std::isnan(starpu_task_expected_length(task, arch, implementation)) ? 0 : 1;
}

// A GPU factorization that reports info = c has factored columns 0..c-2, each with a positive
// diagonal (the square root of a positive pivot). cuSOLVER lets a pivot that fails at the end of
// one of its inner blocks (a multiple of 64) through as a NaN on the diagonal: the next column then
// fails, or nothing does when it was the tile's last column (info 0 for a matrix that is not
// positive definite). The first diagonal entry that is not positive is LAPACK's info: the check
// runs on the device (kernels::cuda::check_potrf_info), and only the info comes back, into the
// worker's pinned word.
template <class T>
int device_potrf_info(const TileView<T>& A, CudaWorkerContext& ctx) {
  kernels::cuda::check_potrf_info(A.rows, A.ptr, A.ld, ctx.device_info, ctx.stream);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(ctx.host_info, ctx.device_info, sizeof(int), cudaMemcpyDeviceToHost, ctx.stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return *ctx.host_info;
}

#define TESSERA_INSTANTIATE(T) template int device_potrf_info<T>(const TileView<T>&, CudaWorkerContext&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

template <class T>
int factor_on_host(CudaWorkerContext& ctx, char uplo, const TileView<T>& A) {
  const int n = A.rows;
  std::vector<T> host(static_cast<std::size_t>(n) * n);
  const std::size_t row_bytes = sizeof(T) * static_cast<std::size_t>(n);
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(host.data(), row_bytes, A.ptr, sizeof(T) * static_cast<std::size_t>(A.ld),
                                       row_bytes, n, cudaMemcpyDeviceToHost, ctx.stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  const int info = kernels::cpu::potrf(uplo, n, host.data(), std::max(1, n));
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(A.ptr, sizeof(T) * static_cast<std::size_t>(A.ld), host.data(), row_bytes,
                                       row_bytes, n, cudaMemcpyHostToDevice, ctx.stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return info;
}

#define TESSERA_INSTANTIATE(T) template int factor_on_host<T>(CudaWorkerContext&, char, const TileView<T>&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

bool cuda_implementation_allowed(const TaskHeader& header, unsigned implementation, bool custom_supported,
                                 FasterKernel faster) {
  const bool custom = implementation == 1;
  if (custom)
    return custom_supported && (header.gpu_kernels == GpuKernels::custom ||
                                (header.gpu_kernels == GpuKernels::any && faster != FasterKernel::vendor));
  if (!custom_supported) return true;
  return header.gpu_kernels == GpuKernels::vendor ||
         (header.gpu_kernels == GpuKernels::any && faster != FasterKernel::custom);
}

FasterKernel faster_tile_kernel(const TaskHeader& header, unsigned worker, starpu_task* task) {
  const char* op = header.kind == TaskKind::potrf  ? "potf2"
                   : header.kind == TaskKind::trsm ? "trsm"
                   : header.kind == TaskKind::syrk ? "syrk"
                   : header.kind == TaskKind::gemm ? "gemm"
                                                   : nullptr;
  if (!op || STARPU_TASK_GET_NBUFFERS(task) < 1) return FasterKernel::unknown;
  starpu_data_handle_t first = STARPU_TASK_GET_HANDLE(task, 0);
  const Precision precision =
      starpu_matrix_get_elemsize(first) == sizeof(double) ? Precision::double_real : Precision::single_real;
  const int order = static_cast<int>(starpu_matrix_get_ny(first));
  return header.resources->cuda(static_cast<int>(worker)).faster_kernels.at(precision, op, order);
}
#endif

}  // namespace tessera::detail
