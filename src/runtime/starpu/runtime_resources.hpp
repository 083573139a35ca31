// What the runtime owns on behalf of the codelets: per CUDA worker, the cuBLAS and cuSOLVER
// handles bound to that worker's stream and a device workspace. Each context is touched only by
// its own worker thread once the runtime has started.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tessera/options.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <map>
#include <string>
#include <tuple>

#include "kernels/cuda/tile_kernels.hpp"
#include "tile_tuning_table.hpp"
#endif

namespace tessera::detail {

class StagingRing;
class StreamSolverPool;

struct CudaWorkerContext {
#ifdef TESSERA_HAVE_CUDA
  cudaStream_t stream = nullptr;  // the one tasks run on: the worker's, or urgent_stream in an UrgentWork scope
  cudaStream_t worker_stream = nullptr;  // StarPU's stream of this worker
  // A stream of the device's highest priority, for tasks on the critical path: the GPU schedules
  // their blocks ahead of the other streams' trailing updates instead of sharing the SMs evenly.
  cudaStream_t urgent_stream = nullptr;
  cudaEvent_t urgent_fork = nullptr;
  cudaEvent_t urgent_join = nullptr;
  cublasHandle_t cublas = nullptr;
  cusolverDnHandle_t cusolver = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int* device_info = nullptr;  // LAPACK info of the last diagonal-tile factorization
  int* host_info = nullptr;    // pinned: where device_info is read back

  // A workspace of at least `bytes`, grown in stream order (never synchronizes the device).
  void* workspace_of(std::size_t bytes);

  // The tuned parameters of Tessera's kernel `op` at tile size nb on this worker's GPU (the
  // kernel's built-in defaults when the tuning table has nothing for this GPU).
  kernels::cuda::TileKernelConfig tile_config(Precision precision, const char* op, int nb);

  const TileTuningTable* tuning = nullptr;
  std::string gpu_name;
  // Read by the scheduler on any thread: set once, when the context is made.
  FasterKernels faster_kernels;
  std::map<std::tuple<Precision, std::string, int>, kernels::cuda::TileKernelConfig> tuned;
#endif
};

#ifdef TESSERA_HAVE_CUDA
// While it lives, the worker context's stream (and its cuBLAS and cuSOLVER handles) is the urgent
// stream when `urgent`, joined to the worker's stream both ways; a no-op otherwise. An
// asynchronous task's end is joined onto the worker's stream, where StarPU sees it; a synchronous
// task's (`asynchronous` false) is waited for instead, since StarPU requires the worker's stream
// idle when such a task returns, and a join enqueued there, even behind finished work, may not
// have been processed yet when StarPU checks.
class UrgentWork {
 public:
  UrgentWork(CudaWorkerContext& ctx, bool urgent, bool asynchronous);
  ~UrgentWork();
  UrgentWork(const UrgentWork&) = delete;
  UrgentWork& operator=(const UrgentWork&) = delete;

 private:
  void back_to_worker_stream() noexcept;
  CudaWorkerContext* ctx_;
  bool asynchronous_;
};
#endif

// Host memory for tiles, kept between factorizations: pinning gigabytes costs more than
// factoring them on a GPU, so blocks go back to the pool instead of to the system. How blocks are
// pinned: RuntimeOptions::host_tiles.
class HostMemoryPool {
 public:
  explicit HostMemoryPool(HostTiles pinning = HostTiles::automatic) : pinning_(pinning) {}
  HostMemoryPool(const HostMemoryPool&) = delete;
  HostMemoryPool& operator=(const HostMemoryPool&) = delete;
  ~HostMemoryPool();

  // A block of at least `bytes` (nullptr when the system has no memory left).
  void* allocate(std::size_t bytes);
  // The same, pinned from the start where GPUs are used (a reused block pinned now if it is not),
  // unless the pool is HostTiles::pageable: for tiles that live across calls and cross the bus
  // every call, where pinning once costs less than copying through pageable memory each time.
  void* allocate_pinned(std::size_t bytes);
  // A block from allocate() back to the pool; the pool frees its oldest blocks beyond its limit.
  // Under pin-on-reuse a pageable block is pinned in the background from here, so that the call
  // that reuses it does not pin it on its own critical path.
  void release(void* block);
  // Returns once no background pinning is queued or running.
  void wait_for_pinning() const;
  // Bytes in blocks waiting for reuse.
  std::size_t cached_bytes() const;
  // Bytes pinned, in use or cached.
  std::size_t pinned_bytes() const;
  // RuntimeOptions::host_tiles.
  HostTiles mode() const { return pinning_; }
  // The first host-array call, which HostTiles::automatic gives in-place or staged tiles:
  // claim_first_call is true for that call only; first_call_unclaimed only looks.
  bool claim_first_call();
  bool first_call_unclaimed() const;

