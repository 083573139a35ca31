// `tessera batched`: factor (and solve) a batch of random SPD matrices, report one row.
#pragma once

#include <string>

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
  int ncpu = -1;
  int ncuda = -1;
};

int run_batched(const BatchedCommand& cmd);

}  // namespace tessera::cli
