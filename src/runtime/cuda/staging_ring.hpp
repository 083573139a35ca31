// Pinned host memory through which a caller's pageable array reaches tiles that live on a GPU
// (HostTiles::staged): a few slots used in turn, so that a call pins megabytes instead of its
// whole array. Each slot has a StarPU data handle that carries no data: the task filling a slot
// holds it in write mode and the task emptying it in read mode, so StarPU orders the uses of a
// slot (the next fill waits for the copy out of it) and runs the uses of different slots at once.
// Copies to the GPU and copies back have slots of their own: a tile that is final goes home while
// later tiles are still coming in.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace tessera::detail {

class StagingRing {
 public:
  struct Slot {
    void* memory;
    void* handle;  // starpu_data_handle_t (void interface)
  };

  enum class Direction { to_gpu, from_gpu };

  // `to_gpu` and `from_gpu` slots of `slot_bytes` each, pinned for the GPUs. Throws CudaError when
  // the memory cannot be had. Only with CUDA workers running.
  StagingRing(std::size_t to_gpu, std::size_t from_gpu, std::size_t slot_bytes);
  // Waits for the tasks using the slots (StarPU still running), then frees the memory.
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // The slots of one direction in turn; any thread may take one.
  const Slot& next(Direction direction) noexcept;
  std::size_t slot_bytes() const noexcept { return slot_bytes_; }

 private:
  void* memory_ = nullptr;
  bool registered_ = false;  // memory_ from the system, pinned with cudaHostRegister; else cudaHostAlloc's
  std::size_t slot_bytes_;
  std::vector<Slot> slots_;  // to_gpu's first
  std::size_t to_gpu_;
  std::atomic<std::size_t> next_to_gpu_{0};
  std::atomic<std::size_t> next_from_gpu_{0};
};

}  // namespace tessera::detail
