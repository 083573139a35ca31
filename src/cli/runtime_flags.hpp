// The runtime flags every command that starts a runtime shares: --ncpu, --ncuda, --oversubscribe,
// --gpu-placement.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "tessera/options.hpp"

namespace tessera::cli {

struct RuntimeFlags {
  int ncpu = -1;   // -1: TESSERA_NCPU, else StarPU's choice
  int ncuda = -1;  // -1: TESSERA_NCUDA, else every GPU
  bool oversubscribe = false;
  std::string gpu_placement;  // "": TESSERA_GPU_PLACEMENT, else block-cyclic
  std::string objective;      // "": TESSERA_OBJECTIVE, else time
};

void add_runtime_flags(CLI::App* command, RuntimeFlags& flags);

// The environment's options with the flags applied, for a command whose factorizations run in
// `mode` (RuntimeOptions::for_mode: cpu mode starts no GPU unless asked); more CPU workers than
// CPUs are capped, with a warning on stderr, unless --oversubscribe.
RuntimeOptions runtime_options(const RuntimeFlags& flags, Mode mode = Mode::automatic);

}  // namespace tessera::cli
