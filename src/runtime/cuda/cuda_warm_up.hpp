// A fresh process's one-time CUDA costs, paid while StarPU starts instead of after it.
#pragma once

#include <thread>

namespace tessera::detail {

// A fresh process spends a sizeable time initializing the CUDA driver, then in its first cuBLAS
// call, its first syrk, trsm and cuSOLVER potrf: the libraries' set-up, paid once per process
// whatever the handle. Left to the first factorization, they stalled its critical path (a long
// task early in every fresh process's trace; docs/user-guide.md, section "GPUs"). This thread initializes the driver and, on each of the first `devices` GPUs
// (all of them when negative; the driver alone when zero), makes the context and calls each
// vendor routine of the tile tasks once, in double precision, while starpu_init does its own work.
// Single precision is not warmed: its first sgemm alone takes longer than what is left of
// StarPU's start, and done in the background it slowed a first double factorization.
// Best effort: a failure is left for StarPU's start to meet and report. The destructor waits.
class CudaWarmUp {
 public:
  explicit CudaWarmUp(int devices);
  CudaWarmUp(const CudaWarmUp&) = delete;
  CudaWarmUp& operator=(const CudaWarmUp&) = delete;
  ~CudaWarmUp();

 private:
  std::thread thread_;
};

}  // namespace tessera::detail
