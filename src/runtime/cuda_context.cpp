#include "cuda_context.hpp"

#include <starpu.h>

#include <mutex>
#include <set>
#include <string>

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
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
    ctx.stream = starpu_cuda_get_local_stream();
    TESSERA_CUBLAS_CHECK(cublasCreate(&ctx.cublas));
    TESSERA_CUBLAS_CHECK(cublasSetStream(ctx.cublas, ctx.stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&ctx.cusolver));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(ctx.cusolver, ctx.stream));
    TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ctx.device_info), sizeof(int)));
    TESSERA_CUDA_CHECK(cudaMalloc(&ctx.workspace, initial_workspace_bytes));
    ctx.workspace_bytes = initial_workspace_bytes;
    ctx.tuning = &job->resources->tile_tuning();
    ctx.gpu_name = kernels::cuda::current_gpu_name();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(job->mutex);
    if (job->error.empty()) job->error = e.what();
  }
}

void destroy_on_worker(void* arg) {
  auto* resources = static_cast<RuntimeResources*>(arg);
  CudaWorkerContext& ctx = resources->cuda(starpu_worker_get_id_check());
  if (ctx.stream) cudaStreamSynchronize(ctx.stream);
  if (ctx.workspace) cudaFree(ctx.workspace);
  if (ctx.device_info) cudaFree(ctx.device_info);
  if (ctx.cusolver) cusolverDnDestroy(ctx.cusolver);
  if (ctx.cublas) cublasDestroy(ctx.cublas);
  ctx = CudaWorkerContext{};
}

}  // namespace

void* CudaWorkerContext::workspace_of(std::size_t bytes) {
  if (bytes <= workspace_bytes) return workspace;
  TESSERA_CUDA_CHECK(cudaFreeAsync(workspace, stream));
  workspace = nullptr;
  workspace_bytes = 0;
  TESSERA_CUDA_CHECK(cudaMallocAsync(&workspace, bytes, stream));
  workspace_bytes = bytes;
  return workspace;
}

kernels::cuda::TileKernelConfig CudaWorkerContext::tile_config(char precision, const char* op, int nb) {
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
  resources.tile_tuning() = tuning_file.empty() ? kernels::cuda::TileTuningTable::from_json(default_tile_tuning_json())
                                                : kernels::cuda::TileTuningTable::load(tuning_file);
  ContextJob job;
  job.resources = &resources;
  starpu_execute_on_each_worker(create_on_worker, &job, STARPU_CUDA);
  if (!job.error.empty()) throw RuntimeError("could not set up the CUDA workers: " + job.error);
}

void destroy_cuda_contexts(RuntimeResources& resources) {
  if (starpu_cuda_worker_get_count() == 0) return;
  starpu_execute_on_each_worker(destroy_on_worker, &resources, STARPU_CUDA);
}

int cuda_devices_in_use() {
  std::set<int> devices;
  const unsigned n = starpu_worker_get_count();
  for (unsigned w = 0; w < n; ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER) devices.insert(starpu_worker_get_devid(static_cast<int>(w)));
  return static_cast<int>(devices.size());
}

#else

void create_cuda_contexts(RuntimeResources&, const std::string&) {}
void destroy_cuda_contexts(RuntimeResources&) {}
int cuda_devices_in_use() { return 0; }

#endif

}  // namespace tessera::detail
