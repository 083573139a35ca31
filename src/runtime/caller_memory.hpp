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

// RuntimeOptions::host_tiles of `runtime`.
HostTiles host_tiles_of(const Runtime& runtime);
// How many GPUs `runtime` deals tile tasks over (RuntimeResources::gpus_for_tiles).
int gpus_for_tiles(const Runtime& runtime);
// The staging slots of `runtime` (RuntimeResources::staging_ring).
StagingRing& staging_ring_of(const Runtime& runtime);
// Whether HostTiles::automatic stages the first call on an n x n array of `bytes`: from 1 GiB.
// Staged, a one-shot process is faster than in place on multi-GB arrays, slower on half a GB:
// pinning a small array costs less than the slots and their tasks (docs/user-guide.md, section
// "GPUs"). The crossover between was not measured.
bool stages_automatically(double bytes);
// Whether a call that can run staged (HostTiles::staged) does: always under staged; under
// automatic when it is the runtime's first such call (it claims the first call, see
// factor_in_place), the later ones using pooled tiles, pinned by then.
bool stage_call(const Runtime& runtime);

// Whether a factorization of a lower-stored host array runs on the array itself, as the pool's
// RuntimeOptions::host_tiles says (HostTiles::automatic counts this call as its first).
bool factor_in_place(HostMemoryPool& pool, const void* array);
bool factor_in_place(const Runtime& runtime, const void* array);
// Whether `bytes` are at most the machine's physical memory: an array claimed larger cannot be
// the caller's (the tile path refuses such a matrix with ResourceError, and so does in place).
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
