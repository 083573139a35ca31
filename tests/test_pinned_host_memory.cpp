// StarPU's host allocations once Tessera started StarPU: what StarPU would pin comes back pinned
// (touched, then registered with CUDA) where CUDA workers run, and from the system otherwise;
// freeing goes back the way each block came.
#include <gtest/gtest.h>
#include <starpu.h>

#include <cstddef>
#include <cstring>

#include "pinned_host_memory.hpp"
#include "runtime_resources.hpp"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using tessera::test::have_gpu;
using tessera::test::runtime;

bool pinned_with_cuda(const void* memory) {
#ifdef TESSERA_HAVE_CUDA
  cudaPointerAttributes attributes{};
  const bool pinned = cudaPointerGetAttributes(&attributes, memory) == cudaSuccess && attributes.type == cudaMemoryTypeHost;
  cudaGetLastError();
  return pinned;
#else
  (void)memory;
  return false;
#endif
}

TEST(PinnedHostMemory, StarpuPinsWhereGpusRunAndFreesEachBlockItsWay) {
  runtime();  // StarPU started by Tessera, with its allocation hooks
  // Odd sizes: below a page, below a huge page, and above the size several threads touch.
  for (std::size_t bytes : {std::size_t(1), std::size_t(4095), (std::size_t(2) << 20) + 3, (std::size_t(9) << 20) + 1}) {
    SCOPED_TRACE(bytes);
    void* pinned = nullptr;
    void* plain = nullptr;
    ASSERT_EQ(starpu_malloc_flags(&pinned, bytes, STARPU_MALLOC_PINNED), 0);
    ASSERT_EQ(starpu_malloc_flags(&plain, bytes, 0), 0);
    ASSERT_NE(pinned, nullptr);
    ASSERT_NE(plain, nullptr);
    std::memset(pinned, 0x5a, bytes);  // every byte writable
    std::memset(plain, 0x5a, bytes);
    EXPECT_EQ(pinned_with_cuda(pinned), have_gpu());
    EXPECT_FALSE(pinned_with_cuda(plain));
    EXPECT_EQ(starpu_free_flags(pinned, bytes, STARPU_MALLOC_PINNED), 0);
    EXPECT_EQ(starpu_free_flags(plain, bytes, 0), 0);
  }
}

TEST(PinnedHostMemory, RegisteredMemoryIsZeroedAndPinned) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (std::size_t bytes : {std::size_t(1), std::size_t(4097), (std::size_t(2) << 20) - 1, (std::size_t(17) << 20) + 5}) {
    SCOPED_TRACE(bytes);
    unsigned char* memory = static_cast<unsigned char*>(tessera::detail::registered_host_memory(bytes));
    ASSERT_NE(memory, nullptr);
    std::size_t nonzero = 0;
    for (std::size_t b = 0; b < bytes; ++b) nonzero += memory[b] != 0;
    EXPECT_EQ(nonzero, 0u);
    EXPECT_TRUE(pinned_with_cuda(memory));
    tessera::detail::release_registered_host_memory(memory);
  }
}

// Tiles that live across calls and cross the bus every call (a distributed matrix's) come from
// the pool pinned where GPUs run, new or reused, and a block lent so is pageable otherwise; a
// pool told HostTiles::pageable never pins.
TEST(PinnedHostMemory, PoolBlocksAskedPinnedArePinnedWhereGpusRun) {
  runtime();
  const std::size_t bytes = (std::size_t(3) << 20) + 7;
  tessera::detail::HostMemoryPool pool(tessera::HostTiles::pin_on_reuse);
  void* plain = pool.allocate(bytes);
  void* fresh = pool.allocate_pinned(bytes);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(fresh, nullptr);
  std::memset(fresh, 1, bytes);
  EXPECT_FALSE(pinned_with_cuda(plain));
  EXPECT_EQ(pinned_with_cuda(fresh), have_gpu());
  pool.release(fresh);
  void* reused = pool.allocate_pinned(bytes);
  EXPECT_EQ(reused, fresh);
  EXPECT_EQ(pinned_with_cuda(reused), have_gpu());
  pool.release(reused);
  pool.release(plain);
  tessera::detail::HostMemoryPool pageable(tessera::HostTiles::pageable);
  void* never = pageable.allocate_pinned(bytes);
  ASSERT_NE(never, nullptr);
  EXPECT_FALSE(pinned_with_cuda(never));
  pageable.release(never);
}

}  // namespace