 private:
  // refused: pinning failed once, not retried; pinning: the background thread is pinning it
  enum class Pinned { no, allocated, registered, refused, pinning };
  void* allocate(std::size_t bytes, bool pinned);
  struct Block {
    void* memory;
    std::size_t bytes;
    Pinned pinned;
  };
  static void free_block(const Block& block);
  bool pins_on_reuse() const;
  void pin_for_reuse(Block& block) const;
  void pin_in_background();  // the pinner thread's loop
  bool start_pinner() noexcept;

  const HostTiles pinning_;
  mutable std::mutex mutex_;
  mutable std::condition_variable pinning_changed_;
  std::vector<Block> free_;                            // oldest first
  std::unordered_map<void*, Block> in_use_;
  std::deque<void*> to_pin_;                           // cached blocks waiting for the pinner
  std::thread pinner_;                                 // started by the first block to pin
  bool stopping_ = false;
  std::size_t cached_bytes_ = 0;
  bool first_call_claimed_ = false;
};

class RuntimeResources {
 public:
  RuntimeResources(int max_workers, HostTiles host_tiles, bool placement_by_perf_models, bool urgent_streams)
      : cuda_(static_cast<std::size_t>(max_workers)),
        host_memory_(host_tiles),
        placement_by_perf_models_(placement_by_perf_models),
        urgent_streams_(urgent_streams) {}
  // The context of CUDA worker `worker` (StarPU worker id); only that worker may use it.
  CudaWorkerContext& cuda(int worker) const { return cuda_[static_cast<std::size_t>(worker)]; }
  HostMemoryPool& host_memory() const { return host_memory_; }
  // The running policy places tasks by perf-model estimates (and calibrates by placing tasks on
  // workers without one).
  bool placement_by_perf_models() const { return placement_by_perf_models_; }
  // Tasks on the critical path run on their worker's urgent stream (RuntimeOptions::urgent_streams).
  bool urgent_streams() const { return urgent_streams_; }
  // The GPUs in use, in the order of their device numbers: for each, the workers a task hinted to
  // it may run on (its CUDA workers and every CPU worker), as the bitmap starpu_task::workerids
  // takes. `place_tiles`: tile tasks go to their tile's owner when there are several GPUs
  // (GpuPlacement::block_cyclic).
  void set_gpu_workers(std::vector<std::vector<uint32_t>> workers_by_gpu, bool place_tiles) {
    workers_by_gpu_ = std::move(workers_by_gpu);
    place_tiles_ = place_tiles;
  }
  int gpu_count() const { return static_cast<int>(workers_by_gpu_.size()); }
  const std::vector<uint32_t>& workers_of_gpu(int gpu) const { return workers_by_gpu_.at(static_cast<std::size_t>(gpu)); }
  // How many GPUs the tile tasks are dealt over (1: none placed).
  int gpus_for_tiles() const { return place_tiles_ && gpu_count() > 1 ? gpu_count() : 1; }
  // The pinned slots of HostTiles::staged: made by the first call that stages (64 MiB) and kept
  // while the runtime lives. Only with CUDA workers.
  StagingRing& staging_ring() const;
#ifdef TESSERA_HAVE_CUDA
  // cuBLAS and cuSOLVER handles for calls that run on an application's stream instead of a
  // worker's (callers_stream.hpp): made by the first such call on each GPU, kept while the runtime
  // lives.
  StreamSolverPool& stream_solvers() const;
  TileTuningTable& tile_tuning() { return tile_tuning_; }
  const TileTuningTable& tile_tuning() const { return tile_tuning_; }
#endif

 private:
  mutable std::vector<CudaWorkerContext> cuda_;
  mutable HostMemoryPool host_memory_;
  bool placement_by_perf_models_;
  bool urgent_streams_;
  std::vector<std::vector<uint32_t>> workers_by_gpu_;
  bool place_tiles_ = false;
  mutable std::mutex staging_mutex_;
  mutable std::shared_ptr<StagingRing> staging_;  // shared_ptr: destroyed where StagingRing is incomplete
#ifdef TESSERA_HAVE_CUDA
  mutable std::mutex stream_solvers_mutex_;
  mutable std::shared_ptr<StreamSolverPool> stream_solvers_;  // shared_ptr: destroyed where the type is incomplete
  TileTuningTable tile_tuning_;
#endif
};

}  // namespace tessera::detail
