// Tessera's factorization with every tile already in GPU memory, for the GPU benchmarks: the
// tiles fetched to the GPU owning each (RuntimeOptions::gpu_placement's map), then potrf timed.
#pragma once

#include <starpu.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/starpu_interop.hpp"
#include "tessera/tessera.hpp"

namespace tessera::bench {

// The memory node of each GPU the runtime drives, by device number.
inline std::vector<unsigned> gpu_memory_nodes() {
  int workers[STARPU_NMAXWORKERS];
  const int count = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, workers, STARPU_NMAXWORKERS);
  if (count <= 0) throw std::runtime_error("no CUDA worker");
  std::map<int, unsigned> by_device;
  for (int w = 0; w < count; ++w)
    by_device.emplace(starpu_worker_get_devid(workers[w]), starpu_worker_get_memory_node(static_cast<unsigned>(workers[w])));
  std::vector<unsigned> nodes;
  for (const auto& [device, node] : by_device) nodes.push_back(node);
  return nodes;
}

// The GPU where tile (i, j) is resident: its owner under RuntimeOptions::gpu_placement's 2-D
// block-cyclic map (P x Q GPUs, P >= Q, as square as the count allows).
inline int owner_gpu(int gpus, int i, int j) {
  int cols = 1;
  for (int q = 2; q * q <= gpus; ++q)
    if (gpus % q == 0) cols = q;
  return (i % (gpus / cols)) * cols + j % cols;
}

// The n x n A (lower triangle, lda = n) in tiles of nb, every tile fetched to its owner GPU.
template <class T>
std::unique_ptr<TileMatrix<T>> resident_tiles(Runtime& runtime, int n, int nb, const std::vector<T>& A) {
  auto matrix = std::make_unique<TileMatrix<T>>(runtime, n, nb);
  TileMatrix<T>& tiles = *matrix;
  load_async(tiles, Uplo::lower, A.data(), n).wait();
  const std::vector<unsigned> nodes = gpu_memory_nodes();
  const int gpus = static_cast<int>(nodes.size());
  for (int j = 0; j < tiles.tile_cols(); ++j)
    for (int i = j; i < tiles.tile_rows(); ++i) {
      const unsigned node = nodes[static_cast<std::size_t>(owner_gpu(gpus, i, j))];
      starpu_data_acquire_on_node(starpu_interop::tile_handle(tiles, i, j), static_cast<int>(node), STARPU_R);
      starpu_data_release_on_node(starpu_interop::tile_handle(tiles, i, j), static_cast<int>(node));
    }
  return matrix;
}

// Factors tiles made by resident_tiles in the options' mode; throws on a nonzero info.
template <class T>
void factor_resident(TileMatrix<T>& tiles, const FactorOptions& options) {
  const int info = potrf_async(tiles, options).wait();
  if (info != 0) throw std::runtime_error("resident factorization info " + std::to_string(info));
}

// Seconds of Tessera's factorization of the n x n A (lower triangle, lda = n) in tiles of nb, every
// tile already on its owner GPU (and left there), in the options' mode.
template <class T>
double time_resident_potrf(Runtime& runtime, int n, int nb, const std::vector<T>& A, const FactorOptions& options) {
  const std::unique_ptr<TileMatrix<T>> tiles = resident_tiles(runtime, n, nb, A);
  const auto start = std::chrono::steady_clock::now();
  factor_resident(*tiles, options);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera::bench
