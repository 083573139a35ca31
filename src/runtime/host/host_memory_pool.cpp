#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <utility>

#include "address_space.hpp"
#include "caller_memory.hpp"
#include "device_memory.hpp"
#include "runtime_resources.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

namespace {

// The pool keeps at most a quarter of the machine's memory while idle.
std::size_t cache_limit_bytes() {
  const std::size_t physical = physical_memory_bytes();
  return physical == 0 ? std::size_t(1) << 30 : physical / 4;
}

// Pinning only speeds up copies to GPUs; without a CUDA worker it would only cost.
bool gpus_present() { return starpu_cuda_worker_get_count() > 0; }

}  // namespace

#ifdef STARPU_SIMGRID
// In StarPU's simulation (SimGrid) no kernel reads or writes the tiles: host blocks are folded
// (every page maps the same small file), so that simulated matrices may exceed this machine's
// memory, and are never pinned.
constexpr int kSimulationFlags = STARPU_MALLOC_SIMULATION_FOLDED;
#else
constexpr int kSimulationFlags = 0;
#endif

void HostMemoryPool::free_block(const Block& block) {
  if (block.pinned == Pinned::registered) starpu_memory_unpin(block.memory, block.bytes);
  starpu_free_flags(block.memory, block.bytes,
                    (block.pinned == Pinned::allocated ? STARPU_MALLOC_PINNED : 0) | kSimulationFlags);
}

bool HostMemoryPool::pins_on_reuse() const {
  return !kSimulationFlags && pinning_ != HostTiles::pinned && pinning_ != HostTiles::pageable && gpus_present();
}

// Memory that has been written once pins quickly (the pages exist); a block that cannot be pinned
// stays pageable, which is slower to copy but correct.
void HostMemoryPool::pin_for_reuse(Block& block) const {
  if (!pins_on_reuse() || block.pinned != Pinned::no) return;
  block.pinned = starpu_memory_pin(block.memory, block.bytes) == 0 ? Pinned::registered : Pinned::refused;
}

// Pins the queued blocks that are still cached and pageable, one at a time, the pool unlocked
// while the driver pins.
void HostMemoryPool::pin_in_background() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    pinning_changed_.wait(lock, [&] { return stopping_ || !to_pin_.empty(); });
    if (stopping_) return;
    void* memory = to_pin_.front();
    to_pin_.pop_front();
    const auto cached = std::find_if(free_.begin(), free_.end(), [&](const Block& b) { return b.memory == memory; });
    if (cached == free_.end() || cached->pinned != Pinned::no) {  // reused or evicted meanwhile
      pinning_changed_.notify_all();
      continue;
    }
    cached->pinned = Pinned::pinning;
    const std::size_t bytes = cached->bytes;
    lock.unlock();
    const bool pinned = starpu_memory_pin(memory, bytes) == 0;
    lock.lock();
    // A block being pinned is neither handed out nor evicted (allocate and release wait or skip).
    for (Block& b : free_)
      if (b.memory == memory) b.pinned = pinned ? Pinned::registered : Pinned::refused;
    pinning_changed_.notify_all();
  }
}

bool HostMemoryPool::start_pinner() noexcept {
  try {
    const WorkerStacks stacks;  // the driver's pinning runs on it: not a small default stack
    pinner_ = std::thread([this] { pin_in_background(); });
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

void HostMemoryPool::wait_for_pinning() const {
  std::unique_lock<std::mutex> lock(mutex_);
  pinning_changed_.wait(lock, [&] {
    return to_pin_.empty() &&
           std::none_of(free_.begin(), free_.end(), [](const Block& b) { return b.pinned == Pinned::pinning; });
  });
}

bool HostMemoryPool::claim_first_call() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !std::exchange(first_call_claimed_, true);
}

bool HostMemoryPool::first_call_unclaimed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !first_call_claimed_;
}

StagingRing& staging_ring_of(const Runtime& runtime) { return runtime.resources().staging_ring(); }

bool claim_first_call(HostMemoryPool& pool) { return pool.claim_first_call(); }

bool claim_first_call(const Runtime& runtime) { return claim_first_call(runtime.resources().host_memory()); }

bool first_call_unclaimed(const Runtime& runtime) { return runtime.resources().host_memory().first_call_unclaimed(); }

bool pinned_by_caller(const void* array) {
#ifdef TESSERA_HAVE_CUDA
  return !kSimulationFlags && gpus_present() && pinned_host_memory(array);
#else
  (void)array;
  return false;
#endif
}

