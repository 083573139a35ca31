// Makes a CUDA device current for a scope, then restores the caller's: the runtime's own calls on
// an application thread must leave that thread's current device as they found it.
#pragma once

#ifdef TESSERA_HAVE_CUDA

#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"

namespace tessera::detail {

class CurrentDevice {
 public:
  // Nothing to switch (one call) where `device` is current already, as it is for most calls.
  explicit CurrentDevice(int device) {
    TESSERA_CUDA_CHECK(cudaGetDevice(&previous_));
    switched_ = previous_ != device;
    if (switched_) TESSERA_CUDA_CHECK(cudaSetDevice(device));
  }
  ~CurrentDevice() {
    if (switched_) cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace tessera::detail

#endif
