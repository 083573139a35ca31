// Pinned host memory at the rate the system allows. cudaHostAlloc pins under one lock of the
// driver, so more threads calling it do not make it faster; memory first touched (in huge pages
// where the system gives them, by several threads for a large block) and then registered with CUDA
// pins several times faster. StarPU allocates its own pinned host buffers (tiles received from
// other ranks, host copies of tiles) with cudaHostAlloc unless it is given allocation hooks: the
// runtime installs these when it starts StarPU.
#pragma once

#include <cstddef>

namespace tessera::detail {

// `bytes` of zeroed host memory, pinned for every GPU (cudaHostRegisterPortable); null when it
// cannot be had or pinned. Release with release_registered_host_memory.
void* registered_host_memory(std::size_t bytes);
void release_registered_host_memory(void* memory);

// With `on`, StarPU's host allocations that it would pin come from registered_host_memory
// (cudaHostAlloc where that fails), the others from the system; without, StarPU's own allocation.
// Set before starpu_init, so that every block StarPU frees went through the hooks that allocated
// it (hooks are only removed when no block of theirs is left). The threads that touch a large
// block run on the CPUs of the calling thread. Without CUDA or in simulation, does nothing.
void set_starpu_host_allocation_hooks(bool on);

}  // namespace tessera::detail
