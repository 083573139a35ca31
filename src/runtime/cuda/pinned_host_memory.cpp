#include "pinned_host_memory.hpp"

#include <starpu_config.h>  // STARPU_SIMGRID

#if defined(TESSERA_HAVE_CUDA) && !defined(STARPU_SIMGRID)

#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <starpu.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "environment.hpp"

namespace tessera::detail {

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kPage = 4096;
// Blocks from this size are touched by several threads (thread start-up costs less than the
// page faults they share out).
constexpr std::size_t kParallelTouchFrom = std::size_t(8) << 20;
constexpr unsigned kMostTouchThreads = 8;

enum class Block { plain, registered, host_alloc };

// The hooks' state. StarPU's hooks are plain functions without a context argument, so the state
// lives here, owned by this file: set once when the hooks are installed, then only the table of
// blocks changes (under its mutex).
struct HostAllocations {
  std::mutex mutex;
  cpu_set_t touch_cpus{};  // where touching threads may run
  unsigned touch_threads = 1;
  bool pinning_disabled = false;  // STARPU_DISABLE_PINNING, as StarPU reads it
  bool installed = false;
  std::unordered_map<void*, Block> blocks;
};

HostAllocations& allocations() {
  static HostAllocations state;
  return state;
}

// Zeroes the block, several threads sharing a large one. A thread starts with the affinity of the
// one that made it (here a StarPU worker, bound to one core), so each first moves to the CPUs the
// process was started on.
void touch(void* memory, std::size_t bytes) {
  const HostAllocations& state = allocations();
  const unsigned threads = bytes >= kParallelTouchFrom ? state.touch_threads : 1;
  if (threads <= 1) {
    std::memset(memory, 0, bytes);
    return;
  }
  const std::size_t slice = (bytes / threads + kPage - 1) / kPage * kPage;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads && t * slice < bytes; ++t) {
    const std::size_t begin = t * slice, end = std::min(bytes, begin + slice);
    workers.emplace_back([&state, memory, begin, end] {
      pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), &state.touch_cpus);
      std::memset(static_cast<char*>(memory) + begin, 0, end - begin);
    });
  }
  for (std::thread& w : workers) w.join();
}

bool pins(int flags) {
  const HostAllocations& state = allocations();
  return (flags & STARPU_MALLOC_PINNED) && !state.pinning_disabled && starpu_cuda_worker_get_count() > 0;
}

void remember(void* memory, Block kind) {
  HostAllocations& state = allocations();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.blocks[memory] = kind;
}

int allocate_for_starpu(unsigned /*node*/, void** memory, std::size_t bytes, int flags) {
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  if (!pins(flags)) {
    if (posix_memalign(memory, size >= kPage ? kPage : 64, size) != 0) {
      *memory = nullptr;
      return -ENOMEM;
    }
    remember(*memory, Block::plain);
    return 0;
  }
  if ((*memory = registered_host_memory(size))) {
    remember(*memory, Block::registered);
    return 0;
  }
  if (cudaHostAlloc(memory, size, cudaHostAllocPortable) == cudaSuccess) {
    remember(*memory, Block::host_alloc);
    return 0;
  }
  cudaGetLastError();
  *memory = nullptr;
  return -ENOMEM;
}

int free_for_starpu(unsigned /*node*/, void* memory, std::size_t /*bytes*/, int flags) {
  std::optional<Block> kind;
  {
    HostAllocations& state = allocations();
    std::lock_guard<std::mutex> lock(state.mutex);
    const auto found = state.blocks.find(memory);
    if (found != state.blocks.end()) {
      kind = found->second;
      state.blocks.erase(found);
    }
  }
  // A block not allocated here (none should be) is freed as StarPU would have.
  if (!kind) kind = pins(flags) ? Block::host_alloc : Block::plain;
  // Nothing to report to: a failure leaves at worst the memory pinned.
  switch (*kind) {
    case Block::registered: release_registered_host_memory(memory); break;
    case Block::host_alloc: cudaFreeHost(memory); break;
    case Block::plain: std::free(memory); break;
  }
  return 0;
}

}  // namespace

void* registered_host_memory(std::size_t bytes) {
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kPage;
  void* memory = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (!memory) return nullptr;
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePage) madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages work too
#endif
  touch(memory, bytes);
  // Portable: pinned for every GPU, whichever worker's context copies from it.
  if (cudaHostRegister(memory, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();
    std::free(memory);
    return nullptr;
  }
  return memory;
}

void release_registered_host_memory(void* memory) {
  cudaHostUnregister(memory);
  std::free(memory);
}

void set_starpu_host_allocation_hooks(bool on) {
  HostAllocations& state = allocations();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!on) {
    if (state.installed && state.blocks.empty()) {
      starpu_malloc_set_hooks(nullptr, nullptr);
      state.installed = false;
    }
    return;
  }
  if (state.installed) return;
  CPU_ZERO(&state.touch_cpus);
  if (sched_getaffinity(0, sizeof(cpu_set_t), &state.touch_cpus) != 0)
    for (unsigned c = 0; c < std::thread::hardware_concurrency() && c < CPU_SETSIZE; ++c) CPU_SET(c, &state.touch_cpus);
  state.touch_threads = std::clamp<unsigned>(static_cast<unsigned>(CPU_COUNT(&state.touch_cpus)), 1, kMostTouchThreads);
  state.pinning_disabled = starpu_pinning_disabled_from_environment();
  starpu_malloc_set_hooks(allocate_for_starpu, free_for_starpu);
  state.installed = true;
}

}  // namespace tessera::detail

#else

namespace tessera::detail {

void* registered_host_memory(std::size_t) { return nullptr; }
void release_registered_host_memory(void*) {}
void set_starpu_host_allocation_hooks(bool) {}

}  // namespace tessera::detail

#endif
