#include <algorithm>

#include "tessera/cholesky.hpp"
#include "tessera/runtime.hpp"
#include "tile_requirements.hpp"

namespace tessera {

// CPU tiles stay in the caches of one core and leave enough tiles for every worker; GPU tiles are
// large enough for the trailing-update gemm to run near peak, and shrink for small n so that the
// DAG still has parallelism. In gpu mode every task runs on the GPU, whose workers keep more
// tiles in flight: 2048 from n = 12000 (an H100, n = 16384, tiles on the GPU: 38.1 TFLOP/s at
// nb = 2048, 33.4 at 1024, 15.6 at 512; at n = 8192, 1024 stays best).
int default_tile_size(int n, bool double_precision, Mode mode, int cpu_workers) {
  if (n <= 0) return 1;
  if (mode == Mode::cpu) {
    int nb = n >= 8000 ? 384 : n >= 2000 ? 256 : n >= 500 ? 128 : 64;
    // A few workers need fewer tasks: larger tiles run BLAS faster and still keep them all busy
    // (n = 4000, one-shot: 0.30 s at nb = 320-500 against 0.36 s at 256 on 2 cores; 0.55 s at 384
    // against 0.61 s at 256 on 4 of the H100 host's cores, where 12 workers are best at 256).
    if (cpu_workers > 0 && cpu_workers <= 4 && n >= 2000) nb = 384;
    return std::min(nb, n);
  }
  // Single precision runs at twice the rate: the same tile keeps the GPU as busy for half as long.
  const int largest_from = mode == Mode::gpu ? 12000 : 24000;
  const int gpu_nb = n >= largest_from ? 2048 : n >= 6000 ? 1024 : n >= 2000 ? 512 : 256;
  return std::min(double_precision ? gpu_nb : std::min(2 * gpu_nb, 2048), n);
}

int default_tile_size(const Runtime& runtime, int n, bool double_precision, Mode requested) {
  // Tiles for CPUs that take no tile task only slow the GPUs: on the H100 host with empty perf
  // models hybrid ran every tile task on the GPU, with nb = 1024 against gpu mode's 2048 at
  // n = 16384 (tasks spanning 85-99 ms against 65-75).
  const Mode mode = detail::runs_as_gpu_mode(runtime, requested) ? Mode::gpu : runtime.resolve(requested);
  return default_tile_size(n, double_precision, mode, runtime.cpu_workers());
}

}  // namespace tessera
