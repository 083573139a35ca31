#include "cuda_context.hpp"

#include <starpu.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>

#ifdef TESSERA_HAVE_CUDA
#include "device_memory.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/stream_memory.hpp"
#include "kernels/cuda/tile_timing.hpp"
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_CUDA

namespace {

// Enough for cuSOLVER's potrf on tiles up to 4096 in double; grown on demand beyond.
constexpr std::size_t initial_workspace_bytes = std::size_t(64) << 20;

struct ContextJob {
  RuntimeResources* resources;
  std::mutex mutex;
  std::string error;  // first failure, reported after the job ran on every worker
};

void create_on_worker(void* arg) {
  auto* job = static_cast<ContextJob*>(arg);
  CudaWorkerContext& ctx = job->resources->cuda(starpu_worker_get_id_check());
  try {
    ctx.stream = ctx.worker_stream = starpu_cuda_get_local_stream();
    int least = 0, greatest = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&ctx.urgent_stream, cudaStreamNonBlocking, greatest));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&ctx.urgent_fork, cudaEventDisableTiming));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&ctx.urgent_join, cudaEventDisableTiming));
    TESSERA_CUBLAS_CHECK(cublasCreate(&ctx.cublas));
    TESSERA_CUBLAS_CHECK(cublasSetStream(ctx.cublas, ctx.stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&ctx.cusolver));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(ctx.cusolver, ctx.stream));
    TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ctx.device_info), sizeof(int)));
    TESSERA_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ctx.host_info), sizeof(int)));
    TESSERA_CUDA_CHECK(cudaMalloc(&ctx.workspace, initial_workspace_bytes));
    ctx.workspace_bytes = initial_workspace_bytes;
    ctx.tuning = &job->resources->tile_tuning();
    ctx.gpu_name = kernels::cuda::current_gpu_name();
    ctx.faster_kernels = FasterKernels(job->resources->tile_tuning(), ctx.gpu_name);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(job->mutex);
    if (job->error.empty()) job->error = e.what();
  }
}

void destroy_on_worker(void* arg) {
  auto* resources = static_cast<RuntimeResources*>(arg);
  CudaWorkerContext& ctx = resources->cuda(starpu_worker_get_id_check());
  if (ctx.worker_stream) cudaStreamSynchronize(ctx.worker_stream);
  if (ctx.urgent_stream) cudaStreamSynchronize(ctx.urgent_stream);
  if (ctx.workspace) cudaFree(ctx.workspace);
  if (ctx.urgent_fork) cudaEventDestroy(ctx.urgent_fork);
  if (ctx.urgent_join) cudaEventDestroy(ctx.urgent_join);
  if (ctx.urgent_stream) cudaStreamDestroy(ctx.urgent_stream);
  if (ctx.device_info) cudaFree(ctx.device_info);
  if (ctx.host_info) cudaFreeHost(ctx.host_info);
  if (ctx.cusolver) cusolverDnDestroy(ctx.cusolver);
  if (ctx.cublas) cublasDestroy(ctx.cublas);
  ctx = CudaWorkerContext{};
}

}  // namespace

UrgentWork::UrgentWork(CudaWorkerContext& ctx, bool urgent, bool asynchronous)
    : ctx_(urgent && ctx.urgent_stream ? &ctx : nullptr), asynchronous_(asynchronous) {
  if (!ctx_) return;
  // Work on the urgent stream follows what the worker's stream holds (a workspace grown there)...
  TESSERA_CUDA_CHECK(cudaEventRecord(ctx_->urgent_fork, ctx_->worker_stream));
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(ctx_->urgent_stream, ctx_->urgent_fork, 0));
  try {
    TESSERA_CUBLAS_CHECK(cublasSetStream(ctx_->cublas, ctx_->urgent_stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(ctx_->cusolver, ctx_->urgent_stream));
  } catch (...) {
    back_to_worker_stream();
    throw;
  }
  ctx_->stream = ctx_->urgent_stream;
}

UrgentWork::~UrgentWork() {
  if (!ctx_) return;
  // ...and the worker's stream, on which StarPU sees the task end, follows the urgent work. A
  // destructor cannot throw: should the join fail, the urgent work is waited for instead, so that
  // StarPU never sees the task end before its work does (the failure then shows in the next
  // checked call on this context). A synchronous task's work is waited for here (it is done
  // already: such tasks wait for it themselves).
  if (!asynchronous_ || cudaEventRecord(ctx_->urgent_join, ctx_->urgent_stream) != cudaSuccess ||
      cudaStreamWaitEvent(ctx_->worker_stream, ctx_->urgent_join, 0) != cudaSuccess)
    cudaStreamSynchronize(ctx_->urgent_stream);
  back_to_worker_stream();
}

