#include "address_space.hpp"

#include "process_state.hpp"

#include <lapacke.h>
#include <pthread.h>
#include <starpu.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>

namespace tessera::detail {

namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;
// OpenBLAS's per-thread buffer on x86-64 (32 << 22 bytes), rounded up past its header.
constexpr std::size_t kOpenblasBufferBytes = 129 * kMiB;
// What else a worker's first tasks map: the allocator's arena for its thread (glibc reserves
// 64 MiB of address space for one), and some room besides.
constexpr std::size_t kWorkerSlackBytes = 72 * kMiB;

bool limited(int resource) {
  rlimit limit{};
  return getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
}

bool room_for(int count, std::size_t bytes, std::size_t reserved) {
  const std::size_t total = static_cast<std::size_t>(count) * bytes + reserved;
  if (total == 0) return true;
  // Private and writable, so that it counts against the data-segment limit as OpenBLAS's does.
  void* probe = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe == MAP_FAILED) return false;
  munmap(probe, total);
  return true;
}

void map_blas_buffer(void*) {
  // Any OpenBLAS LAPACK call maps the calling thread's buffer; a 1 x 1 factorization is the least.
  double one = 1;
  LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', 1, &one, 1);
}

}  // namespace

std::size_t blas_buffer_bytes_per_worker() { return kOpenblasBufferBytes + kWorkerSlackBytes; }

bool address_space_limited() { return limited(RLIMIT_AS) || limited(RLIMIT_DATA); }

int regions_that_fit(int wanted, std::size_t bytes, std::size_t reserved) {
  if (wanted <= 0) return 0;
  if (!address_space_limited() || room_for(wanted, bytes, reserved)) return wanted;
  if (!room_for(0, bytes, reserved)) return 0;
  int low = 0, high = wanted;  // room for `low`, not for `high`
  while (high - low > 1) {
    const int middle = low + (high - low) / 2;
    (room_for(middle, bytes, reserved) ? low : high) = middle;
  }
  return low;
}

std::size_t program_blas_bytes() {
  // The program's pool threads and the thread that calls them.
  return static_cast<std::size_t>(program_blas_threads() + 1) * blas_buffer_bytes_per_worker();
}

std::size_t worker_thread_stack_bytes() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return std::max(size, WorkerStacks::kWorkerStackBytes);
}

void map_blas_buffers_on_cpu_workers() { starpu_execute_on_each_worker(map_blas_buffer, nullptr, STARPU_CPU); }

WorkerStacks::WorkerStacks() {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  std::size_t size = 0;
  if (pthread_attr_getstacksize(&attr, &size) == 0 && size < kWorkerStackBytes &&
      pthread_attr_setstacksize(&attr, kWorkerStackBytes) == 0 && pthread_setattr_default_np(&attr) == 0)
    restore_ = size;
  pthread_attr_destroy(&attr);
}

WorkerStacks::~WorkerStacks() {
  if (restore_ == 0) return;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  if (pthread_attr_setstacksize(&attr, restore_) == 0) pthread_setattr_default_np(&attr);
  pthread_attr_destroy(&attr);
}

}  // namespace tessera::detail
