#include <starpu.h>
#include <unistd.h>

#include <algorithm>

#include "runtime_resources.hpp"

namespace tessera::detail {

namespace {

// The pool keeps at most a quarter of the machine's memory pinned while idle.
std::size_t cache_limit_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::size_t(1) << 30;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) / 4;
}

}  // namespace

void HostMemoryPool::free_block(const Block& block) { starpu_free_flags(block.memory, block.bytes, STARPU_MALLOC_PINNED); }

HostMemoryPool::~HostMemoryPool() {
  for (const Block& block : free_) free_block(block);
}

std::size_t HostMemoryPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

void* HostMemoryPool::allocate(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The smallest cached block that fits without wasting more than half of it.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->bytes >= bytes && it->bytes / 2 <= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
    if (best != free_.end()) {
      const Block reused = *best;
      cached_bytes_ -= reused.bytes;
      free_.erase(best);
      in_use_[reused.memory] = reused.bytes;
      return reused.memory;
    }
  }
  void* memory = nullptr;
  if (starpu_malloc_flags(&memory, bytes, STARPU_MALLOC_PINNED) != 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  in_use_[memory] = bytes;
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
    const std::size_t bytes = lent->second;
    in_use_.erase(lent);
    free_.push_back({block, bytes});
    cached_bytes_ += bytes;
    const std::size_t limit = cache_limit_bytes();
    while (cached_bytes_ > limit && !free_.empty()) {
      evicted.push_back(free_.front());
      cached_bytes_ -= free_.front().bytes;
      free_.erase(free_.begin());
    }
  }
  for (const Block& b : evicted) free_block(b);
}

}  // namespace tessera::detail