void UrgentWork::back_to_worker_stream() noexcept {
  ctx_->stream = ctx_->worker_stream;
  cublasSetStream(ctx_->cublas, ctx_->worker_stream);
  cusolverDnSetStream(ctx_->cusolver, ctx_->worker_stream);
}

void* CudaWorkerContext::workspace_of(std::size_t bytes) {
  return kernels::cuda::grown_workspace(workspace, workspace_bytes, bytes, stream);
}

kernels::cuda::TileKernelConfig CudaWorkerContext::tile_config(Precision precision, const char* op, int nb) {
  const auto key = std::make_tuple(precision, std::string(op), nb);
  auto it = tuned.find(key);
  if (it == tuned.end()) {
    const auto found = tuning ? tuning->lookup(gpu_name, precision, op, nb) : std::nullopt;
    it = tuned.emplace(key, found.value_or(kernels::cuda::TileKernelConfig{})).first;
  }
  return it->second;
}

const char* default_tile_tuning_json();

void create_cuda_contexts(RuntimeResources& resources, const std::string& tuning_file) {
  if (starpu_cuda_worker_get_count() == 0) return;
#ifdef STARPU_SIMGRID
  // StarPU's simulation (SimGrid) simulates the CUDA workers: there is no device to make streams,
  // handles or workspaces on, and no CUDA codelet ever runs.
  return;
#endif
  resources.tile_tuning() =
      tuning_file.empty() ? TileTuningTable::from_json(default_tile_tuning_json()) : TileTuningTable::load(tuning_file);
  ContextJob job;
  job.resources = &resources;
  starpu_execute_on_each_worker(create_on_worker, &job, STARPU_CUDA);
  if (!job.error.empty()) throw RuntimeError("could not set up the CUDA workers: " + job.error);
}

void destroy_cuda_contexts(RuntimeResources& resources) {
  if (starpu_cuda_worker_get_count() == 0) return;
#ifdef STARPU_SIMGRID
  return;
#endif
  starpu_execute_on_each_worker(destroy_on_worker, &resources, STARPU_CUDA);
}

int cuda_devices_in_use() { return static_cast<int>(cuda_devices_in_order().size()); }

std::optional<std::string> cuda_libraries_problem() {
  int version = 0;
  if (const cudaError_t status = cudaRuntimeGetVersion(&version); status != cudaSuccess)
    return std::string(cudaGetErrorString(status));
  if (const cublasStatus_t status = cublasGetProperty(MAJOR_VERSION, &version); status != CUBLAS_STATUS_SUCCESS)
    return std::string("cuBLAS: ") + cublasGetStatusString(status);
  if (cusolverGetProperty(MAJOR_VERSION, &version) != CUSOLVER_STATUS_SUCCESS)
    return std::string("cuSOLVER does not answer");
  return std::nullopt;
}

int nvidia_device_node_count() {
  std::error_code error;
  int count = 0;
  for (std::filesystem::directory_iterator it("/dev", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      ++count;
  }
  return count;
}

int nvidia_device_nodes() {
  // The nodes first: probing the libraries loads cuBLAS and cuSOLVER, which a machine without a
  // GPU never needs.
  const int count = nvidia_device_node_count();
  return count == 0 || cuda_libraries_problem() ? 0 : count;
}

bool gpus_could_take_work() {
  if (starpu_is_initialized()) return starpu_cuda_worker_get_count() > 0;
  return nvidia_device_nodes() > 0;
}

std::vector<std::vector<uint32_t>> workers_by_gpu() {
  const unsigned n = starpu_worker_get_count();
  const std::vector<int> devices = cuda_devices_in_order();
  const std::size_t words = (n + 31) / 32;
  std::vector<std::vector<uint32_t>> masks;
  for (const int device : devices) {
    std::vector<uint32_t> mask(words, 0);
    for (unsigned w = 0; w < n; ++w) {
      const starpu_worker_archtype type = starpu_worker_get_type(static_cast<int>(w));
      if (type == STARPU_CPU_WORKER || (type == STARPU_CUDA_WORKER && starpu_worker_get_devid(static_cast<int>(w)) == device))
        mask[w / 32] |= uint32_t{1} << (w % 32);
    }
    masks.push_back(std::move(mask));
  }
  return masks;
}

#else

std::vector<std::vector<uint32_t>> workers_by_gpu() { return {}; }
void create_cuda_contexts(RuntimeResources&, const std::string&) {}
void destroy_cuda_contexts(RuntimeResources&) {}
int cuda_devices_in_use() { return 0; }
int nvidia_device_nodes() { return 0; }
bool gpus_could_take_work() { return false; }
int nvidia_device_node_count() { return 0; }
std::optional<std::string> cuda_libraries_problem() { return std::nullopt; }  // none linked

#endif

}  // namespace tessera::detail
