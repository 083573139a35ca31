// A caller's host array used in place of tiles (HostTiles::in_place): whether the runtime does
// so, and the array pinned for the length of one call.
#pragma once

#include <cstddef>

#include "tessera/options.hpp"

namespace tessera {
class Runtime;
}

namespace tessera::detail {

class HostMemoryPool;
class StagingRing;

// The staging slots of `runtime` (RuntimeResources::staging_ring).
StagingRing& staging_ring_of(const Runtime& runtime);

// The runtime's first host-array call, which HostTiles::automatic gives in-place or staged tiles
// (the plan decides which): claim_first_call claims it (true: the caller's call is that call),
// first_call_unclaimed only looks.
bool claim_first_call(HostMemoryPool& pool);
bool claim_first_call(const Runtime& runtime);
bool first_call_unclaimed(const Runtime& runtime);

// Whether `array` is host memory its caller pinned with CUDA (false without a usable GPU).
bool pinned_by_caller(const void* array);
// Bytes free on CUDA device `device` now (0 without CUDA).
std::size_t free_gpu_memory(int device);

// The machine's physical memory in bytes; 0 where the system does not say.
std::size_t physical_memory_bytes();
// Whether `bytes` are at most the machine's physical memory: an array claimed larger cannot be
// the caller's (the tile path refuses such a matrix with ResourceError).
bool within_physical_memory(double bytes);

// A caller's host array pinned for the length of one call (HostTiles::in_place), so that copies
// between it and the GPUs run at the bus's speed. Nothing is pinned without a CUDA worker, and
// memory that is pinned already (by the caller) or cannot be pinned is used as it is.
class PinnedCallerMemory {
 public:
  PinnedCallerMemory(void* memory, std::size_t bytes);
  ~PinnedCallerMemory();
  PinnedCallerMemory(const PinnedCallerMemory&) = delete;
  PinnedCallerMemory& operator=(const PinnedCallerMemory&) = delete;
  bool pinned() const { return pinned_; }

 private:
  void* memory_;
  std::size_t bytes_;
  bool pinned_ = false;
};

}  // namespace tessera::detail
