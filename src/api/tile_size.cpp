#include <algorithm>

#include "tessera/cholesky.hpp"

namespace tessera {

// CPU tiles stay in the caches of one core and leave enough tiles for every worker; GPU tiles are
// large enough for the trailing-update gemm to run near peak, and shrink for small n so that the
// DAG still has parallelism. In gpu mode every task runs on the GPU, whose workers keep more
// tiles in flight: 2048 from n = 12000 (an H100, n = 16384, tiles on the GPU: 38.1 TFLOP/s at
// nb = 2048, 33.4 at 1024, 15.6 at 512; at n = 8192, 1024 stays best).
int default_tile_size(int n, bool double_precision, Mode mode) {
  if (n <= 0) return 1;
  if (mode == Mode::cpu) {
    const int nb = n >= 8000 ? 384 : n >= 2000 ? 256 : n >= 500 ? 128 : 64;
    return std::min(nb, n);
  }
  // Single precision runs at twice the rate: the same tile keeps the GPU as busy for half as long.
  const int largest_from = mode == Mode::gpu ? 12000 : 24000;
  const int gpu_nb = n >= largest_from ? 2048 : n >= 6000 ? 1024 : n >= 2000 ? 512 : 256;
  return std::min(double_precision ? gpu_nb : std::min(2 * gpu_nb, 2048), n);
}

}  // namespace tessera
