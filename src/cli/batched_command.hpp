// `tessera batched`: factor (and solve) a batch of random SPD matrices, report one row.
#pragma once

#include <string>

#include "runtime_flags.hpp"

namespace tessera::cli {

struct BatchedCommand {
  int n = 32;
  int count = 10000;
  int nrhs = 0;
  std::string precision = "d";
  std::string mode = "hybrid";
  std::string uplo = "L";
  int chunk = 0;
  unsigned seed = 1;
  bool fast_math = false;
  bool json = false;
  RuntimeFlags runtime;
};

// Exit status: 0, or 3 when a matrix failed or the largest backward error is not below
// kBackwardErrorThreshold (30).
// Throws tessera::Error (exit 1) when the batch cannot fit in memory, before allocating it.
int run_batched(const BatchedCommand& cmd);

}  // namespace tessera::cli
