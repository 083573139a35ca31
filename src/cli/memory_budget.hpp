// What a command will hold in memory, counted before anything large is allocated, so that a
// run the machine cannot hold stops at once with a clear message instead of swapping for a
// minute and ending in std::bad_alloc.
#pragma once

#include <cstddef>
#include <string>

namespace tessera::cli {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Physical memory from sysconf.
double physical_memory_bytes();

// `tessera potrf` on a matrix of order n: the matrix; with the check, its copy and the tiles of
// the residual (three lower-tile sets and the diagonal tiles); the tiles of the factorization;
// in single precision, the file reader's double matrix and --output's double copy. Tile sets
// count the lower tiles of order nb and StarPU's handle per tile.
struct PotrfFootprint {
  int n = 0;
  int nb = 0;  // tile size, or the largest Tessera may choose
  std::size_t element_bytes = 8;
  bool check = true;
  bool from_file = false;
  bool output = false;
};
double bytes_needed(const PotrfFootprint& run);

// `tessera batched`: the matrices and right-hand sides, their copies for the check, the infos
// and errors, and one n x n scratch matrix per generating thread.
struct BatchedFootprint {
  int n = 0;
  int count = 0;
  int nrhs = 0;
  std::size_t element_bytes = 8;
  unsigned threads = 1;
};
double bytes_needed(const BatchedFootprint& run);

// Throws tessera::Error "<what> needs X GiB (<held>), more than this machine's Y GiB of memory"
// when bytes exceeds physical memory.
void require_memory(double bytes, const std::string& what, const std::string& held);

}  // namespace tessera::cli