std::size_t free_gpu_memory(int device) {
#ifdef TESSERA_HAVE_CUDA
  return free_device_memory(device);
#else
  (void)device;
  return 0;
#endif
}

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

bool within_physical_memory(double bytes) {
  const std::size_t physical = physical_memory_bytes();
  return physical == 0 || bytes <= double(physical);
}

PinnedCallerMemory::PinnedCallerMemory(void* memory, std::size_t bytes) : memory_(memory), bytes_(bytes) {
  if (kSimulationFlags || !memory || bytes == 0 || !gpus_present()) return;
  pinned_ = starpu_memory_pin(memory, bytes) == 0;
}

PinnedCallerMemory::~PinnedCallerMemory() {
  if (pinned_) starpu_memory_unpin(memory_, bytes_);
}

HostMemoryPool::~HostMemoryPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  pinning_changed_.notify_all();
  if (pinner_.joinable()) pinner_.join();
  for (const Block& block : free_) free_block(block);
}

std::size_t HostMemoryPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

std::size_t HostMemoryPool::pinned_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t bytes = 0;
  for (const Block& b : free_)
    if (b.pinned == Pinned::allocated || b.pinned == Pinned::registered) bytes += b.bytes;
  for (const auto& [memory, b] : in_use_)
    if (b.pinned == Pinned::allocated || b.pinned == Pinned::registered) bytes += b.bytes;
  return bytes;
}

void* HostMemoryPool::allocate(std::size_t bytes) { return allocate(bytes, false); }

void* HostMemoryPool::allocate_pinned(std::size_t bytes) {
  return allocate(bytes, !kSimulationFlags && pinning_ != HostTiles::pageable && gpus_present());
}

void* HostMemoryPool::allocate(std::size_t bytes, bool pinned) {
  std::unique_lock<std::mutex> lock(mutex_);
  // The smallest cached block that fits without wasting more than half of it; one the pinner is
  // pinning is waited for (the pinning would otherwise be done here anyway).
  auto best = free_.end();
  for (;;) {
    best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->bytes >= bytes && it->bytes / 2 <= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
    if (best == free_.end() || best->pinned != Pinned::pinning) break;
    pinning_changed_.wait(lock);
  }
  if (best != free_.end()) {
    Block reused = *best;
    cached_bytes_ -= reused.bytes;
    free_.erase(best);
    lock.unlock();
    if (pinned && reused.pinned == Pinned::no)
      reused.pinned = starpu_memory_pin(reused.memory, reused.bytes) == 0 ? Pinned::registered : Pinned::refused;
    pin_for_reuse(reused);
    lock.lock();
    in_use_[reused.memory] = reused;
    return reused.memory;
  }
  lock.unlock();
  const bool pin_now = pinned || (!kSimulationFlags && pinning_ == HostTiles::pinned && gpus_present());
  void* memory = nullptr;
  if (starpu_malloc_flags(&memory, bytes, (pin_now ? STARPU_MALLOC_PINNED : 0) | kSimulationFlags) != 0) return nullptr;
  lock.lock();
  in_use_[memory] = Block{memory, bytes, pin_now ? Pinned::allocated : Pinned::no};
  return memory;
}

// The block keeps the size it was allocated with: a reused block may be larger than the request
// that last borrowed it, and recording the smaller size would make it unfit for its own size.
void HostMemoryPool::release(void* block) {
  std::vector<Block> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto lent = in_use_.find(block);
    if (lent == in_use_.end()) return;  // not from this pool
    const Block released = lent->second;
    in_use_.erase(lent);
    free_.push_back(released);
    cached_bytes_ += released.bytes;
    const std::size_t limit = cache_limit_bytes();
    for (auto it = free_.begin(); cached_bytes_ > limit && it != free_.end();) {
      if (it->pinned == Pinned::pinning) {  // the pinner's: evicted by a later release
        ++it;
        continue;
      }
      evicted.push_back(*it);
      cached_bytes_ -= it->bytes;
      it = free_.erase(it);
    }
    const bool kept = std::any_of(free_.begin(), free_.end(), [&](const Block& b) { return b.memory == block; });
    if (kept && released.pinned == Pinned::no && pins_on_reuse()) {
      to_pin_.push_back(block);
      // Without a thread (the system refused one) the block is pinned on reuse instead.
      if (!pinner_.joinable() && !start_pinner()) to_pin_.clear();
    }
  }
  pinning_changed_.notify_all();
  for (const Block& b : evicted) free_block(b);
}

}  // namespace tessera::detail
