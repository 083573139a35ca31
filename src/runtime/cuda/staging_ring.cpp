#include "staging_ring.hpp"

#include <stdexcept>

#include "runtime_resources.hpp"

namespace tessera::detail {

const StagingRing::Slot& StagingRing::next(Direction direction) noexcept {
  if (direction == Direction::to_gpu) return slots_[next_to_gpu_.fetch_add(1, std::memory_order_relaxed) % to_gpu_];
  const std::size_t from_gpu = slots_.size() - to_gpu_;
  return slots_[to_gpu_ + next_from_gpu_.fetch_add(1, std::memory_order_relaxed) % from_gpu];
}

}  // namespace tessera::detail

#ifdef TESSERA_HAVE_CUDA

#include <cuda_runtime.h>
#include <starpu.h>

#include "kernels/cuda/check.hpp"
#include "pinned_host_memory.hpp"

namespace tessera::detail {

namespace {

// Slots of 4 MiB, 12 to the GPU and 8 back: pinning costs time per byte, so 80 MiB keep a fresh
// process's first call cheap, while a dozen copies in flight keep the CPU
// workers and the bus busy.
constexpr std::size_t kSlotsToGpu = 12;
constexpr std::size_t kSlotsFromGpu = 8;
constexpr std::size_t kStagingSlotBytes = std::size_t(4) << 20;

}  // namespace

StagingRing& RuntimeResources::staging_ring() const {
  std::lock_guard<std::mutex> lock(staging_mutex_);
  if (!staging_) staging_ = std::make_shared<StagingRing>(kSlotsToGpu, kSlotsFromGpu, kStagingSlotBytes);
  return *staging_;
}

StagingRing::StagingRing(std::size_t to_gpu, std::size_t from_gpu, std::size_t slot_bytes)
    : slot_bytes_(slot_bytes), to_gpu_(to_gpu) {
  const std::size_t slots = to_gpu + from_gpu;
  // Touched, then pinned: faster than cudaHostAlloc on the first call's critical path.
  memory_ = registered_host_memory(slots * slot_bytes);
  registered_ = memory_ != nullptr;
  if (!registered_) TESSERA_CUDA_CHECK(cudaHostAlloc(&memory_, slots * slot_bytes, cudaHostAllocPortable));
  slots_.reserve(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    starpu_data_handle_t handle = nullptr;
    starpu_void_data_register(&handle);
    slots_.push_back({static_cast<char*>(memory_) + s * slot_bytes, handle});
  }
}

StagingRing::~StagingRing() {
  for (const Slot& slot : slots_) starpu_data_unregister(static_cast<starpu_data_handle_t>(slot.handle));
  // Nothing to report to: a failure leaves at worst the memory pinned.
  if (registered_) {
    release_registered_host_memory(memory_);
  } else {
    cudaFreeHost(memory_);
  }
}

}  // namespace tessera::detail

#else

namespace tessera::detail {

StagingRing& RuntimeResources::staging_ring() const {
  throw std::logic_error("staging slots need CUDA");
}

}  // namespace tessera::detail

#endif
