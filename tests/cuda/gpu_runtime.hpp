// The runtime the device-API tests run their dense calls on: gpu mode, one CPU worker, started at
// first use and shared by every test of the executable.
#pragma once

#include "tessera/runtime.hpp"

namespace tessera::test {

inline tessera::Runtime& gpu_runtime() {
  static tessera::Runtime runtime([] {
    tessera::RuntimeOptions options;
    options.ncpus = 1;
    return options.for_mode(tessera::Mode::gpu);
  }());
  return runtime;
}

}  // namespace tessera::test
