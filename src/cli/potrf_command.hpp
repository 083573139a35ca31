// `tessera potrf`: factor a random SPD matrix or a Matrix Market file, report one row.
#pragma once

#include <string>

#include "runtime_flags.hpp"

namespace tessera::cli {

struct PotrfCommand {
  int n = 1000;              // order of the random matrix
  int nb = 0;                // 0: TESSERA_NB, else chosen per n, precision and mode
  std::string uplo = "L";
  std::string precision = "d";
  std::string mode;          // empty: TESSERA_MODE, else auto
  std::string policy;        // empty: TESSERA_POLICY, else dmdas
  std::string gpu_kernels;   // empty: TESSERA_GPU_KERNELS, else any
  std::string input;
  std::string output;
  std::string trace;
  std::string grid;          // PxQ: a distributed factorization under mpirun (empty: one process)
  int repetitions = 1;       // with grid: factorizations in the same ranks, the matrix filled again before each
  unsigned seed = 1;
  double accuracy = 0;       // adaptive precision's u_req (0: FP64 throughout)
  std::string tile_map;      // with accuracy: the SVG file of the arithmetic per tile
  RuntimeFlags runtime;
  bool json = false;
  bool check = true;
};

// The mode the run asks for: --mode, else TESSERA_MODE, else auto.
Mode requested_mode(const PotrfCommand& cmd);

// Exit status: 0, 2 when the matrix is not positive definite, 3 when the backward error is not
// below kBackwardErrorThreshold (30; with an accuracy u, 30 u / (n eps) where that is larger). Throws tessera::Error (exit 1) on bad input, before anything large is allocated.
int run_potrf(const PotrfCommand& cmd);

}  // namespace tessera::cli
