// Tessera inside an application that runs StarPU itself: the application starts StarPU, submits
// its own tasks, calls Tessera in between (Tessera attaches to the running StarPU), and later
// works on the factor's tiles with tasks of its own.
#include <starpu.h>

#include <cstdio>
#include <vector>

#include "tessera/starpu_interop.hpp"
#include "tessera/tessera.hpp"

namespace {

// The application's own kernel: scales a tile.
void scale_tile(void* buffers[], void* cl_arg) {
  double factor = 1.0;
  starpu_codelet_unpack_args(cl_arg, &factor);
  auto* m = static_cast<starpu_matrix_interface*>(buffers[0]);
  auto* tile = reinterpret_cast<double*>(m->ptr);
  for (uint32_t j = 0; j < m->ny; ++j)
    for (uint32_t i = 0; i < m->nx; ++i) tile[i + j * m->ld] *= factor;
}

starpu_codelet make_scale_codelet() {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = scale_tile;
  cl.nbuffers = 1;
  cl.modes[0] = STARPU_RW;
  cl.name = "app_scale";
  return cl;
}

}  // namespace

int main() {
  if (starpu_init(nullptr) != 0) return 1;  // the application owns StarPU
  starpu_codelet scale = make_scale_codelet();
  {
    tessera::Runtime runtime;  // attaches: Tessera will not shut StarPU down
    const int n = 400, nb = 100;
    std::vector<double> A(n * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A[i + j * n] = i == j ? 4.0 * n : 1.0;

    tessera::TileMatrix<double> tiles(runtime, n, nb);
    tessera::load_async(tiles, tessera::Uplo::lower, A.data(), n).wait();
    // The application's task on the first tile, then Tessera's factorization: StarPU orders them
    // through the tile's handle.
    double two = 2.0;
    starpu_task_insert(&scale, STARPU_RW, tessera::starpu_interop::tile_handle(tiles, 0, 0), STARPU_VALUE, &two, sizeof two, 0);
    const int info = tessera::potrf_async(tiles).wait();
    // More application work on the factor's tiles, e.g. scaling the last one.
    double half = 0.5;
    starpu_task_insert(&scale, STARPU_RW, tessera::starpu_interop::tile_handle(tiles, 3, 3), STARPU_VALUE, &half, sizeof half, 0);
    starpu_task_wait_for_all();
    std::printf("embedded factorization: info = %d, runtime attached = %s\n", info, runtime.attached() ? "yes" : "no");
    if (info != 0 || !runtime.attached()) return 1;
  }
  starpu_shutdown();
  return 0;
}
