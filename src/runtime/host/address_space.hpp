// Room for the CPU workers' BLAS buffers under the process's address-space limits (ulimit -v,
// ulimit -d). OpenBLAS maps a buffer of its own for every thread that calls it, the first time it
// does, and retries for ever where the mapping fails: a worker started without room for it hangs
// the request (and the program waiting for it).
#pragma once

#include <cstddef>

namespace tessera::detail {

// The address space a started worker still maps for its first tasks: its BLAS buffer (OpenBLAS's
// BUFFER_SIZE and its header) and the allocator's arena for its thread.
std::size_t blas_buffer_bytes_per_worker();

// Whether the process's address space or data segment is limited.
bool address_space_limited();

// How many of `wanted` regions of `bytes` the limits leave room for now beside `reserved` bytes
// (all of them where nothing is limited), found by mapping them, untouched, and unmapping them at
// once.
int regions_that_fit(int wanted, std::size_t bytes, std::size_t reserved = 0);

// The stack a thread StarPU starts gets (the process's default, at least WorkerStacks'), in bytes.
std::size_t worker_thread_stack_bytes();

// What Tessera leaves to the program: the BLAS buffers of the threads its own BLAS calls run on
// (OpenBLAS maps them on their first call; without room, it hangs the program instead).
std::size_t program_blas_bytes();

// Makes every CPU worker of the running StarPU map its BLAS buffer now, while there is room,
// rather than in its first task.
void map_blas_buffers_on_cpu_workers();

// Threads start with the process's default stack, which is the stack limit (ulimit -s) where one
// is set, and OpenBLAS's kernels overflow a stack of a few hundred KiB: for its scope (StarPU
// starting its workers) the default is at least kWorkerStackBytes; the program's own default
// comes back after.
class WorkerStacks {
 public:
  static constexpr std::size_t kWorkerStackBytes = std::size_t(8) << 20;
  WorkerStacks();
  ~WorkerStacks();
  WorkerStacks(const WorkerStacks&) = delete;
  WorkerStacks& operator=(const WorkerStacks&) = delete;

 private:
  std::size_t restore_ = 0;  // the default to put back, 0 when it was left alone
};

}  // namespace tessera::detail
